//! A generated AMH servant (`corbina-idl --amh`), in one process over IIOP on 127.0.0.1: the
//! servant parks each `add` request's response handler and returns at once; a worker thread
//! answers them all later. The client has them all in flight on one connection, through AMI
//! pollers. One handler is dropped unanswered: its client gets `INTERNAL`.
//!
//! `cargo run -p corbina --example amh_servant`

use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};

use corbina::ami::WAIT_FOREVER;
use corbina::{Orb, OrbConfig};

#[allow(dead_code)]
mod gen {
    // crates/corbina-codegen/tests/idl/ami.idl, generated with `corbina-idl --amh --ami`.
    include!("../../corbina-codegen/tests/golden/amh.rs");
}
use gen::ami::{AmhCalcResponseHandler, AmhCalcServant, AmhCalcSkeleton, Calc};

/// Parks `add` requests for the worker; answers the other operations in the upcall.
struct Parking(Mutex<Sender<(AmhCalcResponseHandler, i32, i32)>>);

impl AmhCalcServant for Parking {
    fn base_op(&self, rh: AmhCalcResponseHandler, x: i32) {
        let _ = rh.base_op(x);
    }
    fn add(&self, rh: AmhCalcResponseHandler, a: i32, b: i32) {
        if let Ok(tx) = self.0.lock() {
            let _ = tx.send((rh, a, b));
        }
    }
    fn concat(&self, rh: AmhCalcResponseHandler, a: &str, b: &str) {
        let _ = rh.concat(&format!("{a}{b}"), b, (a.len() + b.len()) as i32);
    }
    fn fail(&self, rh: AmhCalcResponseHandler, _kind: i32) {
        drop(rh); // no answer: the client gets INTERNAL, never silence
    }
    fn note(&self, _s: &str) {}
    fn get_total(&self, rh: AmhCalcResponseHandler) {
        let _ = rh.get_total(0);
    }
    fn set_total(&self, rh: AmhCalcResponseHandler, _value: i32) {
        let _ = rh.set_total();
    }
    fn get_label(&self, rh: AmhCalcResponseHandler) {
        let _ = rh.get_label("amh");
    }
}

fn main() -> Result<(), corbina::Report> {
    let orb = Orb::with_config(OrbConfig::default());
    let root = orb.root_poa();
    let (tx, parked) = channel();
    let id = root.activate_object(Arc::new(AmhCalcSkeleton::new(Parking(Mutex::new(tx)))))?;
    root.the_poa_manager().activate()?;
    // An AMH servant is reached over IIOP: a reply cannot be deferred in a direct call.
    let calc = Calc::unchecked_narrow(&root.id_to_reference(&id)?.without_collocation());

    let pollers: Vec<_> = (0..10).map(|k| calc.sendp_add(k, k)).collect();
    // All ten upcalls have returned; their handlers wait here.
    let held: Vec<_> = (0..10).map(|_| parked.recv()).collect::<Result<_, _>>()?;
    println!(
        "{} requests parked; answering them from a worker thread",
        held.len()
    );
    std::thread::spawn(move || {
        for (rh, a, b) in held {
            let _ = rh.add(a + b);
        }
    });
    for p in &pollers {
        print!("{} ", p.add(WAIT_FOREVER)?);
    }
    println!();
    println!("a dropped handler: {}", calc.fail(0).unwrap_err());
    orb.destroy();
    Ok(())
}
