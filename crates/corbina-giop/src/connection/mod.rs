//! One GIOP connection as a state machine, for the client role, the server role or both
//! (bidirectional GIOP): bytes in, events out, messages to send. No socket, clock, lock or
//! thread inside (quinn-proto's shape; omniORB's `giopImpl12` is the same idea, one home for
//! a connection's GIOP rules).
//!
//! The runtime's loop around it:
//!
//! 1. read from the transport into [`GiopConnection::read_buf`], then
//!    [`GiopConnection::commit`] what was read: large bodies land in place, no staging copy;
//! 2. drain [`GiopConnection::poll_event`]: requests, replies matched to their request ids
//!    (several may be in flight, answered in any order), locate requests and replies,
//!    cancels, the peer's CloseConnection or MessageError. Events borrow the receive buffer:
//!    a request's arguments and a reply's result are decoded where they lie;
//! 3. write what [`GiopConnection::poll_transmit`] gives (MessageError after bad input,
//!    CloseConnection, CancelRequest), and the messages it encodes:
//!    [`GiopConnection::start_request`] / [`GiopConnection::finish_request`] (client role;
//!    [`GiopConnection::request`] does both around the caller's marshalling in one frame,
//!    the call path's form), [`ReplyContext::start_reply`] / [`ReplyContext::finish_reply`]
//!    (server role).
//!
//! The connection owns framing (one framer), reassembly of fragments (with its byte cap),
//! request-id allocation and reply matching, the transmission code sets (the CODE_SETS
//! context is sent once per connection, and the first one received fixes them), padding and
//! fragmentation, and the CloseConnection / MessageError / CancelRequest rules.
//!
//! ```
//! use corbina_cdr::{ByteOrder, CodeSets};
//! use corbina_giop::connection::{Event, GiopConnection, RequestStart, Role, Settings};
//! use corbina_giop::{ObjectKey, ReplyStatus, TargetAddress, Version};
//!
//! let mut client = GiopConnection::new(Settings::new(Role::Client));
//! let mut server = GiopConnection::new(Settings::new(Role::Server));
//!
//! // Client: echo("hi").
//! let target = TargetAddress::Key(ObjectKey::from("key"));
//! let start = RequestStart::new(Version::V1_2, CodeSets::UNICODE, &target, "echo", true);
//! let mut req = client.start_request(Vec::new(), &start)?;
//! req.body().write_string("hi")?;
//! let id = req.request_id();
//! let out = client.finish_request(req)?;
//! let wire = out.contiguous().unwrap().to_vec();
//!
//! // Server: the bytes arrive; the request is decoded in the receive buffer.
//! let buf = server.read_buf();
//! buf[..wire.len()].copy_from_slice(&wire);
//! server.commit(wire.len());
//! let Some(Event::Request { header, body, reply }) = server.poll_event()? else { panic!() };
//! assert_eq!(header.operation, "echo");
//! let arg = body.reader(reply.code_sets).read_string()?;
//! let mut r = reply.start_reply(Vec::new(), ReplyStatus::NoException)?;
//! r.body().write_string(&arg)?;
//! let answer = reply.finish_reply(r)?.contiguous().unwrap().to_vec();
//!
//! // Client: the reply is matched to its request id.
//! client.push(&answer);
//! let Some(Event::Reply { header, body, code_sets }) = client.poll_event()? else { panic!() };
//! assert_eq!(header.request_id, id);
//! assert_eq!(body.reader(code_sets).read_string()?, "hi");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod bidir;
mod close;
mod in_flight;
mod meter;
mod recv;
mod send;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use corbina_cdr::{AlignBreak, ByteOrder, CharCodeSet, CodeSetId, CodeSets, WCharCodeSet};

use crate::error::GiopError;
use crate::header::{MessageHeader, MsgType, Version, FLAG_MORE_FRAGMENTS, HEADER_LEN, MAGIC};
use crate::locate::{LocateReplyHeader, LocateRequestHeader};
use crate::message::{decode_message, decode_message_view, peek_request_id, Body, GiopMessage};
use crate::message::{decode_reply_framed, decode_request_general, OperationName, PlainRequest};
use crate::message::{GiopMessageView, Message, MessageWriter};
use crate::reassembler::Reassembler;
use crate::reply::{ReplyHeader, ReplyStatus};
use crate::request::{RequestHeaderRef, RequestHeaderView, RESPONSE_NONE, SYNC_WITH_TARGET};
use crate::service_context::{CodeSetContext, ServiceContextList};
use crate::target_address::TargetAddress;

pub use bidir::{bidir_context, bidir_offer, bidir_supported};
pub use close::CloseState;
pub use send::{
    ControlMessage, Outgoing, OutgoingRequest, ReplyContext, ReplyWriter, RequestError,
    RequestStart,
};

use in_flight::{InFlight, InFlightSet};
pub use meter::{ReceiveMeter, FREE_BYTES};
use recv::RecvBuffer;

/// Default cap on `message_size`: 64 MiB.
pub const DEFAULT_MAX_MESSAGE_SIZE: u32 = 64 << 20;

/// Which end of the connection we are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// We opened the connection and send requests on it.
    Client,
    /// We accepted it and serve the requests that come in.
    Server,
}

/// How a connection behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Our end.
    pub role: Role,
    /// Bidirectional GIOP: the other role's messages are accepted too (requests to a
    /// client, replies to a server), with request ids of the other parity.
    pub bidirectional: bool,
    /// Largest `message_size` accepted; a larger header is a protocol error.
    pub max_message_size: u32,
    /// Most bytes held for fragmented messages in progress.
    pub reassembly_limit: usize,
    /// Outgoing Requests and Replies longer than this are fragmented (GIOP 1.1+).
    pub fragment_size: Option<u32>,
    /// Byte order of the messages we write.
    pub byte_order: ByteOrder,
}

impl Settings {
    /// Defaults for `role`: not bidirectional, 64 MiB messages and reassembly, no
    /// fragmentation, native byte order.
    pub fn new(role: Role) -> Settings {
        Settings {
            role,
            bidirectional: false,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            reassembly_limit: DEFAULT_MAX_MESSAGE_SIZE as usize,
            fragment_size: None,
            byte_order: ByteOrder::NATIVE,
        }
    }
}

/// What arrived.
#[derive(Debug)]
pub enum Event<'a> {
    /// A Request to serve (its header and arguments read in place).
    Request {
        /// The header.
        header: RequestHeaderView<'a>,
        /// The arguments.
        body: Body<'a>,
        /// What the reply needs.
        reply: ReplyContext,
    },
    /// The Reply to one of our requests (its id was in flight; now it is not).
    Reply {
        /// The header.
        header: ReplyHeader,
        /// The result, exception or forward.
        body: Body<'a>,
        /// The code sets to read the body with.
        code_sets: CodeSets,
    },
    /// A LocateRequest to answer.
    LocateRequest {
        /// The header.
        header: LocateRequestHeader,
        /// What the LocateReply needs.
        reply: ReplyContext,
    },
    /// The LocateReply to one of our LocateRequests.
    LocateReply {
        /// The header.
        header: LocateReplyHeader,
        /// What `locate_status` says (an IOR, an exception, an addressing mode).
        body: Body<'a>,
        /// The code sets to read the body with.
        code_sets: CodeSets,
    },
    /// The peer no longer wants the reply to this request (any fragments of it held were
    /// dropped).
    CancelRequest {
        /// The request.
        request_id: u32,
    },
    /// A fragment of a message arrived; the message is not complete yet.
    Fragment {
        /// The message's request id (GIOP 1.2).
        request_id: Option<u32>,
        /// Bytes now held for incomplete messages on this connection.
        held: usize,
    },
    /// The peer closed in order: it processed none of our requests still awaiting their
    /// reply, which may be sent again elsewhere.
    CloseConnection,
    /// The peer could not understand something we sent; the connection is over.
    MessageError,
}

/// Why the connection cannot go on. A MessageError for the peer is queued
/// ([`GiopConnection::poll_transmit`]) when the peer's bytes were at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectionError {
    /// The peer's bytes are not valid GIOP (framing, header, fragments).
    #[error("malformed GIOP from the peer: {0}")]
    Malformed(#[from] GiopError),
    /// A message this end does not accept in its role (a Reply to a server, a Request to a
    /// client without bidirectional GIOP…).
    #[error("unexpected {msg_type:?} on a {role:?} connection")]
    Unexpected {
        /// The message type.
        msg_type: MsgType,
        /// Our role.
        role: Role,
    },
    /// A Reply or LocateReply for a request id that is not in flight.
    #[error("reply for request id {request_id}, which awaits no reply")]
    UnknownRequestId {
        /// The id.
        request_id: u32,
    },
    /// The connection was closed (by either side) or failed before.
    #[error("the connection is closed")]
    Closed,
}

/// Where the event handed out last lies, released at the next poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handed {
    Nothing,
    /// The message at the front of the receive buffer, this long.
    InPlace(usize),
    /// The reassembled message.
    Reassembled,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Open,
    /// The peer closed in order, or said MessageError.
    PeerClosed,
    Failed(ConnectionError),
}

/// The GIOP protocol state of one connection (see the [module docs](self)).
#[derive(Debug)]
pub struct GiopConnection {
    settings: Settings,
    reassembler: Reassembler,
    reassembled: Option<Message>,
    /// Dropped after the reassembly state: its budget account, refunded last, is the
    /// owner's sign that the connection's receive memory is freed.
    recv: RecvBuffer,
    handed: Handed,
    state: State,
    /// The close and refusal rules: the highest GIOP version the peer has used, which the
    /// MessageError after bad input goes out in when the bad message's own header cannot be
    /// read. A runtime whose writers close from other threads takes its share with
    /// [`GiopConnection::close_state`].
    close: CloseState,
    /// Transmission code sets, once fixed (first CODE_SETS context sent or received).
    code_sets: Option<CodeSets>,
    code_sets_sent: bool,
    /// The operation name of the last request read (checked once, then compared).
    operation_name: OperationName,
    next_request_id: u32,
    /// The header of the last GIOP 1.2 request to an object key, for the next one like it.
    request_head: send::RequestHead,
    in_flight: InFlightSet,
    transmit: VecDeque<ControlMessage>,
    /// The request id of the last fragment taken in (GIOP 1.2), for [`Event::Fragment`].
    last_fragment_id: Option<u32>,
}

/// The code sets a CODE_SETS context selects (an unknown char set falls back to
/// ISO-8859-1, an unknown wchar set to none).
fn code_sets_from_context(char_data: CodeSetId, wchar_data: CodeSetId) -> CodeSets {
    CodeSets {
        char_set: CharCodeSet::from_id(char_data).unwrap_or(CharCodeSet::Iso8859_1),
        wchar_set: WCharCodeSet::from_id(wchar_data),
    }
}

impl GiopConnection {
    /// A new connection with nothing received or sent.
    pub fn new(settings: Settings) -> GiopConnection {
        GiopConnection {
            recv: RecvBuffer::new(settings.max_message_size),
            reassembler: Reassembler::new(settings.reassembly_limit),
            reassembled: None,
            handed: Handed::Nothing,
            state: State::Open,
            close: CloseState::new(settings.byte_order),
            code_sets: None,
            code_sets_sent: false,
            operation_name: OperationName::default(),
            // The end that opened the connection uses even request ids, the other odd ones
            // (bidirectional GIOP: both send requests on it).
            next_request_id: match settings.role {
                Role::Client => 2,
                Role::Server => 1,
            },
            request_head: send::RequestHead::default(),
            in_flight: InFlightSet::default(),
            transmit: VecDeque::new(),
            last_fragment_id: None,
            settings,
        }
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Charges the memory this connection holds for receiving (beyond [`FREE_BYTES`] of
    /// receive buffer, and fragments held for reassembly) to `meter` from now on; all of it
    /// is refunded when the connection is dropped.
    pub fn set_receive_meter(&mut self, meter: Box<dyn ReceiveMeter>) {
        self.recv.set_account(meter::Account::new(meter));
    }

    /// Settles reassembly's charge (fragments held, and a reassembled message until it is
    /// released); `false`: refused by the budget.
    fn settle_reassembly(&mut self) -> bool {
        let held =
            self.reassembler.held_bytes() + self.reassembled.as_ref().map_or(0, Message::allocated);
        self.recv.account().is_none_or(|a| a.reassembly(held))
    }

    /// Makes the connection bidirectional (or not) from now on.
    pub fn set_bidirectional(&mut self, on: bool) {
        self.settings.bidirectional = on;
    }

    fn sends_requests(&self) -> bool {
        self.settings.role == Role::Client || self.settings.bidirectional
    }

    fn serves_requests(&self) -> bool {
        self.settings.role == Role::Server || self.settings.bidirectional
    }

    // ---- receiving ----

    /// Where to read next: room for what the current message still needs and, after a
    /// small message, more (a burst of small messages comes in with one read). After a
    /// large message exactly what the next header needs, then exactly its body.
    #[inline]
    pub fn read_buf(&mut self) -> &mut [u8] {
        self.release();
        self.recv.read_buf()
    }

    /// `n` bytes were read into the slice [`GiopConnection::read_buf`] gave.
    #[inline]
    pub fn commit(&mut self, n: usize) {
        self.recv.commit(n);
    }

    /// Appends received bytes (a copy; [`GiopConnection::read_buf`] avoids it).
    pub fn push(&mut self, bytes: &[u8]) {
        self.release();
        self.recv.push(bytes);
    }

    /// Bytes received and not yet handed out as events.
    #[inline]
    pub fn buffered(&self) -> usize {
        self.recv.buffered() - self.handed_len()
    }

    /// Whether nothing is buffered or held: no message is half-received.
    pub fn is_idle(&self) -> bool {
        self.buffered() == 0 && self.reassembler.in_progress() == 0
    }

    fn handed_len(&self) -> usize {
        match self.handed {
            Handed::InPlace(n) => n,
            _ => 0,
        }
    }

    /// Releases the message handed out with the last event (done by every call that reads
    /// or polls).
    #[inline]
    fn release(&mut self) {
        if matches!(self.handed, Handed::Nothing) {
            return;
        }
        match std::mem::replace(&mut self.handed, Handed::Nothing) {
            Handed::Nothing => {}
            Handed::InPlace(len) => self.recv.consume(len),
            Handed::Reassembled => {
                self.reassembled = None;
                self.settle_reassembly();
            }
        }
    }

    /// The next event, `Ok(None)` until more bytes are needed. An error is final: the
    /// connection must be closed, after writing what [`GiopConnection::poll_transmit`]
    /// gives (a MessageError when the peer's bytes were at fault).
    #[inline]
    pub fn poll_event(&mut self) -> Result<Option<Event<'_>>, ConnectionError> {
        self.release();
        let header = loop {
            if self.state != State::Open {
                return self.poll_ended();
            }
            let (header, total) = match self.recv.whole() {
                Ok(Some(w)) => w,
                Ok(None) => return Ok(None),
                Err(e) => return Err(self.fail(None, e.into())),
            };
            self.close.note_version(header.version);
            let header = if header.more_fragments || header.msg_type == MsgType::Fragment {
                match self.reassemble(&header, total) {
                    Ok(Some(whole)) => whole,
                    Ok(None) => {
                        return Ok(Some(Event::Fragment {
                            request_id: self.last_fragment_id,
                            held: self.reassembler.held_bytes(),
                        }))
                    }
                    Err(e) => return Err(self.fail(Some(header.version), e)),
                }
            } else {
                header
            };
            let in_place = self.reassembled.is_none();
            // Replies are matched to their requests before they are handed out: at GIOP 1.2
            // by the id they start with, before 1.2 by decoding the header.
            let reply_id = if matches!(header.msg_type, MsgType::Reply | MsgType::LocateReply) {
                let (bytes, breaks) = match &self.reassembled {
                    None => (self.recv.front(total), &[][..]),
                    Some(m) => (m.bytes(), m.align_breaks()),
                };
                match peek_request_id(&header, bytes)
                    .map_or_else(|| reply_request_id(bytes, breaks), Ok)
                {
                    Ok(id) => Some(id),
                    Err(e) => return Err(self.fail(Some(header.version), e.into())),
                }
            } else {
                None
            };
            match self.screen(&header, reply_id) {
                Ok(true) => break header,
                Ok(false) => {
                    // Dropped (a late reply to a cancelled request, a request after our
                    // CloseConnection): on to the next message.
                    if in_place {
                        self.recv.consume(total);
                    } else {
                        self.reassembled = None;
                        self.settle_reassembly();
                    }
                }
                Err(e) => return Err(self.fail(Some(header.version), e)),
            }
        };
        // The message handed out: the reassembled one if there is one, else the one at the
        // front of the receive buffer (`header` is its own header then).
        let (bytes, breaks): (&[u8], &[AlignBreak]) = match &self.reassembled {
            None => {
                let len = header.total_len();
                self.handed = Handed::InPlace(len);
                (self.recv.front(len), &[])
            }
            Some(m) => {
                self.handed = Handed::Reassembled;
                (m.bytes(), m.align_breaks())
            }
        };
        // Built where it is returned: an event moved on the way out is a memcpy of the
        // largest variant on every call.
        let failure = Failure {
            transmit: &mut self.transmit,
            state: &mut self.state,
            version: header.version,
            byte_order: self.settings.byte_order,
        };
        decode_event(
            bytes,
            breaks,
            &header,
            &self.settings,
            &mut self.code_sets,
            &mut self.operation_name,
            failure,
        )
    }

    /// [`GiopConnection::poll_event`] for a client awaiting the reply to `request_id`: the
    /// common reply (whole, unfragmented GIOP 1.2, no service contexts, smaller than a
    /// direct read, at the front of the receive buffer) framed, checked and matched in one
    /// pass over its first 24 bytes; anything else as `poll_event` gives it.
    #[inline]
    pub fn poll_reply(&mut self, request_id: u32) -> Result<Option<Event<'_>>, ConnectionError> {
        self.release();
        let Some(&head) = self.recv.unread().first_chunk::<24>() else {
            if self.recv.buffered() == 0 && self.state == State::Open {
                // Nothing received yet: what `poll_event` says, without its framing.
                return Ok(None);
            }
            return self.poll_event();
        };
        let flags = head[6];
        let order = ByteOrder::from_flag(flags);
        let ulong = |at: usize| {
            let b = [head[at], head[at + 1], head[at + 2], head[at + 3]];
            match order {
                ByteOrder::Big => u32::from_be_bytes(b),
                ByteOrder::Little => u32::from_le_bytes(b),
            }
        };
        let size = ulong(8);
        let total = HEADER_LEN + size as usize;
        let plain = head[..4] == MAGIC
            && head[4..6] == [1, 2]
            && head[7] == MsgType::Reply as u8
            && flags & FLAG_MORE_FRAGMENTS == 0
            && size <= self.settings.max_message_size
            && total < recv::DIRECT_READ
            && total <= self.recv.buffered()
            && ulong(12) == request_id
            && ulong(20) == 0
            && self.state == State::Open
            && self.sends_requests();
        if !plain {
            return self.poll_event();
        }
        let Ok(reply_status) = ReplyStatus::from_value(ulong(16)) else {
            return self.poll_event();
        };
        match self.in_flight.remove(request_id) {
            Some(f) if !f.cancelled => {}
            // Cancelled: dropped, as `poll_event` drops it; unknown: its error.
            Some(_) => {
                self.recv.consume(total);
                return self.poll_event();
            }
            None => {
                let e = ConnectionError::UnknownRequestId { request_id };
                return Err(self.fail(Some(Version::V1_2), e));
            }
        }
        self.close.note_version(Version::V1_2);
        self.recv.framed_small();
        self.handed = Handed::InPlace(total);
        Ok(Some(Event::Reply {
            header: ReplyHeader {
                request_id,
                reply_status,
                service_context: ServiceContextList::new(),
            },
            body: Body::in_place_1_2(self.recv.front(total), 24, order),
            code_sets: self.code_sets.unwrap_or(CodeSets::DEFAULT),
        }))
    }

    /// What polling a connection that ended gives: nothing after the peer's orderly close
    /// or MessageError, else the error that ended it.
    #[cold]
    fn poll_ended(&self) -> Result<Option<Event<'static>>, ConnectionError> {
        match &self.state {
            State::Failed(e) => Err(e.clone()),
            _ => Ok(None),
        }
    }

    /// Whether [`GiopConnection::poll_event`] has nothing to give before more bytes are
    /// read: no whole message is buffered (a cheaper test than an empty poll).
    #[inline]
    pub fn wants_input(&mut self) -> bool {
        self.release();
        self.recv.wanted() > 0
    }

    /// Puts a fragment (or the first part of a fragmented message) into the reassembler;
    /// the whole message's header once it is complete (the message in `reassembled`).
    fn reassemble(
        &mut self,
        header: &MessageHeader,
        total: usize,
    ) -> Result<Option<MessageHeader>, ConnectionError> {
        if header.msg_type != MsgType::Fragment {
            self.role_check(header.msg_type)?;
        }
        let bytes = self.recv.front(total);
        self.last_fragment_id = peek_request_id(header, bytes);
        let m = Message::from_bytes(bytes.to_vec())?;
        self.recv.consume(total);
        let whole = match self.reassembler.push(m)? {
            Some(m) => {
                let h = *m.header();
                self.reassembled = Some(m);
                Some(h)
            }
            None => None,
        };
        if !self.settle_reassembly() {
            let held = self.reassembler.held_bytes()
                + self.reassembled.as_ref().map_or(0, Message::allocated);
            return Err(GiopError::ReceiveBudgetExceeded { held: held as u64 }.into());
        }
        Ok(whole)
    }

    /// Whether this end takes messages of this type at all.
    #[inline]
    fn role_check(&self, msg_type: MsgType) -> Result<(), ConnectionError> {
        let ok = match msg_type {
            MsgType::Request | MsgType::LocateRequest | MsgType::CancelRequest => {
                self.serves_requests()
            }
            MsgType::Reply | MsgType::LocateReply => self.sends_requests(),
            MsgType::CloseConnection | MsgType::MessageError | MsgType::Fragment => true,
        };
        if ok {
            Ok(())
        } else {
            Err(ConnectionError::Unexpected {
                msg_type,
                role: self.settings.role,
            })
        }
    }

    /// Whether a whole message is handed out (true), dropped (false), or breaks the rules;
    /// `reply_id`: a Reply's or LocateReply's request id.
    #[inline]
    fn screen(
        &mut self,
        header: &MessageHeader,
        reply_id: Option<u32>,
    ) -> Result<bool, ConnectionError> {
        self.role_check(header.msg_type)?;
        match header.msg_type {
            MsgType::Request | MsgType::LocateRequest => Ok(true),
            MsgType::Reply | MsgType::LocateReply => match reply_id {
                Some(id) => self.match_reply(id),
                None => Ok(false),
            },
            MsgType::CancelRequest => {
                // Fragments of the cancelled request held so far are dropped.
                if let Some(id) = peek_request_id(header, self.recv.front(header.total_len())) {
                    if self.reassembler.cancel(id) {
                        self.settle_reassembly();
                    }
                }
                Ok(true)
            }
            MsgType::CloseConnection | MsgType::MessageError => {
                self.state = State::PeerClosed;
                Ok(true)
            }
            MsgType::Fragment => Ok(true),
        }
    }

    /// Takes `request_id` out of the in-flight set: true to hand the reply out, false to
    /// drop it (the request was cancelled).
    #[inline]
    fn match_reply(&mut self, request_id: u32) -> Result<bool, ConnectionError> {
        match self.in_flight.remove(request_id) {
            Some(f) => Ok(!f.cancelled),
            None => Err(ConnectionError::UnknownRequestId { request_id }),
        }
    }

    /// Fails the connection for `e`, queueing MessageError when the peer's bytes were at
    /// fault. `version`: the offending message's, if its header could be read.
    fn fail(&mut self, version: Option<Version>, e: ConnectionError) -> ConnectionError {
        if !matches!(e, ConnectionError::Closed) {
            let v = version.unwrap_or(self.close.peer_version());
            self.transmit
                .push_back(ControlMessage::message_error(v, self.settings.byte_order));
        }
        self.state = State::Failed(e.clone());
        e
    }

    /// The peer's side of the connection ended (end of stream). Returns whether a message
    /// was cut short (bytes of an incomplete message were buffered).
    pub fn end_of_stream(&mut self) -> bool {
        let cut = self.buffered() > 0 || self.reassembler.in_progress() > 0;
        if self.state == State::Open {
            self.state = State::Failed(ConnectionError::Closed);
        }
        cut
    }

    /// Memory held for receiving (the receive buffer and fragments in progress).
    pub fn held_bytes(&self) -> usize {
        self.recv.capacity()
            + self.reassembler.held_bytes()
            + self.reassembled.as_ref().map_or(0, |m| m.bytes().len())
    }

    /// Gives back receive memory while idle.
    pub fn shrink_idle(&mut self) {
        self.release();
        self.recv.shrink_idle();
    }

    // ---- sending ----

    /// Control messages to write now, in order: MessageError after bad input, CancelRequest
    /// after [`GiopConnection::cancel`]. (CloseConnection, and MessageError refusing input
    /// that was not bad, are decided by the connection's [`CloseState`].)
    #[inline]
    pub fn poll_transmit(&mut self) -> Option<ControlMessage> {
        self.transmit.pop_front()
    }

    /// Whether the connection can carry more requests (not closed or failed by either side).
    #[inline]
    pub fn is_open(&self) -> bool {
        self.state == State::Open
    }

    /// The close state the connection's writers share (under their lock, when several
    /// threads write): orderly close (CloseConnection once no request is being processed;
    /// requests after it are not processed) and refusal (MessageError), in the connection's
    /// byte order and the highest version the peer has used so far. Feed it each request
    /// with [`CloseState::begin_request`]; the runtime carries out what it decides.
    pub fn close_state(&self) -> CloseState {
        self.close.clone()
    }

    /// Requests sent and awaiting their reply (cancelled ones not counted), in no
    /// particular order.
    #[cfg(test)]
    pub(crate) fn in_flight(&self) -> impl Iterator<Item = u32> + '_ {
        self.in_flight
            .iter()
            .filter(|f| !f.cancelled)
            .map(|f| f.request_id)
    }

    /// The transmission code sets, once fixed on this connection.
    #[cfg(test)]
    pub(crate) fn code_sets(&self) -> Option<CodeSets> {
        self.code_sets
    }

    /// [`GiopConnection::poll_event`] as a call, never inlined: for rare paths of the
    /// caller (request interceptors), so that its hot call sites stay the only ones the
    /// compiler sees in the caller's crate and inlines. Public because it must be compiled
    /// here: the same never-inlined function in the runtime made the compiler stop
    /// inlining `poll_event` into the server's loop (measured: 8 instructions more per
    /// server call).
    #[inline(never)]
    pub fn poll_event_outlined(&mut self) -> Result<Option<Event<'_>>, ConnectionError> {
        self.poll_event()
    }

    /// [`GiopConnection::read_buf`] as a call, never inlined (see
    /// [`GiopConnection::poll_event_outlined`]).
    #[inline(never)]
    pub fn read_buf_outlined(&mut self) -> &mut [u8] {
        self.read_buf()
    }

    /// Takes the id the next request would get, for a request started later with
    /// [`RequestStart::request_id`] set to it: request interceptors see the id before the
    /// request is marshalled, and on a connection shared by concurrent calls (bidirectional
    /// GIOP) other requests may be started meanwhile.
    pub fn reserve_request_id(&mut self) -> u32 {
        let id = self.next_request_id;
        self.next_request_id = id.wrapping_add(2);
        id
    }

    /// Starts a Request in `buffer` (reused): the connection gives it its request id (the
    /// next one, or the one reserved in `start`) and, on the first request of a GIOP 1.1+
    /// connection, the CODE_SETS context. The caller writes the arguments into
    /// [`OutgoingRequest::body`], then hands it to [`GiopConnection::finish_request`].
    // Always inlined, as `finish_request`: the asynchronous call path's; with several
    // callers in one codegen unit (bidirectional and intercepted requests) a plain
    // `#[inline]` was left outlined there (measured: ~50 instructions per async call).
    #[inline(always)]
    pub fn start_request<'a>(
        &mut self,
        buffer: Vec<u8>,
        start: &RequestStart<'_>,
    ) -> Result<OutgoingRequest<'a>, ConnectionError> {
        if !self.sends_requests() {
            return Err(ConnectionError::Unexpected {
                msg_type: MsgType::Request,
                role: self.settings.role,
            });
        }
        if self.state != State::Open {
            return Err(ConnectionError::Closed);
        }
        let version = start.version;
        let code_sets = *self.code_sets.get_or_insert(start.code_sets);
        let sends_code_sets = version.minor >= 1 && !self.code_sets_sent;
        let with_code_sets;
        let contexts = if sends_code_sets {
            let ctx = CodeSetContext {
                char_data: code_sets.char_set.id(),
                wchar_data: code_sets.wchar_set.map_or(CodeSetId::UTF_16, |w| w.id()),
            };
            let mut list = start.contexts.clone();
            list.push(ctx.to_service_context(self.settings.byte_order)?);
            with_code_sets = list;
            &with_code_sets
        } else {
            start.contexts
        };
        let request_id = start.request_id.unwrap_or(self.next_request_id);
        let header = RequestHeaderRef {
            request_id,
            response_flags: if start.response_expected {
                SYNC_WITH_TARGET
            } else {
                RESPONSE_NONE
            },
            target: start.target,
            operation: start.operation,
            service_context: contexts,
            requesting_principal: &[],
        };
        let writer = MessageWriter::request_ref(
            buffer,
            version,
            self.settings.byte_order,
            code_sets,
            &header,
        )?;
        Ok(OutgoingRequest {
            writer,
            request_id,
            reserved: start.request_id.is_some(),
            version,
            response_expected: start.response_expected,
            sends_code_sets,
            code_sets,
        })
    }

    /// Finishes a Request: its id is used up (a reserved one already was) and, if a reply is
    /// expected, in flight; the message is fragmented if it is larger than the fragment
    /// size. A request abandoned before this uses no id.
    #[inline(always)]
    pub fn finish_request<'a>(
        &mut self,
        request: OutgoingRequest<'a>,
    ) -> Result<Outgoing<'a>, ConnectionError> {
        let OutgoingRequest {
            writer,
            request_id,
            reserved,
            version,
            response_expected,
            sends_code_sets,
            ..
        } = request;
        let w = writer.finish()?;
        if !reserved {
            self.next_request_id = self.next_request_id.wrapping_add(2);
        }
        if sends_code_sets {
            self.code_sets_sent = true;
        }
        if response_expected {
            self.in_flight.insert(InFlight {
                request_id,
                version,
                cancelled: false,
            });
        }
        Ok(Outgoing::new(w, version, self.settings.fragment_size))
    }

    /// A LocateRequest for `target` (its LocateReply comes back as
    /// [`Event::LocateReply`]): the message's bytes and its request id.
    pub fn locate_request(
        &mut self,
        version: Version,
        target: &TargetAddress,
    ) -> Result<(Vec<u8>, u32), ConnectionError> {
        if !self.sends_requests() {
            return Err(ConnectionError::Unexpected {
                msg_type: MsgType::LocateRequest,
                role: self.settings.role,
            });
        }
        if self.state != State::Open {
            return Err(ConnectionError::Closed);
        }
        let request_id = self.next_request_id;
        let header = LocateRequestHeader {
            request_id,
            target: target.clone(),
        };
        let bytes = MessageWriter::locate_request(version, self.settings.byte_order, &header)
            .and_then(MessageWriter::finish_bytes)?;
        self.next_request_id = self.next_request_id.wrapping_add(2);
        self.in_flight.insert(InFlight {
            request_id,
            version,
            cancelled: false,
        });
        Ok((bytes, request_id))
    }

    /// The request will not be waited for: queues a CancelRequest and drops its reply when
    /// it comes. False if it was not in flight.
    pub fn cancel(&mut self, request_id: u32) -> bool {
        let Some(f) = self.in_flight.get_mut(request_id).filter(|f| !f.cancelled) else {
            return false;
        };
        f.cancelled = true;
        let v = f.version;
        if self.state == State::Open {
            self.transmit.push_back(ControlMessage::cancel_request(
                v,
                self.settings.byte_order,
                request_id,
            ));
        }
        true
    }

    /// Forgets a request in flight without telling the peer (its reply, if it comes, is
    /// dropped): for a caller that gives up on the connection anyway.
    pub fn abandon(&mut self, request_id: u32) {
        if let Some(f) = self.in_flight.get_mut(request_id) {
            f.cancelled = true;
        }
    }
}

static NO_CONTEXTS: ServiceContextList = ServiceContextList(Vec::new());

/// The request id of a GIOP 1.0/1.1 Reply or LocateReply (after the service contexts in a
/// Reply; first in a LocateReply).
fn reply_request_id(bytes: &[u8], breaks: &[AlignBreak]) -> Result<u32, GiopError> {
    match decode_message(bytes, breaks)?.1 {
        GiopMessage::Reply { header, .. } => Ok(header.request_id),
        GiopMessage::LocateReply { header, .. } => Ok(header.request_id),
        other => Err(GiopError::WrongMessageType {
            expected: MsgType::Reply,
            found: message_type(&other),
        }),
    }
}

fn message_type(m: &GiopMessage<'_>) -> MsgType {
    match m {
        GiopMessage::Request { .. } => MsgType::Request,
        GiopMessage::Reply { .. } => MsgType::Reply,
        GiopMessage::CancelRequest(_) => MsgType::CancelRequest,
        GiopMessage::LocateRequest(_) => MsgType::LocateRequest,
        GiopMessage::LocateReply { .. } => MsgType::LocateReply,
        GiopMessage::CloseConnection => MsgType::CloseConnection,
        GiopMessage::MessageError => MsgType::MessageError,
        GiopMessage::Fragment { .. } => MsgType::Fragment,
    }
}

/// Where a message that fails to decode is recorded: a MessageError to send, the
/// connection failed.
struct Failure<'c> {
    transmit: &'c mut VecDeque<ControlMessage>,
    state: &'c mut State,
    version: Version,
    byte_order: ByteOrder,
}

impl Failure<'_> {
    #[cold]
    fn fail(self, e: GiopError) -> ConnectionError {
        let e = ConnectionError::from(e);
        self.transmit.push_back(ControlMessage::header_only(
            self.version,
            self.byte_order,
            MsgType::MessageError,
        ));
        *self.state = State::Failed(e.clone());
        e
    }
}

/// Decodes a whole, screened message into its event (a free function: the event borrows
/// only the message's bytes, so the connection's other fields stay usable). Every arm
/// returns its event itself, so that it is built in the caller's return slot.
#[inline]
fn decode_event<'a>(
    bytes: &'a [u8],
    breaks: &'a [AlignBreak],
    header: &MessageHeader,
    settings: &Settings,
    code_sets: &mut Option<CodeSets>,
    operation_name: &'a mut OperationName,
    failure: Failure<'_>,
) -> Result<Option<Event<'a>>, ConnectionError> {
    let reply_context = |request_id: u32, response_expected: bool, cs: CodeSets| ReplyContext {
        request_id,
        version: header.version,
        code_sets: cs,
        byte_order: settings.byte_order,
        response_expected,
        fragment_size: settings.fragment_size,
    };
    let cs = |code_sets: &Option<CodeSets>| code_sets.unwrap_or(CodeSets::DEFAULT);
    match header.msg_type {
        MsgType::Reply => {
            return match decode_reply_framed(header, bytes, breaks) {
                Ok((header, body)) => Ok(Some(Event::Reply {
                    header,
                    body,
                    code_sets: cs(code_sets),
                })),
                Err(e) => Err(failure.fail(e)),
            }
        }
        MsgType::Request => {
            // The common Request (no service contexts, so no CODE_SETS one either): its
            // event built in the return slot, straight from where its parts lie.
            if let Some((plain, op)) = PlainRequest::read(header, bytes, breaks)
                .and_then(|p| Some((p, operation_name.check(p.operation)?)))
            {
                let response_expected = plain.response_flags & 1 != 0;
                return Ok(Some(Event::Request {
                    header: plain.header(op),
                    body: plain.body(header, bytes, breaks),
                    reply: reply_context(plain.request_id, response_expected, cs(code_sets)),
                }));
            }
            let (header, body) = match decode_request_general(header, bytes, breaks) {
                Ok(r) => r,
                Err(e) => return Err(failure.fail(e)),
            };
            // The first CODE_SETS context fixes the connection's code sets; later ones are
            // not looked at.
            if code_sets.is_none() {
                match header.service_context.code_sets() {
                    Ok(Some(c)) => {
                        *code_sets = Some(code_sets_from_context(c.char_data, c.wchar_data))
                    }
                    Ok(None) => {}
                    Err(e) => return Err(failure.fail(e)),
                }
            }
            let reply = reply_context(header.request_id, header.response_expected(), cs(code_sets));
            return Ok(Some(Event::Request {
                header,
                body,
                reply,
            }));
        }
        _ => {}
    }
    let view = match decode_message_view(bytes, breaks) {
        Ok((_, view)) => view,
        Err(e) => return Err(failure.fail(e)),
    };
    match view {
        // Decoded above.
        GiopMessageView::Request { .. } => Err(failure.fail(GiopError::WrongMessageType {
            expected: MsgType::Reply,
            found: MsgType::Request,
        })),
        GiopMessageView::Other(GiopMessage::Reply { header, body }) => Ok(Some(Event::Reply {
            header,
            body,
            code_sets: cs(code_sets),
        })),
        GiopMessageView::Other(GiopMessage::LocateRequest(h)) => {
            let reply = reply_context(h.request_id, true, cs(code_sets));
            Ok(Some(Event::LocateRequest { header: h, reply }))
        }
        GiopMessageView::Other(GiopMessage::LocateReply { header, body }) => {
            Ok(Some(Event::LocateReply {
                header,
                body,
                code_sets: cs(code_sets),
            }))
        }
        GiopMessageView::Other(GiopMessage::CancelRequest(h)) => Ok(Some(Event::CancelRequest {
            request_id: h.request_id,
        })),
        GiopMessageView::Other(GiopMessage::CloseConnection) => Ok(Some(Event::CloseConnection)),
        GiopMessageView::Other(GiopMessage::MessageError) => Ok(Some(Event::MessageError)),
        // Fragments were taken by the reassembler, and requests decode as views: neither
        // reaches here.
        GiopMessageView::Other(GiopMessage::Fragment { .. }) => {
            Err(failure.fail(GiopError::UnexpectedFragment { request_id: None }))
        }
        GiopMessageView::Other(GiopMessage::Request { .. }) => {
            Err(failure.fail(GiopError::WrongMessageType {
                expected: MsgType::Request,
                found: MsgType::Request,
            }))
        }
    }
}
