//! corbina-ttcp's integration and interop tests, one test binary (each module was its own
//! binary: one link instead of seven).

#[path = "../common/mod.rs"]
mod common;

mod dsi;
mod failures;
mod forward;
mod omniorb;
mod persistent;
mod suite;
mod transports;
