//! Bindings with a lease: Corbina's extension to the naming service (`idl/CorbinaLeases.idl`).
//!
//! A server binds its objects under a lease and keeps the lease alive while it runs; when
//! it dies (even by `kill -9`), the keep-alives stop and its bindings disappear within the
//! lease's TTL, instead of being left for clients to resolve and get TRANSIENT from. The
//! bindings themselves are ordinary: omniORB's `nameclt`, JacORB or any CosNaming client
//! lists and resolves them. With the etcd store a lease is an etcd lease (TTL rounded up to
//! whole seconds; etcd deletes the keys); with redb the daemon sweeps expired leases every
//! [`crate::LEASE_SWEEP`].
//!
//! ```no_run
//! # fn demo(orb: &corbina::Orb, root: &corbina::ObjectRef, servant_ref: &corbina::ObjectRef) {
//! use std::time::Duration;
//! use corbina_naming::lease::{leases_of, LeasedBinding};
//!
//! let leases = leases_of(orb, root).unwrap();
//! // Bound while `binding` lives (a thread keeps the lease alive every TTL/3); dropped, it
//! // is unbound at once; if the process dies, within 10 s.
//! let binding = LeasedBinding::bind(&leases, "apps/echo.svc", servant_ref, Duration::from_secs(10)).unwrap();
//! # drop(binding);
//! # }
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use corbina::giop::{Ior, ObjectKey};
use corbina::{ObjectRef, Orb, SystemException};

pub use crate::leases_idl::{leases, BadName, LeaseId, Leases, UnknownLease};
use crate::LEASES_KEY;

/// The lease interface of the naming service whose root context (or any of its contexts'
/// references: the addresses are what counts) is `service`: the same addresses, every
/// replica's included, with the object key `NameServiceLeases`.
pub fn leases_of(orb: &Orb, service: &ObjectRef) -> Result<Leases, SystemException> {
    let ior = service.ior();
    let mut profiles = Vec::new();
    for mut p in ior.iiop_profiles().map_err(SystemException::from)? {
        p.object_key = ObjectKey::new(LEASES_KEY.to_vec());
        profiles.push(p.to_tagged().map_err(SystemException::from)?);
    }
    let ior = Ior {
        type_id: Leases::REPOSITORY_ID.to_owned(),
        profiles,
        byte_order: ior.byte_order,
    };
    Ok(Leases::unchecked_narrow(&orb.object_from_ior(ior)?))
}

/// Why a leased bind failed.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// The name is malformed or does not lead to a context of the service.
    #[error("bad name: {0}")]
    BadName(String),
    /// The lease ended before the bind (it was not kept alive in time).
    #[error("the lease has ended")]
    UnknownLease,
    /// The call failed.
    #[error(transparent)]
    System(#[from] SystemException),
}

impl From<leases::BindError> for LeaseError {
    fn from(e: leases::BindError) -> Self {
        match e {
            leases::BindError::BadName(b) => LeaseError::BadName(b.reason),
            leases::BindError::UnknownLease(_) => LeaseError::UnknownLease,
            leases::BindError::System(s) => LeaseError::System(s),
        }
    }
}

/// Grants a lease of `ttl` and binds `name` (stringified, from the root context) to `obj`
/// under it (replacing what was bound there); the lease.
pub fn bind_with_ttl(
    leases: &Leases,
    name: &str,
    obj: &ObjectRef,
    ttl: Duration,
) -> Result<LeaseId, LeaseError> {
    let ms = u32::try_from(ttl.as_millis()).unwrap_or(u32::MAX).max(1);
    let lease = leases.grant(ms)?;
    leases.bind(lease, name, Some(obj))?;
    Ok(lease)
}

struct Keeper {
    leases: Leases,
    name: String,
    obj: ObjectRef,
    ttl: Duration,
    lease: AtomicU64,
    stop: Mutex<bool>,
    wake: Condvar,
}

impl Keeper {
    /// Keeps the lease alive every TTL/3 until stopped. A lease the service no longer
    /// knows (it expired while the service or the network was away) is replaced: a new
    /// lease, and the name bound again under it. Failed calls are retried at the next tick.
    fn run(&self) {
        let tick = (self.ttl / 3).max(Duration::from_millis(50));
        let mut stop = self.stop.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            stop = self
                .wake
                .wait_timeout(stop, tick)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            if *stop {
                return;
            }
            let lease = self.lease.load(Ordering::Relaxed);
            match self.leases.keep_alive(lease) {
                Ok(()) | Err(leases::KeepAliveError::System(_)) => {}
                Err(leases::KeepAliveError::UnknownLease(_)) => {
                    if let Ok(l) = bind_with_ttl(&self.leases, &self.name, &self.obj, self.ttl) {
                        self.lease.store(l, Ordering::Relaxed);
                    }
                }
            }
        }
    }
}

/// A binding under a lease that a thread of this process keeps alive: bound while the
/// value lives, unbound (the lease revoked) when it is dropped, and gone within the TTL if
/// the process dies.
pub struct LeasedBinding {
    keeper: Arc<Keeper>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for LeasedBinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeasedBinding")
            .field("name", &self.keeper.name)
            .field("lease", &self.lease())
            .finish_non_exhaustive()
    }
}

impl LeasedBinding {
    /// Binds `name` (stringified, from the root context) to `obj` under a new lease of
    /// `ttl` and starts keeping it alive.
    pub fn bind(
        leases: &Leases,
        name: &str,
        obj: &ObjectRef,
        ttl: Duration,
    ) -> Result<LeasedBinding, LeaseError> {
        let lease = bind_with_ttl(leases, name, obj, ttl)?;
        let keeper = Arc::new(Keeper {
            leases: leases.clone(),
            name: name.to_owned(),
            obj: obj.clone(),
            ttl,
            lease: AtomicU64::new(lease),
            stop: Mutex::new(false),
            wake: Condvar::new(),
        });
        let k = Arc::clone(&keeper);
        let thread = std::thread::Builder::new()
            .name("naming-lease-keeper".into())
            .spawn(move || k.run())
            .map_err(|_| {
                // The binding is made; without its keeper it lapses within the TTL.
                SystemException::new(
                    corbina::SystemExceptionKind::NoResources,
                    corbina::error::minor::NO_RESOURCES_THREAD,
                )
                .completed(corbina::CompletionStatus::Yes)
            })?;
        Ok(LeasedBinding {
            keeper,
            thread: Some(thread),
        })
    }

    /// The lease the binding is under now.
    pub fn lease(&self) -> LeaseId {
        self.keeper.lease.load(Ordering::Relaxed)
    }
}

impl Drop for LeasedBinding {
    fn drop(&mut self) {
        *self.keeper.stop.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.keeper.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // Best effort: if the service cannot be reached, the lease expires by itself.
        let _ = self.keeper.leases.revoke(self.lease());
    }
}
