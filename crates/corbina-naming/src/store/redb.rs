//! The redb back-end: the naming graph on disk, in a [redb](https://docs.rs/redb)
//! database (`naming.redb` in the data directory).
//!
//! Three tables:
//!
//! - `contexts`: context id (`u64`) → `()`-like marker; id 0 is the root context;
//! - `bindings`: `ctx id (8 bytes BE) ‖ id length (4 bytes BE) ‖ id ‖ kind` →
//!   `type (0 object, 1 context) ‖ local (0/1) ‖ local context id (8 bytes BE) ‖ IOR
//!   encapsulation`. Keys sort by context, so a context's bindings are one range scan;
//! - `meta`: `next_context_id`, `next_lease_id`;
//! - `leases`: lease id → (TTL, deadline), both in ms, the deadline since the Unix epoch
//!   (so it holds across restarts); `leased`: binding key → the lease it was bound under.
//!   The service sweeps expired leases' bindings a few times a second ([`Backend::sweep`]).
//!
//! Every change runs in one write transaction committed with redb's default durability
//! (`Durability::Immediate`: the commit returns after the data and the new root are synced
//! to disk), and the servant replies only after the commit returns: an acknowledged
//! `bind`/`unbind` survives a `kill -9` or a power cut. Readers use MVCC snapshots and never
//! wait for writers.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ::redb::{Database, ReadableTable, ReadableTableMetadata, TableDefinition};

use super::{binding_key, component_of, Abort, Backend, Bound, StoreError, Txn, View, ROOT};
use crate::cos_naming::NameComponent;

const CONTEXTS: TableDefinition<u64, u8> = TableDefinition::new("contexts");
const BINDINGS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("bindings");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const LEASES: TableDefinition<u64, (u64, u64)> = TableDefinition::new("leases");
const LEASED: TableDefinition<&[u8], u64> = TableDefinition::new("leased");
const NEXT_ID: &str = "next_context_id";
const NEXT_LEASE: &str = "next_lease_id";

/// Milliseconds since the Unix epoch.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Whether `lease` exists and has not expired.
fn lease_alive(t: &impl ReadableTable<u64, (u64, u64)>, lease: u64) -> Result<bool, StoreError> {
    Ok(t.get(lease)
        .map_err(StoreError::failed)?
        .is_some_and(|v| v.value().1 >= now_ms()))
}

fn exists_in(t: &impl ReadableTable<u64, u8>, ctx: u64) -> Result<bool, StoreError> {
    Ok(t.get(ctx).map_err(StoreError::failed)?.is_some())
}

fn get_in(
    t: &impl ReadableTable<&'static [u8], &'static [u8]>,
    ctx: u64,
    c: &NameComponent,
) -> Result<Option<Bound>, StoreError> {
    match t
        .get(binding_key(ctx, c).as_slice())
        .map_err(StoreError::failed)?
    {
        Some(v) => Ok(Some(Bound::decode(v.value())?)),
        None => Ok(None),
    }
}

fn list_in(
    t: &impl ReadableTable<&'static [u8], &'static [u8]>,
    ctx: u64,
) -> Result<Vec<(NameComponent, Bound)>, StoreError> {
    let start = ctx.to_be_bytes();
    let mut out = Vec::new();
    let range = match ctx.checked_add(1) {
        Some(end) => t.range::<&[u8]>(&start[..]..&end.to_be_bytes()[..]),
        None => t.range::<&[u8]>(&start[..]..),
    };
    for item in range.map_err(StoreError::failed)? {
        let (k, v) = item.map_err(StoreError::failed)?;
        out.push((component_of(k.value())?, Bound::decode(v.value())?));
    }
    Ok(out)
}

/// A consistent read-only snapshot.
struct Snapshot {
    contexts: ::redb::ReadOnlyTable<u64, u8>,
    bindings: ::redb::ReadOnlyTable<&'static [u8], &'static [u8]>,
}

/// [`View`] over a type's `contexts` and `bindings` tables.
macro_rules! view_over_tables {
    ($t:ty) => {
        impl View for $t {
            fn context_exists(&self, ctx: u64) -> Result<bool, StoreError> {
                exists_in(&self.contexts, ctx)
            }
            fn get(&self, ctx: u64, c: &NameComponent) -> Result<Option<Bound>, StoreError> {
                get_in(&self.bindings, ctx, c)
            }
            fn list(&self, ctx: u64) -> Result<Vec<(NameComponent, Bound)>, StoreError> {
                list_in(&self.bindings, ctx)
            }
        }
    };
}

view_over_tables!(Snapshot);

/// An open write transaction; dropped without committing, it aborts.
struct Writer<'t> {
    contexts: ::redb::Table<'t, u64, u8>,
    bindings: ::redb::Table<'t, &'static [u8], &'static [u8]>,
    meta: ::redb::Table<'t, &'static str, u64>,
    leases: ::redb::Table<'t, u64, (u64, u64)>,
    leased: ::redb::Table<'t, &'static [u8], u64>,
}

view_over_tables!(Writer<'_>);

impl Txn for Writer<'_> {
    fn put(&mut self, ctx: u64, c: &NameComponent, b: &Bound) -> Result<(), StoreError> {
        let key = binding_key(ctx, c);
        self.bindings
            .insert(key.as_slice(), b.encode().as_slice())
            .map_err(StoreError::failed)?;
        self.leased
            .remove(key.as_slice())
            .map_err(StoreError::failed)?;
        Ok(())
    }

    fn put_leased(
        &mut self,
        ctx: u64,
        c: &NameComponent,
        b: &Bound,
        lease: u64,
    ) -> Result<(), StoreError> {
        if !lease_alive(&self.leases, lease)? {
            return Err(StoreError::UnknownLease(lease));
        }
        let key = binding_key(ctx, c);
        self.bindings
            .insert(key.as_slice(), b.encode().as_slice())
            .map_err(StoreError::failed)?;
        self.leased
            .insert(key.as_slice(), lease)
            .map_err(StoreError::failed)?;
        Ok(())
    }

    fn remove(&mut self, ctx: u64, c: &NameComponent) -> Result<bool, StoreError> {
        let key = binding_key(ctx, c);
        self.leased
            .remove(key.as_slice())
            .map_err(StoreError::failed)?;
        Ok(self
            .bindings
            .remove(key.as_slice())
            .map_err(StoreError::failed)?
            .is_some())
    }

    fn is_empty(&self, ctx: u64) -> Result<bool, StoreError> {
        let start = ctx.to_be_bytes();
        let mut range = self
            .bindings
            .range::<&[u8]>(&start[..]..)
            .map_err(StoreError::failed)?;
        match range.next() {
            None => Ok(true),
            Some(item) => {
                let (k, _) = item.map_err(StoreError::failed)?;
                Ok(!k.value().starts_with(&start))
            }
        }
    }

    fn new_context(&mut self) -> Result<u64, StoreError> {
        let id = self
            .meta
            .get(NEXT_ID)
            .map_err(StoreError::failed)?
            .map(|v| v.value())
            .unwrap_or(ROOT + 1);
        self.meta
            .insert(NEXT_ID, id + 1)
            .map_err(StoreError::failed)?;
        self.contexts.insert(id, 0).map_err(StoreError::failed)?;
        Ok(id)
    }

    fn remove_context(&mut self, ctx: u64) -> Result<(), StoreError> {
        self.contexts.remove(ctx).map_err(StoreError::failed)?;
        Ok(())
    }
}

/// The redb database.
pub struct RedbStore {
    db: Database,
    path: PathBuf,
}

impl RedbStore {
    /// Opens (or creates) `dir/naming.redb`, with the root context.
    pub fn open(dir: &Path) -> Result<RedbStore, StoreError> {
        std::fs::create_dir_all(dir).map_err(StoreError::failed)?;
        let path = dir.join("naming.redb");
        let db = Database::create(&path).map_err(StoreError::failed)?;
        let txn = db.begin_write().map_err(StoreError::failed)?;
        {
            let mut contexts = txn.open_table(CONTEXTS).map_err(StoreError::failed)?;
            txn.open_table(BINDINGS).map_err(StoreError::failed)?;
            txn.open_table(META).map_err(StoreError::failed)?;
            txn.open_table(LEASES).map_err(StoreError::failed)?;
            txn.open_table(LEASED).map_err(StoreError::failed)?;
            if !exists_in(&contexts, ROOT)? {
                contexts.insert(ROOT, 0).map_err(StoreError::failed)?;
            }
        }
        txn.commit().map_err(StoreError::failed)?;
        let store = RedbStore { db, path };
        Ok(store)
    }
}

impl RedbStore {
    /// Runs `f` in one write transaction, committed (durably) if it returns `Ok`.
    fn transact<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&mut Writer<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let txn = self.db.begin_write().map_err(StoreError::failed)?;
        let result = {
            let mut w = Writer {
                contexts: txn.open_table(CONTEXTS).map_err(StoreError::failed)?,
                bindings: txn.open_table(BINDINGS).map_err(StoreError::failed)?,
                meta: txn.open_table(META).map_err(StoreError::failed)?,
                leases: txn.open_table(LEASES).map_err(StoreError::failed)?,
                leased: txn.open_table(LEASED).map_err(StoreError::failed)?,
            };
            f(&mut w)
        };
        match result {
            Ok(v) => {
                txn.commit().map_err(StoreError::failed)?;
                Ok(v)
            }
            Err(e) => {
                txn.abort().map_err(StoreError::failed)?;
                Err(e)
            }
        }
    }

    /// Ends `ids` (and their bindings) in `w`.
    fn end_leases(w: &mut Writer<'_>, ids: &[u64]) -> Result<usize, StoreError> {
        if ids.is_empty() {
            return Ok(0);
        }
        let mut gone = Vec::new();
        for item in w.leased.iter().map_err(StoreError::failed)? {
            let (k, v) = item.map_err(StoreError::failed)?;
            if ids.contains(&v.value()) {
                gone.push(k.value().to_vec());
            }
        }
        for k in &gone {
            w.bindings
                .remove(k.as_slice())
                .map_err(StoreError::failed)?;
            w.leased.remove(k.as_slice()).map_err(StoreError::failed)?;
        }
        for id in ids {
            w.leases.remove(*id).map_err(StoreError::failed)?;
        }
        Ok(gone.len())
    }
}

impl Backend for RedbStore {
    fn read(&self) -> Result<Box<dyn View + '_>, StoreError> {
        let txn = self.db.begin_read().map_err(StoreError::failed)?;
        Ok(Box::new(Snapshot {
            contexts: txn.open_table(CONTEXTS).map_err(StoreError::failed)?,
            bindings: txn.open_table(BINDINGS).map_err(StoreError::failed)?,
        }))
    }

    fn write(
        &self,
        f: &mut dyn FnMut(&mut dyn Txn) -> Result<(), Abort>,
    ) -> Result<(), StoreError> {
        match self.transact(|w| f(w)) {
            Ok(()) | Err(Abort::Op) => Ok(()),
            Err(Abort::Store(s)) => Err(s),
        }
    }

    fn counts(&self) -> Result<(u64, u64), StoreError> {
        let txn = self.db.begin_read().map_err(StoreError::failed)?;
        let b = txn.open_table(BINDINGS).map_err(StoreError::failed)?;
        let c = txn.open_table(CONTEXTS).map_err(StoreError::failed)?;
        Ok((
            b.len().map_err(StoreError::failed)?,
            c.len().map_err(StoreError::failed)?,
        ))
    }

    fn describe(&self) -> String {
        format!("redb {}", self.path.display())
    }

    fn grant(&self, ttl: Duration) -> Result<u64, StoreError> {
        let ttl = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        self.transact(|w| {
            let id = w
                .meta
                .get(NEXT_LEASE)
                .map_err(StoreError::failed)?
                .map_or(1, |v| v.value());
            w.meta
                .insert(NEXT_LEASE, id + 1)
                .map_err(StoreError::failed)?;
            w.leases
                .insert(id, (ttl, now_ms().saturating_add(ttl)))
                .map_err(StoreError::failed)?;
            Ok(id)
        })
    }

    fn keep_alive(&self, lease: u64) -> Result<(), StoreError> {
        self.transact(|w| {
            let ttl = match w.leases.get(lease).map_err(StoreError::failed)? {
                Some(v) if v.value().1 >= now_ms() => v.value().0,
                _ => return Err(StoreError::UnknownLease(lease)),
            };
            w.leases
                .insert(lease, (ttl, now_ms().saturating_add(ttl)))
                .map_err(StoreError::failed)?;
            Ok(())
        })
    }

    fn revoke(&self, lease: u64) -> Result<(), StoreError> {
        self.transact(|w| RedbStore::end_leases(w, &[lease]).map(drop))
    }

    fn sweep(&self) -> Result<usize, StoreError> {
        // A read first: the common sweep finds nothing and writes nothing.
        let now = now_ms();
        let txn = self.db.begin_read().map_err(StoreError::failed)?;
        let leases = txn.open_table(LEASES).map_err(StoreError::failed)?;
        let mut any = false;
        for item in leases.iter().map_err(StoreError::failed)? {
            let (_, v) = item.map_err(StoreError::failed)?;
            any |= v.value().1 < now;
        }
        if !any {
            return Ok(0);
        }
        self.transact(|w| {
            let mut ids = Vec::new();
            let now = now_ms();
            for item in w.leases.iter().map_err(StoreError::failed)? {
                let (k, v) = item.map_err(StoreError::failed)?;
                if v.value().1 < now {
                    ids.push(k.value());
                }
            }
            RedbStore::end_leases(w, &ids)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cos_naming::BindingType;
    use crate::store::{Store, WriteError};

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
            let s = Store::new(Box::new(RedbStore::open(&dir).unwrap()));
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
        let s = Store::new(Box::new(RedbStore::open(&dir).unwrap()));
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
