//! TypeCodes for generated types: a `type_code()` built once (in a `OnceLock`) per named
//! type, `<alias>_type_code()` functions for typedefs, and `AnyInsert` impls.
//!
//! A type refers to another named type by calling its `type_code()`, except inside a cycle
//! (`struct Node { sequence<Node> kids; }`, or two structs reaching each other): there the
//! enclosing types are written inline and the inner reference becomes
//! `create_recursive_tc(id)`, so no `OnceLock` initialiser waits on itself.

use crate::context::Gen;
use corbina_idl::model::{
    CaseLabel, Definition, DefinitionKind, Interface, InterfaceForward, ScopedName,
};
use corbina_idl::{ConstValue, Type};
use std::collections::HashSet;

const TC: &str = "::corbina::TypeCode";
const VALID: &str = ".expect(\"generated TypeCode is valid\")";

fn prim(kind: &str) -> String {
    format!("{TC}::primitive(::corbina::typecode::TcKind::{kind})")
}

impl Gen<'_> {
    /// An expression for the TypeCode of `ty`; `stack` holds the types being built inline.
    pub fn tc_expr(&self, ty: &Type, stack: &mut Vec<ScopedName>) -> String {
        match ty {
            Type::Short => prim("Short"),
            Type::UShort => prim("UShort"),
            Type::Long => prim("Long"),
            Type::ULong => prim("ULong"),
            Type::LongLong => prim("LongLong"),
            Type::ULongLong => prim("ULongLong"),
            Type::Float => prim("Float"),
            Type::Double => prim("Double"),
            Type::LongDouble => prim("LongDouble"),
            Type::Boolean => prim("Boolean"),
            Type::Char => prim("Char"),
            Type::Octet => prim("Octet"),
            Type::WChar => prim("WChar"),
            Type::Any => prim("Any"),
            Type::TypeCode => prim("TypeCode"),
            Type::String { bound } => format!("{TC}::create_string_tc({})", bound.unwrap_or(0)),
            Type::WString { bound } => format!("{TC}::create_wstring_tc({})", bound.unwrap_or(0)),
            Type::Fixed { digits, scale } => {
                format!("{TC}::create_fixed_tc({digits}, {scale}){VALID}")
            }
            Type::Sequence { elem, bound } => format!(
                "{TC}::create_sequence_tc({}, {})",
                bound.unwrap_or(0),
                self.tc_expr(elem, stack)
            ),
            Type::Array { elem, dims } => {
                let mut t = self.tc_expr(elem, stack);
                for d in dims.iter().rev() {
                    t = format!("{TC}::create_array_tc({d}, {t}){VALID}");
                }
                t
            }
            Type::Object => format!(
                "{TC}::create_interface_tc(\"IDL:omg.org/CORBA/Object:1.0\", \"Object\"){VALID}"
            ),
            // CORBA::ValueBase: a concrete value type with no state and no base.
            Type::ValueBase => format!(
                "{TC}::create_value_tc(\"IDL:omg.org/CORBA/ValueBase:1.0\", \"ValueBase\", 0, None, vec![]){VALID}"
            ),
            Type::Named { name, .. } => self.named_tc_expr(name, stack),
        }
    }

    fn named_tc_expr(&self, name: &ScopedName, stack: &mut Vec<ScopedName>) -> String {
        let Some(def) = self.lookup_defined(name) else {
            return prim("Null");
        };
        let recursive_kind = matches!(
            def.kind,
            DefinitionKind::Struct(_)
                | DefinitionKind::Union(_)
                | DefinitionKind::Exception(_)
                | DefinitionKind::ValueType(_)
        );
        if recursive_kind && stack.contains(name) {
            return format!("{TC}::create_recursive_tc({:?})", def.repository_id);
        }
        if !stack.is_empty() && self.reaches(name, stack) {
            return self.def_tc_expr(def, stack);
        }
        match def.kind {
            DefinitionKind::Alias(_) => {
                let path = self.rel_path(&self.module_of(name), &self.names.alias_fn(name));
                format!("{path}()")
            }
            _ if self.is_local(name) => format!("<dyn {}>::type_code()", self.type_path(name)),
            _ => format!("{}::type_code()", self.type_path(name)),
        }
    }

    /// Whether the type `name` refers (through members, cases, elements and typedefs) to
    /// one of the types in `targets`.
    fn reaches(&self, name: &ScopedName, targets: &[ScopedName]) -> bool {
        fn walk(g: &Gen<'_>, ty: &Type, t: &[ScopedName], seen: &mut HashSet<ScopedName>) -> bool {
            match ty {
                Type::Sequence { elem, .. } | Type::Array { elem, .. } => walk(g, elem, t, seen),
                Type::Named { name, .. } => named(g, name, t, seen),
                _ => false,
            }
        }
        fn named(
            g: &Gen<'_>,
            n: &ScopedName,
            t: &[ScopedName],
            seen: &mut HashSet<ScopedName>,
        ) -> bool {
            if t.contains(n) {
                return true;
            }
            if !seen.insert(n.clone()) {
                return false;
            }
            match g.lookup_defined(n).map(|d| &d.kind) {
                Some(DefinitionKind::Struct(s)) => {
                    s.members.iter().any(|m| walk(g, &m.ty, t, seen))
                }
                Some(DefinitionKind::Exception(s)) => {
                    s.members.iter().any(|m| walk(g, &m.ty, t, seen))
                }
                Some(DefinitionKind::Union(u)) => {
                    walk(g, &u.discriminator, t, seen)
                        || u.cases.iter().any(|c| walk(g, &c.member.ty, t, seen))
                }
                Some(DefinitionKind::Alias(a)) => walk(g, &a.ty, t, seen),
                Some(DefinitionKind::ValueType(v)) => {
                    v.bases.iter().any(|b| named(g, b, t, seen))
                        || v.state_members.iter().any(|m| walk(g, &m.ty, t, seen))
                }
                Some(DefinitionKind::ValueBox(b)) => walk(g, &b.ty, t, seen),
                _ => false,
            }
        }
        let mut seen = HashSet::new();
        seen.insert(name.clone());
        match self.lookup_defined(name).map(|d| &d.kind) {
            Some(DefinitionKind::Struct(s)) => s
                .members
                .iter()
                .any(|m| walk(self, &m.ty, targets, &mut seen)),
            Some(DefinitionKind::Exception(s)) => s
                .members
                .iter()
                .any(|m| walk(self, &m.ty, targets, &mut seen)),
            Some(DefinitionKind::Union(u)) => {
                walk(self, &u.discriminator, targets, &mut seen)
                    || u.cases
                        .iter()
                        .any(|c| walk(self, &c.member.ty, targets, &mut seen))
            }
            Some(DefinitionKind::Alias(a)) => walk(self, &a.ty, targets, &mut seen),
            Some(DefinitionKind::ValueType(v)) => {
                v.bases.iter().any(|b| named(self, b, targets, &mut seen))
                    || v.state_members
                        .iter()
                        .any(|m| walk(self, &m.ty, targets, &mut seen))
            }
            Some(DefinitionKind::ValueBox(b)) => walk(self, &b.ty, targets, &mut seen),
            _ => false,
        }
    }

    /// The expression building the TypeCode of definition `def` itself.
    pub fn def_tc_expr(&self, def: &Definition, stack: &mut Vec<ScopedName>) -> String {
        let (id, name) = (
            format!("{:?}", def.repository_id),
            format!("{:?}", def.name),
        );
        stack.push(def.scoped_name.clone());
        let e = match &def.kind {
            DefinitionKind::Struct(_) | DefinitionKind::Exception(_) => {
                let (members, f) = match &def.kind {
                    DefinitionKind::Struct(s) => (&s.members, "create_struct_tc"),
                    DefinitionKind::Exception(e) => (&e.members, "create_exception_tc"),
                    _ => unreachable!(),
                };
                let ms: Vec<String> = members
                    .iter()
                    .map(|m| {
                        format!(
                            "::corbina::typecode::StructMember::new({:?}, {}),",
                            m.name,
                            self.tc_expr(&m.ty, stack)
                        )
                    })
                    .collect();
                if ms.is_empty() {
                    format!("{TC}::{f}({id}, {name}, ::std::vec::Vec::new()){VALID}")
                } else {
                    format!(
                        "{TC}::{f}(\n    {id},\n    {name},\n    vec![\n{}\n    ],\n){VALID}",
                        crate::marshal::indent(&crate::marshal::indent(&ms.join("\n")))
                    )
                }
            }
            DefinitionKind::Union(u) => {
                let mut lines = Vec::new();
                let mut arms = Vec::new();
                for (k, c) in u.cases.iter().enumerate() {
                    lines.push(format!("let m{k} = {};", self.tc_expr(&c.member.ty, stack)));
                    for l in &c.labels {
                        let label = match l {
                            CaseLabel::Default => {
                                "::corbina::typecode::UnionLabel::Default".to_string()
                            }
                            CaseLabel::Value(v) => format!(
                                "::corbina::typecode::UnionLabel::Value({})",
                                label_value(v)
                            ),
                        };
                        arms.push(format!(
                            "::corbina::typecode::UnionMember::new({:?}, {label}, m{k}.clone()),",
                            c.member.name
                        ));
                    }
                }
                let disc = self.tc_expr(&u.discriminator, stack);
                lines.push(format!(
                    "{TC}::create_union_tc(\n    {id},\n    {name},\n    {disc},\n    vec![\n{}\n    ],\n){VALID}",
                    crate::marshal::indent(&crate::marshal::indent(&arms.join("\n")))
                ));
                crate::marshal::block(&lines)
            }
            DefinitionKind::Enum(e) => {
                let names: Vec<String> = e.enumerators.iter().map(|n| format!("{n:?}")).collect();
                format!(
                    "{TC}::create_enum_tc({id}, {name}, &[{}]){VALID}",
                    names.join(", ")
                )
            }
            DefinitionKind::Alias(a) => {
                format!(
                    "{TC}::create_alias_tc({id}, {name}, {}){VALID}",
                    self.tc_expr(&a.ty, stack)
                )
            }
            DefinitionKind::Interface(Interface { is_local: true, .. })
            | DefinitionKind::InterfaceForward(InterfaceForward { is_local: true, .. }) => {
                format!("{TC}::create_local_interface_tc({id}, {name}){VALID}")
            }
            DefinitionKind::Interface(Interface {
                is_abstract: true, ..
            })
            | DefinitionKind::InterfaceForward(InterfaceForward {
                is_abstract: true, ..
            }) => format!("{TC}::create_abstract_interface_tc({id}, {name}){VALID}"),
            DefinitionKind::Interface(_) | DefinitionKind::InterfaceForward(_) => {
                format!("{TC}::create_interface_tc({id}, {name}){VALID}")
            }
            _ => self
                .value_tc_expr(def, stack)
                .unwrap_or_else(|| prim("Null")),
        };
        stack.pop();
        e
    }

    /// The body of a function returning the TypeCode of `def`, built once.
    fn once_body(&mut self, def: &Definition) {
        let e = self.def_tc_expr(def, &mut Vec::new());
        self.out.line(format!(
            "static TC: ::std::sync::OnceLock<{TC}> = ::std::sync::OnceLock::new();"
        ));
        self.out
            .line(format!("TC.get_or_init(|| {e})\n    .clone()"));
    }

    /// `pub fn type_code()` (inside the type's `impl` block).
    pub fn gen_type_code_fn(&mut self, def: &Definition) {
        self.out.line("/// The TypeCode (built once).");
        self.out.open(format!("pub fn type_code() -> {TC}"));
        self.once_body(def);
        self.out.close();
    }

    /// `impl AnyInsert for Name`.
    pub fn gen_any_insert(&mut self, name: &str) {
        self.out.blank();
        self.out
            .open(format!("impl ::corbina::any::AnyInsert for {name}"));
        self.out.open(format!("fn type_code() -> {TC}"));
        self.out.line(format!("{name}::type_code()"));
        self.out.close();
        self.out.close();
    }

    /// `pub fn <alias>_type_code()` for a typedef.
    pub fn gen_alias_type_code(&mut self, def: &Definition) {
        self.out.line(format!(
            "/// The TypeCode of typedef `{}` (built once).",
            def.scoped_name
        ));
        self.out.open(format!(
            "pub fn {}() -> {TC}",
            self.names.alias_fn(&def.scoped_name)
        ));
        self.once_body(def);
        self.out.close();
    }
}

/// A case label as the integer TypeCodes use (booleans 0/1, chars their code, enums the
/// enumerator's index).
fn label_value(v: &ConstValue) -> i128 {
    match v {
        ConstValue::Integer(i) => *i,
        ConstValue::Char(c) | ConstValue::Octet(c) => i128::from(*c),
        ConstValue::WChar(c) => i128::from(u32::from(*c)),
        ConstValue::Boolean(b) => i128::from(*b),
        ConstValue::Enum { index, .. } => i128::from(*index),
        _ => 0,
    }
}
