//! A refused TLS connection leaves a log line saying why (through `tracing`), and the
//! server goes on serving. Its own test binary: it installs a process-wide subscriber.

mod common;

pub mod pki;

use std::io::Write;
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::bench::{Bench, BenchSkeleton};
use common::StaticBench;
use corbina::{Orb, OrbConfig};
use pki::Pki;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Keeps every event's target, level and message.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<String>>>);

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl Subscriber for Lines {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
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
        self.0
            .lock()
            .unwrap()
            .push(format!("{} {} {}", meta.level(), meta.target(), m.0));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn a_refused_tls_connection_is_logged_with_why() {
    let lines = Lines::default();
    tracing::subscriber::set_global_default(lines.clone()).unwrap();

    let pki = Pki::new("log");
    let orb = Orb::with_config(
        OrbConfig::default()
            .ssl_endpoint("127.0.0.1", 0)
            .ssl_key_file(pki.server_key())
            .ssl_ca_file(pki.ca_file()),
    );
    let poa = orb.root_poa();
    let id = poa
        .activate_object(Arc::new(BenchSkeleton::new(Arc::new(
            StaticBench::default(),
        ))))
        .unwrap();
    let obj = poa.id_to_reference(&id).unwrap();
    poa.the_poa_manager().activate().unwrap();
    let ior = orb.object_to_string(&obj).unwrap();
    let profile = obj.ior().iiop_profiles().unwrap().remove(0);
    let port = profile.ssl_sec_trans().unwrap().unwrap().port;

    // A plain GIOP client on the TLS port.
    let mut plain = TcpStream::connect(("127.0.0.1", port)).unwrap();
    plain
        .write_all(b"GIOP\x01\x02\x01\x00\x00\x00\x00\x10aaaaaaaaaaaaaaaa")
        .unwrap();
    let start = Instant::now();
    let line = loop {
        let found = lines
            .0
            .lock()
            .unwrap()
            .iter()
            .find(|l| l.contains("refused a connection"))
            .cloned();
        if let Some(l) = found {
            break l;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "no log line");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(line.starts_with("WARN corbina::server"), "{line}");
    assert!(line.contains("plain GIOP"), "{line}");
    assert!(line.contains(&format!("127.0.0.1:{port}")), "{line}");

    // The server still serves a TLS client.
    let client = Orb::with_config(OrbConfig::default().ssl_ca_file(pki.ca_file()));
    Bench::narrow(&client.string_to_object(&ior).unwrap())
        .unwrap()
        .ping()
        .unwrap();
    client.destroy();
    orb.destroy();
}
