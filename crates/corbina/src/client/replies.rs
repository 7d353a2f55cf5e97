//! Replies filed by request id for the calls waiting on a connection that many calls share
//! (the asynchronous connection, the bidirectional one): one table, generic over how a
//! waiting call is woken (a task's `Waker`, or nothing of its own where callers wait on the
//! connection's condition variable). The connection's in-flight set matches a reply to its
//! request; this table holds what the call needs, found by the token the in-flight entry
//! carries.

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

impl OwnedReply {
    /// The reply a connection handed out ([`Event::Reply`]'s parts), copied.
    ///
    /// [`Event::Reply`]: crate::giop::connection::Event::Reply
    #[inline(always)]
    pub(crate) fn copy(header: ReplyHeader, body: Body<'_>, code_sets: CodeSets) -> OwnedReply {
        OwnedReply {
            header,
            body: body.to_owned_body(),
            code_sets,
        }
    }
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

/// A table slot: a call in flight (with its request id, to check the token a reply
/// comes back with), or free.
enum Entry<W> {
    Used(u32, Slot<W>),
    /// The next free slot ([`NONE`]: the last).
    Free(u32),
}

/// No slot.
const NONE: u32 = u32::MAX;

/// The calls waiting on one connection, in a slab: a call's slot index is its token,
/// given to the connection's in-flight entry ([`GiopConnection::set_reply_token`]) and
/// handed back with its reply, so filing a reply and polling for it index the table
/// without searching it (the request-id lookup is the connection's alone). Freed slots
/// are reused, newest first; the allocation is kept from call to call. Its per-call
/// functions are always inlined: they are on the asynchronous call path, where an
/// outlined generic instance cost ~60 instructions per call (measured).
///
/// [`GiopConnection::set_reply_token`]: crate::giop::connection::GiopConnection::set_reply_token
pub(crate) struct Replies<W> {
    slots: Vec<Entry<W>>,
    /// The first free slot, [`NONE`] if every one is used.
    free: u32,
    /// Slots used.
    len: usize,
}

impl<W> Default for Replies<W> {
    fn default() -> Self {
        Replies {
            slots: Vec::new(),
            free: NONE,
            len: 0,
        }
    }
}

impl<W> Replies<W> {
    /// Calls in flight (waiting, or with a reply not yet taken).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Request `request_id` was sent (or is about to be): its reply is awaited. Returns
    /// the call's token; `None` when the table is full (`u32::MAX - 1` calls).
    #[inline(always)]
    pub(crate) fn expect(&mut self, request_id: u32, waiter: W) -> Option<u32> {
        let used = Entry::Used(request_id, Slot::Waiting(waiter));
        let token = self.free;
        match self.slots.get_mut(token as usize) {
            Some(e) => {
                let Entry::Free(next) = std::mem::replace(e, used) else {
                    // The free list only links free slots.
                    return None;
                };
                self.free = next;
            }
            None => return self.push(used),
        }
        self.len += 1;
        Some(token)
    }

    /// A new slot at the end (no free one).
    #[inline(always)]
    fn push(&mut self, used: Entry<W>) -> Option<u32> {
        let token = u32::try_from(self.slots.len())
            .ok()
            .filter(|&t| t != NONE)?;
        self.slots.push(used);
        self.len += 1;
        Some(token)
    }

    /// The slot of the call `token`, if it is in flight.
    #[inline(always)]
    fn slot(&mut self, token: u32) -> Option<&mut Slot<W>> {
        match self.slots.get_mut(token as usize) {
            Some(Entry::Used(_, slot)) => Some(slot),
            _ => None,
        }
    }

    /// Takes the slot of `token` out, freeing it.
    #[inline(always)]
    fn remove(&mut self, token: u32) -> Option<Slot<W>> {
        let e = self.slots.get_mut(token as usize)?;
        if matches!(e, Entry::Free(_)) {
            return None;
        }
        let Entry::Used(_, slot) = std::mem::replace(e, Entry::Free(self.free)) else {
            return None;
        };
        self.free = token;
        self.len -= 1;
        if self.len == 0 && self.slots.len() > KEPT {
            self.shrink();
        }
        Some(slot)
    }

    /// Gives back the memory of a burst of calls once none is in flight.
    #[cold]
    #[inline(never)]
    fn shrink(&mut self) {
        self.slots = Vec::new();
        self.free = NONE;
    }

    /// Files `reply` for the call `token` (the connection's [`reply_token`] of it), waiting
    /// for it; returns how to wake it. A reply no call of that id waits for is dropped:
    /// `None`.
    ///
    /// [`reply_token`]: crate::giop::connection::GiopConnection::reply_token
    #[inline(always)]
    pub(crate) fn file(&mut self, token: u32, reply: OwnedReply) -> Option<W> {
        let Some(Entry::Used(id, slot)) = self.slots.get_mut(token as usize) else {
            return None;
        };
        if *id != reply.header.request_id || !matches!(slot, Slot::Waiting(_)) {
            return None;
        }
        match std::mem::replace(slot, Slot::Replied(reply)) {
            Slot::Waiting(w) => Some(w),
            _ => None,
        }
    }

    /// The deadline of the call `token` (request `request_id`: a timer may outlive its call,
    /// and the slot go to another) passed while it waited: how to wake it.
    pub(crate) fn expire(&mut self, token: u32, request_id: u32) -> Option<W> {
        let Some(Entry::Used(id, slot)) = self.slots.get_mut(token as usize) else {
            return None;
        };
        if *id != request_id || !matches!(slot, Slot::Waiting(_)) {
            return None;
        }
        match std::mem::replace(slot, Slot::TimedOut) {
            Slot::Waiting(w) => Some(w),
            _ => None,
        }
    }

    /// Forgets the call `token` (given up, or its request not sent); whether it was still
    /// waiting (then the peer may be told).
    pub(crate) fn forget(&mut self, token: u32) -> bool {
        matches!(self.remove(token), Some(Slot::Waiting(_)))
    }

    /// The call `token` looks for its reply: still waiting (`Pending`, after `waiting` is
    /// given its waiter, unless the connection `ended`), else what it gets, its slot freed.
    #[inline(always)]
    pub(crate) fn poll(
        &mut self,
        token: u32,
        ended: Option<Ended>,
        waiting: impl FnOnce(&mut W),
    ) -> Poll<Settled> {
        self.poll_slot(token, ended, waiting)
            .map(|slot| settle(slot, ended))
    }

    /// [`Replies::poll`] giving the slot itself (`None`: no such call), for a caller that
    /// reads the reply where it lies rather than moving it on.
    #[inline(always)]
    pub(crate) fn poll_slot(
        &mut self,
        token: u32,
        ended: Option<Ended>,
        waiting: impl FnOnce(&mut W),
    ) -> Poll<Option<Slot<W>>> {
        if let (Some(Slot::Waiting(w)), None) = (self.slot(token), ended) {
            waiting(w);
            return Poll::Pending;
        }
        Poll::Ready(self.remove(token))
    }

    /// Every call still waiting, for waking them all (the connection ended).
    pub(crate) fn waiters(&mut self) -> impl Iterator<Item = &mut W> {
        self.slots.iter_mut().filter_map(|e| match e {
            Entry::Used(_, Slot::Waiting(w)) => Some(w),
            _ => None,
        })
    }
}

/// Slots kept when the last call leaves (more are freed: a burst of calls does not hold
/// its memory for the connection's life).
const KEPT: usize = 64;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdr::ByteOrder;
    use crate::giop::{MessageWriter, ReplyStatus, Version};

    /// A reply to `id` with a one-octet body `n`, decoded and copied as a connection's
    /// reader does.
    fn reply(id: u32, n: u8) -> OwnedReply {
        let h = ReplyHeader::new(id, ReplyStatus::NoException);
        let mut m =
            MessageWriter::reply(Version::V1_2, ByteOrder::NATIVE, CodeSets::DEFAULT, &h).unwrap();
        m.body().write_octet(n);
        let bytes = m.finish_bytes().unwrap();
        let (header, body) = crate::giop::message::decode_reply(&bytes).unwrap();
        OwnedReply::copy(header, body, CodeSets::DEFAULT)
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
        let one = t.expect(1, 10u8).unwrap();
        let two = t.expect(2, 20u8).unwrap();
        assert_ne!(one, two);
        assert_eq!(t.len(), 2);
        assert!(t.poll(one, None, |_| {}).is_pending());
        assert_eq!(t.file(two, reply(2, 7)), Some(20));
        // Filed once: a second reply with the same id wakes no one.
        assert_eq!(t.file(two, reply(2, 8)), None);
        // A token with another call's id (a stale one) files nothing.
        assert_eq!(t.file(one, reply(2, 8)), None);
        assert_eq!(t.file(one, reply(1, 9)), Some(10));
        let Poll::Ready(s) = t.poll(two, None, |_| {}) else {
            panic!("pending")
        };
        assert_eq!(octet(s), 7);
        let Poll::Ready(s) = t.poll(one, Some(Ended::Failed), |_| {}) else {
            panic!("pending")
        };
        // A reply filed before the connection ended is still the call's.
        assert_eq!(octet(s), 9);
        assert_eq!(t.len(), 0);
        assert!(matches!(
            t.poll(one, None, |_| {}),
            Poll::Ready(Settled::Gone)
        ));
        // Tokens out of range are no calls.
        assert!(matches!(
            t.poll(1000, None, |_| {}),
            Poll::Ready(Settled::Gone)
        ));
        assert_eq!(t.file(NONE, reply(1, 0)), None);
    }

    #[test]
    fn a_call_given_up_or_timed_out_drops_its_late_reply() {
        let mut t = Replies::default();
        let three = t.expect(3, 0u8).unwrap();
        let four = t.expect(4, 1u8).unwrap();
        assert!(t.forget(three));
        assert!(!t.forget(three));
        assert_eq!(t.file(three, reply(3, 1)), None);
        assert_eq!(t.expire(four, 3), None, "another call's");
        assert_eq!(t.expire(four, 4), Some(1));
        assert_eq!(t.expire(four, 4), None);
        assert_eq!(t.file(four, reply(4, 1)), None);
        assert!(matches!(
            t.poll(four, None, |_| {}),
            Poll::Ready(Settled::TimedOut)
        ));
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn slots_are_reused_and_a_freed_one_is_not_filed_for_its_old_call() {
        let mut t = Replies::default();
        let a = t.expect(2, 0u8).unwrap();
        assert!(t.forget(a));
        // The slot goes to the next call: the old call's late reply (if the connection
        // handed one out) is not this one's.
        let b = t.expect(4, 1u8).unwrap();
        assert_eq!(a, b);
        assert_eq!(t.file(b, reply(2, 0)), None);
        assert_eq!(t.file(b, reply(4, 5)), Some(1));
        let Poll::Ready(s) = t.poll(b, None, |_| {}) else {
            panic!("pending")
        };
        assert_eq!(octet(s), 5);
    }

    #[test]
    fn many_calls_in_flight_are_all_found() {
        let mut t = Replies::default();
        let n = (KEPT * 3) as u32;
        let tokens: Vec<u32> = (0..n).map(|id| t.expect(id, id as u8).unwrap()).collect();
        assert_eq!(t.len(), n as usize);
        // Every waiter is reachable.
        let mut woken: Vec<u8> = t.waiters().map(|w| *w).collect();
        woken.sort_unstable();
        let mut all: Vec<u8> = (0..n).map(|id| id as u8).collect();
        all.sort_unstable();
        assert_eq!(woken, all);
        // Replies in reverse order, one given up, one timed out.
        assert!(t.forget(tokens[3]));
        assert_eq!(t.expire(tokens[5], 5), Some(5));
        for id in (0..n).rev() {
            let filed = t.file(tokens[id as usize], reply(id, id as u8 ^ 0x55));
            assert_eq!(filed, (id != 3 && id != 5).then_some(id as u8));
        }
        // A new call takes a freed slot while the others still hold theirs.
        let late = t.expect(n, 0).unwrap();
        assert_eq!(late, tokens[3]);
        assert_eq!(t.file(late, reply(n, 1)), Some(0));
        for id in 0..n {
            match (
                id,
                t.poll(tokens[id as usize], None, |_| panic!("still waiting")),
            ) {
                (3, Poll::Ready(s)) => assert_eq!(octet(s), 1),
                (5, Poll::Ready(Settled::TimedOut)) => {}
                (i, Poll::Ready(s)) => assert_eq!(octet(s), i as u8 ^ 0x55),
                (_, Poll::Pending) => panic!("pending"),
            }
        }
        assert_eq!(t.len(), 0);
        // The burst's memory is given back once no call is in flight.
        assert_eq!(t.slots.capacity(), 0);
        assert_eq!(t.expect(1, 0), Some(0));
    }

    #[test]
    fn the_end_of_the_connection_settles_every_waiting_call() {
        let mut t = Replies::default();
        let five = t.expect(5, 50u8).unwrap();
        let six = t.expect(6, 60u8).unwrap();
        let mut woken: Vec<u8> = t.waiters().map(|w| *w).collect();
        woken.sort_unstable();
        assert_eq!(woken, [50, 60]);
        let mut seen = None;
        assert!(t.poll(five, None, |w| seen = Some(*w)).is_pending());
        assert_eq!(seen, Some(50));
        assert!(matches!(
            t.poll(five, Some(Ended::Orderly), |_| {}),
            Poll::Ready(Settled::Ended(Ended::Orderly))
        ));
        assert!(matches!(
            t.poll(six, Some(Ended::Failed), |_| {}),
            Poll::Ready(Settled::Ended(Ended::Failed))
        ));
    }
}
