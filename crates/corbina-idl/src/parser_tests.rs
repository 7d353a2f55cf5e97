use super::*;
use crate::preprocess::Preprocessor;

fn parse(src: &str) -> Result<Vec<Def>, String> {
    with_big_stack(|| parse_here(src))
}

fn parse_here(src: &str) -> Result<Vec<Def>, String> {
    let mut w = Vec::new();
    let toks = Preprocessor::new(&[], &[], &mut w)
        .unwrap()
        .run_str("p.idl", src)
        .map_err(|e| e.to_string())?;
    Parser::new(toks, &mut w)
        .parse_specification()
        .map_err(|e| e.to_string())
}

fn name_of(d: &Def) -> &str {
    match d {
        Def::Module { name, .. }
        | Def::Interface { name, .. }
        | Def::InterfaceForward { name, .. }
        | Def::Struct { name, .. }
        | Def::Union { name, .. }
        | Def::Enum { name, .. }
        | Def::Exception { name, .. }
        | Def::Const { name, .. }
        | Def::Native { name }
        | Def::ValueType { name, .. }
        | Def::ValueBox { name, .. }
        | Def::Operation { name, .. } => &name.name,
        _ => "",
    }
}

#[test]
fn modules_interfaces_operations() {
    let defs = parse(
        "module M { interface A; abstract interface B {}; local interface C : A, ::M::B {
            oneway void f(in long a);
            string g(out short b, inout any c) raises (E) context (\"x\", \"y*\");
            readonly attribute long r raises (E);
            attribute long a1, a2;
            attribute string s getraises (E) setraises (E, F);
         }; };",
    )
    .unwrap();
    let Def::Module { defs, .. } = &defs[0] else {
        panic!()
    };
    assert_eq!(
        defs.iter().map(name_of).collect::<Vec<_>>(),
        ["A", "B", "C"]
    );
    let Def::Interface {
        bases, body, flags, ..
    } = &defs[2]
    else {
        panic!()
    };
    assert!(flags.is_local);
    assert_eq!(bases[1].to_string(), "::M::B");
    assert_eq!(body.len(), 5);
    let Def::Operation {
        contexts, params, ..
    } = &body[1]
    else {
        panic!()
    };
    assert_eq!(contexts, &["x", "y*"]);
    assert_eq!(params[1].dir, ParamDir::InOut);
    let Def::Attribute { names, .. } = &body[3] else {
        panic!()
    };
    assert_eq!(names.len(), 2);
}

#[test]
fn types_and_unions() {
    let defs = parse(
        "typedef sequence<sequence<long, 4>> S; typedef long A[2][3], B;
         typedef fixed<9,2> F; typedef string<10> Str; typedef unsigned long long U;
         union Un switch (enum E { a, b }) { case a: case b: long x; default: @key short y; };
         struct Fw; union UF; struct T { struct Inner { long z; } i; };",
    )
    .unwrap();
    assert_eq!(defs.len(), 9);
    let Def::Typedef {
        ty: TypeSpec::Sequence(inner, None),
        ..
    } = &defs[0]
    else {
        panic!("{:?}", defs[0])
    };
    assert!(matches!(**inner, TypeSpec::Sequence(_, Some(_))));
    let Def::Typedef { declarators, .. } = &defs[1] else {
        panic!()
    };
    assert_eq!(declarators[0].dims.len(), 2);
    let Def::Union { cases, switch, .. } = &defs[5] else {
        panic!()
    };
    assert!(matches!(switch, TypeSpec::Constructed(_)));
    assert_eq!(cases[0].labels.len(), 2);
    assert!(matches!(defs[6], Def::StructForward { .. }));
}

#[test]
fn valuetypes() {
    let defs = parse(
        "valuetype Box long; valuetype Fwd; abstract valuetype AV { void f(); };
         custom valuetype CV : truncatable Base, AV supports I { public long a; private string b, c;
           factory create(in long a) raises (E); };
         eventtype Ev { public long x; };",
    )
    .unwrap();
    assert!(matches!(defs[0], Def::ValueBox { .. }));
    assert!(matches!(defs[1], Def::ValueForward { .. }));
    let Def::ValueType { header, body, .. } = &defs[3] else {
        panic!()
    };
    assert!(header.is_custom && header.truncatable.is_some());
    assert_eq!(header.supports.len(), 1);
    assert!(matches!(body[2], Def::Initializer { .. }));
    let Def::ValueType { header, .. } = &defs[4] else {
        panic!()
    };
    assert!(header.is_event);
}

#[test]
fn expressions_and_escapes() {
    let defs =
        parse("const long _interface = (1 + 2) * -3 >> 1 | ~4; const string s = \"a\" \"b\";")
            .unwrap();
    assert_eq!(name_of(&defs[0]), "interface");
    let Def::Const { expr, .. } = &defs[1] else {
        panic!()
    };
    assert_eq!(expr.kind, ExprKind::Lit(Literal::Str("ab".into())));
}

#[test]
fn syntax_errors() {
    assert_eq!(
        parse("struct S { long a }").unwrap_err(),
        "p.idl:1:19: error: expected ';', found '}'"
    );
    assert_eq!(
        parse("interface module {};").unwrap_err(),
        "p.idl:1:11: error: expected identifier, found keyword 'module'"
    );
    assert_eq!(
        parse("component C {};").unwrap_err(),
        "p.idl:1:1: error: 'component' declarations are not supported"
    );
    assert_eq!(
        parse("module M {").unwrap_err(),
        "p.idl:1:11: error: expected '}', found end of file"
    );
}

#[test]
fn deep_nesting_is_capped() {
    let deep = "module M { ".repeat(300) + &"};".repeat(300);
    assert!(parse(&deep).unwrap_err().contains("nesting too deep"));
    let expr = format!("const long x = {}1{};", "(".repeat(1000), ")".repeat(1000));
    assert!(parse(&expr).unwrap_err().contains("nesting too deep"));
    let neg = format!("const long x = {}1;", "-".repeat(5000));
    assert!(parse(&neg).unwrap_err().contains("nesting too deep"));
}

#[test]
fn annotations_are_skipped_with_warning() {
    let mut w = Vec::new();
    let toks = Preprocessor::new(&[], &[], &mut w)
        .unwrap()
        .run_str(
            "a.idl",
            "@topic struct S { @key @range(min=1, max=(2)) long id; };",
        )
        .unwrap();
    let defs = Parser::new(toks, &mut w).parse_specification().unwrap();
    assert_eq!(defs.len(), 1);
    assert_eq!(w.len(), 3);
    assert_eq!(
        w[0].to_string(),
        "a.idl:1:1: warning: ignoring annotation @topic"
    );
}

fn all_errors(src: &str) -> Vec<String> {
    let src = src.to_owned();
    with_big_stack(move || {
        let mut w = Vec::new();
        let toks = Preprocessor::new(&[], &[], &mut w)
            .unwrap()
            .run_str("p.idl", &src)
            .unwrap();
        match Parser::new(toks, &mut w).parse_specification_all() {
            Ok(_) => Vec::new(),
            Err(d) => {
                d.0.iter()
                    .map(|d| format!("{}:{} {}", d.line, d.col, d.message))
                    .collect()
            }
        }
    })
}

#[test]
fn recovery_reports_each_broken_definition_once() {
    let errs = all_errors(
        "struct A { long x }; struct B { long y; };\nenum E { a b };\nconst long C = 1;",
    );
    assert_eq!(
        errs,
        [
            "1:19 expected ';', found '}'",
            "2:12 expected '}', found 'b'"
        ]
    );
    // Inside a module, the module's own closing brace is not taken for the broken one's.
    let errs = all_errors("module M {\n  struct S { long x\n  };\n  const long y = ;\n};\n");
    assert_eq!(errs.len(), 2, "{errs:?}");
}

#[test]
fn recovery_stops_after_twenty_errors_and_at_the_nesting_limit() {
    let many = "struct A { long x };\n".repeat(10_000);
    assert_eq!(all_errors(&many).len(), MAX_ERRORS);
    let deep = "module M {".repeat(MAX_NESTING as usize + 10) + " x ";
    let errs = all_errors(&deep);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].contains("nesting too deep"), "{errs:?}");
    // Stray closing braces and garbage at the top level: every token is consumed once.
    assert!(!all_errors(&"} ; { ) ] ".repeat(1000)).is_empty());
}
