//! The Fragment message header: nothing at GIOP 1.1, the request id at 1.2.

use corbina_cdr::{ByteOrder, CdrReader, CdrWriter};

use crate::error::Result;
use crate::header::{MessageHeader, MsgType, Version, HEADER_LEN};

/// Bytes before a Fragment's data: 12 at GIOP 1.1, 16 at 1.2.
pub fn fragment_header_len(minor: u8) -> usize {
    if minor >= 2 {
        HEADER_LEN + 4
    } else {
        HEADER_LEN
    }
}

/// `GIOP::FragmentHeader_1_2` (and the empty 1.1 one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FragmentHeader {
    /// The fragmented message's request id (GIOP 1.2); `None` at 1.1.
    pub request_id: Option<u32>,
}

impl FragmentHeader {
    /// Reads the header after the 12-byte GIOP header.
    pub fn decode(r: &mut CdrReader<'_>, minor: u8) -> Result<FragmentHeader> {
        let request_id = if minor >= 2 {
            Some(r.read_ulong()?)
        } else {
            None
        };
        Ok(FragmentHeader { request_id })
    }

    /// Writes it (nothing at 1.1).
    pub fn encode(&self, w: &mut CdrWriter<'_>) -> Result<()> {
        if let Some(id) = self.request_id {
            w.write_ulong(id);
        }
        Ok(())
    }

    /// The whole fragment prefix (GIOP header plus request id) for `data_len` data bytes.
    pub fn prefix(
        &self,
        version: Version,
        order: ByteOrder,
        more_fragments: bool,
        data_len: usize,
    ) -> ([u8; 16], usize) {
        let hlen = fragment_header_len(version.minor);
        let header = MessageHeader {
            version,
            byte_order: order,
            more_fragments,
            msg_type: MsgType::Fragment,
            message_size: (hlen - HEADER_LEN + data_len) as u32,
        };
        let mut out = [0u8; 16];
        out[..HEADER_LEN].copy_from_slice(&header.encode());
        if version.minor >= 2 {
            let id = self.request_id.unwrap_or(0);
            let id = match order {
                ByteOrder::Big => id.to_be_bytes(),
                ByteOrder::Little => id.to_le_bytes(),
            };
            out[HEADER_LEN..].copy_from_slice(&id);
        }
        (out, hlen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::GiopMessage;
    use crate::Message;

    #[test]
    fn omniorb_last_fragment_of_echo() {
        // omniorb-to-jacorb/giop1.2/008: request id 8, the string's last 5 bytes.
        let b =
            hex::decode("47494f5001020107090000000800000078787878 00".replace(' ', "")).unwrap();
        let m = Message::from_bytes(b.clone()).unwrap();
        let GiopMessage::Fragment { header, body } = m.decode().unwrap() else {
            panic!()
        };
        assert_eq!(header.request_id, Some(8));
        assert_eq!(body.as_bytes(), b"xxxx\0");
        let (p, n) = header.prefix(Version::V1_2, ByteOrder::Little, false, 5);
        assert_eq!(&p[..n], &b[..16]);
        let f11 = FragmentHeader { request_id: None };
        let (p, n) = f11.prefix(Version::V1_1, ByteOrder::Little, false, 0);
        assert_eq!(hex::encode(&p[..n]), "47494f500101010700000000");
    }
}
