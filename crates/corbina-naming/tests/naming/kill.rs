//! Kill tests under load: clients bind and resolve through two replicas on a three-member
//! etcd cluster while a replica, then an etcd member, are killed with SIGKILL and then
//! restarted. No acknowledged binding may be lost and no call may hang: each succeeds
//! (on the other replica, or after the cluster elected a new leader) or fails with a
//! system exception within its timeout.

use super::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::etcd::EtcdCluster;
use common::{free_port, replica};
use corbina::{Orb, OrbConfig};
use corbina_naming::cos_naming::{NameComponent, NamingContextExt};

const CLIENTS: usize = 4;
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

fn name(s: &str) -> Vec<NameComponent> {
    vec![NameComponent {
        id: s.into(),
        kind: "kill".into(),
    }]
}

#[derive(Default)]
struct Tally {
    acked: Vec<String>,
    failed: u64,
    resolved: u64,
    slowest: Duration,
}

#[test]
fn no_acknowledged_binding_lost_and_no_client_stuck() {
    let Some(mut cluster) = EtcdCluster::start("kill", 3) else {
        return;
    };
    let url = cluster.url("kill");
    let (pa, pb) = (free_port(), free_port());
    let mut a = Some(replica(pa, &url, &[pa, pb]));
    let _b = replica(pb, &url, &[pa, pb]);
    let orb = Orb::with_config(
        OrbConfig::default()
            .call_timeout(CALL_TIMEOUT)
            .connect_timeout(Duration::from_secs(1)),
    );
    let both = format!("corbaloc::127.0.0.1:{pa},:127.0.0.1:{pb}/NameService");
    let root = NamingContextExt::unchecked_narrow(&orb.string_to_object(&both).unwrap());
    let target = root.new_context().unwrap().unwrap().as_object().clone();

    let tally: Arc<Mutex<Tally>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (tally, stop, root, target) =
                (tally.clone(), stop.clone(), root.clone(), target.clone());
            std::thread::spawn(move || {
                for i in 0u64.. {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let n = format!("c{c}-{i}");
                    let t = Instant::now();
                    let bound = root.bind(&name(&n), Some(&target));
                    let took = t.elapsed();
                    let resolved = root.resolve(&name(&n)).is_ok();
                    let took = took.max(t.elapsed() - took);
                    let mut t = tally.lock().unwrap();
                    t.slowest = t.slowest.max(took);
                    match bound {
                        Ok(()) => t.acked.push(n),
                        Err(_) => t.failed += 1,
                    }
                    t.resolved += u64::from(resolved);
                    drop(t);
                    if !resolved {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
            })
        })
        .collect();
    let acked = || tally.lock().unwrap().acked.len();
    let failed = || tally.lock().unwrap().failed;
    // Each phase lasts a second at least and must see the clients make progress.
    let phase = |what: &str| {
        let before = acked();
        let failed_before = failed();
        let start = Instant::now();
        while (acked() < before + 20 || start.elapsed() < Duration::from_secs(1))
            && start.elapsed() < Duration::from_secs(15)
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        let made = acked() - before;
        eprintln!(
            "kill test: {what}: {made} binds, {} failed, in {:?}",
            failed() - failed_before,
            start.elapsed()
        );
        assert!(made >= 20, "progress while {what}");
    };

    phase("all up");
    drop(a.take()); // SIGKILL replica A
    phase("replica A killed");
    cluster.kill(0);
    phase("replica A and etcd member 0 killed");
    cluster.restart(0);
    a = Some(replica(pa, &url, &[pa, pb]));
    phase("both restarted");
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    let t = tally.lock().unwrap();
    eprintln!(
        "kill test: {} binds acknowledged, {} failed, {} resolves, slowest call {:?}",
        t.acked.len(),
        t.failed,
        t.resolved,
        t.slowest
    );
    assert!(
        t.slowest <= CALL_TIMEOUT + Duration::from_secs(1),
        "a call took {:?}",
        t.slowest
    );
    // Every acknowledged binding, through each replica.
    for port in [pa, pb] {
        let r = NamingContextExt::unchecked_narrow(
            &orb.string_to_object(&format!("corbaloc::127.0.0.1:{port}/NameService"))
                .unwrap(),
        );
        let missing: Vec<&String> = t
            .acked
            .iter()
            .filter(|n| !matches!(r.resolve(&name(n)), Ok(Some(o)) if o.ior() == target.ior()))
            .collect();
        assert!(
            missing.is_empty(),
            "{} acknowledged binds missing on port {port}: {:?}",
            missing.len(),
            &missing[..missing.len().min(5)]
        );
    }
    drop(a);
}
