//! Bindings with a lease, on both stores: kept while their keeper lives, gone at once when
//! it is dropped, gone within the TTL when nobody keeps them alive, and within TTL + 1 s
//! after the process holding them is killed with SIGKILL. A plain rebind takes a name out
//! of its lease; standard CosNaming calls see ordinary bindings.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use corbina::{ObjectRef, Orb, OrbConfig};
use corbina_naming::cos_naming::naming_context_ext::ResolveStrError;
use corbina_naming::cos_naming::NamingContextExt;
use corbina_naming::lease::{bind_with_ttl, leases, leases_of, LeaseError, LeasedBinding};
use corbina_naming::store::etcd::EtcdConfig;
use corbina_naming::{NamingService, Options};
use corbina_testpeers::PeerProcess;

use super::common;

use common::{etcd, loopback_orb};

/// Set in the child process of the SIGKILL test: the URL of the service to bind in.
const CHILD_ENV: &str = "CORBINA_LEASE_CHILD_NS";

struct Fixture {
    orb: Orb,
    _service: NamingService,
    url: String,
    _cluster: Option<etcd::EtcdCluster>,
}

fn start(etcd_store: bool, name: &str) -> Option<Fixture> {
    let (options, cluster) = if etcd_store {
        let cluster = etcd::EtcdCluster::start(name, 3)?;
        let config = EtcdConfig::parse(&cluster.url(name)).unwrap();
        (Options::etcd(config), Some(cluster))
    } else {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("naming-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        (Options::new(dir), None)
    };
    let orb = loopback_orb();
    let service = NamingService::start(&orb, &options).unwrap();
    let (host, port) = service.endpoint();
    let url = format!("corbaloc::{host}:{port}/NameService");
    Some(Fixture {
        orb,
        _service: service,
        url,
        _cluster: cluster,
    })
}

fn root(orb: &Orb, url: &str) -> NamingContextExt {
    NamingContextExt::narrow(&orb.string_to_object(url).unwrap()).unwrap()
}

fn bound(root: &NamingContextExt, name: &str) -> bool {
    match root.resolve_str(name) {
        Ok(_) => true,
        Err(ResolveStrError::NotFound(_)) => false,
        Err(e) => panic!("resolve {name}: {e:?}"),
    }
}

/// Polls until `name` is unbound; how long that took (`None`: not within `limit`).
fn gone_within(root: &NamingContextExt, name: &str, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if !bound(root, name) {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

fn leases_work(etcd_store: bool) {
    let Some(f) = start(
        etcd_store,
        if etcd_store {
            "lease-etcd"
        } else {
            "lease-redb"
        },
    ) else {
        return;
    };
    let root = root(&f.orb, &f.url);
    let obj: ObjectRef = root.new_context().unwrap().unwrap().as_object().clone();
    let leases = leases_of(&f.orb, root.as_object()).unwrap();
    root.bind_new_context(&corbina_naming::name::to_name("apps").unwrap())
        .unwrap();
    let ttl = Duration::from_secs(1);

    // Kept alive past several TTLs while the keeper lives; gone at once when dropped.
    let kept = LeasedBinding::bind(&leases, "apps/kept", &obj, ttl).unwrap();
    assert_eq!(
        root.resolve_str("apps/kept").unwrap().unwrap().ior(),
        obj.ior()
    );
    std::thread::sleep(ttl * 5 / 2);
    assert!(bound(&root, "apps/kept"));
    drop(kept);
    assert!(gone_within(&root, "apps/kept", Duration::from_millis(500)).is_some());

    // Not kept alive: gone within the TTL (+ the sweep, + 1 s slack).
    let start = Instant::now();
    let lease = bind_with_ttl(&leases, "apps/lapsed", &obj, ttl).unwrap();
    // A plain rebind takes a name out of its lease.
    bind_with_ttl(&leases, "apps/rebound", &obj, ttl).unwrap();
    root.rebind(
        &corbina_naming::name::to_name("apps/rebound").unwrap(),
        Some(&obj),
    )
    .unwrap();
    let gone = gone_within(&root, "apps/lapsed", Duration::from_secs(3)).expect("lapsed");
    let after = start.elapsed();
    eprintln!(
        "leases: an unkept binding of TTL {ttl:?} went after {after:?} ({gone:?} of polling)"
    );
    assert!(after <= ttl + Duration::from_secs(1), "{after:?}");
    assert!(bound(&root, "apps/rebound"));
    // The ended lease is unknown to keep-alives and binds.
    let r = leases.keep_alive(lease);
    assert!(
        matches!(r, Err(leases::KeepAliveError::UnknownLease(_))),
        "{r:?}"
    );
    assert!(matches!(
        leases
            .bind(lease, "apps/late", Some(&obj))
            .map_err(LeaseError::from),
        Err(LeaseError::UnknownLease)
    ));
    // A name whose path is missing.
    assert!(matches!(
        bind_with_ttl(&leases, "nowhere/x", &obj, ttl),
        Err(LeaseError::BadName(_))
    ));
}

#[test]
fn leases_on_redb() {
    leases_work(false);
}

#[test]
fn leases_on_etcd() {
    leases_work(true);
}

/// The child of the SIGKILL test: binds `victim` under a 2 s lease, says so, and waits to
/// be killed. Does nothing in a normal test run.
#[test]
fn lease_holder_child() {
    let Ok(url) = std::env::var(CHILD_ENV) else {
        return;
    };
    let orb = Orb::with_config(OrbConfig::default());
    let root = root(&orb, &url);
    let leases = leases_of(&orb, root.as_object()).unwrap();
    let obj = root.new_context().unwrap().unwrap().as_object().clone();
    let _b = LeasedBinding::bind(&leases, "victim", &obj, Duration::from_secs(2)).unwrap();
    println!("BOUND");
    std::thread::sleep(Duration::from_secs(60));
}

fn killed_holder(etcd_store: bool) {
    let Some(f) = start(
        etcd_store,
        if etcd_store { "kill-etcd" } else { "kill-redb" },
    ) else {
        return;
    };
    let root = root(&f.orb, &f.url);
    let mut child = PeerProcess::spawn(
        "lease holder",
        Command::new(std::env::current_exe().unwrap())
            .args(["leases::lease_holder_child", "--exact", "--nocapture"])
            .env(CHILD_ENV, &f.url)
            .stdout(Stdio::piped()),
    );
    let out = child.child_mut().stdout.take().unwrap();
    let bound_line = BufReader::new(out)
        .lines()
        .map_while(Result::ok)
        .any(|l| l.trim() == "BOUND");
    assert!(bound_line, "the child bound; stderr:\n{}", child.stderr());
    // Alive: kept past its TTL.
    std::thread::sleep(Duration::from_secs(3));
    assert!(bound(&root, "victim"));
    child.kill();
    let gone = gone_within(&root, "victim", Duration::from_secs(5));
    eprintln!("leases: the holder's binding went {gone:?} after its SIGKILL (TTL 2 s)");
    let gone = gone.expect("gone after the kill");
    assert!(gone <= Duration::from_secs(3), "{gone:?}");
}

#[test]
fn a_killed_holders_bindings_go_within_the_ttl_redb() {
    killed_holder(false);
}

#[test]
fn a_killed_holders_bindings_go_within_the_ttl_etcd() {
    killed_holder(true);
}
