//! Helpers shared by the interop tests: the omniORB peers of `peers/`, built once per test
//! process, and a guard that kills a peer process when a test ends.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::OnceLock;

/// Builds `peers/` (omni_server, omni_client) once per test process; `None`, with a note,
/// when omniORB is not installed — unless `REQUIRE_OMNIORB_PEERS` is set, which makes a
/// missing peer a failure.
pub fn peers() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let have = Command::new("pkg-config")
                .args(["--exists", "omniORB4"])
                .status()
                .map(|s| s.success())
                .unwrap_or(false)
                && Command::new("omniidl").arg("-V").output().is_ok();
            if !have {
                let msg = "omniORB (omniidl, libomniorb4-dev) is not installed";
                if std::env::var_os("REQUIRE_OMNIORB_PEERS").is_some() {
                    panic!("{msg}");
                }
                eprintln!("skipping omniORB interop: {msg}");
                return None;
            }
            let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("peers");
            let status = Command::new("make")
                .arg("-s")
                .arg("-C")
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../peers"))
                .arg(format!("B={}", out.display()))
                .arg(out.join("omni_server"))
                .arg(out.join("omni_client"))
                .status()
                .expect("make runs");
            assert!(status.success(), "building the omniORB peers failed");
            Some(out)
        })
        .as_deref()
}

/// A peer process, killed and reaped when dropped.
pub struct Peer(pub Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
