//! Round-trip properties: every IDL type written and read back in both byte orders, at every
//! starting alignment 0..8, with the reader ending exactly at the end; and the bulk paths
//! producing the same bytes as element-by-element writing.

use corbina_cdr::{
    AlignBreak, ByteOrder, CdrContext, CdrDecode, CdrEncode, CdrReader, CdrWriter, CharCodeSet,
    CodeSets, Fixed, LongDouble, MarshalError, Primitive, Result, WCharCodeSet,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::fmt::Debug;

#[path = "common/bin_struct.rs"]
mod bin_struct;
use bin_struct::BinStruct;

const ORDERS: [ByteOrder; 2] = [ByteOrder::Big, ByteOrder::Little];
const PAD: u8 = 0xa5;

fn latin1() -> CdrContext {
    CdrContext::GIOP_1_2
}

fn unicode(minor: u8) -> CdrContext {
    CdrContext::GIOP_1_2
        .with_giop_minor(minor)
        .with_code_sets(CodeSets::UNICODE)
}

fn wide(minor: u8, wchar: WCharCodeSet) -> CdrContext {
    CdrContext::GIOP_1_2
        .with_giop_minor(minor)
        .with_code_sets(CodeSets {
            char_set: CharCodeSet::Utf8,
            wchar_set: Some(wchar),
        })
}

/// Writes with `write` and reads back with `read` in both byte orders at every starting
/// alignment, three ways: after `k` octets in the same stream; from a writer `starting_at(k)`
/// (with splicing of every block of 8 octets or more) and a reader `with_stream_offset(k)`;
/// and from a reader `starting_at(k)` over the first stream. All three must give the same
/// bytes and the expected value, and leave nothing unread. Returns the big-endian bytes
/// written at alignment 0.
fn round_trip<'v, X, W, R>(
    ctx: CdrContext,
    write: W,
    read: R,
    expected: &X,
) -> Result<Vec<u8>, TestCaseError>
where
    X: PartialEq + Debug,
    W: Fn(&mut CdrWriter<'v>) -> Result<()>,
    R: Fn(&mut CdrReader<'_>) -> Result<X>,
{
    let mut out = Vec::new();
    for order in ORDERS {
        for k in 0..8usize {
            let mut w = CdrWriter::with_byte_order(order, ctx);
            for _ in 0..k {
                w.write_octet(PAD);
            }
            write(&mut w)
                .map_err(|e| TestCaseError::fail(format!("write {order:?} k={k}: {e}")))?;
            let prefixed = w.into_bytes();

            let mut w = CdrWriter::with_byte_order(order, ctx).starting_at(k);
            w.set_splice_threshold(8);
            write(&mut w).map_err(|e| TestCaseError::fail(format!("write offset {k}: {e}")))?;
            let offset = w.into_bytes();
            prop_assert_eq!(
                &prefixed[k..],
                &offset[..],
                "{:?} k={}: prefix vs offset",
                order,
                k
            );

            let mut r = CdrReader::new(&prefixed, order, ctx);
            for _ in 0..k {
                prop_assert_eq!(r.read_octet(), Ok(PAD));
            }
            let got = read(&mut r)
                .map_err(|e| TestCaseError::fail(format!("read {order:?} k={k}: {e}")))?;
            prop_assert_eq!(&got, expected, "{:?} k={}", order, k);
            prop_assert_eq!(r.expect_end(), Ok(()), "{:?} k={}", order, k);

            let mut r = CdrReader::new(&offset, order, ctx).with_stream_offset(k);
            let got =
                read(&mut r).map_err(|e| TestCaseError::fail(format!("read offset {k}: {e}")))?;
            prop_assert_eq!(&got, expected, "{:?} offset {}", order, k);
            prop_assert_eq!(r.expect_end(), Ok(()));

            let mut r = CdrReader::new(&prefixed, order, ctx).starting_at(k);
            let got = read(&mut r).map_err(|e| TestCaseError::fail(format!("read at {k}: {e}")))?;
            prop_assert_eq!(&got, expected, "{:?} starting_at {}", order, k);
            prop_assert_eq!(r.expect_end(), Ok(()));

            if order == ByteOrder::Big && k == 0 {
                out = prefixed;
            }
        }
    }
    Ok(out)
}

/// [`round_trip`] through the `CdrEncode`/`CdrDecode` impls.
fn trait_round_trip<T>(ctx: CdrContext, value: &T) -> Result<Vec<u8>, TestCaseError>
where
    T: CdrEncode + for<'a> CdrDecode<'a> + PartialEq + Debug,
{
    round_trip(ctx, |w| value.encode(w), |r| T::decode(r), value)
}

fn bits64(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn bits32(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![any::<u64>().prop_map(f64::from_bits), any::<f64>()]
}

fn any_f32() -> impl Strategy<Value = f32> {
    prop_oneof![any::<u32>().prop_map(f32::from_bits), any::<f32>()]
}

fn latin1_string() -> impl Strategy<Value = String> {
    prop::collection::vec(1u8..=255, 0..40).prop_map(|b| b.into_iter().map(char::from).collect())
}

fn unicode_string() -> impl Strategy<Value = String> {
    "[^\u{0}]{0,40}"
}

fn bmp_string() -> impl Strategy<Value = String> {
    "[^\u{0}\u{10000}-\u{10ffff}]{0,40}"
}

fn bmp_char() -> impl Strategy<Value = char> {
    any::<char>().prop_filter("BMP", |c| u32::from(*c) <= 0xffff)
}

fn long_double() -> impl Strategy<Value = LongDouble> {
    any::<[u8; 16]>().prop_map(LongDouble::from_be_bytes)
}

fn fixed() -> impl Strategy<Value = Fixed> {
    (1u8..=31).prop_flat_map(|digits| {
        let max = 10i128.pow(u32::from(digits)) - 1;
        (0..=digits, -max..=max).prop_map(move |(scale, value)| Fixed {
            value,
            digits,
            scale,
        })
    })
}

// ---------------------------------------------------------------------------------------------
// Scalars

proptest! {
    #[test]
    fn boolean(v: bool) {
        round_trip(latin1(), |w| { w.write_boolean(v); Ok(()) }, |r| r.read_boolean(), &v)?;
        trait_round_trip(latin1(), &v)?;
    }

    #[test]
    fn octet_and_raw_char(v: u8) {
        round_trip(latin1(), |w| { w.write_octet(v); Ok(()) }, |r| r.read_octet(), &v)?;
        round_trip(latin1(), |w| { w.write_char(v); Ok(()) }, |r| r.read_char(), &v)?;
        trait_round_trip(latin1(), &v)?;
        // As a Unicode scalar: every octet is a Latin-1 character.
        let c = char::from(v);
        round_trip(latin1(), |w| w.write_char_unicode(c), |r| r.read_char_unicode(), &c)?;
    }

    #[test]
    fn utf8_char_is_ascii_only(c: char) {
        let ctx = unicode(2);
        if c.is_ascii() {
            round_trip(ctx, |w| w.write_char_unicode(c), |r| r.read_char_unicode(), &c)?;
        } else {
            let mut w = CdrWriter::new(ctx);
            let is_not_representable = matches!(
                w.write_char_unicode(c),
                Err(MarshalError::NotRepresentable { .. })
            );
            prop_assert!(is_not_representable);
        }
    }

    #[test]
    fn integers(a: i16, b: u16, c: i32, d: u32, e: i64, f: u64) {
        round_trip(latin1(), |w| { w.write_short(a); Ok(()) }, |r| r.read_short(), &a)?;
        round_trip(latin1(), |w| { w.write_ushort(b); Ok(()) }, |r| r.read_ushort(), &b)?;
        round_trip(latin1(), |w| { w.write_long(c); Ok(()) }, |r| r.read_long(), &c)?;
        round_trip(latin1(), |w| { w.write_ulong(d); Ok(()) }, |r| r.read_ulong(), &d)?;
        round_trip(latin1(), |w| { w.write_longlong(e); Ok(()) }, |r| r.read_longlong(), &e)?;
        round_trip(latin1(), |w| { w.write_ulonglong(f); Ok(()) }, |r| r.read_ulonglong(), &f)?;
        trait_round_trip(latin1(), &a)?;
        trait_round_trip(latin1(), &b)?;
        trait_round_trip(latin1(), &c)?;
        trait_round_trip(latin1(), &d)?;
        trait_round_trip(latin1(), &e)?;
        trait_round_trip(latin1(), &f)?;
        // All of them in one stream, padding between.
        round_trip(
            latin1(),
            |w| {
                w.write_octet(1);
                w.write_longlong(e);
                w.write_short(a);
                w.write_ulong(d);
                w.write_ushort(b);
                w.write_ulonglong(f);
                w.write_long(c);
                Ok(())
            },
            |r| {
                Ok((r.read_octet()?, r.read_longlong()?, r.read_short()?, r.read_ulong()?,
                    r.read_ushort()?, r.read_ulonglong()?, r.read_long()?))
            },
            &(1, e, a, d, b, f, c),
        )?;
    }

    #[test]
    fn floats_by_bit_pattern(f in any_f32(), d in any_f64()) {
        round_trip(latin1(), |w| { w.write_float(f); Ok(()) }, |r| Ok(r.read_float()?.to_bits()), &f.to_bits())?;
        round_trip(latin1(), |w| { w.write_double(d); Ok(()) }, |r| Ok(r.read_double()?.to_bits()), &d.to_bits())?;
        round_trip(latin1(), |w| f.encode(w), |r| Ok(f32::decode(r)?.to_bits()), &f.to_bits())?;
        round_trip(latin1(), |w| d.encode(w), |r| Ok(f64::decode(r)?.to_bits()), &d.to_bits())?;
    }

    #[test]
    fn long_double_keeps_its_bytes(v in long_double()) {
        let be = round_trip(latin1(), |w| { w.write_long_double(v); Ok(()) }, |r| r.read_long_double(), &v)?;
        prop_assert_eq!(&be[..], &v.be_bytes[..]);
        trait_round_trip(latin1(), &v)?;
    }

    #[test]
    fn long_double_from_f64_is_exact(d in any::<f64>().prop_filter("normal or zero", |d| d.is_normal() || *d == 0.0 || d.is_infinite())) {
        prop_assert_eq!(LongDouble::from_f64(d).to_f64().to_bits(), d.to_bits());
    }

    #[test]
    fn fixed_point(v in fixed(), w2 in fixed()) {
        let bytes = round_trip(
            latin1(),
            |w| { v.encode(w)?; w2.encode(w) },
            |r| Ok((Fixed::decode(r, v.digits, v.scale)?, Fixed::decode(r, w2.digits, w2.scale)?)),
            &(v, w2),
        )?;
        // Packed BCD: no alignment, (digits + 2) / 2 octets each.
        prop_assert_eq!(bytes.len(), Fixed::wire_len(v.digits) + Fixed::wire_len(w2.digits));
        prop_assert_eq!(Fixed::new(v.value, v.digits, v.scale), Ok(v));
    }

    #[test]
    fn fixed_out_of_range_is_refused(digits in 0u8..=40, scale in 0u8..=40, value: i128) {
        let f = Fixed { value, digits, scale };
        let fits = (1..=31).contains(&digits)
            && scale <= digits
            && value.unsigned_abs() < 10u128.pow(u32::from(digits));
        let mut w = CdrWriter::new(latin1());
        prop_assert_eq!(f.encode(&mut w).is_ok(), fits);
        prop_assert_eq!(Fixed::new(value, digits, scale).is_ok(), fits);
    }
}

// ---------------------------------------------------------------------------------------------
// Characters and strings

proptest! {
    #[test]
    fn wchar_bmp(c in bmp_char(), minor in 1u8..=2, ucs2: bool) {
        let cs = if ucs2 { WCharCodeSet::Ucs2 } else { WCharCodeSet::Utf16 };
        let ctx = wide(minor, cs);
        if (0xd800..0xe000).contains(&u32::from(c)) {
            return Ok(()); // not a char
        }
        let be = round_trip(ctx, |w| w.write_wchar(c), |r| r.read_wchar(), &c)?;
        trait_round_trip(ctx, &c)?;
        let unit = (u32::from(c) as u16).to_be_bytes();
        if minor == 2 {
            prop_assert_eq!(be, [2, unit[0], unit[1]]);
        } else {
            prop_assert_eq!(be, unit);
        }
    }

    #[test]
    fn wchar_outside_bmp_is_refused(c in any::<char>().prop_filter("non-BMP", |c| u32::from(*c) > 0xffff), minor in 1u8..=2) {
        let mut w = CdrWriter::new(wide(minor, WCharCodeSet::Utf16));
        let refused = matches!(w.write_wchar(c), Err(MarshalError::NotRepresentable { .. }));
        prop_assert!(refused);
    }

    #[test]
    fn string_latin1(s in latin1_string()) {
        let be = round_trip(latin1(), |w| w.write_string(&s), |r| r.read_string(), &s)?;
        prop_assert_eq!(be.len(), 4 + s.chars().count() + 1);
        trait_round_trip(latin1(), &s)?;
        round_trip(latin1(), |w| w.write_string(&s), |r| Ok(r.read_str_borrowed()?.into_owned()), &s)?;
        let n = s.chars().count() as u32;
        round_trip(latin1(), |w| w.write_bounded_string(&s, n), |r| r.read_bounded_string(n), &s)?;
    }

    #[test]
    fn string_latin1_refuses_other_chars(s in unicode_string()) {
        let mut w = CdrWriter::new(latin1());
        let ok = w.write_string(&s).is_ok();
        prop_assert_eq!(ok, s.chars().all(|c| u32::from(c) <= 0xff));
    }

    #[test]
    fn string_utf8(s in unicode_string(), minor in 0u8..=2) {
        let ctx = unicode(minor);
        let be = round_trip(ctx, |w| w.write_string(&s), |r| r.read_string(), &s)?;
        prop_assert_eq!(be.len(), 4 + s.len() + 1);
        trait_round_trip(ctx, &s)?;
        round_trip(ctx, |w| w.write_string(&s), |r| Ok(r.read_str_borrowed()?.into_owned()), &s)?;
    }

    #[test]
    fn strings_with_nul_are_refused(a in unicode_string(), b in unicode_string()) {
        let s = format!("{a}\0{b}");
        let mut w = CdrWriter::new(unicode(2));
        prop_assert!(w.write_string(&s).is_err());
        prop_assert!(w.write_wstring(&s).is_err());
        prop_assert!(w.is_empty());
    }

    #[test]
    fn wstring_utf16(s in unicode_string(), minor in 1u8..=2) {
        let ctx = wide(minor, WCharCodeSet::Utf16);
        let be = round_trip(ctx, |w| w.write_wstring(&s), |r| r.read_wstring(), &s)?;
        let units = s.encode_utf16().count();
        if minor == 2 {
            let bom = usize::from(matches!(s.chars().next(), Some('\u{feff}' | '\u{fffe}')));
            prop_assert_eq!(be.len(), 4 + 2 * (units + bom));
        } else {
            prop_assert_eq!(be.len(), 4 + 2 * (units + 1));
        }
    }

    #[test]
    fn wstring_ucs2(s in bmp_string(), minor in 1u8..=2) {
        let ctx = wide(minor, WCharCodeSet::Ucs2);
        round_trip(ctx, |w| w.write_wstring(&s), |r| r.read_wstring(), &s)?;
        let mut w = CdrWriter::new(ctx);
        let refused = matches!(w.write_wstring(&format!("{s}😀")), Err(MarshalError::NotRepresentable { .. }));
        prop_assert!(refused);
    }

    #[test]
    fn wstring_starting_with_a_bom_lookalike(rest in unicode_string(), first in prop::sample::select(vec!['\u{feff}', '\u{fffe}'])) {
        let s = format!("{first}{rest}");
        round_trip(wide(2, WCharCodeSet::Utf16), |w| w.write_wstring(&s), |r| r.read_wstring(), &s)?;
    }
}

#[test]
fn wide_characters_need_a_code_set_and_giop_1_1() {
    let mut w = CdrWriter::new(latin1());
    assert!(matches!(
        w.write_wchar('a'),
        Err(MarshalError::WCharUnavailable { .. })
    ));
    assert!(matches!(
        w.write_wstring("a"),
        Err(MarshalError::WCharUnavailable { .. })
    ));
    let mut w = CdrWriter::new(unicode(0));
    assert!(matches!(
        w.write_wchar('a'),
        Err(MarshalError::WCharUnavailable { .. })
    ));
    assert!(w.is_empty());
}

#[test]
fn wstring_bom_lookalike_gets_an_explicit_mark() {
    let mut w = CdrWriter::with_byte_order(ByteOrder::Little, wide(2, WCharCodeSet::Utf16));
    w.write_wstring("\u{fffe}a").unwrap();
    assert_eq!(
        w.into_bytes(),
        [6, 0, 0, 0, 0xfe, 0xff, 0xff, 0xfe, 0, b'a']
    );
}

// ---------------------------------------------------------------------------------------------
// Sequences and arrays

macro_rules! primitive_sequences {
    ($($name:ident: $t:ty = $strat:expr, $key:expr;)*) => {$(
        proptest! {
            #[test]
            fn $name(v in prop::collection::vec($strat, 0..80)) {
                let key = $key;
                let expected = key(&v[..]);
                // Through the trait (bulk encode_slice/decode_vec).
                round_trip(latin1(), |w| v.encode(w), |r| Ok(key(&Vec::<$t>::decode(r)?)), &expected)?;
                // Through the writer's and reader's sequence calls.
                round_trip(latin1(), |w| w.write_primitive_seq(&v), |r| Ok(key(&r.read_primitive_seq::<$t>()?)), &expected)?;
                round_trip(latin1(), |w| w.write_primitive_seq(&v), |r| {
                    let mut out = vec![<$t>::default(); 3];
                    r.read_primitive_seq_into(&mut out)?;
                    Ok(key(&out))
                }, &expected)?;
                // As an array: no length.
                round_trip(latin1(), |w| { w.write_primitive_array(&v); Ok(()) }, |r| Ok(key(&r.read_primitive_array::<$t>(v.len())?)), &expected)?;
                bulk_matches_per_element::<$t>(&v)?;
            }
        }
    )*};
}

fn ident<T: Clone>(v: &[T]) -> Vec<T> {
    v.to_vec()
}

primitive_sequences! {
    seq_short: i16 = any::<i16>(), ident;
    seq_ushort: u16 = any::<u16>(), ident;
    seq_long: i32 = any::<i32>(), ident;
    seq_ulong: u32 = any::<u32>(), ident;
    seq_longlong: i64 = any::<i64>(), ident;
    seq_ulonglong: u64 = any::<u64>(), ident;
    seq_float: f32 = any_f32(), bits32;
    seq_double: f64 = any_f64(), bits64;
}

/// The bulk paths (`encode_slice`, `write_primitive_array`, `decode_vec`) against one
/// `write_primitive`/`read_primitive` per element, in both orders, at every alignment, with
/// and without splicing.
fn bulk_matches_per_element<T: Primitive + CdrEncode + for<'a> CdrDecode<'a>>(
    v: &[T],
) -> Result<(), TestCaseError> {
    for order in ORDERS {
        for k in 0..8 {
            for threshold in [usize::MAX, 0] {
                let mut bulk = CdrWriter::with_byte_order(order, latin1()).starting_at(k);
                bulk.set_splice_threshold(threshold);
                T::encode_slice(v, &mut bulk).map_err(|e| TestCaseError::fail(e.to_string()))?;
                let mut each = CdrWriter::with_byte_order(order, latin1()).starting_at(k);
                for &x in v {
                    each.write_primitive(x);
                }
                let each = each.into_bytes();
                let mut array = CdrWriter::with_byte_order(order, latin1()).starting_at(k);
                array.set_splice_threshold(threshold);
                array.write_primitive_array(v);
                prop_assert_eq!(&bulk.into_bytes(), &each);
                prop_assert_eq!(&array.into_bytes(), &each);

                let mut r = CdrReader::new(&each, order, latin1()).with_stream_offset(k);
                let got = T::decode_vec(&mut r, v.len())
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                r.expect_end()
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                let mut r = CdrReader::new(&each, order, latin1()).with_stream_offset(k);
                let mut one_by_one = Vec::new();
                for _ in v {
                    one_by_one.push(
                        r.read_primitive::<T>()
                            .map_err(|e| TestCaseError::fail(e.to_string()))?,
                    );
                }
                // Compare as bytes so NaNs compare equal.
                prop_assert_eq!(
                    bytemuck::cast_slice::<T, u8>(&got),
                    bytemuck::cast_slice::<T, u8>(&one_by_one)
                );
                prop_assert_eq!(
                    bytemuck::cast_slice::<T, u8>(&got),
                    bytemuck::cast_slice::<T, u8>(v)
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn seq_octet(v in prop::collection::vec(any::<u8>(), 0..200)) {
        trait_round_trip(latin1(), &v)?;
        round_trip(latin1(), |w| w.write_octet_seq(&v), |r| Ok(r.read_octet_seq()?.to_vec()), &v)?;
        round_trip(latin1(), |w| v.encode(w), |r| Ok(<&[u8]>::decode(r)?.to_vec()), &v)?;
        // Octets have no alignment and no order: the same bytes every way.
        let mut each = CdrWriter::new(latin1());
        each.write_length(v.len()).unwrap();
        for &b in &v {
            each.write_octet(b);
        }
        let mut bulk = CdrWriter::new(latin1());
        bulk.set_splice_threshold(0);
        bulk.write_octet_seq(&v).unwrap();
        prop_assert_eq!(bulk.into_bytes(), each.into_bytes());
    }

    #[test]
    fn seq_boolean(v in prop::collection::vec(any::<bool>(), 0..100)) {
        trait_round_trip(latin1(), &v)?;
        round_trip(latin1(), |w| w.write_boolean_seq(&v), |r| r.read_boolean_seq(), &v)?;
        let a = to_cdr(&v);
        let mut w = CdrWriter::new(latin1());
        w.write_boolean_seq(&v).unwrap();
        prop_assert_eq!(a, w.into_bytes());
    }

    #[test]
    fn seq_wchar(v in prop::collection::vec(bmp_char().prop_filter("scalar", |c| !(0xd800..0xe000).contains(&u32::from(*c))), 0..30), minor in 1u8..=2) {
        trait_round_trip(wide(minor, WCharCodeSet::Utf16), &v)?;
    }

    #[test]
    fn seq_long_double(v in prop::collection::vec(long_double(), 0..10)) {
        trait_round_trip(latin1(), &v)?;
    }

    #[test]
    fn seq_string(v in prop::collection::vec(unicode_string(), 0..10), l in prop::collection::vec(latin1_string(), 0..10)) {
        trait_round_trip(unicode(2), &v)?;
        trait_round_trip(latin1(), &l)?;
    }

    #[test]
    fn nested_sequences(
        a in prop::collection::vec(prop::collection::vec(any_f64().prop_map(f64::to_bits), 0..10), 0..6),
        b in prop::collection::vec(prop::collection::vec(prop::collection::vec(any::<i16>(), 0..5), 0..4), 0..4),
        c in prop::collection::vec(prop::collection::vec(latin1_string(), 0..4), 0..4),
        d in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..20), 0..5),
    ) {
        let doubles: Vec<Vec<f64>> = a.iter().map(|v| v.iter().map(|&x| f64::from_bits(x)).collect()).collect();
        round_trip(latin1(), |w| doubles.encode(w), |r| {
            Ok(Vec::<Vec<f64>>::decode(r)?.iter().map(|v| bits64(v)).collect::<Vec<_>>())
        }, &a)?;
        trait_round_trip(latin1(), &b)?;
        trait_round_trip(latin1(), &c)?;
        trait_round_trip(latin1(), &d)?;
    }

    #[test]
    fn arrays(
        a: [i32; 3],
        b: [[i16; 2]; 3],
        c in any::<[u64; 4]>(),
        d: [u8; 5],
        e in [latin1_string(), latin1_string()],
        f: [bool; 7],
        g in prop::collection::vec(any::<[u16; 3]>(), 0..5),
    ) {
        let a_bytes = trait_round_trip(latin1(), &a)?;
        prop_assert_eq!(a_bytes.len(), 12);
        trait_round_trip(latin1(), &b)?;
        trait_round_trip(latin1(), &c)?;
        let d_bytes = trait_round_trip(latin1(), &d)?;
        prop_assert_eq!(&d_bytes[..], &d[..]);
        trait_round_trip(latin1(), &e)?;
        trait_round_trip(latin1(), &f)?;
        trait_round_trip(latin1(), &g)?;
        let boxed = Box::new(a);
        trait_round_trip(latin1(), &boxed)?;
    }
}

fn to_cdr<T: CdrEncode + ?Sized>(v: &T) -> Vec<u8> {
    corbina_cdr::to_bytes(v, latin1()).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Encapsulations

/// A value inside an encapsulation tree.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Long(i32),
    Double(u64),
    Text(String),
    Bytes(Vec<u8>),
    Encap(ByteOrder, Vec<Node>),
}

fn node() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        any::<i32>().prop_map(Node::Long),
        any::<u64>().prop_map(Node::Double),
        latin1_string().prop_map(Node::Text),
        prop::collection::vec(any::<u8>(), 0..12).prop_map(Node::Bytes),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        (
            prop::sample::select(ORDERS.to_vec()),
            prop::collection::vec(inner, 0..5),
        )
            .prop_map(|(o, v)| Node::Encap(o, v))
    })
}

fn write_nodes(w: &mut CdrWriter<'_>, nodes: &[Node]) -> Result<()> {
    w.write_length(nodes.len())?;
    for n in nodes {
        match n {
            Node::Long(v) => {
                w.write_octet(0);
                w.write_long(*v);
            }
            Node::Double(v) => {
                w.write_octet(1);
                w.write_double(f64::from_bits(*v));
            }
            Node::Text(s) => {
                w.write_octet(2);
                w.write_string(s)?;
            }
            Node::Bytes(b) => {
                w.write_octet(3);
                w.write_length(b.len())?;
                w.write_bytes(b);
            }
            Node::Encap(order, inner) => {
                w.write_octet(4);
                w.write_encapsulation_with_order(*order, |e| write_nodes(e, inner))?;
            }
        }
    }
    Ok(())
}

fn read_nodes(r: &mut CdrReader<'_>) -> Result<Vec<Node>> {
    let n = r.read_length(1)?;
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(match r.read_octet()? {
            0 => Node::Long(r.read_long()?),
            1 => Node::Double(r.read_double()?.to_bits()),
            2 => Node::Text(r.read_string()?),
            3 => Node::Bytes(r.read_octet_seq()?.to_vec()),
            4 => {
                let mut e = r.read_encapsulation()?;
                let order = e.byte_order();
                let inner = read_nodes(&mut e)?;
                e.expect_end()?;
                Node::Encap(order, inner)
            }
            _ => {
                return Err(MarshalError::InvalidValue {
                    offset: r.position(),
                    reason: "tag",
                })
            }
        });
    }
    Ok(out)
}

proptest! {
    #[test]
    fn encapsulations_nest_in_mixed_orders(nodes in prop::collection::vec(node(), 0..5)) {
        round_trip(latin1(), |w| write_nodes(w, &nodes), read_nodes, &nodes)?;
    }

    #[test]
    fn encapsulation_in_stream_order_is_the_default(v: i64, s in latin1_string()) {
        for order in ORDERS {
            let mut a = CdrWriter::with_byte_order(order, latin1());
            a.write_encapsulation(|e| { e.write_longlong(v); e.write_string(&s) }).unwrap();
            let mut b = CdrWriter::with_byte_order(order, latin1());
            b.write_encapsulation_with_order(order, |e| { e.write_longlong(v); e.write_string(&s) }).unwrap();
            prop_assert_eq!(a.into_bytes(), b.into_bytes());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Enums, structs and unions as generated code writes them

/// `enum Color { red, green, blue };`
#[derive(Debug, Clone, Copy, PartialEq)]
enum Color {
    Red,
    Green,
    Blue,
}

impl CdrEncode for Color {
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        w.write_ulong(*self as u32);
        Ok(())
    }
}

impl<'a> CdrDecode<'a> for Color {
    const MIN_WIRE_SIZE: usize = 4;
    fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
        Ok(match r.read_enum(3)? {
            0 => Color::Red,
            1 => Color::Green,
            _ => Color::Blue,
        })
    }
}

/// ```idl
/// union Shape switch (short) {
///   case 1: double radius;
///   case 2: case 3: sequence<long> points;
///   case 4: string label;
///   default: octet raw;
/// };
/// ```
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    Radius(u64), // bit pattern of the double, so NaNs compare
    Points(i16, Vec<i32>),
    Label(String),
    Raw(i16, u8),
}

impl CdrEncode for Shape {
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        match self {
            Shape::Radius(bits) => {
                w.write_short(1);
                w.write_double(f64::from_bits(*bits));
            }
            Shape::Points(d, p) => {
                w.write_short(*d);
                p.encode(w)?;
            }
            Shape::Label(s) => {
                w.write_short(4);
                w.write_string(s)?;
            }
            Shape::Raw(d, o) => {
                w.write_short(*d);
                w.write_octet(*o);
            }
        }
        Ok(())
    }
}

impl<'a> CdrDecode<'a> for Shape {
    const MIN_WIRE_SIZE: usize = 3;
    fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
        Ok(match r.read_short()? {
            1 => Shape::Radius(r.read_double()?.to_bits()),
            d @ (2 | 3) => Shape::Points(d, Vec::decode(r)?),
            4 => Shape::Label(r.read_string()?),
            d => Shape::Raw(d, r.read_octet()?),
        })
    }
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        any::<u64>().prop_map(Shape::Radius),
        (2i16..=3, prop::collection::vec(any::<i32>(), 0..6))
            .prop_map(|(d, p)| Shape::Points(d, p)),
        latin1_string().prop_map(Shape::Label),
        (
            any::<i16>().prop_filter("default", |d| !(1..=4).contains(d)),
            any::<u8>()
        )
            .prop_map(|(d, o)| Shape::Raw(d, o)),
    ]
}

/// ```idl
/// struct Record {
///   octet version; unsigned long id; string name; Color color; boolean active;
///   Shape shape; double weights[3]; sequence<BinStruct> samples; long long stamp;
/// };
/// ```
#[derive(Debug, Clone, PartialEq)]
struct Record {
    version: u8,
    id: u32,
    name: String,
    color: Color,
    active: bool,
    shape: Shape,
    weights: [f64; 3],
    samples: Vec<BinStruct>,
    stamp: i64,
}

impl CdrEncode for Record {
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        w.write_octet(self.version);
        w.write_ulong(self.id);
        w.write_string(&self.name)?;
        self.color.encode(w)?;
        w.write_boolean(self.active);
        self.shape.encode(w)?;
        self.weights.encode(w)?;
        self.samples.encode(w)?;
        w.write_longlong(self.stamp);
        Ok(())
    }
}

impl<'a> CdrDecode<'a> for Record {
    const MIN_WIRE_SIZE: usize = 1 + 4 + 4 + 4 + 1 + 3 + 24 + 4 + 8;
    fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
        Ok(Record {
            version: r.read_octet()?,
            id: r.read_ulong()?,
            name: r.read_string()?,
            color: Color::decode(r)?,
            active: r.read_boolean()?,
            shape: Shape::decode(r)?,
            weights: <[f64; 3]>::decode(r)?,
            samples: Vec::decode(r)?,
            stamp: r.read_longlong()?,
        })
    }
}

fn bin_struct() -> impl Strategy<Value = BinStruct> {
    // Finite doubles so PartialEq works; NaN payloads are covered by `seq_double`.
    (
        any::<i16>(),
        any::<u8>(),
        any::<i32>(),
        any::<u8>(),
        -1e300f64..1e300,
    )
        .prop_map(|(s, c, l, o, d)| BinStruct { s, c, l, o, d })
}

fn record() -> impl Strategy<Value = Record> {
    (
        any::<u8>(),
        any::<u32>(),
        latin1_string(),
        prop::sample::select(vec![Color::Red, Color::Green, Color::Blue]),
        any::<bool>(),
        shape(),
        any::<[i32; 3]>().prop_map(|a| a.map(f64::from)),
        prop::collection::vec(bin_struct(), 0..5),
        any::<i64>(),
    )
        .prop_map(
            |(version, id, name, color, active, shape, weights, samples, stamp)| Record {
                version,
                id,
                name,
                color,
                active,
                shape,
                weights,
                samples,
                stamp,
            },
        )
}

proptest! {
    #[test]
    fn enums(count in 1u32..=1000, pick: u32) {
        let v = pick % count;
        round_trip(latin1(), |w| { w.write_ulong(v); Ok(()) }, |r| r.read_enum(count), &v)?;
        let bytes = to_cdr(&count);
        let mut r = CdrReader::new(&bytes, ByteOrder::NATIVE, latin1());
        let out_of_range = matches!(r.read_enum(count), Err(MarshalError::InvalidEnum { .. }));
        prop_assert!(out_of_range);
    }

    #[test]
    fn unions(s in shape()) {
        trait_round_trip(latin1(), &s)?;
    }

    #[test]
    fn structs(r in record(), more in prop::collection::vec(record(), 0..3)) {
        trait_round_trip(latin1(), &r)?;
        trait_round_trip(latin1(), &more)?;
    }

    /// The generated-code block path for a fixed-size struct gives the bytes of the
    /// field-by-field path at every alignment and in both orders, and decodes back.
    #[test]
    fn fixed_size_struct_block_matches_fields(v in prop::collection::vec(bin_struct(), 0..20)) {
        for order in ORDERS {
            for k in 0..8 {
                let mut block = CdrWriter::with_byte_order(order, latin1()).starting_at(k);
                v.encode(&mut block).map_err(|e| TestCaseError::fail(e.to_string()))?;
                let mut fields = CdrWriter::with_byte_order(order, latin1()).starting_at(k);
                fields.write_length(v.len()).unwrap();
                for s in &v {
                    s.encode_fields(&mut fields);
                }
                let bytes = fields.into_bytes();
                prop_assert_eq!(&block.into_bytes(), &bytes, "{:?} k={}", order, k);
                // An array of them (no length) too.
                let mut block = CdrWriter::with_byte_order(order, latin1()).starting_at(k);
                BinStruct::encode_slice(&v, &mut block).unwrap();
                let mut fields = CdrWriter::with_byte_order(order, latin1()).starting_at(k);
                for s in &v {
                    s.encode_fields(&mut fields);
                }
                let bytes = fields.into_bytes();
                prop_assert_eq!(&block.into_bytes(), &bytes, "array {:?} k={}", order, k);
                let mut r = CdrReader::new(&bytes, order, latin1()).with_stream_offset(k);
                let back = BinStruct::decode_vec(&mut r, v.len()).unwrap();
                prop_assert_eq!(&back, &v);
                prop_assert_eq!(r.expect_end(), Ok(()));
            }
        }
        trait_round_trip(latin1(), &v)?;
    }
}

proptest! {
    /// A GIOP 1.1 fragment boundary (an alignment restart) inside a run of fixed-size
    /// structs: the block path must notice and fall back to field-by-field decoding.
    #[test]
    fn fixed_size_structs_across_an_align_break(
        v in prop::collection::vec(bin_struct(), 1..12),
        split in any::<prop::sample::Index>(),
        shift in 0usize..8,
    ) {
        for order in ORDERS {
            let m = split.index(v.len() + 1);
            let mut first = CdrWriter::with_byte_order(order, latin1());
            first.write_length(v.len()).unwrap();
            for s in &v[..m] {
                s.encode_fields(&mut first);
            }
            let mut bytes = first.into_bytes();
            let at = bytes.len();
            let mut second = CdrWriter::with_byte_order(order, latin1()).starting_at(shift);
            for s in &v[m..] {
                s.encode_fields(&mut second);
            }
            bytes.extend_from_slice(&second.into_bytes());
            let breaks = [AlignBreak { at, origin: at as isize - shift as isize }];
            let mut r = CdrReader::new(&bytes, order, latin1()).with_align_breaks(&breaks);
            let back = Vec::<BinStruct>::decode(&mut r).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&back, &v);
            prop_assert_eq!(r.expect_end(), Ok(()));
        }
    }
}

#[test]
fn block_aligned_sees_breaks() {
    let buf = [0u8; 64];
    let r = CdrReader::new(&buf, ByteOrder::Big, latin1());
    assert!(r.block_aligned(8, 48));
    assert!(!r.clone().starting_at(4).block_aligned(8, 8));
    assert!(r
        .clone()
        .starting_at(4)
        .with_stream_offset(4)
        .block_aligned(8, 8));
    let breaks = [AlignBreak { at: 24, origin: 20 }];
    let r = r.with_align_breaks(&breaks);
    assert!(r.block_aligned(8, 24));
    assert!(!r.block_aligned(8, 25));
    // After the break, alignment is relative to its origin.
    assert!(!r.clone().starting_at(24).block_aligned(8, 8));
    assert!(r.clone().starting_at(28).block_aligned(8, 8));
}
