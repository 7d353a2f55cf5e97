//! Asynchronous calls (`ObjectRef::invoke_async`): many in flight on one connection from one
//! task under tokio's multi-threaded runtime, replies matched by request id in any order,
//! cancellation by drop, timeouts, and connection loss with calls in flight.

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

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap()
}

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

/// 500 calls in flight from one task go over one connection and each gets its own reply;
/// against a Corbina server (thread per connection: it answers in order).
#[test]
fn many_calls_in_flight_on_one_connection() {
    let (server, ior) = serve(Arc::new(BenchSkeleton::new(Arc::new(
        StaticBench::default(),
    ))));
    let (orb, obj) = client(&ior);
    runtime().block_on(async {
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
    assert_eq!(orb.client_context().open_strands(), 0);
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
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
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
#[test]
fn replies_in_any_order_reach_their_calls() {
    let (port, seen, send) = raw_server();
    let orb = Orb::with_config(OrbConfig::default());
    let obj = orb
        .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{port}/k"))
        .unwrap();
    let rt = runtime();
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
    orb.destroy();
}

async fn echo_owned(obj: ObjectRef, s: String) -> R<String> {
    echo(&obj, s).await
}

/// A future dropped before its reply sends CancelRequest; its late reply is dropped and
/// the next call on the connection gets its own.
#[test]
fn dropping_a_future_cancels_the_request() {
    let (port, seen, send) = raw_server();
    let orb = Orb::with_config(OrbConfig::default());
    let obj = orb
        .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{port}/k"))
        .unwrap();
    let rt = runtime();
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
    assert_eq!(orb.client_context().ropes()[0].async_in_flight(), 0);
    // The late reply comes, then the next call's.
    send.send(Some(reply(first, "late"))).unwrap();
    let next = rt.spawn(echo_owned(obj.clone(), "b".into()));
    let (second, arg) = next_request(&seen);
    assert_eq!(arg, "b");
    send.send(Some(reply(second, "for b"))).unwrap();
    assert_eq!(rt.block_on(next).unwrap().unwrap(), "for b");
    orb.destroy();
}

/// The call timeout applies: TIMEOUT (completed MAYBE), the request cancelled on the wire.
#[test]
fn timeouts_apply_and_cancel() {
    let (port, seen, _send) = raw_server();
    let orb = Orb::with_config(OrbConfig {
        call_timeout: Some(Duration::from_millis(200)),
        ..OrbConfig::default()
    });
    let obj = orb
        .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{port}/k"))
        .unwrap();
    let started = Instant::now();
    let e = runtime().block_on(echo(&obj, "slow".into())).unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::Timeout);
    assert_eq!(e.completed, corbina::CompletionStatus::Maybe);
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(started.elapsed() < Duration::from_secs(5));
    let (id, _) = next_request(&seen);
    assert_eq!(
        seen.recv_timeout(Duration::from_secs(10)).unwrap(),
        Seen::Cancel(id)
    );
    orb.destroy();
}

/// The connection lost with calls in flight: every one of them resolves, COMM_FAILURE
/// (completed MAYBE); nothing hangs. The next call opens a new connection.
#[test]
fn connection_loss_resolves_every_call() {
    let (port, seen, send) = raw_server();
    let orb = Orb::with_config(OrbConfig::default());
    let obj = orb
        .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{port}/k"))
        .unwrap();
    let rt = runtime();
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
#[test]
fn orb_shutdown_resolves_waiting_calls() {
    let (port, seen, _send) = raw_server();
    let orb = Orb::with_config(OrbConfig::default());
    let obj = orb
        .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{port}/k"))
        .unwrap();
    let rt = runtime();
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

#[test]
fn async_proxy_against_a_corbina_server() {
    let (server, ior) = serve(Arc::new(BenchSkeleton::new(Arc::new(
        StaticBench::default(),
    ))));
    let (orb, obj) = client(&ior);
    let bench = common::bench::BenchAsync::unchecked_narrow(&obj);
    runtime().block_on(exercise_bench_async(&bench));
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
