//! Bidirectional GIOP (CORBA 3 §15.8–15.9): calls back over the connection the client
//! opened, for clients behind a firewall or NAT that no server can connect to.
//!
//! - **Client** (`-ORBofferBiDirectionalGIOP 1`, a POA with
//!   [`BidirectionalPolicy::Both`](crate::poa::BidirectionalPolicy)): calls at GIOP 1.2 go
//!   over one connection per server address that carries a `BI_DIR_IIOP` context listing
//!   this ORB's published addresses; requests the server sends back on it are served by
//!   the POAs.
//! - **Server** (`-ORBacceptBiDirectionalGIOP 1`): a request carrying such an offer, to a
//!   POA with BOTH, makes its connection bidirectional; calls to objects published at the
//!   offered addresses then go over it instead of a new connection. Nothing is verified
//!   beyond that (as omniORB, which by default does not check the listen points either).
//!
//! Both ends then run the same `BidirConnection`, read by leader/followers: a call waiting
//! for its reply reads the connection itself when no one else does (the leader), filing
//! the replies of other calls (the followers, woken to take theirs; one of them leads
//! next) and handing each request to a worker, so that a request can call back over the
//! same connection while its own caller waits. With one call in flight there is no thread
//! switch: the caller reads its own reply. When no call waits, the connection's reader
//! thread reads it (so that requests still come in), without blocking: it waits for input
//! with `poll` and gives the connection up to the next caller. A request it reads it runs
//! itself, holding the reading (no thread switch per request either); an idle worker
//! stands by meanwhile and takes the reading over if the request runs longer than a
//! millisecond (a call back that request makes reads its own reply). Requests on such a
//! connection may therefore run concurrently and finish out of order (as in omniORB),
//! unlike on an ordinary connection. When the connection
//! ends, calls waiting on it fail (COMM_FAILURE, completed MAYBE; an orderly
//! CloseConnection makes them resend, which for a callback address means TRANSIENT), and
//! the addresses it carried are no longer routed to it. None of this runs, and nothing is
//! paid on the call path, unless bidirectional GIOP is configured.
//!
//! What a peer can make one connection hold: the message being received (reassembly
//! capped as on any connection), the requests being run (at most 32 workers, `MAX_WORKERS`)
//! and [`MAX_QUEUED_BYTES`] of queued ones; beyond that the reader stops reading, so TCP
//! holds the peer back. The client sends its offer on every GIOP 1.2 request (omniORB
//! sends it on the first; a server takes it from whichever request first reaches a POA
//! with BOTH).
//!
//! A client behind a firewall (its objects published at an address nobody can connect to)
//! and a server that calls it back; `crates/corbina/tests/bidir.rs` runs them with real
//! servants:
//!
//! ```
//! use corbina::config::Endpoint;
//! use corbina::poa::{BidirectionalPolicy, PolicyList};
//! use corbina::{Orb, OrbConfig};
//!
//! // Server: `-ORBacceptBiDirectionalGIOP 1`, its objects in a POA with BOTH.
//! let server = Orb::with_config(OrbConfig { accept_bidir: true, ..OrbConfig::default() });
//! let root = server.root_poa();
//! let both = PolicyList::root().with_bidirectional(BidirectionalPolicy::Both);
//! let _registrars = root.create_poa("registrars", Some(root.the_poa_manager()), both)?;
//!
//! // Client: `-ORBofferBiDirectionalGIOP 1 -ORBendPointNoListen giop:tcp:10.0.0.7:9`, its
//! // callbacks in a POA with BOTH; it opens no listening socket.
//! let client = Orb::init(
//!     ["app", "-ORBofferBiDirectionalGIOP", "1", "-ORBendPointNoListen", "giop:tcp:10.0.0.7:9"]
//!         .map(String::from),
//! )?
//! .0;
//! assert_eq!(client.config().endpoints_no_listen, [Endpoint { host: "10.0.0.7".into(), port: 9 }]);
//! let root = client.root_poa();
//! let _callbacks = root.create_poa("callbacks", Some(root.the_poa_manager()), both)?;
//! # client.destroy();
//! # server.destroy();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::task::Poll;
use std::time::{Duration, Instant};

use crate::cdr::CodeSets;
use crate::client::invoker::{encode_failed, request_failed, Hooks};
pub(crate) use crate::client::replies::Outcome;
use crate::client::replies::{Ended, OwnedReply, Replies, Settled};
use crate::client::{IiopInvoker, Rope};
use crate::error::{Error, Phase};
use crate::giop::connection::{
    bidir_context, bidir_supported, ControlMessage, Event, GiopConnection, RequestError,
    RequestStart,
};
use crate::giop::message::{Body, OwnedBody};
use crate::giop::{
    ListenPoint, RequestHeaderView, ServiceContext, ServiceContextList, TargetAddress, Version,
};
use crate::interceptor::server::Registered;
use crate::object::EncodeArgs;
use crate::server::connection::{self as server_conn, BidirParts, ConnectionShared};
use crate::server::RequestDispatcher;
use crate::transport::{Address, Stream};
use crate::SystemException;

/// Most worker threads one bidirectional connection runs requests on at once; more
/// requests wait in its queue.
pub(crate) const MAX_WORKERS: usize = 32;

/// Bytes of requests a connection's queue holds before its reader stops reading (the peer
/// is then held back by TCP): what a peer can make us hold beyond one message.
pub const MAX_QUEUED_BYTES: usize = 8 << 20;

/// A worker with nothing to do for this long exits.
const WORKER_IDLE_EXIT: Duration = Duration::from_secs(30);

/// How long a request may run on the thread that read it, holding the reading, before the
/// standby worker takes the reading over (what a request that comes meanwhile, while no
/// call waits, may wait for longest).
const STANDBY_TICK: Duration = Duration::from_millis(1);

/// Ticks with no request served after which the standby stops watching (and is woken
/// again by the next request read).
const STANDBY_QUIET_TICKS: u32 = 100;

/// How much one read asks for.
const READ_CHUNK: usize = 64 * 1024;

/// How long the reader thread leaves the connection to callers after it last saw one
/// waiting: what a request that comes when no call waits may wait for longest.
const READER_HANDBACK: std::time::Duration = std::time::Duration::from_millis(1);

/// Longest wait of the reader thread for input before it looks at the connection again
/// (it is woken by input or by the connection's shutdown before that).
const READER_POLL: rustix::event::Timespec = rustix::event::Timespec {
    tv_sec: 1,
    tv_nsec: 0,
};

/// What this ORB offers on its requests, as a client: its published addresses, once a POA
/// with `BidirectionalPolicy::Both` exists (`None` until then).
pub(crate) type OfferSource = Arc<dyn Fn() -> Option<Vec<ListenPoint>> + Send + Sync>;

/// A request copied out of the receive buffer, to run on a worker.
pub(crate) struct IncomingRequest {
    operation: String,
    key: Option<Vec<u8>>,
    /// The request's service contexts (for server request interceptors).
    contexts: Vec<ServiceContext>,
    body: OwnedBody,
    reply: crate::giop::connection::ReplyContext,
}

impl IncomingRequest {
    pub(crate) fn copy(
        header: &RequestHeaderView<'_>,
        key: Option<&[u8]>,
        body: Body<'_>,
        reply: crate::giop::connection::ReplyContext,
    ) -> IncomingRequest {
        IncomingRequest {
            operation: header.operation.to_string(),
            key: key.map(<[u8]>::to_vec),
            contexts: header
                .service_context
                .iter()
                .map(|(context_id, data)| ServiceContext {
                    context_id,
                    context_data: data.to_vec(),
                })
                .collect(),
            body: body.to_owned_body(),
            reply,
        }
    }

    fn held_bytes(&self) -> usize {
        self.operation.len()
            + self.key.as_ref().map_or(0, Vec::len)
            + self
                .contexts
                .iter()
                .map(|c| 8 + c.context_data.len())
                .sum::<usize>()
            + self.body.held_bytes()
    }
}

/// A client's offer that a server connection took: the request that carried it (run first,
/// on a worker) and the addresses to route back over the connection.
pub(crate) struct Offer {
    pub(crate) first: IncomingRequest,
    pub(crate) listen_points: Vec<ListenPoint>,
}

struct State {
    giop: GiopConnection,
    /// Calls waiting for their reply (woken through `replied`).
    waiting: Replies<()>,
    ended: Option<Ended>,
    /// A caller reads the connection (the leader).
    reading: bool,
    /// Callers asleep on `replied` (no notification is made without one).
    followers: usize,
}

impl State {
    /// Whether a follower asleep on `replied` has something to do (its reply came, or the
    /// leader left). The reader thread is not woken when the last call leaves: it looks
    /// again after [`READER_HANDBACK`], so that back-to-back calls pay no wake-up of it.
    fn wake_due(&self) -> bool {
        self.followers > 0
    }
}

/// What a turn of reading the connection came to.
enum Turn {
    /// Read on.
    Again,
    /// A request for this thread to run, holding the reading (its hold's serial).
    Serve(IncomingRequest, u64),
    /// The connection is over.
    Over,
}

/// The read buffer, used by whoever reads the connection (one at a time: the leader, or
/// the reader thread with the state locked).
struct ReadSide {
    buf: Vec<u8>,
    /// Whether a read timeout is set on the connection (a leader with a deadline).
    timeout_set: bool,
}

/// One connection carrying calls both ways (see the [module docs](self)).
pub(crate) struct BidirConnection {
    /// The peer: the address the client connected to, or the first address a client
    /// offered (what errors name).
    peer: Address,
    shared: Arc<ConnectionShared>,
    state: Mutex<State>,
    replied: Condvar,
    /// The connection's read half.
    read_half: Stream,
    read_side: Mutex<ReadSide>,
    /// Held from marshalling a request to the end of its write: requests leave in the
    /// order of their ids (the first carries the CODE_SETS context). It holds the last
    /// request's buffer, for the next one.
    send_order: Mutex<Vec<u8>>,
    dispatcher: Arc<dyn RequestDispatcher>,
    /// Server request interceptors, run on the requests that come in on it.
    interceptors: Option<Arc<Registered>>,
    workers: Workers,
    /// Ropes whose calls go over this connection (detached when it ends).
    routes: Mutex<Vec<Weak<Rope>>>,
    /// The client's offer, sent on its requests; `None` on the server's end.
    offer: Option<OfferSource>,
    /// The offer's BI_DIR_IIOP context, encoded once there is something to offer (the
    /// published address does not change): not rebuilt for every request.
    offer_context: std::sync::OnceLock<ServiceContextList>,
    /// The rope that opened it (client end; its address, compared only), 0 otherwise.
    opened_by: usize,
}

impl std::fmt::Debug for BidirConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BidirConnection")
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

impl BidirConnection {
    #[allow(clippy::too_many_arguments)]
    fn new(
        peer: Address,
        shared: Arc<ConnectionShared>,
        mut giop: GiopConnection,
        read_half: Stream,
        dispatcher: Arc<dyn RequestDispatcher>,
        interceptors: Option<Arc<Registered>>,
        offer: Option<OfferSource>,
        opened_by: Option<&Rope>,
    ) -> Arc<BidirConnection> {
        giop.set_bidirectional(true);
        Arc::new(BidirConnection {
            peer,
            shared,
            state: Mutex::new(State {
                giop,
                waiting: Replies::default(),
                ended: None,
                reading: false,
                followers: 0,
            }),
            replied: Condvar::new(),
            read_half,
            read_side: Mutex::new(ReadSide {
                buf: Vec::new(),
                timeout_set: false,
            }),
            send_order: Mutex::new(Vec::new()),
            dispatcher,
            interceptors,
            workers: Workers::default(),
            routes: Mutex::new(Vec::new()),
            offer,
            offer_context: std::sync::OnceLock::new(),
            opened_by: opened_by.map_or(0, |r| r as *const Rope as usize),
        })
    }

    /// The client's end: a fresh connection to `rope`'s address that will carry this
    /// ORB's offer, with its reader thread started.
    pub(crate) fn open_client(
        rope: &Arc<Rope>,
        stream: Stream,
        giop: GiopConnection,
        dispatcher: Arc<dyn RequestDispatcher>,
        interceptors: Option<Arc<Registered>>,
        offer: OfferSource,
    ) -> std::io::Result<Arc<BidirConnection>> {
        let read_half = stream.clone();
        let shared = ConnectionShared::for_stream(stream, &giop);
        let peer = rope.address().clone();
        let conn = BidirConnection::new(
            peer,
            shared,
            giop,
            read_half,
            dispatcher,
            interceptors,
            Some(offer),
            Some(rope),
        );
        // The rope routes to it once it is returned (`Rope::bidir_or_open`).
        conn.add_route(rope);
        let reader = conn.clone();
        let spawned = std::thread::Builder::new()
            .name("corbina-bidir".into())
            .spawn(move || reader.run_reader());
        if let Err(e) = spawned {
            conn.end(Ended::Failed);
            return Err(e);
        }
        Ok(conn)
    }

    /// Routes `rope`'s calls over this connection.
    fn route(self: &Arc<Self>, rope: &Arc<Rope>) {
        rope.attach_bidir(self.clone());
        self.add_route(rope);
    }

    /// Remembers that `rope` routes here, to detach it when the connection ends.
    fn add_route(&self, rope: &Arc<Rope>) {
        if let Ok(mut r) = self.routes.lock() {
            r.retain(|w| w.strong_count() > 0);
            r.push(Arc::downgrade(rope));
        }
    }

    /// Whether calls can still go out on it.
    pub(crate) fn is_open(&self) -> bool {
        self.lock().is_ok_and(|st| st.ended.is_none())
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

    #[cold]
    fn closed(&self) -> SystemException {
        Error::ConnectionClosed {
            endpoint: self.peer.clone(),
        }
        .into()
    }

    /// Sends a request of `invoker`'s and, for a twoway, waits for its reply (until
    /// `deadline`). When `hooks` intercept, their starting point runs first, with no lock
    /// held (an interceptor may make calls of its own), on an id reserved for the request.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn call<'a, H: Hooks>(
        self: &Arc<Self>,
        version: Version,
        code_sets: CodeSets,
        target: &TargetAddress,
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        response_expected: bool,
        deadline: Option<Instant>,
        hooks: &mut H,
        invoker: &IiopInvoker,
    ) -> Result<Outcome, SystemException> {
        let mut contexts = std::borrow::Cow::Borrowed(self.offer_contexts(version));
        if !self.shared.outgoing_started() {
            // Closing: nothing was sent.
            return Ok(Outcome::Resend);
        }
        let _busy = OutgoingGuard(&self.shared);
        let reserved = if H::INTERCEPTS {
            let id = self.lock()?.giop.reserve_request_id();
            let added = hooks.begin(invoker, id, version)?;
            contexts.to_mut().0.extend(added.0.iter().cloned());
            hooks.sent(added);
            Some(id)
        } else {
            None
        };
        self.send(
            version,
            code_sets,
            target,
            operation,
            encode,
            response_expected,
            deadline,
            reserved,
            &contexts,
        )
    }

    /// [`BidirConnection::call`] past its hooks (one instance for every kind of hooks: the
    /// request functions it calls keep a single call site here).
    #[allow(clippy::too_many_arguments)]
    fn send<'a>(
        self: &Arc<Self>,
        version: Version,
        code_sets: CodeSets,
        target: &TargetAddress,
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        response_expected: bool,
        deadline: Option<Instant>,
        reserved: Option<u32>,
        contexts: &ServiceContextList,
    ) -> Result<Outcome, SystemException> {
        let mut order = self.send_order.lock().map_err(|_| self.poisoned())?;
        let mut st = self.lock()?;
        if st.ended.is_some() {
            return Ok(Outcome::Resend);
        }
        let start = RequestStart {
            contexts,
            request_id: reserved,
            ..RequestStart::new(version, code_sets, target, operation, response_expected)
        };
        let mut req = st
            .giop
            .start_request(std::mem::take(&mut *order), &start)
            .map_err(encode_failed)?;
        let request_id = req.request_id();
        if let Err(e) = encode(req.body()) {
            req.abandon();
            return Err(request_failed(RequestError::Arguments(e)));
        }
        let w = st.giop.finish_request(req).map_err(encode_failed)?;
        // The call's slot, its index given to the connection's in-flight entry: the reply
        // comes back with it.
        let mut token = 0;
        if response_expected {
            let Some(t) = st.waiting.expect(request_id, ()) else {
                st.giop.abandon(request_id);
                return Err(self.closed());
            };
            token = t;
            st.giop.set_reply_token(request_id, token);
        }
        drop(st);
        let written = self.shared.write(None, &w);
        *order = crate::transport::recycle(w.into_buffer());
        drop(order);
        if written.is_err() {
            // Not written whole: the peer cannot have processed it. The connection is
            // broken for everyone.
            if let Ok(mut st) = self.lock() {
                if response_expected {
                    st.waiting.forget(token);
                }
                st.giop.abandon(request_id);
            }
            self.end(Ended::Failed);
            return Ok(Outcome::Resend);
        }
        if !response_expected {
            return Ok(Outcome::Sent);
        }
        self.await_reply(request_id, token, deadline)
    }

    /// Waits for the reply to `request_id`: reads the connection itself while no one else
    /// does (leading), else sleeps until its reply is filed or the leader leaves.
    fn await_reply(
        self: &Arc<Self>,
        request_id: u32,
        token: u32,
        deadline: Option<Instant>,
    ) -> Result<Outcome, SystemException> {
        let mut st = self.lock()?;
        loop {
            let ended = st.ended;
            if let Poll::Ready(settled) = st.waiting.poll(token, ended, |()| {}) {
                self.leave(st);
                return match settled {
                    Settled::Reply(reply) => Ok(Outcome::Reply(reply)),
                    Settled::Ended(Ended::Orderly) => Ok(Outcome::Resend),
                    Settled::Ended(Ended::Failed) | Settled::TimedOut | Settled::Gone => {
                        Err(self.closed())
                    }
                };
            }
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left.is_some_and(|l| l.is_zero()) {
                // Given up: the peer is told (CancelRequest) and a late reply is dropped
                // by the connection.
                st.waiting.forget(token);
                st.giop.cancel(request_id);
                let transmits = drain_transmits(&mut st.giop);
                self.leave(st);
                self.write_controls(&transmits);
                return Err(Error::Timeout {
                    endpoint: self.peer.clone(),
                    phase: Phase::Receive,
                }
                .into());
            }
            if !st.reading {
                st.reading = true;
                drop(st);
                let open = self.lead(left);
                st = self.lock()?;
                st.reading = false;
                if !open {
                    drop(st);
                    self.end(Ended::Failed);
                    st = self.lock()?;
                }
                continue;
            }
            st.followers += 1;
            let woken = match left {
                None => self.replied.wait(st).map_err(|_| self.poisoned()),
                Some(left) => self
                    .replied
                    .wait_timeout(st, left)
                    .map(|(st, _)| st)
                    .map_err(|_| self.poisoned()),
            };
            st = woken?;
            st.followers -= 1;
        }
    }

    /// A call stops waiting: whoever is asleep with something to do is woken (a follower
    /// to lead, or the reader thread once no call waits).
    fn leave(&self, st: MutexGuard<'_, State>) {
        let wake = st.wake_due();
        drop(st);
        if wake {
            self.replied.notify_all();
        }
    }

    /// One read by the leader (blocking, for at most `left`), and what it brought handled;
    /// false when the connection is over (end of stream, a read error).
    fn lead(self: &Arc<Self>, left: Option<std::time::Duration>) -> bool {
        let Ok(mut side) = self.read_side.lock() else {
            return false;
        };
        let side = &mut *side;
        if left.is_some() || side.timeout_set {
            side.timeout_set = left.is_some();
            if self.read_half.set_read_timeout(left).is_err() {
                return false;
            }
        }
        if side.buf.len() < READ_CHUNK {
            side.buf.resize(READ_CHUNK, 0);
        }
        let n = loop {
            match crate::transport::Connection::read(&*self.read_half, &mut side.buf) {
                Ok(0) => return false,
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // The deadline: the caller gives up on its next turn.
                Err(e) if crate::client::invoker::is_timeout(&e) => return true,
                Err(_) => return false,
            }
        };
        match self.state.lock() {
            Ok(mut st) => st.giop.push(&side.buf[..n]),
            Err(_) => return false,
        }
        !matches!(self.take_in(false), Turn::Over)
    }

    /// The BI_DIR_IIOP context for a request of `version` (client end, once there is
    /// something to offer), encoded the first time there is.
    fn offer_contexts(&self, version: Version) -> &ServiceContextList {
        static NONE: ServiceContextList = ServiceContextList(Vec::new());
        if !bidir_supported(version) {
            return &NONE;
        }
        if let Some(encoded) = self.offer_context.get() {
            return encoded;
        }
        let points = self.offer.as_ref().and_then(|offer| offer());
        match points.map(|p| bidir_context(version, &p, crate::cdr::ByteOrder::NATIVE)) {
            Some(Ok(Some(sc))) => self
                .offer_context
                .get_or_init(|| ServiceContextList(vec![sc])),
            _ => &NONE,
        }
    }

    /// The connection's own thread (the client end's reader, the server end's connection
    /// thread): one of its workers, which starts by reading the connection, and returns
    /// when the connection has ended.
    fn run_reader(self: Arc<Self>) {
        if let Ok(mut w) = self.workers.state.lock() {
            w.read_job = true;
        }
        self.workers.run(&self, true);
    }

    /// The reading of the connection while no call waits for a reply (see
    /// [`BidirConnection::read_idle`]), by one worker at a time. A request read is run on
    /// this thread, which holds the reading meanwhile (no thread switch per request) and
    /// reads on after it unless the standby worker took the reading over (the request ran
    /// longer than [`STANDBY_TICK`]); a call the request makes over this connection reads
    /// its own reply. Returns when the reading was taken over or the connection ended.
    fn read_turn(self: &Arc<Self>, out: &mut Vec<u8>) {
        // What the connection holds already (the server end's first bytes).
        let mut turn = self.take_in(true);
        loop {
            match turn {
                Turn::Serve(r, serial) => {
                    self.serve(r, out);
                    if !self.workers.release_reading(serial) {
                        return;
                    }
                    turn = Turn::Again;
                }
                Turn::Over => {
                    self.end(Ended::Failed);
                    return;
                }
                Turn::Again => turn = self.read_idle(),
            }
        }
    }

    /// One step of the reading while no call waits: what has arrived, read without blocking
    /// (the state locked: no caller starts reading meanwhile), else a wait for input.
    fn read_idle(self: &Arc<Self>) -> Turn {
        let Ok(mut st) = self.state.lock() else {
            return Turn::Over;
        };
        while st.ended.is_none() && (st.reading || st.waiting.len() > 0) {
            // Callers read their replies themselves.
            st = match self.replied.wait_timeout(st, READER_HANDBACK) {
                Ok((st, _)) => st,
                Err(_) => return Turn::Over,
            };
        }
        if st.ended.is_some() {
            return Turn::Over;
        }
        let Ok(mut side) = self.read_side.lock() else {
            return Turn::Over;
        };
        if side.buf.len() < READ_CHUNK {
            side.buf.resize(READ_CHUNK, 0);
        }
        match self.read_half.read_nonblocking(&mut side.buf) {
            Ok(0) => Turn::Over,
            Ok(n) => {
                st.giop.push(&side.buf[..n]);
                drop(side);
                drop(st);
                self.take_in(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                drop(side);
                drop(st);
                let mut fds = [rustix::event::PollFd::from_borrowed_fd(
                    self.read_half.poll_fd(),
                    rustix::event::PollFlags::IN,
                )];
                match rustix::event::poll(&mut fds, Some(&READER_POLL)) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => Turn::Again,
                    Err(_) => Turn::Over,
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Turn::Again,
            Err(_) => Turn::Over,
        }
    }

    /// Handles every message received whole: replies filed, requests handed to the
    /// workers (with `keep`, by the reader of an idle connection, the first is returned to
    /// run on this thread, which holds the reading meanwhile).
    fn take_in(self: &Arc<Self>, keep: bool) -> Turn {
        let Ok(mut guard) = self.state.lock() else {
            return Turn::Over;
        };
        let mut requests = Vec::new();
        let mut locates = Vec::new();
        let mut woke = false;
        let mut ended = guard.ended;
        let State { giop, waiting, .. } = &mut *guard;
        while ended.is_none() {
            match giop.poll_event() {
                Ok(None) => break,
                Ok(Some(Event::Reply {
                    header,
                    body,
                    code_sets,
                })) => {
                    // The connection matched it to a request in flight; a call that gave
                    // up has no slot any more.
                    let reply = OwnedReply::copy(header, body, code_sets);
                    woke |= waiting.file(giop.reply_token(), reply).is_some();
                }
                Ok(Some(Event::Request {
                    header,
                    body,
                    reply,
                })) => {
                    let key = header.target.resolve_key().ok().flatten();
                    requests.push(IncomingRequest::copy(&header, key.as_deref(), body, reply));
                }
                Ok(Some(Event::LocateRequest { header, reply })) => {
                    let key = header.target.resolve_key().ok().flatten();
                    locates.push((key.map(|k| k.0), reply));
                }
                // No LocateRequest is sent on this connection; requests on it run
                // concurrently anyway, so a cancel changes nothing.
                Ok(Some(
                    Event::LocateReply { .. }
                    | Event::CancelRequest { .. }
                    | Event::Fragment { .. },
                )) => {}
                Ok(Some(Event::CloseConnection)) => ended = Some(Ended::Orderly),
                Ok(Some(Event::MessageError)) | Err(_) => ended = Some(Ended::Failed),
            }
        }
        let transmits = drain_transmits(giop);
        if ended.is_some() && guard.ended.is_none() {
            guard.ended = ended;
            woke = true;
        }
        let wake = woke && guard.wake_due();
        drop(guard);
        if wake {
            self.replied.notify_all();
        }
        self.write_controls(&transmits);
        let mut requests = requests.into_iter();
        let kept = match requests.len() {
            0 => None,
            _ if keep && ended.is_none() => self
                .workers
                .hold_reading(self)
                .and_then(|serial| Some((requests.next()?, serial))),
            _ => None,
        };
        for r in requests {
            self.workers.submit(self, r);
        }
        let mut out = Vec::new();
        for (key, reply) in locates {
            let outcome = match &key {
                Some(k) => self.dispatcher.locate(k),
                None => crate::poa::LocateOutcome::Unknown,
            };
            let _ = server_conn::write_locate_reply(&self.shared, &mut out, &reply, outcome);
        }
        match (ended, kept) {
            (Some(_), _) => Turn::Over,
            (None, Some((r, serial))) => Turn::Serve(r, serial),
            (None, None) => Turn::Again,
        }
    }

    /// Runs a request that came in on it, and writes its reply.
    fn serve(&self, r: IncomingRequest, out: &mut Vec<u8>) {
        let args = r.body.body().reader(r.reply.code_sets);
        if let Some(pi) = &self.interceptors {
            server_conn::intercepted::serve_intercepted(
                &self.shared,
                &*self.dispatcher,
                out,
                pi,
                &r.operation,
                server_conn::intercepted::ReceivedContexts::Copied(r.contexts),
                r.key.as_deref(),
                args,
                r.reply,
            );
            return;
        }
        server_conn::serve_request(
            &self.shared,
            &*self.dispatcher,
            out,
            &r.operation,
            r.key.as_deref(),
            args,
            r.reply,
        );
    }

    fn write_controls(&self, transmits: &[ControlMessage]) {
        for m in transmits {
            if self.shared.write_control(m.as_bytes()).is_err() {
                break;
            }
        }
    }

    /// The connection is over: calls waiting on it are woken, the addresses it carried
    /// are no longer routed to it, its socket is closed and its workers stop.
    fn end(&self, how: Ended) {
        if let Ok(mut st) = self.state.lock() {
            st.ended.get_or_insert(how);
            st.giop.end_of_stream();
        }
        self.replied.notify_all();
        let routes = self
            .routes
            .lock()
            .map(|mut r| std::mem::take(&mut *r))
            .unwrap_or_default();
        for rope in routes.iter().filter_map(Weak::upgrade) {
            rope.detach_bidir(self);
        }
        self.shared.shut_down();
        self.workers.stop();
    }

    /// Closes it now if `rope` opened it (the client ORB is going away).
    pub(crate) fn close_if_opened_by(&self, rope: &Rope) {
        if self.opened_by == rope as *const Rope as usize {
            self.shared.shut_down();
        }
    }
}

/// Every control message the connection queued.
fn drain_transmits(giop: &mut GiopConnection) -> Vec<ControlMessage> {
    std::iter::from_fn(|| giop.poll_transmit()).collect()
}

/// Counts an outgoing call as keeping the connection busy, for its lifetime.
struct OutgoingGuard<'a>(&'a ConnectionShared);

impl Drop for OutgoingGuard<'_> {
    fn drop(&mut self) {
        self.0.outgoing_done();
    }
}

/// The server's end: a connection whose client's offer was taken. This thread goes on as
/// its reader; `offer.first` runs on a worker.
pub(crate) fn serve_accepted(parts: BidirParts, read_half: Stream, offer: Offer) {
    let BidirParts {
        giop,
        shared,
        dispatcher,
        server,
    } = parts;
    // Where a listen point is reached over TCP.
    let address = |p: &ListenPoint| Address::Tcp {
        host: p.host.clone(),
        port: p.port,
    };
    let peer = offer.listen_points.first().map_or_else(
        || Address::Tcp {
            host: String::new(),
            port: 0,
        },
        address,
    );
    let interceptors = server.config.initializers.server();
    let conn = BidirConnection::new(
        peer,
        shared.clone(),
        giop,
        read_half,
        dispatcher,
        interceptors,
        None,
        None,
    );
    if let Some(client) = server.bidir_client() {
        for p in &offer.listen_points {
            conn.route(&client.rope_to(address(p)));
        }
    }
    conn.workers.submit(&conn, offer.first);
    conn.clone().run_reader();
    server_conn::finish_connection(&shared, &server);
}

/// The threads a bidirectional connection runs requests on: started on demand, up to
/// [`MAX_WORKERS`] besides its own thread; a request that finds none idle starts one, so
/// that a request waiting for a call back never holds up the requests that call makes.
/// They take turns reading the connection while no call waits (leader/followers, with a
/// deferred handoff): the reader runs a request it read itself, holding the reading, and
/// one idle worker stands by meanwhile, waking every [`STANDBY_TICK`] to take the reading
/// over from a request that runs that long.
#[derive(Default)]
struct Workers {
    state: Mutex<WorkState>,
    work: Condvar,
    room: Condvar,
}

#[derive(Default)]
struct WorkState {
    queue: VecDeque<IncomingRequest>,
    queued_bytes: usize,
    /// The reading of the connection waits for a worker to take it.
    read_job: bool,
    /// The reading is held by the thread running the request it read (that hold's serial).
    held: Option<u64>,
    /// The last hold's serial.
    serial: u64,
    /// An idle worker stands by for a held reading.
    standby: bool,
    idle: usize,
    /// Workers started (the connection's own thread not counted).
    threads: usize,
    stopped: bool,
}

impl WorkState {
    /// Jobs waiting for a worker.
    fn wanted(&self) -> usize {
        self.queue.len() + usize::from(self.read_job)
    }

    /// The next job, if any.
    fn job(&mut self, room: &Condvar) -> Option<Job> {
        // The reading first: what every waiting request's progress may depend on.
        if std::mem::take(&mut self.read_job) {
            return Some(Job::Read);
        }
        let r = self.queue.pop_front()?;
        self.queued_bytes -= r.held_bytes();
        room.notify_all();
        Some(Job::Serve(r))
    }
}

/// What a worker does next.
enum Job {
    Serve(IncomingRequest),
    Read,
}

impl Workers {
    /// Queues a request, waiting while the queue is full (the reader stops reading).
    fn submit(&self, conn: &Arc<BidirConnection>, request: IncomingRequest) {
        let held = request.held_bytes();
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        while st.queued_bytes > 0 && st.queued_bytes + held > MAX_QUEUED_BYTES && !st.stopped {
            st = match self.room.wait(st) {
                Ok(st) => st,
                Err(_) => return,
            };
        }
        if st.stopped {
            return;
        }
        st.queue.push_back(request);
        st.queued_bytes += held;
        self.staff(conn, st);
    }

    /// The reader keeps a request to run itself and holds the reading meanwhile, with a
    /// worker standing by: the hold's serial (`None`: the connection is stopping).
    fn hold_reading(&self, conn: &Arc<BidirConnection>) -> Option<u64> {
        let mut st = self.state.lock().ok()?;
        if st.stopped {
            return None;
        }
        st.serial += 1;
        let serial = st.serial;
        st.held = Some(serial);
        self.ensure_standby(conn, st);
        Some(serial)
    }

    /// The request run under hold `serial` is done: true if its thread still holds the
    /// reading (and reads on), false if the standby took it over.
    fn release_reading(&self, serial: u64) -> bool {
        let Ok(mut st) = self.state.lock() else {
            return false;
        };
        if st.held != Some(serial) || st.stopped {
            return false;
        }
        st.held = None;
        true
    }

    /// Wakes an idle worker to stand by for a held reading, or starts one, unless one
    /// stands by already.
    fn ensure_standby(&self, conn: &Arc<BidirConnection>, mut st: MutexGuard<'_, WorkState>) {
        if st.standby || st.held.is_none() || st.stopped {
            return;
        }
        if st.idle > st.wanted() {
            drop(st);
            self.work.notify_one();
            return;
        }
        if st.threads >= MAX_WORKERS {
            return;
        }
        st.threads += 1;
        drop(st);
        self.spawn(conn);
    }

    /// Wakes an idle worker for a new job, or starts one if every idle one has a job.
    fn staff(&self, conn: &Arc<BidirConnection>, mut st: MutexGuard<'_, WorkState>) {
        if st.idle >= st.wanted() || st.threads >= MAX_WORKERS {
            drop(st);
            self.work.notify_one();
            return;
        }
        st.threads += 1;
        drop(st);
        self.spawn(conn);
    }

    /// Starts a worker, counted in `threads` already.
    fn spawn(&self, conn: &Arc<BidirConnection>) {
        let c = conn.clone();
        let spawned = std::thread::Builder::new()
            .name("corbina-bidir-worker".into())
            .spawn(move || c.workers.run(&c, false));
        if spawned.is_err() {
            if let Ok(mut st) = self.state.lock() {
                st.threads -= 1;
            }
            // An idle worker, if any, takes it later.
            self.work.notify_one();
        }
    }

    /// A worker's life (`home`: the connection's own thread, which stays until the
    /// connection ends).
    fn run(&self, conn: &Arc<BidirConnection>, home: bool) {
        let mut out = Vec::new();
        while let Some(job) = self.next(conn, home) {
            match job {
                Job::Serve(r) => conn.serve(r, &mut out),
                Job::Read => conn.read_turn(&mut out),
            }
        }
    }

    /// The next job, or `None` when this worker is to exit. An idle worker stands by for a
    /// held reading when none does.
    fn next(&self, conn: &Arc<BidirConnection>, home: bool) -> Option<Job> {
        let mut st = self.state.lock().ok()?;
        let mut standing_by = false;
        let mut quiet = 0;
        loop {
            if let Some(job) = st.job(&self.room) {
                if standing_by {
                    st.standby = false;
                }
                // A held reading keeps a worker standing by.
                self.ensure_standby(conn, st);
                return Some(job);
            }
            if st.stopped {
                if !home {
                    st.threads -= 1;
                }
                return None;
            }
            if !standing_by && !st.standby && st.held.is_some() {
                standing_by = true;
                st.standby = true;
                quiet = 0;
            }
            st.idle += 1;
            if standing_by {
                let (seen, serial) = (st.held, st.serial);
                st = self.work.wait_timeout(st, STANDBY_TICK).ok()?.0;
                st.idle -= 1;
                if st.wanted() > 0 || st.stopped {
                    continue;
                }
                if seen.is_some() && st.held == seen {
                    // The request has run for a tick at least: the reading is taken over.
                    st.held = None;
                    st.standby = false;
                    return Some(Job::Read);
                }
                quiet = if st.held.is_none() && st.serial == serial {
                    quiet + 1
                } else {
                    0
                };
                if quiet >= STANDBY_QUIET_TICKS {
                    standing_by = false;
                    st.standby = false;
                }
                continue;
            }
            let (next, timeout) = self.work.wait_timeout(st, WORKER_IDLE_EXIT).ok()?;
            st = next;
            st.idle -= 1;
            if timeout.timed_out() && st.wanted() == 0 && st.held.is_none() && !home {
                st.threads -= 1;
                return None;
            }
        }
    }

    fn stop(&self) {
        if let Ok(mut st) = self.state.lock() {
            st.stopped = true;
            st.read_job = false;
            st.held = None;
            st.queue.clear();
            st.queued_bytes = 0;
        }
        self.work.notify_all();
        self.room.notify_all();
    }
}
