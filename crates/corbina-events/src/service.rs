//! [`EventService`]: the channels, their factory and their store, served by an ORB.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use corbina::poa::{IdAssignmentPolicy, KeyTableError, LifespanPolicy, PoaError, PolicyList};
use corbina::{ObjectRef, Orb, SystemException};

use crate::channel::{oid, Channel, Shared};
use crate::cos_event_channel_admin::EventChannel;
use crate::cos_notify_channel_admin::{
    EventChannelFactory as NotifyChannelFactory,
    EventChannelFactorySkeleton as NotifyFactorySkeleton,
};
use crate::cos_notify_filter::{FilterFactory, FilterFactorySkeleton};
use crate::factory::Factory;
use crate::notify::NOTIFY_FACTORY_KEY;
use crate::omni_events::{EventChannelFactory, EventChannelFactorySkeleton};
use crate::servants::activate_channel;
use crate::store::{ChannelParams, Kind, Store, StoreError};

/// The object key of the default channel (`corbaloc::host:port/EventChannel`).
pub const CHANNEL_KEY: &str = "EventChannel";
/// The object key of the channel factory (`corbaloc::host:port/EventChannelFactory`).
pub const FACTORY_KEY: &str = "EventChannelFactory";
/// The object key of the Notification Service's filter factory
/// (`corbaloc::host:port/FilterFactory`).
pub const FILTER_FACTORY_KEY: &str = "FilterFactory";
/// The PERSISTENT POA of every channel, admin and proxy. Its name is part of their object
/// keys: changing it breaks the references clients hold.
pub const EVENTS_POA: &str = "CorbinaEvents";
/// Events held per consumer by default (omniEvents' default `MaxQueueLength` is 1023).
pub const DEFAULT_MAX_QUEUE: u32 = 1024;
/// The most proxies a channel may have by default (omniEvents' `MaxNumProxies`).
pub const DEFAULT_MAX_PROXIES: u32 = 1024;
/// The wait before asking a pull supplier again after `try_pull` found nothing, by default.
pub const DEFAULT_PULL_RETRY: Duration = Duration::from_millis(100);
/// Failed pushes in a row (TRANSIENT, COMM_FAILURE, TIMEOUT) after which a consumer is
/// disconnected, by default.
pub const DEFAULT_PUSH_RETRIES: u32 = 5;
/// The wait before the first retry, by default (it doubles at each retry).
pub const DEFAULT_RETRY_BACKOFF: Duration = Duration::from_millis(50);
/// The longest wait between retries, by default.
pub const DEFAULT_MAX_BACKOFF: Duration = Duration::from_secs(2);
/// Pushes in flight to one consumer at once, by default: 1, each push a synchronous call.
/// (Pipelining on the asynchronous client measured slower on loopback: a window pays off
/// only where the round trip, not the CPU, bounds a consumer's rate.)
pub const DEFAULT_PUSH_WINDOW: usize = 1;

/// How to run an event service.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where the database (`events.redb`) lives.
    pub data_dir: PathBuf,
    /// `MaxQueueLength` of channels created without one (the default channel among them).
    pub max_queue: u32,
    /// `PullRetryPeriod_ms` of channels created without one.
    pub pull_retry: Duration,
    /// `MaxNumProxies` of channels created without one.
    pub max_proxies: u32,
    /// Failed deliveries in a row after which a consumer (or pull supplier) is disconnected.
    pub push_retries: u32,
    /// The wait before the first retry of a failed delivery.
    pub retry_backoff: Duration,
    /// The longest wait between retries.
    pub max_backoff: Duration,
    /// Pushes in flight to one push consumer at once, pipelined on a connection of the
    /// consumer's own and delivered in order (1: each push waits for the previous reply).
    pub push_window: usize,
}

impl Options {
    /// Defaults, with the database in `data_dir`.
    pub fn new(data_dir: impl Into<PathBuf>) -> Options {
        Options {
            data_dir: data_dir.into(),
            max_queue: DEFAULT_MAX_QUEUE,
            pull_retry: DEFAULT_PULL_RETRY,
            max_proxies: DEFAULT_MAX_PROXIES,
            push_retries: DEFAULT_PUSH_RETRIES,
            retry_backoff: DEFAULT_RETRY_BACKOFF,
            max_backoff: DEFAULT_MAX_BACKOFF,
            push_window: DEFAULT_PUSH_WINDOW,
        }
    }
}

/// The default data directory: `$XDG_STATE_HOME/corbina-events`, else
/// `$HOME/.local/state/corbina-events`, else `./corbina-events`.
pub fn default_data_dir() -> PathBuf {
    corbina::config::default_state_dir("corbina-events")
}

/// Why an event service could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The database could not be opened or read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The POA could not be created (one of that name exists already?).
    #[error("POA: {0}")]
    Poa(#[from] PoaError),
    /// A corbaloc key is bound already in this ORB's object key table.
    #[error("object key table: {0}")]
    KeyTable(#[from] KeyTableError),
    /// The ORB's server could not start, or an object could not be activated.
    #[error("ORB: {0}")]
    System(#[from] SystemException),
}

impl Shared {
    /// The parameters of a channel created without criteria.
    pub(crate) fn default_params(&self) -> ChannelParams {
        ChannelParams {
            max_queue: self.options.max_queue.max(1),
            pull_retry_ms: u32::try_from(self.options.pull_retry.as_millis()).unwrap_or(u32::MAX),
            max_proxies: self.options.max_proxies.max(1),
            ins_name: None,
        }
    }
}

/// Serves a channel: activates it and its admins, binds its corbaloc name.
fn serve_channel(shared: &Arc<Shared>, ch: &Arc<Channel>) -> Result<ObjectRef, SystemException> {
    activate_channel(shared, ch)?;
    let r = shared.reference(ch.id, EventChannel::REPOSITORY_ID);
    if let Some(n) = &ch.params.ins_name {
        if let Err(e) = shared.orb.bind_object_key_to(n.as_bytes(), &r) {
            // Only FACTORY_KEY could clash, and the factory refuses it as an InsName.
            eprintln!("corbina-events: corbaloc key {n:?}: {e}");
        }
    }
    shared
        .channels
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(ch.id, ch.clone());
    Ok(r)
}

/// Creates, stores and serves a channel; `None` when its `InsName` is taken.
pub(crate) fn create_channel(
    shared: &Arc<Shared>,
    params: ChannelParams,
) -> Result<Option<ObjectRef>, SystemException> {
    let Some(id) = shared.store.create_channel(&params)? else {
        return Ok(None);
    };
    let ch = Channel::new(id, params, Arc::downgrade(shared), None);
    serve_channel(shared, &ch).map(Some)
}

/// A running event service: its channels are served as long as the ORB runs.
pub struct EventService {
    shared: Arc<Shared>,
    channel: EventChannel,
    factory: EventChannelFactory,
    filter_factory: FilterFactory,
    notify_factory: NotifyChannelFactory,
    endpoint: (String, u16),
}

impl std::fmt::Debug for EventService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventService")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl EventService {
    /// Opens the store, creates the PERSISTENT POA under the RootPOA (sharing its manager,
    /// which it activates), starts the ORB's server, serves every stored channel and proxy
    /// again (reconnecting their peers) and the default channel and factory under the
    /// object keys `EventChannel` and `EventChannelFactory`.
    pub fn start(orb: &Orb, options: &Options) -> Result<EventService, ServiceError> {
        let store = Store::open(&options.data_dir)?;
        let root_poa = orb.root_poa();
        let manager = root_poa.the_poa_manager();
        let poa = root_poa.create_poa(
            EVENTS_POA,
            Some(manager.clone()),
            PolicyList::default()
                .with_lifespan(LifespanPolicy::Persistent)
                .with_id_assignment(IdAssignmentPolicy::UserId),
        )?;
        let endpoint = orb.ensure_server()?;
        let shared = Arc::new(Shared {
            orb: orb.clone(),
            poa: poa.clone(),
            store,
            options: options.clone(),
            channels: Mutex::new(HashMap::new()),
        });
        let objects = shared.store.objects()?;
        let mut channels = HashMap::new();
        for (id, rec) in &objects {
            if let (Kind::Channel, Some(params)) = (rec.kind, &rec.params) {
                let ch = Channel::new(*id, params.clone(), Arc::downgrade(&shared), None);
                serve_channel(&shared, &ch)?;
                channels.insert(*id, ch);
            }
            if rec.kind == Kind::NotifyChannel {
                match crate::admin::NotifyParams::decode(&rec.data) {
                    Ok(n) => {
                        let params = crate::notify::notify_params(&shared);
                        let ch = Channel::new(*id, params, Arc::downgrade(&shared), Some(n));
                        crate::notify::serve(&shared, &ch)?;
                        channels.insert(*id, ch);
                    }
                    Err(e) => eprintln!("corbina-events: notification channel {id}: {e}"),
                }
            }
        }
        // Admins before proxies: a proxy belongs to one.
        for (id, rec) in &objects {
            let consumer = match rec.kind {
                Kind::NotifyConsumerAdmin => true,
                Kind::NotifySupplierAdmin => false,
                _ => continue,
            };
            let r = match channels.get(&rec.channel) {
                Some(ch) => crate::notify::restore_admin(&shared, ch, *id, consumer, &rec.data),
                None => Err(format!("of missing channel {}", rec.channel)),
            };
            if let Err(e) = r {
                eprintln!("corbina-events: admin {id}: {e}");
            }
        }
        for (id, rec) in &objects {
            match rec.kind {
                Kind::Channel
                | Kind::ConsumerAdmin
                | Kind::SupplierAdmin
                | Kind::NotifyChannel
                | Kind::NotifyConsumerAdmin
                | Kind::NotifySupplierAdmin => continue,
                Kind::Filter | Kind::MappingFilter => {
                    if let Err(e) = crate::filter::restore(&shared, *id, rec) {
                        eprintln!("corbina-events: filter {id}: {e}");
                    }
                    continue;
                }
                _ => {}
            }
            match channels.get(&rec.channel) {
                Some(ch) => {
                    ch.restore(*id, rec, &shared);
                }
                // A proxy whose channel is gone (the store was changed by hand?).
                None => eprintln!(
                    "corbina-events: proxy {id} of missing channel {}",
                    rec.channel
                ),
            }
        }
        let channel = match shared.store.ins(CHANNEL_KEY)? {
            Some(id) => shared.reference(id, EventChannel::REPOSITORY_ID),
            None => {
                let mut params = shared.default_params();
                params.ins_name = Some(CHANNEL_KEY.to_owned());
                create_channel(&shared, params)?
                    .ok_or_else(|| StoreError::from("the default channel's name is taken"))?
            }
        };
        poa.activate_object_with_id(
            oid(0),
            Arc::new(EventChannelFactorySkeleton::new(Factory {
                shared: Arc::downgrade(&shared),
            })),
        )?;
        let factory = shared.reference(0, EventChannelFactory::REPOSITORY_ID);
        let factory = orb.bind_object_key_to(FACTORY_KEY.as_bytes(), &factory)?;
        poa.activate_object_with_id(
            oid(1),
            Arc::new(FilterFactorySkeleton::new(crate::filter::FilterFactory {
                shared: Arc::downgrade(&shared),
            })),
        )?;
        let filter_factory = shared.reference(1, FilterFactory::REPOSITORY_ID);
        let filter_factory =
            orb.bind_object_key_to(FILTER_FACTORY_KEY.as_bytes(), &filter_factory)?;
        poa.activate_object_with_id(
            oid(2),
            Arc::new(NotifyFactorySkeleton::new(crate::notify::Factory {
                shared: Arc::downgrade(&shared),
            })),
        )?;
        let notify_factory = shared.reference(2, NotifyChannelFactory::REPOSITORY_ID);
        let notify_factory =
            orb.bind_object_key_to(NOTIFY_FACTORY_KEY.as_bytes(), &notify_factory)?;
        manager.activate()?;
        Ok(EventService {
            filter_factory: FilterFactory::unchecked_narrow(&filter_factory),
            notify_factory: NotifyChannelFactory::unchecked_narrow(&notify_factory),
            channel: EventChannel::unchecked_narrow(&channel),
            factory: EventChannelFactory::unchecked_narrow(&factory),
            shared,
            endpoint,
        })
    }

    /// The default channel.
    pub fn channel(&self) -> &EventChannel {
        &self.channel
    }

    /// The channel factory.
    pub fn factory(&self) -> &EventChannelFactory {
        &self.factory
    }

    /// The Notification Service's filter factory.
    pub fn filter_factory(&self) -> &FilterFactory {
        &self.filter_factory
    }

    /// The Notification Service's channel factory (served under the object key
    /// [`NOTIFY_FACTORY_KEY`]).
    pub fn notify_factory(&self) -> &NotifyChannelFactory {
        &self.notify_factory
    }

    /// The host and port written into the service's references.
    pub fn endpoint(&self) -> (&str, u16) {
        (&self.endpoint.0, self.endpoint.1)
    }

    /// How many channels are served.
    pub fn channel_count(&self) -> usize {
        self.channels().len()
    }

    /// How many push and pull consumers are connected to the channels, in all.
    pub fn consumer_count(&self) -> usize {
        self.channels().iter().map(|c| c.consumer_count()).sum()
    }

    /// How many proxies the channels have, connected or not.
    pub fn proxy_count(&self) -> usize {
        self.channels().iter().map(|c| c.proxy_count()).sum()
    }

    fn channels(&self) -> Vec<Arc<Channel>> {
        self.shared
            .channels
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }
}

impl Drop for EventService {
    fn drop(&mut self) {
        let orb = &self.shared.orb;
        orb.unbind_object_key(FACTORY_KEY.as_bytes());
        orb.unbind_object_key(FILTER_FACTORY_KEY.as_bytes());
        orb.unbind_object_key(NOTIFY_FACTORY_KEY.as_bytes());
        for ch in self.channels() {
            if let Some(n) = &ch.params.ins_name {
                orb.unbind_object_key(n.as_bytes());
            }
            ch.stop();
        }
        self.shared.poa.destroy(false, false);
    }
}
