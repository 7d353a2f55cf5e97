//! The ORB: configuration, object references from strings, initial references, the POA
//! registry and the IIOP server, and the run/shutdown life cycle.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use crate::cdr::ByteOrder;
use crate::client::{ClientContext, IiopInvoker};
use crate::collocation::CollocatedInvoker;
use crate::config::{ConfigError, OrbConfig};
use crate::giop::{IiopProfile, Ior, ObjAddr, ObjectKey, ObjectUrl, TaggedComponent, Version};
use crate::local::LocalObject;
use crate::object::ObjectRef;
use crate::poa::{Current, DispatchError, LocateOutcome, Poa, PoaRegistry, ReferenceFactory};
use crate::servant::ServerRequest;
use crate::server::{RequestDispatcher, Server};
use crate::transport::{local_host_name, BoundEndpoint, LocalTransport, TransportKind};
use crate::{CompletionStatus, SystemException, SystemExceptionKind};

/// Corbina's ORB type id for the TAG_ORB_TYPE component ("CBN\0"; not OMG-assigned).
pub const CORBINA_ORB_TYPE: u32 = 0x4342_4e00;

/// Why an ORB could not be created.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// A bad `-ORB…` argument or `CORBINA_…` variable.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// What `resolve_initial_references` returns.
#[derive(Clone)]
pub enum InitialReference {
    /// `RootPOA`.
    RootPoa(Poa),
    /// `POACurrent`: `PortableServer::Current`, the upcall context of the calling thread.
    PoaCurrent(Current),
    /// A remote object (`-ORBInitRef`, `-ORBDefaultInitRef`, or registered by the application or
    /// an ORB initializer).
    Object(ObjectRef),
    /// `PICurrent`: the Portable Interceptor slots of the calling thread.
    PiCurrent(crate::interceptor::PiCurrent),
    /// `CodecFactory`: makes `Codec`s.
    CodecFactory(crate::interceptor::CodecFactory),
    /// A locality-constrained object (an IDL `local interface`) registered with
    /// [`Orb::register_initial_reference`].
    Local(LocalObject),
}

impl From<ObjectRef> for InitialReference {
    fn from(o: ObjectRef) -> Self {
        InitialReference::Object(o)
    }
}

impl From<LocalObject> for InitialReference {
    fn from(o: LocalObject) -> Self {
        InitialReference::Local(o)
    }
}

/// `CORBA::ORB::InvalidName`: no initial reference by that name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no initial reference named {0:?}")]
pub struct InvalidName(pub String);

struct OrbInner {
    config: OrbConfig,
    client: Arc<ClientContext>,
    poa: OnceLock<Arc<PoaRegistry>>,
    server: Mutex<Option<Arc<Server>>>,
    /// Host and port written into IORs, once the server is up.
    published: OnceLock<(String, u16)>,
    /// The server's local endpoints, published as components of the IIOP profile.
    published_local: OnceLock<Vec<LocalTransport>>,
    /// The TLS ports published (`TAG_SSL_SEC_TRANS` on the profile's host).
    published_ssl: OnceLock<Vec<u16>>,
    state: Mutex<RunState>,
    state_changed: Condvar,
    /// Whether references made from now on to this ORB's own objects call their servants
    /// directly (see [`Orb::set_direct_collocation`]).
    direct_collocation: AtomicBool,
    /// Names given by `register_initial_reference`, in registration order.
    registered: Mutex<Vec<(String, InitialReference)>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunState {
    Running,
    ShutDown,
    Destroyed,
}

/// A CORBA ORB. Cheap to clone; every clone is the same ORB.
#[derive(Clone)]
pub struct Orb {
    inner: Arc<OrbInner>,
}

impl std::fmt::Debug for Orb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Orb")
            .field("published", &self.inner.published.get())
            .finish()
    }
}

/// The reference factory the POA uses: IORs with this ORB's endpoint, invoked over IIOP.
struct OrbReferences(std::sync::Weak<OrbInner>);

impl ReferenceFactory for OrbReferences {
    fn create_reference(&self, type_id: &str, object_key: Vec<u8>) -> ObjectRef {
        match self.0.upgrade() {
            Some(inner) => Orb { inner }.make_reference(type_id, object_key),
            None => crate::object::failing_reference(
                Ior {
                    type_id: type_id.into(),
                    ..Ior::nil()
                },
                object_key,
                Orb::bad_inv_order(),
            ),
        }
    }
}

impl RequestDispatcher for PoaRegistry {
    fn dispatch(
        &self,
        object_key: &[u8],
        request: &mut ServerRequest<'_, '_>,
    ) -> Result<(), DispatchError> {
        PoaRegistry::dispatch(self, object_key, request)
    }

    fn locate(&self, object_key: &[u8]) -> LocateOutcome {
        PoaRegistry::locate(self, object_key)
    }

    fn accepts_bidir(&self, object_key: &[u8]) -> bool {
        self.is_bidirectional(object_key)
    }
}

impl Orb {
    /// `CORBA::ORB_init`: configuration from the environment (`CORBINA_…`) and then from the
    /// `-ORB…` arguments, which win. Returns the ORB and the arguments that were not ORB
    /// options, in order. Unknown `-ORB` options are an error.
    pub fn init<I: IntoIterator<Item = String>>(args: I) -> Result<(Orb, Vec<String>), InitError> {
        let args: Vec<String> = args.into_iter().collect();
        let (mut config, rest) = OrbConfig::from_args_and_env(args.clone())?;
        let spans = crate::trace::wants_request_spans(&config);
        let metrics = crate::trace::wants_request_metrics(&config);
        config.initializers.run(args, spans, metrics);
        Ok((Orb::with_config(config), rest))
    }

    /// An ORB with an explicit configuration.
    pub fn with_config(mut config: OrbConfig) -> Orb {
        crate::trace::install_log(&config);
        let spans = crate::trace::wants_request_spans(&config);
        let metrics = crate::trace::wants_request_metrics(&config);
        config.initializers.run(Vec::new(), spans, metrics);
        crate::ami::want_dispatch_threads(config.ami_dispatch_threads);
        if let Some(levels) = config.max_value_nesting {
            crate::cdr::value::set_max_value_nesting(levels);
        }
        let client = Arc::new(ClientContext::new(config.clone()));
        // Request interceptors run on both sides of calls to this ORB's own objects:
        // those go over a loopback connection (see `crate::interceptor`).
        let direct_collocation =
            config.direct_collocation && !config.initializers.has_request_interceptors();
        let inner = Arc::new(OrbInner {
            config,
            client,
            poa: OnceLock::new(),
            server: Mutex::new(None),
            published: OnceLock::new(),
            published_local: OnceLock::new(),
            published_ssl: OnceLock::new(),
            state: Mutex::new(RunState::Running),
            state_changed: Condvar::new(),
            direct_collocation: AtomicBool::new(direct_collocation),
            registered: Mutex::new(Vec::new()),
        });
        let orb = Orb { inner };
        if orb.inner.config.offer_bidir {
            orb.offer_bidir();
        }
        orb.claim_default();
        orb
    }

    /// `-ORBofferBiDirectionalGIOP 1`: connections offer this ORB's published address for
    /// calls back once a POA with `BidirectionalPolicy::Both` exists, and requests that come
    /// back on them are served by the POAs.
    fn offer_bidir(&self) {
        let weak = Arc::downgrade(&self.inner);
        let offer: crate::bidir::OfferSource = Arc::new(move || {
            let inner = weak.upgrade()?;
            if !inner.poa.get()?.has_bidirectional_poa() {
                return None;
            }
            let (host, port) = inner.published.get()?.clone();
            Some(vec![crate::giop::ListenPoint { host, port }])
        });
        self.inner
            .client
            .set_bidir_client(crate::client::BidirClient {
                dispatcher: self.request_dispatcher(),
                offer,
            });
    }

    /// The configuration this ORB runs with.
    pub fn config(&self) -> &OrbConfig {
        &self.inner.config
    }

    fn poa_registry(&self) -> &Arc<PoaRegistry> {
        self.inner
            .poa
            .get_or_init(|| PoaRegistry::new(Arc::new(OrbReferences(Arc::downgrade(&self.inner)))))
    }

    /// The RootPOA (also `resolve_initial_references("RootPOA")`).
    pub fn root_poa(&self) -> Poa {
        self.poa_registry().root_poa()
    }

    /// Starts the IIOP server if it is not running yet; returns the published address.
    /// Called when the first reference to a local object is made.
    pub fn ensure_server(&self) -> Result<(String, u16), SystemException> {
        if let Some(p) = self.inner.published.get() {
            return Ok(p.clone());
        }
        let mut guard = self.inner.server.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = self.inner.published.get() {
            return Ok(p.clone());
        }
        let dispatcher = self.request_dispatcher();
        let server = Server::start_with_client(
            &self.inner.config,
            dispatcher,
            Some(self.inner.client.clone()),
        )
        .map_err(|source| crate::Error::Listen { source })?;
        let local: Vec<LocalTransport> = server
            .bound_endpoints()
            .iter()
            .filter_map(|b| {
                let (kind, path) = match b {
                    BoundEndpoint::Unix(p) => (TransportKind::Unix, p),
                    BoundEndpoint::Shm(p) => (TransportKind::Shm, p),
                    BoundEndpoint::Tcp(_) | BoundEndpoint::Ssl(_) => return None,
                };
                Some(LocalTransport {
                    kind,
                    host: local_host_name().to_owned(),
                    path: path.clone(),
                })
            })
            .collect();
        let ssl = server.ssl_addresses();
        let published = match (
            self.inner.config.publish_addresses.first(),
            server.addresses().first(),
        ) {
            (Some((host, port)), bound) => {
                let bound_port = bound.map_or(0, |b| b.port());
                (host.clone(), port.unwrap_or(bound_port))
            }
            (None, Some(bound)) if bound.ip().is_unspecified() => (default_host(), bound.port()),
            (None, Some(bound)) => (bound.ip().to_string(), bound.port()),
            // TLS only: the TLS endpoint's host and port 0 (omniORB's way), the TLS port in
            // the profile's TAG_SSL_SEC_TRANS.
            (None, None) if !ssl.is_empty() => match ssl[0].ip() {
                ip if ip.is_unspecified() => (default_host(), 0),
                ip => (ip.to_string(), 0),
            },
            // Published without listening (reached over bidirectional GIOP only).
            (None, None) if !self.inner.config.endpoints_no_listen.is_empty() => {
                let e = &self.inner.config.endpoints_no_listen[0];
                (e.host.clone(), e.port)
            }
            // Local endpoints only: this host's name and no port (TCP clients cannot come in).
            (None, None) if !local.is_empty() => (local_host_name().to_owned(), 0),
            (None, None) => return Err(crate::Error::NoEndpoint.into()),
        };
        let _ = self.inner.published_local.set(local);
        let _ = self
            .inner
            .published_ssl
            .set(ssl.iter().map(|a| a.port()).collect());
        *guard = Some(Arc::new(server));
        let _ = self.inner.published.set(published.clone());
        Ok(published)
    }

    /// Certificate reload: reads the files of `ssl` (`-ORBsslKeyFile`, `-ORBsslCAFile`, …)
    /// again and uses them for the TLS connections opened and accepted from now on;
    /// connections already made keep theirs. On error nothing changes. The server's
    /// files are checked at once; for an ORB without TLS endpoints, the client's are (an
    /// ORB that serves TLS need not be a TLS client: its client side reads them when it
    /// first opens a TLS connection).
    pub fn reload_ssl(
        &self,
        ssl: crate::config::SslConfig,
    ) -> Result<(), crate::transport::tls::TlsError> {
        let serving = match self.server() {
            Some(server) => server.reload_tls(&ssl)?,
            None => false,
        };
        if serving {
            self.inner.client.replace_tls_lazily(ssl);
            Ok(())
        } else {
            self.inner.client.reload_tls(ssl)
        }
    }

    /// The running server, if any.
    pub fn server(&self) -> Option<Arc<Server>> {
        self.inner.server.lock().ok().and_then(|s| s.clone())
    }

    fn make_reference(&self, type_id: &str, object_key: Vec<u8>) -> ObjectRef {
        let ior = match self.ensure_server() {
            Ok((host, port)) => self.local_ior(type_id, &host, port, &object_key),
            Err(_) => Ior {
                type_id: type_id.into(),
                ..Ior::nil()
            },
        };
        self.object_from_ior(ior).unwrap_or_else(|_| {
            crate::object::failing_reference(Ior::nil(), object_key, Orb::bad_inv_order())
        })
    }

    fn local_ior(&self, type_id: &str, host: &str, port: u16, key: &[u8]) -> Ior {
        let order = self.inner.config.byte_order;
        let mut components = Vec::new();
        if let Ok(c) = TaggedComponent::orb_type(CORBINA_ORB_TYPE, order) {
            components.push(c);
        }
        if let Ok(c) = TaggedComponent::code_sets(&crate::codeset::native_code_sets(), order) {
            components.push(c);
        }
        for t in self.inner.published_local.get().into_iter().flatten() {
            if let Some(c) = t.to_component(order) {
                components.push(c);
            }
        }
        for &p in self.inner.published_ssl.get().into_iter().flatten() {
            components.extend(crate::transport::tls::component(p, order));
        }
        for (h, p) in self.inner.config.publish_addresses.iter().skip(1) {
            if let Ok(c) = TaggedComponent::alternate_iiop_address(h, p.unwrap_or(port), order) {
                components.push(c);
            }
        }
        if let Some(reg) = &self.inner.config.initializers.registered {
            components.extend(reg.components(type_id, key));
        }
        let profile = IiopProfile {
            version: Version::new(1, self.inner.config.giop_max_minor.min(2))
                .unwrap_or(Version::V1_2),
            host: host.to_owned(),
            port,
            object_key: ObjectKey::new(key.to_vec()),
            components,
            byte_order: order,
        };
        Ior {
            type_id: type_id.to_owned(),
            profiles: profile.to_tagged().into_iter().collect(),
            byte_order: order,
        }
    }

    /// An object reference for an IOR; no connection is opened. A reference to an object of
    /// this ORB's POAs is collocated: generated proxies call its servant directly (see
    /// [`ObjectRef::collocated_call`] and [`Orb::set_direct_collocation`]).
    pub fn object_from_ior(&self, ior: Ior) -> Result<ObjectRef, SystemException> {
        let invoker = IiopInvoker::new(self.inner.client.clone(), ior.clone())?;
        let local = self.collocation_for(invoker.profile());
        let key = invoker.profile().object_key.as_bytes();
        let obj = match local {
            Some(registry) => {
                let key = Arc::from(key);
                let iiop = Arc::new(invoker);
                let invoker = CollocatedInvoker::new(registry, key, self.downgrade(), iiop);
                ObjectRef::collocated(ior, invoker)
            }
            None => {
                let key = key.to_vec();
                ObjectRef::new(ior, key, self.intercepted(invoker))
            }
        };
        Ok(obj.with_orb(self))
    }

    /// The invoker of a new reference: with client request interceptors registered, one
    /// that runs them (decided here, once per reference, so that calls without
    /// interceptors check nothing).
    fn intercepted(&self, invoker: IiopInvoker) -> Arc<dyn crate::object::Invoker> {
        match self.inner.config.initializers.client() {
            Some(reg) => Arc::new(crate::interceptor::InterceptedInvoker::new(
                invoker,
                reg.clone(),
            )),
            None => Arc::new(invoker),
        }
    }

    /// Whether references to this ORB's own objects made from now on call their servants
    /// directly, without marshalling (the default, or `-ORBCollocation direct`), or always go
    /// through IIOP (`false`, `-ORBCollocation iiop`: each call is marshalled, sent over a
    /// loopback connection and run on a server thread).
    /// References made earlier keep their behaviour; for one reference use
    /// [`ObjectRef::without_collocation`].
    pub fn set_direct_collocation(&self, direct: bool) {
        // Never with request interceptors: they run on calls to this ORB's objects too.
        let direct = direct && !self.inner.config.initializers.has_request_interceptors();
        self.inner
            .direct_collocation
            .store(direct, Ordering::Relaxed);
    }

    /// See [`Orb::set_direct_collocation`].
    pub fn direct_collocation(&self) -> bool {
        self.inner.direct_collocation.load(Ordering::Relaxed)
    }

    /// The POA registry if `profile` names an object of this ORB's POAs: its key is in the
    /// POA key format of this ORB (a TRANSIENT key's epoch is this ORB's alone; a
    /// PERSISTENT key must also come with one of the endpoints this ORB publishes).
    fn collocation_for(&self, profile: &IiopProfile) -> Option<std::sync::Weak<PoaRegistry>> {
        if !self.direct_collocation() {
            return None;
        }
        let registry = self.inner.poa.get()?;
        let ours = self.inner.published.get().is_some_and(|(host, port)| {
            let same = |h: &str, p: u16| profile.host == h && profile.port == p;
            same(host, *port)
                || self
                    .inner
                    .config
                    .publish_addresses
                    .iter()
                    .any(|(h, p)| same(h, p.unwrap_or(*port)))
        });
        registry
            .is_own_key(profile.object_key.as_bytes(), ours)
            .then(|| Arc::downgrade(registry))
    }

    /// A reference to the same object as `obj` whose twoway calls time out after `timeout`
    /// (TIMEOUT, completed MAYBE), whatever the thread's or the ORB's call timeout
    /// (`RelativeRoundtripTimeoutPolicy` set as an object policy override). The reference
    /// shares the ORB's connections with every other reference to the same address.
    pub fn object_with_timeout(
        &self,
        obj: &ObjectRef,
        timeout: Duration,
    ) -> Result<ObjectRef, SystemException> {
        let invoker = IiopInvoker::new(self.inner.client.clone(), obj.ior().clone())?
            .with_call_timeout(Some(timeout));
        let key = invoker.profile().object_key.as_bytes().to_vec();
        Ok(ObjectRef::new(
            obj.ior().clone(),
            key,
            self.intercepted(invoker),
        ))
    }

    /// A reference to the same object as `obj` with a connection of its own: its
    /// asynchronous calls (`…Async` proxies, `sendc_`) all go on one connection shared with
    /// no other reference, so the server gets them in the order they were sent, and calls
    /// to other objects of that server (a slow one) never queue in front of them. Its
    /// connections close when the last clone of the reference goes, or with the ORB.
    /// Not collocated. For a sender that pipelines calls to one object in order (an event
    /// channel's pushes to one consumer).
    pub fn object_on_own_connection(&self, obj: &ObjectRef) -> Result<ObjectRef, SystemException> {
        let invoker =
            IiopInvoker::new(self.inner.client.clone(), obj.ior().clone())?.with_own_connection();
        let key = invoker.profile().object_key.as_bytes().to_vec();
        Ok(ObjectRef::new(
            obj.ior().clone(),
            key,
            self.intercepted(invoker),
        ))
    }

    /// The client side's connections and their state now, one entry per server address
    /// calls have gone to (see [`crate::client`] for how they are used): for monitoring and
    /// tests. A snapshot: it does not keep anything open.
    pub fn connections(&self) -> Vec<crate::client::ConnectionInfo> {
        self.inner.client.connections()
    }

    /// Closes the client side's idle connections (strands) unused for `idle_for`
    /// (`Duration::ZERO`: every idle one), as the idle scavenger would; returns how many.
    /// The next call to that server connects again.
    pub fn close_idle_connections(&self, idle_for: Duration) -> usize {
        self.inner.client.close_idle(idle_for)
    }

    /// One scan of the client's idle scavenger now (it otherwise runs every
    /// `-ORBidleTimeout`): closes the idle strands found idle by the previous scan and marks
    /// the others; returns how many it closed.
    pub fn scavenge_idle_connections(&self) -> usize {
        self.inner.client.scavenge_now()
    }

    /// `string_to_object`: `IOR:…`, `corbaloc:iiop:…`/`corbaloc::…`, `corbaloc:rir:/Name`,
    /// and `corbaname:…#name` (resolved through the naming context it names).
    pub fn string_to_object(&self, s: &str) -> Result<ObjectRef, SystemException> {
        use crate::error::minor::{
            BAD_PARAM_BAD_ADDRESS, BAD_PARAM_BAD_SCHEME_NAME, BAD_PARAM_BAD_SCHEME_SPECIFIC_PART,
        };
        let bad = |minor| SystemException::new(SystemExceptionKind::BadParam, minor);
        match ObjectUrl::parse(s.trim()).map_err(|_| bad(BAD_PARAM_BAD_SCHEME_NAME))? {
            ObjectUrl::Ior(ior) => self.object_from_ior(ior),
            ObjectUrl::Corbaloc(loc) => {
                let mut profiles = Vec::new();
                for a in &loc.addresses {
                    match a {
                        ObjAddr::Rir => {
                            let name = String::from_utf8_lossy(loc.key.as_bytes()).into_owned();
                            return match self.resolve_initial_references(&name) {
                                Ok(InitialReference::Object(o)) => Ok(o),
                                _ => Err(bad(BAD_PARAM_BAD_ADDRESS)),
                            };
                        }
                        ObjAddr::Iiop(addr) => {
                            let p = IiopProfile {
                                version: addr.version.unwrap_or(Version::V1_0),
                                host: addr.host.clone(),
                                port: addr.port,
                                object_key: loc.key.clone(),
                                components: Vec::new(),
                                byte_order: ByteOrder::NATIVE,
                            };
                            profiles.push(
                                p.to_tagged()
                                    .map_err(|_| bad(BAD_PARAM_BAD_SCHEME_SPECIFIC_PART))?,
                            );
                        }
                    }
                }
                let ior = Ior {
                    type_id: String::new(),
                    profiles,
                    byte_order: ByteOrder::NATIVE,
                };
                self.object_from_ior(ior)
            }
            ObjectUrl::Corbaname(name) => self.resolve_corbaname(&name),
        }
    }

    /// `object_to_string`: the stringified IOR.
    pub fn object_to_string(&self, obj: &ObjectRef) -> Result<String, SystemException> {
        obj.ior().to_stringified().map_err(SystemException::from)
    }

    /// `resolve_initial_references`: `RootPOA`, `POACurrent`, names given by `-ORBInitRef`,
    /// and names looked up under `-ORBDefaultInitRef`.
    pub fn resolve_initial_references(&self, name: &str) -> Result<InitialReference, InvalidName> {
        match name {
            "RootPOA" => return Ok(InitialReference::RootPoa(self.root_poa())),
            "POACurrent" => return Ok(InitialReference::PoaCurrent(Current)),
            "CodecFactory" => {
                return Ok(InitialReference::CodecFactory(
                    crate::interceptor::CodecFactory,
                ))
            }
            "PICurrent" => {
                let slots = self.inner.config.initializers.registered.as_ref();
                return Ok(InitialReference::PiCurrent(crate::interceptor::PiCurrent {
                    slots: slots.map_or(0, |r| r.slots),
                }));
            }
            _ => {}
        }
        if let Some(reg) = &self.inner.config.initializers.registered {
            if let Some(obj) = reg.initial_reference(name) {
                return Ok(InitialReference::Object(obj));
            }
        }
        if let Some((_, r)) = self.registered().iter().find(|(n, _)| n == name) {
            return Ok(r.clone());
        }
        let invalid = || InvalidName(name.to_owned());
        if let Some(url) = self.inner.config.init_refs.get(name) {
            return self
                .string_to_object(url)
                .map(InitialReference::Object)
                .map_err(|_| invalid());
        }
        if let Some(base) = &self.inner.config.default_init_ref {
            let url = format!("{}/{}", base.trim_end_matches('/'), name);
            return self
                .string_to_object(&url)
                .map(InitialReference::Object)
                .map_err(|_| invalid());
        }
        Err(invalid())
    }

    /// `register_initial_reference`: makes `obj` (a remote reference, or a local object
    /// such as a generated local interface's `to_local_object`) what
    /// `resolve_initial_references(name)` returns. `InvalidName` if `name` is empty or
    /// already names an initial reference (the ORB's own, `-ORBInitRef` ones, or registered).
    pub fn register_initial_reference(
        &self,
        name: &str,
        obj: impl Into<InitialReference>,
    ) -> Result<(), InvalidName> {
        let builtin = matches!(
            name,
            "" | "RootPOA" | "POACurrent" | "PICurrent" | "CodecFactory"
        ) || self.inner.config.init_refs.contains_key(name)
            || (self.inner.config.initializers.registered.as_ref())
                .is_some_and(|reg| reg.initial_reference(name).is_some());
        let mut reg = self.registered();
        if builtin || reg.iter().any(|(n, _)| n == name) {
            return Err(InvalidName(name.to_owned()));
        }
        reg.push((name.to_owned(), obj.into()));
        Ok(())
    }

    /// Registers `factory` to build the values of repository id `id` that arrive where the
    /// formal type is `ValueBase` or an abstract valuetype (CORBA `register_value_factory`),
    /// returning the factory it replaces. The registry is the process's, shared by its ORBs.
    pub fn register_value_factory(
        &self,
        id: &str,
        factory: std::sync::Arc<dyn crate::valuetype::ValueFactory>,
    ) -> Option<std::sync::Arc<dyn crate::valuetype::ValueFactory>> {
        crate::valuetype::register_value_factory(id, factory)
    }

    /// Removes the factory registered for `id`, returning it (`None`: there was none, where
    /// C++ raises BAD_PARAM).
    pub fn unregister_value_factory(
        &self,
        id: &str,
    ) -> Option<std::sync::Arc<dyn crate::valuetype::ValueFactory>> {
        crate::valuetype::unregister_value_factory(id)
    }

    /// The factory registered for `id` (CORBA `lookup_value_factory`).
    pub fn lookup_value_factory(
        &self,
        id: &str,
    ) -> Option<std::sync::Arc<dyn crate::valuetype::ValueFactory>> {
        crate::valuetype::lookup_value_factory(id)
    }

    fn registered(&self) -> std::sync::MutexGuard<'_, Vec<(String, InitialReference)>> {
        self.inner
            .registered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// `list_initial_services`.
    pub fn list_initial_services(&self) -> Vec<String> {
        let mut v = vec![
            "RootPOA".to_owned(),
            "POACurrent".to_owned(),
            "PICurrent".to_owned(),
            "CodecFactory".to_owned(),
        ];
        if let Some(reg) = &self.inner.config.initializers.registered {
            v.extend(reg.initial_references.iter().map(|(n, _)| n.clone()));
        }
        v.extend(self.registered().iter().map(|(n, _)| n.clone()));
        for k in self.inner.config.init_refs.keys() {
            if !v.contains(k) {
                v.push(k.clone());
            }
        }
        v
    }

    /// `work_pending`: with a thread per connection no work waits for the main thread.
    pub fn work_pending(&self) -> bool {
        false
    }

    /// `perform_work`: nothing to do (see [`Orb::work_pending`]).
    pub fn perform_work(&self) {}

    /// `run`: blocks until [`Orb::shutdown`]. Requests are served by connection threads.
    pub fn run(&self) {
        let mut st = self.inner.state.lock().unwrap_or_else(|p| p.into_inner());
        while *st == RunState::Running {
            st = self
                .inner
                .state_changed
                .wait(st)
                .unwrap_or_else(|p| p.into_inner());
        }
    }

    /// `shutdown`: stops the server (each connection answers its current request, then gets
    /// CloseConnection) and destroys the POAs; with `wait`, returns after the connections
    /// have closed.
    pub fn shutdown(&self, wait: bool) {
        {
            let mut st = self.inner.state.lock().unwrap_or_else(|p| p.into_inner());
            if *st != RunState::Running {
                return;
            }
            *st = RunState::ShutDown;
        }
        // Oneways this ORB buffered go out before it stops (a loss stays counted).
        let _ = self.inner.client.flush_oneways();
        self.inner.client.close_bidir();
        self.inner.client.close_async();
        if let Some(server) = self.server() {
            server.shutdown();
            if wait {
                server.wait_closed(Duration::from_secs(30));
            }
        }
        if let Some(poa) = self.inner.poa.get() {
            poa.shutdown(true);
        }
        self.inner.state_changed.notify_all();
    }

    /// Writes every buffered oneway now (`-ORBOnewaySyncScope none`, see [`crate::client`]).
    /// COMM_FAILURE (minor [`crate::client::MINOR_ONEWAYS_LOST`]) if buffered oneways were
    /// lost.
    pub fn flush_oneways(&self) -> Result<(), SystemException> {
        self.inner.client.flush_oneways()
    }

    /// `destroy`: shuts down (waiting) if still running; the ORB cannot be used afterwards.
    pub fn destroy(&self) {
        self.shutdown(true);
        let mut st = self.inner.state.lock().unwrap_or_else(|p| p.into_inner());
        if *st != RunState::Destroyed {
            if let Some(reg) = &self.inner.config.initializers.registered {
                reg.destroy();
            }
        }
        *st = RunState::Destroyed;
        self.inner.state_changed.notify_all();
    }

    /// Whether `shutdown` has been called.
    pub fn is_shut_down(&self) -> bool {
        self.inner
            .state
            .lock()
            .map(|s| *s != RunState::Running)
            .unwrap_or(true)
    }

    /// A ready-made error for calls on a destroyed ORB.
    pub fn bad_inv_order() -> SystemException {
        SystemException::new(
            SystemExceptionKind::BadInvOrder,
            crate::error::minor::BAD_INV_ORDER_ORB_SHUTDOWN,
        )
        .completed(CompletionStatus::No)
    }
}

/// The host written into IORs when bound to all interfaces: the address of the interface
/// with the default route, or the loopback address on a machine without one.
fn default_host() -> String {
    let probe = std::net::UdpSocket::bind("0.0.0.0:0").and_then(|s| {
        s.connect("192.0.2.1:9")?; // TEST-NET-1: no packet is sent by connect on UDP.
        s.local_addr()
    });
    match probe {
        Ok(a) if !a.ip().is_unspecified() => a.ip().to_string(),
        _ => "127.0.0.1".to_owned(),
    }
}

// =========================================================================================
// Current and default ORB: object-reference unmarshalling.
//
// A reference read off the wire must be reached through an ORB (its IIOP invoker shares that
// ORB's ropes and configuration). Unmarshalling code finds the ORB here instead of through a
// parameter on every decode function: the ORB entered on this thread (by `ObjectRef::invoke`
// while it decodes a reply, by the server while it dispatches a request), else the process
// default ORB.
// =========================================================================================

thread_local! {
    static CURRENT_ORB: std::cell::RefCell<Option<Orb>> = const { std::cell::RefCell::new(None) };
}

/// The process default ORB (weak: a dropped ORB is no longer the default).
static DEFAULT_ORB: Mutex<Option<std::sync::Weak<OrbInner>>> = Mutex::new(None);

/// The ORB that unmarshals object references on this thread: the one last [`enter`]ed and
/// not yet left, else the process default ([`Orb::set_default`]), else none.
pub fn current() -> Option<Orb> {
    entered().or_else(Orb::process_default)
}

/// The ORB entered on this thread, if any.
fn entered() -> Option<Orb> {
    CURRENT_ORB.try_with(|c| c.borrow().clone()).ok().flatten()
}

/// Makes `orb` this thread's current ORB until the returned guard is dropped, when the
/// previous one (if any) is current again. The runtime enters an ORB while a reply is
/// decoded (the reference's ORB) and while a request is dispatched (the server's ORB).
pub fn enter(orb: &Orb) -> CurrentOrbGuard {
    let previous = CURRENT_ORB
        .try_with(|c| c.replace(Some(orb.clone())))
        .ok()
        .flatten();
    CurrentOrbGuard {
        previous,
        _same_thread: std::marker::PhantomData,
    }
}

/// Restores the previously current ORB when dropped (see [`enter`]). Not `Send`: it must be
/// dropped on the thread that entered.
#[must_use = "the ORB is current only while the guard lives"]
pub struct CurrentOrbGuard {
    previous: Option<Orb>,
    _same_thread: std::marker::PhantomData<*const ()>,
}

impl Drop for CurrentOrbGuard {
    fn drop(&mut self) {
        let previous = self.previous.take();
        let _ = CURRENT_ORB.try_with(|c| c.replace(previous));
    }
}

impl std::fmt::Debug for CurrentOrbGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CurrentOrbGuard").finish_non_exhaustive()
    }
}

/// A weak handle on an ORB, kept by the object references it made.
#[derive(Clone)]
pub(crate) struct WeakOrb(std::sync::Weak<OrbInner>);

impl WeakOrb {
    /// The ORB, if it still exists.
    pub(crate) fn upgrade(&self) -> Option<Orb> {
        self.0.upgrade().map(|inner| Orb { inner })
    }
}

/// Every clone of an ORB is the same ORB; distinct ORBs are unequal.
impl PartialEq for Orb {
    fn eq(&self, other: &Orb) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for Orb {}

impl Orb {
    /// Makes this ORB the process default: the one that unmarshals object references on
    /// threads that entered no ORB (see [`current`]). Replaces any earlier default.
    pub fn set_default(&self) {
        let mut d = DEFAULT_ORB.lock().unwrap_or_else(|p| p.into_inner());
        *d = Some(Arc::downgrade(&self.inner));
    }

    /// Makes this ORB the process default unless a live one is set already; returns whether
    /// it did. `Orb::with_config` calls it, so the first ORB created is the default.
    pub fn claim_default(&self) -> bool {
        let mut d = DEFAULT_ORB.lock().unwrap_or_else(|p| p.into_inner());
        if d.as_ref().is_some_and(|w| w.strong_count() > 0) {
            return false;
        }
        *d = Some(Arc::downgrade(&self.inner));
        true
    }

    /// The process default ORB, if one is set and still exists.
    pub fn process_default() -> Option<Orb> {
        let d = DEFAULT_ORB.lock().unwrap_or_else(|p| p.into_inner());
        d.as_ref()
            .and_then(std::sync::Weak::upgrade)
            .map(|inner| Orb { inner })
    }

    /// The dispatcher the IIOP server runs requests through: the POA registry, with this
    /// ORB entered (see [`enter`]) for the duration of each upcall, so that object references
    /// among the arguments are unmarshalled by this ORB.
    pub fn request_dispatcher(&self) -> Arc<dyn RequestDispatcher> {
        Arc::new(EnteringDispatcher {
            orb: Arc::downgrade(&self.inner),
            registry: self.poa_registry().clone(),
        })
    }

    pub(crate) fn downgrade(&self) -> WeakOrb {
        WeakOrb(Arc::downgrade(&self.inner))
    }

    /// A reference read off the wire (never nil). An IOR this ORB cannot reach (no usable
    /// IIOP profile) still makes a reference, which keeps its IOR for passing on and fails
    /// each call with the reason.
    pub(crate) fn reference_from_wire(&self, ior: Ior) -> ObjectRef {
        match self.object_from_ior(ior.clone()) {
            Ok(obj) => obj.with_orb(self),
            Err(e) => crate::object::unreachable_reference(ior, e).with_orb(self),
        }
    }
}

/// Runs POA dispatch with the ORB entered (see [`Orb::request_dispatcher`]).
struct EnteringDispatcher {
    orb: std::sync::Weak<OrbInner>,
    registry: Arc<PoaRegistry>,
}

impl RequestDispatcher for EnteringDispatcher {
    fn dispatch(
        &self,
        object_key: &[u8],
        request: &mut ServerRequest<'_, '_>,
    ) -> Result<(), DispatchError> {
        let orb = self.orb.upgrade().map(|inner| Orb { inner });
        let _entered = orb.as_ref().map(enter);
        RequestDispatcher::dispatch(&*self.registry, object_key, request)
    }

    fn locate(&self, object_key: &[u8]) -> LocateOutcome {
        RequestDispatcher::locate(&*self.registry, object_key)
    }

    fn accepts_bidir(&self, object_key: &[u8]) -> bool {
        self.registry.is_bidirectional(object_key)
    }
}

#[cfg(test)]
mod current_orb_tests {
    use super::*;

    #[test]
    fn enter_nests_and_restores() {
        let (a, b) = (
            Orb::with_config(OrbConfig::default()),
            Orb::with_config(OrbConfig::default()),
        );
        assert_eq!(entered(), None);
        {
            let _ga = enter(&a);
            assert_eq!(current(), Some(a.clone()));
            {
                let _gb = enter(&b);
                assert_eq!(current(), Some(b.clone()));
            }
            assert_eq!(current(), Some(a.clone()));
        }
        assert_eq!(entered(), None);
        assert_ne!(a, b);
    }
}

// =========================================================================================
// The object key table (used by corbina-naming); `corbaname:` resolution is in `corbaname`.
// =========================================================================================

mod corbaname;
pub use corbaname::corbaname_minor;

impl Orb {
    /// Binds the object key `key` (any bytes not in Corbina's POA key format, such as
    /// `b"NameService"`) to `servant`, served outside any POA, and returns a reference whose
    /// profiles carry exactly `key` (so `corbaloc::host:port/<key>` reaches it).
    pub fn bind_object_key(
        &self,
        key: &[u8],
        servant: Arc<dyn crate::Servant>,
    ) -> Result<ObjectRef, crate::poa::KeyTableError> {
        let type_id = servant.primary_interface();
        self.poa_registry().bind_key(key, servant)?;
        Ok(self.make_reference(type_id, key.to_vec()))
    }

    /// Binds the object key `key` to the POA object `target` (a reference made by one of
    /// this ORB's POAs): requests for `key` go through `target`'s POA as if they named
    /// `target`. Returns a reference whose profiles carry exactly `key`.
    pub fn bind_object_key_to(
        &self,
        key: &[u8],
        target: &ObjectRef,
    ) -> Result<ObjectRef, crate::poa::KeyTableError> {
        let target_key = target
            .ior()
            .iiop_profiles()
            .ok()
            .and_then(|p| p.into_iter().next())
            .map(|p| p.object_key.as_bytes().to_vec())
            .ok_or(crate::poa::KeyTableError::NotAPoaKey)?;
        self.poa_registry().bind_key_to_object(key, &target_key)?;
        Ok(self.make_reference(target.type_id(), key.to_vec()))
    }

    /// Removes `key` from the object key table; returns whether it was bound.
    pub fn unbind_object_key(&self, key: &[u8]) -> bool {
        self.poa_registry().unbind_key(key)
    }
}

#[cfg(test)]
mod initial_reference_tests {
    use super::*;
    use crate::poa::PoaError;

    #[test]
    fn poa_current_is_an_initial_reference() {
        let orb = Orb::with_config(OrbConfig::default());
        assert!(orb
            .list_initial_services()
            .iter()
            .any(|s| s == "POACurrent"));
        let Ok(InitialReference::PoaCurrent(_current)) =
            orb.resolve_initial_references("POACurrent")
        else {
            panic!("POACurrent resolves to PortableServer::Current")
        };
        // Outside an upcall every operation raises NoContext.
        assert!(matches!(Current::get_poa(), Err(PoaError::NoContext)));
        assert!(matches!(Current::get_object_id(), Err(PoaError::NoContext)));
        assert!(matches!(
            orb.resolve_initial_references("POACurrentX"),
            Err(InvalidName(n)) if n == "POACurrentX"
        ));
    }
}
