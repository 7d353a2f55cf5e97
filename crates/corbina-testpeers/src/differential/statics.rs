//! Static types (issue 27's "static stubs"): `peers/differential_static.idl` compiled by
//! corbina-idl (this crate's build script), omniidl (`peers/omni_static_echo.cc`) and, for
//! the peers that have them, their own compilers. A random value of each type (the
//! generator's, from the type's generated TypeCode) is turned into the generated Rust type,
//! sent through the typed operation `echo_T(inout T)` of `dts::StaticEcho` (not an `Any`),
//! and what comes back is turned into the model again and compared, in both byte orders on
//! the wire the seed picks.

use std::sync::Arc;

use corbina::cdr::codeset::{CharCodeSet, CodeSets, WCharCodeSet};
use corbina::cdr::{ByteOrder, CdrContext, CdrDecode, CdrEncode, CdrReader, CdrWriter};
use corbina::{Any, Orb, SystemException, TypeCode};

use super::{compare, decode_any, wire_for, Clients, Gen, Profile, Tally, Typed, ORDERS};

#[allow(missing_docs, clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/differential_static.rs"));
}
use dts::StaticEcho;
pub use generated::dts;

/// The rules the harness turns model values into typed ones under.
fn context() -> CdrContext {
    CdrContext::GIOP_1_2.with_code_sets(CodeSets {
        char_set: CharCodeSet::Utf8,
        wchar_set: Some(WCharCodeSet::Utf16),
    })
}

/// `t` as the generated type `T` (its CDR written by the model, read by generated code).
fn typed<T: for<'a> CdrDecode<'a>>(t: &Typed) -> Result<T, String> {
    let mut w = CdrWriter::with_byte_order(ByteOrder::NATIVE, context());
    t.encode(&mut w)
        .map_err(|e| format!("model encoding: {e}"))?;
    let bytes = w.into_bytes();
    let mut r = CdrReader::new(&bytes, ByteOrder::NATIVE, context());
    let v = T::decode(&mut r).map_err(|e| format!("generated decoding: {e}"))?;
    r.expect_end()
        .map_err(|e| format!("generated decoding: {e}"))?;
    Ok(v)
}

/// The generated value `v` of type `tc` back in the model.
fn model<T: CdrEncode>(tc: &TypeCode, v: &T) -> Result<Typed, String> {
    let mut w = CdrWriter::with_byte_order(ByteOrder::NATIVE, context());
    v.encode(&mut w)
        .map_err(|e| format!("generated encoding: {e}"))?;
    let bytes = w.into_bytes();
    let any = Any::from_cdr(tc.clone(), &bytes, ByteOrder::NATIVE, context(), 0)
        .map_err(|e| format!("the walker refused the echo: {e}"))?;
    decode_any(&any).map_err(|e| format!("model decoding: {e}"))
}

/// One typed operation: its name, the type's TypeCode, and a call of it with a random
/// value made from the seed.
struct Op {
    name: &'static str,
    /// In JacORB's IDL (what its compiler refuses is left out: `DTS_JACORB`).
    jacorb: bool,
    tc: fn() -> TypeCode,
    call: fn(&StaticEcho, &Typed) -> Result<(), String>,
}

/// Sends `t` as a `T` through `echo` and compares what comes back.
fn echo_as<T: for<'a> CdrDecode<'a> + CdrEncode>(
    t: &Typed,
    echo: impl FnOnce(&mut T) -> Result<(), SystemException>,
) -> Result<(), String> {
    let mut v: T = typed(t)?;
    echo(&mut v).map_err(|e| format!("echo raised {e}"))?;
    compare(t, &model(&t.tc, &v)?)
}

macro_rules! ops {
    ($($name:literal, $jacorb:literal, $ty:ty, $tc:expr, $method:ident;)*) => {
        &[$(Op {
            name: $name,
            jacorb: $jacorb,
            tc: || $tc,
            call: |p, t| echo_as::<$ty>(t, |v| p.$method(v)),
        },)*]
    };
}

/// Every operation of `dts::StaticEcho`.
const OPS: &[Op] = ops![
    "scalars", true, dts::Scalars, dts::Scalars::type_code(), echo_scalars;
    "strings", true, dts::Strings, dts::Strings::type_code(), echo_strings;
    "unions", true, dts::Unions, dts::Unions::type_code(), echo_unions;
    "wide_label_unions", false, dts::WideLabelUnions, dts::WideLabelUnions::type_code(),
        echo_wide_label_unions;
    "collections", true, dts::Collections, dts::Collections::type_code(), echo_collections;
    "values", true, dts::Values, dts::Values::type_code(), echo_values;
    "node", true, corbina::valuetype::ValueRef<dts::Node>, dts::Node::type_code(), echo_node;
    "g56", true, dts::G56S1, dts::G56S1::type_code(), echo_g56;
    "g87", true, dts::G87U1, dts::G87U1::type_code(), echo_g87;
    "g164", false, dts::G164U1, dts::G164U1::type_code(), echo_g164;
];

/// For each seed of `seed..seed + cases`, a random value of every static type through the
/// echo object at `ior` (`peer` names it in reports), in both byte orders; JacORB's echo
/// (`peer` "jacorb") has the operations of its IDL only.
pub fn run_static(
    peer: &str,
    ior: &str,
    profile: &Profile,
    seed: u64,
    cases: u64,
    clients: &mut Clients,
) -> Tally {
    let mut tally = Tally::default();
    for s in seed..seed + cases {
        for (k, op) in OPS.iter().enumerate() {
            if peer == "jacorb" && !op.jacorb {
                continue;
            }
            // One case per (seed, operation), the same on every machine.
            let case_seed = s.wrapping_mul(OPS.len() as u64).wrapping_add(k as u64);
            let t = match Gen::new(case_seed, profile, Vec::new()).typed(&(op.tc)()) {
                Ok(t) => t,
                Err(e) => {
                    tally.ran += 1;
                    tally
                        .failed
                        .push(format!("seed {s} {}: generator: {e}", op.name));
                    continue;
                }
            };
            let wire = wire_for(s, &t, profile);
            for order in ORDERS {
                let wire = wire.in_order(order);
                let p = StaticEcho::unchecked_narrow(&clients.object(wire, ior));
                tally.ran += 1;
                match (op.call)(&p, &t) {
                    Ok(()) => tally.passed += 1,
                    Err(why) => tally.failed.push(format!(
                        "differential static case FAILED: peer {peer}, seed {s}, echo_{}, \
                         {wire}\nvalue: {}\nwhy: {why}",
                        op.name,
                        super::show(&t)
                    )),
                }
            }
        }
    }
    tally
}

/// Corbina's `dts::StaticEcho`: every `inout` parameter left as it came.
struct SelfEcho;

impl dts::StaticEchoServant for SelfEcho {
    fn echo_scalars(&self, _: &mut dts::Scalars) -> Result<(), SystemException> {
        Ok(())
    }
    fn echo_strings(&self, _: &mut dts::Strings) -> Result<(), SystemException> {
        Ok(())
    }
    fn echo_unions(&self, _: &mut dts::Unions) -> Result<(), SystemException> {
        Ok(())
    }
    fn echo_collections(&self, _: &mut dts::Collections) -> Result<(), SystemException> {
        Ok(())
    }
    fn echo_values(&self, _: &mut dts::Values) -> Result<(), SystemException> {
        Ok(())
    }
    fn echo_node(
        &self,
        _: &mut corbina::valuetype::ValueRef<dts::Node>,
    ) -> Result<(), SystemException> {
        Ok(())
    }
    fn echo_g56(&self, _: &mut dts::G56S1) -> Result<(), SystemException> {
        Ok(())
    }
    fn echo_g87(&self, _: &mut dts::G87U1) -> Result<(), SystemException> {
        Ok(())
    }
    fn echo_g164(&self, _: &mut dts::G164U1) -> Result<(), SystemException> {
        Ok(())
    }
    fn echo_wide_label_unions(&self, _: &mut dts::WideLabelUnions) -> Result<(), SystemException> {
        Ok(())
    }
}

/// A Corbina ORB serving Corbina's `dts::StaticEcho` on 127.0.0.1, replying in `order`;
/// returns it and the IOR.
pub fn serve_static_in(order: ByteOrder) -> (Orb, String) {
    super::serve_in(order, Arc::new(dts::StaticEchoSkeleton::new(SelfEcho)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Corbina's generated stubs against Corbina's generated skeleton, servers replying in
    /// each byte order.
    #[test]
    fn differential_static_self() {
        let mut clients = Clients::new();
        let mut t = Tally::default();
        for order in ORDERS {
            let (orb, ior) = serve_static_in(order);
            t.merge(run_static(
                "self",
                &ior,
                &Profile::full(),
                1,
                25,
                &mut clients,
            ));
            orb.destroy();
        }
        eprintln!("differential static self: {t}");
        assert_eq!(t.ran, 2 * 25 * OPS.len() as u64 * 2);
        assert!(t.failed.is_empty(), "{}", t.failed.join("\n\n"));
    }
}
