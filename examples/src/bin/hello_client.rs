//! Hello world, client side: narrows the reference to a `Greeter` and calls it.
//!
//! ```text
//! cargo run -p corbina-examples --bin hello-client -- IOR|FILE [NAME]
//! ```
use corbina::Orb;
use corbina_examples::examples::Greeter;
use corbina_examples::{reference_arg, BoxError};

fn run() -> Result<(), BoxError> {
    let (orb, args) = Orb::init(std::env::args().skip(1))?;
    let mut args = args.into_iter();
    let obj = orb.string_to_object(&reference_arg(args.next())?)?;
    // `narrow` checks (remotely, if the IOR's type id does not say) that it is a Greeter.
    let greeter = Greeter::narrow(&obj)?;
    let name = args.next().unwrap_or_else(|| "world".into());
    println!("{}", greeter.greet(&name)?);
    orb.destroy();
    Ok(())
}

fn main() -> std::process::ExitCode {
    corbina_examples::exit(run())
}
