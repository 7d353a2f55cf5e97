//! Values in `Any` and the value decoder's depth bound (issue 17), with the generated types of
//! `tests/idl/values.idl`: graphs with sharing and cycles, truncatable chunked values, boxes
//! and null go into an `Any` by their TypeCode, survive a trip through a stream in the other
//! byte order, come out typed, and are truncated when the `Any`'s TypeCode names a base.

use corbina::cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter, ExceptionKind, MarshalError};
use corbina::valuetype::ValueRef;
use corbina::Any;

#[allow(dead_code)]
mod gen_values {
    include!("golden/values.rs");
}
use gen_values::values::*;

fn ctx() -> CdrContext {
    CdrContext::GIOP_1_2
}

/// Writes `any` (TypeCode and value) after `pad` octets in `order` and reads it back.
fn through_stream(any: &Any, order: ByteOrder, pad: usize) -> Any {
    let mut w = CdrWriter::with_byte_order(order, ctx());
    for _ in 0..pad {
        w.write_octet(0xaa);
    }
    any.write(&mut w).unwrap();
    let bytes = w.into_bytes();
    let mut r = CdrReader::new(&bytes, order, ctx());
    r.read_bytes(pad).unwrap();
    let back = Any::read(&mut r).unwrap();
    r.expect_end().unwrap();
    back
}

fn list(ids: &[i32]) -> ValueRef<Node> {
    ids.iter().rev().fold(ValueRef::null(), |next, &id| {
        ValueRef::new(Node { id, next })
    })
}

fn next(n: &ValueRef<Node>) -> ValueRef<Node> {
    n.lock().unwrap().next.clone()
}

fn break_cycle(n: &ValueRef<Node>) {
    let mut cur = n.clone();
    while let Some(next) = cur.lock().map(|mut g| std::mem::take(&mut g.next)) {
        cur = next;
    }
}

#[test]
fn cyclic_graph_in_an_any_stays_one_cycle() {
    let head = list(&[1, 2, 3]);
    let last = next(&next(&head));
    last.lock().unwrap().next = head.clone();
    let any = Any::insert_as(Node::type_code(), &head).unwrap();
    for order in [ByteOrder::Big, ByteOrder::Little] {
        for pad in [0, 1, 3] {
            let back = through_stream(&any, order, pad);
            assert!(back.type_code().equal(&Node::type_code()));
            assert_eq!(back, any);
            let got = back
                .extract_as::<ValueRef<Node>>(&Node::type_code())
                .unwrap();
            let third = next(&next(&got));
            assert_eq!(third.lock().unwrap().id, 3);
            assert_eq!(next(&third), got, "the cycle closes on the head");
            break_cycle(&got);
        }
    }
    break_cycle(&head);
}

fn ring() -> ValueRef<Ring> {
    ValueRef::new(Ring {
        name: "ring".into(),
        secret: 42,
        radius: 2.0,
        tag: Label::new("gold".into()),
        inner: 1.5,
    })
}

#[test]
fn chunked_truncatable_value_in_an_any() {
    let any = Any::insert_as(Ring::type_code(), &ring()).unwrap();
    for order in [ByteOrder::Big, ByteOrder::Little] {
        let back = through_stream(&any, order, 5);
        let r = back
            .extract_as::<ValueRef<Ring>>(&Ring::type_code())
            .unwrap();
        let r = r.lock().unwrap();
        assert_eq!(
            (r.name.as_str(), r.secret, r.radius, r.inner),
            ("ring", 42, 2.0, 1.5)
        );
        assert_eq!(r.tag, Label::new("gold".into()));
    }
}

#[test]
fn a_value_read_as_its_truncatable_base_is_truncated() {
    let bytes = corbina::cdr::to_bytes(&ring(), ctx()).unwrap();
    let any = Any::from_cdr(Circle::type_code(), &bytes, ByteOrder::NATIVE, ctx(), 0).unwrap();
    // The Any now holds a Circle: Ring's state is gone, and so is Ring's id.
    let c = any
        .extract_as::<ValueRef<Circle>>(&Circle::type_code())
        .unwrap();
    let c = c.lock().unwrap();
    assert_eq!((c.name.as_str(), c.secret, c.radius), ("ring", 42, 2.0));
    assert_eq!(c.tag, Label::new("gold".into()));
    assert!(any
        .extract_as::<ValueRef<Ring>>(&Ring::type_code())
        .is_none());
    // A non-truncatable derived value is refused where its base's TypeCode is expected.
    let plain = ValueRef::new(Plain {
        name: "p".into(),
        secret: 1,
        r#where: Point { x: 1.0, y: 2.0 },
    });
    let bytes = corbina::cdr::to_bytes(&plain, ctx()).unwrap();
    let err = Any::from_cdr(Shape::type_code(), &bytes, ByteOrder::NATIVE, ctx(), 0)
        .err()
        .unwrap();
    assert_eq!(err.exception_kind(), ExceptionKind::Marshal);
}

#[test]
fn boxes_null_and_values_inside_structs() {
    let names = Names::new(vec!["a".into(), "b".into()]);
    let any = Any::insert_as(Names::type_code(), &names).unwrap();
    let back = through_stream(&any, ByteOrder::Big, 2);
    assert_eq!(back.extract_as::<Names>(&Names::type_code()), Some(names));
    let null = Any::insert_as(Node::type_code(), &ValueRef::<Node>::null()).unwrap();
    let back = through_stream(&null, ByteOrder::Little, 1);
    assert!(back
        .extract_as::<ValueRef<Node>>(&Node::type_code())
        .unwrap()
        .is_null());
    // A struct whose members are a value graph and a box.
    let head = list(&[7, 8]);
    let h = Holder {
        head: head.clone(),
        label: Label::new("x".into()),
    };
    let any = Any::insert(&h).unwrap();
    let back = through_stream(&any, ByteOrder::Big, 3);
    let got = back.extract::<Holder>().unwrap();
    assert_eq!(next(&got.head).lock().unwrap().id, 8);
    assert_eq!(got.label, Label::new("x".into()));
}

#[test]
fn indirection_out_of_an_any_is_refused() {
    // Two Nodes in one stream, the second an indirection to the first: read alone, the second
    // is not self-contained.
    let head = list(&[1]);
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, ctx());
    let mut out = corbina::valuetype::ValueOutput::new();
    use corbina::valuetype::ValueMember;
    head.write_member(&mut w, &mut out).unwrap();
    let first = w.position();
    head.write_member(&mut w, &mut out).unwrap();
    let bytes = w.into_bytes();
    let mut r = CdrReader::new(&bytes, ByteOrder::Big, ctx());
    Any::read_value(Node::type_code(), &mut r).unwrap();
    assert_eq!(r.position(), first);
    let err = Any::read_value(Node::type_code(), &mut r).err().unwrap();
    assert!(
        matches!(err, MarshalError::InvalidIndirection { .. }),
        "{err}"
    );
}

/// A chain of `depth` nested Nodes (each the next's container), encoded by an encoder that
/// allows that depth, on a small stack.
fn chain_bytes(depth: usize) -> Vec<u8> {
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            use corbina::valuetype::ValueMember;
            let head = list(&(0..depth as i32).collect::<Vec<_>>());
            let mut w = CdrWriter::new(ctx());
            let mut out = corbina::valuetype::ValueOutput::with_max_nesting(depth as u32);
            head.write_member(&mut w, &mut out).unwrap();
            w.into_bytes()
        })
        .unwrap()
        .join()
        .unwrap()
}

/// Decodes on a thread of 256 KiB (the ORB's connection threads have 2 MiB): depth does not
/// depend on the stack's size.
fn decode_on_small_stack(bytes: Vec<u8>) -> Result<usize, MarshalError> {
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            let head: ValueRef<Node> = corbina::cdr::from_bytes(&bytes, ByteOrder::NATIVE, ctx())?;
            let mut n = 0;
            let mut cur = head.clone();
            while !cur.is_null() {
                n += 1;
                cur = next(&cur);
            }
            break_cycle(&head);
            Ok(n)
        })
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn value_nesting_is_bounded_by_the_limit_not_the_stack() {
    let limit = corbina::cdr::value::max_value_nesting() as usize;
    assert_eq!(decode_on_small_stack(chain_bytes(limit)).unwrap(), limit);
    let err = decode_on_small_stack(chain_bytes(limit + 1)).unwrap_err();
    assert!(matches!(err, MarshalError::NestingTooDeep { .. }), "{err}");
    // And the walker behind `Any` stops there too.
    let bytes = chain_bytes(limit + 1);
    let err = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || Any::from_cdr(Node::type_code(), &bytes, ByteOrder::NATIVE, ctx(), 0).err())
        .unwrap()
        .join()
        .unwrap()
        .unwrap();
    assert!(matches!(err, MarshalError::NestingTooDeep { .. }), "{err}");
}

/// Generated valuetypes and boxes implement `AnyInsert`: `Any::insert(&v)` labels the value
/// with its own TypeCode, and `extract` gives it back typed after a trip through a stream,
/// sharing and cycles kept; a TypeCode of another type does not extract.
#[test]
fn values_and_boxes_go_into_an_any_typed() {
    let head = list(&[4, 5, 6]);
    let last = next(&next(&head));
    last.lock().unwrap().next = head.clone();
    let any = Any::insert(&head).unwrap();
    assert!(any.type_code().equal(&Node::type_code()));
    for order in [ByteOrder::Big, ByteOrder::Little] {
        let back = through_stream(&any, order, 3);
        let got = back.extract::<ValueRef<Node>>().unwrap();
        assert_eq!(got.lock().unwrap().id, 4);
        assert_eq!(
            next(&next(&next(&got))),
            got,
            "the cycle closes on the head"
        );
        assert!(back.extract::<ValueRef<Odd>>().is_none());
        assert!(back.extract::<Label>().is_none());
        break_cycle(&got);
    }
    break_cycle(&head);

    // A truncatable value (chunked) and an eventtype.
    let back = through_stream(&Any::insert(&ring()).unwrap(), ByteOrder::Little, 1);
    let r = back.extract::<ValueRef<Ring>>().unwrap();
    assert_eq!(r.lock().unwrap().inner, 1.5);
    assert!(
        back.extract::<ValueRef<Circle>>().is_none(),
        "not its TypeCode"
    );
    let tick = ValueRef::new(Tick { at: 1 << 40 });
    let back = through_stream(&Any::insert(&tick).unwrap(), ByteOrder::Big, 0);
    assert_eq!(
        back.extract::<ValueRef<Tick>>().unwrap().lock().unwrap().at,
        1 << 40
    );

    // Boxes, plain (Label, Count) and general (Names, PointBox), null and not.
    for b in [Label::new("gold".into()), Label(None)] {
        let any = Any::insert(&b).unwrap();
        assert!(any.type_code().equal(&Label::type_code()));
        assert_eq!(
            through_stream(&any, ByteOrder::Big, 1).extract::<Label>(),
            Some(b)
        );
    }
    let c = Any::insert(&Count::new(-7)).unwrap();
    assert_eq!(
        through_stream(&c, ByteOrder::Little, 2).extract::<Count>(),
        Some(Count::new(-7))
    );
    let names = Names::new(vec!["a".into(), "b".into()]);
    let back = through_stream(&Any::insert(&names).unwrap(), ByteOrder::Little, 5);
    assert_eq!(back.extract::<Names>(), Some(names));
    let p = PointBox::new(Point { x: 1.0, y: -2.0 });
    let back = through_stream(&Any::insert(&p).unwrap(), ByteOrder::Big, 4);
    assert_eq!(back.extract::<PointBox>(), Some(p));
    assert!(back.extract::<Names>().is_none());
    // The null value.
    let null = Any::insert(&ValueRef::<Node>::null()).unwrap();
    assert!(through_stream(&null, ByteOrder::Big, 0)
        .extract::<ValueRef<Node>>()
        .unwrap()
        .is_null());
}
