//! Parses every IDL file Debian's `omniorb-idl` package installs.

use corbina_idl::Frontend;
use std::path::Path;

const DIR: &str = "/usr/share/idl/omniORB";

/// Files that cannot compile with the package as shipped, and why: each
/// refers to something the package does not contain (omniidl fails on them too).
const EXPECTED_FAILURES: &[(&str, &str)] = &[
    (
        "CosTSPortability.idl",
        "'CORBA::Environment' is not defined",
    ), // PIDL pseudo-object
    // IOP.idl, missing from the package, now comes from the front end's built-in copy; these
    // two then stop at Security.idl, which needs what omniORB's own orb.idl (found first on
    // the include path, so the built-in one is not used) lacks.
    ("SECIOP.idl", "'CORBA::ServiceOption' is not defined"),
    ("SSLIOP.idl", "'CORBA::ServiceOption' is not defined"),
    ("NRService.idl", "'CORBA::ServiceOption' is not defined"),
    ("Security.idl", "'CORBA::ServiceOption' is not defined"),
    ("SecurityAdmin.idl", "'CORBA::ServiceOption' is not defined"),
    (
        "SecurityLevel1.idl",
        "'CORBA::ServiceOption' is not defined",
    ),
    (
        "SecurityLevel2.idl",
        "'CORBA::ServiceOption' is not defined",
    ),
    (
        "SecurityReplaceable.idl",
        "'CORBA::ServiceOption' is not defined",
    ),
];

#[test]
fn omniorb_idl_files_parse() {
    let root = Path::new(DIR);
    if !root.is_dir() {
        println!("note: {DIR} not found (install omniorb-idl); skipping");
        return;
    }
    let mut files = Vec::new();
    for dir in [root.to_path_buf(), root.join("COS")] {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "idl") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut failures = Vec::new();
    for f in &files {
        let mut fe = Frontend::new();
        // omniORB's own build defines this so orb.idl pulls in the IR (CORBA::InterfaceDef);
        // omniidl defines __OMNIIDL__, under which CosLifeCycle.idl escapes its `Factory`
        // (a name CORBA 3.0 §3.2.4 forbids: it collides with the keyword `factory`).
        fe.include_dir(root)
            .include_dir(root.join("COS"))
            .define("ENABLE_CLIENT_IR_SUPPORT", "1")
            .define("__OMNIIDL__", "1");
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let expected = EXPECTED_FAILURES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, m)| *m);
        match (fe.parse_file(f), expected) {
            (Ok(_), None) => {}
            (Err(e), Some(m)) if e.to_string().contains(m) => {}
            (Ok(_), Some(m)) => {
                failures.push(format!("{name}: expected failure '{m}' but it parsed"))
            }
            (Err(e), _) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} files failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    println!("parsed {} omniORB IDL files", files.len());
}

#[test]
fn cos_naming_repository_ids() {
    let root = Path::new(DIR);
    if !root.is_dir() {
        println!("note: {DIR} not found; skipping");
        return;
    }
    let mut fe = Frontend::new();
    fe.include_dir(root).include_dir(root.join("COS"));
    let spec = fe.parse_file(root.join("COS/CosNaming.idl")).unwrap();
    let nc = spec
        .lookup(&corbina_idl::ScopedName::parse("CosNaming::NamingContext"))
        .unwrap();
    assert_eq!(nc.repository_id, "IDL:omg.org/CosNaming/NamingContext:1.0");
    assert!(nc.from_main_file);
}
