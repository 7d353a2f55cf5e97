//! CORBA AMI, callback model, in one process over IIOP on 127.0.0.1: `sendc_` calls whose
//! replies (a result, a user exception) are delivered to a reply handler servant living in
//! its own POA.
//!
//! `cargo run -p corbina --example ami_callbacks`

use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use corbina::ami::ExceptionHolder;
use corbina::poa::PolicyList;
use corbina::{Orb, OrbConfig, SystemException};

// The IDL interface `Bench` has a module `bench` of its own (its error types).
#[allow(dead_code, clippy::module_inception)]
mod bench {
    // peers/bench.idl, generated with `corbina-idl --ami --amh --no-implement-defaults`.
    include!("../../corbina-codegen/tests/golden/bench_ami.rs");
}
use bench::bench::FailError;
use bench::{AmiBenchHandler, AmiBenchHandlerServant, AmiBenchHandlerSkeleton, Bench};

struct Server;

impl bench::BenchServant for Server {
    fn echo(&self, s: &str) -> Result<String, SystemException> {
        Ok(s.to_uppercase())
    }
    fn fail(&self, code: i32) -> Result<(), FailError> {
        Err(bench::BenchError {
            code,
            reason: "requested".into(),
        }
        .into())
    }
}

/// The reply handler: each upcall reports one line.
struct Handler(Mutex<Sender<String>>);

impl AmiBenchHandlerServant for Handler {
    fn echo(&self, ami_return_val: &str) -> Result<(), SystemException> {
        let _ = self
            .0
            .lock()
            .map(|tx| tx.send(format!("echo replied {ami_return_val:?}")));
        Ok(())
    }
    fn fail_excep(&self, excep_holder: &ExceptionHolder) -> Result<(), SystemException> {
        let line = match excep_holder.raise_exception::<FailError>() {
            FailError::BenchError(e) => format!("fail raised BenchError {{ code: {} }}", e.code),
            FailError::System(e) => format!("fail raised {e}"),
        };
        let _ = self.0.lock().map(|tx| tx.send(line));
        Ok(())
    }
}

fn main() -> Result<(), corbina::Report> {
    let orb = Orb::with_config(OrbConfig::default());
    let root = orb.root_poa();
    let id = root.activate_object(Arc::new(bench::BenchSkeleton::new(Server)))?;
    root.the_poa_manager().activate()?;
    // Over IIOP, as a remote server would be.
    let server = Bench::unchecked_narrow(&root.id_to_reference(&id)?.without_collocation());

    let handlers = root.create_poa("reply_handlers", None, PolicyList::default())?;
    handlers.the_poa_manager().activate()?;
    let (tx, rx) = channel();
    let hid = handlers.activate_object(Arc::new(AmiBenchHandlerSkeleton::new(Handler(
        Mutex::new(tx),
    ))))?;
    let handler = AmiBenchHandler::unchecked_narrow(&handlers.id_to_reference(&hid)?);

    server.sendc_echo(Some(&handler), "hello");
    server.sendc_fail(Some(&handler), 7);
    println!("two requests sent; the replies arrive at the handler:");
    for _ in 0..2 {
        println!("  {}", rx.recv_timeout(Duration::from_secs(10))?);
    }
    orb.destroy();
    Ok(())
}
