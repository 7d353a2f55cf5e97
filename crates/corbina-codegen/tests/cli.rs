//! The `corbina-idl` command.

use std::path::PathBuf;
use std::process::Command;

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("corbina-codegen-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `corbina-idl ARGS…`, which must succeed.
fn corbina_idl_ok(args: &[&str]) {
    let st = Command::new(env!("CARGO_BIN_EXE_corbina-idl"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
}

#[test]
fn generates_one_file_per_idl_file() {
    let out = temp_dir("cli-ok");
    let o = out.display().to_string();
    corbina_idl_ok(&[
        "-I",
        "tests/idl",
        "-o",
        &o,
        "tests/idl/bench.idl",
        "tests/idl/extra.idl",
    ]);
    // Laid out by rustfmt (when installed), as the Builder does.
    let golden = std::fs::read_to_string("tests/golden/bench.rs").unwrap();
    let bench = std::fs::read_to_string(out.join("bench.rs")).unwrap();
    assert_eq!(
        bench,
        corbina_codegen::rustfmt(&golden).unwrap_or(golden.clone())
    );
    assert!(out.join("extra.rs").exists());
    // --no-format: the generator's own text.
    corbina_idl_ok(&[
        "-I",
        "tests/idl",
        "-o",
        &o,
        "--no-format",
        "tests/idl/bench.idl",
    ]);
    assert_eq!(
        std::fs::read_to_string(out.join("bench.rs")).unwrap(),
        golden
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn errors_are_reported_as_rustc_reports_them() {
    let out = temp_dir("cli-err");
    let bad = out.join("bad.idl");
    std::fs::write(&bad, "struct S {\n  long x;\n  Missing y;\n};\n").unwrap();
    let st = Command::new(env!("CARGO_BIN_EXE_corbina-idl"))
        .arg("-o")
        .arg(&out)
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(1));
    let err = String::from_utf8_lossy(&st.stderr);
    assert_eq!(
        err.trim_end(),
        format!(
            "error: 'Missing' is not defined\n  --> {}:3:3\n  |\n3 |   Missing y;\n  |   ^^^^^^^",
            bad.display()
        ),
    );
    assert!(!out.join("bad.rs").exists());
    let failing = |idl: &str| {
        let st = Command::new(env!("CARGO_BIN_EXE_corbina-idl"))
            .arg("-o")
            .arg(&out)
            .arg(idl)
            .output()
            .unwrap();
        assert_eq!(st.status.code(), Some(1));
        String::from_utf8_lossy(&st.stderr).into_owned()
    };
    // Unsupported constructs are errors too.
    let err = failing("tests/idl/unsupported.idl");
    assert!(
        err.contains(
            "error: not yet supported: native type '::Handle' used in operation 'put' of '::UsesNative'\n  --> tests/idl/unsupported.idl:3:35"
        ),
        "{err}"
    );
    // A missing file says so.
    let err = failing("tests/idl/no_such.idl");
    assert_eq!(
        err.trim_end(),
        "tests/idl/no_such.idl:1:1: error: no such file"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn help_and_usage_errors() {
    let st = Command::new(env!("CARGO_BIN_EXE_corbina-idl"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(st.status.success());
    let help = String::from_utf8_lossy(&st.stdout);
    for flag in [
        "Usage: corbina-idl [OPTIONS] <FILE.idl>...",
        "-I <DIR>",
        "-D <NAME[=VALUE]>",
        "-o <OUTDIR>",
        "--no-implement-defaults",
        "--ami[=<I,...>]",
        "--amh[=<I,...>]",
        "--relaxed-names",
        "--no-format",
    ] {
        assert!(help.contains(flag), "{flag}: {help}");
    }
    let st = Command::new(env!("CARGO_BIN_EXE_corbina-idl"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&st.stdout).trim(),
        format!("corbina-idl {}", env!("CARGO_PKG_VERSION"))
    );
    let st = Command::new(env!("CARGO_BIN_EXE_corbina-idl"))
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(2));
    let st = Command::new(env!("CARGO_BIN_EXE_corbina-idl"))
        .arg("--bogus")
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&st.stderr).contains("unexpected argument '--bogus'"));
    let st = Command::new(env!("CARGO_BIN_EXE_corbina-idl"))
        .arg("-o")
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(2));
}

#[test]
fn ami_and_amh_take_an_optional_list() {
    let out = temp_dir("cli-ami");
    let o = format!("-o{}", out.display());
    let run = |args: &[&str]| {
        let mut all = vec![o.as_str(), "-Itests/idl", "-DUNUSED=2"];
        all.extend_from_slice(args);
        all.push("tests/idl/bench.idl");
        corbina_idl_ok(&all);
        std::fs::read_to_string(out.join("bench.rs")).unwrap()
    };
    let (ami, amh) = (
        "pub trait AmiBenchHandlerServant",
        "pub trait AmhBenchServant",
    );
    let plain = run(&[]);
    assert!(!plain.contains(ami) && !plain.contains(amh));
    let all = run(&["--ami", "--amh"]);
    assert!(all.contains(ami) && all.contains(amh));
    let listed = run(&["--ami=NoSuchInterface,Other", "--amh=Bench"]);
    assert!(
        !listed.contains(ami) && listed.contains(amh),
        "only the listed interfaces"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn builder_writes_to_out_dir() {
    let out = temp_dir("builder");
    let written = corbina_codegen::Builder::new()
        .include("tests/idl")
        .cargo_metadata(false)
        .out_dir(&out)
        .unwrap()
        .compile(&["tests/idl/bench.idl"])
        .unwrap();
    assert_eq!(written, vec![out.join("bench.rs")]);
    // Laid out by rustfmt when there is one (scripts/test.sh installs it): what rustfmt
    // would make of the golden output, and rustfmt-clean.
    let golden = std::fs::read_to_string("tests/golden/bench.rs").unwrap();
    let in_out_dir = std::fs::read_to_string(out.join("bench.rs")).unwrap();
    match corbina_codegen::rustfmt(&golden) {
        Some(formatted) => {
            assert_eq!(in_out_dir, formatted);
            assert_eq!(
                corbina_codegen::rustfmt(&in_out_dir).as_deref(),
                Some(&*in_out_dir)
            );
            assert!(in_out_dir.lines().all(|l| l.chars().count() <= 100));
        }
        None => assert_eq!(
            in_out_dir, golden,
            "without rustfmt, the output as generated"
        ),
    }
    corbina_codegen::Builder::new()
        .cargo_metadata(false)
        .format(false)
        .out_dir(&out)
        .unwrap()
        .compile(&["tests/idl/bench.idl"])
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(out.join("bench.rs")).unwrap(),
        golden
    );
    // A source rustfmt cannot parse is left to the compiler.
    assert_eq!(corbina_codegen::rustfmt("fn ("), None);
    let err = corbina_codegen::Builder::new()
        .cargo_metadata(false)
        .out_dir(&out)
        .unwrap()
        .compile(&["tests/idl/unsupported.idl"])
        .unwrap_err();
    assert!(err.to_string().contains("not yet supported"), "{err}");
    // What a build script returning `Result<(), Box<dyn Error>>` prints (`Error: {:?}`):
    // the rendered report, not the diagnostics' fields.
    let shown = format!("Error: {err:?}");
    assert!(
        shown.starts_with("Error: \nerror: not yet supported: native type '::Handle'"),
        "{shown}"
    );
    assert!(
        shown.contains("--> tests/idl/unsupported.idl:3:35"),
        "{shown}"
    );
    assert!(!shown.contains("Diagnostic {"), "{shown}");
    std::fs::remove_dir_all(&out).unwrap();
}
