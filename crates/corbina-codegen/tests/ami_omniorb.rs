//! AMI interop with omniORB, both ways, on `peers/bench.idl` (golden
//! `tests/golden/bench_ami.rs`: `--ami --amh --no-implement-defaults`, `BLESS=1` rewrites
//! it): a Corbina AMI client (callbacks and pollers) against `omni_server`, and omniORB's AMI
//! client (`peers/omni_ami_client`, omniidl `-Wbami`) against a Corbina server, ordinary and
//! AMH. The wire is ordinary GIOP either way.

use std::path::Path;
use std::process::Command;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use corbina::ami::ExceptionHolder;
use corbina::{Orb, OrbConfig, SystemException, SystemExceptionKind};

const GOLDEN: &str = "tests/golden/bench_ami.rs";

#[allow(dead_code)]
mod gen {
    include!("golden/bench_ami.rs");
}
use gen::bench;

#[test]
fn golden_file_matches() {
    let mut options = corbina_codegen::Options::default();
    options.ami = true;
    options.amh = true;
    options.no_implement_defaults = true;
    let mut fe = corbina_idl::Frontend::new();
    let src =
        corbina_codegen::compile_file_with(&mut fe, Path::new("../../peers/bench.idl"), &options)
            .unwrap_or_else(|e| panic!("{e}"))
            .source;
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(GOLDEN, &src).unwrap();
        return;
    }
    let old = std::fs::read_to_string(GOLDEN).unwrap_or_default();
    assert!(old == src, "{GOLDEN} out of date (rerun with BLESS=1)");
}

#[derive(Debug, PartialEq)]
enum Got {
    Echo(String),
    Failed,
    Raised(i32, String),
    System(SystemExceptionKind),
    Timer,
}

struct Handler(Mutex<Sender<Got>>);

impl Handler {
    fn send(&self, g: Got) -> Result<(), SystemException> {
        self.0.lock().unwrap().send(g).unwrap();
        Ok(())
    }
}

impl gen::AmiBenchHandlerServant for Handler {
    fn echo(&self, ami_return_val: &str) -> Result<(), SystemException> {
        self.send(Got::Echo(ami_return_val.into()))
    }
    fn echo_excep(&self, h: &ExceptionHolder) -> Result<(), SystemException> {
        self.send(Got::System(h.raise_exception::<SystemException>().kind))
    }
    fn fail(&self) -> Result<(), SystemException> {
        self.send(Got::Failed)
    }
    fn fail_excep(&self, h: &ExceptionHolder) -> Result<(), SystemException> {
        match h.raise_exception::<bench::FailError>() {
            bench::FailError::BenchError(e) => self.send(Got::Raised(e.code, e.reason)),
            bench::FailError::System(e) => self.send(Got::System(e.kind)),
        }
    }
    fn stop_timer(&self, _ami_return_val: u64) -> Result<(), SystemException> {
        self.send(Got::Timer)
    }
}

fn local_handler(orb: &Orb) -> (gen::AmiBenchHandler, Receiver<Got>) {
    let (tx, rx) = channel();
    let poa = orb.root_poa();
    let id = poa
        .activate_object(Arc::new(gen::AmiBenchHandlerSkeleton::new(Handler(
            Mutex::new(tx),
        ))))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    let h = gen::AmiBenchHandler::unchecked_narrow(&poa.id_to_reference(&id).unwrap());
    (h, rx)
}

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn corbina_ami_client_against_omniorb_server() {
    let Some(bin) = corbina_testpeers::ami_peers() else {
        return;
    };
    let (server, ior) = corbina_testpeers::omni_server(bin, "ami-omni-server");
    let orb = Orb::with_config(OrbConfig::default());
    let bench = gen::Bench::unchecked_narrow(&orb.string_to_object(&ior).unwrap());
    let (handler, rx) = local_handler(&orb);
    let next = || rx.recv_timeout(WAIT).expect("no reply delivered");
    bench.sendc_echo(Some(&handler), "über AMI");
    assert_eq!(next(), Got::Echo("über AMI".into()));
    bench.sendc_fail(Some(&handler), 0);
    assert_eq!(next(), Got::Failed);
    bench.sendc_fail(Some(&handler), 9);
    assert_eq!(next(), Got::Raised(9, "requested".into()));
    bench.sendc_stop_timer(Some(&handler));
    assert_eq!(next(), Got::Timer);
    for k in 0..200 {
        bench.sendc_echo(Some(&handler), &k.to_string());
    }
    let mut echoes: Vec<i32> = (0..200)
        .map(|_| match next() {
            Got::Echo(s) => s.parse().unwrap(),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    echoes.sort_unstable();
    assert_eq!(echoes, (0..200).collect::<Vec<_>>());
    // The server gone: the call's system exception reaches the handler's _excep.
    drop(server);
    bench.sendc_echo(Some(&handler), "lost");
    match next() {
        Got::System(k) => assert!(
            matches!(
                k,
                SystemExceptionKind::CommFailure | SystemExceptionKind::Transient
            ),
            "{k:?}"
        ),
        other => panic!("unexpected {other:?}"),
    }
    orb.destroy();
}

struct Bench;

impl gen::BenchServant for Bench {
    fn ping(&self) -> Result<(), SystemException> {
        Ok(())
    }
    fn echo(&self, s: &str) -> Result<String, SystemException> {
        Ok(s.to_owned())
    }
    fn fail(&self, code: i32) -> Result<(), bench::FailError> {
        match code {
            0 => Ok(()),
            -1 => Err(SystemException::new(SystemExceptionKind::NoPermission, 3).into()),
            _ => Err(gen::BenchError {
                code,
                reason: "requested".into(),
            }
            .into()),
        }
    }
    fn stop_timer(&self) -> Result<u64, SystemException> {
        Ok(1)
    }
}

#[test]
fn corbina_pollers_against_omniorb_server() {
    let Some(bin) = corbina_testpeers::ami_peers() else {
        return;
    };
    let (server, ior) = corbina_testpeers::omni_server(bin, "ami-poll-omni-server");
    let orb = Orb::with_config(OrbConfig::default());
    let bench = gen::Bench::unchecked_narrow(&orb.string_to_object(&ior).unwrap());
    let wait = WAIT.as_millis() as u32;
    let p = bench.sendp_echo("über sendp");
    assert_eq!(p.echo(wait).unwrap(), "über sendp");
    assert_eq!(
        p.echo(0).unwrap_err().kind,
        SystemExceptionKind::ObjectNotExist
    );
    bench.sendp_fail(0).fail(wait).unwrap();
    match bench.sendp_fail(9).fail(wait) {
        Err(bench::FailError::BenchError(e)) => {
            assert_eq!((e.code, e.reason.as_str()), (9, "requested"))
        }
        other => panic!("unexpected {other:?}"),
    }
    bench.sendp_ping().ping(wait).unwrap();
    let pollers: Vec<_> = (0..200).map(|k| bench.sendp_echo(&k.to_string())).collect();
    for (k, p) in pollers.iter().enumerate() {
        assert_eq!(p.echo(wait).unwrap(), k.to_string());
    }
    // The server gone: the poll gets the call's system exception.
    drop(server);
    let p = bench.sendp_echo("lost");
    let e = p.echo(wait).unwrap_err();
    assert!(
        matches!(
            e.kind,
            SystemExceptionKind::CommFailure | SystemExceptionKind::Transient
        ),
        "{e}"
    );
    assert!(!p.is_from_poller());
    orb.destroy();
}

/// The same answers from an AMH servant: `echo` and `stop_timer` from another thread.
struct AmhBench;

impl gen::AmhBenchServant for AmhBench {
    fn ping(&self, rh: gen::AmhBenchResponseHandler) {
        rh.ping().unwrap();
    }
    fn echo(&self, rh: gen::AmhBenchResponseHandler, s: &str) {
        let s = s.to_owned();
        std::thread::spawn(move || rh.echo(&s).unwrap());
    }
    fn fail(&self, rh: gen::AmhBenchResponseHandler, code: i32) {
        let r = match code {
            0 => rh.fail(),
            -1 => rh.fail_excep(SystemException::new(SystemExceptionKind::NoPermission, 3).into()),
            _ => rh.fail_excep(
                gen::BenchError {
                    code,
                    reason: "requested".into(),
                }
                .into(),
            ),
        };
        r.unwrap();
    }
    fn stop_timer(&self, rh: gen::AmhBenchResponseHandler) {
        std::thread::spawn(move || rh.stop_timer(1).unwrap());
    }
}

/// Runs omniORB's AMI client against `servant`, served by a Corbina ORB.
fn omniorb_ami_client_against(servant: Arc<dyn corbina::Servant>, dir: &str) {
    let Some(bin) = corbina_testpeers::ami_peers() else {
        return;
    };
    let orb = Orb::with_config(OrbConfig::default());
    let poa = orb.root_poa();
    let id = poa.activate_object(servant).unwrap();
    poa.the_poa_manager().activate().unwrap();
    let obj = poa.id_to_reference(&id).unwrap();
    let file = corbina_testpeers::fresh_dir(dir).join("corbina.ior");
    std::fs::write(&file, orb.object_to_string(&obj).unwrap() + "\n").unwrap();
    let out = Command::new(bin.join("omni_ami_client"))
        .arg(&file)
        .output()
        .expect("omni_ami_client runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "omni_ami_client failed:\n{text}");
    for line in [
        "ok ping",
        "ok fail(0) replied",
        "ok fail(7) raised BenchError code 7",
        "ok fail(-1) raised NO_PERMISSION minor 3",
        "ok stop_timer",
        "ok 55/55 replies, 50 echoes right",
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
    orb.destroy();
}

#[test]
fn omniorb_ami_client_against_corbina_server() {
    omniorb_ami_client_against(Arc::new(gen::BenchSkeleton::new(Bench)), "omni-ami-client");
}

#[test]
fn omniorb_ami_client_against_corbina_amh_server() {
    omniorb_ami_client_against(
        Arc::new(gen::AmhBenchSkeleton::new(AmhBench)),
        "omni-ami-client-amh",
    );
}
