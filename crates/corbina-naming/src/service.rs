//! [`NamingService`]: the root context and every context below it, served by an ORB.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use corbina::poa::{
    IdAssignmentPolicy, IdUniquenessPolicy, KeyTableError, LifespanPolicy, ObjectId, PoaError,
    PolicyList, RequestProcessingPolicy, ServantRetentionPolicy,
};
use corbina::{Orb, SystemException};

use crate::context::{ContextServant, Shared, LEASES_OID};
use crate::cos_naming::NamingContextExt;
use crate::iterator::Iterators;
use crate::store::etcd::EtcdConfig;
#[cfg(feature = "etcd")]
use crate::store::etcd::EtcdStore;
use crate::store::redb::RedbStore;
use crate::store::{Store, StoreError, ROOT};

/// The object key of the root context (`corbaloc::host:2809/NameService`).
pub const ROOT_KEY: &[u8] = b"NameService";
/// The object key of the lease interface (`corbaloc::host:2809/NameServiceLeases`).
pub const LEASES_KEY: &[u8] = b"NameServiceLeases";
/// How often the service removes the bindings of expired leases (redb; etcd does it).
pub const LEASE_SWEEP: Duration = Duration::from_millis(200);
/// The PERSISTENT POA of the contexts. Its name is part of every context's object key:
/// changing it breaks the references clients hold.
pub const CONTEXT_POA: &str = "CorbinaNaming";
/// The TRANSIENT POA of the binding iterators.
pub const ITERATOR_POA: &str = "CorbinaNamingIterators";
/// How long a binding iterator may stay unused before it is dropped, by default.
pub const DEFAULT_ITERATOR_TIMEOUT: Duration = Duration::from_secs(60);
/// How many binding iterators may exist at once, by default.
pub const DEFAULT_MAX_ITERATORS: usize = 1024;

/// How to run a naming service.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where the database (`naming.redb`) lives, unless `etcd` is set.
    pub data_dir: PathBuf,
    /// The etcd cluster and key prefix to keep the naming graph in instead of `data_dir`
    /// (several services on one prefix are replicas of one naming service).
    pub etcd: Option<EtcdConfig>,
    /// Every replica's address (`host`, `port`), this one's included, when several
    /// services share one etcd prefix: contexts bound through any of them are handled
    /// locally. (The ORB's `publish_addresses` puts them into the references.)
    pub replicas: Vec<(String, u16)>,
    /// Idle time after which a binding iterator is dropped.
    pub iterator_timeout: Duration,
    /// The most binding iterators alive at once (a new one evicts the least recently used).
    pub max_iterators: usize,
}

impl Options {
    /// Defaults, with the naming graph in etcd.
    pub fn etcd(config: EtcdConfig) -> Options {
        Options {
            etcd: Some(config),
            ..Options::new(PathBuf::new())
        }
    }

    /// Where the naming graph lives, for logs.
    pub fn describe_store(&self) -> String {
        match &self.etcd {
            Some(c) => format!("etcd {} under {}/", c.hosts(), c.prefix),
            None => format!("{}", self.data_dir.display()),
        }
    }

    /// Defaults, with the database in `data_dir`.
    pub fn new(data_dir: impl Into<PathBuf>) -> Options {
        Options {
            data_dir: data_dir.into(),
            etcd: None,
            replicas: Vec::new(),
            iterator_timeout: DEFAULT_ITERATOR_TIMEOUT,
            max_iterators: DEFAULT_MAX_ITERATORS,
        }
    }
}

/// The default data directory: `$XDG_STATE_HOME/corbina-names`, else
/// `$HOME/.local/state/corbina-names`, else `./corbina-names`.
pub fn default_data_dir() -> PathBuf {
    corbina::config::default_state_dir("corbina-names")
}

/// Why a naming service could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The store could not be opened (etcd: not reachable, or without quorum).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The POAs could not be created (one of that name exists already?).
    #[error("POA: {0}")]
    Poa(#[from] PoaError),
    /// `NameService` is bound already in this ORB's object key table.
    #[error("object key table: {0}")]
    KeyTable(#[from] KeyTableError),
    /// The ORB's server could not start.
    #[error("ORB: {0}")]
    System(#[from] SystemException),
}

/// A running naming service: its contexts are served as long as the ORB runs.
pub struct NamingService {
    shared: Arc<Shared>,
    root: NamingContextExt,
}

impl std::fmt::Debug for NamingService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamingService")
            .field("endpoint", &self.shared.endpoint)
            .finish_non_exhaustive()
    }
}

impl NamingService {
    /// Opens the store, creates the contexts' PERSISTENT POA and the iterators' POA under
    /// the RootPOA (sharing its manager, which it activates), starts the ORB's server, and
    /// binds the root context to the object key `NameService` and the lease interface to
    /// `NameServiceLeases`; a thread sweeps expired leases (redb) until the service goes.
    pub fn start(orb: &Orb, options: &Options) -> Result<NamingService, ServiceError> {
        let store = match &options.etcd {
            #[cfg(feature = "etcd")]
            Some(c) => Store::new(Box::new(EtcdStore::connect(c)?)),
            #[cfg(not(feature = "etcd"))]
            Some(c) => {
                return Err(StoreError::Unavailable(format!(
                    "etcd {}: corbina-naming was built without its `etcd` feature",
                    c.hosts()
                ))
                .into())
            }
            None => Store::new(Box::new(RedbStore::open(&options.data_dir)?)),
        };
        let root_poa = orb.root_poa();
        let manager = root_poa.the_poa_manager();
        let contexts = root_poa.create_poa(
            CONTEXT_POA,
            Some(manager.clone()),
            PolicyList::default()
                .with_lifespan(LifespanPolicy::Persistent)
                .with_id_assignment(IdAssignmentPolicy::UserId)
                .with_id_uniqueness(IdUniquenessPolicy::MultipleId)
                .with_servant_retention(ServantRetentionPolicy::NonRetain)
                .with_request_processing(RequestProcessingPolicy::UseDefaultServant),
        )?;
        let iterator_poa =
            root_poa.create_poa(ITERATOR_POA, Some(manager.clone()), PolicyList::default())?;
        let endpoint = orb.ensure_server()?;
        let root_ctx = contexts.create_reference_with_id(
            &ObjectId(ROOT.to_be_bytes().to_vec()),
            NamingContextExt::REPOSITORY_ID,
        );
        let root = orb.bind_object_key_to(ROOT_KEY, &root_ctx)?;
        let leases = contexts.create_reference_with_id(
            &ObjectId(LEASES_OID.to_vec()),
            crate::leases_idl::Leases::REPOSITORY_ID,
        );
        orb.bind_object_key_to(LEASES_KEY, &leases)?;
        let shared = Arc::new(Shared {
            store,
            orb: orb.clone(),
            poa: contexts.clone(),
            iterators: Iterators::new(
                iterator_poa,
                options.iterator_timeout,
                options.max_iterators,
            ),
            endpoint,
            replicas: options.replicas.clone(),
            root_key: ROOT_KEY.to_vec(),
        });
        contexts.set_servant(Arc::new(ContextServant::new(Arc::downgrade(&shared))))?;
        let weak = Arc::downgrade(&shared);
        std::thread::Builder::new()
            .name("naming-lease-sweeper".into())
            .spawn(move || sweep_loop(weak))
            .map_err(|_| {
                SystemException::new(
                    corbina::SystemExceptionKind::NoResources,
                    corbina::error::minor::NO_RESOURCES_THREAD,
                )
            })?;
        manager.activate()?;
        Ok(NamingService {
            shared,
            root: NamingContextExt::unchecked_narrow(&root),
        })
    }

    /// The root context (its IOR carries the object key `NameService`).
    pub fn root(&self) -> &NamingContextExt {
        &self.root
    }

    /// The host and port written into the service's references.
    pub fn endpoint(&self) -> (&str, u16) {
        (&self.shared.endpoint.0, self.shared.endpoint.1)
    }

    /// How many binding iterators are alive.
    pub fn live_iterators(&self) -> usize {
        self.shared.iterators.live()
    }

    /// How many bindings and contexts the store holds (the root included).
    pub fn counts(&self) -> Result<(u64, u64), StoreError> {
        self.shared.store.counts()
    }
}

/// Removes expired leases' bindings until the service is gone.
fn sweep_loop(shared: std::sync::Weak<Shared>) {
    loop {
        std::thread::sleep(LEASE_SWEEP);
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if let Err(e) = shared.store.leases().sweep() {
            eprintln!("corbina-names: sweeping expired leases: {e}");
        }
    }
}

impl Drop for NamingService {
    fn drop(&mut self) {
        let orb = &self.shared.orb;
        orb.unbind_object_key(ROOT_KEY);
        orb.unbind_object_key(LEASES_KEY);
        self.shared.poa.destroy(false, false);
        self.shared.iterators.destroy();
    }
}
