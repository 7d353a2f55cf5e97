//! Collocated calls measured in one run: the same generated `Bench` proxy calling a servant
//! of its own ORB directly (the default) and through `ObjectRef::without_collocation`
//! (marshalled, over a loopback IIOP connection, run on a server thread). Prints the median
//! ns/call over rounds for `ping` (null twoway) and `echo` (a short string each way), and the
//! ratio loopback / direct.
//!
//! `cargo run --release -p corbina --example collocated [ROUNDS]`

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::Instant;

use common::bench::{Bench, BenchSkeleton};
use common::{serve, StaticBench};
use corbina::SystemException;

/// Median ns/call of `calls` calls of `f`, over `rounds` rounds.
fn median_ns(
    rounds: usize,
    calls: usize,
    mut f: impl FnMut() -> Result<(), SystemException>,
) -> Result<f64, SystemException> {
    let mut per_call = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..calls {
            f()?;
        }
        per_call.push(t.elapsed().as_nanos() as f64 / calls as f64);
    }
    per_call.sort_by(f64::total_cmp);
    Ok(per_call[rounds / 2])
}

fn main() -> Result<(), corbina::Report> {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(7);
    let (orb, ior) = serve(Arc::new(BenchSkeleton::new(Arc::new(
        StaticBench::default(),
    ))));
    let obj = orb.string_to_object(&ior)?;
    assert!(obj.is_collocated(), "a reference to the ORB's own object");
    let direct = Bench::unchecked_narrow(&obj);
    let remote = Bench::unchecked_narrow(&obj.without_collocation());
    // Warm up: the connection, the caches, the server thread.
    for _ in 0..1000 {
        direct.ping()?;
        remote.ping()?;
    }
    let (direct_calls, remote_calls) = (1_000_000, 10_000);
    println!("{rounds} rounds; median ns/call (direct: {direct_calls} calls/round, loopback IIOP: {remote_calls})");
    println!(
        "{:<8} {:>12} {:>16} {:>10}",
        "op", "direct", "loopback IIOP", "ratio"
    );
    type Op = fn(&Bench) -> Result<(), SystemException>;
    let ops: [(&str, Op); 2] = [
        ("ping", |b| b.ping()),
        ("echo", |b| b.echo("hello, collocated").map(drop)),
    ];
    for (name, op) in ops {
        let d = median_ns(rounds, direct_calls, || op(&direct))?;
        let r = median_ns(rounds, remote_calls, || op(&remote))?;
        println!("{name:<8} {d:>12.1} {r:>16.1} {:>9.0}x", r / d);
    }
    assert_eq!(
        orb.connections()
            .iter()
            .map(|c| c.open_strands)
            .sum::<usize>(),
        1,
        "only the opt-out connects"
    );
    orb.destroy();
    Ok(())
}
