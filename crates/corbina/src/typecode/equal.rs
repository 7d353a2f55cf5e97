//! `equal`, `equivalent`, `get_compact_typecode`, and rebuilding descriptions with
//! recursive references substituted.
//!
//! Descriptions may share parts (a decoded TypeCode whose indirections repeat a type), so
//! every walk here is memoised by node identity: a hostile TypeCode that doubles at each
//! level costs linear, not exponential, time.

use super::{Arm, Body, Node, TcKind, TypeCode, VMember};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Equal,
    Equivalent,
}

struct Cmp {
    mode: Mode,
    /// Pairs already compared or being compared (coinductively assumed equal).
    seen: HashSet<(*const Node, *const Node)>,
    /// Enclosing recursion targets on each side, innermost last.
    stack_a: Vec<Arc<Node>>,
    stack_b: Vec<Arc<Node>>,
    budget: u32,
}

pub(crate) fn equal(a: &TypeCode, b: &TypeCode, mode: Mode) -> bool {
    let (a, b) = (a.closed_node(), b.closed_node());
    let mut c = Cmp {
        mode,
        seen: HashSet::new(),
        stack_a: Vec::new(),
        stack_b: Vec::new(),
        budget: 1 << 20,
    };
    c.node(&a, &b)
}

fn resolve(stack: &[Arc<Node>], id: &str) -> Option<Arc<Node>> {
    stack
        .iter()
        .rev()
        .find(|n| n.body.id() == Some(id))
        .cloned()
}

fn strip_alias(mut n: Arc<Node>) -> Arc<Node> {
    while let Body::Alias { content, .. } = &n.body {
        if n.kind != TcKind::Alias {
            break;
        }
        n = content.clone();
    }
    n
}

impl Cmp {
    /// Compares `a` and `b`. Recursive, once per level of the descriptions: an application
    /// can build one of any height, so each level runs where stack is left (grown on the heap
    /// when needed).
    fn node(&mut self, a: &Arc<Node>, b: &Arc<Node>) -> bool {
        crate::valuetype::nested(|| self.node_here(a, b))
    }

    fn node_here(&mut self, a: &Arc<Node>, b: &Arc<Node>) -> bool {
        let (mut a, mut b) = (a.clone(), b.clone());
        if self.mode == Mode::Equivalent {
            a = strip_alias(a);
            b = strip_alias(b);
        }
        if Arc::ptr_eq(&a, &b) {
            return true;
        }
        // Recursive references: equal ids, or resolve the reference against its enclosing
        // types and compare what it stands for.
        match (&a.body, &b.body) {
            (Body::Recursive { id: x }, Body::Recursive { id: y }) => return x == y,
            (Body::Recursive { id }, _) => {
                return match resolve(&self.stack_a, id) {
                    Some(r) => self.node(&r, &b),
                    None => false,
                }
            }
            (_, Body::Recursive { id }) => {
                return match resolve(&self.stack_b, id) {
                    Some(r) => self.node(&a, &r),
                    None => false,
                }
            }
            _ => {}
        }
        if a.kind != b.kind {
            return false;
        }
        if !self.seen.insert((Arc::as_ptr(&a), Arc::as_ptr(&b))) {
            return true;
        }
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        if self.mode == Mode::Equal {
            if a.body.id() != b.body.id() || a.body.name() != b.body.name() {
                return false;
            }
        } else if let (Some(x), Some(y)) = (a.body.id(), b.body.id()) {
            if !x.is_empty() && !y.is_empty() {
                return x == y;
            }
        }
        let pushed = a.kind.can_recurse();
        if pushed {
            self.stack_a.push(a.clone());
            self.stack_b.push(b.clone());
        }
        let names = self.mode == Mode::Equal;
        let r = match (&a.body, &b.body) {
            (Body::Empty, Body::Empty) | (Body::Named { .. }, Body::Named { .. }) => true,
            (Body::Struct { members: x, .. }, Body::Struct { members: y, .. }) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y.iter())
                        .all(|(p, q)| (!names || p.0 == q.0) && self.node(&p.1, &q.1))
            }
            (
                Body::Union {
                    disc: d1,
                    default_index: i1,
                    arms: x,
                    ..
                },
                Body::Union {
                    disc: d2,
                    default_index: i2,
                    arms: y,
                    ..
                },
            ) => {
                i1 == i2
                    && x.len() == y.len()
                    && self.node(d1, d2)
                    && x.iter().zip(y.iter()).all(|(p, q)| {
                        p.label == q.label
                            && (!names || p.name == q.name)
                            && self.node(&p.ty, &q.ty)
                    })
            }
            (Body::Enum { members: x, .. }, Body::Enum { members: y, .. }) => {
                x.len() == y.len() && (!names || x == y)
            }
            (Body::Bound(x), Body::Bound(y)) => x == y,
            (
                Body::Seq {
                    bound: b1,
                    content: c1,
                },
                Body::Seq {
                    bound: b2,
                    content: c2,
                },
            ) => b1 == b2 && self.node(c1, c2),
            (Body::Alias { content: c1, .. }, Body::Alias { content: c2, .. }) => self.node(c1, c2),
            (
                Body::Fixed {
                    digits: d1,
                    scale: s1,
                },
                Body::Fixed {
                    digits: d2,
                    scale: s2,
                },
            ) => d1 == d2 && s1 == s2,
            (
                Body::Value {
                    modifier: m1,
                    base: b1,
                    members: x,
                    ..
                },
                Body::Value {
                    modifier: m2,
                    base: b2,
                    members: y,
                    ..
                },
            ) => {
                m1 == m2
                    && match (b1, b2) {
                        (None, None) => true,
                        (Some(p), Some(q)) => self.node(p, q),
                        _ => false,
                    }
                    && x.len() == y.len()
                    && x.iter().zip(y.iter()).all(|(p, q)| {
                        p.visibility == q.visibility
                            && (!names || p.name == q.name)
                            && self.node(&p.ty, &q.ty)
                    })
            }
            _ => false,
        };
        if pushed {
            self.stack_a.pop();
            self.stack_b.pop();
        }
        r
    }
}

/// Rebuilds `node` with its children mapped by `f` and, if `strip`, names removed.
fn rebuild(node: &Node, strip: bool, f: &mut dyn FnMut(&Arc<Node>) -> Arc<Node>) -> Arc<Node> {
    let nm = |s: &String| if strip { String::new() } else { s.clone() };
    let body = match &node.body {
        Body::Empty => Body::Empty,
        Body::Recursive { id } => Body::Recursive { id: id.clone() },
        Body::Named { id, name } => Body::Named {
            id: id.clone(),
            name: nm(name),
        },
        Body::Struct { id, name, members } => Body::Struct {
            id: id.clone(),
            name: nm(name),
            members: members.iter().map(|(n, t)| (nm(n), f(t))).collect(),
        },
        Body::Union {
            id,
            name,
            disc,
            default_index,
            arms,
        } => Body::Union {
            id: id.clone(),
            name: nm(name),
            disc: f(disc),
            default_index: *default_index,
            arms: arms
                .iter()
                .map(|a| Arm {
                    label: a.label,
                    name: nm(&a.name),
                    ty: f(&a.ty),
                })
                .collect(),
        },
        Body::Enum { id, name, members } => Body::Enum {
            id: id.clone(),
            name: nm(name),
            members: members.iter().map(nm).collect(),
        },
        Body::Bound(b) => Body::Bound(*b),
        Body::Seq { bound, content } => Body::Seq {
            bound: *bound,
            content: f(content),
        },
        Body::Alias { id, name, content } => Body::Alias {
            id: id.clone(),
            name: nm(name),
            content: f(content),
        },
        Body::Fixed { digits, scale } => Body::Fixed {
            digits: *digits,
            scale: *scale,
        },
        Body::Value {
            id,
            name,
            modifier,
            base,
            members,
        } => Body::Value {
            id: id.clone(),
            name: nm(name),
            modifier: *modifier,
            base: base.as_ref().map(&mut *f),
            members: members
                .iter()
                .map(|m| VMember {
                    name: nm(&m.name),
                    ty: f(&m.ty),
                    visibility: m.visibility,
                })
                .collect(),
        },
    };
    Node::new(node.kind, body)
}

/// The compact form of `node`: names and member names removed.
pub(crate) fn compact(node: &Arc<Node>) -> Arc<Node> {
    fn go(n: &Arc<Node>, memo: &mut HashMap<*const Node, Arc<Node>>) -> Arc<Node> {
        if let Some(r) = memo.get(&Arc::as_ptr(n)) {
            return r.clone();
        }
        let r = crate::valuetype::nested(|| rebuild(n, true, &mut |c| go(c, memo)));
        memo.insert(Arc::as_ptr(n), r.clone());
        r
    }
    go(node, &mut HashMap::new())
}

/// `node` with free recursive references to the ids in `subst` replaced by their nodes.
pub(crate) fn substitute(node: &Arc<Node>, subst: &[(Arc<str>, Arc<Node>)]) -> Arc<Node> {
    fn go(
        n: &Arc<Node>,
        subst: &[(Arc<str>, Arc<Node>)],
        memo: &mut HashMap<(*const Node, usize), Arc<Node>>,
    ) -> Arc<Node> {
        if !n.free.iter().any(|f| subst.iter().any(|(id, _)| id == f)) {
            return n.clone();
        }
        if let Body::Recursive { id } = &n.body {
            return subst
                .iter()
                .find(|(s, _)| &**s == id.as_str())
                .map_or_else(|| n.clone(), |(_, r)| r.clone());
        }
        let key = (Arc::as_ptr(n), subst.len());
        if let Some(r) = memo.get(&key) {
            return r.clone();
        }
        // A type binds its own id: references to it inside are not free.
        let own = if n.kind.can_recurse() {
            n.body.id()
        } else {
            None
        };
        let inner: Vec<(Arc<str>, Arc<Node>)> = subst
            .iter()
            .filter(|(id, _)| Some(&**id) != own)
            .cloned()
            .collect();
        let r = crate::valuetype::nested(|| rebuild(n, false, &mut |c| go(c, &inner, memo)));
        memo.insert(key, r.clone());
        r
    }
    go(node, subst, &mut HashMap::new())
}

#[cfg(test)]
mod tests {
    use crate::typecode::{StructMember, TypeCode};

    fn node(name: &str) -> TypeCode {
        TypeCode::create_struct_tc(
            "IDL:Node:1.0",
            name,
            vec![
                StructMember::new("v", TypeCode::LONG),
                StructMember::new(
                    "kids",
                    TypeCode::create_sequence_tc(0, TypeCode::create_recursive_tc("IDL:Node:1.0")),
                ),
            ],
        )
        .unwrap()
    }

    #[test]
    fn recursive_equality_and_compact() {
        let a = node("Node");
        let b = node("Node");
        assert!(a.equal(&b));
        assert!(!a.equal(&node("Other")));
        assert!(a.equivalent(&node("Other")));
        let c = a.get_compact_typecode();
        assert_eq!(c.name(), Ok(""));
        assert_eq!(c.member_name(1), Ok(""));
        assert!(!c.equal(&a));
        assert!(c.equivalent(&a));
        // One level unrolled is the same type.
        let kids = a.member_type(1).unwrap();
        let unrolled = TypeCode::create_struct_tc(
            "IDL:Node:1.0",
            "Node",
            vec![
                StructMember::new("v", TypeCode::LONG),
                StructMember::new("kids", kids),
            ],
        )
        .unwrap();
        assert!(unrolled.is_complete());
        assert!(unrolled.equal(&a));
    }
}
