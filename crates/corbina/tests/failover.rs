//! A reference with several addresses (TAG_ALTERNATE_IIOP_ADDRESS components, or several
//! IIOP profiles with the same object key) survives the loss of one: a failed connect
//! (nothing sent, completion NO) moves the call to the next address, and the dead one is
//! passed over, by every reference through its rope, for `FAILOVER_RETRY`.

mod common;

use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::bench::{Bench, BenchSkeleton};
use common::{serve, StaticBench};
use corbina::cdr::ByteOrder;
use corbina::client::ConnectionInfo;
use corbina::giop::{IiopProfile, Ior, ObjectKey, TaggedComponent};
use corbina::transport::Address;
use corbina::{CompletionStatus, Orb, OrbConfig, SystemExceptionKind};

/// A loopback port nobody listens on (bound, then closed).
fn dead_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn bench_server() -> (Orb, String) {
    serve(Arc::new(BenchSkeleton::new(Arc::new(
        StaticBench::default(),
    ))))
}

fn profile_of(ior: &str) -> (Ior, IiopProfile) {
    let ior: Ior = ior.parse().unwrap();
    let p = ior.iiop_profiles().unwrap().remove(0);
    (ior, p)
}

fn tcp(port: u16) -> Address {
    Address::Tcp {
        host: "127.0.0.1".into(),
        port,
    }
}

fn rope_to(orb: &Orb, address: &Address) -> Option<ConnectionInfo> {
    orb.connections()
        .into_iter()
        .find(|c| c.address == *address)
}

#[test]
fn a_dead_primary_address_fails_over_to_the_alternate_and_is_remembered() {
    let (_server, live) = bench_server();
    let (mut ior, mut p) = profile_of(&live);
    let live_port = p.port;
    let dead = dead_port();
    p.port = dead;
    p.components.push(
        TaggedComponent::alternate_iiop_address("127.0.0.1", live_port, ByteOrder::NATIVE).unwrap(),
    );
    ior.profiles = vec![p.to_tagged().unwrap()];
    let s = ior.to_stringified().unwrap();

    let client = Orb::with_config(OrbConfig::default());
    let bench = Bench::narrow(&client.string_to_object(&s).unwrap()).unwrap();
    assert_eq!(
        bench.echo("via the alternate").unwrap(),
        "via the alternate"
    );
    assert!(rope_to(&client, &tcp(dead)).unwrap().stale);
    assert!(!rope_to(&client, &tcp(live_port)).unwrap().stale);
    // A second reference to the object goes straight to the live address.
    let again = Bench::narrow(&client.string_to_object(&s).unwrap()).unwrap();
    again.ping().unwrap();
    assert_eq!(rope_to(&client, &tcp(live_port)).unwrap().open_strands, 1);
}

#[test]
fn several_profiles_with_one_key_are_tried_in_order() {
    let (_server, live) = bench_server();
    let (mut ior, p) = profile_of(&live);
    let dead = dead_port();
    let mut first = p.clone();
    first.port = dead;
    ior.profiles = vec![first.to_tagged().unwrap(), p.to_tagged().unwrap()];
    let client = Orb::with_config(OrbConfig::default());
    let obj = client
        .string_to_object(&ior.to_stringified().unwrap())
        .unwrap();
    Bench::narrow(&obj).unwrap().ping().unwrap();
    assert!(rope_to(&client, &tcp(dead)).unwrap().stale);
}

#[test]
fn another_objects_profile_is_not_a_failover_target_and_all_dead_is_transient() {
    let (_server, live) = bench_server();
    let (mut ior, p) = profile_of(&live);
    let mut first = p.clone();
    first.port = dead_port();
    // The live profile names another object key: calls must not go there.
    let mut other = p.clone();
    other.object_key = ObjectKey::new(b"someone-else".to_vec());
    ior.profiles = vec![first.to_tagged().unwrap(), other.to_tagged().unwrap()];
    let client = Orb::with_config(OrbConfig::default());
    let obj = client
        .string_to_object(&ior.to_stringified().unwrap())
        .unwrap();
    let e = Bench::unchecked_narrow(&obj).ping().unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::Transient);
    assert!(rope_to(&client, &tcp(p.port)).is_none());

    // Every address dead: TRANSIENT, completion NO, at once (no hang, no loop).
    let mut all_dead = p.clone();
    all_dead.port = dead_port();
    all_dead.components.push(
        TaggedComponent::alternate_iiop_address("127.0.0.1", dead_port(), ByteOrder::NATIVE)
            .unwrap(),
    );
    ior.profiles = vec![all_dead.to_tagged().unwrap()];
    let obj = client
        .string_to_object(&ior.to_stringified().unwrap())
        .unwrap();
    let start = Instant::now();
    let e = Bench::unchecked_narrow(&obj).ping().unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::Transient);
    assert_eq!(e.completed, CompletionStatus::No);
    assert!(start.elapsed() < Duration::from_secs(5));
}
