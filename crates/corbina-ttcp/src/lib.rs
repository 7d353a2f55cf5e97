//! `corbina-ttcp`: the benchmark interface of the seed papers (`idl/bench.idl`, shared with
//! the omniORB peer) served and called through Corbina's generated code, and the checks and
//! experiments run over it.
#![forbid(unsafe_code)]

/// Code generated from `idl/bench.idl` by `corbina-codegen`.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod bench {
    include!(concat!(env!("OUT_DIR"), "/bench.rs"));
}

pub mod async_bench;
pub mod check;
pub mod dsi;
pub mod experiments;
pub mod plot;
pub mod record;
pub mod report;
pub mod servant;
pub mod sock;
pub mod stats;
pub mod suite;
pub mod sys;
