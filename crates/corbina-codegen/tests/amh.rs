//! Generated AMH servants (`Builder::amh`, `corbina-idl --amh`; golden `tests/golden/amh.rs`
//! from `tests/idl/ami.idl` with AMI too, `BLESS=1` rewrites it): 100 requests from pollers
//! on one connection parked in typed response handlers and answered from another thread, results with inout and out values, user and
//! system exceptions, a handler dropped without an answer, and one answered with another
//! operation's results.

use std::path::Path;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use corbina::{SystemException, SystemExceptionKind};

const IDL: &str = "tests/idl/ami.idl";
const GOLDEN: &str = "tests/golden/amh.rs";

fn generate(options: &corbina_codegen::Options) -> String {
    let mut fe = corbina_idl::Frontend::new();
    corbina_codegen::compile_file_with(&mut fe, Path::new(IDL), options)
        .unwrap_or_else(|e| panic!("{e}"))
        .source
}

fn amh_all() -> corbina_codegen::Options {
    let mut o = corbina_codegen::Options::default();
    o.amh = true;
    o.ami = true;
    o
}

#[test]
fn golden_file_matches() {
    let src = generate(&amh_all());
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(GOLDEN, &src).unwrap();
        return;
    }
    let old = std::fs::read_to_string(GOLDEN).unwrap_or_default();
    assert!(old == src, "{GOLDEN} out of date (rerun with BLESS=1)");
    // Off by default, and per interface: only the listed one gets an AMH servant.
    assert!(!generate(&Default::default()).contains("AmhCalcServant"));
    let mut one = corbina_codegen::Options::default();
    one.amh_interfaces = vec!["Ami::Base".into()];
    let src = generate(&one);
    assert!(src.contains("pub trait AmhBaseServant") && !src.contains("AmhCalcServant"));
}

#[test]
fn command_line_flag_gives_the_same_output() {
    let dir = std::env::temp_dir().join(format!("corbina-amh-{}", std::process::id()));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_corbina-idl"))
        .args(["--amh", "--ami", "--no-format", "-o"])
        .arg(&dir)
        .arg(IDL)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_to_string(dir.join("ami.rs")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(written, generate(&amh_all()));
}

#[allow(dead_code)]
mod gen {
    include!("golden/amh.rs");
}
use gen::ami::{self as idl, calc};

/// An `add` request waiting for its answer.
type Parked = (idl::AmhCalcResponseHandler, i32, i32);

struct AmhCalc {
    parked: Mutex<Sender<Parked>>,
    total: Mutex<i32>,
}

impl idl::AmhCalcServant for AmhCalc {
    fn base_op(&self, rh: idl::AmhCalcResponseHandler, x: i32) {
        rh.base_op(x * 10).unwrap();
    }
    fn add(&self, rh: idl::AmhCalcResponseHandler, a: i32, b: i32) {
        self.parked.lock().unwrap().send((rh, a, b)).unwrap();
    }
    fn concat(&self, rh: idl::AmhCalcResponseHandler, a: &str, b: &str) {
        let (a, b) = (a.to_string(), b.to_string());
        std::thread::spawn(move || {
            if a.is_empty() {
                let e = idl::Refused {
                    why: "empty".into(),
                    code: 7,
                };
                rh.concat_excep(e.into()).unwrap();
            } else {
                let joined = format!("{a}{b}");
                rh.concat(&joined, &b.to_uppercase(), joined.len() as i32)
                    .unwrap();
            }
        });
    }
    fn fail(&self, rh: idl::AmhCalcResponseHandler, kind: i32) {
        match kind {
            0 => rh
                .fail_excep(SystemException::new(SystemExceptionKind::NoPermission, 3).into())
                .unwrap(),
            // Another operation's answer: the client gets BAD_OPERATION, not a misread reply.
            1 => {
                let e = rh.get_label("wrong").unwrap_err();
                assert_eq!(e.kind, SystemExceptionKind::BadOperation);
            }
            // No answer at all.
            _ => drop(rh),
        }
    }
    fn note(&self, _s: &str) {}
    fn get_total(&self, rh: idl::AmhCalcResponseHandler) {
        rh.get_total(*self.total.lock().unwrap()).unwrap();
    }
    fn set_total(&self, rh: idl::AmhCalcResponseHandler, value: i32) {
        *self.total.lock().unwrap() = value;
        rh.set_total().unwrap();
    }
    fn get_label(&self, rh: idl::AmhCalcResponseHandler) {
        rh.get_label("amh").unwrap();
    }
}

fn serve(orb: &corbina::Orb) -> (idl::Calc, Receiver<Parked>) {
    let (tx, rx) = channel();
    let poa = orb.root_poa();
    let id = poa
        .activate_object(Arc::new(idl::AmhCalcSkeleton::new(AmhCalc {
            parked: Mutex::new(tx),
            total: Mutex::new(0),
        })))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    let obj = poa.id_to_reference(&id).unwrap().without_collocation();
    (idl::Calc::unchecked_narrow(&obj), rx)
}

#[test]
fn parked_requests_are_answered_from_another_thread() {
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let (calc, parked) = serve(&orb);
    assert!(calc.as_object().is_a("IDL:Ami/Base:1.0").unwrap());
    // 100 calls in flight on one connection, parked at once: their upcalls all returned
    // before any answer.
    let pollers: Vec<_> = (0..100).map(|k| calc.sendp_add(k, 1)).collect();
    let held: Vec<Parked> = (0..100)
        .map(|_| parked.recv_timeout(Duration::from_secs(10)).unwrap())
        .collect();
    assert!(!pollers[0].is_ready(0));
    std::thread::spawn(move || {
        for (rh, a, b) in held {
            rh.add(a + b).unwrap();
        }
    });
    for (k, p) in pollers.iter().enumerate() {
        assert_eq!(p.add(10_000).unwrap(), k as i32 + 1);
    }

    // Results with inout and out values, from a spawned thread.
    let mut b = "cd".to_string();
    assert_eq!(calc.concat("ab", &mut b).unwrap(), ("abcd".to_string(), 4));
    assert_eq!(b, "CD");
    match calc.concat("", &mut b) {
        Err(calc::ConcatError::Refused(r)) => assert_eq!((r.why.as_str(), r.code), ("empty", 7)),
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(calc.base_op(3).unwrap(), 30);
    calc.set_total(9).unwrap();
    assert_eq!(calc.get_total().unwrap(), 9);
    assert_eq!(calc.get_label().unwrap(), "amh");
    calc.note("oneway").unwrap();
    orb.destroy();
}

#[test]
fn exceptions_a_dropped_handler_and_a_wrong_answer() {
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let (calc, _parked) = serve(&orb);
    let system = |r: Result<(), calc::FailError>| match r {
        Err(calc::FailError::System(e)) => e,
        other => panic!("unexpected {other:?}"),
    };
    let e = system(calc.fail(0));
    assert_eq!((e.kind, e.minor), (SystemExceptionKind::NoPermission, 3));
    let e = system(calc.fail(1));
    assert_eq!(
        (e.kind, e.minor),
        (
            SystemExceptionKind::BadOperation,
            corbina::ami::BAD_OPERATION_WRONG_RESPONSE
        )
    );
    let e = system(calc.fail(2));
    assert_eq!(
        (e.kind, e.minor),
        (
            SystemExceptionKind::Internal,
            corbina::error::minor::INTERNAL_REPLY_HANDLE_DROPPED
        )
    );
    // The connection still serves.
    assert_eq!(calc.base_op(1).unwrap(), 10);
    orb.destroy();
}
