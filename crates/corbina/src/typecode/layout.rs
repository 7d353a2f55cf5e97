//! Precomputed value layouts (seed 003, principles 4–5): computed once when a TypeCode is
//! built, so marshalling a sequence of fixed-size structs copies (or byte-swaps) one block
//! instead of interpreting the TypeCode per element.

use super::{Body, Node, TcKind};
use std::sync::Arc;

/// The largest value, in octets, given a block layout: bigger fixed-size types are walked
/// member by member (their swap plans would be as large as they are).
pub const MAX_BLOCK_LAYOUT: u32 = 64 * 1024;

/// What is known about the CDR form of a type's values, whatever the value.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// `Some` when every value has the same size and padding, laid out from a position
    /// aligned to [`FixedLayout::align`].
    pub fixed: Option<Arc<FixedLayout>>,
    /// The fewest octets a value can occupy (to check counts before looping or allocating).
    pub min_size: u32,
}

/// The layout of a fixed-size type, relative to a start aligned to `align`.
///
/// CDR aligns members, not structs: from an unaligned start the padding differs. A run of
/// elements has this layout once its start is aligned, which holds after the first element
/// when `size` is a multiple of `align` (every element then ends where the next can start
/// with the same padding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedLayout {
    /// Octets from the first member to the end of the last (no tail padding).
    pub size: u32,
    /// The largest member alignment (1, 2, 4 or 8).
    pub align: u32,
    /// Offset of each member (structs; empty otherwise).
    pub member_offsets: Box<[u32]>,
    /// Which bytes reverse when the byte order changes, merged into runs.
    pub swaps: Box<[SwapRun]>,
    /// Octets whose values must be checked (booleans, enums).
    pub checks: Box<[Check]>,
    /// Whether the type contains `char` (whose octets depend on the code set).
    pub has_char: bool,
    /// The primitives in order, as runs: what placing this type inside another uses (a
    /// nested struct is not aligned as a whole; each primitive is).
    pub leaves: Box<[LeafRun]>,
}

/// `count` consecutive primitives of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeafRun {
    /// Octets each (1, 2, 4, 8, or 16 for `long double`).
    pub width: u8,
    /// What the octets need: nothing, a byte swap, or a check.
    pub kind: LeafKind,
    /// How many.
    pub count: u32,
}

/// What a primitive in a fixed block needs when copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafKind {
    /// Octets: copied as they are.
    Octet,
    /// `char`: copied when the code sets agree.
    Char,
    /// A boolean octet, checked.
    Boolean,
    /// A number, byte-swapped when the orders differ.
    Number,
    /// An enum (`unsigned long` below the count), swapped and checked.
    Enum(u32),
}

impl LeafRun {
    fn align(&self) -> u32 {
        u32::from(self.width).min(8)
    }
}

/// `count` consecutive primitives of `width` octets starting at `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwapRun {
    /// Offset of the first.
    pub offset: u32,
    /// 2, 4, 8 or 16 (`long double`).
    pub width: u8,
    /// How many.
    pub count: u32,
}

/// A value in a fixed block that must be validated when copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// A boolean octet (0 or 1).
    Boolean {
        /// Offset of the octet.
        offset: u32,
    },
    /// An enum (`unsigned long` below `count`).
    Enum {
        /// Offset of the value.
        offset: u32,
        /// Number of enumerators.
        count: u32,
    },
}

impl FixedLayout {
    /// Whether a run of elements keeps this layout back to back (see the type's docs).
    pub fn repeats(&self) -> bool {
        self.size.is_multiple_of(self.align)
    }
}

/// Lays out `leaves` from offset 0 (aligned to the largest alignment among them).
struct Builder {
    off: u32,
    align: u32,
    leaves: Vec<LeafRun>,
    swaps: Vec<SwapRun>,
    checks: Vec<Check>,
    has_char: bool,
}

impl Builder {
    fn new() -> Self {
        Builder {
            off: 0,
            align: 1,
            leaves: Vec::new(),
            swaps: Vec::new(),
            checks: Vec::new(),
            has_char: false,
        }
    }

    /// Places `run` at the current offset; `None` past [`MAX_BLOCK_LAYOUT`].
    fn push(&mut self, run: LeafRun) -> Option<()> {
        if run.count == 0 {
            return Some(());
        }
        let a = run.align();
        let start = self.off.checked_add(a - 1)? & !(a - 1);
        let len = u32::from(run.width).checked_mul(run.count)?;
        self.off = start.checked_add(len).filter(|&e| e <= MAX_BLOCK_LAYOUT)?;
        self.align = self.align.max(a);
        match run.kind {
            LeafKind::Octet => {}
            LeafKind::Char => self.has_char = true,
            LeafKind::Boolean => self
                .checks
                .extend((0..run.count).map(|k| Check::Boolean { offset: start + k })),
            LeafKind::Number | LeafKind::Enum(_) => {
                let r = SwapRun {
                    offset: start,
                    width: run.width,
                    count: run.count,
                };
                match self.swaps.last_mut() {
                    Some(last)
                        if last.width == r.width
                            && last.offset + u32::from(last.width) * last.count == r.offset =>
                    {
                        last.count += r.count
                    }
                    _ => self.swaps.push(r),
                }
                if let LeafKind::Enum(count) = run.kind {
                    self.checks.extend((0..run.count).map(|k| Check::Enum {
                        offset: start + 4 * k,
                        count,
                    }));
                }
            }
        }
        match self.leaves.last_mut() {
            Some(last) if last.width == run.width && last.kind == run.kind => {
                last.count = last.count.checked_add(run.count)?
            }
            _ => self.leaves.push(run),
        }
        Some(())
    }

    fn place(&mut self, inner: &FixedLayout) -> Option<()> {
        inner.leaves.iter().try_for_each(|r| self.push(*r))
    }

    fn finish(self, member_offsets: Vec<u32>) -> FixedLayout {
        FixedLayout {
            size: self.off,
            align: self.align,
            member_offsets: member_offsets.into_boxed_slice(),
            swaps: self.swaps.into_boxed_slice(),
            checks: self.checks.into_boxed_slice(),
            has_char: self.has_char,
            leaves: self.leaves.into_boxed_slice(),
        }
    }
}

fn leaf(width: u8, kind: LeafKind) -> Option<FixedLayout> {
    let mut b = Builder::new();
    b.push(LeafRun {
        width,
        kind,
        count: 1,
    })?;
    Some(b.finish(Vec::new()))
}

fn fixed(kind: TcKind, body: &Body) -> Option<FixedLayout> {
    match kind {
        TcKind::Short | TcKind::UShort => leaf(2, LeafKind::Number),
        TcKind::Long | TcKind::ULong | TcKind::Float => leaf(4, LeafKind::Number),
        TcKind::LongLong | TcKind::ULongLong | TcKind::Double => leaf(8, LeafKind::Number),
        TcKind::LongDouble => leaf(16, LeafKind::Number),
        TcKind::Octet => leaf(1, LeafKind::Octet),
        TcKind::Char => leaf(1, LeafKind::Char),
        TcKind::Boolean => leaf(1, LeafKind::Boolean),
        TcKind::Enum => match body {
            Body::Enum { members, .. } => leaf(4, LeafKind::Enum(members.len() as u32)),
            _ => None,
        },
        TcKind::Struct => {
            let Body::Struct { members, .. } = body else {
                return None;
            };
            let mut b = Builder::new();
            let mut offsets = Vec::with_capacity(members.len());
            for (_, m) in members.iter() {
                let l = m.layout.fixed.as_deref()?;
                let first = l.leaves.first().map_or(1, LeafRun::align);
                offsets.push((b.off + first - 1) & !(first - 1));
                b.place(l)?;
            }
            Some(b.finish(offsets))
        }
        TcKind::Array => {
            let Body::Seq { bound, content } = body else {
                return None;
            };
            let l = content.layout.fixed.as_deref()?;
            if u64::from(l.size) * u64::from(*bound) > u64::from(MAX_BLOCK_LAYOUT) {
                return None;
            }
            let mut b = Builder::new();
            for _ in 0..*bound {
                b.place(l)?;
            }
            Some(b.finish(Vec::new()))
        }
        TcKind::Alias => match body {
            Body::Alias { content, .. } => content.layout.fixed.as_deref().cloned(),
            _ => None,
        },
        _ => None,
    }
}

fn min_size(kind: TcKind, body: &Body) -> u32 {
    let sum = |it: &mut dyn Iterator<Item = &Arc<Node>>| {
        it.fold(0u32, |a, n| a.saturating_add(n.layout.min_size))
    };
    match kind {
        TcKind::Null | TcKind::Void | TcKind::Native => 0,
        TcKind::Short | TcKind::UShort => 2,
        TcKind::Long | TcKind::ULong | TcKind::Float | TcKind::Enum => 4,
        TcKind::LongLong | TcKind::ULongLong | TcKind::Double => 8,
        TcKind::LongDouble => 16,
        TcKind::Boolean | TcKind::Char | TcKind::Octet | TcKind::WChar => 1,
        TcKind::AbstractInterface => 1,
        TcKind::Objref | TcKind::Component | TcKind::Home => 8,
        TcKind::Fixed => match body {
            Body::Fixed { digits, .. } => u32::from(*digits) / 2 + 1,
            _ => 1,
        },
        TcKind::Struct | TcKind::Except => match body {
            Body::Struct { members, .. } => {
                let s = sum(&mut members.iter().map(|m| &m.1));
                if kind == TcKind::Except {
                    s.saturating_add(4)
                } else {
                    s
                }
            }
            _ => 0,
        },
        TcKind::Union => match body {
            Body::Union { disc, .. } => disc.layout.min_size,
            _ => 1,
        },
        TcKind::Array => match body {
            Body::Seq { bound, content } => content.layout.min_size.saturating_mul(*bound),
            _ => 0,
        },
        TcKind::Alias => match body {
            Body::Alias { content, .. } => content.layout.min_size,
            _ => 0,
        },
        // Lengths, counts, kinds and value tags.
        _ => 4,
    }
}

/// The layout of a node about to be built from `kind` and `body`.
pub(crate) fn compute(kind: TcKind, body: &Body) -> Layout {
    if matches!(body, Body::Recursive { .. }) {
        return Layout::default();
    }
    Layout {
        fixed: fixed(kind, body).map(Arc::new),
        min_size: min_size(kind, body),
    }
}

#[cfg(test)]
mod tests {
    use crate::typecode::{StructMember, TypeCode};

    #[test]
    fn bin_struct_layout() {
        let bin = TypeCode::create_struct_tc(
            "IDL:BinStruct:1.0",
            "BinStruct",
            vec![
                StructMember::new("s", TypeCode::SHORT),
                StructMember::new("c", TypeCode::CHAR),
                StructMember::new("l", TypeCode::LONG),
                StructMember::new("o", TypeCode::OCTET),
                StructMember::new("d", TypeCode::DOUBLE),
            ],
        )
        .unwrap();
        let t = bin.clone();
        let l = t.layout().fixed.clone().unwrap();
        assert_eq!(l.size, 24);
        assert_eq!(l.align, 8);
        assert_eq!(&*l.member_offsets, &[0, 2, 4, 8, 16]);
        assert_eq!(l.swaps.len(), 3);
        assert!(l.has_char && l.repeats());
        assert_eq!(t.layout().min_size, 16);
        let arr = TypeCode::create_array_tc(3, t.clone()).unwrap();
        assert_eq!(arr.layout().fixed.as_ref().unwrap().size, 72);
        let longs = TypeCode::create_array_tc(10, TypeCode::LONG).unwrap();
        assert_eq!(longs.layout().fixed.as_ref().unwrap().swaps.len(), 1);
        assert!(TypeCode::create_sequence_tc(0, t).layout().fixed.is_none());
        let odd = TypeCode::create_struct_tc(
            "IDL:Odd:1.0",
            "Odd",
            vec![
                StructMember::new("d", TypeCode::DOUBLE),
                StructMember::new("s", TypeCode::SHORT),
            ],
        )
        .unwrap();
        assert!(!odd.layout().fixed.as_ref().unwrap().repeats());
        // Arrays of such structs still have a fixed layout, padding included.
        let two = TypeCode::create_array_tc(2, odd).unwrap();
        assert_eq!(two.layout().fixed.as_ref().unwrap().size, 26);
        // A nested struct is not aligned as a whole: its members are.
        let outer = TypeCode::create_struct_tc(
            "IDL:Outer:1.0",
            "Outer",
            vec![
                StructMember::new("a", TypeCode::SHORT),
                StructMember::new("b", bin.clone()),
            ],
        )
        .unwrap();
        let l = outer.layout().fixed.clone().unwrap();
        assert_eq!((l.size, l.align), (24, 8));
        assert_eq!(&*l.member_offsets, &[0, 2]);
    }
}
