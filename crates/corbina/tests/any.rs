//! Any: primitives through CDR in both byte orders, nesting, values of unknown types kept and
//! re-marshalled, recursion, the block path for sequences of fixed-size structs, and random
//! TypeCodes with random values.

use corbina::any::{AnyInsert, Char};
use corbina::cdr::codeset::CodeSets;
use corbina::cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter, Fixed, LongDouble};
use corbina::typecode::{
    encode_type_code, interpreted_elements, StructMember, TcKind, TypeCode, UnionLabel, UnionMember,
};
use corbina::Any;
use proptest::prelude::*;

const ORDERS: [ByteOrder; 2] = [ByteOrder::Big, ByteOrder::Little];

fn ctx() -> CdrContext {
    CdrContext::GIOP_1_2.with_code_sets(CodeSets::UNICODE)
}

/// Writes `any` after one octet (so nothing starts aligned) and reads it back.
fn through_cdr(any: &Any, order: ByteOrder) -> (Any, Vec<u8>) {
    let mut w = CdrWriter::with_byte_order(order, ctx());
    w.write_octet(0xee);
    any.write(&mut w).unwrap();
    let bytes = w.into_bytes();
    let mut r = CdrReader::new(&bytes, order, ctx());
    assert_eq!(r.read_octet().unwrap(), 0xee);
    let back = Any::read(&mut r).unwrap();
    r.expect_end().unwrap();
    (back, bytes)
}

#[test]
fn every_primitive_round_trips_in_both_orders() {
    let fixed = Fixed::new(-12345, 7, 2).unwrap();
    let ld = LongDouble::from_f64(-2.75);
    let samples: Vec<Any> = vec![
        Any::from_short(-2),
        Any::from_ushort(65_000),
        Any::from_long(-70_000),
        Any::from_ulong(4_000_000_000),
        Any::from_longlong(-(1 << 40)),
        Any::from_ulonglong(u64::MAX),
        Any::from_float(1.25),
        Any::from_double(-1e300),
        Any::from_boolean(true),
        Any::from_octet(0xab),
        Any::from_char('z').unwrap(),
        Any::from_wchar('ж').unwrap(),
        Any::from_long_double(ld),
        Any::from_string("héllo wörld").unwrap(),
        Any::from_wstring("日本語").unwrap(),
        Any::from_fixed(fixed).unwrap(),
        Any::from_type_code(&TypeCode::create_sequence_tc(3, TypeCode::LONG)).unwrap(),
        Any::default(),
    ];
    for order in ORDERS {
        for a in &samples {
            let (b, _) = through_cdr(a, order);
            assert_eq!(&b, a, "{order:?} {a:?}");
        }
    }
    for order in ORDERS {
        let get = |i: usize| through_cdr(&samples[i], order).0;
        assert_eq!(get(0).to_short(), Some(-2));
        assert_eq!(get(1).to_ushort(), Some(65_000));
        assert_eq!(get(2).to_long(), Some(-70_000));
        assert_eq!(get(3).to_ulong(), Some(4_000_000_000));
        assert_eq!(get(4).to_longlong(), Some(-(1 << 40)));
        assert_eq!(get(5).to_ulonglong(), Some(u64::MAX));
        assert_eq!(get(6).to_float(), Some(1.25));
        assert_eq!(get(7).to_double(), Some(-1e300));
        assert_eq!(get(8).to_boolean(), Some(true));
        assert_eq!(get(9).to_octet(), Some(0xab));
        assert_eq!(get(10).to_char(), Some('z'));
        assert_eq!(get(11).to_wchar(), Some('ж'));
        assert_eq!(get(12).to_long_double(), Some(ld));
        assert_eq!(get(13).to_string_value().as_deref(), Some("héllo wörld"));
        assert_eq!(get(14).to_wstring().as_deref(), Some("日本語"));
        assert_eq!(get(15).to_fixed(), Some(fixed));
        assert!(get(16)
            .to_type_code()
            .unwrap()
            .equal(&TypeCode::create_sequence_tc(3, TypeCode::LONG)));
        // Wrong-type extraction gives nothing.
        assert_eq!(get(2).to_short(), None);
        assert_eq!(get(13).to_wstring(), None);
    }
    // The generic trait does the same.
    assert_eq!(Any::insert(&7u16).unwrap().extract::<u16>(), Some(7));
    assert_eq!(Any::insert(&Char('q')).unwrap().to_char(), Some('q'));
    assert_eq!(
        Any::insert(&"s".to_string())
            .unwrap()
            .extract::<String>()
            .as_deref(),
        Some("s")
    );
    assert_eq!(Any::insert(&1i32).unwrap().extract::<u32>(), None);
    assert_eq!(<f32 as AnyInsert>::type_code().kind(), TcKind::Float);
}

#[test]
fn exact_bytes_of_a_long_any() {
    let (_, be) = through_cdr(&Any::from_long(5), ByteOrder::Big);
    assert_eq!(be, [0xee, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 5]);
    let (_, le) = through_cdr(&Any::from_double(1.0), ByteOrder::Little);
    assert_eq!(
        le,
        [0xee, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f]
    );
}

#[test]
fn nested_anys() {
    let inner = Any::from_string("inside").unwrap();
    let mid = Any::from_any(&inner).unwrap();
    let outer = Any::from_any(&mid).unwrap();
    for order in ORDERS {
        let (back, _) = through_cdr(&outer, order);
        assert_eq!(back, outer);
        let m = back.to_any().unwrap();
        assert_eq!(m.type_code().kind(), TcKind::Any);
        assert_eq!(
            m.to_any().unwrap().to_string_value().as_deref(),
            Some("inside")
        );
    }
}

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

/// `count` BinStructs as CDR by hand, the sequence's length at stream offset `at` (4-aligned),
/// with CDR's padding written out.
fn bin_structs(count: usize, order: ByteOrder, at: usize) -> Vec<u8> {
    let mut v = Vec::new();
    let u32b = |x: u32| match order {
        ByteOrder::Big => x.to_be_bytes(),
        ByteOrder::Little => x.to_le_bytes(),
    };
    v.extend_from_slice(&u32b(count as u32));
    for i in 0..count {
        let pos = |v: &Vec<u8>| at + v.len();
        // short s at a 2-aligned position
        if pos(&v) % 2 == 1 {
            v.push(0);
        }
        let s = (i as i16).wrapping_mul(3);
        v.extend_from_slice(&match order {
            ByteOrder::Big => s.to_be_bytes(),
            ByteOrder::Little => s.to_le_bytes(),
        });
        v.push(b'a' + (i % 26) as u8); // char c
        while pos(&v) % 4 != 0 {
            v.push(0);
        }
        v.extend_from_slice(&u32b(i as u32 * 1000)); // long l
        v.push(i as u8); // octet o
        while pos(&v) % 8 != 0 {
            v.push(0);
        }
        let d = i as f64 + 0.5;
        v.extend_from_slice(&match order {
            ByteOrder::Big => d.to_be_bytes(),
            ByteOrder::Little => d.to_le_bytes(),
        });
    }
    v
}

/// An Any of `sequence<BinStruct>` as a peer would send it: TypeCode then value, all by hand
/// but the TypeCode (checked byte for byte in tests/typecode.rs).
fn seq_any_message(count: usize, order: ByteOrder) -> Vec<u8> {
    let tc = TypeCode::create_sequence_tc(0, bin_struct());
    let mut w = CdrWriter::with_byte_order(order, CdrContext::GIOP_1_2);
    encode_type_code(&tc, &mut w).unwrap();
    let mut bytes = w.into_bytes();
    assert_eq!(bytes.len() % 4, 0);
    let at = bytes.len();
    bytes.extend_from_slice(&bin_structs(count, order, at));
    bytes
}

#[test]
fn unknown_struct_kept_and_remarshalled_in_the_other_order() {
    for count in [0, 1, 2, 5, 100] {
        let be = seq_any_message(count, ByteOrder::Big);
        // The receiver knows nothing of BinStruct: the TypeCode arrives with the value.
        let mut r = CdrReader::new(&be, ByteOrder::Big, CdrContext::GIOP_1_2);
        let any = Any::read(&mut r).unwrap();
        r.expect_end().unwrap();
        assert_eq!(
            any.type_code().content_type().unwrap().name(),
            Ok("BinStruct")
        );
        // Forwarded little-endian: exactly what a little-endian peer would have sent.
        let mut w = CdrWriter::with_byte_order(ByteOrder::Little, CdrContext::GIOP_1_2);
        any.write(&mut w).unwrap();
        assert_eq!(
            w.into_bytes(),
            seq_any_message(count, ByteOrder::Little),
            "{count}"
        );
        // And big-endian again gives the original bytes.
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
        any.write(&mut w).unwrap();
        assert_eq!(w.into_bytes(), be);
    }
}

#[test]
fn a_megabyte_sequence_takes_the_block_path() {
    let count = (1 << 20) / 24;
    for (from, to) in [
        (ByteOrder::Big, ByteOrder::Little),
        (ByteOrder::Little, ByteOrder::Big),
        (ByteOrder::NATIVE, ByteOrder::NATIVE),
    ] {
        let msg = seq_any_message(count, from);
        let before = interpreted_elements();
        let any = Any::read(&mut CdrReader::new(&msg, from, CdrContext::GIOP_1_2)).unwrap();
        let mut w = CdrWriter::with_byte_order(to, CdrContext::GIOP_1_2);
        any.write(&mut w).unwrap();
        let interpreted = interpreted_elements() - before;
        // The sequence itself and at most one element (and its members) on each pass to
        // reach alignment; the other 43,689 elements move as blocks.
        assert!(interpreted <= 16, "{interpreted} values interpreted");
        assert_eq!(w.into_bytes(), seq_any_message(count, to));
    }
    // An unaligned sequence start costs one interpreted element, then blocks.
    let tc = TypeCode::create_sequence_tc(0, bin_struct());
    let value = bin_structs(1000, ByteOrder::Big, 4);
    let mut padded = vec![0u8; 4];
    padded.extend_from_slice(&value);
    let before = interpreted_elements();
    let any = Any::from_cdr(tc, &value, ByteOrder::Big, CdrContext::GIOP_1_2, 4).unwrap();
    assert!(interpreted_elements() - before <= 8);
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2).starting_at(4);
    any.write_value(&mut w).unwrap();
    assert_eq!(w.into_bytes(), value);
    // Without a fixed layout every element is interpreted (the counter does count).
    let strings = TypeCode::create_sequence_tc(0, TypeCode::create_string_tc(0));
    let mut w = CdrWriter::new(CdrContext::GIOP_1_2);
    w.write_ulong(50);
    for _ in 0..50 {
        w.write_string("x").unwrap();
    }
    let before = interpreted_elements();
    let _ = Any::from_cdr(
        strings,
        &w.into_bytes(),
        ByteOrder::NATIVE,
        CdrContext::GIOP_1_2,
        0,
    )
    .unwrap();
    assert!(interpreted_elements() - before >= 50);
}

#[test]
fn invalid_values_in_blocks_are_caught() {
    let t = TypeCode::create_struct_tc(
        "IDL:F:1.0",
        "F",
        vec![
            StructMember::new("b", TypeCode::BOOLEAN),
            StructMember::new(
                "e",
                TypeCode::create_enum_tc("IDL:E:1.0", "E", &["a", "b"]).unwrap(),
            ),
        ],
    )
    .unwrap();
    let seq = TypeCode::create_sequence_tc(0, t);
    let good = [0, 0, 0, 2, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
    assert!(Any::from_cdr(seq.clone(), &good, ByteOrder::Big, CdrContext::GIOP_1_2, 0).is_ok());
    let mut bad_bool = good;
    bad_bool[12] = 2;
    assert!(Any::from_cdr(
        seq.clone(),
        &bad_bool,
        ByteOrder::Big,
        CdrContext::GIOP_1_2,
        0
    )
    .is_err());
    let mut bad_enum = good;
    bad_enum[19] = 2;
    assert!(Any::from_cdr(
        seq.clone(),
        &bad_enum,
        ByteOrder::Big,
        CdrContext::GIOP_1_2,
        0
    )
    .is_err());
    // A length the message cannot back.
    let huge = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];
    assert!(Any::from_cdr(seq, &huge, ByteOrder::Big, CdrContext::GIOP_1_2, 0).is_err());
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

#[test]
fn recursive_type_code_any() {
    // Node{1, [Node{2, []}, Node{3, [Node{4, []}]}]}
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, ctx());
    fn node_value(w: &mut CdrWriter<'_>, v: i32, kids: &[(i32, Vec<i32>)]) {
        w.write_long(v);
        w.write_ulong(kids.len() as u32);
        for (k, grandkids) in kids {
            let gk: Vec<(i32, Vec<i32>)> = grandkids.iter().map(|&g| (g, vec![])).collect();
            node_value(w, *k, &gk);
        }
    }
    node_value(&mut w, 1, &[(2, vec![]), (3, vec![4])]);
    let value = w.into_bytes();
    let any = Any::from_cdr(node(), &value, ByteOrder::Big, ctx(), 0).unwrap();
    for order in ORDERS {
        let (back, _) = through_cdr(&any, order);
        assert_eq!(back, any);
        assert!(back.type_code().equal(&node()));
    }
    let mut out = CdrWriter::with_byte_order(ByteOrder::Big, ctx());
    any.write_value(&mut out).unwrap();
    assert_eq!(out.into_bytes(), value);
    // A value nested deeper than the reader's limit is refused, not a stack overflow.
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, ctx());
    for _ in 0..100_000 {
        w.write_long(0);
        w.write_ulong(1);
    }
    let deep = w.into_bytes();
    assert!(Any::from_cdr(node(), &deep, ByteOrder::Big, ctx(), 0).is_err());
}

#[test]
fn exceptions_object_references_and_unions() {
    // An exception value: repository id then members.
    let ex = TypeCode::create_exception_tc(
        "IDL:Oops:1.0",
        "Oops",
        vec![StructMember::new("code", TypeCode::LONG)],
    )
    .unwrap();
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, ctx());
    w.write_string("IDL:Oops:1.0").unwrap();
    w.write_long(42);
    let any = Any::from_cdr(ex, &w.into_bytes(), ByteOrder::Big, ctx(), 0).unwrap();
    for order in ORDERS {
        let (back, bytes) = through_cdr(&any, order);
        assert_eq!(back, any);
        assert!(bytes.windows(12).any(|x| x == b"IDL:Oops:1.0"));
    }

    // An object reference keeps its IOR.
    let ior = corbina::giop::Ior::from_stringified(
        "IOR:000000000000000d49444c3a42656e63683a312e3000000000000000010000000000000020000102000000000a3132372e302e302e3100271000000004000000000000000000",
    );
    let ior = match ior {
        Ok(i) => i,
        Err(_) => corbina::giop::Ior {
            type_id: "IDL:Bench:1.0".into(),
            profiles: vec![],
            byte_order: ByteOrder::Big,
        },
    };
    let objref = TypeCode::create_interface_tc("IDL:Bench:1.0", "Bench").unwrap();
    let any = Any::from_ior(objref, &ior).unwrap();
    for order in ORDERS {
        let (back, _) = through_cdr(&any, order);
        assert_eq!(back.to_ior().unwrap().type_id, ior.type_id);
        assert_eq!(back.to_ior().unwrap().profiles, ior.profiles);
    }

    // A union picks its arm from the discriminator, the default when none matches.
    let u = TypeCode::create_union_tc(
        "IDL:U:1.0",
        "U",
        TypeCode::LONG,
        vec![
            UnionMember::new("a", UnionLabel::Value(1), TypeCode::DOUBLE),
            UnionMember::new("b", UnionLabel::Default, TypeCode::create_string_tc(0)),
        ],
    )
    .unwrap();
    for (disc, expect_len) in [(1, 16), (9, 4 + 4 + 3)] {
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, ctx());
        w.write_long(disc);
        if disc == 1 {
            w.write_double(2.5);
        } else {
            w.write_string("hi").unwrap();
        }
        let value = w.into_bytes();
        assert_eq!(value.len(), expect_len);
        let any = Any::from_cdr(u.clone(), &value, ByteOrder::Big, ctx(), 0).unwrap();
        for order in ORDERS {
            assert_eq!(through_cdr(&any, order).0, any);
        }
    }
}

#[test]
fn char_code_sets_are_kept_and_converted() {
    // A Latin-1 string received on a default (ISO-8859-1) connection...
    let latin1 = CdrContext::GIOP_1_2;
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, latin1);
    w.write_string("café").unwrap();
    let any = Any::from_cdr(
        TypeCode::create_string_tc(0),
        &w.into_bytes(),
        ByteOrder::Big,
        latin1,
        0,
    )
    .unwrap();
    assert_eq!(any.to_string_value().as_deref(), Some("café"));
    // ... goes out converted on a UTF-8 one, and equals the same string inserted here.
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, ctx());
    any.write_value(&mut w).unwrap();
    assert_eq!(
        w.into_bytes(),
        [0, 0, 0, 6, b'c', b'a', b'f', 0xc3, 0xa9, 0]
    );
    assert_eq!(any, Any::from_string("café").unwrap());
    // Wide characters cannot go out at GIOP 1.0.
    let wide = Any::from_wstring("x").unwrap();
    let mut w = CdrWriter::new(CdrContext::GIOP_1_2.with_giop_minor(0));
    assert!(wide.write(&mut w).is_err());
}

// ---------------------------------------------------------------------------------------
// Random TypeCodes with random values.

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Writes a random value of type `tc`.
fn gen_value(tc: &TypeCode, rng: &mut Rng, w: &mut CdrWriter<'_>, depth: u32) {
    match tc.kind() {
        TcKind::Null | TcKind::Void => {}
        TcKind::Short | TcKind::UShort => w.write_ushort(rng.next() as u16),
        TcKind::Long | TcKind::ULong => w.write_ulong(rng.next() as u32),
        TcKind::Float => w.write_float(rng.below(1000) as f32 / 8.0),
        TcKind::LongLong | TcKind::ULongLong => w.write_ulonglong(rng.next()),
        TcKind::Double => w.write_double(rng.below(1 << 30) as f64 / 3.0),
        TcKind::LongDouble => w.write_long_double(LongDouble::from_f64(rng.below(99) as f64)),
        TcKind::Boolean => w.write_boolean(rng.below(2) == 1),
        TcKind::Char => w.write_char(b'a' + rng.below(26) as u8),
        TcKind::Octet => w.write_octet(rng.next() as u8),
        TcKind::WChar => w
            .write_wchar(char::from_u32(0x41 + rng.below(0x3000) as u32).unwrap())
            .unwrap(),
        TcKind::String | TcKind::WString => {
            let bound = tc.length().unwrap();
            let max = if bound == 0 { 6 } else { bound as u64 };
            let s: String = (0..rng.below(max + 1))
                .map(|_| ['a', 'é', 'ж', 'z', '字'][rng.below(5) as usize])
                .collect();
            if tc.kind() == TcKind::String {
                w.write_string(&s).unwrap();
            } else {
                w.write_wstring(&s).unwrap();
            }
        }
        TcKind::Fixed => {
            let d = tc.fixed_digits().unwrap() as u8;
            let v = (rng.next() as i128) % 10i128.pow(u32::from(d).min(18));
            Fixed::new(v, d, tc.fixed_scale().unwrap() as u8)
                .unwrap()
                .encode(w)
                .unwrap();
        }
        TcKind::Enum => w.write_ulong(rng.below(u64::from(tc.member_count().unwrap())) as u32),
        TcKind::Sequence => {
            let bound = tc.length().unwrap();
            let max = if depth > 3 {
                0
            } else if bound == 0 {
                3
            } else {
                bound as u64
            };
            let n = rng.below(max + 1);
            w.write_ulong(n as u32);
            let ct = tc.content_type().unwrap();
            for _ in 0..n {
                gen_value(&ct, rng, w, depth + 1);
            }
        }
        TcKind::Array => {
            let ct = tc.content_type().unwrap();
            for _ in 0..tc.length().unwrap() {
                gen_value(&ct, rng, w, depth + 1);
            }
        }
        TcKind::Alias => gen_value(&tc.content_type().unwrap(), rng, w, depth),
        TcKind::Struct => {
            for i in 0..tc.member_count().unwrap() {
                gen_value(&tc.member_type(i).unwrap(), rng, w, depth + 1);
            }
        }
        TcKind::Union => {
            let n = tc.member_count().unwrap();
            let i = rng.below(u64::from(n)) as u32;
            let disc = match tc.member_label_value(i).unwrap() {
                UnionLabel::Value(v) => v as i32,
                UnionLabel::Default => 1_000_000,
            };
            w.write_long(disc);
            gen_value(&tc.member_type(i).unwrap(), rng, w, depth + 1);
        }
        TcKind::Objref => {
            w.write_string("IDL:I:1.0").unwrap();
            let n = rng.below(2);
            w.write_ulong(n as u32);
            for _ in 0..n {
                w.write_ulong(0);
                let data: Vec<u8> = (0..rng.below(9)).map(|_| rng.next() as u8).collect();
                w.write_length(data.len()).unwrap();
                w.write_bytes(&data);
            }
        }
        TcKind::Any => {
            let inner = Any::from_long(rng.next() as i32);
            encode_type_code(inner.type_code(), w).unwrap();
            w.write_long(inner.to_long().unwrap());
        }
        TcKind::TypeCode => encode_type_code(&TypeCode::create_string_tc(3), w).unwrap(),
        TcKind::Principal => {
            w.write_ulong(2);
            w.write_bytes(&[1, 2]);
        }
        k => panic!("no generator for {k}"),
    }
}

fn arb_type_code() -> impl Strategy<Value = TypeCode> {
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
        Just(TypeCode::create_enum_tc("IDL:En:1.0", "En", &["a", "b", "c"]).unwrap()),
        Just(TypeCode::create_interface_tc("IDL:I:1.0", "I").unwrap()),
        Just(bin_struct()),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            (0u32..3, inner.clone()).prop_map(|(b, t)| TypeCode::create_sequence_tc(b, t)),
            (1u32..4, inner.clone()).prop_map(|(n, t)| TypeCode::create_array_tc(n, t).unwrap()),
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

proptest! {
    #[test]
    fn random_values_survive_any_and_cdr(tc in arb_type_code(), seed in 1u64..u64::MAX) {
        let mut rng = Rng(seed);
        let mut w = CdrWriter::new(ctx());
        gen_value(&tc, &mut rng, &mut w, 0);
        let value = w.into_bytes();
        let any = Any::from_cdr(tc.clone(), &value, ByteOrder::NATIVE, ctx(), 0).unwrap();
        prop_assert_eq!(any.value_bytes(), &value[..]);
        for order in ORDERS {
            let (back, _) = through_cdr(&any, order);
            prop_assert!(back.type_code().equal(&tc));
            prop_assert_eq!(back.value_bytes(), &value[..]);
        }
    }

    #[test]
    fn random_bytes_as_any_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        for order in ORDERS {
            let _ = Any::read(&mut CdrReader::new(&bytes, order, ctx()));
        }
    }
}
