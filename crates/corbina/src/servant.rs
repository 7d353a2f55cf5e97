//! The server side of a call as generated skeletons see it: a [`Servant`] is dispatched a
//! [`ServerRequest`], reads its arguments from the request's body and answers through a
//! [`ReplySink`] that the transport supplies.

use crate::cdr::{CdrReader, CdrWriter};
use crate::{CompletionStatus, SystemException, SystemExceptionKind};

/// How a reply ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyKind {
    /// Normal completion: the body holds the return value then `out`/`inout` values.
    NoException,
    /// A user exception: the body holds its repository id then its members.
    UserException,
}

/// Where a reply goes: the connection's writer, or a buffer for collocated and test calls.
///
/// The sink creates the CDR writer (so the header and body share one buffer and alignment),
/// lets the skeleton fill in the body, and sends it before returning: values the body borrows
/// need live only for the call.
pub trait ReplySink {
    /// Writes and sends a reply whose body `body` encodes.
    fn reply<'a>(
        &mut self,
        kind: ReplyKind,
        body: &mut dyn FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException>;

    /// Hands the right to reply over to a sink that outlives the upcall (for
    /// [`ServerRequest::defer_reply`]); `None` where replies cannot be deferred.
    fn detach(&mut self) -> Option<Box<dyn DeferredReplySink>> {
        None
    }

    /// Whether the request's arguments and result as `Any`s are wanted (by server request
    /// interceptors): a servant that has them as `Any`s (the DSI) then gives them with
    /// [`ReplySink::set_parameters`] before replying.
    fn wants_parameters(&self) -> bool {
        false
    }

    /// The arguments (in order, with their modes) and result of the reply about to be given.
    fn set_parameters(
        &mut self,
        arguments: Vec<crate::interceptor::Parameter>,
        result: crate::Any,
    ) {
        let _ = (arguments, result);
    }
}

/// Where a deferred reply goes (a connection's writer): what a [`ReplySink`] hands over to a
/// [`ReplyHandle`].
pub trait DeferredReplySink: Send + 'static {
    /// Writes and sends the reply whose body `body` encodes.
    fn reply<'a>(
        &mut self,
        kind: ReplyKind,
        body: &mut dyn FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException>;

    /// Sends a system exception as the reply.
    fn system_exception(&mut self, e: SystemException) -> Result<(), SystemException>;
}

/// The right to answer a request later, from any thread or task (Asynchronous Method
/// Handling): what [`ServerRequest::defer_reply`] returns. The connection thread goes on
/// reading requests meanwhile; the request stays counted by its POA (deactivation with
/// `wait_for_completion`, `destroy` and an orderly close of the connection wait for the
/// reply). Dropping it without replying sends `INTERNAL` (the servant gave no reply), never
/// silence. For a oneway, replying does nothing.
pub struct ReplyHandle {
    sink: Option<Box<dyn DeferredReplySink>>,
    /// Released after the reply is written (fields drop after `Drop::drop`).
    _call: Option<crate::poa::DeferredCall>,
}

impl std::fmt::Debug for ReplyHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplyHandle")
            .field("response_expected", &self.sink.is_some())
            .finish_non_exhaustive()
    }
}

impl ReplyHandle {
    /// Sends a normal reply whose body `encode` writes.
    pub fn reply<'a>(
        mut self,
        mut encode: impl FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        match self.sink.take() {
            Some(mut s) => s.reply(ReplyKind::NoException, &mut encode),
            None => Ok(()),
        }
    }

    /// Sends a USER_EXCEPTION reply; `encode` writes the repository id and the members.
    pub fn reply_user_exception<'a>(
        mut self,
        mut encode: impl FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        match self.sink.take() {
            Some(mut s) => s.reply(ReplyKind::UserException, &mut encode),
            None => Ok(()),
        }
    }

    /// Sends a system exception as the reply.
    pub fn reply_system_exception(mut self, e: SystemException) -> Result<(), SystemException> {
        match self.sink.take() {
            Some(mut s) => s.system_exception(e),
            None => Ok(()),
        }
    }

    /// Whether the client waits for a reply (false for oneways).
    pub fn response_expected(&self) -> bool {
        self.sink.is_some()
    }
}

impl Drop for ReplyHandle {
    fn drop(&mut self) {
        if let Some(mut s) = self.sink.take() {
            let _ = s.system_exception(crate::Error::ReplyHandleDropped.into());
        }
    }
}

/// A request being dispatched to a servant.
pub struct ServerRequest<'b, 's> {
    operation: &'b str,
    args: CdrReader<'b>,
    response_expected: bool,
    sink: &'s mut dyn ReplySink,
    replied: bool,
}

impl<'b, 's> ServerRequest<'b, 's> {
    /// A request for `operation` whose arguments `args` reads; replies go to `sink`.
    pub fn new(
        operation: &'b str,
        args: CdrReader<'b>,
        response_expected: bool,
        sink: &'s mut dyn ReplySink,
    ) -> Self {
        ServerRequest {
            operation,
            args,
            response_expected,
            sink,
            replied: false,
        }
    }

    /// The operation name (`echo`, `_get_attr`, `_is_a`, …).
    pub fn operation(&self) -> &'b str {
        self.operation
    }

    /// Whether the client waits for a reply (false for oneways).
    pub fn response_expected(&self) -> bool {
        self.response_expected
    }

    /// The reader positioned at the first argument; skeletons read `in`/`inout` values here,
    /// borrowing large octet sequences straight from the receive buffer.
    pub fn arguments(&mut self) -> &mut CdrReader<'b> {
        &mut self.args
    }

    /// Checks that every argument byte was consumed: trailing bytes mean the client and
    /// server disagree on the signature.
    pub fn arguments_done(&self) -> Result<(), SystemException> {
        self.args.expect_end().map_err(SystemException::from)
    }

    /// Sends a normal reply whose body `encode` writes (nothing is sent for oneways).
    pub fn reply<'a>(
        &mut self,
        mut encode: impl FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        self.finish(ReplyKind::NoException, &mut encode)
    }

    /// Sends a USER_EXCEPTION reply; `encode` writes the repository id and the members.
    pub fn reply_user_exception<'a>(
        &mut self,
        mut encode: impl FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        self.finish(ReplyKind::UserException, &mut encode)
    }

    fn finish<'a>(
        &mut self,
        kind: ReplyKind,
        encode: &mut dyn FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        if self.replied {
            return Err(crate::Error::RepliedTwice.into());
        }
        self.replied = true;
        if !self.response_expected {
            return Ok(());
        }
        self.sink.reply(kind, encode)
    }

    /// Takes the right to reply out of the upcall (Asynchronous Method Handling): the
    /// upcall returns at once and the [`ReplyHandle`], `Send + 'static`, answers later from
    /// any thread or task. A collocated call dispatched in process waits for the handle's
    /// answer on its own thread. `NO_IMPLEMENT` where the request cannot outlive its upcall
    /// (a [`crate::ServantInvoker`]); `BAD_INV_ORDER` if a reply was sent already.
    pub fn defer_reply(&mut self) -> Result<ReplyHandle, SystemException> {
        if self.replied {
            return Err(crate::Error::RepliedTwice.into());
        }
        let sink = if self.response_expected {
            let detached = self.sink.detach().ok_or_else(|| {
                SystemException::new(
                    SystemExceptionKind::NoImplement,
                    crate::error::minor::NO_IMPLEMENT_DEFERRED_REPLY,
                )
                .completed(CompletionStatus::No)
            })?;
            Some(detached)
        } else {
            None
        };
        self.replied = true;
        Ok(ReplyHandle {
            sink,
            _call: crate::poa::defer_upcall(),
        })
    }

    /// Whether a reply was already sent (the ORB sends a system exception otherwise).
    pub fn has_replied(&self) -> bool {
        self.replied
    }

    /// Whether server request interceptors want the arguments and result as `Any`s (see
    /// [`ReplySink::wants_parameters`]).
    pub fn wants_parameters(&self) -> bool {
        self.sink.wants_parameters()
    }

    /// Gives the arguments and result of the reply about to be sent to the server request
    /// interceptors (when [`ServerRequest::wants_parameters`]).
    pub fn set_parameters(
        &mut self,
        arguments: Vec<crate::interceptor::Parameter>,
        result: crate::Any,
    ) {
        self.sink.set_parameters(arguments, result);
    }
}

/// An object implementation the POA can dispatch to. Generated skeletons (`FooSkeleton`)
/// implement it for every IDL interface.
pub trait Servant: Send + Sync + 'static {
    /// Repository id of the most derived interface.
    fn primary_interface(&self) -> &'static str;

    /// Whether the servant implements the interface `repository_id` (its own or a base).
    fn is_a(&self, repository_id: &str) -> bool;

    /// Reads the arguments, runs the operation and replies. An `Err` is sent to the client
    /// as a SYSTEM_EXCEPTION reply by the ORB (unless a reply was already sent).
    fn dispatch(&self, request: &mut ServerRequest<'_, '_>) -> Result<(), SystemException>;

    /// Typed access for collocated calls: for `repository_id` (the interface itself or a
    /// base), a `&Arc<dyn FooServant>` (`FooServant` being the servant trait generated for
    /// that interface) as `&dyn Any`, which a generated proxy downcasts and calls without
    /// marshalling (see [`ObjectRef::collocated_call`](crate::ObjectRef::collocated_call)).
    ///
    /// Rust cannot turn `&dyn Any` into `&dyn FooServant`, hence the `Arc` of the trait
    /// object, which is `Sized` and `'static`. Generated skeletons implement this; the
    /// default `None` (DSI and hand-written servants) makes collocated calls marshal.
    fn local_interface(&self, repository_id: &str) -> Option<&dyn std::any::Any> {
        let _ = repository_id;
        None
    }
}

/// The error for an operation a servant does not have: `BAD_OPERATION`, not completed.
pub fn bad_operation() -> SystemException {
    SystemException::new(
        SystemExceptionKind::BadOperation,
        crate::error::minor::BAD_OPERATION_UNKNOWN,
    )
}

/// Answers the operations every object has (`_is_a`, `_non_existent`, `_repository_id`,
/// `_interface`) for a servant; generated skeletons call this from their `match` arms.
/// Returns `Ok(false)` when `request` is not one of them.
pub fn dispatch_object_operation(
    servant: &dyn Servant,
    request: &mut ServerRequest<'_, '_>,
) -> Result<bool, SystemException> {
    match request.operation() {
        "_is_a" => {
            let id = request.arguments().read_string()?;
            request.arguments_done()?;
            let yes = servant.is_a(&id);
            request.reply(|w| {
                w.write_boolean(yes);
                Ok(())
            })?;
        }
        "_non_existent" | "_not_existent" => {
            request.arguments_done()?;
            request.reply(|w| {
                w.write_boolean(false);
                Ok(())
            })?;
        }
        "_repository_id" => {
            request.arguments_done()?;
            let id = servant.primary_interface();
            request.reply(|w| w.write_string(id))?;
        }
        "_interface" => {
            // No interface repository: the spec's answer is NO_IMPLEMENT.
            return Err(crate::Error::NoInterfaceRepository.into());
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// A [`ReplySink`] that keeps the reply body in memory: for collocated calls that still
/// marshal (to keep value semantics) and for testing skeletons without a network.
#[derive(Debug, Default)]
pub struct BufferReplySink {
    /// The context replies are encoded with.
    pub context: crate::cdr::CdrContext,
    /// The last reply: its kind and body bytes (native byte order, body at stream offset 0).
    pub reply: Option<(ReplyKind, Vec<u8>)>,
}

impl ReplySink for BufferReplySink {
    fn reply<'a>(
        &mut self,
        kind: ReplyKind,
        body: &mut dyn FnMut(&mut CdrWriter<'a>) -> crate::cdr::Result<()>,
    ) -> Result<(), SystemException> {
        let mut w = CdrWriter::new(self.context);
        body(&mut w).map_err(|e| SystemException::from(e).completed(CompletionStatus::Yes))?;
        self.reply = Some((kind, w.into_bytes()));
        Ok(())
    }
}
