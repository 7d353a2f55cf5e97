//! The server side of IIOP: listening endpoints, the connections (a thread each, or a
//! bounded pool of threads: [`crate::config::ThreadModel`]), and the idle connection
//! scavenger. Requests are handed to a [`RequestDispatcher`] (the POA).
//!
//! # Semantics (both thread models)
//!
//! - A malformed message (bad magic or version, unknown type, over `max_message_size`,
//!   undecodable) is answered with MessageError and that connection is closed; other
//!   connections are not affected.
//! - At most `max_server_connections` connections are served; one more is answered with
//!   CloseConnection and closed (the client sees TRANSIENT once its resends are used up).
//! - CancelRequest is accepted and ignored (requests on a connection run in order);
//!   LocateRequest is answered OBJECT_HERE / UNKNOWN_OBJECT / OBJECT_FORWARD(_PERM).
//! - A connection is closed in order — CloseConnection, never in the middle of a request:
//!   a request already being processed gets its reply first; one read after the close is
//!   not processed (the client resends it elsewhere). The scavenger closes connections idle
//!   for two consecutive scans; [`Server::shutdown`] closes them all.

mod budget;
pub(crate) mod connection;
mod pool;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread;
use std::time::{Duration, Instant};

use connection::ConnectionShared;

use crate::client::ClientContext;
use crate::config::{OrbConfig, ThreadModel};
use crate::poa::{DispatchError, LocateOutcome};
use crate::servant::ServerRequest;
use crate::transport::shm::ShmEndpoint;
use crate::transport::tcp::TcpEndpoint;
use crate::transport::tls::TlsEndpoint;
use crate::transport::unix::UnixEndpoint;
use crate::transport::{BoundEndpoint, Connection, ConnectionOptions, Listener, TransportKind};

/// The authenticated identity of the client whose request is being served: its TLS
/// certificate chain, as the handshake verified it. See [`peer_identity`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerIdentity {
    chain: Vec<Vec<u8>>,
}

impl PeerIdentity {
    /// The certificate chain, DER-encoded, the client's own certificate first (parse it
    /// with an X.509 crate for the subject and extensions).
    pub fn certificate_chain(&self) -> &[Vec<u8>] {
        &self.chain
    }

    /// The client's own certificate (DER).
    pub fn certificate(&self) -> &[u8] {
        self.chain.first().map_or(&[], Vec::as_slice)
    }
}

thread_local! {
    static PEER: std::cell::RefCell<Option<Arc<PeerIdentity>>> =
        const { std::cell::RefCell::new(None) };
}

/// During an upcall: the authenticated identity of the client that sent the request (its
/// certificate chain, over TLS with mutual authentication, `-ORBsslVerifyMode peer`);
/// `None` outside an upcall, over plain TCP and local transports, and for a TLS client
/// that presented no certificate.
///
/// ```no_run
/// // In a servant method:
/// if let Some(peer) = corbina::server::peer_identity() {
///     let der = peer.certificate(); // the client's certificate
///     # let _ = der;
/// }
/// ```
pub fn peer_identity() -> Option<Arc<PeerIdentity>> {
    PEER.with(|p| p.borrow().clone())
}

/// Sets [`peer_identity`] for the upcall in progress on this thread (and restores the
/// outer one after it: upcalls nest through collocated calls).
pub(crate) struct PeerScope(Option<Arc<PeerIdentity>>);

impl PeerScope {
    pub(crate) fn enter(peer: &Arc<PeerIdentity>) -> PeerScope {
        PeerScope(PEER.with(|p| p.replace(Some(peer.clone()))))
    }
}

impl Drop for PeerScope {
    fn drop(&mut self) {
        let outer = self.0.take();
        PEER.with(|p| *p.borrow_mut() = outer);
    }
}

/// Where requests go once read off a connection: the ORB's object adapters.
pub trait RequestDispatcher: Send + Sync {
    /// Demultiplexes `object_key` and runs the request (the POA's job).
    fn dispatch(
        &self,
        object_key: &[u8],
        request: &mut ServerRequest<'_, '_>,
    ) -> Result<(), DispatchError>;

    /// Answers a LocateRequest without running anything.
    fn locate(&self, object_key: &[u8]) -> LocateOutcome;

    /// Whether a bidirectional GIOP offer on a request to `object_key` may be taken (its
    /// POA has `BidirectionalPolicy::Both`). Default: never.
    fn accepts_bidir(&self, _object_key: &[u8]) -> bool {
        false
    }
}

/// State shared by a server's listener and connection threads.
pub(crate) struct ServerShared {
    pub(crate) config: OrbConfig,
    /// Live connections; `stopping` is set under this lock too, so a connection registered
    /// while the server shuts down is either seen by the shutdown or sees the flag itself.
    connections: Mutex<Vec<Weak<ConnectionShared>>>,
    open: AtomicUsize,
    stopping: AtomicBool,
    /// Accept threads still running (shutdown waits for them, so that the listening
    /// sockets are closed — and connects refused — when it returns).
    accepting: AtomicUsize,
    /// Wakes the scavenger when the server stops.
    stop_signal: Condvar,
    stop_lock: Mutex<()>,
    /// Where calls back over bidirectional connections are routed (the ORB's client side),
    /// when `-ORBacceptBiDirectionalGIOP` is on.
    bidir_client: Option<Arc<ClientContext>>,
    /// Memory all connections may hold in incomplete messages (`-ORBmaxIncompleteBytes`).
    receive_budget: Arc<budget::ReceiveBudget>,
}

impl ServerShared {
    /// Registers a new connection; false if the server is stopping (close it).
    fn register(&self, c: &Arc<ConnectionShared>) -> bool {
        let Ok(mut v) = self.connections.lock() else {
            return false;
        };
        v.retain(|w| w.strong_count() > 0);
        v.push(Arc::downgrade(c));
        !self.stopping.load(Ordering::Acquire)
    }

    fn unregister(&self, c: &Arc<ConnectionShared>) {
        if let Ok(mut v) = self.connections.lock() {
            v.retain(|w| w.strong_count() > 0 && !std::ptr::eq(w.as_ptr(), Arc::as_ptr(c)));
        }
        self.connection_ended();
    }

    /// One accepted connection is gone (counted against `max_server_connections`).
    fn connection_ended(&self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
    }

    fn live(&self) -> Vec<Arc<ConnectionShared>> {
        self.connections
            .lock()
            .map(|v| v.iter().filter_map(Weak::upgrade).collect())
            .unwrap_or_default()
    }

    fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// The client context bidirectional offers are routed into, if they are accepted.
    pub(crate) fn bidir_client(&self) -> Option<&Arc<ClientContext>> {
        self.bidir_client.as_ref()
    }
}

/// A running IIOP server: bound endpoints and their accept threads.
pub struct Server {
    shared: Arc<ServerShared>,
    addresses: Vec<SocketAddr>,
    bound: Vec<BoundEndpoint>,
    pool: Option<Arc<pool::Pool>>,
    /// The TLS endpoints' configuration, if there are any.
    tls: Option<crate::transport::tls::ServerTls>,
}

impl Server {
    /// Binds every endpoint in `config` (or `0.0.0.0:0` when there is none) and starts
    /// accepting connections, each served by its own thread or, with
    /// [`ThreadModel::Pool`], by a pool of threads.
    pub fn start(
        config: &OrbConfig,
        dispatcher: Arc<dyn RequestDispatcher>,
    ) -> std::io::Result<Server> {
        Server::start_with_client(config, dispatcher, None)
    }

    /// [`Server::start`] for an ORB whose client side is `client`: with
    /// `-ORBacceptBiDirectionalGIOP 1`, the addresses a client offers on a bidirectional
    /// connection are routed over it in `client`.
    pub(crate) fn start_with_client(
        config: &OrbConfig,
        dispatcher: Arc<dyn RequestDispatcher>,
        client: Option<Arc<ClientContext>>,
    ) -> std::io::Result<Server> {
        let bidir_client = client.filter(|_| config.accept_bidir);
        let shared = Arc::new(ServerShared {
            config: config.clone(),
            connections: Mutex::new(Vec::new()),
            open: AtomicUsize::new(0),
            stopping: AtomicBool::new(false),
            accepting: AtomicUsize::new(0),
            stop_signal: Condvar::new(),
            stop_lock: Mutex::new(()),
            bidir_client,
            receive_budget: budget::ReceiveBudget::new(
                config.max_incomplete_bytes,
                budget_wait(config.thread_model),
            ),
        });
        let endpoints = if config.endpoints.is_empty()
            && config.ssl_endpoints.is_empty()
            && config.local_endpoints.is_empty()
            && config.endpoints_no_listen.is_empty()
        {
            vec![crate::config::Endpoint {
                host: "0.0.0.0".into(),
                port: 0,
            }]
        } else {
            config.endpoints.clone()
        };
        let options = ConnectionOptions {
            socket_buffer_size: config.socket_buffer_size,
            tls_client: None,
        };
        let mut listeners: Vec<Box<dyn Listener>> = Vec::new();
        for ep in &endpoints {
            listeners.push(Box::new(TcpEndpoint::bind(
                &ep.host,
                ep.port,
                options.clone(),
            )?));
        }
        let mut tls_config = None;
        if !config.ssl_endpoints.is_empty() {
            let tls: crate::transport::tls::ServerTls =
                crate::transport::tls::server_config(&config.ssl)
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?
                    .into();
            tls_config = Some(tls.clone());
            for ep in &config.ssl_endpoints {
                listeners.push(Box::new(TlsEndpoint::bind(
                    &ep.host,
                    ep.port,
                    options.clone(),
                    tls.clone(),
                    config.ssl.accept_timeout,
                )?));
            }
        }
        for ep in &config.local_endpoints {
            let path = if ep.path.as_os_str().is_empty() {
                made_up_socket_path()
            } else {
                ep.path.clone()
            };
            listeners.push(match ep.kind {
                TransportKind::Shm => Box::new(ShmEndpoint::bind(&path)?),
                _ => Box::new(UnixEndpoint::bind(&path, options.clone())?),
            });
            if let Some(mode) = config.socket_permissions {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))?;
            }
        }
        let bound: Vec<BoundEndpoint> = listeners.iter().map(|l| l.bound()).collect();
        let addresses = bound
            .iter()
            .filter_map(|b| match b {
                BoundEndpoint::Tcp(a) => Some(*a),
                _ => None,
            })
            .collect();
        let pool = match config.thread_model {
            ThreadModel::Pool(n) => Some(pool::Pool::start(n.max(1))?),
            ThreadModel::ThreadPerConnection => None,
        };
        for (i, listener) in listeners.into_iter().enumerate() {
            let shared = shared.clone();
            let dispatcher = dispatcher.clone();
            let pool = pool.clone();
            let stop_on_error = shared.clone();
            shared.accepting.fetch_add(1, Ordering::AcqRel);
            let spawned = thread::Builder::new()
                .name(format!("corbina-accept-{}", i + 1))
                .spawn(move || {
                    accept_loop(listener, dispatcher, &shared, pool);
                    shared.accepting.fetch_sub(1, Ordering::AcqRel);
                });
            if let Err(e) = spawned {
                stop_on_error.accepting.fetch_sub(1, Ordering::AcqRel);
                return Err(e);
            }
        }
        if let Some(period) = config.idle_timeout {
            let s = shared.clone();
            thread::Builder::new()
                .name("corbina-scavenger".into())
                .spawn(move || scavenger(&s, period))?;
        }
        Ok(Server {
            shared,
            addresses,
            bound,
            pool,
            tls: tls_config,
        })
    }

    /// The TCP addresses actually bound (ephemeral ports resolved).
    pub fn addresses(&self) -> &[SocketAddr] {
        &self.addresses
    }

    /// Reads the certificate and key files of `ssl` again and uses them for the TLS
    /// handshakes from now on (connections already made keep theirs). Returns whether
    /// there are TLS endpoints (without, nothing changes). On error the current
    /// configuration stays.
    pub fn reload_tls(
        &self,
        ssl: &crate::config::SslConfig,
    ) -> Result<bool, crate::transport::tls::TlsError> {
        let Some(tls) = &self.tls else {
            return Ok(false);
        };
        tls.replace(crate::transport::tls::server_config(ssl)?);
        Ok(true)
    }

    /// The TLS endpoints' addresses (ephemeral ports resolved).
    pub fn ssl_addresses(&self) -> Vec<SocketAddr> {
        self.bound
            .iter()
            .filter_map(|b| match b {
                BoundEndpoint::Ssl(a) => Some(*a),
                _ => None,
            })
            .collect()
    }

    /// Every endpoint bound, TCP, TLS and local, in configuration order (TCP first).
    pub fn bound_endpoints(&self) -> &[BoundEndpoint] {
        &self.bound
    }

    /// Connections currently open.
    pub fn open_connections(&self) -> usize {
        self.shared.open.load(Ordering::Acquire)
    }

    /// The number of threads serving connections: the pool's size, or (thread per
    /// connection) the number of open connections.
    pub fn serving_threads(&self) -> usize {
        match &self.pool {
            Some(p) => p.threads(),
            None => self.open_connections(),
        }
    }

    /// Stops accepting and closes every connection in order: CloseConnection once its
    /// current request (if any) has been answered. Returns at once; see
    /// [`Server::wait_closed`].
    pub fn shutdown(&self) {
        {
            let _guard = self.shared.connections.lock();
            self.shared.stopping.store(true, Ordering::Release);
        }
        {
            let _guard = self.shared.stop_lock.lock();
            self.shared.stop_signal.notify_all();
        }
        for b in &self.bound {
            // Wake the accept threads (each stops at its next accept).
            b.wake();
        }
        let start = Instant::now();
        while self.shared.accepting.load(Ordering::Acquire) > 0
            && start.elapsed() < Duration::from_secs(2)
        {
            thread::sleep(Duration::from_millis(1));
        }
        for c in self.shared.live() {
            c.close_gracefully();
        }
        if let Some(p) = &self.pool {
            p.stop();
        }
    }

    /// Waits (up to `limit`) until every connection has closed.
    pub fn wait_closed(&self, limit: Duration) -> bool {
        let start = Instant::now();
        while self.open_connections() > 0 {
            if start.elapsed() > limit {
                return false;
            }
            thread::sleep(Duration::from_millis(2));
        }
        true
    }

    /// Runs one scavenger scan now (tests use this instead of waiting for the period):
    /// connections idle for `idle_for` on this and the previous scan are closed. Returns
    /// how many were closed.
    pub fn scavenge_now(&self, idle_for: Duration) -> usize {
        self.shared
            .live()
            .iter()
            .filter(|c| c.scavenge(idle_for))
            .count()
    }
}

/// How long a charge to the receive budget waits for the memory of the connections it
/// closed. A thread per connection: their threads wake at once (their socket is shut down)
/// unless in an upcall, so the wait is generous (a loaded machine runs them late). A pool:
/// the charge holds a pool thread, and a connection closed while idle is dropped as soon as
/// the leader sees it, or never while every pool thread is busy (always, with one), so a
/// charge gives up soon (and is refused).
fn budget_wait(model: ThreadModel) -> Duration {
    match model {
        ThreadModel::ThreadPerConnection => Duration::from_secs(1),
        ThreadModel::Pool(_) => Duration::from_millis(20),
    }
}

/// A socket path in the temporary directory, for `giop:unix:` without one.
fn made_up_socket_path() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    std::env::temp_dir().join(format!(
        "corbina-{}-{}.sock",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

fn accept_loop(
    listener: Box<dyn Listener>,
    dispatcher: Arc<dyn RequestDispatcher>,
    shared: &Arc<ServerShared>,
    pool: Option<Arc<pool::Pool>>,
) {
    // An orderly refusal: the client knows nothing ran and may retry elsewhere or later
    // (it gets TRANSIENT once it gives up).
    let refuse = |conn: Arc<dyn Connection>| {
        // Nothing was read: an idle connection's close state closes at once, in GIOP 1.0.
        let mut close = crate::giop::connection::CloseState::new(shared.config.byte_order);
        let Some(msg) = close.close() else {
            return;
        };
        let _ = crate::transport::write_segments(
            &mut crate::transport::Stream(conn.clone()),
            &[msg.as_bytes()],
        );
        let _ = conn.shutdown(std::net::Shutdown::Write);
    };
    loop {
        let stream = listener.accept();
        if shared.is_stopping() {
            if let Ok(s) = stream {
                refuse(s);
            }
            return;
        }
        let stream = match stream {
            Ok(s) => {
                crate::trace::accepted(&*s);
                crate::trace::wire(s, None)
            }
            // One connection refused by its transport (a failed TLS handshake, which the
            // error describes: endpoint, phase, cause): said once, then the next.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionAborted => {
                tracing::warn!(target: "corbina::server", "refused a connection: {e}");
                continue;
            }
            Err(e) => {
                tracing::warn!(
                    target: "corbina::server",
                    "accepting on {:?} failed: {e}",
                    listener.bound()
                );
                // EMFILE and the like: do not spin.
                thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let open = shared.open.fetch_add(1, Ordering::AcqRel);
        if open >= shared.config.max_server_connections {
            shared.open.fetch_sub(1, Ordering::AcqRel);
            refuse(stream);
            continue;
        }
        match &pool {
            Some(p) => {
                let (conn, read_half) =
                    connection::open(stream, dispatcher.clone(), shared.clone());
                p.add(conn, read_half);
            }
            None => {
                let d = dispatcher.clone();
                let s = shared.clone();
                let spawned = thread::Builder::new()
                    .name("corbina-conn".into())
                    .spawn(move || connection::serve(stream, d, s));
                if spawned.is_err() {
                    shared.connection_ended();
                }
            }
        }
    }
}

fn scavenger(shared: &ServerShared, period: Duration) {
    let mut guard = shared.stop_lock.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let deadline = Instant::now() + period;
        loop {
            if shared.is_stopping() {
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            guard = shared
                .stop_signal
                .wait_timeout(guard, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        drop(guard);
        for c in shared.live() {
            c.scavenge(period);
        }
        guard = shared.stop_lock.lock().unwrap_or_else(|p| p.into_inner());
    }
}
