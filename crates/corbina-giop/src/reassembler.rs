//! Putting fragmented incoming messages back together.

use std::collections::HashMap;

use corbina_cdr::AlignBreak;

use crate::error::{GiopError, Result};
use crate::fragment::fragment_header_len;
use crate::header::{MsgType, HEADER_LEN};
use crate::message::{peek_request_id, Message};

/// Default cap on bytes held for reassembly on one connection: 64 MiB.
pub const DEFAULT_REASSEMBLY_LIMIT: usize = 64 << 20;

#[derive(Debug, Clone)]
struct Partial {
    bytes: Vec<u8>,
    breaks: Vec<AlignBreak>,
}

impl Partial {
    /// What the partial message holds as allocated: capacity, not length (a buffer grown by
    /// doubling holds up to twice what it was sent, and each break is 16 bytes however few
    /// data bytes its fragment carried).
    fn allocated(&self) -> usize {
        self.bytes.capacity() + self.breaks.capacity() * std::mem::size_of::<AlignBreak>()
    }
}

/// Reassembles fragmented messages arriving on one connection.
///
/// A [`GiopConnection`](crate::connection::GiopConnection) owns one and feeds it every
/// message: unfragmented messages come straight back, the first part of a fragmented one
/// and its Fragments are held until the last arrives, then the whole message comes back as
/// if it had been sent in one piece (`message_size` patched, more-fragments flag cleared). GIOP 1.2 fragments of different
/// requests may interleave (keyed by request id); GIOP 1.1 allows one fragmented message at a
/// time. For 1.1 the result carries [`AlignBreak`]s, since omniORB aligns each Fragment's data
/// relative to that Fragment's own header.
#[derive(Debug, Clone)]
pub struct Reassembler {
    limit: usize,
    held: usize,
    v11: Option<Partial>,
    v12: HashMap<u32, Partial>,
}

impl Default for Reassembler {
    fn default() -> Self {
        Reassembler::new(DEFAULT_REASSEMBLY_LIMIT)
    }
}

impl Reassembler {
    /// A reassembler holding at most `limit` bytes of incomplete messages.
    pub fn new(limit: usize) -> Reassembler {
        Reassembler {
            limit,
            held: 0,
            v11: None,
            v12: HashMap::new(),
        }
    }

    /// Bytes currently held, as allocated (the capacity of the buffers of incomplete messages).
    pub fn held_bytes(&self) -> usize {
        self.held
    }

    /// Messages currently incomplete.
    pub fn in_progress(&self) -> usize {
        self.v12.len() + usize::from(self.v11.is_some())
    }

    /// Drops a GIOP 1.2 fragmented message (after a CancelRequest); whether one was held.
    pub fn cancel(&mut self, request_id: u32) -> bool {
        match self.v12.remove(&request_id) {
            Some(p) => {
                self.held = self.held.saturating_sub(p.allocated());
                true
            }
            None => false,
        }
    }

    fn reserve(&mut self, n: usize) -> Result<()> {
        let held = self.held.saturating_add(n);
        if held > self.limit {
            return Err(GiopError::ReassemblyLimitExceeded {
                held: held as u64,
                limit: self.limit as u64,
            });
        }
        self.held = held;
        Ok(())
    }

    /// Takes the next message from the connection; returns a complete message when there
    /// is one. Errors mean the peer broke the fragmentation rules: send MessageError, close.
    pub fn push(&mut self, m: Message) -> Result<Option<Message>> {
        let h = *m.header();
        let minor = h.version.minor;
        if h.msg_type == MsgType::Fragment {
            return self.push_fragment(m);
        }
        if !h.more_fragments {
            if h.msg_type == MsgType::CancelRequest {
                if let Some(id) = m.request_id_1_2() {
                    self.cancel(id);
                }
            }
            return Ok(Some(m));
        }
        if !h.msg_type.can_fragment(minor) {
            return Err(GiopError::NotFragmentable {
                msg_type: h.msg_type,
                minor,
            });
        }
        let partial = Partial {
            bytes: m.into_bytes(),
            breaks: Vec::new(),
        };
        if minor >= 2 {
            let id = peek_request_id(&h, &partial.bytes).ok_or(GiopError::Truncated {
                needed: HEADER_LEN + 4,
                available: partial.bytes.len(),
            })?;
            if self.v12.contains_key(&id) {
                return Err(GiopError::DuplicateFragmentedMessage {
                    request_id: Some(id),
                });
            }
            self.reserve(partial.allocated())?;
            self.v12.insert(id, partial);
        } else {
            if self.v11.is_some() {
                return Err(GiopError::DuplicateFragmentedMessage { request_id: None });
            }
            self.reserve(partial.allocated())?;
            self.v11 = Some(partial);
        }
        Ok(None)
    }

    fn push_fragment(&mut self, m: Message) -> Result<Option<Message>> {
        let h = *m.header();
        let minor = h.version.minor;
        let hlen = fragment_header_len(minor);
        let data = m.bytes().get(hlen..).ok_or(GiopError::Truncated {
            needed: hlen,
            available: m.bytes().len(),
        })?;
        let id = peek_request_id(&h, m.bytes());
        let (limit, held) = (self.limit, self.held);
        let partial = match (minor >= 2, id) {
            (true, Some(id)) => self.v12.get_mut(&id),
            _ => self.v11.as_mut(),
        }
        .ok_or(GiopError::UnexpectedFragment { request_id: id })?;
        let before = partial.allocated();
        let at = partial.bytes.len();
        // 1.1: alignment restarts at each Fragment header. 1.2: it simply continues when
        // the sender kept parts to multiples of 8; if not, count from the fragment header.
        let needs_break = !data.is_empty() && (minor < 2 || at % 8 != 0);
        let breaks_more = if needs_break && partial.breaks.len() == partial.breaks.capacity() {
            partial.breaks.capacity().max(2) * std::mem::size_of::<AlignBreak>()
        } else {
            0
        };
        // The buffer grows by doubling (appends stay amortised O(1)), but never past what the
        // budget leaves it: growth is charged as allocated, before it is made.
        let needed = at.saturating_add(data.len());
        let mut bytes_more = 0;
        if needed > partial.bytes.capacity() {
            let cap = partial.bytes.capacity();
            let room = limit.saturating_sub(held).saturating_sub(breaks_more);
            if needed - cap > room {
                return Err(GiopError::ReassemblyLimitExceeded {
                    held: (held + breaks_more + needed - cap) as u64,
                    limit: limit as u64,
                });
            }
            let grown = (cap * 2).clamp(needed, cap + room);
            partial.bytes.reserve_exact(grown - at);
            bytes_more = grown - cap;
        }
        if held + breaks_more + bytes_more > limit {
            return Err(GiopError::ReassemblyLimitExceeded {
                held: (held + breaks_more + bytes_more) as u64,
                limit: limit as u64,
            });
        }
        if needs_break {
            partial.breaks.push(AlignBreak {
                at,
                origin: at as isize - hlen as isize,
            });
        }
        partial.bytes.extend_from_slice(data);
        // What was allocated, exactly (the allocator may give more than asked).
        let after = partial.allocated();
        self.held = held + after - before;
        if h.more_fragments {
            return Ok(None);
        }
        let done = match id {
            Some(id) if minor >= 2 => self.v12.remove(&id),
            _ => self.v11.take(),
        }
        .ok_or(GiopError::UnexpectedFragment { request_id: id })?;
        self.held = self.held.saturating_sub(done.allocated());
        finish(done).map(Some)
    }
}

fn finish(p: Partial) -> Result<Message> {
    let Partial { mut bytes, breaks } = p;
    let mut header = crate::header::MessageHeader::decode_prefix(&bytes)?;
    let size = bytes.len() - HEADER_LEN;
    header.message_size = u32::try_from(size).map_err(|_| GiopError::MessageTooLarge {
        size: size as u64,
        limit: u32::MAX.into(),
    })?;
    header.more_fragments = false;
    bytes[..HEADER_LEN].copy_from_slice(&header.encode());
    Ok(Message::reassembled(header, bytes, breaks))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fragment::FragmentHeader;
    use crate::header::{MessageHeader, Version};
    use crate::message::MessageWriter;
    use crate::{fragment_message, ObjectKey, RequestHeader};
    use corbina_cdr::{ByteOrder, CodeSets};

    fn request(id: u32, v: Version, n: usize) -> Vec<u8> {
        let h = RequestHeader::new(id, ObjectKey::from("k"), "op");
        let mut mw = MessageWriter::request(v, ByteOrder::Big, CodeSets::DEFAULT, &h).unwrap();
        for i in 0..n {
            mw.body().write_ulonglong(i as u64);
        }
        mw.finish_bytes().unwrap()
    }

    fn parts(b: &[u8]) -> Vec<Message> {
        fragment_message(&[b], 64)
            .unwrap()
            .iter()
            .map(|p| Message::from_bytes(p.to_vec()).unwrap())
            .collect()
    }

    #[test]
    fn interleaved_1_2() {
        let (a, b) = (request(2, Version::V1_2, 20), request(4, Version::V1_2, 30));
        let (pa, pb) = (parts(&a), parts(&b));
        let mut r = Reassembler::new(10_000);
        let mut out = Vec::new();
        for i in 0..pa.len().max(pb.len()) {
            for p in [pa.get(i), pb.get(i)].into_iter().flatten() {
                out.extend(r.push(p.clone()).unwrap());
            }
        }
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].bytes(), a);
        assert_eq!(out[1].bytes(), b);
        assert_eq!(r.held_bytes(), 0);
        assert_eq!(r.in_progress(), 0);
    }

    #[test]
    fn rule_breaking_peers() {
        let a = request(2, Version::V1_2, 20);
        let pa = parts(&a);
        let mut r = Reassembler::new(10_000);
        assert!(matches!(
            r.push(pa[1].clone()),
            Err(GiopError::UnexpectedFragment {
                request_id: Some(2)
            })
        ));
        r.push(pa[0].clone()).unwrap();
        assert!(matches!(
            r.push(pa[0].clone()),
            Err(GiopError::DuplicateFragmentedMessage { .. })
        ));
        assert!(r.cancel(2));
        assert_eq!(r.held_bytes(), 0);
        let mut r = Reassembler::new(100);
        r.push(pa[0].clone()).unwrap();
        assert!(matches!(
            r.push(pa[1].clone()),
            Err(GiopError::ReassemblyLimitExceeded { .. })
        ));
        // 1.1: one at a time.
        let b = request(2, Version::V1_1, 20);
        let pb = parts(&b);
        let mut r = Reassembler::default();
        r.push(pb[0].clone()).unwrap();
        assert!(matches!(
            r.push(pb[0].clone()),
            Err(GiopError::DuplicateFragmentedMessage { request_id: None })
        ));
        // A more-fragments CloseConnection is refused.
        let mut h = MessageHeader::new(Version::V1_2, ByteOrder::Big, MsgType::CloseConnection);
        h.more_fragments = true;
        let m = Message::from_bytes(h.encode().to_vec()).unwrap();
        assert!(matches!(
            Reassembler::default().push(m),
            Err(GiopError::NotFragmentable { .. })
        ));
        // A 1.2 Fragment too short for its request id.
        let f = FragmentHeader { request_id: None }
            .prefix(Version::V1_1, ByteOrder::Big, false, 0)
            .0;
        let mut f12 = f[..12].to_vec();
        f12[5] = 2;
        let m = Message::from_bytes(f12).unwrap();
        assert!(Reassembler::default().push(m).is_err());
    }

    /// What the reassembler says it holds is what its buffers allocated, and never more
    /// than its limit: many messages interleaved, in fragments of every size (1.1 and 1.2,
    /// fragments of a few bytes each adding an alignment break), until the limit refuses one.
    #[test]
    fn held_bytes_count_allocation_and_stay_within_the_limit() {
        for (v, limit, n) in [
            (Version::V1_2, 4 << 10, 100),
            (Version::V1_2, 64 << 10, 1200),
            (Version::V1_1, 8 << 10, 1200),
        ] {
            let mut r = Reassembler::new(limit);
            let messages: Vec<Vec<u8>> = (0..8).map(|i| request(2 * i + 2, v, n)).collect();
            let chains: Vec<Vec<Message>> = messages
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    fragment_message(&[m], 64 + 8 * i)
                        .unwrap()
                        .iter()
                        .map(|p| Message::from_bytes(p.to_vec()).unwrap())
                        .collect()
                })
                .collect();
            let lanes = if v == Version::V1_1 { 1 } else { chains.len() };
            let mut refused = false;
            'all: for step in 0..chains.iter().map(Vec::len).max().unwrap() {
                for chain in &chains[..lanes] {
                    let Some(part) = chain.get(step) else {
                        continue;
                    };
                    match r.push(part.clone()) {
                        Ok(_) => {}
                        Err(GiopError::ReassemblyLimitExceeded { .. }) => {
                            refused = true;
                            break 'all;
                        }
                        Err(e) => panic!("{v:?}: {e}"),
                    }
                    let allocated: usize = r
                        .v12
                        .values()
                        .chain(r.v11.as_ref())
                        .map(Partial::allocated)
                        .sum();
                    assert_eq!(r.held_bytes(), allocated, "{v:?} step {step}");
                    assert!(allocated <= limit, "{v:?}: {allocated} held over {limit}");
                }
            }
            assert!(refused, "{v:?}: the limit {limit} was never reached");
        }
    }
}
