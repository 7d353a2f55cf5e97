//! Memory a peer can make us hold by announcing sizes: a GIOP header's `message_size`
//! (and a Fragment's) is the peer's word, so the receive path allocates for the bytes that
//! arrive, never for the size announced. A counting global allocator (`heap`) sees what
//! is allocated (reserved capacity included, which RSS does not show), while
//!
//! - a server has 200 connections each announcing the largest message it accepts (some as
//!   the last of a chain of fragments), sending a few bytes and stalling;
//! - a client waits for a reply whose header (or last fragment) announces the largest one.
//!
//! Its own test binary: the allocator is process-wide.

mod common;
mod heap;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::time::Duration;

use common::bench::{Bench, BenchSkeleton};
use common::StaticBench;
use corbina::cdr::CodeSets;
use corbina::config::Endpoint;
use corbina::giop::connection::{GiopConnection, RequestStart, Role, Settings};
use corbina::giop::{TargetAddress, Version};
use corbina::{Orb, OrbConfig};

#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

/// The tests measure the process's heap: one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// The largest message an ORB with the default configuration accepts: what a peer announces.
fn max_message_size() -> u32 {
    OrbConfig::default().max_message_size
}

/// A GIOP 1.2 header (native byte order) of `msg_type` announcing `size` bytes of body.
fn header(msg_type: u8, size: u32, more_fragments: bool) -> [u8; 12] {
    let mut h = *b"GIOP\x01\x02\x00\x00\x00\x00\x00\x00";
    h[6] = u8::from(cfg!(target_endian = "little")) | if more_fragments { 2 } else { 0 };
    h[7] = msg_type;
    h[8..].copy_from_slice(&size.to_ne_bytes());
    h
}

const REQUEST: u8 = 0;
const REPLY: u8 = 1;
const FRAGMENT: u8 = 7;

/// A server's bench object: the server, a client ORB with its proxy, the server's TCP
/// address and a GIOP 1.2 `ping` request to the object.
struct Server {
    _server: Orb,
    _client: Orb,
    bench: Bench,
    addr: SocketAddr,
    ping: Vec<u8>,
}

fn server() -> Server {
    let server = Orb::with_config(OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..OrbConfig::default()
    });
    let poa = server.root_poa();
    let id = poa
        .activate_object(Arc::new(BenchSkeleton::new(Arc::new(
            StaticBench::default(),
        ))))
        .unwrap();
    let obj = poa.id_to_reference(&id).unwrap();
    poa.the_poa_manager().activate().unwrap();
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
    let ior = server.object_to_string(&obj).unwrap();
    let bench = Bench::narrow(&client.string_to_object(&ior).unwrap()).unwrap();
    bench.ping().unwrap();
    Server {
        _server: server,
        _client: client,
        bench,
        addr,
        ping,
    }
}

/// The start of a request announcing the largest message: its header and 16 bytes.
fn announced_request() -> Vec<u8> {
    let mut m = header(REQUEST, max_message_size(), false).to_vec();
    m.resize(12 + 16, 0x5a);
    m
}

/// A fragmented `ping`: its first part and two 1 KiB fragments, then a Fragment
/// announcing the largest message, its request id and 8 bytes.
fn announced_fragment_chain(ping: &[u8]) -> Vec<u8> {
    let mut m = ping.to_vec();
    m[6] |= 2;
    let id = &ping[12..16];
    for _ in 0..2 {
        m.extend_from_slice(&header(FRAGMENT, 1024, true));
        m.extend_from_slice(id);
        m.resize(m.len() + 1020, 0x3c);
    }
    m.extend_from_slice(&header(FRAGMENT, max_message_size(), true));
    m.extend_from_slice(id);
    m.resize(m.len() + 8, 0x3c);
    m
}

#[test]
fn a_server_holds_what_arrived_not_what_200_connections_announce() {
    let _serial = serial();
    const CONNECTIONS: usize = 200;
    let s = server();
    std::thread::sleep(Duration::from_millis(100));
    let base = heap::reset_peak();
    let request = announced_request();
    let chain = announced_fragment_chain(&s.ping);
    let mut conns = Vec::with_capacity(CONNECTIONS);
    for i in 0..CONNECTIONS {
        let mut c = TcpStream::connect(s.addr).unwrap();
        c.write_all(if i % 2 == 0 { &request } else { &chain })
            .unwrap();
        conns.push(c);
    }
    // Every connection's thread has read what was sent and waits for the rest.
    std::thread::sleep(Duration::from_millis(500));
    s.bench.ping().unwrap();
    let grown = heap::peak_above(base);
    // Each connection: a receive chunk (64 KiB; 65 KiB measured with its thread's and
    // state's allocations), at most two. Sized by the announced 256 MiB it was 50 GiB.
    const TOTAL: usize = 32 << 20;
    const PER_CONNECTION: usize = 128 << 10;
    assert!(
        grown < TOTAL && grown / CONNECTIONS < PER_CONNECTION,
        "the heap grew by {} KiB ({} KiB a connection) for {CONNECTIONS} connections \
         announcing {} MiB each",
        grown >> 10,
        (grown / CONNECTIONS) >> 10,
        max_message_size() >> 20
    );
    eprintln!(
        "server: heap peak +{} KiB for {CONNECTIONS} connections ({} KiB each)",
        grown >> 10,
        (grown / CONNECTIONS) >> 10
    );
    // The server still answers once they are gone.
    drop(conns);
    s.bench.ping().unwrap();
}

/// A peer that answers the first request on each connection with `reply(request)` and
/// then stalls until the test ends; its corbaloc URL.
fn stalling_server(reply: fn(&[u8]) -> Vec<u8>) -> (String, mpsc::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        let Ok((mut c, _)) = listener.accept() else {
            return;
        };
        let mut h = [0u8; 12];
        while c.read_exact(&mut h).is_ok() {
            let little = h[6] & 1 == 1;
            let size = [h[8], h[9], h[10], h[11]];
            let size = if little {
                u32::from_le_bytes(size)
            } else {
                u32::from_be_bytes(size)
            };
            let mut body = vec![0u8; size.min(1 << 16) as usize];
            if size as usize > body.len() || c.read_exact(&mut body).is_err() {
                return;
            }
            if h[7] == REQUEST {
                let mut request = h.to_vec();
                request.extend_from_slice(&body);
                if c.write_all(&reply(&request)).is_err() {
                    return;
                }
            }
        }
        // Held open (stalled) until the test is done with it.
        let _ = stopped.recv();
    });
    (format!("corbaloc:iiop:1.2@127.0.0.1:{port}/stall"), stop)
}

/// A GIOP 1.2 Reply to `request` (NO_EXCEPTION, no contexts) in its byte order, its
/// header announcing `size` and the first 16 bytes of the body sent.
fn reply_start(request: &[u8], msg_type: u8, size: u32, more_fragments: bool) -> Vec<u8> {
    let little = request[6] & 1 == 1;
    let mut m = b"GIOP\x01\x02\x00\x00".to_vec();
    m[6] = u8::from(little) | if more_fragments { 2 } else { 0 };
    m[7] = msg_type;
    m.extend_from_slice(&if little {
        size.to_le_bytes()
    } else {
        size.to_be_bytes()
    });
    // The request id, then status 0 and 0 contexts (zero in either byte order), padding.
    m.extend_from_slice(&request[12..16]);
    m.resize(12 + 16, 0);
    m
}

fn announced_reply(request: &[u8]) -> Vec<u8> {
    reply_start(request, REPLY, max_message_size(), false)
}

fn announced_reply_fragment(request: &[u8]) -> Vec<u8> {
    let mut m = reply_start(request, REPLY, 16, true);
    let little = request[6] & 1 == 1;
    let size = max_message_size();
    let mut f = b"GIOP\x01\x02\x00\x07".to_vec();
    f[6] = u8::from(little) | 2;
    f.extend_from_slice(&if little {
        size.to_le_bytes()
    } else {
        size.to_be_bytes()
    });
    f.extend_from_slice(&request[12..16]);
    f.resize(f.len() + 8, 0);
    m.extend_from_slice(&f);
    m
}

/// A call whose reply announces the largest message and stalls: it times out, and the
/// client's heap rose by what arrived (a receive chunk), not by the size announced.
fn a_stalled_reply_costs_the_client_a_chunk(reply: fn(&[u8]) -> Vec<u8>) {
    let _serial = serial();
    let (url, stop) = stalling_server(reply);
    let client = Orb::with_config(OrbConfig {
        call_timeout: Some(Duration::from_millis(500)),
        ..OrbConfig::default()
    });
    let obj = client.string_to_object(&url).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let base = heap::reset_peak();
    let r = obj.non_existent();
    let grown = heap::peak_above(base);
    assert!(r.is_err(), "a reply that never ends answered: {r:?}");
    // A receive chunk (64 KiB) and the call's own allocations: 65 KiB measured, 256 MiB
    // when the buffer was reserved by the announced size.
    const BOUND: usize = 512 << 10;
    assert!(
        grown < BOUND,
        "the client's heap grew by {} KiB waiting for a reply announcing {} MiB",
        grown >> 10,
        max_message_size() >> 20
    );
    eprintln!("client: heap peak +{} KiB", grown >> 10);
    drop(stop);
}

#[test]
fn a_client_holds_what_arrived_of_a_reply_announcing_the_largest_size() {
    a_stalled_reply_costs_the_client_a_chunk(announced_reply);
}

#[test]
fn a_client_holds_what_arrived_of_a_reply_fragment_announcing_the_largest_size() {
    a_stalled_reply_costs_the_client_a_chunk(announced_reply_fragment);
}
