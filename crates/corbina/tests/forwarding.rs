//! LOCATION_FORWARD as every call path follows it (the one `CallPolicy`): forward chains
//! remembered and followed straight to their end on the next call, a remembered target
//! that has gone away falling back to the reference that forwarded to it, and the hop
//! limit — the same for synchronous calls, calls through portable interceptors and
//! asynchronous calls. Servers are Corbina ORBs on loopback TCP in this process; a
//! forwarding server is a servant locator that answers every request with a forward.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use corbina::config::Endpoint;
use corbina::interceptor::{ClientRequestInterceptor, Interceptor, OrbInitInfo, OrbInitializer};
use corbina::poa::{
    Cookie, DispatchError, IdAssignmentPolicy, ObjectId, Poa, PolicyList, RequestProcessingPolicy,
    ServantLocator, ServantManager, ServantRetentionPolicy,
};
use corbina::servant::{bad_operation, dispatch_object_operation};
use corbina::{
    no_user, ObjectRef, Orb, OrbConfig, Servant, ServerRequest, SystemException,
    SystemExceptionKind,
};

const ID: &str = "IDL:forwarding/Named:1.0";

/// `whoami` answers the servant's name.
struct Named(&'static str);

impl Servant for Named {
    fn primary_interface(&self) -> &'static str {
        ID
    }
    fn is_a(&self, id: &str) -> bool {
        id == ID
    }
    fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        if req.operation() == "whoami" {
            req.arguments_done()?;
            return req.reply(|w| w.write_string(self.0));
        }
        if dispatch_object_operation(self, req)? {
            Ok(())
        } else {
            Err(bad_operation())
        }
    }
}

/// Forwards every request to `to`, counting them.
#[derive(Default)]
struct Forwarder {
    to: Mutex<Option<ObjectRef>>,
    requests: AtomicUsize,
}

impl ServantLocator for Forwarder {
    fn preinvoke(
        &self,
        _oid: &ObjectId,
        _adapter: &Poa,
        _operation: &str,
    ) -> Result<(Arc<dyn Servant>, Cookie), DispatchError> {
        self.requests.fetch_add(1, Ordering::SeqCst);
        Err(DispatchError::Forward {
            reference: self.to.lock().unwrap().clone().expect("a forward target"),
            permanent: false,
        })
    }
    fn postinvoke(
        &self,
        _oid: &ObjectId,
        _adapter: &Poa,
        _operation: &str,
        _cookie: Cookie,
        _servant: Arc<dyn Servant>,
    ) {
    }
}

fn server_orb() -> Orb {
    Orb::with_config(OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..OrbConfig::default()
    })
}

/// A server whose object `whoami`s as `name`: the ORB and the object's IOR.
fn named(name: &'static str) -> (Orb, String) {
    let orb = server_orb();
    let poa = orb.root_poa();
    let id = poa.activate_object(Arc::new(Named(name))).unwrap();
    let obj = poa.id_to_reference(&id).unwrap();
    poa.the_poa_manager().activate().unwrap();
    let ior = orb.object_to_string(&obj).unwrap();
    (orb, ior)
}

/// A server whose object forwards every request: the ORB, its forwarder, the IOR.
fn forwarder() -> (Orb, Arc<Forwarder>, String) {
    let orb = server_orb();
    let root = orb.root_poa();
    let poa = root
        .create_poa(
            "fwd",
            Some(root.the_poa_manager()),
            PolicyList::default()
                .with_id_assignment(IdAssignmentPolicy::UserId)
                .with_servant_retention(ServantRetentionPolicy::NonRetain)
                .with_request_processing(RequestProcessingPolicy::UseServantManager),
        )
        .unwrap();
    let fwd = Arc::new(Forwarder::default());
    poa.set_servant_manager(ServantManager::Locator(fwd.clone()))
        .unwrap();
    root.the_poa_manager().activate().unwrap();
    let obj = poa.create_reference_with_id(&"x".into(), ID);
    let ior = orb.object_to_string(&obj).unwrap();
    (orb, fwd, ior)
}

/// How a test calls: the three call paths.
#[derive(Clone, Copy, Debug)]
enum Path {
    Sync,
    Intercepted,
    Async,
}

const PATHS: [Path; 3] = [Path::Sync, Path::Intercepted, Path::Async];

/// A request interceptor that does nothing: its presence puts calls on the intercepted path.
struct Passive;

impl Interceptor for Passive {
    fn name(&self) -> &str {
        "passive"
    }
}

impl ClientRequestInterceptor for Passive {}

impl OrbInitializer for Passive {
    fn pre_init(&self, info: &mut OrbInitInfo) {
        info.add_client_request_interceptor(Arc::new(Passive))
            .unwrap();
    }
}

fn client(path: Path) -> Orb {
    let config = OrbConfig {
        call_timeout: Some(Duration::from_secs(20)),
        connect_timeout: Duration::from_secs(5),
        ..OrbConfig::default()
    };
    Orb::with_config(match path {
        Path::Intercepted => config.orb_initializer(Arc::new(Passive)),
        Path::Sync | Path::Async => config,
    })
}

/// Polls `f` to completion on this thread.
fn block_on<F: Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

fn whoami(path: Path, r: &ObjectRef) -> Result<String, SystemException> {
    match path {
        Path::Sync | Path::Intercepted => {
            r.invoke("whoami", |_| Ok(()), |r| r.read_string(), no_user)
        }
        Path::Async => block_on(r.invoke_async("whoami", |_| Ok(()), |r| r.read_string(), no_user)),
    }
}

/// A → B → C: the first call goes through both forwards; later calls go straight to C,
/// on every path (the asynchronous path used to stop at B, which forwarded it again).
#[test]
fn a_remembered_chain_is_followed_to_its_end() {
    let (_c_orb, c) = named("C");
    let (_b_orb, b_fwd, b) = forwarder();
    let (_a_orb, a_fwd, a) = forwarder();
    for path in PATHS {
        let orb = client(path);
        *b_fwd.to.lock().unwrap() = Some(orb.string_to_object(&c).unwrap());
        *a_fwd.to.lock().unwrap() = Some(orb.string_to_object(&b).unwrap());
        let (a0, b0) = (
            a_fwd.requests.load(Ordering::SeqCst),
            b_fwd.requests.load(Ordering::SeqCst),
        );
        let r = orb.string_to_object(&a).unwrap();
        assert_eq!(whoami(path, &r).unwrap(), "C", "{path:?}");
        for _ in 0..3 {
            assert_eq!(whoami(path, &r).unwrap(), "C", "{path:?}");
        }
        assert_eq!(a_fwd.requests.load(Ordering::SeqCst) - a0, 1, "{path:?}: A");
        assert_eq!(b_fwd.requests.load(Ordering::SeqCst) - b0, 1, "{path:?}: B");
        orb.destroy();
    }
}

/// A → B remembered; B goes away; A now forwards to D: the next call finds B unreachable
/// (TRANSIENT, nothing ran), falls back to A, and is forwarded to D; the call after goes
/// straight to D.
#[test]
fn an_unreachable_remembered_target_falls_back_to_the_reference() {
    for path in PATHS {
        let (_d_orb, d) = named("D");
        let (b_orb, b) = named("B");
        let (_a_orb, a_fwd, a) = forwarder();
        let orb = client(path);
        *a_fwd.to.lock().unwrap() = Some(orb.string_to_object(&b).unwrap());
        let r = orb.string_to_object(&a).unwrap();
        assert_eq!(whoami(path, &r).unwrap(), "B", "{path:?}");
        b_orb.destroy();
        *a_fwd.to.lock().unwrap() = Some(orb.string_to_object(&d).unwrap());
        assert_eq!(whoami(path, &r).unwrap(), "D", "{path:?}");
        assert_eq!(whoami(path, &r).unwrap(), "D", "{path:?}");
        assert_eq!(a_fwd.requests.load(Ordering::SeqCst), 2, "{path:?}");
        orb.destroy();
    }
}

/// A target this call was forwarded to that cannot be reached is the call's failure (no
/// remembered forward to fall back from): TRANSIENT, completed NO.
#[test]
fn an_unreachable_new_target_fails_the_call() {
    for path in PATHS {
        let (b_orb, b) = named("B");
        let (_a_orb, a_fwd, a) = forwarder();
        let orb = client(path);
        *a_fwd.to.lock().unwrap() = Some(orb.string_to_object(&b).unwrap());
        b_orb.destroy();
        let r = orb.string_to_object(&a).unwrap();
        let e = whoami(path, &r).unwrap_err();
        assert_eq!(e.kind, SystemExceptionKind::Transient, "{path:?}: {e:?}");
        assert_eq!(a_fwd.requests.load(Ordering::SeqCst), 1, "{path:?}");
        orb.destroy();
    }
}

/// A forward loop (A → A) stops at the ORB's hop limit with TRANSIENT
/// `TRANSIENT_FORWARD_LIMIT`, having followed exactly `limit` forwards, on every path.
#[test]
fn a_forward_loop_stops_at_the_hop_limit() {
    let (_a_orb, a_fwd, a) = forwarder();
    for path in PATHS {
        let orb = client(path);
        *a_fwd.to.lock().unwrap() = Some(orb.string_to_object(&a).unwrap());
        let before = a_fwd.requests.load(Ordering::SeqCst);
        let r = orb.string_to_object(&a).unwrap();
        let e = whoami(path, &r).unwrap_err();
        assert_eq!(e.kind, SystemExceptionKind::Transient, "{path:?}: {e:?}");
        assert_eq!(
            e.minor,
            corbina::error::minor::TRANSIENT_FORWARD_LIMIT,
            "{path:?}"
        );
        let limit = orb.config().forward_limit as usize;
        assert_eq!(
            a_fwd.requests.load(Ordering::SeqCst) - before,
            limit + 1,
            "{path:?}: one request per hop, the last forward refused"
        );
        orb.destroy();
    }
}
