//! IDL names that map to one Rust name (tests/idl/names.idl): the generated code compiles,
//! and the disambiguated methods, variants and error enums reach the right IDL operations.

#[allow(dead_code)]
mod gen_names {
    include!("golden/names.rs");
}

use corbina::cdr::{ByteOrder, CdrContext, CodeSets};
use corbina::{ObjectRef, ServantInvoker, SystemException};
use gen_names::names::*;
use std::sync::{Arc, Mutex};

fn object(servant: Arc<dyn corbina::Servant>) -> ObjectRef {
    let ctx = CdrContext::GIOP_1_2.with_code_sets(CodeSets::UNICODE);
    let _ = ByteOrder::NATIVE;
    ObjectRef::new(
        corbina::giop::Ior::nil(),
        b"key".to_vec(),
        Arc::new(ServantInvoker::new(servant, ctx)),
    )
}

/// Records which IDL operation ran.
#[derive(Default)]
struct Log(Mutex<Vec<&'static str>>);

impl Log {
    fn note(&self, op: &'static str) -> Result<(), SystemException> {
        self.0.lock().unwrap().push(op);
        Ok(())
    }
}

impl DServant for Log {
    fn foo_bar(&self) -> Result<(), SystemException> {
        self.note("D::fooBar")
    }
    fn get_narrow(&self) -> Result<(), SystemException> {
        self.note("D::get_narrow")
    }
    fn get_narrow_(&self) -> Result<i32, SystemException> {
        self.note("D::_get_narrow").map(|_| 7)
    }
}
impl D2Servant for Log {
    fn foo_bar(&self) -> Result<(), d2::FooBarError> {
        self.note("D2::foo_bar")?;
        Err(X::Err { a: 3 }.into())
    }
}
impl DdServant for Log {
    fn foo_bar_(&self) -> Result<(), SystemException> {
        self.note("DD::foo_bar_")
    }
}
impl CServant for Log {
    fn f(&self) -> Result<(), c::FError> {
        let n = self.0.lock().unwrap().len();
        self.note("C::f")?;
        Err(match n {
            0 => c::FError::Err(X::Err { a: 1 }),
            1 => c::FError::Err_(Y::Err { b: "y".into() }),
            _ => c::FError::System_(System {}),
        })
    }
    fn foo_bar(&self, foo_bar: i32, foo_bar_: i32) -> Result<(), SystemException> {
        assert_eq!((foo_bar, foo_bar_), (1, 2));
        self.note("C::fooBar")
    }
    fn foo_bar_(&self) -> Result<(), SystemException> {
        self.note("C::foo_bar")
    }
}

// The Rust module `x` holds ::Names::X; `X` is not a Rust path, so alias it for the test.
#[allow(non_snake_case)]
mod X {
    pub use super::x::Err;
}
#[allow(non_snake_case)]
mod Y {
    pub use super::y::Err;
}

#[test]
fn methods_of_bases_with_one_rust_name_reach_their_operations() {
    let servant = Arc::new(DdSkeleton::new(Log::default()));
    let log = servant.clone();
    let dd = Dd::unchecked_narrow(&object(servant));
    dd.foo_bar().unwrap();
    assert_eq!(
        dd.foo_bar_().unwrap_err(),
        d2::FooBarError::Err(X::Err { a: 3 })
    );
    dd.foo_bar__().unwrap();
    dd.get_narrow().unwrap();
    assert_eq!(dd.get_narrow_().unwrap(), 7);
    assert_eq!(
        *log.servant().0.lock().unwrap(),
        [
            "D::fooBar",
            "D2::foo_bar",
            "DD::foo_bar_",
            "D::get_narrow",
            "D::_get_narrow"
        ]
    );
}

#[test]
fn clashing_exception_variants_and_parameters() {
    let c = C::unchecked_narrow(&object(Arc::new(CSkeleton::new(Log::default()))));
    assert_eq!(c.f().unwrap_err(), c::FError::Err(X::Err { a: 1 }));
    assert_eq!(
        c.f().unwrap_err(),
        c::FError::Err_(Y::Err { b: "y".into() })
    );
    assert_eq!(c.f().unwrap_err(), c::FError::System_(System {}));
    c.foo_bar(1, 2).unwrap();
    c.foo_bar_().unwrap();
}

#[test]
fn types_constants_and_variants() {
    let _: (Int_, Int, IF, IF_) = (
        Int_ { x: 1 },
        Int { y: 2 },
        IF {
            i_f: 1,
            i_f_: 2,
            foo_bar: 3,
            foo_bar_: 4,
        },
        IF_ { z: 5 },
    );
    let _: (IFSeq, IFSeq_, IFSeq__) = (vec![], vec![], 0);
    assert_eq!(E::VALUES, [E::AB, E::AB_, E::AB__]);
    assert_eq!(E_C, E::AB_);
    assert_eq!((INT_C, INT_C_), (1, 2));
    assert_eq!(U::AB_(4).discriminator(), E::AB__);
    assert_eq!(U2::Default__(1).discriminator(), 1);
    assert_eq!(U2::Default_(9).discriminator(), 9);
    assert_eq!(x_y::T::default(), 0);
    assert_eq!(x_y_::R, 1);
    // B's servant trait extends A's: the typedef base named the interface.
    fn is_b<S: BServant>() {}
    struct Both;
    impl AServant for Both {
        fn ping(&self) -> Result<(), SystemException> {
            Ok(())
        }
    }
    impl BServant for Both {
        fn pong(&self) -> Result<(), SystemException> {
            Ok(())
        }
    }
    is_b::<Both>();
    let _: A = B::unchecked_narrow(&object(Arc::new(BSkeleton::new(Both)))).into();
}
