//! TLS: IIOP over TLS 1.2/1.3 on rustls (omniORB's `giop:ssl` transport, SSLIOP in IORs).
//!
//! A [`TlsConnection`] is a TCP socket and a rustls state machine. GIOP may read on one
//! thread while others write (a reader thread and workers replying on a bidirectional
//! connection), so the socket is never read or written under the TLS state's lock: a reader
//! reads ciphertext into its own buffer, then feeds rustls under the lock; a writer
//! encrypts under the lock into its own buffer, then writes it out. Reads, writes and the
//! TLS state each have their own lock, so a reader blocked on the socket holds up nobody.
//!
//! The server's handshakes run on a thread each, bounded by the accept timeout
//! (omniORB's `-ORBsslAcceptTimeOut`), so a stalled or garbage client never holds up other
//! accepts; [`TlsEndpoint::accept`] hands out connections whose handshake is done, and
//! reports each failed one as a [`TlsError`] (endpoint, phase, cause).
//!
//! Certificates and keys come from PEM files with omniORB's meanings: `-ORBsslCAFile` holds
//! the trusted CA certificates, `-ORBsslKeyFile` the private key and its certificate chain.

use std::io::{self, IoSlice, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags};
use rustix::net::{RecvFlags, SendFlags};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::{
    AlertDescription, CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore,
    ServerConfig, SignatureScheme,
};

use super::{tcp, BoundEndpoint, Connection, ConnectionOptions, Listener, TransportKind};
use crate::config::SslConfig;

/// Where a TLS connection failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsPhase {
    /// The TLS handshake (including a plain GIOP peer, garbage, a timeout).
    Handshake,
    /// Checking the peer's certificate (untrusted, expired, missing, wrong name).
    Verify,
    /// Reading or writing records after the handshake.
    Transfer,
}

impl std::fmt::Display for TlsPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TlsPhase::Handshake => "handshake",
            TlsPhase::Verify => "certificate verification",
            TlsPhase::Transfer => "data transfer",
        })
    }
}

/// Why TLS could not be configured or a TLS connection failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TlsError {
    /// A certificate or key file could not be used.
    #[error("TLS configuration: {what} `{}`: {cause}", path.display())]
    File {
        /// Which file (`-ORBsslCAFile`, `-ORBsslKeyFile`).
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// What is wrong with it.
        cause: String,
    },
    /// The settings do not make a usable configuration.
    #[error("TLS configuration: {0}")]
    Config(String),
    /// One connection failed.
    #[error("TLS {phase} failed on {endpoint}: {cause}")]
    Connection {
        /// `giop:ssl:host:port`, and the peer's address on a server.
        endpoint: String,
        /// Where it failed.
        phase: TlsPhase,
        /// Why.
        cause: String,
    },
}

impl TlsError {
    /// The TLS error an I/O error of this transport carries, if it is one.
    pub fn of(e: &io::Error) -> Option<&TlsError> {
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<TlsError>())
    }

    fn into_io(self, kind: io::ErrorKind) -> io::Error {
        io::Error::new(kind, self)
    }
}

/// ring's suites with AES-128-GCM first in each protocol version: 10 AES rounds a block
/// against AES-256's 14, and a null call is two short records. Every TLS 1.3 peer has it
/// (RFC 8446's mandatory suite), omniORB's OpenSSL and JacORB's JSSE included; the others
/// stay offered after it.
fn provider() -> Arc<CryptoProvider> {
    let mut p = rustls::crypto::ring::default_provider();
    p.cipher_suites
        .sort_by_key(|s| (s.tls13().is_none(), !is_aes128_gcm(s.suite())));
    Arc::new(p)
}

fn is_aes128_gcm(suite: rustls::CipherSuite) -> bool {
    use rustls::CipherSuite as S;
    matches!(
        suite,
        S::TLS13_AES_128_GCM_SHA256
            | S::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
            | S::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
    )
}

fn file_error(what: &'static str, path: &Path, cause: impl std::fmt::Display) -> TlsError {
    TlsError::File {
        what,
        path: path.to_owned(),
        cause: cause.to_string(),
    }
}

/// The certificates in a PEM file (other sections are skipped).
fn read_certs(
    what: &'static str,
    path: &Path,
    pem: &[u8],
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| file_error(what, path, e))?;
    if certs.is_empty() {
        return Err(file_error(what, path, "no CERTIFICATE in it"));
    }
    Ok(certs)
}

/// `-ORBsslKeyFile`: the private key and its certificate chain, in one PEM file.
fn read_key_file(
    path: &Path,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), TlsError> {
    const WHAT: &str = "key file (-ORBsslKeyFile)";
    let pem = std::fs::read(path).map_err(|e| file_error(WHAT, path, e))?;
    // PKCS#8 `ENCRYPTED PRIVATE KEY` or a traditional key with `Proc-Type: 4,ENCRYPTED`.
    if pem.windows(9).any(|w| w == b"ENCRYPTED") {
        return Err(file_error(
            WHAT,
            path,
            "encrypted private keys are not supported (-ORBsslKeyPassword is accepted but \
             only for clear keys); decrypt it with `openssl pkey -in KEY -out CLEAR` and \
             protect the file instead",
        ));
    }
    let certs = read_certs(WHAT, path, &pem).map_err(|_| {
        file_error(
            WHAT,
            path,
            "no CERTIFICATE in it: it must hold the private key and its certificate chain",
        )
    })?;
    let key = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => {
            file_error(WHAT, path, "no PRIVATE KEY in it")
        }
        e => file_error(WHAT, path, e),
    })?;
    Ok((certs, key))
}

/// `-ORBsslCAFile` and `-ORBsslCAPath`: the certificate authorities trusted to sign peers'
/// certificates; `None` when neither is set.
fn read_roots(ssl: &SslConfig) -> Result<Option<Arc<RootCertStore>>, TlsError> {
    const FILE: &str = "CA file (-ORBsslCAFile)";
    const DIR: &str = "CA directory (-ORBsslCAPath)";
    if ssl.ca_file.is_none() && ssl.ca_path.is_none() {
        return Ok(None);
    }
    let mut roots = RootCertStore::empty();
    if let Some(path) = &ssl.ca_file {
        let pem = std::fs::read(path).map_err(|e| file_error(FILE, path, e))?;
        for cert in read_certs(FILE, path, &pem)? {
            roots.add(cert).map_err(|e| file_error(FILE, path, e))?;
        }
    }
    if let Some(dir) = &ssl.ca_path {
        // OpenSSL's CA directory (omniORB's option): every file holding certificates;
        // others (an index, a README) are skipped.
        let entries = std::fs::read_dir(dir).map_err(|e| file_error(DIR, dir, e))?;
        let mut found = false;
        for entry in entries {
            let path = entry.map_err(|e| file_error(DIR, dir, e))?.path();
            let Ok(pem) = std::fs::read(&path) else {
                continue;
            };
            for cert in CertificateDer::pem_slice_iter(&pem).flatten() {
                roots.add(cert).map_err(|e| file_error(DIR, &path, e))?;
                found = true;
            }
        }
        if !found {
            return Err(file_error(DIR, dir, "no file in it holds a CERTIFICATE"));
        }
    }
    Ok(Some(Arc::new(roots)))
}

/// Checks a server's certificate: its chain against the CA file (`peer`), its name
/// against the host connected to (unless turned off), or nothing at all (`none`).
#[derive(Debug)]
struct ServerCheck {
    chain: Option<Arc<WebPkiServerVerifier>>,
    check_host_name: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for ServerCheck {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_host_name => Ok(ServerCertVerified::assertion()),
            r => r,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The client side's rustls configuration for `ssl`: servers verified against the CA file
/// (unless `-ORBsslVerifyMode none`), the key file's certificate offered if there is one.
pub fn client_config(ssl: &SslConfig) -> Result<Arc<ClientConfig>, TlsError> {
    let provider = provider();
    let chain = if ssl.verify_mode.peer {
        let roots = read_roots(ssl)?.ok_or_else(|| {
            TlsError::Config(
                "-ORBsslCAFile (or -ORBsslCAPath) is needed to verify servers \
                 (or -ORBsslVerifyMode none)"
                    .into(),
            )
        })?;
        let verifier = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
            .build()
            .map_err(|e| TlsError::Config(e.to_string()))?;
        Some(verifier)
    } else {
        None
    };
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(ServerCheck {
            chain,
            check_host_name: ssl.check_host_name,
            provider,
        }));
    let config = match &ssl.key_file {
        Some(path) => {
            let (certs, key) = read_key_file(path)?;
            builder
                .with_client_auth_cert(certs, key)
                .map_err(|e| file_error("key file (-ORBsslKeyFile)", path, e))?
        }
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

/// The server side's rustls configuration for `ssl`: the key file's certificate; client
/// certificates asked for with `peer` (checked against the CA file) and required with
/// `peer,fail`.
pub fn server_config(ssl: &SslConfig) -> Result<Arc<ServerConfig>, TlsError> {
    let path = ssl.key_file.as_deref().ok_or_else(|| {
        TlsError::Config("a TLS endpoint needs -ORBsslKeyFile (its key and certificate)".into())
    })?;
    let (certs, key) = read_key_file(path)?;
    let provider = provider();
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?;
    let mode = ssl.verify_mode;
    let builder = match (read_roots(ssl)?, mode.peer) {
        (Some(roots), true) => {
            let b = WebPkiClientVerifier::builder_with_provider(roots, provider);
            let b = if mode.fail {
                b
            } else {
                b.allow_unauthenticated()
            };
            builder
                .with_client_cert_verifier(b.build().map_err(|e| TlsError::Config(e.to_string()))?)
        }
        (None, true) if mode.fail => {
            return Err(TlsError::Config(
                "-ORBsslVerifyMode peer,fail needs -ORBsslCAFile to check clients with".into(),
            ))
        }
        _ => builder.with_no_client_auth(),
    };
    let config = builder
        .with_single_cert(certs, key)
        .map_err(|e| file_error("key file (-ORBsslKeyFile)", path, e))?;
    Ok(Arc::new(config))
}

/// Ciphertext read off the socket and not yet given to rustls.
struct Input {
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    eof: bool,
}

/// How [`TlsConnection::read_records`] waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadMode {
    Blocking,
    Nonblocking,
    Peek,
}

/// One socket read: a TLS record with its header and the largest expansion.
const READ_SIZE: usize = 18 * 1024;

/// A TLS connection over TCP, handshake done.
pub struct TlsConnection {
    socket: TcpStream,
    tls: Mutex<rustls::Connection>,
    /// Held by the (one) reader, also while it waits on the socket.
    input: Mutex<Input>,
    /// Held by a writer while it writes its records: they go out whole and in order.
    output: Mutex<Vec<u8>>,
    /// `input` holds ciphertext rustls has not seen (it may hold plaintext), for
    /// [`Connection::has_pending_input`], which cannot wait for a blocked reader.
    buffered: AtomicBool,
    endpoint: String,
    peer_certificates: Vec<CertificateDer<'static>>,
    /// The client's side of the connection.
    client: bool,
}

impl std::fmt::Debug for TlsConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConnection")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The phase a rustls error belongs to.
fn phase_of(e: &rustls::Error, handshaking: bool) -> TlsPhase {
    use AlertDescription as A;
    match e {
        rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented => {
            TlsPhase::Verify
        }
        rustls::Error::AlertReceived(
            A::BadCertificate
            | A::UnsupportedCertificate
            | A::CertificateRevoked
            | A::CertificateExpired
            | A::CertificateUnknown
            | A::UnknownCA
            | A::CertificateRequired,
        ) => TlsPhase::Verify,
        _ if handshaking => TlsPhase::Handshake,
        _ => TlsPhase::Transfer,
    }
}

/// The socket written without blocking: `WouldBlock` when it is full.
struct Nonblocking<'a>(&'a TcpStream);

impl Write for Nonblocking<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_vectored(&[IoSlice::new(buf)])
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        rustix::net::sendmsg(
            self.0,
            bufs,
            &mut rustix::net::SendAncillaryBuffer::default(),
            SendFlags::DONTWAIT | SendFlags::NOSIGNAL,
        )
        .map_err(io::Error::from)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Records the first bytes a peer sent, to tell a plain GIOP client from garbage.
struct FirstBytes<'a> {
    socket: &'a TcpStream,
    seen: [u8; 4],
    len: usize,
}

impl Read for FirstBytes<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (&mut &*self.socket).read(buf)?;
        let take = n.min(4 - self.len);
        self.seen[self.len..self.len + take].copy_from_slice(&buf[..take]);
        self.len += take;
        Ok(n)
    }
}

fn remaining(deadline: Instant) -> Option<Duration> {
    Some(deadline.checked_duration_since(Instant::now())?).filter(|d| !d.is_zero())
}

impl TlsConnection {
    /// Runs the handshake on `socket` until `deadline`; the connection once it is done.
    fn handshake(
        socket: TcpStream,
        mut tls: rustls::Connection,
        deadline: Instant,
        endpoint: String,
    ) -> Result<TlsConnection, TlsError> {
        let fail = |phase, cause: String| TlsError::Connection {
            endpoint: endpoint.clone(),
            phase,
            cause,
        };
        let timed_out = || {
            fail(
                TlsPhase::Handshake,
                "timed out (-ORBsslAcceptTimeOut / -ORBConnectTimeout)".into(),
            )
        };
        let io_fail = |e: io::Error| match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => timed_out(),
            _ => fail(TlsPhase::Handshake, e.to_string()),
        };
        let mut input = FirstBytes {
            socket: &socket,
            seen: [0; 4],
            len: 0,
        };
        let plain_giop = |input: &FirstBytes<'_>| input.len == 4 && &input.seen == b"GIOP";
        loop {
            while tls.wants_write() {
                let left = remaining(deadline).ok_or_else(timed_out)?;
                socket.set_write_timeout(Some(left)).map_err(io_fail)?;
                tls.write_tls(&mut &socket).map_err(io_fail)?;
            }
            if !tls.is_handshaking() {
                break;
            }
            let left = remaining(deadline).ok_or_else(timed_out)?;
            socket.set_read_timeout(Some(left)).map_err(io_fail)?;
            match tls.read_tls(&mut input) {
                Ok(0) if plain_giop(&input) => {
                    return Err(fail(
                        TlsPhase::Handshake,
                        "the peer spoke plain GIOP, not TLS".into(),
                    ))
                }
                Ok(0) => {
                    return Err(fail(
                        TlsPhase::Handshake,
                        "the peer closed the connection during the handshake".into(),
                    ))
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io_fail(e)),
            }
            if let Err(e) = tls.process_new_packets() {
                // Tell the peer why (the alert rustls queued), best effort.
                let _ = socket.set_write_timeout(remaining(deadline));
                let _ = tls.write_tls(&mut &socket);
                if plain_giop(&input) {
                    return Err(fail(
                        TlsPhase::Handshake,
                        "the peer spoke plain GIOP, not TLS".into(),
                    ));
                }
                return Err(fail(phase_of(&e, true), e.to_string()));
            }
        }
        let reset = socket
            .set_read_timeout(None)
            .and_then(|()| socket.set_write_timeout(None));
        reset.map_err(io_fail)?;
        let peer_certificates = tls
            .peer_certificates()
            .map(|c| c.to_vec())
            .unwrap_or_default();
        let client = matches!(tls, rustls::Connection::Client(_));
        Ok(TlsConnection {
            client,
            socket,
            tls: Mutex::new(tls),
            input: Mutex::new(Input {
                buf: vec![0; READ_SIZE].into_boxed_slice(),
                start: 0,
                end: 0,
                eof: false,
            }),
            output: Mutex::new(Vec::new()),
            buffered: AtomicBool::new(false),
            endpoint,
            peer_certificates,
        })
    }

    /// The peer's certificate chain (end entity first), as checked by the handshake; empty
    /// when the peer sent none.
    pub fn peer_certificates(&self) -> &[CertificateDer<'static>] {
        &self.peer_certificates
    }

    fn transfer_error(&self, e: &rustls::Error) -> io::Error {
        TlsError::Connection {
            endpoint: self.endpoint.clone(),
            phase: phase_of(e, false),
            cause: e.to_string(),
        }
        .into_io(io::ErrorKind::InvalidData)
    }

    /// Writes what rustls has queued (the records of `out`'s owner, or an alert): straight
    /// from rustls's buffers while the socket takes them without blocking, the rest copied
    /// into `out` and written after `tls`, the TLS state's lock, is let go (a writer blocked
    /// on a full socket must not hold up the reader).
    fn flush(
        &self,
        mut tls: MutexGuard<'_, rustls::Connection>,
        out: &mut Vec<u8>,
    ) -> io::Result<()> {
        while tls.wants_write() {
            match tls.write_tls(&mut Nonblocking(&self.socket)) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    while tls.wants_write() {
                        tls.write_tls(out)?;
                    }
                }
                Err(e) => return Err(e),
            }
        }
        drop(tls);
        if out.is_empty() {
            return Ok(());
        }
        let r = (&self.socket).write_all(out);
        out.clear();
        r
    }

    /// Sends what a reader made rustls queue (an alert, a key update), unless a writer is at
    /// work: it sends it with its own records.
    fn flush_from_reader(&self) {
        if let Ok(mut out) = self.output.try_lock() {
            let _ = self.flush(lock(&self.tls), &mut out);
        }
    }

    /// Reads plaintext into `buf` (`Peek`: only says whether there is some, or the end,
    /// with `Ok`), feeding rustls what the socket has; `WouldBlock` unless `Blocking`.
    fn read_records(&self, input: &mut Input, buf: &mut [u8], mode: ReadMode) -> io::Result<usize> {
        // Just read from the socket: rustls had no plaintext then (the reader went to the
        // socket because it had none, and only the reader feeds rustls), so the records go
        // in before asking it for some.
        let mut fresh = false;
        loop {
            let mut flush = false;
            {
                let mut tls = lock(&self.tls);
                loop {
                    if mode == ReadMode::Peek {
                        // Records that carry no data (TLS 1.3 session tickets) are not input.
                        match tls.process_new_packets() {
                            Ok(s) if s.plaintext_bytes_to_read() > 0 || s.peer_has_closed() => {
                                return Ok(1)
                            }
                            Ok(_) => {}
                            Err(e) => return Err(self.transfer_error(&e)),
                        }
                    } else if !fresh {
                        match tls.reader().read(buf) {
                            Ok(n) => return Ok(n),
                            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                            // A peer that closes without close_notify: GIOP framing tells a
                            // cut message from a finished one.
                            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                            Err(e) => return Err(e),
                        }
                    }
                    fresh = false;
                    if input.start == input.end {
                        if input.eof {
                            return Ok(0);
                        }
                        break;
                    }
                    let Input {
                        buf: raw,
                        start,
                        end,
                        ..
                    } = input;
                    let mut rest = &raw[*start..*end];
                    let n = tls.read_tls(&mut rest)?;
                    if n == 0 {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            "TLS record buffer full",
                        ));
                    }
                    *start += n;
                    self.buffered.store(*start < *end, Ordering::Release);
                    if let Err(e) = tls.process_new_packets() {
                        drop(tls);
                        self.flush_from_reader();
                        return Err(self.transfer_error(&e));
                    }
                    flush |= tls.wants_write();
                }
            }
            if flush {
                self.flush_from_reader();
            }
            input.start = 0;
            input.end = 0;
            let got = if mode == ReadMode::Blocking {
                (&self.socket).read(&mut input.buf)
            } else {
                rustix::net::recv(&self.socket, &mut input.buf[..], RecvFlags::DONTWAIT)
                    .map(|(n, _)| n)
                    .map_err(io::Error::from)
            };
            match got {
                Ok(0) => {
                    input.eof = true;
                    let mut tls = lock(&self.tls);
                    // Tells rustls the stream ended (a reader then sees its end or error).
                    let _ = tls.read_tls(&mut &[][..]);
                    if let Err(e) = tls.process_new_packets() {
                        return Err(self.transfer_error(&e));
                    }
                }
                Ok(n) => {
                    input.end = n;
                    fresh = true;
                    self.buffered.store(true, Ordering::Release);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

impl Connection for TlsConnection {
    fn kind(&self) -> TransportKind {
        TransportKind::Ssl
    }

    fn peer_certificate_chain(&self) -> Option<Vec<Vec<u8>>> {
        (!self.peer_certificates.is_empty())
            .then(|| self.peer_certificates.iter().map(|c| c.to_vec()).collect())
    }

    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.read_records(&mut lock(&self.input), buf, ReadMode::Blocking)
    }

    fn write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let mut out = lock(&self.output);
        // One hold of the TLS state to encrypt and send (the usual case: the socket takes
        // the records at once).
        let mut tls = lock(&self.tls);
        let n = tls.writer().write_vectored(bufs)?;
        self.flush(tls, &mut out)?;
        if out.capacity() > super::MAX_RECYCLED_BUFFER {
            *out = Vec::new();
        }
        Ok(n)
    }

    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.socket.set_read_timeout(timeout)
    }

    fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.socket.set_write_timeout(timeout)
    }

    fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        if how != Shutdown::Read {
            // close_notify, best effort and without waiting: a peer that reads nothing must
            // not hold up a close (nor a writer blocked on it).
            if let Ok(mut out) = self.output.try_lock() {
                let mut tls = lock(&self.tls);
                tls.send_close_notify();
                while tls.wants_write() {
                    if tls.write_tls(&mut *out).is_err() {
                        break;
                    }
                }
                drop(tls);
                let _ = rustix::net::send(&self.socket, &out[..], SendFlags::DONTWAIT);
                out.clear();
            }
        }
        self.socket.shutdown(how)
    }

    fn has_pending_input(&self) -> bool {
        // A client connection with no reader at work looks into the records that arrived:
        // the server's TLS 1.3 session tickets are no input (else an idle strand would look
        // closed by the server). Not on a server: its connections may wait in the pool's
        // poll set, which must still see the bytes on the socket.
        if self.client {
            if let Ok(mut input) = self.input.try_lock() {
                return !matches!(
                    self.read_records(&mut input, &mut [], ReadMode::Peek),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock
                );
            }
        }
        if self.buffered.load(Ordering::Acquire) {
            return true;
        }
        match lock(&self.tls).process_new_packets() {
            Ok(state) if state.plaintext_bytes_to_read() > 0 || state.peer_has_closed() => {
                return true
            }
            Ok(_) => {}
            Err(_) => return true,
        }
        let mut probe = [0u8; 1];
        !matches!(
            rustix::net::recv(
                &self.socket,
                &mut probe[..],
                RecvFlags::PEEK | RecvFlags::DONTWAIT
            ),
            Err(rustix::io::Errno::AGAIN)
        )
    }

    fn read_nonblocking(&self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.read_records(&mut lock(&self.input), buf, ReadMode::Nonblocking)
    }

    fn poll_fd(&self) -> BorrowedFd<'_> {
        self.socket.as_fd()
    }
}

/// Connects to `host:port` and runs the client's handshake, all within `timeout`.
pub fn connect(
    host: &str,
    port: u16,
    timeout: Duration,
    options: &ConnectionOptions,
) -> io::Result<Arc<dyn Connection>> {
    let config = match &options.tls_client {
        Some(Ok(c)) => c.clone(),
        Some(Err(e)) => return Err(e.clone().into_io(io::ErrorKind::InvalidInput)),
        None => {
            return Err(TlsError::Config("no TLS client configuration".into())
                .into_io(io::ErrorKind::InvalidInput))
        }
    };
    let deadline = Instant::now() + timeout;
    let endpoint = if host.contains(':') {
        format!("giop:ssl:[{host}]:{port}")
    } else {
        format!("giop:ssl:{host}:{port}")
    };
    let name = ServerName::try_from(host.to_owned()).map_err(|e| {
        TlsError::Connection {
            endpoint: endpoint.clone(),
            phase: TlsPhase::Handshake,
            cause: format!("not a host name: {e}"),
        }
        .into_io(io::ErrorKind::InvalidInput)
    })?;
    let socket = tcp::connect_stream(host, port, timeout, options)?;
    let tls = rustls::ClientConnection::new(config, name)
        .map_err(|e| TlsError::Config(e.to_string()).into_io(io::ErrorKind::InvalidInput))?;
    match TlsConnection::handshake(socket, tls.into(), deadline, endpoint) {
        Ok(c) => Ok(Arc::new(c)),
        Err(e) => {
            let kind = match &e {
                TlsError::Connection { cause, .. } if cause.starts_with("timed out") => {
                    io::ErrorKind::TimedOut
                }
                _ => io::ErrorKind::ConnectionAborted,
            };
            Err(e.into_io(kind))
        }
    }
}

type Handshaken = Result<TlsConnection, TlsError>;

/// A server's TLS configuration, replaceable while its endpoints run (certificate
/// reload): handshakes started afterwards use the new one, connections made keep theirs.
#[derive(Clone)]
pub struct ServerTls(Arc<std::sync::RwLock<Arc<ServerConfig>>>);

impl ServerTls {
    /// The configuration new handshakes use.
    pub fn current(&self) -> Arc<ServerConfig> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Replaces it.
    pub fn replace(&self, config: Arc<ServerConfig>) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = config;
    }
}

impl From<Arc<ServerConfig>> for ServerTls {
    fn from(config: Arc<ServerConfig>) -> Self {
        ServerTls(Arc::new(std::sync::RwLock::new(config)))
    }
}

/// A client's TLS configuration, made from its settings when first needed and
/// replaceable (certificate reload): connections opened afterwards use the new one.
#[derive(Clone)]
pub struct ClientTls(Arc<Mutex<(SslConfig, Option<MadeClientConfig>)>>);

/// A client configuration made from settings, or why it could not be.
type MadeClientConfig = Result<Arc<ClientConfig>, TlsError>;

impl ClientTls {
    /// For `ssl`; nothing is read until a TLS connection is opened.
    pub fn new(ssl: SslConfig) -> ClientTls {
        ClientTls(Arc::new(Mutex::new((ssl, None))))
    }

    /// The configuration new connections use (or why there is none).
    pub fn current(&self) -> Result<Arc<ClientConfig>, TlsError> {
        let mut st = lock(&self.0);
        let (ssl, made) = &mut *st;
        made.get_or_insert_with(|| client_config(ssl)).clone()
    }

    /// Reads `ssl`'s files again and uses them for new connections; on error the current
    /// configuration stays.
    pub fn reload(&self, ssl: SslConfig) -> Result<(), TlsError> {
        let config = client_config(&ssl)?;
        *lock(&self.0) = (ssl, Some(Ok(config)));
        Ok(())
    }

    /// Uses `ssl` for new connections, its files read when the next one is opened.
    pub fn replace_lazily(&self, ssl: SslConfig) {
        *lock(&self.0) = (ssl, None);
    }
}

impl std::fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientTls")
    }
}

/// Most handshakes one endpoint runs at once (a thread each): past this, new connections
/// are refused at once rather than piling up threads.
const MAX_HANDSHAKES: usize = 256;

/// A bound TLS endpoint (`giop:ssl:host:port`).
pub struct TlsEndpoint {
    listener: TcpListener,
    address: SocketAddr,
    options: ConnectionOptions,
    config: ServerTls,
    accept_timeout: Duration,
    done_tx: mpsc::Sender<Handshaken>,
    done_rx: Mutex<mpsc::Receiver<Handshaken>>,
    /// A handshake thread writes a byte here when it has sent its result.
    wake_tx: Arc<UnixStream>,
    wake_rx: UnixStream,
    /// Handshakes running now.
    handshaking: Arc<std::sync::atomic::AtomicUsize>,
}

impl TlsEndpoint {
    /// Binds `host:port` (port 0: ephemeral) to accept TLS with `config`, each handshake
    /// bounded by `accept_timeout`.
    pub fn bind(
        host: &str,
        port: u16,
        options: ConnectionOptions,
        config: impl Into<ServerTls>,
        accept_timeout: Duration,
    ) -> io::Result<TlsEndpoint> {
        let config = config.into();
        let listener = TcpListener::bind((host, port))?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let (wake_tx, wake_rx) = UnixStream::pair()?;
        wake_tx.set_nonblocking(true)?;
        wake_rx.set_nonblocking(true)?;
        let (done_tx, done_rx) = mpsc::channel();
        Ok(TlsEndpoint {
            listener,
            address,
            options,
            config,
            accept_timeout,
            done_tx,
            done_rx: Mutex::new(done_rx),
            wake_tx: Arc::new(wake_tx),
            wake_rx,
            handshaking: Arc::default(),
        })
    }

    /// Starts the handshake of a new TCP connection on a thread of its own.
    fn start_handshake(&self, socket: TcpStream, peer: SocketAddr) {
        if socket.set_nonblocking(false).is_err()
            || tcp::configure_stream(&socket, &self.options).is_err()
        {
            return;
        }
        let endpoint = format!("giop:ssl:{} from {peer}", self.address);
        if self.handshaking.fetch_add(1, Ordering::AcqRel) >= MAX_HANDSHAKES {
            self.handshaking.fetch_sub(1, Ordering::AcqRel);
            let _ = self.done_tx.send(Err(TlsError::Connection {
                endpoint,
                phase: TlsPhase::Handshake,
                cause: format!("refused: {MAX_HANDSHAKES} handshakes already in progress"),
            }));
            return;
        }
        let handshaking = self.handshaking.clone();
        let config = self.config.current();
        let deadline = Instant::now() + self.accept_timeout;
        let done = self.done_tx.clone();
        let wake = self.wake_tx.clone();
        let spawned = std::thread::Builder::new()
            .name("corbina-tls-accept".into())
            .spawn(move || {
                let result = match rustls::ServerConnection::new(config) {
                    Ok(tls) => TlsConnection::handshake(socket, tls.into(), deadline, endpoint),
                    Err(e) => Err(TlsError::Config(e.to_string())),
                };
                handshaking.fetch_sub(1, Ordering::AcqRel);
                if done.send(result).is_ok() {
                    let _ = (&*wake).write(&[1]);
                }
            });
        if spawned.is_err() {
            self.handshaking.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Listener for TlsEndpoint {
    /// The next connection whose handshake succeeded, or the next failed handshake as an
    /// error of kind `ConnectionAborted` carrying its [`TlsError`].
    fn accept(&self) -> io::Result<Arc<dyn Connection>> {
        let done = lock(&self.done_rx);
        loop {
            if let Ok(result) = done.try_recv() {
                return match result {
                    Ok(c) => Ok(Arc::new(c)),
                    Err(e) => Err(e.into_io(io::ErrorKind::ConnectionAborted)),
                };
            }
            let mut fds = [
                PollFd::new(&self.listener, PollFlags::IN),
                PollFd::new(&self.wake_rx, PollFlags::IN),
            ];
            match poll(&mut fds, None) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
            if !fds[1].revents().is_empty() {
                let mut sink = [0u8; 64];
                while matches!((&self.wake_rx).read(&mut sink), Ok(n) if n > 0) {}
            }
            if !fds[0].revents().is_empty() {
                loop {
                    match self.listener.accept() {
                        Ok((socket, peer)) => self.start_handshake(socket, peer),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        // A connection reset before it was accepted.
                        Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => {}
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }

    fn bound(&self) -> BoundEndpoint {
        BoundEndpoint::Ssl(self.address)
    }
}

/// The TLS address a profile publishes (`TAG_SSL_SEC_TRANS`: its host, the component's
/// port), if it publishes one.
pub fn published(profile: &crate::giop::IiopProfile) -> Option<super::Address> {
    let ssl = profile.ssl_sec_trans().ok().flatten()?;
    (ssl.port != 0).then(|| super::Address::Ssl {
        host: profile.host.clone(),
        port: ssl.port,
    })
}

/// The component that publishes a TLS endpoint on `port` of the profile's host, with the
/// association options omniORB publishes (so omniORB clients use it, and require it).
pub fn component(port: u16, order: crate::cdr::ByteOrder) -> Option<crate::giop::TaggedComponent> {
    crate::giop::SslSecTrans::omniorb(port)
        .to_component(order)
        .ok()
}
