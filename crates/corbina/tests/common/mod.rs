//! Shared by the DII and DSI tests: the generated bench.idl code (the codegen golden file,
//! so it is the generator's real output), a static Bench servant, and IIOP servers on
//! 127.0.0.1.

#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use corbina::config::Endpoint;
use corbina::{ObjectRef, Orb, OrbConfig, Servant, SystemException};

#[allow(dead_code, clippy::all)]
pub mod bench {
    include!("../../../corbina-codegen/tests/golden/bench.rs");
}

#[allow(dead_code, clippy::all)]
pub mod extra {
    include!("../../../corbina-codegen/tests/golden/extra.rs");
}

use bench::{bench::FailError, BenchError, BenchServant, BinStruct};

/// The bench.idl semantics every peer shares: echo, fail(c) raises BenchError{c,
/// "requested"}, send_* count element count × element size.
#[derive(Default)]
pub struct StaticBench {
    pub bytes: AtomicU64,
}

type R<T = ()> = Result<T, SystemException>;

impl StaticBench {
    fn add(&self, n: usize) -> R {
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(())
    }
}

impl BenchServant for Arc<StaticBench> {
    fn ping(&self) -> R {
        Ok(())
    }
    fn ping_oneway(&self) -> R {
        Ok(())
    }
    fn echo(&self, s: &str) -> R<String> {
        Ok(s.to_owned())
    }
    fn fail(&self, code: i32) -> Result<(), FailError> {
        if code == 0 {
            return Ok(());
        }
        Err(FailError::BenchError(BenchError {
            code,
            reason: "requested".into(),
        }))
    }
    fn send_octets(&self, s: &[u8]) -> R {
        self.add(s.len())
    }
    fn send_octets_oneway(&self, s: &[u8]) -> R {
        self.add(s.len())
    }
    fn send_shorts(&self, s: &[i16]) -> R {
        self.add(s.len() * 2)
    }
    fn send_shorts_oneway(&self, s: &[i16]) -> R {
        self.add(s.len() * 2)
    }
    fn send_longs(&self, s: &[i32]) -> R {
        self.add(s.len() * 4)
    }
    fn send_longs_oneway(&self, s: &[i32]) -> R {
        self.add(s.len() * 4)
    }
    fn send_doubles(&self, s: &[f64]) -> R {
        self.add(s.len() * 8)
    }
    fn send_doubles_oneway(&self, s: &[f64]) -> R {
        self.add(s.len() * 8)
    }
    fn send_chars(&self, s: &[u8]) -> R {
        self.add(s.len())
    }
    fn send_chars_oneway(&self, s: &[u8]) -> R {
        self.add(s.len())
    }
    fn send_structs(&self, s: &[BinStruct]) -> R {
        self.add(s.len() * 24)
    }
    fn send_structs_oneway(&self, s: &[BinStruct]) -> R {
        self.add(s.len() * 24)
    }
    fn start_timer(&self) -> R {
        self.bytes.store(0, Ordering::Relaxed);
        Ok(())
    }
    fn stop_timer(&self) -> R<u64> {
        Ok(self.bytes.load(Ordering::Relaxed))
    }
}

/// A server ORB listening on 127.0.0.1 serving `servant`; returns it and the stringified
/// reference.
pub fn serve(servant: Arc<dyn Servant>) -> (Orb, String) {
    let orb = Orb::with_config(OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..OrbConfig::default()
    });
    let poa = orb.root_poa();
    let id = poa.activate_object(servant).unwrap();
    let obj = poa.id_to_reference(&id).unwrap();
    poa.the_poa_manager().activate().unwrap();
    let ior = orb.object_to_string(&obj).unwrap();
    (orb, ior)
}

/// A separate client ORB's reference to `ior` (so calls go over IIOP).
pub fn client(ior: &str) -> (Orb, ObjectRef) {
    let orb = Orb::with_config(OrbConfig::default());
    let obj = orb.string_to_object(ior).unwrap();
    (orb, obj)
}
