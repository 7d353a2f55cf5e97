use super::*;

fn pp(text: &str) -> Result<Vec<Tok>, String> {
    pp_with(text, &[], &mut Vec::new())
}

fn pp_with(
    text: &str,
    dirs: &[PathBuf],
    warnings: &mut Vec<Diagnostic>,
) -> Result<Vec<Tok>, String> {
    let p = Preprocessor::new(dirs, &[("CMDLINE".into(), "7".into())], warnings)
        .map_err(|e| e.to_string())?;
    let toks = p.run_str("t.idl", text).map_err(|e| e.to_string())?;
    Ok(toks
        .into_iter()
        .map(|t| t.tok)
        .filter(|t| *t != Tok::Eof)
        .collect())
}

fn idents(text: &str) -> Vec<String> {
    pp(text)
        .unwrap()
        .into_iter()
        .map(|t| match t {
            Tok::Ident(s) => s,
            Tok::Int(v) => v.to_string(),
            other => format!("{other}"),
        })
        .collect()
}

#[test]
fn object_and_function_macros() {
    assert_eq!(idents("#define N 10\nN CMDLINE"), ["10", "7"]);
    assert_eq!(
        idents("#define ADD(a, b) a + b\nADD(1, (2))"),
        ["1", "'+'", "'('", "2", "')'"]
    );
    assert_eq!(idents("#define F (x)\nF"), ["'('", "x", "')'"]);
    assert_eq!(idents("#define R R\nR"), ["R"]);
    assert_eq!(idents("#define S(x) #x\nS(a)"), ["string literal"]);
    assert_eq!(idents("#define A 1\n#undef A\nA"), ["A"]);
}

#[test]
fn conditionals() {
    let src = "#define X 2\n#if X > 1 && defined(X)\na\n#elif 1\nb\n#else\nc\n#endif\n\
               #ifdef Y\nd\n#elif defined X\ne\n#endif\n#ifndef Y\nf\n#endif\n\
               #if 0\n don't care ' \n#if 1\ng\n#endif\n#else\nh\n#endif";
    assert_eq!(idents(src), ["a", "e", "f", "h"]);
    assert_eq!(idents("#if (1 ? 0 : 1) || -1 < 0\nx\n#endif"), ["x"]);
}

#[test]
fn conditional_errors() {
    assert_eq!(
        pp("#endif").unwrap_err(),
        "t.idl:1:1: error: #endif without #if"
    );
    assert_eq!(
        pp("\n#ifdef A\n").unwrap_err(),
        "t.idl:2:1: error: unterminated #ifdef"
    );
    assert_eq!(
        pp("#if 1\n#else\n#else\n#endif").unwrap_err(),
        "t.idl:3:1: error: #else after #else"
    );
    assert_eq!(
        pp("#if 1/0\n#endif").unwrap_err(),
        "t.idl:1:6: error: division by zero in #if expression"
    );
    assert_eq!(
        pp("#foo").unwrap_err(),
        "t.idl:1:2: error: invalid preprocessing directive #foo"
    );
}

#[test]
fn pragmas() {
    let mut w = Vec::new();
    let toks = pp_with("#pragma prefix \"omg.org\"\n#pragma ID A::B \"IDL:x:1.0\"\n#pragma version C 2.4\n#pragma frobnicate #include \"x\"", &[], &mut w).unwrap();
    assert_eq!(toks[0], Tok::Pragma(PragmaTok::Prefix("omg.org".into())));
    assert_eq!(
        toks[1],
        Tok::Pragma(PragmaTok::Id {
            name: vec!["A".into(), "B".into()],
            absolute: false,
            id: "IDL:x:1.0".into()
        })
    );
    assert_eq!(
        toks[2],
        Tok::Pragma(PragmaTok::Version {
            name: vec!["C".into()],
            absolute: false,
            major: 2,
            minor: 4
        })
    );
    assert_eq!(toks.len(), 3);
    assert_eq!(
        w[0].to_string(),
        "t.idl:4:2: warning: ignoring unknown #pragma frobnicate"
    );
}

#[test]
fn includes_with_guards_and_search_paths() {
    let dir = std::env::temp_dir().join(format!("corbina-idl-pp-{}", std::process::id()));
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("g.idl"), "#ifndef G\n#define G\nguarded\n#endif\n").unwrap();
    std::fs::write(dir.join("local.idl"), "local_one\n").unwrap();
    std::fs::write(
        dir.join("main.idl"),
        "#include \"local.idl\"\n#include <g.idl>\n#include <g.idl>\nend\n",
    )
    .unwrap();
    let mut w = Vec::new();
    let p = Preprocessor::new(std::slice::from_ref(&sub), &[], &mut w).unwrap();
    let toks = p.run_file(&dir.join("main.idl")).unwrap();
    let names: Vec<String> = toks
        .iter()
        .filter_map(|t| match &t.tok {
            Tok::Ident(s) => Some(format!("{s}@{}:{}", t.loc.line, t.loc.main_file)),
            _ => None,
        })
        .collect();
    assert_eq!(
        names,
        ["local_one@1:false", "guarded@3:false", "end@4:true"]
    );
    let missing = Preprocessor::new(&[], &[], &mut w)
        .unwrap()
        .run_str("m.idl", "\n#include <nope.idl>")
        .unwrap_err();
    assert_eq!(
        missing.to_string(),
        "m.idl:2:2: error: cannot find include file \"nope.idl\""
    );
    std::fs::write(dir.join("self.idl"), "#include \"self.idl\"\n").unwrap();
    let rec = Preprocessor::new(&[], &[], &mut w)
        .unwrap()
        .run_file(&dir.join("self.idl"))
        .unwrap_err();
    assert!(rec.to_string().contains("nested too deeply"), "{rec}");
    std::fs::remove_dir_all(&dir).ok();
}
