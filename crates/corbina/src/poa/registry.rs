//! [`PoaRegistry`]: every POA of one ORB, and the entry points the ORB's transport calls
//! (dispatch, locate, collocation, shutdown).

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use super::key::{self, PoaLocator};
use super::poa::{NewPoa, PoaInner};
use super::policy::PolicyList;
use super::{minor, DispatchError, LocateOutcome, Poa, PoaManager, ReferenceFactory};
use crate::{ServerRequest, SystemException, SystemExceptionKind};

/// How long a request waits for a holding POA manager before TRANSIENT, by default.
pub const DEFAULT_MAX_HOLD_WAIT: Duration = Duration::from_secs(30);

struct Slot {
    generation: u32,
    poa: Option<Poa>,
}

/// Transient POAs by index; a destroyed POA's slot is reused with the next generation.
#[derive(Default)]
struct Slab {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

/// The POAs of one ORB: the RootPOA and its descendants, indexed for O(1) demultiplexing.
pub struct PoaRegistry {
    me: Weak<PoaRegistry>,
    factory: Arc<dyn ReferenceFactory>,
    /// Random per registry: TRANSIENT keys from another process (or registry) never match.
    epoch: u64,
    slab: RwLock<Slab>,
    /// PERSISTENT POAs by their encoded path (see [`key`]).
    /// foldhash (keyed per process): looked up on every request to a PERSISTENT POA.
    persistent: RwLock<HashMap<Box<[u8]>, Poa, foldhash::fast::RandomState>>,
    root: Poa,
    max_hold_wait_ms: AtomicU64,
    /// Keys outside the POA format (`NameService`, …): see [`super::table`].
    pub(super) keys: super::table::ObjectKeyTable,
    /// A POA with `BidirectionalPolicy::Both` exists (or existed).
    bidirectional: AtomicBool,
}

fn random_epoch() -> u64 {
    // RandomState is seeded from the OS once per process and varies per instance.
    let mut h = RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.write_u32(std::process::id());
    h.finish()
}

fn not_exist(minor: u32) -> SystemException {
    SystemException::new(SystemExceptionKind::ObjectNotExist, minor)
}

impl std::fmt::Debug for PoaRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoaRegistry")
            .field("epoch", &self.epoch)
            .finish_non_exhaustive()
    }
}

impl PoaRegistry {
    /// A registry with a RootPOA (whose manager starts holding) making references with
    /// `factory`.
    pub fn new(factory: Arc<dyn ReferenceFactory>) -> Arc<PoaRegistry> {
        let epoch = random_epoch();
        Arc::new_cyclic(|me: &Weak<PoaRegistry>| {
            let root = Poa {
                inner: Arc::new(PoaInner::new(NewPoa {
                    name: "RootPOA".to_owned(),
                    path: Vec::new(),
                    parent: None,
                    policies: PolicyList::root(),
                    manager: PoaManager::new(),
                    registry: me.clone(),
                    factory: Arc::clone(&factory),
                    slot: (0, 0),
                    key_prefix: key::transient_prefix(epoch, 0, 0).into(),
                })),
            };
            root.inner.manager.register(&root.inner);
            PoaRegistry {
                me: me.clone(),
                factory,
                epoch,
                slab: RwLock::new(Slab {
                    slots: vec![Slot {
                        generation: 0,
                        poa: Some(root.clone()),
                    }],
                    free: Vec::new(),
                }),
                persistent: RwLock::new(HashMap::default()),
                root,
                max_hold_wait_ms: AtomicU64::new(DEFAULT_MAX_HOLD_WAIT.as_millis() as u64),
                bidirectional: AtomicBool::new(false),
                keys: Default::default(),
            }
        })
    }

    /// The RootPOA.
    pub fn root_poa(&self) -> Poa {
        self.root.clone()
    }

    /// How long a request waits for a holding manager before failing with TRANSIENT.
    pub fn max_hold_wait(&self) -> Duration {
        Duration::from_millis(self.max_hold_wait_ms.load(Ordering::Relaxed))
    }

    /// Sets [`max_hold_wait`](Self::max_hold_wait) (the ORB's configuration).
    pub fn set_max_hold_wait(&self, wait: Duration) {
        let ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
        self.max_hold_wait_ms.store(ms, Ordering::Relaxed);
    }

    /// Makes the POA `name` under `parent` and indexes it.
    pub(crate) fn register(
        &self,
        parent: &Poa,
        name: &str,
        manager: PoaManager,
        policies: PolicyList,
    ) -> Poa {
        let mut path = parent.inner.path().to_vec();
        path.push(name.to_owned());
        let encoded_path = key::encode_path(&path);
        let mut slab = self.slab.write().unwrap_or_else(|e| e.into_inner());
        let index = match slab.free.pop() {
            Some(i) => i,
            None => {
                slab.slots.push(Slot {
                    generation: 0,
                    poa: None,
                });
                // More than 2^32 live POAs cannot happen before memory runs out.
                u32::try_from(slab.slots.len() - 1).unwrap_or(u32::MAX)
            }
        };
        let generation = slab.slots[index as usize].generation;
        let key_prefix = if policies.persistent() {
            key::persistent_prefix(&encoded_path)
        } else {
            key::transient_prefix(self.epoch, index, generation)
        };
        let poa = Poa {
            inner: Arc::new(PoaInner::new(NewPoa {
                name: name.to_owned(),
                path,
                parent: Some(Arc::downgrade(&parent.inner)),
                policies,
                manager,
                registry: self.me.clone(),
                factory: Arc::clone(&self.factory),
                slot: (index, generation),
                key_prefix: key_prefix.into(),
            })),
        };
        slab.slots[index as usize].poa = Some(poa.clone());
        drop(slab);
        if policies.bidirectional == super::BidirectionalPolicy::Both {
            self.bidirectional.store(true, Ordering::Release);
        }
        if policies.persistent() {
            self.persistent
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .insert(encoded_path.into(), poa.clone());
        }
        poa
    }

    /// Forgets a destroyed POA: its slot gets a new generation, its path is free.
    pub(crate) fn unregister(&self, poa: &Arc<PoaInner>) {
        let (index, generation) = poa.slot;
        {
            let mut slab = self.slab.write().unwrap_or_else(|e| e.into_inner());
            let Slab { slots, free } = &mut *slab;
            if let Some(slot) = slots.get_mut(index as usize) {
                let ours = slot.generation == generation
                    && slot
                        .poa
                        .as_ref()
                        .is_some_and(|p| Arc::ptr_eq(&p.inner, poa));
                if ours {
                    slot.poa = None;
                    slot.generation = slot.generation.wrapping_add(1);
                    // The RootPOA's slot 0 is never reused: its keys stay dead.
                    if index != 0 {
                        free.push(index);
                    }
                }
            }
        }
        if !poa.path().is_empty() {
            let path = key::encode_path(poa.path());
            let mut map = self.persistent.write().unwrap_or_else(|e| e.into_inner());
            if map
                .get(path.as_slice())
                .is_some_and(|p| Arc::ptr_eq(&p.inner, poa))
            {
                map.remove(path.as_slice());
            }
        }
    }

    /// The POA a key names: O(1) (slab index, or one hash of the path). With `activate`,
    /// a missing PERSISTENT POA is created through the AdapterActivators along its path.
    fn find(&self, locator: PoaLocator<'_>, activate: bool) -> Result<Poa, SystemException> {
        match locator {
            PoaLocator::Transient {
                epoch,
                index,
                generation,
            } => {
                if epoch != self.epoch {
                    return Err(not_exist(minor::OBJECT_NOT_EXIST_NO_ADAPTER));
                }
                let slab = self.slab.read().unwrap_or_else(|e| e.into_inner());
                slab.slots
                    .get(index as usize)
                    .filter(|s| s.generation == generation)
                    .and_then(|s| s.poa.clone())
                    .ok_or_else(|| not_exist(minor::OBJECT_NOT_EXIST_NO_ADAPTER))
            }
            PoaLocator::Persistent { path } => {
                let found = self
                    .persistent
                    .read()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(path)
                    .cloned();
                match found {
                    Some(p) => Ok(p),
                    None if activate => self.activate_path(path),
                    None => Err(not_exist(minor::OBJECT_NOT_EXIST_NO_ADAPTER)),
                }
            }
        }
    }

    /// Walks `path` from the RootPOA with `find_poa(name, true)` (O(depth)).
    fn activate_path(&self, path: &[u8]) -> Result<Poa, SystemException> {
        let gone = || not_exist(minor::OBJECT_NOT_EXIST_NO_ADAPTER);
        let names = key::path_names(path).ok_or_else(gone)?;
        if names.is_empty() {
            return Err(gone());
        }
        let mut poa = self.root_poa();
        for n in names {
            poa = poa.find_poa(n, true).map_err(|_| gone())?;
        }
        // The activator may have made a TRANSIENT POA: its keys look different.
        if poa.policies().persistent() {
            Ok(poa)
        } else {
            Err(gone())
        }
    }

    /// Demultiplexes and dispatches a request: decodes `object_key`, finds the POA and the
    /// servant, and runs the upcall with `PortableServer::Current` set. Malformed or stale
    /// keys raise OBJECT_NOT_EXIST.
    pub fn dispatch(
        &self,
        object_key: &[u8],
        request: &mut ServerRequest<'_, '_>,
    ) -> Result<(), DispatchError> {
        let Some(k) = key::decode(object_key) else {
            return self.dispatch_table_key(object_key, request);
        };
        let poa = self.find(k.poa, true)?;
        poa.dispatch(k.object_id, request, self.max_hold_wait())
    }

    /// Answers a LocateRequest without activating anything: `Here` if the object is active
    /// or its POA has a default servant or servant manager to ask.
    pub fn locate(&self, object_key: &[u8]) -> LocateOutcome {
        let Some(k) = key::decode(object_key) else {
            return self.locate_table_key(object_key);
        };
        match self.find(k.poa, false) {
            Ok(poa) => poa.locate(k.object_id),
            Err(_) => LocateOutcome::Unknown,
        }
    }

    /// Whether `object_key` is a POA key of this registry: a TRANSIENT key with this
    /// registry's epoch (no other process or registry makes one), or a PERSISTENT key when
    /// the reference's endpoint is this ORB's (`endpoint_is_ours`).
    pub(crate) fn is_own_key(&self, object_key: &[u8], endpoint_is_ours: bool) -> bool {
        match key::decode(object_key).map(|k| k.poa) {
            Some(PoaLocator::Transient { epoch, .. }) => epoch == self.epoch,
            Some(PoaLocator::Persistent { .. }) => endpoint_is_ours,
            None => false,
        }
    }

    /// A collocated call without marshalling on the object `object_key` names (see
    /// [`Poa::collocated_call`]), found as [`dispatch`](Self::dispatch) finds it; `Ok(false)`
    /// means: take the marshalled path (which also follows a ForwardRequest).
    pub(crate) fn collocated_call(
        &self,
        object_key: &[u8],
        repository_id: &str,
        upcall: &mut dyn FnMut(&dyn std::any::Any) -> bool,
    ) -> Result<bool, SystemException> {
        // Keys of the object key table are never collocated (see `is_own_key`).
        let Some(k) = key::decode(object_key) else {
            return Ok(false);
        };
        let poa = self.find(k.poa, true)?;
        match poa.collocated_call(k.object_id, repository_id, self.max_hold_wait(), upcall) {
            Ok(ran) => Ok(ran),
            Err(DispatchError::System(e)) => Err(e),
            Err(DispatchError::Forward { .. }) => Ok(false),
        }
    }

    /// Destroys every POA (waiting for running calls, except the caller's own upcall),
    /// etherealizing active objects if `etherealize`.
    pub fn shutdown(&self, etherealize: bool) {
        self.root.destroy(etherealize, true);
    }

    /// Whether a POA with `BidirectionalPolicy::Both` was ever made here: the client side
    /// of bidirectional GIOP offers callbacks only then.
    pub fn has_bidirectional_poa(&self) -> bool {
        self.bidirectional.load(Ordering::Acquire)
    }

    /// Whether the POA `object_key` names has `BidirectionalPolicy::Both`: the server side
    /// of bidirectional GIOP takes an offer only on a request to such a POA.
    pub fn is_bidirectional(&self, object_key: &[u8]) -> bool {
        key::decode(object_key)
            .and_then(|k| self.find(k.poa, false).ok())
            .is_some_and(|poa| poa.policies().bidirectional == super::BidirectionalPolicy::Both)
    }
}
