//! The IIOP client call path: the calling thread marshals straight into a strand's buffer,
//! writes, and blocks on the reply itself — no thread switch, no queue.

use std::sync::atomic::{AtomicI16, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use super::rope::{Rope, Strand};
use super::ClientContext;
use crate::cdr::{ByteOrder, CodeSets};
use crate::giop::service_context::CodeSetContext;
use crate::giop::{
    GiopMessage, IiopProfile, Ior, IorAddressingInfo, MessageWriter, ReplyStatus, RequestHeaderRef,
    ServiceContextList, SystemExceptionBody, TargetAddress, Version,
};
use crate::object::{DecodeReply, EncodeArgs, Invoker, ReplyBody};
use crate::transport::{
    read_message_into, write_message, write_segments, Address, LocalTransport, ReadError,
    TransportKind,
};
use crate::{CompletionStatus, SystemException, SystemExceptionKind};

fn sys(kind: SystemExceptionKind, minor: u32, completed: CompletionStatus) -> SystemException {
    SystemException::new(kind, minor).completed(completed)
}

fn comm_failure(completed: CompletionStatus) -> SystemException {
    sys(SystemExceptionKind::CommFailure, 0, completed)
}

/// TRANSIENT minor code for "LOCATION_FORWARD hop limit reached" (Corbina's own; a forward
/// chain that ends this way is not unwound to the original target).
pub const MINOR_FORWARD_LIMIT: u32 = 0x4342_4e01;

/// TRANSIENT minor code for "the server kept closing the connection before reading the
/// request" (orderly CloseConnection on every resend).
pub const MINOR_RETRIES_EXHAUSTED: u32 = 0x4342_4e02;

/// How many times a call is resent after orderly closes before giving up with TRANSIENT.
const MAX_RESENDS: usize = 16;

fn timeout(completed: CompletionStatus) -> SystemException {
    sys(SystemExceptionKind::Timeout, 0, completed)
}

/// Reaches one object through IIOP: its profile, the rope to the profile's address, and
/// any LOCATION_FORWARD target learned on the way.
pub struct IiopInvoker {
    ctx: Arc<ClientContext>,
    ior: Ior,
    profile_index: u32,
    profile: IiopProfile,
    rope: Arc<Rope>,
    version: Version,
    code_sets: CodeSets,
    addressing: AtomicI16,
    /// `TargetAddress::Key` for the profile's key, built once: the common case of every call.
    key_target: TargetAddress,
    forward: RwLock<Option<Arc<IiopInvoker>>>,
    /// This reference's own call timeout (wins over the thread's and the ORB's).
    call_timeout: Option<Duration>,
}

enum Attempt {
    Done,
    /// Nothing was processed by the server (CloseConnection, stale strand): send again.
    Retry,
    /// The server forwarded us: go there.
    Forward(Arc<IiopInvoker>),
}

impl IiopInvoker {
    /// An invoker for the first usable IIOP profile of `ior`.
    pub fn new(ctx: Arc<ClientContext>, ior: Ior) -> Result<IiopInvoker, SystemException> {
        let inv_objref = || sys(SystemExceptionKind::InvObjref, 0, CompletionStatus::No);
        let (index, profile) = ior
            .profiles
            .iter()
            .enumerate()
            .find_map(|(i, p)| p.iiop().and_then(Result::ok).map(|p| (i as u32, p)))
            .ok_or_else(inv_objref)?;
        let rope = ctx.rope_to(select_address(&profile, ctx.config.prefer_local));
        let minor = profile.version.minor.min(ctx.config.giop_max_minor);
        let version = Version::new(1, minor).map_err(|_| inv_objref())?;
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
            version,
            code_sets,
            addressing: AtomicI16::new(crate::giop::target_address::KEY_ADDR),
            key_target: TargetAddress::Key(profile_key),
            forward: RwLock::new(None),
            call_timeout: None,
        })
    }

    /// The same invoker with its own call timeout (`None`: the thread's, else the ORB's).
    pub fn with_call_timeout(mut self, timeout: Option<Duration>) -> IiopInvoker {
        self.call_timeout = timeout;
        self
    }

    /// The timeout this reference sets for its calls, if any.
    pub fn call_timeout(&self) -> Option<Duration> {
        self.call_timeout
    }

    /// The timeout a call made now by this thread runs with.
    fn effective_timeout(&self) -> Option<Duration> {
        self.call_timeout
            .or_else(super::thread_call_timeout)
            .or(self.ctx.config.call_timeout)
    }

    /// Where calls go: the profile's TCP address, or a local endpoint it publishes.
    pub fn address(&self) -> &Address {
        self.rope.address()
    }

    /// The profile calls go to.
    pub fn profile(&self) -> &IiopProfile {
        &self.profile
    }

    fn target(&self) -> std::borrow::Cow<'_, TargetAddress> {
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

    fn call<'a>(
        &self,
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        mut decode: Option<&mut DecodeReply<'_>>,
        hops: u32,
        deadline: Option<Instant>,
    ) -> Result<(), SystemException> {
        let forwarded = self.forward.read().ok().and_then(|f| f.clone());
        if let Some(fwd) = forwarded {
            match fwd.call(operation, encode, decode.as_deref_mut(), hops + 1, deadline) {
                // The forward target is unreachable and nothing ran there: fall back to the
                // original reference, as the specification says (not when the chain ended
                // at the hop limit: going back would only walk it again).
                Err(e)
                    if matches!(
                        e.kind,
                        SystemExceptionKind::Transient | SystemExceptionKind::CommFailure
                    ) && e.completed == CompletionStatus::No
                        && e.minor != MINOR_FORWARD_LIMIT =>
                {
                    if let Ok(mut f) = self.forward.write() {
                        *f = None;
                    }
                }
                other => return other,
            }
        }
        // Transparent resends for strands the server closed before reading the request.
        for _ in 0..MAX_RESENDS {
            let strand = self.rope.acquire_until(deadline)?;
            match self.attempt(strand, operation, encode, decode.as_deref_mut(), deadline)? {
                Attempt::Done => return Ok(()),
                Attempt::Retry => continue,
                Attempt::Forward(target) => {
                    if hops >= self.ctx.config.forward_limit {
                        return Err(sys(
                            SystemExceptionKind::Transient,
                            MINOR_FORWARD_LIMIT,
                            CompletionStatus::No,
                        ));
                    }
                    if let Ok(mut f) = self.forward.write() {
                        *f = Some(target.clone());
                    }
                    return target.call(operation, encode, decode, hops + 1, deadline);
                }
            }
        }
        Err(sys(
            SystemExceptionKind::Transient,
            MINOR_RETRIES_EXHAUSTED,
            CompletionStatus::No,
        ))
    }

    fn attempt<'a>(
        &self,
        mut strand: Box<Strand>,
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
        deadline: Option<Instant>,
    ) -> Result<Attempt, SystemException> {
        let code_sets = *strand.code_sets.get_or_insert(self.code_sets);
        let request_id = strand.next_request_id();
        let mut contexts = ServiceContextList::new();
        if self.version.minor >= 1 && !strand.reused {
            // The first request on a connection fixes its transmission code sets.
            let ctx = CodeSetContext {
                char_data: code_sets.char_set.id(),
                wchar_data: code_sets
                    .wchar_set
                    .map_or(crate::cdr::CodeSetId::UTF_16, |w| w.id()),
            };
            contexts.push(
                ctx.to_service_context(ByteOrder::NATIVE)
                    .map_err(|_| sys(SystemExceptionKind::Internal, 0, CompletionStatus::No))?,
            );
        }
        let target = self.target();
        let header = RequestHeaderRef {
            request_id,
            response_flags: if decode.is_some() {
                crate::giop::request::SYNC_WITH_TARGET
            } else {
                crate::giop::request::RESPONSE_NONE
            },
            target: &target,
            operation,
            service_context: &contexts,
            requesting_principal: &[],
        };
        let marshal_no = |e: crate::cdr::MarshalError| SystemException::from(e);
        let buffer = std::mem::take(&mut strand.out);
        let mut mw =
            MessageWriter::request_ref(buffer, self.version, ByteOrder::NATIVE, code_sets, &header)
                .map_err(|_| sys(SystemExceptionKind::Marshal, 0, CompletionStatus::No))?;
        let header_len = mw.writer().len();
        {
            let w = mw.body();
            let padded = w.len();
            encode(w).map_err(marshal_no)?;
            if w.len() == padded {
                // An empty body is sent unpadded.
                w.truncate(header_len);
            }
        }
        let w = mw
            .finish()
            .map_err(|_| sys(SystemExceptionKind::Marshal, 0, CompletionStatus::No))?;
        if let Err(e) = strand.set_write_deadline(deadline) {
            drop(strand);
            self.rope.discard();
            return Err(if e.kind() == std::io::ErrorKind::TimedOut {
                timeout(CompletionStatus::No)
            } else {
                comm_failure(CompletionStatus::No)
            });
        }
        let sent = match self.ctx.config.fragment_size {
            Some(max) if self.version.minor >= 1 && w.len() > max as usize => {
                crate::giop::fragment_message(&w.segments(), max as usize)
                    .map_err(|_| sys(SystemExceptionKind::Marshal, 0, CompletionStatus::No))?
                    .iter()
                    .try_for_each(|f| write_segments(&mut strand.stream, &f.io_slices()))
            }
            _ => write_message(&mut strand.stream, &w),
        };
        strand.out = crate::transport::recycle(w.into_owned_buffer());
        if let Err(e) = sent {
            let reused = strand.reused;
            drop(strand);
            self.rope.discard();
            // The whole request never reached the server: nothing ran. A write that timed
            // out is the call's deadline; on a reused strand a failed write is the server's
            // idle close racing us: resend on a new connection.
            return if is_timeout(&e) && deadline.is_some() {
                Err(timeout(CompletionStatus::No))
            } else if reused {
                Ok(Attempt::Retry)
            } else {
                Err(comm_failure(CompletionStatus::No))
            };
        }
        let Some(decode) = decode else {
            self.rope.release(strand);
            return Ok(Attempt::Done);
        };
        self.await_reply(strand, request_id, code_sets, decode, deadline)
    }

    fn await_reply(
        &self,
        mut strand: Box<Strand>,
        request_id: u32,
        code_sets: CodeSets,
        decode: &mut DecodeReply<'_>,
        deadline: Option<Instant>,
    ) -> Result<Attempt, SystemException> {
        strand.reader.get_mut().set_deadline(deadline);
        loop {
            let buffer = std::mem::take(&mut strand.inbound);
            let m = match read_message_into(
                &mut strand.reader,
                self.ctx.config.max_message_size,
                buffer,
            ) {
                Ok(m) => m,
                Err(e) => {
                    // The strand is closed, never reused: a late reply cannot reach the
                    // next call.
                    drop(strand);
                    self.rope.discard();
                    return Err(read_failure(&e, deadline.is_some()));
                }
            };
            let m = match strand.reassembler.push(m) {
                Ok(Some(m)) => m,
                Ok(None) => continue,
                Err(_) => return self.fail(strand, comm_failure(CompletionStatus::Maybe)),
            };
            let decoded = match m.decode() {
                Ok(d) => d,
                Err(_) => return self.fail(strand, comm_failure(CompletionStatus::Maybe)),
            };
            match decoded {
                GiopMessage::Reply { header, body } if header.request_id == request_id => {
                    let mut r = body.reader(code_sets);
                    let done = CompletionStatus::Yes;
                    let marshal = |e| SystemException::from(e).completed(done);
                    let outcome = match header.reply_status {
                        ReplyStatus::NoException => {
                            decode(ReplyBody::Result(&mut r)).map(|()| Attempt::Done)
                        }
                        ReplyStatus::UserException => match r.read_string() {
                            Ok(id) => decode(ReplyBody::UserException(&id, &mut r))
                                .map(|()| Attempt::Done),
                            Err(e) => Err(marshal(e)),
                        },
                        ReplyStatus::SystemException => match SystemExceptionBody::decode(&mut r) {
                            Ok(b) => Err(b.to_exception()),
                            Err(e) => Err(SystemException::from(e).completed(done)),
                        },
                        ReplyStatus::LocationForward | ReplyStatus::LocationForwardPerm => {
                            match Ior::decode(&mut r) {
                                Ok(ior) => IiopInvoker::new(self.ctx.clone(), ior)
                                    .map(|t| Attempt::Forward(Arc::new(t))),
                                Err(e) => Err(SystemException::from(e)),
                            }
                        }
                        ReplyStatus::NeedsAddressingMode => match r.read_short() {
                            Ok(mode) if (0..=2).contains(&mode) => {
                                self.addressing.store(mode, Ordering::Relaxed);
                                Ok(Attempt::Retry)
                            }
                            _ => Err(sys(SystemExceptionKind::Marshal, 0, CompletionStatus::No)),
                        },
                    };
                    strand.inbound = crate::transport::recycle(m.into_bytes());
                    self.rope.release(strand);
                    return outcome;
                }
                GiopMessage::CloseConnection => {
                    // Orderly close: the server did not process our request.
                    drop(strand);
                    self.rope.discard();
                    return Ok(Attempt::Retry);
                }
                GiopMessage::MessageError => {
                    return self.fail(strand, comm_failure(CompletionStatus::No));
                }
                _ => return self.fail(strand, comm_failure(CompletionStatus::Maybe)),
            }
        }
    }

    fn fail(&self, strand: Box<Strand>, e: SystemException) -> Result<Attempt, SystemException> {
        drop(strand);
        self.rope.discard();
        Err(e)
    }
}

/// The address to reach `profile` at: with `prefer_local`, a shared-memory or Unix-domain
/// endpoint it publishes (in that order) if it is on this host; else its TCP address.
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
    Address::Tcp {
        host: profile.host.clone(),
        port: profile.port,
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

fn read_failure(e: &ReadError, has_deadline: bool) -> SystemException {
    match e {
        ReadError::Io(io) if has_deadline && is_timeout(io) => timeout(CompletionStatus::Maybe),
        // The request was sent and the connection died: it may have run. Never resend.
        _ => comm_failure(CompletionStatus::Maybe),
    }
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
        self.call(operation, encode, decode, 0, deadline)
    }
}
