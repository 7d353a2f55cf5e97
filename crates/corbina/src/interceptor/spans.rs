//! The built-in request interceptors behind [`crate::trace`]: they end the `tracing` span
//! the ORB opened for each request (`corbina.client`, `corbina.server`), recording its
//! outcome. Registered first (so their ending point runs last and sees the final outcome),
//! and only when request spans are asked for: otherwise calls take the uninstrumented path.

use std::sync::Arc;

use tracing::field::Empty;

use super::info::{ClientRequestInfo, ReplyStatus, ServerRequestInfo};
use super::{
    ClientRequestInterceptor, Interceptor, InterceptorError, OrbInitInfo, OrbInitializer,
    ServerRequestInterceptor,
};
use crate::giop::Version;
use crate::SystemException;

/// Where request spans and events go.
pub(crate) const TARGET: &str = "corbina::request";

/// Registers [`RequestSpans`] on both sides.
pub(crate) struct SpansInitializer;

impl OrbInitializer for SpansInitializer {
    fn pre_init(&self, info: &mut OrbInitInfo) {
        let spans = Arc::new(RequestSpans);
        // The names are ours, registered before any application interceptor: no clash.
        let _ = info.add_client_request_interceptor(spans.clone());
        let _ = info.add_server_request_interceptor(spans);
        info.spans = true;
    }
}

/// Ends request spans.
pub(crate) struct RequestSpans;

impl Interceptor for RequestSpans {
    fn name(&self) -> &str {
        "corbina.RequestSpans"
    }
}

/// A request's span (its outcome fields empty until it ends).
/// Whether a request span would be recorded (a subscriber wants `corbina::request` at
/// INFO): without one, the span's fields (the peer's address) are not even formatted.
pub(crate) fn wanted() -> bool {
    tracing::enabled!(target: TARGET, tracing::Level::INFO)
}

pub(crate) fn request_span(
    client: bool,
    operation: &str,
    object_key: &[u8],
    request_id: u32,
    version: Option<Version>,
    peer: &str,
    transport: &str,
) -> tracing::Span {
    let key = crate::trace::ObjectKey(object_key);
    let version = version.map(tracing::field::display);
    if client {
        tracing::info_span!(target: TARGET, "corbina.client", operation, object_key = %key,
            request_id, giop_version = version, peer, transport,
            outcome = Empty, exception = Empty, minor = Empty)
    } else {
        tracing::info_span!(target: TARGET, "corbina.server", operation, object_key = %key,
            request_id, giop_version = version, peer, transport,
            outcome = Empty, exception = Empty, minor = Empty)
    }
}

/// Records the outcome on `span` and logs the request's end inside it.
fn end(
    span: &tracing::Span,
    status: Option<ReplyStatus>,
    response_expected: bool,
    exception: Option<&SystemException>,
    exception_id: Option<&str>,
) {
    let outcome = match status {
        _ if !response_expected && exception.is_none() => "ONEWAY",
        Some(ReplyStatus::Successful) | None => "SUCCESSFUL",
        Some(ReplyStatus::SystemException) => "SYSTEM_EXCEPTION",
        Some(ReplyStatus::UserException) => "USER_EXCEPTION",
        Some(ReplyStatus::LocationForward) => "LOCATION_FORWARD",
        Some(ReplyStatus::TransportRetry) => "TRANSPORT_RETRY",
    };
    span.record("outcome", outcome);
    match (exception, exception_id) {
        (Some(e), _) => {
            let id = e.kind.repository_id();
            span.record("exception", id.as_str());
            span.record("minor", tracing::field::display(Minor(e.minor)));
            tracing::info!(target: TARGET, parent: span, outcome, exception = %id,
                minor = %Minor(e.minor), "request ended");
        }
        (None, Some(id)) => {
            span.record("exception", id);
            tracing::info!(target: TARGET, parent: span, outcome, exception = id, "request ended");
        }
        (None, None) => tracing::info!(target: TARGET, parent: span, outcome, "request ended"),
    }
}

impl ClientRequestInterceptor for RequestSpans {
    fn receive_reply(&self, ri: &mut ClientRequestInfo) -> Result<(), SystemException> {
        self.client_end(ri);
        Ok(())
    }
    fn receive_exception(&self, ri: &mut ClientRequestInfo) -> Result<(), InterceptorError> {
        self.client_end(ri);
        Ok(())
    }
    fn receive_other(&self, ri: &mut ClientRequestInfo) -> Result<(), InterceptorError> {
        if ri.reply_status == Some(ReplyStatus::LocationForward) {
            if let Some(to) = &ri.forward {
                let to = to.type_id.as_str();
                tracing::debug!(target: TARGET, parent: &ri.span, type_id = to,
                    "request forwarded (LOCATION_FORWARD): sent again to the new target");
            }
        } else if ri.reply_status == Some(ReplyStatus::TransportRetry) {
            tracing::debug!(target: TARGET, parent: &ri.span,
                "request resent (the server closed the connection before reading it)");
        }
        self.client_end(ri);
        Ok(())
    }
}

impl RequestSpans {
    fn client_end(&self, ri: &mut ClientRequestInfo) {
        let span = std::mem::replace(&mut ri.span, tracing::Span::none());
        end(
            &span,
            ri.reply_status,
            ri.response_expected,
            ri.exception.as_ref(),
            ri.exception_id.as_deref(),
        );
    }

    fn server_end(&self, ri: &mut ServerRequestInfo) {
        let span = std::mem::replace(&mut ri.span, tracing::Span::none());
        end(
            &span,
            ri.reply_status,
            ri.response_expected,
            ri.exception.as_ref(),
            ri.exception_id.as_deref(),
        );
    }
}

impl ServerRequestInterceptor for RequestSpans {
    fn send_reply(&self, ri: &mut ServerRequestInfo) -> Result<(), SystemException> {
        self.server_end(ri);
        Ok(())
    }
    fn send_exception(&self, ri: &mut ServerRequestInfo) -> Result<(), InterceptorError> {
        self.server_end(ri);
        Ok(())
    }
    fn send_other(&self, ri: &mut ServerRequestInfo) -> Result<(), InterceptorError> {
        self.server_end(ri);
        Ok(())
    }
}

/// A minor code in hex, as ORBs document them (`0x4f4d0001`).
struct Minor(u32);

impl std::fmt::Display for Minor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minor_codes_print_in_hex() {
        assert_eq!(Minor(0x4f4d_0001).to_string(), "0x4f4d0001");
    }
}
