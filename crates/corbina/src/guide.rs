//! The guides, beside the API: the tutorial and the IDL-to-Rust mapping, the files
//! `docs/tutorial.md` and `docs/mapping.md` of Corbina's repository shown as rustdoc pages.
//!
//! Their code blocks are programs and build scripts of a user's project (generated code,
//! shell commands), run by the examples crate's tutorial test rather than as doctests.

#[cfg_attr(not(doctest), doc = include_str!("../docs/tutorial.md"))]
pub mod tutorial {}

#[cfg_attr(not(doctest), doc = include_str!("../docs/mapping.md"))]
pub mod mapping {}
