//! `BindingIterator`s, bounded: a client that never calls `destroy` cannot grow the
//! server's memory without limit. Each iterator is dropped after `idle_timeout` without a
//! call (a reaper thread checks a few times per timeout), and at most `max_live` exist: a
//! new one evicts the least recently used. A reaped iterator raises OBJECT_NOT_EXIST, as a
//! destroyed one does.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use corbina::error::minor::{BAD_PARAM_ZERO_HOW_MANY, INTERNAL_NAMING};
use corbina::poa::{ObjectId, Poa};
use corbina::{SystemException, SystemExceptionKind};

use crate::cos_naming::{
    Binding, BindingIterator, BindingIteratorServant, BindingIteratorSkeleton, BindingList,
};

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

struct Entry {
    last_used: Mutex<Instant>,
}

/// The live iterators of one naming service.
pub(crate) struct Iterators {
    poa: Poa,
    live: Mutex<HashMap<ObjectId, Arc<Entry>>>,
    idle_timeout: Duration,
    max_live: usize,
}

impl Iterators {
    /// Iterators served by `poa` (TRANSIENT, SYSTEM_ID, RETAIN), with a reaper thread that
    /// stops when the returned value is dropped.
    pub(crate) fn new(poa: Poa, idle_timeout: Duration, max_live: usize) -> Arc<Iterators> {
        let it = Arc::new(Iterators {
            poa,
            live: Mutex::new(HashMap::new()),
            idle_timeout,
            max_live: max_live.max(1),
        });
        let weak = Arc::downgrade(&it);
        let tick = (idle_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(5));
        let _ = std::thread::Builder::new()
            .name("naming-iterator-reaper".into())
            .spawn(move || reap_loop(weak, tick));
        it
    }

    /// Drops every iterator and destroys their POA.
    pub(crate) fn destroy(&self) {
        lock(&self.live).clear();
        self.poa.destroy(false, false);
    }

    /// How many iterators are alive.
    pub(crate) fn live(&self) -> usize {
        lock(&self.live).len()
    }

    /// An iterator over `rest`.
    pub(crate) fn create(
        self: &Arc<Self>,
        rest: Vec<Binding>,
    ) -> Result<BindingIterator, SystemException> {
        let entry = Arc::new(Entry {
            last_used: Mutex::new(Instant::now()),
        });
        let servant = Arc::new(BindingIteratorSkeleton::new(IteratorImpl {
            rest: Mutex::new(rest.into()),
            entry: Arc::clone(&entry),
            owner: Arc::downgrade(self),
        }));
        let internal = |_| SystemException::new(SystemExceptionKind::Internal, INTERNAL_NAMING);
        let oid = self.poa.activate_object(servant).map_err(internal)?;
        let evicted = {
            let mut live = lock(&self.live);
            let mut evicted = Vec::new();
            while live.len() >= self.max_live {
                let oldest = live
                    .iter()
                    .min_by_key(|(_, e)| *lock(&e.last_used))
                    .map(|(id, _)| id.clone());
                match oldest {
                    Some(id) => {
                        live.remove(&id);
                        evicted.push(id);
                    }
                    None => break,
                }
            }
            live.insert(oid.clone(), entry);
            evicted
        };
        for id in evicted {
            let _ = self.poa.deactivate_object(&id);
        }
        let obj = self.poa.id_to_reference(&oid).map_err(internal)?;
        Ok(BindingIterator::unchecked_narrow(&obj))
    }

    fn remove(&self, oid: &ObjectId) {
        if lock(&self.live).remove(oid).is_some() {
            let _ = self.poa.deactivate_object(oid);
        }
    }

    /// Drops every iterator idle for longer than the timeout; returns how many.
    pub(crate) fn reap(&self, now: Instant) -> usize {
        let expired: Vec<ObjectId> = lock(&self.live)
            .iter()
            .filter(|(_, e)| now.saturating_duration_since(*lock(&e.last_used)) > self.idle_timeout)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            self.remove(id);
        }
        expired.len()
    }
}

fn reap_loop(owner: Weak<Iterators>, tick: Duration) {
    loop {
        std::thread::sleep(tick);
        match owner.upgrade() {
            Some(it) => {
                it.reap(Instant::now());
            }
            None => return,
        }
    }
}

struct IteratorImpl {
    rest: Mutex<VecDeque<Binding>>,
    entry: Arc<Entry>,
    owner: Weak<Iterators>,
}

impl IteratorImpl {
    fn touch(&self) {
        *lock(&self.entry.last_used) = Instant::now();
    }
}

impl BindingIteratorServant for IteratorImpl {
    fn next_one(&self) -> Result<(bool, Binding), SystemException> {
        self.touch();
        Ok(match lock(&self.rest).pop_front() {
            Some(b) => (true, b),
            None => (false, Binding::default()),
        })
    }

    fn next_n(&self, how_many: u32) -> Result<(bool, BindingList), SystemException> {
        self.touch();
        if how_many == 0 {
            return Err(SystemException::new(
                SystemExceptionKind::BadParam,
                BAD_PARAM_ZERO_HOW_MANY,
            ));
        }
        let mut rest = lock(&self.rest);
        let n = rest.len().min(how_many as usize);
        let batch: BindingList = rest.drain(..n).collect();
        Ok((!batch.is_empty(), batch))
    }

    fn destroy(&self) -> Result<(), SystemException> {
        let oid = corbina::poa::Current::get_object_id()
            .map_err(|_| SystemException::new(SystemExceptionKind::Internal, INTERNAL_NAMING))?;
        if let Some(owner) = self.owner.upgrade() {
            owner.remove(&oid);
        }
        Ok(())
    }
}
