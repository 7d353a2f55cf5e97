//! An `Any`-heavy interface, client side: stores values of several types (basic types, a
//! struct, an enum, an any inside an any), reads them back, and meets a user exception.
//!
//! ```text
//! cargo run -p corbina-examples --bin any-client -- IOR|FILE
//! ```
use corbina::{Any, Orb};
use corbina_examples::examples::{property_store::GetError, Color, Point, PropertyStore};
use corbina_examples::{describe_any, reference_arg, BoxError};

fn run() -> Result<(), BoxError> {
    let (orb, args) = Orb::init(std::env::args().skip(1))?;
    let store =
        PropertyStore::narrow(&orb.string_to_object(&reference_arg(args.into_iter().next())?)?)?;

    // Generated structs and enums go into an Any with `Any::insert` (their TypeCode is
    // generated too); basic types have `Any::from_…`.
    let values = [
        ("answer", Any::from_long(42)),
        ("pi", Any::from_double(std::f64::consts::PI)),
        ("motto", Any::from_string("values of any type")?),
        ("origin", Any::insert(&Point { x: 1.5, y: -2.0 })?),
        ("color", Any::insert(&Color::Green)?),
        ("boxed", Any::from_any(&Any::from_boolean(true))?),
    ];
    for (key, value) in &values {
        store.set(key, value)?;
    }

    for key in store.keys()? {
        let value = store.get(&key)?;
        // Extraction checks the TypeCode: a Point comes back only from a Point.
        if let Some(p) = value.extract::<Point>() {
            println!("{key}: a Point at ({}, {})", p.x, p.y);
        }
        println!(
            "{key} = {} (server: {})",
            describe_any(&value),
            store.describe(&value)?
        );
    }

    // A key that is not there raises the IDL exception UnknownKey.
    match store.get("missing") {
        Err(GetError::UnknownKey(e)) => {
            println!("get(\"missing\") raised UnknownKey {{ key: {:?} }}", e.key)
        }
        other => return Err(format!("expected UnknownKey, got {other:?}").into()),
    }
    orb.destroy();
    Ok(())
}

fn main() -> std::process::ExitCode {
    corbina_examples::exit(run())
}
