//! `TCKind`: what sort of type a TypeCode describes, with its CDR number.

/// The kind of a [`TypeCode`](super::TypeCode) (CORBA `TCKind`); the discriminant is the
/// value sent on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
#[allow(missing_docs)] // The names are the IDL ones without `tk_`.
pub enum TcKind {
    Null = 0,
    Void = 1,
    Short = 2,
    Long = 3,
    UShort = 4,
    ULong = 5,
    Float = 6,
    Double = 7,
    Boolean = 8,
    Char = 9,
    Octet = 10,
    Any = 11,
    TypeCode = 12,
    Principal = 13,
    Objref = 14,
    Struct = 15,
    Union = 16,
    Enum = 17,
    String = 18,
    Sequence = 19,
    Array = 20,
    Alias = 21,
    Except = 22,
    LongLong = 23,
    ULongLong = 24,
    LongDouble = 25,
    WChar = 26,
    WString = 27,
    Fixed = 28,
    Value = 29,
    ValueBox = 30,
    Native = 31,
    AbstractInterface = 32,
    LocalInterface = 33,
    Component = 34,
    Home = 35,
    Event = 36,
}

/// The kind value that introduces an indirection instead of a TypeCode.
pub const INDIRECTION_TAG: u32 = 0xffff_ffff;

impl TcKind {
    /// Every kind, in numeric order.
    pub const ALL: [TcKind; 37] = [
        TcKind::Null,
        TcKind::Void,
        TcKind::Short,
        TcKind::Long,
        TcKind::UShort,
        TcKind::ULong,
        TcKind::Float,
        TcKind::Double,
        TcKind::Boolean,
        TcKind::Char,
        TcKind::Octet,
        TcKind::Any,
        TcKind::TypeCode,
        TcKind::Principal,
        TcKind::Objref,
        TcKind::Struct,
        TcKind::Union,
        TcKind::Enum,
        TcKind::String,
        TcKind::Sequence,
        TcKind::Array,
        TcKind::Alias,
        TcKind::Except,
        TcKind::LongLong,
        TcKind::ULongLong,
        TcKind::LongDouble,
        TcKind::WChar,
        TcKind::WString,
        TcKind::Fixed,
        TcKind::Value,
        TcKind::ValueBox,
        TcKind::Native,
        TcKind::AbstractInterface,
        TcKind::LocalInterface,
        TcKind::Component,
        TcKind::Home,
        TcKind::Event,
    ];

    /// The kind with wire value `v`, if there is one.
    pub fn from_u32(v: u32) -> Option<TcKind> {
        TcKind::ALL.get(v as usize).copied()
    }

    /// The wire value.
    pub fn value(self) -> u32 {
        self as u32
    }

    /// The IDL name (`tk_struct`).
    pub fn name(self) -> &'static str {
        const NAMES: [&str; 37] = [
            "tk_null",
            "tk_void",
            "tk_short",
            "tk_long",
            "tk_ushort",
            "tk_ulong",
            "tk_float",
            "tk_double",
            "tk_boolean",
            "tk_char",
            "tk_octet",
            "tk_any",
            "tk_TypeCode",
            "tk_Principal",
            "tk_objref",
            "tk_struct",
            "tk_union",
            "tk_enum",
            "tk_string",
            "tk_sequence",
            "tk_array",
            "tk_alias",
            "tk_except",
            "tk_longlong",
            "tk_ulonglong",
            "tk_longdouble",
            "tk_wchar",
            "tk_wstring",
            "tk_fixed",
            "tk_value",
            "tk_value_box",
            "tk_native",
            "tk_abstract_interface",
            "tk_local_interface",
            "tk_component",
            "tk_home",
            "tk_event",
        ];
        NAMES[self as usize]
    }

    /// Kinds whose TypeCode is the kind alone (no parameters).
    pub fn is_primitive(self) -> bool {
        matches!(
            self,
            TcKind::Null
                | TcKind::Void
                | TcKind::Short
                | TcKind::Long
                | TcKind::UShort
                | TcKind::ULong
                | TcKind::Float
                | TcKind::Double
                | TcKind::Boolean
                | TcKind::Char
                | TcKind::Octet
                | TcKind::Any
                | TcKind::TypeCode
                | TcKind::Principal
                | TcKind::LongLong
                | TcKind::ULongLong
                | TcKind::LongDouble
                | TcKind::WChar
        )
    }

    /// Kinds that carry a repository id and name (`id()`/`name()` are legal).
    pub fn has_id(self) -> bool {
        matches!(
            self,
            TcKind::Objref
                | TcKind::Struct
                | TcKind::Union
                | TcKind::Enum
                | TcKind::Alias
                | TcKind::Except
                | TcKind::Value
                | TcKind::ValueBox
                | TcKind::Native
                | TcKind::AbstractInterface
                | TcKind::LocalInterface
                | TcKind::Component
                | TcKind::Home
                | TcKind::Event
        )
    }

    /// Kinds a recursive reference may point at.
    pub fn can_recurse(self) -> bool {
        matches!(
            self,
            TcKind::Struct | TcKind::Union | TcKind::Value | TcKind::Event | TcKind::Except
        )
    }

    /// Kinds allowed as a union discriminator.
    pub fn is_discriminator(self) -> bool {
        matches!(
            self,
            TcKind::Short
                | TcKind::Long
                | TcKind::UShort
                | TcKind::ULong
                | TcKind::LongLong
                | TcKind::ULongLong
                | TcKind::Char
                | TcKind::WChar
                | TcKind::Boolean
                | TcKind::Enum
        )
    }
}

impl std::fmt::Display for TcKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip() {
        for (i, k) in TcKind::ALL.iter().enumerate() {
            assert_eq!(k.value(), i as u32);
            assert_eq!(TcKind::from_u32(i as u32), Some(*k));
        }
        assert_eq!(TcKind::from_u32(37), None);
        assert_eq!(TcKind::from_u32(INDIRECTION_TAG), None);
        assert_eq!(TcKind::Struct.name(), "tk_struct");
        assert_eq!(TcKind::Event.value(), 36);
    }
}
