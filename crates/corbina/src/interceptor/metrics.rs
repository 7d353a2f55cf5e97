//! The built-in request interceptors behind request metrics ([`crate::trace`], *Metrics*):
//! at each request's ending point, a count, an error count and its duration go to the
//! `metrics` facade. Registered only when asked for.

use std::sync::Arc;

use super::info::{ClientRequestInfo, ReplyStatus, ServerRequestInfo};
use super::{
    ClientRequestInterceptor, Interceptor, InterceptorError, OrbInitInfo, OrbInitializer,
    ServerRequestInterceptor,
};
use crate::SystemException;

/// Registers [`RequestMetrics`] on both sides.
pub(crate) struct MetricsInitializer;

impl OrbInitializer for MetricsInitializer {
    fn pre_init(&self, info: &mut OrbInitInfo) {
        let m = Arc::new(RequestMetrics);
        // Registered before any application interceptor: the name is free.
        let _ = info.add_client_request_interceptor(m.clone());
        let _ = info.add_server_request_interceptor(m);
        info.metrics = true;
    }
}

/// Counts and times requests.
pub(crate) struct RequestMetrics;

impl Interceptor for RequestMetrics {
    fn name(&self) -> &str {
        "corbina.RequestMetrics"
    }
}

/// What one request's end records.
struct Ended<'a> {
    side: &'static str,
    operation: &'a str,
    status: Option<ReplyStatus>,
    response_expected: bool,
    exception: Option<String>,
    started: Option<std::time::Instant>,
}

fn record(e: Ended<'_>) {
    let outcome = match e.status {
        _ if !e.response_expected && e.exception.is_none() => "ONEWAY",
        Some(ReplyStatus::Successful) | None => "SUCCESSFUL",
        Some(ReplyStatus::SystemException) => "SYSTEM_EXCEPTION",
        Some(ReplyStatus::UserException) => "USER_EXCEPTION",
        Some(ReplyStatus::LocationForward) => "LOCATION_FORWARD",
        Some(ReplyStatus::TransportRetry) => "TRANSPORT_RETRY",
    };
    let operation = e.operation.to_owned();
    metrics::counter!("corbina_requests_total", "side" => e.side,
        "operation" => operation.clone(), "outcome" => outcome)
    .increment(1);
    if let Some(exception) = e.exception {
        metrics::counter!("corbina_request_errors_total", "side" => e.side,
            "operation" => operation.clone(), "exception" => exception)
        .increment(1);
    }
    if let Some(t) = e.started {
        metrics::histogram!("corbina_request_duration_seconds", "side" => e.side,
            "operation" => operation)
        .record(t.elapsed().as_secs_f64());
    }
}

fn exception(system: Option<&SystemException>, user: Option<&str>) -> Option<String> {
    match (system, user) {
        (Some(e), _) => Some(e.kind.repository_id()),
        (None, Some(id)) => Some(id.to_owned()),
        (None, None) => None,
    }
}

impl RequestMetrics {
    fn client(&self, ri: &ClientRequestInfo) {
        record(Ended {
            side: "client",
            operation: ri.operation,
            status: ri.reply_status,
            response_expected: ri.response_expected,
            exception: exception(ri.exception.as_ref(), ri.exception_id.as_deref()),
            started: ri.started,
        });
    }

    fn server(&self, ri: &ServerRequestInfo) {
        record(Ended {
            side: "server",
            operation: &ri.operation,
            status: ri.reply_status,
            response_expected: ri.response_expected,
            exception: exception(ri.exception.as_ref(), ri.exception_id.as_deref()),
            started: ri.started,
        });
    }
}

impl ClientRequestInterceptor for RequestMetrics {
    fn receive_reply(&self, ri: &mut ClientRequestInfo) -> Result<(), SystemException> {
        self.client(ri);
        Ok(())
    }
    fn receive_exception(&self, ri: &mut ClientRequestInfo) -> Result<(), InterceptorError> {
        self.client(ri);
        Ok(())
    }
    fn receive_other(&self, ri: &mut ClientRequestInfo) -> Result<(), InterceptorError> {
        self.client(ri);
        Ok(())
    }
}

impl ServerRequestInterceptor for RequestMetrics {
    fn send_reply(&self, ri: &mut ServerRequestInfo) -> Result<(), SystemException> {
        self.server(ri);
        Ok(())
    }
    fn send_exception(&self, ri: &mut ServerRequestInfo) -> Result<(), InterceptorError> {
        self.server(ri);
        Ok(())
    }
    fn send_other(&self, ri: &mut ServerRequestInfo) -> Result<(), InterceptorError> {
        self.server(ri);
        Ok(())
    }
}
