//! The `corbina-names` daemon as a child process, and other helpers the tests share (not
//! every test uses every one).
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use corbina_testpeers::PeerProcess;

pub mod etcd;

/// Where a daemon keeps the naming graph.
#[derive(Clone, Copy)]
pub enum Store<'a> {
    /// A redb file in this directory.
    Redb(&'a Path),
    /// This `etcd://` URL.
    Etcd(&'a str),
}

/// Starts the daemon on `127.0.0.1:port` with its store in `data_dir` and waits for it to
/// print its IOR (it is serving by then); returns the process (killed when dropped) and
/// the IOR.
pub fn start_names(port: u16, data_dir: &Path) -> (PeerProcess, String) {
    start_names_on(port, Store::Redb(data_dir), &[])
}

/// [`start_names`] on any store, with more arguments.
pub fn start_names_on(port: u16, store: Store<'_>, extra: &[&str]) -> (PeerProcess, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_corbina-names"));
    cmd.args(["--endpoint", &format!("127.0.0.1:{port}")]);
    match store {
        Store::Redb(dir) => cmd.arg("--data-dir").arg(dir),
        Store::Etcd(url) => cmd.args(["--store", url]),
    };
    let mut daemon = PeerProcess::spawn("corbina-names", cmd.args(extra).stdout(Stdio::piped()));
    let stdout = daemon.child_mut().stdout.take().expect("piped stdout");
    let mut line = String::new();
    let read = BufReader::new(stdout).read_line(&mut line);
    assert!(
        read.is_ok() && line.starts_with("IOR:"),
        "corbina-names printed {line:?} ({read:?}); its stderr:\n{}",
        daemon.stderr()
    );
    (daemon, line.trim().to_owned())
}

/// A loopback port that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A replica of the daemon on `port`, on etcd at `url`, one of the replicas on `all`.
pub fn replica(port: u16, url: &str, all: &[u16]) -> PeerProcess {
    let list: Vec<String> = all.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    start_names_on(port, Store::Etcd(url), &["--replicas", &list.join(",")]).0
}

/// An ORB serving on a loopback port of its choice.
pub fn loopback_orb() -> corbina::Orb {
    corbina::Orb::with_config(corbina::OrbConfig {
        endpoints: vec![corbina::config::Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..corbina::OrbConfig::default()
    })
}
