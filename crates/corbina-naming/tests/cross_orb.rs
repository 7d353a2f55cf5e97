//! Objects registered through `corbina-names` by one ORB and called by the other: an
//! omniORB server's object bound with omniORB's `nameclt` and called by a Corbina client
//! through `corbaname:`, and a Corbina server's object bound through Corbina's CosNaming
//! client and checked by omniORB's client (`omni_client --mode check`) through `corbaname:`.
//!
//! Needs omniORB (`omniidl`, `libomniorb4-dev`, `omniorb`); without it the test prints why and
//! passes, unless `REQUIRE_OMNIORB_PEERS` is set.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use corbina::config::Endpoint;
use corbina::{Orb, OrbConfig};
use corbina_naming::cos_naming::{NameComponent, NamingContextExt};
use corbina_ttcp::bench::{Bench, BenchSkeleton};
use corbina_ttcp::servant::{BenchImpl, ByteCounter};

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cross-orb-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Builds the omniORB bench peers; `None` when omniORB is missing (and not required).
fn peers() -> Option<PathBuf> {
    let have = Path::new("/usr/bin/nameclt").exists()
        && Command::new("pkg-config")
            .args(["--exists", "omniORB4"])
            .status()
            .is_ok_and(|s| s.success());
    if !have {
        let msg = "omniORB (omniidl, libomniorb4-dev, omniorb) is not installed";
        assert!(std::env::var_os("REQUIRE_OMNIORB_PEERS").is_none(), "{msg}");
        eprintln!("skipping cross-ORB naming test: {msg}");
        return None;
    }
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("peers");
    let status = Command::new("make")
        .arg("-s")
        .arg("-C")
        .arg(repo().join("peers"))
        .arg(format!("B={}", out.display()))
        .arg(out.join("omni_server"))
        .arg(out.join("omni_client"))
        .status()
        .unwrap();
    assert!(status.success(), "building the omniORB peers failed");
    Some(out)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn objects_registered_by_one_orb_are_called_by_the_other() {
    let Some(bin) = peers() else { return };
    // The naming service: the real daemon binary.
    let port = free_port();
    let data = tmp("names");
    let mut child = Command::new(env!("CARGO_BIN_EXE_corbina-names"))
        .args(["--endpoint", &format!("127.0.0.1:{port}")])
        .arg("--data-dir")
        .arg(&data)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _names = Proc(child);
    let ns = format!("corbaloc::127.0.0.1:{port}/NameService");

    // omniORB server, registered by omniORB's nameclt.
    let dir = tmp("omni");
    let ior_file = dir.join("o.ior");
    let server = Command::new(bin.join("omni_server"))
        .arg(&ior_file)
        .args(["1", "120", "-ORBendPoint", "giop:tcp:127.0.0.1:"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let _omni = Proc(server);
    let start = Instant::now();
    let omni_ior = loop {
        if let Some(l) = std::fs::read_to_string(&ior_file)
            .ok()
            .and_then(|s| s.lines().next().map(str::to_owned))
        {
            break l;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "omni_server wrote no IOR"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let bound = Command::new("/usr/bin/nameclt")
        .arg("-ORBInitRef")
        .arg(format!("NameService={ns}"))
        .args(["bind", "omni.bench", &omni_ior])
        .output()
        .unwrap();
    assert!(
        bound.status.success(),
        "{}",
        String::from_utf8_lossy(&bound.stderr)
    );

    // A Corbina client finds it by name and calls it.
    let client = Orb::with_config(OrbConfig::default());
    let obj = client
        .string_to_object(&format!("corbaname::127.0.0.1:{port}#omni.bench"))
        .unwrap();
    let bench = Bench::narrow(&obj).unwrap();
    assert_eq!(
        bench.echo("through the names").unwrap(),
        "through the names"
    );
    let results = corbina_ttcp::check::run_checks(&bench);
    assert!(results.iter().all(|r| r.ok()), "{results:?}");

    // A Corbina server, registered through Corbina's CosNaming client.
    let server = Orb::with_config(OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..OrbConfig::default()
    });
    let poa = server.root_poa();
    let id = poa
        .activate_object(Arc::new(BenchSkeleton::new(BenchImpl::new(Arc::new(
            ByteCounter::default(),
        )))))
        .unwrap();
    let mine = poa.id_to_reference(&id).unwrap();
    poa.the_poa_manager().activate().unwrap();
    let root = NamingContextExt::narrow(&client.string_to_object(&ns).unwrap()).unwrap();
    let name = [NameComponent {
        id: "corbina".into(),
        kind: "bench".into(),
    }];
    root.bind(&name, Some(&mine)).unwrap();

    // omniORB's client checks it, reaching it by name.
    let url_file = dir.join("by-name.ior");
    std::fs::write(
        &url_file,
        format!("corbaname::127.0.0.1:{port}#corbina.bench\n"),
    )
    .unwrap();
    let out = Command::new(bin.join("omni_client"))
        .arg("--ior")
        .arg(&url_file)
        .args(["--mode", "check"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text.matches("\"ok\":true").count(), 9, "{text}");
    server.shutdown(true);
}
