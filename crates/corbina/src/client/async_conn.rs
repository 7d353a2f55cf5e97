//! The connection asynchronous calls share: many requests in flight at once, from any
//! number of tasks, matched to their replies by request id in any order (GIOP 1.2).
//!
//! What reads the connection is the I/O driver of the tokio runtime the call that opened it
//! was polled in (feature `tokio`, TCP and Unix sockets; see [`super::async_reactor`]), else
//! one reader thread doing blocking reads; either files each reply in its call's slot and
//! wakes the task's [`Waker`]. A connection whose runtime shuts down starts a reader
//! thread, so its calls go on. A second thread,
//! started with the first call that has a deadline, expires calls whose timeout has
//! passed. The calling task marshals and writes its request itself (no thread switch on
//! the way out). A call given up (its future dropped, or timed out) is cancelled on the
//! wire (`CancelRequest`) and its id freed; a reply that comes later is dropped. When the
//! connection ends, every call still waiting is woken: COMM_FAILURE (completed MAYBE), or
//! a resend after an orderly `CloseConnection` (the server did not process it).
//!
//! What a peer can make it hold: one message being received (reassembly capped by
//! `-ORBmaxMessageSize` as on any connection), and replies only for calls in flight.

use std::collections::BTreeSet;
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

#[cfg(feature = "tokio")]
use super::async_reactor;
use super::async_reactor::Runtime;
use super::invoker::{Hooks, IiopInvoker, NoHooks};
use super::replies::{Ended, Outcome, OwnedReply, Replies, Slot};
use crate::error::{Error, Phase};
use crate::giop::connection::{ControlMessage, Event, GiopConnection};
use crate::giop::TargetAddress;
use crate::object::EncodeArgs;
use crate::transport::{write_outgoing, Address, Stream};
use crate::SystemException;

/// [`AsyncConnection::load`]: no call can go out on it.
const CLOSED: usize = usize::MAX;

/// How much one read asks for.
const READ_CHUNK: usize = 64 * 1024;

/// The slot of a call that has none (a oneway).
const NO_SLOT: u32 = u32::MAX;

struct State {
    giop: GiopConnection,
    /// Calls in flight, each with the task to wake when its reply comes.
    calls: Replies<Option<Waker>>,
    ended: Option<Ended>,
    /// The registration with a runtime's I/O driver, while it reads the connection: under
    /// the state lock, which reading takes anyway (one lock per readiness, not two).
    #[cfg(feature = "tokio")]
    registration: Option<async_reactor::Registration>,
}

/// One connection carrying asynchronous calls (see the [module docs](self)).
pub(crate) struct AsyncConnection {
    peer: Address,
    /// The write half; held from marshalling a request to the end of its write, so that
    /// requests leave in the order of their ids (the first carries the CODE_SETS context).
    writer: Mutex<Writer>,
    state: Mutex<State>,
    /// Calls waiting for their reply, or [`CLOSED`]: published under the state lock at
    /// every change, so that choosing a connection for a call takes no lock of it.
    load: AtomicUsize,
    timers: Timers,
    /// The read half.
    reader: Stream,
    /// What the I/O driver wakes: the connection itself (it holds it weakly).
    #[cfg(feature = "tokio")]
    reactor_waker: Waker,
}

impl std::fmt::Debug for AsyncConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncConnection")
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

/// The write half.
struct Writer {
    stream: Stream,
    /// Whether a write timeout is set on the connection.
    timeout_set: bool,
    /// The last request's buffer, for the next one.
    out: Vec<u8>,
}

impl AsyncConnection {
    /// A connection over `stream` (just connected, nothing sent), read by `runtime`'s I/O
    /// driver if it can, else by a reader thread started now.
    pub(crate) fn open(
        peer: Address,
        stream: Stream,
        giop: GiopConnection,
        runtime: Option<&Runtime>,
    ) -> Result<Arc<AsyncConnection>, SystemException> {
        #[cfg(feature = "tokio")]
        let registration = runtime.and_then(|rt| async_reactor::register(&stream, rt));
        #[cfg(not(feature = "tokio"))]
        let _ = runtime;
        let conn = Arc::new_cyclic(|_weak| AsyncConnection {
            peer: peer.clone(),
            writer: Mutex::new(Writer {
                stream: stream.clone(),
                timeout_set: false,
                out: Vec::new(),
            }),
            state: Mutex::new(State {
                giop,
                calls: Replies::default(),
                ended: None,
                #[cfg(feature = "tokio")]
                registration: None,
            }),
            load: AtomicUsize::new(0),
            timers: Timers::default(),
            reader: stream,
            #[cfg(feature = "tokio")]
            reactor_waker: Waker::from(Arc::new(reactor::Readable(_weak.clone()))),
        });
        #[cfg(feature = "tokio")]
        if let Some(r) = registration {
            if let Ok(mut st) = conn.state.lock() {
                st.registration = Some(r);
            }
            conn.drive();
            return Ok(conn);
        }
        conn.start_reader_thread()?;
        Ok(conn)
    }

    /// Starts the thread that reads the connection with blocking reads.
    fn start_reader_thread(self: &Arc<Self>) -> Result<(), SystemException> {
        let reader = self.clone();
        let spawned = std::thread::Builder::new()
            .name("corbina-async-reader".into())
            .spawn(move || reader.run_reader());
        if let Err(source) = spawned {
            self.end(Ended::Failed);
            return Err(Error::AsyncThread {
                endpoint: self.peer.clone(),
                source,
            }
            .into());
        }
        Ok(())
    }

    /// Calls waiting for their reply if calls can still go out on it, else `None`.
    pub(crate) fn load(&self) -> Option<usize> {
        let load = self.load.load(Ordering::Relaxed);
        (load != CLOSED).then_some(load)
    }

    /// Publishes the load of `st` (its lock held).
    #[inline]
    fn publish(&self, st: &State) {
        let load = if st.ended.is_none() && st.giop.is_open() {
            st.calls.len()
        } else {
            CLOSED
        };
        self.load.store(load, Ordering::Relaxed);
    }

    /// Whether a runtime's I/O driver reads it (not a reader thread).
    pub(crate) fn on_reactor(&self) -> bool {
        #[cfg(feature = "tokio")]
        return self.state.lock().is_ok_and(|st| st.registration.is_some());
        #[cfg(not(feature = "tokio"))]
        false
    }

    /// Calls waiting for their reply.
    pub(crate) fn in_flight(&self) -> usize {
        self.state.lock().map_or(0, |st| st.calls.len())
    }

    #[inline]
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
    /// [`PendingReply`]; `waker` (the calling task's) is woken when it arrives, so the call
    /// returns `Pending` without polling it first. `Err(outcome)` when nothing more is to be
    /// awaited (a oneway written, or a resend).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn send<'a>(
        self: &Arc<Self>,
        invoker: &IiopInvoker,
        target: &TargetAddress,
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        response_expected: bool,
        deadline: Option<Instant>,
        waker: &Waker,
    ) -> Result<Result<PendingReply, Outcome>, SystemException> {
        let mut writer = self.writer.lock().map_err(|_| self.poisoned())?;
        let mut st = self.lock()?;
        if st.ended.is_some() || !st.giop.is_open() {
            self.publish(&st);
            return Ok(Err(Outcome::Resend));
        }
        // Marshalled as on the synchronous path (one frame: buffer, header, arguments).
        let (request_id, w) = NoHooks.request(
            invoker,
            &mut st.giop,
            &mut writer.out,
            target,
            operation,
            response_expected,
            encode,
        )?;
        // The call's slot, its index given to the connection's in-flight entry: the reply
        // comes back with it (one lookup by request id, the connection's).
        let mut token = NO_SLOT;
        if response_expected {
            let Some(t) = st.calls.expect(request_id, Some(waker.clone())) else {
                st.giop.abandon(request_id);
                return Err(self.closed());
            };
            token = t;
            st.giop.set_reply_token(request_id, token);
            self.publish(&st);
        }
        drop(st);
        if let Some(d) = deadline {
            let left = d.saturating_duration_since(Instant::now());
            writer.timeout_set = true;
            if left.is_zero() || writer.stream.set_write_timeout(Some(left)).is_err() {
                self.forget(request_id, token);
                return Err(self.timed_out(Phase::Send));
            }
        } else {
            // Only when one is set: a system call per call otherwise.
            if writer.timeout_set {
                writer.timeout_set = false;
                let _ = writer.stream.set_write_timeout(None);
            }
        }
        let written = write_outgoing(&mut writer.stream, None, &w);
        writer.out = crate::transport::recycle(w.into_buffer());
        drop(writer);
        if let Err(e) = written {
            // Not written whole: the peer cannot have processed it, and the connection is
            // unusable for everyone.
            self.forget(request_id, token);
            self.end(Ended::Failed);
            let timed_out = matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            );
            if timed_out && deadline.is_some() {
                return Err(self.timed_out(Phase::Send));
            }
            return Ok(Err(Outcome::Resend));
        }
        if !response_expected {
            return Ok(Err(Outcome::Sent));
        }
        if let Some(d) = deadline {
            self.timers.add(self, d, request_id, token);
        }
        Ok(Ok(PendingReply {
            conn: self.clone(),
            request_id,
            token,
            settled: false,
        }))
    }

    /// Drops a call whose request did not go out whole.
    fn forget(&self, request_id: u32, token: u32) {
        if let Ok(mut st) = self.state.lock() {
            if token != NO_SLOT {
                st.calls.forget(token);
            }
            st.giop.abandon(request_id);
            self.publish(&st);
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
    fn cancel(&self, request_id: u32, token: u32) {
        let transmits = match self.state.lock() {
            Ok(mut st) => {
                let waiting = st.calls.forget(token);
                self.publish(&st);
                if !waiting {
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
    fn expire(&self, request_id: u32, token: u32) {
        let (waker, transmits) = match self.state.lock() {
            Ok(mut st) => {
                let Some(waker) = st.calls.expire(token, request_id) else {
                    return;
                };
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

    /// Writes the control messages the connection queued (usually none: inline).
    #[inline]
    fn write_controls(&self, transmits: &[ControlMessage]) {
        if !transmits.is_empty() {
            self.write_controls_now(transmits);
        }
    }

    #[inline(never)]
    fn write_controls_now(&self, transmits: &[ControlMessage]) {
        let Ok(mut writer) = self.writer.lock() else {
            return;
        };
        for m in transmits {
            if std::io::Write::write_all(&mut writer.stream, m.as_bytes()).is_err() {
                break;
            }
        }
    }

    /// The reader: takes in what arrives and hands out replies until the connection ends.
    fn run_reader(self: Arc<Self>) {
        let mut read_half = self.reader.clone();
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
        let mut wake = Wakes::default();
        let st = &mut *guard;
        st.giop.push(bytes);
        let open = file_replies(&mut st.giop, &mut st.calls, &mut st.ended, &mut wake);
        self.publish(&guard);
        let transmits = drain_transmits(&mut guard.giop);
        drop(guard);
        self.write_controls(&transmits);
        wake.wake();
        open
    }

    /// The connection is over: every call still waiting is woken and the socket closed.
    fn end(&self, how: Ended) {
        let mut wake = Vec::new();
        if let Ok(mut st) = self.state.lock() {
            st.ended.get_or_insert(how);
            st.giop.end_of_stream();
            self.publish(&st);
            wake.extend(st.calls.waiters().filter_map(Option::take));
        }
        if let Ok(w) = self.writer.lock() {
            let _ = w.stream.shutdown(std::net::Shutdown::Both);
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

/// Files every reply received whole in its call's slot, collecting the wakers to wake;
/// false once the connection is over. Takes the state's fields, not the state: the reactor
/// keeps its registration borrowed meanwhile.
fn file_replies(
    giop: &mut GiopConnection,
    calls: &mut Replies<Option<Waker>>,
    st_ended: &mut Option<Ended>,
    wake: &mut Wakes,
) -> bool {
    let mut ended = *st_ended;
    while ended.is_none() {
        match giop.poll_event() {
            Ok(None) => break,
            Ok(Some(Event::Reply {
                header,
                body,
                code_sets,
            })) => {
                // The connection matched it to a request in flight (replies to calls given
                // up are dropped there) and hands back the call's slot.
                let reply = OwnedReply::copy(header, body, code_sets);
                if let Some(w) = calls.file(giop.reply_token(), reply) {
                    wake.push(w);
                }
            }
            Ok(Some(Event::Fragment { .. } | Event::LocateReply { .. })) => {}
            Ok(Some(Event::CloseConnection)) => ended = Some(Ended::Orderly),
            // A server sends no requests on a connection not offered as
            // bidirectional: not GIOP this client can trust further.
            Ok(Some(_)) | Err(_) => ended = Some(Ended::Failed),
        }
    }
    if let Some(how) = ended {
        st_ended.get_or_insert(how);
    }
    ended.is_none()
}

/// The tasks to wake once the state lock is released: the first one inline (a read brings
/// one reply, usually), so that the common case allocates nothing.
#[derive(Default)]
struct Wakes {
    first: Option<Waker>,
    rest: Vec<Waker>,
}

impl Wakes {
    fn push(&mut self, waker: Option<Waker>) {
        if let Some(w) = waker {
            match self.first {
                None => self.first = Some(w),
                Some(_) => self.rest.push(w),
            }
        }
    }

    #[inline]
    fn wake(self) {
        if let Some(w) = self.first {
            w.wake();
        }
        if !self.rest.is_empty() {
            wake_all(self.rest);
        }
    }
}

#[inline(never)]
fn wake_all(wakers: Vec<Waker>) {
    for w in wakers {
        w.wake();
    }
}

/// Every control message the connection queued (usually none: no call to collect them).
#[inline]
fn drain_transmits(giop: &mut GiopConnection) -> Vec<ControlMessage> {
    match giop.poll_transmit() {
        None => Vec::new(),
        Some(first) => std::iter::once(first)
            .chain(std::iter::from_fn(|| giop.poll_transmit()))
            .collect(),
    }
}

/// The reply to an asynchronous request, polled with [`PendingReply::poll_reply`]. Dropping
/// it before the reply came cancels the request (`CancelRequest`) and frees its id.
#[must_use = "a request whose reply is not awaited is cancelled when this is dropped"]
pub(crate) struct PendingReply {
    conn: Arc<AsyncConnection>,
    request_id: u32,
    /// Its slot in the connection's table.
    token: u32,
    /// The outcome was handed out: nothing to cancel.
    settled: bool,
}

impl PendingReply {
    /// Polls for the reply: once it came, `read` reads it where it lies (the state lock
    /// released), not moved on through the layers of the call (a copy of the reply at
    /// each one, measured); `Ok(None)`: the request was not processed, send it again.
    #[inline]
    pub(crate) fn poll_reply<R>(
        &mut self,
        cx: &mut Context<'_>,
        read: impl FnOnce(&OwnedReply) -> R,
    ) -> Poll<Result<Option<R>, SystemException>> {
        if self.settled {
            // Polled again after it was ready: its slot may be another call's now.
            return Poll::Ready(Err(self.conn.closed()));
        }
        let conn = &self.conn;
        let mut st = match conn.lock() {
            Ok(st) => st,
            Err(e) => {
                self.settled = true;
                return Poll::Ready(Err(e));
            }
        };
        let ended = st.ended;
        // Still waiting: the reader (or the timer) wakes this task.
        let register = |w: &mut Option<Waker>| match w {
            Some(old) if old.will_wake(cx.waker()) => {}
            _ => *w = Some(cx.waker().clone()),
        };
        let Poll::Ready(slot) = st.calls.poll_slot(self.token, ended, register) else {
            return Poll::Pending;
        };
        conn.publish(&st);
        drop(st);
        self.settled = true;
        Poll::Ready(match (&slot, ended) {
            (Some(Slot::Replied(reply)), _) => Ok(Some(read(reply))),
            (Some(Slot::TimedOut), _) => Err(conn.timed_out(Phase::Receive)),
            (Some(Slot::Waiting(_)), Some(Ended::Orderly)) => Ok(None),
            // The connection failed, or the call was settled already (polled again).
            _ => Err(conn.closed()),
        })
    }
}

impl Drop for PendingReply {
    fn drop(&mut self) {
        if !self.settled {
            self.conn.cancel(self.request_id, self.token);
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
    /// Deadlines, each with its call's request id and slot.
    due: BTreeSet<(Instant, u32, u32)>,
    started: bool,
    stopped: bool,
}

impl Timers {
    fn add(&self, conn: &Arc<AsyncConnection>, at: Instant, request_id: u32, token: u32) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        if st.stopped {
            return;
        }
        let earliest = st.due.first().is_none_or(|(t, ..)| at < *t);
        st.due.insert((at, request_id, token));
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
                    Some((t, ..)) if t <= now => {
                        let later = st.due.split_off(&(now, u32::MAX, u32::MAX));
                        break std::mem::replace(&mut st.due, later);
                    }
                    Some((t, ..)) => {
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
        for (_, id, token) in due {
            c.expire(id, token);
        }
    }
}

/// The connection read by a runtime's I/O driver (see [`super::async_reactor`]).
#[cfg(feature = "tokio")]
mod reactor {
    use std::sync::{Arc, Weak};
    use std::task::{Context, Poll, Wake, Waker};

    use super::{drain_transmits, file_replies, AsyncConnection, Ended, Replies, State, Wakes};
    use crate::giop::connection::GiopConnection;

    /// Reads per turn of the state lock (calls polled meanwhile get a turn).
    const READS_PER_TURN: usize = 16;

    /// The waker the driver calls when the socket turns readable.
    pub(super) struct Readable(pub(super) Weak<AsyncConnection>);

    impl Wake for Readable {
        fn wake(self: Arc<Self>) {
            if let Some(conn) = self.0.upgrade() {
                conn.drive();
            }
        }
    }

    /// What one turn of reading found.
    enum Read {
        /// The socket is drained.
        Drained,
        /// There may be more.
        More,
        /// The connection is over.
        Over,
    }

    /// How a turn of [`AsyncConnection::drive`] ended.
    enum Turn {
        /// Drained, and the driver will wake it again.
        Wait,
        /// Reads to do still: another turn (after calls polled meanwhile got the lock).
        More,
        /// The connection is over.
        Over,
        /// The runtime is shutting down.
        Gone,
    }

    impl AsyncConnection {
        /// Reads what arrived until the socket is drained, then registers for more; falls
        /// back to a reader thread when the runtime's driver is gone. All under the state
        /// lock, taken once per turn. Inlined into the driver's wake-up (its caller per
        /// reply).
        #[inline]
        pub(super) fn drive(self: &Arc<Self>) {
            let mut cx = Context::from_waker(&self.reactor_waker);
            let over = loop {
                let Ok(mut guard) = self.state.lock() else {
                    return;
                };
                let State {
                    giop,
                    calls,
                    ended,
                    registration,
                } = &mut *guard;
                let Some(reg) = registration.as_ref() else {
                    return;
                };
                let mut wake = Wakes::default();
                let turn = loop {
                    match reg.fd.poll_read_ready(&mut cx) {
                        Poll::Pending => break Turn::Wait,
                        Poll::Ready(Ok(mut ready)) => {
                            match self.read_ready(giop, calls, ended, &mut wake) {
                                Read::Drained => ready.clear_ready(),
                                Read::More => break Turn::More,
                                Read::Over => break Turn::Over,
                            }
                        }
                        Poll::Ready(Err(_)) => break Turn::Gone,
                    }
                };
                let gone = match turn {
                    Turn::Wait | Turn::More => None,
                    Turn::Over | Turn::Gone => registration.take(),
                };
                self.publish(&guard);
                let transmits = drain_transmits(&mut guard.giop);
                drop(guard);
                drop(gone);
                self.write_controls(&transmits);
                wake.wake();
                match turn {
                    Turn::Wait => return,
                    Turn::More => continue,
                    Turn::Over => break true,
                    Turn::Gone => break false,
                }
            };
            if over {
                self.end(Ended::Failed);
            } else {
                // Its calls go on, read by a thread (which ends them if it cannot start).
                let _ = self.start_reader_thread();
            }
        }

        /// Reads what the socket holds, without blocking, and files the replies.
        #[inline]
        fn read_ready(
            &self,
            giop: &mut GiopConnection,
            calls: &mut Replies<Option<Waker>>,
            ended: &mut Option<Ended>,
            wake: &mut Wakes,
        ) -> Read {
            for _ in 0..READS_PER_TURN {
                // Straight into the connection's receive buffer (no copy).
                let buf = giop.read_buf();
                let asked = buf.len();
                let got = self.reader.read_nonblocking(buf);
                if let Ok(n @ 1..) = got {
                    giop.commit(n);
                }
                return match got {
                    Ok(0) => Read::Over,
                    Ok(_) if !file_replies(giop, calls, ended, wake) => Read::Over,
                    // Less than asked for: the socket was drained (what comes later is a new
                    // edge for the driver), so no read to see `WouldBlock`, as tokio's own
                    // sockets do.
                    Ok(n) if n < asked => Read::Drained,
                    Ok(_) => continue,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Read::Drained,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => Read::Over,
                };
            }
            Read::More
        }
    }
}
