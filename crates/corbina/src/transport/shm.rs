//! Shared memory: GIOP between two processes on one host through a ring per direction in
//! memory both map, with a Unix-domain socket for the rendezvous, the wake-ups and
//! liveness. Endpoint `shmiop:///path` (Corbina's own scheme; `giop:shm:/path` too),
//! published with [`super::TAG_CORBINA_SHM_TRANS`].
//!
//! # Protocol
//!
//! - The server listens on a Unix-domain socket at `path`. For each connection it creates a
//!   sealed memfd (`F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL`: neither side can truncate
//!   it under the other's mapping), lays out a header and two rings, and passes the
//!   descriptor to the client with `SCM_RIGHTS` after an 8-byte hello. The client checks
//!   the hello, the seals, the header and the size before it uses the memory.
//! - Ring 0 carries client → server bytes, ring 1 server → client. Each has a producer
//!   position (`head`) and a consumer position (`tail`), free-running `u64`s, on separate
//!   cache lines. Bytes are copied straight from the message writer's segments into the ring
//!   and straight out into the reader's buffer: no system call, no kernel copy.
//! - A reader that finds its ring empty spins for [`SPIN`] (a twoway reply usually lands
//!   meanwhile), then sets `reader_waiting` and sleeps in `poll` on the socket; a writer that
//!   publishes bytes while `reader_waiting` is set sends one wake-up byte. A writer that finds
//!   the ring full does the same with `writer_waiting`. The flag store and the re-check are
//!   separated by `SeqCst` fences on both sides, so a wake-up cannot be missed; sleeps are
//!   also cut into [`WAIT_SLICE`]s, after which the rings are looked at again.
//! - End of stream: a producer that shuts down sets its ring's `closed` flag; a peer that
//!   dies closes the socket, which a sleeper sees at once. Bytes already in the ring are
//!   still delivered (a CloseConnection written just before the close is read).
//!
//! The peer is not trusted: positions read from shared memory are checked (a ring cannot
//! hold more than its size), and every access is bounded by the mapping; a peer that
//! scribbles on the rings can only garble the bytes we read, which GIOP decoding treats as
//! hostile input anyway.
#![allow(unsafe_code)]

use std::fs::File;
use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::net::Shutdown;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use memmap2::MmapRaw;
use rustix::event::{poll, PollFd, PollFlags};
use rustix::fs::SealFlags;
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};

use super::{BoundEndpoint, Connection, Listener, TransportKind};

/// Bytes per ring (each direction).
pub const RING_SIZE: usize = 2 << 20;
/// How long a reader spins on an empty ring before it sleeps.
pub const SPIN: Duration = Duration::from_micros(50);
/// The longest sleep before the rings are looked at again.
pub const WAIT_SLICE: Duration = Duration::from_millis(100);

const HELLO: &[u8; 8] = b"CBNSHM01";
const MAGIC: u64 = u64::from_le_bytes(*b"CBNSHM01");
const VERSION: u32 = 1;
const MIN_RING: usize = 4096;
const MAX_RING: usize = 1 << 30;

// Layout of the mapping: a header page, then ring 0's data, then ring 1's.
const OFF_MAGIC: usize = 0;
const OFF_VERSION: usize = 8;
const OFF_RING_SIZE: usize = 12;
const DATA_OFFSET: usize = 4096;
/// Each ring's control block: the producer's fields and the consumer's on separate lines.
const fn control(ring: usize) -> usize {
    256 + ring * 512
}
const C_HEAD: usize = 0;
const C_CLOSED: usize = 8;
const C_WRITER_WAITING: usize = 12;
const C_TAIL: usize = 128;
const C_READER_WAITING: usize = 136;

/// The mapping, accessed only through raw pointers and atomics (never references to the
/// bytes the peer writes).
#[derive(Debug)]
struct Region {
    map: MmapRaw,
    ring_size: usize,
}

impl Region {
    fn total_len(ring_size: usize) -> usize {
        DATA_OFFSET + 2 * ring_size
    }

    fn u64_at(&self, off: usize) -> &AtomicU64 {
        assert!(off.is_multiple_of(8) && off + 8 <= DATA_OFFSET);
        // SAFETY: `off` is a constant offset inside the header page (checked above), which is
        // inside the mapping (its length was checked to be at least `DATA_OFFSET`), and
        // 8-aligned (the mapping is page-aligned). The mapping lives as long as `self`, and
        // it is only ever accessed atomically at these offsets, by both processes. The memfd
        // is sealed against shrinking, so the page stays mapped (no SIGBUS).
        unsafe { AtomicU64::from_ptr(self.map.as_mut_ptr().add(off).cast::<u64>()) }
    }

    fn u32_at(&self, off: usize) -> &AtomicU32 {
        assert!(off.is_multiple_of(4) && off + 4 <= DATA_OFFSET);
        // SAFETY: as in `u64_at`, for a 4-aligned offset inside the header page.
        unsafe { AtomicU32::from_ptr(self.map.as_mut_ptr().add(off).cast::<u32>()) }
    }

    fn data(&self, ring: usize) -> *mut u8 {
        // SAFETY: ring is 0 or 1, so the offset is at most DATA_OFFSET + ring_size, within
        // the mapping of length DATA_OFFSET + 2 * ring_size (checked on creation).
        unsafe {
            self.map
                .as_mut_ptr()
                .add(DATA_OFFSET + (ring & 1) * self.ring_size)
        }
    }

    /// Copies `src` into `ring` at position `pos` (wrapping). `src.len() <= ring_size`.
    fn copy_in(&self, ring: usize, pos: u64, src: &[u8]) {
        let cap = self.ring_size;
        assert!(src.len() <= cap);
        let start = (pos as usize) & (cap - 1);
        let first = src.len().min(cap - start);
        let base = self.data(ring);
        // SAFETY: `start + first <= cap` and `src.len() - first <= cap`, so both copies stay
        // inside this ring's `cap` bytes of the mapping; `src` is our own memory, which does
        // not overlap the mapping. The peer does not touch bytes between tail and head + free
        // (the protocol); if it does anyway it only changes what it will read.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), base.add(start), first);
            std::ptr::copy_nonoverlapping(src.as_ptr().add(first), base, src.len() - first);
        }
    }

    /// Copies `n` bytes of `ring` at position `pos` out to `dst`.
    ///
    /// # Safety
    /// `dst` must be valid for `n` bytes of writes and not overlap the mapping.
    unsafe fn copy_out(&self, ring: usize, pos: u64, dst: *mut u8, n: usize) {
        let cap = self.ring_size;
        assert!(n <= cap);
        let start = (pos as usize) & (cap - 1);
        let first = n.min(cap - start);
        let base = self.data(ring);
        // SAFETY: the source ranges stay inside the ring as in `copy_in`; the caller vouches
        // for `dst`. A peer writing the same bytes concurrently (against the protocol) only
        // garbles what we copy: plain bytes, no invariant depends on them.
        unsafe {
            std::ptr::copy_nonoverlapping(base.add(start), dst, first);
            std::ptr::copy_nonoverlapping(base, dst.add(first), n - first);
        }
    }
}

/// One shared-memory connection (either side).
#[derive(Debug)]
pub struct ShmConnection {
    region: Region,
    socket: UnixStream,
    /// The ring we produce into and the one we consume from.
    tx: usize,
    rx: usize,
    /// Read and write timeouts in nanoseconds; 0 = none.
    read_timeout: AtomicU64,
    write_timeout: AtomicU64,
    /// The socket reported end of stream: the peer shut down or died.
    peer_gone: AtomicBool,
    shut_read: AtomicBool,
    shut_write: AtomicBool,
    /// Whether an empty ring is worth spinning on: only when this thread may run on more
    /// than one CPU. Pinned to one CPU, spinning only delays the peer it waits for.
    spin: bool,
}

enum Wait {
    /// Something may have changed: look again.
    Again,
    /// The peer is gone.
    Gone,
}

fn corrupt() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "shared-memory ring positions are corrupt",
    )
}

fn deadline(timeout: &AtomicU64) -> Option<Instant> {
    match timeout.load(Ordering::Relaxed) {
        0 => None,
        ns => Some(Instant::now() + Duration::from_nanos(ns)),
    }
}

fn store_timeout(slot: &AtomicU64, t: Option<Duration>) -> io::Result<()> {
    let ns = match t {
        Some(d) if d.is_zero() => return Err(io::ErrorKind::InvalidInput.into()),
        Some(d) => u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
        None => 0,
    };
    slot.store(ns, Ordering::Relaxed);
    Ok(())
}

impl ShmConnection {
    fn new(region: Region, socket: UnixStream, server: bool) -> ShmConnection {
        let (tx, rx) = if server { (1, 0) } else { (0, 1) };
        ShmConnection {
            region,
            socket,
            tx,
            rx,
            read_timeout: AtomicU64::new(0),
            write_timeout: AtomicU64::new(0),
            peer_gone: AtomicBool::new(false),
            shut_read: AtomicBool::new(false),
            shut_write: AtomicBool::new(false),
            spin: std::thread::available_parallelism().is_ok_and(|n| n.get() > 1),
        }
    }

    fn head(&self, ring: usize) -> &AtomicU64 {
        self.region.u64_at(control(ring) + C_HEAD)
    }
    fn tail(&self, ring: usize) -> &AtomicU64 {
        self.region.u64_at(control(ring) + C_TAIL)
    }
    fn closed(&self, ring: usize) -> &AtomicU32 {
        self.region.u32_at(control(ring) + C_CLOSED)
    }
    fn reader_waiting(&self, ring: usize) -> &AtomicU32 {
        self.region.u32_at(control(ring) + C_READER_WAITING)
    }
    fn writer_waiting(&self, ring: usize) -> &AtomicU32 {
        self.region.u32_at(control(ring) + C_WRITER_WAITING)
    }

    /// Bytes waiting in the ring we read, checked against the ring's size.
    fn available(&self) -> io::Result<(u64, usize)> {
        let tail = self.tail(self.rx).load(Ordering::Relaxed);
        let head = self.head(self.rx).load(Ordering::Acquire);
        let n = head.wrapping_sub(tail);
        if n > self.region.ring_size as u64 {
            return Err(corrupt());
        }
        Ok((tail, n as usize))
    }

    /// Consumes `n` bytes (already copied out) and wakes a writer waiting for space.
    fn consumed(&self, tail: u64, n: usize) {
        self.tail(self.rx)
            .store(tail.wrapping_add(n as u64), Ordering::Release);
        fence(Ordering::SeqCst);
        if self.writer_waiting(self.rx).load(Ordering::Relaxed) != 0 {
            self.notify();
        }
    }

    /// One wake-up byte to the peer; a full socket already holds one.
    fn notify(&self) {
        let _ = rustix::net::send(
            &self.socket,
            &[1u8],
            SendFlags::DONTWAIT | SendFlags::NOSIGNAL,
        );
    }

    /// Drains wake-up bytes without blocking; `Gone` at end of stream.
    fn drain(&self) -> Wait {
        let mut sink = [0u8; 64];
        loop {
            match rustix::net::recv(&self.socket, &mut sink[..], RecvFlags::DONTWAIT) {
                Ok((0, _)) => {
                    self.peer_gone.store(true, Ordering::Release);
                    return Wait::Gone;
                }
                Ok(_) => continue,
                Err(rustix::io::Errno::INTR) => continue,
                Err(rustix::io::Errno::AGAIN) => return Wait::Again,
                Err(_) => {
                    self.peer_gone.store(true, Ordering::Release);
                    return Wait::Gone;
                }
            }
        }
    }

    /// Sleeps until a wake-up, the end of the socket, a slice or the deadline.
    fn wait(&self, deadline: Option<Instant>) -> io::Result<Wait> {
        if self.peer_gone.load(Ordering::Acquire) {
            return Ok(Wait::Gone);
        }
        let mut slice = WAIT_SLICE;
        if let Some(d) = deadline {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::ErrorKind::TimedOut.into());
            }
            slice = slice.min(left);
        }
        let ts = rustix::event::Timespec {
            tv_sec: slice.as_secs() as i64,
            tv_nsec: i64::from(slice.subsec_nanos()),
        };
        let mut fds = [PollFd::new(&self.socket, PollFlags::IN)];
        match poll(&mut fds, Some(&ts)) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
        if fds[0].revents().is_empty() {
            return Ok(Wait::Again);
        }
        Ok(self.drain())
    }

    /// Copies out up to `max` available bytes to `dst`; 0 if the ring is empty.
    ///
    /// # Safety
    /// `dst` must be valid for `max` bytes of writes.
    unsafe fn take(&self, dst: *mut u8, max: usize) -> io::Result<usize> {
        let (tail, avail) = self.available()?;
        let n = avail.min(max);
        if n > 0 {
            // SAFETY: the caller vouches for `dst` and `n <= max`.
            unsafe { self.region.copy_out(self.rx, tail, dst, n) };
            self.consumed(tail, n);
        }
        Ok(n)
    }

    fn at_end(&self) -> bool {
        self.closed(self.rx).load(Ordering::Acquire) != 0
            || self.shut_read.load(Ordering::Acquire)
            || self.peer_gone.load(Ordering::Acquire)
    }
}

impl Connection for ShmConnection {
    fn kind(&self) -> TransportKind {
        TransportKind::Shm
    }

    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let deadline = deadline(&self.read_timeout);
        let mut spin_until: Option<Instant> = None;
        loop {
            // SAFETY: `buf` is valid for `buf.len()` bytes of writes, and ours.
            let n = unsafe { self.take(buf.as_mut_ptr(), buf.len())? };
            if n > 0 {
                return Ok(n);
            }
            if self.at_end() {
                // Anything written before the end was taken above; look once more for
                // bytes that raced the flag.
                // SAFETY: as above.
                return unsafe { self.take(buf.as_mut_ptr(), buf.len()) };
            }
            let spin_end = *spin_until.get_or_insert_with(|| Instant::now() + SPIN);
            if self.spin && Instant::now() < spin_end {
                for _ in 0..64 {
                    std::hint::spin_loop();
                }
                continue;
            }
            let waiting = self.reader_waiting(self.rx);
            waiting.store(1, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if self.available()?.1 == 0 && !self.at_end() {
                let r = self.wait(deadline);
                waiting.store(0, Ordering::Relaxed);
                r?;
            } else {
                waiting.store(0, Ordering::Relaxed);
            }
        }
    }

    fn write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        if total == 0 {
            return Ok(0);
        }
        if self.shut_write.load(Ordering::Acquire) {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        let deadline = deadline(&self.write_timeout);
        let cap = self.region.ring_size;
        loop {
            if self.peer_gone.load(Ordering::Acquire) {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            let head = self.head(self.tx).load(Ordering::Relaxed);
            let tail = self.tail(self.tx).load(Ordering::Acquire);
            let used = head.wrapping_sub(tail);
            if used > cap as u64 {
                return Err(corrupt());
            }
            let free = cap - used as usize;
            if free > 0 {
                let mut n = 0;
                for b in bufs {
                    let k = b.len().min(free - n);
                    self.region
                        .copy_in(self.tx, head.wrapping_add(n as u64), &b[..k]);
                    n += k;
                    if n == free {
                        break;
                    }
                }
                self.head(self.tx)
                    .store(head.wrapping_add(n as u64), Ordering::Release);
                fence(Ordering::SeqCst);
                if self.reader_waiting(self.tx).load(Ordering::Relaxed) != 0 {
                    self.notify();
                }
                return Ok(n);
            }
            // Full: wait for the reader to make room.
            let waiting = self.writer_waiting(self.tx);
            waiting.store(1, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if self.tail(self.tx).load(Ordering::Acquire) == tail {
                let r = self.wait(deadline);
                waiting.store(0, Ordering::Relaxed);
                if let Wait::Gone = r? {
                    return Err(io::ErrorKind::BrokenPipe.into());
                }
            } else {
                waiting.store(0, Ordering::Relaxed);
            }
        }
    }

    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        store_timeout(&self.read_timeout, timeout)
    }

    fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        store_timeout(&self.write_timeout, timeout)
    }

    fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        if matches!(how, Shutdown::Write | Shutdown::Both) {
            self.shut_write.store(true, Ordering::Release);
            self.closed(self.tx).store(1, Ordering::Release);
            fence(Ordering::SeqCst);
            self.notify();
        }
        if matches!(how, Shutdown::Read | Shutdown::Both) {
            self.shut_read.store(true, Ordering::Release);
        }
        match how {
            // The peer may still write to us: the socket stays open (its end of stream
            // means the peer is gone altogether).
            Shutdown::Write => Ok(()),
            // Wakes our own sleepers (end of stream); with `Both`, the peer's too.
            _ => self.socket.shutdown(how),
        }
    }

    fn has_pending_input(&self) -> bool {
        match self.available() {
            Ok((_, 0)) => {}
            _ => return true,
        }
        self.closed(self.rx).load(Ordering::Acquire) != 0 || matches!(self.drain(), Wait::Gone)
    }

    fn read_nonblocking(&self, buf: &mut Vec<u8>) -> io::Result<usize> {
        if buf.spare_capacity_mut().is_empty() {
            buf.reserve(64 * 1024);
        }
        loop {
            let spare = buf.spare_capacity_mut();
            // SAFETY: the spare capacity is valid for `spare.len()` bytes of writes.
            let n = unsafe { self.take(spare.as_mut_ptr().cast::<u8>(), spare.len())? };
            if n > 0 {
                // SAFETY: `take` initialized the first `n` bytes of the spare capacity.
                unsafe { buf.set_len(buf.len() + n) };
                return Ok(n);
            }
            if self.at_end() {
                return Ok(0);
            }
            // Ask for a wake-up byte (what the pool polls for), then look once more.
            self.reader_waiting(self.rx).store(1, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if self.available()?.1 > 0 {
                continue;
            }
            if let Wait::Gone = self.drain() {
                continue;
            }
            return Err(io::ErrorKind::WouldBlock.into());
        }
    }

    fn poll_fd(&self) -> BorrowedFd<'_> {
        self.socket.as_fd()
    }
}

/// Creates a connection's memory (server side) and hands it to the client.
fn serve_handshake(socket: UnixStream) -> io::Result<ShmConnection> {
    let ring_size = RING_SIZE;
    let fd = rustix::fs::memfd_create(
        "corbina-shmiop",
        rustix::fs::MemfdFlags::CLOEXEC | rustix::fs::MemfdFlags::ALLOW_SEALING,
    )?;
    rustix::fs::ftruncate(&fd, Region::total_len(ring_size) as u64)?;
    rustix::fs::fcntl_add_seals(&fd, SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL)?;
    let file = File::from(fd);
    let region = Region {
        map: MmapRaw::map_raw(&file)?,
        ring_size,
    };
    region.u64_at(OFF_MAGIC).store(MAGIC, Ordering::Relaxed);
    region.u32_at(OFF_VERSION).store(VERSION, Ordering::Relaxed);
    // Both readers start out asking for wake-ups: the server's thread pool polls the socket
    // before it ever reads (the first read that finds data clears nothing; a spare wake-up
    // byte costs one poll).
    for ring in 0..2 {
        region
            .u32_at(control(ring) + C_READER_WAITING)
            .store(1, Ordering::Relaxed);
    }
    region
        .u32_at(OFF_RING_SIZE)
        .store(ring_size as u32, Ordering::Release);
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds = [file.as_fd()];
    control.push(SendAncillaryMessage::ScmRights(&fds));
    let sent = rustix::net::sendmsg(
        &socket,
        &[IoSlice::new(HELLO)],
        &mut control,
        SendFlags::NOSIGNAL,
    )?;
    if sent != HELLO.len() {
        return Err(io::ErrorKind::WriteZero.into());
    }
    Ok(ShmConnection::new(region, socket, true))
}

fn refused(reason: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, reason)
}

/// Takes the memory the server offers (client side), after checking it.
fn accept_handshake(socket: UnixStream, timeout: Duration) -> io::Result<ShmConnection> {
    socket.set_read_timeout(Some(timeout.max(Duration::from_millis(1))))?;
    let mut hello = [0u8; 8];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let got = rustix::net::recvmsg(
        &socket,
        &mut [IoSliceMut::new(&mut hello)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    let mut fd = None;
    for m in control.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = m {
            for f in fds {
                fd.get_or_insert(f);
            }
        }
    }
    if got.bytes != HELLO.len() || &hello != HELLO {
        return Err(refused("not a Corbina shared-memory endpoint"));
    }
    let fd = fd.ok_or_else(|| refused("no shared memory offered"))?;
    let seals = rustix::fs::fcntl_get_seals(&fd)?;
    if !seals.contains(SealFlags::SHRINK | SealFlags::GROW) {
        return Err(refused("shared memory not sealed against resizing"));
    }
    let file = File::from(fd);
    let len = file.metadata()?.len();
    if len < DATA_OFFSET as u64 + 2 * MIN_RING as u64 || len > Region::total_len(MAX_RING) as u64 {
        return Err(refused("shared memory of a bad size"));
    }
    let map = MmapRaw::map_raw(&file)?;
    let mut region = Region { map, ring_size: 0 };
    let magic = region.u64_at(OFF_MAGIC).load(Ordering::Relaxed);
    let version = region.u32_at(OFF_VERSION).load(Ordering::Relaxed);
    let ring_size = region.u32_at(OFF_RING_SIZE).load(Ordering::Acquire) as usize;
    if magic != MAGIC || version != VERSION {
        return Err(refused("unknown shared-memory layout"));
    }
    if !ring_size.is_power_of_two()
        || !(MIN_RING..=MAX_RING).contains(&ring_size)
        || Region::total_len(ring_size) as u64 != len
        || region.map.len() as u64 != len
    {
        return Err(refused("shared-memory rings of a bad size"));
    }
    region.ring_size = ring_size;
    socket.set_read_timeout(None)?;
    Ok(ShmConnection::new(region, socket, false))
}

/// Connects to the shared-memory endpoint whose rendezvous socket is at `path`.
pub fn connect(path: &Path, timeout: Duration) -> io::Result<Arc<dyn Connection>> {
    let socket = UnixStream::connect(path)?;
    Ok(Arc::new(accept_handshake(socket, timeout)?))
}

/// A bound shared-memory endpoint; its socket file is removed when it is dropped.
pub struct ShmEndpoint {
    listener: UnixListener,
    path: PathBuf,
}

impl ShmEndpoint {
    /// Binds the rendezvous socket at `path`.
    pub fn bind(path: &Path) -> io::Result<ShmEndpoint> {
        Ok(ShmEndpoint {
            listener: super::unix::bind_path(path)?,
            path: path.to_owned(),
        })
    }
}

impl Listener for ShmEndpoint {
    fn accept(&self) -> io::Result<Arc<dyn Connection>> {
        let (socket, _) = self.listener.accept()?;
        Ok(Arc::new(serve_handshake(socket)?))
    }

    fn bound(&self) -> BoundEndpoint {
        BoundEndpoint::Shm(self.path.clone())
    }
}

impl Drop for ShmEndpoint {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn pair() -> (Arc<ShmConnection>, Arc<ShmConnection>) {
        let (a, b) = UnixStream::pair().unwrap();
        let server = std::thread::spawn(move || serve_handshake(a).unwrap());
        let client = accept_handshake(b, Duration::from_secs(5)).unwrap();
        (Arc::new(client), Arc::new(server.join().unwrap()))
    }

    #[test]
    fn bytes_cross_both_rings_in_order_with_wraparound() {
        let (c, s) = pair();
        // Several times the ring size, in odd-sized pieces: wraps and full-ring waits.
        let data: Vec<u8> = (0..RING_SIZE * 3 + 12345)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let expect = data.clone();
        let writer = std::thread::spawn(move || {
            let mut w = super::super::Stream(c.clone());
            for chunk in data.chunks(100_003) {
                w.write_all(chunk).unwrap();
            }
            w.0.shutdown(Shutdown::Write).unwrap();
            c
        });
        let mut r = super::super::Stream(s.clone());
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        assert!(got == expect, "bytes differ");
        // And back the other way, on the other ring.
        let c = writer.join().unwrap();
        s.write_vectored(&[IoSlice::new(b"he"), IoSlice::new(b"llo")])
            .unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(c.read(&mut buf).unwrap(), 5);
        assert_eq!(&buf[..5], b"hello");
    }

    #[test]
    fn read_times_out_and_sees_the_peer_die() {
        let (c, s) = pair();
        c.set_read_timeout(Some(Duration::from_millis(30))).unwrap();
        let mut buf = [0u8; 4];
        let t = Instant::now();
        let e = c.read(&mut buf).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert!(t.elapsed() >= Duration::from_millis(30));
        c.set_read_timeout(None).unwrap();
        // Bytes written before the peer vanished are still delivered, then end of stream.
        s.write_vectored(&[IoSlice::new(b"bye")]).unwrap();
        assert!(c.has_pending_input());
        drop(s);
        assert_eq!(c.read(&mut buf).unwrap(), 3);
        assert_eq!(c.read(&mut buf).unwrap(), 0);
        assert!(c.write_vectored(&[IoSlice::new(b"x")]).is_err());
    }

    #[test]
    fn nonblocking_reads_arm_the_poll_descriptor() {
        let (c, s) = pair();
        let mut buf = Vec::with_capacity(16);
        let e = s.read_nonblocking(&mut buf).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        c.write_vectored(&[IoSlice::new(b"ping")]).unwrap();
        let mut fds = [PollFd::from_borrowed_fd(s.poll_fd(), PollFlags::IN)];
        let ts = rustix::event::Timespec {
            tv_sec: 5,
            tv_nsec: 0,
        };
        assert_eq!(poll(&mut fds, Some(&ts)).unwrap(), 1);
        assert_eq!(s.read_nonblocking(&mut buf).unwrap(), 4);
        assert_eq!(buf, b"ping");
        c.shutdown(Shutdown::Both).unwrap();
        assert_eq!(s.read_nonblocking(&mut buf).unwrap(), 0);
    }

    #[test]
    fn a_bad_rendezvous_is_refused() {
        // No descriptor, wrong hello.
        let (a, b) = UnixStream::pair().unwrap();
        (&a).write_all(b"NOTSHM!!").unwrap();
        assert!(accept_handshake(b, Duration::from_secs(1)).is_err());
        // An unsealed file of the right shape.
        let (a, b) = UnixStream::pair().unwrap();
        let fd = rustix::fs::memfd_create("x", rustix::fs::MemfdFlags::CLOEXEC).unwrap();
        rustix::fs::ftruncate(&fd, Region::total_len(RING_SIZE) as u64).unwrap();
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        let fds = [fd.as_fd()];
        control.push(SendAncillaryMessage::ScmRights(&fds));
        rustix::net::sendmsg(&a, &[IoSlice::new(HELLO)], &mut control, SendFlags::empty()).unwrap();
        let e = accept_handshake(b, Duration::from_secs(1)).unwrap_err();
        assert!(e.to_string().contains("sealed"), "{e}");
    }

    #[test]
    fn corrupt_positions_are_an_error_not_a_wild_copy() {
        let (c, s) = pair();
        // The peer claims more bytes than the ring holds.
        s.head(s.tx).store(RING_SIZE as u64 * 5, Ordering::Release);
        let mut buf = [0u8; 8];
        assert_eq!(
            c.read(&mut buf).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }
}
