//! Byte-exact vectors for the value encoding (big-endian, hand-built from CORBA 3.0 §15.3.4).

use super::*;
use crate::{ByteOrder, CdrContext, ExceptionKind};
use std::sync::Mutex;

const N: &str = "IDL:N:1.0";
const B: &str = "IDL:B:1.0";
const D: &str = "IDL:D:1.0";

/// Big-endian words, strings (length, octets, NUL, padding) and raw words.
#[derive(Clone)]
enum P<'s> {
    W(u32),
    S(&'s str),
}

fn bytes(parts: &[P<'_>]) -> Vec<u8> {
    let mut v = Vec::new();
    for p in parts {
        while v.len() % 4 != 0 {
            v.push(0);
        }
        match p {
            P::W(x) => v.extend_from_slice(&x.to_be_bytes()),
            P::S(s) => {
                v.extend_from_slice(&(s.len() as u32 + 1).to_be_bytes());
                v.extend_from_slice(s.as_bytes());
                v.push(0);
            }
        }
    }
    v
}

fn writer() -> CdrWriter<'static> {
    CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2)
}

fn reader(b: &[u8]) -> CdrReader<'_> {
    CdrReader::new(b, ByteOrder::Big, CdrContext::GIOP_1_2)
}

/// `valuetype N { public long id; public N next; };` held as shared, mutable nodes so that a
/// node can be registered before its state is read (cycles).
#[derive(Default)]
struct Node {
    id: Mutex<i32>,
    next: Mutex<Option<Arc<Node>>>,
}

fn node(id: i32) -> Arc<Node> {
    Arc::new(Node {
        id: Mutex::new(id),
        next: Mutex::new(None),
    })
}

fn write_node(
    out: &mut ValueOutput,
    w: &mut CdrWriter<'_>,
    n: Option<&Arc<Node>>,
    header: &WriteHeader<'_>,
) -> Result<()> {
    let Some(n) = n else {
        return out.write_null(w);
    };
    if out.begin_value(w, Arc::as_ptr(n) as usize, header)? {
        out.begin_member(w)?;
        w.write_long(*n.id.lock().unwrap());
        let next = n.next.lock().unwrap().clone();
        write_node(out, w, next.as_ref(), header)?;
        out.end_value(w)?;
    }
    Ok(())
}

fn read_node(input: &mut ValueInput, r: &mut CdrReader<'_>) -> Result<Option<Arc<Node>>> {
    let at = r.position();
    match input.read_value(r)? {
        ValueStart::Null => Ok(None),
        ValueStart::Indirection { target } => {
            Ok(Some(input.resolve(target, at)?.downcast::<Node>().unwrap()))
        }
        ValueStart::Value(h) => {
            assert_eq!(h.repository_ids.most_derived(), Some(N));
            let n = Arc::new(Node::default());
            input.register(h.position, n.clone());
            input.begin_member(r)?;
            *n.id.lock().unwrap() = r.read_long()?;
            *n.next.lock().unwrap() = read_node(input, r)?;
            input.end_value(r)?;
            Ok(Some(n))
        }
    }
}

/// a(1) → b(2) → a: the cycle is written once, then closed by an indirection; the second
/// repository id is an indirection too.
fn cycle_vector() -> Vec<u8> {
    bytes(&[
        P::W(0x7fff_ff02), // 0: a's tag, one repository id
        P::S(N),           // 4
        P::W(1),           // 20: a.id
        P::W(0x7fff_ff02), // 24: b's tag
        P::W(INDIRECTION_TAG),
        P::W(4u32.wrapping_sub(32)), // 32: to the id at 4
        P::W(2),                     // 36: b.id
        P::W(INDIRECTION_TAG),       // 40: b.next = a
        P::W(0u32.wrapping_sub(44)), // 44: to a's tag at 0
    ])
}

#[test]
fn cycle_is_written_once_then_by_indirection() {
    let a = node(1);
    let b = node(2);
    *a.next.lock().unwrap() = Some(b.clone());
    *b.next.lock().unwrap() = Some(a.clone());
    let mut w = writer();
    write_node(
        &mut ValueOutput::new(),
        &mut w,
        Some(&a),
        &WriteHeader::single(N),
    )
    .unwrap();
    assert_eq!(w.into_bytes(), cycle_vector());
    // Break the cycle so the test does not leak.
    *b.next.lock().unwrap() = None;
}

#[test]
fn cycle_arrives_as_one_shared_graph() {
    let v = cycle_vector();
    let mut r = reader(&v);
    let a = read_node(&mut ValueInput::new(), &mut r).unwrap().unwrap();
    r.expect_end().unwrap();
    let b = a.next.lock().unwrap().clone().unwrap();
    assert_eq!(*b.id.lock().unwrap(), 2);
    let back = b.next.lock().unwrap().take().unwrap();
    assert!(Arc::ptr_eq(&a, &back));
}

#[test]
fn shared_value_round_trips_in_little_endian() {
    // Two references to one node from a chunked list: sent once, received as one.
    let shared = node(9);
    let first = node(1);
    *first.next.lock().unwrap() = Some(shared.clone());
    let mut w = CdrWriter::with_byte_order(ByteOrder::Little, CdrContext::GIOP_1_2);
    let mut out = ValueOutput::new();
    let header = WriteHeader {
        chunked: true,
        ..WriteHeader::single(N)
    };
    write_node(&mut out, &mut w, Some(&first), &header).unwrap();
    write_node(&mut out, &mut w, Some(&shared), &header).unwrap();
    write_node(&mut out, &mut w, None, &header).unwrap();
    let v = w.into_bytes();
    let mut r = CdrReader::new(&v, ByteOrder::Little, CdrContext::GIOP_1_2);
    let mut input = ValueInput::new();
    let first = read_node(&mut input, &mut r).unwrap().unwrap();
    let again = read_node(&mut input, &mut r).unwrap().unwrap();
    assert!(read_node(&mut input, &mut r).unwrap().is_none());
    r.expect_end().unwrap();
    let inner = first.next.lock().unwrap().clone().unwrap();
    assert!(Arc::ptr_eq(&inner, &again));
    assert_eq!(*again.id.lock().unwrap(), 9);
}

/// `valuetype B truncatable { long b; }; valuetype D : truncatable B { string s; N n; long d; }`
/// with n = N(5), then a marker word after the value.
fn truncatable_vector() -> Vec<u8> {
    bytes(&[
        P::W(0x7fff_ff0e), // 0: list of ids, chunked
        P::W(2),           // 4
        P::S(D),           // 8
        P::S(B),           // 24
        P::W(11),          // 40: chunk: b, s
        P::W(10),          // 44: b
        P::S("xy"),        // 48
        P::W(0x7fff_ff0a), // 56: nested N, chunked (it is inside a chunked value)
        P::S(N),           // 60
        P::W(8),           // 76: chunk: id, next
        P::W(5),           // 80
        P::W(NULL_TAG),    // 84
        P::W(-2i32 as u32),
        P::W(4), // 92: chunk: d
        P::W(20),
        P::W(-1i32 as u32), // 100: D's end tag
        P::W(0xdead_beef),
    ])
}

#[test]
fn truncatable_value_is_chunked_byte_exact() {
    let n = node(5);
    let mut w = writer();
    let mut out = ValueOutput::new();
    assert!(out
        .begin_value(&mut w, 1, &WriteHeader::truncatable(&[D, B]))
        .unwrap());
    out.begin_member(&mut w).unwrap();
    w.write_long(10);
    out.begin_member(&mut w).unwrap();
    w.write_string("xy").unwrap();
    write_node(&mut out, &mut w, Some(&n), &WriteHeader::single(N)).unwrap();
    out.begin_member(&mut w).unwrap();
    w.write_long(20);
    out.end_value(&mut w).unwrap();
    w.write_ulong(0xdead_beef);
    assert_eq!(w.into_bytes(), truncatable_vector());
}

#[test]
fn derived_value_reads_whole() {
    let v = truncatable_vector();
    let mut r = reader(&v);
    let mut input = ValueInput::new();
    let ValueStart::Value(h) = input.read_value(&mut r).unwrap() else {
        panic!("not a value")
    };
    assert!(h.chunked);
    assert_eq!(h.repository_ids.iter().collect::<Vec<_>>(), [D, B]);
    input.begin_member(&mut r).unwrap();
    assert_eq!(r.read_long().unwrap(), 10);
    input.begin_member(&mut r).unwrap();
    assert_eq!(r.read_string().unwrap(), "xy");
    let n = read_node(&mut input, &mut r).unwrap().unwrap();
    assert_eq!(*n.id.lock().unwrap(), 5);
    input.begin_member(&mut r).unwrap();
    assert_eq!(r.read_long().unwrap(), 20);
    input.end_value(&mut r).unwrap();
    assert_eq!(r.read_ulong().unwrap(), 0xdead_beef);
    assert!(!input.in_value());
}

#[test]
fn unknown_derived_state_is_truncated_to_the_base() {
    let v = truncatable_vector();
    let mut r = reader(&v);
    let mut input = ValueInput::new();
    let ValueStart::Value(h) = input.read_value(&mut r).unwrap() else {
        panic!("not a value")
    };
    // The receiver knows only B: it reads B's state and skips the rest.
    assert!(h.repository_ids.iter().any(|id| id == B));
    input.begin_member(&mut r).unwrap();
    assert_eq!(r.read_long().unwrap(), 10);
    input.end_value(&mut r).unwrap();
    assert_eq!(r.read_ulong().unwrap(), 0xdead_beef);
    // The skipped nested value is known, but cannot be resolved.
    let err = input.resolve(56, 100).unwrap_err();
    assert!(matches!(err, MarshalError::InvalidValue { .. }));
}

#[test]
fn whole_unknown_value_is_skipped() {
    let v = truncatable_vector();
    let mut r = reader(&v);
    let start = ValueInput::new().skip_value(&mut r).unwrap();
    assert!(matches!(
        start,
        ValueStart::Value(ValueHeader { position: 0, .. })
    ));
    assert_eq!(r.read_ulong().unwrap(), 0xdead_beef);
}

/// `valuetype B { long b; N n; }` chunked, where the one end tag -1 ends both N and B.
fn shared_end_tag_vector() -> Vec<u8> {
    bytes(&[
        P::W(0x7fff_ff0a),
        P::S(B), // 4
        P::W(4), // 20: chunk
        P::W(1),
        P::W(0x7fff_ff0a), // 28: nested N
        P::W(INDIRECTION_TAG),
        P::W(4u32.wrapping_sub(36)), // 36: repository id B again
        P::W(4),
        P::W(2),
        P::W(-1i32 as u32), // 48: ends level 2 and level 1
        P::W(0xdead_beef),
    ])
}

#[test]
fn one_end_tag_ends_nested_values_too() {
    let v = shared_end_tag_vector();
    for read_nested in [true, false] {
        let mut r = reader(&v);
        let mut input = ValueInput::new();
        assert!(matches!(
            input.read_value(&mut r).unwrap(),
            ValueStart::Value(_)
        ));
        input.begin_member(&mut r).unwrap();
        assert_eq!(r.read_long().unwrap(), 1);
        if read_nested {
            let ValueStart::Value(h) = input.read_value(&mut r).unwrap() else {
                panic!("not a value")
            };
            assert_eq!(h.repository_ids.most_derived(), Some(B));
            input.begin_member(&mut r).unwrap();
            assert_eq!(r.read_long().unwrap(), 2);
            input.end_value(&mut r).unwrap();
            // B's state is over: reading more of it is an error, not a misread.
            let mut probe = r.clone();
            assert!(input.begin_member(&mut probe).is_err());
        }
        input.end_value(&mut r).unwrap();
        assert_eq!(r.read_ulong().unwrap(), 0xdead_beef);
    }
}

#[test]
fn repository_id_list_and_codebase_indirections() {
    let v = bytes(&[
        P::W(0x7fff_ff07), // 0: codebase and a list
        P::S("http://x/"), // 4
        P::W(1),           // 20: count
        P::S(B),           // 24
        P::W(7),           // 40: unchunked state
        P::W(0x7fff_ff07), // 44
        P::W(INDIRECTION_TAG),
        P::W(4u32.wrapping_sub(52)), // 52: codebase at 4
        P::W(INDIRECTION_TAG),
        P::W(20u32.wrapping_sub(60)), // 60: the list at 20
        P::W(8),
    ]);
    let mut r = reader(&v);
    let mut input = ValueInput::new();
    let mut headers = Vec::new();
    for state in [7, 8] {
        let ValueStart::Value(h) = input.read_value(&mut r).unwrap() else {
            panic!("not a value")
        };
        input.begin_member(&mut r).unwrap();
        assert_eq!(r.read_long().unwrap(), state);
        input.end_value(&mut r).unwrap();
        headers.push(h);
    }
    r.expect_end().unwrap();
    assert_eq!(headers[0].codebase.as_deref(), Some("http://x/"));
    assert_eq!(headers[0].codebase, headers[1].codebase);
    assert_eq!(headers[0].repository_ids, headers[1].repository_ids);
    assert_eq!(headers[1].repository_ids.iter().collect::<Vec<_>>(), [B]);

    // The writer sends a repeated codebase and id by indirection.
    let mut w = writer();
    let mut out = ValueOutput::new();
    let header = WriteHeader {
        codebase: Some("http://x/"),
        ..WriteHeader::single(B)
    };
    for (identity, state) in [(1, 7), (2, 8)] {
        assert!(out.begin_value(&mut w, identity, &header).unwrap());
        out.begin_member(&mut w).unwrap();
        w.write_long(state);
        out.end_value(&mut w).unwrap();
    }
    let expected = bytes(&[
        P::W(0x7fff_ff03),
        P::S("http://x/"), // 4
        P::S(B),           // 20
        P::W(7),           // 36
        P::W(0x7fff_ff03), // 40
        P::W(INDIRECTION_TAG),
        P::W(4u32.wrapping_sub(48)),
        P::W(INDIRECTION_TAG),
        P::W(20u32.wrapping_sub(56)),
        P::W(8),
    ]);
    assert_eq!(w.into_bytes(), expected);
}

#[test]
fn null_and_indirection_are_written_inside_chunks() {
    let mut w = writer();
    let mut out = ValueOutput::new();
    let header = WriteHeader {
        repository_ids: WriteIds::None,
        codebase: None,
        chunked: true,
    };
    assert!(out.begin_value(&mut w, 1, &header).unwrap());
    out.write_null(&mut w).unwrap();
    assert!(!out.begin_value(&mut w, 1, &header).unwrap());
    out.end_value(&mut w).unwrap();
    let v = w.into_bytes();
    let expected = bytes(&[
        P::W(0x7fff_ff08),
        P::W(12), // 4: chunk
        P::W(NULL_TAG),
        P::W(INDIRECTION_TAG),
        P::W(0u32.wrapping_sub(16)), // 16: to the tag at 0
        P::W(-1i32 as u32),
    ]);
    assert_eq!(v, expected);
    let mut r = reader(&v);
    let mut input = ValueInput::new();
    assert!(matches!(
        input.read_value(&mut r).unwrap(),
        ValueStart::Value(_)
    ));
    input.register(0, Arc::new(()));
    input.begin_member(&mut r).unwrap();
    assert_eq!(input.read_value(&mut r).unwrap(), ValueStart::Null);
    assert_eq!(
        input.read_value(&mut r).unwrap(),
        ValueStart::Indirection { target: 0 }
    );
    input.end_value(&mut r).unwrap();
    r.expect_end().unwrap();
}

#[test]
fn value_with_no_state_has_no_empty_chunk() {
    let mut w = writer();
    let mut out = ValueOutput::new();
    let header = WriteHeader::truncatable(&[B]);
    assert!(out.begin_value(&mut w, 1, &header).unwrap());
    out.begin_member(&mut w).unwrap(); // a member that writes nothing (an empty array)
    out.end_value(&mut w).unwrap();
    let expected = bytes(&[P::W(0x7fff_ff0e), P::W(1), P::S(B), P::W(-1i32 as u32)]);
    assert_eq!(w.into_bytes(), expected);
}

fn read_err(
    v: &[u8],
    f: impl FnOnce(&mut ValueInput, &mut CdrReader<'_>) -> Result<()>,
) -> MarshalError {
    let mut r = reader(v);
    let err = f(&mut ValueInput::new(), &mut r).unwrap_err();
    // MARSHAL, or IMP_LIMIT for a count beyond what Corbina accepts.
    assert!(
        matches!(
            err.exception_kind(),
            ExceptionKind::Marshal | ExceptionKind::ImpLimit
        ),
        "{err}"
    );
    err
}

fn read_whole(input: &mut ValueInput, r: &mut CdrReader<'_>) -> Result<()> {
    input.skip_value(r).map(drop)
}

#[test]
fn hostile_indirections_are_refused() {
    // Forward, onto itself, before the buffer.
    for offset in [4u32, -4i32 as u32, -100i32 as u32] {
        let v = bytes(&[P::W(INDIRECTION_TAG), P::W(offset)]);
        let err = read_err(&v, |i, r| i.read_value(r).map(drop));
        assert!(
            matches!(err, MarshalError::InvalidIndirection { .. }),
            "{err}"
        );
    }
    // Backwards, but not at a value's tag.
    let v = bytes(&[
        P::W(0x7fff_ff00),
        P::W(1),
        P::W(INDIRECTION_TAG),
        P::W(4u32.wrapping_sub(12)),
    ]);
    let err = read_err(&v, |i, r| {
        i.read_value(r)?;
        i.begin_member(r)?;
        r.read_long()?;
        i.end_value(r)?;
        i.read_value(r).map(drop)
    });
    assert!(
        matches!(err, MarshalError::InvalidIndirection { offset: 8, .. }),
        "{err}"
    );
    // A repository id indirection to something that is not a string read before.
    let v = bytes(&[P::W(0x7fff_ff02), P::W(INDIRECTION_TAG), P::W(-8i32 as u32)]);
    let err = read_err(&v, |i, r| i.read_value(r).map(drop));
    assert!(
        matches!(err, MarshalError::InvalidIndirection { .. }),
        "{err}"
    );
}

#[test]
fn hostile_lengths_and_tags_are_refused() {
    // A chunk longer than the data.
    let v = bytes(&[P::W(0x7fff_ff08), P::W(0x1000), P::W(0)]);
    let err = read_err(&v, read_whole);
    assert!(
        matches!(err, MarshalError::LengthExceedsData { .. }),
        "{err}"
    );
    let err = read_err(&v, |i, r| {
        i.read_value(r)?;
        i.begin_member(r)
    });
    assert!(
        matches!(err, MarshalError::LengthExceedsData { .. }),
        "{err}"
    );
    // Repository id counts: too many, more than the data, none.
    for count in [0x7fff_ffff, 50, 0] {
        let v = bytes(&[P::W(0x7fff_ff06), P::W(count), P::S(B)]);
        let err = read_err(&v, |i, r| i.read_value(r).map(drop));
        assert!(
            matches!(
                err,
                MarshalError::LimitExceeded { .. }
                    | MarshalError::LengthExceedsData { .. }
                    | MarshalError::InvalidValue { .. }
            ),
            "{err}"
        );
    }
    // Reserved repository-id bits, reserved flag bits, not a tag at all.
    for tag in [0x7fff_ff04, 0x7fff_ff10, 0x1234_5678, 0x8000_0000] {
        let v = bytes(&[P::W(tag), P::W(0), P::W(0)]);
        let err = read_err(&v, |i, r| i.read_value(r).map(drop));
        assert!(
            matches!(err, MarshalError::InvalidValue { .. }),
            "{tag:#x}: {err}"
        );
    }
    // An end tag for a level deeper than open.
    let v = bytes(&[P::W(0x7fff_ff08), P::W(-2i32 as u32)]);
    let err = read_err(&v, read_whole);
    assert!(matches!(err, MarshalError::InvalidValue { .. }), "{err}");
    // An unchunked value nested in a chunked one, and a value header inside a chunk.
    let v = bytes(&[P::W(0x7fff_ff08), P::W(0x7fff_ff00)]);
    let err = read_err(&v, |i, r| {
        i.read_value(r)?;
        i.read_value(r).map(drop)
    });
    assert!(matches!(err, MarshalError::InvalidValue { .. }), "{err}");
    let v = bytes(&[
        P::W(0x7fff_ff08),
        P::W(8),
        P::W(0x7fff_ff08),
        P::W(-2i32 as u32),
    ]);
    let err = read_err(&v, |i, r| {
        i.read_value(r)?;
        i.begin_member(r)?;
        i.read_value(r).map(drop)
    });
    assert!(matches!(err, MarshalError::InvalidValue { .. }), "{err}");
    // An unchunked value of unknown type cannot be skipped.
    let v = bytes(&[P::W(0x7fff_ff00), P::W(1)]);
    let err = read_err(&v, read_whole);
    assert!(matches!(err, MarshalError::InvalidValue { .. }), "{err}");
}

#[test]
fn deep_nesting_is_refused_not_recursed() {
    // 10 000 nested chunked headers: skipping them runs out of data, not of stack (the
    // skipper keeps the values it steps over in a list)...
    let v = bytes(&vec![P::W(0x7fff_ff08); 10_000]);
    let err = read_err(&v, read_whole);
    assert!(matches!(err, MarshalError::EndOfData { .. }), "{err}");
    // ... or stops at the nesting limit, whichever comes first.
    let mut r = reader(&v);
    let mut input = ValueInput::with_max_nesting(3);
    for _ in 0..3 {
        input.read_value(&mut r).unwrap();
    }
    assert!(matches!(
        input.read_value(&mut r),
        Err(MarshalError::NestingTooDeep { limit: 3, .. })
    ));
    let mut r = reader(&v);
    let err = ValueInput::with_max_nesting(5_000)
        .skip_value(&mut r)
        .unwrap_err();
    assert!(
        matches!(err, MarshalError::NestingTooDeep { limit: 5_000, .. }),
        "{err}"
    );
}

#[test]
fn end_value_without_a_value_is_an_error() {
    let mut r = reader(&[]);
    assert!(ValueInput::new().end_value(&mut r).is_err());
    assert!(ValueOutput::new().end_value(&mut writer()).is_err());
}

/// `valuetype S { long a; short b; sequence<long> c; string d; }` = {1, 2, [10, 20, 30], "xy"}
/// as a Java ORB may chunk it: chunks end between `a` and `b`, after `b` (mid-padding), between
/// `c`'s length and its elements and between two of its elements; then a marker word.
fn split_members_vector() -> Vec<u8> {
    let mut v = bytes(&[
        P::W(0x7fff_ff0a), // 0: one id, chunked
        P::S("IDL:S:1.0"), // 4
        P::W(4),           // 20: chunk: a
        P::W(1),           // 24
        P::W(2),           // 28: chunk: b, a short: the chunk ends at 34
    ]);
    v.extend_from_slice(&[0, 2, 0, 0]); // 32: b, then padding
    v.extend_from_slice(&bytes(&[
        P::W(4),            // 36: chunk: c's length
        P::W(3),            // 40
        P::W(8),            // 44: chunk: c[0], c[1]
        P::W(10),           // 48
        P::W(20),           // 52
        P::W(4),            // 56: chunk: c[2]
        P::W(30),           // 60
        P::W(7),            // 64: chunk: d, ends at 75
        P::S("xy"),         // 68
        P::W(-1i32 as u32), // 76: end tag
        P::W(0xdead_beef),  // 80
    ]));
    v
}

#[test]
fn state_members_split_across_chunks_are_read() {
    let v = split_members_vector();
    assert_eq!(v.len(), 84);
    assert_eq!(&v[36..40], &4u32.to_be_bytes());
    let mut r = reader(&v);
    let mut input = ValueInput::new();
    let ValueStart::Value(h) = input.read_value(&mut r).unwrap() else {
        panic!("not a value")
    };
    assert!(h.chunked);
    input.begin_member(&mut r).unwrap();
    assert_eq!(r.read_long().unwrap(), 1);
    input.begin_member(&mut r).unwrap();
    assert_eq!(r.read_short().unwrap(), 2);
    input.begin_member(&mut r).unwrap();
    assert_eq!(r.read_primitive_seq::<i32>().unwrap(), [10, 20, 30]);
    input.begin_member(&mut r).unwrap();
    assert_eq!(r.read_string().unwrap(), "xy");
    input.end_value(&mut r).unwrap();
    assert_eq!(r.read_ulong().unwrap(), 0xdead_beef);
    assert!(r.is_empty());

    // The same, element by element and into a caller's buffer.
    let mut r = reader(&v);
    let mut input = ValueInput::new();
    input.read_value(&mut r).unwrap();
    input.begin_member(&mut r).unwrap();
    assert_eq!((r.read_long().unwrap(), r.read_short().unwrap()), (1, 2));
    let n = r.read_ulong().unwrap();
    let c: Vec<i32> = (0..n).map(|_| r.read_long().unwrap()).collect();
    assert_eq!(c, [10, 20, 30]);
    assert_eq!(r.read_string().unwrap(), "xy");
    input.end_value(&mut r).unwrap();
    assert_eq!(r.read_ulong().unwrap(), 0xdead_beef);

    let mut r = reader(&v);
    let mut input = ValueInput::new();
    input.read_value(&mut r).unwrap();
    input.begin_member(&mut r).unwrap();
    r.read_long().unwrap();
    r.read_short().unwrap();
    let mut c = vec![7; 100];
    r.read_primitive_seq_into(&mut c).unwrap();
    assert_eq!(c, [10, 20, 30]);
}

/// Fragment breaks (GIOP 1.1) where chunks are open, some inside their padding: the reader
/// handles both in its cold path and reads the same state.
#[test]
fn split_members_read_the_same_across_fragment_breaks() {
    let v = split_members_vector();
    let read = |breaks: &[crate::AlignBreak]| {
        let mut r = reader(&v).with_align_breaks(breaks);
        let mut input = ValueInput::new();
        input.read_value(&mut r)?;
        input.begin_member(&mut r)?;
        let (a, b) = (r.read_long()?, r.read_short()?);
        input.begin_member(&mut r)?;
        let c = r.read_primitive_seq::<i32>()?;
        input.begin_member(&mut r)?;
        let d = r.read_string()?;
        input.end_value(&mut r)?;
        let tail = r.read_ulong()?;
        r.expect_end()?;
        Ok::<_, MarshalError>((a, b, c, d, tail))
    };
    let want = (1, 2, vec![10, 20, 30], "xy".to_owned(), 0xdead_beef);
    // Alignment origins kept 8-aligned, so the bytes mean the same with the breaks.
    let brk = |at: usize| crate::AlignBreak {
        at,
        origin: (at & !7) as isize,
    };
    for at in (4..84).step_by(2) {
        assert_eq!(read(&[brk(at)]).unwrap(), want, "break at {at}");
    }
    let all: Vec<_> = (4..84).step_by(4).map(brk).collect();
    assert_eq!(read(&all).unwrap(), want);
}

#[test]
fn truncation_skips_state_split_across_chunks() {
    // A receiver that knows only `a` skips the rest, whatever the chunking.
    let v = split_members_vector();
    let mut r = reader(&v);
    let mut input = ValueInput::new();
    input.read_value(&mut r).unwrap();
    input.begin_member(&mut r).unwrap();
    assert_eq!(r.read_long().unwrap(), 1);
    r.read_short().unwrap();
    input.end_value(&mut r).unwrap();
    assert_eq!(r.read_ulong().unwrap(), 0xdead_beef);
}

#[test]
fn split_primitives_and_reads_past_the_chunks_are_refused() {
    // A long split 2 + 2 octets over two chunks.
    let v = bytes(&[
        P::W(0x7fff_ff08),
        P::W(2),
        P::W(0x0001_0000),
        P::W(2),
        P::W(0),
    ]);
    let err = read_err(&v, |i, r| {
        i.read_value(r)?;
        i.begin_member(r)?;
        r.read_long()?;
        i.end_value(r)
    });
    assert!(matches!(err, MarshalError::InvalidValue { .. }), "{err}");
    // An array element split over two chunks.
    let v = bytes(&[
        P::W(0x7fff_ff08),
        P::W(10),
        P::W(2),
        P::W(1),
        P::W(0x0002_0000),
        P::W(2),
        P::W(0),
        P::W(-1i32 as u32),
    ]);
    let err = read_err(&v, |i, r| {
        i.read_value(r)?;
        i.begin_member(r)?;
        r.read_primitive_seq::<i32>().map(drop)
    });
    assert!(matches!(err, MarshalError::InvalidValue { .. }), "{err}");
    // A member read after the last chunk: the end tag is not state.
    let v = bytes(&[P::W(0x7fff_ff08), P::W(4), P::W(1), P::W(-1i32 as u32)]);
    let err = read_err(&v, |i, r| {
        i.read_value(r)?;
        i.begin_member(r)?;
        r.read_long()?;
        r.read_long().map(drop)
    });
    assert!(matches!(err, MarshalError::InvalidValue { .. }), "{err}");
    // A string running past its chunk.
    let v = bytes(&[
        P::W(0x7fff_ff08),
        P::W(6),
        P::S("abcdef"),
        P::W(-1i32 as u32),
    ]);
    let err = read_err(&v, |i, r| {
        i.read_value(r)?;
        i.begin_member(r)?;
        r.read_string()?;
        i.end_value(r)
    });
    assert!(matches!(err, MarshalError::InvalidValue { .. }), "{err}");
}

#[test]
fn value_nesting_has_a_limit_of_its_own_not_the_readers() {
    // The reader allows 512 levels of its own; values are bounded by their limit alone.
    let v = bytes(&vec![P::W(0x7fff_ff08); 2_000]);
    let mut r = reader(&v);
    let mut input = ValueInput::with_max_nesting(1_500);
    assert_eq!(input.max_nesting(), 1_500);
    let err = loop {
        if let Err(e) = input.read_value(&mut r) {
            break e;
        }
    };
    assert!(
        matches!(err, MarshalError::NestingTooDeep { limit: 1_500, offset } if offset == 4 * 1_500),
        "{err}"
    );
    assert_eq!(input.depth(), 1_500);
    assert_eq!(ValueInput::new().max_nesting(), max_value_nesting());
    const { assert!(DEFAULT_MAX_VALUE_NESTING >= 100_000) };
}

#[test]
fn encoding_refuses_a_value_nested_deeper_than_the_limit_before_writing_it() {
    let header = WriteHeader::single(N);
    let mut w = writer();
    let mut out = ValueOutput::with_max_nesting(3);
    for id in 1..=3 {
        assert!(out.begin_value(&mut w, id, &header).unwrap());
        out.begin_member(&mut w).unwrap();
        w.write_long(id as i32);
    }
    let len = w.len();
    let err = out.begin_value(&mut w, 4, &header).unwrap_err();
    assert!(
        matches!(err, MarshalError::NestingTooDeep { limit: 3, .. }),
        "{err}"
    );
    assert_eq!(w.len(), len, "nothing written for the refused value");
    // An indirection to a value already written is not a level: it goes out.
    assert!(!out.begin_value(&mut w, 2, &header).unwrap());
    assert_eq!(out.depth(), 3);
    // Closing a level makes room again.
    out.end_value(&mut w).unwrap();
    assert!(out.begin_value(&mut w, 5, &header).unwrap());
    assert_eq!(ValueOutput::new().max_nesting(), max_value_nesting());
}

/// Skipping a value of a type the receiver does not know steps over its nested values in a
/// loop: 100,000 of them nested in one another skip in a thread of 256 KiB.
#[test]
fn skipping_deeply_nested_unknown_values_takes_no_stack_per_level() {
    const DEPTH: usize = 100_000;
    let mut parts = Vec::with_capacity(3 * DEPTH + 2);
    for _ in 0..DEPTH {
        // A chunked value of type N: a chunk holding one long, then the nested value.
        parts.extend([P::W(0x7fff_ff0a), P::S(N), P::W(4), P::W(7)]);
    }
    parts.push(P::W(0)); // the innermost value's `next`: null
    parts.push(P::W(-1i32 as u32)); // one end tag closes them all
    parts.push(P::W(0x1234_5678)); // after the value
    let v = bytes(&parts);
    let after = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            let mut r = reader(&v);
            let mut input = ValueInput::with_max_nesting(DEPTH as u32);
            let start = input.skip_value(&mut r).unwrap();
            assert!(matches!(start, ValueStart::Value(_)));
            assert!(!input.in_value());
            r.read_ulong().unwrap()
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(after, 0x1234_5678);
}

#[test]
fn whole_chunks_are_handed_out_up_to_a_nested_value_or_the_end_tag() {
    let v = truncatable_vector();
    let mut r = reader(&v);
    let mut input = ValueInput::new();
    assert!(matches!(
        input.read_value(&mut r).unwrap(),
        ValueStart::Value(_)
    ));
    // The first chunk (b, s) whole, then the nested N stands where a chunk would.
    let StateChunk::Chunk { position, bytes } = input.next_chunk(&mut r).unwrap() else {
        panic!("not a chunk")
    };
    assert_eq!((position, bytes.len()), (44, 11));
    assert_eq!(&bytes[..4], 10u32.to_be_bytes());
    assert_eq!(input.next_chunk(&mut r).unwrap(), StateChunk::Value);
    read_node(&mut input, &mut r).unwrap().unwrap();
    let StateChunk::Chunk { position, bytes } = input.next_chunk(&mut r).unwrap() else {
        panic!("not a chunk")
    };
    assert_eq!((position, bytes), (96, &20u32.to_be_bytes()[..]));
    assert_eq!(input.next_chunk(&mut r).unwrap(), StateChunk::End);
    input.end_value(&mut r).unwrap();
    assert_eq!(r.read_ulong().unwrap(), 0xdead_beef);
    // Outside a chunked value, and from inside a chunk, nothing is handed out.
    assert!(input.next_chunk(&mut r).is_err());
    let mut r = reader(&v);
    let mut input = ValueInput::new();
    input.read_value(&mut r).unwrap();
    input.begin_member(&mut r).unwrap();
    r.read_long().unwrap();
    assert!(input.next_chunk(&mut r).is_err());
    // A chunk longer than the data left.
    let mut bad = v.clone();
    bad[40..44].copy_from_slice(&1000u32.to_be_bytes());
    let mut r = reader(&bad);
    let mut input = ValueInput::new();
    input.read_value(&mut r).unwrap();
    assert!(matches!(
        input.next_chunk(&mut r),
        Err(MarshalError::LengthExceedsData { .. })
    ));
}

/// A chunk may end right before an octet-sized member (omniORB ends chunks after strings):
/// `begin_member` steps into the next chunk itself.
#[test]
fn a_boolean_after_a_chunk_end_is_read_from_the_next_chunk() {
    let mut w = writer();
    let mut out = ValueOutput::new();
    assert!(out
        .begin_value(&mut w, 1, &WriteHeader::truncatable(&[D, B]))
        .unwrap());
    out.begin_member(&mut w).unwrap();
    w.write_string("xyz").unwrap();
    out.end_member_chunk(&mut w).unwrap();
    out.begin_member(&mut w).unwrap();
    w.write_boolean(true);
    out.begin_member(&mut w).unwrap();
    w.write_octet(7);
    out.end_value(&mut w).unwrap();
    let v = w.into_bytes();
    let mut r = reader(&v);
    let mut input = ValueInput::new();
    input.read_value(&mut r).unwrap();
    input.begin_member(&mut r).unwrap();
    assert_eq!(r.read_string().unwrap(), "xyz");
    input.begin_member(&mut r).unwrap();
    assert!(r.read_boolean().unwrap());
    input.begin_member(&mut r).unwrap();
    assert_eq!(r.read_octet().unwrap(), 7);
    input.end_value(&mut r).unwrap();
    assert_eq!(r.remaining(), 0);
}

/// A sender may end a chunk inside a state member, right before an octet, a boolean or a
/// char (CORBA 3.0 §15.3.4.6 forbids only splitting a primitive or a string): the reader steps
/// into the next chunk for single-byte reads as it does for aligned ones.
#[test]
fn octets_booleans_and_chars_after_a_chunk_end_inside_a_member_are_read() {
    let mut v = bytes(&[
        P::W(0x7fff_ff0a), // 0: one id, chunked
        P::S("IDL:S:1.0"), // 4
        P::W(4),           // 20: chunk: s.a
        P::W(1),           // 24
        P::W(1),           // 28: chunk: s.o
    ]);
    v.extend_from_slice(&[9, 0, 0, 0]); // 32: s.o, padding
    v.extend_from_slice(&bytes(&[P::W(2)])); // 36: chunk: s.flag, s.c
    v.extend_from_slice(&[1, b'x', 0, 0]); // 40
    v.extend_from_slice(&bytes(&[
        P::W(-1i32 as u32), // 44: end tag
        P::W(0xdead_beef),  // 48
    ]));
    let mut r = reader(&v);
    let mut input = ValueInput::new();
    input.read_value(&mut r).unwrap();
    input.begin_member(&mut r).unwrap();
    assert_eq!(r.read_long().unwrap(), 1);
    assert_eq!(r.read_octet().unwrap(), 9);
    assert!(r.read_boolean().unwrap());
    assert_eq!(r.read_char().unwrap(), b'x');
    input.end_value(&mut r).unwrap();
    assert_eq!(r.read_ulong().unwrap(), 0xdead_beef);
    assert!(r.is_empty());

    // Reading on past the last chunk is refused, not read from the end tag.
    let mut r = reader(&v);
    let mut input = ValueInput::new();
    input.read_value(&mut r).unwrap();
    input.begin_member(&mut r).unwrap();
    r.read_long().unwrap();
    for _ in 0..3 {
        r.read_octet().unwrap();
    }
    assert!(r.read_octet().is_err());
}

/// `valuetype L { public long id; public string label; public L next; }` as read by generated
/// code: node ids in order, and where the last `next` points (`None`: null).
fn read_labelled_list(
    input: &mut ValueInput,
    r: &mut CdrReader<'_>,
    seen: &mut Vec<(usize, i32, String)>,
) -> Result<Option<usize>> {
    let at = r.position();
    match input.read_value(r)? {
        ValueStart::Null => Ok(None),
        ValueStart::Indirection { target } => {
            input.resolve(target, at)?;
            Ok(Some(target))
        }
        ValueStart::Value(h) => {
            input.register(h.position, Arc::new(()));
            input.begin_member(r)?;
            let id = r.read_long()?;
            input.begin_member(r)?;
            let label = r.read_string()?.to_owned();
            seen.push((h.position, id, label));
            let tail = read_labelled_list(input, r, seen)?;
            input.end_value(r)?;
            Ok(tail)
        }
    }
}

/// The bytes (omniORBpy 4.3.3, little endian): a two-node list, chunked without
/// repository ids, where the chunk counts the padding after `label`, so the nested value's
/// tag starts exactly at the chunk's end (it was refused as a header inside a chunk).
#[test]
fn a_nested_value_after_padding_counted_in_the_chunk_is_read() {
    let v: Vec<u8> = [
        "08 ff ff 7f 0c 00 00 00 00 00 00 00 03 00 00 00 6e 30 00 7f 08 ff ff 7f 10 00 00 00",
        "01 00 00 00 03 00 00 00 6e 31 00 00 00 00 00 00 ff ff ff ff",
    ]
    .join(" ")
    .split(' ')
    .map(|b| u8::from_str_radix(b, 16).unwrap())
    .collect();
    let mut r = CdrReader::new(&v, ByteOrder::Little, CdrContext::GIOP_1_2);
    let mut input = ValueInput::new();
    let mut seen = Vec::new();
    assert_eq!(
        read_labelled_list(&mut input, &mut r, &mut seen).unwrap(),
        None
    );
    let ids: Vec<_> = seen.iter().map(|(_, id, l)| (*id, l.as_str())).collect();
    assert_eq!(ids, [(0, "n0"), (1, "n1")]);
    assert!(r.is_empty());
}

/// omniORB's way of chunking, for every label length 0–9 (every padding case), both byte
/// orders, and every shape: a list ending in null, a cycle, a lasso. Each node's chunk holds
/// `id`, `label` and the padding after it (garbage bytes, as omniORB leaves them); the next
/// node's header follows outside the chunk, a null or an indirection inside it; one end tag
/// closes every level.
#[test]
fn omniorb_chunks_with_trailing_padding_read_for_every_label_length() {
    fn put_u32(v: &mut Vec<u8>, x: u32, order: ByteOrder) {
        while !v.len().is_multiple_of(4) {
            v.push(0x7f);
        }
        v.extend_from_slice(&match order {
            ByteOrder::Big => x.to_be_bytes(),
            ByteOrder::Little => x.to_le_bytes(),
        });
    }
    for order in [ByteOrder::Big, ByteOrder::Little] {
        for len in 0..=9usize {
            // tail: None = null, Some(k) = indirection to node k (0: cycle, >0: lasso).
            for (nodes, tail) in [
                (1, None),
                (3, None),
                (1, Some(0)),
                (3, Some(0)),
                (4, Some(2)),
            ] {
                let mut v = Vec::new();
                let mut tags = Vec::new();
                for i in 0..nodes {
                    put_u32(&mut v, 0x7fff_ff08, order);
                    tags.push(v.len() - 4);
                    let len_at = v.len();
                    put_u32(&mut v, 0, order);
                    let start = v.len();
                    put_u32(&mut v, i as u32, order);
                    put_u32(&mut v, len as u32 + 1, order);
                    v.extend(std::iter::repeat_n(b'a' + i as u8, len));
                    v.push(0);
                    if i + 1 == nodes {
                        match tail {
                            None => put_u32(&mut v, NULL_TAG, order),
                            Some(k) => {
                                put_u32(&mut v, INDIRECTION_TAG, order);
                                let off = tags[k] as i64 - v.len() as i64;
                                put_u32(&mut v, off as i32 as u32, order);
                            }
                        }
                    } else {
                        while !v.len().is_multiple_of(4) {
                            v.push(0x7f);
                        }
                    }
                    let n = (v.len() - start) as u32;
                    let n = match order {
                        ByteOrder::Big => n.to_be_bytes(),
                        ByteOrder::Little => n.to_le_bytes(),
                    };
                    v[len_at..len_at + 4].copy_from_slice(&n);
                }
                put_u32(&mut v, -1i32 as u32, order);
                put_u32(&mut v, 0xdead_beef, order);

                let mut r = CdrReader::new(&v, order, CdrContext::GIOP_1_2);
                let mut input = ValueInput::new();
                let mut seen = Vec::new();
                let case = format!("{order:?}, label {len}, {nodes} nodes, tail {tail:?}");
                let end = read_labelled_list(&mut input, &mut r, &mut seen)
                    .unwrap_or_else(|e| panic!("{case}: {e}"));
                assert_eq!(end, tail.map(|k| tags[k]), "{case}");
                for (i, (pos, id, label)) in seen.iter().enumerate() {
                    assert_eq!((*pos, *id), (tags[i], i as i32), "{case}");
                    assert_eq!(label.len(), len, "{case}");
                    assert!(label.bytes().all(|b| b == b'a' + i as u8), "{case}");
                }
                assert_eq!(r.read_ulong().unwrap(), 0xdead_beef, "{case}");
            }
        }
    }
}

/// A nested chunked value ending where its enclosing one does shares the enclosing value's
/// end tag: omniORB 4.2/4.3 abort on the two tags -2 -1 (found by the differential harness).
#[test]
fn nested_values_ending_together_share_one_end_tag() {
    let mut w = writer();
    let mut out = ValueOutput::new();
    let header = WriteHeader {
        repository_ids: WriteIds::Single(B),
        codebase: None,
        chunked: true,
    };
    assert!(out.begin_value(&mut w, 1, &header).unwrap());
    out.begin_member(&mut w).unwrap();
    w.write_long(1);
    assert!(out.begin_value(&mut w, 2, &header).unwrap());
    out.begin_member(&mut w).unwrap();
    w.write_long(2);
    out.end_value(&mut w).unwrap();
    out.end_value(&mut w).unwrap();
    let mut expected = shared_end_tag_vector();
    expected.truncate(expected.len() - 4);
    assert_eq!(w.into_bytes(), expected);
}
