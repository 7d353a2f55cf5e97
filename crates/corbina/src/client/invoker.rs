//! The IIOP client call path: the calling thread marshals straight into a strand's buffer,
//! writes, and blocks on the reply itself — no thread switch, no queue.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicI16, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{Duration, Instant};

use super::rope::{Park, Rope, Strand};
use super::ClientContext;
use crate::bidir::{BidirConnection, Outcome};
use crate::cdr::CodeSets;
use crate::error::{minor, Error, Phase};
use crate::giop::connection::{ConnectionError, Event, RequestError};
use crate::giop::message::Body;
use crate::giop::{
    IiopProfile, Ior, IorAddressingInfo, ReplyHeader, ReplyStatus, SystemExceptionBody,
    TargetAddress, Version,
};
use crate::object::{DecodeReply, EncodeArgs, Invoker, ReplyBody};
use crate::transport::{Address, LocalTransport, TransportKind};
use crate::{SystemException, SystemExceptionKind};

mod asynch;
mod hooks;
mod policy;
pub use asynch::{AsyncDecodeReply, AsyncEncodeArgs};
pub(crate) use hooks::{Hooks, NoHooks};
pub(crate) use policy::CallPolicy;

/// TRANSIENT minor code for "LOCATION_FORWARD hop limit reached" (Corbina's own; a forward
/// chain that ends this way is not unwound to the original target).
pub const MINOR_FORWARD_LIMIT: u32 = minor::TRANSIENT_FORWARD_LIMIT;

/// TRANSIENT minor code for "the server kept closing the connection before reading the
/// request" (orderly CloseConnection on every resend).
pub const MINOR_RETRIES_EXHAUSTED: u32 = minor::TRANSIENT_RESEND_LIMIT;

/// COMM_FAILURE minor code for "buffered oneways were lost: their connection failed when
/// they were written outside any call" (reported once, by the next call through that
/// connection's rope or by an explicit flush).
pub const MINOR_ONEWAYS_LOST: u32 = minor::COMM_FAILURE_ONEWAYS_LOST;

/// How many times a call is resent after orderly closes before giving up with TRANSIENT.
pub(crate) const MAX_RESENDS: usize = 16;

/// The other addresses of `profile`'s object: its TAG_ALTERNATE_IIOP_ADDRESS components,
/// then the other IIOP profiles with the same object key (TCP addresses; a malformed
/// component or profile is skipped).
fn alternate_addresses(ior: &Ior, profile: &IiopProfile) -> Box<[(Address, OnceLock<Arc<Rope>>)]> {
    let own = (profile.host.as_str(), profile.port);
    let mut seen: Vec<(String, u16)> = vec![(own.0.to_owned(), own.1)];
    let components = profile.alternate_addresses().unwrap_or_default();
    let profiles = ior
        .profiles
        .iter()
        .filter_map(|p| p.iiop().and_then(Result::ok))
        .filter(|p| p.object_key == profile.object_key)
        .map(|p| (p.host, p.port));
    for hp in components.into_iter().chain(profiles) {
        if !seen.contains(&hp) {
            seen.push(hp);
        }
    }
    seen.into_iter()
        .skip(1)
        .map(|(host, port)| (Address::Tcp { host, port }, OnceLock::new()))
        .collect()
}

/// Reaches one object through IIOP: its profile, the rope to the profile's address, and
/// any LOCATION_FORWARD target learned on the way.
pub(crate) struct IiopInvoker {
    pub(crate) ctx: Arc<ClientContext>,
    ior: Ior,
    profile_index: u32,
    profile: IiopProfile,
    pub(crate) rope: Arc<Rope>,
    /// When `rope` is a local endpoint: the profile's TCP address, used while the local one
    /// cannot be connected to (its rope made on first use).
    pub(crate) tcp_fallback: Option<Address>,
    fallback_rope: OnceLock<Arc<Rope>>,
    /// The object's other addresses, in failover order: the profile's
    /// TAG_ALTERNATE_IIOP_ADDRESS components, then the other IIOP profiles with the same
    /// object key (their ropes made on first use). See [`IiopInvoker::current_rope`].
    alternates: Box<[(Address, OnceLock<Arc<Rope>>)]>,
    pub(crate) version: Version,
    pub(crate) code_sets: CodeSets,
    addressing: AtomicI16,
    /// `TargetAddress::Key` for the profile's key, built once: the common case of every call.
    key_target: TargetAddress,
    pub(crate) forward: RwLock<Option<Arc<IiopInvoker>>>,
    /// Whether `forward` may be set: lets the common call skip the lock.
    pub(crate) forwarded: AtomicBool,
    /// This reference's own call timeout (wins over the thread's and the ORB's).
    call_timeout: Option<Duration>,
}

pub(crate) enum Attempt {
    Done,
    /// Nothing was processed by the server (CloseConnection, stale strand): send again.
    Retry,
    /// The server forwarded us: go there.
    Forward(Arc<IiopInvoker>),
}

impl IiopInvoker {
    /// An invoker for the first usable IIOP profile of `ior`.
    pub fn new(ctx: Arc<ClientContext>, ior: Ior) -> Result<IiopInvoker, SystemException> {
        let (index, profile) = ior
            .profiles
            .iter()
            .enumerate()
            .find_map(|(i, p)| p.iiop().and_then(Result::ok).map(|p| (i as u32, p)))
            .ok_or(Error::NoUsableProfile)?;
        let address = select_address(&profile, ctx.config.prefer_local);
        // Local endpoints only: a TLS address never falls back to plain TCP.
        let local = matches!(address.kind(), TransportKind::Unix | TransportKind::Shm);
        let tcp_fallback = local.then(|| Address::Tcp {
            host: profile.host.clone(),
            port: profile.port,
        });
        let alternates = alternate_addresses(&ior, &profile);
        let rope = ctx.rope_to(address);
        let minor = profile.version.minor.min(ctx.config.giop_max_minor);
        let version = Version::new(1, minor).map_err(|_| Error::GiopVersion { minor })?;
        let code_sets = if minor == 0 {
            CodeSets::DEFAULT
        } else {
            crate::codeset::negotiate(profile.code_sets().ok().flatten().as_ref())
        };
        let profile_key = profile.object_key.clone();
        Ok(IiopInvoker {
            ctx,
            ior,
            profile_index: index,
            profile,
            rope,
            tcp_fallback,
            fallback_rope: OnceLock::new(),
            alternates,
            version,
            code_sets,
            addressing: AtomicI16::new(crate::giop::target_address::KEY_ADDR),
            key_target: TargetAddress::Key(profile_key),
            forward: RwLock::new(None),
            forwarded: AtomicBool::new(false),
            call_timeout: None,
        })
    }

    /// The same invoker with its own call timeout (`None`: the thread's, else the ORB's).
    pub fn with_call_timeout(mut self, timeout: Option<Duration>) -> IiopInvoker {
        self.call_timeout = timeout;
        self
    }

    /// The same invoker on a rope of its own ([`ClientContext::private_rope`]): its
    /// asynchronous calls share one connection with no other reference's.
    pub fn with_own_connection(mut self) -> IiopInvoker {
        self.rope = self.ctx.private_rope(self.rope.address().clone());
        self
    }

    /// The timeout a call made now by this thread runs with.
    pub(crate) fn effective_timeout(&self) -> Option<Duration> {
        self.call_timeout
            .or_else(super::thread_call_timeout)
            .or(self.ctx.config.call_timeout)
    }

    /// Where calls go: the profile's TCP address, or a local endpoint it publishes (unless
    /// that endpoint failed recently: then the TCP address).
    pub fn address(&self) -> &Address {
        self.current_rope().address()
    }

    /// The rope calls go through now: the selected one, or the TCP fallback while a local
    /// endpoint is stale, or, while the selected address is stale (its connect failed
    /// within [`super::rope::FAILOVER_RETRY`]), the first alternate address that is not.
    /// With every address stale, the selected one (tried again).
    pub(crate) fn current_rope(&self) -> &Arc<Rope> {
        match &self.tcp_fallback {
            Some(tcp) if self.rope.is_stale() => self
                .fallback_rope
                .get_or_init(|| self.ctx.rope_to(tcp.clone())),
            None if !self.alternates.is_empty() && self.rope.is_stale() => self.failover_rope(),
            _ => &self.rope,
        }
    }

    #[cold]
    #[inline(never)]
    fn failover_rope(&self) -> &Arc<Rope> {
        self.alternates
            .iter()
            .map(|(a, r)| r.get_or_init(|| self.ctx.rope_to(a.clone())))
            .find(|r| !r.is_stale())
            .unwrap_or(&self.rope)
    }

    /// No connection could be had on `rope` (nothing was sent): when it is this
    /// invoker's local endpoint and the failure TRANSIENT, it is marked stale and the call
    /// goes over the profile's TCP address instead; when the object has other addresses,
    /// this one is marked stale (for every reference through it) and the call goes to the
    /// next one that is not (`true`: attempt again).
    #[cold]
    #[inline(never)]
    pub(crate) fn fall_back_to_tcp(&self, rope: &Arc<Rope>, e: &SystemException) -> bool {
        if e.kind != SystemExceptionKind::Transient {
            return false;
        }
        if self.tcp_fallback.is_some() {
            let stale = Arc::ptr_eq(rope, &self.rope);
            if stale {
                self.rope.mark_stale();
            }
            return stale;
        }
        if self.alternates.is_empty() {
            return false;
        }
        rope.mark_failed();
        crate::trace::failed_over(rope.address());
        // Another address is left when the one failover picks now is not stale.
        !self.current_rope().is_stale()
    }

    /// The profile calls go to.
    pub fn profile(&self) -> &IiopProfile {
        &self.profile
    }

    // Always inlined: the bidirectional path calls it too, and an outlined call costs the
    // common call ~25 instructions (callgrind).
    #[inline(always)]
    pub(crate) fn target(&self) -> std::borrow::Cow<'_, TargetAddress> {
        use crate::giop::target_address::{PROFILE_ADDR, REFERENCE_ADDR};
        use std::borrow::Cow;
        match self.addressing.load(Ordering::Relaxed) {
            PROFILE_ADDR => match self.ior.profiles.get(self.profile_index as usize) {
                Some(p) => Cow::Owned(TargetAddress::Profile(p.clone())),
                None => Cow::Borrowed(&self.key_target),
            },
            REFERENCE_ADDR => Cow::Owned(TargetAddress::Reference(IorAddressingInfo {
                selected_profile_index: self.profile_index,
                ior: self.ior.clone(),
            })),
            _ => Cow::Borrowed(&self.key_target),
        }
    }

    /// The IOR calls go to (a forwarded call has its own invoker).
    pub(crate) fn ior(&self) -> &Ior {
        &self.ior
    }

    /// The index in [`ior`](Self::ior) of the profile calls use.
    pub(crate) fn profile_index(&self) -> u32 {
        self.profile_index
    }

    /// How many forwards a call follows.
    pub(crate) fn forward_limit(&self) -> u32 {
        self.ctx.config.forward_limit
    }

    /// A call: attempts driven by the one [`CallPolicy`] (forwards, resends, fallbacks),
    /// each request started and its reply seen through `hooks`. Always inlined: the plain
    /// call's layers (`Invoker::invoke`, `call`) are one function.
    #[inline(always)]
    pub(crate) fn call<'a, H: Hooks>(
        &self,
        mut hooks: H,
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
                // Bidirectional GIOP: one flag each when it is not in use.
                inv.bidir_attempt(
                    rope,
                    &mut hooks,
                    operation,
                    encode,
                    decode.as_deref_mut(),
                    deadline,
                )
            } else {
                None
            };
            let attempt = match attempt {
                Some(attempt) => attempt,
                None => match rope.acquire_until(deadline) {
                    Ok(strand) => inv.attempt(
                        rope,
                        strand,
                        hooks.again(),
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

    #[allow(clippy::too_many_arguments)]
    fn attempt<'a, H: Hooks>(
        &self,
        rope: &Arc<Rope>,
        mut strand: Box<Strand>,
        mut hooks: H,
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
            &target,
            operation,
            decode.is_some(),
            encode,
        ) {
            Ok(sent) => sent,
            Err(e) => {
                // Nothing was sent: the strand (and any oneways buffered on it) goes back.
                self.give_back(rope, strand);
                return Err(e);
            }
        };
        // Intercepted oneways are written at once: each has its own interception points.
        let bounds = if decode.is_none() && !H::INTERCEPTS {
            self.ctx.oneway_bounds()
        } else {
            None
        };
        if let Some(b) = bounds {
            if let Some(bytes) = w.contiguous().filter(|m| m.len() < b.max_bytes) {
                // Buffered oneway: joins the strand's batch; written now only if a bound
                // is reached.
                let first = strand.batch.is_empty();
                strand.batch.extend_from_slice(bytes);
                strand.out = crate::transport::recycle(w.into_buffer());
                strand.batched += 1;
                let due = Instant::now() + b.max_delay;
                if first || strand.batch_deadline.is_some_and(|d| due < d) {
                    strand.batch_deadline = Some(due);
                }
                if strand.batched < b.max_count && strand.batch.len() < b.max_bytes {
                    match rope.park(strand) {
                        Park::Parked(Some(at)) => self.ctx.schedule_flush(rope, at),
                        Park::Parked(None) => {}
                        Park::Occupied(other) => {
                            return self.write_batch_alone(rope, other, deadline);
                        }
                    }
                    return Ok(Attempt::Done);
                }
                return self.write_batch_alone(rope, strand, deadline);
            }
        }
        if let Err(e) = strand.set_write_deadline(deadline) {
            rope.settle(&mut strand);
            rope.count_lost(strand.batched, false);
            drop(strand);
            rope.discard();
            let timed_out = e.kind() == std::io::ErrorKind::TimedOut;
            return Err(send_failed(rope, e, timed_out));
        }
        let had_batch = !strand.batch.is_empty();
        // Buffered oneways first, with this request in one vectored write.
        let batch = had_batch.then_some(strand.batch.as_slice());
        let sent = H::write(&mut strand.stream, batch, &w);
        strand.out = crate::transport::recycle(w.into_buffer());
        if had_batch {
            rope.settle(&mut strand);
        }
        if let Err(e) = sent {
            let reused = strand.reused;
            let lost = strand.batched;
            drop(strand);
            rope.discard();
            // The whole request never reached the server: nothing ran. A write that timed
            // out is the call's deadline; on a reused strand a failed write is the server's
            // idle close racing us: resend on a new connection. Buffered oneways written
            // with the request are lost with the connection: this call's error reports them,
            // or, when it is resent, the resend does (it fails with MINOR_ONEWAYS_LOST).
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
        self.await_reply(rope, strand, hooks, request_id, decode, deadline)
    }

    /// One attempt over a bidirectional connection, if this call goes over one (`None`:
    /// over a strand).
    #[cold]
    #[inline(never)]
    fn bidir_attempt<'a, H: Hooks>(
        &self,
        rope: &Arc<Rope>,
        hooks: &mut H,
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
        deadline: Option<Instant>,
    ) -> Option<Result<Attempt, SystemException>> {
        match self.bidir_connection(rope, deadline) {
            Ok(Some(conn)) => {
                Some(self.attempt_bidir(&conn, hooks, operation, encode, decode, deadline))
            }
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }

    /// The bidirectional connection this call goes over, if any: the one routed to the
    /// rope's address (a server calling a client back), or, when this ORB offers
    /// bidirectional GIOP and has something to offer, the rope's offering connection
    /// (opened now if need be).
    pub(crate) fn bidir_connection(
        &self,
        rope: &Arc<Rope>,
        deadline: Option<Instant>,
    ) -> Result<Option<Arc<BidirConnection>>, SystemException> {
        if let Some(c) = rope.bidir() {
            if c.is_open() {
                return Ok(Some(c));
            }
        }
        let Some(client) = self.ctx.bidir_client() else {
            return Ok(None);
        };
        if !crate::giop::connection::bidir_supported(self.version) || (client.offer)().is_none() {
            return Ok(None);
        }
        rope.bidir_or_open(|rope| {
            let (stream, giop) = rope.connect_unpooled(deadline)?;
            BidirConnection::open_client(
                rope,
                stream,
                giop,
                client.dispatcher.clone(),
                self.ctx.config.initializers.server(),
                client.offer.clone(),
            )
            .map_err(|source| {
                crate::Error::BidirReader {
                    endpoint: rope.address().clone(),
                    source,
                }
                .into()
            })
        })
        .map(Some)
    }

    /// One attempt over a bidirectional connection.
    fn attempt_bidir<'a, H: Hooks>(
        &self,
        conn: &Arc<BidirConnection>,
        hooks: &mut H,
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
            hooks,
            self,
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

    /// Returns a strand nothing was sent on, keeping its buffered oneways pending.
    pub(crate) fn give_back(&self, rope: &Arc<Rope>, strand: Box<Strand>) {
        if strand.batch.is_empty() {
            rope.release(strand);
            return;
        }
        match rope.park(strand) {
            Park::Parked(Some(at)) => self.ctx.schedule_flush(rope, at),
            Park::Parked(None) => {}
            Park::Occupied(other) => {
                let _ = rope.write_and_release(other, Some(self.ctx.flush_write_deadline()), true);
            }
        }
    }

    /// Writes a strand's batch of buffered oneways (a bound was reached) and returns it to
    /// the rope. A failure is this call's: the batch is lost with the connection.
    fn write_batch_alone(
        &self,
        rope: &Rope,
        strand: Box<Strand>,
        deadline: Option<Instant>,
    ) -> Result<Attempt, SystemException> {
        match rope.write_and_release(strand, deadline, false) {
            Ok(()) => Ok(Attempt::Done),
            Err(lost) => Err(batch_send_failed(rope, lost)),
        }
    }

    fn await_reply<H: Hooks>(
        &self,
        rope: &Rope,
        mut strand: Box<Strand>,
        mut hooks: H,
        request_id: u32,
        decode: &mut DecodeReply<'_>,
        deadline: Option<Instant>,
    ) -> Result<Attempt, SystemException> {
        strand.reader.set_deadline(deadline);
        loop {
            // The common case: the whole reply arrived with one read and is decoded where it
            // lies in the connection's receive buffer.
            match H::poll_reply(&mut strand.giop, request_id) {
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
                Ok(Some(Event::Fragment { .. })) => {
                    crate::trace::fragment_received(rope.address());
                    continue;
                }
                Ok(Some(Event::CloseConnection)) => {
                    // Orderly close: the server did not process our request.
                    crate::trace::control_received("CloseConnection", rope.address());
                    drop(strand);
                    rope.discard();
                    return Ok(Attempt::Retry);
                }
                Ok(Some(Event::MessageError)) => {
                    crate::trace::control_received("MessageError", rope.address());
                    return fail(rope, strand, message_error(rope));
                }
                // Anything else (a reply to another request, a request to this client) is
                // not GIOP from this server: the connection is not trusted further.
                Ok(Some(event)) => {
                    let e = unexpected_message(rope, &event);
                    let _ = write_transmits(&mut strand);
                    return fail(rope, strand, e);
                }
                Err(source) => {
                    let _ = write_transmits(&mut strand);
                    return fail(rope, strand, protocol_error(rope, source));
                }
                // No whole message yet: read (unless the peer closed: nothing more comes).
                Ok(None) => {}
            }
            if !strand.giop.is_open() {
                return fail(rope, strand, closed(rope));
            }
            let Strand { reader, giop, .. } = &mut *strand;
            match reader.read(H::read_buf(giop)) {
                Ok(0) => {
                    // The strand is closed, never reused: a late reply cannot reach the
                    // next call.
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
        }
    }

    /// What a Reply to this call means: its body handed to `decode`, an exception, a
    /// forward, or a resend with another addressing mode. Always inlined, as `target`.
    #[inline(always)]
    pub(crate) fn reply_outcome(
        &self,
        header: &ReplyHeader,
        body: Body<'_>,
        code_sets: CodeSets,
        decode: &mut DecodeReply<'_>,
    ) -> Result<Attempt, SystemException> {
        let mut r = body.reader(code_sets);
        match header.reply_status {
            ReplyStatus::NoException => decode(ReplyBody::Result(&mut r)).map(|()| Attempt::Done),
            ReplyStatus::UserException => match r.read_string() {
                Ok(id) => decode(ReplyBody::UserException(&id, &mut r)).map(|()| Attempt::Done),
                Err(e) => Err(decode_reply_failed(e.into())),
            },
            ReplyStatus::SystemException => match SystemExceptionBody::decode(&mut r) {
                Ok(b) => Err(b.to_exception()),
                Err(e) => Err(decode_reply_failed(e)),
            },
            ReplyStatus::LocationForward | ReplyStatus::LocationForwardPerm => {
                match Ior::decode(&mut r) {
                    Ok(ior) => IiopInvoker::new(self.ctx.clone(), ior)
                        .map(|t| Attempt::Forward(Arc::new(t))),
                    Err(e) => Err(decode_forward_failed(e)),
                }
            }
            ReplyStatus::NeedsAddressingMode => match r.read_short() {
                Ok(mode) if (0..=2).contains(&mode) => {
                    self.addressing.store(mode, Ordering::Relaxed);
                    Ok(Attempt::Retry)
                }
                _ => Err(raise(Error::AddressingMode)),
            },
        }
    }
}

/// The address to reach `profile` at: with `prefer_local`, a shared-memory or Unix-domain
/// endpoint it publishes (in that order) if it is on this host; else its TLS address if it
/// publishes one (`TAG_SSL_SEC_TRANS`); else its TCP address.
pub(crate) fn select_address(profile: &IiopProfile, prefer_local: bool) -> Address {
    if prefer_local {
        let mut best: Option<LocalTransport> = None;
        for t in profile
            .components
            .iter()
            .filter_map(LocalTransport::from_component)
            .filter_map(Result::ok)
        {
            let better = match &best {
                None => true,
                Some(b) => b.kind == TransportKind::Unix && t.kind == TransportKind::Shm,
            };
            if better && t.is_reachable_here() {
                best = Some(t);
            }
        }
        if let Some(t) = best {
            return t.address();
        }
    }
    if let Some(ssl) = crate::transport::tls::published(profile) {
        return ssl;
    }
    Address::Tcp {
        host: profile.host.clone(),
        port: profile.port,
    }
}

pub(crate) fn fail(
    rope: &Rope,
    strand: Box<Strand>,
    e: SystemException,
) -> Result<Attempt, SystemException> {
    drop(strand);
    rope.discard();
    Err(e)
}

pub(crate) fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// Writes what the connection queued to send (a MessageError after bad input), best effort:
/// the connection is given up anyway.
pub(crate) fn write_transmits(strand: &mut Strand) -> std::io::Result<()> {
    while let Some(m) = strand.giop.poll_transmit() {
        strand.stream.write_all(m.as_bytes())?;
    }
    Ok(())
}

#[cold]
#[inline(never)]
pub(crate) fn read_failure(
    e: std::io::Error,
    has_deadline: bool,
    endpoint: &Address,
) -> SystemException {
    let endpoint = endpoint.clone();
    let e = match e {
        io if has_deadline && is_timeout(&io) => Error::Timeout {
            endpoint,
            phase: Phase::Receive,
        },
        // The request was sent and the connection died: it may have run. Never resend.
        source => Error::Receive { endpoint, source },
    };
    crate::trace::call_failed(&e);
    e.into()
}

/// The server closed the connection while a reply was awaited: the request may have run.
#[cold]
#[inline(never)]
pub(crate) fn closed(rope: &Rope) -> SystemException {
    Error::ConnectionClosed {
        endpoint: rope.address().clone(),
    }
    .into()
}

/// What a server sent that a client cannot take as the reply it awaits.
#[cold]
pub(crate) fn unexpected_message(rope: &Rope, event: &Event<'_>) -> SystemException {
    let message = match event {
        Event::Reply { .. } => "a Reply to another request",
        Event::LocateReply { .. } => "a LocateReply",
        Event::Request { .. } | Event::LocateRequest { .. } => "a request",
        Event::CancelRequest { .. } => "a CancelRequest",
        _ => "an unexpected message",
    };
    raise(Error::UnexpectedMessage {
        endpoint: rope.address().clone(),
        message,
    })
}

// The call path's errors are built out of line, so that the hot functions keep their shape
// (measured: building them inline cost ~20 instructions per null call).

#[cold]
#[inline(never)]
fn raise(e: Error) -> SystemException {
    crate::trace::call_failed(&e);
    e.to_system_exception()
}

#[cold]
#[inline(never)]
pub(crate) fn protocol_error(rope: &Rope, source: ConnectionError) -> SystemException {
    raise(Error::Protocol {
        endpoint: rope.address().clone(),
        source,
    })
}

#[cold]
#[inline(never)]
pub(crate) fn message_error(rope: &Rope) -> SystemException {
    raise(Error::MessageError {
        endpoint: rope.address().clone(),
    })
}

#[cold]
#[inline(never)]
pub(crate) fn oneways_lost(rope: &Rope, count: u64) -> SystemException {
    raise(Error::OnewaysLost {
        endpoint: rope.address().clone(),
        count,
    })
}

#[cold]
#[inline(never)]
pub(crate) fn forward_limit(limit: u32) -> SystemException {
    raise(Error::ForwardLimit { limit })
}

#[cold]
#[inline(never)]
pub(crate) fn resend_limit(rope: &Rope) -> SystemException {
    raise(Error::ResendLimit {
        endpoint: rope.address().clone(),
        resends: MAX_RESENDS,
    })
}

/// A request could not be started, marshalled or finished: nothing was sent. The one
/// mapping of [`RequestError`] for every way a request is started (plain, intercepted,
/// asynchronous, bidirectional).
#[cold]
#[inline(never)]
pub(crate) fn request_failed(e: RequestError<crate::cdr::MarshalError>) -> SystemException {
    raise(match e {
        RequestError::Connection(e) => Error::EncodeRequest(e),
        RequestError::Arguments(e) => Error::MarshalArguments(e),
    })
}

/// [`request_failed`] for a request that could not be started or finished, taking the
/// connection's error as it comes (the caller builds no `RequestError` on its hot path).
#[cold]
#[inline(never)]
pub(crate) fn encode_failed(e: ConnectionError) -> SystemException {
    request_failed(RequestError::Connection(e))
}

/// Writing the request failed or timed out: it did not reach the server.
#[cold]
#[inline(never)]
pub(crate) fn send_failed(rope: &Rope, source: std::io::Error, timed_out: bool) -> SystemException {
    let endpoint = rope.address().clone();
    raise(if timed_out {
        Error::Timeout {
            endpoint,
            phase: Phase::Send,
        }
    } else {
        Error::Send { endpoint, source }
    })
}

#[cold]
#[inline(never)]
fn batch_send_failed(rope: &Rope, lost: super::rope::LostBatch) -> SystemException {
    raise(Error::BatchSend {
        endpoint: rope.address().clone(),
        count: lost.count,
        source: lost.error,
    })
}

#[cold]
#[inline(never)]
fn decode_reply_failed(e: crate::giop::GiopError) -> SystemException {
    raise(Error::DecodeReply(e))
}

#[cold]
#[inline(never)]
fn decode_forward_failed(e: crate::giop::GiopError) -> SystemException {
    raise(Error::DecodeForward(e))
}

impl Invoker for IiopInvoker {
    fn invoke<'a>(
        &self,
        _object_key: &[u8],
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
    ) -> Result<(), SystemException> {
        // Oneways are bounded too: a server that stops reading must not block the caller
        // forever.
        let deadline = self.effective_timeout().map(|t| Instant::now() + t);
        self.call(NoHooks, operation, encode, decode, deadline)
    }

    // The DII's path: as `invoke`, without the default method's extra call.
    fn invoke_described<'a>(
        &self,
        _object_key: &[u8],
        operation: &str,
        _signature: &dyn crate::interceptor::OperationSignature,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
    ) -> Result<(), SystemException> {
        let deadline = self.effective_timeout().map(|t| Instant::now() + t);
        self.call(NoHooks, operation, encode, decode, deadline)
    }

    fn as_any(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::time::Duration;

    use crate::cdr::{ByteOrder, CodeSets};
    use crate::giop::connection::{Event, GiopConnection, Role, Settings};
    use crate::giop::{MessageWriter, ReplyHeader, ReplyStatus, Version};
    use crate::SystemException;

    fn text(n: u32) -> String {
        format!("{n:0>40}")
    }

    /// Every path that starts requests maps their failure through `request_failed`: a
    /// request the connection could not start or finish, and arguments that did not
    /// marshal, each to the exception error.rs gives it, completed NO.
    #[test]
    fn a_request_that_was_not_sent_maps_one_way() {
        use crate::cdr::MarshalError;
        use crate::giop::connection::ConnectionError;
        use crate::{CompletionStatus, SystemExceptionKind};

        let e = super::encode_failed(ConnectionError::Closed);
        assert_eq!(e.kind, SystemExceptionKind::Marshal);
        assert_eq!(e.minor, crate::error::minor::MARSHAL_REQUEST);
        assert_eq!(e.completed, CompletionStatus::No);
        let bound = MarshalError::BoundExceeded {
            length: 3,
            bound: 2,
        };
        let want = crate::Error::MarshalArguments(bound.clone()).to_system_exception();
        let e = super::request_failed(super::RequestError::Arguments(bound));
        assert_eq!(
            (e.kind, e.minor, e.completed),
            (want.kind, want.minor, want.completed)
        );
        assert_eq!(e.kind, SystemExceptionKind::BadParam);
        assert_eq!(e.completed, CompletionStatus::No);
    }

    fn reply(id: u32, n: u32) -> Vec<u8> {
        let h = ReplyHeader::new(id, ReplyStatus::NoException);
        let mut m =
            MessageWriter::reply(Version::V1_2, ByteOrder::NATIVE, CodeSets::DEFAULT, &h).unwrap();
        m.body().write_string(&text(n)).unwrap();
        m.finish_bytes().unwrap()
    }

    /// The id of the next request read off `s`.
    fn request_id(s: &mut TcpStream, conn: &mut GiopConnection) -> u32 {
        loop {
            if let Some(Event::Request { header, .. }) = conn.poll_event().unwrap() {
                return header.request_id;
            }
            let n = s.read(conn.read_buf()).unwrap();
            assert!(n > 0, "end of stream before a request");
            conn.commit(n);
        }
    }

    /// The in-place path (whole reply in one read) and the general one (a reply in pieces,
    /// in fragments) give the same results, and bytes read behind a reply (here a
    /// CloseConnection) keep the strand from being reused.
    #[test]
    fn replies_whole_in_pieces_in_fragments_or_with_a_close_behind() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut conn = GiopConnection::new(Settings::new(Role::Server));
            let id = request_id(&mut s, &mut conn);
            s.write_all(&reply(id, 1)).unwrap();
            let id = request_id(&mut s, &mut conn);
            let r = reply(id, 2);
            s.write_all(&r[..10]).unwrap();
            std::thread::sleep(Duration::from_millis(20));
            s.write_all(&r[10..]).unwrap();
            let id = request_id(&mut s, &mut conn);
            let r = reply(id, 3);
            let fragments = crate::giop::fragment_message(&[&r[..]], 32).unwrap();
            assert!(fragments.len() > 1);
            for f in fragments {
                s.write_all(&f.io_slices().concat()).unwrap();
            }
            let id = request_id(&mut s, &mut conn);
            let mut r = reply(id, 4);
            r.extend_from_slice(&crate::giop::close_connection(
                Version::V1_2,
                ByteOrder::NATIVE,
            ));
            s.write_all(&r).unwrap();
            let (mut s, _) = listener.accept().unwrap();
            let mut conn = GiopConnection::new(Settings::new(Role::Server));
            let id = request_id(&mut s, &mut conn);
            s.write_all(&reply(id, 5)).unwrap();
        });
        let (orb, _) = crate::Orb::init(Vec::<String>::new()).unwrap();
        let obj = orb
            .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{port}/k"))
            .unwrap();
        for n in 1..=5 {
            let got: Result<String, SystemException> =
                obj.invoke("get", |_| Ok(()), |r| r.read_string(), crate::no_user);
            assert_eq!(got.unwrap(), text(n));
        }
        server.join().unwrap();
        orb.destroy();
    }
}
