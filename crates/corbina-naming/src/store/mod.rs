//! The naming graph's store: one [`Backend`] trait with two implementations.
//!
//! - [`redb`]: an embedded [redb](https://docs.rs/redb) file, the default (one
//!   daemon, one host, durable across `kill -9`);
//! - [`etcd`]: an etcd v3 cluster under a key prefix, which several daemons
//!   (replicas) share.
//!
//! Both give the service the same semantics:
//!
//! - a change is one transaction ([`Store::write`]): the closure reads and writes through a
//!   [`Txn`] and the change is committed, durably (redb's fsync, etcd's quorum write),
//!   before `write` returns, so the servant replies only after the commit;
//! - the closure's reads are checked at commit: redb serialises writers; etcd commits with
//!   compare-and-swap on the revision of every key (and range) read, and reruns the closure
//!   if another writer got there first, so "not already bound" holds when the bind lands;
//! - a [`View`] ([`Store::read`]) is one consistent snapshot: a `list`, and the iterator
//!   built from it, see one revision.

use corbina::error::minor::{PERSIST_STORE_FAILED, TRANSIENT_NAMING_STORE_UNAVAILABLE};
use corbina::{CompletionStatus, SystemException, SystemExceptionKind};

use crate::cos_naming::{BindingType, NameComponent};

pub mod etcd;
pub mod redb;

/// The root context's id.
pub const ROOT: u64 = 0;

/// A store failure.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// I/O, corruption, a malformed record: PERSIST_STORE.
    #[error("naming store: {0}")]
    Failed(String),
    /// The store cannot be reached now (etcd down, or without quorum): TRANSIENT, nothing
    /// was written.
    #[error("naming store unavailable: {0}")]
    Unavailable(String),
    /// A binding was made under a lease that has expired or never existed.
    #[error("unknown or expired lease {0}")]
    UnknownLease(u64),
}

impl StoreError {
    pub(crate) fn failed<E: std::fmt::Display>(e: E) -> Self {
        StoreError::Failed(e.to_string())
    }
}

impl From<StoreError> for SystemException {
    fn from(e: StoreError) -> Self {
        let (kind, minor) = match e {
            // UnknownLease is a user exception of the lease interface, raised before this.
            StoreError::Failed(_) | StoreError::UnknownLease(_) => {
                (SystemExceptionKind::PersistStore, PERSIST_STORE_FAILED)
            }
            StoreError::Unavailable(_) => (
                SystemExceptionKind::Transient,
                TRANSIENT_NAMING_STORE_UNAVAILABLE,
            ),
        };
        SystemException::new(kind, minor).completed(CompletionStatus::No)
    }
}

/// What a name is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    /// Object or context.
    pub binding_type: BindingType,
    /// For a context served by this naming service: its id (operations on it stay local).
    pub local: Option<u64>,
    /// The reference, as an IOR encapsulation.
    pub ior: Vec<u8>,
}

impl Bound {
    /// `type (0 object, 1 context) ‖ local (0/1) ‖ local context id (8 bytes BE) ‖ IOR`.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(10 + self.ior.len());
        v.push(match self.binding_type {
            BindingType::Nobject => 0,
            BindingType::Ncontext => 1,
        });
        v.push(u8::from(self.local.is_some()));
        v.extend_from_slice(&self.local.unwrap_or(0).to_be_bytes());
        v.extend_from_slice(&self.ior);
        v
    }

    pub(crate) fn decode(b: &[u8]) -> Result<Bound, StoreError> {
        let bad = || StoreError::Failed("malformed binding record".into());
        let (&t, rest) = b.split_first().ok_or_else(bad)?;
        let (&l, rest) = rest.split_first().ok_or_else(bad)?;
        let (id, ior) = rest.split_first_chunk::<8>().ok_or_else(bad)?;
        Ok(Bound {
            binding_type: match t {
                0 => BindingType::Nobject,
                1 => BindingType::Ncontext,
                _ => return Err(bad()),
            },
            local: (l == 1).then(|| u64::from_be_bytes(*id)),
            ior: ior.to_vec(),
        })
    }
}

/// `ctx id (8 bytes BE) ‖ id length (4 bytes BE) ‖ id ‖ kind`: a context's bindings share
/// the 8-byte prefix, so they are one range.
pub(crate) fn binding_key(ctx: u64, c: &NameComponent) -> Vec<u8> {
    let mut k = Vec::with_capacity(12 + c.id.len() + c.kind.len());
    k.extend_from_slice(&ctx.to_be_bytes());
    // Names longer than 4 GiB cannot arrive: messages are far smaller.
    k.extend_from_slice(&u32::try_from(c.id.len()).unwrap_or(u32::MAX).to_be_bytes());
    k.extend_from_slice(c.id.as_bytes());
    k.extend_from_slice(c.kind.as_bytes());
    k
}

/// The name component of a [`binding_key`].
pub(crate) fn component_of(key: &[u8]) -> Result<NameComponent, StoreError> {
    let bad = || StoreError::Failed("malformed binding key".into());
    let (_, rest) = key.split_first_chunk::<8>().ok_or_else(bad)?;
    let (len, rest) = rest.split_first_chunk::<4>().ok_or_else(bad)?;
    let (id, kind) = rest
        .split_at_checked(u32::from_be_bytes(*len) as usize)
        .ok_or_else(bad)?;
    let s = |b: &[u8]| String::from_utf8(b.to_vec()).map_err(|_| bad());
    Ok(NameComponent {
        id: s(id)?,
        kind: s(kind)?,
    })
}

/// Reads that both snapshots and write transactions answer.
pub trait View {
    /// Whether the context exists (was created and not destroyed).
    fn context_exists(&self, ctx: u64) -> Result<bool, StoreError>;
    /// The binding of one component in a context.
    fn get(&self, ctx: u64, c: &NameComponent) -> Result<Option<Bound>, StoreError>;
    /// Every binding of a context, in key order.
    fn list(&self, ctx: u64) -> Result<Vec<(NameComponent, Bound)>, StoreError>;
}

/// A write transaction: its reads see its own writes; nothing is visible to others
/// before the commit.
pub trait Txn: View {
    /// Binds (or rebinds) one component (ending any lease it was bound under).
    fn put(&mut self, ctx: u64, c: &NameComponent, b: &Bound) -> Result<(), StoreError>;
    /// Binds (or rebinds) one component under `lease`: the binding goes when the lease
    /// ends. The commit fails with [`StoreError::UnknownLease`] if the lease has ended.
    fn put_leased(
        &mut self,
        ctx: u64,
        c: &NameComponent,
        b: &Bound,
        lease: u64,
    ) -> Result<(), StoreError>;
    /// Removes one component's binding; returns whether there was one.
    fn remove(&mut self, ctx: u64, c: &NameComponent) -> Result<bool, StoreError>;
    /// Whether a context has no bindings.
    fn is_empty(&self, ctx: u64) -> Result<bool, StoreError>;
    /// Creates a context with a fresh id (ids are never reused).
    fn new_context(&mut self) -> Result<u64, StoreError>;
    /// Forgets a context (the caller checked it is empty).
    fn remove_context(&mut self, ctx: u64) -> Result<(), StoreError>;
}

/// Why a transaction's closure gave up: nothing is written.
#[derive(Debug)]
pub enum Abort {
    /// The operation's own error (kept by the caller).
    Op,
    /// The store failed.
    Store(StoreError),
}

impl From<StoreError> for Abort {
    fn from(e: StoreError) -> Self {
        Abort::Store(e)
    }
}

/// A store back-end.
pub trait Backend: Send + Sync {
    /// A consistent read-only snapshot.
    fn read(&self) -> Result<Box<dyn View + '_>, StoreError>;
    /// Runs `f` in a write transaction and commits it durably when `f` returns `Ok`
    /// (returning only once committed); writes nothing when it returns `Err(Abort::Op)`.
    /// `f` may run more than once (an optimistic back-end reruns it after a conflict).
    fn write(&self, f: &mut dyn FnMut(&mut dyn Txn) -> Result<(), Abort>)
        -> Result<(), StoreError>;
    /// How many bindings and contexts there are (for tests and logs).
    fn counts(&self) -> Result<(u64, u64), StoreError>;
    /// Where the data lives, for logs.
    fn describe(&self) -> String;
    /// A new lease of `ttl` (etcd rounds it up to whole seconds).
    fn grant(&self, ttl: std::time::Duration) -> Result<u64, StoreError>;
    /// Restarts a lease's TTL; `UnknownLease` if it has ended.
    fn keep_alive(&self, lease: u64) -> Result<(), StoreError>;
    /// Ends a lease now, with its bindings (an unknown one is ignored).
    fn revoke(&self, lease: u64) -> Result<(), StoreError>;
    /// Removes the bindings of expired leases, if the back-end does not do so itself;
    /// how many. The service calls it a few times a second.
    fn sweep(&self) -> Result<usize, StoreError> {
        Ok(0)
    }
}

/// The outcome of a write: the transaction commits (durably) only on `Ok`.
pub enum WriteError<E> {
    /// The operation's own error (a CosNaming exception): nothing is written.
    Op(E),
    /// The store failed.
    Store(StoreError),
}

impl<E> From<StoreError> for WriteError<E> {
    fn from(e: StoreError) -> Self {
        WriteError::Store(e)
    }
}

/// The store a naming service runs on.
pub struct Store {
    backend: Box<dyn Backend>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("backend", &self.backend.describe())
            .finish()
    }
}

impl Store {
    /// A store on `backend`.
    pub fn new(backend: Box<dyn Backend>) -> Store {
        Store { backend }
    }

    /// A consistent read-only snapshot.
    pub fn read(&self) -> Result<Box<dyn View + '_>, StoreError> {
        self.backend.read()
    }

    /// Runs `f` in a write transaction and commits durably if it returns `Ok` (returning
    /// only once committed); writes nothing otherwise. `f` may run more than once.
    pub fn write<T, E>(
        &self,
        mut f: impl FnMut(&mut dyn Txn) -> Result<T, WriteError<E>>,
    ) -> Result<T, WriteError<E>> {
        let mut out = None;
        self.backend.write(&mut |t| match f(t) {
            Ok(v) => {
                out = Some(Ok(v));
                Ok(())
            }
            Err(WriteError::Op(e)) => {
                out = Some(Err(e));
                Err(Abort::Op)
            }
            Err(WriteError::Store(s)) => Err(Abort::Store(s)),
        })?;
        match out {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(WriteError::Op(e)),
            None => Err(StoreError::Failed("transaction ran no operation".into()).into()),
        }
    }

    /// How many bindings and contexts there are (for tests and logs).
    pub fn counts(&self) -> Result<(u64, u64), StoreError> {
        self.backend.counts()
    }

    /// Where the data lives, for logs.
    pub fn describe(&self) -> String {
        self.backend.describe()
    }

    /// The store's leases: see [`Backend::grant`] and the methods after it.
    pub fn leases(&self) -> &dyn Backend {
        self.backend.as_ref()
    }
}
