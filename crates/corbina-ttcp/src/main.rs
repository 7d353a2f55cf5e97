//! `corbina-ttcp`: the seeds' benchmark experiments over Corbina.
//!
//! ```text
//! corbina-ttcp server [--endpoint HOST:PORT] [--objects N] [--ior-file F] [-ORB… options]
//! corbina-ttcp client --ior IOR|FILE|corbaloc [--check] [-ORB… options]
//! ```
//!
//! `server` serves `idl/bench.idl` with the semantics `omni_client --mode check` verifies
//! and writes one IOR per line to the IOR file (stdout without one). `client --check` calls
//! every operation once with known values, printing JSON lines like `omni_client`; it exits
//! 1 if any check fails.

use std::process::ExitCode;
use std::sync::Arc;

use corbina::config::Endpoint;
use corbina::{Orb, OrbConfig};
use corbina_ttcp::bench::{Bench, BenchSkeleton};
use corbina_ttcp::servant::{BenchImpl, ByteCounter};

fn usage() -> ExitCode {
    eprintln!(
        "usage:\n  corbina-ttcp server [--endpoint HOST:PORT] [--objects N] [--ior-file F] [-ORB…]\n  \
         corbina-ttcp client --ior IOR|FILE|corbaloc [--check] [-ORB…]"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        return usage();
    }
    let cmd = args.remove(0);
    let (config, rest) = match OrbConfig::from_args_and_env(args) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("corbina-ttcp: {e}");
            return ExitCode::from(2);
        }
    };
    let result = match cmd.as_str() {
        "server" => server(config, rest),
        "client" => client(config, rest),
        _ => return usage(),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("corbina-ttcp: {e}");
            ExitCode::from(2)
        }
    }
}

fn take_value(args: &[String], i: &mut usize, flag: &str) -> Result<String, String> {
    *i += 1;
    args.get(*i)
        .cloned()
        .ok_or_else(|| format!("{flag} needs a value"))
}

fn server(mut config: OrbConfig, args: Vec<String>) -> Result<ExitCode, String> {
    let mut objects = 1usize;
    let mut ior_file = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--endpoint" => {
                let v = take_value(&args, &mut i, "--endpoint")?;
                let (host, port) = v.rsplit_once(':').ok_or("--endpoint wants HOST:PORT")?;
                let port = port.parse().map_err(|_| format!("bad port in {v}"))?;
                let host = host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_owned();
                config.endpoints = vec![Endpoint { host, port }];
            }
            "--objects" => {
                objects = take_value(&args, &mut i, "--objects")?
                    .parse()
                    .map_err(|_| "--objects wants a number")?;
            }
            "--ior-file" => ior_file = Some(take_value(&args, &mut i, "--ior-file")?),
            "--dsi" => return Err("--dsi: not yet supported (comes with the DSI)".into()),
            other => return Err(format!("unknown server option {other}")),
        }
        i += 1;
    }
    let orb = Orb::with_config(config);
    let poa = orb.root_poa();
    let counter = Arc::new(ByteCounter::default());
    let mut iors = String::new();
    for _ in 0..objects {
        let servant = Arc::new(BenchSkeleton::new(BenchImpl::new(counter.clone())));
        let id = poa.activate_object(servant).map_err(|e| e.to_string())?;
        let obj = poa.id_to_reference(&id).map_err(|e| e.to_string())?;
        iors.push_str(&orb.object_to_string(&obj).map_err(|e| e.to_string())?);
        iors.push('\n');
    }
    poa.the_poa_manager()
        .activate()
        .map_err(|e| e.to_string())?;
    match ior_file {
        Some(f) => std::fs::write(&f, iors).map_err(|e| format!("{f}: {e}"))?,
        None => print!("{iors}"),
    }
    orb.run();
    Ok(ExitCode::SUCCESS)
}

fn client(config: OrbConfig, args: Vec<String>) -> Result<ExitCode, String> {
    let mut ior = None;
    let mut check = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--ior" => ior = Some(take_value(&args, &mut i, "--ior")?),
            "--check" => check = true,
            other => return Err(format!("unknown client option {other}")),
        }
        i += 1;
    }
    let ior = ior.ok_or("client needs --ior")?;
    let text = if ior.starts_with("IOR:") || ior.starts_with("corba") {
        ior
    } else {
        // A file of IORs, one per line, as omni_server writes: use the first.
        let content = std::fs::read_to_string(&ior).map_err(|e| format!("{ior}: {e}"))?;
        content.lines().next().unwrap_or_default().trim().to_owned()
    };
    let orb = Orb::with_config(config);
    let obj = orb.string_to_object(&text).map_err(|e| e.to_string())?;
    let bench = Bench::narrow(&obj).map_err(|e| e.to_string())?;
    if !check {
        return Err(
            "nothing to do: give --check (experiments come with the benchmark suite)".into(),
        );
    }
    let results = corbina_ttcp::check::run_checks(&bench);
    let mut failed = 0;
    for r in &results {
        println!("{}", r.json("tcp"));
        if !r.ok() {
            failed += 1;
        }
    }
    if failed > 0 {
        eprintln!("corbina-ttcp: {failed} check(s) failed");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
