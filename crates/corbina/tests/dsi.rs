//! The Dynamic Skeleton Interface over IIOP on 127.0.0.1: a DSI Bench server called by the
//! generated static client and by omniORB's `omni_client --mode check`, and a DSI server
//! with `inout`/`out` arguments and user exceptions called statically and through the DII.
//!
//! Without omniORB installed the omniORB test prints why and passes, unless
//! `REQUIRE_OMNIORB_PEERS` is set.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use common::bench::{self, bench::FailError, Bench, BenchError, BinStruct};
use common::extra::extra::{self as ex, node};
use common::{client, serve};
use corbina::dii::{NVList, ARG_IN, ARG_INOUT, ARG_OUT};
use corbina::dsi::{DsiSkeleton, DynServerRequest, DynamicImplementation};
use corbina::dynany::DynAnyFactory;
use corbina::{Any, DiiError, SystemException, SystemExceptionKind, TypeCode};
use corbina_testpeers::{bench_peers, fresh_dir, omni_client_check_giop_1_0_and_1_2};

/// Bench served through the DSI: every argument is read by TypeCode into an `Any`.
#[derive(Default)]
struct DsiBench {
    bytes: AtomicU64,
}

impl DynamicImplementation for DsiBench {
    fn primary_interface(&self) -> &'static str {
        "IDL:Bench:1.0"
    }

    fn invoke(&self, req: &mut DynServerRequest<'_, '_, '_>) -> Result<(), SystemException> {
        let op = req.operation();
        let payload = match op.trim_end_matches("_oneway") {
            "send_octets" => Some((bench::octet_seq_type_code(), 1)),
            "send_shorts" => Some((bench::short_seq_type_code(), 2)),
            "send_longs" => Some((bench::long_seq_type_code(), 4)),
            "send_doubles" => Some((bench::double_seq_type_code(), 8)),
            "send_chars" => Some((bench::char_seq_type_code(), 1)),
            "send_structs" => Some((bench::struct_seq_type_code(), 24)),
            _ => None,
        };
        if let Some((tc, size)) = payload {
            let mut args = NVList::new();
            args.add_item("s", tc, ARG_IN);
            let args = req.arguments(args)?;
            let v = args.item(0).and_then(|a| a.value()).ok_or_else(internal)?;
            // The element count is the sequence's first word.
            let n = v.value_reader().read_ulong()?;
            self.bytes.fetch_add(u64::from(n) * size, Ordering::Relaxed);
            return Ok(());
        }
        match op {
            "ping" | "ping_oneway" => {
                req.arguments(NVList::new())?;
            }
            "start_timer" => {
                req.arguments(NVList::new())?;
                self.bytes.store(0, Ordering::Relaxed);
            }
            "stop_timer" => {
                req.arguments(NVList::new())?;
                req.set_result(Any::insert(&self.bytes.load(Ordering::Relaxed))?)?;
            }
            "echo" => {
                let mut args = NVList::new();
                args.add_item("s", TypeCode::create_string_tc(0), ARG_IN);
                let s = req
                    .arguments(args)?
                    .item(0)
                    .and_then(|a| a.value())
                    .cloned();
                req.set_result(s.ok_or_else(internal)?)?;
            }
            "fail" => {
                let mut args = NVList::new();
                args.add_item("code", TypeCode::LONG, ARG_IN);
                let code = req
                    .arguments(args)?
                    .item(0)
                    .and_then(|a| a.value()?.to_long());
                match code.ok_or_else(internal)? {
                    0 => {}
                    code => req.set_exception(Any::insert(&BenchError {
                        code,
                        reason: "requested".into(),
                    })?)?,
                }
            }
            _ => return Err(corbina::servant::bad_operation()),
        }
        Ok(())
    }
}

fn internal() -> SystemException {
    SystemException::new(SystemExceptionKind::Internal, 0)
}

#[test]
fn static_client_calls_dsi_bench_server() {
    let imp = Arc::new(DsiSkeleton::new(DsiBench::default()));
    let (server, ior) = serve(imp);
    let (_orb, obj) = client(&ior);
    let b = Bench::narrow(&obj).unwrap();
    b.ping().unwrap();
    b.ping_oneway().unwrap();
    assert_eq!(b.echo("hello, été").unwrap(), "hello, été");
    assert_eq!(b.echo(&"x".repeat(100_000)).unwrap().len(), 100_000);
    b.fail(0).unwrap();
    match b.fail(7) {
        Err(FailError::BenchError(e)) => assert_eq!((e.code, e.reason.as_str()), (7, "requested")),
        other => panic!("{other:?}"),
    }
    b.start_timer().unwrap();
    b.send_octets(&[1, 2, 3]).unwrap();
    b.send_doubles(&[1.0; 10]).unwrap();
    let s: Vec<BinStruct> = (0..4)
        .map(|i| BinStruct {
            s: i,
            c: b'a',
            l: 1,
            o: 2,
            d: 0.5,
        })
        .collect();
    b.send_structs(&s).unwrap();
    assert_eq!(b.stop_timer().unwrap(), 3 + 80 + 96);
    assert!(obj.is_a("IDL:Bench:1.0").unwrap());
    assert!(!obj.non_existent().unwrap());
    // An operation the DSI servant does not know.
    let r: Result<(), SystemException> =
        obj.invoke("nope", |_| Ok(()), |_| Ok(()), corbina::no_user);
    assert_eq!(r.unwrap_err().kind, SystemExceptionKind::BadOperation);
    // Arguments that do not match the servant's NVList are MARSHAL.
    let r: Result<String, SystemException> = obj.invoke(
        "echo",
        |w| {
            w.write_long(5);
            Ok(())
        },
        |r| r.read_string(),
        corbina::no_user,
    );
    assert_eq!(r.unwrap_err().kind, SystemExceptionKind::Marshal);
    server.shutdown(true);
}

/// `Extra::Node::describe(in Names names, inout long depth, out Link link) raises
/// (NotHere, Broken)` through the DSI, built with DynAny and generated `AnyInsert`s.
struct DsiNode;

impl DynamicImplementation for DsiNode {
    fn primary_interface(&self) -> &'static str {
        ex::Node::REPOSITORY_ID
    }

    fn invoke(&self, req: &mut DynServerRequest<'_, '_, '_>) -> Result<(), SystemException> {
        if req.operation() != "describe" {
            return Err(corbina::servant::bad_operation());
        }
        let mut args = NVList::new();
        args.add_item("names", node::names_type_code(), ARG_IN);
        args.add_item("depth", TypeCode::LONG, ARG_INOUT);
        args.add_item("link", ex::Link::type_code(), ARG_OUT);
        let args = req.arguments(args)?;
        let bad = |_| SystemException::new(SystemExceptionKind::BadParam, 0);
        let names_any = args.item(0).and_then(|a| a.value()).ok_or_else(internal)?;
        let names: Vec<String> = DynAnyFactory::create_dyn_any(names_any)
            .map_err(bad)?
            .get_elements()
            .map_err(bad)?
            .iter()
            .map(|a| a.to_string_value().unwrap_or_default())
            .collect();
        let depth = args
            .item(1)
            .and_then(|a| a.value()?.to_long())
            .ok_or_else(internal)?;
        if names.is_empty() {
            return req.set_exception(Any::insert(&node::NotHere { r#where: depth })?);
        }
        let depth = depth + 1;
        let link = ex::Link {
            name: names[0].clone(),
            next: vec![],
        };
        args.item_mut(1)
            .ok_or_else(internal)?
            .set_value(Any::from_long(depth))?;
        args.item_mut(2)
            .ok_or_else(internal)?
            .set_value(Any::insert(&link)?)?;
        req.set_result(Any::insert(&node::Info { names, depth })?)
    }
}

#[test]
fn dsi_inout_out_and_user_exceptions_static_and_dii() {
    let (server, ior) = serve(Arc::new(DsiSkeleton::new(DsiNode)));
    let (_orb, obj) = client(&ior);

    // The generated static client.
    let n = ex::Node::unchecked_narrow(&obj);
    let mut depth = 4;
    let (info, link) = n.describe(&["a".into(), "b".into()], &mut depth).unwrap();
    assert_eq!(depth, 5);
    assert_eq!(info.names, ["a", "b"]);
    assert_eq!(info.depth, 5);
    assert_eq!(link.name, "a");
    match n.describe(&[], &mut depth) {
        Err(node::DescribeError::NotHere(e)) => assert_eq!(e.r#where, 5),
        other => panic!("{other:?}"),
    }
    assert!(obj.is_a(ex::Node::REPOSITORY_ID).unwrap());

    // The DII, reused, with inout and out values coming back.
    let mut req = obj.request("describe");
    let names_tc = node::names_type_code();
    req.add_in_arg(
        "names",
        Any::insert_as(names_tc.clone(), &vec!["x".to_string()]).unwrap(),
    );
    req.add_inout_arg("depth", Any::from_long(10));
    req.add_out_arg("link", ex::Link::type_code());
    req.set_return_type(node::Info::type_code());
    req.exceptions_mut().add(node::NotHere::type_code());
    req.exceptions_mut().add(ex::Broken::type_code());
    for d in [10, 20] {
        req.set_argument(1, Any::from_long(d)).unwrap();
        req.invoke().unwrap();
        assert_eq!(req.argument(1).unwrap().to_long(), Some(d + 1));
        let link: ex::Link = req.argument(2).unwrap().extract().unwrap();
        assert_eq!(link.name, "x");
        let info: node::Info = req.return_value().extract().unwrap();
        assert_eq!(info.depth, d + 1);
    }
    req.set_argument(0, Any::insert_as(names_tc, &Vec::<String>::new()).unwrap())
        .unwrap();
    req.set_argument(1, Any::from_long(3)).unwrap();
    match req.invoke() {
        Err(DiiError::User(e)) => {
            assert_eq!(e.extract::<node::NotHere>().unwrap().r#where, 3);
        }
        other => panic!("{other:?}"),
    }
    server.shutdown(true);
}

// ---- omniORB's client against the DSI Bench server

#[test]
fn omniorb_client_checks_dsi_bench_server() {
    let Some(bin) = bench_peers() else { return };
    let (server, ior) = serve(Arc::new(DsiSkeleton::new(DsiBench::default())));
    let file = fresh_dir("dsi").join("dsi.ior");
    std::fs::write(&file, ior + "\n").unwrap();
    omni_client_check_giop_1_0_and_1_2(bin, &file);
    server.shutdown(true);
}
