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
