//! `corbina-idl [-I DIR]... [-D NAME[=VALUE]]... [-o OUTDIR] [--no-implement-defaults] [--ami[=I,...]] [--amh[=I,...]] [--relaxed-names] FILE.idl...`: compiles IDL files
//! to Rust, one `<stem>.rs` per input.
#![forbid(unsafe_code)]

use corbina_idl::Frontend;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: corbina-idl [-I DIR]... [-D NAME[=VALUE]]... [-o OUTDIR] [--no-implement-defaults] [--ami[=I,...]] [--amh[=I,...]] [--relaxed-names] FILE.idl...

Compiles OMG IDL files to Rust for the Corbina ORB: one OUTDIR/<stem>.rs per input file.

options:
  -I DIR             add DIR to the include path (searched in order)
  -D NAME[=VALUE]    predefine a preprocessor macro
  -o OUTDIR          write output files to OUTDIR (default: the current directory)
  --no-implement-defaults
                     servant traits get default methods raising NO_IMPLEMENT, so a servant
                     implements only the operations it serves (default: every one required)
  --ami[=I,...]      CORBA AMI callbacks: AMI_<I>Handler reply handlers and sendc_<op>
                     methods, and AMI_<I>Poller pollers with sendp_<op> methods, for every
                     interface or the listed ones (scoped names)
  --amh[=I,...]      asynchronous servants (AMH): AMH_<I>Servant traits answering through an
                     AMH_<I>ResponseHandler, for every interface or the listed ones
  --relaxed-names    warn instead of failing on the naming rules of CORBA 3.0 §3.15.3 and
                     §3.2.4 (`struct S { Mode mode; };`, an operation named like its interface,
                     a member named like its struct, `typedef Object Factory;`)
  -h, --help         print this help";

fn main() -> ExitCode {
    let mut includes = Vec::new();
    let mut defines = Vec::new();
    let mut out_dir = PathBuf::from(".");
    let mut files = Vec::new();
    let mut options = corbina_codegen::Options::default();
    let mut relaxed_names = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |flag: &str, inline: &str| -> Option<String> {
            if inline.is_empty() {
                let v = args.next();
                if v.is_none() {
                    eprintln!("corbina-idl: {flag} needs an argument\n\n{USAGE}");
                }
                v
            } else {
                Some(inline.to_string())
            }
        };
        if a == "--relaxed-names" {
            relaxed_names = true;
        } else if a == "--no-implement-defaults" {
            options.no_implement_defaults = true;
        } else if a == "--ami" {
            options.ami = true;
        } else if let Some(list) = a.strip_prefix("--ami=") {
            options
                .ami_interfaces
                .extend(list.split(',').filter(|n| !n.is_empty()).map(String::from));
        } else if a == "--amh" {
            options.amh = true;
        } else if let Some(list) = a.strip_prefix("--amh=") {
            options
                .amh_interfaces
                .extend(list.split(',').filter(|n| !n.is_empty()).map(String::from));
        } else if a == "-h" || a == "--help" {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        } else if let Some(rest) = a.strip_prefix("-I") {
            let Some(v) = value("-I", rest) else {
                return ExitCode::from(2);
            };
            includes.push(PathBuf::from(v));
        } else if let Some(rest) = a.strip_prefix("-D") {
            let Some(v) = value("-D", rest) else {
                return ExitCode::from(2);
            };
            let (n, val) = v.split_once('=').unwrap_or((&v, "1"));
            defines.push((n.to_string(), val.to_string()));
        } else if let Some(rest) = a.strip_prefix("-o") {
            let Some(v) = value("-o", rest) else {
                return ExitCode::from(2);
            };
            out_dir = PathBuf::from(v);
        } else if a.starts_with('-') && a.len() > 1 {
            eprintln!("corbina-idl: unknown option {a}\n\n{USAGE}");
            return ExitCode::from(2);
        } else {
            files.push(PathBuf::from(a));
        }
    }
    if files.is_empty() {
        eprintln!("corbina-idl: no input files\n\n{USAGE}");
        return ExitCode::from(2);
    }
    if let Err(e) = std::fs::create_dir_all(&out_dir) {
        eprintln!("corbina-idl: {}: {e}", out_dir.display());
        return ExitCode::FAILURE;
    }
    let mut failed = false;
    for file in &files {
        let mut fe = Frontend::new();
        fe.relaxed_names(relaxed_names);
        for d in &includes {
            fe.include_dir(d);
        }
        for (n, v) in &defines {
            fe.define(n, v);
        }
        match corbina_codegen::compile_file_with(&mut fe, file, &options) {
            Ok(c) => {
                for w in &c.warnings {
                    eprintln!("{w}");
                }
                let stem = file
                    .file_stem()
                    .map_or_else(|| "idl".into(), |s| s.to_string_lossy().into_owned());
                let out = out_dir.join(format!("{stem}.rs"));
                if let Err(e) = std::fs::write(&out, c.source) {
                    eprintln!("corbina-idl: {}: {e}", out.display());
                    failed = true;
                }
            }
            Err(d) => {
                for w in fe.warnings() {
                    eprintln!("{w}");
                }
                eprintln!("{d}");
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
