//! TypeCodes: the factory, every operation, equal/equivalent/compact, byte-exact CDR in both
//! byte orders, recursion and repeats through indirections, and hostile input.

use corbina::cdr::codeset::{CharCodeSet, CodeSets, WCharCodeSet};
use corbina::cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter, MarshalError};
use corbina::error::minor;
use corbina::typecode::{
    decode_type_code, encode_type_code, StructMember, TcKind, TypeCode, TypeCodeError, UnionLabel,
    UnionMember, ValueMember,
};
use corbina::Any;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------
// Hand-built CDR: every pad is written out; only the byte order of numbers varies.

#[derive(Clone, Copy)]
enum T<'s> {
    /// An unsigned long.
    U(u32),
    /// A long.
    L(i32),
    /// A string: length (with the NUL), the octets, the NUL.
    S(&'s str),
    /// Zero padding octets.
    P(usize),
    /// One octet (the encapsulation's byte-order flag is `Flag`).
    Flag,
}

fn render(tokens: &[T<'_>], order: ByteOrder) -> Vec<u8> {
    let mut out = Vec::new();
    let u = |v: u32| match order {
        ByteOrder::Big => v.to_be_bytes(),
        ByteOrder::Little => v.to_le_bytes(),
    };
    for t in tokens {
        match *t {
            T::U(v) => out.extend_from_slice(&u(v)),
            T::L(v) => out.extend_from_slice(&u(v as u32)),
            T::S(s) => {
                out.extend_from_slice(&u(s.len() as u32 + 1));
                out.extend_from_slice(s.as_bytes());
                out.push(0);
            }
            T::P(n) => out.extend(std::iter::repeat_n(0, n)),
            T::Flag => out.push(order.flag()),
        }
    }
    out
}

/// GIOP 1.2 with UTF-16 wide characters (for wchar union labels).
fn ctx() -> CdrContext {
    CdrContext::GIOP_1_2.with_code_sets(CodeSets {
        char_set: CharCodeSet::Iso8859_1,
        wchar_set: Some(WCharCodeSet::Utf16),
    })
}

fn encode(tc: &TypeCode, order: ByteOrder) -> Vec<u8> {
    let mut w = CdrWriter::with_byte_order(order, ctx());
    encode_type_code(tc, &mut w).unwrap();
    w.into_bytes()
}

fn decode(bytes: &[u8], order: ByteOrder) -> Result<TypeCode, MarshalError> {
    let mut r = CdrReader::new(bytes, order, ctx());
    let tc = decode_type_code(&mut r)?;
    r.expect_end()?;
    Ok(tc)
}

const ORDERS: [ByteOrder; 2] = [ByteOrder::Big, ByteOrder::Little];

fn check_vector(tc: &TypeCode, tokens: &[T<'_>]) {
    for order in ORDERS {
        let expected = render(tokens, order);
        assert_eq!(encode(tc, order), expected, "{order:?} encoding of {tc:?}");
        let back = decode(&expected, order).unwrap();
        assert!(back.equal(tc), "{order:?} decoding");
        // Every truncation is a clean error.
        for n in 0..expected.len() {
            assert!(decode(&expected[..n], order).is_err());
        }
    }
}

// ---------------------------------------------------------------------------------------
// The types of the test vectors.

fn bin_struct() -> TypeCode {
    TypeCode::create_struct_tc(
        "IDL:BinStruct:1.0",
        "BinStruct",
        vec![
            StructMember::new("s", TypeCode::SHORT),
            StructMember::new("c", TypeCode::CHAR),
            StructMember::new("l", TypeCode::LONG),
            StructMember::new("o", TypeCode::OCTET),
            StructMember::new("d", TypeCode::DOUBLE),
        ],
    )
    .unwrap()
}

fn node() -> TypeCode {
    TypeCode::create_struct_tc(
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
    .unwrap()
}

fn union_u() -> TypeCode {
    TypeCode::create_union_tc(
        "IDL:U:1.0",
        "U",
        TypeCode::LONG,
        vec![
            UnionMember::new("a", UnionLabel::Value(1), TypeCode::LONG),
            UnionMember::new("b", UnionLabel::Value(2), TypeCode::create_string_tc(0)),
            UnionMember::new("c", UnionLabel::Default, TypeCode::SHORT),
        ],
    )
    .unwrap()
}

fn color() -> TypeCode {
    TypeCode::create_enum_tc("IDL:Color:1.0", "Color", &["red", "green"]).unwrap()
}

fn long_seq() -> TypeCode {
    TypeCode::create_alias_tc(
        "IDL:LongSeq:1.0",
        "LongSeq",
        TypeCode::create_sequence_tc(10, TypeCode::LONG),
    )
    .unwrap()
}

// ---------------------------------------------------------------------------------------
// Byte-exact vectors.

#[test]
fn bin_struct_bytes() {
    use T::*;
    #[rustfmt::skip]
    let v = [
        U(15), U(108),
        Flag, P(3),
        S("IDL:BinStruct:1.0"), P(2),
        S("BinStruct"), P(2),
        U(5),
        S("s"), P(2), U(2),
        S("c"), P(2), U(9),
        S("l"), P(2), U(3),
        S("o"), P(2), U(10),
        S("d"), P(2), U(7),
    ];
    assert_eq!(render(&v, ByteOrder::Big).len(), 116);
    check_vector(&bin_struct(), &v);
}

#[test]
fn recursive_struct_bytes() {
    use T::*;
    #[rustfmt::skip]
    let v = [
        U(15), U(88),
        Flag, P(3),
        S("IDL:Node:1.0"), P(3),
        S("Node"), P(3),
        U(2),
        S("v"), P(2), U(3),
        S("kids"), P(3),
        U(19), U(16),
            Flag, P(3),
            U(0xffff_ffff), L(-88), // back to the struct's kind at offset 0
            U(0),
    ];
    check_vector(&node(), &v);
}

#[test]
fn union_with_default_bytes() {
    use T::*;
    #[rustfmt::skip]
    let v = [
        U(16), U(92),
        Flag, P(3),
        S("IDL:U:1.0"), P(2),
        S("U"), P(2),
        U(3),          // discriminator: long
        L(2),          // default used: member 2
        U(3),
        L(1), S("a"), P(2), U(3),
        L(2), S("b"), P(2), U(18), U(0),
        L(0), S("c"), P(2), U(2), // the default's label: a zero long
    ];
    check_vector(&union_u(), &v);
}

#[test]
fn enum_bytes() {
    use T::*;
    #[rustfmt::skip]
    let v = [
        U(17), U(58),
        Flag, P(3),
        S("IDL:Color:1.0"), P(2),
        S("Color"), P(2),
        U(2),
        S("red"),
        S("green"),
    ];
    check_vector(&color(), &v);
}

#[test]
fn alias_of_bounded_sequence_bytes() {
    use T::*;
    #[rustfmt::skip]
    let v = [
        U(21), U(56),
        Flag, P(3),
        S("IDL:LongSeq:1.0"),
        S("LongSeq"),
        U(19), U(12),
            Flag, P(3),
            U(3),
            U(10),
    ];
    check_vector(&long_seq(), &v);
}

#[test]
fn simple_parameter_kinds_bytes() {
    use T::*;
    check_vector(&TypeCode::create_string_tc(5), &[U(18), U(5)]);
    check_vector(&TypeCode::create_wstring_tc(0), &[U(27), U(0)]);
    // fixed<10,2>: ushort digits, short scale.
    for order in ORDERS {
        let bytes = encode(&TypeCode::create_fixed_tc(10, 2).unwrap(), order);
        let expected: Vec<u8> = match order {
            ByteOrder::Big => vec![0, 0, 0, 28, 0, 10, 0, 2],
            ByteOrder::Little => vec![28, 0, 0, 0, 10, 0, 2, 0],
        };
        assert_eq!(bytes, expected);
        assert!(decode(&bytes, order)
            .unwrap()
            .equal(&TypeCode::create_fixed_tc(10, 2).unwrap()));
    }
    for k in TcKind::ALL.iter().filter(|k| k.is_primitive()) {
        check_vector(&TypeCode::primitive(*k), &[U(k.value())]);
    }
}

#[test]
fn indirection_to_a_repeated_type_code() {
    use T::*;
    // struct Pair { Color a; Color b; } with b's TypeCode an indirection to a's.
    #[rustfmt::skip]
    let v = [
        U(15), U(132),
        Flag, P(3),                 // encapsulation content at 8
        S("IDL:Pair:1.0"), P(3),    // 12..32
        S("Pair"), P(3),            // 32..44
        U(2),                       // 44
        S("a"), P(2),               // 48..56
        U(17), U(58),               // Color's kind at 56
            Flag, P(3), S("IDL:Color:1.0"), P(2), S("Color"), P(2), U(2), S("red"), S("green"),
        P(2),                       // 122..124
        S("b"), P(2),               // 124..132
        U(0xffff_ffff), L(56 - 136),
    ];
    let pair = TypeCode::create_struct_tc(
        "IDL:Pair:1.0",
        "Pair",
        vec![
            StructMember::new("a", color()),
            StructMember::new("b", color()),
        ],
    )
    .unwrap();
    for order in ORDERS {
        let bytes = render(&v, order);
        let back = decode(&bytes, order).unwrap();
        assert!(back.equal(&pair));
        assert!(back.member_type(1).unwrap().equal(&color()));
        // Sharing one description makes our encoder emit the same indirection.
        let c = color();
        let shared = TypeCode::create_struct_tc(
            "IDL:Pair:1.0",
            "Pair",
            vec![StructMember::new("a", c.clone()), StructMember::new("b", c)],
        )
        .unwrap();
        assert_eq!(encode(&shared, order), bytes);
        // Separately built equal members are written out in full.
        assert_ne!(encode(&pair, order), bytes);
        assert!(decode(&encode(&pair, order), order).unwrap().equal(&pair));
    }
}

#[test]
fn type_code_inside_other_streams_keeps_absolute_offsets() {
    // A TypeCode written after other data and inside an Any's encapsulated value still
    // round-trips (indirections are relative, positions absolute).
    for order in ORDERS {
        let mut w = CdrWriter::with_byte_order(order, CdrContext::GIOP_1_2);
        w.write_octet(1);
        w.write_encapsulation(|e| {
            e.write_octet(2);
            encode_type_code(&node(), e)
        })
        .unwrap();
        let bytes = w.into_bytes();
        let mut r = CdrReader::new(&bytes, order, CdrContext::GIOP_1_2);
        r.read_octet().unwrap();
        let mut e = r.read_encapsulation().unwrap();
        e.read_octet().unwrap();
        assert!(decode_type_code(&mut e).unwrap().equal(&node()));
    }
}

// ---------------------------------------------------------------------------------------
// The factory and the operations.

#[test]
fn struct_operations() {
    let t = bin_struct();
    assert_eq!(t.kind(), TcKind::Struct);
    assert_eq!(t.id(), Ok("IDL:BinStruct:1.0"));
    assert_eq!(t.name(), Ok("BinStruct"));
    assert_eq!(t.member_count(), Ok(5));
    assert_eq!(t.member_name(2), Ok("l"));
    assert_eq!(t.member_type(4).unwrap().kind(), TcKind::Double);
    assert_eq!(t.member_name(5), Err(TypeCodeError::Bounds));
    assert!(matches!(t.member_type(5), Err(TypeCodeError::Bounds)));
    assert_eq!(t.length(), Err(TypeCodeError::BadKind));
    assert!(matches!(t.content_type(), Err(TypeCodeError::BadKind)));
    assert!(matches!(t.member_label(0), Err(TypeCodeError::BadKind)));
    assert!(matches!(
        t.discriminator_type(),
        Err(TypeCodeError::BadKind)
    ));
    assert_eq!(t.default_index(), Err(TypeCodeError::BadKind));
    assert_eq!(t.fixed_digits(), Err(TypeCodeError::BadKind));
    assert_eq!(t.fixed_scale(), Err(TypeCodeError::BadKind));
    assert_eq!(t.type_modifier(), Err(TypeCodeError::BadKind));
    assert_eq!(t.member_visibility(0), Err(TypeCodeError::BadKind));
    assert!(matches!(
        t.concrete_base_type(),
        Err(TypeCodeError::BadKind)
    ));
    assert_eq!(
        TypeCodeError::BadKind.repository_id(),
        "IDL:omg.org/CORBA/TypeCode/BadKind:1.0"
    );
    assert_eq!(
        TypeCodeError::Bounds.repository_id(),
        "IDL:omg.org/CORBA/TypeCode/Bounds:1.0"
    );
    let l = t.layout().fixed.as_ref().unwrap();
    assert_eq!((l.size, l.align), (24, 8));
    assert_eq!(&*l.member_offsets, &[0, 2, 4, 8, 16]);

    let ex = TypeCode::create_exception_tc(
        "IDL:Oops:1.0",
        "Oops",
        vec![StructMember::new("why", TypeCode::create_string_tc(0))],
    )
    .unwrap();
    assert_eq!(ex.kind(), TcKind::Except);
    assert_eq!(ex.member_name(0), Ok("why"));
}

#[test]
fn union_operations() {
    let u = union_u();
    assert_eq!(u.member_count(), Ok(3));
    assert_eq!(u.default_index(), Ok(2));
    assert_eq!(u.discriminator_type().unwrap().kind(), TcKind::Long);
    assert_eq!(u.member_label(0).unwrap(), Any::from_long(1));
    assert_eq!(u.member_label(1).unwrap().to_long(), Some(2));
    // The default member's label is the octet 0.
    assert_eq!(u.member_label(2).unwrap(), Any::from_octet(0));
    assert_eq!(u.member_label_value(2), Ok(UnionLabel::Default));
    assert!(matches!(u.member_label(3), Err(TypeCodeError::Bounds)));
    assert_eq!(u.member_type(1).unwrap().kind(), TcKind::String);

    // Enum discriminators; labels are enumerator indices.
    let e = TypeCode::create_union_tc(
        "IDL:E:1.0",
        "E",
        color(),
        vec![
            UnionMember::new("r", UnionLabel::Value(0), TypeCode::LONG),
            UnionMember::new("g", UnionLabel::Value(1), TypeCode::DOUBLE),
        ],
    )
    .unwrap();
    assert_eq!(e.default_index(), Ok(-1));
    assert!(TypeCode::create_union_tc(
        "IDL:E:1.0",
        "E",
        color(),
        vec![UnionMember::new("x", UnionLabel::Value(2), TypeCode::LONG)],
    )
    .is_err());
    for order in ORDERS {
        assert!(decode(&encode(&e, order), order).unwrap().equal(&e));
    }
    // Char, boolean and wchar discriminators round-trip too.
    for (disc, label) in [
        (TypeCode::from(TypeCode::CHAR), 'x' as i128),
        (TypeCode::BOOLEAN.into(), 1),
        (TypeCode::WCHAR.into(), 'é' as i128),
        (TypeCode::ULONGLONG.into(), u64::MAX as i128),
        (TypeCode::SHORT.into(), -3),
    ] {
        let t = TypeCode::create_union_tc(
            "IDL:D:1.0",
            "D",
            disc,
            vec![UnionMember::new(
                "x",
                UnionLabel::Value(label),
                TypeCode::LONG,
            )],
        )
        .unwrap();
        for order in ORDERS {
            assert!(decode(&encode(&t, order), order).unwrap().equal(&t));
        }
    }
}

#[test]
fn other_kinds_operations() {
    let c = color();
    assert_eq!(c.member_count(), Ok(2));
    assert_eq!(c.member_name(1), Ok("green"));
    assert!(matches!(c.member_type(0), Err(TypeCodeError::BadKind)));

    let a = long_seq();
    assert_eq!(a.kind(), TcKind::Alias);
    let s = a.content_type().unwrap();
    assert_eq!(s.length(), Ok(10));
    assert_eq!(s.content_type().unwrap().kind(), TcKind::Long);
    assert_eq!(a.unalias().kind(), TcKind::Sequence);

    assert_eq!(TypeCode::create_string_tc(7).length(), Ok(7));
    assert_eq!(TypeCode::create_wstring_tc(0).length(), Ok(0));
    let f = TypeCode::create_fixed_tc(12, 3).unwrap();
    assert_eq!((f.fixed_digits(), f.fixed_scale()), (Ok(12), Ok(3)));
    let arr = TypeCode::create_array_tc(4, TypeCode::SHORT).unwrap();
    assert_eq!(arr.length(), Ok(4));
    assert_eq!(arr.layout().fixed.as_ref().unwrap().size, 8);

    let obj = TypeCode::create_interface_tc("IDL:Bench:1.0", "Bench").unwrap();
    assert_eq!((obj.kind(), obj.name()), (TcKind::Objref, Ok("Bench")));
    let base = TypeCode::create_value_tc(
        "IDL:Base:1.0",
        "Base",
        0,
        None,
        vec![ValueMember::new("x", TypeCode::LONG, 1)],
    )
    .unwrap();
    let v = TypeCode::create_value_tc(
        "IDL:Derived:1.0",
        "Derived",
        3,
        Some(base.clone()),
        vec![ValueMember::new("y", TypeCode::DOUBLE, 0)],
    )
    .unwrap();
    assert_eq!(v.type_modifier(), Ok(3));
    assert_eq!(v.member_visibility(0), Ok(0));
    assert_eq!(v.member_visibility(1), Err(TypeCodeError::Bounds));
    assert!(v.concrete_base_type().unwrap().unwrap().equal(&base));
    assert!(base.concrete_base_type().unwrap().is_none());
    let boxed = TypeCode::create_value_box_tc("IDL:Box:1.0", "Box", TypeCode::LONG).unwrap();
    assert_eq!(boxed.content_type().unwrap().kind(), TcKind::Long);
    let event = TypeCode::create_event_tc("IDL:Ev:1.0", "Ev", 0, None, vec![]).unwrap();
    let all = [
        obj,
        v,
        base,
        boxed,
        event,
        TypeCode::create_native_tc("IDL:N:1.0", "N").unwrap(),
        TypeCode::create_abstract_interface_tc("IDL:A:1.0", "A").unwrap(),
        TypeCode::create_local_interface_tc("IDL:L:1.0", "L").unwrap(),
        TypeCode::create_component_tc("IDL:C:1.0", "C").unwrap(),
        TypeCode::create_home_tc("IDL:H:1.0", "H").unwrap(),
        f,
        arr,
        a,
        union_u(),
        node(),
        bin_struct(),
    ];
    for t in &all {
        for order in ORDERS {
            let back = decode(&encode(t, order), order).unwrap();
            assert!(back.equal(t), "{t:?}");
            assert_eq!(back.kind(), t.kind());
        }
    }
}

#[test]
fn factory_rejects_bad_arguments() {
    let bad = |r: Result<TypeCode, TypeCodeError>, minor: u32| {
        assert!(
            matches!(r, Err(TypeCodeError::BadParam { minor: m, .. }) if m == minor),
            "{r:?}"
        );
    };
    // OMG BAD_PARAM minors (CORBA 3.0 §4.12.4, omniORB's BAD_PARAM_InvalidName = 15,
    // BAD_PARAM_InvalidRepositoryId = 16).
    bad(
        TypeCode::create_struct_tc("nocolon", "S", vec![]),
        minor::BAD_PARAM_BAD_REPOSITORY_ID,
    );
    bad(
        TypeCode::create_alias_tc("IDL:A:1.0", "a b", TypeCode::LONG),
        minor::BAD_PARAM_BAD_NAME,
    );
    assert_eq!(minor::BAD_PARAM_BAD_NAME, corbina::cdr::OMG_VMCID | 15);
    assert_eq!(
        minor::BAD_PARAM_BAD_REPOSITORY_ID,
        corbina::cdr::OMG_VMCID | 16
    );
    bad(
        TypeCode::create_struct_tc(
            "IDL:S:1.0",
            "S",
            vec![
                StructMember::new("a", TypeCode::LONG),
                StructMember::new("a", TypeCode::SHORT),
            ],
        ),
        minor::BAD_PARAM_BAD_MEMBER_NAME,
    );
    bad(
        TypeCode::create_enum_tc::<&str>("IDL:E:1.0", "E", &[]),
        minor::BAD_PARAM_TYPECODE_ARGUMENT,
    );
    bad(
        TypeCode::create_union_tc(
            "IDL:U:1.0",
            "U",
            TypeCode::LONG,
            vec![
                UnionMember::new("a", UnionLabel::Value(1), TypeCode::LONG),
                UnionMember::new("b", UnionLabel::Value(1), TypeCode::LONG),
            ],
        ),
        minor::BAD_PARAM_DUPLICATE_LABEL,
    );
    // A member of type void is BAD_TYPECODE (OMG minor 2), not BAD_PARAM.
    let void = TypeCode::create_struct_tc(
        "IDL:S:1.0",
        "S",
        vec![StructMember::new("v", TypeCode::VOID)],
    )
    .unwrap_err();
    let sys = void.to_system_exception().unwrap();
    assert_eq!(sys.kind, corbina::SystemExceptionKind::BadTypecode);
    assert_eq!(sys.minor, corbina::cdr::OMG_VMCID | 2);
    bad(
        TypeCode::create_union_tc(
            "IDL:U:1.0",
            "U",
            TypeCode::FLOAT,
            vec![UnionMember::new("a", UnionLabel::Value(0), TypeCode::LONG)],
        ),
        minor::BAD_PARAM_BAD_DISCRIMINATOR,
    );
    bad(
        TypeCode::create_union_tc(
            "IDL:U:1.0",
            "U",
            TypeCode::SHORT,
            vec![UnionMember::new(
                "a",
                UnionLabel::Value(1 << 20),
                TypeCode::LONG,
            )],
        ),
        minor::BAD_PARAM_INCOMPATIBLE_LABEL,
    );
    let e = TypeCodeError::BadParam {
        minor: minor::BAD_PARAM_BAD_MEMBER_NAME,
        reason: "x",
    };
    let sys = e.to_system_exception().unwrap();
    assert_eq!(sys.kind, corbina::SystemExceptionKind::BadParam);
    assert_eq!(sys.minor, corbina::cdr::OMG_VMCID | 17);
    assert!(TypeCodeError::Bounds.to_system_exception().is_none());
}

#[test]
fn equal_equivalent_compact() {
    let a = bin_struct();
    let renamed = TypeCode::create_struct_tc(
        "IDL:BinStruct:1.0",
        "Other",
        vec![
            StructMember::new("s2", TypeCode::SHORT),
            StructMember::new("c", TypeCode::CHAR),
            StructMember::new("l", TypeCode::LONG),
            StructMember::new("o", TypeCode::OCTET),
            StructMember::new("d", TypeCode::DOUBLE),
        ],
    )
    .unwrap();
    assert!(a.equal(&bin_struct()));
    assert!(!a.equal(&renamed));
    assert!(a.equivalent(&renamed));
    let aliased = TypeCode::create_alias_tc("IDL:BinAlias:1.0", "BinAlias", bin_struct()).unwrap();
    assert!(!a.equal(&aliased));
    assert!(a.equivalent(&aliased));
    // Different repository ids are different types even with the same structure...
    let other_id = TypeCode::create_struct_tc(
        "IDL:Elsewhere:1.0",
        "BinStruct",
        vec![
            StructMember::new("s", TypeCode::SHORT),
            StructMember::new("c", TypeCode::CHAR),
            StructMember::new("l", TypeCode::LONG),
            StructMember::new("o", TypeCode::OCTET),
            StructMember::new("d", TypeCode::DOUBLE),
        ],
    )
    .unwrap();
    assert!(!a.equivalent(&other_id));
    // ... and a different structure is not equivalent.
    assert!(!a.equivalent(&color()));
    let compact = a.get_compact_typecode();
    assert_eq!(compact.id(), Ok("IDL:BinStruct:1.0"));
    assert_eq!(compact.name(), Ok(""));
    assert_eq!(compact.member_name(0), Ok(""));
    assert!(!compact.equal(&a));
    assert!(compact.equivalent(&a));
    let alias_compact = long_seq().get_compact_typecode();
    assert_eq!(alias_compact.kind(), TcKind::Alias);
    assert_eq!(alias_compact.name(), Ok(""));
    // Compact recursive TypeCodes still marshal.
    let n = node().get_compact_typecode();
    for order in ORDERS {
        assert!(decode(&encode(&n, order), order).unwrap().equal(&n));
    }
}

#[test]
fn recursion_navigation_and_round_trip() {
    let n = node();
    assert!(n.is_complete());
    let kids = n.member_type(1).unwrap();
    assert_eq!(kids.kind(), TcKind::Sequence);
    let again = kids.content_type().unwrap();
    assert!(again.equal(&n));
    // Navigate arbitrarily deep.
    let mut t = n.clone();
    for _ in 0..100 {
        t = t.member_type(1).unwrap().content_type().unwrap();
    }
    assert!(t.equal(&n));
    assert_eq!(t.member_name(0), Ok("v"));
    // The sequence taken out of Node still means sequence<Node> elsewhere.
    let holder = TypeCode::create_struct_tc(
        "IDL:Holder:1.0",
        "Holder",
        vec![StructMember::new("nodes", kids)],
    )
    .unwrap();
    assert!(holder.is_complete());
    for order in ORDERS {
        let back = decode(&encode(&holder, order), order).unwrap();
        assert!(back.equal(&holder));
        let inner = back
            .member_type(0)
            .unwrap()
            .content_type()
            .unwrap()
            .member_type(1)
            .unwrap()
            .content_type()
            .unwrap();
        assert!(inner.equal(&n));
    }
    // Recursion through a union and a valuetype.
    let list = TypeCode::create_union_tc(
        "IDL:List:1.0",
        "List",
        TypeCode::BOOLEAN,
        vec![
            UnionMember::new("end", UnionLabel::Value(0), TypeCode::LONG),
            UnionMember::new(
                "next",
                UnionLabel::Value(1),
                TypeCode::create_sequence_tc(1, TypeCode::create_recursive_tc("IDL:List:1.0")),
            ),
        ],
    )
    .unwrap();
    let tree = TypeCode::create_value_tc(
        "IDL:Tree:1.0",
        "Tree",
        0,
        None,
        vec![
            ValueMember::new("left", TypeCode::create_recursive_tc("IDL:Tree:1.0"), 1),
            ValueMember::new("right", TypeCode::create_recursive_tc("IDL:Tree:1.0"), 1),
        ],
    )
    .unwrap();
    assert!(tree.member_type(0).unwrap().equal(&tree));
    for t in [list, tree] {
        for order in ORDERS {
            assert!(decode(&encode(&t, order), order).unwrap().equal(&t));
        }
    }
    // An unresolved reference cannot be marshalled.
    let lone = TypeCode::create_sequence_tc(0, TypeCode::create_recursive_tc("IDL:Nope:1.0"));
    assert!(!lone.is_complete());
    let mut w = CdrWriter::new(CdrContext::GIOP_1_2);
    assert!(encode_type_code(&lone, &mut w).is_err());
}

// ---------------------------------------------------------------------------------------
// Hostile input.

fn be(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_be_bytes()).collect()
}

#[test]
fn hostile_indirections() {
    // Top-level indirection: nothing before it.
    assert!(decode(&be(&[0xffff_ffff, (-4i32) as u32]), ByteOrder::Big).is_err());
    // Forward indirection inside a sequence.
    let fwd = be(&[19, 16, 0, 0xffff_ffff, 8, 0]);
    assert!(matches!(
        decode(&fwd, ByteOrder::Big),
        Err(MarshalError::InvalidIndirection { .. })
    ));
    // Self loop: the offset points at the indirection's own tag.
    let selfloop = be(&[19, 16, 0, 0xffff_ffff, (-4i32) as u32, 0]);
    assert!(decode(&selfloop, ByteOrder::Big).is_err());
    // Back to an enclosing sequence (not a struct/union/value): no recursion there.
    let seq_loop = be(&[19, 16, 0, 0xffff_ffff, (-16i32) as u32, 0]);
    assert!(decode(&seq_loop, ByteOrder::Big).is_err());
    // Into the middle of something (not a TypeCode start).
    let middle = be(&[19, 16, 0, 0xffff_ffff, (-12i32) as u32, 0]);
    assert!(decode(&middle, ByteOrder::Big).is_err());
    // Unknown kinds.
    assert!(decode(&be(&[37]), ByteOrder::Big).is_err());
    assert!(decode(&be(&[0x8000_0000]), ByteOrder::Big).is_err());
}

#[test]
fn hostile_counts_and_nesting() {
    use T::*;
    // A struct claiming 2^32-1 members in a tiny encapsulation.
    let v = render(
        &[
            U(15),
            U(24),
            Flag,
            P(3),
            S("IDL:X:1.0"),
            P(2),
            S(""),
            U(u32::MAX),
        ],
        ByteOrder::Big,
    );
    assert!(matches!(
        decode(&v, ByteOrder::Big),
        Err(MarshalError::LengthExceedsData { .. }) | Err(MarshalError::EndOfData { .. })
    ));
    // An encapsulation length larger than the message.
    assert!(decode(&be(&[15, 0x7fff_ffff]), ByteOrder::Big).is_err());
    // Sequences of sequences nested 10,000 deep: the nesting limit stops them.
    let depth = 10_000;
    let mut bytes = be(&[3]); // innermost: long
    for _ in 0..depth {
        let mut outer = be(&[19, (bytes.len() + 8) as u32, 0]);
        outer.extend_from_slice(&bytes);
        outer.extend_from_slice(&be(&[0]));
        bytes = outer;
    }
    assert!(matches!(
        decode(&bytes, ByteOrder::Big),
        Err(MarshalError::NestingTooDeep { .. })
    ));
    // A bad byte-order flag, a bad fixed, an empty array.
    assert!(decode(&be(&[19, 8, 0x0200_0000, 3]), ByteOrder::Big).is_err());
    assert!(decode(&[0, 0, 0, 28, 0, 40, 0, 2], ByteOrder::Big).is_err());
    assert!(decode(&be(&[20, 12, 0, 3, 0]), ByteOrder::Big).is_err());
}

#[test]
fn exponential_sharing_stays_linear() {
    // S0 = struct{long}; S(k+1) = struct{S(k) a; S(k) b} with b an indirection to a: 40
    // levels describe 2^40 longs in a few kilobytes. Decoding, comparing, re-encoding and
    // printing must all stay cheap.
    let mut t = TypeCode::create_struct_tc(
        "IDL:S0:1.0",
        "S0",
        vec![StructMember::new("x", TypeCode::LONG)],
    )
    .unwrap();
    for k in 1..=40 {
        let id = format!("IDL:S{k}:1.0");
        t = TypeCode::create_struct_tc(
            &id,
            "S",
            vec![StructMember::new("a", t.clone()), StructMember::new("b", t)],
        )
        .unwrap();
    }
    for order in ORDERS {
        let bytes = encode(&t, order);
        assert!(bytes.len() < 10_000, "{}", bytes.len());
        let back = decode(&bytes, order).unwrap();
        assert!(back.equal(&t));
        assert!(back.equivalent(&t));
        let _ = back.get_compact_typecode();
        assert!(format!("{back:?}").len() < 100_000);
        assert!(back.layout().fixed.is_none()); // far too big for one block
    }
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        for order in ORDERS {
            let _ = decode(&bytes, order);
        }
    }

    #[test]
    fn mutated_vectors_never_panic(pos in 0usize..116, val in any::<u8>()) {
        for tc in [bin_struct(), node(), union_u(), long_seq()] {
            let mut bytes = encode(&tc, ByteOrder::Big);
            let p = pos % bytes.len();
            bytes[p] = val;
            if let Ok(t) = decode(&bytes, ByteOrder::Big) {
                // Whatever decodes re-encodes and decodes to the same TypeCode.
                prop_assert!(decode(&encode(&t, ByteOrder::Little), ByteOrder::Little)
                    .unwrap()
                    .equal(&t));
            }
        }
    }

    #[test]
    fn random_type_codes_round_trip(tc in arb_type_code()) {
        for order in ORDERS {
            let back = decode(&encode(&tc, order), order).unwrap();
            prop_assert!(back.equal(&tc), "{:?}", tc);
        }
    }
}

/// Random TypeCodes of bounded depth, over every constructor.
pub fn arb_type_code() -> impl Strategy<Value = TypeCode> {
    let leaf = prop_oneof![
        proptest::sample::select(
            TcKind::ALL
                .iter()
                .copied()
                .filter(|k| k.is_primitive() && *k != TcKind::Null && *k != TcKind::Void)
                .collect::<Vec<_>>()
        )
        .prop_map(TypeCode::primitive),
        (0u32..5).prop_map(TypeCode::create_string_tc),
        (0u32..5).prop_map(TypeCode::create_wstring_tc),
        (1u16..31, 0i16..5)
            .prop_map(|(d, s)| TypeCode::create_fixed_tc(d, s.min(d as i16)).unwrap()),
        (1usize..4).prop_map(|n| {
            let names: Vec<String> = (0..n).map(|i| format!("e{i}")).collect();
            TypeCode::create_enum_tc("IDL:En:1.0", "En", &names).unwrap()
        }),
        Just(TypeCode::create_interface_tc("IDL:I:1.0", "I").unwrap()),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            (0u32..3, inner.clone()).prop_map(|(b, t)| TypeCode::create_sequence_tc(b, t)),
            (1u32..3, inner.clone()).prop_map(|(n, t)| TypeCode::create_array_tc(n, t).unwrap()),
            inner
                .clone()
                .prop_map(|t| TypeCode::create_alias_tc("IDL:Al:1.0", "Al", t).unwrap()),
            proptest::collection::vec(inner.clone(), 1..4).prop_map(|ms| {
                let members = ms
                    .into_iter()
                    .enumerate()
                    .map(|(i, t)| StructMember::new(format!("m{i}"), t))
                    .collect();
                TypeCode::create_struct_tc("IDL:St:1.0", "St", members).unwrap()
            }),
            (
                proptest::collection::vec(inner.clone(), 1..4),
                any::<bool>()
            )
                .prop_map(|(ms, dflt)| {
                    let n = ms.len();
                    let members = ms
                        .into_iter()
                        .enumerate()
                        .map(|(i, t)| {
                            let label = if dflt && i == n - 1 {
                                UnionLabel::Default
                            } else {
                                UnionLabel::Value(i as i128 * 7 - 3)
                            };
                            UnionMember::new(format!("u{i}"), label, t)
                        })
                        .collect();
                    TypeCode::create_union_tc("IDL:Un:1.0", "Un", TypeCode::LONG, members).unwrap()
                }),
            inner.clone().prop_map(|t| {
                // A recursive struct around the inner type.
                TypeCode::create_struct_tc(
                    "IDL:Rec:1.0",
                    "Rec",
                    vec![
                        StructMember::new("x", t),
                        StructMember::new(
                            "more",
                            TypeCode::create_sequence_tc(
                                0,
                                TypeCode::create_recursive_tc("IDL:Rec:1.0"),
                            ),
                        ),
                    ],
                )
                .unwrap()
            }),
        ]
    })
}
