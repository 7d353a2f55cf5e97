//! Common Data Representation (CDR), the byte format of CORBA's GIOP.
//!
//! `corbina-cdr` turns IDL values into CDR bytes and back, with no I/O. It is the bottom layer
//! of Corbina: GIOP messages, IORs, generated stubs and the dynamic `Any` all marshal through
//! [`CdrWriter`] and [`CdrReader`].
//!
//! What it is built for, following the lessons of the 1990s ORB studies:
//! - **No gratuitous conversions.** Writers use the machine's byte order; readers honour the
//!   sender's and swap only when it differs.
//! - **Bulk data moves in blocks.** A sequence of primitives is one copy; a large one is not
//!   copied at all when writing ([`CdrWriter::segments`] hands the caller's memory to a
//!   vectored write) and a `sequence<octet>` is decoded as a slice borrowed from the input.
//! - **Hostile input is an error, never a crash.** Every length is checked against the bytes
//!   that remain before anything is allocated, strings must be terminated and valid in their
//!   code set, booleans are 0 or 1, nesting is bounded. Errors are [`MarshalError`]s, which map
//!   to `MARSHAL` (or `DATA_CONVERSION`, …) with a minor code.
//!
//! ```
//! use corbina_cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter};
//!
//! let samples = vec![0.5f64, 1.5, 2.5];
//! let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
//! w.write_string("temperature")?;
//! w.write_primitive_seq(&samples)?;
//! let bytes = w.into_bytes();
//!
//! let mut r = CdrReader::new(&bytes, ByteOrder::Big, CdrContext::GIOP_1_2);
//! assert_eq!(r.read_string()?, "temperature");
//! assert_eq!(r.read_primitive_seq::<f64>()?, samples);
//! r.expect_end()?;
//!
//! // A length that the message cannot back is refused before any allocation.
//! let hostile = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];
//! let err = CdrReader::new(&hostile, ByteOrder::Big, CdrContext::GIOP_1_2)
//!     .read_primitive_seq::<f64>()
//!     .unwrap_err();
//! assert_eq!(err.exception_kind(), corbina_cdr::ExceptionKind::Marshal);
//! # Ok::<(), corbina_cdr::MarshalError>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod codeset;
mod error;
mod fixed;
mod primitive;
mod reader;
mod traits;
pub mod value;
mod writer;

pub use codeset::{CharCodeSet, CodeSetId, CodeSets, WCharCodeSet};
pub use error::{ExceptionKind, MarshalError, Result, CORBINA_VMCID, OMG_VMCID};
pub use fixed::{Fixed, MAX_FIXED_DIGITS};
pub use primitive::{ByteOrder, LongDouble, Primitive};
pub use reader::{AlignBreak, CdrReader, DEFAULT_MAX_DEPTH};
pub use traits::{from_bytes, prealloc_count, to_bytes, CdrDecode, CdrEncode, PREALLOC_BYTES};
pub use writer::{CdrContext, CdrWriter, DEFAULT_SPLICE_THRESHOLD};
