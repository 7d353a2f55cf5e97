//! The event channels in memory: each channel's proxies, the fan-out of an event to the
//! connected consumers' queues, and the threads that push to push consumers and pull from
//! pull suppliers.
//!
//! # Delivery
//!
//! A supplier's event is appended to the queue of every connected consumer proxy and the
//! supplier's call returns: no consumer is called on the supplier's thread. Each push
//! consumer has a thread of its own that empties its queue in order, one push at a time or,
//! with [`crate::Options::push_window`] above 1, that many in flight on a connection of the
//! consumer's own (see [`PushSupplierProxy::run`]), so a slow or dead consumer delays only
//! itself. A queue holds at most the channel's `MaxQueueLength` events; when it is full the
//! oldest is dropped (as omniEvents does), so a consumer that stopped reading costs bounded
//! memory. A push failing with TRANSIENT, COMM_FAILURE or TIMEOUT is retried (with the
//! pushes after it), after a doubling back-off; after [`crate::Options::push_retries`]
//! failures in a row the consumer is disconnected (and told so, if it still listens).
//! `Disconnected` or OBJECT_NOT_EXIST from the consumer disconnects it at once; any other
//! exception skips that one event.
//!
//! # Locks
//!
//! A channel's lock guards its proxy table and every store write about the channel (so a
//! `connect` cannot write a record a concurrent `disconnect` has just removed); a proxy's
//! lock guards its connection and queue. The channel's lock may be held while taking a
//! proxy's, never the reverse. No lock is held across a remote call.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use corbina::cdr::CdrDecode;
use corbina::error::minor::{
    BAD_PARAM_NIL_EVENT_PEER, IMP_LIMIT_EVENT_PROXIES, NO_RESOURCES_THREAD,
    OBJECT_NOT_EXIST_EVENT_OBJECT,
};
use corbina::giop::Ior;
use corbina::poa::{ObjectId, Poa};
use corbina::{Any, ObjectRef, Orb, SystemException, SystemExceptionKind};

use crate::admin::{Admin, Link, NotifyParams, Style};
use crate::cos_event_comm::push_consumer::PushError;
use crate::cos_event_comm::{
    Disconnected, PullConsumer, PullSupplier, PushConsumer, PushConsumerAsync, PushSupplier,
};
use crate::cos_notify_comm::sequence_push_consumer::PushStructuredEventsError;
use crate::cos_notify_comm::structured_push_consumer::PushStructuredEventError;
use crate::cos_notify_comm::{
    SequencePushConsumer, SequencePushConsumerAsync, StructuredPushConsumer,
    StructuredPushConsumerAsync,
};
use crate::pull::{PullPeer, PullSource, Waiter};
use crate::qos::Qos;
use crate::queue::{Body, Event, Queue};
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

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
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

    pub(crate) fn link(&self) -> &Link {
        match self {
            Proxy::PushConsumer(p) => &p.link,
            Proxy::PullConsumer(p) => &p.link,
            Proxy::PushSupplier(p) => &p.link,
            Proxy::PullSupplier(p) => &p.link,
        }
    }

    /// The store's kind of the proxy (of an event channel's proxy, its record's kind).
    pub(crate) fn kind(&self) -> Kind {
        match self {
            Proxy::PushConsumer(_) => Kind::PushConsumer,
            Proxy::PullConsumer(_) => Kind::PullConsumer,
            Proxy::PushSupplier(_) => Kind::PushSupplier,
            Proxy::PullSupplier(_) => Kind::PullSupplier,
        }
    }

    /// Ends the proxy's connection: its threads stop, waiting pulls get `Disconnected`,
    /// and, when `notify`, the connected peer is told (on a thread of its own).
    fn shut(&self, notify: bool) {
        match self {
            Proxy::PushConsumer(p) => {
                let peer = std::mem::replace(&mut *lock(&p.state), Conn::Gone);
                if let (true, Conn::Connected(Some(s))) = (notify, peer) {
                    match s {
                        Source::Any(s) => tell("disconnect_push_supplier", move || {
                            s.disconnect_push_supplier()
                        }),
                        Source::Structured(s) => {
                            tell("disconnect_structured_push_supplier", move || {
                                s.disconnect_structured_push_supplier()
                            })
                        }
                        Source::Sequence(s) => {
                            tell("disconnect_sequence_push_supplier", move || {
                                s.disconnect_sequence_push_supplier()
                            })
                        }
                    }
                }
            }
            Proxy::PullConsumer(p) => {
                let peer = std::mem::replace(&mut *lock(&p.state), Conn::Gone);
                p.wake.notify_all();
                if let (true, Conn::Connected(s)) = (notify, peer) {
                    tell("disconnect_pull_supplier", move || s.disconnect());
                }
            }
            Proxy::PushSupplier(p) => {
                let peer = {
                    let mut st = lock(&p.state);
                    st.queue.clear();
                    std::mem::replace(&mut st.conn, Conn::Gone)
                };
                p.poke();
                if let (true, Conn::Connected(c)) = (notify, peer) {
                    match c {
                        Target::Any(c) => tell("disconnect_push_consumer", move || {
                            c.disconnect_push_consumer()
                        }),
                        Target::Structured(c) => {
                            tell("disconnect_structured_push_consumer", move || {
                                c.disconnect_structured_push_consumer()
                            })
                        }
                        Target::Sequence(c) => {
                            tell("disconnect_sequence_push_consumer", move || {
                                c.disconnect_sequence_push_consumer()
                            })
                        }
                    }
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
                    w.disconnected();
                }
                if let (true, Conn::Connected(Some(c))) = (notify, peer) {
                    tell("disconnect_pull_consumer", move || c.disconnect());
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

/// The supplier connected to a push proxy consumer (its `disconnect_*` differs by kind).
#[derive(Clone)]
pub(crate) enum Source {
    Any(PushSupplier),
    Structured(crate::cos_notify_comm::StructuredPushSupplier),
    Sequence(crate::cos_notify_comm::SequencePushSupplier),
}

impl Source {
    pub(crate) fn object(&self) -> &ObjectRef {
        match self {
            Source::Any(s) => s.as_object(),
            Source::Structured(s) => s.as_object(),
            Source::Sequence(s) => s.as_object(),
        }
    }
}

/// The consumer a push proxy supplier pushes to.
#[derive(Clone)]
pub(crate) enum Target {
    /// `push(any)`.
    Any(PushConsumer),
    /// `push_structured_event`.
    Structured(StructuredPushConsumer),
    /// `push_structured_events`, in batches.
    Sequence(SequencePushConsumer),
}

impl Target {
    pub(crate) fn object(&self) -> &ObjectRef {
        match self {
            Target::Any(c) => c.as_object(),
            Target::Structured(c) => c.as_object(),
            Target::Sequence(c) => c.as_object(),
        }
    }

    /// Pushes `batch` (one event, but for sequence consumers), waiting for each reply.
    fn push(&self, batch: &[Arc<Event>]) -> Result<(), Failure> {
        match self {
            Target::Any(c) => Ok(batch.iter().try_for_each(|e| push_any(c, e))?),
            Target::Structured(c) => Ok(batch.iter().try_for_each(|e| push_structured(c, e))?),
            Target::Sequence(c) => {
                let events: Vec<_> = batch.iter().map(|e| e.structured().clone()).collect();
                Ok(c.push_structured_events(&events)?)
            }
        }
    }
}

/// `PushConsumer::push(e)` as the stub does it, but with the event's argument encoded once
/// for all its consumers ([`Event::write_any`]).
fn push_any(c: &PushConsumer, e: &Event) -> Result<(), PushError> {
    if c.as_object().is_collocated() {
        return c.push(e.any());
    }
    push_encoded(
        c.as_object(),
        "push",
        |w| e.write_any(w),
        PushError::Disconnected,
    )
}

/// `StructuredPushConsumer::push_structured_event(e)`, the same way.
fn push_structured(c: &StructuredPushConsumer, e: &Event) -> Result<(), PushStructuredEventError> {
    if c.as_object().is_collocated() {
        return c.push_structured_event(e.structured());
    }
    push_encoded(
        c.as_object(),
        "push_structured_event",
        |w| e.write_structured(w),
        PushStructuredEventError::Disconnected,
    )
}

/// A push operation whose one argument `write` encodes, raising only `Disconnected`.
fn push_encoded<'a, E: From<SystemException>>(
    obj: &ObjectRef,
    operation: &str,
    write: impl Fn(&mut corbina::cdr::CdrWriter<'a>) -> corbina::cdr::Result<()>,
    disconnected: fn(Disconnected) -> E,
) -> Result<(), E> {
    obj.invoke(
        operation,
        write,
        |_| Ok(()),
        |id, r| {
            Ok(match id {
                DISCONNECTED_ID => Some(disconnected(Disconnected::decode(r)?)),
                _ => None,
            })
        },
    )
}

/// The repository id of `CosEventComm::Disconnected`.
const DISCONNECTED_ID: &str = "IDL:omg.org/CosEventComm/Disconnected:1.0";

/// `ProxyPushConsumer` (and the notification kinds of it).
pub(crate) struct PushConsumerProxy {
    pub(crate) id: u64,
    pub(crate) channel: Weak<Channel>,
    pub(crate) link: Link,
    pub(crate) state: Mutex<Conn<Option<Source>>>,
}

/// `ProxyPullConsumer` (and the notification kinds of it).
pub(crate) struct PullConsumerProxy {
    pub(crate) id: u64,
    pub(crate) channel: Weak<Channel>,
    pub(crate) link: Link,
    pub(crate) state: Mutex<Conn<PullSource>>,
    /// `suspend_connection`: the supplier is not pulled from.
    pub(crate) suspended: std::sync::atomic::AtomicBool,
    pub(crate) wake: Condvar,
}

/// The queue and connection of a `ProxyPushSupplier`.
pub(crate) struct PushState {
    pub(crate) conn: Conn<Target>,
    pub(crate) queue: Queue,
    /// `suspend_connection`: events queue, none is pushed.
    pub(crate) suspended: bool,
    /// `MaximumBatchSize` and `PacingInterval` of a sequence consumer.
    pub(crate) batch: usize,
    pub(crate) pacing: Duration,
    pub(crate) journal: Journal,
}

/// `ProxyPushSupplier` (and the notification kinds of it).
pub(crate) struct PushSupplierProxy {
    pub(crate) id: u64,
    pub(crate) channel: Weak<Channel>,
    pub(crate) link: Link,
    pub(crate) state: Mutex<PushState>,
    /// Events dropped because the queue was full, they expired, or the consumer failed them.
    pub(crate) dropped: AtomicU64,
    /// Set by [`PushSupplierProxy::poke`]: the delivery thread has something to look at.
    pub(crate) woken: AtomicBool,
    /// The delivery thread's task, when it waits.
    pub(crate) waiter: Mutex<Option<Waker>>,
}

/// The queue, connection and waiting `pull`s of a `ProxyPullSupplier`.
pub(crate) struct PullState {
    pub(crate) conn: Conn<Option<PullPeer>>,
    pub(crate) queue: Queue,
    waiters: VecDeque<Waiter>,
    pub(crate) journal: Journal,
}

/// Whether a consumer proxy stores its events (`EventReliability` `Persistent`), and the
/// store key of its next one.
pub(crate) struct Journal {
    pub(crate) on: bool,
    next: u64,
}

impl Journal {
    fn new(qos: &Qos) -> Journal {
        Journal {
            on: qos.persistent_events(),
            next: 0,
        }
    }

    /// Appends `event` to proxy `proxy`'s `queue`, stored first when the journal is on
    /// (with the removal of what the queue dropped for it); how many were dropped.
    fn queue(
        &mut self,
        proxy: u64,
        channel: &Weak<Channel>,
        queue: &mut Queue,
        event: &Arc<Event>,
        now: Instant,
    ) -> u64 {
        let shared = match self.on {
            true => channel.upgrade().and_then(|c| c.shared.upgrade()),
            false => None,
        };
        let Some(shared) = shared else {
            return queue.push(event.clone(), now);
        };
        let key = self.next;
        self.next += 1;
        let event = Arc::new(event.with_key(key));
        let data = event.encode();
        let dropped = queue.push(event, now);
        let gone = queue.take_gone();
        let stored = data.map_err(|e| e.to_string()).and_then(|d| {
            shared
                .store
                .put_event(proxy, key, &d, &gone)
                .map_err(|e| e.to_string())
        });
        if let Err(e) = stored {
            eprintln!("corbina-events: proxy {proxy}: event not stored: {e}");
        }
        dropped
    }

    /// Puts the stored events of proxy `proxy` back in its `queue` (after a restart); drops
    /// them when the journal is off or the proxy is not connected.
    fn reload(&mut self, proxy: u64, shared: &Shared, queue: &mut Queue, connected: bool) {
        let stored = match shared.store.events(proxy) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("corbina-events: proxy {proxy}: stored events: {e}");
                return;
            }
        };
        let now = Instant::now();
        let mut gone = Vec::new();
        for (key, data) in stored {
            self.next = self.next.max(key.saturating_add(1));
            match Event::decode(&data, key) {
                Ok(e) if self.on && connected => {
                    queue.push(Arc::new(e), now);
                }
                Ok(_) => gone.push(key),
                Err(e) => {
                    eprintln!("corbina-events: proxy {proxy}: stored event {key}: {e}");
                    gone.push(key);
                }
            }
        }
        gone.extend(queue.take_gone());
        forget_in(&shared.store, proxy, &gone);
    }
}

/// Removes the stored events `keys` of proxy `proxy` (delivered, discarded, expired).
fn forget_in(store: &Store, proxy: u64, keys: &[u64]) {
    if let Err(e) = store.remove_events(proxy, keys) {
        eprintln!("corbina-events: proxy {proxy}: stored events not removed: {e}");
    }
}

/// The same through a proxy's channel; nothing to do without keys.
fn forget(channel: &Weak<Channel>, proxy: u64, keys: &[u64]) {
    if keys.is_empty() {
        return;
    }
    if let Some(shared) = channel.upgrade().and_then(|c| c.shared.upgrade()) {
        forget_in(&shared.store, proxy, keys);
    }
}

/// `ProxyPullSupplier`.
pub(crate) struct PullSupplierProxy {
    pub(crate) id: u64,
    pub(crate) channel: Weak<Channel>,
    pub(crate) link: Link,
    pub(crate) state: Mutex<PullState>,
    pub(crate) dropped: AtomicU64,
}

/// A connected consumer-side proxy, as the fan-out sees it.
#[derive(Clone)]
enum Sink {
    Push(Arc<PushSupplierProxy>),
    Pull(Arc<PullSupplierProxy>),
}

impl Sink {
    fn link(&self) -> &Link {
        match self {
            Sink::Push(p) => &p.link,
            Sink::Pull(p) => &p.link,
        }
    }
}

/// The proxy and admin tables of a channel.
pub(crate) struct ChannelState {
    destroyed: bool,
    pub(crate) proxies: HashMap<u64, Proxy>,
    /// By object id; an event channel has its two default admins only.
    pub(crate) admins: BTreeMap<u64, Arc<Admin>>,
}

/// An event channel, or a notification channel (`notify`).
pub(crate) struct Channel {
    pub(crate) id: u64,
    pub(crate) params: ChannelParams,
    pub(crate) shared: Weak<Shared>,
    /// A notification channel's QoS, admin properties and announced types.
    pub(crate) notify: Option<NotifyParams>,
    pub(crate) state: Mutex<ChannelState>,
    /// The connected consumer proxies, rebuilt on every connect and disconnect so that a
    /// push reads it without taking the channel's lock.
    sinks: RwLock<Arc<[Sink]>>,
}

impl Channel {
    /// A channel with its two default admins (object ids `id + 1` and `id + 2`).
    pub(crate) fn new(
        id: u64,
        params: ChannelParams,
        shared: Weak<Shared>,
        notify: Option<NotifyParams>,
    ) -> Arc<Channel> {
        let qos = notify
            .as_ref()
            .map(|n| lock(&n.qos).clone())
            .unwrap_or_default();
        let mut admins = BTreeMap::new();
        admins.insert(
            id + 1,
            Arc::new(Admin::new(id + 1, 0, true, false, qos.clone())),
        );
        admins.insert(id + 2, Arc::new(Admin::new(id + 2, 0, false, false, qos)));
        Arc::new(Channel {
            id,
            params,
            shared,
            notify,
            state: Mutex::new(ChannelState {
                destroyed: false,
                proxies: HashMap::new(),
                admins,
            }),
            sinks: RwLock::new(Arc::from(Vec::new())),
        })
    }

    /// The admin of object id `id`.
    pub(crate) fn admin(&self, id: u64) -> Option<Arc<Admin>> {
        lock(&self.state).admins.get(&id).cloned()
    }

    /// Replaces an admin (one read from the store, over the default one made by `new`).
    pub(crate) fn put_admin(&self, admin: Arc<Admin>) {
        lock(&self.state).admins.insert(admin.id, admin);
    }

    pub(crate) fn lock_state(&self) -> MutexGuard<'_, ChannelState> {
        lock(&self.state)
    }

    pub(crate) fn shared(&self) -> Result<Arc<Shared>, SystemException> {
        self.shared.upgrade().ok_or_else(gone)
    }

    /// `MaxQueueLength`: the bound of a consumer's queue unless its QoS says otherwise.
    pub(crate) fn max_queue(&self) -> u32 {
        match &self.notify {
            Some(n) => n.max_queue(),
            None => self.params.max_queue.max(1),
        }
    }

    /// A new queue for a consumer proxy of `qos`.
    pub(crate) fn queue_for(&self, qos: &Qos) -> Queue {
        Queue::new(qos.order(), qos.discard(), qos.max_events(self.max_queue()))
    }

    /// What the channel's objects share, unless the channel was destroyed.
    pub(crate) fn live(&self) -> Result<Arc<Shared>, SystemException> {
        if self.is_destroyed() {
            return Err(gone());
        }
        self.shared()
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

    /// Appends `event`, when it passes the supplier's proxy (`from`) and admin, to the queue
    /// of every connected consumer whose proxy and admin it passes.
    pub(crate) fn publish(&self, event: Event, from: &Link) {
        if !from.passes(&event) {
            return;
        }
        let event = Arc::new(event);
        let sinks = self.sinks.read().unwrap_or_else(|p| p.into_inner()).clone();
        let now = Instant::now();
        for s in sinks.iter() {
            let link = s.link();
            if !link.passes(&event) {
                continue;
            }
            let event = link.remap(&event);
            match s {
                Sink::Push(p) => p.offer(&event, now),
                Sink::Pull(p) => p.offer(&event, now),
            }
        }
    }

    /// Publishes an `any` from a supplier-side proxy.
    pub(crate) fn publish_any(&self, event: &Any, from: &Link) {
        self.publish(from.event(Body::Any(event.clone())), from);
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

    /// Creates a proxy of `kind` in the channel's default admin of its side (stored, then
    /// activated); returns its id.
    pub(crate) fn obtain(self: &Arc<Self>, kind: Kind) -> Result<u64, SystemException> {
        let admin = match kind {
            Kind::PushSupplier | Kind::PullSupplier => self.id + 1,
            _ => self.id + 2,
        };
        let admin = self.admin(admin).ok_or_else(gone)?;
        self.obtain_in(&admin, kind, Style::Event).map(|p| p.id())
    }

    /// Creates a proxy of `kind` carrying `style` events in `admin`: stored, then
    /// activated.
    pub(crate) fn obtain_in(
        self: &Arc<Self>,
        admin: &Arc<Admin>,
        kind: Kind,
        style: Style,
    ) -> Result<Proxy, SystemException> {
        let shared = self.shared()?;
        let mut st = lock(&self.state);
        if st.destroyed || !st.admins.contains_key(&admin.id) {
            return Err(gone());
        }
        if st.proxies.len() >= self.params.max_proxies as usize {
            return Err(sys(SystemExceptionKind::ImpLimit, IMP_LIMIT_EVENT_PROXIES));
        }
        let link = Link::new(admin.clone(), style);
        let id = match &self.notify {
            None => shared.store.create_proxy(kind, self.id)?,
            Some(_) => {
                let data = link
                    .encode(kind.code(), false)
                    .map_err(SystemException::from)?;
                shared
                    .store
                    .create_object(Kind::NotifyProxy, self.id, &data)?
            }
        };
        let proxy = self.make_proxy(id, kind, link);
        crate::servants::activate_proxy(&shared, &proxy)?;
        st.proxies.insert(id, proxy.clone());
        Ok(proxy)
    }

    pub(crate) fn make_proxy(self: &Arc<Self>, id: u64, kind: Kind, link: Link) -> Proxy {
        let channel = Arc::downgrade(self);
        match kind {
            Kind::PushConsumer => Proxy::PushConsumer(Arc::new(PushConsumerProxy {
                id,
                channel,
                link,
                state: Mutex::new(Conn::Idle),
            })),
            Kind::PullConsumer => Proxy::PullConsumer(Arc::new(PullConsumerProxy {
                id,
                channel,
                link,
                state: Mutex::new(Conn::Idle),
                suspended: std::sync::atomic::AtomicBool::new(false),
                wake: Condvar::new(),
            })),
            Kind::PushSupplier => {
                let qos = link.qos();
                Proxy::PushSupplier(Arc::new(PushSupplierProxy {
                    id,
                    channel,
                    state: Mutex::new(PushState {
                        conn: Conn::Idle,
                        queue: self.queue_for(&qos),
                        suspended: false,
                        batch: qos.batch(),
                        pacing: qos.pacing(),
                        journal: Journal::new(&qos),
                    }),
                    link,
                    dropped: AtomicU64::new(0),
                    woken: AtomicBool::new(false),
                    waiter: Mutex::new(None),
                }))
            }
            // The other kinds are not proxies; the store never holds them as such.
            _ => {
                let qos = link.qos();
                Proxy::PullSupplier(Arc::new(PullSupplierProxy {
                    id,
                    channel,
                    link,
                    state: Mutex::new(PullState {
                        conn: Conn::Idle,
                        queue: self.queue_for(&qos),
                        waiters: VecDeque::new(),
                        journal: Journal::new(&qos),
                    }),
                    dropped: AtomicU64::new(0),
                }))
            }
        }
    }

    /// Writes proxy `p`'s record (its connection, QoS and filters); the caller holds the
    /// channel's lock.
    pub(crate) fn save_proxy(&self, shared: &Shared, p: &Proxy) -> Result<(), SystemException> {
        let link = p.link();
        let peer = lock(&link.peer).clone();
        let rec = match &self.notify {
            None => {
                let mut r = Record::object(p.kind(), self.id);
                r.connected = peer.is_some();
                r.data = peer.unwrap_or_default();
                r
            }
            Some(_) => {
                let mut r = Record::object(Kind::NotifyProxy, self.id);
                r.connected = peer.is_some();
                let suspended = match p {
                    Proxy::PushSupplier(s) => lock(&s.state).suspended,
                    Proxy::PullConsumer(s) => s.suspended.load(Ordering::Relaxed),
                    _ => false,
                };
                r.data = link
                    .encode(p.kind().code(), suspended)
                    .map_err(SystemException::from)?;
                r
            }
        };
        Ok(shared.store.put(p.id(), &rec)?)
    }

    /// Stores proxy `id` again (after a change of its QoS or filters).
    pub(crate) fn resave(&self, id: u64) -> Result<(), SystemException> {
        let shared = self.shared()?;
        let st = lock(&self.state);
        match st.proxies.get(&id) {
            Some(p) => self.save_proxy(&shared, p),
            None => Err(gone()),
        }
    }

    /// Adds a proxy read from the store, with its servant activated, its connection
    /// restored and its thread started.
    pub(crate) fn restore(self: &Arc<Self>, id: u64, rec: &Record, shared: &Shared) -> Proxy {
        // An event channel's proxy: its record holds the peer only.
        let (kind, link, peer_bytes, suspended) = if rec.kind == Kind::NotifyProxy {
            let object = |b: &[u8]| shared.object(b);
            match crate::admin::StoredProxy::decode(&rec.data, &object) {
                Ok(sp) => {
                    let kind = Kind::from_code(sp.mode).unwrap_or(Kind::PullSupplier);
                    let admin = self.admin(sp.admin).unwrap_or_else(|| {
                        eprintln!("corbina-events: proxy {id} of missing admin {}", sp.admin);
                        let default = if matches!(kind, Kind::PushSupplier | Kind::PullSupplier) {
                            self.id + 1
                        } else {
                            self.id + 2
                        };
                        self.admin(default).unwrap_or_else(|| {
                            Arc::new(Admin::new(default, 0, true, false, Qos::default()))
                        })
                    });
                    let mut link = Link::new(admin, sp.style);
                    link.filters = sp.filters;
                    link.mappings = sp.mappings;
                    *lock(&link.qos) = sp.qos;
                    (kind, link, sp.peer, sp.suspended)
                }
                Err(e) => {
                    eprintln!("corbina-events: proxy {id}: {e}");
                    let admin = self.admin(self.id + 1).unwrap_or_else(|| {
                        Arc::new(Admin::new(self.id + 1, 0, true, false, Qos::default()))
                    });
                    (
                        Kind::PullSupplier,
                        Link::new(admin, Style::Event),
                        Vec::new(),
                        false,
                    )
                }
            }
        } else {
            let admin = match rec.kind {
                Kind::PushSupplier | Kind::PullSupplier => self.id + 1,
                _ => self.id + 2,
            };
            let admin = self
                .admin(admin)
                .unwrap_or_else(|| Arc::new(Admin::new(admin, 0, true, false, Qos::default())));
            (
                rec.kind,
                Link::new(admin, Style::Event),
                rec.data.clone(),
                false,
            )
        };
        if rec.connected {
            *lock(&link.peer) = Some(peer_bytes.clone());
        }
        let style = link.style;
        let proxy = self.make_proxy(id, kind, link);
        match &proxy {
            Proxy::PushSupplier(p) => lock(&p.state).suspended = suspended,
            Proxy::PullConsumer(p) => p.suspended.store(suspended, Ordering::Relaxed),
            _ => {}
        }
        let peer = rec.connected.then(|| shared.object(&peer_bytes));
        if let Some(peer) = &peer {
            match &proxy {
                Proxy::PushConsumer(p) => {
                    *lock(&p.state) = Conn::Connected(peer.as_ref().map(|o| match style {
                        Style::Structured => Source::Structured(
                            crate::cos_notify_comm::StructuredPushSupplier::unchecked_narrow(o),
                        ),
                        Style::Sequence => Source::Sequence(
                            crate::cos_notify_comm::SequencePushSupplier::unchecked_narrow(o),
                        ),
                        _ => Source::Any(PushSupplier::unchecked_narrow(o)),
                    }));
                }
                Proxy::PullSupplier(p) => {
                    lock(&p.state).conn = Conn::Connected(peer.as_ref().map(|o| match style {
                        Style::Structured => PullPeer::Structured(
                            crate::cos_notify_comm::StructuredPullConsumer::unchecked_narrow(o),
                        ),
                        Style::Sequence => PullPeer::Sequence(
                            crate::cos_notify_comm::SequencePullConsumer::unchecked_narrow(o),
                        ),
                        _ => PullPeer::Any(PullConsumer::unchecked_narrow(o)),
                    }));
                }
                // A stored consumer or supplier we cannot call any more stays idle.
                Proxy::PushSupplier(p) => {
                    if let Some(peer) = peer {
                        lock(&p.state).conn = Conn::Connected(match style {
                            Style::Structured => {
                                Target::Structured(StructuredPushConsumer::unchecked_narrow(peer))
                            }
                            Style::Sequence => {
                                Target::Sequence(SequencePushConsumer::unchecked_narrow(peer))
                            }
                            _ => Target::Any(PushConsumer::unchecked_narrow(peer)),
                        });
                    }
                }
                Proxy::PullConsumer(p) => {
                    if let Some(peer) = peer {
                        *lock(&p.state) = Conn::Connected(match style {
                            Style::Structured => PullSource::Structured(
                                crate::cos_notify_comm::StructuredPullSupplier::unchecked_narrow(
                                    peer,
                                ),
                            ),
                            Style::Sequence => PullSource::Sequence(
                                crate::cos_notify_comm::SequencePullSupplier::unchecked_narrow(
                                    peer,
                                ),
                            ),
                            _ => PullSource::Any(PullSupplier::unchecked_narrow(peer)),
                        });
                    }
                }
            }
        }
        // Its persistent events, back in its queue.
        match &proxy {
            Proxy::PushSupplier(p) => {
                let st = &mut *lock(&p.state);
                let connected = matches!(st.conn, Conn::Connected(_));
                st.journal.reload(id, shared, &mut st.queue, connected);
            }
            Proxy::PullSupplier(p) => {
                let st = &mut *lock(&p.state);
                let connected = matches!(st.conn, Conn::Connected(_));
                st.journal.reload(id, shared, &mut st.queue, connected);
            }
            _ => {}
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
        let proxy = &st.proxies[&id];
        debug_assert_eq!(proxy.kind(), kind);
        let link = proxy.link();
        let before = lock(&link.peer).replace(encapsulate(peer)?);
        if let Err(e) = self.save_proxy(&shared, proxy) {
            *lock(&link.peer) = before;
            return Err(e.into());
        }
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
            ids.extend(st.admins.keys().copied());
            ids.push(self.id);
            shared.store.remove(&ids, self.params.ins_name.as_deref())?;
            st.destroyed = true;
            let ps = st.proxies.drain().map(|(_, p)| p).collect();
            self.rebuild_sinks(&st);
            ps
        };
        if let Some(n) = &self.params.ins_name {
            shared.orb.unbind_object_key(n.as_bytes());
        }
        let admins: Vec<u64> = lock(&self.state).admins.keys().copied().collect();
        for id in admins.into_iter().chain([self.id]) {
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
pub(crate) enum Failure {
    /// The peer is gone or refused the connection: disconnect without telling it.
    Gone,
    /// Unreachable for now: retry after a back-off.
    Retry,
    /// The peer failed this one call: go on.
    Skip,
}

/// A consumer's `Disconnected` drops it; a system exception is classified.
macro_rules! failure_from {
    ($($error:ident),*) => {$(
        impl From<$error> for Failure {
            fn from(e: $error) -> Failure {
                match e {
                    $error::Disconnected(_) => Failure::Gone,
                    $error::System(e) => classify(&e),
                }
            }
        }
    )*};
}

failure_from!(
    PushError,
    PushStructuredEventError,
    PushStructuredEventsError
);

pub(crate) fn classify(e: &SystemException) -> Failure {
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
    fn offer(&self, event: &Arc<Event>, now: Instant) {
        let mut st = lock(&self.state);
        if !matches!(st.conn, Conn::Connected(_)) {
            return;
        }
        let state = &mut *st;
        let dropped = state
            .journal
            .queue(self.id, &self.channel, &mut state.queue, event, now);
        drop(st);
        if dropped > 0 {
            self.dropped.fetch_add(dropped, Ordering::Relaxed);
        }
        self.poke();
    }

    /// Wakes the delivery thread: something changed (an event queued, a reply arrived, the
    /// QoS or the connection changed). The flag is set before the lock is taken, so a
    /// thread about to wait (holding the lock) sees it or gets the notification.
    pub(crate) fn poke(&self) {
        self.woken.store(true, Ordering::Release);
        if let Some(w) = lock(&self.waiter).take() {
            w.wake();
        }
    }

    /// Applies the proxy's QoS to its queue and batches.
    pub(crate) fn apply_qos(&self, qos: &Qos, max_queue: u32) {
        let mut st = lock(&self.state);
        st.queue
            .set_policies(qos.order(), qos.discard(), qos.max_events(max_queue));
        st.batch = qos.batch();
        st.pacing = qos.pacing();
        st.journal.on = qos.persistent_events();
        drop(st);
        self.poke();
    }

    /// Starts the thread that pushes the queue to the consumer.
    pub(crate) fn start(self: Arc<Self>) -> Result<(), SystemException> {
        spawn(format!("events-push-{}", self.id), move || self.run())
    }

    /// The next events to push now (one, or a batch for a sequence consumer): `Err` with
    /// how long to wait at most for one (`None`: until woken).
    fn take(
        &self,
        st: &mut PushState,
        target: &Target,
    ) -> Result<Vec<Arc<Event>>, Option<Duration>> {
        if st.suspended {
            return Err(None);
        }
        let now = Instant::now();
        let batch = match target {
            Target::Sequence(_) => st.batch,
            _ => 1,
        };
        // A sequence consumer's batch waits for more events until it is full or its
        // pacing interval has passed since its first event arrived.
        if let (true, Some(since)) = (batch > 1, st.queue.since) {
            if st.queue.len() < batch && !st.pacing.is_zero() {
                if let Some(w) = (since + st.pacing).checked_duration_since(now) {
                    if !w.is_zero() {
                        return Err(Some(w));
                    }
                }
            }
        }
        let events = st.queue.pop_many(batch, now, &self.dropped);
        // Expired ones: gone from the store too (delivered ones once their push returned).
        forget(&self.channel, self.id, &st.queue.take_gone());
        if events.is_empty() {
            // Events waiting for their StartTime: until the first is due.
            Err(st.queue.next_start(now).map(|s| s - now))
        } else {
            Ok(events)
        }
    }

    /// The delivery thread: keeps up to [`Options::push_window`] pushes in flight on the
    /// consumer's own connection (written in order, so delivered in order), and handles
    /// their outcomes in order. A push failing with TRANSIENT, COMM_FAILURE or TIMEOUT puts
    /// it and every later one not yet done back in front of the queue; they are sent again,
    /// one at a time, after a back-off, until one succeeds (then the window opens again) or
    /// the retries run out (then the consumer is disconnected). The thread runs a tokio
    /// runtime of its own, whose I/O driver reads the consumer's connection: a reply wakes
    /// this thread directly, with no reader thread between.
    fn run(self: Arc<Self>) {
        let Some(shared) = self.channel.upgrade().and_then(|c| c.shared.upgrade()) else {
            return;
        };
        let options = shared.options.clone();
        let target = match &lock(&self.state).conn {
            Conn::Connected(t) => t.clone(),
            _ => return,
        };
        // Pipelined on a connection of its own; a collocated consumer is called directly.
        let calls = Caller::new(&shared.orb, &target, options.push_window);
        drop(shared);
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            Err(e) => {
                eprintln!("corbina-events: proxy {}: no runtime: {e}", self.id);
                return self.drop_out(true);
            }
        };
        let mut d = Delivery {
            proxy: &self,
            options,
            target,
            calls,
            flight: VecDeque::new(),
            again: VecDeque::new(),
            failures: 0,
            delivered: false,
            resume: None,
            timer: None,
        };
        if let Some(notify) = runtime.block_on(std::future::poll_fn(|cx| d.step(cx))) {
            self.drop_out(notify);
        }
    }

    fn drop_out(&self, notify: bool) {
        if let Some(ch) = self.channel.upgrade() {
            let _ = ch.disconnect(self.id, notify);
        }
    }
}

/// The state of a push consumer's delivery thread (see [`PushSupplierProxy::run`]).
struct Delivery<'p> {
    proxy: &'p PushSupplierProxy,
    options: Options,
    target: Target,
    calls: Caller,
    flight: VecDeque<InFlight>,
    /// Batches to send again (a failed push and those after it), before the queue's.
    again: VecDeque<Vec<Arc<Event>>>,
    failures: u32,
    /// A push has reached the consumer: until then one push at a time, so that a consumer
    /// not ready yet (its POA manager still holding or discarding) refuses the first event
    /// alone, not it and the ones behind it, which would then arrive first.
    delivered: bool,
    /// No push before then (the back-off after a failure).
    resume: Option<Instant>,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Delivery<'_> {
    /// Does what can be done now: `Ready(None)` once disconnected, `Ready(Some(notify))`
    /// when the consumer must be dropped (`notify`: told so).
    fn step(&mut self, cx: &mut Context<'_>) -> Poll<Option<bool>> {
        let p = self.proxy;
        loop {
            // Outcomes, in order.
            for f in self.flight.iter_mut() {
                if f.done.is_none() {
                    if let Some(call) = f.call.as_mut() {
                        if let Poll::Ready(r) = call.as_mut().poll(cx) {
                            f.done = Some(r);
                            f.call = None;
                        }
                    }
                }
            }
            while let Some(done) = self.flight.front().and_then(|f| f.done.as_ref()) {
                match done {
                    Ok(()) => {
                        self.failures = 0;
                        self.delivered = true;
                    }
                    Err(Failure::Gone) => return Poll::Ready(Some(false)),
                    Err(Failure::Skip) => {
                        let n = self.flight.front().map_or(0, |f| f.batch.len());
                        p.dropped.fetch_add(n as u64, Ordering::Relaxed);
                    }
                    Err(Failure::Retry) => {
                        self.failures += 1;
                        if self.failures > self.options.push_retries {
                            return Poll::Ready(Some(true));
                        }
                        // Cancelled (dropped futures) and queued again, in order; those
                        // already delivered are not sent twice.
                        let mut redo: VecDeque<Vec<Arc<Event>>> = self
                            .flight
                            .drain(..)
                            .filter(|f| !matches!(f.done, Some(Ok(()))))
                            .map(|f| f.batch)
                            .collect();
                        redo.append(&mut self.again);
                        self.again = redo;
                        self.resume = Some(Instant::now() + backoff(&self.options, self.failures));
                        break;
                    }
                }
                // Delivered (or refused by the consumer): no longer stored.
                if let Some(f) = self.flight.pop_front() {
                    let keys: Vec<u64> = f.batch.iter().filter_map(|e| e.key).collect();
                    forget(&p.channel, p.id, &keys);
                }
            }
            // New pushes, while the window has room.
            let window = if self.failures > 0 || !self.delivered {
                1
            } else {
                self.options.push_window.max(1)
            };
            let mut wait = None;
            let mut progressed = false;
            let now = Instant::now();
            if let Some(r) = self.resume.filter(|r| *r > now) {
                wait = Some(r - now);
            } else {
                self.resume = None;
                while self.flight.len() < window {
                    let batch = match self.again.pop_front() {
                        Some(b) => b,
                        None => {
                            let mut st = lock(&p.state);
                            if !matches!(st.conn, Conn::Connected(_)) {
                                return Poll::Ready(None);
                            }
                            match p.take(&mut st, &self.target) {
                                Ok(b) => b,
                                Err(w) => {
                                    wait = w;
                                    break;
                                }
                            }
                        }
                    };
                    let mut call = self.calls.push(&batch);
                    // The first poll writes the request: in order, on one connection.
                    let done = match call.as_mut().poll(cx) {
                        Poll::Ready(r) => Some(r),
                        Poll::Pending => None,
                    };
                    progressed |= done.is_some();
                    self.flight.push_back(InFlight {
                        batch,
                        call: done.is_none().then_some(call),
                        done,
                    });
                }
            }
            if progressed {
                continue;
            }
            // Woken by a reply (the calls hold `cx`'s waker), a poke, or the timer.
            *lock(&p.waiter) = Some(cx.waker().clone());
            if p.woken.swap(false, Ordering::AcqRel) {
                continue;
            }
            if !matches!(lock(&p.state).conn, Conn::Connected(_)) {
                return Poll::Ready(None);
            }
            self.timer = wait.map(|w| Box::pin(tokio::time::sleep(w)));
            if let Some(t) = self.timer.as_mut() {
                if t.as_mut().poll(cx).is_ready() {
                    continue;
                }
            }
            return Poll::Pending;
        }
    }
}

/// A push on its way to the consumer.
type Call = Pin<Box<dyn Future<Output = Result<(), Failure>> + Send>>;

/// A push in flight: its events, and its call until it completed (then its outcome).
struct InFlight {
    batch: Vec<Arc<Event>>,
    call: Option<Call>,
    done: Option<Result<(), Failure>>,
}

/// How a delivery thread calls its consumer: asynchronous proxies on a connection of
/// the consumer's own (a collocated consumer's stay as they are: called directly).
enum Caller {
    /// A window of 1: each push a synchronous call (the cheapest way to wait for each reply).
    Sync(Target),
    Any(PushConsumerAsync),
    Structured(StructuredPushConsumerAsync),
    Sequence(SequencePushConsumerAsync),
}

impl Caller {
    fn new(orb: &Orb, target: &Target, window: usize) -> Caller {
        if window <= 1 {
            return Caller::Sync(target.clone());
        }
        let own = |o: &ObjectRef| {
            if o.is_collocated() {
                o.clone()
            } else {
                orb.object_on_own_connection(o)
                    .unwrap_or_else(|_| o.clone())
            }
        };
        match target {
            Target::Any(c) => Caller::Any(PushConsumerAsync::unchecked_narrow(&own(c.as_object()))),
            Target::Structured(c) => Caller::Structured(
                StructuredPushConsumerAsync::unchecked_narrow(&own(c.as_object())),
            ),
            Target::Sequence(c) => Caller::Sequence(SequencePushConsumerAsync::unchecked_narrow(
                &own(c.as_object()),
            )),
        }
    }

    /// Pushes `batch` (one event, but for sequence consumers).
    fn push(&self, batch: &[Arc<Event>]) -> Call {
        let batch = batch.to_vec();
        match self {
            Caller::Sync(t) => Box::pin(std::future::ready(t.push(&batch))),
            Caller::Any(c) => {
                let c = c.clone();
                Box::pin(async move {
                    for e in batch {
                        c.push(e.any()).await?;
                    }
                    Ok(())
                })
            }
            Caller::Structured(c) => {
                let c = c.clone();
                Box::pin(async move {
                    for e in batch {
                        c.push_structured_event(e.structured()).await?;
                    }
                    Ok(())
                })
            }
            Caller::Sequence(c) => {
                let c = c.clone();
                let events: Vec<_> = batch.iter().map(|e| e.structured().clone()).collect();
                Box::pin(async move { Ok(c.push_structured_events(&events).await?) })
            }
        }
    }
}

impl PullSupplierProxy {
    fn offer(self: &Arc<Self>, event: &Arc<Event>, now: Instant) {
        let mut st = lock(&self.state);
        if !matches!(st.conn, Conn::Connected(_)) {
            return;
        }
        if let Some(start) = event.start.filter(|s| *s > now) {
            // Waiting pulls get it at its StartTime.
            let me = Arc::downgrade(self);
            let _ = std::thread::Builder::new()
                .name(format!("events-start-{}", self.id))
                .spawn(move || {
                    std::thread::sleep(start.saturating_duration_since(Instant::now()));
                    if let Some(p) = me.upgrade() {
                        p.serve_waiters(lock(&p.state));
                    }
                });
        }
        let state = &mut *st;
        let dropped = state
            .journal
            .queue(self.id, &self.channel, &mut state.queue, event, now);
        if dropped > 0 {
            self.dropped.fetch_add(dropped, Ordering::Relaxed);
        }
        self.serve_waiters(st);
    }

    /// Answers waiting pulls while there are events, outside the lock.
    fn serve_waiters(&self, mut st: MutexGuard<'_, PullState>) {
        let mut replies = Vec::new();
        while let Some(max) = st.waiters.front().map(Waiter::max) {
            let batch = self.take(&mut st, max);
            if batch.is_empty() {
                break;
            }
            if let Some(w) = st.waiters.pop_front() {
                replies.push((w, batch));
            }
        }
        drop(st);
        for (w, batch) in replies {
            w.reply(&batch);
        }
    }

    /// Up to `max` live events from the queue (no longer stored: a pull is answered once).
    fn take(&self, st: &mut PullState, max: usize) -> Vec<Arc<Event>> {
        let events = st.queue.pop_many(max, Instant::now(), &self.dropped);
        let mut keys = st.queue.take_gone();
        keys.extend(events.iter().filter_map(|e| e.key));
        forget(&self.channel, self.id, &keys);
        events
    }

    /// A `pull` of any kind: answered now, or when events arrive.
    pub(crate) fn pull(&self, w: Waiter) {
        let mut st = lock(&self.state);
        match &st.conn {
            Conn::Connected(_) => {}
            Conn::Idle => {
                drop(st);
                return w.disconnected();
            }
            Conn::Gone => {
                drop(st);
                return w.fail(gone());
            }
        }
        st.waiters.push_back(w);
        self.serve_waiters(st);
    }

    /// A `try_pull` of any kind: up to `max` events now (none: an empty batch).
    pub(crate) fn try_take(&self, max: usize) -> Result<Vec<Arc<Event>>, TryFail> {
        let mut st = lock(&self.state);
        match &st.conn {
            Conn::Connected(_) => Ok(self.take(&mut st, max)),
            Conn::Idle => Err(TryFail::Disconnected),
            Conn::Gone => Err(TryFail::System(gone())),
        }
    }

    /// Applies the proxy's QoS to its queue.
    pub(crate) fn apply_qos(&self, qos: &Qos, max_queue: u32) {
        let mut st = lock(&self.state);
        st.queue
            .set_policies(qos.order(), qos.discard(), qos.max_events(max_queue));
        st.journal.on = qos.persistent_events();
    }
}

/// Why a `try_pull` of any kind failed.
pub(crate) enum TryFail {
    Disconnected,
    System(SystemException),
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
            let wait = if self.suspended.load(Ordering::Relaxed) {
                period.max(Duration::from_millis(10))
            } else {
                match supplier.try_pull(self.link.qos().batch()) {
                    Ok(events) if !events.is_empty() => {
                        failures = 0;
                        let Some(ch) = self.channel.upgrade() else {
                            return;
                        };
                        for body in events {
                            ch.publish(self.link.event(body), &self.link);
                        }
                        continue;
                    }
                    Ok(_) => {
                        failures = 0;
                        period
                    }
                    Err(Failure::Gone) => return self.drop_out(false),
                    Err(Failure::Skip) => period,
                    Err(Failure::Retry) => {
                        failures += 1;
                        if failures > options.push_retries {
                            return self.drop_out(true);
                        }
                        backoff(&options, failures).max(period)
                    }
                }
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
