//! LocateRequest and LocateReply headers: asking a server whether it has an object.

use corbina_cdr::{CdrReader, CdrWriter};

use crate::error::{GiopError, Result};
use crate::object_key::ObjectKey;
use crate::target_address::TargetAddress;

/// A LocateRequest header (`GIOP::LocateRequestHeader_1_0`, `_1_2`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LocateRequestHeader {
    /// Matches the LocateReply.
    pub request_id: u32,
    /// The object asked about (always by key before GIOP 1.2).
    pub target: TargetAddress,
}

impl LocateRequestHeader {
    /// Reads the header after the 12-byte GIOP header.
    pub fn decode(r: &mut CdrReader<'_>, minor: u8) -> Result<LocateRequestHeader> {
        let request_id = r.read_ulong()?;
        let target = if minor >= 2 {
            TargetAddress::decode(r)?
        } else {
            TargetAddress::Key(ObjectKey(r.read_octet_seq()?.to_vec()))
        };
        Ok(LocateRequestHeader { request_id, target })
    }

    /// Writes the header for GIOP 1.`minor`.
    pub fn encode(&self, w: &mut CdrWriter<'_>, minor: u8) -> Result<()> {
        w.write_ulong(self.request_id);
        if minor >= 2 {
            return self.target.encode(w);
        }
        let TargetAddress::Key(key) = &self.target else {
            return Err(GiopError::KeyAddressRequired { minor });
        };
        w.write_length(key.0.len())?;
        w.write_bytes(&key.0);
        Ok(())
    }
}

/// `GIOP::LocateStatusType_1_2`: the answer, and what the LocateReply body holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LocateStatus {
    /// UNKNOWN_OBJECT: no body.
    UnknownObject,
    /// OBJECT_HERE: no body.
    ObjectHere,
    /// OBJECT_FORWARD: an IOR.
    ObjectForward,
    /// OBJECT_FORWARD_PERM (GIOP 1.2): an IOR.
    ObjectForwardPerm,
    /// LOC_SYSTEM_EXCEPTION (GIOP 1.2): a system exception body.
    LocSystemException,
    /// LOC_NEEDS_ADDRESSING_MODE (GIOP 1.2): a short AddressingDisposition.
    LocNeedsAddressingMode,
}

impl LocateStatus {
    /// The wire value.
    pub fn value(self) -> u32 {
        self as u32
    }

    /// The status for a wire value.
    pub fn from_value(v: u32) -> Result<LocateStatus> {
        Ok(match v {
            0 => LocateStatus::UnknownObject,
            1 => LocateStatus::ObjectHere,
            2 => LocateStatus::ObjectForward,
            3 => LocateStatus::ObjectForwardPerm,
            4 => LocateStatus::LocSystemException,
            5 => LocateStatus::LocNeedsAddressingMode,
            _ => return Err(GiopError::UnknownLocateStatus(v)),
        })
    }

    /// The IDL name (`OBJECT_HERE`).
    pub fn name(self) -> &'static str {
        match self {
            LocateStatus::UnknownObject => "UNKNOWN_OBJECT",
            LocateStatus::ObjectHere => "OBJECT_HERE",
            LocateStatus::ObjectForward => "OBJECT_FORWARD",
            LocateStatus::ObjectForwardPerm => "OBJECT_FORWARD_PERM",
            LocateStatus::LocSystemException => "LOC_SYSTEM_EXCEPTION",
            LocateStatus::LocNeedsAddressingMode => "LOC_NEEDS_ADDRESSING_MODE",
        }
    }
}

/// A LocateReply header (the same two fields in every version).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LocateReplyHeader {
    /// The LocateRequest's id.
    pub request_id: u32,
    /// The answer.
    pub locate_status: LocateStatus,
}

impl LocateReplyHeader {
    /// Reads the header after the 12-byte GIOP header.
    pub fn decode(r: &mut CdrReader<'_>) -> Result<LocateReplyHeader> {
        let request_id = r.read_ulong()?;
        let locate_status = LocateStatus::from_value(r.read_ulong()?)?;
        Ok(LocateReplyHeader {
            request_id,
            locate_status,
        })
    }

    /// Writes the header.
    pub fn encode(&self, w: &mut CdrWriter<'_>) -> Result<()> {
        w.write_ulong(self.request_id);
        w.write_ulong(self.locate_status.value());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::Version;
    use crate::message::{GiopMessage, MessageWriter};
    use crate::{Ior, Message};
    use corbina_cdr::{ByteOrder, CodeSets};

    #[test]
    fn locate_request_versions() {
        let h = LocateRequestHeader {
            request_id: 2,
            target: TargetAddress::Key(ObjectKey::from("ab")),
        };
        let b = MessageWriter::locate_request(Version::V1_0, ByteOrder::Big, &h)
            .unwrap()
            .finish_bytes()
            .unwrap();
        assert_eq!(
            hex::encode(&b),
            "47494f50010000030000000a00000002000000026162"
        );
        let b = MessageWriter::locate_request(Version::V1_2, ByteOrder::Little, &h)
            .unwrap()
            .finish_bytes()
            .unwrap();
        assert_eq!(
            hex::encode(&b[12..]),
            "02000000000000000200000061 62".replace(' ', "")
        );
        let GiopMessage::LocateRequest(back) = Message::from_bytes(b).unwrap().decode().unwrap()
        else {
            panic!()
        };
        assert_eq!(back, h);
    }

    #[test]
    fn locate_reply_with_forward() {
        let h = LocateReplyHeader {
            request_id: 9,
            locate_status: LocateStatus::ObjectForward,
        };
        let ior = Ior::nil();
        let mut mw =
            MessageWriter::locate_reply(Version::V1_2, ByteOrder::Big, CodeSets::DEFAULT, &h)
                .unwrap();
        ior.encode(mw.body()).unwrap();
        let b = mw.finish_bytes().unwrap();
        assert_eq!(
            hex::encode(&b[12..]),
            "0000000900000002000000010000000000000000"
        );
        let m = Message::from_bytes(b).unwrap();
        let GiopMessage::LocateReply { header, body } = m.decode().unwrap() else {
            panic!()
        };
        assert_eq!(header, h);
        let mut r = body.reader(CodeSets::DEFAULT);
        assert!(Ior::decode(&mut r).unwrap().is_nil());
        assert_eq!(
            LocateStatus::from_value(6),
            Err(GiopError::UnknownLocateStatus(6))
        );
    }
}
