//! Interfaces: client proxy, servant trait, skeleton and per-operation error enums.

use crate::context::Gen;
use crate::marshal::{block, primitive, Val};
use crate::names::{camel, fresh, snake, unique};
use crate::naming::{NameTable, PROXY_RESERVED};
use corbina_idl::ast::ParamDir;
use corbina_idl::model::{Definition, DefinitionKind, Interface, ScopedName};
use corbina_idl::{SourceLoc, Type};

const VALUE_OUTPUT: &str = "::corbina::valuetype::ValueOutput";
const VALUE_INPUT: &str = "::corbina::valuetype::ValueInput";

const SYS: &str = "::corbina::SystemException";

/// An operation or attribute accessor as a Rust method.
pub(crate) struct Method {
    /// The method's name in its servant trait.
    pub(crate) rust: String,
    /// The method's name in the proxy (unique across inherited methods too).
    pub(crate) proxy: String,
    /// Whether the skeleton calls it as `<S as Trait>::rust` (two servant traits of the
    /// interface have a method of that name).
    pub(crate) qualified: bool,
    pub(crate) wire: String,
    pub(crate) oneway: bool,
    /// (IDL name, Rust name, direction, type)
    pub(crate) params: Vec<(String, String, ParamDir, Type)>,
    pub(crate) ret: Option<Type>,
    pub(crate) raises: Vec<ScopedName>,
    /// The error enum's variant for each exception of `raises`.
    pub(crate) variants: Vec<String>,
    /// The error enum (when `raises` is not empty).
    pub(crate) error_enum: String,
    /// The declaring interface.
    pub(crate) owner: ScopedName,
    /// The declaring interface's repository id (collocated calls ask the servant for it).
    pub(crate) owner_id: String,
    pub(crate) loc: SourceLoc,
}

/// Rust parameter names, unique within the operation.
fn param_names(params: &[(String, ParamDir, Type)]) -> Vec<(String, String, ParamDir, Type)> {
    let names = unique(params.iter().map(|p| snake(&p.0)), &[]);
    params
        .iter()
        .zip(names)
        .map(|(p, n)| (p.0.clone(), n, p.1, p.2.clone()))
        .collect()
}

pub(crate) fn methods_of(names: &NameTable, def: &Definition, i: &Interface) -> Vec<Method> {
    // An interface the table does not know (an AMI reply handler, implied IDL) gets its
    // method names here, unique the same way.
    let wires = i
        .operations
        .iter()
        .map(|o| o.name.clone())
        .chain(i.attributes.iter().flat_map(|a| {
            let set = (!a.readonly).then(|| format!("_set_{}", a.name));
            [Some(format!("_get_{}", a.name)), set]
                .into_iter()
                .flatten()
        }));
    let mut fallback = unique(wires.map(|w| snake(&w)), PROXY_RESERVED).into_iter();
    let mut v = Vec::new();
    let mut push = |wire: String,
                    oneway: bool,
                    params: Vec<(String, ParamDir, Type)>,
                    ret: Option<Type>,
                    raises: &[ScopedName],
                    loc: &SourceLoc| {
        let own = fallback.next();
        let rust = names
            .method(&def.scoped_name, &wire)
            .map_or_else(|| own.unwrap_or_else(|| snake(&wire)), str::to_string);
        let raises = crate::naming::dedup_raises(raises);
        let error_enum = names
            .error_enum(&def.scoped_name, &wire)
            .map_or_else(String::new, str::to_string);
        v.push(Method {
            proxy: rust.clone(),
            rust,
            qualified: false,
            wire,
            oneway,
            params: param_names(&params),
            ret,
            variants: unique(raises.iter().map(|e| camel(e.name())), &["System"]),
            raises,
            error_enum,
            owner: def.scoped_name.clone(),
            owner_id: def.repository_id.clone(),
            loc: loc.clone(),
        });
    };
    for op in &i.operations {
        let params = op
            .params
            .iter()
            .map(|p| (p.name.clone(), p.direction, p.ty.clone()))
            .collect();
        push(
            op.name.clone(),
            op.oneway,
            params,
            op.return_type.clone(),
            &op.raises,
            &op.loc,
        );
    }
    for a in &i.attributes {
        push(
            format!("_get_{}", a.name),
            false,
            Vec::new(),
            Some(a.ty.clone()),
            &a.get_raises,
            &a.loc,
        );
        if !a.readonly {
            push(
                format!("_set_{}", a.name),
                false,
                vec![("value".into(), ParamDir::In, a.ty.clone())],
                None,
                &a.set_raises,
                &a.loc,
            );
        }
    }
    v
}

impl Gen<'_> {
    /// Whether an `in` parameter of this type is passed by value.
    pub(crate) fn by_value(&self, ty: &Type) -> bool {
        let t = self.resolve(ty);
        primitive(t).is_some()
            || matches!(
                t,
                Type::Boolean
                    | Type::Char
                    | Type::Octet
                    | Type::WChar
                    | Type::LongDouble
                    | Type::Fixed { .. }
            )
            || self.is_enum(t)
    }

    pub(crate) fn in_type(&self, ty: &Type) -> String {
        if let Some(t) = self.objref(ty) {
            return format!("::core::option::Option<&{t}>");
        }
        match self.resolve(ty) {
            Type::String { .. } | Type::WString { .. } => "&str".into(),
            Type::Sequence { elem, .. } => format!("&[{}]", self.rust_type(elem)),
            _ if self.by_value(ty) => self.rust_type(ty),
            _ => format!("&{}", self.rust_type(ty)),
        }
    }

    pub(crate) fn error_type(&self, m: &Method) -> String {
        if m.raises.is_empty() {
            SYS.into()
        } else {
            let mut module = self.module_of(&m.owner);
            module.push(self.names.module(&m.owner));
            self.rel_path(&module, &m.error_enum)
        }
    }

    fn ok_type(&self, m: &Method) -> String {
        let mut parts: Vec<String> = m.ret.iter().map(|t| self.rust_type(t)).collect();
        parts.extend(
            m.params
                .iter()
                .filter(|p| p.2 == ParamDir::Out)
                .map(|p| self.rust_type(&p.3)),
        );
        match parts.len() {
            0 => "()".into(),
            1 => parts.remove(0),
            _ => format!("({})", parts.join(", ")),
        }
    }

    /// The method's signature under `name` (its trait name, or its proxy name).
    pub(crate) fn signature(&self, m: &Method, name: &str) -> String {
        let mut args = vec!["&self".to_string()];
        for (_, n, dir, ty) in &m.params {
            args.push(match dir {
                ParamDir::In => format!("{n}: {}", self.in_type(ty)),
                ParamDir::InOut => format!("{n}: &mut {}", self.rust_type(ty)),
                ParamDir::Out => continue,
            });
        }
        let ok = if m.oneway {
            "()".into()
        } else {
            self.ok_type(m)
        };
        let err = if m.oneway {
            SYS.into()
        } else {
            self.error_type(m)
        };
        format!(
            "fn {}({}) -> ::core::result::Result<{ok}, {err}>",
            name,
            args.join(", ")
        )
    }

    pub(crate) fn check_method(&mut self, m: &Method, iface: &ScopedName) -> bool {
        let mut ok = true;
        let what = format!("operation '{}' of '{iface}'", m.wire);
        for t in m.ret.iter().chain(m.params.iter().map(|p| &p.3)) {
            ok &= self.check_type(t, &m.loc, &what);
        }
        ok
    }

    pub fn gen_interface(&mut self, def: &Definition, i: &Interface) {
        if i.is_abstract {
            self.gen_abstract_interface(def, i);
            return;
        }
        if i.is_local {
            self.gen_local_interface(def, i);
            return;
        }
        self.gen_unconstrained_interface(def, i, true);
    }

    /// An interface forward-declared and never defined: a proxy without operations, so
    /// that references to it can be held, passed and narrowed.
    pub fn gen_undefined_interface(&mut self, def: &Definition, is_local: bool) {
        if is_local {
            self.gen_local_interface(def, &Interface::default());
        } else {
            self.gen_unconstrained_interface(def, &Interface::default(), false);
        }
    }

    /// The proxy, and with `servant` the servant trait and skeleton. For an abstract interface
    /// the proxy is its object form (`<A>Object`) and there is no skeleton; returns the
    /// methods (`None` when an error was reported).
    pub(crate) fn gen_unconstrained_interface(
        &mut self,
        def: &Definition,
        i: &Interface,
        servant: bool,
    ) -> Option<Vec<Method>> {
        let all: Vec<&Definition> = self.spec.all_bases(def).into_iter().chain([def]).collect();
        let mut methods = Vec::new();
        for d in &all {
            if let DefinitionKind::Interface(bi) = &d.kind {
                methods.extend(methods_of(&self.names, d, bi));
            }
        }
        let mut ok = true;
        for m in &methods {
            ok &= self.check_method(m, &def.scoped_name);
        }
        if !ok {
            return None;
        }
        // Methods of different bases mapped to one name (`fooBar`, `foo_bar`) are told
        // apart in the proxy; the skeleton names the trait of each.
        let proxy = unique(methods.iter().map(|m| m.rust.clone()), PROXY_RESERVED);
        let trait_names: Vec<String> = methods.iter().map(|m| m.rust.clone()).collect();
        let mut renamed = Vec::new();
        for (m, p) in methods.iter_mut().zip(proxy) {
            m.qualified = trait_names.iter().filter(|n| **n == m.rust).count() > 1;
            if p != m.rust {
                let what = format!("the `{}` proxy's method for", def.scoped_name);
                let msg = crate::naming::renamed(&what, &m.owner.child(&m.wire), &p, &m.rust);
                renamed.push((m.loc.clone(), msg));
            }
            m.proxy = p;
        }
        for (loc, msg) in renamed {
            self.warn(&loc, msg);
        }
        let name = if i.is_abstract {
            format!("{}Object", self.names.item(&def.scoped_name))
        } else {
            self.names.item(&def.scoped_name)
        };
        let id = &def.repository_id;
        // Proxy.
        self.out.line(format!(
            "/// Client proxy for IDL {}interface `{}` (`{id}`).",
            if i.is_abstract { "abstract " } else { "" },
            def.scoped_name
        ));
        self.out
            .line("#[derive(Clone, Debug, PartialEq, Eq, Hash)]");
        self.out.open(format!("pub struct {name}"));
        self.out.line("obj: ::corbina::ObjectRef,");
        self.out.close();
        self.out.blank();
        self.out.open(format!("impl {name}"));
        self.out.line("/// The repository id.");
        self.out
            .line(format!("pub const REPOSITORY_ID: &'static str = {id:?};"));
        self.out.blank();
        self.out.line(
            "/// A proxy for `obj` if it implements this interface (asking the object when the",
        );
        self.out
            .line("/// reference's type id is not conclusive); `BAD_PARAM` if it does not.");
        self.out.open(format!(
            "pub fn narrow(obj: &::corbina::ObjectRef) -> ::core::result::Result<Self, {SYS}>"
        ));
        self.out.open("if obj.is_a(Self::REPOSITORY_ID)?");
        self.out.line("Ok(Self { obj: obj.clone() })");
        self.out.close_with(" else {");
        self.out.indent_more();
        self.out
            .line("Err(::corbina::Error::NotOfType { repository_id: Self::REPOSITORY_ID }.into())");
        self.out.close();
        self.out.close();
        self.out.blank();
        self.out
            .line("/// A proxy for `obj` without checking its type.");
        self.out
            .open("pub fn unchecked_narrow(obj: &::corbina::ObjectRef) -> Self");
        self.out.line("Self { obj: obj.clone() }");
        self.out.close();
        self.out.blank();
        self.out.line("/// The object reference.");
        self.out
            .open("pub fn as_object(&self) -> &::corbina::ObjectRef");
        self.out.line("&self.obj");
        self.out.close();
        self.out.blank();
        self.gen_type_code_fn(def);
        for m in &methods {
            self.out.blank();
            self.gen_proxy_method(m, false);
        }
        self.out.close();
        self.out.blank();
        self.out
            .open(format!("impl ::corbina::object::Proxy for {name}"));
        self.out
            .line(format!("const REPOSITORY_ID: &'static str = {id:?};"));
        self.out.blank();
        self.out
            .open("fn from_object(obj: ::corbina::ObjectRef) -> Self");
        self.out.line("Self { obj }");
        self.out.close();
        self.out.blank();
        self.out
            .open("fn as_object(&self) -> &::corbina::ObjectRef");
        self.out.line("&self.obj");
        self.out.close();
        self.out.close();
        for b in self.spec.all_bases(def) {
            let bp = self.type_path(&b.scoped_name);
            if self.is_abstract_interface(&b.scoped_name) {
                self.gen_into_abstract(&name, &bp);
                continue;
            }
            self.out.blank();
            self.out
                .open(format!("impl ::core::convert::From<{name}> for {bp}"));
            self.out.open(format!("fn from(p: {name}) -> {bp}"));
            self.out
                .line(format!("{bp}::unchecked_narrow(p.as_object())"));
            self.out.close();
            self.out.close();
        }
        self.gen_async_proxy(def, &name, &methods);
        if !servant {
            return Some(methods);
        }
        // Servant trait.
        let supers: Vec<String> = i
            .bases
            .iter()
            .map(|b| {
                let mut p = self.type_path(b);
                p.push_str("Servant");
                p
            })
            .collect();
        let supers = if supers.is_empty() {
            "Send + Sync + 'static".into()
        } else {
            supers.join(" + ")
        };
        self.out.blank();
        let name = self.names.item(&def.scoped_name);
        if i.is_abstract {
            self.out.line(format!("/// The operations of IDL abstract interface `{}`: implemented by the servants of the", def.scoped_name));
            self.out.line("/// interfaces deriving from it and by the state structs of the valuetypes supporting it.");
        } else {
            self.out.line(format!("/// What a servant for IDL interface `{}` implements; serve it with [`{name}Skeleton`].", def.scoped_name));
        }
        self.allow_camel(&format!("{name}Servant"));
        self.out.open(format!("pub trait {name}Servant: {supers}"));
        let own: Vec<&Method> = methods
            .iter()
            .filter(|m| m.owner == def.scoped_name)
            .collect();
        for (k, m) in own.iter().enumerate() {
            if k > 0 {
                self.out.blank();
            }
            self.out.line(format!("/// IDL `{}`.", m.wire));
            if self.options.no_implement_defaults {
                // Unused parameters are the point of a default; `.into()` only where the
                // error type is an operation's own (clippy's useless_conversion otherwise).
                let err = if !m.oneway && self.error_type(m) != SYS {
                    "(e.into())"
                } else {
                    "(e)"
                };
                self.out.line("#[allow(unused_variables)]");
                self.out.open(self.signature(m, &m.rust));
                self.out.line(
                    "let e = ::corbina::SystemException::new(::corbina::SystemExceptionKind::NoImplement, ::corbina::error::minor::NO_IMPLEMENT_OPERATION);",
                );
                self.out.line(format!("::core::result::Result::Err{err}"));
                self.out.close();
            } else {
                self.out.line(format!("{};", self.signature(m, &m.rust)));
            }
        }
        self.out.close();
        if i.is_abstract {
            self.gen_abstract_value_servant(def, &methods);
            return Some(methods);
        }
        self.out.blank();
        self.gen_skeleton(def, &name, &methods);
        if self.amh_enabled(def) {
            self.gen_amh(def, &methods);
        }
        if self.ami_enabled(def) {
            self.gen_ami(def, &name, &methods);
        }
        Some(methods)
    }

    /// The asynchronous proxy `<Name>Async`: the same operations as `async fn`s, with the
    /// same results (docs/mapping.md, *Asynchronous proxies*).
    fn gen_async_proxy(&mut self, def: &Definition, name: &str, methods: &[Method]) {
        let id = &def.repository_id;
        self.out.blank();
        self.out.line(format!(
            "/// Asynchronous proxy for IDL interface `{}`: [`{name}`]'s operations as `async fn`s",
            def.scoped_name
        ));
        self.out.line(
            "/// with the same results; the futures are `Send` and run on any executor (oneways",
        );
        self.out.line(
            "/// complete once written). Dropping a future before its reply cancels the request.",
        );
        self.out
            .line("#[derive(Clone, Debug, PartialEq, Eq, Hash)]");
        self.allow_camel(&format!("{name}Async"));
        self.out.open(format!("pub struct {name}Async"));
        self.out.line("obj: ::corbina::ObjectRef,");
        self.out.close();
        self.out.blank();
        self.out.open(format!("impl {name}Async"));
        self.out.line("/// The repository id.");
        self.out
            .line(format!("pub const REPOSITORY_ID: &'static str = {id:?};"));
        self.out.blank();
        self.out
            .line("/// An asynchronous proxy for `obj` without checking its type.");
        self.out
            .open("pub fn unchecked_narrow(obj: &::corbina::ObjectRef) -> Self");
        self.out.line("Self { obj: obj.clone() }");
        self.out.close();
        self.out.blank();
        self.out.line("/// The object reference.");
        self.out
            .open("pub fn as_object(&self) -> &::corbina::ObjectRef");
        self.out.line("&self.obj");
        self.out.close();
        for m in methods {
            self.out.blank();
            self.gen_proxy_method(m, true);
        }
        self.out.close();
        self.out.blank();
        self.out
            .open(format!("impl ::corbina::object::Proxy for {name}Async"));
        self.out
            .line(format!("const REPOSITORY_ID: &'static str = {id:?};"));
        self.out.blank();
        self.out
            .open("fn from_object(obj: ::corbina::ObjectRef) -> Self");
        self.out.line("Self { obj }");
        self.out.close();
        self.out.blank();
        self.out
            .open("fn as_object(&self) -> &::corbina::ObjectRef");
        self.out.line("&self.obj");
        self.out.close();
        self.out.close();
        for (from, to) in [
            (name.to_string(), format!("{name}Async")),
            (format!("{name}Async"), name.to_string()),
        ] {
            self.out.blank();
            self.out
                .open(format!("impl ::core::convert::From<{from}> for {to}"));
            self.out.open(format!("fn from(p: {from}) -> {to}"));
            self.out.line(format!("{to} {{ obj: p.obj }}"));
            self.out.close();
            self.out.close();
        }
    }

    /// A proxy method; `asynchronous`: of the `Async` proxy (no direct collocated call: the
    /// servant must not run on the polling thread).
    fn gen_proxy_method(&mut self, m: &Method, asynchronous: bool) {
        let taken: Vec<String> = m.params.iter().map(|p| p.1.clone()).collect();
        let w = fresh("w", &taken);
        let r = fresh("r", &taken);
        let values = fresh("values", &taken);
        self.out.line(format!("/// IDL `{}`.", m.wire));
        let qualifier = if asynchronous { "async " } else { "" };
        self.out
            .open(format!("pub {qualifier}{}", self.signature(m, &m.proxy)));
        let ins: Vec<&(String, String, ParamDir, Type)> =
            m.params.iter().filter(|p| p.2 != ParamDir::Out).collect();
        if !asynchronous {
            self.gen_collocated_call(m, &ins, &taken);
        }
        let call = match (m.oneway, asynchronous) {
            (true, false) => "invoke_oneway",
            (false, false) => "invoke",
            (true, true) => "invoke_oneway_async",
            (false, true) => "invoke_async",
        };
        let inouts = m.params.iter().any(|p| p.2 == ParamDir::InOut);
        // (local name, type, direction, parameter it updates)
        let results: Vec<(String, Type, ParamDir, String)> = m
            .ret
            .iter()
            .map(|t| {
                (
                    fresh("ret", &taken),
                    t.clone(),
                    ParamDir::Out,
                    String::new(),
                )
            })
            .chain(m.params.iter().filter(|p| p.2 != ParamDir::In).map(|p| {
                let local = fresh(&format!("{}_out", p.1.trim_start_matches("r#")), &taken);
                (local, p.3.clone(), p.2, p.1.clone())
            }))
            .collect();
        if inouts {
            let names: Vec<&str> = results.iter().map(|x| x.0.as_str()).collect();
            // A lone inout parameter binds without parentheses (no `unused_parens`).
            let pat = match names.as_slice() {
                [one] => (*one).to_string(),
                _ => format!("({})", names.join(", ")),
            };
            self.out.line(format!("let {pat} = self.obj.{call}("));
        } else {
            self.out.line(format!("self.obj.{call}("));
        }
        self.out.indent_more();
        self.out.line(format!("{:?},", m.wire));
        if ins.is_empty() {
            self.out.line("|_| Ok(()),");
        } else {
            self.out.open(format!("|{w}|"));
            let shared = self.shared_values(ins.iter().map(|p| &p.3));
            if shared {
                self.out
                    .line(format!("let mut {values} = {VALUE_OUTPUT}::new();"));
            }
            for (_, n, dir, ty) in &ins {
                let v = match dir {
                    ParamDir::InOut => Val::inout(n),
                    _ if self.by_value(ty) => Val::owned(n),
                    _ => Val::borrowed(n),
                };
                if shared && self.contains_value(ty) {
                    self.write_scoped(ty, &v, &w, &values);
                } else {
                    self.encode_value(ty, &v, &w, 0);
                }
            }
            self.out.line("Ok(())");
            self.out.close_with(",");
        }
        if !m.oneway {
            if results.is_empty() {
                self.out.line("|_| Ok(()),");
            } else {
                self.out.open(format!("|{r}|"));
                let shared = self.shared_values(results.iter().map(|x| &x.1));
                if shared {
                    self.out
                        .line(format!("let mut {values} = {VALUE_INPUT}::new();"));
                }
                for (n, ty, _, _) in &results {
                    let value = if shared && self.contains_value(ty) {
                        self.read_scoped(ty, &r, &values)
                    } else {
                        self.decode_value(ty, &r)
                    };
                    self.out.line(format!("let {n} = {value};"));
                }
                let names: Vec<&str> = results.iter().map(|x| x.0.as_str()).collect();
                if names.len() == 1 {
                    self.out.line(format!("Ok({})", names[0]));
                } else {
                    self.out.line(format!("Ok(({}))", names.join(", ")));
                }
                self.out.close_with(",");
            }
            if m.raises.is_empty() {
                self.out.line("::corbina::no_user,");
            } else {
                let id = fresh("id", &taken);
                let et = self.error_type(m);
                self.out.open(format!("|{id}, {r}|"));
                self.out.open(format!("Ok(match {id}"));
                for (ex, v) in m.raises.iter().zip(&m.variants) {
                    let Some(exd) = self.lookup(ex) else { continue };
                    let path = self.type_path(ex);
                    self.out.line(format!(
                        "{:?} => Some({et}::{v}(<{path} as ::corbina::cdr::CdrDecode>::decode({r})?)),",
                        exd.repository_id,
                    ));
                }
                self.out.line("_ => None,");
                self.out.close_with(")");
                self.out.close_with(",");
            }
        }
        self.out.dedent_line(match (inouts, asynchronous) {
            (true, false) => ")?;",
            (false, false) => ")",
            (true, true) => ").await?;",
            (false, true) => ").await",
        });
        if inouts {
            let mut keep = Vec::new();
            for (n, _, dir, param) in &results {
                if *dir == ParamDir::InOut {
                    self.out.line(format!("*{param} = {n};"));
                } else {
                    keep.push(n.as_str());
                }
            }
            match keep.len() {
                0 => self.out.line("Ok(())"),
                1 => self.out.line(format!("Ok({})", keep[0])),
                _ => self.out.line(format!("Ok(({}))", keep.join(", "))),
            }
        }
        self.out.close();
    }

    /// The direct path of a proxy method: the servant's own method when the object is
    /// collocated and typed (see `ObjectRef::collocated_call`). A oneway runs on the
    /// caller's thread too, and, as for a remote oneway, its errors are not reported.
    fn gen_collocated_call(
        &mut self,
        m: &Method,
        ins: &[&(String, String, ParamDir, Type)],
        taken: &[String],
    ) {
        let servant = fresh("servant", taken);
        let mut trait_path = self.type_path(&m.owner);
        trait_path.push_str("Servant");
        let args: Vec<&str> = std::iter::once(servant.as_str())
            .chain(ins.iter().map(|p| p.1.as_str()))
            .collect();
        let call = format!(
            "self.obj.collocated_call({:?}, |{servant}: &dyn {trait_path}| {trait_path}::{}({}))",
            m.owner_id,
            m.rust,
            args.join(", ")
        );
        if m.oneway {
            self.out.open(format!("if {call}.is_some()"));
            self.out.line("return Ok(());");
        } else {
            let done = fresh("done", taken);
            self.out.open(format!("if let Some({done}) = {call}"));
            self.out.line(format!("return {done};"));
        }
        self.out.close();
    }

    fn gen_skeleton(&mut self, def: &Definition, name: &str, methods: &[Method]) {
        // The interface and its bases, each with its servant trait: the skeleton hands the
        // servant out as each trait object for collocated calls.
        let mut local: Vec<(String, String)> =
            vec![(def.repository_id.clone(), format!("{name}Servant"))];
        for b in self.spec.all_bases(def) {
            let mut t = self.type_path(&b.scoped_name);
            t.push_str("Servant");
            local.push((b.repository_id.clone(), t));
        }
        let mut ids: Vec<String> = local.iter().map(|l| format!("{:?}", l.0)).collect();
        if self.in_ami_handler {
            // An implied-IDL reply handler derives from Messaging::ReplyHandler.
            ids.push(format!("{:?}", crate::ami::REPLY_HANDLER_ID));
        }
        ids.push("\"IDL:omg.org/CORBA/Object:1.0\"".into());
        self.out.line(format!(
            "/// Dispatches requests for IDL interface `{}` to a [`{name}Servant`], and hands the",
            def.scoped_name
        ));
        self.out
            .line("/// servant to collocated proxies (`::corbina::Servant::local_interface`).");
        self.allow_camel(&format!("{name}Skeleton"));
        self.out.open(format!("pub struct {name}Skeleton<_S>"));
        self.out.line("servant: ::std::sync::Arc<_S>,");
        for (k, (_, t)) in local.iter().enumerate() {
            self.out
                .line(format!("local_{k}: ::std::sync::Arc<dyn {t}>,"));
        }
        self.out.close();
        self.out.blank();
        self.out
            .open(format!("impl<_S: {name}Servant> {name}Skeleton<_S>"));
        self.out.line("/// A skeleton serving `servant`.");
        self.out.open("pub fn new(servant: _S) -> Self");
        self.out
            .line("Self::from_arc(::std::sync::Arc::new(servant))");
        self.out.close();
        self.out.blank();
        self.out
            .line("/// A skeleton serving a servant that is shared with other code.");
        self.out
            .open("pub fn from_arc(servant: ::std::sync::Arc<_S>) -> Self");
        self.out.open("Self");
        for k in 0..local.len() {
            self.out.line(format!("local_{k}: servant.clone(),"));
        }
        self.out.line("servant,");
        self.out.close();
        self.out.close();
        self.out.blank();
        self.out.line("/// The servant.");
        self.out.open("pub fn servant(&self) -> &_S");
        self.out.line("&self.servant");
        self.out.close();
        self.out.close();
        self.out.blank();
        self.out.open(format!(
            "impl<_S: {name}Servant> ::corbina::Servant for {name}Skeleton<_S>"
        ));
        self.out.open("fn primary_interface(&self) -> &'static str");
        self.out.line(format!("{:?}", def.repository_id));
        self.out.close();
        self.out.blank();
        self.out.open("fn is_a(&self, repository_id: &str) -> bool");
        self.out.line(format!(
            "matches!(\n    repository_id,\n    {}\n)",
            ids.join("\n        | ")
        ));
        self.out.close();
        self.out.blank();
        self.out.open(
            "fn local_interface(&self, repository_id: &str) -> ::core::option::Option<&dyn ::core::any::Any>",
        );
        self.out.open("match repository_id");
        for (k, (id, _)) in local.iter().enumerate() {
            self.out.line(format!("{id:?} => Some(&self.local_{k}),"));
        }
        self.out.line("_ => None,");
        self.out.close();
        self.out.close();
        self.out.blank();
        self.out.open(format!("fn dispatch(&self, request: &mut ::corbina::ServerRequest<'_, '_>) -> ::core::result::Result<(), {SYS}>"));
        if !methods.is_empty() {
            self.out.open("match request.operation()");
            for m in methods {
                self.out.open(format!("{:?} =>", m.wire));
                self.gen_dispatch_arm(m);
                self.out.close();
            }
            self.out.open("_ =>");
        }
        self.out
            .open("if ::corbina::servant::dispatch_object_operation(self, request)?");
        self.out.line("Ok(())");
        self.out.close_with(" else {");
        self.out.indent_more();
        self.out.line("Err(::corbina::servant::bad_operation())");
        self.out.close();
        if !methods.is_empty() {
            self.out.close();
            self.out.close();
        }
        self.out.close();
        self.out.close();
    }

    fn gen_dispatch_arm(&mut self, m: &Method) {
        let ins: Vec<&(String, String, ParamDir, Type)> =
            m.params.iter().filter(|p| p.2 != ParamDir::Out).collect();
        if !ins.is_empty() {
            self.out.line("let r = request.arguments();");
        }
        let arg = |n: &str| format!("arg_{}", n.trim_start_matches("r#"));
        let shared = self.shared_values(ins.iter().map(|p| &p.3));
        if shared {
            self.out
                .line(format!("let mut values_ = {VALUE_INPUT}::new();"));
        }
        for (_, n, dir, ty) in &ins {
            let bytes = match self.resolve(ty) {
                Type::Sequence { elem, bound } if *dir == ParamDir::In => {
                    matches!(self.resolve(elem), Type::Octet | Type::Char).then_some(*bound)
                }
                _ => None,
            };
            let value = match bytes {
                Some(None) => "r.read_octet_seq()?".to_string(),
                Some(Some(b)) => block(&[
                    "let s = r.read_octet_seq()?;".into(),
                    crate::marshal::decode_bound_check("s.len()", Some(b), "r").unwrap_or_default(),
                    "s".into(),
                ]),
                None if shared && self.contains_value(ty) => self.read_scoped(ty, "r", "values_"),
                None => self.decode_value(ty, "r"),
            };
            let mutbl = if *dir == ParamDir::InOut { "mut " } else { "" };
            self.out.line(format!("let {mutbl}{} = {value};", arg(n)));
        }
        self.out.line("request.arguments_done()?;");
        let call_args: Vec<String> = ins
            .iter()
            .map(|(_, n, dir, ty)| {
                let a = arg(n);
                match dir {
                    ParamDir::InOut => format!("&mut {a}"),
                    _ if self.by_value(ty) => a,
                    _ if self.objref(ty).is_some() => format!("{a}.as_ref()"),
                    _ => match self.resolve(ty) {
                        Type::Sequence { elem, .. }
                            if matches!(self.resolve(elem), Type::Octet | Type::Char) =>
                        {
                            a
                        }
                        _ => format!("&{a}"),
                    },
                }
            })
            .collect();
        // Through `S::` (static dispatch), so that an operation named like a method of `Arc`
        // (`clone`) still reaches the servant.
        let target = if m.qualified {
            let mut t = self.type_path(&m.owner);
            t.push_str("Servant");
            format!("<_S as {t}>")
        } else {
            "_S".to_string()
        };
        let call = format!(
            "{target}::{}({})",
            m.rust,
            std::iter::once("&self.servant".to_string())
                .chain(call_args)
                .collect::<Vec<_>>()
                .join(", ")
        );
        if m.oneway {
            self.out.line(format!("{call}?;"));
            self.out.line("request.reply(|_| Ok(()))");
            return;
        }
        let mut outs: Vec<(String, Type)> = Vec::new();
        if let Some(t) = &m.ret {
            outs.push(("ret_".into(), t.clone()));
        }
        for (_, n, dir, ty) in &m.params {
            if *dir == ParamDir::Out {
                outs.push((format!("out_{}", n.trim_start_matches("r#")), ty.clone()));
            }
        }
        let pat = match outs.len() {
            0 => "()".to_string(),
            1 => outs[0].0.clone(),
            _ => format!(
                "({})",
                outs.iter()
                    .map(|o| o.0.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        // Reply body: return value, then inout and out values in declaration order.
        let mut body: Vec<(String, Type)> = m
            .ret
            .iter()
            .map(|t| ("ret_".to_string(), t.clone()))
            .collect();
        for (_, n, dir, ty) in &m.params {
            match dir {
                ParamDir::InOut => body.push((arg(n), ty.clone())),
                ParamDir::Out => {
                    body.push((format!("out_{}", n.trim_start_matches("r#")), ty.clone()))
                }
                ParamDir::In => {}
            }
        }
        let reply = |g: &mut Gen<'_>| {
            if body.is_empty() {
                g.out.line("request.reply(|_| Ok(()))");
            } else {
                g.out.open("request.reply(|w|");
                let shared = g.shared_values(body.iter().map(|b| &b.1));
                if shared {
                    g.out
                        .line(format!("let mut values_ = {VALUE_OUTPUT}::new();"));
                }
                for (n, ty) in &body {
                    if shared && g.contains_value(ty) {
                        g.write_scoped(ty, &Val::owned(n), "w", "values_");
                    } else {
                        g.encode_value(ty, &Val::owned(n), "w", 0);
                    }
                }
                g.out.line("Ok(())");
                g.out.close_with(")");
            }
        };
        if m.raises.is_empty() {
            if pat == "()" {
                self.out.line(format!("{call}?;"));
            } else {
                self.out.line(format!("let {pat} = {call}?;"));
            }
            reply(self);
        } else {
            let et = self.error_type(m);
            self.out.open(format!("match {call}"));
            self.out.open(format!("Ok({pat}) =>"));
            reply(self);
            self.out.close();
            for v in &m.variants {
                self.out.line(format!(
                    "Err({et}::{v}(e)) => request.reply_user_exception(|w| ::corbina::cdr::CdrEncode::encode(&e, w)),",
                ));
            }
            self.out.line(format!("Err({et}::System(e)) => Err(e),"));
            self.out.close();
        }
    }

    /// The error enums of an interface's operations that raise user exceptions (written in
    /// the interface's module).
    pub fn gen_error_enums(&mut self, def: &Definition, i: &Interface) {
        for m in methods_of(&self.names, def, i) {
            if m.raises.is_empty() {
                continue;
            }
            let en = m.error_enum.clone();
            let variants: Vec<(String, String)> = m
                .raises
                .iter()
                .zip(&m.variants)
                .map(|(ex, v)| (v.clone(), self.type_path(ex)))
                .collect();
            self.out.blank();
            self.out
                .line(format!("/// Errors of `{}::{}`.", def.scoped_name, m.wire));
            self.out.line("#[derive(Debug, Clone, PartialEq)]");
            self.out.open(format!("pub enum {en}"));
            for (v, p) in &variants {
                self.out.line(format!("{v}({p}),"));
            }
            self.out.line("/// A system exception.");
            self.out.line(format!("System({SYS}),"));
            self.out.close();
            for (v, p) in variants
                .iter()
                .chain([&("System".to_string(), SYS.to_string())])
            {
                self.out.blank();
                self.out
                    .open(format!("impl ::core::convert::From<{p}> for {en}"));
                self.out.open(format!("fn from(e: {p}) -> Self"));
                self.out.line(format!("Self::{v}(e)"));
                self.out.close();
                self.out.close();
            }
            self.out.blank();
            self.out.open(format!("impl ::core::fmt::Display for {en}"));
            self.out
                .open("fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result");
            self.out.open("match self");
            for (v, _) in variants
                .iter()
                .chain([&("System".to_string(), String::new())])
            {
                self.out
                    .line(format!("Self::{v}(e) => ::core::fmt::Display::fmt(e, f),"));
            }
            self.out.close();
            self.out.close();
            self.out.close();
            self.out.blank();
            self.out
                .line(format!("impl ::std::error::Error for {en} {{}}"));
            if self.options.ami || !self.options.ami_interfaces.is_empty() {
                self.gen_raised_exception(&en, &m);
            }
        }
    }
}
