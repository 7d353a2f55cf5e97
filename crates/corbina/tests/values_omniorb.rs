//! Objects by value with omniORB's C++ mapping, both ways, over real IIOP (issue 17):
//! `peers/values.idl`, served and called by `peers/omni_value_peer.cc`. Cycles arrive as
//! cycles, a value sent twice arrives as one value, boxes (null, empty, non-ASCII) keep their
//! content, and a derived value passed where IDL says `Base` (issue 27) arrives as the most
//! derived type the receiver has a factory for: a truncatable `Derived` whole or as its
//! `Base`, a non-truncatable `Sibling` whole or refused (MARSHAL). Corbina's side is the
//! generated code only: `ValueRef<Base>` holds any value of Base's family.

use std::sync::{Arc, Mutex};

use corbina::cdr::value::ValueInput as WireValueInput;
use corbina::cdr::CdrEncode;
use corbina::valuetype::ValueRef;
use corbina::{Orb, OrbConfig, Servant, ServerRequest, SystemException};

mod values_family;
use values_family::generated::values::*;
use values_family::{derived, describe_base, factories, sibling, Truncating};

fn orb() -> Orb {
    Orb::with_config(OrbConfig {
        endpoints: vec![corbina::config::Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..OrbConfig::default()
    })
}

/// A list of `n` new nodes with ids 1..=n; the last points to the first when `cyclic`.
fn make_list(n: i32, cyclic: bool) -> ValueRef<Node> {
    let nodes: Vec<ValueRef<Node>> = (1..=n)
        .map(|id| {
            ValueRef::new(Node {
                id,
                next: ValueRef::null(),
            })
        })
        .collect();
    for pair in nodes.windows(2) {
        pair[0].lock().unwrap().next = pair[1].clone();
    }
    if cyclic {
        if let (Some(last), Some(first)) = (nodes.last(), nodes.first()) {
            last.lock().unwrap().next = first.clone();
        }
    }
    nodes.first().cloned().unwrap_or_default()
}

/// Why `head` is not a cycle of `n` nodes with ids 1..=n (`None`: it is).
fn cycle_error(head: &ValueRef<Node>, n: i32) -> Option<String> {
    let mut p = head.clone();
    for i in 1..=n {
        let next = {
            let Some(node) = p.lock() else {
                return Some(format!("node {i} is null"));
            };
            if node.id != i {
                return Some(format!("node {i} has id {}", node.id));
            }
            node.next.clone()
        };
        p = next;
    }
    (!p.ptr_eq(head)).then(|| format!("node {n}'s next is not the head"))
}

/// Unlinks every node reachable from `head`, so that a cycle's `Arc`s are freed.
fn release(head: ValueRef<Node>) {
    let mut p = head;
    while let Some(next) = p.lock().map(|mut n| std::mem::take(&mut n.next)) {
        p = next;
    }
}

/// A value read on its own (for [`ObjectRef::invoke`]'s reply decoder).
fn count_distinct(head: &ValueRef<Node>) -> i32 {
    // Keyed by address: ValueRef hashes by identity, but clippy cannot know it.
    let mut seen = std::collections::HashSet::new();
    let mut p = head.clone();
    while p.handle().is_some_and(|h| seen.insert(Arc::as_ptr(h))) {
        let next = p.lock().map(|n| n.next.clone()).unwrap_or_default();
        p = next;
    }
    seen.len() as i32
}

fn strings(items: &[&str]) -> StringSeqBox {
    StringSeqBox::new(items.iter().map(|s| s.to_string()).collect())
}

/// The cycle length of the checks run by omniORB's client (each node nests one value deeper);
/// `deep_lists_cross_to_omniorb_and_back` and
/// `omniorb_client_reads_and_sends_deep_lists_to_a_corbina_server` go to [`DEEP`].
const READ_DEPTH: i32 = 500;

const BOXES: &[&[&str]] = &[&[], &["a", "bb", "ccc"], &["żółw", "日本", ""]];

/// The omniORB value server (`--no-derived-factory` when `!derived_factory`), a Corbina ORB
/// and a proxy to it.
fn omni_server(
    bin: &std::path::Path,
    name: &str,
    derived_factory: bool,
) -> (corbina_testpeers::PeerProcess, Orb, ValueExchange) {
    let extra: &[&str] = if derived_factory {
        &[]
    } else {
        &["--no-derived-factory"]
    };
    let (peer, ior) = corbina_testpeers::omni_value_server(bin, name, extra);
    let orb = orb();
    let obj = orb.string_to_object(&ior).unwrap();
    let x = ValueExchange::narrow(&obj).unwrap();
    (peer, orb, x)
}

#[test]
fn cycles_made_by_omniorb_arrive_as_cycles() {
    let Some(bin) = corbina_testpeers::value_peers() else {
        return;
    };
    let (_peer, orb, x) = omni_server(bin, "values-make-cycle", true);
    for n in [1, 3, READ_DEPTH] {
        let head = x.make_cycle(n).unwrap();
        assert_eq!(cycle_error(&head, n), None, "make_cycle({n})");
        assert_eq!(count_distinct(&head), n);
        release(head);
    }
    // 1000 nodes nest 1000 values deep: well inside the nesting limit.
    let head = x.make_cycle(1000).unwrap();
    assert_eq!(cycle_error(&head, 1000), None);
    release(head);
    // The connection is still good.
    assert_eq!(x.count_distinct(&make_list(3, false)).unwrap(), 3);
    orb.destroy();
}

/// Issue 27: lists nested `DEEP` values deep cross to omniORB and back. Corbina reads and
/// writes any depth up to its nesting limit (default 100,000) in any thread. omniORB 4.2's
/// marshallers recurse once per nested value on the thread's stack: with the usual 8 MiB
/// (`ulimit -s 8192`) it encodes about 20,000 levels (measured: 20,000 fine, 30,000 kills the process)
/// and decodes fewer than 20,000; the peers started here get a stack of [`PEER_STACK`].
const DEEP: i32 = 100_000;

/// The stack limit (`RLIMIT_STACK`) peers started by this test binary inherit: what omniORB
/// needs for [`DEEP`] levels (about 400 octets a level) with room to spare.
const PEER_STACK: u64 = 256 << 20;

/// Raises this process's stack limit, which the peers it starts inherit (their main thread's
/// stack, and the default size of the threads they create). This process's own threads are
/// sized by Rust, unaffected.
fn raise_peer_stack() {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let now = getrlimit(Resource::Stack);
    let want = now.maximum.map_or(PEER_STACK, |max| PEER_STACK.min(max));
    if now.current.is_some_and(|c| c < want) {
        let _ = setrlimit(
            Resource::Stack,
            Rlimit {
                current: Some(want),
                maximum: now.maximum,
            },
        );
    }
}

#[test]
fn deep_lists_cross_to_omniorb_and_back() {
    let Some(bin) = corbina_testpeers::value_peers() else {
        return;
    };
    raise_peer_stack();
    let (_peer, orb, x) = omni_server(bin, "values-deep", true);
    let n = std::env::var("DEEP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEEP);
    // Made and sent by omniORB, read by Corbina.
    let head = x.make_cycle(n).unwrap();
    assert_eq!(cycle_error(&head, n), None, "make_cycle({n})");
    release(head);
    // Made and sent by Corbina, read by omniORB.
    let list = make_list(n, false);
    assert_eq!(x.count_distinct(&list).unwrap(), n);
    let head = make_list(n, true);
    assert_eq!(x.count_distinct(&head).unwrap(), n);
    release(head);
    orb.destroy();
}

#[test]
fn cycles_made_by_corbina_are_counted_by_omniorb() {
    let Some(bin) = corbina_testpeers::value_peers() else {
        return;
    };
    let (_peer, orb, x) = omni_server(bin, "values-count", true);
    for n in [1, 3, 1000] {
        let head = make_list(n, true);
        assert_eq!(x.count_distinct(&head).unwrap(), n, "cycle of {n}");
        release(head);
    }
    let list = make_list(5, false);
    assert_eq!(x.count_distinct(&list).unwrap(), 5);
    assert_eq!(x.count_distinct(&ValueRef::null()).unwrap(), 0);
    // A cycle sent and echoed comes back as a cycle.
    let head = make_list(3, true);
    let back = x.echo_node(&head).unwrap();
    assert_eq!(cycle_error(&back, 3), None);
    assert!(!back.ptr_eq(&head));
    release(head);
    release(back);
    assert!(x.echo_node(&ValueRef::null()).unwrap().is_null());
    orb.destroy();
}

#[test]
fn a_node_passed_twice_arrives_as_one_node() {
    let Some(bin) = corbina_testpeers::value_peers() else {
        return;
    };
    let (_peer, orb, x) = omni_server(bin, "values-same", true);
    let a = make_list(2, false);
    assert!(x.same_node(&a, &a).unwrap(), "one node sent twice");
    let b = make_list(2, false);
    assert!(!x.same_node(&a, &b).unwrap(), "two equal nodes");
    // Shared through a cycle too: a's successor's next is a.
    let c = make_list(2, true);
    let second = c.lock().unwrap().next.clone();
    assert!(!x.same_node(&c, &second).unwrap());
    let again = second.lock().unwrap().next.clone();
    assert!(x.same_node(&c, &again).unwrap());
    release(c);
    orb.destroy();
}

/// An `Any` holding a value (typed: `Any::insert`, `extract`) crosses to omniORB, which
/// extracts the Node from it and echoes the `Any` back; the cycle survives both ways.
#[test]
fn values_in_an_any_cross_to_omniorb_and_back() {
    let Some(bin) = corbina_testpeers::value_peers() else {
        return;
    };
    let (_peer, orb, x) = omni_server(bin, "values-any", true);
    let head = make_list(3, true);
    let a = corbina::Any::insert(&head).unwrap();
    assert_eq!(x.count_in_any(&a).unwrap(), 3);
    let back = x.echo_any(&a).unwrap();
    let got = back
        .extract::<ValueRef<Node>>()
        .expect("a Node in the echoed Any");
    assert_eq!(cycle_error(&got, 3), None);
    release(got);
    release(head);
    let null = corbina::Any::insert(&ValueRef::<Node>::null()).unwrap();
    assert_eq!(x.count_in_any(&null).unwrap(), 0);
    assert_eq!(x.count_in_any(&corbina::Any::from_long(5)).unwrap(), -1);
    // A box in an Any: omniORB keeps it by its TypeCode and sends it back unchanged.
    let b = corbina::Any::insert(&strings(&["żółw", "x"])).unwrap();
    let back = x.echo_any(&b).unwrap();
    assert_eq!(
        back.extract::<StringSeqBox>(),
        Some(strings(&["żółw", "x"]))
    );
    assert_eq!(x.count_in_any(&b).unwrap(), -1);
    orb.destroy();
}

#[test]
fn boxes_keep_null_empty_and_non_ascii_content() {
    let Some(bin) = corbina_testpeers::value_peers() else {
        return;
    };
    let (_peer, orb, x) = omni_server(bin, "values-boxes", true);
    let null = StringSeqBox(None);
    assert!(x.echo_box(&null).unwrap().0.is_none());
    assert_eq!(x.box_length(&null).unwrap(), -1);
    for items in BOXES {
        let b = strings(items);
        let back = x.echo_box(&b).unwrap();
        assert_eq!(
            back.0.as_deref().map(Vec::as_slice),
            Some(&b.0.as_deref().unwrap()[..])
        );
        assert_eq!(x.box_length(&b).unwrap(), items.len() as i32, "{items:?}");
    }
    orb.destroy();
}

#[test]
fn derived_reaches_omniorb_whole_truncated_or_refused() {
    let Some(bin) = corbina_testpeers::value_peers() else {
        return;
    };
    for factory in [true, false] {
        let name = if factory {
            "values-derived"
        } else {
            "values-truncated"
        };
        let (_peer, orb, x) = omni_server(bin, name, factory);
        let base = ValueRef::new(Base {
            name: "plain".into(),
        });
        assert_eq!(x.describe(&base).unwrap(), "Base:plain");
        assert_eq!(x.describe(&ValueRef::null()).unwrap(), "null");
        let want = if factory { "Derived:d:7" } else { "Base:d" };
        assert_eq!(x.describe(&derived("d", 7)).unwrap(), want);
        // Not truncatable: whole, or MARSHAL from a peer without Sibling's factory.
        match x.describe(&sibling("s", 3)) {
            Ok(got) => assert!(factory && got == "Sibling:s:3", "{got}"),
            Err(e) => {
                assert!(!factory, "{e}");
                assert_eq!(e.kind, corbina::SystemExceptionKind::Marshal, "{e}");
            }
        }

        // echo_base: the peer sends back what it decoded, read here as what it is.
        let back = x.echo_base(&derived("e", 5)).unwrap();
        let want = if factory { "Derived:e:5" } else { "Base:e" };
        assert_eq!(describe_base(&back), want);
        if factory {
            let back = x.echo_base(&sibling("t", 4)).unwrap();
            assert_eq!(back.repository_id(), Some(Sibling::REPOSITORY_ID));
            assert_eq!(describe_base(&back), "Sibling:t:4");
        }
        orb.destroy();
    }
}

#[test]
fn derived_made_by_omniorb_reaches_corbina() {
    let Some(bin) = corbina_testpeers::value_peers() else {
        return;
    };
    let _factories = factories();
    let (_peer, orb, x) = omni_server(bin, "values-make-derived", true);
    // The formal type is Base: a receiver knowing Derived and Sibling builds them whole...
    let d = x.make_derived("m", 9).unwrap();
    assert_eq!(describe_base(&d), "Derived:m:9");
    assert_eq!(d.lock().unwrap().name, "m");
    assert_eq!(
        describe_base(&x.make_sibling("n", 2).unwrap()),
        "Sibling:n:2"
    );
    // ...and one that does not truncates the Derived and refuses the Sibling.
    {
        let _truncating = Truncating::start();
        assert_eq!(describe_base(&x.make_derived("m", 9).unwrap()), "Base:m");
        let err = x.make_sibling("n", 2).unwrap_err();
        assert_eq!(err.kind, corbina::SystemExceptionKind::Marshal, "{err}");
    }
    // The connection is still good.
    assert_eq!(
        describe_base(&x.make_sibling("o", 1).unwrap()),
        "Sibling:o:1"
    );
    orb.destroy();
}

/// A Corbina ValueExchange with the semantics of `peers/omni_value_peer.cc`.
#[derive(Default)]
struct Exchange {
    /// The cycles made by make_cycle, unlinked when the servant goes.
    made: Mutex<Vec<ValueRef<Node>>>,
}

impl Drop for Exchange {
    fn drop(&mut self) {
        for head in self.made.get_mut().unwrap().drain(..) {
            release(head);
        }
    }
}

impl ValueExchangeServant for Exchange {
    fn make_cycle(&self, n: i32) -> Result<ValueRef<Node>, SystemException> {
        if n < 1 {
            return Err(SystemException::new(
                corbina::SystemExceptionKind::BadParam,
                0,
            ));
        }
        let head = make_list(n, true);
        self.made.lock().unwrap().push(head.clone());
        Ok(head)
    }
    fn count_distinct(&self, head: &ValueRef<Node>) -> Result<i32, SystemException> {
        Ok(count_distinct(head))
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
        Ok(a.extract::<ValueRef<Node>>()
            .map_or(-1, |head| count_distinct(&head)))
    }
    fn echo_box(&self, b: &StringSeqBox) -> Result<StringSeqBox, SystemException> {
        Ok(b.clone())
    }
    fn box_length(&self, b: &StringSeqBox) -> Result<i32, SystemException> {
        Ok(b.0.as_ref().map_or(-1, |s| s.len() as i32))
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

/// Serves a Corbina ValueExchange (`derived_factory`: reading and sending Derived whole; else
/// truncating it, as a receiver without its type) and runs `omni_value_peer --client` against it
/// with `args`; returns its output.
fn omni_client_against_corbina(
    bin: &std::path::Path,
    derived_factory: bool,
    args: &[&str],
) -> String {
    let _factories = factories();
    let _truncating = (!derived_factory).then(Truncating::start);
    let orb = orb();
    let poa = orb.root_poa();
    poa.the_poa_manager().activate().unwrap();
    let servant: Arc<dyn Servant> = Arc::new(ValueExchangeSkeleton::new(Exchange::default()));
    poa.activate_object(servant.clone()).unwrap();
    let obj = poa.servant_to_reference(&servant).unwrap();
    let ior = orb.object_to_string(&obj).unwrap();
    let deep = READ_DEPTH.to_string();
    let args: Vec<&str> = ["--deep", deep.as_str()]
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    let out = corbina_testpeers::omni_value_client_check(bin, &ior, &args);
    orb.destroy();
    out
}

#[test]
fn omniorb_client_checks_a_corbina_server() {
    let Some(bin) = corbina_testpeers::value_peers() else {
        return;
    };
    let out = omni_client_against_corbina(bin, true, &[]);
    for check in [
        "ok make_cycle(500)",
        "ok count_distinct(cycle 500)",
        "ok same_node(a, a)",
        "ok same_node(a, copy of a)",
        "ok echo_box(żółw,…)",
        "ok echo_any(cycle 3)",
        "ok count_in_any(long)",
        "ok describe(Derived)",
        "ok describe(Derived 100 KB)",
        "ok make_derived",
        "ok echo_base(Derived)",
        "ok describe(Sibling)",
        "ok make_sibling",
    ] {
        assert!(out.contains(check), "{check} missing:\n{out}");
    }
    // Without a Derived factory on the omniORB side, make_derived's value is truncated there.
    omni_client_against_corbina(bin, true, &["--no-derived-factory"]);
}

#[test]
fn omniorb_client_reads_and_sends_deep_lists_to_a_corbina_server() {
    let Some(bin) = corbina_testpeers::value_peers() else {
        return;
    };
    raise_peer_stack();
    let deep = DEEP.to_string();
    let out = omni_client_against_corbina(bin, true, &["--deep", &deep]);
    for check in [
        format!("ok make_cycle({DEEP})"),
        format!("ok count_distinct(cycle {DEEP})"),
    ] {
        assert!(out.contains(&check), "{check} missing:\n{out}");
    }
}

#[test]
fn omniorb_client_sees_a_corbina_server_truncate_derived() {
    let Some(bin) = corbina_testpeers::value_peers() else {
        return;
    };
    // A Corbina server with a factory that builds Derived's id as a Base: describe says
    // "Base:d" and echo_base sends the Base back, as a server with no Derived factory.
    let out =
        omni_client_against_corbina(bin, false, &["--server-truncates", "--no-derived-factory"]);
    for check in [
        "ok describe(Derived)",
        "ok echo_base(Derived)",
        "ok describe(Sibling)",
        "ok make_sibling",
    ] {
        assert!(out.contains(check), "{check} missing:\n{out}");
    }
}

/// Keeps the argument bytes of the last `same_node` request and answers `true`.
#[derive(Default)]
struct RawSameNode(Mutex<Option<(corbina::cdr::ByteOrder, Vec<u8>)>>);

impl Servant for RawSameNode {
    fn primary_interface(&self) -> &'static str {
        "IDL:Values/ValueExchange:1.0"
    }
    fn is_a(&self, id: &str) -> bool {
        id == self.primary_interface()
    }
    fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        if corbina::servant::dispatch_object_operation(self, req)? {
            return Ok(());
        }
        let r = req.arguments();
        let args = (r.byte_order(), r.rest().to_vec());
        let n = r.remaining();
        r.read_bytes(n)?;
        req.arguments_done()?;
        *self.0.lock().unwrap() = Some(args);
        req.reply(|w| {
            w.write_boolean(true);
            Ok(())
        })
    }
}

/// The generated proxy writes the arguments of one request in one indirection scope: a node
/// passed as both arguments goes once, then as an indirection back to its value tag (CORBA
/// 3.0 §15.3.4.3), which is what omniORB's same_node sees as one node. Byte-exact, no peer.
#[test]
fn one_node_as_two_arguments_is_sent_once_then_by_indirection() {
    let orb = orb();
    let poa = orb.root_poa();
    poa.the_poa_manager().activate().unwrap();
    let raw = Arc::new(RawSameNode::default());
    let servant: Arc<dyn Servant> = raw.clone();
    poa.activate_object(servant.clone()).unwrap();
    let obj = poa.servant_to_reference(&servant).unwrap();
    let x = ValueExchange::narrow(&obj).unwrap();
    let a = make_list(2, false);
    assert!(x.same_node(&a, &a).unwrap());
    let (order, args) = raw
        .0
        .lock()
        .unwrap()
        .take()
        .expect("same_node reached the servant");

    let mut w = corbina::cdr::CdrWriter::with_byte_order(order, corbina::cdr::CdrContext::GIOP_1_2);
    a.encode(&mut w).unwrap();
    let once = w.into_bytes();
    let mut want = once.clone();
    let indirection = |v: u32| match order {
        corbina::cdr::ByteOrder::Big => v.to_be_bytes(),
        corbina::cdr::ByteOrder::Little => v.to_le_bytes(),
    };
    want.extend_from_slice(&indirection(0xffff_ffff));
    // The offset counts from the offset field itself back to the first value's tag.
    want.extend_from_slice(&indirection((-(once.len() as i32 + 4)) as u32));
    assert_eq!(args, want);
    // The first value: tag 0x7fffff02 (one repository id, not chunked).
    assert_eq!(&args[..4], &indirection(0x7fff_ff02));
    orb.destroy();
}

/// Large truncatable values to omniORB, 20 times, names of 16 to 300 KB: omniORB 4.3
/// (`cdrValueChunkStream::get_octet_array`) misreads a string that crosses the end of its
/// receive buffer when the chunk holding it goes on after it (MARSHAL PassEndOfMessage,
/// depending on how TCP splits the message). Corbina ends the chunk after each string member,
/// as omniORB's own writer does, so every call succeeds.
#[test]
fn large_truncatable_values_reach_omniorb_every_time() {
    let Some(bin) = corbina_testpeers::value_peers() else {
        return;
    };
    let (_peer, orb, x) = omni_server(bin, "values-large-to-omniorb", true);
    for i in 0..20 {
        let len = 16_000 + i * 15_000 + (i * 7919) % 4096;
        let name: String = (0..len).map(|k| (b'a' + (k % 26) as u8) as char).collect();
        let d = derived(&name, i as i32);
        let want = format!("Derived:{name}:{i}");
        let got = x.describe(&d).unwrap();
        assert!(
            got == want,
            "call {i}, name of {len} octets: got {} octets",
            got.len()
        );
        // And echoed back whole (omniORB's writer, Corbina's reader).
        let back = x.echo_base(&d).unwrap();
        assert_eq!(back.repository_id(), Some(Derived::REPOSITORY_ID));
        assert_eq!(back.lock().unwrap().name.len(), len, "call {i}");
    }
    orb.destroy();
}

/// A 300 KB truncatable value from omniORB: omniORB ends a chunk after a long string, so the
/// name is a chunk of its own and `extra` another; the message arrives in many reads.
#[test]
fn a_large_truncatable_value_from_omniorb_arrives_whole() {
    let Some(bin) = corbina_testpeers::value_peers() else {
        return;
    };
    let (_peer, orb, x) = omni_server(bin, "values-large", true);
    let big = "x".repeat(300_000);
    let _factories = factories();
    let whole = x.make_derived(&big, 9).unwrap();
    assert_eq!(describe_base(&whole), format!("Derived:{big}:9"));
    // Truncated by a receiver without Derived: the rest of the state is skipped chunk by chunk.
    let _truncating = Truncating::start();
    assert_eq!(
        describe_base(&x.make_derived(&big, 9).unwrap()),
        format!("Base:{big}")
    );
    orb.destroy();
}

/// The nesting limit both processes of
/// `corbina_processes_exchange_deep_lists_and_refuse_one_past_the_limit` run with (the
/// default).
const LIMIT: i32 = corbina::cdr::value::DEFAULT_MAX_VALUE_NESTING as i32;

/// The server half of `corbina_processes_exchange_deep_lists_and_refuse_one_past_the_limit`,
/// run by it as a process of its own (this binary, `--ignored --exact`): serves an
/// [`Exchange`] with `-ORBmaxValueNesting` at [`LIMIT`], prints its IOR, and stops when its
/// standard input closes.
#[test]
#[ignore = "a server process, started by corbina_processes_exchange_deep_lists_and_refuse_one_past_the_limit"]
fn deep_value_server_process() {
    use std::io::Read;
    let (orb, _) = Orb::init(
        ["-ORBendPoint", "giop:tcp:127.0.0.1:", "-ORBmaxValueNesting"]
            .into_iter()
            .map(String::from)
            .chain([LIMIT.to_string()]),
    )
    .unwrap();
    assert_eq!(corbina::cdr::value::max_value_nesting(), LIMIT as u32);
    let poa = orb.root_poa();
    poa.the_poa_manager().activate().unwrap();
    let servant: Arc<dyn Servant> = Arc::new(ValueExchangeSkeleton::new(Exchange::default()));
    poa.activate_object(servant.clone()).unwrap();
    let obj = poa.servant_to_reference(&servant).unwrap();
    println!("IOR {}", orb.object_to_string(&obj).unwrap());
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    orb.destroy();
}

/// Issue 27: a Corbina client and a Corbina server, two processes over TCP, exchange lists
/// nested [`LIMIT`] values deep both ways, from a client thread of 256 KiB; one node more is
/// MARSHAL wherever it is met (the client's encoder, completed NO before anything is sent;
/// the server's decoder; the server's encoder of its result; the client's decoder), and after
/// each both processes are alive and the next call on the same connection succeeds.
#[test]
fn corbina_processes_exchange_deep_lists_and_refuse_one_past_the_limit() {
    use corbina::cdr::value::ValueOutput as WireValueOutput;
    use corbina::valuetype::ValueMember;
    use corbina::SystemExceptionKind::Marshal;
    use std::io::BufRead;
    use std::process::{Command, Stdio};

    let mut server = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "deep_value_server_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(server.stdout.take().unwrap()).lines();
    let ior = loop {
        let line = lines.next().expect("the server prints its IOR").unwrap();
        // The test harness prints the test's name first, on the same line.
        if let Some(at) = line.find("IOR IOR:") {
            break line[at + 4..].to_owned();
        }
    };
    let server_alive = |server: &mut std::process::Child| server.try_wait().unwrap().is_none();

    let client = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            let orb = orb();
            let obj = orb.string_to_object(&ior).unwrap();
            let x = ValueExchange::narrow(&obj).unwrap();
            let marshal = |e: SystemException| {
                assert_eq!(e.kind, Marshal, "{e}");
                e
            };
            // LIMIT deep, both ways.
            let list = make_list(LIMIT, false);
            assert_eq!(x.count_distinct(&list).unwrap(), LIMIT);
            let back = x.echo_node(&list).unwrap();
            assert_eq!(count_distinct(&back), LIMIT);
            drop(back);
            let head = x.make_cycle(LIMIT).unwrap();
            assert_eq!(cycle_error(&head, LIMIT), None);
            release(head);

            let past = ValueRef::new(Node {
                id: 0,
                next: list.clone(),
            });
            // The client's encoder: MARSHAL, completed NO, nothing sent.
            let e = marshal(x.count_distinct(&past).unwrap_err());
            assert_eq!(e.completed, corbina::CompletionStatus::No, "{e}");
            assert_eq!(e.minor, corbina::cdr::CORBINA_VMCID | 12, "{e}");
            assert_eq!(x.count_distinct(&make_list(3, false)).unwrap(), 3);
            // The server's decoder (sent by an encoder allowing one more level).
            let e = obj
                .invoke(
                    "count_distinct",
                    |w| {
                        past.write_member(
                            w,
                            &mut WireValueOutput::with_max_nesting(LIMIT as u32 + 1),
                        )
                    },
                    |r| r.read_long(),
                    corbina::no_user,
                )
                .unwrap_err();
            marshal(e);
            assert_eq!(x.count_distinct(&make_list(3, false)).unwrap(), 3);
            // The server's encoder of its result.
            marshal(x.make_cycle(LIMIT + 1).unwrap_err());
            assert_eq!(x.count_distinct(&make_list(3, false)).unwrap(), 3);
            // The client's decoder (reading with a limit one below what the server sends).
            let e = obj
                .invoke(
                    "echo_node",
                    |w| list.encode(w),
                    |r| {
                        let mut input = WireValueInput::with_max_nesting(LIMIT as u32 - 1);
                        ValueRef::<Node>::read_member(r, &mut input)
                    },
                    corbina::no_user,
                )
                .unwrap_err();
            marshal(e);
            assert_eq!(x.count_distinct(&make_list(3, false)).unwrap(), 3);
            orb.destroy();
        })
        .unwrap();
    let result = client.join();
    assert!(server_alive(&mut server), "the server process died");
    drop(server.stdin.take());
    let status = server.wait().unwrap();
    result.unwrap();
    assert!(status.success(), "server: {status}");
}
