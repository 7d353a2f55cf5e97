//! Replies filed by request id for the calls waiting on a connection that many calls share
//! (the asynchronous connection, the bidirectional one): one table, generic over how a
//! waiting call is woken (a task's `Waker`, or nothing of its own where callers wait on the
//! connection's condition variable).

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::task::Poll;

use crate::cdr::CodeSets;
use crate::giop::message::{Body, OwnedBody};
use crate::giop::ReplyHeader;

/// A reply copied out of the receive buffer for the call waiting for it.
pub(crate) struct OwnedReply {
    pub(crate) header: ReplyHeader,
    pub(crate) body: OwnedBody,
    pub(crate) code_sets: CodeSets,
}

/// What became of a request sent on a shared connection.
pub(crate) enum Outcome {
    /// The reply.
    Reply(OwnedReply),
    /// A oneway, written.
    Sent,
    /// Not processed by the peer (the connection was closing or closed in order, or the
    /// request could not be written whole): send it again, elsewhere.
    Resend,
}

/// How a shared connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// The peer sent CloseConnection: requests in flight were not processed.
    Orderly,
    /// The connection failed or was closed under its calls.
    Failed,
}

/// Where a call in flight stands.
pub(crate) enum Slot<W> {
    /// No reply yet; how to wake the call when it comes.
    Waiting(W),
    Replied(OwnedReply),
    /// Its deadline passed (the request was cancelled on the wire).
    TimedOut,
}

/// What a call that stopped waiting gets: its reply, or why there is none.
pub(crate) enum Settled {
    Reply(OwnedReply),
    TimedOut,
    /// The connection ended before the reply came.
    Ended(Ended),
    /// No such call (settled already, or given up).
    Gone,
}

/// Calls kept in the vector before spilling into the map.
const SMALL: usize = 8;

/// The calls waiting on one connection, by request id: a vector of at most [`SMALL`]
/// searched from the end (the newest call is the likeliest to be answered next, and a
/// scan of a few ids costs less than hashing), spilling into a hash map when more are in
/// flight at once. Its per-call functions are always inlined: they are on the asynchronous
/// call path, where an outlined generic instance cost ~60 instructions per call (measured).
pub(crate) struct Replies<W> {
    /// At most [`SMALL`], the newest last; its allocation is kept from call to call.
    small: Vec<(u32, Slot<W>)>,
    /// The rest, once more than [`SMALL`] were in flight at once.
    large: HashMap<u32, Slot<W>, BuildHasherDefault<RequestIdHasher>>,
}

impl<W> Default for Replies<W> {
    fn default() -> Self {
        Replies {
            small: Vec::new(),
            large: HashMap::default(),
        }
    }
}

impl<W> Replies<W> {
    /// Calls in flight (waiting, or with a reply not yet taken).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.small.len() + self.large.len()
    }

    /// Request `request_id` was sent (or is about to be): its reply is awaited.
    #[inline(always)]
    pub(crate) fn expect(&mut self, request_id: u32, waiter: W) {
        if self.small.len() < SMALL {
            self.small.push((request_id, Slot::Waiting(waiter)));
        } else {
            self.expect_large(request_id, waiter);
        }
    }

    /// Out of line: one call at a time never comes here.
    #[cold]
    #[inline(never)]
    fn expect_large(&mut self, request_id: u32, waiter: W) {
        self.large.extend(self.small.drain(..));
        self.large.insert(request_id, Slot::Waiting(waiter));
    }

    /// The slot of `request_id`, if it is in flight.
    #[inline(always)]
    fn slot(&mut self, request_id: u32) -> Option<&mut Slot<W>> {
        match self.small.iter().rposition(|(id, _)| *id == request_id) {
            Some(i) => Some(&mut self.small[i].1),
            None if self.large.is_empty() => None,
            None => self.large.get_mut(&request_id),
        }
    }

    /// Takes the slot of `request_id` out.
    #[inline(always)]
    fn remove(&mut self, request_id: u32) -> Option<Slot<W>> {
        match self.small.iter().rposition(|(id, _)| *id == request_id) {
            Some(i) => Some(self.small.swap_remove(i).1),
            None if self.large.is_empty() => None,
            None => self.large.remove(&request_id),
        }
    }

    /// Files a reply for the call waiting for it (copied out of the receive buffer);
    /// returns how to wake it. A reply no call waits for (given up, or timed out) is
    /// dropped: `None`.
    #[inline(always)]
    pub(crate) fn file(
        &mut self,
        header: ReplyHeader,
        body: Body<'_>,
        code_sets: CodeSets,
    ) -> Option<W> {
        let slot = self.slot(header.request_id)?;
        if !matches!(slot, Slot::Waiting(_)) {
            return None;
        }
        let reply = Slot::Replied(OwnedReply {
            header,
            body: body.to_owned_body(),
            code_sets,
        });
        match std::mem::replace(slot, reply) {
            Slot::Waiting(w) => Some(w),
            _ => None,
        }
    }

    /// The deadline of `request_id` passed while it waited: how to wake it.
    pub(crate) fn expire(&mut self, request_id: u32) -> Option<W> {
        let slot = self.slot(request_id)?;
        if !matches!(slot, Slot::Waiting(_)) {
            return None;
        }
        match std::mem::replace(slot, Slot::TimedOut) {
            Slot::Waiting(w) => Some(w),
            _ => None,
        }
    }

    /// Forgets `request_id` (given up, or its request not sent); whether it was still
    /// waiting (then the peer may be told).
    pub(crate) fn forget(&mut self, request_id: u32) -> bool {
        matches!(self.remove(request_id), Some(Slot::Waiting(_)))
    }

    /// The call `request_id` looks for its reply: still waiting (`Pending`, after `waiting`
    /// is given its waiter, unless the connection `ended`), else what it gets, its slot
    /// freed. One search.
    #[inline(always)]
    pub(crate) fn poll(
        &mut self,
        request_id: u32,
        ended: Option<Ended>,
        waiting: impl FnOnce(&mut W),
    ) -> Poll<Settled> {
        self.poll_slot(request_id, ended, waiting)
            .map(|slot| settle(slot, ended))
    }

    /// [`Replies::poll`] giving the slot itself (`None`: no such call), for a caller that
    /// reads the reply where it lies rather than moving it on.
    #[inline(always)]
    pub(crate) fn poll_slot(
        &mut self,
        request_id: u32,
        ended: Option<Ended>,
        waiting: impl FnOnce(&mut W),
    ) -> Poll<Option<Slot<W>>> {
        match self.small.iter().rposition(|(id, _)| *id == request_id) {
            Some(i) => {
                if let (Slot::Waiting(w), None) = (&mut self.small[i].1, ended) {
                    waiting(w);
                    return Poll::Pending;
                }
                Poll::Ready(Some(self.small.swap_remove(i).1))
            }
            None => self.poll_large(request_id, ended, waiting),
        }
    }

    /// [`Replies::poll_slot`] of a call kept in the map.
    #[inline(never)]
    fn poll_large(
        &mut self,
        request_id: u32,
        ended: Option<Ended>,
        waiting: impl FnOnce(&mut W),
    ) -> Poll<Option<Slot<W>>> {
        match self.large.entry(request_id) {
            Entry::Occupied(mut e) => {
                if let (Slot::Waiting(w), None) = (e.get_mut(), ended) {
                    waiting(w);
                    return Poll::Pending;
                }
                Poll::Ready(Some(e.remove()))
            }
            Entry::Vacant(_) => Poll::Ready(None),
        }
    }

    /// Every call still waiting, for waking them all (the connection ended).
    pub(crate) fn waiters(&mut self) -> impl Iterator<Item = &mut W> {
        self.small
            .iter_mut()
            .map(|(_, s)| s)
            .chain(self.large.values_mut())
            .filter_map(|s| match s {
                Slot::Waiting(w) => Some(w),
                _ => None,
            })
    }
}

/// What a call whose slot was taken out (`None`: it had none) gets.
#[inline(always)]
fn settle<W>(slot: Option<Slot<W>>, ended: Option<Ended>) -> Settled {
    match (slot, ended) {
        (Some(Slot::Replied(r)), _) => Settled::Reply(r),
        (Some(Slot::TimedOut), _) => Settled::TimedOut,
        (Some(Slot::Waiting(_)), Some(how)) => Settled::Ended(how),
        (Some(Slot::Waiting(_)), None) | (None, _) => Settled::Gone,
    }
}

/// Hashes request ids, which the connection hands out itself (no peer chooses them): one
/// multiplication, spreading consecutive ids over the table's control bytes, instead of
/// SipHash.
#[derive(Default)]
struct RequestIdHasher(u64);

impl Hasher for RequestIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u32(&mut self, id: u32) {
        self.0 = u64::from(id).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdr::ByteOrder;
    use crate::giop::{MessageWriter, ReplyStatus, Version};

    /// Files a reply to `id` with a one-octet body `n`, decoded as a connection would.
    fn file(t: &mut Replies<u8>, id: u32, n: u8) -> Option<u8> {
        let h = ReplyHeader::new(id, ReplyStatus::NoException);
        let mut m =
            MessageWriter::reply(Version::V1_2, ByteOrder::NATIVE, CodeSets::DEFAULT, &h).unwrap();
        m.body().write_octet(n);
        let bytes = m.finish_bytes().unwrap();
        let (header, body) = crate::giop::message::decode_reply(&bytes).unwrap();
        t.file(header, body, CodeSets::DEFAULT)
    }

    fn octet(s: Settled) -> u8 {
        match s {
            Settled::Reply(r) => r.body.body().reader(r.code_sets).read_octet().unwrap(),
            _ => panic!("no reply"),
        }
    }

    #[test]
    fn replies_reach_their_callers_in_any_order_and_wake_them_once() {
        let mut t = Replies::default();
        t.expect(1, 10u8);
        t.expect(2, 20u8);
        assert_eq!(t.len(), 2);
        assert!(t.poll(1, None, |_| {}).is_pending());
        assert_eq!(file(&mut t, 2, 7), Some(20));
        // Filed once: a second reply with the same id wakes no one.
        assert_eq!(file(&mut t, 2, 8), None);
        assert_eq!(file(&mut t, 1, 9), Some(10));
        let Poll::Ready(s) = t.poll(2, None, |_| {}) else {
            panic!("pending")
        };
        assert_eq!(octet(s), 7);
        let Poll::Ready(s) = t.poll(1, Some(Ended::Failed), |_| {}) else {
            panic!("pending")
        };
        // A reply filed before the connection ended is still the call's.
        assert_eq!(octet(s), 9);
        assert_eq!(t.len(), 0);
        assert!(matches!(
            t.poll(1, None, |_| {}),
            Poll::Ready(Settled::Gone)
        ));
    }

    #[test]
    fn a_call_given_up_or_timed_out_drops_its_late_reply() {
        let mut t = Replies::default();
        t.expect(3, 0u8);
        t.expect(4, 1u8);
        assert!(t.forget(3));
        assert!(!t.forget(3));
        assert_eq!(file(&mut t, 3, 1), None);
        assert_eq!(t.expire(4), Some(1));
        assert_eq!(t.expire(4), None);
        assert_eq!(file(&mut t, 4, 1), None);
        assert!(matches!(
            t.poll(4, None, |_| {}),
            Poll::Ready(Settled::TimedOut)
        ));
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn many_calls_in_flight_spill_into_the_map_and_are_all_found() {
        let mut t = Replies::default();
        let n = (SMALL * 3) as u32;
        for id in 0..n {
            t.expect(id, id as u8);
        }
        assert_eq!(t.len(), n as usize);
        // Every waiter is reachable, in the vector or in the map.
        let mut woken: Vec<u8> = t.waiters().map(|w| *w).collect();
        woken.sort_unstable();
        assert_eq!(woken, (0..n as u8).collect::<Vec<_>>());
        // Replies in reverse order, one given up, one timed out.
        assert!(t.forget(3));
        assert_eq!(t.expire(5), Some(5));
        for id in (0..n).rev() {
            let filed = file(&mut t, id, id as u8 + 100);
            assert_eq!(filed, (id != 3 && id != 5).then_some(id as u8));
        }
        // New calls go into the vector again while the map still holds the old ones.
        t.expect(n, 0);
        assert_eq!(file(&mut t, n, 1), Some(0));
        for id in 0..=n {
            match (id, t.poll(id, None, |_| panic!("still waiting"))) {
                (3, Poll::Ready(Settled::Gone)) => {}
                (5, Poll::Ready(Settled::TimedOut)) => {}
                (i, Poll::Ready(s)) if i == n => assert_eq!(octet(s), 1),
                (i, Poll::Ready(s)) => assert_eq!(octet(s), i as u8 + 100),
                (_, Poll::Pending) => panic!("pending"),
            }
        }
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn the_end_of_the_connection_settles_every_waiting_call() {
        let mut t = Replies::default();
        t.expect(5, 50u8);
        t.expect(6, 60u8);
        let mut woken: Vec<u8> = t.waiters().map(|w| *w).collect();
        woken.sort_unstable();
        assert_eq!(woken, [50, 60]);
        let mut seen = None;
        assert!(t.poll(5, None, |w| seen = Some(*w)).is_pending());
        assert_eq!(seen, Some(50));
        assert!(matches!(
            t.poll(5, Some(Ended::Orderly), |_| {}),
            Poll::Ready(Settled::Ended(Ended::Orderly))
        ));
        assert!(matches!(
            t.poll(6, Some(Ended::Failed), |_| {}),
            Poll::Ready(Settled::Ended(Ended::Failed))
        ));
    }
}
