//! Resolves a name with a `corbaname:` URL (the ORB asks the naming service) and calls the
//! `Greeter` bound there.
//!
//! ```text
//! cargo run -p corbina-examples --bin naming-client -- corbaname::127.0.0.1:2809#examples/greeter
//! ```
use corbina::Orb;
use corbina_examples::examples::Greeter;
use corbina_examples::{reference_arg, BoxError};

fn run() -> Result<(), BoxError> {
    let (orb, args) = Orb::init(std::env::args().skip(1))?;
    let url = reference_arg(args.into_iter().next())?;
    // A name that is not bound raises OBJECT_NOT_EXIST, a bad name BAD_PARAM.
    let obj = orb.string_to_object(&url)?;
    let greeter = Greeter::narrow(&obj)?;
    println!("{}", greeter.greet("naming client")?);
    orb.destroy();
    Ok(())
}

fn main() -> std::process::ExitCode {
    corbina_examples::exit(run())
}
