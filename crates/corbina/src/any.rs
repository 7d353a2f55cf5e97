//! `Any`: a value of any IDL type, carried with its [`TypeCode`].
//!
//! The value is kept as CDR bytes, not decoded: encoded as if at stream offset 0, in this
//! machine's byte order, GIOP 1.2 rules, UTF-16 for wide characters, and the `char` code set
//! recorded with it (UTF-8 for values inserted here; that of the connection for values
//! received, so no character is lost in a conversion nobody asked for). So an `Any` whose
//! TypeCode this program has never seen keeps its value and can be forwarded: receiving
//! normalises the bytes once with the TypeCode-driven walker ([`copy_value`]), sending copies
//! them out again (byte-swapping or code-set converting only if the stream differs), and
//! runs of fixed-size values move as blocks.
//!
//! ```
//! use corbina::cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter};
//! use corbina::{Any, TypeCode};
//!
//! let any = Any::from_long(42);
//! let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
//! any.write(&mut w)?;
//! let bytes = w.into_bytes();
//! assert_eq!(bytes, [0, 0, 0, 3, 0, 0, 0, 42]); // tk_long, then the value
//! let back = Any::read(&mut CdrReader::new(&bytes, ByteOrder::Big, CdrContext::GIOP_1_2))?;
//! assert_eq!(back.to_long(), Some(42));
//! assert!(back.type_code().equal(&TypeCode::LONG.into()));
//! # Ok::<(), corbina::cdr::MarshalError>(())
//! ```
//!
//! # Generated types
//! Code generated for an IDL type `T` implements [`AnyInsert`]: `type_code()` returns the
//! type's TypeCode (build it once, in a `std::sync::OnceLock`, and clone the handle), and
//! the value goes through the `CdrEncode`/`CdrDecode` impls generated anyway. Then
//! `Any::insert(&t)` and `any.extract::<T>()` work; exceptions' `CdrEncode` already writes
//! the repository id before the members, which is what an `Any` of a `tk_except` holds.
//!
//! # Values
//! A generated valuetype's `ValueRef<V>` (through [`crate::valuetype::TypedValue`]) and a
//! generated value box implement [`AnyInsert`] with the value's TypeCode: `Any::insert(&v)`,
//! `any.extract::<ValueRef<V>>()`. Other values (a `ValueBase`, an abstract valuetype's
//! holder) go in by the TypeCode of their concrete type, `Any::insert_as(tc, &v)`.
//! The value's bytes are self-contained: the walker gives each `Any` its own value stream, so
//! sharing and cycles inside the value travel as indirections within the `Any`'s bytes, and a
//! received value whose indirection points outside them is refused (MARSHAL). Chunked values
//! are kept chunked; a value received under the TypeCode of a truncatable base is truncated to
//! that base, as a receiver knowing only the base would; custom values can be skipped but not
//! kept, having no TypeCode for their state.

use crate::typecode::{copy_value, decode_type_code, encode_type_code, TcKind, TypeCode};
use corbina_cdr::codeset::{CharCodeSet, CodeSets, WCharCodeSet};
use corbina_cdr::{
    ByteOrder, CdrContext, CdrDecode, CdrEncode, CdrReader, CdrWriter, Fixed, LongDouble,
    MarshalError, Result,
};
use std::sync::Arc;

/// A type that can go into and come out of an [`Any`]: its TypeCode plus its CDR form.
///
/// Implemented here for the primitive types, `String`, [`TypeCode`], [`Any`], [`Char`] and
/// [`LongDouble`]; generated code implements it for IDL structs, unions, enums, sequences
/// (newtypes) and exceptions.
pub trait AnyInsert: CdrEncode + for<'de> CdrDecode<'de> {
    /// The TypeCode of every value of this type.
    fn type_code() -> TypeCode;
}

/// An IDL `char` (one octet in the transmission code set), told apart from `octet` (`u8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Char(pub char);

impl CdrEncode for Char {
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        w.write_char_unicode(self.0)
    }
}

impl<'de> CdrDecode<'de> for Char {
    fn decode(r: &mut CdrReader<'de>) -> Result<Self> {
        r.read_char_unicode().map(Char)
    }
}

macro_rules! any_insert {
    ($($t:ty => $kind:ident,)*) => {$(
        impl AnyInsert for $t {
            fn type_code() -> TypeCode {
                TypeCode::primitive(TcKind::$kind)
            }
        }
    )*};
}

any_insert! {
    i16 => Short,
    u16 => UShort,
    i32 => Long,
    u32 => ULong,
    i64 => LongLong,
    u64 => ULongLong,
    f32 => Float,
    f64 => Double,
    bool => Boolean,
    u8 => Octet,
    char => WChar,
    Char => Char,
    LongDouble => LongDouble,
    TypeCode => TypeCode,
    Any => Any,
}

impl AnyInsert for String {
    fn type_code() -> TypeCode {
        TypeCode::create_string_tc(0)
    }
}

/// A value with its TypeCode.
#[derive(Clone)]
pub struct Any {
    tc: TypeCode,
    /// The value's CDR bytes: native order, stream offset 0, [`Any::context`] rules.
    value: Arc<[u8]>,
    char_set: CharCodeSet,
}

/// The rules an `Any`'s bytes are kept in, for a given `char` code set.
fn context(char_set: CharCodeSet) -> CdrContext {
    CdrContext::GIOP_1_2.with_code_sets(CodeSets {
        char_set,
        wchar_set: Some(WCharCodeSet::Utf16),
    })
}

impl Default for Any {
    /// An `Any` holding nothing (`tk_null`).
    fn default() -> Self {
        Any::from_raw(TypeCode::primitive(TcKind::Null), Vec::new())
    }
}

macro_rules! primitive_any {
    ($($from:ident, $to:ident, $t:ty, $kind:ident, $write:ident, $read:ident;)*) => {
        impl Any {$(
            #[doc = concat!("An `Any` holding a `", stringify!($kind), "`.")]
            pub fn $from(v: $t) -> Any {
                let mut w = Any::writer(CharCodeSet::Utf8);
                w.$write(v);
                Any::from_raw(TypeCode::primitive(TcKind::$kind), w.into_bytes())
            }

            #[doc = concat!("The `", stringify!($kind), "` held, if that is the type (aliases allowed).")]
            pub fn $to(&self) -> Option<$t> {
                if self.tc.unalias().kind() != TcKind::$kind {
                    return None;
                }
                self.reader().$read().ok()
            }
        )*}
    };
}

primitive_any! {
    from_short, to_short, i16, Short, write_short, read_short;
    from_ushort, to_ushort, u16, UShort, write_ushort, read_ushort;
    from_long, to_long, i32, Long, write_long, read_long;
    from_ulong, to_ulong, u32, ULong, write_ulong, read_ulong;
    from_longlong, to_longlong, i64, LongLong, write_longlong, read_longlong;
    from_ulonglong, to_ulonglong, u64, ULongLong, write_ulonglong, read_ulonglong;
    from_float, to_float, f32, Float, write_float, read_float;
    from_double, to_double, f64, Double, write_double, read_double;
    from_boolean, to_boolean, bool, Boolean, write_boolean, read_boolean;
    from_octet, to_octet, u8, Octet, write_octet, read_octet;
    from_long_double, to_long_double, LongDouble, LongDouble, write_long_double, read_long_double;
}

impl Any {
    fn writer(char_set: CharCodeSet) -> CdrWriter<'static> {
        CdrWriter::new(context(char_set))
    }

    pub(crate) fn from_raw(tc: TypeCode, bytes: Vec<u8>) -> Any {
        Any {
            tc,
            value: bytes.into(),
            char_set: CharCodeSet::Utf8,
        }
    }

    /// The TypeCode.
    pub fn type_code(&self) -> &TypeCode {
        &self.tc
    }

    /// The value's CDR bytes (see [`Any::context`] and [`Any::value_reader`]).
    pub fn value_bytes(&self) -> &[u8] {
        &self.value
    }

    /// The rules the value's bytes follow: native byte order, stream offset 0, GIOP 1.2,
    /// UTF-16 wide characters and the recorded `char` code set.
    pub fn context(&self) -> CdrContext {
        context(self.char_set)
    }

    /// A reader over the value (for DynAny and DSI, which decode it part by part).
    pub fn value_reader(&self) -> CdrReader<'_> {
        CdrReader::new(&self.value, ByteOrder::NATIVE, self.context())
    }

    /// Inserts a value of a type with a known TypeCode.
    pub fn insert<T: AnyInsert>(v: &T) -> Result<Any> {
        let mut w = Any::writer(CharCodeSet::Utf8);
        v.encode(&mut w)?;
        Ok(Any::from_raw(T::type_code(), w.into_bytes()))
    }

    /// Inserts `v` as a value of type `tc`, for types without their own [`AnyInsert`] (a
    /// typedef'd `Vec<u8>` with its alias TypeCode, say). The bytes `v` encodes to are
    /// checked against `tc` with the walker, so a mismatch is an error, not a bad `Any`.
    pub fn insert_as<T: CdrEncode + ?Sized>(tc: TypeCode, v: &T) -> Result<Any> {
        let mut w = Any::writer(CharCodeSet::Utf8);
        v.encode(&mut w)?;
        let bytes = w.into_bytes();
        let mut r = CdrReader::new(&bytes, ByteOrder::NATIVE, context(CharCodeSet::Utf8));
        crate::typecode::skip_value(&tc, &mut r)?;
        r.expect_end()?;
        Ok(Any::from_raw(tc, bytes))
    }

    /// A writer for building a value in an `Any`'s rules (see [`Any::context`]).
    pub(crate) fn value_writer(char_set: CharCodeSet) -> CdrWriter<'static> {
        Any::writer(char_set)
    }

    /// An `Any` from bytes written by [`Any::value_writer`] with the same `char_set`; the
    /// caller vouches that they hold one value of type `tc`.
    pub(crate) fn from_written(tc: TypeCode, bytes: Vec<u8>, char_set: CharCodeSet) -> Any {
        Any {
            tc,
            value: bytes.into(),
            char_set,
        }
    }

    /// Extracts a value if the TypeCode is equivalent to `T`'s. For an exception the
    /// repository id that starts the value is checked and skipped (generated exceptions'
    /// decoders read the members only).
    pub fn extract<T: AnyInsert>(&self) -> Option<T> {
        let tc = T::type_code();
        if !self.tc.ptr_eq(&tc) && !self.tc.equivalent(&tc) {
            return None;
        }
        let mut r = self.reader();
        if tc.unalias().kind() == TcKind::Except {
            r.read_string().ok()?;
        }
        let v = T::decode(&mut r).ok()?;
        r.expect_end().ok()?;
        Some(v)
    }

    /// Extracts a value of type `tc` with `T`'s decoder, for types without their own
    /// [`AnyInsert`] (a typedef's generated `<alias>_extract`): `None` if the Any's TypeCode
    /// is not equivalent to `tc` or the value does not decode as `T`.
    pub fn extract_as<T: for<'de> CdrDecode<'de>>(&self, tc: &TypeCode) -> Option<T> {
        if !self.tc.ptr_eq(tc) && !self.tc.equivalent(tc) {
            return None;
        }
        let mut r = self.reader();
        let v = T::decode(&mut r).ok()?;
        r.expect_end().ok()?;
        Some(v)
    }

    fn reader(&self) -> CdrReader<'_> {
        self.value_reader()
    }

    /// An `Any` holding a `string`.
    pub fn from_string(s: &str) -> Result<Any> {
        let mut w = Any::writer(CharCodeSet::Utf8);
        w.write_string(s)?;
        Ok(Any::from_raw(TypeCode::create_string_tc(0), w.into_bytes()))
    }

    /// The `string` held (bounded or not).
    pub fn to_string_value(&self) -> Option<String> {
        (self.tc.unalias().kind() == TcKind::String)
            .then(|| self.reader().read_string().ok())
            .flatten()
    }

    /// An `Any` holding a `wstring`.
    pub fn from_wstring(s: &str) -> Result<Any> {
        let mut w = Any::writer(CharCodeSet::Utf8);
        w.write_wstring(s)?;
        Ok(Any::from_raw(
            TypeCode::create_wstring_tc(0),
            w.into_bytes(),
        ))
    }

    /// The `wstring` held.
    pub fn to_wstring(&self) -> Option<String> {
        (self.tc.unalias().kind() == TcKind::WString)
            .then(|| self.reader().read_wstring().ok())
            .flatten()
    }

    /// An `Any` holding an IDL `char`; fails for characters outside the code set (UTF-8
    /// `char` is ASCII only).
    pub fn from_char(c: char) -> Result<Any> {
        Any::insert(&Char(c))
    }

    /// The IDL `char` held.
    pub fn to_char(&self) -> Option<char> {
        (self.tc.unalias().kind() == TcKind::Char)
            .then(|| self.reader().read_char_unicode().ok())
            .flatten()
    }

    /// An `Any` holding a `wchar`; fails outside the Basic Multilingual Plane.
    pub fn from_wchar(c: char) -> Result<Any> {
        Any::insert(&c)
    }

    /// The `wchar` held.
    pub fn to_wchar(&self) -> Option<char> {
        (self.tc.unalias().kind() == TcKind::WChar)
            .then(|| self.reader().read_wchar().ok())
            .flatten()
    }

    /// An `Any` holding a `fixed<digits, scale>`.
    pub fn from_fixed(v: Fixed) -> Result<Any> {
        let tc =
            TypeCode::create_fixed_tc(u16::from(v.digits), i16::from(v.scale)).map_err(|_| {
                MarshalError::InvalidFixed {
                    offset: 0,
                    reason: "bad digits/scale",
                }
            })?;
        let mut w = Any::writer(CharCodeSet::Utf8);
        v.encode(&mut w)?;
        Ok(Any::from_raw(tc, w.into_bytes()))
    }

    /// The `fixed` held.
    pub fn to_fixed(&self) -> Option<Fixed> {
        let t = self.tc.unalias();
        let (d, s) = (t.fixed_digits().ok()?, t.fixed_scale().ok()?);
        Fixed::decode(&mut self.reader(), d as u8, s as u8).ok()
    }

    /// An `Any` holding a TypeCode.
    pub fn from_type_code(tc: &TypeCode) -> Result<Any> {
        Any::insert(tc)
    }

    /// The TypeCode held.
    pub fn to_type_code(&self) -> Option<TypeCode> {
        self.extract()
    }

    /// An `Any` holding another.
    pub fn from_any(inner: &Any) -> Result<Any> {
        Any::insert(inner)
    }

    /// The `Any` held.
    pub fn to_any(&self) -> Option<Any> {
        self.extract()
    }

    /// An `Any` holding an object reference of interface type `tc` (a `tk_objref`,
    /// `tk_abstract_interface` as a reference, component or home TypeCode).
    pub fn from_ior(tc: TypeCode, ior: &corbina_giop::Ior) -> Result<Any> {
        let mut w = Any::writer(CharCodeSet::Utf8);
        let abstract_iface = tc.unalias().kind() == TcKind::AbstractInterface;
        if abstract_iface {
            w.write_boolean(true);
        }
        ior.encode(&mut w).map_err(|e| match e {
            corbina_giop::GiopError::Marshal(m) => m,
            _ => MarshalError::InvalidValue {
                offset: 0,
                reason: "IOR cannot be encoded",
            },
        })?;
        Ok(Any::from_raw(tc, w.into_bytes()))
    }

    /// The object reference held, as an IOR (making an `ObjectRef` of it is the ORB's job).
    pub fn to_ior(&self) -> Option<corbina_giop::Ior> {
        let mut r = self.reader();
        match self.tc.unalias().kind() {
            TcKind::Objref | TcKind::Component | TcKind::Home => {}
            TcKind::AbstractInterface if r.read_boolean().ok()? => {}
            _ => return None,
        }
        corbina_giop::Ior::decode(&mut r).ok()
    }

    /// An `Any` from a value's CDR bytes as received: `bytes` (a value of type `tc` starting
    /// at stream offset `offset`, in `order`, under `ctx`) are checked and normalised.
    pub fn from_cdr(
        tc: TypeCode,
        bytes: &[u8],
        order: ByteOrder,
        ctx: CdrContext,
        offset: usize,
    ) -> Result<Any> {
        let mut r = CdrReader::new(bytes, order, ctx).with_stream_offset(offset);
        let any = Any::read_value(tc, &mut r)?;
        r.expect_end()?;
        Ok(any)
    }

    /// Reads a value of type `tc` from a stream (a DSI argument, a DII result), keeping its
    /// CDR form.
    pub fn read_value(tc: TypeCode, r: &mut CdrReader<'_>) -> Result<Any> {
        let char_set = r.context().code_sets.char_set;
        let mut w = Any::writer(char_set);
        copy_value(&tc, r, &mut w)?;
        let bytes = w.into_bytes();
        Ok(Any {
            tc,
            value: bytes.into(),
            char_set,
        })
    }

    /// Writes the value alone (a DII argument, a DSI result), in `w`'s rules.
    pub fn write_value<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        let mut r = self.reader();
        copy_value(&self.tc, &mut r, w)?;
        r.expect_end()
    }

    /// Writes the `Any`: TypeCode, then value.
    pub fn write<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        encode_type_code(&self.tc, w)?;
        self.write_value(w)
    }

    /// Reads an `Any`: TypeCode, then value.
    pub fn read(r: &mut CdrReader<'_>) -> Result<Any> {
        let tc = decode_type_code(r)?;
        Any::read_value(tc, r)
    }

    /// The value's bytes re-encoded in `char_set` (for comparing Anys kept in different
    /// code sets).
    fn bytes_in(&self, char_set: CharCodeSet) -> Option<Vec<u8>> {
        if char_set == self.char_set {
            return Some(self.value.to_vec());
        }
        let mut w = Any::writer(char_set);
        copy_value(&self.tc, &mut self.reader(), &mut w).ok()?;
        Some(w.into_bytes())
    }
}

/// A union label or discriminator value `v` of type `disc`, as an `Any`.
pub(crate) fn label_any(disc: &TypeCode, v: i128) -> Any {
    let mut w = Any::writer(CharCodeSet::Utf8);
    // The label was checked against the discriminator type when the TypeCode was built.
    let _ = crate::typecode::write_label_tc(&mut w, disc, v);
    Any::from_raw(disc.clone(), w.into_bytes())
}

impl PartialEq for Any {
    /// Equal TypeCodes and equal values (compared in one code set).
    fn eq(&self, other: &Any) -> bool {
        self.tc.equal(&other.tc)
            && match other.bytes_in(self.char_set) {
                Some(b) => *b == *self.value,
                None => false,
            }
    }
}

impl std::fmt::Debug for Any {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Any")
            .field("type", &self.tc)
            .field("bytes", &self.value.len())
            .finish()
    }
}

impl CdrEncode for Any {
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        self.write(w)
    }
}

impl<'de> CdrDecode<'de> for Any {
    const MIN_WIRE_SIZE: usize = 4;
    fn decode(r: &mut CdrReader<'de>) -> Result<Self> {
        Any::read(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitives_in_and_out() {
        assert_eq!(Any::from_long(-5).to_long(), Some(-5));
        assert_eq!(Any::from_long(-5).to_short(), None);
        assert_eq!(Any::from_octet(7).to_octet(), Some(7));
        assert_eq!(
            Any::from_string("hé").unwrap().to_string_value().unwrap(),
            "hé"
        );
        assert_eq!(Any::insert(&1.5f64).unwrap().extract::<f64>(), Some(1.5));
        assert_eq!(Any::from_char('x').unwrap().to_char(), Some('x'));
        assert!(Any::from_char('é').is_err());
        assert_eq!(Any::default().type_code().kind(), TcKind::Null);
    }
}
