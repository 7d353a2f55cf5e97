//! The Request header (`GIOP::RequestHeader_1_0`, `_1_1`, `_1_2`) as one type for all versions.

use std::borrow::Cow;

use corbina_cdr::{CdrReader, CdrWriter};

use crate::encap;
use crate::error::{GiopError, Result};
use crate::object_key::ObjectKey;
use crate::service_context::{ServiceContextList, ServiceContextsView};
use crate::target_address::{TargetAddress, TargetAddressView};

/// `response_flags` 0: oneway, no reply.
pub const RESPONSE_NONE: u8 = 0;
/// `response_flags` 1: reply (without body) once the server has the request.
pub const SYNC_WITH_SERVER: u8 = 1;
/// `response_flags` 3: an ordinary twoway call.
pub const SYNC_WITH_TARGET: u8 = 3;

/// A Request header, whatever the GIOP version.
///
/// GIOP 1.0/1.1 carry `response_expected` (mapped to flags 3 or 0) and an object key
/// (`TargetAddress::Key`); 1.2 carries `response_flags` and any TargetAddress, and no
/// principal.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RequestHeader {
    /// Matches the Reply to the Request.
    pub request_id: u32,
    /// [`RESPONSE_NONE`], [`SYNC_WITH_SERVER`] or [`SYNC_WITH_TARGET`].
    pub response_flags: u8,
    /// The target object.
    pub target: TargetAddress,
    /// Operation name (or `_get_attr`, `_non_existent`, …).
    pub operation: String,
    /// Service contexts.
    pub service_context: ServiceContextList,
    /// `requesting_principal` (GIOP 1.0/1.1 only; empty in practice).
    pub requesting_principal: Vec<u8>,
}

impl RequestHeader {
    /// A twoway request to an object key, with no contexts.
    pub fn new(request_id: u32, object_key: ObjectKey, operation: &str) -> RequestHeader {
        RequestHeader {
            request_id,
            response_flags: SYNC_WITH_TARGET,
            target: TargetAddress::Key(object_key),
            operation: operation.to_owned(),
            service_context: ServiceContextList::new(),
            requesting_principal: Vec::new(),
        }
    }

    /// Whether the client waits for a Reply.
    pub fn response_expected(&self) -> bool {
        self.response_flags & 1 != 0
    }

    /// Reads the header that follows the 12-byte GIOP header of a GIOP 1.`minor` Request.
    /// Reserved octets are skipped whatever they hold.
    pub fn decode(r: &mut CdrReader<'_>, minor: u8) -> Result<RequestHeader> {
        if minor >= 2 {
            let request_id = r.read_ulong()?;
            let response_flags = r.read_octet()?;
            r.read_bytes(3)?;
            let target = TargetAddress::decode(r)?;
            let operation = encap::read_latin1(r)?;
            let service_context = ServiceContextList::decode(r)?;
            return Ok(RequestHeader {
                request_id,
                response_flags,
                target,
                operation,
                service_context,
                requesting_principal: Vec::new(),
            });
        }
        let service_context = ServiceContextList::decode(r)?;
        let request_id = r.read_ulong()?;
        let response_flags = if r.read_boolean()? {
            SYNC_WITH_TARGET
        } else {
            RESPONSE_NONE
        };
        if minor == 1 {
            r.read_bytes(3)?;
        }
        let target = TargetAddress::Key(ObjectKey(r.read_octet_seq()?.to_vec()));
        let operation = encap::read_latin1(r)?;
        let requesting_principal = r.read_octet_seq()?.to_vec();
        Ok(RequestHeader {
            request_id,
            response_flags,
            target,
            operation,
            service_context,
            requesting_principal,
        })
    }

    /// Writes the header for GIOP 1.`minor` (after the 12-byte GIOP header).
    pub fn encode(&self, w: &mut CdrWriter<'_>, minor: u8) -> Result<()> {
        RequestHeaderRef {
            request_id: self.request_id,
            response_flags: self.response_flags,
            target: &self.target,
            operation: &self.operation,
            service_context: &self.service_context,
            requesting_principal: &self.requesting_principal,
        }
        .encode(w, minor)
    }
}

/// A Request header made of borrowed parts: what a client writes on every call without
/// building (and allocating) a [`RequestHeader`]. The target and contexts are typically kept
/// by the caller across calls.
#[derive(Debug, Clone, Copy)]
pub struct RequestHeaderRef<'h> {
    /// Matches the Reply to the Request.
    pub request_id: u32,
    /// [`RESPONSE_NONE`], [`SYNC_WITH_SERVER`] or [`SYNC_WITH_TARGET`].
    pub response_flags: u8,
    /// The target object.
    pub target: &'h TargetAddress,
    /// Operation name.
    pub operation: &'h str,
    /// Service contexts.
    pub service_context: &'h ServiceContextList,
    /// `requesting_principal` (GIOP 1.0/1.1 only).
    pub requesting_principal: &'h [u8],
}

impl RequestHeaderRef<'_> {
    /// Writes the header that follows the 12-byte GIOP header of a GIOP 1.`minor` Request.
    pub fn encode(&self, w: &mut CdrWriter<'_>, minor: u8) -> Result<()> {
        let response_expected = self.response_flags & 1 != 0;
        if minor >= 2 {
            if let TargetAddress::Key(key) = self.target {
                if self.service_context.0.is_empty()
                    && encode_1_2_key(
                        w,
                        self.request_id,
                        self.response_flags,
                        &key.0,
                        self.operation,
                    )
                {
                    return Ok(());
                }
            }
            w.write_ulong(self.request_id);
            w.write_octet(self.response_flags);
            w.write_bytes(&[0; 3]);
            self.target.encode(w)?;
            encap::write_latin1(w, self.operation)?;
            return self.service_context.encode(w);
        }
        let TargetAddress::Key(key) = self.target else {
            return Err(GiopError::KeyAddressRequired { minor });
        };
        self.service_context.encode(w)?;
        w.write_ulong(self.request_id);
        w.write_boolean(response_expected);
        if minor == 1 {
            w.write_bytes(&[0; 3]);
        }
        w.write_length(key.0.len())?;
        w.write_bytes(&key.0);
        encap::write_latin1(w, self.operation)?;
        w.write_length(self.requesting_principal.len())?;
        w.write_bytes(self.requesting_principal);
        Ok(())
    }
}

/// The GIOP 1.2 header of almost every call (KeyAddr, ASCII operation, no service
/// contexts) in a few pieces: the same bytes as the field-by-field path, for a fraction
/// of the instructions. `false`: not that case, nothing written.
#[inline]
pub(crate) fn encode_1_2_key(
    w: &mut CdrWriter<'_>,
    request_id: u32,
    response_flags: u8,
    key: &[u8],
    operation: &str,
) -> bool {
    let op = operation.as_bytes();
    if !op.is_ascii() || key.len() > 1 << 30 || op.len() > 1 << 30 {
        return false;
    }
    let pad4 = |n: usize| n.wrapping_neg() & 3;
    let big = w.byte_order() == corbina_cdr::ByteOrder::Big;
    let ulong = |v: u32| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let short = |v: i16| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    // Fixed-size pieces cut to length: no memset and no copy calls but the key's and the
    // operation's. Zeros are the padding, the reserved octets, the NUL and the (empty)
    // context count.
    w.align(4);
    let mut head = [0; 16];
    head[0..4].copy_from_slice(&ulong(request_id));
    head[4] = response_flags;
    head[8..10].copy_from_slice(&short(crate::target_address::KEY_ADDR));
    head[12..16].copy_from_slice(&ulong(key.len() as u32));
    w.write_bytes(&head);
    w.write_bytes(key);
    let mut mid = [0; 8];
    let pad = pad4(key.len());
    mid[pad..pad + 4].copy_from_slice(&ulong(op.len() as u32 + 1));
    let at = w.len();
    w.write_bytes(&mid);
    w.truncate(at + pad + 4);
    w.write_bytes(op);
    let at = w.len();
    w.write_bytes(&[0; 8]);
    w.truncate(at + 1 + pad4(op.len() + 1) + 4);
    true
}

/// A Request header read in place, borrowing from the message: what a server decodes for
/// every request without allocating. The operation is borrowed when ASCII (always, for IDL
/// names), the object key is borrowed, and the service contexts stay in the message until
/// asked for. [`RequestHeaderView::to_header`] gives the owned [`RequestHeader`].
#[derive(Debug, Clone)]
pub struct RequestHeaderView<'a> {
    /// Matches the Reply to the Request.
    pub request_id: u32,
    /// [`RESPONSE_NONE`], [`SYNC_WITH_SERVER`] or [`SYNC_WITH_TARGET`].
    pub response_flags: u8,
    /// The target object.
    pub target: TargetAddressView<'a>,
    /// Operation name.
    pub operation: Cow<'a, str>,
    /// Service contexts.
    pub service_context: ServiceContextsView<'a>,
    /// `requesting_principal` (GIOP 1.0/1.1 only; empty in practice).
    pub requesting_principal: &'a [u8],
}

impl<'a> RequestHeaderView<'a> {
    /// Whether the client waits for a Reply.
    pub fn response_expected(&self) -> bool {
        self.response_flags & 1 != 0
    }

    /// Reads the header as [`RequestHeader::decode`] does (same checks, same end position).
    pub fn decode(r: &mut CdrReader<'a>, minor: u8) -> Result<RequestHeaderView<'a>> {
        if minor >= 2 {
            let request_id = r.read_ulong()?;
            let response_flags = r.read_octet()?;
            r.read_bytes(3)?;
            let target = TargetAddressView::decode(r)?;
            let operation = encap::read_latin1_cow(r)?;
            let service_context = ServiceContextsView::decode(r)?;
            return Ok(RequestHeaderView {
                request_id,
                response_flags,
                target,
                operation,
                service_context,
                requesting_principal: &[],
            });
        }
        let service_context = ServiceContextsView::decode(r)?;
        let request_id = r.read_ulong()?;
        let response_flags = if r.read_boolean()? {
            SYNC_WITH_TARGET
        } else {
            RESPONSE_NONE
        };
        if minor == 1 {
            r.read_bytes(3)?;
        }
        let target = TargetAddressView::Key(r.read_octet_seq()?);
        let operation = encap::read_latin1_cow(r)?;
        let requesting_principal = r.read_octet_seq()?;
        Ok(RequestHeaderView {
            request_id,
            response_flags,
            target,
            operation,
            service_context,
            requesting_principal,
        })
    }

    /// The owned header.
    pub fn to_header(&self) -> RequestHeader {
        RequestHeader {
            request_id: self.request_id,
            response_flags: self.response_flags,
            target: self.target.to_target(),
            operation: self.operation.clone().into_owned(),
            service_context: self.service_context.to_list(),
            requesting_principal: self.requesting_principal.to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::{MsgType, Version};
    use crate::message::{GiopMessage, MessageWriter};
    use corbina_cdr::{ByteOrder, CodeSets};

    #[test]
    fn one_block_1_2_header_matches_field_by_field() {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            for key_len in 0..9 {
                for op in ["", "a", "ab", "abc", "ping", "_is_a", "operation"] {
                    let key = ObjectKey::new((0..key_len as u8).collect::<Vec<_>>());
                    let target = TargetAddress::Key(key);
                    let contexts = ServiceContextList::new();
                    let h = RequestHeaderRef {
                        request_id: 0x0102_0304,
                        response_flags: SYNC_WITH_TARGET,
                        target: &target,
                        operation: op,
                        service_context: &contexts,
                        requesting_principal: &[],
                    };
                    let ctx = corbina_cdr::CdrContext::GIOP_1_2;
                    let mut fast = CdrWriter::with_byte_order(order, ctx).starting_at(12);
                    h.encode(&mut fast, 2).unwrap();
                    let mut slow = CdrWriter::with_byte_order(order, ctx).starting_at(12);
                    slow.write_ulong(h.request_id);
                    slow.write_octet(h.response_flags);
                    slow.write_bytes(&[0; 3]);
                    target.encode(&mut slow).unwrap();
                    encap::write_latin1(&mut slow, op).unwrap();
                    contexts.encode(&mut slow).unwrap();
                    assert_eq!(
                        fast.into_bytes(),
                        slow.into_bytes(),
                        "{order:?} {key_len} {op}"
                    );
                }
            }
        }
    }

    fn encode(h: &RequestHeader, v: Version, order: ByteOrder) -> Vec<u8> {
        MessageWriter::request(v, order, CodeSets::DEFAULT, h)
            .unwrap()
            .finish_bytes()
            .unwrap()
    }

    #[test]
    fn giop_1_0_layout() {
        let h = RequestHeader::new(4, ObjectKey::from("K"), "ping");
        let b = encode(&h, Version::V1_0, ByteOrder::Big);
        let expect = "47494f500100000000000024\
                      00000000 00000004 01000000 00000001 4b000000 00000005 70696e6700 000000 00000000";
        assert_eq!(hex::encode(&b), expect.replace(' ', ""));
        let m = crate::Message::from_bytes(b).unwrap();
        let GiopMessage::Request { header, body } = m.decode().unwrap() else {
            panic!()
        };
        assert_eq!(header, h);
        assert!(body.is_empty());
    }

    #[test]
    fn giop_1_1_reserved_octets_are_ignored() {
        let h = RequestHeader {
            response_flags: RESPONSE_NONE,
            ..RequestHeader::new(2, ObjectKey::from("K"), "op")
        };
        let mut b = encode(&h, Version::V1_1, ByteOrder::Little);
        assert_eq!(&b[16..20], [2, 0, 0, 0]);
        assert_eq!(&b[20..24], [0, 0, 0, 0]);
        b[21..24].copy_from_slice(b"xyz");
        let m = crate::Message::from_bytes(b).unwrap();
        let GiopMessage::Request { header, .. } = m.decode().unwrap() else {
            panic!()
        };
        assert_eq!(header, h);
        assert!(!header.response_expected());
    }

    #[test]
    fn giop_1_2_layout_and_body_alignment() {
        let h = RequestHeader::new(7, ObjectKey::from("KEY"), "fail");
        let mut mw =
            MessageWriter::request(Version::V1_2, ByteOrder::Big, CodeSets::DEFAULT, &h).unwrap();
        mw.body().write_long(7);
        let b = mw.finish_bytes().unwrap();
        // 12 header, id, flags+reserved, disposition+pad, key(4+3)+pad, op(4+5)+pad, contexts.
        assert_eq!(
            hex::encode(&b[..48]),
            "47494f500102000000000028000000070300000000000000000000034b4559\
             00000000056661696c0000000000000000"
        );
        assert_eq!(b.len(), 48 + 4);
        assert_eq!(&b[48..], [0, 0, 0, 7]);
        // No body: no padding.
        let b = encode(&h, Version::V1_2, ByteOrder::Big);
        assert_eq!(b.len(), 48);
        let m = crate::Message::from_bytes(b).unwrap();
        assert_eq!(m.header().msg_type, MsgType::Request);
        let GiopMessage::Request { header, body } = m.decode().unwrap() else {
            panic!()
        };
        assert_eq!(header, h);
        assert!(body.is_empty());
    }

    #[test]
    fn old_versions_need_a_key() {
        let mut h = RequestHeader::new(1, ObjectKey::from("K"), "op");
        h.target = TargetAddress::Profile(crate::TaggedProfile {
            tag: 0,
            profile_data: vec![],
        });
        let err =
            MessageWriter::request(Version::V1_1, ByteOrder::Big, CodeSets::DEFAULT, &h).err();
        assert_eq!(err, Some(GiopError::KeyAddressRequired { minor: 1 }));
    }
}
