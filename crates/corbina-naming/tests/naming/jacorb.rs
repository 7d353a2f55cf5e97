//! JacORB's CosNaming client (`peers/jacorb/src/NamingClient.java`) against `corbina-names`:
//! on redb, and against two replicas on etcd, where it binds through one, reads through the
//! other, and goes on through a URL naming both after the first is killed.
//!
//! Needs Java and Maven (Debian `default-jdk-headless`, `maven`; JacORB comes from Maven
//! Central); without them the test prints why and passes, unless `REQUIRE_OMNIORB_PEERS`
//! is set.

use super::common;

use std::process::{Command, Output};

use common::etcd::EtcdCluster;
use common::{free_port, replica, start_names_on, Store};
use corbina::giop::Ior;
use corbina_testpeers::{fresh_dir, jacorb_classpath, JACORB_JVM_ARGS};

fn jacorb(classpath: &str, root: &str, args: &[&str]) -> Output {
    Command::new("java")
        .args(JACORB_JVM_ARGS)
        .arg("-cp")
        .arg(classpath)
        .arg("NamingClient")
        .arg(root)
        .args(args)
        .output()
        .expect("java runs")
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "JacORB's naming client failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Whether two stringified IORs name one object (JacORB writes them back big-endian).
fn same_object(a: &str, b: &str) -> bool {
    let key = |s: &str| {
        let ior: Ior = s.trim().parse().unwrap();
        let p = ior.iiop_profiles().unwrap().remove(0);
        (ior.type_id, p.host, p.port, p.object_key)
    };
    key(a) == key(b)
}

fn url(ports: &[u16]) -> String {
    let addrs: Vec<String> = ports.iter().map(|p| format!(":127.0.0.1:{p}")).collect();
    format!("corbaloc:{}/NameService", addrs.join(","))
}

fn classpath() -> Option<String> {
    let file = jacorb_classpath()?;
    Some(std::fs::read_to_string(file).unwrap().trim().to_owned())
}

#[test]
fn jacorb_client_against_corbina_names_on_redb() {
    let Some(cp) = classpath() else { return };
    let port = free_port();
    let dir = fresh_dir("naming-jacorb");
    let (_d, ior) = start_names_on(port, Store::Redb(&dir), &[]);
    let root = url(&[port]);
    ok(jacorb(&cp, &root, &["bind", "from.jacorb", &ior]));
    assert!(same_object(
        &ok(jacorb(&cp, &root, &["resolve", "from.jacorb"])),
        &ior
    ));
    assert_eq!(ok(jacorb(&cp, &root, &["list"])).trim(), "from.jacorb");
}

#[test]
fn jacorb_client_against_replicas_on_etcd() {
    let Some(cp) = classpath() else { return };
    let Some(cluster) = EtcdCluster::start("jacorb", 3) else {
        return;
    };
    let etcd = cluster.url("jacorb");
    let (pa, pb) = (free_port(), free_port());
    let list = format!("127.0.0.1:{pa},127.0.0.1:{pb}");
    let (a, ior) = start_names_on(pa, Store::Etcd(&etcd), &["--replicas", &list]);
    let _b = replica(pb, &etcd, &[pa, pb]);
    ok(jacorb(&cp, &url(&[pa]), &["bind", "via.a", &ior]));
    assert!(same_object(
        &ok(jacorb(&cp, &url(&[pb]), &["resolve", "via.a"])),
        &ior
    ));
    drop(a);
    ok(jacorb(&cp, &url(&[pa, pb]), &["bind", "after.kill", &ior]));
    let listed = ok(jacorb(&cp, &url(&[pa, pb]), &["list"]));
    let mut names: Vec<&str> = listed.lines().collect();
    names.sort_unstable();
    assert_eq!(names, ["after.kill", "via.a"]);
}
