//! Collocated calls: a proxy for an object served by the same ORB calls the servant
//! directly, on the caller's thread and without marshalling, with POA semantics kept. The
//! generated code is the codegen golden files' (so it is the generator's real output).

mod common;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};
use std::time::Duration;

use common::bench::{Bench, BenchSkeleton};
use common::extra::extra::node::{self, DescribeError, GetModeError, NothingError};
use common::extra::extra::{
    Broken, ByLong, Link, Mode, Node, NodeServant, NodeSkeleton, Other, Sample,
};
use corbina::config::Endpoint;
use corbina::giop::IiopProfile;
use corbina::poa::{
    AdapterActivator, Cookie, Current, DispatchError, IdAssignmentPolicy, LifespanPolicy, ObjectId,
    Poa, PolicyList, RequestProcessingPolicy, ServantLocator, ServantManager,
    ServantRetentionPolicy, ThreadPolicy,
};
use corbina::{
    ObjectRef, Orb, OrbConfig, Servant, ServerRequest, SystemException, SystemExceptionKind,
};

#[allow(dead_code, clippy::all)]
mod objref {
    include!("../../corbina-codegen/tests/golden/objref.rs");
}
use objref::refs::{Item, ItemServant, SpecialItem, SpecialItemServant, SpecialItemSkeleton};

type R<T = ()> = Result<T, SystemException>;

/// What a Node servant saw of its last upcall.
#[derive(Default)]
struct Seen {
    thread: Option<ThreadId>,
    oid: Option<ObjectId>,
    poa: Option<Poa>,
}

/// A Node servant that records where it ran; `describe` raises, `choose` blocks while
/// `gate` holds a receiver.
#[derive(Default)]
struct NodeImpl {
    seen: Mutex<Seen>,
    pokes: AtomicU32,
    mode: Mutex<Mode>,
    gate: Mutex<Option<(mpsc::Sender<()>, mpsc::Receiver<()>)>>,
}

impl NodeImpl {
    fn note(&self) {
        let mut s = self.seen.lock().unwrap();
        s.thread = Some(thread::current().id());
        s.oid = Current::get_object_id().ok();
        s.poa = Current::get_poa().ok();
    }
    fn thread(&self) -> Option<ThreadId> {
        self.seen.lock().unwrap().thread
    }
}

impl NodeServant for Arc<NodeImpl> {
    fn describe(
        &self,
        names: &[String],
        depth: &mut i32,
    ) -> Result<(node::Info, Link), DescribeError> {
        self.note();
        match *depth {
            -1 => return Err(DescribeError::NotHere(node::NotHere { r#where: 7 })),
            -2 => {
                return Err(DescribeError::System(SystemException::new(
                    SystemExceptionKind::NoPermission,
                    42,
                )))
            }
            _ => {}
        }
        *depth += 1;
        let info = node::Info {
            names: names.iter().rev().cloned().collect(),
            depth: *depth * 10,
        };
        let link = Link {
            name: names.join("/"),
            next: vec![],
        };
        Ok((info, link))
    }
    fn swap(&self, s: &mut String, samples: &mut Vec<Sample>) -> R<ByLong> {
        self.note();
        s.push('!');
        samples.reverse();
        Ok(ByLong::Text(format!("{} samples", samples.len())))
    }
    fn limits(&self, l: &common::extra::extra::Limits) -> R<common::extra::extra::Limits> {
        self.note();
        Ok(l.clone())
    }
    fn choose(
        &self,
        c: &[ByLong],
        _odds: &[common::extra::extra::Odd],
    ) -> R<common::extra::extra::Choices> {
        // Blocks until the test lets the call finish (for the deactivate/destroy tests).
        if let Some((entered, release)) = self.gate.lock().unwrap().take() {
            entered.send(()).unwrap();
            release.recv().unwrap();
        }
        Ok(c.to_vec())
    }
    fn poke(&self, x: u8) -> R {
        self.note();
        self.pokes.fetch_add(u32::from(x), Ordering::SeqCst);
        // A oneway's error is never reported, collocated or not.
        Err(SystemException::new(SystemExceptionKind::NoResources, 1))
    }
    fn nothing(&self) -> Result<(), NothingError> {
        self.note();
        Err(NothingError::Other(Other {}))
    }
    fn r#move(&self, self_: i32, r#loop: i32, request: &str) -> R<i32> {
        Ok(self_ + r#loop + request.len() as i32)
    }
    fn get_mode(&self) -> Result<Mode, GetModeError> {
        self.note();
        match *self.mode.lock().unwrap() {
            Mode::Standby => Err(GetModeError::Broken(Broken {
                why: "standby".into(),
            })),
            m => Ok(m),
        }
    }
    fn set_mode(&self, value: Mode) -> Result<(), node::SetModeError> {
        self.note();
        *self.mode.lock().unwrap() = value;
        Ok(())
    }
    fn get_count(&self) -> R<u32> {
        self.note();
        Ok(self.pokes.load(Ordering::SeqCst))
    }
}

/// An ORB serving on 127.0.0.1 (so that the opt-out has a real IIOP path), RootPOA active.
/// A child of the RootPOA sharing its (active) manager.
fn child_poa(orb: &Orb, name: &str, policies: PolicyList) -> Poa {
    orb.root_poa()
        .create_poa(name, Some(orb.root_poa().the_poa_manager()), policies)
        .unwrap()
}

fn orb() -> Orb {
    let orb = Orb::with_config(OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..OrbConfig::default()
    });
    orb.root_poa().the_poa_manager().activate().unwrap();
    orb
}

/// Activates a fresh Node servant in the RootPOA.
fn node(orb: &Orb) -> (Arc<NodeImpl>, Node, ObjectId) {
    let imp = Arc::new(NodeImpl::default());
    let poa = orb.root_poa();
    let oid = poa
        .activate_object(Arc::new(NodeSkeleton::new(imp.clone())))
        .unwrap();
    let obj = poa.id_to_reference(&oid).unwrap();
    (imp, Node::unchecked_narrow(&obj), oid)
}

fn strands(orb: &Orb) -> usize {
    orb.connections().iter().map(|c| c.open_strands).sum()
}

#[test]
fn direct_path_runs_on_the_callers_thread_without_a_connection() {
    let orb = orb();
    let (imp, n, oid) = node(&orb);
    assert!(n.as_object().is_collocated());
    assert_eq!(n.get_count().unwrap(), 0);
    assert_eq!(imp.thread(), Some(thread::current().id()));
    // PortableServer::Current is set during the upcall.
    let seen = imp.seen.lock().unwrap();
    assert_eq!(seen.oid.as_ref(), Some(&oid));
    assert_eq!(seen.poa.as_ref(), Some(&orb.root_poa()));
    drop(seen);
    assert_eq!(strands(&orb), 0, "no connection for a collocated call");
    assert!(!Current::in_upcall(), "Current is popped after the call");
    orb.destroy();
}

#[test]
fn in_inout_out_return_and_exceptions_pass_through() {
    let orb = orb();
    let (imp, n, _) = node(&orb);
    // in, inout, out and return.
    let mut depth = 4;
    let (info, link) = n.describe(&["a".into(), "b".into()], &mut depth).unwrap();
    assert_eq!(depth, 5);
    assert_eq!(info.names, vec!["b".to_string(), "a".to_string()]);
    assert_eq!(info.depth, 50);
    assert_eq!(link.name, "a/b");
    let mut s = "x".to_string();
    let mut samples = vec![
        Sample {
            id: 1,
            ..Sample::default()
        },
        Sample {
            id: 2,
            ..Sample::default()
        },
    ];
    let which = n.swap(&mut s, &mut samples).unwrap();
    assert_eq!(s, "x!");
    assert_eq!(samples.iter().map(|x| x.id).collect::<Vec<_>>(), [2, 1]);
    assert_eq!(which, ByLong::Text("2 samples".into()));
    assert_eq!(n.r#move(1, 2, "abc").unwrap(), 6);
    // User exceptions, from operations and attributes.
    let mut depth = -1;
    assert_eq!(
        n.describe(&[], &mut depth).unwrap_err(),
        DescribeError::NotHere(node::NotHere { r#where: 7 })
    );
    assert_eq!(n.nothing().unwrap_err(), NothingError::Other(Other {}));
    n.set_mode(Mode::Running).unwrap();
    assert_eq!(n.get_mode().unwrap(), Mode::Running);
    n.set_mode(Mode::Standby).unwrap();
    assert!(matches!(n.get_mode(), Err(GetModeError::Broken(b)) if b.why == "standby"));
    // A system exception comes back as the servant raised it.
    let mut depth = -2;
    assert_eq!(
        n.describe(&[], &mut depth).unwrap_err(),
        DescribeError::System(SystemException::new(SystemExceptionKind::NoPermission, 42))
    );
    // A oneway runs synchronously on this thread; its error is not reported.
    n.poke(3).unwrap();
    assert_eq!(imp.pokes.load(Ordering::SeqCst), 3);
    assert_eq!(imp.thread(), Some(thread::current().id()));
    assert_eq!(strands(&orb), 0);
    orb.destroy();
}

#[test]
fn stringified_reference_in_the_same_orb_is_collocated() {
    let orb = orb();
    let (imp, n, _) = node(&orb);
    let s = orb.object_to_string(n.as_object()).unwrap();
    let again = orb.string_to_object(&s).unwrap();
    assert!(again.is_collocated());
    let n2 = Node::unchecked_narrow(&again);
    assert_eq!(n2.get_count().unwrap(), 0);
    assert_eq!(imp.thread(), Some(thread::current().id()));
    assert_eq!(strands(&orb), 0);

    // Another ORB in the process reaches it over IIOP.
    let other = Orb::with_config(OrbConfig::default());
    let remote = other.string_to_object(&s).unwrap();
    assert!(!remote.is_collocated());
    n.set_mode(Mode::Running).unwrap();
    assert_eq!(
        Node::unchecked_narrow(&remote).get_mode().unwrap(),
        Mode::Running
    );
    assert_ne!(imp.thread(), Some(thread::current().id()));
    other.destroy();
    orb.destroy();
}

#[test]
fn persistent_references_are_collocated_by_endpoint() {
    let orb = orb();
    let poa = child_poa(
        &orb,
        "durable",
        PolicyList::default()
            .with_lifespan(LifespanPolicy::Persistent)
            .with_id_assignment(IdAssignmentPolicy::UserId),
    );
    let imp = Arc::new(NodeImpl::default());
    let oid = ObjectId::from("node");
    poa.activate_object_with_id(oid.clone(), Arc::new(NodeSkeleton::new(imp.clone())))
        .unwrap();
    let obj = poa.id_to_reference(&oid).unwrap();
    let profile = IiopProfile::from_tagged(&obj.ior().profiles[0]).unwrap();
    let key: String = profile
        .object_key
        .as_bytes()
        .iter()
        .map(|b| format!("%{b:02x}"))
        .collect();
    // The ORB's own endpoint and key format: collocated.
    let url = format!("corbaloc::{}:{}/{key}", profile.host, profile.port);
    let local = orb.string_to_object(&url).unwrap();
    assert!(local.is_collocated(), "{url}");
    Node::unchecked_narrow(&local).poke(4).unwrap();
    assert_eq!(imp.pokes.load(Ordering::SeqCst), 4);
    assert_eq!(imp.thread(), Some(thread::current().id()));
    // The same key at another endpoint may be another process's object: not collocated.
    let elsewhere = format!("corbaloc::{}:{}/{key}", profile.host, profile.port ^ 1);
    assert!(!orb.string_to_object(&elsewhere).unwrap().is_collocated());
    assert_eq!(strands(&orb), 0);
    orb.destroy();
}

#[test]
fn opt_out_takes_the_iiop_path() {
    let orb = orb();
    let (imp, n, _) = node(&orb);
    let remote = Node::unchecked_narrow(&n.as_object().without_collocation());
    assert!(!remote.as_object().is_collocated());
    assert_eq!(remote.get_count().unwrap(), 0);
    assert_ne!(imp.thread(), Some(thread::current().id()));
    assert!(strands(&orb) >= 1, "the opt-out goes over a connection");
    // Same results as the direct path, exceptions included.
    let mut depth = 4;
    assert_eq!(
        remote.describe(&["a".into()], &mut depth).unwrap().1.name,
        "a"
    );
    assert_eq!(depth, 5);
    assert_eq!(remote.nothing().unwrap_err(), NothingError::Other(Other {}));

    // The per-ORB switch: references made afterwards are not collocated.
    orb.set_direct_collocation(false);
    let (_, n2, _) = node(&orb);
    assert!(!n2.as_object().is_collocated());
    let s = orb.object_to_string(n.as_object()).unwrap();
    assert!(!orb.string_to_object(&s).unwrap().is_collocated());
    orb.set_direct_collocation(true);
    assert!(orb.string_to_object(&s).unwrap().is_collocated());
    orb.destroy();
}

#[test]
fn poa_manager_states_apply_to_collocated_calls() {
    let orb = orb();
    let (imp, n, _) = node(&orb);
    let manager = orb.root_poa().the_poa_manager();

    // HOLDING: the call waits until the manager is active again.
    manager.hold_requests(false).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let caller = {
        let (n, done) = (n.clone(), done.clone());
        thread::spawn(move || {
            let r = n.get_count();
            done.store(true, Ordering::SeqCst);
            (r, thread::current().id())
        })
    };
    thread::sleep(Duration::from_millis(200));
    assert!(!done.load(Ordering::SeqCst), "held while HOLDING");
    manager.activate().unwrap();
    let (r, caller_thread) = caller.join().unwrap();
    assert_eq!(r.unwrap(), 0);
    assert_eq!(
        imp.thread(),
        Some(caller_thread),
        "ran directly once released"
    );

    // DISCARDING: TRANSIENT.
    manager.discard_requests(false).unwrap();
    let e = n.get_count().unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::Transient);
    assert_eq!(e.minor, corbina::poa::minor::TRANSIENT_DISCARDING);
    // INACTIVE: OBJ_ADAPTER.
    manager.deactivate(false, true).unwrap();
    let e = n.get_count().unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::ObjAdapter);
    assert_eq!(e.minor, corbina::poa::minor::OBJ_ADAPTER_INACTIVE);
    assert_eq!(strands(&orb), 0);
    orb.destroy();
}

#[test]
fn deactivated_object_raises_object_not_exist() {
    let orb = orb();
    let (_, n, oid) = node(&orb);
    n.get_count().unwrap();
    orb.root_poa().deactivate_object(&oid).unwrap();
    let e = n.get_count().unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::ObjectNotExist);
    // A destroyed POA's objects are gone too.
    let child = child_poa(&orb, "child", PolicyList::default());
    let imp = Arc::new(NodeImpl::default());
    let oid = child
        .activate_object(Arc::new(NodeSkeleton::new(imp)))
        .unwrap();
    let n = Node::unchecked_narrow(&child.id_to_reference(&oid).unwrap());
    n.get_count().unwrap();
    child.destroy(false, true);
    let e = n.get_count().unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::ObjectNotExist);
    assert_eq!(strands(&orb), 0);
    orb.destroy();
}

/// Starts a `choose` call on another thread that blocks in the servant; returns the thread
/// and the sender that lets it finish.
fn blocked_call(imp: &Arc<NodeImpl>, n: &Node) -> (thread::JoinHandle<R>, mpsc::Sender<()>) {
    let (entered_tx, entered_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel();
    *imp.gate.lock().unwrap() = Some((entered_tx, release_rx));
    let n = n.clone();
    let t = thread::spawn(move || n.choose(&[], &[]).map(drop));
    entered_rx.recv().unwrap();
    (t, release_tx)
}

#[test]
fn deactivate_and_destroy_wait_for_a_running_collocated_call() {
    let orb = orb();
    let child = orb
        .root_poa()
        .create_poa("waits", None, PolicyList::default())
        .unwrap();
    child.the_poa_manager().activate().unwrap();
    let imp = Arc::new(NodeImpl::default());
    let oid = child
        .activate_object(Arc::new(NodeSkeleton::new(imp.clone())))
        .unwrap();
    let n = Node::unchecked_narrow(&child.id_to_reference(&oid).unwrap());

    // POAManager::deactivate(wait_for_completion) waits for the call.
    let (call, release) = blocked_call(&imp, &n);
    let returned = Arc::new(AtomicBool::new(false));
    let deactivator = {
        let (m, returned) = (child.the_poa_manager(), returned.clone());
        thread::spawn(move || {
            m.hold_requests(true).unwrap();
            returned.store(true, Ordering::SeqCst);
        })
    };
    thread::sleep(Duration::from_millis(200));
    assert!(
        !returned.load(Ordering::SeqCst),
        "waits for the running call"
    );
    release.send(()).unwrap();
    call.join().unwrap().unwrap();
    deactivator.join().unwrap();
    assert!(returned.load(Ordering::SeqCst));
    child.the_poa_manager().activate().unwrap();

    // POA::destroy(wait_for_completion) too.
    let (call, release) = blocked_call(&imp, &n);
    let returned = Arc::new(AtomicBool::new(false));
    let destroyer = {
        let (p, returned) = (child.clone(), returned.clone());
        thread::spawn(move || {
            p.destroy(false, true);
            returned.store(true, Ordering::SeqCst);
        })
    };
    thread::sleep(Duration::from_millis(200));
    assert!(
        !returned.load(Ordering::SeqCst),
        "waits for the running call"
    );
    release.send(()).unwrap();
    call.join().unwrap().unwrap();
    destroyer.join().unwrap();
    assert_eq!(
        n.get_count().unwrap_err().kind,
        SystemExceptionKind::ObjectNotExist
    );
    orb.destroy();
}

#[test]
fn default_servant_poa_is_called_directly_with_current() {
    let orb = orb();
    let poa = child_poa(
        &orb,
        "defaults",
        PolicyList::default()
            .with_request_processing(RequestProcessingPolicy::UseDefaultServant)
            .with_servant_retention(ServantRetentionPolicy::NonRetain),
    );
    let imp = Arc::new(NodeImpl::default());
    poa.set_servant(Arc::new(NodeSkeleton::new(imp.clone())))
        .unwrap();
    for id in ["one", "two"] {
        let oid = ObjectId::from(id);
        let n = Node::unchecked_narrow(&poa.create_reference_with_id(&oid, Node::REPOSITORY_ID));
        assert!(n.as_object().is_collocated());
        n.get_count().unwrap();
        let seen = imp.seen.lock().unwrap();
        assert_eq!(seen.thread, Some(thread::current().id()));
        assert_eq!(seen.oid.as_ref(), Some(&oid));
        assert_eq!(seen.poa.as_ref(), Some(&poa));
    }
    assert_eq!(strands(&orb), 0);
    orb.destroy();
}

#[test]
fn single_thread_poa_calls_directly() {
    let orb = orb();
    let poa = child_poa(
        &orb,
        "single",
        PolicyList::default().with_thread(ThreadPolicy::SingleThreadModel),
    );
    let imp = Arc::new(NodeImpl::default());
    let oid = poa
        .activate_object(Arc::new(NodeSkeleton::new(imp.clone())))
        .unwrap();
    let n = Node::unchecked_narrow(&poa.id_to_reference(&oid).unwrap());
    n.poke(1).unwrap();
    assert_eq!(n.get_count().unwrap(), 1);
    assert_eq!(imp.thread(), Some(thread::current().id()));
    assert_eq!(strands(&orb), 0);
    orb.destroy();
}

struct Special;

impl ItemServant for Special {
    fn name(&self) -> R<String> {
        Ok(format!("special on {:?}", thread::current().id()))
    }
    fn get_next(&self) -> R<Option<Item>> {
        Ok(None)
    }
    fn set_next(&self, _value: Option<&Item>) -> R {
        Ok(())
    }
}

impl SpecialItemServant for Special {
    fn weight(&self) -> R<i32> {
        Ok(12)
    }
}

#[test]
fn base_interface_proxies_reach_a_derived_servant_directly() {
    let orb = orb();
    let poa = orb.root_poa();
    let oid = poa
        .activate_object(Arc::new(SpecialItemSkeleton::new(Special)))
        .unwrap();
    let obj = poa.id_to_reference(&oid).unwrap();
    let here = format!("special on {:?}", thread::current().id());
    let special = SpecialItem::unchecked_narrow(&obj);
    assert_eq!(special.weight().unwrap(), 12);
    assert_eq!(special.name().unwrap(), here);
    assert_eq!(Item::from(special).name().unwrap(), here);
    assert_eq!(strands(&orb), 0);
    orb.destroy();
}

/// A hand-written servant (no typed interface): collocated calls to it are marshalled, in
/// process.
struct Untyped(BenchSkeleton<Arc<common::StaticBench>>);

impl Servant for Untyped {
    fn primary_interface(&self) -> &'static str {
        self.0.primary_interface()
    }
    fn is_a(&self, repository_id: &str) -> bool {
        self.0.is_a(repository_id)
    }
    fn dispatch(&self, request: &mut ServerRequest<'_, '_>) -> R {
        self.0.dispatch(request)
    }
}

#[test]
fn untyped_servants_fall_back_to_the_marshalled_path() {
    let orb = orb();
    let poa = orb.root_poa();
    let state = Arc::new(common::StaticBench::default());
    let oid = poa
        .activate_object(Arc::new(Untyped(BenchSkeleton::new(state.clone()))))
        .unwrap();
    let obj: ObjectRef = poa.id_to_reference(&oid).unwrap();
    assert!(obj.is_collocated());
    let b = Bench::unchecked_narrow(&obj);
    assert_eq!(b.echo("hi").unwrap(), "hi");
    b.send_octets(&[1, 2, 3]).unwrap();
    assert_eq!(b.stop_timer().unwrap(), 3);
    // Not through a typed servant: marshalled, but in process (no connection).
    assert_eq!(strands(&orb), 0);
    // The CORBA::Object operations take that path too.
    assert!(obj.is_a("IDL:Bench:1.0").unwrap());
    assert!(!obj.non_existent().unwrap());
    assert_eq!(strands(&orb), 0);
    orb.destroy();
}

/// A ServantLocator serving `target` for the id "here" and forwarding "elsewhere" to
/// `forward_to`; counts its pre- and postinvokes.
struct Locator {
    target: Arc<dyn Servant>,
    forward_to: Mutex<Option<ObjectRef>>,
    calls: Mutex<Vec<(String, &'static str)>>,
}

impl ServantLocator for Locator {
    fn preinvoke(
        &self,
        oid: &ObjectId,
        _adapter: &Poa,
        operation: &str,
    ) -> Result<(Arc<dyn Servant>, Cookie), DispatchError> {
        self.calls
            .lock()
            .unwrap()
            .push((operation.to_owned(), "pre"));
        if oid.as_bytes() == b"elsewhere" {
            let reference = self.forward_to.lock().unwrap().clone().unwrap();
            return Err(DispatchError::Forward {
                reference,
                permanent: false,
            });
        }
        Ok((self.target.clone(), Box::new(())))
    }
    fn postinvoke(
        &self,
        _oid: &ObjectId,
        _adapter: &Poa,
        operation: &str,
        _cookie: Cookie,
        _servant: Arc<dyn Servant>,
    ) {
        self.calls
            .lock()
            .unwrap()
            .push((operation.to_owned(), "post"));
    }
}

#[test]
fn servant_locator_objects_are_dispatched_in_process() {
    let orb = orb();
    let poa = child_poa(
        &orb,
        "located",
        PolicyList::default()
            .with_request_processing(RequestProcessingPolicy::UseServantManager)
            .with_servant_retention(ServantRetentionPolicy::NonRetain),
    );
    let imp = Arc::new(NodeImpl::default());
    let locator = Arc::new(Locator {
        target: Arc::new(NodeSkeleton::new(imp.clone())),
        forward_to: Mutex::new(None),
        calls: Mutex::new(Vec::new()),
    });
    poa.set_servant_manager(ServantManager::Locator(locator.clone()))
        .unwrap();
    let n =
        Node::unchecked_narrow(&poa.create_reference_with_id(&"here".into(), Node::REPOSITORY_ID));
    assert!(n.as_object().is_collocated());
    let mut depth = 1;
    assert_eq!(n.describe(&["x".into()], &mut depth).unwrap().1.name, "x");
    assert_eq!(depth, 2);
    assert_eq!(n.nothing().unwrap_err(), NothingError::Other(Other {}));
    assert_eq!(imp.thread(), Some(thread::current().id()));
    assert_eq!(
        *locator.calls.lock().unwrap(),
        [
            ("describe".to_string(), "pre"),
            ("describe".to_string(), "post"),
            ("nothing".to_string(), "pre"),
            ("nothing".to_string(), "post"),
        ]
    );
    // A ForwardRequest is followed, as a client ORB follows LOCATION_FORWARD.
    let (other, target, _) = node(&orb);
    *locator.forward_to.lock().unwrap() = Some(target.as_object().clone());
    let away = Node::unchecked_narrow(
        &poa.create_reference_with_id(&"elsewhere".into(), Node::REPOSITORY_ID),
    );
    away.poke(2).unwrap();
    assert_eq!(other.pokes.load(Ordering::SeqCst), 2);
    assert_eq!(away.get_count().unwrap(), 2);
    assert_eq!(strands(&orb), 0);
    orb.destroy();
}

/// A generated skeleton that counts the requests it gets marshalled (direct calls reach its
/// typed interface instead).
struct Counted {
    skeleton: NodeSkeleton<Arc<NodeImpl>>,
    marshalled: AtomicU32,
}

impl Servant for Counted {
    fn primary_interface(&self) -> &'static str {
        self.skeleton.primary_interface()
    }
    fn is_a(&self, repository_id: &str) -> bool {
        self.skeleton.is_a(repository_id)
    }
    fn dispatch(&self, request: &mut ServerRequest<'_, '_>) -> R {
        self.marshalled.fetch_add(1, Ordering::SeqCst);
        self.skeleton.dispatch(request)
    }
    fn local_interface(&self, repository_id: &str) -> Option<&dyn std::any::Any> {
        self.skeleton.local_interface(repository_id)
    }
}

/// Creates the PERSISTENT POA "revived" on demand, with `servant` active as "node".
struct Revive {
    servant: Arc<dyn Servant>,
    calls: AtomicU32,
}

fn revived_policies() -> PolicyList {
    PolicyList::default()
        .with_lifespan(LifespanPolicy::Persistent)
        .with_id_assignment(IdAssignmentPolicy::UserId)
}

impl AdapterActivator for Revive {
    fn unknown_adapter(&self, parent: &Poa, name: &str) -> bool {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if name != "revived" {
            return false;
        }
        let poa = parent
            .create_poa(name, Some(parent.the_poa_manager()), revived_policies())
            .unwrap();
        poa.activate_object_with_id("node".into(), self.servant.clone())
            .unwrap();
        true
    }
}

#[test]
fn a_poa_an_adapter_activator_creates_serves_collocated_calls_directly() {
    let orb = orb();
    let poa = child_poa(&orb, "revived", revived_policies());
    let n =
        Node::unchecked_narrow(&poa.create_reference_with_id(&"node".into(), Node::REPOSITORY_ID));
    assert!(n.as_object().is_collocated());
    poa.destroy(false, true);
    let imp = Arc::new(NodeImpl::default());
    let counted = Arc::new(Counted {
        skeleton: NodeSkeleton::new(imp.clone()),
        marshalled: AtomicU32::new(0),
    });
    let activator = Arc::new(Revive {
        servant: counted.clone(),
        calls: AtomicU32::new(0),
    });
    orb.root_poa().set_the_activator(Some(activator.clone()));
    n.poke(3).unwrap();
    assert_eq!(imp.pokes.load(Ordering::SeqCst), 3);
    assert_eq!(activator.calls.load(Ordering::SeqCst), 1);
    assert_eq!(imp.thread(), Some(thread::current().id()));
    assert_eq!(
        counted.marshalled.load(Ordering::SeqCst),
        0,
        "a direct call"
    );
    // The CORBA::Object operations are marshalled, through the same POA, in process.
    assert!(!n.as_object().non_existent().unwrap());
    assert_eq!(counted.marshalled.load(Ordering::SeqCst), 1);
    assert_eq!(activator.calls.load(Ordering::SeqCst), 1);
    assert_eq!(strands(&orb), 0);
    orb.destroy();
}
