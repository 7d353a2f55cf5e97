//! The naming graph on disk, in a [redb](https://docs.rs/redb) database.
//!
//! Three tables:
//!
//! - `contexts`: context id (`u64`) → `()`-like marker; id 0 is the root context;
//! - `bindings`: `ctx id (8 bytes BE) ‖ id length (4 bytes BE) ‖ id ‖ kind` →
//!   `type (0 object, 1 context) ‖ local (0/1) ‖ local context id (8 bytes BE) ‖ IOR
//!   encapsulation`. Keys sort by context, so a context's bindings are one range scan;
//! - `meta`: `next_context_id`.
//!
//! Every change runs in one write transaction committed with redb's default durability
//! (`Durability::Immediate`: the commit returns after the data and the new root are synced
//! to disk), and the servant replies only after the commit returns: an acknowledged
//! `bind`/`unbind` survives a `kill -9` or a power cut. Readers use MVCC snapshots and never
//! wait for writers.

use std::path::Path;

use redb::{Database, ReadableTable, ReadableTableMetadata, TableDefinition};

use crate::cos_naming::{BindingType, NameComponent};

const CONTEXTS: TableDefinition<u64, u8> = TableDefinition::new("contexts");
const BINDINGS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("bindings");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const NEXT_ID: &str = "next_context_id";

/// The root context's id.
pub const ROOT: u64 = 0;

/// A store failure (I/O, corruption); the service reports it as PERSIST_STORE.
#[derive(Debug, thiserror::Error)]
#[error("naming store: {0}")]
pub struct StoreError(String);

impl StoreError {
    fn from<E: std::fmt::Display>(e: E) -> Self {
        StoreError(e.to_string())
    }
}

impl From<StoreError> for corbina::SystemException {
    fn from(_: StoreError) -> Self {
        corbina::SystemException::new(
            corbina::SystemExceptionKind::PersistStore,
            corbina::error::minor::PERSIST_STORE_FAILED,
        )
        .completed(corbina::CompletionStatus::No)
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
    fn encode(&self) -> Vec<u8> {
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

    fn decode(b: &[u8]) -> Result<Bound, StoreError> {
        let bad = || StoreError("malformed binding record".into());
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

fn binding_key(ctx: u64, c: &NameComponent) -> Vec<u8> {
    let mut k = Vec::with_capacity(12 + c.id.len() + c.kind.len());
    k.extend_from_slice(&ctx.to_be_bytes());
    // Names longer than 4 GiB cannot arrive: messages are far smaller.
    k.extend_from_slice(&u32::try_from(c.id.len()).unwrap_or(u32::MAX).to_be_bytes());
    k.extend_from_slice(c.id.as_bytes());
    k.extend_from_slice(c.kind.as_bytes());
    k
}

fn component_of(key: &[u8]) -> Result<NameComponent, StoreError> {
    let bad = || StoreError("malformed binding key".into());
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
}

fn exists_in(t: &impl ReadableTable<u64, u8>, ctx: u64) -> Result<bool, StoreError> {
    Ok(t.get(ctx).map_err(StoreError::from)?.is_some())
}

fn get_in(
    t: &impl ReadableTable<&'static [u8], &'static [u8]>,
    ctx: u64,
    c: &NameComponent,
) -> Result<Option<Bound>, StoreError> {
    match t
        .get(binding_key(ctx, c).as_slice())
        .map_err(StoreError::from)?
    {
        Some(v) => Ok(Some(Bound::decode(v.value())?)),
        None => Ok(None),
    }
}

/// A consistent read-only snapshot.
pub struct Snapshot {
    contexts: redb::ReadOnlyTable<u64, u8>,
    bindings: redb::ReadOnlyTable<&'static [u8], &'static [u8]>,
}

impl View for Snapshot {
    fn context_exists(&self, ctx: u64) -> Result<bool, StoreError> {
        exists_in(&self.contexts, ctx)
    }
    fn get(&self, ctx: u64, c: &NameComponent) -> Result<Option<Bound>, StoreError> {
        get_in(&self.bindings, ctx, c)
    }
}

impl Snapshot {
    /// Every binding of a context, in key order.
    pub fn list(&self, ctx: u64) -> Result<Vec<(NameComponent, Bound)>, StoreError> {
        let start = ctx.to_be_bytes();
        let mut out = Vec::new();
        let range = match ctx.checked_add(1) {
            Some(end) => self
                .bindings
                .range::<&[u8]>(&start[..]..&end.to_be_bytes()[..]),
            None => self.bindings.range::<&[u8]>(&start[..]..),
        };
        for item in range.map_err(StoreError::from)? {
            let (k, v) = item.map_err(StoreError::from)?;
            out.push((component_of(k.value())?, Bound::decode(v.value())?));
        }
        Ok(out)
    }
}

/// An open write transaction; dropped without [`Store::write`] returning `Ok`, it aborts.
pub struct Writer<'t> {
    contexts: redb::Table<'t, u64, u8>,
    bindings: redb::Table<'t, &'static [u8], &'static [u8]>,
    meta: redb::Table<'t, &'static str, u64>,
}

impl View for Writer<'_> {
    fn context_exists(&self, ctx: u64) -> Result<bool, StoreError> {
        exists_in(&self.contexts, ctx)
    }
    fn get(&self, ctx: u64, c: &NameComponent) -> Result<Option<Bound>, StoreError> {
        get_in(&self.bindings, ctx, c)
    }
}

impl Writer<'_> {
    /// Binds (or rebinds) one component.
    pub fn put(&mut self, ctx: u64, c: &NameComponent, b: &Bound) -> Result<(), StoreError> {
        self.bindings
            .insert(binding_key(ctx, c).as_slice(), b.encode().as_slice())
            .map_err(StoreError::from)?;
        Ok(())
    }

    /// Removes one component's binding; returns whether there was one.
    pub fn remove(&mut self, ctx: u64, c: &NameComponent) -> Result<bool, StoreError> {
        Ok(self
            .bindings
            .remove(binding_key(ctx, c).as_slice())
            .map_err(StoreError::from)?
            .is_some())
    }

    /// Whether a context has no bindings.
    pub fn is_empty(&self, ctx: u64) -> Result<bool, StoreError> {
        let start = ctx.to_be_bytes();
        let mut range = self
            .bindings
            .range::<&[u8]>(&start[..]..)
            .map_err(StoreError::from)?;
        match range.next() {
            None => Ok(true),
            Some(item) => {
                let (k, _) = item.map_err(StoreError::from)?;
                Ok(!k.value().starts_with(&start))
            }
        }
    }

    /// Creates a context with a fresh id (ids are never reused).
    pub fn new_context(&mut self) -> Result<u64, StoreError> {
        let id = self
            .meta
            .get(NEXT_ID)
            .map_err(StoreError::from)?
            .map(|v| v.value())
            .unwrap_or(ROOT + 1);
        self.meta
            .insert(NEXT_ID, id + 1)
            .map_err(StoreError::from)?;
        self.contexts.insert(id, 0).map_err(StoreError::from)?;
        Ok(id)
    }

    /// Forgets a context (the caller checked it is empty).
    pub fn remove_context(&mut self, ctx: u64) -> Result<(), StoreError> {
        self.contexts.remove(ctx).map_err(StoreError::from)?;
        Ok(())
    }
}

/// The database.
pub struct Store {
    db: Database,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
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

impl Store {
    /// Opens (or creates) `dir/naming.redb`, with the root context.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        std::fs::create_dir_all(dir).map_err(StoreError::from)?;
        let db = Database::create(dir.join("naming.redb")).map_err(StoreError::from)?;
        let store = Store { db };
        store
            .write(|w| -> Result<(), WriteError<()>> {
                if !w.context_exists(ROOT)? {
                    w.contexts.insert(ROOT, 0).map_err(StoreError::from)?;
                }
                Ok(())
            })
            .map_err(|e| match e {
                WriteError::Store(e) => e,
                WriteError::Op(()) => StoreError("cannot create the root context".into()),
            })?;
        Ok(store)
    }

    /// A read-only snapshot.
    pub fn read(&self) -> Result<Snapshot, StoreError> {
        let txn = self.db.begin_read().map_err(StoreError::from)?;
        Ok(Snapshot {
            contexts: txn.open_table(CONTEXTS).map_err(StoreError::from)?,
            bindings: txn.open_table(BINDINGS).map_err(StoreError::from)?,
        })
    }

    /// Runs `f` in a write transaction and commits durably if it returns `Ok` (returning
    /// only once the commit is on disk); aborts otherwise.
    pub fn write<T, E>(
        &self,
        f: impl FnOnce(&mut Writer<'_>) -> Result<T, WriteError<E>>,
    ) -> Result<T, WriteError<E>> {
        let txn = self.db.begin_write().map_err(StoreError::from)?;
        let result = {
            let mut w = Writer {
                contexts: txn.open_table(CONTEXTS).map_err(StoreError::from)?,
                bindings: txn.open_table(BINDINGS).map_err(StoreError::from)?,
                meta: txn.open_table(META).map_err(StoreError::from)?,
            };
            f(&mut w)
        };
        match result {
            Ok(v) => {
                txn.commit().map_err(StoreError::from)?;
                Ok(v)
            }
            Err(e) => {
                txn.abort().map_err(StoreError::from)?;
                Err(e)
            }
        }
    }

    /// How many bindings and contexts there are (for tests and logs).
    pub fn counts(&self) -> Result<(u64, u64), StoreError> {
        let s = self.read()?;
        Ok((
            s.bindings.len().map_err(StoreError::from)?,
            s.contexts.len().map_err(StoreError::from)?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nc(id: &str, kind: &str) -> NameComponent {
        NameComponent {
            id: id.into(),
            kind: kind.into(),
        }
    }

    #[test]
    fn bindings_survive_reopening_and_abort_writes_nothing() {
        let dir = std::env::temp_dir().join(format!("corbina-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let b = Bound {
            binding_type: BindingType::Nobject,
            local: None,
            ior: vec![1, 2, 3],
        };
        let ctx;
        {
            let s = Store::open(&dir).unwrap();
            ctx = s
                .write(|w| -> Result<u64, WriteError<()>> {
                    let c = w.new_context()?;
                    w.put(c, &nc("a", "k"), &b)?;
                    w.put(ROOT, &nc("a", ""), &b)?;
                    Ok(c)
                })
                .ok()
                .unwrap();
            let r = s.write(|w| -> Result<(), WriteError<&str>> {
                w.put(ROOT, &nc("never", ""), &b)?;
                Err(WriteError::Op("no"))
            });
            assert!(matches!(r, Err(WriteError::Op("no"))));
        }
        let s = Store::open(&dir).unwrap();
        let snap = s.read().unwrap();
        assert!(snap.context_exists(ctx).unwrap());
        assert_eq!(snap.get(ctx, &nc("a", "k")).unwrap(), Some(b.clone()));
        assert_eq!(snap.get(ROOT, &nc("never", "")).unwrap(), None);
        // Each context lists only its own bindings (key prefixes do not leak).
        let root: Vec<_> = snap.list(ROOT).unwrap().into_iter().map(|x| x.0).collect();
        assert_eq!(root, vec![nc("a", "")]);
        assert_eq!(snap.list(ctx).unwrap().len(), 1);
        let empty = s
            .write(|w| -> Result<bool, WriteError<()>> { Ok(w.is_empty(ctx + 1)?) })
            .ok()
            .unwrap();
        assert!(empty);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
