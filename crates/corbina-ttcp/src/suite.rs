//! `corbina-ttcp suite`: every experiment on loopback for Corbina, the raw-socket baseline
//! and (with `--peer omniorb`) the omniORB peer, in one run; a table, the targets, JSON
//! lines and plots.
//!
//! Every server and every client is its own process (this binary re-executed, or the
//! peer's), started and stopped here by PID, each with a lifetime limit of its own. That is
//! what lets the CPU column separate client and server: the client's CPU is
//! `getrusage(RUSAGE_CHILDREN)` across its wait (µs resolution), the server's the
//! `/proc/<pid>/stat` utime+stime delta across the client's run (10 ms ticks; the latency
//! loops run long enough for that to be ≤ 2 %). Both ORBs are measured the same way.

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use crate::experiments::{powers, Invocation, TYPES};
use crate::record::{from_omni_line, Record, CORBINA, OMNIORB, SOCKET};
use crate::report;
use crate::stats::median_of;
use crate::sys::{
    allowed_cpus, children_cpu_seconds, pin_process, proc_cpu_seconds, proc_rss_bytes,
    with_affinity,
};

/// Threads of the pool server model in the concurrency experiment.
const POOL: usize = 8;

/// Where clients and servers run during the latency, CPU-per-call and scalability
/// experiments (throughput and concurrency always run where the scheduler puts them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pin {
    /// Client and server on the same CPU (as `peers/run-baseline.sh PIN_MODES=same`): no
    /// cross-CPU wake-up per call, the steadiest latency on a small VM.
    Same,
    /// Server on one CPU, client on another.
    Split,
    /// The scheduler decides.
    None,
}

impl Pin {
    /// The name in options and notes.
    pub fn name(self) -> &'static str {
        match self {
            Pin::Same => "same",
            Pin::Split => "split",
            Pin::None => "none",
        }
    }
}

/// Suite options.
#[derive(Debug, Clone)]
pub struct SuiteOpts {
    /// The short suite.
    pub quick: bool,
    /// Where to write JSON lines.
    pub json: Option<PathBuf>,
    /// Where to write plots.
    pub plot: Option<PathBuf>,
    /// Run the omniORB peer.
    pub peer: bool,
    /// Hidden: payload MB per throughput point.
    pub total_mb: Option<f64>,
    /// Hidden: seconds cap per throughput point (and per concurrency point).
    pub max_seconds: Option<f64>,
    /// Hidden: timed calls per latency test.
    pub count: Option<usize>,
    /// Hidden: largest object count.
    pub scal_max: Option<u64>,
    /// Hidden: most client threads.
    pub threads_max: Option<u64>,
    /// CPU placement for the latency experiments.
    pub pin: Pin,
    /// Interleaved rounds of the latency loops (medians over rounds are reported).
    pub rounds: Option<usize>,
    /// Count client instructions per null call under callgrind.
    pub callgrind: bool,
    /// Hidden: no run, the records of an earlier `--json` file.
    pub from_json: Option<PathBuf>,
    /// Transports Corbina is measured over (`tcp`, the reference, always first).
    pub transports: Vec<&'static str>,
    /// `--only`: the experiments to run (`None`: all of them).
    pub only: Option<Vec<&'static str>>,
}

/// The experiments `--only` can pick, in run order (`latency` is the interleaved pinned
/// rounds: latency, oneway rate and CPU per call; `scalability` includes memory).
pub const EXPERIMENTS: [&str; 9] = [
    "latency",
    "payload",
    "throughput",
    "concurrency",
    "callgrind",
    "scalability",
    "async",
    "bidir",
    "events",
];

/// Calls per point of the async experiment (at least 3× the calls outstanding).
const ASYNC_CALLS: usize = 20_000;

/// Calls per point of the bidirectional experiment (fewer when the latency loops are).
const BIDIR_CALLS: usize = 2_000;

/// One point of the events experiment.
#[derive(Debug, Clone, Copy)]
struct EventPoint {
    consumers: usize,
    /// Bytes per event.
    size: usize,
    /// One more consumer, sleeping 100 ms per push.
    slow: bool,
    kind: crate::events_bench::Kind,
    /// A filter on each consumer's proxy (structured events).
    filter: bool,
}

const fn any_point(consumers: usize, size: usize, slow: bool) -> EventPoint {
    EventPoint {
        consumers,
        size,
        slow,
        kind: crate::events_bench::Kind::Any,
        filter: false,
    }
}

const fn structured_point(size: usize, filter: bool) -> EventPoint {
    EventPoint {
        consumers: 10,
        size,
        slow: false,
        kind: crate::events_bench::Kind::Structured,
        filter,
    }
}

/// The events experiment's points.
const EVENT_POINTS: [EventPoint; 8] = [
    any_point(1, 100, false),
    any_point(10, 100, false),
    any_point(100, 100, false),
    any_point(10, 10_240, false),
    any_point(10, 100, true),
    structured_point(100, false),
    structured_point(10_240, false),
    structured_point(100, true),
];

/// Where an implementation's channels are, as `events-client --channel` takes them: its
/// CosEvent channel, and its notification channel factory if it has one.
struct EventChannels {
    any: String,
    notify: Option<String>,
}

/// Events a flood pushes: about `deliveries` in all, at most 10,000 events.
fn flood_events(deliveries: usize, consumers: usize) -> usize {
    (deliveries / consumers.max(1)).clamp(1, 10_000)
}

/// `--only latency,scalability`: the list, checked.
fn parse_only(v: &str) -> Result<Vec<&'static str>, String> {
    let mut out = Vec::new();
    for name in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let e = EXPERIMENTS
            .into_iter()
            .find(|e| *e == name)
            .ok_or_else(|| format!("--only: one of {}, not {name}", EXPERIMENTS.join(", ")))?;
        if !out.contains(&e) {
            out.push(e);
        }
    }
    if out.is_empty() {
        return Err("--only needs at least one experiment".into());
    }
    Ok(out)
}

/// New connections opened (each timed to the end of its first call) per transport.
const NEW_CONNECTIONS: usize = 200;

/// Every transport the suite knows, in report order.
pub const TRANSPORTS: [&str; 4] = ["tcp", "unix", "shm", "tls"];

/// `--transports tcp,unix,shm,tls`: the list, checked (tcp, the reference every ratio is
/// formed against, must be there).
fn parse_transports(v: &str) -> Result<Vec<&'static str>, String> {
    let mut out = Vec::new();
    for name in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let t = TRANSPORTS
            .into_iter()
            .find(|t| *t == name)
            .ok_or_else(|| format!("--transports: tcp, unix, shm or tls, not {name}"))?;
        if !out.contains(&t) {
            out.push(t);
        }
    }
    if !out.contains(&"tcp") {
        return Err("--transports must include tcp (the reference of every ratio)".into());
    }
    // Report order, tcp first.
    Ok(TRANSPORTS.into_iter().filter(|t| out.contains(t)).collect())
}

fn parse(args: &[String]) -> Result<SuiteOpts, String> {
    let mut o = SuiteOpts {
        quick: false,
        json: None,
        plot: None,
        peer: false,
        total_mb: None,
        max_seconds: None,
        count: None,
        scal_max: None,
        threads_max: None,
        pin: Pin::Same,
        rounds: None,
        callgrind: false,
        from_json: None,
        transports: TRANSPORTS.to_vec(),
        only: None,
    };
    let mut i = 0;
    while i < args.len() {
        let flag = args[i].as_str();
        let mut val = || -> Result<String, String> {
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        let numf = |v: String| v.parse::<f64>().map_err(|_| format!("{flag}: bad number"));
        match flag {
            "--quick" => o.quick = true,
            "--json" => o.json = Some(val()?.into()),
            "--plot" => o.plot = Some(val()?.into()),
            "--peer" => match val()?.as_str() {
                "omniorb" | "omniORB" => o.peer = true,
                other => return Err(format!("unknown peer {other} (only omniorb)")),
            },
            "--total-mb" => o.total_mb = Some(numf(val()?)?),
            "--max-seconds" => o.max_seconds = Some(numf(val()?)?),
            "--count" => o.count = Some(numf(val()?)? as usize),
            "--scal-max" => o.scal_max = Some(numf(val()?)? as u64),
            "--threads-max" => o.threads_max = Some(numf(val()?)? as u64),
            "--pin" => {
                o.pin = match val()?.as_str() {
                    "same" => Pin::Same,
                    "split" => Pin::Split,
                    "none" => Pin::None,
                    other => return Err(format!("--pin: same, split or none, not {other}")),
                }
            }
            "--rounds" => o.rounds = Some((numf(val()?)? as usize).max(1)),
            "--callgrind" => o.callgrind = true,
            "--from-json" => o.from_json = Some(val()?.into()),
            "--transports" => o.transports = parse_transports(&val()?)?,
            "--only" => o.only = Some(parse_only(&val()?)?),
            other => return Err(format!("unknown suite option {other}")),
        }
        i += 1;
    }
    Ok(o)
}

/// The knobs one run uses.
#[derive(Debug, Clone)]
struct Plan {
    kbs: Vec<u64>,
    total_mb: f64,
    min_calls: u64,
    max_point_s: f64,
    count: usize,
    warmup: usize,
    /// Timed calls per latency loop in each round.
    lat_count: usize,
    rounds: usize,
    /// Types of the DII/DSI throughput runs.
    dyn_types: Vec<&'static str>,
    /// Call counts of the two callgrind runs per client.
    callgrind_calls: (usize, usize),
    payload_count: usize,
    sizes: Vec<u64>,
    objects: Vec<u64>,
    scal_calls: usize,
    threads: Vec<u64>,
    conc_seconds: f64,
    /// Interleaved rounds of the concurrency clients (medians over rounds are reported).
    conc_rounds: usize,
    /// Deliveries (events × consumers) per flood of the events experiment.
    event_deliveries: usize,
    /// Paced events per point of the events experiment (the latency).
    event_samples: usize,
}

impl Plan {
    fn new(o: &SuiteOpts) -> Plan {
        let mut p = if o.quick {
            Plan {
                kbs: powers(1, 1024, 4),
                total_mb: 16.0,
                min_calls: 20,
                max_point_s: 0.25,
                count: 20000,
                warmup: 1000,
                lat_count: 20000,
                rounds: 7,
                dyn_types: TYPES.to_vec(),
                callgrind_calls: (2000, 12000),
                payload_count: 5000,
                sizes: powers(1, 1024, 4),
                objects: vec![1, 100, 1000, 10000],
                scal_calls: 20000,
                threads: vec![1, 2, 8, 64, 512],
                conc_seconds: 0.5,
                conc_rounds: 3,
                event_deliveries: 20_000,
                event_samples: 100,
            }
        } else {
            Plan {
                kbs: powers(1, 1024, 2),
                total_mb: 64.0,
                min_calls: 50,
                max_point_s: 2.0,
                count: 20000,
                warmup: 1000,
                lat_count: 20000,
                rounds: 11,
                dyn_types: TYPES.to_vec(),
                callgrind_calls: (5000, 50000),
                payload_count: 10000,
                sizes: powers(1, 1024, 2),
                objects: vec![1, 100, 1000, 10000, 100_000, 1_000_000],
                scal_calls: 20000,
                threads: vec![1, 2, 8, 64, 512],
                conc_seconds: 1.0,
                conc_rounds: 5,
                event_deliveries: 80_000,
                event_samples: 400,
            }
        };
        if let Some(mb) = o.total_mb {
            p.total_mb = mb;
            p.min_calls = p.min_calls.min(5);
        }
        if let Some(s) = o.max_seconds {
            p.max_point_s = s;
            p.conc_seconds = s.max(0.01);
        }
        if let Some(c) = o.count {
            p.count = c.max(1);
            p.lat_count = c.max(1);
            p.warmup = (c / 20).max(1);
            p.callgrind_calls = ((c / 10).max(1), c.max(2));
            p.payload_count = (c / 5).max(1);
            p.scal_calls = c.max(1);
            p.event_deliveries = (c * 4).max(1);
            p.event_samples = (c / 5).max(2);
        }
        if let Some(m) = o.scal_max {
            p.objects.retain(|&n| n <= m.max(1));
        }
        if let Some(m) = o.threads_max {
            p.threads.retain(|&n| n <= m.max(1));
        }
        if let Some(r) = o.rounds {
            p.rounds = r;
            p.conc_rounds = p.conc_rounds.min(r);
        }
        p
    }
}

/// A child process killed (by its PID) and reaped when dropped.
struct Proc {
    child: Child,
    what: String,
}

impl Proc {
    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Progress on stderr: a bar on a terminal, a line per stage otherwise.
struct Progress {
    total: usize,
    done: usize,
    tty: bool,
    start: Instant,
    stage: String,
}

impl Progress {
    fn stage(&mut self, s: &str) {
        self.stage = s.to_owned();
        if self.tty {
            self.draw();
        } else {
            eprintln!(
                "[corbina-ttcp {:>5.1}s] {s}",
                self.start.elapsed().as_secs_f64()
            );
        }
    }

    fn tick(&mut self) {
        self.done += 1;
        if self.tty {
            self.draw();
        }
    }

    fn draw(&self) {
        let width = 30;
        let frac = (self.done as f64 / self.total.max(1) as f64).min(1.0);
        let fill = (frac * width as f64) as usize;
        let mut e = std::io::stderr().lock();
        let _ = write!(
            e,
            "\r\x1b[K[{}{}] {:>4}/{} {:>5.0}s {}",
            "#".repeat(fill),
            " ".repeat(width - fill),
            self.done,
            self.total,
            self.start.elapsed().as_secs_f64(),
            self.stage
        );
        let _ = e.flush();
    }

    fn finish(&self) {
        if self.tty {
            eprintln!();
        }
    }
}

struct Ctx {
    exe: PathBuf,
    dir: PathBuf,
    plan: Plan,
    progress: Progress,
    records: Vec<Record>,
    lifetime: u64,
    /// CPUs for servers and clients while `pinned` (`None`: no pinning).
    server_cpus: Option<Vec<usize>>,
    client_cpus: Option<Vec<usize>>,
    pinned: bool,
    pin: Pin,
    /// The quick suite (local transports: latency loops and octet throughput only).
    quick: bool,
    /// The transports measured besides TCP (`unix`, `shm`, `tls`).
    locals: Vec<&'static str>,
    /// With `tls` among them: the run's throwaway CA and server key file.
    tls: Option<TlsFiles>,
    /// `--only`: the experiments to run (`None`: all).
    only: Option<Vec<&'static str>>,
}

/// A throwaway CA and a server certificate for 127.0.0.1 (rcgen), written to the run's
/// temporary directory: the TLS rows' servers and clients use them.
struct TlsFiles {
    ca: PathBuf,
    key: PathBuf,
}

impl TlsFiles {
    fn make(dir: &Path) -> Result<TlsFiles, String> {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
        let e = |e: rcgen::Error| format!("making the TLS rows' certificates: {e}");
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(e)?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "corbina-ttcp throwaway CA");
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_key = KeyPair::generate().map_err(e)?;
        let ca = params.self_signed(&ca_key).map_err(e)?;
        let mut leaf = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .map_err(e)?;
        leaf.distinguished_name
            .push(DnType::CommonName, "corbina-ttcp server");
        let key = KeyPair::generate().map_err(e)?;
        let cert = leaf.signed_by(&key, &ca, &ca_key).map_err(e)?;
        let files = TlsFiles {
            ca: dir.join("tls-ca.pem"),
            key: dir.join("tls-server.pem"),
        };
        let write =
            |p: &Path, s: String| std::fs::write(p, s).map_err(|e| format!("{}: {e}", p.display()));
        write(&files.ca, ca.pem())?;
        // omniORB's key file: the key, then the certificate chain.
        write(
            &files.key,
            format!("{}{}{}", key.serialize_pem(), cert.pem(), ca.pem()),
        )?;
        Ok(files)
    }

    /// omniORB's `-ORBssl…` options for these files (omniORB 4.2.5 wants a key password
    /// even for a clear key; it is not used).
    fn omni_args(&self, verify: &str) -> Vec<std::ffi::OsString> {
        vec![
            "-ORBsslCAFile".into(),
            self.ca.clone().into_os_string(),
            "-ORBsslKeyFile".into(),
            self.key.clone().into_os_string(),
            "-ORBsslKeyPassword".into(),
            "unused".into(),
            "-ORBsslVerifyMode".into(),
            verify.into(),
        ]
    }
}

/// omniORB offers and accepts bidirectional GIOP only with both of its options
/// (`peers/omni_bidir_client.cc` says why).
const OMNI_BIDIR_SERVER_ARGS: &[&str] = &[
    "-ORBacceptBiDirectionalGIOP",
    "1",
    "-ORBserverTransportRule",
    "* unix,ssl,tcp,bidir",
];
const OMNI_BIDIR_CLIENT_ARGS: &[&str] = &[
    "-ORBofferBiDirectionalGIOP",
    "1",
    "-ORBclientTransportRule",
    "* unix,ssl,tcp,bidir",
];

/// The records of a client against a server on transport `tr`, tagged with it.
fn tagged(mut recs: Vec<Record>, tr: &str) -> Vec<Record> {
    for r in &mut recs {
        r.transport = tr.into();
    }
    recs
}

fn wait_file(path: &Path, proc: &mut Proc, limit: Duration) -> Result<String, String> {
    let start = Instant::now();
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            if !s.trim().is_empty() {
                return Ok(s);
            }
        }
        if let Ok(Some(st)) = proc.child.try_wait() {
            return Err(format!(
                "{} exited ({st}) before writing {}",
                proc.what,
                path.display()
            ));
        }
        if start.elapsed() > limit {
            return Err(format!("{} wrote no {}", proc.what, path.display()));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

impl Ctx {
    /// Whether experiment `e` (one of [`EXPERIMENTS`]) is part of this run.
    fn runs(&self, e: &str) -> bool {
        self.only.as_ref().is_none_or(|o| o.contains(&e))
    }

    fn spawn(&self, what: &str, cmd: &mut Command) -> Result<Proc, String> {
        // omni_server announces itself on stderr: keep the progress display clean.
        let quiet = ["omni_server", "omniEvents", "JacORB"];
        let stderr = if quiet.iter().any(|q| what.starts_with(q)) {
            Stdio::null()
        } else {
            Stdio::inherit()
        };
        let cpus = self.server_cpus.as_deref().filter(|_| self.pinned);
        let child = with_affinity(cpus, || {
            cmd.stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(stderr)
                .spawn()
        })?
        .map_err(|e| format!("starting {what}: {e}"))?;
        Ok(Proc {
            child,
            what: what.into(),
        })
    }

    /// Starts a Corbina server with `objects` objects; returns it and its IOR file.
    fn corbina_server(&self, objects: u64) -> Result<(Proc, PathBuf), String> {
        self.corbina_server_with(objects, false)
    }

    /// The same, serving through the DSI when `dsi`.
    fn corbina_server_with(&self, objects: u64, dsi: bool) -> Result<(Proc, PathBuf), String> {
        self.corbina_server_on(objects, dsi, "tcp")
    }

    /// The same with only transport `tr`'s endpoint (`tcp`: 127.0.0.1, `unix`/`shm`: a
    /// socket in the run's temporary directory), so the IOR publishes only that one and
    /// the client (default configuration, local endpoints preferred) must use it.
    fn corbina_server_on(
        &self,
        objects: u64,
        dsi: bool,
        tr: &str,
    ) -> Result<(Proc, PathBuf), String> {
        let kind = if dsi { "dsi" } else { "corbina" };
        let file = self.dir.join(format!("{kind}-{tr}-{objects}.ior"));
        let _ = std::fs::remove_file(&file);
        let endpoint = match tr {
            "tcp" => "127.0.0.1:0".to_owned(),
            "tls" => "ssl:127.0.0.1:0".to_owned(),
            // An absolute shm name is the rendezvous socket's path.
            _ => format!(
                "{tr}:{}",
                self.dir.join(format!("{kind}-{objects}.{tr}")).display()
            ),
        };
        let mut p = self.spawn(
            &format!("{kind} server ({tr})"),
            Command::new(&self.exe)
                .arg("server")
                .args(dsi.then_some("--dsi"))
                .args(["--endpoint", &endpoint, "--objects"])
                .arg(objects.to_string())
                .arg("--ior-file")
                .arg(&file)
                .args(["--lifetime", &self.lifetime.to_string()])
                .args(
                    self.tls
                        .as_ref()
                        .filter(|_| tr == "tls")
                        .map_or(Vec::new(), |t| {
                            vec![
                                "-ORBsslKeyFile".into(),
                                t.key.clone().into_os_string(),
                                "-ORBsslCAFile".into(),
                                t.ca.clone().into_os_string(),
                            ]
                        }),
                ),
        )?;
        wait_file(&file, &mut p, Duration::from_secs(600))?;
        Ok((p, file))
    }

    fn omni_server(&self, bin: &Path, objects: u64) -> Result<(Proc, PathBuf), String> {
        let file = self.dir.join(format!("omni-{objects}.ior"));
        let _ = std::fs::remove_file(&file);
        let mut p = self.spawn(
            "omni_server",
            Command::new(bin.join("omni_server"))
                .arg(&file)
                .arg(objects.to_string())
                .arg(self.lifetime.to_string())
                .args(["-ORBendPoint", "giop:tcp:127.0.0.1:"]),
        )?;
        wait_file(&file, &mut p, Duration::from_secs(600))?;
        Ok((p, file))
    }

    /// omniORB's SSL server (`omni_server_ssl`, `libomnisslTP4`) on a TLS-only endpoint with
    /// the run's key file, clients not asked for certificates (as Corbina's TLS rows).
    fn omni_ssl_server(&self, bin: &Path, tls: &TlsFiles) -> Result<(Proc, PathBuf), String> {
        let file = self.dir.join("omni-ssl-1.ior");
        let _ = std::fs::remove_file(&file);
        let mut p = self.spawn(
            "omni_server_ssl",
            Command::new(bin.join("omni_server_ssl"))
                .arg(&file)
                .arg("1")
                .arg(self.lifetime.to_string())
                .args(["-ORBendPoint", "giop:ssl:127.0.0.1:"])
                .args(tls.omni_args("none")),
        )?;
        wait_file(&file, &mut p, Duration::from_secs(600))?;
        Ok((p, file))
    }

    /// The bidirectional experiment (`bidir_bench`): Corbina's client and server, then
    /// omniORB's own bidirectional peers (`omni_bidir_*`, `--mode bench`) when `peer` has them.
    fn bidir(&mut self, peer: Option<&Path>) -> Result<(), String> {
        self.progress
            .stage("bidir: calls and callbacks over a bidirectional connection: corbina");
        let file = self.dir.join("bidir-corbina.ior");
        let _ = std::fs::remove_file(&file);
        let mut server = self.spawn(
            "corbina bidir server",
            self.self_cmd("bidir-server")
                .arg("--ior-file")
                .arg(&file)
                .args(["--lifetime", &self.lifetime.to_string()]),
        )?;
        wait_file(&file, &mut server, Duration::from_secs(600))?;
        let count = BIDIR_CALLS.min(self.plan.lat_count).to_string();
        let mut c = self.self_cmd("bidir-client");
        c.arg("--ior").arg(&file).args(["--count", &count]);
        let (recs, _) = self.client("corbina bidir client", &mut c, false)?;
        self.records.extend(recs);
        drop(server);
        let Some(bin) = peer else {
            return Ok(());
        };
        self.progress
            .stage("bidir: calls and callbacks over a bidirectional connection: omniORB");
        let file = self.dir.join("bidir-omni.ior");
        let _ = std::fs::remove_file(&file);
        let mut server = self.spawn(
            "omni_server (bidir)",
            Command::new(bin.join("omni_bidir_server"))
                .arg(&file)
                .arg(self.lifetime.to_string())
                .args(["-ORBendPoint", "giop:tcp:127.0.0.1:"])
                .args(OMNI_BIDIR_SERVER_ARGS),
        )?;
        wait_file(&file, &mut server, Duration::from_secs(600))?;
        for (label, args) in [
            ("ordinary", &[][..]),
            ("bidirectional", OMNI_BIDIR_CLIENT_ARGS),
        ] {
            let mut c = Command::new(bin.join("omni_bidir_client"));
            c.arg("--ior")
                .arg(&file)
                .args(["--mode", "bench", "--label", label])
                .args(["--count", &count])
                .args(if label == "ordinary" {
                    &["--publish", "real"][..]
                } else {
                    &[]
                })
                .args(args);
            let (recs, _) = self.client("omniORB bidir client", &mut c, false)?;
            self.records.extend(recs);
        }
        drop(server);
        Ok(())
    }

    /// The events experiment (`events_bench`): Corbina's channel, then (with `--peer`)
    /// omniEvents and JacORB's notification service where installed; a channel that cannot
    /// be started gives records marked unavailable, with the reason.
    fn events(&mut self, peer: bool) -> Result<(), String> {
        use crate::events_bench::{JACORB, OMNIEVENTS};
        self.progress
            .stage("events: 1 supplier to N push consumers: corbina's channel");
        let file = self.dir.join("events-corbina.ior");
        let mut channel = self.spawn(
            "corbina events-channel",
            self.self_cmd("events-channel")
                .arg("--ior-file")
                .arg(&file)
                .arg("--data-dir")
                .arg(self.dir.join("events-db"))
                .args(["--lifetime", &self.lifetime.to_string()]),
        )?;
        let iors = wait_file(&file, &mut channel, Duration::from_secs(60))?;
        let mut lines = iors.lines().map(str::trim);
        let channels = EventChannels {
            any: lines.next().unwrap_or_default().to_owned(),
            notify: lines.next().map(|f| format!("notify:{f}")),
        };
        self.event_points(&channels, crate::record::CORBINA)?;
        drop(channel);
        if !peer {
            return Ok(());
        }
        self.progress.stage("events: omniEvents");
        match self.omnievents() {
            Ok((p, url)) => {
                let channels = EventChannels {
                    any: url,
                    notify: None,
                };
                self.event_points(&channels, OMNIEVENTS)?;
                drop(p);
            }
            Err(why) => self.event_unavailable(OMNIEVENTS, &why, |_| true),
        }
        self.progress
            .stage("events: JacORB's notification service (starting a JVM)");
        match self.jacorb_notify() {
            Ok((p, spec)) => {
                // Its notification channel is a CosEvent channel too.
                let channels = EventChannels {
                    any: spec.clone(),
                    notify: Some(spec),
                };
                self.event_points(&channels, JACORB)?;
                drop(p);
            }
            Err(why) => self.event_unavailable(JACORB, &why, |_| true),
        }
        Ok(())
    }

    /// Every point of [`EVENT_POINTS`] against `imp`'s channels (structured points need its
    /// notification channel factory).
    fn event_points(&mut self, channels: &EventChannels, imp: &str) -> Result<(), String> {
        use crate::events_bench::Kind;
        for pt in EVENT_POINTS {
            let spec = match (pt.kind, &channels.notify) {
                (Kind::Any, _) => &channels.any,
                (Kind::Structured, Some(n)) => n,
                (Kind::Structured, None) => continue,
            };
            self.progress.stage(&format!(
                "events: {imp}, {} {} B to {}{}{}",
                pt.kind.name(),
                pt.size,
                pt.consumers,
                if pt.slow { " + 1 slow" } else { "" },
                if pt.filter { ", filtered" } else { "" }
            ));
            // Big events cost their bytes: half the events.
            let deliveries = self.plan.event_deliveries / if pt.size > 1000 { 2 } else { 1 };
            let samples = self.plan.event_samples / if pt.consumers >= 100 { 2 } else { 1 };
            let mut c = self.self_cmd("events-client");
            c.args(["--channel", spec, "--impl", imp, "--kind", pt.kind.name()])
                .args(["--consumers", &pt.consumers.to_string()])
                .args(["--size", &pt.size.to_string()])
                .args([
                    "--events",
                    &flood_events(deliveries, pt.consumers).to_string(),
                ])
                .args(["--samples", &samples.to_string()])
                .args(pt.slow.then_some("--slow"))
                .args(pt.filter.then_some("--filter"));
            let (recs, _) = self.client(&format!("{imp} events client"), &mut c, false)?;
            self.records.extend(recs);
        }
        if channels.notify.is_none() {
            self.event_unavailable(imp, "no notification service (structured events)", |pt| {
                pt.kind == Kind::Structured
            });
        }
        Ok(())
    }

    /// Records saying why `imp`'s channel was not measured at the points `which` picks.
    fn event_unavailable(&mut self, imp: &str, why: &str, which: impl Fn(&EventPoint) -> bool) {
        eprintln!("corbina-ttcp: events: {imp} not measured: {why}");
        for pt in EVENT_POINTS.iter().filter(|p| which(p)) {
            let mut r = Record::new(crate::events_bench::EXPERIMENT, imp)
                .mode(pt.kind.name())
                .op("push")
                .unavailable(why);
            r.size = Some(pt.size as u64);
            r.consumers = Some(pt.consumers as u64);
            r.slow_consumer = Some(pt.slow);
            r.filter = Some(pt.filter);
            self.records.push(r);
            self.progress.tick();
        }
    }

    /// omniEvents (Debian's `omnievents`) on a free loopback port; its factory's URL as
    /// `events-client` takes it.
    fn omnievents(&self) -> Result<(Proc, String), String> {
        let bin = Path::new("/usr/sbin/omniEvents");
        if !bin.exists() {
            return Err("omniEvents is not installed (apt-get install omnievents)".into());
        }
        let port = free_port()?;
        let state = self.dir.join("omnievents");
        std::fs::create_dir_all(&state).map_err(|e| format!("{}: {e}", state.display()))?;
        let mut p = self.spawn(
            "omniEvents",
            Command::new(bin)
                .env("OMNIORB_USEHOSTNAME", "127.0.0.1")
                .args(["-f", "-p", &port.to_string(), "-l"])
                .arg(&state),
        )?;
        wait_port(port, &mut p, Duration::from_secs(20))?;
        Ok((
            p,
            format!("omnievents:corbaloc::127.0.0.1:{port}/omniEvents"),
        ))
    }

    /// JacORB's notification service (`org.jacorb.notification.ConsoleMain`, one channel)
    /// on a free loopback port; its factory as `events-client` takes it.
    fn jacorb_notify(&self) -> Result<(Proc, String), String> {
        let classpath = build_jacorb_events()?;
        let port = free_port()?;
        let file = self.dir.join("jacorb-notify.ior");
        let _ = std::fs::remove_file(&file);
        let mut p = self.spawn(
            "JacORB notification service",
            Command::new("java")
                .args(JACORB_JVM_ARGS)
                .arg("-cp")
                .arg(classpath.trim())
                .arg("org.jacorb.notification.ConsoleMain")
                .args(["-port", &port.to_string(), "-channels", "1", "-writeIOR"])
                .arg(&file),
        )?;
        let ior = wait_file(&file, &mut p, Duration::from_secs(120))?;
        Ok((p, format!("notify:{}", ior.trim())))
    }

    /// Runs a client to completion, streaming its JSON lines into records (ticking the
    /// progress per line); returns the records and the client's CPU seconds.
    fn client(
        &mut self,
        what: &str,
        cmd: &mut Command,
        omni: bool,
    ) -> Result<(Vec<Record>, f64), String> {
        let before = children_cpu_seconds();
        if let Some(t) = &self.tls {
            // Corbina's clients trust the run's CA (the others ignore the variable).
            cmd.env("CORBINA_SSLCAFILE", &t.ca);
        }
        let cpus = self.client_cpus.as_deref().filter(|_| self.pinned);
        let mut child = with_affinity(cpus, || {
            cmd.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
        })?
        .map_err(|e| format!("starting {what}: {e}"))?;
        let mut out = Vec::new();
        if let Some(stdout) = child.stdout.take() {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let r = if omni {
                    from_omni_line(&line)
                } else {
                    Record::from_json(&line).ok()
                };
                if let Some(r) = r {
                    out.push(r);
                    self.progress.tick();
                }
            }
        }
        let status = child.wait().map_err(|e| format!("{what}: {e}"))?;
        let cpu = children_cpu_seconds() - before;
        if !status.success() {
            return Err(format!("{what} failed: {status}"));
        }
        Ok((out, cpu))
    }

    fn self_cmd(&self, sub: &str) -> Command {
        let mut c = Command::new(&self.exe);
        c.arg(sub);
        c
    }

    /// The latency loops with the CPU bracket: client CPU from rusage, server from /proc.
    fn latency_with_cpu(
        &mut self,
        imp: &str,
        inv: Option<Invocation>,
        server_pid: u32,
        mut cmd: Command,
        omni: bool,
    ) -> Result<Vec<Record>, String> {
        let s0 = proc_cpu_seconds(server_pid);
        let (recs, client_cpu) = self.client(&format!("{imp} latency client"), &mut cmd, omni)?;
        let s1 = proc_cpu_seconds(server_pid);
        let p = &self.plan;
        // ping and echo: warmup + count each; oneways: warmup + count, closed by 2 pings.
        let calls = (3 * (p.warmup + p.lat_count) + 2) as f64;
        let mut r = Record::new("cpu", imp).op("latency_loops");
        r.invocation = inv.map(|i| i.name().to_owned());
        r.n = Some(calls as u64);
        r.client_cpu_us_per_call = Some(client_cpu / calls * 1e6);
        if let (Some(a), Some(b)) = (s0, s1) {
            r.server_cpu_us_per_call = Some((b - a) / calls * 1e6);
            r.cpu_us_per_call = Some((client_cpu + b - a) / calls * 1e6);
        }
        r.note = Some(
            "ping, echo(\"\") and oneway loops (socket: two ping-pong loops and a oneway \
             burst); client: getrusage(RUSAGE_CHILDREN) of the whole client process, server: \
             /proc/<pid>/stat delta"
                .into(),
        );
        let mut recs = recs;
        recs.push(r);
        Ok(recs)
    }

    /// Client instructions per null twoway call, counted by callgrind: each client runs
    /// twice under `valgrind --tool=callgrind`, N₁ and N₂ calls to the same (Corbina)
    /// server, and (I₂ − I₁)/(N₂ − N₁) cancels start-up and shutdown. User-space
    /// instructions of the client process only (callgrind does not see the kernel).
    fn callgrind(&mut self, cior: &Path, omni_ping: Option<&Path>) -> Result<Vec<Record>, String> {
        let (n1, n2) = self.plan.callgrind_calls;
        let have = Command::new("valgrind")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        let mut out = Vec::new();
        let rec = |imp: &str, inv: &str| {
            let mut r = Record::new("instructions", imp).mode("twoway").op("ping");
            r.invocation = Some(inv.into());
            r
        };
        if !have {
            eprintln!("corbina-ttcp: valgrind is not installed: no instruction counts");
            out.push(rec(CORBINA, Invocation::Static.name()).unavailable("valgrind not installed"));
            return Ok(out);
        }
        let mut clients: Vec<(&str, &str, Command)> = Vec::new();
        // `async`: the async proxy, one call awaited at a time in a tokio runtime.
        let corbina = [Invocation::Static, Invocation::DiiReuse, Invocation::Dii]
            .map(Invocation::name)
            .into_iter()
            .chain(["async"]);
        for inv in corbina {
            let mut c = Command::new(&self.exe);
            c.arg("ping").arg(cior).args(["--invocation", inv]);
            clients.push((CORBINA, inv, c));
        }
        if let Some(bin) = omni_ping {
            let mut c = Command::new(bin);
            c.arg(cior);
            clients.push((OMNIORB, Invocation::Static.name(), c));
        }
        for (k, (imp, inv, cmd)) in clients.into_iter().enumerate() {
            self.progress
                .stage(&format!("callgrind: {imp} {inv} client"));
            let mut counts = [0u64; 2];
            for (j, n) in [n1, n2].into_iter().enumerate() {
                let file = self.dir.join(format!("callgrind.{k}.{j}.out"));
                let mut c = Command::new("valgrind");
                c.arg("--tool=callgrind")
                    .arg(format!("--callgrind-out-file={}", file.display()))
                    .arg(cmd.get_program())
                    .args(cmd.get_args())
                    .arg(n.to_string());
                let o = c
                    .stdin(Stdio::null())
                    .output()
                    .map_err(|e| format!("valgrind: {e}"))?;
                if !o.status.success() {
                    return Err(format!(
                        "valgrind {imp} client failed: {}",
                        String::from_utf8_lossy(&o.stderr)
                    ));
                }
                let text = std::fs::read_to_string(&file).map_err(|e| format!("{e}"))?;
                counts[j] = callgrind_total(&text).ok_or("no totals in the callgrind output")?;
            }
            let mut r = rec(imp, inv);
            r.n = Some((n2 - n1) as u64);
            r.instructions_per_call =
                Some((counts[1] as f64 - counts[0] as f64) / (n2 - n1) as f64);
            r.note = Some(format!(
                "callgrind Ir of the client process (user space), ({} − {} instructions) / \
                 ({n2} − {n1} calls), against the Corbina server",
                counts[1], counts[0]
            ));
            out.push(r);
            self.progress.tick();
        }
        Ok(out)
    }

    /// Moves every thread of the running servers `pids` to the server CPUs (`pin`) or
    /// back to every CPU.
    fn pin_servers(&mut self, pids: &[u32], pin: bool) -> Result<(), String> {
        let Some(cpus) = self.server_cpus.clone() else {
            return Ok(());
        };
        let all = allowed_cpus();
        for &pid in pids {
            pin_process(pid, if pin { &cpus } else { &all })?;
        }
        self.pinned = pin;
        Ok(())
    }
}

/// Timed calls per scalability order for `n` objects: at least two per object, so that
/// request train (each object twice in a row) and round robin (every object, then every
/// object again) are different orders at 10⁵ and 10⁶ objects too.
fn scal_calls(calls: usize, n: u64) -> usize {
    calls.max(2 * n as usize)
}

/// One server the concurrency clients drive.
struct ConcServer<'a> {
    ior: &'a Path,
    transport: &'static str,
    implementation: &'static str,
    model: String,
}

/// Concurrency: the same Corbina client (`--mode conc`: every thread count, a connection
/// per thread and one shared reference) against Corbina thread per connection (over each
/// transport), Corbina with a pool of [`POOL`] threads and omniORB, in `conc_rounds`
/// rounds with the servers interleaved and the order rotated each round; every figure is
/// the median over the rounds.
fn concurrency(
    cx: &mut Ctx,
    cior: &Path,
    locals: &[(&'static str, &Path)],
    omni: Option<&Path>,
) -> Result<(), String> {
    let p = cx.plan.clone();
    let threads = join(&p.threads);
    // The thread-pool server model, if the runtime honours -ORBThreadPool: a pool server
    // keeps its thread count near the pool size however many connections it has.
    let pool_ior = cx.dir.join("corbina-pool.ior");
    let mut pool_srv = cx.spawn(
        "corbina pool server",
        cx.self_cmd("server")
            .args(["--endpoint", "127.0.0.1:0", "--ior-file"])
            .arg(&pool_ior)
            .args(["--lifetime", &cx.lifetime.to_string()])
            .args(["-ORBThreadPool", &POOL.to_string()]),
    )?;
    wait_file(&pool_ior, &mut pool_srv, Duration::from_secs(60))?;
    let tpc = || "thread_per_connection".to_owned();
    let mut servers = vec![ConcServer {
        ior: cior,
        transport: "tcp",
        implementation: CORBINA,
        model: tpc(),
    }];
    servers.extend(locals.iter().map(|&(tr, ior)| ConcServer {
        ior,
        transport: tr,
        implementation: CORBINA,
        model: tpc(),
    }));
    servers.push(ConcServer {
        ior: &pool_ior,
        transport: "tcp",
        implementation: CORBINA,
        model: "pool".into(),
    });
    servers.extend(omni.map(|ior| ConcServer {
        ior,
        transport: "tcp",
        implementation: OMNIORB,
        model: "omniORB default (thread per connection)".into(),
    }));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let (stop, pid) = (stop.clone(), pool_srv.pid());
        std::thread::spawn(move || {
            let mut max = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                max = max.max(crate::sys::proc_threads(pid).unwrap_or(0));
                std::thread::sleep(Duration::from_millis(20));
            }
            max
        })
    };
    let mut rounds: Vec<Vec<Vec<Record>>> = vec![Vec::new(); servers.len()];
    let mut result = Ok(());
    'rounds: for round in 0..p.conc_rounds {
        for k in 0..servers.len() {
            let i = (k + round) % servers.len();
            let s = &servers[i];
            cx.progress.stage(&format!(
                "concurrency round {}/{}: {} server, {} over {}",
                round + 1,
                p.conc_rounds,
                s.implementation,
                s.model,
                s.transport
            ));
            let mut c = cx.self_cmd("client");
            c.arg("--ior").arg(s.ior);
            c.args(["--mode", "conc", "--threads", &threads])
                .args(["--sharing", "own,shared"])
                .args(["--conc-seconds", &p.conc_seconds.to_string()]);
            match cx.client("corbina concurrency client", &mut c, false) {
                Ok((recs, _)) => rounds[i].push(tagged(recs, s.transport)),
                Err(e) => {
                    result = Err(e);
                    break 'rounds;
                }
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let max_threads = sampler.join().unwrap_or(0);
    drop(pool_srv);
    result?;
    let most_conns = p.threads.iter().copied().max().unwrap_or(1);
    let honoured = most_conns <= POOL as u64 + 4 || max_threads < most_conns;
    for (s, r) in servers.iter().zip(&rounds) {
        let pool = s.model == "pool";
        if pool && !honoured {
            let mut rec = Record::new("concurrency", CORBINA).unavailable(&format!(
                "not yet available: -ORBThreadPool {POOL} is not honoured (the server ran \
                 {max_threads} threads for {most_conns} connections)"
            ));
            rec.server_model = Some("pool".into());
            cx.records.push(rec);
            continue;
        }
        cx.records.extend(merge_rounds(r).into_iter().map(|mut x| {
            x.implementation = s.implementation.into();
            x.server_model = Some(s.model.clone());
            if s.implementation != CORBINA {
                x.client = Some(CORBINA.into());
            }
            if pool {
                let note =
                    format!("-ORBThreadPool {POOL}; server had at most {max_threads} threads");
                x.note = Some(format!("{}; {note}", x.note.unwrap_or_default()));
            }
            x
        }));
    }
    Ok(())
}

/// The instruction count of a callgrind output file (its `totals:` or `summary:` line).
pub fn callgrind_total(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// CPUs to run on (`None`: wherever the scheduler likes).
type Cpus = Option<Vec<usize>>;

/// The CPUs of servers and clients for a placement, from the CPUs this process may use.
fn placement(pin: Pin, cpus: &[usize]) -> Result<(Cpus, Cpus), String> {
    match (pin, cpus) {
        (Pin::None, _) => Ok((None, None)),
        (_, []) => Err("--pin: no CPU in this process's affinity mask".into()),
        (Pin::Same, [c, ..]) => Ok((Some(vec![*c]), Some(vec![*c]))),
        (Pin::Split, [a, b, ..]) => Ok((Some(vec![*a]), Some(vec![*b]))),
        (Pin::Split, _) => Err("--pin split needs two CPUs".into()),
    }
}

/// Fields of a latency-loop record that are medians over rounds.
fn merge_fields(r: &mut Record) -> [&mut Option<f64>; 11] {
    [
        &mut r.median_us,
        &mut r.p99_us,
        &mut r.p999_us,
        &mut r.mean_us,
        &mut r.min_us,
        &mut r.max_us,
        &mut r.calls_per_s,
        &mut r.seconds,
        &mut r.cpu_us_per_call,
        &mut r.client_cpu_us_per_call,
        &mut r.server_cpu_us_per_call,
    ]
}

/// One implementation's latency records over several rounds, merged: every figure is the
/// median over the rounds of that figure (the records are matched by experiment, op,
/// mode, invocation, type and size; the first round's set is the template).
pub fn merge_rounds(rounds: &[Vec<Record>]) -> Vec<Record> {
    let Some(first) = rounds.first() else {
        return Vec::new();
    };
    let same = |a: &Record, b: &Record| {
        (
            &a.experiment,
            &a.op,
            &a.mode,
            &a.invocation,
            &a.data_type,
            a.elems,
            a.threads,
            a.objects,
        ) == (
            &b.experiment,
            &b.op,
            &b.mode,
            &b.invocation,
            &b.data_type,
            b.elems,
            b.threads,
            b.objects,
        )
    };
    first
        .iter()
        .map(|t| {
            let mut out = t.clone();
            let matches: Vec<Record> = rounds
                .iter()
                .filter_map(|round| round.iter().find(|r| same(r, t)).cloned())
                .collect();
            for (k, field) in merge_fields(&mut out).into_iter().enumerate() {
                let vals: Vec<f64> = matches
                    .iter()
                    .filter_map(|m| *merge_fields(&mut m.clone())[k])
                    .collect();
                *field = median_of(&vals);
            }
            let note = format!("median of {} interleaved rounds", matches.len());
            out.note = Some(match out.note.take() {
                Some(n) => format!("{n}; {note}"),
                None => note,
            });
            out
        })
        .collect()
}

/// A port free on 127.0.0.1 now (for a peer that takes its port as an option).
fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("a free port: {e}"))
}

/// Waits until `proc` accepts connections on 127.0.0.1:`port`.
fn wait_port(port: u16, proc: &mut Proc, limit: Duration) -> Result<(), String> {
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(st)) = proc.child.try_wait() {
            return Err(format!("{} exited ({st})", proc.what));
        }
        if start.elapsed() > limit {
            return Err(format!("{} did not listen on port {port}", proc.what));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// The JVM options of the JacORB peers (as `corbina-testpeers` starts them).
const JACORB_JVM_ARGS: &[&str] = &[
    "-Xss16m",
    "-Dorg.omg.CORBA.ORBClass=org.jacorb.orb.ORB",
    "-Dorg.omg.CORBA.ORBSingletonClass=org.jacorb.orb.ORBSingleton",
    "-DOAIAddr=127.0.0.1",
    "-XX:+UseSerialGC",
];

/// Builds `peers/jacorb-events` (`make -C peers/jacorb-events B=target/peers/jacorb-events`:
/// Maven fetches JacORB 3.9 and its services once); the classpath, or why not.
fn build_jacorb_events() -> Result<String, String> {
    if !(runs("java", "-version") && runs("javac", "-version") && runs("mvn", "-v")) {
        return Err(
            "Java and Maven are not installed (apt-get install default-jdk-headless maven)".into(),
        );
    }
    let out = make_peers("jacorb-events")?;
    let cp = out.join("classpath");
    std::fs::read_to_string(&cp).map_err(|e| format!("{}: {e}", cp.display()))
}

/// Whether `tool arg` runs and succeeds.
fn runs(tool: &str, arg: &str) -> bool {
    Command::new(tool)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `make -C peers/SUB B=target/peers/SUB` (`peers/` itself for an empty `sub`); the output
/// directory.
fn make_peers(sub: &str) -> Result<PathBuf, String> {
    let peers = repo_peers_dir()
        .ok_or("peers/ not found")?
        .canonicalize()
        .map_err(|e| e.to_string())?;
    // make -C changes directory first: B must be absolute.
    let out = peers
        .parent()
        .ok_or("peers/ has no parent")?
        .join("target/peers")
        .join(sub);
    let st = Command::new("make")
        .args(["-s", "-C"])
        .arg(peers.join(sub))
        .arg(format!("B={}", out.display()))
        .arg("all")
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("make: {e}"))?;
    if !st.success() {
        return Err(format!("building {} failed", peers.join(sub).display()));
    }
    out.canonicalize().map_err(|e| e.to_string())
}

fn repo_peers_dir() -> Option<PathBuf> {
    let cands = [
        PathBuf::from("peers"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../peers"),
    ];
    cands
        .into_iter()
        .find(|p| p.join("omni_client.cc").exists())
}

/// Builds the omniORB peer (`make -C peers B=target/peers all`); the bin directory, or why not.
fn build_peer() -> Result<PathBuf, String> {
    let have = Command::new("pkg-config")
        .args(["--exists", "omniORB4"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
        && runs("omniidl", "-V");
    if !have {
        return Err(
            "omniORB (omniidl, libomniorb4-dev, pkg-config) is not installed: \
                    apt-get install omniidl libomniorb4-dev pkg-config"
                .into(),
        );
    }
    make_peers("")
}

fn join(v: &[u64]) -> String {
    v.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

/// `corbina-ttcp suite …`.
pub fn main(args: Vec<String>) -> Result<ExitCode, String> {
    let o = parse(&args)?;
    let records = match &o.from_json {
        // Hidden: report and plot an earlier run's JSON lines again.
        Some(f) => std::fs::read_to_string(f)
            .map_err(|e| format!("{}: {e}", f.display()))?
            .lines()
            .map(|l| Record::from_json(l).map_err(|e| format!("{}: {e}", f.display())))
            .collect::<Result<Vec<_>, _>>()?,
        None => run(&o)?,
    };
    let rows = report::rows(&records);
    println!("{}", report::format_table(&rows));
    let events = report::format_events(&records);
    if !events.is_empty() {
        println!("{events}");
    }
    let targets = report::targets(&records);
    println!("{}", report::format_targets(&targets));
    if let Some(path) = &o.json {
        let mut text = String::new();
        for r in &records {
            text.push_str(&r.to_json());
            text.push('\n');
        }
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("JSON lines: {}", path.display());
    }
    if let Some(dir) = &o.plot {
        match crate::plot::plot_all(&records, dir) {
            Ok(files) => println!("plots: {}", files.join(", ")),
            Err(e) => eprintln!("corbina-ttcp: plots: {e}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs the suite; returns every record.
pub fn run(o: &SuiteOpts) -> Result<Vec<Record>, String> {
    let plan = Plan::new(o);
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = std::env::temp_dir().join(format!("corbina-ttcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let peer = if o.peer {
        eprintln!("[corbina-ttcp] building the omniORB peer (make -C peers B=target/peers all)");
        match build_peer() {
            Ok(bin) => Some(bin),
            Err(e) => {
                eprintln!("corbina-ttcp: omniORB peer unavailable, its columns stay empty: {e}");
                None
            }
        }
    } else {
        None
    };
    let (server_cpus, client_cpus) = placement(o.pin, &allowed_cpus())?;
    let impls = 2 + usize::from(peer.is_some());
    let n_thr = plan.kbs.len() * 2 * (TYPES.len() * (impls - 1) + 3 * plan.dyn_types.len() + 2);
    let n_scal = plan.objects.len() * 2 * (impls - 1);
    let n_conc = plan.threads.len() * 2 * impls;
    let runs = |e: &str| o.only.as_ref().is_none_or(|l| l.contains(&e));
    let only = |n: usize, e: &str| if runs(e) { n } else { 0 };
    let (n_thr, n_scal, n_conc) = (
        only(n_thr, "throughput"),
        only(n_scal, "scalability"),
        only(n_conc * plan.conc_rounds, "concurrency"),
    );
    let n_lat = only(plan.rounds * 3 * (impls + 4) + 2, "latency")
        + only(3 + 2 * plan.sizes.len() * 2 * 2, "payload");
    // The callgrind stage costs a few seconds at the quick suite's call counts: on there.
    let callgrind =
        o.callgrind || o.quick || o.only.as_ref().is_some_and(|l| l.contains(&"callgrind"));
    let n_cg = only(if callgrind { 5 } else { 0 }, "callgrind");
    let locals: Vec<&'static str> = o
        .transports
        .iter()
        .copied()
        .filter(|&t| t != "tcp")
        .collect();
    let l = locals.len();
    let n_local = if o.quick {
        l * (only(plan.rounds * 3, "latency") + only(plan.kbs.len() * 2, "throughput"))
    } else {
        l * (only(plan.rounds * 3 * 4, "latency")
            + only(
                plan.kbs.len() * 2 * (TYPES.len() + 3 * plan.dyn_types.len()),
                "throughput",
            )
            + only(2 * plan.sizes.len() * 2, "payload")
            + only(plan.threads.len() * 2 * plan.conc_rounds, "concurrency")
            + only(plan.objects.len() * 2, "scalability"))
    };
    // One record per point: 2 sync, 4 async, 1 AMH.
    let n_async = only(7, "async");
    // Corbina's three points; omniORB's ordinary ping and its bidirectional two.
    let n_bidir = only(if peer.is_some() { 6 } else { 3 }, "bidir");
    // omniORB over its SSL transport, beside Corbina's TLS rows.
    let n_omni_tls = if peer.is_some() && o.transports.contains(&"tls") {
        only(plan.rounds * 3, "latency") + only(plan.kbs.len() * 2, "throughput")
    } else {
        0
    };
    // One record per point and channel: Corbina's, omniEvents' and JacORB's.
    let n_events = only(
        EVENT_POINTS.len() * if peer.is_some() { 3 } else { 1 },
        "events",
    );
    let total = n_thr
        + n_lat
        + n_scal
        + n_conc
        + n_cg
        + n_local
        + n_async
        + n_bidir
        + n_omni_tls
        + n_events;
    let mut cx = Ctx {
        exe,
        dir: dir.clone(),
        plan: plan.clone(),
        progress: Progress {
            total,
            done: 0,
            tty: std::io::stderr().is_terminal(),
            start: Instant::now(),
            stage: String::new(),
        },
        records: Vec::new(),
        lifetime: if o.quick { 900 } else { 7200 },
        server_cpus,
        client_cpus,
        pinned: false,
        pin: o.pin,
        quick: o.quick,
        tls: None,
        locals,
        only: o.only.clone(),
    };
    if cx.locals.contains(&"tls") {
        cx.tls = Some(TlsFiles::make(&dir)?);
    }
    let result = run_all(&mut cx, peer.as_deref(), callgrind && runs("callgrind"));
    cx.progress.finish();
    let _ = std::fs::remove_dir_all(&dir);
    result?;
    Ok(cx.records)
}

fn run_all(cx: &mut Ctx, peer: Option<&Path>, callgrind: bool) -> Result<(), String> {
    let p = cx.plan.clone();
    let lat_args = |c: &mut Command, count: usize| {
        c.args([
            "--count",
            &count.to_string(),
            "--warmup",
            &p.warmup.to_string(),
        ]);
    };
    let thr_args = |c: &mut Command| {
        c.args(["--total-mb", &p.total_mb.to_string()])
            .args(["--min-calls", &p.min_calls.to_string()])
            .args(["--max-point-s", &p.max_point_s.to_string()]);
    };
    // Servers for the whole run: socket (TCP + Unix), Corbina, omniORB.
    let ready = cx.dir.join("sock.ready");
    let unix = cx.dir.join("sock.sock");
    let mut sock = cx.spawn(
        "socket server",
        cx.self_cmd("sock-server")
            .arg("--ready")
            .arg(&ready)
            .arg("--unix")
            .arg(&unix)
            .args(["--lifetime", &cx.lifetime.to_string()]),
    )?;
    let addrs = wait_file(&ready, &mut sock, Duration::from_secs(20))?;
    let tcp_addr = addrs
        .lines()
        .find(|l| l.starts_with("tcp:"))
        .unwrap_or_default()
        .to_owned();
    let unix_addr = addrs
        .lines()
        .find(|l| l.starts_with("unix:"))
        .map(str::to_owned);
    let (corbina, cior) = cx.corbina_server(1)?;
    let (dsi, dior) = cx.corbina_server_with(1, true)?;
    let omni = match peer {
        Some(bin) => Some(cx.omni_server(bin, 1)?),
        None => None,
    };
    // omniORB's SSL transport, the peer of Corbina's TLS rows.
    let omni_ssl = match (peer, &cx.tls) {
        (Some(bin), Some(tls)) => Some(cx.omni_ssl_server(bin, tls)?),
        _ => None,
    };
    // A Corbina server per local transport, with only that transport's endpoint (and, in
    // the full suite, a DSI server for the dynamic modes).
    let quick = cx.quick;
    let mut local = Vec::new();
    for tr in cx.locals.clone() {
        let main = cx.corbina_server_on(1, false, tr)?;
        let dsi = match quick {
            true => None,
            false => Some(cx.corbina_server_on(1, true, tr)?),
        };
        local.push((tr, main, dsi));
    }
    let mut server_pids = vec![sock.pid(), corbina.pid(), dsi.pid()];
    server_pids.extend(omni.as_ref().map(|(s, _)| s.pid()));
    server_pids.extend(omni_ssl.as_ref().map(|(s, _)| s.pid()));
    for (_, m, d) in &local {
        server_pids.push(m.0.pid());
        server_pids.extend(d.as_ref().map(|d| d.0.pid()));
    }
    // The server (PID and IOR file) of invocation mode `inv` over transport `tr`.
    let server_of = |inv: Invocation, tr: &str| -> (u32, PathBuf) {
        let Some((_, m, d)) = local.iter().find(|l| l.0 == tr) else {
            return match inv {
                Invocation::Dsi => (dsi.pid(), dior.clone()),
                _ => (corbina.pid(), cior.clone()),
            };
        };
        match (inv, d) {
            (Invocation::Dsi, Some(d)) => (d.0.pid(), d.1.clone()),
            _ => (m.0.pid(), m.1.clone()),
        }
    };

    // Latency and CPU per call: client and server pinned (`--pin`, default the same CPU:
    // on a small VM an unpinned round trip jumps between regimes several times apart for
    // seconds at a time), in `rounds` rounds with the implementations interleaved and the
    // order rotated each round, so each sees the same machine state; every figure
    // reported is the median over the rounds.
    cx.pin_servers(&server_pids, true)?;
    #[derive(Clone, Copy)]
    enum Lat<'a> {
        /// The raw socket over TCP or a Unix-domain socket (`address`, `transport`).
        Socket(&'a str, &'static str),
        Corbina(Invocation, &'static str),
        Omni,
        /// omniORB's client over its SSL transport, against its SSL server.
        OmniTls,
    }
    let mut lats = vec![Lat::Socket(&tcp_addr, "tcp")];
    // The raw Unix-socket ping-pong in the same rounds: the like-for-like baseline of
    // Corbina over Unix sockets and shared memory.
    lats.extend(unix_addr.as_deref().map(|u| Lat::Socket(u, "unix")));
    lats.extend(Invocation::ALL.map(|inv| Lat::Corbina(inv, "tcp")));
    // Over the local transports: static calls in the quick suite, every mode in the full.
    for (tr, _, _) in &local {
        let invs: &[Invocation] = if quick {
            &[Invocation::Static]
        } else {
            &Invocation::ALL
        };
        lats.extend(invs.iter().map(|&inv| Lat::Corbina(inv, tr)));
    }
    if peer.is_some() {
        lats.push(Lat::Omni);
    }
    if omni_ssl.is_some() {
        lats.push(Lat::OmniTls);
    }
    if !cx.runs("latency") {
        lats.clear();
    }
    let mut rounds: Vec<Vec<Vec<Record>>> = vec![Vec::new(); lats.len()];
    for round in (0..p.rounds).filter(|_| !lats.is_empty()) {
        cx.progress.stage(&format!(
            "latency round {}/{} (pin {})",
            round + 1,
            p.rounds,
            cx.pin.name()
        ));
        for k in 0..lats.len() {
            let i = (k + round) % lats.len();
            let recs = match lats[i] {
                Lat::Socket(addr, label) => {
                    let mut c = cx.self_cmd("sock-client");
                    c.args(["--addr", addr, "--mode", "lat", "--label", label]);
                    lat_args(&mut c, p.lat_count);
                    tagged(
                        cx.latency_with_cpu(SOCKET, None, sock.pid(), c, false)?,
                        label,
                    )
                }
                Lat::Corbina(inv, tr) => {
                    let (pid, ior) = server_of(inv, tr);
                    let mut c = cx.self_cmd("client");
                    c.arg("--ior").arg(ior).args(["--mode", "lat"]);
                    c.args(["--invocation", inv.name()]);
                    lat_args(&mut c, p.lat_count);
                    tagged(cx.latency_with_cpu(CORBINA, Some(inv), pid, c, false)?, tr)
                }
                Lat::Omni => {
                    let (Some(bin), Some((srv, oior))) = (peer, &omni) else {
                        continue;
                    };
                    let mut c = Command::new(bin.join("omni_client"));
                    c.arg("--ior").arg(oior).args(["--mode", "lat"]);
                    lat_args(&mut c, p.lat_count);
                    let pid = srv.pid();
                    cx.latency_with_cpu(OMNIORB, Some(Invocation::Static), pid, c, true)?
                }
                Lat::OmniTls => {
                    let (Some(bin), Some((srv, oior)), Some(tls)) = (peer, &omni_ssl, &cx.tls)
                    else {
                        continue;
                    };
                    let mut c = Command::new(bin.join("omni_client_ssl"));
                    c.arg("--ior").arg(oior).args(["--mode", "lat"]);
                    c.args(["--label", "tls"]).args(tls.omni_args("peer"));
                    lat_args(&mut c, p.lat_count);
                    let pid = srv.pid();
                    tagged(
                        cx.latency_with_cpu(OMNIORB, Some(Invocation::Static), pid, c, true)?,
                        "tls",
                    )
                }
            };
            rounds[i].push(recs);
        }
    }
    let pin_note = format!("pin {}", cx.pin.name());
    for r in &rounds {
        cx.records.extend(merge_rounds(r).into_iter().map(|mut x| {
            x.note = Some(format!("{}; {pin_note}", x.note.unwrap_or_default()));
            x
        }));
    }
    // A new connection's first call over TCP and TLS (the handshake's cost), apart from the
    // rounds (its connects would skew their CPU per call).
    if cx.runs("latency") {
        let mut conns = vec![("tcp", cior.clone())];
        conns.extend(
            local
                .iter()
                .filter(|l| l.0 == "tls")
                .map(|(tr, m, _)| (*tr, m.1.clone())),
        );
        for (tr, ior) in conns {
            cx.progress.stage(&format!(
                "first call on a new connection: corbina over {tr}"
            ));
            let mut c = cx.self_cmd("client");
            c.arg("--ior").arg(&ior).args([
                "--mode",
                "conn",
                "--count",
                &NEW_CONNECTIONS.to_string(),
            ]);
            let (recs, _) = cx.client("corbina new-connection client", &mut c, false)?;
            cx.records.extend(tagged(recs, tr));
        }
    }
    if cx.runs("async") {
        cx.progress
            .stage("async: N calls outstanding on one connection vs sync threads; AMH");
        let mut c = cx.self_cmd("client");
        c.arg("--ior")
            .arg(&cior)
            .args(["--mode", "async", "--count", &ASYNC_CALLS.to_string()]);
        let (recs, _) = cx.client("corbina async client", &mut c, false)?;
        cx.records.extend(tagged(recs, "tcp"));
    }
    if cx.runs("bidir") {
        cx.bidir(peer)?;
    }
    if cx.runs("events") {
        cx.events(peer.is_some())?;
    }
    if cx.runs("payload") {
        cx.progress.stage("latency with payloads: socket, corbina");
        let sizes = join(&p.sizes);
        let mut c = cx.self_cmd("sock-client");
        c.args(["--addr", &tcp_addr, "--mode", "payload", "--sizes", &sizes]);
        lat_args(&mut c, p.payload_count);
        let (recs, _) = cx.client("socket payload client", &mut c, false)?;
        cx.records.extend(recs);
        let mut c = cx.self_cmd("client");
        c.arg("--ior")
            .arg(&cior)
            .args(["--mode", "payload", "--sizes", &sizes]);
        lat_args(&mut c, p.payload_count);
        let (recs, _) = cx.client("corbina payload client", &mut c, false)?;
        cx.records.extend(recs.into_iter().map(|mut r| {
            r.note = Some(format!("pin {}", cx.pin.name()));
            r
        }));
        for (tr, m, _) in local.iter().filter(|_| !quick) {
            cx.progress
                .stage(&format!("latency with payloads: corbina over {tr}"));
            let mut c = cx.self_cmd("client");
            c.arg("--ior")
                .arg(&m.1)
                .args(["--mode", "payload", "--sizes", &sizes]);
            lat_args(&mut c, p.payload_count);
            let (recs, _) = cx.client("corbina payload client", &mut c, false)?;
            let note = format!("pin {}", cx.pin.name());
            cx.records.extend(tagged(recs, tr).into_iter().map(|mut r| {
                r.note = Some(note.clone());
                r
            }));
        }
    }
    // Throughput and concurrency run where the scheduler puts them.
    cx.pin_servers(&server_pids, false)?;

    if cx.runs("throughput") {
        // Throughput.
        let kbs = join(&p.kbs);
        cx.progress.stage("throughput: socket (tcp, unix)");
        let mut addrs = vec![(tcp_addr.clone(), "tcp")];
        if let Some(u) = &unix_addr {
            addrs.push((u.clone(), "unix"));
        }
        for (addr, label) in &addrs {
            let mut c = cx.self_cmd("sock-client");
            c.args([
                "--addr", addr, "--mode", "thr", "--kbs", &kbs, "--label", label,
            ]);
            thr_args(&mut c);
            let (recs, _) = cx.client("socket throughput client", &mut c, false)?;
            cx.records.extend(recs);
        }
        for t in TYPES {
            cx.progress.stage(&format!("throughput: corbina {t}"));
            let mut c = cx.self_cmd("client");
            c.arg("--ior")
                .arg(&cior)
                .args(["--mode", "thr", "--types", t, "--kbs", &kbs]);
            thr_args(&mut c);
            let (recs, _) = cx.client("corbina throughput client", &mut c, false)?;
            cx.records.extend(recs);
        }
        // The dynamic modes: DII (a new request per call, or one request reused) against the
        // static server, and static calls against the DSI server.
        for inv in [Invocation::Dii, Invocation::DiiReuse, Invocation::Dsi] {
            for t in &p.dyn_types {
                cx.progress
                    .stage(&format!("throughput: corbina {} {t}", inv.name()));
                let ior = if inv == Invocation::Dsi { &dior } else { &cior };
                let mut c = cx.self_cmd("client");
                c.arg("--ior")
                    .arg(ior)
                    .args(["--mode", "thr", "--types", t, "--kbs", &kbs])
                    .args(["--invocation", inv.name()]);
                thr_args(&mut c);
                let (recs, _) = cx.client("corbina throughput client", &mut c, false)?;
                cx.records.extend(recs);
            }
        }
        // Over the local transports: sequence<octet> in the quick suite, everything in the full.
        for (tr, m, d) in &local {
            let types: &[&str] = if quick { &["octet"] } else { &TYPES };
            let mut runs: Vec<(Invocation, &str)> =
                types.iter().map(|&t| (Invocation::Static, t)).collect();
            if !quick {
                for inv in [Invocation::Dii, Invocation::DiiReuse, Invocation::Dsi] {
                    runs.extend(p.dyn_types.iter().map(|&t| (inv, t)));
                }
            }
            for (inv, t) in runs {
                cx.progress
                    .stage(&format!("throughput: corbina over {tr} {} {t}", inv.name()));
                let ior = match (inv, d) {
                    (Invocation::Dsi, Some(d)) => &d.1,
                    _ => &m.1,
                };
                let mut c = cx.self_cmd("client");
                c.arg("--ior")
                    .arg(ior)
                    .args(["--mode", "thr", "--types", t, "--kbs", &kbs])
                    .args(["--invocation", inv.name()]);
                thr_args(&mut c);
                let (recs, _) = cx.client("corbina throughput client", &mut c, false)?;
                cx.records.extend(tagged(recs, tr));
            }
        }
        if let (Some(bin), Some((_, oior))) = (peer, &omni) {
            for &kb in &p.kbs {
                cx.progress.stage(&format!("throughput: omniORB {kb} KB"));
                let mut c = Command::new(bin.join("omni_client"));
                c.arg("--ior").arg(oior).args(["--mode", "thr"]);
                c.args(["--min-kb", &kb.to_string(), "--max-kb", &kb.to_string()]);
                thr_args(&mut c);
                let (recs, _) = cx.client("omni_client thr", &mut c, true)?;
                cx.records.extend(recs);
            }
        }
        // omniORB over its SSL transport: sequence<octet>, the peer of Corbina's TLS rows.
        if let (Some(bin), Some((_, oior)), Some(tls)) = (peer, &omni_ssl, &cx.tls) {
            let args = tls.omni_args("peer");
            for &kb in &p.kbs {
                cx.progress
                    .stage(&format!("throughput: omniORB over SSL octet {kb} KB"));
                let mut c = Command::new(bin.join("omni_client_ssl"));
                c.arg("--ior").arg(oior).args(["--mode", "thr"]);
                c.args(["--types", "octet", "--label", "tls"]);
                c.args(["--min-kb", &kb.to_string(), "--max-kb", &kb.to_string()]);
                c.args(&args);
                thr_args(&mut c);
                let (recs, _) = cx.client("omni_client_ssl thr", &mut c, true)?;
                cx.records.extend(tagged(recs, "tls"));
            }
        }
    }
    if cx.runs("concurrency") {
        let locals: Vec<(&str, &Path)> = local
            .iter()
            .filter(|_| !quick)
            .map(|(tr, m, _)| (*tr, m.1.as_path()))
            .collect();
        concurrency(cx, &cior, &locals, omni.as_ref().map(|o| o.1.as_path()))?;
    }
    if callgrind {
        let bin = peer.map(|b| b.join("omni_ping"));
        let recs = cx.callgrind(&cior, bin.as_deref())?;
        cx.records.extend(recs);
    }
    drop(corbina);
    drop(dsi);
    drop(omni);
    drop(omni_ssl);
    let locals: Vec<&'static str> = local.iter().map(|l| l.0).collect();
    drop(local);

    // Scalability is a latency experiment: pinned as the latency loops are.
    cx.pinned = cx.server_cpus.is_some();
    if !cx.runs("scalability") {
        cx.progress.stage("done");
        return Ok(());
    }
    // Scalability and memory: a fresh server per object count.
    let mut base_rss: [Option<u64>; 2] = [None, None];
    for &n in &p.objects {
        for (k, imp) in [CORBINA, OMNIORB].into_iter().enumerate() {
            if imp == OMNIORB && peer.is_none() {
                continue;
            }
            cx.progress
                .stage(&format!("scalability: {imp}, {n} objects"));
            let (srv, file) = match peer.filter(|_| imp == OMNIORB) {
                Some(bin) => cx.omni_server(bin, n)?,
                None => cx.corbina_server(n)?,
            };
            std::thread::sleep(Duration::from_millis(50));
            let rss = proc_rss_bytes(srv.pid());
            let mut c = match peer.filter(|_| imp == OMNIORB) {
                Some(bin) => Command::new(bin.join("omni_client")),
                None => cx.self_cmd("client"),
            };
            c.arg("--ior").arg(&file).args(["--mode", "scal"]);
            c.args(["--scal-calls", &scal_calls(p.scal_calls, n).to_string()]);
            let (recs, _) = cx.client("scalability client", &mut c, imp == OMNIORB)?;
            cx.records.extend(recs);
            drop(srv);
            let _ = std::fs::remove_file(&file);
            if n == 1 {
                base_rss[k] = rss;
            }
            let mut m = Record::new("memory", imp);
            m.objects = Some(n);
            m.server_rss_bytes = rss;
            if let (Some(r), Some(b)) = (rss, base_rss[k]) {
                if n > 1 {
                    m.rss_bytes_per_object = Some((r as f64 - b as f64) / (n - 1) as f64);
                }
            }
            m.note = Some("VmRSS after activating the objects, minus the 1-object server's".into());
            cx.records.push(m);
        }
        // Corbina over the local transports (full suite), from a server with only that
        // transport's endpoint.
        for &tr in locals.iter().filter(|_| !quick) {
            cx.progress
                .stage(&format!("scalability: corbina over {tr}, {n} objects"));
            let (srv, file) = cx.corbina_server_on(n, false, tr)?;
            let mut c = cx.self_cmd("client");
            c.arg("--ior").arg(&file).args(["--mode", "scal"]);
            c.args(["--scal-calls", &scal_calls(p.scal_calls, n).to_string()]);
            let (recs, _) = cx.client("scalability client", &mut c, false)?;
            cx.records.extend(tagged(recs, tr));
            drop(srv);
            let _ = std::fs::remove_file(&file);
        }
    }
    drop(sock);
    cx.progress.stage("done");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_merge_to_medians() {
        let rec = |op: &str, med: f64, cpu: Option<f64>| {
            let mut r = Record::new("latency", CORBINA).op(op);
            r.median_us = Some(med);
            r.cpu_us_per_call = cpu;
            r
        };
        let rounds = vec![
            vec![rec("ping", 10.0, Some(5.0)), rec("echo_empty", 20.0, None)],
            vec![rec("ping", 60.0, Some(9.0)), rec("echo_empty", 21.0, None)],
            vec![rec("echo_empty", 22.0, None), rec("ping", 11.0, Some(6.0))],
        ];
        let m = merge_rounds(&rounds);
        assert_eq!(m.len(), 2);
        assert_eq!(
            (m[0].median_us, m[0].cpu_us_per_call),
            (Some(11.0), Some(6.0))
        );
        assert_eq!((m[1].median_us, m[1].cpu_us_per_call), (Some(21.0), None));
        assert!(m[0].note.as_deref().unwrap().contains("median of 3"));
        assert!(merge_rounds(&[]).is_empty());
    }

    #[test]
    fn only_lists_and_scalability_calls() {
        assert_eq!(
            parse_only("scalability, latency,scalability").unwrap(),
            vec!["scalability", "latency"]
        );
        assert!(parse_only("latency,memory").is_err());
        assert!(parse_only(" , ").is_err());
        let o = parse(&["--only".into(), "concurrency".into()]).unwrap();
        assert_eq!(o.only, Some(vec!["concurrency"]));
        // Both orders call every object at least twice, so they differ at 10⁶ objects.
        assert_eq!(scal_calls(20000, 1), 20000);
        assert_eq!(scal_calls(20000, 10000), 20000);
        assert_eq!(scal_calls(20000, 1_000_000), 2_000_000);
    }

    #[test]
    fn callgrind_totals_and_placements() {
        let out = "version: 1\ncmd: x\nevents: Ir\nsummary: 6188273\n\ntotals: 6188273\n";
        assert_eq!(callgrind_total(out), Some(6188273));
        assert_eq!(callgrind_total("events: Ir\n"), None);
        let both = |a: Vec<usize>, b: Vec<usize>| (Some(a), Some(b));
        assert_eq!(
            placement(Pin::Same, &[2, 3]).unwrap(),
            both(vec![2], vec![2])
        );
        assert_eq!(
            placement(Pin::Split, &[2, 3]).unwrap(),
            both(vec![2], vec![3])
        );
        assert!(placement(Pin::Split, &[0]).is_err());
        assert_eq!(placement(Pin::None, &[]).unwrap(), (None, None));
    }
}
