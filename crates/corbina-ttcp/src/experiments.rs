//! The experiments a client runs, for Corbina (`client --mode …`) and for the raw-socket
//! baseline (`sock-client --mode …`). Each prints [`Record`]s as JSON lines. The latency,
//! throughput and scalability loops mirror `peers/omni_client.cc` step for step (same
//! warm-up, same call counts, same clocks, same stop-timer polling), so the three
//! implementations are measured the same way.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use corbina::client::{set_thread_oneway_buffering, OnewayBuffering};
use corbina::config::BufferingConstraint;
use corbina::dii::Request;
use corbina::{
    Any, DiiError, ObjectRef, Orb, OrbConfig, SystemException, SystemExceptionKind, TypeCode,
};

use crate::bench::{self, Bench, BinStruct};
use crate::record::{send_op, Record, CORBINA, SOCKET};
use crate::stats::summarize;
use crate::sys::self_cpu_seconds;

/// How calls are made: the invocation modes of the seed papers' DII/DSI study.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Invocation {
    /// Generated stubs and skeletons.
    #[default]
    Static,
    /// Dynamic Invocation Interface, a new `Request` built (and its `Any` argument
    /// inserted) for every call.
    Dii,
    /// Dynamic Invocation Interface, one `Request` built once and invoked again and again.
    DiiReuse,
    /// Dynamic Skeleton Interface on the server (`server --dsi`), static stubs on the
    /// client.
    Dsi,
}

impl Invocation {
    /// Every mode, in report order.
    pub const ALL: [Invocation; 4] = [
        Invocation::Static,
        Invocation::Dii,
        Invocation::DiiReuse,
        Invocation::Dsi,
    ];

    /// The name in JSON and tables.
    pub fn name(self) -> &'static str {
        match self {
            Invocation::Static => "static",
            Invocation::Dii => "dii",
            Invocation::DiiReuse => "dii_reuse",
            Invocation::Dsi => "dsi",
        }
    }

    /// The mode called `name`.
    pub fn parse(name: &str) -> Option<Invocation> {
        Invocation::ALL.into_iter().find(|i| i.name() == name)
    }
}

/// Options of the experiment loops (the names follow `omni_client`).
#[derive(Debug, Clone)]
pub struct ExpOpts {
    /// `lat`, `payload`, `thr`, `scal`, `conc`.
    pub modes: Vec<String>,
    /// Transport label.
    pub label: String,
    /// Timed calls per latency test.
    pub count: usize,
    /// Untimed calls before each latency test.
    pub warmup: usize,
    /// Payload MB (1e6 B) per throughput point.
    pub total_mb: f64,
    /// At least this many calls per throughput point.
    pub min_calls: u64,
    /// Stop a throughput point after this many seconds.
    pub max_point_s: f64,
    /// Sender buffer sizes, KiB.
    pub kbs: Vec<u64>,
    /// Throughput types.
    pub types: Vec<String>,
    /// `oneway`, `twoway`.
    pub thr_modes: Vec<String>,
    /// Element counts of the payload latency test.
    pub sizes: Vec<u64>,
    /// Types of the payload latency test.
    pub payload_types: Vec<String>,
    /// Objects used from the IOR file by `scal` (all when `None`).
    pub nobj: Option<usize>,
    /// Timed calls per scalability order.
    pub scal_calls: usize,
    /// Client thread counts for `conc`.
    pub threads: Vec<u64>,
    /// `own` (an ORB and connection per thread) and/or `shared` (one reference).
    pub sharing: Vec<String>,
    /// Seconds per concurrency point.
    pub conc_seconds: f64,
    /// How `lat`, `payload` and `thr` make their calls (`dsi`: static calls, labelled for
    /// a `server --dsi`).
    pub invocation: Invocation,
}

impl Default for ExpOpts {
    fn default() -> Self {
        ExpOpts {
            modes: vec!["lat".into()],
            label: "tcp".into(),
            count: 20000,
            warmup: 1000,
            total_mb: 64.0,
            min_calls: 500,
            max_point_s: 0.3,
            kbs: powers(1, 1024, 2),
            types: TYPES.iter().map(|s| s.to_string()).collect(),
            thr_modes: vec!["oneway".into(), "twoway".into()],
            sizes: powers(1, 1024, 2),
            payload_types: vec!["octet".into(), "struct".into()],
            nobj: None,
            scal_calls: 20000,
            threads: vec![1, 2, 8, 64, 512],
            sharing: vec!["own".into(), "shared".into()],
            conc_seconds: 1.0,
            invocation: Invocation::Static,
        }
    }
}

/// The throughput types in report order.
pub const TYPES: [&str; 6] = ["octet", "short", "long", "double", "char", "struct"];

/// `from`, `from·step`, … up to `to`.
pub fn powers(from: u64, to: u64, step: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut x = from.max(1);
    while x <= to {
        v.push(x);
        x *= step.max(2);
    }
    v
}

fn list(v: &str) -> Vec<String> {
    v.split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

fn nums(v: &str) -> Result<Vec<u64>, String> {
    v.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| format!("bad number {s}")))
        .collect()
}

impl ExpOpts {
    /// Applies one experiment option (`args[*i]`, value in `args[*i + 1]`); false if the
    /// option is not an experiment option.
    pub fn parse_one(&mut self, args: &[String], i: &mut usize) -> Result<bool, String> {
        let flag = args[*i].as_str();
        let known = [
            "--mode",
            "--label",
            "--count",
            "--warmup",
            "--total-mb",
            "--min-calls",
            "--max-point-s",
            "--min-kb",
            "--max-kb",
            "--kbs",
            "--types",
            "--modes",
            "--sizes",
            "--payload-types",
            "--nobj",
            "--scal-calls",
            "--threads",
            "--sharing",
            "--conc-seconds",
            "--invocation",
        ];
        if !known.contains(&flag) {
            return Ok(false);
        }
        *i += 1;
        let v = args
            .get(*i)
            .ok_or_else(|| format!("{flag} needs a value"))?
            .clone();
        let num = |v: &str| {
            v.parse::<f64>()
                .map_err(|_| format!("{flag}: bad number {v}"))
        };
        match flag {
            "--mode" => self.modes = list(&v),
            "--label" => self.label = v,
            "--count" => self.count = num(&v)? as usize,
            "--warmup" => self.warmup = num(&v)? as usize,
            "--total-mb" => self.total_mb = num(&v)?,
            "--min-calls" => self.min_calls = num(&v)? as u64,
            "--max-point-s" => self.max_point_s = num(&v)?,
            "--min-kb" => {
                let max = self.kbs.last().copied().unwrap_or(1024);
                self.kbs = powers(num(&v)? as u64, max, 2);
            }
            "--max-kb" => {
                let min = self.kbs.first().copied().unwrap_or(1);
                self.kbs = powers(min, num(&v)? as u64, 2);
            }
            "--kbs" => self.kbs = nums(&v)?,
            "--types" => self.types = list(&v),
            "--modes" => self.thr_modes = list(&v),
            "--sizes" => self.sizes = nums(&v)?,
            "--payload-types" => self.payload_types = list(&v),
            "--nobj" => self.nobj = Some(num(&v)? as usize),
            "--scal-calls" => self.scal_calls = num(&v)? as usize,
            "--threads" => self.threads = nums(&v)?,
            "--sharing" => self.sharing = list(&v),
            "--conc-seconds" => self.conc_seconds = num(&v)?,
            "--invocation" => {
                self.invocation = Invocation::parse(&v).ok_or_else(|| {
                    format!("--invocation: static, dii, dii_reuse or dsi, not {v}")
                })?
            }
            _ => unreachable!(),
        }
        if self.count == 0 || self.total_mb <= 0.0 || self.max_point_s <= 0.0 {
            return Err(format!("{flag}: value out of range"));
        }
        Ok(true)
    }

    fn has(&self, mode: &str) -> bool {
        self.modes.iter().any(|m| m == mode || m == "all")
    }
}

/// Element size in bytes (the servant's accounting).
pub fn elem_size(t: &str) -> usize {
    match t {
        "short" => 2,
        "long" => 4,
        "double" => 8,
        "struct" => 24,
        _ => 1,
    }
}

/// A sequence to send, of one type.
pub enum Data {
    /// `sequence<octet>`.
    Octet(Vec<u8>),
    /// `sequence<short>`.
    Short(Vec<i16>),
    /// `sequence<long>`.
    Long(Vec<i32>),
    /// `sequence<double>`.
    Double(Vec<f64>),
    /// `sequence<char>`.
    Char(Vec<u8>),
    /// `sequence<BinStruct>`.
    Struct(Vec<BinStruct>),
}

impl Data {
    /// `n` elements of type `t`, filled as `omni_client` fills them.
    pub fn new(t: &str, n: usize) -> Option<Data> {
        Some(match t {
            "octet" => Data::Octet((0..n).map(|i| (i & 0x7f) as u8).collect()),
            "short" => Data::Short((0..n).map(|i| (i & 0x7f) as i16).collect()),
            "long" => Data::Long((0..n).map(|i| (i & 0x7f) as i32).collect()),
            "double" => Data::Double((0..n).map(|i| (i & 0x7f) as f64).collect()),
            "char" => Data::Char((0..n).map(|i| b'a' + (i % 26) as u8).collect()),
            "struct" => Data::Struct(
                (0..n)
                    .map(|i| BinStruct {
                        s: i as i16,
                        c: b'x',
                        l: i as i32,
                        o: i as u8,
                        d: i as f64 * 0.5,
                    })
                    .collect(),
            ),
            _ => return None,
        })
    }

    /// One `send_*` call, twoway or oneway.
    pub fn send(&self, b: &Bench, oneway: bool) -> Result<(), SystemException> {
        match (self, oneway) {
            (Data::Octet(s), false) => b.send_octets(s),
            (Data::Octet(s), true) => b.send_octets_oneway(s),
            (Data::Short(s), false) => b.send_shorts(s),
            (Data::Short(s), true) => b.send_shorts_oneway(s),
            (Data::Long(s), false) => b.send_longs(s),
            (Data::Long(s), true) => b.send_longs_oneway(s),
            (Data::Double(s), false) => b.send_doubles(s),
            (Data::Double(s), true) => b.send_doubles_oneway(s),
            (Data::Char(s), false) => b.send_chars(s),
            (Data::Char(s), true) => b.send_chars_oneway(s),
            (Data::Struct(s), false) => b.send_structs(s),
            (Data::Struct(s), true) => b.send_structs_oneway(s),
        }
    }

    /// The IDL type name in records.
    pub fn type_name(&self) -> &'static str {
        match self {
            Data::Octet(_) => "octet",
            Data::Short(_) => "short",
            Data::Long(_) => "long",
            Data::Double(_) => "double",
            Data::Char(_) => "char",
            Data::Struct(_) => "struct",
        }
    }

    /// The sequence in an `Any` of its IDL alias type (`OctetSeq`, …), for the DII.
    pub fn to_any(&self) -> Result<Any, SystemException> {
        let a = match self {
            Data::Octet(v) => Any::insert_as(bench::octet_seq_type_code(), v),
            Data::Short(v) => Any::insert_as(bench::short_seq_type_code(), v),
            Data::Long(v) => Any::insert_as(bench::long_seq_type_code(), v),
            Data::Double(v) => Any::insert_as(bench::double_seq_type_code(), v),
            Data::Char(v) => Any::insert_as(bench::char_seq_type_code(), v),
            Data::Struct(v) => Any::insert_as(bench::struct_seq_type_code(), v),
        };
        Ok(a?)
    }
}

/// One kind of call the experiments time.
#[derive(Clone, Copy)]
pub enum Op<'a> {
    /// `ping()`.
    Ping,
    /// `ping_oneway()`.
    PingOneway,
    /// `echo("")`.
    EchoEmpty,
    /// `send_*(data)`, oneway when true.
    Send(&'a Data, bool),
}

impl Op<'_> {
    fn oneway(&self) -> bool {
        matches!(self, Op::PingOneway | Op::Send(_, true))
    }

    fn name(&self) -> String {
        match self {
            Op::Ping => "ping".into(),
            Op::PingOneway => "ping_oneway".into(),
            Op::EchoEmpty => "echo".into(),
            Op::Send(d, oneway) => send_op(d.type_name()) + if *oneway { "_oneway" } else { "" },
        }
    }

    /// A DII request for this call, its arguments filled in.
    fn request(&self, obj: &ObjectRef) -> Result<Request, SystemException> {
        let mut r = obj.request(&self.name());
        match self {
            Op::Ping | Op::PingOneway => {}
            Op::EchoEmpty => {
                r.add_in_arg("s", Any::from_string("")?);
                r.set_return_type(TypeCode::create_string_tc(0));
            }
            Op::Send(d, _) => {
                r.add_in_arg("s", d.to_any()?);
            }
        }
        Ok(r)
    }
}

fn fire(r: &mut Request, oneway: bool) -> Result<(), SystemException> {
    if oneway {
        r.send_oneway()
    } else {
        r.invoke().map_err(|e| match e {
            DiiError::System(e) => e,
            DiiError::User(_) => SystemException::new(SystemExceptionKind::Unknown, 0),
        })
    }
}

/// Makes one kind of call, again and again, through one invocation mode.
pub struct Caller<'a> {
    b: &'a Bench,
    inv: Invocation,
    op: Op<'a>,
    /// `dii_reuse`: the request, built once.
    req: Option<Request>,
}

impl<'a> Caller<'a> {
    /// A caller of `op` on `b` through `inv` (a `dii_reuse` request is built here).
    pub fn new(inv: Invocation, b: &'a Bench, op: Op<'a>) -> Result<Caller<'a>, String> {
        let req = match inv {
            Invocation::DiiReuse => Some(op.request(b.as_object()).map_err(sys)?),
            _ => None,
        };
        Ok(Caller { b, inv, op, req })
    }

    /// One call.
    pub fn call(&mut self) -> Result<(), SystemException> {
        let b = self.b;
        match (self.inv, &mut self.req) {
            (Invocation::DiiReuse, Some(r)) => fire(r, self.op.oneway()),
            (Invocation::Dii | Invocation::DiiReuse, _) => {
                let mut r = self.op.request(b.as_object())?;
                fire(&mut r, self.op.oneway())
            }
            (Invocation::Static | Invocation::Dsi, _) => match self.op {
                Op::Ping => b.ping(),
                Op::PingOneway => b.ping_oneway(),
                Op::EchoEmpty => b.echo("").map(drop),
                Op::Send(d, oneway) => d.send(b, oneway),
            },
        }
    }
}

fn sys(e: SystemException) -> String {
    format!("CORBA::{e}")
}

fn time_calls(
    n: usize,
    mut call: impl FnMut() -> Result<(), SystemException>,
) -> Result<Vec<f64>, String> {
    let mut us = Vec::with_capacity(n);
    for _ in 0..n {
        let t0 = Instant::now();
        call().map_err(sys)?;
        us.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    Ok(us)
}

fn warm(n: usize, mut call: impl FnMut() -> Result<(), SystemException>) -> Result<(), String> {
    for _ in 0..n {
        call().map_err(sys)?;
    }
    Ok(())
}

/// The TLS settings (`-ORBssl…`) the experiments' client ORBs use: TLS servers are
/// measured like the others, every other option stays at its default.
static CLIENT_SSL: std::sync::OnceLock<corbina::config::SslConfig> = std::sync::OnceLock::new();

/// Sets the TLS settings of the experiments' client ORBs (once, before they run).
pub fn set_client_ssl(ssl: corbina::config::SslConfig) {
    let _ = CLIENT_SSL.set(ssl);
}

/// The configuration of an experiment's client ORB: the default, with the TLS settings.
fn client_config() -> OrbConfig {
    OrbConfig {
        ssl: CLIENT_SSL.get().cloned().unwrap_or_default(),
        ..OrbConfig::default()
    }
}

/// Runs the Corbina client experiments `o.modes` against `refs` (the IOR file's objects;
/// `refs[0]` for everything but `scal`), giving each record to `out`.
pub fn run_corbina(
    o: &ExpOpts,
    ior_texts: &[String],
    out: &mut dyn FnMut(Record),
) -> Result<(), String> {
    let orb = Orb::with_config(client_config());
    let first = ior_texts.first().ok_or("no IOR")?;
    let b = Bench::narrow(&orb.string_to_object(first).map_err(sys)?).map_err(sys)?;
    let inv = o.invocation;
    let rec = |e: &str| {
        let mut r = Record::new(e, CORBINA);
        r.transport = o.label.clone();
        r.invocation = Some(inv.name().into());
        r
    };
    if o.has("lat") {
        // The same three loops as omni_client --mode lat, in the same order.
        for (op, name) in [(Op::Ping, "ping"), (Op::EchoEmpty, "echo_empty")] {
            let mut c = Caller::new(inv, &b, op)?;
            let cpu0 = self_cpu_seconds();
            warm(o.warmup, || c.call())?;
            let mut us = time_calls(o.count, || c.call())?;
            let cpu = (self_cpu_seconds() - cpu0) / (o.warmup + o.count) as f64 * 1e6;
            let mut r = rec("latency")
                .mode("twoway")
                .op(name)
                .latency(&summarize(&mut us));
            r.client_cpu_us_per_call = Some(cpu);
            out(r);
        }
        let mut c = Caller::new(inv, &b, Op::PingOneway)?;
        warm(o.warmup, || c.call())?;
        b.ping().map_err(sys)?;
        // Written one by one (the default), then batched into few writes (SYNC_NONE within
        // the default bounds); the closing twoway writes the last batch ahead of itself.
        for (op, buffering) in [
            ("ping_oneway", OnewayBuffering::OrbDefault),
            (
                "ping_oneway_buffered",
                OnewayBuffering::On(BufferingConstraint::default()),
            ),
        ] {
            set_thread_oneway_buffering(buffering);
            let cpu0 = self_cpu_seconds();
            let t0 = Instant::now();
            let done = warm(o.count, || c.call()).and_then(|()| b.ping().map_err(sys));
            let dt = t0.elapsed().as_secs_f64();
            let cpu = (self_cpu_seconds() - cpu0) / o.count as f64 * 1e6;
            set_thread_oneway_buffering(OnewayBuffering::OrbDefault);
            done?;
            let mut r = rec("oneway_rate").mode("oneway").op(op);
            r.n = Some(o.count as u64);
            r.seconds = Some(dt);
            r.calls_per_s = Some(o.count as f64 / dt);
            r.mean_us = Some(dt * 1e6 / o.count as f64);
            r.client_cpu_us_per_call = Some(cpu);
            out(r);
        }
    }
    if o.has("async") {
        crate::async_bench::run(first, &o.label, o.count, out)?;
    }
    if o.has("conn") {
        // A new connection's first call: connect, the TLS handshake if any, the call (the
        // connections closed before each). Apart from `lat`, whose CPU per call it would skew.
        let mut us = Vec::with_capacity(o.count);
        for _ in 0..o.count {
            orb.close_idle_connections(std::time::Duration::ZERO);
            let t = Instant::now();
            b.ping().map_err(sys)?;
            us.push(t.elapsed().as_secs_f64() * 1e6);
        }
        out(rec("latency")
            .mode("twoway")
            .op("ping_new_connection")
            .latency(&summarize(&mut us)));
    }
    if o.has("payload") {
        for t in &o.payload_types {
            for &n in &o.sizes {
                let d = Data::new(t, n as usize).ok_or_else(|| format!("unknown type {t}"))?;
                let mut c = Caller::new(inv, &b, Op::Send(&d, false))?;
                warm(o.warmup, || c.call())?;
                let cpu0 = self_cpu_seconds();
                let mut us = time_calls(o.count, || c.call())?;
                let cpu = (self_cpu_seconds() - cpu0) / o.count as f64 * 1e6;
                let mut r = rec("latency")
                    .mode("twoway")
                    .op(&send_op(t))
                    .data_type(t)
                    .latency(&summarize(&mut us));
                r.elems = Some(n);
                r.size = Some(n * elem_size(t) as u64);
                r.client_cpu_us_per_call = Some(cpu);
                out(r);
            }
        }
    }
    if o.has("thr") {
        for t in &o.types {
            for &kb in &o.kbs {
                throughput_point(o, &b, t, kb, &rec, out)?;
            }
        }
    }
    if o.has("scal") {
        scalability(o, &orb, ior_texts, &rec, out)?;
    }
    if o.has("conc") {
        for &threads in &o.threads {
            for sharing in &o.sharing {
                let mut r = concurrency(o, &b, first, threads as usize, sharing == "own")?;
                r.transport = o.label.clone();
                out(r);
            }
        }
    }
    orb.shutdown(true);
    Ok(())
}

fn throughput_point(
    o: &ExpOpts,
    b: &Bench,
    t: &str,
    kb: u64,
    rec: &dyn Fn(&str) -> Record,
    out: &mut dyn FnMut(Record),
) -> Result<(), String> {
    let elem = elem_size(t);
    let bufsize = kb as usize * 1024;
    let n = (bufsize / elem).max(1);
    let d = Data::new(t, n).ok_or_else(|| format!("unknown type {t}"))?;
    let payload = (n * elem) as u64;
    let calls = ((o.total_mb * 1e6 / payload as f64) as u64)
        .min(10_000_000)
        .max(o.min_calls)
        .max(1);
    for oneway in [true, false] {
        let name = if oneway { "oneway" } else { "twoway" };
        if !o.thr_modes.iter().any(|m| m == name) {
            continue;
        }
        let warm_calls = (calls / 20).clamp(1, 50);
        let mut c = Caller::new(o.invocation, b, Op::Send(&d, false))?;
        warm(warm_calls as usize, || c.call())?;
        let mut c = Caller::new(o.invocation, b, Op::Send(&d, oneway))?;
        b.start_timer().map_err(sys)?;
        let t0 = Instant::now();
        let deadline = Duration::from_secs_f64(o.max_point_s);
        let mut sent = 0u64;
        while sent < calls {
            c.call().map_err(sys)?;
            sent += 1;
            if sent.is_multiple_of(8) && t0.elapsed() > deadline {
                break;
            }
        }
        let expect = payload * sent;
        let mut got = b.stop_timer().map_err(sys)?;
        while got < expect && t0.elapsed() < Duration::from_secs(30) {
            got = b.stop_timer().map_err(sys)?;
        }
        let dt = t0.elapsed().as_secs_f64();
        let mut r = rec("throughput")
            .mode(name)
            .data_type(t)
            .op(&(send_op(t) + if oneway { "_oneway" } else { "" }))
            .rate(got, dt);
        r.size = Some(payload);
        r.buf_kb = Some(kb);
        r.elems = Some(n as u64);
        r.n = Some(sent);
        r.complete = Some(got == expect);
        out(r);
    }
    Ok(())
}

fn scalability(
    o: &ExpOpts,
    orb: &Orb,
    ior_texts: &[String],
    rec: &dyn Fn(&str) -> Record,
    out: &mut dyn FnMut(Record),
) -> Result<(), String> {
    let take = o
        .nobj
        .unwrap_or(ior_texts.len())
        .min(ior_texts.len())
        .max(1);
    let refs = ior_texts[..take]
        .iter()
        .map(|s| {
            orb.string_to_object(s)
                .map(|obj| Bench::unchecked_narrow(&obj))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(sys)?;
    let n = refs.len();
    refs[0].ping().map_err(sys)?;
    let t0 = Instant::now();
    for r in &refs {
        r.ping().map_err(sys)?;
    }
    let cold = t0.elapsed().as_secs_f64() * 1e6 / n as f64;
    let k = (o.scal_calls / n).max(1);
    for order in ["request_train", "round_robin"] {
        let mut us = Vec::with_capacity(n * k);
        let mut one = |r: &Bench| -> Result<(), String> {
            let a = Instant::now();
            r.ping().map_err(sys)?;
            us.push(a.elapsed().as_secs_f64() * 1e6);
            Ok(())
        };
        if order == "request_train" {
            for r in &refs {
                for _ in 0..k {
                    one(r)?;
                }
            }
        } else {
            for _ in 0..k {
                for r in &refs {
                    one(r)?;
                }
            }
        }
        let mut r = rec("scalability")
            .mode(order)
            .op("ping")
            .latency(&summarize(&mut us));
        r.objects = Some(n as u64);
        r.cold_first_call_us = Some(cold);
        out(r);
    }
    Ok(())
}

/// `n` null twoway calls (`ping`) through `inv` on the object of `ior`, nothing timed:
/// the client the suite runs under callgrind, as `omni_ping IORFILE N` is.
pub fn ping_n(ior: &str, n: usize, inv: Invocation) -> Result<(), String> {
    let orb = Orb::with_config(with_noop_interceptors(client_config()));
    let b = Bench::narrow(&orb.string_to_object(ior).map_err(sys)?).map_err(sys)?;
    let mut c = Caller::new(inv, &b, Op::Ping)?;
    warm(n, || c.call())?;
    println!("{n} calls");
    orb.shutdown(true);
    Ok(())
}

/// `threads` client threads calling `ping` for `o.conc_seconds`: each with its own ORB
/// (hence its own rope and connection) when `own`, else all on one reference.
pub fn concurrency(
    o: &ExpOpts,
    shared: &Bench,
    ior: &str,
    threads: usize,
    own: bool,
) -> Result<Record, String> {
    let barrier = Arc::new(Barrier::new(threads + 1));
    let stop_after = Duration::from_secs_f64(o.conc_seconds);
    let mut handles = Vec::with_capacity(threads);
    for _ in 0..threads {
        let barrier = barrier.clone();
        let shared = shared.clone();
        let ior = ior.to_owned();
        let h = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || -> Result<Vec<f64>, String> {
                let setup = || -> Result<(Option<Orb>, Bench), String> {
                    if !own {
                        return Ok((None, shared));
                    }
                    let orb = Orb::with_config(client_config());
                    let b =
                        Bench::narrow(&orb.string_to_object(&ior).map_err(sys)?).map_err(sys)?;
                    b.ping().map_err(sys)?;
                    Ok((Some(orb), b))
                };
                let ready = setup();
                barrier.wait();
                let (_orb, b) = ready?;
                let t0 = Instant::now();
                let mut us = Vec::new();
                while t0.elapsed() < stop_after {
                    let a = Instant::now();
                    b.ping().map_err(sys)?;
                    us.push(a.elapsed().as_secs_f64() * 1e6);
                }
                Ok(us)
            })
            .map_err(|e| format!("spawn: {e}"))?;
        handles.push(h);
    }
    barrier.wait();
    let t0 = Instant::now();
    let mut all = Vec::new();
    let mut err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(us)) => all.extend(us),
            Ok(Err(e)) => err = Some(e),
            Err(_) => err = Some("client thread panicked".into()),
        }
    }
    let dt = t0.elapsed().as_secs_f64();
    if let Some(e) = err {
        return Err(format!("concurrency {threads} threads: {e}"));
    }
    let calls = all.len();
    let mut r = Record::new("concurrency", CORBINA)
        .mode(if own { "own_orb" } else { "shared_ref" })
        .op("ping")
        .latency(&summarize(&mut all));
    r.threads = Some(threads as u64);
    r.objects = Some(1);
    r.seconds = Some(dt);
    r.calls_per_s = Some(calls as f64 / dt);
    Ok(r)
}

/// Runs the raw-socket client experiments against a `sock-server` at `addr`
/// (`tcp:HOST:PORT` or `unix:PATH`): `lat` (null ping-pong twice and a oneway burst, the
/// shape of omni_client's three latency loops), `payload` (header + N bytes up, header
/// back) and `thr` (ttcp bulk, stream and ack-per-buffer).
pub fn run_socket(o: &ExpOpts, addr: &str, out: &mut dyn FnMut(Record)) -> Result<(), String> {
    let io = |e: std::io::Error| format!("socket: {e}");
    let rec = |e: &str| {
        let mut r = Record::new(e, SOCKET);
        r.transport = o.label.clone();
        r.invocation = None;
        r
    };
    if o.has("lat") {
        let mut us = crate::sock::pingpong(addr, 4, crate::sock::reply::ECHO, o.warmup, o.count)
            .map_err(io)?;
        let mut r = rec("latency")
            .mode("twoway")
            .op("pingpong")
            .latency(&summarize(&mut us));
        r.size = Some(4);
        out(r);
        // The same again, standing in for echo(""): keeps the CPU-per-call mix equal.
        crate::sock::pingpong(addr, 4, crate::sock::reply::ECHO, o.warmup, o.count).map_err(io)?;
        let dt = crate::sock::oneway_burst(addr, o.warmup, o.count).map_err(io)?;
        let mut r = rec("oneway_rate").mode("oneway").op("oneway_frames");
        r.n = Some(o.count as u64);
        r.seconds = Some(dt);
        r.calls_per_s = Some(o.count as f64 / dt);
        r.mean_us = Some(dt * 1e6 / o.count as f64);
        out(r);
    }
    if o.has("payload") {
        for t in &o.payload_types {
            for &n in &o.sizes {
                let size = n as usize * elem_size(t);
                let mut us =
                    crate::sock::pingpong(addr, size, crate::sock::reply::EMPTY, o.warmup, o.count)
                        .map_err(io)?;
                let mut r = rec("latency")
                    .mode("twoway")
                    .op("pingpong")
                    .data_type(t)
                    .latency(&summarize(&mut us));
                r.size = Some(size as u64);
                r.elems = Some(n);
                out(r);
            }
        }
    }
    if o.has("thr") {
        for &kb in &o.kbs {
            let bufsize = kb as usize * 1024;
            let calls = ((o.total_mb * 1e6 / bufsize as f64) as u64)
                .min(10_000_000)
                .max(o.min_calls)
                .max(1);
            for twoway in [false, true] {
                let name = if twoway { "twoway" } else { "oneway" };
                if !o.thr_modes.iter().any(|m| m == name) {
                    continue;
                }
                let b =
                    crate::sock::bulk(addr, bufsize, twoway, calls, o.max_point_s).map_err(io)?;
                let mut r = rec("throughput")
                    .mode(name)
                    .data_type("bytes")
                    .op(if twoway { "ack_per_buffer" } else { "stream" })
                    .rate(b.counted, b.seconds);
                r.size = Some(bufsize as u64);
                r.buf_kb = Some(kb);
                r.n = Some(b.sent);
                r.complete = Some(b.counted == b.sent * bufsize as u64);
                out(r);
            }
        }
    }
    Ok(())
}

/// With `TTCP_NOOP_INTERCEPTORS=1` in the environment: `config` with one client and
/// one server request interceptor that do nothing, to measure what interception costs a
/// call (`ping` and `server` take it; e.g. under `scripts/server-ir.sh`). With
/// `TTCP_REQUEST_SPANS=1` or `TTCP_REQUEST_METRICS=1`: the built-in span or metrics
/// interceptors too (`OrbConfig::request_spans`/`request_metrics`; no subscriber or
/// recorder is installed, so this is what they cost an application that turns them on
/// and does not collect).
pub fn with_noop_interceptors(config: OrbConfig) -> OrbConfig {
    let on = |name| std::env::var_os(name).is_some_and(|v| v == "1");
    let mut config = config;
    if on("TTCP_REQUEST_SPANS") {
        config = config.request_spans(true);
    }
    if on("TTCP_REQUEST_METRICS") {
        config = config.request_metrics(true);
    }
    use corbina::interceptor::{
        ClientRequestInterceptor, Interceptor, OrbInitInfo, OrbInitializer,
        ServerRequestInterceptor,
    };
    struct Noop;
    impl Interceptor for Noop {
        fn name(&self) -> &str {
            "noop"
        }
    }
    impl ClientRequestInterceptor for Noop {}
    impl ServerRequestInterceptor for Noop {}
    impl OrbInitializer for Noop {
        fn pre_init(&self, info: &mut OrbInitInfo) {
            // Fresh names in a fresh ORB: no duplicate.
            let _ = info.add_client_request_interceptor(Arc::new(Noop));
            let _ = info.add_server_request_interceptor(Arc::new(Noop));
        }
    }
    if std::env::var_os("TTCP_NOOP_INTERCEPTORS").is_some_and(|v| v == "1") {
        config.orb_initializer(Arc::new(Noop))
    } else {
        config
    }
}
