//! Splitting a large outgoing Request or Reply into fragments, without copying its body.

use crate::error::{GiopError, Result};
use crate::fragment::{fragment_header_len, FragmentHeader};
use crate::header::{MessageHeader, HEADER_LEN};
use crate::message::peek_request_id;

/// Smallest maximum fragment size accepted: room for a header and some 8-byte units.
pub const MIN_FRAGMENT_SIZE: usize = 32;

/// One message to send: a small header (copied) then slices of the original message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingFragment<'a> {
    header: [u8; 16],
    header_len: usize,
    /// The data after the header, borrowed from the message's segments.
    pub data: Vec<&'a [u8]>,
}

impl<'a> OutgoingFragment<'a> {
    /// The header bytes: the (patched) GIOP header, or a Fragment header.
    pub fn header(&self) -> &[u8] {
        self.header.get(..self.header_len).unwrap_or_default()
    }

    /// Total length of this message on the wire.
    pub fn len(&self) -> usize {
        self.header_len + self.data.iter().map(|d| d.len()).sum::<usize>()
    }

    /// Always false: every fragment has a header.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Header then data, for a vectored write.
    pub fn io_slices(&self) -> Vec<&[u8]> {
        let mut v = Vec::with_capacity(self.data.len() + 1);
        v.push(self.header());
        v.extend(self.data.iter().copied());
        v
    }

    /// The message as one vector (for tests and small messages).
    pub fn to_vec(&self) -> Vec<u8> {
        self.io_slices().concat()
    }
}

/// Copies `len` bytes at `at` out of `segments` (they may span several).
fn gather(segments: &[&[u8]], at: usize, out: &mut [u8]) -> bool {
    let slices = slice_range(segments, at, at + out.len());
    let mut n = 0;
    for s in slices {
        out[n..n + s.len()].copy_from_slice(s);
        n += s.len();
    }
    n == out.len()
}

/// The parts of `segments` covering bytes `from..to` of their concatenation.
fn slice_range<'a>(segments: &[&'a [u8]], from: usize, to: usize) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut pos = 0;
    for &seg in segments {
        let (s, e) = (pos, pos + seg.len());
        pos = e;
        if e <= from || s >= to {
            continue;
        }
        let a = from.max(s) - s;
        let b = to.min(e) - s;
        if let Some(part) = seg.get(a..b) {
            if !part.is_empty() {
                out.push(part);
            }
        }
    }
    out
}

/// Splits a finished message (its segments, as from
/// [`MessageWriter::finish`](crate::MessageWriter::finish) then `segments()`) into messages
/// of at most `max_fragment_size` bytes: the first keeps the original header with the
/// more-fragments flag, the rest are Fragments. A message that fits is returned whole.
///
/// Split points keep alignment valid for every reader: at GIOP 1.2 every non-last message
/// is a multiple of 8 bytes, so no primitive of the message's own stream is cut (those of
/// an encapsulation starting 4 past a multiple of 8 can be: [`fragment_message_avoiding`],
/// which the ORB uses, keeps them whole); at 1.1 it
/// is 4 more than a multiple of 8, so that data after a 12-byte Fragment header has the
/// same alignment whether a receiver counts from the message start or, as omniORB does,
/// from each Fragment's header. That 1.1 split cuts any 8-byte primitive lying across it,
/// which CORBA 3.0 §15.4.9 forbids and omniORB answers by closing the connection: the ORB
/// sends 1.1 messages whole (`Outgoing`), and a 1.1 split here serves tests of receivers.
pub fn fragment_message<'a>(
    segments: &[&'a [u8]],
    max_fragment_size: usize,
) -> Result<Vec<OutgoingFragment<'a>>> {
    fragment_message_avoiding(segments, max_fragment_size, &[])
}

/// [`fragment_message`] keeping whole the 8-octet primitives of `uncuttable`
/// ([`CdrWriter::uncuttable`](corbina_cdr::CdrWriter::uncuttable): runs of them inside
/// encapsulations, 4 past a multiple of 8 in the message). At GIOP 1.2 a cut that would fall
/// inside one moves back to the multiple of 8 before the run, making that fragment shorter
/// (fragments need only be multiples of 8, not of any size); when no such cut is left in the
/// fragment (a run longer than a fragment), the cut stays where it was.
pub fn fragment_message_avoiding<'a>(
    segments: &[&'a [u8]],
    max_fragment_size: usize,
    uncuttable: &[(usize, usize)],
) -> Result<Vec<OutgoingFragment<'a>>> {
    let total: usize = segments.iter().map(|s| s.len()).sum();
    let mut hb = [0u8; HEADER_LEN];
    if !gather(segments, 0, &mut hb) {
        return Err(GiopError::Truncated {
            needed: HEADER_LEN,
            available: total,
        });
    }
    let header = MessageHeader::decode(&hb)?;
    if header.total_len() != total {
        return Err(GiopError::Truncated {
            needed: header.total_len(),
            available: total,
        });
    }
    let mut first = [0u8; 16];
    first[..HEADER_LEN].copy_from_slice(&hb);
    if total <= max_fragment_size {
        let data = slice_range(segments, HEADER_LEN, total);
        return Ok(vec![OutgoingFragment {
            header: first,
            header_len: HEADER_LEN,
            data,
        }]);
    }
    let minor = header.version.minor;
    if !header.msg_type.can_fragment(minor) || header.more_fragments {
        return Err(GiopError::NotFragmentable {
            msg_type: header.msg_type,
            minor,
        });
    }
    if max_fragment_size < MIN_FRAGMENT_SIZE {
        return Err(GiopError::FragmentSizeTooSmall(max_fragment_size));
    }
    // Largest non-last message size allowed (see above).
    let cap = if minor >= 2 {
        max_fragment_size & !7
    } else {
        ((max_fragment_size - 4) & !7) + 4
    };
    let request_id = if minor >= 2 {
        let mut idb = [0u8; 16];
        gather(segments, 0, &mut idb);
        peek_request_id(&header, &idb)
    } else {
        None
    };
    let frag = FragmentHeader { request_id };
    let hlen = fragment_header_len(minor);

    let mut out = Vec::new();
    let mut h1 = header;
    h1.more_fragments = true;
    // The first message keeps at least its 1.2 request id (the fragments' headers repeat it).
    let first_cut = if minor >= 2 {
        whole_cut(cap, HEADER_LEN + 4, uncuttable)
    } else {
        cap
    };
    h1.message_size = (first_cut - HEADER_LEN) as u32;
    first[..HEADER_LEN].copy_from_slice(&h1.encode());
    out.push(OutgoingFragment {
        header: first,
        header_len: HEADER_LEN,
        data: slice_range(segments, HEADER_LEN, first_cut),
    });
    let mut pos = first_cut;
    while pos < total {
        let rest = total - pos;
        let last = hlen + rest <= max_fragment_size;
        let n = if last {
            rest
        } else if minor >= 2 {
            whole_cut(pos + cap - hlen, pos, uncuttable) - pos
        } else {
            cap - hlen
        };
        let (header, header_len) = frag.prefix(header.version, header.byte_order, !last, n);
        out.push(OutgoingFragment {
            header,
            header_len,
            data: slice_range(segments, pos, pos + n),
        });
        pos += n;
    }
    Ok(out)
}

/// `cut` (a multiple of 8), or the nearest multiple of 8 before it above `floor` that splits
/// no 8-octet unit of `uncuttable` (sorted, disjoint runs, each of units from its start);
/// `cut` itself when there is none.
fn whole_cut(cut: usize, floor: usize, uncuttable: &[(usize, usize)]) -> usize {
    let mut c = cut;
    loop {
        // The one run that may hold `c`: the last starting before it.
        let i = uncuttable.partition_point(|r| r.0 < c);
        match i.checked_sub(1).map(|i| uncuttable[i]) {
            Some((s, e)) if c < e && !(c - s).is_multiple_of(8) => {
                let before = s & !7;
                if before <= floor {
                    return cut;
                }
                c = before;
            }
            _ => return c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::Version;
    use crate::message::{GiopMessage, MessageWriter};
    use crate::request::RequestHeader;
    use crate::{Message, ObjectKey, Reassembler};
    use corbina_cdr::{ByteOrder, CodeSets};

    fn structs_request(v: Version, order: ByteOrder, big: &[f64]) -> Vec<u8> {
        let h = RequestHeader::new(38, ObjectKey::from("key"), "send_doubles");
        let mut mw = MessageWriter::request(v, order, CodeSets::DEFAULT, &h).unwrap();
        mw.body().write_octet(1);
        mw.body().write_primitive_seq(big).unwrap();
        mw.finish_bytes().unwrap()
    }

    /// A GIOP 1.2 Request whose body holds an encapsulation starting 4 past a multiple of 8
    /// (as a TypeCode in an Any does), its long long (a union label) 8-aligned inside it so
    /// at message offsets 60..68, across the 64-octet first cut.
    fn straddling_request(order: ByteOrder) -> Vec<u8> {
        let h = RequestHeader::new(38, ObjectKey::from("key"), "echo");
        let mut mw = MessageWriter::request(Version::V1_2, order, CodeSets::DEFAULT, &h).unwrap();
        let b = mw.body();
        while b.position() < 48 {
            b.write_octet(0xee);
        }
        b.write_encapsulation(|e| {
            e.write_longlong(0x0102_0304_0506_0708);
            e.write_string("label")?;
            e.write_ulonglong(9); // at 84: as 4 past a multiple of 8 as the first
            e.write_string("m")
        })
        .unwrap();
        for i in 0..100u32 {
            b.write_ulong(i);
        }
        let w = mw.finish().unwrap();
        assert_eq!(w.uncuttable(), [(60, 68), (84, 92)].as_slice());
        let parts = fragment_message_avoiding(&w.segments(), 64, w.uncuttable()).unwrap();
        // Without the runs the first cut would be at 64, inside the long long.
        assert_eq!(fragment_message(&w.segments(), 64).unwrap()[0].len(), 64);
        let mut lens = parts.iter().map(OutgoingFragment::len);
        // Cut moved back to 56; from there on every 48 octets of data (16-octet headers).
        assert_eq!(lens.next(), Some(56));
        assert!(lens.all(|n| n <= 64));
        for p in &parts[..parts.len() - 1] {
            assert_eq!(p.len() % 8, 0);
        }
        // The second message: Fragment header, request id, then the encapsulation's padding
        // and the whole long long (big-endian in the body's order).
        let second = parts[1].to_vec();
        let flags = 0x02 | u8::from(order == ByteOrder::Little);
        assert_eq!(&second[..8], [b'G', b'I', b'O', b'P', 1, 2, flags, 7]);
        let ll = 0x0102_0304_0506_0708u64;
        let ll = if order == ByteOrder::Big {
            ll.to_be_bytes()
        } else {
            ll.to_le_bytes()
        };
        assert_eq!(&second[16..20], [0, 0, 0, 0]);
        assert_eq!(&second[20..28], ll);
        let mut r = Reassembler::new(1 << 20);
        let mut done = None;
        for p in &parts {
            if let Some(m) = r.push(Message::from_bytes(p.to_vec()).unwrap()).unwrap() {
                done = Some(m);
            }
        }
        let whole = done.unwrap().bytes().to_vec();
        assert_eq!(whole, w.into_bytes());
        whole
    }

    #[test]
    fn cuts_keep_encapsulated_8_octet_primitives_whole() {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            straddling_request(order);
        }
        // A run no cut before it can avoid (it starts in the first 16 octets' reach): the
        // cut stays, as it must to make progress.
        assert_eq!(whole_cut(64, 16, &[(20, 68)]), 64);
        assert_eq!(whole_cut(64, 16, &[(60, 68)]), 56);
        // Runs back to back: the cut goes before the first.
        assert_eq!(whole_cut(112, 48, &[(60, 68), (92, 116)]), 88);
        assert_eq!(whole_cut(112, 88, &[(60, 68), (92, 116)]), 112);
        // A run of two units: the cut goes before both. Past a run, or in phase with its
        // units, a cut stays.
        assert_eq!(whole_cut(64, 16, &[(52, 68)]), 48);
        assert_eq!(whole_cut(64, 16, &[(44, 60)]), 64);
        assert_eq!(whole_cut(64, 16, &[(56, 72)]), 64);
    }

    #[test]
    fn split_sizes_and_reassembly() {
        let doubles: Vec<f64> = (0..3000).map(|i| f64::from(i) * 0.25).collect();
        for v in [Version::V1_1, Version::V1_2] {
            for order in [ByteOrder::Big, ByteOrder::Little] {
                let h = RequestHeader::new(38, ObjectKey::from("key"), "send_doubles");
                let mut mw = MessageWriter::request(v, order, CodeSets::DEFAULT, &h).unwrap();
                mw.body().write_octet(1);
                mw.body().write_primitive_seq(&doubles).unwrap();
                let w = mw.finish().unwrap();
                let segs = w.segments();
                let parts = fragment_message(&segs, 8192).unwrap();
                assert_eq!(parts.len(), 3);
                for (i, p) in parts.iter().enumerate() {
                    assert!(p.len() <= 8192);
                    if i + 1 < parts.len() {
                        assert_eq!(p.len() % 8, if v.minor >= 2 { 0 } else { 4 });
                    }
                }
                let mut r = Reassembler::new(1 << 20);
                let mut done = None;
                for p in &parts {
                    let m = Message::from_bytes(p.to_vec()).unwrap();
                    if let Some(m) = r.push(m).unwrap() {
                        done = Some(m);
                    }
                }
                let m = done.unwrap();
                assert_eq!(m.bytes(), structs_request(v, order, &doubles));
                let GiopMessage::Request { body, .. } = m.decode().unwrap() else {
                    panic!()
                };
                let mut rd = body.reader(CodeSets::DEFAULT);
                assert_eq!(rd.read_octet().unwrap(), 1);
                assert_eq!(rd.read_primitive_seq::<f64>().unwrap(), doubles);
            }
        }
    }

    #[test]
    fn small_messages_and_refusals() {
        let b = structs_request(Version::V1_0, ByteOrder::Big, &[1.0; 100]);
        let parts = fragment_message(&[&b], 4096).unwrap();
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].to_vec(), b);
        assert!(matches!(
            fragment_message(&[&b], 64),
            Err(GiopError::NotFragmentable { .. })
        ));
        let b = structs_request(Version::V1_2, ByteOrder::Big, &[1.0; 100]);
        assert_eq!(
            fragment_message(&[&b], 16),
            Err(GiopError::FragmentSizeTooSmall(16))
        );
        assert!(fragment_message(&[&b[..5]], 100).is_err());
    }
}
