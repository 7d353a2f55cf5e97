//! CORBA AMI, polling model, in one process over IIOP on 127.0.0.1: `sendp_` calls return
//! pollers; a poll that times out, the reply taken later, a user exception, and a
//! `PollableSet` handing out replies as they arrive, all from one thread.
//!
//! `cargo run -p corbina --example ami_polling`

use std::sync::Arc;
use std::time::Duration;

use corbina::ami::{PollableSet, WAIT_FOREVER};
use corbina::{Orb, OrbConfig, SystemException};

// The IDL interface `Bench` has a module `bench` of its own (its error types).
#[allow(dead_code, clippy::module_inception)]
mod bench {
    // peers/bench.idl, generated with `corbina-idl --ami --amh --no-implement-defaults`.
    include!("../../corbina-codegen/tests/golden/bench_ami.rs");
}
use bench::bench::FailError;
use bench::Bench;

struct Server;

impl bench::BenchServant for Server {
    fn echo(&self, s: &str) -> Result<String, SystemException> {
        // A slow back end for some requests.
        let ms = s.strip_prefix("sleep ").and_then(|n| n.parse().ok());
        std::thread::sleep(Duration::from_millis(ms.unwrap_or(0)));
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

fn main() -> Result<(), corbina::Report> {
    let orb = Orb::with_config(OrbConfig::default());
    let root = orb.root_poa();
    let id = root.activate_object(Arc::new(bench::BenchSkeleton::new(Server)))?;
    root.the_poa_manager().activate()?;
    // Over IIOP, as a remote server would be.
    let server = Bench::unchecked_narrow(&root.id_to_reference(&id)?.without_collocation());

    // A poll that does not wait, then one that does.
    let slow = server.sendp_echo("sleep 200");
    match slow.echo(0) {
        Err(e) => println!(
            "polled at once: {e} (from the poller: {})",
            slow.is_from_poller()
        ),
        Ok(r) => println!("already here: {r}"),
    }
    println!("then: {}", slow.echo(WAIT_FOREVER)?);

    // The operation's user exception comes back as its error type.
    match server.sendp_fail(7).fail(WAIT_FOREVER) {
        Err(FailError::BenchError(e)) => println!("fail raised BenchError {{ code: {} }}", e.code),
        other => println!("fail: {other:?}"),
    }

    // Three requests in flight; take the replies in the order they arrive.
    let pollers = [
        server.sendp_echo("sleep 300"),
        server.sendp_echo("sleep 100"),
        server.sendp_echo("sleep 200"),
    ];
    let mut set = PollableSet::new();
    for p in &pollers {
        set.add_pollable(p);
    }
    while set.number_left() > 0 {
        let ready = set.get_ready_pollable(10_000)?;
        if let Some(p) = pollers.iter().find(|p| ***p == ready) {
            println!("ready: {}", p.echo(0)?);
        }
    }
    orb.destroy();
    Ok(())
}
