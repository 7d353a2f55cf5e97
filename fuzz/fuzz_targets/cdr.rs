//! Drives the CDR reader with a program taken from the input: the first octet picks the
//! byte order, GIOP version and code sets, the next octets pick which values to read, and the
//! rest is the stream. Every read must return Ok or Err, never panic or allocate without bound.
#![no_main]

use corbina_cdr::{
    AlignBreak, ByteOrder, CdrContext, CdrDecode, CdrReader, CharCodeSet, CodeSets, Fixed,
    WCharCodeSet,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [mode, nops, rest @ ..] = data else { return };
    let nops = usize::from(*nops % 32).min(rest.len());
    let (ops, stream) = rest.split_at(nops);
    let order = ByteOrder::from_flag(*mode);
    let ctx = CdrContext {
        giop_minor: (mode >> 1) % 3,
        code_sets: CodeSets {
            char_set: if mode & 8 == 0 { CharCodeSet::Iso8859_1 } else { CharCodeSet::Utf8 },
            wchar_set: if mode & 16 == 0 { None } else { Some(WCharCodeSet::Utf16) },
        },
    };
    let breaks = [AlignBreak { at: stream.len() / 2, origin: stream.len() as isize / 2 - 12 }];
    let mut r = CdrReader::new(stream, order, ctx).with_max_depth(64);
    if mode & 32 != 0 {
        r = r.with_align_breaks(&breaks);
    }
    for &op in ops {
        let ok = match op % 24 {
            0 => r.read_octet().is_ok(),
            1 => r.read_boolean().is_ok(),
            2 => r.read_short().is_ok(),
            3 => r.read_ulong().is_ok(),
            4 => r.read_ulonglong().is_ok(),
            5 => r.read_double().is_ok(),
            6 => r.read_long_double().is_ok(),
            7 => r.read_string().is_ok(),
            8 => r.read_wstring().is_ok(),
            9 => r.read_wchar().is_ok(),
            10 => r.read_char_unicode().is_ok(),
            11 => r.read_octet_seq().is_ok(),
            12 => r.read_primitive_seq::<f64>().is_ok(),
            13 => r.read_primitive_seq::<i16>().is_ok(),
            14 => r.read_boolean_seq().is_ok(),
            15 => Vec::<String>::decode(&mut r).is_ok(),
            16 => Vec::<Vec<u32>>::decode(&mut r).is_ok(),
            17 => r.read_enum(u32::from(op)).is_ok(),
            18 => Fixed::decode(&mut r, op % 32, op % 7).is_ok(),
            19 => match r.read_encapsulation() {
                Ok(mut inner) => {
                    let _ = inner.read_string();
                    let _ = inner.read_encapsulation().map(|mut e| e.read_ulong());
                    true
                }
                Err(_) => false,
            },
            20 => r.read_str_borrowed().is_ok(),
            21 => <[i32; 3]>::decode(&mut r).is_ok(),
            22 => r.read_bounded_string(u32::from(op)).is_ok(),
            _ => r.read_primitive_seq::<u64>().is_ok(),
        };
        if !ok {
            break;
        }
    }
});
