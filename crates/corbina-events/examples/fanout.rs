//! Fan-out of an event channel, measured from the outside: one supplier pushes `--events`
//! events of `--size` bytes (a `sequence<octet>` in an `any`, stamped with its send time)
//! into the channel at `--channel URL`, and `--consumers N` push consumers in this process
//! receive them. Prints events/s (per consumer: events delivered to all of them over the
//! time from the first push to the last delivery; events a bounded queue dropped are
//! counted as not delivered) and the push-to-delivery latency (median, p99). `--slow 1` adds a consumer sleeping 100 ms per push, to see what it costs
//! the others. Works against any channel (Corbina's `corbina-events`, omniEvents, JacORB).
//!
//! ```text
//! cargo run --release -p corbina-events --example fanout -- \
//!     --channel corbaloc::127.0.0.1:11169/EventChannel --consumers 10 --events 20000 --size 100
//! ```

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use corbina::config::Endpoint;
use corbina::typecode::TypeCode;
use corbina::{Any, Orb, OrbConfig, SystemException};
use corbina_events::cos_event_channel_admin::EventChannel;
use corbina_events::cos_event_comm::push_consumer::PushError;
use corbina_events::cos_event_comm::{PushConsumer, PushConsumerServant, PushConsumerSkeleton};

struct Args {
    channel: String,
    consumers: usize,
    events: usize,
    size: usize,
    slow: bool,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        channel: String::new(),
        consumers: 1,
        events: 10_000,
        size: 100,
        slow: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let n = || {
            v.parse::<usize>()
                .map_err(|_| format!("{flag} {v}: not a number"))
        };
        match flag.as_str() {
            "--channel" => a.channel = v.clone(),
            "--consumers" => a.consumers = n()?,
            "--events" => a.events = n()?,
            "--size" => a.size = n()?.max(8),
            "--slow" => a.slow = n()? != 0,
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    if a.channel.is_empty() {
        return Err("--channel URL is required".into());
    }
    Ok(a)
}

/// Received events' latencies (ns), and when the last arrived.
struct Sink {
    epoch: Instant,
    tc: TypeCode,
    delay: Duration,
    got: Mutex<(Vec<u64>, Option<Instant>)>,
}

impl PushConsumerServant for Sink {
    fn push(&self, data: &Any) -> Result<(), PushError> {
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
        let now = self.epoch.elapsed().as_nanos() as u64;
        let bytes: Vec<u8> = data.extract_as(&self.tc).unwrap_or_default();
        let sent = bytes.get(..8).map_or(now, |b| {
            u64::from_le_bytes(b.try_into().unwrap_or_default())
        });
        let mut g = self.got.lock().unwrap();
        g.0.push(now.saturating_sub(sent));
        g.1 = Some(Instant::now());
        Ok(())
    }

    fn disconnect_push_consumer(&self) -> Result<(), SystemException> {
        Ok(())
    }
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i] as f64 / 1000.0
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse().map_err(|e| format!("{e}\nusage: fanout --channel URL [--consumers N] [--events N] [--size BYTES] [--slow 0|1]"))?;
    let orb = Orb::with_config(OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..OrbConfig::default()
    });
    let poa = orb.root_poa();
    poa.the_poa_manager().activate()?;
    let channel = EventChannel::narrow(&orb.string_to_object(&args.channel)?)?;
    let tc = TypeCode::create_sequence_tc(0, TypeCode::OCTET);
    let epoch = Instant::now();
    let mut sinks = Vec::new();
    let admin = channel.for_consumers()?.ok_or("no consumer admin")?;
    let connect = |delay: Duration| -> Result<Arc<Sink>, Box<dyn std::error::Error>> {
        let sink = Arc::new(Sink {
            epoch,
            tc: tc.clone(),
            delay,
            got: Mutex::new((Vec::with_capacity(args.events), None)),
        });
        let id = poa.activate_object(Arc::new(PushConsumerSkeleton::from_arc(sink.clone())))?;
        let obj = poa.id_to_reference(&id)?.without_collocation();
        let proxy = admin.obtain_push_supplier()?.ok_or("no proxy")?;
        proxy
            .connect_push_consumer(Some(&PushConsumer::unchecked_narrow(&obj)))
            .map_err(|e| format!("connect_push_consumer: {e}"))?;
        Ok(sink)
    };
    for _ in 0..args.consumers {
        sinks.push(connect(Duration::ZERO)?);
    }
    let slow = if args.slow {
        Some(connect(Duration::from_millis(100))?)
    } else {
        None
    };
    let proxy = channel
        .for_suppliers()?
        .ok_or("no supplier admin")?
        .obtain_push_consumer()?
        .ok_or("no proxy")?;
    proxy
        .connect_push_supplier(None)
        .map_err(|e| format!("connect_push_supplier: {e}"))?;
    let mut payload = vec![0u8; args.size];
    let start = Instant::now();
    for _ in 0..args.events {
        let now = epoch.elapsed().as_nanos() as u64;
        payload[..8].copy_from_slice(&now.to_le_bytes());
        let any = Any::insert_as(tc.clone(), &payload)?;
        proxy.push(&any).map_err(|e| format!("push: {e}"))?;
    }
    let pushed = start.elapsed();
    // Bounded queues drop the oldest events of a consumer that falls behind: wait until all
    // arrived, or nothing more arrived for a second.
    let total = || -> usize { sinks.iter().map(|s| s.got.lock().unwrap().0.len()).sum() };
    let (mut seen, mut idle_since) = (0, Instant::now());
    while total() < args.events * args.consumers && idle_since.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_millis(2));
        let now = total();
        if now != seen {
            (seen, idle_since) = (now, Instant::now());
        }
    }
    let delivered = total();
    let last = sinks
        .iter()
        .filter_map(|s| s.got.lock().unwrap().1)
        .max()
        .unwrap_or_else(Instant::now);
    let elapsed = last.duration_since(start);
    let mut lat: Vec<u64> = sinks
        .iter()
        .flat_map(|s| s.got.lock().unwrap().0.clone())
        .collect();
    lat.sort_unstable();
    println!(
        "consumers={} events={} size={}B slow={}: {:.0} events/s per consumer ({:.0} deliveries/s, \
         {} of {} delivered), supplier pushed in {:.3} s, latency median {:.0} us p99 {:.0} us{}",
        args.consumers,
        args.events,
        args.size,
        args.slow,
        delivered as f64 / args.consumers.max(1) as f64 / elapsed.as_secs_f64(),
        delivered as f64 / elapsed.as_secs_f64(),
        delivered,
        args.events * args.consumers,
        pushed.as_secs_f64(),
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        slow.map_or(String::new(), |s| format!(
            ", slow consumer got {}",
            s.got.lock().unwrap().0.len()
        )),
    );
    let _ = proxy.disconnect_push_consumer();
    orb.destroy();
    Ok(())
}
