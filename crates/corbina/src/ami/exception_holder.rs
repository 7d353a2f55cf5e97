//! `Messaging::ExceptionHolder`: how a reply handler's `<op>_excep` receives the exception
//! a `sendc_` call ended with. In the specification it is a valuetype; it is marshalled here
//! by hand, on its own (one value, no sharing, no chunking), until general valuetype support
//! exists.

use crate::cdr::{ByteOrder, CdrContext, CdrDecode, CdrEncode, CdrReader, CdrWriter, MarshalError};
use crate::giop::SystemExceptionBody;
use crate::{CompletionStatus, SystemException};

/// The valuetype's repository id.
pub const EXCEPTION_HOLDER_ID: &str = "IDL:omg.org/Messaging/ExceptionHolder:1.0";

/// Value tag: a value with one repository id, no codebase, not chunked.
const TAG_SINGLE_ID: u32 = 0x7fff_ff02;

/// An exception raised by an asynchronously invoked operation, as it was marshalled:
/// [`ExceptionHolder::raise_exception`] gives it back as the operation's error type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ExceptionHolder {
    /// Whether it holds a system exception (else one of the operation's user exceptions).
    pub is_system_exception: bool,
    /// The byte order of `marshaled_exception`: `true` for little endian (the GIOP flag).
    pub byte_order: bool,
    /// The exception as in a reply body: repository id, then members (for a system
    /// exception, minor code and completion status), CDR aligned from its first byte.
    pub marshaled_exception: Vec<u8>,
}

/// An operation's error type as an [`ExceptionHolder`] carries it: [`SystemException`] for
/// operations without a `raises` clause, the generated `<Op>Error` enum otherwise (it
/// implements this when its interface is generated with AMI).
pub trait RaisedException: From<SystemException> {
    /// The system exception, if it is one.
    fn system_exception(&self) -> Option<&SystemException>;

    /// Writes a user exception (repository id and members); not called for system ones.
    fn encode_user_exception<'a>(&'a self, w: &mut CdrWriter<'a>) -> crate::cdr::Result<()>;

    /// Reads the user exception `repository_id` (already read); `None` if the operation
    /// does not raise it.
    fn decode_user_exception(
        repository_id: &str,
        r: &mut CdrReader<'_>,
    ) -> crate::cdr::Result<Option<Self>>;
}

impl RaisedException for SystemException {
    fn system_exception(&self) -> Option<&SystemException> {
        Some(self)
    }

    fn encode_user_exception<'a>(&'a self, _w: &mut CdrWriter<'a>) -> crate::cdr::Result<()> {
        Ok(())
    }

    fn decode_user_exception(
        _repository_id: &str,
        _r: &mut CdrReader<'_>,
    ) -> crate::cdr::Result<Option<Self>> {
        Ok(None)
    }
}

impl ExceptionHolder {
    /// Holds `e`, marshalled in native byte order. A user exception that cannot be
    /// marshalled (a string not representable in the code set) is held as the MARSHAL it
    /// would have been on the wire.
    pub fn new<E: RaisedException>(e: &E) -> ExceptionHolder {
        let mut w = CdrWriter::new(CdrContext::default());
        let written = match e.system_exception() {
            Some(s) => s
                .to_body()
                .encode(&mut w)
                .map(|()| true)
                .map_err(SystemException::from),
            None => e
                .encode_user_exception(&mut w)
                .map(|()| false)
                .map_err(SystemException::from),
        };
        match written {
            Ok(is_system_exception) => ExceptionHolder {
                is_system_exception,
                byte_order: ByteOrder::NATIVE == ByteOrder::Little,
                marshaled_exception: w.into_bytes(),
            },
            Err(m) => ExceptionHolder::new(&m.completed(CompletionStatus::Yes)),
        }
    }

    /// The held exception as the operation's error type `E`. Bytes that do not decode give
    /// MARSHAL; a user exception the operation does not raise gives UNKNOWN, as for a
    /// synchronous call.
    pub fn raise_exception<E: RaisedException>(&self) -> E {
        let order = ByteOrder::from_flag(u8::from(self.byte_order));
        let mut r = CdrReader::new(&self.marshaled_exception, order, CdrContext::default());
        let decoded = if self.is_system_exception {
            SystemExceptionBody::decode(&mut r)
                .map(|b| Some(E::from(b.to_exception())))
                .map_err(SystemException::from)
        } else {
            r.read_string()
                .and_then(|id| E::decode_user_exception(&id, &mut r))
                .map_err(SystemException::from)
        };
        match decoded {
            Ok(Some(e)) => e,
            Ok(None) => E::from(crate::exception::unknown_user_exception()),
            Err(m) => E::from(m.completed(CompletionStatus::Yes)),
        }
    }
}

impl CdrEncode for ExceptionHolder {
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> crate::cdr::Result<()> {
        w.write_ulong(TAG_SINGLE_ID);
        w.write_string(EXCEPTION_HOLDER_ID)?;
        w.write_boolean(self.is_system_exception);
        w.write_boolean(self.byte_order);
        w.write_octet_seq(&self.marshaled_exception)
    }
}

impl<'a> CdrDecode<'a> for ExceptionHolder {
    const MIN_WIRE_SIZE: usize = 4;

    fn decode(r: &mut CdrReader<'a>) -> crate::cdr::Result<Self> {
        let offset = r.position();
        let bad = |reason| MarshalError::InvalidValue { offset, reason };
        let tag = r.read_ulong()?;
        // 0x7fffff00..=0x7fffffff are value tags; 0 (null) and indirections are not an
        // ExceptionHolder a reply handler can be given.
        if tag & 0xffff_ff00 != 0x7fff_ff00 {
            return Err(bad(
                "ExceptionHolder: not a value tag (null or indirection)",
            ));
        }
        if tag & 0x08 != 0 {
            return Err(bad("ExceptionHolder: chunked encoding is not supported"));
        }
        if tag & 0x01 != 0 {
            r.read_string()?; // codebase URL: nothing to load, the type is known
        }
        match tag & 0x06 {
            0 => {}
            2 => check_id(&r.read_string()?, offset)?,
            6 => {
                let n = r.read_length(4)?;
                if n == 0 {
                    return Err(bad("ExceptionHolder: empty repository id list"));
                }
                check_id(&r.read_string()?, offset)?;
                for _ in 1..n {
                    r.read_string()?;
                }
            }
            _ => return Err(bad("ExceptionHolder: invalid type information bits")),
        }
        Ok(ExceptionHolder {
            is_system_exception: r.read_boolean()?,
            byte_order: r.read_boolean()?,
            marshaled_exception: r.read_octet_seq()?.to_vec(),
        })
    }
}

fn check_id(id: &str, offset: usize) -> crate::cdr::Result<()> {
    if id == EXCEPTION_HOLDER_ID {
        Ok(())
    } else {
        Err(MarshalError::InvalidValue {
            offset,
            reason: "value is not a Messaging::ExceptionHolder",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemExceptionKind;

    #[test]
    fn system_exception_round_trips_through_the_value_encoding() {
        let e = SystemException::new(SystemExceptionKind::Transient, 7)
            .completed(CompletionStatus::Maybe);
        let h = ExceptionHolder::new(&e);
        assert!(h.is_system_exception);
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::default());
        h.encode(&mut w).unwrap();
        let bytes = w.into_bytes();
        assert_eq!(&bytes[..4], &[0x7f, 0xff, 0xff, 0x02]);
        let mut r = CdrReader::new(&bytes, ByteOrder::Big, CdrContext::default());
        let back = ExceptionHolder::decode(&mut r).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.raise_exception::<SystemException>(), e);
    }

    #[test]
    fn hostile_values_are_marshal_errors() {
        for bytes in [
            vec![0, 0, 0, 0],             // null
            vec![0xff, 0xff, 0xff, 0xff], // indirection
            vec![0x7f, 0xff, 0xff, 0x0a], // chunked
            vec![
                0x7f, 0xff, 0xff, 0x02, 0, 0, 0, 5, b'I', b'D', b'L', b':', 0,
            ], // wrong id
            vec![0x7f, 0xff, 0xff, 0x00, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff], // huge sequence
        ] {
            let mut r = CdrReader::new(&bytes, ByteOrder::Big, CdrContext::default());
            assert!(ExceptionHolder::decode(&mut r).is_err(), "{bytes:?}");
        }
    }

    #[test]
    fn undecodable_bytes_raise_marshal_and_unknown_ids_raise_unknown() {
        let h = ExceptionHolder {
            is_system_exception: true,
            byte_order: true,
            marshaled_exception: vec![1, 2],
        };
        assert_eq!(
            h.raise_exception::<SystemException>().kind,
            SystemExceptionKind::Marshal
        );
        let mut w = CdrWriter::new(CdrContext::default());
        w.write_string("IDL:Other:1.0").unwrap();
        let h = ExceptionHolder {
            is_system_exception: false,
            byte_order: ByteOrder::NATIVE == ByteOrder::Little,
            marshaled_exception: w.into_bytes(),
        };
        assert_eq!(
            h.raise_exception::<SystemException>().kind,
            SystemExceptionKind::Unknown
        );
    }
}
