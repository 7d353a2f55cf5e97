//! The naming contexts: one default servant for every context of the PERSISTENT POA, which
//! learns from `PortableServer::Current` which context (object id = context id, 8 bytes
//! big-endian) a request is for and reads or changes the store.
//!
//! Names are resolved component by component inside one store transaction while the
//! contexts are local; a context bound from elsewhere (another naming service) gets the rest
//! of the name forwarded through its proxy, as the specification allows.

use std::sync::{Arc, Weak};
use std::time::Duration;

use corbina::giop::Ior;
use corbina::object::{DecodeReply, EncodeArgs, Invoker};
use corbina::poa::{Current, ObjectId, Poa};
use corbina::{ObjectRef, Orb, Servant, ServerRequest, SystemException, SystemExceptionKind};

use crate::cos_naming::naming_context::{
    AlreadyBound, BindContextError, BindError, BindNewContextError, DestroyError, InvalidName,
    NotEmpty, NotFound, NotFoundReason, RebindContextError, RebindError, ResolveError, UnbindError,
};
use crate::cos_naming::naming_context_ext::{
    InvalidAddress, ResolveStrError, StringName, ToNameError, ToStringError, ToUrlError, URLString,
};
use crate::cos_naming::{
    Binding, BindingIterator, BindingList, BindingType, Name, NameComponent, NamingContext,
    NamingContextExt, NamingContextExtServant, NamingContextExtSkeleton, NamingContextServant,
};
use crate::iterator::Iterators;
use crate::leases_idl::{leases, BadName, LeaseId, LeasesServant, LeasesSkeleton, UnknownLease};
use crate::name::{self, NameError};
use crate::store::{Bound, Store, StoreError, View, WriteError, ROOT};

/// What the contexts share: the store, the POA, the iterators.
pub(crate) struct Shared {
    pub(crate) store: Store,
    pub(crate) orb: Orb,
    pub(crate) poa: Poa,
    pub(crate) iterators: Arc<Iterators>,
    /// The address written into this service's IORs (to recognise our own contexts).
    pub(crate) endpoint: (String, u16),
    /// The other replicas' addresses: their contexts are ours too.
    pub(crate) replicas: Vec<(String, u16)>,
    /// The object key of the root context under its published name (`NameService`).
    pub(crate) root_key: Vec<u8>,
}

/// A system exception with its minor code (`corbina::error::minor`).
use corbina::error::minor::{
    BAD_PARAM_NIL_CONTEXT, INTERNAL_NAMING, MARSHAL_NAMING_REFERENCE, NO_PERMISSION_DESTROY_ROOT,
    OBJECT_NOT_EXIST_NAMING_CONTEXT, OBJECT_NOT_EXIST_NAMING_SERVICE, PERSIST_STORE_BAD_REFERENCE,
};

/// A system exception with its minor code (`corbina::error::minor`).
fn sys(kind: SystemExceptionKind, minor: u32) -> SystemException {
    SystemException::new(kind, minor)
}

fn oid(ctx: u64) -> ObjectId {
    ObjectId(ctx.to_be_bytes().to_vec())
}

impl Shared {
    /// A reference to local context `ctx`.
    pub(crate) fn context_ref(&self, ctx: u64) -> ObjectRef {
        self.poa
            .create_reference_with_id(&oid(ctx), NamingContextExt::REPOSITORY_ID)
    }

    /// The id of `obj` if it is one of our contexts (same address, our key).
    fn local_id(&self, obj: &ObjectRef) -> Option<u64> {
        let p = obj.ior().iiop_profiles().ok()?.into_iter().next()?;
        let loopback = matches!(p.host.as_str(), "localhost" | "127.0.0.1" | "::1");
        let ours = |(h, port): &(String, u16)| *port == p.port && (*h == p.host || loopback);
        if !ours(&self.endpoint) && !self.replicas.iter().any(ours) {
            return None;
        }
        let key = p.object_key.as_bytes();
        if key == self.root_key.as_slice() {
            return Some(ROOT);
        }
        let prefix = self.poa.object_key(&ObjectId(Vec::new()));
        let id = key.strip_prefix(prefix.as_slice())?;
        Some(u64::from_be_bytes(id.try_into().ok()?))
    }

    /// A reference from a stored IOR (`None` for nil).
    fn object(&self, ior: &[u8]) -> Result<Option<ObjectRef>, SystemException> {
        let ior = Ior::from_encapsulation(ior).map_err(|_| {
            sys(
                SystemExceptionKind::PersistStore,
                PERSIST_STORE_BAD_REFERENCE,
            )
        })?;
        if ior.is_nil() {
            return Ok(None);
        }
        Ok(Some(match self.orb.object_from_ior(ior.clone()) {
            Ok(o) => o,
            // An IOR we cannot call (no IIOP profile) is still handed back unchanged.
            Err(e) => ObjectRef::new(ior, Vec::new(), Arc::new(Unusable(e))),
        }))
    }
}

/// The invoker of references the service only passes on.
struct Unusable(SystemException);

impl Invoker for Unusable {
    fn invoke<'a>(
        &self,
        _: &[u8],
        _: &str,
        _: &EncodeArgs<'_, 'a>,
        _: Option<&mut DecodeReply<'_>>,
    ) -> Result<(), SystemException> {
        Err(self.0.clone())
    }
}

fn encapsulate(obj: Option<&ObjectRef>) -> Result<Vec<u8>, SystemException> {
    let ior = obj.map_or_else(Ior::nil, |o| o.ior().clone());
    ior.to_encapsulation()
        .map_err(|_| sys(SystemExceptionKind::Marshal, MARSHAL_NAMING_REFERENCE))
}

/// Every way a naming operation can fail, before it is narrowed to the operation's own
/// error type.
enum Fail {
    NotFound(NotFoundReason, Name),
    InvalidName,
    AlreadyBound,
    NotEmpty,
    System(SystemException),
    /// Not a failure: the name continues in a context served elsewhere.
    Remote(NamingContext, Name),
    /// A leased bind's lease has ended.
    UnknownLease,
}

impl From<SystemException> for Fail {
    fn from(e: SystemException) -> Self {
        Fail::System(e)
    }
}

impl From<crate::store::StoreError> for Fail {
    fn from(e: crate::store::StoreError) -> Self {
        match e {
            crate::store::StoreError::UnknownLease(_) => Fail::UnknownLease,
            e => Fail::System(e.into()),
        }
    }
}

impl From<WriteError<Fail>> for Fail {
    fn from(e: WriteError<Fail>) -> Self {
        match e {
            WriteError::Op(f) => f,
            WriteError::Store(s) => s.into(),
        }
    }
}

/// Narrows [`Fail`] to an operation's error type.
trait FromFail: Sized {
    fn from_fail(f: Fail) -> Self;
}

macro_rules! from_fail {
    ($t:ty, already_bound: $ab:expr, not_empty: $ne:expr) => {
        impl FromFail for $t {
            fn from_fail(f: Fail) -> Self {
                match f {
                    Fail::NotFound(why, rest_of_name) => NotFound { why, rest_of_name }.into(),
                    Fail::InvalidName => InvalidName {}.into(),
                    Fail::AlreadyBound => $ab,
                    Fail::NotEmpty => $ne,
                    Fail::System(e) => e.into(),
                    // Forwarding is handled before narrowing; leases only come with leased binds.
                    Fail::Remote(..) | Fail::UnknownLease => {
                        sys(SystemExceptionKind::Internal, INTERNAL_NAMING).into()
                    }
                }
            }
        }
    };
}

fn internal<T: From<SystemException>>() -> T {
    sys(SystemExceptionKind::Internal, INTERNAL_NAMING).into()
}

from_fail!(BindError, already_bound: AlreadyBound {}.into(), not_empty: internal());
from_fail!(BindContextError, already_bound: AlreadyBound {}.into(), not_empty: internal());
from_fail!(BindNewContextError, already_bound: AlreadyBound {}.into(), not_empty: internal());
from_fail!(RebindError, already_bound: internal(), not_empty: internal());
from_fail!(RebindContextError, already_bound: internal(), not_empty: internal());
from_fail!(ResolveError, already_bound: internal(), not_empty: internal());
from_fail!(UnbindError, already_bound: internal(), not_empty: internal());
from_fail!(ResolveStrError, already_bound: internal(), not_empty: internal());

/// Walks all but the last component of `n` from `ctx`: the local context holding the last
/// component, and that component ([`Fail::Remote`] if the walk leaves this service).
fn walk<'n>(
    shared: &Shared,
    view: &(impl View + ?Sized),
    mut ctx: u64,
    n: &'n [NameComponent],
) -> Result<(u64, &'n NameComponent), Fail> {
    let (last, path) = n.split_last().ok_or(Fail::InvalidName)?;
    for (i, c) in path.iter().enumerate() {
        let missing = || Fail::NotFound(NotFoundReason::MissingNode, n[i..].to_vec());
        let b = view.get(ctx, c)?.ok_or_else(missing)?;
        if b.binding_type != BindingType::Ncontext {
            return Err(Fail::NotFound(NotFoundReason::NotContext, n[i..].to_vec()));
        }
        match b.local {
            Some(id) if view.context_exists(id)? => ctx = id,
            Some(_) => return Err(missing()),
            None => {
                let obj = shared.object(&b.ior)?.ok_or_else(missing)?;
                return Err(Fail::Remote(
                    NamingContext::unchecked_narrow(&obj),
                    n[i + 1..].to_vec(),
                ));
            }
        }
    }
    Ok((ctx, last))
}

/// The context a request is for, from the object id `PortableServer::Current` reports.
fn current_ctx() -> Result<u64, SystemException> {
    let id = Current::get_object_id()
        .map_err(|_| sys(SystemExceptionKind::Internal, INTERNAL_NAMING))?;
    <[u8; 8]>::try_from(id.as_bytes())
        .map(u64::from_be_bytes)
        .map_err(|_| {
            sys(
                SystemExceptionKind::ObjectNotExist,
                OBJECT_NOT_EXIST_NAMING_CONTEXT,
            )
        })
}

/// The operations of every context.
pub(crate) struct ContextImpl {
    shared: Weak<Shared>,
}

/// How a binding operation treats an existing binding.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Bind,
    Rebind,
}

/// The service behind a servant, unless it is gone.
fn upgrade(shared: &Weak<Shared>) -> Result<Arc<Shared>, SystemException> {
    shared.upgrade().ok_or_else(|| {
        sys(
            SystemExceptionKind::ObjectNotExist,
            OBJECT_NOT_EXIST_NAMING_SERVICE,
        )
    })
}

impl ContextImpl {
    fn shared(&self) -> Result<Arc<Shared>, SystemException> {
        upgrade(&self.shared)
    }

    /// bind / rebind / bind_context / rebind_context in one durable transaction.
    /// `Ok(None)` when done here; `Ok(Some(..))` when the rest of the name belongs to a
    /// remote context.
    fn store_binding(
        &self,
        n: &[NameComponent],
        obj: Option<&ObjectRef>,
        binding_type: BindingType,
        mode: Mode,
    ) -> Result<Option<(NamingContext, Name)>, Fail> {
        let shared = self.shared()?;
        store_binding(&shared, current_ctx()?, n, obj, binding_type, mode, None)
    }
}

/// bind / rebind / bind_context / rebind_context (`lease`: under a lease) in context `ctx`,
/// in one durable transaction. `Ok(None)` when done here; `Ok(Some(..))` when the rest of
/// the name belongs to a remote context.
fn store_binding(
    shared: &Shared,
    ctx: u64,
    n: &[NameComponent],
    obj: Option<&ObjectRef>,
    binding_type: BindingType,
    mode: Mode,
    lease: Option<u64>,
) -> Result<Option<(NamingContext, Name)>, Fail> {
    let ior = encapsulate(obj)?;
    let local = match binding_type {
        BindingType::Ncontext => obj.and_then(|o| shared.local_id(o)),
        BindingType::Nobject => None,
    };
    let r = shared.store.write(|w| {
        if !w.context_exists(ctx)? {
            return Err(WriteError::Op(Fail::System(sys(
                SystemExceptionKind::ObjectNotExist,
                OBJECT_NOT_EXIST_NAMING_CONTEXT,
            ))));
        }
        let (c, last) = walk(shared, w, ctx, n).map_err(WriteError::Op)?;
        if let Some(old) = w.get(c, last)? {
            if mode == Mode::Bind {
                return Err(WriteError::Op(Fail::AlreadyBound));
            }
            if old.binding_type != binding_type {
                let why = match binding_type {
                    BindingType::Nobject => NotFoundReason::NotObject,
                    BindingType::Ncontext => NotFoundReason::NotContext,
                };
                return Err(WriteError::Op(Fail::NotFound(why, vec![last.clone()])));
            }
        }
        // A context reference of ours that names a destroyed context is kept as an IOR.
        let local = match local {
            Some(id) if w.context_exists(id)? => Some(id),
            _ => None,
        };
        let bound = Bound {
            binding_type,
            local,
            ior: ior.clone(),
        };
        match lease {
            Some(l) => w.put_leased(c, last, &bound, l)?,
            None => w.put(c, last, &bound)?,
        }
        Ok(())
    });
    match r {
        Ok(()) => Ok(None),
        Err(WriteError::Op(Fail::Remote(nc, rest))) => Ok(Some((nc, rest))),
        Err(e) => Err(e.into()),
    }
}

impl ContextImpl {
    fn lookup(&self, n: &[NameComponent]) -> Result<Option<ObjectRef>, Fail> {
        let shared = self.shared()?;
        let ctx = current_ctx()?;
        let snap = shared.store.read()?;
        if !snap.context_exists(ctx)? {
            return Err(sys(
                SystemExceptionKind::ObjectNotExist,
                OBJECT_NOT_EXIST_NAMING_CONTEXT,
            )
            .into());
        }
        let (c, last) = walk(&shared, &*snap, ctx, n)?;
        let b = snap
            .get(c, last)?
            .ok_or_else(|| Fail::NotFound(NotFoundReason::MissingNode, vec![last.clone()]))?;
        Ok(shared.object(&b.ior)?)
    }
}

fn context_proxy(obj: Option<&ObjectRef>) -> Option<NamingContext> {
    obj.map(NamingContext::unchecked_narrow)
}

impl NamingContextServant for ContextImpl {
    fn bind(&self, n: &[NameComponent], obj: Option<&ObjectRef>) -> Result<(), BindError> {
        match self.store_binding(n, obj, BindingType::Nobject, Mode::Bind) {
            Ok(None) => Ok(()),
            Ok(Some((nc, rest))) => nc.bind(&rest, obj),
            Err(f) => Err(BindError::from_fail(f)),
        }
    }

    fn rebind(&self, n: &[NameComponent], obj: Option<&ObjectRef>) -> Result<(), RebindError> {
        match self.store_binding(n, obj, BindingType::Nobject, Mode::Rebind) {
            Ok(None) => Ok(()),
            Ok(Some((nc, rest))) => nc.rebind(&rest, obj),
            Err(f) => Err(RebindError::from_fail(f)),
        }
    }

    fn bind_context(
        &self,
        n: &[NameComponent],
        nc: Option<&NamingContext>,
    ) -> Result<(), BindContextError> {
        let obj = nc
            .map(|c| c.as_object())
            .ok_or_else(|| sys(SystemExceptionKind::BadParam, BAD_PARAM_NIL_CONTEXT))?;
        match self.store_binding(n, Some(obj), BindingType::Ncontext, Mode::Bind) {
            Ok(None) => Ok(()),
            Ok(Some((remote, rest))) => remote.bind_context(&rest, nc),
            Err(f) => Err(BindContextError::from_fail(f)),
        }
    }

    fn rebind_context(
        &self,
        n: &[NameComponent],
        nc: Option<&NamingContext>,
    ) -> Result<(), RebindContextError> {
        let obj = nc
            .map(|c| c.as_object())
            .ok_or_else(|| sys(SystemExceptionKind::BadParam, BAD_PARAM_NIL_CONTEXT))?;
        match self.store_binding(n, Some(obj), BindingType::Ncontext, Mode::Rebind) {
            Ok(None) => Ok(()),
            Ok(Some((remote, rest))) => remote.rebind_context(&rest, nc),
            Err(f) => Err(RebindContextError::from_fail(f)),
        }
    }

    fn resolve(&self, n: &[NameComponent]) -> Result<Option<ObjectRef>, ResolveError> {
        match self.lookup(n) {
            Ok(o) => Ok(o),
            Err(Fail::Remote(nc, rest)) => nc.resolve(&rest),
            Err(f) => Err(ResolveError::from_fail(f)),
        }
    }

    fn unbind(&self, n: &[NameComponent]) -> Result<(), UnbindError> {
        let run = || -> Result<(), Fail> {
            let shared = self.shared()?;
            let ctx = current_ctx()?;
            shared.store.write(|w| {
                if !w.context_exists(ctx)? {
                    return Err(WriteError::Op(
                        sys(
                            SystemExceptionKind::ObjectNotExist,
                            OBJECT_NOT_EXIST_NAMING_CONTEXT,
                        )
                        .into(),
                    ));
                }
                let (c, last) = walk(&shared, w, ctx, n).map_err(WriteError::Op)?;
                if !w.remove(c, last)? {
                    return Err(WriteError::Op(Fail::NotFound(
                        NotFoundReason::MissingNode,
                        vec![last.clone()],
                    )));
                }
                Ok(())
            })?;
            Ok(())
        };
        match run() {
            Ok(()) => Ok(()),
            Err(Fail::Remote(nc, rest)) => nc.unbind(&rest),
            Err(f) => Err(UnbindError::from_fail(f)),
        }
    }

    fn new_context(&self) -> Result<Option<NamingContext>, SystemException> {
        let shared = self.shared()?;
        let id = shared
            .store
            .write(|w| -> Result<u64, WriteError<()>> { Ok(w.new_context()?) })
            .map_err(|e| match e {
                WriteError::Store(s) => SystemException::from(s),
                WriteError::Op(()) => sys(SystemExceptionKind::Internal, INTERNAL_NAMING),
            })?;
        Ok(context_proxy(Some(&shared.context_ref(id))))
    }

    fn bind_new_context(
        &self,
        n: &[NameComponent],
    ) -> Result<Option<NamingContext>, BindNewContextError> {
        let run = || -> Result<ObjectRef, Fail> {
            let shared = self.shared()?;
            let ctx = current_ctx()?;
            shared
                .store
                .write(|w| {
                    if !w.context_exists(ctx)? {
                        return Err(WriteError::Op(
                            sys(
                                SystemExceptionKind::ObjectNotExist,
                                OBJECT_NOT_EXIST_NAMING_CONTEXT,
                            )
                            .into(),
                        ));
                    }
                    let (c, last) = walk(&shared, w, ctx, n).map_err(WriteError::Op)?;
                    if w.get(c, last)?.is_some() {
                        return Err(WriteError::Op(Fail::AlreadyBound));
                    }
                    let id = w.new_context()?;
                    let obj = shared.context_ref(id);
                    let bound = Bound {
                        binding_type: BindingType::Ncontext,
                        local: Some(id),
                        ior: encapsulate(Some(&obj)).map_err(|e| WriteError::Op(e.into()))?,
                    };
                    w.put(c, last, &bound)?;
                    Ok(obj)
                })
                .map_err(Fail::from)
        };
        match run() {
            Ok(obj) => Ok(context_proxy(Some(&obj))),
            Err(Fail::Remote(nc, rest)) => nc.bind_new_context(&rest),
            Err(f) => Err(BindNewContextError::from_fail(f)),
        }
    }

    fn destroy(&self) -> Result<(), DestroyError> {
        let shared = self.shared()?;
        let ctx = current_ctx()?;
        if ctx == ROOT {
            // The root context is the service itself.
            return Err(sys(
                SystemExceptionKind::NoPermission,
                NO_PERMISSION_DESTROY_ROOT,
            )
            .into());
        }
        let r = shared.store.write(|w| {
            if !w.context_exists(ctx)? {
                return Err(WriteError::Op(Fail::System(sys(
                    SystemExceptionKind::ObjectNotExist,
                    OBJECT_NOT_EXIST_NAMING_CONTEXT,
                ))));
            }
            if !w.is_empty(ctx)? {
                return Err(WriteError::Op(Fail::NotEmpty));
            }
            w.remove_context(ctx)?;
            Ok(())
        });
        match r.map_err(Fail::from) {
            Ok(()) => Ok(()),
            Err(Fail::NotEmpty) => Err(NotEmpty {}.into()),
            Err(Fail::System(e)) => Err(e.into()),
            Err(_) => Err(internal()),
        }
    }

    fn list(
        &self,
        how_many: u32,
    ) -> Result<(BindingList, Option<BindingIterator>), SystemException> {
        let shared = self.shared()?;
        let ctx = current_ctx()?;
        let snap = shared.store.read()?;
        if !snap.context_exists(ctx)? {
            return Err(sys(
                SystemExceptionKind::ObjectNotExist,
                OBJECT_NOT_EXIST_NAMING_CONTEXT,
            ));
        }
        let mut all: BindingList = snap
            .list(ctx)?
            .into_iter()
            .map(|(c, b)| Binding {
                binding_name: vec![c],
                binding_type: b.binding_type,
            })
            .collect();
        let n = all.len().min(how_many as usize);
        let rest = all.split_off(n);
        let iterator = if rest.is_empty() {
            None
        } else {
            Some(shared.iterators.create(rest)?)
        };
        Ok((all, iterator))
    }
}

fn invalid_name<E: From<InvalidName>>(_: NameError) -> E {
    InvalidName {}.into()
}

impl NamingContextExtServant for ContextImpl {
    fn to_string(&self, n: &[NameComponent]) -> Result<StringName, ToStringError> {
        name::to_string(n).map_err(invalid_name)
    }

    fn to_name(&self, sn: &str) -> Result<Name, ToNameError> {
        name::to_name(sn).map_err(invalid_name)
    }

    fn to_url(&self, addr: &str, sn: &str) -> Result<URLString, ToUrlError> {
        name::to_url(addr, sn).map_err(|e| match e {
            NameError::InvalidAddress => InvalidAddress {}.into(),
            NameError::InvalidName(_) => InvalidName {}.into(),
        })
    }

    fn resolve_str(&self, sn: &str) -> Result<Option<ObjectRef>, ResolveStrError> {
        let n = name::to_name(sn).map_err(invalid_name::<ResolveStrError>)?;
        match self.lookup(&n) {
            Ok(o) => Ok(o),
            Err(Fail::Remote(nc, rest)) => nc.resolve(&rest).map_err(|e| match e {
                ResolveError::NotFound(e) => e.into(),
                ResolveError::CannotProceed(e) => e.into(),
                ResolveError::InvalidName(e) => e.into(),
                ResolveError::System(e) => e.into(),
            }),
            Err(f) => Err(ResolveStrError::from_fail(f)),
        }
    }
}

/// The object id of the lease interface in the contexts' POA (not 8 bytes: no context's).
pub(crate) const LEASES_OID: &[u8] = b"leases";

/// `CorbinaNaming::Leases`: bindings under a lease, names from the root context.
struct LeasesImpl {
    shared: Weak<Shared>,
}

impl LeasesImpl {
    fn shared(&self) -> Result<Arc<Shared>, SystemException> {
        upgrade(&self.shared)
    }
}

impl LeasesServant for LeasesImpl {
    fn grant(&self, ttl_ms: u32) -> Result<LeaseId, SystemException> {
        let ttl = Duration::from_millis(u64::from(ttl_ms.max(1)));
        Ok(self.shared()?.store.leases().grant(ttl)?)
    }

    fn keep_alive(&self, lease: LeaseId) -> Result<(), leases::KeepAliveError> {
        match self.shared()?.store.leases().keep_alive(lease) {
            Ok(()) => Ok(()),
            Err(StoreError::UnknownLease(_)) => Err(UnknownLease {}.into()),
            Err(e) => Err(SystemException::from(e).into()),
        }
    }

    fn revoke(&self, lease: LeaseId) -> Result<(), SystemException> {
        Ok(self.shared()?.store.leases().revoke(lease)?)
    }

    fn bind(
        &self,
        lease: LeaseId,
        name: &str,
        obj: Option<&ObjectRef>,
    ) -> Result<(), leases::BindError> {
        let shared = self.shared()?;
        let bad = |reason: String| leases::BindError::from(BadName { reason });
        let n = name::to_name(name).map_err(|e| bad(format!("\"{name}\": {e}")))?;
        let r = store_binding(
            &shared,
            ROOT,
            &n,
            obj,
            BindingType::Nobject,
            Mode::Rebind,
            Some(lease),
        );
        match r {
            Ok(None) => Ok(()),
            Ok(Some(_)) => Err(bad(format!(
                "\"{name}\" leads into another naming service, which knows no leases"
            ))),
            Err(Fail::UnknownLease) => Err(UnknownLease {}.into()),
            Err(Fail::System(e)) => Err(e.into()),
            Err(Fail::NotFound(_, rest)) => Err(bad(format!(
                "\"{name}\": no context at \"{}\"",
                name::to_string(&rest).unwrap_or_default()
            ))),
            Err(_) => Err(bad(format!("\"{name}\" cannot be bound"))),
        }
    }
}

/// The default servant of the contexts' POA: refuses requests for contexts that do not
/// exist (destroyed, or never created) before the skeleton decodes anything, and serves
/// the lease interface under [`LEASES_OID`].
pub(crate) struct ContextServant {
    skeleton: NamingContextExtSkeleton<ContextImpl>,
    leases: LeasesSkeleton<LeasesImpl>,
    shared: Weak<Shared>,
}

impl ContextServant {
    pub(crate) fn new(shared: Weak<Shared>) -> ContextServant {
        ContextServant {
            skeleton: NamingContextExtSkeleton::new(ContextImpl {
                shared: shared.clone(),
            }),
            leases: LeasesSkeleton::new(LeasesImpl {
                shared: shared.clone(),
            }),
            shared,
        }
    }
}

impl Servant for ContextServant {
    fn primary_interface(&self) -> &'static str {
        self.skeleton.primary_interface()
    }

    fn is_a(&self, repository_id: &str) -> bool {
        self.skeleton.is_a(repository_id)
    }

    fn dispatch(&self, request: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        let shared = self.shared.upgrade().ok_or_else(|| {
            sys(
                SystemExceptionKind::ObjectNotExist,
                OBJECT_NOT_EXIST_NAMING_SERVICE,
            )
        })?;
        let exists = match current_ctx() {
            Ok(ctx) => shared.store.read()?.context_exists(ctx)?,
            Err(_) => {
                let leases = Current::get_object_id().is_ok_and(|id| id.as_bytes() == LEASES_OID);
                if leases {
                    return self.leases.dispatch(request);
                }
                false
            }
        };
        if !exists {
            if matches!(request.operation(), "_non_existent" | "_not_existent") {
                request.arguments_done()?;
                return request.reply(|w| {
                    w.write_boolean(true);
                    Ok(())
                });
            }
            return Err(sys(
                SystemExceptionKind::ObjectNotExist,
                OBJECT_NOT_EXIST_NAMING_CONTEXT,
            ));
        }
        self.skeleton.dispatch(request)
    }
}
