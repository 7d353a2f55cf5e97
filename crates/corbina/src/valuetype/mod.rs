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
    /// How a value of this type is seen as each of its concrete bases (generated: one
    /// [`BaseView::of`] per concrete base, transitively), so that a `ValueRef<Base>` can hold it.
    const BASE_VIEWS: &'static [BaseView] = &[];
    /// The concrete types derived from this one that the generator knows (those of the same IDL
    /// file): their default factories build a value received with their id where this type is
    /// the formal one and the registry has no factory for it.
    const DERIVED: &'static [KnownValue] = &[];

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
    /// Whether this is a value reference, each nesting level of which counts against the value
    /// nesting limit: a sequence of them is not a level of the reader's depth ([`read_seq`]).
    const IS_VALUE: bool = false;
}

/// A reference to a value of type `T` or of a type derived from `T`: null, or a handle shared
/// by everyone holding it.
///
/// As a `Base*` in C++, a `ValueRef<Base>` holds any value of `Base`'s family: a `Derived` a
/// peer sent where IDL says `Base` arrives as a `Derived` (built by the factory registered for
/// its id, or the generated type of the same IDL file), is sent on as a `Derived`, and
/// [`ValueRef::downcast`] gives it back as a `ValueRef<Derived>`; [`ValueRef::lock`] gives its
/// `Base` part either way. [`ValueRef::upcast`] makes one from a `ValueRef<Derived>`.
///
/// Equality and hashing are by identity (two handles are equal when they are the same value),
/// which is what makes graphs with sharing and cycles comparable and printable: `Debug` shows
/// the type and address, never the state (which may lead back to itself).
pub struct ValueRef<T: 'static>(Option<Slot<T>>);

/// What a non-null [`ValueRef<T>`] holds.
enum Slot<T: 'static> {
    /// A value of type `T` itself.
    Own(Arc<Mutex<T>>),
    /// A value of a type derived from `T`, seen as a `T` through `Upcast`.
    Derived(Arc<dyn ValueObject>, &'static Upcast<T>),
}

impl<T: 'static> Clone for Slot<T> {
    fn clone(&self) -> Self {
        match self {
            Slot::Own(h) => Slot::Own(h.clone()),
            Slot::Derived(v, up) => Slot::Derived(v.clone(), up),
        }
    }
}

impl<T: 'static> Drop for ValueRef<T> {
    fn drop(&mut self) {
        // The last handle drops the state, which may hold the next node of a long list: that
        // goes through a queue, not a recursion as deep as the list.
        match self.0.take() {
            Some(Slot::Own(h)) => {
                if let Some(last) = Arc::into_inner(h) {
                    depth::drop_last(last);
                }
            }
            Some(Slot::Derived(v, _)) => polymorphic::drop_object(v),
            None => {}
        }
    }
}

impl<T: 'static> ValueRef<T> {
    /// A new value.
    pub fn new(value: T) -> Self {
        ValueRef(Some(Slot::Own(Arc::new(Mutex::new(value)))))
    }

    /// The null value.
    pub const fn null() -> Self {
        ValueRef(None)
    }

    /// Whether this is the null value.
    pub fn is_null(&self) -> bool {
        self.0.is_none()
    }

    /// The shared handle, when the value is a `T` itself (`None` for null and for a value of a
    /// derived type: [`ValueRef::downcast`] reaches that).
    pub fn handle(&self) -> Option<&Arc<Mutex<T>>> {
        match &self.0 {
            Some(Slot::Own(h)) => Some(h),
            _ => None,
        }
    }

    /// Locks the value and gives its `T` state, unless null (a poisoned lock is taken over: the
    /// state is plain data). For a value of a derived type, the guard holds the `T` members,
    /// moved out of the derived state while it lives and back when it drops.
    pub fn lock(&self) -> Option<ValueGuard<'_, T>> {
        match self.0.as_ref()? {
            Slot::Own(h) => Some(ValueGuard(Guard::Own(lock(h)))),
            Slot::Derived(v, up) => {
                let mut state = v.state().lock().unwrap_or_else(|e| e.into_inner());
                let base = (up.take)(&mut *state)?;
                Some(ValueGuard(Guard::Derived {
                    state,
                    base: Some(base),
                    up,
                }))
            }
        }
    }

    /// Whether both are the same value (or both null).
    pub fn ptr_eq(&self, other: &Self) -> bool {
        self.identity() == other.identity()
    }

    fn identity(&self) -> usize {
        match &self.0 {
            None => 0,
            Some(Slot::Own(h)) => Arc::as_ptr(h) as *const () as usize,
            Some(Slot::Derived(v, _)) => Arc::as_ptr(v) as *const () as usize,
        }
    }
}

impl<T: ValueType> ValueRef<T> {
    /// The most derived type's repository id, unless null.
    pub fn repository_id(&self) -> Option<&'static str> {
        match self.0.as_ref()? {
            Slot::Own(_) => Some(T::REPOSITORY_ID),
            Slot::Derived(v, _) => Some(v.repository_id()),
        }
    }

    /// Whether the value is of type `id` (its own, a base's, or `ValueBase`; false for null).
    pub fn is_a(&self, id: &str) -> bool {
        self.object().is_some_and(|v| v.is_a(id))
    }

    /// The same value as a `ValueRef<D>`, if it is a `D` or of a type derived from `D` (null
    /// gives a null `ValueRef`).
    pub fn downcast<D: ValueType>(&self) -> Option<ValueRef<D>> {
        match self.object() {
            None => Some(ValueRef::null()),
            Some(v) => view(&v),
        }
    }

    /// The same value as a `ValueRef<B>` of one of its concrete bases.
    pub fn upcast<B: ValueType>(self) -> ValueRef<B>
    where
        T: Derives<B>,
    {
        match &self.0 {
            None => ValueRef::null(),
            Some(Slot::Own(h)) => ValueRef(Some(Slot::Derived(h.clone(), &T::UPCAST))),
            // A value seen as `T` is of a type derived from `T`, so from `B`: its generated
            // `BASE_VIEWS` list `B` as they list every concrete base.
            Some(Slot::Derived(v, _)) => view(v).unwrap_or_else(|| {
                unreachable!(
                    "{} lists no view as a base of {}",
                    v.repository_id(),
                    T::REPOSITORY_ID
                )
            }),
        }
    }

    /// The value without its static type, unless null (shared, not copied).
    pub(crate) fn object(&self) -> Option<Arc<dyn ValueObject>> {
        match self.0.as_ref()? {
            Slot::Own(h) => Some(h.clone()),
            Slot::Derived(v, _) => Some(v.clone()),
        }
    }
}

/// The value `v` as a `ValueRef<T>`, if it is a `T` or of a type derived from `T`.
pub(crate) fn view<T: ValueType>(v: &Arc<dyn ValueObject>) -> Option<ValueRef<T>> {
    let any: Arc<dyn std::any::Any + Send + Sync> = v.clone();
    if let Ok(h) = any.downcast::<Mutex<T>>() {
        return Some(ValueRef(Some(Slot::Own(h))));
    }
    let up = v
        .base_view(std::any::TypeId::of::<T>())?
        .downcast_ref::<Upcast<T>>()?;
    Some(ValueRef(Some(Slot::Derived(v.clone(), up))))
}

/// The state of a locked value as its `T` part ([`ValueRef::lock`]).
pub struct ValueGuard<'a, T: 'static>(Guard<'a, T>);

enum Guard<'a, T: 'static> {
    Own(MutexGuard<'a, T>),
    /// `base` is moved out of the derived `state` while the guard lives (always `Some` until
    /// the guard drops and puts it back).
    Derived {
        state: MutexGuard<'a, dyn std::any::Any + Send>,
        base: Option<T>,
        up: &'static Upcast<T>,
    },
}

impl<T: 'static> std::ops::Deref for ValueGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        match &self.0 {
            Guard::Own(g) => g,
            Guard::Derived { base, .. } => base.as_ref().unwrap_or_else(|| unreachable!()),
        }
    }
}

impl<T: 'static> std::ops::DerefMut for ValueGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        match &mut self.0 {
            Guard::Own(g) => g,
            Guard::Derived { base, .. } => base.as_mut().unwrap_or_else(|| unreachable!()),
        }
    }
}

impl<T: 'static> Drop for ValueGuard<'_, T> {
    fn drop(&mut self) {
        if let Guard::Derived { state, base, up } = &mut self.0 {
            if let Some(b) = base.take() {
                (up.put)(&mut **state, b);
            }
        }
    }
}

impl<T: 'static> std::fmt::Debug for ValueGuard<'_, T>
where
    T: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

/// A concrete valuetype derived from `B` (generated for each concrete base, transitively):
/// how its state lends out and takes back `B`'s members, which it holds first.
pub trait Derives<B: ValueType>: ValueType {
    /// Moves `B`'s members out into a `B` (leaving defaults behind).
    fn take_base(&mut self) -> B;
    /// Moves them back.
    fn put_base(&mut self, base: B);
    /// The two, type-erased, for a `ValueRef<B>` holding a `Self`.
    const UPCAST: Upcast<B> = Upcast {
        take: take_base_erased::<Self, B>,
        put: put_base_erased::<Self, B>,
    };
}

fn take_base_erased<D: Derives<B>, B: ValueType>(s: &mut (dyn std::any::Any + Send)) -> Option<B> {
    s.downcast_mut::<D>().map(D::take_base)
}

fn put_base_erased<D: Derives<B>, B: ValueType>(s: &mut (dyn std::any::Any + Send), b: B) {
    if let Some(d) = s.downcast_mut::<D>() {
        d.put_base(b);
    }
}

/// A derived value's state seen as its base `B` ([`Derives::UPCAST`]).
pub struct Upcast<B: 'static> {
    take: fn(&mut (dyn std::any::Any + Send)) -> Option<B>,
    put: fn(&mut (dyn std::any::Any + Send), B),
}

/// One concrete base a value type can be seen as ([`ValueType::BASE_VIEWS`]).
#[derive(Clone, Copy)]
pub struct BaseView {
    base: fn() -> std::any::TypeId,
    upcast: &'static (dyn std::any::Any + Send + Sync),
}

impl BaseView {
    /// `D` seen as its base `B`.
    pub const fn of<D: Derives<B>, B: ValueType>() -> Self {
        BaseView {
            base: std::any::TypeId::of::<B>,
            upcast: &D::UPCAST,
        }
    }

    /// The view as `base`, among `views`.
    pub(crate) fn find(
        views: &[BaseView],
        base: std::any::TypeId,
    ) -> Option<&'static (dyn std::any::Any + Send + Sync)> {
        views.iter().find(|v| (v.base)() == base).map(|v| v.upcast)
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
            Some(Slot::Own(a)) => write!(
                f,
                "ValueRef<{}>({:p})",
                std::any::type_name::<T>(),
                Arc::as_ptr(a)
            ),
            Some(Slot::Derived(v, _)) => write!(
                f,
                "ValueRef<{}>({}, {:p})",
                std::any::type_name::<T>(),
                v.repository_id(),
                Arc::as_ptr(v)
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
    const IS_VALUE: bool = true;
    fn write_member<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        match &self.0 {
            None => out.write_null(w),
            Some(Slot::Own(h)) => write_locked(h, w, out),
            // Sent as what it is, with its own header: nothing the caller holds is lost.
            Some(Slot::Derived(v, _)) => v.write_value(w, out),
        }
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
                view(&v).ok_or_else(|| wrong_type(at))
            }
            ValueStart::Value(h) => {
                let v = match h.repository_ids.most_derived() {
                    Some(id) if id != T::REPOSITORY_ID => read_derived::<T>(r, input, &h)?,
                    _ => read_state_at::<T>(r, input, h.position)?,
                };
                input.end_value(r)?;
                Ok(v)
            }
        }
    }
}

/// Reads a value sent with a most derived type other than the formal `T`: as the most derived
/// type that has a factory (the registry's, then the generated types derived from `T`), going
/// up the truncatable chain when the value is chunked, down to `T` itself (truncation).
#[cold]
fn read_derived<T: ValueType>(
    r: &mut CdrReader<'_>,
    input: &mut ValueInput,
    h: &ValueHeader,
) -> Result<ValueRef<T>> {
    let ids = h
        .repository_ids
        .iter()
        .take(if h.chunked { usize::MAX } else { 1 });
    for id in ids {
        if id == T::REPOSITORY_ID {
            return read_state_at::<T>(r, input, h.position);
        }
        let built = if let Some(f) = polymorphic::lookup_value_factory(id) {
            depth::nested(|| f.read_value(r, input, h.position))?
        } else if let Some(k) = T::DERIVED.iter().find(|k| k.repository_id == id) {
            (k.read)(r, input, h.position)?
        } else {
            continue;
        };
        return built
            .into_object()
            .and_then(|v| view(&v))
            .ok_or(MarshalError::InvalidValue {
                offset: h.position,
                reason: "the value factory built a value that is not of the formal type",
            });
    }
    Err(no_factory(h))
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
    Ok(ValueRef(Some(Slot::Own(handle))))
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
    if T::IS_VALUE {
        // Each element nests as a value (its own limit and stack segment).
        let mut v = Vec::new();
        for _ in 0..n {
            v.push(T::read_member(r, input)?);
        }
        return Ok(v);
    }
    // A struct holding values recurses through its sequences: each is one level of the
    // reader's depth, as `Vec`'s own codec counts it, and runs where stack is left.
    r.enter()?;
    let v = depth::nested(|| {
        let mut v = Vec::new();
        for _ in 0..n {
            v.push(T::read_member(r, input)?);
        }
        Ok(v)
    });
    r.leave();
    v
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
