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
    let mut options = corbina_codegen::Options::default();
    options.ami_interfaces = vec!["Values::Shares".into()];
    options.amh_interfaces = vec!["Values::Shares".into()];
    let src =
        corbina_codegen::compile_file_with(&mut fe, Path::new("tests/idl/values.idl"), &options)
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
fn derived_values_arrive_as_their_most_derived_type() {
    // A Ring read where IDL says Circle or Shape: the receiver knows Ring (same IDL file), so
    // it builds a Ring, whose base part the base handle shows.
    let bytes = corbina::cdr::to_bytes(&ring(), ctx()).unwrap();
    let order = ByteOrder::NATIVE;
    let circle: ValueRef<Circle> = corbina::cdr::from_bytes(&bytes, order, ctx()).unwrap();
    {
        let c = circle.lock().unwrap();
        assert_eq!((c.name.as_str(), c.secret, c.radius), ("ring", 42, 2.0));
        assert_eq!(c.tag, Label::new("gold".into()));
    }
    assert_eq!(circle.repository_id(), Some(Ring::REPOSITORY_ID));
    assert_eq!(
        circle.downcast::<Ring>().unwrap().lock().unwrap().inner,
        1.5
    );
    let shape: ValueRef<Shape> = corbina::cdr::from_bytes(&bytes, order, ctx()).unwrap();
    assert_eq!(shape.lock().unwrap().name, "ring");
    assert_eq!(shape.downcast::<Ring>().unwrap().lock().unwrap().inner, 1.5);
    assert!(shape.downcast::<Circle>().is_some() && shape.downcast::<Plain>().is_none());
    // Sent on, it is the whole Ring again: nothing the sender sent is lost.
    let again = corbina::cdr::to_bytes(&shape, ctx()).unwrap();
    assert_eq!(again, bytes);
    // `Plain : Shape` is not truncatable: it arrives as a Plain too, the receiver knowing it.
    let plain = ValueRef::new(Plain {
        name: "p".into(),
        secret: 1,
        r#where: Point { x: 1.0, y: 2.0 },
    });
    let bytes = corbina::cdr::to_bytes(&plain, ctx()).unwrap();
    let got = corbina::cdr::from_bytes::<ValueRef<Shape>>(&bytes, order, ctx()).unwrap();
    assert_eq!(got.lock().unwrap().name, "p");
    assert_eq!(
        got.downcast::<Plain>().unwrap().lock().unwrap().r#where.y,
        2.0
    );
    // A Plain where IDL says Circle is no Circle: refused.
    let err = corbina::cdr::from_bytes::<ValueRef<Circle>>(&bytes, order, ctx())
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

    fn echo_pair(&self, p: &ValueRef<Pair>) -> Result<ValueRef<Pair>, SystemException> {
        Ok(p.clone())
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

    // A Ring sent where a Shape is expected reaches the servant as a Ring and comes back whole.
    let back = g
        .echo_shape(&ValueRef::new(Shape {
            name: "sq".into(),
            secret: 0,
        }))
        .unwrap();
    assert_eq!(back.lock().unwrap().name, "sq");
    assert_eq!(back.repository_id(), Some(Shape::REPOSITORY_ID));
    let back = g.echo_shape(&ring().upcast()).unwrap();
    assert_eq!(*shapes.lock().unwrap(), ["sq", "ring"]);
    let r = back.downcast::<Ring>().unwrap();
    let got = r.lock().map(|r| (r.inner, r.radius));
    assert_eq!(got, Some((1.5, 2.0)));

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

fn pair(left: Either, right: Either, optional: Maybe) -> ValueRef<Pair> {
    ValueRef::new(Pair {
        name: "p".into(),
        secret: 3,
        left,
        right,
        optional,
    })
}

/// The three nodes of a pair whose unions all hold nodes.
fn pair_nodes(p: &ValueRef<Pair>) -> (ValueRef<Node>, ValueRef<Node>, ValueRef<Node>) {
    let g = p.lock().unwrap();
    match (&g.left, &g.right, &g.optional) {
        (Either::First(a), Either::First(b), Maybe::Some(c)) => (a.clone(), b.clone(), c.clone()),
        other => panic!("not three nodes: {other:?}"),
    }
}

/// Unions holding values inside a value's state (a chunked one), a box and a struct: the
/// values of their cases share the stream state, so one node in three unions is sent once
/// and arrives as one node; every case, the implicit default and a wrong discriminator.
#[test]
fn unions_holding_values_share_the_value_stream() {
    let n = list(&[1, 2]);
    let p = pair(
        Either::First(n.clone()),
        Either::First(n.clone()),
        Maybe::Some(n.clone()),
    );
    for order in [ByteOrder::Big, ByteOrder::Little] {
        for pad in [0, 1, 5] {
            let (a, b, c) = pair_nodes(&round_trip(&p, order, pad));
            assert!(a.ptr_eq(&b) && a.ptr_eq(&c), "one node, sent once");
            assert_eq!(ids(a, 5), [1, 2]);
        }
    }
    let other = pair(
        Either::Tag(3, Label::new("t".into())),
        Either::Text(-9, "text".into()),
        Maybe::Default_(false),
    );
    let back = round_trip(&other, ByteOrder::Big, 3);
    {
        let g = back.lock().unwrap();
        assert_eq!(g.left, Either::Tag(3, Label::new("t".into())));
        assert_eq!(g.right, Either::Text(-9, "text".into()));
        assert_eq!(g.optional, Maybe::Default_(false));
        assert_eq!((g.name.as_str(), g.secret), ("p", 3));
    }
    // A discriminator that does not select the member is refused, not sent.
    let bad = pair(
        Either::Tag(1, Label(None)),
        Either::Text(0, String::new()),
        Maybe::Default_(false),
    );
    assert!(corbina::cdr::to_bytes(&bad, ctx()).is_err());
    let bad = pair(
        Either::Text(2, String::new()),
        Either::Text(0, String::new()),
        Maybe::Default_(false),
    );
    assert!(corbina::cdr::to_bytes(&bad, ctx()).is_err());

    // Read as its truncatable base, the unions are skipped with the rest of the state.
    let bytes = corbina::cdr::to_bytes(&p, ctx()).unwrap();
    let shape: ValueRef<Shape> =
        corbina::cdr::from_bytes(&bytes, ByteOrder::NATIVE, ctx()).unwrap();
    assert_eq!(shape.lock().unwrap().name, "p");

    // In an Any: the TypeCode walker copies the unions' values too.
    let mut w = CdrWriter::with_byte_order(ByteOrder::Little, ctx());
    w.write_octet(1);
    let any = corbina::Any::insert(&p).unwrap();
    any.write(&mut w).unwrap();
    let bytes = w.into_bytes();
    let mut r = CdrReader::new(&bytes, ByteOrder::Little, ctx());
    r.read_octet().unwrap();
    let any = corbina::Any::read(&mut r).unwrap();
    let (a, b, c) = pair_nodes(&any.extract::<ValueRef<Pair>>().unwrap());
    assert!(a.ptr_eq(&b) && a.ptr_eq(&c));

    // A box of a union holding a cycle, and a struct whose union and member share a node.
    let cycle = list(&[7, 8]);
    let second = cycle.lock().unwrap().next.clone();
    second.lock().unwrap().next = cycle.clone();
    let b = round_trip(
        &EitherBox::new(Either::First(cycle.clone())),
        ByteOrder::Big,
        1,
    );
    let Some(Either::First(head)) = b.0.as_deref() else {
        panic!("{b:?}")
    };
    assert_eq!(ids(head.clone(), 4), [7, 8, 7, 8]);
    let w = round_trip(
        &Wrapped {
            m: Maybe::Some(cycle.clone()),
            n: cycle.clone(),
        },
        ByteOrder::Little,
        2,
    );
    let Maybe::Some(m) = &w.m else { panic!() };
    assert!(m.ptr_eq(&w.n));
    for c in [&cycle, head, m] {
        c.lock().unwrap().next.lock().unwrap().next = ValueRef::null();
    }
    assert_eq!(
        EitherBox(None),
        round_trip(&EitherBox(None), ByteOrder::Big, 0)
    );
}

#[test]
fn a_value_with_unions_through_a_skeleton() {
    let skeleton = Arc::new(GraphsSkeleton::new(GraphsImpl::default()));
    let mut ior = corbina::giop::Ior::nil();
    ior.type_id = Graphs::REPOSITORY_ID.to_string();
    let obj = ObjectRef::new(
        ior,
        b"key".to_vec(),
        Arc::new(ServantInvoker::new(skeleton, ctx())),
    );
    let g = Graphs::unchecked_narrow(&obj);
    let n = list(&[4]);
    let p = pair(
        Either::First(n.clone()),
        Either::First(n.clone()),
        Maybe::Some(n),
    );
    let (a, b, c) = pair_nodes(&g.echo_pair(&p).unwrap());
    assert!(a.ptr_eq(&b) && a.ptr_eq(&c));
    assert_eq!(ids(a, 3), [4]);
}

/// Byte-exact: in a chunked value the chunk ends after each string member, so the members
/// after it start a chunk of their own (omniORB 4.3 misreads a chunk going on after a string
/// that crosses its receive buffer's end).
#[test]
fn a_chunk_ends_after_each_string_member() {
    let c = ValueRef::new(Circle {
        name: "ab".into(),
        secret: 7,
        radius: 1.0,
        tag: Label(None),
    });
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, ctx());
    c.encode(&mut w).unwrap();
    let bytes = w.into_bytes();
    let be = |v: u32| v.to_be_bytes();
    let mut want = Vec::new();
    want.extend(be(0x7fff_ff0e)); // value tag: repository-id list, chunked
    want.extend(be(2));
    for id in ["IDL:Values/Circle:1.0", "IDL:Values/Shape:1.0"] {
        want.extend(be(id.len() as u32 + 1));
        want.extend(id.as_bytes());
        want.push(0);
        while want.len() % 4 != 0 {
            want.push(0);
        }
    }
    want.extend(be(7)); // chunk: the name alone
    want.extend(be(3));
    want.extend(b"ab\0");
    want.push(0); // alignment, between chunks
    want.extend(be(20)); // chunk: secret, radius (8-aligned), the null tag
    want.extend(be(7));
    want.extend([0; 4]);
    want.extend(1.0f64.to_be_bytes());
    want.extend(be(0));
    want.extend(be(-1i32 as u32)); // end tag
    assert_eq!(bytes, want);
    let back: ValueRef<Circle> = corbina::cdr::from_bytes(&bytes, ByteOrder::Big, ctx()).unwrap();
    assert_eq!(back.lock().unwrap().name, "ab");
}

fn distinct(nodes: &[ValueRef<Node>]) -> i32 {
    let mut seen: Vec<ValueRef<Node>> = Vec::new();
    for n in nodes {
        if !seen.iter().any(|s| s.ptr_eq(n)) {
            seen.push(n.clone());
        }
    }
    seen.len() as i32
}

/// `Shares` with the semantics of `tests/idl/values.idl`: counts distinct nodes, tells
/// whether the struct's node is the other parameter, returns one node twice.
struct SharesImpl;

impl SharesServant for SharesImpl {
    fn distinct_in(&self, nodes: &[ValueRef<Node>]) -> Result<i32, SystemException> {
        Ok(distinct(nodes))
    }
    fn holder_shares(&self, h: &Holder, n: &ValueRef<Node>) -> Result<bool, SystemException> {
        Ok(h.head.ptr_eq(n) && !n.is_null())
    }
    fn twice(&self, n: &ValueRef<Node>) -> Result<NodeSeq, SystemException> {
        Ok(vec![n.clone(), n.clone()])
    }
    fn bounded(
        &self,
        s: &[ValueRef<Node>],
    ) -> Result<(ShortNodeSeq, ValueRef<Node>), SystemException> {
        Ok((s.to_vec(), s.first().cloned().unwrap_or_default()))
    }
}

impl AmhSharesServant for SharesImpl {
    fn distinct_in(&self, rh: AmhSharesResponseHandler, nodes: &[ValueRef<Node>]) {
        rh.distinct_in(distinct(nodes)).unwrap();
    }
    fn holder_shares(&self, rh: AmhSharesResponseHandler, h: &Holder, n: &ValueRef<Node>) {
        rh.holder_shares(h.head.ptr_eq(n) && !n.is_null()).unwrap();
    }
    fn twice(&self, rh: AmhSharesResponseHandler, n: &ValueRef<Node>) {
        rh.twice(&[n.clone(), n.clone()]).unwrap();
    }
    fn bounded(&self, rh: AmhSharesResponseHandler, s: &[ValueRef<Node>]) {
        rh.bounded(s, &s.first().cloned().unwrap_or_default())
            .unwrap();
    }
}

/// One indirection scope per request and reply body, whatever holds the values.
fn check_shares(s: &Shares) {
    let a = list(&[1]);
    let b = list(&[2]);
    // The elements of a sequence parameter.
    assert_eq!(
        s.distinct_in(&[a.clone(), a.clone(), b.clone()]).unwrap(),
        2
    );
    assert_eq!(s.distinct_in(&[]).unwrap(), 0);
    // A struct parameter holding a value, and another parameter.
    let h = Holder {
        head: a.clone(),
        label: Label(None),
    };
    assert!(s.holder_shares(&h, &a).unwrap());
    assert!(!s.holder_shares(&h, &b).unwrap());
    // The elements of a sequence result.
    let two = s.twice(&a).unwrap();
    assert!(two[0].ptr_eq(&two[1]) && !two[0].ptr_eq(&a));
    // A bounded sequence result and an out parameter in one reply; the bound is checked.
    let (back, first) = s.bounded(&[b.clone(), a.clone(), b.clone()]).unwrap();
    assert!(back[0].ptr_eq(&back[2]) && back[0].ptr_eq(&first) && !back[0].ptr_eq(&back[1]));
    let err = s.bounded(&vec![a.clone(); 5]).unwrap_err();
    assert_eq!(err.kind, corbina::SystemExceptionKind::Marshal, "{err}");
}

fn serve(orb: &corbina::Orb, servant: Arc<dyn corbina::Servant>) -> Shares {
    let poa = orb.root_poa();
    let id = poa.activate_object(servant).unwrap();
    poa.the_poa_manager().activate().unwrap();
    Shares::unchecked_narrow(&poa.id_to_reference(&id).unwrap().without_collocation())
}

fn orb() -> corbina::Orb {
    corbina::Orb::with_config(corbina::OrbConfig {
        endpoints: vec![corbina::config::Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..corbina::OrbConfig::default()
    })
}

#[test]
fn sequences_and_structs_share_the_request_scope_over_iiop() {
    let orb = orb();
    check_shares(&serve(&orb, Arc::new(SharesSkeleton::new(SharesImpl))));
    // An AMH servant reads and answers in the same scopes.
    check_shares(&serve(&orb, Arc::new(AmhSharesSkeleton::new(SharesImpl))));
    orb.destroy();
}

/// What the reply handler received.
struct Replies(Mutex<std::sync::mpsc::Sender<String>>);

impl Replies {
    fn send(&self, s: String) -> Result<(), SystemException> {
        self.0.lock().unwrap().send(s).unwrap();
        Ok(())
    }
}

impl AmiSharesHandlerServant for Replies {
    fn distinct_in(&self, n: i32) -> Result<(), SystemException> {
        self.send(format!("distinct_in {n}"))
    }
    fn distinct_in_excep(&self, _: &corbina::ami::ExceptionHolder) -> Result<(), SystemException> {
        self.send("distinct_in raised".into())
    }
    fn holder_shares(&self, b: bool) -> Result<(), SystemException> {
        self.send(format!("holder_shares {b}"))
    }
    fn holder_shares_excep(
        &self,
        _: &corbina::ami::ExceptionHolder,
    ) -> Result<(), SystemException> {
        self.send("holder_shares raised".into())
    }
    fn twice(&self, two: &[ValueRef<Node>]) -> Result<(), SystemException> {
        self.send(format!("twice shared {}", two[0].ptr_eq(&two[1])))
    }
    fn twice_excep(&self, _: &corbina::ami::ExceptionHolder) -> Result<(), SystemException> {
        self.send("twice raised".into())
    }
    fn bounded(&self, s: &[ValueRef<Node>], first: &ValueRef<Node>) -> Result<(), SystemException> {
        self.send(format!("bounded {} {}", s.len(), s[0].ptr_eq(first)))
    }
    fn bounded_excep(&self, h: &corbina::ami::ExceptionHolder) -> Result<(), SystemException> {
        let e: SystemException = h.raise_exception();
        self.send(format!("bounded raised {:?}", e.kind))
    }
}

#[test]
fn sendc_shares_the_request_scope() {
    let orb = orb();
    let s = serve(&orb, Arc::new(SharesSkeleton::new(SharesImpl)));
    let (tx, rx) = std::sync::mpsc::channel();
    let poa = orb.root_poa();
    let id = poa
        .activate_object(Arc::new(AmiSharesHandlerSkeleton::new(Replies(
            Mutex::new(tx),
        ))))
        .unwrap();
    let handler = AmiSharesHandler::unchecked_narrow(&poa.id_to_reference(&id).unwrap());
    let (a, b) = (list(&[1]), list(&[2]));
    let wait = || rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
    s.sendc_distinct_in(Some(&handler), &[a.clone(), b.clone(), a.clone()]);
    assert_eq!(wait(), "distinct_in 2");
    let h = Holder {
        head: a.clone(),
        label: Label(None),
    };
    s.sendc_holder_shares(Some(&handler), &h, &a);
    assert_eq!(wait(), "holder_shares true");
    s.sendc_twice(Some(&handler), &a);
    assert_eq!(wait(), "twice shared true");
    s.sendc_bounded(Some(&handler), &[b.clone(), a.clone()]);
    assert_eq!(wait(), "bounded 2 true");
    s.sendc_bounded(Some(&handler), &vec![a.clone(); 5]);
    assert_eq!(wait(), "bounded raised Marshal");
    orb.destroy();
}
