//! Moving whole GIOP messages over a byte stream: header first, then the body straight into
//! its own buffer; outgoing messages as one vectored write of the writer's segments.

use std::io::{self, IoSlice, Read, Write};

use crate::giop::{GiopError, Message, MessageHeader, HEADER_LEN};

/// Why a message could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The peer closed the connection cleanly between messages.
    #[error("connection closed by peer")]
    Closed,
    /// The socket failed, or closed in the middle of a message, or timed out.
    #[error("i/o error: {0}")]
    Io(#[from] io::Error),
    /// The bytes are not GIOP (bad magic, version, type or size): answer MessageError.
    #[error("malformed message: {0}")]
    Malformed(#[from] GiopError),
}

/// Reads one message: 12 header bytes, checked, then exactly the body. Never reads past the
/// message; allocates only after the size was checked against `max_message_size`.
pub fn read_message(r: &mut impl Read, max_message_size: u32) -> Result<Message, ReadError> {
    read_message_into(r, max_message_size, Vec::new())
}

/// [`read_message`] into a reused buffer (its allocation is kept; get it back with
/// `Message::into_bytes` once the message is handled): no allocation per message.
pub fn read_message_into(
    r: &mut impl Read,
    max_message_size: u32,
    mut bytes: Vec<u8>,
) -> Result<Message, ReadError> {
    let mut header = [0u8; HEADER_LEN];
    let mut got = 0;
    while got < HEADER_LEN {
        match r.read(&mut header[got..]) {
            Ok(0) if got == 0 => return Err(ReadError::Closed),
            Ok(0) => return Err(ReadError::Io(io::ErrorKind::UnexpectedEof.into())),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    let h = MessageHeader::decode(&header)?;
    h.check(max_message_size)?;
    bytes.clear();
    bytes.resize(h.total_len(), 0);
    bytes[..HEADER_LEN].copy_from_slice(&header);
    r.read_exact(&mut bytes[HEADER_LEN..])?;
    Ok(Message::from_bytes(bytes)?)
}

/// Takes one complete message off the front of `buf` (bytes received so far on a
/// nonblocking connection): `Ok(None)` until all of it has arrived. The header is checked
/// (magic, version, type, `max_message_size`) as soon as its 12 bytes are there.
pub fn take_message(
    buf: &mut Vec<u8>,
    max_message_size: u32,
) -> Result<Option<Message>, ReadError> {
    match pending_len(buf, max_message_size)? {
        Some(total) if buf.len() >= total => {
            let rest = buf.split_off(total);
            let bytes = std::mem::replace(buf, rest);
            Ok(Some(Message::from_bytes(bytes)?))
        }
        _ => Ok(None),
    }
}

/// The total length of the message at the front of `buf`, once its header is there
/// (checked against `max_message_size`).
pub fn pending_len(buf: &[u8], max_message_size: u32) -> Result<Option<usize>, ReadError> {
    let Some(header) = buf.get(..HEADER_LEN) else {
        return Ok(None);
    };
    let mut h = [0u8; HEADER_LEN];
    h.copy_from_slice(header);
    let h = MessageHeader::decode(&h)?;
    h.check(max_message_size)?;
    Ok(Some(h.total_len()))
}

/// The largest buffer a connection keeps for reuse: one huge message must not pin its
/// memory on an idle connection for good.
pub const MAX_RECYCLED_BUFFER: usize = 4 << 20;

/// Returns `buf` for reuse, or a fresh empty vector if it has grown past
/// [`MAX_RECYCLED_BUFFER`].
pub fn recycle(buf: Vec<u8>) -> Vec<u8> {
    if buf.capacity() > MAX_RECYCLED_BUFFER {
        Vec::new()
    } else {
        buf
    }
}

/// Writes a finished message: one `write` when it is contiguous (the common case, and no
/// allocation), a vectored write of its segments when large blocks were spliced in.
pub fn write_message(w: &mut impl Write, message: &crate::cdr::CdrWriter<'_>) -> io::Result<()> {
    if message.is_contiguous() {
        w.write_all(message.owned_bytes())
    } else {
        write_segments(w, &message.segments())
    }
}

/// Writes every segment, in order, with as few system calls as the kernel allows.
pub fn write_segments(w: &mut impl Write, segments: &[&[u8]]) -> io::Result<()> {
    let mut slices: Vec<IoSlice<'_>> = segments.iter().map(|s| IoSlice::new(s)).collect();
    let mut rest = &mut slices[..];
    IoSlice::advance_slices(&mut rest, 0);
    while !rest.is_empty() {
        match w.write_vectored(rest) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdr::{ByteOrder, CodeSets};
    use crate::giop::{MessageWriter, ObjectKey, RequestHeader, Version};

    #[test]
    fn messages_round_trip_through_a_stream() {
        let big = vec![7u8; 100_000];
        let h = RequestHeader::new(5, ObjectKey::new(b"k".to_vec()), "send");
        let mut m =
            MessageWriter::request(Version::V1_2, ByteOrder::Big, CodeSets::DEFAULT, &h).unwrap();
        m.body().write_octet_seq(&big).unwrap();
        let w = m.finish().unwrap();
        let mut wire = Vec::new();
        write_segments(&mut wire, &w.segments()).unwrap();
        write_segments(
            &mut wire,
            &[&crate::giop::close_connection(
                Version::V1_2,
                ByteOrder::Big,
            )],
        )
        .unwrap();
        let mut r = &wire[..];
        let m = read_message(&mut r, 1 << 20).unwrap();
        assert_eq!(m.bytes().len(), w.len());
        let m2 = read_message(&mut r, 1 << 20).unwrap();
        assert_eq!(m2.bytes().len(), 12);
        assert!(matches!(
            read_message(&mut r, 1 << 20),
            Err(ReadError::Closed)
        ));
        // Too large for the limit: refused before the body is allocated.
        let mut r = &wire[..];
        assert!(matches!(
            read_message(&mut r, 1000),
            Err(ReadError::Malformed(_))
        ));
        // Cut short.
        let mut r = &wire[..50];
        assert!(matches!(
            read_message(&mut r, 1 << 20),
            Err(ReadError::Io(_))
        ));
    }

    #[test]
    fn messages_are_taken_from_a_buffer_as_they_complete() {
        let h = RequestHeader::new(5, ObjectKey::new(b"k".to_vec()), "send");
        let mut m =
            MessageWriter::request(Version::V1_2, ByteOrder::Big, CodeSets::DEFAULT, &h).unwrap();
        m.body().write_octet_seq(&[1, 2, 3]).unwrap();
        let w = m.finish().unwrap();
        let mut wire = Vec::new();
        write_segments(&mut wire, &w.segments()).unwrap();
        let close = crate::giop::close_connection(Version::V1_2, ByteOrder::Big);
        wire.extend_from_slice(&close);
        let mut buf = Vec::new();
        let mut got = Vec::new();
        for b in &wire {
            buf.push(*b);
            if let Some(m) = take_message(&mut buf, 1 << 20).unwrap() {
                got.push(m.bytes().len());
            }
        }
        assert_eq!(got, [w.len(), 12]);
        assert!(buf.is_empty());
        // Bad magic is refused as soon as the header is there; so is an oversized message.
        let mut bad = b"GIOX\x01\x02\x00\x00\x00\x00\x00\x00".to_vec();
        assert!(matches!(
            take_message(&mut bad, 1 << 20),
            Err(ReadError::Malformed(_))
        ));
        let mut big = wire.clone();
        assert!(matches!(
            take_message(&mut big, 16),
            Err(ReadError::Malformed(_))
        ));
    }
}
