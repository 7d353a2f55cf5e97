//! The IIOP client call path: the calling thread marshals straight into a strand's buffer,
//! writes, and blocks on the reply itself — no thread switch, no queue.

use std::sync::atomic::{AtomicI16, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use super::rope::{Rope, Strand};
use super::ClientContext;
use crate::cdr::{ByteOrder, CodeSets};
use crate::giop::service_context::CodeSetContext;
use crate::giop::{
    GiopMessage, IiopProfile, Ior, IorAddressingInfo, MessageWriter, ObjectKey, ReplyStatus,
    RequestHeader, ServiceContextList, SystemExceptionBody, TargetAddress, Version,
};
use crate::object::{DecodeReply, EncodeArgs, Invoker, ReplyBody};
use crate::transport::{read_message, write_segments, ReadError};
use crate::{CompletionStatus, SystemException, SystemExceptionKind};

fn sys(kind: SystemExceptionKind, minor: u32, completed: CompletionStatus) -> SystemException {
    SystemException::new(kind, minor).completed(completed)
}

fn comm_failure(completed: CompletionStatus) -> SystemException {
    sys(SystemExceptionKind::CommFailure, 0, completed)
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
    forward: RwLock<Option<Arc<IiopInvoker>>>,
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
        let rope = ctx.rope(&profile.host, profile.port);
        let minor = profile.version.minor.min(ctx.config.giop_max_minor);
        let version = Version::new(1, minor).map_err(|_| inv_objref())?;
        let code_sets = if minor == 0 {
            CodeSets::DEFAULT
        } else {
            crate::codeset::negotiate(profile.code_sets().ok().flatten().as_ref())
        };
        Ok(IiopInvoker {
            ctx,
            ior,
            profile_index: index,
            profile,
            rope,
            version,
            code_sets,
            addressing: AtomicI16::new(crate::giop::target_address::KEY_ADDR),
            forward: RwLock::new(None),
        })
    }

    /// The profile calls go to.
    pub fn profile(&self) -> &IiopProfile {
        &self.profile
    }

    fn target(&self) -> TargetAddress {
        use crate::giop::target_address::{PROFILE_ADDR, REFERENCE_ADDR};
        match self.addressing.load(Ordering::Relaxed) {
            PROFILE_ADDR => match self.ior.profiles.get(self.profile_index as usize) {
                Some(p) => TargetAddress::Profile(p.clone()),
                None => TargetAddress::Key(self.profile.object_key.clone()),
            },
            REFERENCE_ADDR => TargetAddress::Reference(IorAddressingInfo {
                selected_profile_index: self.profile_index,
                ior: self.ior.clone(),
            }),
            _ => TargetAddress::Key(self.profile.object_key.clone()),
        }
    }

    fn call<'a>(
        &self,
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        mut decode: Option<&mut DecodeReply<'_>>,
        hops: u32,
    ) -> Result<(), SystemException> {
        let forwarded = self.forward.read().ok().and_then(|f| f.clone());
        if let Some(fwd) = forwarded {
            match fwd.call(
                operation,
                encode,
                decode.as_deref_mut(),
                hops + 1,
            ) {
                // The forward target is unreachable and nothing ran there: fall back to the
                // original reference, as the specification says.
                Err(e)
                    if matches!(
                        e.kind,
                        SystemExceptionKind::Transient | SystemExceptionKind::CommFailure
                    ) && e.completed == CompletionStatus::No =>
                {
                    if let Ok(mut f) = self.forward.write() {
                        *f = None;
                    }
                }
                other => return other,
            }
        }
        // A few transparent resends for strands the server closed before reading the request.
        for _ in 0..4 {
            let strand = self.rope.acquire()?;
            match self.attempt(strand, operation, encode, decode.as_deref_mut())? {
                Attempt::Done => return Ok(()),
                Attempt::Retry => continue,
                Attempt::Forward(target) => {
                    if hops >= self.ctx.config.forward_limit {
                        return Err(sys(SystemExceptionKind::Transient, 0, CompletionStatus::No));
                    }
                    if let Ok(mut f) = self.forward.write() {
                        *f = Some(target.clone());
                    }
                    return target.call(operation, encode, decode, hops + 1);
                }
            }
        }
        Err(sys(SystemExceptionKind::Transient, 0, CompletionStatus::No))
    }

    fn attempt<'a>(
        &self,
        mut strand: Strand,
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
    ) -> Result<Attempt, SystemException> {
        let code_sets = *strand.code_sets.get_or_insert(self.code_sets);
        let request_id = strand.next_request_id();
        let mut header = RequestHeader::new(request_id, ObjectKey::new(Vec::new()), operation);
        header.target = self.target();
        if decode.is_none() {
            header.response_flags = crate::giop::request::RESPONSE_NONE;
        }
        if self.version.minor >= 1 && !strand.reused {
            // The first request on a connection fixes its transmission code sets.
            let ctx = CodeSetContext {
                char_data: code_sets.char_set.id(),
                wchar_data: code_sets
                    .wchar_set
                    .map_or(crate::cdr::CodeSetId::UTF_16, |w| w.id()),
            };
            header.service_context = ServiceContextList(vec![ctx
                .to_service_context(ByteOrder::NATIVE)
                .map_err(|_| sys(SystemExceptionKind::Internal, 0, CompletionStatus::No))?]);
        }
        let marshal_no = |e: crate::cdr::MarshalError| SystemException::from(e);
        let mut mw = MessageWriter::request(self.version, ByteOrder::NATIVE, code_sets, &header)
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
        let sent = match self.ctx.config.fragment_size {
            Some(max) if self.version.minor >= 1 && w.len() > max as usize => {
                crate::giop::fragment_message(&w.segments(), max as usize)
                    .map_err(|_| sys(SystemExceptionKind::Marshal, 0, CompletionStatus::No))?
                    .iter()
                    .try_for_each(|f| write_segments(&mut strand.stream, &f.io_slices()))
            }
            _ => write_segments(&mut strand.stream, &w.segments()),
        };
        drop(w);
        if sent.is_err() {
            let reused = strand.reused;
            drop(strand);
            self.rope.discard();
            // The whole request never left: nothing ran. On a reused strand that is the
            // server's idle close racing us; resend on a new connection.
            return if reused {
                Ok(Attempt::Retry)
            } else {
                Err(comm_failure(CompletionStatus::No))
            };
        }
        let Some(decode) = decode else {
            self.rope.release(strand);
            return Ok(Attempt::Done);
        };
        self.await_reply(strand, request_id, code_sets, decode)
    }

    fn await_reply(
        &self,
        mut strand: Strand,
        request_id: u32,
        code_sets: CodeSets,
        decode: &mut DecodeReply<'_>,
    ) -> Result<Attempt, SystemException> {
        let timeout = self.ctx.config.call_timeout;
        let _ = strand.stream.set_read_timeout(timeout);
        loop {
            let m = match read_message(&mut strand.reader, self.ctx.config.max_message_size) {
                Ok(m) => m,
                Err(e) => {
                    let reused = strand.reused;
                    drop(strand);
                    self.rope.discard();
                    return Err(read_failure(&e, reused, timeout));
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
                    drop(m);
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

    fn fail(&self, strand: Strand, e: SystemException) -> Result<Attempt, SystemException> {
        drop(strand);
        self.rope.discard();
        Err(e)
    }
}

fn read_failure(e: &ReadError, _reused: bool, timeout: Option<Duration>) -> SystemException {
    match e {
        ReadError::Io(io)
            if timeout.is_some()
                && matches!(
                    io.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
        {
            sys(SystemExceptionKind::Timeout, 0, CompletionStatus::Maybe)
        }
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
        self.call(operation, encode, decode, 0)
    }
}
