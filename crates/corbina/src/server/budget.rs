//! The server-wide budget for memory held in incomplete messages (`-ORBmaxIncompleteBytes`).
//!
//! Each connection's GIOP state charges what it holds for receiving beyond one read chunk
//! (a large message's receive buffer, fragments held for reassembly) through a
//! [`BudgetShare`]; small messages never reach it. The share is the connection's RAII
//! account: what it charged leaves the total only when the memory is dropped (the receive
//! buffer shrinks, a reassembled message is released, the connection's state is dropped),
//! so the total is what the connections really hold, never less, and never more than the
//! limit.
//!
//! When a charge does not fit, the open connections holding the most are answered with
//! MessageError and closed until what they hold covers the shortfall (a connection already
//! closing is never picked again: its memory is on its way back), and the charge waits, in
//! turn, until their threads have dropped it. If the charging connection is among them, or
//! the memory is not back within the wait (their threads busy in an upcall, or a pool with
//! no thread free to run them), its charge is refused and it is closed too.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use super::connection::ConnectionShared;
use crate::giop::connection::ReceiveMeter;

/// The budget of one server, shared by its connections.
#[derive(Debug)]
pub(crate) struct ReceiveBudget {
    limit: usize,
    /// How long a charge waits for the memory of the connections closed for it.
    wait: Duration,
    holders: Mutex<Holders>,
}

#[derive(Debug, Default)]
struct Holders {
    /// Bytes charged by all connections and not dropped yet (closing ones' included).
    used: usize,
    /// Of `used`, what closing connections hold: on its way back.
    coming: usize,
    /// What the waiting charges ask for.
    wanted: usize,
    next_id: u64,
    /// Connections that have charged something, by id, until their share is dropped.
    by_id: HashMap<u64, Holder>,
    /// Charges waiting for memory, served in turn. Each has its own wake-up, so that
    /// memory coming back wakes the first alone, not every waiting thread.
    queue: VecDeque<Waiter>,
}

#[derive(Debug)]
struct Holder {
    bytes: usize,
    /// Closed for the budget: charges nothing more; its bytes leave as it drops them.
    closing: bool,
    /// What its charge waiting in the queue asks for (0: none waits).
    waiting: usize,
    conn: Weak<ConnectionShared>,
}

#[derive(Debug)]
struct Waiter {
    id: u64,
    wake: Arc<Condvar>,
}

/// A connection closed to bring the total under the limit.
struct Victim {
    bytes: usize,
    conn: Weak<ConnectionShared>,
}

impl Holders {
    /// Closes holder `k` for the budget: nothing more is taken from it and its bytes are
    /// on their way back; a charge of its waiting leaves the queue (and is woken, refused).
    fn close(&mut self, k: u64) -> Option<Victim> {
        let x = self.by_id.get_mut(&k)?;
        if x.closing {
            return None;
        }
        x.closing = true;
        self.coming += x.bytes;
        let victim = Victim {
            bytes: x.bytes + x.waiting,
            conn: x.conn.clone(),
        };
        if x.waiting > 0 {
            self.wanted -= std::mem::take(&mut x.waiting);
            if let Some(i) = self.queue.iter().position(|w| w.id == k) {
                if let Some(w) = self.queue.remove(i) {
                    w.wake.notify_one();
                }
                if i == 0 {
                    self.wake_first();
                }
            }
        }
        Some(victim)
    }

    /// Memory came back, or the first waiting charge left: the (new) first may fit now.
    fn wake_first(&self) {
        if let Some(w) = self.queue.front() {
            w.wake.notify_one();
        }
    }

    /// Holder `id` dropped `bytes` of what it held.
    fn dropped(&mut self, id: u64, bytes: usize) {
        if let Some(x) = self.by_id.get_mut(&id) {
            let bytes = bytes.min(x.bytes);
            x.bytes -= bytes;
            self.used -= bytes;
            if x.closing {
                self.coming -= bytes;
            }
            if bytes > 0 {
                self.wake_first();
            }
        }
    }
}

impl ReceiveBudget {
    /// A budget of `limit` bytes, whose charges wait up to `wait` for the memory of the
    /// connections closed for them.
    pub(crate) fn new(limit: usize, wait: Duration) -> Arc<ReceiveBudget> {
        Arc::new(ReceiveBudget {
            limit,
            wait,
            holders: Mutex::new(Holders::default()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Holders> {
        self.holders.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Bytes charged now, by all connections.
    #[cfg(test)]
    pub(crate) fn used(&self) -> usize {
        self.lock().used
    }

    /// The account of connection `conn` (registered at its first charge).
    pub(crate) fn share(self: &Arc<Self>, conn: &Arc<ConnectionShared>) -> BudgetShare {
        BudgetShare {
            budget: self.clone(),
            conn: Arc::downgrade(conn),
            id: None,
        }
    }

    /// Charges `bytes` to holder `id` (registering it if `None`): at once if they fit
    /// beside what waiting charges ask for, else after closing the largest open holders
    /// for the shortfall and waiting in turn for their memory; whether it was taken.
    fn charge(&self, id: &mut Option<u64>, conn: &Weak<ConnectionShared>, bytes: usize) -> bool {
        if bytes == 0 {
            // Nothing to hold (and a queued charge of nothing could never be told apart
            // from one that left the queue).
            return true;
        }
        let mut h = self.lock();
        let me = *id.get_or_insert_with(|| {
            let me = h.next_id;
            h.next_id += 1;
            h.by_id.insert(
                me,
                Holder {
                    bytes: 0,
                    closing: false,
                    waiting: 0,
                    conn: conn.clone(),
                },
            );
            me
        });
        match h.by_id.get(&me) {
            // Closed for the budget: nothing more is taken.
            Some(x) if !x.closing => {}
            _ => return false,
        }
        if h.used + h.wanted + bytes <= self.limit {
            take(&mut h, me, bytes);
            debug_assert!(h.used <= self.limit);
            return true;
        }
        // Short: close more only for what is not on its way back already, the largest
        // open holders first (each counted with what it waits for, this one with what it
        // asks).
        let mut short = (h.used + h.wanted + bytes).saturating_sub(self.limit + h.coming);
        let mut victims = Vec::new();
        let mut me_out = false;
        if short > 0 {
            let mut order: Vec<(usize, u64)> = h
                .by_id
                .iter()
                .filter(|(_, x)| !x.closing)
                .map(|(&k, x)| (x.bytes + x.waiting + if k == me { bytes } else { 0 }, k))
                .filter(|&(size, _)| size > 0)
                .collect();
            order.sort_unstable_by(|a, b| b.cmp(a));
            for (size, k) in order {
                if short == 0 {
                    break;
                }
                short = short.saturating_sub(size);
                me_out |= k == me;
                victims.extend(h.close(k));
            }
        }
        let wake = Arc::new(Condvar::new());
        if !me_out {
            h.wanted += bytes;
            if let Some(x) = h.by_id.get_mut(&me) {
                x.waiting = bytes;
            }
            h.queue.push_back(Waiter {
                id: me,
                wake: wake.clone(),
            });
        }
        drop(h);
        // Outside the budget's lock: each victim's own lock is taken to write MessageError.
        self.refuse(victims);
        if me_out {
            return false;
        }
        self.wait_turn(me, bytes, &wake)
    }

    /// Waits until charge `bytes` of holder `me`, queued, is first and fits; whether it
    /// was taken (refused: closed meanwhile, or the wait is over).
    fn wait_turn(&self, me: u64, bytes: usize, wake: &Condvar) -> bool {
        let deadline = Instant::now() + self.wait;
        let mut h = self.lock();
        loop {
            match h.by_id.get(&me) {
                // Closed by another charge, which took this one out of the queue.
                Some(x) if x.waiting > 0 => {}
                _ => return false,
            }
            let first = h.queue.front().is_some_and(|w| w.id == me);
            if first && h.used + bytes <= self.limit {
                h.queue.pop_front();
                h.wanted -= bytes;
                if let Some(x) = h.by_id.get_mut(&me) {
                    x.waiting = 0;
                }
                take(&mut h, me, bytes);
                debug_assert!(h.used <= self.limit);
                h.wake_first();
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                // The memory did not come back in time: this charge cannot be held within
                // the limit, so this connection goes too.
                let mine = h.close(me);
                drop(h);
                self.refuse(mine.into_iter().collect());
                return false;
            }
            h = wake
                .wait_timeout(h, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Answers `victims` with MessageError and closes them; their threads see the end of
    /// their input and drop what they hold.
    fn refuse(&self, victims: Vec<Victim>) {
        for v in victims {
            tracing::warn!(
                target: "corbina::server",
                held = v.bytes,
                limit = self.limit,
                "receive memory budget (-ORBmaxIncompleteBytes {}) spent: closing the \
                 connection holding the most ({} bytes of incomplete messages) with MessageError",
                self.limit,
                v.bytes
            );
            if let Some(c) = v.conn.upgrade() {
                c.refuse_input();
            }
        }
    }

    /// Holder `id` dropped `bytes` of what it held.
    fn refund(&self, id: Option<u64>, bytes: usize) {
        if let Some(id) = id {
            self.lock().dropped(id, bytes);
        }
    }

    /// A connection's receive memory is dropped: its share leaves, and the allocator gives
    /// what the connection held back to the system.
    fn leave(&self, id: u64) {
        {
            let mut h = self.lock();
            h.dropped(id, usize::MAX);
            h.by_id.remove(&id);
        }
        give_back_memory();
    }

    /// Half the budget is in use: large receive buffers are not kept between messages.
    fn pressed(&self) -> bool {
        self.lock().used > self.limit / 2
    }
}

/// Adds `bytes` to holder `me`'s share.
fn take(h: &mut Holders, me: u64, bytes: usize) {
    h.used += bytes;
    if let Some(x) = h.by_id.get_mut(&me) {
        x.bytes += bytes;
    }
}

/// Returns free memory to the system. glibc keeps what is freed in its arenas (one per
/// thread that allocated, the large receive buffers among it) and gives back only the top of
/// each heap, so without this the process's RSS stays at its peak after the connections
/// holding it are gone (measured: +54 MiB over a 4 MiB budget in tests/receive_budget.rs).
/// Called when a connection that charged the budget ends, never on the call path.
fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: glibc's malloc_trim takes no pointers, only releases memory the
        // allocator holds free, and takes the arenas' locks itself (thread-safe). Tested by
        // tests/receive_budget.rs (RSS after the connections end).
        unsafe {
            malloc_trim(0);
        }
    }
}

/// One connection's account with its server's [`ReceiveBudget`].
#[derive(Debug)]
pub(crate) struct BudgetShare {
    budget: Arc<ReceiveBudget>,
    conn: Weak<ConnectionShared>,
    /// Set at the first charge.
    id: Option<u64>,
}

impl ReceiveMeter for BudgetShare {
    fn charge(&mut self, bytes: usize) -> bool {
        self.budget.charge(&mut self.id, &self.conn, bytes)
    }

    fn refund(&mut self, bytes: usize) {
        self.budget.refund(self.id, bytes);
    }

    fn pressed(&self) -> bool {
        self.budget.pressed()
    }
}

impl Drop for BudgetShare {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.budget.leave(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::thread;

    use super::*;

    fn share(budget: &Arc<ReceiveBudget>) -> BudgetShare {
        BudgetShare {
            budget: budget.clone(),
            conn: Weak::new(),
            id: None,
        }
    }

    fn shares(budget: &Arc<ReceiveBudget>, n: usize) -> Vec<BudgetShare> {
        (0..n).map(|_| share(budget)).collect()
    }

    impl BudgetShare {
        /// Whether the budget closed this connection (its memory not dropped yet).
        fn closing(&self) -> bool {
            let h = self.budget.lock();
            self.id
                .and_then(|id| h.by_id.get(&id))
                .is_some_and(|x| x.closing)
        }
    }

    /// Waits (up to 10 s) until `cond` holds.
    fn until(mut cond: impl FnMut() -> bool) {
        let start = Instant::now();
        while !cond() {
            assert!(start.elapsed() < Duration::from_secs(10), "timed out");
            thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn the_largest_holder_goes_and_its_memory_counts_until_dropped() {
        let b = ReceiveBudget::new(1000, Duration::from_secs(10));
        let mut s = shares(&b, 3);
        assert!(s[0].charge(500));
        assert!(s[1].charge(300));
        assert!(s[2].charge(100));
        assert_eq!(b.used(), 900);
        assert!(s[0].pressed());
        // Over by 150: the largest (500) is closed; the charge waits for its memory.
        let mut s2 = s.pop().unwrap();
        let waiter = thread::spawn(move || (s2.charge(250), s2));
        until(|| s[0].closing());
        assert!(!s[1].closing());
        assert_eq!(b.used(), 900, "still held: still counted");
        assert!(!waiter.is_finished());
        // Closed: nothing more is taken.
        assert!(!s[0].charge(1));
        // Its memory dropped: the charge is taken.
        drop(s.remove(0));
        let (taken, mut s2) = waiter.join().unwrap();
        assert!(taken);
        assert_eq!(b.used(), 650);
        // The charging connection would hold the most: refused and closed, its share
        // counted until dropped.
        assert!(!s2.charge(700));
        assert!(s2.closing());
        assert_eq!(b.used(), 650);
        s2.refund(100);
        assert_eq!(b.used(), 550, "a closing connection's freed bytes leave");
        drop(s2);
        assert_eq!(b.used(), 300);
        drop(s);
        assert_eq!(b.used(), 0);
    }

    #[test]
    fn a_closing_connection_is_never_picked_again_and_a_waiting_charge_may_be() {
        let b = ReceiveBudget::new(1000, Duration::from_secs(10));
        let mut s = shares(&b, 2);
        assert!(s[0].charge(500));
        assert!(s[1].charge(300));
        // Short by 250: the largest (500) is closed; the charge waits in turn.
        let mut x = share(&b);
        let first = thread::spawn(move || (x.charge(450), x));
        until(|| s[0].closing());
        // Short by 10 beyond what is coming back: the largest open holder goes, which is
        // the waiting charge (450 asked), not the closing one again (500 held).
        let mut y = share(&b);
        let second = thread::spawn(move || (y.charge(260), y));
        let (taken, x) = first.join().unwrap();
        assert!(!taken, "closed while waiting: refused at once");
        assert!(x.closing() && s[0].closing() && !s[1].closing());
        assert_eq!(b.used(), 800);
        drop(x);
        drop(s.remove(0));
        let (taken, y) = second.join().unwrap();
        assert!(taken);
        assert_eq!(b.used(), 560);
        drop((s, y));
        assert_eq!(b.used(), 0);
    }

    #[test]
    fn a_charge_of_nothing_is_taken_even_when_the_budget_is_spent() {
        let b = ReceiveBudget::new(1000, Duration::from_secs(10));
        let mut big = share(&b);
        assert!(big.charge(900));
        // A charge waits for `big`'s memory: the total is past the limit until it is back.
        let mut x = share(&b);
        let waiter = thread::spawn(move || (x.charge(200), x));
        until(|| big.closing());
        let mut y = share(&b);
        assert!(y.charge(0), "nothing to wait for");
        assert!(!y.closing());
        drop(big);
        let (taken, x) = waiter.join().unwrap();
        assert!(taken);
        assert_eq!(b.used(), 200);
        drop((x, y));
    }

    #[test]
    fn memory_not_dropped_in_time_refuses_the_charge_within_the_limit() {
        let b = ReceiveBudget::new(1000, Duration::from_millis(50));
        let mut s = shares(&b, 2);
        assert!(s[0].charge(800));
        // The holder closed never drops its memory (its thread stuck in an upcall, say):
        // the charge is refused rather than passing the limit, and its connection closed.
        assert!(!s[1].charge(300));
        assert!(s[0].closing() && s[1].closing());
        assert_eq!(b.used(), 800);
        drop(s);
        assert_eq!(b.used(), 0);
    }

    /// Threads charging and refunding at random, dropping their share when closed (as a
    /// connection's thread does): the total never passes the limit, and is zero at the end.
    #[test]
    fn concurrent_charges_never_pass_the_limit() {
        const LIMIT: usize = 10_000;
        let b = ReceiveBudget::new(LIMIT, Duration::from_secs(10));
        let peak = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let threads: Vec<_> = (0..8u64)
            .map(|t| {
                let b = b.clone();
                let peak = peak.clone();
                thread::spawn(move || {
                    let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ (t + 1);
                    let mut next = move || {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        rng
                    };
                    let mut s = share(&b);
                    let mut held = 0;
                    for _ in 0..2000 {
                        if s.closing() {
                            s = share(&b);
                            held = 0;
                        }
                        if next() % 3 == 0 && held > 0 {
                            let n = (next() as usize % held) + 1;
                            s.refund(n);
                            held -= n;
                        } else {
                            let n = (next() as usize % 3000) + 1;
                            if s.charge(n) {
                                held += n;
                            }
                        }
                        peak.fetch_max(b.used(), std::sync::atomic::Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(peak.load(std::sync::atomic::Ordering::Relaxed) <= LIMIT);
        assert_eq!(b.used(), 0);
    }
}
