//! TypeCodes in CDR (CORBA 3.0 §15.3.5.1): empty parameter lists are the kind alone;
//! `string`, `wstring` and `fixed` have simple parameters after the kind; the other kinds
//! put theirs in an encapsulation. A recursive or repeated TypeCode is an indirection:
//! `0xffffffff` then a `long` offset, relative to the offset field itself, back to an earlier
//! TypeCode's kind field of the same top-level TypeCode, possibly outside the current
//! encapsulation (positions here are absolute, across nested encapsulations).
//!
//! The encoder emits indirections for recursive references and for a complex TypeCode
//! description that occurs again (the same shared description, not an equal one), which
//! keeps shared descriptions from expanding. The default member's label of a union is
//! written as the zero value of the discriminator type.
//!
//! The decoder trusts nothing: indirections must point backwards at a TypeCode start it has
//! seen (a recursive one only at an enclosing struct, union or value type with a repository
//! id), nesting is bounded by the reader's depth limit, counts are checked against the bytes
//! left before anything is allocated, unknown kinds are errors.

use super::factory::label_range;
use super::{Arm, Body, Node, TcKind, TypeCode, UnionLabel, VMember, INDIRECTION_TAG};
use corbina_cdr::{CdrDecode, CdrEncode, CdrReader, CdrWriter, MarshalError, Result};
use std::collections::HashMap;
use std::sync::Arc;

fn invalid(offset: usize, reason: &'static str) -> MarshalError {
    MarshalError::InvalidValue { offset, reason }
}

/// Writes `tc` (the ORB's `write_TypeCode`).
///
/// Fails for a TypeCode with an unresolved recursive reference (`BAD_TYPECODE` in CORBA;
/// reported as `MARSHAL`/`InvalidValue` here).
/// A TypeCode nested deeper than a receiver accepts ([`MAX_TYPECODE_DEPTH`], what Corbina's
/// decoder accepts) is refused with MARSHAL before anything is written: an application can
/// build one of any depth, which no peer would read.
pub fn encode_type_code(tc: &TypeCode, w: &mut CdrWriter<'_>) -> Result<()> {
    // Parts with no encapsulation of their own (primitives, strings) are one node more.
    if tc.node.height > MAX_TYPECODE_DEPTH + 1 {
        return Err(MarshalError::NestingTooDeep {
            offset: w.position(),
            limit: MAX_TYPECODE_DEPTH,
        });
    }
    let node = tc.closed_node();
    if node.height > MAX_TYPECODE_DEPTH + 1 {
        return Err(MarshalError::NestingTooDeep {
            offset: w.position(),
            limit: MAX_TYPECODE_DEPTH,
        });
    }
    if !node.free.is_empty() {
        return Err(invalid(
            w.position(),
            "incomplete TypeCode: unresolved recursive reference",
        ));
    }
    let mut enc = Encoder {
        repeats: HashMap::new(),
        enclosing: Vec::new(),
    };
    enc.tc(&node, w, 0)
}

struct Encoder {
    /// Absolute start of complex TypeCodes written so far.
    repeats: HashMap<*const Node, usize>,
    /// Enclosing struct/union/value TypeCodes being written: (id, absolute start).
    enclosing: Vec<(String, usize)>,
}

impl Encoder {
    /// Writes `n` into `w`, whose position 0 is at absolute position `base`. Recursive (an
    /// encapsulation's writer per level, some KiB of stack in a debug build): each level runs
    /// where stack is left, growing it on the heap when needed.
    fn tc(&mut self, n: &Arc<Node>, w: &mut CdrWriter<'_>, base: usize) -> Result<()> {
        crate::valuetype::nested(|| self.tc_here(n, w, base))
    }

    fn tc_here(&mut self, n: &Arc<Node>, w: &mut CdrWriter<'_>, base: usize) -> Result<()> {
        w.align(4);
        let start = base + w.position();
        let target = match &n.body {
            Body::Recursive { id } => Some(
                self.enclosing
                    .iter()
                    .rev()
                    .find(|(i, _)| i == id)
                    .map(|&(_, p)| p)
                    .ok_or_else(|| invalid(start, "incomplete TypeCode"))?,
            ),
            _ => self.repeats.get(&Arc::as_ptr(n)).copied(),
        };
        if let Some(target) = target {
            w.write_ulong(INDIRECTION_TAG);
            let offset = target as i64 - (start + 4) as i64;
            let offset = i32::try_from(offset).map_err(|_| MarshalError::LimitExceeded {
                size: offset.unsigned_abs(),
                limit: i32::MAX as u64,
            })?;
            w.write_long(offset);
            return Ok(());
        }
        w.write_ulong(n.kind.value());
        match &n.body {
            Body::Empty => return Ok(()),
            Body::Bound(b) => {
                w.write_ulong(*b);
                return Ok(());
            }
            Body::Fixed { digits, scale } => {
                w.write_ushort(*digits);
                w.write_short(*scale);
                return Ok(());
            }
            _ => {}
        }
        let pushed = n.kind.can_recurse();
        if pushed {
            let id = n.body.id().unwrap_or_default().to_string();
            self.enclosing.push((id, start));
        }
        // The encapsulation's length goes at the next 4-aligned position; its content (the
        // byte-order octet first) right after.
        let inner_base = base + ((w.position() + 3) & !3) + 4;
        let order = w.byte_order();
        let r = w.write_encapsulation_with_order(order, |e| self.params(n, e, inner_base));
        if pushed {
            self.enclosing.pop();
        }
        r?;
        self.repeats.insert(Arc::as_ptr(n), start);
        Ok(())
    }

    fn params(&mut self, n: &Arc<Node>, e: &mut CdrWriter<'_>, base: usize) -> Result<()> {
        match &n.body {
            Body::Named { id, name } => {
                e.write_string(id)?;
                e.write_string(name)?;
            }
            Body::Struct { id, name, members } => {
                e.write_string(id)?;
                e.write_string(name)?;
                e.write_length(members.len())?;
                for (mname, t) in members.iter() {
                    e.write_string(mname)?;
                    self.tc(t, e, base)?;
                }
            }
            Body::Union {
                id,
                name,
                disc,
                default_index,
                arms,
            } => {
                e.write_string(id)?;
                e.write_string(name)?;
                self.tc(disc, e, base)?;
                e.write_long(*default_index);
                e.write_length(arms.len())?;
                for a in arms.iter() {
                    let v = match a.label {
                        UnionLabel::Default => 0,
                        UnionLabel::Value(v) => v,
                    };
                    write_label(e, disc, v)?;
                    e.write_string(&a.name)?;
                    self.tc(&a.ty, e, base)?;
                }
            }
            Body::Enum { id, name, members } => {
                e.write_string(id)?;
                e.write_string(name)?;
                e.write_length(members.len())?;
                for m in members.iter() {
                    e.write_string(m)?;
                }
            }
            Body::Seq { bound, content } => {
                self.tc(content, e, base)?;
                e.write_ulong(*bound);
            }
            Body::Alias { id, name, content } => {
                e.write_string(id)?;
                e.write_string(name)?;
                self.tc(content, e, base)?;
            }
            Body::Value {
                id,
                name,
                modifier,
                base: concrete,
                members,
            } => {
                e.write_string(id)?;
                e.write_string(name)?;
                e.write_short(*modifier);
                match concrete {
                    Some(b) => self.tc(b, e, base)?,
                    None => e.write_ulong(TcKind::Null.value()),
                }
                e.write_length(members.len())?;
                for m in members.iter() {
                    e.write_string(&m.name)?;
                    self.tc(&m.ty, e, base)?;
                    e.write_short(m.visibility);
                }
            }
            Body::Empty | Body::Bound(_) | Body::Fixed { .. } | Body::Recursive { .. } => {}
        }
        Ok(())
    }
}

fn unalias(n: &Arc<Node>) -> &Arc<Node> {
    let mut n = n;
    // Bounded: alias chains are finite trees.
    while let (TcKind::Alias, Body::Alias { content, .. }) = (n.kind, &n.body) {
        n = content;
    }
    n
}

/// Writes a union label (or discriminator) `v` as a value of `disc`.
pub(crate) fn write_label(w: &mut CdrWriter<'_>, disc: &Arc<Node>, v: i128) -> Result<()> {
    let d = unalias(disc);
    match d.kind {
        TcKind::Short => w.write_short(v as i16),
        TcKind::UShort => w.write_ushort(v as u16),
        TcKind::Long => w.write_long(v as i32),
        TcKind::ULong | TcKind::Enum => w.write_ulong(v as u32),
        TcKind::LongLong => w.write_longlong(v as i64),
        TcKind::ULongLong => w.write_ulonglong(v as u64),
        TcKind::Boolean => w.write_boolean(v != 0),
        TcKind::Char => w.write_char(v as u8),
        TcKind::WChar => w.write_wchar(char::from_u32(v as u32).unwrap_or('\u{fffd}'))?,
        _ => return Err(invalid(w.position(), "bad union discriminator type")),
    }
    Ok(())
}

/// Reads a union label (or discriminator) of type `disc`.
pub(crate) fn read_label(r: &mut CdrReader<'_>, disc: &Arc<Node>) -> Result<i128> {
    let d = unalias(disc);
    Ok(match d.kind {
        TcKind::Short => r.read_short()?.into(),
        TcKind::UShort => r.read_ushort()?.into(),
        TcKind::Long => r.read_long()?.into(),
        TcKind::ULong => r.read_ulong()?.into(),
        TcKind::LongLong => r.read_longlong()?.into(),
        TcKind::ULongLong => r.read_ulonglong()?.into(),
        TcKind::Boolean => i128::from(r.read_boolean()?),
        TcKind::Char => r.read_octet()?.into(),
        TcKind::WChar => u32::from(r.read_wchar()?).into(),
        TcKind::Enum => {
            let Body::Enum { members, .. } = &d.body else {
                return Err(invalid(r.position(), "bad enum TypeCode"));
            };
            r.read_enum(members.len() as u32)?.into()
        }
        _ => return Err(invalid(r.position(), "bad union discriminator type")),
    })
}

/// How deeply TypeCodes may nest inside each other when decoded (besides the reader's own
/// encapsulation limit): deep enough for any real IDL, shallow enough for small stacks.
pub const MAX_TYPECODE_DEPTH: u32 = 100;

/// Reads a TypeCode (the ORB's `read_TypeCode`).
pub fn decode_type_code(r: &mut CdrReader<'_>) -> Result<TypeCode> {
    r.align(4)?;
    let mut dec = Decoder {
        depth: 0,
        top: r.position(),
        seen: HashMap::new(),
        open: Vec::new(),
    };
    let node = dec.tc(r)?;
    if !node.free.is_empty() {
        return Err(invalid(
            dec.top,
            "TypeCode with an unresolved recursive reference",
        ));
    }
    Ok(TypeCode::from_node(node))
}

struct Decoder {
    depth: u32,
    /// Where the top-level TypeCode starts: indirections may not go before it.
    top: usize,
    /// Completed TypeCodes by absolute start.
    seen: HashMap<usize, Arc<Node>>,
    /// TypeCodes being decoded (enclosing the current one): absolute start, kind, id.
    open: Vec<(usize, TcKind, Option<String>)>,
}

impl Decoder {
    /// Reads one TypeCode; recursive as [`Encoder::tc`] is, and as careful with the stack.
    fn tc(&mut self, r: &mut CdrReader<'_>) -> Result<Arc<Node>> {
        crate::valuetype::nested(|| self.tc_here(r))
    }

    fn tc_here(&mut self, r: &mut CdrReader<'_>) -> Result<Arc<Node>> {
        r.align(4)?;
        let start = r.position();
        let raw = r.read_ulong()?;
        if raw == INDIRECTION_TAG {
            return self.indirection(r, start);
        }
        let kind = TcKind::from_u32(raw).ok_or(MarshalError::InvalidValue {
            offset: start,
            reason: "unknown TypeCode kind",
        })?;
        if kind.is_primitive() {
            return Ok(TypeCode::primitive(kind).node);
        }
        let node = match kind {
            TcKind::String | TcKind::WString => Node::new(kind, Body::Bound(r.read_ulong()?)),
            TcKind::Fixed => {
                let digits = r.read_ushort()?;
                let scale = r.read_short()?;
                if digits == 0 || digits > 31 || scale < 0 || scale as u16 > digits {
                    return Err(invalid(start, "bad fixed digits/scale"));
                }
                Node::new(kind, Body::Fixed { digits, scale })
            }
            _ => {
                let mut e = r.read_encapsulation()?;
                if self.depth >= MAX_TYPECODE_DEPTH {
                    return Err(MarshalError::NestingTooDeep {
                        offset: start,
                        limit: MAX_TYPECODE_DEPTH,
                    });
                }
                self.depth += 1;
                self.open.push((start, kind, None));
                let body = self.complex(kind, &mut e, start);
                self.open.pop();
                self.depth -= 1;
                Node::new(kind, body?)
            }
        };
        self.seen.insert(start, node.clone());
        Ok(node)
    }

    fn indirection(&mut self, r: &mut CdrReader<'_>, start: usize) -> Result<Arc<Node>> {
        let at = r.position();
        let offset = r.read_long()?;
        let bad = MarshalError::InvalidIndirection {
            offset: at,
            indirection: offset,
        };
        let target = at as i64 + i64::from(offset);
        // Strictly backwards, to a TypeCode of this top-level TypeCode.
        if target < self.top as i64 || target >= start as i64 {
            return Err(bad);
        }
        let target = target as usize;
        if let Some(done) = self.seen.get(&target) {
            // A repeat. Its recursive references must still be resolvable here.
            let ok = done.free.iter().all(|f| {
                self.open
                    .iter()
                    .any(|(_, _, id)| id.as_deref() == Some(&**f))
            });
            return if ok { Ok(done.clone()) } else { Err(bad) };
        }
        // A recursive reference: to an enclosing struct/union/value with an id, the nearest
        // one with that id.
        let Some(pos) = self.open.iter().rposition(|(s, _, _)| *s == target) else {
            return Err(bad);
        };
        let (_, kind, id) = &self.open[pos];
        let id = match id {
            Some(id) if kind.can_recurse() && !id.is_empty() => id.clone(),
            _ => return Err(bad),
        };
        if self.open[pos + 1..]
            .iter()
            .any(|(_, _, i)| i.as_deref() == Some(id.as_str()))
        {
            return Err(bad);
        }
        Ok(Node::new(TcKind::Null, Body::Recursive { id }))
    }

    fn id_name(&mut self, e: &mut CdrReader<'_>) -> Result<(String, String)> {
        let id = e.read_string()?;
        let name = e.read_string()?;
        if let Some(top) = self.open.last_mut() {
            top.2 = Some(id.clone());
        }
        Ok((id, name))
    }

    fn complex(&mut self, kind: TcKind, e: &mut CdrReader<'_>, start: usize) -> Result<Body> {
        Ok(match kind {
            TcKind::Objref
            | TcKind::Native
            | TcKind::AbstractInterface
            | TcKind::LocalInterface
            | TcKind::Component
            | TcKind::Home => {
                let (id, name) = self.id_name(e)?;
                Body::Named { id, name }
            }
            TcKind::Struct | TcKind::Except => {
                let (id, name) = self.id_name(e)?;
                let n = e.read_length(8)?;
                let mut members = Vec::with_capacity(n.min(64));
                for _ in 0..n {
                    let mname = e.read_string()?;
                    let t = self.tc(e)?;
                    members.push((mname, t));
                }
                Body::Struct {
                    id,
                    name,
                    members: members.into_boxed_slice(),
                }
            }
            TcKind::Union => {
                let (id, name) = self.id_name(e)?;
                let disc = self.tc(e)?;
                if label_range(&disc).is_none() {
                    return Err(invalid(start, "bad union discriminator type"));
                }
                let default_index = e.read_long()?;
                let n = e.read_length(9)?;
                if default_index < -1 || default_index >= 0 && default_index as usize >= n {
                    return Err(invalid(start, "union default index out of range"));
                }
                let mut arms = Vec::with_capacity(n.min(64));
                for i in 0..n {
                    let v = read_label(e, &disc)?;
                    let label = if i as i64 == i64::from(default_index) {
                        UnionLabel::Default
                    } else {
                        UnionLabel::Value(v)
                    };
                    let aname = e.read_string()?;
                    let ty = self.tc(e)?;
                    arms.push(Arm {
                        label,
                        name: aname,
                        ty,
                    });
                }
                Body::Union {
                    id,
                    name,
                    disc,
                    default_index,
                    arms: arms.into_boxed_slice(),
                }
            }
            TcKind::Enum => {
                let (id, name) = self.id_name(e)?;
                let n = e.read_length(4)?;
                if n == 0 {
                    return Err(invalid(start, "enum without enumerators"));
                }
                let mut members = Vec::with_capacity(n.min(64));
                for _ in 0..n {
                    members.push(e.read_string()?);
                }
                Body::Enum {
                    id,
                    name,
                    members: members.into_boxed_slice(),
                }
            }
            TcKind::Sequence | TcKind::Array => {
                let content = self.tc(e)?;
                let bound = e.read_ulong()?;
                if kind == TcKind::Array && bound == 0 {
                    return Err(invalid(start, "array of length 0"));
                }
                if content.kind == TcKind::Null && !content.is_recursive_ref()
                    || content.kind == TcKind::Void
                {
                    return Err(invalid(start, "sequence or array of void"));
                }
                Body::Seq { bound, content }
            }
            TcKind::Alias | TcKind::ValueBox => {
                let (id, name) = self.id_name(e)?;
                let content = self.tc(e)?;
                Body::Alias { id, name, content }
            }
            TcKind::Value | TcKind::Event => {
                let (id, name) = self.id_name(e)?;
                let modifier = e.read_short()?;
                let base = self.tc(e)?;
                let base = if base.kind == TcKind::Null && !base.is_recursive_ref() {
                    None
                } else {
                    Some(base)
                };
                let n = e.read_length(10)?;
                let mut members = Vec::with_capacity(n.min(64));
                for _ in 0..n {
                    let mname = e.read_string()?;
                    let ty = self.tc(e)?;
                    let visibility = e.read_short()?;
                    members.push(VMember {
                        name: mname,
                        ty,
                        visibility,
                    });
                }
                Body::Value {
                    id,
                    name,
                    modifier,
                    base,
                    members: members.into_boxed_slice(),
                }
            }
            _ => return Err(invalid(start, "TypeCode kind with unexpected parameters")),
        })
    }
}

impl CdrEncode for TypeCode {
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        encode_type_code(self, w)
    }
}

impl<'a> CdrDecode<'a> for TypeCode {
    const MIN_WIRE_SIZE: usize = 4;
    fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
        decode_type_code(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::typecode::StructMember;
    use corbina_cdr::{ByteOrder, CdrContext};

    fn round_trip(t: &TypeCode, order: ByteOrder) -> TypeCode {
        let mut w = CdrWriter::with_byte_order(order, CdrContext::GIOP_1_2);
        w.write_octet(7); // unaligned start
        encode_type_code(t, &mut w).unwrap();
        let bytes = w.into_bytes();
        let mut r = CdrReader::new(&bytes, order, CdrContext::GIOP_1_2);
        r.read_octet().unwrap();
        let back = decode_type_code(&mut r).unwrap();
        r.expect_end().unwrap();
        back
    }

    #[test]
    fn recursive_round_trip() {
        let node = TypeCode::create_struct_tc(
            "IDL:Node:1.0",
            "Node",
            vec![
                StructMember::new("v", TypeCode::LONG),
                StructMember::new(
                    "kids",
                    TypeCode::create_sequence_tc(0, TypeCode::create_recursive_tc("IDL:Node:1.0")),
                ),
            ],
        )
        .unwrap();
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let back = round_trip(&node, order);
            assert!(back.equal(&node));
            let inner = back.member_type(1).unwrap().content_type().unwrap();
            assert!(inner.equal(&node));
        }
        let unresolved = TypeCode::create_recursive_tc("IDL:Node:1.0");
        let mut w = CdrWriter::new(CdrContext::GIOP_1_2);
        assert!(encode_type_code(&unresolved, &mut w).is_err());
    }
}
