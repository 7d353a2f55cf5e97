//! The event-channel experiment (`events-channel`, `events-client`, `suite --only events`):
//! one supplier pushing `any` events (a `sequence<octet>` of the point's size, stamped with
//! its send time) through an event channel to N push consumers in the client's process, on
//! Corbina's channel (`corbina-events`), omniEvents and JacORB's notification service
//! (through its CosEventChannelAdmin face), all on loopback.
//!
//! Each point (one `events-client` run) measures:
//! - **events/s per consumer**: the supplier pushes as fast as the channel takes them;
//!   events delivered to each consumer over the time from the first push to the last
//!   delivery (a channel that drops events when a queue is full counts them as not
//!   delivered: `delivered` says what fraction arrived);
//! - **latency**, push to delivery, median and p99: one event at a time, the next pushed
//!   once every consumer has the last, so it is the channel's own delay, not queueing;
//! - with `--slow`, one more consumer sleeping 100 ms per push: what it costs the others
//!   (their events/s against the same point without it).
//!
//! Records: experiment `events`, `impl` the channel (`corbina`, `omniEvents`, `JacORB`),
//! `mode` the event kind (`any`), `op` `push`, `size`, `consumers`, `slow_consumer`,
//! `events_per_s`, `delivered`, `median_us`/`p99_us`.

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use corbina::cdr::CdrDecode;
use corbina::config::Endpoint;
use corbina::typecode::TypeCode;
use corbina::{Any, ObjectRef, Orb, OrbConfig, SystemException};
use corbina_events::cos_event_channel_admin::{EventChannel, ProxyPushConsumer, ProxyPushSupplier};
use corbina_events::cos_event_comm::push_consumer::PushError;
use corbina_events::cos_event_comm::{PushConsumer, PushConsumerServant, PushConsumerSkeleton};
use corbina_events::cos_life_cycle::NameValuePair;
use corbina_events::cos_naming::NameComponent;
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
/// its database in `data_dir`; the default channel's IOR.
pub fn serve(
    mut config: OrbConfig,
    data_dir: &Path,
) -> Result<(Orb, EventService, String), String> {
    if config.endpoints.is_empty() {
        config.endpoints = vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }];
    }
    let orb = Orb::with_config(config);
    let service = EventService::start(&orb, &Options::new(data_dir))
        .map_err(|e| format!("starting the event service in {}: {e}", data_dir.display()))?;
    let ior = orb
        .object_to_string(service.channel().as_object())
        .map_err(sys)?;
    Ok((orb, service, ior))
}

/// One `events-client` point.
#[derive(Debug, Clone)]
pub struct ClientOpts {
    /// The channel: a reference to an event channel, `omnievents:URL` (a new channel made by
    /// omniEvents' factory at URL) or `notify:REF` (the first channel of a CosNotification
    /// channel factory, as JacORB's `-channels 1` makes).
    pub channel: String,
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
        Ok(())
    }

    fn disconnect_push_consumer(&self) -> Result<(), SystemException> {
        Ok(())
    }
}

impl Sink {
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

/// The channel `spec` names (see [`ClientOpts::channel`]).
// The decoders must be closures: `invoke` wants them for every reader lifetime, which the
// paths clippy suggests (one lifetime each) do not give.
#[allow(clippy::redundant_closure)]
fn channel(orb: &Orb, spec: &str) -> Result<EventChannel, String> {
    let obj = |s: &str| orb.string_to_object(s).map_err(|e| format!("{s}: {e}"));
    let obj = if let Some(url) = spec.strip_prefix("omnievents:") {
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
        factory
            .create_object(&key, &criteria)
            .map_err(|e| format!("omniEvents' create_object: {e}"))?
            .ok_or("omniEvents' factory returned nil")?
    } else if let Some(r) = spec.strip_prefix("notify:") {
        // CosNotifyChannelAdmin::EventChannelFactory: get_all_channels, get_event_channel.
        let factory = obj(r)?;
        let ids: Vec<i32> = factory
            .invoke::<_, SystemException>(
                "get_all_channels",
                |_| Ok(()),
                |r| <Vec<i32> as CdrDecode>::decode(r),
                |_, _| Ok(None),
            )
            .map_err(|e| format!("get_all_channels: {e}"))?;
        let id = *ids
            .first()
            .ok_or("the notification factory has no channel")?;
        factory
            .invoke::<_, SystemException>(
                "get_event_channel",
                |w| {
                    w.write_long(id);
                    Ok(())
                },
                |r| <ObjectRef as CdrDecode>::decode(r),
                |_, _| Ok(None),
            )
            .map_err(|e| format!("get_event_channel({id}): {e}"))?
    } else {
        obj(spec)?
    };
    EventChannel::narrow(&obj).map_err(|e| format!("not an event channel: {e}"))
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
    proxies: Vec<ProxyPushSupplier>,
    supplier: ProxyPushConsumer,
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
        let ch = channel(&orb, &o.channel)?;
        let admin = ch
            .for_consumers()
            .map_err(sys)?
            .ok_or("for_consumers returned nil")?;
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
            let id = poa
                .activate_object(Arc::new(PushConsumerSkeleton::from_arc(sink.clone())))
                .map_err(sys)?;
            // Through the socket, as a consumer in another process would be.
            let obj = poa.id_to_reference(&id).map_err(sys)?.without_collocation();
            let proxy = admin
                .obtain_push_supplier()
                .map_err(sys)?
                .ok_or("obtain_push_supplier returned nil")?;
            proxy
                .connect_push_consumer(Some(&PushConsumer::unchecked_narrow(&obj)))
                .map_err(|e| format!("connect_push_consumer: {e}"))?;
            proxies.push(proxy);
            Ok(sink)
        };
        let fast = (0..o.consumers.max(1))
            .map(|_| connect(Duration::ZERO))
            .collect::<Result<Vec<_>, _>>()?;
        let slow = o.slow.then(|| connect(SLOW_PUSH)).transpose()?;
        let supplier = ch
            .for_suppliers()
            .map_err(sys)?
            .ok_or("for_suppliers returned nil")?
            .obtain_push_consumer()
            .map_err(sys)?
            .ok_or("obtain_push_consumer returned nil")?;
        supplier
            .connect_push_supplier(None)
            .map_err(|e| format!("connect_push_supplier: {e}"))?;
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
        self.supplier.push(&any).map_err(|e| format!("push: {e}"))
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
            let _ = p.disconnect_push_supplier();
        }
        let _ = self.supplier.disconnect_push_consumer();
        self.orb.destroy();
    }
}

/// `events-client`: one point; its record.
pub fn run(o: &ClientOpts, out: &mut dyn FnMut(Record)) -> Result<(), String> {
    let bench = Bench::connect(o)?;
    // Warm-up: connections to every consumer, the channel's threads, a JIT.
    let warm = (o.events / 5).clamp(20, 500);
    bench.flood(warm, o.size)?;
    let flood = bench.flood(o.events, o.size)?;
    let mut r = Record::new(EXPERIMENT, &o.implementation)
        .mode("any")
        .op("push");
    r.size = Some(o.size as u64);
    r.consumers = Some(o.consumers as u64);
    r.slow_consumer = Some(o.slow);
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
