//! Calls the persistent server's counter by its corbaloc URL.
//!
//! ```text
//! cargo run -p corbina-examples --bin persistent-client -- corbaloc::127.0.0.1:2901/Counter [BY]
//! ```
use corbina::Orb;
use corbina_examples::examples::Counter;
use corbina_examples::{reference_arg, BoxError};

fn run() -> Result<(), BoxError> {
    let (orb, args) = Orb::init(std::env::args().skip(1))?;
    let mut args = args.into_iter();
    // corbaloc: the client needs only the address and the key; no IOR is exchanged.
    let obj = orb.string_to_object(&reference_arg(args.next())?)?;
    let counter = Counter::narrow(&obj)?;
    let by: i32 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(1);
    let now = counter.increment(by)?;
    // `readonly attribute long value` is the method `get_value`.
    println!(
        "counter incremented by {by}: {now} (value {})",
        counter.get_value()?
    );
    orb.destroy();
    Ok(())
}

fn main() -> std::process::ExitCode {
    corbina_examples::exit(run())
}
