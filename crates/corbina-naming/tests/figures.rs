//! The naming service's figures: resolve latency and binds per second on redb, on etcd
//! through one replica and through three, and the time a client's call takes when its
//! replica has just been killed. Ignored in normal runs (it measures, it does not check);
//! run it in release:
//!
//! ```text
//! cargo test --release -p corbina-naming --test figures -- --ignored --nocapture
//! ```

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::etcd::EtcdCluster;
use common::{free_port, replica, start_names_on, Store};
use corbina::{Orb, OrbConfig};
use corbina_naming::cos_naming::{NameComponent, NamingContextExt};
use corbina_testpeers::{fresh_dir, PeerProcess};

const CLIENTS: usize = 4;
const RESOLVES: usize = 2000;
const BIND_TIME: Duration = Duration::from_secs(2);

fn name(s: &str) -> Vec<NameComponent> {
    vec![NameComponent {
        id: s.into(),
        kind: "fig".into(),
    }]
}

fn root(orb: &Orb, url: &str) -> NamingContextExt {
    NamingContextExt::unchecked_narrow(&orb.string_to_object(url).unwrap())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p) as usize]
}

/// Resolve latency through `urls[0]`, then binds/s from `CLIENTS` clients spread over
/// `urls`; one line of figures.
fn measure(label: &str, urls: &[String]) {
    let orb = Orb::with_config(OrbConfig::default().call_timeout(Duration::from_secs(10)));
    let r = root(&orb, &urls[0]);
    let obj = r.new_context().unwrap().unwrap().as_object().clone();
    r.bind(&name("target"), Some(&obj)).unwrap();
    for _ in 0..200 {
        r.resolve(&name("target")).unwrap();
    }
    let mut lat: Vec<Duration> = (0..RESOLVES)
        .map(|_| {
            let t = Instant::now();
            r.resolve(&name("target")).unwrap();
            t.elapsed()
        })
        .collect();
    lat.sort_unstable();

    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (done, stop, obj) = (done.clone(), stop.clone(), obj.clone());
            let r = root(&orb, &urls[c % urls.len()]);
            std::thread::spawn(move || {
                for i in 0u64.. {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    r.bind(&name(&format!("b{c}-{i}")), Some(&obj)).unwrap();
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    std::thread::sleep(BIND_TIME);
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let binds = done.load(Ordering::Relaxed) as f64 / BIND_TIME.as_secs_f64();
    println!(
        "| {label} | {:.0} µs | {:.0} µs | {:.0} µs | {binds:.0} |",
        percentile(&lat, 0.5).as_secs_f64() * 1e6,
        percentile(&lat, 0.99).as_secs_f64() * 1e6,
        lat.iter().sum::<Duration>().as_secs_f64() * 1e6 / lat.len() as f64,
    );
}

fn replicas(url: &str, n: usize) -> (Vec<PeerProcess>, Vec<u16>) {
    let ports: Vec<u16> = (0..n).map(|_| free_port()).collect();
    let procs = ports.iter().map(|&p| replica(p, url, &ports)).collect();
    (procs, ports)
}

fn url_of(port: u16) -> String {
    format!("corbaloc::127.0.0.1:{port}/NameService")
}

#[test]
#[ignore = "measures; run with --ignored --nocapture, in release"]
fn figures() {
    println!("| store | resolve p50 | resolve p99 | resolve mean | binds/s ({CLIENTS} clients) |");
    println!("|---|---|---|---|---|");
    {
        let port = free_port();
        let dir = fresh_dir("figures-redb");
        let _d = start_names_on(port, Store::Redb(&dir), &[]);
        measure("redb, one daemon", &[url_of(port)]);
    }
    let Some(cluster) = EtcdCluster::start("figures", 3) else {
        return;
    };
    {
        let (_p, ports) = replicas(&cluster.url("one"), 1);
        measure("etcd (3 members), one replica", &[url_of(ports[0])]);
    }
    {
        let (_p, ports) = replicas(&cluster.url("three"), 3);
        let urls: Vec<String> = ports.iter().map(|&p| url_of(p)).collect();
        measure("etcd (3 members), three replicas", &urls);
    }

    // Failover: the first call after the client's replica is killed.
    let (mut procs, ports) = replicas(&cluster.url("failover"), 2);
    let orb = Orb::with_config(
        OrbConfig::default()
            .call_timeout(Duration::from_secs(10))
            .connect_timeout(Duration::from_secs(1)),
    );
    let both = format!(
        "corbaloc::127.0.0.1:{},:127.0.0.1:{}/NameService",
        ports[0], ports[1]
    );
    let r = root(&orb, &both);
    let obj = r.new_context().unwrap().unwrap().as_object().clone();
    r.bind(&name("x"), Some(&obj)).unwrap();
    procs.remove(0).kill();
    // A call sent on the dead replica's open connection fails (COMM_FAILURE, MAYBE: it may
    // have been sent); the client tries again, as an application would for a resolve.
    let t = Instant::now();
    let mut failed = Vec::new();
    while let Err(e) = r.resolve(&name("x")) {
        failed.push(format!("{e:?}"));
    }
    let first = t.elapsed();
    let t = Instant::now();
    r.resolve(&name("x")).unwrap();
    println!(
        "\nfailover: resolving again after the replica's SIGKILL took {:.2} ms ({} failed \
         call(s) first: {failed:?}), the next resolve {:.0} µs",
        first.as_secs_f64() * 1e3,
        failed.len(),
        t.elapsed().as_secs_f64() * 1e6
    );
}
