//! Real-world IDL beyond ours (issue 17): every file of a corpus goes through the generator
//! (which must never panic) with the outcome its manifest (`tests/corpus/*.txt`) expects, and
//! the Rust generated for the accepted files compiles against the real runtime.
//!
//! - omniORB's COS directory, from Debian's omniORB packages (`scripts/debian-packages.txt`),
//!   at `/usr/share/idl/omniORB/COS` or `$CORBINA_COS_IDL_DIR`. Skipped when absent, unless
//!   `REQUIRE_OMNIORB_PEERS=1`.
//! - PolyORB's IDL test suite (`testsuite/idls` of AdaCore/PolyORB), opt-in: set
//!   `CORBINA_POLYORB_IDLS` to a checkout's `testsuite/idls` directory.
//!
//! The copies stay outside the repository; only the manifests are here.

use std::path::{Path, PathBuf};

mod common;
use common::rustc_check;

#[derive(Debug)]
enum Outcome {
    /// Generated, and the Rust compiles.
    Compiles,
    /// Refused with an error at this `FILE:LINE` (relative to the corpus directory).
    Refused(String),
    /// Refused at this `FILE:LINE` for a naming rule the spec states and omniidl enforces
    /// (CORBA 3.0 §3.2.4, §3.15.3), and generated, and compiling, with relaxed names.
    Relaxed(String),
    /// Refused for now: uses valuetypes or abstract interfaces (issue 17's other half).
    PendingValuetypes,
}

struct Entry {
    file: String,
    outcome: Outcome,
}

fn manifest(name: &str) -> Vec<Entry> {
    let text = std::fs::read_to_string(Path::new("tests/corpus").join(name)).unwrap();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut it = l.split_whitespace();
            let file = it.next().unwrap().to_string();
            let outcome = match (it.next(), it.next()) {
                (Some("compiles"), None) => Outcome::Compiles,
                (Some("refused"), Some(at)) => Outcome::Refused(at.to_string()),
                (Some("relaxed"), Some(at)) => Outcome::Relaxed(at.to_string()),
                (Some("pending-valuetypes"), None) => Outcome::PendingValuetypes,
                _ => panic!("bad manifest line in {name}: {l}"),
            };
            Entry { file, outcome }
        })
        .collect()
}

/// Generates one file (its directory and `include_dirs` on the include path). `Err` carries
/// the diagnostics; a panic is reported as a failure of its own.
fn generate(
    dir: &Path,
    file: &str,
    include_dirs: &[PathBuf],
    relaxed: bool,
) -> Result<Result<String, String>, String> {
    let path = dir.join(file);
    let parent = path.parent().unwrap_or(dir).to_path_buf();
    let dirs: Vec<PathBuf> = std::iter::once(parent)
        .chain(include_dirs.iter().cloned())
        .collect();
    std::panic::catch_unwind(move || {
        let mut fe = corbina_idl::Frontend::new();
        fe.relaxed_names(relaxed);
        for d in &dirs {
            fe.include_dir(d);
        }
        corbina_codegen::compile_file(&mut fe, &path)
            .map(|c| c.source)
            .map_err(|e| e.to_string())
    })
    .map_err(|_| format!("{file}: the generator panicked"))
}

/// Runs every manifest entry; returns the generated Rust of the accepted files and the
/// failures.
fn run(
    dir: &Path,
    entries: &[Entry],
    include_dirs: &[PathBuf],
) -> (Vec<(String, String)>, Vec<String>) {
    let mut ok = Vec::new();
    let mut failures = Vec::new();
    let (mut n_ok, mut n_refused, mut n_pending, mut n_relaxed) = (0, 0, 0, 0);
    for e in entries {
        let got = match generate(dir, &e.file, include_dirs, false) {
            Ok(r) => r,
            Err(panicked) => {
                failures.push(panicked);
                continue;
            }
        };
        let prefix = format!("{}/", dir.display());
        let refused_at = |err: &str, at: &str| {
            err.lines().any(|l| {
                l.strip_prefix(&prefix)
                    .unwrap_or(l)
                    .starts_with(&format!("{at}:"))
            })
        };
        match (&e.outcome, got) {
            (Outcome::Compiles, Ok(src)) => {
                n_ok += 1;
                ok.push((e.file.clone(), src));
            }
            (Outcome::Relaxed(at), Err(err)) if refused_at(&err, at) => {
                match generate(dir, &e.file, include_dirs, true) {
                    Ok(Ok(src)) => {
                        n_relaxed += 1;
                        ok.push((e.file.clone(), src));
                    }
                    Ok(Err(err)) => failures.push(format!(
                        "{}: expected to generate with relaxed names, got:\n{err}",
                        e.file
                    )),
                    Err(panicked) => failures.push(panicked),
                }
            }
            (Outcome::Refused(at), Err(err)) => {
                if refused_at(&err, at) {
                    n_refused += 1;
                } else {
                    failures.push(format!(
                        "{}: expected an error at {at}, got:\n{err}",
                        e.file
                    ));
                }
            }
            (Outcome::PendingValuetypes, Err(err)) => {
                let pending = [
                    "valuetype",
                    "abstract interface",
                    "'ValueBase'",
                    "state member",
                ];
                if err.lines().all(|l| pending.iter().any(|p| l.contains(p))) {
                    n_pending += 1;
                } else {
                    failures.push(format!(
                        "{}: expected only valuetype errors, got:\n{err}",
                        e.file
                    ));
                }
            }
            (want, Ok(_)) => {
                failures.push(format!("{}: expected {want:?}, but it generated", e.file))
            }
            (want, Err(err)) => {
                failures.push(format!("{}: expected {want:?}, got:\n{err}", e.file))
            }
        }
    }
    eprintln!(
        "{}: {n_ok} generated, {n_relaxed} generated with relaxed names, {n_refused} refused as expected, {n_pending} pending valuetypes, of {}",
        dir.display(),
        entries.len()
    );
    (ok, failures)
}

/// A crate with each generated file in a module of its own.
fn batch(files: &[(String, String)]) -> String {
    let mut s = String::from("#![allow(dead_code, non_snake_case, non_camel_case_types)]\n");
    for (k, (file, src)) in files.iter().enumerate() {
        s.push_str(&format!("/// {file}\npub mod m{k} {{\n{src}\n}}\n"));
    }
    s
}

fn require_omniorb() -> bool {
    std::env::var("REQUIRE_OMNIORB_PEERS").is_ok_and(|v| v == "1")
}

#[test]
fn omniorb_cos_idl() {
    let dir = std::env::var_os("CORBINA_COS_IDL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/share/idl/omniORB/COS"));
    if !dir.is_dir() {
        assert!(
            !require_omniorb(),
            "{} is missing: install omniorb-idl (scripts/debian-packages.txt)",
            dir.display()
        );
        eprintln!(
            "skipped: {} is missing (Debian package omniorb-idl)",
            dir.display()
        );
        return;
    }
    let entries = manifest("cos.txt");
    let mut listed: Vec<String> = entries.iter().map(|e| e.file.clone()).collect();
    let mut present: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".idl"))
        .collect();
    listed.sort();
    present.sort();
    assert_eq!(
        listed,
        present,
        "tests/corpus/cos.txt lists every file of {}",
        dir.display()
    );
    let (ok, failures) = run(&dir, &entries, &[]);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The accepted files share includes (CosNotification, the IR): compile them as one
    // specification, every definition generated once.
    let umbrella: String = ok
        .iter()
        .map(|(f, _)| format!("#include <{f}>\n"))
        .collect();
    let mut fe = corbina_idl::Frontend::new();
    // Some accepted files are accepted with relaxed names only (their manifest lines say why).
    fe.include_dir(&dir).relaxed_names(true);
    let mut spec = fe.parse_str("cos-corpus.idl", &umbrella).unwrap();
    fn all_main(defs: &mut [corbina_idl::model::Definition]) {
        use corbina_idl::model::DefinitionKind as K;
        for d in defs {
            d.from_main_file = true;
            match &mut d.kind {
                K::Module(m) => all_main(&mut m.definitions),
                K::Interface(i) => all_main(&mut i.definitions),
                K::Struct(s) => all_main(&mut s.definitions),
                K::Exception(e) => all_main(&mut e.definitions),
                K::Union(u) => all_main(&mut u.definitions),
                _ => {}
            }
        }
    }
    all_main(&mut spec.definitions);
    let src = corbina_codegen::generate(&spec, "cos-corpus.idl").unwrap();
    rustc_check("cos", &batch(&[("COS".into(), src)])).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn polyorb_idl_test_suite() {
    let Some(dir) = std::env::var_os("CORBINA_POLYORB_IDLS").map(PathBuf::from) else {
        eprintln!("skipped: set CORBINA_POLYORB_IDLS to PolyORB's testsuite/idls to run it");
        return;
    };
    let entries = manifest("polyorb.txt");
    let (ok, failures) = run(&dir, &entries, &[]);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    rustc_check("polyorb", &batch(&ok)).unwrap_or_else(|e| panic!("{e}"));
}

/// Issue 27: types defined in place in a state member (and in exception and union members)
/// belong to the enclosing scope, and the generated Rust for them compiles.
#[test]
fn types_defined_in_members_generate_compiling_rust() {
    let idl = "valuetype W { public struct S { long x; } m; private enum Mode { on, off } state; };
               exception E { struct Detail { long code; } info; };
               union U switch (long) { case 1: struct Inner { long a; } first; };";
    let spec = corbina_idl::Frontend::new()
        .parse_str("inline.idl", idl)
        .unwrap_or_else(|e| panic!("{e}"));
    let src = corbina_codegen::generate(&spec, "inline.idl").unwrap();
    assert!(src.contains("pub m: w::S,"), "{src}");
    rustc_check("inline", &batch(&[("inline.idl".into(), src)])).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_compile_check_sees_errors() {
    assert!(rustc_check(
        "ok",
        "pub fn f() -> corbina::Any { corbina::Any::default() }"
    )
    .is_ok());
    let err = rustc_check("bad", "pub fn f() -> corbina::NoSuchType { 1 }").unwrap_err();
    assert!(err.contains("NoSuchType"), "{err}");
}
