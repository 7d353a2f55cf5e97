//! The channels, admins and proxies on disk, in a [redb](https://docs.rs/redb) database
//! (`events.redb` in the data directory).
//!
//! Four tables:
//!
//! - `objects`: object id (`u64`, also the object's POA id, 8 bytes big-endian) → record:
//!   `kind (1 byte) ‖ channel id (8 bytes BE) ‖ connected (0/1) ‖ payload`, the payload being a
//!   channel's parameters, a proxy's connected peer (an IOR encapsulation, empty for a
//!   peer connected as nil), or a filter's constraints (CDR, [`crate::filter`]);
//! - `ins`: corbaloc object key (`EventChannel`, an `InsName`) → channel id;
//! - `meta`: `next_id`;
//! - `events`: (proxy id, sequence number) → an event a consumer proxy of a channel with
//!   `EventReliability` and `ConnectionReliability` `Persistent` has not delivered yet
//!   (`queue::Event::encode`); written when it is queued, removed when it is
//!   delivered, discarded or expired, or with its proxy. There are never more than the
//!   proxy's queue bound and the pushes in flight.
//!
//! Every change is one write transaction committed with redb's default durability
//! (`Durability::Immediate`), before the operation replies: an acknowledged
//! `obtain_*`/`connect_*`/`disconnect_*`/`destroy` survives a `kill -9`, and so does a
//! persistent event once its `push` returned. Other events are not stored (best effort).

use std::path::Path;

use redb::{Database, ReadableTable, TableDefinition};

const OBJECTS: TableDefinition<u64, &[u8]> = TableDefinition::new("objects");
const INS: TableDefinition<&str, u64> = TableDefinition::new("ins");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const EVENTS: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("events");
const NEXT_ID: &str = "next_id";
/// Ids below this are reserved: 0 is the channel factory, 1 the filter factory.
const FIRST_ID: u64 = 16;

/// A store failure (I/O, corruption); the service reports it as PERSIST_STORE.
#[derive(Debug, thiserror::Error)]
#[error("event store: {0}")]
pub struct StoreError(String);

impl StoreError {
    pub(crate) fn from<E: std::fmt::Display>(e: E) -> Self {
        StoreError(e.to_string())
    }
}

impl From<StoreError> for corbina::SystemException {
    fn from(_: StoreError) -> Self {
        corbina::SystemException::new(
            corbina::SystemExceptionKind::PersistStore,
            corbina::error::minor::PERSIST_STORE_EVENTS,
        )
        .completed(corbina::CompletionStatus::No)
    }
}

/// What an object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// An `EventChannel`.
    Channel,
    /// A channel's `ConsumerAdmin`.
    ConsumerAdmin,
    /// A channel's `SupplierAdmin`.
    SupplierAdmin,
    /// A `ProxyPushConsumer` (a push supplier's end).
    PushConsumer,
    /// A `ProxyPullConsumer` (a pull supplier's end).
    PullConsumer,
    /// A `ProxyPushSupplier` (a push consumer's end).
    PushSupplier,
    /// A `ProxyPullSupplier` (a pull consumer's end).
    PullSupplier,
    /// A `CosNotifyFilter::Filter`.
    Filter,
    /// A `CosNotifyFilter::MappingFilter`.
    MappingFilter,
    /// A `CosNotifyChannelAdmin::EventChannel` (payload: its QoS and admin properties).
    NotifyChannel,
    /// A notification `ConsumerAdmin` (payload: number, operator, QoS, filters).
    NotifyConsumerAdmin,
    /// A notification `SupplierAdmin`.
    NotifySupplierAdmin,
    /// A proxy of a notification channel (payload: its kind, event style, admin, peer, QoS
    /// and filters).
    NotifyProxy,
}

impl Kind {
    pub(crate) fn code(self) -> u8 {
        match self {
            Kind::Channel => 0,
            Kind::ConsumerAdmin => 1,
            Kind::SupplierAdmin => 2,
            Kind::PushConsumer => 3,
            Kind::PullConsumer => 4,
            Kind::PushSupplier => 5,
            Kind::PullSupplier => 6,
            Kind::Filter => 7,
            Kind::MappingFilter => 8,
            Kind::NotifyChannel => 9,
            Kind::NotifyConsumerAdmin => 10,
            Kind::NotifySupplierAdmin => 11,
            Kind::NotifyProxy => 12,
        }
    }

    pub(crate) fn from_code(c: u8) -> Option<Kind> {
        Some(match c {
            0 => Kind::Channel,
            1 => Kind::ConsumerAdmin,
            2 => Kind::SupplierAdmin,
            3 => Kind::PushConsumer,
            4 => Kind::PullConsumer,
            5 => Kind::PushSupplier,
            6 => Kind::PullSupplier,
            7 => Kind::Filter,
            8 => Kind::MappingFilter,
            9 => Kind::NotifyChannel,
            10 => Kind::NotifyConsumerAdmin,
            11 => Kind::NotifySupplierAdmin,
            12 => Kind::NotifyProxy,
            _ => return None,
        })
    }
}

/// A channel's parameters (omniEvents' factory criteria of the same names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelParams {
    /// `MaxQueueLength`: events held per consumer; beyond it the oldest is dropped.
    pub max_queue: u32,
    /// `PullRetryPeriod_ms`: how long to wait before asking a pull supplier again after
    /// `try_pull` found nothing.
    pub pull_retry_ms: u32,
    /// `MaxNumProxies`: the most proxies the channel may have at once.
    pub max_proxies: u32,
    /// `InsName`: the corbaloc object key the channel is also served under, if any.
    pub ins_name: Option<String>,
}

/// One stored object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// What it is.
    pub kind: Kind,
    /// The channel it belongs to (a channel: itself).
    pub channel: u64,
    /// A proxy: whether a peer is connected.
    pub connected: bool,
    /// A proxy: the connected peer's IOR encapsulation (empty: nil or none); a filter: its
    /// constraints.
    pub data: Vec<u8>,
    /// A channel: its parameters.
    pub params: Option<ChannelParams>,
}

impl Record {
    /// A proxy or admin record.
    pub fn object(kind: Kind, channel: u64) -> Record {
        Record {
            kind,
            channel,
            connected: false,
            data: Vec::new(),
            params: None,
        }
    }

    fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(10 + self.data.len());
        v.push(self.kind.code());
        v.extend_from_slice(&self.channel.to_be_bytes());
        v.push(u8::from(self.connected));
        match &self.params {
            Some(p) => {
                v.extend_from_slice(&p.max_queue.to_be_bytes());
                v.extend_from_slice(&p.pull_retry_ms.to_be_bytes());
                v.extend_from_slice(&p.max_proxies.to_be_bytes());
                if let Some(n) = &p.ins_name {
                    v.extend_from_slice(n.as_bytes());
                }
            }
            None => v.extend_from_slice(&self.data),
        }
        v
    }

    fn decode(b: &[u8]) -> Result<Record, StoreError> {
        let bad = || StoreError("malformed object record".into());
        let (&k, rest) = b.split_first().ok_or_else(bad)?;
        let kind = Kind::from_code(k).ok_or_else(bad)?;
        let (channel, rest) = rest.split_first_chunk::<8>().ok_or_else(bad)?;
        let (&connected, rest) = rest.split_first().ok_or_else(bad)?;
        let mut r = Record::object(kind, u64::from_be_bytes(*channel));
        r.connected = connected == 1;
        if kind == Kind::Channel {
            let (q, rest) = rest.split_first_chunk::<4>().ok_or_else(bad)?;
            let (p, rest) = rest.split_first_chunk::<4>().ok_or_else(bad)?;
            let (m, name) = rest.split_first_chunk::<4>().ok_or_else(bad)?;
            let name = std::str::from_utf8(name).map_err(|_| bad())?;
            r.params = Some(ChannelParams {
                max_queue: u32::from_be_bytes(*q),
                pull_retry_ms: u32::from_be_bytes(*p),
                max_proxies: u32::from_be_bytes(*m),
                ins_name: (!name.is_empty()).then(|| name.to_owned()),
            });
        } else {
            r.data = rest.to_vec();
        }
        Ok(r)
    }
}

/// The database.
#[derive(Debug)]
pub struct Store {
    db: Database,
}

impl Store {
    /// Opens (creating if needed) `events.redb` in `dir`.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        std::fs::create_dir_all(dir).map_err(StoreError::from)?;
        let db = Database::create(dir.join("events.redb")).map_err(StoreError::from)?;
        let tx = db.begin_write().map_err(StoreError::from)?;
        {
            tx.open_table(OBJECTS).map_err(StoreError::from)?;
            tx.open_table(INS).map_err(StoreError::from)?;
            // Events of proxies that are gone (one that queued an event while it was being
            // disconnected) go now.
            let objects = tx.open_table(OBJECTS).map_err(StoreError::from)?;
            let mut events = tx.open_table(EVENTS).map_err(StoreError::from)?;
            events
                .retain(|(proxy, _), _| matches!(objects.get(proxy), Ok(Some(_))))
                .map_err(StoreError::from)?;
            let mut meta = tx.open_table(META).map_err(StoreError::from)?;
            if meta.get(NEXT_ID).map_err(StoreError::from)?.is_none() {
                meta.insert(NEXT_ID, FIRST_ID).map_err(StoreError::from)?;
            }
        }
        tx.commit().map_err(StoreError::from)?;
        Ok(Store { db })
    }

    /// Every stored object, by id.
    pub fn objects(&self) -> Result<Vec<(u64, Record)>, StoreError> {
        let tx = self.db.begin_read().map_err(StoreError::from)?;
        let t = tx.open_table(OBJECTS).map_err(StoreError::from)?;
        let mut out = Vec::new();
        for e in t.iter().map_err(StoreError::from)? {
            let (k, v) = e.map_err(StoreError::from)?;
            out.push((k.value(), Record::decode(v.value())?));
        }
        Ok(out)
    }

    /// The channel served under the corbaloc key `name`.
    pub fn ins(&self, name: &str) -> Result<Option<u64>, StoreError> {
        let tx = self.db.begin_read().map_err(StoreError::from)?;
        let t = tx.open_table(INS).map_err(StoreError::from)?;
        Ok(t.get(name).map_err(StoreError::from)?.map(|v| v.value()))
    }

    /// Creates a channel with its two admins in one transaction: returns the channel's id
    /// (the consumer admin is `id + 1`, the supplier admin `id + 2`), or `None` when
    /// `params.ins_name` is taken.
    pub fn create_channel(&self, params: &ChannelParams) -> Result<Option<u64>, StoreError> {
        let tx = self.db.begin_write().map_err(StoreError::from)?;
        let id;
        {
            let mut ins = tx.open_table(INS).map_err(StoreError::from)?;
            if let Some(n) = &params.ins_name {
                if ins.get(n.as_str()).map_err(StoreError::from)?.is_some() {
                    return Ok(None);
                }
            }
            id = take_ids(&tx, 3)?;
            if let Some(n) = &params.ins_name {
                ins.insert(n.as_str(), id).map_err(StoreError::from)?;
            }
            let mut t = tx.open_table(OBJECTS).map_err(StoreError::from)?;
            let mut ch = Record::object(Kind::Channel, id);
            ch.params = Some(params.clone());
            t.insert(id, ch.encode().as_slice())
                .map_err(StoreError::from)?;
            for (off, kind) in [(1, Kind::ConsumerAdmin), (2, Kind::SupplierAdmin)] {
                t.insert(id + off, Record::object(kind, id).encode().as_slice())
                    .map_err(StoreError::from)?;
            }
        }
        tx.commit().map_err(StoreError::from)?;
        Ok(Some(id))
    }

    /// Creates `records.len()` objects with consecutive ids in one transaction, each
    /// belonging to the first (a notification channel and its default admins); returns the
    /// first id.
    pub fn create_group(&self, records: &[(Kind, &[u8])]) -> Result<u64, StoreError> {
        let tx = self.db.begin_write().map_err(StoreError::from)?;
        let id = take_ids(&tx, records.len() as u64)?;
        {
            let mut t = tx.open_table(OBJECTS).map_err(StoreError::from)?;
            for (off, (kind, data)) in (0u64..).zip(records) {
                let mut r = Record::object(*kind, id);
                r.data = data.to_vec();
                t.insert(id + off, r.encode().as_slice())
                    .map_err(StoreError::from)?;
            }
        }
        tx.commit().map_err(StoreError::from)?;
        Ok(id)
    }

    /// Creates an object of `kind` in `channel` holding `data`; returns its id.
    pub fn create_object(&self, kind: Kind, channel: u64, data: &[u8]) -> Result<u64, StoreError> {
        let tx = self.db.begin_write().map_err(StoreError::from)?;
        let id = take_ids(&tx, 1)?;
        {
            let mut r = Record::object(kind, channel);
            r.data = data.to_vec();
            let mut t = tx.open_table(OBJECTS).map_err(StoreError::from)?;
            t.insert(id, r.encode().as_slice())
                .map_err(StoreError::from)?;
        }
        tx.commit().map_err(StoreError::from)?;
        Ok(id)
    }

    /// Creates a proxy of `channel`; returns its id.
    pub fn create_proxy(&self, kind: Kind, channel: u64) -> Result<u64, StoreError> {
        let tx = self.db.begin_write().map_err(StoreError::from)?;
        let id = take_ids(&tx, 1)?;
        {
            let mut t = tx.open_table(OBJECTS).map_err(StoreError::from)?;
            t.insert(id, Record::object(kind, channel).encode().as_slice())
                .map_err(StoreError::from)?;
        }
        tx.commit().map_err(StoreError::from)?;
        Ok(id)
    }

    /// Records that proxy `id` of `kind` in `channel` is connected to `peer` (an IOR
    /// encapsulation, empty for nil).
    pub fn connect(
        &self,
        id: u64,
        kind: Kind,
        channel: u64,
        peer: &[u8],
    ) -> Result<(), StoreError> {
        let mut r = Record::object(kind, channel);
        r.connected = true;
        r.data = peer.to_vec();
        self.put(id, &r)
    }

    /// Creates an object outside any channel (a filter) holding `data`; returns its id.
    pub fn create_detached(&self, kind: Kind, data: &[u8]) -> Result<u64, StoreError> {
        self.create_object(kind, 0, data)
    }

    /// Writes object `id`'s record.
    pub fn put(&self, id: u64, r: &Record) -> Result<(), StoreError> {
        let tx = self.db.begin_write().map_err(StoreError::from)?;
        {
            let mut t = tx.open_table(OBJECTS).map_err(StoreError::from)?;
            t.insert(id, r.encode().as_slice())
                .map_err(StoreError::from)?;
        }
        tx.commit().map_err(StoreError::from)
    }

    /// Removes objects (a disconnected proxy; a destroyed channel with everything in it) and
    /// the corbaloc key `ins`, in one transaction.
    pub fn remove(&self, ids: &[u64], ins: Option<&str>) -> Result<(), StoreError> {
        let tx = self.db.begin_write().map_err(StoreError::from)?;
        {
            let mut t = tx.open_table(OBJECTS).map_err(StoreError::from)?;
            let mut events = tx.open_table(EVENTS).map_err(StoreError::from)?;
            for id in ids {
                t.remove(id).map_err(StoreError::from)?;
                events
                    .retain_in((*id, 0)..=(*id, u64::MAX), |_, _| false)
                    .map_err(StoreError::from)?;
            }
            if let Some(n) = ins {
                tx.open_table(INS)
                    .map_err(StoreError::from)?
                    .remove(n)
                    .map_err(StoreError::from)?;
            }
        }
        tx.commit().map_err(StoreError::from)
    }
}

impl Store {
    /// Stores event `seq` of proxy `proxy`, and removes the events `gone` of it, in one
    /// transaction.
    pub fn put_event(
        &self,
        proxy: u64,
        seq: u64,
        data: &[u8],
        gone: &[u64],
    ) -> Result<(), StoreError> {
        let tx = self.db.begin_write().map_err(StoreError::from)?;
        {
            let mut t = tx.open_table(EVENTS).map_err(StoreError::from)?;
            t.insert((proxy, seq), data).map_err(StoreError::from)?;
            for g in gone {
                t.remove((proxy, *g)).map_err(StoreError::from)?;
            }
        }
        tx.commit().map_err(StoreError::from)
    }

    /// Removes events of proxy `proxy` (delivered, discarded or expired). Written to the
    /// file but not synced (`Durability::Eventual`: it survives the daemon's crash, maybe
    /// not the machine's): a removal lost means an event delivered twice, never one lost,
    /// and it saves a sync per delivery.
    pub fn remove_events(&self, proxy: u64, seqs: &[u64]) -> Result<(), StoreError> {
        if seqs.is_empty() {
            return Ok(());
        }
        let mut tx = self.db.begin_write().map_err(StoreError::from)?;
        tx.set_durability(redb::Durability::Eventual);
        {
            let mut t = tx.open_table(EVENTS).map_err(StoreError::from)?;
            for s in seqs {
                t.remove((proxy, *s)).map_err(StoreError::from)?;
            }
        }
        tx.commit().map_err(StoreError::from)
    }

    /// The stored events of proxy `proxy`, by sequence number.
    pub fn events(&self, proxy: u64) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
        let tx = self.db.begin_read().map_err(StoreError::from)?;
        let t = tx.open_table(EVENTS).map_err(StoreError::from)?;
        t.range((proxy, 0)..=(proxy, u64::MAX))
            .map_err(StoreError::from)?
            .map(|r| {
                let (k, v) = r.map_err(StoreError::from)?;
                Ok((k.value().1, v.value().to_vec()))
            })
            .collect()
    }
}

fn take_ids(tx: &redb::WriteTransaction, n: u64) -> Result<u64, StoreError> {
    let mut meta = tx.open_table(META).map_err(StoreError::from)?;
    let id = meta
        .get(NEXT_ID)
        .map_err(StoreError::from)?
        .map_or(FIRST_ID, |v| v.value());
    let next = id
        .checked_add(n)
        .ok_or_else(|| StoreError("object ids exhausted".into()))?;
    meta.insert(NEXT_ID, next).map_err(StoreError::from)?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!(
            "corbina-events-store-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn records_round_trip_and_reject_garbage() {
        let mut r = Record::object(Kind::PushSupplier, 7);
        r.connected = true;
        r.data = vec![1, 2, 3];
        assert_eq!(Record::decode(&r.encode()).unwrap(), r);
        let mut c = Record::object(Kind::Channel, 9);
        c.params = Some(ChannelParams {
            max_queue: 5,
            pull_retry_ms: 20,
            max_proxies: 3,
            ins_name: Some("Ch".into()),
        });
        assert_eq!(Record::decode(&c.encode()).unwrap(), c);
        for bad in [
            &[][..],
            &[99, 0, 0, 0, 0, 0, 0, 0, 1, 0],
            &[0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0],
        ] {
            assert!(Record::decode(bad).is_err(), "{bad:?}");
        }
        // A channel whose name is not UTF-8.
        let mut b = c.encode();
        b.push(0xff);
        assert!(Record::decode(&b).is_err());
    }

    #[test]
    fn channels_proxies_and_names_persist() {
        let d = dir("persist");
        let params = ChannelParams {
            max_queue: 10,
            pull_retry_ms: 5,
            max_proxies: 100,
            ins_name: Some("Alarms".into()),
        };
        let (ch, px) = {
            let s = Store::open(&d).unwrap();
            let ch = s.create_channel(&params).unwrap().unwrap();
            assert_eq!(s.create_channel(&params).unwrap(), None, "InsName taken");
            let px = s.create_proxy(Kind::PushSupplier, ch).unwrap();
            s.connect(px, Kind::PushSupplier, ch, b"ior").unwrap();
            (ch, px)
        };
        let s = Store::open(&d).unwrap();
        assert_eq!(s.ins("Alarms").unwrap(), Some(ch));
        let objs = s.objects().unwrap();
        assert_eq!(objs.len(), 4);
        let p = &objs.iter().find(|(id, _)| *id == px).unwrap().1;
        assert!(p.connected);
        assert_eq!(p.data, b"ior");
        // New ids never reuse old ones.
        assert!(s.create_proxy(Kind::PullSupplier, ch).unwrap() > px);
        s.remove(&[ch, ch + 1, ch + 2, px], Some("Alarms")).unwrap();
        assert_eq!(s.ins("Alarms").unwrap(), None);
        assert_eq!(s.objects().unwrap().len(), 1);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn events_are_kept_per_proxy_until_removed() {
        let d = dir("events");
        let (a, b) = {
            let s = Store::open(&d).unwrap();
            let ch = s.create_proxy(Kind::Channel, 0).unwrap();
            let (a, b) = (
                s.create_proxy(Kind::PushSupplier, ch).unwrap(),
                s.create_proxy(Kind::PullSupplier, ch).unwrap(),
            );
            for seq in 0..4 {
                s.put_event(a, seq, &[seq as u8], &[]).unwrap();
            }
            s.put_event(b, 0, b"other", &[]).unwrap();
            // A new event and a discarded one in one transaction.
            s.put_event(a, 4, &[4], &[1]).unwrap();
            s.remove_events(a, &[0]).unwrap();
            // An event of a proxy not stored (removed while it queued one).
            s.put_event(999, 0, b"orphan", &[]).unwrap();
            (a, b)
        };
        let s = Store::open(&d).unwrap();
        let got: Vec<u64> = s.events(a).unwrap().iter().map(|(k, _)| *k).collect();
        assert_eq!(got, [2, 3, 4]);
        assert_eq!(s.events(a).unwrap()[0].1, [2]);
        assert!(s.events(999).unwrap().is_empty(), "dropped on opening");
        // Removing a proxy removes its events, not another's.
        s.remove(&[a], None).unwrap();
        assert!(s.events(a).unwrap().is_empty());
        assert_eq!(s.events(b).unwrap(), [(0, b"other".to_vec())]);
        let _ = std::fs::remove_dir_all(&d);
    }
}
