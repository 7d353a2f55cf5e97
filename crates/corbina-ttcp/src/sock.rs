//! The raw-socket baselines in Rust, framed like GIOP (a 12-byte header whose last four
//! bytes are the body length, then the body), TCP_NODELAY on, as `peers/sock_pingpong.c` and
//! `peers/sock_ttcp.c` do:
//!
//! - ping-pong: the client writes one frame and waits for the answer. Header byte 7 says
//!   what the server answers: 0 = the same frame (echo), 1 = a header-only frame (the shape
//!   of a twoway call carrying a payload), 2 = nothing (the shape of a oneway).
//! - bulk (ttcp): a 16-byte control header `{"TTCP", mode, bufsize, warm}`, `warm` untimed
//!   buffers, the server's `GO!!`, then timed buffers: mode 0 a plain stream (oneway), mode
//!   1 a 4-byte ack after every buffer (twoway). At the client's write shutdown the server
//!   answers with the 8-byte count of bytes it received; the client's clock runs from the
//!   first timed byte to that answer.
//!
//! The server serves each connection on its own thread, over TCP and optionally a
//! Unix-domain socket.

use std::io::{self, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::{Duration, Instant};

/// Frame header length.
pub const HDR: usize = 12;
const MAX_BODY: usize = 64 << 20;

/// A connected stream of either family.
pub enum Stream {
    /// TCP (NODELAY set).
    Tcp(TcpStream),
    /// Unix-domain.
    Unix(UnixStream),
}

impl Stream {
    /// Connects to `tcp:HOST:PORT` or `unix:PATH`.
    pub fn connect(addr: &str) -> io::Result<Stream> {
        if let Some(path) = addr.strip_prefix("unix:") {
            return Ok(Stream::Unix(UnixStream::connect(path)?));
        }
        let a = addr.strip_prefix("tcp:").unwrap_or(addr);
        let s = TcpStream::connect(a)?;
        s.set_nodelay(true)?;
        Ok(Stream::Tcp(s))
    }

    fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
        })
    }

    fn shutdown_write(&self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.shutdown(Shutdown::Write),
            Stream::Unix(s) => s.shutdown(Shutdown::Write),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reply kinds of a ping-pong frame (header byte 7).
pub mod reply {
    /// Echo the frame.
    pub const ECHO: u8 = 0;
    /// Answer with a header-only frame.
    pub const EMPTY: u8 = 1;
    /// Do not answer.
    pub const NONE: u8 = 2;
}

/// A ping-pong frame: header then `body` bytes.
pub fn frame(body: usize, reply_kind: u8) -> Vec<u8> {
    let mut f = vec![0u8; HDR + body];
    f[..4].copy_from_slice(b"PING");
    f[4] = 1;
    f[5] = 2;
    f[7] = reply_kind;
    f[8..12].copy_from_slice(&(body as u32).to_be_bytes());
    for (i, b) in f[HDR..].iter_mut().enumerate() {
        *b = i as u8;
    }
    f
}

/// Runs the socket server: listens on TCP `127.0.0.1:0` (and on `unix`, if given), writes
/// `tcp:127.0.0.1:PORT` (and `unix:PATH`) one per line to `ready` (atomically), serves until
/// killed or `lifetime` passes.
pub fn serve(ready: &str, unix: Option<&str>, lifetime: Option<Duration>) -> io::Result<()> {
    let tcp = TcpListener::bind("127.0.0.1:0")?;
    let mut text = format!("tcp:{}\n", tcp.local_addr()?);
    if let Some(path) = unix {
        let _ = std::fs::remove_file(path);
        let ul = UnixListener::bind(path)?;
        text.push_str(&format!("unix:{path}\n"));
        std::thread::spawn(move || {
            for s in ul.incoming().flatten() {
                std::thread::spawn(move || serve_conn(Stream::Unix(s)));
            }
        });
    }
    if let Some(l) = lifetime {
        std::thread::spawn(move || {
            std::thread::sleep(l);
            std::process::exit(0);
        });
    }
    let tmp = format!("{ready}.tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, ready)?;
    for s in tcp.incoming().flatten() {
        let _ = s.set_nodelay(true);
        std::thread::spawn(move || serve_conn(Stream::Tcp(s)));
    }
    Ok(())
}

fn serve_conn(stream: Stream) {
    let Ok(mut w) = stream.try_clone() else {
        return;
    };
    let mut r = BufReader::with_capacity(64 * 1024, stream);
    let mut magic = [0u8; 4];
    if r.read_exact(&mut magic).is_err() {
        return;
    }
    let _ = match &magic {
        b"PING" => serve_pingpong(&mut r, &mut w, magic),
        b"TTCP" => serve_ttcp(&mut r, &mut w),
        _ => Ok(()),
    };
}

fn serve_pingpong(r: &mut impl Read, w: &mut impl Write, magic: [u8; 4]) -> io::Result<()> {
    let mut hdr = [0u8; HDR];
    hdr[..4].copy_from_slice(&magic);
    r.read_exact(&mut hdr[4..])?;
    let mut buf = Vec::new();
    loop {
        if &hdr[..4] != b"PING" {
            return Ok(());
        }
        let body = u32::from_be_bytes([hdr[8], hdr[9], hdr[10], hdr[11]]) as usize;
        if body > MAX_BODY {
            return Ok(());
        }
        buf.clear();
        buf.extend_from_slice(&hdr);
        buf.resize(HDR + body, 0);
        r.read_exact(&mut buf[HDR..])?;
        match hdr[7] {
            reply::ECHO => w.write_all(&buf)?,
            reply::EMPTY => {
                buf.truncate(HDR);
                buf[8..12].fill(0);
                w.write_all(&buf)?;
            }
            _ => {}
        }
        if r.read_exact(&mut hdr).is_err() {
            return Ok(());
        }
    }
}

fn serve_ttcp(r: &mut impl Read, w: &mut impl Write) -> io::Result<()> {
    let mut h = [0u8; 12];
    r.read_exact(&mut h)?;
    let mode = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
    let bufsize = u32::from_be_bytes([h[4], h[5], h[6], h[7]]) as usize;
    let warm = u32::from_be_bytes([h[8], h[9], h[10], h[11]]);
    if bufsize == 0 || bufsize > MAX_BODY || mode > 1 || warm > 100_000 {
        return Ok(());
    }
    let mut buf = vec![0u8; bufsize];
    for _ in 0..warm {
        r.read_exact(&mut buf)?;
        if mode == 1 {
            w.write_all(b"ACK\0")?;
        }
    }
    w.write_all(b"GO!!")?;
    let mut total = 0u64;
    if mode == 0 {
        loop {
            match r.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => total += n as u64,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    } else {
        while r.read_exact(&mut buf).is_ok() {
            total += bufsize as u64;
            w.write_all(b"ACK\0")?;
        }
    }
    w.write_all(&total.to_be_bytes())
}

/// Round-trip times (µs) of `count` frames of `body` bytes after `warmup` untimed ones.
pub fn pingpong(
    addr: &str,
    body: usize,
    reply_kind: u8,
    warmup: usize,
    count: usize,
) -> io::Result<Vec<f64>> {
    let mut s = Stream::connect(addr)?;
    let msg = frame(body, reply_kind);
    let mut rep = vec![
        0u8;
        if reply_kind == reply::ECHO {
            HDR + body
        } else {
            HDR
        }
    ];
    let mut us = Vec::with_capacity(count);
    for i in 0..warmup + count {
        let t0 = Instant::now();
        s.write_all(&msg)?;
        s.read_exact(&mut rep)?;
        if i >= warmup {
            us.push(t0.elapsed().as_secs_f64() * 1e6);
        }
    }
    Ok(us)
}

/// The socket analogue of a null oneway burst: `count` header+4-byte frames that get no
/// answer, closed by one round trip. Returns the seconds taken.
pub fn oneway_burst(addr: &str, warmup: usize, count: usize) -> io::Result<f64> {
    let mut s = Stream::connect(addr)?;
    let one = frame(4, reply::NONE);
    let ping = frame(4, reply::ECHO);
    let mut rep = vec![0u8; ping.len()];
    for _ in 0..warmup {
        s.write_all(&one)?;
    }
    s.write_all(&ping)?;
    s.read_exact(&mut rep)?;
    let t0 = Instant::now();
    for _ in 0..count {
        s.write_all(&one)?;
    }
    s.write_all(&ping)?;
    s.read_exact(&mut rep)?;
    Ok(t0.elapsed().as_secs_f64())
}

/// What one bulk transfer measured.
#[derive(Debug, Clone, Copy)]
pub struct Bulk {
    /// Buffers sent in the timed part.
    pub sent: u64,
    /// Bytes the server counted.
    pub counted: u64,
    /// Seconds from the first timed byte to the server's count.
    pub seconds: f64,
}

/// A ttcp transfer of up to `calls` buffers of `bufsize` bytes (fewer if `max_s` runs
/// out); `twoway` waits for an ack after each buffer.
pub fn bulk(addr: &str, bufsize: usize, twoway: bool, calls: u64, max_s: f64) -> io::Result<Bulk> {
    let mut s = Stream::connect(addr)?;
    let warm = (calls / 20).clamp(1, 50) as u32;
    let mut h = Vec::with_capacity(16);
    h.extend_from_slice(b"TTCP");
    h.extend_from_slice(&u32::from(twoway).to_be_bytes());
    h.extend_from_slice(&(bufsize as u32).to_be_bytes());
    h.extend_from_slice(&warm.to_be_bytes());
    s.write_all(&h)?;
    let buf: Vec<u8> = (0..bufsize).map(|i| (i & 0x7f) as u8).collect();
    let mut ack = [0u8; 4];
    for _ in 0..warm {
        s.write_all(&buf)?;
        if twoway {
            s.read_exact(&mut ack)?;
        }
    }
    s.read_exact(&mut ack)?;
    if &ack != b"GO!!" {
        return Err(io::Error::other("no GO from the socket server"));
    }
    let t0 = Instant::now();
    let deadline = Duration::from_secs_f64(max_s);
    let mut sent = 0u64;
    while sent < calls {
        s.write_all(&buf)?;
        if twoway {
            s.read_exact(&mut ack)?;
        }
        sent += 1;
        if sent.is_multiple_of(8) && t0.elapsed() > deadline {
            break;
        }
    }
    s.shutdown_write()?;
    let mut tot = [0u8; 8];
    s.read_exact(&mut tot)?;
    Ok(Bulk {
        sent,
        counted: u64::from_be_bytes(tot),
        seconds: t0.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_answers_pingpong_and_bulk() {
        let dir = std::env::temp_dir().join(format!("ttcp-sock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ready = dir.join("ready");
        let unix = dir.join("s.sock");
        let (r, u) = (
            ready.to_str().unwrap().to_owned(),
            unix.to_str().unwrap().to_owned(),
        );
        std::thread::spawn(move || serve(&r, Some(&u), None));
        let start = Instant::now();
        let text = loop {
            if let Ok(t) = std::fs::read_to_string(&ready) {
                break t;
            }
            assert!(start.elapsed() < Duration::from_secs(5));
            std::thread::sleep(Duration::from_millis(5));
        };
        for addr in text.lines() {
            for kind in [reply::ECHO, reply::EMPTY] {
                let us = pingpong(addr, 100, kind, 2, 10).unwrap();
                assert_eq!(us.len(), 10);
            }
            assert!(oneway_burst(addr, 5, 100).unwrap() > 0.0);
            for twoway in [false, true] {
                let b = bulk(addr, 4096, twoway, 20, 10.0).unwrap();
                assert_eq!(b.sent, 20);
                assert_eq!(b.counted, 20 * 4096);
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
