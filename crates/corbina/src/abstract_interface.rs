//! Abstract interfaces: the runtime side of the mapping (`docs/mapping.md`, "Abstract
//! interfaces").
//!
//! An IDL `abstract interface A` is passed either as an object reference (of a concrete
//! interface deriving from `A`) or as a value (of a valuetype supporting `A`). On the wire
//! (CORBA 3.0 §15.3.7) it is a union with a boolean discriminator: TRUE and an IOR, or FALSE
//! and a value in the normal value encoding, sharing the body's indirection scope. The
//! generated type `A` wraps an [`AbstractRef`] whose object form is `A`'s stub, `AObject`.

use corbina_cdr::{CdrReader, CdrWriter, Result};

use crate::object::{read_ref, write_ref, Proxy};
use crate::valuetype::{
    KnownValue, ValueBase, ValueInput, ValueOutput, ValueRef, ValueType, VALUE_BASE_ID,
};

/// An abstract interface instance: nil, an object reference (proxy type `P`), or a value.
///
/// Equal and hashed by reference (IOR) or by value identity, as the forms it holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AbstractRef<P> {
    /// The nil reference (sent as a null value, as omniORB and JacORB do).
    Null,
    /// A non-nil object reference.
    Object(P),
    /// A non-null value of a valuetype supporting the interface.
    Value(ValueBase),
}

// By hand: a derive would require `P: Default`.
#[allow(clippy::derivable_impls)]
impl<P> Default for AbstractRef<P> {
    fn default() -> Self {
        AbstractRef::Null
    }
}

impl<P> AbstractRef<P> {
    /// Whether this is nil.
    pub fn is_null(&self) -> bool {
        matches!(self, AbstractRef::Null)
    }

    /// The object reference form.
    pub fn as_object(&self) -> Option<&P> {
        match self {
            AbstractRef::Object(p) => Some(p),
            _ => None,
        }
    }

    /// The value form.
    pub fn as_value(&self) -> Option<&ValueBase> {
        match self {
            AbstractRef::Value(v) => Some(v),
            _ => None,
        }
    }

    /// The value form as a `ValueRef<T>` sharing its handle, if it is a `T`.
    pub fn downcast_value<T: ValueType>(&self) -> Option<ValueRef<T>> {
        self.as_value()
            .and_then(|v| v.downcast::<T>())
            .filter(|v| !v.is_null())
    }
}

impl<P> From<ValueBase> for AbstractRef<P> {
    /// The value form (nil for a null value).
    fn from(v: ValueBase) -> Self {
        if v.is_null() {
            AbstractRef::Null
        } else {
            AbstractRef::Value(v)
        }
    }
}

impl<P> From<Option<P>> for AbstractRef<P> {
    /// The object form (nil for `None`).
    fn from(p: Option<P>) -> Self {
        p.map_or(AbstractRef::Null, AbstractRef::Object)
    }
}

impl<P: Proxy> AbstractRef<P> {
    /// Writes the discriminator and the form; a value shares `out` (the body's indirection
    /// scope) with the other values of the body.
    pub fn write(&self, w: &mut CdrWriter<'_>, out: &mut ValueOutput) -> Result<()> {
        match self {
            AbstractRef::Object(p) => {
                w.write_boolean(true);
                write_ref(w, Some(p))
            }
            AbstractRef::Value(v) => {
                w.write_boolean(false);
                match v.handle() {
                    Some(h) => h.write_value(w, out),
                    None => out.write_null(w),
                }
            }
            AbstractRef::Null => {
                w.write_boolean(false);
                out.write_null(w)
            }
        }
    }

    /// Reads what [`AbstractRef::write`] wrote. A value's concrete type is found in the value
    /// factory registry, then in `known` (the generator's default factories for the valuetypes
    /// of its IDL that support the interface). A value of any type is accepted, as the peer
    /// declares what it supports: its operations are reachable when its Rust type implements
    /// the interface. A discriminator other than 0 or 1 is MARSHAL.
    pub fn read(
        r: &mut CdrReader<'_>,
        input: &mut ValueInput,
        known: &[KnownValue],
    ) -> Result<Self> {
        if r.read_boolean()? {
            Ok(read_ref::<P>(r)?.into())
        } else {
            Ok(ValueBase::read_as(r, input, VALUE_BASE_ID, known)?.into())
        }
    }
}

#[cfg(test)]
mod tests;
