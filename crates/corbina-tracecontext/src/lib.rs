//! W3C Trace Context (<https://www.w3.org/TR/trace-context/>) over CORBA: a pair of
//! portable interceptors that carry `traceparent` and `tracestate` in a GIOP service
//! context, so a trace started in an HTTP service continues through CORBA calls (and back
//! out, through the application's HTTP client).
//!
//! The service context: id [`TRACE_CONTEXT_ID`] (`0x43425443`, "CBTC"), its data a CDR
//! encapsulation of
//!
//! ```idl
//! struct TraceContext { string traceparent; string tracestate; };
//! ```
//!
//! (a byte-order octet, then the two strings as CDR writes them: length including the
//! NUL, the bytes, the NUL). Any ORB's interceptors can read and write it with their
//! `Codec` or by hand.
//!
//! How it flows: the server interceptor puts the context a request brought into a
//! `PICurrent` slot, which the servant's thread sees; calls the servant makes carry it on,
//! each with a new parent id (the outgoing call's span) and the same trace id and flags. An
//! application starts or continues a trace with [`TraceContextPropagation::set_current`]
//! (say from an incoming HTTP request's headers) and reads it with
//! [`TraceContextPropagation::current`] (to pass it on in HTTP headers).
//!
//! ```
//! use corbina_tracecontext::{TraceContext, TraceContextPropagation};
//! let tc = TraceContextPropagation::new();
//! let orb = corbina::Orb::with_config(corbina::OrbConfig::default().orb_initializer(tc.clone()));
//! let ctx = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "").unwrap();
//! tc.set_current(&orb, &ctx).unwrap();
//! assert_eq!(tc.current(&orb).unwrap().trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
//! orb.destroy();
//! ```

use std::sync::{Arc, OnceLock};

use corbina::giop::ServiceContext;
use corbina::interceptor::{
    ClientRequestInfo, ClientRequestInterceptor, Interceptor, InterceptorError, OrbInitInfo,
    OrbInitializer, ServerRequestInfo, ServerRequestInterceptor, SlotId,
};
use corbina::orb::InitialReference;
use corbina::{Any, Orb};

/// The service context id carrying the trace context ("CBTC").
pub const TRACE_CONTEXT_ID: u32 = 0x4342_5443;

/// Longest `tracestate` carried (the W3C limit is 32 members of at most 256 characters).
const MAX_TRACESTATE: usize = 8192;

/// Why a trace context was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceContextError {
    /// `traceparent` is not `00-<32 hex>-<16 hex>-<2 hex>` with non-zero ids.
    #[error("malformed traceparent {0:?}")]
    Traceparent(String),
    /// The service context's data is not a CDR encapsulation of two strings.
    #[error("malformed trace context service context")]
    Encapsulation,
    /// `tracestate` is longer than this crate carries.
    #[error("tracestate longer than {MAX_TRACESTATE} bytes")]
    Tracestate,
    /// The ORB was not created with this propagation's initializer.
    #[error("the ORB has no trace context slot (initializer not registered)")]
    NotRegistered,
}

/// A W3C trace context: `traceparent` (version 00) and `tracestate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: String,
    tracestate: String,
}

impl TraceContext {
    /// Checks `traceparent` (version `00`, lower-case hex, non-zero ids).
    pub fn parse(traceparent: &str, tracestate: &str) -> Result<TraceContext, TraceContextError> {
        let bad = || TraceContextError::Traceparent(traceparent.to_owned());
        let parts: Vec<&str> = traceparent.split('-').collect();
        let hex = |s: &str, n: usize| {
            s.len() == n
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        let [version, trace_id, parent_id, flags] = parts[..] else {
            return Err(bad());
        };
        if version != "00"
            || !hex(trace_id, 32)
            || !hex(parent_id, 16)
            || !hex(flags, 2)
            || trace_id.bytes().all(|b| b == b'0')
            || parent_id.bytes().all(|b| b == b'0')
        {
            return Err(bad());
        }
        if tracestate.len() > MAX_TRACESTATE {
            return Err(TraceContextError::Tracestate);
        }
        Ok(TraceContext {
            traceparent: traceparent.to_owned(),
            tracestate: tracestate.to_owned(),
        })
    }

    /// The `traceparent` header value.
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate` header value (may be empty).
    pub fn tracestate(&self) -> &str {
        &self.tracestate
    }

    /// The trace id (32 hex digits).
    pub fn trace_id(&self) -> &str {
        &self.traceparent[3..35]
    }

    /// The parent id: the span of the caller (16 hex digits).
    pub fn parent_id(&self) -> &str {
        &self.traceparent[36..52]
    }

    /// The same trace, with `span_id` as the parent (for a call this process makes).
    pub fn child(&self, span_id: u64) -> TraceContext {
        let span_id = span_id.max(1);
        TraceContext {
            traceparent: format!(
                "00-{}-{span_id:016x}-{}",
                self.trace_id(),
                &self.traceparent[53..55]
            ),
            tracestate: self.tracestate.clone(),
        }
    }

    /// The service context's data: a CDR encapsulation (big-endian) of the two strings.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0u8]; // big-endian
        for s in [&self.traceparent, &self.tracestate] {
            while out.len() % 4 != 0 {
                out.push(0);
            }
            out.extend_from_slice(&(s.len() as u32 + 1).to_be_bytes());
            out.extend_from_slice(s.as_bytes());
            out.push(0);
        }
        out
    }

    /// Reads [`encode`](Self::encode)'s output (either byte order); hostile input gives an
    /// error.
    pub fn decode(data: &[u8]) -> Result<TraceContext, TraceContextError> {
        let little = match data.first() {
            Some(0) => false,
            Some(1) => true,
            _ => return Err(TraceContextError::Encapsulation),
        };
        let mut at: usize = 1;
        let mut string = || -> Result<String, TraceContextError> {
            at = at.div_ceil(4) * 4;
            let len = data
                .get(at..at + 4)
                .ok_or(TraceContextError::Encapsulation)?;
            let len: [u8; 4] = len
                .try_into()
                .map_err(|_| TraceContextError::Encapsulation)?;
            let len = if little {
                u32::from_le_bytes(len)
            } else {
                u32::from_be_bytes(len)
            } as usize;
            at += 4;
            let bytes = data
                .get(
                    at..at
                        .checked_add(len)
                        .ok_or(TraceContextError::Encapsulation)?,
                )
                .ok_or(TraceContextError::Encapsulation)?;
            at += len;
            let (nul, text) = bytes.split_last().ok_or(TraceContextError::Encapsulation)?;
            if *nul != 0 {
                return Err(TraceContextError::Encapsulation);
            }
            String::from_utf8(text.to_vec()).map_err(|_| TraceContextError::Encapsulation)
        };
        let traceparent = string()?;
        let tracestate = string()?;
        TraceContext::parse(&traceparent, &tracestate)
    }

    fn to_any(&self) -> Option<Any> {
        Any::from_string(&format!("{}\n{}", self.traceparent, self.tracestate)).ok()
    }

    fn from_any(any: &Any) -> Option<TraceContext> {
        let s = any.to_string_value()?;
        let (parent, state) = s.split_once('\n')?;
        TraceContext::parse(parent, state).ok()
    }
}

/// The initializer that registers the interceptors (give a clone to
/// [`corbina::OrbConfig::orb_initializer`]), and the application's access to the current
/// trace context.
#[derive(Debug, Default)]
pub struct TraceContextPropagation {
    slot: OnceLock<SlotId>,
}

impl TraceContextPropagation {
    /// A propagation to register with one ORB configuration.
    pub fn new() -> Arc<TraceContextPropagation> {
        Arc::new(TraceContextPropagation::default())
    }

    fn slot(&self) -> Result<SlotId, TraceContextError> {
        self.slot
            .get()
            .copied()
            .ok_or(TraceContextError::NotRegistered)
    }

    fn pi_current(orb: &Orb) -> Result<corbina::interceptor::PiCurrent, TraceContextError> {
        match orb.resolve_initial_references("PICurrent") {
            Ok(InitialReference::PiCurrent(c)) => Ok(c),
            _ => Err(TraceContextError::NotRegistered),
        }
    }

    /// The trace context of the calling thread: the one the request being served brought,
    /// or what the application set.
    pub fn current(&self, orb: &Orb) -> Option<TraceContext> {
        let slot = self.slot().ok()?;
        let any = Self::pi_current(orb).ok()?.get_slot(slot).ok()?;
        TraceContext::from_any(&any)
    }

    /// Makes `ctx` the calling thread's trace context: the calls it makes carry it on.
    pub fn set_current(&self, orb: &Orb, ctx: &TraceContext) -> Result<(), TraceContextError> {
        let slot = self.slot()?;
        let any = ctx.to_any().ok_or(TraceContextError::Encapsulation)?;
        Self::pi_current(orb)?
            .set_slot(slot, any)
            .map_err(|_| TraceContextError::NotRegistered)
    }
}

impl OrbInitializer for TraceContextPropagation {
    fn pre_init(&self, info: &mut OrbInitInfo) {
        let slot = *self.slot.get_or_init(|| info.allocate_slot_id());
        // Our names are unique among ours; a second registration of the same name is the
        // application registering this twice, which the first covers.
        let _ = info.add_client_request_interceptor(Arc::new(Client { slot }));
        let _ = info.add_server_request_interceptor(Arc::new(Server { slot }));
    }
}

struct Client {
    slot: SlotId,
}

impl Interceptor for Client {
    fn name(&self) -> &str {
        "corbina.TraceContext"
    }
}

impl ClientRequestInterceptor for Client {
    fn send_request(&self, ri: &mut ClientRequestInfo) -> Result<(), InterceptorError> {
        let Some(ctx) = ri
            .get_slot(self.slot)
            .ok()
            .and_then(|a| TraceContext::from_any(&a))
        else {
            return Ok(());
        };
        let sc = ServiceContext {
            context_id: TRACE_CONTEXT_ID,
            context_data: ctx.child(span_id(ri.request_id())).encode(),
        };
        ri.add_request_service_context(sc, true)?;
        Ok(())
    }
}

struct Server {
    slot: SlotId,
}

impl Interceptor for Server {
    fn name(&self) -> &str {
        "corbina.TraceContext"
    }
}

impl ServerRequestInterceptor for Server {
    fn receive_request_service_contexts(
        &self,
        ri: &mut ServerRequestInfo,
    ) -> Result<(), InterceptorError> {
        // A malformed context is dropped (the W3C rule: restart the trace), not an error.
        let ctx = ri
            .get_request_service_context(TRACE_CONTEXT_ID)
            .ok()
            .and_then(|sc| TraceContext::decode(&sc.context_data).ok())
            .and_then(|c| c.to_any());
        if let Some(any) = ctx {
            let _ = ri.set_slot(self.slot, any);
        }
        Ok(())
    }
}

/// A new span id: random enough to be unique within a trace (RandomState's keys, a
/// counter, the request id), without a random-number dependency.
fn span_id(request_id: u32) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u32(request_id);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn traceparents_are_checked() {
        let c = TraceContext::parse(TP, "a=1").unwrap();
        assert_eq!(c.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(c.parent_id(), "00f067aa0ba902b7");
        for bad in [
            "",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
        ] {
            assert!(TraceContext::parse(bad, "").is_err(), "{bad}");
        }
    }

    #[test]
    fn children_keep_the_trace_and_flags() {
        let c = TraceContext::parse(TP, "a=1").unwrap().child(0xabc);
        assert_eq!(
            c.traceparent(),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000abc-01"
        );
        assert_eq!(c.tracestate(), "a=1");
    }

    #[test]
    fn the_encapsulation_round_trips_and_refuses_junk() {
        let c = TraceContext::parse(TP, "congo=t61rcWkgMzE").unwrap();
        let data = c.encode();
        assert_eq!(data[0], 0);
        assert_eq!(&data[4..8], &56u32.to_be_bytes());
        assert_eq!(TraceContext::decode(&data).unwrap(), c);
        for n in 0..data.len() {
            assert!(TraceContext::decode(&data[..n]).is_err());
        }
        let mut huge = data.clone();
        huge[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(TraceContext::decode(&huge).is_err());
        assert!(TraceContext::decode(&[2, 0, 0, 0]).is_err());
    }
}
