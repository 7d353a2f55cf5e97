//! Durability: the `corbina-names` daemon is killed with SIGKILL at random moments while a
//! client binds names as fast as it can; after each restart (same port, same data
//! directory) every bind the client saw acknowledged must resolve, and references to
//! contexts handed out before a crash must still work. On redb (same data directory) and
//! on etcd (a three-member cluster, same prefix).

use super::common;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::etcd::EtcdCluster;
use common::{free_port, start_names_on, Store};
use corbina::{Orb, OrbConfig};
use corbina_naming::cos_naming::{NameComponent, NamingContextExt};

/// A small xorshift generator seeded from the clock: kill times differ from run to run, and
/// the seed is printed so a failure can be replayed.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn name(s: &str) -> Vec<NameComponent> {
    vec![NameComponent {
        id: s.into(),
        kind: "crash".into(),
    }]
}

#[test]
fn acknowledged_binds_survive_sigkill() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("naming-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    binds_survive_kills(Store::Redb(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn acknowledged_binds_survive_sigkill_on_etcd() {
    let Some(cluster) = EtcdCluster::start("crash", 3) else {
        return;
    };
    binds_survive_kills(Store::Etcd(&cluster.url("crash")));
}

fn binds_survive_kills(store: Store<'_>) {
    let port = free_port();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("crash test: port {port}, seed {seed}");
    let mut rng = Rng(seed);

    let (daemon, _) = start_names_on(port, store, &[]);
    let mut daemon = Some(daemon);
    let orb = Orb::with_config(
        OrbConfig::default()
            .call_timeout(Duration::from_secs(5))
            .connect_timeout(Duration::from_secs(1)),
    );
    let url = format!("corbaloc::127.0.0.1:{port}/NameService");
    let root = NamingContextExt::unchecked_narrow(&orb.string_to_object(&url).unwrap());
    // A context made before any crash, and a reference to bind everywhere.
    let sub = root
        .bind_new_context(&name("sub"))
        .unwrap()
        .expect("a context");
    let target = sub.as_object().clone();

    let acked: Arc<Mutex<Vec<String>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let client = {
        let (acked, stop, root, target) =
            (acked.clone(), stop.clone(), root.clone(), target.clone());
        std::thread::spawn(move || {
            let mut failures = 0u64;
            for i in 0u64.. {
                if stop.load(Ordering::Relaxed) {
                    return failures;
                }
                let n = format!("n{i}");
                match root.bind(&name(&n), Some(&target)) {
                    Ok(()) => acked.lock().unwrap().push(n),
                    Err(_) => {
                        // Dead or restarting: the bind is in doubt, and not checked.
                        failures += 1;
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
            }
            failures
        })
    };

    const ROUNDS: usize = 6;
    let mut per_round = Vec::new();
    for _ in 0..ROUNDS {
        let before = acked.lock().unwrap().len();
        let start = Instant::now();
        // Let the client get going (it must reconnect after a restart), then kill at a
        // random moment.
        while acked.lock().unwrap().len() == before && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(20 + rng.below(400)));
        drop(daemon.take()); // SIGKILL, then reaped.
        per_round.push(acked.lock().unwrap().len() - before);
        let (d, _) = start_names_on(port, store, &[]);
        daemon = Some(d);
    }
    stop.store(true, Ordering::Relaxed);
    let failures = client.join().unwrap();
    let acked = acked.lock().unwrap().clone();
    eprintln!(
        "crash test: {} binds acknowledged over {ROUNDS} kills {per_round:?}, {failures} failed calls",
        acked.len()
    );
    assert!(
        per_round.iter().all(|&n| n > 0),
        "the client made progress in every round: {per_round:?}"
    );

    // Everything acknowledged is there, bound to the right object.
    let checker = Orb::with_config(OrbConfig::default().call_timeout(Duration::from_secs(10)));
    let root = NamingContextExt::unchecked_narrow(&checker.string_to_object(&url).unwrap());
    let mut missing = Vec::new();
    for n in &acked {
        match root.resolve(&name(n)) {
            Ok(Some(o)) => assert_eq!(o.ior(), target.ior(), "{n} is bound to its object"),
            other => missing.push((n.clone(), format!("{other:?}"))),
        }
    }
    assert!(
        missing.is_empty(),
        "{} acknowledged binds lost, e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
    // The context reference from before the first crash still works.
    let sub = NamingContextExt::unchecked_narrow(&target);
    sub.bind(&name("after"), Some(&target)).unwrap();
    assert!(sub.resolve_str("after.crash").unwrap().is_some());
    assert!(root.resolve_str("sub.crash/after.crash").unwrap().is_some());
    drop(daemon);
}
