//! What a connection sends: requests (client role), replies and locate replies (server role),
//! and the header-only control messages. Each GIOP sending rule is here once: the code-set
//! context on the first request, request ids, empty bodies unpadded (in
//! [`MessageWriter::finish`]), fragmentation above the connection's fragment size, and
//! FORWARD_PERM only at GIOP 1.2.

use corbina_cdr::{ByteOrder, CdrWriter, CodeSets};

use crate::cancel::CancelRequestHeader;
use crate::error::Result;
use crate::fragmenter::{fragment_message, OutgoingFragment};
use crate::header::{MessageHeader, MsgType, Version, HEADER_LEN};
use crate::locate::{LocateReplyHeader, LocateStatus};
use crate::message::MessageWriter;
use crate::reply::{ReplyHeader, ReplyStatus};

/// A finished message ready to be written: one contiguous buffer in the common case, the
/// writer's segments when large blocks were spliced in by reference, or fragments when it is
/// larger than the connection's fragment size.
#[derive(Debug)]
pub struct Outgoing<'a> {
    writer: CdrWriter<'a>,
    fragment_size: Option<usize>,
}

impl<'a> Outgoing<'a> {
    #[inline]
    pub(crate) fn new(writer: CdrWriter<'a>, version: Version, fragment_size: Option<u32>) -> Self {
        let fragment_size = fragment_size
            .map(|f| f as usize)
            .filter(|&f| version.minor >= 1 && writer.len() > f);
        Outgoing {
            writer,
            fragment_size,
        }
    }

    /// Length on the wire (fragment headers not counted).
    pub fn len(&self) -> usize {
        self.writer.len()
    }

    /// Always false: a message has a header.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The whole message in one buffer, when it is sent unfragmented and nothing was spliced
    /// in (the common case: one `write`).
    #[inline]
    pub fn contiguous(&self) -> Option<&[u8]> {
        (self.fragment_size.is_none() && self.writer.is_contiguous())
            .then(|| self.writer.owned_bytes())
    }

    /// The message as the messages to write, in order: itself, or its fragments. Each
    /// gives the slices of one vectored write ([`OutgoingFragment::io_slices`]).
    pub fn fragments(&self) -> Result<Vec<OutgoingFragment<'_>>> {
        fragment_message(
            &self.writer.segments(),
            self.fragment_size.unwrap_or(usize::MAX),
        )
    }

    /// Whether it goes out as several messages.
    pub fn is_fragmented(&self) -> bool {
        self.fragment_size.is_some()
    }

    /// The buffer back, for the next message.
    #[inline]
    pub fn into_buffer(self) -> Vec<u8> {
        self.writer.into_owned_buffer()
    }
}

/// A Request being marshalled: the caller writes the arguments into
/// [`OutgoingRequest::body`], then hands it to
/// [`GiopConnection::finish_request`](super::GiopConnection::finish_request).
#[derive(Debug)]
pub struct OutgoingRequest<'a> {
    pub(crate) writer: MessageWriter<'a>,
    pub(crate) request_id: u32,
    pub(crate) version: Version,
    pub(crate) response_expected: bool,
    pub(crate) sends_code_sets: bool,
    pub(crate) code_sets: CodeSets,
}

impl<'a> OutgoingRequest<'a> {
    /// The request id the connection gave it.
    #[inline]
    pub fn request_id(&self) -> u32 {
        self.request_id
    }

    /// The transmission code sets in force on the connection.
    #[inline]
    pub fn code_sets(&self) -> CodeSets {
        self.code_sets
    }

    /// The writer for the arguments (8-aligned at GIOP 1.2; left empty, unpadded).
    #[inline]
    pub fn body(&mut self) -> &mut CdrWriter<'a> {
        self.writer.body()
    }

    /// Gives the buffer back without sending (marshalling failed).
    pub fn abandon(self) -> Vec<u8> {
        match self.writer.finish() {
            Ok(w) => w.into_owned_buffer(),
            Err(_) => Vec::new(),
        }
    }
}

/// Everything needed to answer one incoming Request or LocateRequest, copied out of the
/// connection so that the reply can be written while the request's arguments are still
/// being read from the receive buffer (and from another thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplyContext {
    /// The request's id.
    pub request_id: u32,
    /// The request's GIOP version: the reply uses it.
    pub version: Version,
    /// The connection's transmission code sets.
    pub code_sets: CodeSets,
    /// Byte order of our messages.
    pub byte_order: ByteOrder,
    /// Whether the client waits for a reply.
    pub response_expected: bool,
    pub(crate) fragment_size: Option<u32>,
}

/// FORWARD_PERM (reply status and locate status) exists from GIOP 1.2; before that a
/// permanent forward is sent as an ordinary one.
fn forward_perm_allowed(version: Version) -> bool {
    version.minor >= 2
}

impl ReplyContext {
    /// Starts the Reply (in `buffer`, reused). A permanent forward becomes an ordinary one
    /// below GIOP 1.2.
    #[inline]
    pub fn start_reply<'a>(&self, buffer: Vec<u8>, status: ReplyStatus) -> Result<ReplyWriter<'a>> {
        let status = match status {
            ReplyStatus::LocationForwardPerm if !forward_perm_allowed(self.version) => {
                ReplyStatus::LocationForward
            }
            s => s,
        };
        let header = ReplyHeader::new(self.request_id, status);
        let writer = MessageWriter::reply_in(
            buffer,
            self.version,
            self.byte_order,
            self.code_sets,
            &header,
        )?;
        Ok(ReplyWriter { writer })
    }

    /// Finishes a Reply: size patched, empty body unpadded, fragmented if large.
    #[inline]
    pub fn finish_reply<'a>(&self, reply: ReplyWriter<'a>) -> Result<Outgoing<'a>> {
        let w = reply.writer.finish()?;
        Ok(Outgoing::new(w, self.version, self.fragment_size))
    }

    /// Starts a LocateReply; its body (an IOR for the forwards) follows the header unpadded.
    /// A permanent forward becomes an ordinary one below GIOP 1.2.
    pub fn start_locate_reply<'a>(
        &self,
        buffer: Vec<u8>,
        status: LocateStatus,
    ) -> Result<ReplyWriter<'a>> {
        let status = match status {
            LocateStatus::ObjectForwardPerm if !forward_perm_allowed(self.version) => {
                LocateStatus::ObjectForward
            }
            s => s,
        };
        let header = LocateReplyHeader {
            request_id: self.request_id,
            locate_status: status,
        };
        let mut writer = MessageWriter::with_buffer(
            buffer,
            self.version,
            self.byte_order,
            self.code_sets,
            MsgType::LocateReply,
        );
        header.encode(writer.writer())?;
        Ok(ReplyWriter { writer })
    }
}

/// A Reply or LocateReply being marshalled.
#[derive(Debug)]
pub struct ReplyWriter<'a> {
    writer: MessageWriter<'a>,
}

impl<'a> ReplyWriter<'a> {
    /// The writer for the body (8-aligned at GIOP 1.2 for a Reply; left empty, unpadded).
    #[inline]
    pub fn body(&mut self) -> &mut CdrWriter<'a> {
        self.writer.body()
    }
}

/// A header-only (or nearly) message the connection itself decided to send: MessageError,
/// CloseConnection, CancelRequest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlMessage {
    bytes: [u8; HEADER_LEN + 4],
    len: u8,
}

impl ControlMessage {
    pub(crate) fn header_only(version: Version, order: ByteOrder, msg_type: MsgType) -> Self {
        let mut bytes = [0; HEADER_LEN + 4];
        bytes[..HEADER_LEN].copy_from_slice(&MessageHeader::new(version, order, msg_type).encode());
        ControlMessage {
            bytes,
            len: HEADER_LEN as u8,
        }
    }

    pub(crate) fn cancel_request(version: Version, order: ByteOrder, request_id: u32) -> Self {
        let mut bytes = [0; HEADER_LEN + 4];
        let mut w =
            MessageWriter::cancel_request(version, order, &CancelRequestHeader { request_id })
                .and_then(MessageWriter::finish_bytes)
                .unwrap_or_default();
        w.resize(HEADER_LEN + 4, 0);
        bytes.copy_from_slice(&w);
        ControlMessage {
            bytes,
            len: (HEADER_LEN + 4) as u8,
        }
    }

    /// CloseConnection, in the highest GIOP version the peer has used (`None`: it has sent
    /// nothing yet, so GIOP 1.0, which every peer reads). The connection's own
    /// [`close`](super::GiopConnection::close) sends this; so does a runtime that closes a
    /// connection from another thread or refuses one before reading from it.
    pub fn close_connection(peer_version: Option<Version>, order: ByteOrder) -> Self {
        ControlMessage::header_only(
            peer_version.unwrap_or(Version::V1_0),
            order,
            MsgType::CloseConnection,
        )
    }

    /// The message's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// Its type.
    pub fn msg_type(&self) -> MsgType {
        MsgType::from_octet(self.bytes[7], self.bytes[5]).unwrap_or(MsgType::MessageError)
    }
}
