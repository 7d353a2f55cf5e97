//! `corbina-events`: the event and notification service daemon (arguments parsed with
//! clap, as `corbina-names`).
//!
//! ```text
//! corbina-events [--endpoint HOST:PORT] [--data-dir DIR] [--max-queue N]
//!                [--max-proxies N] [--push-retries N] [--ior-file FILE] [--channel-name NAME]
//!                [--factory-name NAME] [--notify-factory-name NAME] [-ORB…]
//! ```
//!
//! Serves the default event channel under the object key `EventChannel`, the channel
//! factory under `EventChannelFactory`, the notification channel factory under
//! `NotificationService` and the filter factory under `FilterFactory` on `HOST:PORT` (default `0.0.0.0:11169`, omniEvents'
//! port), with its database in `DIR` (default `$XDG_STATE_HOME/corbina-events`, else
//! `~/.local/state/corbina-events`). Restarted on the same endpoint and directory, every
//! channel and proxy reference it handed out works again and connected consumers are
//! delivered to again. Prints the default channel's IOR on standard output (and to `FILE`)
//! once it is ready. `-ORB…` options configure the ORB as usual. Calls to consumers and
//! suppliers time out after 10 s unless `-ORBcallTimeout` says otherwise.
//!
//! Given a naming service (`-ORBInitRef NameService=…`), it binds the default channel and
//! the factories there under `NAME`s (stringified names; by default `EventChannel` and
//! `EventChannelFactory`, the names omniEvents' tools look for, and
//! `NotifyEventChannelFactory`, TAO's), replacing what was bound.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use corbina::config::Endpoint;
use corbina::{InitialReference, Orb, OrbConfig};
use corbina_events::{default_data_dir, EventService, Options, NOTIFY_FACTORY_KEY};
use corbina_naming::cos_naming::NamingContextExt;
use corbina_naming::name::to_name;

/// The port omniEvents listens on by default.
const DEFAULT_PORT: u16 = 11169;
/// How long a call to a consumer or supplier may take unless configured.
const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// The CORBA Event and Notification Service daemon.
///
/// Serves the default event channel under the object key `EventChannel`, omniEvents' channel
/// factory under `EventChannelFactory`, the notification channel factory under
/// `NotificationService` and the filter factory under `FilterFactory`, with its database in
/// DIR. Restarted on the same endpoint and directory, every reference it handed out works
/// again and connected consumers are delivered to again. Prints the default channel's IOR
/// on standard output (and to FILE) once it is ready.
#[derive(Parser)]
#[command(
    name = "corbina-events",
    version,
    after_help = "ORB options (-ORBEndpoint, -ORBInitRef NameService=…, -ORBcallTimeout MS, …) \
may come anywhere; they are taken out before the rest is parsed, as Orb::init does. Given a \
naming service, the default channel and the factories are bound there (replacing what was \
bound)."
)]
struct Args {
    /// Where to listen [default: 0.0.0.0:11169, omniEvents' port]
    #[arg(long, value_name = "HOST:PORT", value_parser = Endpoint::parse_host_port)]
    endpoint: Option<Endpoint>,
    /// Where the database lives [default: $XDG_STATE_HOME/corbina-events, else
    /// ~/.local/state/corbina-events]
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Events held per consumer by channels created without MaxQueueLength
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_queue: Option<u32>,
    /// The most proxies of a channel created without MaxNumProxies
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_proxies: Option<u32>,
    /// Failed deliveries in a row after which a consumer is disconnected
    #[arg(long, value_name = "N")]
    push_retries: Option<u32>,
    /// Pushes in flight to one push consumer at once (1: each waits for the previous reply)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    push_window: Option<u32>,
    /// Also write the default channel's IOR to FILE
    #[arg(long, value_name = "FILE")]
    ior_file: Option<PathBuf>,
    /// The default channel's name in the naming service
    #[arg(long, value_name = "NAME", default_value = "EventChannel")]
    channel_name: String,
    /// The factory's name in the naming service
    #[arg(long, value_name = "NAME", default_value = "EventChannelFactory")]
    factory_name: String,
    /// The notification channel factory's name in the naming service (TAO's Notify_Service
    /// binds its factory under this name)
    #[arg(long, value_name = "NAME", default_value = "NotifyEventChannelFactory")]
    notify_factory_name: String,
}

impl Args {
    fn options(&self) -> Options {
        let mut o = Options::new(self.data_dir.clone().unwrap_or_else(default_data_dir));
        if let Some(n) = self.max_queue {
            o.max_queue = n;
        }
        if let Some(n) = self.max_proxies {
            o.max_proxies = n;
        }
        if let Some(n) = self.push_retries {
            o.push_retries = n;
        }
        if let Some(n) = self.push_window {
            o.push_window = n as usize;
        }
        o
    }
}

/// Binds the default channel and the factories in the naming service, if there is one; a
/// failure is reported and the daemon serves on (as omniEvents does).
fn bind_names(orb: &Orb, service: &EventService, args: &Args) {
    let Ok(InitialReference::Object(ns)) = orb.resolve_initial_references("NameService") else {
        return;
    };
    let root = NamingContextExt::unchecked_narrow(&ns);
    for (name, obj) in [
        (&args.channel_name, service.channel().as_object()),
        (&args.factory_name, service.factory().as_object()),
        (
            &args.notify_factory_name,
            service.notify_factory().as_object(),
        ),
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
            eprintln!("error: {e}\n\nFor more information, try '--help'.");
            return ExitCode::from(2);
        }
    };
    let args = Args::parse_from(std::iter::once("corbina-events".to_owned()).chain(rest));
    let options = args.options();
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
    let service = match EventService::start(&orb, &options) {
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
        "corbina-events: serving corbaloc::{host}:{port}/EventChannel, \
         corbaloc::{host}:{port}/EventChannelFactory and \
         corbaloc::{host}:{port}/{NOTIFY_FACTORY_KEY}, data in {}",
        options.data_dir.display()
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
    use clap::CommandFactory;

    fn args(v: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once(&"corbina-events").chain(v))
    }

    #[test]
    fn arguments() {
        Args::command().debug_assert();
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
        let ep = a.endpoint.clone().unwrap();
        assert_eq!((ep.host.as_str(), ep.port), ("127.0.0.1", 1234));
        let o = a.options();
        assert_eq!(o.data_dir, PathBuf::from("/tmp/x"));
        assert_eq!((o.max_queue, o.push_retries), (9, 0));
        assert_eq!(o.max_proxies, 7);
        assert_eq!(a.channel_name, "ops/Alarms.chan");
        assert_eq!(a.factory_name, "EventChannelFactory");
        assert_eq!(a.notify_factory_name, "NotifyEventChannelFactory");
        let d = args(&[]).unwrap().options();
        assert_eq!(d.max_queue, corbina_events::DEFAULT_MAX_QUEUE);
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
        assert_eq!(
            args(&["--help"]).err().map(|e| e.kind()),
            Some(clap::error::ErrorKind::DisplayHelp)
        );
    }
}
