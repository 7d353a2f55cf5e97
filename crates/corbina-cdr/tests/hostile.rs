//! Hostile input: random and mutated bytes through every `read_*` call and `CdrDecode` impl
//! never panic; lengths up to `u32::MAX` fail fast, before anything proportional to them is
//! allocated; a valid stream cut at any byte fails with `EndOfData` or `LengthExceedsData`.
//!
//! A counting global allocator measures the peak memory each decode holds on this thread.

use corbina_cdr::{
    AlignBreak, ByteOrder, CdrContext, CdrDecode, CdrReader, CdrWriter, CharCodeSet, CodeSets,
    Fixed, LongDouble, MarshalError, Result, WCharCodeSet, DEFAULT_MAX_DEPTH, PREALLOC_BYTES,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

#[path = "common/bin_struct.rs"]
mod bin_struct;
use bin_struct::BinStruct;

/// Tracks the bytes allocated and not yet freed by each thread, and their peak.
#[allow(unsafe_code)] // A GlobalAlloc is unsafe to implement; this one only forwards to System.
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    thread_local! {
        static LIVE: Cell<isize> = const { Cell::new(0) };
        static PEAK: Cell<isize> = const { Cell::new(0) };
    }

    fn track(delta: isize) {
        let _ = LIVE.try_with(|live| {
            let now = live.get() + delta;
            live.set(now);
            let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
        });
    }

    pub struct Counting;

    // SAFETY: every call is forwarded unchanged to the system allocator; the bookkeeping
    // touches only const-initialised thread-locals, which never allocate.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            track(layout.size() as isize);
            // SAFETY: the caller upholds GlobalAlloc's contract, passed on as is.
            unsafe { System.alloc(layout) }
        }
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            track(layout.size() as isize);
            // SAFETY: the caller upholds GlobalAlloc's contract, passed on as is.
            unsafe { System.alloc_zeroed(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            track(-(layout.size() as isize));
            // SAFETY: the caller upholds GlobalAlloc's contract, passed on as is.
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            track(new_size as isize - layout.size() as isize);
            // SAFETY: the caller upholds GlobalAlloc's contract, passed on as is.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    #[global_allocator]
    static GLOBAL: Counting = Counting;

    /// Runs `f` and returns its result with the most bytes it held allocated at once.
    pub fn peak_during<R>(f: impl FnOnce() -> R) -> (R, usize) {
        let start = LIVE.with(Cell::get);
        PEAK.with(|p| p.set(start));
        let r = f();
        let peak = PEAK.with(Cell::get);
        (r, (peak - start).max(0) as usize)
    }
}
use counting::peak_during;

const ORDERS: [ByteOrder; 2] = [ByteOrder::Big, ByteOrder::Little];

fn contexts() -> Vec<CdrContext> {
    let base = CdrContext::GIOP_1_2;
    let mut v = Vec::new();
    for minor in 0..=2 {
        v.push(base.with_giop_minor(minor));
        v.push(
            base.with_giop_minor(minor)
                .with_code_sets(CodeSets::UNICODE),
        );
        v.push(base.with_giop_minor(minor).with_code_sets(CodeSets {
            char_set: CharCodeSet::Iso8859_1,
            wchar_set: Some(WCharCodeSet::Ucs2),
        }));
    }
    v
}

/// A recursive IDL type (`struct Tree { sequence<Tree> children; }`).
#[derive(Debug)]
struct Tree(#[allow(dead_code)] Vec<Tree>);

impl<'a> CdrDecode<'a> for Tree {
    const MIN_WIRE_SIZE: usize = 4;
    fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
        Vec::<Tree>::decode(r).map(Tree)
    }
}

/// The most a decode of `len` input bytes may hold: a small multiple of the input (a
/// `String` or `Vec` header is 24 bytes for at least 4 octets of input, doubled by growth),
/// plus the bounded up-front reservation at each nesting level.
fn allowed_peak(len: usize) -> usize {
    32 * len + (len / 4).min(DEFAULT_MAX_DEPTH as usize + 1) * PREALLOC_BYTES + 4096
}

/// Checks the reader's invariants after any call, successful or not.
fn sane(r: &CdrReader<'_>, len: usize) -> std::result::Result<(), TestCaseError> {
    prop_assert!(
        r.position() <= len,
        "position {} past {}",
        r.position(),
        len
    );
    prop_assert_eq!(r.remaining(), r.rest().len());
    Ok(())
}

/// Checks that an error's offset lies within the buffer.
fn sane_err(e: &MarshalError, len: usize) -> std::result::Result<(), TestCaseError> {
    let offset = match *e {
        MarshalError::EndOfData { offset, .. }
        | MarshalError::LengthExceedsData { offset, .. }
        | MarshalError::InvalidBoolean { offset, .. }
        | MarshalError::StringNotTerminated { offset }
        | MarshalError::EmbeddedNul { offset }
        | MarshalError::InvalidCharData { offset, .. }
        | MarshalError::InvalidEnum { offset, .. }
        | MarshalError::InvalidFixed { offset, .. }
        | MarshalError::InvalidByteOrder { offset, .. }
        | MarshalError::TrailingData { offset, .. } => offset,
        _ => 0,
    };
    prop_assert!(offset <= len, "{e} offset past {len}");
    Ok(())
}

/// Every way to decode: one call per code, with parameters taken from `arg`.
fn op(r: &mut CdrReader<'_>, code: u8, arg: u32, depth: u32) -> Result<()> {
    let small = (arg % 64) as usize;
    match code % 64 {
        0 => r.read_octet().map(drop),
        1 => r.read_boolean().map(drop),
        2 => r.read_char().map(drop),
        3 => r.read_char_unicode().map(drop),
        4 => r.read_short().map(drop),
        5 => r.read_ushort().map(drop),
        6 => r.read_long().map(drop),
        7 => r.read_ulong().map(drop),
        8 => r.read_longlong().map(drop),
        9 => r.read_ulonglong().map(drop),
        10 => r.read_float().map(drop),
        11 => r.read_double().map(drop),
        12 => r.read_long_double().map(drop),
        13 => r.read_length(small).map(drop),
        14 => r.read_primitive_seq::<i16>().map(drop),
        15 => r.read_primitive_seq::<u32>().map(drop),
        16 => r.read_primitive_seq::<f64>().map(drop),
        17 => r.read_primitive_seq::<u64>().map(drop),
        18 => r.read_primitive_array::<f32>(small).map(drop),
        19 => r.read_primitive_array::<i64>(arg as usize).map(drop),
        20 => r.read_primitive_seq_into(&mut vec![1u16; small]),
        21 => r.read_octet_seq().map(drop),
        22 => r.read_boolean_seq().map(drop),
        23 => r.read_string_bytes().map(drop),
        24 => r.read_string().map(drop),
        25 => r.read_bounded_string(arg % 8).map(drop),
        26 => r.read_str_borrowed().map(drop),
        27 => r.read_wchar().map(drop),
        28 => r.read_wstring().map(drop),
        29 => {
            let mut inner = r.read_encapsulation()?;
            if depth < 4 {
                // A few reads inside, then leave it.
                for i in 0..3u8 {
                    op(
                        &mut inner,
                        code.wrapping_add(i * 17),
                        arg.rotate_left(7),
                        depth + 1,
                    )?;
                }
            }
            Ok(())
        }
        30 => r.read_block(1 << (arg % 4), (arg >> 4) as usize).map(drop),
        31 => r.read_enum(arg % 10).map(drop),
        32 => Fixed::decode(r, (arg % 40) as u8, ((arg >> 8) % 40) as u8).map(drop),
        33 => r.align(1 << (arg % 4)),
        34 => r.read_bytes(arg as usize).map(drop),
        35 => {
            let len = r.buffer().len();
            let start = (arg as usize) % (len + 3);
            r.encapsulation_at(start, (arg as usize >> 8) % (len + 3))
                .map(drop)
        }
        36 => {
            let _ = r.block_aligned(1 << (arg % 4), arg as usize);
            r.expect_end()
        }
        37 => String::decode(r).map(drop),
        38 => Vec::<String>::decode(r).map(drop),
        39 => Vec::<Vec<f64>>::decode(r).map(drop),
        40 => Vec::<bool>::decode(r).map(drop),
        41 => Vec::<char>::decode(r).map(drop),
        42 => Vec::<u8>::decode(r).map(drop),
        43 => <&[u8]>::decode(r).map(drop),
        44 => Vec::<LongDouble>::decode(r).map(drop),
        45 => <[i32; 4]>::decode(r).map(drop),
        46 => <[String; 2]>::decode(r).map(drop),
        47 => Box::<u64>::decode(r).map(drop),
        48 => Vec::<Vec<Vec<u16>>>::decode(r).map(drop),
        49 => Vec::<BinStruct>::decode(r).map(drop),
        50 => Vec::<[BinStruct; 2]>::decode(r).map(drop),
        51 => LongDouble::decode(r).map(drop),
        52 => char::decode(r).map(drop),
        53 => bool::decode(r).map(drop),
        54 => Tree::decode(r).map(drop),
        55 => Vec::<Vec<String>>::decode(r).map(drop),
        56 => Vec::<i16>::decode(r).map(drop),
        57 => Vec::<[u8; 3]>::decode(r).map(drop),
        58 => BinStruct::decode_vec(r, arg as usize).map(drop),
        59 => String::decode_vec(r, arg as usize).map(drop),
        60 => Vec::<Box<Vec<f32>>>::decode(r).map(drop),
        61 => r.read_primitive_seq::<u16>().map(drop),
        62 => r.read_primitive_array::<u32>(arg as usize).map(drop),
        _ => {
            let _ = r.rest();
            r.expect_end()
        }
    }
}

/// A valid stream holding one of everything, to mutate and truncate.
fn sample_stream(order: ByteOrder, ctx: CdrContext) -> Vec<u8> {
    let mut w = CdrWriter::with_byte_order(order, ctx);
    write_sample(&mut w, ctx).expect("sample");
    w.into_bytes()
}

fn write_sample(w: &mut CdrWriter<'_>, ctx: CdrContext) -> Result<()> {
    let wide = ctx.giop_minor > 0 && ctx.code_sets.wchar_set.is_some();
    w.write_octet(7);
    w.write_boolean(true);
    w.write_short(-3);
    w.write_ulong(0xdead_beef);
    w.write_double(2.5);
    w.write_long_double(LongDouble::from_f64(-1.25));
    w.write_string("héllo")?;
    w.write_primitive_seq(&[1.0f64, 2.0, 3.0])?;
    w.write_octet_seq(&[1, 2, 3, 4, 5])?;
    w.write_boolean_seq(&[true, false])?;
    w.write_primitive_seq(&[7u16, 8, 9])?;
    Fixed::new(-12345, 7, 2)?.encode(w)?;
    if wide {
        w.write_wchar('Ω')?;
        let text = match ctx.code_sets.wchar_set {
            Some(WCharCodeSet::Utf16) => "wide 😀 text",
            _ => "wide ☺ text",
        };
        w.write_wstring(text)?;
    }
    w.write_encapsulation_with_order(ByteOrder::Little, |e| {
        e.write_long(42);
        e.write_string("inner")?;
        e.write_encapsulation_with_order(ByteOrder::Big, |e2| {
            e2.write_double(1.5);
            Ok(())
        })
    })?;
    w.write_ulong(2); // enum
    let structs = [BinStruct {
        s: 1,
        c: b'x',
        l: -9,
        o: 3,
        d: 0.5,
    }; 3];
    w.write_length(structs.len())?;
    for s in &structs {
        s.encode_fields(w);
    }
    w.write_length(2)?;
    w.write_string("a")?;
    w.write_string("bc")?;
    Ok(())
}

fn read_sample(r: &mut CdrReader<'_>) -> Result<()> {
    let ctx = r.context();
    let wide = ctx.giop_minor > 0 && ctx.code_sets.wchar_set.is_some();
    assert_eq!(r.read_octet()?, 7);
    assert!(r.read_boolean()?);
    assert_eq!(r.read_short()?, -3);
    assert_eq!(r.read_ulong()?, 0xdead_beef);
    assert_eq!(r.read_double()?, 2.5);
    assert_eq!(r.read_long_double()?.to_f64(), -1.25);
    assert_eq!(r.read_string()?, "héllo");
    assert_eq!(r.read_primitive_seq::<f64>()?, [1.0, 2.0, 3.0]);
    assert_eq!(r.read_octet_seq()?, [1, 2, 3, 4, 5]);
    assert_eq!(r.read_boolean_seq()?, [true, false]);
    assert_eq!(Vec::<u16>::decode(r)?, [7, 8, 9]);
    assert_eq!(Fixed::decode(r, 7, 2)?.value, -12345);
    if wide {
        assert_eq!(r.read_wchar()?, 'Ω');
        assert!(r.read_wstring()?.starts_with("wide "));
    }
    let mut e = r.read_encapsulation()?;
    assert_eq!(e.read_long()?, 42);
    assert_eq!(e.read_string()?, "inner");
    let mut e2 = e.read_encapsulation()?;
    assert_eq!(e2.read_double()?, 1.5);
    e2.expect_end()?;
    e.expect_end()?;
    assert_eq!(r.read_enum(3)?, 2);
    assert_eq!(Vec::<BinStruct>::decode(r)?.len(), 3);
    assert_eq!(Vec::<String>::decode(r)?, ["a", "bc"]);
    Ok(())
}

fn input() -> impl Strategy<Value = (Vec<u8>, ByteOrder, CdrContext, usize)> {
    let random = prop::collection::vec(any::<u8>(), 0..160);
    let mutated = (
        prop::sample::select(ORDERS.to_vec()),
        prop::sample::select(contexts()),
        prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(order, ctx, edits, cut)| {
            let mut b = sample_stream(order, ctx);
            for (i, v) in edits {
                let i = i.index(b.len());
                b[i] = v;
            }
            let keep = cut.index(b.len() + 1).max(b.len() / 2);
            b.truncate(keep);
            b
        });
    (
        prop_oneof![random, mutated],
        prop::sample::select(ORDERS.to_vec()),
        prop::sample::select(contexts()),
        0usize..8,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    /// Each decoding call alone on arbitrary bytes, at every alignment.
    #[test]
    fn every_read_on_random_bytes((bytes, order, ctx, offset) in input(), arg: u32) {
        for code in 0..64u8 {
            let mut r = CdrReader::new(&bytes, order, ctx).with_stream_offset(offset);
            let (res, peak) = peak_during(|| op(&mut r, code, arg, 0));
            sane(&r, bytes.len()).map_err(|e| TestCaseError::fail(format!("op {code}: {e}")))?;
            if let Err(e) = &res {
                sane_err(e, bytes.len()).map_err(|e| TestCaseError::fail(format!("op {code}: {e}")))?;
            }
            prop_assert!(peak <= allowed_peak(bytes.len()), "op {code}: {peak} bytes for {} of input", bytes.len());
        }
    }

    /// Calls chained on one reader, as a real decoder would make them.
    #[test]
    fn chained_reads_on_random_bytes((bytes, order, ctx, offset) in input(), ops in prop::collection::vec((any::<u8>(), any::<u32>()), 1..24)) {
        let mut r = CdrReader::new(&bytes, order, ctx).with_stream_offset(offset);
        for (code, arg) in ops {
            let (res, peak) = peak_during(|| op(&mut r, code, arg, 0));
            sane(&r, bytes.len())?;
            prop_assert!(peak <= allowed_peak(bytes.len()));
            if res.is_err() {
                break;
            }
        }
    }

    /// Alignment breaks from a confused caller (unsorted, past the end, odd origins) are
    /// errors or odd values, never panics.
    #[test]
    fn align_breaks_never_panic(
        (bytes, order, ctx, _) in input(),
        raw in prop::collection::vec((0usize..200, -300isize..300), 0..4),
        ops in prop::collection::vec((any::<u8>(), any::<u32>()), 1..16),
        start in 0usize..200,
    ) {
        let breaks: Vec<AlignBreak> = raw.into_iter().map(|(at, origin)| AlignBreak { at, origin }).collect();
        let mut r = CdrReader::new(&bytes, order, ctx).starting_at(start).with_align_breaks(&breaks);
        for (code, arg) in ops {
            let res = op(&mut r, code, arg, 0);
            sane(&r, bytes.len())?;
            if res.is_err() {
                break;
            }
        }
    }
}

#[test]
fn sample_stream_reads_back() {
    for order in ORDERS {
        for ctx in contexts() {
            let bytes = sample_stream(order, ctx);
            let mut r = CdrReader::new(&bytes, order, ctx);
            read_sample(&mut r).unwrap();
            r.expect_end().unwrap();
        }
    }
}

#[test]
fn truncation_at_every_byte_is_end_of_data() {
    for order in ORDERS {
        for ctx in contexts() {
            let bytes = sample_stream(order, ctx);
            for cut in 0..bytes.len() {
                let short = &bytes[..cut];
                let mut r = CdrReader::new(short, order, ctx);
                let err = read_sample(&mut r).expect_err("a truncated stream cannot be whole");
                assert!(
                    matches!(
                        err,
                        MarshalError::EndOfData { .. } | MarshalError::LengthExceedsData { .. }
                    ),
                    "{order:?} {ctx:?} cut at {cut}: {err}"
                );
            }
        }
    }
}

/// Every decoder of a sequence, string or encapsulation, given 16 bytes that claim
/// 0xFFFFFFF0 elements.
fn huge_claims(order: ByteOrder, ctx: CdrContext) -> Vec<(&'static str, Result<()>)> {
    let mut buf = [0u8; 16];
    buf[..4].copy_from_slice(&match order {
        ByteOrder::Big => 0xffff_fff0u32.to_be_bytes(),
        ByteOrder::Little => 0xffff_fff0u32.to_le_bytes(),
    });
    let buf = &buf[..];
    let r = || CdrReader::new(buf, order, ctx);
    vec![
        ("read_length", r().read_length(1).map(drop)),
        (
            "read_primitive_seq<f64>",
            r().read_primitive_seq::<f64>().map(drop),
        ),
        (
            "read_primitive_seq<u16>",
            r().read_primitive_seq::<u16>().map(drop),
        ),
        (
            "read_primitive_seq_into",
            r().read_primitive_seq_into(&mut Vec::<u32>::new()),
        ),
        ("read_octet_seq", r().read_octet_seq().map(drop)),
        ("read_boolean_seq", r().read_boolean_seq().map(drop)),
        ("read_string", r().read_string().map(drop)),
        ("read_str_borrowed", r().read_str_borrowed().map(drop)),
        ("read_wstring", r().read_wstring().map(drop)),
        ("read_encapsulation", r().read_encapsulation().map(drop)),
        ("String", String::decode(&mut r()).map(drop)),
        ("Vec<String>", Vec::<String>::decode(&mut r()).map(drop)),
        ("Vec<Vec<f64>>", Vec::<Vec<f64>>::decode(&mut r()).map(drop)),
        ("Vec<bool>", Vec::<bool>::decode(&mut r()).map(drop)),
        ("Vec<char>", Vec::<char>::decode(&mut r()).map(drop)),
        ("Vec<u8>", Vec::<u8>::decode(&mut r()).map(drop)),
        ("&[u8]", <&[u8]>::decode(&mut r()).map(drop)),
        (
            "Vec<LongDouble>",
            Vec::<LongDouble>::decode(&mut r()).map(drop),
        ),
        (
            "Vec<BinStruct>",
            Vec::<BinStruct>::decode(&mut r()).map(drop),
        ),
        ("Vec<[u8; 0]>", Vec::<[u8; 0]>::decode(&mut r()).map(drop)),
        ("Vec<Tree>", Vec::<Tree>::decode(&mut r()).map(drop)),
        (
            "Vec<Box<String>>",
            Vec::<Box<String>>::decode(&mut r()).map(drop),
        ),
        (
            "String::decode_vec",
            String::decode_vec(&mut r(), 0xffff_fff0).map(drop),
        ),
        (
            "BinStruct::decode_vec",
            BinStruct::decode_vec(&mut r(), usize::MAX).map(drop),
        ),
        (
            "f64::decode_vec",
            f64::decode_vec(&mut r(), usize::MAX).map(drop),
        ),
        (
            "u8::decode_vec",
            u8::decode_vec(&mut r(), usize::MAX).map(drop),
        ),
    ]
}

#[test]
fn huge_lengths_fail_fast_without_allocating() {
    for order in ORDERS {
        for ctx in contexts() {
            let (results, peak) = peak_during(|| huge_claims(order, ctx));
            // The results vector itself, and nothing sized by the claims.
            assert!(peak < 4096, "{order:?} {ctx:?}: {peak} bytes allocated");
            for (what, res) in results {
                match res {
                    Err(MarshalError::LengthExceedsData { remaining, .. }) => {
                        assert!(remaining <= 16, "{what}")
                    }
                    // The decode_vec calls with a count past the bytes say EndOfData.
                    Err(MarshalError::EndOfData { .. }) if what.ends_with("decode_vec") => {}
                    other => panic!("{what} {order:?} {ctx:?}: {other:?}"),
                }
            }
        }
    }
}

/// Each level of `sequence<sequence<…>>` claims as many elements as the bytes left allow.
/// Reserving every claim would hold memory quadratic in the message (each level counts the
/// same remaining bytes); the bounded reservation keeps it proportional.
#[test]
fn nested_length_claims_do_not_multiply() {
    let len = 64 * 1024;
    for order in ORDERS {
        let mut bytes = Vec::with_capacity(len);
        while bytes.len() + 4 <= len {
            let claim = ((len - bytes.len() - 4) / 4) as u32;
            bytes.extend_from_slice(&match order {
                ByteOrder::Big => claim.to_be_bytes(),
                ByteOrder::Little => claim.to_le_bytes(),
            });
        }
        let (res, peak) = peak_during(|| {
            let mut r = CdrReader::new(&bytes, order, CdrContext::GIOP_1_2);
            Tree::decode(&mut r).map(drop)
        });
        assert!(
            matches!(res, Err(MarshalError::NestingTooDeep { .. })),
            "{res:?}"
        );
        assert!(
            peak <= allowed_peak(len),
            "{peak} bytes held for {len} bytes of input"
        );
    }
}

#[test]
fn encapsulation_at_outside_the_buffer_is_an_error() {
    let buf = [0u8, 0, 0, 0];
    let r = CdrReader::new(&buf, ByteOrder::Big, CdrContext::GIOP_1_2);
    assert!(r.encapsulation_at(4, 1).is_err());
    assert!(r.encapsulation_at(100, 0).is_err());
    assert!(r.encapsulation_at(2, 3).is_err());
    assert!(r.encapsulation_at(usize::MAX, usize::MAX).is_err());
    assert!(r.encapsulation_at(3, 1).is_ok());
}

#[test]
fn fixed_with_bad_fields_is_an_error_not_a_panic() {
    let mut w = CdrWriter::new(CdrContext::GIOP_1_2);
    for f in [
        Fixed {
            value: 1,
            digits: 0,
            scale: 0,
        },
        Fixed {
            value: 1,
            digits: 200,
            scale: 0,
        },
        Fixed {
            value: 12345,
            digits: 4,
            scale: 0,
        },
        Fixed {
            value: 1,
            digits: 3,
            scale: 4,
        },
        Fixed {
            value: i128::MIN,
            digits: 31,
            scale: 0,
        },
    ] {
        assert!(
            matches!(f.encode(&mut w), Err(MarshalError::InvalidFixed { .. })),
            "{f:?}"
        );
    }
    assert!(w.is_empty());
}
