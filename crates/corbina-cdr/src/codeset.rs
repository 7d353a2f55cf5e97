//! Code sets for `char`/`string` and `wchar`/`wstring` data, and the conversions between
//! Rust's Unicode strings and what travels on the wire.
//!
//! GIOP 1.1+ negotiates a *transmission code set* (TCS) per connection from the CODE_SETS
//! component of the server's IOR and the client's CodeSets service context; the negotiation
//! lives in the ORB runtime, the encoders and decoders for each code set live here.

use crate::error::{MarshalError, Result};

/// A code set id from the OSF Character and Code Set Registry, as carried in IORs and
/// CodeSets service contexts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CodeSetId(pub u32);

impl CodeSetId {
    /// ISO 8859-1 (Latin-1): the default char code set when none is negotiated.
    pub const ISO_8859_1: CodeSetId = CodeSetId(0x0001_0001);
    /// ISO 8859-15 (Latin-9).
    pub const ISO_8859_15: CodeSetId = CodeSetId(0x0001_000f);
    /// UCS-2 level 1.
    pub const UCS_2_L1: CodeSetId = CodeSetId(0x0001_0100);
    /// UTF-16 (ISO 10646 UTF-16).
    pub const UTF_16: CodeSetId = CodeSetId(0x0001_0109);
    /// UTF-8.
    pub const UTF_8: CodeSetId = CodeSetId(0x0501_0001);

    /// A readable name for the ids Corbina knows, for catior-style output.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            CodeSetId::ISO_8859_1 => "ISO-8859-1",
            CodeSetId::ISO_8859_15 => "ISO-8859-15",
            CodeSetId::UCS_2_L1 => "UCS-2-L1",
            CodeSetId::UTF_16 => "UTF-16",
            CodeSetId::UTF_8 => "UTF-8",
            CodeSetId(0x0001_0104) => "UCS-2-L3",
            CodeSetId(0x0001_0106) => "UCS-4",
            CodeSetId(0x0001_0020) => "ASCII",
            _ => return None,
        })
    }
}

/// The transmission code set used for `char` and `string` data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CharCodeSet {
    /// ISO 8859-1: one octet per character, U+0000..=U+00FF only. The GIOP default.
    #[default]
    Iso8859_1,
    /// UTF-8: Rust strings travel unchanged.
    Utf8,
}

impl CharCodeSet {
    /// The registry id of this code set.
    pub fn id(self) -> CodeSetId {
        match self {
            CharCodeSet::Iso8859_1 => CodeSetId::ISO_8859_1,
            CharCodeSet::Utf8 => CodeSetId::UTF_8,
        }
    }

    /// The code set for a registry id, if Corbina can convert it.
    pub fn from_id(id: CodeSetId) -> Option<CharCodeSet> {
        match id {
            CodeSetId::ISO_8859_1 => Some(CharCodeSet::Iso8859_1),
            CodeSetId::UTF_8 => Some(CharCodeSet::Utf8),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            CharCodeSet::Iso8859_1 => "ISO-8859-1",
            CharCodeSet::Utf8 => "UTF-8",
        }
    }

    /// Appends the wire form of `s` to `out`. Fails if a character cannot be carried.
    pub fn encode_str(self, s: &str, out: &mut Vec<u8>) -> Result<()> {
        match self {
            CharCodeSet::Utf8 => out.extend_from_slice(s.as_bytes()),
            CharCodeSet::Iso8859_1 => {
                if s.is_ascii() {
                    out.extend_from_slice(s.as_bytes());
                } else {
                    out.reserve(s.len());
                    for c in s.chars() {
                        out.push(latin1_byte(c)?);
                    }
                }
            }
        }
        Ok(())
    }

    /// The number of octets `s` takes on the wire, NUL excluded.
    pub fn encoded_len(self, s: &str) -> usize {
        match self {
            CharCodeSet::Utf8 => s.len(),
            CharCodeSet::Iso8859_1 if s.is_ascii() => s.len(),
            CharCodeSet::Iso8859_1 => s.chars().count(),
        }
    }

    /// Converts wire bytes (no NUL) to a Rust string. `offset` locates errors.
    pub fn decode_str(self, bytes: &[u8], offset: usize) -> Result<String> {
        match self {
            CharCodeSet::Utf8 => match std::str::from_utf8(bytes) {
                Ok(s) => Ok(s.to_owned()),
                Err(e) => Err(MarshalError::InvalidCharData {
                    offset: offset + e.valid_up_to(),
                    code_set: self.name(),
                }),
            },
            CharCodeSet::Iso8859_1 => {
                if bytes.is_ascii() {
                    // ASCII is valid UTF-8: one copy, no per-byte work.
                    Ok(String::from_utf8_lossy(bytes).into_owned())
                } else {
                    Ok(bytes.iter().map(|&b| char::from(b)).collect())
                }
            }
        }
    }

    /// The wire octet for a single IDL `char` given as a Unicode scalar.
    pub fn encode_char(self, c: char) -> Result<u8> {
        match self {
            // A multi-byte code set cannot carry a non-ASCII char in one octet.
            CharCodeSet::Utf8 if !c.is_ascii() => Err(MarshalError::NotRepresentable {
                code_point: c as u32,
                code_set: self.name(),
            }),
            CharCodeSet::Utf8 => Ok(c as u8),
            CharCodeSet::Iso8859_1 => latin1_byte(c),
        }
    }
}

fn latin1_byte(c: char) -> Result<u8> {
    u8::try_from(u32::from(c)).map_err(|_| MarshalError::NotRepresentable {
        code_point: c as u32,
        code_set: "ISO-8859-1",
    })
}

/// The transmission code set used for `wchar` and `wstring` data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WCharCodeSet {
    /// UTF-16: surrogate pairs allowed; GIOP 1.2 honours a byte-order mark.
    #[default]
    Utf16,
    /// UCS-2: the Basic Multilingual Plane only.
    Ucs2,
}

impl WCharCodeSet {
    /// The registry id of this code set.
    pub fn id(self) -> CodeSetId {
        match self {
            WCharCodeSet::Utf16 => CodeSetId::UTF_16,
            WCharCodeSet::Ucs2 => CodeSetId::UCS_2_L1,
        }
    }

    /// The code set for a registry id, if Corbina can convert it.
    pub fn from_id(id: CodeSetId) -> Option<WCharCodeSet> {
        match id {
            CodeSetId::UTF_16 => Some(WCharCodeSet::Utf16),
            CodeSetId::UCS_2_L1 => Some(WCharCodeSet::Ucs2),
            _ => None,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            WCharCodeSet::Utf16 => "UTF-16",
            WCharCodeSet::Ucs2 => "UCS-2",
        }
    }

    /// UTF-16 code units of `s`, checking UCS-2's BMP restriction.
    pub fn encode_units(self, s: &str) -> Result<Vec<u16>> {
        if self == WCharCodeSet::Ucs2 {
            if let Some(c) = s.chars().find(|&c| u32::from(c) > 0xffff) {
                return Err(MarshalError::NotRepresentable {
                    code_point: c as u32,
                    code_set: self.name(),
                });
            }
        }
        Ok(s.encode_utf16().collect())
    }

    /// A Rust string from UTF-16 code units; unpaired surrogates are an error.
    pub fn decode_units(self, units: &[u16], offset: usize) -> Result<String> {
        char::decode_utf16(units.iter().copied())
            .collect::<std::result::Result<String, _>>()
            .map_err(|_| MarshalError::InvalidCharData {
                offset,
                code_set: self.name(),
            })
    }
}

/// The code sets a stream uses: what the connection negotiated, or the GIOP defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CodeSets {
    /// Transmission code set for `char`/`string`.
    pub char_set: CharCodeSet,
    /// Transmission code set for `wchar`/`wstring`; `None` when nothing was negotiated,
    /// in which case wide characters cannot be sent (CODESET_INCOMPATIBLE / BAD_PARAM).
    pub wchar_set: Option<WCharCodeSet>,
}

impl CodeSets {
    /// What GIOP assumes when nothing was negotiated: ISO-8859-1 and no wide characters.
    pub const DEFAULT: CodeSets = CodeSets {
        char_set: CharCodeSet::Iso8859_1,
        wchar_set: None,
    };
    /// UTF-8 for char data and UTF-16 for wide data: what two Corbina peers agree on.
    pub const UNICODE: CodeSets = CodeSets {
        char_set: CharCodeSet::Utf8,
        wchar_set: Some(WCharCodeSet::Utf16),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_round_trip_and_limits() {
        let mut out = Vec::new();
        CharCodeSet::Iso8859_1.encode_str("été", &mut out).unwrap();
        assert_eq!(out, [0xe9, b't', 0xe9]);
        assert_eq!(CharCodeSet::Iso8859_1.decode_str(&out, 0).unwrap(), "été");
        assert_eq!(CharCodeSet::Iso8859_1.encoded_len("été"), 3);
        let err = CharCodeSet::Iso8859_1
            .encode_str("€", &mut out)
            .unwrap_err();
        assert!(matches!(
            err,
            MarshalError::NotRepresentable {
                code_point: 0x20ac,
                ..
            }
        ));
    }

    #[test]
    fn utf8_validation_names_the_offset() {
        let err = CharCodeSet::Utf8.decode_str(&[b'a', 0xff], 10).unwrap_err();
        assert_eq!(
            err,
            MarshalError::InvalidCharData {
                offset: 11,
                code_set: "UTF-8"
            }
        );
        assert!(CharCodeSet::Utf8.encode_char('é').is_err());
        assert_eq!(CharCodeSet::Iso8859_1.encode_char('é').unwrap(), 0xe9);
    }

    #[test]
    fn utf16_surrogates() {
        let units = WCharCodeSet::Utf16.encode_units("a😀").unwrap();
        assert_eq!(units, [0x61, 0xd83d, 0xde00]);
        assert_eq!(WCharCodeSet::Utf16.decode_units(&units, 0).unwrap(), "a😀");
        assert!(WCharCodeSet::Utf16.decode_units(&[0xd83d], 0).is_err());
        assert!(WCharCodeSet::Ucs2.encode_units("😀").is_err());
    }

    #[test]
    fn ids() {
        assert_eq!(
            CharCodeSet::from_id(CodeSetId(0x05010001)),
            Some(CharCodeSet::Utf8)
        );
        assert_eq!(CodeSetId::UTF_16.name(), Some("UTF-16"));
        assert_eq!(
            WCharCodeSet::from_id(CodeSetId(0x00010109)),
            Some(WCharCodeSet::Utf16)
        );
    }
}
