//! `IOP::Codec`: `Any` values to and from CDR encapsulations (the bytes of a service
//! context or a tagged component), made by `IOP::CodecFactory`.

use crate::any::Any;
use crate::cdr::{ByteOrder, CdrReader, CdrWriter, CodeSets, MarshalError};
use crate::giop::Version;
use crate::TypeCode;

/// `IOP::ENCODING_CDR_ENCAPS`: the one encoding format defined.
pub const ENCODING_CDR_ENCAPS: i16 = 0;

/// `IOP::Encoding`: a format and the GIOP version whose CDR rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Encoding {
    /// [`ENCODING_CDR_ENCAPS`].
    pub format: i16,
    /// 1.
    pub major_version: u8,
    /// 0, 1 or 2.
    pub minor_version: u8,
}

impl Encoding {
    /// CDR encapsulation, GIOP 1.2 rules.
    pub const CDR_1_2: Encoding = Encoding {
        format: ENCODING_CDR_ENCAPS,
        major_version: 1,
        minor_version: 2,
    };
}

/// Why a codec could not be made or could not do its work.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CodecError {
    /// `CodecFactory::UnknownEncoding`.
    #[error("unknown encoding {0:?}")]
    UnknownEncoding(Encoding),
    /// `Codec::InvalidTypeForEncoding`: the value cannot be encoded.
    #[error("the value cannot be encoded: {0}")]
    InvalidTypeForEncoding(MarshalError),
    /// `Codec::FormatMismatch`: the bytes are not an encapsulation of that type.
    #[error("the bytes are not a valid encapsulation: {0}")]
    FormatMismatch(MarshalError),
}

/// `IOP::CodecFactory` (`resolve_initial_references("CodecFactory")`, or
/// `ORBInitInfo::codec_factory`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CodecFactory;

impl CodecFactory {
    /// A codec for `encoding`: CDR encapsulation at GIOP 1.0, 1.1 or 1.2.
    pub fn create_codec(&self, encoding: Encoding) -> Result<Codec, CodecError> {
        if encoding.format != ENCODING_CDR_ENCAPS || encoding.major_version != 1 {
            return Err(CodecError::UnknownEncoding(encoding));
        }
        let version = Version::new(1, encoding.minor_version)
            .map_err(|_| CodecError::UnknownEncoding(encoding))?;
        Ok(Codec { version })
    }
}

/// `IOP::Codec`: encodes in this process's byte order, decodes either.
#[derive(Debug, Clone, Copy)]
pub struct Codec {
    version: Version,
}

impl Codec {
    fn writer(&self) -> CdrWriter<'static> {
        let order = ByteOrder::NATIVE;
        let mut w = CdrWriter::with_byte_order(order, self.version.context(CodeSets::UNICODE));
        w.set_splice_threshold(usize::MAX);
        w.write_octet(order.flag());
        w
    }

    fn reader<'d>(&self, data: &'d [u8]) -> Result<CdrReader<'d>, CodecError> {
        let order = match data.first() {
            Some(0) => ByteOrder::Big,
            Some(1) => ByteOrder::Little,
            Some(&value) => {
                return Err(CodecError::FormatMismatch(MarshalError::InvalidByteOrder {
                    offset: 0,
                    value,
                }))
            }
            None => {
                return Err(CodecError::FormatMismatch(MarshalError::EndOfData {
                    offset: 0,
                    needed: 1,
                    remaining: 0,
                }))
            }
        };
        let ctx = self.version.context(CodeSets::UNICODE);
        Ok(CdrReader::new(data, order, ctx).starting_at(1))
    }

    /// `encode`: the `Any` with its TypeCode.
    pub fn encode(&self, value: &Any) -> Result<Vec<u8>, CodecError> {
        let mut w = self.writer();
        value
            .write(&mut w)
            .map_err(CodecError::InvalidTypeForEncoding)?;
        Ok(w.into_bytes())
    }

    /// `decode`: an `Any` written by [`encode`](Self::encode) (or another ORB's).
    pub fn decode(&self, data: &[u8]) -> Result<Any, CodecError> {
        let mut r = self.reader(data)?;
        let any = Any::read(&mut r).map_err(CodecError::FormatMismatch)?;
        r.expect_end().map_err(CodecError::FormatMismatch)?;
        Ok(any)
    }

    /// `encode_value`: the value alone, without its TypeCode.
    pub fn encode_value(&self, value: &Any) -> Result<Vec<u8>, CodecError> {
        let mut w = self.writer();
        value
            .write_value(&mut w)
            .map_err(CodecError::InvalidTypeForEncoding)?;
        Ok(w.into_bytes())
    }

    /// `decode_value`: a value of type `tc`.
    pub fn decode_value(&self, data: &[u8], tc: &TypeCode) -> Result<Any, CodecError> {
        let mut r = self.reader(data)?;
        let any = Any::read_value(tc.clone(), &mut r).map_err(CodecError::FormatMismatch)?;
        r.expect_end().map_err(CodecError::FormatMismatch)?;
        Ok(any)
    }
}
