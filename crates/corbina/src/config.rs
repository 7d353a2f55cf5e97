//! ORB configuration: what `ORB_init` reads from `-ORB…` arguments, `CORBINA_…` environment
//! variables and the builder.
//!
//! An [`OrbConfig`] starts from its defaults; [`OrbConfig::from_args_and_env`] then applies the
//! process environment ([`OrbConfig::apply_env`]) and then the command line
//! ([`OrbConfig::apply_args`]), so arguments win over the environment, which wins over the
//! defaults. Programs can also build one with the setters ([`OrbConfig::endpoint`], …).
//!
//! # Options
//!
//! On the command line an option is `-ORB<Name> value` or `-ORB<Name>=value`; `<Name>` is
//! matched case-insensitively, so omniORB's `-ORBendPoint` and TAO's `-ORBListenEndpoints`
//! both work. As CORBA requires, an unknown `-ORB…` option is an error (with a suggestion), not
//! ignored. Arguments that do not start with `-ORB` are handed back to the program, in order.
//!
//! In the environment the same option is `CORBINA_<NAME>`, the name upper-cased. Repeatable
//! options (marked ⟳) take several values separated by whitespace or `;`. An unknown
//! `CORBINA_…` variable is an error too (typo protection), except `CORBINA_LOG`, a
//! `tracing-subscriber` `EnvFilter` for the log ([`crate::trace`]). A variable set to an empty value counts as unset.
//!
//! | Option | Environment | Default | Meaning |
//! |---|---|---|---|
//! | `-ORBInitRef Name=URL` ⟳ | `CORBINA_INITREF` | none | initial reference `Name` is at `URL` (`corbaloc:`, `corbaname:`, `IOR:`…); a later one for the same name wins |
//! | `-ORBDefaultInitRef URL` | `CORBINA_DEFAULTINITREF` | none | names without an InitRef are looked up at `URL/Name` |
//! | `-ORBListenEndpoints iiop://host:port` ⟳ | `CORBINA_LISTENENDPOINTS` | all IPv4 interfaces, ephemeral port | listen here (TAO form; `iiop://host:`, `iiop://[::1]:2809`; several separated by `;`) |
//! | `-ORBEndpoint giop:tcp:host:port` ⟳ | `CORBINA_ENDPOINT` | (same list) | listen here (omniORB form, also `-ORBEndPoint`; `giop:tcp::port`, `giop:tcp::`, `giop:tcp:[::1]:0`); empty host = `0.0.0.0`, empty port = ephemeral |
//! | `-ORBListenEndpoints unix:/path` or `uiop:///path` ⟳, `-ORBEndpoint giop:unix:/path` ⟳ | (same list) | also listen on a Unix-domain socket at `/path` (TAO's UIOP form, omniORB's form; `giop:unix:` alone picks a path in the temporary directory); published with omniORB's `TAG_OMNIORB_UNIX_TRANS` |
//! | `-ORBListenEndpoints shm:NAME` or `shmiop:///path` ⟳, `-ORBEndpoint giop:shm:/path` ⟳ | (same list) | also listen for shared-memory connections, with the rendezvous socket at `/path` (`shm:NAME`: `corbina-shm-NAME.sock` in the temporary directory) (Corbina's own scheme: [`crate::transport::shm`]); published with `TAG_CORBINA_SHM_TRANS` |
//! | `-ORBEndpoint giop:ssl:host:port` ⟳ | `CORBINA_ENDPOINT` (same list) | none | listen for IIOP over TLS here (omniORB's form, also in `-ORBListenEndpoints`; `giop:ssl::2810`, `giop:ssl::`); published as a `TAG_SSL_SEC_TRANS` component on the profile's host, the profile's port 0 when there is no plain TCP endpoint (as omniORB does). Needs `-ORBsslKeyFile` |
//! | `-ORBsslCAFile file.pem` | `CORBINA_SSLCAFILE` | none | PEM certificates of the authorities trusted to sign peers' certificates (omniORB's option) |
//! | `-ORBsslCAPath dir` | `CORBINA_SSLCAPATH` | none | a directory of PEM files of trusted authorities (OpenSSL's CA directory, omniORB's option), besides or instead of `-ORBsslCAFile` |
//! | `-ORBsslKeyFile file.pem` | `CORBINA_SSLKEYFILE` | none | PEM file holding this ORB's private key and its certificate chain (omniORB's option): the server's certificate, and the client's for mutual authentication |
//! | `-ORBsslKeyPassword pw` | `CORBINA_SSLKEYPASSWORD` | none | accepted for omniORB's deployment files and ignored for a clear key; encrypted keys are refused with an error saying so |
//! | `-ORBsslVerifyMode none\|peer[,fail][,once]` | `CORBINA_SSLVERIFYMODE` | `peer` | omniORB's modes: `peer` — a client checks the server's certificate against `-ORBsslCAFile`, a server asks clients for one and checks it if sent; `fail` — a server refuses clients without a certificate (mutual authentication); `once` is accepted (TLS renegotiation is never done); `none` — no checks |
//! | `-ORBsslAcceptTimeOut ms` | `CORBINA_SSLACCEPTTIMEOUT` | `10000` | a server's TLS handshake must finish within this (omniORB's option; ≥ 1); handshakes run off the accept thread |
//! | `-ORBsslCheckHostName 0/1` | `CORBINA_SSLCHECKHOSTNAME` | `1` | a client checks that the server's certificate names the host (or IP address) in the reference; `0` checks the chain only, as omniORB does |
//! | `-ORBtraceLevel n` | `CORBINA_TRACELEVEL` | `0` | what the ORB logs to stderr (omniORB's levels, [`crate::trace`]): `1` warnings, `10` connections, `25` every request, `40` hex dumps of the bytes on the wire; the ORB installs its stderr subscriber only if the application has none |
//! | `-ORBtraceInvocations 0/1` | `CORBINA_TRACEINVOCATIONS` | `0` | log every request whatever the level (omniORB's option) |
//! | — | `CORBINA_LOG`, else `RUST_LOG` | none | an `EnvFilter` (`corbina=debug`, `corbina::request=info,corbina::wire=trace`): what the ORB logs to stderr; wins over `-ORBtraceLevel`'s filter |
//! | `-ORBPreferUnix 0/1` | `CORBINA_PREFERUNIX` | `1` | a client uses a server's published shared-memory or Unix endpoint (in that order) instead of TCP when the server is on this host (same host name, the socket path exists) |
//! | `-ORBCollocation direct\|iiop` | `CORBINA_COLLOCATION` | `direct` | `direct`: generated proxies for objects of this ORB's own POAs call the servant on the caller's thread, unmarshalled (POA rules still apply); `iiop`: such calls go over a loopback connection like any other (per reference: `ObjectRef::without_collocation`) |
//! | `-ORBPublishAddress host[:port]` ⟳ | `CORBINA_PUBLISHADDRESS` | the bound address | address written into IORs; extra ones become ALTERNATE_IIOP_ADDRESS components; no port = the bound port |
//! | `-ORBGIOPMaxVersion 1.x` | `CORBINA_GIOPMAXVERSION` | `1.2` | highest GIOP version spoken: `1.0`, `1.1` or `1.2` (also omniORB's `-ORBmaxGIOPVersion`) |
//! | `-ORBCallTimeout ms` | `CORBINA_CALLTIMEOUT` | none | a twoway call fails with TIMEOUT after this many milliseconds; `0` = none |
//! | `-ORBConnectTimeout ms` | `CORBINA_CONNECTTIMEOUT` | `10000` | connecting fails with TRANSIENT after this many milliseconds (≥ 1) |
//! | `-ORBMaxMessageSize bytes` | `CORBINA_MAXMESSAGESIZE` | `268435456` (256 MiB) | largest GIOP message accepted, fragments reassembled (≥ 1; also omniORB's `-ORBgiopMaxMsgSize`) |
//! | `-ORBmaxValueNesting n` | `CORBINA_MAXVALUENESTING` | `100000` | how deeply values may nest in one another (a list sent as nested values is this many nodes long at most), encoding and decoding: deeper is MARSHAL, before anything is sent when encoding. Process-wide (the last ORB given it sets it; decoding has no ORB at hand). Each level lets a peer make the receiver hold about 560 bytes while it decodes (measured, release build; 2.3 KB in a debug build), about 56 MB at the default; a level takes ≥ 4 octets on the wire (≥ 1) |
//! | `-ORBmaxIncompleteBytes bytes` | `CORBINA_MAXINCOMPLETEBYTES` | `67108864` (64 MiB) | server-wide budget for bytes held in incomplete messages and fragment reassembly across all connections, beyond the 64 KiB receive buffer each connection has for small messages; over it, the connections holding the most get MessageError and are closed first (≥ 65536). A message larger than the budget cannot be received |
//! | `-ORBFragmentSize bytes` | `CORBINA_FRAGMENTSIZE` | `0` (never) | outgoing GIOP 1.2 messages larger than this are fragmented; ≥ 64 and a multiple of 8, `0` = never |
//! | `-ORBbyteOrder big\|little\|native` | `CORBINA_BYTEORDER` | `native` | byte order of the GIOP messages this ORB writes: requests, replies, their fragments and service contexts, and the IORs it makes (GIOP lets the sender choose; every order is read whatever this says) |
//! | `-ORBMaxStrandsPerRope n` | `CORBINA_MAXSTRANDSPERROPE` | `16` | most connections to one peer address (≥ 1) |
//! | `-ORBasyncCallsPerStrand n` | `CORBINA_ASYNCCALLSPERSTRAND` | `64` | asynchronous calls in flight that saturate a connection: when every asynchronous connection to an address carries this many, another is opened, up to `-ORBMaxStrandsPerRope` of them; `0` = one connection per address whatever the load |
//! | `-ORBamiDispatchThreads n` | `CORBINA_AMIDISPATCHTHREADS` | `4` | threads delivering AMI replies to their reply handlers (≥ 1); shared by the process's ORBs, which get the most any of them asked for |
//! | `-ORBMaxConnections n` | `CORBINA_MAXCONNECTIONS` | `4096` | most server connections accepted at once (≥ 1) |
//! | `-ORBIdleTimeout s` | `CORBINA_IDLETIMEOUT` | `120` | idle connections are closed after two scans of this many seconds; `0` = never |
//! | `-ORBThreadPool n` | `CORBINA_THREADPOOL` | `0` | `n` ≥ 1: a pool of `n` threads serves all connections; `0`: one thread per connection |
//! | `-ORBSocketPermissions mode` | `CORBINA_SOCKETPERMISSIONS` | the umask's | permission bits (octal, e.g. `0660`) of Unix-domain and shared-memory socket files |
//! | `-ORBSocketBufferSize bytes` | `CORBINA_SOCKETBUFFERSIZE` | `0` (the kernel's) | SO_SNDBUF/SO_RCVBUF of every connection; `0` = leave the kernel's |
//! | `-ORBForwardLimit n` | `CORBINA_FORWARDLIMIT` | `8` | LOCATION_FORWARD hops followed per call |
//! | `-ORBOnewaySyncScope none\|transport` | `CORBINA_ONEWAYSYNCSCOPE` | `transport` | CORBA Messaging's SyncScope for oneways: `transport` writes each oneway before the call returns (SYNC_WITH_TRANSPORT); `none` buffers them per connection and writes a batch in one system call (SYNC_NONE), see [`crate::client`] |
//! | `-ORBOnewayBufferBytes bytes` | `CORBINA_ONEWAYBUFFERBYTES` | `16384` | with `none`: a batch is written once it holds this many bytes (≥ 1) |
//! | `-ORBOnewayBufferCount n` | `CORBINA_ONEWAYBUFFERCOUNT` | `256` | with `none`: a batch is written once it holds this many oneways (≥ 1) |
//! | `-ORBOnewayBufferDelay µs` | `CORBINA_ONEWAYBUFFERDELAY` | `1000` | with `none`: a batch is written at the latest this many microseconds after its first oneway (≥ 1) |
//! | `-ORBendPointNoListen giop:tcp:host:port` ⟳ | `CORBINA_ENDPOINTNOLISTEN` | none | publish this address in IORs without listening on it (omniORB's option): with no listening TCP endpoint it is the profile's address, for objects reached over bidirectional GIOP only |
//! | `-ORBofferBiDirectionalGIOP 0/1` | `CORBINA_OFFERBIDIRECTIONALGIOP` | `0` | client: once a POA with `BidirectionalPolicy::Both` exists, GIOP 1.2 requests carry a BI_DIR_IIOP offer of the published address and servers may call back over the connection (omniORB's option) |
//! | `-ORBacceptBiDirectionalGIOP 0/1` | `CORBINA_ACCEPTBIDIRECTIONALGIOP` | `0` | server: take a client's BI_DIR_IIOP offer on a request to a POA with `BidirectionalPolicy::Both`, calling the offered addresses back over that connection (omniORB's option) |
//!
//! Numbers are plain decimal (no sign, no suffix); negative and out-of-range values are
//! rejected. Each source replaces the list-valued settings it mentions (endpoints, publish
//! addresses) instead of adding to the earlier source's; InitRefs are merged by name.
//!
//! ```
//! use corbina::config::OrbConfig;
//!
//! let mut config = OrbConfig::default();
//! let rest = config
//!     .apply_args(["server", "-ORBEndpoint", "giop:tcp::2809", "-v", "-ORBCallTimeout=500"]
//!         .map(String::from))
//!     .unwrap();
//! assert_eq!(rest, ["server", "-v"]);
//! assert_eq!(config.endpoints[0].host, "0.0.0.0");
//! assert_eq!(config.endpoints[0].port, 2809);
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use crate::cdr::ByteOrder;
use crate::transport::TransportKind;

/// How server connections are served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadModel {
    /// One thread per connection reads, dispatches and replies (no thread switch per call).
    ThreadPerConnection,
    /// A bounded pool of this many threads serves all connections.
    Pool(usize),
}

/// Everything an ORB can be configured with. Field defaults are the documented defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct OrbConfig {
    /// `-ORBInitRef Name=URL` (repeatable): initial references by name.
    pub init_refs: BTreeMap<String, String>,
    /// `-ORBDefaultInitRef URL`: where names without an InitRef are looked up
    /// (`URL/Name`).
    pub default_init_ref: Option<String>,
    /// `-ORBListenEndpoints iiop://host:port` / `-ORBEndpoint giop:tcp:host:port` (repeatable):
    /// where the server listens. Port 0 picks an ephemeral port. Empty: listen on all IPv4
    /// interfaces on an ephemeral port, lazily when the first object is activated.
    pub endpoints: Vec<Endpoint>,
    /// `-ORBEndpoint giop:ssl:host:port` (repeatable): TLS endpoints, listened on besides
    /// the others (with only TLS endpoints, IORs carry port 0 and the TLS port in their
    /// `TAG_SSL_SEC_TRANS` component).
    pub ssl_endpoints: Vec<Endpoint>,
    /// The `-ORBssl…` options: certificates, keys and checks of TLS connections.
    pub ssl: SslConfig,
    /// `-ORBListenEndpoints uiop:///path|shmiop:///path`, `-ORBEndpoint giop:unix:/path`
    /// (repeatable): local endpoints, listened on besides the TCP ones (with only local
    /// endpoints there is no TCP listener, and IORs carry this host's name and port 0).
    pub local_endpoints: Vec<LocalEndpoint>,
    /// `-ORBPreferUnix 0/1`: reach servers on this host through their published local
    /// endpoints rather than TCP (default true).
    pub prefer_local: bool,
    /// `-ORBCollocation direct|iiop`: whether references to this ORB's own objects call
    /// their servants directly (default true).
    pub direct_collocation: bool,
    /// `-ORBPublishAddress host[:port]`: the address written into IORs, when it differs from
    /// the bound one (NAT, multi-homed hosts). Repeatable: extra ones become
    /// ALTERNATE_IIOP_ADDRESS components.
    pub publish_addresses: Vec<(String, Option<u16>)>,
    /// `-ORBGIOPMaxVersion 1.x`: the highest GIOP minor version spoken (default 2).
    pub giop_max_minor: u8,
    /// `-ORBCallTimeout ms`: a twoway call fails with TIMEOUT after this long (default none).
    pub call_timeout: Option<Duration>,
    /// `-ORBConnectTimeout ms`: connecting fails with TRANSIENT after this long (default 10 s).
    pub connect_timeout: Duration,
    /// `-ORBMaxMessageSize bytes`: largest GIOP message accepted, fragments reassembled
    /// (default 256 MiB); larger ones get MessageError / MARSHAL.
    pub max_message_size: u32,
    /// `-ORBmaxValueNesting n`: how deeply values may nest, encoding and decoding (deeper is
    /// MARSHAL). Process-wide: an ORB made with `Some` sets it
    /// ([`corbina_cdr::value::set_max_value_nesting`]); `None` keeps the process's (default
    /// [`corbina_cdr::value::DEFAULT_MAX_VALUE_NESTING`]).
    pub max_value_nesting: Option<u32>,
    /// `-ORBmaxIncompleteBytes bytes`: the server-wide budget for bytes held in incomplete
    /// messages and fragment reassembly, across all connections (default 64 MiB). Over it,
    /// the connections holding the most are answered with MessageError and closed first.
    /// The memory goes back to the allocator when they close; for glibc to hand it back to
    /// the system promptly (RSS, not only the accounting), a server facing hostile clients
    /// should run with `MALLOC_TRIM_THRESHOLD_=131072` (glibc's dynamic thresholds otherwise
    /// keep freed large buffers in the heap; `tests/receive_budget.rs` pins it the same way).
    pub max_incomplete_bytes: usize,
    /// `-ORBFragmentSize bytes`: outgoing messages larger than this are sent as GIOP 1.2
    /// fragments; GIOP 1.1 ones go whole (a split there would cut an 8-byte primitive)
    /// (default: never fragment; large blocks go out with vectored writes).
    pub fragment_size: Option<u32>,
    /// `-ORBbyteOrder big|little|native`: the byte order of the messages this ORB writes
    /// (requests, replies, their fragments and service contexts) and of the IORs it makes
    /// (default: the machine's). Incoming messages are read in whatever order they carry.
    pub byte_order: ByteOrder,
    /// `-ORBMaxStrandsPerRope n`: most connections to one peer address; more concurrent calls
    /// wait (default 16).
    pub max_strands_per_rope: usize,
    /// `-ORBasyncCallsPerStrand n`: asynchronous calls in flight that saturate a
    /// connection. When every asynchronous connection to an address carries this many,
    /// another is opened, up to `max_strands_per_rope` (default 64; 0: one connection per
    /// address whatever the load).
    pub async_calls_per_strand: usize,
    /// `-ORBamiDispatchThreads n`: threads delivering AMI replies to their handlers
    /// (default 4). The dispatcher is the process's: it runs the most threads any ORB
    /// asked for.
    pub ami_dispatch_threads: usize,
    /// `-ORBMaxConnections n`: most server connections accepted at once (default 4096).
    pub max_server_connections: usize,
    /// `-ORBIdleTimeout s`: connections idle for two scavenger scans of this period are
    /// closed (default 120 s; 0 disables).
    pub idle_timeout: Option<Duration>,
    /// `-ORBThreadPool n`: serve connections with a pool of n threads instead of one thread
    /// per connection.
    pub thread_model: ThreadModel,
    /// `-ORBSocketBufferSize bytes`: SO_SNDBUF/SO_RCVBUF for every connection (default: the
    /// kernel's).
    pub socket_buffer_size: Option<usize>,
    /// `-ORBForwardLimit n`: LOCATION_FORWARD hops followed per call (default 8).
    pub forward_limit: u32,
    /// `-ORBSocketPermissions mode`: the permission bits (octal, e.g. `0660`) of the socket
    /// files of Unix-domain and shared-memory endpoints (default: as the umask leaves them).
    pub socket_permissions: Option<u32>,
    /// `-ORBOnewaySyncScope none|transport`: whether oneways are buffered (default
    /// [`SyncScope::WithTransport`]: written before the call returns).
    pub oneway_sync_scope: SyncScope,
    /// `-ORBOnewayBufferBytes`, `-ORBOnewayBufferCount`, `-ORBOnewayBufferDelay`: when a
    /// batch of buffered oneways is written (with [`SyncScope::None`] only).
    pub oneway_buffering: BufferingConstraint,
    /// `-ORBendPointNoListen giop:tcp:host:port` (repeatable; omniORB's option): addresses
    /// published in IORs but not listened on. With no listening TCP endpoint the first one
    /// is the profile's address: a client behind a firewall or NAT publishes it for objects
    /// that are called back over bidirectional GIOP only.
    pub endpoints_no_listen: Vec<Endpoint>,
    /// `-ORBofferBiDirectionalGIOP 0/1` (omniORB's option): requests on GIOP 1.2
    /// connections carry a `BI_DIR_IIOP` context with this ORB's published addresses, when a
    /// POA with `BidirectionalPolicy::Both` exists, and calls to those addresses that the
    /// server makes come back over the same connection (default off).
    pub offer_bidir: bool,
    /// `-ORBacceptBiDirectionalGIOP 0/1` (omniORB's option): a server takes a client's
    /// `BI_DIR_IIOP` offer on a request to a POA with `BidirectionalPolicy::Both` and calls
    /// the listed addresses back over that client's connection (default off).
    pub accept_bidir: bool,
    /// Portable Interceptor initializers, run when the ORB is created (see
    /// [`crate::interceptor`]; no `-ORB` option). With none, calls pay nothing for
    /// interceptors.
    pub initializers: crate::interceptor::Initializers,
    /// `-ORBtraceLevel n` (omniORB's option): what the ORB logs to stderr, if the
    /// application installed no `tracing` subscriber of its own (default 0: nothing).
    /// 1: warnings; 10: connections (open, close, CloseConnection, MessageError, fragments,
    /// forwards, retries, timeouts); 25: every request, one line as it ends; 40: hex dumps
    /// of the bytes on every connection. See [`crate::trace`].
    pub trace_level: u32,
    /// `-ORBtraceInvocations 0/1` (omniORB's option): log every request (as trace level 25
    /// does, whatever the level).
    pub trace_invocations: bool,
    /// `CORBINA_LOG`: a `tracing-subscriber` `EnvFilter` (`corbina::request=info,warn`):
    /// the ORB logs what it selects to stderr (it wins over `trace_level`'s filter).
    pub log_filter: Option<String>,
    /// Whether requests get `tracing` spans (`corbina.client`, `corbina.server`) for a
    /// subscriber the application installed; implied by a trace level ≥ 25,
    /// `trace_invocations` and `log_filter`. Off by default: calls pay nothing for them.
    pub request_spans: bool,
    /// Whether requests are counted and timed through the `metrics` facade
    /// ([`crate::trace`], *Metrics*; needs the `metrics` feature). Off by default.
    pub request_metrics: bool,
}

/// CORBA Messaging's `SyncScope` for oneway requests: how far a oneway has got when the
/// call returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncScope {
    /// `SYNC_NONE`: the oneway may still be in the ORB's buffer, to be written with others
    /// in one system call (bounded by a [`BufferingConstraint`]).
    None,
    /// `SYNC_WITH_TRANSPORT`: the oneway has been written to the connection.
    #[default]
    WithTransport,
}

/// When a batch of buffered oneways to one server is written (TAO's `BufferingConstraint`):
/// whichever bound is reached first. A twoway to the same server, an explicit flush
/// ([`crate::Orb::flush_oneways`]) and the client context's end write it
/// too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferingConstraint {
    /// Written once the batch holds at least this many bytes (≥ 1).
    pub max_bytes: usize,
    /// Written once the batch holds this many oneways (≥ 1).
    pub max_count: usize,
    /// Written at the latest this long after the batch's first oneway.
    pub max_delay: Duration,
}

impl Default for BufferingConstraint {
    fn default() -> Self {
        BufferingConstraint {
            max_bytes: 16 * 1024,
            max_count: 256,
            max_delay: Duration::from_millis(1),
        }
    }
}

/// The TLS settings (`-ORBssl…`, omniORB's names and meanings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SslConfig {
    /// `-ORBsslCAFile`: PEM certificates of the trusted certificate authorities.
    pub ca_file: Option<std::path::PathBuf>,
    /// `-ORBsslCAPath`: a directory of PEM files of trusted certificate authorities.
    pub ca_path: Option<std::path::PathBuf>,
    /// `-ORBsslKeyFile`: PEM file with this ORB's private key and its certificate chain.
    pub key_file: Option<std::path::PathBuf>,
    /// `-ORBsslKeyPassword`: ignored for a clear key (encrypted keys are not supported).
    pub key_password: Option<String>,
    /// `-ORBsslVerifyMode`.
    pub verify_mode: SslVerifyMode,
    /// `-ORBsslAcceptTimeOut`: how long a server's handshake may take (default 10 s).
    pub accept_timeout: Duration,
    /// `-ORBsslCheckHostName`: whether a client checks the server certificate's name
    /// (default true).
    pub check_host_name: bool,
}

impl Default for SslConfig {
    fn default() -> Self {
        SslConfig {
            ca_file: None,
            ca_path: None,
            key_file: None,
            key_password: None,
            verify_mode: SslVerifyMode::PEER,
            accept_timeout: Duration::from_secs(10),
            check_host_name: true,
        }
    }
}

/// omniORB's `-ORBsslVerifyMode`: `none`, or a comma list of `peer`, `fail`, `once`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SslVerifyMode {
    /// `peer`: check the peer's certificate (a server asks clients for one).
    pub peer: bool,
    /// `fail`: a server refuses a client without a certificate.
    pub fail: bool,
    /// `once`: accepted for omniORB's files; no renegotiation is ever done.
    pub once: bool,
}

impl SslVerifyMode {
    /// `none`.
    pub const NONE: SslVerifyMode = SslVerifyMode {
        peer: false,
        fail: false,
        once: false,
    };
    /// `peer`: server authentication, client certificates checked when sent.
    pub const PEER: SslVerifyMode = SslVerifyMode {
        peer: true,
        fail: false,
        once: false,
    };
    /// `peer,fail`: mutual authentication.
    pub const PEER_FAIL: SslVerifyMode = SslVerifyMode {
        peer: true,
        fail: true,
        once: false,
    };
}

/// A listen endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Host name or address to bind (`0.0.0.0`, `::`, `127.0.0.1`, a name).
    pub host: String,
    /// Port; 0 for an ephemeral one.
    pub port: u16,
}

impl Endpoint {
    /// `HOST:PORT` as daemons take it on their command line (`[v6]:PORT`; an empty host is
    /// every address, `0.0.0.0`).
    pub fn parse_host_port(s: &str) -> Result<Endpoint, String> {
        let (host, port) = s
            .rsplit_once(':')
            .ok_or_else(|| "expected HOST:PORT".to_owned())?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let port = port
            .parse()
            .map_err(|_| format!("`{port}` is not a port number"))?;
        Ok(Endpoint {
            host: if host.is_empty() { "0.0.0.0" } else { host }.to_owned(),
            port,
        })
    }
}

/// Where a Corbina daemon named `app` keeps its data by default: `$XDG_STATE_HOME/APP`, else
/// `$HOME/.local/state/APP`, else `./APP`.
pub fn default_state_dir(app: &str) -> std::path::PathBuf {
    let non_empty = |v: &str| std::env::var_os(v).filter(|s| !s.is_empty());
    if let Some(d) = non_empty("XDG_STATE_HOME") {
        return std::path::Path::new(&d).join(app);
    }
    if let Some(h) = non_empty("HOME") {
        return std::path::Path::new(&h).join(".local/state").join(app);
    }
    std::path::PathBuf::from(app)
}

/// A local (same-host) listen endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalEndpoint {
    /// [`TransportKind::Unix`] or [`TransportKind::Shm`].
    pub kind: TransportKind,
    /// The socket path; empty: one is made up in the temporary directory when binding.
    pub path: std::path::PathBuf,
}

impl Default for OrbConfig {
    fn default() -> Self {
        OrbConfig {
            init_refs: BTreeMap::new(),
            default_init_ref: None,
            endpoints: Vec::new(),
            ssl_endpoints: Vec::new(),
            ssl: SslConfig::default(),
            local_endpoints: Vec::new(),
            prefer_local: true,
            direct_collocation: true,
            publish_addresses: Vec::new(),
            giop_max_minor: 2,
            call_timeout: None,
            connect_timeout: Duration::from_secs(10),
            max_message_size: 256 << 20,
            max_value_nesting: None,
            max_incomplete_bytes: 64 << 20,
            fragment_size: None,
            byte_order: ByteOrder::NATIVE,
            max_strands_per_rope: 16,
            async_calls_per_strand: 64,
            ami_dispatch_threads: 4,
            max_server_connections: 4096,
            idle_timeout: Some(Duration::from_secs(120)),
            thread_model: ThreadModel::ThreadPerConnection,
            socket_buffer_size: None,
            forward_limit: 8,
            socket_permissions: None,
            oneway_sync_scope: SyncScope::WithTransport,
            oneway_buffering: BufferingConstraint::default(),
            endpoints_no_listen: Vec::new(),
            offer_bidir: false,
            accept_bidir: false,
            initializers: crate::interceptor::Initializers::default(),
            trace_level: 0,
            trace_invocations: false,
            log_filter: None,
            request_spans: false,
            request_metrics: false,
        }
    }
}

/// Why a configuration could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// An `-ORB…` argument that names no known option.
    #[error("unknown ORB option `{option}`{}", hint(.suggestion))]
    UnknownOption {
        /// The option as written, without any `=value`.
        option: String,
        /// The closest known option (`-ORB…`), if one is close.
        suggestion: Option<String>,
    },
    /// An option that needs a value came last, or was followed by another `-ORB…` option.
    #[error("ORB option `{option}` needs a value")]
    MissingValue {
        /// The option as written.
        option: String,
    },
    /// An option's value could not be used.
    #[error("bad value `{value}` for ORB option `{option}`: {reason}")]
    BadValue {
        /// The option as written.
        option: String,
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A `CORBINA_…` environment variable that names no known option.
    #[error("unknown environment variable `{var}`{}", hint(.suggestion))]
    UnknownEnv {
        /// The variable's name.
        var: String,
        /// The closest known variable, if one is close.
        suggestion: Option<String>,
    },
    /// A `CORBINA_…` environment variable whose value could not be used.
    #[error("bad value `{value}` in environment variable `{var}`: {reason}")]
    BadEnv {
        /// The variable's name.
        var: String,
        /// The value (or the part of a multi-valued one) that was rejected.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
}

fn hint(suggestion: &Option<String>) -> String {
    match suggestion {
        Some(s) => format!("; did you mean `{s}`?"),
        None => String::new(),
    }
}

impl OrbConfig {
    /// Adds (or replaces) initial reference `name`, like `-ORBInitRef name=url`.
    pub fn init_ref(mut self, name: impl Into<String>, url: impl Into<String>) -> Self {
        self.init_refs.insert(name.into(), url.into());
        self
    }

    /// Sets where names without an InitRef are looked up, like `-ORBDefaultInitRef`.
    pub fn default_init_ref(mut self, url: impl Into<String>) -> Self {
        self.default_init_ref = Some(url.into());
        self
    }

    /// Adds a listen endpoint (port 0: ephemeral).
    pub fn endpoint(mut self, host: impl Into<String>, port: u16) -> Self {
        self.endpoints.push(Endpoint {
            host: host.into(),
            port,
        });
        self
    }

    /// Adds a TLS endpoint (port 0: ephemeral), like `-ORBEndpoint giop:ssl:host:port`.
    pub fn ssl_endpoint(mut self, host: impl Into<String>, port: u16) -> Self {
        self.ssl_endpoints.push(Endpoint {
            host: host.into(),
            port,
        });
        self
    }

    /// Sets the trusted certificate authorities' PEM file (`-ORBsslCAFile`).
    pub fn ssl_ca_file(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.ssl.ca_file = Some(path.into());
        self
    }

    /// Sets a directory of trusted certificate authorities' PEM files (`-ORBsslCAPath`).
    pub fn ssl_ca_path(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.ssl.ca_path = Some(dir.into());
        self
    }

    /// Sets the PEM file with the private key and its certificate chain
    /// (`-ORBsslKeyFile`).
    pub fn ssl_key_file(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.ssl.key_file = Some(path.into());
        self
    }

    /// Sets the key file's password (`-ORBsslKeyPassword`; ignored for a clear key).
    pub fn ssl_key_password(mut self, password: impl Into<String>) -> Self {
        self.ssl.key_password = Some(password.into());
        self
    }

    /// Sets which certificates are checked (`-ORBsslVerifyMode`).
    pub fn ssl_verify_mode(mut self, mode: SslVerifyMode) -> Self {
        self.ssl.verify_mode = mode;
        self
    }

    /// Sets how long a server's TLS handshake may take (`-ORBsslAcceptTimeOut`).
    ///
    /// # Panics
    /// If `timeout` is zero.
    pub fn ssl_accept_timeout(mut self, timeout: Duration) -> Self {
        assert!(
            !timeout.is_zero(),
            "the TLS accept timeout must not be zero"
        );
        self.ssl.accept_timeout = timeout;
        self
    }

    /// Whether clients check the server certificate's name (`-ORBsslCheckHostName`).
    pub fn ssl_check_host_name(mut self, yes: bool) -> Self {
        self.ssl.check_host_name = yes;
        self
    }

    /// Adds a Unix-domain socket endpoint at `path`, like `-ORBListenEndpoints uiop://path`.
    pub fn unix_endpoint(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.local_endpoints.push(LocalEndpoint {
            kind: TransportKind::Unix,
            path: path.into(),
        });
        self
    }

    /// Adds a shared-memory endpoint with its rendezvous socket at `path`, like
    /// `-ORBListenEndpoints shmiop://path`.
    pub fn shm_endpoint(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.local_endpoints.push(LocalEndpoint {
            kind: TransportKind::Shm,
            path: path.into(),
        });
        self
    }

    /// Adds the shared-memory endpoint `shm:NAME` (its rendezvous socket is
    /// `corbina-shm-NAME.sock` in the temporary directory, or NAME if it is an absolute path).
    pub fn shm_endpoint_named(self, name: &str) -> Self {
        self.shm_endpoint(crate::config_args::shm_name_path(name))
    }

    /// Sets the permission bits of local endpoints' socket files (`-ORBSocketPermissions`).
    ///
    /// # Panics
    /// If `mode` has bits beyond `0o777`.
    pub fn socket_permissions(mut self, mode: Option<u32>) -> Self {
        assert!(
            mode.is_none_or(|m| m <= 0o777),
            "socket permissions are at most 0o777"
        );
        self.socket_permissions = mode;
        self
    }

    /// Whether clients use servers' published local endpoints (`-ORBPreferUnix`).
    pub fn prefer_local(mut self, yes: bool) -> Self {
        self.prefer_local = yes;
        self
    }

    /// Registers a Portable Interceptor initializer (`ORBInitializer`): it adds request
    /// and IOR interceptors and allocates `PICurrent` slots when the ORB is created.
    pub fn orb_initializer(
        mut self,
        initializer: std::sync::Arc<dyn crate::interceptor::OrbInitializer>,
    ) -> Self {
        self.initializers.list.push(initializer);
        self
    }

    /// Whether calls to this ORB's own objects go straight to the servant
    /// (`-ORBCollocation`).
    pub fn direct_collocation(mut self, yes: bool) -> Self {
        self.direct_collocation = yes;
        self
    }

    /// Adds an address to publish in IORs without listening on it
    /// (`-ORBendPointNoListen`).
    pub fn endpoint_no_listen(mut self, host: impl Into<String>, port: u16) -> Self {
        self.endpoints_no_listen.push(Endpoint {
            host: host.into(),
            port,
        });
        self
    }

    /// Whether this ORB's connections offer bidirectional GIOP
    /// (`-ORBofferBiDirectionalGIOP`).
    pub fn offer_bidir(mut self, yes: bool) -> Self {
        self.offer_bidir = yes;
        self
    }

    /// What the ORB logs to stderr (`-ORBtraceLevel`; see [`crate::trace`]).
    pub fn trace_level(mut self, level: u32) -> Self {
        self.trace_level = level;
        self
    }

    /// Logs every request (`-ORBtraceInvocations`).
    pub fn trace_invocations(mut self, yes: bool) -> Self {
        self.trace_invocations = yes;
        self
    }

    /// Logs what an `EnvFilter` selects to stderr (`CORBINA_LOG`).
    pub fn log_filter(mut self, filter: impl Into<String>) -> Self {
        self.log_filter = Some(filter.into());
        self
    }

    /// Gives every request a `tracing` span, for the application's own subscriber.
    pub fn request_spans(mut self, yes: bool) -> Self {
        self.request_spans = yes;
        self
    }

    /// Counts and times every request through the `metrics` facade (feature `metrics`;
    /// without it this does nothing).
    pub fn request_metrics(mut self, yes: bool) -> Self {
        self.request_metrics = yes;
        self
    }

    /// Whether this ORB's server takes clients' bidirectional GIOP offers
    /// (`-ORBacceptBiDirectionalGIOP`).
    pub fn accept_bidir(mut self, yes: bool) -> Self {
        self.accept_bidir = yes;
        self
    }

    /// Adds an address to publish in IORs (port `None`: the bound one).
    pub fn publish_address(mut self, host: impl Into<String>, port: Option<u16>) -> Self {
        self.publish_addresses.push((host.into(), port));
        self
    }

    /// Sets the highest GIOP minor version spoken (GIOP 1.`minor`).
    ///
    /// # Panics
    /// If `minor` is above 2.
    pub fn giop_max_minor(mut self, minor: u8) -> Self {
        assert!(minor <= 2, "GIOP 1.{minor} is not supported (at most 1.2)");
        self.giop_max_minor = minor;
        self
    }

    /// Sets the twoway call timeout (`None`: no timeout).
    pub fn call_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.call_timeout = timeout.into();
        self
    }

    /// Sets the connect timeout.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets the largest GIOP message accepted, in bytes.
    pub fn max_message_size(mut self, bytes: u32) -> Self {
        self.max_message_size = bytes;
        self
    }

    /// Sets how deeply values may nest (process-wide, see [`OrbConfig::max_value_nesting`]).
    pub fn max_value_nesting(mut self, levels: u32) -> Self {
        self.max_value_nesting = Some(levels);
        self
    }

    /// Sets the server-wide budget for bytes held in incomplete messages and reassembly.
    pub fn max_incomplete_bytes(mut self, bytes: usize) -> Self {
        self.max_incomplete_bytes = bytes;
        self
    }

    /// Sets the size above which outgoing messages are fragmented (`None` or 0: never).
    ///
    /// # Panics
    /// If the size is below 64 or not a multiple of 8 (and not 0).
    pub fn fragment_size(mut self, bytes: impl Into<Option<u32>>) -> Self {
        let bytes = bytes.into().filter(|&n| n != 0);
        if let Some(n) = bytes {
            assert!(
                n >= 64 && n % 8 == 0,
                "fragment size {n} must be at least 64 and a multiple of 8"
            );
        }
        self.fragment_size = bytes;
        self
    }

    /// Sets the byte order of the messages and IORs this ORB writes.
    pub fn byte_order(mut self, order: ByteOrder) -> Self {
        self.byte_order = order;
        self
    }

    /// Sets the most connections to one peer address.
    ///
    /// # Panics
    /// If `n` is 0.
    pub fn max_strands_per_rope(mut self, n: usize) -> Self {
        assert!(n >= 1, "max_strands_per_rope must be at least 1");
        self.max_strands_per_rope = n;
        self
    }

    /// Sets how many asynchronous calls in flight saturate a connection (0: asynchronous
    /// calls to an address share one connection).
    pub fn async_calls_per_strand(mut self, n: usize) -> Self {
        self.async_calls_per_strand = n;
        self
    }

    /// Sets the number of AMI reply-dispatcher threads.
    ///
    /// # Panics
    /// If `n` is 0.
    pub fn ami_dispatch_threads(mut self, n: usize) -> Self {
        assert!(n >= 1, "ami_dispatch_threads must be at least 1");
        self.ami_dispatch_threads = n;
        self
    }

    /// Sets the most server connections accepted at once.
    ///
    /// # Panics
    /// If `n` is 0.
    pub fn max_connections(mut self, n: usize) -> Self {
        assert!(n >= 1, "max_connections must be at least 1");
        self.max_server_connections = n;
        self
    }

    /// Sets the idle connection scan period (`None`: idle connections are kept).
    pub fn idle_timeout(mut self, period: impl Into<Option<Duration>>) -> Self {
        self.idle_timeout = period.into();
        self
    }

    /// Serves connections with a pool of `n` threads; 0: one thread per connection.
    pub fn thread_pool(mut self, n: usize) -> Self {
        self.thread_model = match n {
            0 => ThreadModel::ThreadPerConnection,
            n => ThreadModel::Pool(n),
        };
        self
    }

    /// Sets SO_SNDBUF/SO_RCVBUF for every connection (`None` or 0: the kernel's).
    pub fn socket_buffer_size(mut self, bytes: impl Into<Option<usize>>) -> Self {
        self.socket_buffer_size = bytes.into().filter(|&n| n != 0);
        self
    }

    /// Sets the LOCATION_FORWARD hops followed per call.
    pub fn forward_limit(mut self, n: u32) -> Self {
        self.forward_limit = n;
        self
    }

    /// Buffers oneways within `bounds` (`Some`: [`SyncScope::None`]) or writes each before
    /// its call returns (`None`: [`SyncScope::WithTransport`], the default).
    ///
    /// # Panics
    /// If a bound is 0.
    pub fn oneway_buffering(mut self, bounds: Option<BufferingConstraint>) -> Self {
        match bounds {
            Some(b) => {
                assert!(
                    b.max_bytes >= 1 && b.max_count >= 1 && !b.max_delay.is_zero(),
                    "oneway buffering bounds must be at least 1"
                );
                self.oneway_sync_scope = SyncScope::None;
                self.oneway_buffering = b;
            }
            None => self.oneway_sync_scope = SyncScope::WithTransport,
        }
        self
    }

    /// The bounds oneways are buffered within, or `None` when they are not buffered.
    pub fn oneway_buffering_bounds(&self) -> Option<BufferingConstraint> {
        match self.oneway_sync_scope {
            SyncScope::None => Some(self.oneway_buffering),
            SyncScope::WithTransport => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_sets_every_field() {
        let c = OrbConfig::default()
            .init_ref("NameService", "corbaloc::h:2809/NameService")
            .init_ref("NameService", "corbaloc::other:2809/NameService")
            .default_init_ref("corbaloc::h:2809")
            .endpoint("0.0.0.0", 2809)
            .endpoint("::1", 0)
            .publish_address("gw.example.com", Some(2809))
            .publish_address("10.0.0.1", None)
            .giop_max_minor(1)
            .call_timeout(Duration::from_millis(500))
            .connect_timeout(Duration::from_secs(3))
            .max_message_size(1 << 20)
            .fragment_size(4096)
            .max_strands_per_rope(4)
            .max_connections(100)
            .idle_timeout(None)
            .thread_pool(8)
            .socket_buffer_size(1 << 16)
            .forward_limit(3)
            .oneway_buffering(Some(BufferingConstraint {
                max_bytes: 100,
                max_count: 2,
                max_delay: Duration::from_micros(50),
            }));
        assert_eq!(c.init_refs.len(), 1);
        assert_eq!(
            c.init_refs["NameService"],
            "corbaloc::other:2809/NameService"
        );
        assert_eq!(c.default_init_ref.as_deref(), Some("corbaloc::h:2809"));
        let ep = |host: &str, port| Endpoint {
            host: host.into(),
            port,
        };
        assert_eq!(c.endpoints, [ep("0.0.0.0", 2809), ep("::1", 0)]);
        assert_eq!(
            c.publish_addresses,
            [
                ("gw.example.com".to_string(), Some(2809)),
                ("10.0.0.1".to_string(), None)
            ]
        );
        assert_eq!(c.giop_max_minor, 1);
        assert_eq!(c.call_timeout, Some(Duration::from_millis(500)));
        assert_eq!(c.connect_timeout, Duration::from_secs(3));
        assert_eq!(c.max_message_size, 1 << 20);
        assert_eq!(c.fragment_size, Some(4096));
        assert_eq!(c.max_strands_per_rope, 4);
        assert_eq!(c.max_server_connections, 100);
        assert_eq!(c.idle_timeout, None);
        assert_eq!(c.thread_model, ThreadModel::Pool(8));
        assert_eq!(c.socket_buffer_size, Some(1 << 16));
        assert_eq!(c.forward_limit, 3);
        assert_eq!(c.oneway_sync_scope, SyncScope::None);
        assert_eq!(
            c.oneway_buffering_bounds(),
            Some(BufferingConstraint {
                max_bytes: 100,
                max_count: 2,
                max_delay: Duration::from_micros(50),
            })
        );
        let off = c.oneway_buffering(None);
        assert_eq!(off.oneway_buffering_bounds(), None);
        // The bounds are kept for when buffering is turned on again.
        assert_eq!(off.oneway_buffering.max_count, 2);
    }

    #[test]
    #[should_panic(expected = "at least 1")]
    fn builder_rejects_zero_oneway_bounds() {
        let _ = OrbConfig::default().oneway_buffering(Some(BufferingConstraint {
            max_count: 0,
            ..BufferingConstraint::default()
        }));
    }

    #[test]
    fn builder_zero_and_none_mean_off() {
        let c = OrbConfig::default()
            .call_timeout(Duration::from_secs(1))
            .call_timeout(None)
            .fragment_size(0)
            .idle_timeout(Duration::from_secs(5))
            .thread_pool(0)
            .socket_buffer_size(0);
        assert_eq!(c.call_timeout, None);
        assert_eq!(c.fragment_size, None);
        assert_eq!(c.idle_timeout, Some(Duration::from_secs(5)));
        assert_eq!(c.thread_model, ThreadModel::ThreadPerConnection);
        assert_eq!(c.socket_buffer_size, None);
        assert_eq!(OrbConfig::default().fragment_size(None).fragment_size, None);
    }

    #[test]
    #[should_panic(expected = "GIOP 1.3")]
    fn builder_rejects_giop_1_3() {
        let _ = OrbConfig::default().giop_max_minor(3);
    }

    #[test]
    #[should_panic(expected = "multiple of 8")]
    fn builder_rejects_odd_fragment_size() {
        let _ = OrbConfig::default().fragment_size(100);
    }

    #[test]
    #[should_panic(expected = "at least 1")]
    fn builder_rejects_zero_strands() {
        let _ = OrbConfig::default().max_strands_per_rope(0);
    }

    #[test]
    #[should_panic(expected = "at least 1")]
    fn builder_rejects_zero_connections() {
        let _ = OrbConfig::default().max_connections(0);
    }
}
