//! The framer: bytes in as they arrive, whole GIOP messages out. No I/O, no blocking.

use crate::error::{GiopError, Result};
use crate::header::{MessageHeader, HEADER_LEN};
use crate::message::Message;

/// Default cap on `message_size`: 64 MiB.
pub const DEFAULT_MAX_MESSAGE_SIZE: u32 = 64 << 20;

/// Splits a byte stream into GIOP messages (Fragments included; see
/// [`Reassembler`](crate::Reassembler) to put those together).
///
/// Feed it with [`push`](Framer::push) and drain it with
/// [`next_message`](Framer::next_message) until that returns `Ok(None)`. To read no further
/// than the current message, read [`wanted`](Framer::wanted) bytes from the socket. Any error
/// is final: the runtime sends MessageError and closes the connection, and the framer keeps
/// returning the error.
#[derive(Debug, Clone)]
pub struct Framer {
    buf: Vec<u8>,
    start: usize,
    max_message_size: u32,
    pending: Option<MessageHeader>,
    failed: Option<GiopError>,
}

impl Default for Framer {
    fn default() -> Self {
        Framer::new(DEFAULT_MAX_MESSAGE_SIZE)
    }
}

impl Framer {
    /// A framer refusing messages whose `message_size` exceeds `max_message_size`.
    pub fn new(max_message_size: u32) -> Framer {
        Framer {
            buf: Vec::new(),
            start: 0,
            max_message_size,
            pending: None,
            failed: None,
        }
    }

    /// Appends bytes received from the peer.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start >= self.buf.len() / 2 {
            // Drop consumed bytes before growing, so the buffer stays near one message.
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received but not yet returned as messages.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start
    }

    /// How many more bytes complete the next header or message (never past its end).
    pub fn wanted(&self) -> usize {
        let have = self.buffered();
        match self.pending {
            Some(h) => h.total_len().saturating_sub(have),
            None => HEADER_LEN.saturating_sub(have),
        }
    }

    /// The header of the message being received, once its 12 bytes are in.
    pub fn pending_header(&self) -> Option<&MessageHeader> {
        self.pending.as_ref()
    }

    /// The next whole message, `Ok(None)` if more bytes are needed.
    pub fn next_message(&mut self) -> Result<Option<Message>> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        match self.try_next() {
            Err(e) => {
                self.failed = Some(e.clone());
                Err(e)
            }
            ok => ok,
        }
    }

    fn try_next(&mut self) -> Result<Option<Message>> {
        let avail = self.buf.get(self.start..).unwrap_or_default();
        let header = match self.pending {
            Some(h) => h,
            None => {
                let Some(hb) = avail.first_chunk::<HEADER_LEN>() else {
                    return Ok(None);
                };
                let h = MessageHeader::decode(hb)?;
                h.check(self.max_message_size)?;
                self.pending = Some(h);
                h
            }
        };
        let total = header.total_len();
        if avail.len() < total {
            return Ok(None);
        }
        let bytes = if self.start == 0 && self.buf.len() == total {
            // The buffer is exactly this message: hand it over without copying.
            std::mem::take(&mut self.buf)
        } else {
            let v = avail.get(..total).unwrap_or_default().to_vec();
            self.start += total;
            v
        };
        if self.start >= self.buf.len() {
            self.buf.clear();
            self.start = 0;
        }
        self.pending = None;
        Message::from_bytes(bytes).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::close::close_connection;
    use crate::header::{MsgType, Version};
    use corbina_cdr::ByteOrder;

    #[test]
    fn byte_by_byte_and_batched() {
        let a = close_connection(Version::V1_2, ByteOrder::Little);
        let mut b = crate::message::MessageWriter::cancel_request(
            Version::V1_1,
            ByteOrder::Big,
            &crate::CancelRequestHeader { request_id: 3 },
        )
        .unwrap()
        .finish_bytes()
        .unwrap();
        let mut stream = a.to_vec();
        stream.append(&mut b);
        let mut f = Framer::default();
        let mut got = Vec::new();
        for (i, byte) in stream.iter().enumerate() {
            assert!(f.wanted() > 0, "at {i}");
            f.push(std::slice::from_ref(byte));
            while let Some(m) = f.next_message().unwrap() {
                got.push(m.header().msg_type);
            }
        }
        assert_eq!(got, [MsgType::CloseConnection, MsgType::CancelRequest]);
        assert_eq!(f.buffered(), 0);
        let mut f = Framer::default();
        f.push(&stream);
        assert_eq!(f.next_message().unwrap().unwrap().bytes(), &a);
        assert_eq!(
            f.next_message().unwrap().unwrap().header().msg_type,
            MsgType::CancelRequest
        );
        assert_eq!(f.next_message().unwrap(), None);
        assert_eq!(f.wanted(), 12);
    }

    #[test]
    fn errors_are_final() {
        let mut f = Framer::new(100);
        f.push(b"GIOP\x01\x02\x00\x00\x00\x00\x01\x00");
        assert!(matches!(
            f.next_message(),
            Err(GiopError::MessageTooLarge {
                size: 256,
                limit: 100
            })
        ));
        assert!(f.next_message().is_err());
        let mut f = Framer::default();
        f.push(b"HTTP/1.1 200 OK\r\n");
        assert!(matches!(f.next_message(), Err(GiopError::BadMagic(_))));
        let mut f = Framer::default();
        f.push(b"GIOP\x02\x00\x00\x00\x00\x00\x00\x00");
        assert!(matches!(
            f.next_message(),
            Err(GiopError::UnsupportedVersion { .. })
        ));
        let mut f = Framer::default();
        f.push(b"GIOP\x01\x01\x00\x09\x00\x00\x00\x00");
        assert!(matches!(
            f.next_message(),
            Err(GiopError::UnknownMessageType { .. })
        ));
    }

    #[test]
    fn header_then_body_into_own_buffer() {
        let m = close_connection(Version::V1_0, ByteOrder::Big);
        let h = MessageHeader::decode(&m).unwrap();
        assert_eq!(h.body_len(), 0);
        let mut f = Framer::default();
        f.push(&m[..12]);
        assert_eq!(f.wanted(), 0);
        assert!(f.next_message().unwrap().is_some());
    }
}
