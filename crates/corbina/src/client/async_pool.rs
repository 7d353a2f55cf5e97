//! The strand pool of asynchronous calls to one address: up to `-ORBMaxStrandsPerRope`
//! connections, each carrying many calls at once.
//!
//! A call goes on the open connection with the fewest calls in flight. A connection is
//! *saturated* when it carries `-ORBasyncCallsPerStrand` calls: when every open one is, a
//! new one is connected in the background (the call does not wait for it) until the rope
//! has its maximum. One multiplexed connection would carry any number of calls, but a
//! server reading it serves its requests one at a time (omniORB's and Corbina's thread per
//! connection), so more connections let a server work on more of them at once.
//!
//! Connecting never happens on the thread that polls the call (a blocking connect would
//! stall its executor): a helper thread connects, within the connect timeout, and wakes the
//! calls waiting for it. Each waiting call gives up at its own deadline (TIMEOUT, as waiting
//! for a connection of the synchronous pool), and the connect goes on for the others.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use super::async_conn::AsyncConnection;
use crate::error::{Error, Phase};
use crate::transport::Address;
use crate::SystemException;

/// One of an address's connections for asynchronous calls ([`super::ConnectionInfo::async_strands`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsyncStrandInfo {
    /// Calls waiting for their reply on it.
    pub in_flight: usize,
    /// Whether a tokio runtime's I/O driver reads it (else a reader thread does).
    pub on_reactor: bool,
}

thread_local! {
    /// Whether connects happen on this thread: see [`connecting_inline`].
    static INLINE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with this thread's asynchronous calls connecting on it, as synchronous calls do:
/// for a caller that is no executor and wants its requests written in order (AMI's
/// `sendc_`, which writes before it returns).
pub(crate) fn connecting_inline<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            INLINE.with(|i| i.set(self.0));
        }
    }
    let _reset = Reset(INLINE.with(|i| i.replace(true)));
    f()
}

/// Whether this thread connects its asynchronous calls itself.
pub(crate) fn connects_inline() -> bool {
    INLINE.with(|i| i.get())
}

/// The asynchronous connections of one rope.
#[derive(Default)]
pub(crate) struct AsyncStrands {
    state: Mutex<PoolState>,
}

#[derive(Default)]
struct PoolState {
    open: Vec<Arc<AsyncConnection>>,
    /// A connect under way.
    connecting: Option<Arc<Connecting>>,
    /// Counts closes: a connect that was under way at a close does not join the pool.
    generation: u64,
}

/// What [`AsyncStrands::pick`] decided.
pub(crate) enum Pick {
    /// Send on this connection; `spread`: also connect another one in the background
    /// (start it with [`AsyncStrands::start`]).
    Use(Arc<AsyncConnection>, Option<Arc<Connecting>>),
    /// No connection is open: wait for this connect; `Some` when the caller starts it.
    Wait(ConnectWait, Option<Arc<Connecting>>),
}

/// A connect under way on a helper thread.
pub(crate) struct Connecting {
    peer: Address,
    /// The pool's generation when it started.
    generation: u64,
    /// The deadline it connects within: the first waiting call's when that call connects on
    /// its own thread ([`connecting_inline`]), else none (each waiter has its own).
    deadline: Option<Instant>,
    state: Mutex<ConnectState>,
}

#[derive(Default)]
struct ConnectState {
    outcome: Option<Result<Arc<AsyncConnection>, SystemException>>,
    waiting: Vec<Waker>,
}

impl AsyncStrands {
    #[inline]
    fn lock(
        &self,
        peer: &Address,
    ) -> Result<std::sync::MutexGuard<'_, PoolState>, SystemException> {
        self.state.lock().map_err(|_| {
            Error::PoolPoisoned {
                endpoint: peer.clone(),
            }
            .into()
        })
    }

    /// The connection a call goes on (see the [module docs](self)); `per_strand`: calls
    /// that saturate a connection (0: never more than one), `max`: most connections.
    /// Inlined into the rope's one caller (a call less per asynchronous call).
    #[inline]
    pub(crate) fn pick(
        &self,
        peer: &Address,
        per_strand: usize,
        max: usize,
        deadline: Option<Instant>,
    ) -> Result<Pick, SystemException> {
        let mut st = self.lock(peer)?;
        let mut best: Option<(usize, usize)> = None;
        let mut i = 0;
        while i < st.open.len() {
            match st.open[i].load() {
                Some(load) => {
                    if best.is_none_or(|(_, l)| load < l) {
                        best = Some((i, load));
                    }
                    i += 1;
                }
                None => {
                    st.open.swap_remove(i);
                    // The best one may have moved into the freed place.
                    if best.is_some_and(|(b, _)| b == st.open.len()) {
                        best = best.map(|(_, l)| (i, l));
                    }
                }
            }
        }
        if let Some((i, load)) = best {
            let conn = st.open[i].clone();
            let spread = per_strand > 0
                && load >= per_strand
                && st.open.len() < max
                && st.connecting.is_none();
            let start = spread.then(|| st.start(peer, None));
            return Ok(Pick::Use(conn, start));
        }
        let (connecting, start) = match &st.connecting {
            Some(c) => (c.clone(), None),
            None => {
                let c = st.start(peer, deadline.filter(|_| connects_inline()));
                (c.clone(), Some(c))
            }
        };
        Ok(Pick::Wait(
            ConnectWait(Box::new(Waiting {
                connecting,
                deadline,
                alarm: None,
            })),
            start,
        ))
    }

    /// Files the outcome of `connecting`: the new connection joins the pool (unless the
    /// pool was closed meanwhile) and the calls waiting for it are woken.
    pub(crate) fn finish(
        &self,
        connecting: &Connecting,
        outcome: Result<Arc<AsyncConnection>, SystemException>,
        closed: impl FnOnce() -> SystemException,
    ) {
        let outcome = match self.state.lock() {
            Ok(mut st) => {
                if st
                    .connecting
                    .as_ref()
                    .is_some_and(|c| std::ptr::eq(&**c, connecting))
                {
                    st.connecting = None;
                }
                match outcome {
                    Ok(c) if st.generation != connecting.generation => {
                        c.close();
                        Err(closed())
                    }
                    Ok(c) => {
                        st.open.push(c.clone());
                        Ok(c)
                    }
                    Err(e) => Err(e),
                }
            }
            Err(_) => Err(closed()),
        };
        let waiting = match connecting.state.lock() {
            Ok(mut cs) => {
                cs.outcome = Some(outcome);
                std::mem::take(&mut cs.waiting)
            }
            Err(_) => Vec::new(),
        };
        for w in waiting {
            w.wake();
        }
    }

    /// Closes every connection (the ORB shuts down): calls waiting on them fail with
    /// COMM_FAILURE, and a connect under way does not join the pool.
    pub(crate) fn close(&self) {
        let open = match self.state.lock() {
            Ok(mut st) => {
                st.generation += 1;
                std::mem::take(&mut st.open)
            }
            Err(_) => return,
        };
        for c in open {
            c.close();
        }
    }

    /// Calls waiting for their reply, over all connections.
    pub(crate) fn in_flight(&self) -> usize {
        let open = self
            .state
            .lock()
            .map(|st| st.open.clone())
            .unwrap_or_default();
        open.iter().map(|c| c.in_flight()).sum()
    }

    /// What each open connection carries.
    pub(crate) fn strands(&self) -> Vec<AsyncStrandInfo> {
        let open = self
            .state
            .lock()
            .map(|st| st.open.clone())
            .unwrap_or_default();
        open.iter()
            .filter_map(|c| {
                Some(AsyncStrandInfo {
                    in_flight: c.load()?,
                    on_reactor: c.on_reactor(),
                })
            })
            .collect()
    }
}

impl PoolState {
    fn start(&mut self, peer: &Address, deadline: Option<Instant>) -> Arc<Connecting> {
        let c = Arc::new(Connecting {
            peer: peer.clone(),
            generation: self.generation,
            deadline,
            state: Mutex::new(ConnectState::default()),
        });
        self.connecting = Some(c.clone());
        c
    }
}

impl Connecting {
    /// The deadline it connects within.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline
    }
}

/// A call waiting for its rope's first asynchronous connection, until its own deadline.
/// Boxed: it is part of every call's future, and rarely used.
pub(crate) struct ConnectWait(Box<Waiting>);

struct Waiting {
    connecting: Arc<Connecting>,
    /// The call's.
    deadline: Option<Instant>,
    /// Wakes the call at its deadline.
    alarm: Option<super::async_timer::Alarm>,
}

impl ConnectWait {
    /// Whether a call with `deadline` should connect again after this connect timed out:
    /// it was bounded by an earlier call's shorter deadline.
    pub(crate) fn bounded_by_other(&self, deadline: Option<Instant>) -> bool {
        match (self.0.connecting.deadline, deadline) {
            (Some(theirs), Some(ours)) => ours > theirs,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }
}

impl Future for ConnectWait {
    type Output = Result<Arc<AsyncConnection>, SystemException>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self.get_mut().0;
        let peer = &this.connecting.peer;
        let Ok(mut cs) = this.connecting.state.lock() else {
            return Poll::Ready(Err(Error::PoolPoisoned {
                endpoint: peer.clone(),
            }
            .into()));
        };
        if let Some(outcome) = &cs.outcome {
            return Poll::Ready(outcome.clone());
        }
        if let Some(d) = this.deadline {
            if Instant::now() >= d {
                // Given up: the connect goes on for the other calls.
                cs.waiting.retain(|w| !w.will_wake(cx.waker()));
                return Poll::Ready(Err(Error::Timeout {
                    endpoint: peer.clone(),
                    phase: Phase::Wait,
                }
                .into()));
            }
            if !this.alarm.as_ref().is_some_and(|a| a.wakes(cx.waker())) {
                this.alarm = super::async_timer::wake_at(d, cx.waker());
            }
        }
        if !cs.waiting.iter().any(|w| w.will_wake(cx.waker())) {
            cs.waiting.push(cx.waker().clone());
        }
        Poll::Pending
    }
}
