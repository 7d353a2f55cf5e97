//! Runs every example program as the README does (`examples/run.sh NAME`): its server as a
//! process, then its client, checking the client's output; servers are killed and reaped
//! when each test ends, pass or fail.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(30);

/// A server process, killed and reaped on drop.
struct Server {
    child: Child,
    /// The first line it printed: the reference its client needs.
    reference: String,
}

impl Server {
    fn start(bin: &str, args: &[&str]) -> Server {
        let mut child = Command::new(bin)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{bin}: {e}"));
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let mut server = Server {
            child,
            reference: String::new(),
        };
        let line = rx
            .recv_timeout(TIMEOUT)
            .unwrap_or_else(|_| panic!("{bin} printed no reference in {TIMEOUT:?}"));
        server.reference = line.trim().to_owned();
        assert!(
            !server.reference.is_empty(),
            "{bin} exited before printing a reference"
        );
        server
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a client to completion (killed after `TIMEOUT`); returns its standard output.
fn client(bin: &str, args: &[&str]) -> String {
    let mut child = Command::new(bin)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{bin}: {e}"));
    let deadline = Instant::now() + TIMEOUT;
    while child.try_wait().expect("try_wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{bin} {args:?} did not finish in {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().expect("client output");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{bin} {args:?} failed ({}):\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn hello() {
    let server = Server::start(env!("CARGO_BIN_EXE_hello-server"), &[]);
    assert!(server.reference.starts_with("IOR:"), "{}", server.reference);
    let out = client(
        env!("CARGO_BIN_EXE_hello-client"),
        &[&server.reference, "test"],
    );
    assert_eq!(out, "Hello, test!\n");
}

#[test]
fn persistent_poa_and_corbaloc_survive_a_restart() {
    let first = Server::start(
        env!("CARGO_BIN_EXE_persistent-server"),
        &["-ORBEndpoint", "giop:tcp:127.0.0.1:0"],
    );
    let url = first.reference.clone();
    let port = url
        .strip_prefix("corbaloc::127.0.0.1:")
        .and_then(|r| r.strip_suffix("/Counter"))
        .unwrap_or_else(|| panic!("unexpected URL {url}"))
        .to_owned();
    let out = client(env!("CARGO_BIN_EXE_persistent-client"), &[&url, "5"]);
    assert_eq!(out, "counter incremented by 5: 5 (value 5)\n");
    drop(first);
    // The same URL reaches the object served by a new process on the same port.
    let endpoint = format!("giop:tcp:127.0.0.1:{port}");
    let second = Server::start(
        env!("CARGO_BIN_EXE_persistent-server"),
        &["-ORBEndpoint", &endpoint],
    );
    assert_eq!(second.reference, url);
    let out = client(env!("CARGO_BIN_EXE_persistent-client"), &[&url, "2"]);
    assert_eq!(out, "counter incremented by 2: 2 (value 2)\n");
}

#[test]
fn naming_bind_and_corbaname() {
    use corbina::{config::Endpoint, Orb, OrbConfig};
    // The naming service corbina-names runs, in this process.
    let dir = std::env::temp_dir().join(format!("corbina-examples-names-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let orb = Orb::with_config(OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..OrbConfig::default()
    });
    let service =
        corbina_naming::NamingService::start(&orb, &corbina_naming::Options::new(&dir)).unwrap();
    let (host, port) = service.endpoint();
    let init_ref = format!("NameService=corbaloc::{host}:{port}/NameService");

    let server = Server::start(
        env!("CARGO_BIN_EXE_naming-server"),
        &["-ORBInitRef", &init_ref, "examples/greeter"],
    );
    assert_eq!(
        server.reference,
        format!("corbaname::{host}:{port}#examples/greeter")
    );
    let out = client(env!("CARGO_BIN_EXE_naming-client"), &[&server.reference]);
    assert_eq!(out, "Hello from the naming example, naming client!\n");
    drop(server);
    drop(service);
    orb.destroy();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn callback() {
    let server = Server::start(env!("CARGO_BIN_EXE_callback-server"), &[]);
    let out = client(
        env!("CARGO_BIN_EXE_callback-client"),
        &[&server.reference, "news", "3"],
    );
    assert_eq!(
        out,
        "event news #0\nevent news #1\nevent news #2\n\
         publish called 1 listener(s); this one received 3 event(s)\n"
    );
}

#[test]
fn dii() {
    let server = Server::start(env!("CARGO_BIN_EXE_hello-server"), &[]);
    let out = client(
        env!("CARGO_BIN_EXE_dii-client"),
        &[&server.reference, "greet", "string:DII"],
    );
    assert_eq!(out, "greet returned tk_string \"Hello, DII!\"\n");
    // An operation the interface does not have: BAD_OPERATION, reported, not a crash.
    let out = Command::new(env!("CARGO_BIN_EXE_dii-client"))
        .args([server.reference.as_str(), "shout", "string:x"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("BAD_OPERATION"), "{err}");
}

#[test]
fn any() {
    let server = Server::start(env!("CARGO_BIN_EXE_any-server"), &[]);
    let out = client(env!("CARGO_BIN_EXE_any-client"), &[&server.reference]);
    for line in [
        "answer = tk_long 42 (server: tk_long 42)",
        "boxed = tk_any (tk_boolean true) (server: tk_any (tk_boolean true))",
        "color = enum Color Green (server: enum Color Green)",
        "motto = tk_string \"values of any type\" (server: tk_string \"values of any type\")",
        "origin: a Point at (1.5, -2)",
        "origin = struct Point { x: 1.5, y: -2 } (server: struct Point { x: 1.5, y: -2 })",
        "get(\"missing\") raised UnknownKey { key: \"missing\" }",
    ] {
        assert!(
            out.lines().any(|l| l == line),
            "no line {line:?} in:\n{out}"
        );
    }
}

/// The README's Examples section and run.sh name the same examples as these tests.
#[test]
fn readme_lists_every_example() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let run = std::fs::read_to_string(format!("{root}/examples/run.sh")).unwrap();
    for name in ["hello", "persistent", "naming", "callback", "dii", "any"] {
        assert!(
            readme.contains(&format!("examples/run.sh {name}")),
            "README has no `examples/run.sh {name}`"
        );
        assert!(
            run.contains(&format!("\n  {name})")),
            "run.sh has no case {name}"
        );
    }
}

/// What a user sees when a call fails: the exception, and where and why.
#[test]
fn failures_say_where_and_why() {
    let failed = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_hello-client"))
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).trim().to_owned()
    };
    // Nothing listens on the port: TRANSIENT, the endpoint and the OS error.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let err = failed(&[&format!("corbaloc::127.0.0.1:{port}/Greeter")]);
    assert_eq!(
        err,
        format!(
            "Error: TRANSIENT (minor 0x43420212, completed NO): connect to tcp \
             127.0.0.1:{port} failed: Connection refused (os error 111)"
        )
    );
    // A peer that accepts and never answers: TIMEOUT, the endpoint and the phase.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let err = failed(&[
        "-ORBCallTimeout",
        "200",
        &format!("corbaloc::127.0.0.1:{port}/Greeter"),
    ]);
    assert!(
        err.starts_with("Error: TIMEOUT (minor 0x43420221, completed MAYBE): ")
            && err.ends_with(&format!("receive from tcp 127.0.0.1:{port} timed out")),
        "{err}"
    );
    drop(silent);
}
