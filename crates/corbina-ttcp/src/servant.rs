//! The Bench servant with the semantics every bench.idl server shares (the peers' README):
//! `echo` returns its argument, `fail(c)` raises `BenchError{c, "requested"}` for c ≠ 0, and
//! a byte counter shared by all objects counts `send_*` payload (element count × in-memory
//! element size: octet 1, short 2, long 4, double 8, char 1, BinStruct 24), oneways included.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use corbina::SystemException;

use crate::bench::{bench::FailError, BenchError, BenchServant, BinStruct};

/// The counter shared by every object of one server.
#[derive(Debug, Default)]
pub struct ByteCounter(AtomicU64);

impl ByteCounter {
    /// Counts `n` more payload bytes.
    pub fn add(&self, n: usize) {
        self.0.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// `start_timer`: back to zero.
    pub fn reset(&self) {
        self.0.store(0, Ordering::Relaxed);
    }

    /// `stop_timer`: the bytes counted since the last reset.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// One Bench object.
#[derive(Debug, Clone, Default)]
pub struct BenchImpl {
    counter: Arc<ByteCounter>,
}

impl BenchImpl {
    /// An object counting into `counter`.
    pub fn new(counter: Arc<ByteCounter>) -> Self {
        BenchImpl { counter }
    }
}

type R<T = ()> = Result<T, SystemException>;

impl BenchServant for BenchImpl {
    fn ping(&self) -> R {
        Ok(())
    }
    fn ping_oneway(&self) -> R {
        Ok(())
    }
    fn echo(&self, s: &str) -> R<String> {
        Ok(s.to_owned())
    }
    fn fail(&self, code: i32) -> Result<(), FailError> {
        if code == 0 {
            return Ok(());
        }
        Err(FailError::BenchError(BenchError {
            code,
            reason: "requested".into(),
        }))
    }
    fn send_octets(&self, s: &[u8]) -> R {
        self.counter.add(s.len());
        Ok(())
    }
    fn send_octets_oneway(&self, s: &[u8]) -> R {
        self.send_octets(s)
    }
    fn send_shorts(&self, s: &[i16]) -> R {
        self.counter.add(s.len() * 2);
        Ok(())
    }
    fn send_shorts_oneway(&self, s: &[i16]) -> R {
        self.send_shorts(s)
    }
    fn send_longs(&self, s: &[i32]) -> R {
        self.counter.add(s.len() * 4);
        Ok(())
    }
    fn send_longs_oneway(&self, s: &[i32]) -> R {
        self.send_longs(s)
    }
    fn send_doubles(&self, s: &[f64]) -> R {
        self.counter.add(s.len() * 8);
        Ok(())
    }
    fn send_doubles_oneway(&self, s: &[f64]) -> R {
        self.send_doubles(s)
    }
    fn send_chars(&self, s: &[u8]) -> R {
        self.counter.add(s.len());
        Ok(())
    }
    fn send_chars_oneway(&self, s: &[u8]) -> R {
        self.send_chars(s)
    }
    fn send_structs(&self, s: &[BinStruct]) -> R {
        self.counter.add(s.len() * 24);
        Ok(())
    }
    fn send_structs_oneway(&self, s: &[BinStruct]) -> R {
        self.send_structs(s)
    }
    fn start_timer(&self) -> R {
        self.counter.reset();
        Ok(())
    }
    fn stop_timer(&self) -> R<u64> {
        Ok(self.counter.get())
    }
}
