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
//!
//! # Buffered oneways
//!
//! By default a oneway is written to its connection before the call returns (CORBA
//! Messaging's SyncScope `SYNC_WITH_TRANSPORT`). With `-ORBOnewaySyncScope none`
//! ([`crate::config::SyncScope::None`]), or for one thread with
//! [`set_thread_oneway_buffering`], oneways to a server are appended to a batch on one of
//! its strands and written together, in one system call, when the first of these happens:
//!
//! - the batch reaches the byte or the count bound ([`crate::config::BufferingConstraint`]):
//!   the oneway that reaches it writes the batch;
//! - a twoway (or an unbuffered oneway) goes to the same server: it is sent on the batch's
//!   strand, batch and request in one vectored write, so the server reads the batch first;
//! - the time bound expires: a background flusher thread (one per ORB, started with the
//!   first batch, sleeping until the earliest batch deadline, stopped with the context)
//!   writes it;
//! - [`crate::Orb::flush_oneways`] is called (`Orb::shutdown` calls it), or the ORB is
//!   dropped.
//!
//! Request ids stay per strand, so a batch carries consecutive ids of one connection. If the
//! connection breaks, its buffered oneways are lost, just as unbuffered oneways that the
//! kernel had buffered would be. A failed write is reported to the call that made it (a
//! twoway carrying a batch gets the twoway's error); when it happens outside any call (the
//! flusher, the ORB's drop) the oneways are counted ([`ConnectionInfo::lost_oneways`])
//! and the next call through that rope fails with `COMM_FAILURE`, completed NO, minor
//! [`MINOR_ONEWAYS_LOST`], without being sent (an explicit flush reports them too).
//!
//! Ordering: a request never leaves on another connection while oneways buffered before it
//! are still unwritten (it waits for that write), and the connection holding a batch is the
//! next one handed out. So with one calling thread per server (or `-ORBMaxStrandsPerRope
//! 1`) all calls share one connection and run in the order they were made, and a twoway
//! returns only after every oneway sent before it has run. When several threads share the
//! connections to a server, a thread's calls may go out on different connections, which
//! the server serves concurrently: as without buffering, they are then not ordered.
//!
//! # Asynchronous calls
//!
//! [`crate::ObjectRef::invoke_async`] (and the generated asynchronous proxies) send over
//! connections of their own, apart from the strands, that all asynchronous calls to a server
//! address share: the calling task marshals and writes its request, then awaits the reply,
//! filed by request id, in any order, waking the task. Any number of calls may be in flight
//! on one connection (GIOP request ids); the futures are `Send` and need no particular
//! executor.
//!
//! - **Who reads a connection.** With the `tokio` feature (on by default), a connection first
//!   used from inside a tokio runtime with I/O enabled is registered with that runtime's I/O
//!   driver, which reads the replies on its worker and wakes their tasks: no thread hop, a
//!   reply costs what a synchronous call's does. TCP and Unix sockets only; TLS and shared
//!   memory connections, connections opened outside tokio, and connections whose runtime has
//!   shut down are read by a reader thread each (blocking reads).
//! - **The strand pool.** A call goes on the connection with the fewest calls in flight; when
//!   all carry `-ORBasyncCallsPerStrand` (64) calls, another is opened in the background, up
//!   to `-ORBMaxStrandsPerRope`, so that a server reading each connection with one thread
//!   serves several requests at once. `-ORBasyncCallsPerStrand 0` keeps one connection.
//! - **Connecting.** A helper thread connects, never the polling one (a blocking connect
//!   would stall its executor); the calls waiting for it are woken when it is done. The
//!   connect timeout and the call's deadline bound it. AMI's `sendc_` is the exception: it
//!   connects on its caller's thread, as a synchronous call does, so that its request is
//!   written, in order, before it returns.
//!
//! | What happened | The future resolves to |
//! |---|---|
//! | the reply | the result or exception, as for a synchronous call |
//! | the future was dropped first | nothing: `CancelRequest` is sent, the id freed, a late reply dropped |
//! | the call timeout expired | `TIMEOUT`, completed MAYBE (and `CancelRequest` is sent) |
//! | the connection failed, or the ORB shut down | `COMM_FAILURE`, completed MAYBE, for every call in flight |
//! | orderly `CloseConnection` | resent on a new connection, transparently |
//!
//! The timeout is the reference's, else the polling thread's, else the ORB's, counted from
//! the first poll. A collocated reference's asynchronous calls take its marshalled path, so
//! the servant never runs on the polling thread.
//!
//! # Local endpoints
//!
//! A reference whose profile publishes a Unix-domain or shared-memory endpoint on this host
//! is reached through it (with `-ORBPreferUnix 1`, the default). If connecting to it fails
//! (socket file left behind, nobody listening, a path shared with another host), the call
//! goes to the profile's TCP address instead, and every reference to that endpoint skips it
//! for [`STALE_LOCAL_RETRY`] before trying it again.

mod async_conn;
mod async_pool;
mod async_reactor;
mod async_timer;
pub(crate) mod invoker;
pub(crate) mod replies;
mod rope;

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

pub(crate) use async_pool::connecting_inline;
pub use async_pool::AsyncStrandInfo;
pub(crate) use invoker::IiopInvoker;
pub use invoker::{
    AsyncDecodeReply, AsyncEncodeArgs, MINOR_FORWARD_LIMIT, MINOR_ONEWAYS_LOST,
    MINOR_RETRIES_EXHAUSTED,
};
pub(crate) use rope::{Rope, StrandSettings};
pub use rope::{FAILOVER_RETRY, STALE_LOCAL_RETRY};

use crate::config::{BufferingConstraint, OrbConfig};
use crate::transport::Address;
use crate::SystemException;

thread_local! {
    static THREAD_CALL_TIMEOUT: Cell<Option<Duration>> = const { Cell::new(None) };
    static THREAD_ONEWAYS: Cell<OnewayBuffering> = const { Cell::new(OnewayBuffering::OrbDefault) };
}

/// A thread's choice for its oneways ([`set_thread_oneway_buffering`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnewayBuffering {
    /// As the ORB is configured (`-ORBOnewaySyncScope`).
    #[default]
    OrbDefault,
    /// Written before the call returns (SYNC_WITH_TRANSPORT).
    Off,
    /// Buffered within these bounds (SYNC_NONE).
    On(BufferingConstraint),
}

/// Sets how this thread's oneways are sent, overriding the ORB's `-ORBOnewaySyncScope`
/// (see the [module documentation](self) for when buffered ones are written).
///
/// # Panics
/// If a bound of `On` is 0.
pub fn set_thread_oneway_buffering(policy: OnewayBuffering) {
    if let OnewayBuffering::On(b) = policy {
        assert!(
            b.max_bytes >= 1 && b.max_count >= 1 && !b.max_delay.is_zero(),
            "oneway buffering bounds must be at least 1"
        );
    }
    THREAD_ONEWAYS.with(|t| t.set(policy));
}

/// This thread's oneway buffering override, as set by [`set_thread_oneway_buffering`].
pub fn thread_oneway_buffering() -> OnewayBuffering {
    THREAD_ONEWAYS.with(Cell::get)
}

/// Sets the call timeout for twoway calls made by this thread (`None`: no thread override,
/// the ORB's applies). A reference's own timeout ([`crate::Orb::object_with_timeout`]) still
/// wins. Expiry raises `TIMEOUT` (completed MAYBE once the request was sent).
pub fn set_thread_call_timeout(timeout: Option<Duration>) {
    THREAD_CALL_TIMEOUT.with(|t| t.set(timeout));
}

/// This thread's call timeout override, as set by [`set_thread_call_timeout`].
// Inlined, with a closure rather than `Cell::get`: every call reads it (measured: the
// function item's `FnOnce::call_once` could be left outlined, 5 instructions per call).
#[inline]
pub fn thread_call_timeout() -> Option<Duration> {
    THREAD_CALL_TIMEOUT.with(|t| t.get())
}

type RopeMap = Mutex<HashMap<Address, Arc<Rope>>>;

/// Stops the client scavenger when the context goes away.
struct ScavengerStop {
    stopped: Mutex<bool>,
    wake: Condvar,
}

/// The background writer of buffered oneways whose time bound expired: ropes to visit, by
/// deadline.
#[derive(Default)]
struct Flusher {
    state: Mutex<FlusherState>,
    wake: Condvar,
}

#[derive(Default)]
struct FlusherState {
    due: Vec<(Instant, Arc<Rope>)>,
    started: bool,
    stopped: bool,
}

/// One server address this ORB's client side has used, as it is now: a read-only snapshot
/// taken by [`crate::Orb::connections`], for monitoring and tests. Taking it locks each
/// address's state briefly; it does not open, close or wait for a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionInfo {
    /// Where the connections go (its [`Address::kind`] is the transport).
    pub address: Address,
    /// Connections for synchronous calls ("strands") open to it, idle or in use.
    pub open_strands: usize,
    /// Whether it is passed over after a failed connect: a local endpoint for
    /// [`STALE_LOCAL_RETRY`] (calls go to the profile's TCP address), one of several
    /// addresses of an object for [`FAILOVER_RETRY`].
    pub stale: bool,
    /// Whether calls to it go over a bidirectional GIOP connection (one a server opened to
    /// call back, or one this ORB offered callbacks on) rather than its strands.
    pub bidir: bool,
    /// Its connections for asynchronous calls, apart from the strands.
    pub async_strands: Vec<AsyncStrandInfo>,
    /// Asynchronous calls waiting for their reply, on all of `async_strands`.
    pub async_in_flight: usize,
    /// Buffered oneways (`-ORBOnewaySyncScope none`) not written yet.
    pub buffered_oneways: usize,
    /// Buffered oneways lost because their connection's write failed, since it was first
    /// used.
    pub lost_oneways: u64,
}

/// What every client call of an ORB shares: its configuration and its ropes, one per
/// server address, so that all references to one server share its connections.
pub(crate) struct ClientContext {
    pub(crate) config: OrbConfig,
    ropes: Arc<RopeMap>,
    /// Ropes of one reference each ([`ClientContext::private_rope`]), while they live.
    private: Mutex<Vec<std::sync::Weak<Rope>>>,
    scavenger: Mutex<Option<Arc<ScavengerStop>>>,
    flusher: Arc<Flusher>,
    /// With `-ORBofferBiDirectionalGIOP 1`: what connections offer, and where requests
    /// arriving on them go (set by the ORB).
    bidir: std::sync::OnceLock<BidirClient>,
    /// The TLS client configuration, made from `config.ssl` when the first TLS connection
    /// is opened; replaced by [`ClientContext::reload_tls`].
    tls_client: crate::transport::tls::ClientTls,
}

/// The client side of bidirectional GIOP: this ORB's offer and its POAs.
pub(crate) struct BidirClient {
    pub(crate) dispatcher: Arc<dyn crate::server::RequestDispatcher>,
    pub(crate) offer: crate::bidir::OfferSource,
}

impl ClientContext {
    /// A context with no connections yet.
    pub(crate) fn new(config: OrbConfig) -> ClientContext {
        ClientContext {
            ropes: Arc::new(Mutex::new(HashMap::new())),
            private: Mutex::new(Vec::new()),
            scavenger: Mutex::new(None),
            flusher: Arc::new(Flusher::default()),
            bidir: std::sync::OnceLock::new(),
            tls_client: crate::transport::tls::ClientTls::new(config.ssl.clone()),
            config,
        }
    }

    /// Reads the certificate and key files of `ssl` again and uses them for the TLS
    /// connections opened from now on; on error the current configuration stays.
    pub(crate) fn reload_tls(
        &self,
        ssl: crate::config::SslConfig,
    ) -> Result<(), crate::transport::tls::TlsError> {
        self.tls_client.reload(ssl)
    }

    /// Uses `ssl` for the TLS connections opened from now on, its files read then.
    pub(crate) fn replace_tls_lazily(&self, ssl: crate::config::SslConfig) {
        self.tls_client.replace_lazily(ssl);
    }

    /// Makes connections offer bidirectional GIOP (`-ORBofferBiDirectionalGIOP 1`):
    /// requests that come back on them go to `dispatcher`; `offer` gives the listen points
    /// (`None` while there is nothing to call back).
    pub(crate) fn set_bidir_client(&self, client: BidirClient) {
        let _ = self.bidir.set(client);
    }

    /// Closes the bidirectional connections this context opened (its ORB shuts down):
    /// servers can no longer call back over them.
    pub(crate) fn close_bidir(&self) {
        if self.bidir.get().is_none() {
            return;
        }
        for rope in self.ropes() {
            rope.close_bidir();
        }
    }

    /// Closes the connections asynchronous calls share (the ORB shuts down): calls still
    /// waiting fail with COMM_FAILURE rather than hang.
    pub(crate) fn close_async(&self) {
        for rope in self.ropes() {
            rope.close_async();
        }
    }

    /// The bidirectional offer, when connections make one.
    #[inline]
    pub(crate) fn bidir_client(&self) -> Option<&BidirClient> {
        if !self.config.offer_bidir {
            return None;
        }
        self.bidir.get()
    }

    /// The bounds a oneway made now by this thread is buffered within, if it is.
    pub(crate) fn oneway_bounds(&self) -> Option<BufferingConstraint> {
        match thread_oneway_buffering() {
            OnewayBuffering::OrbDefault => self.config.oneway_buffering_bounds(),
            OnewayBuffering::Off => None,
            OnewayBuffering::On(b) => Some(b),
        }
    }

    /// How long a flush outside any call may block on a server that does not read: the
    /// call timeout, else the connect timeout.
    pub(crate) fn flush_write_deadline(&self) -> Instant {
        Instant::now()
            + self
                .config
                .call_timeout
                .unwrap_or(self.config.connect_timeout)
    }

    /// Writes every buffered oneway now (`Orb::flush_oneways`). Fails with `COMM_FAILURE`
    /// (completed MAYBE, minor [`MINOR_ONEWAYS_LOST`]) if a connection failed and buffered
    /// oneways were lost, here or in an earlier flush no call has reported yet.
    pub(crate) fn flush_oneways(&self) -> Result<(), SystemException> {
        let deadline = self.flush_write_deadline();
        let mut lost = 0u64;
        for rope in self.ropes() {
            if let Err(batch) = rope.flush_pending(Some(deadline)) {
                lost += batch.count as u64;
                // Reported here: no later call needs to report these.
                let _ = rope.take_unreported_lost();
            }
            lost += rope.take_unreported_lost();
        }
        if lost == 0 {
            Ok(())
        } else {
            Err(crate::Error::FlushLost { count: lost }.into())
        }
    }

    /// Asks the background flusher to visit `rope` at `at` (starting it if needed).
    pub(crate) fn schedule_flush(&self, rope: &Arc<Rope>, at: Instant) {
        let mut st = self.flusher.state.lock().unwrap_or_else(|p| p.into_inner());
        if st.stopped {
            return;
        }
        // Wake the flusher only if this is now its earliest deadline.
        let earliest = st.due.iter().all(|(t, _)| at < *t);
        st.due.push((at, rope.clone()));
        if !st.started {
            let flusher = self.flusher.clone();
            let write_timeout = self
                .config
                .call_timeout
                .unwrap_or(self.config.connect_timeout);
            let spawned = std::thread::Builder::new()
                .name("corbina-oneway-flusher".into())
                .spawn(move || oneway_flusher(&flusher, write_timeout));
            match spawned {
                Ok(_) => st.started = true,
                Err(_) => {
                    // No thread: write the batch now rather than leave it unbounded.
                    st.due.pop();
                    drop(st);
                    let _ = rope.flush_pending(Some(self.flush_write_deadline()));
                }
            }
        } else if earliest {
            self.flusher.wake.notify_one();
        }
    }

    /// The rope to `address` (any transport), created on first use.
    pub(crate) fn rope_to(&self, address: Address) -> Arc<Rope> {
        self.start_scavenger();
        let mut ropes = self.ropes.lock().unwrap_or_else(|p| p.into_inner());
        ropes
            .entry(address.clone())
            .or_insert_with(|| {
                let settings = self.strand_settings(&address);
                Arc::new(Rope::new(address, settings))
            })
            .clone()
    }

    /// A rope to `address` shared with no other reference, whose asynchronous calls all go
    /// on one connection (so they reach the server in the order they were sent, and a slow
    /// object elsewhere on that server delays none of them). Closed with the ORB's, or
    /// when its last reference goes.
    pub(crate) fn private_rope(&self, address: Address) -> Arc<Rope> {
        let settings = StrandSettings {
            async_calls_per_strand: 0,
            ..self.strand_settings(&address)
        };
        let rope = Arc::new(Rope::new(address, settings));
        let mut private = self.private.lock().unwrap_or_else(|p| p.into_inner());
        private.retain(|r| r.strong_count() > 0);
        private.push(Arc::downgrade(&rope));
        rope
    }

    fn strand_settings(&self, address: &Address) -> StrandSettings {
        let tls = matches!(address, Address::Ssl { .. });
        StrandSettings {
            connect_timeout: self.config.connect_timeout,
            max_strands: self.config.max_strands_per_rope.max(1),
            async_calls_per_strand: self.config.async_calls_per_strand,
            socket_buffer_size: self.config.socket_buffer_size,
            max_message_size: self.config.max_message_size,
            fragment_size: self.config.fragment_size,
            byte_order: self.config.byte_order,
            tls_client: tls.then(|| self.tls_client.clone()),
        }
    }

    /// Every rope (the private ones still alive too).
    pub(crate) fn ropes(&self) -> Vec<Arc<Rope>> {
        let mut all: Vec<Arc<Rope>> = {
            let ropes = self.ropes.lock().unwrap_or_else(|p| p.into_inner());
            ropes.values().cloned().collect()
        };
        let private = self.private.lock().unwrap_or_else(|p| p.into_inner());
        all.extend(private.iter().filter_map(std::sync::Weak::upgrade));
        all
    }

    /// A snapshot of every rope ([`crate::Orb::connections`]).
    pub(crate) fn connections(&self) -> Vec<ConnectionInfo> {
        self.ropes().iter().map(|r| r.info()).collect()
    }

    /// Closes, on every rope, the idle strands unused for `idle_for`; how many.
    pub(crate) fn close_idle(&self, idle_for: Duration) -> usize {
        self.ropes().iter().map(|r| r.close_idle(idle_for)).sum()
    }

    /// One scavenger scan now: closes the idle strands marked by the previous scan and marks
    /// the others. Returns how many were closed.
    pub(crate) fn scavenge_now(&self) -> usize {
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
    /// Writes the buffered oneways (a failure is counted on the rope, nobody is left to
    /// report it to) and stops the background threads.
    fn drop(&mut self) {
        let deadline = self.flush_write_deadline();
        for rope in self.ropes() {
            let _ = rope.flush_pending(Some(deadline));
        }
        {
            let mut st = self.flusher.state.lock().unwrap_or_else(|p| p.into_inner());
            st.stopped = true;
            st.due.clear();
        }
        self.flusher.wake.notify_all();
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

/// The flusher thread: sleeps until the earliest batch deadline (or until woken for an
/// earlier one), then writes the batches that are due.
fn oneway_flusher(flusher: &Flusher, write_timeout: Duration) {
    let mut st = flusher.state.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        if st.stopped {
            return;
        }
        let now = Instant::now();
        let Some(earliest) = st.due.iter().map(|(t, _)| *t).min() else {
            st = flusher.wake.wait(st).unwrap_or_else(|p| p.into_inner());
            continue;
        };
        if earliest > now {
            st = flusher
                .wake
                .wait_timeout(st, earliest - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            continue;
        }
        let (ready, later): (Vec<_>, Vec<_>) = st.due.drain(..).partition(|(t, _)| *t <= now);
        st.due = later;
        drop(st);
        let mut again = Vec::new();
        for (_, rope) in ready {
            if let rope::Due::Later(t) = rope.flush_due(now, now + write_timeout) {
                again.push((t, rope));
            }
        }
        st = flusher.state.lock().unwrap_or_else(|p| p.into_inner());
        if !st.stopped {
            st.due.extend(again);
        }
    }
}
