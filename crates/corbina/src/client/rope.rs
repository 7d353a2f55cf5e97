//! A *Rope* is the pool of connections (*Strands*) to one server address, shared by every
//! object reference to that address (omniORB2's design, seed 001 §4): references open no
//! connection of their own, a strand carries one call at a time, and concurrent calls open
//! more strands on demand up to a maximum, after which callers wait for one to come free.
//! A strand runs over any transport ([`crate::transport::Connection`]).

use std::io::{self, BufReader, Read};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::cdr::CodeSets;
use crate::giop::Reassembler;
use crate::transport::{Address, ConnectionOptions, Stream};
use crate::{CompletionStatus, SystemException, SystemExceptionKind};

/// The read half of a strand: a connection whose every read is bounded by the current
/// call's deadline (the read timeout set to what is left), so a reply that trickles in
/// cannot stretch a call past its timeout.
pub(crate) struct TimedStream {
    stream: Stream,
    deadline: Option<Instant>,
    /// Whether a read timeout is currently set on the connection.
    timeout_set: bool,
}

impl TimedStream {
    pub(crate) fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }
}

impl Read for TimedStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.deadline {
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::ErrorKind::TimedOut.into());
                }
                self.stream.set_read_timeout(Some(left))?;
                self.timeout_set = true;
            }
            None if self.timeout_set => {
                self.stream.set_read_timeout(None)?;
                self.timeout_set = false;
            }
            None => {}
        }
        self.stream.read(buf)
    }
}

/// Connection settings a rope applies to each strand.
#[derive(Debug, Clone)]
pub struct StrandSettings {
    /// How long a connect may take.
    pub connect_timeout: Duration,
    /// Most strands (connections) to this address.
    pub max_strands: usize,
    /// SO_SNDBUF/SO_RCVBUF, if set.
    pub socket_buffer_size: Option<usize>,
    /// Largest message accepted, fragments reassembled.
    pub max_message_size: u32,
}

/// One connection to a server, used by one call at a time.
pub struct Strand {
    pub(crate) stream: Stream,
    pub(crate) reader: BufReader<TimedStream>,
    pub(crate) reassembler: Reassembler,
    next_request_id: u32,
    /// The transmission code sets fixed by the first request's CodeSets context.
    pub(crate) code_sets: Option<CodeSets>,
    /// Whether this strand has completed a call before (a reused strand may have been closed
    /// by the server meanwhile, which makes a failed send safe to retry).
    pub(crate) reused: bool,
    last_used: Instant,
    /// Seen idle by the last scavenger scan (cleared by every use).
    marked: bool,
    /// Whether SO_SNDTIMEO is currently set.
    write_timeout_set: bool,
    /// Buffers reused by every call on this strand: requests are marshalled into `out`
    /// and replies read into `inbound`, so a call allocates nothing in the steady state.
    pub(crate) out: Vec<u8>,
    pub(crate) inbound: Vec<u8>,
}

impl Strand {
    /// A fresh request id (even numbers, like omniORB; ids are per connection).
    pub(crate) fn next_request_id(&mut self) -> u32 {
        let id = self.next_request_id;
        self.next_request_id = self.next_request_id.wrapping_add(2);
        id
    }

    /// Whether an idle strand can carry a request: nothing may be waiting to be read on
    /// it (between calls the server only sends CloseConnection, or closes). Checked with
    /// one nonblocking peek, and only for strands idle for a while: the check is there
    /// to spot connections the server closed in between, not to win a race with it
    /// (an orderly close racing a request is handled by resending).
    fn is_usable(&self) -> bool {
        if !self.reader.buffer().is_empty() {
            return false;
        }
        if self.last_used.elapsed() < Duration::from_millis(1) {
            return true;
        }
        !self.stream.has_pending_input()
    }

    /// Bounds the next writes by `deadline` (`None`: block as long as it takes).
    pub(crate) fn set_write_deadline(&mut self, deadline: Option<Instant>) -> io::Result<()> {
        match deadline {
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::ErrorKind::TimedOut.into());
                }
                self.stream.set_write_timeout(Some(left))?;
                self.write_timeout_set = true;
            }
            None if self.write_timeout_set => {
                self.stream.set_write_timeout(None)?;
                self.write_timeout_set = false;
            }
            None => {}
        }
        Ok(())
    }
}

struct RopeState {
    // Boxed so that handing a strand to a caller and back moves a pointer, not the
    // strand's buffers and reader (measured: a few hundred bytes copied per call).
    #[allow(clippy::vec_box)]
    idle: Vec<Box<Strand>>,
    open: usize,
}

/// The connections to one address (`host:port` over TCP, or a local endpoint).
pub struct Rope {
    address: Address,
    settings: StrandSettings,
    state: Mutex<RopeState>,
    freed: Condvar,
}

fn transient(minor: u32) -> SystemException {
    SystemException::new(
        SystemExceptionKind::Transient,
        crate::cdr::OMG_VMCID | minor,
    )
}

impl Rope {
    /// A rope to `address`; no connection is opened until the first call.
    pub fn new(address: Address, settings: StrandSettings) -> Rope {
        Rope {
            address,
            settings,
            state: Mutex::new(RopeState {
                idle: Vec::new(),
                open: 0,
            }),
            freed: Condvar::new(),
        }
    }

    /// The address this rope connects to.
    pub fn address(&self) -> &Address {
        &self.address
    }

    /// Connections currently open (idle or in use).
    pub fn open_strands(&self) -> usize {
        self.state.lock().map(|s| s.open).unwrap_or(0)
    }

    /// Takes an idle strand, or opens one if under the limit, or waits for one to be freed.
    pub fn acquire(&self) -> Result<Box<Strand>, SystemException> {
        self.acquire_until(None)
    }

    /// [`Rope::acquire`], giving up at `deadline`: waiting for a strand ends with TIMEOUT
    /// (completed NO); a connect cut short by it, or by the connect timeout, with TRANSIENT.
    pub fn acquire_until(&self, deadline: Option<Instant>) -> Result<Box<Strand>, SystemException> {
        let mut st = self.state.lock().map_err(|_| transient(0))?;
        loop {
            while let Some(s) = st.idle.pop() {
                if s.is_usable() {
                    return Ok(s);
                }
                // Closed by the server while idle (CloseConnection or end of stream
                // pending): nothing was sent on it, so just drop it.
                st.open -= 1;
            }
            if st.open < self.settings.max_strands {
                st.open += 1;
                drop(st);
                return self.connect(deadline).inspect_err(|_| self.discard());
            }
            st = match deadline {
                None => self.freed.wait(st).map_err(|_| transient(0))?,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(SystemException::new(SystemExceptionKind::Timeout, 0)
                            .completed(CompletionStatus::No));
                    }
                    self.freed
                        .wait_timeout(st, left)
                        .map_err(|_| transient(0))?
                        .0
                }
            };
        }
    }

    /// Returns a strand after a complete call, for the next caller.
    pub fn release(&self, mut strand: Box<Strand>) {
        strand.reused = true;
        strand.marked = false;
        strand.last_used = Instant::now();
        if let Ok(mut st) = self.state.lock() {
            st.idle.push(strand);
        }
        self.freed.notify_one();
    }

    /// Forgets a strand that failed or was closed (it has already been dropped).
    pub fn discard(&self) {
        if let Ok(mut st) = self.state.lock() {
            st.open = st.open.saturating_sub(1);
        }
        self.freed.notify_one();
    }

    /// Closes idle strands unused for `idle_for`: the client half of the scavenger.
    pub fn close_idle(&self, idle_for: Duration) -> usize {
        let Ok(mut st) = self.state.lock() else {
            return 0;
        };
        let before = st.idle.len();
        st.idle.retain(|s| s.last_used.elapsed() < idle_for);
        let closed = before - st.idle.len();
        st.open -= closed;
        drop(st);
        self.freed.notify_all();
        closed
    }

    /// One scavenger scan (mark and sweep, seed 001 §4): closes the idle strands already
    /// marked by the previous scan and marks the rest; a call clears its strand's mark.
    /// Returns how many were closed.
    pub fn scavenge(&self) -> usize {
        let Ok(mut st) = self.state.lock() else {
            return 0;
        };
        let before = st.idle.len();
        st.idle.retain(|s| !s.marked);
        for s in &mut st.idle {
            s.marked = true;
        }
        let closed = before - st.idle.len();
        st.open -= closed;
        drop(st);
        self.freed.notify_all();
        closed
    }

    fn connect(&self, deadline: Option<Instant>) -> Result<Box<Strand>, SystemException> {
        let mut limit = self.settings.connect_timeout;
        if let Some(d) = deadline {
            limit = limit.min(d.saturating_duration_since(Instant::now()));
            if limit.is_zero() {
                return Err(transient(2));
            }
        }
        let options = ConnectionOptions {
            socket_buffer_size: self.settings.socket_buffer_size,
        };
        match self.address.connect(limit, &options) {
            Ok(conn) => Ok(self.strand(Stream(conn))),
            Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                Err(SystemException::new(SystemExceptionKind::Transient, 0))
            }
            Err(_) => Err(transient(2)),
        }
    }

    fn strand(&self, stream: Stream) -> Box<Strand> {
        let read_half = TimedStream {
            stream: stream.clone(),
            deadline: None,
            timeout_set: false,
        };
        let reader = BufReader::with_capacity(64 * 1024, read_half);
        Box::new(Strand {
            stream,
            reader,
            reassembler: Reassembler::new(self.settings.max_message_size as usize),
            next_request_id: 2,
            code_sets: None,
            reused: false,
            last_used: Instant::now(),
            marked: false,
            write_timeout_set: false,
            out: Vec::with_capacity(512),
            inbound: Vec::with_capacity(512),
        })
    }
}
