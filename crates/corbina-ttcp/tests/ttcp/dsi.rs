//! `corbina-ttcp server --dsi` (Bench served through the DSI) answers Corbina's own
//! `client --check`, static and through the DII, and the dynamic invocation modes of the
//! experiments run against it; `omni_client --mode check` against it is in `omniorb.rs`.

use std::path::{Path, PathBuf};
use std::process::Command;

use corbina_testpeers::PeerProcess;
use corbina_ttcp::record::Record;

use super::common;

/// Starts `corbina-ttcp server [--dsi]` on loopback; returns it and its IOR file.
fn server(name: &str, dsi: bool) -> (PeerProcess, PathBuf) {
    common::ttcp_server(name, if dsi { &["--dsi"] } else { &[] })
}

fn client(ior: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_corbina-ttcp"))
        .arg("client")
        .arg("--ior")
        .arg(ior)
        .args(args)
        .output()
        .expect("client runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn dsi_server_passes_the_check() {
    let (_s, ior) = server("dsi-check", true);
    let (ok, out) = client(&ior, &["--check"]);
    assert!(ok, "{out}");
    assert_eq!(out.matches("\"ok\":true").count(), 9, "{out}");
}

#[test]
fn every_invocation_mode_measures_against_both_servers() {
    let (_st, st_ior) = server("dyn-static", false);
    let (_ds, ds_ior) = server("dyn-dsi", true);
    for (inv, ior) in [
        ("static", &st_ior),
        ("dii", &st_ior),
        ("dii_reuse", &st_ior),
        ("dsi", &ds_ior),
        // The DII against the DSI server: dynamic on both sides.
        ("dii_reuse", &ds_ior),
    ] {
        let (ok, out) = client(
            ior,
            &[
                "--mode",
                "lat,payload,thr",
                "--invocation",
                inv,
                "--count",
                "50",
                "--warmup",
                "5",
                "--kbs",
                "1,64",
                "--sizes",
                "1,100",
                "--total-mb",
                "0.2",
                "--min-calls",
                "3",
            ],
        );
        assert!(ok, "{inv}: {out}");
        let recs: Vec<Record> = out
            .lines()
            .filter_map(|l| Record::from_json(l).ok())
            .collect();
        let thr: Vec<&Record> = recs
            .iter()
            .filter(|r| r.experiment == "throughput")
            .collect();
        // 6 types × 2 sizes × oneway/twoway, every byte counted by the server.
        assert_eq!(thr.len(), 24, "{inv}: {out}");
        assert!(thr.iter().all(|r| r.complete == Some(true)), "{inv}: {out}");
        assert!(recs
            .iter()
            .all(|r| r.invocation.as_deref() == Some(inv) && r.available));
        for op in ["ping", "echo_empty", "send_octets", "send_structs"] {
            assert!(
                recs.iter()
                    .any(|r| r.experiment == "latency" && r.op.as_deref() == Some(op)),
                "{inv}: no {op} latency"
            );
        }
    }
}

#[test]
fn ping_client_makes_n_calls_in_every_mode() {
    let (_s, ior) = server("ping", false);
    for inv in ["static", "dii", "dii_reuse"] {
        let out = Command::new(env!("CARGO_BIN_EXE_corbina-ttcp"))
            .arg("ping")
            .arg(&ior)
            .args(["25", "--invocation", inv])
            .output()
            .unwrap();
        assert!(out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "25 calls");
    }
}
