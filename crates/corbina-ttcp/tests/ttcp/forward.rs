//! LOCATION_FORWARD interop with omniORB: a Corbina forwarder (a POA whose ServantLocator
//! raises ForwardRequest for every request) in front of an `omni_server` object, called by
//! `omni_client --mode check` (omniORB follows our LOCATION_FORWARD) and by Corbina's own
//! check (Corbina follows it, through a Corbina server, to omniORB), at GIOP 1.0, 1.1, 1.2.
//!
//! Without omniORB installed the tests print why and pass, unless `REQUIRE_OMNIORB_PEERS` is
//! set, which makes a missing peer a failure.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use corbina::config::Endpoint;
use corbina::poa::{
    Cookie, DispatchError, IdAssignmentPolicy, ObjectId, Poa, PolicyList, RequestProcessingPolicy,
    ServantLocator, ServantManager, ServantRetentionPolicy,
};
use corbina::{ObjectRef, Orb, OrbConfig, Servant};
use corbina_testpeers::{bench_peers, fresh_dir, omni_client_check, omni_server};
use corbina_ttcp::bench::Bench;

/// Forwards every request to `to`.
struct ForwardAll {
    to: ObjectRef,
    forwarded: AtomicUsize,
}

impl ServantLocator for ForwardAll {
    fn preinvoke(
        &self,
        _oid: &ObjectId,
        _adapter: &Poa,
        _operation: &str,
    ) -> Result<(Arc<dyn Servant>, Cookie), DispatchError> {
        self.forwarded.fetch_add(1, Ordering::SeqCst);
        Err(DispatchError::Forward {
            reference: self.to.clone(),
            permanent: false,
        })
    }

    fn postinvoke(&self, _: &ObjectId, _: &Poa, _: &str, _: Cookie, _: Arc<dyn Servant>) {}
}

/// A Corbina ORB whose object `fwd` forwards every request to the object at `target_ior`.
fn corbina_forwarder(target_ior: &str) -> (Orb, String, Arc<ForwardAll>) {
    let orb = Orb::with_config(OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..OrbConfig::default()
    });
    let target = orb.string_to_object(target_ior).unwrap();
    let policies = PolicyList::default()
        .with_servant_retention(ServantRetentionPolicy::NonRetain)
        .with_request_processing(RequestProcessingPolicy::UseServantManager)
        .with_id_assignment(IdAssignmentPolicy::UserId);
    let poa = orb
        .root_poa()
        .create_poa("forward", None, policies)
        .unwrap();
    let locator = Arc::new(ForwardAll {
        to: target,
        forwarded: AtomicUsize::new(0),
    });
    poa.set_servant_manager(ServantManager::Locator(locator.clone()))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    let obj = poa.create_reference_with_id(&ObjectId::from("fwd"), Bench::REPOSITORY_ID);
    let ior = orb.object_to_string(&obj).unwrap();
    (orb, ior, locator)
}

#[test]
fn omniorb_client_follows_a_corbina_forward_to_omniorb() {
    let Some(bin) = bench_peers() else { return };
    let (_peer, omni_ior) = omni_server(bin, "fwd-omni-client");
    let (orb, fwd_ior, locator) = corbina_forwarder(&omni_ior);
    let file = fresh_dir("fwd-omni-client-ior").join("fwd.ior");
    std::fs::write(&file, fwd_ior + "\n").unwrap();
    for v in ["1.0", "1.1", "1.2"] {
        let before = locator.forwarded.load(Ordering::SeqCst);
        omni_client_check(bin, &file, &["-ORBmaxGIOPVersion", v]);
        // omniORB came to us first and was sent on.
        assert!(locator.forwarded.load(Ordering::SeqCst) > before);
    }
    orb.shutdown(true);
}

#[test]
fn corbina_client_follows_a_corbina_forward_to_omniorb() {
    let Some(bin) = bench_peers() else { return };
    let (_peer, omni_ior) = omni_server(bin, "fwd-corbina-client");
    let (orb, fwd_ior, locator) = corbina_forwarder(&omni_ior);
    for minor in 0..=2u8 {
        let before = locator.forwarded.load(Ordering::SeqCst);
        let client = Orb::with_config(OrbConfig {
            giop_max_minor: minor,
            ..OrbConfig::default()
        });
        let bench = Bench::narrow(&client.string_to_object(&fwd_ior).unwrap()).unwrap();
        let results = corbina_ttcp::check::run_checks(&bench);
        let failed: Vec<_> = results.iter().filter(|r| !r.ok()).collect();
        assert!(
            failed.is_empty(),
            "GIOP 1.{minor}: checks failed: {failed:?}"
        );
        assert_eq!(results.len(), 9);
        // Forwarded once; every later call went straight to omniORB.
        assert_eq!(locator.forwarded.load(Ordering::SeqCst), before + 1);
    }
    orb.shutdown(true);
}
