//! Orderly close and refusal of a connection, and the version its control messages go out
//! in: [`CloseState`].

use corbina_cdr::ByteOrder;

use super::ControlMessage;
use crate::header::Version;

/// Orderly close and refusal of a connection: sans-IO, as the rest of the connection. The
/// state says what to send and when the connection is closed; the runtime writes the
/// message it is given, then shuts the transport down. The one home of these rules: a
/// [`GiopConnection`](super::GiopConnection) keeps one (the version of the MessageError it
/// queues after bad input), and hands out the one its writers share
/// ([`GiopConnection::close_state`](super::GiopConnection::close_state)) to a server runtime
/// whose replies several threads write (a reply deferred past its upcall, the workers of a
/// bidirectional connection, the ORB's shutdown and the idle scavenger).
///
/// - **CloseConnection** (GIOP §15.4.7) goes out only when no request is being processed
///   (the reply of the last one is written first): a close asked for while busy is done
///   when the last request ends. Requests that arrive after it are not processed (their
///   clients resend them).
/// - **MessageError** refuses the peer's input (a memory budget spent): closed at once.
/// - **Version**: both go out in the highest GIOP version the peer has used (GIOP 1.0
///   before its first message), so that a connection's control messages are the same
///   whichever thread sends them. The reader's connection notes every message's version;
///   the writers' share, under their lock, is fed each request's version by
///   [`CloseState::begin_request`].
#[derive(Debug, Clone)]
pub struct CloseState {
    /// Requests being processed (and, on a bidirectional connection, calls carried back).
    busy: u32,
    /// An orderly close is asked for: done at the next idle moment.
    closing: bool,
    closed: bool,
    /// The highest GIOP version of the peer's requests (GIOP 1.0 before the first: what
    /// the control messages go out in then too).
    peer_version: Version,
    byte_order: ByteOrder,
}

impl CloseState {
    /// An open connection, nothing received yet; control messages in `byte_order`.
    pub fn new(byte_order: ByteOrder) -> CloseState {
        CloseState {
            busy: 0,
            closing: false,
            closed: false,
            peer_version: Version::V1_0,
            byte_order,
        }
    }

    /// A request of `version` was read: whether to process it (counted busy until
    /// [`CloseState::end`]). `false` once a close is asked for: it is not processed.
    #[inline]
    pub fn begin_request(&mut self, version: Version) -> bool {
        self.note_version(version);
        self.begin()
    }

    /// The peer used GIOP `version`: control messages go out in the highest one.
    #[inline]
    pub(crate) fn note_version(&mut self, version: Version) {
        // Only GIOP 1.x reaches here (the connection refuses other majors): the minor
        // orders them. One compare per request, not Option<Version>'s (9 instructions).
        if version.minor > self.peer_version.minor {
            self.peer_version = version;
        }
    }

    /// The highest GIOP version the peer has used (1.0 before its first message).
    pub fn peer_version(&self) -> Version {
        self.peer_version
    }

    /// A call goes out over the connection (bidirectional GIOP), keeping it busy until
    /// [`CloseState::end`]; `false` once a close is asked for.
    #[inline]
    pub fn begin(&mut self) -> bool {
        if self.closing || self.closed {
            return false;
        }
        self.busy += 1;
        true
    }

    /// A request (its reply written) or a call is over. `true`: a close was asked for and
    /// nothing else keeps the connection busy, so it is now closed in order: write
    /// [`CloseState::close_connection`], then shut the transport down. (A flag, not the
    /// message: this is on every request's path.)
    #[inline]
    #[must_use]
    pub fn end(&mut self) -> bool {
        self.busy = self.busy.saturating_sub(1);
        self.closing && self.busy == 0 && self.closed_in_order()
    }

    // Out of line: the end of a request when no close is asked for stays as small as it was
    // before this state moved here (two tests and a store).
    #[cold]
    #[inline(never)]
    fn closed_in_order(&mut self) -> bool {
        !std::mem::replace(&mut self.closed, true)
    }

    /// The CloseConnection that closes the connection in order, in the peer's version.
    pub fn close_connection(&self) -> ControlMessage {
        ControlMessage::close_connection(self.peer_version, self.byte_order)
    }

    /// Asks for an orderly close: the CloseConnection to write now if idle, else it is due
    /// at the [`CloseState::end`] of the last request.
    pub fn close(&mut self) -> Option<ControlMessage> {
        self.closing = true;
        self.close_if_idle()
    }

    /// Refuses the peer's input: the MessageError to write (`None` if closed already);
    /// the connection is closed.
    pub fn refuse(&mut self) -> Option<ControlMessage> {
        if self.closed {
            return None;
        }
        self.closed = true;
        Some(ControlMessage::message_error(
            self.peer_version,
            self.byte_order,
        ))
    }

    /// Closed without a message of its own (the transport failed, the peer's bytes broke
    /// the protocol, or the ORB goes away at once). `true` if it was not closed before:
    /// what the reader's connection queued for the peer (its MessageError) is still to be
    /// written.
    pub fn shut_down(&mut self) -> bool {
        !std::mem::replace(&mut self.closed, true)
    }

    /// Whether nothing more is to be written.
    #[inline]
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Whether a request or call keeps the connection busy.
    #[inline]
    pub fn is_busy(&self) -> bool {
        self.busy > 0
    }

    /// Whether an orderly close is asked for (done or not).
    #[inline]
    pub fn is_closing(&self) -> bool {
        self.closing
    }

    fn close_if_idle(&mut self) -> Option<ControlMessage> {
        if !self.closing || self.busy > 0 || self.closed {
            return None;
        }
        self.closed = true;
        Some(self.close_connection())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 12 bytes of a header-only message: GIOP, version, flags (byte order), type, 0.
    fn header(minor: u8, msg_type: u8) -> [u8; 12] {
        let mut b = [0u8; 12];
        b[..4].copy_from_slice(b"GIOP");
        b[4] = 1;
        b[5] = minor;
        // Big-endian: flags 0 (GIOP 1.0's byte_order octet 0 as well).
        b[7] = msg_type;
        b
    }

    const CLOSE_CONNECTION: u8 = 5;
    const MESSAGE_ERROR: u8 = 6;

    #[test]
    fn close_connection_waits_for_the_last_reply() {
        let mut c = CloseState::new(ByteOrder::Big);
        assert!(c.begin_request(Version::V1_2));
        assert!(c.begin_request(Version::V1_2));
        // Asked for while two requests run: nothing yet, and no new request is processed.
        assert!(c.close().is_none());
        assert!(c.is_closing() && !c.is_closed());
        assert!(!c.begin_request(Version::V1_2));
        assert!(!c.begin());
        assert!(!c.end());
        assert!(c.end(), "CloseConnection after the last reply");
        assert!(c.is_closed());
        assert_eq!(c.close_connection().as_bytes(), header(2, CLOSE_CONNECTION));
        // Once only.
        assert!(c.close().is_none());
        assert!(!c.end());
        assert!(c.refuse().is_none());
    }

    #[test]
    fn an_idle_connection_closes_at_once_in_the_highest_version_of_its_requests() {
        let mut c = CloseState::new(ByteOrder::Big);
        assert!(c.begin_request(Version::V1_1));
        assert!(!c.end());
        assert!(c.begin_request(Version::V1_2));
        assert!(!c.end());
        // A later request at a lower version does not lower it.
        assert!(c.begin_request(Version::V1_0));
        assert!(!c.end());
        assert!(!c.is_busy());
        let m = c.close().expect("idle: at once");
        assert_eq!(m.as_bytes(), header(2, CLOSE_CONNECTION));
        // Before any request: GIOP 1.0.
        let mut fresh = CloseState::new(ByteOrder::Big);
        assert_eq!(
            fresh.close().expect("idle").as_bytes(),
            header(0, CLOSE_CONNECTION)
        );
    }

    #[test]
    fn refusing_input_sends_message_error_and_closes_even_when_busy() {
        let mut c = CloseState::new(ByteOrder::Big);
        assert!(c.begin_request(Version::V1_1));
        let m = c.refuse().expect("MessageError");
        assert_eq!(m.as_bytes(), header(1, MESSAGE_ERROR));
        assert!(c.is_closed());
        // The reply of the request in progress brings no CloseConnection after it.
        assert!(!c.end());
        assert!(c.close().is_none());
        let mut little = CloseState::new(ByteOrder::Little);
        let m = little.refuse().expect("MessageError");
        assert_eq!(m.as_bytes()[6] & 1, 1, "little-endian flag");
    }

    #[test]
    fn a_connection_shut_down_sends_nothing() {
        let mut c = CloseState::new(ByteOrder::Big);
        assert!(c.begin());
        assert!(c.shut_down(), "was open");
        assert!(!c.shut_down(), "once");
        assert!(c.is_closed());
        assert!(c.close().is_none());
        assert!(!c.end());
        assert!(c.refuse().is_none());
        assert!(!c.begin_request(Version::V1_2));
    }
}
