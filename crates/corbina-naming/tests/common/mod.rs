//! The `corbina-names` daemon as a child process, shared by the tests that run it.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use corbina_testpeers::PeerProcess;

/// Starts the daemon on `127.0.0.1:port` with its store in `data_dir` and waits for it to
/// print its IOR (it is serving by then); returns the process (killed when dropped) and
/// the IOR.
pub fn start_names(port: u16, data_dir: &Path) -> (PeerProcess, String) {
    let mut daemon = PeerProcess::spawn(
        "corbina-names",
        Command::new(env!("CARGO_BIN_EXE_corbina-names"))
            .args(["--endpoint", &format!("127.0.0.1:{port}")])
            .arg("--data-dir")
            .arg(data_dir)
            .stdout(Stdio::piped()),
    );
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
