//! Objects registered through `corbina-names` by one ORB and called by the other: an
//! omniORB server's object bound with omniORB's `nameclt` and called by a Corbina client
//! through `corbaname:`, and a Corbina server's object bound through Corbina's CosNaming
//! client and checked by omniORB's client (`omni_client --mode check`) through `corbaname:`.
//!
//! Needs omniORB (`omniidl`, `libomniorb4-dev`, `omniorb`); without it the test prints why and
//! passes, unless `REQUIRE_OMNIORB_PEERS` is set.

use super::common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use common::{free_port, start_names};
use corbina::config::Endpoint;
use corbina::{Orb, OrbConfig};
use corbina_naming::cos_naming::{NameComponent, NamingContextExt};
use corbina_testpeers::{bench_peers, fresh_dir, have_path, omni_client_check, omni_server};
use corbina_ttcp::bench::{Bench, BenchSkeleton};
use corbina_ttcp::servant::{BenchImpl, ByteCounter};

/// The omniORB bench peers; `None` when omniORB (with its `nameclt`) is missing and not
/// required.
fn peers() -> Option<&'static Path> {
    if !have_path(
        "/usr/bin/nameclt",
        "cross-ORB naming test",
        "Debian package omniorb",
    ) {
        return None;
    }
    bench_peers()
}

#[test]
fn objects_registered_by_one_orb_are_called_by_the_other() {
    let Some(bin) = peers() else { return };
    // The naming service: the real daemon binary.
    let port = free_port();
    let data = fresh_dir("cross-orb-names");
    let (_names, _) = start_names(port, &data);
    let ns = format!("corbaloc::127.0.0.1:{port}/NameService");

    // omniORB server, registered by omniORB's nameclt.
    let (_omni, omni_ior) = omni_server(bin, "cross-orb-omni");
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
    let url_file = fresh_dir("cross-orb-client").join("by-name.ior");
    std::fs::write(
        &url_file,
        format!("corbaname::127.0.0.1:{port}#corbina.bench\n"),
    )
    .unwrap();
    omni_client_check(bin, &url_file, &[]);
    server.shutdown(true);
}
