//! The client side of IIOP: ropes of strands per server address, and the invoker that
//! carries a call over them.
//!
//! # Failure semantics
//!
//! | What happened | The caller gets |
//! |---|---|
//! | connect refused / unreachable / connect timeout | `TRANSIENT`, completed NO |
//! | orderly `CloseConnection` (idle close racing the call, server shutting down) | the call is resent on a new strand, transparently: the server did not process it |
//! | the connection died after the request was sent | `COMM_FAILURE`, completed MAYBE (never resent) |
//! | the call's timeout expired waiting for the reply | `TIMEOUT`, completed MAYBE; the strand is closed, so no late reply can reach a later call |
//! | LOCATION_FORWARD(_PERM) | followed, up to `forward_limit` hops per call; more is `TRANSIENT` NO |
//! | NEEDS_ADDRESSING_MODE | resent with the addressing disposition the server asked for |
//!
//! The call timeout is, most specific first: the reference's
//! ([`crate::Orb::object_with_timeout`]), the calling thread's ([`set_thread_call_timeout`]),
//! the ORB's ([`crate::OrbConfig::call_timeout`]). It bounds the whole call: waiting for a
//! strand, connecting, sending, forwards and resends, and the reply.
//!
//! Idle strands are closed by a background scavenger (one thread per ORB, started with its
//! first rope) when found idle on two consecutive scans of `idle_timeout`.

mod invoker;
mod rope;

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

pub use invoker::{IiopInvoker, MINOR_FORWARD_LIMIT, MINOR_RETRIES_EXHAUSTED};
pub use rope::{Rope, Strand, StrandSettings};

use crate::config::OrbConfig;
use crate::transport::Address;

thread_local! {
    static THREAD_CALL_TIMEOUT: Cell<Option<Duration>> = const { Cell::new(None) };
}

/// Sets the call timeout for twoway calls made by this thread (`None`: no thread override,
/// the ORB's applies). A reference's own timeout ([`crate::Orb::object_with_timeout`]) still
/// wins. Expiry raises `TIMEOUT` (completed MAYBE once the request was sent).
pub fn set_thread_call_timeout(timeout: Option<Duration>) {
    THREAD_CALL_TIMEOUT.with(|t| t.set(timeout));
}

/// This thread's call timeout override, as set by [`set_thread_call_timeout`].
pub fn thread_call_timeout() -> Option<Duration> {
    THREAD_CALL_TIMEOUT.with(Cell::get)
}

type RopeMap = Mutex<HashMap<Address, Arc<Rope>>>;

/// Stops the client scavenger when the context goes away.
struct ScavengerStop {
    stopped: Mutex<bool>,
    wake: Condvar,
}

/// What every client call of an ORB shares: its configuration and its ropes, one per
/// server address, so that all references to one server share its connections.
pub struct ClientContext {
    pub(crate) config: OrbConfig,
    ropes: Arc<RopeMap>,
    scavenger: Mutex<Option<Arc<ScavengerStop>>>,
}

impl ClientContext {
    /// A context with no connections yet.
    pub fn new(config: OrbConfig) -> ClientContext {
        ClientContext {
            config,
            ropes: Arc::new(Mutex::new(HashMap::new())),
            scavenger: Mutex::new(None),
        }
    }

    /// The rope to `host:port` over TCP, created on first use (no connection is opened
    /// here).
    pub fn rope(&self, host: &str, port: u16) -> Arc<Rope> {
        self.rope_to(Address::Tcp {
            host: host.to_owned(),
            port,
        })
    }

    /// The rope to `address` (any transport), created on first use.
    pub fn rope_to(&self, address: Address) -> Arc<Rope> {
        self.start_scavenger();
        let mut ropes = self.ropes.lock().unwrap_or_else(|p| p.into_inner());
        ropes
            .entry(address.clone())
            .or_insert_with(|| {
                Arc::new(Rope::new(
                    address,
                    StrandSettings {
                        connect_timeout: self.config.connect_timeout,
                        max_strands: self.config.max_strands_per_rope.max(1),
                        socket_buffer_size: self.config.socket_buffer_size,
                        max_message_size: self.config.max_message_size,
                    },
                ))
            })
            .clone()
    }

    /// Every rope, for the scavenger and for tests.
    pub fn ropes(&self) -> Vec<Arc<Rope>> {
        let ropes = self.ropes.lock().unwrap_or_else(|p| p.into_inner());
        ropes.values().cloned().collect()
    }

    /// Strands open to every address (idle or in use).
    pub fn open_strands(&self) -> usize {
        self.ropes().iter().map(|r| r.open_strands()).sum()
    }

    /// One scavenger scan now: closes the idle strands marked by the previous scan and marks
    /// the others. Returns how many were closed. (The background scavenger does this every
    /// `idle_timeout`; tests call it directly.)
    pub fn scavenge_now(&self) -> usize {
        scan(&self.ropes)
    }

    fn start_scavenger(&self) {
        let Some(period) = self.config.idle_timeout else {
            return;
        };
        let mut slot = self.scavenger.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_some() {
            return;
        }
        let stop = Arc::new(ScavengerStop {
            stopped: Mutex::new(false),
            wake: Condvar::new(),
        });
        let ropes = self.ropes.clone();
        let s = stop.clone();
        let spawned = std::thread::Builder::new()
            .name("corbina-client-scavenger".into())
            .spawn(move || client_scavenger(&ropes, &s, period));
        if spawned.is_ok() {
            *slot = Some(stop);
        }
    }
}

impl Drop for ClientContext {
    fn drop(&mut self) {
        let slot = self.scavenger.get_mut().unwrap_or_else(|p| p.into_inner());
        if let Some(stop) = slot.take() {
            *stop.stopped.lock().unwrap_or_else(|p| p.into_inner()) = true;
            stop.wake.notify_all();
        }
    }
}

fn scan(ropes: &RopeMap) -> usize {
    let all: Vec<Arc<Rope>> = {
        let ropes = ropes.lock().unwrap_or_else(|p| p.into_inner());
        ropes.values().cloned().collect()
    };
    all.iter().map(|r| r.scavenge()).sum()
}

fn client_scavenger(ropes: &RopeMap, stop: &ScavengerStop, period: Duration) {
    let mut stopped = stop.stopped.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let deadline = std::time::Instant::now() + period;
        // Sleep a whole period (spurious wake-ups do not shorten it).
        loop {
            if *stopped {
                return;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            stopped = stop
                .wake
                .wait_timeout(stopped, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        drop(stopped);
        scan(ropes);
        stopped = stop.stopped.lock().unwrap_or_else(|p| p.into_inner());
    }
}
