//! `BinStruct`, written by hand the way the IDL compiler writes a fixed-size struct:
//!
//! ```idl
//! struct BinStruct { short s; char c; long l; octet o; double d; };
//! ```
//!
//! From an 8-aligned start its CDR layout is s@0, c@2, l@4, o@8, d@16: 24 octets, and the
//! next element starts 8-aligned again, so a run of them is one block of `n × 24` octets.
//! Shared by the round-trip tests (which check the block path against the field-by-field
//! path at every alignment and in both byte orders) and the `sequences` bench.

use corbina_cdr::{CdrDecode, CdrEncode, CdrReader, CdrWriter, Result};

/// IDL `struct BinStruct { short s; char c; long l; octet o; double d; }`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BinStruct {
    pub s: i16,
    pub c: u8,
    pub l: i32,
    pub o: u8,
    pub d: f64,
}

impl BinStruct {
    /// Octets from an 8-aligned start to the end of `d`.
    pub const BLOCK_SIZE: usize = 24;
    /// Alignment of the largest member.
    pub const ALIGN: usize = 8;

    /// Field by field, every member aligned on its own: what a run of them starting
    /// misaligned needs, and the reference the block paths are tested against.
    #[inline]
    pub fn encode_fields(&self, w: &mut CdrWriter<'_>) {
        w.write_short(self.s);
        w.write_char(self.c);
        w.write_long(self.l);
        w.write_octet(self.o);
        w.write_double(self.d);
    }

    /// Field by field (see [`BinStruct::encode_fields`]).
    #[inline]
    pub fn decode_fields(r: &mut CdrReader<'_>) -> Result<Self> {
        Ok(BinStruct {
            s: r.read_short()?,
            c: r.read_char()?,
            l: r.read_long()?,
            o: r.read_octet()?,
            d: r.read_double()?,
        })
    }

    #[inline(always)]
    fn write_chunk(self, out: &mut [u8; 24], swap: bool) {
        let (s, l, d) = if swap {
            (
                self.s.swap_bytes(),
                self.l.swap_bytes(),
                self.d.to_bits().swap_bytes(),
            )
        } else {
            (self.s, self.l, self.d.to_bits())
        };
        out[0..2].copy_from_slice(&s.to_ne_bytes());
        out[2] = self.c;
        out[4..8].copy_from_slice(&l.to_ne_bytes());
        out[8] = self.o;
        out[16..24].copy_from_slice(&d.to_ne_bytes());
    }

    #[inline(always)]
    fn from_chunk(c: &[u8; 24], swap: bool) -> Self {
        let s = i16::from_ne_bytes(field(c, 0));
        let l = i32::from_ne_bytes(field(c, 4));
        let d = u64::from_ne_bytes(field(c, 16));
        let (s, l, d) = if swap {
            (s.swap_bytes(), l.swap_bytes(), d.swap_bytes())
        } else {
            (s, l, d)
        };
        BinStruct {
            s,
            c: c[2],
            l,
            o: c[8],
            d: f64::from_bits(d),
        }
    }
}

#[inline(always)]
fn field<const N: usize>(c: &[u8; 24], at: usize) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&c[at..at + N]);
    a
}

impl CdrEncode for BinStruct {
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        self.encode_fields(w);
        Ok(())
    }

    fn encode_slice<'a>(mut items: &'a [Self], w: &mut CdrWriter<'a>) -> Result<()> {
        // The fixed layout holds only from an 8-aligned start.
        while let Some((first, rest)) = items.split_first() {
            if w.position().is_multiple_of(Self::ALIGN) {
                break;
            }
            first.encode_fields(w);
            items = rest;
        }
        if items.is_empty() {
            return Ok(());
        }
        let swap = w.swaps();
        let block = w.reserve_block(Self::ALIGN, items.len() * Self::BLOCK_SIZE);
        let (chunks, _) = block.as_chunks_mut::<24>();
        // Two loops so each is monomorphic in `swap` and the compiler can vectorise.
        if !swap {
            for (out, item) in chunks.iter_mut().zip(items) {
                item.write_chunk(out, false);
            }
        } else {
            for (out, item) in chunks.iter_mut().zip(items) {
                item.write_chunk(out, true);
            }
        }
        Ok(())
    }
}

impl<'a> CdrDecode<'a> for BinStruct {
    /// The members' sizes without padding: a safe lower bound at any alignment.
    const MIN_WIRE_SIZE: usize = 2 + 1 + 4 + 1 + 8;

    fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
        Self::decode_fields(r)
    }

    fn decode_vec(r: &mut CdrReader<'a>, count: usize) -> Result<Vec<Self>> {
        r.check_length(count, Self::MIN_WIRE_SIZE)?;
        let mut v = Vec::with_capacity(count);
        let mut left = count;
        while left > 0 && !r.block_aligned(Self::ALIGN, left * Self::BLOCK_SIZE) {
            v.push(Self::decode_fields(r)?);
            left -= 1;
        }
        if left == 0 {
            return Ok(v);
        }
        let block = r.read_block(Self::ALIGN, left * Self::BLOCK_SIZE)?;
        let (chunks, _) = block.as_chunks::<24>();
        if !r.swaps() {
            v.extend(chunks.iter().map(|c| Self::from_chunk(c, false)));
        } else {
            v.extend(chunks.iter().map(|c| Self::from_chunk(c, true)));
        }
        Ok(v)
    }
}
