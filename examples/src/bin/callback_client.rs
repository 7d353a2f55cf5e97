//! Callbacks, client side: the client is a server too. It activates a `Listener` in its
//! own RootPOA, passes the reference to `subscribe`, and receives the server's calls while
//! its own `publish` call is in progress.
//!
//! ```text
//! cargo run -p corbina-examples --bin callback-client -- IOR|FILE [TOPIC] [COUNT]
//! ```
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use corbina::{Orb, SystemException};
use corbina_examples::examples::{Listener, ListenerServant, ListenerSkeleton, Publisher};
use corbina_examples::{reference_arg, BoxError};

#[derive(Default)]
struct PrintingListener {
    received: AtomicI32,
}

impl ListenerServant for PrintingListener {
    // Runs on one of the ORB's connection threads, not the caller's.
    fn on_event(&self, topic: &str, seq: i32) -> Result<(), SystemException> {
        println!("event {topic} #{seq}");
        self.received.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

fn run() -> Result<(), BoxError> {
    let (orb, args) = Orb::init(std::env::args().skip(1))?;
    let mut args = args.into_iter();
    let publisher = Publisher::narrow(&orb.string_to_object(&reference_arg(args.next())?)?)?;
    let topic = args.next().unwrap_or_else(|| "news".into());
    let count: i32 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3);

    // `from_arc` keeps a handle on the servant, to read its count afterwards.
    let listener = Arc::new(PrintingListener::default());
    let poa = orb.root_poa();
    let id = poa.activate_object(Arc::new(ListenerSkeleton::from_arc(listener.clone())))?;
    poa.the_poa_manager().activate()?;
    let me = Listener::unchecked_narrow(&poa.id_to_reference(&id)?);

    publisher.subscribe(&topic, Some(&me))?;
    let called = publisher.publish(&topic, count)?;
    println!(
        "publish called {called} listener(s); this one received {} event(s)",
        listener.received.load(Ordering::Relaxed)
    );
    orb.destroy();
    Ok(())
}

fn main() -> std::process::ExitCode {
    corbina_examples::exit(run())
}
