//! Drives the value codec at depth (issue 27) in a thread of 256 KiB, so a recursion that
//! depends on the thread's stack shows as a crash:
//! - hostile bytes decoded as a typed list node (`ValueRef`) or through the factory registry
//!   (`ValueBase`), with a nesting limit taken from the input: Ok or MARSHAL, never a crash;
//!   what decodes re-encodes under the same limit and decodes again to the same ids;
//! - a list as long as the input says (up to 16,383 nodes), with sharing from the input,
//!   encoded and decoded under a limit from the input: refused by both sides exactly when it
//!   is deeper than the limit, the same list otherwise, and dropped without recursion;
//! - hostile bytes decoded as a recursive struct holding a value (`Tree`, its sequence read
//!   by `read_seq` as generated code does): Ok or MARSHAL, its depth within the reader's.
#![no_main]

use std::sync::{Arc, Once};

use corbina::cdr::value::{ValueInput, ValueOutput};
use corbina::cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter, MarshalError, Result};
use corbina::valuetype::{
    register_value_factory, DefaultFactory, ValueMember, ValueRef, ValueType,
};
use corbina::ValueBase;
use libfuzzer_sys::fuzz_target;

/// `valuetype Node { long id; Node next; sequence<Node> kids; };`
#[derive(Debug, Default)]
struct Node {
    id: i32,
    next: ValueRef<Node>,
    kids: Vec<ValueRef<Node>>,
}

impl ValueType for Node {
    const REPOSITORY_ID: &'static str = "IDL:FD/Node:1.0";
    const REPOSITORY_IDS: &'static [&'static str] = &["IDL:FD/Node:1.0"];
    const CHUNKED: bool = false;
    fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        out.begin_member(w)?;
        w.write_long(self.id);
        self.next.write_member(w, out)?;
        self.kids.write_member(w, out)
    }
    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        input.begin_member(r)?;
        let id = r.read_long()?;
        let next = ValueRef::read_member(r, input)?;
        let kids = Vec::read_member(r, input)?;
        Ok(Node { id, next, kids })
    }
}

/// `struct Tree; typedef sequence<Tree> Trees; struct Tree { Trees kids; ValueBase v; };`
/// as generated: the sequence through `read_seq`.
#[derive(Default)]
struct Tree {
    kids: Vec<Tree>,
    #[allow(dead_code)]
    v: ValueBase,
}

impl ValueMember for Tree {
    fn write_member<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        corbina::valuetype::write_seq(&self.kids, w, out)?;
        self.v.write_member(w, out)
    }
    fn read_member(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        Ok(Tree {
            kids: corbina::valuetype::read_seq(r, input, 0)?,
            v: ValueBase::read_member(r, input)?,
        })
    }
}

/// How deep `t` nests, in a loop over its first kids and a stack over the rest.
fn tree_depth(t: &Tree) -> usize {
    let mut work = vec![(t, 1usize)];
    let mut deepest = 0;
    while let Some((t, d)) = work.pop() {
        deepest = deepest.max(d);
        work.extend(t.kids.iter().map(|k| (k, d + 1)));
    }
    deepest
}

/// The ids met walking `next` from `head`, at most `max` (cycles end there); the kids' count
/// per node too.
fn shape(head: &ValueRef<Node>, max: usize) -> Vec<(i32, usize)> {
    let mut out = Vec::new();
    let mut cur = head.clone();
    while out.len() < max {
        let Some(next) = cur.lock().map(|n| {
            out.push((n.id, n.kids.len()));
            n.next.clone()
        }) else {
            break;
        };
        cur = next;
    }
    out
}

/// Empties every node reachable from `head` (a hostile graph may be cyclic), in a loop.
fn clear(head: &ValueRef<Node>) {
    let mut work = vec![head.clone()];
    let mut seen = 0usize;
    while let Some(v) = work.pop() {
        seen += 1;
        if seen > 1_000_000 {
            break;
        }
        if let Some(mut n) = v.lock() {
            let next = std::mem::take(&mut n.next);
            let kids = std::mem::take(&mut n.kids);
            drop(n);
            work.push(next);
            work.extend(kids);
        }
    }
}

fn encode(v: &ValueRef<Node>, limit: u32, order: ByteOrder) -> Result<Vec<u8>> {
    let mut w = CdrWriter::with_byte_order(order, CdrContext::GIOP_1_2);
    v.write_member(&mut w, &mut ValueOutput::with_max_nesting(limit))?;
    Ok(w.into_bytes())
}

fn decode(bytes: &[u8], limit: u32, order: ByteOrder) -> Result<ValueRef<Node>> {
    let mut r = CdrReader::new(bytes, order, CdrContext::GIOP_1_2);
    ValueRef::read_member(&mut r, &mut ValueInput::with_max_nesting(limit))
}

fn hostile(order: ByteOrder, limit: u32, poly: bool, tree: bool, bytes: &[u8]) {
    if tree {
        let mut r = CdrReader::new(bytes, order, CdrContext::GIOP_1_2);
        if let Ok(t) = Tree::read_member(&mut r, &mut ValueInput::with_max_nesting(limit)) {
            assert!(tree_depth(&t) <= corbina::cdr::DEFAULT_MAX_DEPTH as usize);
        }
        return;
    }
    let got = if poly {
        let mut r = CdrReader::new(bytes, order, CdrContext::GIOP_1_2);
        let mut input = ValueInput::with_max_nesting(limit);
        ValueBase::read_member(&mut r, &mut input).map(|b| b.downcast::<Node>().unwrap_or_default())
    } else {
        decode(bytes, limit, order)
    };
    let Ok(v) = got else { return };
    let again = encode(&v, limit, order).expect("what decodes re-encodes under its limit");
    let back = decode(&again, limit, order).expect("and decodes again");
    assert_eq!(shape(&v, 4096), shape(&back, 4096));
    clear(&v);
    clear(&back);
}

fn generated(order: ByteOrder, limit: u32, depth: usize, share: u8) {
    let mut head = ValueRef::null();
    let mut kept = Vec::new();
    for id in (0..depth as i32).rev() {
        let kids = if share != 0 && id % i32::from(share) == 0 {
            kept.iter().take(2).cloned().collect()
        } else {
            Vec::new()
        };
        head = ValueRef::new(Node {
            id,
            next: head,
            kids,
        });
        if share != 0 && id % 97 == 0 {
            kept.push(head.clone());
        }
    }
    match encode(&head, limit, order) {
        Ok(bytes) => {
            assert!(
                depth <= limit as usize,
                "a list deeper than the limit was encoded"
            );
            let back = decode(&bytes, limit, order).expect("what encodes decodes under the limit");
            assert_eq!(shape(&back, usize::MAX).len(), depth);
            // (A limit is at least 1.)
            if depth > 1 {
                match decode(&bytes, depth as u32 - 1, order) {
                    Err(MarshalError::NestingTooDeep { .. }) => {}
                    other => panic!("one level short of the limit: {:?}", other.map(|_| ())),
                }
            }
        }
        Err(MarshalError::NestingTooDeep { .. }) => assert!(depth > limit as usize),
        Err(e) => panic!("encoding a list: {e}"),
    }
}

fuzz_target!(|data: &[u8]| {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        register_value_factory(Node::REPOSITORY_ID, Arc::new(DefaultFactory::<Node>::new()));
    });
    let [mode, l0, l1, rest @ ..] = data else {
        return;
    };
    let order = ByteOrder::from_flag(*mode);
    let limit = 1 + u32::from(u16::from_le_bytes([*l0, *l1])) * 8;
    let (mode, rest) = (*mode, rest.to_vec());
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            if mode & 2 == 0 {
                hostile(order, limit, mode & 4 != 0, mode & 8 != 0, &rest);
            } else {
                let [d0, d1, share, ..] = rest[..] else {
                    return;
                };
                // Up to 255 nodes, or when the mode's top four bits are set up to 16,383: a
                // few deep lists, mostly fast runs.
                let depth = if mode & 0xf0 != 0xf0 {
                    usize::from(d0)
                } else {
                    usize::from(u16::from_le_bytes([d0, d1]) & 0x3fff)
                };
                generated(order, limit, depth, share);
            }
        })
        .unwrap()
        .join()
        .unwrap();
});
