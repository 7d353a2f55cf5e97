//! Objects by value: the runtime side of the valuetype mapping (`docs/mapping.md`).
//!
//! An IDL valuetype `V` maps to a generated struct `V` holding its state and implementing
//! [`ValueType`]; wherever IDL uses `V` (a parameter, a member, another value's state) Rust
//! uses [`ValueRef<V>`]: null, or a shared handle (`Arc<Mutex<V>>`). Sharing is by handle, so a
//! value reachable twice in a graph is one value, sent once and then by indirection, and
//! arrives as one handle again; a cycle is expressible (a handle stored in a value it leads
//! to) and is marshalled without looping. A boxed valuetype maps to a generated newtype over
//! `Option<Arc<T>>` implementing [`BoxedValue`].
//!
//! Marshalling goes through [`corbina_cdr::value`]: one [`ValueOutput`]/[`ValueInput`] per
//! top-level value (a parameter, a member of a struct), shared by everything nested in its
//! state.
//!
//! Depth: values nest as deep as the value nesting limit allows (`-ORBmaxValueNesting`,
//! [`corbina_cdr::value::DEFAULT_MAX_VALUE_NESTING`]), encoding and decoding alike, in any
//! thread: each nested value's codec runs where enough stack is left, growing it on the heap
//! when needed, and dropping a deep graph queues its deep parts instead of recursing (see the
//! `depth` module). A graph deeper than the limit is refused with MARSHAL, before anything is
//! sent when encoding.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use corbina_cdr::value::{RepositoryIds, ValueHeader, ValueStart, WriteHeader, WriteIds};
pub use corbina_cdr::value::{ValueInput, ValueOutput};
use corbina_cdr::{CdrDecode, CdrEncode, CdrReader, CdrWriter, MarshalError, Result};

/// A concrete valuetype's state, as generated from IDL.
pub trait ValueType: Default + Send + 'static {
    /// The type's repository id.
    const REPOSITORY_ID: &'static str;
    /// The ids sent in the value tag: this type's, then (when truncatable) its bases' up the
    /// truncatable chain.
    const REPOSITORY_IDS: &'static [&'static str];
    /// Whether the state is chunked (truncatable values), so that a receiver knowing only a
    /// base can skip the rest.
    const CHUNKED: bool;
    /// Every base's repository id, concrete and abstract, transitively: what a value of this
    /// type can be passed as (an abstract valuetype's parameter checks it).
    const BASE_IDS: &'static [&'static str] = &[];

    /// Writes the state members (inherited first), each preceded by
    /// [`ValueOutput::begin_member`] unless it is itself a value.
    fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()>;

    /// Reads the state members written by [`ValueType::write_state`].
    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self>;
}

/// A valuetype with a TypeCode of its own (generated for every concrete valuetype that is not
/// `custom`): its [`ValueRef`] goes into an `Any` and comes out typed, `Any::insert(&v)` and
/// `any.extract::<ValueRef<V>>()`.
pub trait TypedValue: ValueType {
    /// The valuetype's TypeCode (`tk_value` or `tk_event`).
    fn value_type_code() -> crate::TypeCode;
}

impl<T: TypedValue> crate::any::AnyInsert for ValueRef<T> {
    fn type_code() -> crate::TypeCode {
        T::value_type_code()
    }
}

/// A value that can sit in another value's state, sharing its stream state (indirections,
/// chunking).
pub trait ValueMember: Sized {
    /// Writes the value (header, state, end) or null, or an indirection if already written.
    fn write_member<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()>;
    /// Reads what [`ValueMember::write_member`] wrote.
    fn read_member(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self>;
}

/// A reference to a value of type `T`: null, or a handle shared by everyone holding it.
///
/// Equality and hashing are by identity (two handles are equal when they are the same value),
/// which is what makes graphs with sharing and cycles comparable and printable: `Debug` shows
/// the type and address, never the state (which may lead back to itself).
pub struct ValueRef<T: 'static>(Option<Arc<Mutex<T>>>);

impl<T: 'static> Drop for ValueRef<T> {
    fn drop(&mut self) {
        // The last handle drops the state, which may hold the next node of a long list: that
        // goes through a queue, not a recursion as deep as the list.
        if let Some(last) = self.0.take().and_then(Arc::into_inner) {
            depth::drop_last(last);
        }
    }
}

impl<T: 'static> ValueRef<T> {
    /// A new value.
    pub fn new(value: T) -> Self {
        ValueRef(Some(Arc::new(Mutex::new(value))))
    }

    /// The null value.
    pub const fn null() -> Self {
        ValueRef(None)
    }

    /// Whether this is the null value.
    pub fn is_null(&self) -> bool {
        self.0.is_none()
    }

    /// The shared handle, unless null.
    pub fn handle(&self) -> Option<&Arc<Mutex<T>>> {
        self.0.as_ref()
    }

    /// Locks the value's state (a poisoned lock is taken over: the state is plain data).
    pub fn lock(&self) -> Option<MutexGuard<'_, T>> {
        self.0.as_ref().map(|a| lock(a))
    }

    /// Whether both are the same value (or both null).
    pub fn ptr_eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }

    fn identity(&self) -> usize {
        self.0
            .as_ref()
            .map_or(0, |a| Arc::as_ptr(a) as *const () as usize)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<T: 'static> From<T> for ValueRef<T> {
    fn from(value: T) -> Self {
        ValueRef::new(value)
    }
}

impl<T: 'static> Clone for ValueRef<T> {
    fn clone(&self) -> Self {
        ValueRef(self.0.clone())
    }
}

impl<T: 'static> Default for ValueRef<T> {
    fn default() -> Self {
        ValueRef(None)
    }
}

impl<T: 'static> PartialEq for ValueRef<T> {
    fn eq(&self, other: &Self) -> bool {
        self.ptr_eq(other)
    }
}

impl<T: 'static> Eq for ValueRef<T> {}

impl<T: 'static> Hash for ValueRef<T> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.identity().hash(h)
    }
}

impl<T: 'static> std::fmt::Debug for ValueRef<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            None => write!(f, "ValueRef<{}>(null)", std::any::type_name::<T>()),
            Some(a) => write!(
                f,
                "ValueRef<{}>({:p})",
                std::any::type_name::<T>(),
                Arc::as_ptr(a)
            ),
        }
    }
}

fn no_factory(h: &ValueHeader) -> MarshalError {
    MarshalError::InvalidValue {
        offset: h.position,
        reason: "value of a type the receiver does not know and cannot truncate to the formal type",
    }
}

fn wrong_type(at: usize) -> MarshalError {
    MarshalError::InvalidValue {
        offset: at,
        reason: "indirection to a value of another type",
    }
}

/// Whether a value sent with `ids` can be read as `formal` (`chunked`: by truncation).
fn accepts(ids: &RepositoryIds, chunked: bool, formal: &str) -> bool {
    match ids.most_derived() {
        None => true,
        Some(id) if id == formal => true,
        Some(_) => chunked && ids.iter().any(|id| id == formal),
    }
}

impl<T: ValueType> ValueMember for ValueRef<T> {
    fn write_member<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        let Some(handle) = &self.0 else {
            return out.write_null(w);
        };
        write_locked(handle, w, out)
    }

    fn read_member(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        let at = r.position();
        match input.read_value(r)? {
            ValueStart::Null => Ok(ValueRef(None)),
            ValueStart::Indirection { target } => {
                let v = input.resolve(target, at)?;
                let v = v
                    .downcast::<polymorphic::Registered>()
                    .map_err(|_| wrong_type(at))?;
                let any: Arc<dyn std::any::Any + Send + Sync> = (*v).clone();
                any.downcast::<Mutex<T>>()
                    .map(|a| ValueRef(Some(a)))
                    .map_err(|_| wrong_type(at))
            }
            ValueStart::Value(h) => {
                if !accepts(&h.repository_ids, h.chunked, T::REPOSITORY_ID) {
                    return Err(no_factory(&h));
                }
                let v = read_state_at::<T>(r, input, h.position)?;
                input.end_value(r)?;
                Ok(v)
            }
        }
    }
}

/// Reads `T`'s state for the value whose tag is at `position`, registering its handle first
/// so that a cycle back to it resolves (the value is not ended).
pub(crate) fn read_state_at<T: ValueType>(
    r: &mut CdrReader<'_>,
    input: &mut ValueInput,
    position: usize,
) -> Result<ValueRef<T>> {
    let handle = Arc::new(Mutex::new(T::default()));
    let registered: polymorphic::Registered = handle.clone();
    input.register(position, Arc::new(registered));
    let state = depth::nested(|| T::read_state(r, input))?;
    *lock(&handle) = state;
    Ok(ValueRef(Some(handle)))
}

/// Writes the value behind `handle` (identity: its address) with `T`'s header, or an
/// indirection when it was written before.
pub(crate) fn write_locked<T: ValueType>(
    handle: &Mutex<T>,
    w: &mut CdrWriter<'_>,
    out: &mut ValueOutput,
) -> Result<()> {
    let identity = handle as *const Mutex<T> as *const () as usize;
    let ids = T::REPOSITORY_IDS;
    let header = WriteHeader {
        repository_ids: if ids.len() > 1 {
            WriteIds::List(ids)
        } else {
            WriteIds::Single(T::REPOSITORY_ID)
        },
        codebase: None,
        chunked: T::CHUNKED,
    };
    if !out.begin_value(w, identity, &header)? {
        return Ok(());
    }
    depth::nested(|| {
        // The state is behind a lock, so it cannot be lent to `w` for `w`'s lifetime: it is
        // written by a writer of the lock's lifetime that takes over `w`'s buffer (no copy, so
        // nesting costs nothing per level but what the state itself spliced in).
        let state = lock(handle);
        w.with_detached(|t| {
            state.write_state(t, out)?;
            out.end_value(t)
        })
    })
}

impl<T: ValueType> CdrEncode for ValueRef<T> {
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        self.write_member(w, &mut ValueOutput::new())
    }
}

impl<'a, T: ValueType> CdrDecode<'a> for ValueRef<T> {
    const MIN_WIRE_SIZE: usize = 4;

    fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
        Self::read_member(r, &mut ValueInput::new())
    }
}

/// A boxed valuetype (`valuetype B long;`), as generated: a newtype over
/// `Option<Arc<Content>>`, `None` being the null value.
pub trait BoxedValue: Sized {
    /// The boxed type.
    type Content: CdrEncode + for<'r> CdrDecode<'r> + Send + Sync + 'static;
    /// The box's repository id.
    const REPOSITORY_ID: &'static str;
    /// The content, unless null.
    fn content(&self) -> Option<&Arc<Self::Content>>;
    /// A box of `content` (`None`: null).
    fn from_content(content: Option<Arc<Self::Content>>) -> Self;
}

/// Writes a boxed value as a value member (see [`ValueMember`]).
pub fn write_box<'a, B: BoxedValue>(
    b: &'a B,
    w: &mut CdrWriter<'a>,
    out: &mut ValueOutput,
) -> Result<()> {
    let Some(content) = b.content() else {
        return out.write_null(w);
    };
    let identity = Arc::as_ptr(content) as *const () as usize;
    if out.begin_value(w, identity, &WriteHeader::single(B::REPOSITORY_ID))? {
        depth::nested(|| {
            out.begin_member(w)?;
            content.encode(w)?;
            out.end_value(w)
        })?;
    }
    Ok(())
}

/// Reads a boxed value as a value member (see [`ValueMember`]).
pub fn read_box<B: BoxedValue>(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<B> {
    let at = r.position();
    match input.read_value(r)? {
        ValueStart::Null => Ok(B::from_content(None)),
        ValueStart::Indirection { target } => {
            let v = input.resolve(target, at)?;
            let c = v.downcast::<B::Content>().map_err(|_| wrong_type(at))?;
            Ok(B::from_content(Some(c)))
        }
        ValueStart::Value(h) => {
            if !accepts(&h.repository_ids, h.chunked, B::REPOSITORY_ID) {
                return Err(no_factory(&h));
            }
            let c = depth::nested(|| {
                input.begin_member(r)?;
                B::Content::decode(r).map(Arc::new)
            })?;
            input.end_value(r)?;
            input.register(h.position, c.clone());
            Ok(B::from_content(Some(c)))
        }
    }
}

/// Writes a boxed value whose content `write` writes (generated for boxes of any type: it
/// calls [`ValueOutput::begin_member`] unless the content is itself a value).
pub fn write_boxed<'a, C>(
    content: Option<&'a Arc<C>>,
    id: &'static str,
    w: &mut CdrWriter<'a>,
    out: &mut ValueOutput,
    write: impl FnOnce(&'a C, &mut CdrWriter<'a>, &mut ValueOutput) -> Result<()>,
) -> Result<()> {
    let Some(content) = content else {
        return out.write_null(w);
    };
    let identity = Arc::as_ptr(content) as *const () as usize;
    if out.begin_value(w, identity, &WriteHeader::single(id))? {
        depth::nested(|| write(content, w, out))?;
        out.end_value(w)?;
    }
    Ok(())
}

/// Reads a boxed value whose content `read` reads (see [`write_boxed`]); `None` is null.
pub fn read_boxed<C: Send + Sync + 'static>(
    r: &mut CdrReader<'_>,
    input: &mut ValueInput,
    id: &'static str,
    read: impl FnOnce(&mut CdrReader<'_>, &mut ValueInput) -> Result<C>,
) -> Result<Option<Arc<C>>> {
    let at = r.position();
    match input.read_value(r)? {
        ValueStart::Null => Ok(None),
        ValueStart::Indirection { target } => {
            let v = input.resolve(target, at)?;
            v.downcast::<C>().map(Some).map_err(|_| wrong_type(at))
        }
        ValueStart::Value(h) => {
            if !accepts(&h.repository_ids, h.chunked, id) {
                return Err(no_factory(&h));
            }
            let c = Arc::new(depth::nested(|| read(r, input))?);
            input.end_value(r)?;
            input.register(h.position, c.clone());
            Ok(Some(c))
        }
    }
}

/// Writes the elements of a sequence inside a value's state (its length, then each element,
/// values among them sharing the stream's indirections and chunks).
pub fn write_seq<'a, T: ValueMember>(
    items: &'a [T],
    w: &mut CdrWriter<'a>,
    out: &mut ValueOutput,
) -> Result<()> {
    out.begin_member(w)?;
    w.write_length(items.len())?;
    for item in items {
        item.write_member(w, out)?;
    }
    Ok(())
}

/// Reads what [`write_seq`] wrote; `bound` is the IDL bound (0: unbounded).
pub fn read_seq<T: ValueMember>(
    r: &mut CdrReader<'_>,
    input: &mut ValueInput,
    bound: usize,
) -> Result<Vec<T>> {
    input.begin_member(r)?;
    let n = r.read_ulong()? as usize;
    if bound != 0 && n > bound {
        return Err(MarshalError::InvalidValue {
            offset: r.position(),
            reason: "longer than its IDL bound",
        });
    }
    // Every element takes at least a value tag's 4 octets; no allocation from the length.
    r.check_length(n, 4)?;
    let mut v = Vec::new();
    for _ in 0..n {
        v.push(T::read_member(r, input)?);
    }
    Ok(v)
}

impl<T: ValueMember> ValueMember for Vec<T> {
    fn write_member<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        write_seq(self, w, out)
    }
    fn read_member(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        read_seq(r, input, 0)
    }
}

impl<T: ValueMember, const N: usize> ValueMember for [T; N] {
    fn write_member<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        for item in self {
            item.write_member(w, out)?;
        }
        Ok(())
    }
    fn read_member(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        let mut v = Vec::new();
        for _ in 0..N {
            v.push(T::read_member(r, input)?);
        }
        v.try_into().map_err(|_| MarshalError::InvalidValue {
            offset: r.position(),
            reason: "array length",
        })
    }
}

mod custom;
mod depth;
pub use custom::{
    register_custom_unmarshal, unregister_custom_unmarshal, CustomMarshal, CustomState,
    DataInputStream, DataOutputStream, Unmarshal,
};
pub(crate) use depth::nested;

mod polymorphic;
pub use polymorphic::{
    lookup_value_factory, read_default, register_value_factory, unregister_value_factory,
    DefaultFactory, KnownValue, ValueBase, ValueFactory, ValueObject, VALUE_BASE_ID,
};

#[cfg(test)]
mod tests;
