//! Decodes TypeCodes and Anys (TypeCode + value, walked by the TypeCode) from hostile bytes;
//! whatever decodes must re-encode and decode to an equal TypeCode / the same value bytes.
#![no_main]

use corbina::cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter, CodeSets};
use corbina::typecode::{decode_type_code, encode_type_code};
use corbina::Any;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [mode, rest @ ..] = data else { return };
    let order = ByteOrder::from_flag(*mode);
    let ctx = CdrContext::GIOP_1_2.with_code_sets(CodeSets::UNICODE);
    let mut r = CdrReader::new(rest, order, ctx);
    if mode & 2 == 0 {
        if let Ok(tc) = decode_type_code(&mut r) {
            let mut w = CdrWriter::new(ctx);
            if encode_type_code(&tc, &mut w).is_ok() {
                let bytes = w.into_bytes();
                let mut r2 = CdrReader::new(&bytes, ByteOrder::NATIVE, ctx);
                let again = decode_type_code(&mut r2).expect("re-encoded TypeCode decodes");
                assert!(again.equal(&tc));
            }
        }
    } else if let Ok(any) = Any::read(&mut r) {
        let mut w = CdrWriter::new(ctx);
        if any.write(&mut w).is_ok() {
            let bytes = w.into_bytes();
            let mut r2 = CdrReader::new(&bytes, ByteOrder::NATIVE, ctx);
            Any::read(&mut r2).expect("re-encoded Any decodes");
        }
    }
});
