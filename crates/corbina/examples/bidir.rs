//! Bidirectional GIOP measured in one run, two ORBs in this process over loopback TCP: a
//! client that listens nowhere (its callback is published at a closed port) offers
//! bidirectional GIOP; the server calls the callback back over the client's connection.
//! Prints medians over rounds of
//!
//! - `ping` on an ordinary connection (the baseline: thread per connection, no thread
//!   switch),
//! - `ping` over the bidirectional connection (a reader thread hands replies to callers and
//!   requests to workers: two thread switches per call),
//! - one call back (`notify`) from the server to the client, inside `call_back(cb, n)`,
//!
//! and the ratios to the baseline.
//!
//! `cargo run --release -p corbina --example bidir [ROUNDS]`

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Instant;

use corbina::poa::{BidirectionalPolicy, PolicyList};
use corbina::{ObjectRef, Orb, OrbConfig, Servant, SystemException};

#[allow(dead_code)]
mod gen {
    include!("../../corbina-codegen/tests/golden/bidir.rs");
}

use gen::bidir_test::{
    Callback, CallbackServant, CallbackSkeleton, Registrar, RegistrarServant, RegistrarSkeleton,
};

type R<T = ()> = Result<T, SystemException>;

struct Cb;

impl CallbackServant for Cb {
    fn notify(&self, n: i32) -> R<i32> {
        Ok(n * 2)
    }
    fn tick(&self, _n: i32) -> R {
        Ok(())
    }
}

struct Reg;

fn unsupported() -> SystemException {
    SystemException::new(corbina::SystemExceptionKind::NoImplement, 0)
}

impl RegistrarServant for Reg {
    fn ping(&self) -> R<i32> {
        Ok(1)
    }
    fn call_back(&self, cb: Option<&Callback>, n: i32) -> R<i32> {
        let cb = cb.ok_or_else(unsupported)?;
        let mut sum = 0;
        for i in 1..=n {
            sum += cb.notify(i)?;
        }
        Ok(sum)
    }
    fn register_cb(&self, _cb: Option<&Callback>) -> R {
        Err(unsupported())
    }
    fn notify_registered(&self, _n: i32) -> R<i32> {
        Err(unsupported())
    }
    fn ticks_seen(&self) -> R<i32> {
        Ok(0)
    }
    fn call_back_later(&self, _cb: Option<&Callback>, _n: i32, _delay_ms: i32) -> R {
        Err(unsupported())
    }
    fn tick(&self, _n: i32) -> R {
        Ok(())
    }
    fn tick_registered(&self, _n: i32) -> R {
        Err(unsupported())
    }
}

fn activate(orb: &Orb, servant: Arc<dyn Servant>) -> ObjectRef {
    let root = orb.root_poa();
    let both = PolicyList::root().with_bidirectional(BidirectionalPolicy::Both);
    let poa = root
        .create_poa("bidir", Some(root.the_poa_manager()), both)
        .expect("POA");
    let id = poa.activate_object(servant).expect("activation");
    root.the_poa_manager().activate().expect("POA manager");
    poa.id_to_reference(&id).expect("reference")
}

/// Median ns per call over `rounds` rounds of `calls` calls each of `f` (which makes
/// `per` calls each time it runs).
fn median_ns(rounds: usize, calls: usize, per: usize, mut f: impl FnMut() -> R) -> R<f64> {
    let mut v = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..calls {
            f()?;
        }
        v.push(t.elapsed().as_nanos() as f64 / (calls * per) as f64);
    }
    v.sort_by(f64::total_cmp);
    Ok(v[rounds / 2])
}

fn main() -> Result<(), corbina::Report> {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(7);
    let server = Orb::with_config(
        OrbConfig::default()
            .endpoint("127.0.0.1", 0)
            .accept_bidir(true),
    );
    let registrar = activate(&server, Arc::new(RegistrarSkeleton::new(Reg)));
    let ior = server.object_to_string(&registrar)?;

    let closed = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let client = Orb::with_config(
        OrbConfig::default()
            .endpoint_no_listen("127.0.0.1", closed)
            .offer_bidir(true),
    );
    let cb = Callback::narrow(&activate(&client, Arc::new(CallbackSkeleton::new(Cb))))?;
    let over_bidir = Registrar::narrow(&client.string_to_object(&ior)?)?;
    // A third ORB, not offering: its calls go over an ordinary connection.
    let plain_orb = Orb::with_config(OrbConfig::default());
    let plain = Registrar::narrow(&plain_orb.string_to_object(&ior)?)?;

    // Warm up both connections (and the bidirectional one's offer).
    over_bidir.call_back(Some(&cb), 10)?;
    for _ in 0..1000 {
        plain.ping()?;
        over_bidir.ping()?;
    }
    const CALLS: usize = 2000;
    const PER: usize = 20;
    let mut base = Vec::new();
    let mut bidir = Vec::new();
    let mut back = Vec::new();
    // Interleaved, so that a noisy moment hits all three alike.
    for _ in 0..rounds {
        base.push(median_ns(1, CALLS, 1, || plain.ping().map(drop))?);
        bidir.push(median_ns(1, CALLS, 1, || over_bidir.ping().map(drop))?);
        back.push(median_ns(1, CALLS / PER, PER, || {
            over_bidir.call_back(Some(&cb), PER as i32).map(drop)
        })?);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (b, d, c) = (median(&mut base), median(&mut bidir), median(&mut back));
    println!("ping, ordinary connection        {:>9.0} ns/call", b);
    println!(
        "ping, bidirectional connection   {:>9.0} ns/call  {:.2}x",
        d,
        d / b
    );
    println!(
        "call back (notify), same conn.   {:>9.0} ns/call  {:.2}x",
        c,
        c / b
    );
    plain_orb.destroy();
    client.destroy();
    server.destroy();
    Ok(())
}
