//! The 12-byte GIOP message header common to every message.

use corbina_cdr::{ByteOrder, CdrContext, CdrWriter};

use crate::error::{GiopError, Result};

/// Length of the GIOP message header.
pub const HEADER_LEN: usize = 12;
/// The four octets every GIOP message starts with.
pub const MAGIC: [u8; 4] = *b"GIOP";
/// Flag bit 1 (GIOP 1.1+): more fragments follow this message.
pub const FLAG_MORE_FRAGMENTS: u8 = 0x02;

/// A GIOP protocol version (`GIOP::Version`). Only 1.0, 1.1 and 1.2 are supported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version {
    /// Major version (always 1).
    pub major: u8,
    /// Minor version (0, 1 or 2).
    pub minor: u8,
}

impl Version {
    /// GIOP 1.0.
    pub const V1_0: Version = Version { major: 1, minor: 0 };
    /// GIOP 1.1: fragments, wide characters, code set negotiation.
    pub const V1_1: Version = Version { major: 1, minor: 1 };
    /// GIOP 1.2: TargetAddress, fragment request ids, 8-aligned bodies.
    pub const V1_2: Version = Version { major: 1, minor: 2 };

    /// The version if it is one this crate speaks.
    #[inline]
    pub fn new(major: u8, minor: u8) -> Result<Version> {
        if major == 1 && minor <= 2 {
            Ok(Version { major, minor })
        } else {
            Err(GiopError::UnsupportedVersion { major, minor })
        }
    }

    /// A CDR context for streams of this version with the given code sets.
    #[inline]
    pub fn context(self, code_sets: corbina_cdr::CodeSets) -> CdrContext {
        CdrContext::GIOP_1_2
            .with_giop_minor(self.minor)
            .with_code_sets(code_sets)
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The GIOP message type octet (`GIOP::MsgType_1_1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MsgType {
    /// An operation invocation.
    Request = 0,
    /// The answer to a Request.
    Reply = 1,
    /// The client no longer wants the reply.
    CancelRequest = 2,
    /// Does the server have this object?
    LocateRequest = 3,
    /// The answer to a LocateRequest.
    LocateReply = 4,
    /// The server is closing the connection (header only).
    CloseConnection = 5,
    /// The peer sent something uninterpretable (header only).
    MessageError = 6,
    /// The continuation of a fragmented message (GIOP 1.1+).
    Fragment = 7,
}

impl MsgType {
    /// The type for an octet, if it exists in GIOP 1.`minor`.
    pub fn from_octet(octet: u8, minor: u8) -> Result<MsgType> {
        Ok(match octet {
            0 => MsgType::Request,
            1 => MsgType::Reply,
            2 => MsgType::CancelRequest,
            3 => MsgType::LocateRequest,
            4 => MsgType::LocateReply,
            5 => MsgType::CloseConnection,
            6 => MsgType::MessageError,
            7 if minor >= 1 => MsgType::Fragment,
            _ => {
                return Err(GiopError::UnknownMessageType {
                    msg_type: octet,
                    minor,
                })
            }
        })
    }

    /// Whether GIOP 1.`minor` lets this type carry the more-fragments flag.
    pub fn can_fragment(self, minor: u8) -> bool {
        match self {
            MsgType::Request | MsgType::Reply | MsgType::Fragment => minor >= 1,
            MsgType::LocateRequest | MsgType::LocateReply => minor >= 2,
            _ => false,
        }
    }
}

/// The GIOP message header (`GIOP::MessageHeader_1_1`, and 1.0's with a byte-order octet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MessageHeader {
    /// GIOP version.
    pub version: Version,
    /// Byte order of the rest of the message.
    pub byte_order: ByteOrder,
    /// Flag bit 1: more fragments follow (always false at 1.0).
    pub more_fragments: bool,
    /// What the message is.
    pub msg_type: MsgType,
    /// Bytes after the 12-byte header.
    pub message_size: u32,
}

impl MessageHeader {
    /// A header for an unfragmented message; `message_size` is patched when it is finished.
    #[inline]
    pub fn new(version: Version, byte_order: ByteOrder, msg_type: MsgType) -> MessageHeader {
        MessageHeader {
            version,
            byte_order,
            more_fragments: false,
            msg_type,
            message_size: 0,
        }
    }

    /// Decodes the first 12 bytes of a message. Unknown flag bits are ignored.
    #[inline]
    pub fn decode(bytes: &[u8; HEADER_LEN]) -> Result<MessageHeader> {
        let [m0, m1, m2, m3, major, minor, flags, msg_type, s0, s1, s2, s3] = *bytes;
        if [m0, m1, m2, m3] != MAGIC {
            return Err(GiopError::BadMagic([m0, m1, m2, m3]));
        }
        let version = Version::new(major, minor)?;
        let msg_type = MsgType::from_octet(msg_type, minor)?;
        let byte_order = ByteOrder::from_flag(flags);
        // At 1.0 the octet is a boolean byte order; bit 1 has no meaning there.
        let more_fragments = minor >= 1 && flags & FLAG_MORE_FRAGMENTS != 0;
        let size = [s0, s1, s2, s3];
        let message_size = match byte_order {
            ByteOrder::Big => u32::from_be_bytes(size),
            ByteOrder::Little => u32::from_le_bytes(size),
        };
        Ok(MessageHeader {
            version,
            byte_order,
            more_fragments,
            msg_type,
            message_size,
        })
    }

    /// Decodes the header at the start of `bytes` (at least 12 of them).
    #[inline]
    pub fn decode_prefix(bytes: &[u8]) -> Result<MessageHeader> {
        match bytes.first_chunk::<HEADER_LEN>() {
            Some(h) => MessageHeader::decode(h),
            None => Err(GiopError::Truncated {
                needed: HEADER_LEN,
                available: bytes.len(),
            }),
        }
    }

    /// The flags octet (the byte-order octet at GIOP 1.0).
    #[inline]
    pub fn flags(&self) -> u8 {
        let more = if self.more_fragments && self.version.minor >= 1 {
            FLAG_MORE_FRAGMENTS
        } else {
            0
        };
        self.byte_order.flag() | more
    }

    /// The 12 header bytes.
    #[inline]
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let size = match self.byte_order {
            ByteOrder::Big => self.message_size.to_be_bytes(),
            ByteOrder::Little => self.message_size.to_le_bytes(),
        };
        let [s0, s1, s2, s3] = size;
        [
            MAGIC[0],
            MAGIC[1],
            MAGIC[2],
            MAGIC[3],
            self.version.major,
            self.version.minor,
            self.flags(),
            self.msg_type as u8,
            s0,
            s1,
            s2,
            s3,
        ]
    }

    /// Writes the header into a writer at stream offset 0 (the start of a message).
    #[inline]
    pub fn write(&self, w: &mut CdrWriter<'_>) {
        w.write_bytes(&self.encode());
    }

    /// Bytes that follow the header: what the runtime reads next into its own buffer.
    #[inline]
    pub fn body_len(&self) -> usize {
        self.message_size as usize
    }

    /// Total length of the message, header included.
    #[inline]
    pub fn total_len(&self) -> usize {
        HEADER_LEN + self.body_len()
    }

    /// Fails if the message is larger than `max_message_size` (body bytes) or carries the
    /// more-fragments flag where its type cannot.
    #[inline]
    pub fn check(&self, max_message_size: u32) -> Result<()> {
        if self.message_size > max_message_size {
            return Err(GiopError::MessageTooLarge {
                size: self.message_size.into(),
                limit: max_message_size.into(),
            });
        }
        if self.more_fragments && !self.msg_type.can_fragment(self.version.minor) {
            return Err(GiopError::NotFragmentable {
                msg_type: self.msg_type,
                minor: self.version.minor,
            });
        }
        Ok(())
    }
}

/// Sets `message_size` in a finished message's first 12 bytes to `len - 12`.
#[inline]
pub(crate) fn patch_size(w: &mut CdrWriter<'_>) -> Result<()> {
    let size = w.len().saturating_sub(HEADER_LEN);
    let size = u32::try_from(size).map_err(|_| GiopError::MessageTooLarge {
        size: size as u64,
        limit: u32::MAX.into(),
    })?;
    w.patch_ulong(8, size);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_layout() {
        let h = MessageHeader {
            version: Version::V1_2,
            byte_order: ByteOrder::Little,
            more_fragments: true,
            msg_type: MsgType::Reply,
            message_size: 0x0102,
        };
        let b = h.encode();
        assert_eq!(b, [b'G', b'I', b'O', b'P', 1, 2, 3, 1, 2, 1, 0, 0]);
        assert_eq!(MessageHeader::decode(&b).unwrap(), h);
        let h0 = MessageHeader::new(Version::V1_0, ByteOrder::Big, MsgType::CloseConnection);
        assert_eq!(
            h0.encode(),
            [b'G', b'I', b'O', b'P', 1, 0, 0, 5, 0, 0, 0, 0]
        );
        assert_eq!(h.body_len(), 0x102);
        assert_eq!(h.total_len(), 0x102 + 12);
    }

    #[test]
    fn rejects_bad_headers() {
        let mut b = *b"GIOP\x01\x02\x00\x00\x00\x00\x00\x00";
        b[0] = b'X';
        assert!(matches!(
            MessageHeader::decode(&b),
            Err(GiopError::BadMagic(_))
        ));
        let b = *b"GIOP\x01\x03\x00\x00\x00\x00\x00\x00";
        assert_eq!(
            MessageHeader::decode(&b),
            Err(GiopError::UnsupportedVersion { major: 1, minor: 3 })
        );
        let b = *b"GIOP\x01\x00\x00\x07\x00\x00\x00\x00";
        assert!(matches!(
            MessageHeader::decode(&b),
            Err(GiopError::UnknownMessageType { .. })
        ));
        let b = *b"GIOP\x01\x02\x00\x08\x00\x00\x00\x00";
        assert!(matches!(
            MessageHeader::decode(&b),
            Err(GiopError::UnknownMessageType { .. })
        ));
        assert!(matches!(
            MessageHeader::decode_prefix(b"GIOP"),
            Err(GiopError::Truncated {
                needed: 12,
                available: 4
            })
        ));
        let big = *b"GIOP\x01\x02\x00\x00\x00\x10\x00\x00";
        let h = MessageHeader::decode(&big).unwrap();
        assert!(matches!(
            h.check(1000),
            Err(GiopError::MessageTooLarge { .. })
        ));
        let frag_close = *b"GIOP\x01\x02\x02\x05\x00\x00\x00\x00";
        let h = MessageHeader::decode(&frag_close).unwrap();
        assert!(matches!(
            h.check(1000),
            Err(GiopError::NotFragmentable { .. })
        ));
    }

    #[test]
    fn giop_1_0_has_no_fragment_flag() {
        let b = *b"GIOP\x01\x00\x03\x00\x00\x00\x00\x00";
        let h = MessageHeader::decode(&b).unwrap();
        assert_eq!(h.byte_order, ByteOrder::Little);
        assert!(!h.more_fragments);
    }
}
