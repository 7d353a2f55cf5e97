//! Invokers that reach servants in this process, without a socket.
//!
//! [`CollocatedInvoker`] is what the ORB gives a reference to an object of its own POAs: it
//! calls the servant directly when a generated proxy asks
//! ([`ObjectRef::collocated_call`](crate::ObjectRef::collocated_call)), and otherwise
//! dispatches the marshalled request through the POAs on the caller's thread.
//! [`ServantInvoker`] marshals every call to one servant, with no POA: for tests and examples
//! of generated stubs and skeletons.

use std::any::Any;
use std::sync::{Arc, Condvar, Mutex, Weak};

use crate::cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter};
use crate::object::{DecodeReply, EncodeArgs, Invoker, ReplyBody};
use crate::orb::WeakOrb;
use crate::poa::{DispatchError, PoaRegistry};
use crate::servant::{
    BufferReplySink, DeferredReplySink, ReplyKind, ReplySink, Servant, ServerRequest,
};
use crate::{CompletionStatus, SystemException};

/// How many LOCATION_FORWARDs an in-process call follows before TRANSIENT.
const MAX_FORWARDS: u8 = 8;

/// What two Corbina ORBs negotiate, used for marshalled in-process calls: UTF-8 and UTF-16.
fn in_process_context() -> CdrContext {
    CdrContext::GIOP_1_2.with_code_sets(crate::cdr::CodeSets::UNICODE)
}

/// How a reference reaches an object served by this process's ORB. Made by the ORB, once,
/// when it makes a reference whose object key is one of its POA keys.
///
/// Generated proxies call the servant directly through it
/// ([`ObjectRef::collocated_call`](crate::ObjectRef::collocated_call)); every other call
/// ([`Invoker::invoke`]) is marshalled and dispatched through the POAs on the caller's
/// thread, the way the server dispatches a remote request. Both take the POAs' one
/// request-processing path.
///
/// It keeps the IIOP invoker for the same object:
/// [`ObjectRef::without_collocation`](crate::ObjectRef::without_collocation) uses it, and so
/// does a call made after the ORB's POAs are gone (which then reports the failure).
pub struct CollocatedInvoker {
    /// Weak: servants hold references to their own POA's objects, which must not keep the
    /// POAs alive.
    registry: Weak<PoaRegistry>,
    object_key: Arc<[u8]>,
    /// Entered while a marshalled request is dispatched: references among the arguments
    /// belong to this ORB, as they would on the server side.
    orb: WeakOrb,
    iiop: Arc<dyn Invoker>,
}

impl CollocatedInvoker {
    pub(crate) fn new(
        registry: Weak<PoaRegistry>,
        object_key: Arc<[u8]>,
        orb: WeakOrb,
        iiop: Arc<dyn Invoker>,
    ) -> CollocatedInvoker {
        CollocatedInvoker {
            registry,
            object_key,
            orb,
            iiop,
        }
    }

    pub(crate) fn object_key_arc(&self) -> Arc<[u8]> {
        Arc::clone(&self.object_key)
    }

    /// The IIOP invoker for the same object (remote semantics).
    pub(crate) fn iiop(&self) -> &Arc<dyn Invoker> {
        &self.iiop
    }

    /// The direct path (see [`ObjectRef::collocated_call`](crate::ObjectRef::collocated_call)):
    /// `call` runs on the servant's typed interface `repository_id`, unmarshalled; `None` when
    /// the marshalled path must be taken.
    pub fn direct_call<S, T, E>(
        &self,
        repository_id: &str,
        call: impl FnOnce(&S) -> Result<T, E>,
    ) -> Option<Result<T, E>>
    where
        S: ?Sized + 'static,
        E: From<SystemException>,
    {
        // A gone ORB: the marshalled path reports it.
        let registry = self.registry.upgrade()?;
        let mut call = Some(call);
        let mut outcome = None;
        let mut upcall = |iface: &dyn Any| -> bool {
            match (iface.downcast_ref::<Arc<S>>(), call.take()) {
                (Some(servant), Some(f)) => {
                    outcome = Some(f(servant));
                    true
                }
                _ => false,
            }
        };
        match registry.collocated_call(&self.object_key, repository_id, &mut upcall) {
            Ok(true) => outcome,
            Ok(false) => None,
            Err(e) => Some(Err(E::from(e.completed(CompletionStatus::No)))),
        }
    }

    /// A marshalled call dispatched through this process's POAs on the caller's thread (no
    /// socket, no thread switch); a oneway runs to completion before this returns. `hops`
    /// counts the ForwardRequests followed so far.
    pub(crate) fn dispatch<'a>(
        &self,
        object_key: &[u8],
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
        hops: u8,
    ) -> Result<(), SystemException> {
        let Some(registry) = self.registry.upgrade() else {
            return self.iiop.invoke(object_key, operation, encode, decode);
        };
        let context = in_process_context();
        let args = marshal_arguments(encode, context)?;
        let mut sink = CollocatedSink {
            buffer: BufferReplySink {
                context,
                reply: None,
            },
            deferred: None,
        };
        let mut req = ServerRequest::new(
            operation,
            CdrReader::new(&args, ByteOrder::NATIVE, context),
            decode.is_some(),
            &mut sink,
        );
        let result = {
            let orb = self.orb.upgrade();
            let _entered = orb.as_ref().map(crate::orb::enter);
            registry.dispatch(object_key, &mut req)
        };
        let replied = req.has_replied();
        match result {
            Err(DispatchError::Forward { reference, .. }) if !replied => {
                // LOCATION_FORWARD, as a client ORB follows it (bounded against loops).
                if hops >= MAX_FORWARDS {
                    return Err(crate::Error::ForwardLimit {
                        limit: MAX_FORWARDS.into(),
                    }
                    .into());
                }
                return reference.send(operation, encode, decode, hops + 1);
            }
            // A remote oneway's errors never come back either.
            _ if decode.is_none() => return Ok(()),
            Err(DispatchError::System(e)) if !replied => return Err(e),
            _ => {}
        }
        if let Some(deferred) = sink.deferred.take() {
            // An AMH servant kept the reply: this thread waits for its handle to answer.
            sink.buffer.reply = Some(deferred.wait()?);
        }
        deliver_reply(&mut sink.buffer, replied, decode)
    }
}

impl Invoker for CollocatedInvoker {
    fn invoke<'a>(
        &self,
        object_key: &[u8],
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
    ) -> Result<(), SystemException> {
        self.dispatch(object_key, operation, encode, decode, 0)
    }
}

/// Reaches one servant in this process, marshalling arguments and results as a remote call
/// would (so in and out values are copied, never shared), with no network and no POA.
///
/// Used to test generated stubs and skeletons end to end.
pub struct ServantInvoker {
    servant: Arc<dyn Servant>,
    context: CdrContext,
}

impl ServantInvoker {
    /// An invoker for `servant`, marshalling with `context`.
    pub fn new(servant: Arc<dyn Servant>, context: CdrContext) -> Self {
        ServantInvoker { servant, context }
    }
}

impl Invoker for ServantInvoker {
    fn invoke<'a>(
        &self,
        _object_key: &[u8],
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
    ) -> Result<(), SystemException> {
        let args = marshal_arguments(encode, self.context)?;
        let mut sink = BufferReplySink {
            context: self.context,
            reply: None,
        };
        let mut req = ServerRequest::new(
            operation,
            CdrReader::new(&args, ByteOrder::NATIVE, self.context),
            decode.is_some(),
            &mut sink,
        );
        self.servant.dispatch(&mut req)?;
        let replied = req.has_replied();
        deliver_reply(&mut sink, replied, decode)
    }
}

fn marshal_arguments<'a>(
    encode: &EncodeArgs<'_, 'a>,
    context: CdrContext,
) -> Result<Vec<u8>, SystemException> {
    let mut w = CdrWriter::new(context);
    encode(&mut w).map_err(|e| SystemException::from(e).completed(CompletionStatus::No))?;
    Ok(w.into_bytes())
}

/// Hands the reply a servant wrote into `sink` to `decode` (nothing for a oneway).
fn deliver_reply(
    sink: &mut BufferReplySink,
    replied: bool,
    decode: Option<&mut DecodeReply<'_>>,
) -> Result<(), SystemException> {
    let Some(decode) = decode else { return Ok(()) };
    let internal = || SystemException::from(crate::Error::NoReply);
    if !replied {
        return Err(internal());
    }
    let (kind, body) = sink.reply.take().ok_or_else(internal)?;
    let mut r = CdrReader::new(&body, ByteOrder::NATIVE, sink.context);
    match kind {
        ReplyKind::NoException => decode(ReplyBody::Result(&mut r)),
        ReplyKind::UserException => {
            let id = r.read_string().map_err(SystemException::from)?;
            decode(ReplyBody::UserException(&id, &mut r))
        }
    }
}

/// The reply sink of a call dispatched in process: the reply kept in memory, or, when an
/// AMH servant defers it ([`ServerRequest::defer_reply`]), given by its handle later (from
/// any thread) to the caller, which waits for it.
struct CollocatedSink {
    buffer: BufferReplySink,
    /// The deferred reply's outcome, once the servant deferred it.
    deferred: Option<Arc<DeferredOutcome>>,
}

impl ReplySink for CollocatedSink {
    fn reply<'a>(
        &mut self,
        kind: ReplyKind,
        body: &mut dyn FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        self.buffer.reply(kind, body)
    }

    fn detach(&mut self) -> Option<Box<dyn DeferredReplySink>> {
        let outcome = Arc::new(DeferredOutcome::default());
        self.deferred = Some(outcome.clone());
        Some(Box::new(CollocatedDeferredReply {
            context: self.buffer.context,
            outcome,
        }))
    }
}

/// A reply's kind and body bytes.
type ReplyBytes = (ReplyKind, Vec<u8>);

/// A deferred in-process reply: its body (or the system exception that replaced it), and
/// the caller waiting for it.
#[derive(Default)]
struct DeferredOutcome {
    outcome: Mutex<Option<Result<ReplyBytes, SystemException>>>,
    given: Condvar,
}

impl DeferredOutcome {
    /// The first outcome given counts.
    fn give(&self, outcome: Result<ReplyBytes, SystemException>) {
        let mut o = self.outcome.lock().unwrap_or_else(|p| p.into_inner());
        if o.is_none() {
            *o = Some(outcome);
            self.given.notify_all();
        }
    }

    fn wait(&self) -> Result<ReplyBytes, SystemException> {
        let mut o = self.outcome.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(outcome) = o.take() {
                return outcome;
            }
            o = self.given.wait(o).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// What the [`crate::ReplyHandle`] of an in-process request answers through.
struct CollocatedDeferredReply {
    context: CdrContext,
    outcome: Arc<DeferredOutcome>,
}

impl DeferredReplySink for CollocatedDeferredReply {
    fn reply<'a>(
        &mut self,
        kind: ReplyKind,
        body: &mut dyn FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        let mut w = CdrWriter::new(self.context);
        match body(&mut w) {
            Ok(()) => {
                self.outcome.give(Ok((kind, w.into_bytes())));
                Ok(())
            }
            Err(e) => {
                // The caller gets what a remote client would: MARSHAL, completed YES.
                let e = SystemException::from(e).completed(CompletionStatus::Yes);
                self.outcome.give(Err(e.clone()));
                Err(e)
            }
        }
    }

    fn system_exception(&mut self, e: SystemException) -> Result<(), SystemException> {
        self.outcome.give(Err(e));
        Ok(())
    }
}

impl Drop for CollocatedDeferredReply {
    fn drop(&mut self) {
        // Never leaves the caller waiting (a handle answers, or sends INTERNAL, first).
        self.outcome
            .give(Err(crate::Error::ReplyHandleDropped.into()));
    }
}
