//! Unix-domain stream sockets: omniORB's `giop:unix:` transport (TAO calls it UIOP). The
//! same GIOP bytes as TCP, without the TCP/IP stack; published in IORs with omniORB's
//! `TAG_OMNIORB_UNIX_TRANS` component so that omniORB clients on this host use it too.

use std::io;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::socket::SocketConnection;
use super::{BoundEndpoint, Connection, ConnectionOptions, Listener};

fn configure(stream: UnixStream, options: &ConnectionOptions) -> Arc<dyn Connection> {
    if let Some(size) = options.socket_buffer_size {
        let sock = socket2::SockRef::from(&stream);
        let _ = sock.set_send_buffer_size(size);
        let _ = sock.set_recv_buffer_size(size);
    }
    Arc::new(SocketConnection(stream))
}

/// Connects to the socket at `path` (a local connect either succeeds or fails at once).
pub fn connect(path: &Path, options: &ConnectionOptions) -> io::Result<Arc<dyn Connection>> {
    Ok(configure(UnixStream::connect(path)?, options))
}

/// Binds a listening socket at `path`, replacing a stale socket file left by a process that
/// died (one nobody accepts on); a live one is `AddrInUse`, any other file is left alone.
pub(crate) fn bind_path(path: &Path) -> io::Result<UnixListener> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_socket() => {
            if UnixStream::connect(path).is_ok() {
                return Err(io::ErrorKind::AddrInUse.into());
            }
            std::fs::remove_file(path)?;
        }
        Ok(_) => return Err(io::ErrorKind::AlreadyExists.into()),
        Err(_) => {}
    }
    UnixListener::bind(path)
}

/// A bound Unix-domain endpoint; the socket file is removed when it is dropped.
pub struct UnixEndpoint {
    listener: UnixListener,
    path: PathBuf,
    options: ConnectionOptions,
}

impl UnixEndpoint {
    /// Binds the socket at `path`.
    pub fn bind(path: &Path, options: ConnectionOptions) -> io::Result<UnixEndpoint> {
        Ok(UnixEndpoint {
            listener: bind_path(path)?,
            path: path.to_owned(),
            options,
        })
    }
}

impl Listener for UnixEndpoint {
    fn accept(&self) -> io::Result<Arc<dyn Connection>> {
        let (stream, _) = self.listener.accept()?;
        Ok(configure(stream, &self.options))
    }

    fn bound(&self) -> BoundEndpoint {
        BoundEndpoint::Unix(self.path.clone())
    }
}

impl Drop for UnixEndpoint {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
