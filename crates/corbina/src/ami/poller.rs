//! CORBA AMI, polling model (CORBA 3 §22, implied IDL `AMI_<I>Poller`): what the generated
//! `sendp_<op>` methods return.
//!
//! A generated poller (`AmiCalcPoller` for `Calc`) dereferences to [`Poller`], the
//! `Messaging::Poller` / `CORBA::Pollable` part, and adds one method per operation that
//! takes the reply. The call runs on the asynchronous connection and the AMI reply
//! dispatcher (no thread per poller); its outcome is filed here when it arrives, and a
//! waiting poll is woken.
//!
//! Pollers are local objects: the spec makes them valuetypes, but one is never marshalled
//! (it stands for a reply arriving in this process), so it maps to a plain Rust type.

use std::any::Any;
use std::future::Future;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::{CompletionStatus, ObjectRef, SystemException, SystemExceptionKind};

/// A `timeout` (milliseconds) that waits without limit, as the spec's `0xFFFFFFFF`.
pub const WAIT_FOREVER: u32 = u32::MAX;

/// What a poller raises itself (as opposed to the exceptions of the polled operation).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PollerError {
    /// The reply did not arrive within the timeout: `TIMEOUT`, OMG minor 1.
    #[error("the reply to '{0}' did not arrive within the poll's timeout")]
    NotReady(String),
    /// The reply was already taken from this poller: `OBJECT_NOT_EXIST`, OMG minor 5.
    #[error("the reply to '{0}' was already taken from this poller")]
    AlreadyTaken(String),
    /// The poller was polled for another operation than its own: `BAD_OPERATION`.
    #[error("a poller for '{expected}' was polled for '{polled}'")]
    WrongOperation {
        /// The operation the poller's request invoked.
        expected: String,
        /// The operation polled.
        polled: String,
    },
}

/// BAD_OPERATION: a poller polled for another operation (in the minor-code table of
/// [`crate::error`]).
pub use crate::error::minor::BAD_OPERATION_WRONG_POLLER_OPERATION;

impl From<PollerError> for SystemException {
    fn from(e: PollerError) -> Self {
        let (kind, minor, completed) = match e {
            // The request may still complete after the poll gave up.
            PollerError::NotReady(_) => (
                SystemExceptionKind::Timeout,
                crate::error::minor::TIMEOUT_NOT_READY,
                CompletionStatus::Maybe,
            ),
            PollerError::AlreadyTaken(_) => (
                SystemExceptionKind::ObjectNotExist,
                crate::error::minor::OBJECT_NOT_EXIST_POLLER_TAKEN,
                CompletionStatus::No,
            ),
            PollerError::WrongOperation { .. } => (
                SystemExceptionKind::BadOperation,
                BAD_OPERATION_WRONG_POLLER_OPERATION,
                CompletionStatus::No,
            ),
        };
        SystemException::new(kind, minor).completed(completed)
    }
}

enum Slot {
    Pending,
    /// The operation's outcome (`Result<T, E>` of the generated method), boxed so that one
    /// runtime type serves every operation.
    Ready(Box<dyn Any + Send>),
    Taken,
}

/// Wakes a [`PollableSet`] waiting in `get_ready_pollable`.
#[derive(Default)]
struct Signal {
    generation: Mutex<u64>,
    changed: Condvar,
}

impl Signal {
    fn notify(&self) {
        if let Ok(mut g) = self.generation.lock() {
            *g = g.wrapping_add(1);
            self.changed.notify_all();
        }
    }
}

struct State {
    slot: Mutex<(Slot, Vec<Arc<Signal>>)>,
    ready: Condvar,
}

impl State {
    fn lock(&self) -> MutexGuard<'_, (Slot, Vec<Arc<Signal>>)> {
        // Nothing panics while holding the lock; a poisoned one still holds a valid slot.
        self.slot.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn fill(&self, outcome: Box<dyn Any + Send>) {
        let mut g = self.lock();
        g.0 = Slot::Ready(outcome);
        let signals = std::mem::take(&mut g.1);
        drop(g);
        self.ready.notify_all();
        for s in signals {
            s.notify();
        }
    }
}

/// The `Messaging::Poller` part of a generated `AMI_<I>Poller`: one asynchronous call's
/// pending reply. Clones share the reply (it can be taken once). Dropping every clone (a
/// [`PollableSet`] holds one) before the reply arrives cancels the request, as dropping an
/// asynchronous call's future does: `CancelRequest` goes to the server, the request id is
/// freed and a reply that comes later is discarded.
#[derive(Clone)]
pub struct Poller {
    state: Arc<State>,
    target: ObjectRef,
    operation: &'static str,
    from_poller: Arc<std::sync::atomic::AtomicBool>,
    _call: Arc<Outstanding>,
}

/// Cancels the call when the last clone of its poller goes.
struct Outstanding(super::CallHandle);

impl Drop for Outstanding {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl std::fmt::Debug for Poller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Poller")
            .field("operation", &self.operation)
            .field("ready", &self.is_ready(0))
            .finish_non_exhaustive()
    }
}

/// Pollers compare by identity: the same call's reply.
impl PartialEq for Poller {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.state, &other.state)
    }
}

impl Eq for Poller {}

impl Poller {
    /// Starts `call` (the request is written on this thread, so requests leave in the order
    /// of the `sendp_` calls) and returns the poller its outcome will be filed in. Generated
    /// `sendp_<op>` methods call this; `operation` is the IDL operation name the poller is
    /// polled with (`get_<attr>`/`set_<attr>` for attributes).
    pub fn start<T, E>(
        target: ObjectRef,
        operation: &'static str,
        call: impl Future<Output = Result<T, E>> + Send + 'static,
    ) -> Self
    where
        T: Send + 'static,
        E: Send + 'static,
    {
        let state = Arc::new(State {
            slot: Mutex::new((Slot::Pending, Vec::new())),
            ready: Condvar::new(),
        });
        let filed = state.clone();
        let call = super::start(async move {
            let outcome = call.await;
            let delivery: super::Delivery = Box::new(move || filed.fill(Box::new(outcome)));
            delivery
        });
        Poller {
            state,
            target,
            operation,
            from_poller: Default::default(),
            _call: Arc::new(Outstanding(call)),
        }
    }

    /// `Pollable::is_ready`: whether the reply is here, waiting up to `timeout` ms for it
    /// (0: no wait; [`WAIT_FOREVER`]: no limit). True also once the reply was taken (a poll
    /// would not block).
    pub fn is_ready(&self, timeout: u32) -> bool {
        let g = self.wait(timeout);
        !matches!(g.0, Slot::Pending)
    }

    /// `Messaging::Poller::operation_target`: the object the request went to.
    pub fn operation_target(&self) -> &ObjectRef {
        &self.target
    }

    /// `Messaging::Poller::operation_name`: the polled operation (`get_<attr>` for an
    /// attribute read).
    pub fn operation_name(&self) -> &'static str {
        self.operation
    }

    /// `Messaging::Poller::is_from_poller`: whether the last poll's system exception came
    /// from the poller (`TIMEOUT`, `OBJECT_NOT_EXIST`, `BAD_OPERATION`) rather than from the
    /// operation's reply.
    pub fn is_from_poller(&self) -> bool {
        self.from_poller.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Takes the reply of `operation`, waiting up to `timeout` ms: what a generated poller's
    /// per-operation method calls. `Err` with `TIMEOUT` if it is not here in time (the
    /// poller stays usable), `OBJECT_NOT_EXIST` if it was taken already, `BAD_OPERATION`
    /// for another operation than the poller's.
    pub fn take<T, E>(&self, operation: &str, timeout: u32) -> Result<T, E>
    where
        T: 'static,
        E: From<SystemException> + 'static,
    {
        let outcome = self.take_outcome::<T, E>(operation, timeout);
        self.from_poller
            .store(outcome.is_err(), std::sync::atomic::Ordering::Relaxed);
        match outcome {
            Ok(r) => r,
            Err(e) => Err(E::from(e.into())),
        }
    }

    fn take_outcome<T: 'static, E: 'static>(
        &self,
        operation: &str,
        timeout: u32,
    ) -> Result<Result<T, E>, PollerError> {
        if operation != self.operation {
            return Err(PollerError::WrongOperation {
                expected: self.operation.into(),
                polled: operation.into(),
            });
        }
        let mut g = self.wait(timeout);
        match std::mem::replace(&mut g.0, Slot::Taken) {
            Slot::Pending => {
                g.0 = Slot::Pending;
                Err(PollerError::NotReady(operation.into()))
            }
            Slot::Taken => Err(PollerError::AlreadyTaken(operation.into())),
            Slot::Ready(b) => match b.downcast::<Result<T, E>>() {
                Ok(r) => Ok(*r),
                // Only a hand-made call with the wrong types gets here.
                Err(b) => {
                    g.0 = Slot::Ready(b);
                    Err(PollerError::WrongOperation {
                        expected: self.operation.into(),
                        polled: operation.into(),
                    })
                }
            },
        }
    }

    /// The slot once it is no longer pending, or after `timeout` ms.
    fn wait(&self, timeout: u32) -> MutexGuard<'_, (Slot, Vec<Arc<Signal>>)> {
        let mut g = self.state.lock();
        if timeout == 0 || !matches!(g.0, Slot::Pending) {
            return g;
        }
        if timeout == WAIT_FOREVER {
            while matches!(g.0, Slot::Pending) {
                g = self.state.ready.wait(g).unwrap_or_else(|p| p.into_inner());
            }
            return g;
        }
        let deadline = Instant::now() + Duration::from_millis(u64::from(timeout));
        while matches!(g.0, Slot::Pending) {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            g = self
                .state
                .ready
                .wait_timeout(g, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        g
    }

    /// Registers `signal` to be woken when the reply arrives; false if it is here already.
    fn watch(&self, signal: &Arc<Signal>) -> bool {
        let mut g = self.state.lock();
        if matches!(g.0, Slot::Pending) {
            if !g.1.iter().any(|s| Arc::ptr_eq(s, signal)) {
                g.1.push(signal.clone());
            }
            true
        } else {
            false
        }
    }
}

/// What a [`PollableSet`] raises (`CORBA::PollableSet`'s user exceptions).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PollableSetError {
    /// `NoPossiblePollable`: the set is empty, so no reply can become ready.
    #[error("the pollable set is empty")]
    NoPossiblePollable,
    /// `UnknownPollable`: the poller is not in the set.
    #[error("the poller is not in the pollable set")]
    UnknownPollable,
    /// No poller became ready within the timeout (`TIMEOUT`, as a poll's).
    #[error("no reply arrived within the timeout")]
    NotReady,
}

/// `CORBA::PollableSet`: waits for the first of several pollers to be ready, from one
/// thread, without a thread per poller.
#[derive(Default)]
pub struct PollableSet {
    pollers: Vec<Poller>,
    signal: Arc<Signal>,
}

impl std::fmt::Debug for PollableSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PollableSet")
            .field("pollers", &self.pollers)
            .finish_non_exhaustive()
    }
}

impl PollableSet {
    /// An empty set (`Pollable::create_pollable_set`).
    pub fn new() -> Self {
        Self::default()
    }

    /// `add_pollable`: adds `poller` (a clone sharing its reply); adding it twice keeps one.
    pub fn add_pollable(&mut self, poller: &Poller) {
        if !self.pollers.contains(poller) {
            self.pollers.push(poller.clone());
        }
    }

    /// `remove`: takes `poller` out of the set.
    pub fn remove(&mut self, poller: &Poller) -> Result<(), PollableSetError> {
        let k = self
            .pollers
            .iter()
            .position(|p| p == poller)
            .ok_or(PollableSetError::UnknownPollable)?;
        self.pollers.remove(k);
        Ok(())
    }

    /// `number_left`: how many pollers the set holds.
    pub fn number_left(&self) -> usize {
        self.pollers.len()
    }

    /// `get_ready_pollable`: a poller whose reply is here (removed from the set, as the spec
    /// has it), waiting up to `timeout` ms (0: no wait; [`WAIT_FOREVER`]: no limit).
    pub fn get_ready_pollable(&mut self, timeout: u32) -> Result<Poller, PollableSetError> {
        if self.pollers.is_empty() {
            return Err(PollableSetError::NoPossiblePollable);
        }
        let deadline = (timeout != WAIT_FOREVER)
            .then(|| Instant::now() + Duration::from_millis(u64::from(timeout)));
        loop {
            // Read the generation before looking, so that a reply filed in between wakes
            // the wait below.
            let seen = *self
                .signal
                .generation
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let mut ready = None;
            for (k, p) in self.pollers.iter().enumerate() {
                if !p.watch(&self.signal) {
                    ready = Some(k);
                    break;
                }
            }
            if let Some(k) = ready {
                return Ok(self.pollers.remove(k));
            }
            let mut g = self
                .signal
                .generation
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            while *g == seen {
                match deadline {
                    None => {
                        g = self
                            .signal
                            .changed
                            .wait(g)
                            .unwrap_or_else(|p| p.into_inner());
                    }
                    Some(d) => {
                        let now = Instant::now();
                        if now >= d {
                            return Err(PollableSetError::NotReady);
                        }
                        g = self
                            .signal
                            .changed
                            .wait_timeout(g, d - now)
                            .unwrap_or_else(|p| p.into_inner())
                            .0;
                    }
                }
            }
        }
    }
}
