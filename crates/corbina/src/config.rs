//! ORB configuration: what `ORB_init` reads from `-ORB…` arguments, `CORBINA_…` environment
//! variables and the builder.

use std::collections::BTreeMap;
use std::time::Duration;

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
    /// `-ORBFragmentSize bytes`: outgoing messages larger than this are sent as GIOP 1.1/1.2
    /// fragments (default: never fragment; large blocks go out with vectored writes).
    pub fragment_size: Option<u32>,
    /// `-ORBMaxStrandsPerRope n`: most connections to one peer address; more concurrent calls
    /// wait (default 16).
    pub max_strands_per_rope: usize,
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
}

/// A listen endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Host name or address to bind (`0.0.0.0`, `::`, `127.0.0.1`, a name).
    pub host: String,
    /// Port; 0 for an ephemeral one.
    pub port: u16,
}

impl Default for OrbConfig {
    fn default() -> Self {
        OrbConfig {
            init_refs: BTreeMap::new(),
            default_init_ref: None,
            endpoints: Vec::new(),
            publish_addresses: Vec::new(),
            giop_max_minor: 2,
            call_timeout: None,
            connect_timeout: Duration::from_secs(10),
            max_message_size: 256 << 20,
            fragment_size: None,
            max_strands_per_rope: 16,
            max_server_connections: 4096,
            idle_timeout: Some(Duration::from_secs(120)),
            thread_model: ThreadModel::ThreadPerConnection,
            socket_buffer_size: None,
            forward_limit: 8,
        }
    }
}
