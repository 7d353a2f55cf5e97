//! Local interfaces and never-defined interfaces (tests/idl/local.idl): the generated traits
//! are implemented in Rust, passed to each other, registered with the ORB as
//! locality-constrained objects and narrowed back; a local object is never marshalled.

#[allow(dead_code)]
mod gen_local {
    include!("golden/local.rs");
}

use corbina::cdr::{ByteOrder, CdrContext, CdrDecode, CdrEncode, CdrReader, CdrWriter, CodeSets};
use corbina::local::{LocalObject, LocalRef};
use corbina::{InitialReference, ObjectRef, ServantInvoker, SystemException};
use gen_local::r#loc::*;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

struct Counter {
    id: i32,
    count: AtomicI32,
    heard: Mutex<Vec<String>>,
}

impl Base for Counter {
    fn id(&self) -> Result<i32, SystemException> {
        Ok(self.id)
    }
}

impl Listener for Counter {
    fn notify(&self, what: &str, source: Option<&Remote>) -> Result<(), SystemException> {
        assert!(source.is_none());
        self.heard.lock().unwrap().push(what.to_string());
        self.count.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
    fn get_count(&self) -> Result<i32, SystemException> {
        Ok(self.count.load(Ordering::Relaxed))
    }
    fn set_count(&self, value: i32) -> Result<(), SystemException> {
        self.count.store(value, Ordering::Relaxed);
        Ok(())
    }
}

fn counter(id: i32) -> LocalRef<dyn Listener> {
    LocalRef::new(Arc::new(Counter {
        id,
        count: AtomicI32::new(0),
        heard: Mutex::new(Vec::new()),
    }))
}

#[derive(Default)]
struct Reg(Mutex<Vec<LocalRef<dyn Listener>>>);

impl Base for Reg {
    fn id(&self) -> Result<i32, SystemException> {
        Ok(0)
    }
}

impl Registry for Reg {
    fn add(&self, l: Option<&LocalRef<dyn Listener>>) -> Result<(), registry::AddError> {
        let l = l.ok_or_else(|| Refused { why: "nil".into() })?;
        l.notify("added", None)?;
        self.0.lock().unwrap().push(l.clone());
        Ok(())
    }
    fn find(&self, id: i32) -> Result<Option<LocalRef<dyn Listener>>, SystemException> {
        for l in self.0.lock().unwrap().iter() {
            if l.id()? == id {
                return Ok(Some(l.clone()));
            }
        }
        Ok(None)
    }
    fn swap(
        &self,
        l: &mut Option<LocalRef<dyn Listener>>,
    ) -> Result<Option<LocalRef<dyn Registry>>, SystemException> {
        *l = self.0.lock().unwrap().first().cloned();
        Ok(None)
    }
    fn opaque(
        &self,
        e: Option<&Elsewhere>,
    ) -> Result<Option<LocalRef<dyn LocalElsewhere>>, SystemException> {
        assert!(e.is_none());
        Ok(None)
    }
}

#[test]
fn local_objects_are_called_directly_and_passed_to_each_other() {
    let reg: LocalRef<dyn Registry> = LocalRef::new(Arc::new(Reg::default()));
    let a = counter(1);
    reg.add(Some(&a)).unwrap();
    reg.add(Some(&counter(2))).unwrap();
    assert_eq!(
        reg.add(None).unwrap_err(),
        registry::AddError::Refused(Refused { why: "nil".into() })
    );
    let found = reg.find(1).unwrap().unwrap();
    assert_eq!(found, a, "one object, one identity");
    assert_ne!(found, reg.find(2).unwrap().unwrap());
    assert_eq!(found.get_count().unwrap(), 1);
    found.set_count(5).unwrap();
    assert_eq!(a.get_count().unwrap(), 5);
    let mut slot = None;
    reg.swap(&mut slot).unwrap();
    assert_eq!(slot, Some(a));
    assert!(reg.opaque(None).unwrap().is_none());
}

#[test]
fn local_objects_register_with_the_orb_and_narrow_to_their_bases() {
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let reg: LocalRef<dyn Registry> = LocalRef::new(Arc::new(Reg::default()));
    orb.register_initial_reference("Registry", <dyn Registry>::to_local_object(reg.clone()))
        .unwrap();
    // Taken names: the ORB's own, the empty name, and a second registration.
    for name in ["Registry", "RootPOA", ""] {
        let obj = LocalObject::new(counter(3));
        assert!(
            orb.register_initial_reference(name, obj).is_err(),
            "{name:?}"
        );
    }
    assert!(orb
        .list_initial_services()
        .contains(&"Registry".to_string()));
    let Ok(InitialReference::Local(obj)) = orb.resolve_initial_references("Registry") else {
        panic!("not a local object")
    };
    assert_eq!(obj.repository_id(), "IDL:Loc/Registry:1.0");
    assert!(obj.is_a("IDL:Loc/Base:1.0"));
    assert!(obj.is_a("IDL:omg.org/CORBA/LocalObject:1.0"));
    assert!(!obj.is_a("IDL:Loc/Listener:1.0"));
    let again = obj.narrow::<dyn Registry>().unwrap();
    assert_eq!(again, reg);
    again.add(Some(&counter(7))).unwrap();
    assert_eq!(reg.find(7).unwrap().unwrap().id().unwrap(), 7);
    let base = obj.narrow::<dyn Base>().unwrap();
    assert_eq!(base.id().unwrap(), 0);
    assert!(obj.narrow::<dyn Listener>().is_none());
    assert_eq!(
        <dyn Registry>::type_code().kind(),
        corbina::typecode::TcKind::LocalInterface
    );
}

fn ctx() -> CdrContext {
    CdrContext::GIOP_1_2.with_code_sets(CodeSets::UNICODE)
}

#[test]
fn a_local_object_is_never_marshalled() {
    let nil = Holder {
        l: None,
        e: None,
        all: vec![None, None],
    };
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, ctx());
    nil.encode(&mut w).unwrap();
    let bytes = w.into_bytes();
    let mut r = CdrReader::new(&bytes, ByteOrder::Big, ctx());
    assert_eq!(Holder::decode(&mut r).unwrap(), nil);
    for h in [
        Holder {
            l: Some(counter(1)),
            ..nil.clone()
        },
        Holder {
            all: vec![None, Some(counter(2))],
            ..nil.clone()
        },
    ] {
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, ctx());
        let e = h.encode(&mut w).unwrap_err();
        assert_eq!(
            SystemException::from(e).kind,
            corbina::SystemExceptionKind::Marshal
        );
    }
}

/// A servant for an interface whose operations take and return a never-defined interface.
struct Echo;

impl UsesElsewhereServant for Echo {
    fn pass(&self, e: Option<&Elsewhere>) -> Result<Option<Elsewhere>, SystemException> {
        Ok(e.cloned())
    }
}

#[test]
fn a_never_defined_interface_is_a_reference_type() {
    let obj = ObjectRef::new(
        corbina::giop::Ior::nil(),
        b"key".to_vec(),
        Arc::new(ServantInvoker::new(
            Arc::new(UsesElsewhereSkeleton::new(Echo)),
            ctx(),
        )),
    );
    let p = UsesElsewhere::unchecked_narrow(&obj);
    assert_eq!(p.pass(None).unwrap(), None);
    let e = Elsewhere::unchecked_narrow(&obj);
    assert_eq!(e.as_object(), &obj);
    assert_eq!(Elsewhere::REPOSITORY_ID, "IDL:Loc/Elsewhere:1.0");
}
