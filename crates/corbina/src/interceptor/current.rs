//! `PortableInterceptor::Current` (`PICurrent`): slots of `Any`s allocated by
//! initializers, with a thread scope (what the application and the servant see) and a
//! request scope (what interceptors see through the request info).
//!
//! Copies, as the specification has them: a client request's scope is a copy of the
//! calling thread's slots when the call is made; a server request's scope starts empty,
//! is copied to the thread's slots (the servant's) after `receive_request`, and the
//! thread's slots are copied back when the servant returns, for the `send_*` points. The
//! thread's own slots are restored after the request.

use std::cell::RefCell;

use crate::any::Any;

/// A slot's index (`PortableInterceptor::SlotId`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SlotId(pub u32);

/// `PortableInterceptor::InvalidSlot`: no such slot was allocated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("PICurrent slot {0} was not allocated")]
pub struct InvalidSlot(pub u32);

/// One scope's slots.
#[derive(Debug, Clone, Default)]
pub(crate) struct Slots {
    values: Vec<Any>,
}

impl Slots {
    pub(crate) fn new(count: u32) -> Slots {
        // Not `vec![Any::default(); n]`: that makes (and drops) an `Any` even for no slots.
        Slots {
            values: (0..count).map(|_| Any::default()).collect(),
        }
    }

    pub(crate) fn get(&self, id: SlotId) -> Result<Any, InvalidSlot> {
        self.values
            .get(id.0 as usize)
            .cloned()
            .ok_or(InvalidSlot(id.0))
    }

    pub(crate) fn set(&mut self, id: SlotId, value: Any) -> Result<(), InvalidSlot> {
        let slot = self
            .values
            .get_mut(id.0 as usize)
            .ok_or(InvalidSlot(id.0))?;
        *slot = value;
        Ok(())
    }

    /// A copy of the calling thread's slots, `count` of them.
    pub(crate) fn of_thread(count: u32) -> Slots {
        if count == 0 {
            return Slots::default();
        }
        THREAD.with(|t| {
            let t = t.borrow();
            let mut s = Slots::new(count);
            for (d, v) in s.values.iter_mut().zip(&t.values) {
                *d = v.clone();
            }
            s
        })
    }

    /// Makes these the thread's slots; returns the thread's previous ones.
    pub(crate) fn enter(self) -> Slots {
        THREAD.with(|t| std::mem::replace(&mut *t.borrow_mut(), self))
    }
}

thread_local! {
    static THREAD: RefCell<Slots> = RefCell::new(Slots::default());
}

/// `PICurrent` (`resolve_initial_references("PICurrent")`): the calling thread's slots.
#[derive(Debug, Clone, Copy)]
pub struct PiCurrent {
    pub(crate) slots: u32,
}

impl PiCurrent {
    /// The thread's value of slot `id` (an empty `Any` if never set).
    pub fn get_slot(&self, id: SlotId) -> Result<Any, InvalidSlot> {
        if id.0 >= self.slots {
            return Err(InvalidSlot(id.0));
        }
        THREAD.with(|t| {
            Ok(t.borrow()
                .values
                .get(id.0 as usize)
                .cloned()
                .unwrap_or_default())
        })
    }

    /// Sets the thread's slot `id`: requests this thread makes from now on carry it in
    /// their request scope.
    pub fn set_slot(&self, id: SlotId, value: Any) -> Result<(), InvalidSlot> {
        if id.0 >= self.slots {
            return Err(InvalidSlot(id.0));
        }
        THREAD.with(|t| {
            let mut t = t.borrow_mut();
            if t.values.len() < self.slots as usize {
                t.values.resize(self.slots as usize, Any::default());
            }
            t.values[id.0 as usize] = value;
        });
        Ok(())
    }
}
