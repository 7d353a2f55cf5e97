//! The events on their way through a channel, and the queue of each consumer: ordered by
//! its `OrderPolicy`, bounded by its `MaxEventsPerConsumer` (beyond it an event goes by
//! its `DiscardPolicy`), expired events dropped.
//!
//! An event is translated at most once per kind a consumer asks for: an `any` pushed
//! reaches a structured consumer as a `StructuredEvent` of type `%ANY` with the `any` in
//! `remainder_of_body`; a structured event reaches an `any` consumer as an `any` holding the
//! `StructuredEvent` (CosNotification §2.7).

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use corbina::cdr::{
    ByteOrder, CdrContext, CdrDecode, CdrEncode, CdrReader, CdrWriter, MarshalError,
};
use corbina::Any;

use crate::cos_notification::{EventHeader, EventType, FixedEventHeader, StructuredEvent};
use crate::etcl::STRUCTURED_EVENT_ID;

/// What a supplier sent.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// An untyped event (`push(any)`).
    Any(Any),
    /// A structured event (`push_structured_event`, one of a batch).
    Structured(StructuredEvent),
}

/// An event with what the channel decided about it when it arrived.
#[derive(Debug)]
pub(crate) struct Event {
    body: Body,
    /// Its priority (`Priority` in its header, else the supplier's QoS).
    pub(crate) priority: i16,
    /// When it expires (`Timeout`/`StopTime`), if ever.
    pub(crate) deadline: Option<Instant>,
    /// When it may be delivered (`StartTime`), if it must wait.
    pub(crate) start: Option<Instant>,
    /// Its sequence number in the store, when one consumer's copy of it is stored there
    /// (persistent events).
    pub(crate) key: Option<u64>,
    as_any: OnceLock<Any>,
    as_structured: OnceLock<StructuredEvent>,
    /// The `any` and the structured event as a push's argument, encoded once for all the
    /// consumers (see [`Event::write_any`]).
    any_cdr: OnceLock<Option<Encoded>>,
    structured_cdr: OnceLock<Option<Encoded>>,
}

/// A value's CDR at an 8-aligned offset, in one byte order and context.
#[derive(Debug)]
struct Encoded {
    order: ByteOrder,
    ctx: CdrContext,
    bytes: Vec<u8>,
}

/// Writes `value` into `w` as its first push did: the same bytes when `w` is at an 8-aligned
/// offset (a GIOP 1.2 request body's start) in the same byte order and context (code sets);
/// encoded afresh otherwise. One encoding per event instead of one per consumer: the
/// `any`'s TypeCode alone was half the instructions of a push's request.
fn write_shared<'a, T: CdrEncode>(
    w: &mut CdrWriter<'a>,
    cache: &'a OnceLock<Option<Encoded>>,
    value: &'a T,
) -> Result<(), MarshalError> {
    if !w.position().is_multiple_of(8) {
        return value.encode(w);
    }
    let (order, ctx) = (w.byte_order(), w.context());
    let shared = cache.get_or_init(|| {
        let mut c = CdrWriter::with_byte_order(order, ctx);
        value.encode(&mut c).ok()?;
        // 8-octet values inside encapsulations that a GIOP 1.2 fragment cut must not split
        // are noted by the writer that encodes them; borrowed bytes would lose the notes.
        if !c.uncuttable().is_empty() {
            return None;
        }
        Some(Encoded {
            order,
            ctx,
            bytes: c.into_bytes(),
        })
    });
    match shared {
        Some(e) if e.order == order && e.ctx == ctx => {
            w.write_bytes_borrowed(&e.bytes);
            Ok(())
        }
        _ => value.encode(w),
    }
}

impl Event {
    pub(crate) fn new(body: Body, priority: i16, deadline: Option<Instant>) -> Event {
        Event {
            body,
            priority,
            deadline,
            start: None,
            key: None,
            as_any: OnceLock::new(),
            as_structured: OnceLock::new(),
            any_cdr: OnceLock::new(),
            structured_cdr: OnceLock::new(),
        }
    }

    /// The same event with another priority and deadline (one consumer's view of it).
    pub(crate) fn with(&self, priority: i16, deadline: Option<Instant>) -> Event {
        Event {
            start: self.start,
            ..Event::new(self.body.clone(), priority, deadline)
        }
    }

    /// One consumer's copy of it, stored under `key`.
    pub(crate) fn with_key(&self, key: u64) -> Event {
        Event {
            key: Some(key),
            ..self.with(self.priority, self.deadline)
        }
    }

    /// The stored form: kind (0 `any`, 1 structured), priority, deadline and start time
    /// (nanoseconds since the Unix epoch, 0 for none; an `Instant` means nothing to the
    /// next process), then the body in CDR.
    pub(crate) fn encode(&self) -> Result<Vec<u8>, MarshalError> {
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
        w.write_octet(u8::from(matches!(self.body, Body::Structured(_))));
        w.write_primitive::<i16>(self.priority);
        w.write_primitive::<u64>(to_unix(self.deadline));
        w.write_primitive::<u64>(to_unix(self.start));
        match &self.body {
            Body::Any(a) => a.encode(&mut w)?,
            Body::Structured(e) => e.encode(&mut w)?,
        }
        Ok(w.into_bytes())
    }

    /// An event from its stored form, stored under `key`.
    pub(crate) fn decode(data: &[u8], key: u64) -> Result<Event, MarshalError> {
        let mut r = CdrReader::new(data, ByteOrder::Big, CdrContext::GIOP_1_2);
        let kind = r.read_octet()?;
        let priority = r.read_primitive::<i16>()?;
        let deadline = from_unix(r.read_primitive::<u64>()?);
        let start = from_unix(r.read_primitive::<u64>()?);
        let body = match kind {
            0 => Body::Any(Any::decode(&mut r)?),
            1 => Body::Structured(StructuredEvent::decode(&mut r)?),
            _ => {
                return Err(MarshalError::InvalidValue {
                    offset: 0,
                    reason: "stored event kind",
                })
            }
        };
        let mut e = Event::new(body, priority, deadline);
        e.start = start;
        e.key = Some(key);
        Ok(e)
    }

    /// Whether it must wait for its `StartTime` still.
    pub(crate) fn held(&self, now: Instant) -> bool {
        self.start.is_some_and(|s| s > now)
    }

    pub(crate) fn body(&self) -> &Body {
        &self.body
    }

    /// The event as an `any` consumer gets it.
    pub(crate) fn any(&self) -> &Any {
        match &self.body {
            Body::Any(a) => a,
            Body::Structured(s) => self.as_any.get_or_init(|| {
                // A StructuredEvent always encodes; an empty any is the impossible's answer.
                Any::insert(s).unwrap_or_default()
            }),
        }
    }

    /// The event as a structured (or sequence) consumer gets it.
    pub(crate) fn structured(&self) -> &StructuredEvent {
        match &self.body {
            Body::Structured(s) => s,
            Body::Any(a) => self.as_structured.get_or_init(|| wrap_any(a)),
        }
    }

    /// Writes [`Event::any`] as a request's argument (see [`write_shared`]).
    pub(crate) fn write_any<'a>(&'a self, w: &mut CdrWriter<'a>) -> Result<(), MarshalError> {
        write_shared(w, &self.any_cdr, self.any())
    }

    /// Writes [`Event::structured`] as a request's argument (see [`write_shared`]).
    pub(crate) fn write_structured<'a>(
        &'a self,
        w: &mut CdrWriter<'a>,
    ) -> Result<(), MarshalError> {
        write_shared(w, &self.structured_cdr, self.structured())
    }

    pub(crate) fn expired(&self, now: Instant) -> bool {
        self.deadline.is_some_and(|d| d <= now)
    }
}

/// An instant as nanoseconds since the Unix epoch (0: none).
fn to_unix(t: Option<Instant>) -> u64 {
    let Some(t) = t else { return 0 };
    let now = Instant::now();
    let wall = match t.checked_duration_since(now) {
        Some(ahead) => SystemTime::now() + ahead,
        None => SystemTime::now() - now.saturating_duration_since(t),
    };
    wall.duration_since(UNIX_EPOCH).map_or(1, |d| {
        u64::try_from(d.as_nanos()).unwrap_or(u64::MAX).max(1)
    })
}

/// The instant of nanoseconds since the Unix epoch (0: none); one in the past is now.
fn from_unix(nanos: u64) -> Option<Instant> {
    if nanos == 0 {
        return None;
    }
    let wall = UNIX_EPOCH + Duration::from_nanos(nanos);
    let now = Instant::now();
    Some(match wall.duration_since(SystemTime::now()) {
        Ok(ahead) => now
            .checked_add(ahead)
            .unwrap_or(now + Duration::from_secs(86_400 * 365)),
        Err(_) => now,
    })
}

/// An `any` as a structured event: type `%ANY`, the `any` in `remainder_of_body`; an `any`
/// that holds a StructuredEvent is that event.
pub(crate) fn wrap_any(a: &Any) -> StructuredEvent {
    if a.type_code().unalias().id().ok() == Some(STRUCTURED_EVENT_ID) {
        if let Some(se) = a.extract::<StructuredEvent>() {
            return se;
        }
    }
    StructuredEvent {
        header: EventHeader {
            fixed_header: FixedEventHeader {
                event_type: EventType {
                    domain_name: String::new(),
                    type_name: "%ANY".into(),
                },
                event_name: String::new(),
            },
            variable_header: Vec::new(),
        },
        filterable_data: Vec::new(),
        remainder_of_body: a.clone(),
    }
}

/// `OrderPolicy`: which queued event goes first (`AnyOrder` is FIFO here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    Fifo,
    Priority,
    Deadline,
}

/// `DiscardPolicy`: which event goes when the queue is full (`AnyOrder` is FIFO here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Discard {
    /// The oldest.
    Fifo,
    /// The newest (the one arriving).
    Lifo,
    /// The lowest priority (the oldest of those).
    Priority,
    /// The one expiring first (else the oldest).
    Deadline,
}

type Key = (i64, u64);

/// The queued events by key: in arrival order (FIFO: a deque, the common case, cheap), or
/// sorted.
#[derive(Debug)]
enum Items {
    Fifo(VecDeque<(Key, Arc<Event>)>),
    Sorted(BTreeMap<Key, Arc<Event>>),
}

impl Items {
    fn new(order: Order) -> Items {
        match order {
            Order::Fifo => Items::Fifo(VecDeque::new()),
            _ => Items::Sorted(BTreeMap::new()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Items::Fifo(d) => d.len(),
            Items::Sorted(m) => m.len(),
        }
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn clear(&mut self) {
        match self {
            Items::Fifo(d) => d.clear(),
            Items::Sorted(m) => m.clear(),
        }
    }

    /// Inserts; a FIFO's keys only grow.
    fn insert(&mut self, k: Key, e: Arc<Event>) {
        match self {
            Items::Fifo(d) => d.push_back((k, e)),
            Items::Sorted(m) => {
                m.insert(k, e);
            }
        }
    }

    fn pop_first(&mut self) -> Option<(Key, Arc<Event>)> {
        match self {
            Items::Fifo(d) => d.pop_front(),
            Items::Sorted(m) => m.pop_first(),
        }
    }

    fn get(&self, k: &Key) -> Option<&Arc<Event>> {
        match self {
            Items::Fifo(d) => d.binary_search_by(|(x, _)| x.cmp(k)).ok().map(|i| &d[i].1),
            Items::Sorted(m) => m.get(k),
        }
    }

    fn remove(&mut self, k: &Key) -> Option<Arc<Event>> {
        match self {
            Items::Fifo(d) => d
                .binary_search_by(|(x, _)| x.cmp(k))
                .ok()
                .and_then(|i| d.remove(i))
                .map(|(_, e)| e),
            Items::Sorted(m) => m.remove(k),
        }
    }

    fn retain(&mut self, mut keep: impl FnMut(&Arc<Event>) -> bool) {
        match self {
            Items::Fifo(d) => d.retain(|(_, e)| keep(e)),
            Items::Sorted(m) => m.retain(|_, e| keep(e)),
        }
    }

    fn iter(&self) -> Box<dyn Iterator<Item = (&Key, &Arc<Event>)> + '_> {
        match self {
            Items::Fifo(d) => Box::new(d.iter().map(|(k, e)| (k, e))),
            Items::Sorted(m) => Box::new(m.iter()),
        }
    }

    fn into_vec(self) -> Vec<(Key, Arc<Event>)> {
        match self {
            Items::Fifo(d) => d.into(),
            Items::Sorted(m) => m.into_iter().collect(),
        }
    }
}

/// A consumer's queue.
#[derive(Debug)]
pub(crate) struct Queue {
    items: Items,
    next: u64,
    order: Order,
    discard: Discard,
    limit: usize,
    /// Set when the first event of a batch in waiting arrived (pacing of sequence consumers).
    pub(crate) since: Option<Instant>,
    /// How many queued events have a `StartTime` (none: `pop` takes the first, quickly).
    timed: usize,
    /// At least how many queued events have a deadline (none: a full queue has no expired
    /// event to look for, and discards without a scan).
    expiring: usize,
    /// The store keys of stored events dropped (discarded, expired) since
    /// [`Queue::take_gone`] was last called: to remove from the store.
    gone: Vec<u64>,
}

/// The reference point of deadlines as numbers.
fn epoch() -> Instant {
    static E: OnceLock<Instant> = OnceLock::new();
    *E.get_or_init(Instant::now)
}

impl Queue {
    pub(crate) fn new(order: Order, discard: Discard, limit: usize) -> Queue {
        Queue {
            items: Items::new(order),
            next: 0,
            order,
            discard,
            limit: limit.max(1),
            since: None,
            timed: 0,
            expiring: 0,
            gone: Vec::new(),
        }
    }

    /// The store keys of the stored events dropped since the last call.
    pub(crate) fn take_gone(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.gone)
    }

    /// Notes that `e` was dropped (its stored copy must go).
    fn forget(&mut self, e: &Event) {
        if let Some(k) = e.key {
            self.gone.push(k);
        }
    }

    fn recount(&mut self) {
        if self.timed > 0 {
            self.timed = self.items.iter().filter(|(_, e)| e.start.is_some()).count();
        }
    }

    /// The earliest `StartTime` of an event waiting for it.
    pub(crate) fn next_start(&self, now: Instant) -> Option<Instant> {
        if self.timed == 0 {
            return None;
        }
        self.items
            .iter()
            .filter_map(|(_, e)| e.start.filter(|s| *s > now))
            .min()
    }

    fn key(order: Order, e: &Event, seq: u64) -> Key {
        let primary = match order {
            Order::Fifo => 0,
            Order::Priority => -i64::from(e.priority),
            Order::Deadline => e.deadline.map_or(i64::MAX, |d| {
                i64::try_from(d.saturating_duration_since(epoch()).as_nanos()).unwrap_or(i64::MAX)
            }),
        };
        (primary, seq)
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    pub(crate) fn clear(&mut self) {
        self.items.clear();
        self.since = None;
        self.timed = 0;
        self.expiring = 0;
    }

    /// Changes the policies; the queued events are ordered again.
    pub(crate) fn set_policies(&mut self, order: Order, discard: Discard, limit: usize) {
        self.discard = discard;
        self.limit = limit.max(1);
        if order != self.order {
            self.order = order;
            let mut items = std::mem::replace(&mut self.items, Items::new(order)).into_vec();
            // Arrival order first: a FIFO's keys must come in growing.
            items.sort_by_key(|((_, seq), _)| *seq);
            for ((_, seq), e) in items {
                self.items.insert(Self::key(order, &e, seq), e);
            }
        }
    }

    /// Appends `e`; returns how many events were discarded (expired ones first, then by the
    /// discard policy).
    pub(crate) fn push(&mut self, e: Arc<Event>, now: Instant) -> u64 {
        let mut dropped = 0;
        if self.items.is_empty() {
            self.expiring = 0;
        }
        if self.items.len() >= self.limit && self.expiring > 0 {
            let before = self.items.len();
            let (gone, mut expiring) = (&mut self.gone, 0);
            self.items.retain(|e| {
                let keep = !e.expired(now);
                if let (false, Some(k)) = (keep, e.key) {
                    gone.push(k);
                }
                expiring += usize::from(keep && e.deadline.is_some());
                keep
            });
            self.expiring = expiring;
            dropped += (before - self.items.len()) as u64;
        }
        let seq = self.next;
        self.next += 1;
        if self.items.len() >= self.limit {
            dropped += 1;
            let victim = match self.discard {
                Discard::Lifo => {
                    self.forget(&e);
                    return dropped;
                }
                // The oldest of a FIFO queue is its first: no scan per discarded event
                // (a consumer that stopped reading costs the channel O(1) per event).
                Discard::Fifo => match &self.items {
                    Items::Fifo(d) => d.front().map(|(k, _)| *k),
                    Items::Sorted(m) => m.keys().copied().min_by_key(|k| k.1),
                },
                Discard::Priority => self
                    .items
                    .iter()
                    .min_by_key(|(k, e)| (e.priority, k.1))
                    .map(|(k, _)| *k),
                Discard::Deadline => self
                    .items
                    .iter()
                    .min_by_key(|(k, e)| (e.deadline.is_none(), e.deadline, k.1))
                    .map(|(k, _)| *k),
            };
            // The arriving event is itself the victim when it ranks below every queued one.
            let incoming_loses = match (self.discard, victim.and_then(|k| self.items.get(&k))) {
                (Discard::Priority, Some(v)) => e.priority < v.priority,
                (Discard::Deadline, Some(v)) => match (e.deadline, v.deadline) {
                    (Some(a), Some(b)) => a < b,
                    (Some(_), None) => true,
                    _ => false,
                },
                _ => false,
            };
            if incoming_loses {
                self.forget(&e);
                self.recount();
                return dropped;
            }
            if let Some(v) = victim.and_then(|k| self.items.remove(&k)) {
                self.forget(&v);
            }
        }
        self.recount();
        if self.items.is_empty() {
            self.since = Some(now);
        }
        self.timed += usize::from(e.start.is_some());
        self.expiring += usize::from(e.deadline.is_some());
        self.items.insert(Self::key(self.order, &e, seq), e);
        dropped
    }

    /// The next live event; `expired` counts those dropped on the way.
    pub(crate) fn pop(&mut self, now: Instant, expired: &mut u64) -> Option<Arc<Event>> {
        if self.timed > 0 {
            return self.pop_due(now, expired);
        }
        while let Some((_, e)) = self.items.pop_first() {
            if e.expired(now) {
                *expired += 1;
                self.forget(&e);
                continue;
            }
            if self.items.is_empty() {
                self.since = None;
            }
            return Some(e);
        }
        self.since = None;
        None
    }

    /// Up to `max` live events; those that expired on the way are added to `expired`.
    pub(crate) fn pop_many(
        &mut self,
        max: usize,
        now: Instant,
        expired: &AtomicU64,
    ) -> Vec<Arc<Event>> {
        let mut n = 0;
        let mut events = Vec::new();
        while events.len() < max {
            match self.pop(now, &mut n) {
                Some(e) => events.push(e),
                None => break,
            }
        }
        if n > 0 {
            expired.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        }
        events
    }

    /// `pop` when some events wait for their `StartTime`: the first one not waiting (the
    /// expired ones before it dropped), the waiting ones left in their places.
    fn pop_due(&mut self, now: Instant, expired: &mut u64) -> Option<Arc<Event>> {
        let mut gone = Vec::new();
        let mut due = None;
        for (k, e) in self.items.iter() {
            if e.expired(now) {
                gone.push(*k);
            } else if !e.held(now) {
                due = Some((*k, e.clone()));
                break;
            }
        }
        *expired += gone.len() as u64;
        for k in &gone {
            if let Some(e) = self.items.remove(k) {
                self.forget(&e);
            }
        }
        if let Some((k, _)) = &due {
            self.items.remove(k);
        }
        self.timed = self.items.iter().filter(|(_, e)| e.start.is_some()).count();
        if self.items.is_empty() {
            self.since = None;
        }
        due.map(|(_, e)| e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ev(p: i16, deadline: Option<Instant>, v: i32) -> Arc<Event> {
        Arc::new(Event::new(Body::Any(Any::from_long(v)), p, deadline))
    }

    fn drain(q: &mut Queue, now: Instant) -> Vec<i32> {
        let mut n = 0;
        std::iter::from_fn(|| q.pop(now, &mut n))
            .map(|e| e.any().to_long().unwrap())
            .collect()
    }

    #[test]
    fn fifo_and_priority_order() {
        let now = Instant::now();
        let mut q = Queue::new(Order::Fifo, Discard::Fifo, 10);
        for (p, v) in [(1, 1), (5, 2), (3, 3), (5, 4)] {
            q.push(ev(p, None, v), now);
        }
        assert_eq!(drain(&mut q, now), [1, 2, 3, 4]);
        for (p, v) in [(1, 1), (5, 2), (3, 3), (5, 4)] {
            q.push(ev(p, None, v), now);
        }
        q.set_policies(Order::Priority, Discard::Fifo, 10);
        assert_eq!(drain(&mut q, now), [2, 4, 3, 1]);
    }

    #[test]
    fn deadline_order_and_expiry() {
        let now = Instant::now();
        let s = Duration::from_secs;
        let mut q = Queue::new(Order::Deadline, Discard::Fifo, 10);
        q.push(ev(0, Some(now + s(30)), 1), now);
        q.push(ev(0, None, 2), now);
        q.push(ev(0, Some(now + s(10)), 3), now);
        q.push(ev(0, Some(now + s(1)), 4), now);
        let mut expired = 0;
        let later = now + s(5);
        let got: Vec<i32> = std::iter::from_fn(|| q.pop(later, &mut expired))
            .map(|e| e.any().to_long().unwrap())
            .collect();
        assert_eq!(got, [3, 1, 2]);
        assert_eq!(expired, 1);
    }

    #[test]
    fn discard_policies() {
        let now = Instant::now();
        let fill = |d: Discard| {
            let mut q = Queue::new(Order::Fifo, d, 3);
            let mut dropped = 0;
            for (p, v) in [(2, 1), (1, 2), (3, 3), (2, 4)] {
                dropped += q.push(ev(p, None, v), now);
            }
            assert_eq!(dropped, 1);
            drain(&mut q, now)
        };
        assert_eq!(fill(Discard::Fifo), [2, 3, 4]);
        assert_eq!(fill(Discard::Lifo), [1, 2, 3]);
        assert_eq!(fill(Discard::Priority), [1, 3, 4]);
        // A newcomer of the lowest priority is the one discarded.
        let mut q = Queue::new(Order::Fifo, Discard::Priority, 2);
        q.push(ev(5, None, 1), now);
        q.push(ev(5, None, 2), now);
        assert_eq!(q.push(ev(1, None, 3), now), 1);
        assert_eq!(drain(&mut q, now), [1, 2]);
        // Deadline: the one expiring first goes.
        let s = Duration::from_secs;
        let mut q = Queue::new(Order::Fifo, Discard::Deadline, 2);
        q.push(ev(0, Some(now + s(9)), 1), now);
        q.push(ev(0, Some(now + s(3)), 2), now);
        q.push(ev(0, None, 3), now);
        assert_eq!(drain(&mut q, now), [1, 3]);
    }

    #[test]
    fn a_full_queue_drops_expired_events_first() {
        let now = Instant::now();
        let mut q = Queue::new(Order::Fifo, Discard::Lifo, 2);
        q.push(ev(0, Some(now + Duration::from_millis(1)), 1), now);
        q.push(ev(0, None, 2), now);
        let later = now + Duration::from_secs(1);
        assert_eq!(q.push(ev(0, None, 3), later), 1);
        assert_eq!(drain(&mut q, later), [2, 3]);
        // Once the event with a deadline is gone, a full queue still finds a later one.
        q.push(ev(0, Some(later + Duration::from_millis(1)), 4), later);
        q.push(ev(0, None, 5), later);
        let after = later + Duration::from_secs(1);
        assert_eq!(q.push(ev(0, None, 6), after), 1);
        assert_eq!(drain(&mut q, after), [5, 6]);
    }

    #[test]
    fn fifo_discard_drops_the_oldest_in_any_order() {
        let now = Instant::now();
        for order in [Order::Fifo, Order::Priority] {
            let mut q = Queue::new(order, Discard::Fifo, 3);
            let mut dropped = 0;
            for (p, v) in [(1, 1), (5, 2), (3, 3), (0, 4), (9, 5)] {
                dropped += q.push(ev(p, None, v), now);
            }
            assert_eq!(dropped, 2);
            let want: &[i32] = match order {
                Order::Fifo => &[3, 4, 5],
                _ => &[5, 3, 4],
            };
            assert_eq!(drain(&mut q, now), want, "{order:?}");
        }
    }

    #[test]
    fn an_event_with_uncuttable_runs_is_encoded_for_each_request() {
        use corbina::typecode::{TcKind, TypeCode, UnionLabel, UnionMember};
        // A TypeCode in an Any: its encapsulation starts 4 past a multiple of 8, so the
        // long long labels in it are runs a fragment cut must not split.
        let member = |name, label| {
            UnionMember::new(
                name,
                UnionLabel::Value(label),
                TypeCode::primitive(TcKind::Long),
            )
        };
        let u = TypeCode::create_union_tc(
            "IDL:t/U:1.0",
            "U",
            TypeCode::primitive(TcKind::LongLong),
            vec![member("a", -1), member("b", 1 << 40)],
        )
        .unwrap();
        let e = Event::new(Body::Any(Any::from_type_code(&u).unwrap()), 0, None);
        let ctx = CdrContext::GIOP_1_2;
        let mut stub = CdrWriter::with_byte_order(ByteOrder::Little, ctx);
        e.any().encode(&mut stub).unwrap();
        let mut shared = CdrWriter::with_byte_order(ByteOrder::Little, ctx);
        e.write_any(&mut shared).unwrap();
        assert!(!stub.uncuttable().is_empty());
        assert_eq!(shared.uncuttable(), stub.uncuttable());
        assert_eq!(shared.into_bytes(), stub.into_bytes());
        assert!(e.any_cdr.get().unwrap().is_none(), "nothing shared");
    }

    #[test]
    fn a_shared_encoding_is_what_the_stub_writes() {
        let e = Event::new(Body::Any(Any::from_long(7)), 0, None);
        // The stub's bytes after `prefix` bytes, in `order` and `ctx`; and the shared ones.
        let both = |order, ctx, prefix: usize| {
            let start = |w: &mut CdrWriter<'_>| (0..prefix).for_each(|_| w.write_octet(1));
            let mut stub = CdrWriter::with_byte_order(order, ctx);
            start(&mut stub);
            e.structured().encode(&mut stub).unwrap();
            let mut shared = CdrWriter::with_byte_order(order, ctx);
            start(&mut shared);
            e.write_structured(&mut shared).unwrap();
            (stub.into_bytes(), shared.into_bytes())
        };
        let ctx = CdrContext::GIOP_1_2;
        // The first (aligned) request encodes; the same again, then the ones that cannot
        // take those bytes (another byte order, context or alignment) encode themselves.
        for (order, ctx, prefix) in [
            (ByteOrder::Little, ctx, 8),
            (ByteOrder::Little, ctx, 16),
            (ByteOrder::Big, ctx, 8),
            (ByteOrder::Little, ctx.with_giop_minor(1), 8),
            (ByteOrder::Little, ctx, 4),
        ] {
            let (stub, shared) = both(order, ctx, prefix);
            assert_eq!(stub, shared, "{order:?} {ctx:?} after {prefix}");
        }
        let cached = e.structured_cdr.get().unwrap().as_ref().unwrap();
        assert_eq!((cached.order, cached.ctx), (ByteOrder::Little, ctx));
        // The any alike.
        let mut stub = CdrWriter::with_byte_order(ByteOrder::Big, ctx);
        e.any().encode(&mut stub).unwrap();
        let mut shared = CdrWriter::with_byte_order(ByteOrder::Big, ctx);
        e.write_any(&mut shared).unwrap();
        assert_eq!(stub.into_bytes(), shared.into_bytes());
    }

    #[test]
    fn held_events_wait_for_their_start_time() {
        let now = Instant::now();
        let s = Duration::from_secs;
        let mut q = Queue::new(Order::Fifo, Discard::Fifo, 10);
        let mut held = Event::new(Body::Any(Any::from_long(1)), 0, None);
        held.start = Some(now + s(5));
        q.push(Arc::new(held), now);
        q.push(ev(0, None, 2), now);
        q.push(ev(0, Some(now + Duration::from_millis(1)), 3), now);
        let later = now + s(1);
        let mut expired = 0;
        let first = q.pop(later, &mut expired).and_then(|e| e.any().to_long());
        assert_eq!(first, Some(2));
        assert!(q.pop(later, &mut expired).is_none());
        assert_eq!(expired, 1);
        assert_eq!(q.next_start(later), Some(now + s(5)));
        assert_eq!(drain(&mut q, now + s(6)), [1]);
        assert_eq!(q.next_start(now), None);
    }

    #[test]
    fn translation_between_kinds() {
        let e = Event::new(Body::Any(Any::from_long(7)), 0, None);
        let s = e.structured();
        assert_eq!(s.header.fixed_header.event_type.type_name, "%ANY");
        assert_eq!(s.remainder_of_body.to_long(), Some(7));
        let se = wrap_any(&Any::from_string("x").unwrap());
        let e = Event::new(Body::Structured(se.clone()), 0, None);
        let back = e.any().extract::<StructuredEvent>().unwrap();
        assert_eq!(
            back.remainder_of_body.to_string_value().as_deref(),
            Some("x")
        );
        // An any holding a structured event is that event.
        assert_eq!(
            wrap_any(e.any())
                .remainder_of_body
                .to_string_value()
                .as_deref(),
            Some("x")
        );
    }

    #[test]
    fn stored_form_round_trips_and_rejects_garbage() {
        let now = Instant::now();
        let s = Duration::from_secs;
        let se = wrap_any(&Any::from_string("x").unwrap());
        let mut e = Event::new(Body::Structured(se), -4, Some(now + s(60)));
        e.start = Some(now + s(5));
        let back = Event::decode(&e.encode().unwrap(), 9).unwrap();
        assert_eq!(back.key, Some(9));
        assert_eq!(back.priority, -4);
        assert_eq!(
            back.structured()
                .remainder_of_body
                .to_string_value()
                .as_deref(),
            Some("x")
        );
        // Times survive as wall-clock times, to within the conversion's rounding.
        let near = |a: Option<Instant>, b: Instant| {
            let a = a.unwrap();
            a.max(b) - a.min(b) < Duration::from_millis(100)
        };
        assert!(near(back.deadline, now + s(60)));
        assert!(near(back.start, now + s(5)));
        let any = Event::new(Body::Any(Any::from_long(3)), 0, None);
        let back = Event::decode(&any.encode().unwrap(), 0).unwrap();
        assert_eq!(
            (back.any().to_long(), back.deadline, back.start),
            (Some(3), None, None)
        );
        // Truncations and a bad kind are errors, not panics.
        let bytes = any.encode().unwrap();
        for n in 0..bytes.len() {
            assert!(Event::decode(&bytes[..n], 0).is_err(), "{n} bytes");
        }
        let mut bad = bytes.clone();
        bad[0] = 7;
        assert!(Event::decode(&bad, 0).is_err());
    }

    #[test]
    fn dropped_stored_events_are_reported_once() {
        let now = Instant::now();
        let keyed = |v: i32, k: u64| Arc::new(ev(0, None, v).with_key(k));
        let mut q = Queue::new(Order::Fifo, Discard::Fifo, 2);
        for k in 0..3 {
            q.push(keyed(k as i32, k), now);
        }
        assert_eq!(q.take_gone(), [0]);
        assert!(q.take_gone().is_empty());
        // A LIFO queue drops the newcomer; an expired event goes when met.
        let mut q = Queue::new(Order::Fifo, Discard::Lifo, 1);
        q.push(
            Arc::new(ev(0, Some(now + Duration::from_millis(1)), 1).with_key(5)),
            now,
        );
        q.push(keyed(2, 6), now);
        assert_eq!(q.take_gone(), [6]);
        let mut n = 0;
        assert!(q.pop(now + Duration::from_secs(1), &mut n).is_none());
        assert_eq!((n, q.take_gone()), (1, vec![5]));
        // Events without a key (best effort) are never reported.
        q.push(ev(0, None, 3), now);
        q.push(ev(0, None, 4), now);
        assert!(q.take_gone().is_empty());
    }
}
