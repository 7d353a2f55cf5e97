//! The event-channel experiment (`events-channel`, `events-client`, `suite --only events`):
//! one supplier pushing events (a `sequence<octet>` of the point's size, stamped with its
//! send time: as the `any` itself, or as a structured event's `remainder_of_body`) through
//! an event channel to N push consumers in the client's process, on Corbina's channel
//! (`corbina-events`), omniEvents (`any` only) and JacORB's notification service, all on
//! loopback. Structured points may give each consumer's proxy a filter (ETCL, from the
//! channel's default filter factory) that every event passes: what filtering costs.
//!
//! Each point (one `events-client` run) measures:
//! - **events/s per consumer**: the supplier pushes as fast as the channel takes them;
//!   events delivered to each consumer over the time from the first push to the last
//!   delivery (a channel that drops events when a queue is full counts them as not
//!   delivered: `delivered` says what fraction arrived); the median of `rounds` floods;
//! - **latency**, push to delivery, median and p99: one event at a time, the next pushed
//!   once every consumer has the last, so it is the channel's own delay, not queueing;
//! - with `--slow`, one more consumer sleeping 100 ms per push: what it costs the others
//!   (their events/s against the same point without it).
//!
//! Records: experiment `events`, `impl` the channel (`corbina`, `omniEvents`, `JacORB`),
//! `mode` the event kind (`any`, `structured`), `op` `push`, `size`, `consumers`,
//! `slow_consumer`, `filter`, `events_per_s`, `delivered`, `median_us`/`p99_us`.

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use corbina::config::Endpoint;
use corbina::typecode::TypeCode;
use corbina::{Any, Orb, OrbConfig, SystemException};
use corbina_events::cos_event_channel_admin::{EventChannel, ProxyPushConsumer, ProxyPushSupplier};
use corbina_events::cos_event_comm::push_consumer::PushError;
use corbina_events::cos_event_comm::{PushConsumer, PushConsumerServant, PushConsumerSkeleton};
use corbina_events::cos_life_cycle::NameValuePair;
use corbina_events::cos_naming::NameComponent;
use corbina_events::cos_notification::{
    EventHeader, EventType, FixedEventHeader, Property, StructuredEvent,
};
use corbina_events::cos_notify_channel_admin::{
    ClientType, EventChannel as NotifyChannel, EventChannelFactory as NotifyFactory,
    StructuredProxyPushConsumer, StructuredProxyPushSupplier,
};
use corbina_events::cos_notify_comm::notify_publish::OfferChangeError;
use corbina_events::cos_notify_comm::structured_push_consumer::PushStructuredEventError;
use corbina_events::cos_notify_comm::{
    NotifyPublishServant, StructuredPushConsumer, StructuredPushConsumerServant,
    StructuredPushConsumerSkeleton,
};
use corbina_events::cos_notify_filter::ConstraintExp;
use corbina_events::omni_events::EventChannelFactory as OmniFactory;
use corbina_events::{EventService, Options};

use crate::record::Record;
use crate::stats::summarize;

/// The experiment's name in records and `--only`.
pub const EXPERIMENT: &str = "events";
/// omniEvents' implementation name in records.
pub const OMNIEVENTS: &str = "omniEvents";
/// JacORB's notification service's implementation name in records.
pub const JACORB: &str = "JacORB";

/// How long the slow consumer sleeps in each push.
pub const SLOW_PUSH: Duration = Duration::from_millis(100);

/// How long a consumer may go without an event before a flood counts as over.
const IDLE: Duration = Duration::from_secs(1);

/// How long a paced sample waits for every consumer.
const SAMPLE_WAIT: Duration = Duration::from_secs(2);

fn sys(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// `events-channel`: Corbina's event service on 127.0.0.1 (`config`'s endpoints if any),
/// its database in `data_dir`; the default channel's IOR, then the notification channel
/// factory's, one per line.
pub fn serve(
    mut config: OrbConfig,
    data_dir: &Path,
    push_window: usize,
) -> Result<(Orb, EventService, String), String> {
    if config.endpoints.is_empty() {
        config.endpoints = vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }];
    }
    let orb = Orb::with_config(config);
    let options = Options {
        push_window,
        ..Options::new(data_dir)
    };
    let service = EventService::start(&orb, &options)
        .map_err(|e| format!("starting the event service in {}: {e}", data_dir.display()))?;
    let channel = orb
        .object_to_string(service.channel().as_object())
        .map_err(sys)?;
    let (host, port) = service.endpoint();
    let factory = format!(
        "corbaloc::{host}:{port}/{}",
        corbina_events::NOTIFY_FACTORY_KEY
    );
    let factory = orb
        .object_to_string(&orb.string_to_object(&factory).map_err(sys)?)
        .map_err(sys)?;
    Ok((orb, service, format!("{channel}\n{factory}")))
}

/// The events a point pushes (`events-client --kind any|structured`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// CosEvent `any` events (the payload is the `any`).
    Any,
    /// CosNotification structured events (the payload is the `remainder_of_body`), pushed
    /// to structured push consumers.
    Structured,
}

impl Kind {
    /// The name in records and options.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Any => "any",
            Kind::Structured => "structured",
        }
    }
}

/// One `events-client` point.
#[derive(Debug, Clone)]
pub struct ClientOpts {
    /// The channel: a reference to an event channel, `omnievents:URL` (a new channel made by
    /// omniEvents' factory at URL) or `notify:REF` (the first channel of a CosNotification
    /// channel factory, made if it has none; JacORB's `-channels 1` makes one).
    pub channel: String,
    /// The events pushed.
    pub kind: Kind,
    /// Structured events only: each consumer's proxy filters (every event passes).
    pub filter: bool,
    /// The implementation name written in the records.
    pub implementation: String,
    /// Push consumers (besides the slow one).
    pub consumers: usize,
    /// Events pushed in the flood.
    pub events: usize,
    /// Payload bytes per event (at least 8: the send time).
    pub size: usize,
    /// Add a consumer sleeping [`SLOW_PUSH`] per push.
    pub slow: bool,
    /// Paced latency samples (0: none).
    pub samples: usize,
    /// Floods: the record has the median's events/s (at least 1).
    pub rounds: usize,
}

/// A push consumer counting what it receives and how late.
struct Sink {
    epoch: Instant,
    tc: TypeCode,
    delay: Duration,
    got: Mutex<Got>,
    /// Shared by the fast consumers: deliveries so far, and the paced supplier waiting.
    total: Option<Arc<(Mutex<usize>, Condvar)>>,
}

#[derive(Default)]
struct Got {
    latencies_ns: Vec<u64>,
    last: Option<Instant>,
}

impl PushConsumerServant for Sink {
    fn push(&self, data: &Any) -> Result<(), PushError> {
        self.arrived(data);
        Ok(())
    }

    fn disconnect_push_consumer(&self) -> Result<(), SystemException> {
        Ok(())
    }
}

impl StructuredPushConsumerServant for Sink {
    fn push_structured_event(&self, e: &StructuredEvent) -> Result<(), PushStructuredEventError> {
        self.arrived(&e.remainder_of_body);
        Ok(())
    }

    fn disconnect_structured_push_consumer(&self) -> Result<(), SystemException> {
        Ok(())
    }
}

impl NotifyPublishServant for Sink {
    fn offer_change(&self, _: &[EventType], _: &[EventType]) -> Result<(), OfferChangeError> {
        Ok(())
    }
}

impl Sink {
    /// Counts an event whose payload (`sequence<octet>`, the send time first) is `data`.
    fn arrived(&self, data: &Any) {
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
        let now = self.epoch.elapsed().as_nanos() as u64;
        let bytes: Vec<u8> = data.extract_as(&self.tc).unwrap_or_default();
        let sent = bytes
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .map_or(now, u64::from_le_bytes);
        {
            let mut g = self.got.lock().unwrap_or_else(|p| p.into_inner());
            g.latencies_ns.push(now.saturating_sub(sent));
            g.last = Some(Instant::now());
        }
        if let Some(t) = &self.total {
            *t.0.lock().unwrap_or_else(|p| p.into_inner()) += 1;
            t.1.notify_all();
        }
    }

    fn take(&self) -> Got {
        std::mem::take(&mut *self.got.lock().unwrap_or_else(|p| p.into_inner()))
    }
    fn count(&self) -> usize {
        self.got
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .latencies_ns
            .len()
    }
}

/// The channel `spec` names (see [`ClientOpts::channel`]): as a notification channel when
/// it is one (`notify:`), and as a CosEvent channel.
fn channel(orb: &Orb, spec: &str) -> Result<(Option<NotifyChannel>, EventChannel), String> {
    let obj = |s: &str| orb.string_to_object(s).map_err(|e| format!("{s}: {e}"));
    if let Some(url) = spec.strip_prefix("omnievents:") {
        // omniEvents' factory (a CosLifeCycle GenericFactory) makes a channel per call.
        let factory = OmniFactory::narrow(&obj(url)?).map_err(sys)?;
        let key = [NameComponent {
            id: "EventChannel".into(),
            kind: "object interface".into(),
        }];
        let name = format!("ttcp{}", std::process::id());
        let criteria = [NameValuePair {
            name: "InsName".into(),
            value: Any::from_string(&name).map_err(sys)?,
        }];
        let ch = factory
            .create_object(&key, &criteria)
            .map_err(|e| format!("omniEvents' create_object: {e}"))?
            .ok_or("omniEvents' factory returned nil")?;
        let ch = EventChannel::narrow(&ch).map_err(|e| format!("not an event channel: {e}"))?;
        return Ok((None, ch));
    }
    if let Some(r) = spec.strip_prefix("notify:") {
        let factory = NotifyFactory::narrow(&obj(r)?).map_err(sys)?;
        let ids = factory
            .get_all_channels()
            .map_err(|e| format!("get_all_channels: {e}"))?;
        let ch = match ids.first() {
            Some(&id) => factory
                .get_event_channel(id)
                .map_err(|e| format!("get_event_channel({id}): {e}"))?,
            None => {
                factory
                    .create_channel(&[], &[])
                    .map_err(|e| format!("create_channel: {e}"))?
                    .0
            }
        }
        .ok_or("the notification factory returned a nil channel")?;
        // A notification channel is a CosEvent channel too (its interface inherits it).
        let cos = EventChannel::unchecked_narrow(ch.as_object());
        return Ok((Some(ch), cos));
    }
    let ch = EventChannel::narrow(&obj(spec)?).map_err(|e| format!("not an event channel: {e}"))?;
    Ok((None, ch))
}

/// A structured event of type `Bench/Tick`, priority 1, carrying `payload`.
fn structured(payload: Any) -> StructuredEvent {
    StructuredEvent {
        header: EventHeader {
            fixed_header: FixedEventHeader {
                event_type: EventType {
                    domain_name: "Bench".into(),
                    type_name: "Tick".into(),
                },
                event_name: String::new(),
            },
            variable_header: vec![Property {
                name: "Priority".into(),
                value: Any::from_short(1),
            }],
        },
        filterable_data: Vec::new(),
        remainder_of_body: payload,
    }
}

/// The filter structured points give each consumer's proxy: every event passes it, after
/// its type is matched and its constraint evaluated.
const FILTER_CONSTRAINT: &str = "$.header.variable_header(Priority) >= 0";

/// A consumer's proxy, to disconnect at the end.
enum ConsumerProxy {
    Any(ProxyPushSupplier),
    Structured(StructuredProxyPushSupplier),
}

/// The supplier's proxy.
enum SupplierProxy {
    Any(ProxyPushConsumer),
    Structured(StructuredProxyPushConsumer),
}

/// What one flood measured.
struct Flood {
    /// Events per second per fast consumer.
    events_per_s: f64,
    /// Fraction of the events × consumers that arrived.
    delivered: f64,
}

/// The client's side of a point: its ORB, the consumers and the supplier's proxy.
struct Bench {
    orb: Orb,
    epoch: Instant,
    tc: TypeCode,
    fast: Vec<Arc<Sink>>,
    slow: Option<Arc<Sink>>,
    proxies: Vec<ConsumerProxy>,
    supplier: SupplierProxy,
    total: Arc<(Mutex<usize>, Condvar)>,
}

impl Bench {
    fn connect(o: &ClientOpts) -> Result<Bench, String> {
        let orb = Orb::with_config(OrbConfig {
            endpoints: vec![Endpoint {
                host: "127.0.0.1".into(),
                port: 0,
            }],
            call_timeout: Some(Duration::from_secs(30)),
            ..OrbConfig::default()
        });
        let poa = orb.root_poa();
        poa.the_poa_manager().activate().map_err(sys)?;
        let (notify, ch) = channel(&orb, &o.channel)?;
        let notify = match (o.kind, notify) {
            (Kind::Any, _) => None,
            (Kind::Structured, Some(n)) => Some(n),
            (Kind::Structured, None) => {
                return Err("structured events need a notification channel (notify:REF)".into())
            }
        };
        let filter = match (&notify, o.filter) {
            (Some(n), true) => {
                let ff = n
                    .get_default_filter_factory()
                    .map_err(sys)?
                    .ok_or("no default filter factory")?;
                let f = ff
                    .create_filter("EXTENDED_TCL")
                    .map_err(|e| format!("create_filter: {e}"))?
                    .ok_or("create_filter returned nil")?;
                f.add_constraints(&[ConstraintExp {
                    event_types: vec![EventType {
                        domain_name: "Bench".into(),
                        type_name: "Tick".into(),
                    }],
                    constraint_expr: FILTER_CONSTRAINT.into(),
                }])
                .map_err(|e| format!("add_constraints: {e}"))?;
                Some(f)
            }
            (None, true) => return Err("--filter needs structured events".into()),
            _ => None,
        };
        let epoch = Instant::now();
        let tc = TypeCode::create_sequence_tc(0, TypeCode::OCTET);
        let total = Arc::new((Mutex::new(0), Condvar::new()));
        let mut proxies = Vec::new();
        let mut connect = |delay: Duration| -> Result<Arc<Sink>, String> {
            let sink = Arc::new(Sink {
                epoch,
                tc: tc.clone(),
                delay,
                got: Mutex::new(Got::default()),
                total: delay.is_zero().then(|| total.clone()),
            });
            let proxy = match &notify {
                None => {
                    let id = poa
                        .activate_object(Arc::new(PushConsumerSkeleton::from_arc(sink.clone())))
                        .map_err(sys)?;
                    // Through the socket, as a consumer in another process would be.
                    let obj = poa.id_to_reference(&id).map_err(sys)?.without_collocation();
                    let proxy = ch
                        .for_consumers()
                        .map_err(sys)?
                        .ok_or("for_consumers returned nil")?
                        .obtain_push_supplier()
                        .map_err(sys)?
                        .ok_or("obtain_push_supplier returned nil")?;
                    proxy
                        .connect_push_consumer(Some(&PushConsumer::unchecked_narrow(&obj)))
                        .map_err(|e| format!("connect_push_consumer: {e}"))?;
                    ConsumerProxy::Any(proxy)
                }
                Some(n) => {
                    let id = poa
                        .activate_object(Arc::new(StructuredPushConsumerSkeleton::from_arc(
                            sink.clone(),
                        )))
                        .map_err(sys)?;
                    let obj = poa.id_to_reference(&id).map_err(sys)?.without_collocation();
                    let (proxy, _) = n
                        .get_default_consumer_admin()
                        .map_err(sys)?
                        .ok_or("no default consumer admin")?
                        .obtain_notification_push_supplier(ClientType::StructuredEvent)
                        .map_err(|e| format!("obtain_notification_push_supplier: {e}"))?;
                    let proxy = StructuredProxyPushSupplier::narrow(
                        proxy.ok_or("a nil proxy")?.as_object(),
                    )
                    .map_err(sys)?;
                    if let Some(f) = &filter {
                        proxy.add_filter(Some(f)).map_err(sys)?;
                    }
                    proxy
                        .connect_structured_push_consumer(Some(
                            &StructuredPushConsumer::unchecked_narrow(&obj),
                        ))
                        .map_err(|e| format!("connect_structured_push_consumer: {e}"))?;
                    ConsumerProxy::Structured(proxy)
                }
            };
            proxies.push(proxy);
            Ok(sink)
        };
        let fast = (0..o.consumers.max(1))
            .map(|_| connect(Duration::ZERO))
            .collect::<Result<Vec<_>, _>>()?;
        let slow = o.slow.then(|| connect(SLOW_PUSH)).transpose()?;
        let supplier = match &notify {
            None => {
                let p = ch
                    .for_suppliers()
                    .map_err(sys)?
                    .ok_or("for_suppliers returned nil")?
                    .obtain_push_consumer()
                    .map_err(sys)?
                    .ok_or("obtain_push_consumer returned nil")?;
                p.connect_push_supplier(None)
                    .map_err(|e| format!("connect_push_supplier: {e}"))?;
                SupplierProxy::Any(p)
            }
            Some(n) => {
                let (p, _) = n
                    .get_default_supplier_admin()
                    .map_err(sys)?
                    .ok_or("no default supplier admin")?
                    .obtain_notification_push_consumer(ClientType::StructuredEvent)
                    .map_err(|e| format!("obtain_notification_push_consumer: {e}"))?;
                let p = StructuredProxyPushConsumer::narrow(p.ok_or("a nil proxy")?.as_object())
                    .map_err(sys)?;
                p.connect_structured_push_supplier(None)
                    .map_err(|e| format!("connect_structured_push_supplier: {e}"))?;
                SupplierProxy::Structured(p)
            }
        };
        Ok(Bench {
            orb,
            epoch,
            tc,
            fast,
            slow,
            proxies,
            supplier,
            total,
        })
    }

    fn push(&self, payload: &mut [u8]) -> Result<(), String> {
        let now = self.epoch.elapsed().as_nanos() as u64;
        payload[..8].copy_from_slice(&now.to_le_bytes());
        let any = Any::insert_as(self.tc.clone(), &*payload).map_err(sys)?;
        match &self.supplier {
            SupplierProxy::Any(p) => p.push(&any).map_err(|e| format!("push: {e}")),
            SupplierProxy::Structured(p) => p
                .push_structured_event(&structured(any))
                .map_err(|e| format!("push_structured_event: {e}")),
        }
    }

    fn delivered(&self) -> usize {
        self.fast.iter().map(|s| s.count()).sum()
    }

    /// Waits until the fast consumers hold `want` events, or none came for [`IDLE`].
    fn settle(&self, want: usize) {
        let (mut seen, mut since) = (self.delivered(), Instant::now());
        while seen < want && since.elapsed() < IDLE {
            std::thread::sleep(Duration::from_millis(2));
            let now = self.delivered();
            if now != seen {
                (seen, since) = (now, Instant::now());
            }
        }
    }

    /// Clears what the consumers counted.
    fn reset(&self) {
        for s in self.fast.iter().chain(&self.slow) {
            s.take();
        }
    }

    /// Pushes `events` as fast as the channel takes them.
    fn flood(&self, events: usize, size: usize) -> Result<Flood, String> {
        self.reset();
        let mut payload = vec![0u8; size.max(8)];
        let start = Instant::now();
        for _ in 0..events {
            self.push(&mut payload)?;
        }
        let want = events * self.fast.len();
        self.settle(want);
        let got: Vec<Got> = self.fast.iter().map(|s| s.take()).collect();
        let delivered: usize = got.iter().map(|g| g.latencies_ns.len()).sum();
        let last = got.iter().filter_map(|g| g.last).max();
        let secs = last.map_or(0.0, |l| l.duration_since(start).as_secs_f64());
        Ok(Flood {
            events_per_s: if secs > 0.0 {
                delivered as f64 / self.fast.len() as f64 / secs
            } else {
                0.0
            },
            delivered: delivered as f64 / want.max(1) as f64,
        })
    }

    /// `samples` events one at a time; every fast consumer's delay, µs.
    fn paced(&self, samples: usize, size: usize) -> Result<Vec<f64>, String> {
        self.reset();
        *self.total.0.lock().unwrap_or_else(|p| p.into_inner()) = 0;
        let mut payload = vec![0u8; size.max(8)];
        let n = self.fast.len();
        for k in 1..=samples {
            self.push(&mut payload)?;
            let deadline = Instant::now() + SAMPLE_WAIT;
            let mut done = self.total.0.lock().unwrap_or_else(|p| p.into_inner());
            while *done < k * n {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(format!(
                        "paced event {k}: {} of {n} consumers had it after {SAMPLE_WAIT:?}",
                        *done - (k - 1) * n
                    ));
                }
                done = self
                    .total
                    .1
                    .wait_timeout(done, left)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
        }
        Ok(self
            .fast
            .iter()
            .flat_map(|s| s.take().latencies_ns)
            .map(|ns| ns as f64 / 1e3)
            .collect())
    }

    fn disconnect(self) {
        for p in &self.proxies {
            let _ = match p {
                ConsumerProxy::Any(p) => p.disconnect_push_supplier(),
                ConsumerProxy::Structured(p) => p.disconnect_structured_push_supplier(),
            };
        }
        let _ = match &self.supplier {
            SupplierProxy::Any(p) => p.disconnect_push_consumer(),
            SupplierProxy::Structured(p) => p.disconnect_structured_push_consumer(),
        };
        self.orb.destroy();
    }
}

/// `events-client`: one point; its record.
pub fn run(o: &ClientOpts, out: &mut dyn FnMut(Record)) -> Result<(), String> {
    let bench = Bench::connect(o)?;
    // Warm-up: connections to every consumer, the channel's threads, a JIT.
    let warm = (o.events / 5).clamp(20, 500);
    bench.flood(warm, o.size)?;
    // The median of `rounds` floods: one flood on a shared machine can hit a stall.
    let mut floods = (0..o.rounds.max(1))
        .map(|_| bench.flood(o.events, o.size))
        .collect::<Result<Vec<_>, _>>()?;
    floods.sort_by(|a, b| a.events_per_s.total_cmp(&b.events_per_s));
    let flood = floods.swap_remove(floods.len() / 2);
    let mut r = Record::new(EXPERIMENT, &o.implementation)
        .mode(o.kind.name())
        .op("push");
    r.size = Some(o.size as u64);
    r.consumers = Some(o.consumers as u64);
    r.slow_consumer = Some(o.slow);
    r.filter = Some(o.filter);
    r.n = Some(o.events as u64);
    r.events_per_s = Some(flood.events_per_s);
    r.delivered = Some(flood.delivered);
    if o.samples > 0 {
        let mut lat = bench.paced(o.samples, o.size)?;
        let s = summarize(&mut lat);
        r.median_us = Some(s.median);
        r.p99_us = Some(s.p99);
    }
    bench.disconnect();
    out(r);
    Ok(())
}
