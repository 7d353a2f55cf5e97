//! Who reads an asynchronous connection: the I/O driver of the tokio runtime the first call
//! was polled in (feature `tokio`), else a reader thread.
//!
//! Under tokio the connection's socket is registered with the runtime's driver (`AsyncFd`,
//! read interest). The connection registers its own waker, not a task's: when the socket
//! turns readable the driver wakes it, and it reads what arrived without blocking, files
//! each reply in its call's slot and wakes that call's task, on the worker that ran the
//! driver. So a reply costs one wake-up (the worker's) instead of two (a reader thread's,
//! then the task's); and since no task holds the registration, a task that gives up its
//! call cannot leave the others without a reader.
//!
//! Only plain sockets (TCP, Unix) take this path: their non-blocking read drains the socket
//! before it says `WouldBlock`, which the driver's edge-triggered readiness needs. TLS (whose
//! records may sit half-read in rustls) and shared memory keep the reader thread, as does any
//! call polled outside a tokio runtime or in a runtime built without I/O (`enable_io`).

#[cfg(feature = "tokio")]
pub(crate) use imp::*;

/// A runtime to register connections with: never constructed without the feature.
#[cfg(not(feature = "tokio"))]
#[derive(Clone)]
pub(crate) enum Runtime {}

/// The runtime the calling task runs in, if its I/O driver can serve connections.
#[cfg(not(feature = "tokio"))]
#[inline]
pub(crate) fn current() -> Option<Runtime> {
    None
}

#[cfg(feature = "tokio")]
mod imp {
    use std::cell::Cell;
    use std::os::fd::{AsRawFd, RawFd};
    use std::panic::{catch_unwind, AssertUnwindSafe, PanicHookInfo};
    use std::sync::{Arc, Mutex, PoisonError};

    use tokio::io::unix::AsyncFd;
    use tokio::io::Interest;

    use crate::transport::{Stream, TransportKind};

    /// A runtime to register connections with.
    pub(crate) type Runtime = tokio::runtime::Handle;

    /// A connection's registration with a runtime's I/O driver.
    pub(crate) struct Registration {
        pub(crate) fd: AsyncFd<Socket>,
    }

    /// The connection's descriptor, kept open by the stream for as long as it is registered.
    pub(crate) struct Socket(Stream);

    impl AsRawFd for Socket {
        fn as_raw_fd(&self) -> RawFd {
            self.0.poll_fd().as_raw_fd()
        }
    }

    /// Runtimes found without an I/O driver (few: the check below panics once for each).
    static NO_IO: Mutex<Vec<tokio::runtime::Id>> = Mutex::new(Vec::new());
    const NO_IO_REMEMBERED: usize = 16;

    /// The runtime the calling task runs in, if it is tokio's.
    #[inline]
    pub(crate) fn current() -> Option<Runtime> {
        let rt = tokio::runtime::Handle::try_current().ok()?;
        let known_without_io = NO_IO.lock().is_ok_and(|ids| ids.contains(&rt.id()));
        (!known_without_io).then_some(rt)
    }

    /// Registers `stream` with `runtime`'s I/O driver for reading; `None` when its transport
    /// or the runtime cannot do without a reader thread.
    #[allow(unsafe_code)]
    pub(crate) fn register(stream: &Stream, runtime: &Runtime) -> Option<Registration> {
        if !matches!(stream.kind(), TransportKind::Tcp | TransportKind::Unix) {
            return None;
        }
        let _entered = runtime.enter();
        let socket = Socket(stream.clone());
        // tokio offers no test for a runtime built without I/O other than this panic.
        match quietly(|| {
            // SAFETY: `socket` holds the connection (an `Arc`), which keeps its descriptor
            // open, and the same one, for as long as the `AsyncFd` owns `socket`.
            unsafe { AsyncFd::register_with_interest(socket, Interest::READABLE) }
        }) {
            Ok(Ok(fd)) => Some(Registration { fd }),
            Ok(Err(_)) => None,
            Err(_) => {
                if let Ok(mut ids) = NO_IO.lock() {
                    if ids.len() == NO_IO_REMEMBERED {
                        ids.remove(0);
                    }
                    ids.push(runtime.id());
                }
                None
            }
        }
    }

    type Hook = Box<dyn Fn(&PanicHookInfo<'_>) + Sync + Send + 'static>;

    thread_local! {
        /// Set while this thread runs [`quietly`]'s closure.
        static QUIET: Cell<bool> = const { Cell::new(false) };
    }

    /// Runs `f`, catching a panic, without the panic hook hearing of a panic of `f`'s: the
    /// one tokio raises for a runtime without I/O is how we learn of it, not the user's
    /// business (it printed a message and a backtrace hint). Panics on other threads
    /// meanwhile reach the hook as usual; the hook is put back as it was. Called once per
    /// connection registered, never per call.
    fn quietly<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
        // One at a time: each takes the hook out and puts it back.
        static ONE: Mutex<()> = Mutex::new(());
        let _one = ONE.lock().unwrap_or_else(PoisonError::into_inner);
        let saved: Arc<Mutex<Option<Hook>>> = Arc::new(Mutex::new(Some(std::panic::take_hook())));
        let inner = saved.clone();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.get() {
                if let Some(hook) = &*inner.lock().unwrap_or_else(PoisonError::into_inner) {
                    hook(info);
                }
            }
        }));
        QUIET.set(true);
        let r = catch_unwind(AssertUnwindSafe(f));
        QUIET.set(false);
        // Dropping the wrapper waits for other threads' panics running it.
        drop(std::panic::take_hook());
        if let Some(hook) = saved.lock().unwrap_or_else(PoisonError::into_inner).take() {
            std::panic::set_hook(hook);
        }
        r
    }
}
