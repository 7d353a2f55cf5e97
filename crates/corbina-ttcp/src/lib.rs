//! `corbina-ttcp`: the benchmark interface of the seed papers (`idl/bench.idl`, shared with
//! the omniORB peer) served and called through Corbina's generated code, and the checks and
//! experiments run over it. The `corbina-ttcp` command runs them (`suite`, `server`,
//! `client`; `docs/benchmarks.md`).
//!
//! ```
//! use std::sync::Arc;
//! use corbina::{config::Endpoint, Orb, OrbConfig};
//! use corbina_ttcp::bench::{Bench, BenchSkeleton};
//! use corbina_ttcp::servant::{BenchImpl, ByteCounter};
//!
//! // A bench server on loopback, and a client ORB calling it over IIOP.
//! let server = Orb::with_config(OrbConfig {
//!     endpoints: vec![Endpoint { host: "127.0.0.1".into(), port: 0 }],
//!     ..OrbConfig::default()
//! });
//! let poa = server.root_poa();
//! let servant = BenchImpl::new(Arc::new(ByteCounter::default()));
//! let id = poa.activate_object(Arc::new(BenchSkeleton::new(servant)))?;
//! poa.the_poa_manager().activate()?;
//! let ior = server.object_to_string(&poa.id_to_reference(&id)?)?;
//!
//! let client = Orb::with_config(OrbConfig::default());
//! let bench = Bench::narrow(&client.string_to_object(&ior)?)?;
//! // What `corbina-ttcp client --check` and omniORB's `omni_client --mode check` verify.
//! let results = corbina_ttcp::check::run_checks(&bench);
//! assert!(results.iter().all(|r| r.ok()), "{results:?}");
//! # client.destroy(); server.destroy();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

/// Code generated from `idl/bench.idl` by `corbina-codegen`. (Its module `bench`, for the
/// interface `Bench`'s error types, is `bench::bench`: hence the one allow.)
#[allow(missing_docs, clippy::module_inception)]
pub mod bench {
    include!(concat!(env!("OUT_DIR"), "/bench.rs"));
}

/// Code generated from `idl/bidir.idl` (bidirectional GIOP callbacks) by `corbina-codegen`.
#[allow(missing_docs)]
pub mod bidir {
    include!(concat!(env!("OUT_DIR"), "/bidir.rs"));
}

pub mod async_bench;
pub mod bidir_bench;
pub mod check;
pub mod dsi;
pub mod events_bench;
pub mod experiments;
pub mod plot;
pub mod record;
pub mod report;
pub mod servant;
pub mod sock;
pub mod stats;
pub mod suite;
pub mod sys;
