//! An `Any`-heavy interface, server side: a property store holding values of any IDL type,
//! kept as received (TypeCode and CDR bytes), so a type this server was not compiled with
//! is stored and returned unchanged.
//!
//! ```text
//! cargo run -p corbina-examples --bin any-server -- [--ior-file FILE]
//! ```
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use corbina::{Any, SystemException};
use corbina_examples::examples::{
    property_store, PropertyStoreServant, PropertyStoreSkeleton, UnknownKey,
};
use corbina_examples::{describe_any, publish, server_init, BoxError};

#[derive(Default)]
struct PropertyStore(Mutex<BTreeMap<String, Any>>);

impl PropertyStore {
    fn map(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Any>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl PropertyStoreServant for PropertyStore {
    fn set(&self, key: &str, value: &Any) -> Result<(), SystemException> {
        // An `Any` is cheap to clone (its bytes are shared).
        self.map().insert(key.to_owned(), value.clone());
        Ok(())
    }

    fn get(&self, key: &str) -> Result<Any, property_store::GetError> {
        self.map().get(key).cloned().ok_or_else(|| {
            UnknownKey {
                key: key.to_owned(),
            }
            .into()
        })
    }

    fn keys(&self) -> Result<Vec<String>, SystemException> {
        Ok(self.map().keys().cloned().collect())
    }

    fn describe(&self, value: &Any) -> Result<String, SystemException> {
        Ok(describe_any(value))
    }
}

fn run() -> Result<(), BoxError> {
    let (orb, ior_file, _) = server_init()?;
    let poa = orb.root_poa();
    let id = poa.activate_object(Arc::new(PropertyStoreSkeleton::new(
        PropertyStore::default(),
    )))?;
    let obj = poa.id_to_reference(&id)?;
    poa.the_poa_manager().activate()?;
    publish(&orb.object_to_string(&obj)?, ior_file.as_deref())?;
    orb.run();
    Ok(())
}

fn main() -> std::process::ExitCode {
    corbina_examples::exit(run())
}
