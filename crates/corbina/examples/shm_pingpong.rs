//! How a sleeping side of a shared-memory connection is best woken: the measurement behind
//! the shared-memory transport's choice of a futex (`corbina::transport::shm`).
//!
//! Two threads play ping-pong through a word each way, with the transport's protocol (the
//! receiver announces its sleep in a waiting word, rechecks, sleeps; the sender publishes,
//! then makes a system call only if the receiver announced itself). Neither side spins, so
//! every turn really sleeps and wakes. What differs is the wake-up:
//!
//! - `futex`: `FUTEX_WAIT` / `FUTEX_WAKE` on the waiting word (shared, not private);
//! - `eventfd`: `poll` on an eventfd and the rendezvous socket together, `read` to reset,
//!   `write` to wake;
//! - `socket`: `poll` on the socket, `recv` to drain, `send` of one byte to wake (what the
//!   transport did before).
//!
//! ```text
//! cargo run --release -p corbina --example shm_pingpong -- [--rounds N] [--runs R] [--cpus same|split]
//! ```
//!
//! `same` (the default) pins both threads to one CPU, as `taskset -c 0` does to two
//! processes; `split` puts them on two. Prints the median over runs of µs per round trip
//! for each mechanism and its ratio to the futex, measured in the same run.

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{fence, AtomicU32, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

use rustix::event::{eventfd, poll, EventfdFlags, PollFd, PollFlags};
use rustix::net::{RecvFlags, SendFlags};
use rustix::thread::{futex, sched_getaffinity, sched_setaffinity, CpuSet};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mechanism {
    Futex,
    Eventfd,
    Socket,
}

/// One direction: the value the sender publishes, and the receiver's waiting word.
struct Mailbox {
    value: AtomicU32,
    waiting: AtomicU32,
    /// The receiver's eventfd (eventfd mechanism).
    event: OwnedFd,
}

/// One side's view: its inbox and outbox, its socket end and the peer's.
struct Side {
    inbox: Arc<Mailbox>,
    outbox: Arc<Mailbox>,
    socket: UnixStream,
    mechanism: Mechanism,
}

impl Side {
    fn send(&self, v: u32) {
        self.outbox.value.store(v, Ordering::Release);
        fence(Ordering::SeqCst);
        if self.outbox.waiting.load(Ordering::Relaxed) == 0
            || self.outbox.waiting.swap(0, Ordering::SeqCst) == 0
        {
            return;
        }
        match self.mechanism {
            Mechanism::Futex => {
                futex::wake(&self.outbox.waiting, futex::Flags::empty(), 1).unwrap();
            }
            Mechanism::Eventfd => {
                rustix::io::write(&self.outbox.event, &1u64.to_ne_bytes()).unwrap();
            }
            Mechanism::Socket => {
                rustix::net::send(&self.socket, &[1], SendFlags::DONTWAIT).unwrap();
            }
        }
    }

    fn receive(&self, v: u32) {
        let ready = || self.inbox.value.load(Ordering::Acquire) == v;
        while !ready() {
            self.inbox.waiting.store(1, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if ready() {
                self.inbox.waiting.store(0, Ordering::Relaxed);
                break;
            }
            match self.mechanism {
                Mechanism::Futex => {
                    let _ = futex::wait(&self.inbox.waiting, futex::Flags::empty(), 1, None);
                }
                Mechanism::Eventfd => {
                    let mut fds = [
                        PollFd::new(&self.inbox.event, PollFlags::IN),
                        PollFd::new(&self.socket, PollFlags::IN),
                    ];
                    poll(&mut fds, None).unwrap();
                    let mut b = [0u8; 8];
                    let _ = rustix::io::read(&self.inbox.event, &mut b);
                }
                Mechanism::Socket => {
                    let mut fds = [PollFd::new(&self.socket, PollFlags::IN)];
                    poll(&mut fds, None).unwrap();
                    let mut b = [0u8; 64];
                    let _ = rustix::net::recv(&self.socket, &mut b, RecvFlags::DONTWAIT);
                }
            }
            self.inbox.waiting.store(0, Ordering::Relaxed);
        }
    }
}

fn mailbox() -> Arc<Mailbox> {
    Arc::new(Mailbox {
        value: AtomicU32::new(0),
        waiting: AtomicU32::new(0),
        event: eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK).unwrap(),
    })
}

fn pin(cpu: usize) {
    let mut set = CpuSet::new();
    set.set(cpu);
    sched_setaffinity(None, &set).unwrap();
}

/// µs per round trip over `rounds` round trips.
fn run(mechanism: Mechanism, rounds: u32, cpus: (usize, usize)) -> f64 {
    let (a_box, b_box) = (mailbox(), mailbox());
    let (sa, sb) = UnixStream::pair().unwrap();
    for s in [&sa, &sb] {
        s.set_nonblocking(true).unwrap();
    }
    let a = Side {
        inbox: a_box.clone(),
        outbox: b_box.clone(),
        socket: sa,
        mechanism,
    };
    let b = Side {
        inbox: b_box,
        outbox: a_box,
        socket: sb,
        mechanism,
    };
    let start = Arc::new(Barrier::new(2));
    let echo = {
        let start = start.clone();
        thread::spawn(move || {
            pin(cpus.1);
            start.wait();
            for i in 1..=rounds {
                b.receive(i);
                b.send(i);
            }
        })
    };
    pin(cpus.0);
    start.wait();
    let t = Instant::now();
    for i in 1..=rounds {
        a.send(i);
        a.receive(i);
    }
    let us = t.elapsed().as_secs_f64() * 1e6 / f64::from(rounds);
    echo.join().unwrap();
    us
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut rounds = 20_000u32;
    let mut runs = 7usize;
    let mut split = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().expect("a value");
        match a.as_str() {
            "--rounds" => rounds = val().parse().expect("--rounds N"),
            "--runs" => runs = val().parse::<usize>().expect("--runs R").max(1),
            "--cpus" => split = val() == "split",
            other => panic!("unknown option {other}"),
        }
    }
    let allowed = sched_getaffinity(None).unwrap();
    let mine: Vec<usize> = (0..CpuSet::MAX_CPU)
        .filter(|&i| allowed.is_set(i))
        .collect();
    let cpus = if split && mine.len() > 1 {
        (mine[0], mine[1])
    } else {
        (mine[0], mine[0])
    };
    let all = [Mechanism::Futex, Mechanism::Eventfd, Mechanism::Socket];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); all.len()];
    // Interleaved runs: each mechanism sees the same machine load.
    for _ in 0..runs {
        for (i, m) in all.iter().enumerate() {
            times[i].push(run(*m, rounds, cpus));
        }
    }
    let futex = median(times[0].clone());
    println!(
        "{rounds} round trips x {runs} runs, threads on CPUs {} and {}",
        cpus.0, cpus.1
    );
    for (m, t) in all.iter().zip(times) {
        let med = median(t.clone());
        let (lo, hi) = (
            t.iter().copied().fold(f64::INFINITY, f64::min),
            t.iter().copied().fold(0.0, f64::max),
        );
        println!(
            "{:8} {med:7.2} µs/round trip (min {lo:.2}, max {hi:.2})  {:.2}x futex",
            format!("{m:?}").to_lowercase(),
            med / futex
        );
    }
}
