//! The generator over the CORBA service IDL that Debian's omniORB packages install.

use std::path::Path;

const DIR: &str = "/usr/share/idl/omniORB";

fn compile(file: &Path) -> Result<String, String> {
    let mut fe = corbina_idl::Frontend::new();
    fe.include_dir(DIR).include_dir(format!("{DIR}/COS"));
    corbina_codegen::compile_file(&mut fe, file)
        .map(|c| c.source)
        .map_err(|e| e.to_string())
}

#[test]
fn cos_idl_generates_or_reports_unsupported() {
    let root = Path::new(DIR);
    if !root.exists() {
        eprintln!("{DIR} not installed; skipped");
        return;
    }
    let mut files: Vec<_> = std::fs::read_dir(root.join("COS"))
        .unwrap()
        .chain(std::fs::read_dir(root).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "idl"))
        .collect();
    files.sort();
    let (mut ok, mut unsupported, mut other) = (Vec::new(), Vec::new(), Vec::new());
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        match compile(f) {
            Ok(_) => ok.push(name),
            Err(e) if e.lines().all(|l| l.contains("error: not yet supported:")) => {
                unsupported.push(name)
            }
            Err(e) => other.push((name, e.lines().next().unwrap_or_default().to_string())),
        }
    }
    eprintln!("generated ({}): {ok:?}", ok.len());
    eprintln!("not yet supported ({}): {unsupported:?}", unsupported.len());
    eprintln!("front-end errors ({}): {other:#?}", other.len());
    // Only the files the front end itself rejects (see corbina-idl/tests/omniorb.rs) fail
    // for other reasons.
    for (name, e) in &other {
        assert!(
            e.contains("is not defined") || e.contains("cannot find include file"),
            "{name}: {e}"
        );
    }
    // With `any` and `TypeCode` supported, 42 of the files generate (17 did before): the
    // event, notification, trading and property services among them.
    for f in [
        "TimeBase.idl",
        "CosNaming.idl",
        "Naming.idl",
        "CosEventComm.idl",
        "CosNotification.idl",
        "CosTrading.idl",
        "CosPropertyService.idl",
        "CosTypedEventComm.idl",
    ] {
        assert!(ok.contains(&f.to_string()), "{f} not in {ok:?}");
    }
    assert!(ok.len() >= 42, "only {} generated: {ok:?}", ok.len());
}

/// CosNaming passes object references everywhere; its generated code is checked in as
/// `tests/golden/CosNaming.rs`, which `tests/generated.rs` compiles whether or not the
/// package is installed. Run with `BLESS=1` to rewrite it.
#[test]
fn cos_naming_generates_golden() {
    let f = Path::new(DIR).join("COS/CosNaming.idl");
    if !f.exists() {
        eprintln!("{} not installed; skipped", f.display());
        return;
    }
    let src = compile(&f).unwrap_or_else(|e| panic!("{e}"));
    let golden = Path::new("tests/golden/CosNaming.rs");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(golden, &src).unwrap();
        return;
    }
    let old = std::fs::read_to_string(golden).unwrap_or_default();
    assert!(
        old == src,
        "{} is out of date (rerun with BLESS=1)",
        golden.display()
    );
}
