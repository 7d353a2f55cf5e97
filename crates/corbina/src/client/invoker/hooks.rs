//! What differs between the call paths that share [`IiopInvoker::call`](super::IiopInvoker)'s
//! attempt: how a request is started and what is told of its reply. The attempt is generic
//! over [`Hooks`] and monomorphised: the plain path runs with the zero-sized [`NoHooks`]
//! (passed by value: no argument at all; every hook inlined to nothing, the receive and
//! send functions inlined at their one hot call site), portable interceptors with
//! `&mut PiHooks` (crate::interceptor::client), which
//! reaches the same functions through their outlined variants so that the plain path's
//! instance stays the only call site the compiler inlines them into.

use crate::cdr::CodeSets;
use crate::giop::connection::{ConnectionError, Event, GiopConnection, Outgoing};
use crate::giop::message::Body;
use crate::giop::{ReplyHeader, ServiceContextList, TargetAddress, Version};
use crate::object::EncodeArgs;
use crate::transport::Stream;
use crate::SystemException;

use super::{request_failed, IiopInvoker};

/// The steps of an attempt that a kind of call makes its own way.
pub(crate) trait Hooks {
    /// Whether the hooks see each request: oneways are then written at once (never
    /// buffered), and a request over a bidirectional connection is started on a reserved
    /// id, after [`Hooks::begin`].
    const INTERCEPTS: bool;

    /// The hooks lent to one attempt (the same type, for a shorter time).
    type Again<'b>: Hooks
    where
        Self: 'b;

    /// Lends the hooks to one attempt.
    fn again(&mut self) -> Self::Again<'_>;

    /// Starts a request on a strand's connection and marshals it: its id and the message.
    #[allow(clippy::too_many_arguments)]
    fn request<'a>(
        &mut self,
        invoker: &IiopInvoker,
        giop: &mut GiopConnection,
        out: &mut Vec<u8>,
        target: &TargetAddress,
        operation: &str,
        response_expected: bool,
        encode: &EncodeArgs<'_, 'a>,
    ) -> Result<(u32, Outgoing<'a>), SystemException>;

    /// The starting point of request `request_id` (reserved on a bidirectional connection):
    /// the contexts to add to its header, lent until [`Hooks::sent`].
    fn begin(
        &mut self,
        invoker: &IiopInvoker,
        request_id: u32,
        version: Version,
    ) -> Result<ServiceContextList, SystemException>;

    /// Gives back the contexts [`Hooks::begin`] lent.
    fn sent(&mut self, contexts: ServiceContextList);

    /// A Reply to the request arrived, before its body is decoded.
    fn reply(&mut self, header: &ReplyHeader, body: Body<'_>, code_sets: CodeSets);

    /// Writes a request (after `batch`, buffered oneways) on a strand.
    fn write(stream: &mut Stream, batch: Option<&[u8]>, w: &Outgoing<'_>) -> std::io::Result<()>;

    /// [`GiopConnection::read_buf`], inlined or not.
    fn read_buf(giop: &mut GiopConnection) -> &mut [u8];

    /// [`GiopConnection::poll_reply`] (the plain path, inlined) or
    /// [`GiopConnection::poll_event`] (outlined).
    fn poll_reply(
        giop: &mut GiopConnection,
        request_id: u32,
    ) -> Result<Option<Event<'_>>, ConnectionError>;
}

/// The plain call: no hooks, nothing paid for them.
#[derive(Clone, Copy)]
pub(crate) struct NoHooks;

impl Hooks for NoHooks {
    const INTERCEPTS: bool = false;

    type Again<'b> = NoHooks;

    #[inline(always)]
    fn again(&mut self) -> NoHooks {
        NoHooks
    }

    #[inline(always)]
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
        // The connection gives the request its id and, on its first request, the CODE_SETS
        // context; it fixes the code sets the arguments are marshalled with. Marshalled in
        // one frame: the strand's buffer, the header, the arguments.
        giop.request(
            out,
            invoker.version,
            invoker.code_sets,
            target,
            operation,
            response_expected,
            encode,
        )
        .map_err(request_failed)
    }

    #[inline(always)]
    fn begin(
        &mut self,
        _: &IiopInvoker,
        _: u32,
        _: Version,
    ) -> Result<ServiceContextList, SystemException> {
        Ok(ServiceContextList::default())
    }

    #[inline(always)]
    fn sent(&mut self, _: ServiceContextList) {}

    #[inline(always)]
    fn reply(&mut self, _: &ReplyHeader, _: Body<'_>, _: CodeSets) {}

    #[inline(always)]
    fn write(stream: &mut Stream, batch: Option<&[u8]>, w: &Outgoing<'_>) -> std::io::Result<()> {
        crate::transport::write_outgoing(stream, batch, w)
    }

    #[inline(always)]
    fn read_buf(giop: &mut GiopConnection) -> &mut [u8] {
        giop.read_buf()
    }

    #[inline(always)]
    fn poll_reply(
        giop: &mut GiopConnection,
        request_id: u32,
    ) -> Result<Option<Event<'_>>, ConnectionError> {
        giop.poll_reply(request_id)
    }
}
