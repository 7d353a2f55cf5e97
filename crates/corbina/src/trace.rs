//! Observability: `tracing` spans and events, and omniORB-style wire traces on stderr.
//!
//! Corbina logs through [`tracing`], the Rust ecosystem's facade: nothing is printed unless
//! a subscriber is installed, and a disabled event costs one relaxed load and a branch. The
//! targets:
//!
//! | target | level | what |
//! |---|---|---|
//! | `corbina::connection` | DEBUG | connections opened, accepted, closed; CloseConnection and MessageError received; fragments received (reassembled when the last comes); a client's bad GIOP (MessageError sent); on the client, requests resent after an orderly close, LOCATION_FORWARDs followed, and calls failing in the ORB (timeouts, closed connections, protocol errors) |
//! | `corbina::request` | INFO | one span per request on each side, `corbina.client` / `corbina.server`, with fields `operation`, `object_key`, `request_id`, `giop_version`, `peer`, `transport`, `outcome`, `exception`, `minor`, and an event `request ended` in it; an event `LocateRequest answered` (`object_key`, `status`) for each LocateRequest a server answers; object keys of Corbina's POAs print as the POA's path and the object id (`RootPOA/names<42>`, as omniORB prints `root<42>`), others as bytes; DEBUG: forwards followed |
//! | `corbina::wire` | TRACE | every byte sent and received, as hex dumps (offset, hex, ASCII) |
//! | `corbina::server` | WARN | connections refused (TLS handshakes), accept failures |
//!
//! Request spans come from built-in request interceptors, registered only when asked for
//! ([`OrbConfig::request_spans`], or any of the options below): an ORB without them runs
//! the uninstrumented call path. Wire dumps wrap a connection's transport when it is
//! opened and `corbina::wire` TRACE is enabled then.
//!
//! ## Metrics
//!
//! With the `metrics` feature and [`OrbConfig::request_metrics`], every request is counted
//! and timed through the [`metrics`](https://docs.rs/metrics) facade (the application
//! installs the recorder: Prometheus, OpenTelemetry, …), labelled `side` (`client` /
//! `server`), `operation` and, for counts, `outcome` (`SUCCESSFUL`, `SYSTEM_EXCEPTION`, …):
//! `corbina_requests_total`, `corbina_request_errors_total` (system and user exceptions, with
//! an `exception` label) and the histogram `corbina_request_duration_seconds`. Off by
//! default, and then calls pay nothing for it; like spans, built-in request interceptors.
//!
//! ## A log on stderr without writing code
//!
//! `-ORBtraceLevel n` (omniORB's levels), `-ORBtraceInvocations 1` and `CORBINA_LOG` (else `RUST_LOG`; a
//! `tracing-subscriber` [`EnvFilter`](https://docs.rs/tracing-subscriber/latest/tracing_subscriber/filter/struct.EnvFilter.html)
//! directive list; it wins over the level) make the ORB install a stderr subscriber when it
//! is created, unless the application installed one already (feature `log`, on by
//! default). The levels: `1` warnings, `10` connections, `25` requests, `40` hex dumps.
//!
//! ```
//! let orb = corbina::Orb::with_config(corbina::OrbConfig::default().request_spans(true));
//! // … with the application's subscriber (tracing_subscriber::fmt().init(), OpenTelemetry…)
//! // every request made or served by `orb` is a span.
//! orb.destroy();
//! ```

use std::io::{self, IoSlice};
use std::net::Shutdown;
use std::os::fd::BorrowedFd;
use std::sync::Arc;
use std::time::Duration;

use crate::transport::{Connection, TransportKind};
use crate::OrbConfig;

/// Connection events.
pub(crate) const CONNECTION: &str = "corbina::connection";
/// Hex dumps.
pub(crate) const WIRE: &str = "corbina::wire";

/// Whether `config` asks for request spans.
pub(crate) fn wants_request_spans(config: &OrbConfig) -> bool {
    config.request_spans
        || config.trace_invocations
        || config.trace_level >= 25
        || config.log_filter.is_some()
}

/// Whether `config` asks for request metrics (and the `metrics` feature is there).
pub(crate) fn wants_request_metrics(config: &OrbConfig) -> bool {
    cfg!(feature = "metrics") && config.request_metrics
}

/// The `EnvFilter` directives for `-ORBtraceLevel`/`-ORBtraceInvocations` (`None`: log
/// nothing).
pub fn level_directives(level: u32, invocations: bool) -> Option<String> {
    if level == 0 && !invocations {
        return None;
    }
    let mut d = String::from(if level == 0 { "off" } else { "warn" });
    if level >= 10 {
        d.push_str(",corbina::connection=debug");
    }
    if level >= 25 {
        d.push_str(",corbina::request=debug");
    } else if invocations {
        d.push_str(",corbina::request=info");
    }
    if level >= 40 {
        d.push_str(",corbina::wire=trace");
    }
    Some(d)
}

/// Installs the stderr subscriber `config` asks for, unless one is installed already.
pub(crate) fn install_log(config: &OrbConfig) {
    let directives = match &config.log_filter {
        Some(f) => Some(f.clone()),
        None => level_directives(config.trace_level, config.trace_invocations),
    };
    let Some(directives) = directives else {
        return;
    };
    if tracing::dispatcher::has_been_set() {
        return;
    }
    install_stderr(&directives);
}

#[cfg(feature = "log")]
fn install_stderr(directives: &str) {
    use tracing_subscriber::EnvFilter;
    let filter = match EnvFilter::try_new(directives) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("corbina: CORBINA_LOG {directives:?} ignored: {e}");
            return;
        }
    };
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(false)
        .with_thread_names(true)
        .finish();
    // Another thread may have won the race: theirs stays.
    let _ = tracing::subscriber::set_global_default(subscriber);
}

#[cfg(not(feature = "log"))]
fn install_stderr(directives: &str) {
    eprintln!("corbina: logging ({directives:?}) needs the `log` feature of corbina");
}

/// The transport's name in spans and events.
pub(crate) fn transport_name(kind: TransportKind) -> &'static str {
    match kind {
        TransportKind::Tcp => "tcp",
        TransportKind::Ssl => "ssl",
        TransportKind::Unix => "unix",
        TransportKind::Shm => "shm",
    }
}

/// The peer's address of a connection (`?` when the socket does not say).
pub(crate) fn peer_of(conn: &dyn Connection) -> String {
    let fd = conn.poll_fd();
    let sock = socket2::SockRef::from(&fd);
    match sock.peer_addr() {
        Ok(a) => match (a.as_socket(), a.as_pathname()) {
            (Some(ip), _) => ip.to_string(),
            (None, Some(path)) => path.display().to_string(),
            (None, None) => "local".to_owned(),
        },
        Err(_) => "?".to_owned(),
    }
}

/// `conn` (to `endpoint`, or accepted), wrapped to dump its bytes if `corbina::wire`
/// TRACE is enabled now.
pub(crate) fn wire(
    conn: Arc<dyn Connection>,
    endpoint: Option<&crate::transport::Address>,
) -> Arc<dyn Connection> {
    if tracing::enabled!(target: WIRE, tracing::Level::TRACE) {
        let peer = match endpoint {
            Some(e) => e.to_string(),
            None => peer_of(&*conn),
        };
        Arc::new(Dumped { peer, inner: conn })
    } else {
        conn
    }
}

/// A connection that logs a hex dump of what it reads and writes.
#[derive(Debug)]
struct Dumped {
    inner: Arc<dyn Connection>,
    peer: String,
}

impl Dumped {
    fn dump(&self, direction: &str, bytes: &[u8]) {
        if !bytes.is_empty() {
            let (n, peer) = (bytes.len(), &self.peer);
            let header = giop_header(bytes);
            tracing::trace!(target: WIRE, "{direction} {n} bytes ({peer}){header}\n{}", hex_dump(bytes));
        }
    }
}

impl Connection for Dumped {
    fn kind(&self) -> TransportKind {
        self.inner.kind()
    }
    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.dump("received", &buf[..n]);
        Ok(n)
    }
    fn write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let n = self.inner.write_vectored(bufs)?;
        let mut sent = Vec::with_capacity(n);
        for b in bufs {
            let take = (n - sent.len()).min(b.len());
            sent.extend_from_slice(&b[..take]);
        }
        self.dump("sent", &sent);
        Ok(n)
    }
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.inner.set_read_timeout(timeout)
    }
    fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.inner.set_write_timeout(timeout)
    }
    fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.inner.shutdown(how)
    }
    fn has_pending_input(&self) -> bool {
        self.inner.has_pending_input()
    }
    fn read_nonblocking(&self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read_nonblocking(buf)?;
        self.dump("received", &buf[..n]);
        Ok(n)
    }
    fn poll_fd(&self) -> BorrowedFd<'_> {
        self.inner.poll_fd()
    }
    fn peer_certificate_chain(&self) -> Option<Vec<Vec<u8>>> {
        self.inner.peer_certificate_chain()
    }
}

/// The GIOP header at the start of `bytes`, decoded for a person (`: GIOP 1.2 Request,
/// 62-byte body, little-endian`); empty when they do not start with one (a read may end or
/// begin mid-message).
pub fn giop_header(bytes: &[u8]) -> String {
    use crate::cdr::ByteOrder;
    match crate::giop::MessageHeader::decode_prefix(bytes) {
        Ok(h) => format!(
            ": GIOP {}.{} {:?}, {}-byte body, {}-endian{}",
            h.version.major,
            h.version.minor,
            h.msg_type,
            h.message_size,
            match h.byte_order {
                ByteOrder::Big => "big",
                ByteOrder::Little => "little",
            },
            if h.more_fragments {
                ", more fragments follow"
            } else {
                ""
            }
        ),
        Err(_) => String::new(),
    }
}

/// `bytes` as omniORB dumps GIOP messages: 16 a line, offset, hex in pairs, ASCII.
///
/// ```text
/// 0000  4749 4f50 0102 0100 2600 0000 0200 0000  GIOP....&.......
/// ```
pub fn hex_dump(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(bytes.len() / 16 * 60 + 60);
    for (i, line) in bytes.chunks(16).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = write!(out, "{:04x}  ", i * 16);
        for k in 0..16 {
            match line.get(k) {
                Some(b) => {
                    let _ = write!(out, "{b:02x}");
                }
                None => out.push_str("  "),
            }
            if k % 2 == 1 {
                out.push(' ');
            }
        }
        out.push(' ');
        out.extend(line.iter().map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '.'
            }
        }));
    }
    out
}

// Connection events, out of line: the call path only branches to them when they happen.

/// A client connected to `endpoint`.
#[cold]
#[inline(never)]
pub(crate) fn connected(endpoint: &crate::transport::Address) {
    tracing::debug!(target: CONNECTION, peer = %endpoint,
        transport = transport_name(endpoint.kind()), "connection opened");
}

/// A server accepted `conn`.
#[cold]
#[inline(never)]
pub(crate) fn accepted(conn: &dyn Connection) {
    tracing::debug!(target: CONNECTION, peer = %peer_of(conn),
        transport = transport_name(conn.kind()), "connection accepted");
}

/// A server connection ended.
#[cold]
#[inline(never)]
pub(crate) fn server_connection_closed(conn: &dyn Connection) {
    tracing::debug!(target: CONNECTION, peer = %peer_of(conn),
        transport = transport_name(conn.kind()), "connection closed");
}

/// The peer sent CloseConnection (`server`: to this ORB's server) or MessageError.
#[cold]
#[inline(never)]
pub(crate) fn control_received(what: &str, peer: &dyn std::fmt::Display) {
    tracing::debug!(target: CONNECTION, %peer, "{what} received");
}

/// A server connection failed on the client's bytes (a MessageError goes back).
#[cold]
#[inline(never)]
pub(crate) fn protocol_failure(e: &dyn std::error::Error) {
    tracing::debug!(target: CONNECTION, error = %e, "bad GIOP from the client: MessageError sent, connection closed");
}

/// A fragment of a message arrived (the message is reassembled when its last one comes).
#[cold]
#[inline(never)]
pub(crate) fn fragment_received(peer: &dyn std::fmt::Display) {
    tracing::debug!(target: CONNECTION, %peer, "fragment received: reassembling a message");
}

/// A request is sent again (the server closed the connection before reading it, or asked
/// for another addressing mode).
#[cold]
#[inline(never)]
pub(crate) fn retried(peer: &dyn std::fmt::Display, operation: &str) {
    tracing::debug!(target: CONNECTION, %peer, operation, "request resent");
}

/// A connect to one of an object's addresses failed: the call moves on to the next.
#[cold]
#[inline(never)]
pub(crate) fn failed_over(from: &dyn std::fmt::Display) {
    tracing::debug!(target: CONNECTION, %from, "connect failed: trying the object's next address");
}

/// A LOCATION_FORWARD reply is followed.
#[cold]
#[inline(never)]
pub(crate) fn forwarded(operation: &str, to: &crate::giop::Ior) {
    tracing::debug!(target: CONNECTION, operation, type_id = %to.type_id,
        "LOCATION_FORWARD: request sent to the new target");
}

/// An object key as omniORB prints one: a key of Corbina's POAs as the POA's path and the
/// object id (`RootPOA/names<42>`, omniORB's `root<42>`), any other key with printable
/// bytes as they are and the rest as `\xx`.
pub(crate) struct ObjectKey<'a>(pub(crate) &'a [u8]);

impl std::fmt::Display for ObjectKey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::poa::key::{decode, path_names, PoaLocator};
        let Some(k) = decode(self.0) else {
            return escaped(f, self.0);
        };
        match k.poa {
            // The registry's slot 0 is the RootPOA; other transient POAs by their slot.
            PoaLocator::Transient { index: 0, .. } => f.write_str("RootPOA")?,
            PoaLocator::Transient { index, .. } => write!(f, "POA#{index}")?,
            PoaLocator::Persistent { path } => match path_names(path) {
                Some(names) => {
                    f.write_str("RootPOA")?;
                    for n in names {
                        write!(f, "/{n}")?;
                    }
                }
                None => return escaped(f, self.0),
            },
        }
        f.write_str("<")?;
        match <[u8; 8]>::try_from(k.object_id) {
            // A SYSTEM_ID object id: the ORB's counter.
            Ok(n) => write!(f, "{}", u64::from_be_bytes(n))?,
            Err(_) => escaped(f, k.object_id)?,
        }
        f.write_str(">")
    }
}

/// Printable bytes as they are, others (and `\`) as `\xx`.
fn escaped(f: &mut std::fmt::Formatter<'_>, bytes: &[u8]) -> std::fmt::Result {
    for &b in bytes {
        if b.is_ascii_graphic() && b != b'\\' {
            write!(f, "{}", b as char)?;
        } else {
            write!(f, "\\{b:02x}")?;
        }
    }
    Ok(())
}

/// A LocateRequest answered (`corbina::request` INFO, with the requests at
/// `-ORBtraceLevel 25`): the object key as request spans print it, and the answer.
pub(crate) fn locate_answered(key: Option<&[u8]>, outcome: &crate::poa::LocateOutcome) {
    if !crate::interceptor::spans::wanted() {
        return;
    }
    let status = match outcome {
        crate::poa::LocateOutcome::Here => "OBJECT_HERE",
        crate::poa::LocateOutcome::Unknown => "UNKNOWN_OBJECT",
        crate::poa::LocateOutcome::Forward {
            permanent: false, ..
        } => "OBJECT_FORWARD",
        crate::poa::LocateOutcome::Forward {
            permanent: true, ..
        } => "OBJECT_FORWARD_PERM",
    };
    match key {
        Some(k) => {
            let key = ObjectKey(k);
            tracing::info!(target: crate::interceptor::spans::TARGET, object_key = %key, status,
                "LocateRequest answered");
        }
        // A target given as a profile or a reference this ORB cannot make a key of.
        None => tracing::info!(target: crate::interceptor::spans::TARGET, status,
            "LocateRequest answered (no object key)"),
    }
}

/// A call failed in the ORB (timeouts, closed connections, MessageError, protocol errors).
#[cold]
#[inline(never)]
pub(crate) fn call_failed(e: &crate::Error) {
    tracing::debug!(target: CONNECTION, error = %e, "call failed");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_dumps_have_offset_hex_and_ascii() {
        let msg = b"GIOP\x01\x02\x01\x00\x26\x00\x00\x00\x02\x00\x00\x00ping";
        assert_eq!(
            hex_dump(msg),
            "0000  4749 4f50 0102 0100 2600 0000 0200 0000  GIOP....&.......\n\
             0010  7069 6e67                                ping"
        );
        assert_eq!(hex_dump(&[]), "");
    }

    #[test]
    fn a_dump_is_headed_by_its_giop_header_when_it_starts_with_one() {
        let locate = b"GIOP\x01\x02\x01\x03\x16\x00\x00\x00rest";
        assert_eq!(
            giop_header(locate),
            ": GIOP 1.2 LocateRequest, 22-byte body, little-endian"
        );
        let fragment = b"GIOP\x01\x01\x02\x00\x00\x00\x01\x00";
        assert_eq!(
            giop_header(fragment),
            ": GIOP 1.1 Request, 256-byte body, big-endian, more fragments follow"
        );
        // Not a header (mid-message, too short, a bad type): nothing, never a panic.
        assert_eq!(giop_header(b"\x00\x01GIOP"), "");
        assert_eq!(giop_header(b"GIOP\x01\x02"), "");
        assert_eq!(giop_header(b"GIOP\x01\x02\x00\xff\x00\x00\x00\x00"), "");
    }

    #[test]
    fn object_keys_print_like_omniorb() {
        assert_eq!(ObjectKey(b"Counter").to_string(), "Counter");
        assert_eq!(
            ObjectKey(&[0, b'a', 0xff, b'\\']).to_string(),
            "\\00a\\ff\\5c"
        );
        // Corbina's own keys: the POA's path and the object id.
        use crate::poa::key::{encode_path, persistent_prefix, transient_prefix};
        let mut k = transient_prefix(7, 0, 0);
        k.extend_from_slice(&42u64.to_be_bytes());
        assert_eq!(ObjectKey(&k).to_string(), "RootPOA<42>");
        let mut k = transient_prefix(7, 3, 1);
        k.extend_from_slice(b"user id");
        assert_eq!(ObjectKey(&k).to_string(), "POA#3<user\\20id>");
        let mut k = persistent_prefix(&encode_path(&["names", "contexts"]));
        k.extend_from_slice(b"Counter");
        assert_eq!(ObjectKey(&k).to_string(), "RootPOA/names/contexts<Counter>");
        // A key that only starts like ours prints as bytes.
        assert_eq!(ObjectKey(b"Cb\x11ab").to_string(), "Cb\\11ab");
    }

    #[test]
    fn trace_levels_map_to_filters() {
        assert_eq!(level_directives(0, false), None);
        assert_eq!(level_directives(1, false).unwrap(), "warn");
        assert_eq!(
            level_directives(10, false).unwrap(),
            "warn,corbina::connection=debug"
        );
        assert_eq!(
            level_directives(0, true).unwrap(),
            "off,corbina::request=info"
        );
        assert_eq!(
            level_directives(40, true).unwrap(),
            "warn,corbina::connection=debug,corbina::request=debug,corbina::wire=trace"
        );
    }
}
