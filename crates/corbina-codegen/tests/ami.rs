//! CORBA AMI callbacks (`Builder::ami`, `corbina-idl --ami`): a golden file (`BLESS=1`
//! rewrites it), the same output from the command, and the generated code run: `sendc_`
//! calls against a Corbina server, replies delivered to local reply handlers (on the
//! client's POA and on a separate POA) and to a handler reached as a remote object.

use std::path::Path;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use corbina::ami::ExceptionHolder;
use corbina::{SystemException, SystemExceptionKind};

const IDL: &str = "tests/idl/ami.idl";
const GOLDEN: &str = "tests/golden/ami.rs";

fn generate(options: &corbina_codegen::Options) -> String {
    let mut fe = corbina_idl::Frontend::new();
    corbina_codegen::compile_file_with(&mut fe, Path::new(IDL), options)
        .unwrap_or_else(|e| panic!("{e}"))
        .source
}

fn ami_all() -> corbina_codegen::Options {
    let mut o = corbina_codegen::Options::default();
    o.ami = true;
    o
}

#[test]
fn golden_file_matches() {
    let src = generate(&ami_all());
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(GOLDEN, &src).unwrap();
        return;
    }
    let old = std::fs::read_to_string(GOLDEN).unwrap_or_default();
    assert!(old == src, "{GOLDEN} out of date (rerun with BLESS=1)");
    // Off by default, and per interface: only the listed one gets a handler.
    assert!(!generate(&Default::default()).contains("AmiCalcHandler"));
    let mut one = corbina_codegen::Options::default();
    one.ami_interfaces = vec!["Ami::Base".into()];
    let src = generate(&one);
    assert!(src.contains("pub struct AmiBaseHandler") && !src.contains("AmiCalcHandler"));
}

#[test]
fn command_line_flag_gives_the_same_output() {
    let dir = std::env::temp_dir().join(format!("corbina-ami-{}", std::process::id()));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_corbina-idl"))
        .args(["--ami", "--no-format", "-o"])
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
    assert_eq!(written, generate(&ami_all()));
}

#[allow(dead_code)]
mod gen {
    include!("golden/ami.rs");
}
use gen::ami::{self as idl, calc};

struct Calc {
    total: Mutex<i32>,
}

impl idl::BaseServant for Calc {
    fn base_op(&self, x: i32) -> Result<i32, SystemException> {
        Ok(x * 10)
    }
}

impl idl::CalcServant for Calc {
    fn add(&self, a: i32, b: i32) -> Result<i32, SystemException> {
        Ok(a + b)
    }
    fn concat(&self, a: &str, b: &mut String) -> Result<(String, i32), calc::ConcatError> {
        if a.is_empty() {
            return Err(idl::Refused {
                why: "empty".into(),
                code: 7,
            }
            .into());
        }
        let joined = format!("{a}{b}");
        *b = b.to_uppercase();
        let len = joined.len() as i32;
        Ok((joined, len))
    }
    fn fail(&self, kind: i32) -> Result<(), calc::FailError> {
        match kind {
            0 => Err(idl::Refused {
                why: "no".into(),
                code: 1,
            }
            .into()),
            _ => Err(SystemException::new(SystemExceptionKind::NoPermission, 3).into()),
        }
    }
    fn note(&self, _s: &str) -> Result<(), SystemException> {
        Ok(())
    }
    fn get_total(&self) -> Result<i32, SystemException> {
        Ok(*self.total.lock().unwrap())
    }
    fn set_total(&self, value: i32) -> Result<(), SystemException> {
        *self.total.lock().unwrap() = value;
        Ok(())
    }
    fn get_label(&self) -> Result<String, SystemException> {
        Ok("calc".into())
    }
}

/// What a reply handler received, one message per upcall.
#[derive(Debug, PartialEq)]
enum Got {
    BaseOp(i32),
    Add(i32),
    Concat(String, String, i32),
    ConcatRefused(String, i32),
    FailRefused(i32),
    FailSystem(SystemExceptionKind, u32),
    GetTotal(i32),
    SetTotal,
    GetLabel(String),
    Excep(String),
}

struct Handler(Mutex<Sender<Got>>);

impl Handler {
    fn send(&self, g: Got) -> Result<(), SystemException> {
        self.0.lock().unwrap().send(g).unwrap();
        Ok(())
    }
    fn excep(&self, op: &str, h: &ExceptionHolder) -> Result<(), SystemException> {
        let e: SystemException = h.raise_exception();
        self.send(Got::Excep(format!("{op}: {e}")))
    }
}

impl idl::AmiCalcHandlerServant for Handler {
    fn base_op(&self, ami_return_val: i32) -> Result<(), SystemException> {
        self.send(Got::BaseOp(ami_return_val))
    }
    fn base_op_excep(&self, h: &ExceptionHolder) -> Result<(), SystemException> {
        self.excep("base_op", h)
    }
    fn add(&self, ami_return_val: i32) -> Result<(), SystemException> {
        self.send(Got::Add(ami_return_val))
    }
    fn add_excep(&self, h: &ExceptionHolder) -> Result<(), SystemException> {
        self.excep("add", h)
    }
    fn concat(&self, ami_return_val: &str, b: &str, len: i32) -> Result<(), SystemException> {
        self.send(Got::Concat(ami_return_val.into(), b.into(), len))
    }
    fn concat_excep(&self, h: &ExceptionHolder) -> Result<(), SystemException> {
        match h.raise_exception::<calc::ConcatError>() {
            calc::ConcatError::Refused(r) => self.send(Got::ConcatRefused(r.why, r.code)),
            calc::ConcatError::System(e) => self.send(Got::Excep(format!("concat: {e}"))),
        }
    }
    fn fail(&self) -> Result<(), SystemException> {
        self.send(Got::Excep("fail replied".into()))
    }
    fn fail_excep(&self, h: &ExceptionHolder) -> Result<(), SystemException> {
        match h.raise_exception::<calc::FailError>() {
            calc::FailError::Refused(r) => self.send(Got::FailRefused(r.code)),
            calc::FailError::System(e) => self.send(Got::FailSystem(e.kind, e.minor)),
        }
    }
    fn get_total(&self, ami_return_val: i32) -> Result<(), SystemException> {
        self.send(Got::GetTotal(ami_return_val))
    }
    fn get_total_excep(&self, h: &ExceptionHolder) -> Result<(), SystemException> {
        self.excep("get_total", h)
    }
    fn set_total(&self) -> Result<(), SystemException> {
        self.send(Got::SetTotal)
    }
    fn set_total_excep(&self, h: &ExceptionHolder) -> Result<(), SystemException> {
        self.excep("set_total", h)
    }
    fn get_label(&self, ami_return_val: &str) -> Result<(), SystemException> {
        self.send(Got::GetLabel(ami_return_val.into()))
    }
    fn get_label_excep(&self, h: &ExceptionHolder) -> Result<(), SystemException> {
        self.excep("get_label", h)
    }
}

const WAIT: Duration = Duration::from_secs(10);

/// Runs every kind of `sendc_` call on `calc` with `handler`, checking what arrives.
fn exercise(calc: &idl::Calc, handler: &idl::AmiCalcHandler, got: &std::sync::mpsc::Receiver<Got>) {
    let next = || got.recv_timeout(WAIT).expect("no reply delivered");
    calc.sendc_add(Some(handler), 2, 3);
    assert_eq!(next(), Got::Add(5));
    calc.sendc_base_op(Some(handler), 4);
    assert_eq!(next(), Got::BaseOp(40));
    calc.sendc_concat(Some(handler), "ab", "cd");
    assert_eq!(next(), Got::Concat("abcd".into(), "CD".into(), 4));
    calc.sendc_concat(Some(handler), "", "x");
    assert_eq!(next(), Got::ConcatRefused("empty".into(), 7));
    calc.sendc_fail(Some(handler), 0);
    assert_eq!(next(), Got::FailRefused(1));
    calc.sendc_fail(Some(handler), 1);
    assert_eq!(
        next(),
        Got::FailSystem(SystemExceptionKind::NoPermission, 3)
    );
    calc.sendc_set_total(Some(handler), 42);
    assert_eq!(next(), Got::SetTotal);
    calc.sendc_get_total(Some(handler));
    assert_eq!(next(), Got::GetTotal(42));
    calc.sendc_get_label(Some(handler));
    assert_eq!(next(), Got::GetLabel("calc".into()));
    // Many in flight at once: every reply arrives, each once.
    for k in 0..100 {
        calc.sendc_add(Some(handler), k, 1);
    }
    let mut sums: Vec<i32> = (0..100)
        .map(|_| match next() {
            Got::Add(s) => s,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    sums.sort_unstable();
    assert_eq!(sums, (1..=100).collect::<Vec<_>>());
    // A nil handler: the outcome is dropped, nothing is delivered anywhere.
    calc.sendc_add(None, 1, 1);
    assert!(got.recv_timeout(Duration::from_millis(200)).is_err());
}

fn serve_calc(orb: &corbina::Orb) -> idl::Calc {
    let poa = orb.root_poa();
    let id = poa
        .activate_object(Arc::new(idl::CalcSkeleton::new(Calc {
            total: Mutex::new(0),
        })))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    idl::Calc::unchecked_narrow(&poa.id_to_reference(&id).unwrap().without_collocation())
}

#[test]
fn replies_reach_a_local_handler_on_the_root_poa() {
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let calc = serve_calc(&orb);
    let (tx, rx) = channel();
    let poa = orb.root_poa();
    let id = poa
        .activate_object(Arc::new(idl::AmiCalcHandlerSkeleton::new(Handler(
            Mutex::new(tx),
        ))))
        .unwrap();
    let handler = idl::AmiCalcHandler::unchecked_narrow(&poa.id_to_reference(&id).unwrap());
    assert!(handler.as_object().is_collocated());
    exercise(&calc, &handler, &rx);
    orb.destroy();
}

#[test]
fn replies_reach_a_handler_on_a_separate_poa_and_a_remote_handler() {
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let calc = serve_calc(&orb);
    let (tx, rx) = channel();
    let handlers = orb
        .root_poa()
        .create_poa("ami_handlers", None, corbina::poa::PolicyList::default())
        .unwrap();
    handlers.the_poa_manager().activate().unwrap();
    let id = handlers
        .activate_object(Arc::new(idl::AmiCalcHandlerSkeleton::new(Handler(
            Mutex::new(tx),
        ))))
        .unwrap();
    let obj = handlers.id_to_reference(&id).unwrap();
    assert_eq!(obj.type_id(), "IDL:Ami/AMI_CalcHandler:1.0");
    // The implied base of every reply handler, asked of the servant over GIOP.
    let remote = obj.without_collocation();
    assert!(remote
        .is_a("IDL:omg.org/Messaging/ReplyHandler:1.0")
        .unwrap());
    assert!(!remote.is_a("IDL:Ami/Calc:1.0").unwrap());
    exercise(&calc, &idl::AmiCalcHandler::unchecked_narrow(&obj), &rx);
    // The same handler reached over GIOP: ExceptionHolders travel as values.
    exercise(
        &calc,
        &idl::AmiCalcHandler::unchecked_narrow(&obj.without_collocation()),
        &rx,
    );
    orb.destroy();
}
