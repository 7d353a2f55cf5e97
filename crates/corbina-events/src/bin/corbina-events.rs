//! `corbina-events`: the event service daemon.
//!
//! ```text
//! corbina-events [--endpoint HOST:PORT] [--data-dir DIR] [--max-queue N]
//!                [--max-proxies N] [--push-retries N] [--ior-file FILE] [--channel-name NAME]
//!                [--factory-name NAME] [-ORB…]
//! ```
//!
//! Serves the default event channel under the object key `EventChannel` and the channel
//! factory under `EventChannelFactory` on `HOST:PORT` (default `0.0.0.0:11169`, omniEvents'
//! port), with its database in `DIR` (default `$XDG_STATE_HOME/corbina-events`, else
//! `~/.local/state/corbina-events`). Restarted on the same endpoint and directory, every
//! channel and proxy reference it handed out works again and connected consumers are
//! delivered to again. Prints the default channel's IOR on standard output (and to `FILE`)
//! once it is ready. `-ORB…` options configure the ORB as usual. Calls to consumers and
//! suppliers time out after 10 s unless `-ORBcallTimeout` says otherwise.
//!
//! Given a naming service (`-ORBInitRef NameService=…`), it binds the default channel and
//! the factory there under `NAME`s (stringified names; by default `EventChannel` and
//! `EventChannelFactory`, the names omniEvents' tools look for), replacing what was bound.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use corbina::config::Endpoint;
use corbina::{InitialReference, Orb, OrbConfig};
use corbina_events::{default_data_dir, EventService, Options};
use corbina_naming::cos_naming::NamingContextExt;
use corbina_naming::name::to_name;

const USAGE: &str = "usage: corbina-events [--endpoint HOST:PORT] [--data-dir DIR] \
                     [--max-queue N] [--max-proxies N] [--push-retries N] [--ior-file FILE] \
                     [--channel-name NAME] [--factory-name NAME] [-ORB…]";

/// The port omniEvents listens on by default.
const DEFAULT_PORT: u16 = 11169;
/// How long a call to a consumer or supplier may take unless configured.
const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// `--endpoint`'s value, the option named in the error.
fn parse_endpoint(s: &str) -> Result<Endpoint, String> {
    Endpoint::parse_host_port(s).map_err(|e| format!("--endpoint {s}: {e}"))
}

struct Args {
    endpoint: Option<Endpoint>,
    options: Options,
    ior_file: Option<PathBuf>,
    channel_name: String,
    factory_name: String,
}

fn positive(flag: &str, v: &str) -> Result<u32, String> {
    v.parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("{flag} {v}: expected a positive number"))
}

fn parse(rest: Vec<String>) -> Result<Args, String> {
    let mut args = Args {
        endpoint: None,
        options: Options::new(default_data_dir()),
        ior_file: None,
        channel_name: "EventChannel".into(),
        factory_name: "EventChannelFactory".into(),
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
            "--ior-file" => args.ior_file = Some(PathBuf::from(value()?)),
            "--channel-name" => args.channel_name = value()?,
            "--factory-name" => args.factory_name = value()?,
            "--max-queue" => args.options.max_queue = positive(&flag, &value()?)?,
            "--max-proxies" => args.options.max_proxies = positive(&flag, &value()?)?,
            "--push-retries" => {
                let v = value()?;
                args.options.push_retries = v
                    .parse()
                    .map_err(|_| format!("--push-retries {v}: expected a number"))?;
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(args)
}

/// Binds the default channel and the factory in the naming service, if there is one; a
/// failure is reported and the daemon serves on (as omniEvents does).
fn bind_names(orb: &Orb, service: &EventService, args: &Args) {
    let Ok(InitialReference::Object(ns)) = orb.resolve_initial_references("NameService") else {
        return;
    };
    let root = NamingContextExt::unchecked_narrow(&ns);
    for (name, obj) in [
        (&args.channel_name, service.channel().as_object()),
        (&args.factory_name, service.factory().as_object()),
    ] {
        let bound = to_name(name)
            .map_err(|e| e.to_string())
            .and_then(|n| root.rebind(&n, Some(obj)).map_err(|e| e.to_string()));
        match bound {
            Ok(()) => eprintln!("corbina-events: bound {name} in the naming service"),
            Err(e) => eprintln!("corbina-events: binding {name} in the naming service: {e}"),
        }
    }
}

fn main() -> ExitCode {
    let (mut config, rest) = match OrbConfig::from_args_and_env(std::env::args().skip(1)) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("corbina-events: {e}\n{USAGE}");
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
            eprintln!("corbina-events: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Some(ep) = args.endpoint.clone() {
        config.endpoints = vec![ep];
    } else if config.endpoints.is_empty() {
        config.endpoints = vec![Endpoint {
            host: "0.0.0.0".into(),
            port: DEFAULT_PORT,
        }];
    }
    // A consumer that stops answering must not hold its delivery thread for ever.
    if config.call_timeout.is_none() {
        config.call_timeout = Some(DEFAULT_CALL_TIMEOUT);
    }
    let orb = Orb::with_config(config);
    let service = match EventService::start(&orb, &args.options) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("corbina-events: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let ior = match orb.object_to_string(service.channel().as_object()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("corbina-events: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(f) = &args.ior_file {
        if let Err(e) = std::fs::write(f, format!("{ior}\n")) {
            eprintln!("corbina-events: {}: {e}", f.display());
            return ExitCode::FAILURE;
        }
    }
    bind_names(&orb, &service, &args);
    let (host, port) = service.endpoint();
    eprintln!(
        "corbina-events: serving corbaloc::{host}:{port}/EventChannel and \
         corbaloc::{host}:{port}/EventChannelFactory, data in {}",
        args.options.data_dir.display()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Result<Args, String> {
        parse(v.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn arguments() {
        let a = args(&[
            "--endpoint",
            "127.0.0.1:1234",
            "--data-dir=/tmp/x",
            "--max-queue",
            "9",
            "--max-proxies",
            "7",
            "--push-retries",
            "0",
            "--channel-name",
            "ops/Alarms.chan",
        ])
        .unwrap();
        let ep = a.endpoint.unwrap();
        assert_eq!((ep.host.as_str(), ep.port), ("127.0.0.1", 1234));
        assert_eq!(a.options.data_dir, PathBuf::from("/tmp/x"));
        assert_eq!((a.options.max_queue, a.options.push_retries), (9, 0));
        assert_eq!(a.options.max_proxies, 7);
        assert_eq!(a.channel_name, "ops/Alarms.chan");
        assert_eq!(a.factory_name, "EventChannelFactory");
        assert_eq!(parse_endpoint(":11169").unwrap().host, "0.0.0.0");
        assert_eq!(parse_endpoint("[::1]:5").unwrap().host, "::1");
        for bad in [
            &["--endpoint", "nohost"][..],
            &["--endpoint", "h:port"],
            &["--max-queue", "0"],
            &["--push-retries", "-1"],
            &["--data-dir"],
            &["--what"],
        ] {
            assert!(args(bad).is_err(), "{bad:?}");
        }
        assert_eq!(args(&["--help"]).err().as_deref(), Some(""));
    }
}
