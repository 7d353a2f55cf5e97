//! Locality-constrained objects: instances of IDL `local interface`s (CORBA 3.0 §3.8.6).
//!
//! A local interface `L` is generated as a Rust trait `L` (no proxy, stub or skeleton: a
//! local object is called directly, on the caller's thread). A reference to one is a
//! [`LocalRef<dyn L>`], nil being `None` as for every reference. The ORB holds local objects
//! type-erased, as [`LocalObject`] (e.g. [`crate::Orb::register_initial_reference`]), and hands
//! them back narrowed to any interface they implement.
//!
//! A local object never leaves its process: marshalling a non-nil one fails with `MARSHAL`,
//! and a non-nil reference received where IDL declares a local interface is refused.

use crate::cdr::{CdrReader, CdrWriter, MarshalError};
use std::any::Any;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

/// Implemented by the generated trait object type `dyn L` of each local interface `L`.
pub trait LocalInterface: Send + Sync + 'static {
    /// The interface's repository id.
    const REPOSITORY_ID: &'static str;
}

/// A non-nil reference to a local object implementing `T` (a generated `dyn L`).
///
/// References compare and hash by object identity, as `_is_equivalent` does for local
/// objects; `Deref` reaches the object's operations.
pub struct LocalRef<T: ?Sized>(Arc<T>);

impl<T: ?Sized> LocalRef<T> {
    /// A reference to `obj`.
    pub fn new(obj: Arc<T>) -> Self {
        LocalRef(obj)
    }

    /// The shared object.
    pub fn as_arc(&self) -> &Arc<T> {
        &self.0
    }

    /// The shared object.
    pub fn into_arc(self) -> Arc<T> {
        self.0
    }

    /// Whether both refer to one object (the object's address; a trait object's vtable is
    /// not part of its identity).
    pub fn is_equivalent(&self, other: &LocalRef<T>) -> bool {
        self.addr() == other.addr()
    }

    fn addr(&self) -> *const () {
        Arc::as_ptr(&self.0) as *const ()
    }
}

impl<T: ?Sized> Clone for LocalRef<T> {
    fn clone(&self) -> Self {
        LocalRef(self.0.clone())
    }
}

impl<T: ?Sized> Deref for LocalRef<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized> From<Arc<T>> for LocalRef<T> {
    fn from(obj: Arc<T>) -> Self {
        LocalRef(obj)
    }
}

impl<T: ?Sized> PartialEq for LocalRef<T> {
    fn eq(&self, other: &Self) -> bool {
        self.is_equivalent(other)
    }
}

impl<T: ?Sized> Eq for LocalRef<T> {}

impl<T: ?Sized> Hash for LocalRef<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.addr().hash(state);
    }
}

impl<T: ?Sized> fmt::Debug for LocalRef<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LocalRef({:p})", self.addr())
    }
}

/// One interface a [`LocalObject`] can be narrowed to: its repository id and the object as
/// a `LocalRef<dyn I>`, type-erased.
#[derive(Clone)]
struct View {
    repository_id: &'static str,
    object: Arc<dyn Any + Send + Sync>,
}

/// A local object of any interface, as the ORB keeps it: narrowable to its most derived
/// interface and to each base added with [`LocalObject::with_base`] (a generated local
/// interface's `to_local_object` adds them all).
#[derive(Clone)]
pub struct LocalObject {
    views: Vec<View>,
}

impl LocalObject {
    /// An object whose most derived interface is `T`.
    pub fn new<T: ?Sized + LocalInterface>(obj: LocalRef<T>) -> Self {
        LocalObject {
            views: vec![View {
                repository_id: T::REPOSITORY_ID,
                object: Arc::new(obj),
            }],
        }
    }

    /// The same object, narrowable to base interface `B` too.
    pub fn with_base<B: ?Sized + LocalInterface>(mut self, base: LocalRef<B>) -> Self {
        self.views.push(View {
            repository_id: B::REPOSITORY_ID,
            object: Arc::new(base),
        });
        self
    }

    /// The most derived interface's repository id.
    pub fn repository_id(&self) -> &'static str {
        self.views.first().map_or("", |v| v.repository_id)
    }

    /// `_is_a`: whether the object implements the interface `repository_id`.
    pub fn is_a(&self, repository_id: &str) -> bool {
        repository_id == "IDL:omg.org/CORBA/Object:1.0"
            || repository_id == "IDL:omg.org/CORBA/LocalObject:1.0"
            || self.views.iter().any(|v| v.repository_id == repository_id)
    }

    /// The object as interface `T`, if it implements it.
    pub fn narrow<T: ?Sized + LocalInterface>(&self) -> Option<LocalRef<T>> {
        self.views
            .iter()
            .filter(|v| v.repository_id == T::REPOSITORY_ID)
            .find_map(|v| v.object.downcast_ref::<LocalRef<T>>())
            .cloned()
    }
}

impl fmt::Debug for LocalObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalObject")
            .field("repository_id", &self.repository_id())
            .finish()
    }
}

/// Writes a reference declared as a local interface: nil is the nil object reference; a
/// local object cannot be marshalled (`MARSHAL`).
pub fn write_local<'x, T: ?Sized + 'x>(
    w: &mut CdrWriter<'_>,
    obj: impl Into<Option<&'x LocalRef<T>>>,
) -> crate::cdr::Result<()> {
    match obj.into() {
        None => crate::object::write_object(w, None),
        Some(_) => Err(MarshalError::InvalidValue {
            offset: w.position(),
            reason: "a local object cannot be marshalled",
        }),
    }
}

/// Reads a reference declared as a local interface: only nil can arrive.
pub fn read_local<T: ?Sized>(r: &mut CdrReader<'_>) -> crate::cdr::Result<Option<LocalRef<T>>> {
    let offset = r.position();
    match crate::object::read_object(r)? {
        None => Ok(None),
        Some(_) => Err(MarshalError::InvalidValue {
            offset,
            reason: "a remote reference where IDL declares a local interface",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdr::{ByteOrder, CdrContext};

    trait Greeter: Send + Sync + 'static {
        fn greet(&self) -> String;
    }
    impl LocalInterface for dyn Greeter {
        const REPOSITORY_ID: &'static str = "IDL:T/Greeter:1.0";
    }
    struct Hello;
    impl Greeter for Hello {
        fn greet(&self) -> String {
            "hello".into()
        }
    }

    #[test]
    fn identity_narrowing_and_marshalling() {
        let a: LocalRef<dyn Greeter> = LocalRef::new(Arc::new(Hello));
        let b: LocalRef<dyn Greeter> = LocalRef::new(Arc::new(Hello));
        assert_eq!(a, a.clone());
        assert_ne!(a, b);
        let obj = LocalObject::new(a.clone());
        assert_eq!(obj.narrow::<dyn Greeter>().unwrap().greet(), "hello");
        assert!(obj.narrow::<dyn Greeter>().unwrap().is_equivalent(&a));
        assert!(!obj.is_a("IDL:T/Other:1.0"));
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
        assert!(write_local(&mut w, Some(&a)).is_err());
        write_local::<dyn Greeter>(&mut w, None).unwrap();
        let bytes = w.into_bytes();
        let mut r = CdrReader::new(&bytes, ByteOrder::Big, CdrContext::GIOP_1_2);
        assert!(read_local::<dyn Greeter>(&mut r).unwrap().is_none());
    }
}
