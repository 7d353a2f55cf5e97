//! The active object map: object id → servant, and servant → id, behind one `RwLock`.
//!
//! Dispatching threads take the read lock for one `HashMap` lookup and an atomic increment
//! (the entry's in-flight count); activation and deactivation take the write lock. Every
//! operation is O(1) in the number of active objects (hashing the id, or the servant's
//! address).

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use foldhash::fast::RandomState as FastState;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::{ObjectId, PoaError};
use crate::Servant;

/// A servant's identity: the address of its data (`Arc::as_ptr` without the vtable).
pub(crate) fn servant_addr(s: &Arc<dyn Servant>) -> usize {
    Arc::as_ptr(s) as *const () as usize
}

/// One activation.
pub(crate) struct ActiveEntry {
    pub(crate) servant: Arc<dyn Servant>,
    in_flight: AtomicUsize,
    deactivated: AtomicBool,
    /// Whether the servant was still active under other ids when this one was deactivated.
    remaining: AtomicBool,
    /// Set by whoever etherealizes, so that it happens once.
    claimed: AtomicBool,
}

impl ActiveEntry {
    /// Ends a call; true if the caller must now etherealize (it was the last call of a
    /// deactivated object).
    pub(crate) fn end_call(&self) -> bool {
        self.in_flight.fetch_sub(1, Ordering::SeqCst) == 1
            && self.deactivated.load(Ordering::SeqCst)
            && !self.claimed.swap(true, Ordering::SeqCst)
    }

    /// Marks the activation over; true if the caller must etherealize now (no call running).
    fn deactivate(&self, remaining: bool) -> bool {
        self.remaining.store(remaining, Ordering::SeqCst);
        self.deactivated.store(true, Ordering::SeqCst);
        self.in_flight.load(Ordering::SeqCst) == 0 && !self.claimed.swap(true, Ordering::SeqCst)
    }

    /// `remaining_activations` for etherealize.
    pub(crate) fn remaining(&self) -> bool {
        self.remaining.load(Ordering::SeqCst)
    }
}

struct ServantRecord {
    /// The id it is active under (meaningful under UNIQUE_ID only, where there is one).
    id: ObjectId,
    /// How many ids it is active under.
    count: usize,
}

#[derive(Default)]
struct Maps {
    // foldhash: consulted on every request; keyed per process (still flood-resistant for
    // hostile object keys) and much cheaper than SipHash.
    by_id: HashMap<ObjectId, Arc<ActiveEntry>, FastState>,
    by_servant: HashMap<usize, ServantRecord, FastState>,
}

/// A deactivated object: etherealize it now if `etherealize_now`, otherwise the last call
/// to finish does.
pub(crate) struct Removed {
    pub(crate) oid: ObjectId,
    pub(crate) entry: Arc<ActiveEntry>,
    pub(crate) etherealize_now: bool,
}

/// The map of one RETAIN POA.
#[derive(Default)]
pub(crate) struct ActiveObjectMap {
    maps: RwLock<Maps>,
}

impl ActiveObjectMap {
    fn read(&self) -> RwLockReadGuard<'_, Maps> {
        self.maps.read().unwrap_or_else(|e| e.into_inner())
    }
    fn write(&self) -> RwLockWriteGuard<'_, Maps> {
        self.maps.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Activates `servant` under `oid`. `unique`: UNIQUE_ID (a servant under one id only).
    pub(crate) fn insert(
        &self,
        oid: ObjectId,
        servant: Arc<dyn Servant>,
        unique: bool,
    ) -> Result<(), PoaError> {
        let addr = servant_addr(&servant);
        let mut m = self.write();
        if m.by_id.contains_key(&oid) {
            return Err(PoaError::ObjectAlreadyActive);
        }
        match m.by_servant.entry(addr) {
            Entry::Occupied(_) if unique => return Err(PoaError::ServantAlreadyActive),
            Entry::Occupied(mut e) => e.get_mut().count += 1,
            Entry::Vacant(e) => {
                e.insert(ServantRecord {
                    id: oid.clone(),
                    count: 1,
                });
            }
        }
        m.by_id.insert(
            oid,
            Arc::new(ActiveEntry {
                servant,
                in_flight: AtomicUsize::new(0),
                deactivated: AtomicBool::new(false),
                remaining: AtomicBool::new(false),
                claimed: AtomicBool::new(false),
            }),
        );
        Ok(())
    }

    /// Finds `oid` for a call and counts the call; end it with [`ActiveEntry::end_call`].
    pub(crate) fn begin_call(&self, oid: &[u8]) -> Option<Arc<ActiveEntry>> {
        let m = self.read();
        let e = m.by_id.get(oid)?;
        e.in_flight.fetch_add(1, Ordering::SeqCst);
        Some(Arc::clone(e))
    }

    /// The servant active under `oid`.
    pub(crate) fn servant(&self, oid: &[u8]) -> Option<Arc<dyn Servant>> {
        self.read().by_id.get(oid).map(|e| Arc::clone(&e.servant))
    }

    /// Whether `oid` is active.
    pub(crate) fn contains(&self, oid: &[u8]) -> bool {
        self.read().by_id.contains_key(oid)
    }

    /// The id `servant` is active under: its only one under UNIQUE_ID. (Under MULTIPLE_ID it
    /// is `Some` exactly when the servant is active, but the id may be one since deactivated.)
    pub(crate) fn id_of(&self, servant: &Arc<dyn Servant>) -> Option<ObjectId> {
        self.read()
            .by_servant
            .get(&servant_addr(servant))
            .map(|r| r.id.clone())
    }

    /// Number of active objects.
    pub(crate) fn len(&self) -> usize {
        self.read().by_id.len()
    }

    fn remove_locked(m: &mut Maps, oid: ObjectId, entry: Arc<ActiveEntry>) -> Removed {
        let addr = servant_addr(&entry.servant);
        let mut remaining = false;
        if let Entry::Occupied(mut r) = m.by_servant.entry(addr) {
            r.get_mut().count -= 1;
            if r.get().count == 0 {
                r.remove();
            } else {
                remaining = true;
            }
        }
        let etherealize_now = entry.deactivate(remaining);
        Removed {
            oid,
            entry,
            etherealize_now,
        }
    }

    /// Deactivates `oid`.
    pub(crate) fn remove(&self, oid: &[u8]) -> Result<Removed, PoaError> {
        let mut m = self.write();
        let (oid, entry) = m.by_id.remove_entry(oid).ok_or(PoaError::ObjectNotActive)?;
        Ok(Self::remove_locked(&mut m, oid, entry))
    }

    /// Deactivates every object (POA destruction, manager deactivation).
    pub(crate) fn drain(&self) -> Vec<Removed> {
        let mut guard = self.write();
        let m = &mut *guard;
        let removed = m
            .by_id
            .drain()
            .map(|(oid, entry)| {
                let remaining = m
                    .by_servant
                    .get_mut(&servant_addr(&entry.servant))
                    .map(|r| {
                        r.count -= 1;
                        r.count > 0
                    })
                    .unwrap_or(false);
                let etherealize_now = entry.deactivate(remaining);
                Removed {
                    oid,
                    entry,
                    etherealize_now,
                }
            })
            .collect();
        m.by_servant.clear();
        removed
    }
}
