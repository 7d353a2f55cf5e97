//! Errors of the GIOP layer: what a peer's bytes can do wrong, and what a caller can ask for
//! that GIOP cannot express.

use corbina_cdr::MarshalError;
use thiserror::Error;

use crate::header::MsgType;

/// Why a GIOP message could not be framed, decoded, encoded, fragmented or reassembled.
///
/// Errors from the framer and the reassembler mean the connection is out of step with its
/// peer: the runtime answers with a MessageError and closes it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum GiopError {
    /// The CDR inside a message is malformed.
    #[error(transparent)]
    Marshal(#[from] MarshalError),
    /// The first four octets are not `GIOP`.
    #[error("bad magic {0:02x?}: not a GIOP message")]
    BadMagic([u8; 4]),
    /// A GIOP version this crate does not speak (1.0 to 1.2 only).
    #[error("unsupported GIOP version {major}.{minor}")]
    UnsupportedVersion {
        /// Major version octet.
        major: u8,
        /// Minor version octet.
        minor: u8,
    },
    /// A message type octet with no meaning in the message's GIOP version.
    #[error("unknown message type {msg_type} for GIOP 1.{minor}")]
    UnknownMessageType {
        /// The octet.
        msg_type: u8,
        /// GIOP minor version of the header.
        minor: u8,
    },
    /// A header announces more bytes than the configured maximum.
    #[error("message of {size} bytes exceeds the limit of {limit}")]
    MessageTooLarge {
        /// Announced size (body or reassembled total).
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Fewer bytes than the header says (or than a header needs).
    #[error("truncated message: {needed} bytes needed, {available} available")]
    Truncated {
        /// Bytes the message needs.
        needed: usize,
        /// Bytes there are.
        available: usize,
    },
    /// A decoder for one message type was handed another.
    #[error("expected a {expected:?} message, found {found:?}")]
    WrongMessageType {
        /// What the decoder handles.
        expected: MsgType,
        /// What the header says.
        found: MsgType,
    },
    /// A reply status outside `ReplyStatusType`.
    #[error("unknown reply status {0}")]
    UnknownReplyStatus(u32),
    /// A locate status outside `LocateStatusType`.
    #[error("unknown locate status {0}")]
    UnknownLocateStatus(u32),
    /// A TargetAddress discriminator other than KeyAddr, ProfileAddr, ReferenceAddr.
    #[error("unknown addressing disposition {0}")]
    UnknownAddressingDisposition(i16),
    /// A completion status other than YES, NO, MAYBE.
    #[error("unknown completion status {0}")]
    UnknownCompletionStatus(u32),
    /// GIOP 1.0 and 1.1 can only address a target by object key.
    #[error("GIOP 1.{minor} can only address a target by object key")]
    KeyAddressRequired {
        /// GIOP minor version asked for.
        minor: u8,
    },
    /// A message that cannot be fragmented carries the more-fragments flag, or a message
    /// needs fragmenting where GIOP does not allow it.
    #[error("{msg_type:?} cannot be fragmented at GIOP 1.{minor}")]
    NotFragmentable {
        /// The message type.
        msg_type: MsgType,
        /// GIOP minor version.
        minor: u8,
    },
    /// A Fragment that continues no message in progress.
    #[error("fragment for no message in progress (request id {request_id:?})")]
    UnexpectedFragment {
        /// The fragment's request id (GIOP 1.2), none at 1.1.
        request_id: Option<u32>,
    },
    /// A second fragmented message starts while one with the same key is in progress.
    #[error("a fragmented message is already in progress (request id {request_id:?})")]
    DuplicateFragmentedMessage {
        /// The request id (GIOP 1.2), none at 1.1.
        request_id: Option<u32>,
    },
    /// Fragments held for reassembly exceed the configured cap.
    #[error("reassembly would hold {held} bytes, over the limit of {limit}")]
    ReassemblyLimitExceeded {
        /// Bytes that would be held.
        held: u64,
        /// The cap.
        limit: u64,
    },
    /// The receiving end's memory budget, shared with its other connections, is spent and
    /// this connection holds the most of it.
    #[error("receive memory budget spent: this connection would hold {held} bytes")]
    ReceiveBudgetExceeded {
        /// Bytes the connection would hold for receiving.
        held: u64,
    },
    /// A maximum fragment size too small to carry headers and data.
    #[error("maximum fragment size {0} is too small")]
    FragmentSizeTooSmall(usize),
}

/// Result alias for the GIOP layer.
pub type Result<T, E = GiopError> = std::result::Result<T, E>;
