//! Servant managers and adapter activators: application callbacks the POA calls when a
//! request names an object (or a POA) that is not there yet.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use super::{DispatchError, ObjectId, Poa};
use crate::Servant;

/// `PortableServer::ServantActivator`: incarnates servants on demand for a RETAIN POA with
/// USE_SERVANT_MANAGER; the POA keeps them in its active object map until they are
/// deactivated, then hands them back to [`etherealize`](ServantActivator::etherealize).
pub trait ServantActivator: Send + Sync {
    /// Returns a servant for `oid`, or a [`DispatchError::Forward`] (`ForwardRequest`) or a
    /// system exception. Called at most once per activation, whatever the concurrency.
    fn incarnate(&self, oid: &ObjectId, adapter: &Poa) -> Result<Arc<dyn Servant>, DispatchError>;

    /// Called when `oid` is deactivated (after its last call) or its POA is destroyed
    /// (`cleanup_in_progress`). `remaining_activations` is true if the servant is still
    /// active under other ids.
    fn etherealize(
        &self,
        oid: &ObjectId,
        adapter: &Poa,
        servant: Arc<dyn Servant>,
        cleanup_in_progress: bool,
        remaining_activations: bool,
    );
}

/// The value a [`ServantLocator`] passes from `preinvoke` to `postinvoke`
/// (`ServantLocator::Cookie`).
pub type Cookie = Box<dyn Any + Send>;

/// `PortableServer::ServantLocator`: finds a servant for every request of a NON_RETAIN POA
/// with USE_SERVANT_MANAGER.
pub trait ServantLocator: Send + Sync {
    /// Returns the servant for this call and a cookie for `postinvoke`, or a
    /// `ForwardRequest`/system exception.
    fn preinvoke(
        &self,
        oid: &ObjectId,
        adapter: &Poa,
        operation: &str,
    ) -> Result<(Arc<dyn Servant>, Cookie), DispatchError>;

    /// Called after the servant's upcall, whatever its outcome.
    fn postinvoke(
        &self,
        oid: &ObjectId,
        adapter: &Poa,
        operation: &str,
        cookie: Cookie,
        servant: Arc<dyn Servant>,
    );
}

/// The servant manager of a POA: an activator for RETAIN POAs, a locator for NON_RETAIN.
#[derive(Clone)]
pub enum ServantManager {
    /// `ServantActivator`.
    Activator(Arc<dyn ServantActivator>),
    /// `ServantLocator`.
    Locator(Arc<dyn ServantLocator>),
}

impl fmt::Debug for ServantManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ServantManager::Activator(_) => "ServantManager::Activator",
            ServantManager::Locator(_) => "ServantManager::Locator",
        })
    }
}

/// `PortableServer::AdapterActivator`: creates child POAs on demand, when a request (or
/// `find_poa(name, true)`) names one that does not exist.
pub trait AdapterActivator: Send + Sync {
    /// Creates the child `name` of `parent` (with `parent.create_poa`) and returns true, or
    /// returns false if it cannot.
    fn unknown_adapter(&self, parent: &Poa, name: &str) -> bool;
}
