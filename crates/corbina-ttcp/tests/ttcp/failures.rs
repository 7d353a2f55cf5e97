//! The IIOP runtime's failure semantics, Corbina to Corbina: connect failures, orderly
//! closes racing calls, servers dying mid-call, call timeouts (ORB, thread, reference),
//! LOCATION_FORWARD and NEEDS_ADDRESSING_MODE, LocateRequest, malformed input, connection
//! limits, CancelRequest, oneways, the scavengers on both sides, orderly shutdown, and the
//! thread pool server model.
//!
//! Servers that must be killed run in a child process: this test binary re-executed with
//! `FAILURES_CHILD_SERVER` set (see [`child_server_entry`]).

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use corbina::cdr::{ByteOrder, CodeSets};
use corbina::config::{Endpoint, ThreadModel};
use corbina::giop::{
    CancelRequestHeader, GiopMessage, Ior, LocateRequestHeader, LocateStatus, MessageWriter,
    ObjectKey, ReplyHeader, ReplyStatus, RequestHeader, TargetAddress, Version,
};
use corbina::poa::{
    Cookie, DispatchError, IdAssignmentPolicy, LocateOutcome, ObjectId, Poa, PolicyList,
    RequestProcessingPolicy, ServantLocator, ServantManager, ServantRetentionPolicy,
};
use corbina::server::{RequestDispatcher, Server};
use corbina::{
    CompletionStatus, ObjectRef, Orb, OrbConfig, Servant, ServerRequest, SystemException,
    SystemExceptionKind,
};
use corbina_ttcp::bench::bench::FailError;
use corbina_ttcp::bench::{Bench, BenchServant, BenchSkeleton, BinStruct};
use corbina_ttcp::servant::{BenchImpl, ByteCounter};

type R<T = ()> = Result<T, SystemException>;

// ---------------------------------------------------------------------------------------
// A Bench servant for failure tests: counts executions, and `echo("sleep:MS")` stalls.
// ---------------------------------------------------------------------------------------

#[derive(Default)]
struct TestBench {
    inner: BenchImpl,
    /// Executions of `ping` and `echo`.
    runs: Arc<AtomicU64>,
    /// Threads that ran an upcall.
    threads: Arc<Mutex<HashSet<thread::ThreadId>>>,
}

impl TestBench {
    fn new() -> TestBench {
        TestBench {
            inner: BenchImpl::new(Arc::new(ByteCounter::default())),
            ..TestBench::default()
        }
    }

    fn seen(&self) {
        self.runs.fetch_add(1, Ordering::SeqCst);
        self.threads.lock().unwrap().insert(thread::current().id());
    }
}

impl BenchServant for TestBench {
    fn ping(&self) -> R {
        self.seen();
        Ok(())
    }
    fn ping_oneway(&self) -> R {
        self.seen();
        Ok(())
    }
    fn echo(&self, s: &str) -> R<String> {
        self.seen();
        if let Some(ms) = s.strip_prefix("sleep:") {
            thread::sleep(Duration::from_millis(ms.parse().unwrap_or(0)));
        }
        Ok(s.to_owned())
    }
    fn fail(&self, code: i32) -> Result<(), FailError> {
        self.inner.fail(code)
    }
    fn send_octets(&self, s: &[u8]) -> R {
        self.inner.send_octets(s)
    }
    fn send_octets_oneway(&self, s: &[u8]) -> R {
        self.inner.send_octets_oneway(s)
    }
    fn send_shorts(&self, s: &[i16]) -> R {
        self.inner.send_shorts(s)
    }
    fn send_shorts_oneway(&self, s: &[i16]) -> R {
        self.inner.send_shorts_oneway(s)
    }
    fn send_longs(&self, s: &[i32]) -> R {
        self.inner.send_longs(s)
    }
    fn send_longs_oneway(&self, s: &[i32]) -> R {
        self.inner.send_longs_oneway(s)
    }
    fn send_doubles(&self, s: &[f64]) -> R {
        self.inner.send_doubles(s)
    }
    fn send_doubles_oneway(&self, s: &[f64]) -> R {
        self.inner.send_doubles_oneway(s)
    }
    fn send_chars(&self, s: &[u8]) -> R {
        self.inner.send_chars(s)
    }
    fn send_chars_oneway(&self, s: &[u8]) -> R {
        self.inner.send_chars_oneway(s)
    }
    fn send_structs(&self, s: &[BinStruct]) -> R {
        self.inner.send_structs(s)
    }
    fn send_structs_oneway(&self, s: &[BinStruct]) -> R {
        self.inner.send_structs_oneway(s)
    }
    fn start_timer(&self) -> R {
        self.inner.start_timer()
    }
    fn stop_timer(&self) -> R<u64> {
        self.inner.stop_timer()
    }
}

/// An in-process server on its own ORB (loopback, ephemeral port).
struct TestServer {
    orb: Orb,
    ior: String,
    obj: ObjectRef,
    runs: Arc<AtomicU64>,
    threads: Arc<Mutex<HashSet<thread::ThreadId>>>,
}

impl TestServer {
    fn start(config: OrbConfig) -> TestServer {
        let config = OrbConfig {
            endpoints: vec![Endpoint {
                host: "127.0.0.1".into(),
                port: 0,
            }],
            ..config
        };
        let orb = Orb::with_config(config);
        let poa = orb.root_poa();
        let servant = TestBench::new();
        let runs = servant.runs.clone();
        let threads = servant.threads.clone();
        let id = poa
            .activate_object(Arc::new(BenchSkeleton::new(servant)))
            .unwrap();
        let obj = poa.id_to_reference(&id).unwrap();
        poa.the_poa_manager().activate().unwrap();
        let ior = orb.object_to_string(&obj).unwrap();
        TestServer {
            orb,
            ior,
            obj,
            runs,
            threads,
        }
    }

    fn server(&self) -> Arc<Server> {
        self.orb.server().expect("server running")
    }

    fn key(&self) -> Vec<u8> {
        self.obj.ior().iiop_profiles().unwrap()[0]
            .object_key
            .as_bytes()
            .to_vec()
    }

    fn port(&self) -> u16 {
        self.server().addresses()[0].port()
    }

    fn runs(&self) -> u64 {
        self.runs.load(Ordering::SeqCst)
    }
}

fn client(config: OrbConfig) -> Orb {
    Orb::with_config(config)
}

fn bench(orb: &Orb, ior: &str) -> Bench {
    Bench::unchecked_narrow(&orb.string_to_object(ior).unwrap())
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

fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if f() {
            return true;
        }
        thread::sleep(Duration::from_millis(5));
    }
    f()
}

fn both_models(test: impl Fn(ThreadModel)) {
    test(ThreadModel::ThreadPerConnection);
    test(ThreadModel::Pool(3));
}

fn with_model(model: ThreadModel) -> OrbConfig {
    OrbConfig {
        thread_model: model,
        ..OrbConfig::default()
    }
}

// ---------------------------------------------------------------------------------------
// A server in a child process.
// ---------------------------------------------------------------------------------------

const CHILD_ENV: &str = "FAILURES_CHILD_SERVER";

/// Not a test: the entry point of the child server process (runs only with
/// `FAILURES_CHILD_SERVER` set; prints its IOR and serves until killed).
#[test]
fn child_server_entry() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let s = TestServer::start(OrbConfig::default());
    println!("{}", s.ior);
    std::io::stdout().flush().unwrap();
    s.orb.run();
}

struct ChildServer {
    child: Child,
    ior: String,
}

impl ChildServer {
    fn start() -> ChildServer {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "failures::child_server_entry",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("child server starts");
        let out = child.stdout.take().unwrap();
        let mut lines = BufReader::new(out).lines();
        let ior = loop {
            let line = lines.next().expect("child server printed its IOR").unwrap();
            // libtest prints "test child_server_entry ... " before it, on the same line.
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

// ---------------------------------------------------------------------------------------
// Raw GIOP over a TcpStream.
// ---------------------------------------------------------------------------------------

fn raw_connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

fn send(s: &mut TcpStream, w: corbina::cdr::CdrWriter<'_>) {
    s.write_all(&w.segments().concat()).unwrap();
}

fn raw_request(s: &mut TcpStream, id: u32, key: &[u8], op: &str) {
    let h = RequestHeader::new(id, ObjectKey::new(key.to_vec()), op);
    let m =
        MessageWriter::request(Version::V1_2, ByteOrder::NATIVE, CodeSets::DEFAULT, &h).unwrap();
    send(s, m.finish().unwrap());
}

/// One whole message read off `s` as raw bytes (header, then exactly its body): what the
/// peer put on the wire, framed by hand. `None` at end of stream or on an error.
fn try_raw_read(s: &mut TcpStream) -> Option<corbina::giop::Message> {
    let mut header = [0u8; corbina::giop::HEADER_LEN];
    s.read_exact(&mut header).ok()?;
    let h = corbina::giop::MessageHeader::decode(&header).ok()?;
    let mut bytes = header.to_vec();
    bytes.resize(h.total_len(), 0);
    s.read_exact(&mut bytes[corbina::giop::HEADER_LEN..]).ok()?;
    corbina::giop::Message::from_bytes(bytes).ok()
}

fn raw_read(s: &mut TcpStream) -> corbina::giop::Message {
    try_raw_read(s).expect("a message")
}

/// Reads until the peer closes (or resets); true if it did within the read timeout.
fn closed_by_peer(s: &mut TcpStream) -> bool {
    let mut buf = [0u8; 64];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

fn msg_type(m: &corbina::giop::Message) -> u8 {
    m.bytes()[7]
}

const MSG_REPLY: u8 = 1;
const MSG_LOCATE_REPLY: u8 = 4;
const MSG_CLOSE_CONNECTION: u8 = 5;
const MSG_ERROR: u8 = 6;

// ---------------------------------------------------------------------------------------
// Connect failures.
// ---------------------------------------------------------------------------------------

#[test]
fn connect_refused_is_transient_not_completed() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let orb = client(OrbConfig::default());
    let b = bench(&orb, &format!("corbaloc::1.2@127.0.0.1:{port}/x"));
    expect_sys(
        b.ping(),
        SystemExceptionKind::Transient,
        CompletionStatus::No,
    );
}

#[test]
fn connect_timeout_is_transient() {
    // A listener that never accepts, its backlog filled: further SYNs are dropped and a
    // connect hangs until its timeout.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let mut held = Vec::new();
    let mut blocked = false;
    for _ in 0..4096 {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(100)) {
            Ok(s) => held.push(s),
            Err(_) => {
                blocked = true;
                break;
            }
        }
    }
    assert!(blocked, "could not fill the listen backlog");
    let orb = client(OrbConfig::default().connect_timeout(Duration::from_millis(300)));
    let b = bench(&orb, &format!("corbaloc::1.2@127.0.0.1:{}/x", addr.port()));
    let start = Instant::now();
    expect_sys(
        b.ping(),
        SystemExceptionKind::Transient,
        CompletionStatus::No,
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    drop(held);
}

// ---------------------------------------------------------------------------------------
// Orderly close racing calls: resent, never lost, never run twice.
// ---------------------------------------------------------------------------------------

fn close_connection_race(model: ThreadModel) {
    let s = TestServer::start(with_model(model).idle_timeout(None));
    let server = s.server();
    let orb = client(OrbConfig::default().idle_timeout(None));
    let b = bench(&orb, &s.ior);
    b.ping().unwrap();
    let before = s.runs();
    const CALLERS: u64 = 2;
    const CALLS: u64 = 1500;
    let done = Arc::new(AtomicBool::new(false));
    let scavenger = {
        let server = server.clone();
        let done = done.clone();
        thread::spawn(move || {
            let mut closed = 0;
            while !done.load(Ordering::SeqCst) {
                closed += server.scavenge_now(Duration::ZERO);
                thread::sleep(Duration::from_micros(100));
            }
            closed
        })
    };
    let callers: Vec<_> = (0..CALLERS)
        .map(|_| {
            let b = b.clone_for_test();
            thread::spawn(move || {
                for i in 0..CALLS {
                    if let Err(e) = b.ping() {
                        panic!("call {i} failed: {e:?}");
                    }
                }
            })
        })
        .collect();
    for c in callers {
        c.join().unwrap();
    }
    done.store(true, Ordering::SeqCst);
    let closed = scavenger.join().unwrap();
    assert!(
        closed > 10,
        "the scavenger closed only {closed} connections"
    );
    assert_eq!(
        s.runs() - before,
        CALLERS * CALLS,
        "a call ran twice or not at all"
    );
    s.orb.shutdown(true);
}

trait CloneForTest {
    fn clone_for_test(&self) -> Self;
}

impl CloneForTest for Bench {
    fn clone_for_test(&self) -> Bench {
        Bench::unchecked_narrow(self.as_object())
    }
}

#[test]
fn orderly_close_racing_calls_is_resent_exactly_once() {
    both_models(close_connection_race);
}

// ---------------------------------------------------------------------------------------
// A connection lost after the request was sent.
// ---------------------------------------------------------------------------------------

#[test]
fn server_killed_mid_call_is_comm_failure_maybe() {
    let mut child = ChildServer::start();
    let orb = client(OrbConfig::default());
    let b = bench(&orb, &child.ior);
    assert_eq!(b.echo("warm").unwrap(), "warm");
    let caller = {
        let b = b.clone_for_test();
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
    assert!(start.elapsed() < Duration::from_secs(5));
    // The server is gone: nothing can run, and the client says so.
    expect_sys(
        b.ping(),
        SystemExceptionKind::Transient,
        CompletionStatus::No,
    );
}

#[test]
fn server_killed_while_idle_is_not_completed() {
    let mut child = ChildServer::start();
    let orb = client(OrbConfig::default());
    let b = bench(&orb, &child.ior);
    b.ping().unwrap();
    child.child.kill().unwrap();
    child.child.wait().unwrap();
    thread::sleep(Duration::from_millis(50));
    // The idle strand was closed under us before we sent: the request never left.
    expect_sys(
        b.ping(),
        SystemExceptionKind::Transient,
        CompletionStatus::No,
    );
}

// ---------------------------------------------------------------------------------------
// Call timeouts.
// ---------------------------------------------------------------------------------------

#[test]
fn orb_call_timeout_discards_the_strand_and_the_late_reply() {
    let s = TestServer::start(OrbConfig::default());
    let orb = client(
        OrbConfig::default()
            .call_timeout(Duration::from_millis(200))
            .max_strands_per_rope(1),
    );
    let b = bench(&orb, &s.ior);
    assert_eq!(b.echo("first").unwrap(), "first");
    let start = Instant::now();
    expect_sys(
        b.echo("sleep:700"),
        SystemExceptionKind::Timeout,
        CompletionStatus::Maybe,
    );
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(190) && took < Duration::from_millis(650),
        "{took:?}"
    );
    // Same reference, one strand allowed: the next call gets its own reply.
    assert_eq!(b.echo("second").unwrap(), "second");
    thread::sleep(Duration::from_millis(700));
    assert_eq!(b.echo("third").unwrap(), "third");
    assert_eq!(open_strands(&orb), 1);
}

#[test]
fn thread_call_timeout_overrides_the_orb() {
    let s = TestServer::start(OrbConfig::default());
    let orb = client(OrbConfig::default());
    let b = bench(&orb, &s.ior);
    corbina::client::set_thread_call_timeout(Some(Duration::from_millis(150)));
    expect_sys(
        b.echo("sleep:500"),
        SystemExceptionKind::Timeout,
        CompletionStatus::Maybe,
    );
    // Other threads are not affected.
    let other = {
        let b = b.clone_for_test();
        thread::spawn(move || b.echo("sleep:300"))
    };
    assert_eq!(other.join().unwrap().unwrap(), "sleep:300");
    corbina::client::set_thread_call_timeout(None);
    assert_eq!(corbina::client::thread_call_timeout(), None);
    assert_eq!(b.echo("sleep:300").unwrap(), "sleep:300");

    // A thread timeout shorter than the ORB's wins too.
    let orb = client(OrbConfig::default().call_timeout(Duration::from_secs(5)));
    let b = bench(&orb, &s.ior);
    corbina::client::set_thread_call_timeout(Some(Duration::from_millis(150)));
    expect_sys(
        b.echo("sleep:500"),
        SystemExceptionKind::Timeout,
        CompletionStatus::Maybe,
    );
    corbina::client::set_thread_call_timeout(None);
}

#[test]
fn reference_call_timeout_overrides_thread_and_orb() {
    let s = TestServer::start(OrbConfig::default());
    let orb = client(OrbConfig::default().call_timeout(Duration::from_millis(100)));
    let obj = orb.string_to_object(&s.ior).unwrap();
    let short = Bench::unchecked_narrow(
        &orb.object_with_timeout(&obj, Duration::from_millis(150))
            .unwrap(),
    );
    let long = Bench::unchecked_narrow(
        &orb.object_with_timeout(&obj, Duration::from_secs(5))
            .unwrap(),
    );
    let plain = Bench::unchecked_narrow(&obj);
    // The ORB's 100 ms applies to the plain reference.
    expect_sys(
        plain.echo("sleep:400"),
        SystemExceptionKind::Timeout,
        CompletionStatus::Maybe,
    );
    // The reference's 5 s wins over the ORB's 100 ms and a thread's 100 ms.
    corbina::client::set_thread_call_timeout(Some(Duration::from_millis(100)));
    assert_eq!(long.echo("sleep:400").unwrap(), "sleep:400");
    corbina::client::set_thread_call_timeout(Some(Duration::from_secs(5)));
    // The reference's 150 ms wins over the thread's 5 s.
    expect_sys(
        short.echo("sleep:600"),
        SystemExceptionKind::Timeout,
        CompletionStatus::Maybe,
    );
    // The thread's 5 s wins over the ORB's 100 ms.
    assert_eq!(plain.echo("sleep:300").unwrap(), "sleep:300");
    corbina::client::set_thread_call_timeout(None);
    // All three share the ORB's connections to the server.
    assert_eq!(orb.connections().len(), 1);
}

// ---------------------------------------------------------------------------------------
// LOCATION_FORWARD through a POA servant locator; hop limit; NEEDS_ADDRESSING_MODE.
// ---------------------------------------------------------------------------------------

struct Forwarder {
    to: Mutex<Option<ObjectRef>>,
    permanent: bool,
    calls: AtomicUsize,
}

impl ServantLocator for Forwarder {
    fn preinvoke(
        &self,
        _oid: &ObjectId,
        _adapter: &Poa,
        _operation: &str,
    ) -> Result<(Arc<dyn Servant>, Cookie), DispatchError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let reference = self.to.lock().unwrap().clone().expect("forward target set");
        Err(DispatchError::Forward {
            reference,
            permanent: self.permanent,
        })
    }

    fn postinvoke(
        &self,
        _oid: &ObjectId,
        _adapter: &Poa,
        _operation: &str,
        _cookie: Cookie,
        _servant: Arc<dyn Servant>,
    ) {
    }
}

/// A forwarding object in a NON_RETAIN / USE_SERVANT_MANAGER POA of `s`'s ORB.
fn forwarding_object(s: &TestServer, name: &str, permanent: bool) -> (ObjectRef, Arc<Forwarder>) {
    let policies = PolicyList::default()
        .with_servant_retention(ServantRetentionPolicy::NonRetain)
        .with_request_processing(RequestProcessingPolicy::UseServantManager)
        .with_id_assignment(IdAssignmentPolicy::UserId);
    let poa = s.orb.root_poa().create_poa(name, None, policies).unwrap();
    let locator = Arc::new(Forwarder {
        to: Mutex::new(None),
        permanent,
        calls: AtomicUsize::new(0),
    });
    poa.set_servant_manager(ServantManager::Locator(locator.clone()))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    let obj = poa.create_reference_with_id(&ObjectId::from("fwd"), Bench::REPOSITORY_ID);
    (obj, locator)
}

#[test]
fn location_forward_from_a_servant_locator_is_followed() {
    for permanent in [false, true] {
        let s = TestServer::start(OrbConfig::default());
        let (fwd, locator) =
            forwarding_object(&s, if permanent { "perm" } else { "temp" }, permanent);
        *locator.to.lock().unwrap() = Some(s.obj.clone());
        let orb = client(OrbConfig::default());
        let b = bench(&orb, &s.orb.object_to_string(&fwd).unwrap());
        assert_eq!(b.echo("via forward").unwrap(), "via forward");
        assert_eq!(locator.calls.load(Ordering::SeqCst), 1);
        assert_eq!(s.runs(), 1);
        // The forward is remembered: later calls go straight to the target.
        assert_eq!(b.echo("again").unwrap(), "again");
        assert_eq!(locator.calls.load(Ordering::SeqCst), 1);
        assert_eq!(s.runs(), 2);
        s.orb.shutdown(true);
    }
}

#[test]
fn forward_loop_stops_at_the_hop_limit() {
    let s = TestServer::start(OrbConfig::default());
    let (fwd, locator) = forwarding_object(&s, "loop", false);
    *locator.to.lock().unwrap() = Some(fwd.clone());
    let orb = client(OrbConfig::default().forward_limit(3));
    let b = bench(&orb, &s.orb.object_to_string(&fwd).unwrap());
    expect_sys(
        b.ping(),
        SystemExceptionKind::Transient,
        CompletionStatus::No,
    );
    // The first request and three forwards followed, no more.
    assert_eq!(locator.calls.load(Ordering::SeqCst), 4);
    expect_sys(
        b.ping(),
        SystemExceptionKind::Transient,
        CompletionStatus::No,
    );
    let total = locator.calls.load(Ordering::SeqCst);
    assert!(total <= 8, "{total} requests for two calls");
    assert_eq!(s.runs(), 0);
}

/// A hand-written server that answers NEEDS_ADDRESSING_MODE(ReferenceAddr) to anything not
/// addressed by reference, and echoes the `echo` argument otherwise.
#[test]
fn needs_addressing_mode_is_honoured() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        loop {
            let Some(m) = try_raw_read(&mut s) else {
                return;
            };
            let version = m.header().version;
            let GiopMessage::Request { header, body } = m.decode().unwrap() else {
                continue;
            };
            let by_reference = matches!(header.target, TargetAddress::Reference(_));
            seen2.lock().unwrap().push(by_reference);
            let cs = CodeSets::DEFAULT;
            let reply = if by_reference {
                let arg = body.reader(cs).read_string().unwrap();
                let h = ReplyHeader::new(header.request_id, ReplyStatus::NoException);
                let mut w = MessageWriter::reply(version, ByteOrder::NATIVE, cs, &h).unwrap();
                w.body().write_string(&arg).unwrap();
                w.finish().unwrap()
            } else {
                let h = ReplyHeader::new(header.request_id, ReplyStatus::NeedsAddressingMode);
                let mut w = MessageWriter::reply(version, ByteOrder::NATIVE, cs, &h).unwrap();
                w.body().write_short(2);
                w.finish().unwrap()
            };
            s.write_all(&reply.segments().concat()).unwrap();
        }
    });
    let orb = client(OrbConfig::default());
    let b = bench(&orb, &format!("corbaloc::1.2@127.0.0.1:{port}/obj"));
    assert_eq!(b.echo("by reference").unwrap(), "by reference");
    assert_eq!(b.echo("again").unwrap(), "again");
    // Asked once, then every request is addressed the way the server wants.
    assert_eq!(*seen.lock().unwrap(), [false, true, true]);
}

// ---------------------------------------------------------------------------------------
// LocateRequest.
// ---------------------------------------------------------------------------------------

fn locate(port: u16, key: &[u8], version: Version) -> (LocateStatus, corbina::giop::Message) {
    let mut s = raw_connect(port);
    let h = LocateRequestHeader {
        request_id: 7,
        target: TargetAddress::Key(ObjectKey::new(key.to_vec())),
    };
    let m = MessageWriter::locate_request(version, ByteOrder::NATIVE, &h).unwrap();
    send(&mut s, m.finish().unwrap());
    let reply = raw_read(&mut s);
    assert_eq!(msg_type(&reply), MSG_LOCATE_REPLY);
    let status = match reply.decode().unwrap() {
        GiopMessage::LocateReply { header, .. } => {
            assert_eq!(header.request_id, 7);
            header.locate_status
        }
        _ => unreachable!(),
    };
    (status, reply)
}

#[test]
fn locate_request_is_answered_here_or_unknown() {
    let s = TestServer::start(OrbConfig::default());
    for v in [Version::V1_0, Version::V1_1, Version::V1_2] {
        assert_eq!(locate(s.port(), &s.key(), v).0, LocateStatus::ObjectHere);
        assert_eq!(
            locate(s.port(), b"no such key", v).0,
            LocateStatus::UnknownObject
        );
    }
}

struct LocateForwarder {
    ior: Ior,
}

impl RequestDispatcher for LocateForwarder {
    fn dispatch(&self, _key: &[u8], _r: &mut ServerRequest<'_, '_>) -> Result<(), DispatchError> {
        Err(DispatchError::System(SystemException::new(
            SystemExceptionKind::ObjectNotExist,
            0,
        )))
    }
    fn locate(&self, key: &[u8]) -> LocateOutcome {
        match key {
            b"here" => LocateOutcome::Here,
            b"perm" => LocateOutcome::Forward {
                ior: self.ior.clone(),
                permanent: true,
            },
            b"temp" => LocateOutcome::Forward {
                ior: self.ior.clone(),
                permanent: false,
            },
            _ => LocateOutcome::Unknown,
        }
    }
}

#[test]
fn locate_request_is_answered_object_forward() {
    let target = TestServer::start(OrbConfig::default());
    let config = OrbConfig::default().endpoint("127.0.0.1", 0);
    let server = Server::start(
        &config,
        Arc::new(LocateForwarder {
            ior: target.obj.ior().clone(),
        }),
    )
    .unwrap();
    let port = server.addresses()[0].port();
    assert_eq!(
        locate(port, b"here", Version::V1_2).0,
        LocateStatus::ObjectHere
    );
    assert_eq!(
        locate(port, b"x", Version::V1_2).0,
        LocateStatus::UnknownObject
    );
    let (status, reply) = locate(port, b"temp", Version::V1_2);
    assert_eq!(status, LocateStatus::ObjectForward);
    let GiopMessage::LocateReply { body, .. } = reply.decode().unwrap() else {
        unreachable!()
    };
    let ior = Ior::decode(&mut body.reader(CodeSets::DEFAULT)).unwrap();
    assert_eq!(&ior, target.obj.ior());
    assert_eq!(
        locate(port, b"perm", Version::V1_2).0,
        LocateStatus::ObjectForwardPerm
    );
    // OBJECT_FORWARD_PERM does not exist before GIOP 1.2.
    assert_eq!(
        locate(port, b"perm", Version::V1_1).0,
        LocateStatus::ObjectForward
    );
    server.shutdown();
    assert!(server.wait_closed(Duration::from_secs(5)));
}

// ---------------------------------------------------------------------------------------
// Robust input.
// ---------------------------------------------------------------------------------------

fn malformed_input(model: ThreadModel) {
    let s = TestServer::start(with_model(model).max_message_size(64 * 1024));
    let port = s.port();
    // A well-behaved client keeps calling throughout.
    let stop = Arc::new(AtomicBool::new(false));
    let good = {
        let ior = s.ior.clone();
        let stop = stop.clone();
        thread::spawn(move || {
            let orb = client(OrbConfig::default());
            let b = bench(&orb, &ior);
            let mut n = 0u64;
            while !stop.load(Ordering::SeqCst) || n < 10 {
                assert_eq!(b.echo("still here").unwrap(), "still here");
                n += 1;
            }
            n
        })
    };
    let mut bad_magic = corbina::giop::close_connection(Version::V1_2, ByteOrder::NATIVE).to_vec();
    bad_magic[..4].copy_from_slice(b"GIOX");
    let mut bad_version = bad_magic.clone();
    bad_version[..4].copy_from_slice(b"GIOP");
    bad_version[4] = 9;
    let mut oversized = Vec::new();
    let big = vec![0u8; 100_000];
    {
        let h = RequestHeader::new(2, ObjectKey::new(s.key()), "send_octets");
        let mut m = MessageWriter::request(Version::V1_2, ByteOrder::NATIVE, CodeSets::DEFAULT, &h)
            .unwrap();
        m.body().write_octet_seq(&big).unwrap();
        oversized.extend_from_slice(&m.finish().unwrap().segments().concat()[..64]);
    }
    let mut bad_type = corbina::giop::close_connection(Version::V1_2, ByteOrder::NATIVE).to_vec();
    bad_type[7] = 42;
    let cases: [(&str, Vec<u8>); 5] = [
        (
            "garbage",
            b"this is not GIOP at all, not even close".to_vec(),
        ),
        ("bad magic", bad_magic),
        ("bad version", bad_version),
        ("oversized", oversized),
        ("bad type", bad_type),
    ];
    for (what, bytes) in cases {
        let mut c = raw_connect(port);
        c.write_all(&bytes).unwrap();
        let m = raw_read(&mut c);
        assert_eq!(msg_type(&m), MSG_ERROR, "{what}: no MessageError");
        assert!(closed_by_peer(&mut c), "{what}: connection left open");
    }
    // A header cut short, then the client goes away: the server just drops it.
    let open_before = s.server().open_connections();
    let mut c = raw_connect(port);
    c.write_all(b"GIOP\x01\x02").unwrap();
    c.shutdown(Shutdown::Write).unwrap();
    assert!(closed_by_peer(&mut c));
    drop(c);
    assert!(wait_until(Duration::from_secs(5), || s
        .server()
        .open_connections()
        <= open_before));
    // Half a message, then silence: holds no thread (and no other connection waits for it).
    let mut slow = raw_connect(port);
    slow.write_all(b"GIOP\x01\x02\x01\x00").unwrap();
    stop.store(true, Ordering::SeqCst);
    let calls = good.join().unwrap();
    assert!(calls >= 10);
    let orb = client(OrbConfig::default());
    assert_eq!(bench(&orb, &s.ior).echo("after").unwrap(), "after");
    drop(slow);
    s.orb.shutdown(true);
}

#[test]
fn malformed_messages_get_message_error_and_close_only_their_connection() {
    both_models(malformed_input);
}

#[test]
fn max_connections_is_honoured() {
    let s = TestServer::start(OrbConfig::default().max_connections(2));
    let server = s.server();
    let mut a = raw_connect(s.port());
    let mut b2 = raw_connect(s.port());
    // Both are served.
    for (i, c) in [&mut a, &mut b2].into_iter().enumerate() {
        raw_request(c, 2 + 2 * i as u32, &s.key(), "ping");
        assert_eq!(msg_type(&raw_read(c)), MSG_REPLY);
    }
    assert_eq!(server.open_connections(), 2);
    // A third one is refused in order: CloseConnection, then closed.
    let mut c = raw_connect(s.port());
    assert_eq!(msg_type(&raw_read(&mut c)), MSG_CLOSE_CONNECTION);
    assert!(closed_by_peer(&mut c));
    // A client gets TRANSIENT, not completed, quickly.
    let orb = client(OrbConfig::default());
    let b = bench(&orb, &s.ior);
    let start = Instant::now();
    expect_sys(
        b.ping(),
        SystemExceptionKind::Transient,
        CompletionStatus::No,
    );
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(s.runs(), 2);
    // One leaves: the client gets in.
    drop(a);
    assert!(wait_until(Duration::from_secs(5), || server
        .open_connections()
        == 1));
    b.ping().unwrap();
    assert_eq!(server.open_connections(), 2);
}

#[test]
fn cancel_request_is_accepted_silently() {
    let s = TestServer::start(OrbConfig::default());
    let mut c = raw_connect(s.port());
    for id in [2u32, 99] {
        let m = MessageWriter::cancel_request(
            Version::V1_2,
            ByteOrder::NATIVE,
            &CancelRequestHeader { request_id: id },
        )
        .unwrap();
        send(&mut c, m.finish().unwrap());
    }
    raw_request(&mut c, 4, &s.key(), "ping");
    let reply = raw_read(&mut c);
    match reply.decode().unwrap() {
        GiopMessage::Reply { header, .. } => {
            assert_eq!(header.request_id, 4);
            assert_eq!(header.reply_status, ReplyStatus::NoException);
        }
        _ => panic!("not a reply"),
    }
    assert_eq!(s.runs(), 1);
}

fn oneways_are_never_dropped(model: ThreadModel) {
    let s = TestServer::start(with_model(model));
    let orb = client(OrbConfig::default());
    let b = bench(&orb, &s.ior);
    b.start_timer().unwrap();
    let data = [7u8; 100];
    for _ in 0..10_000 {
        b.send_octets_oneway(&data).unwrap();
    }
    assert_eq!(b.stop_timer().unwrap(), 1_000_000);
    s.orb.shutdown(true);
}

#[test]
fn ten_thousand_oneways_all_arrive() {
    both_models(oneways_are_never_dropped);
}

// ---------------------------------------------------------------------------------------
// Scavengers.
// ---------------------------------------------------------------------------------------

#[test]
fn server_scavenger_closes_idle_connections() {
    let s = TestServer::start(OrbConfig::default().idle_timeout(Duration::from_millis(100)));
    let orb = client(OrbConfig::default().idle_timeout(None));
    let b = bench(&orb, &s.ior);
    b.ping().unwrap();
    assert_eq!(s.server().open_connections(), 1);
    assert!(wait_until(Duration::from_secs(3), || s
        .server()
        .open_connections()
        == 0));
    // The client's strand was closed under it: the next call still works.
    b.ping().unwrap();
    assert_eq!(s.runs(), 2);
    // Busy connections are not closed.
    let t = {
        let b = b.clone_for_test();
        thread::spawn(move || b.echo("sleep:600"))
    };
    thread::sleep(Duration::from_millis(450));
    assert!(s.server().open_connections() >= 1);
    assert_eq!(t.join().unwrap().unwrap(), "sleep:600");
    // By hand: two idle scans close.
    let s = TestServer::start(OrbConfig::default().idle_timeout(None));
    let b = bench(&orb, &s.ior);
    b.ping().unwrap();
    let server = s.server();
    assert_eq!(server.scavenge_now(Duration::ZERO), 0);
    assert_eq!(server.scavenge_now(Duration::ZERO), 1);
    assert!(wait_until(Duration::from_secs(3), || server
        .open_connections()
        == 0));
    b.ping().unwrap();
}

/// The client's strands open to every server.
fn open_strands(orb: &Orb) -> usize {
    orb.connections().iter().map(|c| c.open_strands).sum()
}

#[test]
fn client_scavenger_closes_idle_strands() {
    let s = TestServer::start(OrbConfig::default().idle_timeout(None));
    let orb = client(OrbConfig::default().idle_timeout(Duration::from_millis(100)));
    let b = bench(&orb, &s.ior);
    b.ping().unwrap();
    assert_eq!(open_strands(&orb), 1);
    assert!(wait_until(Duration::from_secs(3), || open_strands(&orb) == 0));
    assert!(wait_until(Duration::from_secs(3), || s
        .server()
        .open_connections()
        == 0));
    b.ping().unwrap();
    // By hand: a strand used between two scans survives them.
    let orb = client(OrbConfig::default().idle_timeout(None));
    let b = bench(&orb, &s.ior);
    b.ping().unwrap();
    assert_eq!(orb.scavenge_idle_connections(), 0);
    b.ping().unwrap();
    assert_eq!(orb.scavenge_idle_connections(), 0);
    assert_eq!(orb.scavenge_idle_connections(), 1);
    assert_eq!(open_strands(&orb), 0);
    b.ping().unwrap();
}

// ---------------------------------------------------------------------------------------
// Orderly shutdown.
// ---------------------------------------------------------------------------------------

fn orderly_shutdown(model: ThreadModel) {
    let s = TestServer::start(with_model(model));
    let orb = client(OrbConfig::default());
    let b = bench(&orb, &s.ior);
    // An idle connection from another client, too.
    let idle_orb = client(OrbConfig::default());
    let idle = bench(&idle_orb, &s.ior);
    idle.ping().unwrap();
    let running = {
        let b = b.clone_for_test();
        thread::spawn(move || b.echo("sleep:500"))
    };
    thread::sleep(Duration::from_millis(150));
    let start = Instant::now();
    s.orb.shutdown(true);
    let took = start.elapsed();
    // The request in progress got its reply before the connections were closed.
    assert_eq!(running.join().unwrap().unwrap(), "sleep:500");
    assert!(
        took >= Duration::from_millis(250),
        "shutdown returned after {took:?}"
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_eq!(s.server().open_connections(), 0);
    // Next calls: refused, not completed, and quickly.
    for b in [&b, &idle] {
        let start = Instant::now();
        match b.ping() {
            Err(e) => {
                assert!(
                    e.kind == SystemExceptionKind::Transient
                        || (e.kind == SystemExceptionKind::CommFailure
                            && e.completed == CompletionStatus::No),
                    "{e:?}"
                );
                assert_eq!(e.completed, CompletionStatus::No, "{e:?}");
            }
            Ok(()) => panic!("call after shutdown succeeded"),
        }
        assert!(start.elapsed() < Duration::from_secs(5));
    }
}

#[test]
fn shutdown_finishes_running_requests_then_refuses() {
    both_models(orderly_shutdown);
}

// ---------------------------------------------------------------------------------------
// The thread pool.
// ---------------------------------------------------------------------------------------

#[test]
fn thread_pool_serves_many_idle_connections_with_few_threads() {
    const THREADS: usize = 4;
    const CLIENTS: usize = 200;
    let s = TestServer::start(OrbConfig::default().thread_pool(THREADS).idle_timeout(None));
    let server = s.server();
    let clients: Vec<(Orb, Bench)> = (0..CLIENTS)
        .map(|_| {
            let orb = client(OrbConfig::default().idle_timeout(None));
            let b = bench(&orb, &s.ior);
            b.ping().unwrap();
            (orb, b)
        })
        .collect();
    assert_eq!(server.open_connections(), CLIENTS);
    assert_eq!(server.serving_threads(), THREADS);
    // Calls on every connection still work, concurrently.
    let clients = Arc::new(clients);
    let workers: Vec<_> = (0..8)
        .map(|w| {
            let clients = clients.clone();
            thread::spawn(move || {
                for (i, (_, b)) in clients.iter().enumerate() {
                    if i % 8 == w {
                        assert_eq!(b.echo("pooled").unwrap(), "pooled");
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(s.runs(), 2 * CLIENTS as u64);
    let threads = s.threads.lock().unwrap().len();
    assert!(threads <= THREADS, "{threads} threads ran upcalls");
    // A stalled upcall holds one pool thread only.
    let stalled = {
        let b = clients[0].1.clone_for_test();
        thread::spawn(move || b.echo("sleep:500"))
    };
    thread::sleep(Duration::from_millis(50));
    let start = Instant::now();
    assert_eq!(clients[1].1.echo("quick").unwrap(), "quick");
    assert!(start.elapsed() < Duration::from_millis(400));
    stalled.join().unwrap().unwrap();
    s.orb.shutdown(true);
    assert_eq!(server.open_connections(), 0);
}

#[test]
fn shutdown_stops_accepting_on_ipv6_endpoints() {
    for host in ["::1", "::"] {
        if TcpListener::bind((host, 0)).is_err() {
            eprintln!("no IPv6 here: skipping {host}");
            continue;
        }
        let config = OrbConfig::default().endpoint(host, 0);
        let target = TestServer::start(OrbConfig::default());
        let server = Server::start(
            &config,
            Arc::new(LocateForwarder {
                ior: target.obj.ior().clone(),
            }),
        )
        .unwrap();
        let port = server.addresses()[0].port();
        let addr = std::net::SocketAddr::new(std::net::Ipv6Addr::LOCALHOST.into(), port);
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let start = Instant::now();
        server.shutdown();
        assert!(server.wait_closed(Duration::from_secs(5)));
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{:?}",
            start.elapsed()
        );
        // The open connection got CloseConnection; new ones are refused.
        assert_eq!(msg_type(&raw_read(&mut c)), MSG_CLOSE_CONNECTION);
        assert!(TcpStream::connect(addr).is_err(), "{host}: still accepting");
    }
}
