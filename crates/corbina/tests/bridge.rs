//! Dynamic CORBA against omniORB and the DSI→DII bridge example end to end:
//! - Corbina's DII (reused requests) calling every bench.idl operation on `omni_server`;
//! - the bridge (`examples/bridge`, included here) in front of `omni_server`, checked by
//!   omniORB's `omni_client --mode check`;
//! - the bridge in front of a Corbina static server, called through the generated stub,
//!   with a 1 MB `sequence<BinStruct>` forwarded without being interpreted element by
//!   element.
//!
//! (omniORB's client against Corbina's DSI Bench server is in `tests/dsi.rs`.) Without
//! omniORB installed the omniORB tests print why and pass, unless `REQUIRE_OMNIORB_PEERS`
//! is set.

mod common;

#[path = "../examples/bridge/bench_signatures.rs"]
mod bench_signatures;
#[path = "../examples/bridge/forward.rs"]
mod forward;

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bench_signatures::{BenchTypes, BENCH_ID};
use common::bench::{bench::FailError, Bench, BenchError, BenchSkeleton, BinStruct};
use common::{client, serve, StaticBench};
use corbina::config::Endpoint;
use corbina::dii::{ExceptionList, NVList, NamedValue, ARG_IN};
use corbina::{
    Any, DiiError, DsiSkeleton, ObjectRef, Orb, OrbConfig, SystemExceptionKind, TypeCode,
};
use corbina_testpeers::{bench_peers, fresh_dir, omni_client_check_giop_1_0_and_1_2, omni_server};
use forward::{Bridge, BridgeStats};

// ---- the bridge, in process

/// The bridge example's servant, forwarding to `target`, served on loopback by its own
/// ORB; returns the ORB, the bridge's IOR and its counters.
fn start_bridge(target: &str) -> (Orb, String, Arc<BridgeStats>) {
    let orb = Orb::with_config(OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..OrbConfig::default()
    });
    let target = orb.string_to_object(target).unwrap();
    let bridge = Bridge::new(BENCH_ID, target, BenchTypes::new().unwrap().signatures());
    let stats = bridge.stats();
    let poa = orb.root_poa();
    let id = poa
        .activate_object(Arc::new(DsiSkeleton::new(bridge)))
        .unwrap();
    let ior = orb
        .object_to_string(&poa.id_to_reference(&id).unwrap())
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    (orb, ior, stats)
}

fn write_ior(name: &str, ior: &str) -> PathBuf {
    let file = fresh_dir(name).join("bridge.ior");
    std::fs::write(&file, format!("{ior}\n")).unwrap();
    file
}

// ---- DII helpers

fn stop_timer(obj: &ObjectRef) -> u64 {
    let mut req = obj.request("stop_timer");
    req.set_return_type(TypeCode::ULONGLONG);
    req.invoke().unwrap();
    req.return_value().extract::<u64>().unwrap()
}

/// Waits until the server has counted `want` bytes (oneways may still be in flight).
fn wait_for_count(obj: &ObjectRef, want: u64) {
    let start = Instant::now();
    loop {
        let got = stop_timer(obj);
        if got == want || start.elapsed() > Duration::from_secs(5) {
            assert_eq!(got, want);
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn structs(n: usize) -> Vec<BinStruct> {
    (0..n)
        .map(|i| BinStruct {
            s: i as i16,
            c: b'a' + (i % 26) as u8,
            l: i as i32,
            o: i as u8,
            d: i as f64 * 0.5,
        })
        .collect()
}

/// A value of `n` elements for the send operation of `stem`, as an `Any` of `tc`.
fn payload(stem: &str, tc: &TypeCode, n: usize) -> Any {
    let tc = tc.clone();
    match stem {
        "octets" => Any::insert_as(tc, &(0..n).map(|i| i as u8).collect::<Vec<_>>()),
        "shorts" => Any::insert_as(tc, &(0..n).map(|i| i as i16).collect::<Vec<_>>()),
        "longs" => Any::insert_as(tc, &(0..n).map(|i| i as i32).collect::<Vec<_>>()),
        "doubles" => Any::insert_as(tc, &(0..n).map(|i| i as f64).collect::<Vec<_>>()),
        "chars" => Any::insert_as(
            tc,
            &(0..n).map(|i| b'a' + (i % 26) as u8).collect::<Vec<_>>(),
        ),
        "structs" => Any::insert_as(tc, &structs(n)),
        _ => unreachable!("{stem}"),
    }
    .unwrap()
}

// ---- (a) the DII against omniORB

#[test]
fn dii_calls_every_operation_on_omniorb_server() {
    let Some(bin) = bench_peers() else { return };
    let (_peer, ior) = omni_server(bin, "dii-to-omni");
    let (_orb, obj) = client(&ior);
    let types = BenchTypes::new().unwrap();

    let mut ping = obj.request("ping");
    for _ in 0..3 {
        ping.invoke().unwrap();
    }
    obj.request("ping_oneway").send_oneway().unwrap();

    // echo, reused with new values, one of 100 kB.
    let mut echo = obj.request("echo");
    echo.add_in_arg("s", Any::from_string("").unwrap());
    echo.set_return_type(TypeCode::create_string_tc(0));
    for s in ["hello, été".to_owned(), "x".repeat(100_000), String::new()] {
        echo.set_argument(0, Any::from_string(&s).unwrap()).unwrap();
        echo.invoke().unwrap();
        assert_eq!(echo.return_value().to_string_value(), Some(s));
    }

    // fail: with BenchError's TypeCode the exception comes back as its Any.
    let mut args = NVList::new();
    args.add_value("code", Any::from_long(0), ARG_IN);
    let mut exceptions = ExceptionList::new();
    exceptions.add(&types.bench_error);
    let mut fail = obj.create_request(
        None,
        "fail",
        args,
        NamedValue::result(TypeCode::VOID),
        exceptions,
    );
    fail.invoke().unwrap();
    fail.set_argument(0, Any::from_long(7)).unwrap();
    match fail.invoke() {
        Err(DiiError::User(any)) => {
            assert!(any.type_code().equal(&types.bench_error));
            let e: BenchError = any.extract().unwrap();
            assert_eq!((e.code, e.reason.as_str()), (7, "requested"));
        }
        other => panic!("expected BenchError, got {other:?}"),
    }
    fail.set_argument(0, Any::from_long(0)).unwrap();
    fail.invoke().unwrap();
    // Without it, UNKNOWN.
    let mut fail = obj.request("fail");
    fail.add_in_arg("code", Any::from_long(7));
    match fail.invoke() {
        Err(DiiError::System(e)) => assert_eq!(e.kind, SystemExceptionKind::Unknown),
        other => panic!("expected UNKNOWN, got {other:?}"),
    }

    // send_*: one twoway and one oneway request per type, each sent twice with new values.
    let mut start = obj.request("start_timer");
    start.invoke().unwrap();
    let mut want = 0;
    for (stem, tc, size) in &types.sequences {
        let mut twoway = obj.request(&format!("send_{stem}"));
        twoway.add_in_arg("s", payload(stem, tc, 0));
        let mut oneway = obj.request(&format!("send_{stem}_oneway"));
        oneway.add_in_arg("s", payload(stem, tc, 0));
        for n in [1000, 37] {
            twoway.set_argument(0, payload(stem, tc, n)).unwrap();
            twoway.invoke().unwrap();
            oneway.set_argument(0, payload(stem, tc, n + 1)).unwrap();
            oneway.send_oneway().unwrap();
            want += (2 * n as u64 + 1) * size;
        }
    }
    wait_for_count(&obj, want);
    start.invoke().unwrap();
    assert_eq!(stop_timer(&obj), 0);
}

// ---- (c) the bridge in front of omniORB

#[test]
fn omniorb_client_checks_bridge_to_omniorb_server() {
    let Some(bin) = bench_peers() else { return };
    let (_peer, target) = omni_server(bin, "bridge-to-omni");
    let (orb, ior, stats) = start_bridge(&target);
    omni_client_check_giop_1_0_and_1_2(bin, &write_ior("bridge-omni", &ior));
    // Every operation went through (omni_client's `_is_a`/`_non_existent` are answered
    // by the skeleton); one DII request per operation, reused by both runs.
    assert!(stats.forwarded.load(Ordering::Relaxed) >= 2 * 19);
    assert!(stats.built.load(Ordering::Relaxed) <= 19);
    orb.shutdown(true);
}

// ---- (c) the bridge in front of a Corbina static server

#[test]
fn bridge_forwards_bench_to_corbina_static_server() {
    let state = Arc::new(StaticBench::default());
    let (server, target) = serve(Arc::new(BenchSkeleton::new(state.clone())));
    let (bridge_orb, ior, stats) = start_bridge(&target);
    let (_orb, obj) = client(&ior);
    let b = Bench::narrow(&obj).unwrap();

    b.ping().unwrap();
    b.ping_oneway().unwrap();
    assert_eq!(b.echo("hello, été").unwrap(), "hello, été");
    let long = "y".repeat(100_000);
    assert_eq!(b.echo(&long).unwrap(), long);
    b.fail(0).unwrap();
    match b.fail(7) {
        Err(FailError::BenchError(e)) => assert_eq!((e.code, e.reason.as_str()), (7, "requested")),
        other => panic!("{other:?}"),
    }

    // Oneways and twoways in order on one connection: the count is exact at once.
    b.start_timer().unwrap();
    let n = 1000;
    let s = structs(n);
    let octets: Vec<u8> = (0..n).map(|i| i as u8).collect();
    b.send_octets(&octets).unwrap();
    b.send_octets_oneway(&octets).unwrap();
    b.send_shorts(&vec![1; n]).unwrap();
    b.send_shorts_oneway(&vec![2; n]).unwrap();
    b.send_longs(&vec![3; n]).unwrap();
    b.send_longs_oneway(&vec![4; n]).unwrap();
    b.send_doubles(&vec![0.5; n]).unwrap();
    b.send_doubles_oneway(&vec![1.5; n]).unwrap();
    b.send_chars(&vec![b'c'; n]).unwrap();
    b.send_chars_oneway(&vec![b'd'; n]).unwrap();
    b.send_structs(&s).unwrap();
    b.send_structs_oneway(&s).unwrap();
    assert_eq!(
        b.stop_timer().unwrap(),
        2 * n as u64 * (1 + 2 + 4 + 8 + 1 + 24)
    );

    // A 1 MB sequence<BinStruct> goes through as an opaque Any: the walker moves the
    // elements as one block in and one block out, interpreting a few values per call, not
    // one per element.
    let big = structs((1 << 20) / 24);
    b.start_timer().unwrap();
    let before = stats.interpreted.load(Ordering::Relaxed);
    for _ in 0..3 {
        b.send_structs(&big).unwrap();
    }
    let interpreted = stats.interpreted.load(Ordering::Relaxed) - before;
    assert!(
        interpreted <= 3 * 16,
        "{interpreted} values interpreted forwarding 3 × {} structs",
        big.len()
    );
    assert_eq!(b.stop_timer().unwrap(), 3 * big.len() as u64 * 24);
    assert_eq!(
        state.bytes.load(Ordering::Relaxed),
        3 * big.len() as u64 * 24
    );

    // The skeleton answers CORBA::Object operations; unknown operations are refused.
    assert!(obj.is_a("IDL:Bench:1.0").unwrap());
    assert!(!obj.non_existent().unwrap());
    let r: Result<(), corbina::SystemException> =
        obj.invoke("nope", |_| Ok(()), |_| Ok(()), corbina::no_user);
    assert_eq!(r.unwrap_err().kind, SystemExceptionKind::BadOperation);

    // Requests were reused: at most one built per operation (one client connection).
    assert!(stats.built.load(Ordering::Relaxed) <= 19);

    // And omniORB's check through the bridge to the Corbina server, when omniORB is here.
    if let Some(bin) = bench_peers() {
        omni_client_check_giop_1_0_and_1_2(bin, &write_ior("bridge-corbina", &ior));
    }
    bridge_orb.shutdown(true);
    server.shutdown(true);
}
