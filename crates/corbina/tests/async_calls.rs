//! Asynchronous calls (`ObjectRef::invoke_async`): many in flight on one connection from one
//! task under tokio's multi-threaded runtime, replies matched by request id in any order,
//! cancellation by drop, timeouts, and connection loss with calls in flight. Each runs twice:
//! with the connection read by the runtime's I/O driver (feature `tokio`) and by a reader
//! thread (a runtime without I/O).

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::bench::BenchSkeleton;
use common::{client, serve, StaticBench};
use corbina::cdr::{ByteOrder, CodeSets};
use corbina::giop::connection::{Event, GiopConnection, Role, Settings};
use corbina::giop::{MessageWriter, ReplyHeader, ReplyStatus, Version};
use corbina::{ObjectRef, Orb, OrbConfig, SystemException, SystemExceptionKind};
use futures_util::future::join_all;

type R<T> = Result<T, SystemException>;

async fn echo(obj: &ObjectRef, s: String) -> R<String> {
    obj.invoke_async(
        "echo",
        |w| w.write_string(&s),
        |r| r.read_string(),
        corbina::no_user,
    )
    .await
}

/// What reads the asynchronous connections of a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reader {
    /// The runtime's I/O driver (with the `tokio` feature; a reader thread without).
    Reactor,
    /// A reader thread: the runtime has no I/O driver.
    Thread,
}

fn runtime_for(reader: Reader) -> tokio::runtime::Runtime {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    b.worker_threads(2).enable_time();
    if reader == Reader::Reactor {
        b.enable_io();
    }
    b.build().unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    runtime_for(Reader::Reactor)
}

/// Every asynchronous connection of `orb` is read as `reader` says.
fn assert_read_by(orb: &Orb, reader: Reader) {
    let on_reactor = reader == Reader::Reactor && cfg!(feature = "tokio");
    let strands: Vec<_> = orb
        .connections()
        .into_iter()
        .flat_map(|c| c.async_strands)
        .collect();
    assert!(!strands.is_empty());
    for s in strands {
        assert_eq!(s.on_reactor, on_reactor, "{reader:?}");
    }
}

/// Runs each scenario `name(reader)` as tests `name::reactor` and `name::reader_thread`.
macro_rules! on_both_readers {
    ($($name:ident),* $(,)?) => {
        $(mod $name {
            #[test]
            fn reactor() {
                super::$name(super::Reader::Reactor)
            }
            #[test]
            fn reader_thread() {
                super::$name(super::Reader::Thread)
            }
        })*
    };
}

on_both_readers!(
    many_calls_in_flight_on_one_connection,
    replies_in_any_order_reach_their_calls,
    dropping_a_future_cancels_the_request,
    timeouts_apply_and_cancel,
    connection_loss_resolves_every_call,
    orb_shutdown_resolves_waiting_calls,
    async_proxy_against_a_corbina_server,
);

/// The futures are `Send` (they run on any worker of a multi-threaded runtime).
#[test]
fn futures_are_send() {
    fn send<F: Send>(_: &F) {}
    let orb = Orb::with_config(OrbConfig::default());
    let obj = orb.string_to_object("corbaloc::127.0.0.1:1/k").unwrap();
    let f = echo(&obj, "x".into());
    send(&f);
    let g = obj.invoke_oneway_async("ping_oneway", |_| Ok(()));
    send(&g);
}

/// 500 calls in flight from one task go over one connection (`-ORBasyncCallsPerStrand 0`)
/// and each gets its own reply; against a Corbina server (thread per connection: it answers
/// in order).
fn many_calls_in_flight_on_one_connection(reader: Reader) {
    let (server, ior) = serve(Arc::new(BenchSkeleton::new(Arc::new(
        StaticBench::default(),
    ))));
    let orb = Orb::with_config(OrbConfig::default().async_calls_per_strand(0));
    let obj = orb.string_to_object(&ior).unwrap();
    let rt = runtime_for(reader);
    rt.block_on(async {
        let calls = (0..500).map(|i| echo(&obj, format!("call {i}")));
        let replies = join_all(calls).await;
        for (i, r) in replies.into_iter().enumerate() {
            assert_eq!(r.unwrap(), format!("call {i}"));
        }
        // A user exception and a oneway take the same path.
        let e: Result<(), common::bench::bench::FailError> = obj
            .invoke_async(
                "fail",
                |w| {
                    w.write_long(7);
                    Ok(())
                },
                |_| Ok(()),
                |id, r| {
                    Ok((id == "IDL:BenchError:1.0").then(|| {
                        common::bench::bench::FailError::BenchError(
                            <common::bench::BenchError as corbina::cdr::CdrDecode>::decode(r)
                                .unwrap(),
                        )
                    }))
                },
            )
            .await;
        match e {
            Err(common::bench::bench::FailError::BenchError(b)) => assert_eq!(b.code, 7),
            other => panic!("expected BenchError, got {other:?}"),
        }
        obj.invoke_oneway_async("ping_oneway", |_| Ok(()))
            .await
            .unwrap();
    });
    // Only the asynchronous connection was opened: no strand.
    assert_eq!(
        orb.connections()
            .iter()
            .map(|c| c.open_strands)
            .sum::<usize>(),
        0
    );
    assert_read_by(&orb, reader);
    assert_eq!(orb.connections()[0].async_strands.len(), 1);
    orb.destroy();
    server.destroy();
}

fn reply(id: u32, text: &str) -> Vec<u8> {
    let h = ReplyHeader::new(id, ReplyStatus::NoException);
    let mut m =
        MessageWriter::reply(Version::V1_2, ByteOrder::NATIVE, CodeSets::DEFAULT, &h).unwrap();
    m.body().write_string(text).unwrap();
    m.finish_bytes().unwrap()
}

/// What a raw GIOP server saw.
#[derive(Debug, PartialEq)]
enum Seen {
    Request(u32, String),
    Cancel(u32),
}

/// A raw GIOP server on one connection: reports what arrives, and writes what the test
/// sends it (`None` closes the connection).
fn raw_server() -> (u16, mpsc::Receiver<Seen>, mpsc::Sender<Option<Vec<u8>>>) {
    raw_server_on(TcpListener::bind("127.0.0.1:0").unwrap())
}

/// [`raw_server`] on `listener`: the next connection it accepts.
fn raw_server_on(
    listener: TcpListener,
) -> (u16, mpsc::Receiver<Seen>, mpsc::Sender<Option<Vec<u8>>>) {
    let port = listener.local_addr().unwrap().port();
    let (seen_tx, seen) = mpsc::channel();
    let (send, send_rx) = mpsc::channel::<Option<Vec<u8>>>();
    std::thread::spawn(move || {
        let (s, _) = listener.accept().unwrap();
        let mut w: TcpStream = s.try_clone().unwrap();
        std::thread::spawn(move || {
            while let Ok(Some(bytes)) = send_rx.recv() {
                if w.write_all(&bytes).is_err() {
                    return;
                }
            }
            let _ = w.shutdown(std::net::Shutdown::Both);
        });
        let mut s = s;
        let mut conn = GiopConnection::new(Settings::new(Role::Server));
        loop {
            match conn.poll_event() {
                Ok(Some(Event::Request { header, body, .. })) => {
                    let arg = body
                        .reader(CodeSets::DEFAULT)
                        .read_string()
                        .unwrap_or_default();
                    let _ = seen_tx.send(Seen::Request(header.request_id, arg));
                }
                Ok(Some(Event::CancelRequest { request_id })) => {
                    let _ = seen_tx.send(Seen::Cancel(request_id));
                }
                Ok(Some(_)) => {}
                Ok(None) => match s.read(conn.read_buf()) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => conn.commit(n),
                },
                Err(_) => return,
            }
        }
    });
    (port, seen, send)
}

fn next_request(seen: &mpsc::Receiver<Seen>) -> (u32, String) {
    match seen.recv_timeout(Duration::from_secs(10)).unwrap() {
        Seen::Request(id, arg) => (id, arg),
        other => panic!("expected a request, got {other:?}"),
    }
}

/// Replies in the reverse order of the requests reach the right calls.
fn replies_in_any_order_reach_their_calls(reader: Reader) {
    let (port, seen, send) = raw_server();
    let orb = Orb::with_config(OrbConfig::default());
    let obj = orb
        .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{port}/k"))
        .unwrap();
    let rt = runtime_for(reader);
    let calls: Vec<_> = (0..8)
        .map(|i| rt.spawn(echo_owned(obj.clone(), format!("q{i}"))))
        .collect();
    let mut got: Vec<(u32, String)> = (0..8).map(|_| next_request(&seen)).collect();
    got.reverse();
    for (id, arg) in &got {
        send.send(Some(reply(*id, &format!("answer to {arg}"))))
            .unwrap();
    }
    rt.block_on(async {
        for (i, c) in calls.into_iter().enumerate() {
            assert_eq!(c.await.unwrap().unwrap(), format!("answer to q{i}"));
        }
    });
    assert_read_by(&orb, reader);
    orb.destroy();
}

async fn echo_owned(obj: ObjectRef, s: String) -> R<String> {
    echo(&obj, s).await
}

/// A future dropped before its reply sends CancelRequest; its late reply is dropped and
/// the next call on the connection gets its own.
fn dropping_a_future_cancels_the_request(reader: Reader) {
    let (port, seen, send) = raw_server();
    let orb = Orb::with_config(OrbConfig::default());
    let obj = orb
        .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{port}/k"))
        .unwrap();
    let rt = runtime_for(reader);
    rt.block_on(async {
        // Given up after 100 ms (the timeout drops the inner future).
        let gave_up =
            tokio::time::timeout(Duration::from_millis(100), echo(&obj, "a".into())).await;
        assert!(gave_up.is_err());
    });
    let (first, _) = next_request(&seen);
    assert_eq!(
        seen.recv_timeout(Duration::from_secs(10)).unwrap(),
        Seen::Cancel(first)
    );
    assert_eq!(orb.connections()[0].async_in_flight, 0);
    // The late reply comes, then the next call's.
    send.send(Some(reply(first, "late"))).unwrap();
    let next = rt.spawn(echo_owned(obj.clone(), "b".into()));
    let (second, arg) = next_request(&seen);
    assert_eq!(arg, "b");
    send.send(Some(reply(second, "for b"))).unwrap();
    assert_eq!(rt.block_on(next).unwrap().unwrap(), "for b");
    assert_read_by(&orb, reader);
    orb.destroy();
}

/// The call timeout applies: TIMEOUT (completed MAYBE), the request cancelled on the wire.
fn timeouts_apply_and_cancel(reader: Reader) {
    let (port, seen, _send) = raw_server();
    let orb = Orb::with_config(OrbConfig {
        call_timeout: Some(Duration::from_millis(200)),
        ..OrbConfig::default()
    });
    let obj = orb
        .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{port}/k"))
        .unwrap();
    let started = Instant::now();
    let rt = runtime_for(reader);
    let e = rt.block_on(echo(&obj, "slow".into())).unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::Timeout);
    assert_eq!(e.completed, corbina::CompletionStatus::Maybe);
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(started.elapsed() < Duration::from_secs(5));
    let (id, _) = next_request(&seen);
    assert_eq!(
        seen.recv_timeout(Duration::from_secs(10)).unwrap(),
        Seen::Cancel(id)
    );
    assert_read_by(&orb, reader);
    orb.destroy();
}

/// The connection lost with calls in flight: every one of them resolves, COMM_FAILURE
/// (completed MAYBE); nothing hangs. The next call opens a new connection.
fn connection_loss_resolves_every_call(reader: Reader) {
    let (port, seen, send) = raw_server();
    let orb = Orb::with_config(OrbConfig::default());
    let obj = orb
        .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{port}/k"))
        .unwrap();
    let rt = runtime_for(reader);
    let calls: Vec<_> = (0..50)
        .map(|i| rt.spawn(echo_owned(obj.clone(), format!("{i}"))))
        .collect();
    for _ in 0..50 {
        next_request(&seen);
    }
    send.send(None).unwrap();
    rt.block_on(async {
        for c in calls {
            let e = tokio::time::timeout(Duration::from_secs(10), c)
                .await
                .expect("a call hangs after the connection was lost")
                .unwrap()
                .unwrap_err();
            assert_eq!(e.kind, SystemExceptionKind::CommFailure);
            assert_eq!(e.completed, corbina::CompletionStatus::Maybe);
        }
    });
    orb.destroy();
}

/// The ORB shutting down resolves the calls still waiting (COMM_FAILURE).
fn orb_shutdown_resolves_waiting_calls(reader: Reader) {
    let (port, seen, _send) = raw_server();
    let orb = Orb::with_config(OrbConfig::default());
    let obj = orb
        .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{port}/k"))
        .unwrap();
    let rt = runtime_for(reader);
    let call = rt.spawn(echo_owned(obj.clone(), "x".into()));
    next_request(&seen);
    orb.shutdown(true);
    let e = rt
        .block_on(async { tokio::time::timeout(Duration::from_secs(10), call).await })
        .expect("the call hangs after shutdown")
        .unwrap()
        .unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::CommFailure);
}

/// The generated asynchronous proxy (`BenchAsync`) against a proxy-level workload: results,
/// user exceptions, oneways and sequences, many calls in flight from one task.
async fn exercise_bench_async(bench: &common::bench::BenchAsync) {
    use common::bench::bench::FailError;
    let echoes = (0..200).map(|i| {
        let s = format!("echo {i}");
        async move { (bench.echo(&s).await, s) }
    });
    for (got, sent) in join_all(echoes).await {
        assert_eq!(got.unwrap(), sent);
    }
    bench.ping().await.unwrap();
    bench.ping_oneway().await.unwrap();
    match bench.fail(42).await {
        Err(FailError::BenchError(e)) => {
            assert_eq!(e.code, 42);
            assert_eq!(e.reason, "requested");
        }
        other => panic!("expected BenchError, got {other:?}"),
    }
    bench.fail(0).await.unwrap();
    bench.start_timer().await.unwrap();
    let longs: Vec<i32> = (0..1000).collect();
    let sends = (0..10).map(|_| bench.send_longs(&longs));
    for r in join_all(sends).await {
        r.unwrap();
    }
    assert_eq!(bench.stop_timer().await.unwrap(), 10 * 4000);
}

fn async_proxy_against_a_corbina_server(reader: Reader) {
    let (server, ior) = serve(Arc::new(BenchSkeleton::new(Arc::new(
        StaticBench::default(),
    ))));
    let (orb, obj) = client(&ior);
    let bench = common::bench::BenchAsync::unchecked_narrow(&obj);
    let rt = runtime_for(reader);
    rt.block_on(exercise_bench_async(&bench));
    assert_read_by(&orb, reader);
    orb.destroy();
    server.destroy();
}

/// A collocated reference's asynchronous calls take the marshalled path (the servant runs
/// on a server thread, not the polling one).
#[test]
fn async_proxy_on_a_collocated_reference() {
    let (orb, ior) = serve(Arc::new(BenchSkeleton::new(Arc::new(
        StaticBench::default(),
    ))));
    let obj = orb.string_to_object(&ior).unwrap();
    assert!(obj.is_collocated());
    let bench = common::bench::BenchAsync::unchecked_narrow(&obj);
    runtime().block_on(exercise_bench_async(&bench));
    orb.destroy();
}

#[test]
fn async_proxy_against_omniorb() {
    let Some(bin) = corbina_testpeers::bench_peers() else {
        return;
    };
    let (_peer, ior) = corbina_testpeers::omni_server(bin, "async_proxy");
    let (orb, obj) = client(&ior);
    let bench = common::bench::BenchAsync::unchecked_narrow(&obj);
    runtime().block_on(exercise_bench_async(&bench));
    orb.destroy();
}

/// Parks every `echo`'s reply handle until the test releases them.
#[derive(Default)]
struct Parking {
    parked: std::sync::Mutex<Vec<(corbina::ReplyHandle, String)>>,
    arrived: std::sync::Condvar,
}

struct ParkingServant(Arc<Parking>);

impl corbina::Servant for ParkingServant {
    fn primary_interface(&self) -> &'static str {
        "IDL:Bench:1.0"
    }
    fn is_a(&self, id: &str) -> bool {
        id == "IDL:Bench:1.0"
    }
    fn dispatch(&self, req: &mut corbina::ServerRequest<'_, '_>) -> Result<(), SystemException> {
        if req.operation() != "echo" {
            return Err(corbina::servant::bad_operation());
        }
        let arg = req.arguments().read_string()?;
        req.arguments_done()?;
        let handle = req.defer_reply()?;
        self.0.parked.lock().unwrap().push((handle, arg));
        self.0.arrived.notify_all();
        Ok(())
    }
}

impl Parking {
    /// Waits until `n` requests are parked.
    fn wait_for(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut p = self.parked.lock().unwrap();
        while p.len() < n {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "only {} of {n} requests parked", p.len());
            p = self.arrived.wait_timeout(p, left).unwrap().0;
        }
    }

    /// Answers every parked request with its argument.
    fn release(&self) {
        for (h, arg) in std::mem::take(&mut *self.parked.lock().unwrap()) {
            h.reply(|w| w.write_string(&arg)).unwrap();
        }
    }
}

/// Waits until `f` holds (a background connect joining the pool).
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !f() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The strand pool: a call on a saturated connection (`-ORBasyncCallsPerStrand` calls in
/// flight) opens another in the background, later calls go on the least loaded one, and
/// there are never more than `-ORBMaxStrandsPerRope`.
fn calls_spread_over_strands_when_saturated(reader: Reader) {
    let parking = Arc::new(Parking::default());
    let (server, ior) = serve(Arc::new(ParkingServant(parking.clone())));
    let orb = Orb::with_config(
        OrbConfig::default()
            .async_calls_per_strand(4)
            .max_strands_per_rope(3),
    );
    let obj = orb.string_to_object(&ior).unwrap();
    let async_strands = || orb.connections()[0].async_strands.clone();
    let loads = || {
        let mut l: Vec<usize> = async_strands().iter().map(|s| s.in_flight).collect();
        l.sort_unstable();
        l
    };
    let rt = runtime_for(reader);
    let mut calls = Vec::new();
    let mut call = |i: usize| calls.push(rt.spawn(echo_owned(obj.clone(), format!("c{i}"))));
    // Four calls fill the first connection.
    for i in 0..4 {
        call(i);
    }
    parking.wait_for(4);
    assert_eq!(loads(), [4]);
    // The fifth goes on it too, and has a second connection opened meanwhile.
    call(4);
    parking.wait_for(5);
    eventually("a second connection", || async_strands().len() == 2);
    assert_eq!(loads(), [0, 5]);
    // The next ones go on the least loaded connection.
    for i in 5..9 {
        call(i);
    }
    parking.wait_for(9);
    assert_eq!(loads(), [4, 5]);
    // Past the rope's maximum, calls share the connections there are.
    for i in 9..40 {
        call(i);
        parking.wait_for(i + 1);
    }
    eventually("a third connection", || async_strands().len() == 3);
    assert_eq!(loads().iter().sum::<usize>(), 40);
    assert_eq!(async_strands().len(), 3);
    assert_read_by(&orb, reader);
    parking.release();
    rt.block_on(async {
        for (i, c) in calls.into_iter().enumerate() {
            assert_eq!(c.await.unwrap().unwrap(), format!("c{i}"));
        }
    });
    orb.destroy();
    server.destroy();
}

on_both_readers!(calls_spread_over_strands_when_saturated);

/// A server whose accept queue is full: a connect to it waits for the connect timeout.
fn unanswered_listener() -> (socket2::Socket, Vec<TcpStream>, u16) {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    s.bind(
        &"127.0.0.1:0"
            .parse::<std::net::SocketAddr>()
            .unwrap()
            .into(),
    )
    .unwrap();
    s.listen(0).unwrap();
    let port = s.local_addr().unwrap().as_socket().unwrap().port();
    // Fill the queue (Linux queues backlog + 1), without accepting.
    let mut fill = Vec::new();
    for _ in 0..8 {
        match TcpStream::connect_timeout(
            &format!("127.0.0.1:{port}").parse().unwrap(),
            Duration::from_millis(200),
        ) {
            Ok(c) => fill.push(c),
            Err(_) => break,
        }
    }
    (s, fill, port)
}

/// The first call connects on a helper thread: polling it returns at once (the executor
/// is not stalled), and the connect timeout still ends the call.
#[test]
fn the_first_call_does_not_connect_on_the_polling_thread() {
    let (_listener, _fill, port) = unanswered_listener();
    let orb = Orb::with_config(OrbConfig {
        connect_timeout: Duration::from_millis(600),
        ..OrbConfig::default()
    });
    let obj = orb
        .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{port}/k"))
        .unwrap();
    let rt = runtime();
    let started = Instant::now();
    let e = rt.block_on(async {
        let mut call = std::pin::pin!(echo(&obj, "x".into()));
        let first = std::future::poll_fn(|cx| {
            std::task::Poll::Ready(std::future::Future::poll(call.as_mut(), cx))
        })
        .await;
        assert!(first.is_pending());
        assert!(
            started.elapsed() < Duration::from_millis(300),
            "the first poll took {:?}",
            started.elapsed()
        );
        call.await.unwrap_err()
    });
    assert!(
        matches!(
            e.kind,
            SystemExceptionKind::Transient | SystemExceptionKind::Timeout
        ),
        "{e}"
    );
    assert!(started.elapsed() >= Duration::from_millis(500));
    assert!(started.elapsed() < Duration::from_secs(5));
    orb.destroy();
}

/// A runtime without an I/O driver is found out (tokio's panic, caught) without the user's
/// panic hook hearing of it, and the hook is left in place for real panics.
#[test]
fn a_runtime_without_io_is_found_out_quietly() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static HEARD: AtomicUsize = AtomicUsize::new(0);
    static TOKIO: AtomicUsize = AtomicUsize::new(0);
    std::panic::set_hook(Box::new(|info| {
        HEARD.fetch_add(1, Ordering::SeqCst);
        if info.to_string().contains("IO is disabled") {
            TOKIO.fetch_add(1, Ordering::SeqCst);
        }
    }));
    let (server, ior) = serve(Arc::new(BenchSkeleton::new(Arc::new(
        StaticBench::default(),
    ))));
    let (orb, obj) = client(&ior);
    let rt = runtime_for(Reader::Thread);
    assert_eq!(rt.block_on(echo(&obj, "quiet".into())).unwrap(), "quiet");
    assert_read_by(&orb, Reader::Thread);
    assert_eq!(
        TOKIO.load(Ordering::SeqCst),
        0,
        "tokio's panic reached the hook"
    );
    // The user's hook is still the hook.
    let before = HEARD.load(Ordering::SeqCst);
    let _ = std::thread::spawn(|| panic!("a real one")).join();
    assert_eq!(HEARD.load(Ordering::SeqCst), before + 1);
    let _ = std::panic::take_hook();
    orb.destroy();
    server.destroy();
}

/// A connection read by a runtime's driver goes on after that runtime shuts down: a reader
/// thread takes over, and calls from elsewhere still get their replies.
#[test]
fn a_connection_outlives_its_runtime() {
    let (server, ior) = serve(Arc::new(BenchSkeleton::new(Arc::new(
        StaticBench::default(),
    ))));
    let (orb, obj) = client(&ior);
    let rt = runtime();
    assert_eq!(rt.block_on(echo(&obj, "one".into())).unwrap(), "one");
    assert_read_by(&orb, Reader::Reactor);
    drop(rt);
    eventually("a reader thread takes over", || {
        orb.connections()[0]
            .async_strands
            .iter()
            .all(|s| !s.on_reactor)
    });
    assert_eq!(orb.connections()[0].async_strands.len(), 1);
    let rt = runtime_for(Reader::Thread);
    assert_eq!(rt.block_on(echo(&obj, "two".into())).unwrap(), "two");
    assert_eq!(orb.connections()[0].async_strands.len(), 1);
    orb.destroy();
    server.destroy();
}

/// Calls waiting for a connect under way each give up at their own deadline (TIMEOUT,
/// completed NO), whichever of them started it, and the connect goes on for the others: a
/// call without a deadline gets its reply once the server accepts.
#[test]
fn waiting_calls_time_out_at_their_own_deadlines() {
    let (listener, fill, port) = unanswered_listener();
    let orb = Orb::with_config(OrbConfig {
        connect_timeout: Duration::from_secs(8),
        ..OrbConfig::default()
    });
    let obj = orb
        .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{port}/k"))
        .unwrap();
    let short = orb
        .object_with_timeout(&obj, Duration::from_millis(200))
        .unwrap();
    let longer = orb
        .object_with_timeout(&obj, Duration::from_millis(500))
        .unwrap();
    let rt = runtime();
    let started = Instant::now();
    let call = |o: ObjectRef| {
        rt.spawn(async move {
            let r = echo(&o, "x".into()).await;
            (r, started.elapsed())
        })
    };
    // The shortest deadline starts the connect (a worker polls it meanwhile).
    let a = call(short);
    std::thread::sleep(Duration::from_millis(50));
    let (b, c) = (call(longer), call(obj.clone()));
    for (task, at_least) in [(a, 200), (b, 500)] {
        let (r, took) = rt.block_on(task).unwrap();
        let e = r.unwrap_err();
        assert_eq!(
            (e.kind, e.completed),
            (SystemExceptionKind::Timeout, corbina::CompletionStatus::No),
            "{e}"
        );
        assert!(took >= Duration::from_millis(at_least), "{took:?}");
        assert!(took < Duration::from_millis(at_least + 1500), "{took:?}");
    }
    // The server takes its queued connections in: the client's connect (its SYN dropped
    // while the queue was full) succeeds when it is sent again.
    let listener: TcpListener = listener.into();
    for _ in &fill {
        drop(listener.accept().unwrap());
    }
    let (_, seen, send) = raw_server_on(listener);
    let (id, arg) = next_request(&seen);
    assert_eq!(arg, "x");
    send.send(Some(reply(id, "done"))).unwrap();
    let (r, _) = rt.block_on(c).unwrap();
    assert_eq!(r.unwrap(), "done");
    orb.destroy();
}
