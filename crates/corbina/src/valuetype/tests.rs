//! Values as generated code uses them: a linked list with a cycle, truncation of a derived
//! value to its base, boxes.

use super::*;
use corbina_cdr::{from_bytes, to_bytes, ByteOrder, CdrContext};

/// `valuetype Node { public long id; public Node next; };`
#[derive(Debug, Default)]
struct Node {
    id: i32,
    next: ValueRef<Node>,
}

impl ValueType for Node {
    const REPOSITORY_ID: &'static str = "IDL:Node:1.0";
    const REPOSITORY_IDS: &'static [&'static str] = &["IDL:Node:1.0"];
    const CHUNKED: bool = false;
    fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        out.begin_member(w)?;
        w.write_long(self.id);
        self.next.write_member(w, out)
    }
    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        input.begin_member(r)?;
        let id = r.read_long()?;
        let next = ValueMember::read_member(r, input)?;
        Ok(Node { id, next })
    }
}

/// `valuetype Base truncatable { long b; }; valuetype Derived : truncatable Base { string s; };`
#[derive(Debug, Default)]
struct Base {
    b: i32,
}

impl ValueType for Base {
    const REPOSITORY_ID: &'static str = "IDL:Base:1.0";
    const REPOSITORY_IDS: &'static [&'static str] = &["IDL:Base:1.0"];
    const CHUNKED: bool = false;
    fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        out.begin_member(w)?;
        w.write_long(self.b);
        Ok(())
    }
    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        input.begin_member(r)?;
        Ok(Base { b: r.read_long()? })
    }
}

#[derive(Debug, Default)]
struct Derived {
    b: i32,
    s: String,
}

impl ValueType for Derived {
    const REPOSITORY_ID: &'static str = "IDL:Derived:1.0";
    const REPOSITORY_IDS: &'static [&'static str] = &["IDL:Derived:1.0", "IDL:Base:1.0"];
    const CHUNKED: bool = true;
    fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        out.begin_member(w)?;
        w.write_long(self.b);
        out.begin_member(w)?;
        w.write_string(&self.s)
    }
    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        input.begin_member(r)?;
        let b = r.read_long()?;
        input.begin_member(r)?;
        let s = r.read_string()?;
        Ok(Derived { b, s })
    }
}

/// `valuetype Name string;`
#[derive(Debug, Default, Clone, PartialEq)]
struct Name(Option<Arc<String>>);

impl BoxedValue for Name {
    type Content = String;
    const REPOSITORY_ID: &'static str = "IDL:Name:1.0";
    fn content(&self) -> Option<&Arc<String>> {
        self.0.as_ref()
    }
    fn from_content(content: Option<Arc<String>>) -> Self {
        Name(content)
    }
}

#[test]
fn cyclic_list_round_trips_as_one_graph() {
    let a = ValueRef::new(Node::default());
    let b = ValueRef::new(Node {
        id: 2,
        next: a.clone(),
    });
    a.lock().unwrap().next = b.clone();
    a.lock().unwrap().id = 1;
    let bytes = to_bytes(&a, CdrContext::GIOP_1_2).unwrap();
    let got: ValueRef<Node> =
        from_bytes(&bytes, corbina_cdr::ByteOrder::NATIVE, CdrContext::GIOP_1_2).unwrap();
    let second = got.lock().unwrap().next.clone();
    assert_eq!(second.lock().unwrap().id, 2);
    let third = second.lock().unwrap().next.clone();
    assert_eq!(third, got, "the cycle closes on the first node");
    assert!(format!("{got:?}").starts_with("ValueRef<"));
    // Break the cycles (sent and received) so nothing leaks.
    a.lock().unwrap().next = ValueRef::null();
    got.lock().unwrap().next = ValueRef::null();
}

#[test]
fn derived_value_truncates_to_the_base() {
    let d = ValueRef::new(Derived {
        b: 7,
        s: "more".into(),
    });
    let bytes = to_bytes(&d, CdrContext::GIOP_1_2).unwrap();
    let order = corbina_cdr::ByteOrder::NATIVE;
    let base: ValueRef<Base> = from_bytes(&bytes, order, CdrContext::GIOP_1_2).unwrap();
    assert_eq!(base.lock().unwrap().b, 7);
    let whole: ValueRef<Derived> = from_bytes(&bytes, order, CdrContext::GIOP_1_2).unwrap();
    assert_eq!(whole.lock().unwrap().s, "more");
    // A value the receiver does not know and that is not truncatable to it is refused.
    let n = to_bytes(&ValueRef::new(Node::default()), CdrContext::GIOP_1_2).unwrap();
    let err = from_bytes::<ValueRef<Base>>(&n, order, CdrContext::GIOP_1_2).unwrap_err();
    assert!(matches!(err, MarshalError::InvalidValue { .. }), "{err}");
}

#[test]
fn boxes_share_and_null() {
    let name = Name(Some(Arc::new("x".to_string())));
    let mut w = CdrWriter::new(CdrContext::GIOP_1_2);
    let mut out = ValueOutput::new();
    write_box(&name, &mut w, &mut out).unwrap();
    write_box(&name, &mut w, &mut out).unwrap();
    write_box(&Name(None), &mut w, &mut out).unwrap();
    let bytes = w.into_bytes();
    let mut r = CdrReader::new(&bytes, corbina_cdr::ByteOrder::NATIVE, CdrContext::GIOP_1_2);
    let mut input = ValueInput::new();
    let first: Name = read_box(&mut r, &mut input).unwrap();
    let second: Name = read_box(&mut r, &mut input).unwrap();
    let third: Name = read_box(&mut r, &mut input).unwrap();
    r.expect_end().unwrap();
    assert_eq!(first.0.as_deref().map(String::as_str), Some("x"));
    assert!(Arc::ptr_eq(
        first.0.as_ref().unwrap(),
        second.0.as_ref().unwrap()
    ));
    assert_eq!(third, Name(None));
    // An indirection to a box read as a value of another type is refused.
    let mut r = CdrReader::new(&bytes, corbina_cdr::ByteOrder::NATIVE, CdrContext::GIOP_1_2);
    let mut input = ValueInput::new();
    let _: Name = read_box(&mut r, &mut input).unwrap();
    assert!(ValueRef::<Node>::read_member(&mut r, &mut input).is_err());
}

#[test]
fn value_base_decodes_by_id_through_the_registry() {
    let order = corbina_cdr::ByteOrder::NATIVE;
    let ctx = CdrContext::GIOP_1_2;
    let d = ValueRef::new(Derived {
        b: 3,
        s: "s".into(),
    });
    let bytes = to_bytes(&ValueBase::from(d.clone()), ctx).unwrap();
    // `IDL:Derived:1.0` is registered by no test: its truncatable base's factory builds a Base.
    assert!(from_bytes::<ValueBase>(&bytes, order, ctx).is_err());
    register_value_factory("IDL:Base:1.0", Arc::new(DefaultFactory::<Base>::new()));
    let got = from_bytes::<ValueBase>(&bytes, order, ctx).unwrap();
    unregister_value_factory("IDL:Base:1.0");
    assert_eq!(got.repository_id(), Some("IDL:Base:1.0"));
    assert_eq!(got.downcast::<Base>().unwrap().lock().unwrap().b, 3);
    assert!(got.downcast::<Derived>().is_none());

    // A value tag with no repository id cannot be typed where the formal type is ValueBase.
    let mut w = CdrWriter::new(ctx);
    w.write_ulong(corbina_cdr::value::VALUE_TAG_MIN);
    w.write_long(1);
    let bytes = w.into_bytes();
    let err = from_bytes::<ValueBase>(&bytes, order, ctx).unwrap_err();
    assert!(err.to_string().contains("without a repository id"), "{err}");
}

#[test]
fn opaque_custom_state_is_bounded_by_the_data() {
    // `custom valuetype C`: a chunk claiming more octets than the message holds.
    let ctx = CdrContext::GIOP_1_2;
    let mut w = CdrWriter::new(ctx);
    let mut out = ValueOutput::new();
    out.begin_value(&mut w, 1, &WriteHeader::truncatable(&["IDL:C:1.0"]))
        .unwrap();
    let mut bytes = w.into_bytes();
    bytes.extend_from_slice(&0x7000_0000u32.to_ne_bytes());
    bytes.extend_from_slice(&[0; 8]);
    let mut r = CdrReader::new(&bytes, corbina_cdr::ByteOrder::NATIVE, ctx);
    let mut input = ValueInput::new();
    let ValueStart::Value(_) = input.read_value(&mut r).unwrap() else {
        panic!("a value header")
    };
    let err = CustomState::read(&mut r, &mut input, "IDL:C:1.0").unwrap_err();
    assert!(
        matches!(err, MarshalError::LengthExceedsData { .. }),
        "{err}"
    );
}

/// `valuetype Chain truncatable { public long id; public ValueBase next; };`: a list whose
/// nodes are chunked and read back through the factory registry (the polymorphic path).
#[derive(Debug, Default)]
struct Chain {
    id: i32,
    next: ValueBase,
}

impl ValueType for Chain {
    const REPOSITORY_ID: &'static str = "IDL:depth/Chain:1.0";
    const REPOSITORY_IDS: &'static [&'static str] = &["IDL:depth/Chain:1.0"];
    const CHUNKED: bool = true;
    fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        out.begin_member(w)?;
        w.write_long(self.id);
        self.next.write_member(w, out)
    }
    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        input.begin_member(r)?;
        let id = r.read_long()?;
        let next = ValueMember::read_member(r, input)?;
        Ok(Chain { id, next })
    }
}

/// A list of `n` nodes, ids `0..n` from the head.
fn node_list(n: usize) -> ValueRef<Node> {
    let mut head = ValueRef::null();
    for id in (0..n as i32).rev() {
        head = ValueRef::new(Node { id, next: head });
    }
    head
}

/// The ids along a list, walked in a loop.
fn node_ids(head: &ValueRef<Node>) -> Vec<i32> {
    let mut ids = Vec::new();
    let mut cur = head.clone();
    while let Some(next) = cur.lock().map(|n| {
        ids.push(n.id);
        n.next.clone()
    }) {
        cur = next;
    }
    ids
}

/// Runs `f` in a thread of 256 KiB: the deep cases must not depend on the stack's size.
fn on_small_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

fn encode_with(v: &ValueRef<Node>, limit: u32) -> Result<Vec<u8>> {
    let mut w = CdrWriter::new(CdrContext::GIOP_1_2);
    v.write_member(&mut w, &mut ValueOutput::with_max_nesting(limit))?;
    Ok(w.into_bytes())
}

fn decode_with(bytes: &[u8], limit: u32) -> Result<ValueRef<Node>> {
    let mut r = CdrReader::new(bytes, corbina_cdr::ByteOrder::NATIVE, CdrContext::GIOP_1_2);
    let v = ValueRef::read_member(&mut r, &mut ValueInput::with_max_nesting(limit))?;
    r.expect_end()?;
    Ok(v)
}

#[test]
fn a_100_000_node_list_round_trips_in_a_small_stack() {
    const N: usize = 100_000;
    let ok = on_small_stack(|| {
        let list = node_list(N);
        let bytes = to_bytes(&list, CdrContext::GIOP_1_2).unwrap();
        // Linear, not quadratic: each node is a tag, an id (indirected after the first) and
        // its long.
        assert!(bytes.len() < 16 * N + 64, "{} octets", bytes.len());
        let got: ValueRef<Node> =
            from_bytes(&bytes, corbina_cdr::ByteOrder::NATIVE, CdrContext::GIOP_1_2).unwrap();
        node_ids(&got) == (0..N as i32).collect::<Vec<_>>()
    });
    assert!(ok);
}

#[test]
fn a_list_one_node_past_the_limit_is_refused_both_ways() {
    const LIMIT: u32 = 20_000;
    on_small_stack(|| {
        let at_limit = node_list(LIMIT as usize);
        let bytes = encode_with(&at_limit, LIMIT).unwrap();
        assert_eq!(
            node_ids(&decode_with(&bytes, LIMIT).unwrap()).len(),
            LIMIT as usize
        );
        // One more node: encoding refuses it, and decoding its bytes (encoded with room) too.
        let past = ValueRef::new(Node {
            id: -1,
            next: at_limit,
        });
        let err = encode_with(&past, LIMIT).unwrap_err();
        assert!(
            matches!(err, MarshalError::NestingTooDeep { limit: LIMIT, .. }),
            "{err}"
        );
        let bytes = encode_with(&past, LIMIT + 1).unwrap();
        let err = decode_with(&bytes, LIMIT).unwrap_err();
        assert!(
            matches!(err, MarshalError::NestingTooDeep { limit: LIMIT, .. }),
            "{err}"
        );
        assert_eq!(err.exception_kind(), corbina_cdr::ExceptionKind::Marshal);
        assert_eq!(err.minor(), corbina_cdr::CORBINA_VMCID | 12);
    });
}

#[test]
fn a_deep_chunked_list_decodes_through_a_factory_in_a_small_stack() {
    const N: i32 = 50_000;
    register_value_factory(
        Chain::REPOSITORY_ID,
        Arc::new(DefaultFactory::<Chain>::new()),
    );
    let got = on_small_stack(|| {
        let mut head = ValueBase::null();
        for id in (0..N).rev() {
            head = ValueRef::new(Chain { id, next: head }).into();
        }
        let bytes = to_bytes(&head, CdrContext::GIOP_1_2).unwrap();
        let got: ValueBase =
            from_bytes(&bytes, corbina_cdr::ByteOrder::NATIVE, CdrContext::GIOP_1_2).unwrap();
        let mut ids = 0;
        let mut cur = got.downcast::<Chain>().unwrap();
        while let Some(next) = cur.lock().map(|c| {
            assert_eq!(c.id, ids);
            ids += 1;
            c.next.downcast::<Chain>().unwrap()
        }) {
            cur = next;
        }
        ids
    });
    unregister_value_factory(Chain::REPOSITORY_ID);
    assert_eq!(got, N);
}

#[test]
fn a_million_node_list_drops_in_a_small_stack() {
    on_small_stack(|| {
        let list = node_list(1_000_000);
        // Shared nodes are not dropped with the list: the second half lives on.
        let half = {
            let mut cur = list.clone();
            for _ in 0..500_000 {
                let next = cur.lock().unwrap().next.clone();
                cur = next;
            }
            cur
        };
        drop(list);
        assert_eq!(half.lock().unwrap().id, 500_000);
        assert_eq!(node_ids(&half).len(), 500_000);
        let mut base = ValueBase::null();
        for id in 0..1_000_000 {
            base = ValueRef::new(Chain { id, next: base }).into();
        }
        drop(base);
    });
}

/// This process's resident memory (`VmRSS`), in bytes.
fn rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .map_or(0, |kb| kb * 1024)
}

thread_local! {
    /// The resident memory seen by the innermost [`Probe`] decoded.
    static AT_BOTTOM: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A list node that notes the process's resident memory when it is the innermost one.
#[derive(Default)]
struct Probe {
    next: ValueRef<Probe>,
}

impl ValueType for Probe {
    const REPOSITORY_ID: &'static str = "IDL:Node:1.0";
    const REPOSITORY_IDS: &'static [&'static str] = &["IDL:Node:1.0"];
    const CHUNKED: bool = false;
    fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        self.next.write_member(w, out)
    }
    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        input.begin_member(r)?;
        r.read_long()?;
        let next: ValueRef<Probe> = ValueMember::read_member(r, input)?;
        if next.is_null() {
            AT_BOTTOM.with(|b| b.set(rss()));
        }
        Ok(Probe { next })
    }
}

/// What a peer makes a receiver hold per nesting level while a list decodes (the stack
/// segments, the indirection table's entry, the nodes built so far), sampled at the innermost
/// node. Run alone, it prints the figure:
/// `cargo test -p corbina --lib measure_bytes_held -- --ignored --nocapture` (add `--release`
/// for an optimised build's).
#[test]
#[ignore = "a measurement: run alone (resident memory is the process's)"]
fn measure_bytes_held_per_nesting_level() {
    const N: usize = 100_000;
    let (held, wire) = on_small_stack(|| {
        // The bytes of a N-node list, written without building one (its memory would be
        // reused by the decoder's and hide it).
        let header = WriteHeader::single(Node::REPOSITORY_ID);
        let mut w = CdrWriter::new(CdrContext::GIOP_1_2);
        let mut out = ValueOutput::with_max_nesting(N as u32);
        for id in 1..=N {
            out.begin_value(&mut w, id, &header).unwrap();
            out.begin_member(&mut w).unwrap();
            w.write_long(id as i32);
        }
        out.write_null(&mut w).unwrap();
        for _ in 0..N {
            out.end_value(&mut w).unwrap();
        }
        let bytes = w.into_bytes();
        let before = rss();
        let mut r = CdrReader::new(&bytes, corbina_cdr::ByteOrder::NATIVE, CdrContext::GIOP_1_2);
        let got =
            ValueRef::<Probe>::read_member(&mut r, &mut ValueInput::with_max_nesting(N as u32))
                .unwrap();
        assert!(!got.is_null());
        let held = AT_BOTTOM.with(|b| b.get()).saturating_sub(before);
        (held, bytes.len())
    });
    let per_level = held / N;
    println!(
        "decoding a {N}-node list: {per_level} bytes held per level at the innermost node \
         ({} octets a level on the wire)",
        wire / N
    );
    assert!(
        per_level > 0 && per_level < 64 << 10,
        "{per_level} bytes a level"
    );
}

/// `valuetype Animal { long legs; }; valuetype Cat : truncatable Animal { string name; };
/// valuetype Dog : Animal { long tricks; };` as generated: `Animal` knows `Cat` (same IDL
/// file), `Dog` only through the registry.
#[derive(Debug, Default)]
struct Animal {
    legs: i32,
}

impl ValueType for Animal {
    const REPOSITORY_ID: &'static str = "IDL:test/Animal:1.0";
    const REPOSITORY_IDS: &'static [&'static str] = &[Self::REPOSITORY_ID];
    const CHUNKED: bool = false;
    const DERIVED: &'static [KnownValue] = &[KnownValue::of::<Cat>()];
    fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        out.begin_member(w)?;
        w.write_long(self.legs);
        Ok(())
    }
    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        input.begin_member(r)?;
        Ok(Animal {
            legs: r.read_long()?,
        })
    }
}

#[derive(Debug, Default)]
struct Cat {
    legs: i32,
    name: String,
}

impl ValueType for Cat {
    const REPOSITORY_ID: &'static str = "IDL:test/Cat:1.0";
    const REPOSITORY_IDS: &'static [&'static str] = &[Self::REPOSITORY_ID, Animal::REPOSITORY_ID];
    const CHUNKED: bool = true;
    const BASE_IDS: &'static [&'static str] = &[Animal::REPOSITORY_ID];
    const BASE_VIEWS: &'static [BaseView] = &[BaseView::of::<Cat, Animal>()];
    fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        out.begin_member(w)?;
        w.write_long(self.legs);
        out.begin_member(w)?;
        w.write_string(&self.name)
    }
    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        input.begin_member(r)?;
        let legs = r.read_long()?;
        input.begin_member(r)?;
        let name = r.read_string()?;
        Ok(Cat { legs, name })
    }
}

impl Derives<Animal> for Cat {
    fn take_base(&mut self) -> Animal {
        let mut b = Animal::default();
        std::mem::swap(&mut b.legs, &mut self.legs);
        b
    }
    fn put_base(&mut self, b: Animal) {
        self.legs = b.legs;
    }
}

#[derive(Debug, Default)]
struct Dog {
    legs: i32,
    tricks: i32,
}

impl ValueType for Dog {
    const REPOSITORY_ID: &'static str = "IDL:test/Dog:1.0";
    const REPOSITORY_IDS: &'static [&'static str] = &[Self::REPOSITORY_ID];
    const CHUNKED: bool = false;
    const BASE_IDS: &'static [&'static str] = &[Animal::REPOSITORY_ID];
    const BASE_VIEWS: &'static [BaseView] = &[BaseView::of::<Dog, Animal>()];
    fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        out.begin_member(w)?;
        w.write_long(self.legs);
        out.begin_member(w)?;
        w.write_long(self.tricks);
        Ok(())
    }
    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        input.begin_member(r)?;
        let legs = r.read_long()?;
        input.begin_member(r)?;
        let tricks = r.read_long()?;
        Ok(Dog { legs, tricks })
    }
}

impl Derives<Animal> for Dog {
    fn take_base(&mut self) -> Animal {
        let mut b = Animal::default();
        std::mem::swap(&mut b.legs, &mut self.legs);
        b
    }
    fn put_base(&mut self, b: Animal) {
        self.legs = b.legs;
    }
}

fn round_trip<T: ValueType>(v: &ValueRef<T>) -> Result<ValueRef<T>> {
    let ctx = CdrContext::GIOP_1_2;
    let bytes = to_bytes(v, ctx)?;
    from_bytes(&bytes, corbina_cdr::ByteOrder::NATIVE, ctx)
}

#[test]
fn a_base_handle_holds_a_derived_value_and_shows_its_base_part() {
    let cat = ValueRef::new(Cat {
        legs: 4,
        name: "tom".into(),
    });
    let animal: ValueRef<Animal> = cat.clone().upcast();
    assert!(animal.handle().is_none(), "not an Animal itself");
    assert_eq!(animal.repository_id(), Some(Cat::REPOSITORY_ID));
    assert!(animal.is_a(Animal::REPOSITORY_ID) && animal.is_a(VALUE_BASE_ID));
    assert_eq!(animal, cat.downcast::<Cat>().unwrap().upcast::<Animal>());
    // The base part, lent out of the derived state and put back.
    animal.lock().unwrap().legs = 3;
    assert_eq!(cat.lock().unwrap().legs, 3);
    assert_eq!(cat.lock().unwrap().name, "tom");
    assert_eq!(animal.lock().unwrap().legs, 3);
    let back = animal.downcast::<Cat>().unwrap();
    assert!(back.ptr_eq(&cat) && back.handle().is_some());
    assert!(animal.downcast::<Dog>().is_none());
    assert!(format!("{animal:?}").contains("IDL:test/Cat:1.0"));
    // Through ValueBase both ways.
    let any = ValueBase::from(animal.clone());
    assert_eq!(any.downcast::<Animal>().unwrap(), animal);
    assert!(any.downcast::<Cat>().unwrap().ptr_eq(&cat));
}

#[test]
fn a_derived_value_sent_as_its_base_arrives_as_the_most_derived_known_type() {
    // Cat: known to Animal's generated code (same IDL file): built without any registration,
    // sent on whole.
    let animal: ValueRef<Animal> = ValueRef::new(Cat {
        legs: 4,
        name: "tom".into(),
    })
    .upcast();
    let got = round_trip(&animal).unwrap();
    assert_eq!(got.repository_id(), Some(Cat::REPOSITORY_ID));
    assert_eq!(got.lock().unwrap().legs, 4);
    assert_eq!(got.downcast::<Cat>().unwrap().lock().unwrap().name, "tom");
    let again = round_trip(&got).unwrap();
    assert_eq!(again.downcast::<Cat>().unwrap().lock().unwrap().name, "tom");

    // Dog is not truncatable and Animal's code does not know it: refused until its factory is
    // registered, then built as a Dog.
    let dog: ValueRef<Animal> = ValueRef::new(Dog { legs: 4, tricks: 2 }).upcast();
    let err = round_trip(&dog).unwrap_err();
    assert!(err.to_string().contains("cannot truncate"), "{err}");
    register_value_factory(Dog::REPOSITORY_ID, Arc::new(DefaultFactory::<Dog>::new()));
    let got = round_trip(&dog);
    unregister_value_factory(Dog::REPOSITORY_ID);
    let got = got.unwrap();
    assert_eq!(got.lock().unwrap().legs, 4);
    assert_eq!(got.downcast::<Dog>().unwrap().lock().unwrap().tricks, 2);
}

#[test]
fn a_factory_building_another_type_is_refused() {
    // A factory that builds a Base (of another family) for an id sent where Animal is formal.
    const ID: &str = "IDL:test/Impostor:1.0";
    #[derive(Debug, Default)]
    struct Impostor {
        legs: i32,
    }
    impl ValueType for Impostor {
        const REPOSITORY_ID: &'static str = ID;
        const REPOSITORY_IDS: &'static [&'static str] = &[ID];
        const CHUNKED: bool = false;
        fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
            out.begin_member(w)?;
            w.write_long(self.legs);
            Ok(())
        }
        fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
            input.begin_member(r)?;
            Ok(Impostor {
                legs: r.read_long()?,
            })
        }
    }
    let ctx = CdrContext::GIOP_1_2;
    let bytes = to_bytes(&ValueRef::new(Impostor { legs: 1 }), ctx).unwrap();
    register_value_factory(ID, Arc::new(DefaultFactory::<Base>::new()));
    let err = from_bytes::<ValueRef<Animal>>(&bytes, corbina_cdr::ByteOrder::NATIVE, ctx);
    unregister_value_factory(ID);
    let err = err.unwrap_err();
    assert!(err.to_string().contains("not of the formal type"), "{err}");
}

#[test]
fn an_indirection_to_a_derived_value_resolves_as_base_and_derived() {
    let cat = ValueRef::new(Cat {
        legs: 4,
        name: "felix".into(),
    });
    let ctx = CdrContext::GIOP_1_2;
    let mut w = CdrWriter::new(ctx);
    let mut out = ValueOutput::new();
    let animal: ValueRef<Animal> = cat.clone().upcast();
    animal.write_member(&mut w, &mut out).unwrap();
    cat.write_member(&mut w, &mut out).unwrap();
    let bytes = w.into_bytes();
    let mut r = CdrReader::new(&bytes, corbina_cdr::ByteOrder::NATIVE, ctx);
    let mut input = ValueInput::new();
    let a = ValueRef::<Animal>::read_member(&mut r, &mut input).unwrap();
    let c = ValueRef::<Cat>::read_member(&mut r, &mut input).unwrap();
    r.expect_end().unwrap();
    assert!(a.downcast::<Cat>().unwrap().ptr_eq(&c));
    assert_eq!(a, c.upcast());
}

/// `struct Tree; typedef sequence<Tree> Trees; struct Tree { Trees kids; ValueBase v; };`:
/// a recursive struct holding a value, coded as generated (its sequence through
/// [`read_seq`]/[`write_seq`], not `Vec`'s own codec).
#[derive(Debug, Default)]
struct Tree {
    kids: Vec<Tree>,
    v: ValueBase,
}

impl ValueMember for Tree {
    fn write_member<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        write_seq(&self.kids, w, out)?;
        self.v.write_member(w, out)
    }
    fn read_member(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        Ok(Tree {
            kids: read_seq(r, input, 0)?,
            v: ValueMember::read_member(r, input)?,
        })
    }
}

/// Sequences of a value-holding struct nested in one another count against the reader's
/// depth limit, as `Vec`'s codec does: 200,000 levels (8 octets each) are MARSHAL in a
/// small stack, not a crash, and as deep as the limit still decodes there.
#[test]
fn value_holding_structs_nested_through_sequences_are_bounded_by_the_reader_depth() {
    fn nested_trees(levels: usize) -> Vec<u8> {
        let mut b = Vec::with_capacity(8 * levels + 8);
        for _ in 0..levels {
            b.extend_from_slice(&1u32.to_le_bytes());
        }
        b.extend_from_slice(&0u32.to_le_bytes()); // the innermost `kids`: empty
        for _ in 0..=levels {
            b.extend_from_slice(&0u32.to_le_bytes()); // each `v`: null
        }
        b
    }
    fn decode(b: &[u8]) -> Result<usize> {
        let mut r = CdrReader::new(b, ByteOrder::Little, CdrContext::GIOP_1_2);
        let t = Tree::read_member(&mut r, &mut ValueInput::new())?;
        r.expect_end()?;
        let mut depth = 0;
        let mut cur = &t;
        while let Some(k) = cur.kids.first() {
            depth += 1;
            cur = k;
        }
        Ok(depth)
    }
    let limit = corbina_cdr::DEFAULT_MAX_DEPTH as usize;
    let (deep, ok) = on_small_stack(move || {
        (
            decode(&nested_trees(200_000)),
            decode(&nested_trees(limit - 1)),
        )
    });
    assert!(
        matches!(deep, Err(MarshalError::NestingTooDeep { .. })),
        "{deep:?}"
    );
    assert_eq!(ok, Ok(limit - 1));
}

/// `valuetype Kin { public sequence<Kin> kids; };`: a value tree whose depth runs through
/// sequences of values.
#[derive(Debug, Default)]
struct Kin {
    kids: Vec<ValueRef<Kin>>,
}

impl ValueType for Kin {
    const REPOSITORY_ID: &'static str = "IDL:Kin:1.0";
    const REPOSITORY_IDS: &'static [&'static str] = &["IDL:Kin:1.0"];
    const CHUNKED: bool = false;
    fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        self.kids.write_member(w, out)
    }
    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        Ok(Kin {
            kids: ValueMember::read_member(r, input)?,
        })
    }
}

/// Sequences of values are not levels of the reader's depth (each value counts against the
/// value nesting limit instead): a tree 5,000 values deep through them goes and comes back.
#[test]
fn a_value_tree_deep_through_sequences_of_values_round_trips() {
    let depth = on_small_stack(|| {
        let mut head = ValueRef::new(Kin::default());
        for _ in 1..5_000 {
            head = ValueRef::new(Kin { kids: vec![head] });
        }
        let bytes = to_bytes(&head, CdrContext::GIOP_1_2).unwrap();
        let back: ValueRef<Kin> =
            from_bytes(&bytes, ByteOrder::NATIVE, CdrContext::GIOP_1_2).unwrap();
        let mut depth = 1;
        let mut cur = back;
        while let Some(next) = cur.lock().and_then(|k| k.kids.first().cloned()) {
            depth += 1;
            cur = next;
        }
        depth
    });
    assert_eq!(depth, 5_000);
}
