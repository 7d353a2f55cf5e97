//! The bidirectional GIOP experiment (`bidir-server`, `bidir-client`, `suite --only bidir`):
//! what a call costs over a connection that carries callbacks too, and what a callback
//! costs, against an ordinary connection and against omniORB's own bidirectional peers
//! (`peers/omni_bidir_*`, `--mode bench`), on `idl/bidir.idl`.
//!
//! Records (experiment `bidir`), one per point:
//! - `mode: "ordinary"`, `op: "ping"`: a client that does not offer bidirectional GIOP;
//! - `mode: "bidirectional"`, `op: "ping"`: a client that offers it, on a connection the
//!   server has accepted as bidirectional (a callback was passed over it first);
//! - `mode: "bidirectional"`, `op: "call_back"`: `call_back(cb, 1)`, a call during which
//!   the server calls the client's callback once over the same connection.
//!
//! A callback's own round trip is `call_back` − `ping` on the bidirectional connection.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use corbina::config::Endpoint;
use corbina::poa::{BidirectionalPolicy, PolicyList};
use corbina::{ObjectRef, Orb, OrbConfig, Servant, SystemException, SystemExceptionKind};

use crate::bidir::bidir_test::{
    Callback, CallbackServant, CallbackSkeleton, Registrar, RegistrarServant, RegistrarSkeleton,
};
use crate::record::{Record, CORBINA};
use crate::stats::summarize;

type R<T = ()> = Result<T, SystemException>;

fn sys(e: SystemException) -> String {
    e.to_string()
}

/// The client's callback: `notify(n)` = 2n.
struct Doubler;

impl CallbackServant for Doubler {
    fn notify(&self, n: i32) -> R<i32> {
        Ok(n * 2)
    }
    fn tick(&self, _n: i32) -> R {
        Ok(())
    }
}

/// The Registrar, with the semantics of `peers/README.md` (callbacks made later run on
/// a thread of their own).
#[derive(Default)]
pub struct RegistrarImpl {
    stored: Mutex<Option<Callback>>,
    ticks: AtomicI32,
}

fn bad_inv_order() -> SystemException {
    SystemException::new(SystemExceptionKind::BadInvOrder, 0)
}

fn call_back(cb: &Callback, n: i32) -> R<i32> {
    let mut sum = 0i32;
    for i in 1..=n {
        sum = sum.wrapping_add(cb.notify(i)?);
    }
    Ok(sum)
}

impl RegistrarServant for Arc<RegistrarImpl> {
    fn ping(&self) -> R<i32> {
        Ok(1)
    }
    fn call_back(&self, cb: Option<&Callback>, n: i32) -> R<i32> {
        call_back(cb.ok_or_else(bad_inv_order)?, n)
    }
    fn register_cb(&self, cb: Option<&Callback>) -> R {
        *self.stored.lock().unwrap_or_else(|p| p.into_inner()) = cb.cloned();
        Ok(())
    }
    fn notify_registered(&self, n: i32) -> R<i32> {
        let cb = self
            .stored
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        call_back(cb.as_ref().ok_or_else(bad_inv_order)?, n)
    }
    fn ticks_seen(&self) -> R<i32> {
        Ok(self.ticks.load(Ordering::SeqCst))
    }
    fn call_back_later(&self, cb: Option<&Callback>, n: i32, delay_ms: i32) -> R {
        let cb = cb.ok_or_else(bad_inv_order)?.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(delay_ms.max(0) as u64));
            let _ = call_back(&cb, n);
        });
        Ok(())
    }
    fn tick(&self, _n: i32) -> R {
        self.ticks.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
    fn tick_registered(&self, n: i32) -> R {
        let cb = self
            .stored
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let cb = cb.ok_or_else(bad_inv_order)?;
        for i in 1..=n {
            cb.tick(i)?;
        }
        Ok(())
    }
}

/// Activates `servant` in a child POA "bidir" with `BidirectionalPolicy::Both` (callbacks
/// arriving over a client's connection are dispatched only to such a POA).
fn activate(orb: &Orb, servant: Arc<dyn Servant>) -> Result<ObjectRef, String> {
    let e = |e: corbina::poa::PoaError| format!("activating the bidirectional POA's servant: {e}");
    let root = orb.root_poa();
    let poa = root
        .create_poa(
            "bidir",
            Some(root.the_poa_manager()),
            PolicyList::root().with_bidirectional(BidirectionalPolicy::Both),
        )
        .map_err(e)?;
    let id = poa.activate_object(servant).map_err(e)?;
    let obj = poa.id_to_reference(&id).map_err(e)?;
    root.the_poa_manager().activate().map_err(e)?;
    Ok(obj)
}

/// `bidir-server`: an ORB accepting bidirectional GIOP on 127.0.0.1 (`config`'s endpoints
/// if any), serving one Registrar; its IOR.
pub fn serve(mut config: OrbConfig) -> Result<(Orb, String), String> {
    if config.endpoints.is_empty() {
        config.endpoints = vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }];
    }
    config.accept_bidir = true;
    let orb = Orb::with_config(config);
    let servant = Arc::new(RegistrarImpl::default());
    let obj = activate(&orb, Arc::new(RegistrarSkeleton::new(servant)))?;
    let ior = orb.object_to_string(&obj).map_err(sys)?;
    Ok((orb, ior))
}

/// Times `count` calls of `f` after `count / 10` unmeasured ones; microseconds each.
fn time_calls(count: usize, mut f: impl FnMut() -> R<i32>, want: i32) -> Result<Vec<f64>, String> {
    for _ in 0..count / 10 {
        check(f(), want)?;
    }
    let mut samples = Vec::with_capacity(count);
    for _ in 0..count {
        let t = Instant::now();
        let r = f();
        samples.push(t.elapsed().as_secs_f64() * 1e6);
        check(r, want)?;
    }
    Ok(samples)
}

fn check(r: R<i32>, want: i32) -> Result<(), String> {
    match r {
        Ok(v) if v == want => Ok(()),
        Ok(v) => Err(format!("expected {want}, the server answered {v}")),
        Err(e) => Err(e.to_string()),
    }
}

fn record(mode: &str, op: &str, mut samples: Vec<f64>) -> Record {
    let s = summarize(&mut samples);
    let mut r = Record::new("bidir", CORBINA).mode(mode).op(op);
    r.n = Some(s.n as u64);
    r.median_us = Some(s.median);
    r.p99_us = Some(s.p99);
    r.mean_us = Some(s.mean);
    r.min_us = Some(s.min);
    r
}

/// `bidir-client`: the three points against the Registrar at `ior`, `count` calls each.
pub fn run(ior: &str, count: usize, out: &mut dyn FnMut(Record)) -> Result<(), String> {
    // An ordinary connection: no offer, no callback.
    let orb = Orb::with_config(OrbConfig {
        call_timeout: Some(Duration::from_secs(30)),
        ..OrbConfig::default()
    });
    let reg = Registrar::narrow(&orb.string_to_object(ior).map_err(sys)?).map_err(sys)?;
    out(record(
        "ordinary",
        "ping",
        time_calls(count, || reg.ping(), 1)?,
    ));
    orb.destroy();

    // A client that offers bidirectional GIOP and listens nowhere: its callback's IOR
    // names a port no one listens on, so callbacks can only come over its own connection.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("a closed port: {e}"))?
        .port();
    let orb = Orb::with_config(OrbConfig {
        endpoints_no_listen: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: closed,
        }],
        offer_bidir: true,
        call_timeout: Some(Duration::from_secs(30)),
        ..OrbConfig::default()
    });
    let cb = Callback::narrow(&activate(&orb, Arc::new(CallbackSkeleton::new(Doubler)))?)
        .map_err(sys)?;
    let reg = Registrar::narrow(&orb.string_to_object(ior).map_err(sys)?).map_err(sys)?;
    // The connection becomes bidirectional with the first request; a callback over it
    // proves the server took the offer.
    check(reg.call_back(Some(&cb), 1), 2)?;
    out(record(
        "bidirectional",
        "ping",
        time_calls(count, || reg.ping(), 1)?,
    ));
    out(record(
        "bidirectional",
        "call_back",
        time_calls(count, || reg.call_back(Some(&cb), 1), 2)?,
    ));
    orb.destroy();
    Ok(())
}
