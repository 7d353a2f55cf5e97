//! Object references as generated proxies use them: an [`ObjectRef`] holds the target's IOR
//! and the [`Invoker`] that reaches it (an IIOP connection pool, or a servant in this process).

use std::fmt;
use std::sync::Arc;

use crate::cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter};
use crate::giop::Ior;
use crate::servant::{BufferReplySink, ReplyKind, Servant, ServerRequest};
use crate::{CompletionStatus, SystemException, SystemExceptionKind};

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
/// connections shared by every reference to that address) or per collocated servant.
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
}

/// A CORBA object reference (`CORBA::Object`).
///
/// Cheap to clone: the IOR and the invoker are shared. Creating or cloning a reference opens
/// no connection.
#[derive(Clone)]
pub struct ObjectRef {
    ior: Arc<Ior>,
    object_key: Arc<[u8]>,
    invoker: Arc<dyn Invoker>,
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
            invoker,
        }
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
        self.invoker
            .invoke(&self.object_key, operation, &encode_args, Some(&mut decode))
            .map_err(E::from)?;
        outcome.unwrap_or_else(|| Err(E::from(internal())))
    }

    /// Sends a oneway operation. Errors are local only (marshalling, no connection).
    pub fn invoke_oneway<'a>(
        &self,
        operation: &str,
        encode_args: impl Fn(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        self.invoker
            .invoke(&self.object_key, operation, &encode_args, None)
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
}

/// For operations without a `raises` clause: every user exception is unknown.
pub fn no_user(_id: &str, _r: &mut CdrReader<'_>) -> crate::cdr::Result<Option<SystemException>> {
    Ok(None)
}

fn internal() -> SystemException {
    SystemException::new(SystemExceptionKind::Internal, 0).completed(CompletionStatus::Maybe)
}

/// Reaches a servant in this process, marshalling arguments and results as a remote call
/// would (so in and out values are copied, never shared), with no network.
///
/// Used for collocated calls that must keep remote semantics and to test generated stubs
/// and skeletons end to end.
pub struct CollocatedInvoker {
    servant: Arc<dyn Servant>,
    context: CdrContext,
}

impl CollocatedInvoker {
    /// An invoker for `servant`, marshalling with `context`.
    pub fn new(servant: Arc<dyn Servant>, context: CdrContext) -> Self {
        CollocatedInvoker { servant, context }
    }
}

impl Invoker for CollocatedInvoker {
    fn invoke<'a>(
        &self,
        _object_key: &[u8],
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
    ) -> Result<(), SystemException> {
        let mut w = CdrWriter::new(self.context);
        encode(&mut w).map_err(SystemException::from)?;
        let args = w.into_bytes();
        let mut sink = BufferReplySink {
            context: self.context,
            reply: None,
        };
        let response_expected = decode.is_some();
        let mut req = ServerRequest::new(
            operation,
            CdrReader::new(&args, ByteOrder::NATIVE, self.context),
            response_expected,
            &mut sink,
        );
        self.servant.dispatch(&mut req)?;
        let replied = req.has_replied();
        let Some(decode) = decode else { return Ok(()) };
        if !replied {
            return Err(internal());
        }
        let (kind, body) = sink.reply.take().ok_or_else(internal)?;
        let mut r = CdrReader::new(&body, ByteOrder::NATIVE, self.context);
        match kind {
            ReplyKind::NoException => decode(ReplyBody::Result(&mut r)),
            ReplyKind::UserException => {
                let id = r.read_string().map_err(SystemException::from)?;
                decode(ReplyBody::UserException(&id, &mut r))
            }
        }
    }
}
