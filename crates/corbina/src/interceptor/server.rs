//! The server's interception points (driven by `server::connection::intercepted`).

use std::borrow::Cow;
use std::cell::OnceCell;

use super::current::Slots;
pub(crate) use super::info::ServerPoint;
use super::info::{ReplyStatus, ServerRequestInfo};
use super::InterceptorError;
pub(crate) use super::Registered;

/// A request scope's slots: empty ones.
pub(crate) fn slots(reg: &Registered) -> Slots {
    Slots::new(reg.slots)
}

/// The thread's slots (the servant's), as a request scope.
pub(crate) fn thread_slots(reg: &Registered) -> Slots {
    Slots::of_thread(reg.slots)
}

/// Takes the request's info out of `ri` (a deferred reply carries it), leaving an empty one.
pub(crate) fn taken(ri: &mut ServerRequestInfo<'_>) -> ServerRequestInfo<'static> {
    let empty = ServerRequestInfo {
        request_id: ri.request_id,
        operation: Cow::Borrowed(""),
        response_expected: ri.response_expected,
        object_key: Cow::Borrowed(&[]),
        received: None,
        request_contexts: OnceCell::new(),
        reply_contexts: Vec::new(),
        reply_status: None,
        exception: None,
        exception_id: None,
        forward: None,
        slots: Slots::new(0),
        span: tracing::Span::none(),
        started: None,
        point: ServerPoint::Ending,
        parameters: None,
    };
    std::mem::replace(ri, empty).into_owned()
}

/// Makes `ri` describe the outcome `e`.
pub(crate) fn apply(ri: &mut ServerRequestInfo, e: &InterceptorError) {
    match e {
        InterceptorError::System(x) => {
            ri.reply_status = Some(ReplyStatus::SystemException);
            ri.exception = Some(x.clone());
            ri.exception_id = None;
            ri.forward = None;
        }
        InterceptorError::Forward(f) => {
            ri.reply_status = Some(ReplyStatus::LocationForward);
            ri.exception = None;
            ri.exception_id = None;
            ri.forward = Some(f.forward.ior().clone());
        }
    }
}

/// `receive_request_service_contexts` on each interceptor, then `receive_request` on each.
/// One that raises ends the request: the interceptors whose starting point completed get
/// the ending point (in reverse), and the final outcome is returned (the ending point has
/// run then).
pub(crate) fn start_chain(
    reg: &Registered,
    ri: &mut ServerRequestInfo,
) -> Option<InterceptorError> {
    ri.point = ServerPoint::ServiceContexts;
    for (k, i) in reg.server.iter().enumerate() {
        if let Err(e) = i.receive_request_service_contexts(ri) {
            apply(ri, &e);
            return Some(end_chain(reg, ri, k).unwrap_or(e));
        }
    }
    ri.point = ServerPoint::Request;
    for i in &reg.server {
        if let Err(e) = i.receive_request(ri) {
            apply(ri, &e);
            return Some(end_chain(reg, ri, reg.server.len()).unwrap_or(e));
        }
    }
    None
}

/// The ending point (by `ri`'s reply status) on the first `n` interceptors, in reverse;
/// what one raises replaces the outcome for the ones after it. Returns the last raised.
pub(crate) fn end_chain(
    reg: &Registered,
    ri: &mut ServerRequestInfo,
    n: usize,
) -> Option<InterceptorError> {
    let mut raised = None;
    ri.point = ServerPoint::Ending;
    for i in reg.server[..n].iter().rev() {
        let r = match ri.reply_status {
            Some(ReplyStatus::Successful) | None => {
                i.send_reply(ri).map_err(InterceptorError::System)
            }
            Some(ReplyStatus::SystemException | ReplyStatus::UserException) => i.send_exception(ri),
            Some(ReplyStatus::LocationForward | ReplyStatus::TransportRetry) => i.send_other(ri),
        };
        if let Err(e) = r {
            apply(ri, &e);
            raised = Some(e);
        }
    }
    raised
}
