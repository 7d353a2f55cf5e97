//! Value graphs of any depth, up to the nesting limit, in any thread.
//!
//! Encoding and decoding: a value's state is read and written by generated code, which recurses
//! once per nested value (a member of a value type calls the runtime, which calls the nested
//! type's state codec). Turning every generated codec into a resumable state machine driven by
//! an explicit stack would rewrite all generated marshalling code; instead the runtime runs each
//! nested value on a stack segment allocated on the heap when little of the current one is left
//! ([`nested`], the `stacker` crate, as rustc does for deep expressions). Depth is then bounded
//! by the value nesting limit ([`corbina_cdr::value::max_value_nesting`], `-ORBmaxValueNesting`)
//! and memory, not by the thread's stack size. Only code that handles values calls it: a call
//! without values never does.
//!
//! Dropping: the last handle to a value drops its state, which drops the handles it holds, and
//! so on down a list of a million nodes. [`drop_last`] drops directly down to a small depth
//! and queues deeper values, which the outermost drop on the thread then drops one by one:
//! the stack used is bounded whatever the graph's depth.

use std::cell::{Cell, RefCell};

/// A nested value starts on a fresh segment when less than this is left of the stack: room for
/// one level of generated state code and, below a value, structs nested as deep as the reader
/// allows (`CdrReader::enter`, 512 levels).
const RED_ZONE: usize = 1 << 20;
/// The size of a stack segment (address space; only the pages used are touched).
const SEGMENT: usize = 8 << 20;

/// Runs `f`, the codec of one nested value, where at least [`RED_ZONE`] of stack is left.
#[inline]
pub(crate) fn nested<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// Drops nested inside one another run directly down to this depth; deeper ones are queued.
const DIRECT_DEPTH: u32 = 16;

/// Anything, as a box the queue can hold.
trait Deferred {}
impl<T: ?Sized> Deferred for T {}

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static QUEUE: RefCell<Vec<Box<dyn Deferred>>> = const { RefCell::new(Vec::new()) };
}

/// Restores the drop depth, on return or unwind.
struct Level(u32);

impl Drop for Level {
    fn drop(&mut self) {
        let _ = DEPTH.try_with(|d| d.set(self.0));
    }
}

/// Drops `v`, the last owner of a value's state (which may hold further values), with bounded
/// stack: beyond [`DIRECT_DEPTH`] nested drops, `v` is queued and dropped later by the
/// outermost drop of the thread.
pub(crate) fn drop_last<T: 'static>(v: T) {
    let Ok(depth) = DEPTH.try_with(Cell::get) else {
        // The thread's locals are being torn down: no queue any more.
        return drop(v);
    };
    if depth >= DIRECT_DEPTH {
        let boxed: Box<dyn Deferred> = Box::new(v);
        let _ = QUEUE.try_with(move |q| q.borrow_mut().push(boxed));
        return;
    }
    DEPTH.set(depth + 1);
    let _restore = Level(depth);
    drop(v);
    if depth == 0 {
        // The outermost drop: what deeper ones queued, each dropped at depth 1 (its own deep
        // parts queue again), so the queue holds the graph's width, not its depth.
        while let Some(next) = QUEUE.with(|q| q.borrow_mut().pop()) {
            drop(next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A list whose nodes drop through `drop_last`, as value handles do.
    struct Link(Option<Box<Node>>);
    struct Node(#[allow(dead_code)] Link);

    impl Drop for Link {
        fn drop(&mut self) {
            if let Some(n) = self.0.take() {
                drop_last(n);
            }
        }
    }

    #[test]
    fn a_million_deep_list_drops_in_a_small_stack() {
        std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(|| {
                let mut head = Link(None);
                for _ in 0..1_000_000 {
                    head = Link(Some(Box::new(Node(head))));
                }
                drop(head);
                assert_eq!(DEPTH.with(Cell::get), 0);
                assert!(QUEUE.with(|q| q.borrow().is_empty()));
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn nested_runs_deep_recursion_in_a_small_stack() {
        fn depth(n: u32) -> u32 {
            if n == 0 {
                return 0;
            }
            // A frame of some size, as generated state code has.
            let pad = std::hint::black_box([n as u8; 256]);
            nested(|| depth(n - 1)) + u32::from(pad[0] == n as u8)
        }
        let got = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(|| depth(100_000))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(got, 100_000);
    }
}
