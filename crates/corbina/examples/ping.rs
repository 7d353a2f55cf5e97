//! Calls `ping` (no arguments, no result) on an object N times and prints the median round
//! trip: the smallest useful client, and the one to run under a profiler.
//!
//! `cargo run --release -p corbina --example ping -- IOR|corbaloc [N]`

use std::time::Instant;

fn main() -> Result<(), corbina::Report> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (orb, args) = corbina::Orb::init(args)?;
    let target = args.first().ok_or("usage: ping IOR|corbaloc|FILE [N]")?;
    let target = match std::fs::read_to_string(target) {
        Ok(s) => s.lines().next().unwrap_or_default().trim().to_owned(),
        Err(_) => target.clone(),
    };
    let n: usize = args
        .get(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(10_000);
    let obj = orb.string_to_object(&target)?;
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        obj.invoke("ping", |_| Ok(()), |_| Ok(()), corbina::no_user)?;
        times.push(t.elapsed());
    }
    times.sort();
    println!(
        "{n} calls, median {:?}, p99 {:?}",
        times[n / 2],
        times[n * 99 / 100]
    );
    Ok(())
}
