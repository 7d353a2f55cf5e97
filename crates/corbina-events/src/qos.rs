//! The notification QoS properties the channel honours, as set on a channel, an admin or a
//! proxy (a proxy's are its admin's at its creation, overridden by its own; an admin's its
//! channel's), and the admin properties of a channel.
//!
//! | property | type | values | effect |
//! |---|---|---|---|
//! | `EventReliability` | short | `BestEffort`, `Persistent` (only with `ConnectionReliability` `Persistent`) | `Persistent`: each consumer's undelivered events are stored until delivered, and delivered after a restart (at most its queue's bound of them) |
//! | `ConnectionReliability` | short | `BestEffort`, `Persistent` | connections are stored and survive a restart in both cases |
//! | `Priority` | short | any | an event's priority when its header has none |
//! | `OrderPolicy` | short | `AnyOrder`, `FifoOrder`, `PriorityOrder`, `DeadlineOrder` | the order of a consumer's queue |
//! | `DiscardPolicy` | short | `AnyOrder`, `FifoOrder`, `LifoOrder`, `PriorityOrder`, `DeadlineOrder` | which event a full queue drops |
//! | `MaxEventsPerConsumer` | long | ≥ 0 (0: the channel's `MaxQueueLength`) | the bound of a consumer's queue |
//! | `Timeout` | TimeBase::TimeT | 100 ns units, 0 none | an event's lifetime when its header has none |
//! | `StopTimeSupported`, `StartTimeSupported` | boolean | `FALSE`, `TRUE` | whether a header's `StopTime` (drop the event after it) and `StartTime` (hold it until then), TimeBase::UtcT, are honoured; set on the supplier's side |
//! | `MaximumBatchSize` | long | ≥ 1 | the most events in one sequence push |
//! | `PacingInterval` | TimeBase::TimeT | 100 ns units, 0 none | how long a sequence push waits to fill its batch |
//!
//! Anything else is refused with `UnsupportedQoS` (`BAD_PROPERTY`), a value of the wrong
//! type with `BAD_TYPE`, a value out of range with `BAD_VALUE`, a value not supported with
//! `UNSUPPORTED_VALUE`.

use std::time::Duration;

use corbina::Any;

use crate::cos_notification::{
    NamedPropertyRange, Property, PropertyError, PropertyRange, QoSErrorCode,
};
use crate::queue::{Discard, Order};

/// The QoS set at one level (`None`: not set there).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Qos {
    pub(crate) event_reliability: Option<i16>,
    pub(crate) connection_reliability: Option<i16>,
    pub(crate) priority: Option<i16>,
    pub(crate) order: Option<i16>,
    pub(crate) discard: Option<i16>,
    pub(crate) max_events: Option<i32>,
    pub(crate) timeout: Option<u64>,
    pub(crate) batch: Option<i32>,
    pub(crate) pacing: Option<u64>,
    pub(crate) start_time: Option<bool>,
    pub(crate) stop_time: Option<bool>,
}

const ANY_ORDER: i16 = 0;
const PRIORITY_ORDER: i16 = 2;
const DEADLINE_ORDER: i16 = 3;
const LIFO_ORDER: i16 = 4;

fn error(code: QoSErrorCode, name: &str) -> PropertyError {
    PropertyError {
        code,
        name: name.to_owned(),
        available_range: PropertyRange {
            low_val: Any::default(),
            high_val: Any::default(),
        },
    }
}

fn short(a: &Any) -> Option<i16> {
    a.to_short()
}

fn long(a: &Any) -> Option<i32> {
    a.to_long()
        .or_else(|| a.to_short().map(i32::from))
        .or_else(|| a.to_ulong().and_then(|v| i32::try_from(v).ok()))
}

fn time(a: &Any) -> Option<u64> {
    a.to_ulonglong()
        .or_else(|| a.to_longlong().and_then(|v| u64::try_from(v).ok()))
}

impl Qos {
    /// The properties of `props` over `self`, or every error they hold.
    pub(crate) fn with(&self, props: &[Property]) -> Result<Qos, Vec<PropertyError>> {
        use QoSErrorCode::*;
        let mut q = self.clone();
        let mut errs = Vec::new();
        for p in props {
            let n = p.name.as_str();
            let v = &p.value;
            let r: Result<(), QoSErrorCode> = match n {
                "EventReliability" => match short(v) {
                    Some(r @ (0 | 1)) => {
                        q.event_reliability = Some(r);
                        Ok(())
                    }
                    Some(_) => Err(BadValue),
                    None => Err(BadType),
                },
                "ConnectionReliability" => match short(v) {
                    Some(r @ (0 | 1)) => {
                        q.connection_reliability = Some(r);
                        Ok(())
                    }
                    Some(_) => Err(BadValue),
                    None => Err(BadType),
                },
                "Priority" => short(v).map(|p| q.priority = Some(p)).ok_or(BadType),
                "OrderPolicy" => match short(v) {
                    Some(o @ ANY_ORDER..=DEADLINE_ORDER) => {
                        q.order = Some(o);
                        Ok(())
                    }
                    Some(_) => Err(BadValue),
                    None => Err(BadType),
                },
                "DiscardPolicy" => match short(v) {
                    Some(o @ ANY_ORDER..=LIFO_ORDER) => {
                        q.discard = Some(o);
                        Ok(())
                    }
                    Some(_) => Err(BadValue),
                    None => Err(BadType),
                },
                "MaxEventsPerConsumer" => match long(v) {
                    Some(m) if m >= 0 => {
                        q.max_events = Some(m);
                        Ok(())
                    }
                    Some(_) => Err(BadValue),
                    None => Err(BadType),
                },
                "Timeout" => time(v).map(|t| q.timeout = Some(t)).ok_or(BadType),
                "StartTimeSupported" => v
                    .to_boolean()
                    .map(|b| q.start_time = Some(b))
                    .ok_or(BadType),
                "StopTimeSupported" => v.to_boolean().map(|b| q.stop_time = Some(b)).ok_or(BadType),
                "MaximumBatchSize" => match long(v) {
                    Some(b) if b >= 1 => {
                        q.batch = Some(b);
                        Ok(())
                    }
                    Some(_) => Err(BadValue),
                    None => Err(BadType),
                },
                "PacingInterval" => time(v).map(|t| q.pacing = Some(t)).ok_or(BadType),
                _ => Err(BadProperty),
            };
            if let Err(code) = r {
                errs.push(error(code, n));
            }
        }
        // Events stored for connections that are not: a combination CosNotification
        // leaves undefined, refused.
        if q.event_reliability == Some(1) && q.connection_reliability != Some(1) {
            errs.push(error(UnsupportedValue, "EventReliability"));
        }
        if errs.is_empty() {
            Ok(q)
        } else {
            Err(errs)
        }
    }

    /// Whether undelivered events are stored (`EventReliability` and
    /// `ConnectionReliability` both `Persistent`).
    pub(crate) fn persistent_events(&self) -> bool {
        self.event_reliability == Some(1) && self.connection_reliability == Some(1)
    }

    pub(crate) fn priority(&self) -> i16 {
        self.priority.unwrap_or(0)
    }

    pub(crate) fn order(&self) -> Order {
        match self.order {
            Some(PRIORITY_ORDER) => Order::Priority,
            Some(DEADLINE_ORDER) => Order::Deadline,
            _ => Order::Fifo,
        }
    }

    pub(crate) fn discard(&self) -> Discard {
        match self.discard {
            Some(LIFO_ORDER) => Discard::Lifo,
            Some(PRIORITY_ORDER) => Discard::Priority,
            Some(DEADLINE_ORDER) => Discard::Deadline,
            _ => Discard::Fifo,
        }
    }

    /// The bound of a consumer's queue, given the channel's `MaxQueueLength`.
    pub(crate) fn max_events(&self, channel_max: u32) -> usize {
        match self.max_events {
            Some(m) if m > 0 => m as usize,
            _ => channel_max.max(1) as usize,
        }
    }

    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.timeout
            .filter(|t| *t > 0)
            .map(|t| Duration::from_nanos(t.saturating_mul(100)))
    }

    pub(crate) fn batch(&self) -> usize {
        self.batch.map_or(1, |b| b.max(1) as usize)
    }

    pub(crate) fn pacing(&self) -> Duration {
        Duration::from_nanos(self.pacing.unwrap_or(0).saturating_mul(100))
    }

    /// Every property, as `get_qos` answers (the defaults for those not set).
    pub(crate) fn properties(&self) -> Vec<Property> {
        let p = |name: &str, value: Any| Property {
            name: name.to_owned(),
            value,
        };
        vec![
            p(
                "EventReliability",
                Any::from_short(self.event_reliability.unwrap_or(0)),
            ),
            p(
                "ConnectionReliability",
                Any::from_short(self.connection_reliability.unwrap_or(0)),
            ),
            p("Priority", Any::from_short(self.priority())),
            p(
                "OrderPolicy",
                Any::from_short(self.order.unwrap_or(ANY_ORDER)),
            ),
            p(
                "DiscardPolicy",
                Any::from_short(self.discard.unwrap_or(ANY_ORDER)),
            ),
            p(
                "MaxEventsPerConsumer",
                Any::from_long(self.max_events.unwrap_or(0)),
            ),
            p("Timeout", Any::from_ulonglong(self.timeout.unwrap_or(0))),
            p(
                "StartTimeSupported",
                Any::from_boolean(self.start_time == Some(true)),
            ),
            p(
                "StopTimeSupported",
                Any::from_boolean(self.stop_time == Some(true)),
            ),
            p(
                "MaximumBatchSize",
                Any::from_long(i32::try_from(self.batch()).unwrap_or(i32::MAX)),
            ),
            p(
                "PacingInterval",
                Any::from_ulonglong(self.pacing.unwrap_or(0)),
            ),
        ]
    }

    /// What `validate_qos` answers for properties that would be accepted: the range of each.
    pub(crate) fn ranges(props: &[Property]) -> Vec<NamedPropertyRange> {
        let range = |lo: Any, hi: Any| PropertyRange {
            low_val: lo,
            high_val: hi,
        };
        props
            .iter()
            .filter_map(|p| {
                let r = match p.name.as_str() {
                    "EventReliability" => range(Any::from_short(0), Any::from_short(1)),
                    "ConnectionReliability" => range(Any::from_short(0), Any::from_short(1)),
                    "Priority" => range(Any::from_short(-32767), Any::from_short(32767)),
                    "OrderPolicy" => range(Any::from_short(0), Any::from_short(3)),
                    "DiscardPolicy" => range(Any::from_short(0), Any::from_short(4)),
                    "MaxEventsPerConsumer" => range(Any::from_long(0), Any::from_long(i32::MAX)),
                    "MaximumBatchSize" => range(Any::from_long(1), Any::from_long(i32::MAX)),
                    "Timeout" | "PacingInterval" => {
                        range(Any::from_ulonglong(0), Any::from_ulonglong(u64::MAX))
                    }
                    "StartTimeSupported" | "StopTimeSupported" => {
                        range(Any::from_boolean(false), Any::from_boolean(true))
                    }
                    _ => return None,
                };
                Some(NamedPropertyRange {
                    name: p.name.clone(),
                    range: r,
                })
            })
            .collect()
    }

    /// The stored form: the properties set.
    pub(crate) fn stored(&self) -> Vec<Property> {
        let mut props = Vec::new();
        let mut put = |name: &str, v: Option<Any>| {
            if let Some(value) = v {
                props.push(Property {
                    name: name.to_owned(),
                    value,
                });
            }
        };
        put(
            "ConnectionReliability",
            self.connection_reliability.map(Any::from_short),
        );
        put(
            "EventReliability",
            self.event_reliability.map(Any::from_short),
        );
        put("Priority", self.priority.map(Any::from_short));
        put("OrderPolicy", self.order.map(Any::from_short));
        put("DiscardPolicy", self.discard.map(Any::from_short));
        put("MaxEventsPerConsumer", self.max_events.map(Any::from_long));
        put("Timeout", self.timeout.map(Any::from_ulonglong));
        put("MaximumBatchSize", self.batch.map(Any::from_long));
        put("PacingInterval", self.pacing.map(Any::from_ulonglong));
        put("StartTimeSupported", self.start_time.map(Any::from_boolean));
        put("StopTimeSupported", self.stop_time.map(Any::from_boolean));
        props
    }
}

/// A channel's admin properties (`MaxQueueLength` is the default bound of each consumer's
/// queue; `MaxConsumers`/`MaxSuppliers` bound the proxies of each side, 0 for no bound).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct AdminProps {
    pub(crate) max_consumers: u32,
    pub(crate) max_suppliers: u32,
}

/// Admin properties over a channel's `max_queue` and `props`, or their errors.
pub(crate) fn admin_props(
    max_queue: &mut u32,
    props: &mut AdminProps,
    given: &[Property],
) -> Result<(), Vec<PropertyError>> {
    use QoSErrorCode::*;
    let mut errs = Vec::new();
    let (mut q, mut p) = (*max_queue, props.clone());
    for g in given {
        let n = g.name.as_str();
        let v = long(&g.value);
        let r = match n {
            "MaxQueueLength" | "MaxConsumers" | "MaxSuppliers" => match v {
                Some(v) if v >= 0 => {
                    let v = v as u32;
                    match n {
                        "MaxQueueLength" => q = if v == 0 { crate::DEFAULT_MAX_QUEUE } else { v },
                        "MaxConsumers" => p.max_consumers = v,
                        _ => p.max_suppliers = v,
                    }
                    Ok(())
                }
                Some(_) => Err(BadValue),
                None => Err(BadType),
            },
            "RejectNewEvents" => match g.value.to_boolean() {
                Some(false) => Ok(()),
                Some(true) => Err(UnsupportedValue),
                None => Err(BadType),
            },
            _ => Err(BadProperty),
        };
        if let Err(code) = r {
            errs.push(error(code, n));
        }
    }
    if errs.is_empty() {
        *max_queue = q;
        *props = p;
        Ok(())
    } else {
        Err(errs)
    }
}

/// `get_admin`'s answer.
pub(crate) fn admin_properties(max_queue: u32, props: &AdminProps) -> Vec<Property> {
    let p = |name: &str, v: u32| Property {
        name: name.to_owned(),
        value: Any::from_long(i32::try_from(v).unwrap_or(i32::MAX)),
    };
    vec![
        p("MaxQueueLength", max_queue),
        p("MaxConsumers", props.max_consumers),
        p("MaxSuppliers", props.max_suppliers),
        Property {
            name: "RejectNewEvents".into(),
            value: Any::from_boolean(false),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prop(name: &str, value: Any) -> Property {
        Property {
            name: name.into(),
            value,
        }
    }

    #[test]
    fn supported_properties_parse_over_inherited_ones() {
        let admin = Qos::default()
            .with(&[
                prop("OrderPolicy", Any::from_short(2)),
                prop("MaxEventsPerConsumer", Any::from_long(5)),
                prop("Timeout", Any::from_ulonglong(10_000_000)),
            ])
            .unwrap();
        // A proxy starts with its admin's QoS.
        let proxy = admin
            .with(&[
                prop("DiscardPolicy", Any::from_short(4)),
                prop("MaximumBatchSize", Any::from_long(8)),
            ])
            .unwrap();
        assert_eq!(proxy.order(), Order::Priority);
        assert_eq!(proxy.discard(), Discard::Lifo);
        assert_eq!(proxy.max_events(1024), 5);
        assert_eq!(proxy.timeout(), Some(Duration::from_secs(1)));
        assert_eq!(proxy.batch(), 8);
        assert_eq!(Qos::default().max_events(77), 77);
    }

    #[test]
    fn unsupported_and_bad_properties_are_refused() {
        let errs = Qos::default()
            .with(&[
                prop("EventReliability", Any::from_short(1)),
                prop("OrderPolicy", Any::from_long(1)),
                prop("OrderPolicy", Any::from_short(9)),
                prop("Colour", Any::from_short(1)),
                prop("StartTimeSupported", Any::from_long(1)),
            ])
            .unwrap_err();
        let codes: Vec<QoSErrorCode> = errs.iter().map(|e| e.code).collect();
        assert_eq!(
            codes,
            [
                QoSErrorCode::BadType,
                QoSErrorCode::BadValue,
                QoSErrorCode::BadProperty,
                QoSErrorCode::BadType,
                // Persistent events need persistent connections.
                QoSErrorCode::UnsupportedValue,
            ]
        );
    }

    #[test]
    fn stored_form_round_trips() {
        let q = Qos::default()
            .with(&[
                prop("Priority", Any::from_short(-3)),
                prop("PacingInterval", Any::from_ulonglong(5)),
                prop("ConnectionReliability", Any::from_short(1)),
                prop("EventReliability", Any::from_short(1)),
                prop("StartTimeSupported", Any::from_boolean(true)),
                prop("StopTimeSupported", Any::from_boolean(false)),
            ])
            .unwrap();
        assert_eq!(Qos::default().with(&q.stored()).unwrap(), q);
        assert_eq!((q.start_time, q.stop_time), (Some(true), Some(false)));
        assert!(q.persistent_events());
        assert!(!Qos::default().persistent_events());
    }

    #[test]
    fn admin_properties_bound_what_they_name() {
        let (mut q, mut p) = (100, AdminProps::default());
        admin_props(
            &mut q,
            &mut p,
            &[
                prop("MaxQueueLength", Any::from_long(7)),
                prop("MaxConsumers", Any::from_long(2)),
            ],
        )
        .unwrap();
        assert_eq!((q, p.max_consumers, p.max_suppliers), (7, 2, 0));
        let e = admin_props(&mut q, &mut p, &[prop("MaxSuppliers", Any::from_long(-1))]);
        assert_eq!(e.unwrap_err()[0].code, QoSErrorCode::BadValue);
        assert_eq!(q, 7);
    }
}
