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
