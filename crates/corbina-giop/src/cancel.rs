//! CancelRequest: the client no longer wants a reply.

use corbina_cdr::{CdrReader, CdrWriter};

use crate::error::Result;

/// `GIOP::CancelRequestHeader`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CancelRequestHeader {
    /// The Request (or LocateRequest) being cancelled.
    pub request_id: u32,
}

impl CancelRequestHeader {
    /// Reads the header after the 12-byte GIOP header.
    pub fn decode(r: &mut CdrReader<'_>) -> Result<CancelRequestHeader> {
        Ok(CancelRequestHeader {
            request_id: r.read_ulong()?,
        })
    }

    /// Writes it.
    pub fn encode(&self, w: &mut CdrWriter<'_>) -> Result<()> {
        w.write_ulong(self.request_id);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{GiopMessage, MessageWriter};
    use crate::{Message, Version};
    use corbina_cdr::ByteOrder;

    #[test]
    fn bytes() {
        let h = CancelRequestHeader {
            request_id: 0x0102_0304,
        };
        let b = MessageWriter::cancel_request(Version::V1_0, ByteOrder::Little, &h)
            .unwrap()
            .finish_bytes()
            .unwrap();
        assert_eq!(hex::encode(&b), "47494f50010001020400000004030201");
        let m = Message::from_bytes(b).unwrap();
        assert_eq!(m.decode().unwrap(), GiopMessage::CancelRequest(h));
    }
}
