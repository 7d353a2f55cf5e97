//! The helpers themselves: a peer's IOR file, a peer that dies or never writes one (the
//! error carries its stderr), the kill on drop, and the bench peers built and run against
//! each other.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use corbina_testpeers::{fresh_dir, PeerProcess};

fn sh(script: &str) -> Command {
    let mut c = Command::new("sh");
    c.args(["-c", script]).stdout(Stdio::null());
    c
}

#[test]
fn reads_the_first_line_of_the_ior_file() {
    let file = fresh_dir("ior-ok").join("x.ior");
    let script = format!(
        "sleep 0.1; printf 'IOR:0102\\nIOR:0304\\n' > {0}.tmp; mv {0}.tmp {0}; sleep 30",
        file.display()
    );
    let mut peer = PeerProcess::spawn("sh", &mut sh(&script));
    let ior = peer
        .wait_for_ior_file(&file, Duration::from_secs(10))
        .unwrap();
    assert_eq!(ior, "IOR:0102");
}

#[test]
fn a_peer_that_exits_first_is_an_error_with_its_stderr() {
    let file = fresh_dir("ior-exit").join("x.ior");
    let mut peer = PeerProcess::spawn("dying", &mut sh("echo 'no endpoint' >&2; exit 3"));
    let start = Instant::now();
    let e = peer
        .wait_for_ior_file(&file, Duration::from_secs(10))
        .unwrap_err()
        .to_string();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "waited for the timeout"
    );
    assert!(e.contains("dying exited"), "{e}");
    assert!(e.contains("exit status: 3"), "{e}");
    assert!(e.contains("no endpoint"), "{e}");
}

#[test]
fn a_peer_that_writes_nothing_times_out_with_its_stderr() {
    let file = fresh_dir("ior-timeout").join("x.ior");
    let mut peer = PeerProcess::spawn("silent", &mut sh("echo starting >&2; sleep 30"));
    let e = peer
        .wait_for_ior_file(&file, Duration::from_millis(300))
        .unwrap_err()
        .to_string();
    assert!(e.contains("silent did not write its IOR"), "{e}");
    // The drain thread may not have run yet; give it a moment.
    let start = Instant::now();
    while !peer.stderr().contains("starting") {
        assert!(start.elapsed() < Duration::from_secs(5), "{e}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn drop_kills_and_reaps_the_peer() {
    let mut peer = PeerProcess::spawn("sleeper", &mut sh("sleep 30"));
    let pid = peer.child_mut().id();
    drop(peer);
    // Reaped: the pid is gone, not a zombie.
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
}

#[test]
fn bench_peers_build_and_check_each_other() {
    let Some(bin) = corbina_testpeers::bench_peers() else {
        return;
    };
    // Once per process: the same directory again, without rebuilding.
    assert_eq!(corbina_testpeers::bench_peers(), Some(bin));
    let (server, ior) = corbina_testpeers::omni_server(bin, "testpeers-bench");
    assert!(ior.starts_with("IOR:"), "{ior}");
    let file = fresh_dir("testpeers-client").join("o.ior");
    std::fs::write(&file, ior + "\n").unwrap();
    corbina_testpeers::omni_client_check(bin, &file, &[]);
    drop(server);
}

#[test]
fn value_peers_check_each_other_with_and_without_truncation() {
    let Some(bin) = corbina_testpeers::value_peers() else {
        return;
    };
    let (full, ior) = corbina_testpeers::omni_value_server(bin, "testpeers-values", &[]);
    let out = corbina_testpeers::omni_value_client_check(bin, &ior, &[]);
    assert!(out.contains("ok make_cycle(1000)"), "{out}");
    // A client without the Derived factory gets make_derived's value as its Base.
    corbina_testpeers::omni_value_client_check(bin, &ior, &["--no-derived-factory"]);
    drop(full);
    let (truncating, ior) = corbina_testpeers::omni_value_server(
        bin,
        "testpeers-values-trunc",
        &["--no-derived-factory"],
    );
    // The server's describe says "Base:d" for a Derived: the client expects it only so.
    let out = Command::new(bin.join("omni_value_peer"))
        .args(["--client", &ior])
        .args(corbina_testpeers::VALUE_PEER_ARGS)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("FAIL describe(Derived): got \"Base:d\", want \"Derived:d:7\""),
        "{text}"
    );
    corbina_testpeers::omni_value_client_check(bin, &ior, &["--server-truncates"]);
    drop(truncating);
}

#[test]
fn bidir_peers_call_back_over_the_clients_connection() {
    let Some(bin) = corbina_testpeers::bidir_peers() else {
        return;
    };
    let (server, ior) = corbina_testpeers::omni_bidir_server(bin, "testpeers-bidir", &[]);
    let file = fresh_dir("testpeers-bidir-client").join("r.ior");
    std::fs::write(&file, ior + "\n").unwrap();
    let line = corbina_testpeers::omni_bidir_client_check(bin, &file, &["--n", "4"]);
    // 4 callbacks in call_back, 4 in notify_registered, 4 from call_back_later.
    assert!(
        line.contains("\"call_back\":{\"ok\":true,\"result\":20}"),
        "{line}"
    );
    assert!(line.contains("\"notifies\":12"), "{line}");

    // The client's published endpoint refuses connections, so without bidirectional GIOP
    // on the client the callbacks fail: the server's new connection is refused.
    let out = corbina_testpeers::omni_bidir_client_command(bin, &file)
        .args(["--n", "1", "--wait-s", "0.5"])
        .args(["-ORBofferBiDirectionalGIOP", "0"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("\"call_back\":{\"ok\":false,\"result\":\"CORBA::TRANSIENT"),
        "{text}"
    );
    drop(server);
}

#[test]
fn bidir_peers_fail_without_bidir_on_the_server() {
    let Some(bin) = corbina_testpeers::bidir_peers() else {
        return;
    };
    let (server, ior) = corbina_testpeers::omni_bidir_server(
        bin,
        "testpeers-bidir-off",
        &["-ORBacceptBiDirectionalGIOP", "0"],
    );
    let file = fresh_dir("testpeers-bidir-off-client").join("r.ior");
    std::fs::write(&file, ior + "\n").unwrap();
    let out = corbina_testpeers::omni_bidir_client_command(bin, &file)
        .args(["--n", "1", "--wait-s", "0.5"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("\"ping\":{\"ok\":true"), "{text}");
    assert!(
        text.contains("\"call_back\":{\"ok\":false,\"result\":\"CORBA::TRANSIENT"),
        "{text}"
    );
    drop(server);
}
