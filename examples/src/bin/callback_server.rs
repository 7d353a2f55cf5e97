//! Callbacks, server side: clients `subscribe` with a reference to their own `Listener`
//! object, and `publish` calls every listener of a topic back.
//!
//! ```text
//! cargo run -p corbina-examples --bin callback-server -- [--ior-file FILE]
//! ```
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use corbina::{SystemException, SystemExceptionKind};
use corbina_examples::examples::{
    publisher, Listener, NoListener, PublisherServant, PublisherSkeleton,
};
use corbina_examples::{publish, server_init, BoxError};

#[derive(Default)]
struct Publisher {
    /// Listener proxies by topic: a proxy is a reference, cheap to clone, and opens its
    /// connection (to the client's ORB) on the first call.
    listeners: Mutex<HashMap<String, Vec<Listener>>>,
}

impl PublisherServant for Publisher {
    fn subscribe(&self, topic: &str, who: Option<&Listener>) -> Result<(), SystemException> {
        // IDL lets any reference be nil; a nil listener is the caller's mistake: BAD_PARAM.
        let who = who.ok_or_else(|| {
            SystemException::new(SystemExceptionKind::BadParam, corbina::cdr::OMG_VMCID | 1)
        })?;
        let mut listeners = self.listeners.lock().unwrap_or_else(|p| p.into_inner());
        listeners
            .entry(topic.to_owned())
            .or_default()
            .push(who.clone());
        Ok(())
    }

    fn publish(&self, topic: &str, count: i32) -> Result<i32, publisher::PublishError> {
        // Not holding the lock during the calls back: a listener may subscribe meanwhile.
        let listeners = self
            .listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(topic)
            .cloned()
            .unwrap_or_default();
        if listeners.is_empty() {
            return Err(NoListener {
                topic: topic.to_owned(),
            }
            .into());
        }
        for seq in 0..count {
            for l in &listeners {
                l.on_event(topic, seq)?;
            }
        }
        Ok(listeners.len() as i32)
    }
}

fn run() -> Result<(), BoxError> {
    let (orb, ior_file, _) = server_init()?;
    let poa = orb.root_poa();
    let id = poa.activate_object(Arc::new(PublisherSkeleton::new(Publisher::default())))?;
    let obj = poa.id_to_reference(&id)?;
    poa.the_poa_manager().activate()?;
    publish(&orb.object_to_string(&obj)?, ior_file.as_deref())?;
    orb.run();
    Ok(())
}

fn main() -> std::process::ExitCode {
    corbina_examples::exit(run())
}
