//! Valuetypes: concrete values (state, single concrete base, `truncatable`) and boxed values
//! (`docs/mapping.md`, "Valuetypes"). The wire format is `corbina_cdr::value`'s; the runtime
//! traits are in `corbina::valuetype`.

use crate::context::Gen;
use crate::marshal::Val;
use crate::names::{camel, snake};
use corbina_idl::model::{Definition, DefinitionKind, NamedKind, StateMember, ValueBox, ValueType};
use corbina_idl::{ScopedName, Type};
use std::collections::HashSet;

const VT: &str = "::corbina::valuetype";

impl Gen<'_> {
    /// Whether the definition is a valuetype this generator maps (reported otherwise).
    pub fn value_supported(&mut self, def: &Definition, v: &ValueType) -> bool {
        let what = if v.is_abstract {
            Some("abstract valuetype")
        } else if v.is_custom {
            Some("custom valuetype")
        } else if !v.operations.is_empty() || !v.attributes.is_empty() {
            Some("valuetype with operations or attributes")
        } else if !v.initializers.is_empty() {
            Some("valuetype with factory initializers")
        } else if !v.supports.is_empty() {
            Some("valuetype that supports an interface")
        } else {
            None
        };
        if let Some(w) = what {
            self.error(
                &def.loc,
                format!("not yet supported: {w} '{}'", def.scoped_name),
            );
            return false;
        }
        true
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

    /// Whether `ty` is a value that marshals through `ValueMember` (after typedefs).
    pub(crate) fn direct_value(&self, ty: &Type) -> bool {
        matches!(
            self.resolve(ty),
            Type::Named {
                kind: NamedKind::ValueType | NamedKind::ValueBox,
                ..
            }
        )
    }

    /// Whether `ty` holds a value somewhere below it (a struct member, a sequence element).
    pub fn contains_value(&self, ty: &Type) -> bool {
        fn walk(g: &Gen<'_>, ty: &Type, seen: &mut HashSet<ScopedName>) -> bool {
            match g.resolve(ty) {
                Type::ValueBase => true,
                Type::Sequence { elem, .. } | Type::Array { elem, .. } => walk(g, elem, seen),
                Type::Named {
                    kind: NamedKind::ValueType | NamedKind::ValueBox,
                    ..
                } => true,
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
            let what = format!("state member '{}' of '{}'", m.name, def.scoped_name);
            ok &= self.check_type(&m.ty, &m.loc, &what);
            if !self.direct_value(&m.ty) && self.contains_value(&m.ty) {
                // Its values would each start their own stream state inside this value's chunk.
                self.error(
                    &m.loc,
                    format!("not yet supported: a value nested in a struct, union or sequence in {what}"),
                );
                ok = false;
            }
            if !self.caps(&m.ty).default {
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

    /// A concrete valuetype: its state struct and `ValueType` impl.
    pub fn gen_value(&mut self, def: &Definition, v: &ValueType) {
        let state = self.all_state(v);
        if !self.check_state(def, &state) {
            return;
        }
        let name = camel(&def.name);
        let kind = if v.is_event { "eventtype" } else { "valuetype" };
        self.out.line(format!(
            "/// IDL {kind} `{}` (`{}`): its state. Used as `{VT}::ValueRef<{name}>`.",
            def.scoped_name, def.repository_id
        ));
        self.out.line("#[derive(Debug, Clone, Default)]");
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
            if self.direct_value(&m.ty) {
                self.out
                    .line(format!("{VT}::ValueMember::write_member(&{f}, w, out)?;"));
            } else {
                self.out.line("out.begin_member(w)?;");
                self.encode_value(&m.ty, &Val::owned(&f), "w", 0);
            }
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
            if self.direct_value(&m.ty) {
                self.out.line(format!(
                    "let {n} = {VT}::ValueMember::read_member(r, input)?;"
                ));
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
    }

    /// A boxed valuetype: a newtype over `Option<Arc<T>>`.
    pub fn gen_value_box(&mut self, def: &Definition, b: &ValueBox) {
        let what = format!("valuetype box '{}'", def.scoped_name);
        if !self.check_type(&b.ty, &def.loc, &what) {
            return;
        }
        if !self.plain(&b.ty) || self.contains_value(&b.ty) {
            self.error(
                &def.loc,
                format!(
                    "not yet supported: {what} of a bounded, wide, fixed, reference or value type"
                ),
            );
            return;
        }
        let name = camel(&def.name);
        let t = self.rust_type(&b.ty);
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
        self.out.blank();
        self.out
            .open(format!("impl ::corbina::cdr::CdrEncode for {name}"));
        self.out.open("fn encode<'a>(&'a self, w: &mut ::corbina::cdr::CdrWriter<'a>) -> ::corbina::cdr::Result<()>");
        self.out.line(format!(
            "{VT}::write_box(self, w, &mut {VT}::ValueOutput::new())"
        ));
        self.out.close();
        self.out.close();
        self.out.blank();
        self.out
            .open(format!("impl<'a> ::corbina::cdr::CdrDecode<'a> for {name}"));
        self.out.line("const MIN_WIRE_SIZE: usize = 4;");
        self.out.open(
            "fn decode(r: &mut ::corbina::cdr::CdrReader<'a>) -> ::corbina::cdr::Result<Self>",
        );
        self.out
            .line(format!("{VT}::read_box(r, &mut {VT}::ValueInput::new())"));
        self.out.close();
        self.out.close();
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
