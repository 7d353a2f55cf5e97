//! The server-wide budget for memory held in incomplete messages (`-ORBmaxIncompleteBytes`).
//!
//! Each connection's GIOP state charges what it holds for receiving beyond one read chunk
//! (a large message's receive buffer, fragments held for reassembly) through a
//! [`BudgetShare`]; small messages never reach it. When a charge would take the total past
//! the limit, the connections holding the most are answered with MessageError and closed,
//! until the charge fits; their share is taken off the total at once, and their memory goes
//! back to the allocator as their threads drop it. If the charging connection is among
//! them, its charge is refused and its receive buffer does not grow.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use super::connection::ConnectionShared;
use crate::giop::connection::ReceiveMeter;

/// The budget of one server, shared by its connections.
#[derive(Debug)]
pub(crate) struct ReceiveBudget {
    limit: usize,
    holders: Mutex<Holders>,
}

#[derive(Debug, Default)]
struct Holders {
    /// Bytes charged by all connections.
    used: usize,
    next_id: u64,
    /// Connections that have charged something, by id.
    by_id: HashMap<u64, Holder>,
}

#[derive(Debug)]
struct Holder {
    bytes: usize,
    conn: Weak<ConnectionShared>,
}

/// A connection closed to bring the total under the limit.
struct Victim {
    bytes: usize,
    conn: Weak<ConnectionShared>,
}

impl ReceiveBudget {
    /// A budget of `limit` bytes.
    pub(crate) fn new(limit: usize) -> Arc<ReceiveBudget> {
        Arc::new(ReceiveBudget {
            limit,
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

    /// Charges `bytes` to holder `id` (registering it if `None`), closing the largest
    /// holders first when that would pass the limit; whether the charge was taken.
    fn charge(&self, id: &mut Option<u64>, conn: &Weak<ConnectionShared>, bytes: usize) -> bool {
        let mut victims = Vec::new();
        let taken = {
            let mut h = self.lock();
            let me = match *id {
                // Closed for the budget already: nothing more is taken.
                Some(me) if !h.by_id.contains_key(&me) => return false,
                Some(me) => me,
                None => {
                    let me = h.next_id;
                    h.next_id += 1;
                    h.by_id.insert(
                        me,
                        Holder {
                            bytes: 0,
                            conn: conn.clone(),
                        },
                    );
                    *id = Some(me);
                    me
                }
            };
            let mut over = (h.used + bytes).saturating_sub(self.limit);
            let mut me_out = false;
            if over > 0 {
                // Largest first, this connection counted with what it asks for.
                let mut order: Vec<(usize, u64)> = h
                    .by_id
                    .iter()
                    .map(|(&k, x)| (x.bytes + if k == me { bytes } else { 0 }, k))
                    .collect();
                order.sort_unstable_by(|a, b| b.cmp(a));
                for (held, k) in order {
                    if over == 0 {
                        break;
                    }
                    if let Some(x) = h.by_id.remove(&k) {
                        h.used -= x.bytes;
                        over = over.saturating_sub(held);
                        me_out |= k == me;
                        victims.push(Victim {
                            bytes: held,
                            conn: x.conn,
                        });
                    }
                }
            }
            if !me_out {
                h.used += bytes;
                if let Some(x) = h.by_id.get_mut(&me) {
                    x.bytes += bytes;
                }
            }
            !me_out
        };
        // Outside the budget's lock: each victim's own lock is taken to write MessageError.
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
        taken
    }

    fn refund(&self, id: Option<u64>, bytes: usize) {
        let Some(id) = id else { return };
        let mut h = self.lock();
        if let Some(x) = h.by_id.get_mut(&id) {
            let bytes = bytes.min(x.bytes);
            x.bytes -= bytes;
            h.used -= bytes;
        }
    }

    /// A connection's receive memory is freed: its share leaves, and the allocator gives
    /// what the connection held back to the system.
    fn leave(&self, id: u64) {
        {
            let mut h = self.lock();
            if let Some(x) = h.by_id.remove(&id) {
                h.used -= x.bytes;
            }
        }
        give_back_memory();
    }

    /// Half the budget is in use: large receive buffers are not kept between messages.
    fn pressed(&self) -> bool {
        self.lock().used > self.limit / 2
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
    use super::*;

    fn shares(budget: &Arc<ReceiveBudget>, n: usize) -> Vec<BudgetShare> {
        (0..n)
            .map(|_| BudgetShare {
                budget: budget.clone(),
                conn: Weak::new(),
                id: None,
            })
            .collect()
    }

    #[test]
    fn the_largest_holders_go_first_and_their_share_is_taken_off() {
        let b = ReceiveBudget::new(1000);
        let mut s = shares(&b, 3);
        assert!(s[0].charge(500));
        assert!(s[1].charge(300));
        assert!(s[2].charge(100));
        assert_eq!(b.used(), 900);
        assert!(s[0].pressed());
        // Over by 150: the largest (500) goes, the charge is taken.
        assert!(s[2].charge(250));
        assert_eq!(b.used(), 650);
        // Closed: nothing more is taken, its refunds change nothing.
        assert!(!s[0].charge(1));
        s[0].refund(500);
        assert_eq!(b.used(), 650);
        // The charging connection would hold the most: refused, and its share taken off.
        assert!(!s[1].charge(700));
        assert_eq!(b.used(), 350);
        s[2].refund(100);
        assert_eq!(b.used(), 250);
        drop(s);
        assert_eq!(b.used(), 0);
    }
}
