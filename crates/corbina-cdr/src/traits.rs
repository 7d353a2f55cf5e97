//! `CdrEncode`/`CdrDecode`: the traits generated code implements for every IDL type, with
//! bulk paths for slices of primitives.

use crate::error::Result;
use crate::primitive::LongDouble;
use crate::reader::CdrReader;
use crate::writer::CdrWriter;

/// A value that can be written as CDR.
///
/// `encode` borrows `self` for the writer's lifetime so large blocks can be sent straight
/// from the value's memory.
pub trait CdrEncode {
    /// Writes `self`.
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()>;

    /// Writes consecutive values (sequence or array elements, no length). Primitive types
    /// override this with one block copy; generated fixed-size structs with one reserved block.
    fn encode_slice<'a>(items: &'a [Self], w: &mut CdrWriter<'a>) -> Result<()>
    where
        Self: Sized,
    {
        for item in items {
            item.encode(w)?;
        }
        Ok(())
    }
}

/// A value that can be read from CDR. `'a` is the input's lifetime, so types such as
/// `&'a [u8]` can borrow from it.
pub trait CdrDecode<'a>: Sized {
    /// The fewest bytes one value occupies on the wire, used to reject sequence lengths that
    /// the remaining input cannot hold before anything is allocated.
    const MIN_WIRE_SIZE: usize = 1;

    /// Reads one value.
    fn decode(r: &mut CdrReader<'a>) -> Result<Self>;

    /// Reads `count` consecutive values (the caller has checked `count` against the input).
    ///
    /// The default reserves at most [`PREALLOC_BYTES`] up front and lets the vector grow as
    /// elements decode: a count is only checked against the bytes left, which every
    /// enclosing sequence counts as well, so reserving all of it at each nesting level would
    /// let a small message claim memory quadratic in its size.
    fn decode_vec(r: &mut CdrReader<'a>, count: usize) -> Result<Vec<Self>> {
        r.check_length(count, Self::MIN_WIRE_SIZE.max(1))?;
        let mut v = Vec::with_capacity(prealloc_count::<Self>(count));
        for _ in 0..count {
            v.push(Self::decode(r)?);
        }
        Ok(v)
    }
}

/// The most bytes [`CdrDecode::decode_vec`]'s default reserves before elements decode.
pub const PREALLOC_BYTES: usize = 1024;

/// How many of `count` elements of `T` to reserve before decoding them: all of them up to
/// [`PREALLOC_BYTES`]. Generated `decode_vec` overrides for types that contain sequences or
/// strings use this too; fixed-size types may reserve `count` exactly once the bytes are
/// checked.
#[inline]
pub fn prealloc_count<T>(count: usize) -> usize {
    count.min((PREALLOC_BYTES / std::mem::size_of::<T>().max(1)).max(1))
}

macro_rules! primitive_traits {
    ($($t:ty => $w:ident, $r:ident;)*) => {$(
        impl CdrEncode for $t {
            #[inline]
            fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
                w.$w(*self);
                Ok(())
            }
            #[inline]
            fn encode_slice<'a>(items: &'a [Self], w: &mut CdrWriter<'a>) -> Result<()> {
                w.write_primitive_array(items);
                Ok(())
            }
        }
        impl<'a> CdrDecode<'a> for $t {
            const MIN_WIRE_SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
                r.$r()
            }
            #[inline]
            fn decode_vec(r: &mut CdrReader<'a>, count: usize) -> Result<Vec<Self>> {
                r.read_primitive_array(count)
            }
        }
    )*};
}

primitive_traits! {
    i16 => write_short, read_short;
    u16 => write_ushort, read_ushort;
    i32 => write_long, read_long;
    u32 => write_ulong, read_ulong;
    i64 => write_longlong, read_longlong;
    u64 => write_ulonglong, read_ulonglong;
    f32 => write_float, read_float;
    f64 => write_double, read_double;
}

/// `octet` (and `char` in the native ISO-8859-1 code set).
impl CdrEncode for u8 {
    #[inline]
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        w.write_octet(*self);
        Ok(())
    }
    #[inline]
    fn encode_slice<'a>(items: &'a [Self], w: &mut CdrWriter<'a>) -> Result<()> {
        w.write_bytes_borrowed(items);
        Ok(())
    }
}

impl<'a> CdrDecode<'a> for u8 {
    #[inline]
    fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
        r.read_octet()
    }
    #[inline]
    fn decode_vec(r: &mut CdrReader<'a>, count: usize) -> Result<Vec<Self>> {
        Ok(r.read_bytes(count)?.to_vec())
    }
}

impl CdrEncode for bool {
    #[inline]
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        w.write_boolean(*self);
        Ok(())
    }
    fn encode_slice<'a>(items: &'a [Self], w: &mut CdrWriter<'a>) -> Result<()> {
        // bool is one byte holding 0 or 1: the same bytes as CDR booleans.
        for &b in items {
            w.write_boolean(b);
        }
        Ok(())
    }
}

impl<'a> CdrDecode<'a> for bool {
    #[inline]
    fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
        r.read_boolean()
    }
}

/// IDL `wchar`.
impl CdrEncode for char {
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        w.write_wchar(*self)
    }
}

impl<'a> CdrDecode<'a> for char {
    const MIN_WIRE_SIZE: usize = 2;
    fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
        r.read_wchar()
    }
}

impl CdrEncode for LongDouble {
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        w.write_long_double(*self);
        Ok(())
    }
}

impl<'a> CdrDecode<'a> for LongDouble {
    const MIN_WIRE_SIZE: usize = 16;
    fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
        r.read_long_double()
    }
}

/// IDL `string` (unbounded; generated code checks bounds).
impl CdrEncode for String {
    #[inline]
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        w.write_string(self)
    }
}

impl CdrEncode for str {
    #[inline]
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        w.write_string(self)
    }
}

impl<'a> CdrDecode<'a> for String {
    const MIN_WIRE_SIZE: usize = 4;
    #[inline]
    fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
        r.read_string()
    }
}

/// IDL `sequence<T>`: a length, then the elements.
impl<T: CdrEncode> CdrEncode for Vec<T> {
    #[inline]
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        self.as_slice().encode(w)
    }
}

impl<T: CdrEncode> CdrEncode for [T] {
    #[inline]
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        w.write_length(self.len())?;
        T::encode_slice(self, w)
    }
}

impl<'a, T: CdrDecode<'a>> CdrDecode<'a> for Vec<T> {
    const MIN_WIRE_SIZE: usize = 4;
    #[inline]
    fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
        let n = r.read_length(T::MIN_WIRE_SIZE.max(1))?;
        // Sequences of sequences (recursive types) nest; bound the recursion.
        r.enter()?;
        let v = T::decode_vec(r, n);
        r.leave();
        v
    }
}

/// `sequence<octet>` borrowed from the input: no copy at all.
impl<'a> CdrDecode<'a> for &'a [u8] {
    const MIN_WIRE_SIZE: usize = 4;
    #[inline]
    fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
        r.read_octet_seq()
    }
}

/// IDL arrays: elements with no length prefix.
impl<T: CdrEncode, const N: usize> CdrEncode for [T; N] {
    #[inline]
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        T::encode_slice(self, w)
    }
}

impl<'a, T: CdrDecode<'a>, const N: usize> CdrDecode<'a> for [T; N] {
    const MIN_WIRE_SIZE: usize = T::MIN_WIRE_SIZE * N;
    fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
        let v = T::decode_vec(r, N)?;
        let offset = r.position();
        v.try_into().map_err(|_| crate::MarshalError::InvalidValue {
            offset,
            reason: "array length mismatch",
        })
    }
}

impl<T: CdrEncode + ?Sized> CdrEncode for Box<T> {
    #[inline]
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        (**self).encode(w)
    }
}

impl<'a, T: CdrDecode<'a>> CdrDecode<'a> for Box<T> {
    const MIN_WIRE_SIZE: usize = T::MIN_WIRE_SIZE;
    fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
        T::decode(r).map(Box::new)
    }
}

impl<T: CdrEncode + ?Sized> CdrEncode for &T {
    #[inline]
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        (**self).encode(w)
    }
}

/// Encodes `value` into a fresh native-order buffer (convenience for tests and tools).
pub fn to_bytes<T: CdrEncode + ?Sized>(value: &T, ctx: crate::CdrContext) -> Result<Vec<u8>> {
    let mut w = CdrWriter::new(ctx);
    value.encode(&mut w)?;
    Ok(w.into_bytes())
}

/// Decodes a whole buffer as one `T`, failing on leftover bytes.
pub fn from_bytes<'a, T: CdrDecode<'a>>(
    bytes: &'a [u8],
    order: crate::ByteOrder,
    ctx: crate::CdrContext,
) -> Result<T> {
    let mut r = CdrReader::new(bytes, order, ctx);
    let v = T::decode(&mut r)?;
    r.expect_end()?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ByteOrder, CdrContext};

    #[test]
    fn nested_sequences_round_trip() {
        let v: Vec<Vec<String>> = vec![vec!["a".into(), "bc".into()], vec![]];
        let bytes = to_bytes(&v, CdrContext::default()).unwrap();
        let back: Vec<Vec<String>> =
            from_bytes(&bytes, ByteOrder::NATIVE, CdrContext::default()).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn arrays_and_borrowed_octets() {
        let a: [[i16; 2]; 3] = [[1, 2], [3, 4], [5, 6]];
        let bytes = to_bytes(&a, CdrContext::default()).unwrap();
        assert_eq!(bytes.len(), 12);
        let back: [[i16; 2]; 3] =
            from_bytes(&bytes, ByteOrder::NATIVE, CdrContext::default()).unwrap();
        assert_eq!(back, a);
        let data = vec![1u8, 2, 3];
        let bytes = to_bytes(&data, CdrContext::default()).unwrap();
        let s: &[u8] = from_bytes(&bytes, ByteOrder::NATIVE, CdrContext::default()).unwrap();
        assert_eq!(s, [1, 2, 3]);
    }

    #[test]
    fn deep_recursion_is_an_error_not_a_stack_overflow() {
        // A sequence of sequences nested 100,000 deep: each level is a length of 1.
        let mut bytes = Vec::new();
        for _ in 0..100_000 {
            bytes.extend_from_slice(&1u32.to_be_bytes());
        }
        #[derive(Debug)]
        struct Tree(#[allow(dead_code)] Vec<Tree>);
        impl<'a> CdrDecode<'a> for Tree {
            const MIN_WIRE_SIZE: usize = 4;
            fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
                Vec::<Tree>::decode(r).map(Tree)
            }
        }
        let err = from_bytes::<Tree>(&bytes, ByteOrder::Big, CdrContext::default()).unwrap_err();
        assert!(matches!(err, crate::MarshalError::NestingTooDeep { .. }));
    }
}
