//! Null oneway rate, unbuffered against buffered (`-ORBOnewaySyncScope none`), measured in
//! one run: N `ping_oneway` calls closed by one twoway `ping` (so every oneway has been
//! delivered and run when the clock stops), as omniORB's peer client measures it. Prints
//! the median over rounds of each, and their ratio.
//!
//! `cargo run --release -p corbina --example oneway_rate -- [N] [ROUNDS] [IOR|FILE]`
//!
//! Without an IOR the server is a Corbina ORB in this process, reached over loopback TCP
//! by a second ORB; with one (an omniORB `omni_server`, say) that server is used.

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::Instant;

use common::bench::{Bench, BenchSkeleton};
use common::{serve, StaticBench};
use corbina::client::{set_thread_oneway_buffering, OnewayBuffering};
use corbina::config::BufferingConstraint;
use corbina::{Orb, OrbConfig};

/// Calls per second of `n` oneways and one twoway, the median of `rounds` runs.
fn rate(bench: &Bench, n: usize, rounds: usize) -> Result<f64, corbina::SystemException> {
    for _ in 0..n.min(10_000) {
        bench.ping_oneway()?;
    }
    bench.ping()?;
    let mut rates = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..n {
            bench.ping_oneway()?;
        }
        bench.ping()?;
        rates.push(n as f64 / t.elapsed().as_secs_f64());
    }
    rates.sort_by(f64::total_cmp);
    Ok(rates[rates.len() / 2])
}

fn main() -> Result<(), corbina::Report> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args
        .first()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(200_000);
    let rounds: usize = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(7);
    let (_server, ior) = match args.get(2) {
        Some(target) => {
            let ior = match std::fs::read_to_string(target) {
                Ok(s) => s.lines().next().unwrap_or_default().trim().to_owned(),
                Err(_) => target.clone(),
            };
            (None, ior)
        }
        None => {
            let (orb, ior) = serve(Arc::new(BenchSkeleton::new(Arc::new(
                StaticBench::default(),
            ))));
            (Some(orb), ior)
        }
    };
    let client = Orb::with_config(OrbConfig::default());
    let bench = Bench::narrow(&client.string_to_object(&ior)?)?;
    let bounds = BufferingConstraint::default();

    set_thread_oneway_buffering(OnewayBuffering::Off);
    let unbuffered = rate(&bench, n, rounds)?;
    set_thread_oneway_buffering(OnewayBuffering::On(bounds));
    let buffered = rate(&bench, n, rounds)?;
    // Every buffered oneway arrives: the server counts the bytes of `send_octets_oneway`.
    // A Corbina server has run them all when it answers the next twoway; omniORB may run
    // pipelined oneways on other threads, so poll (bounded), as its own client does.
    bench.start_timer()?;
    for _ in 0..1000 {
        bench.send_octets_oneway(&[1; 8])?;
    }
    set_thread_oneway_buffering(OnewayBuffering::OrbDefault);
    let start = Instant::now();
    let mut counted = bench.stop_timer()?;
    while counted != 8000 && start.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(10));
        counted = bench.stop_timer()?;
    }
    if counted != 8000 {
        return Err(
            format!("the server counted {counted} bytes of buffered oneways, not 8000").into(),
        );
    }

    println!("null oneways, {n} per round, median of {rounds} rounds, closed by one twoway");
    println!("unbuffered (SyncScope transport): {unbuffered:>10.0} calls/s");
    println!(
        "buffered   (SyncScope none, {} B / {} msgs / {:?}): {buffered:>10.0} calls/s",
        bounds.max_bytes, bounds.max_count, bounds.max_delay
    );
    println!("buffered / unbuffered: {:.2}x", buffered / unbuffered);
    println!("delivery check: 1000 buffered send_octets_oneway counted by the server");
    Ok(())
}
