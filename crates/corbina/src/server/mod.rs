//! The server side of IIOP: listening endpoints, a thread per connection, and the idle
//! connection scavenger. Requests are handed to a [`RequestDispatcher`] (the POA).

mod connection;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread;
use std::time::Duration;

use connection::ConnectionShared;

use crate::config::OrbConfig;
use crate::poa::{DispatchError, LocateOutcome};
use crate::servant::ServerRequest;

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
}

/// State shared by a server's listener and connection threads.
pub(crate) struct ServerShared {
    pub(crate) config: OrbConfig,
    connections: Mutex<Vec<Weak<ConnectionShared>>>,
    open: AtomicUsize,
    stopping: AtomicBool,
}

impl ServerShared {
    fn register(&self, c: &Arc<ConnectionShared>) {
        if let Ok(mut v) = self.connections.lock() {
            v.retain(|w| w.strong_count() > 0);
            v.push(Arc::downgrade(c));
        }
    }

    fn unregister(&self, _c: &Arc<ConnectionShared>) {
        self.open.fetch_sub(1, Ordering::AcqRel);
    }

    fn live(&self) -> Vec<Arc<ConnectionShared>> {
        self.connections
            .lock()
            .map(|v| v.iter().filter_map(Weak::upgrade).collect())
            .unwrap_or_default()
    }
}

/// A running IIOP server: bound endpoints and their accept threads.
pub struct Server {
    shared: Arc<ServerShared>,
    addresses: Vec<SocketAddr>,
}

impl Server {
    /// Binds every endpoint in `config` (or `0.0.0.0:0` when there is none) and starts
    /// accepting connections, each served by its own thread.
    pub fn start(
        config: &OrbConfig,
        dispatcher: Arc<dyn RequestDispatcher>,
    ) -> std::io::Result<Server> {
        let shared = Arc::new(ServerShared {
            config: config.clone(),
            connections: Mutex::new(Vec::new()),
            open: AtomicUsize::new(0),
            stopping: AtomicBool::new(false),
        });
        let endpoints = if config.endpoints.is_empty() {
            vec![crate::config::Endpoint {
                host: "0.0.0.0".into(),
                port: 0,
            }]
        } else {
            config.endpoints.clone()
        };
        let mut addresses = Vec::new();
        for ep in &endpoints {
            let listener = TcpListener::bind((ep.host.as_str(), ep.port))?;
            addresses.push(listener.local_addr()?);
            let shared = shared.clone();
            let dispatcher = dispatcher.clone();
            thread::Builder::new()
                .name(format!("corbina-accept-{}", addresses.len()))
                .spawn(move || accept_loop(listener, dispatcher, shared))?;
        }
        if let Some(period) = config.idle_timeout {
            let weak = Arc::downgrade(&shared);
            thread::Builder::new()
                .name("corbina-scavenger".into())
                .spawn(move || scavenger(weak, period))?;
        }
        Ok(Server { shared, addresses })
    }

    /// The addresses actually bound (ephemeral ports resolved).
    pub fn addresses(&self) -> &[SocketAddr] {
        &self.addresses
    }

    /// Connections currently open.
    pub fn open_connections(&self) -> usize {
        self.shared.open.load(Ordering::Acquire)
    }

    /// Stops accepting and closes every connection in order: CloseConnection once its
    /// current request (if any) has been answered.
    pub fn shutdown(&self) {
        self.shared.stopping.store(true, Ordering::Release);
        for a in &self.addresses {
            // Wake the accept threads.
            let wake = match a.ip() {
                ip if ip.is_unspecified() => {
                    SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), a.port())
                }
                _ => *a,
            };
            let _ = TcpStream::connect_timeout(&wake, Duration::from_millis(200));
        }
        for c in self.shared.live() {
            c.close_gracefully();
        }
    }

    /// Waits (up to `limit`) until every connection has closed.
    pub fn wait_closed(&self, limit: Duration) -> bool {
        let start = std::time::Instant::now();
        while self.open_connections() > 0 {
            if start.elapsed() > limit {
                return false;
            }
            thread::sleep(Duration::from_millis(5));
        }
        true
    }

    /// Runs one scavenger scan now (tests use this instead of waiting for the period).
    pub fn scavenge_now(&self, idle_for: Duration) -> usize {
        self.shared
            .live()
            .iter()
            .filter(|c| c.scavenge(idle_for))
            .count()
    }
}

fn accept_loop(
    listener: TcpListener,
    dispatcher: Arc<dyn RequestDispatcher>,
    shared: Arc<ServerShared>,
) {
    for stream in listener.incoming() {
        if shared.stopping.load(Ordering::Acquire) {
            return;
        }
        let Ok(stream) = stream else { continue };
        if shared.open.load(Ordering::Acquire) >= shared.config.max_server_connections {
            // Over the limit: refuse by closing; the client sees TRANSIENT/COMM_FAILURE.
            drop(stream);
            continue;
        }
        shared.open.fetch_add(1, Ordering::AcqRel);
        let d = dispatcher.clone();
        let s = shared.clone();
        let spawned = thread::Builder::new()
            .name("corbina-conn".into())
            .spawn(move || connection::serve(stream, d, s));
        if spawned.is_err() {
            shared.open.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

fn scavenger(shared: Weak<ServerShared>, period: Duration) {
    loop {
        thread::sleep(period);
        let Some(s) = shared.upgrade() else { return };
        if s.stopping.load(Ordering::Acquire) {
            return;
        }
        for c in s.live() {
            c.scavenge(period);
        }
    }
}
