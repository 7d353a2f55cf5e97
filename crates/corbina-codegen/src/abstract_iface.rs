//! Abstract interfaces (`docs/mapping.md`, "Abstract interfaces"). For `abstract interface A`:
//! its object form `AObject` (a proxy, written by `interfaces.rs`), the operations trait
//! `AServant`, and the type `A` used wherever the IDL names `A`: nil, an object reference or a
//! value, with `A`'s operations going to whichever it holds.

use crate::context::Gen;
use crate::interfaces::Method;
use crate::names::fresh;
use corbina_idl::ast::ParamDir;
use corbina_idl::model::{Definition, DefinitionKind, Interface, ScopedName};

const VT: &str = "::corbina::valuetype";
const AR: &str = "::corbina::AbstractRef";
const SYS: &str = "::corbina::SystemException";

impl Gen<'_> {
    /// Whether `name` is an abstract interface (defined, or only forward-declared).
    pub fn is_abstract_interface(&self, name: &ScopedName) -> bool {
        match self.lookup(name).map(|d| &d.kind) {
            Some(DefinitionKind::Interface(i)) => i.is_abstract,
            Some(DefinitionKind::InterfaceForward(f)) => f.is_abstract,
            _ => false,
        }
    }

    /// `AObject`, `AServant` and the type `A`.
    pub fn gen_abstract_interface(&mut self, def: &Definition, i: &Interface) {
        let Some(methods) = self.gen_unconstrained_interface(def, i, true) else {
            return;
        };
        let name = self.names.item(&def.scoped_name);
        let object = format!("{name}Object");
        let id = &def.repository_id;
        let known = self.values_supporting(def);
        self.out.blank();
        self.out.line(format!(
            "/// IDL abstract interface `{}` (`{id}`): nil, an object reference of an interface",
            def.scoped_name
        ));
        self.out.line(format!(
            "/// deriving from it ([`{object}`]), or a value of a valuetype supporting it. Its operations"
        ));
        self.out
            .line("/// go to the object, or to the value's state struct (its `…Servant` impl).");
        self.out
            .line("#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]");
        self.out
            .line(format!("pub struct {name}(pub {AR}<{object}>);"));
        self.out.blank();
        self.out.open(format!("impl {name}"));
        self.out.line("/// The repository id.");
        self.out
            .line(format!("pub const REPOSITORY_ID: &'static str = {id:?};"));
        self.out.blank();
        self.gen_known_values("supporting it", &known);
        self.out.blank();
        self.out.line("/// The nil reference.");
        self.out.open("pub const fn null() -> Self");
        self.out.line(format!("Self({AR}::Null)"));
        self.out.close();
        self.out.blank();
        self.out.line("/// The TypeCode (`tk_abstract_interface`).");
        self.out.open("pub fn type_code() -> ::corbina::TypeCode");
        self.out.line(format!("{object}::type_code()"));
        self.out.close();
        self.out.blank();
        self.out.line(format!(
            "/// The value form's operations: the state struct's [`{name}Servant`] impl, when the value is"
        ));
        self.out.line(
            "/// of a valuetype of this IDL that supports it and the application implemented it.",
        );
        self.out
            .line("#[allow(clippy::needless_borrow, unused_variables)]");
        self.out.open(format!(
            "pub fn value_servant(&self) -> ::core::option::Option<::std::boxed::Box<dyn {name}Servant>>"
        ));
        self.out.line("let v = self.0.as_value()?;");
        for k in &known {
            self.out.open(format!(
                "if let Some(s) = (&&{name}ServantProbe::<{k}>(::core::marker::PhantomData)).servant(v)"
            ));
            self.out.line("return Some(s);");
            self.out.close();
        }
        self.out.line("None");
        self.out.close();
        for m in &methods {
            self.out.blank();
            self.gen_abstract_method(m);
        }
        self.out.close();
        // Conversions.
        self.gen_into_abstract(&object, &name);
        for k in &known {
            self.out.blank();
            self.out.open(format!(
                "impl ::core::convert::From<{VT}::ValueRef<{k}>> for {name}"
            ));
            self.out
                .open(format!("fn from(v: {VT}::ValueRef<{k}>) -> Self"));
            self.out
                .line(format!("Self({AR}::from(::corbina::ValueBase::from(v)))"));
            self.out.close();
            self.out.close();
        }
        self.out.blank();
        self.out.open(format!("impl {VT}::ValueMember for {name}"));
        self.out.open(format!(
            "fn write_member<'a>(&'a self, w: &mut ::corbina::cdr::CdrWriter<'a>, out: &mut {VT}::ValueOutput) -> ::corbina::cdr::Result<()>"
        ));
        self.out.line("self.0.write(w, out)");
        self.out.close();
        self.out.open(format!(
            "fn read_member(r: &mut ::corbina::cdr::CdrReader<'_>, input: &mut {VT}::ValueInput) -> ::corbina::cdr::Result<Self>"
        ));
        self.out
            .line(format!("{AR}::read(r, input, Self::KNOWN).map(Self)"));
        self.out.close();
        self.out.close();
        self.gen_value_codec_impls(&name);
        self.gen_any_insert(&name);
        // The probe behind `value_servant`: the `Hit` impl applies when the state struct
        // implements the servant trait, the `Miss` impl (one auto-deref away) otherwise.
        self.out.blank();
        self.out.line("#[doc(hidden)]");
        self.allow_camel(&format!("{name}ServantProbe"));
        self.out.line(format!(
            "pub struct {name}ServantProbe<_K>(pub ::core::marker::PhantomData<fn() -> _K>);"
        ));
        let ret = format!("::core::option::Option<::std::boxed::Box<dyn {name}Servant>>");
        self.out.blank();
        self.out.line("#[doc(hidden)]");
        self.allow_camel(&format!("{name}ServantProbeHit"));
        self.out.open(format!("pub trait {name}ServantProbeHit"));
        self.out.line(format!(
            "fn servant(&self, v: &::corbina::ValueBase) -> {ret};"
        ));
        self.out.close();
        self.out.blank();
        self.out.open(format!(
            "impl<_K: {name}Servant + {VT}::ValueType> {name}ServantProbeHit for &{name}ServantProbe<_K>"
        ));
        self.out.open(format!(
            "fn servant(&self, v: &::corbina::ValueBase) -> {ret}"
        ));
        self.out.line(format!(
            "v.downcast::<_K>().filter(|r| !r.is_null()).map(|r| ::std::boxed::Box::new(r) as ::std::boxed::Box<dyn {name}Servant>)"
        ));
        self.out.close();
        self.out.close();
        self.out.blank();
        self.out.line("#[doc(hidden)]");
        self.allow_camel(&format!("{name}ServantProbeMiss"));
        self.out.open(format!("pub trait {name}ServantProbeMiss"));
        self.out.open(format!(
            "fn servant(&self, _v: &::corbina::ValueBase) -> {ret}"
        ));
        self.out.line("None");
        self.out.close();
        self.out.close();
        self.out.blank();
        self.out.line(format!(
            "impl<_K> {name}ServantProbeMiss for {name}ServantProbe<_K> {{}}"
        ));
    }

    /// `From<from>` for the abstract type at `abs` (and its object form): an object reference
    /// of an interface deriving from it.
    pub(crate) fn gen_into_abstract(&mut self, from: &str, abs: &str) {
        let object = format!("{abs}Object");
        if from != object {
            self.out.blank();
            self.out
                .open(format!("impl ::core::convert::From<{from}> for {object}"));
            self.out.open(format!("fn from(p: {from}) -> {object}"));
            self.out
                .line(format!("{object}::unchecked_narrow(p.as_object())"));
            self.out.close();
            self.out.close();
        }
        self.out.blank();
        self.out
            .open(format!("impl ::core::convert::From<{from}> for {abs}"));
        self.out.open(format!("fn from(p: {from}) -> {abs}"));
        if from == object {
            self.out.line(format!("{abs}({AR}::Object(p))"));
        } else {
            self.out.line(format!(
                "{abs}({AR}::Object({object}::unchecked_narrow(p.as_object())))"
            ));
        }
        self.out.close();
        self.out.close();
    }

    /// `impl<S: AServant> AServant for ValueRef<S>`: a shared value whose state struct
    /// implements the operations implements them, each call locking it.
    pub(crate) fn gen_abstract_value_servant(&mut self, def: &Definition, methods: &[Method]) {
        let servant = format!("{}Servant", self.names.item(&def.scoped_name));
        let own: Vec<&Method> = methods
            .iter()
            .filter(|m| m.owner == def.scoped_name)
            .collect();
        let doc = format!(
            "/// A value whose state struct implements IDL abstract interface `{}` implements it as a shared value.",
            def.scoped_name
        );
        self.gen_value_ref_servant(&servant, &doc, &own);
    }

    /// `e` (a system exception) as the method's error type.
    pub(crate) fn as_method_error(&self, m: &Method, e: &str) -> String {
        if !m.oneway && self.error_type(m) != SYS {
            format!("{e}.into()")
        } else {
            e.to_string()
        }
    }

    /// An operation of `A` on the abstract type: to the object form's stub, or to the value's
    /// servant impl (NO_IMPLEMENT when it has none); INV_OBJREF on nil.
    fn gen_abstract_method(&mut self, m: &Method) {
        let taken: Vec<String> = m.params.iter().map(|p| p.1.clone()).collect();
        let p = fresh("p", &taken);
        let s = fresh("s", &taken);
        self.out.line(format!("/// IDL `{}`.", m.wire));
        self.out
            .open(format!("pub {}", self.signature(m, &m.proxy)));
        let args: Vec<&str> = m
            .params
            .iter()
            .filter(|x| x.2 != ParamDir::Out)
            .map(|x| x.1.as_str())
            .collect();
        let mut trait_path = self.type_path(&m.owner);
        trait_path.push_str("Servant");
        self.out.open("match &self.0");
        self.out.line(format!(
            "{AR}::Object({p}) => {p}.{}({}),",
            m.proxy,
            args.join(", ")
        ));
        let servant_args = std::iter::once(format!("&*{s}"))
            .chain(args.iter().map(|a| a.to_string()))
            .collect::<Vec<_>>()
            .join(", ");
        let no_impl = self.as_method_error(
            m,
            &format!("{SYS}::new(::corbina::SystemExceptionKind::NoImplement, ::corbina::error::minor::NO_IMPLEMENT_OPERATION)"),
        );
        self.out
            .open(format!("{AR}::Value(_) => match self.value_servant()"));
        self.out.line(format!(
            "Some({s}) => {trait_path}::{}({servant_args}),",
            m.rust
        ));
        self.out.line(format!("None => Err({no_impl}),"));
        self.out.close_with(",");
        let nil = self.as_method_error(
            m,
            &format!("{SYS}::new(::corbina::SystemExceptionKind::InvObjref, ::corbina::error::minor::INV_OBJREF_NIL)"),
        );
        self.out.line(format!("{AR}::Null => Err({nil}),"));
        self.out.close();
        self.out.close();
    }

    /// Paths of the concrete valuetypes of the main file that support `abs` (directly, through
    /// a valuetype base, or through an interface deriving from it).
    fn values_supporting(&self, abs: &Definition) -> Vec<String> {
        let mut out = Vec::new();
        self.spec.walk(&mut |d| {
            let DefinitionKind::ValueType(v) = &d.kind else {
                return;
            };
            if !d.from_main_file || v.is_abstract {
                return;
            }
            let mut supports: Vec<&ScopedName> = v.supports.iter().collect();
            for b in self.value_bases_of(v) {
                if let DefinitionKind::ValueType(bv) = &b.kind {
                    supports.extend(bv.supports.iter());
                }
            }
            let hit = supports.iter().any(|s| {
                self.lookup(s).is_some_and(|sd| {
                    self.spec
                        .all_bases(sd)
                        .into_iter()
                        .chain([sd])
                        .any(|i| i.scoped_name == abs.scoped_name)
                })
            });
            if hit {
                out.push(self.type_path(&d.scoped_name));
            }
        });
        out
    }
}
