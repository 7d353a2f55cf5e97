//! Every `tests/errors/NAME.idl` must fail with exactly the diagnostics in `NAME.err`, as
//! rustc renders its own (source line, caret, label; every syntax error recovered from).
//!
//! Set `BLESS=1` to (re)write the `.err` files from the current output.

use corbina_idl::Frontend;
use std::path::Path;

#[test]
fn error_messages_match() {
    let dir = Path::new("tests/errors");
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "idl"))
        .collect();
    names.sort();
    assert!(names.len() >= 20, "expected at least 20 error cases");
    let bless = std::env::var_os("BLESS").is_some();
    let mut mismatches = Vec::new();
    for idl in &names {
        let got = match Frontend::new().parse_file(idl) {
            Ok(_) => "<parsed without error>".to_string(),
            Err(e) => e.render(),
        };
        let err_file = idl.with_extension("err");
        if bless {
            std::fs::write(&err_file, format!("{got}\n")).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&err_file).unwrap_or_default();
        if want.trim_end() != got {
            mismatches.push(format!(
                "{}:\nwant:\n{}\ngot:\n{got}",
                idl.display(),
                want.trim_end()
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn a_missing_file_says_no_such_file() {
    let e = Frontend::new()
        .parse_file("tests/errors/nonexistent.idl")
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "tests/errors/nonexistent.idl:1:1: error: no such file"
    );
    assert_eq!(e.render(), e.to_string());
}

#[test]
fn the_one_line_form_keeps_every_error() {
    let e = Frontend::new()
        .parse_file("tests/errors/several_syntax_errors.idl")
        .unwrap_err();
    let lines: Vec<String> =
        e.0.iter()
            .map(|d| format!("{}:{}", d.line, d.col))
            .collect();
    assert_eq!(lines, ["3:21", "4:25", "6:22", "8:19", "13:14"], "{e}");
    assert_eq!(e.to_string().lines().count(), 5);
}
