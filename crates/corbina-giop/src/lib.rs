//! GIOP 1.0–1.2 messages, IORs and corbaloc URLs for Corbina, with no I/O.
//!
//! `corbina-giop` is the protocol layer between the CDR codec ([`corbina_cdr`]) and the ORB
//! runtime. It owns every GIOP byte and no socket: the runtime pushes received bytes into a
//! [`Framer`], gets whole [`Message`]s back, passes them through a [`Reassembler`] for
//! fragments, and decodes them into typed headers ([`RequestHeader`], [`ReplyHeader`], …)
//! plus a [`Body`] that a generated skeleton reads in place with a
//! [`CdrReader`](corbina_cdr::CdrReader). Outgoing messages are written with a
//! [`MessageWriter`] and, when large, split by [`fragment_message`] into header + borrowed
//! slices for vectored writes. Object references ([`Ior`], [`IiopProfile`]) and URLs
//! ([`Corbaloc`], [`Corbaname`]) live here too.
//!
//! Every decoder takes hostile input: errors are [`GiopError`] values, lengths are checked
//! before use, nothing panics.
//!
//! ```
//! use corbina_cdr::{ByteOrder, CodeSets};
//! use corbina_giop::{Framer, GiopMessage, MessageWriter, ObjectKey, RequestHeader, Version};
//!
//! // Client: a GIOP 1.2 Request for echo("hi").
//! let header = RequestHeader::new(2, ObjectKey::from("key"), "echo");
//! let mut mw = MessageWriter::request(Version::V1_2, ByteOrder::Big, CodeSets::UNICODE, &header)?;
//! mw.body().write_string("hi")?;
//! let bytes = mw.finish_bytes()?;
//!
//! // Server: bytes arrive in pieces; the framer yields the whole message.
//! let mut framer = Framer::default();
//! framer.push(&bytes[..10]);
//! assert!(framer.next_message()?.is_none());
//! framer.push(&bytes[10..]);
//! let message = framer.next_message()?.expect("a whole message");
//! let GiopMessage::Request { header: got, body } = message.decode()? else { unreachable!() };
//! assert_eq!(got.operation, "echo");
//! assert_eq!(got.target.object_key(), Some(&ObjectKey::from("key")));
//! let mut args = body.reader(CodeSets::UNICODE);
//! assert_eq!(args.read_string()?, "hi");
//! args.expect_end()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cancel;
pub mod close;
pub mod corbaloc;
mod encap;
pub mod error;
pub mod fragment;
pub mod fragmenter;
pub mod framer;
pub mod header;
pub mod iiop;
pub mod ior;
pub mod locate;
pub mod message;
pub mod object_key;
pub mod reassembler;
pub mod reply;
pub mod request;
pub mod service_context;
pub mod system_exception;
pub mod target_address;

pub use cancel::CancelRequestHeader;
pub use close::{close_connection, message_error};
pub use corbaloc::{
    format_corbaloc, Corbaloc, Corbaname, IiopAddress, ObjAddr, ObjectUrl, UrlError,
};
pub use error::{GiopError, Result};
pub use fragment::FragmentHeader;
pub use fragmenter::{fragment_message, OutgoingFragment};
pub use framer::Framer;
pub use header::{MessageHeader, MsgType, Version, HEADER_LEN};
pub use iiop::{CodeSetComponent, CodeSetComponentInfo, Component, IiopProfile, TaggedComponent};
pub use ior::{Ior, IorStringError, TaggedProfile};
pub use locate::{LocateReplyHeader, LocateRequestHeader, LocateStatus};
pub use message::{
    decode_message, decode_message_view, Body, GiopMessage, GiopMessageView, Message, MessageWriter,
};
pub use object_key::ObjectKey;
pub use reassembler::Reassembler;
pub use reply::{ReplyHeader, ReplyStatus};
pub use request::{RequestHeader, RequestHeaderRef, RequestHeaderView};
pub use service_context::{
    CodeSetContext, KnownServiceContext, ListenPoint, ServiceContext, ServiceContextList,
    ServiceContextsView,
};
pub use system_exception::{
    CompletionStatus, SystemException, SystemExceptionBody, SystemExceptionKind,
};
pub use target_address::{IorAddressingInfo, TargetAddress, TargetAddressView};
