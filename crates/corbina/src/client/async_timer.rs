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
    use std::sync::{Arc, Mutex};
    use std::task::Wake;
    use std::time::Duration;

    /// When it was woken.
    #[derive(Default)]
    struct Woken(Mutex<Option<Instant>>);
    impl Wake for Woken {
        fn wake(self: Arc<Self>) {
            self.0.lock().unwrap().get_or_insert_with(Instant::now);
        }
    }

    fn woken_at(w: &Woken) -> Instant {
        let t = Instant::now();
        loop {
            if let Some(at) = *w.0.lock().unwrap() {
                return at;
            }
            assert!(t.elapsed() < Duration::from_secs(10), "never woken");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Alarms wake their tasks at (not before) their deadlines, in deadline order whatever
    /// the order they were set in; a dropped one never.
    #[test]
    fn alarms_wake_at_their_deadlines_and_not_once_dropped() {
        let (a, b, c) = (
            Arc::new(Woken::default()),
            Arc::new(Woken::default()),
            Arc::new(Woken::default()),
        );
        let now = Instant::now();
        let (at_a, at_b) = (
            now + Duration::from_millis(50),
            now + Duration::from_millis(300),
        );
        let wa = Waker::from(a.clone());
        let later = wake_at(at_b, &Waker::from(b.clone())).unwrap();
        let soon = wake_at(at_a, &wa).unwrap();
        assert!(soon.wakes(&wa));
        drop(wake_at(now + Duration::from_millis(200), &Waker::from(c.clone())).unwrap());
        assert!(woken_at(&a) >= at_a);
        assert!(woken_at(&b) >= at_b);
        assert!(c.0.lock().unwrap().is_none());
        drop((soon, later));
    }
}
