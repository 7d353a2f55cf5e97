//! The transport seam and message framing over it.
//!
//! GIOP runs over any byte stream (seed 001 §5: omniORB2's Strand interface). The runtime —
//! client ropes and strands, server connections, the thread pool — sees only a
//! [`Connection`] (read, vectored write, deadlines, shutdown, a nonblocking read and a
//! pollable descriptor for the pool) and a [`Listener`]; each transport implements them:
//!
//! | Transport | Endpoint | Published in IORs as |
//! |---|---|---|
//! | TCP ([`tcp`]) | `iiop://host:port`, `giop:tcp:host:port` | the IIOP profile's host and port |
//! | Unix-domain socket ([`unix`]) | `uiop:///path`, `giop:unix:/path` | `TAG_OMNIORB_UNIX_TRANS` (omniORB's component) |
//! | Shared memory ([`shm`]) | `shmiop:///path`, `giop:shm:/path` | `TAG_CORBINA_SHM_TRANS` (Corbina's own) |
//!
//! Dispatch costs one virtual call per system call (read, write, poll), never per byte.
//! Messages are moved whole: header first, then the body straight into its own buffer;
//! outgoing messages as one vectored write of the writer's segments.

pub mod component;
pub mod shm;
mod socket;
pub mod tcp;
pub mod unix;

use std::io::{self, IoSlice, Read, Write};
use std::net::Shutdown;
use std::os::fd::BorrowedFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::giop::{GiopError, Message, MessageHeader, HEADER_LEN};

pub use component::{
    local_host_name, LocalTransport, TAG_CORBINA_SHM_TRANS, TAG_OMNIORB_UNIX_TRANS,
};

/// Which transport a connection runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransportKind {
    /// TCP/IP (IIOP proper).
    Tcp,
    /// A Unix-domain stream socket (omniORB's `giop:unix`, TAO's UIOP).
    Unix,
    /// Shared-memory rings woken by futex, with a Unix-domain socket for the rendezvous,
    /// liveness and idle wake-ups.
    Shm,
}

/// One connection, whatever the transport. Methods take `&self` (like `&TcpStream`), so one
/// thread can read while another writes (the server's CloseConnection from the scavenger).
pub trait Connection: Send + Sync + std::fmt::Debug {
    /// The transport.
    fn kind(&self) -> TransportKind;
    /// Reads what is there (blocking until something is, up to the read timeout); `Ok(0)`
    /// at end of stream.
    fn read(&self, buf: &mut [u8]) -> io::Result<usize>;
    /// Writes some of `bufs` (blocking up to the write timeout); returns how much.
    fn write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize>;
    /// Bounds every following read (`None`: block as long as it takes).
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()>;
    /// Bounds every following write.
    fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()>;
    /// Shuts down one or both directions; a reader blocked on the other side (or on this
    /// side, for `Read`/`Both`) sees end of stream.
    fn shutdown(&self, how: Shutdown) -> io::Result<()>;
    /// Whether input (bytes or end of stream) is waiting, without blocking or consuming it.
    fn has_pending_input(&self) -> bool;
    /// Appends what has arrived to `buf`'s spare capacity (the caller reserves) without
    /// blocking: `Ok(0)` at end of stream, `WouldBlock` when nothing is there. After
    /// `WouldBlock`, [`Connection::poll_fd`] polls readable when there is more.
    fn read_nonblocking(&self, buf: &mut Vec<u8>) -> io::Result<usize>;
    /// The descriptor to `poll(2)` for input (the thread pool's leader waits on it).
    fn poll_fd(&self) -> BorrowedFd<'_>;
}

/// A bound endpoint that accepts connections.
pub trait Listener: Send + Sync {
    /// Waits for the next connection (transport handshake done).
    fn accept(&self) -> io::Result<Arc<dyn Connection>>;
    /// What was bound.
    fn bound(&self) -> BoundEndpoint;
}

/// What a listener bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoundEndpoint {
    /// A TCP address (ephemeral port resolved).
    Tcp(std::net::SocketAddr),
    /// A Unix-domain socket's path.
    Unix(PathBuf),
    /// A shared-memory endpoint's rendezvous socket path.
    Shm(PathBuf),
}

impl BoundEndpoint {
    /// Unblocks a thread waiting in [`Listener::accept`] on this endpoint, by connecting to
    /// it (server shutdown).
    pub fn wake(&self) {
        match self {
            BoundEndpoint::Tcp(a) => {
                let ip: std::net::IpAddr = match a.ip() {
                    std::net::IpAddr::V4(ip) if ip.is_unspecified() => {
                        std::net::Ipv4Addr::LOCALHOST.into()
                    }
                    std::net::IpAddr::V6(ip) if ip.is_unspecified() => {
                        std::net::Ipv6Addr::LOCALHOST.into()
                    }
                    ip => ip,
                };
                let _ = std::net::TcpStream::connect_timeout(
                    &std::net::SocketAddr::new(ip, a.port()),
                    Duration::from_secs(1),
                );
            }
            BoundEndpoint::Unix(p) | BoundEndpoint::Shm(p) => {
                let _ = std::os::unix::net::UnixStream::connect(p);
            }
        }
    }
}

/// Where a rope connects: one per peer address space and transport.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Address {
    /// `host:port` over TCP.
    Tcp {
        /// Host name or address.
        host: String,
        /// Port.
        port: u16,
    },
    /// A Unix-domain socket.
    Unix(PathBuf),
    /// A shared-memory endpoint (its rendezvous socket).
    Shm(PathBuf),
}

/// Options applied to each new connection.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConnectionOptions {
    /// SO_SNDBUF/SO_RCVBUF (socket transports), if set.
    pub socket_buffer_size: Option<usize>,
}

impl Address {
    /// Opens a connection, giving up after `timeout`.
    pub fn connect(
        &self,
        timeout: Duration,
        options: &ConnectionOptions,
    ) -> io::Result<Arc<dyn Connection>> {
        match self {
            Address::Tcp { host, port } => tcp::connect(host, *port, timeout, options),
            Address::Unix(path) => unix::connect(path, options),
            Address::Shm(path) => shm::connect(path, timeout),
        }
    }

    /// The transport.
    pub fn kind(&self) -> TransportKind {
        match self {
            Address::Tcp { .. } => TransportKind::Tcp,
            Address::Unix(_) => TransportKind::Unix,
            Address::Shm(_) => TransportKind::Shm,
        }
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            Address::Tcp { host, port } => write!(f, "{host}:{port}"),
            Address::Unix(p) => write!(f, "uiop://{}", p.display()),
            Address::Shm(p) => write!(f, "shmiop://{}", p.display()),
        }
    }
}

/// A shared handle on a connection that is `Read` and `Write`, for the framing functions
/// below and `BufReader`.
#[derive(Debug, Clone)]
pub struct Stream(pub Arc<dyn Connection>);

impl std::ops::Deref for Stream {
    type Target = dyn Connection;
    fn deref(&self) -> &(dyn Connection + 'static) {
        &*self.0
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write_vectored(&[IoSlice::new(buf)])
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.0.write_vectored(bufs)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Why a message could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The peer closed the connection cleanly between messages.
    #[error("connection closed by peer")]
    Closed,
    /// The socket failed, or closed in the middle of a message, or timed out.
    #[error("i/o error: {0}")]
    Io(#[from] io::Error),
    /// The bytes are not GIOP (bad magic, version, type or size): answer MessageError.
    #[error("malformed message: {0}")]
    Malformed(#[from] GiopError),
}

/// Reads one message: 12 header bytes, checked, then exactly the body. Never reads past the
/// message; allocates only after the size was checked against `max_message_size`.
pub fn read_message(r: &mut impl Read, max_message_size: u32) -> Result<Message, ReadError> {
    read_message_into(r, max_message_size, Vec::new())
}

/// [`read_message`] into a reused buffer (its allocation is kept; get it back with
/// `Message::into_bytes` once the message is handled): no allocation per message.
pub fn read_message_into(
    r: &mut impl Read,
    max_message_size: u32,
    mut bytes: Vec<u8>,
) -> Result<Message, ReadError> {
    let mut header = [0u8; HEADER_LEN];
    let mut got = 0;
    while got < HEADER_LEN {
        match r.read(&mut header[got..]) {
            Ok(0) if got == 0 => return Err(ReadError::Closed),
            Ok(0) => return Err(ReadError::Io(io::ErrorKind::UnexpectedEof.into())),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    let h = MessageHeader::decode(&header)?;
    h.check(max_message_size)?;
    // Keep the reused buffer's old bytes (read_exact overwrites them all): zeroing a large
    // buffer for every message cost more than the read itself.
    bytes.truncate(h.total_len());
    bytes.resize(h.total_len(), 0);
    bytes[..HEADER_LEN].copy_from_slice(&header);
    r.read_exact(&mut bytes[HEADER_LEN..])?;
    Ok(Message::from_bytes(bytes)?)
}

/// Takes one complete message off the front of `buf` (bytes received so far on a
/// nonblocking connection): `Ok(None)` until all of it has arrived. The header is checked
/// (magic, version, type, `max_message_size`) as soon as its 12 bytes are there.
pub fn take_message(
    buf: &mut Vec<u8>,
    max_message_size: u32,
) -> Result<Option<Message>, ReadError> {
    match pending_len(buf, max_message_size)? {
        Some(total) if buf.len() >= total => {
            let rest = buf.split_off(total);
            let bytes = std::mem::replace(buf, rest);
            Ok(Some(Message::from_bytes(bytes)?))
        }
        _ => Ok(None),
    }
}

/// The total length of the message at the front of `buf`, once its header is there
/// (checked against `max_message_size`).
pub fn pending_len(buf: &[u8], max_message_size: u32) -> Result<Option<usize>, ReadError> {
    let Some(header) = buf.get(..HEADER_LEN) else {
        return Ok(None);
    };
    let mut h = [0u8; HEADER_LEN];
    h.copy_from_slice(header);
    let h = MessageHeader::decode(&h)?;
    h.check(max_message_size)?;
    Ok(Some(h.total_len()))
}

/// The largest buffer a connection keeps for reuse: one huge message must not pin its
/// memory on an idle connection for good.
pub const MAX_RECYCLED_BUFFER: usize = 4 << 20;

/// Returns `buf` for reuse, or a fresh empty vector if it has grown past
/// [`MAX_RECYCLED_BUFFER`].
pub fn recycle(buf: Vec<u8>) -> Vec<u8> {
    if buf.capacity() > MAX_RECYCLED_BUFFER {
        Vec::new()
    } else {
        buf
    }
}

/// Writes a finished message: one `write` when it is contiguous (the common case, and no
/// allocation), a vectored write of its segments when large blocks were spliced in.
pub fn write_message(w: &mut impl Write, message: &crate::cdr::CdrWriter<'_>) -> io::Result<()> {
    if message.is_contiguous() {
        w.write_all(message.owned_bytes())
    } else {
        write_segments(w, &message.segments())
    }
}

/// Writes every segment, in order, with as few system calls as the kernel allows.
pub fn write_segments(w: &mut impl Write, segments: &[&[u8]]) -> io::Result<()> {
    let mut slices: Vec<IoSlice<'_>> = segments.iter().map(|s| IoSlice::new(s)).collect();
    let mut rest = &mut slices[..];
    IoSlice::advance_slices(&mut rest, 0);
    while !rest.is_empty() {
        match w.write_vectored(rest) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// A GIOP 1.2 Request message (big-endian) whose body is `body`.
    fn giop(body: &[u8]) -> Vec<u8> {
        let mut m = b"GIOP\x01\x02\x00\x00".to_vec();
        m.extend_from_slice(&(body.len() as u32).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    #[test]
    fn reused_buffers_hold_exactly_the_new_message() {
        let big = giop(&[0xAA; 5000]);
        let small = giop(&[1, 2, 3]);
        let same = giop(&[7; 5000]);
        let mut stream: Vec<u8> = [big.clone(), small.clone(), same.clone()].concat();
        stream.extend_from_slice(&small[..7]); // a truncated header
        let mut r = io::Cursor::new(stream);
        let mut buf = Vec::new();
        for want in [&big, &small, &same] {
            let m = super::read_message_into(&mut r, 1 << 20, buf).unwrap();
            assert_eq!(m.bytes(), &want[..], "stale or lost bytes");
            buf = m.into_bytes();
        }
        assert!(matches!(
            super::read_message_into(&mut r, 1 << 20, buf.clone()),
            Err(ReadError::Io(_))
        ));
        assert!(matches!(
            super::read_message_into(&mut io::Cursor::new(Vec::new()), 1 << 20, buf.clone()),
            Err(ReadError::Closed)
        ));
        // Bad magic, and a size over the limit: refused before the buffer grows.
        let mut bad = big.clone();
        bad[0] = b'X';
        assert!(matches!(
            super::read_message_into(&mut io::Cursor::new(bad), 1 << 20, Vec::new()),
            Err(ReadError::Malformed(_))
        ));
        assert!(matches!(
            super::read_message_into(&mut io::Cursor::new(big), 100, Vec::new()),
            Err(ReadError::Malformed(_))
        ));
    }

    use super::*;
    use crate::cdr::{ByteOrder, CodeSets};
    use crate::giop::{MessageWriter, ObjectKey, RequestHeader, Version};

    #[test]
    fn messages_round_trip_through_a_stream() {
        let big = vec![7u8; 100_000];
        let h = RequestHeader::new(5, ObjectKey::new(b"k".to_vec()), "send");
        let mut m =
            MessageWriter::request(Version::V1_2, ByteOrder::Big, CodeSets::DEFAULT, &h).unwrap();
        m.body().write_octet_seq(&big).unwrap();
        let w = m.finish().unwrap();
        let mut wire = Vec::new();
        write_segments(&mut wire, &w.segments()).unwrap();
        write_segments(
            &mut wire,
            &[&crate::giop::close_connection(
                Version::V1_2,
                ByteOrder::Big,
            )],
        )
        .unwrap();
        let mut r = &wire[..];
        let m = read_message(&mut r, 1 << 20).unwrap();
        assert_eq!(m.bytes().len(), w.len());
        let m2 = read_message(&mut r, 1 << 20).unwrap();
        assert_eq!(m2.bytes().len(), 12);
        assert!(matches!(
            read_message(&mut r, 1 << 20),
            Err(ReadError::Closed)
        ));
        // Too large for the limit: refused before the body is allocated.
        let mut r = &wire[..];
        assert!(matches!(
            read_message(&mut r, 1000),
            Err(ReadError::Malformed(_))
        ));
        // Cut short.
        let mut r = &wire[..50];
        assert!(matches!(
            read_message(&mut r, 1 << 20),
            Err(ReadError::Io(_))
        ));
    }

    #[test]
    fn messages_are_taken_from_a_buffer_as_they_complete() {
        let h = RequestHeader::new(5, ObjectKey::new(b"k".to_vec()), "send");
        let mut m =
            MessageWriter::request(Version::V1_2, ByteOrder::Big, CodeSets::DEFAULT, &h).unwrap();
        m.body().write_octet_seq(&[1, 2, 3]).unwrap();
        let w = m.finish().unwrap();
        let mut wire = Vec::new();
        write_segments(&mut wire, &w.segments()).unwrap();
        let close = crate::giop::close_connection(Version::V1_2, ByteOrder::Big);
        wire.extend_from_slice(&close);
        let mut buf = Vec::new();
        let mut got = Vec::new();
        for b in &wire {
            buf.push(*b);
            if let Some(m) = take_message(&mut buf, 1 << 20).unwrap() {
                got.push(m.bytes().len());
            }
        }
        assert_eq!(got, [w.len(), 12]);
        assert!(buf.is_empty());
        // Bad magic is refused as soon as the header is there; so is an oversized message.
        let mut bad = b"GIOX\x01\x02\x00\x00\x00\x00\x00\x00".to_vec();
        assert!(matches!(
            take_message(&mut bad, 1 << 20),
            Err(ReadError::Malformed(_))
        ));
        let mut big = wire.clone();
        assert!(matches!(
            take_message(&mut big, 16),
            Err(ReadError::Malformed(_))
        ));
    }
}
