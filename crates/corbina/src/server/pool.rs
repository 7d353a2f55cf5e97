//! The thread pool server model (`-ORBThreadPool n`): a fixed number of threads serves any
//! number of connections, with the same per-connection semantics as thread per connection.
//!
//! Leader/followers: one pool thread at a time (the leader) waits in `poll(2)` on every
//! idle connection and on a wake-up socket. When connections become readable the leader
//! takes them out of the poll set, hands leadership to a follower, and serves the first
//! one itself — reads, upcall and reply on the thread that saw the event, no hand-off; any
//! other readable connections are queued for the followers. A connection being served is
//! out of the poll set, so its requests run in order, one at a time, as with a thread per
//! connection; when done it goes back and the leader is woken to watch it again.
//!
//! Sockets stay blocking for writes (replies are written as with a thread per connection);
//! reads are nonblocking (`MSG_DONTWAIT`) into the connection's receive buffer, so a client
//! that sends half a message and stalls holds no thread.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

use rustix::event::{poll, PollFd, PollFlags};

use super::connection::Connection;
use crate::transport::Stream;

/// How long the leader waits in `poll` before looking at the stop flag again.
const POLL_TIMEOUT: rustix::event::Timespec = rustix::event::Timespec {
    tv_sec: 1,
    tv_nsec: 0,
};

struct PoolConn {
    id: u64,
    read_half: Stream,
    work: Mutex<Work>,
}

struct Work {
    conn: Connection,
}

struct PoolState {
    /// Connections waiting for input: the leader's poll set.
    idle: HashMap<u64, Arc<PoolConn>>,
    /// Readable connections the leader found and left for the followers.
    pending: VecDeque<Arc<PoolConn>>,
    leader: bool,
    stopping: bool,
    /// Connections owned by the pool (idle, pending or being served).
    conns: usize,
    next_id: u64,
}

/// A leader/followers pool serving connections.
pub(crate) struct Pool {
    state: Mutex<PoolState>,
    followers: Condvar,
    wake_tx: UnixStream,
    wake_rx: UnixStream,
    threads: usize,
}

impl Pool {
    /// Starts `threads` pool threads.
    pub(crate) fn start(threads: usize) -> io::Result<Arc<Pool>> {
        let (wake_tx, wake_rx) = UnixStream::pair()?;
        wake_rx.set_nonblocking(true)?;
        wake_tx.set_nonblocking(true)?;
        let pool = Arc::new(Pool {
            state: Mutex::new(PoolState {
                idle: HashMap::new(),
                pending: VecDeque::new(),
                leader: false,
                stopping: false,
                conns: 0,
                next_id: 0,
            }),
            followers: Condvar::new(),
            wake_tx,
            wake_rx,
            threads,
        });
        for i in 0..threads {
            let p = pool.clone();
            thread::Builder::new()
                .name(format!("corbina-pool-{i}"))
                .spawn(move || p.worker())?;
        }
        Ok(pool)
    }

    /// The pool's size.
    pub(crate) fn threads(&self) -> usize {
        self.threads
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes over an accepted connection.
    pub(crate) fn add(&self, conn: Connection, read_half: Stream) {
        // Input the transport already holds (a TLS handshake's last read may bring the
        // first request) never makes the descriptor readable: such a connection is served
        // before it joins the poll set.
        let ready = read_half.has_pending_input();
        let mut st = self.lock();
        let id = st.next_id;
        st.next_id += 1;
        st.conns += 1;
        let c = Arc::new(PoolConn {
            id,
            read_half,
            work: Mutex::new(Work { conn }),
        });
        if ready {
            st.pending.push_back(c);
        } else {
            st.idle.insert(id, c);
        }
        let leader = st.leader;
        drop(st);
        if leader {
            self.wake();
        } else {
            self.followers.notify_one();
        }
    }

    /// Lets the threads exit once every connection is gone.
    pub(crate) fn stop(&self) {
        self.lock().stopping = true;
        self.followers.notify_all();
        self.wake();
    }

    fn wake(&self) {
        // A full socket already holds a wake-up: nothing is lost.
        let _ = (&self.wake_tx).write(&[1]);
    }

    fn worker(self: Arc<Self>) {
        loop {
            let mut st = self.lock();
            let job = loop {
                if let Some(c) = st.pending.pop_front() {
                    break Some(c);
                }
                if st.stopping && st.conns == 0 {
                    drop(st);
                    self.followers.notify_all();
                    return;
                }
                if !st.leader {
                    st.leader = true;
                    break None;
                }
                st = self.followers.wait(st).unwrap_or_else(|p| p.into_inner());
            };
            match job {
                Some(c) => {
                    drop(st);
                    self.serve(c);
                }
                None => {
                    let set: Vec<Arc<PoolConn>> = st.idle.values().cloned().collect();
                    drop(st);
                    let ready = self.wait_readable(&set);
                    // Not kept while serving: a connection another thread closes meanwhile
                    // is dropped (its receive memory with it) when that thread lets go.
                    drop(set);
                    let mut st = self.lock();
                    st.leader = false;
                    let mut mine = None;
                    for c in ready {
                        st.idle.remove(&c.id);
                        match mine {
                            None => mine = Some(c),
                            Some(_) => st.pending.push_back(c),
                        }
                    }
                    drop(st);
                    // A follower takes over as leader (and any queued connections).
                    self.followers.notify_all();
                    if let Some(c) = mine {
                        self.serve(c);
                    }
                }
            }
        }
    }

    /// The leader's wait: `poll` on the wake-up socket and every idle connection.
    fn wait_readable(&self, set: &[Arc<PoolConn>]) -> Vec<Arc<PoolConn>> {
        let mut fds = Vec::with_capacity(set.len() + 1);
        fds.push(PollFd::new(&self.wake_rx, PollFlags::IN));
        for c in set {
            fds.push(PollFd::from_borrowed_fd(
                c.read_half.poll_fd(),
                PollFlags::IN,
            ));
        }
        match poll(&mut fds, Some(&POLL_TIMEOUT)) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => return Vec::new(),
            Err(_) => {
                thread::sleep(std::time::Duration::from_millis(10));
                return Vec::new();
            }
        }
        if !fds[0].revents().is_empty() {
            let mut sink = [0u8; 256];
            while matches!((&self.wake_rx).read(&mut sink), Ok(n) if n > 0) {}
        }
        fds[1..]
            .iter()
            .zip(set)
            .filter(|(fd, _)| !fd.revents().is_empty())
            .map(|(_, c)| c.clone())
            .collect()
    }

    /// Reads what has arrived on `c` and handles every complete message, then puts it back
    /// in the poll set — or closes it.
    fn serve(&self, c: Arc<PoolConn>) {
        let open = {
            let mut work = c.work.lock().unwrap_or_else(|p| p.into_inner());
            serve_messages(&c.read_half, &mut work.conn)
        };
        let mut st = self.lock();
        if open {
            st.idle.insert(c.id, c);
            let leader = st.leader;
            drop(st);
            if leader {
                self.wake();
            } else {
                self.followers.notify_one();
            }
        } else {
            st.conns -= 1;
            drop(st);
            let mut work = c.work.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(offer) = work.conn.handler.bidir_offer.take() {
                // Bidirectional GIOP taken: the connection leaves the pool for a reader
                // thread of its own (its requests run on its workers).
                let parts = work.conn.take_bidir_parts();
                let read_half = c.read_half.clone();
                let spawned = thread::Builder::new()
                    .name("corbina-bidir".into())
                    .spawn(move || crate::bidir::serve_accepted(parts, read_half, offer));
                if spawned.is_err() {
                    work.conn.handler.finish();
                }
            } else {
                work.conn.handler.finish();
            }
            self.followers.notify_all();
            self.wake();
        }
    }
}

/// Reads what has arrived on the connection, without waiting, and handles every message
/// that is complete; false when the connection is over.
fn serve_messages(fd: &Stream, conn: &mut Connection) -> bool {
    loop {
        if !conn.handle_events() {
            return false;
        }
        match fd.read_nonblocking(conn.giop.read_buf()) {
            Ok(0) => {
                conn.giop.end_of_stream();
                return false;
            }
            Ok(n) => conn.giop.commit(n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                // Nothing more for now: back to the poll set, holding no large buffer.
                conn.giop.shrink_idle();
                return true;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}
