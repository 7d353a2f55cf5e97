//! A bridge: a DSI servant for `IDL:Bench:1.0` that forwards every request, through the
//! DII, to another object, passing the values through as opaque `Any`s (see
//! `bridge/forward.rs`). The operation signatures are TypeCodes built with the TypeCode
//! factory (`bridge/bench_signatures.rs`), not generated code.
//!
//! `cargo run --release -p corbina --example bridge -- --target IOR|corbaloc|FILE
//!  [--endpoint HOST:PORT] [--ior-file F] [-ORB…]`
//!
//! Prints its own IOR (and writes it, one line, to `--ior-file`), then serves until killed.

#[path = "bridge/bench_signatures.rs"]
mod bench_signatures;
#[path = "bridge/forward.rs"]
mod forward;

use std::sync::Arc;

use corbina::config::Endpoint;
use corbina::{DsiSkeleton, Orb, OrbConfig};

use bench_signatures::{BenchTypes, BENCH_ID};
use forward::Bridge;

const USAGE: &str =
    "usage: bridge --target IOR|corbaloc|FILE [--endpoint HOST:PORT] [--ior-file F] [-ORB…]";

/// An IOR or corbaloc given directly, or the first line of the file naming one.
fn read_target(s: &str) -> String {
    match std::fs::read_to_string(s) {
        Ok(text) => text.lines().next().unwrap_or_default().trim().to_owned(),
        Err(_) => s.to_owned(),
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("bridge: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let (mut config, args) = OrbConfig::from_args_and_env(std::env::args().skip(1))?;
    let (mut target, mut ior_file) = (None, None);
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or(USAGE);
        match a.as_str() {
            "--target" => target = Some(read_target(&value()?)),
            "--ior-file" => ior_file = Some(value()?),
            "--endpoint" => {
                let v = value()?;
                let (host, port) = v.rsplit_once(':').ok_or("--endpoint wants HOST:PORT")?;
                config.endpoints = vec![Endpoint {
                    host: host.trim_matches(['[', ']']).to_owned(),
                    port: port.parse()?,
                }];
            }
            _ => return Err(format!("unknown argument {a:?}\n{USAGE}").into()),
        }
    }
    let target = target.ok_or(USAGE)?;

    let orb = Orb::with_config(config);
    let target = orb.string_to_object(&target)?;
    let bridge = Bridge::new(BENCH_ID, target, BenchTypes::new()?.signatures());
    let stats = bridge.stats();
    let poa = orb.root_poa();
    let id = poa.activate_object(Arc::new(DsiSkeleton::new(bridge)))?;
    let ior = orb.object_to_string(&poa.id_to_reference(&id)?)?;
    poa.the_poa_manager().activate()?;
    if let Some(f) = ior_file {
        // Written whole, then renamed, so a reader never sees half a line.
        let tmp = format!("{f}.tmp");
        std::fs::write(&tmp, format!("{ior}\n"))?;
        std::fs::rename(&tmp, &f)?;
    }
    println!("{ior}");
    orb.run();
    eprintln!(
        "bridge: forwarded {} requests with {} DII requests built",
        stats.forwarded.load(std::sync::atomic::Ordering::Relaxed),
        stats.built.load(std::sync::atomic::Ordering::Relaxed)
    );
    Ok(())
}
