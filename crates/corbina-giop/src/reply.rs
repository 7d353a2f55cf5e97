//! The Reply header (`GIOP::ReplyHeader_1_0`, `_1_2`) and its status.

use corbina_cdr::{CdrReader, CdrWriter};

use crate::error::{GiopError, Result};
use crate::service_context::ServiceContextList;

/// `GIOP::ReplyStatusType_1_2`: what the Reply body holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplyStatus {
    /// NO_EXCEPTION: the result and out parameters.
    NoException,
    /// USER_EXCEPTION: the exception's repository id then its members.
    UserException,
    /// SYSTEM_EXCEPTION: a [`SystemExceptionBody`](crate::SystemExceptionBody).
    SystemException,
    /// LOCATION_FORWARD: an IOR to retry with.
    LocationForward,
    /// LOCATION_FORWARD_PERM (GIOP 1.2): an IOR to use from now on.
    LocationForwardPerm,
    /// NEEDS_ADDRESSING_MODE (GIOP 1.2): a short, the AddressingDisposition wanted.
    NeedsAddressingMode,
}

impl ReplyStatus {
    /// The wire value.
    pub fn value(self) -> u32 {
        self as u32
    }

    /// The status for a wire value.
    #[inline]
    pub fn from_value(v: u32) -> Result<ReplyStatus> {
        Ok(match v {
            0 => ReplyStatus::NoException,
            1 => ReplyStatus::UserException,
            2 => ReplyStatus::SystemException,
            3 => ReplyStatus::LocationForward,
            4 => ReplyStatus::LocationForwardPerm,
            5 => ReplyStatus::NeedsAddressingMode,
            _ => return Err(GiopError::UnknownReplyStatus(v)),
        })
    }

    /// The IDL name (`NO_EXCEPTION`).
    pub fn name(self) -> &'static str {
        match self {
            ReplyStatus::NoException => "NO_EXCEPTION",
            ReplyStatus::UserException => "USER_EXCEPTION",
            ReplyStatus::SystemException => "SYSTEM_EXCEPTION",
            ReplyStatus::LocationForward => "LOCATION_FORWARD",
            ReplyStatus::LocationForwardPerm => "LOCATION_FORWARD_PERM",
            ReplyStatus::NeedsAddressingMode => "NEEDS_ADDRESSING_MODE",
        }
    }
}

/// A Reply header, whatever the GIOP version (the field order differs at 1.2).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReplyHeader {
    /// The Request's id.
    pub request_id: u32,
    /// What the body holds.
    pub reply_status: ReplyStatus,
    /// Service contexts.
    pub service_context: ServiceContextList,
}

impl ReplyHeader {
    /// A reply with no contexts.
    pub fn new(request_id: u32, reply_status: ReplyStatus) -> ReplyHeader {
        ReplyHeader {
            request_id,
            reply_status,
            service_context: ServiceContextList::new(),
        }
    }

    /// Reads the header that follows the 12-byte GIOP header.
    #[inline]
    pub fn decode(r: &mut CdrReader<'_>, minor: u8) -> Result<ReplyHeader> {
        if minor >= 2 {
            let request_id = r.read_ulong()?;
            let reply_status = ReplyStatus::from_value(r.read_ulong()?)?;
            let service_context = ServiceContextList::decode(r)?;
            return Ok(ReplyHeader {
                request_id,
                reply_status,
                service_context,
            });
        }
        let service_context = ServiceContextList::decode(r)?;
        let request_id = r.read_ulong()?;
        let reply_status = ReplyStatus::from_value(r.read_ulong()?)?;
        Ok(ReplyHeader {
            request_id,
            reply_status,
            service_context,
        })
    }

    /// Writes the header for GIOP 1.`minor`.
    pub fn encode(&self, w: &mut CdrWriter<'_>, minor: u8) -> Result<()> {
        if minor >= 2 {
            w.write_ulong(self.request_id);
            w.write_ulong(self.reply_status.value());
            if self.service_context.0.is_empty() {
                // Almost every reply: the empty list's count alone.
                w.write_ulong(0);
                return Ok(());
            }
            return self.service_context.encode(w);
        }
        self.service_context.encode(w)?;
        w.write_ulong(self.request_id);
        w.write_ulong(self.reply_status.value());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::Version;
    use crate::message::{GiopMessage, MessageWriter};
    use corbina_cdr::{ByteOrder, CodeSets};

    #[test]
    fn layouts() {
        let h = ReplyHeader::new(4, ReplyStatus::NoException);
        let b = MessageWriter::reply(Version::V1_1, ByteOrder::Big, CodeSets::DEFAULT, &h)
            .unwrap()
            .finish_bytes()
            .unwrap();
        assert_eq!(
            hex::encode(&b),
            "47494f50010100010000000c000000000000000400000000"
        );
        let mut mw =
            MessageWriter::reply(Version::V1_2, ByteOrder::Little, CodeSets::DEFAULT, &h).unwrap();
        mw.body().write_ulonglong(80000);
        let b = mw.finish_bytes().unwrap();
        assert_eq!(
            hex::encode(&b),
            "47494f50010201011400000004000000000000000000000080380100000000 00".replace(' ', "")
        );
        let m = crate::Message::from_bytes(b).unwrap();
        let GiopMessage::Reply { header, body } = m.decode().unwrap() else {
            panic!()
        };
        assert_eq!(header, h);
        assert_eq!(body.reader(CodeSets::DEFAULT).read_ulonglong(), Ok(80000));
    }

    #[test]
    fn statuses() {
        for v in 0..6 {
            assert_eq!(ReplyStatus::from_value(v).unwrap().value(), v);
        }
        assert_eq!(
            ReplyStatus::from_value(6),
            Err(GiopError::UnknownReplyStatus(6))
        );
        assert_eq!(
            ReplyStatus::LocationForwardPerm.name(),
            "LOCATION_FORWARD_PERM"
        );
    }
}
