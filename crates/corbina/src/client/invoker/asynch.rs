//! The asynchronous call path of [`IiopInvoker`]: the calling task marshals and writes its
//! request on the address's shared asynchronous connection and then awaits the reply,
//! which that connection's reader files by request id. Forwards, resends after an orderly
//! close, addressing-mode changes and timeouts behave as on the synchronous path.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::Poll;
use std::time::Instant;

use super::{forward_limit, resend_limit, Attempt, IiopInvoker, MAX_RESENDS};
use crate::cdr::CdrWriter;
use crate::client::async_conn::AsyncOutcome;
use crate::client::rope::AsyncStrand;
use crate::object::ReplyBody;
use crate::{CompletionStatus, SystemException, SystemExceptionKind};

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
    /// polling thread's, else the ORB's, counted from the first poll.
    pub async fn invoke_async<'a>(
        &self,
        operation: &str,
        encode: &AsyncEncodeArgs<'_, 'a>,
        mut decode: Option<&mut AsyncDecodeReply<'_>>,
    ) -> Result<(), SystemException> {
        let deadline = self.effective_timeout().map(|t| Instant::now() + t);
        // A forward learned earlier (by either path) is where calls go first.
        let mut target = if self.forwarded.load(Ordering::Acquire) {
            self.forward.read().ok().and_then(|f| f.clone())
        } else {
            None
        };
        let mut hops = 0;
        loop {
            let inv: &IiopInvoker = target.as_deref().unwrap_or(self);
            match inv
                .attempts_async(operation, encode, decode.as_deref_mut(), deadline)
                .await
            {
                Ok(None) => return Ok(()),
                Ok(Some(next)) => {
                    if hops >= self.ctx.config.forward_limit {
                        return Err(forward_limit(self.ctx.config.forward_limit));
                    }
                    hops += 1;
                    if let Ok(mut f) = inv.forward.write() {
                        *f = Some(next.clone());
                        inv.forwarded.store(true, Ordering::Release);
                    }
                    target = Some(next);
                }
                // The forward target is unreachable and nothing ran there: back to the
                // original reference, as the specification says.
                Err(e)
                    if target.is_some()
                        && hops == 0
                        && matches!(
                            e.kind,
                            SystemExceptionKind::Transient | SystemExceptionKind::CommFailure
                        )
                        && e.completed == CompletionStatus::No =>
                {
                    if let Ok(mut f) = self.forward.write() {
                        *f = None;
                        self.forwarded.store(false, Ordering::Release);
                    }
                    target = None;
                    hops = 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// This invoker's attempts, resent while the server closes in order: `Some(target)`
    /// when the server forwarded the call.
    async fn attempts_async<'a>(
        &self,
        operation: &str,
        encode: &AsyncEncodeArgs<'_, 'a>,
        mut decode: Option<&mut AsyncDecodeReply<'_>>,
        deadline: Option<Instant>,
    ) -> Result<Option<Arc<IiopInvoker>>, SystemException> {
        for _ in 0..MAX_RESENDS {
            let rope = self.current_rope();
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
                            continue
                        }
                        other => other,
                    }
                }
                Err(e) => Err(e),
            };
            let conn = match conn {
                Ok(c) => c,
                // A stale local endpoint: nothing was sent, go by TCP instead.
                Err(e)
                    if e.kind == SystemExceptionKind::Transient
                        && self.tcp_fallback.is_some()
                        && Arc::ptr_eq(rope, &self.rope) =>
                {
                    self.rope.mark_stale();
                    continue;
                }
                Err(e) => return Err(e),
            };
            // The task's waker, filed with the request: its first poll then has nothing
            // to look at.
            let waker = std::future::poll_fn(|cx| Poll::Ready(cx.waker().clone())).await;
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
                    &waker,
                )?
            };
            let outcome = match sent {
                Ok(pending) => pending.await?,
                Err(outcome) => outcome,
            };
            let reply = match outcome {
                AsyncOutcome::Reply(reply) => reply,
                AsyncOutcome::Sent => return Ok(None),
                AsyncOutcome::Resend => continue,
            };
            let Some(decode) = decode.as_deref_mut() else {
                return Ok(None);
            };
            match self.reply_outcome(&reply.header, reply.body.body(), reply.code_sets, decode)? {
                Attempt::Done => return Ok(None),
                Attempt::Retry => continue,
                Attempt::Forward(target) => return Ok(Some(target)),
            }
        }
        Err(resend_limit(self.current_rope()))
    }
}
