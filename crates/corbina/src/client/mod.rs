//! The client side of IIOP: ropes of strands per server address, and the invoker that
//! carries a call over them.

mod invoker;
mod rope;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub use invoker::IiopInvoker;
pub use rope::{Rope, Strand, StrandSettings};

use crate::config::OrbConfig;

/// What every client call of an ORB shares: its configuration and its ropes, one per
/// server address, so that all references to one server share its connections.
pub struct ClientContext {
    pub(crate) config: OrbConfig,
    ropes: Mutex<HashMap<(String, u16), Arc<Rope>>>,
}

impl ClientContext {
    /// A context with no connections yet.
    pub fn new(config: OrbConfig) -> ClientContext {
        ClientContext {
            config,
            ropes: Mutex::new(HashMap::new()),
        }
    }

    /// The rope to `host:port`, created on first use (no connection is opened here).
    pub fn rope(&self, host: &str, port: u16) -> Arc<Rope> {
        let mut ropes = self.ropes.lock().unwrap_or_else(|p| p.into_inner());
        ropes
            .entry((host.to_owned(), port))
            .or_insert_with(|| {
                Arc::new(Rope::new(
                    host.to_owned(),
                    port,
                    StrandSettings {
                        connect_timeout: self.config.connect_timeout,
                        max_strands: self.config.max_strands_per_rope.max(1),
                        socket_buffer_size: self.config.socket_buffer_size,
                        max_message_size: self.config.max_message_size,
                    },
                ))
            })
            .clone()
    }

    /// Every rope, for the scavenger and for tests.
    pub fn ropes(&self) -> Vec<Arc<Rope>> {
        let ropes = self.ropes.lock().unwrap_or_else(|p| p.into_inner());
        ropes.values().cloned().collect()
    }
}
