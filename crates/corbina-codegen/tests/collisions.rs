//! IDL names equal to the names the generator invents (tests/idl/collisions.idl, issue 27):
//! the generated code (AMI and AMH for every interface; golden `tests/golden/collisions.rs`,
//! `BLESS=1` rewrites it) compiles without warnings, each name reaches its IDL definition,
//! and every rename is reported as a warning by the library, the `Builder` and the command.

#[deny(warnings)]
#[allow(dead_code)]
mod gen {
    include!("golden/collisions.rs");
}

use corbina::cdr::{CdrContext, CodeSets};
use corbina::{ObjectRef, ServantInvoker, SystemException};
use gen::clash::*;
use std::path::Path;
use std::sync::Arc;

const IDL: &str = "tests/idl/collisions.idl";
const GOLDEN: &str = "tests/golden/collisions.rs";

fn options() -> corbina_codegen::Options {
    let mut o = corbina_codegen::Options::default();
    o.ami = true;
    o.amh = true;
    o
}

fn compile() -> corbina_codegen::Compiled {
    let mut fe = corbina_idl::Frontend::new();
    corbina_codegen::compile_file_with(&mut fe, Path::new(IDL), &options())
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn golden_file_matches() {
    let src = compile().source;
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(GOLDEN, &src).unwrap();
        return;
    }
    let old = std::fs::read_to_string(GOLDEN).unwrap_or_default();
    assert!(old == src, "{GOLDEN} out of date (rerun with BLESS=1)");
}

/// Every rename, once, at the IDL definition renamed; sorted by position.
const RENAMES: &[(u32, &str)] = &[
    (18, "names `AMI_AMI_FooHandler`, not `AMI_FooHandler`"),
    (18, "names `AMI_AMI_FooPoller`, not `AMI_FooPoller`"),
    (18, "`::Clash::Foo::narrow` is generated as Rust `narrow_`, not `narrow`"),
    (27, "`::Clash::Foo::twice` names an exception twice"),
    (30, "the AMI reply handler method `::Clash::AMI_AMI_FooHandler::narrow` is generated as Rust `narrow_`"),
    (32, "`::Clash::FooServant` is generated as Rust `FooServant_`, not `FooServant`: `FooServant` is already `::Clash::Foo`'s"),
    (33, "`::Clash::FooSkeleton` is generated as Rust `FooSkeleton_`"),
    (34, "`::Clash::FooAsync` is generated as Rust `FooAsync_`"),
    (37, "`::Clash::AMH_FooServant` is generated as Rust `AmhFooServant_`"),
    (38, "`::Clash::AMH_FooResponseHandler` is generated as Rust `AmhFooResponseHandler_`"),
    (44, "`::Clash::NamedObject` is generated as Rust `NamedObject_`, not `NamedObject`: `NamedObject` is already `::Clash::Named`'s"),
    (48, "AMI `sendc_` of `::Clash::B1::fooBar` is generated as Rust `sendc_foo_bar_`"),
    (49, "AMI `sendc_` of `::Clash::B2::foo_bar` is generated as Rust `sendc_foo_bar__`"),
    (49, "the `::Clash::B12` proxy's method for `::Clash::B2::foo_bar` is generated as Rust `foo_bar_`"),
    (49, "the AMI reply handler method `::Clash::AMI_B12Handler::foo_bar` is generated as Rust `foo_bar_`"),
    (49, "the AMI reply handler method `::Clash::AMI_B12Handler::foo_bar_excep` is generated as Rust `foo_bar_excep_`"),
];

#[test]
fn every_rename_is_a_warning() {
    let c = compile();
    let got: Vec<(u32, String)> = c.warnings.iter().map(|w| (w.line, w.to_string())).collect();
    for (line, text) in RENAMES {
        assert!(
            got.iter().any(|(l, w)| l == line && w.contains(text)),
            "no warning at line {line} containing {text:?}; got {got:#?}"
        );
    }
    assert_eq!(got.len(), RENAMES.len(), "{got:#?}");
    assert!(got.iter().all(|(_, w)| w.contains("warning")));
    // The same warnings without AMI/AMH options, less the ones about AMI's methods: the
    // Rust names of IDL definitions do not depend on the options.
    let mut fe = corbina_idl::Frontend::new();
    let plain = corbina_codegen::compile_file(&mut fe, Path::new(IDL)).unwrap();
    assert!(plain
        .warnings
        .iter()
        .any(|w| w.message.contains("`FooAsync_`")));
    assert!(plain.source.contains("pub struct AmhFooServant_ {"));
    assert!(!plain.warnings.iter().any(|w| w.message.contains("sendc_")));
}

#[test]
fn the_command_prints_the_renames_on_stderr() {
    let out_dir = std::env::temp_dir().join(format!("corbina-collisions-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_corbina-idl"))
        .args(["--ami", "--amh", "--no-format", "-o"])
        .arg(&out_dir)
        .arg(IDL)
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Rendered as rustc renders a warning: the message, then where.
    let lines: Vec<&str> = stderr.lines().collect();
    for (line, text) in RENAMES {
        let at = format!("--> {IDL}:{line}:");
        assert!(
            lines.windows(2).any(|w| w[0].starts_with("warning: ")
                && w[0].contains(text)
                && w[1].trim_start().starts_with(&at)),
            "{text:?} missing from {stderr}"
        );
    }
    let src = std::fs::read_to_string(out_dir.join("collisions.rs")).unwrap();
    assert_eq!(src, compile().source);
    std::fs::remove_dir_all(&out_dir).unwrap();
}

fn object(servant: Arc<dyn corbina::Servant>) -> ObjectRef {
    let ctx = CdrContext::GIOP_1_2.with_code_sets(CodeSets::UNICODE);
    ObjectRef::new(
        corbina::giop::Ior::nil(),
        b"key".to_vec(),
        Arc::new(ServantInvoker::new(servant, ctx)),
    )
}

struct Impl;

fn weigh(xs: &[i32]) -> i32 {
    xs.iter().zip(1..).map(|(x, k)| k * x).sum()
}

impl FooServant for Impl {
    fn echo(
        &self,
        a: &S,
        r: &Rec,
        v: &arr::V,
        w: &[i32],
        values: &mut K,
    ) -> Result<(S, T), SystemException> {
        values.push_str(&r.b);
        Ok((
            S { x: a.x + r.a.x },
            v[0] + v[1] + w.iter().sum::<i32>() + r.c,
        ))
    }
    // Weighted, so that swapped arguments show.
    fn locals(
        &self,
        id: i32,
        servant: i32,
        done: i32,
        e: i32,
        p: i32,
    ) -> Result<i32, SystemException> {
        Ok(weigh(&[id, servant, done, e, p]))
    }
    fn ami_locals(
        &self,
        rh: i32,
        handle: i32,
        ami_proxy: i32,
        ami_handler: i32,
        ami_result: i32,
    ) -> Result<i32, SystemException> {
        Ok(weigh(&[rh, handle, ami_proxy, ami_handler, ami_result]))
    }
    fn more_locals(
        &self,
        ami_holder: i32,
        ami_delivery: i32,
        ami_return_val: i32,
        obj: i32,
        self_: i32,
    ) -> Result<i32, SystemException> {
        Ok(weigh(&[
            ami_holder,
            ami_delivery,
            ami_return_val,
            obj,
            self_,
        ]))
    }
    fn twice(&self, code: i32) -> Result<(), foo::TwiceError> {
        Err(match code {
            0 => E { code }.into(),
            _ => Err { why: "no".into() }.into(),
        })
    }
    fn narrow_(&self) -> Result<(), SystemException> {
        Ok(())
    }
    fn get_type_code(&self) -> Result<i32, SystemException> {
        Ok(42)
    }
}

impl B1Servant for Impl {
    fn foo_bar(&self, x: i32) -> Result<i32, SystemException> {
        Ok(x + 1)
    }
}
impl B2Servant for Impl {
    fn foo_bar(&self, x: i32) -> Result<i32, b2::FooBarError> {
        Ok(x + 2)
    }
}
impl B12Servant for Impl {
    fn sendc_foo_bar(&self) -> Result<(), SystemException> {
        Ok(())
    }
}
impl AsyncServant for Impl {
    fn r#await(&self, r#yield: i32) -> Result<i32, SystemException> {
        Ok(-r#yield)
    }
}

#[test]
fn calls_reach_the_operations_their_names_map() {
    let foo = Foo::unchecked_narrow(&object(Arc::new(FooSkeleton::new(Impl))));
    let mut values = String::from("a");
    let r = Rec {
        a: S { x: 2 },
        b: "b".into(),
        c: 100,
    };
    let (s, ret) = foo
        .echo(&S { x: 1 }, &r, &[3, 4], &[5, 6], &mut values)
        .unwrap();
    assert_eq!((s, ret, values.as_str()), (S { x: 3 }, 118, "ab"));
    // 1·1 + 2·2 + … + 5·5
    assert_eq!(foo.locals(1, 2, 3, 4, 5).unwrap(), 55);
    assert_eq!(foo.ami_locals(1, 2, 3, 4, 5).unwrap(), 55);
    assert_eq!(foo.more_locals(5, 4, 3, 2, 1).unwrap(), 35);
    // `raises (E, ::Clash::E, Err)`: one variant per exception.
    assert_eq!(foo.twice(0), Err(foo::TwiceError::E(E { code: 0 })));
    assert_eq!(
        foo.twice(1),
        Err(foo::TwiceError::Err(Err { why: "no".into() }))
    );
    foo.narrow_().unwrap();
    assert_eq!(foo.get_type_code().unwrap(), 42);
    // The proxy's own methods keep their names.
    assert_eq!(Foo::type_code().id().unwrap(), "IDL:Clash/Foo:1.0");

    let b12 = B12::unchecked_narrow(&object(Arc::new(B12Skeleton::new(Impl))));
    assert_eq!((b12.foo_bar(1).unwrap(), b12.foo_bar_(1).unwrap()), (2, 3));
    b12.sendc_foo_bar().unwrap();
    // AMI: `sendc_`/`sendp_` of B1's `fooBar`, B2's `foo_bar` and B12's own `sendc_foo_bar`.
    let _: fn(&B12, Option<&AmiB12Handler>, i32) = B12::sendc_foo_bar_;
    let _: fn(&B12, Option<&AmiB12Handler>, i32) = B12::sendc_foo_bar__;
    let _: fn(&B12, Option<&AmiB12Handler>) = B12::sendc_sendc_foo_bar;
    let _: fn(&B12, i32) -> AmiB12Poller = B12::sendp_foo_bar_;
    let _: fn(&AmiB12Poller, u32) -> Result<i32, b2::FooBarError> = AmiB12Poller::foo_bar_;
    // AMI's implied names step around the IDL's `AMI_FooHandler` and `AMI_FooPoller`.
    let _: fn(&Foo, Option<&AmiAmiFooHandler>, i32) = Foo::sendc_twice;
    let _: fn(&Foo, i32) -> AmiAmiFooPoller = Foo::sendp_twice;
    assert_eq!(
        AmiAmiFooHandler::REPOSITORY_ID,
        "IDL:Clash/AMI_AMI_FooHandler:1.0"
    );
    assert_eq!(AmiFooHandler { d: 1 }.d, 1);

    let a = Async::unchecked_narrow(&object(Arc::new(AsyncSkeleton::new(Impl))));
    assert_eq!(a.r#await(5).unwrap(), -5);
}

#[test]
fn types_named_like_generated_ones_keep_their_fields() {
    // Each IDL struct named like a generated type, renamed, and its members.
    let _ = (
        FooServant_ { a: 1 },
        FooSkeleton_ { b: 2 },
        FooAsync_ { c: 3 },
        AmiFooHandler { d: 4 },
        AmiFooPoller { e: 5 },
        AmhFooServant_ { f: 6 },
        AmhFooResponseHandler_ { g: 7 },
        AmiFooHandlerServant { h: 8 },
        FooError { i: 9 },
    );
    // `interface NamedObject` is `NamedObject_`; `NamedObject` is `Named`'s object form.
    assert_eq!(NamedObject_::REPOSITORY_ID, "IDL:Clash/NamedObject:1.0");
    assert_eq!(NamedObject::REPOSITORY_ID, "IDL:Clash/Named:1.0");
    fn serves_named_object<X: NamedObject_Servant>() {}
    let _ = serves_named_object::<Impl2>;
    struct Impl2;
    impl NamedObject_Servant for Impl2 {
        fn id(&self) -> Result<i32, SystemException> {
            Ok(1)
        }
    }
    // Keywords.
    let t = Type {
        r#match: 1,
        self_: 2,
        crate_: 3,
    };
    assert_eq!(t.r#match + t.self_ + t.crate_, 6);
    assert_eq!(Kind::VALUES, [Kind::Fn, Kind::Impl, Kind::Super]);
}

#[test]
fn any_helpers_of_typedefs_named_v() {
    let a = arr::v_insert(&[7, 8]).unwrap();
    assert_eq!(arr::v_extract(&a), Some([7, 8]));
    let s = seq::v_insert(&vec![1, 2, 3]).unwrap();
    assert_eq!(seq::v_extract(&s), Some(vec![1, 2, 3]));
    assert_eq!(arr::v_extract(&s), None);
    let t = t_insert(&5).unwrap();
    assert_eq!(t_extract(&t), Some(5));
    let k = k_insert(&"k".to_string()).unwrap();
    assert_eq!(k_extract(&k).as_deref(), Some("k"));
}
