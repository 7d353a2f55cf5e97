//! The Dynamic Invocation Interface: calls built at run time from TypeCodes and [`Any`]s.
//!
//! A [`Request`] names an operation on an [`ObjectRef`], its arguments (an [`NVList`] of
//! [`NamedValue`]s flagged [`ARG_IN`], [`ARG_OUT`] or [`ARG_INOUT`]), the result type and the
//! user exceptions it may raise (an [`ExceptionList`] of TypeCodes). It can be sent twoway
//! ([`Request::invoke`]), oneway ([`Request::send_oneway`]) or deferred
//! ([`Request::send_deferred`], then [`Request::poll_response`] / [`Request::get_response`]).
//!
//! # Reuse
//! The seeds measured 1996 ORBs that rebuilt a DII request for every call and interpreted
//! TypeCodes field by field; reusing one request doubled throughput. Here a `Request` is the
//! marshalling plan: its argument TypeCodes (with their precomputed layouts) are fixed when
//! the arguments are added, and each `invoke` only copies the current values out with the
//! TypeCode-driven walker (fixed-size runs as blocks, large octet runs borrowed, not
//! copied). Change a value with [`Request::set_argument`] and invoke again; nothing else is
//! rebuilt.
//!
//! ```
//! use std::sync::Arc;
//! use corbina::{cdr::CdrContext, giop::Ior, Any, ObjectRef, Servant, ServantInvoker,
//!               ServerRequest, SystemException, TypeCode};
//!
//! struct Doubler;
//! impl Servant for Doubler {
//!     fn primary_interface(&self) -> &'static str { "IDL:Doubler:1.0" }
//!     fn is_a(&self, id: &str) -> bool { id == "IDL:Doubler:1.0" }
//!     fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
//!         let x = req.arguments().read_long()?;
//!         req.arguments_done()?;
//!         req.reply(|w| { w.write_long(2 * x); Ok(()) })
//!     }
//! }
//! let invoker = Arc::new(ServantInvoker::new(Arc::new(Doubler), CdrContext::GIOP_1_2));
//! let obj = ObjectRef::new(Ior::nil(), b"key".to_vec(), invoker);
//!
//! let mut req = obj.request("twice");
//! req.add_in_arg("x", Any::from_long(1));
//! req.set_return_type(TypeCode::LONG);
//! for x in 1..4 {
//!     req.set_argument(0, Any::from_long(x))?; // same plan, new value
//!     req.invoke()?;
//!     assert_eq!(req.return_value().to_long(), Some(2 * x));
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Deferred calls
//! The IIOP client path is synchronous (a thread waits on its strand), so a deferred request
//! runs its call on a helper thread of its own, started by `send_deferred`; `get_response`
//! joins it. The values it sends are the request's at the time of the call (the `Any`s are
//! shared, not copied). [`OrbDii`] adds the ORB-wide operations
//! (`send_multiple_requests_deferred`, `poll_next_response`, `get_next_response`).

use std::fmt;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

use crate::any::Any;
use crate::cdr::CdrWriter;
use crate::object::ObjectRef;
use crate::orb::{Orb, WeakOrb};
use crate::typecode::{TcKind, TypeCode};
use crate::{SystemException, SystemExceptionKind};

/// `CORBA::Flags`: argument modes and request flags.
pub type Flags = u32;
/// An `in` argument.
pub const ARG_IN: Flags = 1;
/// An `out` argument.
pub const ARG_OUT: Flags = 2;
/// An `inout` argument (`ARG_IN | ARG_OUT`).
pub const ARG_INOUT: Flags = 3;

/// BAD_PARAM: no such argument, an `in` argument without a value, or a value of another
/// TypeCode (the OMG code 2 this used to raise means "RID already defined in IFR").
fn bad_argument() -> SystemException {
    SystemException::new(
        SystemExceptionKind::BadParam,
        crate::error::minor::BAD_PARAM_DII_ARGUMENT,
    )
}

fn bad_inv_order() -> SystemException {
    SystemException::new(
        SystemExceptionKind::BadInvOrder,
        crate::error::minor::BAD_INV_ORDER_NOT_SENT,
    )
}

/// `CORBA::NamedValue`: a name, a mode and a value of a fixed TypeCode.
///
/// The TypeCode is set when the item is made and stays (it is the marshalling plan); the
/// value may be replaced by one of an equivalent type. An `out` item has no value until a
/// reply (or a DSI servant) fills it in.
#[derive(Clone, Debug)]
pub struct NamedValue {
    name: String,
    flags: Flags,
    tc: TypeCode,
    value: Option<Any>,
}

impl NamedValue {
    /// An item holding `value` (`in` or `inout`); its TypeCode is the value's.
    pub fn new(name: impl Into<String>, value: Any, flags: Flags) -> NamedValue {
        NamedValue {
            name: name.into(),
            flags,
            tc: value.type_code().clone(),
            value: Some(value),
        }
    }

    /// An item of type `tc` without a value yet (an `out` argument, a result, or a DSI
    /// argument about to be read).
    pub fn with_type(name: impl Into<String>, tc: impl Into<TypeCode>, flags: Flags) -> NamedValue {
        NamedValue {
            name: name.into(),
            flags,
            tc: tc.into(),
            value: None,
        }
    }

    /// A result of type `tc` (`tk_void` for none).
    pub fn result(tc: impl Into<TypeCode>) -> NamedValue {
        NamedValue::with_type("", tc, 0)
    }

    /// `name()`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `flags()`: [`ARG_IN`], [`ARG_OUT`] or [`ARG_INOUT`] (0 for a result).
    pub fn flags(&self) -> Flags {
        self.flags
    }

    /// The item's TypeCode.
    pub fn type_code(&self) -> &TypeCode {
        &self.tc
    }

    /// `value()`: `None` until one is set or received.
    pub fn value(&self) -> Option<&Any> {
        self.value.as_ref()
    }

    /// Takes the value out, leaving none.
    pub fn take_value(&mut self) -> Option<Any> {
        self.value.take()
    }

    /// Sets the value; `BAD_PARAM` unless its TypeCode is equivalent to the item's.
    pub fn set_value(&mut self, value: Any) -> Result<(), SystemException> {
        let t = value.type_code();
        if !t.ptr_eq(&self.tc) && !t.equivalent(&self.tc) {
            return Err(bad_argument());
        }
        self.value = Some(value);
        Ok(())
    }

    fn is_in(&self) -> bool {
        self.flags & ARG_IN != 0
    }

    fn is_out(&self) -> bool {
        self.flags & ARG_OUT != 0
    }
}

/// `CORBA::NVList`: an operation's argument list, in declaration order.
#[derive(Clone, Debug, Default)]
pub struct NVList {
    items: Vec<NamedValue>,
}

impl NVList {
    /// `ORB::create_list(0)`.
    pub fn new() -> NVList {
        NVList::default()
    }

    /// `count()`.
    pub fn count(&self) -> u32 {
        self.items.len() as u32
    }

    /// `add_value(name, value, flags)`: an item holding `value`; returns its index.
    pub fn add_value(&mut self, name: impl Into<String>, value: Any, flags: Flags) -> u32 {
        self.items.push(NamedValue::new(name, value, flags));
        self.count() - 1
    }

    /// `add_item(name, flags)` with its TypeCode: an item without a value (an `out`
    /// argument, or a DSI argument to be read from the request); returns its index.
    pub fn add_item(
        &mut self,
        name: impl Into<String>,
        tc: impl Into<TypeCode>,
        flags: Flags,
    ) -> u32 {
        self.items.push(NamedValue::with_type(name, tc, flags));
        self.count() - 1
    }

    /// `add(nv)`.
    pub fn add(&mut self, nv: NamedValue) -> u32 {
        self.items.push(nv);
        self.count() - 1
    }

    /// `item(i)`.
    pub fn item(&self, index: u32) -> Option<&NamedValue> {
        self.items.get(index as usize)
    }

    /// `item(i)`, to change its value.
    pub fn item_mut(&mut self, index: u32) -> Option<&mut NamedValue> {
        self.items.get_mut(index as usize)
    }

    /// `remove(i)`.
    pub fn remove(&mut self, index: u32) -> Option<NamedValue> {
        ((index as usize) < self.items.len()).then(|| self.items.remove(index as usize))
    }

    /// The items in order.
    pub fn iter(&self) -> impl Iterator<Item = &NamedValue> {
        self.items.iter()
    }

    /// The items in order, mutably.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut NamedValue> {
        self.items.iter_mut()
    }
}

/// `CORBA::ExceptionList`: the TypeCodes of the user exceptions a request may raise.
#[derive(Clone, Debug, Default)]
pub struct ExceptionList {
    types: Vec<TypeCode>,
}

impl ExceptionList {
    /// An empty list.
    pub fn new() -> ExceptionList {
        ExceptionList::default()
    }

    /// `add(tc)`: `tc` should be a `tk_except` TypeCode.
    pub fn add(&mut self, tc: impl Into<TypeCode>) {
        self.types.push(tc.into());
    }

    /// `count()`.
    pub fn count(&self) -> u32 {
        self.types.len() as u32
    }

    /// `item(i)`.
    pub fn item(&self, index: u32) -> Option<&TypeCode> {
        self.types.get(index as usize)
    }

    /// `remove(i)`.
    pub fn remove(&mut self, index: u32) -> Option<TypeCode> {
        ((index as usize) < self.types.len()).then(|| self.types.remove(index as usize))
    }

    fn find(&self, id: &str) -> Option<&TypeCode> {
        self.types.iter().find(|t| t.id() == Ok(id))
    }
}

/// `CORBA::Context`: property names and values sent with operations that declare a
/// `context` clause (as a `sequence<string>` of name/value pairs after the arguments).
#[derive(Clone, Debug, Default)]
pub struct Context {
    values: Vec<(String, String)>,
}

impl Context {
    /// An empty context.
    pub fn new() -> Context {
        Context::default()
    }

    /// `set_one_value(name, value)`.
    pub fn set_one_value(&mut self, name: &str, value: &str) {
        match self.values.iter_mut().find(|(n, _)| n == name) {
            Some(v) => v.1 = value.to_owned(),
            None => self.values.push((name.to_owned(), value.to_owned())),
        }
    }

    /// `get_values(pattern)`: the properties whose names match `pattern` (a trailing `*`
    /// matches any suffix).
    pub fn get_values(&self, pattern: &str) -> Vec<(String, String)> {
        let matches = |n: &str| match pattern.strip_suffix('*') {
            Some(prefix) => n.starts_with(prefix),
            None => n == pattern,
        };
        self.values
            .iter()
            .filter(|(n, _)| matches(n))
            .cloned()
            .collect()
    }

    /// `delete_values(pattern)`.
    pub fn delete_values(&mut self, pattern: &str) {
        let gone = self.get_values(pattern);
        self.values.retain(|v| !gone.contains(v));
    }
}

/// How a dynamic call failed.
#[derive(Debug, Clone, PartialEq)]
pub enum DiiError {
    /// A system exception (a user exception not in the request's [`ExceptionList`] is
    /// `UNKNOWN`).
    System(SystemException),
    /// A user exception of the exception list, decoded by its TypeCode (a `tk_except` Any).
    User(Any),
}

impl From<SystemException> for DiiError {
    fn from(e: SystemException) -> Self {
        DiiError::System(e)
    }
}

impl fmt::Display for DiiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiiError::System(e) => fmt::Display::fmt(e, f),
            DiiError::User(a) => write!(
                f,
                "user exception {}",
                a.type_code().id().unwrap_or("(no id)")
            ),
        }
    }
}

impl std::error::Error for DiiError {}

/// What a call brought back: the result and the `out`/`inout` values in argument order.
type Outcome = Result<(Option<Any>, Vec<Any>), DiiError>;

/// Wakes whoever waits for any of a set of deferred calls.
#[derive(Default)]
struct Notify {
    count: Mutex<u64>,
    cv: Condvar,
}

impl Notify {
    fn current(&self) -> u64 {
        *self.count.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn bump(&self) {
        *self.count.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.cv.notify_all();
    }

    fn wait_past(&self, seen: u64) {
        let g = self.count.lock().unwrap_or_else(PoisonError::into_inner);
        let _g = self
            .cv
            .wait_while(g, |c| *c == seen)
            .unwrap_or_else(PoisonError::into_inner);
    }
}

/// A call running on its helper thread.
struct Deferred {
    slot: Arc<Mutex<Option<Outcome>>>,
    thread: JoinHandle<()>,
}

/// `CORBA::Request`: a reusable dynamic call (see the module documentation).
pub struct Request {
    target: ObjectRef,
    operation: String,
    args: NVList,
    result: NamedValue,
    exceptions: ExceptionList,
    /// Context properties, flattened to name, value, name, value…
    context: Option<Vec<String>>,
    env: Option<DiiError>,
    deferred: Option<Deferred>,
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request")
            .field("operation", &self.operation)
            .field("args", &self.args)
            .field("result", &self.result.tc)
            .field("pending", &self.deferred.is_some())
            .finish_non_exhaustive()
    }
}

impl Request {
    /// `Object::_request(operation)`: no arguments, `void` result, no user exceptions.
    pub fn new(target: ObjectRef, operation: &str) -> Request {
        Request::create(
            target,
            None,
            operation,
            NVList::new(),
            NamedValue::result(TypeCode::VOID),
            ExceptionList::new(),
        )
    }

    /// `Object::_create_request(ctx, operation, args, result, exceptions)`.
    pub fn create(
        target: ObjectRef,
        ctx: Option<&Context>,
        operation: &str,
        args: NVList,
        result: NamedValue,
        exceptions: ExceptionList,
    ) -> Request {
        Request {
            target,
            operation: operation.to_owned(),
            args,
            result,
            exceptions,
            context: ctx.map(|c| {
                c.values
                    .iter()
                    .flat_map(|(n, v)| [n.clone(), v.clone()])
                    .collect()
            }),
            env: None,
            deferred: None,
        }
    }

    /// `target()`.
    pub fn target(&self) -> &ObjectRef {
        &self.target
    }

    /// `operation()`.
    pub fn operation(&self) -> &str {
        &self.operation
    }

    /// `arguments()`.
    pub fn arguments(&self) -> &NVList {
        &self.args
    }

    /// `arguments()`, to change values (TypeCodes stay fixed).
    pub fn arguments_mut(&mut self) -> &mut NVList {
        &mut self.args
    }

    /// `exceptions()`.
    pub fn exceptions(&self) -> &ExceptionList {
        &self.exceptions
    }

    /// `exceptions()`, to add to.
    pub fn exceptions_mut(&mut self) -> &mut ExceptionList {
        &mut self.exceptions
    }

    /// `result()`.
    pub fn result(&self) -> &NamedValue {
        &self.result
    }

    /// `env()`: the exception the last completed call raised, if any.
    pub fn env(&self) -> Option<&DiiError> {
        self.env.as_ref()
    }

    /// `add_in_arg()`: appends an `in` argument; returns its index.
    pub fn add_in_arg(&mut self, name: &str, value: Any) -> u32 {
        self.args.add_value(name, value, ARG_IN)
    }

    /// `add_inout_arg()`: appends an `inout` argument; its value is replaced by the reply's.
    pub fn add_inout_arg(&mut self, name: &str, value: Any) -> u32 {
        self.args.add_value(name, value, ARG_INOUT)
    }

    /// `add_out_arg()`: appends an `out` argument of type `tc`.
    pub fn add_out_arg(&mut self, name: &str, tc: impl Into<TypeCode>) -> u32 {
        self.args.add_item(name, tc, ARG_OUT)
    }

    /// `set_return_type(tc)`.
    pub fn set_return_type(&mut self, tc: impl Into<TypeCode>) {
        self.result = NamedValue::result(tc);
    }

    /// Replaces the value of argument `index` for the next call: `BAD_PARAM` if there is no
    /// such argument or the value's TypeCode differs from the argument's.
    pub fn set_argument(&mut self, index: u32, value: Any) -> Result<(), SystemException> {
        self.args
            .item_mut(index)
            .ok_or_else(bad_argument)?
            .set_value(value)
    }

    /// The value of argument `index` (an `out`/`inout` value after a reply).
    pub fn argument(&self, index: u32) -> Option<&Any> {
        self.args.item(index).and_then(NamedValue::value)
    }

    /// `return_value()`: the result of the last call (`tk_null` before one, or for
    /// `void`).
    pub fn return_value(&self) -> &Any {
        static NONE: std::sync::OnceLock<Any> = std::sync::OnceLock::new();
        self.result
            .value()
            .unwrap_or_else(|| NONE.get_or_init(Any::default))
    }

    fn check_idle(&self) -> Result<(), SystemException> {
        if self.deferred.is_some() {
            return Err(bad_inv_order());
        }
        for a in self.args.iter().filter(|a| a.is_in()) {
            if a.value.is_none() {
                return Err(bad_argument());
            }
        }
        Ok(())
    }

    /// `invoke()`: a twoway call. The result and `out`/`inout` values replace the
    /// request's; a user exception of the exception list comes back as [`DiiError::User`]
    /// (and stays in [`Request::env`]).
    pub fn invoke(&mut self) -> Result<(), DiiError> {
        self.check_idle()?;
        let outcome = perform(
            &self.target,
            &self.operation,
            &self.args,
            &self.result.tc,
            &self.exceptions,
            self.context.as_deref(),
        );
        self.apply(outcome)
    }

    /// `send_oneway()`: sends without waiting (errors are local: marshalling, no
    /// connection).
    pub fn send_oneway(&self) -> Result<(), SystemException> {
        self.check_idle()?;
        let (args, ctx) = (&self.args, self.context.as_deref());
        self.target
            .invoke_oneway(&self.operation, |w| encode_args(args, ctx, w))
    }

    /// `send_deferred()`: starts the call on a helper thread and returns at once.
    /// `BAD_INV_ORDER` if a deferred call is already outstanding.
    pub fn send_deferred(&mut self) -> Result<(), SystemException> {
        self.start_deferred(None)
    }

    fn start_deferred(&mut self, notify: Option<Arc<Notify>>) -> Result<(), SystemException> {
        self.check_idle()?;
        let slot: Arc<Mutex<Option<Outcome>>> = Arc::default();
        let call = (
            self.target.clone(),
            self.operation.clone(),
            self.args.clone(),
            self.result.tc.clone(),
            self.exceptions.clone(),
            self.context.clone(),
        );
        let out = slot.clone();
        let thread = std::thread::Builder::new()
            .name("corbina-dii".into())
            .spawn(move || {
                let (target, op, args, result, exceptions, ctx) = call;
                let o = perform(&target, &op, &args, &result, &exceptions, ctx.as_deref());
                *out.lock().unwrap_or_else(PoisonError::into_inner) = Some(o);
                if let Some(n) = notify {
                    n.bump();
                }
            })
            .map_err(|source| crate::Error::ThreadSpawn { source })?;
        self.deferred = Some(Deferred { slot, thread });
        Ok(())
    }

    /// `poll_response()`: whether the deferred call's reply is in. `BAD_INV_ORDER` without
    /// one outstanding.
    pub fn poll_response(&self) -> Result<bool, SystemException> {
        let d = self.deferred.as_ref().ok_or_else(bad_inv_order)?;
        Ok(d.slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some())
    }

    /// `get_response()`: waits for the deferred call and takes its outcome as `invoke`
    /// would. `BAD_INV_ORDER` without one outstanding.
    pub fn get_response(&mut self) -> Result<(), DiiError> {
        let d = self.deferred.take().ok_or_else(bad_inv_order)?;
        let _ = d.thread.join();
        let outcome = d
            .slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .unwrap_or_else(|| Err(DiiError::System(crate::Error::DeferredLost.into())));
        self.apply(outcome)
    }

    fn apply(&mut self, outcome: Outcome) -> Result<(), DiiError> {
        match outcome {
            Ok((result, outs)) => {
                self.result.value = result;
                let mut outs = outs.into_iter();
                for a in self.args.iter_mut().filter(|a| a.is_out()) {
                    a.value = outs.next();
                }
                self.env = None;
                Ok(())
            }
            Err(e) => {
                self.env = Some(e.clone());
                Err(e)
            }
        }
    }
}

fn encode_args<'a>(
    args: &'a NVList,
    ctx: Option<&'a [String]>,
    w: &mut CdrWriter<'a>,
) -> crate::cdr::Result<()> {
    for a in args.iter().filter(|a| a.is_in()) {
        if let Some(v) = &a.value {
            v.write_value(w)?;
        }
    }
    if let Some(ctx) = ctx {
        w.write_length(ctx.len())?;
        for s in ctx {
            w.write_string(s)?;
        }
    }
    Ok(())
}

/// One twoway call: encodes the `in`/`inout` values, decodes the result and the
/// `out`/`inout` values by their TypeCodes, and user exceptions by the list's.
fn perform(
    target: &ObjectRef,
    operation: &str,
    args: &NVList,
    result: &TypeCode,
    exceptions: &ExceptionList,
    ctx: Option<&[String]>,
) -> Outcome {
    let has_result = !matches!(result.unalias().kind(), TcKind::Void | TcKind::Null);
    let signature = Signature {
        args,
        result,
        exceptions,
    };
    target.invoke_described(
        operation,
        &signature,
        |w| encode_args(args, ctx, w),
        |r| {
            let ret = if has_result {
                Some(Any::read_value(result.clone(), r)?)
            } else {
                None
            };
            let mut outs = Vec::new();
            for a in args.iter().filter(|a| a.is_out()) {
                outs.push(Any::read_value(a.tc.clone(), r)?);
            }
            Ok((ret, outs))
        },
        |id, r| {
            let Some(tc) = exceptions.find(id) else {
                return Ok(None);
            };
            Ok(Some(DiiError::User(read_exception(tc, id, r)?)))
        },
    )
}

/// A DII request's operation as request interceptors see it (built from its lists only
/// when one asks).
struct Signature<'r> {
    args: &'r NVList,
    result: &'r TypeCode,
    exceptions: &'r ExceptionList,
}

impl crate::interceptor::OperationSignature for Signature<'_> {
    fn parameters(&self) -> Vec<(crate::interceptor::ParameterMode, TypeCode)> {
        use crate::interceptor::ParameterMode;
        self.args
            .iter()
            .map(|a| {
                let mode = match a.flags() & ARG_INOUT {
                    ARG_INOUT => ParameterMode::InOut,
                    ARG_OUT => ParameterMode::Out,
                    _ => ParameterMode::In,
                };
                (mode, a.type_code().clone())
            })
            .collect()
    }

    fn result_type(&self) -> TypeCode {
        self.result.clone()
    }

    fn exception_types(&self) -> Vec<TypeCode> {
        self.exceptions.types.clone()
    }
}

/// A user exception as an `Any` of its `tk_except` TypeCode: the repository id (already
/// read from the reply) then the members, read by their TypeCodes.
pub(crate) fn read_exception(
    tc: &TypeCode,
    id: &str,
    r: &mut crate::cdr::CdrReader<'_>,
) -> crate::cdr::Result<Any> {
    let char_set = r.context().code_sets.char_set;
    let mut w = Any::value_writer(char_set);
    w.write_string(id)?;
    let t = tc.unalias();
    let n = t.member_count().unwrap_or(0);
    for i in 0..n {
        let mt = t
            .member_type(i)
            .map_err(|_| crate::cdr::MarshalError::InvalidValue {
                offset: r.position(),
                reason: "bad exception TypeCode",
            })?;
        crate::typecode::copy_value(&mt, r, &mut w)?;
    }
    Ok(Any::from_written(tc.clone(), w.into_bytes(), char_set))
}

/// The deferred requests an ORB holds for `get_next_response`.
struct OrbQueue {
    orb: WeakOrb,
    pending: Mutex<Vec<Request>>,
    notify: Arc<Notify>,
}

fn queue_for(orb: &Orb) -> Arc<OrbQueue> {
    static QUEUES: Mutex<Vec<Arc<OrbQueue>>> = Mutex::new(Vec::new());
    let mut qs = QUEUES.lock().unwrap_or_else(PoisonError::into_inner);
    qs.retain(|q| q.orb.upgrade().is_some());
    if let Some(q) = qs.iter().find(|q| q.orb.upgrade().as_ref() == Some(orb)) {
        return q.clone();
    }
    let q = Arc::new(OrbQueue {
        orb: orb.downgrade(),
        pending: Mutex::new(Vec::new()),
        notify: Arc::default(),
    });
    qs.push(q.clone());
    q
}

/// The ORB operations of the DII, as an extension of [`Orb`].
pub trait OrbDii {
    /// `send_multiple_requests_oneway(reqs)`.
    fn send_multiple_requests_oneway(&self, reqs: &[Request]) -> Result<(), SystemException>;

    /// `send_multiple_requests_deferred(reqs)`: starts every request (each on its helper
    /// thread); the ORB keeps them until [`OrbDii::get_next_response`] hands them back.
    fn send_multiple_requests_deferred(&self, reqs: Vec<Request>) -> Result<(), SystemException>;

    /// `poll_next_response()`: whether one of the ORB's deferred requests has its reply.
    fn poll_next_response(&self) -> bool;

    /// `get_next_response()`: waits for one of the ORB's deferred requests to complete and
    /// returns it, its outcome applied (see [`Request::env`]). `BAD_INV_ORDER` if none is
    /// outstanding.
    fn get_next_response(&self) -> Result<Request, SystemException>;
}

impl OrbDii for Orb {
    fn send_multiple_requests_oneway(&self, reqs: &[Request]) -> Result<(), SystemException> {
        reqs.iter().try_for_each(Request::send_oneway)
    }

    fn send_multiple_requests_deferred(&self, reqs: Vec<Request>) -> Result<(), SystemException> {
        let q = queue_for(self);
        for mut r in reqs {
            r.start_deferred(Some(q.notify.clone()))?;
            q.pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(r);
        }
        Ok(())
    }

    fn poll_next_response(&self) -> bool {
        let q = queue_for(self);
        let p = q.pending.lock().unwrap_or_else(PoisonError::into_inner);
        p.iter().any(|r| r.poll_response().unwrap_or(false))
    }

    fn get_next_response(&self) -> Result<Request, SystemException> {
        let q = queue_for(self);
        loop {
            let seen = q.notify.current();
            {
                let mut p = q.pending.lock().unwrap_or_else(PoisonError::into_inner);
                if p.is_empty() {
                    return Err(bad_inv_order());
                }
                if let Some(i) = p.iter().position(|r| r.poll_response().unwrap_or(false)) {
                    let mut r = p.remove(i);
                    drop(p);
                    // The outcome is kept in the request's `env`.
                    let _ = r.get_response();
                    return Ok(r);
                }
            }
            q.notify.wait_past(seen);
        }
    }
}
