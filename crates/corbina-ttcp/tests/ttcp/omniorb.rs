//! Interop with the real omniORB peer (`peers/`, built from Debian's omniORB packages), in
//! both directions: `omni_client --mode check` against a Corbina server, and Corbina's check
//! against `omni_server`, at GIOP 1.0, 1.1 and 1.2.
//!
//! Without omniORB installed the tests print why and pass, unless `REQUIRE_OMNIORB_PEERS` is
//! set (as `scripts/test.sh` does), which makes a missing peer a failure.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::common;

use corbina::config::Endpoint;
use corbina::{Orb, OrbConfig};
use corbina_testpeers::{bench_peers, fresh_dir, omni_client_check, omni_server, omni_server_with};
use corbina_ttcp::bench::{Bench, BenchSkeleton};
use corbina_ttcp::servant::{BenchImpl, ByteCounter};

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
    let file = fresh_dir(name).join("corbina.ior");
    std::fs::write(&file, orb.object_to_string(&obj).unwrap() + "\n").unwrap();
    (orb, file)
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
    let Some(bin) = bench_peers() else { return };
    let (orb, file) = corbina_server("omni-to-corbina", OrbConfig::default());
    for v in ["1.0", "1.1", "1.2"] {
        omni_client_check(bin, &file, &["-ORBmaxGIOPVersion", v]);
    }
    orb.shutdown(true);
}

#[test]
fn omniorb_client_checks_corbina_dsi_server_at_every_giop_version() {
    let Some(bin) = bench_peers() else { return };
    // The benchmark's own `server --dsi`, as the suite runs it.
    let (server, file) = common::ttcp_server("omni-to-dsi", &["--dsi"]);
    for v in ["1.0", "1.1", "1.2"] {
        omni_client_check(bin, &file, &["-ORBmaxGIOPVersion", v]);
    }
    drop(server);
}

#[test]
fn corbina_client_checks_omniorb_server_at_every_giop_version() {
    let Some(bin) = bench_peers() else { return };
    let (_peer, ior) = omni_server(bin, "corbina-to-omni");
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
    let Some(bin) = bench_peers() else { return };
    let (_peer, ior) = omni_server(bin, "corbaloc");
    let parsed: corbina::giop::Ior = ior.parse().unwrap();
    let p = &parsed.iiop_profiles().unwrap()[0];
    let url = corbina::giop::format_corbaloc(&p.host, p.port, p.object_key.as_bytes());
    let url = url.replacen("corbaloc:iiop:", "corbaloc:iiop:1.2@", 1);
    corbina_check(&url, OrbConfig::default());
}

#[test]
fn large_sequences_travel_as_fragments_both_ways() {
    let Some(bin) = bench_peers() else { return };
    const SIZE: usize = 64 << 20;
    let (_peer, ior) = omni_server_with(bin, "fragments", &["-ORBgiopMaxMsgSize", "100000000"]);
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
    let Some(bin) = bench_peers() else { return };
    // omniORB closes idle inbound connections after one or two scans of 1 s.
    let (_peer, ior) = omni_server_with(
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
