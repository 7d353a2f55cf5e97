//! CORBA AMI, callback model (CORBA 3 §22): what the generated `sendc_<op>` methods and
//! `AMI_<Iface>Handler` reply handlers (`corbina-idl --ami`, `Builder::ami`) run on.
//!
//! `sendc_<op>` writes its request on the caller's thread (over the asynchronous connection,
//! so many requests are in flight on one connection), then hands the pending reply to the
//! *reply dispatcher*: a few ORB threads that wait for nothing but are woken when a reply is
//! filed. The reply is delivered there by an ordinary call on the handler reference: through
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
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::task::{Context, Poll, Wake, Waker};

/// What a finished `sendc_` call does: the upcall on its reply handler.
pub type Delivery = Box<dyn FnOnce() + Send>;

type ReplyFuture = Pin<Box<dyn Future<Output = Delivery> + Send>>;

/// Reply-dispatcher threads: enough that a slow remote handler does not hold back the other
/// replies; they sleep when no reply is ready.
const DISPATCH_THREADS: usize = 4;

/// Starts an AMI call: polls `call` once on this thread (which writes the request, so that
/// requests leave in the order of the `sendc_` calls), then leaves it to the reply
/// dispatcher, which runs its [`Delivery`] when it completes. Generated `sendc_` methods
/// call this; a `Delivery` never runs on the calling thread.
pub fn send(call: impl Future<Output = Delivery> + Send + 'static) {
    let task = Arc::new(ReplyTask {
        call: Mutex::new(Some(Box::pin(call))),
    });
    if let Some(delivery) = task.poll() {
        dispatcher().push(Job::Deliver(delivery));
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
}

fn dispatcher() -> &'static Dispatcher {
    static DISPATCHER: OnceLock<&'static Dispatcher> = OnceLock::new();
    DISPATCHER.get_or_init(|| {
        let d: &'static Dispatcher = Box::leak(Box::new(Dispatcher {
            jobs: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
        }));
        for k in 0..DISPATCH_THREADS {
            // Without threads, replies would never be delivered: failing loudly is the only
            // honest outcome (the OS refused a thread at ORB start-up scale).
            std::thread::Builder::new()
                .name(format!("corbina-ami-{k}"))
                .spawn(move || d.run())
                .expect("cannot start the AMI reply dispatcher thread");
        }
        d
    })
}

impl Dispatcher {
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
