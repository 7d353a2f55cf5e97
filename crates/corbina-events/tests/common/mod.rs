//! Shared by the event service's tests: the service (in this process, or the daemon as a
//! child process), a client ORB, and servants for the suppliers' and consumers' ends.
#![allow(dead_code)]

pub mod notify;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use corbina::config::Endpoint;
use corbina::{Any, Orb, OrbConfig, SystemException};
use corbina_events::cos_event_channel_admin::{
    EventChannel, ProxyPullConsumer, ProxyPullSupplier, ProxyPushConsumer, ProxyPushSupplier,
};
use corbina_events::cos_event_comm::pull_supplier::{PullError, TryPullError};
use corbina_events::cos_event_comm::push_consumer::PushError;
use corbina_events::cos_event_comm::{
    PullConsumer, PullConsumerServant, PullConsumerSkeleton, PullSupplier, PullSupplierServant,
    PullSupplierSkeleton, PushConsumer, PushConsumerServant, PushConsumerSkeleton, PushSupplier,
    PushSupplierServant, PushSupplierSkeleton,
};
use corbina_events::{EventService, Options};
use corbina_testpeers::PeerProcess;

/// A loopback port that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A fresh directory under the target's temporary directory.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("events-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// An ORB serving on a loopback port of its own, calls timing out after `timeout`.
pub fn orb_with_timeout(timeout: Duration) -> Orb {
    Orb::with_config(
        OrbConfig {
            endpoints: vec![Endpoint {
                host: "127.0.0.1".into(),
                port: 0,
            }],
            ..OrbConfig::default()
        }
        .call_timeout(timeout)
        .connect_timeout(Duration::from_secs(2)),
    )
}

/// A client ORB (it serves the callbacks of its consumers and suppliers).
pub fn client_orb() -> Orb {
    orb_with_timeout(Duration::from_secs(10))
}

/// The service in this process, on an ORB of its own, with quick retries.
pub struct InProcess {
    pub orb: Orb,
    pub service: Option<EventService>,
    pub dir: PathBuf,
}

impl InProcess {
    pub fn start(name: &str, tune: impl FnOnce(&mut Options)) -> InProcess {
        let dir = temp_dir(name);
        let mut options = Options::new(&dir);
        options.retry_backoff = Duration::from_millis(10);
        options.max_backoff = Duration::from_millis(40);
        options.push_retries = 3;
        options.pull_retry = Duration::from_millis(5);
        tune(&mut options);
        let orb = orb_with_timeout(Duration::from_secs(2));
        let service = EventService::start(&orb, &options).unwrap();
        InProcess {
            orb,
            service: Some(service),
            dir,
        }
    }

    pub fn service(&self) -> &EventService {
        self.service.as_ref().unwrap()
    }

    pub fn url(&self, key: &str) -> String {
        let (host, port) = self.service().endpoint();
        format!("corbaloc::{host}:{port}/{key}")
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        drop(self.service.take());
        self.orb.destroy();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Waits until `f` holds, for at most `limit`.
pub fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    f()
}

/// What a push consumer received, and whether it was told to disconnect.
#[derive(Default)]
pub struct Received {
    pub events: Mutex<Vec<Any>>,
    pub arrived: Condvar,
    pub disconnects: AtomicUsize,
}

/// Waits until `list` holds `n` items (at most `limit`, woken by `arrived`); returns them.
pub fn wait_len<T: Clone>(
    list: &Mutex<Vec<T>>,
    arrived: &Condvar,
    n: usize,
    limit: Duration,
) -> Vec<T> {
    let end = Instant::now() + limit;
    let mut ev = list.lock().unwrap();
    while ev.len() < n {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        ev = arrived.wait_timeout(ev, left).unwrap().0;
    }
    ev.clone()
}

impl Received {
    /// Waits until `n` events arrived (at most `limit`); returns them.
    pub fn wait_for(&self, n: usize, limit: Duration) -> Vec<Any> {
        wait_len(&self.events, &self.arrived, n, limit)
    }

    pub fn count(&self) -> usize {
        self.events.lock().unwrap().len()
    }

    pub fn disconnected(&self) -> bool {
        self.disconnects.load(Ordering::SeqCst) > 0
    }
}

/// A push consumer that records what it gets, sleeping `delay` in each push.
pub struct Collector {
    pub got: Arc<Received>,
    pub delay: Duration,
}

impl PushConsumerServant for Collector {
    fn push(&self, data: &Any) -> Result<(), PushError> {
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
        self.got.events.lock().unwrap().push(data.clone());
        self.got.arrived.notify_all();
        Ok(())
    }

    fn disconnect_push_consumer(&self) -> Result<(), SystemException> {
        self.got.disconnects.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// Serves a [`Collector`] on `orb`.
pub fn push_consumer(orb: &Orb, delay: Duration) -> (PushConsumer, Arc<Received>) {
    let got = Arc::new(Received::default());
    let poa = orb.root_poa();
    let id = poa
        .activate_object(Arc::new(PushConsumerSkeleton::new(Collector {
            got: got.clone(),
            delay,
        })))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    let r = poa.id_to_reference(&id).unwrap().without_collocation();
    (PushConsumer::unchecked_narrow(&r), got)
}

/// A supplier's or consumer's end that only counts `disconnect_*` calls.
#[derive(Default)]
pub struct Told(pub AtomicUsize);

impl Told {
    pub fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

struct ToldSupplier(Arc<Told>);

impl PushSupplierServant for ToldSupplier {
    fn disconnect_push_supplier(&self) -> Result<(), SystemException> {
        self.0 .0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

impl PullConsumerServant for ToldSupplier {
    fn disconnect_pull_consumer(&self) -> Result<(), SystemException> {
        self.0 .0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// A `PushSupplier` on `orb` counting `disconnect_push_supplier` calls.
pub fn push_supplier(orb: &Orb) -> (PushSupplier, Arc<Told>) {
    let told = Arc::new(Told::default());
    let poa = orb.root_poa();
    let id = poa
        .activate_object(Arc::new(PushSupplierSkeleton::new(ToldSupplier(
            told.clone(),
        ))))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    let r = poa.id_to_reference(&id).unwrap().without_collocation();
    (PushSupplier::unchecked_narrow(&r), told)
}

/// A `PullConsumer` on `orb` counting `disconnect_pull_consumer` calls.
pub fn pull_consumer(orb: &Orb) -> (PullConsumer, Arc<Told>) {
    let told = Arc::new(Told::default());
    let poa = orb.root_poa();
    let id = poa
        .activate_object(Arc::new(PullConsumerSkeleton::new(ToldSupplier(
            told.clone(),
        ))))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    let r = poa.id_to_reference(&id).unwrap().without_collocation();
    (PullConsumer::unchecked_narrow(&r), told)
}

/// A pull supplier handing out `0..n` as `long`s, then nothing.
pub struct Counter {
    pub next: Mutex<i32>,
    pub n: i32,
    pub told: Arc<Told>,
}

impl PullSupplierServant for Counter {
    fn pull(&self) -> Result<Any, PullError> {
        // Not used by the channel (it calls try_pull), but must not block for ever.
        let (e, has) = self.try_pull().map_err(|e| match e {
            TryPullError::Disconnected(d) => PullError::Disconnected(d),
            TryPullError::System(s) => PullError::System(s),
        })?;
        if has {
            Ok(e)
        } else {
            Err(SystemException::new(corbina::SystemExceptionKind::Transient, 0).into())
        }
    }

    fn try_pull(&self) -> Result<(Any, bool), TryPullError> {
        let mut next = self.next.lock().unwrap();
        if *next < self.n {
            *next += 1;
            Ok((Any::from_long(*next - 1), true))
        } else {
            Ok((Any::default(), false))
        }
    }

    fn disconnect_pull_supplier(&self) -> Result<(), SystemException> {
        self.told.0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// Serves a [`Counter`] of `n` events on `orb`.
pub fn pull_supplier(orb: &Orb, n: i32) -> (PullSupplier, Arc<Told>) {
    let told = Arc::new(Told::default());
    let poa = orb.root_poa();
    let id = poa
        .activate_object(Arc::new(PullSupplierSkeleton::new(Counter {
            next: Mutex::new(0),
            n,
            told: told.clone(),
        })))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    let r = poa.id_to_reference(&id).unwrap().without_collocation();
    (PullSupplier::unchecked_narrow(&r), told)
}

/// The longs of `events`, in order.
pub fn longs(events: &[Any]) -> Vec<i32> {
    events
        .iter()
        .map(|a| a.to_long().expect("a long"))
        .collect()
}

/// Starts the `corbina-events` daemon on `127.0.0.1:port` with its store in `data_dir` and
/// waits for it to print its IOR; returns the process (killed when dropped) and the IOR.
pub fn start_daemon(port: u16, data_dir: &Path, extra: &[&str]) -> (PeerProcess, String) {
    let mut daemon = PeerProcess::spawn(
        "corbina-events",
        Command::new(env!("CARGO_BIN_EXE_corbina-events"))
            .args(["--endpoint", &format!("127.0.0.1:{port}")])
            .arg("--data-dir")
            .arg(data_dir)
            .args(extra)
            .stdout(Stdio::piped()),
    );
    let stdout = daemon.child_mut().stdout.take().expect("piped stdout");
    let mut line = String::new();
    let read = BufReader::new(stdout).read_line(&mut line);
    assert!(
        read.is_ok() && line.starts_with("IOR:"),
        "corbina-events printed {line:?} ({read:?}); its stderr:\n{}",
        daemon.stderr()
    );
    (daemon, line.trim().to_owned())
}

/// A `ProxyPushConsumer` of `ch`, connected with a nil supplier: push into it.
pub fn supplier(ch: &EventChannel) -> ProxyPushConsumer {
    let p = ch
        .for_suppliers()
        .unwrap()
        .unwrap()
        .obtain_push_consumer()
        .unwrap()
        .unwrap();
    p.connect_push_supplier(None).unwrap();
    p
}

/// A `ProxyPullSupplier` of `ch`, connected with a nil consumer: pull from it.
pub fn puller(ch: &EventChannel) -> ProxyPullSupplier {
    let p = ch
        .for_consumers()
        .unwrap()
        .unwrap()
        .obtain_pull_supplier()
        .unwrap()
        .unwrap();
    p.connect_pull_consumer(None).unwrap();
    p
}

/// A new `ProxyPushSupplier` of `ch` connected to `consumer`.
pub fn connect(ch: &EventChannel, consumer: &PushConsumer) -> ProxyPushSupplier {
    let p = ch
        .for_consumers()
        .unwrap()
        .unwrap()
        .obtain_push_supplier()
        .unwrap()
        .unwrap();
    p.connect_push_consumer(Some(consumer)).unwrap();
    p
}

/// A new `ProxyPullConsumer` of `ch` connected to `pull_supplier`: the channel pulls from it.
pub fn pull_from(ch: &EventChannel, pull_supplier: &PullSupplier) -> ProxyPullConsumer {
    let p = ch
        .for_suppliers()
        .unwrap()
        .unwrap()
        .obtain_pull_consumer()
        .unwrap()
        .unwrap();
    p.connect_pull_supplier(Some(pull_supplier)).unwrap();
    p
}

/// A [`Collector`] on `orb` (sleeping `delay` per push) connected to `ch`.
pub fn collector_on(orb: &Orb, ch: &EventChannel, delay: Duration) -> Arc<Received> {
    let (c, got) = push_consumer(orb, delay);
    connect(ch, &c);
    got
}

/// The channel at `url`.
pub fn channel_at(orb: &Orb, url: &str) -> EventChannel {
    EventChannel::narrow(&orb.string_to_object(url).unwrap()).unwrap()
}
