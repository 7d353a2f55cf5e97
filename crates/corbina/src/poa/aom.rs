//! The active object map: object id → servant, and servant → id, behind one `RwLock`.
//!
//! Dispatching threads take the read lock for one hash lookup and an atomic increment (the
//! entry's in-flight count); activation and deactivation take the write lock. Every
//! operation is O(1) in the number of active objects (hashing the id, or the servant's
//! address).
//!
//! Memory per object is what limits a server with millions of objects, so each activation
//! is one allocation, an [`ActiveEntry`] holding the id (inline when short, as system ids
//! are) and the servant, and both tables are sets of pointers to it, keyed by what the
//! entry holds: 8 bytes a slot instead of a copy of the id and the servant.

use std::borrow::Borrow;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use hashbrown::HashSet as IdSet;
use std::hash::{Hash, Hasher};

use foldhash::fast::RandomState as FastState;
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::{ObjectId, PoaError};
use crate::Servant;

/// A servant's identity: the address of its data (`Arc::as_ptr` without the vtable).
pub(crate) fn servant_addr(s: &Arc<dyn Servant>) -> usize {
    Arc::as_ptr(s) as *const () as usize
}

/// Ids up to this long are stored inside the entry.
const INLINE_ID: usize = 14;

/// An object id as an entry keeps it: 16 bytes, holding ids of up to [`INLINE_ID`] bytes
/// (system ids are 8) without an allocation of their own.
enum IdBytes {
    Inline { len: u8, bytes: [u8; INLINE_ID] },
    Heap(Box<ObjectId>),
}

impl IdBytes {
    fn new(oid: ObjectId) -> Self {
        match u8::try_from(oid.0.len()) {
            Ok(len) if usize::from(len) <= INLINE_ID => {
                let mut bytes = [0; INLINE_ID];
                bytes[..oid.0.len()].copy_from_slice(&oid.0);
                IdBytes::Inline { len, bytes }
            }
            _ => IdBytes::Heap(Box::new(oid)),
        }
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            IdBytes::Inline { len, bytes } => &bytes[..usize::from(*len)],
            IdBytes::Heap(oid) => &oid.0,
        }
    }
}

/// A servant compared and hashed by address: the key of the servant → entry table.
pub(crate) struct ServantRef(Arc<dyn Servant>);

impl PartialEq for ServantRef {
    fn eq(&self, other: &Self) -> bool {
        servant_addr(&self.0) == servant_addr(&other.0)
    }
}
impl Eq for ServantRef {}
impl Hash for ServantRef {
    fn hash<H: Hasher>(&self, h: &mut H) {
        servant_addr(&self.0).hash(h);
    }
}

const DEACTIVATED: u8 = 1;
/// The servant was still active under other ids when this one was deactivated.
const REMAINING: u8 = 2;
/// Set by whoever etherealizes, so that it happens once.
const CLAIMED: u8 = 4;

/// One activation.
pub(crate) struct ActiveEntry {
    id: IdBytes,
    servant: ServantRef,
    in_flight: AtomicU32,
    state: AtomicU8,
}

impl ActiveEntry {
    /// The servant.
    pub(crate) fn servant(&self) -> &Arc<dyn Servant> {
        &self.servant.0
    }

    /// The object id.
    pub(crate) fn id(&self) -> &[u8] {
        self.id.as_slice()
    }

    /// Ends a call; true if the caller must now etherealize (it was the last call of a
    /// deactivated object).
    pub(crate) fn end_call(&self) -> bool {
        self.in_flight.fetch_sub(1, Ordering::SeqCst) == 1
            && self.state.load(Ordering::SeqCst) & DEACTIVATED != 0
            && self.claim()
    }

    fn claim(&self) -> bool {
        self.state.fetch_or(CLAIMED, Ordering::SeqCst) & CLAIMED == 0
    }

    /// Marks the activation over; true if the caller must etherealize now (no call running).
    fn deactivate(&self, remaining: bool) -> bool {
        let flags = if remaining {
            DEACTIVATED | REMAINING
        } else {
            DEACTIVATED
        };
        self.state.fetch_or(flags, Ordering::SeqCst);
        self.in_flight.load(Ordering::SeqCst) == 0 && self.claim()
    }

    /// `remaining_activations` for etherealize.
    pub(crate) fn remaining(&self) -> bool {
        self.state.load(Ordering::SeqCst) & REMAINING != 0
    }
}

/// An entry in the id table: hashed and compared by its object id.
struct ById(Arc<ActiveEntry>);

impl PartialEq for ById {
    fn eq(&self, other: &Self) -> bool {
        self.0.id() == other.0.id()
    }
}
impl Eq for ById {}
impl Hash for ById {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.0.id().hash(h);
    }
}
impl Borrow<[u8]> for ById {
    fn borrow(&self) -> &[u8] {
        self.0.id()
    }
}

/// An id looked up for a call: hashed as the id's bytes are. A type of its own, so that the
/// lookup on the call path is an instantiation no other lookup shares, which the inliner
/// keeps in the call path (shared with `servant`'s, it was outlined: 13 instructions more
/// per server call, callgrind).
#[derive(Hash)]
struct CallKey<'a>(&'a [u8]);

impl hashbrown::Equivalent<ById> for CallKey<'_> {
    fn equivalent(&self, key: &ById) -> bool {
        // Object ids are short: no memcmp call (callgrind: 15 instructions per call less).
        crate::giop::message::same_bytes(self.0, key.0.id())
    }
}

/// An entry in the servant table: hashed and compared by its servant's address.
struct ByServant(Arc<ActiveEntry>);

impl PartialEq for ByServant {
    fn eq(&self, other: &Self) -> bool {
        self.0.servant == other.0.servant
    }
}
impl Eq for ByServant {}
impl Hash for ByServant {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.0.servant.hash(h);
    }
}
impl Borrow<ServantRef> for ByServant {
    fn borrow(&self) -> &ServantRef {
        &self.0.servant
    }
}

#[derive(Default)]
struct Maps {
    // foldhash: consulted on every request; keyed per process (still flood-resistant for
    // hostile object keys) and much cheaper than SipHash.
    by_id: IdSet<ById, FastState>,
    /// UNIQUE_ID activations: the servant's one entry.
    by_servant: HashSet<ByServant, FastState>,
    /// MULTIPLE_ID activations: servant address → number of ids it is active under.
    counts: HashMap<usize, usize, FastState>,
}

/// A deactivated object: etherealize it now if `etherealize_now`, otherwise the last call
/// to finish does.
pub(crate) struct Removed {
    pub(crate) entry: Arc<ActiveEntry>,
    pub(crate) etherealize_now: bool,
}

impl Removed {
    /// The deactivated object's id.
    pub(crate) fn oid(&self) -> ObjectId {
        ObjectId(self.entry.id().to_vec())
    }
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
        let servant = ServantRef(servant);
        let mut m = self.write();
        if m.by_id.contains(oid.as_bytes()) {
            return Err(PoaError::ObjectAlreadyActive);
        }
        if unique && (m.by_servant.contains(&servant) || m.counts.contains_key(&addr)) {
            return Err(PoaError::ServantAlreadyActive);
        }
        let entry = Arc::new(ActiveEntry {
            id: IdBytes::new(oid),
            servant,
            in_flight: AtomicU32::new(0),
            state: AtomicU8::new(0),
        });
        if unique {
            m.by_servant.insert(ByServant(Arc::clone(&entry)));
        } else {
            *m.counts.entry(addr).or_insert(0) += 1;
        }
        m.by_id.insert(ById(entry));
        Ok(())
    }

    /// Finds `oid` for a call and counts the call; end it with [`ActiveEntry::end_call`].
    #[inline]
    pub(crate) fn begin_call(&self, oid: &[u8]) -> Option<Arc<ActiveEntry>> {
        let m = self.read();
        let e = &m.by_id.get(&CallKey(oid))?.0;
        e.in_flight.fetch_add(1, Ordering::SeqCst);
        Some(Arc::clone(e))
    }

    /// The servant active under `oid`.
    pub(crate) fn servant(&self, oid: &[u8]) -> Option<Arc<dyn Servant>> {
        self.read()
            .by_id
            .get(oid)
            .map(|e| Arc::clone(e.0.servant()))
    }

    /// Whether `oid` is active.
    pub(crate) fn contains(&self, oid: &[u8]) -> bool {
        self.read().by_id.contains(oid)
    }

    /// The id `servant` is active under, if it was activated under UNIQUE_ID (the only
    /// policy under which a servant has one id).
    pub(crate) fn id_of(&self, servant: &Arc<dyn Servant>) -> Option<ObjectId> {
        let key = ServantRef(Arc::clone(servant));
        self.read()
            .by_servant
            .get(&key)
            .map(|e| ObjectId(e.0.id().to_vec()))
    }

    /// Whether `servant` is active (under any id).
    #[cfg(test)]
    pub(crate) fn is_active(&self, servant: &Arc<dyn Servant>) -> bool {
        let m = self.read();
        m.by_servant.contains(&ServantRef(Arc::clone(servant)))
            || m.counts.contains_key(&servant_addr(servant))
    }

    /// Number of active objects.
    pub(crate) fn len(&self) -> usize {
        self.read().by_id.len()
    }

    /// Drops `entry` from the servant tables; whether its servant remains active under
    /// other ids.
    fn unlink_servant(m: &mut Maps, entry: &Arc<ActiveEntry>) -> bool {
        let unique = m
            .by_servant
            .get(&entry.servant)
            .is_some_and(|e| Arc::ptr_eq(&e.0, entry));
        if unique {
            m.by_servant.remove(&entry.servant);
            return false;
        }
        match m.counts.entry(servant_addr(entry.servant())) {
            Entry::Occupied(mut r) => {
                *r.get_mut() -= 1;
                if *r.get() == 0 {
                    r.remove();
                    false
                } else {
                    true
                }
            }
            Entry::Vacant(_) => false,
        }
    }

    /// Deactivates `oid`.
    pub(crate) fn remove(&self, oid: &[u8]) -> Result<Removed, PoaError> {
        let mut m = self.write();
        let ById(entry) = m.by_id.take(oid).ok_or(PoaError::ObjectNotActive)?;
        let remaining = Self::unlink_servant(&mut m, &entry);
        let etherealize_now = entry.deactivate(remaining);
        Ok(Removed {
            entry,
            etherealize_now,
        })
    }

    /// Deactivates every object (POA destruction, manager deactivation).
    pub(crate) fn drain(&self) -> Vec<Removed> {
        let mut guard = self.write();
        let m = &mut *guard;
        let entries: Vec<ById> = m.by_id.drain().collect();
        let removed = entries
            .into_iter()
            .map(|ById(entry)| {
                let remaining = Self::unlink_servant(m, &entry);
                let etherealize_now = entry.deactivate(remaining);
                Removed {
                    entry,
                    etherealize_now,
                }
            })
            .collect();
        m.by_servant.clear();
        m.counts.clear();
        removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_inline_up_to_fourteen_bytes() {
        assert_eq!(std::mem::size_of::<IdBytes>(), 16);
        for len in [0, 1, 8, 14, 15, 300] {
            let v: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let id = IdBytes::new(ObjectId(v.clone()));
            assert_eq!(id.as_slice(), &v[..]);
            assert_eq!(matches!(id, IdBytes::Inline { .. }), len <= INLINE_ID);
        }
    }

    #[test]
    fn an_activation_is_one_small_allocation() {
        // With the two reference counts, 56 bytes: a 64-byte glibc chunk.
        assert!(std::mem::size_of::<ActiveEntry>() <= 40);
    }

    #[test]
    fn short_and_long_ids_are_found_by_their_bytes() {
        let aom = ActiveObjectMap::default();
        let ids: Vec<Vec<u8>> = vec![vec![], vec![7; 8], vec![1; 14], vec![2; 15], vec![3; 64]];
        let servants: Vec<Arc<dyn Servant>> =
            ids.iter().map(|_| crate::poa::tests::servant()).collect();
        for (id, s) in ids.iter().zip(&servants) {
            aom.insert(ObjectId(id.clone()), Arc::clone(s), true)
                .unwrap();
        }
        for (id, s) in ids.iter().zip(&servants) {
            assert!(aom.contains(id));
            assert_eq!(aom.id_of(s), Some(ObjectId(id.clone())));
            assert_eq!(servant_addr(&aom.servant(id).unwrap()), servant_addr(s));
            // The call path's lookup (its own key type) finds the same entry.
            let e = aom.begin_call(id).expect("found for a call");
            assert_eq!(e.id(), &id[..]);
            assert_eq!(servant_addr(e.servant()), servant_addr(s));
            e.in_flight.fetch_sub(1, Ordering::SeqCst);
        }
        assert!(aom.begin_call(&[2; 14]).is_none());
        assert!(!aom.contains(&[2; 14]));
        let r = aom.remove(&[3; 64]).unwrap();
        assert_eq!(r.oid(), ObjectId(vec![3; 64]));
        assert!(!aom.contains(&[3; 64]));
        assert_eq!(aom.id_of(&servants[4]), None);
        assert_eq!(aom.len(), 4);
    }
}
