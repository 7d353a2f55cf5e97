//! The Portable Object Adapter (`PortableServer`): maps object keys in requests to servants.
//!
//! One [`PoaRegistry`] per ORB holds the RootPOA and every POA below it. The ORB's
//! transport hands each request's object key to [`PoaRegistry::dispatch`], which
//! demultiplexes in O(1) whatever the number of POAs and objects:
//!
//! 1. [`key::decode`] reads the fixed-layout key (no allocation, no search); a key not in
//!    that format (`NameService`) is one hash lookup in the object key table
//!    ([`PoaRegistry::bind_key`]);
//! 2. the POA is a slab index + generation check (TRANSIENT) or one hash lookup of the
//!    path bytes (PERSISTENT);
//! 3. its [`PoaManager`] gate is one atomic increment and load while active;
//! 4. the servant is one hash lookup in the active object map (read lock), or the default
//!    servant, or a servant manager call;
//! 5. [`Current`] is set (a thread-local push) for the duration of `Servant::dispatch`.
//!
//! References are made by the ORB's [`ReferenceFactory`] from a repository id and a key.
//!
//! ```
//! use std::sync::Arc;
//! use corbina::poa::{PoaRegistry, ReferenceFactory, PolicyList, IdAssignmentPolicy};
//! use corbina::{giop::Ior, ObjectRef, ServantInvoker, Servant, ServerRequest,
//!               SystemException, cdr::CdrContext};
//!
//! struct Hello;
//! impl Servant for Hello {
//!     fn primary_interface(&self) -> &'static str { "IDL:Hello:1.0" }
//!     fn is_a(&self, id: &str) -> bool { id == "IDL:Hello:1.0" }
//!     fn dispatch(&self, _: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
//!         Err(corbina::servant::bad_operation())
//!     }
//! }
//! /// A factory that makes references without endpoints (the ORB's adds its IIOP profiles).
//! struct Factory;
//! impl ReferenceFactory for Factory {
//!     fn create_reference(&self, type_id: &str, key: Vec<u8>) -> ObjectRef {
//!         let ior = Ior { type_id: type_id.into(), ..Ior::nil() };
//!         let inv = Arc::new(ServantInvoker::new(Arc::new(Hello), CdrContext::GIOP_1_2));
//!         ObjectRef::new(ior, key, inv)
//!     }
//! }
//!
//! let registry = PoaRegistry::new(Arc::new(Factory));
//! let root = registry.root_poa();
//! root.the_poa_manager().activate().unwrap();
//! let child = root
//!     .create_poa("child", None, PolicyList::default().with_id_assignment(IdAssignmentPolicy::UserId))
//!     .unwrap();
//! child.activate_object_with_id(b"hello".into(), Arc::new(Hello)).unwrap();
//! let r = child.id_to_reference(&b"hello".into()).unwrap();
//! assert_eq!(r.type_id(), "IDL:Hello:1.0");
//! ```

use std::fmt;

use thiserror::Error;

use crate::{ObjectRef, SystemException};

mod aom;
mod current;
pub mod key;
mod manager;
#[allow(clippy::module_inception)]
mod poa;
pub mod policy;
mod registry;
mod servant_manager;
mod table;
#[cfg(test)]
mod tests;

pub(crate) use current::defer_upcall;
pub use current::Current;
pub use manager::{PoaManager, PoaManagerState};
pub(crate) use poa::DeferredCall;
pub use poa::Poa;
pub use policy::{
    BidirectionalPolicy, IdAssignmentPolicy, IdUniquenessPolicy, ImplicitActivationPolicy,
    LifespanPolicy, PolicyList, RequestProcessingPolicy, ServantRetentionPolicy, ThreadPolicy,
};
pub use registry::{PoaRegistry, DEFAULT_MAX_HOLD_WAIT};
pub use servant_manager::{
    AdapterActivator, Cookie, ServantActivator, ServantLocator, ServantManager,
};
pub use table::KeyTableError;

/// How the ORB makes object references for the POA: an IOR with the ORB's endpoints and
/// `object_key`, and the invoker that reaches it.
pub trait ReferenceFactory: Send + Sync {
    /// A reference of type `type_id` whose profiles carry `object_key`.
    fn create_reference(&self, type_id: &str, object_key: Vec<u8>) -> ObjectRef;
}

/// `PortableServer::ObjectId`: the bytes naming an object within its POA.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ObjectId(pub Vec<u8>);

impl ObjectId {
    /// The id's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ObjectId({})",
            crate::giop::ObjectKey::new(self.0.clone())
        )
    }
}

impl std::borrow::Borrow<[u8]> for ObjectId {
    fn borrow(&self) -> &[u8] {
        &self.0
    }
}

impl From<Vec<u8>> for ObjectId {
    fn from(v: Vec<u8>) -> Self {
        ObjectId(v)
    }
}
impl From<&[u8]> for ObjectId {
    fn from(v: &[u8]) -> Self {
        ObjectId(v.to_vec())
    }
}
impl<const N: usize> From<&[u8; N]> for ObjectId {
    fn from(v: &[u8; N]) -> Self {
        ObjectId(v.to_vec())
    }
}
impl From<&str> for ObjectId {
    fn from(v: &str) -> Self {
        ObjectId(v.as_bytes().to_vec())
    }
}

/// The `PortableServer` and `POAManager` user exceptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
pub enum PoaError {
    /// `POA::AdapterAlreadyExists`: a child of that name exists.
    #[error("AdapterAlreadyExists")]
    AdapterAlreadyExists,
    /// `POA::AdapterNonExistent`: no child of that name (and none could be activated).
    #[error("AdapterNonExistent")]
    AdapterNonExistent,
    /// `POA::InvalidPolicy`: the policy at this index of [`PolicyList`] conflicts.
    #[error("InvalidPolicy (index {0})")]
    InvalidPolicy(u16),
    /// `POA::NoServant`: no default servant.
    #[error("NoServant")]
    NoServant,
    /// `POA::ObjectAlreadyActive`: the id is in use.
    #[error("ObjectAlreadyActive")]
    ObjectAlreadyActive,
    /// `POA::ObjectNotActive`: the id is not active.
    #[error("ObjectNotActive")]
    ObjectNotActive,
    /// `POA::ServantAlreadyActive`: UNIQUE_ID and the servant is active under another id.
    #[error("ServantAlreadyActive")]
    ServantAlreadyActive,
    /// `POA::ServantNotActive`: the servant is not active.
    #[error("ServantNotActive")]
    ServantNotActive,
    /// `POA::WrongAdapter`: the reference was not made by this POA.
    #[error("WrongAdapter")]
    WrongAdapter,
    /// `POA::WrongPolicy`: the POA's policies do not allow the operation.
    #[error("WrongPolicy")]
    WrongPolicy,
    /// `POAManager::AdapterInactive`: the manager was deactivated.
    #[error("AdapterInactive")]
    AdapterInactive,
    /// `Current::NoContext`: not inside an upcall.
    #[error("NoContext")]
    NoContext,
}

/// Why a request was not dispatched to a servant.
#[derive(Debug, Clone, Error)]
pub enum DispatchError {
    /// Send this system exception as the reply.
    #[error(transparent)]
    System(SystemException),
    /// A servant manager raised `ForwardRequest`: reply LOCATION_FORWARD (or
    /// LOCATION_FORWARD_PERM when `permanent`) with `reference`'s IOR.
    #[error("ForwardRequest (permanent: {permanent})")]
    Forward {
        /// Where the client should go.
        reference: ObjectRef,
        /// LOCATION_FORWARD_PERM.
        permanent: bool,
    },
}

impl From<SystemException> for DispatchError {
    fn from(e: SystemException) -> Self {
        DispatchError::System(e)
    }
}

/// The answer to a LocateRequest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocateOutcome {
    /// OBJECT_HERE: a request would be dispatched here (or to a servant manager).
    Here,
    /// UNKNOWN_OBJECT.
    Unknown,
    /// OBJECT_FORWARD(_PERM). The POA itself never answers this (it calls no servant manager
    /// for a LocateRequest); the variant is for the ORB's own forwarding.
    Forward {
        /// Where the object is.
        ior: crate::giop::Ior,
        /// OBJECT_FORWARD_PERM.
        permanent: bool,
    },
}

/// The minor codes the POA raises (defined in [`crate::error::minor`]).
pub mod minor {
    pub use crate::error::minor::{
        OBJECT_NOT_EXIST_NO_ADAPTER, OBJECT_NOT_EXIST_NO_OBJECT, OBJ_ADAPTER_INACTIVE,
        OBJ_ADAPTER_INCARNATE_POLICY, OBJ_ADAPTER_NO_DEFAULT_SERVANT,
        OBJ_ADAPTER_NO_SERVANT_MANAGER, TRANSIENT_DISCARDING,
    };
}
