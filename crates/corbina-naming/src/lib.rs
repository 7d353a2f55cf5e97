//! `corbina-naming`: the CORBA Naming Service (CosNaming 1.3) for Corbina.
//!
//! - [`cos_naming`]: stubs and skeletons generated from the OMG's `CosNaming.idl` (copied
//!   from Debian's `omniorb-idl` into `idl/`) by `corbina-codegen`: the `NamingContext`,
//!   `NamingContextExt` and `BindingIterator` proxies any client uses, whichever naming
//!   service it talks to (Corbina's or omniORB's `omniNames`).
//! - [`name`]: the stringified-name and `corbaname:` URL rules (`a.kind/b`, `\` escapes).
//! - [`NamingService`]: the service itself, as the `corbina-names` daemon runs it: the root
//!   context under the object key `NameService` (so `corbaloc::host:2809/NameService`
//!   works), every context an object of one PERSISTENT POA (references survive restarts on
//!   the same endpoint), binding iterators that time out.
//!
//! # Persistence: why redb
//!
//! The naming graph lives in a [redb](https://docs.rs/redb) database (`naming.redb` in the
//! data directory). The service needs durable, atomic small transactions (one per
//! `bind`/`unbind`, which must be on disk before the reply is sent) and consistent reads,
//! not a query language. redb is an embedded, pure-Rust, ACID key-value store: copy-on-write
//! B-trees with a checksummed commit record, so a `kill -9` or power cut at any moment
//! leaves the last committed transaction intact, and `commit()` with the default
//! `Durability::Immediate` returns only after `fsync`. It builds with no C toolchain
//! (SQLite through rusqlite would bring a bundled C library for features we would not use)
//! and its MVCC read transactions let `resolve`/`list` run while a bind commits. The
//! crash test (`tests/crash.rs`) kills the daemon with SIGKILL under load and checks that
//! every acknowledged bind is there after restarting.
//!
//! # Beyond one machine: etcd
//!
//! `Options::etcd` (`corbina-names --store etcd://HOST:PORT[,HOST:PORT…][/PREFIX]`) keeps
//! the graph in an etcd v3 cluster instead, behind the same [`store::Backend`] trait with
//! the same semantics (a reply only after etcd's quorum commit; every change one etcd
//! transaction with compare-and-swap on the revisions it read, so "not already bound" holds
//! at commit; a `list` reads one revision). Reads are served from an in-memory copy kept
//! current by an etcd watch, so a resolve costs no round trip; after its own bind, a
//! service waits for its copy to reach the bind's revision, so a resolve through the same
//! service always sees it. When etcd is unreachable or without quorum, writes fail with
//! TRANSIENT within the timeout ([`store::etcd::DEFAULT_TIMEOUT`]) and reads go on from the
//! last copy. See [`store::etcd`].
//!
//! **Replicas.** Several services on one etcd prefix serve one naming graph. Given every
//! replica's address ([`Options::replicas`], `corbina-names --replicas`), each publishes
//! them all in its references (its own first, the others as TAG_ALTERNATE_IIOP_ADDRESS;
//! the object keys are the same everywhere), so a client whose replica dies goes on with
//! the next (Corbina's ORB fails over at connect time for any reference with several
//! addresses). What a reader sees after another replica's write: the write is in etcd when
//! its replica replies; each other replica applies it when its watch delivers it (well
//! under a millisecond on one host, measured in `tests/replicas.rs`), so a resolve through
//! another replica in that window may still miss it. Through the writer's own replica it
//! is always there.
//!
//! **Leases** ([`lease`]): bindings that disappear when the server that made them stops
//! keeping their lease alive, served under the object key `NameServiceLeases`.
//!
//! # Example
//!
//! ```
//! use corbina::{config::Endpoint, Orb, OrbConfig};
//! use corbina_naming::cos_naming::{NameComponent, NamingContextExt};
//! use corbina_naming::{NamingService, Options};
//!
//! let dir = std::env::temp_dir().join(format!("corbina-naming-doc-{}", std::process::id()));
//! let _ = std::fs::remove_dir_all(&dir);
//! let config = OrbConfig {
//!     endpoints: vec![Endpoint { host: "127.0.0.1".into(), port: 0 }],
//!     ..OrbConfig::default()
//! };
//! let orb = Orb::with_config(config);
//! let service = NamingService::start(&orb, &Options::new(&dir)).unwrap();
//!
//! // A client reaches the root context by its corbaloc URL.
//! let (host, port) = service.endpoint();
//! let obj = orb.string_to_object(&format!("corbaloc::{host}:{port}/NameService")).unwrap();
//! let root = NamingContextExt::narrow(&obj).unwrap();
//! let dir_ctx = root.bind_new_context(&root.to_name("apps").unwrap()).unwrap().unwrap();
//! dir_ctx.bind(&[NameComponent { id: "echo".into(), kind: "svc".into() }], Some(&obj)).unwrap();
//! let found = root.resolve_str("apps/echo.svc").unwrap().unwrap();
//! assert_eq!(found.ior(), obj.ior());
//! // And so does corbaname: through the ORB.
//! let via_url = orb
//!     .string_to_object(&format!("corbaname::{host}:{port}#apps/echo.svc"))
//!     .unwrap();
//! assert_eq!(via_url.ior(), obj.ior());
//! # drop(service); orb.destroy(); let _ = std::fs::remove_dir_all(&dir);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// Code generated from `idl/CosNaming.idl` by `corbina-codegen`.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/CosNaming.rs"));
}
pub use generated::cos_naming;

/// Code generated from `idl/CorbinaLeases.idl`: bindings with a lease (see [`lease`]).
#[allow(missing_docs, clippy::all, clippy::pedantic)]
mod generated_leases {
    include!(concat!(env!("OUT_DIR"), "/CorbinaLeases.rs"));
}
pub use generated_leases::corbina_naming as leases_idl;

mod context;
mod iterator;
pub mod lease;
pub mod name;
mod service;
pub mod store;

pub use service::{
    default_data_dir, NamingService, Options, ServiceError, CONTEXT_POA, DEFAULT_ITERATOR_TIMEOUT,
    DEFAULT_MAX_ITERATORS, ITERATOR_POA, LEASES_KEY, LEASE_SWEEP, ROOT_KEY,
};
