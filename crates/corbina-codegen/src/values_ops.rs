//! Valuetype behaviour (`docs/mapping.md`, "Value operations, factories and `supports`"):
//! the `…Operations` trait of operations and attributes, the `…Factory` trait of `factory`
//! initializers, servants of supported interfaces, abstract valuetypes, and struct members
//! holding values inside a value's state.

use crate::context::Gen;
use crate::interfaces::{methods_of, Method};
use crate::marshal::Val;
use crate::names::{snake, unique};
use corbina_idl::ast::ParamDir;
use corbina_idl::model::{
    Definition, DefinitionKind, Interface, Member, Operation, Union, ValueType,
};
use corbina_idl::{ScopedName, Type};

const VT: &str = "::corbina::valuetype";

/// A valuetype's operations and attributes as an interface's (for `methods_of`).
pub(crate) fn value_iface(v: &ValueType) -> Interface {
    Interface {
        operations: v.operations.clone(),
        attributes: v.attributes.clone(),
        ..Interface::default()
    }
}

/// The name-table key of a `factory` initializer's error enum (no IDL operation name has a
/// space, so it cannot clash with one).
pub(crate) fn factory_key(name: &str) -> String {
    format!("factory {name}")
}

/// A valuetype's initializers that raise user exceptions, as operations keyed by
/// [`factory_key`] (for their error enums).
pub(crate) fn value_factories_iface(v: &ValueType) -> Interface {
    Interface {
        operations: v
            .initializers
            .iter()
            .filter(|i| !i.raises.is_empty())
            .map(|i| Operation {
                name: factory_key(&i.name),
                loc: i.loc.clone(),
                oneway: false,
                return_type: None,
                params: i.params.clone(),
                raises: i.raises.clone(),
                contexts: Vec::new(),
            })
            .collect(),
        ..Interface::default()
    }
}

/// Whether a valuetype's operations, attributes or initializers raise user exceptions (then
/// it has a module for their error enums).
pub(crate) fn value_raises(v: &ValueType) -> bool {
    v.operations.iter().any(|o| !o.raises.is_empty())
        || v.attributes
            .iter()
            .any(|a| !a.get_raises.is_empty() || !a.set_raises.is_empty())
        || v.initializers.iter().any(|i| !i.raises.is_empty())
}

impl Gen<'_> {
    /// `<V>Operations`: the operations and attributes the application implements on the
    /// value's state struct (`&mut self`: they run on the locked state).
    pub(crate) fn gen_value_operations(&mut self, def: &Definition, v: &ValueType) {
        if v.operations.is_empty() && v.attributes.is_empty() {
            return;
        }
        let iface = value_iface(v);
        let methods = methods_of(&self.names, def, &iface);
        let mut ok = true;
        for m in &methods {
            ok &= self.check_method(m, &def.scoped_name);
        }
        if !ok {
            return;
        }
        let name = self.names.item(&def.scoped_name);
        self.out.blank();
        let supers: Vec<String> = self
            .value_bases_with_operations(v)
            .iter()
            .map(|b| format!("{}Operations", self.type_path(b)))
            .collect();
        let supers = if supers.is_empty() {
            String::new()
        } else {
            format!(": {}", supers.join(" + "))
        };
        self.out.line(format!(
            "/// The operations and attributes of IDL valuetype `{}`, implemented by the application",
            def.scoped_name
        ));
        self.out.line(format!(
            "/// on the state struct{}; called on a locked value (`value.lock()`).",
            if v.is_abstract {
                "s of the concrete values derived from it"
            } else {
                ""
            }
        ));
        self.allow_camel(&format!("{name}Operations"));
        self.out.open(format!("pub trait {name}Operations{supers}"));
        for (k, m) in methods.iter().enumerate() {
            if k > 0 {
                self.out.blank();
            }
            self.out.line(format!("/// IDL `{}`.", m.wire));
            let sig = self.signature(m, &m.rust).replacen("&self", "&mut self", 1);
            self.out.line(format!("{sig};"));
        }
        self.out.close();
    }

    /// The bases of `v` that declare operations or attributes (each has a trait).
    fn value_bases_with_operations(&self, v: &ValueType) -> Vec<ScopedName> {
        self.value_bases_of(v)
            .into_iter()
            .filter(|b| matches!(&b.kind, DefinitionKind::ValueType(bv) if !bv.operations.is_empty() || !bv.attributes.is_empty()))
            .map(|b| b.scoped_name.clone())
            .collect()
    }

    /// `<V>Factory`: the `factory` initializers, implemented by the application's value
    /// factory (which also builds values from the wire: `ValueFactory`).
    pub(crate) fn gen_value_initializers(&mut self, def: &Definition, v: &ValueType) {
        if v.initializers.is_empty() {
            return;
        }
        let mut ok = true;
        for init in &v.initializers {
            let what = format!("factory '{}' of '{}'", init.name, def.scoped_name);
            for p in &init.params {
                ok &= self.check_type(&p.ty, &init.loc, &what);
            }
        }
        if !ok {
            return;
        }
        let name = self.names.item(&def.scoped_name);
        self.out.blank();
        self.out.line(format!(
            "/// The `factory` initializers of IDL valuetype `{}`: implemented by the application's",
            def.scoped_name
        ));
        self.out.line(format!(
            "/// value factory, registered with `Orb::register_value_factory({name}::REPOSITORY_ID, …)`."
        ));
        self.allow_camel(&format!("{name}Factory"));
        self.out
            .open(format!("pub trait {name}Factory: {VT}::ValueFactory"));
        let fns = unique(v.initializers.iter().map(|i| snake(&i.name)), &[]);
        for (k, (init, f)) in v.initializers.iter().zip(fns).enumerate() {
            if k > 0 {
                self.out.blank();
            }
            let names = unique(init.params.iter().map(|p| snake(&p.name)), &["self"]);
            let args: Vec<String> = std::iter::once("&self".to_string())
                .chain(
                    init.params
                        .iter()
                        .zip(&names)
                        .map(|(p, n)| format!("{n}: {}", self.in_type(&p.ty))),
                )
                .collect();
            self.out.line(format!("/// IDL `factory {}`.", init.name));
            let made = format!("{VT}::ValueRef<{name}>");
            let ret = match self
                .names
                .error_enum(&def.scoped_name, &factory_key(&init.name))
            {
                Some(en) if !init.raises.is_empty() => {
                    let mut module = self.module_of(&def.scoped_name);
                    module.push(self.names.module(&def.scoped_name));
                    let en = self.rel_path(&module, en);
                    format!("::core::result::Result<{made}, {en}>")
                }
                _ => made,
            };
            self.out
                .line(format!("fn {f}({}) -> {ret};", args.join(", ")));
        }
        self.out.close();
    }

    /// For each interface the value supports (its bases' included): `ValueRef<S>` is a
    /// servant of it when the state struct `S` is, so the shared value itself can be
    /// activated; each call locks it. Generated once per interface.
    pub(crate) fn gen_supports(&mut self, _def: &Definition, v: &ValueType) {
        let ifaces: Vec<Definition> = self.supported_interfaces(v).into_iter().cloned().collect();
        for idef in &ifaces {
            if !self.servant_for_values.insert(idef.scoped_name.clone()) {
                continue;
            }
            let DefinitionKind::Interface(i) = &idef.kind else {
                continue;
            };
            let servant = format!("{}Servant", self.type_path(&idef.scoped_name));
            let methods: Vec<_> = methods_of(&self.names, idef, i)
                .into_iter()
                .filter(|m| m.owner == idef.scoped_name)
                .collect();
            let doc = format!(
                "/// A value whose state struct serves IDL interface `{}` serves it as a shared value.",
                idef.scoped_name
            );
            let methods: Vec<&Method> = methods.iter().collect();
            self.gen_value_ref_servant(&servant, &doc, &methods);
        }
    }

    /// `impl<S: XServant> XServant for ValueRef<S>` (`servant`: the trait's path), `methods`
    /// each locking the shared value and calling `S`'s; OBJECT_NOT_EXIST once it is gone.
    pub(crate) fn gen_value_ref_servant(&mut self, servant: &str, doc: &str, methods: &[&Method]) {
        self.out.blank();
        self.out.line(doc);
        let s = "_S";
        self.out.open(format!(
            "impl<{s}: {servant}> {servant} for {VT}::ValueRef<{s}>"
        ));
        for (k, m) in methods.iter().enumerate() {
            if k > 0 {
                self.out.blank();
            }
            self.out.open(self.signature(m, &m.rust));
            let args: Vec<&str> = m
                .params
                .iter()
                .filter(|p| p.2 != ParamDir::Out)
                .map(|p| p.1.as_str())
                .collect();
            let call_args = std::iter::once("&*g")
                .chain(args.iter().copied())
                .collect::<Vec<_>>()
                .join(", ");
            self.out.open("match self.lock()");
            self.out.line(format!(
                "Some(g) => <_S as {servant}>::{}({call_args}),",
                m.rust
            ));
            let none = self.as_method_error(
                m,
                "::corbina::SystemException::new(::corbina::SystemExceptionKind::ObjectNotExist, ::corbina::error::minor::OBJECT_NOT_EXIST_VALUE_GONE)",
            );
            self.out.line(format!("None => Err({none}),"));
            self.out.close();
            self.out.close();
        }
        self.out.close();
    }

    /// An abstract valuetype: a newtype over `ValueBase` holding a value of any concrete type
    /// derived from it, decoded through the registry, then the derived types this IDL defines.
    pub(crate) fn gen_abstract_value(&mut self, def: &Definition, v: &ValueType) {
        let name = self.names.item(&def.scoped_name);
        let id = &def.repository_id;
        let known = self.known_derived(def);
        self.out.line(format!(
            "/// IDL abstract valuetype `{}` (`{id}`): null, or a value of a concrete valuetype",
            def.scoped_name
        ));
        self.out.line(
            "/// derived from it (`From<ValueRef<V>>`, `downcast`); shared and compared by identity.",
        );
        self.out
            .line("#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]");
        self.out
            .line(format!("pub struct {name}(pub ::corbina::ValueBase);"));
        self.out.blank();
        self.out.open(format!("impl {name}"));
        self.out.line("/// The repository id.");
        self.out
            .line(format!("pub const REPOSITORY_ID: &'static str = {id:?};"));
        self.out.blank();
        self.gen_known_values("derived from it", &known);
        self.out.blank();
        self.out.line("/// The null value.");
        self.out.open("pub const fn null() -> Self");
        self.out.line("Self(::corbina::ValueBase::null())");
        self.out.close();
        self.out.blank();
        self.out
            .line("/// The value as a `ValueRef<T>` sharing its handle, if it is a `T`.");
        self.out.open(format!(
            "pub fn downcast<_T: {VT}::ValueType>(&self) -> ::core::option::Option<{VT}::ValueRef<_T>>"
        ));
        self.out.line("self.0.downcast()");
        self.out.close();
        self.out.blank();
        self.out
            .line("/// `v` as this type, if it is null or of a type derived from it.");
        self.out
            .open("pub fn from_base(v: ::corbina::ValueBase) -> ::core::option::Option<Self>");
        self.out
            .line("(v.is_null() || v.is_a(Self::REPOSITORY_ID)).then_some(Self(v))");
        self.out.close();
        self.out.blank();
        self.gen_type_code_fn(def);
        self.out.close();
        for k in &known {
            self.out.blank();
            self.out.open(format!(
                "impl ::core::convert::From<{VT}::ValueRef<{k}>> for {name}"
            ));
            self.out
                .open(format!("fn from(v: {VT}::ValueRef<{k}>) -> Self"));
            self.out.line("Self(v.into())");
            self.out.close();
            self.out.close();
        }
        self.out.blank();
        self.out.open(format!("impl {VT}::ValueMember for {name}"));
        self.out.open(format!(
            "fn write_member<'a>(&'a self, w: &mut ::corbina::cdr::CdrWriter<'a>, out: &mut {VT}::ValueOutput) -> ::corbina::cdr::Result<()>"
        ));
        self.out.line("self.0.write_member(w, out)");
        self.out.close();
        self.out.open(format!(
            "fn read_member(r: &mut ::corbina::cdr::CdrReader<'_>, input: &mut {VT}::ValueInput) -> ::corbina::cdr::Result<Self>"
        ));
        self.out.line(
            "::corbina::ValueBase::read_as(r, input, Self::REPOSITORY_ID, Self::KNOWN).map(Self)",
        );
        self.out.close();
        self.out.close();
        self.gen_value_codec_impls(&name);
        self.gen_value_operations(def, v);
    }

    /// `CdrEncode`/`CdrDecode` through `ValueMember`, a stream state of its own.
    pub(crate) fn gen_value_codec_impls(&mut self, name: &str) {
        self.gen_stream_codec_impls(
            name,
            &format!("{VT}::ValueMember::write_member(self, w, &mut {VT}::ValueOutput::new())"),
            &format!("{VT}::ValueMember::read_member(r, &mut {VT}::ValueInput::new())"),
        );
    }

    /// `CdrEncode`/`CdrDecode` for a value type: `write` (of `self` to `w`) and `read` (from
    /// `r`), each with a value stream state of its own.
    pub(crate) fn gen_stream_codec_impls(&mut self, name: &str, write: &str, read: &str) {
        self.out.blank();
        self.out
            .open(format!("impl ::corbina::cdr::CdrEncode for {name}"));
        self.out.open("fn encode<'a>(&'a self, w: &mut ::corbina::cdr::CdrWriter<'a>) -> ::corbina::cdr::Result<()>");
        self.out.line(write);
        self.out.close();
        self.out.close();
        self.out.blank();
        self.out
            .open(format!("impl<'a> ::corbina::cdr::CdrDecode<'a> for {name}"));
        self.out.line("const MIN_WIRE_SIZE: usize = 4;");
        self.out.open(
            "fn decode(r: &mut ::corbina::cdr::CdrReader<'a>) -> ::corbina::cdr::Result<Self>",
        );
        self.out.line(read);
        self.out.close();
        self.out.close();
    }

    /// `KNOWN`: the concrete valuetypes of this IDL `related` to the type being generated
    /// (Rust paths in `known`), whose default factories build a value received with their id
    /// when the registry has none.
    pub(crate) fn gen_known_values(&mut self, related: &str, known: &[String]) {
        self.out.line(format!(
            "/// The concrete valuetypes of this IDL {related}: their default factories build a"
        ));
        self.out
            .line("/// value received with their id when the registry has no factory for it.");
        let list: Vec<String> = known
            .iter()
            .map(|k| format!("{VT}::KnownValue::of::<{k}>()"))
            .collect();
        self.out.line(format!(
            "pub const KNOWN: &'static [{VT}::KnownValue] = &[{}];",
            list.join(", ")
        ));
    }

    /// Paths of the concrete valuetypes of the main file derived from `abs`.
    fn known_derived(&self, abs: &Definition) -> Vec<String> {
        self.main_file_values(|v| {
            !v.is_abstract
                && self
                    .value_bases_of(v)
                    .iter()
                    .any(|b| b.scoped_name == abs.scoped_name)
        })
    }

    /// A custom valuetype: its state is the application's (`CustomState`), marshalled by it.
    pub(crate) fn gen_custom_value(&mut self, def: &Definition, v: &ValueType) {
        let name = self.names.item(&def.scoped_name);
        self.out.line(format!(
            "/// IDL custom valuetype `{}` (`{}`): its state, marshalled by the application",
            def.scoped_name, def.repository_id
        ));
        self.out.line(
            "/// (`CustomState::Typed`) or kept as received (`CustomState::Opaque`). Used as `ValueRef<…>`.",
        );
        self.out.line("#[derive(Debug, Clone, Default)]");
        self.out.open(format!("pub struct {name}"));
        let members: Vec<String> = v
            .state_members
            .iter()
            .map(|m| format!("`{}`", m.name))
            .collect();
        if !members.is_empty() {
            self.out.line(format!(
                "/// The IDL state ({}) as the application's `CustomMarshal` writes it.",
                members.join(", ")
            ));
        }
        self.out.line(format!("pub state: {VT}::CustomState,"));
        self.out.close();
        self.out.blank();
        self.out.open(format!("impl {name}"));
        self.out.line("/// The repository id.");
        self.out.line(format!(
            "pub const REPOSITORY_ID: &'static str = {:?};",
            def.repository_id
        ));
        self.out.blank();
        self.gen_type_code_fn(def);
        self.out.close();
        self.out.blank();
        self.out.open(format!("impl {VT}::ValueType for {name}"));
        self.out.line(format!(
            "const REPOSITORY_ID: &'static str = {:?};",
            def.repository_id
        ));
        self.out.line(format!(
            "const REPOSITORY_IDS: &'static [&'static str] = &[{:?}];",
            def.repository_id
        ));
        self.out.line("const CHUNKED: bool = true;");
        let bases = self.value_bases_of(v);
        if !bases.is_empty() {
            let ids: Vec<String> = bases
                .iter()
                .map(|b| format!("{:?}", b.repository_id))
                .collect();
            self.out.line(format!(
                "const BASE_IDS: &'static [&'static str] = &[{}];",
                ids.join(", ")
            ));
        }
        self.out.open(format!(
            "fn write_state<'a>(&'a self, w: &mut ::corbina::cdr::CdrWriter<'a>, out: &mut {VT}::ValueOutput) -> ::corbina::cdr::Result<()>"
        ));
        self.out.line("self.state.write(w, out)");
        self.out.close();
        self.out.open(format!(
            "fn read_state(r: &mut ::corbina::cdr::CdrReader<'_>, input: &mut {VT}::ValueInput) -> ::corbina::cdr::Result<Self>"
        ));
        self.out.line(format!(
            "{VT}::CustomState::read(r, input, Self::REPOSITORY_ID).map(|state| Self {{ state }})"
        ));
        self.out.close();
        self.out.close();
        self.gen_value_operations(def, v);
        self.gen_value_initializers(def, v);
        self.gen_supports(def, v);
    }

    /// Whether the struct holds values (then it is a `ValueMember`).
    pub fn struct_holds_values(&self, def: &Definition) -> bool {
        self.contains_value(&Type::Named {
            name: def.scoped_name.clone(),
            kind: corbina_idl::model::NamedKind::Struct,
        })
    }

    /// For a struct holding values: `ValueMember`, so that inside a value's state its values
    /// share the stream's indirections and chunks.
    pub fn gen_struct_value_member(&mut self, def: &Definition, members: &[Member]) {
        if !self.struct_holds_values(def) {
            return;
        }
        let name = self.names.item(&def.scoped_name);
        let fields = crate::naming::member_names(members);
        self.out.blank();
        self.out.open(format!("impl {VT}::ValueMember for {name}"));
        self.out.open(format!(
            "fn write_member<'a>(&'a self, w: &mut ::corbina::cdr::CdrWriter<'a>, out: &mut {VT}::ValueOutput) -> ::corbina::cdr::Result<()>"
        ));
        for (m, f) in members.iter().zip(&fields) {
            self.write_in_value(&m.ty, &Val::owned(&format!("self.{f}")));
        }
        self.out.line("Ok(())");
        self.out.close();
        self.out.open(format!(
            "fn read_member(r: &mut ::corbina::cdr::CdrReader<'_>, input: &mut {VT}::ValueInput) -> ::corbina::cdr::Result<Self>"
        ));
        self.out.open("Ok(Self");
        for (m, f) in members.iter().zip(&fields) {
            let d = self.read_in_value(&m.ty);
            self.out.line(format!("{f}: {d},"));
        }
        self.out.close_with(")");
        self.out.close();
        self.out.close();
    }

    /// For a union holding values: its codec (`CdrEncode`/`CdrDecode` through `ValueMember`,
    /// one stream state for its values, as a struct's), `ValueMember` and `AnyInsert`; false
    /// (nothing written) for other unions.
    pub fn gen_union_codec_with_values(&mut self, def: &Definition, u: &Union, name: &str) -> bool {
        let ty = Type::Named {
            name: def.scoped_name.clone(),
            kind: corbina_idl::model::NamedKind::Union,
        };
        if !self.contains_value(&ty) {
            return false;
        }
        let min = self.min_wire_size(&u.discriminator).max(1);
        self.out
            .open(format!("impl ::corbina::cdr::CdrEncode for {name}"));
        self.out.open("fn encode<'a>(&'a self, w: &mut ::corbina::cdr::CdrWriter<'a>) -> ::corbina::cdr::Result<()>");
        self.out.line(format!(
            "{VT}::ValueMember::write_member(self, w, &mut {VT}::ValueOutput::new())"
        ));
        self.out.close();
        self.out.close();
        self.out.blank();
        self.out
            .open(format!("impl<'a> ::corbina::cdr::CdrDecode<'a> for {name}"));
        self.out
            .line(format!("const MIN_WIRE_SIZE: usize = {min};"));
        self.out.open(
            "fn decode(r: &mut ::corbina::cdr::CdrReader<'a>) -> ::corbina::cdr::Result<Self>",
        );
        self.out.line(format!(
            "{VT}::ValueMember::read_member(r, &mut {VT}::ValueInput::new())"
        ));
        self.out.close();
        self.out.close();
        self.gen_union_value_member(def, u);
        self.gen_any_insert(name);
        true
    }

    /// For a union holding values: `ValueMember`, so that inside a value's state (or a box)
    /// the values of its cases share the stream's indirections and chunks. The discriminator
    /// is state like any other member; variants and labels are `gen_union`'s.
    fn gen_union_value_member(&mut self, def: &Definition, u: &Union) {
        let name = self.names.item(&def.scoped_name);
        let shape = self.union_shape(u);
        let dt = self.rust_type(&u.discriminator);
        let disc = shape.disc.clone();
        self.out.blank();
        self.out.open(format!("impl {VT}::ValueMember for {name}"));
        // The label checks are written as `gen_union` writes them, for any labels.
        self.out
            .line("#[allow(clippy::manual_range_patterns, clippy::redundant_pattern_matching)]");
        self.out.open(format!(
            "fn write_member<'a>(&'a self, w: &mut ::corbina::cdr::CdrWriter<'a>, out: &mut {VT}::ValueOutput) -> ::corbina::cdr::Result<()>"
        ));
        self.out.line("out.begin_member(w)?;");
        self.out.open("match self");
        let bad_disc = "return Err(::corbina::cdr::MarshalError::InvalidValue { offset: w.position(), reason: \"the discriminator does not select this member\" });";
        for v in &shape.vars {
            let pat = if v.holds_disc {
                format!("Self::{}(d, v)", v.name)
            } else {
                format!("Self::{}(v)", v.name)
            };
            self.out.open(format!("{pat} =>"));
            if v.holds_disc {
                let check = if v.is_default {
                    (!shape.all_pats.is_empty())
                        .then(|| format!("if matches!(*d, {})", shape.all_pats.join(" | ")))
                } else {
                    Some(format!("if !matches!(*d, {})", v.pats.join(" | ")))
                };
                if let Some(c) = check {
                    self.out.open(c);
                    self.out.line(bad_disc);
                    self.out.close();
                }
                self.encode_value(&disc, &Val::borrowed("d"), "w", 0);
            } else {
                self.out.line(format!("let d: {dt} = {};", v.pats[0]));
                self.encode_value(&disc, &Val::owned("d"), "w", 0);
            }
            self.write_in_value(&v.ty, &Val::borrowed("v"));
            self.out.close();
        }
        if shape.implicit_default {
            self.out.open("Self::Default_(d) =>");
            if !shape.all_pats.is_empty() {
                self.out
                    .open(format!("if matches!(*d, {})", shape.all_pats.join(" | ")));
                self.out.line(bad_disc);
                self.out.close();
            }
            self.encode_value(&disc, &Val::borrowed("d"), "w", 0);
            self.out.close();
        }
        self.out.close();
        self.out.line("Ok(())");
        self.out.close();
        self.out.open(format!(
            "fn read_member(r: &mut ::corbina::cdr::CdrReader<'_>, input: &mut {VT}::ValueInput) -> ::corbina::cdr::Result<Self>"
        ));
        self.out.line("input.begin_member(r)?;");
        self.out
            .line(format!("let d: {dt} = {};", self.decode_value(&disc, "r")));
        self.gen_union_read_match(
            &shape.vars,
            shape.covered,
            shape.implicit_default,
            |g, ty| g.read_in_value(ty),
        );
        self.out.close();
        self.out.close();
    }
}
