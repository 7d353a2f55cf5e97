//! The tricky-IDL corpus parses and its model has the expected shape.

use corbina_idl::model::*;
use corbina_idl::{ConstValue, Frontend};

fn load() -> Specification {
    let mut fe = Frontend::new();
    match fe.parse_file("tests/idl/tricky.idl") {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

fn def<'a>(spec: &'a Specification, name: &str) -> &'a Definition {
    spec.lookup(&ScopedName::parse(name))
        .unwrap_or_else(|| panic!("{name} not found"))
}

fn const_value(spec: &Specification, name: &str) -> ConstValue {
    match &def(spec, name).kind {
        DefinitionKind::Const(c) => c.value.clone(),
        other => panic!("{name} is {other:?}"),
    }
}

#[test]
fn bench_idl_parses() {
    let spec = Frontend::new().parse_file("tests/idl/bench.idl").unwrap();
    let bench = def(&spec, "Bench");
    assert_eq!(bench.repository_id, "IDL:Bench:1.0");
    assert_eq!(def(&spec, "OctetSeq").repository_id, "IDL:OctetSeq:1.0");
    assert_eq!(spec.all_operations(bench).len(), 18);
}

#[test]
fn constants() {
    let s = load();
    assert_eq!(
        const_value(&s, "Outer::Inner::Derived"),
        ConstValue::Integer(24)
    );
    assert_eq!(
        const_value(&s, "Outer::Mask"),
        ConstValue::Integer(0xFFFF_FFFF)
    );
    assert_eq!(const_value(&s, "Outer::Half"), ConstValue::Float(0.5));
    assert_eq!(const_value(&s, "Outer::Letter"), ConstValue::Char(b'z'));
    assert_eq!(const_value(&s, "Outer::WLetter"), ConstValue::WChar('w'));
    assert_eq!(
        const_value(&s, "Outer::Greeting"),
        ConstValue::String("hello, world".into())
    );
    assert_eq!(
        const_value(&s, "Outer::WGreeting"),
        ConstValue::WString("wide".into())
    );
    assert_eq!(const_value(&s, "Outer::Yes"), ConstValue::Boolean(true));
    assert_eq!(const_value(&s, "Outer::Small"), ConstValue::Octet(0x7f));
    assert_eq!(
        const_value(&s, "Outer::Big"),
        ConstValue::Integer(i64::MIN as i128)
    );
    assert_eq!(
        const_value(&s, "Outer::Huge"),
        ConstValue::Integer(u64::MAX as i128)
    );
    let ConstValue::Fixed(f) = const_value(&s, "Outer::Price") else {
        panic!()
    };
    assert_eq!(f.to_string(), "12.5");
    let DefinitionKind::Const(c) = &def(&s, "Outer::Price").kind else {
        panic!()
    };
    assert_eq!(
        c.ty,
        Type::Fixed {
            digits: 3,
            scale: 1
        }
    );
    assert_eq!(
        const_value(&s, "Outer::Favourite"),
        ConstValue::Enum {
            enum_name: ScopedName::parse("Outer::Color"),
            enumerator: "blue".into(),
            index: 2
        }
    );
}

#[test]
fn reopened_modules_and_scopes() {
    let s = load();
    let outers: Vec<_> = s.definitions.iter().filter(|d| d.name == "Outer").collect();
    assert_eq!(outers.len(), 2);
    let DefinitionKind::Alias(a) = &def(&s, "Outer::Position").kind else {
        panic!()
    };
    assert_eq!(
        a.ty,
        Type::Named {
            name: ScopedName::parse("Outer::Inner::Point"),
            kind: NamedKind::Struct
        }
    );
    let DefinitionKind::Alias(a) = &def(&s, "Outer::FwdSeq").kind else {
        panic!()
    };
    assert_eq!(a.ty.to_string(), "sequence<::Outer::Fwd>");
    assert!(matches!(
        def(&s, "Outer::Fwd").kind,
        DefinitionKind::Interface(_)
    ));
    let DefinitionKind::Struct(t) = &def(&s, "Outer::Tree").kind else {
        panic!()
    };
    assert_eq!(t.members[1].ty.to_string(), "sequence<::Outer::Tree>");
}

#[test]
fn unions() {
    let s = load();
    let DefinitionKind::Union(u) = &def(&s, "Outer::ByColor").kind else {
        panic!()
    };
    assert_eq!(u.cases[1].labels.len(), 2);
    let DefinitionKind::Union(u) = &def(&s, "Outer::ByChar").kind else {
        panic!()
    };
    assert_eq!(u.cases[1].labels, vec![CaseLabel::Default]);
    assert_eq!(
        u.cases[0].labels,
        vec![CaseLabel::Value(ConstValue::Char(b'a'))]
    );
    let DefinitionKind::Union(u) = &def(&s, "Outer::ByBool").kind else {
        panic!()
    };
    assert_eq!(s.resolve_alias(&u.discriminator), &Type::Boolean);
    assert_eq!(
        s.resolve_alias(&u.cases[1].member.ty).to_string(),
        "long[2]"
    );
}

#[test]
fn diamond_inheritance() {
    let s = load();
    let bottom = def(&s, "Bottom");
    let ops: Vec<_> = s
        .all_operations(bottom)
        .iter()
        .map(|o| o.item.name.clone())
        .collect();
    assert_eq!(ops, ["top_op", "left_op", "right_op", "bottom_op"]);
    let attrs: Vec<_> = s
        .all_attributes(bottom)
        .iter()
        .map(|a| (a.declared_in.name.clone(), a.item.name.clone()))
        .collect();
    assert_eq!(
        attrs,
        [
            ("Top".to_string(), "top_attr".to_string()),
            ("Right".into(), "name".into())
        ]
    );
}

#[test]
fn keywords_bounded_types_and_ops() {
    let s = load();
    let DefinitionKind::Interface(k) = &def(&s, "Keywords").kind else {
        panic!()
    };
    assert_eq!(k.operations[0].name, "type");
    assert_eq!(k.operations[1].name, "module");
    assert_eq!(k.attributes.len(), 2);
    let alias = |n| match &def(&s, n).kind {
        DefinitionKind::Alias(a) => a.ty.to_string(),
        _ => panic!(),
    };
    assert_eq!(alias("Bounded::Name"), "string<32>");
    assert_eq!(alias("Bounded::WName"), "wstring<8>");
    assert_eq!(alias("Bounded::Blob"), "sequence<octet,1024>");
    assert_eq!(alias("Bounded::Money"), "fixed<9,2>");
    assert_eq!(alias("Bounded::Matrix"), "long[3][4]");
    assert_eq!(alias("Bounded::Nested"), "sequence<sequence<long>>");
    let DefinitionKind::Interface(ops) = &def(&s, "Ops").kind else {
        panic!()
    };
    let compute = &ops.operations[1];
    assert_eq!(compute.raises, vec![ScopedName::parse("Failure")]);
    assert_eq!(compute.contexts, ["user", "lang*"]);
    assert!(ops.operations[0].oneway);
    assert_eq!(ops.operations[5].return_type, Some(Type::LongDouble));
    assert!(matches!(def(&s, "Forward").kind, DefinitionKind::Struct(_)));
    assert!(matches!(def(&s, "Handle").kind, DefinitionKind::Native));
}

#[test]
fn valuetypes() {
    let s = load();
    let DefinitionKind::ValueBox(b) = &def(&s, "Values::Counter").kind else {
        panic!()
    };
    assert_eq!(b.ty, Type::Long);
    let DefinitionKind::ValueType(c) = &def(&s, "Values::Circle").kind else {
        panic!()
    };
    assert!(c.is_truncatable);
    assert_eq!(c.supports, vec![ScopedName::parse("Values::Named")]);
    assert_eq!(c.state_members.len(), 2);
    assert!(!c.state_members[1].public);
    assert_eq!(c.initializers[0].name, "with_radius");
    let DefinitionKind::ValueType(b) = &def(&s, "Values::Blob").kind else {
        panic!()
    };
    assert!(b.is_custom);
}

#[test]
fn repository_ids() {
    let s = load();
    assert_eq!(
        def(&s, "Outer::Inner::Point").repository_id,
        "IDL:corbina.example/Outer/Inner/Point:1.0"
    );
    assert_eq!(
        def(&s, "Typed::S").repository_id,
        "IDL:typed.example/Typed/S:1.0"
    );
    assert_eq!(
        def(&s, "Typed::Versioned").repository_id,
        "IDL:typed.example/Typed/Versioned:2.3"
    );
    assert_eq!(def(&s, "Typed::Explicit").repository_id, "LOCAL:explicit");
    assert_eq!(
        def(&s, "Typed::WithTypeId").repository_id,
        "IDL:custom/Id:9.9"
    );
    assert!(def(&s, "Bottom").from_main_file);
}
