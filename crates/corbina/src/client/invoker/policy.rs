//! The rules for driving one call, written once for every path that carries calls (the
//! synchronous strand, the same with portable interceptors, the asynchronous connection;
//! each may go over a bidirectional connection): where the next attempt goes, how often a
//! call is resent, and what ends it. Sans-IO: a path makes each attempt its own way and
//! reports what happened; [`CallPolicy`] says whether to attempt again and where.
//!
//! - **Forwards.** A LOCATION_FORWARD is followed and remembered by the invoker that got
//!   it, so the next call goes straight there (and on along forwards those targets learned).
//!   Every hop, remembered or new, counts against `-ORBforwardLimit`; past it the call fails
//!   with TRANSIENT `TRANSIENT_FORWARD_LIMIT`.
//! - **Falling back.** When a remembered forward target cannot be reached and nothing ran
//!   there (TRANSIENT or COMM_FAILURE, completed NO, not the forward limit), the invoker that
//!   remembered it forgets it and the call goes to that invoker again (CORBA 3 §15.4.3: a
//!   client falls back to the original reference). A target this call was just forwarded to
//!   has no such fallback: its failure is the call's, unless a remembered forward lies
//!   beneath it.
//! - **Resends.** An attempt the server did not process (an orderly CloseConnection, a
//!   reused connection found closed, a new addressing mode asked for) is made again on the
//!   same invoker, at most [`MAX_RESENDS`] times; then TRANSIENT `TRANSIENT_RESEND_LIMIT`.
//! - **Stale local endpoints.** A Unix-socket or shared-memory endpoint that cannot be
//!   connected to is marked stale, and the call goes over the profile's TCP address
//!   ([`IiopInvoker::fall_back_to_tcp`]).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{forward_limit, resend_limit, Attempt, IiopInvoker, MAX_RESENDS, MINOR_FORWARD_LIMIT};
use crate::{CompletionStatus, SystemException, SystemExceptionKind};

/// One call's progress through forwards and resends. A plain call (never forwarded, never
/// resent) holds nothing but a null pointer: the state is made the first time it is needed,
/// on a cold path. The invoker the call was made on (`origin`) is passed in, not held, so
/// that it stays in a register on the call path.
#[derive(Default)]
pub(crate) struct CallPolicy(Option<Box<State>>);

#[derive(Default)]
struct State {
    /// The forward targets the call went through, outermost first, each with whether it was
    /// remembered from an earlier call; attempts go to the last (none: to the origin).
    chain: Vec<(Arc<IiopInvoker>, bool)>,
    /// Resends made on the current invoker.
    resends: usize,
}

impl CallPolicy {
    /// A call on `origin`, starting where its remembered forwards lead.
    #[inline(always)]
    pub(crate) fn new(origin: &IiopInvoker) -> CallPolicy {
        let mut policy = CallPolicy(None);
        if origin.forwarded.load(Ordering::Acquire) {
            policy.follow_remembered(origin);
        }
        policy
    }

    fn state(&mut self) -> &mut State {
        self.0.get_or_insert_default()
    }

    /// Pushes the forwards remembered from the current invoker on (a chain longer than the
    /// forward limit stops there: the next attempt's forward then ends the call).
    #[cold]
    #[inline(never)]
    fn follow_remembered(&mut self, origin: &IiopInvoker) {
        while self.hops() < origin.forward_limit() as usize {
            let inv = self.invoker(origin);
            if !inv.forwarded.load(Ordering::Acquire) {
                break;
            }
            let Some(next) = inv.forward.read().ok().and_then(|f| f.clone()) else {
                break;
            };
            self.state().chain.push((next, true));
        }
    }

    /// Forwards followed so far.
    fn hops(&self) -> usize {
        self.0.as_ref().map_or(0, |s| s.chain.len())
    }

    /// The invoker the next attempt goes to.
    #[inline(always)]
    pub(crate) fn invoker<'o>(&'o self, origin: &'o IiopInvoker) -> &'o IiopInvoker {
        match &self.0 {
            None => origin,
            Some(s) => s.chain.last().map_or(origin, |(inv, _)| inv),
        }
    }

    /// An attempt's result other than [`Attempt::Done`] (which ends the call: the paths
    /// return on it themselves); `operation` for tracing. `Ok`: attempt again, on
    /// [`CallPolicy::invoker`].
    #[cold]
    #[inline(never)]
    pub(crate) fn outcome(
        &mut self,
        origin: &IiopInvoker,
        operation: &str,
        attempt: Result<Attempt, SystemException>,
    ) -> Result<(), SystemException> {
        match attempt {
            Ok(Attempt::Done) => Ok(()),
            Ok(Attempt::Retry) => {
                crate::trace::retried(self.invoker(origin).current_rope().address(), operation);
                self.resent(origin)
            }
            Ok(Attempt::Forward(target)) => self.forwarded(origin, operation, target),
            Err(e) => self.failed(origin, e),
        }
    }

    /// No connection could be had and the local endpoint was marked stale
    /// ([`IiopInvoker::fall_back_to_tcp`]): the call goes again, over TCP.
    #[cold]
    #[inline(never)]
    pub(crate) fn resent(&mut self, origin: &IiopInvoker) -> Result<(), SystemException> {
        let state = self.state();
        state.resends += 1;
        if state.resends < MAX_RESENDS {
            return Ok(());
        }
        let e = resend_limit(self.invoker(origin).current_rope());
        self.failed(origin, e)
    }

    /// The current invoker was forwarded to `target`: remembered there, followed here.
    fn forwarded(
        &mut self,
        origin: &IiopInvoker,
        operation: &str,
        target: Arc<IiopInvoker>,
    ) -> Result<(), SystemException> {
        crate::trace::forwarded(operation, target.ior());
        let limit = origin.forward_limit();
        if self.hops() as u64 >= u64::from(limit) {
            return self.failed(origin, forward_limit(limit));
        }
        let inv = self.invoker(origin);
        if let Ok(mut f) = inv.forward.write() {
            *f = Some(target.clone());
            inv.forwarded.store(true, Ordering::Release);
        }
        let state = self.state();
        state.chain.push((target, false));
        state.resends = 0;
        Ok(())
    }

    /// The attempt failed with `e`: the call's error, unless a remembered forward lies on
    /// the way back (then the invoker that remembered it forgets it and is attempted again).
    #[cold]
    #[inline(never)]
    pub(crate) fn failed(
        &mut self,
        origin: &IiopInvoker,
        e: SystemException,
    ) -> Result<(), SystemException> {
        let unreachable = matches!(
            e.kind,
            SystemExceptionKind::Transient | SystemExceptionKind::CommFailure
        ) && e.completed == CompletionStatus::No
            && e.minor != MINOR_FORWARD_LIMIT;
        let remembered = self
            .0
            .as_ref()
            .is_some_and(|s| s.chain.iter().any(|(_, r)| *r));
        if !unreachable || !remembered {
            return Err(e);
        }
        let state = self.state();
        while let Some((_, remembered)) = state.chain.pop() {
            if remembered {
                break;
            }
        }
        state.resends = 0;
        let inv = self.invoker(origin);
        if let Ok(mut f) = inv.forward.write() {
            *f = None;
            inv.forwarded.store(false, Ordering::Release);
        }
        Ok(())
    }
}
