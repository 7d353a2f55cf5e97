//! A *Rope* is the pool of connections (*Strands*) to one server address, shared by every
//! object reference to that address (omniORB2's design, seed 001 §4): references open no
//! connection of their own, a strand carries one call at a time, and concurrent calls open
//! more strands on demand up to a maximum, after which callers wait for one to come free.
//! A strand runs over any transport ([`crate::transport::Connection`]).

use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::async_conn::AsyncConnection;
use super::async_pool::{AsyncStrandInfo, AsyncStrands, Connecting, Pick};
use crate::bidir::BidirConnection;
use crate::error::{Error, Phase};
use crate::giop::connection::{GiopConnection, Role, Settings};
use crate::transport::{Address, ConnectionOptions, Stream};
use crate::SystemException;

/// The read half of a strand: a connection whose every read is bounded by the current
/// call's deadline (the read timeout set to what is left), so a reply that trickles in
/// cannot stretch a call past its timeout.
pub(crate) struct TimedStream {
    stream: Stream,
    deadline: Option<Instant>,
    /// Whether a read timeout is currently set on the connection.
    timeout_set: bool,
}

impl TimedStream {
    pub(crate) fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }
}

impl Read for TimedStream {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.deadline {
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::ErrorKind::TimedOut.into());
                }
                self.stream.set_read_timeout(Some(left))?;
                self.timeout_set = true;
            }
            None if self.timeout_set => {
                self.stream.set_read_timeout(None)?;
                self.timeout_set = false;
            }
            None => {}
        }
        self.stream.read(buf)
    }
}

/// Connection settings a rope applies to each strand.
#[derive(Debug, Clone)]
pub(crate) struct StrandSettings {
    /// How long a connect may take.
    pub connect_timeout: Duration,
    /// Most strands (connections) to this address (and, apart, most connections for its
    /// asynchronous calls).
    pub max_strands: usize,
    /// Asynchronous calls in flight that saturate a connection: when all of them carry
    /// this many, another is opened (0: asynchronous calls share one connection).
    pub async_calls_per_strand: usize,
    /// SO_SNDBUF/SO_RCVBUF, if set.
    pub socket_buffer_size: Option<usize>,
    /// Largest message accepted, fragments reassembled.
    pub max_message_size: u32,
    /// Requests longer than this are sent in fragments (GIOP 1.1+).
    pub fragment_size: Option<u32>,
    /// Byte order of the requests written.
    pub byte_order: crate::cdr::ByteOrder,
    /// The TLS client configuration, for a TLS address.
    pub tls_client: Option<crate::transport::tls::ClientTls>,
}

/// One connection to a server, used by one call at a time.
pub(crate) struct Strand {
    pub(crate) stream: Stream,
    pub(crate) reader: TimedStream,
    /// The connection's GIOP state (client role): request ids, the code sets, framing and
    /// reassembly of what `reader` reads into it.
    pub(crate) giop: GiopConnection,
    /// Whether this strand has completed a call before (a reused strand may have been closed
    /// by the server meanwhile, which makes a failed send safe to retry).
    pub(crate) reused: bool,
    last_used: Instant,
    /// Seen idle by the last scavenger scan (cleared by every use).
    marked: bool,
    /// Whether SO_SNDTIMEO is currently set.
    write_timeout_set: bool,
    /// The buffer every request on this strand is marshalled into (replies are read into
    /// `giop`'s): a call allocates nothing in the steady state.
    pub(crate) out: Vec<u8>,
    /// Buffered oneways not written yet (SyncScope none): whole GIOP messages, in order,
    /// written before (or with) the next request sent on this strand.
    pub(crate) batch: Vec<u8>,
    /// How many oneways `batch` holds.
    pub(crate) batched: usize,
    /// When `batch` must be written at the latest.
    pub(crate) batch_deadline: Option<Instant>,
    /// Taken from the rope's pending slot with its batch, not written or parked again yet
    /// (counted in `RopeState::batches_out`).
    counted_out: bool,
}

impl Strand {
    /// Whether an idle strand can carry a request: nothing may be waiting to be read on
    /// it (between calls the server only sends CloseConnection, or closes). Checked with
    /// one nonblocking peek, and only for strands idle for a while: the check is there
    /// to spot connections the server closed in between, not to win a race with it
    /// (an orderly close racing a request is handled by resending).
    ///
    /// The one clock read of a call: `last_used` becomes the time this call took the
    /// strand (release reads no clock).
    fn is_usable(&mut self) -> bool {
        if self.giop.buffered() > 0 || !self.giop.is_open() {
            return false;
        }
        let now = Instant::now();
        // Within FRESH of the start of its last call the strand is reused without a check.
        let fresh = now < self.last_used + FRESH;
        self.last_used = now;
        fresh || !self.stream.has_pending_input()
    }

    /// Writes the buffered oneways in one write. On failure they are lost (as oneways the
    /// kernel had buffered are when a connection breaks): the error says so and the caller
    /// drops the strand.
    pub(crate) fn write_batch(&mut self, deadline: Option<Instant>) -> io::Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        self.set_write_deadline(deadline)?;
        self.stream.write_all(&self.batch)?;
        self.clear_batch();
        Ok(())
    }

    /// Forgets the batch once it has been written.
    pub(crate) fn clear_batch(&mut self) {
        self.batch.clear();
        self.batched = 0;
        self.batch_deadline = None;
        if self.batch.capacity() > MAX_KEPT_BATCH {
            self.batch = Vec::new();
        }
    }

    /// Bounds the next writes by `deadline` (`None`: block as long as it takes).
    pub(crate) fn set_write_deadline(&mut self, deadline: Option<Instant>) -> io::Result<()> {
        match deadline {
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::ErrorKind::TimedOut.into());
                }
                self.stream.set_write_timeout(Some(left))?;
                self.write_timeout_set = true;
            }
            None if self.write_timeout_set => {
                self.stream.set_write_timeout(None)?;
                self.write_timeout_set = false;
            }
            None => {}
        }
        Ok(())
    }
}

/// How long after a call a strand is taken as still open without a look at the socket.
const FRESH: Duration = Duration::from_millis(1);

/// A batch buffer grown beyond this by one large burst is not kept for the next one.
const MAX_KEPT_BATCH: usize = 1 << 20;

/// How long a local endpoint (Unix socket, shared memory) that could not be connected to is
/// skipped in favour of the profile's TCP address before it is tried again.
pub const STALE_LOCAL_RETRY: Duration = Duration::from_secs(30);

/// How long an address of an object with several (alternate IIOP addresses, several
/// profiles) is passed over after a failed connect, by every reference through its rope.
pub const FAILOVER_RETRY: Duration = Duration::from_secs(5);

struct RopeState {
    // Boxed so that handing a strand to a caller and back moves a pointer, not the
    // strand's buffers and reader (measured: a few hundred bytes copied per call).
    #[allow(clippy::vec_box)]
    idle: Vec<Box<Strand>>,
    open: usize,
    /// The strand holding buffered oneways, if any: handed out before idle ones, so the
    /// next request on this rope (a twoway, say) goes out after them on the same connection.
    pending: Option<Box<Strand>>,
    /// When the background flusher will next look at `pending`, if it will.
    flush_at: Option<Instant>,
    /// Strands taken from `pending` whose batch is not written yet. While there are any, no
    /// other strand is handed out: a request must not overtake, on another connection,
    /// oneways buffered before it.
    batches_out: usize,
    /// Callers waiting in `acquire` (freeing a strand wakes one only if there are any).
    waiting: usize,
}

/// What became of a strand with buffered oneways handed back by [`Rope::park`].
pub(crate) enum Park {
    /// Kept as the rope's pending strand; `Some(t)`: the background flusher must look at
    /// this rope at `t`.
    Parked(Option<Instant>),
    /// Another strand is pending already: write this one's batch now.
    Occupied(Box<Strand>),
}

/// What [`Rope::flush_due`] found.
pub(crate) enum Due {
    /// Nothing left to flush on this rope (or the flush was done).
    Done,
    /// A batch is pending that is due later: look again then.
    Later(Instant),
}

/// The connections to one address (`host:port` over TCP, or a local endpoint).
pub(crate) struct Rope {
    address: Address,
    settings: StrandSettings,
    state: Mutex<RopeState>,
    freed: Condvar,
    /// Buffered oneways lost by a flush that no call has reported yet.
    unreported_lost: AtomicU64,
    /// Buffered oneways lost on this rope in all.
    lost: AtomicU64,
    /// For a local endpoint: until when it is skipped after a failed connect (ms since
    /// [`epoch`], 0 = not skipped).
    stale_until: AtomicU64,
    /// Bidirectional GIOP: the connection calls to this address go over instead of the
    /// strands (a server's route back to a client, or a client's offering connection).
    bidir: Mutex<Option<Arc<BidirConnection>>>,
    /// Whether `bidir` may be set: the common call skips the lock.
    routed: AtomicBool,
    /// The connections asynchronous calls to this address share (opened by the first).
    async_conn: AsyncStrands,
}

/// Where an asynchronous call goes: see [`Rope::async_connection`].
pub(crate) enum AsyncStrand {
    /// An open connection.
    Ready(Arc<AsyncConnection>),
    /// The rope's first connection, being opened.
    Connecting(super::async_pool::ConnectWait),
}

/// A process-wide reference instant, so deadlines fit in an atomic.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn millis_since_epoch(t: Instant) -> u64 {
    t.saturating_duration_since(epoch()).as_millis() as u64 + 1
}

/// Buffered oneways lost with their connection: its write failed.
pub(crate) struct LostBatch {
    /// How many oneways.
    pub(crate) count: usize,
    /// Why the write failed.
    pub(crate) error: io::Error,
}

impl Rope {
    /// A rope to `address`; no connection is opened until the first call.
    pub(crate) fn new(address: Address, settings: StrandSettings) -> Rope {
        Rope {
            address,
            settings,
            state: Mutex::new(RopeState {
                idle: Vec::new(),
                open: 0,
                pending: None,
                flush_at: None,
                batches_out: 0,
                waiting: 0,
            }),
            freed: Condvar::new(),
            unreported_lost: AtomicU64::new(0),
            lost: AtomicU64::new(0),
            stale_until: AtomicU64::new(0),
            bidir: Mutex::new(None),
            routed: AtomicBool::new(false),
            async_conn: AsyncStrands::default(),
        }
    }

    /// Whether calls to this address may go over a bidirectional connection.
    #[inline]
    pub(crate) fn is_routed(&self) -> bool {
        self.routed.load(Ordering::Relaxed)
    }

    /// The bidirectional connection this address's calls go over, if there is one.
    pub(crate) fn bidir(&self) -> Option<Arc<BidirConnection>> {
        if !self.routed.load(Ordering::Acquire) {
            return None;
        }
        self.bidir.lock().ok().and_then(|b| b.clone())
    }

    /// Routes this address's calls over `conn` (replacing any earlier route).
    pub(crate) fn attach_bidir(&self, conn: Arc<BidirConnection>) {
        if let Ok(mut b) = self.bidir.lock() {
            *b = Some(conn);
            self.routed.store(true, Ordering::Release);
        }
    }

    /// Stops routing over `conn` (it ended), if it is still the route.
    pub(crate) fn detach_bidir(&self, conn: &BidirConnection) {
        if let Ok(mut b) = self.bidir.lock() {
            if b.as_deref().is_some_and(|c| std::ptr::eq(c, conn)) {
                *b = None;
                self.routed.store(false, Ordering::Release);
            }
        }
    }

    /// The bidirectional connection calls to this address go over, opened with `open` if
    /// there is none (one at a time: concurrent callers wait for the first).
    pub(crate) fn bidir_or_open(
        self: &Arc<Self>,
        open: impl FnOnce(&Arc<Rope>) -> Result<Arc<BidirConnection>, SystemException>,
    ) -> Result<Arc<BidirConnection>, SystemException> {
        let mut b = self.bidir.lock().map_err(|_| Error::PoolPoisoned {
            endpoint: self.address.clone(),
        })?;
        if let Some(c) = b.as_ref().filter(|c| c.is_open()) {
            return Ok(c.clone());
        }
        let c = open(self)?;
        *b = Some(c.clone());
        self.routed.store(true, Ordering::Release);
        Ok(c)
    }

    /// Closes the bidirectional connection this rope opened, if any (its ORB shuts down).
    pub(crate) fn close_bidir(&self) {
        let conn = self.bidir.lock().ok().and_then(|mut b| b.take());
        self.routed.store(false, Ordering::Release);
        if let Some(c) = conn {
            c.close_if_opened_by(self);
        }
    }

    /// A new connection to this address, not pooled: for a bidirectional connection.
    pub(crate) fn connect_unpooled(
        &self,
        deadline: Option<Instant>,
    ) -> Result<(Stream, GiopConnection), SystemException> {
        let strand = self.connect(deadline)?;
        let Strand { stream, giop, .. } = *strand;
        Ok((stream, giop))
    }

    /// The connection an asynchronous call goes on, or the connect to wait for (started
    /// on a helper thread, never on the calling one; see [`AsyncStrands`]).
    pub(crate) fn async_connection(
        self: &Arc<Self>,
        deadline: Option<Instant>,
    ) -> Result<AsyncStrand, SystemException> {
        let pick = self.async_conn.pick(
            &self.address,
            self.settings.async_calls_per_strand,
            self.settings.max_strands,
            deadline,
        )?;
        Ok(match pick {
            Pick::Use(conn, spread) => {
                if let Some(c) = spread {
                    // Not awaited: a failed spread leaves the call on the connections open.
                    let _ = self.start_async_connect(c);
                }
                AsyncStrand::Ready(conn)
            }
            Pick::Wait(wait, start) => {
                if let Some(c) = start {
                    self.start_async_connect(c)?;
                }
                AsyncStrand::Connecting(wait)
            }
        })
    }

    /// Connects `connecting` on a helper thread, read by the calling task's runtime if it
    /// has one.
    fn start_async_connect(
        self: &Arc<Self>,
        connecting: Arc<Connecting>,
    ) -> Result<(), SystemException> {
        let runtime = super::async_reactor::current();
        let rope = self.clone();
        let c = connecting.clone();
        let connect = move || {
            let outcome = rope
                .connect_unpooled(c.deadline())
                .and_then(|(stream, giop)| {
                    AsyncConnection::open(rope.address.clone(), stream, giop, runtime.as_ref())
                });
            rope.async_conn.finish(&c, outcome, || rope.async_closed());
        };
        if super::async_pool::connects_inline() {
            connect();
            return Ok(());
        }
        let spawned = std::thread::Builder::new()
            .name("corbina-async-connect".into())
            .spawn(connect);
        if let Err(source) = spawned {
            let e: SystemException = Error::AsyncThread {
                endpoint: self.address.clone(),
                source,
            }
            .into();
            self.async_conn
                .finish(&connecting, Err(e.clone()), || e.clone());
            return Err(e);
        }
        Ok(())
    }

    #[cold]
    fn async_closed(&self) -> SystemException {
        Error::ConnectionClosed {
            endpoint: self.address.clone(),
        }
        .into()
    }

    /// What [`crate::Orb::connections`] shows of this rope.
    pub(crate) fn info(&self) -> super::ConnectionInfo {
        super::ConnectionInfo {
            address: self.address.clone(),
            open_strands: self.open_strands(),
            stale: self.is_stale(),
            bidir: self.bidir().is_some(),
            async_strands: self.async_strands(),
            async_in_flight: self.async_in_flight(),
            buffered_oneways: self.buffered_oneways(),
            lost_oneways: self.lost_oneways(),
        }
    }

    /// Asynchronous calls waiting for their reply on this address's connections.
    pub fn async_in_flight(&self) -> usize {
        self.async_conn.in_flight()
    }

    /// This address's open connections for asynchronous calls.
    pub fn async_strands(&self) -> Vec<AsyncStrandInfo> {
        self.async_conn.strands()
    }

    /// Closes the asynchronous calls' connections (its ORB shuts down): calls waiting on
    /// them fail with COMM_FAILURE.
    pub(crate) fn close_async(&self) {
        self.async_conn.close();
    }

    /// Whether this (local) endpoint failed to connect less than [`STALE_LOCAL_RETRY`] ago.
    pub fn is_stale(&self) -> bool {
        // One atomic load in the common case: never marked.
        match self.stale_until.load(Ordering::Relaxed) {
            0 => false,
            until => millis_since_epoch(Instant::now()) < until,
        }
    }

    /// Skips this endpoint for [`STALE_LOCAL_RETRY`] (its connect failed).
    pub(crate) fn mark_stale(&self) {
        self.stale_for(STALE_LOCAL_RETRY);
    }

    /// Skips this address for [`FAILOVER_RETRY`] in favour of the object's other
    /// addresses (its connect failed).
    pub(crate) fn mark_failed(&self) {
        self.stale_for(FAILOVER_RETRY);
    }

    fn stale_for(&self, period: Duration) {
        let until = millis_since_epoch(Instant::now() + period);
        self.stale_until.store(until, Ordering::Relaxed);
    }

    /// Buffered oneways lost on this rope (a flush's write failed), in all.
    pub fn lost_oneways(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }

    /// Takes the count of buffered oneways lost by flushes outside any call (background,
    /// explicit, drop) that no call has reported yet.
    pub(crate) fn take_unreported_lost(&self) -> u64 {
        if self.unreported_lost.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        self.unreported_lost.swap(0, Ordering::Relaxed)
    }

    /// Counts `n` buffered oneways as lost; `report`: a later call reports them.
    pub(crate) fn count_lost(&self, n: usize, report: bool) {
        self.lost.fetch_add(n as u64, Ordering::Relaxed);
        if report {
            self.unreported_lost.fetch_add(n as u64, Ordering::Relaxed);
        }
    }

    /// Buffered oneways waiting to be written on this rope.
    pub fn buffered_oneways(&self) -> usize {
        self.state
            .lock()
            .map(|s| s.pending.as_ref().map_or(0, |p| p.batched))
            .unwrap_or(0)
    }

    /// Takes the pending strand (with its batch), counting it out.
    fn take_pending(st: &mut RopeState) -> Option<Box<Strand>> {
        let mut s = st.pending.take()?;
        s.counted_out = true;
        st.batches_out += 1;
        Some(s)
    }

    /// The strand's batch has been written (or failed, or parked again): requests may go
    /// out on other strands again. Returns whether waiters must be woken.
    fn settle_locked(st: &mut RopeState, strand: &mut Strand) -> bool {
        if !strand.counted_out {
            return false;
        }
        strand.counted_out = false;
        st.batches_out -= 1;
        st.batches_out == 0 && st.waiting > 0
    }

    /// [`Rope::settle_locked`] for a strand the caller holds.
    pub(crate) fn settle(&self, strand: &mut Strand) {
        if !strand.counted_out {
            return;
        }
        let wake = match self.state.lock() {
            Ok(mut st) => Self::settle_locked(&mut st, strand),
            Err(_) => true,
        };
        if wake {
            // Waiters may be waiting for this or for a free strand: wake them all.
            self.freed.notify_all();
        }
    }

    /// Hands back a strand whose batch of buffered oneways is not to be written yet.
    pub(crate) fn park(&self, mut strand: Box<Strand>) -> Park {
        let deadline = strand.batch_deadline;
        let Ok(mut st) = self.state.lock() else {
            return Park::Occupied(strand);
        };
        if st.pending.is_some() {
            return Park::Occupied(strand);
        }
        let settled = Self::settle_locked(&mut st, &mut strand);
        st.pending = Some(strand);
        // Schedule the flusher unless it already looks at this rope in time.
        let schedule = match (deadline, st.flush_at) {
            (Some(d), Some(at)) if at <= d => None,
            (Some(d), _) => {
                st.flush_at = Some(d);
                Some(d)
            }
            (None, _) => None,
        };
        let wake = st.waiting > 0;
        drop(st);
        if settled {
            self.freed.notify_all();
        } else if wake {
            self.freed.notify_one();
        }
        Park::Parked(schedule)
    }

    /// The background flusher's visit: writes the pending batch if it is due at `now`.
    pub(crate) fn flush_due(&self, now: Instant, write_deadline: Instant) -> Due {
        let Ok(mut st) = self.state.lock() else {
            return Due::Done;
        };
        let due = match &st.pending {
            None => None,
            Some(p) => p.batch_deadline.filter(|&d| d > now),
        };
        if let Some(later) = due {
            st.flush_at = Some(later);
            return Due::Later(later);
        }
        st.flush_at = None;
        let pending = Self::take_pending(&mut st);
        drop(st);
        if let Some(strand) = pending {
            let _ = self.write_and_release(strand, Some(write_deadline), true);
        }
        Due::Done
    }

    /// Writes the pending batch now (explicit flush, shutdown). `Err`: the connection
    /// failed and that many oneways were lost.
    pub(crate) fn flush_pending(&self, write_deadline: Option<Instant>) -> Result<(), LostBatch> {
        let pending = self.state.lock().ok().and_then(|mut st| {
            // Nothing left for the flusher: a later batch must schedule it afresh.
            st.flush_at = None;
            Self::take_pending(&mut st)
        });
        match pending {
            Some(strand) => self.write_and_release(strand, write_deadline, false),
            None => Ok(()),
        }
    }

    /// Writes a strand's batch and returns the strand to the rope, or drops it if the write
    /// failed (counting its oneways lost; `report`: for a later call to report).
    pub(crate) fn write_and_release(
        &self,
        mut strand: Box<Strand>,
        write_deadline: Option<Instant>,
        report: bool,
    ) -> Result<(), LostBatch> {
        match strand.write_batch(write_deadline) {
            Ok(()) => {
                self.release(strand);
                Ok(())
            }
            Err(error) => {
                let n = strand.batched;
                self.settle(&mut strand);
                drop(strand);
                self.discard();
                self.count_lost(n, report);
                Err(LostBatch { count: n, error })
            }
        }
    }

    /// The address this rope connects to.
    pub fn address(&self) -> &Address {
        &self.address
    }

    /// Connections currently open (idle or in use).
    pub fn open_strands(&self) -> usize {
        self.state.lock().map(|s| s.open).unwrap_or(0)
    }

    /// Takes an idle strand, or opens one if under the limit, or waits for one to be freed,
    /// giving up at `deadline` (none: waits): waiting for a strand ends with TIMEOUT
    /// (completed NO); a connect cut short by it, or by the connect timeout, with TRANSIENT.
    pub(crate) fn acquire_until(
        &self,
        deadline: Option<Instant>,
    ) -> Result<Box<Strand>, SystemException> {
        let mut st = self.state.lock().map_err(|_| self.poisoned())?;
        loop {
            if let Some(s) = Self::take_pending(&mut st) {
                return Ok(s);
            }
            if st.batches_out > 0 {
                // Another strand is carrying buffered oneways out: wait until they are
                // written, so this request cannot overtake them.
                st = self.wait(st, deadline)?;
                continue;
            }
            while let Some(mut s) = st.idle.pop() {
                if s.is_usable() {
                    return Ok(s);
                }
                // Closed by the server while idle (CloseConnection or end of stream
                // pending): nothing was sent on it, so just drop it.
                st.open -= 1;
            }
            if st.open < self.settings.max_strands {
                st.open += 1;
                drop(st);
                return self.connect(deadline).inspect_err(|_| self.discard());
            }
            st = self.wait(st, deadline)?;
        }
    }

    /// Waits for a strand to be freed (or a batch written), until `deadline`.
    fn wait<'g>(
        &self,
        mut st: std::sync::MutexGuard<'g, RopeState>,
        deadline: Option<Instant>,
    ) -> Result<std::sync::MutexGuard<'g, RopeState>, SystemException> {
        let left = match deadline {
            None => None,
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(self.timed_out(Phase::Wait));
                }
                Some(left)
            }
        };
        st.waiting += 1;
        let mut st = match left {
            None => self.freed.wait(st).map_err(|_| self.poisoned())?,
            Some(left) => {
                self.freed
                    .wait_timeout(st, left)
                    .map_err(|_| self.poisoned())?
                    .0
            }
        };
        st.waiting -= 1;
        Ok(st)
    }

    /// Returns a strand after a complete call, for the next caller.
    pub(crate) fn release(&self, mut strand: Box<Strand>) {
        strand.reused = true;
        strand.marked = false;
        let (wake, all) = match self.state.lock() {
            Ok(mut st) => {
                let settled = Self::settle_locked(&mut st, &mut strand);
                st.idle.push(strand);
                (st.waiting > 0, settled || st.batches_out > 0)
            }
            Err(_) => (true, true),
        };
        // A notify is a system call even with nobody waiting: skip it then. While batches
        // are out some waiters wait for those, not for this strand: wake them all.
        if wake && all {
            self.freed.notify_all();
        } else if wake {
            self.freed.notify_one();
        }
    }

    /// Forgets a strand that failed or was closed (it has already been dropped).
    pub(crate) fn discard(&self) {
        let wake = match self.state.lock() {
            Ok(mut st) => {
                st.open = st.open.saturating_sub(1);
                st.waiting > 0
            }
            Err(_) => true,
        };
        if wake {
            self.freed.notify_one();
        }
    }

    /// Closes idle strands unused for `idle_for`: the client half of the scavenger.
    pub fn close_idle(&self, idle_for: Duration) -> usize {
        let Ok(mut st) = self.state.lock() else {
            return 0;
        };
        let before = st.idle.len();
        st.idle.retain(|s| s.last_used.elapsed() < idle_for);
        let closed = before - st.idle.len();
        st.open -= closed;
        drop(st);
        self.freed.notify_all();
        closed
    }

    /// One scavenger scan (mark and sweep, seed 001 §4): closes the idle strands already
    /// marked by the previous scan and marks the rest; a call clears its strand's mark.
    /// Returns how many were closed.
    pub fn scavenge(&self) -> usize {
        let Ok(mut st) = self.state.lock() else {
            return 0;
        };
        let before = st.idle.len();
        st.idle.retain(|s| !s.marked);
        for s in &mut st.idle {
            s.marked = true;
        }
        let closed = before - st.idle.len();
        st.open -= closed;
        drop(st);
        self.freed.notify_all();
        closed
    }

    fn connect(&self, deadline: Option<Instant>) -> Result<Box<Strand>, SystemException> {
        let mut limit = self.settings.connect_timeout;
        if let Some(d) = deadline {
            limit = limit.min(d.saturating_duration_since(Instant::now()));
            if limit.is_zero() {
                return Err(self.timed_out(Phase::Connect));
            }
        }
        let options = ConnectionOptions {
            socket_buffer_size: self.settings.socket_buffer_size,
            tls_client: self
                .settings
                .tls_client
                .as_ref()
                .map(crate::transport::tls::ClientTls::current),
        };
        match self.address.connect(limit, &options) {
            Ok(conn) => {
                crate::trace::connected(&self.address);
                let conn = crate::trace::wire(conn, Some(&self.address));
                Ok(self.strand(Stream(conn)))
            }
            Err(e) if e.kind() == io::ErrorKind::TimedOut => Err(self.timed_out(Phase::Connect)),
            Err(source) => Err(Error::Connect {
                endpoint: self.address.clone(),
                source,
            }
            .into()),
        }
    }

    #[cold]
    fn timed_out(&self, phase: Phase) -> SystemException {
        let e = Error::Timeout {
            endpoint: self.address.clone(),
            phase,
        };
        crate::trace::call_failed(&e);
        e.into()
    }

    #[cold]
    fn poisoned(&self) -> SystemException {
        Error::PoolPoisoned {
            endpoint: self.address.clone(),
        }
        .into()
    }

    fn strand(&self, stream: Stream) -> Box<Strand> {
        let read_half = TimedStream {
            stream: stream.clone(),
            deadline: None,
            timeout_set: false,
        };
        let giop = GiopConnection::new(Settings {
            max_message_size: self.settings.max_message_size,
            reassembly_limit: self.settings.max_message_size as usize,
            fragment_size: self.settings.fragment_size,
            byte_order: self.settings.byte_order,
            ..Settings::new(Role::Client)
        });
        Box::new(Strand {
            stream,
            reader: read_half,
            giop,
            reused: false,
            last_used: Instant::now(),
            marked: false,
            write_timeout_set: false,
            out: Vec::with_capacity(512),
            batch: Vec::new(),
            batched: 0,
            batch_deadline: None,
            counted_out: false,
        })
    }
}

impl Drop for Rope {
    /// Buffered oneways still pending when the last reference to the rope goes are written
    /// (bounded by the connect timeout), not dropped.
    fn drop(&mut self) {
        let deadline = Instant::now() + self.settings.connect_timeout;
        let _ = self.flush_pending(Some(deadline));
        // A bidirectional connection this rope opened goes with it (its reader would keep
        // it open otherwise); so does the asynchronous calls' connection.
        self.close_bidir();
        self.close_async();
    }
}
