//! Decoding and encoding errors, each mapped to a CORBA system exception and minor code.

use thiserror::Error;

/// Vendor minor code set id used for Corbina's own minor codes.
///
/// Not assigned by the OMG: the OMG assigns VMCIDs to vendors, and minor codes under this id
/// only have meaning to Corbina. Standard OMG minor codes (VMCID `0x4f4d0000`) are used where
/// the specification defines one.
pub const CORBINA_VMCID: u32 = 0x4342_0000;

/// The OMG's own minor code set id.
pub const OMG_VMCID: u32 = 0x4f4d_0000;

/// Which system exception an error becomes when it crosses the ORB boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExceptionKind {
    /// `CORBA::MARSHAL`: the bytes do not form a valid value of the expected type.
    Marshal,
    /// `CORBA::DATA_CONVERSION`: a character cannot be represented in the transmission code set.
    DataConversion,
    /// `CORBA::BAD_PARAM`: the caller passed a value that cannot be marshalled (bound exceeded).
    BadParam,
    /// `CORBA::IMP_LIMIT`: a configured or implementation limit was reached.
    ImpLimit,
    /// `CORBA::CODESET_INCOMPATIBLE`: no usable code set for wide characters.
    CodesetIncompatible,
}

/// Why a CDR stream could not be read or written.
///
/// Offsets are positions in the stream being read, counted from the start of the reader's
/// buffer, so an error can be matched against a hex dump of the message.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
#[allow(missing_docs)] // Field names (offset, length, …) say what they hold.
pub enum MarshalError {
    /// Fewer bytes remain than a value needs.
    #[error("end of data at offset {offset}: {needed} bytes needed, {remaining} remain")]
    EndOfData {
        offset: usize,
        needed: usize,
        remaining: usize,
    },
    /// A length or count field claims more than the rest of the stream can hold.
    #[error(
        "length {length} at offset {offset} claims more than the {remaining} bytes that remain"
    )]
    LengthExceedsData {
        offset: usize,
        length: u64,
        remaining: usize,
    },
    /// A boolean octet other than 0 or 1.
    #[error("invalid boolean octet {value:#04x} at offset {offset}")]
    InvalidBoolean { offset: usize, value: u8 },
    /// A string whose last octet is not NUL.
    #[error("string at offset {offset} is not NUL-terminated")]
    StringNotTerminated { offset: usize },
    /// A string with a NUL before its end.
    #[error("string at offset {offset} contains an embedded NUL")]
    EmbeddedNul { offset: usize },
    /// Character data not valid in its code set (bad UTF-8 or UTF-16).
    #[error("invalid {code_set} data at offset {offset}")]
    InvalidCharData {
        offset: usize,
        code_set: &'static str,
    },
    /// A character that the transmission code set cannot carry.
    #[error("character U+{code_point:04X} cannot be represented in {code_set}")]
    NotRepresentable {
        code_point: u32,
        code_set: &'static str,
    },
    /// An enum value outside its enumeration.
    #[error(
        "enum value {value} at offset {offset} is out of range (the enum has {count} members)"
    )]
    InvalidEnum {
        offset: usize,
        value: u32,
        count: u32,
    },
    /// A union discriminator that selects no member and the union has no default.
    #[error("union discriminator {value} at offset {offset} selects no member")]
    InvalidDiscriminator { offset: usize, value: i64 },
    /// A bounded sequence or string longer than its bound.
    #[error("length {length} exceeds the bound {bound}")]
    BoundExceeded { length: u64, bound: u64 },
    /// Malformed packed-BCD `fixed` data.
    #[error("invalid fixed-point data at offset {offset}: {reason}")]
    InvalidFixed { offset: usize, reason: &'static str },
    /// An encapsulation's byte-order octet is neither 0 nor 1.
    #[error("invalid byte-order octet {value:#04x} at offset {offset}")]
    InvalidByteOrder { offset: usize, value: u8 },
    /// Encapsulations or recursive values nested deeper than the reader allows.
    #[error("nesting deeper than {limit} levels at offset {offset}")]
    NestingTooDeep { offset: usize, limit: u32 },
    /// A TypeCode or value indirection that points nowhere valid.
    #[error("invalid indirection {indirection} at offset {offset}")]
    InvalidIndirection { offset: usize, indirection: i32 },
    /// A wide character or string where the negotiated version or code set cannot carry one.
    #[error("wide characters cannot be sent: {reason}")]
    WCharUnavailable { reason: &'static str },
    /// Bytes left over after a value that must fill its container (an encapsulation, a body).
    #[error("{count} unexpected bytes left at offset {offset}")]
    TrailingData { offset: usize, count: usize },
    /// A message or value larger than a configured limit.
    #[error("size {size} exceeds the limit {limit}")]
    LimitExceeded { size: u64, limit: u64 },
    /// A value that is structurally valid CDR but meaningless for its type.
    #[error("invalid value at offset {offset}: {reason}")]
    InvalidValue { offset: usize, reason: &'static str },
}

impl MarshalError {
    /// The system exception this error is reported as.
    pub fn exception_kind(&self) -> ExceptionKind {
        match self {
            MarshalError::NotRepresentable { .. } => ExceptionKind::DataConversion,
            MarshalError::BoundExceeded { .. } => ExceptionKind::BadParam,
            MarshalError::LimitExceeded { .. } => ExceptionKind::ImpLimit,
            MarshalError::WCharUnavailable { .. } => ExceptionKind::CodesetIncompatible,
            _ => ExceptionKind::Marshal,
        }
    }

    /// The minor code carried with the system exception.
    ///
    /// Where the OMG defines a code it is used (`DATA_CONVERSION` minor 1: character does not
    /// map; `MARSHAL` minor 5 would be a value factory error and does not apply here); the rest
    /// are Corbina codes under [`CORBINA_VMCID`], stable across releases.
    pub fn minor(&self) -> u32 {
        let local = match self {
            MarshalError::NotRepresentable { .. } => return OMG_VMCID | 1,
            MarshalError::EndOfData { .. } => 1,
            MarshalError::LengthExceedsData { .. } => 2,
            MarshalError::InvalidBoolean { .. } => 3,
            MarshalError::StringNotTerminated { .. } => 4,
            MarshalError::EmbeddedNul { .. } => 5,
            MarshalError::InvalidCharData { .. } => 6,
            MarshalError::InvalidEnum { .. } => 7,
            MarshalError::InvalidDiscriminator { .. } => 8,
            MarshalError::BoundExceeded { .. } => 9,
            MarshalError::InvalidFixed { .. } => 10,
            MarshalError::InvalidByteOrder { .. } => 11,
            MarshalError::NestingTooDeep { .. } => 12,
            MarshalError::InvalidIndirection { .. } => 13,
            MarshalError::WCharUnavailable { .. } => 14,
            MarshalError::TrailingData { .. } => 15,
            MarshalError::LimitExceeded { .. } => 16,
            MarshalError::InvalidValue { .. } => 17,
        };
        CORBINA_VMCID | local
    }
}

/// Result alias for CDR operations.
pub type Result<T, E = MarshalError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_minors() {
        let e = MarshalError::EndOfData {
            offset: 3,
            needed: 4,
            remaining: 1,
        };
        assert_eq!(e.exception_kind(), ExceptionKind::Marshal);
        assert_eq!(e.minor(), CORBINA_VMCID | 1);
        assert_eq!(
            e.to_string(),
            "end of data at offset 3: 4 bytes needed, 1 remain"
        );
        let e = MarshalError::NotRepresentable {
            code_point: 0x20ac,
            code_set: "ISO-8859-1",
        };
        assert_eq!(e.exception_kind(), ExceptionKind::DataConversion);
        assert_eq!(e.minor(), OMG_VMCID | 1);
    }
}
