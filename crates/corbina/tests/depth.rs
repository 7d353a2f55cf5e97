//! Issue 27: no input, sent or received, overflows a stack. Every deep case here runs in a
//! thread of 256 KiB, so that what passes does not depend on the stack's size: value lists
//! in `Any`s (walked, copied, extracted, turned into DynAnys), TypeCodes an application
//! builds 100,000 deep (compared, printed, dropped; refused when sent or given to DynAny),
//! TypeCodes received nested too deep, `Any`s nested in `Any`s, and generated recursive structs
//! at the decoder's depth limit.

use corbina::cdr::{from_bytes, to_bytes, ByteOrder, CdrContext, CdrWriter, MarshalError};
use corbina::dynany::{DynAnyError, DynAnyFactory};
use corbina::typecode::{encode_type_code, StructMember, MAX_TYPECODE_DEPTH};
use corbina::valuetype::ValueRef;
use corbina::{Any, TypeCode};

#[allow(dead_code, clippy::all)]
mod generated {
    include!("../../corbina-codegen/tests/golden/peers_values.rs");
}
use generated::values::Node;

#[allow(dead_code, clippy::all)]
mod recursive {
    include!("../../corbina-codegen/tests/golden/recursive.rs");
}

fn ctx() -> CdrContext {
    CdrContext::GIOP_1_2
}

/// Runs `f` in a thread of 256 KiB.
fn on_small_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

fn list(n: i32) -> ValueRef<Node> {
    let mut head = ValueRef::null();
    for id in (0..n).rev() {
        head = ValueRef::new(Node { id, next: head });
    }
    head
}

fn len(head: &ValueRef<Node>) -> i32 {
    let mut n = 0;
    let mut cur = head.clone();
    while let Some(next) = cur.lock().map(|v| v.next.clone()) {
        n += 1;
        cur = next;
    }
    n
}

/// `sequence<sequence<…<long>…>>`, `depth` sequences deep, built through the API.
fn nested_sequences(depth: usize) -> TypeCode {
    let mut tc: TypeCode = TypeCode::LONG.into();
    for _ in 0..depth {
        tc = TypeCode::create_sequence_tc(0, tc);
    }
    tc
}

/// `struct S_i { S_{i-1} inner; }`, `depth` structs deep.
fn nested_structs(depth: usize) -> TypeCode {
    let mut tc: TypeCode = TypeCode::LONG.into();
    for i in 0..depth {
        tc = TypeCode::create_struct_tc(
            &format!("IDL:S{i}:1.0"),
            "S",
            vec![StructMember::new("inner", tc)],
        )
        .unwrap();
    }
    tc
}

#[test]
fn a_100_000_node_list_in_an_any_is_walked_copied_and_extracted() {
    on_small_stack(|| {
        let any = Any::insert(&list(100_000)).unwrap();
        // Sent and received: the walker copies the value in and out.
        let bytes = to_bytes(&any, ctx()).unwrap();
        let back: Any = from_bytes(&bytes, ByteOrder::NATIVE, ctx()).unwrap();
        let got = back.extract::<ValueRef<Node>>().unwrap();
        assert_eq!(len(&got), 100_000);
        assert_eq!(back, any);
        // A DynAny holds a tree: one that deep is refused (the reader's depth), not a crash.
        assert_eq!(
            DynAnyFactory::create_dyn_any(&back).unwrap_err(),
            DynAnyError::InvalidValue
        );
        let short = Any::insert(&list(300)).unwrap();
        let d = DynAnyFactory::create_dyn_any(&short).unwrap();
        assert_eq!(d.to_any().unwrap(), short);
    });
}

#[test]
fn a_list_in_an_any_past_the_value_nesting_limit_is_marshal() {
    let limit = corbina::cdr::value::max_value_nesting() as i32;
    on_small_stack(move || {
        let too_deep = list(limit + 1);
        let mut w = CdrWriter::new(ctx());
        let err = Any::insert(&too_deep).unwrap_err();
        assert!(matches!(err, MarshalError::NestingTooDeep { .. }), "{err}");
        // Bytes made by a writer allowing one more level: the walker refuses them.
        let mut out = corbina::cdr::value::ValueOutput::with_max_nesting(limit as u32 + 1);
        corbina::valuetype::ValueMember::write_member(&too_deep, &mut w, &mut out).unwrap();
        let bytes = w.into_bytes();
        let err =
            Any::from_cdr(Node::type_code(), &bytes, ByteOrder::NATIVE, ctx(), 0).unwrap_err();
        assert!(matches!(err, MarshalError::NestingTooDeep { .. }), "{err}");
    });
}

#[test]
fn typecodes_built_100_000_deep_compare_print_and_drop_but_are_not_sent() {
    on_small_stack(|| {
        for (a, b) in [
            (nested_sequences(100_000), nested_sequences(100_000)),
            (nested_structs(100_000), nested_structs(100_000)),
        ] {
            // Two descriptions built apart: compared part by part.
            assert!(a.equal(&b));
            assert!(a.equivalent(&b));
            assert!(!a.equal(&nested_sequences(99_999)));
            assert!(format!("{a:?}").len() < 1_000);
            let mut w = CdrWriter::new(ctx());
            let err = encode_type_code(&a, &mut w).unwrap_err();
            assert!(
                matches!(err, MarshalError::NestingTooDeep { limit, .. } if limit == MAX_TYPECODE_DEPTH),
                "{err}"
            );
            assert_eq!(w.len(), 0, "nothing written");
            // Nor in an Any, nor as a DynAny.
            assert!(matches!(
                Any::insert(&a),
                Err(MarshalError::NestingTooDeep { .. })
            ));
            assert_eq!(
                DynAnyFactory::create_dyn_any_from_type_code(&a).unwrap_err(),
                DynAnyError::InconsistentTypeCode
            );
            drop((a, b));
        }
        // As deep as a receiver accepts: sent and received.
        let ok = nested_sequences(MAX_TYPECODE_DEPTH as usize - 1);
        let bytes = to_bytes(&ok, ctx()).unwrap();
        let back: TypeCode = from_bytes(&bytes, ByteOrder::NATIVE, ctx()).unwrap();
        assert!(back.equal(&ok));
        assert!(DynAnyFactory::create_dyn_any_from_type_code(&ok).is_ok());
    });
}

#[test]
fn a_typecode_received_nested_too_deep_is_marshal() {
    // `sequence<sequence<…<long>…>>` 100,000 deep on the wire, well formed: each level is
    // tk_sequence, its encapsulation's length, the byte order (big) and padding, the content
    // TypeCode, and after it the bound.
    const DEPTH: usize = 100_000;
    let mut bytes = Vec::with_capacity(16 * DEPTH + 4);
    for level in 0..DEPTH {
        let inner = 4 + 16 * (DEPTH - level - 1);
        bytes.extend_from_slice(&19u32.to_be_bytes());
        bytes.extend_from_slice(&(inner as u32 + 8).to_be_bytes());
        bytes.extend_from_slice(&[0, 0, 0, 0]);
    }
    bytes.extend_from_slice(&3u32.to_be_bytes()); // tk_long
    for _ in 0..DEPTH {
        bytes.extend_from_slice(&0u32.to_be_bytes());
    }
    let (err, shallow_ok) = on_small_stack(move || {
        let err = from_bytes::<TypeCode>(&bytes, ByteOrder::Big, ctx()).unwrap_err();
        // The same bytes from the level the decoder still accepts down: a TypeCode.
        let from = 12 * (DEPTH - MAX_TYPECODE_DEPTH as usize);
        let to = bytes.len() - 4 * (DEPTH - MAX_TYPECODE_DEPTH as usize);
        let ok = from_bytes::<TypeCode>(&bytes[from..to], ByteOrder::Big, ctx())
            .map(|tc| tc.equal(&nested_sequences(MAX_TYPECODE_DEPTH as usize)));
        (err, ok)
    });
    assert!(
        matches!(err, MarshalError::NestingTooDeep { limit, .. } if limit == MAX_TYPECODE_DEPTH),
        "{err}"
    );
    assert_eq!(shallow_ok, Ok(true));
}

#[test]
fn anys_nested_in_anys_through_the_api_stop_with_an_error() {
    on_small_stack(|| {
        let mut a = Any::from_long(7);
        let mut depth = 0;
        let err = loop {
            match Any::insert(&a).and_then(|next| to_bytes(&next, ctx()).map(|_| next)) {
                Ok(next) => {
                    a = next;
                    depth += 1;
                    assert!(depth < 100_000, "no bound on Anys nested in Anys");
                }
                Err(e) => break e,
            }
        };
        assert!(matches!(err, MarshalError::NestingTooDeep { .. }), "{err}");
        // Whatever was built is received again.
        let bytes = to_bytes(&a, ctx()).unwrap();
        let back: Any = from_bytes(&bytes, ByteOrder::NATIVE, ctx()).unwrap();
        assert_eq!(back, a);
    });
}

/// A list node `Node { id, next }` as a DynAny, built through the API.
fn dyn_node(id: i32, next: corbina::dynany::DynAny) -> corbina::dynany::DynAny {
    use corbina::dynany::NameDynAnyPair;
    let mut d = DynAnyFactory::create_dyn_any_from_type_code(&Node::type_code()).unwrap();
    let mut long = DynAnyFactory::create_dyn_any_from_type_code(&TypeCode::LONG.into()).unwrap();
    long.insert_long(id).unwrap();
    d.set_members_as_dyn_any(vec![
        NameDynAnyPair {
            id: "id".into(),
            value: long,
        },
        NameDynAnyPair {
            id: "next".into(),
            value: next,
        },
    ])
    .unwrap();
    d
}

/// A DynAny tree an application builds 100,000 values deep goes out whole, one level more is
/// refused; it is copied and compared whole and printed to a bounded depth; all of it with
/// bounded stack, and it drops without recursing.
#[test]
fn a_dyn_any_tree_built_100_000_deep_goes_out_copies_compares_prints_and_drops() {
    let limit = corbina::cdr::value::max_value_nesting() as i32;
    on_small_stack(move || {
        let mut head = DynAnyFactory::create_dyn_any_from_type_code(&Node::type_code()).unwrap();
        for id in (0..100_000).rev() {
            head = dyn_node(id, head);
        }
        let any = head.to_any().unwrap();
        assert_eq!(len(&any.extract::<ValueRef<Node>>().unwrap()), 100_000);

        let copy = head.copy();
        assert!(head.equal(&copy));
        assert_eq!(head, copy.clone());
        // The last node's id changed in a copy: found, and not equal.
        let mut other = copy.clone();
        let mut cur = &mut other;
        for _ in 1..100_000 {
            cur.seek(1);
            cur = cur.current_component().unwrap().unwrap();
        }
        cur.seek(0);
        cur.insert_long(-1).unwrap();
        assert_ne!(head, other);
        assert_eq!(copy.to_any().unwrap(), any);
        let text = format!("{head:?}");
        assert!(text.len() < 20_000, "{} bytes", text.len());
        assert!(text.contains("DynAny { .. }"), "the cut is shown");
        drop((copy, other));

        for id in 100_000..=limit {
            head = dyn_node(-id, head);
        }
        assert_eq!(head.to_any().unwrap_err(), DynAnyError::InvalidValue);
        drop(head);
    });
}

/// A generated recursive struct (`struct Tree { long value; sequence<Tree> children; }`)
/// decodes at most the reader's depth (hostile nesting 200,000 deep is MARSHAL), and one as
/// deep as that clones, compares, prints, encodes and drops: all in a thread's default stack
/// (2 MiB; 512 levels of plain recursion need more than 256 KiB in a debug build), which is
/// what docs/mapping.md promises for these types, whose derived traits recurse.
#[test]
fn generated_recursive_structs_stop_at_the_reader_depth_and_what_decodes_is_usable() {
    use recursive::rec::Tree;
    fn nested(levels: usize) -> Vec<u8> {
        let mut b = Vec::with_capacity(8 * levels + 8);
        for i in 0..levels {
            b.extend_from_slice(&(i as u32).to_be_bytes());
            b.extend_from_slice(&1u32.to_be_bytes());
        }
        b.extend_from_slice(&[0; 8]);
        b
    }
    let limit = corbina::cdr::DEFAULT_MAX_DEPTH as usize;
    let hostile = nested(200_000);
    let err =
        std::thread::spawn(move || from_bytes::<Tree>(&hostile, ByteOrder::Big, ctx()).map(drop))
            .join()
            .unwrap();
    assert!(
        matches!(err, Err(MarshalError::NestingTooDeep { .. })),
        "{err:?}"
    );
    let deepest = nested(limit - 1);
    std::thread::spawn(move || {
        let t: Tree = from_bytes(&deepest, ByteOrder::Big, ctx()).unwrap();
        assert!(from_bytes::<Tree>(&nested(limit), ByteOrder::Big, ctx()).is_err());
        let copy = t.clone();
        assert_eq!(copy, t);
        assert!(format!("{t:?}").len() > limit);
        let again = to_bytes(&copy, ctx()).unwrap();
        assert!(from_bytes::<Tree>(&again, ByteOrder::NATIVE, ctx()).unwrap() == t);
        drop((t, copy));
    })
    .join()
    .unwrap();
}

/// `struct S { sequence<SB> kids; }; valuetype SB S;` as a TypeCode (IDL cannot declare the
/// box before its content; a peer can send it): boxes whose content holds a sequence of
/// boxes. Received 200,000 boxes deep it is MARSHAL in a small stack; 150 deep (DynAny counts three levels of the reader's 512 a box) it is walked,
/// becomes a DynAny that clones, compares, prints and goes back into an `Any` (the same value), and
/// all of it
/// drops.
#[test]
fn boxes_holding_sequences_of_boxes_are_bounded() {
    // Big-endian; every encapsulation starts 4-aligned, so padding to 4 is absolute.
    fn word(b: &mut Vec<u8>, w: u32) {
        b.extend_from_slice(&w.to_be_bytes());
    }
    fn string(b: &mut Vec<u8>, s: &str) {
        word(b, s.len() as u32 + 1);
        b.extend_from_slice(s.as_bytes());
        b.push(0);
        while !b.len().is_multiple_of(4) {
            b.push(0);
        }
    }
    let mut w = Vec::new();
    word(&mut w, 15); // tk_struct
    word(&mut w, 104);
    word(&mut w, 0); // byte order (big) and padding
    string(&mut w, "IDL:S:1.0");
    string(&mut w, "S");
    word(&mut w, 1);
    string(&mut w, "kids");
    word(&mut w, 19); // tk_sequence
    word(&mut w, 52);
    word(&mut w, 0);
    word(&mut w, 30); // tk_value_box
    word(&mut w, 36);
    word(&mut w, 0);
    string(&mut w, "IDL:SB:1.0");
    string(&mut w, "SB");
    word(&mut w, u32::MAX); // indirection to S
    word(&mut w, (-104i32) as u32);
    word(&mut w, 0); // the sequence's bound
    assert_eq!(w.len(), 112);
    let tc: TypeCode = from_bytes(&w, ByteOrder::Big, ctx()).unwrap();
    assert_eq!(tc.id(), Ok("IDL:S:1.0"));
    // Each level: the sequence's length (1), then a box's value tag without type information
    // (the formal type is known); the innermost sequence is empty.
    fn boxes(levels: usize) -> Vec<u8> {
        let mut b = Vec::with_capacity(8 * levels + 4);
        for _ in 0..levels {
            word(&mut b, 1);
            word(&mut b, 0x7fff_ff00);
        }
        word(&mut b, 0);
        b
    }
    let t = tc.clone();
    let (deep, shallow) = on_small_stack(move || {
        let deep = Any::from_cdr(t.clone(), &boxes(200_000), ByteOrder::Big, ctx(), 0).map(drop);
        let any = Any::from_cdr(t, &boxes(150), ByteOrder::Big, ctx(), 0).unwrap();
        let d = DynAnyFactory::create_dyn_any(&any).unwrap();
        let copy = d.clone();
        assert_eq!(copy, d);
        assert!(format!("{d:?}").contains("DynAny { .. }"));
        // Written back with repository ids (the bytes received had none): the same value.
        let back = DynAnyFactory::create_dyn_any(&copy.to_any().unwrap()).unwrap();
        (deep, back == d)
    });
    assert!(
        matches!(deep, Err(MarshalError::NestingTooDeep { .. })),
        "{deep:?}"
    );
    assert!(shallow);
}
