//! The Dynamic Skeleton Interface: servants that take requests as TypeCodes and [`Any`]s.
//!
//! A [`DynamicImplementation`] is handed each request as a [`DynServerRequest`]. It says
//! which arguments it expects with an [`NVList`] of TypeCodes
//! ([`DynServerRequest::arguments`]: the `in`/`inout` values are read from the request
//! with the TypeCode-driven walker), sets the result ([`DynServerRequest::set_result`]) or
//! a user exception ([`DynServerRequest::set_exception`]), and may change `inout` and set
//! `out` values in the list, which the ORB sends back when `invoke` returns.
//! [`DsiSkeleton`] makes it a [`Servant`] to activate in a POA like any other.
//!
//! ```
//! use std::sync::Arc;
//! use corbina::dii::{NVList, ARG_IN};
//! use corbina::dsi::{DsiSkeleton, DynServerRequest, DynamicImplementation};
//! use corbina::{cdr::CdrContext, giop::Ior, Any, ObjectRef, ServantInvoker,
//!               SystemException, TypeCode};
//!
//! struct Doubler;
//! impl DynamicImplementation for Doubler {
//!     fn primary_interface(&self) -> &'static str { "IDL:Doubler:1.0" }
//!     fn invoke(&self, req: &mut DynServerRequest<'_, '_, '_>) -> Result<(), SystemException> {
//!         let mut args = NVList::new();
//!         args.add_item("x", TypeCode::LONG, ARG_IN);
//!         let args = req.arguments(args)?;
//!         let x = args.item(0).and_then(|a| a.value()).and_then(Any::to_long).unwrap_or(0);
//!         req.set_result(Any::from_long(2 * x))
//!     }
//! }
//! let servant = Arc::new(DsiSkeleton::new(Doubler));
//! let invoker = Arc::new(ServantInvoker::new(servant, CdrContext::GIOP_1_2));
//! let obj = ObjectRef::new(Ior::nil(), b"key".to_vec(), invoker);
//! let r = obj.invoke("twice", |w| { w.write_long(21); Ok(()) }, |r| r.read_long(), corbina::no_user);
//! assert_eq!(r.unwrap(), 42);
//! ```

use crate::any::Any;
use crate::dii::{NVList, ARG_IN, ARG_INOUT, ARG_OUT};
use crate::servant::{dispatch_object_operation, Servant, ServerRequest};
use crate::typecode::TcKind;
use crate::{CompletionStatus, SystemException, SystemExceptionKind};

/// `PortableServer::DynamicImplementation`: a servant that decodes its requests by
/// TypeCode.
pub trait DynamicImplementation: Send + Sync + 'static {
    /// `_primary_interface`: the repository id of the most derived interface served.
    fn primary_interface(&self) -> &'static str;

    /// `_is_a`: by default, the primary interface and `CORBA::Object`.
    fn is_a(&self, repository_id: &str) -> bool {
        repository_id == self.primary_interface() || repository_id == "IDL:omg.org/CORBA/Object:1.0"
    }

    /// `invoke(request)`: runs the operation. An `Err` is sent as a system exception.
    /// (`_is_a`, `_non_existent` and the other `CORBA::Object` operations are answered
    /// by [`DsiSkeleton`] before this is called.)
    fn invoke(&self, request: &mut DynServerRequest<'_, '_, '_>) -> Result<(), SystemException>;
}

fn bad_inv_order() -> SystemException {
    SystemException::new(
        SystemExceptionKind::BadInvOrder,
        crate::error::minor::BAD_INV_ORDER_ARGUMENTS_ORDER,
    )
    .completed(CompletionStatus::No)
}

/// `CORBA::ServerRequest` as the DSI sees it.
pub struct DynServerRequest<'r, 'b, 's> {
    inner: &'r mut ServerRequest<'b, 's>,
    params: Option<NVList>,
    result: Option<Any>,
    exception: Option<Any>,
}

impl<'r, 'b, 's> DynServerRequest<'r, 'b, 's> {
    /// Wraps a request being dispatched.
    pub fn new(inner: &'r mut ServerRequest<'b, 's>) -> Self {
        DynServerRequest {
            inner,
            params: None,
            result: None,
            exception: None,
        }
    }

    /// `operation()`.
    pub fn operation(&self) -> &'b str {
        self.inner.operation()
    }

    /// Whether the client waits for a reply (false for oneways).
    pub fn response_expected(&self) -> bool {
        self.inner.response_expected()
    }

    /// `arguments(nv)`: the servant's list of expected arguments, in order, each with its
    /// TypeCode and mode. The `in` and `inout` values are read from the request into it;
    /// the list is kept by the request (the ORB sends the `inout`/`out` values back from
    /// it) and returned for the servant to read and fill in. Called once, before
    /// [`DynServerRequest::set_result`]; `MARSHAL` if the request's arguments do not match.
    pub fn arguments(&mut self, mut args: NVList) -> Result<&mut NVList, SystemException> {
        if self.params.is_some() {
            return Err(bad_inv_order());
        }
        let r = self.inner.arguments();
        for a in args.iter_mut() {
            if a.flags() & ARG_IN != 0 {
                let v = Any::read_value(a.type_code().clone(), r).map_err(SystemException::from)?;
                a.set_value(v)?;
            }
        }
        self.inner.arguments_done()?;
        Ok(self.params.insert(args))
    }

    /// The argument list given to [`DynServerRequest::arguments`], if it was called.
    pub fn params(&mut self) -> Option<&mut NVList> {
        self.params.as_mut()
    }

    /// `set_result(value)`: the return value (leave unset for `void`). `BAD_INV_ORDER`
    /// before `arguments`, or once an exception is set.
    pub fn set_result(&mut self, value: Any) -> Result<(), SystemException> {
        if self.params.is_none() || self.exception.is_some() {
            return Err(bad_inv_order());
        }
        self.result = Some(value);
        Ok(())
    }

    /// `set_exception(value)`: a user exception (a `tk_except` Any, whose value starts with
    /// the repository id); `BAD_PARAM` for any other kind. System exceptions are returned
    /// as `Err` from `invoke` instead.
    pub fn set_exception(&mut self, value: Any) -> Result<(), SystemException> {
        if value.type_code().unalias().kind() != TcKind::Except {
            return Err(SystemException::new(
                SystemExceptionKind::BadParam,
                crate::error::minor::BAD_PARAM_NOT_AN_EXCEPTION,
            ));
        }
        self.exception = Some(value);
        Ok(())
    }

    /// Sends the reply the servant's calls describe.
    fn finish(self) -> Result<(), SystemException> {
        let DynServerRequest {
            inner,
            params,
            result,
            exception,
        } = self;
        if inner.has_replied() {
            return Ok(());
        }
        if let Some(e) = &exception {
            return inner.reply_user_exception(|w| e.write_value(w));
        }
        let outs: Vec<&Any> = match &params {
            Some(p) => p
                .iter()
                .filter(|a| a.flags() & ARG_OUT != 0)
                .map(|a| a.value().ok_or_else(bad_inv_order))
                .collect::<Result<_, _>>()?,
            // The servant never asked for its arguments: there must have been none.
            None => {
                inner.arguments_done()?;
                Vec::new()
            }
        };
        if inner.wants_parameters() {
            inner.set_parameters(
                parameters(params.as_ref()),
                result.clone().unwrap_or_default(),
            );
        }
        inner.reply(|w| {
            if let Some(r) = &result {
                r.write_value(w)?;
            }
            for v in &outs {
                v.write_value(w)?;
            }
            Ok(())
        })
    }
}

/// The servant's argument list as server request interceptors see it.
fn parameters(params: Option<&NVList>) -> Vec<crate::interceptor::Parameter> {
    use crate::interceptor::{Parameter, ParameterMode};
    params
        .into_iter()
        .flat_map(NVList::iter)
        .map(|a| Parameter {
            argument: a.value().cloned().unwrap_or_default(),
            mode: match a.flags() & ARG_INOUT {
                ARG_INOUT => ParameterMode::InOut,
                ARG_OUT => ParameterMode::Out,
                _ => ParameterMode::In,
            },
        })
        .collect()
}

/// Serves a [`DynamicImplementation`] as a [`Servant`] (activate it in a POA).
pub struct DsiSkeleton<D>(pub D);

impl<D: DynamicImplementation> DsiSkeleton<D> {
    /// A skeleton serving `servant`.
    pub fn new(servant: D) -> Self {
        DsiSkeleton(servant)
    }
}

impl<D: DynamicImplementation> Servant for DsiSkeleton<D> {
    fn primary_interface(&self) -> &'static str {
        self.0.primary_interface()
    }

    fn is_a(&self, repository_id: &str) -> bool {
        self.0.is_a(repository_id)
    }

    fn dispatch(&self, request: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        if request.operation().starts_with('_') && dispatch_object_operation(self, request)? {
            return Ok(());
        }
        let mut dreq = DynServerRequest::new(request);
        self.0.invoke(&mut dreq)?;
        dreq.finish()
    }
}
