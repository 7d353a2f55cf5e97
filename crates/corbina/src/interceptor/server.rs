//! The server's interception points (driven by `server::connection::intercepted`).

use super::current::Slots;
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
    for (k, i) in reg.server.iter().enumerate() {
        if let Err(e) = i.receive_request_service_contexts(ri) {
            apply(ri, &e);
            return Some(end_chain(reg, ri, k).unwrap_or(e));
        }
    }
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
