//! The asynchronous call path of [`IiopInvoker`]: the calling task marshals and writes its
//! request on the address's shared asynchronous connection and then awaits the reply,
//! which that connection's reader files by request id. Forwards, resends after an orderly
//! close, addressing-mode changes and fallbacks are the synchronous path's own
//! ([`CallPolicy`](super::CallPolicy)).
//!
//! One call is one hand-written state machine ([`AsyncCall`]): no `async fn` layers each
//! polled in turn and each moving the next one's state into its own, no per-call box.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use super::{Attempt, CallPolicy, IiopInvoker};
use crate::cdr::CdrWriter;
use crate::client::async_conn::{AsyncConnection, PendingReply};
use crate::client::async_pool::ConnectWait;
use crate::client::replies::{Outcome, OwnedReply};
use crate::client::rope::{AsyncStrand, Rope};
use crate::object::ReplyBody;
use crate::{SystemException, SystemExceptionKind};

/// Encodes an asynchronous request's arguments (again, if it must be resent): `Send +
/// Sync`, so that the future holding it can move between threads.
pub type AsyncEncodeArgs<'x, 'a> =
    dyn Fn(&mut CdrWriter<'a>) -> crate::cdr::Result<()> + Send + Sync + 'x;

/// Decodes an asynchronous reply's body (system exceptions and forwards never reach it).
pub type AsyncDecodeReply<'x> =
    dyn FnMut(ReplyBody<'_, '_>) -> Result<(), SystemException> + Send + 'x;

impl IiopInvoker {
    /// Sends a request for `operation` and, with `decode`, awaits its reply; without, the
    /// call is oneway (done once written). The timeout is the reference's, else the
    /// polling thread's, else the ORB's, counted from the first poll. Forwards, resends and
    /// fallbacks are the synchronous path's: one call policy (`client::invoker::policy`).
    pub(crate) fn invoke_async<'x, 'a>(
        &'x self,
        operation: &'x str,
        encode: &'x AsyncEncodeArgs<'x, 'a>,
        decode: Option<&'x mut AsyncDecodeReply<'x>>,
    ) -> AsyncCall<'x, 'a> {
        AsyncCall {
            origin: self,
            operation,
            encode,
            decode,
            deadline: None,
            started: false,
            policy: CallPolicy::default(),
            state: State::Attempt,
        }
    }
}

/// One asynchronous call ([`IiopInvoker::invoke_async`]): where it stands, and what it
/// needs for the next attempt. Dropping it while its reply is awaited cancels the request.
#[must_use = "futures do nothing unless polled"]
pub(crate) struct AsyncCall<'x, 'a> {
    origin: &'x IiopInvoker,
    operation: &'x str,
    encode: &'x AsyncEncodeArgs<'x, 'a>,
    decode: Option<&'x mut AsyncDecodeReply<'x>>,
    /// Set on the first poll.
    deadline: Option<Instant>,
    /// Polled before: the deadline and policy are set.
    started: bool,
    policy: CallPolicy,
    state: State,
}

/// Each change of state runs the old one's drop glue (an outlined call): the call path
/// changes it twice, to `Waiting` and out of it.
enum State {
    /// The next attempt: a connection to pick, the request to send.
    Attempt,
    /// The first connection of `rope` is being opened; `bounded_by_other`: by a call with
    /// a shorter deadline (see [`ConnectWait::bounded_by_other`]).
    Connecting {
        wait: ConnectWait,
        bounded_by_other: bool,
        rope: Arc<Rope>,
    },
    /// The request went out on a connection; its reply is awaited.
    Waiting(PendingReply),
    /// Ready was returned.
    Done,
}

impl Future for AsyncCall<'_, '_> {
    type Output = Result<(), SystemException>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Every field is Unpin (references, boxes, `Arc`s).
        let this = self.get_mut();
        if !this.started {
            this.started = true;
            this.deadline = this.origin.effective_timeout().map(|t| Instant::now() + t);
            this.policy = CallPolicy::new(this.origin);
        }
        loop {
            let step = match &mut this.state {
                State::Attempt => this.attempt(cx),
                State::Connecting {
                    wait,
                    bounded_by_other,
                    rope,
                } => {
                    let Poll::Ready(connected) = Pin::new(wait).poll(cx) else {
                        return Poll::Pending;
                    };
                    // Once per connection opened: the clone is not on the call path.
                    let (bounded_by_other, rope) = (*bounded_by_other, rope.clone());
                    this.state = State::Attempt;
                    match connected {
                        Ok(conn) => this.send(&conn, cx),
                        // Another call's shorter deadline ended that connect: this one has
                        // time left to connect on its own.
                        Err(e)
                            if e.kind == SystemExceptionKind::Timeout
                                && bounded_by_other
                                && this.deadline.is_none_or(|d| Instant::now() < d) =>
                        {
                            this.policy.resent(this.origin).map(|()| None)
                        }
                        Err(e) => this.unconnected(&rope, e),
                    }
                }
                State::Waiting(pending) => {
                    let inv = this.policy.invoker(this.origin);
                    let decode = &mut this.decode;
                    // The reply is decoded where it lies in its slot (taken out of the table).
                    let Poll::Ready(replied) =
                        pending.poll_reply(cx, |reply| read_reply(inv, decode, reply))
                    else {
                        return Poll::Pending;
                    };
                    // Settled: dropping it cancels nothing.
                    if let Ok(Some(Ok(Attempt::Done))) = replied {
                        this.state = State::Done;
                        return Poll::Ready(Ok(()));
                    }
                    this.state = State::Attempt;
                    match replied {
                        Ok(Some(attempt)) => this.outcome(attempt),
                        // Not processed (the connection closed in order): again.
                        Ok(None) => this.outcome(Ok(Attempt::Retry)),
                        Err(e) => this.outcome(Err(e)),
                    }
                }
                State::Done => return Poll::Ready(Err(crate::Error::NoReply.into())),
            };
            match step {
                // Sent: the reply is awaited (the task's waker is filed with it).
                Ok(Some(Sent::Waiting)) => return Poll::Pending,
                Ok(Some(Sent::Done)) => {
                    this.state = State::Done;
                    return Poll::Ready(Ok(()));
                }
                // Another attempt, or a connect to wait for (the state says which).
                Ok(None) => {}
                Err(e) => {
                    this.state = State::Done;
                    return Poll::Ready(Err(e));
                }
            }
        }
    }
}

/// What a reply means for the call: decoded by `decode`, or an exception, a forward...
#[inline(always)]
fn read_reply(
    inv: &IiopInvoker,
    decode: &mut Option<&mut AsyncDecodeReply<'_>>,
    reply: &OwnedReply,
) -> Result<Attempt, SystemException> {
    match decode {
        Some(decode) => {
            inv.reply_outcome(&reply.header, reply.body.body(), reply.code_sets, *decode)
        }
        None => Ok(Attempt::Done),
    }
}

/// Where an attempt left the call: `Ok(None)` attempt again.
enum Sent {
    /// The request is out, its reply awaited.
    Waiting,
    /// The call is over.
    Done,
}

type Step = Result<Option<Sent>, SystemException>;

impl AsyncCall<'_, '_> {
    /// Picks a connection for the next attempt and sends on it.
    #[inline]
    fn attempt(&mut self, cx: &mut Context<'_>) -> Step {
        let inv = self.policy.invoker(self.origin);
        let rope = inv.current_rope();
        match rope.async_connection(self.deadline) {
            Ok(AsyncStrand::Ready(conn)) => self.send(&conn, cx),
            Ok(AsyncStrand::Connecting(wait)) => {
                self.state = State::Connecting {
                    bounded_by_other: wait.bounded_by_other(self.deadline),
                    wait,
                    rope: rope.clone(),
                };
                Ok(None)
            }
            Err(e) => {
                let rope = rope.clone();
                self.unconnected(&rope, e)
            }
        }
    }

    /// No connection could be had on `rope`: over TCP if it is a local endpoint's, else the
    /// policy decides.
    #[cold]
    #[inline(never)]
    fn unconnected(&mut self, rope: &Arc<Rope>, e: SystemException) -> Step {
        self.state = State::Attempt;
        if self.policy.invoker(self.origin).fall_back_to_tcp(rope, &e) {
            self.policy.resent(self.origin)?;
        } else {
            self.policy.failed(self.origin, e)?;
        }
        Ok(None)
    }

    /// Writes the request on `conn`, filing the task's waker for its reply.
    #[inline]
    fn send(&mut self, conn: &Arc<AsyncConnection>, cx: &mut Context<'_>) -> Step {
        let inv = self.policy.invoker(self.origin);
        let sent = {
            let target = inv.target();
            conn.send(
                inv,
                &target,
                self.operation,
                self.encode,
                self.decode.is_some(),
                self.deadline,
                cx.waker(),
            )
        };
        match sent {
            Ok(Ok(pending)) => {
                self.state = State::Waiting(pending);
                Ok(Some(Sent::Waiting))
            }
            Ok(Err(Outcome::Sent)) => Ok(Some(Sent::Done)),
            Ok(Err(Outcome::Reply(reply))) => {
                let attempt = read_reply(inv, &mut self.decode, &reply);
                self.outcome(attempt)
            }
            Ok(Err(Outcome::Resend)) => {
                self.state = State::Attempt;
                self.outcome(Ok(Attempt::Retry))
            }
            Err(e) => {
                self.state = State::Attempt;
                self.outcome(Err(e))
            }
        }
    }

    /// What an attempt came to: done, or another one as the policy says.
    #[inline]
    fn outcome(&mut self, attempt: Result<Attempt, SystemException>) -> Step {
        match attempt {
            Ok(Attempt::Done) => Ok(Some(Sent::Done)),
            other => {
                self.policy.outcome(self.origin, self.operation, other)?;
                Ok(None)
            }
        }
    }
}
