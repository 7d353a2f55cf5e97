//! The client's call path with request interceptors: [`IiopInvoker::call`]'s steps, driven by
//! the same [`CallPolicy`], with each request started and its reply read through [`PiHooks`]. Kept apart, in another module than the
//! plain path, so that the plain path compiles as without interceptors (measured: a second
//! call site of the receive and send functions changed what the compiler inlined there,
//! so this path calls their outlined versions); oneways are written at once (not buffered) here.
//! Calls over a bidirectional connection run the interception points as others do.

use std::sync::Arc;
use std::time::Instant;

use crate::bidir::{BidirConnection, Outcome};
use crate::client::invoker::{
    closed, fail, is_timeout, message_error, oneways_lost, protocol_error, read_failure,
    send_failed, unexpected_message, write_transmits, Attempt, CallPolicy, IiopInvoker,
};
use crate::client::{Rope, Strand};
use crate::giop::connection::Event;
use crate::interceptor::client::PiHooks;
use crate::object::{DecodeReply, EncodeArgs};
use crate::transport::write_outgoing_outlined;
use crate::SystemException;

impl IiopInvoker {
    /// [`IiopInvoker::call`] through `hooks`: the same [`CallPolicy`], each attempt's
    /// request and reply through the interception points.
    pub(crate) fn call_intercepted<'a>(
        &self,
        hooks: &mut PiHooks<'_>,
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        mut decode: Option<&mut DecodeReply<'_>>,
        deadline: Option<Instant>,
    ) -> Result<(), SystemException> {
        let mut policy = CallPolicy::new(self);
        loop {
            let inv = policy.invoker(self);
            let rope = inv.current_rope();
            let lost = rope.take_unreported_lost();
            let attempt = if lost > 0 {
                Some(Err(oneways_lost(rope, lost)))
            } else if rope.is_routed() || inv.ctx.config.offer_bidir {
                match inv.bidir_connection(rope, deadline) {
                    Ok(Some(conn)) => Some(inv.attempt_bidir_intercepted(
                        &conn,
                        hooks,
                        operation,
                        encode,
                        decode.as_deref_mut(),
                        deadline,
                    )),
                    Ok(None) => None,
                    Err(e) => Some(Err(e)),
                }
            } else {
                None
            };
            let attempt = match attempt {
                Some(attempt) => attempt,
                None => match rope.acquire_until(deadline) {
                    Ok(strand) => inv.attempt_intercepted(
                        rope,
                        strand,
                        hooks,
                        operation,
                        encode,
                        decode.as_deref_mut(),
                        deadline,
                    ),
                    Err(e) => {
                        if inv.fall_back_to_tcp(rope, &e) {
                            policy.resent(self)?;
                        } else {
                            policy.failed(self, e)?;
                        }
                        continue;
                    }
                },
            };
            match attempt {
                Ok(Attempt::Done) => return Ok(()),
                other => policy.outcome(self, operation, other)?,
            }
        }
    }

    /// One attempt over a bidirectional connection through `hooks` (a call back to a
    /// client, or a call on a connection this ORB offered for call-backs).
    fn attempt_bidir_intercepted<'a>(
        &self,
        conn: &BidirConnection,
        hooks: &mut PiHooks<'_>,
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
        deadline: Option<Instant>,
    ) -> Result<Attempt, SystemException> {
        let target = self.target();
        let outcome = conn.call(
            self.version,
            self.code_sets,
            &target,
            operation,
            encode,
            decode.is_some(),
            deadline,
            Some((&mut *hooks, self)),
        )?;
        match (outcome, decode) {
            (Outcome::Reply(r), Some(decode)) => {
                let body = r.body.body();
                hooks.reply(&r.header, body, r.code_sets);
                self.reply_outcome(&r.header, body, r.code_sets, decode)
            }
            (Outcome::Resend, _) => Ok(Attempt::Retry),
            (Outcome::Reply(_) | Outcome::Sent, _) => Ok(Attempt::Done),
        }
    }

    /// [`IiopInvoker::attempt`] through `hooks` (no oneway buffering).
    #[allow(clippy::too_many_arguments)]
    fn attempt_intercepted<'a>(
        &self,
        rope: &Arc<Rope>,
        mut strand: Box<Strand>,
        hooks: &mut PiHooks<'_>,
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
        deadline: Option<Instant>,
    ) -> Result<Attempt, SystemException> {
        let target = self.target();
        let Strand { giop, out, .. } = &mut *strand;
        let (request_id, w) = match hooks.request(
            self,
            giop,
            out,
            self.version,
            self.code_sets,
            &target,
            operation,
            decode.is_some(),
            encode,
        ) {
            Ok(sent) => sent,
            Err(e) => {
                self.give_back(rope, strand);
                return Err(e);
            }
        };
        if let Err(e) = strand.set_write_deadline(deadline) {
            rope.settle(&mut strand);
            rope.count_lost(strand.batched, false);
            drop(strand);
            rope.discard();
            let timed_out = e.kind() == std::io::ErrorKind::TimedOut;
            return Err(send_failed(rope, e, timed_out));
        }
        let had_batch = !strand.batch.is_empty();
        let batch = had_batch.then_some(strand.batch.as_slice());
        let sent = write_outgoing_outlined(&mut strand.stream, batch, &w);
        strand.out = crate::transport::recycle(w.into_buffer());
        if had_batch {
            rope.settle(&mut strand);
        }
        if let Err(e) = sent {
            let reused = strand.reused;
            let lost = strand.batched;
            drop(strand);
            rope.discard();
            return if is_timeout(&e) && deadline.is_some() {
                rope.count_lost(lost, false);
                Err(send_failed(rope, e, true))
            } else if reused {
                rope.count_lost(lost, true);
                Ok(Attempt::Retry)
            } else {
                rope.count_lost(lost, false);
                Err(send_failed(rope, e, false))
            };
        }
        if had_batch {
            strand.clear_batch();
        }
        let Some(decode) = decode else {
            rope.release(strand);
            return Ok(Attempt::Done);
        };
        strand.reader.set_deadline(deadline);
        loop {
            if strand.giop.wants_input() {
                let Strand { reader, giop, .. } = &mut *strand;
                match std::io::Read::read(reader, giop.read_buf_outlined()) {
                    Ok(0) => {
                        giop.end_of_stream();
                        return fail(rope, strand, closed(rope));
                    }
                    Ok(n) => giop.commit(n),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        let e = read_failure(e, deadline.is_some(), rope.address());
                        return fail(rope, strand, e);
                    }
                }
                continue;
            }
            match strand.giop.poll_event_outlined() {
                Ok(Some(Event::Reply {
                    header,
                    body,
                    code_sets,
                })) if header.request_id == request_id => {
                    hooks.reply(&header, body, code_sets);
                    let outcome = self.reply_outcome(&header, body, code_sets, decode);
                    rope.release(strand);
                    return outcome;
                }
                Ok(Some(Event::Fragment { .. })) => continue,
                Ok(Some(Event::CloseConnection)) => {
                    drop(strand);
                    rope.discard();
                    return Ok(Attempt::Retry);
                }
                Ok(Some(Event::MessageError)) => {
                    return fail(rope, strand, message_error(rope));
                }
                Ok(Some(event)) => {
                    let e = unexpected_message(rope, &event);
                    let _ = write_transmits(&mut strand);
                    return fail(rope, strand, e);
                }
                Err(source) => {
                    let _ = write_transmits(&mut strand);
                    return fail(rope, strand, protocol_error(rope, source));
                }
                Ok(None) => {}
            }
            if !strand.giop.is_open() {
                return fail(rope, strand, closed(rope));
            }
        }
    }
}
