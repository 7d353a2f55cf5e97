//! Hello world, server side: one `Greeter` object in the RootPOA.
//!
//! ```text
//! cargo run -p corbina-examples --bin hello-server -- [-ORB…] [--ior-file FILE]
//! ```
//! Prints the object's IOR, then serves until killed.
use std::sync::Arc;

use corbina_examples::examples::{GreeterServant, GreeterSkeleton};
use corbina_examples::{publish, server_init, BoxError};

/// The servant: the generated trait `GreeterServant` has one method per IDL operation.
struct Greeter;

impl GreeterServant for Greeter {
    fn greet(&self, name: &str) -> Result<String, corbina::SystemException> {
        Ok(format!("Hello, {name}!"))
    }
}

fn run() -> Result<(), BoxError> {
    let (orb, ior_file, _) = server_init()?;
    let poa = orb.root_poa();
    // The skeleton dispatches requests to the servant; the POA owns it from here on.
    let id = poa.activate_object(Arc::new(GreeterSkeleton::new(Greeter)))?;
    let obj = poa.id_to_reference(&id)?;
    // Requests are held until the POA manager is active.
    poa.the_poa_manager().activate()?;
    publish(&orb.object_to_string(&obj)?, ior_file.as_deref())?;
    orb.run();
    Ok(())
}

fn main() -> std::process::ExitCode {
    corbina_examples::exit(run())
}
