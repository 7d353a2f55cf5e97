//! The POA itself: its operations (`PortableServer::POA`) and the per-POA half of request
//! dispatch.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, Weak};
use std::time::Duration;

use super::aom::{servant_addr, ActiveEntry, ActiveObjectMap};
use super::current;
use super::manager::{lock, CallCounter, CallTicket, PoaManager};
use super::policy::{PolicyList, RequestProcessingPolicy};
use super::registry::PoaRegistry;
use super::servant_manager::{AdapterActivator, ServantManager};
use super::{minor, DispatchError, LocateOutcome, ObjectId, PoaError, ReferenceFactory};
use crate::{ObjectRef, Servant, ServerRequest, SystemException, SystemExceptionKind};

/// A POA handle (`PortableServer::POA`): cheap to clone; clones are the same POA.
#[derive(Clone)]
pub struct Poa {
    pub(crate) inner: Arc<PoaInner>,
}

pub(crate) struct PoaInner {
    name: String,
    /// Names from the RootPOA's child down to this POA (empty for the RootPOA).
    path: Vec<String>,
    parent: Option<Weak<PoaInner>>,
    policies: PolicyList,
    pub(crate) manager: PoaManager,
    pub(crate) registry: Weak<PoaRegistry>,
    factory: Arc<dyn ReferenceFactory>,
    /// Slab index and generation in the registry.
    pub(crate) slot: (u32, u32),
    /// Every key of this POA starts with these bytes; the object id follows.
    pub(crate) key_prefix: Box<[u8]>,
    children: Mutex<HashMap<String, Poa>>,
    /// Serialises `unknown_adapter` calls on this POA.
    adapter_activation: Mutex<()>,
    activator: RwLock<Option<Arc<dyn AdapterActivator>>>,
    servant_manager: RwLock<Option<ServantManager>>,
    default_servant: RwLock<Option<Arc<dyn Servant>>>,
    aom: ActiveObjectMap,
    next_id: AtomicU64,
    /// Serialises `incarnate` so that an object is incarnated once.
    incarnation: Mutex<()>,
    /// Held during upcalls under SINGLE_THREAD_MODEL.
    single_thread: Mutex<()>,
    pub(crate) destroyed: AtomicBool,
    /// `destroy(etherealize_objects)`, for objects whose last call finishes afterwards.
    etherealize_on_destroy: AtomicBool,
    calls: CallCounter,
}

/// What the registry supplies to make a POA.
pub(crate) struct NewPoa {
    pub(crate) name: String,
    pub(crate) path: Vec<String>,
    pub(crate) parent: Option<Weak<PoaInner>>,
    pub(crate) policies: PolicyList,
    pub(crate) manager: PoaManager,
    pub(crate) registry: Weak<PoaRegistry>,
    pub(crate) factory: Arc<dyn ReferenceFactory>,
    pub(crate) slot: (u32, u32),
    pub(crate) key_prefix: Box<[u8]>,
}

fn read<T: ?Sized>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}
fn write<T: ?Sized>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

fn system(kind: SystemExceptionKind, minor: u32) -> DispatchError {
    DispatchError::System(SystemException::new(kind, minor))
}

impl PoaInner {
    pub(crate) fn new(n: NewPoa) -> PoaInner {
        // PERSISTENT SYSTEM_ID ids start at the current time in microseconds, so that a
        // restarted server does not hand out an id an earlier process used.
        let first_id = if n.policies.persistent() {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_micros() as u64)
                .unwrap_or(1)
        } else {
            1
        };
        PoaInner {
            name: n.name,
            path: n.path,
            parent: n.parent,
            policies: n.policies,
            manager: n.manager,
            registry: n.registry,
            factory: n.factory,
            slot: n.slot,
            key_prefix: n.key_prefix,
            children: Mutex::new(HashMap::new()),
            adapter_activation: Mutex::new(()),
            activator: RwLock::new(None),
            servant_manager: RwLock::new(None),
            default_servant: RwLock::new(None),
            aom: ActiveObjectMap::default(),
            next_id: AtomicU64::new(first_id),
            incarnation: Mutex::new(()),
            single_thread: Mutex::new(()),
            destroyed: AtomicBool::new(false),
            etherealize_on_destroy: AtomicBool::new(false),
            calls: CallCounter::default(),
        }
    }

    pub(crate) fn path(&self) -> &[String] {
        &self.path
    }

    /// Deactivates every active object, etherealizing through the ServantActivator (now, or
    /// when their last call ends).
    pub(crate) fn deactivate_all(self: &Arc<Self>, etherealize: bool) {
        self.etherealize_on_destroy
            .store(etherealize, Ordering::SeqCst);
        let removed = self.aom.drain();
        if !etherealize {
            return;
        }
        let poa = Poa {
            inner: Arc::clone(self),
        };
        for r in removed {
            if r.etherealize_now {
                poa.etherealize(&r.oid(), &r.entry, true);
            }
        }
    }
}

/// A call on an active object map entry; ending it may etherealize a deactivated object.
struct AomCall<'p> {
    poa: &'p Poa,
    oid: &'p [u8],
    entry: Arc<ActiveEntry>,
}

impl Drop for AomCall<'_> {
    fn drop(&mut self) {
        if self.entry.end_call() {
            let inner = &self.poa.inner;
            let destroyed = inner.destroyed.load(Ordering::SeqCst);
            if !destroyed || inner.etherealize_on_destroy.load(Ordering::SeqCst) {
                self.poa
                    .etherealize(&ObjectId(self.oid.to_vec()), &self.entry, destroyed);
            }
        }
    }
}

/// What a request whose reply is deferred (AMH, [`crate::ReplyHandle`]) keeps counted past
/// its upcall, until the reply is sent: the manager's and the POA's in-flight counts
/// (deactivation and `destroy` wait for them) and the object's (it is etherealized after).
pub(crate) struct DeferredCall {
    poa: Poa,
    oid: Vec<u8>,
    entry: Option<Arc<ActiveEntry>>,
}

impl Poa {
    /// Counts the upcall running now on `oid` once more, for a reply sent after it returns.
    pub(crate) fn defer_call(&self, oid: &[u8]) -> DeferredCall {
        let inner = &*self.inner;
        inner.manager.hold_call();
        inner.calls.hold();
        let entry = if inner.policies.retain() {
            inner.aom.begin_call(oid)
        } else {
            None
        };
        DeferredCall {
            poa: self.clone(),
            oid: oid.to_vec(),
            entry,
        }
    }
}

impl Drop for DeferredCall {
    fn drop(&mut self) {
        if let Some(entry) = self.entry.take() {
            // As `AomCall`: the last call of a deactivated object etherealizes it.
            drop(AomCall {
                poa: &self.poa,
                oid: &self.oid,
                entry,
            });
        }
        self.poa.inner.calls.release();
        self.poa.inner.manager.release_call();
    }
}

impl fmt::Debug for Poa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Poa")
            .field("name", &self.inner.name)
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Poa {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}
impl Eq for Poa {}

impl Poa {
    // ---- Attributes ----

    /// `the_name`.
    pub fn the_name(&self) -> &str {
        &self.inner.name
    }

    /// `the_parent` (`None` for the RootPOA).
    pub fn the_parent(&self) -> Option<Poa> {
        let p = self.inner.parent.as_ref()?.upgrade()?;
        Some(Poa { inner: p })
    }

    /// `the_children`.
    pub fn the_children(&self) -> Vec<Poa> {
        lock(&self.inner.children).values().cloned().collect()
    }

    /// `the_POAManager`.
    pub fn the_poa_manager(&self) -> PoaManager {
        self.inner.manager.clone()
    }

    /// The POA's policies.
    pub fn policies(&self) -> PolicyList {
        self.inner.policies
    }

    /// `the_activator`.
    pub fn the_activator(&self) -> Option<Arc<dyn AdapterActivator>> {
        read(&self.inner.activator).clone()
    }

    /// Sets `the_activator` (`None` removes it).
    pub fn set_the_activator(&self, activator: Option<Arc<dyn AdapterActivator>>) {
        *write(&self.inner.activator) = activator;
    }

    /// Whether `destroy` was called.
    pub fn is_destroyed(&self) -> bool {
        self.inner.destroyed.load(Ordering::SeqCst)
    }

    // ---- POA creation and destruction ----

    /// `create_POA`: a child POA. Without `manager` the child gets a new POAManager, in the
    /// holding state.
    pub fn create_poa(
        &self,
        name: &str,
        manager: Option<PoaManager>,
        policies: PolicyList,
    ) -> Result<Poa, PoaError> {
        policies.validate().map_err(PoaError::InvalidPolicy)?;
        let registry = self
            .inner
            .registry
            .upgrade()
            .ok_or(PoaError::AdapterNonExistent)?;
        let mut children = lock(&self.inner.children);
        if self.is_destroyed() {
            return Err(PoaError::AdapterNonExistent);
        }
        if children.contains_key(name) {
            return Err(PoaError::AdapterAlreadyExists);
        }
        let manager = manager.unwrap_or_default();
        let poa = registry.register(self, name, manager.clone(), policies);
        manager.register(&poa.inner);
        children.insert(name.to_owned(), poa.clone());
        Ok(poa)
    }

    /// `find_POA`: the child `name`; with `activate_it`, asks the AdapterActivator to create
    /// it if it does not exist.
    pub fn find_poa(&self, name: &str, activate_it: bool) -> Result<Poa, PoaError> {
        if let Some(c) = lock(&self.inner.children).get(name) {
            return Ok(c.clone());
        }
        if activate_it {
            if let Some(act) = self.the_activator() {
                let _serial = lock(&self.inner.adapter_activation);
                if let Some(c) = lock(&self.inner.children).get(name) {
                    return Ok(c.clone());
                }
                if act.unknown_adapter(self, name) {
                    if let Some(c) = lock(&self.inner.children).get(name) {
                        return Ok(c.clone());
                    }
                }
            }
        }
        Err(PoaError::AdapterNonExistent)
    }

    /// `destroy`: destroys the children then this POA. Its references stop working (a
    /// PERSISTENT POA's work again once a POA of the same path is created). With
    /// `etherealize_objects`, active objects are etherealized through the ServantActivator;
    /// with `wait_for_completion`, returns after the running calls finish (except for calls
    /// made from an upcall of this POA, which cannot wait for themselves).
    pub fn destroy(&self, etherealize_objects: bool, wait_for_completion: bool) {
        let inner = &self.inner;
        // Hold the children lock while marking, so that create_poa cannot add a child after.
        let children: Vec<Poa> = {
            let mut c = lock(&inner.children);
            if inner.destroyed.swap(true, Ordering::SeqCst) {
                return;
            }
            c.drain().map(|(_, v)| v).collect()
        };
        for c in children {
            c.destroy(etherealize_objects, wait_for_completion);
        }
        if let Some(reg) = inner.registry.upgrade() {
            reg.unregister(inner);
        }
        if let Some(parent) = self.the_parent() {
            let mut siblings = lock(&parent.inner.children);
            if siblings.get(&inner.name).is_some_and(|p| p == self) {
                siblings.remove(&inner.name);
            }
        }
        // Requests held by the manager wake up and see the POA is gone.
        inner.manager.wake();
        if wait_for_completion && !current::in_upcall_of(inner) {
            inner.calls.wait_idle();
        }
        inner.deactivate_all(etherealize_objects);
        *write(&inner.servant_manager) = None;
        *write(&inner.default_servant) = None;
        *write(&inner.activator) = None;
    }

    // ---- Servant managers and default servant ----

    /// `get_servant_manager` (WrongPolicy unless USE_SERVANT_MANAGER).
    pub fn get_servant_manager(&self) -> Result<Option<ServantManager>, PoaError> {
        self.require(self.rp() == RequestProcessingPolicy::UseServantManager)?;
        Ok(read(&self.inner.servant_manager).clone())
    }

    /// `set_servant_manager`: a ServantActivator for RETAIN, a ServantLocator for NON_RETAIN
    /// (the other kind, or a POA without USE_SERVANT_MANAGER, is WrongPolicy).
    pub fn set_servant_manager(&self, manager: ServantManager) -> Result<(), PoaError> {
        self.require(self.rp() == RequestProcessingPolicy::UseServantManager)?;
        let fits = match manager {
            ServantManager::Activator(_) => self.inner.policies.retain(),
            ServantManager::Locator(_) => !self.inner.policies.retain(),
        };
        self.require(fits)?;
        *write(&self.inner.servant_manager) = Some(manager);
        Ok(())
    }

    /// `get_servant`: the default servant (WrongPolicy unless USE_DEFAULT_SERVANT,
    /// NoServant if none is set).
    pub fn get_servant(&self) -> Result<Arc<dyn Servant>, PoaError> {
        self.require(self.rp() == RequestProcessingPolicy::UseDefaultServant)?;
        read(&self.inner.default_servant)
            .clone()
            .ok_or(PoaError::NoServant)
    }

    /// `set_servant`: sets the default servant (WrongPolicy unless USE_DEFAULT_SERVANT).
    pub fn set_servant(&self, servant: Arc<dyn Servant>) -> Result<(), PoaError> {
        self.require(self.rp() == RequestProcessingPolicy::UseDefaultServant)?;
        *write(&self.inner.default_servant) = Some(servant);
        Ok(())
    }

    // ---- Activation ----

    /// `activate_object`: activates `servant` under a new system id (needs SYSTEM_ID and
    /// RETAIN).
    pub fn activate_object(&self, servant: Arc<dyn Servant>) -> Result<ObjectId, PoaError> {
        let p = &self.inner.policies;
        self.require(p.system_id() && p.retain())?;
        if p.unique_id() && self.inner.aom.id_of(&servant).is_some() {
            return Err(PoaError::ServantAlreadyActive);
        }
        let oid = self.new_id();
        self.inner.aom.insert(oid.clone(), servant, p.unique_id())?;
        Ok(oid)
    }

    /// `activate_object_with_id` (needs RETAIN).
    pub fn activate_object_with_id(
        &self,
        oid: ObjectId,
        servant: Arc<dyn Servant>,
    ) -> Result<(), PoaError> {
        let p = &self.inner.policies;
        self.require(p.retain())?;
        self.inner.aom.insert(oid, servant, p.unique_id())
    }

    /// `deactivate_object`: removes `oid` from the active object map; its servant is
    /// etherealized (with a ServantActivator) once its running calls have finished.
    pub fn deactivate_object(&self, oid: &ObjectId) -> Result<(), PoaError> {
        self.require(self.inner.policies.retain())?;
        let r = self.inner.aom.remove(&oid.0)?;
        if r.etherealize_now {
            self.etherealize(&r.oid(), &r.entry, false);
        }
        Ok(())
    }

    /// Number of objects in the active object map.
    pub fn active_object_count(&self) -> usize {
        self.inner.aom.len()
    }

    // ---- References and ids ----

    /// `create_reference`: a reference to a new system id, without activating (needs
    /// SYSTEM_ID).
    pub fn create_reference(&self, intf: &str) -> Result<ObjectRef, PoaError> {
        self.require(self.inner.policies.system_id())?;
        let oid = self.new_id();
        Ok(self.make_reference(intf, &oid.0))
    }

    /// `create_reference_with_id`: a reference to `oid`, without activating.
    pub fn create_reference_with_id(&self, oid: &ObjectId, intf: &str) -> ObjectRef {
        self.make_reference(intf, &oid.0)
    }

    /// `servant_to_id`.
    pub fn servant_to_id(&self, servant: &Arc<dyn Servant>) -> Result<ObjectId, PoaError> {
        let p = &self.inner.policies;
        let default = self.rp() == RequestProcessingPolicy::UseDefaultServant;
        self.require(default || (p.retain() && (p.unique_id() || p.implicit())))?;
        if let Some(oid) = self.retained_or_implicit_id(servant)? {
            return Ok(oid);
        }
        if default {
            let is_default = read(&self.inner.default_servant)
                .as_ref()
                .is_some_and(|d| servant_addr(d) == servant_addr(servant));
            if is_default {
                if let Some(oid) = current::current_id_for(&self.inner, servant) {
                    return Ok(oid);
                }
            }
        }
        Err(PoaError::ServantNotActive)
    }

    /// `servant_to_reference`.
    pub fn servant_to_reference(&self, servant: &Arc<dyn Servant>) -> Result<ObjectRef, PoaError> {
        let p = &self.inner.policies;
        let allowed = p.retain() && (p.unique_id() || p.implicit());
        if allowed {
            if let Some(oid) = self.retained_or_implicit_id(servant)? {
                return Ok(self.make_reference(servant.primary_interface(), &oid.0));
            }
        }
        if let Some(oid) = current::current_id_for(&self.inner, servant) {
            return Ok(self.make_reference(servant.primary_interface(), &oid.0));
        }
        self.require(allowed)?;
        Err(PoaError::ServantNotActive)
    }

    /// `reference_to_servant` (needs RETAIN or USE_DEFAULT_SERVANT).
    pub fn reference_to_servant(
        &self,
        reference: &ObjectRef,
    ) -> Result<Arc<dyn Servant>, PoaError> {
        self.require(self.inner.policies.retain() || self.uses_default_servant())?;
        let oid = self.reference_to_id(reference)?;
        self.id_to_servant(&oid)
    }

    /// `reference_to_id`: the id in a reference this POA made (WrongAdapter otherwise).
    pub fn reference_to_id(&self, reference: &ObjectRef) -> Result<ObjectId, PoaError> {
        let key = reference_key(reference).ok_or(PoaError::WrongAdapter)?;
        key.strip_prefix(&*self.inner.key_prefix)
            .map(ObjectId::from)
            .ok_or(PoaError::WrongAdapter)
    }

    /// `id_to_servant` (needs RETAIN or USE_DEFAULT_SERVANT).
    pub fn id_to_servant(&self, oid: &ObjectId) -> Result<Arc<dyn Servant>, PoaError> {
        let retain = self.inner.policies.retain();
        self.require(retain || self.uses_default_servant())?;
        if retain {
            if let Some(s) = self.inner.aom.servant(&oid.0) {
                return Ok(s);
            }
        }
        if self.uses_default_servant() {
            if let Some(s) = read(&self.inner.default_servant).clone() {
                return Ok(s);
            }
        }
        Err(PoaError::ObjectNotActive)
    }

    /// `id_to_reference` (needs RETAIN).
    pub fn id_to_reference(&self, oid: &ObjectId) -> Result<ObjectRef, PoaError> {
        self.require(self.inner.policies.retain())?;
        let s = self
            .inner
            .aom
            .servant(&oid.0)
            .ok_or(PoaError::ObjectNotActive)?;
        Ok(self.make_reference(s.primary_interface(), &oid.0))
    }

    /// The object key of `oid` in this POA.
    pub fn object_key(&self, oid: &ObjectId) -> Vec<u8> {
        let mut k = Vec::with_capacity(self.inner.key_prefix.len() + oid.0.len());
        k.extend_from_slice(&self.inner.key_prefix);
        k.extend_from_slice(&oid.0);
        k
    }

    // ---- Helpers ----

    fn rp(&self) -> RequestProcessingPolicy {
        self.inner.policies.request_processing
    }

    fn uses_default_servant(&self) -> bool {
        self.rp() == RequestProcessingPolicy::UseDefaultServant
    }

    fn require(&self, ok: bool) -> Result<(), PoaError> {
        if ok {
            Ok(())
        } else {
            Err(PoaError::WrongPolicy)
        }
    }

    fn new_id(&self) -> ObjectId {
        let n = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        ObjectId(n.to_be_bytes().to_vec())
    }

    /// Steps 1 and 2 of servant_to_id/servant_to_reference: the id under RETAIN + UNIQUE_ID,
    /// or a new implicit activation.
    fn retained_or_implicit_id(
        &self,
        servant: &Arc<dyn Servant>,
    ) -> Result<Option<ObjectId>, PoaError> {
        let p = &self.inner.policies;
        if !p.retain() {
            return Ok(None);
        }
        if p.unique_id() {
            if let Some(oid) = self.inner.aom.id_of(servant) {
                return Ok(Some(oid));
            }
        }
        if p.implicit() {
            let oid = self.new_id();
            return match self
                .inner
                .aom
                .insert(oid.clone(), Arc::clone(servant), p.unique_id())
            {
                Ok(()) => Ok(Some(oid)),
                // Activated concurrently by another thread: use that id.
                Err(PoaError::ServantAlreadyActive) => Ok(self.inner.aom.id_of(servant)),
                Err(e) => Err(e),
            };
        }
        Ok(None)
    }

    pub(crate) fn make_reference(&self, type_id: &str, oid: &[u8]) -> ObjectRef {
        let mut k = Vec::with_capacity(self.inner.key_prefix.len() + oid.len());
        k.extend_from_slice(&self.inner.key_prefix);
        k.extend_from_slice(oid);
        self.inner.factory.create_reference(type_id, k)
    }

    fn etherealize(&self, oid: &ObjectId, entry: &ActiveEntry, cleanup: bool) {
        let mgr = read(&self.inner.servant_manager).clone();
        if let Some(ServantManager::Activator(a)) = mgr {
            a.etherealize(
                oid,
                self,
                Arc::clone(entry.servant()),
                cleanup,
                entry.remaining(),
            );
        }
    }

    // ---- Dispatch ----

    /// Dispatches a remote (or marshalled in-process) request for `oid`.
    #[inline]
    pub(crate) fn dispatch(
        &self,
        oid: &[u8],
        request: &mut ServerRequest<'_, '_>,
        max_wait: Duration,
    ) -> Result<(), DispatchError> {
        self.process(oid, max_wait, request)
    }

    /// A collocated call on `oid` without marshalling: the same path as
    /// [`dispatch`](Self::dispatch), but `upcall` gets the servant's typed interface
    /// `repository_id` ([`Servant::local_interface`]) and runs the operation on the
    /// caller's thread.
    ///
    /// `Ok(false)`: nothing ran, take the marshalled path. That is the case for a servant
    /// without a typed interface (DSI, hand-written) and for an object a servant manager
    /// would have to incarnate or locate (see [`DirectCall`]).
    pub(crate) fn collocated_call(
        &self,
        oid: &[u8],
        repository_id: &str,
        max_wait: Duration,
        upcall: &mut dyn FnMut(&dyn Any) -> bool,
    ) -> Result<bool, DispatchError> {
        let mut call = DirectCall {
            repository_id,
            upcall,
        };
        self.process(oid, max_wait, &mut call)
    }

    /// The request-processing path remote requests and collocated calls share: admission
    /// ([`enter_call`](Self::enter_call)), the servant lookup (active object map, default
    /// servant, servant manager), `Current` during the upcall, and the in-flight count of
    /// the object. `invocation` is how arguments and results travel.
    #[inline]
    fn process<'o, I: Invocation<'o> + ?Sized>(
        &self,
        oid: &[u8],
        max_wait: Duration,
        invocation: &mut I,
    ) -> Result<I::Output, DispatchError> {
        let inner = &*self.inner;
        // HOLDING blocks a collocated caller as it blocks a remote client's request.
        let _scope = self.enter_call(max_wait)?;
        if inner.policies.retain() {
            if let Some(entry) = inner.aom.begin_call(oid) {
                let call = AomCall {
                    poa: self,
                    oid,
                    entry,
                };
                return self.upcall(oid, call.entry.servant(), invocation);
            }
        }
        match inner.policies.request_processing {
            RequestProcessingPolicy::UseActiveObjectMapOnly => Err(system(
                SystemExceptionKind::ObjectNotExist,
                minor::OBJECT_NOT_EXIST_NO_OBJECT,
            )),
            RequestProcessingPolicy::UseDefaultServant => {
                let servant = read(&inner.default_servant).clone().ok_or_else(|| {
                    system(
                        SystemExceptionKind::ObjAdapter,
                        minor::OBJ_ADAPTER_NO_DEFAULT_SERVANT,
                    )
                })?;
                self.upcall(oid, &servant, invocation)
            }
            RequestProcessingPolicy::UseServantManager => {
                let op = match invocation.servant_manager_operation() {
                    Ok(op) => op,
                    Err(declined) => return Ok(declined),
                };
                let mgr = read(&inner.servant_manager).clone();
                match mgr {
                    Some(ServantManager::Activator(a)) if inner.policies.retain() => {
                        let call = self.incarnate(oid, &*a)?;
                        self.upcall(oid, call.entry.servant(), invocation)
                    }
                    Some(ServantManager::Locator(l)) if !inner.policies.retain() => {
                        let id = ObjectId(oid.to_vec());
                        let (servant, cookie) = l.preinvoke(&id, self, op)?;
                        let r = self.upcall(oid, &servant, invocation);
                        l.postinvoke(&id, self, op, cookie, servant);
                        r
                    }
                    _ => Err(system(
                        SystemExceptionKind::ObjAdapter,
                        minor::OBJ_ADAPTER_NO_SERVANT_MANAGER,
                    )),
                }
            }
        }
    }

    /// Finds or incarnates `oid` through the ServantActivator, once per activation.
    fn incarnate<'p>(
        &'p self,
        oid: &'p [u8],
        activator: &dyn super::ServantActivator,
    ) -> Result<AomCall<'p>, DispatchError> {
        let inner = &*self.inner;
        let _serial = lock(&inner.incarnation);
        let entry = match inner.aom.begin_call(oid) {
            Some(e) => e,
            None => {
                let id = ObjectId(oid.to_vec());
                let servant = activator.incarnate(&id, self)?;
                inner
                    .aom
                    .insert(id, servant, inner.policies.unique_id())
                    .map_err(|_| {
                        system(
                            SystemExceptionKind::ObjAdapter,
                            minor::OBJ_ADAPTER_INCARNATE_POLICY,
                        )
                    })?;
                inner
                    .aom
                    .begin_call(oid)
                    .ok_or_else(|| DispatchError::System(crate::Error::IncarnationLost.into()))?
            }
        };
        Ok(AomCall {
            poa: self,
            oid,
            entry,
        })
    }

    #[inline]
    fn upcall<'o, I: Invocation<'o> + ?Sized>(
        &self,
        oid: &[u8],
        servant: &Arc<dyn Servant>,
        invocation: &mut I,
    ) -> Result<I::Output, DispatchError> {
        let _current = current::enter(self, oid, servant);
        invocation.upcall(servant).map_err(DispatchError::System)
    }

    /// The LocateRequest answer for `oid`; activates nothing.
    pub(crate) fn locate(&self, oid: &[u8]) -> LocateOutcome {
        let inner = &*self.inner;
        if self.is_destroyed() {
            return LocateOutcome::Unknown;
        }
        if inner.policies.retain() && inner.aom.contains(oid) {
            return LocateOutcome::Here;
        }
        let here = match inner.policies.request_processing {
            RequestProcessingPolicy::UseActiveObjectMapOnly => false,
            RequestProcessingPolicy::UseDefaultServant => read(&inner.default_servant).is_some(),
            RequestProcessingPolicy::UseServantManager => read(&inner.servant_manager).is_some(),
        };
        if here {
            LocateOutcome::Here
        } else {
            LocateOutcome::Unknown
        }
    }

    /// Admits a request (remote or collocated) to this POA: through the manager's gate
    /// (HOLDING waits up to `max_wait`), counted in flight (destroy and deactivation wait
    /// for it), and serialised under SINGLE_THREAD_MODEL. OBJECT_NOT_EXIST once destroyed.
    fn enter_call(&self, max_wait: Duration) -> Result<CallScope<'_>, SystemException> {
        let inner = &*self.inner;
        let gone = || inner.destroyed.load(Ordering::SeqCst);
        let gate = inner.manager.enter(max_wait, gone)?;
        let call = inner.calls.begin();
        if gone() {
            return Err(SystemException::new(
                SystemExceptionKind::ObjectNotExist,
                minor::OBJECT_NOT_EXIST_NO_ADAPTER,
            ));
        }
        let serial = if inner.policies.single_thread() && !current::in_upcall_of(&self.inner) {
            Some(lock(&inner.single_thread))
        } else {
            None
        };
        Ok(CallScope {
            _serial: serial,
            _call: call,
            _gate: gate,
        })
    }
}

/// The object key of a reference: from its first IIOP profile.
// TODO: use `ObjectRef::object_key()` once object.rs has it (requested from the ORB core).
fn reference_key(r: &ObjectRef) -> Option<Vec<u8>> {
    r.ior()
        .profiles
        .iter()
        .filter_map(|p| p.iiop())
        .find_map(|p| p.ok())
        .map(|p| p.object_key.0)
}

/// What an admitted request holds until it ends; released in field order: the
/// SINGLE_THREAD_MODEL lock, then the POA's in-flight count, then the manager's.
struct CallScope<'p> {
    _serial: Option<MutexGuard<'p, ()>>,
    _call: CallTicket<'p>,
    _gate: CallTicket<'p>,
}

/// How a request's arguments and results travel between caller and servant: all that a
/// remote request and a direct collocated call do not share (see [`Poa::process`]).
trait Invocation<'o> {
    /// What the upcall gives back.
    type Output;

    /// The operation's name when servant managers may serve this call (a ServantLocator is
    /// told it); otherwise the output that sends the call down another path.
    fn servant_manager_operation(&self) -> Result<&'o str, Self::Output>;

    /// Runs the operation on `servant` (with `Current` set).
    fn upcall(&mut self, servant: &Arc<dyn Servant>) -> Result<Self::Output, SystemException>;
}

/// A marshalled request: the servant reads the arguments and writes the reply.
impl<'b> Invocation<'b> for ServerRequest<'b, '_> {
    type Output = ();

    fn servant_manager_operation(&self) -> Result<&'b str, ()> {
        Ok(self.operation())
    }

    fn upcall(&mut self, servant: &Arc<dyn Servant>) -> Result<(), SystemException> {
        servant.dispatch(self)
    }
}

/// A direct collocated call: the caller's closure gets the servant's typed interface.
/// Output `false`: nothing ran, the caller takes the marshalled path. Servant managers are
/// left to that path: one call must not incarnate or `preinvoke` twice when the servant
/// they return has no typed interface or they raise ForwardRequest.
struct DirectCall<'x> {
    repository_id: &'x str,
    upcall: &'x mut dyn FnMut(&dyn Any) -> bool,
}

impl Invocation<'static> for DirectCall<'_> {
    type Output = bool;

    fn servant_manager_operation(&self) -> Result<&'static str, bool> {
        Err(false)
    }

    fn upcall(&mut self, servant: &Arc<dyn Servant>) -> Result<bool, SystemException> {
        Ok(match servant.local_interface(self.repository_id) {
            Some(iface) => (self.upcall)(iface),
            None => false,
        })
    }
}
