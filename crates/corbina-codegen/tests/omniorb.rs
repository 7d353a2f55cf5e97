//! The `corbina-idl` command over the CORBA service IDL that Debian's omniORB packages
//! install (`/usr/share/idl/omniORB/**/*.idl`), set up the way omniORB's own build compiles
//! it: the directory and its `COS` subdirectory on the include path,
//! `ENABLE_CLIENT_IR_SUPPORT` defined (so `orb.idl` pulls in the Interface Repository) and
//! `__OMNIIDL__`, as omniidl defines it (under which `CosLifeCycle.idl` escapes its
//! `Factory`, a name that collides with the keyword `factory`, CORBA 3.0 §3.2.4).
//! Every file that generates is then compiled against the real runtime with `cargo check`.
//!
//! Without the package the tests print why and pass, unless `REQUIRE_OMNIORB_PEERS` is set.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::rustc_check;

const DIR: &str = "/usr/share/idl/omniORB";

/// Files the front end rejects because they refer to something the package does not ship
/// (omniidl fails on them too); the same list as `corbina-idl/tests/omniorb.rs`.
const FRONT_END_FAILURES: &[(&str, &str)] = &[
    (
        "CosTSPortability.idl",
        "'CORBA::Environment' is not defined",
    ), // PIDL pseudo-object
    // omniORB's orb.idl on the include path shadows the compiler's own, which defines
    // these (tests/corpus.rs compiles every COS file with it).
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

/// Files that parse but use constructs the generator does not support yet; each error line
/// is `error: not yet supported: …` and the first names the construct. (`boxes.idl`,
/// `messaging.idl` and `pollable.idl` generate since valuetypes of every kind do.)
const NOT_YET_SUPPORTED: &[(&str, &str)] = &[];

/// `true` when the package is installed; otherwise a note (or a failure when
/// `REQUIRE_OMNIORB_PEERS` is set).
fn have_omniorb_idl() -> bool {
    corbina_testpeers::have_path(DIR, "omniORB's service IDL", "Debian package omniorb-idl")
}

fn idl_files() -> Vec<PathBuf> {
    let root = Path::new(DIR);
    let mut files: Vec<_> = std::fs::read_dir(root.join("COS"))
        .unwrap()
        .chain(std::fs::read_dir(root).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "idl"))
        .collect();
    files.sort();
    files
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// Runs `corbina-idl -I DIR -I DIR/COS -D ENABLE_CLIENT_IR_SUPPORT -D __OMNIIDL__ -o out
/// file`; the error output on failure.
fn cli(file: &Path, out: &Path) -> Result<(), String> {
    let o = Command::new(env!("CARGO_BIN_EXE_corbina-idl"))
        .args(["-I", DIR, "-I", &format!("{DIR}/COS"), "-D"])
        .arg("ENABLE_CLIENT_IR_SUPPORT")
        .args(["-D", "__OMNIIDL__", "--no-format"])
        .arg("-o")
        .arg(out)
        .arg(file)
        .output()
        .expect("corbina-idl runs");
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    match o.status.code() {
        Some(0) => Ok(()),
        Some(1) => Err(stderr),
        c => panic!(
            "{}: corbina-idl exited with {c:?}: {stderr}",
            file.display()
        ),
    }
}

fn fresh_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn service_idl_generates_and_compiles() {
    if !have_omniorb_idl() {
        return;
    }
    let out = fresh_dir(&format!("omniorb-idl-out-{}", std::process::id()));
    let (mut ok, mut unsupported, mut front_end) = (Vec::new(), BTreeMap::new(), BTreeMap::new());
    for f in idl_files() {
        let name = file_name(&f);
        match cli(&f, &out) {
            Ok(()) => ok.push(name),
            Err(e) => {
                // Rendered as rustc renders errors: `error: MESSAGE`, then where, then the
                // source line; after several, a count.
                let errors = || {
                    e.lines()
                        .filter(|l| l.starts_with("error: "))
                        .filter(|l| !l.starts_with("error: could not compile"))
                };
                let first = errors().next().unwrap_or_default().to_string();
                let all_unsupported = errors().all(|l| l.starts_with("error: not yet supported: "));
                if all_unsupported && !first.is_empty() {
                    unsupported.insert(name, first);
                } else {
                    front_end.insert(name, first);
                }
            }
        }
    }
    eprintln!("generated ({}): {ok:?}", ok.len());
    eprintln!(
        "not yet supported ({}): {unsupported:#?}",
        unsupported.len()
    );
    eprintln!("front-end errors ({}): {front_end:#?}", front_end.len());

    let check = |what: &str, got: &BTreeMap<String, String>, want: &[(&str, &str)]| {
        let got_names: Vec<&str> = got.keys().map(String::as_str).collect();
        let mut want_names: Vec<&str> = want.iter().map(|w| w.0).collect();
        want_names.sort_unstable();
        assert_eq!(got_names, want_names, "{what}: {got:#?}");
        for (name, why) in want {
            assert!(
                got[*name].contains(why),
                "{name}: want {why:?}, got {}",
                got[*name]
            );
        }
    };
    check("front-end failures", &front_end, FRONT_END_FAILURES);
    check("not yet supported", &unsupported, NOT_YET_SUPPORTED);
    // Everything else generates: the naming, event, notification, trading, property,
    // transaction, collection, ... services, the IR and omniORB's own interfaces.
    assert_eq!(
        ok.len() + unsupported.len() + front_end.len(),
        idl_files().len()
    );
    // Local interfaces (compression.idl) and interfaces never defined (corbaidl.idl's
    // IDLType, poa.idl's POA) generate too.
    assert_eq!(ok.len(), 62, "{ok:?}");
    for f in [
        "boxes.idl",
        "messaging.idl",
        "pollable.idl",
        "CosNaming.idl",
        "CosNotification.idl",
        "CosTrading.idl",
        "ir.idl",
        "orb.idl",
    ] {
        assert!(ok.iter().any(|o| o == f), "{f} not in {ok:?}");
    }

    // Type-check them against the runtime, each in its own module: the files of the top
    // directory here; the COS files are type-checked together, as one specification, by
    // tests/corpus.rs (checking them here again, each with its includes, took minutes).
    let cos: Vec<String> = std::fs::read_dir(Path::new(DIR).join("COS"))
        .unwrap()
        .map(|e| file_name(&e.unwrap().path()))
        .collect();
    let generated: Vec<String> = ok
        .iter()
        .filter(|n| !cos.contains(n))
        .map(|n| n.trim_end_matches(".idl").to_string())
        .collect();
    type_check(&out, &generated);
    std::fs::remove_dir_all(&out).unwrap();
}

/// Type-checks `dir/<stem>.rs` for every stem, each in a module of its own, against the
/// runtime this test was built with, warnings denied (`rustc --emit=metadata`: a throwaway
/// crate built with cargo would first build the runtime's whole dependency tree again).
fn type_check(dir: &Path, stems: &[String]) {
    let mut lib = String::from(
        "//! Every omniORB service IDL file that `corbina-idl` generates.\n#![deny(warnings)]\n",
    );
    for stem in stems {
        let rs = dir.join(format!("{stem}.rs"));
        let module = format!("idl_{}", stem.to_lowercase().replace('-', "_"));
        lib.push_str(&format!("pub mod {module} {{\n    include!({rs:?});\n}}\n"));
    }
    rustc_check("omniorb_idl", &lib)
        .unwrap_or_else(|e| panic!("generated Rust failed to compile:\n{e}"));
    eprintln!("compiled {} generated files", stems.len());
}

/// CosNaming passes object references everywhere; its generated code is checked in as
/// `tests/golden/CosNaming.rs`, which `tests/generated.rs` compiles whether or not the
/// package is installed. Run with `BLESS=1` to rewrite it.
#[test]
fn cos_naming_generates_golden() {
    let f = Path::new(DIR).join("COS/CosNaming.idl");
    if !have_omniorb_idl() {
        return;
    }
    let mut fe = corbina_idl::Frontend::new();
    fe.include_dir(DIR).include_dir(format!("{DIR}/COS"));
    let src = corbina_codegen::compile_file(&mut fe, &f)
        .map(|c| c.source)
        .unwrap_or_else(|e| panic!("{e}"));
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
