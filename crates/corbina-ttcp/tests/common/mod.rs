//! The one ttcp-specific helper of the interop tests: the benchmark's own server as a
//! separate process. The omniORB peers come from `corbina-testpeers`.

use std::path::PathBuf;
use std::process::Command;

use corbina_testpeers::{fresh_dir, start_with_ior, PeerProcess};

/// Starts `corbina-ttcp server --endpoint 127.0.0.1:0 --lifetime 120` plus `args`, its IOR
/// file in a fresh directory named after `name`; returns it (killed when dropped) and the
/// IOR file.
pub fn ttcp_server(name: &str, args: &[&str]) -> (PeerProcess, PathBuf) {
    let file = fresh_dir(name).join("bench.ior");
    let (server, _ior) = start_with_ior(
        "corbina-ttcp server",
        Command::new(env!("CARGO_BIN_EXE_corbina-ttcp"))
            .arg("server")
            .args(args)
            .args([
                "--endpoint",
                "127.0.0.1:0",
                "--lifetime",
                "120",
                "--ior-file",
            ])
            .arg(&file),
        &file,
    );
    (server, file)
}
