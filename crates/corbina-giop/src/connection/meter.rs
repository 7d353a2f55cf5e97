//! Accounting of the memory a connection holds for receiving, against a budget its owner
//! keeps (a server's, shared by all its connections).
//!
//! What is charged: the receive buffer beyond [`FREE_BYTES`] (what small messages need,
//! uncharged so that the call path never reaches the meter) and the fragments held for
//! reassembly. The receive buffer charges when it grows (out of line) and refunds when it
//! shrinks; reassembly charges as fragments arrive and refunds when the message is released.

use std::fmt;

use super::recv::READ_CHUNK;

/// Receive-buffer bytes a connection holds without charge: one read's worth of small
/// messages.
pub const FREE_BYTES: usize = READ_CHUNK;

/// A connection's account with a memory budget.
pub trait ReceiveMeter: Send + fmt::Debug {
    /// The connection now holds `bytes` more. `false`: refused (the budget is spent and
    /// this connection holds the most of it): the owner has answered it with
    /// MessageError and is closing it; the bytes are not held.
    fn charge(&mut self, bytes: usize) -> bool;
    /// The connection holds `bytes` fewer.
    fn refund(&mut self, bytes: usize);
    /// Whether memory is short: a large receive buffer is given back after its message
    /// instead of being kept for the next one.
    fn pressed(&self) -> bool;
}

/// A meter and what has been charged to it, refunded in full when dropped.
#[derive(Debug)]
pub(crate) struct Account {
    meter: Box<dyn ReceiveMeter>,
    /// Receive-buffer bytes charged (its length beyond [`FREE_BYTES`]).
    buffer: usize,
    /// Reassembly bytes charged.
    reassembly: usize,
}

impl Account {
    pub(crate) fn new(meter: Box<dyn ReceiveMeter>) -> Account {
        Account {
            meter,
            buffer: 0,
            reassembly: 0,
        }
    }

    fn settle(meter: &mut dyn ReceiveMeter, charged: &mut usize, now: usize) -> bool {
        if now > *charged {
            if !meter.charge(now - *charged) {
                return false;
            }
        } else if now < *charged {
            meter.refund(*charged - now);
        }
        *charged = now;
        true
    }

    /// The receive buffer is to be `len` bytes long; `false`: refused, it must not grow.
    pub(crate) fn buffer_len(&mut self, len: usize) -> bool {
        Self::settle(
            &mut *self.meter,
            &mut self.buffer,
            len.saturating_sub(FREE_BYTES),
        )
    }

    /// Reassembly holds `bytes` in all; `false`: refused.
    pub(crate) fn reassembly(&mut self, bytes: usize) -> bool {
        Self::settle(&mut *self.meter, &mut self.reassembly, bytes)
    }

    pub(crate) fn pressed(&self) -> bool {
        self.meter.pressed()
    }
}

impl Drop for Account {
    fn drop(&mut self) {
        let held = self.buffer + self.reassembly;
        if held > 0 {
            self.meter.refund(held);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;
    use crate::connection::{GiopConnection, Role, Settings};

    /// A budget of `limit` bytes for one connection.
    #[derive(Debug)]
    struct Budget {
        held: Arc<AtomicUsize>,
        limit: usize,
    }

    impl ReceiveMeter for Budget {
        fn charge(&mut self, bytes: usize) -> bool {
            let held = self.held.load(Ordering::Relaxed) + bytes;
            if held > self.limit {
                return false;
            }
            self.held.store(held, Ordering::Relaxed);
            true
        }
        fn refund(&mut self, bytes: usize) {
            self.held.fetch_sub(bytes, Ordering::Relaxed);
        }
        fn pressed(&self) -> bool {
            false
        }
    }

    fn metered(limit: usize) -> (GiopConnection, Arc<AtomicUsize>) {
        let held = Arc::new(AtomicUsize::new(0));
        let mut c = GiopConnection::new(Settings::new(Role::Server));
        c.set_receive_meter(Box::new(Budget {
            held: held.clone(),
            limit,
        }));
        (c, held)
    }

    /// The start of a 1 MiB GIOP 1.2 request, `body` bytes of it.
    fn partial(body: usize) -> Vec<u8> {
        let mut m = b"GIOP\x01\x02\x01\x00".to_vec();
        m.extend_from_slice(&(1u32 << 20).to_le_bytes());
        m.resize(12 + body, 0);
        m
    }

    #[test]
    fn small_messages_are_free_and_a_large_one_is_charged_until_dropped() {
        let (mut c, held) = metered(usize::MAX);
        c.push(&partial(1000));
        assert_eq!(held.load(Ordering::Relaxed), 0);
        c.push(&[0; 300 << 10]);
        let charged = held.load(Ordering::Relaxed);
        assert!(charged > 0 && charged <= c.held_bytes() - FREE_BYTES);
        drop(c);
        assert_eq!(held.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_refused_charge_stops_the_buffer_growing() {
        let (mut c, held) = metered(100 << 10);
        c.push(&partial(1 << 20));
        assert!(held.load(Ordering::Relaxed) <= 100 << 10);
        assert!(c.held_bytes() <= FREE_BYTES + (100 << 10));
        // The rest is not read: no room is offered.
        assert!(c.read_buf().is_empty());
    }
}
