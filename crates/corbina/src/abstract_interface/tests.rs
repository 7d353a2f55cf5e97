use super::AbstractRef;
use crate::cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter, MarshalError};
use crate::valuetype::{ValueBase, ValueInput, ValueOutput};
use crate::ObjectRef;

fn write(a: &AbstractRef<ObjectRef>) -> Vec<u8> {
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
    a.write(&mut w, &mut ValueOutput::new()).unwrap();
    w.into_bytes()
}

fn read(b: &[u8]) -> crate::cdr::Result<AbstractRef<ObjectRef>> {
    let mut r = CdrReader::new(b, ByteOrder::Big, CdrContext::GIOP_1_2);
    AbstractRef::read(&mut r, &mut ValueInput::new(), &[])
}

#[test]
fn nil_is_false_and_a_null_value() {
    let nil = AbstractRef::<ObjectRef>::default();
    assert!(nil.is_null() && nil.as_object().is_none() && nil.as_value().is_none());
    assert_eq!(write(&nil), [0, 0, 0, 0, 0, 0, 0, 0]);
    assert!(read(&[0, 0, 0, 0, 0, 0, 0, 0]).unwrap().is_null());
    // TRUE and a nil IOR (empty type id, no profiles) is nil too.
    assert!(read(&[1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0])
        .unwrap()
        .is_null());
    // A null value and no reference convert to nil.
    assert!(AbstractRef::<ObjectRef>::from(ValueBase::null()).is_null());
    assert!(AbstractRef::<ObjectRef>::from(None).is_null());
}

#[test]
fn a_discriminator_other_than_0_or_1_is_refused() {
    for d in [2u8, 0x80, 0xff] {
        let err = read(&[d, 0, 0, 0, 0, 0, 0, 0]).unwrap_err();
        assert!(
            matches!(err, MarshalError::InvalidBoolean { offset: 0, value } if value == d),
            "{err:?}"
        );
    }
    // Truncated after the discriminator.
    assert!(read(&[0]).is_err());
    assert!(read(&[1, 0, 0]).is_err());
}

/// `valuetype Cycle { ValueBase next; };` counting its live states.
struct Cycle {
    next: ValueBase,
}

static LIVE: std::sync::atomic::AtomicIsize = std::sync::atomic::AtomicIsize::new(0);

/// Held by every test that makes `Cycle`s, so that the leak test's count of live ones is its
/// own (tests run in parallel).
static CYCLES: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn cycles() -> std::sync::MutexGuard<'static, ()> {
    CYCLES.lock().unwrap_or_else(|e| e.into_inner())
}

impl Default for Cycle {
    fn default() -> Self {
        LIVE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Cycle {
            next: ValueBase::null(),
        }
    }
}

impl Drop for Cycle {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl crate::valuetype::ValueType for Cycle {
    const REPOSITORY_ID: &'static str = "IDL:AbstractTests/Cycle:1.0";
    const REPOSITORY_IDS: &'static [&'static str] = &["IDL:AbstractTests/Cycle:1.0"];
    const CHUNKED: bool = false;
    fn write_state<'a>(
        &'a self,
        w: &mut CdrWriter<'a>,
        out: &mut ValueOutput,
    ) -> crate::cdr::Result<()> {
        crate::valuetype::ValueMember::write_member(&self.next, w, out)
    }
    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> crate::cdr::Result<Self> {
        let next = <ValueBase as crate::valuetype::ValueMember>::read_member(r, input)?;
        let mut c = Cycle::default();
        c.next = next;
        Ok(c)
    }
}

/// The TypeCode walker builds an abstract interface's value through the registry to copy it:
/// a cyclic graph (a hostile `Any` can hold one) must not outlive the walk.
#[test]
fn the_walker_frees_the_cyclic_values_it_builds() {
    let _cycles = cycles();
    use crate::valuetype::{register_value_factory, DefaultFactory, ValueRef};
    use std::sync::atomic::Ordering::SeqCst;
    register_value_factory(
        <Cycle as crate::valuetype::ValueType>::REPOSITORY_ID,
        std::sync::Arc::new(DefaultFactory::<Cycle>::new()),
    );
    // A value whose `next` is itself.
    let c = ValueRef::new(Cycle::default());
    c.lock().unwrap().next = c.clone().into();
    let bytes = write(&AbstractRef::Value(c.clone().into()));
    c.lock().unwrap().next = ValueBase::null();
    drop(c);
    let tc = crate::TypeCode::create_abstract_interface_tc("IDL:AbstractTests/A:1.0", "A").unwrap();
    let before = LIVE.load(SeqCst);
    for _ in 0..3 {
        let any = crate::Any::from_cdr(tc.clone(), &bytes, ByteOrder::Big, CdrContext::GIOP_1_2, 0)
            .unwrap();
        assert_eq!(any.value_bytes().len(), bytes.len());
    }
    assert_eq!(
        LIVE.load(SeqCst),
        before,
        "values built by the walker leaked"
    );
}

/// `DynAny` on `tk_abstract_interface`: nil, the object form (`insert_reference`) and the
/// value form (`insert_abstract_value`), each through an `Any` and back.
#[test]
fn dyn_any_holds_each_form_of_an_abstract_interface() {
    let _cycles = cycles();
    use crate::dynany::{DynAnyError, DynAnyFactory};
    use crate::giop::{Ior, TaggedProfile};
    use crate::valuetype::{register_value_factory, DefaultFactory, ValueRef};
    register_value_factory(
        <Cycle as crate::valuetype::ValueType>::REPOSITORY_ID,
        std::sync::Arc::new(DefaultFactory::<Cycle>::new()),
    );
    let tc = crate::TypeCode::create_abstract_interface_tc("IDL:AbstractTests/A:1.0", "A").unwrap();
    let round_trip =
        |d: &crate::dynany::DynAny| DynAnyFactory::create_dyn_any(&d.to_any().unwrap()).unwrap();

    // Nil by default, sent as FALSE and a null value.
    let mut d = DynAnyFactory::create_dyn_any_from_type_code(&tc).unwrap();
    assert_eq!(d.get_reference().unwrap(), None);
    assert_eq!(d.to_any().unwrap().value_bytes().len(), 8);
    assert_eq!(round_trip(&d).get_reference().unwrap(), None);

    // The object form.
    let ior = Ior {
        type_id: "IDL:AbstractTests/K:1.0".into(),
        profiles: vec![TaggedProfile {
            tag: 0x4342_0001,
            profile_data: vec![1, 2, 3],
        }],
        byte_order: ByteOrder::Big,
    };
    d.insert_reference(Some(ior.clone())).unwrap();
    assert_eq!(
        d.get_abstract_value().unwrap_err(),
        DynAnyError::TypeMismatch
    );
    let back = round_trip(&d);
    let got = back.get_reference().unwrap().unwrap();
    assert_eq!((got.type_id, got.profiles), (ior.type_id, ior.profiles));

    // The value form, rebuilt through the registry on the way back.
    let c = ValueRef::new(Cycle::default());
    d.insert_abstract_value(c.clone().into()).unwrap();
    assert_eq!(d.get_reference().unwrap_err(), DynAnyError::TypeMismatch);
    assert!(d
        .get_abstract_value()
        .unwrap()
        .downcast::<Cycle>()
        .is_some());
    let back = round_trip(&d);
    let v = back.get_abstract_value().unwrap();
    assert!(v.downcast::<Cycle>().is_some());
    assert!(
        v != ValueBase::from(c.clone()),
        "a copy, not the same value"
    );

    // A null value is nil; the reference form again replaces the value.
    d.insert_abstract_value(ValueBase::null()).unwrap();
    assert_eq!(d.get_reference().unwrap(), None);
    d.insert_abstract_value(c.into()).unwrap();
    d.insert_reference(None).unwrap();
    assert_eq!(d.get_reference().unwrap(), None);

    // Only an abstract interface takes a value this way.
    let mut l =
        DynAnyFactory::create_dyn_any_from_type_code(&crate::TypeCode::LONG.into()).unwrap();
    assert_eq!(
        l.insert_abstract_value(ValueBase::null()).unwrap_err(),
        DynAnyError::TypeMismatch
    );
}

/// Two values of one type in an `Any` of a struct of two abstract interfaces: the writer sends
/// the second value's repository id as an indirection to the first, and the TypeCode walker
/// must resolve it to find the registered factory (it was refused as a value of a type the
/// TypeCode does not describe; found by the `abstract_iface` fuzz target).
#[test]
fn the_walker_resolves_an_indirected_repository_id() {
    let _cycles = cycles();
    use crate::typecode::StructMember;
    use crate::valuetype::{register_value_factory, DefaultFactory};
    register_value_factory(
        <Cycle as crate::valuetype::ValueType>::REPOSITORY_ID,
        std::sync::Arc::new(DefaultFactory::<Cycle>::new()),
    );
    let a = crate::TypeCode::create_abstract_interface_tc("IDL:AbstractTests/A:1.0", "A").unwrap();
    let pair = crate::TypeCode::create_struct_tc(
        "IDL:AbstractTests/Pair:1.0",
        "Pair",
        vec![StructMember::new("a", a.clone()), StructMember::new("b", a)],
    )
    .unwrap();
    // a: FALSE, a Cycle (tag, id, `next` null); b: FALSE, another Cycle whose repository
    // id is an indirection to a's (the id's length field at 8).
    let id = <Cycle as crate::valuetype::ValueType>::REPOSITORY_ID;
    let mut bytes = vec![0, 0, 0, 0, 0x7f, 0xff, 0xff, 0x02];
    bytes.extend_from_slice(&(id.len() as u32 + 1).to_be_bytes());
    bytes.extend_from_slice(id.as_bytes());
    bytes.push(0);
    while bytes.len() % 4 != 0 {
        bytes.push(0);
    }
    bytes.extend_from_slice(&[0; 4]); // a.next: null
    bytes.extend_from_slice(&[0, 0, 0, 0, 0x7f, 0xff, 0xff, 0x02, 0xff, 0xff, 0xff, 0xff]);
    let offset = 8 - bytes.len() as i32;
    bytes.extend_from_slice(&offset.to_be_bytes());
    bytes.extend_from_slice(&[0; 4]); // b.next: null
    let any = crate::Any::from_cdr(pair, &bytes, ByteOrder::Big, CdrContext::GIOP_1_2, 0).unwrap();
    // The copy re-encodes (forwarding an Any walks it again).
    let mut w = CdrWriter::with_byte_order(ByteOrder::Little, CdrContext::GIOP_1_2);
    crate::cdr::CdrEncode::encode(&any, &mut w).unwrap();
    assert!(w.into_bytes().len() > any.value_bytes().len());
}
