//! The requests a connection awaits replies for, found by request id in O(1).
//!
//! A synchronous caller has one request in flight per connection and an asynchronous one
//! may have thousands: the set is a vector of at most [`SMALL`] searched from the end (the
//! fastest there is for one or a few), which spills into a hash map keyed by the id when
//! full. A lookup scans the vector, then hashes.
//!
//! Each entry carries the caller's token ([`GiopConnection::set_reply_token`]): a runtime
//! keeping per-call state (a slot in its own table) gets it back with the reply
//! ([`GiopConnection::reply_token`]) instead of searching a second table by request id.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::GiopConnection;
use crate::header::Version;

/// Entries kept in the vector before spilling into the map.
const SMALL: usize = 8;

#[derive(Debug, Clone, Copy)]
pub(super) struct InFlight {
    pub request_id: u32,
    pub version: Version,
    pub cancelled: bool,
}

/// Request ids are unique and allocated in sequence by this end: a multiplicative hash
/// spreads them well enough, at a fraction of SipHash's cost (the ids are ours, not the
/// peer's, so there is nothing to flood).
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A request in flight and its caller's token.
#[derive(Debug, Clone, Copy)]
struct Entry {
    f: InFlight,
    token: u32,
}

/// The token of a request given none.
const NO_TOKEN: u32 = 0;

#[derive(Debug, Default)]
pub(super) struct InFlightSet {
    /// At most [`SMALL`], the newest last.
    small: Vec<Entry>,
    /// The rest, once more than [`SMALL`] were in flight at once.
    large: HashMap<u32, Entry, BuildHasherDefault<IdHasher>>,
    /// The token of the request last taken out by [`InFlightSet::remove`] (answered).
    answered: u32,
}

impl InFlightSet {
    #[inline]
    pub fn insert(&mut self, f: InFlight) {
        let e = Entry { f, token: NO_TOKEN };
        if self.small.len() < SMALL {
            self.small.push(e);
        } else {
            self.insert_large(e);
        }
    }

    /// Out of line: the synchronous path never comes here.
    #[cold]
    #[inline(never)]
    fn insert_large(&mut self, e: Entry) {
        self.large
            .extend(self.small.drain(..).map(|s| (s.f.request_id, s)));
        self.large.insert(e.f.request_id, e);
    }

    /// Takes `request_id` out (its reply came); its token is kept for
    /// [`InFlightSet::answered`]. Always inlined: once per call on the synchronous path,
    /// where as a call it cost 41 instructions (callgrind) against ~25 inlined.
    #[inline(always)]
    pub fn remove(&mut self, request_id: u32) -> Option<InFlight> {
        // From the end: the newest request is the likeliest to be answered first.
        let e = match self
            .small
            .iter()
            .rposition(|e| e.f.request_id == request_id)
        {
            Some(i) => self.small.swap_remove(i),
            None => self.remove_large(request_id)?,
        };
        self.answered = e.token;
        Some(e.f)
    }

    #[cold]
    #[inline(never)]
    fn remove_large(&mut self, request_id: u32) -> Option<Entry> {
        self.large.remove(&request_id)
    }

    #[inline]
    fn entry_mut(&mut self, request_id: u32) -> Option<&mut Entry> {
        match self
            .small
            .iter()
            .rposition(|e| e.f.request_id == request_id)
        {
            Some(i) => Some(&mut self.small[i]),
            None => self.large.get_mut(&request_id),
        }
    }

    #[inline]
    pub fn get_mut(&mut self, request_id: u32) -> Option<&mut InFlight> {
        self.entry_mut(request_id).map(|e| &mut e.f)
    }

    /// Gives `request_id` the caller's token; false if it is not in flight.
    #[inline]
    pub fn set_token(&mut self, request_id: u32, token: u32) -> bool {
        // Tagged right after it was sent: the newest entry, found by the first compare.
        match self.small.last_mut() {
            Some(e) if e.f.request_id == request_id => {
                e.token = token;
                true
            }
            _ => self
                .entry_mut(request_id)
                .map(|e| e.token = token)
                .is_some(),
        }
    }

    /// The token of the request last taken out by [`InFlightSet::remove`].
    #[inline]
    pub fn answered(&self) -> u32 {
        self.answered
    }

    /// Every entry, in no particular order.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = &InFlight> + '_ {
        self.small.iter().chain(self.large.values()).map(|e| &e.f)
    }
}

impl GiopConnection {
    /// Gives `request_id` (sent, its reply awaited) a token of the caller's, handed back
    /// by [`GiopConnection::reply_token`] when its Reply comes: a runtime that keeps each
    /// call's state in a table of its own (a slot index) finds it without a second search
    /// by request id. False if `request_id` is not in flight.
    #[inline]
    pub fn set_reply_token(&mut self, request_id: u32, token: u32) -> bool {
        self.in_flight.set_token(request_id, token)
    }

    /// The token ([`GiopConnection::set_reply_token`]; 0 if it was given none) of the
    /// request answered by the Reply or LocateReply [`GiopConnection::poll_event`] handed out
    /// last. Read after that event is dropped (it borrows the connection).
    #[inline]
    pub fn reply_token(&self) -> u32 {
        self.in_flight.answered()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(request_id: u32) -> InFlight {
        InFlight {
            request_id,
            version: Version::V1_2,
            cancelled: false,
        }
    }

    #[test]
    fn finds_entries_before_and_after_spilling_into_the_map() {
        let mut s = InFlightSet::default();
        for n in [1usize, SMALL, SMALL + 1, 1000] {
            for k in 0..n as u32 {
                s.insert(f(2 * k));
            }
            assert_eq!(s.iter().count(), n);
            assert!(s.get_mut(1).is_none() && s.remove(1).is_none());
            s.get_mut(0).unwrap().cancelled = true;
            // Answered in reverse order, until the set is empty.
            for k in (0..n as u32).rev() {
                let got = s.remove(2 * k).unwrap();
                assert_eq!((got.request_id, got.cancelled), (2 * k, k == 0));
                assert!(s.remove(2 * k).is_none());
            }
            assert_eq!(s.iter().count(), 0);
            assert!(s.large.is_empty() && s.small.is_empty());
        }
    }

    #[test]
    fn a_token_comes_back_with_the_request_it_was_given_to() {
        let mut s = InFlightSet::default();
        // Tokens set on the newest entry and on older ones, in the vector and in the map.
        for n in [3u32, SMALL as u32 + 5] {
            for k in 0..n {
                s.insert(f(2 * k));
                assert!(s.set_token(2 * k, 100 + k));
            }
            assert!(s.set_token(0, 7), "an older entry");
            assert!(!s.set_token(1, 9), "not in flight");
            for k in (0..n).rev() {
                s.remove(2 * k).unwrap();
                assert_eq!(s.answered(), if k == 0 { 7 } else { 100 + k });
            }
            // Failed lookups leave the last answer's token alone.
            assert!(s.remove(2).is_none());
            assert_eq!(s.answered(), 7);
        }
        s.insert(f(40));
        s.remove(40).unwrap();
        assert_eq!(s.answered(), NO_TOKEN);
    }

    #[test]
    fn the_connection_hands_each_replys_token_back() {
        use super::super::{Event, Role, Settings};
        use crate::{MessageWriter, ObjectKey, ReplyHeader, ReplyStatus, TargetAddress};
        use corbina_cdr::{ByteOrder, CodeSets};

        let mut c = GiopConnection::new(Settings::new(Role::Client));
        let target = TargetAddress::Key(ObjectKey::from("k"));
        let (_, a) = c.locate_request(Version::V1_2, &target).unwrap();
        let (_, b) = c.locate_request(Version::V1_2, &target).unwrap();
        assert!(c.set_reply_token(a, 11) && c.set_reply_token(b, 22));
        assert!(!c.set_reply_token(b + 2, 33), "never sent");
        // Answered out of order.
        for (id, token) in [(b, 22), (a, 11)] {
            let h = ReplyHeader::new(id, ReplyStatus::NoException);
            let bytes =
                MessageWriter::reply(Version::V1_2, ByteOrder::NATIVE, CodeSets::DEFAULT, &h)
                    .and_then(MessageWriter::finish_bytes)
                    .unwrap();
            c.push(&bytes);
            match c.poll_event().unwrap() {
                Some(Event::Reply { header, .. }) => assert_eq!(header.request_id, id),
                other => panic!("{other:?}"),
            }
            assert_eq!(c.reply_token(), token);
        }
    }
}
