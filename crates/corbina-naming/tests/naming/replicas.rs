//! Replicas: two `corbina-names` daemons on one three-member etcd cluster serve one naming
//! graph. References name both replicas (same object keys), a client whose replica is
//! killed goes on with the other, etcd losing one member changes nothing, losing quorum
//! makes writes fail with TRANSIENT (promptly) while reads go on, and after restarts
//! nothing acknowledged is lost.

use super::common;

use std::time::{Duration, Instant};

use common::etcd::EtcdCluster;
use common::{free_port, replica};
use corbina::{ObjectRef, Orb, OrbConfig, SystemExceptionKind};
use corbina_naming::cos_naming::naming_context::BindError;
use corbina_naming::cos_naming::{NameComponent, NamingContextExt};

fn n(s: &str) -> Vec<NameComponent> {
    corbina_naming::name::to_name(s).unwrap()
}

fn root_at(orb: &Orb, url: &str) -> NamingContextExt {
    NamingContextExt::narrow(&orb.string_to_object(url).unwrap()).unwrap()
}

/// Polls `f` until it holds or `limit` passes; how long it took.
fn eventually(limit: Duration, mut f: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if f() {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    None
}

fn resolves(root: &NamingContextExt, name: &str, obj: &ObjectRef) -> bool {
    matches!(root.resolve_str(name), Ok(Some(o)) if o.ior() == obj.ior())
}

#[test]
fn replicas_share_one_graph_and_clients_fail_over() {
    let Some(mut cluster) = EtcdCluster::start("replicas", 3) else {
        return;
    };
    let url = cluster.url("replicas");
    let (pa, pb) = (free_port(), free_port());
    let a = replica(pa, &url, &[pa, pb]);
    let _b = replica(pb, &url, &[pa, pb]);
    let orb = Orb::with_config(
        OrbConfig::default()
            .call_timeout(Duration::from_secs(6))
            .connect_timeout(Duration::from_secs(1)),
    );
    // The root through either replica: a corbaloc URL with both addresses.
    let root = root_at(
        &orb,
        &format!("corbaloc::127.0.0.1:{pa},:127.0.0.1:{pb}/NameService"),
    );
    let root_b = root_at(&orb, &format!("corbaloc::127.0.0.1:{pb}/NameService"));
    let obj = root.new_context().unwrap().unwrap().as_object().clone();

    // A context made through A names A first and B as an alternate, one object key.
    let ctx = root.bind_new_context(&n("apps")).unwrap().unwrap();
    let profile = ctx.as_object().ior().iiop_profiles().unwrap().remove(0);
    assert_eq!(profile.port, pa);
    assert_eq!(
        profile.alternate_addresses().unwrap(),
        vec![("127.0.0.1".to_owned(), pb)]
    );
    // Read-your-own-writes through A; B sees it once its watch has it.
    ctx.bind(&n("echo"), Some(&obj)).unwrap();
    assert!(resolves(&root, "apps/echo", &obj));
    let seen = eventually(Duration::from_secs(2), || {
        resolves(&root_b, "apps/echo", &obj)
    });
    eprintln!("replicas: a bind through A visible through B after {seen:?}");
    assert!(seen.is_some());
    // B's view of the same context: A's reference works on B (same key).
    let via_b = root_b.resolve_str("apps").unwrap().unwrap();
    assert_eq!(
        via_b.ior().iiop_profiles().unwrap()[0].object_key,
        profile.object_key
    );

    let mut acked = vec!["apps/echo".to_owned()];
    // kill -9 replica A: the context reference A handed out goes on through B.
    drop(a);
    let start = Instant::now();
    ctx.bind(&n("after-kill"), Some(&obj)).unwrap();
    eprintln!(
        "replicas: first call after A's kill took {:?}",
        start.elapsed()
    );
    acked.push("apps/after-kill".into());
    assert!(resolves(&root, "apps/after-kill", &obj));

    // One etcd member down: writes still commit (quorum of two).
    cluster.kill(0);
    let start = Instant::now();
    let ok = eventually(Duration::from_secs(5), || {
        ctx.bind(&n("one-down"), Some(&obj)).is_ok()
    });
    eprintln!(
        "replicas: bind with one etcd member killed: {:?}",
        start.elapsed()
    );
    assert!(ok.is_some());
    acked.push("apps/one-down".into());

    // Two down: no quorum. Writes fail with TRANSIENT within the timeout; reads go on.
    cluster.kill(1);
    let start = Instant::now();
    match ctx.bind(&n("no-quorum"), Some(&obj)) {
        Err(BindError::System(e)) => assert_eq!(e.kind, SystemExceptionKind::Transient),
        other => panic!("a write without quorum: {other:?}"),
    }
    let refused = start.elapsed();
    eprintln!("replicas: write without quorum refused after {refused:?}");
    assert!(refused < Duration::from_secs(5), "{refused:?}");
    assert!(resolves(&root, "apps/echo", &obj));

    // Everything back: the members, then replica A.
    cluster.restart(0);
    cluster.restart(1);
    let _a = replica(pa, &url, &[pa, pb]);
    let ok = eventually(Duration::from_secs(10), || {
        ctx.bind(&n("back"), Some(&obj)).is_ok()
    });
    assert!(ok.is_some(), "writes work again");
    acked.push("apps/back".into());
    let root_a = root_at(&orb, &format!("corbaloc::127.0.0.1:{pa}/NameService"));
    for name in &acked {
        for (which, r) in [("A", &root_a), ("B", &root_b)] {
            let found = eventually(Duration::from_secs(2), || resolves(r, name, &obj));
            assert!(found.is_some(), "{name} through {which}");
        }
    }
}

#[test]
fn without_etcd_the_daemon_says_so_and_exits() {
    let port = free_port();
    let dead = free_port();
    let start = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_corbina-names"))
        .args(["--endpoint", &format!("127.0.0.1:{port}")])
        .args(["--store", &format!("etcd://127.0.0.1:{dead}/x")])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("etcd at 127.0.0.1:") && err.contains("quorum"),
        "{err}"
    );
    assert!(start.elapsed() < Duration::from_secs(10));
}

/// Two services on one prefix, in this process, racing: of eight binds of one name exactly
/// one wins (the others get AlreadyBound: compare-and-swap at commit), and eight
/// bind_new_context calls at once all succeed with eight distinct contexts (the id counter
/// is compared too).
#[test]
fn racing_replicas_bind_once_and_count_contexts_right() {
    use corbina_naming::store::etcd::EtcdConfig;
    use corbina_naming::{NamingService, Options};
    let Some(cluster) = EtcdCluster::start("race", 3) else {
        return;
    };
    let config = EtcdConfig::parse(&cluster.url("race")).unwrap();
    let services: Vec<(Orb, NamingService)> = (0..2)
        .map(|_| {
            let orb = common::loopback_orb();
            let s = NamingService::start(&orb, &Options::etcd(config.clone())).unwrap();
            (orb, s)
        })
        .collect();
    let client = Orb::with_config(OrbConfig::default());
    let roots: Vec<NamingContextExt> = services
        .iter()
        .map(|(_, s)| {
            let (h, p) = s.endpoint();
            root_at(&client, &format!("corbaloc::{h}:{p}/NameService"))
        })
        .collect();
    let obj = roots[0].new_context().unwrap().unwrap().as_object().clone();
    let barrier = std::sync::Barrier::new(8);
    let (wins, contexts) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let (root, obj, barrier) = (&roots[i % 2], &obj, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    let won = match root.bind(&n("contested"), Some(obj)) {
                        Ok(()) => true,
                        Err(BindError::AlreadyBound(_)) => false,
                        Err(e) => panic!("bind: {e:?}"),
                    };
                    let ctx = root
                        .bind_new_context(&n(&format!("ctx{i}")))
                        .unwrap()
                        .unwrap();
                    let key = ctx.as_object().ior().iiop_profiles().unwrap()[0]
                        .object_key
                        .clone();
                    (won, key)
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let wins = results.iter().filter(|r| r.0).count();
        let keys: std::collections::HashSet<_> = results.into_iter().map(|r| r.1).collect();
        (wins, keys.len())
    });
    assert_eq!(wins, 1, "exactly one bind of the contested name");
    assert_eq!(contexts, 8, "eight distinct contexts");
    // contested + ctx0..7 in the root: 9 bindings; contexts: the root, the object's,
    // eight. Both copies get there (the other replica's writes through its watch).
    for (_, service) in &services {
        let counted = eventually(Duration::from_secs(2), || {
            service.counts().unwrap() == (9, 10)
        });
        assert!(counted.is_some(), "{:?}", service.counts());
    }
}
