//! Corbina: a CORBA Object Request Broker.
//!
//! This crate is what applications and generated code depend on. It is being built in
//! layers; what exists now is the contract between generated stubs/skeletons and the ORB:
//!
//! - [`ObjectRef`]: an object reference; generated proxies call [`ObjectRef::invoke`] and
//!   [`ObjectRef::invoke_oneway`] with closures that marshal arguments straight into the
//!   request and unmarshal results straight from the reply.
//! - [`Invoker`]: how a reference reaches its object (IIOP connection pools come with the
//!   runtime; the ORB gives references to its own objects a [`CollocatedInvoker`];
//!   [`ServantInvoker`] reaches one servant through full marshalling, for tests).
//! - [`Servant`] / [`ServerRequest`] / [`ReplySink`]: the server side that generated skeletons
//!   implement and that the POA dispatches to.
//! - Collocation: a reference to an object of the same ORB calls a generated servant directly,
//!   without marshalling ([`ObjectRef::collocated_call`]); other servants of the same ORB are
//!   dispatched in process, marshalled, without a socket. [`ObjectRef::without_collocation`]
//!   opts out.
//! - [`SystemException`] and [`UserException`]; [`Error`] says what failed on the call path
//!   (endpoint, phase, OS error) and decides the system exception's minor code ([`error`]).
//!
//! ```
//! use std::sync::Arc;
//! use corbina::{cdr::CdrContext, giop::Ior, ObjectRef, Servant, ServantInvoker,
//!               ServerRequest, SystemException};
//!
//! /// A servant with one operation, `long twice(in long x)`, dispatched by hand the way a
//! /// generated skeleton does it.
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
//! let invoker = Arc::new(ServantInvoker::new(Arc::new(Doubler), CdrContext::GIOP_1_2));
//! let obj = ObjectRef::new(Ior::nil(), b"key".to_vec(), invoker);
//! let r: Result<i32, SystemException> =
//!     obj.invoke("twice", |w| { w.write_long(21); Ok(()) }, |r| r.read_long(), corbina::no_user);
//! assert_eq!(r.unwrap(), 42);
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub use corbina_cdr as cdr;
pub use corbina_giop as giop;

pub use corbina_cdr::{Fixed, LongDouble};
pub use corbina_giop::{CompletionStatus, SystemException, SystemExceptionKind};

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
pub mod object;
pub mod orb;
pub mod poa;
pub mod servant;
pub mod server;
pub mod transport;
pub mod typecode;
pub mod valuetype;

pub use any::Any;
pub use collocation::{CollocatedInvoker, ServantInvoker};
pub use config::OrbConfig;
pub use dii::{DiiError, NVList, NamedValue, OrbDii, Request};
pub use dsi::{DsiSkeleton, DynServerRequest, DynamicImplementation};
pub use error::Error;
pub use exception::UserException;
pub use object::{no_user, Invoker, ObjectRef, ReplyBody};
pub use orb::{InitialReference, InvalidName, Orb};
pub use servant::{ReplyKind, ReplySink, Servant, ServerRequest};
pub use typecode::TypeCode;
