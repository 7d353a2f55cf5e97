//! The optional servant traits with default methods raising NO_IMPLEMENT
//! (`Builder::no_implement_defaults`, `corbina-idl --no-implement-defaults`): a golden file
//! (`BLESS=1` rewrites it), the same output from the command, and the file compiled and
//! served with a servant that implements one operation only.

use std::path::Path;
use std::sync::Arc;

use corbina::{SystemException, SystemExceptionKind};

const IDL: &str = "tests/idl/bench.idl";
const GOLDEN: &str = "tests/golden/bench_no_implement.rs";

fn generate(no_implement_defaults: bool) -> String {
    let mut fe = corbina_idl::Frontend::new();
    let mut options = corbina_codegen::Options::default();
    options.no_implement_defaults = no_implement_defaults;
    corbina_codegen::compile_file_with(&mut fe, Path::new(IDL), &options)
        .unwrap_or_else(|e| panic!("{e}"))
        .source
}

#[test]
fn golden_file_matches() {
    let src = generate(true);
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(GOLDEN, &src).unwrap();
        return;
    }
    let old = std::fs::read_to_string(GOLDEN).unwrap_or_default();
    assert!(old == src, "{GOLDEN} out of date (rerun with BLESS=1)");
    // Off by default: the ordinary output has no default bodies.
    assert_eq!(
        generate(false),
        std::fs::read_to_string("tests/golden/bench.rs").unwrap()
    );
}

#[test]
fn command_line_flag_gives_the_same_output() {
    let dir = std::env::temp_dir().join(format!("corbina-no-implement-{}", std::process::id()));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_corbina-idl"))
        .args(["--no-implement-defaults", "--no-format", "-o"])
        .arg(&dir)
        .arg(IDL)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_to_string(dir.join("bench.rs")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(written, generate(true));
}

#[allow(dead_code)]
mod gen {
    include!("golden/bench_no_implement.rs");
}

/// Implements `echo` and nothing else.
struct EchoOnly;

impl gen::BenchServant for EchoOnly {
    fn echo(&self, s: &str) -> Result<String, SystemException> {
        Ok(s.to_owned())
    }
}

#[test]
fn unimplemented_operations_raise_no_implement() {
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let poa = orb.root_poa();
    let id = poa
        .activate_object(Arc::new(gen::BenchSkeleton::new(EchoOnly)))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    let obj = poa.id_to_reference(&id).unwrap();
    let expected = SystemException::new(
        SystemExceptionKind::NoImplement,
        corbina::error::minor::NO_IMPLEMENT_OPERATION,
    );
    // Both a collocated call and one marshalled as a remote call would be.
    for proxy in [
        gen::Bench::unchecked_narrow(&obj),
        gen::Bench::unchecked_narrow(&obj.without_collocation()),
    ] {
        assert_eq!(proxy.echo("still served").unwrap(), "still served");
        assert_eq!(proxy.ping().unwrap_err(), expected);
        match proxy.fail(1) {
            Err(gen::bench::FailError::System(e)) => assert_eq!(e, expected),
            other => panic!("expected NO_IMPLEMENT, got {other:?}"),
        }
    }
    orb.destroy();
}
