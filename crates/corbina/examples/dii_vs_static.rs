//! Dynamic against static invocation, measured in one run on loopback IIOP: the null
//! twoway call (`ping`) through a reused DII request against the generated stub, and the
//! throughput of a 1 MB `sequence<BinStruct>` (`send_structs`) sent through the DII and
//! received through the DSI against the generated stub and skeleton. Prints medians over
//! rounds and their ratios (dynamic / static; lower is better for times, higher for
//! throughput).
//!
//! `cargo run --release -p corbina --example dii_vs_static [ROUNDS]`

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::bench::{self, Bench, BenchSkeleton, BinStruct};
use common::{client, serve, StaticBench};
use corbina::dii::{NVList, ARG_IN};
use corbina::{
    Any, DsiSkeleton, DynServerRequest, DynamicImplementation, SystemException, TypeCode,
};

/// The Bench operations the measurement uses, served through the DSI.
#[derive(Default)]
struct DsiSink {
    bytes: AtomicU64,
    structs: std::sync::OnceLock<TypeCode>,
}

impl DynamicImplementation for DsiSink {
    fn primary_interface(&self) -> &'static str {
        "IDL:Bench:1.0"
    }

    fn invoke(&self, req: &mut DynServerRequest<'_, '_, '_>) -> Result<(), SystemException> {
        match req.operation() {
            "send_structs" | "send_structs_oneway" => {
                let tc = self.structs.get_or_init(bench::struct_seq_type_code);
                let mut args = NVList::new();
                args.add_item("s", tc, ARG_IN);
                let args = req.arguments(args)?;
                let n = match args.item(0).and_then(|a| a.value()) {
                    Some(v) => v.value_reader().read_ulong()?,
                    None => 0,
                };
                self.bytes.fetch_add(u64::from(n) * 24, Ordering::Relaxed);
            }
            "ping" | "start_timer" => {
                req.arguments(NVList::new())?;
                self.bytes.store(0, Ordering::Relaxed);
            }
            "stop_timer" => {
                req.arguments(NVList::new())?;
                req.set_result(Any::insert(&self.bytes.load(Ordering::Relaxed))?)?;
            }
            _ => return Err(corbina::servant::bad_operation()),
        }
        Ok(())
    }
}

/// This thread's CPU time so far (Linux: `/proc/thread-self/schedstat`, nanoseconds).
fn thread_cpu() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(Duration::from_nanos(
        s.split_whitespace().next()?.parse().ok()?,
    ))
}

/// Runs `f` `n` times; returns wall and CPU time per call.
fn per_call(n: u32, mut f: impl FnMut()) -> (Duration, Option<Duration>) {
    let (c0, t0) = (thread_cpu(), Instant::now());
    for _ in 0..n {
        f();
    }
    let wall = t0.elapsed() / n;
    let cpu = thread_cpu().zip(c0).map(|(c1, c0)| (c1 - c0) / n);
    (wall, cpu)
}

fn median<T: PartialOrd + Copy>(mut v: Vec<T>) -> T {
    v.sort_by(|a, b| a.partial_cmp(b).expect("comparable"));
    v[v.len() / 2]
}

fn main() -> Result<(), corbina::Report> {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(15);
    let (static_server, static_ior) = serve(Arc::new(BenchSkeleton::new(Arc::new(
        StaticBench::default(),
    ))));
    let (dsi_server, dsi_ior) = serve(Arc::new(DsiSkeleton::new(DsiSink::default())));
    let (_c1, static_obj) = client(&static_ior);
    let (_c2, dsi_obj) = client(&dsi_ior);
    let stub = Bench::narrow(&static_obj)?;
    let dsi_stub = Bench::narrow(&dsi_obj)?;

    // ---- null twoway call
    const CALLS: u32 = 5000;
    let mut ping = static_obj.request("ping");
    for _ in 0..CALLS {
        stub.ping()?;
        ping.invoke()?;
    }
    let (mut s_wall, mut s_cpu, mut d_wall, mut d_cpu) = (vec![], vec![], vec![], vec![]);
    for _ in 0..rounds {
        let (w, c) = per_call(CALLS, || stub.ping().expect("ping"));
        s_wall.push(w);
        s_cpu.extend(c);
        let (w, c) = per_call(CALLS, || ping.invoke().expect("DII ping"));
        d_wall.push(w);
        d_cpu.extend(c);
    }
    let (sw, dw) = (median(s_wall), median(d_wall));
    println!("null twoway call, {rounds} rounds × {CALLS} calls, medians:");
    println!(
        "  latency  static {sw:?}  DII {dw:?}  ratio {:.3}",
        dw.as_secs_f64() / sw.as_secs_f64()
    );
    if !s_cpu.is_empty() && !d_cpu.is_empty() {
        let (sc, dc) = (median(s_cpu), median(d_cpu));
        println!(
            "  client CPU  static {sc:?}  DII {dc:?}  ratio {:.3}",
            dc.as_secs_f64() / sc.as_secs_f64()
        );
    }

    // ---- 1 MB sequence<BinStruct>, twoway
    let data: Vec<BinStruct> = (0..(1 << 20) / 24)
        .map(|i| BinStruct {
            s: i as i16,
            c: b'q',
            l: i,
            o: i as u8,
            d: f64::from(i) * 0.5,
        })
        .collect();
    let bytes = data.len() as f64 * 24.0;
    const SENDS: u32 = 40;
    let tc = bench::struct_seq_type_code();
    // DII with the value inserted once and the request reused (the marshalling plan and
    // the value both kept), and DII inserting the value anew every call.
    let dii_req =
        |obj: &corbina::ObjectRef| -> Result<corbina::Request, corbina::cdr::MarshalError> {
            let mut r = obj.request("send_structs");
            r.add_in_arg("s", Any::insert_as(tc.clone(), &data)?);
            Ok(r)
        };
    let mut dii_static = dii_req(&static_obj)?;
    let mut dii_dsi = dii_req(&dsi_obj)?;
    let mut dii_insert = dii_req(&static_obj)?;
    let mbps = |d: Duration| bytes / d.as_secs_f64() / 1e6;
    type Case<'a> = (&'a str, Box<dyn FnMut() + 'a>);
    let mut cases: Vec<Case<'_>> = vec![
        (
            "static stub → static skeleton",
            Box::new(|| stub.send_structs(&data).expect("send")),
        ),
        (
            "DII (reused) → static skeleton",
            Box::new(|| dii_static.invoke().expect("DII send")),
        ),
        (
            "DII (insert per call) → static",
            Box::new(|| {
                let v = Any::insert_as(tc.clone(), &data).expect("insert");
                dii_insert.set_argument(0, v).expect("set");
                dii_insert.invoke().expect("DII send");
            }),
        ),
        (
            "static stub → DSI",
            Box::new(|| dsi_stub.send_structs(&data).expect("send")),
        ),
        (
            "DII (reused) → DSI",
            Box::new(|| dii_dsi.invoke().expect("DII send")),
        ),
    ];
    let mut results: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    for (_, f) in cases.iter_mut() {
        for _ in 0..5 {
            f();
        }
    }
    for _ in 0..rounds {
        for (i, (_, f)) in cases.iter_mut().enumerate() {
            let (w, _) = per_call(SENDS, &mut **f);
            results[i].push(mbps(w));
        }
    }
    println!(
        "send_structs twoway, 1 MB ({} BinStructs), {rounds} rounds × {SENDS} calls, median MB/s:",
        data.len()
    );
    let base = median(results[0].clone());
    for ((name, _), r) in cases.iter().zip(&results) {
        let m = median(r.clone());
        println!("  {name:32} {m:8.1} MB/s  static/this {:.3}", base / m);
    }
    drop(cases);
    static_server.shutdown(true);
    dsi_server.shutdown(true);
    Ok(())
}
