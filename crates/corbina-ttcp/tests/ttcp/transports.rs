//! The local transports, end to end: the bench check over Unix-domain sockets and over
//! shared memory (Corbina to Corbina, both server thread models), the choice of transport
//! from the IOR's components (`-ORBPreferUnix`), the failure semantics that apply to them
//! (a server killed mid-call, orderly closes resent, orderly shutdown), and omniORB interop
//! over Unix-domain sockets in both directions (`TAG_OMNIORB_UNIX_TRANS`).
//!
//! Without omniORB installed the interop tests print why and pass, unless
//! `REQUIRE_OMNIORB_PEERS` is set.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use corbina::config::{Endpoint, ThreadModel};
use corbina::transport::{
    local_host_name, Address, LocalTransport, TransportKind, TAG_CORBINA_SHM_TRANS,
    TAG_OMNIORB_UNIX_TRANS,
};
use corbina::{CompletionStatus, Orb, OrbConfig, SystemException, SystemExceptionKind};
use corbina_testpeers::{bench_peers, fresh_dir, omni_client_check, omni_server_with};
use corbina_ttcp::bench::bench::FailError;
use corbina_ttcp::bench::{Bench, BenchServant, BenchSkeleton, BinStruct};
use corbina_ttcp::servant::{BenchImpl, ByteCounter};

type R<T = ()> = Result<T, SystemException>;

/// The bench servant, with `echo("sleep:MS")` stalling (for calls cut by a dying server).
struct SleepyBench(BenchImpl);

impl BenchServant for SleepyBench {
    fn ping(&self) -> R {
        self.0.ping()
    }
    fn ping_oneway(&self) -> R {
        self.0.ping_oneway()
    }
    fn echo(&self, s: &str) -> R<String> {
        if let Some(ms) = s.strip_prefix("sleep:") {
            thread::sleep(Duration::from_millis(ms.parse().unwrap_or(0)));
        }
        self.0.echo(s)
    }
    fn fail(&self, code: i32) -> Result<(), FailError> {
        self.0.fail(code)
    }
    fn send_octets(&self, s: &[u8]) -> R {
        self.0.send_octets(s)
    }
    fn send_octets_oneway(&self, s: &[u8]) -> R {
        self.0.send_octets_oneway(s)
    }
    fn send_shorts(&self, s: &[i16]) -> R {
        self.0.send_shorts(s)
    }
    fn send_shorts_oneway(&self, s: &[i16]) -> R {
        self.0.send_shorts_oneway(s)
    }
    fn send_longs(&self, s: &[i32]) -> R {
        self.0.send_longs(s)
    }
    fn send_longs_oneway(&self, s: &[i32]) -> R {
        self.0.send_longs_oneway(s)
    }
    fn send_doubles(&self, s: &[f64]) -> R {
        self.0.send_doubles(s)
    }
    fn send_doubles_oneway(&self, s: &[f64]) -> R {
        self.0.send_doubles_oneway(s)
    }
    fn send_chars(&self, s: &[u8]) -> R {
        self.0.send_chars(s)
    }
    fn send_chars_oneway(&self, s: &[u8]) -> R {
        self.0.send_chars_oneway(s)
    }
    fn send_structs(&self, s: &[BinStruct]) -> R {
        self.0.send_structs(s)
    }
    fn send_structs_oneway(&self, s: &[BinStruct]) -> R {
        self.0.send_structs_oneway(s)
    }
    fn start_timer(&self) -> R {
        self.0.start_timer()
    }
    fn stop_timer(&self) -> R<u64> {
        self.0.stop_timer()
    }
}

/// A short, unique socket path (they are limited to 108 bytes).
fn socket_path(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("cbn-{}-{name}.sock", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

/// A bench server on its own ORB: TCP on loopback plus `local` endpoints.
fn server(config: OrbConfig) -> (Orb, String) {
    let config = OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..config
    };
    local_only_server(config)
}

/// A bench server with exactly the endpoints of `config`.
fn local_only_server(config: OrbConfig) -> (Orb, String) {
    let orb = Orb::with_config(config);
    let poa = orb.root_poa();
    let servant = SleepyBench(BenchImpl::new(Arc::new(ByteCounter::default())));
    let id = poa
        .activate_object(Arc::new(BenchSkeleton::new(servant)))
        .unwrap();
    let obj = poa.id_to_reference(&id).unwrap();
    poa.the_poa_manager().activate().unwrap();
    let ior = orb.object_to_string(&obj).unwrap();
    (orb, ior)
}

fn with_local(kind: TransportKind, path: &Path, model: ThreadModel) -> OrbConfig {
    let c = OrbConfig {
        thread_model: model,
        ..OrbConfig::default()
    };
    match kind {
        TransportKind::Shm => c.shm_endpoint(path),
        _ => c.unix_endpoint(path),
    }
}

fn check(bench: &Bench) {
    let results = corbina_ttcp::check::run_checks(bench);
    let failed: Vec<_> = results.iter().filter(|r| !r.ok()).collect();
    assert!(failed.is_empty(), "checks failed: {failed:?}");
    assert_eq!(results.len(), 9);
}

/// The transports the client's ropes run over.
fn rope_kinds(orb: &Orb) -> HashSet<TransportKind> {
    orb.connections().iter().map(|c| c.address.kind()).collect()
}

fn expect_sys(r: R<impl std::fmt::Debug>, kind: SystemExceptionKind, completed: CompletionStatus) {
    match r {
        Err(e) => {
            assert_eq!(e.kind, kind, "{e:?}");
            assert_eq!(e.completed, completed, "{e:?}");
        }
        Ok(v) => panic!("expected {kind:?}/{completed:?}, got Ok({v:?})"),
    }
}

fn local_components(ior: &str) -> Vec<LocalTransport> {
    let ior: corbina::giop::Ior = ior.parse().unwrap();
    ior.iiop_profiles().unwrap()[0]
        .components
        .iter()
        .filter_map(LocalTransport::from_component)
        .map(Result::unwrap)
        .collect()
}

fn bench_check_over(kind: TransportKind, model: ThreadModel) {
    let path = socket_path(&format!("check-{kind:?}-{model:?}").replace(['(', ')'], ""));
    let (server_orb, ior) = server(with_local(kind, &path, model));
    let published = local_components(&ior);
    assert_eq!(
        published,
        [LocalTransport {
            kind,
            host: local_host_name().to_owned(),
            path: path.clone(),
        }]
    );
    let client = Orb::with_config(OrbConfig::default());
    let bench = Bench::narrow(&client.string_to_object(&ior).unwrap()).unwrap();
    check(&bench);
    // Larger than a shared-memory ring, both ways.
    let big: Vec<u8> = (0..5_000_000).map(|i| (i % 251) as u8).collect();
    bench.start_timer().unwrap();
    bench.send_octets(&big).unwrap();
    bench.send_octets_oneway(&big).unwrap();
    assert_eq!(bench.stop_timer().unwrap(), 2 * big.len() as u64);
    let s = "z".repeat(3 << 20);
    assert_eq!(bench.echo(&s).unwrap(), s);
    assert_eq!(rope_kinds(&client), HashSet::from([kind]));
    server_orb.shutdown(true);
    assert!(!path.exists(), "the socket file is removed at shutdown");
}

#[test]
fn bench_check_over_unix_sockets() {
    bench_check_over(TransportKind::Unix, ThreadModel::ThreadPerConnection);
    bench_check_over(TransportKind::Unix, ThreadModel::Pool(3));
}

#[test]
fn bench_check_over_shared_memory() {
    bench_check_over(TransportKind::Shm, ThreadModel::ThreadPerConnection);
    bench_check_over(TransportKind::Shm, ThreadModel::Pool(3));
}

#[test]
fn the_transport_follows_the_ior_and_prefer_unix() {
    let (unix, shm) = (socket_path("pref-u"), socket_path("pref-s"));
    let config = OrbConfig::default().unix_endpoint(&unix).shm_endpoint(&shm);
    let (server_orb, ior) = server(config);
    let tags: Vec<u32> = {
        let ior: corbina::giop::Ior = ior.parse().unwrap();
        ior.iiop_profiles().unwrap()[0]
            .components
            .iter()
            .map(|c| c.tag)
            .collect()
    };
    assert!(tags.contains(&TAG_OMNIORB_UNIX_TRANS) && tags.contains(&TAG_CORBINA_SHM_TRANS));
    // Shared memory first, then Unix, then TCP.
    let client = Orb::with_config(OrbConfig::default());
    let b = Bench::narrow(&client.string_to_object(&ior).unwrap()).unwrap();
    b.ping().unwrap();
    assert_eq!(client.connections()[0].address, Address::Shm(shm.clone()));
    // -ORBPreferUnix 0: TCP.
    let (tcp_client, _) = Orb::init(["-ORBPreferUnix", "0"].map(String::from)).unwrap();
    let b = Bench::narrow(&tcp_client.string_to_object(&ior).unwrap()).unwrap();
    b.ping().unwrap();
    assert_eq!(rope_kinds(&tcp_client), HashSet::from([TransportKind::Tcp]));
    // A component for another host, or a path that does not exist, is not used.
    let mut parsed: corbina::giop::Ior = ior.parse().unwrap();
    let mut profile = parsed.iiop_profiles().unwrap().remove(0);
    profile
        .components
        .retain(|c| c.tag != TAG_CORBINA_SHM_TRANS);
    for c in &mut profile.components {
        if c.tag == TAG_OMNIORB_UNIX_TRANS {
            *c = LocalTransport {
                kind: TransportKind::Unix,
                host: format!("not-{}", local_host_name()),
                path: unix.clone(),
            }
            .to_component(corbina::cdr::ByteOrder::Big)
            .unwrap();
        }
    }
    profile.components.push(
        LocalTransport {
            kind: TransportKind::Shm,
            host: local_host_name().to_owned(),
            path: socket_path("nowhere"),
        }
        .to_component(corbina::cdr::ByteOrder::Little)
        .unwrap(),
    );
    parsed.profiles = profile.to_tagged().into_iter().collect();
    let other = Orb::with_config(OrbConfig::default());
    let b = Bench::narrow(&other.object_from_ior(parsed).unwrap()).unwrap();
    b.ping().unwrap();
    assert_eq!(rope_kinds(&other), HashSet::from([TransportKind::Tcp]));
    server_orb.shutdown(true);
}

#[test]
fn a_server_with_only_local_endpoints() {
    let path = socket_path("only-shm");
    let (server_orb, ior) = local_only_server(OrbConfig::default().shm_endpoint(&path));
    let parsed: corbina::giop::Ior = ior.parse().unwrap();
    let p = &parsed.iiop_profiles().unwrap()[0];
    assert_eq!((p.host.as_str(), p.port), (local_host_name(), 0));
    let client = Orb::with_config(OrbConfig::default());
    let b = Bench::narrow(&client.string_to_object(&ior).unwrap()).unwrap();
    assert_eq!(b.echo("shm only").unwrap(), "shm only");
    server_orb.shutdown(true);
}

fn orderly_closes_are_resent(kind: TransportKind, model: ThreadModel) {
    let path = socket_path(&format!(
        "close-{kind:?}-{}",
        model != ThreadModel::ThreadPerConnection
    ));
    let (server_orb, ior) = server(with_local(kind, &path, model));
    let client = Orb::with_config(OrbConfig::default());
    let b = Bench::narrow(&client.string_to_object(&ior).unwrap()).unwrap();
    b.ping().unwrap();
    // The server's scavenger closes the idle connection (CloseConnection, then close).
    let server = server_orb.server().unwrap();
    let start = Instant::now();
    while server.scavenge_now(Duration::ZERO) == 0 {
        assert!(start.elapsed() < Duration::from_secs(5), "never closed");
        thread::sleep(Duration::from_millis(5));
    }
    assert!(server.wait_closed(Duration::from_secs(5)));
    // The next call finds the strand closed and goes out on a new one.
    assert_eq!(b.echo("after close").unwrap(), "after close");
    // Orderly shutdown: a running request gets its reply; later calls are refused.
    let caller = {
        let b = Bench::unchecked_narrow(b.as_object());
        thread::spawn(move || b.echo("sleep:300"))
    };
    thread::sleep(Duration::from_millis(100));
    server_orb.shutdown(false);
    assert_eq!(caller.join().unwrap().unwrap(), "sleep:300");
    assert!(server.wait_closed(Duration::from_secs(5)));
    expect_sys(
        b.ping(),
        SystemExceptionKind::Transient,
        CompletionStatus::No,
    );
}

#[test]
fn orderly_closes_over_local_transports_are_resent() {
    for kind in [TransportKind::Unix, TransportKind::Shm] {
        orderly_closes_are_resent(kind, ThreadModel::ThreadPerConnection);
        orderly_closes_are_resent(kind, ThreadModel::Pool(2));
    }
}

// ---------------------------------------------------------------------------------------
// A server killed mid-call: a child process (this test binary, re-executed).
// ---------------------------------------------------------------------------------------

const CHILD_ENV: &str = "TRANSPORTS_CHILD_SERVER";

/// Not a test: the child server process's entry point (runs only with
/// `TRANSPORTS_CHILD_SERVER=unix:PATH` or `shm:PATH`; prints its IOR, serves until killed).
#[test]
fn child_server_entry() {
    let Some(spec) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let spec = spec.into_string().unwrap();
    let (kind, path) = spec.split_once(':').unwrap();
    let kind = if kind == "shm" {
        TransportKind::Shm
    } else {
        TransportKind::Unix
    };
    let (orb, ior) = server(with_local(
        kind,
        Path::new(path),
        ThreadModel::ThreadPerConnection,
    ));
    println!("{ior}");
    std::io::stdout().flush().unwrap();
    orb.run();
}

struct ChildServer {
    child: Child,
    ior: String,
}

impl ChildServer {
    fn start(kind: TransportKind, path: &Path) -> ChildServer {
        let spec = format!(
            "{}:{}",
            if kind == TransportKind::Shm {
                "shm"
            } else {
                "unix"
            },
            path.display()
        );
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "transports::child_server_entry",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, spec)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("child server starts");
        let out = child.stdout.take().unwrap();
        let mut lines = BufReader::new(out).lines();
        let ior = loop {
            let line = lines.next().expect("child server printed its IOR").unwrap();
            if let Some(at) = line.find("IOR:") {
                break line[at..].trim().to_owned();
            }
        };
        ChildServer { child, ior }
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn server_killed_mid_call_is_comm_failure_maybe() {
    for kind in [TransportKind::Unix, TransportKind::Shm] {
        let path = socket_path(&format!("kill-{kind:?}"));
        let mut child = ChildServer::start(kind, &path);
        let orb = Orb::with_config(OrbConfig::default());
        let b = Bench::unchecked_narrow(&orb.string_to_object(&child.ior).unwrap());
        assert_eq!(b.echo("warm").unwrap(), "warm");
        assert_eq!(rope_kinds(&orb), HashSet::from([kind]));
        let caller = {
            let b = Bench::unchecked_narrow(b.as_object());
            thread::spawn(move || b.echo("sleep:10000"))
        };
        thread::sleep(Duration::from_millis(400));
        child.child.kill().unwrap();
        child.child.wait().unwrap();
        let start = Instant::now();
        expect_sys(
            caller.join().unwrap(),
            SystemExceptionKind::CommFailure,
            CompletionStatus::Maybe,
        );
        assert!(start.elapsed() < Duration::from_secs(5), "{kind:?}");
        // Gone (its socket file left behind, refusing connections): nothing can run.
        expect_sys(
            b.ping(),
            SystemExceptionKind::Transient,
            CompletionStatus::No,
        );
        let _ = std::fs::remove_file(&path);
    }
}

// ---------------------------------------------------------------------------------------
// omniORB over Unix-domain sockets.
// ---------------------------------------------------------------------------------------

#[test]
fn corbina_client_uses_omniorb_unix_socket() {
    let Some(bin) = bench_peers() else { return };
    let dir = std::env::temp_dir().join(format!("cbn-omni-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let sock = dir.join("sock");
    let unix = format!("giop:unix:{}", sock.display());
    let (_peer, ior) = omni_server_with(bin, "cbn-omni", &["-ORBendPoint", &unix]);
    // omniORB publishes its socket with TAG_OMNIORB_UNIX_TRANS, and we use it.
    let published = local_components(&ior);
    assert_eq!(published.len(), 1, "{published:?}");
    assert_eq!(published[0].path, sock);
    assert_eq!(published[0].host, local_host_name());
    let orb = Orb::with_config(OrbConfig::default());
    let bench = Bench::narrow(&orb.string_to_object(&ior).unwrap()).unwrap();
    check(&bench);
    assert_eq!(orb.connections()[0].address, Address::Unix(sock.clone()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn omniorb_client_uses_corbina_unix_socket() {
    let Some(bin) = bench_peers() else { return };
    let path = socket_path("omni-client");
    let (orb, ior) = server(OrbConfig::default().unix_endpoint(&path));
    let file = fresh_dir("cbn-omnic").join("corbina.ior");
    std::fs::write(&file, ior + "\n").unwrap();
    // Unix sockets only: omniORB could not fall back to TCP unnoticed.
    omni_client_check(bin, &file, &["-ORBclientTransportRule", "* unix"]);
    orb.shutdown(true);
}

#[test]
fn socket_files_get_the_configured_permissions() {
    use std::os::unix::fs::PermissionsExt;
    for (kind, mode) in [(TransportKind::Unix, 0o600), (TransportKind::Shm, 0o660)] {
        let path = socket_path(&format!("perm-{mode:o}"));
        let config = with_local(kind, &path, ThreadModel::ThreadPerConnection)
            .socket_permissions(Some(mode));
        let (orb, ior) = local_only_server(config);
        let bits = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(bits, mode, "{kind:?} socket file mode");
        // Still reachable by its owner.
        let client = Orb::with_config(OrbConfig::default());
        let bench = Bench::narrow(&client.string_to_object(&ior).unwrap()).unwrap();
        assert_eq!(bench.echo("perm").unwrap(), "perm");
        orb.shutdown(true);
    }
}
