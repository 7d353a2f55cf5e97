//! The `corbina-ttcp` command line as clap (derive) declares it: `--help`, `--version`, usage
//! errors with exit code 2. A command line clap accepts is then read by the subcommand's own
//! parser, which keeps the options' order-dependent meanings (`--min-kb` after `--kbs`…)
//! and the suite's child command lines exactly as they were.

// The fields are declarations for clap: the subcommands' own parsers read the values.
#![allow(dead_code)]

use clap::{Args, Parser, Subcommand};

const AFTER_HELP: &str = "\
ORB options (-ORBEndpoint, -ORBtraceLevel N, -ORBssl…) may come anywhere; they are taken out \
before the rest is parsed, as Orb::init does, and configure server, client and bidir-server.";

/// The seeds' benchmark experiments over Corbina.
#[derive(Parser)]
#[command(name = "corbina-ttcp", version, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Serve idl/bench.idl; one IOR per line to the IOR file (stdout without one)
    #[command(args_override_self = true)]
    Server(ServerArgs),
    /// Check a bench.idl server (--check) or run experiments against it (--mode …)
    #[command(args_override_self = true)]
    Client(ClientArgs),
    /// A Registrar of idl/bidir.idl accepting bidirectional GIOP
    #[command(args_override_self = true)]
    BidirServer(BidirServerArgs),
    /// The bidirectional experiment's JSON records on stdout
    #[command(args_override_self = true)]
    BidirClient(BidirClientArgs),
    /// Corbina's event service on loopback (the events experiment's channel)
    #[command(args_override_self = true)]
    EventsChannel(EventsChannelArgs),
    /// One point of the events experiment against any CosEvent channel: a JSON record
    #[command(args_override_self = true)]
    EventsClient(EventsClientArgs),
    /// Run every experiment on loopback and report ratios against the baselines
    #[command(args_override_self = true)]
    Suite(SuiteArgs),
    /// The raw-socket baseline's server (started by the suite)
    #[command(hide = true, args_override_self = true)]
    SockServer(SockServerArgs),
    /// The raw-socket baseline's client (started by the suite)
    #[command(hide = true, args_override_self = true)]
    SockClient(SockClientArgs),
    /// N null twoway calls and nothing else (the client the suite counts instructions of)
    #[command(hide = true, args_override_self = true)]
    Ping(PingArgs),
}

impl Command {
    /// The subcommand's name as typed.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Server(_) => "server",
            Command::Client(_) => "client",
            Command::BidirServer(_) => "bidir-server",
            Command::BidirClient(_) => "bidir-client",
            Command::EventsChannel(_) => "events-channel",
            Command::EventsClient(_) => "events-client",
            Command::Suite(_) => "suite",
            Command::SockServer(_) => "sock-server",
            Command::SockClient(_) => "sock-client",
            Command::Ping(_) => "ping",
        }
    }
}

#[derive(Args)]
pub struct ServerArgs {
    /// Where to listen (repeatable): HOST:PORT, ssl:HOST:PORT, unix:/PATH, shm:NAME,
    /// uiop:///PATH, shmiop:///PATH
    #[arg(long, value_name = "ENDPOINT")]
    endpoint: Vec<String>,
    /// How many objects to activate
    #[arg(long, value_name = "N")]
    objects: Option<usize>,
    /// Serve through the DSI instead of the static skeleton
    #[arg(long)]
    dsi: bool,
    /// Write the IORs to FILE (renamed into place when complete)
    #[arg(long, value_name = "FILE")]
    ior_file: Option<String>,
    /// Exit after SECS (the suite's safety net)
    #[arg(long, value_name = "SECS", hide = true)]
    lifetime: Option<f64>,
}

/// The experiments' options (`ExpOpts::parse_one`).
#[derive(Args)]
pub struct ExperimentArgs {
    /// Experiments: lat, payload, thr, scal, conc, all (comma-separated)
    #[arg(long, value_name = "LIST")]
    mode: Option<String>,
    /// Label of the records
    #[arg(long, value_name = "L")]
    label: Option<String>,
    /// Calls per latency point
    #[arg(long, value_name = "N")]
    count: Option<f64>,
    /// Warm-up calls before each point
    #[arg(long, value_name = "N")]
    warmup: Option<f64>,
    /// Megabytes per throughput point
    #[arg(long, value_name = "X")]
    total_mb: Option<f64>,
    /// Least calls per throughput point
    #[arg(long, value_name = "N")]
    min_calls: Option<f64>,
    /// Most seconds per throughput point
    #[arg(long, value_name = "S")]
    max_point_s: Option<f64>,
    /// Smallest buffer, KB (powers of 2 up to --max-kb)
    #[arg(long, value_name = "K")]
    min_kb: Option<f64>,
    /// Largest buffer, KB
    #[arg(long, value_name = "K")]
    max_kb: Option<f64>,
    /// Buffer sizes, KB (comma-separated)
    #[arg(long, value_name = "LIST")]
    kbs: Option<String>,
    /// Data types: octet, char, short, long, double, struct (comma-separated)
    #[arg(long, value_name = "LIST")]
    types: Option<String>,
    /// Throughput call modes: oneway, twoway
    #[arg(long, value_name = "LIST")]
    modes: Option<String>,
    /// Payload sizes, bytes (comma-separated)
    #[arg(long, value_name = "LIST")]
    sizes: Option<String>,
    /// Payload data types (comma-separated)
    #[arg(long, value_name = "LIST")]
    payload_types: Option<String>,
    /// Objects for the scalability experiment
    #[arg(long, value_name = "N")]
    nobj: Option<f64>,
    /// Calls per scalability point
    #[arg(long, value_name = "N")]
    scal_calls: Option<f64>,
    /// Client threads (comma-separated)
    #[arg(long, value_name = "LIST")]
    threads: Option<String>,
    /// Proxies per thread or one shared: own, shared
    #[arg(long, value_name = "LIST")]
    sharing: Option<String>,
    /// Seconds per concurrency point
    #[arg(long, value_name = "S")]
    conc_seconds: Option<f64>,
    /// static, dii, dii_reuse or dsi
    #[arg(long, value_name = "MODE")]
    invocation: Option<String>,
}

#[derive(Args)]
pub struct ClientArgs {
    /// The server: IOR:…, corbaloc:…, or a file of IORs, one per line
    #[arg(long, value_name = "IOR|FILE|corbaloc")]
    ior: String,
    /// Call every operation once with known values; JSON lines like omni_client
    #[arg(long)]
    check: bool,
    #[command(flatten)]
    experiments: ExperimentArgs,
}

#[derive(Args)]
pub struct BidirServerArgs {
    /// Write the IOR to FILE
    #[arg(long, value_name = "FILE")]
    ior_file: Option<String>,
    /// Exit after SECS
    #[arg(long, value_name = "SECS")]
    lifetime: Option<f64>,
}

#[derive(Args)]
pub struct BidirClientArgs {
    /// The Registrar: IOR:…, corbaloc:…, or a file holding one
    #[arg(long, value_name = "IOR|FILE")]
    ior: String,
    /// Calls per point
    #[arg(long, value_name = "N")]
    count: Option<usize>,
}

#[derive(Args)]
pub struct EventsChannelArgs {
    /// Write the default channel's IOR to FILE (stdout without one)
    #[arg(long, value_name = "FILE")]
    pub ior_file: Option<std::path::PathBuf>,
    /// The service's database directory (default: a new one under the temporary directory)
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<std::path::PathBuf>,
    /// Exit after SECS
    #[arg(long, value_name = "SECS")]
    pub lifetime: Option<f64>,
    /// Pushes in flight per push consumer (the service's `--push-window`; 1 keeps strict order)
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub push_window: usize,
}

#[derive(Args)]
pub struct EventsClientArgs {
    /// The channel: IOR:…/corbaloc:… of an event channel, omnievents:URL (a new channel from
    /// omniEvents' factory at URL) or notify:REF (a CosNotification factory's first channel)
    #[arg(long, value_name = "REF")]
    pub channel: String,
    /// The implementation name in the record
    #[arg(long = "impl", value_name = "NAME", default_value = "corbina")]
    pub implementation: String,
    /// The events: any (CosEvent), or structured (CosNotification; needs notify:REF)
    #[arg(long, value_name = "KIND", value_enum, default_value = "any")]
    pub kind: corbina_ttcp::events_bench::Kind,
    /// Give each consumer's proxy an ETCL filter every event passes (structured only)
    #[arg(long)]
    pub filter: bool,
    /// Push consumers
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub consumers: usize,
    /// Events pushed as fast as the channel takes them
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub events: usize,
    /// Bytes per event (at least 8)
    #[arg(long, value_name = "BYTES", default_value_t = 100)]
    pub size: usize,
    /// Add a consumer that sleeps 100 ms per push
    #[arg(long)]
    pub slow: bool,
    /// Events pushed one at a time for the latency
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub samples: usize,
    /// Floods, of which the record gives the median
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub rounds: usize,
}

#[derive(Args)]
pub struct SuiteArgs {
    /// The short run (minutes, not hours)
    #[arg(long)]
    quick: bool,
    /// Also write every record as JSON lines to FILE
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
    /// Draw the plots into DIR
    #[arg(long, value_name = "DIR")]
    plot: Option<String>,
    /// Measure omniORB side by side (builds peers/)
    #[arg(long, value_name = "omniorb")]
    peer: Option<String>,
    /// Megabytes per throughput point
    #[arg(long, value_name = "X")]
    total_mb: Option<f64>,
    /// Most seconds per point
    #[arg(long, value_name = "S")]
    max_seconds: Option<f64>,
    /// Calls per latency point
    #[arg(long, value_name = "N")]
    count: Option<f64>,
    /// Most objects in the scalability experiment
    #[arg(long, value_name = "N")]
    scal_max: Option<f64>,
    /// Most client threads in the concurrency experiment
    #[arg(long, value_name = "N")]
    threads_max: Option<f64>,
    /// CPU placement of server and client: same, split, none
    #[arg(long, value_name = "same|split|none")]
    pin: Option<String>,
    /// Rounds of the latency experiment (medians over rounds)
    #[arg(long, value_name = "N")]
    rounds: Option<f64>,
    /// Count instructions per call with callgrind
    #[arg(long)]
    callgrind: bool,
    /// Transports besides tcp: tcp, unix, shm, tls (comma-separated)
    #[arg(long, value_name = "LIST")]
    transports: Option<String>,
    /// Only these experiments: latency, payload, throughput, concurrency, callgrind,
    /// scalability, async, bidir (comma-separated)
    #[arg(long, value_name = "LIST")]
    only: Option<String>,
    /// Report and plot an earlier run's JSON lines again
    #[arg(long, value_name = "FILE", hide = true)]
    from_json: Option<String>,
}

#[derive(Args)]
pub struct SockServerArgs {
    #[arg(long, value_name = "FILE")]
    ready: String,
    #[arg(long, value_name = "PATH")]
    unix: Option<String>,
    #[arg(long, value_name = "SECS")]
    lifetime: Option<f64>,
}

#[derive(Args)]
pub struct SockClientArgs {
    #[arg(long, value_name = "tcp:HOST:PORT|unix:PATH")]
    addr: String,
    #[command(flatten)]
    experiments: ExperimentArgs,
}

#[derive(Args)]
pub struct PingArgs {
    #[arg(value_name = "IOR|FILE")]
    target: String,
    #[arg(value_name = "N")]
    calls: u64,
    /// static, dii, dii_reuse or async
    #[arg(long, value_name = "MODE")]
    invocation: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_declaration_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn the_suites_child_command_lines_are_accepted() {
        for line in [
            "corbina-ttcp server --endpoint 127.0.0.1:0 --endpoint unix:/tmp/x --objects 3 --ior-file f --lifetime 30 --dsi",
            "corbina-ttcp client --ior f --mode lat,thr --count 100 --kbs 1,2 --min-kb 1 --max-kb 8 --types long --invocation dii --label x",
            "corbina-ttcp sock-client --addr tcp:127.0.0.1:1 --mode lat --count 10",
            "corbina-ttcp sock-server --ready f --unix /tmp/s --lifetime 9",
            "corbina-ttcp ping f 1000 --invocation dii_reuse",
            "corbina-ttcp suite --quick --only latency,bidir --transports tcp,unix --pin split",
            "corbina-ttcp bidir-client --ior f --count 10",
            "corbina-ttcp events-client --channel IOR:00 --consumers 10 --slow",
            "corbina-ttcp events-client --channel notify:IOR:00 --kind structured --filter",
        ] {
            let r = Cli::try_parse_from(line.split(' '));
            assert!(r.is_ok(), "{line}: {}", r.err().map(|e| e.to_string()).unwrap_or_default());
        }
        assert!(Cli::try_parse_from(["corbina-ttcp", "server", "--bogus"]).is_err());
        assert!(Cli::try_parse_from(["corbina-ttcp", "client", "--count", "1"]).is_err());
    }
}
