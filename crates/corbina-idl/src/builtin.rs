//! IDL files shipped with the compiler (`idl/` in this crate): `orb.idl`, `ir.idl` and
//! `IOP.idl`, written from the CORBA specification, so that `#include <orb.idl>` works with
//! no other ORB installed. A file of the same name on the include path takes precedence.

/// (name as included, text)
const FILES: &[(&str, &str)] = &[
    ("orb.idl", include_str!("../idl/orb.idl")),
    ("ir.idl", include_str!("../idl/ir.idl")),
    ("IOP.idl", include_str!("../idl/IOP.idl")),
];

/// How a built-in file is named in diagnostics.
pub const PREFIX: &str = "<corbina-idl>/";

/// The text of the built-in file `name`, if there is one.
pub fn file(name: &str) -> Option<&'static str> {
    FILES.iter().find(|f| f.0 == name).map(|f| f.1)
}

/// The names of the built-in files.
pub fn names() -> impl Iterator<Item = &'static str> {
    FILES.iter().map(|f| f.0)
}
