//! What interceptors see of a request: `ClientRequestInfo`, `ServerRequestInfo`, and of a
//! new reference: `IORInfo`.

use std::borrow::Cow;
use std::cell::OnceCell;

use crate::any::Any;
use crate::giop::{Ior, ServiceContext, ServiceContextsView, TaggedComponent, TaggedProfile};
use crate::SystemException;

use super::current::{InvalidSlot, SlotId, Slots};
use super::params::{no_resources, OperationSignature, Parameter};
use super::{add_context, find_context, not_available};
use crate::cdr::{CdrContext, CodeSets};
use crate::giop::message::OwnedBody;
use crate::typecode::TypeCode;

/// `PortableInterceptor::ReplyStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyStatus {
    /// `SUCCESSFUL`.
    Successful,
    /// `SYSTEM_EXCEPTION`.
    SystemException,
    /// `USER_EXCEPTION`.
    UserException,
    /// `LOCATION_FORWARD` (a permanent forward too).
    LocationForward,
    /// `TRANSPORT_RETRY`: the ORB resends the request (the server closed the connection
    /// before reading it).
    TransportRetry,
}

/// The interception point running: which attributes may be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Point {
    Send,
    Reply,
    Exception,
    Other,
}

/// `PortableInterceptor::ClientRequestInfo`. It borrows what the call has (operation,
/// reference): making one copies nothing.
#[derive(Debug)]
pub struct ClientRequestInfo<'r> {
    pub(crate) request_id: u32,
    pub(crate) operation: &'r str,
    pub(crate) response_expected: bool,
    /// Borrowed from the reference's invoker; owned for a forward target's requests.
    pub(crate) target: Cow<'r, Ior>,
    /// The index in `target` of the profile the request is sent with.
    pub(crate) profile_index: u32,
    pub(crate) request_contexts: Vec<ServiceContext>,
    pub(crate) reply_contexts: Vec<ServiceContext>,
    pub(crate) reply_status: Option<ReplyStatus>,
    pub(crate) exception: Option<SystemException>,
    pub(crate) exception_id: Option<String>,
    pub(crate) forward: Option<Ior>,
    pub(crate) slots: Slots,
    pub(crate) point: Point,
    /// The request's span ([`crate::trace`]; `Span::none()` when not traced).
    pub(crate) span: tracing::Span,
    /// When the request started (for metrics; `None` without them).
    pub(crate) started: Option<std::time::Instant>,
    /// The operation's TypeCodes, when the caller gave them (the DII).
    pub(crate) signature: Option<&'r dyn OperationSignature>,
    /// Marshals the request's arguments again, into a buffer of their own (with a
    /// signature only).
    pub(crate) encode_again: Option<Again<'r>>,
    /// The CDR context the request is marshalled with.
    pub(crate) args_ctx: CdrContext,
    /// A normal reply's body, copied (with a signature only).
    pub(crate) reply_body: Option<(OwnedBody, CodeSets)>,
}

/// Marshals a request's arguments into a new buffer with the given context.
pub(crate) type EncodeAgain<'r> = dyn Fn(CdrContext) -> crate::cdr::Result<Vec<u8>> + 'r;

/// An [`EncodeAgain`], borrowed.
#[derive(Clone, Copy)]
pub(crate) struct Again<'r>(pub(crate) &'r EncodeAgain<'r>);

impl std::fmt::Debug for Again<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EncodeAgain")
    }
}

impl std::fmt::Debug for dyn OperationSignature + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OperationSignature")
    }
}

impl ClientRequestInfo<'_> {
    /// The request's id (unique among the requests of its connection in progress).
    pub fn request_id(&self) -> u32 {
        self.request_id
    }

    /// The operation name.
    pub fn operation(&self) -> &str {
        self.operation
    }

    /// Whether a reply is awaited (false for oneways).
    pub fn response_expected(&self) -> bool {
        self.response_expected
    }

    /// The object the request goes to (after any LOCATION_FORWARD the ORB followed: this
    /// is also the effective target).
    pub fn target(&self) -> &Ior {
        &self.target
    }

    /// Same as [`target`](Self::target): Corbina follows forwards with a new request.
    pub fn effective_target(&self) -> &Ior {
        &self.target
    }

    /// The profile the request is sent with.
    pub fn effective_profile(&self) -> Option<&TaggedProfile> {
        self.target.profiles.get(self.profile_index as usize)
    }

    /// A context of the request (what interceptors added so far).
    pub fn get_request_service_context(&self, id: u32) -> Result<&ServiceContext, SystemException> {
        find_context(&self.request_contexts, id)
    }

    /// Adds a context to the request (`send_request` only); with `replace` false, one with
    /// the same id already there is BAD_INV_ORDER (minor 15).
    pub fn add_request_service_context(
        &mut self,
        sc: ServiceContext,
        replace: bool,
    ) -> Result<(), SystemException> {
        if self.point != Point::Send {
            return Err(not_available());
        }
        add_context(&mut self.request_contexts, sc, replace)
    }

    /// A context of the reply (not at `send_request`).
    pub fn get_reply_service_context(&self, id: u32) -> Result<&ServiceContext, SystemException> {
        if self.point == Point::Send {
            return Err(not_available());
        }
        find_context(&self.reply_contexts, id)
    }

    /// How the request ended (not at `send_request`).
    pub fn reply_status(&self) -> Result<ReplyStatus, SystemException> {
        self.reply_status.ok_or_else(not_available)
    }

    /// The system exception received or raised (`receive_exception` for a system
    /// exception only).
    pub fn received_exception(&self) -> Result<&SystemException, SystemException> {
        self.exception.as_ref().ok_or_else(not_available)
    }

    /// The repository id of the exception (`receive_exception` only).
    pub fn received_exception_id(&self) -> Result<String, SystemException> {
        if let Some(id) = &self.exception_id {
            return Ok(id.clone());
        }
        match &self.exception {
            Some(e) => Ok(e.kind.repository_id()),
            None => Err(not_available()),
        }
    }

    /// Where a LOCATION_FORWARD sent the request (`receive_other` after a forward).
    pub fn forward_reference(&self) -> Result<&Ior, SystemException> {
        self.forward.as_ref().ok_or_else(not_available)
    }

    /// The request scope `PICurrent` slot: a copy of the thread's slots when the call
    /// was made.
    pub fn get_slot(&self, id: SlotId) -> Result<Any, InvalidSlot> {
        self.slots.get(id)
    }

    /// The arguments as `Any`s, in order, with their modes: at `send_request` (the `in` and
    /// `inout` values; `out` ones hold nothing) and `receive_reply` (`inout` and `out` as
    /// replied). BAD_INV_ORDER (minor 14) at other points. Made from the marshalled request
    /// and reply only when asked; a request made without its TypeCodes (generated stubs,
    /// [`ObjectRef::invoke`](crate::ObjectRef::invoke); the DII gives them) has none to
    /// show: NO_RESOURCES (minor 1).
    pub fn arguments(&self) -> Result<Vec<Parameter>, SystemException> {
        let reply = match self.point {
            Point::Send => None,
            Point::Reply => Some(self.reply_body.as_ref().ok_or_else(no_resources)?),
            _ => return Err(not_available()),
        };
        match (self.signature, self.encode_again) {
            (Some(sig), Some(encode)) => super::params::client_arguments(
                sig,
                &|| encode.0(self.args_ctx),
                self.args_ctx,
                reply,
            ),
            _ => Err(no_resources()),
        }
    }

    /// The result as an `Any` (`receive_reply` only; BAD_INV_ORDER minor 14 elsewhere), as
    /// [`arguments`](Self::arguments) says: NO_RESOURCES (minor 1) without TypeCodes.
    pub fn result(&self) -> Result<Any, SystemException> {
        if self.point != Point::Reply {
            return Err(not_available());
        }
        match (self.signature, &self.reply_body) {
            (Some(sig), Some(reply)) => super::params::client_result(sig, reply),
            _ => Err(no_resources()),
        }
    }

    /// The user exceptions the operation may raise, as TypeCodes (any point): NO_RESOURCES
    /// (minor 1) for a request made without its TypeCodes.
    pub fn exceptions(&self) -> Result<Vec<TypeCode>, SystemException> {
        self.signature
            .map(|s| s.exception_types())
            .ok_or_else(no_resources)
    }
}

/// `PortableInterceptor::ServerRequestInfo`. It borrows the request as received: making
/// one copies nothing (the request's contexts are decoded when first asked for).
#[derive(Debug)]
pub struct ServerRequestInfo<'r> {
    pub(crate) request_id: u32,
    pub(crate) operation: Cow<'r, str>,
    pub(crate) response_expected: bool,
    pub(crate) object_key: Cow<'r, [u8]>,
    /// The request's contexts in the message, until `request_contexts` is made of them.
    pub(crate) received: Option<ServiceContextsView<'r>>,
    pub(crate) request_contexts: OnceCell<Vec<ServiceContext>>,
    pub(crate) reply_contexts: Vec<ServiceContext>,
    pub(crate) reply_status: Option<ReplyStatus>,
    pub(crate) exception: Option<SystemException>,
    pub(crate) exception_id: Option<String>,
    pub(crate) forward: Option<Ior>,
    pub(crate) slots: Slots,
    /// The request's span ([`crate::trace`]; `Span::none()` when not traced).
    pub(crate) span: tracing::Span,
    /// When the request started (for metrics; `None` without them).
    pub(crate) started: Option<std::time::Instant>,
    /// The interception point running.
    pub(crate) point: ServerPoint,
    /// The arguments and result the servant described (DSI), once it replied.
    pub(crate) parameters: Option<(Vec<Parameter>, Any)>,
}

/// The server's interception points, as far as what they may read differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServerPoint {
    /// `receive_request_service_contexts`.
    ServiceContexts,
    /// `receive_request`.
    Request,
    /// `send_reply`, `send_exception`, `send_other`.
    Ending,
}

impl ServerRequestInfo<'_> {
    /// The request's id.
    pub fn request_id(&self) -> u32 {
        self.request_id
    }

    /// The operation name.
    pub fn operation(&self) -> &str {
        &self.operation
    }

    /// Whether the client waits for a reply.
    pub fn response_expected(&self) -> bool {
        self.response_expected
    }

    /// The target's object key (the POA's `adapter_id` and `object_id` are in it).
    pub fn object_key(&self) -> &[u8] {
        &self.object_key
    }

    /// A context the client sent.
    pub fn get_request_service_context(&self, id: u32) -> Result<&ServiceContext, SystemException> {
        find_context(self.request_contexts(), id)
    }

    /// The contexts the client sent, decoded from the message on first use.
    fn request_contexts(&self) -> &[ServiceContext] {
        self.request_contexts.get_or_init(|| {
            self.received
                .as_ref()
                .map(|v| {
                    v.iter()
                        .map(|(context_id, data)| ServiceContext {
                            context_id,
                            context_data: data.to_vec(),
                        })
                        .collect()
                })
                .unwrap_or_default()
        })
    }

    /// This info with what it borrows of the request copied, for a reply given later.
    pub(crate) fn into_owned(self) -> ServerRequestInfo<'static> {
        self.request_contexts();
        ServerRequestInfo {
            request_id: self.request_id,
            operation: Cow::Owned(self.operation.into_owned()),
            response_expected: self.response_expected,
            object_key: Cow::Owned(self.object_key.into_owned()),
            received: None,
            request_contexts: self.request_contexts,
            reply_contexts: self.reply_contexts,
            reply_status: self.reply_status,
            exception: self.exception,
            exception_id: self.exception_id,
            forward: self.forward,
            slots: self.slots,
            span: self.span,
            started: self.started,
            point: self.point,
            parameters: self.parameters,
        }
    }

    /// A context of the reply (what interceptors added so far).
    pub fn get_reply_service_context(&self, id: u32) -> Result<&ServiceContext, SystemException> {
        find_context(&self.reply_contexts, id)
    }

    /// Adds a context to the reply (any point: it goes out with whatever reply is sent);
    /// with `replace` false, one with the same id already there is BAD_INV_ORDER
    /// (minor 15).
    pub fn add_reply_service_context(
        &mut self,
        sc: ServiceContext,
        replace: bool,
    ) -> Result<(), SystemException> {
        add_context(&mut self.reply_contexts, sc, replace)
    }

    /// How the request ends (the `send_*` points only).
    pub fn reply_status(&self) -> Result<ReplyStatus, SystemException> {
        self.reply_status.ok_or_else(not_available)
    }

    /// The system exception being sent (`send_exception` for a system exception only).
    pub fn sending_exception(&self) -> Result<&SystemException, SystemException> {
        self.exception.as_ref().ok_or_else(not_available)
    }

    /// The repository id of the exception being sent (`send_exception` only).
    pub fn sending_exception_id(&self) -> Result<String, SystemException> {
        if let Some(id) = &self.exception_id {
            return Ok(id.clone());
        }
        match &self.exception {
            Some(e) => Ok(e.kind.repository_id()),
            None => Err(not_available()),
        }
    }

    /// Where the reply forwards the client (`send_other` after a forward).
    pub fn forward_reference(&self) -> Result<&Ior, SystemException> {
        self.forward.as_ref().ok_or_else(not_available)
    }

    /// A request scope `PICurrent` slot.
    pub fn get_slot(&self, id: SlotId) -> Result<Any, InvalidSlot> {
        self.slots.get(id)
    }

    /// Sets a request scope slot: the servant sees it through `PICurrent`.
    pub fn set_slot(&mut self, id: SlotId, value: Any) -> Result<(), InvalidSlot> {
        self.slots.set(id, value)
    }

    /// The arguments as `Any`s, in order, with their modes (`receive_request` and
    /// `send_reply`; BAD_INV_ORDER minor 14 elsewhere). The ORB learns their TypeCodes
    /// from a DSI servant's argument list, so they are there at `send_reply` of a request
    /// served by the DSI; before the servant runs (`receive_request`), and for generated
    /// skeletons, which decode the arguments straight from the request, NO_RESOURCES
    /// (minor 1).
    pub fn arguments(&self) -> Result<Vec<Parameter>, SystemException> {
        match (self.point, self.reply_status) {
            (ServerPoint::Request, _) => Err(no_resources()),
            (ServerPoint::Ending, Some(ReplyStatus::Successful)) => self
                .parameters
                .as_ref()
                .map(|(p, _)| p.clone())
                .ok_or_else(no_resources),
            _ => Err(not_available()),
        }
    }

    /// The result as an `Any` (`send_reply` only; BAD_INV_ORDER minor 14 elsewhere): as
    /// [`arguments`](Self::arguments), for a DSI servant's reply; NO_RESOURCES (minor 1)
    /// otherwise.
    pub fn result(&self) -> Result<Any, SystemException> {
        match (self.point, self.reply_status) {
            (ServerPoint::Ending, Some(ReplyStatus::Successful)) => self
                .parameters
                .as_ref()
                .map(|(_, r)| r.clone())
                .ok_or_else(no_resources),
            _ => Err(not_available()),
        }
    }

    /// The user exceptions the operation may raise: not known to a server ORB (neither
    /// skeletons nor DSI servants declare them to it): NO_RESOURCES (minor 1), and
    /// BAD_INV_ORDER (minor 14) at `receive_request_service_contexts`.
    pub fn exceptions(&self) -> Result<Vec<TypeCode>, SystemException> {
        match self.point {
            ServerPoint::ServiceContexts => Err(not_available()),
            _ => Err(no_resources()),
        }
    }
}

/// `PortableInterceptor::IORInfo`: a reference being made.
#[derive(Debug)]
pub struct IorInfo {
    pub(crate) type_id: String,
    pub(crate) object_key: Vec<u8>,
    pub(crate) components: Vec<TaggedComponent>,
}

impl IorInfo {
    /// The repository id the reference will carry.
    pub fn type_id(&self) -> &str {
        &self.type_id
    }

    /// The object key of the reference.
    pub fn object_key(&self) -> &[u8] {
        &self.object_key
    }

    /// Adds a component to the reference's IIOP profile.
    pub fn add_ior_component(&mut self, component: TaggedComponent) {
        self.components.push(component);
    }
}
