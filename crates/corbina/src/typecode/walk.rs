//! The TypeCode-driven CDR walker: skips a value, or copies it from one stream to another
//! (converting byte order, code sets and GIOP wide-character rules as the streams differ),
//! without decoding it into Rust values. This is what lets an [`Any`](crate::Any) keep and
//! forward a value of a type the receiver does not know.
//!
//! Fixed-size types use their precomputed [`Layout`](super::Layout): a run of them is one
//! block, copied as is or swapped by the layout's plan, checked by its list of booleans and
//! enums, with no per-element interpretation of the TypeCode (at most the first element of
//! a run is interpreted, to reach an aligned start). [`interpreted_elements`] counts, per
//! thread, the values the walker did interpret, so tests can see which path was taken.
//!
//! The walk recurses once per constructed value. Structs, unions and Anys count that depth on
//! the reader ([`CdrReader::enter`]) and against [`MAX_VALUE_DEPTH`], whichever is lower;
//! valuetypes nest as deep as the value nesting limit allows (the value stream state counts
//! them: `-ORBmaxValueNesting`, default 100,000), so a long list of values in an `Any` is
//! walked whole. Each constructed level runs where stack is left, growing it on the heap when
//! needed, so no depth up to those limits overflows a thread's stack. Every count is checked
//! against the bytes left before looping.

use super::cdr::{decode_type_code, encode_type_code, read_label, write_label};
use super::layout::{Check, FixedLayout};
use super::{Body, Node, TcKind, TypeCode, UnionLabel};
use crate::valuetype::{ValueBase, ValueObject, VALUE_BASE_ID};
use corbina_cdr::value::{
    RepositoryIds, ValueInput, ValueOutput, ValueStart, WriteHeader, WriteIds,
};
use corbina_cdr::{CdrReader, CdrWriter, Fixed, MarshalError, Result};
use std::cell::Cell;
use std::sync::Arc;

thread_local! {
    static INTERPRETED: Cell<u64> = const { Cell::new(0) };
}

/// How many values this thread's walker has interpreted member by member (a debug counter:
/// block-copied runs of fixed-size values do not count).
pub fn interpreted_elements() -> u64 {
    INTERPRETED.with(Cell::get)
}

/// How deeply structs, unions and Anys may nest inside each other in a walked value (a
/// recursive struct list of this many nodes is the longest accepted); valuetypes are bounded
/// by the value nesting limit instead.
pub const MAX_VALUE_DEPTH: u32 = 256;

fn invalid(offset: usize, reason: &'static str) -> MarshalError {
    MarshalError::InvalidValue { offset, reason }
}

/// Reads past one value of type `tc`, checking it.
pub fn skip_value(tc: &TypeCode, r: &mut CdrReader<'_>) -> Result<()> {
    let top = tc.closed_node();
    let mut wk: Walker<'_, '_, '_> = Walker {
        w: None,
        depth: 0,
        stack: Vec::new(),
        values: None,
    };
    wk.value(&top, r)
}

/// Copies one value of type `tc` from `r` to `w`, re-encoding it in `w`'s byte order, code
/// sets and GIOP version. Large blocks are spliced into `w` by reference where it can.
pub fn copy_value<'a: 'w, 'w>(
    tc: &TypeCode,
    r: &mut CdrReader<'a>,
    w: &mut CdrWriter<'w>,
) -> Result<()> {
    let top = tc.closed_node();
    let mut wk = Walker {
        w: Some(w),
        depth: 0,
        stack: Vec::new(),
        values: None,
    };
    wk.value(&top, r)
}

struct Walker<'n, 'x, 'w> {
    w: Option<&'x mut CdrWriter<'w>>,
    depth: u32,
    /// Enclosing struct/union/value types, to resolve recursive references.
    stack: Vec<&'n Arc<Node>>,
    /// Value stream state, made at the first valuetype met. One per walk: the value's
    /// indirections must stay inside the walked bytes (an `Any` is self-contained).
    values: Option<Box<ValueStreams>>,
}

/// Both ends of a walk's value encoding.
#[derive(Default)]
struct ValueStreams {
    input: ValueInput,
    output: ValueOutput,
    /// Abstract interfaces' values built through the registry (tag positions from, to, by 4):
    /// a hostile graph may be cyclic, so their states are emptied when the walk ends.
    built: Vec<(usize, usize)>,
}

impl Drop for ValueStreams {
    fn drop(&mut self) {
        for &(from, to) in &self.built {
            for p in (from..to).step_by(4) {
                let Ok(v) = self.input.resolve(p, p) else {
                    continue;
                };
                if let Ok(v) = v.downcast::<Arc<dyn ValueObject>>() {
                    v.reset_state();
                }
            }
        }
    }
}

macro_rules! out {
    ($s:expr, |$w:ident| $e:expr) => {
        if let Some($w) = $s.w.as_deref_mut() {
            $e;
        }
    };
}

impl<'n, 'w> Walker<'n, '_, 'w> {
    fn enter(&mut self, r: &mut CdrReader<'_>) -> Result<()> {
        if self.depth >= MAX_VALUE_DEPTH {
            return Err(MarshalError::NestingTooDeep {
                offset: r.position(),
                limit: MAX_VALUE_DEPTH,
            });
        }
        r.enter()?;
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self, r: &mut CdrReader<'_>) {
        r.leave();
        self.depth -= 1;
    }

    fn resolve(&self, n: &'n Arc<Node>, offset: usize) -> Result<&'n Arc<Node>> {
        match &n.body {
            Body::Recursive { id } => self
                .stack
                .iter()
                .rev()
                .find(|a| a.body.id() == Some(id.as_str()))
                .copied()
                .ok_or_else(|| invalid(offset, "unresolved recursive TypeCode")),
            _ => Ok(n),
        }
    }

    /// Whether a block of `len` octets at `l.align` can be copied as is here.
    fn block_ok(&self, l: &FixedLayout, r: &CdrReader<'_>, len: usize) -> bool {
        if !r.block_aligned(l.align as usize, len) {
            return false;
        }
        match self.w.as_deref() {
            None => true,
            Some(w) => {
                w.position().is_multiple_of(l.align as usize)
                    && (!l.has_char
                        || w.context().code_sets.char_set == r.context().code_sets.char_set)
            }
        }
    }

    /// Copies `count` values of fixed layout `l` as one block.
    fn block<'a: 'w>(
        &mut self,
        l: &FixedLayout,
        count: usize,
        r: &mut CdrReader<'a>,
    ) -> Result<()> {
        if self.values.is_some() {
            self.begin_member(r)?;
        }
        let size = l.size as usize;
        let len = size
            .checked_mul(count)
            .ok_or_else(|| invalid(r.position(), "block too large"))?;
        let start = r.position();
        let bytes = r.read_bytes(len)?;
        if !l.checks.is_empty() {
            for (i, elem) in bytes.chunks_exact(size.max(1)).enumerate() {
                for c in l.checks.iter() {
                    check(c, elem, r.swaps(), start + i * size)?;
                }
            }
        }
        let swaps_r = r.swaps();
        if let Some(w) = self.w.as_deref_mut() {
            if swaps_r == w.swaps() || l.swaps.is_empty() {
                w.write_bytes_borrowed(bytes);
            } else {
                let out = w.reserve_block(l.align as usize, len);
                out.copy_from_slice(bytes);
                for elem in out.chunks_exact_mut(size.max(1)) {
                    for s in l.swaps.iter() {
                        let (o, wd) = (s.offset as usize, s.width as usize);
                        for k in 0..s.count as usize {
                            elem[o + k * wd..o + (k + 1) * wd].reverse();
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn value<'a: 'w>(&mut self, n: &'n Arc<Node>, r: &mut CdrReader<'a>) -> Result<()> {
        let n = self.resolve(n, r.position())?;
        // Structs and arrays have no octets of their own: their members open the chunk (a
        // struct whose first member is a value may start right after a chunk's end).
        if self.values.is_some()
            && !matches!(
                n.kind,
                TcKind::Value
                    | TcKind::Event
                    | TcKind::ValueBox
                    | TcKind::Alias
                    | TcKind::AbstractInterface
                    | TcKind::Struct
                    | TcKind::Array
            )
        {
            self.begin_member(r)?;
        }
        if let Some(l) = n.layout.fixed.as_deref() {
            // A fixed-size struct has octets: into the chunk before its alignment is checked.
            if self.values.is_some() {
                self.begin_member(r)?;
            }
            if self.block_ok(l, r, l.size as usize) {
                return self.block(l, 1, r);
            }
        }
        INTERPRETED.with(|c| c.set(c.get() + 1));
        match n.kind {
            TcKind::Struct
            | TcKind::Except
            | TcKind::Union
            | TcKind::Sequence
            | TcKind::Array
            | TcKind::Alias
            | TcKind::Value
            | TcKind::Event
            | TcKind::ValueBox => crate::valuetype::nested(|| self.constructed(n, r)),
            _ => self.leaf(n, r),
        }
    }

    /// Values of the kinds that contain no other typed values.
    #[inline(never)]
    fn leaf<'a: 'w>(&mut self, n: &'n Arc<Node>, r: &mut CdrReader<'a>) -> Result<()> {
        match n.kind {
            TcKind::Null | TcKind::Void => {}
            TcKind::Short | TcKind::UShort => {
                let v = r.read_ushort()?;
                out!(self, |w| w.write_ushort(v));
            }
            TcKind::Long | TcKind::ULong | TcKind::Float => {
                let v = r.read_ulong()?;
                out!(self, |w| w.write_ulong(v));
            }
            TcKind::LongLong | TcKind::ULongLong | TcKind::Double => {
                let v = r.read_ulonglong()?;
                out!(self, |w| w.write_ulonglong(v));
            }
            TcKind::LongDouble => {
                let v = r.read_long_double()?;
                out!(self, |w| w.write_long_double(v));
            }
            TcKind::Boolean => {
                let v = r.read_boolean()?;
                out!(self, |w| w.write_boolean(v));
            }
            TcKind::Octet => {
                let v = r.read_octet()?;
                out!(self, |w| w.write_octet(v));
            }
            TcKind::Char => {
                let v = r.read_char_unicode()?;
                out!(self, |w| w.write_char_unicode(v)?);
            }
            TcKind::WChar => {
                let v = r.read_wchar()?;
                out!(self, |w| w.write_wchar(v)?);
            }
            TcKind::Enum => {
                let count = match &n.body {
                    Body::Enum { members, .. } => members.len() as u32,
                    _ => 0,
                };
                let v = r.read_enum(count)?;
                out!(self, |w| w.write_ulong(v));
            }
            TcKind::String => {
                let s = r.read_string()?;
                check_bound(n, s.chars().count())?;
                out!(self, |w| w.write_string(&s)?);
            }
            TcKind::WString => {
                let s = r.read_wstring()?;
                check_bound(n, s.chars().count())?;
                out!(self, |w| w.write_wstring(&s)?);
            }
            TcKind::Fixed => {
                let Body::Fixed { digits, scale } = n.body else {
                    return Err(invalid(r.position(), "bad fixed TypeCode"));
                };
                let v = Fixed::decode(r, digits as u8, scale as u8)?;
                out!(self, |w| v.encode(w)?);
            }
            TcKind::Any => {
                let tc = decode_type_code(r)?;
                out!(self, |w| encode_type_code(&tc, w)?);
                self.enter(r)?;
                let top = tc.closed_node();
                let mut inner = Walker {
                    w: self.w.as_deref_mut(),
                    depth: self.depth + 1,
                    stack: Vec::new(),
                    // Values in an Any nested in this stream are in this stream's value
                    // encoding (its chunks, its indirections).
                    values: self.values.take(),
                };
                let res = crate::valuetype::nested(|| inner.value(&top, r));
                self.values = inner.values.take();
                self.leave(r);
                res?;
            }
            TcKind::TypeCode => {
                let tc = decode_type_code(r)?;
                out!(self, |w| encode_type_code(&tc, w)?);
            }
            TcKind::Principal => {
                let b = r.read_octet_seq()?;
                out!(self, |w| w.write_octet_seq(b)?);
            }
            TcKind::Objref | TcKind::Component | TcKind::Home => self.ior(r)?,
            TcKind::AbstractInterface => {
                if self.values.is_some() {
                    self.begin_member(r)?;
                }
                let is_objref = r.read_boolean()?;
                out!(self, |w| w.write_boolean(is_objref));
                if is_objref {
                    self.ior(r)?;
                } else {
                    self.abstract_value(n, r)?;
                }
            }
            TcKind::Native | TcKind::LocalInterface => {
                return Err(invalid(
                    r.position(),
                    "native and local values cannot be marshalled",
                ))
            }
            _ => return Err(invalid(r.position(), "not a leaf kind")),
        }
        Ok(())
    }

    /// Structs, unions, sequences, arrays, aliases and valuetypes (kept apart from `leaf` so
    /// the frames of the recursion stay small).
    #[inline(never)]
    fn constructed<'a: 'w>(&mut self, n: &'n Arc<Node>, r: &mut CdrReader<'a>) -> Result<()> {
        match n.kind {
            TcKind::Struct | TcKind::Except => {
                let Body::Struct { members, .. } = &n.body else {
                    return Err(invalid(r.position(), "bad struct TypeCode"));
                };
                if n.kind == TcKind::Except {
                    // An exception's value starts with its repository id.
                    self.raw_string(r)?;
                }
                self.enter(r)?;
                self.stack.push(n);
                let res = members.iter().try_for_each(|(_, t)| self.value(t, r));
                self.stack.pop();
                self.leave(r);
                res?;
            }
            TcKind::Union => {
                let Body::Union {
                    disc,
                    default_index,
                    arms,
                    ..
                } = &n.body
                else {
                    return Err(invalid(r.position(), "bad union TypeCode"));
                };
                let v = read_label(r, disc)?;
                out!(self, |w| write_label(w, disc, v)?);
                let arm = arms
                    .iter()
                    .find(|a| a.label == UnionLabel::Value(v))
                    .or_else(|| {
                        usize::try_from(*default_index)
                            .ok()
                            .and_then(|i| arms.get(i))
                    });
                if let Some(arm) = arm {
                    self.enter(r)?;
                    self.stack.push(n);
                    let res = self.value(&arm.ty, r);
                    self.stack.pop();
                    self.leave(r);
                    res?;
                }
            }
            TcKind::Sequence | TcKind::Array => {
                let Body::Seq { bound, content } = &n.body else {
                    return Err(invalid(r.position(), "bad sequence TypeCode"));
                };
                let content = self.resolve(content, r.position())?;
                let min = (content.layout.min_size as usize).max(1);
                let count = if n.kind == TcKind::Sequence {
                    let c = r.read_length(min)?;
                    if *bound > 0 && c > *bound as usize {
                        return Err(MarshalError::BoundExceeded {
                            length: c as u64,
                            bound: u64::from(*bound),
                        });
                    }
                    out!(self, |w| w.write_length(c)?);
                    c
                } else {
                    r.check_length(*bound as usize, min)?;
                    *bound as usize
                };
                self.elements(content, count, r)?;
            }
            TcKind::Alias => {
                let Body::Alias { content, .. } = &n.body else {
                    return Err(invalid(r.position(), "bad alias TypeCode"));
                };
                self.value(content, r)?;
            }
            TcKind::Value | TcKind::Event | TcKind::ValueBox => self.value_type(n, r)?,
            _ => return Err(invalid(r.position(), "not a constructed kind")),
        }
        Ok(())
    }

    fn elements<'a: 'w>(
        &mut self,
        content: &'n Arc<Node>,
        count: usize,
        r: &mut CdrReader<'a>,
    ) -> Result<()> {
        let mut i = 0;
        if let Some(l) = content.layout.fixed.as_deref().filter(|l| l.repeats()) {
            while i < count {
                let rest = (count - i) * l.size as usize;
                if self.block_ok(l, r, rest) {
                    return self.block(l, count - i, r);
                }
                // Not aligned yet: one element by interpretation gets both streams there.
                self.value(content, r)?;
                i += 1;
            }
            return Ok(());
        }
        while i < count {
            self.value(content, r)?;
            i += 1;
        }
        Ok(())
    }

    /// A repository id, codebase or other ISO-8859-1 string that is not converted between
    /// code sets: copied octet for octet.
    fn raw_string(&mut self, r: &mut CdrReader<'_>) -> Result<()> {
        let b = r.read_string_bytes()?;
        out!(self, |w| {
            w.write_length(b.len() + 1)?;
            w.write_bytes(b);
            w.write_octet(0)
        });
        Ok(())
    }

    /// An object reference: an IOR (type id, then tagged profiles), copied profile by profile.
    fn ior<'a: 'w>(&mut self, r: &mut CdrReader<'a>) -> Result<()> {
        self.raw_string(r)?;
        let n = r.read_length(8)?;
        out!(self, |w| w.write_length(n)?);
        for _ in 0..n {
            let tag = r.read_ulong()?;
            let data = r.read_octet_seq()?;
            out!(self, |w| {
                w.write_ulong(tag);
                w.write_octet_seq(data)?
            });
        }
        Ok(())
    }

    /// In a chunked value's state, opens a chunk (on both sides) before a member that is not
    /// itself a value.
    fn begin_member(&mut self, r: &mut CdrReader<'_>) -> Result<()> {
        let Some(vs) = self.values.as_deref_mut() else {
            return Ok(());
        };
        vs.input.begin_member(r)?;
        out!(self, |w| vs.output.begin_member(w)?);
        Ok(())
    }

    /// The value form of an abstract interface. Its concrete type is not in the TypeCode: a
    /// value whose type has a registered factory (and null, and an indirection) is read
    /// through the registry and written back from the value built; any other value is walked
    /// as `n`, which skips it when it is chunked and refuses it otherwise.
    fn abstract_value<'a: 'w>(&mut self, n: &'n Arc<Node>, r: &mut CdrReader<'a>) -> Result<()> {
        // A look ahead at the tag (and the header) decides; the indirection's target is
        // checked when it is read.
        let registered = match r.clone().read_ulong() {
            Ok(0 | 0xffff_ffff) => true,
            _ => {
                // Through this walk's value state: an id sent before comes as an indirection.
                let fresh;
                let input = match &self.values {
                    Some(vs) => &vs.input,
                    None => {
                        fresh = ValueInput::new();
                        &fresh
                    }
                };
                input.peek_repository_ids(r).is_some_and(|ids| {
                    ids.iter()
                        .any(|id| crate::valuetype::lookup_value_factory(id).is_some())
                })
            }
        };
        if !registered {
            return self.value_type(n, r);
        }
        let vs = self.values.get_or_insert_with(Default::default);
        // Every value tag inside is 4-aligned as the first one is.
        let from = r.aligned_position(4).unwrap_or(usize::MAX);
        let read = ValueBase::read_as(r, &mut vs.input, VALUE_BASE_ID, &[]);
        if from != usize::MAX {
            vs.built.push((from, r.position()));
        }
        let v = read?;
        out!(self, |w| match v.handle() {
            None => vs.output.write_null(w)?,
            Some(h) => h.write_value(w, &mut vs.output)?,
        });
        Ok(())
    }

    /// A valuetype or value box (CORBA 3.0 §15.3.4): null, an indirection to a value walked
    /// before, or a value tag with optional codebase and repository ids, then the state,
    /// chunked or not. A value whose most derived type is not `n` is truncated to `n` when it
    /// is chunked and lists `n` among its truncatable bases (what a receiver knowing only `n`
    /// does), and refused otherwise. Custom values can be skipped (they are chunked) but not
    /// copied, since their state has no TypeCode.
    fn value_type<'a: 'w>(&mut self, n: &'n Arc<Node>, r: &mut CdrReader<'a>) -> Result<()> {
        let at = r.position();
        let vs = self.values.get_or_insert_with(Default::default);
        let h = match vs.input.read_value(r)? {
            ValueStart::Null => {
                out!(self, |w| vs.output.write_null(w)?);
                return Ok(());
            }
            ValueStart::Indirection { target } => {
                // Only a value copied before can be pointed at again.
                vs.input.resolve(target, at)?;
                out!(self, |w| {
                    let header = WriteHeader::single("");
                    if vs.output.begin_value(w, target, &header)? {
                        return Err(invalid(at, "indirection to a value not copied"));
                    }
                });
                return Ok(());
            }
            ValueStart::Value(h) => h,
        };
        let formal = n.body.id().unwrap_or("");
        let wire: Vec<&str> = h.repository_ids.iter().collect();
        let (keep, state) = match wire.iter().position(|id| *id == formal) {
            None if wire.is_empty() => (0, Some(n)),
            Some(0) => (0, Some(n)),
            Some(i) if h.chunked => (i, Some(n)),
            // Neither `n` nor a truncatable base of it (or an abstract interface's value):
            // without a TypeCode for the state only a chunked value can be skipped.
            _ if h.chunked && self.w.is_none() => (0, None),
            _ => {
                return Err(invalid(
                    at,
                    "value of a type the TypeCode does not describe",
                ))
            }
        };
        let custom = matches!(n.body, Body::Value { modifier: 1, .. });
        if custom && (self.w.is_some() || !h.chunked) {
            return Err(invalid(
                at,
                "custom values can only be skipped, when chunked",
            ));
        }
        // Nothing else points at this value's marker: it only says "copied".
        vs.input.register(h.position, Arc::new(()));
        out!(self, |w| {
            let ids = &wire[keep..];
            let header = WriteHeader {
                repository_ids: match ids {
                    [] => WriteIds::None,
                    [id] if keep == 0 && !matches!(h.repository_ids, RepositoryIds::List(_)) => {
                        WriteIds::Single(id)
                    }
                    ids => WriteIds::List(ids),
                },
                codebase: h.codebase.as_deref(),
                chunked: h.chunked,
            };
            vs.output.begin_value(w, h.position, &header)?;
        });
        if let Some(n) = state.filter(|_| !custom) {
            // Not counted as a level here: the value stream state bounds value nesting.
            self.stack.push(n);
            let res = self.value_state(n, r);
            self.stack.pop();
            res?;
        }
        let Some(vs) = self.values.as_deref_mut() else {
            return Err(invalid(at, "value state lost"));
        };
        // Skips what was not read (a truncated derived state) through the end tag.
        vs.input.end_value(r)?;
        out!(self, |w| vs.output.end_value(w)?);
        Ok(())
    }

    fn value_state<'a: 'w>(&mut self, n: &'n Arc<Node>, r: &mut CdrReader<'a>) -> Result<()> {
        match &n.body {
            Body::Alias { content, .. } => self.value(content, r),
            Body::Value { base, members, .. } => {
                if let Some(b) = base {
                    let b = self.resolve(b, r.position())?;
                    self.enter(r)?;
                    // The base binds its own recursive references (`valuetype B { B next; }`).
                    self.stack.push(b);
                    let res = self.value_state(b, r);
                    self.stack.pop();
                    self.leave(r);
                    res?;
                }
                members.iter().try_for_each(|m| self.value(&m.ty, r))
            }
            // An abstract interface holding a value: its concrete type is not in the TypeCode.
            _ => Err(invalid(r.position(), "value of an unknown concrete type")),
        }
    }
}

fn check_bound(n: &Node, len: usize) -> Result<()> {
    if let Body::Bound(b) = n.body {
        if b > 0 && len > b as usize {
            return Err(MarshalError::BoundExceeded {
                length: len as u64,
                bound: b.into(),
            });
        }
    }
    Ok(())
}

fn check(c: &Check, elem: &[u8], swapped: bool, base: usize) -> Result<()> {
    match *c {
        Check::Boolean { offset } => {
            let v = elem[offset as usize];
            if v > 1 {
                return Err(MarshalError::InvalidBoolean {
                    offset: base + offset as usize,
                    value: v,
                });
            }
        }
        Check::Enum { offset, count } => {
            let o = offset as usize;
            let raw = [elem[o], elem[o + 1], elem[o + 2], elem[o + 3]];
            let v = if swapped {
                u32::from_ne_bytes(raw).swap_bytes()
            } else {
                u32::from_ne_bytes(raw)
            };
            if v >= count {
                return Err(MarshalError::InvalidEnum {
                    offset: base + o,
                    value: v,
                    count,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::typecode::StructMember;
    use corbina_cdr::{ByteOrder, CdrContext};

    #[test]
    fn copies_struct_and_swaps() {
        let t = TypeCode::create_struct_tc(
            "IDL:P:1.0",
            "P",
            vec![
                StructMember::new("a", TypeCode::OCTET),
                StructMember::new("b", TypeCode::LONG),
                StructMember::new("c", TypeCode::BOOLEAN),
            ],
        )
        .unwrap();
        let be = [9, 0, 0, 0, 0, 0, 0, 5, 1];
        let mut r = CdrReader::new(&be, ByteOrder::Big, CdrContext::GIOP_1_2);
        let mut w = CdrWriter::with_byte_order(ByteOrder::Little, CdrContext::GIOP_1_2);
        copy_value(&t, &mut r, &mut w).unwrap();
        r.expect_end().unwrap();
        assert_eq!(w.into_bytes(), [9, 0, 0, 0, 5, 0, 0, 0, 1]);
        let bad = [9, 0, 0, 0, 0, 0, 0, 5, 2];
        let mut r = CdrReader::new(&bad, ByteOrder::Big, CdrContext::GIOP_1_2);
        assert!(skip_value(&t, &mut r).is_err());
    }

    /// `valuetype V { any a; long b; }` chunked, its `a` holding `valuetype W { long x; }`:
    /// the nested value is in the outer stream's value encoding (chunks end around it).
    #[test]
    fn value_in_an_any_in_a_chunked_value() {
        use crate::typecode::ValueMember;
        use corbina_cdr::value::{ValueInput, ValueOutput};
        let w_tc = TypeCode::create_value_tc(
            "IDL:W:1.0",
            "W",
            0,
            None,
            vec![ValueMember::new("x", TypeCode::LONG, 1)],
        )
        .unwrap();
        let v_tc = TypeCode::create_value_tc(
            "IDL:V:1.0",
            "V",
            0,
            None,
            vec![
                ValueMember::new("a", TypeCode::primitive(TcKind::Any), 1),
                ValueMember::new("b", TypeCode::LONG, 1),
            ],
        )
        .unwrap();
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
        let mut out = ValueOutput::new();
        let ids = ["IDL:V:1.0"];
        let header = WriteHeader {
            repository_ids: WriteIds::List(&ids),
            codebase: None,
            chunked: true,
        };
        assert!(out.begin_value(&mut w, 1, &header).unwrap());
        out.begin_member(&mut w).unwrap();
        encode_type_code(&w_tc, &mut w).unwrap();
        assert!(out
            .begin_value(&mut w, 2, &WriteHeader::single("IDL:W:1.0"))
            .unwrap());
        out.begin_member(&mut w).unwrap();
        w.write_long(7);
        out.end_value(&mut w).unwrap();
        out.begin_member(&mut w).unwrap();
        w.write_long(8);
        out.end_value(&mut w).unwrap();
        let bytes = w.into_bytes();

        let mut r = CdrReader::new(&bytes, ByteOrder::Big, CdrContext::GIOP_1_2);
        skip_value(&v_tc, &mut r).unwrap();
        r.expect_end().unwrap();
        let mut r = CdrReader::new(&bytes, ByteOrder::Big, CdrContext::GIOP_1_2);
        let mut w = CdrWriter::with_byte_order(ByteOrder::Little, CdrContext::GIOP_1_2);
        copy_value(&v_tc, &mut r, &mut w).unwrap();
        let le = w.into_bytes();
        // Read back by hand: V's chunk holds the TypeCode, W is nested and chunked, then b.
        let mut r = CdrReader::new(&le, ByteOrder::Little, CdrContext::GIOP_1_2);
        let mut input = ValueInput::new();
        input.read_value(&mut r).unwrap();
        input.begin_member(&mut r).unwrap();
        assert!(decode_type_code(&mut r).unwrap().equal(&w_tc));
        let ValueStart::Value(h) = input.read_value(&mut r).unwrap() else {
            panic!("not a value")
        };
        assert!(h.chunked, "nested in a chunked value");
        input.begin_member(&mut r).unwrap();
        assert_eq!(r.read_long().unwrap(), 7);
        input.end_value(&mut r).unwrap();
        input.begin_member(&mut r).unwrap();
        assert_eq!(r.read_long().unwrap(), 8);
        input.end_value(&mut r).unwrap();
        r.expect_end().unwrap();
    }
}
