//! Whole messages: decoding any message into its typed header and body, and writing one.

use std::ops::Range;

use corbina_cdr::{AlignBreak, ByteOrder, CdrContext, CdrReader, CdrWriter, CodeSets};

use crate::cancel::CancelRequestHeader;
use crate::error::{GiopError, Result};
use crate::fragment::FragmentHeader;
use crate::header::{patch_size, MessageHeader, MsgType, Version, HEADER_LEN};
use crate::locate::{LocateReplyHeader, LocateRequestHeader};
use crate::reply::{ReplyHeader, ReplyStatus};
use crate::request::{RequestHeader, RequestHeaderRef, RequestHeaderView};
use crate::service_context::{ServiceContextList, ServiceContextsView};
use crate::target_address::TargetAddressView;

/// A complete GIOP message in memory (header included), as the framer produces it or as the
/// reassembler glues it together from fragments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    header: MessageHeader,
    bytes: Vec<u8>,
    align_breaks: Vec<AlignBreak>,
}

impl Message {
    /// Takes a whole message, checking the header and that `message_size` matches.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Message> {
        let header = MessageHeader::decode_prefix(&bytes)?;
        if bytes.len() != header.total_len() {
            return Err(GiopError::Truncated {
                needed: header.total_len(),
                available: bytes.len(),
            });
        }
        Ok(Message {
            header,
            bytes,
            align_breaks: Vec::new(),
        })
    }

    /// A message whose header the runtime decoded first and whose body it read into its own
    /// buffer: `body` is everything after the 12 header bytes.
    pub fn from_parts(header_bytes: &[u8; HEADER_LEN], body: &[u8]) -> Result<Message> {
        let header = MessageHeader::decode(header_bytes)?;
        if body.len() != header.body_len() {
            return Err(GiopError::Truncated {
                needed: header.total_len(),
                available: HEADER_LEN + body.len(),
            });
        }
        let mut bytes = Vec::with_capacity(HEADER_LEN + body.len());
        bytes.extend_from_slice(header_bytes);
        bytes.extend_from_slice(body);
        Ok(Message {
            header,
            bytes,
            align_breaks: Vec::new(),
        })
    }

    pub(crate) fn reassembled(
        header: MessageHeader,
        bytes: Vec<u8>,
        align_breaks: Vec<AlignBreak>,
    ) -> Message {
        Message {
            header,
            bytes,
            align_breaks,
        }
    }

    /// The GIOP header.
    pub fn header(&self) -> &MessageHeader {
        &self.header
    }

    /// The message bytes, header included.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The memory the message holds, as allocated (what a receive budget counts).
    pub(crate) fn allocated(&self) -> usize {
        self.bytes.capacity() + self.align_breaks.capacity() * std::mem::size_of::<AlignBreak>()
    }

    /// The bytes, for reuse.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Where alignment restarts (reassembled GIOP 1.1 fragments), for CDR readers.
    pub fn align_breaks(&self) -> &[AlignBreak] {
        &self.align_breaks
    }

    /// Decodes the message-type header and locates the body.
    pub fn decode(&self) -> Result<GiopMessage<'_>> {
        decode_message(&self.bytes, &self.align_breaks).map(|(_, m)| m)
    }

    /// Decodes the message-type header, a Request's borrowed from the message
    /// ([`decode_message_view`]).
    pub fn decode_view(&self) -> Result<GiopMessageView<'_>> {
        decode_message_view(&self.bytes, &self.align_breaks).map(|(_, m)| m)
    }

    /// The request id a GIOP 1.2 Request, Reply, LocateRequest, LocateReply, CancelRequest
    /// or Fragment starts with (these all put it first), without decoding the rest.
    pub fn request_id_1_2(&self) -> Option<u32> {
        peek_request_id(&self.header, &self.bytes)
    }
}

pub(crate) fn peek_request_id(h: &MessageHeader, bytes: &[u8]) -> Option<u32> {
    if h.version.minor < 2 || matches!(h.msg_type, MsgType::CloseConnection | MsgType::MessageError)
    {
        return None;
    }
    let b = *bytes.get(HEADER_LEN..HEADER_LEN + 4)?.first_chunk::<4>()?;
    Some(match h.byte_order {
        ByteOrder::Big => u32::from_be_bytes(b),
        ByteOrder::Little => u32::from_le_bytes(b),
    })
}

/// The body of a message: a range of the message's bytes plus what a CDR reader needs to
/// read it in place (byte order, alignment origin at the message start, align breaks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Body<'a> {
    message: &'a [u8],
    start: usize,
    byte_order: ByteOrder,
    minor: u8,
    align_breaks: &'a [AlignBreak],
}

impl<'a> Body<'a> {
    /// The body of an unfragmented GIOP 1.2 message, from `start` (8-aligned) to its end.
    #[inline]
    pub(crate) fn in_place_1_2(message: &'a [u8], start: usize, byte_order: ByteOrder) -> Self {
        Body {
            message,
            start,
            byte_order,
            minor: 2,
            align_breaks: &[],
        }
    }

    /// Offsets of the body in the message.
    pub fn range(&self) -> Range<usize> {
        self.start..self.message.len()
    }

    /// The body bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.message.get(self.start..).unwrap_or_default()
    }

    /// Whether there is no body.
    pub fn is_empty(&self) -> bool {
        self.start >= self.message.len()
    }

    /// Body length in bytes.
    pub fn len(&self) -> usize {
        self.message.len().saturating_sub(self.start)
    }

    /// Byte order of the body.
    pub fn byte_order(&self) -> ByteOrder {
        self.byte_order
    }

    /// Alignment restarts within the message (GIOP 1.1 reassembly).
    pub fn align_breaks(&self) -> &'a [AlignBreak] {
        self.align_breaks
    }

    /// A reader over the body, borrowing the message buffer, with the connection's code sets.
    /// Alignment is relative to the message start, as GIOP requires.
    #[inline]
    pub fn reader(&self, code_sets: CodeSets) -> CdrReader<'a> {
        let ctx = CdrContext::GIOP_1_2
            .with_giop_minor(self.minor)
            .with_code_sets(code_sets);
        CdrReader::new(self.message, self.byte_order, ctx)
            .with_align_breaks(self.align_breaks)
            .starting_at(self.start)
    }
}

impl Body<'_> {
    /// The body copied out of the receive buffer, for reading later on another thread. Only
    /// the body is copied, from the 8-aligned offset at or before its start (CDR aligns to
    /// at most 8, relative to the message start, so alignment is kept): an empty body, a null
    /// call's reply, allocates nothing. A body with align breaks (GIOP 1.1 fragments), whose
    /// offsets refer to the whole message, is copied with it.
    #[inline]
    pub fn to_owned_body(&self) -> OwnedBody {
        let from = if self.align_breaks.is_empty() {
            self.start.min(self.message.len()) & !7
        } else {
            0
        };
        OwnedBody {
            message: self.message[from..].to_vec(),
            start: self.start - from,
            byte_order: self.byte_order,
            minor: self.minor,
            align_breaks: self.align_breaks.to_vec(),
        }
    }
}

/// A [`Body`] that owns its message's bytes (see [`Body::to_owned_body`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedBody {
    message: Vec<u8>,
    start: usize,
    byte_order: ByteOrder,
    minor: u8,
    align_breaks: Vec<AlignBreak>,
}

impl OwnedBody {
    /// The body, borrowed.
    pub fn body(&self) -> Body<'_> {
        Body {
            message: &self.message,
            start: self.start,
            byte_order: self.byte_order,
            minor: self.minor,
            align_breaks: &self.align_breaks,
        }
    }

    /// Bytes held.
    pub fn held_bytes(&self) -> usize {
        self.message.len() + self.align_breaks.len() * std::mem::size_of::<AlignBreak>()
    }
}

/// A decoded message: its type-specific header and, where there is one, its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GiopMessage<'a> {
    /// A Request and its arguments.
    Request {
        /// The header.
        header: RequestHeader,
        /// The in/inout arguments.
        body: Body<'a>,
    },
    /// A Reply and its result (or exception, or forward).
    Reply {
        /// The header.
        header: ReplyHeader,
        /// What `reply_status` says.
        body: Body<'a>,
    },
    /// CancelRequest.
    CancelRequest(CancelRequestHeader),
    /// LocateRequest.
    LocateRequest(LocateRequestHeader),
    /// LocateReply and its body (an IOR, a system exception or an addressing mode).
    LocateReply {
        /// The header.
        header: LocateReplyHeader,
        /// What `locate_status` says (not 8-aligned: it follows the header).
        body: Body<'a>,
    },
    /// CloseConnection.
    CloseConnection,
    /// MessageError.
    MessageError,
    /// A Fragment, before reassembly.
    Fragment {
        /// The header.
        header: FragmentHeader,
        /// The data it continues the message with.
        body: Body<'a>,
    },
}

/// Checks the GIOP header and returns it, the message's bytes and a reader after the header.
#[inline]
fn open_message<'a>(
    bytes: &'a [u8],
    align_breaks: &'a [AlignBreak],
) -> Result<(MessageHeader, &'a [u8], CdrReader<'a>)> {
    let header = MessageHeader::decode_prefix(bytes)?;
    let message = bytes
        .get(..header.total_len())
        .ok_or(GiopError::Truncated {
            needed: header.total_len(),
            available: bytes.len(),
        })?;
    let ctx = CdrContext::GIOP_1_2.with_giop_minor(header.version.minor);
    let r = CdrReader::new(message, header.byte_order, ctx)
        .with_align_breaks(align_breaks)
        .starting_at(HEADER_LEN);
    Ok((header, message, r))
}

/// A reader on a message whose header was decoded and checked already (`message` is the
/// whole message, as the connection framed it): the header is not decoded a second time.
#[inline]
fn open_framed<'a>(
    header: &MessageHeader,
    message: &'a [u8],
    align_breaks: &'a [AlignBreak],
) -> CdrReader<'a> {
    let ctx = CdrContext::GIOP_1_2.with_giop_minor(header.version.minor);
    CdrReader::new(message, header.byte_order, ctx)
        .with_align_breaks(align_breaks)
        .starting_at(HEADER_LEN)
}

/// A Request's header (read in place) and arguments, for a message the connection framed,
/// field by field: every form of Request ([`PlainRequest`] is the common one's short path).
pub(crate) fn decode_request_general<'a>(
    header: &MessageHeader,
    message: &'a [u8],
    align_breaks: &'a [AlignBreak],
) -> Result<(RequestHeaderView<'a>, Body<'a>)> {
    let mut r = open_framed(header, message, align_breaks);
    let h = RequestHeaderView::decode(&mut r, header.version.minor)?;
    let body = body_after(header, message, align_breaks, &r, true);
    Ok((h, body))
}

/// The Request of almost every call, read in a few slices rather than field by field: GIOP
/// 1.2, in one piece, addressed by key, an ASCII operation, no service contexts (the
/// layout `RequestHeaderRef` writes in one block). Only where its parts lie: the header
/// view and body (over 250 bytes) are built from it where they are used, so that they are
/// not copied on the way (measured: three `memcpy`s, some 90 instructions per request).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PlainRequest<'a> {
    pub(crate) request_id: u32,
    pub(crate) response_flags: u8,
    key: &'a [u8],
    /// The operation name's bytes, not checked yet: [`OperationName`] checks them.
    pub(crate) operation: &'a [u8],
    body_start: usize,
}

impl<'a> PlainRequest<'a> {
    /// `None`: not that case, or not valid (the general path then gives the error).
    #[inline]
    pub(crate) fn read(
        header: &MessageHeader,
        message: &'a [u8],
        align_breaks: &'a [AlignBreak],
    ) -> Option<PlainRequest<'a>> {
        if header.version.minor < 2 || !align_breaks.is_empty() {
            return None;
        }
        let swap = header.byte_order != ByteOrder::NATIVE;
        let ulong = |at: usize| {
            let v = u32::from_ne_bytes(*message.get(at..)?.first_chunk::<4>()?);
            Some(if swap { v.swap_bytes() } else { v })
        };
        // Offsets from the message start, where CDR alignment is counted from.
        let align4 = |n: usize| n.checked_add(3).map(|n| n & !3);
        // request_id, response_flags, 3 reserved octets, the KeyAddr disposition (a short:
        // zero in either byte order) and its padding, the key's length.
        let request_id = ulong(HEADER_LEN)?;
        let response_flags = *message.get(HEADER_LEN + 4)?;
        if message.get(HEADER_LEN + 8..HEADER_LEN + 10)? != [0, 0] {
            return None;
        }
        let key_at = HEADER_LEN + 16;
        let key_end = key_at.checked_add(ulong(HEADER_LEN + 12)? as usize)?;
        let key = message.get(key_at..key_end)?;
        let op_at = align4(key_end)?.checked_add(4)?;
        let op_end = op_at.checked_add(ulong(op_at - 4)? as usize)?;
        let (&nul, operation) = message.get(op_at..op_end)?.split_last()?;
        if nul != 0 {
            return None;
        }
        let count_at = align4(op_end)?;
        if ulong(count_at)? != 0 {
            return None;
        }
        let end = count_at + 4;
        // GIOP 1.2: a body, if any, starts 8-aligned (at the end when the padding runs past
        // it).
        let body_start = if end < message.len() {
            ((end + 7) & !7).min(message.len())
        } else {
            end
        };
        Some(PlainRequest {
            request_id,
            response_flags,
            key,
            operation,
            body_start,
        })
    }

    /// Its header, as the general decoder reads it, with its operation name `operation`
    /// (checked: [`OperationName::check`]).
    #[inline(always)]
    pub(crate) fn header(&self, operation: &'a str) -> RequestHeaderView<'a> {
        RequestHeaderView {
            request_id: self.request_id,
            response_flags: self.response_flags,
            target: TargetAddressView::Key(self.key),
            operation: std::borrow::Cow::Borrowed(operation),
            service_context: ServiceContextsView::empty(),
            requesting_principal: &[],
        }
    }

    /// Its arguments.
    #[inline(always)]
    pub(crate) fn body(
        &self,
        header: &MessageHeader,
        message: &'a [u8],
        align_breaks: &'a [AlignBreak],
    ) -> Body<'a> {
        Body {
            message,
            start: self.body_start,
            byte_order: header.byte_order,
            minor: header.version.minor,
            align_breaks,
        }
    }
}

/// The operation name of the last [`PlainRequest`] on a connection, checked: a request for
/// the same operation is compared byte for byte, not checked again (the UTF-8 validation
/// was some 70 instructions per request, more than the rest of the header's reading).
#[derive(Debug, Default)]
pub(crate) struct OperationName(String);

impl OperationName {
    /// Longer names are checked every time rather than kept.
    const KEPT: usize = 64;

    /// `bytes` as a name (ASCII, no NUL: what the short path takes; `None` otherwise),
    /// borrowed from the message or from the name kept.
    #[inline]
    pub(crate) fn check<'a>(&'a mut self, bytes: &'a [u8]) -> Option<&'a str> {
        if same_bytes(self.0.as_bytes(), bytes) {
            return Some(&self.0);
        }
        self.check_new(bytes)
    }

    #[cold]
    #[inline(never)]
    fn check_new<'a>(&'a mut self, bytes: &'a [u8]) -> Option<&'a str> {
        if !bytes.iter().all(|&b| b != 0 && b.is_ascii()) {
            return None;
        }
        let name = std::str::from_utf8(bytes).ok()?;
        if name.len() > Self::KEPT {
            return Some(name);
        }
        self.0.clear();
        self.0.push_str(name);
        Some(&self.0)
    }
}

/// `a == b`, for short slices (operation names, object ids): eight bytes at a time, then
/// byte by byte. A `memcmp` call costs more than the whole compare of a short name.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut a8, mut b8) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in (&mut a8).zip(&mut b8) {
        let word = |c: &[u8]| c.first_chunk::<8>().map(|w| u64::from_ne_bytes(*w));
        if word(x) != word(y) {
            return false;
        }
    }
    let mut diff = 0;
    for (x, y) in a8.remainder().iter().zip(b8.remainder()) {
        diff |= x ^ y;
    }
    diff == 0
}

/// A Reply's header and body, for a message the connection framed.
#[inline]
pub(crate) fn decode_reply_framed<'a>(
    header: &MessageHeader,
    message: &'a [u8],
    align_breaks: &'a [AlignBreak],
) -> Result<(ReplyHeader, Body<'a>)> {
    if let Some(fast) = reply_1_2_without_contexts(header, message, align_breaks) {
        return fast;
    }
    let mut r = open_framed(header, message, align_breaks);
    let h = ReplyHeader::decode(&mut r, header.version.minor)?;
    let body = body_after(header, message, align_breaks, &r, true);
    Ok((h, body))
}

/// The Reply of almost every call, read without a CDR reader: GIOP 1.2, in one piece, no
/// service contexts. Its header is three ulongs (request id, reply status, an empty context
/// list) ending at offset 24, where the body starts (8-aligned already). `None`: not that
/// case, nothing read.
#[inline]
fn reply_1_2_without_contexts<'a>(
    header: &MessageHeader,
    message: &'a [u8],
    align_breaks: &'a [AlignBreak],
) -> Option<Result<(ReplyHeader, Body<'a>)>> {
    const BODY_AT: usize = HEADER_LEN + 12;
    if header.version.minor < 2 || !align_breaks.is_empty() {
        return None;
    }
    let [id, status, contexts] = *message.get(HEADER_LEN..BODY_AT)?.as_chunks::<4>().0 else {
        return None;
    };
    let swap = header.byte_order != ByteOrder::NATIVE;
    let ulong = |b: [u8; 4]| {
        let v = u32::from_ne_bytes(b);
        if swap {
            v.swap_bytes()
        } else {
            v
        }
    };
    if ulong(contexts) != 0 {
        return None;
    }
    let reply_status = match ReplyStatus::from_value(ulong(status)) {
        Ok(s) => s,
        Err(e) => return Some(Err(e)),
    };
    let h = ReplyHeader {
        request_id: ulong(id),
        reply_status,
        service_context: ServiceContextList::new(),
    };
    let body = Body {
        message,
        start: BODY_AT,
        byte_order: header.byte_order,
        minor: header.version.minor,
        align_breaks,
    };
    Some(Ok((h, body)))
}

/// The body that follows what `r` has read so far.
#[inline]
fn body_after<'a>(
    header: &MessageHeader,
    message: &'a [u8],
    align_breaks: &'a [AlignBreak],
    r: &CdrReader<'a>,
    align: bool,
) -> Body<'a> {
    let minor = header.version.minor;
    let mut start = r.position();
    // GIOP 1.2: a body, if any, starts 8-aligned; an empty one adds no padding.
    if align && minor >= 2 && r.remaining() > 0 {
        start = r.aligned_position(8).unwrap_or(message.len());
    }
    Body {
        message,
        start,
        byte_order: header.byte_order,
        minor,
        align_breaks,
    }
}

/// A decoded message whose Request header is borrowed from the message (see
/// [`decode_message_view`]).
#[derive(Debug, Clone)]
pub enum GiopMessageView<'a> {
    /// A Request and its arguments.
    Request {
        /// The header, read in place.
        header: RequestHeaderView<'a>,
        /// The in/inout arguments.
        body: Body<'a>,
    },
    /// Any other message, as [`decode_message`] gives it.
    Other(GiopMessage<'a>),
}

/// [`decode_message`] with the Request header read in place ([`RequestHeaderView`]): no
/// allocation for the operation, the object key or the service contexts. Other messages
/// are decoded as [`decode_message`] does.
pub fn decode_message_view<'a>(
    bytes: &'a [u8],
    align_breaks: &'a [AlignBreak],
) -> Result<(MessageHeader, GiopMessageView<'a>)> {
    let (header, message, mut r) = open_message(bytes, align_breaks)?;
    if header.msg_type != MsgType::Request {
        return decode_message(bytes, align_breaks).map(|(h, m)| (h, GiopMessageView::Other(m)));
    }
    let h = RequestHeaderView::decode(&mut r, header.version.minor)?;
    let body = body_after(&header, message, align_breaks, &r, true);
    Ok((header, GiopMessageView::Request { header: h, body }))
}

/// Decodes a Reply ([`decode_message`]'s Reply case, with the same checks), for a client
/// that has seen the header's type already: it skips building a [`GiopMessage`]. A message
/// of another type is refused with [`GiopError::WrongMessageType`].
#[inline]
pub fn decode_reply(bytes: &[u8]) -> Result<(ReplyHeader, Body<'_>)> {
    let (header, message, mut r) = open_message(bytes, &[])?;
    if header.msg_type != MsgType::Reply {
        return Err(GiopError::WrongMessageType {
            expected: MsgType::Reply,
            found: header.msg_type,
        });
    }
    let h = ReplyHeader::decode(&mut r, header.version.minor)?;
    let body = body_after(&header, message, &[], &r, true);
    Ok((h, body))
}

/// Decodes a whole message (`bytes` holds at least `12 + message_size` bytes; anything after
/// is not looked at). `align_breaks` come from reassembly; pass `&[]` otherwise.
pub fn decode_message<'a>(
    bytes: &'a [u8],
    align_breaks: &'a [AlignBreak],
) -> Result<(MessageHeader, GiopMessage<'a>)> {
    let (header, message, mut r) = open_message(bytes, align_breaks)?;
    let minor = header.version.minor;
    let body =
        |r: &CdrReader<'a>, align: bool| body_after(&header, message, align_breaks, r, align);
    let decoded = match header.msg_type {
        MsgType::Request => {
            let h = RequestHeader::decode(&mut r, minor)?;
            GiopMessage::Request {
                header: h,
                body: body(&r, true),
            }
        }
        MsgType::Reply => {
            let h = ReplyHeader::decode(&mut r, minor)?;
            GiopMessage::Reply {
                header: h,
                body: body(&r, true),
            }
        }
        MsgType::CancelRequest => GiopMessage::CancelRequest(CancelRequestHeader::decode(&mut r)?),
        MsgType::LocateRequest => {
            GiopMessage::LocateRequest(LocateRequestHeader::decode(&mut r, minor)?)
        }
        MsgType::LocateReply => {
            let h = LocateReplyHeader::decode(&mut r)?;
            GiopMessage::LocateReply {
                header: h,
                body: body(&r, false),
            }
        }
        MsgType::CloseConnection => GiopMessage::CloseConnection,
        MsgType::MessageError => GiopMessage::MessageError,
        MsgType::Fragment => {
            let h = FragmentHeader::decode(&mut r, minor)?;
            GiopMessage::Fragment {
                header: h,
                body: body(&r, false),
            }
        }
    };
    Ok((header, decoded))
}

/// Writes one message: the GIOP header and the type-specific header first, then the caller
/// writes the body through [`MessageWriter::body`], then [`MessageWriter::finish`] patches
/// `message_size`. The writer's stream starts at the message start, so alignment is right.
#[derive(Debug)]
pub struct MessageWriter<'a> {
    w: CdrWriter<'a>,
    align_body: bool,
    /// Where the body began before and after its padding, once [`MessageWriter::body`]
    /// was called: a body left empty is sent unpadded ([`MessageWriter::finish`]).
    body_at: Option<(usize, usize)>,
}

impl<'a> MessageWriter<'a> {
    /// A message of any type with only the GIOP header written so far.
    pub fn new(version: Version, order: ByteOrder, code_sets: CodeSets, msg_type: MsgType) -> Self {
        Self::with_buffer(Vec::with_capacity(256), version, order, code_sets, msg_type)
    }

    /// Like [`MessageWriter::new`], writing into `buffer` (cleared first, its allocation
    /// kept): a connection reuses one buffer for every message it sends.
    #[inline]
    pub fn with_buffer(
        buffer: Vec<u8>,
        version: Version,
        order: ByteOrder,
        code_sets: CodeSets,
        msg_type: MsgType,
    ) -> Self {
        let mut w = CdrWriter::from_vec(buffer, order, version.context(code_sets));
        MessageHeader::new(version, order, msg_type).write(&mut w);
        let align_body =
            version.minor >= 2 && matches!(msg_type, MsgType::Request | MsgType::Reply);
        MessageWriter {
            w,
            align_body,
            body_at: None,
        }
    }

    /// Starts a Request.
    pub fn request(
        version: Version,
        order: ByteOrder,
        code_sets: CodeSets,
        h: &RequestHeader,
    ) -> Result<Self> {
        let mut m = MessageWriter::new(version, order, code_sets, MsgType::Request);
        h.encode(&mut m.w, version.minor)?;
        Ok(m)
    }

    /// Starts a Request from borrowed header parts, in a reused buffer. Always inlined, as
    /// its one caller (`GiopConnection::start_request`): rustc's choice flipped with
    /// unrelated changes (~100 instructions per asynchronous call, measured).
    #[inline(always)]
    pub fn request_ref(
        buffer: Vec<u8>,
        version: Version,
        order: ByteOrder,
        code_sets: CodeSets,
        h: &RequestHeaderRef<'_>,
    ) -> Result<Self> {
        let mut m = MessageWriter::with_buffer(buffer, version, order, code_sets, MsgType::Request);
        h.encode(&mut m.w, version.minor)?;
        Ok(m)
    }

    /// Starts a Reply in a reused buffer.
    pub fn reply_in(
        buffer: Vec<u8>,
        version: Version,
        order: ByteOrder,
        code_sets: CodeSets,
        h: &ReplyHeader,
    ) -> Result<Self> {
        let mut m = MessageWriter::with_buffer(buffer, version, order, code_sets, MsgType::Reply);
        h.encode(&mut m.w, version.minor)?;
        Ok(m)
    }

    /// Starts a Reply.
    pub fn reply(
        version: Version,
        order: ByteOrder,
        code_sets: CodeSets,
        h: &ReplyHeader,
    ) -> Result<Self> {
        let mut m = MessageWriter::new(version, order, code_sets, MsgType::Reply);
        h.encode(&mut m.w, version.minor)?;
        Ok(m)
    }

    /// A LocateRequest (no body).
    pub fn locate_request(
        version: Version,
        order: ByteOrder,
        h: &LocateRequestHeader,
    ) -> Result<Self> {
        let mut m = MessageWriter::new(version, order, CodeSets::DEFAULT, MsgType::LocateRequest);
        h.encode(&mut m.w, version.minor)?;
        Ok(m)
    }

    /// Starts a LocateReply (its body, if any, follows the header unpadded).
    pub fn locate_reply(
        version: Version,
        order: ByteOrder,
        code_sets: CodeSets,
        h: &LocateReplyHeader,
    ) -> Result<Self> {
        let mut m = MessageWriter::new(version, order, code_sets, MsgType::LocateReply);
        h.encode(&mut m.w)?;
        Ok(m)
    }

    /// A CancelRequest.
    pub fn cancel_request(
        version: Version,
        order: ByteOrder,
        h: &CancelRequestHeader,
    ) -> Result<Self> {
        let mut m = MessageWriter::new(version, order, CodeSets::DEFAULT, MsgType::CancelRequest);
        h.encode(&mut m.w)?;
        Ok(m)
    }

    /// The writer for the body. At GIOP 1.2 the first call pads a Request or Reply to a
    /// multiple of 8; call it only when there is a body, so empty bodies stay unpadded.
    #[inline]
    pub fn body(&mut self) -> &mut CdrWriter<'a> {
        if self.align_body {
            self.align_body = false;
            self.body_at = Some(begin_body(&mut self.w));
        }
        &mut self.w
    }

    /// The underlying writer, with no body alignment (for header extensions).
    #[inline]
    pub fn writer(&mut self) -> &mut CdrWriter<'a> {
        &mut self.w
    }

    /// Patches `message_size` and returns the writer: its `segments()` are the message,
    /// ready for a vectored write or for the fragmenter. A body that was asked for but left
    /// empty loses its padding: GIOP 1.2 sends an empty body unpadded. Always inlined (see
    /// [`MessageWriter::request_ref`]).
    #[inline(always)]
    pub fn finish(mut self) -> Result<CdrWriter<'a>> {
        end_message(&mut self.w, self.body_at)?;
        Ok(self.w)
    }

    /// The buffer back, for a message that is not sent after all.
    #[inline]
    pub fn into_buffer(self) -> Vec<u8> {
        self.w.into_owned_buffer()
    }

    /// Finishes and copies the message into one vector.
    pub fn finish_bytes(self) -> Result<Vec<u8>> {
        Ok(self.finish()?.into_bytes())
    }
}

/// Pads to where a GIOP 1.2 Request or Reply body starts (8-aligned); where the body began
/// before and after the padding, for [`end_message`].
#[inline]
pub(crate) fn begin_body(w: &mut CdrWriter<'_>) -> (usize, usize) {
    let at = w.len();
    w.align(8);
    (at, w.len())
}

/// Patches `message_size`. A body that was begun ([`begin_body`]) but left empty loses its
/// padding: GIOP 1.2 sends an empty body unpadded.
#[inline]
pub(crate) fn end_message(w: &mut CdrWriter<'_>, body_at: Option<(usize, usize)>) -> Result<()> {
    if let Some((unpadded, padded)) = body_at {
        if w.len() == padded {
            w.truncate(unpadded);
        }
    }
    patch_size(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ObjectKey;

    #[test]
    fn borrowed_request_headers_in_reused_buffers() {
        use crate::request::RequestHeaderRef;
        use crate::service_context::ServiceContextList;
        let owned = RequestHeader::new(8, ObjectKey::new(b"key".to_vec()), "echo");
        let expect =
            MessageWriter::request(Version::V1_1, ByteOrder::Big, CodeSets::DEFAULT, &owned)
                .unwrap()
                .finish_bytes()
                .unwrap();
        let target = owned.target.clone();
        let contexts = ServiceContextList::new();
        let mut buf = Vec::with_capacity(1024);
        let cap = buf.capacity();
        for _ in 0..3 {
            let h = RequestHeaderRef {
                request_id: 8,
                response_flags: 3,
                target: &target,
                operation: "echo",
                service_context: &contexts,
                requesting_principal: &[],
            };
            let w = MessageWriter::request_ref(
                buf,
                Version::V1_1,
                ByteOrder::Big,
                CodeSets::DEFAULT,
                &h,
            )
            .unwrap()
            .finish()
            .unwrap();
            assert_eq!(w.owned_bytes(), &expect[..]);
            buf = w.into_owned_buffer();
            assert_eq!(buf.capacity(), cap);
        }
    }

    /// An owned body keeps only the body (from an 8-aligned offset) and reads as the
    /// borrowed one, at every GIOP version (1.0/1.1 bodies start unaligned); an empty body
    /// holds nothing.
    #[test]
    fn owned_bodies_copy_the_body_only_and_read_alike() {
        for minor in 0..=2 {
            let version = Version { major: 1, minor };
            for with_body in [false, true] {
                let h = ReplyHeader::new(7, crate::ReplyStatus::NoException);
                let mut m =
                    MessageWriter::reply(version, ByteOrder::Big, CodeSets::DEFAULT, &h).unwrap();
                if with_body {
                    m.body().write_octet(1);
                    m.body().write_primitive(0x0102_0304_0506_0708u64);
                    m.body().write_string("after").unwrap();
                }
                let bytes = m.finish_bytes().unwrap();
                let (_, body) = decode_reply(&bytes).unwrap();
                let owned = body.to_owned_body();
                assert_eq!(owned.body().as_bytes(), body.as_bytes());
                assert!(owned.held_bytes() < body.len() + 8, "GIOP 1.{minor}");
                if !with_body {
                    assert_eq!(owned.held_bytes(), 0, "GIOP 1.{minor}");
                    continue;
                }
                let mut r = owned.body().reader(CodeSets::DEFAULT);
                assert_eq!(r.read_octet().unwrap(), 1);
                assert_eq!(r.read_primitive::<u64>().unwrap(), 0x0102_0304_0506_0708);
                assert_eq!(r.read_string().unwrap(), "after");
                r.expect_end().unwrap();
            }
        }
    }

    #[test]
    fn spliced_bodies_and_borrowed_reads() {
        let big = vec![0xabu8; 10_000];
        let h = RequestHeader::new(1, ObjectKey::from("k"), "send_octets");
        let mut mw =
            MessageWriter::request(Version::V1_2, ByteOrder::Little, CodeSets::DEFAULT, &h)
                .unwrap();
        mw.body().write_octet_seq(&big).unwrap();
        let w = mw.finish().unwrap();
        let segs = w.segments();
        assert!(segs.iter().any(|s| s.as_ptr() == big.as_ptr()));
        let bytes = w.into_bytes();
        let m = Message::from_bytes(bytes).unwrap();
        let GiopMessage::Request { body, .. } = m.decode().unwrap() else {
            panic!()
        };
        assert_eq!(body.range().start % 8, 0);
        let mut r = body.reader(CodeSets::DEFAULT);
        let s = r.read_octet_seq().unwrap();
        assert_eq!(s, &big[..]);
        assert!(std::ptr::eq(
            s.as_ptr(),
            m.bytes()[body.range().start + 4..].as_ptr()
        ));
        r.expect_end().unwrap();
    }

    #[test]
    fn from_parts_and_truncation() {
        let b = crate::close::close_connection(Version::V1_1, ByteOrder::Big);
        assert!(Message::from_parts(&b, &[]).is_ok());
        assert!(matches!(
            Message::from_parts(&b, &[1]),
            Err(GiopError::Truncated { .. })
        ));
        let mut long = b.to_vec();
        long.push(0);
        assert!(matches!(
            Message::from_bytes(long),
            Err(GiopError::Truncated { .. })
        ));
        let mut bad = *b"GIOP\x01\x02\x00\x00\x00\x00\x00\x04";
        assert!(decode_message(&bad, &[]).is_err());
        bad[11] = 0;
        assert!(matches!(
            decode_message(&bad, &[]),
            Err(GiopError::Marshal(_))
        ));
    }

    /// The short Request path gives what the field-by-field one gives, and declines (leaving
    /// the error to it) whatever it does not handle: other versions, contexts, a non-ASCII
    /// or empty operation, a bad NUL, a truncated or padded-out message.
    #[test]
    fn short_request_path_matches_the_general_one() {
        use crate::service_context::ServiceContext;
        let ops = ["", "a", "ping", "_is_a", "operation", "caf\u{e9}"];
        let mut checked = 0;
        for v in [Version::V1_0, Version::V1_1, Version::V1_2] {
            for order in [ByteOrder::Big, ByteOrder::Little] {
                for key_len in 0..6u8 {
                    for op in ops {
                        for contexts in [0, 1] {
                            for args in [0, 1, 2] {
                                let mut h = RequestHeader::new(
                                    0x0102_0304,
                                    ObjectKey::new((0..key_len).collect::<Vec<_>>()),
                                    op,
                                );
                                if contexts == 1 {
                                    h.service_context.push(ServiceContext {
                                        context_id: 9,
                                        context_data: vec![1, 2, 3],
                                    });
                                }
                                let mut m = MessageWriter::request(v, order, CodeSets::DEFAULT, &h)
                                    .unwrap();
                                (0..args).for_each(|i| m.body().write_octet(i));
                                let bytes = m.finish_bytes().unwrap();
                                let header = MessageHeader::decode_prefix(&bytes).unwrap();
                                // Whole, then cut short and padded out by a few octets.
                                let mut longer = bytes.clone();
                                longer.extend_from_slice(&[0; 3]);
                                for msg in [&bytes[..], &bytes[..bytes.len() - 1], &longer] {
                                    let mut name = OperationName::default();
                                    let fast =
                                        PlainRequest::read(&header, msg, &[]).and_then(|p| {
                                            let op = name.check(p.operation)?;
                                            Some((p.header(op), p.body(&header, msg, &[])))
                                        });
                                    let general = decode_request_general(&header, msg, &[]);
                                    let Some((fh, fb)) = fast else {
                                        continue;
                                    };
                                    assert!(v == Version::V1_2 && contexts == 0 && op.is_ascii());
                                    let (gh, gb) = general.unwrap();
                                    assert_eq!(fh.request_id, gh.request_id);
                                    assert_eq!(fh.response_flags, gh.response_flags);
                                    assert_eq!(fh.target, gh.target);
                                    assert_eq!(fh.operation, gh.operation);
                                    assert_eq!(fh.service_context.len(), gh.service_context.len());
                                    assert_eq!(fh.requesting_principal, gh.requesting_principal);
                                    assert_eq!(fb, gb);
                                    checked += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(checked > 100, "{checked}");
        // A message the short path declines decodes (or fails) the general way: a bad NUL.
        let h = RequestHeader::new(6, ObjectKey::from("k"), "op");
        let mut bytes =
            MessageWriter::request(Version::V1_2, ByteOrder::Big, CodeSets::DEFAULT, &h)
                .unwrap()
                .finish_bytes()
                .unwrap();
        let nul = bytes.windows(3).position(|w| w == b"op\0").unwrap() + 2;
        bytes[nul] = b'x';
        let header = MessageHeader::decode_prefix(&bytes).unwrap();
        assert!(PlainRequest::read(&header, &bytes, &[]).is_none());
        // The same operation again is compared, not checked; another one is checked (and
        // refused by the short path when it is not ASCII).
        for (a, b) in [
            (&b"ping"[..], &b"ping"[..]),
            (b"ping", b"pong"),
            (b"ping", b"pin"),
            (b"", b""),
            (b"a_longer_name", b"a_longer_name"),
            (b"a_longer_name", b"a_longer_nama"),
            (b"a_longer_name", b"b_longer_name"),
            (b"12345678", b"12345678"),
            (b"12345678", b"12345679"),
        ] {
            assert_eq!(same_bytes(a, b), a == b, "{a:?} {b:?}");
        }
        let mut name = OperationName::default();
        assert_eq!(name.check(b"ping"), Some("ping"));
        assert_eq!(name.check(b"ping"), Some("ping"));
        assert_eq!(name.check(b"echo"), Some("echo"));
        assert_eq!(name.check(b"\xe9t\xe9"), None);
        assert_eq!(name.check(b"a\0b"), None);
        let long = "x".repeat(100);
        assert_eq!(name.check(long.as_bytes()), Some(&long[..]));
        assert_eq!(name.check(b"echo"), Some("echo"));
        assert!(decode_request_general(&header, &bytes, &[]).is_err());
    }
}
