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
//! and reports reachability and round-trip times.
//!
//! Exit codes: 0 success, 1 the operation failed (not found, unreachable…), 2 bad usage.
#![forbid(unsafe_code)]

use std::process::ExitCode;

mod catior;
mod names;
mod ping;

fn usage() -> String {
    format!(
        "usage:\n  corbina catior [--json] IOR|corbaloc|corbaname|FILE…\n  {}\n  {}",
        names::USAGE,
        ping::USAGE
    )
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        eprintln!("{}", usage());
        return ExitCode::from(2);
    }
    let cmd = args.remove(0);
    let r = match cmd.as_str() {
        "catior" => catior::main(&args),
        "names" => names::main(args),
        "ping" => ping::main(args),
        "-h" | "--help" | "help" => {
            println!("{}", usage());
            return ExitCode::SUCCESS;
        }
        other => Err(format!("unknown command {other}\n{}", usage())),
    };
    match r {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("corbina {cmd}: {e}");
            ExitCode::from(2)
        }
    }
}
