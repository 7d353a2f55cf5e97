//! `PortableServer::POAManager`: the gate in front of one or more POAs, with the four states
//! of the specification.
//!
//! The dispatch fast path is one atomic increment and one atomic load: while the manager is
//! active no lock is taken. Other states take the slow path: *holding* blocks the
//! dispatching thread (up to the registry's maximum wait, then TRANSIENT), *discarding*
//! raises TRANSIENT (OMG minor 1), *inactive* raises OBJ_ADAPTER (OMG minor 1).

use std::fmt;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use super::poa::PoaInner;
use super::{current, minor, PoaError};
use crate::{SystemException, SystemExceptionKind};

/// `POAManager::State`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PoaManagerState {
    /// HOLDING: requests wait.
    Holding,
    /// ACTIVE: requests are dispatched.
    Active,
    /// DISCARDING: requests fail with TRANSIENT.
    Discarding,
    /// INACTIVE: requests fail with OBJ_ADAPTER; the manager can never be activated again.
    Inactive,
}

impl PoaManagerState {
    fn from_u8(v: u8) -> PoaManagerState {
        match v {
            1 => PoaManagerState::Active,
            2 => PoaManagerState::Discarding,
            3 => PoaManagerState::Inactive,
            _ => PoaManagerState::Holding,
        }
    }
    fn to_u8(self) -> u8 {
        match self {
            PoaManagerState::Holding => 0,
            PoaManagerState::Active => 1,
            PoaManagerState::Discarding => 2,
            PoaManagerState::Inactive => 3,
        }
    }
}

/// A POA manager handle: cheap to clone; clones are the same manager.
#[derive(Clone)]
pub struct PoaManager {
    pub(crate) inner: Arc<ManagerInner>,
}

pub(crate) struct ManagerInner {
    state: AtomicU8,
    /// Requests past the gate and not yet finished.
    calls: CallCounter,
    /// Guards state changes and the waits on `cond`.
    lock: Mutex<()>,
    cond: Condvar,
    /// The POAs this manager controls (for `deactivate(etherealize_objects = true)`).
    poas: Mutex<Vec<Weak<PoaInner>>>,
}

impl fmt::Debug for PoaManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoaManager")
            .field("state", &self.get_state())
            .finish()
    }
}

impl PartialEq for PoaManager {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}
impl Eq for PoaManager {}

impl Default for PoaManager {
    fn default() -> Self {
        PoaManager::new()
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl PoaManager {
    /// A new manager, in the holding state (as `create_POA` makes one).
    pub fn new() -> PoaManager {
        PoaManager {
            inner: Arc::new(ManagerInner {
                state: AtomicU8::new(PoaManagerState::Holding.to_u8()),
                calls: CallCounter::default(),
                lock: Mutex::new(()),
                cond: Condvar::new(),
                poas: Mutex::new(Vec::new()),
            }),
        }
    }

    /// `get_state`.
    pub fn get_state(&self) -> PoaManagerState {
        PoaManagerState::from_u8(self.inner.state.load(Ordering::SeqCst))
    }

    /// `activate`: requests are dispatched (held ones resume). `AdapterInactive` once
    /// deactivated.
    pub fn activate(&self) -> Result<(), PoaError> {
        self.set_state(PoaManagerState::Active)
    }

    /// `hold_requests`: new requests wait. With `wait_for_completion`, returns once the
    /// requests already running have finished.
    pub fn hold_requests(&self, wait_for_completion: bool) -> Result<(), PoaError> {
        self.set_state(PoaManagerState::Holding)?;
        if wait_for_completion {
            self.wait_idle();
        }
        Ok(())
    }

    /// `discard_requests`: new (and held) requests fail with TRANSIENT.
    pub fn discard_requests(&self, wait_for_completion: bool) -> Result<(), PoaError> {
        self.set_state(PoaManagerState::Discarding)?;
        if wait_for_completion {
            self.wait_idle();
        }
        Ok(())
    }

    /// `deactivate`: requests fail with OBJ_ADAPTER from now on, and the manager can never be
    /// activated again. With `etherealize_objects`, the active objects of RETAIN POAs with a
    /// ServantActivator are etherealized (after their calls finish).
    pub fn deactivate(
        &self,
        etherealize_objects: bool,
        wait_for_completion: bool,
    ) -> Result<(), PoaError> {
        self.set_state(PoaManagerState::Inactive)?;
        if wait_for_completion {
            self.wait_idle();
        }
        if etherealize_objects {
            let poas: Vec<_> = lock(&self.inner.poas)
                .iter()
                .filter_map(Weak::upgrade)
                .collect();
            for p in poas {
                p.deactivate_all(true);
            }
        }
        Ok(())
    }

    fn set_state(&self, s: PoaManagerState) -> Result<(), PoaError> {
        let _g = lock(&self.inner.lock);
        if self.get_state() == PoaManagerState::Inactive {
            return Err(PoaError::AdapterInactive);
        }
        self.inner.state.store(s.to_u8(), Ordering::SeqCst);
        self.inner.cond.notify_all();
        Ok(())
    }

    /// Waits until no request is in flight. Calls from inside an upcall of a POA under this
    /// manager do not wait (they would wait for themselves).
    fn wait_idle(&self) {
        if current::in_upcall_of_manager(self) {
            return;
        }
        self.inner.calls.wait_idle();
    }

    pub(crate) fn register(&self, poa: &Arc<PoaInner>) {
        let mut v = lock(&self.inner.poas);
        v.retain(|w| w.strong_count() > 0);
        v.push(Arc::downgrade(poa));
    }

    /// Wakes held requests so that they notice their POA was destroyed.
    pub(crate) fn wake(&self) {
        let _g = lock(&self.inner.lock);
        self.inner.cond.notify_all();
    }

    /// Counts a request whose reply is deferred past its upcall: deactivation with
    /// `wait_for_completion` waits for it too.
    pub(crate) fn hold_call(&self) {
        self.inner.calls.hold();
    }

    /// Ends a request counted by [`PoaManager::hold_call`].
    pub(crate) fn release_call(&self) {
        self.inner.calls.release();
    }

    /// Passes the gate: `Ok` with a ticket that counts the request until dropped, or the
    /// exception the state calls for. Holding waits at most `max_wait`; `abort` is checked
    /// on every wake-up (the POA was destroyed).
    #[inline]
    pub(crate) fn enter(
        &self,
        max_wait: Duration,
        abort: impl Fn() -> bool,
    ) -> Result<CallTicket<'_>, SystemException> {
        let inner = &*self.inner;
        let ticket = inner.calls.begin();
        if inner.state.load(Ordering::SeqCst) == PoaManagerState::Active.to_u8() {
            return Ok(ticket);
        }
        drop(ticket);
        self.enter_not_active(max_wait, &abort)
    }

    /// [`PoaManager::enter`] when the manager is not active: out of line, so that the active
    /// case stays inlined in the call path whatever else the crate holds.
    #[cold]
    #[inline(never)]
    fn enter_not_active(
        &self,
        max_wait: Duration,
        abort: &dyn Fn() -> bool,
    ) -> Result<CallTicket<'_>, SystemException> {
        let inner = &*self.inner;
        let deadline = Instant::now() + max_wait;
        let mut g = lock(&inner.lock);
        loop {
            if abort() {
                return Err(SystemException::new(
                    SystemExceptionKind::ObjectNotExist,
                    minor::OBJECT_NOT_EXIST_NO_ADAPTER,
                ));
            }
            match self.get_state() {
                PoaManagerState::Active => {
                    return Ok(inner.calls.begin());
                }
                PoaManagerState::Discarding => {
                    return Err(SystemException::new(
                        SystemExceptionKind::Transient,
                        minor::TRANSIENT_DISCARDING,
                    ))
                }
                PoaManagerState::Inactive => {
                    return Err(SystemException::new(
                        SystemExceptionKind::ObjAdapter,
                        minor::OBJ_ADAPTER_INACTIVE,
                    ))
                }
                PoaManagerState::Holding => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(SystemException::new(
                            SystemExceptionKind::Transient,
                            minor::TRANSIENT_DISCARDING,
                        ));
                    }
                    g = inner
                        .cond
                        .wait_timeout(g, deadline - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
        }
    }
}

/// Counts calls in progress and lets a thread wait until there are none. Beginning and
/// ending a call are one atomic operation each; the lock is taken only when a thread waits.
#[derive(Default)]
pub(crate) struct CallCounter {
    n: AtomicUsize,
    /// Threads in `wait_idle` (so that finishing calls only lock when someone waits).
    waiters: AtomicUsize,
    lock: Mutex<()>,
    cond: Condvar,
}

impl CallCounter {
    /// Counts a call until the ticket is dropped.
    #[inline]
    pub(crate) fn begin(&self) -> CallTicket<'_> {
        self.n.fetch_add(1, Ordering::SeqCst);
        CallTicket { counter: self }
    }

    /// Counts a call that outlives its upcall (a deferred reply); ended by
    /// [`CallCounter::release`].
    pub(crate) fn hold(&self) {
        self.n.fetch_add(1, Ordering::SeqCst);
    }

    /// Ends a call counted by [`CallCounter::hold`].
    pub(crate) fn release(&self) {
        if self.n.fetch_sub(1, Ordering::SeqCst) == 1 && self.waiters.load(Ordering::SeqCst) > 0 {
            let _g = lock(&self.lock);
            self.cond.notify_all();
        }
    }

    /// The last call ended while threads wait in [`CallCounter::wait_idle`].
    #[cold]
    #[inline(never)]
    fn wake_waiters(&self) {
        let _g = lock(&self.lock);
        self.cond.notify_all();
    }

    /// Waits until no call is in progress.
    pub(crate) fn wait_idle(&self) {
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let mut g = lock(&self.lock);
        while self.n.load(Ordering::SeqCst) > 0 {
            g = self.cond.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        drop(g);
        self.waiters.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One call in progress; dropping it ends the call.
pub(crate) struct CallTicket<'c> {
    counter: &'c CallCounter,
}

impl Drop for CallTicket<'_> {
    // Inlined, the wake-up out of line: two of these end every call (the manager's and the
    // POA's), and were two calls of their own.
    #[inline]
    fn drop(&mut self) {
        let c = self.counter;
        if c.n.fetch_sub(1, Ordering::SeqCst) == 1 && c.waiters.load(Ordering::SeqCst) > 0 {
            c.wake_waiters();
        }
    }
}
