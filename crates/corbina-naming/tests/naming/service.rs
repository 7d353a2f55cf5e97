//! The naming service over IIOP in this process: every CosNaming operation and exception,
//! iterators and their bounds, federation with a second service, and the ORB's
//! `corbaname:` / `-ORBInitRef NameService` integration. Every test runs on both stores:
//! redb, and etcd (a three-member cluster on loopback ports).

use std::path::PathBuf;
use std::time::Duration;

use corbina::orb::InitialReference;
use corbina::{ObjectRef, Orb, SystemExceptionKind};
use corbina_naming::cos_naming::naming_context::{
    BindError, DestroyError, NotFoundReason, RebindContextError, RebindError, ResolveError,
    UnbindError,
};
use corbina_naming::cos_naming::naming_context_ext::{ResolveStrError, ToNameError, ToUrlError};
use corbina_naming::cos_naming::{BindingType, NameComponent, NamingContext, NamingContextExt};
use corbina_naming::store::etcd::EtcdConfig;
use corbina_naming::{NamingService, Options};

use super::common;

use common::{etcd, loopback_orb};

fn temp_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("naming-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[derive(Clone, Copy)]
enum Backend {
    Redb,
    Etcd,
}

struct Fixture {
    orb: Orb,
    service: NamingService,
    url: String,
    /// Dropped last: the service needs it until then.
    _cluster: Option<etcd::EtcdCluster>,
}

/// A service on `backend`; `None` (skip) when etcd is not installed.
fn start(
    backend: Backend,
    name: &str,
    options: impl FnOnce(Options) -> Options,
) -> Option<Fixture> {
    let (base, cluster) = match backend {
        Backend::Redb => (Options::new(temp_dir(name)), None),
        Backend::Etcd => {
            let cluster = etcd::EtcdCluster::start(name, 3)?;
            let config = EtcdConfig::parse(&cluster.url(name)).unwrap();
            (Options::etcd(config), Some(cluster))
        }
    };
    let orb = loopback_orb();
    let service = NamingService::start(&orb, &options(base)).unwrap();
    let (host, port) = service.endpoint();
    let url = format!("corbaloc::{host}:{port}/NameService");
    Some(Fixture {
        orb,
        service,
        url,
        _cluster: cluster,
    })
}

/// `#[test]`s running each test function on both stores.
macro_rules! on_both_stores {
    ($($test:ident),*) => {
        mod redb {
            $(#[test]
            fn $test() {
                super::$test(super::Backend::Redb)
            })*
        }
        mod etcd_store {
            $(#[test]
            fn $test() {
                super::$test(super::Backend::Etcd)
            })*
        }
    };
}

on_both_stores!(
    every_operation_and_exception,
    iterators_are_reaped_when_idle_and_capped,
    corbaname_and_initial_references,
    contexts_of_another_service_are_followed
);

impl Fixture {
    /// The root context as a remote client sees it.
    fn root(&self) -> NamingContextExt {
        let obj = self.orb.string_to_object(&self.url).unwrap();
        NamingContextExt::narrow(&obj).unwrap()
    }
}

fn n(s: &str) -> Vec<NameComponent> {
    corbina_naming::name::to_name(s).unwrap()
}

/// A distinct object reference to bind: a new, unbound context.
fn some_object(f: &Fixture) -> ObjectRef {
    f.root().new_context().unwrap().unwrap().as_object().clone()
}

fn every_operation_and_exception(store: Backend) {
    let Some(f) = start(store, "ops", |o| o) else {
        return;
    };
    let root = f.root();
    let a = some_object(&f);
    let b = some_object(&f);

    // bind / resolve / AlreadyBound.
    root.bind(&n("x.obj"), Some(&a)).unwrap();
    assert_eq!(root.resolve(&n("x.obj")).unwrap().unwrap().ior(), a.ior());
    assert!(matches!(
        root.bind(&n("x.obj"), Some(&b)),
        Err(BindError::AlreadyBound(_))
    ));
    // rebind replaces; rebind over a context is NotFound(not_object).
    root.rebind(&n("x.obj"), Some(&b)).unwrap();
    assert_eq!(root.resolve_str("x.obj").unwrap().unwrap().ior(), b.ior());

    // Contexts: bind_new_context, nested binds, NotFound with the rest of the name.
    let apps = root.bind_new_context(&n("apps")).unwrap().unwrap();
    apps.bind(&n("echo"), Some(&a)).unwrap();
    root.bind(&n("apps/deep/er"), Some(&a))
        .map(|_| panic!("must fail"))
        .unwrap_or_else(|e| match e {
            BindError::NotFound(nf) => {
                assert_eq!(nf.why, NotFoundReason::MissingNode);
                assert_eq!(nf.rest_of_name, n("deep/er"));
            }
            other => panic!("{other:?}"),
        });
    match root.resolve(&n("x.obj/y")) {
        Err(ResolveError::NotFound(nf)) => {
            assert_eq!(nf.why, NotFoundReason::NotContext);
            assert_eq!(nf.rest_of_name, n("x.obj/y"));
        }
        other => panic!("{other:?}"),
    }
    match root.rebind(&n("apps"), Some(&a)) {
        Err(RebindError::NotFound(nf)) => assert_eq!(nf.why, NotFoundReason::NotObject),
        other => panic!("{other:?}"),
    }
    match root.rebind_context(&n("x.obj"), Some(&apps)) {
        Err(RebindContextError::NotFound(nf)) => assert_eq!(nf.why, NotFoundReason::NotContext),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        root.resolve_str("apps/echo").unwrap().unwrap().ior(),
        a.ior()
    );
    // bind_context of an existing context, and resolving through it.
    let other = root.new_context().unwrap().unwrap();
    other.bind(&n("leaf"), Some(&b)).unwrap();
    root.bind_context(&n("apps/other"), Some(&other)).unwrap();
    assert_eq!(
        root.resolve_str("apps/other/leaf").unwrap().unwrap().ior(),
        b.ior()
    );
    root.rebind_context(&n("apps/other"), Some(&other)).unwrap();

    // InvalidName: empty names, bad strings.
    assert!(matches!(
        root.resolve(&[]),
        Err(ResolveError::InvalidName(_))
    ));
    assert!(matches!(
        root.to_name("a//b"),
        Err(ToNameError::InvalidName(_))
    ));
    assert!(matches!(
        root.resolve_str("a.b.c"),
        Err(ResolveStrError::InvalidName(_))
    ));
    assert!(matches!(
        root.to_url("", "a"),
        Err(ToUrlError::InvalidAddress(_))
    ));
    assert_eq!(
        root.to_url(":h:1", "a b/c").unwrap(),
        "corbaname::h:1#a%20b/c"
    );
    assert_eq!(root.to_string(&n(r"a\.b.k/c")).unwrap(), r"a\.b.k/c");

    // list: types, and an iterator for the rest.
    let (first, it) = root.list(1).unwrap();
    assert_eq!(first.len(), 1);
    let it = it.expect("more than one binding: an iterator");
    let (more, rest) = it.next_n(10).unwrap();
    assert!(more);
    let mut all: Vec<_> = first.into_iter().chain(rest).collect();
    all.sort_by(|x, y| x.binding_name[0].id.cmp(&y.binding_name[0].id));
    let got: Vec<_> = all
        .iter()
        .map(|b| (b.binding_name[0].id.as_str(), b.binding_type))
        .collect();
    assert_eq!(
        got,
        vec![("apps", BindingType::Ncontext), ("x", BindingType::Nobject)]
    );
    assert!(!it.next_one().unwrap().0);
    it.destroy().unwrap();
    assert_eq!(
        it.next_one().unwrap_err().kind,
        SystemExceptionKind::ObjectNotExist
    );

    // destroy: NotEmpty, then unbind and destroy; the destroyed context is gone.
    assert!(matches!(apps.destroy(), Err(DestroyError::NotEmpty(_))));
    apps.unbind(&n("echo")).unwrap();
    apps.unbind(&n("other")).unwrap();
    assert!(matches!(
        apps.unbind(&n("echo")),
        Err(UnbindError::NotFound(_))
    ));
    apps.destroy().unwrap();
    assert!(apps.as_object().non_existent().unwrap());
    assert_eq!(
        apps.resolve(&n("echo")).unwrap_err(),
        ResolveError::System(corbina::SystemException::new(
            SystemExceptionKind::ObjectNotExist,
            corbina::error::minor::OBJECT_NOT_EXIST_NAMING_CONTEXT
        ))
    );
    // The binding to the destroyed context still names it, and resolving through it fails
    // with NotFound, not with a hang or a crash.
    assert!(matches!(
        root.resolve_str("apps/echo"),
        Err(ResolveStrError::NotFound(_))
    ));
    // The root context cannot be destroyed.
    assert!(matches!(root.destroy(), Err(DestroyError::System(_))));
    assert!(!root.as_object().non_existent().unwrap());
}

fn iterators_are_reaped_when_idle_and_capped(store: Backend) {
    let Some(f) = start(store, "iter", |mut o| {
        o.iterator_timeout = Duration::from_millis(200);
        o.max_iterators = 3;
        o
    }) else {
        return;
    };
    let root = f.root();
    let obj = some_object(&f);
    for i in 0..5 {
        root.bind(&n(&format!("n{i}")), Some(&obj)).unwrap();
    }
    // A client that never destroys its iterators: at most 3 stay alive.
    let its: Vec<_> = (0..10).map(|_| root.list(1).unwrap().1.unwrap()).collect();
    assert_eq!(f.service.live_iterators(), 3);
    // The most recent ones work; the evicted ones are gone.
    assert!(its[9].next_one().unwrap().0);
    assert_eq!(
        its[0].next_one().unwrap_err().kind,
        SystemExceptionKind::ObjectNotExist
    );
    // Left idle past the timeout, all of them are dropped.
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(f.service.live_iterators(), 0);
    assert_eq!(
        its[9].next_one().unwrap_err().kind,
        SystemExceptionKind::ObjectNotExist
    );
    // One in use is kept alive by its calls.
    let it = root.list(0).unwrap().1.unwrap();
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(100));
        assert!(it.next_one().unwrap().0);
    }
}

fn corbaname_and_initial_references(store: Backend) {
    let Some(f) = start(store, "url", |o| o) else {
        return;
    };
    let root = f.root();
    let obj = some_object(&f);
    let dir = root.bind_new_context(&n("dir.kind")).unwrap().unwrap();
    dir.bind(&n("a b"), Some(&obj)).unwrap();
    let (host, port) = f.service.endpoint();

    // corbaname: with a name, %-escapes decoded, and with none (the context itself).
    let client = loopback_orb();
    let url = root
        .to_url(&format!(":{host}:{port}"), "dir.kind/a b")
        .unwrap();
    let got = client.string_to_object(&url).unwrap();
    assert_eq!(got.ior(), obj.ior());
    let ctx = client
        .string_to_object(&format!("corbaname::{host}:{port}"))
        .unwrap();
    assert!(ctx.is_a(NamingContextExt::REPOSITORY_ID).unwrap());
    // NotFound → OBJECT_NOT_EXIST; InvalidName → BAD_PARAM.
    let e = client
        .string_to_object(&format!("corbaname::{host}:{port}#nothing"))
        .unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::ObjectNotExist);
    let e = client
        .string_to_object(&format!("corbaname::{host}:{port}#a//b"))
        .unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::BadParam);

    // -ORBInitRef NameService=… and resolve_initial_references, with corbaloc and corbaname.
    for init in [f.url.clone(), format!("corbaname::{host}:{port}")] {
        let (orb, rest) = Orb::init(
            ["prog", "-ORBInitRef", &format!("NameService={init}"), "x"]
                .into_iter()
                .map(String::from),
        )
        .unwrap();
        assert_eq!(rest, vec!["prog".to_owned(), "x".to_owned()]);
        let Ok(InitialReference::Object(ns)) = orb.resolve_initial_references("NameService") else {
            panic!("NameService resolves")
        };
        let ns = NamingContextExt::narrow(&ns).unwrap();
        assert_eq!(
            ns.resolve_str("dir.kind/a b").unwrap().unwrap().ior(),
            obj.ior()
        );
    }
    // And a corbaname initial reference naming an object inside the service.
    let (orb, _) = Orb::init([
        "-ORBInitRef".to_owned(),
        format!("Thing=corbaname::{host}:{port}#dir.kind/a%20b"),
    ])
    .unwrap();
    let Ok(InitialReference::Object(thing)) = orb.resolve_initial_references("Thing") else {
        panic!("Thing resolves")
    };
    assert_eq!(thing.ior(), obj.ior());
}

fn contexts_of_another_service_are_followed(store: Backend) {
    let Some(here) = start(store, "fed-a", |o| o) else {
        return;
    };
    let Some(there) = start(store, "fed-b", |o| o) else {
        return;
    };
    let obj = some_object(&here);
    let remote_root: NamingContext = there.root().into();
    let far = there.root().bind_new_context(&n("far")).unwrap().unwrap();
    far.bind(&n("thing"), Some(&obj)).unwrap();

    let root = here.root();
    root.bind_context(&n("other"), Some(&remote_root)).unwrap();
    // Resolution continues in the other service.
    assert_eq!(
        root.resolve_str("other/far/thing").unwrap().unwrap().ior(),
        obj.ior()
    );
    // So do binds, unbinds and new contexts below it.
    root.bind(&n("other/far/second"), Some(&obj)).unwrap();
    assert!(there.root().resolve_str("far/second").unwrap().is_some());
    root.bind_new_context(&n("other/made")).unwrap().unwrap();
    root.unbind(&n("other/far/second")).unwrap();
    assert!(matches!(
        there.root().resolve_str("far/second"),
        Err(ResolveStrError::NotFound(_))
    ));
    match root.resolve(&n("other/far/missing/x")) {
        Err(ResolveError::NotFound(nf)) => {
            assert_eq!(nf.why, NotFoundReason::MissingNode);
            assert_eq!(nf.rest_of_name, n("missing/x"));
        }
        other => panic!("{other:?}"),
    }
}
