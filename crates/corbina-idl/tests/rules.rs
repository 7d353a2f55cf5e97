//! One pair of files per semantic rule of OMG IDL, in `tests/rules/`:
//!
//! - `NAME.invalid.idl` breaks the rule. Its header says which rule (`// rule: ...`) and the
//!   exact diagnostic expected (`// error: LINE:COL: MESSAGE`); the front end must stop with
//!   `tests/rules/NAME.invalid.idl:LINE:COL: error: MESSAGE`.
//! - `NAME.valid.idl` is the closest legal IDL; the front end must accept it.
//!
//! Adding a rule is adding a pair. When `omniidl` is installed, each pair is also checked
//! against it (omniidl must refuse the invalid file and accept the valid one), unless the
//! header says `// omniidl: accepts` (a rule omniidl does not enforce) or
//! `// omniidl: refuses` (valid IDL omniidl does not support). `REQUIRE_OMNIORB_PEERS=1`
//! makes a missing omniidl a failure.

use corbina_idl::Frontend;
use std::path::{Path, PathBuf};
use std::process::Command;

const DIR: &str = "tests/rules";

struct Pair {
    name: String,
    invalid: PathBuf,
    valid: PathBuf,
}

fn pairs() -> Vec<Pair> {
    let mut names: Vec<String> = std::fs::read_dir(DIR)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for n in &names {
        let Some(stem) = n
            .strip_suffix(".invalid.idl")
            .or_else(|| n.strip_suffix(".valid.idl"))
        else {
            // Helper files (included by a pair) are named `*.inc.idl`.
            assert!(n.ends_with(".inc.idl"), "{DIR}/{n}: not NAME.(in)valid.idl");
            continue;
        };
        let invalid = Path::new(DIR).join(format!("{stem}.invalid.idl"));
        let valid = Path::new(DIR).join(format!("{stem}.valid.idl"));
        assert!(invalid.is_file(), "{} is missing", invalid.display());
        assert!(valid.is_file(), "{} is missing", valid.display());
        if n.ends_with(".invalid.idl") {
            out.push(Pair {
                name: stem.to_string(),
                invalid,
                valid,
            });
        }
    }
    out
}

/// The value of the first `// KEY: value` header line.
fn header(path: &Path, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let prefix = format!("// {key}: ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix).map(|v| v.trim().to_string()))
}

fn compile(path: &Path) -> Result<(), String> {
    Frontend::new()
        .parse_file(path)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn every_rule_has_a_pair_and_a_spec_reference() {
    let pairs = pairs();
    assert!(pairs.len() >= 40, "only {} rules", pairs.len());
    for p in &pairs {
        assert!(
            header(&p.invalid, "rule").is_some(),
            "{}: no '// rule:' line",
            p.invalid.display()
        );
    }
}

#[test]
fn invalid_files_fail_at_the_expected_place() {
    let mut bad = Vec::new();
    for p in pairs() {
        let Some(want) = header(&p.invalid, "error") else {
            bad.push(format!("{}: no '// error:' line", p.invalid.display()));
            continue;
        };
        let want = {
            let (pos, msg) = want
                .split_once(": ")
                .unwrap_or_else(|| panic!("{}: bad '// error:' line", p.name));
            format!("{}:{pos}: error: {msg}", p.invalid.display())
        };
        match compile(&p.invalid) {
            Ok(()) => bad.push(format!("{}: accepted\n  want: {want}", p.name)),
            Err(got) if got != want => {
                bad.push(format!("{}:\n  want: {want}\n  got:  {got}", p.name))
            }
            Err(_) => {}
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn valid_files_are_accepted() {
    let mut bad = Vec::new();
    for p in pairs() {
        if let Err(e) = compile(&p.valid) {
            bad.push(format!("{}: {e}", p.name));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn omniidl_accepts(path: &Path) -> bool {
    Command::new("omniidl")
        .arg(path)
        .output()
        .expect("running omniidl")
        .status
        .success()
}

#[test]
fn omniidl_agrees() {
    let found = Command::new("omniidl").arg("-V").output().is_ok();
    if !found {
        assert!(
            std::env::var_os("REQUIRE_OMNIORB_PEERS").is_none(),
            "omniidl not found"
        );
        println!("note: omniidl not found; skipping");
        return;
    }
    let mut bad = Vec::new();
    for p in pairs() {
        if !header(&p.invalid, "omniidl").is_some_and(|v| v.starts_with("accepts"))
            && omniidl_accepts(&p.invalid)
        {
            bad.push(format!("{}: omniidl accepts the invalid file", p.name));
        }
        if !header(&p.valid, "omniidl").is_some_and(|v| v.starts_with("refuses"))
            && !omniidl_accepts(&p.valid)
        {
            bad.push(format!("{}: omniidl refuses the valid file", p.name));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
