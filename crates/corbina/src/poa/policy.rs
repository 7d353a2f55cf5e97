//! The seven standard POA policies (`PortableServer::*Policy`), BiDirPolicy's
//! `BidirectionalPolicy`, and the rules for combining them.
//!
//! A [`PolicyList`] holds one value per policy. [`PolicyList::default`] gives the
//! specification's defaults for a child POA; [`PolicyList::root`] gives the RootPOA's.
//! Where the specification reports a bad combination as `InvalidPolicy(index)`, the index is
//! the position of the offending policy in [`PolicyList`]'s field order (see
//! [`PolicyList::validate`]).

/// `ThreadPolicy`: whether calls into the POA may run concurrently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ThreadPolicy {
    /// ORB_CTRL_MODEL: calls run concurrently on the ORB's threads.
    #[default]
    OrbCtrlModel,
    /// SINGLE_THREAD_MODEL: calls into this POA are serialised (one at a time).
    SingleThreadModel,
}

/// `LifespanPolicy`: whether references outlive the process that made them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LifespanPolicy {
    /// TRANSIENT: references fail with OBJECT_NOT_EXIST once this POA (or process) is gone.
    #[default]
    Transient,
    /// PERSISTENT: references name the POA by its path and keep working after a restart.
    Persistent,
}

/// `IdUniquenessPolicy`: whether a servant may incarnate several objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IdUniquenessPolicy {
    /// UNIQUE_ID: a servant is active under at most one object id.
    #[default]
    UniqueId,
    /// MULTIPLE_ID: a servant may be active under many ids.
    MultipleId,
}

/// `IdAssignmentPolicy`: who chooses object ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IdAssignmentPolicy {
    /// USER_ID: the application.
    UserId,
    /// SYSTEM_ID: the POA (8-byte counters, never reused).
    #[default]
    SystemId,
}

/// `ImplicitActivationPolicy`: whether handing out a servant's reference activates it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ImplicitActivationPolicy {
    /// IMPLICIT_ACTIVATION (needs SYSTEM_ID and RETAIN).
    ImplicitActivation,
    /// NO_IMPLICIT_ACTIVATION.
    #[default]
    NoImplicitActivation,
}

/// `ServantRetentionPolicy`: whether the POA keeps an active object map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ServantRetentionPolicy {
    /// RETAIN: active servants are kept in the active object map.
    #[default]
    Retain,
    /// NON_RETAIN: each request finds its servant anew (default servant or locator).
    NonRetain,
}

/// `RequestProcessingPolicy`: where a request goes when the active object map cannot answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RequestProcessingPolicy {
    /// USE_ACTIVE_OBJECT_MAP_ONLY (needs RETAIN).
    #[default]
    UseActiveObjectMapOnly,
    /// USE_DEFAULT_SERVANT: the servant set with `set_servant`.
    UseDefaultServant,
    /// USE_SERVANT_MANAGER: a ServantActivator (RETAIN) or ServantLocator (NON_RETAIN).
    UseServantManager,
}

/// `BiDirPolicy::BidirectionalPolicy` (CORBA 3 §15.9, policy type 37): whether calls may
/// travel over connections the other side opened (bidirectional GIOP). On a client's POA,
/// BOTH lets its objects be called back over the connections it opens to servers (with
/// `-ORBofferBiDirectionalGIOP 1`); on a server's POA, BOTH lets the server take such an
/// offer on requests to its objects (with `-ORBacceptBiDirectionalGIOP 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BidirectionalPolicy {
    /// NORMAL: connections carry calls one way only.
    #[default]
    Normal,
    /// BOTH: connections may carry calls both ways.
    Both,
}

/// The policies of one POA, one field per standard policy.
///
/// Build it with struct update syntax or the `with_*` methods:
/// ```
/// use corbina::poa::{PolicyList, LifespanPolicy, IdAssignmentPolicy};
/// let p = PolicyList::default()
///     .with_lifespan(LifespanPolicy::Persistent)
///     .with_id_assignment(IdAssignmentPolicy::UserId);
/// assert!(p.validate().is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PolicyList {
    /// Index 0.
    pub thread: ThreadPolicy,
    /// Index 1.
    pub lifespan: LifespanPolicy,
    /// Index 2.
    pub id_uniqueness: IdUniquenessPolicy,
    /// Index 3.
    pub id_assignment: IdAssignmentPolicy,
    /// Index 4.
    pub implicit_activation: ImplicitActivationPolicy,
    /// Index 5.
    pub servant_retention: ServantRetentionPolicy,
    /// Index 6.
    pub request_processing: RequestProcessingPolicy,
    /// Index 7: BiDirPolicy's, not PortableServer's (any value combines with the others).
    pub bidirectional: BidirectionalPolicy,
}

/// Index of each policy in [`PolicyList`], as reported by `InvalidPolicy`.
pub mod index {
    /// ThreadPolicy.
    pub const THREAD: u16 = 0;
    /// LifespanPolicy.
    pub const LIFESPAN: u16 = 1;
    /// IdUniquenessPolicy.
    pub const ID_UNIQUENESS: u16 = 2;
    /// IdAssignmentPolicy.
    pub const ID_ASSIGNMENT: u16 = 3;
    /// ImplicitActivationPolicy.
    pub const IMPLICIT_ACTIVATION: u16 = 4;
    /// ServantRetentionPolicy.
    pub const SERVANT_RETENTION: u16 = 5;
    /// RequestProcessingPolicy.
    pub const REQUEST_PROCESSING: u16 = 6;
    /// BiDirPolicy::BidirectionalPolicy.
    pub const BIDIRECTIONAL: u16 = 7;
}

impl PolicyList {
    /// The RootPOA's policies: ORB_CTRL_MODEL, TRANSIENT, UNIQUE_ID, SYSTEM_ID,
    /// IMPLICIT_ACTIVATION, RETAIN, USE_ACTIVE_OBJECT_MAP_ONLY.
    pub fn root() -> PolicyList {
        PolicyList {
            implicit_activation: ImplicitActivationPolicy::ImplicitActivation,
            ..PolicyList::default()
        }
    }

    /// With this ThreadPolicy.
    pub fn with_thread(mut self, v: ThreadPolicy) -> Self {
        self.thread = v;
        self
    }
    /// With this LifespanPolicy.
    pub fn with_lifespan(mut self, v: LifespanPolicy) -> Self {
        self.lifespan = v;
        self
    }
    /// With this IdUniquenessPolicy.
    pub fn with_id_uniqueness(mut self, v: IdUniquenessPolicy) -> Self {
        self.id_uniqueness = v;
        self
    }
    /// With this IdAssignmentPolicy.
    pub fn with_id_assignment(mut self, v: IdAssignmentPolicy) -> Self {
        self.id_assignment = v;
        self
    }
    /// With this ImplicitActivationPolicy.
    pub fn with_implicit_activation(mut self, v: ImplicitActivationPolicy) -> Self {
        self.implicit_activation = v;
        self
    }
    /// With this ServantRetentionPolicy.
    pub fn with_servant_retention(mut self, v: ServantRetentionPolicy) -> Self {
        self.servant_retention = v;
        self
    }
    /// With this RequestProcessingPolicy.
    pub fn with_request_processing(mut self, v: RequestProcessingPolicy) -> Self {
        self.request_processing = v;
        self
    }
    /// With this BidirectionalPolicy.
    pub fn with_bidirectional(mut self, v: BidirectionalPolicy) -> Self {
        self.bidirectional = v;
        self
    }

    /// Checks the combination; `Err(index)` names the policy that conflicts:
    ///
    /// - IMPLICIT_ACTIVATION needs SYSTEM_ID and RETAIN → [`index::IMPLICIT_ACTIVATION`];
    /// - USE_ACTIVE_OBJECT_MAP_ONLY needs RETAIN → [`index::REQUEST_PROCESSING`].
    pub fn validate(&self) -> Result<(), u16> {
        if self.implicit_activation == ImplicitActivationPolicy::ImplicitActivation
            && (self.id_assignment != IdAssignmentPolicy::SystemId || !self.retain())
        {
            return Err(index::IMPLICIT_ACTIVATION);
        }
        if self.request_processing == RequestProcessingPolicy::UseActiveObjectMapOnly
            && !self.retain()
        {
            return Err(index::REQUEST_PROCESSING);
        }
        Ok(())
    }

    pub(crate) fn retain(&self) -> bool {
        self.servant_retention == ServantRetentionPolicy::Retain
    }
    pub(crate) fn unique_id(&self) -> bool {
        self.id_uniqueness == IdUniquenessPolicy::UniqueId
    }
    pub(crate) fn system_id(&self) -> bool {
        self.id_assignment == IdAssignmentPolicy::SystemId
    }
    pub(crate) fn implicit(&self) -> bool {
        self.implicit_activation == ImplicitActivationPolicy::ImplicitActivation
    }
    pub(crate) fn persistent(&self) -> bool {
        self.lifespan == LifespanPolicy::Persistent
    }
    pub(crate) fn single_thread(&self) -> bool {
        self.thread == ThreadPolicy::SingleThreadModel
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_specification() {
        let d = PolicyList::default();
        assert_eq!(d.thread, ThreadPolicy::OrbCtrlModel);
        assert_eq!(d.lifespan, LifespanPolicy::Transient);
        assert_eq!(d.id_uniqueness, IdUniquenessPolicy::UniqueId);
        assert_eq!(d.id_assignment, IdAssignmentPolicy::SystemId);
        assert_eq!(
            d.implicit_activation,
            ImplicitActivationPolicy::NoImplicitActivation
        );
        assert_eq!(d.servant_retention, ServantRetentionPolicy::Retain);
        assert_eq!(
            d.request_processing,
            RequestProcessingPolicy::UseActiveObjectMapOnly
        );
        assert!(d.validate().is_ok());
        let r = PolicyList::root();
        assert!(r.implicit());
        assert!(r.validate().is_ok());
    }

    #[test]
    fn invalid_combinations_name_the_policy() {
        let p = PolicyList::default().with_servant_retention(ServantRetentionPolicy::NonRetain);
        assert_eq!(p.validate(), Err(index::REQUEST_PROCESSING));
        let p = PolicyList::root().with_id_assignment(IdAssignmentPolicy::UserId);
        assert_eq!(p.validate(), Err(index::IMPLICIT_ACTIVATION));
        let p = PolicyList::root()
            .with_servant_retention(ServantRetentionPolicy::NonRetain)
            .with_request_processing(RequestProcessingPolicy::UseDefaultServant);
        assert_eq!(p.validate(), Err(index::IMPLICIT_ACTIVATION));
        let p = PolicyList::default()
            .with_servant_retention(ServantRetentionPolicy::NonRetain)
            .with_request_processing(RequestProcessingPolicy::UseServantManager);
        assert!(p.validate().is_ok());
    }
}
