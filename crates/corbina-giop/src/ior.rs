//! Interoperable Object References (`IOP::IOR`) and their stringified `IOR:` hex form.

use std::fmt;
use std::str::FromStr;

use corbina_cdr::{ByteOrder, CdrReader, CdrWriter, MarshalError};
use thiserror::Error;

use crate::encap;
use crate::error::Result;
use crate::iiop::IiopProfile;

/// `IOP::TAG_INTERNET_IOP`: an IIOP profile.
pub const TAG_INTERNET_IOP: u32 = 0;
/// `IOP::TAG_MULTIPLE_COMPONENTS`: a profile that is only a list of components.
pub const TAG_MULTIPLE_COMPONENTS: u32 = 1;

/// A tagged profile (`IOP::TaggedProfile`), kept byte for byte whatever its tag.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TaggedProfile {
    /// `tag`.
    pub tag: u32,
    /// `profile_data`: an encapsulation for the standard tags.
    pub profile_data: Vec<u8>,
}

impl TaggedProfile {
    /// Reads one tagged profile.
    pub fn decode(r: &mut CdrReader<'_>) -> Result<TaggedProfile> {
        let tag = r.read_ulong()?;
        let profile_data = r.read_octet_seq()?.to_vec();
        Ok(TaggedProfile { tag, profile_data })
    }

    /// Writes it.
    pub fn encode(&self, w: &mut CdrWriter<'_>) -> Result<()> {
        w.write_ulong(self.tag);
        w.write_length(self.profile_data.len())?;
        w.write_bytes(&self.profile_data);
        Ok(())
    }

    /// The decoded IIOP profile, if this is one.
    pub fn iiop(&self) -> Option<Result<IiopProfile>> {
        (self.tag == TAG_INTERNET_IOP).then(|| IiopProfile::decode_body(&self.profile_data))
    }
}

/// An object reference: a repository id and the profiles that say how to reach it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ior {
    /// Repository id of the most derived interface (`IDL:Bench:1.0`), or empty.
    pub type_id: String,
    /// Profiles, in the order the server listed them.
    pub profiles: Vec<TaggedProfile>,
    /// Byte order of the stringified/encapsulated form (ignored when the IOR is written
    /// inside a message, which has its own order).
    pub byte_order: ByteOrder,
}

impl Ior {
    /// The nil reference: no type id, no profiles.
    pub fn nil() -> Ior {
        Ior {
            type_id: String::new(),
            profiles: Vec::new(),
            byte_order: ByteOrder::NATIVE,
        }
    }

    /// Whether this is the nil reference.
    pub fn is_nil(&self) -> bool {
        self.profiles.is_empty()
    }

    /// Reads an IOR from a stream (a LOCATION_FORWARD body, a TargetAddress, an `Object`).
    pub fn decode(r: &mut CdrReader<'_>) -> Result<Ior> {
        let type_id = encap::read_latin1(r)?;
        // A profile is at least a tag and a length.
        let n = r.read_length(8)?;
        let mut profiles = Vec::with_capacity(n);
        for _ in 0..n {
            profiles.push(TaggedProfile::decode(r)?);
        }
        Ok(Ior {
            type_id,
            profiles,
            byte_order: r.byte_order(),
        })
    }

    /// Writes the IOR into a stream, in the stream's byte order.
    pub fn encode(&self, w: &mut CdrWriter<'_>) -> Result<()> {
        encap::write_latin1(w, &self.type_id)?;
        w.write_length(self.profiles.len())?;
        for p in &self.profiles {
            p.encode(w)?;
        }
        Ok(())
    }

    /// Decodes the encapsulated form (byte-order octet then the IOR), which must be used up.
    pub fn from_encapsulation(data: &[u8]) -> Result<Ior> {
        let mut r = encap::reader(data)?;
        let ior = Ior::decode(&mut r)?;
        r.expect_end()?;
        Ok(ior)
    }

    /// The encapsulated form, in `self.byte_order`.
    pub fn to_encapsulation(&self) -> Result<Vec<u8>> {
        let mut res = Ok(());
        let bytes = encap::write(self.byte_order, |w| {
            res = self.encode(w);
            Ok(())
        })?;
        res?;
        Ok(bytes)
    }

    /// The IIOP profiles, decoded (other profiles are skipped).
    pub fn iiop_profiles(&self) -> Result<Vec<IiopProfile>> {
        self.profiles
            .iter()
            .filter_map(TaggedProfile::iiop)
            .collect()
    }

    /// The stringified form, `IOR:` and lower-case hex.
    pub fn to_stringified(&self) -> Result<String> {
        let bytes = self.to_encapsulation()?;
        Ok(format!("IOR:{}", crate::object_key::to_hex(&bytes)))
    }

    /// Parses a stringified IOR. Hex digits and the `IOR:` prefix may be in either case;
    /// anything else (whitespace, odd length, bytes after the IOR) is an error.
    pub fn from_stringified(s: &str) -> Result<Ior, IorStringError> {
        let hex = match s.get(..4) {
            Some(p) if p.eq_ignore_ascii_case("IOR:") => &s[4..],
            _ => return Err(IorStringError::MissingPrefix),
        };
        if hex.len() % 2 != 0 {
            return Err(IorStringError::OddLength(hex.len()));
        }
        let mut bytes = Vec::with_capacity(hex.len() / 2);
        for (i, pair) in hex.as_bytes().chunks_exact(2).enumerate() {
            let (hi, lo) = match *pair {
                [a, b] => (a, b),
                _ => return Err(IorStringError::OddLength(hex.len())),
            };
            match (hex_value(hi), hex_value(lo)) {
                (Some(h), Some(l)) => bytes.push(h << 4 | l),
                (None, _) => {
                    return Err(IorStringError::NotHex {
                        position: 4 + 2 * i,
                    })
                }
                (_, None) => {
                    return Err(IorStringError::NotHex {
                        position: 5 + 2 * i,
                    })
                }
            }
        }
        Ior::from_encapsulation(&bytes).map_err(|e| match e {
            crate::GiopError::Marshal(m) => IorStringError::Marshal(m),
            other => IorStringError::Giop(Box::new(other)),
        })
    }
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Why a stringified IOR could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum IorStringError {
    /// The string does not start with `IOR:`.
    #[error("missing IOR: prefix")]
    MissingPrefix,
    /// An odd number of hex digits.
    #[error("odd number of hex digits ({0})")]
    OddLength(usize),
    /// A character that is not a hex digit.
    #[error("not a hex digit at position {position}")]
    NotHex {
        /// Character index in the string.
        position: usize,
    },
    /// The bytes are not a valid encapsulated IOR (trailing bytes included).
    #[error("invalid IOR: {0}")]
    Marshal(MarshalError),
    /// Another decoding error.
    #[error("invalid IOR: {0}")]
    Giop(Box<crate::GiopError>),
}

/// Lower-case stringified form; an IOR that cannot be encoded (a length over 4 GiB) shows
/// as `IOR:` alone.
impl fmt::Display for Ior {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_stringified() {
            Ok(s) => f.write_str(&s),
            Err(_) => f.write_str("IOR:"),
        }
    }
}

impl FromStr for Ior {
    type Err = IorStringError;
    fn from_str(s: &str) -> Result<Ior, IorStringError> {
        Ior::from_stringified(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iiop::TaggedComponent;
    use crate::{ObjectKey, Version};

    fn sample() -> Ior {
        let p = IiopProfile {
            version: Version::V1_2,
            host: "::1".into(),
            port: 2809,
            object_key: ObjectKey::from("k"),
            components: vec![TaggedComponent::orb_type(7, ByteOrder::Big).unwrap()],
            byte_order: ByteOrder::Big,
        };
        Ior {
            type_id: "IDL:A:1.0".into(),
            profiles: vec![
                p.to_tagged().unwrap(),
                TaggedProfile {
                    tag: TAG_MULTIPLE_COMPONENTS,
                    profile_data: vec![0, 0, 0, 0, 0],
                },
            ],
            byte_order: ByteOrder::Big,
        }
    }

    #[test]
    fn stringified_round_trip() {
        let ior = sample();
        let s = ior.to_string();
        assert!(s.starts_with("IOR:000000000000000a49444c3a413a312e300000000000000200000000"));
        assert_eq!(s.parse::<Ior>().unwrap(), ior);
        let upper = format!("ior:{}", s[4..].to_uppercase());
        assert_eq!(Ior::from_stringified(&upper).unwrap(), ior);
        assert_eq!(ior.iiop_profiles().unwrap()[0].port, 2809);
        assert!(Ior::nil().is_nil());
        let nil = Ior::nil().to_string();
        assert_eq!(nil.parse::<Ior>().unwrap(), Ior::nil());
    }

    #[test]
    fn strict_about_the_rest() {
        let s = sample().to_string();
        assert_eq!(
            Ior::from_stringified(&s[1..]),
            Err(IorStringError::MissingPrefix)
        );
        assert_eq!(
            Ior::from_stringified(&s[..s.len() - 1]),
            Err(IorStringError::OddLength(s.len() - 5))
        );
        let bad = format!("{}zz", &s[..s.len() - 2]);
        assert_eq!(
            Ior::from_stringified(&bad),
            Err(IorStringError::NotHex {
                position: s.len() - 2
            })
        );
        let trailing = format!("{s}00");
        assert!(matches!(
            Ior::from_stringified(&trailing),
            Err(IorStringError::Marshal(MarshalError::TrailingData { .. }))
        ));
        assert!(Ior::from_stringified(&format!(" {s}")).is_err());
        assert!(Ior::from_stringified("IOR:").is_err());
        assert!(Ior::from_stringified("IOR:02").is_err());
        assert!(Ior::from_stringified("IOR:00ffffffff").is_err());
        assert!(Ior::from_stringified("IOR\u{e9}").is_err());
    }
}
