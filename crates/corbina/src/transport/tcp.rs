//! TCP: IIOP proper. Nagle's algorithm is off on every connection (seeds 002, 004).

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use super::socket::SocketConnection;
use super::{BoundEndpoint, Connection, ConnectionOptions, Listener};

/// Nagle off, socket buffer sizes (TCP and TLS connections).
pub(crate) fn configure_stream(stream: &TcpStream, options: &ConnectionOptions) -> io::Result<()> {
    stream.set_nodelay(true)?;
    if let Some(size) = options.socket_buffer_size {
        let sock = socket2::SockRef::from(stream);
        let _ = sock.set_send_buffer_size(size);
        let _ = sock.set_recv_buffer_size(size);
    }
    Ok(())
}

fn configure(stream: TcpStream, options: &ConnectionOptions) -> io::Result<Arc<dyn Connection>> {
    configure_stream(&stream, options)?;
    Ok(Arc::new(SocketConnection(stream)))
}

/// Connects to `host:port`, trying each resolved address within `timeout`.
pub fn connect(
    host: &str,
    port: u16,
    timeout: Duration,
    options: &ConnectionOptions,
) -> io::Result<Arc<dyn Connection>> {
    configure(connect_stream(host, port, timeout, options)?, options)
}

/// [`connect`]'s socket, configured.
pub(crate) fn connect_stream(
    host: &str,
    port: u16,
    timeout: Duration,
    options: &ConnectionOptions,
) -> io::Result<TcpStream> {
    let start = std::time::Instant::now();
    let mut last: io::Error = io::ErrorKind::AddrNotAvailable.into();
    for addr in (host, port).to_socket_addrs()? {
        let left = timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        match TcpStream::connect_timeout(&addr, left) {
            Ok(stream) => {
                configure_stream(&stream, options)?;
                return Ok(stream);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// A bound TCP endpoint.
pub struct TcpEndpoint {
    listener: TcpListener,
    address: SocketAddr,
    options: ConnectionOptions,
}

impl TcpEndpoint {
    /// Binds `host:port` (port 0: ephemeral).
    pub fn bind(host: &str, port: u16, options: ConnectionOptions) -> io::Result<TcpEndpoint> {
        let listener = TcpListener::bind((host, port))?;
        let address = listener.local_addr()?;
        Ok(TcpEndpoint {
            listener,
            address,
            options,
        })
    }
}

impl Listener for TcpEndpoint {
    fn accept(&self) -> io::Result<Arc<dyn Connection>> {
        let (stream, _) = self.listener.accept()?;
        configure(stream, &self.options)
    }

    fn bound(&self) -> BoundEndpoint {
        BoundEndpoint::Tcp(self.address)
    }
}
