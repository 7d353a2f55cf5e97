//! Interop with the real omniORB peer (`peers/`, built from Debian's omniORB packages), in
//! both directions: `omni_client --mode check` against a Corbina server, and Corbina's check
//! against `omni_server`, at GIOP 1.0, 1.1 and 1.2.
//!
//! Without omniORB installed the tests print why and pass, unless `REQUIRE_OMNIORB_PEERS` is
//! set (as `scripts/test.sh` does), which makes a missing peer a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;
use common::{peers, Peer};

use corbina::config::Endpoint;
use corbina::{Orb, OrbConfig};
use corbina_ttcp::bench::{Bench, BenchSkeleton};
use corbina_ttcp::servant::{BenchImpl, ByteCounter};

fn temp_dir(name: &str) -> PathBuf {
    let d =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Starts `omni_server` with `extra` -ORB options; returns it and its first IOR.
fn omni_server(bin: &Path, name: &str, extra: &[&str]) -> (Peer, String) {
    let dir = temp_dir(name);
    let ior_file = dir.join("o.ior");
    let child = Command::new(bin.join("omni_server"))
        .arg(&ior_file)
        .args(["1", "120", "-ORBendPoint", "giop:tcp:127.0.0.1:"])
        .args(extra)
        .stdout(Stdio::null())
        .spawn()
        .expect("omni_server starts");
    let peer = Peer(child);
    let start = Instant::now();
    loop {
        if let Ok(s) = std::fs::read_to_string(&ior_file) {
            if let Some(line) = s.lines().next() {
                return (peer, line.trim().to_owned());
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "omni_server wrote no IOR"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A Corbina bench server on loopback in this process; returns the ORB and the IOR file.
fn corbina_server(name: &str, config: OrbConfig) -> (Orb, PathBuf) {
    let config = OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..config
    };
    let orb = Orb::with_config(config);
    let poa = orb.root_poa();
    let servant = Arc::new(BenchSkeleton::new(BenchImpl::new(Arc::new(
        ByteCounter::default(),
    ))));
    let id = poa.activate_object(servant).unwrap();
    let obj = poa.id_to_reference(&id).unwrap();
    poa.the_poa_manager().activate().unwrap();
    let file = temp_dir(name).join("corbina.ior");
    std::fs::write(&file, orb.object_to_string(&obj).unwrap() + "\n").unwrap();
    (orb, file)
}

fn run_omni_client(bin: &Path, ior_file: &Path, extra: &[&str]) -> (bool, String) {
    let out = Command::new(bin.join("omni_client"))
        .arg("--ior")
        .arg(ior_file)
        .args(["--mode", "check"])
        .args(extra)
        .output()
        .expect("omni_client runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

fn corbina_check(ior: &str, config: OrbConfig) {
    let orb = Orb::with_config(config);
    let obj = orb.string_to_object(ior).unwrap();
    let bench = Bench::narrow(&obj).unwrap();
    let results = corbina_ttcp::check::run_checks(&bench);
    let failed: Vec<_> = results.iter().filter(|r| !r.ok()).collect();
    assert!(failed.is_empty(), "checks failed: {failed:?}");
    assert_eq!(results.len(), 9);
}

#[test]
fn omniorb_client_checks_corbina_server_at_every_giop_version() {
    let Some(bin) = peers() else { return };
    let (orb, file) = corbina_server("omni-to-corbina", OrbConfig::default());
    for v in ["1.0", "1.1", "1.2"] {
        let (ok, out) = run_omni_client(bin, &file, &["-ORBmaxGIOPVersion", v]);
        assert!(ok, "omni_client --mode check at GIOP {v} failed:\n{out}");
        assert_eq!(out.matches("\"ok\":true").count(), 9, "{out}");
    }
    orb.shutdown(true);
}

#[test]
fn omniorb_client_checks_corbina_dsi_server_at_every_giop_version() {
    let Some(bin) = peers() else { return };
    // The benchmark's own `server --dsi`, as the suite runs it.
    let dir = temp_dir("omni-to-dsi");
    let file = dir.join("dsi.ior");
    let server = Peer(
        Command::new(env!("CARGO_BIN_EXE_corbina-ttcp"))
            .args(["server", "--dsi", "--endpoint", "127.0.0.1:0"])
            .args(["--lifetime", "120", "--ior-file"])
            .arg(&file)
            .stdout(Stdio::null())
            .spawn()
            .expect("corbina-ttcp server --dsi starts"),
    );
    let start = Instant::now();
    while !file.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no IOR from server --dsi"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    for v in ["1.0", "1.1", "1.2"] {
        let (ok, out) = run_omni_client(bin, &file, &["-ORBmaxGIOPVersion", v]);
        assert!(
            ok,
            "omni_client --mode check against server --dsi at GIOP {v} failed:\n{out}"
        );
        assert_eq!(out.matches("\"ok\":true").count(), 9, "{out}");
    }
    drop(server);
}

#[test]
fn corbina_client_checks_omniorb_server_at_every_giop_version() {
    let Some(bin) = peers() else { return };
    let (_peer, ior) = omni_server(bin, "corbina-to-omni", &[]);
    for minor in 0..=2u8 {
        corbina_check(
            &ior,
            OrbConfig {
                giop_max_minor: minor,
                ..OrbConfig::default()
            },
        );
    }
}

#[test]
fn corbina_client_reaches_omniorb_through_corbaloc() {
    let Some(bin) = peers() else { return };
    let (_peer, ior) = omni_server(bin, "corbaloc", &[]);
    let parsed: corbina::giop::Ior = ior.parse().unwrap();
    let p = &parsed.iiop_profiles().unwrap()[0];
    let url = corbina::giop::format_corbaloc(&p.host, p.port, p.object_key.as_bytes());
    let url = url.replacen("corbaloc:iiop:", "corbaloc:iiop:1.2@", 1);
    corbina_check(&url, OrbConfig::default());
}

#[test]
fn large_sequences_travel_as_fragments_both_ways() {
    let Some(bin) = peers() else { return };
    const SIZE: usize = 64 << 20;
    let (_peer, ior) = omni_server(bin, "fragments", &["-ORBgiopMaxMsgSize", "100000000"]);
    let config = OrbConfig {
        fragment_size: Some(64 * 1024),
        ..OrbConfig::default()
    };
    let orb = Orb::with_config(config);
    let bench = Bench::narrow(&orb.string_to_object(&ior).unwrap()).unwrap();
    let data: Vec<u8> = (0..SIZE).map(|i| i as u8).collect();
    bench.start_timer().unwrap();
    bench.send_octets(&data).unwrap();
    assert_eq!(bench.stop_timer().unwrap(), SIZE as u64);
    // omniORB fragments what it sends back: a 1 MB echo comes back in pieces.
    let s = "y".repeat(1 << 20);
    assert_eq!(bench.echo(&s).unwrap(), s);
}

#[test]
fn orderly_close_connection_from_omniorb_is_retried_transparently() {
    let Some(bin) = peers() else { return };
    // omniORB closes idle inbound connections after one or two scans of 1 s.
    let (_peer, ior) = omni_server(
        bin,
        "close",
        &[
            "-ORBinConScanPeriod",
            "1",
            "-ORBserverCallTimeOutPeriod",
            "0",
        ],
    );
    let orb = Orb::with_config(OrbConfig::default());
    let bench = Bench::narrow(&orb.string_to_object(&ior).unwrap()).unwrap();
    bench.ping().unwrap();
    std::thread::sleep(Duration::from_millis(3500));
    // The strand was closed by the server meanwhile: the call must still succeed.
    bench.ping().unwrap();
    assert_eq!(bench.echo("again").unwrap(), "again");
}
