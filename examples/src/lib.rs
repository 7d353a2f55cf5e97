//! Corbina's example programs (`src/bin/`) and what they share.
//!
//! The stubs and skeletons come from `idl/examples.idl`, compiled by `build.rs` through
//! `corbina_codegen::Builder` exactly as in a user's crate. Each program is run by
//! `examples/run.sh NAME` (the README's "Examples" section) and by `tests/examples.rs`.
//!
//! Every server prints one line on standard output, the reference a client needs (an
//! `IOR:…` string or a `corbaloc:` URL), and with `--ior-file FILE` also writes it to
//! `FILE`; every client takes that reference (all but `hello-client`: or the file) as its
//! first argument. The hello programs are one file each and use none of this.
#![forbid(unsafe_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use corbina::Orb;

/// Code generated from `idl/examples.idl`: the module `Examples` is `examples` here.
#[allow(missing_docs)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/examples.rs"));
}
pub use generated::examples;

/// What went wrong in an example program (each `main` returns it, so it is printed).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A server's command line: `-ORB…` options (for the ORB), then `--ior-file FILE` and the
/// program's own arguments, which are returned.
pub fn server_init() -> Result<(Orb, Option<PathBuf>, Vec<String>), BoxError> {
    let (orb, rest) = Orb::init(std::env::args().skip(1))?;
    let mut ior_file = None;
    let mut others = Vec::new();
    let mut it = rest.into_iter();
    while let Some(a) = it.next() {
        if a == "--ior-file" {
            ior_file = Some(PathBuf::from(it.next().ok_or("--ior-file needs a path")?));
        } else {
            others.push(a);
        }
    }
    Ok((orb, ior_file, others))
}

/// Prints `reference` on standard output and writes it to `ior_file` (whole, through a
/// rename, so a client waiting for the file never reads half of it).
pub fn publish(reference: &str, ior_file: Option<&Path>) -> Result<(), BoxError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{reference}")?;
    out.flush()?;
    if let Some(path) = ior_file {
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, format!("{reference}\n"))?;
        std::fs::rename(&tmp, path)?;
    }
    Ok(())
}

/// A client's reference argument: an `IOR:`, `corbaloc:` or `corbaname:` string as is, or
/// else a file holding one, waited for (up to 30 s) while its server starts.
pub fn reference_arg(arg: Option<String>) -> Result<String, BoxError> {
    let arg = arg.ok_or("usage: CLIENT REFERENCE|FILE (the line the server printed)")?;
    if ["IOR:", "corbaloc:", "corbaname:"]
        .iter()
        .any(|p| arg.starts_with(p))
    {
        return Ok(arg);
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match std::fs::read_to_string(&arg) {
            Ok(s) if !s.trim().is_empty() => {
                return Ok(s.lines().next().unwrap_or_default().trim().to_owned())
            }
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("{arg}: {e}").into())
            }
            _ if Instant::now() >= deadline => {
                return Err(
                    format!("{arg}: no reference after 30 s (is the server running?)").into(),
                )
            }
            _ => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// One line saying what an `Any` holds: its TypeCode's kind (and name) and its value, for
/// the types the examples use; other values are shown by size.
pub fn describe_any(value: &corbina::Any) -> String {
    use corbina::typecode::TcKind;
    use examples::{Color, Point};

    let tc = value.type_code();
    if let Some(p) = value.extract::<Point>() {
        return format!("struct Point {{ x: {}, y: {} }}", p.x, p.y);
    }
    if let Some(c) = value.extract::<Color>() {
        return format!("enum Color {c:?}");
    }
    let shown = match tc.unalias().kind() {
        TcKind::Long => value.to_long().map(|v| v.to_string()),
        TcKind::LongLong => value.to_longlong().map(|v| v.to_string()),
        TcKind::Double => value.to_double().map(|v| v.to_string()),
        TcKind::Boolean => value.to_boolean().map(|v| v.to_string()),
        TcKind::String => value.to_string_value().map(|v| format!("{v:?}")),
        // An any inside an any: described recursively.
        TcKind::Any => value
            .to_any()
            .map(|inner| format!("({})", describe_any(&inner))),
        TcKind::Null | TcKind::Void => Some(String::new()),
        _ => None,
    };
    let kind = tc.kind().name();
    match shown {
        Some(v) if v.is_empty() => kind.to_owned(),
        Some(v) => format!("{kind} {v}"),
        None => format!("{kind} ({} bytes of CDR)", value.value_bytes().len()),
    }
}

/// The exit status of a program's `run`: success, or the error printed with `Display`
/// (a system exception then says where and why, e.g. the endpoint a connect was refused by).
pub fn exit(result: Result<(), BoxError>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            let program = std::env::args().next().unwrap_or_default();
            let program = Path::new(&program)
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            eprintln!("{program}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
