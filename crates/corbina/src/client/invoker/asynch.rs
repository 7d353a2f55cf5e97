//! The asynchronous call path of [`IiopInvoker`]: the calling task marshals and writes its
//! request on the address's shared asynchronous connection and then awaits the reply,
//! which that connection's reader files by request id. Forwards, resends after an orderly
//! close, addressing-mode changes and fallbacks are the synchronous path's own
//! ([`CallPolicy`](super::CallPolicy)).

use std::sync::Arc;
use std::task::{Poll, Waker};
use std::time::Instant;

use super::{Attempt, CallPolicy, IiopInvoker};
use crate::cdr::CdrWriter;
use crate::client::async_conn::AsyncConnection;
use crate::client::replies::{Outcome, OwnedReply};
use crate::client::rope::AsyncStrand;
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
    pub async fn invoke_async<'a>(
        &self,
        operation: &str,
        encode: &AsyncEncodeArgs<'_, 'a>,
        mut decode: Option<&mut AsyncDecodeReply<'_>>,
    ) -> Result<(), SystemException> {
        let deadline = self.effective_timeout().map(|t| Instant::now() + t);
        let mut policy = CallPolicy::new(self);
        loop {
            let inv = policy.invoker(self);
            let rope = inv.current_rope();
            let conn = match rope.async_connection(deadline) {
                Ok(AsyncStrand::Ready(c)) => Ok(c),
                Ok(AsyncStrand::Connecting(wait)) => {
                    let bounded_by_other = wait.bounded_by_other(deadline);
                    match wait.await {
                        // Another call's shorter deadline ended that connect: this one
                        // has time left to connect on its own.
                        Err(e)
                            if e.kind == SystemExceptionKind::Timeout
                                && bounded_by_other
                                && deadline.is_none_or(|d| Instant::now() < d) =>
                        {
                            policy.resent(self)?;
                            continue;
                        }
                        other => other,
                    }
                }
                Err(e) => Err(e),
            };
            let conn = match conn {
                Ok(c) => c,
                Err(e) => {
                    if inv.fall_back_to_tcp(rope, &e) {
                        policy.resent(self)?;
                    } else {
                        policy.failed(self, e)?;
                    }
                    continue;
                }
            };
            // The task's waker, filed with the request: its first poll then has nothing
            // to look at.
            let waker = std::future::poll_fn(|cx| Poll::Ready(cx.waker().clone())).await;
            let attempt = inv
                .attempt_async(
                    &conn,
                    operation,
                    encode,
                    decode.as_deref_mut(),
                    deadline,
                    &waker,
                )
                .await;
            match attempt {
                Ok(Attempt::Done) => return Ok(()),
                other => policy.outcome(self, operation, other)?,
            }
        }
    }

    /// One attempt on `conn`: the request written, its reply awaited and read.
    async fn attempt_async<'a>(
        &self,
        conn: &Arc<AsyncConnection>,
        operation: &str,
        encode: &AsyncEncodeArgs<'_, 'a>,
        mut decode: Option<&mut AsyncDecodeReply<'_>>,
        deadline: Option<Instant>,
        waker: &Waker,
    ) -> Result<Attempt, SystemException> {
        let sent = {
            let target = self.target();
            conn.send(
                self.version,
                self.code_sets,
                &target,
                operation,
                encode,
                decode.is_some(),
                deadline,
                waker,
            )?
        };
        // The reply is decoded where it lies in its slot (taken out of the table).
        let mut read = |reply: &OwnedReply| match decode.as_deref_mut() {
            Some(decode) => {
                self.reply_outcome(&reply.header, reply.body.body(), reply.code_sets, decode)
            }
            None => Ok(Attempt::Done),
        };
        let mut pending = match sent {
            Ok(pending) => pending,
            Err(Outcome::Reply(reply)) => return read(&reply),
            Err(Outcome::Sent) => return Ok(Attempt::Done),
            Err(Outcome::Resend) => return Ok(Attempt::Retry),
        };
        match std::future::poll_fn(|cx| pending.poll_reply(cx, &mut read)).await? {
            Some(attempt) => attempt,
            None => Ok(Attempt::Retry),
        }
    }
}
