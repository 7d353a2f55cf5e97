//! IDL `fixed<d,s>`: decimal fixed-point values, carried as packed BCD.

use crate::error::{MarshalError, Result};
use crate::reader::CdrReader;
use crate::writer::CdrWriter;
use std::fmt;

/// Most digits an IDL `fixed` may have.
pub const MAX_FIXED_DIGITS: u8 = 31;

/// A decimal fixed-point value: `value × 10^-scale`, with at most `digits` digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fixed {
    /// The unscaled value.
    pub value: i128,
    /// Total number of decimal digits of the IDL type (1..=31).
    pub digits: u8,
    /// Digits after the decimal point (≤ `digits`).
    pub scale: u8,
}

impl Fixed {
    /// A value for `fixed<digits, scale>`, checking that it fits.
    pub fn new(value: i128, digits: u8, scale: u8) -> Result<Fixed> {
        if digits == 0 || digits > MAX_FIXED_DIGITS || scale > digits {
            return Err(MarshalError::InvalidFixed {
                offset: 0,
                reason: "bad digits/scale",
            });
        }
        if value.unsigned_abs() >= 10u128.pow(u32::from(digits)) {
            return Err(MarshalError::InvalidFixed {
                offset: 0,
                reason: "too many digits",
            });
        }
        Ok(Fixed {
            value,
            digits,
            scale,
        })
    }

    /// Octets on the wire: one nibble per digit plus a sign nibble, rounded up.
    pub fn wire_len(digits: u8) -> usize {
        usize::from(digits) / 2 + 1
    }

    /// Writes the packed-BCD form (no alignment: `fixed` is an octet array).
    ///
    /// The fields are public, so they are checked here as [`Fixed::new`] would: bad
    /// digits/scale or a value with more than `digits` digits is an error.
    pub fn encode(&self, w: &mut CdrWriter<'_>) -> Result<()> {
        if self.digits == 0 || self.digits > MAX_FIXED_DIGITS || self.scale > self.digits {
            return Err(MarshalError::InvalidFixed {
                offset: 0,
                reason: "bad digits/scale",
            });
        }
        let n = Self::wire_len(self.digits);
        let mut out = [0u8; 16];
        let mut v = self.value.unsigned_abs();
        // Fill nibbles from the right: sign first, then digits.
        let mut nibbles = n * 2;
        let sign = if self.value < 0 { 0xd } else { 0xc };
        nibbles -= 1;
        out[nibbles / 2] |= sign;
        while nibbles > 0 {
            nibbles -= 1;
            let d = (v % 10) as u8;
            v /= 10;
            out[nibbles / 2] |= if nibbles.is_multiple_of(2) { d << 4 } else { d };
        }
        if v != 0 || self.value.unsigned_abs() >= 10u128.pow(u32::from(self.digits)) {
            return Err(MarshalError::InvalidFixed {
                offset: 0,
                reason: "too many digits",
            });
        }
        w.write_bytes(&out[..n]);
        Ok(())
    }

    /// Reads a value of `fixed<digits, scale>`.
    pub fn decode(r: &mut CdrReader<'_>, digits: u8, scale: u8) -> Result<Fixed> {
        let offset = r.position();
        if digits == 0 || digits > MAX_FIXED_DIGITS || scale > digits {
            return Err(MarshalError::InvalidFixed {
                offset,
                reason: "bad digits/scale",
            });
        }
        let bytes = r.read_bytes(Self::wire_len(digits))?;
        let last = bytes.len() * 2 - 1;
        let mut v: i128 = 0;
        for i in 0..last {
            let b = bytes[i / 2];
            let d = if i.is_multiple_of(2) { b >> 4 } else { b & 0xf };
            if d > 9 {
                return Err(MarshalError::InvalidFixed {
                    offset,
                    reason: "digit nibble above 9",
                });
            }
            v = v * 10 + i128::from(d);
        }
        let negative = match bytes[last / 2] & 0xf {
            0xd | 0xb => true,
            0xc | 0xa | 0xe | 0xf => false,
            _ => {
                return Err(MarshalError::InvalidFixed {
                    offset,
                    reason: "bad sign nibble",
                })
            }
        };
        if v >= 10i128.pow(u32::from(digits)) {
            return Err(MarshalError::InvalidFixed {
                offset,
                reason: "too many digits",
            });
        }
        Ok(Fixed {
            value: if negative { -v } else { v },
            digits,
            scale,
        })
    }
}

impl fmt::Display for Fixed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.value < 0 { "-" } else { "" };
        let abs = self.value.unsigned_abs();
        if self.scale == 0 {
            return write!(f, "{sign}{abs}");
        }
        let p = 10u128.pow(u32::from(self.scale));
        write!(
            f,
            "{sign}{}.{:0width$}",
            abs / p,
            abs % p,
            width = usize::from(self.scale)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ByteOrder, CdrContext};

    fn round_trip(f: Fixed) -> Vec<u8> {
        let mut w = CdrWriter::new(CdrContext::default());
        f.encode(&mut w).unwrap();
        let bytes = w.into_bytes();
        let mut r = CdrReader::new(&bytes, ByteOrder::NATIVE, CdrContext::default());
        assert_eq!(Fixed::decode(&mut r, f.digits, f.scale).unwrap(), f);
        bytes
    }

    #[test]
    fn packed_bcd() {
        // fixed<5,2> 123.45 → 12 34 5C
        assert_eq!(
            round_trip(Fixed::new(12345, 5, 2).unwrap()),
            [0x12, 0x34, 0x5c]
        );
        // fixed<4,1> -1.5 → 00 01 5D (even digit count: leading zero nibble)
        assert_eq!(
            round_trip(Fixed::new(-15, 4, 1).unwrap()),
            [0x00, 0x01, 0x5d]
        );
        assert_eq!(Fixed::new(-15, 4, 1).unwrap().to_string(), "-1.5");
        assert_eq!(Fixed::new(5, 3, 3).unwrap().to_string(), "0.005");
        round_trip(Fixed::new(10i128.pow(31) - 1, 31, 0).unwrap());
        assert!(Fixed::new(1000, 3, 0).is_err());
    }

    #[test]
    fn bad_nibbles_are_errors() {
        let mut r = CdrReader::new(&[0xa2, 0x3c], ByteOrder::Big, CdrContext::default());
        assert!(Fixed::decode(&mut r, 3, 0).is_err());
        let mut r = CdrReader::new(&[0x12, 0x33], ByteOrder::Big, CdrContext::default());
        assert!(Fixed::decode(&mut r, 3, 0).is_err());
        let mut r = CdrReader::new(&[0x12], ByteOrder::Big, CdrContext::default());
        assert!(Fixed::decode(&mut r, 3, 0).is_err());
    }
}
