//! A throwaway etcd cluster on loopback ports (Debian's `etcd-server`), for the tests of
//! the etcd store. Members can be killed (SIGKILL) and restarted on their data.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use corbina_testpeers::PeerProcess;

/// Where Debian installs etcd.
const ETCD: &str = "/usr/bin/etcd";

/// The `etcd` binary: on `PATH`, else Debian's.
pub fn etcd_binary() -> Option<PathBuf> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("etcd"))
        .chain([PathBuf::from(ETCD)])
        .find(|p| p.is_file())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Member {
    name: String,
    client: u16,
    peer: u16,
    process: Option<PeerProcess>,
}

/// A running cluster; its members are killed and its data removed when it is dropped
/// (each member's write-ahead log preallocates 64 MB: left behind, test runs fill disks).
pub struct EtcdCluster {
    bin: PathBuf,
    dir: PathBuf,
    members: Vec<Member>,
}

impl EtcdCluster {
    /// Starts `n` members and waits until every one is healthy (has a leader). `None` (the
    /// test is skipped) when etcd is not installed, unless `REQUIRE_OMNIORB_PEERS` is set.
    pub fn start(name: &str, n: usize) -> Option<EtcdCluster> {
        let bin = etcd_binary();
        if !corbina_testpeers::skip_unless(
            bin.is_some(),
            name,
            "etcd is not installed (Debian package etcd-server)",
        ) {
            return None;
        }
        let bin = bin.unwrap_or_default();
        // A port found free may be taken before etcd binds it (another test's connection):
        // such a start is thrown away and made again on other ports.
        let mut last = String::new();
        for attempt in 0..3 {
            let dir = corbina_testpeers::fresh_dir(&format!("etcd-{name}-{attempt}"));
            let members = (0..n)
                .map(|i| Member {
                    name: format!("m{i}"),
                    client: free_port(),
                    peer: free_port(),
                    process: None,
                })
                .collect();
            let mut c = EtcdCluster {
                bin: bin.clone(),
                dir,
                members,
            };
            for i in 0..n {
                c.spawn(i);
            }
            match c.try_wait_healthy(&(0..n).collect::<Vec<_>>(), Duration::from_secs(20)) {
                Ok(()) => return Some(c),
                Err(e) => last = e,
            }
        }
        panic!("{last}");
    }

    fn spawn(&mut self, i: usize) {
        let initial: Vec<String> = self
            .members
            .iter()
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer))
            .collect();
        let m = &self.members[i];
        let client = format!("http://127.0.0.1:{}", m.client);
        let peer = format!("http://127.0.0.1:{}", m.peer);
        let data = self.dir.join(&m.name);
        let mut cmd = Command::new(&self.bin);
        cmd.arg("--name")
            .arg(&m.name)
            .arg("--data-dir")
            .arg(&data)
            .args(["--listen-client-urls", &client])
            .args(["--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer])
            .args(["--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &initial.join(",")])
            .args(["--initial-cluster-state", "new"])
            .args([
                "--initial-cluster-token",
                &format!("t{}", self.dir.display()),
            ])
            // Fast elections on loopback: a lost member is noticed in half a second.
            .args(["--heartbeat-interval", "50", "--election-timeout", "500"])
            .args(["--logger", "zap", "--log-level", "error"])
            .stdout(std::process::Stdio::null());
        let name = format!("etcd {}", m.name);
        self.members[i].process = Some(PeerProcess::spawn(&name, &mut cmd));
    }

    /// Waits until members `which` answer `/health` with `true`.
    pub fn wait_healthy(&mut self, which: &[usize], timeout: Duration) {
        if let Err(e) = self.try_wait_healthy(which, timeout) {
            panic!("{e}");
        }
    }

    /// [`EtcdCluster::wait_healthy`], or why not (with the member's standard error).
    fn try_wait_healthy(&mut self, which: &[usize], timeout: Duration) -> Result<(), String> {
        let start = Instant::now();
        for &i in which {
            loop {
                if healthy(self.members[i].client) {
                    break;
                }
                let err = || {
                    self.members[i]
                        .process
                        .as_ref()
                        .map(|p| p.stderr())
                        .unwrap_or_default()
                };
                // A member that could not bind its ports has exited: no use waiting.
                if start.elapsed() > timeout || err().contains("address already in use") {
                    return Err(format!(
                        "etcd member {i} not healthy after {:?}; stderr:\n{}",
                        start.elapsed(),
                        err()
                    ));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(())
    }

    /// `etcd://` URL of every member, with `prefix`.
    pub fn url(&self, prefix: &str) -> String {
        let hosts: Vec<String> = self
            .members
            .iter()
            .map(|m| format!("127.0.0.1:{}", m.client))
            .collect();
        format!("etcd://{}/{prefix}", hosts.join(","))
    }

    /// Member `i`'s client port.
    pub fn client_port(&self, i: usize) -> u16 {
        self.members[i].client
    }

    /// Kills member `i` with SIGKILL.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut p) = self.members[i].process.take() {
            p.kill();
        }
    }

    /// Restarts member `i` on its data and waits until it is healthy again.
    pub fn restart(&mut self, i: usize) {
        self.spawn(i);
        self.wait_healthy(&[i], Duration::from_secs(20));
    }

    /// The cluster's data directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for EtcdCluster {
    fn drop(&mut self) {
        for m in &mut self.members {
            if let Some(mut p) = m.process.take() {
                p.kill();
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether the member on `port` reports itself healthy (it has a leader).
fn healthy(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let req = format!("GET /health HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut body = String::new();
    let _ = s.take(4096).read_to_string(&mut body);
    body.contains("\"health\":\"true\"")
}
