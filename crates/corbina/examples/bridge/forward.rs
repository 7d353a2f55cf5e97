//! A DSI servant that forwards every request it receives, through the DII, to another
//! object: the classic bridge. Operation signatures come from a table of TypeCodes (no
//! generated code); values pass through as opaque [`Any`]s, never decoded into Rust types.
//!
//! The path of a value: the DSI reads each `in` argument by its TypeCode into an `Any`
//! (one copy out of the receive buffer, fixed-size runs as blocks), the `Any` moves into
//! the DII request (a reference-counted byte buffer, not copied), and the DII writes it out
//! again by the same TypeCode (blocks again). Results, `out` values and user exceptions
//! come back the same way. [`BridgeStats::interpreted`] counts the values the walker had
//! to interpret one by one on the bridge's threads; it stays a handful per call whatever
//! the size of a `sequence<BinStruct>`.
//!
//! One DII request is built per operation and reused (the seeds' lesson: rebuilding a
//! request per call halved 1996 DII throughput). A request is taken out of a per-operation
//! pool for a call and put back after it, so concurrent connections each get one.
//! Requests arriving on one connection are forwarded in order on that connection's
//! thread, so oneways reach the target in the order they were sent.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use corbina::dii::{ExceptionList, Flags, NVList, NamedValue, Request, ARG_IN, ARG_OUT};
use corbina::dsi::{DynServerRequest, DynamicImplementation};
use corbina::typecode::{interpreted_elements, TcKind};
use corbina::{DiiError, ObjectRef, SystemException, SystemExceptionKind, TypeCode};

/// One operation of the bridged interface.
#[derive(Clone, Debug)]
pub struct Signature {
    /// The operation name.
    pub op: String,
    /// The parameters in order: name, TypeCode and mode ([`ARG_IN`], `ARG_OUT`,
    /// `ARG_INOUT`).
    pub args: Vec<(String, TypeCode, Flags)>,
    /// The result's TypeCode (`tk_void` for none).
    pub result: TypeCode,
    /// The user exceptions it may raise (`tk_except` TypeCodes).
    pub exceptions: Vec<TypeCode>,
    /// A `oneway` operation.
    pub oneway: bool,
}

/// What a bridge has done, for tests and for the operator.
#[derive(Debug, Default)]
pub struct BridgeStats {
    /// Requests forwarded.
    pub forwarded: AtomicU64,
    /// DII requests built (the rest were reused).
    pub built: AtomicU64,
    /// Values the TypeCode walker interpreted one by one while forwarding (fixed-size runs
    /// moved as blocks do not count).
    pub interpreted: AtomicU64,
}

struct Operation {
    sig: Signature,
    /// The argument list the DSI reads into (TypeCodes and modes, no values).
    template: NVList,
    /// Reusable DII requests on the target.
    pool: Mutex<Vec<Request>>,
}

/// The bridge: a [`DynamicImplementation`] of `interface` forwarding to `target`.
pub struct Bridge {
    interface: &'static str,
    target: ObjectRef,
    ops: Vec<Operation>,
    index: HashMap<String, usize>,
    stats: Arc<BridgeStats>,
}

impl Bridge {
    /// A bridge for `interface` (its repository id) whose operations are `signatures`.
    pub fn new(interface: &'static str, target: ObjectRef, signatures: Vec<Signature>) -> Self {
        let mut index = HashMap::new();
        let ops = signatures
            .into_iter()
            .enumerate()
            .map(|(i, sig)| {
                index.insert(sig.op.clone(), i);
                let mut template = NVList::new();
                for (name, tc, flags) in &sig.args {
                    template.add_item(name.clone(), tc.clone(), *flags);
                }
                Operation {
                    sig,
                    template,
                    pool: Mutex::new(Vec::new()),
                }
            })
            .collect();
        Bridge {
            interface,
            target,
            ops,
            index,
            stats: Arc::default(),
        }
    }

    /// The counters, shared.
    pub fn stats(&self) -> Arc<BridgeStats> {
        self.stats.clone()
    }

    /// A DII request for `op` on the target: a pooled one, or a new one.
    fn take_request(&self, op: &Operation) -> Request {
        if let Some(r) = op.pool.lock().unwrap_or_else(PoisonError::into_inner).pop() {
            return r;
        }
        self.stats.built.fetch_add(1, Ordering::Relaxed);
        let mut exceptions = ExceptionList::new();
        for e in &op.sig.exceptions {
            exceptions.add(e);
        }
        self.target.create_request(
            None,
            &op.sig.op,
            op.template.clone(),
            NamedValue::result(&op.sig.result),
            exceptions,
        )
    }

    fn put_back(op: &Operation, mut r: Request) {
        // Drop the values (a 1 MB argument should not stay alive in the pool).
        for a in r.arguments_mut().iter_mut() {
            a.take_value();
        }
        op.pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(r);
    }

    fn forward(&self, req: &mut DynServerRequest<'_, '_, '_>) -> Result<(), SystemException> {
        let op = match self.index.get(req.operation()) {
            Some(&i) => &self.ops[i],
            None => return Err(corbina::servant::bad_operation()),
        };
        let args = req.arguments(op.template.clone())?;
        let mut dii = self.take_request(op);
        // Move the received values into the DII request: same TypeCode handles, so the
        // check is a pointer comparison, and the bytes are shared, not copied.
        for (k, a) in args.iter_mut().enumerate() {
            if a.flags() & ARG_IN != 0 {
                let v = a.take_value().ok_or_else(internal)?;
                dii.set_argument(k as u32, v)?;
            }
        }
        self.stats.forwarded.fetch_add(1, Ordering::Relaxed);
        if op.sig.oneway || !req.response_expected() {
            let sent = dii.send_oneway();
            Self::put_back(op, dii);
            return sent;
        }
        let outcome = dii.invoke();
        let answered = match outcome {
            Ok(()) => self.pass_back(req, &mut dii),
            Err(DiiError::User(e)) => req.set_exception(e),
            Err(DiiError::System(e)) => Err(e),
        };
        Self::put_back(op, dii);
        answered
    }

    /// The result and the `out`/`inout` values of a completed call, as the DSI reply.
    fn pass_back(
        &self,
        req: &mut DynServerRequest<'_, '_, '_>,
        dii: &mut Request,
    ) -> Result<(), SystemException> {
        let params = req.params().ok_or_else(internal)?;
        for (k, a) in params.iter_mut().enumerate() {
            if a.flags() & ARG_OUT != 0 {
                let v = dii
                    .arguments_mut()
                    .item_mut(k as u32)
                    .and_then(NamedValue::take_value)
                    .ok_or_else(internal)?;
                a.set_value(v)?;
            }
        }
        if !matches!(
            dii.result().type_code().unalias().kind(),
            TcKind::Void | TcKind::Null
        ) {
            req.set_result(dii.return_value().clone())?;
        }
        Ok(())
    }
}

fn internal() -> SystemException {
    SystemException::new(SystemExceptionKind::Internal, 0)
}

impl DynamicImplementation for Bridge {
    fn primary_interface(&self) -> &'static str {
        self.interface
    }

    fn invoke(&self, req: &mut DynServerRequest<'_, '_, '_>) -> Result<(), SystemException> {
        // The walker's counter is per thread; the whole forward runs on this one.
        let before = interpreted_elements();
        let r = self.forward(req);
        self.stats
            .interpreted
            .fetch_add(interpreted_elements() - before, Ordering::Relaxed);
        r
    }
}
