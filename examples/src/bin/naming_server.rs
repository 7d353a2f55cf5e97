//! A server that publishes its object in a naming service (`corbina-names`, or omniORB's
//! `omniNames`): binds a `Greeter` under `examples/greeter` and prints the `corbaname:` URL
//! clients resolve it by.
//!
//! ```text
//! cargo run -p corbina-examples --bin naming-server -- \
//!     -ORBInitRef NameService=corbaloc::127.0.0.1:2809/NameService [NAME]
//! ```
use std::sync::Arc;

use corbina::InitialReference;
use corbina_examples::examples::{GreeterServant, GreeterSkeleton};
use corbina_examples::{publish, server_init, BoxError};
use corbina_naming::cos_naming::naming_context::BindNewContextError;
use corbina_naming::cos_naming::NamingContextExt;

/// Where the naming service is when `-ORBInitRef NameService=…` is not given.
const DEFAULT_NAME_SERVICE: &str = "corbaloc::127.0.0.1:2809/NameService";

struct Greeter;

impl GreeterServant for Greeter {
    fn greet(&self, name: &str) -> Result<String, corbina::SystemException> {
        Ok(format!("Hello from the naming example, {name}!"))
    }
}

fn run() -> Result<(), BoxError> {
    let (orb, ior_file, args) = server_init()?;
    let name = args.first().map_or("examples/greeter", String::as_str);

    let poa = orb.root_poa();
    let id = poa.activate_object(Arc::new(GreeterSkeleton::new(Greeter)))?;
    let obj = poa.id_to_reference(&id)?;
    poa.the_poa_manager().activate()?;

    // The root naming context: `-ORBInitRef NameService=URL|IOR`, else the default URL.
    let root = match orb.resolve_initial_references("NameService") {
        Ok(InitialReference::Object(o)) => o,
        _ => orb.string_to_object(DEFAULT_NAME_SERVICE)?,
    };
    let root = NamingContextExt::narrow(&root)?;

    // Make the parent contexts (`examples` for `examples/greeter`) unless they exist.
    let full = root.to_name(name)?;
    for depth in 1..full.len() {
        match root.bind_new_context(&full[..depth]) {
            Ok(_) | Err(BindNewContextError::AlreadyBound(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    // rebind: a restarted server replaces its old binding.
    root.rebind(&full, Some(&obj))?;

    // corbaname::HOST:PORT#NAME resolves NAME in the root context at HOST:PORT (whose
    // object key is `NameService`, as with corbina-names and omniNames).
    let profile = root
        .as_object()
        .ior()
        .iiop_profiles()?
        .into_iter()
        .next()
        .ok_or("the naming service's reference has no IIOP profile")?;
    let address = format!("{}:{}", profile.host, profile.port);
    publish(&format!("corbaname::{address}#{name}"), ior_file.as_deref())?;
    orb.run();
    Ok(())
}

fn main() -> std::process::ExitCode {
    corbina_examples::exit(run())
}
