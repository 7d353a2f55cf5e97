//! PERSISTENT object references survive a server restart; TRANSIENT ones do not.
//!
//! The server runs in a child process (this test binary re-executed with
//! `PERSISTENT_CHILD_SERVER=<port>` set, see [`child_server_entry`]) on a fixed port the
//! parent chose, so it can be killed with SIGKILL and started again on the same endpoint.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use corbina::config::Endpoint;
use corbina::poa::{IdAssignmentPolicy, LifespanPolicy, ObjectId, PolicyList};
use corbina::{CompletionStatus, Orb, OrbConfig, SystemExceptionKind};
use corbina_ttcp::bench::{Bench, BenchSkeleton};
use corbina_ttcp::servant::{BenchImpl, ByteCounter};

const CHILD_ENV: &str = "PERSISTENT_CHILD_SERVER";

/// Not a test: the child server (runs only with `PERSISTENT_CHILD_SERVER=<port>`). Serves a
/// Bench as "bench" in a PERSISTENT + USER_ID child POA and another in the (TRANSIENT)
/// RootPOA, prints both IORs and serves until killed.
#[test]
fn child_server_entry() {
    let Some(port) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let port: u16 = port.to_str().unwrap().parse().unwrap();
    let orb = Orb::with_config(OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port,
        }],
        ..OrbConfig::default()
    });
    let root = orb.root_poa();
    let persistent = root
        .create_poa(
            "persistent",
            Some(root.the_poa_manager()),
            PolicyList::default()
                .with_lifespan(LifespanPolicy::Persistent)
                .with_id_assignment(IdAssignmentPolicy::UserId),
        )
        .unwrap();
    let servant = || {
        Arc::new(BenchSkeleton::new(BenchImpl::new(Arc::new(
            ByteCounter::default(),
        ))))
    };
    let oid = ObjectId(b"bench".to_vec());
    persistent
        .activate_object_with_id(oid.clone(), servant())
        .unwrap();
    let persistent_ref = persistent.id_to_reference(&oid).unwrap();
    let transient_id = root.activate_object(servant()).unwrap();
    let transient_ref = root.id_to_reference(&transient_id).unwrap();
    root.the_poa_manager().activate().unwrap();
    println!(
        "PERSISTENT {}",
        orb.object_to_string(&persistent_ref).unwrap()
    );
    println!(
        "TRANSIENT {}",
        orb.object_to_string(&transient_ref).unwrap()
    );
    std::io::stdout().flush().unwrap();
    orb.run();
}

struct ChildServer {
    child: Child,
    persistent: String,
    transient: String,
}

impl ChildServer {
    fn start(port: u16) -> ChildServer {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "persistent::child_server_entry",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, port.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("child server starts");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let (mut persistent, mut transient) = (None, None);
        while persistent.is_none() || transient.is_none() {
            let line = lines
                .next()
                .expect("child server printed its IORs")
                .unwrap();
            // libtest may print "test child_server_entry ... " before it, on the same line.
            let ior = |tag: &str| {
                line.find(tag)
                    .map(|at| line[at + tag.len()..].trim().to_owned())
            };
            if let Some(ior) = ior("PERSISTENT ") {
                persistent = Some(ior);
            } else if let Some(ior) = ior("TRANSIENT ") {
                transient = Some(ior);
            }
        }
        ChildServer {
            child,
            persistent: persistent.unwrap(),
            transient: transient.unwrap(),
        }
    }

    /// SIGKILL, and reap it: its listening socket is gone when this returns.
    fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn persistent_reference_survives_a_restart_and_transient_does_not() {
    let port = free_port();
    let mut first = ChildServer::start(port);
    let orb = Orb::with_config(OrbConfig::default());
    let obj = orb.string_to_object(&first.persistent).unwrap();
    let bench = Bench::unchecked_narrow(&obj);
    let transient = Bench::unchecked_narrow(&orb.string_to_object(&first.transient).unwrap());
    assert_eq!(bench.echo("first run").unwrap(), "first run");
    assert_eq!(transient.echo("first run").unwrap(), "first run");

    // Killed while the client holds an idle connection, restarted straight away: the
    // same reference (and the same ObjectRef) reaches the new process. The client may
    // find its old connection dead when it sends; that is TRANSIENT/COMPLETED_NO (the
    // request never reached a server), which CORBA lets the caller simply retry, so at
    // most one such failure is allowed before the call goes through.
    first.kill();
    let second = ChildServer::start(port);
    assert_eq!(
        second.persistent, first.persistent,
        "a persistent IOR is the same in every run"
    );
    let reply = match bench.echo("second run") {
        Err(e) => {
            assert_eq!(e.kind, SystemExceptionKind::Transient, "{e:?}");
            assert_eq!(e.completed, CompletionStatus::No, "{e:?}");
            bench.echo("second run")
        }
        ok => ok,
    };
    assert_eq!(reply.unwrap(), "second run");
    assert!(!obj.non_existent().unwrap());

    // The first run's TRANSIENT reference names an object of a POA that no longer exists.
    let e = transient.echo("gone").unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::ObjectNotExist, "{e:?}");
    assert_eq!(e.completed, CompletionStatus::No, "{e:?}");
    assert_ne!(second.transient, first.transient);

    // Killed again: while nothing listens the call fails TRANSIENT/NO; once the server is
    // back on the same port, the same reference works on the first call.
    let mut second = second;
    second.kill();
    // Give the client's strand a moment to see the close (as a real caller would after
    // any delay): a request written into a connection the peer has just reset is
    // COMM_FAILURE/MAYBE instead, which must not be retried.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let e = bench.echo("down").unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::Transient, "{e:?}");
    assert_eq!(e.completed, CompletionStatus::No, "{e:?}");
    let _third = ChildServer::start(port);
    assert_eq!(bench.echo("third run").unwrap(), "third run");
}
