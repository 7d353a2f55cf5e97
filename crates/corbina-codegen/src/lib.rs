//! `corbina-codegen` turns OMG IDL into Rust for Corbina: plain Rust types with compiled
//! CDR marshalling, client proxies, servant traits and skeletons, following the mapping of
//! [`corbina::guide::mapping`] (`docs/mapping.md` in the repository). It is used from a
//! `build.rs` through [`Builder`] (in the style of `prost-build`) or from the command line
//! as `corbina-idl`.
//!
//! A `build.rs`:
//!
//! ```no_run
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     corbina_codegen::Builder::new()
//!         .include("idl")
//!         .compile(&["idl/bench.idl"])?; // writes $OUT_DIR/bench.rs
//!     Ok(())
//! }
//! ```
//!
//! and in the crate, next to a `corbina` dependency:
//!
//! ```ignore
//! include!(concat!(env!("OUT_DIR"), "/bench.rs"));
//! ```
//!
//! The generator can also be driven directly from a parsed specification:
//!
//! ```
//! let spec = corbina_idl::Frontend::new()
//!     .parse_str("point.idl", "struct Point { long x, y; };")
//!     .unwrap();
//! let rust = corbina_codegen::generate(&spec, "point.idl").unwrap();
//! assert!(rust.contains("pub struct Point"));
//! ```
//!
//! Every named type gets its TypeCode (`Name::type_code()`, or `<alias>_type_code()` for a
//! typedef) and, for structs, unions, enums and exceptions, `corbina::any::AnyInsert`.
//!
//! Constructs that are parsed but not generated yet (native types, a few valuetype constructs:
//! see the mapping) are reported as `file:line:col: error: not yet supported: …`.
//!
//! [`corbina::guide::mapping`]: https://docs.rs/corbina/latest/corbina/guide/mapping/index.html
#![forbid(unsafe_code)]

mod abstract_iface;
mod amh;
mod ami;
mod builder;
mod context;
mod generate;
mod interfaces;
mod layout;
mod local;
mod marshal;
pub mod names;
mod naming;
mod out;
mod typecodes;
mod types;
mod values;
mod values_ops;

pub use builder::{compile_file, compile_file_with, rustfmt, Builder, Compiled, Error};
pub use generate::{generate, generate_reporting, generate_with, Generated, Options};
