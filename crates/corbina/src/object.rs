//! Object references as generated proxies use them: an [`ObjectRef`] holds the target's IOR
//! and the [`Invoker`] that reaches it (an IIOP connection pool, or this process's POAs: a
//! [`CollocatedInvoker`]).
//!
//! References are marshalled as IORs ([`write_object`], [`read_object`]); a nil reference is
//! `None`. Unmarshalling needs an ORB to reach the object: the thread's current ORB (see
//! [`crate::orb::current`]).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::cdr::{CdrDecode, CdrEncode, CdrReader, CdrWriter, MarshalError};
use crate::collocation::CollocatedInvoker;
use crate::giop::Ior;
use crate::orb::{Orb, WeakOrb};
use crate::{CompletionStatus, SystemException};

/// What came back for a twoway call, for the stub to decode.
pub enum ReplyBody<'r, 'b> {
    /// NO_EXCEPTION: the reader is at the return value.
    Result(&'r mut CdrReader<'b>),
    /// USER_EXCEPTION: the repository id, and the reader at the first member.
    UserException(&'r str, &'r mut CdrReader<'b>),
}

/// Encodes a request's arguments; called again if the ORB must resend (a LOCATION_FORWARD,
/// or a connection the server closed before reading the request).
pub type EncodeArgs<'x, 'a> = dyn Fn(&mut CdrWriter<'a>) -> crate::cdr::Result<()> + 'x;

/// Decodes a reply body; system exceptions and forwards never reach it.
pub type DecodeReply<'x> = dyn FnMut(ReplyBody<'_, '_>) -> Result<(), SystemException> + 'x;

/// How a reference reaches its object. The ORB supplies one per address (a *Rope* of IIOP
/// connections shared by every reference to that address) or, for an object of its own
/// POAs, a [`CollocatedInvoker`].
pub trait Invoker: Send + Sync {
    /// Sends a request for `operation` and, when `decode` is given, waits for the reply and
    /// hands its body to `decode`. Without `decode` the call is oneway.
    fn invoke<'a>(
        &self,
        object_key: &[u8],
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
    ) -> Result<(), SystemException>;

    /// [`Invoker::invoke`] for a request whose operation's TypeCodes are known (the DII
    /// gives them): an invoker that runs client request interceptors lets them see the
    /// arguments and result as `Any`s. Others ignore `signature`.
    fn invoke_described<'a>(
        &self,
        object_key: &[u8],
        operation: &str,
        signature: &dyn crate::interceptor::OperationSignature,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
    ) -> Result<(), SystemException> {
        let _ = signature;
        self.invoke(object_key, operation, encode, decode)
    }

    /// This invoker as `Any`, when it is one of the ORB's own: asynchronous calls
    /// ([`ObjectRef::invoke_async`]) go through the ORB's IIOP invoker without blocking the
    /// caller. Other invokers keep the default (`None`).
    #[doc(hidden)]
    fn as_any(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        None
    }
}

/// A CORBA object reference (`CORBA::Object`).
///
/// Cheap to clone: the IOR and the invoker are shared. Creating or cloning a reference opens
/// no connection.
///
/// Two references are equal (and hash alike) when their IORs are the same, as
/// [`ObjectRef::is_equivalent`] tests.
#[derive(Clone)]
pub struct ObjectRef {
    ior: Arc<Ior>,
    object_key: Arc<[u8]>,
    invoker: RefInvoker,
    /// The ORB that made the reference: references in its replies are unmarshalled by it.
    orb: Option<WeakOrb>,
}

/// The one invoker of a reference. The collocated invoker is told apart by its variant, not
/// through the trait, so that a generated proxy's direct-call attempt costs a reference that
/// is not collocated one branch, not a virtual call.
#[derive(Clone)]
enum RefInvoker {
    /// IIOP, or an invoker the application supplies.
    Other(Arc<dyn Invoker>),
    /// An object of this ORB's POAs (decided once, when the ORB makes the reference).
    Collocated(Arc<CollocatedInvoker>),
}

impl PartialEq for ObjectRef {
    fn eq(&self, other: &ObjectRef) -> bool {
        self.is_equivalent(other)
    }
}

impl Eq for ObjectRef {}

impl Hash for ObjectRef {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.ior.hash(state);
    }
}

impl fmt::Debug for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectRef")
            .field("type_id", &self.ior.type_id)
            .finish_non_exhaustive()
    }
}

impl ObjectRef {
    /// A reference to the object with `object_key`, reached through `invoker`.
    pub fn new(ior: Ior, object_key: Vec<u8>, invoker: Arc<dyn Invoker>) -> ObjectRef {
        ObjectRef {
            ior: Arc::new(ior),
            object_key: object_key.into(),
            invoker: RefInvoker::Other(invoker),
            orb: None,
        }
    }

    /// A reference to an object of the ORB whose POAs `invoker` reaches.
    pub(crate) fn collocated(ior: Ior, invoker: CollocatedInvoker) -> ObjectRef {
        ObjectRef {
            ior: Arc::new(ior),
            object_key: invoker.object_key_arc(),
            invoker: RefInvoker::Collocated(Arc::new(invoker)),
            orb: None,
        }
    }

    /// The same reference, whose calls always take the marshalled path (IIOP, even to an
    /// object in this process): the opt-out of direct collocated calls, for a caller that
    /// wants remote semantics (values copied, the servant run on a server thread, oneways
    /// not waited for).
    pub fn without_collocation(&self) -> ObjectRef {
        match &self.invoker {
            RefInvoker::Collocated(c) => ObjectRef {
                invoker: RefInvoker::Other(Arc::clone(c.iiop())),
                ..self.clone()
            },
            RefInvoker::Other(_) => self.clone(),
        }
    }

    /// Whether the reference names an object of the ORB that made it (and
    /// [`without_collocation`](Self::without_collocation) was not used): generated proxies
    /// then call the servant directly, and other calls are dispatched in process.
    pub fn is_collocated(&self) -> bool {
        matches!(self.invoker, RefInvoker::Collocated(_))
    }

    /// What generated proxies call first: if the object is collocated and its servant has
    /// the typed interface `repository_id` (a generated skeleton's, see
    /// [`Servant::local_interface`](crate::Servant::local_interface)), runs `call` on that
    /// servant on this thread, without marshalling, and returns its result. `S` is the
    /// servant trait object (`dyn FooServant`) whose `Arc` the skeleton hands out for
    /// `repository_id`.
    ///
    /// The call keeps POA semantics, taking the same request-processing path as a remote
    /// request: the POA manager's state (HOLDING waits, DISCARDING raises TRANSIENT, INACTIVE
    /// raises OBJ_ADAPTER), OBJECT_NOT_EXIST for a deactivated object or a destroyed POA, the
    /// active object map or default servant, SINGLE_THREAD_MODEL, `PortableServer::Current`,
    /// and the in-flight count `deactivate`/`destroy` wait for. User and system exceptions
    /// the servant raises come back unchanged; arguments and results are passed, not copied.
    ///
    /// `None`: take the marshalled path (`invoke`). That is one branch for a reference that
    /// is not collocated; for a collocated one it is a servant without typed interface (DSI,
    /// hand-written [`Servant`](crate::Servant)s) or an object a servant manager must
    /// incarnate or locate, which `invoke` then dispatches in process.
    #[inline]
    pub fn collocated_call<S, T, E>(
        &self,
        repository_id: &str,
        call: impl FnOnce(&S) -> Result<T, E>,
    ) -> Option<Result<T, E>>
    where
        S: ?Sized + 'static,
        E: From<SystemException>,
    {
        match &self.invoker {
            RefInvoker::Collocated(c) => c.direct_call(repository_id, call),
            RefInvoker::Other(_) => None,
        }
    }

    /// The same reference, belonging to `orb`: object references in the replies to its
    /// calls are unmarshalled by `orb` (entered as the thread's current ORB while a reply is
    /// decoded). References an ORB makes or unmarshals belong to it already.
    pub fn with_orb(mut self, orb: &Orb) -> ObjectRef {
        self.orb = Some(orb.downgrade());
        self
    }

    /// The ORB the reference belongs to, if any and if it still exists.
    pub fn orb(&self) -> Option<Orb> {
        self.orb.as_ref().and_then(WeakOrb::upgrade)
    }

    /// The reference's IOR.
    pub fn ior(&self) -> &Ior {
        &self.ior
    }

    /// The repository id the IOR names (may be a base of the object's real type, or empty).
    pub fn type_id(&self) -> &str {
        &self.ior.type_id
    }

    /// Calls a twoway operation: encodes the arguments, waits, and decodes the result or one
    /// of the operation's user exceptions. `decode_user_exception` returns `Ok(None)` for a
    /// repository id the operation does not raise, reported as `UNKNOWN`.
    pub fn invoke<'a, T, E>(
        &self,
        operation: &str,
        encode_args: impl Fn(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
        decode_result: impl FnOnce(&mut CdrReader<'_>) -> crate::cdr::Result<T>,
        decode_user_exception: impl FnOnce(&str, &mut CdrReader<'_>) -> crate::cdr::Result<Option<E>>,
    ) -> Result<T, E>
    where
        E: From<SystemException>,
    {
        let mut decode_result = Some(decode_result);
        let mut decode_user_exception = Some(decode_user_exception);
        let mut outcome: Option<Result<T, E>> = None;
        let mut decode = |body: ReplyBody<'_, '_>| -> Result<(), SystemException> {
            // References in the reply are unmarshalled by this reference's ORB; an empty
            // body (a void call) holds none, so skips entering it.
            let has_data = match &body {
                ReplyBody::Result(r) => r.remaining() > 0,
                ReplyBody::UserException(..) => true,
            };
            let orb = if has_data { self.orb() } else { None };
            let _entered = orb.as_ref().map(crate::orb::enter);
            let done = CompletionStatus::Yes;
            let marshal = |e: crate::cdr::MarshalError| SystemException::from(e).completed(done);
            match body {
                ReplyBody::Result(r) => {
                    let f = decode_result.take().ok_or_else(internal)?;
                    let v = f(r).map_err(marshal)?;
                    r.expect_end().map_err(marshal)?;
                    outcome = Some(Ok(v));
                }
                ReplyBody::UserException(id, r) => {
                    let f = decode_user_exception.take().ok_or_else(internal)?;
                    match f(id, r).map_err(marshal)? {
                        Some(e) => outcome = Some(Err(e)),
                        None => return Err(crate::exception::unknown_user_exception()),
                    }
                }
            }
            Ok(())
        };
        self.send(operation, &encode_args, Some(&mut decode), 0)
            .map_err(E::from)?;
        outcome.unwrap_or_else(|| Err(E::from(internal())))
    }

    /// [`ObjectRef::invoke`] with the operation's TypeCodes, for request interceptors (see
    /// [`Invoker::invoke_described`]); the DII's path.
    #[inline]
    pub(crate) fn invoke_described<'a, T, E>(
        &self,
        operation: &str,
        signature: &dyn crate::interceptor::OperationSignature,
        encode_args: impl Fn(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
        decode_result: impl FnOnce(&mut CdrReader<'_>) -> crate::cdr::Result<T>,
        decode_user_exception: impl FnOnce(&str, &mut CdrReader<'_>) -> crate::cdr::Result<Option<E>>,
    ) -> Result<T, E>
    where
        E: From<SystemException>,
    {
        let mut decode_result = Some(decode_result);
        let mut decode_user_exception = Some(decode_user_exception);
        let mut outcome: Option<Result<T, E>> = None;
        let mut decode = |body: ReplyBody<'_, '_>| -> Result<(), SystemException> {
            // As `invoke`: references in the reply are made by this reference's ORB.
            let has_data = match &body {
                ReplyBody::Result(r) => r.remaining() > 0,
                ReplyBody::UserException(..) => true,
            };
            let orb = if has_data { self.orb() } else { None };
            let _entered = orb.as_ref().map(crate::orb::enter);
            let done = CompletionStatus::Yes;
            let marshal = |e: crate::cdr::MarshalError| SystemException::from(e).completed(done);
            match body {
                ReplyBody::Result(r) => {
                    let f = decode_result.take().ok_or_else(internal)?;
                    let v = f(r).map_err(marshal)?;
                    r.expect_end().map_err(marshal)?;
                    outcome = Some(Ok(v));
                }
                ReplyBody::UserException(id, r) => {
                    let f = decode_user_exception.take().ok_or_else(internal)?;
                    match f(id, r).map_err(marshal)? {
                        Some(e) => outcome = Some(Err(e)),
                        None => return Err(crate::exception::unknown_user_exception()),
                    }
                }
            }
            Ok(())
        };
        self.send_described(operation, Some(signature), &encode_args, Some(&mut decode))
            .map_err(E::from)?;
        outcome.unwrap_or_else(|| Err(E::from(internal())))
    }

    /// The IIOP invoker asynchronous calls go through: the reference's own, or for a
    /// collocated object the one its marshalled path uses (so a servant never runs on the
    /// polling thread).
    fn async_invoker(&self) -> Option<&crate::client::IiopInvoker> {
        let invoker = match &self.invoker {
            RefInvoker::Other(i) => i.as_any(),
            RefInvoker::Collocated(c) => c.iiop().as_any(),
        };
        invoker?.downcast_ref()
    }

    /// [`ObjectRef::invoke`] as a future: the request is marshalled and written on the first
    /// poll, and the task is woken when its reply arrives; many such calls may be in flight
    /// on one connection (see [`crate::client`], *Asynchronous calls*). The future is `Send`
    /// and needs no particular executor. Dropping it before the reply cancels the request
    /// (`CancelRequest`). A reference reached by an application-supplied [`Invoker`]
    /// completes on the polling thread.
    pub async fn invoke_async<'a, T, E>(
        &self,
        operation: &str,
        encode_args: impl Fn(&mut CdrWriter<'a>) -> crate::cdr::Result<()> + Send + Sync,
        decode_result: impl FnOnce(&mut CdrReader<'_>) -> crate::cdr::Result<T> + Send,
        decode_user_exception: impl FnOnce(&str, &mut CdrReader<'_>) -> crate::cdr::Result<Option<E>>
            + Send,
    ) -> Result<T, E>
    where
        T: Send,
        E: From<SystemException> + Send,
    {
        let mut decode_result = Some(decode_result);
        let mut decode_user_exception = Some(decode_user_exception);
        let mut outcome: Option<Result<T, E>> = None;
        let mut decode = |body: ReplyBody<'_, '_>| -> Result<(), SystemException> {
            // As in `invoke`: references in the reply belong to this reference's ORB.
            let has_data = match &body {
                ReplyBody::Result(r) => r.remaining() > 0,
                ReplyBody::UserException(..) => true,
            };
            let orb = if has_data { self.orb() } else { None };
            let _entered = orb.as_ref().map(crate::orb::enter);
            let marshal = |e: crate::cdr::MarshalError| {
                SystemException::from(e).completed(CompletionStatus::Yes)
            };
            match body {
                ReplyBody::Result(r) => {
                    let f = decode_result.take().ok_or_else(internal)?;
                    let v = f(r).map_err(marshal)?;
                    r.expect_end().map_err(marshal)?;
                    outcome = Some(Ok(v));
                }
                ReplyBody::UserException(id, r) => {
                    let f = decode_user_exception.take().ok_or_else(internal)?;
                    match f(id, r).map_err(marshal)? {
                        Some(e) => outcome = Some(Err(e)),
                        None => return Err(crate::exception::unknown_user_exception()),
                    }
                }
            }
            Ok(())
        };
        let sent = match self.async_invoker() {
            Some(i) => {
                i.invoke_async(operation, &encode_args, Some(&mut decode))
                    .await
            }
            None => self.send(operation, &encode_args, Some(&mut decode), 0),
        };
        sent.map_err(E::from)?;
        outcome.unwrap_or_else(|| Err(E::from(internal())))
    }

    /// [`ObjectRef::invoke_oneway`] as a future: done once the request is written (nothing
    /// is awaited from the server).
    pub async fn invoke_oneway_async<'a>(
        &self,
        operation: &str,
        encode_args: impl Fn(&mut CdrWriter<'a>) -> crate::cdr::Result<()> + Send + Sync,
    ) -> Result<(), SystemException> {
        match self.async_invoker() {
            Some(i) => i.invoke_async(operation, &encode_args, None).await,
            None => self.send(operation, &encode_args, None, 0),
        }
    }

    /// Sends a oneway operation. Errors are local only (marshalling, no connection).
    pub fn invoke_oneway<'a>(
        &self,
        operation: &str,
        encode_args: impl Fn(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        self.send(operation, &encode_args, None, 0)
    }

    /// The marshalled path, through the invoker. `hops` counts the ForwardRequests a
    /// collocated call followed in process.
    pub(crate) fn send<'a>(
        &self,
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
        hops: u8,
    ) -> Result<(), SystemException> {
        match &self.invoker {
            RefInvoker::Other(i) => i.invoke(&self.object_key, operation, encode, decode),
            RefInvoker::Collocated(c) => {
                c.dispatch(&self.object_key, operation, encode, decode, hops)
            }
        }
    }

    /// [`ObjectRef::send`] with the operation's TypeCodes, if known, for request
    /// interceptors (see [`Invoker::invoke_described`]).
    #[inline]
    pub(crate) fn send_described<'a>(
        &self,
        operation: &str,
        signature: Option<&dyn crate::interceptor::OperationSignature>,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
    ) -> Result<(), SystemException> {
        match (signature, &self.invoker) {
            (Some(s), RefInvoker::Other(i)) => {
                i.invoke_described(&self.object_key, operation, s, encode, decode)
            }
            _ => self.send(operation, encode, decode, 0),
        }
    }

    /// `CORBA::Object::_is_a`: true at once if the IOR's type id matches, otherwise asks the
    /// object.
    pub fn is_a(&self, repository_id: &str) -> Result<bool, SystemException> {
        if self.ior.type_id == repository_id || repository_id == "IDL:omg.org/CORBA/Object:1.0" {
            return Ok(true);
        }
        self.invoke(
            "_is_a",
            |w| w.write_string(repository_id),
            |r| r.read_boolean(),
            no_user,
        )
    }

    /// `CORBA::Object::_non_existent`: asks the object whether it is gone.
    pub fn non_existent(&self) -> Result<bool, SystemException> {
        self.invoke("_non_existent", |_| Ok(()), |r| r.read_boolean(), no_user)
    }

    /// `CORBA::Object::_is_equivalent`: same IOR bytes (a cheap, conservative test).
    pub fn is_equivalent(&self, other: &ObjectRef) -> bool {
        self.ior == other.ior
    }

    /// `CORBA::Object::_hash(maximum)`: a value in `0..=maximum` that depends only on the
    /// IOR's type id and profiles (FNV-1a, 64 bits), so equivalent references hash alike
    /// in every process and run.
    pub fn hash(&self, maximum: u32) -> u32 {
        const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
        const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
        fn feed(h: u64, bytes: &[u8]) -> u64 {
            bytes
                .iter()
                .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(FNV_PRIME))
        }
        // Lengths are fed too, so moving bytes across field boundaries changes the hash.
        let mut h = feed(FNV_OFFSET, &(self.ior.type_id.len() as u64).to_le_bytes());
        h = feed(h, self.ior.type_id.as_bytes());
        for p in &self.ior.profiles {
            h = feed(h, &p.tag.to_le_bytes());
            h = feed(h, &(p.profile_data.len() as u64).to_le_bytes());
            h = feed(h, &p.profile_data);
        }
        (h % (u64::from(maximum) + 1)) as u32
    }

    /// `CORBA::Object::_request(operation)`: a dynamic request with no arguments, a `void`
    /// result and no user exceptions, to fill in (see [`crate::dii`]).
    pub fn request(&self, operation: &str) -> crate::dii::Request {
        crate::dii::Request::new(self.clone(), operation)
    }

    /// `CORBA::Object::_create_request(ctx, operation, args, result, exceptions)`.
    pub fn create_request(
        &self,
        ctx: Option<&crate::dii::Context>,
        operation: &str,
        args: crate::dii::NVList,
        result: crate::dii::NamedValue,
        exceptions: crate::dii::ExceptionList,
    ) -> crate::dii::Request {
        crate::dii::Request::create(self.clone(), ctx, operation, args, result, exceptions)
    }
}

/// Writes `obj` as an IOR; `None` is the nil reference (empty type id, no profiles).
pub fn write_object(w: &mut CdrWriter<'_>, obj: Option<&ObjectRef>) -> crate::cdr::Result<()> {
    let offset = w.position();
    let r = match obj {
        Some(o) => o.ior.encode(w),
        None => Ior::nil().encode(w),
    };
    r.map_err(|e| giop_to_marshal(e, offset, "object reference cannot be encoded"))
}

/// Reads an IOR; the nil reference is `None`. Any other reference is made by the thread's
/// current ORB ([`crate::orb::current`]); with none, the error is `MARSHAL` (minor
/// `CORBINA_VMCID | 17`, "object reference received where no ORB is current").
pub fn read_object(r: &mut CdrReader<'_>) -> crate::cdr::Result<Option<ObjectRef>> {
    let offset = r.position();
    let ior = Ior::decode(r).map_err(|e| giop_to_marshal(e, offset, "malformed IOR"))?;
    reference_for(ior, offset, crate::orb::current)
}

fn reference_for(
    ior: Ior,
    offset: usize,
    orb: impl FnOnce() -> Option<Orb>,
) -> crate::cdr::Result<Option<ObjectRef>> {
    if ior.is_nil() {
        return Ok(None);
    }
    match orb() {
        Some(orb) => Ok(Some(orb.reference_from_wire(ior))),
        None => Err(MarshalError::InvalidValue {
            offset,
            reason: "object reference received where no ORB is current \
                     (enter one with corbina::orb::enter or set Orb::set_default)",
        }),
    }
}

fn giop_to_marshal(e: crate::giop::GiopError, offset: usize, reason: &'static str) -> MarshalError {
    match e {
        crate::giop::GiopError::Marshal(m) => m,
        _ => MarshalError::InvalidValue { offset, reason },
    }
}

/// Writes a non-nil reference (use [`write_object`] where nil is allowed).
impl CdrEncode for ObjectRef {
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> crate::cdr::Result<()> {
        write_object(w, Some(self))
    }
}

/// Reads a reference that must not be nil (use [`read_object`] where nil is allowed).
impl<'a> CdrDecode<'a> for ObjectRef {
    const MIN_WIRE_SIZE: usize = MIN_IOR_SIZE;

    fn decode(r: &mut CdrReader<'a>) -> crate::cdr::Result<Self> {
        let offset = r.position();
        read_object(r)?.ok_or(MarshalError::InvalidValue {
            offset,
            reason: "nil object reference where one is required",
        })
    }
}

/// The fewest bytes an IOR occupies: a type id length and a profile count (padding ignored).
pub const MIN_IOR_SIZE: usize = 8;

/// What generated proxies (and [`ObjectRef`] itself) implement: a typed view of an object
/// reference, made without a check when the static type is known (a value unmarshalled
/// where IDL declares that interface).
pub trait Proxy: Sized {
    /// Repository id of the interface.
    const REPOSITORY_ID: &'static str;

    /// A proxy for `obj`, without checking its type (as `unchecked_narrow`).
    fn from_object(obj: ObjectRef) -> Self;

    /// The object reference.
    fn as_object(&self) -> &ObjectRef;
}

impl Proxy for ObjectRef {
    const REPOSITORY_ID: &'static str = "IDL:omg.org/CORBA/Object:1.0";

    fn from_object(obj: ObjectRef) -> Self {
        obj
    }

    fn as_object(&self) -> &ObjectRef {
        self
    }
}

/// Writes a possibly nil reference of a proxy type: generated code passes `Option<&T>` or
/// `&Option<T>`.
pub fn write_ref<'x, T: Proxy + 'x>(
    w: &mut CdrWriter<'_>,
    obj: impl Into<Option<&'x T>>,
) -> crate::cdr::Result<()> {
    write_object(w, obj.into().map(Proxy::as_object))
}

/// Reads a possibly nil reference as proxy type `T` (no `_is_a` check: the IDL declares
/// the type).
pub fn read_ref<T: Proxy>(r: &mut CdrReader<'_>) -> crate::cdr::Result<Option<T>> {
    Ok(read_object(r)?.map(T::from_object))
}

/// A reference whose IOR this ORB cannot reach (no usable profile): it keeps the IOR, so it
/// can be passed on, and each call fails with `error`.
pub(crate) fn unreachable_reference(ior: Ior, error: SystemException) -> ObjectRef {
    let key = ior
        .iiop_profiles()
        .ok()
        .and_then(|p| p.into_iter().next())
        .map(|p| p.object_key.as_bytes().to_vec())
        .unwrap_or_default();
    failing_reference(ior, key, error)
}

/// A reference every call on which fails with `error` (completed NO): for IORs this ORB
/// cannot reach and for references made after their ORB is gone.
pub(crate) fn failing_reference(ior: Ior, key: Vec<u8>, error: SystemException) -> ObjectRef {
    ObjectRef::new(ior, key, Arc::new(Unreachable(error)))
}

struct Unreachable(SystemException);

impl Invoker for Unreachable {
    fn invoke<'a>(
        &self,
        _object_key: &[u8],
        _operation: &str,
        _encode: &EncodeArgs<'_, 'a>,
        _decode: Option<&mut DecodeReply<'_>>,
    ) -> Result<(), SystemException> {
        Err(self.0.clone().completed(CompletionStatus::No))
    }
}

/// For operations without a `raises` clause: every user exception is unknown.
pub fn no_user(_id: &str, _r: &mut CdrReader<'_>) -> crate::cdr::Result<Option<SystemException>> {
    Ok(None)
}

fn internal() -> SystemException {
    crate::Error::NoReply.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdr::{ByteOrder, CdrContext};
    use crate::SystemExceptionKind;

    fn encode(obj: Option<&ObjectRef>) -> Vec<u8> {
        let mut w = CdrWriter::new(CdrContext::GIOP_1_2);
        write_object(&mut w, obj).unwrap();
        w.into_bytes()
    }

    #[test]
    fn nil_round_trips_as_none_without_an_orb() {
        let bytes = encode(None);
        assert_eq!(bytes.len(), 4 + 1 + 3 + 4); // "" (length, NUL), pad, no profiles
        let mut r = CdrReader::new(&bytes, ByteOrder::NATIVE, CdrContext::GIOP_1_2);
        assert!(read_object(&mut r).unwrap().is_none());
        r.expect_end().unwrap();
    }

    #[test]
    fn a_reference_without_an_orb_is_marshal() {
        let orb = crate::Orb::with_config(crate::OrbConfig::default());
        let ior = crate::giop::Ior::from_stringified(
            &orb.string_to_object("corbaloc::127.0.0.1:1/key")
                .unwrap()
                .ior()
                .to_stringified()
                .unwrap(),
        )
        .unwrap();
        let e = reference_for(ior.clone(), 0, || None).unwrap_err();
        let sys = SystemException::from(e);
        assert_eq!(sys.kind, SystemExceptionKind::Marshal);
        assert_eq!(sys.minor, crate::cdr::CORBINA_VMCID | 17);
        let obj = reference_for(ior.clone(), 0, || Some(orb.clone()))
            .unwrap()
            .unwrap();
        assert_eq!(obj.ior(), &ior);
        assert_eq!(obj.orb(), Some(orb));
    }

    #[test]
    fn unreachable_iors_still_make_references() {
        let orb = crate::Orb::with_config(crate::OrbConfig::default());
        let ior = Ior {
            type_id: "IDL:X:1.0".into(),
            profiles: vec![crate::giop::TaggedProfile {
                tag: 0x4242,
                profile_data: vec![1, 2, 3],
            }],
            byte_order: ByteOrder::NATIVE,
        };
        let obj = reference_for(ior.clone(), 0, || Some(orb))
            .unwrap()
            .unwrap();
        assert_eq!(obj.ior(), &ior);
        let e = obj.non_existent().unwrap_err();
        assert_eq!(e.kind, SystemExceptionKind::InvObjref);
        // And it is passed on unchanged.
        let bytes = encode(Some(&obj));
        let mut r = CdrReader::new(&bytes, ByteOrder::NATIVE, CdrContext::GIOP_1_2);
        assert_eq!(Ior::decode(&mut r).unwrap(), ior);
    }

    #[test]
    fn hash_is_stable_bounded_and_follows_equivalence() {
        let orb = crate::Orb::with_config(crate::OrbConfig::default());
        let a = orb.string_to_object("corbaloc::127.0.0.1:1/key").unwrap();
        // An equivalent reference made separately, through its stringified IOR.
        let a2 = orb
            .string_to_object(&orb.object_to_string(&a).unwrap())
            .unwrap();
        let b = orb.string_to_object("corbaloc::127.0.0.1:1/other").unwrap();
        assert!(a.is_equivalent(&a2));
        assert!(!a.is_equivalent(&b));
        for max in [0, 1, 7, 1000, u32::MAX] {
            assert_eq!(a.hash(max), a2.hash(max), "max {max}");
            assert_eq!(a.hash(max), a.hash(max));
            assert!(a.hash(max) <= max && b.hash(max) <= max);
        }
        assert_eq!(a.hash(0), 0);
        assert_ne!(a.hash(u32::MAX), b.hash(u32::MAX));
        // Stable across runs: the FNV-1a value of a fixed IOR is fixed.
        let fixed = reference_for(
            Ior {
                type_id: "IDL:X:1.0".into(),
                profiles: vec![crate::giop::TaggedProfile {
                    tag: 0x4242,
                    profile_data: vec![1, 2, 3],
                }],
                byte_order: ByteOrder::NATIVE,
            },
            0,
            || Some(orb.clone()),
        )
        .unwrap()
        .unwrap();
        // 0xfe99_a1a2_2cd3_764b, reduced.
        assert_eq!(fixed.hash(u32::MAX), 0x2cd3_764b);
        assert_eq!(fixed.hash(999), 883);
        let spread: std::collections::HashSet<u32> = (0..64)
            .map(|i| {
                orb.string_to_object(&format!("corbaloc::127.0.0.1:1/key{i}"))
                    .unwrap()
                    .hash(15)
            })
            .collect();
        assert!(
            spread.len() > 8,
            "64 keys fall in {} of 16 buckets",
            spread.len()
        );
    }
}
