//! A request run with server request interceptors (out of line: a server without them
//! never comes here). The same steps as [`super::serve_request`], with the interception
//! points around them and the reply's service contexts.

use std::sync::Arc;

use super::{begin, end, poisoned, send_failed, to_marshal, ConnectionShared};
use crate::cdr::{CdrReader, CdrWriter};
use crate::giop::connection::ReplyContext;
use crate::giop::{RequestHeaderView, ServiceContext, ServiceContextList};
use crate::interceptor::server::{apply, end_chain, start_chain, Registered};
use crate::interceptor::{InterceptorError, ReplyStatus, ServerRequestInfo};
use crate::poa::DispatchError;
use crate::servant::{ReplyKind, ReplySink, ServerRequest};
use crate::server::RequestDispatcher;
use crate::transport::write_outgoing;
use crate::{Error, SystemException};

/// Runs one request through the interceptors `reg`; false when the connection must close.
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn serve_intercepted(
    shared: &ConnectionShared,
    dispatcher: &dyn RequestDispatcher,
    out: &mut Vec<u8>,
    reg: &Arc<Registered>,
    header: &RequestHeaderView<'_>,
    key: Option<&[u8]>,
    args: CdrReader<'_>,
    reply: ReplyContext,
) -> bool {
    if !begin(shared, reply.version) {
        return false;
    }
    let mut ri = ServerRequestInfo {
        request_id: header.request_id,
        operation: header.operation.to_string(),
        response_expected: reply.response_expected,
        object_key: key.unwrap_or_default().to_vec(),
        request_contexts: header
            .service_context
            .iter()
            .map(|(context_id, data)| ServiceContext {
                context_id,
                context_data: data.to_vec(),
            })
            .collect(),
        reply_contexts: Vec::new(),
        reply_status: None,
        exception: None,
        exception_id: None,
        forward: None,
        slots: crate::interceptor::server::slots(reg),
    };
    let mut sink = InterceptedSink {
        shared,
        out,
        reply,
        reg,
        ri: &mut ri,
        left_busy: false,
        ended: false,
    };
    // Starting and intermediate points; one that raises ends the request there.
    let ok = if let Some(e) = start_chain(reg, sink.ri) {
        sink.ended = true;
        !reply.response_expected || sink.send_outcome(&e).is_ok()
    } else {
        let saved = sink.ri.slots.clone().enter();
        let mut req =
            ServerRequest::new(&header.operation, args, reply.response_expected, &mut sink);
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

/// Writes the reply of an intercepted request, after its ending point.
struct InterceptedSink<'c> {
    shared: &'c ConnectionShared,
    out: &'c mut Vec<u8>,
    reply: ReplyContext,
    reg: &'c Registered,
    ri: &'c mut ServerRequestInfo,
    left_busy: bool,
    /// The ending point ran.
    ended: bool,
}

impl InterceptedSink<'_> {
    /// Writes a reply with the request's reply contexts.
    fn write<'a>(
        &mut self,
        status: crate::giop::ReplyStatus,
        body: &mut dyn FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        let contexts = ServiceContextList(self.ri.reply_contexts.clone());
        let w = self
            .reply
            .reply_with_contexts(self.out, status, &contexts, |w| {
                body(w).map_err(crate::giop::GiopError::from)
            })
            .map_err(Error::EncodeReply)?;
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

impl ReplySink for InterceptedSink<'_> {
    fn reply<'a>(
        &mut self,
        kind: ReplyKind,
        body: &mut dyn FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        // The servant's slots are the request's for the ending point.
        self.ri.slots = crate::interceptor::server::thread_slots(self.reg);
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
}
