//! `corbina-names`: the naming service daemon.
//!
//! ```text
//! corbina-names [--endpoint HOST:PORT] [--data-dir DIR | --store etcd://HOST:PORT[,…][/PREFIX]]
//!               [--replicas HOST:PORT,HOST:PORT…] [--iterator-timeout SECS]
//!               [--max-iterators N] [--ior-file FILE] [-ORB…]
//! ```
//!
//! Serves the root naming context under the object key `NameService` on `HOST:PORT`
//! (default `0.0.0.0:2809`, so `corbaloc::host:2809/NameService` works), with its database
//! in `DIR` (default `$XDG_STATE_HOME/corbina-names`, else
//! `~/.local/state/corbina-names`), or in an etcd cluster under `PREFIX/` (default
//! `corbina-names/`) with `--store etcd://…`: several daemons on one cluster and prefix are
//! replicas of one naming service: give each `--replicas` with every replica's address (its
//! own included), and every reference it hands out names them all (its own address first,
//! the others as TAG_ALTERNATE_IIOP_ADDRESS components, one object key), so a client whose
//! replica dies goes on with the next. Restarted on the same endpoint and directory, every
//! reference it handed out works again. Prints the root context's IOR on standard output
//! (and to `FILE`) once it is ready. `-ORB…` options configure the ORB as usual
//! (`-ORBEndpoint` instead of `--endpoint`, `-ORBPublishAddress`, …).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use corbina::config::Endpoint;
use corbina::{Orb, OrbConfig};
use corbina_naming::store::etcd::EtcdConfig;
use corbina_naming::{default_data_dir, NamingService, Options};

const USAGE: &str = "usage: corbina-names [--endpoint HOST:PORT] \
                     [--data-dir DIR | --store etcd://HOST:PORT[,HOST:PORT…][/PREFIX]] \
                     [--replicas HOST:PORT,HOST:PORT…] [--iterator-timeout SECS] \
                     [--max-iterators N] [--ior-file FILE] [-ORB…]";

fn parse_endpoint(s: &str) -> Result<Endpoint, String> {
    let (host, port) = s
        .rsplit_once(':')
        .ok_or_else(|| format!("--endpoint {s}: expected HOST:PORT"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = port
        .parse()
        .map_err(|_| format!("--endpoint {s}: bad port"))?;
    Ok(Endpoint {
        host: if host.is_empty() { "0.0.0.0" } else { host }.to_owned(),
        port,
    })
}

struct Args {
    endpoint: Option<Endpoint>,
    replicas: Vec<Endpoint>,
    options: Options,
    ior_file: Option<PathBuf>,
}

fn parse(rest: Vec<String>) -> Result<Args, String> {
    let mut args = Args {
        endpoint: None,
        replicas: Vec::new(),
        options: Options::new(default_data_dir()),
        ior_file: None,
    };
    let mut it = rest.into_iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (a.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--endpoint" => args.endpoint = Some(parse_endpoint(&value()?)?),
            "--data-dir" => args.options.data_dir = PathBuf::from(value()?),
            "--store" => {
                let v = value()?;
                args.options.etcd = if v == "redb" {
                    None
                } else {
                    Some(EtcdConfig::parse(&v)?)
                };
            }
            "--replicas" => {
                args.replicas = value()?
                    .split(',')
                    .map(parse_endpoint)
                    .collect::<Result<_, _>>()?;
            }
            "--ior-file" => args.ior_file = Some(PathBuf::from(value()?)),
            "--iterator-timeout" => {
                let v = value()?;
                let secs: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .ok_or_else(|| format!("--iterator-timeout {v}: expected seconds"))?;
                args.options.iterator_timeout = Duration::from_secs_f64(secs);
            }
            "--max-iterators" => {
                let v = value()?;
                args.options.max_iterators =
                    v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        format!("--max-iterators {v}: expected a positive number")
                    })?;
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    let (mut config, rest) = match OrbConfig::from_args_and_env(std::env::args().skip(1)) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("corbina-names: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let args = match parse(rest) {
        Ok(a) => a,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("corbina-names: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Some(ep) = args.endpoint {
        config.endpoints = vec![ep];
    } else if config.endpoints.is_empty() {
        config.endpoints = vec![Endpoint {
            host: "0.0.0.0".into(),
            port: 2809,
        }];
    }
    let mut options = args.options;
    if !args.replicas.is_empty() {
        // This daemon's own address first: clients start with the replica that answered.
        let own = &config.endpoints[0];
        let Some(i) = args
            .replicas
            .iter()
            .position(|r| r.port == own.port && (r.host == own.host || own.host == "0.0.0.0"))
        else {
            eprintln!("corbina-names: --replicas must include this daemon's endpoint\n{USAGE}");
            return ExitCode::from(2);
        };
        let mut replicas = args.replicas;
        replicas.swap(0, i);
        config.publish_addresses = replicas
            .iter()
            .map(|r| (r.host.clone(), Some(r.port)))
            .collect();
        options.replicas = replicas.into_iter().map(|r| (r.host, r.port)).collect();
    }
    let orb = Orb::with_config(config);
    let service = match NamingService::start(&orb, &options) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("corbina-names: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let ior = match orb.object_to_string(service.root().as_object()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("corbina-names: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(f) = &args.ior_file {
        if let Err(e) = std::fs::write(f, format!("{ior}\n")) {
            eprintln!("corbina-names: {}: {e}", f.display());
            return ExitCode::FAILURE;
        }
    }
    let (host, port) = service.endpoint();
    eprintln!(
        "corbina-names: serving corbaloc::{host}:{port}/NameService, data in {}",
        options.describe_store()
    );
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{ior}");
    let _ = out.flush();
    drop(out);
    orb.run();
    drop(service);
    orb.destroy();
    ExitCode::SUCCESS
}
