//! Hello world, client side: narrows the reference to a `Greeter` and calls it.
//!
//! One file, using nothing of this crate but the code `build.rs` generates from
//! `idl/examples.idl`: copy it into a project set up as in `docs/tutorial.md`.
//!
//! ```text
//! cargo run -p corbina-examples --bin hello-client -- [-ORB…] IOR|corbaloc|corbaname [NAME]
//! ```
use corbina::Orb;

// The stubs and skeletons generated from `idl/examples.idl` (this program uses the Greeter's).
#[allow(dead_code)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/examples.rs"));
}
use generated::examples::Greeter;

// `corbina::Report` prints a failure as people read it: the exception, where and why.
fn main() -> Result<(), corbina::Report> {
    let (orb, args) = Orb::init(std::env::args().skip(1))?;
    let mut args = args.into_iter();
    let reference = args
        .next()
        .ok_or("usage: hello-client [-ORB…] IOR|corbaloc|corbaname [NAME]")?;
    let obj = orb.string_to_object(&reference)?;
    // `narrow` checks (remotely, if the IOR's type id does not say) that it is a Greeter.
    let greeter = Greeter::narrow(&obj)?;
    let name = args.next().unwrap_or_else(|| "world".into());
    println!("{}", greeter.greet(&name)?);
    orb.destroy();
    Ok(())
}
