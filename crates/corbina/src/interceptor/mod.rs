//! Portable Interceptors (CORBA 3.x §21): request interceptors on both sides of a call,
//! IOR interceptors, `PICurrent` slots and `Codec`s.
//!
//! Interceptors are registered by an [`OrbInitializer`] given to the configuration before
//! the ORB is created ([`OrbConfig::orb_initializer`](crate::OrbConfig::orb_initializer)):
//! its `pre_init`/`post_init` receive an [`OrbInitInfo`] to add them to.
//!
//! ```
//! use std::sync::Arc;
//! use corbina::interceptor::*;
//! use corbina::giop::ServiceContext;
//!
//! /// Adds a context (id 0x4342_0001) to every request.
//! struct Tag;
//! impl Interceptor for Tag {
//!     fn name(&self) -> &str { "Tag" }
//! }
//! impl ClientRequestInterceptor for Tag {
//!     fn send_request(&self, ri: &mut ClientRequestInfo) -> Result<(), InterceptorError> {
//!         let sc = ServiceContext { context_id: 0x4342_0001, context_data: vec![1, 42] };
//!         ri.add_request_service_context(sc, true)?;
//!         Ok(())
//!     }
//! }
//! struct Init;
//! impl OrbInitializer for Init {
//!     fn pre_init(&self, info: &mut OrbInitInfo) {
//!         info.add_client_request_interceptor(Arc::new(Tag)).unwrap();
//!     }
//! }
//! let orb = corbina::Orb::with_config(
//!     corbina::OrbConfig::default().orb_initializer(Arc::new(Init)),
//! );
//! orb.destroy();
//! ```
//!
//! What runs when:
//! - Client: `send_request` (starting point) for every request put on the wire, including a
//!   resend after a LOCATION_FORWARD or a connection the server closed unread (those end
//!   with `receive_other`, status `LOCATION_FORWARD`/`TRANSPORT_RETRY`). Then one ending
//!   point: `receive_reply`, `receive_exception` (system exceptions, from the reply or
//!   raised locally, and user exceptions) or `receive_other` (oneways, forwards).
//! - `send_poll` is never called. The specification calls it only for Time-Independent
//!   Invocations (a poll for a request routed through CORBA Messaging's store-and-forward
//!   routers), which Corbina does not make. Asynchronous calls and AMI pollers are ordinary
//!   requests: their reply runs `receive_reply`/`receive_exception` when it arrives, and
//!   polling for it is local, with no interception point.
//! - Server: `receive_request_service_contexts` (starting point), `receive_request`
//!   (before the POA looks the servant up; the target's most derived interface is not
//!   known there), then `send_reply`, `send_exception` or `send_other`.
//! - An interceptor that raises: the ones whose starting point completed get the ending
//!   point for the new exception (or `receive_other`/`send_other` for a
//!   [`ForwardRequest`]), in reverse order; the others are not called.
//! - Bidirectional GIOP (`-ORBofferBiDirectionalGIOP`/`-ORBacceptBiDirectionalGIOP`):
//!   requests in both directions over a bidirectional connection (a client's calls on the
//!   connection it offered, the server's call-backs on it) pass both ORBs' interceptors as
//!   any other call does. Such a connection is shared by concurrent calls: the request id
//!   is reserved before `send_request` runs (no lock is held while interceptors run), so
//!   the id an interceptor sees is the one in the header.
//! - LocateRequests (GIOP `LocateRequest`/`LocateReply`) are not intercepted, on either
//!   side: the specification's request interceptors are for Requests (a LocateRequest has
//!   no service contexts, operation or arguments, and runs no servant); a server answers
//!   them from its POAs without running any interception point.
//! - Collocated calls: with request interceptors registered, the ORB makes no direct
//!   collocated references (`-ORBCollocation` is taken as `iiop`): calls to its own objects
//!   go over a loopback connection, so both sides' interceptors run, with the same flow
//!   rules, `PICurrent` copies (thread to request scope on each side) and service contexts
//!   as between processes, at the cost of a call over loopback. Interception of collocated
//!   calls in process is not implemented.
//! - Client interceptors run on the references an ORB makes after they are registered
//!   (all of them: initializers run before the ORB exists), not on an `ObjectRef` built by
//!   hand with another `Invoker`. Intercepted oneways are written at once, not buffered
//!   (`-ORBOnewaySyncScope none` is taken as `transport`).
//! - Asynchronous calls ([`ObjectRef::invoke_async`](crate::ObjectRef::invoke_async)) on
//!   a reference with client interceptors run them: such a call is made synchronously on
//!   the polling thread (as for any reference with an application-supplied `Invoker`),
//!   not on the shared asynchronous connection.
//! - Deferred replies (AMH, [`ServerRequest::defer_reply`](crate::ServerRequest::defer_reply)):
//!   the ending point (`send_reply`, `send_exception`, with the request's contexts and the
//!   slots as the upcall left them) runs when the reply is given, on the thread giving it;
//!   a handle dropped unanswered ends with `send_exception` (INTERNAL).
//!
//! Arguments, result and exceptions ([`Parameter`]s of `Any`s) where the specification has
//! them, BAD_INV_ORDER (minor 14) at other points, NO_RESOURCES (minor 1) where the ORB
//! has no TypeCodes for them:
//!
//! | | `arguments` | `result` | `exceptions` |
//! |---|---|---|---|
//! | client, DII request | `send_request` (in, inout), `receive_reply` (all) | `receive_reply` | every point |
//! | client, stub or `ObjectRef::invoke` | NO_RESOURCES | NO_RESOURCES | NO_RESOURCES |
//! | server, DSI servant | `send_reply` (all); NO_RESOURCES at `receive_request` | `send_reply` | NO_RESOURCES |
//! | server, generated skeleton | NO_RESOURCES | NO_RESOURCES | NO_RESOURCES |
//!
//! They are made only when an interceptor asks: a client request's arguments are
//! marshalled again into a buffer of their own and read back by the operation's TypeCodes
//! (the DII gives them, [`OperationSignature`]); the reply's body is kept for them only for
//! such a request. Generated stubs and skeletons marshal straight to and from the message
//! and give the ORB no TypeCodes; a DSI servant says what its arguments are only when it
//! runs, after `receive_request`.
//!
//! Cost: the infos borrow the request as it is (operation, IOR, object key; the request's
//! contexts are decoded when first asked for), so an intercepted call pays for running the
//! points and little else; `docs/benchmarks.md` (*Portable interceptors*) has the figures.

use std::sync::Arc;

use crate::giop::{ServiceContext, TaggedComponent};
use crate::{ObjectRef, SystemException, SystemExceptionKind};

pub(crate) mod client;
mod codec;
mod current;
mod info;
#[cfg(feature = "metrics")]
mod metrics;
mod params;
pub(crate) mod server;
pub(crate) mod spans;

pub(crate) use client::InterceptedInvoker;
pub use codec::{Codec, CodecError, CodecFactory, Encoding, ENCODING_CDR_ENCAPS};
pub use current::{InvalidSlot, PiCurrent, SlotId};
pub use info::{ClientRequestInfo, IorInfo, ReplyStatus, ServerRequestInfo};
pub use params::{OperationSignature, Parameter, ParameterMode};

/// What every interceptor has (`PortableInterceptor::Interceptor`).
pub trait Interceptor: Send + Sync {
    /// The interceptor's name; empty for an anonymous one (several may share "").
    fn name(&self) -> &str;

    /// Called when the ORB is destroyed.
    fn destroy(&self) {}
}

/// `PortableInterceptor::ForwardRequest`: raised by an interceptor to send the request to
/// another object (the client retries there; the server replies LOCATION_FORWARD).
#[derive(Debug, Clone)]
pub struct ForwardRequest {
    /// Where the request goes instead.
    pub forward: ObjectRef,
}

/// What an interception point may raise.
#[derive(Debug, Clone, thiserror::Error)]
pub enum InterceptorError {
    /// A system exception: it becomes the request's outcome.
    #[error("{0}")]
    System(SystemException),
    /// A forward to another object.
    #[error("ForwardRequest")]
    Forward(ForwardRequest),
}

impl From<SystemException> for InterceptorError {
    fn from(e: SystemException) -> Self {
        InterceptorError::System(e)
    }
}

impl From<ForwardRequest> for InterceptorError {
    fn from(f: ForwardRequest) -> Self {
        InterceptorError::Forward(f)
    }
}

/// `PortableInterceptor::ClientRequestInterceptor`. Every point defaults to doing nothing.
pub trait ClientRequestInterceptor: Interceptor {
    /// Before the request is sent: add request service contexts here.
    fn send_request(&self, ri: &mut ClientRequestInfo) -> Result<(), InterceptorError> {
        let _ = ri;
        Ok(())
    }
    /// A poll for a Time-Independent Invocation's reply: never called by Corbina, which
    /// makes no such invocations (see the [module docs](self)).
    fn send_poll(&self, ri: &mut ClientRequestInfo) -> Result<(), SystemException> {
        let _ = ri;
        Ok(())
    }
    /// A normal reply arrived (may only raise system exceptions).
    fn receive_reply(&self, ri: &mut ClientRequestInfo) -> Result<(), SystemException> {
        let _ = ri;
        Ok(())
    }
    /// A system or user exception is the outcome.
    fn receive_exception(&self, ri: &mut ClientRequestInfo) -> Result<(), InterceptorError> {
        let _ = ri;
        Ok(())
    }
    /// Neither: a forward, a transparent resend, or a oneway's end.
    fn receive_other(&self, ri: &mut ClientRequestInfo) -> Result<(), InterceptorError> {
        let _ = ri;
        Ok(())
    }
}

/// `PortableInterceptor::ServerRequestInterceptor`. Every point defaults to doing nothing.
pub trait ServerRequestInterceptor: Interceptor {
    /// First: the request's service contexts, before anything else runs.
    fn receive_request_service_contexts(
        &self,
        ri: &mut ServerRequestInfo,
    ) -> Result<(), InterceptorError> {
        let _ = ri;
        Ok(())
    }
    /// Before the servant is looked up and called.
    fn receive_request(&self, ri: &mut ServerRequestInfo) -> Result<(), InterceptorError> {
        let _ = ri;
        Ok(())
    }
    /// A normal reply is about to be sent: add reply service contexts here.
    fn send_reply(&self, ri: &mut ServerRequestInfo) -> Result<(), SystemException> {
        let _ = ri;
        Ok(())
    }
    /// An exception is about to be sent.
    fn send_exception(&self, ri: &mut ServerRequestInfo) -> Result<(), InterceptorError> {
        let _ = ri;
        Ok(())
    }
    /// A forward is about to be sent, or a oneway ended.
    fn send_other(&self, ri: &mut ServerRequestInfo) -> Result<(), InterceptorError> {
        let _ = ri;
        Ok(())
    }
}

/// `PortableInterceptor::IORInterceptor`: adds tagged components to the IIOP profile of
/// every reference the ORB makes for its own objects.
pub trait IorInterceptor: Interceptor {
    /// Called for each new reference.
    fn establish_components(&self, info: &mut IorInfo);
}

/// `PortableInterceptor::ORBInitializer`: registered on the configuration, run when the
/// ORB is created (`pre_init`, then `post_init`, for each initializer in order).
pub trait OrbInitializer: Send + Sync {
    /// Before the ORB's initial references exist.
    fn pre_init(&self, info: &mut OrbInitInfo) {
        let _ = info;
    }
    /// After every initializer's `pre_init`.
    fn post_init(&self, info: &mut OrbInitInfo) {
        let _ = info;
    }
}

/// `PortableInterceptor::ORBInitInfo::DuplicateName`: a named interceptor of the same kind
/// is registered already.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an interceptor named {0:?} is registered already")]
pub struct DuplicateName(pub String);

/// What initializers register things with (`PortableInterceptor::ORBInitInfo`).
pub struct OrbInitInfo {
    arguments: Vec<String>,
    client: Vec<Arc<dyn ClientRequestInterceptor>>,
    server: Vec<Arc<dyn ServerRequestInterceptor>>,
    ior: Vec<Arc<dyn IorInterceptor>>,
    slots: u32,
    initial_references: Vec<(String, ObjectRef)>,
    /// The built-in span interceptors are registered ([`crate::trace`]).
    spans: bool,
    /// The built-in metrics interceptors are registered.
    metrics: bool,
}

impl OrbInitInfo {
    /// The `-ORB…` and other arguments the ORB was created with, if it was through
    /// `Orb::init` (empty otherwise).
    pub fn arguments(&self) -> &[String] {
        &self.arguments
    }

    /// Adds a client request interceptor (run in the order added).
    pub fn add_client_request_interceptor(
        &mut self,
        i: Arc<dyn ClientRequestInterceptor>,
    ) -> Result<(), DuplicateName> {
        check_name(self.client.iter().map(|c| c.name()), i.name())?;
        self.client.push(i);
        Ok(())
    }

    /// Adds a server request interceptor (run in the order added).
    pub fn add_server_request_interceptor(
        &mut self,
        i: Arc<dyn ServerRequestInterceptor>,
    ) -> Result<(), DuplicateName> {
        check_name(self.server.iter().map(|c| c.name()), i.name())?;
        self.server.push(i);
        Ok(())
    }

    /// Adds an IOR interceptor.
    pub fn add_ior_interceptor(&mut self, i: Arc<dyn IorInterceptor>) -> Result<(), DuplicateName> {
        check_name(self.ior.iter().map(|c| c.name()), i.name())?;
        self.ior.push(i);
        Ok(())
    }

    /// A new `PICurrent` slot.
    pub fn allocate_slot_id(&mut self) -> SlotId {
        self.slots += 1;
        SlotId(self.slots - 1)
    }

    /// Makes `obj` what `resolve_initial_references(name)` returns. `InvalidName` for an
    /// empty name or one registered already.
    pub fn register_initial_reference(
        &mut self,
        name: &str,
        obj: ObjectRef,
    ) -> Result<(), crate::InvalidName> {
        if name.is_empty()
            || matches!(
                name,
                "RootPOA" | "POACurrent" | "PICurrent" | "CodecFactory"
            )
            || self.initial_references.iter().any(|(n, _)| n == name)
        {
            return Err(crate::InvalidName(name.to_owned()));
        }
        self.initial_references.push((name.to_owned(), obj));
        Ok(())
    }

    /// The factory of `Codec`s (also `resolve_initial_references("CodecFactory")`).
    pub fn codec_factory(&self) -> CodecFactory {
        CodecFactory
    }
}

fn check_name<'a>(
    mut names: impl Iterator<Item = &'a str>,
    name: &str,
) -> Result<(), DuplicateName> {
    if !name.is_empty() && names.any(|n| n == name) {
        return Err(DuplicateName(name.to_owned()));
    }
    Ok(())
}

/// The initializers a configuration carries, and what they registered once the ORB ran
/// them. Compared by identity.
#[derive(Clone, Default)]
pub struct Initializers {
    pub(crate) list: Vec<Arc<dyn OrbInitializer>>,
    pub(crate) registered: Option<Arc<Registered>>,
}

impl std::fmt::Debug for Initializers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Initializers")
            .field("count", &self.list.len())
            .finish_non_exhaustive()
    }
}

impl PartialEq for Initializers {
    fn eq(&self, other: &Self) -> bool {
        self.list.len() == other.list.len()
            && self
                .list
                .iter()
                .zip(&other.list)
                .all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

impl Initializers {
    /// Whether no initializer is registered.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The client interceptors, if any: what the call path checks, once per call.
    #[inline(always)]
    pub(crate) fn client(&self) -> Option<&Arc<Registered>> {
        self.registered.as_ref().filter(|r| !r.client.is_empty())
    }

    /// The server interceptors, if any.
    pub(crate) fn server(&self) -> Option<Arc<Registered>> {
        self.registered
            .as_ref()
            .filter(|r| !r.server.is_empty())
            .cloned()
    }

    /// Whether request interceptors exist (collocated calls then go through IIOP).
    pub(crate) fn has_request_interceptors(&self) -> bool {
        self.registered
            .as_ref()
            .is_some_and(|r| !r.client.is_empty() || !r.server.is_empty())
    }

    /// Runs the initializers (pre_init of each, then post_init of each); with `spans`, the
    /// built-in interceptors that end request spans first ([`crate::trace`]).
    pub(crate) fn run(&mut self, arguments: Vec<String>, spans: bool, metrics: bool) {
        if self.registered.is_some() {
            return;
        }
        #[cfg(feature = "metrics")]
        if metrics {
            self.list.insert(0, Arc::new(metrics::MetricsInitializer));
        }
        let _ = metrics;
        if spans {
            self.list.insert(0, Arc::new(spans::SpansInitializer));
        }
        if self.list.is_empty() {
            return;
        }
        let mut info = OrbInitInfo {
            arguments,
            client: Vec::new(),
            server: Vec::new(),
            ior: Vec::new(),
            slots: 0,
            initial_references: Vec::new(),
            spans: false,
            metrics: false,
        };
        for i in &self.list {
            i.pre_init(&mut info);
        }
        for i in &self.list {
            i.post_init(&mut info);
        }
        self.registered = Some(Arc::new(Registered {
            client: info.client,
            server: info.server,
            ior: info.ior,
            slots: info.slots,
            initial_references: info.initial_references,
            spans: info.spans,
            metrics: info.metrics,
        }));
    }
}

/// What the initializers registered.
pub(crate) struct Registered {
    pub(crate) client: Vec<Arc<dyn ClientRequestInterceptor>>,
    pub(crate) server: Vec<Arc<dyn ServerRequestInterceptor>>,
    pub(crate) ior: Vec<Arc<dyn IorInterceptor>>,
    pub(crate) slots: u32,
    pub(crate) initial_references: Vec<(String, ObjectRef)>,
    /// Requests get `tracing` spans.
    pub(crate) spans: bool,
    /// Requests are timed for metrics.
    pub(crate) metrics: bool,
}

impl Registered {
    /// The components the IOR interceptors add to a new reference's profile.
    pub(crate) fn components(&self, type_id: &str, object_key: &[u8]) -> Vec<TaggedComponent> {
        let mut info = IorInfo {
            type_id: type_id.to_owned(),
            object_key: object_key.to_vec(),
            components: Vec::new(),
        };
        for i in &self.ior {
            i.establish_components(&mut info);
        }
        info.components
    }

    pub(crate) fn initial_reference(&self, name: &str) -> Option<ObjectRef> {
        self.initial_references
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, o)| o.clone())
    }

    pub(crate) fn destroy(&self) {
        for i in &self.client {
            i.destroy();
        }
        for i in &self.server {
            i.destroy();
        }
        for i in &self.ior {
            i.destroy();
        }
    }
}

/// BAD_INV_ORDER minor 14: an attribute read at a point where it is not available.
pub(crate) fn not_available() -> SystemException {
    SystemException::new(
        SystemExceptionKind::BadInvOrder,
        crate::error::minor::BAD_INV_ORDER_INTERCEPTOR_CALL,
    )
}

/// BAD_INV_ORDER minor 15: a service context added twice without `replace`.
fn duplicate_context() -> SystemException {
    SystemException::new(
        SystemExceptionKind::BadInvOrder,
        crate::error::minor::BAD_INV_ORDER_DUPLICATE_CONTEXT,
    )
}

/// BAD_PARAM minor 26: no service context with that id.
fn no_context() -> SystemException {
    SystemException::new(
        SystemExceptionKind::BadParam,
        crate::error::minor::BAD_PARAM_NO_SERVICE_CONTEXT,
    )
}

/// Adds `sc` to `list`, replacing one with the same id when `replace`.
fn add_context(
    list: &mut Vec<ServiceContext>,
    sc: ServiceContext,
    replace: bool,
) -> Result<(), SystemException> {
    match list.iter_mut().find(|c| c.context_id == sc.context_id) {
        Some(_) if !replace => Err(duplicate_context()),
        Some(c) => {
            *c = sc;
            Ok(())
        }
        None => {
            list.push(sc);
            Ok(())
        }
    }
}

fn find_context(list: &[ServiceContext], id: u32) -> Result<&ServiceContext, SystemException> {
    list.iter()
        .find(|c| c.context_id == id)
        .ok_or_else(no_context)
}
