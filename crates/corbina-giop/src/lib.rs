//! GIOP 1.0–1.2 messages, IORs and corbaloc URLs for Corbina, with no I/O.
//!
//! `corbina-giop` is the protocol layer between the CDR codec ([`corbina_cdr`]) and the ORB
//! runtime. It owns every GIOP byte and no socket. A [`GiopConnection`] is one connection's
//! protocol state for the client role, the server role or both: the runtime reads into its
//! buffer and drains [`Event`]s — requests and replies decoded in place into typed headers
//! ([`RequestHeaderView`], [`ReplyHeader`], …) plus a [`Body`] that a generated skeleton or
//! stub reads with a [`CdrReader`](corbina_cdr::CdrReader) — and asks it to encode requests
//! and replies, fragmented when large ([`connection::Outgoing`]). The message types live one
//! per module ([`request`], [`reply`], [`locate`], …); object references ([`Ior`],
//! [`IiopProfile`]) and URLs ([`Corbaloc`], [`Corbaname`]) live here too.
//!
//! Every decoder takes hostile input: errors are [`GiopError`] values, lengths are checked
//! before use, nothing panics.
//!
//! ```
//! use corbina_cdr::CodeSets;
//! use corbina_giop::connection::RequestStart;
//! use corbina_giop::{Event, GiopConnection, ObjectKey, Role, Settings, TargetAddress, Version};
//!
//! // Client: a GIOP 1.2 Request for echo("hi").
//! let mut client = GiopConnection::new(Settings::new(Role::Client));
//! let target = TargetAddress::Key(ObjectKey::from("key"));
//! let start = RequestStart::new(Version::V1_2, CodeSets::UNICODE, &target, "echo", true);
//! let mut req = client.start_request(Vec::new(), &start)?;
//! req.body().write_string("hi")?;
//! let bytes = client.finish_request(req)?.contiguous().unwrap().to_vec();
//!
//! // Server: bytes arrive in pieces; the connection yields the whole request.
//! let mut server = GiopConnection::new(Settings::new(Role::Server));
//! server.push(&bytes[..10]);
//! assert!(server.poll_event()?.is_none());
//! server.push(&bytes[10..]);
//! let Some(Event::Request { header, body, reply }) = server.poll_event()? else { unreachable!() };
//! assert_eq!(header.operation, "echo");
//! assert_eq!(header.target.resolve_key()?.as_deref(), Some(&b"key"[..]));
//! let mut args = body.reader(reply.code_sets);
//! assert_eq!(args.read_string()?, "hi");
//! args.expect_end()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cancel;
pub mod close;
pub mod connection;
pub mod corbaloc;
mod encap;
pub mod error;
pub mod fragment;
pub mod fragmenter;
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
pub use connection::{ConnectionError, Event, GiopConnection, Role, Settings};
pub use corbaloc::{
    format_corbaloc, Corbaloc, Corbaname, IiopAddress, ObjAddr, ObjectUrl, UrlError,
};
pub use error::{GiopError, Result};
pub use fragment::FragmentHeader;
pub use fragmenter::{fragment_message, fragment_message_avoiding, OutgoingFragment};
pub use header::{MessageHeader, MsgType, Version, HEADER_LEN};
pub use iiop::{
    CodeSetComponent, CodeSetComponentInfo, Component, IiopProfile, SslSecTrans, TaggedComponent,
};
pub use ior::{Ior, IorStringError, TaggedProfile};
pub use locate::{LocateReplyHeader, LocateRequestHeader, LocateStatus};
pub use message::{
    decode_message, decode_message_view, Body, GiopMessage, GiopMessageView, Message,
    MessageWriter, OwnedBody,
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
