//! Fixed-size structs: CDR layout computed at generation time, and the block
//! `encode_slice`/`decode_vec` overrides that use it.
//!
//! A struct made only of primitives, enums, and arrays and structs of those has, when laid
//! out from an offset aligned to its largest member alignment `A`, a constant size `S` and
//! constant member offsets. The next element of a run starts at `round_up(S, a0)` where `a0`
//! is the alignment of the first member; if that stride is a multiple of `A`, every element
//! of the run has the same layout and the run is one block.

use crate::context::Gen;
use crate::marshal::primitive;
use corbina_idl::model::{DefinitionKind, Struct};
use corbina_idl::Type;

/// Largest number of leaves a layout is generated for (bigger structs marshal per element).
const MAX_LEAVES: usize = 64;

#[derive(Debug, Clone)]
enum Leaf {
    /// An integer or float: its Rust type and size.
    Num(&'static str, usize),
    Octet,
    Bool,
    /// An enum: its Rust path and enumerator count.
    Enum(String, usize),
}

#[derive(Debug, Clone)]
enum Node {
    Leaf(Leaf, usize),
    Struct(String, Vec<(String, Node)>),
    Array(Vec<Node>),
}

/// The precomputed layout of a fixed-size struct.
#[derive(Debug, Clone)]
pub struct Layout {
    fields: Vec<(String, Node)>,
    /// Size from an `align`-aligned start.
    pub size: usize,
    /// Largest member alignment.
    pub align: usize,
    /// Alignment of the first member.
    pub first_align: usize,
    /// Distance between consecutive elements of a run.
    pub stride: usize,
    /// Whether decoding must validate bytes (booleans, enums).
    validates: bool,
}

struct Acc {
    off: usize,
    align: usize,
    first: Option<usize>,
    leaves: usize,
    validates: bool,
}

fn round_up(n: usize, a: usize) -> usize {
    n.div_ceil(a) * a
}

impl Gen<'_> {
    /// The layout of `s`, if it is fixed-size and its runs can be one block.
    pub fn struct_layout(&self, s: &Struct) -> Option<Layout> {
        let mut acc = Acc {
            off: 0,
            align: 1,
            first: None,
            leaves: 0,
            validates: false,
        };
        let mut fields = Vec::new();
        for (m, f) in s
            .members
            .iter()
            .zip(crate::naming::member_names(&s.members))
        {
            fields.push((f, self.place(&m.ty, &mut acc)?));
        }
        let first_align = acc.first?;
        let stride = round_up(acc.off, first_align);
        if !stride.is_multiple_of(acc.align) || acc.off == 0 {
            return None;
        }
        Some(Layout {
            fields,
            size: acc.off,
            align: acc.align,
            first_align,
            stride,
            validates: acc.validates,
        })
    }

    fn place(&self, ty: &Type, acc: &mut Acc) -> Option<Node> {
        let ty = self.resolve(ty);
        let leaf = match ty {
            t if primitive(t).is_some() => {
                let (_, rt) = primitive(t)?;
                let size = match rt {
                    "i16" | "u16" => 2,
                    "i32" | "u32" | "f32" => 4,
                    _ => 8,
                };
                (Leaf::Num(rt, size), size)
            }
            Type::Octet | Type::Char => (Leaf::Octet, 1),
            Type::Boolean => (Leaf::Bool, 1),
            Type::Array { elem, dims } => {
                let inner = if dims.len() > 1 {
                    Type::Array {
                        elem: elem.clone(),
                        dims: dims[1..].to_vec(),
                    }
                } else {
                    (**elem).clone()
                };
                let mut v = Vec::new();
                for _ in 0..dims[0] {
                    v.push(self.place(&inner, acc)?);
                    if acc.leaves > MAX_LEAVES {
                        return None;
                    }
                }
                return Some(Node::Array(v));
            }
            Type::Named { name, .. } => match &self.lookup(name)?.kind {
                DefinitionKind::Enum(e) => {
                    (Leaf::Enum(self.type_path(name), e.enumerators.len()), 4)
                }
                DefinitionKind::Struct(s) => {
                    let mut fields = Vec::new();
                    for (m, f) in s
                        .members
                        .iter()
                        .zip(crate::naming::member_names(&s.members))
                    {
                        fields.push((f, self.place(&m.ty, acc)?));
                    }
                    return Some(Node::Struct(self.type_path(name), fields));
                }
                _ => return None,
            },
            _ => return None,
        };
        let (leaf, size) = leaf;
        acc.off = round_up(acc.off, size);
        acc.align = acc.align.max(size);
        acc.first.get_or_insert(size);
        acc.leaves += 1;
        acc.validates |= matches!(leaf, Leaf::Bool | Leaf::Enum(..));
        let node = Node::Leaf(leaf, acc.off);
        acc.off += size;
        (acc.leaves <= MAX_LEAVES).then_some(node)
    }

    /// Writes the `encode_slice` override (inside the `CdrEncode` impl).
    pub fn write_block_encode(&mut self, l: &Layout) {
        let (a, fa, stride, size) = (l.align, l.first_align, l.stride, l.size);
        let o = &mut self.out;
        o.line("/// Writes a run of elements as one block of fixed-layout elements.");
        o.open("fn encode_slice<'a>(items: &'a [Self], w: &mut ::corbina::cdr::CdrWriter<'a>) -> ::corbina::cdr::Result<()>");
        o.line("let mut items = items;");
        o.line(format!(
            "// The layout holds from a {a}-aligned start: write elements singly until then."
        ));
        o.open("while let Some((first, rest)) = items.split_first()");
        o.open(format!(
            "if w.position().next_multiple_of({fa}).is_multiple_of({a})"
        ));
        o.line("break;");
        o.close();
        o.line("::corbina::cdr::CdrEncode::encode(first, w)?;");
        o.line("items = rest;");
        o.close();
        o.open("if items.is_empty()");
        o.line("return Ok(());");
        o.close();
        o.line("let swap = w.swaps();");
        o.line(format!(
            "let block = w.reserve_block({fa}, (items.len() - 1) * {stride} + {size});"
        ));
        // Elements as arrays: constant offsets, so no bounds check per field.
        let elems = if size == stride {
            o.line(format!(
                "let (elems, _) = block.as_chunks_mut::<{stride}>();"
            ));
            "elems.iter_mut()"
        } else {
            o.line(
                "// The last element has no trailing padding in the block: it is written to a padded copy.",
            );
            o.line(format!(
                "let (elems, tail) = block.as_chunks_mut::<{stride}>();"
            ));
            o.line(format!("let mut last = [0u8; {stride}];"));
            "elems.iter_mut().chain((!tail.is_empty()).then_some(&mut last))"
        };
        for swap in [false, true] {
            if swap {
                o.close_with(" else {");
                o.indent_more();
            } else {
                o.open("if !swap");
            }
            o.open(format!("for (item, c) in items.iter().zip({elems})"));
            let mut lines = Vec::new();
            for (f, n) in &l.fields {
                encode_node(n, &format!("item.{f}"), swap, &mut lines);
            }
            for line in lines {
                o.line(line);
            }
            o.close();
        }
        o.close();
        if size != stride {
            o.line("let n = tail.len();");
            o.line("tail.copy_from_slice(&last[..n]);");
        }
        o.line("Ok(())");
        o.close();
    }

    /// Writes the `decode_vec` override (inside the `CdrDecode` impl).
    pub fn write_block_decode(&mut self, l: &Layout) {
        let (a, fa, stride, size) = (l.align, l.first_align, l.stride, l.size);
        let o = &mut self.out;
        o.line("/// Reads a run of elements from one block of fixed-layout elements.");
        o.open("fn decode_vec(r: &mut ::corbina::cdr::CdrReader<'a>, count: usize) -> ::corbina::cdr::Result<::std::vec::Vec<Self>>");
        o.line("r.check_length(count, <Self as ::corbina::cdr::CdrDecode<'a>>::MIN_WIRE_SIZE)?;");
        o.line("let mut v = ::std::vec::Vec::with_capacity(count);");
        o.line(format!(
            "// The layout holds from a {a}-aligned start: read elements singly until then."
        ));
        o.open("while v.len() < count");
        o.line(format!("r.align({fa})?;"));
        o.open(format!(
            "if r.block_aligned({a}, (count - v.len() - 1) * {stride} + {size})"
        ));
        o.line("break;");
        o.close();
        o.line("v.push(<Self as ::corbina::cdr::CdrDecode<'a>>::decode(r)?);");
        o.close();
        o.open("if v.len() == count");
        o.line("return Ok(v);");
        o.close();
        o.line(format!(
            "let block = r.read_block({fa}, (count - v.len() - 1) * {stride} + {size})?;"
        ));
        if l.validates {
            o.line("let start = r.position() - block.len();");
        }
        // Elements as arrays: constant offsets, so no bounds check per field.
        let elems = if size == stride {
            o.line(format!("let (elems, _) = block.as_chunks::<{stride}>();"));
            "elems.iter()"
        } else {
            o.line(
                "// The last element has no trailing padding in the block: it is read from a padded copy.",
            );
            o.line(format!(
                "let (elems, tail) = block.as_chunks::<{stride}>();"
            ));
            o.line(format!("let mut last = [0u8; {stride}];"));
            o.line("last[..tail.len()].copy_from_slice(tail);");
            o.line("let last = (!tail.is_empty()).then_some(&last);");
            "elems.iter().chain(last)"
        };
        for swap in [false, true] {
            if swap {
                o.close_with(" else {");
                o.indent_more();
            } else {
                o.open("if !r.swaps()");
            }
            let fields: Vec<String> = l
                .fields
                .iter()
                .map(|(f, n)| format!("{f}: {}", decode_node(n, swap)))
                .collect();
            let value = format!(
                "Self {{\n{},\n}}",
                crate::marshal::indent(&fields.join(",\n"))
            );
            if l.validates {
                // A bad byte returns from the loop.
                o.open(format!("for (i, c) in {elems}.enumerate()"));
                o.line(format!("let base = start + i * {stride};"));
                o.line(format!("v.push({value});"));
                o.close();
            } else {
                // One pass with the length known: no capacity check per element.
                o.line(format!("v.extend({elems}.map(|c| {value}));"));
            }
        }
        o.close();
        o.line("Ok(v)");
        o.close();
    }
}

fn encode_node(n: &Node, acc: &str, swap: bool, out: &mut Vec<String>) {
    match n {
        Node::Struct(_, fields) => {
            for (f, n) in fields {
                encode_node(n, &format!("{acc}.{f}"), swap, out);
            }
        }
        Node::Array(elems) => {
            for (i, n) in elems.iter().enumerate() {
                encode_node(n, &format!("{acc}[{i}]"), swap, out);
            }
        }
        Node::Leaf(leaf, off) => out.push(match leaf {
            Leaf::Octet => format!("c[{off}] = {acc};"),
            Leaf::Bool => format!("c[{off}] = u8::from({acc});"),
            Leaf::Num(t, size) => {
                let v = match (swap, *t) {
                    (false, _) => acc.to_string(),
                    (true, "f32" | "f64") => format!("{acc}.to_bits().swap_bytes()"),
                    (true, _) => format!("{acc}.swap_bytes()"),
                };
                format!(
                    "c[{off}..{}].copy_from_slice(&{v}.to_ne_bytes());",
                    off + size
                )
            }
            Leaf::Enum(..) => {
                let v = if swap {
                    format!("({acc} as u32).swap_bytes()")
                } else {
                    format!("({acc} as u32)")
                };
                format!("c[{off}..{}].copy_from_slice(&{v}.to_ne_bytes());", off + 4)
            }
        }),
    }
}

fn bytes(off: usize, size: usize) -> String {
    let b: Vec<String> = (off..off + size).map(|i| format!("c[{i}]")).collect();
    format!("[{}]", b.join(", "))
}

fn decode_node(n: &Node, swap: bool) -> String {
    match n {
        Node::Struct(path, fields) => {
            let f: Vec<String> = fields
                .iter()
                .map(|(f, n)| format!("{f}: {}", decode_node(n, swap)))
                .collect();
            format!("{path} {{\n{},\n}}", crate::marshal::indent(&f.join(",\n")))
        }
        Node::Array(elems) => {
            let e: Vec<String> = elems.iter().map(|n| decode_node(n, swap)).collect();
            format!("[{}]", e.join(", "))
        }
        Node::Leaf(leaf, off) => {
            let off = *off;
            match leaf {
                Leaf::Octet => format!("c[{off}]"),
                Leaf::Bool => format!(
                    "match c[{off}] {{\n    0 => false,\n    1 => true,\n    value => return Err(::corbina::cdr::MarshalError::InvalidBoolean {{ offset: base + {off}, value }}),\n}}"
                ),
                Leaf::Num(t, size) => {
                    let b = bytes(off, *size);
                    match (swap, *t) {
                        (false, _) => format!("{t}::from_ne_bytes({b})"),
                        (true, "f32") => format!("f32::from_bits(u32::from_ne_bytes({b}).swap_bytes())"),
                        (true, "f64") => format!("f64::from_bits(u64::from_ne_bytes({b}).swap_bytes())"),
                        (true, _) => format!("{t}::from_ne_bytes({b}).swap_bytes()"),
                    }
                }
                Leaf::Enum(path, count) => {
                    let sw = if swap { ".swap_bytes()" } else { "" };
                    format!(
                        "match <{path} as ::core::convert::TryFrom<u32>>::try_from(u32::from_ne_bytes({}){sw}) {{\n    Ok(e) => e,\n    Err(value) => return Err(::corbina::cdr::MarshalError::InvalidEnum {{ offset: base + {off}, value, count: {count} }}),\n}}",
                        bytes(off, 4)
                    )
                }
            }
        }
    }
}
