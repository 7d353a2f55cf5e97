//! Wakes waiting tasks at their deadlines, for asynchronous calls waiting on something that
//! has no deadline of its own: a connect under way for several calls, each of which gives up
//! at its own deadline while the connect goes on for the others.
//!
//! One thread for the process, started with the first deadline; it sleeps while no deadline
//! is due. Executor-agnostic (a tokio timer would need a runtime with time enabled).

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::task::Waker;
use std::time::Instant;

/// A waker registered to be woken at a deadline; dropping it unregisters it.
pub(crate) struct Alarm {
    key: (Instant, u64),
    waker: Waker,
}

impl Alarm {
    /// Whether it wakes `waker`'s task.
    pub(crate) fn wakes(&self, waker: &Waker) -> bool {
        self.waker.will_wake(waker)
    }
}

impl Drop for Alarm {
    fn drop(&mut self) {
        if let Some(t) = TIMER.get() {
            t.lock().due.remove(&self.key);
        }
    }
}

#[derive(Default)]
struct Timer {
    state: Mutex<TimerState>,
    changed: Condvar,
}

#[derive(Default)]
struct TimerState {
    /// By deadline, then by a counter that tells equal deadlines apart.
    due: BTreeMap<(Instant, u64), Waker>,
    next: u64,
    started: bool,
}

static TIMER: OnceLock<Timer> = OnceLock::new();

impl Timer {
    fn lock(&self) -> MutexGuard<'_, TimerState> {
        // Nothing panics while holding it; a poisoned map is still a valid map.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn run(&self) {
        let mut st = self.lock();
        loop {
            let now = Instant::now();
            let wait = match st.due.first_key_value() {
                Some((&(t, _), _)) if t <= now => {
                    let later = st.due.split_off(&(now, u64::MAX));
                    let due = std::mem::replace(&mut st.due, later);
                    drop(st);
                    for (_, w) in due {
                        w.wake();
                    }
                    st = self.lock();
                    continue;
                }
                Some((&(t, _), _)) => Some(t - now),
                None => None,
            };
            st = match wait {
                Some(d) => {
                    self.changed
                        .wait_timeout(st, d)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
                None => self.changed.wait(st).unwrap_or_else(|p| p.into_inner()),
            };
        }
    }
}

/// Wakes `waker` at `at` (unless the returned alarm is dropped first); `None` if the timer
/// thread cannot be started (the wait is then bounded by what it waits for only).
pub(crate) fn wake_at(at: Instant, waker: &Waker) -> Option<Alarm> {
    let timer = TIMER.get_or_init(Timer::default);
    let mut st = timer.lock();
    if !st.started {
        let spawned = std::thread::Builder::new()
            .name("corbina-async-deadlines".into())
            .spawn(|| {
                if let Some(t) = TIMER.get() {
                    t.run();
                }
            });
        if spawned.is_err() {
            return None;
        }
        st.started = true;
    }
    let key = (at, st.next);
    st.next += 1;
    let earliest = st.due.first_key_value().is_none_or(|(k, _)| key < *k);
    st.due.insert(key, waker.clone());
    drop(st);
    if earliest {
        timer.changed.notify_one();
    }
    Some(Alarm {
        key,
        waker: waker.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;
    use std::time::Duration;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// An alarm wakes its task at its deadline, a later one after it, a dropped one never.
    #[test]
    fn alarms_wake_at_their_deadlines_and_not_once_dropped() {
        let (a, b, c) = (
            Arc::new(Count(AtomicUsize::new(0))),
            Arc::new(Count(AtomicUsize::new(0))),
            Arc::new(Count(AtomicUsize::new(0))),
        );
        let now = Instant::now();
        let wa = Waker::from(a.clone());
        let later = wake_at(now + Duration::from_millis(300), &Waker::from(b.clone())).unwrap();
        let soon = wake_at(now + Duration::from_millis(50), &wa).unwrap();
        assert!(soon.wakes(&wa));
        drop(wake_at(now + Duration::from_millis(50), &Waker::from(c.clone())).unwrap());
        let t = Instant::now();
        while a.0.load(Ordering::SeqCst) == 0 {
            assert!(t.elapsed() < Duration::from_secs(10), "never woken");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(now.elapsed() >= Duration::from_millis(50));
        assert_eq!(b.0.load(Ordering::SeqCst), 0);
        while b.0.load(Ordering::SeqCst) == 0 {
            assert!(t.elapsed() < Duration::from_secs(10), "never woken");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(now.elapsed() >= Duration::from_millis(300));
        assert_eq!(c.0.load(Ordering::SeqCst), 0);
        drop((soon, later));
    }
}
