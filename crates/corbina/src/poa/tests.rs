//! Unit tests of the POA's internal pieces; end-to-end tests are in `tests/poa.rs`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::aom::ActiveObjectMap;
use super::manager::CallCounter;
use super::*;
use crate::{Servant, ServerRequest, SystemExceptionKind};

/// A servant that answers every request with an empty reply (also for the other POA
/// modules' unit tests).
pub(super) struct S;
impl Servant for S {
    fn primary_interface(&self) -> &'static str {
        "IDL:S:1.0"
    }
    fn is_a(&self, _: &str) -> bool {
        false
    }
    fn dispatch(&self, _: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        Ok(())
    }
}

pub(super) fn servant() -> Arc<dyn Servant> {
    Arc::new(S)
}

#[test]
fn object_id_looks_up_by_slice() {
    let mut m = HashMap::new();
    m.insert(ObjectId::from("abc"), 1);
    assert_eq!(m.get(&b"abc"[..]), Some(&1));
    assert_eq!(
        format!("{:?}", ObjectId::from(&[0u8, b'a'])),
        "ObjectId(%00a)"
    );
}

#[test]
fn aom_unique_id_reverse_map() {
    let aom = ActiveObjectMap::default();
    let a = servant();
    let b = servant();
    aom.insert("1".into(), a.clone(), true).unwrap();
    assert_eq!(
        aom.insert("1".into(), b.clone(), true),
        Err(PoaError::ObjectAlreadyActive)
    );
    assert_eq!(
        aom.insert("2".into(), a.clone(), true),
        Err(PoaError::ServantAlreadyActive)
    );
    assert_eq!(aom.id_of(&a), Some(ObjectId::from("1")));
    assert_eq!(aom.id_of(&b), None);
    let r = aom.remove(b"1").unwrap();
    assert!(r.etherealize_now);
    assert!(!r.entry.remaining());
    assert_eq!(aom.id_of(&a), None);
    assert!(aom.remove(b"1").is_err());
    // The servant may be activated again once deactivated.
    aom.insert("2".into(), a.clone(), true).unwrap();
    assert_eq!(aom.len(), 1);
}

#[test]
fn aom_multiple_id_counts_remaining_activations() {
    let aom = ActiveObjectMap::default();
    let a = servant();
    for id in ["1", "2", "3"] {
        aom.insert(id.into(), a.clone(), false).unwrap();
    }
    assert!(aom.remove(b"1").unwrap().entry.remaining());
    assert!(aom.is_active(&a));
    assert!(aom.id_of(&a).is_none(), "no one id under MULTIPLE_ID");
    let drained = aom.drain();
    assert_eq!(drained.len(), 2);
    assert_eq!(drained.iter().filter(|r| r.entry.remaining()).count(), 1);
    assert!(drained.iter().all(|r| r.etherealize_now));
    assert_eq!(aom.len(), 0);
    assert!(!aom.is_active(&a));
}

#[test]
fn deactivation_during_a_call_etherealizes_once_after_it() {
    let aom = ActiveObjectMap::default();
    aom.insert("x".into(), servant(), true).unwrap();
    let c1 = aom.begin_call(b"x").unwrap();
    let c2 = aom.begin_call(b"x").unwrap();
    let r = aom.remove(b"x").unwrap();
    assert!(!r.etherealize_now, "calls are running");
    assert!(aom.begin_call(b"x").is_none(), "no new calls");
    assert!(!c1.end_call());
    assert!(c2.end_call(), "the last call etherealizes");
    // A call that ends before deactivation does not etherealize.
    aom.insert("y".into(), servant(), true).unwrap();
    let c = aom.begin_call(b"y").unwrap();
    assert!(!c.end_call());
    assert!(aom.remove(b"y").unwrap().etherealize_now);
}

#[test]
fn call_counter_waits_for_calls() {
    let c = Arc::new(CallCounter::default());
    c.wait_idle();
    let c2 = c.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let t = std::thread::spawn(move || {
        let ticket = c2.begin();
        tx.send(()).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        drop(ticket);
    });
    rx.recv().unwrap();
    let start = std::time::Instant::now();
    c.wait_idle();
    assert!(start.elapsed() >= Duration::from_millis(20));
    t.join().unwrap();
}

#[test]
fn manager_gate_by_state() {
    let m = PoaManager::new();
    assert_eq!(m.get_state(), PoaManagerState::Holding);
    let e = m.enter(Duration::from_millis(10), || false).err().unwrap();
    assert_eq!(e.kind, SystemExceptionKind::Transient);
    let e = m.enter(Duration::from_secs(10), || true).err().unwrap();
    assert_eq!(e.kind, SystemExceptionKind::ObjectNotExist);
    m.activate().unwrap();
    assert!(m.enter(Duration::ZERO, || false).is_ok());
    m.discard_requests(false).unwrap();
    let e = m.enter(Duration::ZERO, || false).err().unwrap();
    assert_eq!(
        (e.kind, e.minor),
        (SystemExceptionKind::Transient, minor::TRANSIENT_DISCARDING)
    );
    m.deactivate(false, false).unwrap();
    let e = m.enter(Duration::ZERO, || false).err().unwrap();
    assert_eq!(
        (e.kind, e.minor),
        (SystemExceptionKind::ObjAdapter, minor::OBJ_ADAPTER_INACTIVE)
    );
    assert_eq!(m.activate(), Err(PoaError::AdapterInactive));
    assert_eq!(format!("{m:?}"), "PoaManager { state: Inactive }");
}

#[test]
fn errors_display_their_idl_names() {
    assert_eq!(
        PoaError::InvalidPolicy(6).to_string(),
        "InvalidPolicy (index 6)"
    );
    assert_eq!(PoaError::WrongAdapter.to_string(), "WrongAdapter");
    let d: DispatchError = SystemException::new(SystemExceptionKind::Transient, 1).into();
    assert!(matches!(d, DispatchError::System(e) if e.kind == SystemExceptionKind::Transient));
}
