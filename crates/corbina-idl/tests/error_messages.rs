//! Every `tests/errors/NAME.idl` must fail with exactly the message in `NAME.err`.
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
            Err(e) => e.to_string(),
        };
        let err_file = idl.with_extension("err");
        if bless {
            std::fs::write(&err_file, format!("{got}\n")).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&err_file).unwrap_or_default();
        if want.trim_end() != got {
            mismatches.push(format!(
                "{}:\n  want: {}\n  got:  {got}",
                idl.display(),
                want.trim_end()
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
