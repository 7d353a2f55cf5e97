//! `PortableServer::Current`: which POA, object id and servant the calling thread is
//! serving, kept in a thread-local stack (an upcall may call another collocated object).

use std::cell::RefCell;
use std::sync::Arc;

use super::manager::PoaManager;
use super::poa::PoaInner;
use super::{ObjectId, Poa, PoaError};
use crate::{ObjectRef, Servant};

/// One upcall's context: what the upcall borrows (its POA, the object id in the request's
/// key, the servant), by address. Entering an upcall is on every call's path: the frame
/// clones no `Arc` and copies no id (two atomic increments and decrements, and a 32-byte
/// copy, per call when it did).
pub(crate) struct Frame {
    poa: *const Poa,
    oid: *const [u8],
    servant: *const Arc<dyn Servant>,
}

impl Frame {
    fn poa(&self) -> &Poa {
        // SAFETY: `enter` pushed this frame from borrows that outlive its `CurrentGuard`
        // (the guard's lifetime ties it to them), and the guard pops the frame when
        // dropped, unwinding included: a frame on the stack points to live values. Tested
        // by tests/poa.rs (Current in upcalls, NoContext after) and tests/collocated.rs
        // (nested upcalls).
        #[allow(unsafe_code)]
        unsafe {
            &*self.poa
        }
    }

    fn oid(&self) -> &[u8] {
        // SAFETY: as in `Frame::poa`.
        #[allow(unsafe_code)]
        unsafe {
            &*self.oid
        }
    }

    fn servant(&self) -> &Arc<dyn Servant> {
        // SAFETY: as in `Frame::poa`.
        #[allow(unsafe_code)]
        unsafe {
            &*self.servant
        }
    }

    fn to_id(&self) -> ObjectId {
        ObjectId(self.oid().to_vec())
    }
}

thread_local! {
    static STACK: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

/// Pops the frame it pushed when dropped (also when the upcall panics). It borrows what the
/// frame points to, so the frame cannot outlive it; it is never leaked (crate-private, and
/// made only by [`enter`], whose caller drops it at the end of the upcall).
pub(crate) struct CurrentGuard<'a>(std::marker::PhantomData<&'a ()>);

impl Drop for CurrentGuard<'_> {
    fn drop(&mut self) {
        STACK.with(|s| {
            s.borrow_mut().pop();
        });
    }
}

/// Makes the upcall of `servant` on `oid` in `poa` the current context until the guard is
/// dropped.
#[inline(always)]
pub(crate) fn enter<'a>(
    poa: &'a Poa,
    oid: &'a [u8],
    servant: &'a Arc<dyn Servant>,
) -> CurrentGuard<'a> {
    STACK.with(|s| s.borrow_mut().push(Frame { poa, oid, servant }));
    CurrentGuard(std::marker::PhantomData)
}

/// Whether this thread is inside an upcall of a POA that `manager` controls.
pub(crate) fn in_upcall_of_manager(manager: &PoaManager) -> bool {
    STACK.with(|s| s.borrow().iter().any(|f| f.poa().inner.manager == *manager))
}

/// Whether this thread is inside an upcall of `poa`.
pub(crate) fn in_upcall_of(poa: &Arc<PoaInner>) -> bool {
    STACK.with(|s| s.borrow().iter().any(|f| Arc::ptr_eq(&f.poa().inner, poa)))
}

/// The object id of the innermost upcall if it is on `servant` in `poa`.
pub(crate) fn current_id_for(poa: &Arc<PoaInner>, servant: &Arc<dyn Servant>) -> Option<ObjectId> {
    STACK.with(|s| {
        let s = s.borrow();
        let f = s.last()?;
        (Arc::ptr_eq(&f.poa().inner, poa)
            && super::aom::servant_addr(f.servant()) == super::aom::servant_addr(servant))
        .then(|| f.to_id())
    })
}

/// Keeps the innermost upcall counted past its return (its reply is deferred); `None`
/// outside an upcall.
pub(crate) fn defer_upcall() -> Option<super::poa::DeferredCall> {
    with_top(|f| f.poa().defer_call(f.oid())).ok()
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
        with_top(|f| f.poa().clone())
    }

    /// `get_object_id`: the id of the target object.
    pub fn get_object_id() -> Result<ObjectId, PoaError> {
        with_top(|f| f.to_id())
    }

    /// `get_servant`: the servant running the request.
    pub fn get_servant() -> Result<Arc<dyn Servant>, PoaError> {
        with_top(|f| Arc::clone(f.servant()))
    }

    /// `get_reference`: a reference to the target object.
    pub fn get_reference() -> Result<ObjectRef, PoaError> {
        let (poa, oid, servant) =
            with_top(|f| (f.poa().clone(), f.to_id(), Arc::clone(f.servant())))?;
        Ok(poa.make_reference(servant.primary_interface(), &oid.0))
    }

    /// Whether this thread is in an upcall.
    pub fn in_upcall() -> bool {
        STACK.with(|s| !s.borrow().is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdr::CdrContext;
    use crate::giop::Ior;
    use crate::poa::tests::{servant, S};
    use crate::poa::{PoaRegistry, ReferenceFactory};
    use crate::ServantInvoker;

    struct Nil;
    impl ReferenceFactory for Nil {
        fn create_reference(&self, _: &str, key: Vec<u8>) -> ObjectRef {
            let inv = ServantInvoker::new(Arc::new(S), CdrContext::GIOP_1_2);
            ObjectRef::new(Ior::nil(), key, Arc::new(inv))
        }
    }

    fn oid() -> Vec<u8> {
        Current::get_object_id().unwrap().0
    }

    /// The frames' pointers (the unsafe reads in `Frame`) see the values of the upcall on
    /// top, nested upcalls included, and a panicking upcall's frame is gone after it.
    #[test]
    fn frames_read_the_live_upcall_nested_and_after_a_panic() {
        let reg = PoaRegistry::new(Arc::new(Nil));
        let poa = reg.root_poa();
        let (outer, inner) = (servant(), servant());
        assert!(matches!(Current::get_object_id(), Err(PoaError::NoContext)));
        {
            // Longer than a frame's id ever was inline, and a short one inside it.
            let outer_oid = vec![1u8; 40];
            let _outer = enter(&poa, &outer_oid, &outer);
            assert_eq!(oid(), outer_oid);
            {
                let inner_oid = b"inner".to_vec();
                let g = enter(&poa, &inner_oid, &inner);
                assert_eq!(oid(), inner_oid);
                assert!(Arc::ptr_eq(&Current::get_servant().unwrap(), &inner));
                drop(g);
            }
            assert_eq!(oid(), outer_oid);
            assert!(Arc::ptr_eq(&Current::get_servant().unwrap(), &outer));
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let oid = vec![9u8; 3];
                let _g = enter(&poa, &oid, &inner);
                panic!("the upcall fails");
            }));
            assert!(unwound.is_err());
            assert_eq!(oid(), outer_oid);
            assert!(Arc::ptr_eq(&Current::get_poa().unwrap().inner, &poa.inner));
        }
        assert!(!Current::in_upcall());
    }
}
