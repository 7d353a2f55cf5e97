//! The [`Connection`] of the socket transports (TCP and Unix-domain): every method is one
//! system call on the socket.

use std::io::{self, IoSlice};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use rustix::net::RecvFlags;

use super::{Connection, TransportKind};

/// What the socket transports have in common (std's `TcpStream` and `UnixStream`).
pub(crate) trait Socket: AsFd + Send + Sync + std::fmt::Debug + 'static {
    const KIND: TransportKind;
    fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()>;
    fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()>;
    fn shutdown(&self, how: Shutdown) -> io::Result<()>;
}

macro_rules! socket {
    ($ty:ty, $kind:expr) => {
        impl Socket for $ty {
            const KIND: TransportKind = $kind;
            fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
                <$ty>::set_read_timeout(self, t)
            }
            fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()> {
                <$ty>::set_write_timeout(self, t)
            }
            fn shutdown(&self, how: Shutdown) -> io::Result<()> {
                <$ty>::shutdown(self, how)
            }
        }
    };
}

socket!(TcpStream, TransportKind::Tcp);
socket!(UnixStream, TransportKind::Unix);

/// A socket as a [`Connection`].
#[derive(Debug)]
pub(crate) struct SocketConnection<S>(pub(crate) S);

impl<S: Socket> Connection for SocketConnection<S> {
    fn kind(&self) -> TransportKind {
        S::KIND
    }
    // The system calls straight (rustix), not through libc's wrappers: those add a thread
    // cancellation point, a few dozen instructions per call on the call path.
    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        Ok(rustix::net::recv(&self.0, buf, RecvFlags::empty())?.0)
    }
    fn write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        Ok(rustix::io::writev(&self.0, bufs)?)
    }
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.0.set_read_timeout(timeout)
    }
    fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.0.set_write_timeout(timeout)
    }
    fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.0.shutdown(how)
    }
    fn has_pending_input(&self) -> bool {
        let mut probe = [0u8; 1];
        !matches!(
            rustix::net::recv(
                &self.0,
                &mut probe[..],
                RecvFlags::PEEK | RecvFlags::DONTWAIT
            ),
            Err(rustix::io::Errno::AGAIN)
        )
    }
    fn read_nonblocking(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match rustix::net::recv(&self.0, &mut *buf, RecvFlags::DONTWAIT) {
                Ok((n, _)) => return Ok(n),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }
    fn poll_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}
