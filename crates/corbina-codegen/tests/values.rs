//! Valuetypes end to end (issue 17): the generator's output for `tests/idl/values.idl` against
//! its golden file, compiled against the runtime, and exercised: cycles and sharing, truncation
//! to a known base, boxes, values as parameters and struct members through a skeleton.

use std::path::Path;
use std::sync::{Arc, Mutex};

use corbina::cdr::{ByteOrder, CdrContext, CdrDecode, CdrEncode, CdrReader, CdrWriter};
use corbina::valuetype::ValueRef;
use corbina::{ObjectRef, ServantInvoker, SystemException};

#[allow(dead_code)]
mod gen_values {
    include!("golden/values.rs");
}
use gen_values::values::*;

#[test]
fn golden_file_matches() {
    let mut fe = corbina_idl::Frontend::new();
    let src = corbina_codegen::compile_file(&mut fe, Path::new("tests/idl/values.idl"))
        .unwrap_or_else(|e| panic!("{e}"))
        .source;
    let path = Path::new("tests/golden/values.rs");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(path, &src).unwrap();
    }
    assert!(
        std::fs::read_to_string(path).unwrap() == src,
        "tests/golden/values.rs is out of date (rerun with BLESS=1)"
    );
}

fn ctx() -> CdrContext {
    CdrContext::GIOP_1_2
}

/// Encodes after `pad` octets in `order`, decodes back.
fn round_trip<T: CdrEncode + for<'a> CdrDecode<'a>>(v: &T, order: ByteOrder, pad: usize) -> T {
    let mut w = CdrWriter::with_byte_order(order, ctx());
    for _ in 0..pad {
        w.write_octet(0xaa);
    }
    v.encode(&mut w).unwrap();
    let bytes = w.into_bytes();
    let mut r = CdrReader::new(&bytes, order, ctx());
    r.read_bytes(pad).unwrap();
    let back = T::decode(&mut r).unwrap();
    r.expect_end().unwrap();
    back
}

fn list(ids: &[i32]) -> ValueRef<Node> {
    ids.iter().rev().fold(ValueRef::null(), |next, &id| {
        ValueRef::new(Node { id, next })
    })
}

fn ids(mut n: ValueRef<Node>, max: usize) -> Vec<i32> {
    let mut out = Vec::new();
    while out.len() < max {
        let Some((id, next)) = n.lock().map(|g| (g.id, g.next.clone())) else {
            break;
        };
        out.push(id);
        n = next;
    }
    out
}

fn break_cycle(n: &ValueRef<Node>) {
    let mut cur = n.clone();
    while let Some(next) = cur.lock().map(|mut g| std::mem::take(&mut g.next)) {
        cur = next;
    }
}

#[test]
fn cyclic_list_arrives_as_one_cycle() {
    let head = list(&[1, 2, 3]);
    let last = head.lock().unwrap().next.lock().unwrap().next.clone();
    last.lock().unwrap().next = head.clone();
    for order in [ByteOrder::Big, ByteOrder::Little] {
        for pad in 0..8 {
            let got = round_trip(&head, order, pad);
            assert_eq!(ids(got.clone(), 7), [1, 2, 3, 1, 2, 3, 1]);
            let third = got.lock().unwrap().next.lock().unwrap().next.clone();
            assert_eq!(
                third.lock().unwrap().next,
                got,
                "the cycle closes on the head"
            );
            break_cycle(&got);
        }
    }
    break_cycle(&head);
    assert!(round_trip(&ValueRef::<Node>::null(), ByteOrder::Big, 3).is_null());
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
fn truncatable_values_truncate_to_a_known_base() {
    let bytes = corbina::cdr::to_bytes(&ring(), ctx()).unwrap();
    let order = ByteOrder::NATIVE;
    let circle: ValueRef<Circle> = corbina::cdr::from_bytes(&bytes, order, ctx()).unwrap();
    let c = circle.lock().unwrap();
    assert_eq!((c.name.as_str(), c.secret, c.radius), ("ring", 42, 2.0));
    assert_eq!(c.tag, Label::new("gold".into()));
    let shape: ValueRef<Shape> = corbina::cdr::from_bytes(&bytes, order, ctx()).unwrap();
    assert_eq!(shape.lock().unwrap().name, "ring");
    let whole: ValueRef<Ring> = corbina::cdr::from_bytes(&bytes, order, ctx()).unwrap();
    assert_eq!(whole.lock().unwrap().inner, 1.5);
    // `Plain : Shape` is not truncatable: a receiver expecting a Shape refuses it.
    let plain = ValueRef::new(Plain {
        name: "p".into(),
        secret: 1,
        r#where: Point { x: 1.0, y: 2.0 },
    });
    let bytes = corbina::cdr::to_bytes(&plain, ctx()).unwrap();
    let err = corbina::cdr::from_bytes::<ValueRef<Shape>>(&bytes, order, ctx())
        .err()
        .unwrap();
    assert_eq!(err.exception_kind(), corbina::cdr::ExceptionKind::Marshal);
}

#[test]
fn boxes_and_type_codes() {
    let names = Names::new(vec!["a".into(), "b".into()]);
    assert_eq!(round_trip(&names, ByteOrder::Little, 1), names);
    assert_eq!(round_trip(&Names(None), ByteOrder::Big, 0), Names(None));
    assert_eq!(round_trip(&Count::new(7), ByteOrder::Big, 2), Count::new(7));
    let p = PointBox::new(Point { x: 1.0, y: -1.0 });
    assert_eq!(round_trip(&p, ByteOrder::Little, 5), p);
    use corbina::typecode::TcKind;
    assert_eq!(Node::type_code().kind(), TcKind::Value);
    assert_eq!(Names::type_code().kind(), TcKind::ValueBox);
    assert_eq!(Tick::type_code().kind(), TcKind::Event);
    // Mutually recursive values build their TypeCodes without recursing forever.
    assert_eq!(Even::type_code().kind(), TcKind::Value);
    assert_eq!(Odd::type_code().kind(), TcKind::Value);
    assert_eq!(Ring::type_code().kind(), TcKind::Value);
}

#[derive(Default)]
struct GraphsImpl {
    shapes: Arc<Mutex<Vec<String>>>,
}

impl GraphsServant for GraphsImpl {
    fn reverse(&self, head: &ValueRef<Node>) -> Result<ValueRef<Node>, SystemException> {
        let mut out = ValueRef::null();
        let mut cur = head.clone();
        while let Some((id, next)) = cur.lock().map(|g| (g.id, g.next.clone())) {
            out = ValueRef::new(Node { id, next: out });
            cur = next;
        }
        Ok(out)
    }

    fn echo_shape(&self, s: &ValueRef<Shape>) -> Result<ValueRef<Shape>, SystemException> {
        self.shapes
            .lock()
            .unwrap()
            .push(s.lock().map(|g| g.name.clone()).unwrap_or_default());
        Ok(s.clone())
    }

    fn echo_names(&self, n: &Names) -> Result<(Names, Label), SystemException> {
        let first = n.0.as_ref().and_then(|v| v.first().cloned());
        Ok((n.clone(), Label(first.map(Arc::new))))
    }

    fn hold(&self, h: &Holder) -> Result<Holder, SystemException> {
        Ok(h.clone())
    }
}

#[test]
fn values_as_parameters_through_a_skeleton() {
    let servant = GraphsImpl::default();
    let shapes = servant.shapes.clone();
    let skeleton = Arc::new(GraphsSkeleton::new(servant));
    let mut ior = corbina::giop::Ior::nil();
    ior.type_id = Graphs::REPOSITORY_ID.to_string();
    let obj = ObjectRef::new(
        ior,
        b"key".to_vec(),
        Arc::new(ServantInvoker::new(skeleton, ctx())),
    );
    let g = Graphs::unchecked_narrow(&obj);

    assert_eq!(
        ids(g.reverse(&list(&[1, 2, 3, 4])).unwrap(), 10),
        [4, 3, 2, 1]
    );
    assert!(g.reverse(&ValueRef::null()).unwrap().is_null());

    // A Ring sent where a Shape is expected reaches the servant truncated to a Shape.
    let back = g
        .echo_shape(&ValueRef::new(Shape {
            name: "sq".into(),
            secret: 0,
        }))
        .unwrap();
    assert_eq!(back.lock().unwrap().name, "sq");
    let ring_as_shape = {
        let bytes = corbina::cdr::to_bytes(&ring(), ctx()).unwrap();
        corbina::cdr::from_bytes::<ValueRef<Shape>>(&bytes, ByteOrder::NATIVE, ctx()).unwrap()
    };
    g.echo_shape(&ring_as_shape).unwrap();
    assert_eq!(*shapes.lock().unwrap(), ["sq", "ring"]);

    let (names, first) = g
        .echo_names(&Names::new(vec!["x".into(), "y".into()]))
        .unwrap();
    assert_eq!(names, Names::new(vec!["x".into(), "y".into()]));
    assert_eq!(first, Label::new("x".into()));

    let shared = list(&[9]);
    let h = g
        .hold(&Holder {
            head: shared.clone(),
            label: Label(None),
        })
        .unwrap();
    assert_eq!(ids(h.head, 3), [9]);
    assert_eq!(h.label, Label(None));
}
