//! Values as generated code uses them: a linked list with a cycle, truncation of a derived
//! value to its base, boxes.

use super::*;
use corbina_cdr::{from_bytes, to_bytes, CdrContext};

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
