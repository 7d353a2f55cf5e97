//! Abstract interfaces end to end (issue 17): `tests/idl/abstract.idl`'s golden file compiled
//! against the runtime; both forms (an object reference, a value) and nil as in, inout, out
//! and return values over TCP between two Corbina ORBs; byte-exact CDR for both
//! discriminator branches; `Any` holding either form, copied by the TypeCode walker; and a
//! bad discriminator refused with MARSHAL.

use std::sync::Arc;

use corbina::cdr::{ByteOrder, CdrContext, CdrDecode, CdrEncode, CdrReader, CdrWriter, CodeSets};
use corbina::valuetype::{DefaultFactory, ValueInput, ValueMember, ValueOutput, ValueRef};
use corbina::{AbstractRef, Any, SystemException, SystemExceptionKind, ValueBase};

mod common;

#[allow(dead_code)]
mod gen_abstract {
    include!("golden/abstract.rs");
}
use gen_abstract::abs::*;

fn ctx() -> CdrContext {
    CdrContext::GIOP_1_2.with_code_sets(CodeSets::UNICODE)
}

// The value form: `Pet`'s state implements the operations.
impl BaseServant for Pet {
    fn kind(&self) -> Result<String, SystemException> {
        Ok("pet".into())
    }
}

impl NamedServant for Pet {
    fn name(&self) -> Result<String, named::NameError> {
        if self.pet_name.is_empty() {
            return Err(Unnamed {
                why: "a pet without a name".into(),
            }
            .into());
        }
        Ok(self.pet_name.clone())
    }
    fn rename(&self, to: &str) -> Result<String, SystemException> {
        Ok(format!("{} (not {to})", self.pet_name))
    }
    fn get_counter(&self) -> Result<i32, SystemException> {
        Ok(self.pet_name.len() as i32)
    }
    fn set_counter(&self, _value: i32) -> Result<(), SystemException> {
        Err(SystemException::new(SystemExceptionKind::NoPermission, 0))
    }
}

// The object form: a `Person` servant.
#[derive(Default)]
struct PersonImpl {
    counter: std::sync::atomic::AtomicI32,
}

impl BaseServant for PersonImpl {
    fn kind(&self) -> Result<String, SystemException> {
        Ok("person".into())
    }
}

impl NamedServant for PersonImpl {
    fn name(&self) -> Result<String, named::NameError> {
        Ok("Ada".into())
    }
    fn rename(&self, to: &str) -> Result<String, SystemException> {
        Ok(format!("Ada (not {to})"))
    }
    fn get_counter(&self) -> Result<i32, SystemException> {
        Ok(self.counter.load(std::sync::atomic::Ordering::SeqCst))
    }
    fn set_counter(&self, value: i32) -> Result<(), SystemException> {
        self.counter
            .store(value, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}

impl PersonServant for PersonImpl {
    fn age(&self) -> Result<i32, SystemException> {
        Ok(36)
    }
}

struct RegistryImpl;

impl RegistryServant for RegistryImpl {
    fn echo(&self, n: &Named) -> Result<Named, SystemException> {
        Ok(n.clone())
    }
    fn swap(&self, a: &mut Named) -> Result<Named, SystemException> {
        let old = a.clone();
        *a = Named::from(ValueRef::new(Pet {
            pet_name: "swapped".into(),
        }));
        Ok(old)
    }
    fn list(&self, all: &[Named]) -> Result<NamedSeq, SystemException> {
        Ok(all.iter().rev().cloned().collect())
    }
    fn hold(&self, h: &Holder) -> Result<Holder, SystemException> {
        Ok(Holder {
            who: h.who.clone(),
            tag: h.tag + 1,
        })
    }
    fn same(&self, a: &Named, b: &Named) -> Result<bool, SystemException> {
        Ok(match (&a.0, &b.0) {
            (AbstractRef::Value(x), AbstractRef::Value(y)) => x.ptr_eq(y),
            _ => false,
        })
    }
    fn wrap(&self, n: &Named) -> Result<Any, SystemException> {
        Ok(Any::insert(n)?)
    }
    fn unwrap(&self, a: &Any) -> Result<Named, SystemException> {
        a.extract::<Named>()
            .ok_or_else(|| SystemException::new(SystemExceptionKind::BadParam, 0))
    }
}

/// A Registry and a Person served by `orb`, reached over TCP.
fn serve(orb: &corbina::Orb) -> (Registry, Person) {
    let poa = orb.root_poa();
    let reg = poa
        .activate_object(Arc::new(RegistrySkeleton::new(RegistryImpl)))
        .unwrap();
    let person = poa
        .activate_object(Arc::new(PersonSkeleton::new(PersonImpl::default())))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    let reg = poa.id_to_reference(&reg).unwrap().without_collocation();
    let person = poa.id_to_reference(&person).unwrap().without_collocation();
    (
        Registry::unchecked_narrow(&reg),
        Person::unchecked_narrow(&person),
    )
}

fn pet(name: &str) -> ValueRef<Pet> {
    ValueRef::new(Pet {
        pet_name: name.into(),
    })
}

fn pet_name(n: &Named) -> Option<String> {
    n.0.downcast_value::<Pet>()
        .and_then(|p| p.lock().map(|g| g.pet_name.clone()))
}

#[test]
fn both_forms_and_nil_cross_the_wire_as_in_inout_out_and_return_values() {
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let (reg, person) = serve(&orb);

    // The object form: a reference of a concrete interface deriving from `Named`, whose
    // operations (its own and `Base`'s) are remote calls.
    let as_named = Named::from(person.clone());
    let back = reg.echo(&as_named).unwrap();
    let obj = back.0.as_object().expect("the object form comes back");
    assert_eq!(obj.as_object(), person.as_object());
    assert_eq!(back.name().unwrap(), "Ada");
    assert_eq!(back.kind().unwrap(), "person");
    assert_eq!(back.rename("Bob").unwrap(), "Ada (not Bob)");
    back.set_counter(7).unwrap();
    assert_eq!(back.get_counter().unwrap(), 7);
    assert_eq!(Base::from(person.clone()).kind().unwrap(), "person");
    // Narrowed back to the concrete interface.
    assert_eq!(Person::narrow(obj.as_object()).unwrap().age().unwrap(), 36);

    // The value form: a copy arrives, and its operations run here, on its state.
    let rex = pet("Rex");
    let back = reg.echo(&Named::from(rex.clone())).unwrap();
    assert_eq!(pet_name(&back).as_deref(), Some("Rex"));
    assert!(!back.0.downcast_value::<Pet>().unwrap().ptr_eq(&rex));
    assert_eq!(back.name().unwrap(), "Rex");
    assert_eq!(back.kind().unwrap(), "pet");
    assert_eq!(back.get_counter().unwrap(), 3);
    assert_eq!(
        back.set_counter(1).unwrap_err().kind,
        SystemExceptionKind::NoPermission
    );
    match Named::from(pet("")).name() {
        Err(named::NameError::Unnamed(u)) => assert_eq!(u.why, "a pet without a name"),
        other => panic!("unexpected {other:?}"),
    }

    // Nil: a null value on the wire, nil back; its operations are INV_OBJREF.
    let back = reg.echo(&Named::null()).unwrap();
    assert!(back.0.is_null());
    assert_eq!(
        back.kind().unwrap_err().kind,
        SystemExceptionKind::InvObjref
    );

    // inout and out: the object form in, a value out through the inout, the old one out.
    let mut a = Named::from(person.clone());
    let old = reg.swap(&mut a).unwrap();
    assert_eq!(
        old.0.as_object().map(|p| p.as_object()),
        Some(person.as_object())
    );
    assert_eq!(pet_name(&a).as_deref(), Some("swapped"));
    let mut a = Named::null();
    assert!(reg.swap(&mut a).unwrap().0.is_null());

    // Sequences and struct members, all forms mixed.
    let all = vec![
        Named::from(person.clone()),
        Named::null(),
        Named::from(pet("Tom")),
    ];
    let back = reg.list(&all).unwrap();
    assert_eq!(back.len(), 3);
    assert_eq!(pet_name(&back[0]).as_deref(), Some("Tom"));
    assert!(back[1].0.is_null());
    assert_eq!(back[2].name().unwrap(), "Ada");
    let h = reg
        .hold(&Holder {
            who: Named::from(pet("Kit")),
            tag: 41,
        })
        .unwrap();
    assert_eq!((pet_name(&h.who).as_deref(), h.tag), (Some("Kit"), 42));

    // Two parameters share one indirection scope: one value sent twice arrives as one.
    let one = Named::from(pet("Once"));
    assert!(reg.same(&one, &one).unwrap());
    assert!(!reg.same(&one, &Named::from(pet("Once"))).unwrap());
}

#[test]
fn a_value_without_the_operations_or_of_an_unknown_type() {
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let (reg, _) = serve(&orb);
    // `Plain` does not support `Named`: locally its operations are NO_IMPLEMENT, and the
    // server, knowing no factory for it, refuses it with MARSHAL.
    let plain = Named(AbstractRef::Value(ValueBase::from(ValueRef::new(Plain {
        n: 1,
    }))));
    assert!(plain.value_servant().is_none());
    assert_eq!(
        plain.kind().unwrap_err().kind,
        SystemExceptionKind::NoImplement
    );
    assert_eq!(
        reg.echo(&plain).unwrap_err().kind,
        SystemExceptionKind::Marshal
    );
    // With its factory registered, it is accepted and comes back as a `Plain`.
    corbina::valuetype::register_value_factory(
        Plain::REPOSITORY_ID,
        Arc::new(DefaultFactory::<Plain>::new()),
    );
    let back = reg.echo(&plain).unwrap();
    corbina::valuetype::unregister_value_factory(Plain::REPOSITORY_ID);
    assert_eq!(
        back.0.downcast_value::<Plain>().unwrap().lock().unwrap().n,
        1
    );
}

fn encode(v: &Named, order: ByteOrder) -> Vec<u8> {
    let mut w = CdrWriter::with_byte_order(order, ctx());
    w.write_octet(0xaa);
    v.encode(&mut w).unwrap();
    w.into_bytes()
}

fn decode(bytes: &[u8], order: ByteOrder) -> corbina::cdr::Result<Named> {
    let mut r = CdrReader::new(bytes, order, ctx());
    r.read_octet()?;
    let v = Named::decode(&mut r)?;
    r.expect_end()?;
    Ok(v)
}

#[test]
fn byte_exact_cdr_for_both_branches() {
    // FALSE, then the value: tag 0x7fffff02 (one repository id), the id, the state.
    let value = encode(&Named::from(pet("Rex")), ByteOrder::Big);
    let mut want = vec![0xaa, 0];
    want.extend([0, 0]); // padding to the tag
    want.extend(0x7fff_ff02u32.to_be_bytes());
    want.extend(16u32.to_be_bytes());
    want.extend(b"IDL:Abs/Pet:1.0\0");
    want.extend(4u32.to_be_bytes());
    want.extend(b"Rex\0");
    assert_eq!(value, want);
    assert_eq!(
        pet_name(&decode(&want, ByteOrder::Big).unwrap()).as_deref(),
        Some("Rex")
    );

    // Nil: FALSE and a null value tag.
    let nil = encode(&Named::null(), ByteOrder::Little);
    assert_eq!(nil, [0xaa, 0, 0, 0, 0, 0, 0, 0]);
    assert!(decode(&nil, ByteOrder::Little).unwrap().0.is_null());

    // TRUE, then an IOR (decoded as the object form; here, a nil IOR is nil).
    let mut obj = vec![0xaa, 1, 0, 0];
    obj.extend(1u32.to_le_bytes());
    obj.push(0); // empty type id
    obj.extend([0, 0, 0]);
    obj.extend(0u32.to_le_bytes()); // no profiles
    assert!(decode(&obj, ByteOrder::Little).unwrap().0.is_null());

    // Little-endian value form round trip.
    let le = encode(&Named::from(pet("Kit")), ByteOrder::Little);
    assert_eq!(
        pet_name(&decode(&le, ByteOrder::Little).unwrap()).as_deref(),
        Some("Kit")
    );
}

#[test]
fn the_object_form_is_an_ior_after_true() {
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let (_, person) = serve(&orb);
    let bytes = encode(&Named::from(person.clone()), ByteOrder::Little);
    assert_eq!(&bytes[..4], [0xaa, 1, 0, 0]);
    // After the discriminator, exactly the reference's IOR.
    let mut w = CdrWriter::with_byte_order(ByteOrder::Little, ctx());
    w.write_octet(0xaa);
    w.write_boolean(true);
    corbina::object::write_ref(&mut w, Some(&person)).unwrap();
    assert_eq!(bytes, w.into_bytes());
    let back = {
        let _current = corbina::orb::enter(&orb);
        decode(&bytes, ByteOrder::Little).unwrap()
    };
    // (IORs compare with their byte order: the same order both ways here.)
    assert_eq!(
        back.0.as_object().map(|p| p.as_object()),
        Some(person.as_object())
    );
}

#[test]
fn a_bad_discriminator_is_marshal() {
    for bad in [2u8, 0xff] {
        let mut bytes = encode(&Named::null(), ByteOrder::Big);
        bytes[1] = bad;
        let err = decode(&bytes, ByteOrder::Big).unwrap_err();
        assert!(
            matches!(
                err,
                corbina::cdr::MarshalError::InvalidBoolean { offset: 1, .. }
            ),
            "{err:?}"
        );
        assert_eq!(
            SystemException::from(err).kind,
            SystemExceptionKind::Marshal
        );
    }
    // A truncated value form and a value tag with nothing after it.
    assert!(decode(&[0xaa, 0], ByteOrder::Big).is_err());
    assert!(decode(&[0xaa, 0, 0, 0, 0x7f, 0xff, 0xff, 0x02], ByteOrder::Big).is_err());
}

#[test]
fn any_holds_both_forms_and_the_walker_copies_them() {
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let (reg, person) = serve(&orb);
    assert_eq!(
        Named::type_code().kind(),
        corbina::typecode::TcKind::AbstractInterface
    );
    // The server builds the Any; the client's ORB walks it off the wire with the TypeCode.
    // A value's type is not in the TypeCode: the walker reads it through the registry.
    corbina::valuetype::register_value_factory(
        Pet::REPOSITORY_ID,
        Arc::new(DefaultFactory::<Pet>::new()),
    );
    let any = reg.wrap(&Named::from(pet("Rex"))).unwrap();
    assert_eq!(
        any.type_code().kind(),
        corbina::typecode::TcKind::AbstractInterface
    );
    assert_eq!(
        pet_name(&any.extract::<Named>().unwrap()).as_deref(),
        Some("Rex")
    );
    // And back: the server walks the client's Any.
    assert_eq!(pet_name(&reg.unwrap(&any).unwrap()).as_deref(), Some("Rex"));

    let any = reg.wrap(&Named::from(person.clone())).unwrap();
    assert!(any.to_ior().is_some());
    let back = reg.unwrap(&any).unwrap();
    assert_eq!(back.name().unwrap(), "Ada");

    let any = reg.wrap(&Named::null()).unwrap();
    assert!(any.extract::<Named>().unwrap().0.is_null());

    // Copied by the walker at another alignment and byte order.
    let local = Any::insert(&Named::from(pet("Kit"))).unwrap();
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, ctx());
    w.write_octet(0xaa);
    local.encode(&mut w).unwrap();
    let bytes = w.into_bytes();
    let mut r = CdrReader::new(&bytes, ByteOrder::Big, ctx());
    r.read_octet().unwrap();
    let copied = Any::decode(&mut r).unwrap();
    assert_eq!(
        pet_name(&copied.extract::<Named>().unwrap()).as_deref(),
        Some("Kit")
    );

    // Two members sharing one value: the copy keeps the indirection.
    let pair = corbina::TypeCode::create_struct_tc(
        "IDL:Abs/Pair:1.0",
        "Pair",
        vec![
            corbina::typecode::StructMember::new("a", Named::type_code()),
            corbina::typecode::StructMember::new("b", Named::type_code()),
        ],
    )
    .unwrap();
    let shared = Named::from(pet("Twice"));
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, ctx());
    let mut out = ValueOutput::new();
    shared.write_member(&mut w, &mut out).unwrap();
    shared.write_member(&mut w, &mut out).unwrap();
    let bytes = w.into_bytes();
    let any = Any::from_cdr(pair, &bytes, ByteOrder::Big, ctx(), 0).unwrap();
    corbina::valuetype::unregister_value_factory(Pet::REPOSITORY_ID);
    let mut r = any.value_reader();
    let mut input = ValueInput::new();
    let a = Named::read_member(&mut r, &mut input).unwrap();
    let b = Named::read_member(&mut r, &mut input).unwrap();
    assert_eq!(pet_name(&a).as_deref(), Some("Twice"));
    assert!(a.0.as_value().unwrap().ptr_eq(b.0.as_value().unwrap()));
}

/// Abstract interfaces in every position and combination the mapping has: several abstract
/// bases (with methods mapped to one Rust name), a concrete interface and a local one deriving
/// from them, values supporting them directly and through a concrete interface, typedefs,
/// arrays, bounded sequences, struct and exception members, forward declarations, and the
/// AMI/AMH/default-body options. The generated Rust type-checks.
#[test]
fn every_use_of_an_abstract_interface_type_checks() {
    const IDL: &str = r#"
module V {
  abstract interface Fwd;
  struct UsesFwd { Fwd f; };
  abstract interface A { long f(in long x); void fooBar(); };
  abstract interface B { string g(); void foo_bar(); };
  abstract interface AB : A, B {
    void h(in AB other, inout AB io, out AB o);
    attribute AB self_ref;
    oneway void tell(in A whom);
  };
  interface I : AB { AB ret(); };
  local interface Loc : A { void touch(); };
  valuetype W supports I { public long width; };
  valuetype X supports A, B { public AB child; public X next; };
  exception E { A which; };
  typedef A AAlias;
  typedef AAlias AArr[2];
  typedef sequence<AAlias, 3> ASeq;
  struct Shelf { AArr arr; ASeq seq; A single; };
  interface J {
    AArr arr(in AArr items) raises (E);
    ASeq seq(in ASeq items);
    Shelf st(inout Shelf both);
    any an(in A held);
    void pair(in A first, in X second, in B third);
  };
  abstract interface Fwd { void later(in Fwd again); };
  abstract interface Lonely;
};
"#;
    let plain = corbina_codegen::Options::default();
    let mut all = corbina_codegen::Options::default();
    all.ami = true;
    all.amh = true;
    all.no_implement_defaults = true;
    // (AMI's implied operations do not tell apart base methods mapped to one Rust name, for
    // any interface: `fooBar` and `foo_bar` only without it.)
    let no_clash = IDL.replace("void foo_bar();", "void other();");
    for (name, idl, options) in [("plain", IDL, plain), ("all", no_clash.as_str(), all)] {
        let spec = corbina_idl::Frontend::new()
            .parse_str("variants.idl", idl)
            .unwrap_or_else(|e| panic!("{e}"));
        let src = corbina_codegen::generate_with(&spec, "variants.idl", &options)
            .unwrap_or_else(|e| panic!("{e}"));
        common::rustc_check(&format!("abstract_{name}"), &src)
            .unwrap_or_else(|e| panic!("{name}:\n{e}"));
    }
}
