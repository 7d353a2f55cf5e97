//! IIOP over TLS (`giop:ssl`): Corbina ↔ Corbina calls (twoway, oneway, large sequences,
//! both thread models), mutual authentication, the SSLIOP reference, and each refusal —
//! plain GIOP to a TLS port, garbage, a stalled handshake (timed out, other connections
//! unaffected), an untrusted, expired or misnamed certificate, a missing client
//! certificate under `peer,fail` — plus the connection's concurrency semantics.
//!
//! Certificates are made at test time (rcgen); no private key is committed.

mod common;

pub mod pki;

use std::io::{IoSlice, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::bench::{Bench, BenchSkeleton};
use common::StaticBench;
use corbina::config::SslVerifyMode;
use corbina::giop::Ior;
use corbina::transport::tls::{self, TlsEndpoint, TlsError, TlsPhase};
use corbina::transport::{Address, Connection, ConnectionOptions, Listener, TransportKind};
use corbina::{Orb, OrbConfig, SystemExceptionKind};
use pki::Pki;
use rustls::pki_types::pem::PemObject;

fn tls_server(config: OrbConfig) -> (Orb, String, Arc<StaticBench>) {
    let orb = Orb::with_config(config);
    let bench = Arc::new(StaticBench::default());
    let poa = orb.root_poa();
    let id = poa
        .activate_object(Arc::new(BenchSkeleton::new(bench.clone())))
        .unwrap();
    let obj = poa.id_to_reference(&id).unwrap();
    poa.the_poa_manager().activate().unwrap();
    let ior = orb.object_to_string(&obj).unwrap();
    (orb, ior, bench)
}

fn server_config(pki: &Pki) -> OrbConfig {
    OrbConfig::default()
        .ssl_endpoint("127.0.0.1", 0)
        .ssl_key_file(pki.server_key())
        .ssl_ca_file(pki.ca_file())
}

fn client_config(pki: &Pki) -> OrbConfig {
    OrbConfig::default().ssl_ca_file(pki.ca_file())
}

/// Twoway, oneway and 1 MB sequences; the calls went over TLS.
fn exchange(client: &Orb, ior: &str, bench: &StaticBench) {
    let b = Bench::narrow(&client.string_to_object(ior).unwrap()).unwrap();
    b.ping().unwrap();
    assert_eq!(b.echo("over TLS").unwrap(), "over TLS");
    b.start_timer().unwrap();
    let big: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
    b.send_octets(&big).unwrap();
    for _ in 0..20 {
        b.send_octets_oneway(&big[..64 << 10]).unwrap();
    }
    let doubles = vec![1.5f64; 100_000];
    b.send_doubles(&doubles).unwrap();
    assert_eq!(
        b.stop_timer().unwrap(),
        (1 << 20) + 20 * (64 << 10) + 800_000
    );
    assert_eq!(
        bench.bytes.load(std::sync::atomic::Ordering::Relaxed),
        (1 << 20) + 20 * (64 << 10) + 800_000
    );
    let connections = client.connections();
    assert!(!connections.is_empty());
    assert!(connections
        .iter()
        .all(|c| c.address.kind() == TransportKind::Ssl));
}

#[test]
fn calls_over_tls_with_a_thread_per_connection_and_the_reference_is_sslioop() {
    let pki = Pki::new("calls");
    let (_server, ior, bench) = tls_server(server_config(&pki));

    // omniORB's way: TLS only, so the profile's port is 0 and the TLS port is in
    // TAG_SSL_SEC_TRANS with omniORB's association options.
    let parsed: Ior = ior.parse().unwrap();
    let profile = parsed.iiop_profiles().unwrap().remove(0);
    assert_eq!(profile.port, 0);
    assert_eq!(profile.host, "127.0.0.1");
    let ssl = profile.ssl_sec_trans().unwrap().unwrap();
    assert_ne!(ssl.port, 0);
    assert_eq!((ssl.target_supports, ssl.target_requires), (0x66, 0x66));
    assert!(ssl.requires_tls());

    let client = Orb::with_config(client_config(&pki));
    exchange(&client, &ior, &bench);
}

#[test]
fn calls_over_tls_with_a_thread_pool() {
    let pki = Pki::new("pool");
    let (_server, ior, bench) = tls_server(server_config(&pki).thread_pool(2));
    let client = Orb::with_config(client_config(&pki));
    exchange(&client, &ior, &bench);
    // Several callers at once, each on its own connection, all served by the pool.
    let b = Bench::narrow(&client.string_to_object(&ior).unwrap()).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let b = b.clone();
            thread::spawn(move || {
                for j in 0..50 {
                    let s = format!("{i}-{j}");
                    assert_eq!(b.echo(&s).unwrap(), s);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn tls_and_tcp_endpoints_together_publish_both_and_clients_pick_tls() {
    let pki = Pki::new("both");
    let (_server, ior, bench) = tls_server(server_config(&pki).endpoint("127.0.0.1", 0));
    let profile = ior
        .parse::<Ior>()
        .unwrap()
        .iiop_profiles()
        .unwrap()
        .remove(0);
    assert_ne!(profile.port, 0);
    let ssl = profile.ssl_sec_trans().unwrap().unwrap();
    assert_ne!(ssl.port, profile.port);
    let client = Orb::with_config(client_config(&pki));
    exchange(&client, &ior, &bench);
}

#[test]
fn mutual_authentication_accepts_a_client_certificate_and_refuses_none() {
    let pki = Pki::new("mutual");
    let config = server_config(&pki).ssl_verify_mode(SslVerifyMode::PEER_FAIL);
    let (_server, ior, bench) = tls_server(config);

    let with_cert = Orb::with_config(client_config(&pki).ssl_key_file(pki.client_key()));
    exchange(&with_cert, &ior, &bench);

    // Without one the server refuses it (after the client's side of a TLS 1.3 handshake
    // is done, so the call is what fails), promptly.
    let without = Orb::with_config(client_config(&pki).connect_timeout(Duration::from_secs(5)));
    let b = Bench::narrow(&without.string_to_object(&ior).unwrap()).unwrap();
    let start = Instant::now();
    let e = b.ping().unwrap_err();
    assert!(
        matches!(
            e.kind,
            SystemExceptionKind::CommFailure | SystemExceptionKind::Transient
        ),
        "{e:?}"
    );
    assert!(start.elapsed() < Duration::from_secs(5));
    // The server is still fine.
    let again = Bench::narrow(&with_cert.string_to_object(&ior).unwrap()).unwrap();
    again.ping().unwrap();
}

#[test]
fn a_client_without_the_ca_refuses_the_server() {
    let pki = Pki::new("untrusted-ior");
    let other = Pki::new("other-ca");
    let (_server, ior, _) = tls_server(server_config(&pki));
    let client = Orb::with_config(client_config(&other));
    let b = Bench::narrow(&client.string_to_object(&ior).unwrap()).unwrap();
    let e = b.ping().unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::Transient, "{e:?}");
}

#[test]
fn a_plain_giop_client_to_a_tls_port_fails_and_others_are_unaffected() {
    let pki = Pki::new("plain");
    let (_server, ior, _) =
        tls_server(server_config(&pki).ssl_accept_timeout(Duration::from_secs(5)));
    // The same reference with the TLS port as its plain port and no SSLIOP component.
    let mut parsed: Ior = ior.parse().unwrap();
    let mut profile = parsed.iiop_profiles().unwrap().remove(0);
    let ssl = profile.ssl_sec_trans().unwrap().unwrap();
    profile.port = ssl.port;
    profile.components.retain(|c| c.tag != 20);
    parsed.profiles = vec![profile.to_tagged().unwrap()];
    let plain_ior = parsed.to_stringified().unwrap();

    let plain = Orb::with_config(OrbConfig::default().call_timeout(Duration::from_secs(5)));
    let b = Bench::narrow(&plain.string_to_object(&plain_ior).unwrap()).unwrap();
    let start = Instant::now();
    assert!(b.ping().is_err());
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );

    let client = Orb::with_config(client_config(&pki));
    Bench::narrow(&client.string_to_object(&ior).unwrap())
        .unwrap()
        .ping()
        .unwrap();
}

// ---- The transport itself: endpoint refusals and connection semantics ----

/// A TLS endpoint on 127.0.0.1 whose accepted connections (or refusals) come out of the
/// returned channel.
fn endpoint(
    pki: &Pki,
    mode: SslVerifyMode,
    accept_timeout: Duration,
) -> (
    u16,
    std::sync::mpsc::Receiver<std::io::Result<Arc<dyn Connection>>>,
) {
    let ssl = OrbConfig::default()
        .ssl_key_file(pki.server_key())
        .ssl_ca_file(pki.ca_file())
        .ssl_verify_mode(mode)
        .ssl;
    let config = tls::server_config(&ssl).unwrap();
    let ep = TlsEndpoint::bind(
        "127.0.0.1",
        0,
        ConnectionOptions::default(),
        config,
        accept_timeout,
    )
    .unwrap();
    let port = match ep.bound() {
        corbina::transport::BoundEndpoint::Ssl(a) => a.port(),
        other => panic!("{other:?}"),
    };
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || loop {
        if tx.send(ep.accept()).is_err() {
            return;
        }
    });
    (port, rx)
}

fn connect(port: u16, config: OrbConfig) -> std::io::Result<Arc<dyn Connection>> {
    let options = ConnectionOptions {
        tls_client: Some(tls::client_config(&config.ssl)),
        ..ConnectionOptions::default()
    };
    Address::Ssl {
        host: "127.0.0.1".into(),
        port,
    }
    .connect(Duration::from_secs(5), &options)
}

fn refusal(r: std::io::Result<Arc<dyn Connection>>) -> TlsError {
    match r {
        Ok(c) => panic!("accepted {c:?}"),
        Err(e) => TlsError::of(&e)
            .unwrap_or_else(|| panic!("not a TLS error: {e:?}"))
            .clone(),
    }
}

fn phase_and_cause(e: &TlsError) -> (TlsPhase, String) {
    match e {
        TlsError::Connection { phase, cause, .. } => (*phase, cause.clone()),
        other => panic!("{other:?}"),
    }
}

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn plain_giop_and_garbage_are_refused_by_the_endpoint_saying_why() {
    let pki = Pki::new("garbage");
    let (port, accepted) = endpoint(&pki, SslVerifyMode::PEER, Duration::from_secs(5));

    let mut plain = TcpStream::connect(("127.0.0.1", port)).unwrap();
    plain
        .write_all(b"GIOP\x01\x02\x01\x00\x00\x00\x00\x10aaaaaaaaaaaaaaaa")
        .unwrap();
    let e = refusal(accepted.recv_timeout(WAIT).unwrap());
    let (phase, cause) = phase_and_cause(&e);
    assert_eq!(phase, TlsPhase::Handshake);
    assert!(cause.contains("plain GIOP"), "{e}");
    assert!(e.to_string().contains("giop:ssl:127.0.0.1:"), "{e}");
    // The peer gets an alert and the end of the stream, not a hang.
    plain.set_read_timeout(Some(WAIT)).unwrap();
    let mut rest = Vec::new();
    let _ = plain.read_to_end(&mut rest);

    let mut garbage = TcpStream::connect(("127.0.0.1", port)).unwrap();
    garbage
        .write_all(&[0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5])
        .unwrap();
    let (phase, _) = phase_and_cause(&refusal(accepted.recv_timeout(WAIT).unwrap()));
    assert_eq!(phase, TlsPhase::Handshake);
}

#[test]
fn a_stalled_handshake_times_out_without_holding_up_other_connections() {
    let pki = Pki::new("stall");
    let timeout = Duration::from_millis(600);
    let (port, accepted) = endpoint(&pki, SslVerifyMode::PEER, timeout);
    // A truncated ClientHello, then nothing.
    let mut stalled = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stalled
        .write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
        .unwrap();
    let silent = TcpStream::connect(("127.0.0.1", port)).unwrap();

    // Meanwhile a good client gets in at once.
    let start = Instant::now();
    let good = connect(port, client_config(&pki)).unwrap();
    let server_side = accepted.recv_timeout(WAIT).unwrap().unwrap();
    assert!(start.elapsed() < timeout, "{:?}", start.elapsed());
    good.write_vectored(&[IoSlice::new(b"ping")]).unwrap();
    let mut buf = [0u8; 4];
    read_exact(&*server_side, &mut buf);
    assert_eq!(&buf, b"ping");

    for _ in 0..2 {
        let (phase, cause) = phase_and_cause(&refusal(accepted.recv_timeout(WAIT).unwrap()));
        assert_eq!(phase, TlsPhase::Handshake);
        assert!(cause.contains("timed out"), "{cause}");
    }
    assert!(start.elapsed() >= timeout);
    drop((stalled, silent));
}

#[test]
fn untrusted_expired_and_misnamed_certificates_are_refused_in_verification() {
    let pki = Pki::new("verify");
    let other = Pki::new("verify-other");
    let (port, accepted) = endpoint(&pki, SslVerifyMode::PEER, WAIT);
    // The client trusts another CA.
    let (phase, cause) = phase_and_cause(&refusal(connect(port, client_config(&other))));
    assert_eq!(phase, TlsPhase::Verify);
    assert!(
        cause.contains("UnknownIssuer") || cause.contains("unknown issuer"),
        "{cause}"
    );
    let (phase, _) = phase_and_cause(&refusal(accepted.recv_timeout(WAIT).unwrap()));
    assert_eq!(phase, TlsPhase::Verify);

    // An expired server certificate.
    let expired = Pki::new("expired");
    let ssl = OrbConfig::default()
        .ssl_key_file(expired.expired_server_key())
        .ssl;
    let ep = TlsEndpoint::bind(
        "127.0.0.1",
        0,
        ConnectionOptions::default(),
        tls::server_config(&ssl).unwrap(),
        WAIT,
    )
    .unwrap();
    let corbina::transport::BoundEndpoint::Ssl(addr) = ep.bound() else {
        panic!()
    };
    thread::spawn(move || loop {
        let _ = ep.accept();
    });
    let (phase, cause) = phase_and_cause(&refusal(connect(addr.port(), client_config(&expired))));
    assert_eq!(phase, TlsPhase::Verify);
    assert!(cause.to_lowercase().contains("expired"), "{cause}");

    // A certificate for another name: refused, unless host names are not checked.
    let misnamed = Pki::new("misnamed");
    let ssl = OrbConfig::default()
        .ssl_key_file(misnamed.misnamed_server_key())
        .ssl;
    let ep = TlsEndpoint::bind(
        "127.0.0.1",
        0,
        ConnectionOptions::default(),
        tls::server_config(&ssl).unwrap(),
        WAIT,
    )
    .unwrap();
    let corbina::transport::BoundEndpoint::Ssl(addr) = ep.bound() else {
        panic!()
    };
    thread::spawn(move || loop {
        let _ = ep.accept();
    });
    let (phase, cause) = phase_and_cause(&refusal(connect(addr.port(), client_config(&misnamed))));
    assert_eq!(phase, TlsPhase::Verify);
    assert!(
        cause.contains("NotValidForName") || cause.contains("not valid for"),
        "{cause}"
    );
    connect(
        addr.port(),
        client_config(&misnamed).ssl_check_host_name(false),
    )
    .unwrap();
}

#[test]
fn a_missing_client_certificate_under_peer_fail_is_refused_by_the_server() {
    let pki = Pki::new("nocert");
    let (port, accepted) = endpoint(&pki, SslVerifyMode::PEER_FAIL, WAIT);
    // TLS 1.3: the client's side finishes first; the refusal reaches it on its next read.
    if let Ok(c) = connect(port, client_config(&pki)) {
        c.set_read_timeout(Some(WAIT)).unwrap();
        let mut buf = [0u8; 16];
        match c.read(&mut buf) {
            Ok(0) => {}
            Ok(n) => panic!("read {n} bytes"),
            Err(e) => assert_eq!(
                TlsError::of(&e).map(|t| phase_and_cause(t).0),
                Some(TlsPhase::Verify),
                "{e}"
            ),
        }
    }
    let (phase, cause) = phase_and_cause(&refusal(accepted.recv_timeout(WAIT).unwrap()));
    assert_eq!(phase, TlsPhase::Verify);
    assert!(
        cause.contains("NoCertificatesPresented") || cause.contains("no certificates"),
        "{cause}"
    );

    // With one it is accepted, and the server sees the client's certificate.
    let c = connect(port, client_config(&pki).ssl_key_file(pki.client_key())).unwrap();
    let s = accepted.recv_timeout(WAIT).unwrap().unwrap();
    c.write_vectored(&[IoSlice::new(b"x")]).unwrap();
    let mut one = [0u8; 1];
    read_exact(&*s, &mut one);
}

fn read_exact(c: &dyn Connection, mut buf: &mut [u8]) {
    while !buf.is_empty() {
        let n = c.read(buf).unwrap();
        assert_ne!(n, 0, "end of stream");
        buf = &mut buf[n..];
    }
}

/// A connected pair: (client side, server side).
fn pair(pki: &Pki) -> (Arc<dyn Connection>, Arc<dyn Connection>) {
    let (port, accepted) = endpoint(pki, SslVerifyMode::PEER, WAIT);
    let c = connect(port, client_config(pki)).unwrap();
    let s = accepted.recv_timeout(WAIT).unwrap().unwrap();
    (c, s)
}

#[test]
fn one_thread_reads_while_another_writes_without_deadlock() {
    let pki = Pki::new("duplex");
    let (c, s) = pair(&pki);
    const TOTAL: usize = 8 << 20;
    // The server echoes everything back, reading and writing on two threads.
    let echo = {
        let s = s.clone();
        thread::spawn(move || {
            let mut buf = vec![0u8; 50_000];
            let mut seen = 0;
            while seen < TOTAL {
                let n = s.read(&mut buf).unwrap();
                assert_ne!(n, 0);
                let mut rest = &buf[..n];
                while !rest.is_empty() {
                    let w = s.write_vectored(&[IoSlice::new(rest)]).unwrap();
                    rest = &rest[w..];
                }
                seen += n;
            }
        })
    };
    // The client writes on one thread while another reads (the socket buffers fill up both
    // ways: a writer holding the TLS state while blocked would deadlock here).
    let reader = {
        let c = c.clone();
        thread::spawn(move || {
            let mut got = Vec::with_capacity(TOTAL);
            let mut buf = vec![0u8; 70_000];
            while got.len() < TOTAL {
                let n = c.read(&mut buf).unwrap();
                assert_ne!(n, 0);
                got.extend_from_slice(&buf[..n]);
            }
            got
        })
    };
    let data: Vec<u8> = (0..TOTAL).map(|i| (i * 7 % 253) as u8).collect();
    let mut rest = &data[..];
    while !rest.is_empty() {
        let chunk = rest.len().min(300_000);
        let n = c
            .write_vectored(&[
                IoSlice::new(&rest[..chunk / 2]),
                IoSlice::new(&rest[chunk / 2..chunk]),
            ])
            .unwrap();
        rest = &rest[n..];
    }
    let got = reader.join().unwrap();
    echo.join().unwrap();
    assert!(got == data);
}

#[test]
fn pending_input_counts_buffered_plaintext_and_nonblocking_reads_drain_it() {
    let pki = Pki::new("pending");
    let (c, s) = pair(&pki);
    assert!(!s.has_pending_input());
    // The server's TLS 1.3 session tickets reach the client unasked: records, but no
    // input (else an idle client connection would look closed by the server).
    thread::sleep(Duration::from_millis(50));
    assert!(!c.has_pending_input());
    let mut buf = [0u8; 8];
    assert_eq!(
        s.read_nonblocking(&mut buf).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock
    );
    c.write_vectored(&[IoSlice::new(b"0123456789abcdef")])
        .unwrap();
    let start = Instant::now();
    while !s.has_pending_input() {
        assert!(start.elapsed() < WAIT);
        thread::sleep(Duration::from_millis(1));
    }
    // Poll says readable; a short read leaves plaintext buffered, which still counts
    // (though the socket has nothing more).
    let mut fds = [rustix::event::PollFd::from_borrowed_fd(
        s.poll_fd(),
        rustix::event::PollFlags::IN,
    )];
    rustix::event::poll(&mut fds, None).unwrap();
    let mut four = [0u8; 4];
    assert_eq!(s.read_nonblocking(&mut four).unwrap(), 4);
    assert_eq!(&four, b"0123");
    assert!(s.has_pending_input());
    let mut got = Vec::new();
    loop {
        match s.read_nonblocking(&mut buf) {
            Ok(n) => {
                assert_ne!(n, 0);
                got.extend_from_slice(&buf[..n]);
            }
            Err(e) => {
                assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
                break;
            }
        }
    }
    assert_eq!(got, b"456789abcdef");
    assert!(!s.has_pending_input());
    // The peer's close counts as input too, and reads as the end of the stream.
    c.shutdown(Shutdown::Both).unwrap();
    let start = Instant::now();
    while !s.has_pending_input() {
        assert!(start.elapsed() < WAIT);
        thread::sleep(Duration::from_millis(1));
    }
    s.set_read_timeout(Some(WAIT)).unwrap();
    assert_eq!(s.read(&mut buf).unwrap(), 0);
}

#[test]
fn read_timeouts_hold_and_shutdown_wakes_a_blocked_reader() {
    let pki = Pki::new("timeouts");
    let (c, s) = pair(&pki);
    c.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut buf = [0u8; 8];
    let start = Instant::now();
    let e = c.read(&mut buf).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        "{e:?}"
    );
    assert!(start.elapsed() >= Duration::from_millis(100));
    // Still usable after a timeout.
    s.write_vectored(&[IoSlice::new(b"late")]).unwrap();
    c.set_read_timeout(Some(WAIT)).unwrap();
    let mut four = [0u8; 4];
    read_exact(&*c, &mut four);
    assert_eq!(&four, b"late");

    c.set_read_timeout(None).unwrap();
    let reader = {
        let c = c.clone();
        thread::spawn(move || {
            let mut buf = [0u8; 8];
            c.read(&mut buf)
        })
    };
    thread::sleep(Duration::from_millis(100));
    let start = Instant::now();
    c.shutdown(Shutdown::Both).unwrap();
    let r = reader.join().unwrap();
    assert!(matches!(r, Ok(0) | Err(_)), "{r:?}");
    assert!(start.elapsed() < Duration::from_secs(2));
    // The server sees the end of the stream.
    s.set_read_timeout(Some(WAIT)).unwrap();
    assert_eq!(s.read(&mut buf).unwrap(), 0);
}

#[test]
fn bad_configurations_say_which_file_and_why() {
    let pki = Pki::new("config");
    let dir = pki.dir();
    let encrypted = dir.join("encrypted.pem");
    std::fs::write(
        &encrypted,
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIBvTBXBgkqhkiG9w0BBQ0wSjApBgkqhkiG9w0BBQwwHAQI\n-----END ENCRYPTED PRIVATE KEY-----\n",
    )
    .unwrap();
    let e = tls::server_config(
        &OrbConfig::default()
            .ssl_key_file(&encrypted)
            .ssl_key_password("secret")
            .ssl,
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("encrypted private keys are not supported"),
        "{e}"
    );
    assert!(e.to_string().contains("encrypted.pem"), "{e}");

    // A key file without its certificate; a missing file; a server without a key file;
    // a client that must verify without a CA file.
    let key_only = dir.join("key-only.pem");
    let full = std::fs::read_to_string(pki.server_key()).unwrap();
    let key_end = full.find("-----END PRIVATE KEY-----").unwrap() + 26;
    std::fs::write(&key_only, &full[..key_end]).unwrap();
    let e = tls::server_config(&OrbConfig::default().ssl_key_file(&key_only).ssl).unwrap_err();
    assert!(e.to_string().contains("certificate chain"), "{e}");
    let e = tls::server_config(&OrbConfig::default().ssl_key_file(dir.join("nope.pem")).ssl)
        .unwrap_err();
    assert!(matches!(e, TlsError::File { .. }), "{e}");
    assert!(tls::server_config(&OrbConfig::default().ssl).is_err());
    let e = tls::client_config(&OrbConfig::default().ssl).unwrap_err();
    assert!(e.to_string().contains("-ORBsslCAFile"), "{e}");
    // A password given for a clear key is ignored (omniORB 4.2.5 even needs one).
    tls::server_config(
        &OrbConfig::default()
            .ssl_key_file(pki.server_key())
            .ssl_key_password("ignored")
            .ssl,
    )
    .unwrap();
    // -ORBsslCAPath: a directory of CA files (other files skipped) does for -ORBsslCAFile.
    let ca_dir = dir.join("ca.d");
    std::fs::create_dir_all(&ca_dir).unwrap();
    std::fs::copy(pki.ca_file(), ca_dir.join("1a2b3c4d.0")).unwrap();
    std::fs::write(ca_dir.join("README"), "not a certificate").unwrap();
    let (port, accepted) = endpoint(&pki, SslVerifyMode::PEER, WAIT);
    connect(port, OrbConfig::default().ssl_ca_path(&ca_dir)).unwrap();
    accepted.recv_timeout(WAIT).unwrap().unwrap();
    let empty = dir.join("empty.d");
    std::fs::create_dir_all(&empty).unwrap();
    let e = tls::client_config(&OrbConfig::default().ssl_ca_path(&empty).ssl).unwrap_err();
    assert!(e.to_string().contains("-ORBsslCAPath"), "{e}");
    // `none`: no CA file needed, nothing checked.
    tls::client_config(
        &OrbConfig::default()
            .ssl_verify_mode(SslVerifyMode::NONE)
            .ssl,
    )
    .unwrap();
}

#[test]
fn handshakes_past_the_limit_are_refused_at_once() {
    let pki = Pki::new("limit");
    let (port, accepted) = endpoint(&pki, SslVerifyMode::PEER, Duration::from_secs(3));
    // 256 silent clients hold every handshake slot; the next ones are refused at once.
    let silent: Vec<TcpStream> = (0..260)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    let start = Instant::now();
    let mut refused = 0;
    while refused < 4 {
        let (_, cause) = phase_and_cause(&refusal(accepted.recv_timeout(WAIT).unwrap()));
        if cause.contains("handshakes already in progress") {
            refused += 1;
        }
    }
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    drop(silent);
}

#[test]
fn certificates_are_reloaded_without_restarting_the_orbs() {
    let a = Pki::new("reload-a");
    let b = Pki::new("reload-b");
    let (server, ior, _) = tls_server(server_config(&a));
    let old_client = Orb::with_config(client_config(&a));
    let old = Bench::narrow(&old_client.string_to_object(&ior).unwrap()).unwrap();
    old.ping().unwrap();

    // A bad file changes nothing.
    let bad = OrbConfig::default()
        .ssl_key_file(b.dir().join("missing.pem"))
        .ssl;
    assert!(matches!(server.reload_ssl(bad), Err(TlsError::File { .. })));
    Bench::narrow(
        &Orb::with_config(client_config(&a))
            .string_to_object(&ior)
            .unwrap(),
    )
    .unwrap()
    .ping()
    .unwrap();

    // The server takes B's key and CA: new handshakes use them, the open connection goes on.
    server
        .reload_ssl(
            OrbConfig::default()
                .ssl_key_file(b.server_key())
                .ssl_ca_file(b.ca_file())
                .ssl,
        )
        .unwrap();
    old.ping().unwrap();
    let trusts_a = Orb::with_config(client_config(&a));
    let refused = Bench::narrow(&trusts_a.string_to_object(&ior).unwrap()).unwrap();
    assert_eq!(
        refused.ping().unwrap_err().kind,
        SystemExceptionKind::Transient
    );
    Bench::narrow(
        &Orb::with_config(client_config(&b))
            .string_to_object(&ior)
            .unwrap(),
    )
    .unwrap()
    .ping()
    .unwrap();
    // The client reloads too: its next connection trusts B.
    trusts_a.reload_ssl(client_config(&b).ssl).unwrap();
    refused.ping().unwrap();
}

/// Replies to any operation with what `corbina::server::peer_identity` says during the
/// upcall: the client certificate's length and whether it names `client.example`, or
/// "none".
struct WhoAmI;

impl corbina::Servant for WhoAmI {
    fn primary_interface(&self) -> &'static str {
        "IDL:WhoAmI:1.0"
    }
    fn is_a(&self, id: &str) -> bool {
        id == "IDL:WhoAmI:1.0"
    }
    fn dispatch(
        &self,
        req: &mut corbina::ServerRequest<'_, '_>,
    ) -> Result<(), corbina::SystemException> {
        let answer = match corbina::server::peer_identity() {
            Some(peer) => {
                let cert = peer.certificate();
                let named = cert.windows(14).any(|w| w == b"client.example");
                format!(
                    "{} bytes, chain {}, named {named}",
                    cert.len(),
                    peer.certificate_chain().len()
                )
            }
            None => "none".to_owned(),
        };
        req.reply(|w| w.write_string(&answer))
    }
}

#[test]
fn the_servant_learns_the_authenticated_client_during_the_upcall() {
    let pki = Pki::new("peer-identity");
    // `peer` without `fail`: a client certificate is verified if sent, not demanded.
    let orb = Orb::with_config(
        server_config(&pki)
            .endpoint("127.0.0.1", 0)
            .ssl_verify_mode(SslVerifyMode::PEER),
    );
    let poa = orb.root_poa();
    let id = poa.activate_object(Arc::new(WhoAmI)).unwrap();
    let obj = poa.id_to_reference(&id).unwrap();
    poa.the_poa_manager().activate().unwrap();
    let ior = orb.object_to_string(&obj).unwrap();
    let who = |client: &Orb| -> String {
        let o = client.string_to_object(&ior).unwrap();
        o.invoke("who", |_| Ok(()), |r| r.read_string(), corbina::no_user)
            .unwrap()
    };

    let with_cert = Orb::with_config(client_config(&pki).ssl_key_file(pki.client_key()));
    let got = who(&with_cert);
    assert!(got.ends_with("named true"), "{got}");
    assert!(!got.starts_with("0 bytes"), "{got}");

    let without = Orb::with_config(client_config(&pki));
    assert_eq!(who(&without), "none");
    // Outside an upcall there is none.
    assert!(corbina::server::peer_identity().is_none());
    with_cert.destroy();
    without.destroy();
    orb.destroy();
}

/// Runs a handshake between two rustls connections in memory; the suite they agreed on.
fn negotiate(
    mut client: rustls::ClientConnection,
    mut server: rustls::ServerConnection,
) -> rustls::CipherSuite {
    let mut wire = Vec::new();
    for _ in 0..10 {
        if !client.is_handshaking() && !server.is_handshaking() {
            break;
        }
        wire.clear();
        while client.wants_write() {
            client.write_tls(&mut wire).unwrap();
        }
        server.read_tls(&mut &wire[..]).unwrap();
        server.process_new_packets().unwrap();
        wire.clear();
        while server.wants_write() {
            server.write_tls(&mut wire).unwrap();
        }
        client.read_tls(&mut &wire[..]).unwrap();
        client.process_new_packets().unwrap();
    }
    assert!(!client.is_handshaking() && !server.is_handshaking());
    let suite = client.negotiated_cipher_suite().unwrap().suite();
    assert_eq!(
        Some(suite),
        server.negotiated_cipher_suite().map(|s| s.suite())
    );
    suite
}

/// Corbina prefers AES-128-GCM (the cheapest per short record of its suites), and its
/// server still agrees with a peer that offers only AES-256-GCM (OpenSSL's and JSSE's
/// first choice) or only TLS 1.2.
#[test]
fn cipher_suite_preference() {
    let pki = Pki::new("suites");
    let server = tls::server_config(&server_config(&pki).ssl).unwrap();
    let client = tls::client_config(&client_config(&pki).ssl).unwrap();
    let name = || rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let suite = negotiate(
        rustls::ClientConnection::new(client.clone(), name()).unwrap(),
        rustls::ServerConnection::new(server.clone()).unwrap(),
    );
    assert_eq!(suite, rustls::CipherSuite::TLS13_AES_128_GCM_SHA256);

    // A peer with only one suite, trusting the same CA.
    let mut roots = rustls::RootCertStore::empty();
    let ca = std::fs::read(pki.ca_file()).unwrap();
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(&ca) {
        roots.add(cert.unwrap()).unwrap();
    }
    let roots = Arc::new(roots);
    let only = |wanted: rustls::CipherSuite| {
        let mut p = rustls::crypto::ring::default_provider();
        p.cipher_suites.retain(|s| s.suite() == wanted);
        let p13 = p.cipher_suites.iter().all(|s| s.tls13().is_some());
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(p))
            .with_protocol_versions(&[if p13 {
                &rustls::version::TLS13
            } else {
                &rustls::version::TLS12
            }])
            .unwrap()
            .with_root_certificates(roots.clone())
            .with_no_client_auth();
        rustls::ClientConnection::new(Arc::new(config), name()).unwrap()
    };
    for wanted in [
        rustls::CipherSuite::TLS13_AES_256_GCM_SHA384,
        rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    ] {
        let suite = negotiate(
            only(wanted),
            rustls::ServerConnection::new(server.clone()).unwrap(),
        );
        assert_eq!(suite, wanted);
    }
}
