//! Interop with JacORB 3.9 (`org.jacorb:jacorb-services` from Maven): JacORB's event
//! clients (`peers/jacorb-events/src/EventsPeer.java`: a push supplier, a push consumer, a
//! pull consumer) on Corbina's daemon, and Corbina's clients on JacORB's own
//! `EventChannelImpl`. Skipped, with a note, without Java and Maven (a failure under
//! `REQUIRE_OMNIORB_PEERS`).

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::OnceLock;
use std::time::Duration;

use common::*;
use corbina::Any;
use corbina_testpeers::{
    jacorb_tools_installed, output_root, repo_root, skip_unless, PeerProcess, IOR_TIMEOUT,
    JACORB_JVM_ARGS,
};

const WAIT: Duration = Duration::from_secs(30);

/// Builds `peers/jacorb-events` once per process; its classpath, or `None` (with a note)
/// without Java and Maven.
fn classpath() -> Option<&'static str> {
    static CP: OnceLock<Option<String>> = OnceLock::new();
    CP.get_or_init(|| {
        if !skip_unless(
            jacorb_tools_installed(),
            "JacORB event interop",
            "Java and Maven (default-jdk-headless, maven) are not installed",
        ) {
            return None;
        }
        let out = output_root().join("jacorb-events");
        let o = Command::new("make")
            .arg("-s")
            .arg("-C")
            .arg(repo_root().join("peers/jacorb-events"))
            .arg(format!("B={}", out.display()))
            .output()
            .expect("make runs");
        assert!(
            o.status.success(),
            "building peers/jacorb-events failed:\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        Some(
            std::fs::read_to_string(out.join("classpath"))
                .unwrap()
                .trim()
                .to_owned(),
        )
    })
    .as_deref()
}

/// A running `EventsPeer` and the lines it prints.
struct Peer {
    process: PeerProcess,
    lines: Receiver<String>,
}

impl Peer {
    fn start(cp: &str, args: &[&str]) -> Peer {
        let mut process = PeerProcess::spawn(
            "JacORB EventsPeer",
            Command::new("java")
                .args(JACORB_JVM_ARGS)
                .arg("-cp")
                .arg(cp)
                .arg("EventsPeer")
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::piped()),
        );
        let stdout = process.child_mut().stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Peer { process, lines }
    }

    /// The lines up to (without) `last`; panics, with the peer's stderr, on a timeout.
    fn until(&self, last: &str) -> Vec<String> {
        let mut got = Vec::new();
        loop {
            match self.lines.recv_timeout(WAIT) {
                Ok(l) if l == last => return got,
                Ok(l) => got.push(l),
                Err(e) => panic!(
                    "EventsPeer: no {last:?} ({e}) after {got:?}; its stderr:\n{}",
                    self.process.stderr()
                ),
            }
        }
    }
}

/// What `EventsPeer` prints for its event `i`.
fn jacorb_line(i: usize) -> String {
    if i.is_multiple_of(2) {
        format!("long {i}")
    } else {
        format!("string jacorb {i}")
    }
}

/// The same, of an event a Corbina consumer received.
fn show(a: &Any) -> String {
    match (a.to_long(), a.to_string_value()) {
        (Some(l), _) => format!("long {l}"),
        (_, Some(s)) => format!("string {s}"),
        _ => format!("{a:?}"),
    }
}

#[test]
fn event_jacorb_clients_on_corbina_daemon() {
    let Some(cp) = classpath() else { return };
    let port = free_port();
    let dir = temp_dir("jacorb-clients");
    let (_daemon, _) = start_daemon(port, &dir, &[]);
    let url = format!("corbaloc::127.0.0.1:{port}/EventChannel");
    const N: usize = 40;
    let n = N.to_string();
    let consumer = Peer::start(cp, &["consume", &url, &n]);
    let puller = Peer::start(cp, &["pull", &url, &n]);
    assert!(consumer.until("ready").is_empty());
    assert!(puller.until("ready").is_empty());
    // And a Corbina consumer beside them.
    let client = client_orb();
    let got = collector_on(&client, &channel_at(&client, &url), Duration::ZERO);

    let supplier = Peer::start(cp, &["supply", &url, &n]);
    assert_eq!(supplier.until("done"), [format!("pushed {N}")]);
    let want: Vec<String> = (0..N).map(jacorb_line).collect();
    assert_eq!(consumer.until("done"), want);
    assert_eq!(puller.until("done"), want);
    let corbina: Vec<String> = got.wait_for(N, WAIT).iter().map(show).collect();
    assert_eq!(corbina, want);
    client.destroy();
    let _ = std::fs::remove_dir_all(&dir);
}

fn wait_ior(p: &mut PeerProcess, file: &Path) -> String {
    p.wait_for_ior_file(file, IOR_TIMEOUT)
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn event_corbina_clients_on_jacorb_channel() {
    let Some(cp) = classpath() else { return };
    let dir: PathBuf = temp_dir("jacorb-channel");
    std::fs::create_dir_all(&dir).unwrap();
    let ior_file = dir.join("channel.ior");
    let mut server = Peer::start(cp, &["serve", ior_file.to_str().unwrap()]);
    let ior = wait_ior(&mut server.process, &ior_file);
    let client = client_orb();
    let ch = channel_at(&client, &ior);
    let got = collector_on(&client, &ch, Duration::ZERO);
    let pull = puller(&ch);
    let sup = supplier(&ch);
    let sent: Vec<Any> = (0..20)
        .map(|i| {
            if i % 2 == 0 {
                Any::from_long(i)
            } else {
                Any::from_string(&format!("corbina {i}")).unwrap()
            }
        })
        .collect();
    for e in &sent {
        sup.push(e).unwrap();
    }
    let want: Vec<String> = sent.iter().map(show).collect();
    let pushed: Vec<String> = got.wait_for(20, WAIT).iter().map(show).collect();
    assert_eq!(pushed, want);
    let pulled: Vec<String> = (0..20).map(|_| show(&pull.pull().unwrap())).collect();
    assert_eq!(pulled, want);
    client.destroy();
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn event_jacorb_filter_client_on_corbina_filter_factory() {
    let Some(cp) = classpath() else { return };
    let port = free_port();
    let dir = temp_dir("jacorb-filter");
    let (_daemon, _) = start_daemon(port, &dir, &[]);
    let url = format!("corbaloc::127.0.0.1:{port}/FilterFactory");
    let peer = Peer::start(cp, &["filter", &url]);
    // Alarm priority 5: yes; 3: no; a Fault: no; Alarm 4: yes; any 11: yes; any 10: no.
    assert_eq!(
        peer.until("done"),
        ["true", "false", "false", "true", "true", "false"].map(|m| format!("match {m}"))
    );
    let _ = std::fs::remove_dir_all(&dir);
}
