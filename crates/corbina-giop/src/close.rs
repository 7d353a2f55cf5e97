//! CloseConnection and MessageError: messages that are only a GIOP header.

use corbina_cdr::ByteOrder;

use crate::header::{MessageHeader, MsgType, Version, HEADER_LEN};

/// The CloseConnection message (the server will not answer anything more).
pub fn close_connection(version: Version, order: ByteOrder) -> [u8; HEADER_LEN] {
    MessageHeader::new(version, order, MsgType::CloseConnection).encode()
}

/// The MessageError message (what the peer sent could not be understood). Send it at the
/// highest version both sides know, or 1.0 if the peer's version is the problem.
pub fn message_error(version: Version, order: ByteOrder) -> [u8; HEADER_LEN] {
    MessageHeader::new(version, order, MsgType::MessageError).encode()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::GiopMessage;
    use crate::Message;

    #[test]
    fn header_only() {
        // omniORB's CloseConnection from omniorb-to-jacorb/giop1.2/051.
        let b = close_connection(Version::V1_2, ByteOrder::Little);
        assert_eq!(hex::encode(b), "47494f500102010500000000");
        let m = Message::from_bytes(b.to_vec()).unwrap();
        assert_eq!(m.decode().unwrap(), GiopMessage::CloseConnection);
        let b = message_error(Version::V1_0, ByteOrder::Big);
        assert_eq!(hex::encode(b), "47494f500100000600000000");
        assert_eq!(
            Message::from_bytes(b.to_vec()).unwrap().decode().unwrap(),
            GiopMessage::MessageError
        );
    }
}
