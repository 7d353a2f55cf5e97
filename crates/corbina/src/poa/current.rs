//! `PortableServer::Current`: which POA, object id and servant the calling thread is
//! serving, kept in a thread-local stack (an upcall may call another collocated object).

use std::cell::RefCell;
use std::sync::Arc;

use super::manager::PoaManager;
use super::poa::PoaInner;
use super::{ObjectId, Poa, PoaError};
use crate::{ObjectRef, Servant};

pub(crate) struct Frame {
    pub(crate) poa: Poa,
    pub(crate) oid: FrameOid,
    pub(crate) servant: Arc<dyn Servant>,
}

/// A frame's object id. Ids up to `INLINE` bytes (system ids, most user ids) are kept
/// inline so that entering an upcall does not allocate.
pub(crate) enum FrameOid {
    Inline {
        len: u8,
        bytes: [u8; FrameOid::INLINE],
    },
    Heap(Box<[u8]>),
}

impl FrameOid {
    const INLINE: usize = 32;

    pub(crate) fn new(oid: &[u8]) -> Self {
        if oid.len() <= Self::INLINE {
            let mut bytes = [0u8; Self::INLINE];
            bytes[..oid.len()].copy_from_slice(oid);
            FrameOid::Inline {
                len: oid.len() as u8,
                bytes,
            }
        } else {
            FrameOid::Heap(oid.into())
        }
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        match self {
            FrameOid::Inline { len, bytes } => &bytes[..usize::from(*len)],
            FrameOid::Heap(b) => b,
        }
    }

    fn to_id(&self) -> ObjectId {
        ObjectId(self.as_bytes().to_vec())
    }
}

thread_local! {
    static STACK: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

/// Pops the frame it pushed when dropped (also when the upcall panics).
pub(crate) struct CurrentGuard(());

impl Drop for CurrentGuard {
    fn drop(&mut self) {
        STACK.with(|s| {
            s.borrow_mut().pop();
        });
    }
}

/// Makes the upcall of `servant` on `oid` in `poa` the current context until the guard is
/// dropped. The frame is built inside the thread-local access, so it is written once, into
/// the stack's slot, not built and then copied in (it is on every call's path).
#[inline(always)]
pub(crate) fn enter(poa: &Poa, oid: &[u8], servant: &Arc<dyn Servant>) -> CurrentGuard {
    STACK.with(|s| {
        s.borrow_mut().push(Frame {
            poa: poa.clone(),
            oid: FrameOid::new(oid),
            servant: Arc::clone(servant),
        })
    });
    CurrentGuard(())
}

/// Whether this thread is inside an upcall of a POA that `manager` controls.
pub(crate) fn in_upcall_of_manager(manager: &PoaManager) -> bool {
    STACK.with(|s| s.borrow().iter().any(|f| f.poa.inner.manager == *manager))
}

/// Whether this thread is inside an upcall of `poa`.
pub(crate) fn in_upcall_of(poa: &Arc<PoaInner>) -> bool {
    STACK.with(|s| s.borrow().iter().any(|f| Arc::ptr_eq(&f.poa.inner, poa)))
}

/// The object id of the innermost upcall if it is on `servant` in `poa`.
pub(crate) fn current_id_for(poa: &Arc<PoaInner>, servant: &Arc<dyn Servant>) -> Option<ObjectId> {
    STACK.with(|s| {
        let s = s.borrow();
        let f = s.last()?;
        (Arc::ptr_eq(&f.poa.inner, poa)
            && super::aom::servant_addr(&f.servant) == super::aom::servant_addr(servant))
        .then(|| f.oid.to_id())
    })
}

/// Keeps the innermost upcall counted past its return (its reply is deferred); `None`
/// outside an upcall.
pub(crate) fn defer_upcall() -> Option<super::poa::DeferredCall> {
    with_top(|f| f.poa.defer_call(f.oid.as_bytes())).ok()
}

fn with_top<T>(f: impl FnOnce(&Frame) -> T) -> Result<T, PoaError> {
    STACK.with(|s| s.borrow().last().map(f).ok_or(PoaError::NoContext))
}

/// `PortableServer::Current`: the context of the upcall running on this thread. Every
/// operation raises [`PoaError::NoContext`] outside an upcall.
#[derive(Debug, Clone, Copy, Default)]
pub struct Current;

impl Current {
    /// `get_POA`: the POA dispatching the current request.
    pub fn get_poa() -> Result<Poa, PoaError> {
        with_top(|f| f.poa.clone())
    }

    /// `get_object_id`: the id of the target object.
    pub fn get_object_id() -> Result<ObjectId, PoaError> {
        with_top(|f| f.oid.to_id())
    }

    /// `get_servant`: the servant running the request.
    pub fn get_servant() -> Result<Arc<dyn Servant>, PoaError> {
        with_top(|f| Arc::clone(&f.servant))
    }

    /// `get_reference`: a reference to the target object.
    pub fn get_reference() -> Result<ObjectRef, PoaError> {
        let (poa, oid, servant) =
            with_top(|f| (f.poa.clone(), f.oid.to_id(), Arc::clone(&f.servant)))?;
        Ok(poa.make_reference(servant.primary_interface(), &oid.0))
    }

    /// Whether this thread is in an upcall.
    pub fn in_upcall() -> bool {
        STACK.with(|s| !s.borrow().is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::FrameOid;

    #[test]
    fn frame_oids_keep_their_bytes_inline_or_not() {
        for len in [0, 1, 31, 32, 33, 100, 1000] {
            let oid: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let f = FrameOid::new(&oid);
            assert_eq!(f.as_bytes(), &oid[..]);
            assert_eq!(f.to_id().0, oid);
            assert_eq!(matches!(f, FrameOid::Inline { .. }), len <= 32, "len {len}");
        }
    }
}
