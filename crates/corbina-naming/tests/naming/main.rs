//! The naming service's integration and interop tests, one test binary (each module was its
//! own binary: one link instead of nine). `figures.rs` stays apart (`--test figures`).

#[path = "../common/mod.rs"]
mod common;

mod crash;
mod cross_orb;
mod daemon_cli;
mod jacorb;
mod kill;
mod leases;
mod omniorb;
mod replicas;
mod service;
