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

use crate::experiments::{powers, TYPES};
use crate::record::{from_omni_line, Record, CORBINA, OMNIORB, SOCKET};
use crate::report;
use crate::sys::{children_cpu_seconds, proc_cpu_seconds, proc_rss_bytes};

/// Threads of the pool server model in the concurrency experiment.
const POOL: usize = 8;

/// Rounds of the latency loops (interleaved over the implementations).
const LAT_ROUNDS: usize = 3;

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
    payload_count: usize,
    sizes: Vec<u64>,
    objects: Vec<u64>,
    scal_calls: usize,
    threads: Vec<u64>,
    conc_seconds: f64,
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
                payload_count: 5000,
                sizes: powers(1, 1024, 4),
                objects: vec![1, 100, 1000, 10000],
                scal_calls: 20000,
                threads: vec![1, 2, 8, 64, 512],
                conc_seconds: 1.0,
            }
        } else {
            Plan {
                kbs: powers(1, 1024, 2),
                total_mb: 64.0,
                min_calls: 50,
                max_point_s: 2.0,
                count: 20000,
                warmup: 1000,
                payload_count: 10000,
                sizes: powers(1, 1024, 2),
                objects: vec![1, 100, 1000, 10000, 100_000, 1_000_000],
                scal_calls: 20000,
                threads: vec![1, 2, 8, 64, 512],
                conc_seconds: 2.0,
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
            p.warmup = (c / 20).max(1);
            p.payload_count = (c / 5).max(1);
            p.scal_calls = c.max(1);
        }
        if let Some(m) = o.scal_max {
            p.objects.retain(|&n| n <= m.max(1));
        }
        if let Some(m) = o.threads_max {
            p.threads.retain(|&n| n <= m.max(1));
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
    fn spawn(&self, what: &str, cmd: &mut Command) -> Result<Proc, String> {
        // omni_server announces itself on stderr: keep the progress display clean.
        let stderr = if what == "omni_server" {
            Stdio::null()
        } else {
            Stdio::inherit()
        };
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("starting {what}: {e}"))?;
        Ok(Proc {
            child,
            what: what.into(),
        })
    }

    /// Starts a Corbina server with `objects` objects; returns it and its IOR file.
    fn corbina_server(&self, objects: u64) -> Result<(Proc, PathBuf), String> {
        let file = self.dir.join(format!("corbina-{objects}.ior"));
        let _ = std::fs::remove_file(&file);
        let mut p = self.spawn(
            "corbina server",
            Command::new(&self.exe)
                .arg("server")
                .args(["--endpoint", "127.0.0.1:0", "--objects"])
                .arg(objects.to_string())
                .arg("--ior-file")
                .arg(&file)
                .args(["--lifetime", &self.lifetime.to_string()]),
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

    /// Runs a client to completion, streaming its JSON lines into records (ticking the
    /// progress per line); returns the records and the client's CPU seconds.
    fn client(
        &mut self,
        what: &str,
        cmd: &mut Command,
        omni: bool,
    ) -> Result<(Vec<Record>, f64), String> {
        let before = children_cpu_seconds();
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
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
        server_pid: u32,
        mut cmd: Command,
        omni: bool,
    ) -> Result<Vec<Record>, String> {
        let s0 = proc_cpu_seconds(server_pid);
        let (recs, client_cpu) = self.client(&format!("{imp} latency client"), &mut cmd, omni)?;
        let s1 = proc_cpu_seconds(server_pid);
        let p = &self.plan;
        // ping and echo: warmup + count each; oneways: warmup + count, closed by 2 pings.
        let calls = (3 * (p.warmup + p.count) + 2) as f64;
        let mut r = Record::new("cpu", imp).op("latency_loops");
        if imp == SOCKET {
            r.invocation = None;
        }
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
        && Command::new("omniidl")
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok();
    if !have {
        return Err(
            "omniORB (omniidl, libomniorb4-dev, pkg-config) is not installed: \
                    apt-get install omniidl libomniorb4-dev pkg-config"
                .into(),
        );
    }
    let peers = repo_peers_dir()
        .ok_or("peers/ not found")?
        .canonicalize()
        .map_err(|e| e.to_string())?;
    // make -C changes directory first: B must be absolute.
    let out = peers
        .parent()
        .ok_or("peers/ has no parent")?
        .join("target/peers");
    let st = Command::new("make")
        .args(["-s", "-C"])
        .arg(&peers)
        .arg(format!("B={}", out.display()))
        .arg("all")
        .status()
        .map_err(|e| format!("make: {e}"))?;
    if !st.success() {
        return Err("building peers/ failed".into());
    }
    out.canonicalize().map_err(|e| e.to_string())
}

fn join(v: &[u64]) -> String {
    v.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

/// `corbina-ttcp suite …`.
pub fn main(args: Vec<String>) -> Result<ExitCode, String> {
    let o = parse(&args)?;
    let records = run(&o)?;
    let rows = report::rows(&records);
    println!("{}", report::format_table(&rows));
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
    let impls = 2 + usize::from(peer.is_some());
    let n_thr = plan.kbs.len() * 2 * (TYPES.len() * (impls - 1) + 2) + 2;
    let n_lat = LAT_ROUNDS * 3 * impls + 3 + 2 * plan.sizes.len() * 2 * 2;
    let n_scal = plan.objects.len() * 2 * (impls - 1);
    let n_conc = plan.threads.len() * 2 * impls;
    let total = n_thr + n_lat + n_scal + n_conc;
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
    };
    let result = run_all(&mut cx, peer.as_deref());
    cx.progress.finish();
    let _ = std::fs::remove_dir_all(&dir);
    result?;
    Ok(cx.records)
}

fn run_all(cx: &mut Ctx, peer: Option<&Path>) -> Result<(), String> {
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
    let omni = match peer {
        Some(bin) => Some(cx.omni_server(bin, 1)?),
        None => None,
    };

    // Latency and CPU: LAT_ROUNDS rounds, the implementations interleaved, so that a burst
    // of noise from elsewhere on the machine does not land on one implementation only;
    // each implementation keeps its least-disturbed round (the lowest null-twoway median:
    // on a shared machine latency jumps between regimes several times apart).
    let mut rounds: [Vec<Vec<Record>>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for round in 0..LAT_ROUNDS {
        cx.progress.stage(&format!(
            "latency round {}: socket, corbina, omniORB",
            round + 1
        ));
        let mut c = cx.self_cmd("sock-client");
        c.args(["--addr", &tcp_addr, "--mode", "lat"]);
        lat_args(&mut c, p.count);
        rounds[0].push(cx.latency_with_cpu(SOCKET, sock.pid(), c, false)?);
        let mut c = cx.self_cmd("client");
        c.arg("--ior").arg(&cior).args(["--mode", "lat"]);
        lat_args(&mut c, p.count);
        rounds[1].push(cx.latency_with_cpu(CORBINA, corbina.pid(), c, false)?);
        if let (Some(bin), Some((srv, oior))) = (peer, &omni) {
            let mut c = Command::new(bin.join("omni_client"));
            c.arg("--ior").arg(oior).args(["--mode", "lat"]);
            lat_args(&mut c, p.count);
            rounds[2].push(cx.latency_with_cpu(OMNIORB, srv.pid(), c, true)?);
        }
    }
    for mut r in rounds {
        let key = |recs: &Vec<Record>| {
            recs.iter()
                .find(|x| x.experiment == "latency")
                .and_then(|x| x.median_us)
                .unwrap_or(0.0)
        };
        r.sort_by(|a, b| key(a).total_cmp(&key(b)));
        if !r.is_empty() {
            let mut chosen = r.swap_remove(0);
            for x in &mut chosen {
                let note = format!("best of {LAT_ROUNDS} interleaved rounds");
                x.note = Some(match x.note.take() {
                    Some(n) => format!("{n}; {note}"),
                    None => note,
                });
            }
            cx.records.extend(chosen);
        }
    }
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
    cx.records.extend(recs);

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
            "--addr", addr, "--mode", "thr,lat", "--kbs", &kbs, "--label", label,
        ]);
        thr_args(&mut c);
        if *label == "unix" {
            lat_args(&mut c, p.count);
        } else {
            c.args(["--count", "1", "--warmup", "0"]);
        }
        let (recs, _) = cx.client("socket throughput client", &mut c, false)?;
        // The TCP latency records of this run are a by-product (count 1): drop them.
        cx.records.extend(
            recs.into_iter()
                .filter(|r| r.experiment == "throughput" || *label == "unix"),
        );
    }
    for t in TYPES {
        cx.progress.stage(&format!("throughput: corbina {t}"));
        let mut c = cx.self_cmd("client");
        c.arg("--ior")
            .arg(&cior)
            .args(["--mode", "thr", "--types", t, "--kbs", &kbs]);
        thr_args(&mut c);
        let (recs, _) = cx.client("corbina throughput client", &mut c, false)?;
        cx.records
            .extend(recs.into_iter().filter(|r| r.available || t == "octet"));
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

    // Concurrency: the same Corbina client against each server.
    let threads = join(&p.threads);
    let conc = |c: &mut Command| {
        c.args([
            "--mode",
            "conc",
            "--threads",
            &threads,
            "--sharing",
            "own,shared",
        ])
        .args(["--conc-seconds", &p.conc_seconds.to_string()]);
    };
    cx.progress.stage("concurrency: corbina");
    let mut c = cx.self_cmd("client");
    c.arg("--ior").arg(&cior);
    conc(&mut c);
    let (recs, _) = cx.client("corbina concurrency client", &mut c, false)?;
    cx.records.extend(recs.into_iter().map(|mut r| {
        r.server_model = Some("thread_per_connection".into());
        r
    }));
    // The thread-pool server model, if the runtime honours -ORBThreadPool: a pool server
    // keeps its thread count near the pool size however many connections it has.
    cx.progress
        .stage(&format!("concurrency: corbina, pool of {POOL} threads"));
    let file = cx.dir.join("corbina-pool.ior");
    let mut pool_srv = cx.spawn(
        "corbina pool server",
        cx.self_cmd("server")
            .args(["--endpoint", "127.0.0.1:0", "--ior-file"])
            .arg(&file)
            .args(["--lifetime", &cx.lifetime.to_string()])
            .args(["-ORBThreadPool", &POOL.to_string()]),
    )?;
    wait_file(&file, &mut pool_srv, Duration::from_secs(60))?;
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
    let mut c = cx.self_cmd("client");
    c.arg("--ior").arg(&file);
    conc(&mut c);
    let run = cx.client("corbina client to the pool server", &mut c, false);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let max_threads = sampler.join().unwrap_or(0);
    drop(pool_srv);
    let (recs, _) = run?;
    let most_conns = p.threads.iter().copied().max().unwrap_or(1);
    let honoured = most_conns <= POOL as u64 + 4 || max_threads < most_conns;
    if honoured {
        cx.records.extend(recs.into_iter().map(|mut r| {
            r.server_model = Some("pool".into());
            r.note = Some(format!(
                "-ORBThreadPool {POOL}; server had at most {max_threads} threads"
            ));
            r
        }));
    } else {
        let mut pool = Record::new("concurrency", CORBINA).unavailable(&format!(
            "not yet available: -ORBThreadPool {POOL} is not honoured (the server ran \
             {max_threads} threads for {most_conns} connections)"
        ));
        pool.server_model = Some("pool".into());
        cx.records.push(pool);
    }
    if let Some((_, oior)) = &omni {
        cx.progress.stage("concurrency: omniORB server");
        let mut c = cx.self_cmd("client");
        c.arg("--ior").arg(oior);
        conc(&mut c);
        let (recs, _) = cx.client("corbina client to omni_server", &mut c, false)?;
        cx.records.extend(recs.into_iter().map(|mut r| {
            r.implementation = OMNIORB.into();
            r.client = Some(CORBINA.into());
            r.server_model = Some("omniORB default (thread per connection)".into());
            r
        }));
    }
    drop(corbina);
    drop(omni);

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
            c.args(["--scal-calls", &p.scal_calls.to_string()]);
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
    }
    drop(sock);
    cx.progress.stage("done");
    Ok(())
}
