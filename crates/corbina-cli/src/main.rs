//! `corbina`: command-line tools for CORBA objects.
//!
//! ```text
//! corbina catior [--json] IOR|corbaloc|corbaname|FILE…
//! corbina names [-ORB…] list [-r] [PATH] | bind PATH REF | rebind PATH REF | unbind PATH
//!                        | resolve PATH | mkcontext PATH | rmcontext PATH
//! corbina ping [--count N] [--timeout SECS] [--json] [-ORB…] REF
//! ```
//!
//! `catior` decodes a reference for a person, like omniORB's `catior` (type id, each
//! profile's IIOP version, host, port and object key as text and hex, each tagged component
//! decoded: ORB type with its vendor, code sets by name, alternate addresses); `--json`
//! prints the same for scripts. `names` talks to the naming service given by
//! `-ORBInitRef NameService=…` (default `corbaloc::localhost:2809/NameService`); paths are
//! stringified names (`a.kind/b`). `ping` sends a LocateRequest and `_non_existent` calls
//! and reports reachability and round-trip times. `-ORB…` options may come anywhere: they
//! are taken out before the rest is parsed, as `Orb::init` does.
//!
//! Exit codes: 0 success, 1 the operation failed (not found, unreachable…), 2 bad usage.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use corbina::OrbConfig;

mod catior;
mod events;
mod names;
mod ping;
mod reference;

const AFTER_HELP: &str = "\
ORB options (-ORBInitRef NAME=URL, -ORBtraceLevel N, …) may come anywhere; they are taken \
out before the rest is parsed, as Orb::init does.

Exit codes: 0 success, 1 the operation failed (not found, unreachable…), 2 bad usage.";

/// Command-line tools for CORBA objects.
#[derive(Parser)]
#[command(name = "corbina", version, after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decode an object reference for a person (or, with --json, for a script)
    Catior(catior::Args),
    /// Create an event channel, push events into one, or tail one (corbina-events, omniEvents, …)
    Events(events::Args),
    /// Talk to a naming service (any CosNaming service: corbina-names, omniNames, …)
    Names(names::Args),
    /// Is the object there, and how long does a round trip take?
    Ping(ping::Args),
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The ORB's options first, as `Orb::init` takes them: clap never sees them.
    let (config, rest) = match OrbConfig::from_args_and_env(args) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}\n\nFor more information, try '--help'.");
            return ExitCode::from(2);
        }
    };
    let cli = Cli::parse_from(std::iter::once("corbina".to_owned()).chain(rest));
    let (name, r) = match cli.command {
        Command::Catior(a) => ("catior", catior::main(a)),
        Command::Events(a) => ("events", events::main(config, a)),
        Command::Names(a) => ("names", names::main(config, a)),
        Command::Ping(a) => ("ping", ping::main(config, a)),
    };
    match r {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("corbina {name}: {e}");
            ExitCode::from(2)
        }
    }
}
