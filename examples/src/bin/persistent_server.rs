//! A server whose object outlives it: a PERSISTENT POA with user-assigned ids, and the
//! fixed object key `Counter` (`Orb::bind_object_key_to`), so that clients reach it by the
//! URL `corbaloc::HOST:PORT/Counter`, across restarts, without any IOR.
//!
//! ```text
//! cargo run -p corbina-examples --bin persistent-server -- -ORBEndpoint giop:tcp:127.0.0.1:2901
//! ```
//! Prints the corbaloc URL. The port must be fixed for references to survive a restart
//! (port 0, an ephemeral port, is fine for a try).
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use corbina::poa::{IdAssignmentPolicy, LifespanPolicy, ObjectId, PolicyList};
use corbina_examples::examples::{CounterServant, CounterSkeleton};
use corbina_examples::{publish, server_init, BoxError};

/// State shared by the ORB's connection threads: servants take `&self`.
#[derive(Default)]
struct Counter(AtomicI32);

impl CounterServant for Counter {
    fn increment(&self, by: i32) -> Result<i32, corbina::SystemException> {
        Ok(self.0.fetch_add(by, Ordering::Relaxed).wrapping_add(by))
    }
    fn get_value(&self) -> Result<i32, corbina::SystemException> {
        Ok(self.0.load(Ordering::Relaxed))
    }
}

fn run() -> Result<(), BoxError> {
    let (orb, ior_file, _) = server_init()?;
    let root = orb.root_poa();
    // PERSISTENT + USER_ID (and create_POA's other defaults): the object key is the POA's name and our id, the same in every
    // run, so IORs handed out earlier keep working.
    let policies = PolicyList::default()
        .with_lifespan(LifespanPolicy::Persistent)
        .with_id_assignment(IdAssignmentPolicy::UserId);
    // Sharing the RootPOA's manager: one `activate` opens both.
    let poa = root.create_poa("counters", Some(root.the_poa_manager()), policies)?;
    let oid = ObjectId(b"main".to_vec());
    poa.activate_object_with_id(
        oid.clone(),
        Arc::new(CounterSkeleton::new(Counter::default())),
    )?;
    // Deployed systems often publish plain keys; this one serves `Counter` too.
    orb.bind_object_key_to(b"Counter", &poa.id_to_reference(&oid)?)?;
    root.the_poa_manager().activate()?;
    let (host, port) = orb.ensure_server()?;
    publish(
        &format!("corbaloc::{host}:{port}/Counter"),
        ior_file.as_deref(),
    )?;
    orb.run();
    Ok(())
}

fn main() -> std::process::ExitCode {
    corbina_examples::exit(run())
}
