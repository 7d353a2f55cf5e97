//! The Dynamic Invocation Interface against a real Corbina server over IIOP on 127.0.0.1
//! serving bench.idl with the generated (static) skeleton: reused requests, oneways,
//! deferred calls, the ORB's multiple deferred requests, and user exceptions.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::bench::{self, BenchError, BenchSkeleton, BinStruct};
use common::{client, serve, StaticBench};
use corbina::dii::{ExceptionList, NVList, NamedValue, OrbDii, ARG_IN};
use corbina::{Any, DiiError, ObjectRef, SystemExceptionKind, TypeCode};

fn bench_server() -> (corbina::Orb, String, Arc<StaticBench>) {
    let state = Arc::new(StaticBench::default());
    let (orb, ior) = serve(Arc::new(BenchSkeleton::new(state.clone())));
    (orb, ior, state)
}

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

#[test]
fn one_request_is_reused_with_new_values() {
    let (server, ior, state) = bench_server();
    let (_orb, obj) = client(&ior);
    obj.request("start_timer").invoke().unwrap();

    // send_octets(in OctetSeq): the plan is built once, the value changes per call.
    let octets = bench::octet_seq_type_code();
    let mut req = obj.request("send_octets");
    req.add_in_arg(
        "s",
        Any::insert_as(octets.clone(), &Vec::<u8>::new()).unwrap(),
    );
    let mut total = 0;
    for n in [1usize, 1000, 0, 70_000, 3] {
        let data: Vec<u8> = (0..n).map(|i| i as u8).collect();
        req.set_argument(0, Any::insert_as(octets.clone(), &data).unwrap())
            .unwrap();
        req.invoke().unwrap();
        total += n as u64;
    }
    assert_eq!(
        state.bytes.load(std::sync::atomic::Ordering::Relaxed),
        total
    );
    assert_eq!(stop_timer(&obj), total);

    // A value of another type is refused, and the request still works.
    let e = req.set_argument(0, Any::from_long(1)).unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::BadParam);
    req.invoke().unwrap();
    assert_eq!(stop_timer(&obj), total + 3);

    // send_structs: a sequence of fixed-size structs travels as blocks; after the first
    // call, re-sending interprets no element one by one (the layout is the plan).
    obj.request("start_timer").invoke().unwrap();
    let structs = bench::struct_seq_type_code();
    let seq = |k: i32| -> Vec<BinStruct> {
        (0..500)
            .map(|i| BinStruct {
                s: i as i16,
                c: b'q',
                l: i * k,
                o: i as u8,
                d: f64::from(i) * 0.5,
            })
            .collect()
    };
    let mut req = obj.request("send_structs");
    req.add_in_arg("s", Any::insert_as(structs.clone(), &seq(1)).unwrap());
    req.invoke().unwrap();
    let before = corbina::typecode::interpreted_elements();
    for k in 2..6 {
        req.set_argument(0, Any::insert_as(structs.clone(), &seq(k)).unwrap())
            .unwrap();
        req.invoke().unwrap();
    }
    // A few per call (alias, sequence, the first element to reach alignment, when the
    // value is checked on insertion and copied out), not one per element (500).
    let interpreted = corbina::typecode::interpreted_elements() - before;
    assert!(interpreted <= 4 * 12, "{interpreted} values interpreted");
    assert_eq!(stop_timer(&obj), 5 * 500 * 24);

    // echo: the result changes with the argument.
    let mut req = obj.request("echo");
    req.add_in_arg("s", Any::from_string("").unwrap());
    req.set_return_type(TypeCode::create_string_tc(0));
    for s in ["a", "hello, été", ""] {
        req.set_argument(0, Any::from_string(s).unwrap()).unwrap();
        req.invoke().unwrap();
        assert_eq!(req.return_value().to_string_value().as_deref(), Some(s));
    }
    server.shutdown(true);
}

#[test]
fn oneway_deferred_and_multiple_deferred() {
    let (server, ior, _state) = bench_server();
    let (orb, obj) = client(&ior);
    obj.request("start_timer").invoke().unwrap();

    // Oneway, reused.
    let longs = bench::long_seq_type_code();
    let mut req = obj.request("send_longs_oneway");
    req.add_in_arg("s", Any::insert_as(longs.clone(), &vec![1i32; 10]).unwrap());
    req.send_oneway().unwrap();
    req.set_argument(0, Any::insert_as(longs, &vec![2i32; 15]).unwrap())
        .unwrap();
    req.send_oneway().unwrap();
    wait_for_count(&obj, 25 * 4);

    // Deferred: poll, then get_response.
    let mut req = obj.request("echo");
    req.add_in_arg("s", Any::from_string("later").unwrap());
    req.set_return_type(TypeCode::create_string_tc(0));
    assert!(req.poll_response().is_err(), "nothing outstanding yet");
    req.send_deferred().unwrap();
    assert_eq!(
        req.send_deferred().unwrap_err().kind,
        SystemExceptionKind::BadInvOrder
    );
    let start = Instant::now();
    while !req.poll_response().unwrap() {
        assert!(start.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(1));
    }
    req.get_response().unwrap();
    assert_eq!(
        req.return_value().to_string_value().as_deref(),
        Some("later")
    );
    // The same request deferred again with a new value.
    req.set_argument(0, Any::from_string("again").unwrap())
        .unwrap();
    req.send_deferred().unwrap();
    req.get_response().unwrap();
    assert_eq!(
        req.return_value().to_string_value().as_deref(),
        Some("again")
    );

    // Several deferred through the ORB, collected as they complete.
    let reqs: Vec<_> = (0..6)
        .map(|i| {
            let mut r = obj.request("echo");
            r.add_in_arg("s", Any::from_string(&format!("m{i}")).unwrap());
            r.set_return_type(TypeCode::create_string_tc(0));
            r
        })
        .collect();
    orb.send_multiple_requests_deferred(reqs).unwrap();
    let mut got = Vec::new();
    for _ in 0..6 {
        let r = orb.get_next_response().unwrap();
        assert!(r.env().is_none());
        let arg = r.argument(0).unwrap().to_string_value().unwrap();
        let ret = r.return_value().to_string_value().unwrap();
        assert_eq!(arg, ret);
        got.push(ret);
    }
    got.sort();
    assert_eq!(got, ["m0", "m1", "m2", "m3", "m4", "m5"]);
    assert!(!orb.poll_next_response());
    assert_eq!(
        orb.get_next_response().unwrap_err().kind,
        SystemExceptionKind::BadInvOrder
    );
    server.shutdown(true);
}

#[test]
fn user_exceptions_are_decoded_by_type_code() {
    let (server, ior, _state) = bench_server();
    let (_orb, obj) = client(&ior);

    // create_request with an exception list.
    let mut args = NVList::new();
    args.add_value("code", Any::from_long(0), ARG_IN);
    let mut exceptions = ExceptionList::new();
    exceptions.add(BenchError::type_code());
    let mut req = obj.create_request(
        None,
        "fail",
        args,
        NamedValue::result(TypeCode::VOID),
        exceptions,
    );
    req.invoke().unwrap();
    req.set_argument(0, Any::from_long(7)).unwrap();
    match req.invoke() {
        Err(DiiError::User(any)) => {
            assert!(any.type_code().equal(&BenchError::type_code()));
            let e: BenchError = any.extract().unwrap();
            assert_eq!((e.code, e.reason.as_str()), (7, "requested"));
            // And taken apart member by member.
            let d = corbina::dynany::DynAnyFactory::create_dyn_any(&any).unwrap();
            let members = d.get_members().unwrap();
            assert_eq!(members[0].id, "code");
            assert_eq!(members[0].value.to_long(), Some(7));
        }
        other => panic!("expected BenchError, got {other:?}"),
    }
    assert!(matches!(req.env(), Some(DiiError::User(_))));
    // Back to normal: env is cleared.
    req.set_argument(0, Any::from_long(0)).unwrap();
    req.invoke().unwrap();
    assert!(req.env().is_none());

    // Without the exception in the list it is UNKNOWN.
    let mut req = obj.request("fail");
    req.add_in_arg("code", Any::from_long(3));
    match req.invoke() {
        Err(DiiError::System(e)) => assert_eq!(e.kind, SystemExceptionKind::Unknown),
        other => panic!("expected UNKNOWN, got {other:?}"),
    }
    // An unknown operation is BAD_OPERATION from the server.
    match obj.request("no_such_op").invoke() {
        Err(DiiError::System(e)) => assert_eq!(e.kind, SystemExceptionKind::BadOperation),
        other => panic!("expected BAD_OPERATION, got {other:?}"),
    }
    server.shutdown(true);
}
