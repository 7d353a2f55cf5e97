//! Test-only helpers for the interop tests that run omniORB peers: the C++ programs of
//! the repository's `peers/` directory (or of another Makefile, such as
//! `corbina-codegen/tests/interop`), built once per test process, and a guard that kills
//! and reaps a peer process when a test ends. [`JacorbPeer`] does the same for the JacORB
//! peer of `peers/jacorb/` (Java and Maven instead of omniORB).
//!
//! Without omniORB installed the helpers print why and the test returns early, unless
//! `REQUIRE_OMNIORB_PEERS` is set (as `scripts/test.sh` does), which makes a missing peer a
//! failure.
//!
//! Builds go to `<target>/<profile>/omniorb-peers/<name>/`, under an exclusive lock file
//! next to it, so test binaries running at the same time build each directory one at a
//! time and `make` stays incremental across runs.
//!
//! ```no_run
//! use std::process::{Command, Stdio};
//! use std::time::Duration;
//!
//! let Some(bin) = corbina_testpeers::bench_peers() else { return };
//! let ior_file = corbina_testpeers::fresh_dir("example").join("o.ior");
//! let mut server = corbina_testpeers::PeerProcess::spawn(
//!     "omni_server",
//!     Command::new(bin.join("omni_server"))
//!         .arg(&ior_file)
//!         .args(["1", "120", "-ORBendPoint", "giop:tcp:127.0.0.1:"])
//!         .stdout(Stdio::null()),
//! );
//! let ior = server.wait_for_ior_file(&ior_file, Duration::from_secs(20)).unwrap();
//! assert!(ior.starts_with("IOR:"));
//! ```

pub mod differential;

use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The environment variable that turns "omniORB is missing" from a skip into a failure.
pub const REQUIRE_ENV: &str = "REQUIRE_OMNIORB_PEERS";

/// How long [`start_with_ior`] waits for a peer's IOR.
pub const IOR_TIMEOUT: Duration = Duration::from_secs(20);

/// Whether `REQUIRE_OMNIORB_PEERS` is set.
pub fn required() -> bool {
    std::env::var_os(REQUIRE_ENV).is_some()
}

/// `true` when `ok`; otherwise panics with `reason` if peers are [`required`], or prints
/// "skipping `what`: `reason`" and returns `false`.
pub fn skip_unless(ok: bool, what: &str, reason: &str) -> bool {
    if !ok {
        if required() {
            panic!("{reason} ({REQUIRE_ENV} is set)");
        }
        eprintln!("skipping {what}: {reason}");
    }
    ok
}

/// [`skip_unless`] for a file or directory a test needs, such as `/usr/bin/nameclt`;
/// `package` says where it comes from.
pub fn have_path(path: impl AsRef<Path>, what: &str, package: &str) -> bool {
    let path = path.as_ref();
    skip_unless(
        path.exists(),
        what,
        &format!("{} is not installed ({package})", path.display()),
    )
}

/// The repository's `peers/` directory.
pub fn peers_source_dir() -> PathBuf {
    repo_root().join("peers")
}

/// The repository's root directory.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root exists")
}

/// A set of peer programs built by one Makefile.
#[derive(Debug, Clone)]
pub struct PeerBuild<'a> {
    /// The name of the build directory under `omniorb-peers/`; one per Makefile and target set.
    pub name: &'a str,
    /// The directory holding the Makefile; it is called as `make -C dir B=<out> <targets>`.
    pub makefile_dir: PathBuf,
    /// The programs to build (file names in the build directory); empty means `all`.
    pub targets: &'a [&'a str],
    /// The pkg-config module the programs link against (`omniORB4`, `omniDynamic4`).
    pub pkg_config: &'a str,
}

/// `peers/omni_server` and `peers/omni_client`, the omniORB server and client of
/// `bench.idl`; `None` (with a note) without omniORB.
pub fn bench_peers() -> Option<&'static Path> {
    build_peers(&PeerBuild {
        name: "bench",
        makefile_dir: peers_source_dir(),
        targets: &["omni_server", "omni_client"],
        pkg_config: "omniORB4",
    })
}

/// `peers/omni_ami_client` (an omniORB AMI client of `bench.idl`, stubs from omniidl
/// `-Wbami`) and `peers/omni_server`; `None` (with a note) without omniORB.
pub fn ami_peers() -> Option<&'static Path> {
    build_peers(&PeerBuild {
        name: "ami",
        makefile_dir: peers_source_dir(),
        targets: &["omni_ami_client", "omni_server"],
        pkg_config: "omniDynamic4",
    })
}

/// `peers/omni_sc_peer`: an omniORB server and client of `sc.idl` whose omniInterceptors
/// add and read service contexts (interop of Portable Interceptors); `None` (with a note)
/// without omniORB.
pub fn sc_peers() -> Option<&'static Path> {
    build_peers(&PeerBuild {
        name: "sc",
        makefile_dir: peers_source_dir(),
        targets: &["omni_sc_peer"],
        pkg_config: "omniORB4",
    })
}

/// `peers/omni_value_peer`: an omniORB server (`--server IORFILE`) and checking client
/// (`--client IOR`) of `peers/values.idl`, objects by value through omniORB's C++ mapping
/// (`--no-derived-factory` makes it truncate `Derived` to `Base`); `None` (with a note)
/// without omniORB. It links `omniDynamic4` (omniORB's valuetype support).
pub fn value_peers() -> Option<&'static Path> {
    build_peers(&PeerBuild {
        name: "values",
        makefile_dir: peers_source_dir(),
        targets: &["omni_value_peer"],
        pkg_config: "omniDynamic4",
    })
}

/// `peers/omni_abstract_peer`: an omniORB server (`--server IORFILE`) and checking client
/// (`--client IOR`) of `peers/abstract.idl`, abstract interfaces (an object reference or a
/// value) through omniORB's C++ mapping; `None` (with a note) without omniORB. It links
/// `omniDynamic4` (values).
pub fn abstract_peers() -> Option<&'static Path> {
    build_peers(&PeerBuild {
        name: "abstract",
        makefile_dir: peers_source_dir(),
        targets: &["omni_abstract_peer"],
        pkg_config: "omniDynamic4",
    })
}

/// The `-ORB` options the value peer runs with: UTF-8 as its native char code set, so that
/// the non-ASCII strings of its checks are the same text on both sides (omniORB's default,
/// ISO-8859-1, cannot hold them).
pub const VALUE_PEER_ARGS: &[&str] = &["-ORBnativeCharCodeSet", "UTF-8"];

/// Starts `bin/omni_value_peer --server IORFILE`, then `extra` (`--no-derived-factory`,
/// `-ORB` options), listening on 127.0.0.1 with [`VALUE_PEER_ARGS`], with its IOR file in a
/// fresh directory named after `name`; returns it and its ValueExchange's IOR.
pub fn omni_value_server(bin: &Path, name: &str, extra: &[&str]) -> (PeerProcess, String) {
    let ior_file = fresh_dir(name).join("v.ior");
    start_with_ior(
        "omni_value_peer",
        Command::new(bin.join("omni_value_peer"))
            .arg("--server")
            .arg(&ior_file)
            .args(extra)
            .args(["-ORBendPoint", "giop:tcp:127.0.0.1:"])
            .args(VALUE_PEER_ARGS),
        &ior_file,
    )
}

/// Runs `bin/omni_value_peer --client ior` plus `args` (`--server-truncates`,
/// `--no-derived-factory`, `-ORB` options) with [`VALUE_PEER_ARGS`] and asserts that every
/// check passed; returns its output (one line per check).
pub fn omni_value_client_check(bin: &Path, ior: &str, args: &[&str]) -> String {
    let out = Command::new(bin.join("omni_value_peer"))
        .args(["--client", ior])
        .args(args)
        .args(VALUE_PEER_ARGS)
        .output()
        .expect("omni_value_peer runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains(" failed 0"),
        "omni_value_peer --client {args:?} failed ({}):\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// `peers/omni_server_ssl` and `peers/omni_client_ssl`: the bench peers with omniORB's SSL
/// transport (`libomnisslTP4`) linked in, for `-ORBendPoint giop:ssl:…` and the
/// `-ORBssl…` options; `None` (with a note) without omniORB.
pub fn ssl_peers() -> Option<&'static Path> {
    build_peers(&PeerBuild {
        name: "ssl",
        makefile_dir: peers_source_dir(),
        targets: &["omni_server_ssl", "omni_client_ssl"],
        pkg_config: "omniORB4",
    })
}

/// `peers/omni_bidir_server` and `peers/omni_bidir_client`, the omniORB peers of
/// `bidir.idl` for bidirectional GIOP (callbacks over the connection the client opened);
/// `None` (with a note) without omniORB. They link `omniDynamic4` (for
/// `ORB::create_policy`). `peers/README.md` documents their options and output.
///
/// ```no_run
/// let Some(bin) = corbina_testpeers::bidir_peers() else { return };
/// let (_server, ior) = corbina_testpeers::omni_bidir_server(bin, "example", &[]);
/// let ior_file = corbina_testpeers::fresh_dir("example-client").join("r.ior");
/// std::fs::write(&ior_file, ior + "\n").unwrap();
/// corbina_testpeers::omni_bidir_client_check(bin, &ior_file, &[]);
/// ```
pub fn bidir_peers() -> Option<&'static Path> {
    build_peers(&PeerBuild {
        name: "bidir",
        makefile_dir: peers_source_dir(),
        targets: &["omni_bidir_server", "omni_bidir_client"],
        pkg_config: "omniDynamic4",
    })
}

/// The `-ORB` options with which an omniORB server accepts bidirectional GIOP: the
/// parameter and the `bidir` action in the server transport rule (omniORB ignores the
/// offer without either).
pub const BIDIR_SERVER_ARGS: &[&str] = &[
    "-ORBacceptBiDirectionalGIOP",
    "1",
    "-ORBserverTransportRule",
    "* unix,ssl,tcp,bidir",
];

/// The `-ORB` options with which an omniORB client offers bidirectional GIOP: the
/// parameter and the `bidir` action in the client transport rule.
pub const BIDIR_CLIENT_ARGS: &[&str] = &[
    "-ORBofferBiDirectionalGIOP",
    "1",
    "-ORBclientTransportRule",
    "* unix,ssl,tcp,bidir",
];

/// Starts `bin/omni_bidir_server IORFILE 120 -ORBendPoint giop:tcp:127.0.0.1:`, then
/// [`BIDIR_SERVER_ARGS`], then `extra` (a later `-ORB` option wins, so `extra` can turn
/// bidirectional GIOP off; `--poa-policy normal` gives its POA the NORMAL policy), with its
/// IOR file in a fresh directory named after `name`; returns it and the Registrar's IOR.
pub fn omni_bidir_server(bin: &Path, name: &str, extra: &[&str]) -> (PeerProcess, String) {
    let ior_file = fresh_dir(name).join("r.ior");
    start_with_ior(
        "omni_bidir_server",
        Command::new(bin.join("omni_bidir_server"))
            .arg(&ior_file)
            .args(["120", "-ORBendPoint", "giop:tcp:127.0.0.1:"])
            .args(BIDIR_SERVER_ARGS)
            .args(extra),
        &ior_file,
    )
}

/// `bin/omni_bidir_client --ior ior_file`, then [`BIDIR_CLIENT_ARGS`]; add the mode and
/// other options (a later `-ORB` option wins).
pub fn omni_bidir_client_command(bin: &Path, ior_file: &Path) -> Command {
    let mut c = Command::new(bin.join("omni_bidir_client"));
    c.arg("--ior").arg(ior_file).args(BIDIR_CLIENT_ARGS);
    c
}

/// Runs `omni_bidir_client --mode check` plus `args` against the Registrar in `ior_file`
/// and asserts that every step passed (callbacks, reverse oneways, callbacks from another
/// thread) over the one connection it opened; returns its JSON line.
pub fn omni_bidir_client_check(bin: &Path, ior_file: &Path, args: &[&str]) -> String {
    let out = omni_bidir_client_command(bin, ior_file)
        .args(["--mode", "check"])
        .args(args)
        .output()
        .expect("omni_bidir_client runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains("\"ok\":true"),
        "omni_bidir_client --mode check {args:?} failed ({}):\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.trim().to_owned()
}

/// Builds `build` once per process and returns the directory holding the programs; `None`,
/// with a note, when omniORB (`omniidl`, the pkg-config module) is missing and peers are
/// not [`required`]. Panics, with make's output, when the build fails.
pub fn build_peers(build: &PeerBuild<'_>) -> Option<&'static Path> {
    type Built = HashMap<String, Result<Option<&'static Path>, String>>;
    static BUILT: OnceLock<Mutex<Built>> = OnceLock::new();
    let result = {
        // Held across the build: every test of the process waits for the one build.
        let mut built = BUILT
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        built
            .entry(build.name.to_owned())
            .or_insert_with(|| {
                if !skip_unless(
                    omniorb_installed(build.pkg_config),
                    "omniORB interop",
                    &format!(
                        "omniORB (omniidl, libomniorb4-dev: pkg-config {}) is not installed",
                        build.pkg_config
                    ),
                ) {
                    return Ok(None);
                }
                run_make(build).map(|dir| Some(&*Box::leak(dir.into_boxed_path())))
            })
            .clone()
    };
    result.unwrap_or_else(|e| panic!("{e}"))
}

/// Whether `omniidl` runs and pkg-config knows `module`.
pub fn omniorb_installed(module: &str) -> bool {
    Command::new("pkg-config")
        .args(["--exists", module])
        .status()
        .is_ok_and(|s| s.success())
        && Command::new("omniidl")
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok()
}

/// `<target>/<profile>/omniorb-peers`: next to the running test binary (which lives in
/// `<profile>/deps`), else under the system's temporary directory.
pub fn output_root() -> PathBuf {
    let deps = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf));
    match deps {
        Some(deps) if deps.file_name().is_some_and(|n| n == "deps") => deps
            .parent()
            .expect("deps has a parent")
            .join("omniorb-peers"),
        _ => std::env::temp_dir().join("corbina-omniorb-peers"),
    }
}

/// A fresh, empty directory `<output_root>/scratch/<name>-<pid>` for a test's files (IOR
/// files and the like).
pub fn fresh_dir(name: &str) -> PathBuf {
    let d = output_root()
        .join("scratch")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("creating {}: {e}", d.display()));
    d
}

/// Runs make for `build` under an exclusive lock on `<out>.lock`, so two test binaries never
/// build into the same directory at once.
fn run_make(build: &PeerBuild<'_>) -> Result<PathBuf, String> {
    let root = output_root();
    std::fs::create_dir_all(&root).map_err(|e| format!("creating {}: {e}", root.display()))?;
    let out = root.join(build.name);
    let lock_path = root.join(format!("{}.lock", build.name));
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| format!("opening {}: {e}", lock_path.display()))?;
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|e| format!("locking {}: {e}", lock_path.display()))?;
    let mut make = Command::new("make");
    make.arg("-s")
        .arg("-C")
        .arg(&build.makefile_dir)
        .arg(format!("B={}", out.display()));
    if build.targets.is_empty() {
        make.arg("all");
    } else {
        make.args(build.targets.iter().map(|t| out.join(t)));
    }
    let o = make.output().map_err(|e| format!("running make: {e}"))?;
    // Closing the file releases the lock.
    drop(lock);
    if !o.status.success() {
        return Err(format!(
            "building the omniORB peers in {} failed ({}):\n{}{}",
            build.makefile_dir.display(),
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(out)
}

/// Keeps the last this many bytes of a peer's stderr.
const STDERR_KEEP: usize = 64 * 1024;

/// A running peer process, killed and reaped when dropped. Its stderr is collected (the
/// last 64 KiB) for error messages.
pub struct PeerProcess {
    name: String,
    child: Child,
    stderr: Arc<Mutex<Vec<u8>>>,
    drain: Option<JoinHandle<()>>,
}

impl PeerProcess {
    /// Spawns `cmd` with its stderr captured; `name` names the peer in messages. Panics
    /// when it cannot be started.
    pub fn spawn(name: &str, cmd: &mut Command) -> PeerProcess {
        Self::try_spawn(name, cmd).unwrap_or_else(|e| panic!("{name} did not start: {e}"))
    }

    /// [`PeerProcess::spawn`], returning the error.
    pub fn try_spawn(name: &str, cmd: &mut Command) -> std::io::Result<PeerProcess> {
        let mut child = cmd.stderr(Stdio::piped()).spawn()?;
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let mut pipe = child.stderr.take().expect("stderr is piped");
        let sink = stderr.clone();
        let drain = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                let mut kept = sink.lock().unwrap_or_else(|e| e.into_inner());
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > STDERR_KEEP {
                    let cut = kept.len() - STDERR_KEEP;
                    kept.drain(..cut);
                }
            }
        });
        Ok(PeerProcess {
            name: name.to_owned(),
            child,
            stderr,
            drain: Some(drain),
        })
    }

    /// The process, for its id or its piped stdout.
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// What the peer has written to stderr so far (its last 64 KiB).
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }

    /// Waits until the peer has written `path` and returns its first line, trimmed (the
    /// peers write the file whole, through a rename). Fails when the peer exits first or
    /// `timeout` passes; the error carries the peer's stderr.
    pub fn wait_for_ior_file(
        &mut self,
        path: &Path,
        timeout: Duration,
    ) -> Result<String, PeerError> {
        let start = Instant::now();
        loop {
            if let Some(line) = std::fs::read_to_string(path).ok().and_then(|s| {
                s.lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .map(str::to_owned)
            }) {
                return Ok(line);
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(self.error(path, Some(status)));
            }
            if start.elapsed() >= timeout {
                return Err(self.error(path, None));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn error(&mut self, path: &Path, exited: Option<ExitStatus>) -> PeerError {
        let what = match exited {
            Some(status) => format!("exited ({status}) before writing"),
            None => "did not write".to_owned(),
        };
        // After an exit, let the drain thread read the rest of the pipe.
        if exited.is_some() {
            if let Some(drain) = self.drain.take() {
                let _ = drain.join();
            }
        }
        PeerError(format!(
            "{} {what} its IOR to {}; its stderr:\n{}",
            self.name,
            path.display(),
            self.stderr()
        ))
    }

    /// Kills the peer (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for PeerProcess {
    fn drop(&mut self) {
        self.kill();
        // Not joined: a grandchild holding the pipe open would block the drop.
        drop(self.drain.take());
    }
}

/// A peer that did not come up; the message includes the peer's stderr.
pub struct PeerError(String);

impl fmt::Display for PeerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

// Debug shows the message as is, so `.unwrap()` prints the stderr readably.
impl fmt::Debug for PeerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PeerError {}

/// Spawns `cmd` (stdout discarded) and waits up to [`IOR_TIMEOUT`] for it to write
/// `ior_file`; returns the guard and the first IOR. Panics, with the peer's stderr, when
/// it does not.
pub fn start_with_ior(name: &str, cmd: &mut Command, ior_file: &Path) -> (PeerProcess, String) {
    let mut peer = PeerProcess::spawn(name, cmd.stdout(Stdio::null()));
    let ior = peer
        .wait_for_ior_file(ior_file, IOR_TIMEOUT)
        .unwrap_or_else(|e| panic!("{e}"));
    (peer, ior)
}

/// Starts `bin/omni_server IORFILE 1 120 -ORBendPoint giop:tcp:127.0.0.1:` with its IOR
/// file in a fresh directory named after `name`; returns it and its IOR.
pub fn omni_server(bin: &Path, name: &str) -> (PeerProcess, String) {
    omni_server_with(bin, name, &[])
}

/// [`omni_server`] with `extra` arguments (`-ORB…` options, more endpoints) after the
/// TCP endpoint.
pub fn omni_server_with(bin: &Path, name: &str, extra: &[&str]) -> (PeerProcess, String) {
    let ior_file = fresh_dir(name).join("o.ior");
    start_with_ior(
        "omni_server",
        Command::new(bin.join("omni_server"))
            .arg(&ior_file)
            .args(["1", "120", "-ORBendPoint", "giop:tcp:127.0.0.1:"])
            .args(extra),
        &ior_file,
    )
}

/// Runs `bin/omni_client --ior ior_file --mode check` plus `args` and asserts that it
/// passed all 9 checks of `bench.idl`.
pub fn omni_client_check(bin: &Path, ior_file: &Path, args: &[&str]) {
    let out = Command::new(bin.join("omni_client"))
        .arg("--ior")
        .arg(ior_file)
        .args(["--mode", "check"])
        .args(args)
        .output()
        .expect("omni_client runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "omni_client --mode check {args:?} failed:\n{text}"
    );
    assert_eq!(text.matches("\"ok\":true").count(), 9, "{text}");
}

/// [`omni_client_check`] at GIOP 1.0 and at 1.2 (`-ORBmaxGIOPVersion`).
pub fn omni_client_check_giop_1_0_and_1_2(bin: &Path, ior_file: &Path) {
    for v in ["1.0", "1.2"] {
        omni_client_check(bin, ior_file, &["-ORBmaxGIOPVersion", v]);
    }
}

/// The JVM options with which [`JacorbPeer`] starts JacORB: its ORB classes, its listener on
/// the loopback address, thread stacks deep enough for JacORB's recursive reading of a
/// 1000-node list (each node a value nested in the one before), and a JIT setting for a
/// short-lived process.
pub const JACORB_JVM_ARGS: &[&str] = &[
    "-Xss16m",
    "-Dorg.omg.CORBA.ORBClass=org.jacorb.orb.ORB",
    "-Dorg.omg.CORBA.ORBSingletonClass=org.jacorb.orb.ORBSingleton",
    "-DOAIAddr=127.0.0.1",
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
];

/// How long [`JacorbPeer::command`] waits for the peer's answer.
pub const JACORB_COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether `java`, `javac` and `mvn` run (Debian: `default-jdk-headless`, `maven`).
pub fn jacorb_tools_installed() -> bool {
    [("java", "-version"), ("javac", "-version"), ("mvn", "-v")]
        .iter()
        .all(|(tool, arg)| {
            Command::new(tool)
                .arg(arg)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
}

/// Builds the JacORB peer of `peers/jacorb/` once per process (Maven fetches JacORB 3.9 on
/// the first build, then works offline) and returns the file holding its classpath; `None`,
/// with a note, when Java or Maven is missing and peers are not [`required`]. Panics, with
/// make's output, when the build fails.
pub fn jacorb_classpath() -> Option<&'static Path> {
    static BUILT: OnceLock<Result<Option<&'static Path>, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            if !skip_unless(
                jacorb_tools_installed(),
                "JacORB interop",
                "Java and Maven (default-jdk-headless, maven) are not installed",
            ) {
                return Ok(None);
            }
            let build = PeerBuild {
                name: "jacorb",
                makefile_dir: peers_source_dir().join("jacorb"),
                targets: &["classpath"],
                pkg_config: "",
            };
            run_make(&build).map(|dir| Some(&*Box::leak(dir.join("classpath").into_boxed_path())))
        })
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The JacORB peer (`peers/jacorb/src/JacorbPeer.java`, documented in `peers/README.md`): one
/// JVM serving an `ScProbe` (`peers/sc.idl`, with Portable Interceptors adding and echoing
/// service contexts) and a `Values::ValueExchange` (`peers/values.idl`), and acting as their
/// client on [`JacorbPeer::command`]. Killed when dropped; it also exits when its stdin closes.
pub struct JacorbPeer {
    process: PeerProcess,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
    dir: PathBuf,
    /// The IOR of its `ScProbe`.
    pub sc_ior: String,
    /// The IOR of its `Values::ValueExchange`.
    pub values_ior: String,
}

impl JacorbPeer {
    /// Builds (once) and starts the peer, with its files in a fresh directory named after
    /// `name`, and waits for its IORs; `None` when Java or Maven is missing and peers are not
    /// [`required`]. Panics, with the peer's stderr, when it does not come up.
    pub fn start(name: &str) -> Option<JacorbPeer> {
        let classpath = jacorb_classpath()?;
        let cp = std::fs::read_to_string(classpath)
            .unwrap_or_else(|e| panic!("reading {}: {e}", classpath.display()));
        let dir = fresh_dir(name);
        let mut process = PeerProcess::spawn(
            "JacORB peer",
            Command::new("java")
                .args(JACORB_JVM_ARGS)
                .arg("-cp")
                .arg(cp.trim())
                .arg("JacorbPeer")
                .arg(&dir)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped()),
        );
        // The peer writes values.ior, then sc.ior.
        let sc_ior = process
            .wait_for_ior_file(&dir.join("sc.ior"), IOR_TIMEOUT)
            .unwrap_or_else(|e| panic!("{e}"));
        let values_ior = std::fs::read_to_string(dir.join("values.ior"))
            .expect("the peer wrote values.ior before sc.ior")
            .trim()
            .to_owned();
        let child = process.child_mut();
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Some(JacorbPeer {
            process,
            stdin,
            lines,
            dir,
            sc_ior,
            values_ior,
        })
    }

    /// Writes `ior` to a file named `name` in the peer's directory, for a command's argument.
    pub fn ior_file(&self, name: &str, ior: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, format!("{ior}\n"))
            .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        path
    }

    /// Sends one command line (`sc-call FILE`, `values-check FILE`, `derived-factory on|off`)
    /// and returns the lines of its answer, without the closing `done`. Panics, with the
    /// peer's stderr, when the peer exits or does not answer within
    /// [`JACORB_COMMAND_TIMEOUT`].
    pub fn command(&mut self, command: &str) -> Vec<String> {
        use std::io::Write;
        if let Err(e) = writeln!(self.stdin, "{command}").and_then(|()| self.stdin.flush()) {
            panic!(
                "JacORB peer: sending {command:?}: {e}; its stderr:\n{}",
                self.process.stderr()
            );
        }
        let deadline = Instant::now() + JACORB_COMMAND_TIMEOUT;
        let mut answer = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line == "done" => return answer,
                Ok(line) => answer.push(line),
                Err(e) => panic!(
                    "JacORB peer: no answer to {command:?} ({e}) after {answer:?}; its stderr:\n{}",
                    self.process.stderr()
                ),
            }
        }
    }
}
