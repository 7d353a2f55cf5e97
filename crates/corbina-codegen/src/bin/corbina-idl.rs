//! `corbina-idl [-I DIR]... [-D NAME[=VALUE]]... [-o OUTDIR] [--no-implement-defaults]
//! [--ami[=I,...]] [--amh[=I,...]] [--relaxed-names] [--no-format] FILE.idl...`: compiles
//! IDL files to Rust, one `<stem>.rs` per input, laid out by rustfmt when it is installed
//! (as `Builder` does for build scripts).
#![forbid(unsafe_code)]

use clap::Parser;
use corbina_idl::Frontend;
use std::path::PathBuf;
use std::process::ExitCode;

/// Compiles OMG IDL files to Rust for the Corbina ORB: one OUTDIR/<stem>.rs per input file.
#[derive(Parser)]
#[command(
    name = "corbina-idl",
    version,
    after_help = "Exit codes: 0 success, 1 an IDL file has errors, 2 bad usage."
)]
struct Args {
    /// Add DIR to the include path (searched in order)
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
    /// Predefine a preprocessor macro (VALUE defaults to 1)
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    define: Vec<String>,
    /// Write output files to OUTDIR
    #[arg(short = 'o', value_name = "OUTDIR", default_value = ".")]
    out_dir: PathBuf,
    /// Servant traits get default methods raising NO_IMPLEMENT, so a servant implements
    /// only the operations it serves (default: every one required)
    #[arg(long)]
    no_implement_defaults: bool,
    /// CORBA AMI callbacks: AMI_<I>Handler reply handlers and sendc_<op> methods, and
    /// AMI_<I>Poller pollers with sendp_<op> methods, for every interface or the listed ones
    /// (scoped names)
    #[arg(long, value_name = "I,...", num_args = 0..=1, require_equals = true, value_delimiter = ',')]
    ami: Option<Vec<String>>,
    /// Asynchronous servants (AMH): AMH_<I>Servant traits answering through an
    /// AMH_<I>ResponseHandler, for every interface or the listed ones
    #[arg(long, value_name = "I,...", num_args = 0..=1, require_equals = true, value_delimiter = ',')]
    amh: Option<Vec<String>>,
    /// Warn instead of failing on the naming rules of CORBA 3.0 §3.15.3 and §3.2.4
    /// (`struct S { Mode mode; };`, an operation named like its interface, a member named
    /// like its struct, `typedef Object Factory;`)
    #[arg(long)]
    relaxed_names: bool,
    /// Write the generator's output as it is, without running rustfmt on it (by default it
    /// is formatted when rustfmt is installed: $RUSTFMT, else rustfmt on the path)
    #[arg(long)]
    no_format: bool,
    /// The IDL files
    #[arg(required = true, value_name = "FILE.idl")]
    files: Vec<PathBuf>,
}

/// `--ami` alone: every interface; `--ami=A,B`: those.
fn interfaces(list: Option<Vec<String>>, all: &mut bool, named: &mut Vec<String>) {
    match list {
        Some(l) if l.iter().all(String::is_empty) => *all = true,
        Some(l) => named.extend(l.into_iter().filter(|n| !n.is_empty())),
        None => {}
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut options = corbina_codegen::Options::default();
    options.no_implement_defaults = args.no_implement_defaults;
    interfaces(args.ami, &mut options.ami, &mut options.ami_interfaces);
    interfaces(args.amh, &mut options.amh, &mut options.amh_interfaces);
    let defines: Vec<(String, String)> = args
        .define
        .iter()
        .map(|d| {
            let (n, v) = d.split_once('=').unwrap_or((d, "1"));
            (n.to_owned(), v.to_owned())
        })
        .collect();
    if let Err(e) = std::fs::create_dir_all(&args.out_dir) {
        eprintln!("corbina-idl: {}: {e}", args.out_dir.display());
        return ExitCode::FAILURE;
    }
    let mut failed = false;
    for file in &args.files {
        let mut fe = Frontend::new();
        fe.relaxed_names(args.relaxed_names);
        for d in &args.include {
            fe.include_dir(d);
        }
        for (n, v) in &defines {
            fe.define(n, v);
        }
        match corbina_codegen::compile_file_with(&mut fe, file, &options) {
            Ok(c) => {
                for w in &c.warnings {
                    eprintln!("{}\n", w.render());
                }
                let stem = file
                    .file_stem()
                    .map_or_else(|| "idl".into(), |s| s.to_string_lossy().into_owned());
                let out = args.out_dir.join(format!("{stem}.rs"));
                let source = match args.no_format {
                    true => c.source,
                    false => corbina_codegen::rustfmt(&c.source).unwrap_or(c.source),
                };
                if let Err(e) = std::fs::write(&out, source) {
                    eprintln!("corbina-idl: {}: {e}", out.display());
                    failed = true;
                }
            }
            Err(d) => {
                for w in fe.warnings() {
                    eprintln!("{}\n", w.render());
                }
                eprintln!("{}", d.render());
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
