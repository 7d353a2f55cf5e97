//! End-to-end tests of the POA through real marshalling: references come from a loopback
//! [`ReferenceFactory`] whose invoker encodes the request, dispatches it through
//! [`PoaRegistry::dispatch`] with a [`BufferReplySink`] and decodes the reply.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use corbina::cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter, OMG_VMCID};
use corbina::giop::{IiopProfile, Ior, ObjectKey, Version};
use corbina::object::{DecodeReply, EncodeArgs};
use corbina::poa::{
    AdapterActivator, Cookie, Current, DispatchError, IdAssignmentPolicy, IdUniquenessPolicy,
    ImplicitActivationPolicy, LifespanPolicy, LocateOutcome, ObjectId, Poa, PoaError, PoaManager,
    PoaManagerState, PoaRegistry, PolicyList, ReferenceFactory, RequestProcessingPolicy,
    ServantActivator, ServantLocator, ServantManager, ServantRetentionPolicy, ThreadPolicy,
};
use corbina::servant::{bad_operation, dispatch_object_operation, BufferReplySink};
use corbina::{
    no_user, Invoker, ObjectRef, ReplyBody, ReplyKind, Servant, ServerRequest, SystemException,
    SystemExceptionKind,
};

// ---------------------------------------------------------------------------------------
// Loopback ORB

const CTX: CdrContext = CdrContext::GIOP_1_2;

/// Dispatches through a registry, following LOCATION_FORWARDs like a client ORB would.
struct LoopInvoker {
    registry: Weak<PoaRegistry>,
}

fn key_of(r: &ObjectRef) -> Vec<u8> {
    let p = r
        .ior()
        .profiles
        .first()
        .expect("loopback references have a profile");
    IiopProfile::from_tagged(p).unwrap().object_key.0
}

impl Invoker for LoopInvoker {
    fn invoke<'a>(
        &self,
        object_key: &[u8],
        operation: &str,
        encode: &EncodeArgs<'_, 'a>,
        decode: Option<&mut DecodeReply<'_>>,
    ) -> Result<(), SystemException> {
        let registry = self
            .registry
            .upgrade()
            .ok_or(SystemException::new(SystemExceptionKind::CommFailure, 0))?;
        let mut w = CdrWriter::new(CTX);
        encode(&mut w).map_err(SystemException::from)?;
        let args = w.into_bytes();
        let mut key = object_key.to_vec();
        for _ in 0..5 {
            let mut sink = BufferReplySink {
                context: CTX,
                reply: None,
            };
            let mut req = ServerRequest::new(
                operation,
                CdrReader::new(&args, ByteOrder::NATIVE, CTX),
                decode.is_some(),
                &mut sink,
            );
            match registry.dispatch(&key, &mut req) {
                Ok(()) => {}
                Err(DispatchError::System(e)) => return Err(e),
                Err(DispatchError::Forward { reference, .. }) => {
                    key = key_of(&reference);
                    continue;
                }
            }
            let replied = req.has_replied();
            let Some(decode) = decode else { return Ok(()) };
            assert!(replied, "servant did not reply");
            let (kind, body) = sink.reply.take().unwrap();
            let mut r = CdrReader::new(&body, ByteOrder::NATIVE, CTX);
            return match kind {
                ReplyKind::NoException => decode(ReplyBody::Result(&mut r)),
                ReplyKind::UserException => {
                    let id = r.read_string().map_err(SystemException::from)?;
                    decode(ReplyBody::UserException(&id, &mut r))
                }
            };
        }
        Err(SystemException::new(SystemExceptionKind::Transient, 0))
    }
}

/// The test ORB's reference factory: an IIOP profile carrying the key (so that
/// `reference_to_id` can read it back), and the loopback invoker.
#[derive(Default)]
struct Loopback {
    registry: OnceLock<Weak<PoaRegistry>>,
}

impl ReferenceFactory for Loopback {
    fn create_reference(&self, type_id: &str, object_key: Vec<u8>) -> ObjectRef {
        let profile = IiopProfile {
            version: Version::V1_2,
            host: "loopback".into(),
            port: 0,
            object_key: ObjectKey(object_key.clone()),
            components: vec![],
            byte_order: ByteOrder::NATIVE,
        };
        let ior = Ior {
            type_id: type_id.into(),
            profiles: vec![profile.to_tagged().unwrap()],
            byte_order: ByteOrder::NATIVE,
        };
        let registry = self.registry.get().cloned().unwrap_or_default();
        ObjectRef::new(ior, object_key, Arc::new(LoopInvoker { registry }))
    }
}

fn registry() -> Arc<PoaRegistry> {
    let f = Arc::new(Loopback::default());
    let r = PoaRegistry::new(f.clone());
    f.registry.set(Arc::downgrade(&r)).ok().unwrap();
    r
}

/// A registry with its RootPOA's manager active.
fn active_registry() -> (Arc<PoaRegistry>, Poa) {
    let r = registry();
    let root = r.root_poa();
    root.the_poa_manager().activate().unwrap();
    (r, root)
}

/// A reference to a raw key through `reg`.
fn ref_for_key(reg: &Arc<PoaRegistry>, key: Vec<u8>) -> ObjectRef {
    ObjectRef::new(
        Ior::nil(),
        key,
        Arc::new(LoopInvoker {
            registry: Arc::downgrade(reg),
        }),
    )
}

/// Dispatches `_non_existent` directly, to see the DispatchError itself.
fn raw_dispatch(reg: &PoaRegistry, key: &[u8]) -> Result<(), DispatchError> {
    let mut sink = BufferReplySink {
        context: CTX,
        reply: None,
    };
    let mut req = ServerRequest::new(
        "_non_existent",
        CdrReader::new(&[], ByteOrder::NATIVE, CTX),
        true,
        &mut sink,
    );
    reg.dispatch(key, &mut req)
}

// ---------------------------------------------------------------------------------------
// Test servant

const ECHO_ID: &str = "IDL:Test/Echo:1.0";

/// `echo(long) -> long`, `whoami() -> string` (from PortableServer::Current),
/// `sleep(ulong ms)` (tracking concurrency), `block()` (waits for `release`).
#[derive(Default)]
struct Echo {
    name: &'static str,
    calls: AtomicUsize,
    running: AtomicUsize,
    max_running: AtomicUsize,
    gate: Arc<(Mutex<(bool, bool)>, Condvar)>,
}

impl Echo {
    fn named(name: &'static str) -> Arc<Echo> {
        Arc::new(Echo {
            name,
            ..Echo::default()
        })
    }
    /// Waits until a `block` call has started.
    fn wait_blocked(&self) {
        let (m, c) = &*self.gate;
        let mut g = m.lock().unwrap();
        while !g.0 {
            g = c.wait(g).unwrap();
        }
    }
    fn release(&self) {
        let (m, c) = &*self.gate;
        m.lock().unwrap().1 = true;
        c.notify_all();
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl Servant for Echo {
    fn primary_interface(&self) -> &'static str {
        ECHO_ID
    }
    fn is_a(&self, id: &str) -> bool {
        id == ECHO_ID
    }
    fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        match req.operation() {
            "echo" => {
                let x = req.arguments().read_long()?;
                req.arguments_done()?;
                req.reply(|w| {
                    w.write_long(x);
                    Ok(())
                })
            }
            "whoami" => {
                req.arguments_done()?;
                let poa = Current::get_poa().unwrap();
                let oid = Current::get_object_id().unwrap();
                let reference = Current::get_reference().unwrap();
                let ref_ok = poa.reference_to_id(&reference).unwrap() == oid;
                let servant = Current::get_servant().unwrap();
                let me = Arc::as_ptr(&servant) as *const () == self as *const Echo as *const ();
                let s = format!(
                    "{}|{}|{}|{}|{}",
                    self.name,
                    hex(oid.as_bytes()),
                    poa.the_name(),
                    ref_ok,
                    me
                );
                req.reply(|w| w.write_string(&s))
            }
            "sleep" => {
                let ms = req.arguments().read_ulong()?;
                req.arguments_done()?;
                let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
                self.max_running.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(ms.into()));
                self.running.fetch_sub(1, Ordering::SeqCst);
                req.reply(|_| Ok(()))
            }
            "block" => {
                req.arguments_done()?;
                let (m, c) = &*self.gate;
                let mut g = m.lock().unwrap();
                g.0 = true;
                c.notify_all();
                while !g.1 {
                    g = c.wait(g).unwrap();
                }
                drop(g);
                req.reply(|_| Ok(()))
            }
            _ => {
                if dispatch_object_operation(self, req)? {
                    Ok(())
                } else {
                    Err(bad_operation())
                }
            }
        }
    }
}

fn echo(r: &ObjectRef, x: i32) -> Result<i32, SystemException> {
    r.invoke(
        "echo",
        |w| {
            w.write_long(x);
            Ok(())
        },
        |r| r.read_long(),
        no_user,
    )
}

fn whoami(r: &ObjectRef) -> Result<String, SystemException> {
    r.invoke("whoami", |_| Ok(()), |r| r.read_string(), no_user)
}

fn sleep(r: &ObjectRef, ms: u32) -> Result<(), SystemException> {
    r.invoke(
        "sleep",
        |w| {
            w.write_ulong(ms);
            Ok(())
        },
        |_| Ok(()),
        no_user,
    )
}

fn kind(r: Result<impl std::fmt::Debug, SystemException>) -> SystemExceptionKind {
    r.expect_err("expected a system exception").kind
}

fn user_id() -> PolicyList {
    PolicyList::default().with_id_assignment(IdAssignmentPolicy::UserId)
}

fn as_servant(e: &Arc<Echo>) -> Arc<dyn Servant> {
    e.clone()
}

fn same(a: &Arc<dyn Servant>, b: &Arc<dyn Servant>) -> bool {
    Arc::as_ptr(a) as *const () == Arc::as_ptr(b) as *const ()
}

// ---------------------------------------------------------------------------------------
// RootPOA, activation, ids

#[test]
fn root_poa_has_the_standard_policies_and_activates_implicitly() {
    let (reg, root) = active_registry();
    assert_eq!(root.the_name(), "RootPOA");
    assert!(root.the_parent().is_none());
    assert_eq!(root.policies(), PolicyList::root());
    let s = as_servant(&Echo::named("a"));
    let r = root.servant_to_reference(&s).unwrap();
    assert_eq!(r.type_id(), ECHO_ID);
    assert_eq!(echo(&r, 7).unwrap(), 7);
    let id = root.servant_to_id(&s).unwrap();
    assert_eq!(root.reference_to_id(&r).unwrap(), id);
    // UNIQUE_ID: the same servant keeps its id.
    let r2 = root.servant_to_reference(&s).unwrap();
    assert_eq!(key_of(&r2), key_of(&r));
    assert_eq!(root.active_object_count(), 1);
    assert_eq!(reg.locate(&key_of(&r)), LocateOutcome::Here);
}

#[test]
fn activate_call_deactivate() {
    let (_reg, root) = active_registry();
    let child = root
        .create_poa("child", Some(root.the_poa_manager()), PolicyList::default())
        .unwrap();
    let e = Echo::named("e");
    let oid = child.activate_object(e.clone()).unwrap();
    assert_eq!(oid.as_bytes().len(), 8, "SYSTEM_ID ids are 8-byte counters");
    let r = child.id_to_reference(&oid).unwrap();
    assert_eq!(echo(&r, -5).unwrap(), -5);
    assert!(!r.non_existent().unwrap());
    assert!(r.is_a(ECHO_ID).unwrap());
    child.deactivate_object(&oid).unwrap();
    let err = echo(&r, 1).unwrap_err();
    assert_eq!(err.kind, SystemExceptionKind::ObjectNotExist);
    assert_eq!(
        child.deactivate_object(&oid),
        Err(PoaError::ObjectNotActive)
    );
    assert_eq!(
        child.id_to_reference(&oid).unwrap_err(),
        PoaError::ObjectNotActive
    );
    // A new activation of the same servant gets a new id: ids are never reused.
    let oid2 = child.activate_object(e.clone()).unwrap();
    assert_ne!(oid, oid2);
    // echo and _non_existent reached the servant; _is_a was answered from the IOR.
    assert_eq!(e.calls.load(Ordering::SeqCst), 2);
}

#[test]
fn user_ids_and_activation_errors() {
    let (_reg, root) = active_registry();
    let poa = root
        .create_poa("users", Some(root.the_poa_manager()), user_id())
        .unwrap();
    let a = as_servant(&Echo::named("a"));
    let b = as_servant(&Echo::named("b"));
    poa.activate_object_with_id("alpha".into(), a.clone())
        .unwrap();
    assert_eq!(
        poa.activate_object_with_id("alpha".into(), b.clone()),
        Err(PoaError::ObjectAlreadyActive)
    );
    assert_eq!(
        poa.activate_object_with_id("beta".into(), a.clone()),
        Err(PoaError::ServantAlreadyActive)
    );
    assert_eq!(poa.activate_object(b.clone()), Err(PoaError::WrongPolicy));
    assert_eq!(
        poa.create_reference(ECHO_ID).unwrap_err(),
        PoaError::WrongPolicy
    );
    let r = poa.id_to_reference(&"alpha".into()).unwrap();
    let who = whoami(&r).unwrap();
    assert_eq!(who, format!("a|{}|users|true|true", hex(b"alpha")));
    // A reference made before activation works once the object is active.
    let rb = poa.create_reference_with_id(&"beta".into(), ECHO_ID);
    assert_eq!(kind(echo(&rb, 1)), SystemExceptionKind::ObjectNotExist);
    poa.activate_object_with_id("beta".into(), b.clone())
        .unwrap();
    assert_eq!(echo(&rb, 2).unwrap(), 2);
    assert_eq!(poa.servant_to_id(&b).unwrap(), ObjectId::from("beta"));
    assert!(same(&poa.id_to_servant(&"beta".into()).unwrap(), &b));
    assert!(same(&poa.reference_to_servant(&rb).unwrap(), &b));
    // Not implicit: an inactive servant has no id.
    let c = as_servant(&Echo::named("c"));
    assert_eq!(poa.servant_to_id(&c), Err(PoaError::ServantNotActive));
    assert_eq!(
        poa.servant_to_reference(&c).unwrap_err(),
        PoaError::ServantNotActive
    );
}

#[test]
fn system_ids_are_distinct_counters_and_create_reference_does_not_activate() {
    let (_reg, root) = active_registry();
    let poa = root
        .create_poa("sys", Some(root.the_poa_manager()), PolicyList::default())
        .unwrap();
    let ids: Vec<ObjectId> = (0..100)
        .map(|i| {
            let e: Arc<dyn Servant> = Echo::named(if i % 2 == 0 { "x" } else { "y" });
            poa.activate_object(e).unwrap()
        })
        .collect();
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 100);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "big-endian counters");
    let r = poa.create_reference(ECHO_ID).unwrap();
    assert_eq!(kind(echo(&r, 1)), SystemExceptionKind::ObjectNotExist);
    let id = poa.reference_to_id(&r).unwrap();
    assert!(!ids.contains(&id));
    poa.activate_object_with_id(id, Echo::named("z")).unwrap();
    assert_eq!(echo(&r, 3).unwrap(), 3);
}

#[test]
fn multiple_id_lets_one_servant_incarnate_many_objects() {
    let (_reg, root) = active_registry();
    let poa = root
        .create_poa(
            "multi",
            Some(root.the_poa_manager()),
            user_id().with_id_uniqueness(IdUniquenessPolicy::MultipleId),
        )
        .unwrap();
    let s = as_servant(&Echo::named("m"));
    poa.activate_object_with_id("one".into(), s.clone())
        .unwrap();
    poa.activate_object_with_id("two".into(), s.clone())
        .unwrap();
    let w1 = whoami(&poa.id_to_reference(&"one".into()).unwrap()).unwrap();
    let w2 = whoami(&poa.id_to_reference(&"two".into()).unwrap()).unwrap();
    assert!(w1.contains(&hex(b"one")) && w2.contains(&hex(b"two")));
    // MULTIPLE_ID without IMPLICIT_ACTIVATION: servant_to_id is not allowed.
    assert_eq!(poa.servant_to_id(&s), Err(PoaError::WrongPolicy));

    // MULTIPLE_ID + IMPLICIT_ACTIVATION: every servant_to_reference is a new object.
    let imp = root
        .create_poa(
            "multi-implicit",
            Some(root.the_poa_manager()),
            PolicyList::default()
                .with_id_uniqueness(IdUniquenessPolicy::MultipleId)
                .with_implicit_activation(ImplicitActivationPolicy::ImplicitActivation),
        )
        .unwrap();
    let r1 = imp.servant_to_reference(&s).unwrap();
    let r2 = imp.servant_to_reference(&s).unwrap();
    assert_ne!(key_of(&r1), key_of(&r2));
    assert_eq!(imp.active_object_count(), 2);
    assert_eq!(echo(&r1, 1).unwrap() + echo(&r2, 2).unwrap(), 3);
}

#[test]
fn references_from_another_poa_are_wrong_adapter() {
    let (_reg, root) = active_registry();
    let a = root
        .create_poa("a", Some(root.the_poa_manager()), user_id())
        .unwrap();
    let b = root
        .create_poa("b", Some(root.the_poa_manager()), user_id())
        .unwrap();
    let r = a.create_reference_with_id(&"x".into(), ECHO_ID);
    assert_eq!(a.reference_to_id(&r).unwrap(), ObjectId::from("x"));
    assert_eq!(b.reference_to_id(&r), Err(PoaError::WrongAdapter));
    assert_eq!(
        b.reference_to_servant(&r).err().unwrap(),
        PoaError::WrongAdapter
    );
    assert_eq!(
        a.reference_to_servant(&r).err().unwrap(),
        PoaError::ObjectNotActive
    );
    let nil = ObjectRef::new(
        Ior::nil(),
        vec![],
        Arc::new(LoopInvoker {
            registry: Weak::new(),
        }),
    );
    assert_eq!(a.reference_to_id(&nil), Err(PoaError::WrongAdapter));
}

// ---------------------------------------------------------------------------------------
// Default servant, Current

#[test]
fn non_retain_default_servant_sees_the_object_id() {
    let (_reg, root) = active_registry();
    let poa = root
        .create_poa(
            "ds",
            Some(root.the_poa_manager()),
            user_id()
                .with_servant_retention(ServantRetentionPolicy::NonRetain)
                .with_request_processing(RequestProcessingPolicy::UseDefaultServant),
        )
        .unwrap();
    assert_eq!(poa.get_servant().err(), Some(PoaError::NoServant));
    let ra = poa.create_reference_with_id(&"a".into(), ECHO_ID);
    let err = echo(&ra, 1).unwrap_err();
    assert_eq!(err.kind, SystemExceptionKind::ObjAdapter);
    assert_eq!(err.minor, OMG_VMCID | 3);
    let d = Echo::named("default");
    poa.set_servant(d.clone()).unwrap();
    assert!(same(&poa.get_servant().unwrap(), &as_servant(&d)));
    let rb = poa.create_reference_with_id(&"b".into(), ECHO_ID);
    assert_eq!(
        whoami(&ra).unwrap(),
        format!("default|{}|ds|true|true", hex(b"a"))
    );
    assert_eq!(
        whoami(&rb).unwrap(),
        format!("default|{}|ds|true|true", hex(b"b"))
    );
    assert_eq!(
        poa.activate_object_with_id("c".into(), d.clone()),
        Err(PoaError::WrongPolicy)
    );
    assert_eq!(
        poa.id_to_reference(&"a".into()).unwrap_err(),
        PoaError::WrongPolicy
    );
    assert!(same(
        &poa.id_to_servant(&"zzz".into()).unwrap(),
        &as_servant(&d)
    ));
    assert!(same(
        &poa.reference_to_servant(&ra).unwrap(),
        &as_servant(&d)
    ));
    // Outside an upcall, the default servant has no id.
    assert_eq!(
        poa.servant_to_id(&as_servant(&d)),
        Err(PoaError::ServantNotActive)
    );
    assert_eq!(
        poa.get_servant_manager().unwrap_err(),
        PoaError::WrongPolicy
    );
}

/// A default servant that asks its POA for its own id and reference during the upcall.
struct SelfAware;
impl Servant for SelfAware {
    fn primary_interface(&self) -> &'static str {
        ECHO_ID
    }
    fn is_a(&self, id: &str) -> bool {
        id == ECHO_ID
    }
    fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        req.arguments_done()?;
        let poa = Current::get_poa().unwrap();
        let me = Current::get_servant().unwrap();
        let id = poa.servant_to_id(&me).unwrap();
        let r = poa.servant_to_reference(&me).unwrap();
        let ok = id == Current::get_object_id().unwrap() && poa.reference_to_id(&r).unwrap() == id;
        req.reply(|w| {
            w.write_boolean(ok);
            Ok(())
        })
    }
}

#[test]
fn servant_to_id_inside_a_default_servant_upcall_is_the_current_id() {
    let (_reg, root) = active_registry();
    let poa = root
        .create_poa(
            "self",
            Some(root.the_poa_manager()),
            user_id()
                .with_servant_retention(ServantRetentionPolicy::NonRetain)
                .with_request_processing(RequestProcessingPolicy::UseDefaultServant),
        )
        .unwrap();
    poa.set_servant(Arc::new(SelfAware)).unwrap();
    let r = poa.create_reference_with_id(&"q".into(), ECHO_ID);
    let ok: bool = r
        .invoke("check", |_| Ok(()), |r| r.read_boolean(), no_user)
        .unwrap();
    assert!(ok);
}

#[test]
fn current_outside_an_upcall_is_no_context() {
    assert!(!Current::in_upcall());
    assert_eq!(Current::get_poa().unwrap_err(), PoaError::NoContext);
    assert_eq!(Current::get_object_id().unwrap_err(), PoaError::NoContext);
    assert_eq!(Current::get_reference().unwrap_err(), PoaError::NoContext);
    assert_eq!(Current::get_servant().err(), Some(PoaError::NoContext));
}

// ---------------------------------------------------------------------------------------
// Servant managers

#[derive(Default)]
struct Activator {
    incarnations: AtomicUsize,
    etherealized: Mutex<Vec<(ObjectId, bool, bool)>>,
    servant: OnceLock<Arc<Echo>>,
    forward_to: OnceLock<ObjectRef>,
}

impl ServantActivator for Activator {
    fn incarnate(&self, oid: &ObjectId, _adapter: &Poa) -> Result<Arc<dyn Servant>, DispatchError> {
        if oid.as_bytes() == b"fwd" {
            return Err(DispatchError::Forward {
                reference: self.forward_to.get().unwrap().clone(),
                permanent: true,
            });
        }
        if oid.as_bytes() == b"bad" {
            return Err(SystemException::new(SystemExceptionKind::NoResources, 7).into());
        }
        self.incarnations.fetch_add(1, Ordering::SeqCst);
        Ok(self
            .servant
            .get_or_init(|| Echo::named("incarnated"))
            .clone())
    }
    fn etherealize(
        &self,
        oid: &ObjectId,
        _adapter: &Poa,
        _servant: Arc<dyn Servant>,
        cleanup_in_progress: bool,
        remaining_activations: bool,
    ) {
        self.etherealized.lock().unwrap().push((
            oid.clone(),
            cleanup_in_progress,
            remaining_activations,
        ));
    }
}

fn activator_poa(root: &Poa, name: &str) -> (Poa, Arc<Activator>) {
    let poa = root
        .create_poa(
            name,
            Some(root.the_poa_manager()),
            user_id()
                .with_id_uniqueness(IdUniquenessPolicy::MultipleId)
                .with_request_processing(RequestProcessingPolicy::UseServantManager),
        )
        .unwrap();
    let act = Arc::new(Activator::default());
    poa.set_servant_manager(ServantManager::Activator(act.clone()))
        .unwrap();
    (poa, act)
}

#[test]
fn servant_activator_incarnates_once_and_etherealizes() {
    let (reg, root) = active_registry();
    let (poa, act) = activator_poa(&root, "act");
    assert!(matches!(
        poa.get_servant_manager().unwrap(),
        Some(ServantManager::Activator(_))
    ));
    let r = poa.create_reference_with_id(&"obj".into(), ECHO_ID);
    // LocateRequest activates nothing.
    assert!(matches!(reg.locate(&key_of(&r)), LocateOutcome::Here));
    assert_eq!(act.incarnations.load(Ordering::SeqCst), 0);
    for i in 0..3 {
        assert_eq!(echo(&r, i).unwrap(), i);
    }
    assert_eq!(act.incarnations.load(Ordering::SeqCst), 1);
    assert_eq!(poa.active_object_count(), 1);
    assert_eq!(
        whoami(&r).unwrap(),
        format!("incarnated|{}|act|true|true", hex(b"obj"))
    );
    // Second object, same servant (MULTIPLE_ID).
    let r2 = poa.create_reference_with_id(&"obj2".into(), ECHO_ID);
    echo(&r2, 0).unwrap();
    assert_eq!(act.incarnations.load(Ordering::SeqCst), 2);
    poa.deactivate_object(&"obj".into()).unwrap();
    assert_eq!(
        *act.etherealized.lock().unwrap(),
        vec![(ObjectId::from("obj"), false, true)]
    );
    // The next call incarnates again.
    echo(&r, 1).unwrap();
    assert_eq!(act.incarnations.load(Ordering::SeqCst), 3);
    // An exception from incarnate goes to the client.
    let rb = poa.create_reference_with_id(&"bad".into(), ECHO_ID);
    let e = echo(&rb, 0).unwrap_err();
    assert_eq!((e.kind, e.minor), (SystemExceptionKind::NoResources, 7));
    // destroy(etherealize_objects) etherealizes what is left, with cleanup_in_progress.
    poa.destroy(true, true);
    let eth = act.etherealized.lock().unwrap().clone();
    assert_eq!(eth.len(), 3);
    assert!(eth[1..].iter().all(|(_, cleanup, _)| *cleanup));
    let mut ids: Vec<_> = eth[1..].iter().map(|(o, _, _)| o.clone()).collect();
    ids.sort();
    assert_eq!(ids, vec![ObjectId::from("obj"), ObjectId::from("obj2")]);
    assert_eq!(kind(echo(&r, 0)), SystemExceptionKind::ObjectNotExist);
}

#[test]
fn concurrent_first_calls_incarnate_once() {
    let (_reg, root) = active_registry();
    let (poa, act) = activator_poa(&root, "race");
    let r = poa.create_reference_with_id(&"o".into(), ECHO_ID);
    let barrier = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let (r, barrier) = (r.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                echo(&r, i).unwrap()
            })
        })
        .collect();
    let sum: i32 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(sum, 28);
    assert_eq!(act.incarnations.load(Ordering::SeqCst), 1);
}

#[test]
fn deactivate_etherealizes_after_the_last_call() {
    let (_reg, root) = active_registry();
    let (poa, act) = activator_poa(&root, "slow");
    let r = poa.create_reference_with_id(&"o".into(), ECHO_ID);
    echo(&r, 0).unwrap();
    let servant = act.servant.get().unwrap().clone();
    let r2 = r.clone();
    let t = std::thread::spawn(move || r2.invoke("block", |_| Ok(()), |_| Ok(()), no_user));
    servant.wait_blocked();
    poa.deactivate_object(&"o".into()).unwrap();
    assert!(
        act.etherealized.lock().unwrap().is_empty(),
        "call still running"
    );
    servant.release();
    t.join().unwrap().unwrap();
    assert_eq!(
        *act.etherealized.lock().unwrap(),
        vec![(ObjectId::from("o"), false, false)]
    );
}

#[test]
fn forward_request_becomes_a_location_forward() {
    let (reg, root) = active_registry();
    let (poa, act) = activator_poa(&root, "fwd");
    let target_poa = root
        .create_poa("target", Some(root.the_poa_manager()), user_id())
        .unwrap();
    target_poa
        .activate_object_with_id("t".into(), Echo::named("target"))
        .unwrap();
    let target = target_poa.id_to_reference(&"t".into()).unwrap();
    act.forward_to.set(target.clone()).unwrap();
    let r = poa.create_reference_with_id(&"fwd".into(), ECHO_ID);
    match raw_dispatch(&reg, &key_of(&r)) {
        Err(DispatchError::Forward {
            reference,
            permanent,
        }) => {
            assert!(permanent);
            assert_eq!(key_of(&reference), key_of(&target));
        }
        other => panic!("expected a forward, got {other:?}"),
    }
    // The loopback client follows the forward.
    assert!(whoami(&r).unwrap().starts_with("target|"));
}

struct Locator {
    servant: Arc<Echo>,
    log: Mutex<Vec<String>>,
    next_cookie: AtomicUsize,
}

impl ServantLocator for Locator {
    fn preinvoke(
        &self,
        oid: &ObjectId,
        adapter: &Poa,
        operation: &str,
    ) -> Result<(Arc<dyn Servant>, Cookie), DispatchError> {
        let n = self.next_cookie.fetch_add(1, Ordering::SeqCst);
        self.log.lock().unwrap().push(format!(
            "pre {} {} {operation} {n}",
            adapter.the_name(),
            String::from_utf8_lossy(oid.as_bytes())
        ));
        Ok((self.servant.clone(), Box::new(n)))
    }
    fn postinvoke(
        &self,
        oid: &ObjectId,
        _adapter: &Poa,
        operation: &str,
        cookie: Cookie,
        servant: Arc<dyn Servant>,
    ) {
        let n = *cookie.downcast::<usize>().unwrap();
        assert!(same(&servant, &as_servant(&self.servant)));
        self.log.lock().unwrap().push(format!(
            "post {} {operation} {n}",
            String::from_utf8_lossy(oid.as_bytes())
        ));
    }
}

#[test]
fn servant_locator_brackets_every_call_with_a_cookie() {
    let (reg, root) = active_registry();
    let poa = root
        .create_poa(
            "loc",
            Some(root.the_poa_manager()),
            user_id()
                .with_servant_retention(ServantRetentionPolicy::NonRetain)
                .with_request_processing(RequestProcessingPolicy::UseServantManager),
        )
        .unwrap();
    let r = poa.create_reference_with_id(&"k".into(), ECHO_ID);
    // No servant manager yet: OBJ_ADAPTER.
    let e = echo(&r, 1).unwrap_err();
    assert_eq!(
        (e.kind, e.minor),
        (SystemExceptionKind::ObjAdapter, OMG_VMCID | 4)
    );
    // An activator does not fit a NON_RETAIN POA.
    assert_eq!(
        poa.set_servant_manager(ServantManager::Activator(Arc::new(Activator::default()))),
        Err(PoaError::WrongPolicy)
    );
    let loc = Arc::new(Locator {
        servant: Echo::named("located"),
        log: Mutex::new(vec![]),
        next_cookie: AtomicUsize::new(10),
    });
    poa.set_servant_manager(ServantManager::Locator(loc.clone()))
        .unwrap();
    assert_eq!(echo(&r, 1).unwrap(), 1);
    assert_eq!(
        whoami(&r).unwrap(),
        format!("located|{}|loc|true|true", hex(b"k"))
    );
    assert_eq!(
        *loc.log.lock().unwrap(),
        vec![
            "pre loc k echo 10",
            "post k echo 10",
            "pre loc k whoami 11",
            "post k whoami 11"
        ]
    );
    assert_eq!(poa.active_object_count(), 0);
    assert!(matches!(reg.locate(&key_of(&r)), LocateOutcome::Here));
    assert_eq!(
        loc.log.lock().unwrap().len(),
        4,
        "locate calls no preinvoke"
    );
}

// ---------------------------------------------------------------------------------------
// Adapter activator, persistence

fn persistent_user() -> PolicyList {
    user_id().with_lifespan(LifespanPolicy::Persistent)
}

#[test]
fn persistent_keys_survive_a_restart() {
    let reg1 = registry();
    let root1 = reg1.root_poa();
    root1.the_poa_manager().activate().unwrap();
    let p1 = root1
        .create_poa("P", Some(root1.the_poa_manager()), persistent_user())
        .unwrap();
    let q1 = p1
        .create_poa("Q", Some(root1.the_poa_manager()), persistent_user())
        .unwrap();
    p1.activate_object_with_id("x".into(), Echo::named("first"))
        .unwrap();
    q1.activate_object_with_id("y".into(), Echo::named("first-q"))
        .unwrap();
    let kx = key_of(&p1.id_to_reference(&"x".into()).unwrap());
    let ky = key_of(&q1.id_to_reference(&"y".into()).unwrap());
    assert_eq!(kx, b"Cb\x11P\xff\xfex".to_vec(), "documented key format");
    reg1.shutdown(false);
    drop(reg1);

    // "Restart": a new registry with the same POAs and ids.
    let (reg2, root2) = active_registry();
    let p2 = root2
        .create_poa("P", Some(root2.the_poa_manager()), persistent_user())
        .unwrap();
    let q2 = p2
        .create_poa("Q", Some(root2.the_poa_manager()), persistent_user())
        .unwrap();
    p2.activate_object_with_id("x".into(), Echo::named("second"))
        .unwrap();
    q2.activate_object_with_id("y".into(), Echo::named("second-q"))
        .unwrap();
    let old_x = ref_for_key(&reg2, kx.clone());
    assert!(whoami(&old_x).unwrap().starts_with("second|"));
    assert!(whoami(&ref_for_key(&reg2, ky))
        .unwrap()
        .starts_with("second-q|"));
    assert_eq!(key_of(&p2.id_to_reference(&"x".into()).unwrap()), kx);
    // Destroy and re-create in the same process: the key works again too.
    p2.destroy(false, true);
    assert_eq!(kind(echo(&old_x, 1)), SystemExceptionKind::ObjectNotExist);
    let p3 = root2
        .create_poa("P", Some(root2.the_poa_manager()), persistent_user())
        .unwrap();
    p3.activate_object_with_id("x".into(), Echo::named("third"))
        .unwrap();
    assert!(whoami(&old_x).unwrap().starts_with("third|"));
}

#[test]
fn transient_keys_die_with_their_registry_and_poa() {
    let (reg1, root1) = active_registry();
    let t1 = root1
        .create_poa("T", Some(root1.the_poa_manager()), user_id())
        .unwrap();
    t1.activate_object_with_id("x".into(), Echo::named("one"))
        .unwrap();
    let k = key_of(&t1.id_to_reference(&"x".into()).unwrap());

    let (reg2, root2) = active_registry();
    let t2 = root2
        .create_poa("T", Some(root2.the_poa_manager()), user_id())
        .unwrap();
    t2.activate_object_with_id("x".into(), Echo::named("two"))
        .unwrap();
    let stale = ref_for_key(&reg2, k.clone());
    let e = echo(&stale, 1).unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::ObjectNotExist);
    assert!(matches!(reg2.locate(&k), LocateOutcome::Unknown));

    // Destroyed and re-created under the same name (same slab slot): the old key is dead.
    let here = ref_for_key(&reg1, k.clone());
    assert_eq!(echo(&here, 4).unwrap(), 4);
    t1.destroy(false, true);
    let t1b = root1
        .create_poa("T", Some(root1.the_poa_manager()), user_id())
        .unwrap();
    t1b.activate_object_with_id("x".into(), Echo::named("again"))
        .unwrap();
    assert_eq!(kind(echo(&here, 4)), SystemExceptionKind::ObjectNotExist);
    assert_ne!(key_of(&t1b.id_to_reference(&"x".into()).unwrap()), k);
}

#[test]
fn garbage_keys_are_object_not_exist() {
    let (reg, root) = active_registry();
    root.activate_object(Echo::named("a")).unwrap();
    let mut keys: Vec<Vec<u8>> = vec![
        vec![],
        b"C".to_vec(),
        b"Cb".to_vec(),
        b"Cb\x10".to_vec(),
        b"Cb\x11".to_vec(),
        b"Cb\x11nope\xff\xfe".to_vec(),
        b"Cb\x11\xc3\xff\xfe".to_vec(),
        b"Cb\x99xxxxxxxxxxxxxxxxxxxxxxx".to_vec(),
        vec![0xff; 40],
    ];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for len in 0..200usize {
        let mut k = if len % 2 == 0 {
            b"Cb\x10".to_vec()
        } else {
            b"Cb\x11".to_vec()
        };
        for _ in 0..len % 40 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            k.push(x as u8);
        }
        keys.push(k);
    }
    for k in keys {
        match raw_dispatch(&reg, &k) {
            Err(DispatchError::System(e)) => {
                assert_eq!(e.kind, SystemExceptionKind::ObjectNotExist, "key {k:?}")
            }
            other => panic!("key {k:?}: {other:?}"),
        }
        assert!(matches!(reg.locate(&k), LocateOutcome::Unknown));
    }
}

/// Creates POA `name` (persistent, user ids) on demand and activates object "x" in it.
#[derive(Default)]
struct MakePoa {
    calls: AtomicUsize,
}

impl AdapterActivator for MakePoa {
    fn unknown_adapter(&self, parent: &Poa, name: &str) -> bool {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if name != "P" {
            return false;
        }
        let p = parent
            .create_poa(name, Some(parent.the_poa_manager()), persistent_user())
            .unwrap();
        p.activate_object_with_id("x".into(), Echo::named("on-demand"))
            .unwrap();
        true
    }
}

#[test]
fn adapter_activator_creates_poas_on_demand() {
    // A persistent key from an earlier process...
    let reg1 = registry();
    let root1 = reg1.root_poa();
    let p1 = root1
        .create_poa("P", Some(root1.the_poa_manager()), persistent_user())
        .unwrap();
    let key = p1.object_key(&"x".into());

    // ...reaches a process where P does not exist yet.
    let (reg2, root2) = active_registry();
    let act = Arc::new(MakePoa::default());
    root2.set_the_activator(Some(act.clone()));
    assert!(root2.the_activator().is_some());
    assert!(
        matches!(reg2.locate(&key), LocateOutcome::Unknown),
        "locate activates nothing"
    );
    assert_eq!(act.calls.load(Ordering::SeqCst), 0);
    let r = ref_for_key(&reg2, key.clone());
    assert!(whoami(&r).unwrap().starts_with("on-demand|"));
    assert!(whoami(&r).unwrap().starts_with("on-demand|"));
    assert_eq!(act.calls.load(Ordering::SeqCst), 1);
    assert_eq!(root2.find_poa("P", false).unwrap().the_name(), "P");
    // find_POA with activate_it, for a name the activator refuses.
    assert_eq!(
        root2.find_poa("Q", true).unwrap_err(),
        PoaError::AdapterNonExistent
    );
    assert_eq!(act.calls.load(Ordering::SeqCst), 2);
    // A key under a refused POA is OBJECT_NOT_EXIST.
    let mut kq = b"Cb\x11Q\xff\xfe".to_vec();
    kq.push(b'x');
    assert_eq!(
        kind(echo(&ref_for_key(&reg2, kq), 1)),
        SystemExceptionKind::ObjectNotExist
    );
}

// ---------------------------------------------------------------------------------------
// POA hierarchy and policies

#[test]
fn poa_tree_operations_and_invalid_policies() {
    let (_reg, root) = active_registry();
    let a = root.create_poa("a", None, PolicyList::default()).unwrap();
    assert_eq!(
        a.the_poa_manager().get_state(),
        PoaManagerState::Holding,
        "a new manager starts holding"
    );
    assert_ne!(a.the_poa_manager(), root.the_poa_manager());
    assert_eq!(
        root.create_poa("a", None, PolicyList::default())
            .unwrap_err(),
        PoaError::AdapterAlreadyExists
    );
    let b = a
        .create_poa("b", Some(root.the_poa_manager()), PolicyList::default())
        .unwrap();
    assert_eq!(b.the_parent().unwrap(), a);
    assert_eq!(a.the_parent().unwrap(), root);
    assert_eq!(a.the_children(), vec![b.clone()]);
    assert_eq!(root.find_poa("a", false).unwrap(), a);
    assert_eq!(
        root.find_poa("zz", true).unwrap_err(),
        PoaError::AdapterNonExistent
    );
    let bad = PolicyList::default().with_servant_retention(ServantRetentionPolicy::NonRetain);
    assert_eq!(
        root.create_poa("bad", None, bad).unwrap_err(),
        PoaError::InvalidPolicy(6)
    );
    let bad = PolicyList::default()
        .with_implicit_activation(ImplicitActivationPolicy::ImplicitActivation)
        .with_id_assignment(IdAssignmentPolicy::UserId);
    assert_eq!(
        root.create_poa("bad", None, bad).unwrap_err(),
        PoaError::InvalidPolicy(4)
    );
    assert!(root.find_poa("bad", false).is_err());
    // Destroying a destroys b; the names are free again.
    let rb = b.create_reference(ECHO_ID).unwrap();
    a.destroy(true, true);
    assert!(a.is_destroyed() && b.is_destroyed());
    assert!(root.the_children().is_empty());
    assert_eq!(kind(echo(&rb, 1)), SystemExceptionKind::ObjectNotExist);
    assert_eq!(
        a.create_poa("c", None, PolicyList::default()).unwrap_err(),
        PoaError::AdapterNonExistent
    );
    root.create_poa("a", None, PolicyList::default()).unwrap();
}

#[test]
fn single_thread_model_serialises_calls() {
    fn max_concurrency(thread: ThreadPolicy, name: &str) -> (usize, Duration) {
        let (_reg, root) = active_registry();
        let poa = root
            .create_poa(
                name,
                Some(root.the_poa_manager()),
                PolicyList::default().with_thread(thread),
            )
            .unwrap();
        let e = Echo::named("st");
        let a = poa
            .id_to_reference(&poa.activate_object(e.clone()).unwrap())
            .unwrap();
        let b = poa
            .id_to_reference(&poa.activate_object(Echo::named("other")).unwrap())
            .unwrap();
        // Two concurrent calls on one object (its servant records the concurrency it
        // sees) and one on another object of the same POA.
        let barrier = Arc::new(Barrier::new(3));
        let start = Instant::now();
        let threads: Vec<_> = [a.clone(), a, b]
            .into_iter()
            .map(|r| {
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    sleep(&r, 150).unwrap();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        (e.max_running.load(Ordering::SeqCst), start.elapsed())
    }
    let (st, elapsed) = max_concurrency(ThreadPolicy::SingleThreadModel, "st");
    assert_eq!(st, 1);
    // The call on the other object was serialised too: three 150 ms calls in a row.
    assert!(elapsed >= Duration::from_millis(450), "{elapsed:?}");
    assert_eq!(max_concurrency(ThreadPolicy::OrbCtrlModel, "mt").0, 2);
}

// ---------------------------------------------------------------------------------------
// POAManager

fn poa_with_own_manager(name: &str) -> (Arc<PoaRegistry>, Poa, PoaManager, ObjectRef) {
    let (reg, root) = active_registry();
    let mgr = PoaManager::new();
    let poa = root
        .create_poa(name, Some(mgr.clone()), PolicyList::default())
        .unwrap();
    let oid = poa.activate_object(Echo::named("m")).unwrap();
    let r = poa.id_to_reference(&oid).unwrap();
    (reg, poa, mgr, r)
}

#[test]
fn holding_blocks_until_activate() {
    let (_reg, _poa, mgr, r) = poa_with_own_manager("hold");
    assert_eq!(mgr.get_state(), PoaManagerState::Holding);
    let (tx, rx) = std::sync::mpsc::channel();
    let r2 = r.clone();
    let t = std::thread::spawn(move || tx.send(echo(&r2, 9)).unwrap());
    assert!(rx.recv_timeout(Duration::from_millis(200)).is_err(), "held");
    mgr.activate().unwrap();
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(10)).unwrap().unwrap(),
        9
    );
    t.join().unwrap();
}

#[test]
fn holding_past_the_maximum_wait_is_transient() {
    let (reg, _poa, _mgr, r) = poa_with_own_manager("hold-timeout");
    reg.set_max_hold_wait(Duration::from_millis(50));
    assert_eq!(reg.max_hold_wait(), Duration::from_millis(50));
    let start = Instant::now();
    let e = echo(&r, 1).unwrap_err();
    assert_eq!(
        (e.kind, e.minor),
        (SystemExceptionKind::Transient, OMG_VMCID | 1)
    );
    assert!(start.elapsed() >= Duration::from_millis(50));
}

#[test]
fn discarding_and_inactive_managers() {
    let (_reg, poa, mgr, r) = poa_with_own_manager("states");
    // A held call is released with TRANSIENT when the manager starts discarding.
    let r2 = r.clone();
    let t = std::thread::spawn(move || echo(&r2, 1));
    std::thread::sleep(Duration::from_millis(50));
    mgr.discard_requests(true).unwrap();
    let e = t.join().unwrap().unwrap_err();
    assert_eq!(
        (e.kind, e.minor),
        (SystemExceptionKind::Transient, OMG_VMCID | 1)
    );
    let e = echo(&r, 1).unwrap_err();
    assert_eq!(
        (e.kind, e.minor),
        (SystemExceptionKind::Transient, OMG_VMCID | 1)
    );
    mgr.activate().unwrap();
    assert_eq!(echo(&r, 2).unwrap(), 2);
    mgr.hold_requests(true).unwrap();
    assert_eq!(mgr.get_state(), PoaManagerState::Holding);
    mgr.deactivate(false, true).unwrap();
    assert_eq!(mgr.get_state(), PoaManagerState::Inactive);
    let e = echo(&r, 1).unwrap_err();
    assert_eq!(
        (e.kind, e.minor),
        (SystemExceptionKind::ObjAdapter, OMG_VMCID | 1)
    );
    assert_eq!(mgr.activate(), Err(PoaError::AdapterInactive));
    assert_eq!(mgr.hold_requests(false), Err(PoaError::AdapterInactive));
    assert_eq!(mgr.discard_requests(false), Err(PoaError::AdapterInactive));
    assert_eq!(mgr.deactivate(false, false), Err(PoaError::AdapterInactive));
    assert_eq!(poa.active_object_count(), 1);
}

#[test]
fn deactivating_a_manager_can_etherealize() {
    let (_reg, root) = active_registry();
    let mgr = PoaManager::new();
    mgr.activate().unwrap();
    let poa = root
        .create_poa(
            "eth",
            Some(mgr.clone()),
            user_id().with_request_processing(RequestProcessingPolicy::UseServantManager),
        )
        .unwrap();
    let act = Arc::new(Activator::default());
    poa.set_servant_manager(ServantManager::Activator(act.clone()))
        .unwrap();
    echo(&poa.create_reference_with_id(&"a".into(), ECHO_ID), 1).unwrap();
    mgr.deactivate(true, true).unwrap();
    assert_eq!(
        *act.etherealized.lock().unwrap(),
        vec![(ObjectId::from("a"), true, false)]
    );
}

#[test]
fn hold_requests_waits_for_running_calls() {
    let (_reg, root) = active_registry();
    let e = Echo::named("blocker");
    let r = root.servant_to_reference(&as_servant(&e)).unwrap();
    let t = std::thread::spawn(move || r.invoke("block", |_| Ok(()), |_| Ok(()), no_user));
    e.wait_blocked();
    let (tx, rx) = std::sync::mpsc::channel();
    let mgr = root.the_poa_manager();
    let h = std::thread::spawn(move || {
        mgr.hold_requests(true).unwrap();
        tx.send(()).unwrap();
    });
    assert!(
        rx.recv_timeout(Duration::from_millis(150)).is_err(),
        "waits for the call"
    );
    e.release();
    rx.recv_timeout(Duration::from_secs(10)).unwrap();
    h.join().unwrap();
    t.join().unwrap().unwrap();
}

// ---------------------------------------------------------------------------------------
// Registry entry points

#[test]
fn locate_answers_for_active_and_unknown_objects() {
    let (reg, root) = active_registry();
    let e = as_servant(&Echo::named("l"));
    let r = root.servant_to_reference(&e).unwrap();
    let k = key_of(&r);
    assert!(matches!(reg.locate(&k), LocateOutcome::Here));
    let missing = root.create_reference(ECHO_ID).unwrap();
    assert!(matches!(
        reg.locate(&key_of(&missing)),
        LocateOutcome::Unknown
    ));
    // A held manager delays requests, not the answer to where the object is.
    root.the_poa_manager().hold_requests(false).unwrap();
    assert!(matches!(reg.locate(&k), LocateOutcome::Here));
}

#[test]
fn shutdown_destroys_everything_and_etherealizes() {
    let (reg, root) = active_registry();
    let (poa, act) = activator_poa(&root, "sd");
    let r = poa.create_reference_with_id(&"z".into(), ECHO_ID);
    echo(&r, 1).unwrap();
    let rr = root
        .servant_to_reference(&as_servant(&Echo::named("r")))
        .unwrap();
    reg.shutdown(true);
    assert!(root.is_destroyed() && poa.is_destroyed());
    assert_eq!(act.etherealized.lock().unwrap().len(), 1);
    assert_eq!(kind(echo(&r, 1)), SystemExceptionKind::ObjectNotExist);
    assert_eq!(kind(echo(&rr, 1)), SystemExceptionKind::ObjectNotExist);
}

// ---------------------------------------------------------------------------------------
// Scale

/// A small servant with `echo`, so that a million of them fit comfortably.
struct Tiny(u32);
impl Servant for Tiny {
    fn primary_interface(&self) -> &'static str {
        ECHO_ID
    }
    fn is_a(&self, id: &str) -> bool {
        id == ECHO_ID
    }
    fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        let x = req.arguments().read_long()?;
        req.arguments_done()?;
        let me = self.0 as i32;
        req.reply(|w| {
            w.write_long(x + me);
            Ok(())
        })
    }
}

/// Activates `n` objects (each its own servant: UNIQUE_ID, so the reverse map holds `n`
/// entries too), calls the first and the last, and compares call latency with a POA of one
/// object.
fn scale(n: u32) {
    let (_reg, root) = active_registry();
    let poa = root
        .create_poa("scale", Some(root.the_poa_manager()), PolicyList::default())
        .unwrap();
    let start = Instant::now();
    let mut first = None;
    let mut last = None;
    for i in 0..n {
        let oid = poa.activate_object(Arc::new(Tiny(i))).unwrap();
        if i == 0 {
            first = Some(oid);
        } else if i == n - 1 {
            last = Some(oid);
        }
    }
    let activation = start.elapsed();
    assert_eq!(poa.active_object_count(), n as usize);
    let rf = poa.id_to_reference(first.as_ref().unwrap()).unwrap();
    let rl = poa.id_to_reference(last.as_ref().unwrap()).unwrap();
    assert_eq!(echo(&rf, 1).unwrap(), 1);
    assert_eq!(echo(&rl, 1).unwrap(), n as i32);

    let small = root
        .create_poa("small", Some(root.the_poa_manager()), PolicyList::default())
        .unwrap();
    let rs = small
        .id_to_reference(&small.activate_object(Arc::new(Tiny(0))).unwrap())
        .unwrap();
    let time = |r: &ObjectRef| {
        let t = Instant::now();
        for i in 0..5000 {
            echo(r, i).unwrap();
        }
        t.elapsed()
    };
    let (t_small, t_big) = (time(&rs), time(&rl));
    println!(
        "{n} objects activated in {activation:?}; 5000 calls: POA of 1 object {t_small:?}, \
         POA of {n} objects {t_big:?} (ratio {:.2})",
        t_big.as_secs_f64() / t_small.as_secs_f64()
    );
    poa.destroy(false, true);
}

#[test]
fn scale_200_000_objects() {
    scale(200_000);
}

#[test]
#[ignore = "slow in debug builds (about 8 s); run with --ignored or --release"]
fn scale_1_000_000_objects() {
    scale(1_000_000);
}
