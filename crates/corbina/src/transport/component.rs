//! The tagged components that publish local transports in an IIOP profile: where on this
//! host the server also listens, so that a client on the same host can skip TCP.
//!
//! Both hold the same encapsulation, `{ string host; string path; }` (the strings are raw
//! bytes: a path need not be text), and a client uses one only when `host` is its own host
//! name (`gethostname`) and the path exists.
//!
//! - [`TAG_OMNIORB_UNIX_TRANS`] (`0x41545402`): omniORB's component for its `giop:unix`
//!   endpoints. omniORB clients read ours, and we read theirs.
//! - [`TAG_CORBINA_SHM_TRANS`] (`0x43424e01`, "CBN" + 1): Corbina's shared-memory endpoint.
//!   Not OMG-assigned: it sits in the range of Corbina's ORB type id (`0x43424e00`,
//!   `TAG_ORB_TYPE`), like omniORB's tags sit in its `0x415454xx`; other ORBs ignore it.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter, MarshalError};
use crate::giop::TaggedComponent;

use super::{Address, TransportKind};

/// omniORB's `IOP::TAG_OMNIORB_UNIX_TRANS`: a Unix-domain socket of the server.
pub const TAG_OMNIORB_UNIX_TRANS: u32 = 0x4154_5402;
/// Corbina's shared-memory transport component (vendor range, not OMG-assigned).
pub const TAG_CORBINA_SHM_TRANS: u32 = 0x4342_4e01;

/// A local transport endpoint as published in an IOR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalTransport {
    /// [`TransportKind::Unix`] or [`TransportKind::Shm`].
    pub kind: TransportKind,
    /// The host the endpoint is on (its `gethostname`).
    pub host: String,
    /// The socket path.
    pub path: PathBuf,
}

fn write_raw(w: &mut CdrWriter<'_>, bytes: &[u8]) -> Result<(), MarshalError> {
    w.write_length(bytes.len() + 1)?;
    w.write_bytes(bytes);
    w.write_octet(0);
    Ok(())
}

impl LocalTransport {
    /// The component for this endpoint (`None` for TCP, which the profile itself carries).
    pub fn to_component(&self, order: ByteOrder) -> Option<TaggedComponent> {
        let tag = match self.kind {
            TransportKind::Unix => TAG_OMNIORB_UNIX_TRANS,
            TransportKind::Shm => TAG_CORBINA_SHM_TRANS,
            TransportKind::Tcp | TransportKind::Ssl => return None,
        };
        let mut w = CdrWriter::with_byte_order(order, CdrContext::GIOP_1_2);
        w.set_splice_threshold(usize::MAX);
        w.write_octet(order.flag());
        write_raw(&mut w, self.host.as_bytes()).ok()?;
        write_raw(&mut w, self.path.as_os_str().as_bytes()).ok()?;
        Some(TaggedComponent {
            tag,
            component_data: w.into_bytes(),
        })
    }

    /// Reads one of the two components; `None` for other tags, `Some(Err)` for a
    /// malformed one.
    pub fn from_component(c: &TaggedComponent) -> Option<Result<LocalTransport, MarshalError>> {
        let kind = match c.tag {
            TAG_OMNIORB_UNIX_TRANS => TransportKind::Unix,
            TAG_CORBINA_SHM_TRANS => TransportKind::Shm,
            _ => return None,
        };
        Some(decode(kind, &c.component_data))
    }

    /// Whether a client on this host can use it: same host name, and the path exists.
    pub fn is_reachable_here(&self) -> bool {
        self.host == local_host_name() && self.path.exists()
    }

    /// The address a rope connects to.
    pub fn address(&self) -> Address {
        match self.kind {
            TransportKind::Shm => Address::Shm(self.path.clone()),
            _ => Address::Unix(self.path.clone()),
        }
    }
}

fn decode(kind: TransportKind, data: &[u8]) -> Result<LocalTransport, MarshalError> {
    let order = match data.first() {
        Some(0) => ByteOrder::Big,
        Some(1) => ByteOrder::Little,
        Some(&value) => return Err(MarshalError::InvalidByteOrder { offset: 0, value }),
        None => {
            return Err(MarshalError::EndOfData {
                offset: 0,
                needed: 1,
                remaining: 0,
            })
        }
    };
    let mut r = CdrReader::new(data, order, CdrContext::GIOP_1_2).starting_at(1);
    let host = String::from_utf8_lossy(r.read_string_bytes()?).into_owned();
    let path = Path::new(OsStr::from_bytes(r.read_string_bytes()?)).to_owned();
    r.expect_end()?;
    if path.as_os_str().is_empty() {
        return Err(MarshalError::InvalidValue {
            offset: 0,
            reason: "empty socket path",
        });
    }
    Ok(LocalTransport { kind, host, path })
}

/// This host's name, as `gethostname` gives it (what omniORB compares the component's
/// host with).
pub fn local_host_name() -> &'static str {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        rustix::system::uname()
            .nodename()
            .to_string_lossy()
            .into_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_round_trip_and_match_omniorb_layout() {
        let t = LocalTransport {
            kind: TransportKind::Unix,
            host: "vm".into(),
            path: "/tmp/s".into(),
        };
        let c = t.to_component(ByteOrder::Big).unwrap();
        assert_eq!(c.tag, 0x4154_5402);
        // Byte order, then two CDR strings with their NULs (omniORB's marshalRawString).
        assert_eq!(
            c.component_data,
            b"\0\0\0\0\0\0\0\x03vm\0\0\0\0\0\x07/tmp/s\0".to_vec()
        );
        assert_eq!(LocalTransport::from_component(&c).unwrap().unwrap(), t);
        let s = LocalTransport {
            kind: TransportKind::Shm,
            ..t.clone()
        };
        let c = s.to_component(ByteOrder::Little).unwrap();
        assert_eq!(c.tag, TAG_CORBINA_SHM_TRANS);
        assert_eq!(LocalTransport::from_component(&c).unwrap().unwrap(), s);
        assert!(LocalTransport {
            kind: TransportKind::Tcp,
            ..t
        }
        .to_component(ByteOrder::Big)
        .is_none());
    }

    #[test]
    fn malformed_components_are_errors_not_panics() {
        for data in [
            &b""[..],
            b"\x07",
            b"\0\0\0\0\x03vm\0",
            b"\0\xff\xff\xff\xff",
            // An empty path; a trailing byte after the path.
            b"\0\0\0\0\0\0\0\x03vm\0\0\0\0\0\x01\0",
            b"\0\0\0\0\0\0\0\x03vm\0\0\0\0\0\x02/\0\0",
        ] {
            let c = TaggedComponent {
                tag: TAG_OMNIORB_UNIX_TRANS,
                component_data: data.to_vec(),
            };
            assert!(
                LocalTransport::from_component(&c).unwrap().is_err(),
                "{data:?}"
            );
        }
        let other = TaggedComponent {
            tag: 0,
            component_data: vec![],
        };
        assert!(LocalTransport::from_component(&other).is_none());
    }
}
