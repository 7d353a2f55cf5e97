//! Shared memory: a peer process killed while this one sleeps waiting for it (in the
//! futex, the first 10 ms (`shm::FUTEX_PHASE`) of a wait) is an error, never a hang: the ORB's
//! call gives COMM_FAILURE, the transport's read end of stream and its write BrokenPipe.
//!
//! The peers are child processes (this test binary, re-executed), killed with SIGKILL.

mod common;

use std::io::{self, BufRead, BufReader, IoSlice, Lines, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::bench::Bench;
use corbina::dii::NVList;
use corbina::dsi::{DsiSkeleton, DynServerRequest, DynamicImplementation};
use corbina::transport::{shm, Address, Listener};
use corbina::{CompletionStatus, Orb, OrbConfig, SystemException, SystemExceptionKind};

const CHILD_ENV: &str = "SHM_PEER_DEATH_CHILD";

/// A short, unique socket path (they are limited to 108 bytes).
fn socket_path(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("cbn-{}-{name}.sock", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

/// Bench through the DSI: `ping` answers, `start_timer` says so on stdout and never
/// returns (the child is killed in it).
struct Stalling;

impl DynamicImplementation for Stalling {
    fn primary_interface(&self) -> &'static str {
        "IDL:Bench:1.0"
    }

    fn invoke(&self, req: &mut DynServerRequest<'_, '_, '_>) -> Result<(), SystemException> {
        req.arguments(NVList::new())?;
        if req.operation() == "start_timer" {
            say("upcall");
            thread::sleep(Duration::from_secs(600));
        }
        Ok(())
    }
}

fn say(line: &str) {
    let mut out = io::stdout();
    writeln!(out, "{line}").unwrap();
    out.flush().unwrap();
}

/// Not a test: the child's entry point (runs only with `SHM_PEER_DEATH_CHILD=ROLE:PATH`).
#[test]
fn child_entry() {
    let Some(spec) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let spec = spec.into_string().unwrap();
    let (role, path) = spec.split_once(':').unwrap();
    let path = Path::new(path);
    match role {
        // An ORB serving `Stalling` over shared memory only.
        "orb-server" => {
            let orb = Orb::with_config(OrbConfig::default().shm_endpoint(path));
            let poa = orb.root_poa();
            let id = poa
                .activate_object(Arc::new(DsiSkeleton::new(Stalling)))
                .unwrap();
            let obj = poa.id_to_reference(&id).unwrap();
            poa.the_poa_manager().activate().unwrap();
            say(&orb.object_to_string(&obj).unwrap());
            orb.run();
        }
        // Connects, writes a greeting, then neither reads nor writes.
        "client" => {
            let c = shm::connect(path, Duration::from_secs(5)).unwrap();
            c.write_vectored(&[IoSlice::new(b"hello")]).unwrap();
            say("sent");
            thread::sleep(Duration::from_secs(600));
        }
        // Accepts one connection and never reads it.
        "server" => {
            let l = shm::ShmEndpoint::bind(path).unwrap();
            say("ready");
            let _c = l.accept().unwrap();
            say("accepted");
            thread::sleep(Duration::from_secs(600));
        }
        other => panic!("unknown role {other}"),
    }
}

/// A child process, killed and reaped when dropped.
struct Peer {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Peer {
    fn start(role: &str, path: &Path) -> Peer {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, format!("{role}:{}", path.display()))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("child starts");
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Peer { child, lines }
    }

    /// The next line the child printed that contains `what` (test harness lines skipped).
    fn expect(&mut self, what: &str) -> String {
        loop {
            let line = self.lines.next().expect("the child printed").unwrap();
            if line.contains(what) {
                return line;
            }
        }
    }

    fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The result of `f` run on its own thread; a hang (not done within `limit`) fails.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(limit) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("hung for {limit:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the test failed"),
    }
}

#[test]
fn server_killed_while_the_caller_sleeps_is_comm_failure() {
    // The server is killed as soon as the request has reached the servant: the caller is
    // then well inside its futex phase (microseconds into its wait, the phase is ms).
    for round in 0..3 {
        let path = socket_path(&format!("orb-{round}"));
        let mut peer = Peer::start("orb-server", &path);
        let ior = peer.expect("IOR:");
        let ior = ior[ior.find("IOR:").unwrap()..].trim().to_owned();
        let orb = Orb::with_config(OrbConfig::default());
        let bench = Bench::unchecked_narrow(&orb.string_to_object(&ior).unwrap());
        bench.ping().unwrap();
        let connections = orb.connections();
        assert!(
            connections
                .iter()
                .all(|c| matches!(c.address, Address::Shm(_))),
            "not over shared memory"
        );
        let (tx, rx) = mpsc::channel();
        {
            let bench = Bench::unchecked_narrow(bench.as_object());
            thread::spawn(move || {
                let _ = tx.send(bench.start_timer());
            });
        }
        peer.expect("upcall");
        peer.kill();
        let killed = Instant::now();
        let r = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the call hung after its server died");
        match r {
            Err(e) => {
                assert_eq!(e.kind, SystemExceptionKind::CommFailure, "{e:?}");
                assert_eq!(e.completed, CompletionStatus::Maybe, "{e:?}");
            }
            Ok(()) => panic!("a call to a killed server succeeded"),
        }
        // Bounded by the futex phase (plus scheduling), far below the 30 s hang limit.
        assert!(killed.elapsed() < Duration::from_secs(5));
        drop(orb);
        let _ = std::fs::remove_file(&path);
    }
}

#[test]
fn client_killed_while_the_server_reads_is_end_of_stream() {
    let path = socket_path("reader");
    let endpoint = shm::ShmEndpoint::bind(&path).unwrap();
    let mut peer = Peer::start("client", &path);
    let conn = endpoint.accept().unwrap();
    peer.expect("sent");
    let mut buf = [0u8; 16];
    let mut got = 0;
    while got < 5 {
        got += conn.read(&mut buf[got..]).unwrap();
    }
    assert_eq!(&buf[..5], b"hello");
    let reader = {
        let conn = conn.clone();
        thread::spawn(move || conn.read(&mut [0u8; 16]))
    };
    // Let the reader get past its spin into the futex, then kill the writer.
    thread::sleep(Duration::from_millis(1));
    peer.kill();
    let n = within(Duration::from_secs(30), move || reader.join().unwrap());
    assert_eq!(n.unwrap(), 0);
}

#[test]
fn server_killed_while_the_client_waits_for_room_is_broken_pipe() {
    let path = socket_path("writer");
    let mut peer = Peer::start("server", &path);
    peer.expect("ready");
    let conn = shm::connect(&path, Duration::from_secs(5)).unwrap();
    peer.expect("accepted");
    // Fill the ring (the server never reads), then one more write waits for room.
    let chunk = vec![7u8; 64 * 1024];
    let writer = {
        let conn = conn.clone();
        thread::spawn(move || loop {
            if let Err(e) = conn.write_vectored(&[IoSlice::new(&chunk)]) {
                return e;
            }
        })
    };
    thread::sleep(Duration::from_millis(50));
    peer.kill();
    let e = within(Duration::from_secs(30), move || writer.join().unwrap());
    assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
}
