//! IIOP over TLS with omniORB's SSL transport (`libomnisslTP4`), both ways: Corbina's
//! client against `omni_server` listening on `giop:ssl`, and `omni_client --mode check`
//! against a Corbina TLS server; server authentication and mutual authentication
//! (`-ORBsslVerifyMode peer,fail`) each way. Certificates are made at test time.

mod common;
mod pki;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use common::bench::{Bench, BenchSkeleton};
use common::StaticBench;
use corbina::config::SslVerifyMode;
use corbina::giop::Ior;
use corbina::transport::TransportKind;
use corbina::{Orb, OrbConfig};
use corbina_testpeers::PeerProcess;
use pki::Pki;

/// omniORB's SSL options for `key_file` (omniORB 4.2.5 wants a password even for a
/// clear key; it is not used).
fn omni_ssl_args(pki: &Pki, key_file: &Path, verify: &str) -> Vec<String> {
    [
        "-ORBsslCAFile",
        pki.ca_file().to_str().unwrap(),
        "-ORBsslKeyFile",
        key_file.to_str().unwrap(),
        "-ORBsslKeyPassword",
        "unused",
        "-ORBsslVerifyMode",
        verify,
    ]
    .map(String::from)
    .to_vec()
}

fn omni_server(bin: &Path, pki: &Pki, verify: &str) -> (PeerProcess, String) {
    let dir =
        corbina_testpeers::fresh_dir(&format!("tls-omni-server-{}", verify.replace(',', "-")));
    let ior_file = dir.join("server.ior");
    let mut cmd = Command::new(bin.join("omni_server_ssl"));
    cmd.arg(&ior_file)
        .args(["1", "120", "-ORBendPoint", "giop:ssl:127.0.0.1:"])
        .args(omni_ssl_args(pki, &pki.server_key(), verify));
    let mut server = PeerProcess::spawn("omni_server_ssl", &mut cmd);
    let ior = server
        .wait_for_ior_file(&ior_file, Duration::from_secs(30))
        .unwrap_or_else(|e| panic!("{e}"));
    (server, ior)
}

/// Corbina's check of a bench server: twoway, oneway, large sequences.
fn check(client: &Orb, ior: &str) {
    let b = Bench::narrow(&client.string_to_object(ior).unwrap()).unwrap();
    b.ping().unwrap();
    assert_eq!(b.echo("über TLS").unwrap(), "über TLS");
    let big: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
    b.send_octets(&big).unwrap();
    for _ in 0..20 {
        b.send_octets_oneway(&big[..64 << 10]).unwrap();
    }
    b.send_doubles(&vec![0.25; 50_000]).unwrap();
    assert_eq!(b.echo("done").unwrap(), "done");
    assert!(client
        .connections()
        .iter()
        .all(|c| c.address.kind() == TransportKind::Ssl));
}

#[test]
fn corbina_checks_an_omniorb_ssl_server_with_server_and_mutual_authentication() {
    let Some(bin) = corbina_testpeers::ssl_peers() else {
        return;
    };
    let pki = Pki::new("omni-server");

    // Server authentication only.
    let (_server, ior) = omni_server(bin, &pki, "none");
    // omniORB publishes TLS only as port 0 plus TAG_SSL_SEC_TRANS.
    let profile = ior
        .parse::<Ior>()
        .unwrap()
        .iiop_profiles()
        .unwrap()
        .remove(0);
    assert_eq!(profile.port, 0);
    assert!(profile.ssl_sec_trans().unwrap().unwrap().requires_tls());
    let client = Orb::with_config(OrbConfig::default().ssl_ca_file(pki.ca_file()));
    check(&client, &ior);

    // Mutual: omniORB requires a client certificate.
    let (_server, ior) = omni_server(bin, &pki, "peer,fail");
    let client = Orb::with_config(
        OrbConfig::default()
            .ssl_ca_file(pki.ca_file())
            .ssl_key_file(pki.client_key()),
    );
    check(&client, &ior);
    let without = Orb::with_config(OrbConfig::default().ssl_ca_file(pki.ca_file()));
    let b = Bench::narrow(&without.string_to_object(&ior).unwrap()).unwrap();
    assert!(b.ping().is_err());
}

fn corbina_server(config: OrbConfig) -> (Orb, String) {
    let orb = Orb::with_config(config);
    let poa = orb.root_poa();
    let id = poa
        .activate_object(Arc::new(BenchSkeleton::new(Arc::new(
            StaticBench::default(),
        ))))
        .unwrap();
    let obj = poa.id_to_reference(&id).unwrap();
    poa.the_poa_manager().activate().unwrap();
    let ior = orb.object_to_string(&obj).unwrap();
    (orb, ior)
}

fn omni_client_check(bin: &Path, pki: &Pki, ior: &str, key_file: &Path) -> std::process::Output {
    let dir = corbina_testpeers::fresh_dir("tls-omni-client");
    let ior_file = dir.join("r.ior");
    std::fs::write(&ior_file, format!("{ior}\n")).unwrap();
    Command::new(bin.join("omni_client_ssl"))
        .arg("--ior")
        .arg(&ior_file)
        .args(["--mode", "check"])
        .args(omni_ssl_args(pki, key_file, "peer"))
        .args(["-ORBclientCallTimeOutPeriod", "30000"])
        .output()
        .unwrap()
}

#[test]
fn omniorb_checks_a_corbina_tls_server_with_server_and_mutual_authentication() {
    let Some(bin) = corbina_testpeers::ssl_peers() else {
        return;
    };
    let pki = Pki::new("corbina-server");
    let base = || {
        OrbConfig::default()
            .ssl_endpoint("127.0.0.1", 0)
            .ssl_key_file(pki.server_key())
            .ssl_ca_file(pki.ca_file())
    };
    for config in [base(), base().thread_pool(2)] {
        let (orb, ior) = corbina_server(config);
        let out = omni_client_check(bin, &pki, &ior, &pki.client_key());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("\"ok\":true"), "{stdout}");
        orb.destroy();
    }
    // Mutual authentication: omniORB's client certificate is checked and required.
    let (orb, ior) = corbina_server(base().ssl_verify_mode(SslVerifyMode::PEER_FAIL));
    let out = omni_client_check(bin, &pki, &ior, &pki.client_key());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A client certificate from another CA is refused.
    let other = Pki::new("corbina-server-other");
    let out = omni_client_check(bin, &pki, &ior, &other.client_key());
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    orb.destroy();
}
