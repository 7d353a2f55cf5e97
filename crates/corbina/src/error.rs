//! What failed on the call path ([`Error`]), and the one mapping of those failures to the
//! CORBA system exceptions calls return: kind, minor code and completion status.
//!
//! A call returns a [`SystemException`] (that is what crosses the wire and what generated
//! stubs return); the runtime raises it from an [`Error`], kept as the exception's
//! [detail](SystemException::detail), so that its `Display` says what a user needs to act:
//!
//! ```text
//! TRANSIENT (minor 0x4f4d0002, completed NO): connect to tcp 127.0.0.1:5002 failed: Connection refused (os error 111)
//! TIMEOUT (minor 0x43420221, completed MAYBE): receive from tcp 127.0.0.1:5002 timed out
//! ```
//!
//! Match on the kind and minor code, or downcast the detail:
//! `e.detail().and_then(|d| d.downcast_ref::<corbina::Error>())`. Peers only ever see
//! kind, minor and completion status.
//!
//! # Minor codes
//!
//! The OMG's standard minor codes (vendor id [`OMG_VMCID`](crate::cdr::OMG_VMCID),
//! `0x4f4d0000`, CORBA 3.x "Standard Minor Exception Codes") where one fits; Corbina's own
//! (vendor id [`CORBINA_VMCID`](crate::cdr::CORBINA_VMCID), `0x43420000`) for the rest, stable
//! across releases. Three of Corbina's codes predate that range and keep their values
//! (`0x43424e0x`). The runtime raises no exception with minor 0.
//!
//! | exception | minor | completed | meaning |
//! | --- | --- | --- | --- |
//! | TRANSIENT | `0x4f4d0002` (OMG 2, no usable profile) | NO | connecting to the profile's endpoint failed |
//! | TRANSIENT | `0x43420210` | NO | connecting timed out (connect timeout, or the call's deadline) |
//! | TRANSIENT | `0x43420211` | NO | the connection pool is unusable (a thread panicked holding it) |
//! | TRANSIENT | `0x43424e01` ([`minor::TRANSIENT_FORWARD_LIMIT`]) | NO | LOCATION_FORWARD hop limit reached |
//! | TRANSIENT | `0x43424e02` ([`minor::TRANSIENT_RESEND_LIMIT`]) | NO | the server closed the connection before reading the request on every resend |
//! | COMM_FAILURE | `0x43420201` | NO | sending the request failed |
//! | COMM_FAILURE | `0x43420202` | MAYBE | receiving the reply failed (OS error) |
//! | COMM_FAILURE | `0x43420203` | MAYBE | the server closed the connection before replying |
//! | COMM_FAILURE | `0x43420204` | MAYBE | the server sent invalid or unexpected GIOP |
//! | COMM_FAILURE | `0x43420205` | NO | the server answered MessageError |
//! | COMM_FAILURE | `0x43420206` | MAYBE | sending buffered oneways (this one among them) failed |
//! | COMM_FAILURE | `0x43420207` | YES | server: sending the reply failed |
//! | COMM_FAILURE | `0x43424e03` ([`minor::COMM_FAILURE_ONEWAYS_LOST`]) | NO (a call), MAYBE (a flush) | buffered oneways were lost by an earlier write |
//! | TIMEOUT | `0x43420220` | NO | sending the request timed out |
//! | TIMEOUT | `0x43420221` | MAYBE | receiving the reply timed out |
//! | TIMEOUT | `0x43420222` | NO | waiting for a free connection (an asynchronous call: for a connect under way) timed out |
//! | INV_OBJREF | `0x43420230` | NO | the reference has no usable IIOP profile |
//! | INV_OBJREF | `0x43420231` | NO | the profile's GIOP version is not supported |
//! | MARSHAL | `0x43420240` | NO | the request could not be encoded (GIOP header, closed connection) |
//! | MARSHAL | `0x43420241` | NO | NEEDS_ADDRESSING_MODE reply with an undefined mode |
//! | MARSHAL, BAD_PARAM, IMP_LIMIT, … | the CDR or GIOP error's ([`MarshalError::minor`]) | NO (arguments, a forward), YES (a reply) | marshalling failed |
//! | OBJECT_NOT_EXIST | `0x43420250` | NO | server: the request's target address names no object key |
//! | OBJECT_NOT_EXIST | `0x43420251` | NO | `corbaname:`: no object is bound to the name |
//! | INTERNAL | `0x43420260` | MAYBE | the servant returned without replying |
//! | INTERNAL | `0x43420261` | MAYBE | a deferred (DII) request ended without an outcome |
//! | INTERNAL | `0x43420262` | NO | a servant incarnated for the call was deactivated before it ran |
//! | BAD_INV_ORDER | `0x4f4d0009` (OMG 9, set_result more than once) | YES | the servant replied twice |
//! | NO_IMPLEMENT | `0x43420270` | NO | `_interface`: there is no interface repository |
//! | NO_IMPLEMENT | `0x43420271` | NO | the servant does not implement the operation (a default method generated with `Builder::no_implement_defaults`) |
//! | BAD_PARAM | `0x434202a0` | NO | narrow: the object does not implement the interface |
//! | BAD_OPERATION | `0x434202b0` ([`minor::BAD_OPERATION_WRONG_POLLER_OPERATION`]) | NO | AMI: a poller polled for another operation than its request's |
//! | BAD_OPERATION | `0x434202b1` ([`minor::BAD_OPERATION_WRONG_RESPONSE`]) | MAYBE | AMH: a response handler answered with another operation's results |
//! | NO_RESOURCES | `0x43420280` | NO | a thread (a deferred request's, a bidirectional connection's reader) could not be started |
//! | INITIALIZE | `0x43420290` | NO | the ORB's server could not listen on its endpoints |
//! | INITIALIZE | `0x43420291` | NO | the ORB has no endpoint to publish in references |
//!
//! Other runtime codes live next to what raises them: the POA's in [`crate::poa::minor`]
//! (OMG codes), `corbaname:` resolution's in [`crate::orb::corbaname_minor`], CDR's in
//! [`MarshalError::minor`].

use std::fmt;
use std::io;

use crate::cdr::MarshalError;
use crate::giop::connection::ConnectionError;
use crate::giop::GiopError;
use crate::transport::Address;
use crate::{CompletionStatus, SystemException, SystemExceptionKind};

/// The minor codes the runtime raises from an [`Error`] (see the table in the module docs).
pub mod minor {
    use crate::cdr::{CORBINA_VMCID, OMG_VMCID};

    /// TRANSIENT: connecting to the profile's endpoint failed (OMG: no usable profile).
    pub const TRANSIENT_CONNECT_FAILED: u32 = OMG_VMCID | 2;
    /// TRANSIENT: connecting timed out.
    pub const TRANSIENT_CONNECT_TIMEOUT: u32 = CORBINA_VMCID | 0x210;
    /// TRANSIENT: the connection pool is unusable (a thread panicked while holding it).
    pub const TRANSIENT_POOL_POISONED: u32 = CORBINA_VMCID | 0x211;
    /// TRANSIENT: LOCATION_FORWARD hop limit reached (a forward chain that ends this way is
    /// not unwound to the original target).
    pub const TRANSIENT_FORWARD_LIMIT: u32 = 0x4342_4e01;
    /// TRANSIENT: the server kept closing the connection before reading the request
    /// (orderly CloseConnection on every resend).
    pub const TRANSIENT_RESEND_LIMIT: u32 = 0x4342_4e02;
    /// COMM_FAILURE: sending the request failed.
    pub const COMM_FAILURE_SEND: u32 = CORBINA_VMCID | 0x201;
    /// COMM_FAILURE: receiving the reply failed.
    pub const COMM_FAILURE_RECEIVE: u32 = CORBINA_VMCID | 0x202;
    /// COMM_FAILURE: the server closed the connection before replying.
    pub const COMM_FAILURE_CLOSED: u32 = CORBINA_VMCID | 0x203;
    /// COMM_FAILURE: the server sent invalid or unexpected GIOP.
    pub const COMM_FAILURE_PROTOCOL: u32 = CORBINA_VMCID | 0x204;
    /// COMM_FAILURE: the server answered MessageError.
    pub const COMM_FAILURE_MESSAGE_ERROR: u32 = CORBINA_VMCID | 0x205;
    /// COMM_FAILURE: writing buffered oneways (the call's own among them) failed.
    pub const COMM_FAILURE_BATCH_SEND: u32 = CORBINA_VMCID | 0x206;
    /// COMM_FAILURE: server side, sending the reply failed.
    pub const COMM_FAILURE_SEND_REPLY: u32 = CORBINA_VMCID | 0x207;
    /// COMM_FAILURE: buffered oneways were lost, their connection failed when they were
    /// written outside any call (reported once, by the next call through that connection's
    /// rope or by an explicit flush).
    pub const COMM_FAILURE_ONEWAYS_LOST: u32 = 0x4342_4e03;
    /// TIMEOUT: sending the request timed out.
    pub const TIMEOUT_SEND: u32 = CORBINA_VMCID | 0x220;
    /// TIMEOUT: receiving the reply timed out.
    pub const TIMEOUT_RECEIVE: u32 = CORBINA_VMCID | 0x221;
    /// TIMEOUT: waiting for a free connection timed out.
    pub const TIMEOUT_WAIT: u32 = CORBINA_VMCID | 0x222;
    /// INV_OBJREF: the reference has no usable IIOP profile.
    pub const INV_OBJREF_NO_IIOP_PROFILE: u32 = CORBINA_VMCID | 0x230;
    /// INV_OBJREF: the profile's GIOP version is not supported.
    pub const INV_OBJREF_GIOP_VERSION: u32 = CORBINA_VMCID | 0x231;
    /// MARSHAL: the request could not be encoded.
    pub const MARSHAL_REQUEST: u32 = CORBINA_VMCID | 0x240;
    /// MARSHAL: a NEEDS_ADDRESSING_MODE reply named an undefined mode.
    pub const MARSHAL_ADDRESSING_MODE: u32 = CORBINA_VMCID | 0x241;
    /// OBJECT_NOT_EXIST: the request's target address names no object key.
    pub const OBJECT_NOT_EXIST_NO_KEY: u32 = CORBINA_VMCID | 0x250;
    /// OBJECT_NOT_EXIST: a `corbaname:` URL's name is bound to nothing.
    pub const OBJECT_NOT_EXIST_NAME_NOT_FOUND: u32 = CORBINA_VMCID | 0x251;
    /// INTERNAL: the servant returned without replying.
    pub const INTERNAL_NO_REPLY: u32 = CORBINA_VMCID | 0x260;
    /// INTERNAL: a deferred request ended without an outcome.
    pub const INTERNAL_DEFERRED_LOST: u32 = CORBINA_VMCID | 0x261;
    /// INTERNAL: a servant incarnated for the call was deactivated before it ran.
    pub const INTERNAL_INCARNATION_LOST: u32 = CORBINA_VMCID | 0x262;
    /// INTERNAL: a deferred reply's handle was dropped without a reply.
    pub const INTERNAL_REPLY_HANDLE_DROPPED: u32 = CORBINA_VMCID | 0x263;
    /// NO_IMPLEMENT: the request cannot be answered after its upcall (a `ServantInvoker` call).
    pub const NO_IMPLEMENT_DEFERRED_REPLY: u32 = CORBINA_VMCID | 0x271;
    /// BAD_INV_ORDER: the servant replied twice (OMG: set_result called more than once).
    pub const BAD_INV_ORDER_REPLIED: u32 = OMG_VMCID | 9;
    /// BAD_PARAM: a narrow to an interface the object does not implement.
    pub const BAD_PARAM_NOT_OF_TYPE: u32 = CORBINA_VMCID | 0x2a0;
    /// NO_IMPLEMENT: no interface repository (`_interface`).
    pub const NO_IMPLEMENT_INTERFACE_REPOSITORY: u32 = CORBINA_VMCID | 0x270;
    /// NO_IMPLEMENT: the servant does not implement the operation (the default method of a
    /// servant trait generated with `corbina_codegen::Builder::no_implement_defaults`).
    pub const NO_IMPLEMENT_OPERATION: u32 = CORBINA_VMCID | 0x271;
    /// BAD_OPERATION: an AMI poller was polled for another operation than its request's
    /// (omniORB's code for it is vendor-specific).
    pub const BAD_OPERATION_WRONG_POLLER_OPERATION: u32 = CORBINA_VMCID | 0x2b0;
    /// BAD_OPERATION: an AMH response handler answered with another operation's results (the
    /// client gets it too, rather than results it would misread).
    pub const BAD_OPERATION_WRONG_RESPONSE: u32 = CORBINA_VMCID | 0x2b1;
    /// NO_RESOURCES: a thread could not be started.
    pub const NO_RESOURCES_THREAD: u32 = CORBINA_VMCID | 0x280;
    /// INITIALIZE: the ORB's server could not listen on its endpoints.
    pub const INITIALIZE_LISTEN: u32 = CORBINA_VMCID | 0x290;
    /// INITIALIZE: the ORB has no endpoint to publish in references.
    pub const INITIALIZE_NO_ENDPOINT: u32 = CORBINA_VMCID | 0x291;
}

/// The phase of a call that failed or timed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Opening a connection.
    Connect,
    /// Waiting for a connection of the pool to come free.
    Wait,
    /// Writing the request.
    Send,
    /// Reading the reply.
    Receive,
}

/// How an endpoint is shown: the transport, then its address (`tcp 127.0.0.1:5002`).
struct Endpoint<'a>(&'a Address);

impl fmt::Display for Endpoint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Address::Tcp { .. } => write!(f, "tcp {}", self.0),
            Address::Ssl { host, port } if host.contains(':') => write!(f, "ssl [{host}]:{port}"),
            Address::Ssl { host, port } => write!(f, "ssl {host}:{port}"),
            Address::Unix(p) => write!(f, "unix {}", p.display()),
            Address::Shm(p) => write!(f, "shm {}", p.display()),
        }
    }
}

fn timed_out(phase: Phase, endpoint: &Address) -> String {
    let ep = Endpoint(endpoint);
    match phase {
        Phase::Connect => format!("connect to {ep} timed out"),
        Phase::Wait => format!("wait for a free connection to {ep} timed out"),
        Phase::Send => format!("send to {ep} timed out"),
        Phase::Receive => format!("receive from {ep} timed out"),
    }
}

/// What failed on the call path. Becomes the [`SystemException`] a call returns through
/// [`Error::to_system_exception`] (or `From`), which keeps it as the exception's detail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Opening a connection failed.
    #[error("connect to {} failed: {source}", Endpoint(endpoint))]
    Connect {
        /// Where.
        endpoint: Address,
        /// The OS error.
        source: io::Error,
    },
    /// A phase of the call ran past its deadline (connect: past the connect timeout too).
    #[error("{}", timed_out(*phase, endpoint))]
    Timeout {
        /// Where.
        endpoint: Address,
        /// Which phase.
        phase: Phase,
    },
    /// Writing the request failed: it did not reach the server.
    #[error("send to {} failed: {source}", Endpoint(endpoint))]
    Send {
        /// Where.
        endpoint: Address,
        /// The OS error.
        source: io::Error,
    },
    /// Reading the reply failed: the request may have run.
    #[error("receive from {} failed: {source}", Endpoint(endpoint))]
    Receive {
        /// Where.
        endpoint: Address,
        /// The OS error.
        source: io::Error,
    },
    /// The server closed the connection before its reply came.
    #[error(
        "receive from {} failed: the server closed the connection",
        Endpoint(endpoint)
    )]
    ConnectionClosed {
        /// Where.
        endpoint: Address,
    },
    /// The server's bytes are not valid GIOP for this connection.
    #[error("receive from {} failed: {source}", Endpoint(endpoint))]
    Protocol {
        /// Where.
        endpoint: Address,
        /// What was wrong.
        source: ConnectionError,
    },
    /// The server sent a message a client does not expect in reply to its request.
    #[error(
        "receive from {} failed: the server sent {message}",
        Endpoint(endpoint)
    )]
    UnexpectedMessage {
        /// Where.
        endpoint: Address,
        /// What it sent.
        message: &'static str,
    },
    /// The server answered MessageError: it could not read the request.
    #[error("the server at {} answered MessageError", Endpoint(endpoint))]
    MessageError {
        /// Where.
        endpoint: Address,
    },
    /// Writing buffered oneways, this call's among them, failed: they are lost.
    #[error(
        "send of {count} buffered oneway(s) to {} failed: {source}",
        Endpoint(endpoint)
    )]
    BatchSend {
        /// Where.
        endpoint: Address,
        /// How many oneways were lost.
        count: usize,
        /// The OS error.
        source: io::Error,
    },
    /// Buffered oneways were lost earlier, written outside any call; this call reports them
    /// (it was not sent).
    #[error(
        "{count} buffered oneway(s) to {} were lost when their connection failed",
        Endpoint(endpoint)
    )]
    OnewaysLost {
        /// Where.
        endpoint: Address,
        /// How many.
        count: u64,
    },
    /// An explicit flush found buffered oneways lost.
    #[error("{count} buffered oneway(s) were lost when their connection failed")]
    FlushLost {
        /// How many.
        count: u64,
    },
    /// LOCATION_FORWARD replies led further than the hop limit.
    #[error("more than {limit} LOCATION_FORWARD hops")]
    ForwardLimit {
        /// The limit.
        limit: u32,
    },
    /// The server closed the connection before reading the request on every resend.
    #[error(
        "the server at {} closed the connection before reading the request, {resends} times",
        Endpoint(endpoint)
    )]
    ResendLimit {
        /// Where.
        endpoint: Address,
        /// How many times the request was sent.
        resends: usize,
    },
    /// A thread panicked while holding the connection pool's state.
    #[error(
        "the connection pool for {} is unusable (a thread panicked holding it)",
        Endpoint(endpoint)
    )]
    PoolPoisoned {
        /// Where.
        endpoint: Address,
    },
    /// The reference has no IIOP profile this ORB can use.
    #[error("the reference has no usable IIOP profile")]
    NoUsableProfile,
    /// The profile's GIOP version cannot be spoken.
    #[error("GIOP 1.{minor} is not supported")]
    GiopVersion {
        /// The minor version.
        minor: u8,
    },
    /// The request header could not be written: it does not encode (the operation name,
    /// the target) or the connection is closed. Nothing was sent.
    #[error("the request header could not be written")]
    StartRequest,
    /// The request could not be finished (too large, for one). Nothing was sent.
    #[error("the request could not be encoded: {0}")]
    EncodeRequest(#[source] ConnectionError),
    /// The arguments could not be marshalled: nothing was sent.
    #[error("the arguments could not be marshalled: {0}")]
    MarshalArguments(#[source] MarshalError),
    /// A reply (result, exception) could not be decoded: the operation ran.
    #[error("the reply could not be decoded: {0}")]
    DecodeReply(#[source] GiopError),
    /// The reference in a LOCATION_FORWARD reply could not be decoded.
    #[error("the forward reference could not be decoded: {0}")]
    DecodeForward(#[source] GiopError),
    /// A NEEDS_ADDRESSING_MODE reply named no mode GIOP defines.
    #[error("the server asked for an undefined addressing mode")]
    AddressingMode,
    /// Server side: the request's target address resolves to no object key.
    #[error("the request's target address names no object key")]
    NoObjectKey,
    /// Server side: the servant returned without replying to a call that expects a reply.
    #[error("the servant returned without replying")]
    NoReply,
    /// Server side: the servant deferred its reply and dropped the handle without replying.
    #[error("the servant dropped its reply handle without replying")]
    ReplyHandleDropped,
    /// Server side: the servant replied twice.
    #[error("the servant replied twice")]
    RepliedTwice,
    /// Server side: the reply could not be encoded.
    #[error("the reply could not be encoded: {0}")]
    EncodeReply(#[source] GiopError),
    /// Server side: writing the reply failed.
    #[error("sending the reply failed: {source}")]
    SendReply {
        /// The OS error.
        source: io::Error,
    },
    /// Server side: a servant incarnated for this call was deactivated before it ran.
    #[error("the servant incarnated for the call was deactivated before it ran")]
    IncarnationLost,
    /// A narrow: the object does not implement the interface.
    #[error("the object is not a {repository_id}")]
    NotOfType {
        /// The interface's repository id.
        repository_id: &'static str,
    },
    /// `_interface`: there is no interface repository.
    #[error("there is no interface repository")]
    NoInterfaceRepository,
    /// A deferred request's thread could not be started.
    #[error("a thread for a deferred request could not be started: {source}")]
    ThreadSpawn {
        /// The OS error.
        source: io::Error,
    },
    /// A deferred request's thread ended without an outcome.
    #[error("a deferred request ended without an outcome")]
    DeferredLost,
    /// The reader thread of a bidirectional GIOP connection could not be started.
    #[error(
        "the reader thread of a bidirectional connection to {} could not be started: {source}",
        Endpoint(endpoint)
    )]
    BidirReader {
        /// Where the connection goes.
        endpoint: Address,
        /// The OS error.
        source: io::Error,
    },
    /// The reader (or connecting) thread of an asynchronous calls' connection could not be
    /// started.
    #[error(
        "a thread for the asynchronous connection to {} could not be started: {source}",
        Endpoint(endpoint)
    )]
    AsyncThread {
        /// Where the connection goes.
        endpoint: Address,
        /// The OS error.
        source: io::Error,
    },
    /// The ORB's server could not listen on its endpoints.
    #[error("the ORB could not listen on its endpoints: {source}")]
    Listen {
        /// The OS error.
        source: io::Error,
    },
    /// The ORB has no endpoint (TCP or local) to publish in its references.
    #[error("the ORB has no endpoint to publish")]
    NoEndpoint,
}

impl Error {
    /// The system exception this error is raised as: kind, minor code and completion
    /// status. The one place they are decided (the table in the module docs).
    pub fn exception(&self) -> (SystemExceptionKind, u32, CompletionStatus) {
        use minor::*;
        use CompletionStatus::{Maybe, No, Yes};
        use SystemExceptionKind as K;
        match self {
            Error::Connect { .. } => (K::Transient, TRANSIENT_CONNECT_FAILED, No),
            Error::Timeout { phase, .. } => match phase {
                Phase::Connect => (K::Transient, TRANSIENT_CONNECT_TIMEOUT, No),
                Phase::Wait => (K::Timeout, TIMEOUT_WAIT, No),
                Phase::Send => (K::Timeout, TIMEOUT_SEND, No),
                Phase::Receive => (K::Timeout, TIMEOUT_RECEIVE, Maybe),
            },
            Error::Send { .. } => (K::CommFailure, COMM_FAILURE_SEND, No),
            Error::Receive { .. } => (K::CommFailure, COMM_FAILURE_RECEIVE, Maybe),
            Error::ConnectionClosed { .. } => (K::CommFailure, COMM_FAILURE_CLOSED, Maybe),
            Error::Protocol { .. } | Error::UnexpectedMessage { .. } => {
                (K::CommFailure, COMM_FAILURE_PROTOCOL, Maybe)
            }
            Error::MessageError { .. } => (K::CommFailure, COMM_FAILURE_MESSAGE_ERROR, No),
            Error::BatchSend { .. } => (K::CommFailure, COMM_FAILURE_BATCH_SEND, Maybe),
            Error::OnewaysLost { .. } => (K::CommFailure, COMM_FAILURE_ONEWAYS_LOST, No),
            Error::FlushLost { .. } => (K::CommFailure, COMM_FAILURE_ONEWAYS_LOST, Maybe),
            Error::ForwardLimit { .. } => (K::Transient, TRANSIENT_FORWARD_LIMIT, No),
            Error::ResendLimit { .. } => (K::Transient, TRANSIENT_RESEND_LIMIT, No),
            Error::PoolPoisoned { .. } => (K::Transient, TRANSIENT_POOL_POISONED, No),
            Error::NoUsableProfile => (K::InvObjref, INV_OBJREF_NO_IIOP_PROFILE, No),
            Error::GiopVersion { .. } => (K::InvObjref, INV_OBJREF_GIOP_VERSION, No),
            Error::StartRequest | Error::EncodeRequest(_) => (K::Marshal, MARSHAL_REQUEST, No),
            Error::MarshalArguments(e) => (e.exception_kind().into(), e.minor(), No),
            Error::DecodeReply(e) => giop_exception(e, Yes),
            Error::DecodeForward(e) => giop_exception(e, No),
            Error::AddressingMode => (K::Marshal, MARSHAL_ADDRESSING_MODE, No),
            Error::NoObjectKey => (K::ObjectNotExist, OBJECT_NOT_EXIST_NO_KEY, No),
            Error::NoReply => (K::Internal, INTERNAL_NO_REPLY, Maybe),
            Error::RepliedTwice => (K::BadInvOrder, BAD_INV_ORDER_REPLIED, Yes),
            Error::ReplyHandleDropped => (K::Internal, INTERNAL_REPLY_HANDLE_DROPPED, Maybe),
            Error::EncodeReply(e) => giop_exception(e, Yes),
            Error::SendReply { .. } => (K::CommFailure, COMM_FAILURE_SEND_REPLY, Yes),
            Error::IncarnationLost => (K::Internal, INTERNAL_INCARNATION_LOST, No),
            Error::NotOfType { .. } => (K::BadParam, BAD_PARAM_NOT_OF_TYPE, No),
            Error::NoInterfaceRepository => (K::NoImplement, NO_IMPLEMENT_INTERFACE_REPOSITORY, No),
            Error::ThreadSpawn { .. } | Error::BidirReader { .. } | Error::AsyncThread { .. } => {
                (K::NoResources, NO_RESOURCES_THREAD, No)
            }
            Error::DeferredLost => (K::Internal, INTERNAL_DEFERRED_LOST, Maybe),
            Error::Listen { .. } => (K::Initialize, INITIALIZE_LISTEN, No),
            Error::NoEndpoint => (K::Initialize, INITIALIZE_NO_ENDPOINT, No),
        }
    }

    /// The system exception a call returns for this error, with the error as its detail.
    // Out of line and cold: error construction must not weigh on the callers' hot paths.
    #[cold]
    #[inline(never)]
    pub fn to_system_exception(self) -> SystemException {
        let (kind, minor, completed) = self.exception();
        SystemException::new(kind, minor)
            .completed(completed)
            .with_detail(self)
    }
}

/// A GIOP or CDR decoding error keeps the kind and minor code of its mapping.
fn giop_exception(
    e: &GiopError,
    completed: CompletionStatus,
) -> (SystemExceptionKind, u32, CompletionStatus) {
    let s = SystemException::from(e.clone());
    (s.kind, s.minor, completed)
}

impl From<Error> for SystemException {
    fn from(e: Error) -> SystemException {
        e.to_system_exception()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;
    use std::time::Duration;

    fn tcp(port: u16) -> Address {
        Address::Tcp {
            host: "127.0.0.1".into(),
            port,
        }
    }

    /// The table of the module docs, row by row: no minor 0, and the wire ignores the detail.
    #[test]
    fn mapping_table() {
        use CompletionStatus::{Maybe, No, Yes};
        use SystemExceptionKind as K;
        let io = || io::Error::from(io::ErrorKind::BrokenPipe);
        let ep = tcp(5002);
        let marshal = MarshalError::EndOfData {
            offset: 0,
            needed: 4,
            remaining: 0,
        };
        let rows: Vec<(Error, K, u32, CompletionStatus)> = vec![
            (
                Error::Connect {
                    endpoint: ep.clone(),
                    source: io(),
                },
                K::Transient,
                0x4f4d_0002,
                No,
            ),
            (
                Error::Timeout {
                    endpoint: ep.clone(),
                    phase: Phase::Connect,
                },
                K::Transient,
                0x4342_0210,
                No,
            ),
            (
                Error::Timeout {
                    endpoint: ep.clone(),
                    phase: Phase::Wait,
                },
                K::Timeout,
                0x4342_0222,
                No,
            ),
            (
                Error::Timeout {
                    endpoint: ep.clone(),
                    phase: Phase::Send,
                },
                K::Timeout,
                0x4342_0220,
                No,
            ),
            (
                Error::Timeout {
                    endpoint: ep.clone(),
                    phase: Phase::Receive,
                },
                K::Timeout,
                0x4342_0221,
                Maybe,
            ),
            (
                Error::Send {
                    endpoint: ep.clone(),
                    source: io(),
                },
                K::CommFailure,
                0x4342_0201,
                No,
            ),
            (
                Error::Receive {
                    endpoint: ep.clone(),
                    source: io(),
                },
                K::CommFailure,
                0x4342_0202,
                Maybe,
            ),
            (
                Error::ConnectionClosed {
                    endpoint: ep.clone(),
                },
                K::CommFailure,
                0x4342_0203,
                Maybe,
            ),
            (
                Error::Protocol {
                    endpoint: ep.clone(),
                    source: ConnectionError::Closed,
                },
                K::CommFailure,
                0x4342_0204,
                Maybe,
            ),
            (
                Error::UnexpectedMessage {
                    endpoint: ep.clone(),
                    message: "a Request",
                },
                K::CommFailure,
                0x4342_0204,
                Maybe,
            ),
            (
                Error::MessageError {
                    endpoint: ep.clone(),
                },
                K::CommFailure,
                0x4342_0205,
                No,
            ),
            (
                Error::BatchSend {
                    endpoint: ep.clone(),
                    count: 3,
                    source: io(),
                },
                K::CommFailure,
                0x4342_0206,
                Maybe,
            ),
            (
                Error::OnewaysLost {
                    endpoint: ep.clone(),
                    count: 2,
                },
                K::CommFailure,
                0x4342_4e03,
                No,
            ),
            (
                Error::FlushLost { count: 2 },
                K::CommFailure,
                0x4342_4e03,
                Maybe,
            ),
            (
                Error::ForwardLimit { limit: 8 },
                K::Transient,
                0x4342_4e01,
                No,
            ),
            (
                Error::ResendLimit {
                    endpoint: ep.clone(),
                    resends: 16,
                },
                K::Transient,
                0x4342_4e02,
                No,
            ),
            (
                Error::PoolPoisoned {
                    endpoint: ep.clone(),
                },
                K::Transient,
                0x4342_0211,
                No,
            ),
            (Error::NoUsableProfile, K::InvObjref, 0x4342_0230, No),
            (
                Error::GiopVersion { minor: 9 },
                K::InvObjref,
                0x4342_0231,
                No,
            ),
            (Error::StartRequest, K::Marshal, 0x4342_0240, No),
            (
                Error::EncodeRequest(ConnectionError::Closed),
                K::Marshal,
                0x4342_0240,
                No,
            ),
            (
                Error::MarshalArguments(marshal.clone()),
                K::Marshal,
                0x4342_0001,
                No,
            ),
            (
                Error::MarshalArguments(MarshalError::BoundExceeded {
                    length: 3,
                    bound: 2,
                }),
                K::BadParam,
                0x4342_0009,
                No,
            ),
            (
                Error::DecodeReply(GiopError::Marshal(marshal.clone())),
                K::Marshal,
                0x4342_0001,
                Yes,
            ),
            (
                Error::DecodeForward(GiopError::Marshal(marshal.clone())),
                K::Marshal,
                0x4342_0001,
                No,
            ),
            (Error::AddressingMode, K::Marshal, 0x4342_0241, No),
            (Error::NoObjectKey, K::ObjectNotExist, 0x4342_0250, No),
            (Error::NoReply, K::Internal, 0x4342_0260, Maybe),
            (Error::RepliedTwice, K::BadInvOrder, 0x4f4d_0009, Yes),
            (
                Error::EncodeReply(GiopError::Marshal(marshal)),
                K::Marshal,
                0x4342_0001,
                Yes,
            ),
            (
                Error::SendReply { source: io() },
                K::CommFailure,
                0x4342_0207,
                Yes,
            ),
            (Error::IncarnationLost, K::Internal, 0x4342_0262, No),
            (
                Error::NoInterfaceRepository,
                K::NoImplement,
                0x4342_0270,
                No,
            ),
            (
                Error::NotOfType {
                    repository_id: "IDL:Bench:1.0",
                },
                K::BadParam,
                0x4342_02a0,
                No,
            ),
            (
                Error::ThreadSpawn { source: io() },
                K::NoResources,
                0x4342_0280,
                No,
            ),
            (Error::DeferredLost, K::Internal, 0x4342_0261, Maybe),
            (
                Error::Listen { source: io() },
                K::Initialize,
                0x4342_0290,
                No,
            ),
            (Error::NoEndpoint, K::Initialize, 0x4342_0291, No),
        ];
        for (error, kind, minor, completed) in rows {
            let shown = error.to_string();
            let e = SystemException::from(error);
            assert_eq!(
                (e.kind, e.minor, e.completed),
                (kind, minor, completed),
                "{e}"
            );
            // The detail is shown, and equality (what the wire carries) ignores it.
            assert!(e.to_string().ends_with(&format!(": {shown}")), "{e}");
            assert_eq!(e, SystemException::new(kind, minor).completed(completed));
            assert_eq!(e.to_body(), e.clone().without_detail().to_body());
        }
        // The public constants that predate this table keep their values.
        assert_eq!(crate::client::MINOR_FORWARD_LIMIT, 0x4342_4e01);
        assert_eq!(crate::client::MINOR_RETRIES_EXHAUSTED, 0x4342_4e02);
        assert_eq!(crate::client::MINOR_ONEWAYS_LOST, 0x4342_4e03);
        assert_eq!(
            crate::orb::corbaname_minor::OBJECT_NOT_EXIST_NOT_FOUND,
            0x4342_0251
        );
    }

    /// A detail costs one word: a call's `Result` stays two words, returned in registers.
    #[test]
    fn system_exception_stays_small() {
        assert_eq!(std::mem::size_of::<SystemException>(), 16);
        assert_eq!(std::mem::size_of::<Result<(), SystemException>>(), 16);
    }

    /// A refused connect shows the endpoint, the phase and the OS error, and the detail
    /// can be matched on.
    #[test]
    fn connect_refused_says_where_and_why() {
        // A port nothing listens on: bound, then closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let endpoint = tcp(port);
        let Err(os) = endpoint.connect(Duration::from_secs(5), &Default::default()) else {
            panic!("connected to a closed port");
        };
        let os_text = os.to_string();
        let e = SystemException::from(Error::Connect {
            endpoint,
            source: os,
        });
        let shown = e.to_string();
        assert!(
            shown.starts_with("TRANSIENT (minor 0x4f4d0002, completed NO): "),
            "{shown}"
        );
        assert!(shown.contains(&format!("tcp 127.0.0.1:{port}")), "{shown}");
        assert!(shown.contains("connect"), "{shown}");
        assert!(shown.contains(&os_text), "{shown}");
        let detail = e.detail().and_then(|d| d.downcast_ref::<Error>());
        assert!(matches!(detail, Some(Error::Connect { .. })), "{e:?}");
        let source = e.source().and_then(|d| d.source());
        assert_eq!(
            source
                .and_then(|s| s.downcast_ref::<io::Error>())
                .map(|s| s.kind()),
            Some(io::ErrorKind::ConnectionRefused)
        );
    }

    /// Through the ORB's call path: a call to a closed port is TRANSIENT and says where and
    /// why; a call to a server that never replies is TIMEOUT in the receive phase.
    #[test]
    fn calls_report_endpoint_and_phase() {
        let (orb, _) = crate::Orb::init(Vec::<String>::new()).unwrap();
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let obj = orb
            .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{closed}/k"))
            .unwrap();
        let e = obj
            .invoke("op", |_| Ok(()), |_| Ok(()), crate::no_user)
            .unwrap_err();
        assert_eq!(
            (e.kind, e.minor, e.completed),
            (
                SystemExceptionKind::Transient,
                minor::TRANSIENT_CONNECT_FAILED,
                CompletionStatus::No
            )
        );
        let shown = e.to_string();
        assert!(
            shown.contains(&format!("connect to tcp 127.0.0.1:{closed} failed: ")),
            "{shown}"
        );
        assert!(shown.contains("refused"), "{shown}");

        // Accepts, reads, never replies.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = silent.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = silent.accept().unwrap();
            let _ = io::copy(&mut s, &mut io::sink());
        });
        let obj = orb
            .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{port}/k"))
            .unwrap();
        let obj = orb
            .object_with_timeout(&obj, Duration::from_millis(50))
            .unwrap();
        let e = obj
            .invoke("op", |_| Ok(()), |_| Ok(()), crate::no_user)
            .unwrap_err();
        assert_eq!(
            (e.kind, e.minor, e.completed),
            (
                SystemExceptionKind::Timeout,
                minor::TIMEOUT_RECEIVE,
                CompletionStatus::Maybe
            )
        );
        assert!(
            e.to_string()
                .ends_with(&format!(": receive from tcp 127.0.0.1:{port} timed out")),
            "{e}"
        );
        orb.destroy();
        server.join().unwrap();
    }

    /// A TIMEOUT says in which phase and where.
    #[test]
    fn timeout_says_the_phase() {
        let e = SystemException::from(Error::Timeout {
            endpoint: tcp(5002),
            phase: Phase::Receive,
        });
        assert_eq!(
            e.to_string(),
            "TIMEOUT (minor 0x43420221, completed MAYBE): receive from tcp 127.0.0.1:5002 timed out"
        );
        let e = SystemException::from(Error::Timeout {
            endpoint: Address::Unix("/tmp/s".into()),
            phase: Phase::Send,
        });
        assert!(
            e.to_string().ends_with(": send to unix /tmp/s timed out"),
            "{e}"
        );
    }
}
