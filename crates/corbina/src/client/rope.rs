//! A *Rope* is the pool of connections (*Strands*) to one server address, shared by every
//! object reference to that address (omniORB2's design, seed 001 §4): references open no
//! connection of their own, a strand carries one call at a time, and concurrent calls open
//! more strands on demand up to a maximum, after which callers wait for one to come free.

use std::io::BufReader;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::cdr::CodeSets;
use crate::giop::Reassembler;
use crate::{SystemException, SystemExceptionKind};

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
    pub(crate) stream: TcpStream,
    pub(crate) reader: BufReader<TcpStream>,
    pub(crate) reassembler: Reassembler,
    next_request_id: u32,
    /// The transmission code sets fixed by the first request's CodeSets context.
    pub(crate) code_sets: Option<CodeSets>,
    /// Whether this strand has completed a call before (a reused strand may have been closed
    /// by the server meanwhile, which makes a failed send safe to retry).
    pub(crate) reused: bool,
    last_used: Instant,
}

impl Strand {
    /// A fresh request id (even numbers, like omniORB; ids are per connection).
    pub(crate) fn next_request_id(&mut self) -> u32 {
        let id = self.next_request_id;
        self.next_request_id = self.next_request_id.wrapping_add(2);
        id
    }
}

struct RopeState {
    idle: Vec<Strand>,
    open: usize,
}

/// The connections to one `host:port`.
pub struct Rope {
    host: String,
    port: u16,
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
    /// A rope to `host:port`; no connection is opened until the first call.
    pub fn new(host: String, port: u16, settings: StrandSettings) -> Rope {
        Rope {
            host,
            port,
            settings,
            state: Mutex::new(RopeState {
                idle: Vec::new(),
                open: 0,
            }),
            freed: Condvar::new(),
        }
    }

    /// The address this rope connects to.
    pub fn address(&self) -> (&str, u16) {
        (&self.host, self.port)
    }

    /// Connections currently open (idle or in use).
    pub fn open_strands(&self) -> usize {
        self.state.lock().map(|s| s.open).unwrap_or(0)
    }

    /// Takes an idle strand, or opens one if under the limit, or waits for one to be freed.
    pub fn acquire(&self) -> Result<Strand, SystemException> {
        let mut st = self.state.lock().map_err(|_| transient(0))?;
        loop {
            if let Some(s) = st.idle.pop() {
                return Ok(s);
            }
            if st.open < self.settings.max_strands {
                st.open += 1;
                drop(st);
                return self.connect().inspect_err(|_| self.discard());
            }
            st = self.freed.wait(st).map_err(|_| transient(0))?;
        }
    }

    /// Returns a strand after a complete call, for the next caller.
    pub fn release(&self, mut strand: Strand) {
        strand.reused = true;
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
        closed
    }

    fn connect(&self) -> Result<Strand, SystemException> {
        let addrs = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|_| transient(2))?;
        let mut last_err = transient(2);
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, self.settings.connect_timeout) {
                Ok(stream) => return self.strand(stream),
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                    last_err = SystemException::new(SystemExceptionKind::Transient, 0);
                }
                Err(_) => last_err = transient(2),
            }
        }
        Err(last_err)
    }

    fn strand(&self, stream: TcpStream) -> Result<Strand, SystemException> {
        // Small requests must not wait for Nagle's algorithm (seeds 002, 004).
        stream.set_nodelay(true).map_err(|_| transient(2))?;
        if let Some(size) = self.settings.socket_buffer_size {
            let sock = socket2::SockRef::from(&stream);
            let _ = sock.set_send_buffer_size(size);
            let _ = sock.set_recv_buffer_size(size);
        }
        let reader =
            BufReader::with_capacity(64 * 1024, stream.try_clone().map_err(|_| transient(2))?);
        Ok(Strand {
            stream,
            reader,
            reassembler: Reassembler::new(self.settings.max_message_size as usize),
            next_request_id: 2,
            code_sets: None,
            reused: false,
            last_used: Instant::now(),
        })
    }
}
