//! CORBA AMI, callback model (CORBA 3 §22): what the generated `sendc_<op>` methods and
//! `AMI_<Iface>Handler` reply handlers (`corbina-idl --ami`, `Builder::ami`) run on.
//!
//! `sendc_<op>` writes its request on the caller's thread (over the asynchronous connection,
//! so many requests are in flight on one connection), then hands the pending reply to the
//! *reply dispatcher*: a few ORB threads (`-ORBamiDispatchThreads`, 4 by default) that wait
//! for nothing but are woken when a reply is filed. The reply is delivered there by an ordinary call on the handler reference: through
//! its POA for a local handler (a collocated call), over GIOP for a remote one. Never on the
//! connection's reader thread, which a handler calling back into the ORB would deadlock.
//!
//! The polling model (`sendp_<op>` returning a generated `AMI_<I>Poller`) runs on the same
//! dispatcher: see [`Poller`].

mod amh;
mod exception_holder;
mod poller;

pub use amh::{AmhResponse, BAD_OPERATION_WRONG_RESPONSE};
pub use exception_holder::{ExceptionHolder, RaisedException, EXCEPTION_HOLDER_ID};
pub use poller::{
    PollableSet, PollableSetError, Poller, PollerError, BAD_OPERATION_WRONG_POLLER_OPERATION,
    WAIT_FOREVER,
};

use std::collections::VecDeque;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::task::{Context, Poll, Wake, Waker};

/// What a finished `sendc_` call does: the upcall on its reply handler.
pub type Delivery = Box<dyn FnOnce() + Send>;

type ReplyFuture = Pin<Box<dyn Future<Output = Delivery> + Send>>;

/// Reply-dispatcher threads when no ORB said (`-ORBamiDispatchThreads`): enough that a slow
/// remote handler does not hold back the other replies; they sleep when no reply is ready.
const DEFAULT_DISPATCH_THREADS: usize = 4;

/// The most dispatcher threads an ORB of this process asked for (0: none said).
static WANTED_THREADS: AtomicUsize = AtomicUsize::new(0);

static DISPATCHER: OnceLock<&'static Dispatcher> = OnceLock::new();

/// Asks for at least `threads` reply-dispatcher threads (an ORB's `-ORBamiDispatchThreads`).
/// The dispatcher is the process's: it runs the most any ORB asked for, started with the
/// first `sendc_` call, and more are started if a later ORB asks for more.
pub(crate) fn want_dispatch_threads(threads: usize) {
    let before = WANTED_THREADS.fetch_max(threads, Ordering::Relaxed);
    if threads > before {
        if let Some(d) = DISPATCHER.get() {
            d.grow(threads);
        }
    }
}

/// The threads the reply dispatcher runs (0 before the process's first `sendc_` call).
pub fn dispatch_threads() -> usize {
    DISPATCHER
        .get()
        .map_or(0, |d| d.threads.lock().map_or(0, |n| *n))
}

/// Starts an AMI call: polls `call` once on this thread (which writes the request, so that
/// requests leave in the order of the `sendc_` calls), then leaves it to the reply
/// dispatcher, which runs its [`Delivery`] when it completes. Generated `sendc_` methods
/// call this; a `Delivery` never runs on the calling thread.
pub fn send(call: impl Future<Output = Delivery> + Send + 'static) {
    start(call);
}

/// [`send`], returning what cancels the call (a poller's).
pub(crate) fn start(call: impl Future<Output = Delivery> + Send + 'static) -> CallHandle {
    let task = Arc::new(ReplyTask {
        call: Mutex::new(Some(Box::pin(call))),
    });
    // A first call to the server connects here, as a synchronous call would: the request is
    // written before `sendc_` returns.
    if let Some(delivery) = crate::client::connecting_inline(|| task.poll()) {
        dispatcher().push(Job::Deliver(delivery));
    }
    CallHandle(Arc::downgrade(&task))
}

/// An AMI call in flight, held weakly: while it waits for its reply, the connection's slot
/// holds its task (through the waker).
pub(crate) struct CallHandle(Weak<ReplyTask>);

impl CallHandle {
    /// Gives the call up: its future is dropped, which cancels the request on the wire
    /// (`CancelRequest`, the id freed, a late reply discarded), and nothing is delivered.
    /// Nothing happens once it has completed.
    pub(crate) fn cancel(&self) {
        let Some(task) = self.0.upgrade() else { return };
        let call = match task.call.lock() {
            Ok(mut c) => c.take(),
            Err(p) => p.into_inner().take(),
        };
        // Dropped outside the lock: it takes the connection's.
        drop(call);
    }
}

/// One `sendc_` call waiting for its reply; woken by the connection's reader (or timer).
struct ReplyTask {
    /// `None` once completed.
    call: Mutex<Option<ReplyFuture>>,
}

impl ReplyTask {
    /// Polls the call; its delivery if it completed now.
    fn poll(self: &Arc<Self>) -> Option<Delivery> {
        // A poisoned lock means a poll panicked: the call is over either way.
        let mut slot = self.call.lock().ok()?;
        let fut = slot.as_mut()?;
        let waker = Waker::from(self.clone());
        let mut cx = Context::from_waker(&waker);
        match catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(&mut cx))) {
            Ok(Poll::Pending) => None,
            Ok(Poll::Ready(delivery)) => {
                *slot = None;
                Some(delivery)
            }
            Err(_) => {
                *slot = None;
                None
            }
        }
    }
}

impl Wake for ReplyTask {
    fn wake(self: Arc<Self>) {
        dispatcher().push(Job::Poll(self));
    }
}

enum Job {
    Poll(Arc<ReplyTask>),
    Deliver(Delivery),
}

struct Dispatcher {
    jobs: Mutex<VecDeque<Job>>,
    ready: Condvar,
    /// Threads started.
    threads: Mutex<usize>,
}

fn dispatcher() -> &'static Dispatcher {
    DISPATCHER.get_or_init(|| {
        let d: &'static Dispatcher = Box::leak(Box::new(Dispatcher {
            jobs: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
            threads: Mutex::new(0),
        }));
        let wanted = match WANTED_THREADS.load(Ordering::Relaxed) {
            0 => DEFAULT_DISPATCH_THREADS,
            n => n,
        };
        d.grow(wanted);
        d
    })
}

impl Dispatcher {
    /// Starts threads until there are `threads`.
    fn grow(&'static self, threads: usize) {
        let Ok(mut started) = self.threads.lock() else {
            return;
        };
        while *started < threads {
            let spawned = std::thread::Builder::new()
                .name(format!("corbina-ami-{}", *started))
                .spawn(move || self.run());
            match spawned {
                Ok(_) => *started += 1,
                // Without any thread, replies would never be delivered: failing loudly is
                // the only honest outcome (the OS refused a thread at ORB start-up scale).
                Err(e) if *started == 0 => {
                    panic!("cannot start the AMI reply dispatcher thread: {e}")
                }
                Err(e) => {
                    tracing::warn!(
                        target: "corbina::ami",
                        "AMI reply dispatcher left at {} threads: {e}",
                        *started
                    );
                    return;
                }
            }
        }
    }

    fn push(&self, job: Job) {
        if let Ok(mut q) = self.jobs.lock() {
            q.push_back(job);
            drop(q);
            self.ready.notify_one();
        }
    }

    fn run(&self) {
        loop {
            let job = {
                let Ok(mut q) = self.jobs.lock() else { return };
                loop {
                    if let Some(j) = q.pop_front() {
                        break j;
                    }
                    q = match self.ready.wait(q) {
                        Ok(q) => q,
                        Err(_) => return,
                    };
                }
            };
            let delivery = match job {
                Job::Poll(task) => task.poll(),
                Job::Deliver(d) => Some(d),
            };
            if let Some(d) = delivery {
                // A panicking handler must not take a dispatcher thread with it.
                let _ = catch_unwind(AssertUnwindSafe(d));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ORB asking for more dispatcher threads than are running gets them started; the
    /// process keeps the most any ORB asked for.
    #[test]
    fn dispatcher_threads_follow_the_most_asked_for() {
        want_dispatch_threads(6);
        let (tx, rx) = std::sync::mpsc::channel();
        send(async move {
            let d: Delivery = Box::new(move || {
                let _ = tx.send(std::thread::current().name().map(str::to_owned));
            });
            d
        });
        let name = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .unwrap()
            .unwrap();
        assert!(name.starts_with("corbina-ami-"), "{name}");
        assert!(dispatch_threads() >= 6);
        want_dispatch_threads(9);
        assert!(dispatch_threads() >= 9);
        want_dispatch_threads(2);
        assert!(dispatch_threads() >= 9);
    }
}
