//! DynAny: building and taking apart structs, sequences, arrays, unions, enums and fixed
//! values, and their round trips through `Any` and CDR.

use corbina::cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter};
use corbina::dynany::{DynAny, DynAnyError, DynAnyFactory, NameValuePair};
use corbina::typecode::{StructMember, TcKind, UnionLabel, UnionMember};
use corbina::{Any, Fixed, TypeCode};

fn color() -> TypeCode {
    TypeCode::create_enum_tc("IDL:Color:1.0", "Color", &["RED", "GREEN", "BLUE"]).unwrap()
}

fn point() -> TypeCode {
    TypeCode::create_struct_tc(
        "IDL:Point:1.0",
        "Point",
        vec![
            StructMember::new("x", TypeCode::LONG),
            StructMember::new("name", TypeCode::create_string_tc(4)),
            StructMember::new("c", color()),
        ],
    )
    .unwrap()
}

/// Through CDR and back, in the other byte order.
fn via_wire(a: &Any) -> Any {
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
    w.write_octet(0);
    a.write(&mut w).unwrap();
    let b = w.into_bytes();
    let mut r = CdrReader::new(&b, ByteOrder::Big, CdrContext::GIOP_1_2);
    r.read_octet().unwrap();
    Any::read(&mut r).unwrap()
}

#[test]
fn struct_built_and_taken_apart() {
    let mut d = DynAnyFactory::create_dyn_any_from_type_code(&point()).unwrap();
    assert_eq!(d.component_count(), 3);
    assert_eq!(d.current_member_name().unwrap(), "x");
    assert_eq!(d.current_member_kind().unwrap(), TcKind::Long);
    d.insert_long(-7).unwrap();
    assert_eq!(d.insert_string("x"), Err(DynAnyError::TypeMismatch));
    assert!(d.next());
    assert_eq!(d.insert_string("toolong"), Err(DynAnyError::InvalidValue));
    d.insert_string("abc").unwrap();
    assert!(d.next());
    d.current_component()
        .unwrap()
        .unwrap()
        .set_as_string("BLUE")
        .unwrap();
    assert!(!d.next());
    assert_eq!(d.insert_long(1), Err(DynAnyError::InvalidValue));
    d.rewind();
    assert_eq!(d.get_long().unwrap(), -7);

    let any = d.to_any().unwrap();
    let any = via_wire(&any);
    let back = DynAnyFactory::create_dyn_any(&any).unwrap();
    assert!(back.equal(&d));
    let members = back.get_members().unwrap();
    let names: Vec<_> = members.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(names, ["x", "name", "c"]);
    assert_eq!(members[0].value.to_long(), Some(-7));
    assert_eq!(members[1].value.to_string_value().as_deref(), Some("abc"));
    let c = DynAnyFactory::create_dyn_any(&members[2].value).unwrap();
    assert_eq!(c.get_as_ulong().unwrap(), 2);

    // set_members checks names, types and count.
    let mut e = DynAnyFactory::create_dyn_any_from_type_code(&point()).unwrap();
    assert_eq!(
        e.set_members(members[..2].to_vec()),
        Err(DynAnyError::InvalidValue)
    );
    let mut wrong = members.clone();
    wrong[0] = NameValuePair {
        id: "x".into(),
        value: Any::from_short(1),
    };
    assert_eq!(e.set_members(wrong), Err(DynAnyError::TypeMismatch));
    e.set_members(members).unwrap();
    assert_eq!(e, back);
    let mut f = DynAnyFactory::create_dyn_any_from_type_code(&point()).unwrap();
    f.assign(&e).unwrap();
    assert!(f.equal(&e));
    f.from_any(&any).unwrap();
    assert_eq!(
        f.from_any(&Any::from_long(1)),
        Err(DynAnyError::TypeMismatch)
    );
    assert_eq!(f.copy(), e);
}

#[test]
fn sequences_and_arrays() {
    let seq_tc = TypeCode::create_sequence_tc(3, point());
    let mut s = DynAnyFactory::create_dyn_any_from_type_code(&seq_tc).unwrap();
    assert_eq!(s.get_length().unwrap(), 0);
    assert!(s.current_component().unwrap().is_none());
    s.set_length(2).unwrap();
    assert_eq!(s.set_length(4), Err(DynAnyError::InvalidValue));
    let p = s.current_component().unwrap().unwrap();
    p.insert_long(1).unwrap();
    assert!(s.next());
    let p = s.current_component().unwrap().unwrap();
    p.seek(1);
    p.insert_string("two").unwrap();
    let any = via_wire(&s.to_any().unwrap());
    let back = DynAnyFactory::create_dyn_any(&any).unwrap();
    let elems = back.get_elements_as_dyn_any().unwrap();
    assert_eq!(elems.len(), 2);
    assert_eq!(elems[0].get_members().unwrap()[0].value.to_long(), Some(1));
    assert_eq!(
        elems[1].get_members().unwrap()[1]
            .value
            .to_string_value()
            .as_deref(),
        Some("two")
    );
    // set_elements: types and bound checked.
    let mut t = DynAnyFactory::create_dyn_any_from_type_code(&seq_tc).unwrap();
    assert_eq!(
        t.set_elements(vec![Any::from_long(1)]),
        Err(DynAnyError::TypeMismatch)
    );
    let es = back.get_elements().unwrap();
    t.set_elements(es.clone()).unwrap();
    assert_eq!(t, back);
    let four = [es.clone(), es].concat();
    assert_eq!(t.set_elements(four), Err(DynAnyError::InvalidValue));
    t.set_length(1).unwrap();
    assert_eq!(t.get_length().unwrap(), 1);

    // A sequence of octets, element by element, is the same CDR as the bytes.
    let octs = TypeCode::create_sequence_tc(0, TypeCode::OCTET);
    let mut o = DynAnyFactory::create_dyn_any_from_type_code(&octs).unwrap();
    o.set_length(3).unwrap();
    for (i, v) in [7u8, 8, 9].into_iter().enumerate() {
        o.seek(i as i32);
        o.insert_octet(v).unwrap();
    }
    let want = Any::insert_as(octs, &vec![7u8, 8, 9]).unwrap();
    assert_eq!(o.to_any().unwrap(), want);

    // Arrays have a fixed length.
    let arr = TypeCode::create_array_tc(3, TypeCode::DOUBLE).unwrap();
    let mut a = DynAnyFactory::create_dyn_any_from_type_code(&arr).unwrap();
    assert_eq!(a.get_length().unwrap(), 3);
    assert_eq!(a.set_length(2), Err(DynAnyError::TypeMismatch));
    assert_eq!(
        a.set_elements(vec![Any::from_double(1.0)]),
        Err(DynAnyError::InvalidValue)
    );
    a.set_elements(vec![
        Any::from_double(1.0),
        Any::from_double(2.0),
        Any::from_double(3.5),
    ])
    .unwrap();
    let back = DynAnyFactory::create_dyn_any(&via_wire(&a.to_any().unwrap())).unwrap();
    back.clone().seek(2);
    let mut b = back.clone();
    b.seek(2);
    assert_eq!(b.get_double().unwrap(), 3.5);
}

fn shape() -> TypeCode {
    TypeCode::create_union_tc(
        "IDL:Shape:1.0",
        "Shape",
        TypeCode::LONG,
        vec![
            UnionMember::new("radius", UnionLabel::Value(1), TypeCode::DOUBLE),
            UnionMember::new("side", UnionLabel::Value(2), TypeCode::LONG),
            UnionMember::new("side", UnionLabel::Value(3), TypeCode::LONG),
            UnionMember::new("label", UnionLabel::Default, TypeCode::create_string_tc(0)),
        ],
    )
    .unwrap()
}

#[test]
fn unions() {
    let mut u = DynAnyFactory::create_dyn_any_from_type_code(&shape()).unwrap();
    // The first label selects the first member, at its default.
    assert_eq!(u.get_discriminator().unwrap().get_long().unwrap(), 1);
    assert_eq!(u.member_name().unwrap(), "radius");
    assert_eq!(u.member_kind().unwrap(), TcKind::Double);
    assert_eq!(u.discriminator_kind().unwrap(), TcKind::Long);
    assert_eq!(u.component_count(), 2);
    u.member().unwrap().insert_double(2.5).unwrap();
    let back = DynAnyFactory::create_dyn_any(&via_wire(&u.to_any().unwrap())).unwrap();
    assert_eq!(back, u);

    // A discriminator selecting another member resets the member; another label of the
    // same member keeps its value.
    let mut d = u.get_discriminator().unwrap();
    d.insert_long(3).unwrap();
    u.set_discriminator(&d).unwrap();
    assert_eq!(u.member_name().unwrap(), "side");
    u.member().unwrap().insert_long(9).unwrap();
    d.insert_long(2).unwrap();
    u.set_discriminator(&d).unwrap();
    assert_eq!(u.member().unwrap().get_long().unwrap(), 9);
    let any = u.to_any().unwrap();
    let mut r = any.value_reader();
    assert_eq!((r.read_long().unwrap(), r.read_long().unwrap()), (2, 9));

    // The default member, chosen by an unused discriminator value.
    u.set_to_default_member().unwrap();
    assert_eq!(u.member_name().unwrap(), "label");
    u.member().unwrap().insert_string("sq").unwrap();
    let disc = u.get_discriminator().unwrap().get_long().unwrap();
    assert!(![1, 2, 3].contains(&disc));
    let back = DynAnyFactory::create_dyn_any(&via_wire(&u.to_any().unwrap())).unwrap();
    assert_eq!(back.clone().member().unwrap().get_string().unwrap(), "sq");
    // With a default case there is no "no active member".
    assert_eq!(u.set_to_no_active_member(), Err(DynAnyError::TypeMismatch));
    assert!(!u.has_no_active_member().unwrap());

    // A union without default over an enum: no active member is possible.
    let by_color = TypeCode::create_union_tc(
        "IDL:ByColor:1.0",
        "ByColor",
        color(),
        vec![UnionMember::new("r", UnionLabel::Value(0), TypeCode::SHORT)],
    )
    .unwrap();
    let mut v = DynAnyFactory::create_dyn_any_from_type_code(&by_color).unwrap();
    assert_eq!(v.set_to_default_member(), Err(DynAnyError::TypeMismatch));
    v.set_to_no_active_member().unwrap();
    assert!(v.has_no_active_member().unwrap());
    assert_eq!(v.component_count(), 1);
    assert_eq!(v.member().unwrap_err(), DynAnyError::InvalidValue);
    let back = DynAnyFactory::create_dyn_any(&via_wire(&v.to_any().unwrap())).unwrap();
    assert!(back.has_no_active_member().unwrap());
    assert_eq!(
        back.get_discriminator().unwrap().get_as_string().unwrap(),
        "GREEN"
    );
    // A discriminator of the wrong type.
    let wrong = DynAnyFactory::create_dyn_any(&Any::from_long(0)).unwrap();
    assert_eq!(v.set_discriminator(&wrong), Err(DynAnyError::TypeMismatch));
}

#[test]
fn enums_and_fixed() {
    let mut e = DynAnyFactory::create_dyn_any_from_type_code(&color()).unwrap();
    assert_eq!(e.get_as_string().unwrap(), "RED");
    e.set_as_string("GREEN").unwrap();
    assert_eq!(e.get_as_ulong().unwrap(), 1);
    assert_eq!(e.set_as_string("PINK"), Err(DynAnyError::InvalidValue));
    assert_eq!(e.set_as_ulong(3), Err(DynAnyError::InvalidValue));
    e.set_as_ulong(2).unwrap();
    let any = via_wire(&e.to_any().unwrap());
    assert_eq!(any.value_reader().read_ulong().unwrap(), 2);
    assert_eq!(
        DynAnyFactory::create_dyn_any(&any)
            .unwrap()
            .get_as_string()
            .unwrap(),
        "BLUE"
    );
    assert_eq!(e.get_long(), Err(DynAnyError::TypeMismatch));

    let tc = TypeCode::create_fixed_tc(5, 2).unwrap();
    let mut f = DynAnyFactory::create_dyn_any_from_type_code(&tc).unwrap();
    assert_eq!(f.get_value().unwrap(), "0.00");
    assert!(f.set_value("123.45").unwrap());
    assert!(!f.set_value("-1.239").unwrap()); // truncated to the scale
    assert_eq!(f.get_value().unwrap(), "-1.23");
    assert_eq!(f.set_value("1234.5"), Err(DynAnyError::InvalidValue));
    assert_eq!(f.set_value("1.2.3"), Err(DynAnyError::TypeMismatch));
    assert!(f.set_value("42d").unwrap());
    let any = via_wire(&f.to_any().unwrap());
    assert_eq!(any.to_fixed(), Some(Fixed::new(4200, 5, 2).unwrap()));
    let back =
        DynAnyFactory::create_dyn_any(&Any::from_fixed(Fixed::new(-5, 5, 2).unwrap()).unwrap())
            .unwrap();
    assert_eq!(back.get_value().unwrap(), "-0.05");
}

#[test]
fn primitives_any_and_recursive_values() {
    let mut d = DynAnyFactory::create_dyn_any(&Any::from_long(5)).unwrap();
    assert_eq!(d.get_long().unwrap(), 5);
    assert_eq!(d.component_count(), 0);
    assert_eq!(
        d.current_component().unwrap_err(),
        DynAnyError::TypeMismatch
    );
    d.insert_long(6).unwrap();
    assert_eq!(d.to_any().unwrap().to_long(), Some(6));
    let mut c = DynAnyFactory::create_dyn_any_from_type_code(&TypeCode::CHAR.into()).unwrap();
    assert_eq!(c.insert_char('€'), Err(DynAnyError::InvalidValue));
    c.insert_char('é').unwrap();
    assert_eq!(via_wire(&c.to_any().unwrap()).to_char(), Some('é'));
    // An any inside.
    let mut a = DynAnyFactory::create_dyn_any_from_type_code(&TypeCode::ANY.into()).unwrap();
    a.insert_dyn_any(&d).unwrap();
    assert_eq!(a.get_dyn_any().unwrap().get_long().unwrap(), 6);
    let outer = via_wire(&a.to_any().unwrap());
    assert_eq!(outer.to_any().unwrap().to_long(), Some(6));

    // struct Node { long v; sequence<Node> kids; }
    let node = TypeCode::create_struct_tc(
        "IDL:Node:1.0",
        "Node",
        vec![
            StructMember::new("v", TypeCode::LONG),
            StructMember::new(
                "kids",
                TypeCode::create_sequence_tc(0, TypeCode::create_recursive_tc("IDL:Node:1.0")),
            ),
        ],
    )
    .unwrap();
    let mut root = DynAnyFactory::create_dyn_any_from_type_code(&node).unwrap();
    root.insert_long(1).unwrap();
    root.next();
    let kids = root.current_component().unwrap().unwrap();
    kids.set_length(2).unwrap();
    let k0 = kids.current_component().unwrap().unwrap();
    k0.insert_long(2).unwrap();
    kids.next();
    let k1: &mut DynAny = kids.current_component().unwrap().unwrap();
    k1.insert_long(3).unwrap();
    k1.next();
    k1.current_component()
        .unwrap()
        .unwrap()
        .set_length(1)
        .unwrap();
    let any = via_wire(&root.to_any().unwrap());
    assert!(any.type_code().equal(&node));
    let back = DynAnyFactory::create_dyn_any(&any).unwrap();
    assert_eq!(back, root);
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
    any.write_value(&mut w).unwrap();
    // v=1, 2 kids: {2, []}, {3, [{0, []}]}
    let words: Vec<u32> = w
        .into_bytes()
        .chunks(4)
        .map(|c| u32::from_be_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(words, [1, 2, 2, 0, 3, 1, 0, 0]);
    // Type mismatches are refused by the factory's checks.
    assert!(DynAnyFactory::create_dyn_any_from_type_code(
        &TypeCode::create_native_tc("IDL:N:1.0", "N").unwrap()
    )
    .is_err());
}
