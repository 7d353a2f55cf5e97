//! `corbina-ttcp`: the seeds' benchmark experiments over Corbina.
//!
//! ```text
//! corbina-ttcp server [--endpoint HOST:PORT|ssl:HOST:PORT|unix:/PATH|shm:NAME]... [--objects N] [--dsi] [--ior-file F] [-ORB…]
//! corbina-ttcp client --ior IOR|FILE|corbaloc [--check | --mode lat|payload|thr|scal|conc …] [-ORB…]
//! corbina-ttcp bidir-server [--ior-file F] [--lifetime S] [-ORB…]
//! corbina-ttcp bidir-client --ior IOR|FILE [--count N]
//! corbina-ttcp events-channel [--ior-file F] [--data-dir DIR] [--lifetime S] [-ORB…]
//! corbina-ttcp events-client --channel REF [--impl NAME] [--kind any|structured] [--filter] [--consumers N] [--events N] [--size B] [--slow] [--samples N] [--rounds N]
//! corbina-ttcp suite [--quick] [--json FILE] [--plot DIR] [--peer omniorb] [--pin same|split|none]
//!     [--rounds N] [--callgrind] [--transports tcp,unix,shm] [--only EXPERIMENTS]
//! ```
//!
//! `server` serves `idl/bench.idl` with the semantics `omni_client --mode check` verifies
//! and writes one IOR per line to the IOR file (stdout without one). `client --check` calls
//! every operation once with known values, printing JSON lines like `omni_client`; it exits
//! 1 if any check fails. `client --mode …` runs the experiments against any bench.idl
//! server (Corbina's or omniORB's) and prints one JSON record per measurement
//! (docs/benchmarks.md). `suite` runs everything on loopback and reports ratios.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use corbina::config::Endpoint;
use corbina::dsi::DsiSkeleton;
use corbina::{Orb, OrbConfig};
use corbina_ttcp::bench::{Bench, BenchSkeleton};
use corbina_ttcp::dsi::DsiBench;
use corbina_ttcp::experiments::{run_corbina, run_socket, ExpOpts};
use corbina_ttcp::servant::{BenchImpl, ByteCounter};

mod cli;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The ORB's options first, as `Orb::init` takes them: clap never sees them.
    let (config, mut rest) = match OrbConfig::from_args_and_env(args) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}\n\nFor more information, try '--help'.");
            return ExitCode::from(2);
        }
    };
    // clap checks the command line (and answers --help, --version, usage errors); the
    // subcommand's parser then reads what it accepted.
    let cmd = {
        use clap::Parser;
        cli::Cli::parse_from(std::iter::once("corbina-ttcp".to_owned()).chain(rest.clone())).command
    };
    // `--flag=value` as two words: the subcommands' parsers take them apart.
    let args = rest
        .split_off(1)
        .into_iter()
        .flat_map(|a| match a.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                vec![flag.to_owned(), value.to_owned()]
            }
            _ => vec![a],
        })
        .collect();
    let result = match cmd {
        cli::Command::Server(_) => server(config, args),
        cli::Command::Client(_) => client(config, args),
        cli::Command::BidirServer(_) => bidir_server(config, args),
        cli::Command::BidirClient(_) => bidir_client(args),
        cli::Command::EventsChannel(a) => events_channel(config, a),
        cli::Command::EventsClient(a) => events_client(a),
        cli::Command::Suite(_) => corbina_ttcp::suite::main(args),
        cli::Command::SockServer(_) => sock_server(args),
        cli::Command::SockClient(_) => sock_client(args),
        cli::Command::Ping(_) => ping(config, args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("corbina-ttcp {}: {e}", cmd_name(&rest));
            ExitCode::from(2)
        }
    }
}

fn cmd_name(rest: &[String]) -> &str {
    rest.first().map_or("", String::as_str)
}

/// `bidir-server`: a Registrar of `idl/bidir.idl` accepting bidirectional GIOP; its IOR to
/// the IOR file (stdout without one).
fn bidir_server(config: OrbConfig, args: Vec<String>) -> Result<ExitCode, String> {
    let (mut ior_file, mut lifetime) = (None, None);
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--ior-file" => ior_file = Some(take_value(&args, &mut i, "--ior-file")?),
            "--lifetime" => {
                let v = take_value(&args, &mut i, "--lifetime")?;
                lifetime = Some(
                    v.parse::<f64>()
                        .map_err(|e| format!("--lifetime {v}: {e}"))?,
                );
            }
            other => return Err(format!("unknown bidir-server option {other}")),
        }
        i += 1;
    }
    let (orb, ior) = corbina_ttcp::bidir_bench::serve(config)?;
    match &ior_file {
        Some(f) => std::fs::write(f, format!("{ior}\n")).map_err(|e| format!("{f}: {e}"))?,
        None => println!("{ior}"),
    }
    if let Some(s) = lifetime {
        exit_after(s);
    }
    orb.run();
    Ok(ExitCode::SUCCESS)
}

/// `events-channel`: Corbina's event service; the default channel's IOR to the IOR file
/// (stdout without one).
fn events_channel(config: OrbConfig, a: cli::EventsChannelArgs) -> Result<ExitCode, String> {
    let dir = a.data_dir.unwrap_or_else(|| {
        std::env::temp_dir().join(format!("corbina-ttcp-events-{}", std::process::id()))
    });
    let (orb, _service, ior) = corbina_ttcp::events_bench::serve(config, &dir, a.push_window)?;
    match &a.ior_file {
        Some(f) => {
            std::fs::write(f, format!("{ior}\n")).map_err(|e| format!("{}: {e}", f.display()))?
        }
        None => println!("{ior}"),
    }
    if let Some(s) = a.lifetime {
        exit_after(s);
    }
    orb.run();
    Ok(ExitCode::SUCCESS)
}

/// `events-client`: one point of the events experiment, its JSON record on stdout.
fn events_client(a: cli::EventsClientArgs) -> Result<ExitCode, String> {
    let o = corbina_ttcp::events_bench::ClientOpts {
        channel: a.channel,
        kind: a.kind,
        filter: a.filter,
        implementation: a.implementation,
        consumers: a.consumers,
        events: a.events,
        size: a.size,
        slow: a.slow,
        samples: a.samples,
        rounds: a.rounds,
    };
    corbina_ttcp::events_bench::run(&o, &mut |r| println!("{}", r.to_json()))?;
    Ok(ExitCode::SUCCESS)
}

/// `bidir-client`: the bidirectional experiment's JSON records on stdout.
fn bidir_client(args: Vec<String>) -> Result<ExitCode, String> {
    let (mut ior, mut count) = (None, 20_000usize);
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--ior" => ior = Some(take_value(&args, &mut i, "--ior")?),
            "--count" => {
                let v = take_value(&args, &mut i, "--count")?;
                count = v.parse().map_err(|e| format!("--count {v}: {e}"))?;
            }
            other => return Err(format!("unknown bidir-client option {other}")),
        }
        i += 1;
    }
    let ior = ior.ok_or("bidir-client needs --ior")?;
    let ior = if ior.starts_with("IOR:") || ior.starts_with("corba") {
        ior
    } else {
        std::fs::read_to_string(&ior)
            .map_err(|e| format!("--ior {ior}: {e}"))?
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    let stdout = std::io::stdout();
    corbina_ttcp::bidir_bench::run(&ior, count.max(1), &mut |r| {
        let mut out = stdout.lock();
        let _ = writeln!(out, "{}", r.to_json());
        let _ = out.flush();
    })?;
    Ok(ExitCode::SUCCESS)
}

fn take_value(args: &[String], i: &mut usize, flag: &str) -> Result<String, String> {
    *i += 1;
    args.get(*i)
        .cloned()
        .ok_or_else(|| format!("{flag} needs a value"))
}

/// Exits the process after `secs` (a safety net for servers the suite starts).
fn exit_after(secs: f64) {
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs_f64(secs));
        std::process::exit(0);
    });
}

fn server(mut config: OrbConfig, args: Vec<String>) -> Result<ExitCode, String> {
    let mut objects = 1usize;
    let mut ior_file = None;
    let mut dsi = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--endpoint" => {
                let v = take_value(&args, &mut i, "--endpoint")?;
                // A local endpoint (`unix:/path` or `uiop:///path`, `shm:NAME` or
                // `shmiop:///path`) is served besides TCP.
                if let Some(path) = v.strip_prefix("unix:") {
                    config = config.unix_endpoint(path);
                    i += 1;
                    continue;
                }
                if let Some(name) = v.strip_prefix("shm:") {
                    config = config.shm_endpoint_named(name);
                    i += 1;
                    continue;
                }
                // TLS (`ssl:HOST:PORT`, omniORB's `giop:ssl:HOST:PORT`): with the -ORBssl…
                // options for its key and CA files.
                if let Some(rest) = v
                    .strip_prefix("ssl:")
                    .or_else(|| v.strip_prefix("giop:ssl:"))
                {
                    let (host, port) = rest
                        .rsplit_once(':')
                        .ok_or("--endpoint wants ssl:HOST:PORT")?;
                    let port = port.parse().map_err(|_| format!("bad port in {v}"))?;
                    let host = host.trim_start_matches('[').trim_end_matches(']');
                    config =
                        config.ssl_endpoint(if host.is_empty() { "0.0.0.0" } else { host }, port);
                    i += 1;
                    continue;
                }
                if let Some(path) = v.strip_prefix("uiop://") {
                    config = config.unix_endpoint(path);
                    i += 1;
                    continue;
                }
                if let Some(path) = v.strip_prefix("shmiop://") {
                    config = config.shm_endpoint(path);
                    i += 1;
                    continue;
                }
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
            // Hidden: exit by itself after this many seconds (the suite's safety net).
            "--lifetime" => {
                let s: f64 = take_value(&args, &mut i, "--lifetime")?
                    .parse()
                    .map_err(|_| "--lifetime wants seconds")?;
                exit_after(s);
            }
            "--dsi" => dsi = true,
            other => return Err(format!("unknown server option {other}")),
        }
        i += 1;
    }
    let orb = Orb::with_config(corbina_ttcp::experiments::with_noop_interceptors(config));
    let poa = orb.root_poa();
    let counter = Arc::new(ByteCounter::default());
    // IORs are streamed out as objects are activated: no giant string for 10^6 objects.
    let tmp = ior_file.as_ref().map(|f| format!("{f}.tmp"));
    let mut out: Box<dyn Write> = match &tmp {
        Some(t) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(t).map_err(|e| format!("{t}: {e}"))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout())),
    };
    for _ in 0..objects {
        let servant: Arc<dyn corbina::Servant> = if dsi {
            Arc::new(DsiSkeleton::new(DsiBench::new(counter.clone())))
        } else {
            Arc::new(BenchSkeleton::new(BenchImpl::new(counter.clone())))
        };
        let id = poa.activate_object(servant).map_err(|e| e.to_string())?;
        let obj = poa.id_to_reference(&id).map_err(|e| e.to_string())?;
        let ior = orb.object_to_string(&obj).map_err(|e| e.to_string())?;
        writeln!(out, "{ior}").map_err(|e| e.to_string())?;
    }
    poa.the_poa_manager()
        .activate()
        .map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())?;
    drop(out);
    if let (Some(t), Some(f)) = (&tmp, &ior_file) {
        // Renamed into place whole, as omni_server does: a reader never sees half a file.
        std::fs::rename(t, f).map_err(|e| format!("{f}: {e}"))?;
    }
    orb.run();
    Ok(ExitCode::SUCCESS)
}

fn client(config: OrbConfig, args: Vec<String>) -> Result<ExitCode, String> {
    let mut ior = None;
    let mut check = false;
    let mut opts = ExpOpts::default();
    let mut experiments = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--ior" => ior = Some(take_value(&args, &mut i, "--ior")?),
            "--check" => check = true,
            _ => {
                if !opts.parse_one(&args, &mut i)? {
                    return Err(format!("unknown client option {}", args[i]));
                }
                experiments = true;
            }
        }
        i += 1;
    }
    let ior = ior.ok_or("client needs --ior")?;
    let texts: Vec<String> = if ior.starts_with("IOR:") || ior.starts_with("corba") {
        vec![ior]
    } else {
        // A file of IORs, one per line, as omni_server writes: the first for everything
        // but scal, which uses them all. Read line by line: with 10^6 objects the file is
        // ≈ 300 MB, and a copy of it whole besides the lines is not needed.
        use std::io::BufRead;
        let file = std::fs::File::open(&ior).map_err(|e| format!("{ior}: {e}"))?;
        let mut texts = Vec::new();
        for line in std::io::BufReader::new(file).lines() {
            let line = line.map_err(|e| format!("{ior}: {e}"))?;
            let t = line.trim();
            if !t.is_empty() {
                texts.push(t.to_owned());
            }
        }
        texts
    };
    let first = texts.first().ok_or("no IOR given")?.clone();
    if !check {
        if !experiments {
            return Err("nothing to do: give --check or --mode …".into());
        }
        let stdout = std::io::stdout();
        let mut emit = |r: corbina_ttcp::record::Record| {
            let mut lock = stdout.lock();
            let _ = writeln!(lock, "{}", r.to_json());
            let _ = lock.flush();
        };
        let ssl = config.ssl.clone();
        if (OrbConfig {
            ssl: Default::default(),
            ..config
        }) != OrbConfig::default()
        {
            eprintln!(
                "corbina-ttcp: note: experiments use the default ORB configuration \
                 (but for the -ORBssl… options)"
            );
        }
        corbina_ttcp::experiments::set_client_ssl(ssl);
        run_corbina(&opts, &texts, &mut emit)?;
        return Ok(ExitCode::SUCCESS);
    }
    let orb = Orb::with_config(config);
    let obj = orb.string_to_object(&first).map_err(|e| e.to_string())?;
    let bench = Bench::narrow(&obj).map_err(|e| e.to_string())?;
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

/// Hidden: `ping IOR|FILE N [--invocation static|dii|dii_reuse|async]`: N null twoway calls and
/// nothing else (the client the suite counts instructions of, like `omni_ping IORFILE N`).
fn ping(config: OrbConfig, args: Vec<String>) -> Result<ExitCode, String> {
    // The -ORBssl… options reach the experiments' client ORB (TLS instruction counts).
    corbina_ttcp::experiments::set_client_ssl(config.ssl);
    let mut pos = Vec::new();
    let mut inv = corbina_ttcp::experiments::Invocation::Static;
    // `--invocation async`: the async proxy, one call awaited at a time.
    let mut asynch = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--invocation" => {
                let v = take_value(&args, &mut i, "--invocation")?;
                asynch = v == "async";
                if !asynch {
                    inv = corbina_ttcp::experiments::Invocation::parse(&v)
                        .ok_or_else(|| format!("unknown invocation {v}"))?;
                }
            }
            other => pos.push(other.to_owned()),
        }
        i += 1;
    }
    let [target, n] = pos.as_slice() else {
        return Err("usage: corbina-ttcp ping IOR|FILE N [--invocation MODE]".into());
    };
    let ior = match std::fs::read_to_string(target) {
        Ok(s) => s.lines().next().unwrap_or_default().trim().to_owned(),
        Err(_) => target.clone(),
    };
    let n = n.parse().map_err(|_| format!("bad call count {n}"))?;
    if asynch {
        corbina_ttcp::async_bench::ping_n(&ior, n)?;
    } else {
        corbina_ttcp::experiments::ping_n(&ior, n, inv)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Hidden: `sock-server --ready FILE [--unix PATH] [--lifetime S]`.
fn sock_server(args: Vec<String>) -> Result<ExitCode, String> {
    let (mut ready, mut unix, mut lifetime) = (None, None, None);
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--ready" => ready = Some(take_value(&args, &mut i, "--ready")?),
            "--unix" => unix = Some(take_value(&args, &mut i, "--unix")?),
            "--lifetime" => {
                let s: f64 = take_value(&args, &mut i, "--lifetime")?
                    .parse()
                    .map_err(|_| "--lifetime wants seconds")?;
                lifetime = Some(Duration::from_secs_f64(s));
            }
            other => return Err(format!("unknown sock-server option {other}")),
        }
        i += 1;
    }
    let ready = ready.ok_or("sock-server needs --ready FILE")?;
    corbina_ttcp::sock::serve(&ready, unix.as_deref(), lifetime).map_err(|e| e.to_string())?;
    Ok(ExitCode::SUCCESS)
}

/// Hidden: `sock-client --addr tcp:HOST:PORT|unix:PATH [experiment options]`.
fn sock_client(args: Vec<String>) -> Result<ExitCode, String> {
    let mut addr = None;
    let mut opts = ExpOpts::default();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--addr" => addr = Some(take_value(&args, &mut i, "--addr")?),
            _ => {
                if !opts.parse_one(&args, &mut i)? {
                    return Err(format!("unknown sock-client option {}", args[i]));
                }
            }
        }
        i += 1;
    }
    let addr = addr.ok_or("sock-client needs --addr")?;
    let stdout = std::io::stdout();
    run_socket(&opts, &addr, &mut |r| {
        let mut lock = stdout.lock();
        let _ = writeln!(lock, "{}", r.to_json());
        let _ = lock.flush();
    })?;
    Ok(ExitCode::SUCCESS)
}
