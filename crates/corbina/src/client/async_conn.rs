//! The connection asynchronous calls share: many requests in flight at once, from any
//! number of tasks, matched to their replies by request id in any order (GIOP 1.2).
//!
//! The reactor is one reader thread per connection doing blocking reads (no poller): it
//! files each reply in its call's slot and wakes the task's [`Waker`]. A second thread,
//! started with the first call that has a deadline, expires calls whose timeout has
//! passed. The calling task marshals and writes its request itself (no thread switch on
//! the way out). A call given up (its future dropped, or timed out) is cancelled on the
//! wire (`CancelRequest`) and its id freed; a reply that comes later is dropped. When the
//! connection ends, every call still waiting is woken: COMM_FAILURE (completed MAYBE), or
//! a resend after an orderly `CloseConnection` (the server did not process it).
//!
//! What a peer can make it hold: one message being received (reassembly capped by
//! `-ORBmaxMessageSize` as on any connection), and replies only for calls in flight.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::io::Read;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use crate::bidir::OwnedReply;
use crate::cdr::CodeSets;
use crate::error::{Error, Phase};
use crate::giop::connection::{ControlMessage, Event, GiopConnection};
use crate::giop::{TargetAddress, Version};
use crate::object::EncodeArgs;
use crate::transport::{write_outgoing, Address, Stream};
use crate::SystemException;

/// How much one read asks for.
const READ_CHUNK: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// The peer sent CloseConnection: requests in flight were not processed.
    Orderly,
    /// The connection failed or was closed under its calls.
    Failed,
}

/// Where a call in flight stands.
enum Slot {
    /// No reply yet; the task to wake when it comes.
    Waiting(Option<Waker>),
    Replied(OwnedReply),
    /// Its deadline passed (the request was cancelled on the wire).
    TimedOut,
}

struct State {
    giop: GiopConnection,
    calls: HashMap<u32, Slot>,
    ended: Option<Ended>,
}

/// One connection carrying asynchronous calls (see the [module docs](self)).
pub(crate) struct AsyncConnection {
    peer: Address,
    /// The write half; held from marshalling a request to the end of its write, so that
    /// requests leave in the order of their ids (the first carries the CODE_SETS context).
    writer: Mutex<Stream>,
    state: Mutex<State>,
    timers: Timers,
}

impl std::fmt::Debug for AsyncConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncConnection")
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

/// What became of an asynchronous request.
pub(crate) enum AsyncOutcome {
    /// The reply.
    Reply(OwnedReply),
    /// A oneway, written.
    Sent,
    /// Not processed by the peer (the connection was closing or closed in order, or the
    /// request could not be written whole): send it again on a new connection.
    Resend,
}

impl AsyncConnection {
    /// A connection over `stream` (just connected, nothing sent), its reader started.
    pub(crate) fn open(
        peer: Address,
        stream: Stream,
        giop: GiopConnection,
    ) -> Result<Arc<AsyncConnection>, SystemException> {
        let conn = Arc::new(AsyncConnection {
            peer: peer.clone(),
            writer: Mutex::new(stream.clone()),
            state: Mutex::new(State {
                giop,
                calls: HashMap::new(),
                ended: None,
            }),
            timers: Timers::default(),
        });
        let reader = conn.clone();
        let spawned = std::thread::Builder::new()
            .name("corbina-async-reader".into())
            .spawn(move || reader.run_reader(stream));
        if let Err(source) = spawned {
            conn.end(Ended::Failed);
            return Err(Error::AsyncThread {
                endpoint: peer,
                source,
            }
            .into());
        }
        Ok(conn)
    }

    /// Whether calls can still go out on it.
    pub(crate) fn is_open(&self) -> bool {
        self.state
            .lock()
            .is_ok_and(|st| st.ended.is_none() && st.giop.is_open())
    }

    /// Calls waiting for their reply.
    pub(crate) fn in_flight(&self) -> usize {
        self.state.lock().map_or(0, |st| st.calls.len())
    }

    fn lock(&self) -> Result<MutexGuard<'_, State>, SystemException> {
        self.state.lock().map_err(|_| self.poisoned())
    }

    #[cold]
    fn poisoned(&self) -> SystemException {
        Error::PoolPoisoned {
            endpoint: self.peer.clone(),
        }
        .into()
    }

    /// Sends a request. For a twoway the reply is awaited with the returned
    /// [`PendingReply`]; `Err(outcome)` when nothing more is to be awaited (a oneway
    /// written, or a resend).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn send<'a>(
        self: &Arc<Self>,
        version: Version,
        code_sets: CodeSets,
        target: &TargetAddress,
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        response_expected: bool,
        deadline: Option<Instant>,
    ) -> Result<Result<PendingReply, AsyncOutcome>, SystemException> {
        let mut writer = self.writer.lock().map_err(|_| self.poisoned())?;
        let mut st = self.lock()?;
        if st.ended.is_some() || !st.giop.is_open() {
            return Ok(Err(AsyncOutcome::Resend));
        }
        let start = |_| SystemException::from(Error::StartRequest);
        let mut req = st
            .giop
            .start_request(
                Vec::new(),
                version,
                code_sets,
                target,
                operation,
                response_expected,
            )
            .map_err(start)?;
        let request_id = req.request_id();
        if let Err(e) = encode(req.body()) {
            req.abandon();
            return Err(Error::MarshalArguments(e).into());
        }
        let w = st.giop.finish_request(req).map_err(start)?;
        if response_expected {
            st.calls.insert(request_id, Slot::Waiting(None));
        }
        drop(st);
        if let Some(d) = deadline {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() || writer.set_write_timeout(Some(left)).is_err() {
                self.forget(request_id);
                return Err(self.timed_out(Phase::Send));
            }
        } else {
            let _ = writer.set_write_timeout(None);
        }
        let written = write_outgoing(&mut *writer, None, &w);
        drop(writer);
        if let Err(e) = written {
            // Not written whole: the peer cannot have processed it, and the connection is
            // unusable for everyone.
            self.forget(request_id);
            self.end(Ended::Failed);
            let timed_out = matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            );
            if timed_out && deadline.is_some() {
                return Err(self.timed_out(Phase::Send));
            }
            return Ok(Err(AsyncOutcome::Resend));
        }
        if !response_expected {
            return Ok(Err(AsyncOutcome::Sent));
        }
        if let Some(d) = deadline {
            self.timers.add(self, d, request_id);
        }
        Ok(Ok(PendingReply {
            conn: self.clone(),
            request_id,
            settled: false,
        }))
    }

    /// Drops a call whose request did not go out whole.
    fn forget(&self, request_id: u32) {
        if let Ok(mut st) = self.state.lock() {
            st.calls.remove(&request_id);
            st.giop.abandon(request_id);
        }
    }

    #[cold]
    fn timed_out(&self, phase: Phase) -> SystemException {
        Error::Timeout {
            endpoint: self.peer.clone(),
            phase,
        }
        .into()
    }

    #[cold]
    fn closed(&self) -> SystemException {
        Error::ConnectionClosed {
            endpoint: self.peer.clone(),
        }
        .into()
    }

    /// Gives up on a call: the peer is told (CancelRequest) and a late reply dropped.
    fn cancel(&self, request_id: u32) {
        let transmits = match self.state.lock() {
            Ok(mut st) => {
                if !matches!(st.calls.remove(&request_id), Some(Slot::Waiting(_))) {
                    return;
                }
                st.giop.cancel(request_id);
                drain_transmits(&mut st.giop)
            }
            Err(_) => return,
        };
        self.write_controls(&transmits);
    }

    /// Expires `request_id` (its deadline passed): cancelled on the wire, its task woken.
    fn expire(&self, request_id: u32) {
        let (waker, transmits) = match self.state.lock() {
            Ok(mut st) => {
                let Some(slot) = st.calls.get_mut(&request_id) else {
                    return;
                };
                let Slot::Waiting(waker) = slot else {
                    return;
                };
                let waker = waker.take();
                *slot = Slot::TimedOut;
                st.giop.cancel(request_id);
                (waker, drain_transmits(&mut st.giop))
            }
            Err(_) => return,
        };
        self.write_controls(&transmits);
        if let Some(w) = waker {
            w.wake();
        }
    }

    fn write_controls(&self, transmits: &[ControlMessage]) {
        if transmits.is_empty() {
            return;
        }
        let Ok(mut writer) = self.writer.lock() else {
            return;
        };
        for m in transmits {
            if std::io::Write::write_all(&mut *writer, m.as_bytes()).is_err() {
                break;
            }
        }
    }

    /// The reader: takes in what arrives and hands out replies until the connection ends.
    fn run_reader(self: Arc<Self>, mut read_half: Stream) {
        let _ = read_half.set_read_timeout(None);
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            match read_half.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if !self.take_in(&buf[..n]) {
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        self.end(Ended::Failed);
    }

    /// Handles every message received whole; false once the connection is over.
    fn take_in(&self, bytes: &[u8]) -> bool {
        let Ok(mut guard) = self.state.lock() else {
            return false;
        };
        let mut wake = Vec::new();
        let mut ended = guard.ended;
        let State { giop, calls, .. } = &mut *guard;
        giop.push(bytes);
        while ended.is_none() {
            match giop.poll_event() {
                Ok(None) => break,
                Ok(Some(Event::Reply {
                    header,
                    body,
                    code_sets,
                })) => {
                    // The connection matched it to a request in flight; a call given up
                    // has no slot any more.
                    if let Some(slot) = calls.get_mut(&header.request_id) {
                        if let Slot::Waiting(w) = slot {
                            wake.extend(w.take());
                        }
                        *slot = Slot::Replied(OwnedReply {
                            header,
                            body: body.to_owned_body(),
                            code_sets,
                        });
                    }
                }
                Ok(Some(Event::Fragment { .. } | Event::LocateReply { .. })) => {}
                Ok(Some(Event::CloseConnection)) => ended = Some(Ended::Orderly),
                // A server sends no requests on a connection not offered as
                // bidirectional: not GIOP this client can trust further.
                Ok(Some(_)) | Err(_) => ended = Some(Ended::Failed),
            }
        }
        let transmits = drain_transmits(giop);
        if ended.is_some() {
            guard.ended.get_or_insert(ended.unwrap_or(Ended::Failed));
        }
        drop(guard);
        self.write_controls(&transmits);
        for w in wake {
            w.wake();
        }
        ended.is_none()
    }

    /// The connection is over: every call still waiting is woken and the socket closed.
    fn end(&self, how: Ended) {
        let mut wake = Vec::new();
        if let Ok(mut st) = self.state.lock() {
            st.ended.get_or_insert(how);
            st.giop.end_of_stream();
            for slot in st.calls.values_mut() {
                if let Slot::Waiting(w) = slot {
                    wake.extend(w.take());
                }
            }
        }
        if let Ok(w) = self.writer.lock() {
            let _ = w.shutdown(std::net::Shutdown::Both);
        }
        self.timers.stop();
        for w in wake {
            w.wake();
        }
    }

    /// Closes it now (the ORB is going away): calls waiting fail with COMM_FAILURE.
    pub(crate) fn close(&self) {
        self.end(Ended::Failed);
    }
}

impl Drop for AsyncConnection {
    fn drop(&mut self) {
        self.timers.stop();
    }
}

/// Every control message the connection queued.
fn drain_transmits(giop: &mut GiopConnection) -> Vec<ControlMessage> {
    std::iter::from_fn(|| giop.poll_transmit()).collect()
}

/// The reply to an asynchronous request, as a future. Dropping it before the reply came
/// cancels the request (`CancelRequest`) and frees its id.
#[must_use = "a request whose reply is not awaited is cancelled when this is dropped"]
pub(crate) struct PendingReply {
    conn: Arc<AsyncConnection>,
    request_id: u32,
    /// The outcome was handed out: nothing to cancel.
    settled: bool,
}

impl Future for PendingReply {
    type Output = Result<AsyncOutcome, SystemException>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let conn = &this.conn;
        let mut st = match conn.lock() {
            Ok(st) => st,
            Err(e) => {
                this.settled = true;
                return Poll::Ready(Err(e));
            }
        };
        let ended = st.ended;
        if let (Some(Slot::Waiting(w)), None) = (st.calls.get_mut(&this.request_id), ended) {
            // Still waiting: the reader (or the timer) wakes this task.
            match w {
                Some(old) if old.will_wake(cx.waker()) => {}
                _ => *w = Some(cx.waker().clone()),
            }
            return Poll::Pending;
        }
        let out = match st.calls.remove(&this.request_id) {
            Some(Slot::Replied(reply)) => Ok(AsyncOutcome::Reply(reply)),
            Some(Slot::TimedOut) => Err(conn.timed_out(Phase::Receive)),
            Some(Slot::Waiting(_)) if ended == Some(Ended::Orderly) => Ok(AsyncOutcome::Resend),
            // The connection failed, or the call was settled already (polled again).
            Some(Slot::Waiting(_)) | None => Err(conn.closed()),
        };
        drop(st);
        this.settled = true;
        Poll::Ready(out)
    }
}

impl Drop for PendingReply {
    fn drop(&mut self) {
        if !self.settled {
            self.conn.cancel(self.request_id);
        }
    }
}

/// Call deadlines of one connection, expired by a thread started with the first one.
#[derive(Default)]
struct Timers {
    state: Mutex<TimerState>,
    wake: Condvar,
}

#[derive(Default)]
struct TimerState {
    due: BTreeSet<(Instant, u32)>,
    started: bool,
    stopped: bool,
}

impl Timers {
    fn add(&self, conn: &Arc<AsyncConnection>, at: Instant, request_id: u32) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        if st.stopped {
            return;
        }
        let earliest = st.due.first().is_none_or(|(t, _)| at < *t);
        st.due.insert((at, request_id));
        if !st.started {
            let weak = Arc::downgrade(conn);
            let spawned = std::thread::Builder::new()
                .name("corbina-async-timer".into())
                .spawn(move || run_timers(&weak));
            // Without a thread the call is bounded by the connection's life only.
            st.started = spawned.is_ok();
        } else if earliest {
            self.wake.notify_one();
        }
    }

    fn stop(&self) {
        if let Ok(mut st) = self.state.lock() {
            st.stopped = true;
            st.due.clear();
        }
        self.wake.notify_all();
    }
}

/// The timer thread: sleeps until the earliest deadline, expires the calls that are due.
/// It holds the connection weakly, so an unused connection can still go away.
fn run_timers(conn: &Weak<AsyncConnection>) {
    loop {
        let Some(c) = conn.upgrade() else { return };
        let due = {
            let Ok(mut st) = c.timers.state.lock() else {
                return;
            };
            loop {
                if st.stopped {
                    return;
                }
                let now = Instant::now();
                match st.due.first().copied() {
                    Some((t, _)) if t <= now => {
                        let later = st.due.split_off(&(now, u32::MAX));
                        break std::mem::replace(&mut st.due, later);
                    }
                    Some((t, _)) => {
                        // Bounded waits: a dropped connection is noticed.
                        let wait = (t - now).min(std::time::Duration::from_secs(1));
                        st = match c.timers.wake.wait_timeout(st, wait) {
                            Ok((st, _)) => st,
                            Err(_) => return,
                        };
                    }
                    None => {
                        st = match c
                            .timers
                            .wake
                            .wait_timeout(st, std::time::Duration::from_secs(1))
                        {
                            Ok((st, _)) => st,
                            Err(_) => return,
                        };
                    }
                }
                if Arc::strong_count(&c) == 1 {
                    return;
                }
            }
        };
        for (_, id) in due {
            c.expire(id);
        }
    }
}
