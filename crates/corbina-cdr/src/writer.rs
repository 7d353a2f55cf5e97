//! The CDR encoder: writes values into a growable buffer, splicing in large borrowed blocks
//! instead of copying them.

use crate::codeset::CodeSets;
use crate::error::{MarshalError, Result};
use crate::primitive::{ByteOrder, LongDouble, Primitive};

/// What a stream needs to know besides the values: the GIOP version (wide characters are
/// encoded differently before 1.2) and the negotiated code sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CdrContext {
    /// GIOP minor version (0, 1 or 2) of the message the stream belongs to.
    pub giop_minor: u8,
    /// Transmission code sets.
    pub code_sets: CodeSets,
}

impl CdrContext {
    /// GIOP 1.2 with the default code sets (ISO-8859-1, no wide characters).
    pub const GIOP_1_2: CdrContext = CdrContext {
        giop_minor: 2,
        code_sets: CodeSets::DEFAULT,
    };

    /// The same context for another GIOP minor version.
    #[inline]
    pub fn with_giop_minor(mut self, minor: u8) -> Self {
        self.giop_minor = minor;
        self
    }

    /// The same context with other code sets.
    #[inline]
    pub fn with_code_sets(mut self, code_sets: CodeSets) -> Self {
        self.code_sets = code_sets;
        self
    }
}

impl Default for CdrContext {
    fn default() -> Self {
        CdrContext::GIOP_1_2
    }
}

/// Blocks at least this long are spliced in by reference rather than copied.
pub const DEFAULT_SPLICE_THRESHOLD: usize = 4096;

#[derive(Debug, Clone, Copy)]
struct Splice<'a> {
    /// Index in `buf` before which the block goes.
    at: usize,
    data: &'a [u8],
}

/// A CDR encoder.
///
/// Writes native byte order unless built with [`CdrWriter::with_byte_order`]. Alignment is
/// relative to the stream's origin, so a writer that starts a GIOP message writes the header
/// first, or starts at an offset with [`CdrWriter::starting_at`].
///
/// Bulk data of at least [`DEFAULT_SPLICE_THRESHOLD`] octets (octet sequences, and sequences
/// of other primitives already in the stream's byte order) is not copied: the writer keeps a
/// reference, and [`CdrWriter::segments`] yields the message as a list of slices for a
/// vectored write. The lifetime `'a` is that of the borrowed data.
#[derive(Debug, Clone)]
pub struct CdrWriter<'a> {
    buf: Vec<u8>,
    splices: Vec<Splice<'a>>,
    spliced_len: usize,
    base: usize,
    swap: bool,
    order: ByteOrder,
    ctx: CdrContext,
    splice_threshold: usize,
    /// Runs of 8-octet primitives, `(start, end)` in stream positions, that a fragment cut at
    /// a multiple of 8 could split (CORBA 3.0 §15.4.9 forbids splitting one): in an
    /// encapsulation's writer every run, as where it lands is not known yet; in any other,
    /// the runs of its encapsulations that are not 8-aligned in it. Sorted, disjoint; empty
    /// unless an encapsulation held 8-octet primitives, and then boxed: a pointer's room and
    /// a null test in the common case.
    #[allow(clippy::box_collection)] // one word in every writer, not a Vec's three
    uncuttable: Option<Box<Vec<(usize, usize)>>>,
    /// Whether this writer is an encapsulation's ([`CdrWriter::write_encapsulation`]).
    in_encap: bool,
}

impl Default for CdrWriter<'_> {
    fn default() -> Self {
        CdrWriter::new(CdrContext::default())
    }
}

macro_rules! write_prim {
    ($(#[$m:meta])* $name:ident, $t:ty) => {
        $(#[$m])*
        #[inline]
        pub fn $name(&mut self, v: $t) {
            self.write_primitive(v)
        }
    };
}

impl<'a> CdrWriter<'a> {
    /// A native-order writer at stream offset 0.
    #[inline]
    pub fn new(ctx: CdrContext) -> Self {
        Self::with_byte_order(ByteOrder::NATIVE, ctx)
    }

    /// A writer in a chosen byte order (to reproduce a peer's bytes; native is faster).
    #[inline]
    pub fn with_byte_order(order: ByteOrder, ctx: CdrContext) -> Self {
        CdrWriter {
            buf: Vec::new(),
            splices: Vec::new(),
            spliced_len: 0,
            base: 0,
            swap: order.needs_swap(),
            order,
            ctx,
            splice_threshold: DEFAULT_SPLICE_THRESHOLD,
            uncuttable: None,
            in_encap: false,
        }
    }

    /// A writer in `order` that writes into `buffer`, cleared first but with its allocation
    /// kept: connections reuse one buffer per message instead of growing a new one.
    #[inline]
    pub fn from_vec(mut buffer: Vec<u8>, order: ByteOrder, ctx: CdrContext) -> Self {
        buffer.clear();
        // Built whole, where it is returned (not made empty, then given the buffer).
        CdrWriter {
            buf: buffer,
            splices: Vec::new(),
            spliced_len: 0,
            base: 0,
            swap: order.needs_swap(),
            order,
            ctx,
            splice_threshold: DEFAULT_SPLICE_THRESHOLD,
            uncuttable: None,
            in_encap: false,
        }
    }

    /// Takes back the owned buffer (spliced blocks are not in it), for reuse with
    /// [`CdrWriter::from_vec`]. Always inlined: with the runs' drop rustc stopped inlining it
    /// into the asynchronous send (~20 instructions a call, measured).
    #[inline(always)]
    pub fn into_owned_buffer(self) -> Vec<u8> {
        self.buf
    }

    /// Treats the first byte written as being at `offset` in the stream, for alignment.
    #[inline]
    pub fn starting_at(mut self, offset: usize) -> Self {
        self.base = offset;
        self
    }

    /// Pre-allocates room for `additional` bytes.
    pub fn reserve(&mut self, additional: usize) {
        self.buf.reserve(additional);
    }

    /// Forgets everything written (spliced blocks included) but keeps the buffer's
    /// allocation, so one writer can encode message after message without reallocating.
    /// The byte order, context, starting offset and splice threshold are kept.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.splices.clear();
        self.spliced_len = 0;
        if let Some(runs) = &mut self.uncuttable {
            runs.clear();
        }
    }

    /// Shortens the stream to `len` bytes, when everything after `len` is owned (not a spliced
    /// block): used to drop body padding when a GIOP 1.2 body turns out empty. Returns whether
    /// it did.
    #[inline]
    pub fn truncate(&mut self, len: usize) -> bool {
        let Some(owned) = len.checked_sub(self.spliced_len) else {
            return false;
        };
        if owned > self.buf.len() || self.splices.last().is_some_and(|s| s.at > owned) {
            return false;
        }
        // Runs past the end are left to `uncuttable`, which leaves them out: this stays small
        // enough to inline (it drops every empty body's padding).
        self.buf.truncate(owned);
        true
    }

    /// Runs of 8-octet primitives inside encapsulations that are not 8-aligned in this
    /// stream, `(start, end)` in stream positions, sorted: a fragment cut at a multiple of 8
    /// strictly inside one, not a multiple of 8 from its start, would split a primitive
    /// (CORBA 3.0 §15.4.9). Empty unless an encapsulation holds 8-octet primitives.
    #[inline]
    pub fn uncuttable(&self) -> &[(usize, usize)] {
        let runs = self.uncuttable.as_deref().map_or(&[][..], Vec::as_slice);
        // Not those a truncation dropped.
        let end = self.position();
        &runs[..runs.partition_point(|r| r.1 <= end)]
    }

    /// Notes `len` octets of 8-octet units starting at the current position, in an
    /// encapsulation's writer.
    #[cold]
    fn note_run(&mut self, len: usize) {
        let p = self.position();
        self.add_run(p, p + len);
    }

    /// Adds a run, joined to the last one when adjacent (both start 8-aligned in their
    /// encapsulation, so their units stay in phase).
    fn add_run(&mut self, start: usize, end: usize) {
        let runs = self.uncuttable.get_or_insert_with(Default::default);
        // Runs a truncation left behind are gone for good now.
        while runs.last().is_some_and(|r| r.1 > start) {
            runs.pop();
        }
        match runs.last_mut() {
            Some(last) if last.1 == start => last.1 = end,
            _ => runs.push((start, end)),
        }
    }

    /// Sets the size from which blocks are referenced rather than copied (`usize::MAX`: never).
    pub fn set_splice_threshold(&mut self, threshold: usize) {
        self.splice_threshold = threshold;
    }

    /// The stream's byte order.
    pub fn byte_order(&self) -> ByteOrder {
        self.order
    }

    /// The stream's context.
    pub fn context(&self) -> CdrContext {
        self.ctx
    }

    /// Changes the stream's context (after code set negotiation, for instance).
    pub fn set_context(&mut self, ctx: CdrContext) {
        self.ctx = ctx;
    }

    /// Current offset in the stream (what alignment is computed from).
    #[inline]
    pub fn position(&self) -> usize {
        self.base + self.buf.len() + self.spliced_len
    }

    /// Bytes written so far, spliced blocks included.
    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len() + self.spliced_len
    }

    /// Whether nothing has been written.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Pads with zero octets to a multiple of `align` (a power of two).
    #[inline]
    pub fn align(&mut self, align: usize) {
        let pad = self.position().wrapping_neg() & (align - 1);
        if pad == 0 {
            return;
        }
        let len = self.buf.len() + pad;
        if pad <= 8 {
            // A fixed-size copy then a cut: no memset call for a few padding bytes.
            self.buf.extend_from_slice(&[0; 8]);
            self.buf.truncate(len);
        } else {
            self.buf.resize(len, 0);
        }
    }

    /// Appends raw octets (copied).
    #[inline]
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Appends raw octets, by reference when the block is large.
    #[inline]
    pub fn write_bytes_borrowed(&mut self, bytes: &'a [u8]) {
        if bytes.len() >= self.splice_threshold {
            self.splices.push(Splice {
                at: self.buf.len(),
                data: bytes,
            });
            self.spliced_len += bytes.len();
        } else {
            self.buf.extend_from_slice(bytes);
        }
    }

    /// Writes an aligned primitive in the stream's byte order.
    #[inline]
    pub fn write_primitive<T: Primitive>(&mut self, v: T) {
        self.align(T::SIZE);
        if T::SIZE == 8 && self.in_encap {
            self.note_run(8);
        }
        let v = if self.swap { v.swap_bytes() } else { v };
        self.buf.extend_from_slice(bytemuck::bytes_of(&v));
    }

    /// Writes an IDL `octet`.
    #[inline]
    pub fn write_octet(&mut self, v: u8) {
        self.buf.push(v);
    }

    /// Writes an IDL `boolean` (0 or 1).
    #[inline]
    pub fn write_boolean(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }

    /// Writes an IDL `char` already in the transmission code set (one octet).
    #[inline]
    pub fn write_char(&mut self, v: u8) {
        self.buf.push(v);
    }

    write_prim!(/// Writes an IDL `short`.
        write_short, i16);
    write_prim!(/// Writes an IDL `unsigned short`.
        write_ushort, u16);
    write_prim!(/// Writes an IDL `long`.
        write_long, i32);
    write_prim!(/// Writes an IDL `unsigned long`.
        write_ulong, u32);
    write_prim!(/// Writes an IDL `long long`.
        write_longlong, i64);
    write_prim!(/// Writes an IDL `unsigned long long`.
        write_ulonglong, u64);
    write_prim!(/// Writes an IDL `float`.
        write_float, f32);
    write_prim!(/// Writes an IDL `double`.
        write_double, f64);

    /// Writes an IDL `long double` (8-aligned, 16 octets in the stream's byte order).
    pub fn write_long_double(&mut self, v: LongDouble) {
        self.align(8);
        if self.in_encap {
            self.note_run(16);
        }
        let mut b = v.be_bytes;
        if self.order == ByteOrder::Little {
            b.reverse();
        }
        self.buf.extend_from_slice(&b);
    }

    /// Writes a sequence/array length or other count as an `unsigned long`, failing if it
    /// does not fit in 32 bits.
    #[inline]
    pub fn write_length(&mut self, len: usize) -> Result<()> {
        let n = u32::try_from(len).map_err(|_| MarshalError::LimitExceeded {
            size: len as u64,
            limit: u32::MAX as u64,
        })?;
        self.write_ulong(n);
        Ok(())
    }

    /// Writes primitives with no length prefix (an IDL array): one copy, or a reference for
    /// large native-order blocks.
    #[inline]
    pub fn write_primitive_array<T: Primitive>(&mut self, items: &'a [T]) {
        if items.is_empty() {
            return;
        }
        self.align(T::SIZE);
        if T::SIZE == 8 && self.in_encap {
            self.note_run(std::mem::size_of_val(items));
        }
        if self.swap {
            let start = self.buf.len();
            self.buf.resize(start + std::mem::size_of_val(items), 0);
            for (out, &v) in self.buf[start..].chunks_exact_mut(T::SIZE).zip(items) {
                out.copy_from_slice(bytemuck::bytes_of(&v.swap_bytes()));
            }
        } else {
            self.write_bytes_borrowed(bytemuck::cast_slice(items));
        }
    }

    /// Writes a sequence of primitives: length then elements, as one block.
    #[inline]
    pub fn write_primitive_seq<T: Primitive>(&mut self, items: &'a [T]) -> Result<()> {
        self.write_length(items.len())?;
        self.write_primitive_array(items);
        Ok(())
    }

    /// Writes a `sequence<octet>` (or `sequence<char>` already in the transmission code set).
    #[inline]
    pub fn write_octet_seq(&mut self, items: &'a [u8]) -> Result<()> {
        self.write_length(items.len())?;
        self.write_bytes_borrowed(items);
        Ok(())
    }

    /// Writes a sequence of booleans.
    pub fn write_boolean_seq(&mut self, items: &[bool]) -> Result<()> {
        self.write_length(items.len())?;
        self.buf.extend(items.iter().map(|&b| u8::from(b)));
        Ok(())
    }

    /// Writes an IDL `string` in the negotiated char code set, with its NUL.
    ///
    /// An IDL string cannot contain NUL (the terminator): a string with one is refused with
    /// [`MarshalError::NotRepresentable`] rather than sent as bytes no reader accepts.
    #[inline]
    pub fn write_string(&mut self, s: &str) -> Result<()> {
        let cs = self.ctx.code_sets.char_set;
        if s.as_bytes().contains(&0) {
            return Err(MarshalError::NotRepresentable {
                code_point: 0,
                code_set: "IDL string",
            });
        }
        let n = cs.encoded_len(s) + 1;
        self.write_length(n)?;
        cs.encode_str(s, &mut self.buf)?;
        self.buf.push(0);
        Ok(())
    }

    /// Writes a `string` and checks an IDL bound first.
    pub fn write_bounded_string(&mut self, s: &str, bound: u32) -> Result<()> {
        let len = s.chars().count() as u64;
        if len > u64::from(bound) {
            return Err(MarshalError::BoundExceeded {
                length: len,
                bound: bound.into(),
            });
        }
        self.write_string(s)
    }

    /// Writes an IDL `char` given as a Unicode scalar, converted to the char code set.
    pub fn write_char_unicode(&mut self, c: char) -> Result<()> {
        let b = self.ctx.code_sets.char_set.encode_char(c)?;
        self.buf.push(b);
        Ok(())
    }

    fn wchar_set(&self) -> Result<crate::codeset::WCharCodeSet> {
        if self.ctx.giop_minor == 0 {
            return Err(MarshalError::WCharUnavailable {
                reason: "GIOP 1.0 has no wchar",
            });
        }
        self.ctx
            .code_sets
            .wchar_set
            .ok_or(MarshalError::WCharUnavailable {
                reason: "no wchar code set negotiated",
            })
    }

    /// Writes an IDL `wchar`.
    ///
    /// GIOP 1.2: an octet length then big-endian UTF-16 with no byte-order mark.
    /// GIOP 1.1: an aligned 2-octet code unit in the stream's order.
    pub fn write_wchar(&mut self, c: char) -> Result<()> {
        let cs = self.wchar_set()?;
        let mut units = [0u16; 2];
        let units = c.encode_utf16(&mut units);
        if units.len() != 1 {
            return Err(MarshalError::NotRepresentable {
                code_point: c as u32,
                code_set: "a single UTF-16 code unit",
            });
        }
        let _ = cs;
        if self.ctx.giop_minor >= 2 {
            self.buf.push(2);
            self.buf.extend_from_slice(&units[0].to_be_bytes());
        } else {
            self.write_ushort(units[0]);
        }
        Ok(())
    }

    /// Writes an IDL `wstring`.
    ///
    /// GIOP 1.2: the length in octets, then big-endian UTF-16 without terminator, and without
    /// byte-order mark unless the first character is U+FEFF or U+FFFE (which a reader would
    /// otherwise take for one): then a big-endian mark goes first.
    /// GIOP 1.1: the length in code units including a terminating NUL, then the units.
    ///
    /// Like a `string`, a `wstring` cannot contain NUL.
    pub fn write_wstring(&mut self, s: &str) -> Result<()> {
        let cs = self.wchar_set()?;
        if s.as_bytes().contains(&0) {
            return Err(MarshalError::NotRepresentable {
                code_point: 0,
                code_set: "IDL wstring",
            });
        }
        let units = cs.encode_units(s)?;
        if self.ctx.giop_minor >= 2 {
            let bom = matches!(units.first(), Some(0xfeff | 0xfffe));
            self.write_length((units.len() + usize::from(bom)) * 2)?;
            self.buf.reserve((units.len() + 1) * 2);
            if bom {
                self.buf.extend_from_slice(&[0xfe, 0xff]);
            }
            for u in units {
                self.buf.extend_from_slice(&u.to_be_bytes());
            }
        } else {
            self.write_length(units.len() + 1)?;
            for u in units {
                self.write_ushort(u);
            }
            self.write_ushort(0);
        }
        Ok(())
    }

    /// Writes an encapsulation: a `sequence<octet>` whose content is a CDR stream of its own
    /// with a leading byte-order octet, alignment restarting at that octet.
    pub fn write_encapsulation<F>(&mut self, f: F) -> Result<()>
    where
        F: FnOnce(&mut CdrWriter<'_>) -> Result<()>,
    {
        self.write_encapsulation_with_order(self.order, f)
    }

    /// Writes an encapsulation in a chosen byte order, which may differ from the stream's
    /// (reproducing a peer's IOR profile or component, for instance).
    pub fn write_encapsulation_with_order<F>(&mut self, order: ByteOrder, f: F) -> Result<()>
    where
        F: FnOnce(&mut CdrWriter<'_>) -> Result<()>,
    {
        let mut inner = CdrWriter::with_byte_order(order, self.ctx);
        inner.splice_threshold = usize::MAX;
        inner.in_encap = true;
        inner.write_octet(order.flag());
        f(&mut inner)?;
        let runs = inner.uncuttable.take();
        let bytes = inner.into_bytes();
        self.write_length(bytes.len())?;
        if let Some(runs) = runs {
            // Placed now: kept when 4 past a multiple of 8 here, or all of them when this
            // is an encapsulation too.
            let at = self.position();
            for (s, e) in runs.into_iter() {
                if self.in_encap || !(at + s).is_multiple_of(8) {
                    self.add_run(at + s, at + e);
                }
            }
        }
        self.buf.extend_from_slice(&bytes);
        Ok(())
    }

    /// Reserves `len` octets at `align` and returns them for the caller to fill: the way
    /// generated code writes a run of fixed-size structs without per-field bounds checks.
    /// The returned bytes are zeroed.
    ///
    /// CDR structs have no alignment of their own, only their members do: a struct's
    /// fixed layout holds only from a position already aligned to its largest member, so
    /// generated code writes elements field by field while [`CdrWriter::position`] is not
    /// aligned (at most one element for structs whose size is a multiple of their alignment)
    /// and only the rest as a block.
    #[inline]
    pub fn reserve_block(&mut self, align: usize, len: usize) -> &mut [u8] {
        self.align(align);
        if align >= 8 && self.in_encap {
            // Conservatively all 8-octet units: the block's layout is not known here.
            self.note_run(len);
        }
        let start = self.buf.len();
        self.buf.resize(start + len, 0);
        &mut self.buf[start..]
    }

    /// Whether values written must be byte-swapped (the stream is not in native order).
    #[inline]
    pub fn swaps(&self) -> bool {
        self.swap
    }

    /// Overwrites an `unsigned long` previously written at `index` of the owned buffer (a
    /// length or size known only afterwards, like the GIOP message size).
    ///
    /// # Panics
    /// If `index + 4` is past the owned bytes written so far before the first splice; this is
    /// a programming error, never caused by input.
    #[inline]
    pub fn patch_ulong(&mut self, index: usize, v: u32) {
        let v = if self.swap { v.swap_bytes() } else { v };
        self.buf[index..index + 4].copy_from_slice(&v.to_ne_bytes());
    }

    /// The message as slices in order: owned runs interleaved with spliced blocks.
    pub fn segments(&self) -> Vec<&[u8]> {
        let mut out = Vec::with_capacity(self.splices.len() * 2 + 1);
        let mut from = 0;
        for s in &self.splices {
            if s.at > from {
                out.push(&self.buf[from..s.at]);
            }
            out.push(s.data);
            from = s.at;
        }
        if from < self.buf.len() {
            out.push(&self.buf[from..]);
        }
        out
    }

    /// Whether every byte is in the owned buffer (nothing was spliced in by reference), so
    /// [`CdrWriter::owned_bytes`] is the whole stream.
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        self.splices.is_empty()
    }

    /// The owned bytes so far, not counting spliced blocks (fine when nothing was large).
    #[inline]
    pub fn owned_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Runs `f` on a writer of another lifetime that goes on where this one is (same position,
    /// byte order, context), then takes back what it wrote. The owned buffer is moved, not
    /// copied, so nesting costs nothing per level; blocks `f`'s writer spliced in by
    /// reference are copied in on return, since they borrow for `'b` only. Used for state
    /// behind a lock (a value's), which cannot be lent to this writer for `'a`.
    pub fn with_detached<'b, R>(&mut self, f: impl FnOnce(&mut CdrWriter<'b>) -> R) -> R {
        let mut inner = CdrWriter {
            buf: std::mem::take(&mut self.buf),
            splices: Vec::new(),
            spliced_len: 0,
            base: self.base + self.spliced_len,
            swap: self.swap,
            order: self.order,
            ctx: self.ctx,
            splice_threshold: self.splice_threshold,
            uncuttable: self.uncuttable.take(),
            in_encap: self.in_encap,
        };
        let result = f(&mut inner);
        let CdrWriter {
            mut buf,
            splices,
            uncuttable,
            ..
        } = inner;
        self.uncuttable = uncuttable;
        if let Some(first) = splices.first().map(|s| s.at.min(buf.len())) {
            let tail = buf.split_off(first);
            let mut from = 0;
            for s in &splices {
                let at = s.at.saturating_sub(first).clamp(from, tail.len());
                buf.extend_from_slice(&tail[from..at]);
                buf.extend_from_slice(s.data);
                from = at;
            }
            buf.extend_from_slice(&tail[from..]);
        }
        self.buf = buf;
        result
    }

    /// The whole stream as one vector (spliced blocks copied in).
    pub fn into_bytes(self) -> Vec<u8> {
        if self.splices.is_empty() {
            return self.buf;
        }
        let mut out = Vec::with_capacity(self.len());
        for seg in self.segments() {
            out.extend_from_slice(seg);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codeset::{CharCodeSet, WCharCodeSet};

    #[test]
    fn a_detached_writer_goes_on_where_the_writer_is_and_its_splices_are_copied_back() {
        let big = vec![7u8; 5000];
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::default());
        w.write_octet(1);
        w.write_octet_seq(&big).unwrap();
        w.write_octet(2);
        let before = w.position();
        // Lives shorter than `w`'s borrows: spliced by `t`, copied in when `t` is done.
        let local = vec![9u8; 4096];
        let n = w.with_detached(|t| {
            assert_eq!(t.position(), before);
            t.write_long(3);
            t.write_octet_seq(&local).unwrap();
            t.write_octet(4);
            t.position()
        });
        assert_eq!(w.position(), n);
        w.write_octet(5);
        let mut want = vec![1, 0, 0, 0, 0, 0, 0x13, 0x88];
        want.extend_from_slice(&big);
        want.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0x10, 0]);
        want.extend_from_slice(&[9; 4096]);
        want.extend_from_slice(&[4, 5]);
        assert_eq!(w.into_bytes(), want);
    }

    #[test]
    fn alignment_is_relative_to_origin() {
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::default());
        w.write_octet(1);
        w.write_long(2);
        w.write_octet(3);
        w.write_double(1.0);
        assert_eq!(
            w.into_bytes(),
            [1, 0, 0, 0, 0, 0, 0, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0]
        );
        let mut w =
            CdrWriter::with_byte_order(ByteOrder::Little, CdrContext::default()).starting_at(12);
        w.write_short(-2);
        w.write_long(1);
        assert_eq!(w.into_bytes(), [0xfe, 0xff, 0, 0, 1, 0, 0, 0]);
    }

    #[test]
    fn strings_and_wide_strings() {
        let ctx = CdrContext::GIOP_1_2.with_code_sets(CodeSets {
            char_set: CharCodeSet::Utf8,
            wchar_set: Some(WCharCodeSet::Utf16),
        });
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, ctx);
        w.write_string("é").unwrap();
        w.write_wstring("hé").unwrap();
        w.write_wchar('A').unwrap();
        assert_eq!(
            w.into_bytes(),
            [0, 0, 0, 3, 0xc3, 0xa9, 0, 0, 0, 0, 0, 4, 0, b'h', 0, 0xe9, 2, 0, b'A']
        );
        let mut w = CdrWriter::with_byte_order(ByteOrder::Little, ctx.with_giop_minor(1));
        w.write_wstring("h").unwrap();
        assert_eq!(w.into_bytes(), [2, 0, 0, 0, b'h', 0, 0, 0]);
        let mut w = CdrWriter::new(CdrContext::GIOP_1_2);
        assert!(matches!(
            w.write_wstring("x"),
            Err(MarshalError::WCharUnavailable { .. })
        ));
        assert!(w.write_bounded_string("abc", 2).is_err());
    }

    #[test]
    fn large_blocks_are_spliced_not_copied() {
        let big = vec![7u8; 10_000];
        let doubles = vec![1.5f64; 1000];
        let mut w = CdrWriter::new(CdrContext::default());
        w.write_octet(9);
        w.write_octet_seq(&big).unwrap();
        w.write_primitive_seq(&doubles).unwrap();
        // octet, pad, length; the spliced block; length, pad to 8.
        assert_eq!(w.owned_bytes().len(), 1 + 3 + 4 + 4 + 4);
        let segs = w.segments();
        assert_eq!(segs.len(), 4);
        assert_eq!(segs[1].as_ptr(), big.as_ptr());
        assert_eq!(w.len(), 16 + 10_000 + 8000);
        let bytes = w.into_bytes();
        assert_eq!(bytes.len(), 18_016);
        assert_eq!(&bytes[4..8], &10_000u32.to_ne_bytes());
    }

    /// The writer is built and moved by value on every reply: a word more costs the server
    /// instructions per call (issue 28), so its size is pinned. 80 (u32 spliced length and
    /// threshold) measured no better than this: 1,832-1,838 Ir per server call against
    /// 1,825-1,831.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn the_writer_does_not_grow_unnoticed() {
        assert_eq!(std::mem::size_of::<CdrWriter<'static>>(), 88);
    }

    /// An 8-octet primitive in an encapsulation is 8-aligned there, so 4 past a multiple of
    /// 8 in the stream when the encapsulation starts so: the writer notes where (a fragment
    /// cut must not fall inside), at every nesting, and nothing when it is aligned.
    #[test]
    fn uncuttable_runs_of_encapsulated_8_octet_primitives() {
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::default());
        w.write_longlong(1); // the stream's own: always aligned
        w.write_encapsulation(|e| {
            // Content at 12: the order octet, pad to 8 (stream 20), then the long long.
            e.write_longlong(-2);
            e.write_double(0.5); // adjacent: one run
            e.write_long(3);
            e.write_encapsulation(|e2| {
                e2.write_ulonglong(4);
                Ok(())
            })
        })
        .unwrap();
        // The inner encapsulation's content at 12 + 32, its long long 8 further.
        assert_eq!(w.uncuttable(), [(20, 36), (52, 60)].as_slice());
        let b = w.clone().into_bytes();
        assert_eq!(&b[20..28], (-2i64).to_be_bytes());
        assert_eq!(&b[52..56], [0, 0, 0, 0]);
        assert_eq!(w.position(), 60);
        // A truncation hides the runs past the end.
        let mut t = w.clone();
        assert!(t.truncate(56));
        assert_eq!(t.uncuttable(), [(20, 36)].as_slice());
        // The same encapsulation 8-aligned in the stream: nothing to note.
        let mut a = CdrWriter::with_byte_order(ByteOrder::Little, CdrContext::default());
        a.write_ulong(0);
        a.write_encapsulation(|e| {
            e.write_longlong(7);
            e.write_primitive_array(&[1.0f64, 2.0]);
            e.write_long_double(LongDouble { be_bytes: [0; 16] });
            Ok(())
        })
        .unwrap();
        assert!(a.uncuttable().is_empty(), "{:?}", a.uncuttable());
        // Arrays and long doubles at 4 mod 8; kept through a detached writer; dropped by clear.
        let mut b = CdrWriter::with_byte_order(ByteOrder::Little, CdrContext::default());
        b.with_detached(|d| {
            d.write_encapsulation(|e| {
                e.write_primitive_array(&[1u64, 2, 3]);
                e.write_octet(1);
                e.write_long_double(LongDouble { be_bytes: [0; 16] });
                Ok(())
            })
        })
        .unwrap();
        assert_eq!(b.uncuttable(), [(12, 36), (44, 60)].as_slice());
        b.clear();
        assert!(b.uncuttable().is_empty());
    }

    #[test]
    fn encapsulation_restarts_alignment() {
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::default());
        w.write_octet(0xaa);
        w.write_encapsulation(|e| {
            e.write_long(5);
            Ok(())
        })
        .unwrap();
        assert_eq!(
            w.into_bytes(),
            [0xaa, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 5]
        );
    }

    #[test]
    fn truncate_only_owned_tails() {
        let big = vec![1u8; 5000];
        let mut w = CdrWriter::new(CdrContext::default());
        w.write_ulong(1);
        w.align(8);
        assert!(w.truncate(4));
        assert_eq!(w.len(), 4);
        w.write_bytes_borrowed(&big);
        assert!(!w.truncate(100));
        w.write_octet(2);
        assert!(w.truncate(5004));
        assert_eq!(w.len(), 5004);
    }

    #[test]
    fn reserve_block_and_patch() {
        let mut w = CdrWriter::new(CdrContext::default());
        w.write_ulong(0);
        w.write_octet(1);
        let b = w.reserve_block(8, 16);
        b[0] = 0xff;
        w.patch_ulong(0, 77);
        let bytes = w.into_bytes();
        assert_eq!(bytes.len(), 24);
        assert_eq!(bytes[8], 0xff);
        assert_eq!(&bytes[..4], &77u32.to_ne_bytes());
    }
}
