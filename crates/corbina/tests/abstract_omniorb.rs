//! Abstract interfaces with omniORB's C++ mapping (`CORBA::AbstractBase`), both ways, over
//! real IIOP (issue 17): `peers/abstract.idl`, served and called by
//! `peers/omni_abstract_peer.cc`. Each form of `Named` (an object reference, a value, nil)
//! goes as an in, inout, out and return value; the receiver calls `name()` on what it got
//! (a call back to the sender's object, or on the value's state).

use std::process::Command;
use std::sync::Arc;

use corbina::valuetype::ValueRef;
use corbina::{AbstractRef, Orb, OrbConfig, Servant, SystemException};

#[allow(dead_code, clippy::all)]
mod generated {
    include!("../../corbina-codegen/tests/golden/peers_abstract.rs");
}
use generated::abstracts::*;

fn orb() -> Orb {
    Orb::with_config(OrbConfig {
        endpoints: vec![corbina::config::Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..OrbConfig::default()
    })
}

impl NamedServant for Pet {
    fn name(&self) -> Result<String, SystemException> {
        Ok(self.pet_name.clone())
    }
}

struct PersonImpl(String);

impl NamedServant for PersonImpl {
    fn name(&self) -> Result<String, SystemException> {
        Ok(self.0.clone())
    }
}

impl PersonServant for PersonImpl {}

fn pet(name: &str) -> Named {
    Named::from(ValueRef::new(Pet {
        pet_name: name.into(),
    }))
}

/// A Person served by `orb`, as a Named.
fn serve_person(orb: &Orb, name: &str) -> Named {
    let poa = orb.root_poa();
    let servant: Arc<dyn Servant> = Arc::new(PersonSkeleton::new(PersonImpl(name.into())));
    poa.activate_object(servant.clone()).unwrap();
    let obj = poa.servant_to_reference(&servant).unwrap();
    Named::from(Person::unchecked_narrow(&obj.without_collocation()))
}

/// "object:<name>", "value:<name>" or "nil", as `Registry::describe` answers.
fn form_of(n: &Named) -> String {
    match &n.0 {
        AbstractRef::Null => "nil".into(),
        AbstractRef::Object(_) => format!("object:{}", n.name().unwrap()),
        AbstractRef::Value(_) => format!("value:{}", n.name().unwrap()),
    }
}

#[test]
fn corbina_calls_an_omniorb_registry_with_each_form() {
    let Some(bin) = corbina_testpeers::abstract_peers() else {
        return;
    };
    let ior_file = corbina_testpeers::fresh_dir("abstract-server").join("r.ior");
    let (_peer, ior) = corbina_testpeers::start_with_ior(
        "omni_abstract_peer",
        Command::new(bin.join("omni_abstract_peer"))
            .arg("--server")
            .arg(&ior_file)
            .args(["-ORBendPoint", "giop:tcp:127.0.0.1:"]),
        &ior_file,
    );
    let orb = orb();
    orb.root_poa().the_poa_manager().activate().unwrap();
    let r = Registry::narrow(&orb.string_to_object(&ior).unwrap()).unwrap();
    let olga = serve_person(&orb, "Olga");

    // omniORB calls name() back on our object, or on the Pet it built from the value.
    assert_eq!(r.describe(&olga).unwrap(), "object:Olga");
    assert_eq!(r.describe(&pet("Rex")).unwrap(), "value:Rex");
    assert_eq!(r.describe(&Named::null()).unwrap(), "nil");

    let back = r.echo(&olga).unwrap();
    assert!(back.0.as_object().is_some());
    assert_eq!(form_of(&back), "object:Olga");
    let back = r.echo(&pet("Rex")).unwrap();
    assert!(back.0.downcast_value::<Pet>().is_some());
    assert_eq!(form_of(&back), "value:Rex");
    assert_eq!(form_of(&r.echo(&Named::null()).unwrap()), "nil");

    // An object of omniORB's (its name() a remote call) and a value omniORB built.
    assert_eq!(form_of(&r.make_person("Ann").unwrap()), "object:Ann");
    assert_eq!(form_of(&r.make_pet("Kit").unwrap()), "value:Kit");

    // One value passed twice arrives as one value.
    let rex = pet("Rex");
    assert!(r.same(&rex, &rex).unwrap());
    assert!(!r.same(&rex, &pet("Rex")).unwrap());

    let mut a = pet("x");
    let b = r.swap(&mut a).unwrap();
    assert_eq!(
        (form_of(&a), form_of(&b)),
        ("value:swapped".into(), "value:x".into())
    );
    let mut a = olga.clone();
    let b = r.swap(&mut a).unwrap();
    assert_eq!(
        (form_of(&a), form_of(&b)),
        ("value:swapped".into(), "object:Olga".into())
    );
    orb.destroy();
}

struct RegistryImpl(Orb);

impl RegistryServant for RegistryImpl {
    fn describe(&self, n: &Named) -> Result<String, SystemException> {
        Ok(form_of(n))
    }
    fn echo(&self, n: &Named) -> Result<Named, SystemException> {
        Ok(n.clone())
    }
    fn make_person(&self, name: &str) -> Result<Named, SystemException> {
        Ok(serve_person(&self.0, name))
    }
    fn make_pet(&self, name: &str) -> Result<Named, SystemException> {
        Ok(pet(name))
    }
    fn same(&self, a: &Named, b: &Named) -> Result<bool, SystemException> {
        Ok(match (&a.0, &b.0) {
            (AbstractRef::Value(x), AbstractRef::Value(y)) => x.ptr_eq(y),
            _ => false,
        })
    }
    fn swap(&self, a: &mut Named) -> Result<Named, SystemException> {
        Ok(std::mem::replace(a, pet("swapped")))
    }
}

#[test]
fn omniorb_calls_a_corbina_registry_with_each_form() {
    let Some(bin) = corbina_testpeers::abstract_peers() else {
        return;
    };
    let orb = orb();
    let poa = orb.root_poa();
    poa.the_poa_manager().activate().unwrap();
    let servant: Arc<dyn Servant> = Arc::new(RegistrySkeleton::new(RegistryImpl(orb.clone())));
    poa.activate_object(servant.clone()).unwrap();
    let obj = poa.servant_to_reference(&servant).unwrap();
    let ior = orb.object_to_string(&obj).unwrap();
    let out = Command::new(bin.join("omni_abstract_peer"))
        .args(["--client", &ior])
        .args(["-ORBendPoint", "giop:tcp:127.0.0.1:"])
        .output()
        .expect("omni_abstract_peer runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("passed 12 failed 0"),
        "omni_abstract_peer --client failed ({}):\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    orb.destroy();
}
