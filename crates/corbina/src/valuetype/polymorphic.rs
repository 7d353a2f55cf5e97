//! Values whose concrete type is known only at run time: `ValueBase` (any value) and abstract
//! valuetypes, decoded through the value factory registry (`docs/mapping.md`, "Value
//! factories, abstract valuetypes and ValueBase").

use std::any::Any;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use corbina_cdr::value::{ValueInput, ValueOutput, ValueStart};
use corbina_cdr::{CdrDecode, CdrEncode, CdrReader, CdrWriter, MarshalError, Result};

use super::{ValueMember, ValueRef, ValueType};

/// The repository id of `ValueBase`, which every value is.
pub const VALUE_BASE_ID: &str = "IDL:omg.org/CORBA/ValueBase:1.0";

/// A concrete value's shared state seen without its type: what `ValueBase` holds. Implemented
/// for `Mutex<V>` of every [`ValueType`], so a `ValueRef<V>` and a `ValueBase` made from it
/// share one handle (and one identity on the wire).
pub trait ValueObject: Any + Send + Sync {
    /// The most derived type's repository id.
    fn repository_id(&self) -> &'static str;
    /// Whether the value is of type `id`: its own, a base's (concrete or abstract), or
    /// `ValueBase`.
    fn is_a(&self, id: &str) -> bool;
    /// Writes the value (or an indirection when it was written before).
    fn write_value(&self, w: &mut CdrWriter<'_>, out: &mut ValueOutput) -> Result<()>;
    /// Replaces the state with a default one, dropping the values it held: the TypeCode
    /// walker breaks the cycles of the values it built only to copy them.
    fn reset_state(&self) {}
    /// The state behind its lock, without its type.
    fn state(&self) -> &Mutex<dyn Any + Send>;
    /// How the value is seen as its concrete base of type id `base` (an `Upcast<Base>`).
    fn base_view(&self, base: std::any::TypeId) -> Option<&'static (dyn Any + Send + Sync)>;
}

impl<T: ValueType> ValueObject for Mutex<T> {
    fn repository_id(&self) -> &'static str {
        T::REPOSITORY_ID
    }

    fn is_a(&self, id: &str) -> bool {
        id == T::REPOSITORY_ID || id == VALUE_BASE_ID || T::BASE_IDS.contains(&id)
    }

    fn write_value(&self, w: &mut CdrWriter<'_>, out: &mut ValueOutput) -> Result<()> {
        super::write_locked(self, w, out)
    }

    fn state(&self) -> &Mutex<dyn Any + Send> {
        self
    }

    fn base_view(&self, base: std::any::TypeId) -> Option<&'static (dyn Any + Send + Sync)> {
        super::BaseView::find(T::BASE_VIEWS, base)
    }

    fn reset_state(&self) {
        // Dropped after the lock is released: the old state may lead back to this value.
        let old = std::mem::take(&mut *super::lock(self));
        drop(old);
    }
}

/// What [`ValueInput`] holds for a value read by the typed or the polymorphic readers, so that
/// an indirection to it resolves whichever reader meets it.
pub(crate) type Registered = Arc<dyn ValueObject>;

/// IDL `ValueBase`: null, or a value of any concrete type, shared by everyone holding it.
///
/// Made from a [`ValueRef`] (`ValueBase::from(r)`, sharing its handle) and turned back into
/// one with [`ValueBase::downcast`]. Decoding picks the concrete type by the repository id on
/// the wire through the value factory registry ([`register_value_factory`]); equality and
/// hashing are by identity, as for [`ValueRef`].
#[derive(Clone, Default)]
pub struct ValueBase(Option<Arc<dyn ValueObject>>);

impl Drop for ValueBase {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            drop_object(h);
        }
    }
}

/// Drops a handle to a value: as for `ValueRef`, the last handle's state drops through a
/// queue. Held by this handle alone (no other strong or weak one to clone from), it is the
/// last.
pub(crate) fn drop_object(h: Arc<dyn ValueObject>) {
    if Arc::strong_count(&h) == 1 && Arc::weak_count(&h) == 0 {
        super::depth::drop_last(h);
    }
}

impl ValueBase {
    /// The null value.
    pub const fn null() -> Self {
        ValueBase(None)
    }

    /// Whether this is the null value.
    pub fn is_null(&self) -> bool {
        self.0.is_none()
    }

    /// The most derived type's repository id, unless null.
    pub fn repository_id(&self) -> Option<&'static str> {
        self.0.as_ref().map(|v| v.repository_id())
    }

    /// Whether the value is of type `id` (false for null).
    pub fn is_a(&self, id: &str) -> bool {
        self.0.as_ref().is_some_and(|v| v.is_a(id))
    }

    /// The value as a `ValueRef<T>` sharing the same handle, if it is a `T` or of a type
    /// derived from `T` (null gives a null `ValueRef`).
    pub fn downcast<T: ValueType>(&self) -> Option<ValueRef<T>> {
        match &self.0 {
            None => Some(ValueRef::null()),
            Some(v) => super::view(v),
        }
    }

    /// The handle, taken out (`None` for null).
    pub(crate) fn into_object(mut self) -> Option<Arc<dyn ValueObject>> {
        self.0.take()
    }

    /// The shared handle, unless null.
    pub fn handle(&self) -> Option<&Arc<dyn ValueObject>> {
        self.0.as_ref()
    }

    /// Whether both are the same value (or both null).
    pub fn ptr_eq(&self, other: &Self) -> bool {
        self.identity() == other.identity()
    }

    fn identity(&self) -> usize {
        self.0
            .as_ref()
            .map_or(0, |a| Arc::as_ptr(a) as *const () as usize)
    }

    /// Reads a value of any type (`formal`: the repository id it must be, checked after it is
    /// built). `known` are factories tried after the registry (the generator's default
    /// factories for the concrete types derived from an abstract valuetype).
    pub fn read_as(
        r: &mut CdrReader<'_>,
        input: &mut ValueInput,
        formal: &str,
        known: &[KnownValue],
    ) -> Result<Self> {
        let at = r.position();
        let v = match input.read_value(r)? {
            ValueStart::Null => return Ok(ValueBase(None)),
            ValueStart::Indirection { target } => resolve(input, target, at)?,
            ValueStart::Value(h) => {
                let ids: Vec<&str> = if h.chunked {
                    h.repository_ids.iter().collect()
                } else {
                    h.repository_ids.most_derived().into_iter().collect()
                };
                let mut found = None;
                for id in &ids {
                    if let Some(f) = lookup_value_factory(id) {
                        // An application's factory may read state without `read_default`.
                        let v = super::depth::nested(|| f.read_value(r, input, h.position))?;
                        found = Some(v);
                        break;
                    }
                    if let Some(k) = known.iter().find(|k| k.repository_id == *id) {
                        found = Some((k.read)(r, input, h.position)?);
                        break;
                    }
                }
                let Some(mut v) = found else {
                    return Err(MarshalError::InvalidValue {
                        offset: h.position,
                        reason: if h.repository_ids.most_derived().is_none() {
                            "value without a repository id where the formal type is abstract or ValueBase"
                        } else {
                            "no value factory registered for the value's repository id or a truncatable base"
                        },
                    });
                };
                input.end_value(r)?;
                v.0.take().ok_or(MarshalError::InvalidValue {
                    offset: h.position,
                    reason: "value factory returned a null value",
                })?
            }
        };
        if !v.is_a(formal) {
            return Err(MarshalError::InvalidValue {
                offset: at,
                reason: "value is not of the formal parameter's abstract type",
            });
        }
        Ok(ValueBase(Some(v)))
    }
}

fn resolve(input: &ValueInput, target: usize, at: usize) -> Result<Arc<dyn ValueObject>> {
    input
        .resolve(target, at)?
        .downcast::<Registered>()
        .map(|v| (*v).clone())
        .map_err(|_| MarshalError::InvalidValue {
            offset: at,
            reason: "indirection to a value of another type",
        })
}

/// A concrete type the generator knows derives from an abstract valuetype: its default
/// factory, used when the registry has none for its id.
#[derive(Clone, Copy)]
pub struct KnownValue {
    /// The concrete type's repository id.
    pub repository_id: &'static str,
    /// Reads its state ([`DefaultFactory`]'s).
    pub read: fn(&mut CdrReader<'_>, &mut ValueInput, usize) -> Result<ValueBase>,
}

impl KnownValue {
    /// The default factory of `T`.
    pub const fn of<T: ValueType>() -> Self {
        KnownValue {
            repository_id: T::REPOSITORY_ID,
            read: read_default::<T>,
        }
    }
}

impl<T: ValueType> From<ValueRef<T>> for ValueBase {
    fn from(v: ValueRef<T>) -> Self {
        ValueBase(v.object())
    }
}

impl PartialEq for ValueBase {
    fn eq(&self, other: &Self) -> bool {
        self.ptr_eq(other)
    }
}

impl Eq for ValueBase {}

impl Hash for ValueBase {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.identity().hash(h)
    }
}

impl std::fmt::Debug for ValueBase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            None => write!(f, "ValueBase(null)"),
            Some(v) => write!(f, "ValueBase({}, {:p})", v.repository_id(), Arc::as_ptr(v)),
        }
    }
}

impl ValueMember for ValueBase {
    const IS_VALUE: bool = true;
    fn write_member<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        match &self.0 {
            None => out.write_null(w),
            Some(v) => v.write_value(w, out),
        }
    }

    fn read_member(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        Self::read_as(r, input, VALUE_BASE_ID, &[])
    }
}

impl CdrEncode for ValueBase {
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<()> {
        self.write_member(w, &mut ValueOutput::new())
    }
}

impl<'a> CdrDecode<'a> for ValueBase {
    const MIN_WIRE_SIZE: usize = 4;

    fn decode(r: &mut CdrReader<'a>) -> Result<Self> {
        Self::read_member(r, &mut ValueInput::new())
    }
}

/// Creates values of one type from the wire (CORBA `ValueFactory`): the registry maps a
/// repository id to one, and a value received where the formal type is `ValueBase` or an
/// abstract valuetype is built by the factory registered for its id.
pub trait ValueFactory: Send + Sync + 'static {
    /// Reads the state of the value whose header (tag at `position`) was just read. The value
    /// must be registered with `input` (see [`ValueInput::register`]) before nested members are
    /// read, so a cycle back to it resolves: [`read_default`] does both. The caller ends the
    /// value, skipping state the factory's type does not know (truncation).
    fn read_value(
        &self,
        r: &mut CdrReader<'_>,
        input: &mut ValueInput,
        position: usize,
    ) -> Result<ValueBase>;
}

/// The factory for a generated value type: a default state, then the state from the wire.
pub struct DefaultFactory<T>(std::marker::PhantomData<fn() -> T>);

impl<T: ValueType> DefaultFactory<T> {
    /// The factory (register it as `Arc::new(DefaultFactory::<V>::new())`).
    pub fn new() -> Self {
        DefaultFactory(std::marker::PhantomData)
    }
}

impl<T: ValueType> Default for DefaultFactory<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: ValueType> ValueFactory for DefaultFactory<T> {
    fn read_value(
        &self,
        r: &mut CdrReader<'_>,
        input: &mut ValueInput,
        position: usize,
    ) -> Result<ValueBase> {
        read_default::<T>(r, input, position)
    }
}

/// Reads `T`'s state for the value whose tag is at `position` (not ending it).
pub fn read_default<T: ValueType>(
    r: &mut CdrReader<'_>,
    input: &mut ValueInput,
    position: usize,
) -> Result<ValueBase> {
    super::read_state_at::<T>(r, input, position).map(ValueBase::from)
}

type Registry = HashMap<String, Arc<dyn ValueFactory>>;

fn registry() -> &'static RwLock<Registry> {
    static REGISTRY: std::sync::OnceLock<RwLock<Registry>> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

/// Registers `factory` for values of repository id `id`, returning the one it replaces.
/// The registry is the process's, shared by its ORBs (decoding has no ORB at hand);
/// `Orb::register_value_factory` is the same call.
pub fn register_value_factory(
    id: &str,
    factory: Arc<dyn ValueFactory>,
) -> Option<Arc<dyn ValueFactory>> {
    registry()
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(id.to_owned(), factory)
}

/// Removes the factory registered for `id`, returning it.
pub fn unregister_value_factory(id: &str) -> Option<Arc<dyn ValueFactory>> {
    registry()
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(id)
}

/// The factory registered for `id`.
pub fn lookup_value_factory(id: &str) -> Option<Arc<dyn ValueFactory>> {
    registry()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(id)
        .cloned()
}
