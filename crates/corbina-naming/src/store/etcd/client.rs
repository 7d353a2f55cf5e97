//! [`EtcdStore`]: the naming graph in etcd (see the parent module for the design).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock, RwLockReadGuard};
use std::time::{Duration, Instant};

use etcd_client::{
    Client, Compare, CompareOp, ConnectOptions, EventType, GetOptions, PutOptions, TxnOp,
    WatchOptions,
};

use super::super::{binding_key, component_of, Abort, Backend, Bound, StoreError, Txn, View, ROOT};
use super::EtcdConfig;
use crate::cos_naming::NameComponent;

/// The key layout under the prefix.
struct Keys {
    root: Vec<u8>,
}

impl Keys {
    fn with(&self, tail: &[u8]) -> Vec<u8> {
        let mut k = self.root.clone();
        k.extend_from_slice(tail);
        k
    }
    fn context(&self, ctx: u64) -> Vec<u8> {
        let mut k = self.with(b"c/");
        k.extend_from_slice(&ctx.to_be_bytes());
        k
    }
    fn contexts(&self) -> Vec<u8> {
        self.with(b"c/")
    }
    fn bindings(&self) -> Vec<u8> {
        self.with(b"b/")
    }
    fn bindings_of(&self, ctx: u64) -> Vec<u8> {
        let mut k = self.bindings();
        k.extend_from_slice(&ctx.to_be_bytes());
        k
    }
    fn binding(&self, ctx: u64, c: &NameComponent) -> Vec<u8> {
        let mut k = self.bindings();
        k.extend_from_slice(&binding_key(ctx, c));
        k
    }
    fn next_id(&self) -> Vec<u8> {
        self.with(b"m/next")
    }
}

/// The in-memory copy of the prefix: key → (value, mod_revision), as of `rev`.
#[derive(Default)]
struct Cache {
    rev: i64,
    kv: BTreeMap<Vec<u8>, (Vec<u8>, i64)>,
}

impl Cache {
    fn prefixed<'a>(&'a self, prefix: &'a [u8]) -> impl Iterator<Item = (&'a [u8], &'a [u8])> {
        self.kv
            .range::<[u8], _>((
                std::ops::Bound::Included(prefix),
                std::ops::Bound::Unbounded,
            ))
            .take_while(move |(k, _)| k.starts_with(prefix))
            .map(|(k, (v, _))| (k.as_slice(), v.as_slice()))
    }
}

/// Raw key-value reads, from which [`View`] follows.
trait Kv {
    fn keys(&self) -> &Keys;
    fn value(&self, key: &[u8]) -> Option<Vec<u8>>;
    /// Every (key, value) under `prefix`, in key order.
    fn range(&self, prefix: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)>;
}

fn kv_list(kv: &impl Kv, ctx: u64) -> Result<Vec<(NameComponent, Bound)>, StoreError> {
    let strip = kv.keys().bindings().len();
    kv.range(&kv.keys().bindings_of(ctx))
        .into_iter()
        .map(|(k, v)| Ok((component_of(&k[strip..])?, Bound::decode(&v)?)))
        .collect()
}

macro_rules! view_from_kv {
    ($t:ty) => {
        impl View for $t {
            fn context_exists(&self, ctx: u64) -> Result<bool, StoreError> {
                Ok(self.value(&self.keys().context(ctx)).is_some())
            }
            fn get(&self, ctx: u64, c: &NameComponent) -> Result<Option<Bound>, StoreError> {
                self.value(&self.keys().binding(ctx, c))
                    .map(|v| Bound::decode(&v))
                    .transpose()
            }
            fn list(&self, ctx: u64) -> Result<Vec<(NameComponent, Bound)>, StoreError> {
                kv_list(self, ctx)
            }
        }
    };
}

/// A snapshot: the copy, read-locked.
struct Snapshot<'a> {
    keys: &'a Keys,
    cache: RwLockReadGuard<'a, Cache>,
}

impl Kv for Snapshot<'_> {
    fn keys(&self) -> &Keys {
        self.keys
    }
    fn value(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.cache.kv.get(key).map(|(v, _)| v.clone())
    }
    fn range(&self, prefix: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.cache
            .prefixed(prefix)
            .map(|(k, v)| (k.to_vec(), v.to_vec()))
            .collect()
    }
}

view_from_kv!(Snapshot<'_>);

/// A transaction being built: reads (recorded for the commit's compares) over the copy
/// with the transaction's own writes on top.
struct Pending<'a> {
    keys: &'a Keys,
    cache: &'a Cache,
    /// Key → the mod_revision it was read at (0: absent).
    reads: RefCell<BTreeMap<Vec<u8>, i64>>,
    /// Prefixes scanned: nothing under them may change before the commit.
    ranges: RefCell<BTreeSet<Vec<u8>>>,
    /// Key → new value (`None`: delete).
    writes: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// Keys written under a lease, and the lease.
    leased: BTreeMap<Vec<u8>, i64>,
}

impl Kv for Pending<'_> {
    fn keys(&self) -> &Keys {
        self.keys
    }
    fn value(&self, key: &[u8]) -> Option<Vec<u8>> {
        if let Some(w) = self.writes.get(key) {
            return w.clone();
        }
        let found = self.cache.kv.get(key);
        self.reads
            .borrow_mut()
            .entry(key.to_vec())
            .or_insert(found.map_or(0, |(_, rev)| *rev));
        found.map(|(v, _)| v.clone())
    }
    fn range(&self, prefix: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.ranges.borrow_mut().insert(prefix.to_vec());
        let mut merged: BTreeMap<Vec<u8>, Vec<u8>> = self
            .cache
            .prefixed(prefix)
            .map(|(k, v)| (k.to_vec(), v.to_vec()))
            .collect();
        for (k, w) in self.writes.iter().filter(|(k, _)| k.starts_with(prefix)) {
            match w {
                Some(v) => merged.insert(k.clone(), v.clone()),
                None => merged.remove(k),
            };
        }
        merged.into_iter().collect()
    }
}

view_from_kv!(Pending<'_>);

impl Txn for Pending<'_> {
    fn put(&mut self, ctx: u64, c: &NameComponent, b: &Bound) -> Result<(), StoreError> {
        let key = self.keys.binding(ctx, c);
        self.leased.remove(&key);
        self.writes.insert(key, Some(b.encode()));
        Ok(())
    }

    fn put_leased(
        &mut self,
        ctx: u64,
        c: &NameComponent,
        b: &Bound,
        lease: u64,
    ) -> Result<(), StoreError> {
        let key = self.keys.binding(ctx, c);
        let id = i64::try_from(lease).map_err(|_| StoreError::UnknownLease(lease))?;
        self.leased.insert(key.clone(), id);
        self.writes.insert(key, Some(b.encode()));
        Ok(())
    }

    fn remove(&mut self, ctx: u64, c: &NameComponent) -> Result<bool, StoreError> {
        let key = self.keys.binding(ctx, c);
        let existed = self.value(&key).is_some();
        self.writes.insert(key, None);
        Ok(existed)
    }

    fn is_empty(&self, ctx: u64) -> Result<bool, StoreError> {
        Ok(self.range(&self.keys.bindings_of(ctx)).is_empty())
    }

    fn new_context(&mut self) -> Result<u64, StoreError> {
        let key = self.keys.next_id();
        let id = match self.value(&key) {
            Some(v) => u64::from_be_bytes(
                v.as_slice()
                    .try_into()
                    .map_err(|_| StoreError::Failed("malformed next context id".into()))?,
            ),
            None => ROOT + 1,
        };
        self.writes
            .insert(key, Some((id + 1).to_be_bytes().to_vec()));
        self.writes.insert(self.keys.context(id), Some(Vec::new()));
        Ok(id)
    }

    fn remove_context(&mut self, ctx: u64) -> Result<(), StoreError> {
        self.writes.insert(self.keys.context(ctx), None);
        Ok(())
    }
}

/// What the store and its watch task share.
struct Shared {
    keys: Keys,
    cache: RwLock<Cache>,
    /// The copy's revision, for waiters.
    rev: Mutex<i64>,
    advanced: Condvar,
    stop: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn read(&self) -> RwLockReadGuard<'_, Cache> {
        self.cache.read().unwrap_or_else(|e| e.into_inner())
    }

    fn publish(&self, rev: i64) {
        let mut r = lock(&self.rev);
        if rev > *r {
            *r = rev;
        }
        self.advanced.notify_all();
    }

    /// Waits until the copy has reached `rev`, at most `timeout`; whether it has.
    fn wait_for(&self, rev: i64, timeout: Duration) -> bool {
        let r = lock(&self.rev);
        let (r, _) = self
            .advanced
            .wait_timeout_while(r, timeout, |r| *r < rev)
            .unwrap_or_else(|e| e.into_inner());
        *r >= rev
    }

    /// Replaces the copy with everything under the prefix as of one revision.
    async fn reload(&self, client: &mut Client) -> Result<(), etcd_client::Error> {
        let resp = client
            .get(
                self.keys.root.clone(),
                Some(GetOptions::new().with_prefix()),
            )
            .await?;
        let rev = resp.header().map_or(0, |h| h.revision());
        let kv = resp
            .kvs()
            .iter()
            .map(|kv| (kv.key().to_vec(), (kv.value().to_vec(), kv.mod_revision())))
            .collect();
        *self.cache.write().unwrap_or_else(|e| e.into_inner()) = Cache { rev, kv };
        self.publish(rev);
        Ok(())
    }

    /// Follows the prefix from the copy's revision until the stream ends or fails.
    async fn follow(&self, client: &mut Client) -> Result<(), etcd_client::Error> {
        let from = self.read().rev + 1;
        let options = WatchOptions::new().with_prefix().with_start_revision(from);
        let mut stream = client.watch(self.keys.root.clone(), Some(options)).await?;
        while let Some(resp) = stream.message().await? {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            if resp.compact_revision() > 0 || resp.canceled() {
                // History is gone: start again from a full copy.
                return self.reload(client).await;
            }
            let mut rev = 0;
            {
                let mut cache = self.cache.write().unwrap_or_else(|e| e.into_inner());
                for ev in resp.events() {
                    let Some(kv) = ev.kv() else { continue };
                    match ev.event_type() {
                        EventType::Put => {
                            cache.kv.insert(
                                kv.key().to_vec(),
                                (kv.value().to_vec(), kv.mod_revision()),
                            );
                        }
                        EventType::Delete => {
                            cache.kv.remove(kv.key());
                        }
                    }
                    rev = rev.max(kv.mod_revision());
                }
                if rev > cache.rev {
                    cache.rev = rev;
                }
            }
            if rev > 0 {
                self.publish(rev);
            }
        }
        Ok(())
    }
}

async fn watch_loop(shared: Arc<Shared>, members: Arc<Members>) {
    // Retried at once after a watch that ran a while; backing off to 2 s while etcd stays
    // away (no leader, unreachable), with one log line per attempt.
    let mut delay = Duration::from_millis(50);
    while !shared.stop.load(Ordering::Relaxed) {
        let start = Instant::now();
        let r = shared.follow(&mut members.client()).await;
        delay = if start.elapsed() > Duration::from_secs(5) {
            Duration::from_millis(100)
        } else {
            (delay * 2).min(Duration::from_secs(2))
        };
        if let Err(e) = r {
            eprintln!("corbina-names: etcd watch: {e}; re-establishing in {delay:?}");
            members.rotate();
        }
        tokio::time::sleep(delay).await;
    }
}

/// The store on etcd.
pub struct EtcdStore {
    shared: Arc<Shared>,
    members: Arc<Members>,
    config: EtcdConfig,
    runtime: Option<tokio::runtime::Runtime>,
}

/// Whether a call failed before its request reached etcd's log: no connection to the
/// member could be made, or the member has no leader (`require_leader`). Only then is it
/// sent to another member (a transaction that may have been proposed is not).
fn not_sent(e: &etcd_client::Error) -> bool {
    match e {
        etcd_client::Error::GRpcStatus(s) => {
            s.code() == tonic::Code::Unavailable
                && (s.message().contains("connect error") || s.message().contains("no leader"))
        }
        _ => false,
    }
}

/// One etcd client per member, used in turn: the member that answered last first, the
/// next one after a call that was [`not_sent`]. (One client over every member would let
/// gRPC's balancer choose, and it keeps choosing a killed member: failing at once, it looks
/// the least loaded.)
struct Members {
    clients: Vec<Client>,
    current: AtomicUsize,
}

impl Members {
    /// Runs `f` on the current member's client, moving on to the next member while the
    /// call is not sent (pausing 20 ms after each round); the caller bounds it in time.
    async fn run<T, F, Fut>(&self, mut f: F) -> Result<T, etcd_client::Error>
    where
        F: FnMut(Client) -> Fut,
        Fut: std::future::Future<Output = Result<T, etcd_client::Error>>,
    {
        let n = self.clients.len();
        for tried in 1.. {
            let i = self.current.load(Ordering::Relaxed) % n;
            match f(self.clients[i].clone()).await {
                Err(e) if not_sent(&e) => {
                    let _ = self.current.compare_exchange(
                        i,
                        (i + 1) % n,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    );
                    if tried % n == 0 {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
                r => return r,
            }
        }
        unreachable!("the loop returns")
    }

    /// The current member's client (the watch's).
    fn client(&self) -> Client {
        self.clients[self.current.load(Ordering::Relaxed) % self.clients.len()].clone()
    }

    /// After the watch on the current member failed: the next member.
    fn rotate(&self) {
        let _ = self
            .current
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |i| {
                Some((i + 1) % self.clients.len())
            });
    }
}

fn unavailable(config: &EtcdConfig, what: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable(format!(
        "etcd at {} (down, or without quorum?): {what}",
        config.hosts()
    ))
}

impl EtcdStore {
    /// Connects, creates the root context if it is missing, loads the copy and starts the
    /// watch that keeps it current. Fails within the timeout, clearly, when etcd cannot be
    /// reached or has no quorum.
    pub fn connect(config: &EtcdConfig) -> Result<EtcdStore, StoreError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("corbina-names-etcd")
            .enable_all()
            .build()
            .map_err(StoreError::failed)?;
        let keys = Keys {
            root: format!("{}/", config.prefix).into_bytes(),
        };
        let options = ConnectOptions::new()
            .with_connect_timeout(config.timeout)
            .with_timeout(config.timeout)
            // Not more often than etcd's --grpc-keepalive-min-time (5 s by default): it
            // answers faster pings with GOAWAY, breaking the watch. A killed member is
            // noticed sooner anyway: its connections close.
            .with_keep_alive(Duration::from_secs(10), Duration::from_secs(3))
            .with_require_leader(true);
        let shared = Arc::new(Shared {
            keys,
            cache: RwLock::new(Cache::default()),
            rev: Mutex::new(0),
            advanced: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let root_key = shared.keys.context(ROOT);
        let setup = async {
            let mut clients = Vec::new();
            for e in &config.endpoints {
                // Lazy: a member that is down now is connected to when it is back.
                clients.push(Client::connect([e], Some(options.clone())).await?);
            }
            let members = Members {
                clients,
                current: AtomicUsize::new(0),
            };
            let create_root = etcd_client::Txn::new()
                .when([Compare::version(root_key.clone(), CompareOp::Equal, 0)])
                .and_then([TxnOp::put(root_key, Vec::new(), None)]);
            members
                .run(|mut c| {
                    let t = create_root.clone();
                    async move { c.txn(t).await }
                })
                .await?;
            members
                .run(|mut c| {
                    let shared = &shared;
                    async move { shared.reload(&mut c).await }
                })
                .await?;
            Ok::<_, etcd_client::Error>(members)
        };
        // The timer is made inside the runtime: `timeout` needs its time driver.
        let members =
            match runtime.block_on(async { tokio::time::timeout(config.timeout, setup).await }) {
                Ok(Ok(m)) => Arc::new(m),
                Ok(Err(e)) => return Err(unavailable(config, e)),
                Err(_) => return Err(unavailable(config, "no answer in time")),
            };
        runtime.spawn(watch_loop(Arc::clone(&shared), Arc::clone(&members)));
        Ok(EtcdStore {
            shared,
            members,
            config: config.clone(),
            runtime: Some(runtime),
        })
    }

    fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        match &self.runtime {
            Some(rt) => rt.block_on(f),
            None => unreachable!("the runtime lives as long as the store"),
        }
    }

    /// Commits `writes` if nothing in `reads` and `ranges` changed after revision `rev`;
    /// the commit's revision and whether it succeeded.
    fn commit(&self, pending: Committable, timeout: Duration) -> Result<(bool, i64), StoreError> {
        let mut compares = Vec::new();
        for (key, rev) in pending.reads {
            compares.push(if rev == 0 {
                Compare::version(key, CompareOp::Equal, 0)
            } else {
                Compare::mod_revision(key, CompareOp::Equal, rev)
            });
        }
        for prefix in pending.ranges {
            compares.push(
                Compare::mod_revision(prefix, CompareOp::Less, pending.rev + 1).with_prefix(),
            );
        }
        let lease = pending.leased.values().next().copied();
        let ops: Vec<TxnOp> = pending
            .writes
            .into_iter()
            .map(|(k, v)| match v {
                Some(v) => {
                    let options = pending
                        .leased
                        .get(&k)
                        .map(|l| PutOptions::new().with_lease(*l));
                    TxnOp::put(k, v, options)
                }
                None => TxnOp::delete(k, None),
            })
            .collect();
        let txn = etcd_client::Txn::new().when(compares).and_then(ops);
        let attempts = self.members.run(|mut c| {
            let t = txn.clone();
            async move { c.txn(t).await }
        });
        match self.call(timeout, attempts) {
            Ok(resp) => Ok((resp.succeeded(), resp.header().map_or(0, |h| h.revision()))),
            Err(StoreError::Unavailable(e)) if e.contains("lease not found") => Err(
                StoreError::UnknownLease(lease.map_or(0, i64::cast_unsigned)),
            ),
            Err(e) => Err(e),
        }
    }

    /// Runs one etcd call, bounded by `timeout`.
    fn call<T>(
        &self,
        timeout: Duration,
        f: impl std::future::Future<Output = Result<T, etcd_client::Error>>,
    ) -> Result<T, StoreError> {
        match self.block_on(async { tokio::time::timeout(timeout, f).await }) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(unavailable(&self.config, e)),
            Err(_) => Err(unavailable(&self.config, "no answer in time")),
        }
    }
}

/// A transaction's reads and writes, detached from the copy's lock.
struct Committable {
    rev: i64,
    reads: BTreeMap<Vec<u8>, i64>,
    ranges: BTreeSet<Vec<u8>>,
    writes: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    leased: BTreeMap<Vec<u8>, i64>,
}

impl Drop for EtcdStore {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl Backend for EtcdStore {
    fn read(&self) -> Result<Box<dyn View + '_>, StoreError> {
        Ok(Box::new(Snapshot {
            keys: &self.shared.keys,
            cache: self.shared.read(),
        }))
    }

    fn write(
        &self,
        f: &mut dyn FnMut(&mut dyn Txn) -> Result<(), Abort>,
    ) -> Result<(), StoreError> {
        let deadline = Instant::now() + self.config.timeout;
        loop {
            let pending = {
                let cache = self.shared.read();
                let mut p = Pending {
                    keys: &self.shared.keys,
                    cache: &cache,
                    reads: RefCell::default(),
                    ranges: RefCell::default(),
                    writes: BTreeMap::new(),
                    leased: BTreeMap::new(),
                };
                match f(&mut p) {
                    Ok(()) => {}
                    Err(Abort::Op) => return Ok(()),
                    Err(Abort::Store(e)) => return Err(e),
                }
                Committable {
                    rev: cache.rev,
                    reads: p.reads.into_inner(),
                    ranges: p.ranges.into_inner(),
                    writes: p.writes,
                    leased: p.leased,
                }
            };
            if pending.writes.is_empty() {
                return Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let seen = pending.rev;
            let (ok, rev) = self.commit(pending, left)?;
            let left = deadline.saturating_duration_since(Instant::now());
            if ok {
                // Read-your-own-writes on this replica. Committed either way: a watch that
                // lags only delays the reply, up to the timeout.
                self.shared.wait_for(rev, left);
                return Ok(());
            }
            // Another writer changed a key under the prefix after `seen` (every compared
            // key is under it): rerun once the copy has moved past `seen`. Not up to the
            // failed commit's revision: writes elsewhere in etcd move that one too.
            self.shared
                .wait_for(seen + 1, left.min(Duration::from_millis(500)));
            if Instant::now() >= deadline {
                return Err(unavailable(
                    &self.config,
                    "the transaction kept conflicting with other writers",
                ));
            }
        }
    }

    fn counts(&self) -> Result<(u64, u64), StoreError> {
        let cache = self.shared.read();
        let count = |p: &[u8]| cache.prefixed(p).count() as u64;
        Ok((
            count(&self.shared.keys.bindings()),
            count(&self.shared.keys.contexts()),
        ))
    }

    fn describe(&self) -> String {
        format!("etcd://{}/{}", self.config.hosts(), self.config.prefix)
    }

    fn grant(&self, ttl: Duration) -> Result<u64, StoreError> {
        // etcd leases count whole seconds.
        let secs = i64::try_from(ttl.as_millis().div_ceil(1000).max(1)).unwrap_or(i64::MAX);
        let grant = self
            .members
            .run(|mut c| async move { c.lease_grant(secs, None).await });
        let resp = self.call(self.config.timeout, grant)?;
        Ok(resp.id().cast_unsigned())
    }

    fn keep_alive(&self, lease: u64) -> Result<(), StoreError> {
        let id = lease.cast_signed();
        let kept = self.call(
            self.config.timeout,
            self.members.run(|mut c| async move {
                let (mut keeper, mut stream) = c.lease_keep_alive(id).await?;
                keeper.keep_alive().await?;
                Ok(stream.message().await?.map_or(0, |r| r.ttl()))
            }),
        );
        match kept {
            Ok(ttl) if ttl > 0 => Ok(()),
            Ok(_) => Err(StoreError::UnknownLease(lease)),
            Err(e) => {
                // The keep-alive stream of an ended lease fails: ask whether that is why
                // (TTL -1) or etcd is away (then the first error stands).
                let left = self.call(
                    self.config.timeout,
                    self.members
                        .run(|mut c| async move { c.lease_time_to_live(id, None).await }),
                );
                match left {
                    Ok(r) if r.ttl() <= 0 => Err(StoreError::UnknownLease(lease)),
                    _ => Err(e),
                }
            }
        }
    }

    fn revoke(&self, lease: u64) -> Result<(), StoreError> {
        let id = lease.cast_signed();
        let revoke = self
            .members
            .run(|mut c| async move { c.lease_revoke(id).await });
        match self.call(self.config.timeout, revoke) {
            Err(StoreError::Unavailable(e)) if e.contains("lease not found") => Ok(()),
            r => r.map(drop),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cos_naming::BindingType;

    fn nc(id: &str) -> NameComponent {
        NameComponent {
            id: id.into(),
            kind: String::new(),
        }
    }

    fn bound(ior: u8) -> Bound {
        Bound {
            binding_type: BindingType::Nobject,
            local: None,
            ior: vec![ior],
        }
    }

    /// A transaction over the copy: reads see its own writes, and every key read (with its
    /// revision, 0 when absent) and range scanned is recorded for the commit's compares.
    #[test]
    fn a_transaction_records_what_it_read_and_overlays_what_it_wrote() {
        let keys = Keys {
            root: b"p/".to_vec(),
        };
        let mut cache = Cache {
            rev: 9,
            ..Cache::default()
        };
        cache.kv.insert(keys.context(ROOT), (Vec::new(), 5));
        cache
            .kv
            .insert(keys.binding(ROOT, &nc("a")), (bound(1).encode(), 7));
        // Another context's binding: never part of the root's list.
        cache
            .kv
            .insert(keys.binding(ROOT + 1, &nc("z")), (bound(3).encode(), 8));
        let mut t = Pending {
            keys: &keys,
            cache: &cache,
            reads: RefCell::default(),
            ranges: RefCell::default(),
            writes: BTreeMap::new(),
            leased: BTreeMap::new(),
        };
        assert!(t.context_exists(ROOT).unwrap());
        assert_eq!(t.get(ROOT, &nc("a")).unwrap(), Some(bound(1)));
        assert_eq!(t.get(ROOT, &nc("b")).unwrap(), None);
        t.put(ROOT, &nc("b"), &bound(2)).unwrap();
        assert_eq!(t.get(ROOT, &nc("b")).unwrap(), Some(bound(2)));
        assert!(t.remove(ROOT, &nc("a")).unwrap());
        let listed: Vec<_> = t.list(ROOT).unwrap().into_iter().map(|(c, _)| c).collect();
        assert_eq!(listed, vec![nc("b")]);
        assert!(!t.is_empty(ROOT).unwrap());
        assert_eq!(t.new_context().unwrap(), ROOT + 1);
        assert_eq!(t.new_context().unwrap(), ROOT + 2);
        t.put_leased(ROOT, &nc("c"), &bound(4), 77).unwrap();
        t.put(ROOT, &nc("c"), &bound(5)).unwrap();

        let reads = t.reads.into_inner();
        assert_eq!(reads.get(&keys.context(ROOT)), Some(&5));
        assert_eq!(reads.get(&keys.binding(ROOT, &nc("a"))), Some(&7));
        assert_eq!(reads.get(&keys.binding(ROOT, &nc("b"))), Some(&0));
        assert_eq!(reads.get(&keys.next_id()), Some(&0));
        assert!(t.ranges.into_inner().contains(&keys.bindings_of(ROOT)));
        assert_eq!(t.writes.get(&keys.binding(ROOT, &nc("a"))), Some(&None));
        assert_eq!(
            t.writes.get(&keys.next_id()),
            Some(&Some((ROOT + 3).to_be_bytes().to_vec()))
        );
        // A plain put after a leased one takes the key out of the lease.
        assert!(t.leased.is_empty());
    }
}
