//! Shared memory: GIOP between two processes on one host through a ring per direction in
//! memory both map, woken by futexes in that memory, with a Unix-domain socket for the
//! rendezvous, liveness and the wake-ups of idle connections. Endpoint `shmiop:///path`
//! (Corbina's own scheme; `giop:shm:/path` too), published with
//! [`super::TAG_CORBINA_SHM_TRANS`].
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
//! - A reader that finds its ring empty spins for up to 50 µs (`SPIN`; a twoway reply usually
//!   lands meanwhile), then sleeps; so does a writer that finds its ring full. Spinning
//!   happens only when more than one CPU is usable, and backs off while spins keep missing
//!   (the scheduler put both sides on one CPU: a spin only delays the peer).
//! - A sleeper announces itself in a waiting word next to the ring's positions, and the
//!   other side makes a system call only when it finds that word set
//!   (`ShmConnection::sleep` has the ordering argument). For 10 ms (`FUTEX_PHASE`) a sleeper
//!   waits in `futex(2)` on the word itself (a shared futex: the mapping is `MAP_SHARED`),
//!   so a busy round trip costs at most one `FUTEX_WAKE` and one `FUTEX_WAIT` per side, and
//!   none while both sides run. After that a reader waits in `poll` on the socket and is
//!   woken by one byte on it: an idle connection costs nothing and sees its peer die at
//!   once, and the server's thread pool polls the same socket. A writer (full ring) goes
//!   on in the futex, in slices of 100 ms (`WAIT_SLICE`): the socket's bytes are the reader's alone.
//! - End of stream: a producer that shuts down sets its ring's `closed` flag; a peer that
//!   dies closes the socket, which a sleeper in `poll` sees at once and one in the futex
//!   when its phase or slice ends (it then checks the socket for a hang-up): a dead peer is
//!   an error within 10 ms (a reader) or 100 ms (a writer), never a
//!   hang. Bytes already in the ring are still delivered (a CloseConnection written just
//!   before the close is read).
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
use rustix::thread::futex;

use super::{BoundEndpoint, Connection, Listener, TransportKind};

/// Bytes per ring (each direction).
pub(crate) const RING_SIZE: usize = 2 << 20;
/// How long a reader spins on an empty ring before it sleeps.
pub(crate) const SPIN: Duration = Duration::from_micros(50);
/// How long a sleeper waits in `futex` before it falls back to `poll` on the socket: the
/// longest a peer's death can go unnoticed by a sleeper. Busy connections wake up well
/// within it; beyond it, the socket byte's extra microseconds do not matter.
pub(crate) const FUTEX_PHASE: Duration = Duration::from_millis(10);
/// The longest sleep before the rings are looked at again.
pub(crate) const WAIT_SLICE: Duration = Duration::from_millis(100);

// Values of a waiting word (`reader_waiting`, `writer_waiting`).
/// Nobody sleeps.
const AWAKE: u32 = 0;
/// A sleeper waits in `FUTEX_WAIT` on the word: the waker clears it, then `FUTEX_WAKE`.
const IN_FUTEX: u32 = 1;
/// A sleeper (or the thread pool) polls the socket: the waker clears the word, then sends
/// a byte.
const IN_POLL: u32 = 2;

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
    read_spin: SpinPolicy,
    write_spin: SpinPolicy,
    /// [`FUTEX_PHASE`] and [`WAIT_SLICE`] (tests stretch them so a lost wake-up hangs).
    futex_phase: Duration,
    wait_slice: Duration,
    /// Tests: give the CPU away between announcing a sleep and sleeping, so that wake-ups
    /// land in that window (where a flawed protocol would lose them).
    #[cfg(test)]
    widen_race: bool,
}

/// Whether spinning pays on one side of a connection. A spin that ends without what it
/// waited for makes the following waits skip spinning, exponentially more of them (up to
/// [`MAX_SPIN_SKIP`]) while misses repeat; a spin that sees it resets that. Spinning pays
/// only while the peer runs on another CPU: when the scheduler puts both on one CPU, a
/// spin only delays the peer it waits for.
#[derive(Debug, Default)]
struct SpinPolicy {
    backoff: AtomicU32,
    skip: AtomicU32,
}

/// The most waits skipped after repeated misses (then one more spin is tried).
const MAX_SPIN_SKIP: u32 = 255;

impl SpinPolicy {
    fn should_spin(&self) -> bool {
        match self.skip.load(Ordering::Relaxed) {
            0 => true,
            n => {
                self.skip.store(n - 1, Ordering::Relaxed);
                false
            }
        }
    }

    fn outcome(&self, hit: bool) {
        if hit {
            self.backoff.store(0, Ordering::Relaxed);
        } else {
            let b = (self.backoff.load(Ordering::Relaxed) * 2 + 1).min(MAX_SPIN_SKIP);
            self.backoff.store(b, Ordering::Relaxed);
            self.skip.store(b, Ordering::Relaxed);
        }
    }
}

/// One wait's spin: undecided until the first miss, then spinning for up to [`SPIN`] or
/// not at all.
struct Spin<'a> {
    policy: &'a SpinPolicy,
    state: SpinState,
}

#[derive(PartialEq)]
enum SpinState {
    Undecided,
    Spinning,
    Over,
}

impl<'a> Spin<'a> {
    fn new(policy: &'a SpinPolicy, enabled: bool) -> Spin<'a> {
        let state = if enabled {
            SpinState::Undecided
        } else {
            SpinState::Over
        };
        Spin { policy, state }
    }

    /// Spins a little and says true if this wait (begun at `since`) should go on spinning.
    fn again(&mut self, since: Instant) -> bool {
        match self.state {
            SpinState::Over => return false,
            SpinState::Undecided if !self.policy.should_spin() => {
                self.state = SpinState::Over;
                return false;
            }
            _ => self.state = SpinState::Spinning,
        }
        if since.elapsed() >= SPIN {
            self.policy.outcome(false);
            self.state = SpinState::Over;
            return false;
        }
        for _ in 0..64 {
            std::hint::spin_loop();
        }
        true
    }

    /// What the wait waited for is there.
    fn done(&mut self) {
        if self.state == SpinState::Spinning {
            self.policy.outcome(true);
        }
    }
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
            read_spin: SpinPolicy::default(),
            write_spin: SpinPolicy::default(),
            futex_phase: FUTEX_PHASE,
            wait_slice: WAIT_SLICE,
            #[cfg(test)]
            widen_race: false,
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
        // Publish, then look at the waiting word: see `sleep`.
        fence(Ordering::SeqCst);
        self.wake(self.writer_waiting(self.rx));
    }

    /// Wakes the thread sleeping on `word`, if one announced itself there: a system call
    /// only then. Called after publishing (positions, `closed`, our own shutdown flags)
    /// and a `SeqCst` fence.
    fn wake(&self, word: &AtomicU32) {
        if word.load(Ordering::Relaxed) == AWAKE {
            return;
        }
        // Clearing the word first is what makes a wake that comes before the sleeper's
        // FUTEX_WAIT count: the wait then finds the word changed and returns at once.
        match word.swap(AWAKE, Ordering::SeqCst) {
            AWAKE => {}
            IN_FUTEX => {
                let _ = futex::wake(word, futex::Flags::empty(), 1);
            }
            IN_POLL => self.notify(),
            // Garbage from the peer: wake both ways.
            _ => {
                let _ = futex::wake(word, futex::Flags::empty(), 1);
                self.notify();
            }
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

    /// Sleeps on `word` (our `reader_waiting` or `writer_waiting`) until a wake-up, a
    /// slice or the deadline, unless `ready()` already holds once the sleep is announced.
    /// `since`: when this wait for input (or space) began. A reader (`may_poll`) waits in
    /// the futex for the futex phase, then in `poll` on the socket. A writer always waits
    /// in the futex, in slices: wake-up bytes are the reader's alone (a second thread
    /// polling the socket could drain the byte meant for the reader and leave it asleep).
    ///
    /// No wake-up is lost. The sleeper stores the word, then (`SeqCst` fence) looks at the
    /// ring; the waker publishes (head, tail or `closed`), then (`SeqCst` fence) loads the
    /// word. By the fences' total order, at least one of the two loads sees the other
    /// side's store: either `ready()` sees the new position and we do not sleep, or the
    /// waker sees the word set and wakes us. For the futex, the waker clears the word
    /// before `FUTEX_WAKE`, and `FUTEX_WAIT` sleeps only while the word still holds
    /// `IN_FUTEX` (checked atomically with queueing in the kernel), so a wake-up landing
    /// between our check and our wait is not lost either: the wait returns at once. A
    /// wake-up byte stays in the socket until the reader drains it, so `poll` cannot miss
    /// one. A peer that scribbles on the words can only delay us by a phase or a slice.
    fn sleep(
        &self,
        word: &AtomicU32,
        since: Instant,
        deadline: Option<Instant>,
        may_poll: bool,
        ready: impl Fn() -> io::Result<bool>,
    ) -> io::Result<Wait> {
        if self.peer_gone.load(Ordering::Acquire) {
            return Ok(Wait::Gone);
        }
        let now = Instant::now();
        let phase_end = since + self.futex_phase;
        let in_futex = now < phase_end || !may_poll;
        word.store(if in_futex { IN_FUTEX } else { IN_POLL }, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if ready()? {
            word.store(AWAKE, Ordering::Relaxed);
            return Ok(Wait::Again);
        }
        #[cfg(test)]
        if self.widen_race {
            std::thread::yield_now();
        }
        let r = if in_futex {
            let mut until = if now < phase_end {
                phase_end
            } else {
                now + self.wait_slice
            };
            if let Some(d) = deadline {
                if d <= now {
                    word.store(AWAKE, Ordering::Relaxed);
                    return Err(io::ErrorKind::TimedOut.into());
                }
                until = until.min(d);
            }
            let left = until - now;
            let ts = futex::Timespec {
                tv_sec: left.as_secs() as i64,
                tv_nsec: i64::from(left.subsec_nanos()),
            };
            match futex::wait(word, futex::Flags::empty(), IN_FUTEX, Some(&ts)) {
                // A phase or slice is over: is the peer still there? (A dead peer cannot
                // wake a futex; its socket's hang-up says so.)
                Err(rustix::io::Errno::TIMEDOUT) if self.hung_up() => Ok(Wait::Gone),
                // Woken, the word changed before we slept, a signal, or time to look again.
                _ => Ok(Wait::Again),
            }
        } else {
            self.wait(deadline)
        };
        word.store(AWAKE, Ordering::Relaxed);
        r
    }

    /// Whether the socket says the peer has gone (or we shut down our reading side),
    /// without consuming wake-up bytes.
    fn hung_up(&self) -> bool {
        let mut fds = [PollFd::new(&self.socket, PollFlags::RDHUP)];
        let zero = rustix::event::Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        match poll(&mut fds, Some(&zero)) {
            Ok(_) => {
                let gone = fds[0]
                    .revents()
                    .intersects(PollFlags::HUP | PollFlags::RDHUP | PollFlags::ERR);
                if gone {
                    self.peer_gone.store(true, Ordering::Release);
                }
                gone
            }
            Err(_) => false,
        }
    }

    /// Sleeps in `poll` until a wake-up, the end of the socket, a slice or the deadline.
    fn wait(&self, deadline: Option<Instant>) -> io::Result<Wait> {
        if self.peer_gone.load(Ordering::Acquire) {
            return Ok(Wait::Gone);
        }
        let mut slice = self.wait_slice;
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
        let mut since: Option<Instant> = None;
        let mut spin = Spin::new(&self.read_spin, self.spin);
        loop {
            // SAFETY: `buf` is valid for `buf.len()` bytes of writes, and ours.
            let n = unsafe { self.take(buf.as_mut_ptr(), buf.len())? };
            if n > 0 {
                spin.done();
                return Ok(n);
            }
            if self.at_end() {
                // Anything written before the end was taken above; look once more for
                // bytes that raced the flag.
                // SAFETY: as above.
                return unsafe { self.take(buf.as_mut_ptr(), buf.len()) };
            }
            let since = *since.get_or_insert_with(Instant::now);
            if spin.again(since) {
                continue;
            }
            // `Gone` needs nothing more: `at_end` says so on the next turn.
            self.sleep(self.reader_waiting(self.rx), since, deadline, true, || {
                Ok(self.available()?.1 > 0 || self.at_end())
            })?;
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
        let mut since: Option<Instant> = None;
        let mut spin = Spin::new(&self.write_spin, self.spin);
        loop {
            if self.peer_gone.load(Ordering::Acquire) || self.shut_write.load(Ordering::Acquire) {
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
                // Publish, then look at the waiting word: see `sleep`.
                fence(Ordering::SeqCst);
                self.wake(self.reader_waiting(self.tx));
                spin.done();
                return Ok(n);
            }
            // Full: wait for the reader to make room.
            let since = *since.get_or_insert_with(Instant::now);
            if spin.again(since) {
                continue;
            }
            let r = self.sleep(self.writer_waiting(self.tx), since, deadline, false, || {
                Ok(self.tail(self.tx).load(Ordering::Acquire) != tail
                    || self.shut_write.load(Ordering::Acquire))
            })?;
            if let Wait::Gone = r {
                return Err(io::ErrorKind::BrokenPipe.into());
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
            // The peer's reader, and our own writer if it waits for space.
            self.wake(self.reader_waiting(self.tx));
            self.wake(self.writer_waiting(self.tx));
        }
        if matches!(how, Shutdown::Read | Shutdown::Both) {
            self.shut_read.store(true, Ordering::Release);
            fence(Ordering::SeqCst);
            // Our own reader, if it sleeps in the futex (the socket's shutdown below wakes
            // one in `poll`).
            self.wake(self.reader_waiting(self.rx));
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

    fn read_nonblocking(&self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            // SAFETY: `buf` is valid for `buf.len()` bytes of writes, and ours.
            let n = unsafe { self.take(buf.as_mut_ptr(), buf.len())? };
            if n > 0 {
                return Ok(n);
            }
            if self.at_end() {
                return Ok(0);
            }
            // Ask for a wake-up byte (what the pool polls for), then look once more.
            self.reader_waiting(self.rx)
                .store(IN_POLL, Ordering::SeqCst);
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
    serve_handshake_sized(socket, RING_SIZE)
}

/// [`serve_handshake`] with rings of `ring_size` bytes (a power of two, at least
/// `MIN_RING`).
fn serve_handshake_sized(socket: UnixStream, ring_size: usize) -> io::Result<ShmConnection> {
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
            .store(IN_POLL, Ordering::Relaxed);
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
        let mut buf = [0u8; 16];
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
        assert_eq!(&buf[..4], b"ping");
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

    const HOUR: Duration = Duration::from_secs(3600);

    /// A pair with `ring`-byte rings, spinning as given, futex phases of `futex_phase` and
    /// poll slices of an hour: a lost wake-up hangs instead of being covered up by a
    /// timeout.
    fn strict_pair(
        ring: usize,
        spin: bool,
        futex_phase: Duration,
    ) -> (Arc<ShmConnection>, Arc<ShmConnection>) {
        pair_with(ring, spin, futex_phase, HOUR)
    }

    /// [`strict_pair`] with the race window between announcing a sleep and sleeping
    /// widened (see `widen_race`).
    fn racy_pair(futex_phase: Duration) -> (Arc<ShmConnection>, Arc<ShmConnection>) {
        let (mut c, mut s) = strict_pair(MIN_RING, false, futex_phase);
        for x in [&mut c, &mut s] {
            Arc::get_mut(x).unwrap().widen_race = true;
        }
        (c, s)
    }

    fn pair_with(
        ring: usize,
        spin: bool,
        futex_phase: Duration,
        wait_slice: Duration,
    ) -> (Arc<ShmConnection>, Arc<ShmConnection>) {
        let (a, b) = UnixStream::pair().unwrap();
        let server = std::thread::spawn(move || serve_handshake_sized(a, ring).unwrap());
        let mut c = accept_handshake(b, Duration::from_secs(5)).unwrap();
        let mut s = server.join().unwrap();
        for x in [&mut c, &mut s] {
            x.spin = spin;
            x.futex_phase = futex_phase;
            x.wait_slice = wait_slice;
        }
        (Arc::new(c), Arc::new(s))
    }

    /// Runs `f` on its own thread; a hang (not done within `limit`) fails the test.
    fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        match rx.recv_timeout(limit) {
            Ok(v) => v,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("hung for {limit:?}"),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("the test failed"),
        }
    }

    /// Pins the calling thread to the first CPU it may run on.
    fn pin_to_first_cpu() {
        use rustix::thread::{sched_getaffinity, sched_setaffinity, CpuSet};
        let allowed = sched_getaffinity(None).unwrap();
        let first = (0..CpuSet::MAX_CPU).find(|&i| allowed.is_set(i)).unwrap();
        let mut one = CpuSet::new();
        one.set(first);
        sched_setaffinity(None, &one).unwrap();
    }

    /// `rounds` one-byte round trips, then `stream` bytes echoed back through both rings at
    /// once (full-ring waits on both sides when the rings are small).
    fn ping_pong(
        (c, s): (Arc<ShmConnection>, Arc<ShmConnection>),
        rounds: usize,
        stream: usize,
        one_cpu: bool,
    ) {
        let echo = std::thread::spawn(move || {
            if one_cpu {
                pin_to_first_cpu();
            }
            let mut b = [0u8; 1];
            for _ in 0..rounds {
                assert_eq!(s.read(&mut b).unwrap(), 1);
                assert_eq!(s.write_vectored(&[IoSlice::new(&b)]).unwrap(), 1);
            }
            let mut w = super::super::Stream(s.clone());
            let mut buf = vec![0u8; 7777];
            let mut left = stream;
            while left > 0 {
                let n = s.read(&mut buf[..left.min(7777)]).unwrap();
                assert!(n > 0);
                w.write_all(&buf[..n]).unwrap();
                left -= n;
            }
        });
        if one_cpu {
            pin_to_first_cpu();
        }
        let mut b = [0u8; 1];
        for i in 0..rounds {
            c.write_vectored(&[IoSlice::new(&[i as u8])]).unwrap();
            assert_eq!(c.read(&mut b).unwrap(), 1);
            assert_eq!(b[0], i as u8);
        }
        let data: Vec<u8> = (0..stream).map(|i| (i * 13 % 253) as u8).collect();
        let writer = {
            let (c, data) = (c.clone(), data.clone());
            std::thread::spawn(move || {
                if one_cpu {
                    pin_to_first_cpu();
                }
                let mut w = super::super::Stream(c);
                for chunk in data.chunks(3001) {
                    w.write_all(chunk).unwrap();
                }
            })
        };
        let mut got = vec![0u8; stream];
        super::super::Stream(c).read_exact(&mut got).unwrap();
        assert!(got == data, "bytes differ");
        writer.join().unwrap();
        echo.join().unwrap();
    }

    #[test]
    fn no_wake_up_is_lost_in_the_futex_without_spinning() {
        // Two CPUs racing each other's flags, then one CPU (every wait really sleeps); then
        // both again with each sleeper yielding between its check and its FUTEX_WAIT.
        for one_cpu in [false, true] {
            within(Duration::from_secs(120), move || {
                ping_pong(strict_pair(MIN_RING, false, HOUR), 20_000, 4 << 20, one_cpu)
            });
            within(Duration::from_secs(120), move || {
                ping_pong(racy_pair(HOUR), 20_000, 4 << 20, one_cpu)
            });
        }
    }

    #[test]
    fn no_wake_up_is_lost_in_poll() {
        // No futex phase: every sleep is in `poll`, every wake-up a socket byte.
        for one_cpu in [false, true] {
            within(Duration::from_secs(120), move || {
                ping_pong(
                    strict_pair(MIN_RING, false, Duration::ZERO),
                    5_000,
                    1 << 20,
                    one_cpu,
                )
            });
            within(Duration::from_secs(120), move || {
                ping_pong(racy_pair(Duration::ZERO), 5_000, 1 << 20, one_cpu)
            });
        }
    }

    #[test]
    fn spinning_sides_still_wake_each_other() {
        within(Duration::from_secs(120), || {
            ping_pong(strict_pair(MIN_RING, true, HOUR), 20_000, 4 << 20, false)
        });
    }

    #[test]
    fn spinning_backs_off_after_misses_and_resumes_after_a_hit() {
        let p = SpinPolicy::default();
        assert!(p.should_spin());
        p.outcome(false);
        assert!(!p.should_spin());
        assert!(p.should_spin());
        p.outcome(false);
        assert_eq!((0..3).filter(|_| p.should_spin()).count(), 0);
        assert!(p.should_spin());
        for _ in 0..20 {
            p.outcome(false);
        }
        assert_eq!(p.skip.load(Ordering::Relaxed), MAX_SPIN_SKIP);
        assert_eq!((0..=MAX_SPIN_SKIP).filter(|_| p.should_spin()).count(), 1);
        p.outcome(true);
        assert!(p.should_spin());
        p.outcome(false);
        assert!(!p.should_spin());
        assert!(p.should_spin());
    }

    #[test]
    fn shutdown_wakes_our_own_futex_sleepers() {
        let (c, s) = strict_pair(MIN_RING, false, HOUR);
        let reader = {
            let c = c.clone();
            std::thread::spawn(move || c.read(&mut [0u8; 8]).unwrap())
        };
        while c.reader_waiting(c.rx).load(Ordering::SeqCst) != IN_FUTEX {
            std::thread::yield_now();
        }
        // Our own writer, on a full ring.
        c.write_vectored(&[IoSlice::new(&[0u8; MIN_RING])]).unwrap();
        let writer = {
            let c = c.clone();
            std::thread::spawn(move || c.write_vectored(&[IoSlice::new(b"x")]))
        };
        while c.writer_waiting(c.tx).load(Ordering::SeqCst) != IN_FUTEX {
            std::thread::yield_now();
        }
        c.shutdown(Shutdown::Both).unwrap();
        within(Duration::from_secs(30), move || {
            assert_eq!(reader.join().unwrap(), 0);
            assert!(writer.join().unwrap().is_err());
        });
        drop(s);
    }

    #[test]
    fn a_peer_killed_while_we_sleep_in_the_futex_is_an_error() {
        // The peer's end of the socket lives only in a child process, which is killed while
        // both our reader (empty ring) and our writer (full ring) sleep in the futex.
        let (c, s) = strict_pair(MIN_RING, false, Duration::from_secs(2));
        let peer_socket = c.socket.try_clone().unwrap();
        drop(c);
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .stdin(std::process::Stdio::from(std::os::fd::OwnedFd::from(
                peer_socket,
            )))
            .spawn()
            .unwrap();
        let reader = {
            let s = s.clone();
            std::thread::spawn(move || s.read(&mut [0u8; 8]))
        };
        s.write_vectored(&[IoSlice::new(&[0u8; MIN_RING])]).unwrap();
        let writer = {
            let s = s.clone();
            std::thread::spawn(move || s.write_vectored(&[IoSlice::new(b"x")]))
        };
        for word in [s.reader_waiting(s.rx), s.writer_waiting(s.tx)] {
            while word.load(Ordering::SeqCst) != IN_FUTEX {
                std::thread::yield_now();
            }
        }
        child.kill().unwrap();
        child.wait().unwrap();
        within(Duration::from_secs(30), move || {
            assert_eq!(reader.join().unwrap().unwrap(), 0);
            assert_eq!(
                writer.join().unwrap().unwrap_err().kind(),
                io::ErrorKind::BrokenPipe
            );
        });
    }

    #[test]
    fn futex_waits_honour_the_read_timeout() {
        let (c, _s) = strict_pair(MIN_RING, false, HOUR);
        c.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let e = within(Duration::from_secs(30), move || {
            c.read(&mut [0u8; 8]).unwrap_err()
        });
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
    }

    #[test]
    fn a_peer_scribbling_on_the_waiting_words_only_delays() {
        let (c, s) = pair_with(
            MIN_RING,
            false,
            Duration::from_millis(5),
            Duration::from_millis(20),
        );
        for word in [s.reader_waiting(s.tx), s.writer_waiting(s.rx)] {
            word.store(0xdead_beef, Ordering::SeqCst);
        }
        // Garbage in the words: the waker wakes both ways (no panic), the bytes arrive.
        c.write_vectored(&[IoSlice::new(b"ok")]).unwrap();
        let mut b = [0u8; 2];
        assert_eq!(s.read(&mut b).unwrap(), 2);
        // A peer that keeps saying "awake" makes our sleeps end by timeout, not hang.
        let stop = Arc::new(AtomicBool::new(false));
        let scribbler = {
            let (c, stop) = (c.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    c.reader_waiting(c.tx).store(AWAKE, Ordering::SeqCst);
                    std::thread::yield_now();
                }
            })
        };
        let sender = {
            let c = c.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(30));
                c.write_vectored(&[IoSlice::new(b"late")]).unwrap();
            })
        };
        let s2 = s.clone();
        let n = within(Duration::from_secs(30), move || {
            s2.read(&mut [0u8; 8]).unwrap()
        });
        assert_eq!(n, 4);
        stop.store(true, Ordering::Relaxed);
        scribbler.join().unwrap();
        sender.join().unwrap();
    }
}
