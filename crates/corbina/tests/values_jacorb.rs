//! Objects by value between Corbina and JacORB 3.9 (`peers/values.idl`, the Java peer of
//! `peers/jacorb/`), both ways, over real IIOP: cycles arrive as cycles, a value sent twice
//! arrives shared, boxes of string sequences, values in an `Any`, and values derived from
//! `Base` passed where IDL says `Base` (issue 27): a truncatable `Derived` and a non-truncatable
//! `Sibling`, to receivers with and without their factories. One JVM serves every test of this
//! file.
//!
//! What JacORB puts on the wire (seen in these tests): big-endian; `Derived` as a chunked value
//! with both repository ids (tag 0x7fffff0e, one chunk holding `name` and `extra`, end tag -1);
//! `Node`s and boxes unchunked with a single id (0x7fffff02), the id indirected after its
//! first use; a node passed as both parameters of `same_node` as an indirection from the
//! second parameter to the first.
//!
//! The valuetypes, proxy and skeleton are the generator's (`peers/values.idl`, golden
//! `peers_values.rs`): a `ValueRef<Base>` holds any value of Base's family.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use corbina::cdr::{CdrDecode, CdrReader};
use corbina::valuetype::{ValueInput, ValueMember, ValueRef};
use corbina::{Orb, OrbConfig, Servant, SystemException};
use corbina_testpeers::JacorbPeer;

mod values_family;
use values_family::generated::values::*;
use values_family::{derived, describe_base, factories, sibling, Truncating};

/// A list of `n` nodes, ids `0..n`, whose last node points back to the first.
fn ring(n: i32) -> ValueRef<Node> {
    let head = ValueRef::new(Node {
        id: 0,
        next: ValueRef::null(),
    });
    let mut last = head.clone();
    for id in 1..n {
        let node = ValueRef::new(Node {
            id,
            next: ValueRef::null(),
        });
        last.lock().unwrap().next = node.clone();
        last = node;
    }
    last.lock().unwrap().next = head.clone();
    head
}

/// The distinct nodes reachable from `head`, in list order.
fn nodes(head: &ValueRef<Node>) -> Vec<ValueRef<Node>> {
    // By identity: the address of each node's shared state.
    let mut seen = HashSet::new();
    let mut order = Vec::new();
    let mut node = head.clone();
    while node
        .handle()
        .is_some_and(|h| seen.insert(Arc::as_ptr(h) as usize))
    {
        order.push(node.clone());
        let next = node.lock().unwrap().next.clone();
        node = next;
    }
    order
}

/// Asserts that `head` is a ring of `n` nodes with ids `0..n`, then breaks it (an `Arc`
/// cycle would never be freed).
fn assert_ring_and_break(head: &ValueRef<Node>, n: usize) {
    let all = nodes(head);
    let ids: Vec<i32> = all.iter().map(|v| v.lock().unwrap().id).collect();
    assert_eq!(
        ids,
        (0..n as i32).collect::<Vec<_>>(),
        "node ids along the list"
    );
    let last = all.last().expect("not null");
    assert!(
        last.lock().unwrap().next.ptr_eq(head),
        "the last of {n} nodes does not point back to the head"
    );
    break_ring(head);
}

fn break_ring(head: &ValueRef<Node>) {
    for v in nodes(head) {
        v.lock().unwrap().next = ValueRef::null();
    }
}

/// `Values::ValueExchange` served by Corbina through the generated skeleton.
#[derive(Default)]
struct Exchange {
    /// The rings made by make_cycle, broken when the servant goes.
    made: Mutex<Vec<ValueRef<Node>>>,
}

impl Drop for Exchange {
    fn drop(&mut self) {
        for head in self.made.get_mut().unwrap().drain(..) {
            break_ring(&head);
        }
    }
}

impl ValueExchangeServant for Exchange {
    fn make_cycle(&self, n: i32) -> Result<ValueRef<Node>, SystemException> {
        if n < 1 {
            return Err(SystemException::new(
                corbina::SystemExceptionKind::BadParam,
                corbina::cdr::OMG_VMCID,
            ));
        }
        let head = ring(n);
        self.made.lock().unwrap().push(head.clone());
        Ok(head)
    }
    fn count_distinct(&self, head: &ValueRef<Node>) -> Result<i32, SystemException> {
        let count = nodes(head).len() as i32;
        break_ring(head);
        Ok(count)
    }
    fn same_node(&self, a: &ValueRef<Node>, b: &ValueRef<Node>) -> Result<bool, SystemException> {
        Ok(a.ptr_eq(b))
    }
    fn echo_node(&self, head: &ValueRef<Node>) -> Result<ValueRef<Node>, SystemException> {
        Ok(head.clone())
    }
    fn echo_any(&self, a: &corbina::Any) -> Result<corbina::Any, SystemException> {
        Ok(a.clone())
    }
    fn count_in_any(&self, a: &corbina::Any) -> Result<i32, SystemException> {
        Ok(a.extract::<ValueRef<Node>>().map_or(-1, |head| {
            let n = nodes(&head).len() as i32;
            break_ring(&head);
            n
        }))
    }
    fn echo_box(&self, b: &StringSeqBox) -> Result<StringSeqBox, SystemException> {
        Ok(b.clone())
    }
    fn box_length(&self, b: &StringSeqBox) -> Result<i32, SystemException> {
        Ok(b.0.as_ref().map_or(-1, |c| c.len() as i32))
    }
    fn describe(&self, b: &ValueRef<Base>) -> Result<String, SystemException> {
        Ok(describe_base(b))
    }
    fn make_derived(&self, name: &str, extra: i32) -> Result<ValueRef<Base>, SystemException> {
        Ok(derived(name, extra))
    }
    fn make_sibling(&self, name: &str, count: i32) -> Result<ValueRef<Base>, SystemException> {
        Ok(sibling(name, count))
    }
    fn echo_base(&self, b: &ValueRef<Base>) -> Result<ValueRef<Base>, SystemException> {
        Ok(b.clone())
    }
}

/// The JVM of this file's tests, shared (its state, Derived's factory, belongs to whoever
/// holds the guard). It exits when this process ends and its stdin closes.
fn peer() -> Option<MutexGuard<'static, JacorbPeer>> {
    static PEER: OnceLock<Option<Mutex<JacorbPeer>>> = OnceLock::new();
    PEER.get_or_init(|| JacorbPeer::start("values-jacorb").map(Mutex::new))
        .as_ref()
        .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()))
}

fn orb() -> Orb {
    Orb::with_config(OrbConfig {
        endpoints: vec![corbina::config::Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..OrbConfig::default()
    })
}

/// Decodes a `T` (as a function item, whatever the reader's lifetime).
fn dec<T: for<'r> CdrDecode<'r>>(r: &mut CdrReader<'_>) -> corbina::cdr::Result<T> {
    T::decode(r)
}

/// The JacORB ValueExchange through the generated proxy.
fn exchange(orb: &Orb, peer: &JacorbPeer) -> (corbina::ObjectRef, ValueExchange) {
    let vx = orb.string_to_object(&peer.values_ior).unwrap();
    let x = ValueExchange::narrow(&vx).unwrap();
    (vx, x)
}

#[test]
fn cycles_and_shared_nodes_from_corbina_to_jacorb_and_back() {
    let Some(peer) = peer() else { return };
    let orb = orb();
    let (_, x) = exchange(&orb, &peer);
    for n in [1, 3, 500] {
        let head = x.make_cycle(n).unwrap();
        assert_ring_and_break(&head, n as usize);
        let sent = ring(n);
        let count = x.count_distinct(&sent).unwrap();
        break_ring(&sent);
        assert_eq!(count, n, "JacORB counted the nodes of a ring of {n}");
    }
    let sent = ring(3);
    let back = x.echo_node(&sent).unwrap();
    break_ring(&sent);
    assert_ring_and_break(&back, 3);

    // One node as both parameters: the second is an indirection to the first.
    let a = ValueRef::new(Node {
        id: 7,
        next: ValueRef::null(),
    });
    assert!(
        x.same_node(&a, &a).unwrap(),
        "one node sent twice did not arrive shared"
    );
    let b = ValueRef::new(Node {
        id: 7,
        next: ValueRef::null(),
    });
    assert!(
        !x.same_node(&a, &b).unwrap(),
        "two equal nodes arrived as one"
    );
    orb.destroy();
}

#[test]
fn string_sequence_boxes_from_corbina_to_jacorb_and_back() {
    let Some(peer) = peer() else { return };
    let orb = orb();
    let (_, x) = exchange(&orb, &peer);
    let boxes = [
        StringSeqBox(None),
        StringSeqBox::new(vec![]),
        StringSeqBox::new(vec!["a".into(), "bc".into(), "def".into()]),
        StringSeqBox::new(vec!["grüße".into(), "日本語".into(), "😀 ok".into()]),
    ];
    for b in &boxes {
        assert_eq!(x.echo_box(b).unwrap(), *b);
        let len = x.box_length(b).unwrap();
        assert_eq!(len, b.0.as_ref().map_or(-1, |c| c.len() as i32));
    }
    orb.destroy();
}

/// Nodes (typed, `Any::insert`) in an Any cross to JacORB, which extracts and counts them.
///
/// Limits of JacORB 3.9 seen here (UNKNOWN from its side), not of the bytes Corbina sends:
/// it cannot read an Any holding a ring of three nodes (the last one an indirection to a value
/// three levels up), `echo_any` fails for an Any holding a list of nodes, and an Any
/// holding a `StringSeqBox` gets MARSHAL. omniORB does all three (`values_omniorb.rs`).
#[test]
fn values_in_an_any_reach_jacorb() {
    let Some(peer) = peer() else { return };
    let orb = orb();
    let (_, x) = exchange(&orb, &peer);
    for n in [1, 2] {
        let sent = ring(n);
        let a = corbina::Any::insert(&sent).unwrap();
        assert_eq!(x.count_in_any(&a).unwrap(), n, "ring of {n}");
        break_ring(&sent);
    }
    let list = (0..3).rev().fold(ValueRef::null(), |next, id| {
        ValueRef::new(Node { id, next })
    });
    assert_eq!(
        x.count_in_any(&corbina::Any::insert(&list).unwrap())
            .unwrap(),
        3
    );
    let null = corbina::Any::insert(&ValueRef::<Node>::null()).unwrap();
    assert_eq!(x.count_in_any(&null).unwrap(), 0);
    assert_eq!(x.count_in_any(&corbina::Any::from_long(1)).unwrap(), -1);
    orb.destroy();
}

#[test]
fn derived_values_between_corbina_and_jacorb() {
    let Some(mut peer) = peer() else { return };
    let orb = orb();
    let (_, x) = exchange(&orb, &peer);
    let base = ValueRef::new(Base { name: "b".into() });
    assert_eq!(x.describe(&base).unwrap(), "Base:b");
    assert_eq!(x.describe(&derived("d", 7)).unwrap(), "Derived:d:7");
    assert_eq!(x.describe(&sibling("s", 3)).unwrap(), "Sibling:s:3");

    // From JacORB: what it makes arrives as what it is, through the generated proxy.
    let _factories = factories();
    assert_eq!(
        describe_base(&x.make_derived("m", 5).unwrap()),
        "Derived:m:5"
    );
    assert_eq!(
        describe_base(&x.make_sibling("n", 2).unwrap()),
        "Sibling:n:2"
    );
    assert_eq!(
        describe_base(&x.echo_base(&derived("d", 7)).unwrap()),
        "Derived:d:7"
    );
    assert_eq!(
        describe_base(&x.echo_base(&sibling("e", 1)).unwrap()),
        "Sibling:e:1"
    );
    // A Corbina receiver without Derived and Sibling truncates one and refuses the other.
    {
        let _truncating = Truncating::start();
        assert_eq!(describe_base(&x.make_derived("m", 5).unwrap()), "Base:m");
        let err = x.make_sibling("n", 2).unwrap_err();
        assert_eq!(err.kind, corbina::SystemExceptionKind::Marshal, "{err}");
    }

    // JacORB without their factories truncates the Derived (and echoes the Base) and cannot
    // read the Sibling.
    assert!(peer.command("derived-factory off").is_empty());
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        assert_eq!(x.describe(&derived("d", 7)).unwrap(), "Base:d");
        let back = x.echo_base(&derived("d", 7)).unwrap();
        assert_eq!(back.repository_id(), Some(Base::REPOSITORY_ID));
        assert_eq!(describe_base(&back), "Base:d");
        let err = x.describe(&sibling("s", 3)).unwrap_err();
        assert!(
            matches!(
                err.kind,
                corbina::SystemExceptionKind::Marshal | corbina::SystemExceptionKind::Unknown
            ),
            "{err}"
        );
    }));
    assert!(peer.command("derived-factory on").is_empty());
    if let Err(e) = outcome {
        std::panic::resume_unwind(e);
    }
    orb.destroy();
}

/// JacORB's checks (`peers/jacorb/src/ValueChecks.java`) against a Corbina ValueExchange,
/// with and without Derived's factory on the JacORB side.
#[test]
fn jacorb_client_values_reach_corbina_and_back() {
    let Some(mut peer) = peer() else { return };
    let orb = orb();
    let poa = orb.root_poa();
    poa.the_poa_manager().activate().unwrap();
    let servant: Arc<dyn Servant> = Arc::new(ValueExchangeSkeleton::new(Exchange::default()));
    poa.activate_object(servant.clone()).unwrap();
    let obj = poa.servant_to_reference(&servant).unwrap();
    let file = peer.ior_file("corbina-values.ior", &orb.object_to_string(&obj).unwrap());
    let mut lines = peer.command(&format!("values-check {}", file.display()));
    assert!(peer.command("derived-factory off").is_empty());
    let without = peer.command(&format!("values-check {}", file.display()));
    assert!(peer.command("derived-factory on").is_empty());
    lines.extend(
        without
            .into_iter()
            .map(|l| format!("{l} (no Derived factory)")),
    );
    let failed: Vec<&String> = lines
        .iter()
        .filter(|l| !l.ends_with(" ok") && !l.ends_with(" ok (no Derived factory)"))
        .collect();
    assert!(failed.is_empty(), "JacORB's checks failed: {failed:#?}");
    // 6 for cycles, echo_node, 2 same_node, 4 boxes, 4 Derived/Base, 2 Sibling; twice.
    assert_eq!(lines.len(), 2 * 19, "{lines:#?}");
    orb.destroy();
}

/// `bytes` written as hex with any whitespace.
fn hex(bytes: &str) -> Vec<u8> {
    let digits: Vec<u8> = bytes.bytes().filter(u8::is_ascii_hexdigit).collect();
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}

fn jacorb_reader(bytes: &[u8]) -> CdrReader<'_> {
    CdrReader::new(
        bytes,
        corbina::cdr::ByteOrder::Big,
        corbina::cdr::CdrContext::GIOP_1_2,
    )
}

/// Request bodies JacORB 3.9 sent in these tests, byte for byte, decoded without a JVM.
#[test]
fn jacorb_value_encodings_decode_byte_exact() {
    // echo_node(a ring of 3): the second and third nodes' repository ids are indirections
    // (-36, -52), and the third node's `next` is an indirection (-68) to the head.
    let ring3 = hex(
        "7fffff02 00000014 49444c3a56616c7565732f4e6f64653a312e3000 00000000
         7fffff02 ffffffff ffffffdc 00000001
         7fffff02 ffffffff ffffffcc 00000002 ffffffff ffffffbc",
    );
    let mut r = jacorb_reader(&ring3);
    let head = dec::<ValueRef<Node>>(&mut r).unwrap();
    assert_eq!(r.remaining(), 0);
    assert_ring_and_break(&head, 3);

    // same_node(a, a): the second parameter is an indirection (-40) to the first, so the
    // parameters must be read with one ValueInput.
    let same = hex(
        "7fffff02 00000014 49444c3a56616c7565732f4e6f64653a312e3000 00000007 00000000
         ffffffff ffffffd8",
    );
    let mut r = jacorb_reader(&same);
    let mut input = ValueInput::new();
    let a = ValueRef::<Node>::read_member(&mut r, &mut input).unwrap();
    let b = ValueRef::<Node>::read_member(&mut r, &mut input).unwrap();
    assert!(a.ptr_eq(&b) && !a.is_null());
    assert_eq!(r.remaining(), 0);

    // describe(Derived{"d", 7}): chunked, both repository ids, one 12-byte chunk, end tag -1.
    let derived = hex(
        "7fffff0e 00000002 00000017 49444c3a56616c7565732f446572697665643a312e3000 00
         00000014 49444c3a56616c7565732f426173653a312e3000
         0000000c 00000002 6400 0000 00000007 ffffffff",
    );
    let mut r = jacorb_reader(&derived);
    let d = ValueRef::<Derived>::decode(&mut r).unwrap();
    assert_eq!(r.remaining(), 0);
    assert_eq!(
        d.lock().map(|d| (d.name.clone(), d.extra)),
        Some(("d".into(), 7))
    );
    // Read where IDL says Base, it is a Derived (Base's generated code knows it)...
    let mut r = jacorb_reader(&derived);
    let b = ValueRef::<Base>::decode(&mut r).unwrap();
    assert_eq!(r.remaining(), 0);
    assert_eq!(describe_base(&b), "Derived:d:7");
    // ...and a receiver knowing only Base truncates: it skips the rest of the chunk.
    let _factories = factories();
    let _truncating = Truncating::start();
    let mut r = jacorb_reader(&derived);
    let b = ValueRef::<Base>::decode(&mut r).unwrap();
    assert_eq!(r.remaining(), 0);
    assert_eq!(describe_base(&b), "Base:d");
}
