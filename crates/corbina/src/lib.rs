//! Corbina: a CORBA Object Request Broker.
//!
//! This crate is the runtime that applications and generated code depend on: the [`Orb`]
//! (`ORB_init`, `string_to_object`, `run`), object references ([`ObjectRef`]), the POA
//! ([`poa`]), servants ([`Servant`]), exceptions ([`SystemException`], [`UserException`]),
//! `TypeCode`/[`Any`], and the dynamic interfaces ([`dii`], [`dsi`], [`dynany`]).
//!
//! # The usual set-up
//!
//! The crates are not on crates.io yet: a project depends on a checkout of the repository
//! (here `~/corbina`; `--git URL` works the same):
//!
//! ```sh
//! cargo add --path ~/corbina/crates/corbina
//! cargo add --build --path ~/corbina/crates/corbina-codegen
//! ```
//!
//! Once published, that is `cargo add corbina` and `cargo add --build corbina-codegen` (or
//! `cargo add --build corbina --features codegen`, and `corbina::codegen::Builder` in
//! `build.rs`: the same generator, re-exported).
//!
//! `build.rs` compiles the IDL with `corbina_codegen::Builder` and the crate includes the
//! result; for `interface Greeter { string greet(in string name); };` the generator writes a
//! proxy `Greeter`, a servant trait `GreeterServant` and a skeleton `GreeterSkeleton`
//! ([`guide::mapping`]). A server and a client then read:
//!
//! ```ignore
//! include!(concat!(env!("OUT_DIR"), "/greeter.rs"));
//!
//! struct Hello;
//! impl GreeterServant for Hello {
//!     fn greet(&self, name: &str) -> Result<String, corbina::SystemException> {
//!         Ok(format!("Hello, {name}!"))
//!     }
//! }
//!
//! // Server: activate the servant, print its reference, serve.
//! let (orb, _args) = corbina::Orb::init(std::env::args().skip(1))?;
//! let poa = orb.root_poa();
//! let id = poa.activate_object(std::sync::Arc::new(GreeterSkeleton::new(Hello)))?;
//! poa.the_poa_manager().activate()?;
//! println!("{}", orb.object_to_string(&poa.id_to_reference(&id)?)?);
//! orb.run();
//!
//! // Client: from an IOR:, corbaloc: or corbaname: string to a typed proxy.
//! let greeter = Greeter::narrow(&orb.string_to_object(&reference)?)?;
//! println!("{}", greeter.greet("world")?);
//! ```
//!
//! The workspace's `examples/` crate has these as whole programs (and a persistent POA with
//! a fixed object key, naming, callbacks, DII, `Any`), and the [tutorial](guide::tutorial)
//! walks through a project from `cargo new` to calls with omniORB.
//!
//! # The same path, by hand
//!
//! Generated code is a thin layer over this crate: a skeleton is a [`Servant`] that decodes
//! the arguments of each operation from the [`ServerRequest`] and writes the reply, and a
//! proxy method is one [`ObjectRef::invoke`] that marshals arguments straight into the
//! request and unmarshals results straight from the reply. Here both are written out, and
//! the call goes over IIOP on loopback between two ORBs:
//!
//! ```
//! use std::sync::Arc;
//! use corbina::{config::Endpoint, Orb, OrbConfig, Servant, ServerRequest, SystemException};
//!
//! /// `interface Doubler { long twice(in long x); };`, dispatched as a skeleton does it.
//! struct Doubler;
//! impl Servant for Doubler {
//!     fn primary_interface(&self) -> &'static str { "IDL:Doubler:1.0" }
//!     fn is_a(&self, id: &str) -> bool { id == "IDL:Doubler:1.0" }
//!     fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
//!         match req.operation() {
//!             "twice" => {
//!                 let x = req.arguments().read_long()?;
//!                 req.arguments_done()?;
//!                 req.reply(|w| { w.write_long(2 * x); Ok(()) })
//!             }
//!             _ => Err(corbina::servant::bad_operation()),
//!         }
//!     }
//! }
//!
//! // The server's ORB, listening on loopback.
//! let server = Orb::with_config(OrbConfig {
//!     endpoints: vec![Endpoint { host: "127.0.0.1".into(), port: 0 }],
//!     ..OrbConfig::default()
//! });
//! let poa = server.root_poa();
//! let id = poa.activate_object(Arc::new(Doubler))?;
//! poa.the_poa_manager().activate()?;
//! let ior = server.object_to_string(&poa.id_to_reference(&id)?)?;
//!
//! // A client's ORB, as in another process: the reference reaches the server over IIOP.
//! let client = Orb::with_config(OrbConfig::default());
//! let obj = client.string_to_object(&ior)?;
//! assert!(!obj.is_collocated());
//! let r: i32 = obj.invoke("twice", |w| { w.write_long(21); Ok(()) }, |r| r.read_long(), corbina::no_user)?;
//! assert_eq!(r, 42);
//! client.destroy();
//! server.destroy();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A failed call says where and why: [`SystemException`]'s `Display` carries the runtime's
//! [`Error`] (endpoint, phase, OS error), e.g. `TRANSIENT (minor 0x43420212, completed NO):
//! connect to tcp 127.0.0.1:5002 failed: Connection refused (os error 111)`; the minor codes
//! are listed in [`error`].
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub use corbina_cdr as cdr;
/// The IDL compiler (`corbina-codegen`), for `build.rs`: with the `codegen` feature, a
/// build dependency on `corbina` alone is enough (`corbina::codegen::Builder`).
#[cfg(feature = "codegen")]
pub use corbina_codegen as codegen;
pub use corbina_giop as giop;

pub use corbina_cdr::{Fixed, LongDouble};
pub use corbina_giop::{CompletionStatus, SystemException, SystemExceptionKind};

pub mod abstract_interface;
pub mod ami;
pub mod any;
pub mod bidir;
pub mod client;
pub mod codeset;
mod collocation;
pub mod config;
mod config_args;
pub mod dii;
pub mod dsi;
pub mod dynany;
pub mod error;
pub mod exception;
pub mod guide;
pub mod interceptor;
pub mod local;
pub mod object;
pub mod orb;
pub mod poa;
mod report;
pub mod servant;
pub mod server;
pub mod trace;
pub mod transport;
pub mod typecode;
pub mod valuetype;

pub use abstract_interface::AbstractRef;
pub use any::Any;
pub use collocation::{CollocatedInvoker, ServantInvoker};
pub use config::OrbConfig;
pub use dii::{DiiError, NVList, NamedValue, OrbDii, Request};
pub use dsi::{DsiSkeleton, DynServerRequest, DynamicImplementation};
pub use error::Error;
pub use exception::UserException;
pub use object::{no_user, Invoker, ObjectRef, ReplyBody};
pub use orb::{InitialReference, InvalidName, Orb};
pub use report::Report;
pub use servant::{DeferredReplySink, ReplyHandle, ReplyKind, ReplySink, Servant, ServerRequest};
pub use typecode::TypeCode;
pub use valuetype::ValueBase;
