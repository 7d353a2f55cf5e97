//! A reference whose local endpoint (Unix-domain socket, shared memory) is stale still
//! works: the call falls back to the profile's TCP address, and the dead endpoint is
//! skipped (for every reference to it) until `STALE_LOCAL_RETRY` has passed.

mod common;

use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::bench::{Bench, BenchSkeleton};
use common::{serve, StaticBench};
use corbina::cdr::ByteOrder;
use corbina::client::ConnectionInfo;
use corbina::giop::Ior;
use corbina::transport::{local_host_name, Address, LocalTransport, TransportKind};
use corbina::{Orb, OrbConfig};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("corbina-fallback-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A socket file nobody listens on: bound, then closed (the file stays).
fn stale_socket(path: &Path) {
    drop(UnixListener::bind(path).unwrap());
    assert!(path.exists());
}

/// `ior` (a TCP-only Corbina server's) with a local endpoint of `kind` at `path` added to its
/// IIOP profile, as a server on this host would publish it.
fn with_local_endpoint(ior: &str, kind: TransportKind, path: &Path) -> String {
    let mut ior: Ior = ior.parse().unwrap();
    let mut profile = ior.iiop_profiles().unwrap().remove(0);
    let local = LocalTransport {
        kind,
        host: local_host_name().to_owned(),
        path: path.to_owned(),
    };
    profile
        .components
        .push(local.to_component(ByteOrder::NATIVE).unwrap());
    ior.profiles = vec![profile.to_tagged().unwrap()];
    ior.to_stringified().unwrap()
}

fn bench_server() -> (Orb, String) {
    serve(Arc::new(BenchSkeleton::new(Arc::new(
        StaticBench::default(),
    ))))
}

fn rope_to(orb: &Orb, address: &Address) -> ConnectionInfo {
    orb.connections()
        .into_iter()
        .find(|c| c.address == *address)
        .unwrap_or_else(|| panic!("no connections to {address:?}"))
}

/// The client's TCP connections' state.
fn tcp_connections(orb: &Orb) -> Vec<ConnectionInfo> {
    orb.connections()
        .into_iter()
        .filter(|c| c.address.kind() == TransportKind::Tcp)
        .collect()
}

#[test]
fn a_stale_unix_endpoint_falls_back_to_tcp_and_is_skipped_afterwards() {
    let dir = temp_dir("unix");
    let sock = dir.join("gone.sock");
    stale_socket(&sock);
    let (_server, tcp_ior) = bench_server();
    let ior = with_local_endpoint(&tcp_ior, TransportKind::Unix, &sock);

    let client = Orb::with_config(OrbConfig::default());
    let bench = Bench::narrow(&client.string_to_object(&ior).unwrap()).unwrap();
    bench.ping().unwrap();
    let unix = rope_to(&client, &Address::Unix(sock.clone()));
    assert!(unix.stale);
    assert_eq!(unix.open_strands, 0);
    let tcp = tcp_connections(&client);
    assert_eq!(tcp.len(), 1);
    assert_eq!(tcp[0].open_strands, 1);

    // Something listens there now, counting connections: while the endpoint is marked
    // stale, neither this reference nor a new one to it tries it again.
    std::fs::remove_file(&sock).unwrap();
    let listener = UnixListener::bind(&sock).unwrap();
    listener.set_nonblocking(true).unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    for _ in 0..5 {
        bench.ping().unwrap();
    }
    let again = Bench::narrow(&client.string_to_object(&ior).unwrap()).unwrap();
    again.ping().unwrap();
    again.send_octets_oneway(&[1, 2, 3]).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    while listener.accept().is_ok() {
        accepted.fetch_add(1, Ordering::Relaxed);
    }
    assert_eq!(accepted.load(Ordering::Relaxed), 0);
    assert_eq!(tcp_connections(&client)[0].open_strands, 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_stale_shm_endpoint_falls_back_to_tcp() {
    let dir = temp_dir("shm");
    let sock = dir.join("gone-shm.sock");
    stale_socket(&sock);
    let (_server, tcp_ior) = bench_server();
    let ior = with_local_endpoint(&tcp_ior, TransportKind::Shm, &sock);
    let client = Orb::with_config(OrbConfig::default());
    let bench = Bench::narrow(&client.string_to_object(&ior).unwrap()).unwrap();
    assert_eq!(bench.echo("over tcp").unwrap(), "over tcp");
    assert!(rope_to(&client, &Address::Shm(sock.clone())).stale);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_live_unix_endpoint_is_still_preferred() {
    let dir = temp_dir("live");
    let sock = dir.join("live.sock");
    let server = Orb::with_config(
        OrbConfig::default()
            .endpoint("127.0.0.1", 0)
            .unix_endpoint(&sock),
    );
    let poa = server.root_poa();
    let id = poa
        .activate_object(Arc::new(BenchSkeleton::new(Arc::new(
            StaticBench::default(),
        ))))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    let ior = server
        .object_to_string(&poa.id_to_reference(&id).unwrap())
        .unwrap();
    let client = Orb::with_config(OrbConfig::default());
    let bench = Bench::narrow(&client.string_to_object(&ior).unwrap()).unwrap();
    bench.ping().unwrap();
    let unix = rope_to(&client, &Address::Unix(sock.clone()));
    assert!(!unix.stale);
    assert_eq!(unix.open_strands, 1);
    assert_eq!(client.connections().len(), 1);
    server.shutdown(true);
    let _ = std::fs::remove_dir_all(&dir);
}
