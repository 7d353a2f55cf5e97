//! Parsing of `-ORB…` arguments and `CORBINA_…` environment variables into an [`OrbConfig`];
//! the options are documented in [`crate::config`].

use std::ffi::OsString;
use std::time::Duration;

use crate::config::{
    ConfigError, Endpoint, LocalEndpoint, OrbConfig, SslVerifyMode, SyncScope, ThreadModel,
};
use crate::transport::TransportKind;

/// The settings an option writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    InitRef,
    DefaultInitRef,
    ListenEndpoints,
    Endpoint,
    PublishAddress,
    GiopMaxVersion,
    CallTimeout,
    ConnectTimeout,
    MaxMessageSize,
    MaxIncompleteBytes,
    MaxValueNesting,
    FragmentSize,
    ByteOrder,
    MaxStrandsPerRope,
    AsyncCallsPerStrand,
    AmiDispatchThreads,
    MaxConnections,
    IdleTimeout,
    ThreadPool,
    SocketBufferSize,
    ForwardLimit,
    PreferUnix,
    Collocation,
    SocketPermissions,
    OnewaySyncScope,
    OnewayBufferBytes,
    OnewayBufferCount,
    OnewayBufferDelay,
    EndpointNoListen,
    OfferBidir,
    AcceptBidir,
    SslCaFile,
    SslCaPath,
    SslKeyFile,
    SslKeyPassword,
    SslVerifyMode,
    SslAcceptTimeout,
    SslCheckHostName,
    TraceLevel,
    TraceInvocations,
}

/// Every option: its key, its names (canonical first, then aliases) and whether the
/// environment variable takes several values.
const OPTIONS: &[(Key, &[&str], bool)] = &[
    (Key::InitRef, &["InitRef"], true),
    (Key::DefaultInitRef, &["DefaultInitRef"], false),
    (Key::ListenEndpoints, &["ListenEndpoints"], true),
    (Key::Endpoint, &["Endpoint"], true),
    (Key::PublishAddress, &["PublishAddress"], true),
    (
        Key::GiopMaxVersion,
        &["GIOPMaxVersion", "maxGIOPVersion"],
        false,
    ),
    (Key::CallTimeout, &["CallTimeout"], false),
    (Key::ConnectTimeout, &["ConnectTimeout"], false),
    (
        Key::MaxMessageSize,
        &["MaxMessageSize", "giopMaxMsgSize"],
        false,
    ),
    (Key::MaxIncompleteBytes, &["maxIncompleteBytes"], false),
    (Key::MaxValueNesting, &["maxValueNesting"], false),
    (Key::FragmentSize, &["FragmentSize"], false),
    (Key::ByteOrder, &["byteOrder"], false),
    (Key::MaxStrandsPerRope, &["MaxStrandsPerRope"], false),
    (Key::AsyncCallsPerStrand, &["asyncCallsPerStrand"], false),
    (Key::AmiDispatchThreads, &["amiDispatchThreads"], false),
    (Key::MaxConnections, &["MaxConnections"], false),
    (Key::IdleTimeout, &["IdleTimeout"], false),
    (Key::ThreadPool, &["ThreadPool"], false),
    (Key::SocketBufferSize, &["SocketBufferSize"], false),
    (Key::ForwardLimit, &["ForwardLimit"], false),
    (Key::PreferUnix, &["PreferUnix"], false),
    (Key::Collocation, &["Collocation"], false),
    (Key::SocketPermissions, &["SocketPermissions"], false),
    (Key::OnewaySyncScope, &["OnewaySyncScope"], false),
    (Key::OnewayBufferBytes, &["OnewayBufferBytes"], false),
    (Key::OnewayBufferCount, &["OnewayBufferCount"], false),
    (Key::OnewayBufferDelay, &["OnewayBufferDelay"], false),
    (Key::EndpointNoListen, &["endPointNoListen"], true),
    (Key::OfferBidir, &["offerBiDirectionalGIOP"], false),
    (Key::AcceptBidir, &["acceptBiDirectionalGIOP"], false),
    (Key::SslCaFile, &["sslCAFile"], false),
    (Key::SslCaPath, &["sslCAPath"], false),
    (Key::SslKeyFile, &["sslKeyFile"], false),
    (Key::SslKeyPassword, &["sslKeyPassword"], false),
    (Key::SslVerifyMode, &["sslVerifyMode"], false),
    (Key::SslAcceptTimeout, &["sslAcceptTimeOut"], false),
    (Key::SslCheckHostName, &["sslCheckHostName"], false),
    (Key::TraceLevel, &["traceLevel"], false),
    (Key::TraceInvocations, &["traceInvocations"], false),
];

const ENV_PREFIX: &str = "CORBINA_";
/// `CORBINA_…` variables that are not options and are left alone.
const ENV_RESERVED: &[&str] = &["CORBINA_LOG"];

/// Levenshtein distance, ASCII case-insensitive.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let subst = prev[j] + usize::from(ca != cb);
            cur[j + 1] = subst.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The known option name closest to `name` (without `-ORB`/`CORBINA_`), if it is close enough
/// to be a likely typo. Separators (`_`, `-`) in `name` are ignored.
fn closest(name: &str) -> Option<&'static str> {
    let name: String = name.chars().filter(|c| !matches!(c, '_' | '-')).collect();
    OPTIONS
        .iter()
        .flat_map(|(_, names, _)| names.iter().copied())
        .map(|known| (edit_distance(&name, known), known))
        .filter(|&(d, known)| d <= 2.max(name.len().max(known.len()) / 3))
        .min_by_key(|&(d, _)| d)
        .map(|(_, known)| known)
}

fn find_option(name: &str) -> Option<(Key, bool)> {
    OPTIONS
        .iter()
        .find(|(_, names, _)| names.iter().any(|n| n.eq_ignore_ascii_case(name)))
        .map(|&(key, _, repeatable)| (key, repeatable))
}

fn find_env(suffix: &str) -> Option<(Key, bool)> {
    OPTIONS
        .iter()
        .find(|(_, names, _)| names.iter().any(|n| n.to_ascii_uppercase() == suffix))
        .map(|&(key, _, repeatable)| (key, repeatable))
}

/// A decimal number in `0..=max`.
fn number(s: &str, max: u64) -> Result<u64, String> {
    if s.is_empty() {
        return Err("empty value; expected a decimal number".into());
    }
    if let Some(rest) = s.strip_prefix('-') {
        if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
            return Err("must not be negative".into());
        }
    }
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err("not a decimal number".into());
    }
    match s.parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(format!("too large (at most {max})")),
    }
}

fn at_least(s: &str, min: u64, max: u64) -> Result<u64, String> {
    let n = number(s, max)?;
    if n < min {
        return Err(format!("must be at least {min}"));
    }
    Ok(n)
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    match s.get(..prefix.len()) {
        Some(head) if head.eq_ignore_ascii_case(prefix) => Some(&s[prefix.len()..]),
        _ => None,
    }
}

/// Splits `host[:port]`, `[v6][:port]`; the port is `None` without a colon, `Some("")` with an
/// empty one. An unbracketed IPv6 address is refused (it is ambiguous).
fn split_host_port(s: &str) -> Result<(&str, Option<&str>), String> {
    let (host, port) = if let Some(inner) = s.strip_prefix('[') {
        let close = inner
            .find(']')
            .ok_or_else(|| "missing `]` after the IPv6 address".to_string())?;
        let (host, after) = (&inner[..close], &inner[close + 1..]);
        if host.is_empty() {
            return Err("empty IPv6 address in `[]`".into());
        }
        match after.strip_prefix(':') {
            Some(port) => (host, Some(port)),
            None if after.is_empty() => (host, None),
            None => return Err(format!("unexpected `{after}` after `]`")),
        }
    } else {
        let (host, port) = match s.rfind(':') {
            Some(i) => (&s[..i], Some(&s[i + 1..])),
            None => (s, None),
        };
        if host.contains(':') {
            return Err("an IPv6 address must be written in brackets, like `[::1]:2809`".into());
        }
        (host, port)
    };
    if let Some(c) = host
        .chars()
        .find(|c| c.is_whitespace() || matches!(c, '/' | '@' | '[' | ']' | ';' | '='))
    {
        return Err(format!("`{c}` is not allowed in a host name"));
    }
    Ok((host, port))
}

fn port(s: &str) -> Result<u16, String> {
    number(s, u16::MAX.into())
        .map(|p| p as u16)
        .map_err(|e| format!("port: {e}"))
}

/// Strips the `iiop://` or `giop:tcp:` in front of an address; `None` if neither is there.
fn strip_scheme(s: &str) -> Result<Option<&str>, String> {
    if let Some(rest) = strip_prefix_ci(s, "iiop://") {
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains('@') {
            return Err("a GIOP version in the endpoint (`1.2@`) is not supported; \
                        use -ORBGIOPMaxVersion"
                .into());
        }
        if rest.contains('/') {
            return Err("endpoint options after `/` are not supported".into());
        }
        Ok(Some(rest))
    } else if let Some(rest) = strip_prefix_ci(s, "giop:tcp:") {
        Ok(Some(rest))
    } else if strip_prefix_ci(s, "giop:").is_some() {
        Err("the transports are `giop:tcp`, `giop:ssl`, `giop:unix` and `giop:shm`".into())
    } else {
        Ok(None)
    }
}

/// One endpoint, TAO (`iiop://host:port`) or omniORB (`giop:tcp:host:port`) form.
fn parse_endpoint(s: &str) -> Result<Endpoint, String> {
    let rest = strip_scheme(s)?
        .ok_or_else(|| "expected `iiop://host:port` or `giop:tcp:host:port`".to_string())?;
    let (host, p) = split_host_port(rest)?;
    let port = match p {
        None | Some("") => 0,
        Some(p) => port(p)?,
    };
    let host = if host.is_empty() { "0.0.0.0" } else { host };
    Ok(Endpoint {
        host: host.to_string(),
        port,
    })
}

/// A listen endpoint: TCP, TLS, or local (Unix-domain socket, shared memory).
enum AnyEndpoint {
    Tcp(Endpoint),
    Ssl(Endpoint),
    Local(LocalEndpoint),
}

/// The rendezvous socket path of the shared-memory endpoint `shm:NAME`: NAME itself when it is
/// an absolute path, else `corbina-shm-NAME.sock` in the temporary directory.
pub(crate) fn shm_name_path(name: &str) -> std::path::PathBuf {
    if name.starts_with('/') {
        name.into()
    } else {
        std::env::temp_dir().join(format!("corbina-shm-{name}.sock"))
    }
}

/// `giop:ssl:host:port` (or `ssl:host:port`), `unix:/path`, `shm:NAME`, `uiop:///path`, `shmiop:///path` (absolute paths),
/// `giop:unix:/path`, `giop:shm:/path` (empty: a path is made up), or a TCP endpoint.
fn parse_any_endpoint(s: &str) -> Result<AnyEndpoint, String> {
    // omniORB's `giop:ssl:host:port`, or `ssl:host:port` for short.
    if let Some(rest) = strip_prefix_ci(s, "giop:ssl:").or_else(|| strip_prefix_ci(s, "ssl:")) {
        return parse_endpoint(&format!("giop:tcp:{rest}")).map(AnyEndpoint::Ssl);
    }
    if let Some(name) = strip_prefix_ci(s, "shm:") {
        if name.is_empty() || name.contains('/') && !name.starts_with('/') {
            return Err(
                "expected a name or an absolute path after `shm:`, like `shm:bench`".into(),
            );
        }
        return Ok(AnyEndpoint::Local(LocalEndpoint {
            kind: TransportKind::Shm,
            path: shm_name_path(name),
        }));
    }
    let local = [
        ("unix:", TransportKind::Unix, false),
        ("uiop://", TransportKind::Unix, false),
        ("shmiop://", TransportKind::Shm, false),
        ("giop:unix:", TransportKind::Unix, true),
        ("giop:shm:", TransportKind::Shm, true),
    ];
    for (scheme, kind, may_be_empty) in local {
        if let Some(path) = strip_prefix_ci(s, scheme) {
            if !(path.starts_with('/') || path.is_empty() && may_be_empty) {
                return Err(format!(
                    "expected an absolute socket path after `{scheme}`, like `{scheme}/tmp/orb.sock`"
                ));
            }
            return Ok(AnyEndpoint::Local(LocalEndpoint {
                kind,
                path: path.into(),
            }));
        }
    }
    parse_endpoint(s).map(AnyEndpoint::Tcp)
}

/// `host[:port]` (an `iiop://` or `giop:tcp:` in front is accepted too).
fn parse_publish(s: &str) -> Result<(String, Option<u16>), String> {
    let rest = strip_scheme(s)?.unwrap_or(s);
    let (host, p) = split_host_port(rest)?;
    if host.is_empty() {
        return Err("empty host".into());
    }
    let port = match p {
        None | Some("") => None,
        Some(p) => match port(p)? {
            0 => {
                return Err(
                    "port 0 cannot be published; leave the port out to publish the bound one"
                        .into(),
                )
            }
            p => Some(p),
        },
    };
    Ok((host.to_string(), port))
}

/// A boolean option: `0` or `1` (omniORB's spelling), or `false`/`true`.
fn flag(value: &str) -> Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err("expected `0` or `1`".into()),
    }
}

/// A file name.
fn path_value(value: &str) -> Result<std::path::PathBuf, String> {
    if value.is_empty() {
        return Err("empty file name".into());
    }
    Ok(value.into())
}

/// omniORB's `-ORBsslVerifyMode`: `none`, or a comma list of `peer`, `fail`, `once`.
fn verify_mode(value: &str) -> Result<SslVerifyMode, String> {
    if value.eq_ignore_ascii_case("none") {
        return Ok(SslVerifyMode::NONE);
    }
    let mut mode = SslVerifyMode::NONE;
    for word in value.split(',') {
        match word.trim().to_ascii_lowercase().as_str() {
            "peer" => mode.peer = true,
            "fail" => mode.fail = true,
            "once" => mode.once = true,
            other => {
                return Err(format!(
                    "`{other}`: expected `none` or a comma list of `peer`, `fail`, `once`"
                ))
            }
        }
    }
    Ok(mode)
}

/// Which list-valued settings the current source has already replaced.
#[derive(Default)]
struct Replaced {
    endpoints: bool,
    publish_addresses: bool,
}

impl OrbConfig {
    /// Applies one value of one option; the error is the reason the value is bad.
    fn set(&mut self, key: Key, value: &str, replaced: &mut Replaced) -> Result<(), String> {
        match key {
            Key::InitRef => {
                let (name, url) = value
                    .split_once('=')
                    .ok_or_else(|| "expected `Name=URL`".to_string())?;
                if name.is_empty() {
                    return Err("empty name in `Name=URL`".into());
                }
                if url.is_empty() {
                    return Err(format!("empty URL for `{name}`"));
                }
                self.init_refs.insert(name.to_string(), url.to_string());
            }
            Key::DefaultInitRef => {
                if value.is_empty() {
                    return Err("empty URL".into());
                }
                self.default_init_ref = Some(value.to_string());
            }
            Key::ListenEndpoints | Key::Endpoint => {
                let parsed = value
                    .split(';')
                    .filter(|s| !s.is_empty())
                    .map(parse_any_endpoint)
                    .collect::<Result<Vec<_>, _>>()?;
                if parsed.is_empty() {
                    return Err("no endpoint given".into());
                }
                if !std::mem::replace(&mut replaced.endpoints, true) {
                    self.endpoints.clear();
                    self.ssl_endpoints.clear();
                    self.local_endpoints.clear();
                }
                for e in parsed {
                    match e {
                        AnyEndpoint::Tcp(e) => self.endpoints.push(e),
                        AnyEndpoint::Ssl(e) => self.ssl_endpoints.push(e),
                        AnyEndpoint::Local(e) => self.local_endpoints.push(e),
                    }
                }
            }
            Key::PublishAddress => {
                let address = parse_publish(value)?;
                if !std::mem::replace(&mut replaced.publish_addresses, true) {
                    self.publish_addresses.clear();
                }
                self.publish_addresses.push(address);
            }
            Key::GiopMaxVersion => {
                self.giop_max_minor = match value {
                    "1.0" => 0,
                    "1.1" => 1,
                    "1.2" => 2,
                    _ => return Err("the GIOP versions spoken are 1.0, 1.1 and 1.2".into()),
                }
            }
            Key::CallTimeout => {
                self.call_timeout = match number(value, u64::MAX)? {
                    0 => None,
                    ms => Some(Duration::from_millis(ms)),
                }
            }
            Key::ConnectTimeout => {
                self.connect_timeout = Duration::from_millis(at_least(value, 1, u64::MAX)?)
            }
            Key::MaxMessageSize => {
                self.max_message_size = at_least(value, 1, u32::MAX.into())? as u32
            }
            Key::MaxValueNesting => {
                self.max_value_nesting = Some(at_least(value, 1, u32::MAX.into())? as u32)
            }
            Key::MaxIncompleteBytes => {
                // At least one large read's worth: less would refuse every large message.
                self.max_incomplete_bytes = at_least(value, 64 << 10, usize::MAX as u64)? as usize
            }
            Key::FragmentSize => {
                self.fragment_size = match number(value, u32::MAX.into())? {
                    0 => None,
                    n if n < 64 => return Err("must be at least 64 (or 0 for never)".into()),
                    n if n % 8 != 0 => return Err("must be a multiple of 8".into()),
                    n => Some(n as u32),
                }
            }
            Key::ByteOrder => {
                self.byte_order = match value.to_ascii_lowercase().as_str() {
                    "big" => crate::cdr::ByteOrder::Big,
                    "little" => crate::cdr::ByteOrder::Little,
                    "native" => crate::cdr::ByteOrder::NATIVE,
                    _ => return Err("expected `big`, `little` or `native`".into()),
                }
            }
            Key::MaxStrandsPerRope => {
                self.max_strands_per_rope = at_least(value, 1, usize::MAX as u64)? as usize
            }
            Key::AsyncCallsPerStrand => {
                self.async_calls_per_strand = number(value, usize::MAX as u64)? as usize
            }
            Key::AmiDispatchThreads => {
                // Beyond a few hundred threads a dispatcher only adds contention.
                self.ami_dispatch_threads = at_least(value, 1, 1024)? as usize
            }
            Key::MaxConnections => {
                self.max_server_connections = at_least(value, 1, usize::MAX as u64)? as usize
            }
            Key::IdleTimeout => {
                self.idle_timeout = match number(value, u64::MAX)? {
                    0 => None,
                    s => Some(Duration::from_secs(s)),
                }
            }
            Key::ThreadPool => {
                self.thread_model = match number(value, usize::MAX as u64)? {
                    0 => ThreadModel::ThreadPerConnection,
                    n => ThreadModel::Pool(n as usize),
                }
            }
            Key::SocketBufferSize => {
                // setsockopt takes a C int.
                self.socket_buffer_size = match number(value, i32::MAX as u64)? {
                    0 => None,
                    n => Some(n as usize),
                }
            }
            Key::ForwardLimit => self.forward_limit = number(value, u32::MAX.into())? as u32,
            Key::SocketPermissions => {
                let digits = value.strip_prefix("0o").unwrap_or(value);
                let mode = u32::from_str_radix(digits, 8)
                    .ok()
                    .filter(|m| *m <= 0o777 && !digits.is_empty())
                    .ok_or("expected octal permission bits, like 0660")?;
                self.socket_permissions = Some(mode);
            }
            Key::PreferUnix => {
                self.prefer_local = match value {
                    "1" => true,
                    "0" => false,
                    _ => return Err("expected `0` or `1`".into()),
                }
            }
            Key::Collocation => {
                self.direct_collocation = match value.to_ascii_lowercase().as_str() {
                    "direct" => true,
                    "iiop" => false,
                    _ => return Err("expected `direct` or `iiop`".into()),
                }
            }
            Key::OnewaySyncScope => {
                self.oneway_sync_scope = match value.to_ascii_lowercase().as_str() {
                    "none" => SyncScope::None,
                    "transport" | "with_transport" => SyncScope::WithTransport,
                    _ => return Err("expected `none` or `transport`".into()),
                }
            }
            Key::OnewayBufferBytes => {
                self.oneway_buffering.max_bytes = at_least(value, 1, usize::MAX as u64)? as usize
            }
            Key::OnewayBufferCount => {
                self.oneway_buffering.max_count = at_least(value, 1, usize::MAX as u64)? as usize
            }
            Key::EndpointNoListen => match parse_any_endpoint(value)? {
                AnyEndpoint::Tcp(e) => self.endpoints_no_listen.push(e),
                AnyEndpoint::Local(_) | AnyEndpoint::Ssl(_) => {
                    return Err("only TCP endpoints can be published without listening".into())
                }
            },
            Key::OfferBidir => self.offer_bidir = flag(value)?,
            Key::AcceptBidir => self.accept_bidir = flag(value)?,
            Key::SslCaFile => self.ssl.ca_file = Some(path_value(value)?),
            Key::SslCaPath => self.ssl.ca_path = Some(path_value(value)?),
            Key::SslKeyFile => self.ssl.key_file = Some(path_value(value)?),
            Key::SslKeyPassword => self.ssl.key_password = Some(value.to_string()),
            Key::SslVerifyMode => self.ssl.verify_mode = verify_mode(value)?,
            Key::SslAcceptTimeout => {
                self.ssl.accept_timeout = Duration::from_millis(at_least(value, 1, u64::MAX)?)
            }
            Key::SslCheckHostName => self.ssl.check_host_name = flag(value)?,
            Key::TraceLevel => self.trace_level = number(value, u32::MAX as u64)? as u32,
            Key::TraceInvocations => self.trace_invocations = flag(value)?,
            Key::OnewayBufferDelay => {
                self.oneway_buffering.max_delay =
                    Duration::from_micros(at_least(value, 1, u64::MAX)?)
            }
        }
        Ok(())
    }

    /// Applies the `-ORB<Name> value` and `-ORB<Name>=value` arguments in `args` and returns the
    /// others, in order (the program name too, if `args` starts with it).
    ///
    /// Option names are matched case-insensitively after `-ORB`. Later options win over earlier
    /// ones and over what `self` held, except that InitRefs are merged by name and repeated
    /// list options (endpoints, publish addresses) add up. On error `self` is left unchanged.
    pub fn apply_args<I: IntoIterator<Item = String>>(
        &mut self,
        args: I,
    ) -> Result<Vec<String>, ConfigError> {
        let mut next = self.clone();
        let mut replaced = Replaced::default();
        let mut rest = Vec::new();
        let mut args = args.into_iter().peekable();
        while let Some(arg) = args.next() {
            let Some(spec) = arg.strip_prefix("-ORB") else {
                rest.push(arg);
                continue;
            };
            let (name, inline) = match spec.split_once('=') {
                Some((name, value)) => (name, Some(value.to_string())),
                None => (spec, None),
            };
            let option = format!("-ORB{name}");
            let Some((key, _)) = find_option(name) else {
                return Err(ConfigError::UnknownOption {
                    suggestion: closest(name).map(|n| format!("-ORB{n}")),
                    option,
                });
            };
            let value = match inline {
                Some(value) => value,
                None => match args.next_if(|v| !v.starts_with("-ORB")) {
                    Some(value) => value,
                    None => return Err(ConfigError::MissingValue { option }),
                },
            };
            if let Err(reason) = next.set(key, &value, &mut replaced) {
                return Err(ConfigError::BadValue {
                    option,
                    value,
                    reason,
                });
            }
        }
        *self = next;
        Ok(rest)
    }

    /// Applies the `CORBINA_<NAME>` variables among `vars` (other variables are ignored).
    ///
    /// `<NAME>` is an option name upper-cased (`CORBINA_INITREF`, `CORBINA_CALLTIMEOUT`, …).
    /// Repeatable options take several values separated by whitespace or `;`; other values are
    /// trimmed; an empty value counts as unset. Unknown `CORBINA_…` variables are errors,
    /// except `CORBINA_LOG`, an `EnvFilter` for the log ([`OrbConfig::log_filter`]); without
    /// it, `RUST_LOG` is that filter.
    /// Variables are applied in name order. On error `self` is left unchanged.
    pub fn apply_env<I: IntoIterator<Item = (String, String)>>(
        &mut self,
        vars: I,
    ) -> Result<(), ConfigError> {
        let (mut log_filter, mut rust_log) = (None, None);
        let mut vars: Vec<(String, String)> = vars
            .into_iter()
            .filter(|(var, value)| {
                let value = value.trim();
                if var == "CORBINA_LOG" && !value.is_empty() {
                    log_filter = Some(value.to_string());
                }
                if var == "RUST_LOG" && !value.is_empty() {
                    rust_log = Some(value.to_string());
                }
                var.starts_with(ENV_PREFIX) && !ENV_RESERVED.contains(&var.as_str())
            })
            .collect();
        vars.sort();
        let mut next = self.clone();
        // `RUST_LOG`, as every `tracing`/`env_logger` program reads it; `CORBINA_LOG` wins.
        if let Some(filter) = log_filter.or(rust_log) {
            next.log_filter = Some(filter);
        }
        let mut replaced = Replaced::default();
        for (var, value) in vars {
            let suffix = &var[ENV_PREFIX.len()..];
            let Some((key, repeatable)) = find_env(suffix) else {
                return Err(ConfigError::UnknownEnv {
                    suggestion: closest(suffix)
                        .map(|n| format!("{ENV_PREFIX}{}", n.to_ascii_uppercase())),
                    var,
                });
            };
            let values: Vec<&str> = if repeatable {
                value
                    .split(|c: char| c.is_whitespace() || c == ';')
                    .filter(|v| !v.is_empty())
                    .collect()
            } else {
                Some(value.trim())
                    .filter(|v| !v.is_empty())
                    .into_iter()
                    .collect()
            };
            for v in values {
                if let Err(reason) = next.set(key, v, &mut replaced) {
                    return Err(ConfigError::BadEnv {
                        var,
                        value: v.to_string(),
                        reason,
                    });
                }
            }
        }
        *self = next;
        Ok(())
    }

    /// The configuration `ORB_init` uses: the defaults, then the process environment
    /// ([`apply_env`](Self::apply_env)), then `args` ([`apply_args`](Self::apply_args)), so
    /// arguments win. Returns it with the arguments that are not ORB options.
    ///
    /// ```no_run
    /// let (config, args) = corbina::config::OrbConfig::from_args_and_env(std::env::args())?;
    /// # Ok::<(), corbina::config::ConfigError>(())
    /// ```
    pub fn from_args_and_env<I: IntoIterator<Item = String>>(
        args: I,
    ) -> Result<(OrbConfig, Vec<String>), ConfigError> {
        let mut config = OrbConfig::default();
        config.apply_env(env_strings(std::env::vars_os())?)?;
        let rest = config.apply_args(args)?;
        Ok((config, rest))
    }
}

/// The `CORBINA_…` variables of an OS environment as strings; other variables are dropped
/// (they may well not be Unicode), a `CORBINA_…` one that is not Unicode is an error.
fn env_strings<I: IntoIterator<Item = (OsString, OsString)>>(
    vars: I,
) -> Result<Vec<(String, String)>, ConfigError> {
    let mut out = Vec::new();
    for (var, value) in vars {
        let var = var.to_string_lossy();
        if !var.starts_with(ENV_PREFIX) {
            continue;
        }
        let var = var.into_owned();
        match value.into_string() {
            Ok(value) => out.push((var, value)),
            Err(value) => {
                return Err(ConfigError::BadEnv {
                    var,
                    value: value.to_string_lossy().into_owned(),
                    reason: "not valid UTF-8".into(),
                })
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn parse(v: &[&str]) -> Result<(OrbConfig, Vec<String>), ConfigError> {
        let mut config = OrbConfig::default();
        let rest = config.apply_args(strings(v))?;
        Ok((config, rest))
    }

    /// Parses `-ORB<name> value` and `-ORB<name>=value`, checks both give the same result and
    /// consume everything but the program name, and returns the configuration.
    fn both(name: &str, value: &str) -> OrbConfig {
        let option = format!("-ORB{name}");
        let (spaced, rest) = parse(&["prog", &option, value]).unwrap();
        assert_eq!(rest, ["prog"]);
        let (joined, rest) = parse(&["prog", &format!("{option}={value}")]).unwrap();
        assert_eq!(rest, ["prog"]);
        assert_eq!(spaced, joined, "{option} {value}");
        spaced
    }

    /// The reason of a `BadValue` for `-ORB<name> value`, checked to be the same in both forms.
    fn bad(name: &str, value: &str) -> String {
        let option = format!("-ORB{name}");
        let spaced = parse(&[&option, value]).unwrap_err();
        let joined = parse(&[&format!("{option}={value}")]).unwrap_err();
        assert_eq!(spaced, joined);
        match spaced {
            ConfigError::BadValue {
                option: o,
                value: v,
                reason,
            } => {
                assert_eq!((o.as_str(), v.as_str()), (option.as_str(), value));
                reason
            }
            e => panic!("{option} {value}: expected BadValue, got {e:?}"),
        }
    }

    fn env(vars: &[(&str, &str)]) -> Result<OrbConfig, ConfigError> {
        let mut config = OrbConfig::default();
        config.apply_env(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())))?;
        Ok(config)
    }

    fn ep(host: &str, port: u16) -> Endpoint {
        Endpoint {
            host: host.into(),
            port,
        }
    }

    #[test]
    fn defaults_are_the_documented_ones() {
        let c = OrbConfig::default();
        assert!(c.init_refs.is_empty() && c.default_init_ref.is_none());
        assert!(c.endpoints.is_empty() && c.publish_addresses.is_empty());
        assert_eq!(c.giop_max_minor, 2);
        assert_eq!(c.call_timeout, None);
        assert_eq!(c.connect_timeout, Duration::from_secs(10));
        assert_eq!(c.max_message_size, 256 << 20);
        assert_eq!(c.fragment_size, None);
        assert_eq!(c.max_strands_per_rope, 16);
        assert_eq!(c.async_calls_per_strand, 64);
        assert_eq!(c.ami_dispatch_threads, 4);
        assert_eq!(c.max_server_connections, 4096);
        assert_eq!(c.idle_timeout, Some(Duration::from_secs(120)));
        assert_eq!(c.thread_model, ThreadModel::ThreadPerConnection);
        assert_eq!(c.socket_buffer_size, None);
        assert_eq!(c.forward_limit, 8);
    }

    #[test]
    fn no_arguments_change_nothing() {
        assert_eq!(parse(&[]).unwrap(), (OrbConfig::default(), vec![]));
        let (c, rest) = parse(&["prog"]).unwrap();
        assert_eq!((c, rest), (OrbConfig::default(), strings(&["prog"])));
    }

    #[test]
    fn init_ref() {
        let c = both("InitRef", "NameService=corbaloc::host:2809/NameService");
        assert_eq!(
            c.init_refs["NameService"],
            "corbaloc::host:2809/NameService"
        );
        // Only the first '=' separates; names may hold anything but '='.
        let c = both("InitRef", "My Service.v2/x=corbaname::h#a=b");
        assert_eq!(c.init_refs["My Service.v2/x"], "corbaname::h#a=b");
        // Repeatable; a later one for the same name wins.
        let (c, _) = parse(&[
            "-ORBInitRef",
            "A=IOR:00",
            "-ORBInitRef=B=IOR:01",
            "-ORBInitRef",
            "A=IOR:02",
        ])
        .unwrap();
        assert_eq!(c.init_refs.len(), 2);
        assert_eq!(
            (&*c.init_refs["A"], &*c.init_refs["B"]),
            ("IOR:02", "IOR:01")
        );
    }

    #[test]
    fn init_ref_bad() {
        assert_eq!(
            bad("InitRef", "NameService="),
            "empty URL for `NameService`"
        );
        assert_eq!(bad("InitRef", "=corbaloc::h/X"), "empty name in `Name=URL`");
        assert_eq!(bad("InitRef", "NameService"), "expected `Name=URL`");
        assert_eq!(bad("InitRef", ""), "expected `Name=URL`");
    }

    #[test]
    fn default_init_ref() {
        let c = both("DefaultInitRef", "corbaloc::h:2809");
        assert_eq!(c.default_init_ref.as_deref(), Some("corbaloc::h:2809"));
        assert_eq!(bad("DefaultInitRef", ""), "empty URL");
    }

    #[test]
    fn listen_endpoints() {
        let c = both("ListenEndpoints", "iiop://example.com:2809");
        assert_eq!(c.endpoints, [ep("example.com", 2809)]);
        assert_eq!(both("ListenEndpoints", "iiop://h:").endpoints, [ep("h", 0)]);
        assert_eq!(both("ListenEndpoints", "iiop://h").endpoints, [ep("h", 0)]);
        assert_eq!(
            both("ListenEndpoints", "iiop://h:1/").endpoints,
            [ep("h", 1)]
        );
        assert_eq!(
            both("ListenEndpoints", "IIOP://:7").endpoints,
            [ep("0.0.0.0", 7)]
        );
        assert_eq!(
            both("ListenEndpoints", "iiop://[::1]:2809").endpoints,
            [ep("::1", 2809)]
        );
        assert_eq!(
            both("ListenEndpoints", "iiop://[::]:").endpoints,
            [ep("::", 0)]
        );
        let c = both("ListenEndpoints", "iiop://a:1;iiop://[::1]:2;giop:tcp::3;");
        assert_eq!(c.endpoints, [ep("a", 1), ep("::1", 2), ep("0.0.0.0", 3)]);
    }

    #[test]
    fn endpoint_omniorb_form() {
        let c = both("Endpoint", "giop:tcp:example.com:2809");
        assert_eq!(c.endpoints, [ep("example.com", 2809)]);
        assert_eq!(
            both("Endpoint", "giop:tcp::2809").endpoints,
            [ep("0.0.0.0", 2809)]
        );
        assert_eq!(both("Endpoint", "giop:tcp::").endpoints, [ep("0.0.0.0", 0)]);
        assert_eq!(
            both("Endpoint", "giop:tcp:[::1]:0").endpoints,
            [ep("::1", 0)]
        );
        assert_eq!(
            both("Endpoint", "GIOP:TCP:127.0.0.1:").endpoints,
            [ep("127.0.0.1", 0)]
        );
        assert_eq!(
            both("EndPoint", "giop:tcp:h:65535").endpoints,
            [ep("h", 65535)]
        );
        // The TAO form is accepted too.
        assert_eq!(both("Endpoint", "iiop://h:5").endpoints, [ep("h", 5)]);
    }

    #[test]
    fn local_endpoints() {
        let local = |kind, path: &str| LocalEndpoint {
            kind,
            path: path.into(),
        };
        let c = both(
            "ListenEndpoints",
            "uiop:///tmp/a.sock;shmiop:///tmp/b;iiop://h:1",
        );
        assert_eq!(
            c.local_endpoints,
            [
                local(TransportKind::Unix, "/tmp/a.sock"),
                local(TransportKind::Shm, "/tmp/b")
            ]
        );
        assert_eq!(c.endpoints, [ep("h", 1)]);
        assert_eq!(
            both("SocketPermissions", "0660").socket_permissions,
            Some(0o660)
        );
        assert_eq!(
            both("SocketPermissions", "600").socket_permissions,
            Some(0o600)
        );
        assert!(bad("SocketPermissions", "0999").contains("octal"));
        assert!(bad("SocketPermissions", "01777").contains("octal"));
        // The short forms the transports issue names: `unix:/path` and `shm:NAME`.
        let c = both(
            "ListenEndpoints",
            "unix:/tmp/u.sock;shm:bench;shm:/tmp/s.sock",
        );
        assert_eq!(
            c.local_endpoints,
            [
                local(TransportKind::Unix, "/tmp/u.sock"),
                LocalEndpoint {
                    kind: TransportKind::Shm,
                    path: shm_name_path("bench"),
                },
                local(TransportKind::Shm, "/tmp/s.sock"),
            ]
        );
        assert!(shm_name_path("bench").ends_with("corbina-shm-bench.sock"));
        assert!(bad("ListenEndpoints", "shm:").contains("after `shm:`"));
        assert!(bad("ListenEndpoints", "unix:rel/x").contains("absolute socket path"));
        let c = both("Endpoint", "giop:unix:/tmp/dir/sock");
        assert_eq!(
            c.local_endpoints,
            [local(TransportKind::Unix, "/tmp/dir/sock")]
        );
        assert!(c.endpoints.is_empty());
        assert_eq!(
            both("Endpoint", "giop:unix:").local_endpoints,
            [local(TransportKind::Unix, "")]
        );
        assert_eq!(
            both("Endpoint", "GIOP:SHM:/x").local_endpoints,
            [local(TransportKind::Shm, "/x")]
        );
        // A later source replaces TCP and local endpoints together.
        let (c, _) = parse(&[
            "-ORBEndpoint",
            "giop:unix:/a",
            "-ORBEndpoint",
            "giop:tcp::1",
        ])
        .unwrap();
        assert_eq!(c.local_endpoints.len(), 1);
        assert_eq!(c.endpoints.len(), 1);
        let mut c2 = c.clone();
        c2.apply_env([("CORBINA_ENDPOINT".to_string(), "giop:tcp::2".to_string())])
            .unwrap();
        assert!(c2.local_endpoints.is_empty());
    }

    #[test]
    fn prefer_unix() {
        assert!(OrbConfig::default().prefer_local);
        assert!(!both("PreferUnix", "0").prefer_local);
        assert!(both("PreferUnix", "1").prefer_local);
        assert_eq!(bad("PreferUnix", "yes"), "expected `0` or `1`");
    }

    #[test]
    fn bidirectional_giop_with_omniorbs_option_names() {
        let d = OrbConfig::default();
        assert!(!d.offer_bidir && !d.accept_bidir && d.endpoints_no_listen.is_empty());
        assert!(both("offerBiDirectionalGIOP", "1").offer_bidir);
        assert!(!both("offerBiDirectionalGIOP", "0").offer_bidir);
        assert!(both("acceptBiDirectionalGIOP", "1").accept_bidir);
        assert!(both("ACCEPTBIDIRECTIONALGIOP", "true").accept_bidir);
        assert_eq!(bad("offerBiDirectionalGIOP", "yes"), "expected `0` or `1`");
        let c = both("endPointNoListen", "giop:tcp:192.0.2.1:9");
        assert_eq!(
            c.endpoints_no_listen,
            [Endpoint {
                host: "192.0.2.1".into(),
                port: 9
            }]
        );
        assert!(c.endpoints.is_empty());
        assert!(bad("endPointNoListen", "giop:unix:/tmp/x").contains("only TCP"));
    }

    #[test]
    fn collocation() {
        assert!(OrbConfig::default().direct_collocation);
        assert!(!both("Collocation", "iiop").direct_collocation);
        assert!(both("Collocation", "Direct").direct_collocation);
        assert_eq!(
            bad("Collocation", "thru_poa"),
            "expected `direct` or `iiop`"
        );
    }

    #[test]
    fn oneway_buffering() {
        use crate::config::BufferingConstraint;
        let c = OrbConfig::default();
        assert_eq!(c.oneway_sync_scope, SyncScope::WithTransport);
        assert_eq!(c.oneway_buffering_bounds(), None);
        assert_eq!(
            both("OnewaySyncScope", "none").oneway_buffering_bounds(),
            Some(BufferingConstraint::default())
        );
        assert_eq!(
            both("onewaySyncScope", "Transport").oneway_sync_scope,
            SyncScope::WithTransport
        );
        assert_eq!(
            bad("OnewaySyncScope", "server"),
            "expected `none` or `transport`"
        );
        let (c, _) = parse(&[
            "-ORBOnewaySyncScope=none",
            "-ORBOnewayBufferBytes",
            "65536",
            "-ORBOnewayBufferCount=32",
            "-ORBOnewayBufferDelay",
            "250",
        ])
        .unwrap();
        assert_eq!(
            c.oneway_buffering_bounds(),
            Some(BufferingConstraint {
                max_bytes: 65536,
                max_count: 32,
                max_delay: Duration::from_micros(250),
            })
        );
        for name in [
            "OnewayBufferBytes",
            "OnewayBufferCount",
            "OnewayBufferDelay",
        ] {
            assert_eq!(bad(name, "0"), "must be at least 1");
            assert_eq!(bad(name, "-1"), "must not be negative");
        }
        let c = env(&[
            ("CORBINA_ONEWAYSYNCSCOPE", "none"),
            ("CORBINA_ONEWAYBUFFERCOUNT", "8"),
        ])
        .unwrap();
        assert_eq!(c.oneway_sync_scope, SyncScope::None);
        assert_eq!(c.oneway_buffering.max_count, 8);
    }

    #[test]
    fn endpoints_accumulate_in_order() {
        let (c, _) = parse(&[
            "-ORBEndpoint",
            "giop:tcp:a:1",
            "-ORBListenEndpoints=iiop://b:2;iiop://c:3",
            "-ORBendPoint",
            "giop:tcp::4",
        ])
        .unwrap();
        assert_eq!(
            c.endpoints,
            [ep("a", 1), ep("b", 2), ep("c", 3), ep("0.0.0.0", 4)]
        );
    }

    #[test]
    fn ssl_endpoints_and_options_use_omniorb_names() {
        let c = both("Endpoint", "giop:ssl::2810");
        assert_eq!(c.ssl_endpoints, [ep("0.0.0.0", 2810)]);
        assert!(c.endpoints.is_empty());
        let c = both("endPoint", "giop:ssl:[::1]:");
        assert_eq!(c.ssl_endpoints, [ep("::1", 0)]);
        let c = both("ListenEndpoints", "giop:tcp:h:1;ssl:h:2");
        assert_eq!(
            (c.endpoints.clone(), c.ssl_endpoints),
            (vec![ep("h", 1)], vec![ep("h", 2)])
        );
        let (c, rest) = parse(&[
            "prog",
            "-ORBsslCAFile",
            "/etc/ca.pem",
            "-ORBsslkeyfile=/etc/key.pem",
            "-ORBsslCAPath",
            "/etc/ssl/ca.d",
            "-ORBsslKeyPassword",
            "pw",
            "-ORBsslVerifyMode",
            "peer,fail,once",
            "-ORBsslAcceptTimeOut",
            "2500",
            "-ORBsslCheckHostName",
            "0",
        ])
        .unwrap();
        assert_eq!(rest, ["prog"]);
        assert_eq!(
            c.ssl.ca_file.as_deref(),
            Some(std::path::Path::new("/etc/ca.pem"))
        );
        assert_eq!(
            c.ssl.key_file.as_deref(),
            Some(std::path::Path::new("/etc/key.pem"))
        );
        assert_eq!(
            c.ssl.ca_path.as_deref(),
            Some(std::path::Path::new("/etc/ssl/ca.d"))
        );
        assert_eq!(c.ssl.key_password.as_deref(), Some("pw"));
        assert_eq!(
            c.ssl.verify_mode,
            SslVerifyMode {
                peer: true,
                fail: true,
                once: true
            }
        );
        assert_eq!(c.ssl.accept_timeout, Duration::from_millis(2500));
        assert!(!c.ssl.check_host_name);
        assert_eq!(
            both("sslVerifyMode", "none").ssl.verify_mode,
            SslVerifyMode::NONE
        );
        assert_eq!(
            both("sslVerifyMode", "peer").ssl.verify_mode,
            SslVerifyMode::PEER
        );
        assert!(bad("sslVerifyMode", "peer,always").contains("`always`"));
        assert_eq!(bad("sslAcceptTimeOut", "0"), "must be at least 1");
        assert_eq!(bad("sslCAFile", ""), "empty file name");
        let c = env(&[
            ("CORBINA_SSLCAFILE", "/ca.pem"),
            ("CORBINA_SSLVERIFYMODE", "peer,fail"),
            ("CORBINA_ENDPOINT", "giop:ssl:127.0.0.1:0"),
        ])
        .unwrap();
        assert_eq!(c.ssl.verify_mode, SslVerifyMode::PEER_FAIL);
        assert_eq!(c.ssl_endpoints, [ep("127.0.0.1", 0)]);
        assert!(bad("endPointNoListen", "giop:ssl:h:1").contains("only TCP"));
    }

    #[test]
    fn endpoint_bad() {
        let shape = "expected `iiop://host:port` or `giop:tcp:host:port`";
        assert_eq!(bad("Endpoint", "host:2809"), shape);
        assert_eq!(bad("Endpoint", "tcp:host:2809"), shape);
        assert_eq!(
            bad("Endpoint", "giop:udp:h:1"),
            "the transports are `giop:tcp`, `giop:ssl`, `giop:unix` and `giop:shm`"
        );
        assert_eq!(
            bad("Endpoint", "giop:ssl:h:99999"),
            "port: too large (at most 65535)"
        );
        assert!(bad("Endpoint", "giop:unix:tmp/x").contains("absolute socket path"));
        assert!(bad("ListenEndpoints", "uiop://").contains("absolute socket path"));
        assert!(bad("ListenEndpoints", "shmiop://rel").contains("absolute socket path"));
        assert_eq!(
            bad("Endpoint", "giop:tcp:h:65536"),
            "port: too large (at most 65535)"
        );
        assert_eq!(
            bad("Endpoint", "giop:tcp:h:-1"),
            "port: must not be negative"
        );
        assert_eq!(
            bad("Endpoint", "giop:tcp:h:http"),
            "port: not a decimal number"
        );
        assert!(bad("Endpoint", "giop:tcp:::1:2809").contains("brackets"));
        assert!(bad("Endpoint", "giop:tcp:[::1:2809").contains("missing `]`"));
        assert!(bad("Endpoint", "giop:tcp:[::1]x").contains("after `]`"));
        assert!(bad("Endpoint", "giop:tcp:[]:1").contains("empty IPv6"));
        assert!(bad("Endpoint", "giop:tcp:a b:1").contains("not allowed in a host name"));
        assert!(bad("ListenEndpoints", "iiop://1.2@h:1").contains("-ORBGIOPMaxVersion"));
        assert!(bad("ListenEndpoints", "iiop://h:1/portspan=2").contains("not supported"));
        assert_eq!(bad("ListenEndpoints", ";"), "no endpoint given");
        assert_eq!(bad("ListenEndpoints", ""), "no endpoint given");
        // One bad endpoint in a list rejects the option.
        assert_eq!(
            bad("ListenEndpoints", "iiop://a:1;iiop://b:99999"),
            "port: too large (at most 65535)"
        );
    }

    #[test]
    fn publish_address() {
        let c = both("PublishAddress", "gw.example.com:2809");
        assert_eq!(
            c.publish_addresses,
            [("gw.example.com".to_string(), Some(2809))]
        );
        let c = both("PublishAddress", "10.0.0.1");
        assert_eq!(c.publish_addresses, [("10.0.0.1".to_string(), None)]);
        let c = both("PublishAddress", "[2001:db8::1]:9");
        assert_eq!(c.publish_addresses, [("2001:db8::1".to_string(), Some(9))]);
        let c = both("PublishAddress", "giop:tcp:h:5");
        assert_eq!(c.publish_addresses, [("h".to_string(), Some(5))]);
        let (c, _) = parse(&["-ORBPublishAddress", "a:1", "-ORBpublishaddress=b"]).unwrap();
        assert_eq!(
            c.publish_addresses,
            [("a".to_string(), Some(1)), ("b".to_string(), None)]
        );
        assert_eq!(bad("PublishAddress", ""), "empty host");
        assert_eq!(bad("PublishAddress", ":2809"), "empty host");
        assert!(bad("PublishAddress", "h:0").contains("port 0 cannot be published"));
        assert_eq!(
            bad("PublishAddress", "h:70000"),
            "port: too large (at most 65535)"
        );
    }

    #[test]
    fn giop_max_version() {
        assert_eq!(both("GIOPMaxVersion", "1.0").giop_max_minor, 0);
        assert_eq!(both("GIOPMaxVersion", "1.1").giop_max_minor, 1);
        assert_eq!(both("GIOPMaxVersion", "1.2").giop_max_minor, 2);
        assert_eq!(both("maxGIOPVersion", "1.1").giop_max_minor, 1);
        for v in ["1.3", "2.0", "1", "1.", "", "1.1 ", "v1.2"] {
            assert_eq!(
                bad("GIOPMaxVersion", v),
                "the GIOP versions spoken are 1.0, 1.1 and 1.2"
            );
        }
    }

    #[test]
    fn timeouts() {
        assert_eq!(
            both("CallTimeout", "1500").call_timeout,
            Some(Duration::from_millis(1500))
        );
        assert_eq!(both("CallTimeout", "0").call_timeout, None);
        let big = u64::MAX.to_string();
        assert_eq!(
            both("CallTimeout", &big).call_timeout,
            Some(Duration::from_millis(u64::MAX))
        );
        assert_eq!(
            both("ConnectTimeout", "250").connect_timeout,
            Duration::from_millis(250)
        );
        assert_eq!(bad("ConnectTimeout", "0"), "must be at least 1");
        assert_eq!(
            both("IdleTimeout", "30").idle_timeout,
            Some(Duration::from_secs(30))
        );
        assert_eq!(both("IdleTimeout", "0").idle_timeout, None);
    }

    #[test]
    fn sizes_and_counts() {
        assert_eq!(both("MaxMessageSize", "1048576").max_message_size, 1 << 20);
        assert_eq!(OrbConfig::default().max_incomplete_bytes, 64 << 20);
        assert_eq!(
            both("maxIncompleteBytes", "1048576").max_incomplete_bytes,
            1 << 20
        );
        assert_eq!(bad("maxIncompleteBytes", "65535"), "must be at least 65536");
        assert_eq!(OrbConfig::default().max_value_nesting, None);
        assert_eq!(
            both("maxValueNesting", "250000").max_value_nesting,
            Some(250_000)
        );
        assert_eq!(bad("maxValueNesting", "0"), "must be at least 1");
        assert_eq!(
            both("giopMaxMsgSize", "4294967295").max_message_size,
            u32::MAX
        );
        assert_eq!(both("FragmentSize", "64").fragment_size, Some(64));
        assert_eq!(both("FragmentSize", "65536").fragment_size, Some(65536));
        assert_eq!(both("FragmentSize", "0").fragment_size, None);
        use crate::cdr::ByteOrder;
        assert_eq!(OrbConfig::default().byte_order, ByteOrder::NATIVE);
        assert_eq!(both("byteOrder", "big").byte_order, ByteOrder::Big);
        assert_eq!(both("byteOrder", "Little").byte_order, ByteOrder::Little);
        assert_eq!(both("byteOrder", "native").byte_order, ByteOrder::NATIVE);
        assert_eq!(
            bad("byteOrder", "middle"),
            "expected `big`, `little` or `native`"
        );
        assert_eq!(both("MaxStrandsPerRope", "1").max_strands_per_rope, 1);
        assert_eq!(both("asyncCallsPerStrand", "0").async_calls_per_strand, 0);
        assert_eq!(both("asyncCallsPerStrand", "8").async_calls_per_strand, 8);
        assert_eq!(both("amiDispatchThreads", "2").ami_dispatch_threads, 2);
        assert_eq!(bad("amiDispatchThreads", "0"), "must be at least 1");
        assert_eq!(both("MaxConnections", "100").max_server_connections, 100);
        assert_eq!(both("ThreadPool", "8").thread_model, ThreadModel::Pool(8));
        assert_eq!(
            both("ThreadPool", "0").thread_model,
            ThreadModel::ThreadPerConnection
        );
        assert_eq!(
            both("SocketBufferSize", "262144").socket_buffer_size,
            Some(262144)
        );
        assert_eq!(both("SocketBufferSize", "0").socket_buffer_size, None);
        assert_eq!(both("ForwardLimit", "0").forward_limit, 0);
        assert_eq!(both("ForwardLimit", "32").forward_limit, 32);
    }

    #[test]
    fn numbers_bad() {
        assert_eq!(
            bad("MaxMessageSize", "4294967296"),
            "too large (at most 4294967295)"
        );
        assert_eq!(bad("MaxMessageSize", "0"), "must be at least 1");
        assert_eq!(
            bad("FragmentSize", "32"),
            "must be at least 64 (or 0 for never)"
        );
        assert_eq!(bad("FragmentSize", "100"), "must be a multiple of 8");
        assert_eq!(
            bad("FragmentSize", "4294967296"),
            "too large (at most 4294967295)"
        );
        assert_eq!(bad("MaxStrandsPerRope", "0"), "must be at least 1");
        assert_eq!(bad("MaxConnections", "0"), "must be at least 1");
        assert_eq!(
            bad("SocketBufferSize", "2147483648"),
            "too large (at most 2147483647)"
        );
        assert_eq!(
            bad("ForwardLimit", "4294967296"),
            "too large (at most 4294967295)"
        );
        assert_eq!(
            bad("CallTimeout", "18446744073709551616"),
            "too large (at most 18446744073709551615)"
        );
        assert_eq!(
            bad("IdleTimeout", "99999999999999999999999"),
            "too large (at most 18446744073709551615)"
        );
        for name in [
            "CallTimeout",
            "ConnectTimeout",
            "ThreadPool",
            "ForwardLimit",
            "IdleTimeout",
        ] {
            assert_eq!(bad(name, "-1"), "must not be negative");
            assert_eq!(bad(name, "abc"), "not a decimal number");
            assert_eq!(bad(name, "+5"), "not a decimal number");
            assert_eq!(bad(name, "1.5"), "not a decimal number");
            assert_eq!(bad(name, "10ms"), "not a decimal number");
            assert_eq!(bad(name, " 10"), "not a decimal number");
            assert_eq!(bad(name, "-"), "not a decimal number");
            assert_eq!(bad(name, ""), "empty value; expected a decimal number");
        }
    }

    #[test]
    fn names_are_case_insensitive() {
        let (c, rest) = parse(&[
            "-ORBendPoint",
            "giop:tcp::1",
            "-ORBLISTENENDPOINTS=iiop://h:2",
            "-ORBinitref",
            "X=IOR:00",
            "-ORBmaxgiopversion=1.0",
            "-ORBGIOPMAXMSGSIZE",
            "1024",
            "-ORBcallTIMEOUT",
            "5",
        ])
        .unwrap();
        assert!(rest.is_empty());
        assert_eq!(c.endpoints, [ep("0.0.0.0", 1), ep("h", 2)]);
        assert_eq!(c.init_refs["X"], "IOR:00");
        assert_eq!(c.giop_max_minor, 0);
        assert_eq!(c.max_message_size, 1024);
        assert_eq!(c.call_timeout, Some(Duration::from_millis(5)));
        // The prefix itself is case-sensitive: `-orb…` is an ordinary argument.
        let (c, rest) = parse(&["-orbCallTimeout", "5"]).unwrap();
        assert_eq!(
            (c, rest),
            (OrbConfig::default(), strings(&["-orbCallTimeout", "5"]))
        );
    }

    #[test]
    fn other_arguments_are_kept_in_order() {
        let (c, rest) = parse(&[
            "prog",
            "input.txt",
            "-ORBCallTimeout",
            "5",
            "-v",
            "-ORBInitRef=A=IOR:00",
            "--",
            "x=y",
            "-ORBThreadPool",
            "3",
            "last",
        ])
        .unwrap();
        assert_eq!(rest, ["prog", "input.txt", "-v", "--", "x=y", "last"]);
        assert_eq!(c.call_timeout, Some(Duration::from_millis(5)));
        assert_eq!(c.thread_model, ThreadModel::Pool(3));
        // No program name: nothing is assumed about the first argument.
        let (_, rest) = parse(&["-ORBThreadPool", "2", "a", "b"]).unwrap();
        assert_eq!(rest, ["a", "b"]);
        // A value that looks like an option (but not an ORB one) is still taken as the value.
        let (c, rest) = parse(&["-ORBDefaultInitRef", "-weird", "x"]).unwrap();
        assert_eq!(
            (c.default_init_ref.as_deref(), rest),
            (Some("-weird"), strings(&["x"]))
        );
    }

    #[test]
    fn unknown_option_suggests_the_closest() {
        let cases = [
            ("-ORBEndpiont", Some("-ORBEndpoint")),
            ("-ORBListenEndpoint", Some("-ORBListenEndpoints")),
            ("-ORBInitialRef", Some("-ORBInitRef")),
            ("-ORBmaxGIOPversoin", Some("-ORBmaxGIOPVersion")),
            ("-ORBcall_timeout", Some("-ORBCallTimeout")),
            ("-ORBIdleTimout", Some("-ORBIdleTimeout")),
            ("-ORBtraceLevl", Some("-ORBtraceLevel")),
            ("-ORBNativeCharCodeSet", None),
            ("-ORB", None),
        ];
        for (option, suggestion) in cases {
            for arg in [option.to_string(), format!("{option}=1")] {
                let err = parse(&["prog", &arg, "1"]).unwrap_err();
                assert_eq!(
                    err,
                    ConfigError::UnknownOption {
                        option: option.to_string(),
                        suggestion: suggestion.map(String::from),
                    }
                );
            }
        }
        let err = parse(&["-ORBEndpiont", "giop:tcp::1"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown ORB option `-ORBEndpiont`; did you mean `-ORBEndpoint`?"
        );
        let err = parse(&["-ORBNativeCharCodeSet", "10"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown ORB option `-ORBNativeCharCodeSet`"
        );
    }

    #[test]
    fn missing_value() {
        for args in [
            &["prog", "-ORBInitRef"][..],
            &["-ORBCallTimeout", "-ORBThreadPool", "2"],
            &["-ORBEndpoint", "-ORBfoo"],
        ] {
            let option = args.iter().find(|a| a.starts_with("-ORB")).unwrap();
            let err = parse(args).unwrap_err();
            assert_eq!(
                err,
                ConfigError::MissingValue {
                    option: option.to_string()
                }
            );
            assert_eq!(
                err.to_string(),
                format!("ORB option `{option}` needs a value")
            );
        }
        // The spelling used is the one reported.
        let err = parse(&["-ORBendPoint"]).unwrap_err();
        assert_eq!(err.to_string(), "ORB option `-ORBendPoint` needs a value");
    }

    #[test]
    fn bad_value_message_names_option_value_and_reason() {
        let err = parse(&["-ORBcallTimeout", "-5"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "bad value `-5` for ORB option `-ORBcallTimeout`: must not be negative"
        );
        let err = parse(&["-ORBFragmentSize=100"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "bad value `100` for ORB option `-ORBFragmentSize`: must be a multiple of 8"
        );
    }

    #[test]
    fn errors_leave_the_configuration_unchanged() {
        let before = OrbConfig::default()
            .init_ref("A", "IOR:00")
            .endpoint("h", 1);
        let mut c = before.clone();
        let args = strings(&[
            "-ORBInitRef",
            "B=IOR:01",
            "-ORBEndpoint",
            "giop:tcp::2",
            "-ORBbogus",
        ]);
        assert!(c.apply_args(args).is_err());
        assert_eq!(c, before);
        let vars = [("CORBINA_INITREF", "B=IOR:01"), ("CORBINA_THREADPOOL", "x")];
        assert!(c
            .apply_env(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())))
            .is_err());
        assert_eq!(c, before);
    }

    #[test]
    fn env_every_option() {
        let c = env(&[
            (
                "CORBINA_INITREF",
                "NameService=corbaloc::h:2809/NameService",
            ),
            ("CORBINA_DEFAULTINITREF", "corbaloc::h:2809"),
            ("CORBINA_LISTENENDPOINTS", "iiop://a:1;iiop://[::1]:2"),
            ("CORBINA_ENDPOINT", "giop:tcp::3"),
            ("CORBINA_PUBLISHADDRESS", "gw:9 gw2"),
            ("CORBINA_GIOPMAXVERSION", "1.1"),
            ("CORBINA_CALLTIMEOUT", "100"),
            ("CORBINA_CONNECTTIMEOUT", " 200 "),
            ("CORBINA_MAXMESSAGESIZE", "1024"),
            ("CORBINA_MAXINCOMPLETEBYTES", "131072"),
            ("CORBINA_FRAGMENTSIZE", "128"),
            ("CORBINA_MAXSTRANDSPERROPE", "2"),
            ("CORBINA_MAXCONNECTIONS", "3"),
            ("CORBINA_IDLETIMEOUT", "0"),
            ("CORBINA_THREADPOOL", "4"),
            ("CORBINA_SOCKETBUFFERSIZE", "65536"),
            ("CORBINA_FORWARDLIMIT", "5"),
        ])
        .unwrap();
        assert_eq!(c.init_refs["NameService"], "corbaloc::h:2809/NameService");
        assert_eq!(c.default_init_ref.as_deref(), Some("corbaloc::h:2809"));
        // Applied in name order: ENDPOINT before LISTENENDPOINTS.
        assert_eq!(c.endpoints, [ep("0.0.0.0", 3), ep("a", 1), ep("::1", 2)]);
        assert_eq!(
            c.publish_addresses,
            [("gw".to_string(), Some(9)), ("gw2".to_string(), None)]
        );
        assert_eq!(c.giop_max_minor, 1);
        assert_eq!(c.call_timeout, Some(Duration::from_millis(100)));
        assert_eq!(c.connect_timeout, Duration::from_millis(200));
        assert_eq!(c.max_message_size, 1024);
        assert_eq!(c.max_incomplete_bytes, 128 << 10);
        assert_eq!(c.fragment_size, Some(128));
        assert_eq!(c.max_strands_per_rope, 2);
        assert_eq!(c.max_server_connections, 3);
        assert_eq!(c.idle_timeout, None);
        assert_eq!(c.thread_model, ThreadModel::Pool(4));
        assert_eq!(c.socket_buffer_size, Some(65536));
        assert_eq!(c.forward_limit, 5);
        // Aliases work in the environment too.
        assert_eq!(
            env(&[("CORBINA_MAXGIOPVERSION", "1.0")])
                .unwrap()
                .giop_max_minor,
            0
        );
        assert_eq!(
            env(&[("CORBINA_GIOPMAXMSGSIZE", "77")])
                .unwrap()
                .max_message_size,
            77
        );
    }

    #[test]
    fn env_repeatable_values() {
        let c = env(&[(
            "CORBINA_INITREF",
            "NameService=corbaloc::h:2809/NameService Other=IOR:0001;Third=corbaname::x#a/b\n\tFourth=IOR:02 ",
        )])
        .unwrap();
        assert_eq!(c.init_refs.len(), 4);
        assert_eq!(c.init_refs["NameService"], "corbaloc::h:2809/NameService");
        assert_eq!(c.init_refs["Other"], "IOR:0001");
        assert_eq!(c.init_refs["Third"], "corbaname::x#a/b");
        assert_eq!(c.init_refs["Fourth"], "IOR:02");
        let c = env(&[(
            "CORBINA_ENDPOINT",
            "giop:tcp:a:1 giop:tcp:b:2;;giop:tcp:c:3",
        )])
        .unwrap();
        assert_eq!(c.endpoints, [ep("a", 1), ep("b", 2), ep("c", 3)]);
    }

    #[test]
    fn env_ignores_others_reserved_and_empty() {
        let c = env(&[
            ("PATH", "/bin"),
            ("corbina_bogus", "x"),
            ("CORBINAX", "x"),
            ("CORBINA_LOG", "debug"),
            ("CORBINA_CALLTIMEOUT", ""),
            ("CORBINA_INITREF", "  ; "),
            ("CORBINA_THREADPOOL", "   "),
        ])
        .unwrap();
        assert_eq!(c, OrbConfig::default().log_filter("debug"));
    }

    #[test]
    fn rust_log_is_the_log_filter_unless_corbina_log_is_set() {
        let c = env(&[("RUST_LOG", " corbina::wire=trace ")]).unwrap();
        assert_eq!(c.log_filter.as_deref(), Some("corbina::wire=trace"));
        let c = env(&[("RUST_LOG", "info"), ("CORBINA_LOG", "corbina=debug")]).unwrap();
        assert_eq!(c.log_filter.as_deref(), Some("corbina=debug"));
        let c = env(&[("RUST_LOG", "  ")]).unwrap();
        assert_eq!(c.log_filter, None);
    }

    #[test]
    fn trace_options_from_arguments_and_environment() {
        let (c, _) = parse(&["-ORBtraceLevel", "40", "-ORBtraceInvocations=1"]).unwrap();
        assert_eq!((c.trace_level, c.trace_invocations), (40, true));
        let c = env(&[
            ("CORBINA_TRACELEVEL", "25"),
            ("CORBINA_LOG", " corbina=debug "),
        ])
        .unwrap();
        assert_eq!(c.trace_level, 25);
        assert_eq!(c.log_filter.as_deref(), Some("corbina=debug"));
        assert!(parse(&["-ORBtraceLevel", "-1"]).is_err());
    }

    #[test]
    fn env_unknown_variables_are_errors() {
        let cases = [
            ("CORBINA_CALL_TIMEOUT", Some("CORBINA_CALLTIMEOUT")),
            ("CORBINA_INITREFS", Some("CORBINA_INITREF")),
            ("CORBINA_ENDPIONT", Some("CORBINA_ENDPOINT")),
            (
                "CORBINA_MAX_STRANDS_PER_ROPE",
                Some("CORBINA_MAXSTRANDSPERROPE"),
            ),
            ("CORBINA_TRACE_LEVEL", Some("CORBINA_TRACELEVEL")),
            ("CORBINA_", None),
            // Names are upper case only.
            ("CORBINA_InitRef", Some("CORBINA_INITREF")),
        ];
        for (var, suggestion) in cases {
            let err = env(&[(var, "1")]).unwrap_err();
            assert_eq!(
                err,
                ConfigError::UnknownEnv {
                    var: var.to_string(),
                    suggestion: suggestion.map(String::from),
                }
            );
        }
        assert_eq!(
            env(&[("CORBINA_CALL_TIMEOUT", "1")]).unwrap_err().to_string(),
            "unknown environment variable `CORBINA_CALL_TIMEOUT`; did you mean `CORBINA_CALLTIMEOUT`?"
        );
        // Even when empty.
        assert!(env(&[("CORBINA_BOGUS", "")]).is_err());
    }

    #[test]
    fn env_bad_values() {
        let err = env(&[("CORBINA_CALLTIMEOUT", "-3")]).unwrap_err();
        assert_eq!(
            err,
            ConfigError::BadEnv {
                var: "CORBINA_CALLTIMEOUT".into(),
                value: "-3".into(),
                reason: "must not be negative".into(),
            }
        );
        assert_eq!(
            err.to_string(),
            "bad value `-3` in environment variable `CORBINA_CALLTIMEOUT`: must not be negative"
        );
        // The offending part of a multi-valued variable is named.
        let err = env(&[("CORBINA_INITREF", "A=IOR:00 B= C=IOR:01")]).unwrap_err();
        assert_eq!(
            err,
            ConfigError::BadEnv {
                var: "CORBINA_INITREF".into(),
                value: "B=".into(),
                reason: "empty URL for `B`".into(),
            }
        );
        assert!(env(&[("CORBINA_GIOPMAXVERSION", "1.3")]).is_err());
        assert!(env(&[("CORBINA_FRAGMENTSIZE", "65")]).is_err());
        assert!(env(&[("CORBINA_ENDPOINT", "giop:tcp:h:1 bogus")]).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn env_from_os_strings() {
        use std::os::unix::ffi::OsStringExt;
        let os = |s: &str| OsString::from(s);
        let invalid = OsString::from_vec(vec![0x66, 0xff, 0x6f]);
        let vars = env_strings([
            (os("HOME"), invalid.clone()),
            (invalid.clone(), os("x")),
            (os("CORBINA_THREADPOOL"), os("2")),
        ])
        .unwrap();
        assert_eq!(vars, [("CORBINA_THREADPOOL".to_string(), "2".to_string())]);
        let err = env_strings([(os("CORBINA_INITREF"), invalid)]).unwrap_err();
        assert!(
            matches!(err, ConfigError::BadEnv { ref var, ref reason, .. }
            if var == "CORBINA_INITREF" && reason == "not valid UTF-8")
        );
    }

    #[test]
    fn args_win_over_env_over_defaults() {
        let mut c = env(&[
            ("CORBINA_CALLTIMEOUT", "100"),
            ("CORBINA_THREADPOOL", "4"),
            ("CORBINA_INITREF", "A=IOR:env-a B=IOR:env-b"),
            ("CORBINA_ENDPOINT", "giop:tcp:envhost:1"),
            ("CORBINA_PUBLISHADDRESS", "envpub"),
        ])
        .unwrap();
        let rest = c
            .apply_args(strings(&[
                "prog",
                "-ORBCallTimeout",
                "200",
                "-ORBInitRef",
                "A=IOR:arg-a",
                "-ORBEndpoint",
                "giop:tcp:arghost:2",
                "-ORBListenEndpoints",
                "iiop://arghost:3",
            ]))
            .unwrap();
        assert_eq!(rest, ["prog"]);
        assert_eq!(c.call_timeout, Some(Duration::from_millis(200))); // args
        assert_eq!(c.thread_model, ThreadModel::Pool(4)); // env
        assert_eq!(c.forward_limit, 8); // default
        assert_eq!(c.init_refs["A"], "IOR:arg-a"); // merged by name
        assert_eq!(c.init_refs["B"], "IOR:env-b");
        // The arguments' endpoints replace the environment's, and add up among themselves.
        assert_eq!(c.endpoints, [ep("arghost", 2), ep("arghost", 3)]);
        assert_eq!(c.publish_addresses, [("envpub".to_string(), None)]);
        // Likewise the environment replaces endpoints set by the builder.
        let mut c = OrbConfig::default().endpoint("builder", 5).thread_pool(2);
        c.apply_env([("CORBINA_ENDPOINT".to_string(), "giop:tcp::6".to_string())])
            .unwrap();
        assert_eq!(c.endpoints, [ep("0.0.0.0", 6)]);
        assert_eq!(c.thread_model, ThreadModel::Pool(2));
    }

    #[test]
    fn from_args_and_env_uses_args() {
        // The test process's own environment is read; only check what it cannot affect.
        let (c, rest) = OrbConfig::from_args_and_env(strings(&[
            "prog",
            "-ORBCallTimeout",
            "42",
            "-ORBEndpoint=giop:tcp:127.0.0.1:0",
            "file",
        ]))
        .unwrap();
        assert_eq!(rest, ["prog", "file"]);
        assert_eq!(c.call_timeout, Some(Duration::from_millis(42)));
        assert_eq!(c.endpoints, [ep("127.0.0.1", 0)]);
        let err = OrbConfig::from_args_and_env(strings(&["prog", "-ORBnope", "1"])).unwrap_err();
        assert!(matches!(err, ConfigError::UnknownOption { .. }));
    }

    #[test]
    fn every_option_has_an_env_variable_and_a_doc_row() {
        let docs = include_str!("config.rs");
        for (key, names, _) in OPTIONS {
            for name in names.iter() {
                assert_eq!(find_option(name).map(|k| k.0), Some(*key));
                let var = name.to_ascii_uppercase();
                assert_eq!(find_env(&var).map(|k| k.0), Some(*key));
            }
            let env = format!("`{ENV_PREFIX}{}`", names[0].to_ascii_uppercase());
            let opt = format!("`-ORB{} ", names[0]);
            assert!(docs.contains(&env), "{env} missing from the option table");
            assert!(docs.contains(&opt), "{opt} missing from the option table");
        }
    }
}
