//! The client's interception points around the requests of one call (out of line: a call
//! without client interceptors never comes here).

use std::borrow::Cow;
use std::cell::Cell;

use crate::cdr::{CdrContext, CdrWriter, CodeSets};
use crate::client::invoker::{encode_failed, request_failed, Hooks};
use crate::client::IiopInvoker;
use crate::giop::connection::{
    ConnectionError, Event, GiopConnection, Outgoing, RequestError, RequestStart,
};
use crate::giop::message::Body;
use crate::giop::{Ior, ReplyHeader, ServiceContextList, TargetAddress, Version};
use crate::object::{DecodeReply, EncodeArgs, ReplyBody};
use crate::transport::Stream;
use crate::SystemException;

use super::current::Slots;
use super::info::{Again, ClientRequestInfo, Point, ReplyStatus};
use super::params::OperationSignature;
use super::{ClientRequestInterceptor, InterceptorError, Registered};

thread_local! {
    /// ForwardRequests raised by interceptors followed by this thread's call in progress.
    static FORWARD_HOPS: Cell<u32> = const { Cell::new(0) };
}

/// The state of one intercepted call.
pub(crate) struct PiHooks<'r> {
    reg: &'r Registered,
    /// The reference's invoker: its requests' infos borrow its IOR.
    invoker: &'r IiopInvoker,
    slots: Slots,
    operation: &'r str,
    response_expected: bool,
    /// The request on the wire whose ending point is due.
    current: Option<ClientRequestInfo<'r>>,
    /// Whether any request of the call reached its starting point.
    started: bool,
    /// What an interceptor raised that ends the call.
    raised: Option<InterceptorError>,
    /// The operation's TypeCodes, if the caller gave them, and the arguments' marshalling
    /// again for interceptors that ask for them as `Any`s.
    signature: Option<&'r dyn OperationSignature>,
    encode_again: Option<Again<'r>>,
}

/// The invoker of references made while client request interceptors are registered: an
/// IIOP invoker whose calls run them.
pub(crate) struct InterceptedInvoker {
    iiop: IiopInvoker,
    reg: std::sync::Arc<Registered>,
}

impl InterceptedInvoker {
    pub(crate) fn new(iiop: IiopInvoker, reg: std::sync::Arc<Registered>) -> Self {
        InterceptedInvoker { iiop, reg }
    }
}

impl crate::object::Invoker for InterceptedInvoker {
    fn invoke<'a>(
        &self,
        _object_key: &[u8],
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
    ) -> Result<(), SystemException> {
        let deadline = self
            .iiop
            .effective_timeout()
            .map(|t| std::time::Instant::now() + t);
        invoke_intercepted(
            &self.iiop, &self.reg, operation, None, encode, decode, deadline,
        )
    }

    fn invoke_described<'a>(
        &self,
        _object_key: &[u8],
        operation: &str,
        signature: &dyn OperationSignature,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
    ) -> Result<(), SystemException> {
        let deadline = self
            .iiop
            .effective_timeout()
            .map(|t| std::time::Instant::now() + t);
        invoke_intercepted(
            &self.iiop,
            &self.reg,
            operation,
            Some(signature),
            encode,
            decode,
            deadline,
        )
    }
}

/// A call through `invoker` with the client request interceptors `reg`.
pub(crate) fn invoke_intercepted(
    invoker: &IiopInvoker,
    reg: &Registered,
    operation: &str,
    signature: Option<&dyn OperationSignature>,
    encode: &EncodeArgs<'_, '_>,
    mut decode: Option<&mut DecodeReply<'_>>,
    deadline: Option<std::time::Instant>,
) -> Result<(), SystemException> {
    // Only run if an interceptor asks for the arguments.
    let again = |ctx: CdrContext| -> crate::cdr::Result<Vec<u8>> {
        let mut w = CdrWriter::new(ctx);
        encode(&mut w)?;
        Ok(w.into_bytes())
    };
    let mut hooks = PiHooks {
        reg,
        invoker,
        slots: Slots::of_thread(reg.slots),
        operation,
        response_expected: decode.is_some(),
        current: None,
        started: false,
        raised: None,
        signature,
        encode_again: signature.map(|_| Again(&again)),
    };
    let mut exception_id: Option<String> = None;
    let result = match decode.as_deref_mut() {
        Some(d) => {
            let mut wrapped = |body: ReplyBody<'_, '_>| {
                if let ReplyBody::UserException(id, _) = &body {
                    exception_id = Some((*id).to_owned());
                }
                d(body)
            };
            invoker.call(&mut hooks, operation, encode, Some(&mut wrapped), deadline)
        }
        None => invoker.call(&mut hooks, operation, encode, None, deadline),
    };
    match hooks.finish(invoker, result, exception_id) {
        Ok(()) => Ok(()),
        Err(InterceptorError::System(e)) => Err(e),
        Err(InterceptorError::Forward(f)) => {
            let limit = invoker.forward_limit();
            let hops = FORWARD_HOPS.with(Cell::get);
            if hops >= limit {
                return Err(crate::Error::ForwardLimit { limit }.into());
            }
            FORWARD_HOPS.with(|h| h.set(hops + 1));
            let r = f
                .forward
                .send_described(operation, signature, encode, decode);
            FORWARD_HOPS.with(|h| h.set(hops));
            r
        }
    }
}

impl<'r> PiHooks<'r> {
    fn info(&self, invoker: &IiopInvoker, request_id: u32) -> ClientRequestInfo<'r> {
        // A forward target's invoker may go before the info does: its IOR is copied.
        let target = if std::ptr::eq(invoker, self.invoker) {
            Cow::Borrowed(self.invoker.ior())
        } else {
            Cow::Owned(invoker.ior().clone())
        };
        ClientRequestInfo {
            request_id,
            operation: self.operation,
            response_expected: self.response_expected,
            target,
            profile_index: invoker.profile_index(),
            request_contexts: Vec::new(),
            reply_contexts: Vec::new(),
            reply_status: None,
            exception: None,
            exception_id: None,
            forward: None,
            slots: self.slots.clone(),
            point: Point::Send,
            span: tracing::Span::none(),
            started: None,
            signature: self.signature,
            encode_again: self.encode_again,
            args_ctx: invoker.version.context(invoker.code_sets),
            reply_body: None,
        }
    }

    /// Opens the request's span, if requests are traced, and starts its clock for metrics.
    fn open_span(
        &self,
        invoker: &IiopInvoker,
        ri: &mut ClientRequestInfo,
        version: Option<Version>,
    ) {
        if self.reg.metrics {
            ri.started = Some(std::time::Instant::now());
        }
        if self.reg.spans && super::spans::wanted() {
            let address = invoker.address();
            ri.span = super::spans::request_span(
                true,
                self.operation,
                invoker.profile().object_key.as_bytes(),
                ri.request_id,
                version,
                &address.to_string(),
                crate::trace::transport_name(address.kind()),
            );
        }
    }

    /// The starting point: `send_request` on each interceptor in order. One that raises
    /// ends the request: the ones before it get the ending point, in reverse.
    fn start(&mut self, ri: &mut ClientRequestInfo) -> bool {
        self.started = true;
        for (k, i) in self.reg.client.iter().enumerate() {
            if let Err(e) = i.send_request(ri) {
                apply(ri, &e);
                self.raised = Some(end(&self.reg.client[..k], ri).unwrap_or(e));
                return false;
            }
        }
        true
    }

    /// The ending point of the request in progress, if any, for `result`.
    fn finish(
        &mut self,
        invoker: &IiopInvoker,
        result: Result<(), SystemException>,
        exception_id: Option<String>,
    ) -> Result<(), InterceptorError> {
        if let Some(e) = self.raised.take() {
            return Err(e);
        }
        let mut ri = match self.current.take() {
            Some(ri) => ri,
            // Failed before a request was started (no connection): the interceptors
            // still see the call, and its exception.
            None if !self.started && result.is_err() => {
                let mut ri = self.info(invoker, 0);
                self.open_span(invoker, &mut ri, None);
                if !self.start(&mut ri) {
                    return Err(self.raised.take().unwrap_or_else(unreachable_raise));
                }
                ri
            }
            None => return result.map_err(InterceptorError::System),
        };
        match &result {
            Ok(()) if !self.response_expected => {
                ri.point = Point::Other;
                ri.reply_status = Some(ReplyStatus::Successful);
            }
            Ok(()) if ri.reply_status == Some(ReplyStatus::UserException) => {
                ri.point = Point::Exception;
                ri.exception_id = exception_id;
            }
            Ok(()) => {
                ri.point = Point::Reply;
                ri.reply_status = Some(ReplyStatus::Successful);
            }
            Err(e) => apply(&mut ri, &InterceptorError::System(e.clone())),
        }
        match end(&self.reg.client, &mut ri) {
            Some(e) => Err(e),
            None => result.map_err(InterceptorError::System),
        }
    }
}

/// Stands for what an interceptor raised in the starting point (kept in the hooks, and
/// what the call ends with).
#[cold]
fn replaced() -> SystemException {
    crate::Error::NoReply.into()
}

/// A starting point that raised always leaves what it raised.
#[cold]
fn unreachable_raise() -> InterceptorError {
    InterceptorError::System(crate::Error::NoReply.into())
}

/// Makes `ri` describe the outcome `e` (an exception, or a forward).
fn apply(ri: &mut ClientRequestInfo, e: &InterceptorError) {
    match e {
        InterceptorError::System(x) => {
            ri.point = Point::Exception;
            ri.reply_status = Some(ReplyStatus::SystemException);
            ri.exception = Some(x.clone());
            ri.exception_id = None;
            ri.forward = None;
        }
        InterceptorError::Forward(f) => {
            ri.point = Point::Other;
            ri.reply_status = Some(ReplyStatus::LocationForward);
            ri.exception = None;
            ri.exception_id = None;
            ri.forward = Some(f.forward.ior().clone());
        }
    }
}

/// The ending point on `chain`, in reverse; what is raised replaces the outcome for the
/// interceptors after it. Returns the last thing raised.
fn end(
    chain: &[std::sync::Arc<dyn ClientRequestInterceptor>],
    ri: &mut ClientRequestInfo,
) -> Option<InterceptorError> {
    let mut raised = None;
    for i in chain.iter().rev() {
        let r = match ri.point {
            Point::Reply => i.receive_reply(ri).map_err(InterceptorError::System),
            Point::Exception => i.receive_exception(ri),
            Point::Other | Point::Send => i.receive_other(ri),
        };
        if let Err(e) = r {
            apply(ri, &e);
            raised = Some(e);
        }
    }
    raised
}

/// The intercepted call: [`IiopInvoker::call`]'s attempt with the interception points, its
/// receive and send functions reached through their outlined variants (the plain path's
/// instance keeps them inlined).
impl<'r> Hooks for &mut PiHooks<'r> {
    const INTERCEPTS: bool = true;

    type Again<'b>
        = &'b mut PiHooks<'r>
    where
        Self: 'b;

    fn again(&mut self) -> &mut PiHooks<'r> {
        self
    }

    /// Ends the request before this one (forwarded or resent), then runs the starting
    /// point and starts the request with the contexts the interceptors added.
    #[cold]
    #[inline(never)]
    fn request<'a>(
        &mut self,
        invoker: &IiopInvoker,
        giop: &mut GiopConnection,
        out: &mut Vec<u8>,
        target: &TargetAddress,
        operation: &str,
        response_expected: bool,
        encode: &EncodeArgs<'_, 'a>,
    ) -> Result<(u32, Outgoing<'a>), SystemException> {
        let version = invoker.version;
        let request_id = giop.reserve_request_id();
        let contexts = self.begin(invoker, request_id, version)?;
        let start = RequestStart {
            contexts: &contexts,
            request_id: Some(request_id),
            ..RequestStart::new(
                version,
                invoker.code_sets,
                target,
                operation,
                response_expected,
            )
        };
        let req = giop.start_request(std::mem::take(out), &start);
        self.sent(contexts);
        let mut req = req.map_err(encode_failed)?;
        let request_id = req.request_id();
        if let Err(e) = encode(req.body()) {
            *out = req.abandon();
            return Err(request_failed(RequestError::Arguments(e)));
        }
        let w = giop.finish_request(req).map_err(encode_failed)?;
        Ok((request_id, w))
    }

    /// Ends the request before this one (forwarded or resent), then runs the starting point
    /// of request `request_id`. Returns the contexts the interceptors added, lent to the
    /// request's header (give them back with [`Hooks::sent`]).
    #[cold]
    #[inline(never)]
    fn begin(
        &mut self,
        invoker: &IiopInvoker,
        request_id: u32,
        version: Version,
    ) -> Result<ServiceContextList, SystemException> {
        // The request before this one was forwarded or is resent: its ending point.
        if let Some(mut prev) = self.current.take() {
            prev.point = Point::Other;
            if prev.reply_status.is_none() {
                prev.reply_status = Some(ReplyStatus::TransportRetry);
            }
            if let Some(e) = end(&self.reg.client, &mut prev) {
                self.raised = Some(e);
                return Err(replaced());
            }
        }
        let mut ri = self.info(invoker, request_id);
        self.open_span(invoker, &mut ri, Some(version));
        if !self.start(&mut ri) {
            return Err(replaced());
        }
        let contexts = ServiceContextList(std::mem::take(&mut ri.request_contexts));
        ri.point = Point::Other;
        self.current = Some(ri);
        Ok(contexts)
    }

    /// Gives back the contexts [`Hooks::begin`] lent: the ending points read them too.
    fn sent(&mut self, contexts: ServiceContextList) {
        if let Some(ri) = self.current.as_mut() {
            ri.request_contexts = contexts.0;
        }
    }

    /// A Reply to the request arrived (before its body is decoded).
    #[cold]
    #[inline(never)]
    fn reply(&mut self, header: &ReplyHeader, body: Body<'_>, code_sets: CodeSets) {
        use crate::giop::ReplyStatus as Wire;
        let Some(ri) = self.current.as_mut() else {
            return;
        };
        ri.reply_contexts = header.service_context.0.clone();
        if self.signature.is_some() && header.reply_status == Wire::NoException {
            // For the result and out arguments, if an interceptor asks.
            ri.reply_body = Some((body.to_owned_body(), code_sets));
        }
        ri.reply_status = Some(match header.reply_status {
            Wire::NoException => ReplyStatus::Successful,
            Wire::UserException => ReplyStatus::UserException,
            Wire::SystemException => ReplyStatus::SystemException,
            Wire::LocationForward | Wire::LocationForwardPerm => {
                ri.forward = Ior::decode(&mut body.reader(code_sets)).ok();
                ReplyStatus::LocationForward
            }
            Wire::NeedsAddressingMode => ReplyStatus::TransportRetry,
        });
    }

    fn write(stream: &mut Stream, batch: Option<&[u8]>, w: &Outgoing<'_>) -> std::io::Result<()> {
        crate::transport::write_outgoing_outlined(stream, batch, w)
    }

    fn read_buf(giop: &mut GiopConnection) -> &mut [u8] {
        giop.read_buf_outlined()
    }

    fn poll_reply(giop: &mut GiopConnection, _: u32) -> Result<Option<Event<'_>>, ConnectionError> {
        giop.poll_event_outlined()
    }
}
