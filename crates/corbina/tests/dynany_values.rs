//! DynValue and DynValueBox (issue 17): null and non-null values and boxes built from their
//! TypeCodes, inherited members first, round trips through `Any` and CDR in both byte
//! orders, and value graphs a tree cannot hold refused.

use corbina::cdr::value::{ValueInput, ValueOutput, ValueStart, WriteHeader};
use corbina::cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter};
use corbina::dynany::{DynAnyError, DynAnyFactory, NameValuePair};
use corbina::typecode::{TcKind, ValueMember};
use corbina::{Any, TypeCode};

fn shape() -> TypeCode {
    TypeCode::create_value_tc(
        "IDL:Shape:1.0",
        "Shape",
        0,
        None,
        vec![
            ValueMember::new("name", TypeCode::create_string_tc(0), 1),
            ValueMember::new("secret", TypeCode::LONG, 0),
        ],
    )
    .unwrap()
}

/// `valuetype Circle : truncatable Shape { public double radius; };`
fn circle() -> TypeCode {
    TypeCode::create_value_tc(
        "IDL:Circle:1.0",
        "Circle",
        3,
        Some(shape()),
        vec![ValueMember::new("radius", TypeCode::DOUBLE, 1)],
    )
    .unwrap()
}

fn count_box() -> TypeCode {
    TypeCode::create_value_box_tc("IDL:Count:1.0", "Count", TypeCode::LONG).unwrap()
}

/// Through CDR and back, after one octet, in `order`.
fn via_wire(a: &Any, order: ByteOrder) -> Any {
    let mut w = CdrWriter::with_byte_order(order, CdrContext::GIOP_1_2);
    w.write_octet(0);
    a.write(&mut w).unwrap();
    let bytes = w.into_bytes();
    let mut r = CdrReader::new(&bytes, order, CdrContext::GIOP_1_2);
    r.read_octet().unwrap();
    let back = Any::read(&mut r).unwrap();
    r.expect_end().unwrap();
    back
}

#[test]
fn dyn_value_starts_null_and_is_built_member_by_member() {
    let mut d = DynAnyFactory::create_dyn_any_from_type_code(&circle()).unwrap();
    assert_eq!(d.is_null(), Ok(true));
    assert_eq!(d.component_count(), 0);
    assert_eq!(d.get_members().unwrap_err(), DynAnyError::InvalidValue);
    // A null value is a null tag.
    assert_eq!(d.to_any().unwrap().value_bytes(), [0, 0, 0, 0]);

    d.set_to_value().unwrap();
    assert_eq!(d.is_null(), Ok(false));
    assert_eq!(d.component_count(), 3);
    assert_eq!(d.current_member_name().unwrap(), "name");
    d.insert_string("c1").unwrap();
    assert!(d.next());
    assert_eq!(d.current_member_name().unwrap(), "secret");
    assert_eq!(d.current_member_kind().unwrap(), TcKind::Long);
    d.insert_long(7).unwrap();
    assert!(d.next());
    assert_eq!(d.current_member_name().unwrap(), "radius");
    d.insert_double(2.5).unwrap();
    assert!(!d.next());

    let any = d.to_any().unwrap();
    for order in [ByteOrder::Big, ByteOrder::Little] {
        let back = via_wire(&any, order);
        assert_eq!(back, any);
        let e = DynAnyFactory::create_dyn_any(&back).unwrap();
        assert!(e.equal(&d));
        let ms = e.get_members().unwrap();
        let names: Vec<_> = ms.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(names, ["name", "secret", "radius"]);
        assert_eq!(ms[0].value.to_string_value().as_deref(), Some("c1"));
        assert_eq!(ms[1].value.to_long(), Some(7));
        assert_eq!(ms[2].value.to_double(), Some(2.5));
    }

    // On the wire: truncatable, so chunked with the ids [Circle, Shape].
    let bytes = any.value_bytes();
    let mut r = CdrReader::new(bytes, ByteOrder::NATIVE, CdrContext::GIOP_1_2);
    let mut input = ValueInput::new();
    let ValueStart::Value(h) = input.read_value(&mut r).unwrap() else {
        panic!("not a value")
    };
    assert!(h.chunked);
    assert_eq!(
        h.repository_ids.iter().collect::<Vec<_>>(),
        ["IDL:Circle:1.0", "IDL:Shape:1.0"]
    );
    // Read as a Shape, the Circle is truncated.
    let shape_any =
        Any::from_cdr(shape(), bytes, ByteOrder::NATIVE, CdrContext::GIOP_1_2, 0).unwrap();
    let s = DynAnyFactory::create_dyn_any(&shape_any).unwrap();
    assert_eq!(s.get_members().unwrap().len(), 2);

    d.set_to_null().unwrap();
    assert_eq!(d.is_null(), Ok(true));
    assert_eq!(d.to_any().unwrap().value_bytes(), [0, 0, 0, 0]);
}

#[test]
fn dyn_value_set_members() {
    let mut d = DynAnyFactory::create_dyn_any_from_type_code(&shape()).unwrap();
    let members = vec![
        NameValuePair {
            id: "name".into(),
            value: Any::from_string("s").unwrap(),
        },
        NameValuePair {
            id: "secret".into(),
            value: Any::from_long(3),
        },
    ];
    // A null value takes members and is no longer null.
    d.set_members(members.clone()).unwrap();
    assert_eq!(d.is_null(), Ok(false));
    assert_eq!(d.get_members().unwrap(), members);
    assert_eq!(
        d.set_members(members[..1].to_vec()).unwrap_err(),
        DynAnyError::InvalidValue
    );
    let mut wrong = members.clone();
    wrong[1].value = Any::from_double(1.0);
    assert_eq!(d.set_members(wrong).unwrap_err(), DynAnyError::TypeMismatch);
    // Not a value: the DynValueCommon operations do not apply.
    let mut l = DynAnyFactory::create_dyn_any_from_type_code(&TypeCode::LONG.into()).unwrap();
    assert_eq!(l.is_null(), Err(DynAnyError::TypeMismatch));
    assert_eq!(l.set_to_null(), Err(DynAnyError::TypeMismatch));
}

#[test]
fn dyn_value_box() {
    let mut b = DynAnyFactory::create_dyn_any_from_type_code(&count_box()).unwrap();
    assert_eq!(b.is_null(), Ok(true));
    assert_eq!(b.get_boxed_value().unwrap_err(), DynAnyError::InvalidValue);
    assert_eq!(
        b.set_boxed_value(&Any::from_string("x").unwrap()),
        Err(DynAnyError::TypeMismatch)
    );
    b.set_boxed_value(&Any::from_long(5)).unwrap();
    assert_eq!(b.is_null(), Ok(false));
    assert_eq!(b.get_boxed_value().unwrap().to_long(), Some(5));
    let any = b.to_any().unwrap();
    let back = via_wire(&any, ByteOrder::Big);
    let c = DynAnyFactory::create_dyn_any(&back).unwrap();
    assert_eq!(c.get_boxed_value_as_dyn_any().unwrap().get_long(), Ok(5));
    assert!(c.equal(&b));
    b.set_to_null().unwrap();
    let null = via_wire(&b.to_any().unwrap(), ByteOrder::Little);
    assert_eq!(
        DynAnyFactory::create_dyn_any(&null).unwrap().is_null(),
        Ok(true)
    );
    b.set_to_value().unwrap();
    assert_eq!(b.get_boxed_value().unwrap().to_long(), Some(0));
}

#[test]
fn cyclic_value_is_refused_by_dyn_any() {
    // `valuetype Node { long id; Node next; }` whose next is itself.
    let node = TypeCode::create_value_tc(
        "IDL:Node:1.0",
        "Node",
        0,
        None,
        vec![
            ValueMember::new("id", TypeCode::LONG, 1),
            ValueMember::new("next", TypeCode::create_recursive_tc("IDL:Node:1.0"), 1),
        ],
    )
    .unwrap();
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
    let mut out = ValueOutput::new();
    let header = WriteHeader::single("IDL:Node:1.0");
    assert!(out.begin_value(&mut w, 1, &header).unwrap());
    out.begin_member(&mut w).unwrap();
    w.write_long(1);
    assert!(!out.begin_value(&mut w, 1, &header).unwrap());
    out.end_value(&mut w).unwrap();
    let bytes = w.into_bytes();
    // An Any holds it (its indirection stays inside the Any's bytes) ...
    let any = Any::from_cdr(
        node.clone(),
        &bytes,
        ByteOrder::Big,
        CdrContext::GIOP_1_2,
        0,
    )
    .unwrap();
    assert_eq!(via_wire(&any, ByteOrder::Little), any);
    // ... a DynAny tree cannot.
    assert_eq!(
        DynAnyFactory::create_dyn_any(&any).unwrap_err(),
        DynAnyError::InvalidValue
    );
    // A list without a cycle is fine.
    let mut d = DynAnyFactory::create_dyn_any_from_type_code(&node).unwrap();
    d.set_to_value().unwrap();
    d.insert_long(4).unwrap();
    let back =
        DynAnyFactory::create_dyn_any(&via_wire(&d.to_any().unwrap(), ByteOrder::Big)).unwrap();
    let ms = back.get_members().unwrap();
    assert_eq!(ms[0].value.to_long(), Some(4));
    let next = DynAnyFactory::create_dyn_any(&ms[1].value).unwrap();
    assert_eq!(next.is_null(), Ok(true));
}
