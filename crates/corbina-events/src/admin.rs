//! What the notification channel adds to the event channel's objects: admins (each with
//! its filters, its QoS and its inter-filter-group operator), the filters and QoS of every
//! proxy, and the decision whether an event passes them.
//!
//! An object's filters are ORed: an event passes when one of them matches it (or when the
//! object has none). An admin's and its proxy's are ANDed, or ORed when the admin was
//! created with `OR_OP` (CosNotifyChannelAdmin §3.4.11). The supplier side is decided once
//! per event, when it arrives; the consumer side once per event and consumer.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use corbina::cdr::MarshalError;
use corbina::cdr::{ByteOrder, CdrContext, CdrDecode, CdrEncode, CdrReader, CdrWriter};
use corbina::Any;

use crate::cos_notification::{EventType, Property};
use crate::cos_notify_filter::{Filter, MappingFilter};
use crate::qos::{AdminProps, Qos};
use crate::queue::{Body, Event};
use crate::time_base::UtcT;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A set of filters (`FilterAdmin`), read without a lock by the fan-out.
#[derive(Default)]
pub(crate) struct FilterSet {
    table: Mutex<(i32, BTreeMap<i32, Filter>)>,
    snapshot: RwLock<Arc<[Filter]>>,
    /// Whether there are filters: read by every event for every proxy, without a lock.
    any: std::sync::atomic::AtomicBool,
}

impl FilterSet {
    fn rebuild(&self, t: &BTreeMap<i32, Filter>) {
        *self.snapshot.write().unwrap_or_else(|p| p.into_inner()) = t.values().cloned().collect();
        self.any
            .store(!t.is_empty(), std::sync::atomic::Ordering::Release);
    }

    pub(crate) fn add(&self, f: Filter) -> i32 {
        let mut t = lock(&self.table);
        t.0 = t.0.wrapping_add(1).max(1);
        let id = t.0;
        t.1.insert(id, f);
        self.rebuild(&t.1);
        id
    }

    pub(crate) fn remove(&self, id: i32) -> bool {
        let mut t = lock(&self.table);
        let found = t.1.remove(&id).is_some();
        self.rebuild(&t.1);
        found
    }

    pub(crate) fn clear(&self) {
        let mut t = lock(&self.table);
        t.1.clear();
        self.rebuild(&t.1);
    }

    pub(crate) fn get(&self, id: i32) -> Option<Filter> {
        lock(&self.table).1.get(&id).cloned()
    }

    pub(crate) fn ids(&self) -> Vec<i32> {
        lock(&self.table).1.keys().copied().collect()
    }

    pub(crate) fn is_empty(&self) -> bool {
        !self.any.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Whether one of the filters matches `e` (true without filters). A filter that cannot
    /// be reached, or fails, does not match.
    pub(crate) fn passes(&self, e: &Event) -> bool {
        if self.is_empty() {
            return true;
        }
        let filters = self
            .snapshot
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        filters.is_empty()
            || filters.iter().any(|f| match e.body() {
                Body::Structured(s) => f.match_structured(s).unwrap_or(false),
                Body::Any(a) => f.r#match(a).unwrap_or(false),
            })
    }

    /// The stored form: the last id given, then each filter's id and IOR encapsulation.
    pub(crate) fn encode(&self, w: &mut CdrWriter<'_>) -> Result<(), MarshalError> {
        let t = lock(&self.table);
        w.write_primitive::<i32>(t.0);
        let list: Vec<(i32, Vec<u8>)> =
            t.1.iter()
                .filter_map(|(id, f)| Some((*id, f.as_object().ior().to_encapsulation().ok()?)))
                .collect();
        w.write_primitive::<u32>(u32::try_from(list.len()).unwrap_or(u32::MAX));
        for (id, ior) in &list {
            w.write_primitive::<i32>(*id);
            w.write_length(ior.len())?;
            w.write_bytes(ior);
        }
        Ok(())
    }

    /// The stored form read back; `object` turns an IOR encapsulation into a reference.
    pub(crate) fn decode(
        r: &mut CdrReader<'_>,
        object: &dyn Fn(&[u8]) -> Option<corbina::ObjectRef>,
    ) -> Result<FilterSet, MarshalError> {
        let last = r.read_primitive::<i32>()?;
        let n = r.read_length(8)?;
        let mut t = BTreeMap::new();
        for _ in 0..n {
            let id = r.read_primitive::<i32>()?;
            let ior = r.read_octet_seq()?;
            if let Some(o) = object(ior) {
                t.insert(id, Filter::unchecked_narrow(&o));
            }
        }
        let s = FilterSet::default();
        s.rebuild(&t);
        *lock(&s.table) = (last, t);
        Ok(s)
    }
}

/// Which mapping filter.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Mapping {
    /// `priority_filter`: its value (a short) is the event's priority for the consumer.
    Priority = 0,
    /// `lifetime_filter`: its value (a TimeBase::TimeT, 100 ns units) is the event's
    /// lifetime for the consumer.
    Lifetime = 1,
}

/// The priority and lifetime mapping filters of a consumer admin or proxy.
#[derive(Default)]
pub(crate) struct Mappings {
    slots: Mutex<[Option<MappingFilter>; 2]>,
    /// Whether one is set: read by every event for every consumer, without a lock.
    any: std::sync::atomic::AtomicBool,
}

impl Mappings {
    pub(crate) fn get(&self, which: Mapping) -> Option<MappingFilter> {
        lock(&self.slots)[which as usize].clone()
    }

    pub(crate) fn set(&self, which: Mapping, f: Option<MappingFilter>) {
        let mut s = lock(&self.slots);
        s[which as usize] = f;
        self.any.store(
            s.iter().any(Option::is_some),
            std::sync::atomic::Ordering::Release,
        );
    }

    /// Both, unless neither is set.
    fn both(&self) -> Option<[Option<MappingFilter>; 2]> {
        if !self.any.load(std::sync::atomic::Ordering::Acquire) {
            return None;
        }
        Some(lock(&self.slots).clone())
    }

    /// The stored form: each filter's IOR encapsulation (empty: none).
    fn encode(&self, w: &mut CdrWriter<'_>) -> Result<(), MarshalError> {
        let s = lock(&self.slots).clone();
        for f in &s {
            // A reference that does not encode (the impossible) is stored as none.
            let ior = f
                .as_ref()
                .and_then(|f| f.as_object().ior().to_encapsulation().ok())
                .unwrap_or_default();
            w.write_length(ior.len())?;
            w.write_bytes(&ior);
        }
        Ok(())
    }

    fn decode(
        r: &mut CdrReader<'_>,
        object: &dyn Fn(&[u8]) -> Option<corbina::ObjectRef>,
    ) -> Result<Mappings, MarshalError> {
        let m = Mappings::default();
        for which in [Mapping::Priority, Mapping::Lifetime] {
            let ior = r.read_octet_seq()?;
            m.set(
                which,
                object(ior).map(|o| MappingFilter::unchecked_narrow(&o)),
            );
        }
        Ok(m)
    }
}

/// What `f` maps `e` to, if one of its constraints matches.
fn mapped(f: &MappingFilter, e: &Event) -> Option<Any> {
    let r = match e.body() {
        Body::Structured(s) => f.match_structured(s).ok(),
        Body::Any(a) => f.r#match(a).ok(),
    };
    match r {
        Some((true, v)) => Some(v),
        _ => None,
    }
}

/// The kind of events a proxy carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// A CosEventChannelAdmin proxy (`any` events).
    Event,
    /// `ANY_EVENT`.
    Any,
    /// `STRUCTURED_EVENT`.
    Structured,
    /// `SEQUENCE_EVENT`.
    Sequence,
}

impl Style {
    pub(crate) fn code(self) -> u8 {
        match self {
            Style::Event => 0,
            Style::Any => 1,
            Style::Structured => 2,
            Style::Sequence => 3,
        }
    }

    pub(crate) fn from_code(c: u8) -> Option<Style> {
        Some(match c {
            0 => Style::Event,
            1 => Style::Any,
            2 => Style::Structured,
            3 => Style::Sequence,
            _ => return None,
        })
    }
}

/// A consumer or supplier admin.
pub(crate) struct Admin {
    /// Its object id.
    pub(crate) id: u64,
    /// Its `AdminID` (0: the channel's default admin of its side).
    pub(crate) number: i32,
    /// A consumer admin (else a supplier admin).
    pub(crate) consumer: bool,
    /// Created with `OR_OP`.
    pub(crate) or_op: bool,
    pub(crate) filters: FilterSet,
    pub(crate) qos: Mutex<Qos>,
    /// A consumer admin's priority and lifetime filters.
    pub(crate) mappings: Mappings,
}

impl Admin {
    pub(crate) fn new(id: u64, number: i32, consumer: bool, or_op: bool, qos: Qos) -> Admin {
        Admin {
            id,
            number,
            consumer,
            or_op,
            filters: FilterSet::default(),
            qos: Mutex::new(qos),
            mappings: Mappings::default(),
        }
    }

    /// Whether `e` passes this admin's filters and `own` (a proxy's), as the operator says.
    pub(crate) fn passes(&self, own: &FilterSet, e: &Event) -> bool {
        if self.filters.is_empty() && own.is_empty() {
            return true;
        }
        let a = self.filters.passes(e);
        if self.or_op {
            a || own.passes(e)
        } else {
            a && own.passes(e)
        }
    }

    /// The stored form: number, operator, QoS, filters.
    pub(crate) fn encode(&self) -> Result<Vec<u8>, MarshalError> {
        let qos = lock(&self.qos).stored();
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
        w.write_primitive::<i32>(self.number);
        w.write_boolean(self.or_op);
        qos.encode(&mut w)?;
        self.filters.encode(&mut w)?;
        self.mappings.encode(&mut w)?;
        Ok(w.into_bytes())
    }

    pub(crate) fn decode(
        id: u64,
        consumer: bool,
        data: &[u8],
        object: &dyn Fn(&[u8]) -> Option<corbina::ObjectRef>,
    ) -> Result<Admin, MarshalError> {
        let mut r = CdrReader::new(data, ByteOrder::Big, CdrContext::GIOP_1_2);
        let number = r.read_primitive::<i32>()?;
        let or_op = r.read_boolean()?;
        let qos = read_qos(&mut r)?;
        let filters = FilterSet::decode(&mut r, object)?;
        let mappings = Mappings::decode(&mut r, object)?;
        let mut a = Admin::new(id, number, consumer, or_op, qos);
        a.filters = filters;
        a.mappings = mappings;
        Ok(a)
    }
}

pub(crate) fn read_qos(r: &mut CdrReader<'_>) -> Result<Qos, MarshalError> {
    let props = Vec::<Property>::decode(r)?;
    Qos::default()
        .with(&props)
        .map_err(|_| MarshalError::InvalidValue {
            offset: r.position(),
            reason: "stored QoS",
        })
}

/// A proxy's place in the channel: its admin, the kind of events it carries, its filters
/// and QoS, and the peer it is connected to (stored with it).
pub(crate) struct Link {
    pub(crate) admin: Arc<Admin>,
    pub(crate) style: Style,
    pub(crate) filters: FilterSet,
    pub(crate) qos: Mutex<Qos>,
    /// The connected peer's IOR encapsulation (empty: nil); `None` before connecting.
    pub(crate) peer: Mutex<Option<Vec<u8>>>,
    /// A consumer-side proxy's priority and lifetime filters (over its admin's).
    pub(crate) mappings: Mappings,
    /// Whether the peer wants `offer_change`/`subscription_change` calls.
    pub(crate) updates: std::sync::atomic::AtomicBool,
}

impl Link {
    pub(crate) fn new(admin: Arc<Admin>, style: Style) -> Link {
        let qos = lock(&admin.qos).clone();
        Link {
            admin,
            style,
            filters: FilterSet::default(),
            qos: Mutex::new(qos),
            peer: Mutex::new(None),
            mappings: Mappings::default(),
            updates: std::sync::atomic::AtomicBool::new(true),
        }
    }

    pub(crate) fn qos(&self) -> Qos {
        lock(&self.qos).clone()
    }

    /// Whether `e` passes this proxy's filters and its admin's.
    pub(crate) fn passes(&self, e: &Event) -> bool {
        self.admin.passes(&self.filters, e)
    }

    /// An event arriving through this (supplier-side) proxy: its priority and deadline from
    /// its header, else from the proxy's QoS.
    pub(crate) fn event(&self, body: Body) -> Event {
        let qos = self.qos();
        let mut priority = qos.priority();
        let mut timeout = qos.timeout();
        let (mut start, mut stop) = (None, None);
        if let Body::Structured(s) = &body {
            for p in &s.header.variable_header {
                match p.name.as_str() {
                    "Priority" => {
                        if let Some(v) = p.value.to_short() {
                            priority = v;
                        }
                    }
                    "Timeout" => {
                        if let Some(t) = time_value(&p.value) {
                            timeout = (t > 0)
                                .then(|| std::time::Duration::from_nanos(t.saturating_mul(100)));
                        }
                    }
                    "StartTime" if qos.start_time == Some(true) => {
                        start = p.value.extract::<UtcT>().map(|u| utc_instant(u.time));
                    }
                    "StopTime" if qos.stop_time == Some(true) => {
                        stop = p.value.extract::<UtcT>().map(|u| utc_instant(u.time));
                    }
                    _ => {}
                }
            }
        }
        let now = std::time::Instant::now();
        let deadline = timeout.and_then(|t| now.checked_add(t));
        let deadline = match (deadline, stop) {
            (Some(d), Some(s)) => Some(d.min(s)),
            (d, s) => d.or(s),
        };
        let mut e = Event::new(body, priority, deadline);
        e.start = start.filter(|s| *s > now);
        e
    }

    /// `e` as this consumer-side proxy sees it: with the priority and lifetime its mapping
    /// filters (else its admin's) give it, when one of their constraints matches.
    pub(crate) fn remap(&self, e: &Arc<Event>) -> Arc<Event> {
        let (own, admin) = (self.mappings.both(), self.admin.mappings.both());
        if own.is_none() && admin.is_none() {
            return e.clone();
        }
        let pick = |i: Mapping| {
            let i = i as usize;
            own.as_ref()
                .and_then(|o| o[i].clone())
                .or_else(|| admin.as_ref().and_then(|a| a[i].clone()))
        };
        let mut priority = e.priority;
        let mut deadline = e.deadline;
        if let Some(p) = pick(Mapping::Priority)
            .and_then(|f| mapped(&f, e))
            .and_then(|v| v.to_short())
        {
            priority = p;
        }
        if let Some(t) = pick(Mapping::Lifetime)
            .and_then(|f| mapped(&f, e))
            .and_then(|v| time_value(&v))
        {
            deadline = (t > 0).then(|| {
                std::time::Instant::now() + std::time::Duration::from_nanos(t.saturating_mul(100))
            });
        }
        Arc::new(e.with(priority, deadline))
    }

    /// The stored form of a notification proxy of `mode` (its store kind's code), with
    /// whether its connection is suspended (`suspend_connection`).
    pub(crate) fn encode(&self, mode: u8, suspended: bool) -> Result<Vec<u8>, MarshalError> {
        let qos = lock(&self.qos).stored();
        let peer = lock(&self.peer).clone().unwrap_or_default();
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
        w.write_octet(mode);
        w.write_octet(self.style.code());
        w.write_primitive::<u64>(self.admin.id);
        w.write_length(peer.len())?;
        w.write_bytes(&peer);
        qos.encode(&mut w)?;
        self.filters.encode(&mut w)?;
        self.mappings.encode(&mut w)?;
        w.write_boolean(suspended);
        Ok(w.into_bytes())
    }
}

/// What a stored notification proxy holds.
pub(crate) struct StoredProxy {
    pub(crate) mode: u8,
    pub(crate) style: Style,
    pub(crate) admin: u64,
    pub(crate) peer: Vec<u8>,
    pub(crate) qos: Qos,
    pub(crate) filters: FilterSet,
    pub(crate) mappings: Mappings,
    pub(crate) suspended: bool,
}

impl StoredProxy {
    pub(crate) fn decode(
        data: &[u8],
        object: &dyn Fn(&[u8]) -> Option<corbina::ObjectRef>,
    ) -> Result<StoredProxy, MarshalError> {
        let mut r = CdrReader::new(data, ByteOrder::Big, CdrContext::GIOP_1_2);
        let mode = r.read_octet()?;
        let style = Style::from_code(r.read_octet()?).ok_or(MarshalError::InvalidValue {
            offset: 1,
            reason: "proxy style",
        })?;
        let admin = r.read_primitive::<u64>()?;
        let peer = r.read_octet_seq()?.to_vec();
        let qos = read_qos(&mut r)?;
        let filters = FilterSet::decode(&mut r, object)?;
        let mappings = Mappings::decode(&mut r, object)?;
        // Absent from records stored before it was: not suspended.
        let suspended = !r.is_empty() && r.read_boolean()?;
        Ok(StoredProxy {
            mode,
            style,
            admin,
            peer,
            qos,
            filters,
            mappings,
            suspended,
        })
    }
}

/// A TimeBase::TimeT (or any unsigned or non-negative integer) in an `any`.
fn time_value(a: &Any) -> Option<u64> {
    a.to_ulonglong()
        .or_else(|| a.to_longlong().and_then(|v| u64::try_from(v).ok()))
        .or_else(|| a.to_ulong().map(u64::from))
}

/// What a notification channel has beyond an event channel's parameters.
pub(crate) struct NotifyParams {
    pub(crate) qos: Mutex<Qos>,
    /// `MaxQueueLength` (the default bound of a consumer's queue) and the other admin
    /// properties.
    pub(crate) admin: Mutex<(u32, AdminProps)>,
    /// The event types suppliers offer and consumers subscribe to, with how many times each
    /// was announced.
    pub(crate) offered: Mutex<BTreeMap<(String, String), usize>>,
    pub(crate) subscribed: Mutex<BTreeMap<(String, String), usize>>,
}

impl NotifyParams {
    pub(crate) fn new(qos: Qos, max_queue: u32, props: AdminProps) -> NotifyParams {
        NotifyParams {
            qos: Mutex::new(qos),
            admin: Mutex::new((max_queue, props)),
            offered: Mutex::new(BTreeMap::new()),
            subscribed: Mutex::new(BTreeMap::new()),
        }
    }

    /// The stored form: admin properties, then QoS.
    pub(crate) fn encode(&self) -> Result<Vec<u8>, MarshalError> {
        let (q, p) = lock(&self.admin).clone();
        let qos = lock(&self.qos).stored();
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
        w.write_primitive::<u32>(q);
        w.write_primitive::<u32>(p.max_consumers);
        w.write_primitive::<u32>(p.max_suppliers);
        qos.encode(&mut w)?;
        Ok(w.into_bytes())
    }

    pub(crate) fn decode(data: &[u8]) -> Result<NotifyParams, MarshalError> {
        let mut r = CdrReader::new(data, ByteOrder::Big, CdrContext::GIOP_1_2);
        let q = r.read_primitive::<u32>()?;
        let max_consumers = r.read_primitive::<u32>()?;
        let max_suppliers = r.read_primitive::<u32>()?;
        let qos = read_qos(&mut r)?;
        Ok(NotifyParams::new(
            qos,
            q.max(1),
            AdminProps {
                max_consumers,
                max_suppliers,
            },
        ))
    }

    pub(crate) fn max_queue(&self) -> u32 {
        lock(&self.admin).0
    }

    /// Records an announcement; returns the types that became known and those no longer
    /// announced by anyone (what is forwarded).
    pub(crate) fn announce(
        table: &Mutex<BTreeMap<(String, String), usize>>,
        added: &[EventType],
        removed: &[EventType],
    ) -> (Vec<EventType>, Vec<EventType>) {
        let mut t = lock(table);
        let key = |e: &EventType| (e.domain_name.clone(), e.type_name.clone());
        let mut new = Vec::new();
        let mut gone = Vec::new();
        for e in added {
            let n = t.entry(key(e)).or_insert(0);
            *n += 1;
            if *n == 1 {
                new.push(e.clone());
            }
        }
        for e in removed {
            if let Some(n) = t.get_mut(&key(e)) {
                *n -= 1;
                if *n == 0 {
                    t.remove(&key(e));
                    gone.push(e.clone());
                }
            }
        }
        (new, gone)
    }

    pub(crate) fn types(table: &Mutex<BTreeMap<(String, String), usize>>) -> Vec<EventType> {
        lock(table)
            .keys()
            .map(|(d, t)| EventType {
                domain_name: d.clone(),
                type_name: t.clone(),
            })
            .collect()
    }
}

/// 100 ns intervals from 15 October 1582 (TimeBase's epoch) to 1 January 1970.
const UTC_TO_UNIX: u64 = 122_192_928_000_000_000;

/// A TimeBase::TimeT in UTC (a UtcT's `time`) as an instant of the monotonic clock, by the
/// system clock now; a time beyond what the clock can hold is a century away.
pub(crate) fn utc_instant(t: u64) -> std::time::Instant {
    use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
    let now = Instant::now();
    let since_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let now_t =
        UTC_TO_UNIX.saturating_add(u64::try_from(since_unix.as_nanos() / 100).unwrap_or(u64::MAX));
    let span = |d: u64| Duration::from_nanos(d.saturating_mul(100));
    if t >= now_t {
        now.checked_add(span(t - now_t))
            .or_else(|| now.checked_add(Duration::from_secs(100 * 365 * 86_400)))
            .unwrap_or(now)
    } else {
        now.checked_sub(span(now_t - t)).unwrap_or(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announcements_count_and_forward_changes_once() {
        let t = Mutex::new(BTreeMap::new());
        let et = |n: &str| EventType {
            domain_name: "D".into(),
            type_name: n.into(),
        };
        let (a, r) = NotifyParams::announce(&t, &[et("A"), et("B")], &[]);
        assert_eq!((a.len(), r.len()), (2, 0));
        let (a, _) = NotifyParams::announce(&t, &[et("A")], &[]);
        assert!(a.is_empty(), "announced already");
        let (_, r) = NotifyParams::announce(&t, &[], &[et("A")]);
        assert!(r.is_empty(), "still announced once");
        let (_, r) = NotifyParams::announce(&t, &[], &[et("A"), et("Z")]);
        assert_eq!(r.len(), 1);
        assert_eq!(NotifyParams::types(&t).len(), 1);
    }

    proptest::proptest! {
        /// Stored records are read back from disk: any bytes give a record or an error,
        /// never a panic.
        #[test]
        fn decoders_take_any_bytes(b in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let _ = StoredProxy::decode(&b, &|_| None);
            let _ = Admin::decode(1, false, &b, &|_| None);
            let _ = NotifyParams::decode(&b);
        }
    }

    #[test]
    fn stored_forms_round_trip_and_reject_garbage() {
        let a = Admin::new(40, 3, true, true, Qos::default());
        let b = a.encode().unwrap();
        let back = Admin::decode(40, true, &b, &|_| None).unwrap();
        assert_eq!((back.number, back.or_op), (3, true));
        let n = NotifyParams::new(Qos::default(), 9, AdminProps::default());
        let b = n.encode().unwrap();
        assert_eq!(NotifyParams::decode(&b).unwrap().max_queue(), 9);
        // A proxy's suspension; a record stored before it was kept reads as not suspended.
        let link = Link::new(Arc::new(a), Style::Structured);
        for suspended in [false, true] {
            let b = link.encode(4, suspended).unwrap();
            let back = StoredProxy::decode(&b, &|_| None).unwrap();
            assert_eq!((back.mode, back.admin, back.suspended), (4, 40, suspended));
            let old = StoredProxy::decode(&b[..b.len() - 1], &|_| None).unwrap();
            assert!(!old.suspended);
        }
        for bad in [&[][..], &[0, 0, 0], &[9; 40]] {
            assert!(StoredProxy::decode(bad, &|_| None).is_err());
            assert!(Admin::decode(1, true, bad, &|_| None).is_err());
        }
    }
}
