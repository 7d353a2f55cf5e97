//! The Dynamic Invocation Interface: calls an operation that this program knows only from
//! its command line, with no generated stub, as a generic tool (a bridge, a test console)
//! does. Arguments are `TYPE:VALUE` (`string`, `long`, `double`, `boolean`).
//!
//! ```text
//! cargo run -p corbina-examples --bin dii-client -- IOR|FILE OPERATION [TYPE:VALUE]... [--returns TYPE]
//! cargo run -p corbina-examples --bin dii-client -- /tmp/hello.ior greet string:DII
//! ```
use corbina::{Any, Orb, TypeCode};
use corbina_examples::{describe_any, reference_arg, BoxError};

fn type_code(name: &str) -> Result<TypeCode, BoxError> {
    Ok(match name {
        "string" => TypeCode::create_string_tc(0),
        "long" => TypeCode::LONG.into(),
        "double" => TypeCode::DOUBLE.into(),
        "boolean" => TypeCode::BOOLEAN.into(),
        "void" => TypeCode::VOID.into(),
        other => return Err(format!("unknown type {other:?}").into()),
    })
}

fn argument(arg: &str) -> Result<Any, BoxError> {
    let (ty, v) = arg
        .split_once(':')
        .ok_or_else(|| format!("argument {arg:?}: expected TYPE:VALUE"))?;
    Ok(match ty {
        "string" => Any::from_string(v)?,
        "long" => Any::from_long(v.parse()?),
        "double" => Any::from_double(v.parse()?),
        "boolean" => Any::from_boolean(v.parse()?),
        other => return Err(format!("argument {arg:?}: unknown type {other:?}").into()),
    })
}

fn run() -> Result<(), BoxError> {
    let (orb, args) = Orb::init(std::env::args().skip(1))?;
    let mut args = args.into_iter();
    let target = orb.string_to_object(&reference_arg(args.next())?)?;
    let operation = args
        .next()
        .ok_or("usage: dii-client REF OPERATION [TYPE:VALUE]...")?;

    // A Request is built from TypeCodes and Anys at run time; it could be invoked again
    // with new values (`set_argument`) without being rebuilt.
    let mut request = target.request(&operation);
    let mut returns = TypeCode::create_string_tc(0);
    while let Some(a) = args.next() {
        if a == "--returns" {
            returns = type_code(&args.next().ok_or("--returns needs a type")?)?;
        } else {
            let n = request.arguments().count();
            request.add_in_arg(&format!("arg{n}"), argument(&a)?);
        }
    }
    request.set_return_type(returns);
    request.invoke()?;
    println!(
        "{operation} returned {}",
        describe_any(request.return_value())
    );
    orb.destroy();
    Ok(())
}

fn main() -> std::process::ExitCode {
    corbina_examples::exit(run())
}
