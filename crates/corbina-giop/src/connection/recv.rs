//! The receive buffer of a connection: where the runtime reads, and where whole messages are
//! framed and decoded in place.

use super::meter::Account;
use crate::error::Result;
use crate::header::{MessageHeader, HEADER_LEN};

/// A read after a small message asks for up to this much (several small messages, a burst of
/// oneways, come in with one system call).
pub(crate) const READ_CHUNK: usize = 64 * 1024;

/// Messages at least this long are read exactly: the read stops at their end, so the body
/// lands in place and the next message's body is never pulled in behind it and moved.
pub(crate) const DIRECT_READ: usize = 16 * 1024;

/// A buffer grown past this by one large message is dropped once that message is done, so
/// an idle connection does not pin it.
pub(crate) const MAX_KEPT_BUFFER: usize = 4 << 20;

/// Bytes received on one connection: `buf[start..end]` is unconsumed; `buf[..]` beyond `end`
/// is initialised memory kept for the next reads (never zeroed again).
#[derive(Debug)]
pub(crate) struct RecvBuffer {
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// The header of the message at `start`, once its 12 bytes are in and checked.
    header: Option<MessageHeader>,
    /// The last message framed was large: read exactly what the next one needs.
    large: bool,
    max_message_size: u32,
    /// The memory budget the buffer's growth is charged to, if any.
    account: Option<Account>,
}

impl RecvBuffer {
    pub(crate) fn new(max_message_size: u32) -> RecvBuffer {
        RecvBuffer {
            buf: Vec::new(),
            start: 0,
            end: 0,
            header: None,
            large: false,
            max_message_size,
            account: None,
        }
    }

    /// Charges the buffer's growth to `account` from now on.
    pub(crate) fn set_account(&mut self, mut account: Account) -> bool {
        let ok = account.buffer_len(self.buf.len());
        self.account = Some(account);
        ok
    }

    pub(crate) fn account(&mut self) -> Option<&mut Account> {
        self.account.as_mut()
    }

    /// Bytes received and not consumed.
    #[inline]
    pub(crate) fn buffered(&self) -> usize {
        self.end - self.start
    }

    /// How many more bytes complete the header or message at the front (0: one is whole).
    #[inline]
    pub(crate) fn wanted(&self) -> usize {
        let need = self.header.map_or(HEADER_LEN, |h| h.total_len());
        need.saturating_sub(self.buffered())
    }

    /// Where the next read goes: room for what the current message still needs, and after a
    /// small message some more (up to [`READ_CHUNK`]). Always inlined: rustc's choice
    /// flipped with unrelated changes elsewhere (the server read loop paid ~30 instructions a
    /// message for the call).
    #[inline(always)]
    pub(crate) fn read_buf(&mut self) -> &mut [u8] {
        if self.start == self.end {
            // The common case between small messages: an empty buffer of a chunk or more.
            if !self.large && self.buf.len() >= READ_CHUNK {
                self.start = 0;
                self.end = 0;
                return &mut self.buf[..READ_CHUNK];
            }
            self.start = 0;
            self.end = 0;
        }
        let want = self.wanted();
        let exact = want > 0 && (self.large || want >= DIRECT_READ);
        let mut offer = if exact { want } else { want.max(READ_CHUNK) };
        if self.buf.len() - self.end < offer && self.start > 0 {
            // Move the partial message to the front (at most a chunk: larger ones are read
            // exactly and never left partial behind another).
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() - self.end < offer {
            offer = self.grow(exact, want, offer);
        }
        &mut self.buf[self.end..self.end + offer]
    }

    /// Makes room for the next read of `offer` bytes (`want` of them the message's rest,
    /// read `exact`ly); returns the offer, cut to what the buffer may grow to. Out of line:
    /// the buffer grows rarely, and `read_buf` stays small enough to inline.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, exact: bool, want: usize, offer: usize) -> usize {
        if exact {
            // A large message's size comes from its header, which the peer wrote: the
            // buffer, its capacity included, grows with what has arrived (at most doubling
            // it, at least a chunk), never straight to that size, so a header alone makes
            // us allocate no more than a chunk. Doubling keeps the moves of a growing
            // message to about its size in all (mremap, no copy, for large blocks).
            let total = self.end + want;
            let arrived = self.end - self.start;
            let grow_to = (self.end + arrived.max(READ_CHUNK))
                .min(total)
                .max(self.buf.len());
            if !self.charge(grow_to) {
                return offer.min(self.buf.len() - self.end);
            }
            self.buf.reserve_exact(grow_to - self.buf.len());
            self.buf.resize(grow_to, 0);
            offer.min(self.buf.len() - self.end)
        } else {
            if !self.charge(self.end + offer) {
                return self.buf.len() - self.end;
            }
            // Zeroed once when the buffer grows, never per read.
            self.buf.reserve_exact(self.end + offer - self.buf.len());
            self.buf.resize(self.end + offer, 0);
            offer
        }
    }

    /// Charges growth to `len` bytes to the budget, if there is one; `false`: refused (the
    /// buffer does not grow, reads get what room is left, then none: the owner is closing
    /// the connection).
    fn charge(&mut self, len: usize) -> bool {
        self.account.as_mut().is_none_or(|a| a.buffer_len(len))
    }

    /// The buffer emptied after a message larger than a read chunk: it is kept for the
    /// next one unless it is very large or memory is short (then it goes back to the
    /// allocator).
    #[cold]
    #[inline(never)]
    fn after_large(&mut self) {
        let pressed = self.account.as_ref().is_some_and(Account::pressed);
        if pressed || self.buf.len() > MAX_KEPT_BUFFER {
            self.buf = Vec::new();
            self.charge(0);
        }
    }

    /// `n` bytes were read into the slice [`RecvBuffer::read_buf`] gave.
    #[inline]
    pub(crate) fn commit(&mut self, n: usize) {
        self.end = (self.end + n).min(self.buf.len());
    }

    /// Appends bytes received elsewhere (tests, fuzzing, transports that hand out buffers).
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let dst = self.read_buf();
            if dst.is_empty() {
                // The budget refused the growth: its owner is closing the connection.
                return;
            }
            let n = dst.len().min(bytes.len());
            dst[..n].copy_from_slice(&bytes[..n]);
            self.commit(n);
            bytes = &bytes[n..];
        }
    }

    /// The header and length of the message at the front once all of it is in. The header
    /// is checked (magic, version, type, size limit) as soon as its 12 bytes are there.
    #[inline]
    pub(crate) fn whole(&mut self) -> Result<Option<(MessageHeader, usize)>> {
        let header = match self.header {
            Some(h) => h,
            None => {
                let Some(hb) = self
                    .buf
                    .get(self.start..self.end)
                    .and_then(|b| b.first_chunk::<HEADER_LEN>())
                else {
                    return Ok(None);
                };
                let h = MessageHeader::decode(hb)?;
                h.check(self.max_message_size)?;
                self.large = h.total_len() >= DIRECT_READ;
                self.header = Some(h);
                h
            }
        };
        let total = header.total_len();
        Ok((self.buffered() >= total).then_some((header, total)))
    }

    /// Everything received and not consumed, the message at the front first.
    #[inline]
    pub(crate) fn unread(&self) -> &[u8] {
        self.buf.get(self.start..self.end).unwrap_or_default()
    }

    /// The message at the front was framed from [`RecvBuffer::unread`] (as
    /// [`RecvBuffer::whole`] frames one) and is shorter than [`DIRECT_READ`].
    #[inline]
    pub(crate) fn framed_small(&mut self) {
        self.large = false;
    }

    /// The message at the front, `len` bytes.
    #[inline]
    pub(crate) fn front(&self, len: usize) -> &[u8] {
        self.buf
            .get(self.start..self.start + len)
            .unwrap_or_default()
    }

    /// Drops the message at the front (`len` bytes, as [`RecvBuffer::whole`] gave).
    #[inline]
    pub(crate) fn consume(&mut self, len: usize) {
        self.start = (self.start + len).min(self.end);
        self.header = None;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            if self.buf.len() > READ_CHUNK {
                self.after_large();
            }
        }
    }

    /// Gives back memory held for reads while nothing is buffered (an idle connection).
    pub(crate) fn shrink_idle(&mut self) {
        if self.start == self.end && self.buf.len() > READ_CHUNK {
            self.buf.truncate(READ_CHUNK);
            self.buf.shrink_to_fit();
            self.charge(self.buf.len());
        }
    }

    /// Bytes of memory held: the buffer's capacity, which grows only with bytes received.
    pub(crate) fn capacity(&self) -> usize {
        self.buf.capacity()
    }
}
