//! Buffered oneways (`-ORBOnewaySyncScope none`) between two ORBs in one process over
//! loopback IIOP: what a server sees, and when, for each of the bounds that write a batch
//! (count, bytes, time), a twoway, an explicit flush, and the client context's end; and the
//! default (unbuffered) behaviour. Waits are bounded with generous timeouts; nothing here
//! depends on how fast the machine is, only on which writes have happened.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::bench::bench::FailError;
use common::bench::{Bench, BenchServant, BenchSkeleton, BinStruct};
use common::serve;
use corbina::client::{set_thread_oneway_buffering, OnewayBuffering};
use corbina::config::{BufferingConstraint, SyncScope};
use corbina::transport::TransportKind;
use corbina::{Orb, OrbConfig, SystemException};

type R<T = ()> = Result<T, SystemException>;

/// Records, in arrival order, each `send_longs_oneway(s)` as `s` and each twoway `ping` as
/// `[-1]`.
#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<Vec<i32>>>,
    /// How long each `send_longs_oneway` takes (µs): a slow server widens the window in
    /// which a request on another connection could overtake a batch.
    oneway_pause_us: AtomicU64,
}

impl Recorder {
    fn events(&self) -> Vec<Vec<i32>> {
        self.events.lock().unwrap().clone()
    }

    fn count(&self) -> usize {
        self.events.lock().unwrap().len()
    }

    /// Waits (up to 20 s) until `n` events have arrived; returns how many there are.
    fn wait_for(&self, n: usize) -> usize {
        let start = Instant::now();
        while self.count() < n && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(2));
        }
        self.count()
    }

    fn push(&self, e: Vec<i32>) -> R {
        self.events.lock().unwrap().push(e);
        Ok(())
    }
}

impl BenchServant for Arc<Recorder> {
    fn ping(&self) -> R {
        self.push(vec![-1])
    }
    fn ping_oneway(&self) -> R {
        Ok(())
    }
    fn echo(&self, s: &str) -> R<String> {
        Ok(s.to_owned())
    }
    fn fail(&self, _code: i32) -> Result<(), FailError> {
        Ok(())
    }
    fn send_octets(&self, _s: &[u8]) -> R {
        Ok(())
    }
    fn send_octets_oneway(&self, s: &[u8]) -> R {
        self.push(vec![s.len() as i32])
    }
    fn send_shorts(&self, _s: &[i16]) -> R {
        Ok(())
    }
    fn send_shorts_oneway(&self, _s: &[i16]) -> R {
        Ok(())
    }
    fn send_longs(&self, _s: &[i32]) -> R {
        Ok(())
    }
    fn send_longs_oneway(&self, s: &[i32]) -> R {
        let pause = self.oneway_pause_us.load(Ordering::Relaxed);
        if pause > 0 {
            std::thread::sleep(Duration::from_micros(pause));
        }
        self.push(s.to_vec())
    }
    fn send_doubles(&self, _s: &[f64]) -> R {
        Ok(())
    }
    fn send_doubles_oneway(&self, _s: &[f64]) -> R {
        Ok(())
    }
    fn send_chars(&self, _s: &[u8]) -> R {
        Ok(())
    }
    fn send_chars_oneway(&self, _s: &[u8]) -> R {
        Ok(())
    }
    fn send_structs(&self, _s: &[BinStruct]) -> R {
        Ok(())
    }
    fn send_structs_oneway(&self, _s: &[BinStruct]) -> R {
        Ok(())
    }
    fn start_timer(&self) -> R {
        Ok(())
    }
    fn stop_timer(&self) -> R<u64> {
        Ok(0)
    }
}

fn server() -> (Orb, String, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let (orb, ior) = serve(Arc::new(BenchSkeleton::new(recorder.clone())));
    (orb, ior, recorder)
}

/// Bounds that never trigger by themselves within a test.
fn never() -> BufferingConstraint {
    BufferingConstraint {
        max_bytes: 1 << 20,
        max_count: 1 << 20,
        max_delay: Duration::from_secs(3600),
    }
}

fn client(config: OrbConfig, ior: &str) -> (Orb, Bench) {
    let orb = Orb::with_config(config);
    let bench = Bench::narrow(&orb.string_to_object(ior).unwrap()).unwrap();
    (orb, bench)
}

/// Buffered oneways not written yet, to every server.
fn buffered_oneways(orb: &Orb) -> usize {
    orb.connections().iter().map(|c| c.buffered_oneways).sum()
}

/// Buffered oneways lost with their connection, in all.
fn lost_oneways(orb: &Orb) -> u64 {
    orb.connections().iter().map(|c| c.lost_oneways).sum()
}

fn buffered(bounds: BufferingConstraint) -> OrbConfig {
    OrbConfig::default().oneway_buffering(Some(bounds))
}

#[test]
fn oneways_then_a_twoway_arrive_in_order_before_its_reply() {
    let (_server, ior, rec) = server();
    let (orb, bench) = client(buffered(never()), &ior);
    bench.ping().unwrap(); // connect first: the oneways below reuse that strand
    for i in 0..500 {
        bench.send_longs_oneway(&[i]).unwrap();
    }
    // No bound reached, no twoway yet: nothing has been written.
    assert_eq!(buffered_oneways(&orb), 500);
    assert_eq!(rec.count(), 1);
    bench.ping().unwrap();
    // The batch went out with (before) the twoway, on its connection: all ran before it.
    let mut want = vec![vec![-1]];
    want.extend((0..500).map(|i| vec![i]));
    want.push(vec![-1]);
    assert_eq!(rec.events(), want);
    assert_eq!(buffered_oneways(&orb), 0);
    assert_eq!(
        orb.connections()
            .iter()
            .map(|c| c.open_strands)
            .sum::<usize>(),
        1
    );
}

#[test]
fn the_count_bound_writes_a_batch() {
    let (_server, ior, rec) = server();
    let (orb, bench) = client(
        buffered(BufferingConstraint {
            max_count: 10,
            ..never()
        }),
        &ior,
    );
    for i in 0..25 {
        bench.send_longs_oneway(&[i]).unwrap();
    }
    // Two batches of 10 were written by the 10th and 20th oneway; 5 wait.
    assert_eq!(rec.wait_for(20), 20);
    assert_eq!(buffered_oneways(&orb), 5);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(rec.count(), 20, "no partial batch is written");
    orb.flush_oneways().unwrap();
    assert_eq!(rec.wait_for(25), 25);
    let want: Vec<Vec<i32>> = (0..25).map(|i| vec![i]).collect();
    assert_eq!(rec.events(), want);
}

#[test]
fn the_byte_bound_writes_a_batch_and_large_oneways_go_straight_out() {
    let (_server, ior, rec) = server();
    let (orb, bench) = client(
        buffered(BufferingConstraint {
            max_bytes: 2500,
            ..never()
        }),
        &ior,
    );
    let kb = vec![7u8; 1000];
    bench.send_octets_oneway(&kb).unwrap();
    bench.send_octets_oneway(&kb).unwrap();
    assert_eq!(buffered_oneways(&orb), 2);
    // The third passes 2500 buffered bytes: the batch is written.
    bench.send_octets_oneway(&kb).unwrap();
    assert_eq!(rec.wait_for(3), 3);
    assert_eq!(buffered_oneways(&orb), 0);
    // A oneway larger than the bound is not copied into the batch: it is written at once,
    // after what was buffered before it.
    bench.send_octets_oneway(&kb[..10]).unwrap();
    bench.send_octets_oneway(&[1u8; 4000]).unwrap();
    assert_eq!(rec.wait_for(5), 5);
    assert_eq!(
        rec.events(),
        [vec![1000], vec![1000], vec![1000], vec![10], vec![4000]]
    );
}

#[test]
fn the_time_bound_writes_a_batch_alone() {
    let (_server, ior, rec) = server();
    let (orb, bench) = client(
        buffered(BufferingConstraint {
            max_delay: Duration::from_millis(30),
            ..never()
        }),
        &ior,
    );
    for round in 0..3 {
        for i in 0..3 {
            bench.send_longs_oneway(&[round * 10 + i]).unwrap();
        }
        // No further call: the background flusher writes them.
        let want = (round as usize + 1) * 3;
        assert_eq!(rec.wait_for(want), want);
        assert_eq!(buffered_oneways(&orb), 0);
    }
    let want: Vec<Vec<i32>> = (0..3)
        .flat_map(|r| (0..3).map(move |i| vec![r * 10 + i]))
        .collect();
    assert_eq!(rec.events(), want);
    assert_eq!(lost_oneways(&orb), 0);
}

#[test]
fn dropping_the_client_writes_what_is_buffered() {
    let (_server, ior, rec) = server();
    let (orb, bench) = client(buffered(never()), &ior);
    for i in 0..100 {
        bench.send_longs_oneway(&[i]).unwrap();
    }
    assert_eq!(buffered_oneways(&orb), 100);
    assert_eq!(rec.count(), 0);
    // The last references to the client context go: its drop writes the batch.
    drop(bench);
    drop(orb);
    assert_eq!(rec.wait_for(100), 100);
    let want: Vec<Vec<i32>> = (0..100).map(|i| vec![i]).collect();
    assert_eq!(rec.events(), want);
}

#[test]
fn an_explicit_flush_writes_what_is_buffered() {
    let (_server, ior, rec) = server();
    let (orb, bench) = client(buffered(never()), &ior);
    for i in 0..7 {
        bench.send_longs_oneway(&[i]).unwrap();
    }
    assert_eq!(rec.count(), 0);
    orb.flush_oneways().unwrap();
    assert_eq!(rec.wait_for(7), 7);
    assert_eq!(buffered_oneways(&orb), 0);
    // Nothing buffered: a flush is a no-op.
    orb.flush_oneways().unwrap();
}

#[test]
fn unbuffered_by_default() {
    assert_eq!(
        OrbConfig::default().oneway_sync_scope,
        SyncScope::WithTransport
    );
    let (_server, ior, rec) = server();
    let (orb, bench) = client(OrbConfig::default(), &ior);
    for i in 0..5 {
        bench.send_longs_oneway(&[i]).unwrap();
        assert_eq!(buffered_oneways(&orb), 0);
    }
    // Written before each call returned: they arrive with no twoway or flush.
    assert_eq!(rec.wait_for(5), 5);
    let want: Vec<Vec<i32>> = (0..5).map(|i| vec![i]).collect();
    assert_eq!(rec.events(), want);
}

#[test]
fn a_thread_can_turn_buffering_on_and_off() {
    let (_server, ior, rec) = server();
    // ORB unbuffered, this thread buffered.
    let (orb, bench) = client(OrbConfig::default(), &ior);
    set_thread_oneway_buffering(OnewayBuffering::On(never()));
    bench.send_longs_oneway(&[1]).unwrap();
    assert_eq!(buffered_oneways(&orb), 1);
    // ORB buffered, this thread not: the unbuffered oneway is written at once, after the
    // one buffered before it on the same connection.
    let (orb2, bench2) = client(buffered(never()), &ior);
    set_thread_oneway_buffering(OnewayBuffering::Off);
    bench2.send_longs_oneway(&[2]).unwrap();
    assert_eq!(buffered_oneways(&orb2), 0);
    bench.send_longs_oneway(&[3]).unwrap();
    assert_eq!(buffered_oneways(&orb), 0);
    set_thread_oneway_buffering(OnewayBuffering::OrbDefault);
    assert_eq!(rec.wait_for(3), 3);
    let mut events = rec.events();
    events.sort();
    assert_eq!(events, [vec![1], vec![2], vec![3]]);
    // The first ORB's two were one connection's, in order.
    let first: Vec<_> = rec.events().into_iter().filter(|e| e[0] != 2).collect();
    assert_eq!(first, [vec![1], vec![3]]);
}

/// Four threads mixing buffered oneways and twoways on one rope of `strands` connections;
/// returns the events the server saw, once all 1200 oneways and 120 twoways are in.
/// With one connection, when a thread's twoway returns every oneway it sent before has
/// run (checked); with several, a thread's calls may go out on different connections,
/// which the server serves concurrently, so (as without buffering) only delivery is
/// guaranteed.
fn four_threads(strands: usize) -> Vec<Vec<i32>> {
    let (_server, ior, rec) = server();
    let config = buffered(BufferingConstraint {
        max_count: 7,
        max_delay: Duration::from_micros(200),
        ..never()
    })
    .max_strands_per_rope(strands);
    let (orb, bench) = client(config, &ior);
    let bench = Arc::new(bench);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let bench = bench.clone();
            let rec = rec.clone();
            std::thread::spawn(move || {
                for i in 0..300 {
                    bench.send_longs_oneway(&[t, i]).unwrap();
                    if i % 10 == 9 {
                        bench.ping().unwrap();
                        if strands == 1 {
                            let mine = rec
                                .events()
                                .iter()
                                .filter(|e| e.len() == 2 && e[0] == t)
                                .count();
                            assert_eq!(mine, i as usize + 1, "thread {t}: a twoway overtook");
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let pings = 4 * 30;
    assert_eq!(rec.wait_for(1200 + pings), 1200 + pings);
    assert!(
        orb.connections()
            .iter()
            .map(|c| c.open_strands)
            .sum::<usize>()
            <= strands
    );
    assert_eq!(lost_oneways(&orb), 0);
    assert_eq!(buffered_oneways(&orb), 0);
    rec.events()
}

#[test]
fn threads_sharing_one_connection_keep_their_own_order() {
    let events = four_threads(1);
    for t in 0..4 {
        let mine: Vec<i32> = events
            .iter()
            .filter(|e| e.len() == 2 && e[0] == t)
            .map(|e| e[1])
            .collect();
        assert_eq!(mine, (0..300).collect::<Vec<_>>(), "thread {t}");
    }
}

#[test]
fn threads_sharing_several_connections_lose_nothing() {
    let mut events = four_threads(16);
    events.retain(|e| e.len() == 2);
    events.sort();
    let want: Vec<Vec<i32>> = (0..4)
        .flat_map(|t| (0..300).map(move |i| vec![t, i]))
        .collect();
    assert_eq!(events, want);
}

#[test]
fn a_twoway_racing_the_time_bound_does_not_overtake_the_batch() {
    let (_server, ior, rec) = server();
    // The twoway comes at varying times around the batch's deadline, so the flusher is
    // sometimes writing the batch just when the twoway wants the connection: it must wait
    // for that write, not overtake it on another connection.
    let (_orb, bench) = client(
        buffered(BufferingConstraint {
            max_delay: Duration::from_micros(50),
            ..never()
        }),
        &ior,
    );
    rec.oneway_pause_us.store(100, Ordering::Relaxed);
    for round in 0..400 {
        for i in 0..3 {
            bench.send_longs_oneway(&[round, i]).unwrap();
        }
        let pause = Duration::from_micros(5 * (round as u64 % 40));
        let start = Instant::now();
        while start.elapsed() < pause {
            std::hint::spin_loop();
        }
        bench.ping().unwrap();
        let events = rec.events();
        assert_eq!(events.len(), round as usize * 4 + 4, "round {round}");
        assert_eq!(events[events.len() - 2], [round, 2], "round {round}");
    }
}

#[test]
fn batches_go_over_unix_and_shared_memory_connections_too() {
    let dir = std::env::temp_dir().join(format!("corbina-oneway-buf-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (kind, config) in [
        (
            TransportKind::Unix,
            OrbConfig::default().unix_endpoint(dir.join("u.sock")),
        ),
        (
            TransportKind::Shm,
            OrbConfig::default().shm_endpoint(dir.join("s.sock")),
        ),
    ] {
        let rec = Arc::new(Recorder::default());
        let server = Orb::with_config(config);
        let poa = server.root_poa();
        let id = poa
            .activate_object(Arc::new(BenchSkeleton::new(rec.clone())))
            .unwrap();
        poa.the_poa_manager().activate().unwrap();
        let ior = server
            .object_to_string(&poa.id_to_reference(&id).unwrap())
            .unwrap();
        let (orb, bench) = client(
            buffered(BufferingConstraint {
                max_count: 64,
                ..never()
            }),
            &ior,
        );
        for i in 0..1000 {
            bench.send_longs_oneway(&[i]).unwrap();
        }
        bench.ping().unwrap();
        let mut want: Vec<Vec<i32>> = (0..1000).map(|i| vec![i]).collect();
        want.push(vec![-1]);
        assert_eq!(rec.events(), want, "{kind:?}");
        assert_eq!(orb.connections()[0].address.kind(), kind);
        server.shutdown(true);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A "server" that accepts one connection and resets it (SO_LINGER 0), so that writing to
/// it fails; returns its corbaloc and the listener (later connections wait in its backlog).
fn resetting_server() -> (String, std::net::TcpListener) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "corbaloc::127.0.0.1:{}/key",
        listener.local_addr().unwrap().port()
    );
    (url, listener)
}

fn reset_next(listener: &std::net::TcpListener) {
    let (s, _) = listener.accept().unwrap();
    socket2::SockRef::from(&s)
        .set_linger(Some(Duration::ZERO))
        .unwrap();
    drop(s);
}

#[test]
fn lost_batches_are_reported_by_a_flush_or_the_next_call() {
    use corbina::client::MINOR_ONEWAYS_LOST;
    use corbina::{CompletionStatus, SystemExceptionKind};
    let (url, listener) = resetting_server();

    // An explicit flush reports the failure itself.
    let orb = Orb::with_config(buffered(never()));
    let obj = orb.string_to_object(&url).unwrap();
    obj.invoke_oneway("op", |_| Ok(())).unwrap();
    reset_next(&listener);
    let e = orb.flush_oneways().unwrap_err();
    assert_eq!(
        (e.kind, e.minor, e.completed),
        (
            SystemExceptionKind::CommFailure,
            MINOR_ONEWAYS_LOST,
            CompletionStatus::Maybe
        )
    );
    assert_eq!(lost_oneways(&orb), 1);
    // Reported once.
    orb.flush_oneways().unwrap();

    // The flusher's failure is reported by the next call, which is not sent.
    let orb = Orb::with_config(buffered(BufferingConstraint {
        max_delay: Duration::from_millis(10),
        ..never()
    }));
    let obj = orb.string_to_object(&url).unwrap();
    obj.invoke_oneway("op", |_| Ok(())).unwrap();
    obj.invoke_oneway("op", |_| Ok(())).unwrap();
    reset_next(&listener);
    let start = Instant::now();
    while lost_oneways(&orb) == 0 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(lost_oneways(&orb), 2);
    let e = obj.invoke_oneway("op", |_| Ok(())).unwrap_err();
    assert_eq!(
        (e.kind, e.minor, e.completed),
        (
            SystemExceptionKind::CommFailure,
            MINOR_ONEWAYS_LOST,
            CompletionStatus::No
        )
    );
    // Then calls go on, on a new connection.
    obj.invoke_oneway("op", |_| Ok(())).unwrap();
    assert_eq!(buffered_oneways(&orb), 1);
    assert_eq!(lost_oneways(&orb), 2);
}
