//! Hello world, server side: one `Greeter` object in the RootPOA.
//!
//! One file, using nothing of this crate but the code `build.rs` generates from
//! `idl/examples.idl`: copy it into a project set up as in `docs/tutorial.md`.
//!
//! ```text
//! cargo run -p corbina-examples --bin hello-server -- [-ORB…] [--ior-file FILE]
//! ```
//! Prints the object's IOR (and writes it to FILE), then serves until killed.
use std::sync::Arc;

use corbina::Orb;

// The stubs and skeletons generated from `idl/examples.idl` (this program uses the Greeter's).
#[allow(dead_code)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/examples.rs"));
}
use generated::examples::{GreeterServant, GreeterSkeleton};

/// The servant: the generated trait `GreeterServant` has one method per IDL operation.
struct Greeter;

impl GreeterServant for Greeter {
    fn greet(&self, name: &str) -> Result<String, corbina::SystemException> {
        Ok(format!("Hello, {name}!"))
    }
}

fn main() -> Result<(), corbina::Report> {
    // `-ORB…` options configure the ORB; what is left is this program's.
    let (orb, args) = Orb::init(std::env::args().skip(1))?;
    let ior_file = match args.as_slice() {
        [] => None,
        [flag, path] if flag == "--ior-file" => Some(path.clone()),
        _ => return Err("usage: hello-server [-ORB…] [--ior-file FILE]".into()),
    };
    let poa = orb.root_poa();
    // The skeleton dispatches requests to the servant; the POA owns it from here on.
    let id = poa.activate_object(Arc::new(GreeterSkeleton::new(Greeter)))?;
    let obj = poa.id_to_reference(&id)?;
    // Requests are held until the POA manager is active.
    poa.the_poa_manager().activate()?;
    let ior = orb.object_to_string(&obj)?;
    println!("{ior}");
    if let Some(path) = ior_file {
        // Renamed into place whole: a script waiting for the file never reads half of it.
        std::fs::write(format!("{path}.tmp"), format!("{ior}\n"))?;
        std::fs::rename(format!("{path}.tmp"), &path)?;
    }
    orb.run();
    Ok(())
}
