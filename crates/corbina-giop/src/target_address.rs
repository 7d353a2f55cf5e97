//! `GIOP::TargetAddress`: how a GIOP 1.2 Request or LocateRequest names its target.

use std::borrow::Cow;

use corbina_cdr::{CdrReader, CdrWriter};

use crate::error::{GiopError, Result};
use crate::ior::{Ior, TaggedProfile};
use crate::object_key::ObjectKey;

/// `GIOP::KeyAddr`.
pub const KEY_ADDR: i16 = 0;
/// `GIOP::ProfileAddr`.
pub const PROFILE_ADDR: i16 = 1;
/// `GIOP::ReferenceAddr`.
pub const REFERENCE_ADDR: i16 = 2;

/// `GIOP::IORAddressingInfo`: a whole IOR and which of its profiles the client used.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IorAddressingInfo {
    /// Index into `ior.profiles`.
    pub selected_profile_index: u32,
    /// The reference.
    pub ior: Ior,
}

/// `GIOP::TargetAddress`, a union on `AddressingDisposition`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TargetAddress {
    /// KeyAddr (0): the object key (the only form before GIOP 1.2).
    Key(ObjectKey),
    /// ProfileAddr (1): the profile the client used.
    Profile(TaggedProfile),
    /// ReferenceAddr (2): the whole reference.
    Reference(IorAddressingInfo),
}

impl TargetAddress {
    /// The AddressingDisposition of this form.
    pub fn disposition(&self) -> i16 {
        match self {
            TargetAddress::Key(_) => KEY_ADDR,
            TargetAddress::Profile(_) => PROFILE_ADDR,
            TargetAddress::Reference(_) => REFERENCE_ADDR,
        }
    }

    /// The object key, when addressed by key.
    pub fn object_key(&self) -> Option<&ObjectKey> {
        match self {
            TargetAddress::Key(k) => Some(k),
            _ => None,
        }
    }

    /// The object key whatever the form: from the IIOP profile for ProfileAddr and
    /// ReferenceAddr (`None` if that profile is not IIOP or the index is out of range).
    pub fn resolve_key(&self) -> Result<Option<ObjectKey>> {
        let profile = match self {
            TargetAddress::Key(k) => return Ok(Some(k.clone())),
            TargetAddress::Profile(p) => Some(p),
            TargetAddress::Reference(info) => usize::try_from(info.selected_profile_index)
                .ok()
                .and_then(|i| info.ior.profiles.get(i)),
        };
        match profile.and_then(TaggedProfile::iiop) {
            Some(p) => Ok(Some(p?.object_key)),
            None => Ok(None),
        }
    }

    /// Reads the union.
    pub fn decode(r: &mut CdrReader<'_>) -> Result<TargetAddress> {
        Ok(match r.read_short()? {
            KEY_ADDR => TargetAddress::Key(ObjectKey(r.read_octet_seq()?.to_vec())),
            PROFILE_ADDR => TargetAddress::Profile(TaggedProfile::decode(r)?),
            REFERENCE_ADDR => {
                let selected_profile_index = r.read_ulong()?;
                let ior = Ior::decode(r)?;
                TargetAddress::Reference(IorAddressingInfo {
                    selected_profile_index,
                    ior,
                })
            }
            d => return Err(GiopError::UnknownAddressingDisposition(d)),
        })
    }

    /// Writes the union.
    pub fn encode(&self, w: &mut CdrWriter<'_>) -> Result<()> {
        w.write_short(self.disposition());
        match self {
            TargetAddress::Key(k) => {
                w.write_length(k.0.len())?;
                w.write_bytes(&k.0);
            }
            TargetAddress::Profile(p) => p.encode(w)?,
            TargetAddress::Reference(info) => {
                w.write_ulong(info.selected_profile_index);
                info.ior.encode(w)?;
            }
        }
        Ok(())
    }
}

/// A [`TargetAddress`] read in place: the object key (the usual form) borrowed from the
/// message; the rare ProfileAddr and ReferenceAddr forms decoded as owned values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetAddressView<'a> {
    /// KeyAddr: the object key's bytes.
    Key(&'a [u8]),
    /// ProfileAddr or ReferenceAddr.
    Other(TargetAddress),
}

impl<'a> TargetAddressView<'a> {
    /// Reads the union (GIOP 1.2), as [`TargetAddress::decode`] does.
    pub fn decode(r: &mut CdrReader<'a>) -> Result<TargetAddressView<'a>> {
        Ok(match r.read_short()? {
            KEY_ADDR => TargetAddressView::Key(r.read_octet_seq()?),
            PROFILE_ADDR => {
                TargetAddressView::Other(TargetAddress::Profile(TaggedProfile::decode(r)?))
            }
            REFERENCE_ADDR => {
                let selected_profile_index = r.read_ulong()?;
                let ior = Ior::decode(r)?;
                TargetAddressView::Other(TargetAddress::Reference(IorAddressingInfo {
                    selected_profile_index,
                    ior,
                }))
            }
            d => return Err(GiopError::UnknownAddressingDisposition(d)),
        })
    }

    /// The object key whatever the form, as [`TargetAddress::resolve_key`]; borrowed when
    /// addressed by key. Inlined (every request's): the key form is a match arm.
    #[inline]
    pub fn resolve_key(&self) -> Result<Option<Cow<'a, [u8]>>> {
        match self {
            TargetAddressView::Key(k) => Ok(Some(Cow::Borrowed(*k))),
            TargetAddressView::Other(t) => resolve_other(t),
        }
    }

    /// The owned [`TargetAddress`].
    pub fn to_target(&self) -> TargetAddress {
        match self {
            TargetAddressView::Key(k) => TargetAddress::Key(ObjectKey(k.to_vec())),
            TargetAddressView::Other(t) => t.clone(),
        }
    }
}

/// The key of a profile or reference address (out of line: rare).
#[inline(never)]
fn resolve_other<'a>(t: &TargetAddress) -> Result<Option<Cow<'a, [u8]>>> {
    Ok(t.resolve_key()?.map(|k| Cow::Owned(k.0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use corbina_cdr::{ByteOrder, CdrContext};

    fn round_trip(t: &TargetAddress, order: ByteOrder) -> Vec<u8> {
        let mut w = CdrWriter::with_byte_order(order, CdrContext::GIOP_1_2);
        t.encode(&mut w).unwrap();
        let bytes = w.into_bytes();
        let mut r = CdrReader::new(&bytes, order, CdrContext::GIOP_1_2);
        let mut back = TargetAddress::decode(&mut r).unwrap();
        r.expect_end().unwrap();
        if let (TargetAddress::Reference(a), TargetAddress::Reference(b)) = (&mut back, t) {
            a.ior.byte_order = b.ior.byte_order;
        }
        assert_eq!(&back, t);
        bytes
    }

    #[test]
    fn all_three_forms() {
        let key = TargetAddress::Key(ObjectKey::from("ab"));
        assert_eq!(
            round_trip(&key, ByteOrder::Big),
            [0, 0, 0, 0, 0, 0, 0, 2, b'a', b'b']
        );
        assert_eq!(
            round_trip(&key, ByteOrder::Little),
            [0, 0, 0, 0, 2, 0, 0, 0, b'a', b'b']
        );
        let p = TaggedProfile {
            tag: 9,
            profile_data: vec![1],
        };
        let prof = TargetAddress::Profile(p.clone());
        assert_eq!(
            round_trip(&prof, ByteOrder::Big),
            [0, 1, 0, 0, 0, 0, 0, 9, 0, 0, 0, 1, 1]
        );
        assert_eq!(prof.resolve_key().unwrap(), None);
        let ior = Ior {
            type_id: "IDL:X:1.0".into(),
            profiles: vec![p],
            byte_order: ByteOrder::Big,
        };
        let r = TargetAddress::Reference(IorAddressingInfo {
            selected_profile_index: 5,
            ior,
        });
        round_trip(&r, ByteOrder::Little);
        assert_eq!(r.resolve_key().unwrap(), None);
        let bad = [0, 3];
        let mut rd = CdrReader::new(&bad, ByteOrder::Big, CdrContext::GIOP_1_2);
        assert_eq!(
            TargetAddress::decode(&mut rd),
            Err(GiopError::UnknownAddressingDisposition(3))
        );
    }
}
