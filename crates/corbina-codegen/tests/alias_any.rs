//! Typedefs of sequences and arrays in an `Any` (issue 17): the generated `<alias>_insert`
//! and `<alias>_extract` use the alias TypeCode both ways.

#[allow(dead_code)]
mod gen_dynamic {
    include!("golden/dynamic.rs");
}

use corbina::typecode::TcKind;
use corbina::{Any, TypeCode};
use gen_dynamic::r#dyn::*;

/// The Any written as CDR and read back.
fn wire(a: &Any) -> Any {
    use corbina::cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter};
    let mut w = CdrWriter::with_byte_order(ByteOrder::Little, CdrContext::GIOP_1_2);
    a.write(&mut w).unwrap();
    let bytes = w.into_bytes();
    Any::read(&mut CdrReader::new(
        &bytes,
        ByteOrder::Little,
        CdrContext::GIOP_1_2,
    ))
    .unwrap()
}

#[test]
fn an_array_typedef_goes_in_and_out_with_its_alias_type_code() {
    let m: Matrix = [[1, 2, 3], [4, 5, 6]];
    let a = matrix_insert(&m).unwrap();
    assert_eq!(a.type_code().kind(), TcKind::Alias);
    assert!(a.type_code().equal(&matrix_type_code()));
    assert_eq!(matrix_extract(&a), Some(m));
    // Through the wire form too.
    let back = wire(&a);
    assert_eq!(matrix_extract(&back), Some(m));
    // Another type's Any does not extract.
    assert_eq!(matrix_extract(&Any::from_long(7)), None);
}

#[test]
fn a_bounded_sequence_typedef_checks_its_bound() {
    let t = |n: &str| Tagged {
        name: n.into(),
        value: Any::from_long(1),
        kind: TypeCode::primitive(TcKind::Long),
    };
    let few: Few = vec![t("a"), t("b")];
    let a = few_insert(&few).unwrap();
    assert!(a.type_code().equal(&few_type_code()));
    assert_eq!(few_extract(&a).unwrap(), few);
    assert!(
        few_insert(&vec![t("a"); 5]).is_err(),
        "longer than the bound 4"
    );
    let anys: AnySeq = vec![Any::from_long(3), Any::from_string("x").unwrap()];
    let a = any_seq_insert(&anys).unwrap();
    assert_eq!(any_seq_extract(&a).unwrap(), anys);
    assert_eq!(few_extract(&a), None);
}
