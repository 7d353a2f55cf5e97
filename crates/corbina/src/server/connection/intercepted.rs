//! A request run with server request interceptors (out of line: a server without them
//! never comes here). The same steps as [`super::serve_request`], with the interception
//! points around them and the reply's service contexts.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::sync::Arc;

use super::{begin, end, poisoned, send_failed, to_marshal, ConnectionShared};
use crate::cdr::{CdrReader, CdrWriter};
use crate::giop::connection::ReplyContext;
use crate::giop::{ServiceContext, ServiceContextList, ServiceContextsView};
use crate::interceptor::server::{apply, end_chain, start_chain, Registered};
use crate::interceptor::{InterceptorError, Parameter, ReplyStatus, ServerRequestInfo};
use crate::poa::DispatchError;
use crate::servant::{DeferredReplySink, ReplyKind, ReplySink, ServerRequest};
use crate::server::RequestDispatcher;
use crate::transport::write_outgoing;
use crate::Any;
use crate::{Error, SystemException};

/// The service contexts of a request to run through the interceptors.
pub(crate) enum ReceivedContexts<'r> {
    /// Still in the message (decoded when an interceptor asks).
    InMessage(ServiceContextsView<'r>),
    /// Copied out of it (a request queued for a worker of a bidirectional connection).
    Copied(Vec<ServiceContext>),
}

/// Runs one request through the interceptors `reg`; false when the connection must close.
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn serve_intercepted(
    shared: &ConnectionShared,
    dispatcher: &dyn RequestDispatcher,
    out: &mut Vec<u8>,
    reg: &Arc<Registered>,
    operation: &str,
    contexts: ReceivedContexts<'_>,
    key: Option<&[u8]>,
    args: CdrReader<'_>,
    reply: ReplyContext,
) -> bool {
    if !begin(shared, reply.version) {
        return false;
    }
    let (received, request_contexts) = match contexts {
        ReceivedContexts::InMessage(view) => (Some(view), OnceCell::new()),
        ReceivedContexts::Copied(list) => (None, OnceCell::from(list)),
    };
    let mut ri = ServerRequestInfo {
        request_id: reply.request_id,
        operation: Cow::Borrowed(operation),
        response_expected: reply.response_expected,
        object_key: Cow::Borrowed(key.unwrap_or_default()),
        received,
        request_contexts,
        reply_contexts: Vec::new(),
        reply_status: None,
        exception: None,
        exception_id: None,
        forward: None,
        slots: crate::interceptor::server::slots(reg),
        span: tracing::Span::none(),
        started: reg.metrics.then(std::time::Instant::now),
        point: crate::interceptor::server::ServerPoint::ServiceContexts,
        parameters: None,
    };
    if reg.spans && crate::interceptor::spans::wanted() {
        ri.span = request_span(shared, &ri, reply.version);
    }
    // What the servant logs belongs to the request.
    let span = ri.span.clone();
    let _entered = span.enter();
    let mut sink = InterceptedSink {
        shared,
        out,
        reply,
        reg,
        ri: &mut ri,
        left_busy: false,
        ended: false,
        deferred: false,
    };
    // Starting and intermediate points; one that raises ends the request there.
    let ok = if let Some(e) = start_chain(reg, sink.ri) {
        sink.ended = true;
        !reply.response_expected || sink.send_outcome(&e).is_ok()
    } else {
        let saved = sink.ri.slots.clone().enter();
        let mut req = ServerRequest::new(operation, args, reply.response_expected, &mut sink);
        let _peer = shared.peer.as_ref().map(crate::server::PeerScope::enter);
        let result = match key {
            Some(k) => dispatcher.dispatch(k, &mut req),
            None => Err(DispatchError::System(Error::NoObjectKey.into())),
        };
        let replied = req.has_replied();
        // What the servant left in the thread's slots is the request's now.
        let thread = saved.enter();
        if sink.ended {
            // The reply went through the sink, after its ending point.
            true
        } else {
            sink.ri.slots = thread;
            sink.ended = true;
            let outcome = match result {
                Ok(()) if replied || !reply.response_expected => None,
                Ok(()) => Some(InterceptorError::System(Error::NoReply.into())),
                Err(DispatchError::System(e)) => Some(InterceptorError::System(e)),
                Err(DispatchError::Forward { reference, .. }) => Some(InterceptorError::Forward(
                    crate::interceptor::ForwardRequest { forward: reference },
                )),
            };
            match &outcome {
                None => sink.ri.reply_status = Some(ReplyStatus::Successful),
                Some(e) => apply(sink.ri, e),
            }
            let n = reg.server.len();
            match end_chain(reg, sink.ri, n).or(outcome) {
                Some(e) if reply.response_expected => sink.send_outcome(&e).is_ok(),
                _ => true,
            }
        }
    };
    if sink.left_busy {
        ok
    } else {
        end(shared) && ok
    }
}

/// The span of request `ri`, with the client's address.
fn request_span(
    shared: &ConnectionShared,
    ri: &ServerRequestInfo<'_>,
    version: crate::giop::Version,
) -> tracing::Span {
    let (peer, transport) = match shared.state.lock() {
        Ok(st) => (
            crate::trace::peer_of(&*st.stream.0),
            crate::trace::transport_name(st.stream.kind()),
        ),
        Err(_) => (String::from("?"), "?"),
    };
    crate::interceptor::spans::request_span(
        false,
        &ri.operation,
        &ri.object_key,
        ri.request_id,
        Some(version),
        &peer,
        transport,
    )
}

/// Writes the reply of an intercepted request, after its ending point.
struct InterceptedSink<'c, 'r> {
    shared: &'c ConnectionShared,
    out: &'c mut Vec<u8>,
    reply: ReplyContext,
    reg: &'c Arc<Registered>,
    ri: &'c mut ServerRequestInfo<'r>,
    left_busy: bool,
    /// The ending point ran.
    ended: bool,
    /// The reply was deferred (AMH): the request's slots are those of the upcall.
    deferred: bool,
}

impl InterceptedSink<'_, '_> {
    /// Writes a reply with the request's reply contexts.
    fn write<'a>(
        &mut self,
        status: crate::giop::ReplyStatus,
        body: &mut dyn FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        // Lent to the reply, then given back.
        let contexts = ServiceContextList(std::mem::take(&mut self.ri.reply_contexts));
        let w = self
            .reply
            .reply_with_contexts(self.out, status, &contexts, |w| {
                body(w).map_err(crate::giop::GiopError::from)
            });
        self.ri.reply_contexts = contexts.0;
        let w = w.map_err(Error::EncodeReply)?;
        let mut st = self.shared.state.lock().map_err(|_| poisoned())?;
        let written = write_outgoing(&mut st.stream, None, &w);
        st.leave();
        self.left_busy = true;
        drop(st);
        *self.out = crate::transport::recycle(w.into_buffer());
        written.map_err(send_failed)
    }

    /// The reply for an exception or forward raised by an interceptor or the POA.
    fn send_outcome(&mut self, e: &InterceptorError) -> Result<(), SystemException> {
        match e {
            InterceptorError::System(x) => {
                let body = x.to_body();
                self.write(crate::giop::ReplyStatus::SystemException, &mut |w| {
                    body.encode(w).map_err(to_marshal)
                })
            }
            InterceptorError::Forward(f) => {
                let ior = f.forward.ior().clone();
                self.write(crate::giop::ReplyStatus::LocationForward, &mut |w| {
                    ior.encode(w).map_err(to_marshal)
                })
            }
        }
    }
}

impl ReplySink for InterceptedSink<'_, '_> {
    fn wants_parameters(&self) -> bool {
        true
    }

    fn set_parameters(&mut self, arguments: Vec<Parameter>, result: Any) {
        self.ri.parameters = Some((arguments, result));
    }

    fn reply<'a>(
        &mut self,
        kind: ReplyKind,
        body: &mut dyn FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        // The servant's slots are the request's for the ending point.
        if !self.deferred {
            self.ri.slots = crate::interceptor::server::thread_slots(self.reg);
        }
        match kind {
            ReplyKind::NoException => {
                self.ri.reply_status = Some(ReplyStatus::Successful);
            }
            ReplyKind::UserException => {
                // The repository id leads the body: marshal it once aside to learn it.
                let mut scratch = CdrWriter::new(self.reply.version.context(self.reply.code_sets));
                body(&mut scratch).map_err(|e| {
                    SystemException::from(e).completed(crate::CompletionStatus::Yes)
                })?;
                let bytes = scratch.into_bytes();
                let mut r = CdrReader::new(
                    &bytes,
                    crate::cdr::ByteOrder::NATIVE,
                    self.reply.version.context(self.reply.code_sets),
                );
                self.ri.reply_status = Some(ReplyStatus::UserException);
                self.ri.exception_id = r.read_string().ok();
            }
        }
        self.ended = true;
        let n = self.reg.server.len();
        match end_chain(self.reg, self.ri, n) {
            None => {
                let status = match kind {
                    ReplyKind::NoException => crate::giop::ReplyStatus::NoException,
                    ReplyKind::UserException => crate::giop::ReplyStatus::UserException,
                };
                self.write(status, body)
            }
            Some(e) => self.send_outcome(&e),
        }
    }

    fn detach(&mut self) -> Option<Box<dyn DeferredReplySink>> {
        let shared = self.shared.me.upgrade()?;
        // The ending point runs when the reply is given; the connection stays busy until.
        self.left_busy = true;
        self.ended = true;
        let mut ri = crate::interceptor::server::taken(self.ri);
        ri.slots = crate::interceptor::server::thread_slots(self.reg);
        Some(Box::new(DeferredInterceptedReply {
            shared,
            reply: self.reply,
            reg: self.reg.clone(),
            ri,
        }))
    }
}

/// A deferred reply (AMH) of an intercepted request: the ending point runs when it is given.
struct DeferredInterceptedReply {
    shared: Arc<ConnectionShared>,
    reply: ReplyContext,
    reg: Arc<Registered>,
    ri: ServerRequestInfo<'static>,
}

impl DeferredInterceptedReply {
    fn sink<'c>(&'c mut self, out: &'c mut Vec<u8>) -> InterceptedSink<'c, 'static> {
        InterceptedSink {
            shared: &self.shared,
            out,
            reply: self.reply,
            reg: &self.reg,
            ri: &mut self.ri,
            left_busy: false,
            ended: false,
            deferred: true,
        }
    }
}

impl DeferredReplySink for DeferredInterceptedReply {
    fn reply<'a>(
        &mut self,
        kind: ReplyKind,
        body: &mut dyn FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        // Not the connection thread's buffer: that one serves later requests meanwhile.
        let mut out = Vec::new();
        let shared = self.shared.clone();
        let mut sink = self.sink(&mut out);
        let mut sent = ReplySink::reply(&mut sink, kind, body);
        if let Err(e) = &sent {
            if !sink.left_busy {
                // The body could not be encoded: the client still gets an answer.
                sent = sink.send_outcome(&InterceptorError::System(e.clone()));
            }
        }
        if !sink.left_busy {
            end(&shared);
        }
        sent
    }

    fn system_exception(&mut self, e: SystemException) -> Result<(), SystemException> {
        let mut out = Vec::new();
        let shared = self.shared.clone();
        let mut sink = self.sink(&mut out);
        let outcome = InterceptorError::System(e);
        apply(sink.ri, &outcome);
        let n = sink.reg.server.len();
        let outcome = end_chain(sink.reg, sink.ri, n).unwrap_or(outcome);
        let sent = if sink.reply.response_expected {
            sink.send_outcome(&outcome)
        } else {
            Ok(())
        };
        if !sink.left_busy {
            end(&shared);
        }
        sent
    }
}
