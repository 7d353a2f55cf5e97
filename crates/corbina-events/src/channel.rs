//! The event channels in memory: each channel's proxies, the fan-out of an event to the
//! connected consumers' queues, and the threads that push to push consumers and pull from
//! pull suppliers.
//!
//! # Delivery
//!
//! A supplier's event is appended to the queue of every connected consumer proxy and the
//! supplier's call returns: no consumer is called on the supplier's thread. Each push
//! consumer has a thread of its own that empties its queue in order, one `push` at a time,
//! so a slow or dead consumer delays only itself. A queue holds at most the channel's
//! `MaxQueueLength` events; when it is full the oldest is dropped (as omniEvents does), so
//! a consumer that stopped reading costs bounded memory. A push failing with TRANSIENT,
//! COMM_FAILURE or TIMEOUT is retried, the same event, after a doubling back-off; after
//! [`crate::Options::push_retries`] failures in a row the consumer is disconnected (and told
//! so, if it still listens). `Disconnected` or OBJECT_NOT_EXIST from the consumer
//! disconnects it at once; any other exception skips that one event.
//!
//! # Locks
//!
//! A channel's lock guards its proxy table and every store write about the channel (so a
//! `connect` cannot write a record a concurrent `disconnect` has just removed); a proxy's
//! lock guards its connection and queue. The channel's lock may be held while taking a
//! proxy's, never the reverse. No lock is held across a remote call.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, Weak};
use std::time::Duration;

use corbina::error::minor::{
    BAD_PARAM_NIL_EVENT_PEER, IMP_LIMIT_EVENT_PROXIES, NO_RESOURCES_THREAD,
    OBJECT_NOT_EXIST_EVENT_OBJECT,
};
use corbina::giop::Ior;
use corbina::poa::{ObjectId, Poa};
use corbina::{Any, ObjectRef, Orb, SystemException, SystemExceptionKind};

use crate::cos_event_channel_admin::AmhProxyPullSupplierResponseHandler;
use crate::cos_event_comm::pull_supplier::TryPullError;
use crate::cos_event_comm::push_consumer::PushError;
use crate::cos_event_comm::{Disconnected, PullConsumer, PullSupplier, PushConsumer, PushSupplier};
use crate::store::{ChannelParams, Kind, Record, Store, StoreError};
use crate::Options;

pub(crate) fn sys(kind: SystemExceptionKind, minor: u32) -> SystemException {
    SystemException::new(kind, minor)
}

pub(crate) fn gone() -> SystemException {
    sys(
        SystemExceptionKind::ObjectNotExist,
        OBJECT_NOT_EXIST_EVENT_OBJECT,
    )
}

pub(crate) fn nil_peer() -> SystemException {
    sys(SystemExceptionKind::BadParam, BAD_PARAM_NIL_EVENT_PEER)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn oid(id: u64) -> ObjectId {
    ObjectId(id.to_be_bytes().to_vec())
}

/// What the channels share.
pub(crate) struct Shared {
    pub(crate) orb: Orb,
    pub(crate) poa: Poa,
    pub(crate) store: Store,
    pub(crate) options: Options,
    pub(crate) channels: Mutex<HashMap<u64, Arc<Channel>>>,
}

impl Shared {
    /// A reference to object `id` of interface `repository_id`.
    pub(crate) fn reference(&self, id: u64, repository_id: &str) -> ObjectRef {
        self.poa.create_reference_with_id(&oid(id), repository_id)
    }

    /// A reference from a stored IOR encapsulation (`None` for empty or nil).
    pub(crate) fn object(&self, ior: &[u8]) -> Option<ObjectRef> {
        if ior.is_empty() {
            return None;
        }
        let ior = Ior::from_encapsulation(ior).ok()?;
        if ior.is_nil() {
            return None;
        }
        self.orb.object_from_ior(ior).ok()
    }
}

/// The IOR encapsulation stored for a connected peer (empty for nil).
pub(crate) fn encapsulate(obj: Option<&ObjectRef>) -> Result<Vec<u8>, SystemException> {
    match obj {
        None => Ok(Vec::new()),
        Some(o) => o
            .ior()
            .to_encapsulation()
            // An IOR just decoded from a request encodes again; this is for the impossible.
            .map_err(|e| match e {
                corbina::giop::GiopError::Marshal(m) => {
                    SystemException::new(SystemExceptionKind::Marshal, m.minor())
                }
                _ => sys(
                    SystemExceptionKind::Internal,
                    corbina::error::minor::INTERNAL_EVENTS,
                ),
            }),
    }
}

/// A proxy of a channel.
#[derive(Clone)]
pub(crate) enum Proxy {
    /// `ProxyPushConsumer`: a push supplier pushes into it.
    PushConsumer(Arc<PushConsumerProxy>),
    /// `ProxyPullConsumer`: the channel pulls from a pull supplier through it.
    PullConsumer(Arc<PullConsumerProxy>),
    /// `ProxyPushSupplier`: the channel pushes to a push consumer through it.
    PushSupplier(Arc<PushSupplierProxy>),
    /// `ProxyPullSupplier`: a pull consumer pulls from it.
    PullSupplier(Arc<PullSupplierProxy>),
}

impl Proxy {
    pub(crate) fn id(&self) -> u64 {
        match self {
            Proxy::PushConsumer(p) => p.id,
            Proxy::PullConsumer(p) => p.id,
            Proxy::PushSupplier(p) => p.id,
            Proxy::PullSupplier(p) => p.id,
        }
    }

    /// Ends the proxy's connection: its threads stop, waiting pulls get `Disconnected`,
    /// and, when `notify`, the connected peer is told (on a thread of its own).
    fn shut(&self, notify: bool) {
        match self {
            Proxy::PushConsumer(p) => {
                let peer = std::mem::replace(&mut *lock(&p.state), Conn::Gone);
                if let (true, Conn::Connected(Some(s))) = (notify, peer) {
                    tell("disconnect_push_supplier", move || {
                        s.disconnect_push_supplier()
                    });
                }
            }
            Proxy::PullConsumer(p) => {
                let peer = std::mem::replace(&mut *lock(&p.state), Conn::Gone);
                p.wake.notify_all();
                if let (true, Conn::Connected(s)) = (notify, peer) {
                    tell("disconnect_pull_supplier", move || {
                        s.disconnect_pull_supplier()
                    });
                }
            }
            Proxy::PushSupplier(p) => {
                let peer = {
                    let mut st = lock(&p.state);
                    st.queue.clear();
                    std::mem::replace(&mut st.conn, Conn::Gone)
                };
                p.wake.notify_all();
                if let (true, Conn::Connected(c)) = (notify, peer) {
                    tell("disconnect_push_consumer", move || {
                        c.disconnect_push_consumer()
                    });
                }
            }
            Proxy::PullSupplier(p) => {
                let (peer, waiters) = {
                    let mut st = lock(&p.state);
                    st.queue.clear();
                    (
                        std::mem::replace(&mut st.conn, Conn::Gone),
                        std::mem::take(&mut st.waiters),
                    )
                };
                for w in waiters {
                    let _ = w.pull_excep(Disconnected {}.into());
                }
                if let (true, Conn::Connected(Some(c))) = (notify, peer) {
                    tell("disconnect_pull_consumer", move || {
                        c.disconnect_pull_consumer()
                    });
                }
            }
        }
    }
}

/// Calls a peer's `disconnect_*` on a thread of its own: the peer may be slow or dead, and
/// the operation that disconnected it must not wait.
fn tell<F>(what: &'static str, call: F)
where
    F: FnOnce() -> Result<(), SystemException> + Send + 'static,
{
    let _ = std::thread::Builder::new()
        .name(format!("events-{what}"))
        .spawn(move || {
            let _ = call();
        });
}

/// A proxy's connection to its peer.
pub(crate) enum Conn<T> {
    /// Obtained, not connected yet.
    Idle,
    /// Connected to the peer (`None`: connected with a nil reference, which the supplier
    /// side of push and the consumer side of pull allow).
    Connected(T),
    /// Disconnected, or its channel destroyed: the object no longer exists.
    Gone,
}

/// `ProxyPushConsumer`.
pub(crate) struct PushConsumerProxy {
    pub(crate) id: u64,
    pub(crate) channel: Weak<Channel>,
    pub(crate) state: Mutex<Conn<Option<PushSupplier>>>,
}

/// `ProxyPullConsumer`.
pub(crate) struct PullConsumerProxy {
    pub(crate) id: u64,
    pub(crate) channel: Weak<Channel>,
    pub(crate) state: Mutex<Conn<PullSupplier>>,
    wake: Condvar,
}

/// The queue and connection of a `ProxyPushSupplier`.
pub(crate) struct PushState {
    pub(crate) conn: Conn<PushConsumer>,
    queue: VecDeque<Any>,
}

/// `ProxyPushSupplier`.
pub(crate) struct PushSupplierProxy {
    pub(crate) id: u64,
    pub(crate) channel: Weak<Channel>,
    pub(crate) state: Mutex<PushState>,
    wake: Condvar,
    /// Events dropped because the queue was full or the consumer failed them.
    pub(crate) dropped: AtomicU64,
}

/// The queue, connection and waiting `pull`s of a `ProxyPullSupplier`.
pub(crate) struct PullState {
    pub(crate) conn: Conn<Option<PullConsumer>>,
    queue: VecDeque<Any>,
    waiters: VecDeque<AmhProxyPullSupplierResponseHandler>,
}

/// `ProxyPullSupplier`.
pub(crate) struct PullSupplierProxy {
    pub(crate) id: u64,
    pub(crate) channel: Weak<Channel>,
    pub(crate) state: Mutex<PullState>,
    pub(crate) dropped: AtomicU64,
}

/// A connected consumer-side proxy, as the fan-out sees it.
#[derive(Clone)]
enum Sink {
    Push(Arc<PushSupplierProxy>),
    Pull(Arc<PullSupplierProxy>),
}

/// The proxy table of a channel.
struct ChannelState {
    destroyed: bool,
    proxies: HashMap<u64, Proxy>,
}

/// An event channel.
pub(crate) struct Channel {
    pub(crate) id: u64,
    pub(crate) params: ChannelParams,
    pub(crate) shared: Weak<Shared>,
    state: Mutex<ChannelState>,
    /// The connected consumer proxies, rebuilt on every connect and disconnect so that a
    /// push reads it without taking the channel's lock.
    sinks: RwLock<Arc<[Sink]>>,
}

impl Channel {
    pub(crate) fn new(id: u64, params: ChannelParams, shared: Weak<Shared>) -> Arc<Channel> {
        Arc::new(Channel {
            id,
            params,
            shared,
            state: Mutex::new(ChannelState {
                destroyed: false,
                proxies: HashMap::new(),
            }),
            sinks: RwLock::new(Arc::from(Vec::new())),
        })
    }

    pub(crate) fn shared(&self) -> Result<Arc<Shared>, SystemException> {
        self.shared.upgrade().ok_or_else(gone)
    }

    fn queue_limit(&self) -> usize {
        usize::try_from(self.params.max_queue.max(1)).unwrap_or(usize::MAX)
    }

    pub(crate) fn is_destroyed(&self) -> bool {
        lock(&self.state).destroyed
    }

    /// How many proxies the channel has.
    pub(crate) fn proxy_count(&self) -> usize {
        lock(&self.state).proxies.len()
    }

    /// How many consumers are connected.
    pub(crate) fn consumer_count(&self) -> usize {
        self.sinks.read().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Appends `event` to every connected consumer's queue.
    pub(crate) fn publish(&self, event: &Any) {
        let sinks = self.sinks.read().unwrap_or_else(|p| p.into_inner()).clone();
        let limit = self.queue_limit();
        for s in sinks.iter() {
            match s {
                Sink::Push(p) => p.offer(event, limit),
                Sink::Pull(p) => p.offer(event, limit),
            }
        }
    }

    fn rebuild_sinks(&self, st: &ChannelState) {
        let mut sinks: Vec<(u64, Sink)> = st
            .proxies
            .iter()
            .filter_map(|(id, p)| match p {
                Proxy::PushSupplier(s) if matches!(lock(&s.state).conn, Conn::Connected(_)) => {
                    Some((*id, Sink::Push(s.clone())))
                }
                Proxy::PullSupplier(s) if matches!(lock(&s.state).conn, Conn::Connected(_)) => {
                    Some((*id, Sink::Pull(s.clone())))
                }
                _ => None,
            })
            .collect();
        // In order of creation: deliveries start in a stable order.
        sinks.sort_by_key(|(id, _)| *id);
        *self.sinks.write().unwrap_or_else(|p| p.into_inner()) =
            sinks.into_iter().map(|(_, s)| s).collect();
    }

    /// Creates a proxy of `kind` (stored, then activated); returns its id.
    pub(crate) fn obtain(self: &Arc<Self>, kind: Kind) -> Result<u64, SystemException> {
        let shared = self.shared()?;
        let mut st = lock(&self.state);
        if st.destroyed {
            return Err(gone());
        }
        if st.proxies.len() >= self.params.max_proxies as usize {
            return Err(sys(SystemExceptionKind::ImpLimit, IMP_LIMIT_EVENT_PROXIES));
        }
        let id = shared.store.create_proxy(kind, self.id)?;
        let proxy = self.make_proxy(id, kind);
        crate::servants::activate_proxy(&shared, &proxy)?;
        st.proxies.insert(id, proxy);
        Ok(id)
    }

    pub(crate) fn make_proxy(self: &Arc<Self>, id: u64, kind: Kind) -> Proxy {
        let channel = Arc::downgrade(self);
        match kind {
            Kind::PushConsumer => Proxy::PushConsumer(Arc::new(PushConsumerProxy {
                id,
                channel,
                state: Mutex::new(Conn::Idle),
            })),
            Kind::PullConsumer => Proxy::PullConsumer(Arc::new(PullConsumerProxy {
                id,
                channel,
                state: Mutex::new(Conn::Idle),
                wake: Condvar::new(),
            })),
            Kind::PushSupplier => Proxy::PushSupplier(Arc::new(PushSupplierProxy {
                id,
                channel,
                state: Mutex::new(PushState {
                    conn: Conn::Idle,
                    queue: VecDeque::new(),
                }),
                wake: Condvar::new(),
                dropped: AtomicU64::new(0),
            })),
            // The other kinds are not proxies; the store never holds them as such.
            Kind::PullSupplier
            | Kind::Channel
            | Kind::ConsumerAdmin
            | Kind::SupplierAdmin
            | Kind::Filter
            | Kind::MappingFilter => Proxy::PullSupplier(Arc::new(PullSupplierProxy {
                id,
                channel,
                state: Mutex::new(PullState {
                    conn: Conn::Idle,
                    queue: VecDeque::new(),
                    waiters: VecDeque::new(),
                }),
                dropped: AtomicU64::new(0),
            })),
        }
    }

    /// Adds a proxy read from the store, with its servant activated, its connection
    /// restored and its thread started.
    pub(crate) fn restore(self: &Arc<Self>, id: u64, rec: &Record, shared: &Shared) -> Proxy {
        let proxy = self.make_proxy(id, rec.kind);
        let peer = rec.connected.then(|| shared.object(&rec.data));
        if let Some(peer) = &peer {
            match &proxy {
                Proxy::PushConsumer(p) => {
                    *lock(&p.state) =
                        Conn::Connected(peer.as_ref().map(PushSupplier::unchecked_narrow));
                }
                Proxy::PullSupplier(p) => {
                    lock(&p.state).conn =
                        Conn::Connected(peer.as_ref().map(PullConsumer::unchecked_narrow));
                }
                // A stored consumer or supplier we cannot call any more stays idle.
                Proxy::PushSupplier(p) => {
                    if let Some(peer) = peer {
                        lock(&p.state).conn = Conn::Connected(PushConsumer::unchecked_narrow(peer));
                    }
                }
                Proxy::PullConsumer(p) => {
                    if let Some(peer) = peer {
                        *lock(&p.state) = Conn::Connected(PullSupplier::unchecked_narrow(peer));
                    }
                }
            }
        }
        if let Err(e) = crate::servants::activate_proxy(shared, &proxy) {
            eprintln!("corbina-events: proxy {id}: {e}");
        }
        {
            let mut st = lock(&self.state);
            st.proxies.insert(id, proxy.clone());
            self.rebuild_sinks(&st);
        }
        // Started once the proxy is in the table, so a thread that fails at once can
        // remove it.
        let started = match &proxy {
            Proxy::PushSupplier(p) if matches!(lock(&p.state).conn, Conn::Connected(_)) => {
                p.clone().start()
            }
            Proxy::PullConsumer(p) if matches!(*lock(&p.state), Conn::Connected(_)) => {
                p.clone().start()
            }
            _ => Ok(()),
        };
        if started.is_err() {
            let _ = self.disconnect(id, true);
        }
        proxy
    }

    /// Connects proxy `id` to `peer` (stored first), then runs `after` (which starts the
    /// proxy's thread) with the channel's lock released. `is_idle` tells whether the proxy
    /// can still be connected (`Ok(false)`: AlreadyConnected); `set` records the connection.
    pub(crate) fn connect<E: From<SystemException>>(
        &self,
        id: u64,
        kind: Kind,
        peer: Option<&ObjectRef>,
        already: impl FnOnce() -> E,
        is_idle: impl FnOnce() -> Result<bool, SystemException>,
        set: impl FnOnce(),
    ) -> Result<(), E> {
        let shared = self.shared()?;
        let st = lock(&self.state);
        if st.destroyed || !st.proxies.contains_key(&id) {
            return Err(gone().into());
        }
        if !is_idle()? {
            return Err(already());
        }
        shared
            .store
            .connect(id, kind, self.id, &encapsulate(peer)?)
            .map_err(SystemException::from)?;
        set();
        self.rebuild_sinks(&st);
        Ok(())
    }

    /// Removes proxy `id` (from the store first): its object ceases to exist; when
    /// `notify`, its peer is told.
    pub(crate) fn disconnect(&self, id: u64, notify: bool) -> Result<(), StoreError> {
        let Some(shared) = self.shared.upgrade() else {
            return Ok(());
        };
        let proxy = {
            let mut st = lock(&self.state);
            if !st.proxies.contains_key(&id) {
                return Ok(());
            }
            shared.store.remove(&[id], None)?;
            let p = st.proxies.remove(&id);
            self.rebuild_sinks(&st);
            p
        };
        let _ = shared.poa.deactivate_object(&oid(id));
        if let Some(p) = proxy {
            p.shut(notify);
        }
        Ok(())
    }

    /// `EventChannel::destroy`: every proxy is disconnected and its peer told, the channel,
    /// its admins and its corbaloc name are removed.
    pub(crate) fn destroy(&self) -> Result<(), SystemException> {
        let shared = self.shared()?;
        let proxies: Vec<Proxy> = {
            let mut st = lock(&self.state);
            if st.destroyed {
                return Err(gone());
            }
            let mut ids: Vec<u64> = st.proxies.keys().copied().collect();
            ids.extend([self.id, self.id + 1, self.id + 2]);
            shared.store.remove(&ids, self.params.ins_name.as_deref())?;
            st.destroyed = true;
            let ps = st.proxies.drain().map(|(_, p)| p).collect();
            self.rebuild_sinks(&st);
            ps
        };
        if let Some(n) = &self.params.ins_name {
            shared.orb.unbind_object_key(n.as_bytes());
        }
        for id in [self.id, self.id + 1, self.id + 2] {
            let _ = shared.poa.deactivate_object(&oid(id));
        }
        lock(&shared.channels).remove(&self.id);
        for p in proxies {
            let _ = shared.poa.deactivate_object(&oid(p.id()));
            p.shut(true);
        }
        Ok(())
    }

    /// Stops every proxy's thread without telling peers (the service is shutting down; the
    /// connections stay in the store).
    pub(crate) fn stop(&self) {
        let proxies: Vec<Proxy> = lock(&self.state).proxies.values().cloned().collect();
        for p in proxies {
            p.shut(false);
        }
    }
}

fn spawn(name: String, f: impl FnOnce() + Send + 'static) -> Result<(), SystemException> {
    std::thread::Builder::new()
        .name(name)
        .spawn(f)
        .map(drop)
        .map_err(|_| sys(SystemExceptionKind::NoResources, NO_RESOURCES_THREAD))
}

/// What a failed call to a peer means for its proxy.
enum Failure {
    /// The peer is gone or refused the connection: disconnect without telling it.
    Gone,
    /// Unreachable for now: retry after a back-off.
    Retry,
    /// The peer failed this one call: go on.
    Skip,
}

fn classify(e: &SystemException) -> Failure {
    match e.kind {
        SystemExceptionKind::ObjectNotExist => Failure::Gone,
        SystemExceptionKind::Transient
        | SystemExceptionKind::CommFailure
        | SystemExceptionKind::Timeout => Failure::Retry,
        _ => Failure::Skip,
    }
}

/// The back-off before retry number `n` (1-based): doubling from the configured start,
/// capped.
fn backoff(options: &Options, n: u32) -> Duration {
    let factor = 1u32 << n.saturating_sub(1).min(16);
    options
        .retry_backoff
        .saturating_mul(factor)
        .min(options.max_backoff)
}

impl PushSupplierProxy {
    fn offer(&self, event: &Any, limit: usize) {
        let mut st = lock(&self.state);
        if !matches!(st.conn, Conn::Connected(_)) {
            return;
        }
        if st.queue.len() >= limit {
            st.queue.pop_front();
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        st.queue.push_back(event.clone());
        drop(st);
        self.wake.notify_one();
    }

    /// Starts the thread that pushes the queue to the consumer.
    pub(crate) fn start(self: Arc<Self>) -> Result<(), SystemException> {
        spawn(format!("events-push-{}", self.id), move || self.run())
    }

    fn run(&self) {
        let Some(options) = self
            .channel
            .upgrade()
            .and_then(|c| c.shared.upgrade())
            .map(|s| s.options.clone())
        else {
            return;
        };
        let mut pending: Option<Any> = None;
        let mut failures = 0u32;
        loop {
            let (consumer, event) = {
                let mut st = lock(&self.state);
                loop {
                    if !matches!(st.conn, Conn::Connected(_)) {
                        return;
                    }
                    if pending.is_none() {
                        pending = st.queue.pop_front();
                    }
                    if let (Some(e), Conn::Connected(c)) = (&pending, &st.conn) {
                        break (c.clone(), e.clone());
                    }
                    st = self.wake.wait(st).unwrap_or_else(|p| p.into_inner());
                }
            };
            let failure = match consumer.push(&event) {
                Ok(()) => {
                    pending = None;
                    failures = 0;
                    continue;
                }
                Err(PushError::Disconnected(_)) => Failure::Gone,
                Err(PushError::System(e)) => classify(&e),
            };
            match failure {
                Failure::Gone => return self.drop_out(false),
                Failure::Skip => {
                    pending = None;
                    failures = 0;
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                }
                Failure::Retry => {
                    failures += 1;
                    if failures > options.push_retries {
                        return self.drop_out(true);
                    }
                    let st = lock(&self.state);
                    let _ = self
                        .wake
                        .wait_timeout_while(st, backoff(&options, failures), |st| {
                            matches!(st.conn, Conn::Connected(_))
                        });
                }
            }
        }
    }

    fn drop_out(&self, notify: bool) {
        if let Some(ch) = self.channel.upgrade() {
            let _ = ch.disconnect(self.id, notify);
        }
    }
}

impl PullSupplierProxy {
    fn offer(&self, event: &Any, limit: usize) {
        let mut st = lock(&self.state);
        if !matches!(st.conn, Conn::Connected(_)) {
            return;
        }
        if let Some(w) = st.waiters.pop_front() {
            drop(st);
            let _ = w.pull(event);
            return;
        }
        if st.queue.len() >= limit {
            st.queue.pop_front();
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        st.queue.push_back(event.clone());
    }

    /// `pull`: the next event now, or when one arrives.
    pub(crate) fn pull(&self, rh: AmhProxyPullSupplierResponseHandler) {
        let mut st = lock(&self.state);
        match &st.conn {
            Conn::Connected(_) => {}
            Conn::Idle => {
                drop(st);
                let _ = rh.pull_excep(Disconnected {}.into());
                return;
            }
            Conn::Gone => {
                drop(st);
                let _ = rh.pull_excep(gone().into());
                return;
            }
        }
        match st.queue.pop_front() {
            Some(e) => {
                drop(st);
                let _ = rh.pull(&e);
            }
            None => st.waiters.push_back(rh),
        }
    }

    /// `try_pull`: the next event if there is one.
    pub(crate) fn try_pull(&self) -> Result<Option<Any>, TryPullError> {
        let mut st = lock(&self.state);
        match &st.conn {
            Conn::Connected(_) => Ok(st.queue.pop_front()),
            Conn::Idle => Err(Disconnected {}.into()),
            Conn::Gone => Err(gone().into()),
        }
    }
}

impl PullConsumerProxy {
    /// Starts the thread that pulls from the supplier.
    pub(crate) fn start(self: Arc<Self>) -> Result<(), SystemException> {
        spawn(format!("events-pull-{}", self.id), move || self.run())
    }

    fn run(&self) {
        let Some(channel) = self.channel.upgrade() else {
            return;
        };
        let Some(options) = channel.shared.upgrade().map(|s| s.options.clone()) else {
            return;
        };
        let period = Duration::from_millis(u64::from(channel.params.pull_retry_ms));
        drop(channel);
        let mut failures = 0u32;
        loop {
            let supplier = match &*lock(&self.state) {
                Conn::Connected(s) => s.clone(),
                _ => return,
            };
            let wait = match supplier.try_pull() {
                Ok((event, true)) => {
                    failures = 0;
                    match self.channel.upgrade() {
                        Some(ch) => ch.publish(&event),
                        None => return,
                    }
                    continue;
                }
                Ok((_, false)) => {
                    failures = 0;
                    period
                }
                Err(TryPullError::Disconnected(_)) => return self.drop_out(false),
                Err(TryPullError::System(e)) => match classify(&e) {
                    Failure::Gone => return self.drop_out(false),
                    Failure::Skip => period,
                    Failure::Retry => {
                        failures += 1;
                        if failures > options.push_retries {
                            return self.drop_out(true);
                        }
                        backoff(&options, failures).max(period)
                    }
                },
            };
            let st = lock(&self.state);
            let _ = self
                .wake
                .wait_timeout_while(st, wait, |st| matches!(st, Conn::Connected(_)));
        }
    }

    fn drop_out(&self, notify: bool) {
        if let Some(ch) = self.channel.upgrade() {
            let _ = ch.disconnect(self.id, notify);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let o = Options {
            retry_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_millis(50),
            ..Options::new("unused")
        };
        assert_eq!(backoff(&o, 1), Duration::from_millis(10));
        assert_eq!(backoff(&o, 2), Duration::from_millis(20));
        assert_eq!(backoff(&o, 3), Duration::from_millis(40));
        assert_eq!(backoff(&o, 4), Duration::from_millis(50));
        assert_eq!(backoff(&o, 1000), Duration::from_millis(50));
    }

    #[test]
    fn failures_are_classified() {
        let k = |kind| classify(&SystemException::new(kind, 0));
        assert!(matches!(k(SystemExceptionKind::Transient), Failure::Retry));
        assert!(matches!(
            k(SystemExceptionKind::CommFailure),
            Failure::Retry
        ));
        assert!(matches!(k(SystemExceptionKind::Timeout), Failure::Retry));
        assert!(matches!(
            k(SystemExceptionKind::ObjectNotExist),
            Failure::Gone
        ));
        assert!(matches!(k(SystemExceptionKind::BadParam), Failure::Skip));
    }
}
