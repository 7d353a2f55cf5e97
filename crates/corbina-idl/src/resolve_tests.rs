use crate::model::{DefinitionKind, ScopedName};
use crate::Frontend;

fn ok(src: &str) -> crate::Specification {
    Frontend::new()
        .parse_str("r.idl", src)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn err(src: &str) -> String {
    Frontend::new()
        .parse_str("r.idl", src)
        .unwrap_err()
        .to_string()
}

fn id(spec: &crate::Specification, n: &str) -> String {
    spec.lookup(&ScopedName::parse(n))
        .unwrap()
        .repository_id
        .clone()
}

#[test]
fn lexical_scope_walks_outward_and_absolute_names() {
    let s = ok(
        "typedef long T; module A { typedef short T; module B { struct S { T a; ::T b; }; }; };",
    );
    let DefinitionKind::Struct(st) = &s.lookup(&ScopedName::parse("A::B::S")).unwrap().kind else {
        panic!()
    };
    assert_eq!(st.members[0].ty.to_string(), "::A::T");
    assert_eq!(st.members[1].ty.to_string(), "::T");
}

#[test]
fn inherited_names_and_ambiguity() {
    ok("interface A { typedef long T; }; interface B : A { void f(in T value); };");
    ok("interface A { typedef long T; }; interface B : A {}; interface C : A {}; interface D : B, C { void f(in T value); };");
    assert!(err("interface A { typedef long T; }; interface B { typedef long T; }; interface C : A, B { void f(in T value); };")
        .contains("ambiguous name 'T'"));
    assert!(
        err("interface A { void f(); }; interface B { void f(); }; interface C : A, B {};")
            .contains("inherits 'f' from both")
    );
}

#[test]
fn forward_declarations() {
    ok("interface I; interface I; interface I {}; interface I;");
    ok("struct S; typedef sequence<S> SSeq; struct S { SSeq kids; };");
    ok("interface Never;"); // never defined is fine
    assert!(err("interface I; local interface I {};").contains("does not match"));
    assert!(err("struct S { long a; }; struct S { long b; };").contains("redefinition of 'S'"));
    assert!(err("module M {}; interface M {};").contains("redefinition of 'M'"));
}

#[test]
fn names_must_be_declared_before_use() {
    assert_eq!(
        err("typedef Later X; typedef long Later;"),
        "r.idl:1:9: error: 'Later' is not defined"
    );
}

#[test]
fn prefix_pragma_scoping() {
    // The example from the CORBA spec (section on RepositoryIds).
    let s = ok("module M1 { typedef long T1; typedef long T2;\n#pragma ID T2 \"DCE:d62207a2-011e-11ce-88b4-0800090b5d3e:3\"\n };\n\
                #pragma prefix \"P1\"\n\
                module M2 { module M3 {\n#pragma prefix \"P2\"\n typedef long T3; }; typedef long T4;\n#pragma version T4 2.4\n };");
    assert_eq!(id(&s, "M1::T1"), "IDL:M1/T1:1.0");
    assert_eq!(
        id(&s, "M1::T2"),
        "DCE:d62207a2-011e-11ce-88b4-0800090b5d3e:3"
    );
    assert_eq!(id(&s, "M2"), "IDL:P1/M2:1.0");
    assert_eq!(id(&s, "M2::M3"), "IDL:P1/M2/M3:1.0");
    assert_eq!(id(&s, "M2::M3::T3"), "IDL:P2/T3:1.0");
    assert_eq!(id(&s, "M2::T4"), "IDL:P1/M2/T4:2.4");
}

#[test]
fn prefix_resets_in_and_after_included_files() {
    let dir = std::env::temp_dir().join(format!("corbina-idl-rid-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("inc.idl"),
        "interface Inc {};\n#pragma prefix \"inner.org\"\ninterface Inc2 {};\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("main.idl"),
        "#pragma prefix \"outer.org\"\n#include \"inc.idl\"\ninterface Main {};\n",
    )
    .unwrap();
    let s = Frontend::new().parse_file(dir.join("main.idl")).unwrap();
    assert_eq!(id(&s, "Inc"), "IDL:Inc:1.0");
    assert_eq!(id(&s, "Inc2"), "IDL:inner.org/Inc2:1.0");
    assert_eq!(id(&s, "Main"), "IDL:outer.org/Main:1.0");
    assert!(!s.lookup(&ScopedName::parse("Inc")).unwrap().from_main_file);
    assert!(s.lookup(&ScopedName::parse("Main")).unwrap().from_main_file);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn typecode_is_built_in() {
    let s = ok("module CORBA { struct S { TypeCode t; }; }; struct U { CORBA::TypeCode t; };");
    let DefinitionKind::Struct(t) = &s.lookup(&ScopedName::parse("U")).unwrap().kind else {
        panic!()
    };
    assert_eq!(t.members[0].ty, crate::Type::TypeCode);
}

#[test]
fn inline_types_are_scoped_in_their_struct() {
    let s = ok("struct Outer { struct Inner { long x; } i; enum E { a, b } kind; }; const Outer::E C = Outer::b;");
    assert!(s.lookup(&ScopedName::parse("Outer::Inner")).is_some());
    assert!(s.lookup(&ScopedName::parse("Outer::E")).is_some());
}

#[test]
fn typedef_of_an_interface_as_a_base_is_that_interface() {
    let s = ok("interface A { void ping(); }; typedef A AA; typedef AA AAA; interface B : AAA { void pong(); };");
    let DefinitionKind::Interface(b) = &s.lookup(&ScopedName::parse("B")).unwrap().kind else {
        panic!()
    };
    assert_eq!(b.bases, vec![ScopedName::parse("A")]);
    assert_eq!(
        err("struct S { long x; }; typedef S SS; interface B : SS {};"),
        "r.idl:1:51: error: 'SS' is not an interface"
    );
}

#[test]
fn orb_idl_ir_idl_and_iop_idl_are_built_in() {
    let s = ok(
        "#include <orb.idl>\n#include <IOP.idl>\n#include <orb.idl>\n\
                interface Q { CORBA::InterfaceDef def(); void f(in CORBA::Environment e); };\n\
                const CORBA::ServiceOption opt = 1;\n\
                struct T { IOP::TaggedComponent c; CORBA::PolicyList p; };",
    );
    for (name, want) in [
        ("CORBA::InterfaceDef", "IDL:omg.org/CORBA/InterfaceDef:1.0"),
        ("CORBA::Environment", "IDL:omg.org/CORBA/Environment:1.0"),
        (
            "CORBA::ServiceOption",
            "IDL:omg.org/CORBA/ServiceOption:1.0",
        ),
        (
            "IOP::TaggedComponent",
            "IDL:omg.org/IOP/TaggedComponent:1.0",
        ),
        ("IOP::Codec", "IDL:omg.org/IOP/Codec:1.0"),
    ] {
        assert_eq!(id(&s, name), want);
    }
    let d = s.lookup(&ScopedName::parse("CORBA::InterfaceDef")).unwrap();
    assert!(!d.from_main_file);
    assert!(
        d.loc.file.starts_with(crate::builtin::PREFIX),
        "{}",
        d.loc.file
    );
}

#[test]
fn a_file_on_the_include_path_shadows_a_built_in_one() {
    let dir = std::env::temp_dir().join(format!("corbina-idl-builtin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("orb.idl"),
        "module CORBA { typedef long Mine; };\n",
    )
    .unwrap();
    let s = Frontend::new()
        .include_dir(&dir)
        .parse_str("r.idl", "#include <orb.idl>\ntypedef CORBA::Mine M;")
        .unwrap();
    assert!(s
        .lookup(&ScopedName::parse("CORBA::InterfaceDef"))
        .is_none());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn names_introduced_into_a_scope() {
    // CORBA 3.0 §3.15.3, the examples of PolyORB's idl15021..idl15034.
    assert!(err("module M { typedef short M; };")
        .contains("'M' clashes with the name of its enclosing scope 'M'"));
    assert!(err("interface I { void i(in short j); };").contains("enclosing scope 'I'"));
    ok("interface I { void a(in short a); };"); // a parameter is in the operation's scope
                                                // A member named like its struct redefines the struct's name in its scope (omniidl
                                                // refuses the OMG's Security.idl for it too); relaxed names make it a warning.
    assert!(err("struct Right { string right; };")
        .contains("'right' clashes with the name of its enclosing scope 'Right'"));
    let mut fe = Frontend::new();
    fe.relaxed_names(true)
        .parse_str("r.idl", "struct Right { string right; };")
        .unwrap();
    assert!(fe.warnings()[0].message.contains("enclosing scope 'Right'"));
    // A use introduces the first identifier of a relative name.
    assert!(err("module M { module Inner1 { typedef string S1; }; \
         module Inner2 { typedef Inner1::S1 S2; typedef string inner1; }; };")
    .contains("'inner1' clashes with 'Inner1', which its use at"));
    ok("module M { module Inner1 { typedef string S1; }; module Inner2 { typedef string inner1; }; };");
    assert!(err("typedef long Color; struct S { Color color; };")
        .contains("'color' clashes with 'Color'"));
    // Through structs nested in an interface, up to the interface...
    assert!(err("module M { typedef long ArgType; const long I = 10; \
         interface A { struct S { struct T { ArgType x[I]; } m; }; typedef string ArgType; }; };")
    .contains("'ArgType' clashes with 'ArgType'"));
    assert!(err("module M { const long I = 10; \
         interface A { struct S { struct T { long x[I]; } m; }; enum I { I1, I2 }; }; };")
    .contains("'I' clashes with 'I'"));
    // ... but not beyond a module, nor into a derived interface or a sibling struct.
    ok(
        "typedef long ArgType; module M { struct S { ArgType x; }; typedef string ArgType; \
        struct T { ArgType y; }; };",
    );
    ok("module M { typedef long ArgType; const long I = 10; \
        interface A { struct S { struct T { ArgType x[I]; } m; }; struct U { long i; }; }; \
        interface B : A { typedef long ArgType; struct S { ArgType x; A::S y; }; }; };");
    // Absolute names and names declared in the scope itself introduce nothing.
    ok(
        "typedef short TempType; module M { typedef string ArgType; \
        struct S { ::M::ArgType a1; M::ArgType a2; ::TempType temp; }; };",
    );
    ok("struct E; typedef sequence<E> ESeq; struct E { double d; ESeq inner; };");
}

#[test]
fn relaxed_names_turn_scope_clashes_into_warnings() {
    let src = "enum Mode { A, B }; struct S { Mode mode; }; interface Echo { void echo(); };";
    assert!(err(src).contains("relax the check with --relaxed-names"));
    let mut fe = Frontend::new();
    fe.relaxed_names(true);
    let spec = fe.parse_str("r.idl", src).unwrap_or_else(|e| panic!("{e}"));
    assert!(spec.lookup(&ScopedName::parse("Echo")).is_some());
    let warnings: Vec<String> = fe.warnings().iter().map(|w| w.to_string()).collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].starts_with("r.idl:1:37: warning: 'mode' clashes with 'Mode'"),
        "{warnings:?}"
    );
    assert!(warnings[1].contains("'echo' clashes with the name of its enclosing scope 'Echo'"));
}

#[test]
fn keyword_like_identifiers() {
    // CORBA 3.0 §3.2.4: refused when declared, unless relaxed...
    let src = "typedef Object Factory; typedef sequence<Factory> Factories;";
    assert_eq!(
        err(src),
        "r.idl:1:16: error: identifier 'Factory' collides with keyword 'factory' (differs only in case)"
    );
    let mut fe = Frontend::new();
    fe.relaxed_names(true).parse_str("r.idl", src).unwrap();
    assert_eq!(fe.warnings().len(), 2, "{:?}", fe.warnings());
    // ... or a keyword CORBA 3 added (Security.idl's EventType); a use of a name declared
    // escaped (`_ValueType`, as in CosQueryCollection.idl) only warns.
    let mut fe = Frontend::new();
    fe.parse_str("r.idl", "typedef long EventType;").unwrap();
    assert_eq!(fe.warnings().len(), 1);
    let mut fe = Frontend::new();
    fe.parse_str(
        "r.idl",
        "enum _ValueType { TypeLong }; union V switch (ValueType) { case TypeLong: long l; };",
    )
    .unwrap();
    assert!(fe.warnings()[0]
        .message
        .contains("'ValueType' collides with keyword"));
}

/// A union over `switch (T)` with `n` distinct labels (from `first`) and a default.
fn union_with_default(t: &str, n: u32, label: impl Fn(u32) -> String) -> String {
    let cases: String = (0..n)
        .map(|i| format!("case {}: long m{i}; ", label(i)))
        .collect();
    format!("union U switch ({t}) {{ {cases}default: long other; }};")
}

#[test]
fn a_default_label_needs_an_uncovered_value() {
    let chr = |i: u32| format!("'\\x{i:02x}'");
    for (t, n, label) in [
        ("char", 256, &chr as &dyn Fn(u32) -> String),
        ("octet", 256, &|i: u32| i.to_string()),
    ] {
        ok(&union_with_default(t, n - 1, label));
        assert!(
            err(&union_with_default(t, n, label)).contains(&format!(
                "cannot have a default label: its case labels already cover every value of '{t}'"
            )),
            "{t}"
        );
    }
    // Through a typedef of the enum, and with an enum defined in the switch.
    assert!(err("enum E { a, b }; typedef E EE; \
                 union U switch (EE) { case a: long x; case b: long y; default: long z; };")
    .contains("every value of '::EE'"));
    assert!(err(
        "union U switch (enum E { a, b }) { case a: long x; case b: long y; default: long z; };"
    )
    .contains("cannot have a default label"));
    ok("union U switch (enum E { a, b, c }) { case a: long x; case b: long y; default: long z; };");
}

#[test]
fn a_version_and_an_explicit_id_agree_in_either_order() {
    ok("struct S { long x; };\n#pragma version S 2.1\n#pragma ID S \"IDL:S:2.1\"\n");
    assert_eq!(
        err("struct S { long x; };\n#pragma version S 2.1\n#pragma ID S \"IDL:S:1.0\"\n"),
        "r.idl:3:2: error: repository id \"IDL:S:1.0\" of '::S' does not match its version 2.1 set by #pragma version"
    );
    assert!(
        err("struct S { long x; };\n#pragma ID S \"LOCAL:S\"\n#pragma version S 1.0\n")
            .contains("cannot set the version of '::S' to 1.0")
    );
}

#[test]
fn types_defined_in_a_state_member_belong_to_the_valuetype() {
    let s = ok("valuetype W { public struct S { long x; } m; private S copy; };");
    let w = s.lookup(&ScopedName::parse("W")).unwrap();
    let DefinitionKind::ValueType(v) = &w.kind else {
        panic!()
    };
    assert_eq!(v.definitions.len(), 1);
    assert_eq!(v.definitions[0].scoped_name, ScopedName::parse("W::S"));
    assert_eq!(v.definitions[0].repository_id, "IDL:W/S:1.0");
    let types: Vec<String> = v.state_members.iter().map(|m| m.ty.to_string()).collect();
    assert_eq!(types, ["::W::S", "::W::S"]);
}

#[test]
fn local_types_in_valuetypes_and_local_interfaces() {
    // A valuetype's operations and a local interface may use local types (CORBA 3.0 §3.8.7).
    ok("local interface L {}; typedef sequence<L> Ls; \
        valuetype V { Ls all(); void put(in L target); }; local interface K { Ls all(); };");
    // An abstract interface is unconstrained.
    assert!(
        err("local interface L {}; abstract interface A { void put(in L target); };")
            .contains("of unconstrained interface 'A' has local type '::L'")
    );
    // An attribute of an unconstrained interface may not raise a local exception.
    assert_eq!(
        err("local interface L {}; exception E { L target; };\n\
             interface I { attribute long a getraises (E); };"),
        "r.idl:2:43: error: exception '::E' raised by attribute 'a' of unconstrained interface 'I' has local type '::E'"
    );
    // A union with a local member is local.
    assert!(err(
        "local interface L {}; union U switch (long) { case 1: L target; }; \
             interface I { void put(in U value); };"
    )
    .contains("has local type '::U'"));
}
