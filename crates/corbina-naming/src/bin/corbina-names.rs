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

use clap::Parser;
use corbina::config::Endpoint;
use corbina::{Orb, OrbConfig};
use corbina_naming::store::etcd::EtcdConfig;
use corbina_naming::{default_data_dir, NamingService, Options};

fn seconds(s: &str) -> Result<Duration, String> {
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .and_then(|v| Duration::try_from_secs_f64(v).ok())
        .ok_or_else(|| "expected a positive number of seconds".to_owned())
}

/// `--store`: redb (the default) or an etcd cluster.
#[derive(Clone)]
enum Store {
    Redb,
    Etcd(EtcdConfig),
}

fn parse_store(s: &str) -> Result<Store, String> {
    if s == "redb" {
        Ok(Store::Redb)
    } else {
        EtcdConfig::parse(s).map(Store::Etcd)
    }
}

/// The CosNaming naming service daemon.
///
/// Serves the root naming context under the object key `NameService`, with its database in
/// DIR. Restarted on the same endpoint and directory, every reference it handed out works
/// again. Prints the root context's IOR on standard output (and to FILE) once it is ready.
#[derive(Parser)]
#[command(
    name = "corbina-names",
    version,
    after_help = "ORB options (-ORBEndpoint, -ORBPublishAddress, -ORBtraceLevel N, …) may come \
anywhere; they are taken out before the rest is parsed, as Orb::init does."
)]
struct Args {
    /// Where to listen [default: 0.0.0.0:2809]
    #[arg(long, value_name = "HOST:PORT", value_parser = Endpoint::parse_host_port)]
    endpoint: Option<Endpoint>,
    /// Where the database lives [default: $XDG_STATE_HOME/corbina-names, else
    /// ~/.local/state/corbina-names]
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Keep the bindings in an etcd cluster instead (`etcd://HOST:PORT[,HOST:PORT…][/PREFIX]`),
    /// or `redb` for the database in DIR
    #[arg(long, value_name = "URL", value_parser = parse_store)]
    store: Option<Store>,
    /// Every replica's address, this daemon's included (with --store etcd://…): the
    /// references handed out name them all
    #[arg(long, value_name = "HOST:PORT,…", value_delimiter = ',', value_parser = Endpoint::parse_host_port)]
    replicas: Vec<Endpoint>,
    /// Idle time after which a binding iterator is dropped
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    iterator_timeout: Option<Duration>,
    /// The most binding iterators alive at once
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_iterators: Option<u64>,
    /// Also write the root context's IOR to FILE
    #[arg(long, value_name = "FILE")]
    ior_file: Option<PathBuf>,
}

fn main() -> ExitCode {
    let (mut config, rest) = match OrbConfig::from_args_and_env(std::env::args().skip(1)) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}\n\nFor more information, try '--help'.");
            return ExitCode::from(2);
        }
    };
    let args = Args::parse_from(std::iter::once("corbina-names".to_owned()).chain(rest));
    let mut options = Options::new(args.data_dir.unwrap_or_else(default_data_dir));
    if let Some(Store::Etcd(etcd)) = args.store {
        options.etcd = Some(etcd);
    }
    if let Some(t) = args.iterator_timeout {
        options.iterator_timeout = t;
    }
    if let Some(n) = args.max_iterators {
        options.max_iterators = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(ep) = args.endpoint {
        config.endpoints = vec![ep];
    } else if config.endpoints.is_empty() {
        config.endpoints = vec![Endpoint {
            host: "0.0.0.0".into(),
            port: 2809,
        }];
    }
    if !args.replicas.is_empty() {
        // This daemon's own address first: clients start with the replica that answered.
        let own = &config.endpoints[0];
        let Some(i) = args
            .replicas
            .iter()
            .position(|r| r.port == own.port && (r.host == own.host || own.host == "0.0.0.0"))
        else {
            eprintln!(
                "error: --replicas must include this daemon's endpoint\n\nFor more information, try '--help'."
            );
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
        "corbina-names: serving corbaloc::{host}:{port}/NameService, data in {}; \
         the root context's IOR follows on standard output",
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
