//! Bidirectional GIOP between two Corbina ORBs in one process, over loopback: a client
//! that listens nowhere (its published address is a closed port, so a callback can only
//! come back over the connection the client opened) passes a callback to a server, which
//! calls it — inside the upcall, later from other threads, many at once while the client
//! keeps calling, as oneways — and what each side sees when the connection goes away.
//! Every wait is bounded: a hang fails the test instead of stalling it.

use std::net::TcpListener;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use corbina::config::{Endpoint, ThreadModel};
use corbina::poa::{BidirectionalPolicy, PolicyList};
use corbina::{ObjectRef, Orb, OrbConfig, Servant, SystemException, SystemExceptionKind};

#[allow(dead_code, clippy::all)]
mod gen {
    include!("../../corbina-codegen/tests/golden/bidir.rs");
}

use gen::bidir_test::{
    Callback, CallbackServant, CallbackSkeleton, Registrar, RegistrarServant, RegistrarSkeleton,
};

type R<T = ()> = Result<T, SystemException>;

/// The client's callback: notify(n) = 2n, counting calls and ticks.
#[derive(Default)]
struct Counter {
    notified: AtomicUsize,
    ticks: AtomicI32,
    /// Slows each notify down (to keep callbacks in flight).
    pause: Mutex<Duration>,
    /// With `meet` set, each notify waits (10 s at most) until two run at once.
    meet: AtomicBool,
    met: (Mutex<usize>, Condvar),
}

impl CallbackServant for Arc<Counter> {
    fn notify(&self, n: i32) -> R<i32> {
        let pause = *self.pause.lock().unwrap();
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
        if self.meet.load(Ordering::SeqCst) {
            let (count, cv) = &self.met;
            let mut count = count.lock().unwrap();
            *count += 1;
            cv.notify_all();
            let (count, _) = cv
                .wait_timeout_while(count, Duration::from_secs(10), |c| *c < 2)
                .unwrap();
            if *count < 2 {
                return Err(SystemException::new(SystemExceptionKind::Timeout, 0));
            }
        }
        self.notified.fetch_add(1, Ordering::SeqCst);
        Ok(n * 2)
    }
    fn tick(&self, _n: i32) -> R {
        self.ticks.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// The server's Registrar, as peers/README.md describes it; the results of the callbacks
/// it makes from other threads go to `later`.
struct Reg {
    stored: Mutex<Option<Callback>>,
    ticks: AtomicI32,
    later: Mutex<mpsc::Sender<R<i32>>>,
}

fn call_back(cb: &Callback, n: i32) -> R<i32> {
    let mut sum = 0;
    for i in 1..=n {
        sum += cb.notify(i)?;
    }
    Ok(sum)
}

fn bad_inv_order() -> SystemException {
    SystemException::new(SystemExceptionKind::BadInvOrder, 0)
}

impl RegistrarServant for Arc<Reg> {
    fn ping(&self) -> R<i32> {
        Ok(1)
    }
    fn call_back(&self, cb: Option<&Callback>, n: i32) -> R<i32> {
        call_back(cb.ok_or_else(bad_inv_order)?, n)
    }
    fn register_cb(&self, cb: Option<&Callback>) -> R {
        *self.stored.lock().unwrap() = cb.cloned();
        Ok(())
    }
    fn notify_registered(&self, n: i32) -> R<i32> {
        let cb = self.stored.lock().unwrap().clone();
        call_back(cb.as_ref().ok_or_else(bad_inv_order)?, n)
    }
    fn ticks_seen(&self) -> R<i32> {
        Ok(self.ticks.load(Ordering::SeqCst))
    }
    fn call_back_later(&self, cb: Option<&Callback>, n: i32, delay_ms: i32) -> R {
        let cb = cb.ok_or_else(bad_inv_order)?.clone();
        let tx = self.later.lock().unwrap().clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(delay_ms as u64));
            let _ = tx.send(call_back(&cb, n));
        });
        Ok(())
    }
    fn tick(&self, _n: i32) -> R {
        self.ticks.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
    fn tick_registered(&self, n: i32) -> R {
        let cb = self.stored.lock().unwrap().clone();
        let cb = cb.ok_or_else(bad_inv_order)?;
        for i in 1..=n {
            cb.tick(i)?;
        }
        Ok(())
    }
}

/// A corbaloc URL for `key` at 127.0.0.1:`port`.
fn corbaloc(port: u16, key: &[u8]) -> String {
    let escaped: String = key.iter().map(|b| format!("%{b:02x}")).collect();
    format!("corbaloc:iiop:1.2@127.0.0.1:{port}/{escaped}")
}

/// A TCP port nothing listens on (bound, then closed): connecting to it is refused.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn bidir_policies() -> PolicyList {
    PolicyList::root().with_bidirectional(BidirectionalPolicy::Both)
}

/// Activates `servant` in a child POA "bidir" with `BidirectionalPolicy::Both`.
fn activate(orb: &Orb, servant: Arc<dyn Servant>) -> ObjectRef {
    let root = orb.root_poa();
    let poa = root
        .create_poa("bidir", Some(root.the_poa_manager()), bidir_policies())
        .unwrap();
    let id = poa.activate_object(servant).unwrap();
    let obj = poa.id_to_reference(&id).unwrap();
    root.the_poa_manager().activate().unwrap();
    obj
}

struct Server {
    orb: Orb,
    /// The Registrar's IOR (at `publish`'s address when the server was made with one).
    ior: String,
    /// The Registrar's IOR at the server's own address.
    direct_ior: String,
    port: u16,
    reg: Arc<Reg>,
    later: mpsc::Receiver<R<i32>>,
}

fn server(accept: bool) -> Server {
    make_server(accept, None, ThreadModel::ThreadPerConnection)
}

/// A server whose IORs name 127.0.0.1:`port` (a proxy in front of it).
fn server_published_at(port: u16) -> Server {
    make_server(true, Some(port), ThreadModel::ThreadPerConnection)
}

fn make_server(accept: bool, publish: Option<u16>, thread_model: ThreadModel) -> Server {
    let orb = Orb::with_config(OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        publish_addresses: publish
            .map(|p| ("127.0.0.1".to_owned(), Some(p)))
            .into_iter()
            .collect(),
        accept_bidir: accept,
        thread_model,
        connect_timeout: Duration::from_secs(2),
        call_timeout: Some(Duration::from_secs(20)),
        ..OrbConfig::default()
    });
    let (tx, later) = mpsc::channel();
    let reg = Arc::new(Reg {
        stored: Mutex::new(None),
        ticks: AtomicI32::new(0),
        later: Mutex::new(tx),
    });
    let obj = activate(&orb, Arc::new(RegistrarSkeleton::new(reg.clone())));
    let ior = orb.object_to_string(&obj).unwrap();
    let port = orb.server().unwrap().addresses()[0].port();
    let key = obj
        .ior()
        .profiles
        .iter()
        .find_map(|p| p.iiop().and_then(Result::ok))
        .unwrap()
        .object_key
        .as_bytes()
        .to_vec();
    let direct_ior = corbaloc(port, &key);
    Server {
        orb,
        ior,
        direct_ior,
        port,
        reg,
        later,
    }
}

struct Client {
    orb: Orb,
    cb: Callback,
    counter: Arc<Counter>,
    registrar: Registrar,
}

/// A client that offers bidirectional GIOP and listens nowhere: its callback's IOR names
/// 127.0.0.1 and a closed port.
fn client(server_ior: &str, offer: bool) -> Client {
    let orb = Orb::with_config(OrbConfig {
        endpoints_no_listen: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: closed_port(),
        }],
        offer_bidir: offer,
        call_timeout: Some(Duration::from_secs(20)),
        ..OrbConfig::default()
    });
    let counter = Arc::new(Counter::default());
    let obj = activate(&orb, Arc::new(CallbackSkeleton::new(counter.clone())));
    let cb = Callback::narrow(&obj).unwrap();
    let registrar = Registrar::narrow(&orb.string_to_object(server_ior).unwrap()).unwrap();
    Client {
        orb,
        cb,
        counter,
        registrar,
    }
}

/// Runs `f` on another thread and fails if it takes longer than `limit`.
fn bounded<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("did not finish within {limit:?}"))
}

fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while !done() {
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

#[test]
fn callbacks_come_back_over_the_connection_the_client_opened() {
    for model in [ThreadModel::ThreadPerConnection, ThreadModel::Pool(2)] {
        callbacks_with(model);
    }
}

fn callbacks_with(model: ThreadModel) {
    let s = make_server(true, None, model);
    let c = client(&s.ior, true);
    let (registrar, cb, counter) = (c.registrar.clone(), c.cb.clone(), c.counter.clone());
    bounded(Duration::from_secs(60), move || {
        assert_eq!(registrar.ping().unwrap(), 1);
        // Callbacks inside the upcall that carries the offer.
        assert_eq!(registrar.call_back(Some(&cb), 10).unwrap(), 110);
        assert_eq!(counter.notified.load(Ordering::SeqCst), 10);
        // A stored callback, called from a later request.
        registrar.register_cb(Some(&cb)).unwrap();
        assert_eq!(registrar.notify_registered(5).unwrap(), 30);
        // Oneways both ways on the one connection.
        for i in 0..20 {
            registrar.tick(i).unwrap();
        }
        registrar.tick_registered(25).unwrap();
        // Requests on a bidirectional connection run on several workers: the oneways may
        // still be running when the next twoway is answered.
        assert!(wait_until(Duration::from_secs(10), || {
            registrar.ticks_seen().unwrap() == 20
        }));
        assert!(wait_until(Duration::from_secs(10), || {
            counter.ticks.load(Ordering::SeqCst) == 25
        }));
    });
    assert_eq!(s.reg.ticks.load(Ordering::SeqCst), 20);
    // The client never listened: everything went over its one connection.
    assert!(c.orb.server().is_none_or(|srv| srv.addresses().is_empty()));
    c.orb.destroy();
    s.orb.destroy();
}

#[test]
fn without_bidirectional_giop_the_callback_is_unreachable() {
    for (accept, offer) in [(false, true), (true, false)] {
        let s = server(accept);
        let c = client(&s.ior, offer);
        let (registrar, cb) = (c.registrar.clone(), c.cb.clone());
        let got = bounded(Duration::from_secs(60), move || {
            registrar.call_back(Some(&cb), 1)
        });
        let e = got.expect_err("the callback address is a closed port");
        assert_eq!(
            e.kind,
            SystemExceptionKind::Transient,
            "accept {accept}, offer {offer}: {e:?}"
        );
        assert_eq!(c.counter.notified.load(Ordering::SeqCst), 0);
        c.orb.destroy();
        s.orb.destroy();
    }
}

#[test]
fn many_callbacks_in_flight_while_the_client_keeps_calling() {
    let s = server(true);
    let c = client(&s.ior, true);
    *c.counter.pause.lock().unwrap() = Duration::from_millis(1);
    const BATCHES: i32 = 8;
    const PER_BATCH: i32 = 25;
    for _ in 0..BATCHES {
        c.registrar
            .call_back_later(Some(&c.cb), PER_BATCH, 0)
            .unwrap();
    }
    // Meanwhile three client threads call the server, over the same connection.
    let callers: Vec<_> = (0..3)
        .map(|_| {
            let r = c.registrar.clone();
            let cb = c.cb.clone();
            std::thread::spawn(move || {
                for _ in 0..50 {
                    assert_eq!(r.ping().unwrap(), 1);
                }
                assert_eq!(r.call_back(Some(&cb), 4).unwrap(), 20);
            })
        })
        .collect();
    for t in callers {
        t.join().unwrap();
    }
    for _ in 0..BATCHES {
        let sum = s
            .later
            .recv_timeout(Duration::from_secs(60))
            .expect("a batch of callbacks did not finish")
            .unwrap();
        assert_eq!(sum, PER_BATCH * (PER_BATCH + 1));
    }
    assert_eq!(
        c.counter.notified.load(Ordering::SeqCst),
        (BATCHES * PER_BATCH + 3 * 4) as usize
    );
    c.orb.destroy();
    s.orb.destroy();
}

/// Leader/followers: a caller that reads the connection itself gives up at its deadline
/// (the callback it read meanwhile still runs), the next call leads in turn, and a callback
/// that comes while no call waits is read by the connection's reader thread.
#[test]
fn a_leading_caller_times_out_and_callbacks_still_come_in_between_calls() {
    let s = server(true);
    let c = client(&s.ior, true);
    let (registrar, cb, counter) = (c.registrar.clone(), c.cb.clone(), c.counter.clone());
    bounded(Duration::from_secs(60), move || {
        assert_eq!(registrar.ping().unwrap(), 1);
        // The callback sleeps longer than the call may take.
        *counter.pause.lock().unwrap() = Duration::from_millis(400);
        corbina::client::set_thread_call_timeout(Some(Duration::from_millis(100)));
        let e = registrar.call_back(Some(&cb), 1).unwrap_err();
        corbina::client::set_thread_call_timeout(None);
        assert_eq!(e.kind, SystemExceptionKind::Timeout, "{e:?}");
        *counter.pause.lock().unwrap() = Duration::ZERO;
        // The connection serves on: calls, and their callbacks.
        for _ in 0..20 {
            assert_eq!(registrar.ping().unwrap(), 1);
        }
        assert_eq!(registrar.call_back(Some(&cb), 3).unwrap(), 12);
        // No call waits when these come.
        registrar.call_back_later(Some(&cb), 2, 50).unwrap();
        registrar.call_back_later(Some(&cb), 4, 300).unwrap();
        assert!(wait_until(Duration::from_secs(10), || {
            counter.notified.load(Ordering::SeqCst) == 1 + 3 + 2 + 4
        }));
    });
    for want in [6, 20] {
        let got = s.later.recv_timeout(Duration::from_secs(30)).unwrap();
        assert_eq!(got.unwrap(), want);
    }
    c.orb.destroy();
    s.orb.destroy();
}

#[test]
fn the_connection_closing_midway_fails_both_sides_and_nothing_hangs() {
    // The client goes away while the server is calling it back from another thread.
    let s = server(true);
    let c = client(&s.ior, true);
    *c.counter.pause.lock().unwrap() = Duration::from_millis(20);
    c.registrar.call_back_later(Some(&c.cb), 1000, 0).unwrap();
    assert!(wait_until(Duration::from_secs(20), || {
        c.counter.notified.load(Ordering::SeqCst) >= 3
    }));
    c.orb.destroy();
    drop(c);
    let e = s
        .later
        .recv_timeout(Duration::from_secs(30))
        .expect("the server's callbacks hung after the client left")
        .expect_err("the client is gone");
    assert!(
        matches!(
            e.kind,
            SystemExceptionKind::CommFailure | SystemExceptionKind::Transient
        ),
        "{e:?}"
    );
    s.orb.destroy();

    // The connection breaks (a proxy between the two drops it) while the client waits in
    // a call whose upcall is calling back, and the server calls back from another thread.
    let proxy = Proxy::start();
    let s = server_published_at(proxy.port);
    proxy.forward_to(s.port);
    let c = client(&s.ior, true);
    *c.counter.pause.lock().unwrap() = Duration::from_millis(20);
    c.registrar.call_back_later(Some(&c.cb), 1000, 0).unwrap();
    let (registrar, cb) = (c.registrar.clone(), c.cb.clone());
    let call = std::thread::spawn(move || registrar.call_back(Some(&cb), 1000));
    assert!(wait_until(Duration::from_secs(20), || {
        c.counter.notified.load(Ordering::SeqCst) >= 6
    }));
    proxy.cut();
    let got = bounded(Duration::from_secs(30), move || call.join().unwrap());
    let e = got.expect_err("the connection is gone");
    assert!(
        matches!(
            e.kind,
            SystemExceptionKind::CommFailure | SystemExceptionKind::Transient
        ),
        "client: {e:?}"
    );
    let e = s
        .later
        .recv_timeout(Duration::from_secs(30))
        .expect("the server's callbacks hung after the connection broke")
        .expect_err("the connection is gone");
    assert!(
        matches!(
            e.kind,
            SystemExceptionKind::CommFailure | SystemExceptionKind::Transient
        ),
        "server: {e:?}"
    );
    // Both ORBs still work: the client calls again on a new connection.
    assert_eq!(
        bounded(Duration::from_secs(30), {
            let r = Registrar::narrow(&c.orb.string_to_object(&s.direct_ior).unwrap()).unwrap();
            move || r.ping()
        })
        .unwrap(),
        1
    );
    c.orb.destroy();
    s.orb.destroy();
}

/// A TCP relay between the client and the server that the test can cut, as a network
/// failure would: both ends see the connection die.
struct Proxy {
    port: u16,
    target: Arc<Mutex<Option<u16>>>,
    sockets: Arc<Mutex<Vec<std::net::TcpStream>>>,
}

impl Proxy {
    fn start() -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let target = Arc::new(Mutex::new(None::<u16>));
        let sockets = Arc::new(Mutex::new(Vec::new()));
        let (t, socks) = (target.clone(), sockets.clone());
        std::thread::spawn(move || {
            for inbound in listener.incoming() {
                let Ok(inbound) = inbound else { return };
                let Some(port) = *t.lock().unwrap() else {
                    continue;
                };
                let Ok(outbound) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
                    continue;
                };
                let mut s = socks.lock().unwrap();
                s.push(inbound.try_clone().unwrap());
                s.push(outbound.try_clone().unwrap());
                for (mut from, mut to) in [
                    (inbound.try_clone().unwrap(), outbound.try_clone().unwrap()),
                    (outbound, inbound),
                ] {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        Proxy {
            port,
            target,
            sockets,
        }
    }

    fn forward_to(&self, port: u16) {
        *self.target.lock().unwrap() = Some(port);
    }

    /// Drops every relayed connection, both ways.
    fn cut(&self) {
        for s in self.sockets.lock().unwrap().drain(..) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}

// ---- Interop with omniORB (peers/omni_bidir_server.cc, peers/omni_bidir_client.cc) ----

/// A Corbina client that listens nowhere, against omniORB's Registrar: omniORB calls the
/// callback back over the client's connection (LocateRequest first, then the calls, odd
/// request ids), inside the upcall, stored, as oneways and from another thread.
#[test]
fn corbina_client_called_back_by_an_omniorb_server() {
    let Some(bin) = corbina_testpeers::bidir_peers() else {
        return;
    };
    let (_server, ior) = corbina_testpeers::omni_bidir_server(bin, "bidir-omni-server", &[]);
    let c = client(&ior, true);
    let (registrar, cb, counter) = (c.registrar.clone(), c.cb.clone(), c.counter.clone());
    bounded(Duration::from_secs(60), move || {
        assert_eq!(registrar.ping().unwrap(), 1);
        assert_eq!(registrar.call_back(Some(&cb), 10).unwrap(), 110);
        registrar.register_cb(Some(&cb)).unwrap();
        assert_eq!(registrar.notify_registered(5).unwrap(), 30);
        for i in 0..7 {
            registrar.tick(i).unwrap();
        }
        // omniORB may run a connection's requests on several threads: a oneway can still
        // be running when the next twoway is answered.
        assert!(wait_until(Duration::from_secs(10), || {
            registrar.ticks_seen().unwrap() == 7
        }));
        registrar.tick_registered(25).unwrap();
        assert!(wait_until(Duration::from_secs(10), || {
            counter.ticks.load(Ordering::SeqCst) == 25
        }));
        let before = counter.notified.load(Ordering::SeqCst);
        registrar.call_back_later(Some(&cb), 20, 10).unwrap();
        for _ in 0..50 {
            assert_eq!(registrar.ping().unwrap(), 1);
        }
        assert!(wait_until(Duration::from_secs(20), || {
            counter.notified.load(Ordering::SeqCst) == before + 20
        }));
    });
    c.orb.destroy();

    // omniORB not accepting: it connects to the published (closed) port and fails.
    let (_server, ior) = corbina_testpeers::omni_bidir_server(
        bin,
        "bidir-omni-server-off",
        &["-ORBacceptBiDirectionalGIOP", "0"],
    );
    let c = client(&ior, true);
    let (registrar, cb) = (c.registrar.clone(), c.cb.clone());
    let e = bounded(Duration::from_secs(60), move || {
        registrar.call_back(Some(&cb), 1)
    })
    .expect_err("omniORB cannot reach the callback without bidirectional GIOP");
    assert_eq!(e.kind, SystemExceptionKind::Transient, "{e:?}");
    c.orb.destroy();
}

/// omniORB's bidirectional client (callback published at a port nobody listens on)
/// against a Corbina Registrar, which calls it back over omniORB's connection.
#[test]
fn omniorb_client_called_back_by_a_corbina_server() {
    let Some(bin) = corbina_testpeers::bidir_peers() else {
        return;
    };
    for model in [ThreadModel::ThreadPerConnection, ThreadModel::Pool(2)] {
        let s = make_server(true, None, model);
        let ior_file = corbina_testpeers::fresh_dir("bidir-corbina-server").join("r.ior");
        std::fs::write(&ior_file, &s.ior).unwrap();
        let line = bounded(Duration::from_secs(120), move || {
            corbina_testpeers::omni_bidir_client_check(bin, &ior_file, &[])
        });
        assert!(line.contains("\"ok\":true"), "{line}");
        s.orb.destroy();
    }
    // The Corbina server not accepting: its calls back go to the closed port and fail.
    let s = server(false);
    let ior_file = corbina_testpeers::fresh_dir("bidir-corbina-server-off").join("r.ior");
    std::fs::write(&ior_file, &s.ior).unwrap();
    let out = bounded(Duration::from_secs(120), move || {
        corbina_testpeers::omni_bidir_client_command(bin, &ior_file)
            .args(["--mode", "check"])
            .output()
            .unwrap()
    });
    assert!(!out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("TRANSIENT"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    s.orb.destroy();
}

/// The thread that reads a request runs it, holding the reading (no thread switch per
/// request): a request that calls back over the same connection reads that call's reply
/// itself, call after call, on either thread model.
#[test]
fn requests_that_call_back_run_on_the_reading_thread_call_after_call() {
    for model in [ThreadModel::ThreadPerConnection, ThreadModel::Pool(2)] {
        let s = make_server(true, None, model);
        let c = client(&s.ior, true);
        let (registrar, cb, counter) = (c.registrar.clone(), c.cb.clone(), c.counter.clone());
        bounded(Duration::from_secs(60), move || {
            for i in 1..=100 {
                assert_eq!(registrar.call_back(Some(&cb), 2).unwrap(), 6, "call {i}");
                assert_eq!(registrar.ping().unwrap(), 1);
            }
            assert_eq!(counter.notified.load(Ordering::SeqCst), 200);
        });
        c.orb.destroy();
        s.orb.destroy();
    }
}

/// Many callers on one bidirectional connection at once, each call calling back over it:
/// every reply reaches its caller, whoever reads it.
#[test]
fn many_concurrent_callers_whose_calls_call_back() {
    let s = server(true);
    let c = client(&s.ior, true);
    let callers: Vec<_> = (0..8)
        .map(|t| {
            let (r, cb) = (c.registrar.clone(), c.cb.clone());
            std::thread::spawn(move || {
                for i in 0..25 {
                    let n = (t + i) % 4 + 1;
                    assert_eq!(r.call_back(Some(&cb), n).unwrap(), n * (n + 1));
                    assert_eq!(r.ping().unwrap(), 1);
                }
            })
        })
        .collect();
    bounded(Duration::from_secs(60), move || {
        for t in callers {
            t.join().unwrap();
        }
    });
    let want: i32 = (0..8)
        .flat_map(|t| (0..25).map(move |i| (t + i) % 4 + 1))
        .sum();
    assert_eq!(c.counter.notified.load(Ordering::SeqCst), want as usize);
    c.orb.destroy();
    s.orb.destroy();
}

/// A request that runs long on the thread that read it (it waits for the next request on
/// the same connection) does not keep that request unread: the standby worker takes the
/// reading over. Both callbacks come while no call waits, read by the client's reader.
#[test]
fn a_long_request_on_the_reading_thread_hands_the_reading_over() {
    let s = server(true);
    let c = client(&s.ior, true);
    assert_eq!(c.registrar.call_back(Some(&c.cb), 1).unwrap(), 2);
    c.counter.meet.store(true, Ordering::SeqCst);
    // The second comes well after the first started: only a reader other than the thread
    // running the first can read it.
    for delay_ms in [50, 150] {
        c.registrar
            .call_back_later(Some(&c.cb), 1, delay_ms)
            .unwrap();
    }
    for _ in 0..2 {
        let got = s
            .later
            .recv_timeout(Duration::from_secs(30))
            .expect("a callback hung");
        assert_eq!(got.expect("the two callbacks did not run at once"), 2);
    }
    c.orb.destroy();
    s.orb.destroy();
}
