//! What a connection sends: requests (client role), replies and locate replies (server role),
//! and the header-only control messages. Each GIOP sending rule is here once: the code-set
//! context on the first request, request ids, empty bodies unpadded (in
//! [`MessageWriter::finish`]), fragmentation above the connection's fragment size, and
//! FORWARD_PERM only at GIOP 1.2.

use corbina_cdr::{ByteOrder, CdrWriter, CodeSets};

use crate::cancel::CancelRequestHeader;
use crate::error::{GiopError, Result};
use crate::fragmenter::{fragment_message_avoiding, OutgoingFragment};
use crate::header::{MessageHeader, MsgType, Version, HEADER_LEN};
use crate::locate::{LocateReplyHeader, LocateStatus};
use crate::message::{begin_body, end_message, MessageWriter};
use crate::reply::{ReplyHeader, ReplyStatus};
use crate::request::{encode_1_2_key, RequestHeaderRef, RESPONSE_NONE, SYNC_WITH_TARGET};
use crate::service_context::ServiceContextList;
use crate::target_address::TargetAddress;

use super::{ConnectionError, GiopConnection, InFlight, State, NO_CONTEXTS};

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
        // Not GIOP 1.1: its fragments' data is aligned from each Fragment header and no
        // primitive may straddle two (CORBA 3.0 §15.4.9), which a split of the finished
        // message can only keep when it falls 4 past a multiple of 8, right inside any
        // 8-byte primitive there (omniORB then closes the connection). A whole message is
        // always valid.
        let fragment_size = fragment_size
            .map(|f| f as usize)
            .filter(|&f| version.minor >= 2 && writer.len() > f);
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
        fragment_message_avoiding(
            &self.writer.segments(),
            self.fragment_size.unwrap_or(usize::MAX),
            self.writer.uncuttable(),
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

/// What a Request is started with ([`GiopConnection::start_request`]).
#[derive(Debug, Clone, Copy)]
pub struct RequestStart<'r> {
    /// The request's GIOP version.
    pub version: Version,
    /// The transmission code sets wanted, if none are fixed yet on the connection.
    pub code_sets: CodeSets,
    /// The object the request is for.
    pub target: &'r TargetAddress,
    /// The operation's name.
    pub operation: &'r str,
    /// Whether a reply is awaited (twoway).
    pub response_expected: bool,
    /// Service contexts of the caller's (the connection adds CODE_SETS to its first
    /// request).
    pub contexts: &'r ServiceContextList,
    /// `None`: the connection's next id; `Some`: an id taken earlier with
    /// [`GiopConnection::reserve_request_id`].
    pub request_id: Option<u32>,
}

impl<'r> RequestStart<'r> {
    /// A request on the next id, with no service contexts of the caller's.
    pub fn new(
        version: Version,
        code_sets: CodeSets,
        target: &'r TargetAddress,
        operation: &'r str,
        response_expected: bool,
    ) -> RequestStart<'r> {
        RequestStart {
            version,
            code_sets,
            target,
            operation,
            response_expected,
            contexts: &NO_CONTEXTS,
            request_id: None,
        }
    }
}

/// A Request being marshalled: the caller writes the arguments into
/// [`OutgoingRequest::body`], then hands it to
/// [`GiopConnection::finish_request`](super::GiopConnection::finish_request).
#[derive(Debug)]
pub struct OutgoingRequest<'a> {
    pub(crate) writer: MessageWriter<'a>,
    pub(crate) request_id: u32,
    /// Whether the id was reserved (used up already) rather than the connection's next.
    pub(crate) reserved: bool,
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
        self.writer.into_buffer()
    }
}

/// The header bytes (GIOP header through the operation name) of the last GIOP 1.2 Request
/// to an object key that [`GiopConnection::request`] wrote, with what they were made of:
/// the next request with the same key, operation and response flags copies them and
/// patches its own id in (compared by content, never by address).
#[derive(Debug, Default)]
pub(crate) struct RequestHead {
    bytes: Vec<u8>,
    key_len: usize,
    op_len: usize,
    response_flags: u8,
}

/// Where the object key starts in a GIOP 1.2 Request to a key: the 12-byte message header,
/// the request id, the response flags and 3 reserved octets, the addressing disposition
/// and 2 octets of padding, the key's length.
const KEY_AT: usize = HEADER_LEN + 16;

impl RequestHead {
    /// Where the operation name starts: after the key, its padding and its length.
    #[inline]
    fn op_at(&self) -> usize {
        KEY_AT + self.key_len + (self.key_len.wrapping_neg() & 3) + 4
    }

    /// Whether the kept header is the one for `key`, `operation` and `response_flags`.
    #[inline]
    fn is(&self, key: &[u8], operation: &str, response_flags: u8) -> bool {
        let op_at = self.op_at();
        self.response_flags == response_flags
            && self.key_len == key.len()
            && self.op_len == operation.len()
            && self.bytes.get(KEY_AT..KEY_AT + key.len()) == Some(key)
            && self.bytes.get(op_at..op_at + operation.len()) == Some(operation.as_bytes())
    }

    /// Keeps `bytes`, a header just written by `encode_1_2_key` after the message header.
    #[cold]
    #[inline(never)]
    fn keep(&mut self, bytes: &[u8], key_len: usize, op_len: usize, response_flags: u8) {
        self.bytes.clear();
        self.bytes.extend_from_slice(bytes);
        self.key_len = key_len;
        self.op_len = op_len;
        self.response_flags = response_flags;
    }
}

/// Why [`GiopConnection::request`] sent nothing.
#[derive(Debug, thiserror::Error)]
pub enum RequestError<E> {
    /// The connection cannot carry the request (closed, wrong role, header not encodable).
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    /// The caller's marshalling of the arguments failed.
    #[error("marshalling the arguments failed: {0}")]
    Arguments(E),
}

impl GiopConnection {
    /// A whole Request in one call, the client's fast path: what
    /// [`GiopConnection::start_request`], writing the arguments with `encode` and
    /// [`GiopConnection::finish_request`] do, without the request in progress moving between
    /// them. Gives the request id and the message to write. The message is marshalled in
    /// `buffer`'s allocation; when nothing is sent `buffer` gets it back.
    ///
    /// ```
    /// use corbina_cdr::CodeSets;
    /// use corbina_giop::connection::{GiopConnection, Role, Settings};
    /// use corbina_giop::{ObjectKey, TargetAddress, Version};
    ///
    /// let mut client = GiopConnection::new(Settings::new(Role::Client));
    /// let target = TargetAddress::Key(ObjectKey::from("key"));
    /// let mut buffer = Vec::new();
    /// let mut ids = Vec::new();
    /// for _ in 0..2 {
    ///     let (id, out) = client.request(
    ///         &mut buffer, Version::V1_2, CodeSets::UNICODE, &target, "echo", true,
    ///         |w| w.write_string("hi"),
    ///     )?;
    ///     ids.push(id);
    ///     let _one_write: &[u8] = out.contiguous().unwrap();
    ///     buffer = out.into_buffer(); // for the next request
    /// }
    /// assert_eq!(ids, [2, 4]); // a client's request ids are even
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn request<'a, E>(
        &mut self,
        buffer: &mut Vec<u8>,
        version: Version,
        code_sets: CodeSets,
        target: &TargetAddress,
        operation: &str,
        response_expected: bool,
        encode: impl FnOnce(&mut CdrWriter<'a>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(u32, Outgoing<'a>), RequestError<E>> {
        // The steady state: code sets fixed and announced, the connection open. Anything
        // else (the first request, a closed connection) takes the general path.
        let fixed = match self.code_sets {
            Some(c) if self.state == State::Open && (self.code_sets_sent || version.minor == 0) => {
                c
            }
            _ => {
                return self.request_general(
                    buffer,
                    version,
                    code_sets,
                    target,
                    operation,
                    response_expected,
                    encode,
                )
            }
        };
        if !self.sends_requests() {
            return Err(RequestError::Connection(ConnectionError::Unexpected {
                msg_type: MsgType::Request,
                role: self.settings.role,
            }));
        }
        let request_id = self.next_request_id;
        let response_flags = if response_expected {
            SYNC_WITH_TARGET
        } else {
            RESPONSE_NONE
        };
        // Written in place, in one writer (no message writer moved through `Result`s):
        // the same steps as `MessageWriter::request_ref`, `body` and `finish`.
        let order = self.settings.byte_order;
        let mut w = CdrWriter::from_vec(std::mem::take(buffer), order, version.context(fixed));
        // No service contexts once the code sets are announced: at GIOP 1.2 to a key, the
        // last such header again with this id when it was to the same key and operation
        // (the steady state of a strand), else the header in a few pieces (what
        // `RequestHeaderRef::encode` does first, inlined here).
        let written = match target {
            TargetAddress::Key(key) if version.minor >= 2 => {
                let head = &mut self.request_head;
                if head.is(&key.0, operation, response_flags) {
                    w.write_bytes(&head.bytes);
                    w.patch_ulong(HEADER_LEN, request_id);
                    true
                } else {
                    MessageHeader::new(version, order, MsgType::Request).write(&mut w);
                    let ok = encode_1_2_key(&mut w, request_id, response_flags, &key.0, operation);
                    if ok {
                        head.keep(
                            w.owned_bytes(),
                            key.0.len(),
                            operation.len(),
                            response_flags,
                        );
                    }
                    ok
                }
            }
            _ => {
                MessageHeader::new(version, order, MsgType::Request).write(&mut w);
                false
            }
        };
        if !written {
            let header = RequestHeaderRef {
                request_id,
                response_flags,
                target,
                operation,
                service_context: &NO_CONTEXTS,
                requesting_principal: &[],
            };
            if let Err(e) = header.encode(&mut w, version.minor) {
                *buffer = w.into_owned_buffer();
                return Err(RequestError::Connection(e.into()));
            }
        }
        let body_at = (version.minor >= 2).then(|| begin_body(&mut w));
        if let Err(e) = encode(&mut w) {
            *buffer = w.into_owned_buffer();
            return Err(RequestError::Arguments(e));
        }
        if let Err(e) = end_message(&mut w, body_at) {
            *buffer = w.into_owned_buffer();
            return Err(RequestError::Connection(e.into()));
        }
        self.next_request_id = request_id.wrapping_add(2);
        if response_expected {
            self.in_flight.insert(InFlight {
                request_id,
                version,
                cancelled: false,
            });
        }
        Ok((
            request_id,
            Outgoing::new(w, version, self.settings.fragment_size),
        ))
    }

    /// [`GiopConnection::request`] through the general calls (the first request of a
    /// connection carries the CODE_SETS context; the errors of a closed one).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn request_general<'a, E>(
        &mut self,
        buffer: &mut Vec<u8>,
        version: Version,
        code_sets: CodeSets,
        target: &TargetAddress,
        operation: &str,
        response_expected: bool,
        encode: impl FnOnce(&mut CdrWriter<'a>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(u32, Outgoing<'a>), RequestError<E>> {
        let start = RequestStart::new(version, code_sets, target, operation, response_expected);
        let mut req = self.start_request(std::mem::take(buffer), &start)?;
        let request_id = req.request_id();
        if let Err(e) = encode(req.body()) {
            *buffer = req.abandon();
            return Err(RequestError::Arguments(e));
        }
        Ok((request_id, self.finish_request(req)?))
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

    /// A whole Reply in one call, the server's fast path: what
    /// [`ReplyContext::start_reply`], writing the body with `encode` and
    /// [`ReplyContext::finish_reply`] do, in one writer (nothing moved between them). The
    /// reply is marshalled in `buffer`'s allocation; when it fails `buffer` gets it back.
    #[inline]
    pub fn reply<'a, E: From<GiopError>>(
        &self,
        buffer: &mut Vec<u8>,
        status: ReplyStatus,
        encode: impl FnOnce(&mut CdrWriter<'a>) -> std::result::Result<(), E>,
    ) -> std::result::Result<Outgoing<'a>, E> {
        let status = match status {
            ReplyStatus::LocationForwardPerm if !forward_perm_allowed(self.version) => {
                ReplyStatus::LocationForward
            }
            s => s,
        };
        let (version, order) = (self.version, self.byte_order);
        let mut w = CdrWriter::from_vec(
            std::mem::take(buffer),
            order,
            version.context(self.code_sets),
        );
        MessageHeader::new(version, order, MsgType::Reply).write(&mut w);
        if let Err(e) = ReplyHeader::new(self.request_id, status).encode(&mut w, version.minor) {
            *buffer = w.into_owned_buffer();
            return Err(e.into());
        }
        let body_at = (version.minor >= 2).then(|| begin_body(&mut w));
        if let Err(e) = encode(&mut w) {
            *buffer = w.into_owned_buffer();
            return Err(e);
        }
        if let Err(e) = end_message(&mut w, body_at) {
            *buffer = w.into_owned_buffer();
            return Err(e.into());
        }
        Ok(Outgoing::new(w, version, self.fragment_size))
    }

    /// [`ReplyContext::reply`] with service contexts in the header (what request
    /// interceptors add); the plain fast path stays without them.
    pub fn reply_with_contexts<'a, E: From<GiopError>>(
        &self,
        buffer: &mut Vec<u8>,
        status: ReplyStatus,
        contexts: &crate::service_context::ServiceContextList,
        encode: impl FnOnce(&mut CdrWriter<'a>) -> std::result::Result<(), E>,
    ) -> std::result::Result<Outgoing<'a>, E> {
        let status = match status {
            ReplyStatus::LocationForwardPerm if !forward_perm_allowed(self.version) => {
                ReplyStatus::LocationForward
            }
            s => s,
        };
        let (version, order) = (self.version, self.byte_order);
        let mut w = CdrWriter::from_vec(
            std::mem::take(buffer),
            order,
            version.context(self.code_sets),
        );
        MessageHeader::new(version, order, MsgType::Reply).write(&mut w);
        let header = ReplyHeader {
            service_context: contexts.clone(),
            ..ReplyHeader::new(self.request_id, status)
        };
        if let Err(e) = header.encode(&mut w, version.minor) {
            *buffer = w.into_owned_buffer();
            return Err(e.into());
        }
        let body_at = (version.minor >= 2).then(|| begin_body(&mut w));
        if let Err(e) = encode(&mut w) {
            *buffer = w.into_owned_buffer();
            return Err(e);
        }
        if let Err(e) = end_message(&mut w, body_at) {
            *buffer = w.into_owned_buffer();
            return Err(e.into());
        }
        Ok(Outgoing::new(w, version, self.fragment_size))
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

    /// CloseConnection in `version`: what [`CloseState`](super::CloseState) decides to send.
    pub(crate) fn close_connection(version: Version, order: ByteOrder) -> Self {
        ControlMessage::header_only(version, order, MsgType::CloseConnection)
    }

    /// MessageError in `version`: after bad input, or refusing input
    /// ([`CloseState::refuse`](super::CloseState::refuse), a memory budget).
    pub(crate) fn message_error(version: Version, order: ByteOrder) -> Self {
        ControlMessage::header_only(version, order, MsgType::MessageError)
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
