//! Valuetypes: concrete values (state, single concrete base, `truncatable`) and boxed values
//! (`docs/mapping.md`, "Valuetypes"). The wire format is `corbina_cdr::value`'s; the runtime
//! traits are in `corbina::valuetype`.

use crate::context::Gen;
use crate::marshal::Val;
use crate::names::snake;
use corbina_idl::model::{Definition, DefinitionKind, NamedKind, StateMember, ValueBox, ValueType};
use corbina_idl::{ScopedName, Type};
use std::collections::HashSet;

const VT: &str = "::corbina::valuetype";

impl Gen<'_> {
    /// Whether the definition is a valuetype this generator maps (reported otherwise).
    pub fn value_supported(&mut self, _def: &Definition, _v: &ValueType) -> bool {
        true
    }

    /// Whether `name` is an abstract valuetype (mapped to a newtype over `ValueBase`).
    pub fn is_abstract_value(&self, name: &ScopedName) -> bool {
        matches!(
            self.lookup_defined(name).map(|d| &d.kind),
            Some(DefinitionKind::ValueType(v)) if v.is_abstract
        )
    }

    /// Every valuetype base of `v`, concrete and abstract, transitively, each once.
    pub(crate) fn value_bases_of(&self, v: &ValueType) -> Vec<&Definition> {
        let mut out: Vec<&Definition> = Vec::new();
        let mut todo: Vec<&ScopedName> = v.bases.iter().collect();
        while let Some(b) = todo.pop() {
            let Some(d) = self.lookup_defined(b) else {
                continue;
            };
            if out.iter().any(|o| o.scoped_name == d.scoped_name) {
                continue;
            }
            if let DefinitionKind::ValueType(bv) = &d.kind {
                todo.extend(bv.bases.iter());
                out.push(d);
            }
        }
        out
    }

    /// The interfaces `v` supports, its bases' included, with their base interfaces.
    pub(crate) fn supported_interfaces(&self, v: &ValueType) -> Vec<&Definition> {
        let mut out: Vec<&Definition> = Vec::new();
        let mut direct: Vec<&ScopedName> = v.supports.iter().collect();
        for b in self.value_bases_of(v) {
            if let DefinitionKind::ValueType(bv) = &b.kind {
                direct.extend(bv.supports.iter());
            }
        }
        for s in direct {
            let Some(d) = self.lookup(s) else { continue };
            for i in self.spec.all_bases(d).into_iter().chain([d]) {
                let concrete = matches!(&i.kind, DefinitionKind::Interface(ii) if !ii.is_abstract && !ii.is_local);
                if concrete && !out.iter().any(|o| o.scoped_name == i.scoped_name) {
                    out.push(i);
                }
            }
        }
        out
    }

    /// The definition of `name`, looking past a forward declaration (`valuetype V;`) to the
    /// full one in the same scope.
    pub fn lookup_defined(&self, name: &ScopedName) -> Option<&Definition> {
        let d = self.lookup(name)?;
        if !matches!(d.kind, DefinitionKind::ValueForward(_)) {
            return Some(d);
        }
        let parent = name.parent();
        let siblings = if parent.0.is_empty() {
            &self.spec.definitions[..]
        } else {
            self.lookup(&parent)?.kind.children()
        };
        siblings
            .iter()
            .find(|s| s.name == d.name && matches!(s.kind, DefinitionKind::ValueType(_)))
            .or(Some(d))
    }

    /// The concrete (stateful) base of a valuetype, if any: abstract bases carry no state.
    fn concrete_base(&self, v: &ValueType) -> Option<&Definition> {
        let d = self.lookup_defined(v.bases.first()?)?;
        match &d.kind {
            DefinitionKind::ValueType(b) if !b.is_abstract => Some(d),
            _ => None,
        }
    }

    /// The concrete bases of a valuetype, nearest first, transitively.
    fn concrete_ancestors(&self, v: &ValueType) -> Vec<&Definition> {
        let mut out: Vec<&Definition> = Vec::new();
        let mut cur = v;
        while let Some(b) = self.concrete_base(cur) {
            if out.iter().any(|o| o.scoped_name == b.scoped_name) {
                break;
            }
            out.push(b);
            match &b.kind {
                DefinitionKind::ValueType(bv) => cur = bv,
                _ => break,
            }
        }
        out
    }

    /// Paths of the concrete, non-custom valuetypes of the main file derived from `base`: the
    /// types a `ValueRef<Base>` is built as when one arrives and the registry has no factory.
    fn derived_in_main_file(&self, base: &Definition) -> Vec<String> {
        self.main_file_values(|v| {
            !v.is_abstract
                && !v.is_custom
                && self
                    .concrete_ancestors(v)
                    .iter()
                    .any(|b| b.scoped_name == base.scoped_name)
        })
    }

    /// Paths of the valuetypes of the main file that satisfy `keep`, in IDL order.
    pub(crate) fn main_file_values(&self, keep: impl Fn(&ValueType) -> bool) -> Vec<String> {
        let mut out = Vec::new();
        self.spec.walk(&mut |d| {
            if let DefinitionKind::ValueType(v) = &d.kind {
                if d.from_main_file && keep(v) {
                    out.push(self.type_path(&d.scoped_name));
                }
            }
        });
        out
    }

    /// `impl Derives<Base> for Derived`: how `name`'s state lends `base`'s members (which it
    /// holds first, with the same names) to a `ValueRef<Base>` and takes them back.
    fn gen_derives(&mut self, name: &str, base: &Definition) {
        let DefinitionKind::ValueType(bv) = &base.kind else {
            return;
        };
        let fields: Vec<String> = self.all_state(bv).iter().map(|m| snake(&m.name)).collect();
        let path = self.type_path(&base.scoped_name);
        self.out.blank();
        self.out
            .open(format!("impl {VT}::Derives<{path}> for {name}"));
        if fields.is_empty() {
            self.out.open(format!("fn take_base(&mut self) -> {path}"));
            self.out
                .line(format!("<{path} as ::core::default::Default>::default()"));
            self.out.close();
            self.out
                .open(format!("fn put_base(&mut self, _base: {path})"));
            self.out.close();
        } else {
            self.out.open(format!("fn take_base(&mut self) -> {path}"));
            self.out.line(format!(
                "let mut base = <{path} as ::core::default::Default>::default();"
            ));
            for f in &fields {
                self.out
                    .line(format!("::core::mem::swap(&mut base.{f}, &mut self.{f});"));
            }
            self.out.line("base");
            self.out.close();
            self.out
                .open(format!("fn put_base(&mut self, base: {path})"));
            for f in &fields {
                self.out.line(format!("self.{f} = base.{f};"));
            }
            self.out.close();
        }
        self.out.close();
    }

    /// State members, inherited ones first.
    fn all_state(&self, v: &ValueType) -> Vec<StateMember> {
        let mut out = match self.concrete_base(v) {
            Some(Definition {
                kind: DefinitionKind::ValueType(b),
                ..
            }) => self.all_state(b),
            _ => Vec::new(),
        };
        out.extend(v.state_members.iter().cloned());
        out
    }

    /// The ids sent in the value tag: this type's, then up the truncatable chain.
    fn truncatable_ids(&self, def: &Definition, v: &ValueType) -> Vec<String> {
        let mut ids = vec![def.repository_id.clone()];
        let mut cur = v;
        while cur.is_truncatable {
            let Some(b) = self.concrete_base(cur) else {
                break;
            };
            ids.push(b.repository_id.clone());
            match &b.kind {
                DefinitionKind::ValueType(bv) => cur = bv,
                _ => break,
            }
        }
        ids
    }

    /// Whether the parameters (or results) of one request (or reply) of `types` marshal in
    /// one indirection scope (CORBA 3.0 §15.3.4.3: the whole message body): when two of them
    /// hold values, or one is a sequence or array of values (its elements share the scope).
    pub(crate) fn shared_values<'t>(&self, types: impl Iterator<Item = &'t Type>) -> bool {
        let holding: Vec<&Type> = types.filter(|t| self.contains_value(t)).collect();
        holding.len() >= 2
            || holding
                .iter()
                .any(|t| matches!(self.resolve(t), Type::Sequence { .. } | Type::Array { .. }))
    }

    /// Writes parameter or result `v` of type `ty` (holding values) in the message's scope
    /// `values` (a `ValueOutput`), through `ValueMember`, checking a sequence's IDL bound.
    pub(crate) fn write_scoped(&mut self, ty: &Type, v: &Val, w: &str, values: &str) {
        let Type::Sequence { bound, .. } = self.resolve(ty).clone() else {
            self.out.line(format!(
                "{VT}::ValueMember::write_member({}, {w}, &mut {values})?;",
                v.reference
            ));
            return;
        };
        // A sequence parameter is a slice, a result a `Vec`: `write_seq` takes either.
        if let Some(b) = bound {
            self.out.line(format!(
                "if {}.len() > {b} {{ return Err(::corbina::cdr::MarshalError::InvalidValue {{ offset: {w}.position(), reason: \"longer than its IDL bound\" }}); }}",
                v.recv
            ));
        }
        self.out.line(format!(
            "{VT}::write_seq({}, {w}, &mut {values})?;",
            v.reference
        ));
    }

    /// An expression reading what [`Gen::write_scoped`] wrote.
    pub(crate) fn read_scoped(&self, ty: &Type, r: &str, values: &str) -> String {
        match self.resolve(ty) {
            Type::Sequence { bound: Some(b), .. } => {
                format!("{VT}::read_seq({r}, &mut {values}, {b})?")
            }
            _ => format!(
                "<{} as {VT}::ValueMember>::read_member({r}, &mut {values})?",
                self.rust_type(ty)
            ),
        }
    }

    /// Writes `v` (of type `ty`) as part of a value's state: values through `ValueMember`
    /// (sharing `out`), anything else in a chunk of its own.
    pub fn write_in_value(&mut self, ty: &Type, v: &Val) {
        if !self.contains_value(ty) {
            self.out.line("out.begin_member(w)?;");
            let resolved = self.resolve(ty).clone();
            if let Type::Sequence { elem, bound } = &resolved {
                if self.octet_array(elem) {
                    // A chunk ends after each string (see `ends_in_octet_array`).
                    if let Some(b) = bound {
                        self.out.line(format!(
                            "if {}.len() > {b} {{ return Err(::corbina::cdr::MarshalError::InvalidValue {{ offset: w.position(), reason: \"longer than its IDL bound\" }}); }}",
                            v.recv
                        ));
                    }
                    self.out.line(format!("w.write_length({}.len())?;", v.recv));
                    self.out.open(format!("for item in {}.iter()", v.recv));
                    self.out.line("out.begin_member(w)?;");
                    self.encode_value(elem, &Val::borrowed("item"), "w", 1);
                    self.out.line("out.end_member_chunk(w)?;");
                    self.out.close();
                    return;
                }
            }
            self.encode_value(ty, v, "w", 0);
            if self.ends_in_octet_array(&resolved) {
                self.out.line("out.end_member_chunk(w)?;");
            }
            return;
        }
        match self.resolve(ty).clone() {
            Type::Sequence { bound: Some(b), .. } => {
                self.out.line(format!(
                    "if {}.len() > {b} {{ return Err(::corbina::cdr::MarshalError::InvalidValue {{ offset: w.position(), reason: \"longer than its IDL bound\" }}); }}",
                    v.recv
                ));
                self.out
                    .line(format!("{VT}::write_seq(&{}[..], w, out)?;", v.recv));
            }
            _ => self.out.line(format!(
                "{VT}::ValueMember::write_member({}, w, out)?;",
                v.reference
            )),
        }
    }

    /// Whether a state member of type `ty` ends in an array of octets that omniORB reads in
    /// one piece: a string or wstring, a sequence or array of primitives. The chunk is ended
    /// after it, as omniORB's own writer does when such an array crosses its buffer's end:
    /// omniORB 4.3 misreads a chunk that goes on after an array crossing the end of its
    /// receive buffer, wherever TCP happened to split the message.
    fn ends_in_octet_array(&self, ty: &Type) -> bool {
        match self.resolve(ty) {
            Type::Sequence { elem, .. } | Type::Array { elem, .. } => matches!(
                self.resolve(elem),
                Type::Octet
                    | Type::Char
                    | Type::Boolean
                    | Type::Short
                    | Type::UShort
                    | Type::Long
                    | Type::ULong
                    | Type::LongLong
                    | Type::ULongLong
                    | Type::Float
                    | Type::Double
                    | Type::LongDouble
            ),
            t => self.octet_array(t),
        }
    }

    /// Whether `ty` is a string or a wstring.
    fn octet_array(&self, ty: &Type) -> bool {
        matches!(self.resolve(ty), Type::String { .. } | Type::WString { .. })
    }

    /// An expression reading what [`Gen::write_in_value`] wrote.
    pub fn read_in_value(&self, ty: &Type) -> String {
        if !self.contains_value(ty) {
            return format!(
                "{{\n    input.begin_member(r)?;\n    {}\n}}",
                crate::marshal::indent(&self.decode_value(ty, "r")).trim_start()
            );
        }
        match self.resolve(ty) {
            Type::Sequence { bound, .. } => {
                format!("{VT}::read_seq(r, input, {})?", bound.unwrap_or(0))
            }
            _ => format!("{VT}::ValueMember::read_member(r, input)?"),
        }
    }

    /// Whether `ty` holds a value somewhere below it (a struct member, a union case, a
    /// sequence element).
    pub fn contains_value(&self, ty: &Type) -> bool {
        fn walk(g: &Gen<'_>, ty: &Type, seen: &mut HashSet<ScopedName>) -> bool {
            match g.resolve(ty) {
                Type::ValueBase => true,
                Type::Sequence { elem, .. } | Type::Array { elem, .. } => walk(g, elem, seen),
                Type::Named {
                    kind: NamedKind::ValueType | NamedKind::ValueBox,
                    ..
                } => true,
                Type::Named {
                    name,
                    kind: NamedKind::Interface,
                } => g.is_abstract_interface(name),
                Type::Named { name, .. } => {
                    if !seen.insert(name.clone()) {
                        return false;
                    }
                    match g.lookup(name).map(|d| &d.kind) {
                        Some(DefinitionKind::Struct(s)) => {
                            s.members.iter().any(|m| walk(g, &m.ty, seen))
                        }
                        Some(DefinitionKind::Exception(s)) => {
                            s.members.iter().any(|m| walk(g, &m.ty, seen))
                        }
                        Some(DefinitionKind::Union(u)) => {
                            u.cases.iter().any(|c| walk(g, &c.member.ty, seen))
                        }
                        _ => false,
                    }
                }
                _ => false,
            }
        }
        walk(self, ty, &mut HashSet::new())
    }

    fn check_state(&mut self, def: &Definition, state: &[StateMember]) -> bool {
        let mut ok = true;
        let mut seen = Vec::new();
        for m in state {
            let what = format!(
                "state member '{}' of valuetype '{}'",
                m.name, def.scoped_name
            );
            ok &= self.check_type(&m.ty, &m.loc, &what);
            if self.state_default(&m.ty).is_none() {
                self.error(
                    &m.loc,
                    format!("not yet supported: {what} has a type with no default value"),
                );
                ok = false;
            }
            let n = snake(&m.name);
            if seen.contains(&n) {
                self.error(&m.loc, format!("state member '{}' maps to Rust name '{n}', which another member of '{}' already uses", m.name, def.scoped_name));
                ok = false;
            }
            seen.push(n);
        }
        ok
    }

    /// The default of a state member's type (a value is built empty, then its state read, so
    /// that a cycle back to it resolves): derived, or written out for `any`, `TypeCode` and
    /// unions (the first labelled case, holding its member's default).
    fn state_default(&self, ty: &Type) -> Option<String> {
        if self.caps(ty).default {
            return Some("::core::default::Default::default()".into());
        }
        match self.resolve(ty) {
            Type::Any => Some("::corbina::Any::default()".into()),
            Type::TypeCode => {
                Some("::corbina::TypeCode::primitive(::corbina::typecode::TcKind::Null)".into())
            }
            Type::Named {
                name,
                kind: NamedKind::Union,
            } => self.union_default(name),
            _ => None,
        }
    }

    /// A union's first labelled case with its member's default (variant names as
    /// `types.rs` gives them).
    fn union_default(&self, name: &ScopedName) -> Option<String> {
        let Some(DefinitionKind::Union(u)) = self.lookup(name).map(|d| &d.kind) else {
            return None;
        };
        let shape = self.union_shape(u);
        let var = shape.vars.iter().find(|v| !v.is_default)?;
        let member = self.state_default(&var.ty)?;
        let path = self.type_path(name);
        Some(if var.holds_disc {
            format!("{path}::{}({}, {member})", var.name, var.pats[0])
        } else {
            format!("{path}::{}({member})", var.name)
        })
    }

    /// A concrete valuetype: its state struct and `ValueType` impl.
    pub fn gen_value(&mut self, def: &Definition, v: &ValueType) {
        if v.is_abstract {
            self.gen_abstract_value(def, v);
            return;
        }
        if v.is_custom {
            self.gen_custom_value(def, v);
            return;
        }
        let state = self.all_state(v);
        if !self.check_state(def, &state) {
            return;
        }
        let name = self.names.item(&def.scoped_name);
        let kind = if v.is_event { "eventtype" } else { "valuetype" };
        self.out.line(format!(
            "/// IDL {kind} `{}` (`{}`): its state. Used as `{VT}::ValueRef<{name}>`.",
            def.scoped_name, def.repository_id
        ));
        let derive_default = state.iter().all(|m| self.caps(&m.ty).default);
        if derive_default {
            self.out.line("#[derive(Debug, Clone, Default)]");
        } else {
            self.out.line("#[derive(Debug, Clone)]");
        }
        if state.is_empty() {
            self.out.line(format!("pub struct {name} {{}}"));
        } else {
            self.out.open(format!("pub struct {name}"));
            for m in &state {
                if !m.public {
                    self.out.line("/// (private in IDL)");
                }
                let t = self.rust_type(&m.ty);
                self.out.line(format!("pub {}: {t},", snake(&m.name)));
            }
            self.out.close();
        }
        if !derive_default {
            self.out.blank();
            self.out
                .open(format!("impl ::core::default::Default for {name}"));
            self.out.open("fn default() -> Self");
            self.out.open("Self");
            for m in &state {
                let d = self.state_default(&m.ty).unwrap_or_default();
                self.out.line(format!("{}: {d},", snake(&m.name)));
            }
            self.out.close();
            self.out.close();
            self.out.close();
        }
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
        let ids = self.truncatable_ids(def, v);
        let ids: Vec<String> = ids.iter().map(|i| format!("{i:?}")).collect();
        self.out.open(format!("impl {VT}::ValueType for {name}"));
        self.out.line(format!(
            "const REPOSITORY_ID: &'static str = {:?};",
            def.repository_id
        ));
        self.out.line(format!(
            "const REPOSITORY_IDS: &'static [&'static str] = &[{}];",
            ids.join(", ")
        ));
        self.out
            .line(format!("const CHUNKED: bool = {};", v.is_truncatable));
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
        let ancestors: Vec<Definition> = self.concrete_ancestors(v).into_iter().cloned().collect();
        if !ancestors.is_empty() {
            let views: Vec<String> = ancestors
                .iter()
                .map(|b| {
                    format!(
                        "{VT}::BaseView::of::<{name}, {}>()",
                        self.type_path(&b.scoped_name)
                    )
                })
                .collect();
            self.out.line(format!(
                "const BASE_VIEWS: &'static [{VT}::BaseView] = &[{}];",
                views.join(", ")
            ));
        }
        let derived = self.derived_in_main_file(def);
        if !derived.is_empty() {
            let known: Vec<String> = derived
                .iter()
                .map(|d| format!("{VT}::KnownValue::of::<{d}>()"))
                .collect();
            self.out.line(format!(
                "const DERIVED: &'static [{VT}::KnownValue] = &[{}];",
                known.join(", ")
            ));
        }
        let (w, out) = if state.is_empty() {
            ("_w", "_out")
        } else {
            ("w", "out")
        };
        self.out.open(format!(
            "fn write_state<'a>(&'a self, {w}: &mut ::corbina::cdr::CdrWriter<'a>, {out}: &mut {VT}::ValueOutput) -> ::corbina::cdr::Result<()>"
        ));
        for m in &state {
            let f = format!("self.{}", snake(&m.name));
            self.write_in_value(&m.ty, &Val::owned(&f));
        }
        self.out.line("Ok(())");
        self.out.close();
        let (r, input) = if state.is_empty() {
            ("_r", "_input")
        } else {
            ("r", "input")
        };
        self.out.open(format!(
            "fn read_state({r}: &mut ::corbina::cdr::CdrReader<'_>, {input}: &mut {VT}::ValueInput) -> ::corbina::cdr::Result<Self>"
        ));
        for m in &state {
            let n = snake(&m.name);
            if self.contains_value(&m.ty) {
                let d = self.read_in_value(&m.ty);
                self.out.line(format!("let {n} = {d};"));
            } else {
                self.out.line("input.begin_member(r)?;");
                let d = self.decode_value(&m.ty, "r");
                self.out.line(format!("let {n} = {d};"));
            }
        }
        let fields: Vec<String> = state.iter().map(|m| snake(&m.name)).collect();
        self.out
            .line(format!("Ok(Self {{ {} }})", fields.join(", ")));
        self.out.close();
        self.out.close();
        self.out.blank();
        self.out.open(format!("impl {VT}::TypedValue for {name}"));
        self.out.open("fn value_type_code() -> ::corbina::TypeCode");
        self.out.line(format!("{name}::type_code()"));
        self.out.close();
        self.out.close();
        for b in &ancestors {
            self.gen_derives(&name, b);
        }
        self.gen_value_operations(def, v);
        self.gen_value_initializers(def, v);
        self.gen_supports(def, v);
    }

    /// A boxed valuetype: a newtype over `Option<Arc<T>>`.
    pub fn gen_value_box(&mut self, def: &Definition, b: &ValueBox) {
        let what = format!("valuetype box '{}'", def.scoped_name);
        if !self.check_type(&b.ty, &def.loc, &what) {
            return;
        }
        let name = self.names.item(&def.scoped_name);
        let t = self.rust_type(&b.ty);
        let general = !self.plain(&b.ty) || self.contains_value(&b.ty);
        self.out.line(format!(
            "/// IDL boxed valuetype `{}` (`{}`): `None` is the null value; boxes sharing one `Arc` are one value.",
            def.scoped_name, def.repository_id
        ));
        self.out.line("#[derive(Debug, Clone, Default, PartialEq)]");
        self.out.line(format!(
            "pub struct {name}(pub ::core::option::Option<::std::sync::Arc<{t}>>);"
        ));
        self.out.blank();
        self.out.open(format!("impl {name}"));
        self.out.line("/// The repository id.");
        self.out.line(format!(
            "pub const REPOSITORY_ID: &'static str = {:?};",
            def.repository_id
        ));
        self.out.blank();
        self.out.line("/// A box holding `v`.");
        self.out.open(format!("pub fn new(v: {t}) -> Self"));
        self.out.line("Self(Some(::std::sync::Arc::new(v)))");
        self.out.close();
        self.out.blank();
        self.gen_type_code_fn(def);
        self.out.close();
        if general {
            self.gen_general_box(&name, &b.ty);
            self.gen_any_insert(&name);
            return;
        }
        self.out.blank();
        self.out.open(format!("impl {VT}::BoxedValue for {name}"));
        self.out.line(format!("type Content = {t};"));
        self.out.line(format!(
            "const REPOSITORY_ID: &'static str = {:?};",
            def.repository_id
        ));
        self.out.open(format!(
            "fn content(&self) -> ::core::option::Option<&::std::sync::Arc<{t}>>"
        ));
        self.out.line("self.0.as_ref()");
        self.out.close();
        self.out.open(format!(
            "fn from_content(c: ::core::option::Option<::std::sync::Arc<{t}>>) -> Self"
        ));
        self.out.line("Self(c)");
        self.out.close();
        self.out.close();
        self.out.blank();
        self.out.open(format!("impl {VT}::ValueMember for {name}"));
        self.out.open(format!(
            "fn write_member<'a>(&'a self, w: &mut ::corbina::cdr::CdrWriter<'a>, out: &mut {VT}::ValueOutput) -> ::corbina::cdr::Result<()>"
        ));
        self.out.line(format!("{VT}::write_box(self, w, out)"));
        self.out.close();
        self.out.open(format!(
            "fn read_member(r: &mut ::corbina::cdr::CdrReader<'_>, input: &mut {VT}::ValueInput) -> ::corbina::cdr::Result<Self>"
        ));
        self.out.line(format!("{VT}::read_box(r, input)"));
        self.out.close();
        self.out.close();
        self.gen_stream_codec_impls(
            &name,
            &format!("{VT}::write_box(self, w, &mut {VT}::ValueOutput::new())"),
            &format!("{VT}::read_box(r, &mut {VT}::ValueInput::new())"),
        );
        self.gen_any_insert(&name);
    }

    /// A box whose content the generated code marshals (bounded, wide, fixed, references,
    /// values, anything `BoxedValue`'s plain `CdrEncode` content does not cover).
    fn gen_general_box(&mut self, name: &str, ty: &Type) {
        self.out.blank();
        self.out.open(format!("impl {VT}::ValueMember for {name}"));
        self.out.open(format!(
            "fn write_member<'a>(&'a self, w: &mut ::corbina::cdr::CdrWriter<'a>, out: &mut {VT}::ValueOutput) -> ::corbina::cdr::Result<()>"
        ));
        self.out.open(format!(
            "{VT}::write_boxed(self.0.as_ref(), Self::REPOSITORY_ID, w, out, |c, w, out|"
        ));
        self.write_in_value(ty, &Val::borrowed("c"));
        self.out.line("Ok(())");
        self.out.close_with(")");
        self.out.close();
        self.out.open(format!(
            "fn read_member(r: &mut ::corbina::cdr::CdrReader<'_>, input: &mut {VT}::ValueInput) -> ::corbina::cdr::Result<Self>"
        ));
        let d = self.read_in_value(ty);
        // A value reader's call is the closure's result as it is (no `Ok(…?)`).
        let member_read = format!("{VT}::ValueMember::read_member(r, input)?");
        let read = if d == member_read {
            // The reader itself, not a closure calling it (clippy::redundant_closure).
            format!("{VT}::ValueMember::read_member")
        } else {
            let body = match d.strip_suffix('?') {
                Some(call) if self.contains_value(ty) => call.to_string(),
                _ => format!("Ok({d})"),
            };
            format!("|r, input| {body}")
        };
        self.out.line(format!(
            "{VT}::read_boxed(r, input, Self::REPOSITORY_ID, {read}).map(Self)"
        ));
        self.out.close();
        self.out.close();
        self.gen_value_codec_impls(name);
    }

    /// TypeCode expression of a valuetype or box definition.
    pub fn value_tc_expr(&self, def: &Definition, stack: &mut Vec<ScopedName>) -> Option<String> {
        const TC: &str = "::corbina::TypeCode";
        const VALID: &str = "\n    .expect(\"valid IDL TypeCode\")";
        let (id, name) = (
            format!("{:?}", def.repository_id),
            format!("{:?}", def.name),
        );
        Some(match &def.kind {
            DefinitionKind::ValueBox(b) => format!(
                "{TC}::create_value_box_tc({id}, {name}, {}){VALID}",
                self.tc_expr(&b.ty, stack)
            ),
            DefinitionKind::ValueType(v) => {
                // VM_NONE 0, VM_CUSTOM 1, VM_ABSTRACT 2, VM_TRUNCATABLE 3.
                let modifier = if v.is_custom {
                    1
                } else if v.is_abstract {
                    2
                } else if v.is_truncatable {
                    3
                } else {
                    0
                };
                let base = match self.concrete_base(v) {
                    Some(b) => format!(
                        "Some({})",
                        self.tc_expr(
                            &Type::Named {
                                name: b.scoped_name.clone(),
                                kind: NamedKind::ValueType
                            },
                            stack,
                        )
                    ),
                    None => "None".into(),
                };
                let ms: Vec<String> = v
                    .state_members
                    .iter()
                    .map(|m| {
                        format!(
                            "::corbina::typecode::ValueMember::new({:?}, {}, {}),",
                            m.name,
                            self.tc_expr(&m.ty, stack),
                            i16::from(m.public)
                        )
                    })
                    .collect();
                let f = if v.is_event {
                    "create_event_tc"
                } else {
                    "create_value_tc"
                };
                format!(
                    "{TC}::{f}(\n    {id},\n    {name},\n    {modifier},\n    {base},\n    vec![\n{}\n    ],\n){VALID}",
                    crate::marshal::indent(&crate::marshal::indent(&ms.join("\n")))
                )
            }
            _ => return None,
        })
    }
}
