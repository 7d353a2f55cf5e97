//! The object key table: objects reached by a fixed, human-chosen object key such as
//! `NameService`, so that `corbaloc::host:2809/NameService` works (omniORB's INS POA, TAO's
//! `IORTable`).
//!
//! POA keys have Corbina's own format (see [`super::key`]); a key that does not decode as one
//! is looked up here with one hash lookup before the request is refused. An entry is either
//! a servant of its own (served with no POA: no POA manager gate and no
//! `PortableServer::Current`) or an alias of a POA object's key, dispatched through that POA
//! as if the client had used the POA key.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use thiserror::Error;

use super::registry::PoaRegistry;
use super::{key, minor, DispatchError, LocateOutcome};
use crate::{Servant, ServerRequest, SystemException, SystemExceptionKind};

/// Why a key could not be bound in the object key table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum KeyTableError {
    /// The key is bound already (unbind it first).
    #[error("the object key is bound already")]
    AlreadyBound,
    /// The key has Corbina's POA key format, so requests for it go to the POAs, never here.
    #[error("the object key has the POA key format and cannot be bound in the key table")]
    PoaKeyFormat,
    /// An alias must name a POA object's key (Corbina's format), not another table entry.
    #[error("an alias must name a POA object key")]
    NotAPoaKey,
}

/// What a key in the table leads to.
#[derive(Clone)]
enum Entry {
    Servant(Arc<dyn Servant>),
    Alias(Arc<[u8]>),
}

/// Keys outside the POA key format, each bound to a servant or a POA object.
#[derive(Default)]
pub(crate) struct ObjectKeyTable {
    /// foldhash (keyed per process): consulted for every request whose key is not a POA key.
    map: RwLock<HashMap<Box<[u8]>, Entry, foldhash::fast::RandomState>>,
}

impl ObjectKeyTable {
    fn insert(&self, key: &[u8], entry: Entry) -> Result<(), KeyTableError> {
        if key::decode(key).is_some() {
            return Err(KeyTableError::PoaKeyFormat);
        }
        let mut map = self.map.write().unwrap_or_else(|e| e.into_inner());
        if map.contains_key(key) {
            return Err(KeyTableError::AlreadyBound);
        }
        map.insert(key.into(), entry);
        Ok(())
    }

    fn get(&self, key: &[u8]) -> Option<Entry> {
        self.map
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .cloned()
    }
}

fn no_adapter() -> SystemException {
    SystemException::new(
        SystemExceptionKind::ObjectNotExist,
        minor::OBJECT_NOT_EXIST_NO_ADAPTER,
    )
}

impl PoaRegistry {
    /// Binds `key` (which must not have the POA key format) to `servant`: requests whose
    /// object key is exactly `key` are dispatched to it. The servant is served outside any
    /// POA (no POA manager, no `PortableServer::Current`).
    pub fn bind_key(&self, key: &[u8], servant: Arc<dyn Servant>) -> Result<(), KeyTableError> {
        self.keys.insert(key, Entry::Servant(servant))
    }

    /// Binds `key` to the POA object whose key is `target` (from [`super::Poa::object_key`]):
    /// requests for `key` are dispatched exactly as requests for `target`.
    pub fn bind_key_to_object(&self, key: &[u8], target: &[u8]) -> Result<(), KeyTableError> {
        if key::decode(target).is_none() {
            return Err(KeyTableError::NotAPoaKey);
        }
        self.keys.insert(key, Entry::Alias(target.into()))
    }

    /// Removes `key` from the table; returns whether it was bound.
    pub fn unbind_key(&self, key: &[u8]) -> bool {
        self.keys
            .map
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key)
            .is_some()
    }

    /// Dispatches a request whose key is not in the POA format (one hash lookup).
    pub(super) fn dispatch_table_key(
        &self,
        object_key: &[u8],
        request: &mut ServerRequest<'_, '_>,
    ) -> Result<(), DispatchError> {
        match self.keys.get(object_key) {
            Some(Entry::Servant(s)) => s.dispatch(request).map_err(DispatchError::System),
            // Aliases name POA keys only (checked when bound): this cannot recurse.
            Some(Entry::Alias(target)) => self.dispatch(&target, request),
            None => Err(no_adapter().into()),
        }
    }

    /// Answers a LocateRequest for a key not in the POA format.
    pub(super) fn locate_table_key(&self, object_key: &[u8]) -> LocateOutcome {
        match self.keys.get(object_key) {
            Some(Entry::Servant(_)) => LocateOutcome::Here,
            Some(Entry::Alias(target)) => self.locate(&target),
            None => LocateOutcome::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdr::{ByteOrder, CdrContext, CdrReader};
    use crate::giop::Ior;
    use crate::poa::{IdAssignmentPolicy, PolicyList, ReferenceFactory};
    use crate::servant::BufferReplySink;
    use crate::{ObjectRef, ServantInvoker};

    struct Named(&'static str);
    impl Servant for Named {
        fn primary_interface(&self) -> &'static str {
            "IDL:Named:1.0"
        }
        fn is_a(&self, id: &str) -> bool {
            id == "IDL:Named:1.0"
        }
        fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
            let name = self.0;
            req.reply(|w| w.write_string(name))
        }
    }

    struct Factory;
    impl ReferenceFactory for Factory {
        fn create_reference(&self, type_id: &str, key: Vec<u8>) -> ObjectRef {
            let ior = Ior {
                type_id: type_id.into(),
                ..Ior::nil()
            };
            let inv = Arc::new(ServantInvoker::new(
                Arc::new(Named("x")),
                CdrContext::GIOP_1_2,
            ));
            ObjectRef::new(ior, key, inv)
        }
    }

    fn call(reg: &PoaRegistry, key: &[u8]) -> Result<String, DispatchError> {
        let mut sink = BufferReplySink {
            context: CdrContext::GIOP_1_2,
            reply: None,
        };
        let mut req = ServerRequest::new(
            "name",
            CdrReader::new(&[], ByteOrder::NATIVE, CdrContext::GIOP_1_2),
            true,
            &mut sink,
        );
        reg.dispatch(key, &mut req)?;
        let (_, body) = sink.reply.unwrap();
        let mut r = CdrReader::new(&body, ByteOrder::NATIVE, CdrContext::GIOP_1_2);
        Ok(r.read_string().unwrap())
    }

    #[test]
    fn servants_and_aliases_are_reached_by_their_keys() {
        let reg = PoaRegistry::new(Arc::new(Factory));
        let root = reg.root_poa();
        root.the_poa_manager().activate().unwrap();
        let child = root
            .create_poa(
                "c",
                Some(root.the_poa_manager()),
                PolicyList::default().with_id_assignment(IdAssignmentPolicy::UserId),
            )
            .unwrap();
        child
            .activate_object_with_id(b"obj".into(), Arc::new(Named("in-poa")))
            .unwrap();
        let target = child.object_key(&b"obj".into());

        reg.bind_key(b"Plain", Arc::new(Named("plain"))).unwrap();
        reg.bind_key_to_object(b"Alias", &target).unwrap();
        assert_eq!(call(&reg, b"Plain").unwrap(), "plain");
        assert_eq!(call(&reg, b"Alias").unwrap(), "in-poa");
        assert_eq!(reg.locate(b"Plain"), LocateOutcome::Here);
        assert_eq!(reg.locate(b"Alias"), LocateOutcome::Here);
        assert_eq!(reg.locate(b"Nothing"), LocateOutcome::Unknown);
        match call(&reg, b"Nothing") {
            Err(DispatchError::System(e)) => {
                assert_eq!(e.kind, SystemExceptionKind::ObjectNotExist)
            }
            _ => panic!("an unbound key must be OBJECT_NOT_EXIST"),
        }

        assert_eq!(
            reg.bind_key(b"Plain", Arc::new(Named("again"))),
            Err(KeyTableError::AlreadyBound)
        );
        assert_eq!(
            reg.bind_key(&target, Arc::new(Named("shadow"))),
            Err(KeyTableError::PoaKeyFormat)
        );
        assert_eq!(
            reg.bind_key_to_object(b"A2", b"Plain"),
            Err(KeyTableError::NotAPoaKey)
        );
        assert!(reg.unbind_key(b"Plain"));
        assert!(!reg.unbind_key(b"Plain"));
        assert_eq!(reg.locate(b"Plain"), LocateOutcome::Unknown);
        // An alias follows the POA object: deactivated, it is gone through the alias too.
        child.deactivate_object(&b"obj".into()).unwrap();
        assert!(call(&reg, b"Alias").is_err());
    }
}
