//! The server-wide budget for memory held in incomplete messages (`-ORBmaxIncompleteBytes`,
//! issue 19): many connections each sending the start of a large message, and a seeded
//! stream of mutated GIOP messages, against one server. The process's resident memory
//! (VmRSS) and its heap (a counting allocator: what is allocated, reserved or touched)
//! stay under the budget plus a fixed overhead, the connections holding the most
//! get MessageError, a WARN line says so, and a valid client keeps getting answers.
//! Its own test binary: it installs a process-wide `tracing` subscriber and allocator.

mod common;
mod heap;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once, OnceLock};
use std::time::Duration;

use common::bench::{Bench, BenchSkeleton};
use common::StaticBench;
use corbina::cdr::CodeSets;
use corbina::config::Endpoint;
use corbina::giop::connection::{GiopConnection, RequestStart, Role, Settings};
use corbina::giop::{TargetAddress, Version};
use corbina::{Orb, OrbConfig};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

/// Counts the budget's WARN lines (target `corbina::server`).
#[derive(Clone, Default)]
struct BudgetWarnings(Arc<AtomicUsize>);

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl Subscriber for BudgetWarnings {
    // WARN and above only: enabling everything turned on the wire trace, whose hex dump of
    // every 64 KiB read (a 250 KiB string each, on hundreds of threads at once) was most of
    // the heap these tests measured, and slowed the server's threads down.
    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        *meta.level() <= tracing::Level::WARN
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut m = Message(String::new());
        event.record(&mut m);
        let meta = event.metadata();
        if *meta.level() == tracing::Level::WARN
            && meta.target() == "corbina::server"
            && m.0.contains("-ORBmaxIncompleteBytes")
        {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// The WARN lines counted so far (the subscriber installed at the first call).
fn warnings() -> Arc<AtomicUsize> {
    static COUNT: OnceLock<Arc<AtomicUsize>> = OnceLock::new();
    COUNT
        .get_or_init(|| {
            let w = BudgetWarnings::default();
            tracing::subscriber::set_global_default(w.clone()).unwrap();
            w.0
        })
        .clone()
}

/// The tests measure the process's memory: one at a time. glibc's trim threshold is
/// fixed first, as `MALLOC_TRIM_THRESHOLD_=131072` does for a server process: by default
/// glibc raises it (up to 64 MiB) after large blocks are freed, and then keeps freed memory
/// of many arenas in RSS however little the server holds (measured: RSS +33 MiB over a
/// 4 MiB budget after this stream, +60 MiB after three times as long; with the threshold
/// fixed, within the bound below however long).
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    static TRIM: Once = Once::new();
    TRIM.call_once(|| {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        #[allow(unsafe_code)]
        {
            extern "C" {
                fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
            }
            const M_TRIM_THRESHOLD: std::ffi::c_int = -1;
            // SAFETY: mallopt takes no pointers and sets an allocator parameter; called
            // once, before the tests allocate what they measure.
            unsafe {
                mallopt(M_TRIM_THRESHOLD, 128 << 10);
            }
        }
    });
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// This process's resident memory, in bytes.
fn rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb << 10
}

/// A server with a `budget`-byte receive budget; its bench object's proxy (on a client
/// ORB of its own, calls bounded by a timeout so that a stuck server fails the test), its
/// TCP address and a valid GIOP 1.2 `ping` request to it.
struct Setup {
    _server: Orb,
    _client: Orb,
    bench: Bench,
    addr: SocketAddr,
    ping: Vec<u8>,
}

fn setup(budget: usize) -> Setup {
    setup_with(budget, 0)
}

/// [`setup`] with a server of `pool` threads (0: a thread per connection).
fn setup_with(budget: usize, pool: usize) -> Setup {
    let server = Orb::with_config(
        OrbConfig {
            endpoints: vec![Endpoint {
                host: "127.0.0.1".into(),
                port: 0,
            }],
            ..OrbConfig::default()
        }
        .max_incomplete_bytes(budget)
        .thread_pool(pool),
    );
    let poa = server.root_poa();
    let id = poa
        .activate_object(Arc::new(BenchSkeleton::new(Arc::new(
            StaticBench::default(),
        ))))
        .unwrap();
    let obj = poa.id_to_reference(&id).unwrap();
    poa.the_poa_manager().activate().unwrap();
    let ior = server.object_to_string(&obj).unwrap();
    let profile = obj.ior().iiop_profiles().unwrap().remove(0);
    let addr: SocketAddr = format!("127.0.0.1:{}", profile.port).parse().unwrap();
    let mut giop = GiopConnection::new(Settings::new(Role::Client));
    let target = TargetAddress::Key(profile.object_key.clone());
    let r = giop
        .start_request(
            Vec::new(),
            &RequestStart::new(Version::V1_2, CodeSets::UNICODE, &target, "ping", true),
        )
        .unwrap();
    let ping = giop
        .finish_request(r)
        .unwrap()
        .contiguous()
        .unwrap()
        .to_vec();
    let client = Orb::with_config(OrbConfig {
        call_timeout: Some(Duration::from_secs(20)),
        ..OrbConfig::default()
    });
    let bench = Bench::narrow(&client.string_to_object(&ior).unwrap()).unwrap();
    bench.ping().unwrap();
    Setup {
        _server: server,
        _client: client,
        bench,
        addr,
        ping,
    }
}

/// A GIOP 1.2 Request header (native byte order) announcing `size` bytes of body.
fn request_header(size: u32, more_fragments: bool) -> [u8; 12] {
    let mut h = *b"GIOP\x01\x02\x00\x00\x00\x00\x00\x00";
    let little = cfg!(target_endian = "little");
    h[6] = u8::from(little) | if more_fragments { 2 } else { 0 };
    h[8..].copy_from_slice(&size.to_ne_bytes());
    h
}

/// A connection to `addr` sending the start of a 1 MiB request, `body`, never finished. The
/// server may close it while it is written: then the rest is refused.
fn partial_request(addr: SocketAddr, body: &[u8]) -> TcpStream {
    let mut c = TcpStream::connect(addr).unwrap();
    let _ = c
        .write_all(&request_header(1 << 20, false))
        .and_then(|()| c.write_all(body));
    c
}

/// Whether the server answered MessageError (and nothing else first) on `s`.
fn got_message_error(s: &mut TcpStream) -> bool {
    got_message_error_within(s, Duration::from_millis(500))
}

/// [`got_message_error`], waiting up to `timeout` for it.
fn got_message_error_within(s: &mut TcpStream, timeout: Duration) -> bool {
    let _ = s.set_read_timeout(Some(timeout));
    let mut h = [0u8; 12];
    s.read_exact(&mut h).is_ok() && &h[..4] == b"GIOP" && h[7] == 6
}

#[test]
fn a_thousand_partial_messages_stay_within_the_budget_and_the_largest_holders_go() {
    let _serial = serial();
    let warned = warnings();
    let before = warned.load(Ordering::Relaxed);
    const BUDGET: usize = 8 << 20;
    const CONNECTIONS: usize = 1000;
    const PARTIAL: usize = 128 << 10;
    let s = setup(BUDGET);
    let body = vec![0x5au8; PARTIAL];
    let rss0 = rss();
    let heap0 = heap::reset_peak();
    let mut conns = Vec::with_capacity(CONNECTIONS);
    let mut peak = 0;
    for i in 0..CONNECTIONS {
        conns.push(partial_request(s.addr, &body));
        if i % 100 == 99 {
            s.bench.ping().unwrap();
            // Let the threads of the connections just closed run and exit: the budget bounds
            // what connections hold, not how late a loaded scheduler runs their threads.
            std::thread::sleep(Duration::from_millis(20));
            peak = peak.max(rss().saturating_sub(rss0));
        }
    }
    // The closed connections' threads let go of their buffers.
    std::thread::sleep(Duration::from_millis(300));
    s.bench.ping().unwrap();
    let grown = peak.max(rss().saturating_sub(rss0));
    let heap_grown = heap::peak_above(heap0);
    eprintln!(
        "1000 connections: RSS +{} MiB, heap peak +{} MiB",
        grown >> 20,
        heap_grown >> 20
    );
    // What the allocator handed out: the budget, which counts a closed connection's memory
    // until its thread has dropped it (a charge waits for that), and the uncharged first
    // chunk (64 KiB) and state of each connection alive meanwhile: those still open and
    // those whose charge waits its turn. 15–31 MiB seen in 5 runs at loads of 7–12 and 2
    // beside a `cargo build --release` (15, 23); 89–166 MiB when a closed connection's
    // share left the budget before its memory did (and the test's subscriber turned the
    // wire trace's hex dumps on), 213–218 MiB when receive buffers were reserved by the
    // size announced (1 MiB here).
    const HEAP_OVERHEAD: usize = 40 << 20;
    assert!(
        heap_grown < BUDGET + HEAP_OVERHEAD,
        "the heap peaked {} MiB up, over the budget ({} MiB) + {} MiB",
        heap_grown >> 20,
        BUDGET >> 20,
        HEAP_OVERHEAD >> 20
    );
    let refused = conns
        .iter_mut()
        .map(got_message_error)
        .filter(|&r| r)
        .count();
    // Without a budget: 1000 × (128 KiB arrived, in a buffer grown to 256 KiB) ≈ 250 MiB.
    // With it: the heap above, plus the allocator's slack: glibc keeps up to 40 MiB of
    // exited threads' stacks cached, and its per-thread arenas. 19–38 MiB seen in the runs
    // above (18 and 26 beside the release build); 96 MiB once at a load of 12 when closed
    // connections' memory was not counted until dropped.
    const OVERHEAD: usize = 64 << 20;
    assert!(
        grown < BUDGET + OVERHEAD,
        "RSS grew by {} MiB, over the budget ({} MiB) + {} MiB",
        grown >> 20,
        BUDGET >> 20,
        OVERHEAD >> 20
    );
    // Each open connection holds ≥ 64 KiB charged: at most budget / 64 KiB stay.
    assert!(
        refused >= CONNECTIONS - BUDGET / (64 << 10),
        "only {refused} of {CONNECTIONS} connections got MessageError"
    );
    assert!(warned.load(Ordering::Relaxed) - before >= refused);
    // Memory goes back once the connections end: the rest are closed by the client.
    drop(conns);
    std::thread::sleep(Duration::from_millis(300));
    s.bench.ping().unwrap();
}

/// A pool of two threads: a charge waits for the memory of the connections it closed while
/// holding a pool thread, which the other thread drops; the budget holds as with a thread
/// per connection and a valid client is answered throughout.
#[test]
fn a_pool_of_two_threads_keeps_to_the_budget() {
    let _serial = serial();
    let _ = warnings();
    const BUDGET: usize = 1 << 20;
    const CONNECTIONS: usize = 150;
    let s = setup_with(BUDGET, 2);
    let body = vec![0x5au8; 128 << 10];
    let heap0 = heap::reset_peak();
    let mut conns = Vec::with_capacity(CONNECTIONS);
    for i in 0..CONNECTIONS {
        conns.push(partial_request(s.addr, &body));
        if i % 50 == 49 {
            s.bench.ping().unwrap();
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    s.bench.ping().unwrap();
    let heap_grown = heap::peak_above(heap0);
    let refused = conns
        .iter_mut()
        .map(|c| got_message_error_within(c, Duration::from_millis(50)))
        .filter(|&r| r)
        .count();
    eprintln!(
        "pool: heap peak +{} MiB, {refused} of {CONNECTIONS} refused",
        heap_grown >> 20
    );
    // Each open connection holds ≥ 64 KiB charged.
    assert!(refused >= CONNECTIONS - BUDGET / (64 << 10));
    // The budget, and each connection's uncharged chunk (64 KiB) while the pool holds it.
    assert!(
        heap_grown < BUDGET + CONNECTIONS * (80 << 10) + (4 << 20),
        "the heap peaked {} MiB up",
        heap_grown >> 20
    );
}

/// xorshift64*: a small seeded generator, so a failing stream can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One mutated message (or a few) for the stream: large sizes announced and partly sent,
/// fragments never finished, flipped bytes, truncations, and valid requests.
fn mutated(rng: &mut Rng, ping: &[u8]) -> Vec<u8> {
    let mut m = ping.to_vec();
    match rng.below(6) {
        // A large message announced, part of it sent.
        0 => {
            let size = (rng.below(16 << 20) + (64 << 10)) as u32;
            let sent = rng.below(u64::from(size).min(512 << 10)) as usize;
            m = request_header(size, false).to_vec();
            m.resize(12 + sent, 0xa5);
        }
        // A fragmented request whose fragments keep coming and never end.
        1 => {
            let mut first = ping.to_vec();
            first[6] |= 2;
            m = first;
            let id = &ping[12..16];
            for _ in 0..rng.below(24) + 1 {
                let len = rng.below(64 << 10) as usize + 4;
                let mut f = *b"GIOP\x01\x02\x00\x07\x00\x00\x00\x00";
                f[6] = ping[6] | 2;
                f[8..].copy_from_slice(&(len as u32).to_ne_bytes());
                m.extend_from_slice(&f);
                m.extend_from_slice(id);
                m.resize(m.len() + len - 4, 0x3c);
            }
        }
        // Flipped bytes.
        2 => {
            for _ in 0..rng.below(4) + 1 {
                let i = rng.below(m.len() as u64) as usize;
                m[i] ^= 1 << rng.below(8);
            }
        }
        // Truncated.
        3 => m.truncate(rng.below(m.len() as u64) as usize),
        // Random bytes after a valid header.
        4 => {
            m.truncate(12);
            let n = rng.below(4096) as usize;
            m.extend((0..n).map(|_| rng.next() as u8));
            let size = (m.len() - 12) as u32 + rng.below(2) as u32 * 1000;
            m[8..12].copy_from_slice(&size.to_ne_bytes());
        }
        // Valid.
        _ => {}
    }
    m
}

#[test]
fn a_seeded_mutation_stream_keeps_memory_bounded_and_a_valid_client_answered() {
    let _serial = serial();
    let _ = warnings();
    const BUDGET: usize = 4 << 20;
    const ROUNDS: u64 = 1500;
    const OPEN: usize = 64;
    let s = setup(BUDGET);
    let seed = 0x5eed_0019;
    let mut rng = Rng(seed);
    let rss0 = rss();
    let heap0 = heap::reset_peak();
    let mut open: Vec<TcpStream> = Vec::with_capacity(OPEN);
    let mut peak = 0;
    for round in 0..ROUNDS {
        // Mostly new connections, some messages on one already open.
        let reuse = !open.is_empty() && rng.below(3) == 0;
        let mut c = if reuse {
            open.swap_remove(rng.below(open.len() as u64) as usize)
        } else {
            TcpStream::connect(s.addr).unwrap()
        };
        let m = mutated(&mut rng, &s.ping);
        match c.write_all(&m) {
            // Kept open (the oldest closed) or closed at once.
            Ok(()) if rng.below(4) != 0 => {
                if open.len() == OPEN {
                    open.swap_remove(rng.below(OPEN as u64) as usize);
                }
                open.push(c);
            }
            Ok(()) => {}
            // The server closed it (MessageError, the budget).
            Err(e) => assert!(
                matches!(e.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset),
                "seed {seed:#x} round {round}: {e}"
            ),
        }
        if round % 50 == 49 {
            s.bench
                .ping()
                .unwrap_or_else(|e| panic!("seed {seed:#x} round {round}: {e}"));
            peak = peak.max(rss().saturating_sub(rss0));
        }
    }
    drop(open);
    std::thread::sleep(Duration::from_millis(300));
    s.bench.ping().unwrap();
    // The heap below, and the allocator's slack (glibc's cached thread stacks and arenas):
    // 9–16 MiB seen in 5 runs at loads of 7–12, 10 and 10 beside a `cargo build --release`.
    const OVERHEAD: usize = 32 << 20;
    let grown = peak.max(rss().saturating_sub(rss0));
    let heap_grown = heap::peak_above(heap0);
    eprintln!(
        "mutations: RSS +{} MiB, heap peak +{} MiB",
        grown >> 20,
        heap_grown >> 20
    );
    // The budget (closed connections' memory counted until dropped), and the uncharged
    // receive chunk (64 KiB) and state of the 64 connections open at most and of those
    // being closed: 8–12 MiB seen in the runs above (8 and 8 beside the release build);
    // 33 and 38 MiB under load when a closed connection's share left the budget before its
    // memory did (and the wire trace's hex dumps were on), 160–291 MiB when receive buffers
    // were reserved by the size announced.
    const HEAP_OVERHEAD: usize = 16 << 20;
    assert!(
        heap_grown < BUDGET + HEAP_OVERHEAD,
        "seed {seed:#x}: the heap peaked {} MiB up, over the budget ({} MiB) + {} MiB",
        heap_grown >> 20,
        BUDGET >> 20,
        HEAP_OVERHEAD >> 20
    );
    assert!(
        grown < BUDGET + OVERHEAD,
        "seed {seed:#x}: RSS grew by {} MiB, over the budget ({} MiB) + {} MiB",
        grown >> 20,
        BUDGET >> 20,
        OVERHEAD >> 20
    );
}

/// One connection opening 1,000 fragmented requests (distinct request ids) and sending
/// 132 KiB of fragments for each, never the last (just past a power of two of the first
/// part's size, so that a buffer grown by doubling holds nearly twice what it was sent): reassembly holds them until the budget is
/// spent and the connection gets MessageError. What the heap holds meanwhile is the
/// budget's count of what reassembly allocated (capacity, not the bytes in it): when it
/// counted length, buffers grown by doubling held up to twice the budget (RSS +66 MiB over
/// a 64 MiB budget).
#[test]
fn fragment_chains_on_one_connection_stay_within_the_budget_as_allocated() {
    let _serial = serial();
    let _ = warnings();
    const BUDGET: usize = 64 << 20;
    const CHAINS: u32 = 1000;
    const FRAGMENT: usize = 4 << 10;
    const CHAIN: usize = 132 << 10;
    let s = setup(BUDGET);
    let id_at = 12..16;
    let base_id = u32::from_ne_bytes(s.ping[id_at.clone()].try_into().unwrap());
    let heap0 = heap::reset_peak();
    let mut c = TcpStream::connect(s.addr).unwrap();
    let mut refused_at = None;
    'chains: for k in 0..CHAINS {
        let id = (base_id + 1 + k).to_ne_bytes();
        let mut first = s.ping.clone();
        first[6] |= 2;
        first[id_at.clone()].copy_from_slice(&id);
        let mut m = first;
        for _ in 0..CHAIN / FRAGMENT {
            let mut f = *b"GIOP\x01\x02\x00\x07\x00\x00\x00\x00";
            f[6] = s.ping[6] | 2;
            f[8..].copy_from_slice(&(FRAGMENT as u32 + 4).to_ne_bytes());
            m.extend_from_slice(&f);
            m.extend_from_slice(&id);
            m.resize(m.len() + FRAGMENT, 0x3c);
        }
        if let Err(e) = c.write_all(&m) {
            assert!(
                matches!(e.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset),
                "chain {k}: {e}"
            );
            refused_at = Some(k);
            break 'chains;
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    let heap_grown = heap::peak_above(heap0);
    eprintln!(
        "{CHAINS} fragment chains: heap peak +{} MiB (budget {} MiB), refused at chain {refused_at:?}",
        heap_grown >> 20,
        BUDGET >> 20
    );
    // Reassembly may hold 64 MiB; the connection's receive buffer and the message being
    // appended are the rest.
    const HEAP_OVERHEAD: usize = 4 << 20;
    assert!(
        heap_grown < BUDGET + HEAP_OVERHEAD,
        "the heap peaked {} MiB up, over the budget ({} MiB) + {} MiB",
        heap_grown >> 20,
        BUDGET >> 20,
        HEAP_OVERHEAD >> 20
    );
    assert!(
        refused_at.is_some() || got_message_error(&mut c),
        "132 MiB of fragments over a 64 MiB budget were not refused"
    );
    s.bench.ping().unwrap();
}
