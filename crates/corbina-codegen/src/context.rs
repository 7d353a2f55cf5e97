//! Shared generator state: the specification, collected errors, Rust paths and type
//! properties (derivable traits, minimum wire size, whether a type's own impl is enough).

use crate::naming::NameTable;
use crate::out::Out;
use corbina_idl::model::{Definition, DefinitionKind, NamedKind, ScopedName};
use corbina_idl::{Diagnostic, SourceLoc, Specification, Type};
use std::cell::RefCell;
use std::collections::HashMap;

/// Traits a type's Rust form can derive beyond `Debug, Clone, PartialEq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    pub default: bool,
    /// `Eq` and `Hash`.
    pub eq: bool,
    pub copy: bool,
}

impl Caps {
    const ALL: Caps = Caps {
        default: true,
        eq: true,
        copy: true,
    };
    const NONE: Caps = Caps {
        default: false,
        eq: false,
        copy: false,
    };

    fn and(self, o: Caps) -> Caps {
        Caps {
            default: self.default && o.default,
            eq: self.eq && o.eq,
            copy: self.copy && o.copy,
        }
    }

    /// The derive list for a struct-like type.
    pub fn derives(self, allow_copy: bool) -> String {
        let mut d = vec!["Debug", "Clone", "PartialEq"];
        if self.default {
            d.push("Default");
        }
        if self.eq {
            d.extend(["Eq", "Hash"]);
        }
        if self.copy && allow_copy {
            d.push("Copy");
        }
        format!("#[derive({})]", d.join(", "))
    }
}

/// The generator: walks the specification and writes Rust.
pub struct Gen<'s> {
    pub spec: &'s Specification,
    pub errors: Vec<Diagnostic>,
    /// Renames of generated names (docs/mapping.md, "Names"), reported as warnings.
    pub warnings: Vec<Diagnostic>,
    /// Rust module path of the module being written, relative to the generated file's root.
    pub module: Vec<String>,
    pub out: Out,
    pub options: crate::Options,
    /// Unique Rust names of the definitions.
    pub names: NameTable,
    /// Writing an AMI reply handler (which gets no AMI of its own).
    pub in_ami_handler: bool,
    /// Interfaces whose servant trait `ValueRef<S>` implements already (`values_ops.rs`).
    pub servant_for_values: std::collections::HashSet<ScopedName>,
    /// Derivable traits of every named type, computed on first use.
    caps_table: RefCell<Option<HashMap<ScopedName, Caps>>>,
}

impl<'s> Gen<'s> {
    pub fn new(spec: &'s Specification) -> Self {
        Gen {
            spec,
            errors: Vec::new(),
            warnings: Vec::new(),
            module: Vec::new(),
            out: Out::default(),
            options: crate::Options::default(),
            names: NameTable::new(&spec.definitions),
            in_ami_handler: false,
            servant_for_values: Default::default(),
            caps_table: RefCell::new(None),
        }
    }

    pub fn error(&mut self, loc: &SourceLoc, msg: impl Into<String>) {
        let d = Diagnostic::error(loc, msg);
        if !self.errors.contains(&d) {
            self.errors.push(d);
        }
    }

    /// `#[allow(non_camel_case_types)]` before a generated type whose name a rename left
    /// with an underscore inside (`NamedObject_` → `NamedObject_Servant`).
    pub fn allow_camel(&mut self, name: &str) {
        if name.trim_matches('_').contains('_') {
            self.out.line("#[allow(non_camel_case_types)]");
        }
    }

    /// A warning at `loc`, once.
    pub fn warn(&mut self, loc: &SourceLoc, msg: impl Into<String>) {
        let d = Diagnostic::warning(loc, msg);
        if !self.warnings.contains(&d) {
            self.warnings.push(d);
        }
    }

    pub fn lookup(&self, name: &ScopedName) -> Option<&'s Definition> {
        self.spec.lookup(name)
    }

    /// The Rust module path holding the item `name` (its enclosing scopes in snake case).
    pub fn module_of(&self, name: &ScopedName) -> Vec<String> {
        let n = name.0.len().saturating_sub(1);
        (1..=n)
            .map(|k| self.names.module(&ScopedName(name.0[..k].to_vec())))
            .collect()
    }

    /// A path to `item` in module `target`, relative to the module being written.
    pub fn rel_path(&self, target: &[String], item: &str) -> String {
        let common = self
            .module
            .iter()
            .zip(target)
            .take_while(|(a, b)| a == b)
            .count();
        let mut parts: Vec<String> = vec!["super".into(); self.module.len() - common];
        parts.extend(target[common..].iter().cloned());
        parts.push(item.to_string());
        parts.join("::")
    }

    /// The Rust path of a named type.
    pub fn type_path(&self, name: &ScopedName) -> String {
        if crate::ami::is_exception_holder(name) {
            return "::corbina::ami::ExceptionHolder".into();
        }
        self.rel_path(&self.module_of(name), &self.names.item(name))
    }

    /// The Rust type of an IDL type (unsupported types were rejected by `check_type`).
    pub fn rust_type(&self, ty: &Type) -> String {
        match ty {
            Type::Short => "i16".into(),
            Type::UShort => "u16".into(),
            Type::Long => "i32".into(),
            Type::ULong => "u32".into(),
            Type::LongLong => "i64".into(),
            Type::ULongLong => "u64".into(),
            Type::Float => "f32".into(),
            Type::Double => "f64".into(),
            Type::LongDouble => "::corbina::LongDouble".into(),
            Type::Boolean => "bool".into(),
            Type::Char | Type::Octet => "u8".into(),
            Type::WChar => "char".into(),
            Type::String { .. } | Type::WString { .. } => "::std::string::String".into(),
            Type::Fixed { .. } => "::corbina::Fixed".into(),
            Type::Sequence { elem, .. } => format!("::std::vec::Vec<{}>", self.rust_type(elem)),
            Type::Array { elem, dims } => {
                let mut t = self.rust_type(elem);
                for d in dims.iter().rev() {
                    t = format!("[{t}; {d}]");
                }
                t
            }
            Type::Named {
                name,
                kind: NamedKind::Interface,
            } if self.is_abstract_interface(name) => self.type_path(name),
            Type::Named {
                kind: NamedKind::Interface,
                ..
            } => format!(
                "::core::option::Option<{}>",
                self.objref(ty).unwrap_or_default()
            ),
            Type::Named {
                name,
                kind: NamedKind::ValueType,
            } if self.is_abstract_value(name) => self.type_path(name),
            Type::Named {
                name,
                kind: NamedKind::ValueType,
            } if !crate::ami::is_exception_holder(name) => {
                format!("::corbina::valuetype::ValueRef<{}>", self.type_path(name))
            }
            Type::Named { name, .. } => self.type_path(name),
            Type::Any => "::corbina::Any".into(),
            Type::Object => "::core::option::Option<::corbina::ObjectRef>".into(),
            Type::TypeCode => "::corbina::TypeCode".into(),
            Type::ValueBase => "::corbina::ValueBase".into(),
        }
    }

    /// For an object reference type (`Object` or an interface, after typedefs), the Rust
    /// type of the non-nil reference: `::corbina::ObjectRef` or the proxy's path. Values of
    /// these types are `Option<…>`, `None` being the nil reference.
    pub fn objref(&self, ty: &Type) -> Option<String> {
        match self.resolve(ty) {
            Type::Object => Some("::corbina::ObjectRef".into()),
            Type::Named {
                name,
                kind: NamedKind::Interface,
            } if self.is_local(name) => Some(format!(
                "::corbina::local::LocalRef<dyn {}>",
                self.type_path(name)
            )),
            Type::Named {
                name,
                kind: NamedKind::Interface,
            } if !self.is_abstract_interface(name) => Some(self.type_path(name)),
            _ => None,
        }
    }

    /// Whether `name` is a local interface (defined, or only forward-declared `local`).
    pub fn is_local(&self, name: &ScopedName) -> bool {
        match self.lookup(name).map(|d| &d.kind) {
            Some(DefinitionKind::Interface(i)) => i.is_local,
            Some(DefinitionKind::InterfaceForward(f)) => f.is_local,
            _ => false,
        }
    }

    /// For a reference to a local interface (after typedefs), the trait object type `dyn L`.
    pub fn local_ref(&self, ty: &Type) -> Option<String> {
        match self.resolve(ty) {
            Type::Named {
                name,
                kind: NamedKind::Interface,
            } if self.is_local(name) => Some(format!("dyn {}", self.type_path(name))),
            _ => None,
        }
    }

    /// Follows typedefs.
    pub fn resolve<'t>(&'t self, ty: &'t Type) -> &'t Type {
        self.spec.resolve_alias(ty)
    }

    /// Reports an error for any use of a construct the generator does not support yet.
    /// Returns false if one was found.
    pub fn check_type(&mut self, ty: &Type, loc: &SourceLoc, what: &str) -> bool {
        let bad = match ty {
            Type::Sequence { elem, .. } | Type::Array { elem, .. } => {
                return self.check_type(elem, loc, what);
            }
            Type::Named { name, kind } => match kind {
                NamedKind::Interface => match self.lookup(name).map(|d| &d.kind) {
                    // Abstract and local interfaces, and interfaces forward-declared and never defined
                    // (a proxy without operations is generated for them).
                    Some(DefinitionKind::Interface(_) | DefinitionKind::InterfaceForward(_)) => {
                        None
                    }
                    _ => Some(format!("unknown interface '{name}'")),
                },
                NamedKind::ValueType if crate::ami::is_exception_holder(name) => None,
                NamedKind::ValueType => match self.lookup_defined(name).map(|d| &d.kind) {
                    Some(DefinitionKind::ValueType(_)) => None,
                    _ => Some(format!(
                        "forward-declared valuetype '{name}' that is never defined"
                    )),
                },
                NamedKind::ValueBox => None,
                NamedKind::Native => Some(format!("native type '{name}'")),
                NamedKind::Alias => match self.lookup(name).map(|d| &d.kind) {
                    Some(DefinitionKind::Alias(a)) => {
                        let ty = a.ty.clone();
                        return self.check_type(&ty, loc, what);
                    }
                    _ => None,
                },
                NamedKind::Struct | NamedKind::Union => match self.lookup(name).map(|d| &d.kind) {
                    Some(k) if k.is_forward() => Some(format!(
                        "forward-declared type '{name}' that is never defined"
                    )),
                    _ => None,
                },
                NamedKind::Enum => None,
            },
            _ => None,
        };
        match bad {
            Some(b) => {
                self.error(loc, format!("not yet supported: {b} used in {what}"));
                false
            }
            None => true,
        }
    }

    /// Which traits a type can derive.
    pub fn caps(&self, ty: &Type) -> Caps {
        if self.caps_table.borrow().is_none() {
            let t = self.compute_caps();
            *self.caps_table.borrow_mut() = Some(t);
        }
        match self.caps_table.borrow().as_ref() {
            Some(t) => Self::caps_in(ty, t),
            None => Caps::NONE,
        }
    }

    /// Which traits `ty` can derive, named types taken from `t` (absent: none).
    fn caps_in(ty: &Type, t: &HashMap<ScopedName, Caps>) -> Caps {
        match ty {
            Type::Float | Type::Double => Caps {
                eq: false,
                ..Caps::ALL
            },
            Type::String { .. } | Type::WString { .. } => Caps {
                copy: false,
                ..Caps::ALL
            },
            Type::Fixed { .. } => Caps {
                default: false,
                ..Caps::ALL
            },
            Type::Sequence { elem, .. } => Caps {
                default: true,
                eq: Self::caps_in(elem, t).eq,
                copy: false,
            },
            Type::Array { elem, dims } => {
                let c = Self::caps_in(elem, t);
                Caps {
                    default: c.default && dims.iter().all(|&d| d <= 32),
                    ..c
                }
            }
            Type::Named { name, .. } => t.get(name).copied().unwrap_or(Caps::NONE),
            // `Option<ObjectRef>` / `Option<Proxy>`: `None` by default; equal by IOR.
            Type::Object => Caps {
                copy: false,
                ..Caps::ALL
            },
            // `ValueBase`: null by default, equal and hashed by identity.
            Type::ValueBase => Caps {
                copy: false,
                ..Caps::ALL
            },
            Type::Any | Type::TypeCode => Caps::NONE,
            _ => Caps::ALL,
        }
    }

    /// Caps of every named type, as a greatest fixpoint over the type graph: all start at
    /// `ALL` and only lose traits, until nothing changes. A memo filled during a depth-first
    /// walk would freeze the provisional value of a type met again through a cycle (a
    /// sequence typedef of a struct inside that struct) into every type reached from it.
    fn compute_caps(&self) -> HashMap<ScopedName, Caps> {
        let mut names: Vec<&ScopedName> = Vec::new();
        self.spec.walk(&mut |d| {
            if !matches!(d.kind, DefinitionKind::Module(_)) {
                names.push(&d.scoped_name);
            }
        });
        names.sort();
        names.dedup();
        let mut table: HashMap<ScopedName, Caps> =
            names.iter().map(|n| ((*n).clone(), Caps::ALL)).collect();
        // Each round lowers at least one of 3 flags of one type, so this terminates.
        loop {
            let mut changed = false;
            for n in &names {
                let c = self.own_caps(n, &table);
                let e = table.get_mut(*n).expect("every name was inserted");
                let lowered = e.and(c);
                if lowered != *e {
                    *e = lowered;
                    changed = true;
                }
            }
            if !changed {
                return table;
            }
        }
    }

    /// The caps of a named type given the current estimate `t` for the others.
    fn own_caps(&self, name: &ScopedName, t: &HashMap<ScopedName, Caps>) -> Caps {
        let members = |ms: &mut dyn Iterator<Item = &Type>| {
            ms.fold(Caps::ALL, |c, ty| c.and(Self::caps_in(ty, t)))
        };
        match self.lookup(name).map(|d| &d.kind) {
            Some(DefinitionKind::Struct(s)) => members(&mut s.members.iter().map(|m| &m.ty)),
            Some(DefinitionKind::Exception(s)) => members(&mut s.members.iter().map(|m| &m.ty)),
            Some(DefinitionKind::Union(u)) => Caps {
                default: false,
                ..members(&mut u.cases.iter().map(|c| &c.member.ty))
            },
            Some(DefinitionKind::Alias(a)) => Self::caps_in(&a.ty, t),
            Some(DefinitionKind::Enum(_)) => Caps::ALL,
            Some(DefinitionKind::Interface(_) | DefinitionKind::InterfaceForward(_)) => Caps {
                copy: false,
                ..Caps::ALL
            },
            // `ValueRef<V>`: null by default, equal and hashed by identity.
            Some(DefinitionKind::ValueType(_) | DefinitionKind::ValueForward(_)) => Caps {
                copy: false,
                ..Caps::ALL
            },
            // `Option<Arc<T>>`: derives `PartialEq` only (see `values.rs`).
            Some(DefinitionKind::ValueBox(_)) => Caps {
                default: true,
                eq: false,
                copy: false,
            },
            _ => Caps::NONE,
        }
    }

    /// The fewest bytes a value can occupy on the wire (padding ignored).
    pub fn min_wire_size(&self, ty: &Type) -> usize {
        match self.resolve(ty) {
            Type::Short | Type::UShort | Type::WChar => 2,
            Type::Long | Type::ULong | Type::Float => 4,
            Type::LongLong | Type::ULongLong | Type::Double => 8,
            Type::LongDouble => 16,
            Type::Boolean | Type::Char | Type::Octet => 1,
            Type::String { .. } | Type::WString { .. } | Type::Sequence { .. } => 4,
            Type::Fixed { digits, .. } => usize::from(*digits) / 2 + 1,
            Type::Array { elem, dims } => dims
                .iter()
                .fold(self.min_wire_size(elem), |s, &d| s * d as usize),
            Type::Named { name, .. } => match self.lookup(name).map(|d| &d.kind) {
                Some(DefinitionKind::Struct(s)) => {
                    s.members.iter().map(|m| self.min_wire_size(&m.ty)).sum()
                }
                Some(DefinitionKind::Exception(s)) => {
                    s.members.iter().map(|m| self.min_wire_size(&m.ty)).sum()
                }
                Some(DefinitionKind::Union(u)) => self.min_wire_size(&u.discriminator),
                Some(DefinitionKind::Enum(_)) => 4,
                // A boolean, then a null value tag at least.
                Some(DefinitionKind::Interface(_) | DefinitionKind::InterfaceForward(_))
                    if self.is_abstract_interface(name) =>
                {
                    5
                }
                Some(DefinitionKind::Interface(_) | DefinitionKind::InterfaceForward(_)) => 8,
                // A value tag, null or indirection.
                Some(DefinitionKind::ValueType(_) | DefinitionKind::ValueBox(_)) => 4,
                _ => 1,
            },
            // An IOR: type id length and profile count.
            Type::Object => 8,
            Type::ValueBase => 4,
            _ => 1,
        }
    }

    /// Whether the Rust type's own `CdrEncode`/`CdrDecode` impls marshal `ty` exactly (no
    /// bounds, no wide strings, no `fixed` digits to pass).
    pub fn plain(&self, ty: &Type) -> bool {
        match self.resolve(ty) {
            Type::String { bound: None } => true,
            Type::String { .. } | Type::WString { .. } | Type::Fixed { .. } => false,
            Type::Sequence { elem, bound: None } => self.plain(elem),
            Type::Sequence { .. } => false,
            Type::Array { elem, .. } => self.plain(elem),
            // Marshalled through `corbina::object::{write_ref, read_ref}`.
            t if self.objref(t).is_some() => false,
            _ => true,
        }
    }
}
