//! Encapsulations held as bytes (profile bodies, components, service contexts, stringified
//! IORs): the byte-order octet is part of the data, so they re-encode byte for byte.

use corbina_cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter, MarshalError};

/// A reader over an encapsulation's content, positioned after its byte-order octet.
pub(crate) fn reader(data: &[u8]) -> Result<CdrReader<'_>, MarshalError> {
    let order = match data.first() {
        Some(0) => ByteOrder::Big,
        Some(1) => ByteOrder::Little,
        Some(&value) => return Err(MarshalError::InvalidByteOrder { offset: 0, value }),
        None => {
            return Err(MarshalError::EndOfData {
                offset: 0,
                needed: 1,
                remaining: 0,
            })
        }
    };
    Ok(CdrReader::new(data, order, CdrContext::GIOP_1_2).starting_at(1))
}

/// Encapsulation bytes (byte-order octet included) written by `f` in `order`.
pub(crate) fn write<F>(order: ByteOrder, f: F) -> Result<Vec<u8>, MarshalError>
where
    F: FnOnce(&mut CdrWriter<'_>) -> Result<(), MarshalError>,
{
    let mut w = CdrWriter::with_byte_order(order, CdrContext::GIOP_1_2);
    w.set_splice_threshold(usize::MAX);
    w.write_octet(order.flag());
    f(&mut w)?;
    Ok(w.into_bytes())
}

/// The byte order an encapsulation was written in (big if it is empty or malformed).
pub(crate) fn order_of(data: &[u8]) -> ByteOrder {
    ByteOrder::from_flag(data.first().copied().unwrap_or(0))
}

/// Reads an IDL string that must be ASCII/Latin-1 protocol text (type ids, host names).
pub(crate) fn read_latin1(r: &mut CdrReader<'_>) -> Result<String, MarshalError> {
    let bytes = r.read_string_bytes()?;
    if bytes.is_ascii() {
        // Operation names and type ids: one copy, no per-character work.
        return Ok(String::from_utf8_lossy(bytes).into_owned());
    }
    Ok(bytes.iter().map(|&b| char::from(b)).collect())
}

/// [`read_latin1`] borrowing the text when it is ASCII (operation names): no allocation.
pub(crate) fn read_latin1_cow<'a>(
    r: &mut CdrReader<'a>,
) -> Result<std::borrow::Cow<'a, str>, MarshalError> {
    let bytes = r.read_string_bytes()?;
    match std::str::from_utf8(bytes) {
        Ok(s) if s.is_ascii() => Ok(std::borrow::Cow::Borrowed(s)),
        _ => Ok(std::borrow::Cow::Owned(
            bytes.iter().map(|&b| char::from(b)).collect(),
        )),
    }
}

/// Writes protocol text as an ISO-8859-1 string, whatever the stream's negotiated code set.
pub(crate) fn write_latin1(w: &mut CdrWriter<'_>, s: &str) -> Result<(), MarshalError> {
    if s.is_ascii() {
        // The common case (operation names, type ids): no conversion, no allocation.
        w.write_length(s.len() + 1)?;
        w.write_bytes(s.as_bytes());
        w.write_octet(0);
        return Ok(());
    }
    let mut bytes = Vec::with_capacity(s.len() + 1);
    corbina_cdr::CharCodeSet::Iso8859_1.encode_str(s, &mut bytes)?;
    bytes.push(0);
    w.write_length(bytes.len())?;
    w.write_bytes(&bytes);
    Ok(())
}
