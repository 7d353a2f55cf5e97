//! The CDR decoder: reads values from a borrowed buffer, checking every length against the
//! bytes that remain before using it.

use crate::codeset::WCharCodeSet;
use crate::error::{MarshalError, Result};
use crate::primitive::{ByteOrder, LongDouble, Primitive};
use crate::writer::CdrContext;

/// How deep encapsulations and recursive values may nest before the reader gives up.
pub const DEFAULT_MAX_DEPTH: u32 = 512;

/// A point where alignment restarts inside a reassembled stream.
///
/// GIOP 1.1 fragments align their data relative to each Fragment's own header (as omniORB
/// does), so a stream glued together from them needs to know where each fragment's data
/// began and where its alignment origin was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlignBreak {
    /// Index in the reader's buffer where the fragment's data starts.
    pub at: usize,
    /// Index (possibly before the buffer, hence signed) that alignment is relative to after it.
    pub origin: isize,
}

/// A CDR decoder over borrowed bytes.
///
/// The reader honours the stream's byte order and swaps only when it differs from the
/// machine's. Positions in errors are indices into the buffer it was created with.
#[derive(Debug, Clone)]
pub struct CdrReader<'a> {
    buf: &'a [u8],
    pos: usize,
    end: usize,
    origin: isize,
    /// Whether the stream's byte order is not the machine's (the order itself is derived
    /// from it: one field less keeps the reader at 80 bytes, built per request).
    swap: bool,
    ctx: CdrContext,
    breaks: &'a [AlignBreak],
    /// Where alignment leaves the hot path: the nearer of the next alignment restart and
    /// `chunk_end`, kept by [`CdrReader::stop_at`] once made (0: find the restart again). Scalar
    /// reads need this one compare; arrays and blocks, which may cross fragment breaks,
    /// compare against `chunk_end` itself.
    next_break: usize,
    /// End of the open value chunk (`u32::MAX`: none), see [`CdrReader::set_chunk_end`]. A
    /// `u32` fits in the struct's padding, so readers cost no more to make on the call path;
    /// GIOP sizes are 32-bit, and an end past 4 GiB reads as a bad chunk (MARSHAL), never
    /// out of bounds.
    chunk_end: u32,
    depth: u32,
    max_depth: u32,
}

macro_rules! read_prim {
    ($(#[$m:meta])* $name:ident, $t:ty) => {
        $(#[$m])*
        #[inline]
        pub fn $name(&mut self) -> Result<$t> {
            self.read_primitive()
        }
    };
}

impl<'a> CdrReader<'a> {
    /// A reader over `buf` in `order`; alignment origin at `buf[0]`.
    #[inline]
    pub fn new(buf: &'a [u8], order: ByteOrder, ctx: CdrContext) -> Self {
        CdrReader {
            buf,
            pos: 0,
            end: buf.len(),
            origin: 0,
            swap: order.needs_swap(),
            ctx,
            breaks: &[],
            next_break: usize::MAX,
            chunk_end: u32::MAX,
            depth: 0,
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }

    /// Starts reading at `pos` of the buffer, alignment still relative to `buf[0]` (a body
    /// following a GIOP header in the same buffer).
    #[inline]
    pub fn starting_at(mut self, pos: usize) -> Self {
        self.pos = pos.min(self.end);
        self
    }

    /// Declares that `buf[0]` is at `offset` in the stream for alignment purposes.
    #[inline]
    pub fn with_stream_offset(mut self, offset: usize) -> Self {
        self.origin = (offset as isize).wrapping_neg();
        self
    }

    /// Alignment restarts for reassembled GIOP 1.1 fragments (sorted by `at`). Part of making
    /// a reader: no value chunk is open yet.
    #[inline]
    pub fn with_align_breaks(mut self, breaks: &'a [AlignBreak]) -> Self {
        debug_assert_eq!(
            self.chunk_end,
            u32::MAX,
            "align breaks set inside a value chunk"
        );
        self.breaks = breaks;
        self.next_break = breaks.first().map_or(usize::MAX, |b| b.at);
        self
    }

    /// Declares where the open chunk of a chunked value ends (`None`: no chunk is open).
    ///
    /// While a chunk is open, a read that reaches its end steps over the next chunk's length
    /// and goes on in that chunk: a peer may end a chunk between any two primitives of a state
    /// member (CORBA 3.0 §15.3.4.6 only forbids splitting a primitive, a string or an
    /// indirection). Reaching the end where no further chunk follows is a MARSHAL error.
    /// [`crate::value::ValueInput`] manages this; it takes the chunk end before reading
    /// value tags, end tags and chunk lengths itself.
    #[inline]
    pub fn set_chunk_end(&mut self, end: Option<usize>) {
        self.chunk_end = end.map_or(u32::MAX, |e| u32::try_from(e).unwrap_or(u32::MAX - 1));
        // With fragments, the next alignment takes the cold path, which finds the next
        // fragment break again from the position.
        self.stop_at(if self.breaks.is_empty() {
            usize::MAX
        } else {
            0
        });
    }

    /// Sets where alignment leaves the hot path: at `fragment_break` (the next alignment
    /// restart; 0: unknown, look again) or the open chunk's end, whichever is nearer.
    #[inline]
    fn stop_at(&mut self, fragment_break: usize) {
        self.next_break = fragment_break.min(self.chunk_end_pos());
    }

    /// The end of the open value chunk, if one is open.
    #[inline]
    pub fn chunk_end(&self) -> Option<usize> {
        (self.chunk_end != u32::MAX).then_some(self.chunk_end as usize)
    }

    /// The open chunk's end as a position (`usize::MAX`: none).
    #[inline]
    fn chunk_end_pos(&self) -> usize {
        self.chunk_end().unwrap_or(usize::MAX)
    }

    /// Closes the open value chunk for the reader's own reads, returning its end.
    #[inline]
    pub fn take_chunk_end(&mut self) -> Option<usize> {
        let end = self.chunk_end();
        self.set_chunk_end(None);
        end
    }

    /// Sets the nesting limit for encapsulations and recursive values.
    #[inline]
    pub fn with_max_depth(mut self, max_depth: u32) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// The stream's byte order.
    pub fn byte_order(&self) -> ByteOrder {
        match (self.swap, ByteOrder::NATIVE) {
            (false, native) => native,
            (true, ByteOrder::Little) => ByteOrder::Big,
            (true, ByteOrder::Big) => ByteOrder::Little,
        }
    }

    /// Whether values read are byte-swapped.
    #[inline]
    pub fn swaps(&self) -> bool {
        self.swap
    }

    /// The stream's context.
    pub fn context(&self) -> CdrContext {
        self.ctx
    }

    /// Changes the stream's context.
    pub fn set_context(&mut self, ctx: CdrContext) {
        self.ctx = ctx;
    }

    /// Index of the next byte in the buffer.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left to read.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.end - self.pos
    }

    /// Whether everything has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos == self.end
    }

    /// The unread bytes.
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..self.end]
    }

    /// The whole buffer the reader was made over.
    pub fn buffer(&self) -> &'a [u8] {
        self.buf
    }

    /// Fails unless every byte has been consumed.
    #[inline]
    pub fn expect_end(&self) -> Result<()> {
        if self.pos == self.end {
            Ok(())
        } else {
            Err(MarshalError::TrailingData {
                offset: self.pos,
                count: self.end - self.pos,
            })
        }
    }

    fn eod(&self, needed: usize) -> MarshalError {
        MarshalError::EndOfData {
            offset: self.pos,
            needed,
            remaining: self.end - self.pos,
        }
    }

    /// Skips padding to a multiple of `align` (a power of two) from the alignment origin.
    #[inline]
    pub fn align(&mut self, align: usize) -> Result<()> {
        let pad = self.origin.wrapping_sub(self.pos as isize) as usize & (align - 1);
        if self.pos + pad >= self.next_break {
            return self.align_across_break(align);
        }
        if pad > self.end - self.pos {
            return Err(self.eod(pad));
        }
        self.pos += pad;
        Ok(())
    }

    /// Where [`CdrReader::align`] would leave the reader, without moving it (`None`: the
    /// padding runs past the data).
    #[inline]
    pub fn aligned_position(&self, align: usize) -> Option<usize> {
        let pad = self.origin.wrapping_sub(self.pos as isize) as usize & (align - 1);
        if self.pos + pad >= self.next_break {
            let mut t = self.clone();
            return t.align_across_break(align).ok().map(|()| t.pos);
        }
        (pad <= self.end - self.pos).then_some(self.pos + pad)
    }

    #[cold]
    fn align_across_break(&mut self, align: usize) -> Result<()> {
        if let Some(chunk_end) = self.chunk_end() {
            let pad = self.origin.wrapping_sub(self.pos as isize) as usize & (align - 1);
            if self.pos + pad >= chunk_end {
                self.next_chunk()?;
            }
        }
        // Padding up to a fragment boundary belongs to the old fragment; alignment then
        // restarts relative to the new fragment's header.
        let mut idx = self.breaks.partition_point(|b| b.at <= self.pos);
        let pad = self.origin.wrapping_sub(self.pos as isize) as usize & (align - 1);
        if let Some(b) = self.breaks.get(idx) {
            if self.pos + pad >= b.at {
                if b.at > self.end {
                    // A break past the data (malformed breaks): the padding runs out first.
                    return Err(self.eod(pad));
                }
                self.pos = b.at;
                idx += 1;
            }
        }
        if idx > 0 {
            self.origin = self.breaks[idx - 1].origin;
        }
        self.stop_at(self.breaks.get(idx).map_or(usize::MAX, |b| b.at));
        let pad = self.origin.wrapping_sub(self.pos as isize) as usize & (align - 1);
        if pad > self.end - self.pos {
            return Err(self.eod(pad));
        }
        self.pos += pad;
        Ok(())
    }

    /// Steps from the end of the open value chunk over the next chunk's length, into it.
    #[cold]
    fn next_chunk(&mut self) -> Result<()> {
        let end = self.chunk_end_pos();
        if self.pos > end {
            return Err(MarshalError::InvalidValue {
                offset: self.pos,
                reason: "a primitive or string crosses a chunk boundary",
            });
        }
        self.pos = end;
        self.set_chunk_end(None);
        self.align(4)?;
        let at = self.pos;
        let n = self.read_long()?;
        if n <= 0 || n as u32 >= crate::value::VALUE_TAG_MIN {
            return Err(MarshalError::InvalidValue {
                offset: at,
                reason: "state member continues past the value's chunks",
            });
        }
        let n = n as usize;
        if n > self.end - self.pos {
            return Err(MarshalError::LengthExceedsData {
                offset: at,
                length: n as u64,
                remaining: self.end - self.pos,
            });
        }
        self.set_chunk_end(Some(self.pos + n));
        Ok(())
    }

    /// Takes `n` raw bytes, borrowed from the input.
    #[inline]
    pub fn read_bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.end - self.pos {
            return Err(self.eod(n));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    #[inline]
    fn take_array<const N: usize>(&mut self) -> Result<[u8; N]> {
        match self.buf[self.pos..self.end].first_chunk::<N>() {
            Some(a) => {
                self.pos += N;
                Ok(*a)
            }
            None => Err(self.eod(N)),
        }
    }

    /// Reads an aligned primitive, swapping if the stream's order is not native.
    #[inline]
    pub fn read_primitive<T: Primitive>(&mut self) -> Result<T> {
        self.align(T::SIZE)?;
        if T::SIZE > self.end - self.pos {
            return Err(self.eod(T::SIZE));
        }
        let v: T = bytemuck::pod_read_unaligned(&self.buf[self.pos..self.pos + T::SIZE]);
        self.pos += T::SIZE;
        Ok(if self.swap { v.swap_bytes() } else { v })
    }

    /// Reads an IDL `octet`.
    #[inline]
    pub fn read_octet(&mut self) -> Result<u8> {
        // A value chunk may end right before an octet (or a fragment restart alignment
        // there): the same single compare as aligned reads, and the same cold path.
        if self.pos >= self.next_break {
            self.align_across_break(1)?;
        }
        let [b] = self.take_array::<1>()?;
        Ok(b)
    }

    /// Reads an IDL `boolean`; anything but 0 or 1 is an error.
    #[inline]
    pub fn read_boolean(&mut self) -> Result<bool> {
        let offset = self.pos;
        match self.read_octet()? {
            0 => Ok(false),
            1 => Ok(true),
            value => Err(MarshalError::InvalidBoolean { offset, value }),
        }
    }

    /// Reads an IDL `char` as its octet in the transmission code set.
    #[inline]
    pub fn read_char(&mut self) -> Result<u8> {
        self.read_octet()
    }

    /// Reads an IDL `char` as a Unicode scalar (ISO-8859-1 maps directly; UTF-8 must be ASCII).
    pub fn read_char_unicode(&mut self) -> Result<char> {
        let offset = self.pos;
        let b = self.read_octet()?;
        match self.ctx.code_sets.char_set {
            crate::codeset::CharCodeSet::Utf8 if !b.is_ascii() => {
                Err(MarshalError::InvalidCharData {
                    offset,
                    code_set: "UTF-8",
                })
            }
            _ => Ok(char::from(b)),
        }
    }

    read_prim!(/// Reads an IDL `short`.
        read_short, i16);
    read_prim!(/// Reads an IDL `unsigned short`.
        read_ushort, u16);
    read_prim!(/// Reads an IDL `long`.
        read_long, i32);
    read_prim!(/// Reads an IDL `unsigned long`.
        read_ulong, u32);
    read_prim!(/// Reads an IDL `long long`.
        read_longlong, i64);
    read_prim!(/// Reads an IDL `unsigned long long`.
        read_ulonglong, u64);
    read_prim!(/// Reads an IDL `float`.
        read_float, f32);
    read_prim!(/// Reads an IDL `double`.
        read_double, f64);

    /// Reads an IDL `long double`.
    pub fn read_long_double(&mut self) -> Result<LongDouble> {
        self.align(8)?;
        let mut b = self.take_array::<16>()?;
        if self.byte_order() == ByteOrder::Little {
            b.reverse();
        }
        Ok(LongDouble::from_be_bytes(b))
    }

    /// Reads a sequence length and checks that `len × min_elem_size` bytes remain, so no
    /// allocation is ever sized by a length the message cannot back.
    #[inline]
    pub fn read_length(&mut self, min_elem_size: usize) -> Result<usize> {
        let len = self.read_ulong()? as usize;
        self.check_length(len, min_elem_size)?;
        Ok(len)
    }

    /// Checks that `count` elements of at least `min_elem_size` bytes can remain.
    #[inline]
    pub fn check_length(&self, count: usize, min_elem_size: usize) -> Result<()> {
        if count.saturating_mul(min_elem_size) > self.end - self.pos {
            return Err(MarshalError::LengthExceedsData {
                offset: self.pos.saturating_sub(4),
                length: count as u64,
                remaining: self.end - self.pos,
            });
        }
        Ok(())
    }

    /// Reads `count` primitives with no length prefix (an IDL array): one copy, swapped in
    /// place only if the byte orders differ.
    #[inline]
    pub fn read_primitive_array<T: Primitive>(&mut self, count: usize) -> Result<Vec<T>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        self.align(T::SIZE)?;
        let nbytes = count
            .checked_mul(T::SIZE)
            .ok_or_else(|| self.eod(usize::MAX))?;
        if self.pos.saturating_add(nbytes) > self.chunk_end_pos() {
            let mut v = Vec::new();
            self.read_array_across_chunks(count, &mut v)?;
            return Ok(v);
        }
        let src = self.read_bytes(nbytes)?;
        let mut v = Vec::with_capacity(count);
        extend_from_wire(&mut v, src, self.swap);
        Ok(v)
    }

    /// Reads `count` primitives that may span several value chunks (Java ORBs split large
    /// arrays); an element itself may not be split. Space is reserved chunk by chunk, for
    /// elements that are there.
    #[cold]
    fn read_array_across_chunks<T: Primitive>(
        &mut self,
        mut count: usize,
        out: &mut Vec<T>,
    ) -> Result<()> {
        self.check_length(count, T::SIZE)?;
        while count > 0 {
            self.align(T::SIZE)?;
            let in_chunk = self.chunk_end_pos().saturating_sub(self.pos);
            if in_chunk < T::SIZE {
                if in_chunk != 0 {
                    return Err(MarshalError::InvalidValue {
                        offset: self.pos,
                        reason: "a primitive or string crosses a chunk boundary",
                    });
                }
                self.next_chunk()?;
                continue;
            }
            let n = count.min(in_chunk / T::SIZE);
            let src = self.read_bytes(n * T::SIZE)?;
            out.reserve(n);
            extend_from_wire(out, src, self.swap);
            count -= n;
        }
        Ok(())
    }

    /// Reads a sequence of primitives.
    #[inline]
    pub fn read_primitive_seq<T: Primitive>(&mut self) -> Result<Vec<T>> {
        let n = self.read_length(T::SIZE)?;
        self.read_primitive_array(n)
    }

    /// Reads a sequence of primitives into a caller's buffer (cleared first), reusing its
    /// allocation: the receive-into-destination path for bulk data.
    pub fn read_primitive_seq_into<T: Primitive>(&mut self, out: &mut Vec<T>) -> Result<()> {
        let n = self.read_length(T::SIZE)?;
        out.clear();
        if n == 0 {
            return Ok(());
        }
        self.align(T::SIZE)?;
        if self.pos.saturating_add(n * T::SIZE) > self.chunk_end_pos() {
            return self.read_array_across_chunks(n, out);
        }
        let src = self.read_bytes(n * T::SIZE)?;
        extend_from_wire(out, src, self.swap);
        Ok(())
    }

    /// Reads a `sequence<octet>` without copying: the slice borrows the input.
    #[inline]
    pub fn read_octet_seq(&mut self) -> Result<&'a [u8]> {
        let n = self.read_length(1)?;
        self.read_bytes(n)
    }

    /// Reads a sequence of booleans, each checked.
    pub fn read_boolean_seq(&mut self) -> Result<Vec<bool>> {
        let n = self.read_length(1)?;
        let start = self.pos;
        let bytes = self.read_bytes(n)?;
        if let Some(i) = bytes.iter().position(|&b| b > 1) {
            return Err(MarshalError::InvalidBoolean {
                offset: start + i,
                value: bytes[i],
            });
        }
        Ok(bytes.iter().map(|&b| b == 1).collect())
    }

    /// Reads the raw octets of a string (without its NUL), checked for termination and
    /// embedded NULs but not converted.
    pub fn read_string_bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.read_length(1)?;
        let offset = self.pos;
        if n == 0 {
            // Not legal CDR (the length counts the NUL), but some ORBs send it for "".
            return Ok(&[]);
        }
        let bytes = self.read_bytes(n)?;
        let (body, nul) = bytes.split_at(n - 1);
        if nul != [0] {
            return Err(MarshalError::StringNotTerminated { offset });
        }
        if body.contains(&0) {
            return Err(MarshalError::EmbeddedNul { offset });
        }
        Ok(body)
    }

    /// Reads an IDL `string`, converted from the negotiated char code set.
    pub fn read_string(&mut self) -> Result<String> {
        let bytes = self.read_string_bytes()?;
        let offset = self.pos - bytes.len() - 1;
        self.ctx.code_sets.char_set.decode_str(bytes, offset)
    }

    /// Reads a `string` and checks an IDL bound.
    pub fn read_bounded_string(&mut self, bound: u32) -> Result<String> {
        let s = self.read_string()?;
        let len = s.chars().count() as u64;
        if len > u64::from(bound) {
            return Err(MarshalError::BoundExceeded {
                length: len,
                bound: bound.into(),
            });
        }
        Ok(s)
    }

    /// Reads a string without copying when the char code set is UTF-8 (or it is ASCII).
    pub fn read_str_borrowed(&mut self) -> Result<std::borrow::Cow<'a, str>> {
        let bytes = self.read_string_bytes()?;
        let offset = self.pos.saturating_sub(bytes.len() + 1);
        match self.ctx.code_sets.char_set {
            crate::codeset::CharCodeSet::Utf8 => std::str::from_utf8(bytes)
                .map(std::borrow::Cow::Borrowed)
                .map_err(|e| MarshalError::InvalidCharData {
                    offset: offset + e.valid_up_to(),
                    code_set: "UTF-8",
                }),
            cs if bytes.is_ascii() => {
                let _ = cs;
                Ok(std::borrow::Cow::Borrowed(
                    std::str::from_utf8(bytes).unwrap_or_default(),
                ))
            }
            cs => cs.decode_str(bytes, offset).map(std::borrow::Cow::Owned),
        }
    }

    fn wchar_set(&self) -> WCharCodeSet {
        // Be liberal in what we accept: decode UTF-16 even if nothing was negotiated
        // (JacORB sends wide data at GIOP 1.0).
        self.ctx.code_sets.wchar_set.unwrap_or(WCharCodeSet::Utf16)
    }

    /// Reads an IDL `wchar` by the rules of the stream's GIOP version.
    pub fn read_wchar(&mut self) -> Result<char> {
        let offset = self.pos;
        let unit = if self.ctx.giop_minor >= 2 {
            let n = self.read_octet()?;
            match n {
                2 => u16::from_be_bytes(self.take_array::<2>()?),
                4 => {
                    let bom = u16::from_be_bytes(self.take_array::<2>()?);
                    let b = self.take_array::<2>()?;
                    match bom {
                        0xfeff => u16::from_be_bytes(b),
                        0xfffe => u16::from_le_bytes(b),
                        _ => {
                            return Err(MarshalError::InvalidCharData {
                                offset,
                                code_set: "UTF-16",
                            })
                        }
                    }
                }
                _ => {
                    return Err(MarshalError::InvalidCharData {
                        offset,
                        code_set: "UTF-16",
                    })
                }
            }
        } else {
            self.read_ushort()?
        };
        char::from_u32(u32::from(unit)).ok_or(MarshalError::InvalidCharData {
            offset,
            code_set: "UTF-16",
        })
    }

    /// Reads an IDL `wstring` by the rules of the stream's GIOP version.
    pub fn read_wstring(&mut self) -> Result<String> {
        let cs = self.wchar_set();
        if self.ctx.giop_minor >= 2 {
            let n = self.read_length(1)?;
            let offset = self.pos;
            let bytes = self.read_bytes(n)?;
            if !n.is_multiple_of(2) {
                return Err(MarshalError::InvalidCharData {
                    offset,
                    code_set: "UTF-16",
                });
            }
            let (big, body) = match bytes {
                [0xfe, 0xff, rest @ ..] => (true, rest),
                [0xff, 0xfe, rest @ ..] => (false, rest),
                _ => (true, bytes),
            };
            let units: Vec<u16> = body
                .chunks_exact(2)
                .map(|c| {
                    let a = [c[0], c[1]];
                    if big {
                        u16::from_be_bytes(a)
                    } else {
                        u16::from_le_bytes(a)
                    }
                })
                .collect();
            cs.decode_units(&units, offset)
        } else {
            let n = self.read_length(2)?;
            let offset = self.pos;
            if n == 0 {
                return Ok(String::new());
            }
            let mut units = self.read_primitive_array::<u16>(n)?;
            if units.pop() != Some(0) {
                return Err(MarshalError::StringNotTerminated { offset });
            }
            if units.contains(&0) {
                return Err(MarshalError::EmbeddedNul { offset });
            }
            cs.decode_units(&units, offset)
        }
    }

    /// Reads an encapsulation's length and returns a reader over its content, positioned
    /// after the byte-order octet, with alignment relative to that octet. The outer reader
    /// moves past the encapsulation.
    pub fn read_encapsulation(&mut self) -> Result<CdrReader<'a>> {
        let n = self.read_length(1)?;
        let start = self.pos;
        self.read_bytes(n)?;
        self.encapsulation_at(start, n)
    }

    /// A reader over an encapsulation whose content occupies `buf[start..start + len]`.
    ///
    /// A range outside the buffer is an error, not a panic.
    pub fn encapsulation_at(&self, start: usize, len: usize) -> Result<CdrReader<'a>> {
        if self.depth >= self.max_depth {
            return Err(MarshalError::NestingTooDeep {
                offset: start,
                limit: self.max_depth,
            });
        }
        let offset = start.min(self.buf.len());
        let available = self.buf.len() - offset;
        if len > available {
            return Err(MarshalError::LengthExceedsData {
                offset,
                length: len as u64,
                remaining: available,
            });
        }
        let Some(&flag) = self.buf.get(start).filter(|_| len > 0) else {
            return Err(MarshalError::EndOfData {
                offset,
                needed: 1,
                remaining: 0,
            });
        };
        if flag > 1 {
            return Err(MarshalError::InvalidByteOrder {
                offset: start,
                value: flag,
            });
        }
        let order = ByteOrder::from_flag(flag);
        Ok(CdrReader {
            buf: self.buf,
            pos: start + 1,
            end: start + len,
            origin: start as isize,
            swap: order.needs_swap(),
            ctx: self.ctx,
            breaks: &[],
            next_break: usize::MAX,
            chunk_end: u32::MAX,
            depth: self.depth + 1,
            max_depth: self.max_depth,
        })
    }

    /// Enters one level of a recursive value (a sequence inside a struct of the same type).
    #[inline]
    pub fn enter(&mut self) -> Result<()> {
        if self.depth >= self.max_depth {
            return Err(MarshalError::NestingTooDeep {
                offset: self.pos,
                limit: self.max_depth,
            });
        }
        self.depth += 1;
        Ok(())
    }

    /// Leaves a level entered with [`CdrReader::enter`].
    #[inline]
    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Whether the next `len` bytes can be read as one block laid out from an `align`-aligned
    /// start: the position needs no padding to `align` and no alignment restart
    /// ([`AlignBreak`]) falls inside the block.
    ///
    /// CDR structs have no alignment of their own, only their members do, so a run of
    /// fixed-size structs has the fixed layout that [`CdrReader::read_block`] relies on only
    /// from an aligned start. Generated code decodes elements one by one until this holds
    /// (at most one element for structs whose size is a multiple of their alignment), then
    /// the rest as a block.
    #[inline]
    pub fn block_aligned(&self, align: usize, len: usize) -> bool {
        if self.breaks.is_empty() {
            return self.origin.wrapping_sub(self.pos as isize) as usize & (align - 1) == 0
                && self.pos.saturating_add(len) <= self.chunk_end_pos();
        }
        let idx = self.breaks.partition_point(|b| b.at <= self.pos);
        let origin = match idx.checked_sub(1) {
            Some(i) => self.breaks[i].origin,
            None => self.origin,
        };
        let aligned = origin.wrapping_sub(self.pos as isize) as usize & (align - 1) == 0;
        aligned
            && self.pos.saturating_add(len) <= self.chunk_end_pos()
            && self
                .breaks
                .get(idx)
                .is_none_or(|b| b.at >= self.pos.saturating_add(len))
    }

    /// Reads an aligned block of `len` bytes (for generated code decoding runs of fixed-size
    /// structs from one slice; see [`CdrReader::block_aligned`]).
    #[inline]
    pub fn read_block(&mut self, align: usize, len: usize) -> Result<&'a [u8]> {
        self.align(align)?;
        self.read_bytes(len)
    }

    /// Reads an enum discriminant and checks it against the number of enumerators.
    #[inline]
    pub fn read_enum(&mut self, count: u32) -> Result<u32> {
        let offset = self.pos;
        let v = self.read_ulong()?;
        if v >= count {
            return Err(MarshalError::InvalidEnum {
                offset,
                value: v,
                count,
            });
        }
        Ok(v)
    }
}

/// Appends the primitives in `src` (a whole number of them) to `out` in one pass: a plain
/// copy when the bytes are aligned for `T` and in native order, a swapping copy otherwise.
/// Nothing is zeroed first.
#[inline]
fn extend_from_wire<T: Primitive>(out: &mut Vec<T>, src: &[u8], swap: bool) {
    match (bytemuck::try_cast_slice::<u8, T>(src), swap) {
        (Ok(aligned), false) => out.extend_from_slice(aligned),
        (Ok(aligned), true) => out.extend(aligned.iter().map(|x| x.swap_bytes())),
        (Err(_), false) => out.extend(
            src.chunks_exact(T::SIZE)
                .map(bytemuck::pod_read_unaligned::<T>),
        ),
        (Err(_), true) => out.extend(
            src.chunks_exact(T::SIZE)
                .map(|c| bytemuck::pod_read_unaligned::<T>(c).swap_bytes()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codeset::{CharCodeSet, CodeSets};
    use crate::writer::CdrWriter;

    fn ctx() -> CdrContext {
        CdrContext::GIOP_1_2
    }

    #[test]
    fn the_reader_knows_its_byte_order_and_stays_small() {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let r = CdrReader::new(&[], order, ctx());
            assert_eq!(r.byte_order(), order);
            assert_eq!(r.swaps(), order != ByteOrder::NATIVE);
        }
        // Built per request on the server's call path: 88 bytes cost a copy more.
        #[cfg(target_pointer_width = "64")]
        assert_eq!(std::mem::size_of::<CdrReader<'_>>(), 80);
    }

    #[test]
    fn primitives_both_orders() {
        let be = [0, 0, 0, 0, 0, 0, 0, 7, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0];
        let mut r = CdrReader::new(&be, ByteOrder::Big, ctx());
        assert_eq!(r.read_longlong().unwrap(), 7);
        assert_eq!(r.read_double().unwrap(), 1.0);
        r.expect_end().unwrap();
        let le = [1, 0, 0, 0, 5, 0, 0, 0];
        let mut r = CdrReader::new(&le, ByteOrder::Little, ctx());
        assert_eq!(r.read_octet().unwrap(), 1);
        assert_eq!(r.read_ulong().unwrap(), 5);
    }

    #[test]
    fn hostile_lengths_are_errors_not_allocations() {
        let msg = [0xff, 0xff, 0xff, 0xff, 1, 2, 3];
        let mut r = CdrReader::new(&msg, ByteOrder::Big, ctx());
        assert!(matches!(
            r.read_primitive_seq::<f64>(),
            Err(MarshalError::LengthExceedsData {
                length: 0xffff_ffff,
                ..
            })
        ));
        let mut r = CdrReader::new(&msg, ByteOrder::Big, ctx());
        assert!(r.read_string().is_err());
        let mut r = CdrReader::new(&msg, ByteOrder::Big, ctx());
        assert!(r.read_wstring().is_err());
        let mut r = CdrReader::new(&msg[..2], ByteOrder::Big, ctx());
        assert_eq!(
            r.read_ulong(),
            Err(MarshalError::EndOfData {
                offset: 0,
                needed: 4,
                remaining: 2
            })
        );
    }

    #[test]
    fn strings_are_checked() {
        let mut r = CdrReader::new(&[0, 0, 0, 2, b'a', b'b'], ByteOrder::Big, ctx());
        assert_eq!(
            r.read_string(),
            Err(MarshalError::StringNotTerminated { offset: 4 })
        );
        let mut r = CdrReader::new(&[0, 0, 0, 3, 0, b'b', 0], ByteOrder::Big, ctx());
        assert_eq!(
            r.read_string(),
            Err(MarshalError::EmbeddedNul { offset: 4 })
        );
        let utf8 = ctx().with_code_sets(CodeSets {
            char_set: CharCodeSet::Utf8,
            wchar_set: None,
        });
        let mut r = CdrReader::new(&[0, 0, 0, 2, 0xe9, 0], ByteOrder::Big, utf8);
        assert!(matches!(
            r.read_string(),
            Err(MarshalError::InvalidCharData { offset: 4, .. })
        ));
        let mut r = CdrReader::new(&[0, 0, 0, 2, 0xe9, 0], ByteOrder::Big, ctx());
        assert_eq!(r.read_string().unwrap(), "é");
        let mut r = CdrReader::new(&[0, 0, 0, 0], ByteOrder::Big, ctx());
        assert_eq!(r.read_string().unwrap(), "");
    }

    #[test]
    fn booleans_and_enums_are_checked() {
        let mut r = CdrReader::new(&[2], ByteOrder::Big, ctx());
        assert_eq!(
            r.read_boolean(),
            Err(MarshalError::InvalidBoolean {
                offset: 0,
                value: 2
            })
        );
        let mut r = CdrReader::new(&[0, 0, 0, 3], ByteOrder::Big, ctx());
        assert!(matches!(
            r.read_enum(3),
            Err(MarshalError::InvalidEnum { value: 3, .. })
        ));
    }

    /// A wstring starting with U+FEFF or U+FFFE goes out behind a big-endian mark (bare, a
    /// reader would take it for one, CORBA 3.0 §15.3.1.6) and comes back whole; one elsewhere
    /// goes bare.
    #[test]
    fn leading_byte_order_mark_characters_round_trip() {
        let ctx = ctx().with_code_sets(CodeSets {
            char_set: CharCodeSet::Utf8,
            wchar_set: Some(crate::codeset::WCharCodeSet::Utf16),
        });
        for (s, wire) in [
            (
                "\u{feff}x",
                &[0, 0, 0, 6, 0xfe, 0xff, 0xfe, 0xff, 0, b'x'][..],
            ),
            (
                "\u{fffe}x",
                &[0, 0, 0, 6, 0xfe, 0xff, 0xff, 0xfe, 0, b'x'][..],
            ),
            ("x\u{feff}", &[0, 0, 0, 4, 0, b'x', 0xfe, 0xff][..]),
        ] {
            for order in [ByteOrder::Big, ByteOrder::Little] {
                let mut w = CdrWriter::with_byte_order(order, ctx);
                w.write_wstring(s).unwrap();
                let bytes = w.into_bytes();
                // Only the length follows the stream's order: wide data is big-endian.
                let mut want = wire.to_vec();
                if order == ByteOrder::Little {
                    want[..4].reverse();
                }
                assert_eq!(bytes, want, "{s:?} {order:?}");
                assert_eq!(
                    CdrReader::new(&bytes, order, ctx).read_wstring(),
                    Ok(s.to_owned())
                );
            }
        }
        // The same characters with a little-endian mark from a peer.
        let le = [0, 0, 0, 6, 0xff, 0xfe, 0xff, 0xfe, b'x', 0];
        assert_eq!(
            CdrReader::new(&le, ByteOrder::Big, ctx).read_wstring(),
            Ok("\u{feff}x".into())
        );
    }

    #[test]
    fn wide_strings_honour_bom() {
        let ctx2 = ctx();
        let be = [0, 0, 0, 4, 0, b'h', 0, b'i'];
        assert_eq!(
            CdrReader::new(&be, ByteOrder::Big, ctx2).read_wstring(),
            Ok("hi".into())
        );
        let le_bom = [0, 0, 0, 6, 0xff, 0xfe, b'h', 0, b'i', 0];
        assert_eq!(
            CdrReader::new(&le_bom, ByteOrder::Big, ctx2).read_wstring(),
            Ok("hi".into())
        );
        let odd = [0, 0, 0, 3, 0, b'h', 0];
        assert!(CdrReader::new(&odd, ByteOrder::Big, ctx2)
            .read_wstring()
            .is_err());
        let wc = [4, 0xff, 0xfe, b'A', 0];
        assert_eq!(
            CdrReader::new(&wc, ByteOrder::Big, ctx2).read_wchar(),
            Ok('A')
        );
        let v11 = [0, 0, 0, 2, 0, b'h', 0, 0];
        let c11 = ctx().with_giop_minor(1);
        assert_eq!(
            CdrReader::new(&v11, ByteOrder::Big, c11).read_wstring(),
            Ok("h".into())
        );
    }

    #[test]
    fn encapsulations_nest_with_their_own_order() {
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, ctx());
        w.write_octet(9);
        w.write_encapsulation(|e| {
            e.write_ulong(1);
            Ok(())
        })
        .unwrap();
        let bytes = w.into_bytes();
        let mut r = CdrReader::new(&bytes, ByteOrder::Big, ctx());
        r.read_octet().unwrap();
        let mut e = r.read_encapsulation().unwrap();
        assert_eq!(e.read_ulong().unwrap(), 1);
        e.expect_end().unwrap();
        r.expect_end().unwrap();
        // A little-endian encapsulation inside a big-endian stream.
        let bytes = [0, 0, 0, 8, 1, 0, 0, 0, 2, 0, 0, 0];
        let mut e = CdrReader::new(&bytes, ByteOrder::Big, ctx())
            .read_encapsulation()
            .unwrap();
        assert_eq!(e.read_ulong().unwrap(), 2);
        let bad = [0, 0, 0, 1, 7];
        assert!(matches!(
            CdrReader::new(&bad, ByteOrder::Big, ctx()).read_encapsulation(),
            Err(MarshalError::InvalidByteOrder { value: 7, .. })
        ));
    }

    #[test]
    fn nesting_is_bounded() {
        // Encapsulations nested 1000 deep.
        let mut bytes = vec![0u8];
        for _ in 0..1000 {
            // Length, then the byte-order octet and padding to the inner length.
            let mut outer = ((bytes.len() + 4) as u32).to_be_bytes().to_vec();
            outer.extend_from_slice(&[0, 0, 0, 0]);
            outer.extend_from_slice(&bytes[..]);
            bytes = outer;
        }
        let mut r = CdrReader::new(&bytes, ByteOrder::Big, ctx()).with_max_depth(64);
        let mut err = None;
        for _ in 0..1000 {
            match r.read_encapsulation() {
                Ok(inner) => r = inner,
                Err(e) => {
                    err = Some(e);
                    break;
                }
            }
        }
        assert!(matches!(
            err,
            Some(MarshalError::NestingTooDeep { limit: 64, .. })
        ));
    }

    #[test]
    fn align_breaks_follow_fragment_headers() {
        // First fragment: octet at 12 (message offset), padding to 16; second fragment's data
        // starts after its 12-byte header and aligns relative to that header.
        let mut buf = vec![0u8; 12];
        buf.push(0xaa); // octet at 12
        buf.extend_from_slice(&[0; 3]); // pad to 16 relative to message start
        let frag_at = buf.len();
        buf.extend_from_slice(&[0; 4]); // pad: fragment data at 12 of its own header, to 16
        buf.extend_from_slice(&1.5f64.to_be_bytes());
        let breaks = [AlignBreak {
            at: frag_at,
            origin: frag_at as isize - 12,
        }];
        let mut r = CdrReader::new(&buf, ByteOrder::Big, ctx()).starting_at(12);
        let mut r2 = r.clone().with_align_breaks(&breaks);
        assert_eq!(r2.read_octet().unwrap(), 0xaa);
        assert_eq!(r2.read_double().unwrap(), 1.5);
        r2.expect_end().unwrap();
        // Without the break the double is read from the wrong place.
        r.read_octet().unwrap();
        assert_ne!(r.read_double().ok(), Some(1.5));
    }

    #[test]
    fn octet_seq_is_borrowed() {
        let bytes = [0, 0, 0, 3, 1, 2, 3];
        let mut r = CdrReader::new(&bytes, ByteOrder::Big, ctx());
        let s = r.read_octet_seq().unwrap();
        assert_eq!(s.as_ptr(), bytes[4..].as_ptr());
        let mut out = vec![9u32; 10];
        let b = [0, 0, 0, 1, 0, 0, 0, 7];
        CdrReader::new(&b, ByteOrder::Big, ctx())
            .read_primitive_seq_into(&mut out)
            .unwrap();
        assert_eq!(out, [7]);
    }
}
