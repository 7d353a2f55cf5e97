//! Interop with omniORB's naming tools (Debian packages `omniorb` and
//! `omniorb-nameserver`): omniORB's `nameclt` against `corbina-names`, and Corbina's
//! CosNaming client against omniORB's `omniNames`.
//!
//! Without the binaries the tests print why and pass, unless `REQUIRE_OMNIORB_PEERS` is set
//! (as `scripts/test.sh` does).

use super::common;

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::etcd::EtcdCluster;
use common::{free_port, start_names, start_names_on, Store};
use corbina::{Orb, OrbConfig, SystemExceptionKind};
use corbina_naming::cos_naming::naming_context::{NotFoundReason, ResolveError};
use corbina_naming::cos_naming::naming_context_ext::ResolveStrError;
use corbina_naming::cos_naming::{BindingType, NamingContextExt};
use corbina_testpeers::{fresh_dir, PeerProcess};

fn have(bin: &str) -> bool {
    corbina_testpeers::have_path(
        bin,
        "omniORB naming interop",
        "Debian packages omniorb, omniorb-nameserver",
    )
}

fn nameclt(port: u16, args: &[&str]) -> Output {
    nameclt_at(&format!("corbaloc::127.0.0.1:{port}/NameService"), args)
}

/// nameclt with the root context at `root` (a URL or an IOR).
fn nameclt_at(root: &str, args: &[&str]) -> Output {
    Command::new("/usr/bin/nameclt")
        .arg("-ORBInitRef")
        .arg(format!("NameService={root}"))
        .args(args)
        .output()
        .expect("nameclt runs")
}

fn ok_stdout(out: Output) -> String {
    assert!(
        out.status.success(),
        "nameclt failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn omniorb_nameclt_against_corbina_names() {
    if !have("/usr/bin/nameclt") {
        return;
    }
    let port = free_port();
    let dir = fresh_dir("naming-omni-nameclt");
    let (_daemon, ior) = start_names(port, &dir);
    nameclt_session(port, &ior);
}

#[test]
fn omniorb_nameclt_against_corbina_names_on_etcd() {
    if !have("/usr/bin/nameclt") {
        return;
    }
    let Some(cluster) = EtcdCluster::start("nameclt", 3) else {
        return;
    };
    let port = free_port();
    let url = cluster.url("nameclt");
    let (_daemon, ior) = start_names_on(port, Store::Etcd(&url), &[]);
    nameclt_session(port, &ior);
}

#[test]
fn omniorb_nameclt_against_replicas_on_etcd() {
    if !have("/usr/bin/nameclt") {
        return;
    }
    let Some(cluster) = EtcdCluster::start("nameclt-replicas", 3) else {
        return;
    };
    let url = cluster.url("replicas");
    let (pa, pb) = (free_port(), free_port());
    let list: &str = &format!("127.0.0.1:{pa},127.0.0.1:{pb}");
    let (a, ior_a) = start_names_on(pa, Store::Etcd(&url), &["--replicas", list]);
    let _b = start_names_on(pb, Store::Etcd(&url), &["--replicas", list]);
    // The whole session through A; B serves the same graph.
    nameclt_session(pa, &ior_a);
    assert_eq!(ok_stdout(nameclt(pb, &["list"])).lines().count(), 151);
    // A killed: omniORB follows the root's alternate address (B) in A's own IOR, and a
    // corbaloc URL naming both.
    drop(a);
    assert_eq!(
        ok_stdout(nameclt_at(&ior_a, &["resolve", "top"])).trim(),
        ior_a
    );
    let both = format!("corbaloc::127.0.0.1:{pa},:127.0.0.1:{pb}/NameService");
    ok_stdout(nameclt_at(&both, &["bind", "after", &ior_a]));
    assert_eq!(ok_stdout(nameclt(pb, &["list"])).lines().count(), 152);
}

/// Every nameclt command against the daemon on `port` (whose root's IOR is `ior`).
fn nameclt_session(port: u16, ior: &str) {
    ok_stdout(nameclt(port, &["bind_new_context", "apps.dir"]));
    ok_stdout(nameclt(port, &["bind", "apps.dir/echo.svc", ior]));
    ok_stdout(nameclt(port, &["bind", "top", ior]));
    let list = ok_stdout(nameclt(port, &["list"]));
    let mut lines: Vec<&str> = list.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, vec!["apps.dir/", "top"]);
    assert_eq!(
        ok_stdout(nameclt(port, &["list", "apps.dir"])).trim(),
        "echo.svc"
    );
    let resolved = ok_stdout(nameclt(port, &["resolve", "apps.dir/echo.svc"]));
    assert_eq!(resolved.trim(), ior);
    // Errors come back as the CosNaming exceptions nameclt knows.
    let out = nameclt(port, &["resolve", "apps.dir/nothing"]);
    assert!(!out.status.success());
    let err =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(err.contains("NotFound"), "{err}");
    let out = nameclt(port, &["bind", "top", ior]);
    assert!(!out.status.success());
    // Removing a non-empty context fails (NotEmpty), an emptied one goes.
    assert!(!nameclt(port, &["remove_context", "apps.dir"])
        .status
        .success());
    ok_stdout(nameclt(port, &["unbind", "apps.dir/echo.svc"]));
    ok_stdout(nameclt(port, &["remove_context", "apps.dir"]));
    assert_eq!(ok_stdout(nameclt(port, &["list"])).trim(), "top");
    // More bindings than nameclt fetches at once: the rest comes through the iterator.
    for i in 0..150 {
        ok_stdout(nameclt(port, &["bind", &format!("many{i:03}"), ior]));
    }
    assert_eq!(ok_stdout(nameclt(port, &["list"])).lines().count(), 151);
}

#[test]
fn corbina_client_against_omninames() {
    if !have("/usr/bin/omniNames") {
        return;
    }
    let port = free_port();
    let dir = fresh_dir("naming-omni-omninames");
    let log = std::fs::File::create(dir.join("omniNames.log")).unwrap();
    let server = PeerProcess::spawn(
        "omniNames",
        Command::new("/usr/bin/omniNames")
            .args(["-start", &port.to_string(), "-datadir"])
            .arg(&dir)
            .args(["-ORBendPoint", &format!("giop:tcp:127.0.0.1:{port}")])
            .stdout(log),
    );
    let orb = Orb::with_config(OrbConfig::default().call_timeout(Duration::from_secs(10)));
    let url = format!("corbaloc::127.0.0.1:{port}/NameService");
    let obj = orb.string_to_object(&url).unwrap();
    let start = Instant::now();
    let root = loop {
        match NamingContextExt::narrow(&obj) {
            Ok(r) => break r,
            Err(e) if start.elapsed() < Duration::from_secs(20) => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => panic!(
                "omniNames did not answer: {e}; its stderr:\n{}",
                server.stderr()
            ),
        }
    };

    let apps = root
        .bind_new_context(&root.to_name("apps.dir").unwrap())
        .unwrap()
        .unwrap();
    apps.bind(&root.to_name("echo.svc").unwrap(), Some(&obj))
        .unwrap();
    assert_eq!(
        root.resolve_str("apps.dir/echo.svc")
            .unwrap()
            .unwrap()
            .ior(),
        obj.ior()
    );
    assert_eq!(
        root.to_string(&root.to_name(r"a\/b.c/d").unwrap()).unwrap(),
        r"a\/b.c/d"
    );
    // omniNames's exceptions decode into ours.
    match root.resolve(&root.to_name("apps.dir/missing/x").unwrap()) {
        Err(ResolveError::NotFound(nf)) => {
            assert_eq!(nf.why, NotFoundReason::MissingNode);
            assert_eq!(nf.rest_of_name, root.to_name("missing/x").unwrap());
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        root.resolve_str("a//b"),
        Err(ResolveStrError::InvalidName(_))
    ));
    // list with an iterator from omniNames.
    for i in 0..5 {
        root.bind(&root.to_name(&format!("o{i}")).unwrap(), Some(&obj))
            .unwrap();
    }
    let (first, it) = root.list(2).unwrap();
    assert_eq!(first.len(), 2);
    let it = it.expect("an iterator for the rest");
    let (_, rest) = it.next_n(100).unwrap();
    it.destroy().unwrap();
    let all: Vec<_> = first.iter().chain(&rest).collect();
    assert_eq!(all.len(), 6);
    assert_eq!(
        all.iter()
            .filter(|b| b.binding_type == BindingType::Ncontext)
            .count(),
        1
    );

    // The ORB's corbaname: and -ORBInitRef go through omniNames too.
    let found = orb
        .string_to_object(&format!("corbaname::127.0.0.1:{port}#apps.dir/echo.svc"))
        .unwrap();
    assert_eq!(found.ior(), obj.ior());
    let e = orb
        .string_to_object(&format!("corbaname::127.0.0.1:{port}#apps.dir/nope"))
        .unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::ObjectNotExist);
    let (orb2, _) = Orb::init([
        "-ORBInitRef".to_owned(),
        format!("NameService=corbaloc::127.0.0.1:{port}/NameService"),
    ])
    .unwrap();
    let Ok(corbina::orb::InitialReference::Object(ns)) =
        orb2.resolve_initial_references("NameService")
    else {
        panic!("NameService resolves");
    };
    let ns = NamingContextExt::narrow(&ns).unwrap();
    assert!(ns.resolve_str("o3").unwrap().is_some());

    apps.unbind(&root.to_name("echo.svc").unwrap()).unwrap();
    apps.destroy().unwrap();
    root.unbind(&root.to_name("apps.dir").unwrap()).unwrap();
}
