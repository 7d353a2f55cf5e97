//! Golden files: the generator's output for the test corpus, compared byte for byte.
//! Run with `BLESS=1` to rewrite them after an intended change.

use std::path::Path;

/// (IDL file relative to the crate, golden file name)
pub const CORPUS: &[(&str, &str)] = &[
    ("tests/idl/bench.idl", "bench.rs"),
    ("tests/idl/tricky_supported.idl", "tricky_supported.rs"),
    ("tests/idl/extra.idl", "extra.rs"),
    ("tests/idl/objref.idl", "objref.rs"),
    ("tests/idl/dynamic.idl", "dynamic.rs"),
    ("tests/idl/recursive.idl", "recursive.rs"),
    ("tests/idl/names.idl", "names.rs"),
    ("tests/idl/local.idl", "local.rs"),
    ("tests/idl/abstract.idl", "abstract.rs"),
    // The bidirectional GIOP peers' interface, shared with omniORB (peers/).
    ("../../peers/bidir.idl", "bidir.rs"),
    // The valuetype interop peers' interface, shared with omniORB and JacORB (peers/).
    ("../../peers/values.idl", "peers_values.rs"),
    // The abstract interface interop peers' interface, shared with omniORB (peers/).
    ("../../peers/abstract.idl", "peers_abstract.rs"),
];

fn generate(idl: &str) -> String {
    let mut fe = corbina_idl::Frontend::new();
    fe.include_dir("tests/idl");
    let c =
        corbina_codegen::compile_file(&mut fe, Path::new(idl)).unwrap_or_else(|e| panic!("{e}"));
    c.source
}

#[test]
fn golden_files_match() {
    let bless = std::env::var_os("BLESS").is_some();
    let mut stale = Vec::new();
    for (idl, golden) in CORPUS {
        let src = generate(idl);
        let path = Path::new("tests/golden").join(golden);
        if bless {
            std::fs::write(&path, &src).unwrap();
            continue;
        }
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        if old != src {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "golden files out of date (rerun with BLESS=1): {stale:?}"
    );
}

#[test]
fn generation_is_deterministic() {
    for (idl, _) in CORPUS {
        assert_eq!(generate(idl), generate(idl));
    }
}

#[test]
fn original_tricky_idl_generates() {
    // Every construct of the front end's tricky IDL is generated now: object references,
    // `any`, `TypeCode`, and valuetypes of every kind (abstract, custom, `ValueBase`).
    let mut fe = corbina_idl::Frontend::new();
    let src =
        corbina_codegen::compile_file(&mut fe, Path::new("../corbina-idl/tests/idl/tricky.idl"))
            .unwrap_or_else(|e| panic!("{e}"))
            .source;
    for want in [
        "pub struct Shape(pub ::corbina::ValueBase);",
        "pub state: ::corbina::valuetype::CustomState,",
    ] {
        assert!(src.contains(want), "missing {want:?}");
    }
}

#[test]
fn unsupported_constructs_are_clean_errors() {
    let mut fe = corbina_idl::Frontend::new();
    let err = corbina_codegen::compile_file(&mut fe, Path::new("tests/idl/unsupported.idl"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "tests/idl/unsupported.idl:3:35: error: not yet supported: native type '::Handle' used in operation 'put' of '::UsesNative'"
    );
}

#[test]
fn rust_name_clashes_are_disambiguated_in_declaration_order() {
    let spec = corbina_idl::Frontend::new()
        .parse_str("clash.idl", "struct S { long fooBar; long foo_bar; };")
        .unwrap();
    let src = corbina_codegen::generate(&spec, "clash.idl").unwrap();
    assert!(
        src.contains("pub foo_bar: i32,\n    pub foo_bar_: i32,"),
        "{src}"
    );
}
