//! TypeCodes: run-time descriptions of IDL types, as CORBA's `TypeCode` pseudo-object.
//!
//! A [`TypeCode`] is a cheap handle (two `Arc`s) to an immutable description. Everything a
//! marshaller needs is computed once when the description is built (seed 003, principles 4
//! and 5: precompute, store redundant state): whether values of the type are a fixed-size
//! block, its size, alignment and member offsets, which bytes swap with the byte order
//! ([`Layout`]), the fewest wire bytes a value takes, and which recursive references are
//! still unresolved.
//!
//! # Recursion
//! A recursive type (`struct Node { long v; sequence<Node> kids; }`) holds, where it refers
//! to itself, a *recursive reference* node naming the enclosing type's repository id (what
//! [`TypeCode::create_recursive_tc`] returns, and what the decoder makes of an indirection
//! to an enclosing TypeCode). The description is a tree (a DAG when parts are shared): no
//! `Arc` cycle, so nothing leaks. Handles carry their *scope*, the chain of enclosing
//! struct/union/value handles they were reached through, so navigating into a reference
//! ([`TypeCode::content_type`] of `sequence<Node>`) resolves it to the nearest enclosing
//! type with that id. A reference with no such enclosing type is *unresolved*: its
//! [`TypeCode::kind`] is `tk_null`, other operations fail, and it cannot be marshalled.
//!
//! ```
//! use corbina::typecode::{StructMember, TypeCode};
//!
//! let node = TypeCode::create_struct_tc(
//!     "IDL:Node:1.0",
//!     "Node",
//!     vec![
//!         StructMember::new("v", TypeCode::LONG),
//!         StructMember::new(
//!             "kids",
//!             TypeCode::create_sequence_tc(0, TypeCode::create_recursive_tc("IDL:Node:1.0")),
//!         ),
//!     ],
//! )?;
//! let kids = node.member_type(1)?;
//! assert!(kids.content_type()?.equal(&node));
//! # Ok::<(), corbina::typecode::TypeCodeError>(())
//! ```

mod cdr;
mod equal;
mod factory;
mod kind;
mod layout;
mod walk;

pub use cdr::{decode_type_code, encode_type_code, MAX_TYPECODE_DEPTH};
pub use factory::{StructMember, UnionLabel, UnionMember, ValueMember};
pub use kind::{TcKind, INDIRECTION_TAG};
pub use layout::{Check, FixedLayout, Layout, LeafKind, LeafRun, SwapRun, MAX_BLOCK_LAYOUT};
pub use walk::{copy_value, interpreted_elements, skip_value, MAX_VALUE_DEPTH};

use std::fmt;
use std::sync::Arc;
use thiserror::Error;

/// `CORBA::TypeCode::BadKind`: the operation does not apply to this kind.
pub const BAD_KIND_ID: &str = "IDL:omg.org/CORBA/TypeCode/BadKind:1.0";
/// `CORBA::TypeCode::Bounds`: an index past the members.
pub const BOUNDS_ID: &str = "IDL:omg.org/CORBA/TypeCode/Bounds:1.0";

/// What a TypeCode operation or factory call can fail with.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TypeCodeError {
    /// `TypeCode::BadKind`: the operation is not defined for this kind.
    #[error("TypeCode::BadKind")]
    BadKind,
    /// `TypeCode::Bounds`: a member index out of range.
    #[error("TypeCode::Bounds")]
    Bounds,
    /// `BAD_PARAM` from a factory operation, with its minor code (`corbina::error::minor`:
    /// OMG 15 bad name, 16 bad repository id, 17 bad or repeated member name, 18 duplicate
    /// label, 19 label does not fit the discriminator, 20 bad discriminator type; otherwise
    /// `BAD_PARAM_TYPECODE_ARGUMENT`).
    #[error("BAD_PARAM (minor {minor:#010x}): {reason}")]
    BadParam {
        /// The minor code, VMCID included.
        minor: u32,
        /// What was wrong.
        reason: &'static str,
    },
    /// `BAD_TYPECODE` OMG minor 2 from a factory operation: a member of an illegal type.
    #[error("BAD_TYPECODE: {reason}")]
    IllegalMemberType {
        /// What was wrong.
        reason: &'static str,
    },
    /// `BAD_TYPECODE`: an unresolved recursive reference was used as a complete type.
    #[error("BAD_TYPECODE: incomplete TypeCode (unresolved recursive reference)")]
    Incomplete,
}

impl TypeCodeError {
    /// The repository id of the CORBA exception this error is.
    pub fn repository_id(&self) -> &'static str {
        match self {
            TypeCodeError::BadKind => BAD_KIND_ID,
            TypeCodeError::Bounds => BOUNDS_ID,
            TypeCodeError::BadParam { .. } => "IDL:omg.org/CORBA/BAD_PARAM:1.0",
            TypeCodeError::Incomplete | TypeCodeError::IllegalMemberType { .. } => {
                "IDL:omg.org/CORBA/BAD_TYPECODE:1.0"
            }
        }
    }

    /// The system exception for the factory/incomplete cases (`None` for the user
    /// exceptions `BadKind` and `Bounds`).
    pub fn to_system_exception(&self) -> Option<crate::SystemException> {
        use crate::SystemExceptionKind as K;
        match self {
            TypeCodeError::BadParam { minor, .. } => {
                Some(crate::SystemException::new(K::BadParam, *minor))
            }
            TypeCodeError::IllegalMemberType { .. } => Some(crate::SystemException::new(
                K::BadTypecode,
                crate::error::minor::BAD_TYPECODE_ILLEGAL_MEMBER,
            )),
            TypeCodeError::Incomplete => Some(crate::SystemException::new(
                K::BadTypecode,
                crate::error::minor::BAD_TYPECODE_INCOMPLETE,
            )),
            _ => None,
        }
    }
}

/// Writes union label `v` as a value of discriminator type `disc`.
pub(crate) fn write_label_tc(
    w: &mut corbina_cdr::CdrWriter<'_>,
    disc: &TypeCode,
    v: i128,
) -> corbina_cdr::Result<()> {
    cdr::write_label(w, &disc.closed_node(), v)
}

/// Result of TypeCode operations.
pub type TcResult<T> = Result<T, TypeCodeError>;

/// One immutable TypeCode description. Shared between handles and between the TypeCodes
/// that contain it.
pub(crate) struct Node {
    pub(crate) kind: TcKind,
    pub(crate) body: Body,
    pub(crate) layout: Layout,
    /// Repository ids of recursive references inside that no enclosing type of this node
    /// binds (usually empty).
    pub(crate) free: Box<[Arc<str>]>,
    /// Nodes on the longest path down from this one (1 for a node without parts; saturating).
    /// Descriptions are built bottom-up, so this is known at construction and bounds every
    /// walk: encoding refuses what the decoder would refuse, and dropping a tall description
    /// goes by a list instead of a recursion as deep as it.
    pub(crate) height: u32,
}

/// A description this tall or shorter drops by plain recursion.
const DROP_DIRECT_HEIGHT: u32 = 32;

impl Drop for Node {
    fn drop(&mut self) {
        if self.height <= DROP_DIRECT_HEIGHT {
            return;
        }
        // The parts this node alone holds are taken out and dropped one by one, theirs too.
        let mut work = Vec::new();
        take_parts(&mut self.body, &mut work);
        while let Some(part) = work.pop() {
            if let Some(mut n) = Arc::into_inner(part) {
                if n.height > DROP_DIRECT_HEIGHT {
                    take_parts(&mut n.body, &mut work);
                    n.height = 0;
                }
            }
        }
    }
}

/// Moves the parts of `body` to `out`, leaving a shared leaf in their place.
fn take_parts(body: &mut Body, out: &mut Vec<Arc<Node>>) {
    static LEAF: std::sync::OnceLock<Arc<Node>> = std::sync::OnceLock::new();
    let leaf = LEAF.get_or_init(|| Node::primitive(TcKind::Null));
    let mut take = |n: &mut Arc<Node>| out.push(std::mem::replace(n, leaf.clone()));
    match body {
        Body::Struct { members, .. } => members.iter_mut().for_each(|(_, t)| take(t)),
        Body::Union { disc, arms, .. } => {
            take(disc);
            arms.iter_mut().for_each(|a| take(&mut a.ty));
        }
        Body::Seq { content, .. } | Body::Alias { content, .. } => take(content),
        Body::Value { base, members, .. } => {
            if let Some(b) = base.as_mut() {
                take(b);
            }
            members.iter_mut().for_each(|m| take(&mut m.ty));
        }
        _ => {}
    }
}

/// A union arm.
pub(crate) struct Arm {
    pub(crate) label: UnionLabel,
    pub(crate) name: String,
    pub(crate) ty: Arc<Node>,
}

/// A valuetype state member.
pub(crate) struct VMember {
    pub(crate) name: String,
    pub(crate) ty: Arc<Node>,
    pub(crate) visibility: i16,
}

/// The parameters of each kind.
pub(crate) enum Body {
    /// Primitive kinds.
    Empty,
    /// objref, native, abstract/local interface, component, home.
    Named {
        id: String,
        name: String,
    },
    /// struct and except.
    Struct {
        id: String,
        name: String,
        members: Box<[(String, Arc<Node>)]>,
    },
    Union {
        id: String,
        name: String,
        disc: Arc<Node>,
        default_index: i32,
        arms: Box<[Arm]>,
    },
    Enum {
        id: String,
        name: String,
        members: Box<[String]>,
    },
    /// string and wstring (0 = unbounded).
    Bound(u32),
    /// sequence (bound, 0 = unbounded) and array (length).
    Seq {
        bound: u32,
        content: Arc<Node>,
    },
    /// alias and value_box.
    Alias {
        id: String,
        name: String,
        content: Arc<Node>,
    },
    Fixed {
        digits: u16,
        scale: i16,
    },
    /// value and event.
    Value {
        id: String,
        name: String,
        modifier: i16,
        base: Option<Arc<Node>>,
        members: Box<[VMember]>,
    },
    /// A reference to the enclosing type with this repository id.
    Recursive {
        id: String,
    },
}

impl Node {
    /// Builds a node, computing its layout and free recursive references.
    pub(crate) fn new(kind: TcKind, body: Body) -> Arc<Node> {
        let mut free: Vec<Arc<str>> = Vec::new();
        let mut below = 0u32;
        let mut add = |n: &Arc<Node>| {
            below = below.max(n.height);
            for id in n.free.iter() {
                if !free.contains(id) {
                    free.push(id.clone());
                }
            }
        };
        match &body {
            Body::Struct { members, .. } => members.iter().for_each(|(_, t)| add(t)),
            Body::Union { disc, arms, .. } => {
                add(disc);
                arms.iter().for_each(|a| add(&a.ty));
            }
            Body::Seq { content, .. } | Body::Alias { content, .. } => add(content),
            Body::Value { base, members, .. } => {
                if let Some(b) = base {
                    add(b);
                }
                members.iter().for_each(|m| add(&m.ty));
            }
            Body::Recursive { id } => free.push(Arc::from(id.as_str())),
            _ => {}
        }
        if kind.can_recurse() {
            let own = body.id().unwrap_or("");
            free.retain(|f| &**f != own);
        }
        let layout = layout::compute(kind, &body);
        Arc::new(Node {
            kind,
            body,
            layout,
            free: free.into_boxed_slice(),
            height: below.saturating_add(1),
        })
    }

    pub(crate) fn primitive(kind: TcKind) -> Arc<Node> {
        Node::new(kind, Body::Empty)
    }

    pub(crate) fn is_recursive_ref(&self) -> bool {
        matches!(self.body, Body::Recursive { .. })
    }
}

impl Body {
    pub(crate) fn id(&self) -> Option<&str> {
        match self {
            Body::Named { id, .. }
            | Body::Struct { id, .. }
            | Body::Union { id, .. }
            | Body::Enum { id, .. }
            | Body::Alias { id, .. }
            | Body::Value { id, .. } => Some(id),
            _ => None,
        }
    }

    pub(crate) fn name(&self) -> Option<&str> {
        match self {
            Body::Named { name, .. }
            | Body::Struct { name, .. }
            | Body::Union { name, .. }
            | Body::Enum { name, .. }
            | Body::Alias { name, .. }
            | Body::Value { name, .. } => Some(name),
            _ => None,
        }
    }
}

/// A TypeCode: a cheap, clonable handle to an immutable type description (see the module
/// documentation for how recursion is represented).
#[derive(Clone)]
pub struct TypeCode {
    pub(crate) node: Arc<Node>,
    /// The enclosing struct/union/value handle this one was reached through, if the node has
    /// recursive references to resolve against it.
    scope: Option<Arc<TypeCode>>,
}

macro_rules! primitive_consts {
    ($($name:ident => $kind:ident,)*) => {
        impl TypeCode {
            $(
                #[doc = concat!("The TypeCode of `", stringify!($kind), "` (`CORBA::_tc_…`).")]
                #[allow(non_upper_case_globals)]
                pub const $name: PrimitiveTc = PrimitiveTc(TcKind::$kind);
            )*
        }
    };
}

primitive_consts! {
    NULL => Null,
    VOID => Void,
    SHORT => Short,
    LONG => Long,
    USHORT => UShort,
    ULONG => ULong,
    FLOAT => Float,
    DOUBLE => Double,
    BOOLEAN => Boolean,
    CHAR => Char,
    OCTET => Octet,
    ANY => Any,
    TYPECODE => TypeCode,
    PRINCIPAL => Principal,
    LONGLONG => LongLong,
    ULONGLONG => ULongLong,
    LONGDOUBLE => LongDouble,
    WCHAR => WChar,
}

/// A primitive kind usable where a [`TypeCode`] is expected (`TypeCode::LONG`); constants
/// cannot hold an `Arc`, so the handle is made (from a per-kind shared node) on conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PrimitiveTc(pub TcKind);

impl From<PrimitiveTc> for TypeCode {
    fn from(p: PrimitiveTc) -> TypeCode {
        TypeCode::primitive(p.0)
    }
}

impl From<&TypeCode> for TypeCode {
    fn from(t: &TypeCode) -> TypeCode {
        t.clone()
    }
}

impl PartialEq<TypeCode> for PrimitiveTc {
    fn eq(&self, other: &TypeCode) -> bool {
        TypeCode::from(*self).equal(other)
    }
}

impl PartialEq<PrimitiveTc> for TypeCode {
    fn eq(&self, other: &PrimitiveTc) -> bool {
        self.equal(&TypeCode::from(*other))
    }
}

fn primitive_nodes() -> &'static [Arc<Node>] {
    static NODES: std::sync::OnceLock<Vec<Arc<Node>>> = std::sync::OnceLock::new();
    NODES.get_or_init(|| {
        TcKind::ALL
            .iter()
            .map(|&k| {
                if k.is_primitive() {
                    Node::primitive(k)
                } else {
                    // Placeholders so the table can be indexed by kind; never handed out.
                    Node::primitive(TcKind::Null)
                }
            })
            .collect()
    })
}

impl TypeCode {
    pub(crate) fn from_node(node: Arc<Node>) -> TypeCode {
        TypeCode { node, scope: None }
    }

    /// The TypeCode of a primitive kind (`tk_null` … `tk_wchar`, the kinds without
    /// parameters). Other kinds give `tk_null`; use the factory functions for them.
    pub fn primitive(kind: TcKind) -> TypeCode {
        let k = if kind.is_primitive() {
            kind
        } else {
            TcKind::Null
        };
        TypeCode::from_node(primitive_nodes()[k as usize].clone())
    }

    /// A handle to `child`, a part of this TypeCode, resolving recursive references.
    fn child(&self, child: &Arc<Node>) -> TypeCode {
        if let Body::Recursive { id } = &child.body {
            // The nearest enclosing type with that id: this one or one of its scopes.
            let mut at = Some(self);
            while let Some(tc) = at {
                if tc.node.kind.can_recurse() && tc.node.body.id() == Some(id.as_str()) {
                    return tc.clone();
                }
                at = tc.scope.as_deref();
            }
            return TypeCode::from_node(child.clone());
        }
        if child.free.is_empty() {
            return TypeCode::from_node(child.clone());
        }
        let scope = if self.node.kind.can_recurse() {
            Some(Arc::new(self.clone()))
        } else {
            self.scope.clone()
        };
        TypeCode {
            node: child.clone(),
            scope,
        }
    }

    /// The description with every recursive reference this handle's scope resolves replaced
    /// by the type it refers to, for embedding in another TypeCode (so `sequence<Node>`
    /// taken out of `Node` still means `sequence<Node>`).
    pub(crate) fn closed_node(&self) -> Arc<Node> {
        if self.node.free.is_empty() || self.scope.is_none() {
            return self.node.clone();
        }
        let mut subst: Vec<(Arc<str>, Arc<Node>)> = Vec::new();
        for id in self.node.free.iter() {
            let mut at = self.scope.as_deref();
            while let Some(tc) = at {
                if tc.node.kind.can_recurse() && tc.node.body.id() == Some(&**id) {
                    subst.push((id.clone(), tc.closed_node()));
                    break;
                }
                at = tc.scope.as_deref();
            }
        }
        equal::substitute(&self.node, &subst)
    }

    /// `kind()`: the TCKind (`tk_null` for an unresolved recursive reference).
    pub fn kind(&self) -> TcKind {
        self.node.kind
    }

    /// Whether this is a recursive reference no enclosing type resolves (what
    /// [`TypeCode::create_recursive_tc`] returns before it is embedded).
    pub fn is_unresolved_recursive(&self) -> bool {
        self.node.is_recursive_ref()
    }

    /// Whether the description is complete: no recursive reference left unresolved.
    pub fn is_complete(&self) -> bool {
        self.node.free.is_empty()
            || self.node.free.iter().all(|id| {
                let mut at = self.scope.as_deref();
                while let Some(tc) = at {
                    if tc.node.body.id() == Some(&**id) {
                        return true;
                    }
                    at = tc.scope.as_deref();
                }
                false
            })
    }

    /// The precomputed layout of values of this type.
    pub fn layout(&self) -> &Layout {
        &self.node.layout
    }

    /// `id()`: the repository id (objref, struct, union, enum, alias, except, value,
    /// value_box, native, abstract/local interface, component, home, event).
    pub fn id(&self) -> TcResult<&str> {
        match &self.node.body {
            Body::Recursive { id } => Ok(id),
            b => b.id().ok_or(TypeCodeError::BadKind),
        }
    }

    /// `name()`: the simple name, for the same kinds as [`TypeCode::id`].
    pub fn name(&self) -> TcResult<&str> {
        self.node.body.name().ok_or(TypeCodeError::BadKind)
    }

    /// `member_count()`: struct, union, enum, except, value and event.
    pub fn member_count(&self) -> TcResult<u32> {
        let n = match &self.node.body {
            Body::Struct { members, .. } => members.len(),
            Body::Union { arms, .. } => arms.len(),
            Body::Enum { members, .. } => members.len(),
            Body::Value { members, .. } => members.len(),
            _ => return Err(TypeCodeError::BadKind),
        };
        Ok(n as u32)
    }

    /// `member_name(i)`.
    pub fn member_name(&self, index: u32) -> TcResult<&str> {
        let i = index as usize;
        let name = match &self.node.body {
            Body::Struct { members, .. } => members.get(i).map(|m| m.0.as_str()),
            Body::Union { arms, .. } => arms.get(i).map(|a| a.name.as_str()),
            Body::Enum { members, .. } => members.get(i).map(String::as_str),
            Body::Value { members, .. } => members.get(i).map(|m| m.name.as_str()),
            _ => return Err(TypeCodeError::BadKind),
        };
        name.ok_or(TypeCodeError::Bounds)
    }

    /// `member_type(i)`: struct, union, except, value and event.
    pub fn member_type(&self, index: u32) -> TcResult<TypeCode> {
        let i = index as usize;
        let node = match &self.node.body {
            Body::Struct { members, .. } => members.get(i).map(|m| &m.1),
            Body::Union { arms, .. } => arms.get(i).map(|a| &a.ty),
            Body::Value { members, .. } => members.get(i).map(|m| &m.ty),
            _ => return Err(TypeCodeError::BadKind),
        };
        node.map(|n| self.child(n)).ok_or(TypeCodeError::Bounds)
    }

    /// `member_label(i)` of a union: the label value as an [`Any`](crate::Any) of the
    /// discriminator type, or the octet 0 for the default member.
    pub fn member_label(&self, index: u32) -> TcResult<crate::Any> {
        let Body::Union { arms, disc, .. } = &self.node.body else {
            return Err(TypeCodeError::BadKind);
        };
        let arm = arms.get(index as usize).ok_or(TypeCodeError::Bounds)?;
        Ok(match arm.label {
            UnionLabel::Default => crate::Any::from_octet(0),
            UnionLabel::Value(v) => crate::any::label_any(&TypeCode::from_node(disc.clone()), v),
        })
    }

    /// The label of union member `i` as an integer (`UnionLabel::Default` for the default
    /// member); booleans are 0/1, chars their code, enums the enumerator index.
    pub fn member_label_value(&self, index: u32) -> TcResult<UnionLabel> {
        let Body::Union { arms, .. } = &self.node.body else {
            return Err(TypeCodeError::BadKind);
        };
        arms.get(index as usize)
            .map(|a| a.label)
            .ok_or(TypeCodeError::Bounds)
    }

    /// `discriminator_type()` of a union.
    pub fn discriminator_type(&self) -> TcResult<TypeCode> {
        match &self.node.body {
            Body::Union { disc, .. } => Ok(self.child(disc)),
            _ => Err(TypeCodeError::BadKind),
        }
    }

    /// `default_index()` of a union: the default member's index, or -1.
    pub fn default_index(&self) -> TcResult<i32> {
        match &self.node.body {
            Body::Union { default_index, .. } => Ok(*default_index),
            _ => Err(TypeCodeError::BadKind),
        }
    }

    /// `length()`: the bound of a string, wstring or sequence (0: unbounded), the length of
    /// an array.
    pub fn length(&self) -> TcResult<u32> {
        match &self.node.body {
            Body::Bound(b) => Ok(*b),
            Body::Seq { bound, .. } => Ok(*bound),
            _ => Err(TypeCodeError::BadKind),
        }
    }

    /// `content_type()`: the element type of a sequence or array, the aliased type of an
    /// alias, the boxed type of a value box.
    pub fn content_type(&self) -> TcResult<TypeCode> {
        match &self.node.body {
            Body::Seq { content, .. } | Body::Alias { content, .. } => Ok(self.child(content)),
            _ => Err(TypeCodeError::BadKind),
        }
    }

    /// `fixed_digits()`.
    pub fn fixed_digits(&self) -> TcResult<u16> {
        match self.node.body {
            Body::Fixed { digits, .. } => Ok(digits),
            _ => Err(TypeCodeError::BadKind),
        }
    }

    /// `fixed_scale()`.
    pub fn fixed_scale(&self) -> TcResult<i16> {
        match self.node.body {
            Body::Fixed { scale, .. } => Ok(scale),
            _ => Err(TypeCodeError::BadKind),
        }
    }

    /// `member_visibility(i)` of a value or event (0 = private, 1 = public).
    pub fn member_visibility(&self, index: u32) -> TcResult<i16> {
        match &self.node.body {
            Body::Value { members, .. } => members
                .get(index as usize)
                .map(|m| m.visibility)
                .ok_or(TypeCodeError::Bounds),
            _ => Err(TypeCodeError::BadKind),
        }
    }

    /// `type_modifier()` of a value or event (0 none, 1 custom, 2 abstract, 3 truncatable).
    pub fn type_modifier(&self) -> TcResult<i16> {
        match &self.node.body {
            Body::Value { modifier, .. } => Ok(*modifier),
            _ => Err(TypeCodeError::BadKind),
        }
    }

    /// `concrete_base_type()` of a value or event: `None` when it has none (the wire's
    /// `tk_null`).
    pub fn concrete_base_type(&self) -> TcResult<Option<TypeCode>> {
        match &self.node.body {
            Body::Value { base, .. } => Ok(base.as_ref().map(|b| self.child(b))),
            _ => Err(TypeCodeError::BadKind),
        }
    }

    /// The type with aliases stripped (`tk_alias` → its content, repeatedly).
    pub fn unalias(&self) -> TypeCode {
        let mut t = self.clone();
        while t.node.kind == TcKind::Alias {
            match t.content_type() {
                Ok(c) => t = c,
                Err(_) => break,
            }
        }
        t
    }

    /// `equal()`: the same type with the same ids and names, member for member.
    pub fn equal(&self, other: &TypeCode) -> bool {
        equal::equal(self, other, equal::Mode::Equal)
    }

    /// `equivalent()`: the same type once aliases are stripped, with names and member names
    /// ignored (and repository ids compared only when both have one).
    pub fn equivalent(&self, other: &TypeCode) -> bool {
        equal::equal(self, other, equal::Mode::Equivalent)
    }

    /// `get_compact_typecode()`: the same TypeCode with names and member names removed
    /// (repository ids, aliases and structure kept).
    pub fn get_compact_typecode(&self) -> TypeCode {
        let node = self.closed_node();
        TypeCode::from_node(equal::compact(&node))
    }

    /// Whether both handles point at the same description.
    pub fn ptr_eq(&self, other: &TypeCode) -> bool {
        Arc::ptr_eq(&self.node, &other.node)
    }
}

impl PartialEq for TypeCode {
    /// `equal()`.
    fn eq(&self, other: &TypeCode) -> bool {
        self.equal(other)
    }
}

impl Eq for TypeCode {}

impl fmt::Debug for TypeCode {
    /// An IDL-like rendering, bounded in depth (shared parts are printed each time they
    /// occur, so the depth bound keeps hostile DAGs from printing forever).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_node(&self.node, f, 6)
    }
}

impl fmt::Display for TypeCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_node(&self.node, f, 6)
    }
}

fn fmt_node(n: &Node, f: &mut fmt::Formatter<'_>, depth: u32) -> fmt::Result {
    if depth == 0 {
        return f.write_str("…");
    }
    let d = depth - 1;
    match &n.body {
        Body::Empty => f.write_str(n.kind.name()),
        Body::Recursive { id } => write!(f, "recursive({id})"),
        Body::Named { id, .. } | Body::Enum { id, .. } => write!(f, "{}({id})", n.kind.name()),
        Body::Struct { id, members, .. } => {
            write!(f, "{}({id}){{", n.kind.name())?;
            for (i, (name, t)) in members.iter().enumerate().take(16) {
                if i > 0 {
                    f.write_str("; ")?;
                }
                fmt_node(t, f, d)?;
                write!(f, " {name}")?;
            }
            f.write_str("}")
        }
        Body::Union { id, disc, arms, .. } => {
            write!(f, "{}({id}) switch(", n.kind.name())?;
            fmt_node(disc, f, d)?;
            write!(f, "){{{} arms}}", arms.len())
        }
        Body::Bound(b) => write!(f, "{}<{b}>", n.kind.name()),
        Body::Seq { bound, content } => {
            write!(f, "{}<", n.kind.name())?;
            fmt_node(content, f, d)?;
            write!(f, ", {bound}>")
        }
        Body::Alias { id, content, .. } => {
            write!(f, "{}({id}) = ", n.kind.name())?;
            fmt_node(content, f, d)
        }
        Body::Fixed { digits, scale } => write!(f, "fixed<{digits},{scale}>"),
        Body::Value { id, members, .. } => {
            write!(f, "{}({id}){{{} members}}", n.kind.name(), members.len())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitive_constants() {
        let t: TypeCode = TypeCode::LONG.into();
        assert_eq!(t.kind(), TcKind::Long);
        assert!(t.equal(&TypeCode::primitive(TcKind::Long)));
        assert_eq!(TypeCode::primitive(TcKind::Struct).kind(), TcKind::Null);
        assert_eq!(t.id(), Err(TypeCodeError::BadKind));
        assert_eq!(t.member_count(), Err(TypeCodeError::BadKind));
        assert_eq!(TypeCodeError::Bounds.repository_id(), BOUNDS_ID);
        assert_eq!(format!("{t:?}"), "tk_long");
    }

    #[test]
    fn unresolved_reference() {
        let r = TypeCode::create_recursive_tc("IDL:X:1.0");
        assert!(r.is_unresolved_recursive());
        assert!(!r.is_complete());
        assert_eq!(r.kind(), TcKind::Null);
        assert_eq!(r.id(), Ok("IDL:X:1.0"));
    }
}
