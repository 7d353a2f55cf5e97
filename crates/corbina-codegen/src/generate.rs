//! The top level: which definitions to emit, Rust modules for IDL scopes.

use crate::context::Gen;
use corbina_idl::model::{Definition, DefinitionKind, ScopedName};
use corbina_idl::{Diagnostics, Specification, Type};
use std::collections::HashSet;

enum Item<'s> {
    Def(&'s Definition),
    /// The error enums of an interface (in the interface's own module).
    Errors(&'s Definition),
}

#[derive(Default)]
struct ModNode<'s> {
    origin: Option<ScopedName>,
    items: Vec<Item<'s>>,
    children: Vec<(String, ModNode<'s>)>,
}

impl<'s> ModNode<'s> {
    fn child(&mut self, g: &mut Gen<'_>, def: &Definition) -> &mut ModNode<'s> {
        let name = g.names.module(&def.scoped_name);
        let i = match self.children.iter().position(|c| c.0 == name) {
            Some(i) => {
                if self.children[i]
                    .1
                    .origin
                    .as_ref()
                    .is_some_and(|o| *o != def.scoped_name)
                {
                    g.error(&def.loc, format!("'{}' maps to Rust module '{name}', which another definition in the same scope already uses", def.scoped_name));
                }
                i
            }
            None => {
                let node = ModNode {
                    origin: Some(def.scoped_name.clone()),
                    ..Default::default()
                };
                self.children.push((name, node));
                self.children.len() - 1
            }
        };
        &mut self.children[i].1
    }

    fn is_empty(&self) -> bool {
        self.items.is_empty() && self.children.iter().all(|c| c.1.is_empty())
    }
}

/// Names of definitions that types, bases and raises clauses refer to.
fn type_refs(ty: &Type, out: &mut Vec<ScopedName>) {
    match ty {
        Type::Sequence { elem, .. } | Type::Array { elem, .. } => type_refs(elem, out),
        Type::Named { name, .. } => out.push(name.clone()),
        _ => {}
    }
}

fn refs(def: &Definition) -> Vec<ScopedName> {
    let mut out = Vec::new();
    match &def.kind {
        DefinitionKind::Struct(s) => s.members.iter().for_each(|m| type_refs(&m.ty, &mut out)),
        DefinitionKind::Exception(s) => s.members.iter().for_each(|m| type_refs(&m.ty, &mut out)),
        DefinitionKind::Union(u) => {
            type_refs(&u.discriminator, &mut out);
            u.cases
                .iter()
                .for_each(|c| type_refs(&c.member.ty, &mut out));
        }
        DefinitionKind::Alias(a) => type_refs(&a.ty, &mut out),
        DefinitionKind::Const(c) => type_refs(&c.ty, &mut out),
        DefinitionKind::ValueBox(b) => type_refs(&b.ty, &mut out),
        DefinitionKind::ValueType(v) => {
            // Bases (their operations traits), supported interfaces (their servant traits),
            // state, operations and initializers.
            out.extend(v.bases.iter().chain(&v.supports).cloned());
            v.state_members
                .iter()
                .for_each(|m| type_refs(&m.ty, &mut out));
            for op in &v.operations {
                op.return_type.iter().for_each(|t| type_refs(t, &mut out));
                op.params.iter().for_each(|p| type_refs(&p.ty, &mut out));
                out.extend(op.raises.iter().cloned());
            }
            for a in &v.attributes {
                type_refs(&a.ty, &mut out);
                out.extend(a.get_raises.iter().chain(&a.set_raises).cloned());
            }
            for i in &v.initializers {
                i.params.iter().for_each(|p| type_refs(&p.ty, &mut out));
                out.extend(i.raises.iter().cloned());
            }
        }
        DefinitionKind::Interface(i) => {
            out.extend(i.bases.iter().cloned());
            for op in &i.operations {
                op.return_type.iter().for_each(|t| type_refs(t, &mut out));
                op.params.iter().for_each(|p| type_refs(&p.ty, &mut out));
                out.extend(op.raises.iter().cloned());
            }
            for a in &i.attributes {
                type_refs(&a.ty, &mut out);
                out.extend(a.get_raises.iter().chain(&a.set_raises).cloned());
            }
        }
        _ => {}
    }
    out
}

/// Definitions from included files that the main file's definitions need (transitively),
/// with the interfaces and structs that enclose them.
fn needed(spec: &Specification) -> HashSet<ScopedName> {
    let mut need = HashSet::new();
    let mut work: Vec<ScopedName> = Vec::new();
    spec.walk(&mut |d| {
        if d.from_main_file {
            work.extend(refs(d));
        }
    });
    while let Some(n) = work.pop() {
        let mut scope = n.clone();
        while !scope.0.is_empty() {
            if let Some(d) = spec.lookup(&scope) {
                if !d.from_main_file
                    && !matches!(d.kind, DefinitionKind::Module(_))
                    && need.insert(scope.clone())
                {
                    work.extend(refs(d));
                    // A needed scope's nested definitions come with it.
                    let mut inner = Vec::new();
                    for c in d.kind.children() {
                        inner.push(c.scoped_name.clone());
                    }
                    work.extend(inner);
                }
            }
            scope = scope.parent();
        }
    }
    need
}

impl<'s> Gen<'s> {
    fn build(
        &mut self,
        node: &mut ModNode<'s>,
        defs: &'s [Definition],
        need: &HashSet<ScopedName>,
    ) {
        for d in defs {
            let included = d.from_main_file || need.contains(&d.scoped_name);
            match &d.kind {
                DefinitionKind::Module(m) => {
                    let mut child = std::mem::take(node.child(self, d));
                    self.build(&mut child, &m.definitions, need);
                    *node.child(self, d) = child;
                }
                // An interface declared and never defined: a reference type of its own.
                DefinitionKind::InterfaceForward(f)
                    if included
                        && self
                            .lookup(&d.scoped_name)
                            .is_some_and(|only| std::ptr::eq(only, d)) =>
                {
                    node.items.push(Item::Def(d));
                }
                _ if !included || d.kind.is_forward() => {}
                DefinitionKind::Native => {}
                DefinitionKind::ValueType(v) => {
                    if self.value_supported(d, v) {
                        node.items.push(Item::Def(d));
                        let raises = crate::values_ops::value_raises(v);
                        if !v.definitions.is_empty() || raises {
                            let mut child = std::mem::take(node.child(self, d));
                            self.build(&mut child, &v.definitions, need);
                            if raises {
                                child.items.push(Item::Errors(d));
                            }
                            *node.child(self, d) = child;
                        }
                    }
                }
                DefinitionKind::Interface(i) => {
                    node.items.push(Item::Def(d));
                    let raises = i.operations.iter().any(|o| !o.raises.is_empty())
                        || i.attributes
                            .iter()
                            .any(|a| !a.get_raises.is_empty() || !a.set_raises.is_empty());
                    if !i.definitions.is_empty() || raises {
                        let mut child = std::mem::take(node.child(self, d));
                        self.build(&mut child, &i.definitions, need);
                        if raises {
                            child.items.push(Item::Errors(d));
                        }
                        *node.child(self, d) = child;
                    }
                }
                k => {
                    node.items.push(Item::Def(d));
                    if !k.children().is_empty() {
                        let mut child = std::mem::take(node.child(self, d));
                        self.build(&mut child, k.children(), need);
                        *node.child(self, d) = child;
                    }
                }
            }
        }
    }

    fn emit(&mut self, node: &ModNode<'s>) {
        for item in &node.items {
            self.out.blank();
            match item {
                Item::Def(d) => match &d.kind {
                    DefinitionKind::Struct(s) => self.gen_struct(d, &s.members, false),
                    DefinitionKind::Exception(e) => self.gen_struct(d, &e.members, true),
                    DefinitionKind::Union(u) => self.gen_union(d, u),
                    DefinitionKind::Enum(e) => self.gen_enum(d, e),
                    DefinitionKind::Alias(a) => self.gen_alias(d, &a.ty),
                    DefinitionKind::Const(c) => self.gen_const(d, c),
                    DefinitionKind::Interface(i) => self.gen_interface(d, i),
                    DefinitionKind::ValueType(v) => self.gen_value(d, v),
                    DefinitionKind::ValueBox(b) => self.gen_value_box(d, b),
                    DefinitionKind::InterfaceForward(f) if f.is_abstract => self
                        .gen_abstract_interface(
                            d,
                            &corbina_idl::model::Interface {
                                is_abstract: true,
                                ..Default::default()
                            },
                        ),
                    DefinitionKind::InterfaceForward(f) => {
                        self.gen_undefined_interface(d, f.is_local)
                    }
                    _ => {}
                },
                Item::Errors(d) => match &d.kind {
                    DefinitionKind::Interface(i) => self.gen_error_enums(d, i),
                    DefinitionKind::ValueType(v) => {
                        self.gen_error_enums(d, &crate::values_ops::value_iface(v));
                        self.gen_error_enums(d, &crate::values_ops::value_factories_iface(v));
                    }
                    _ => {}
                },
            }
        }
        for (name, child) in &node.children {
            if child.is_empty() {
                continue;
            }
            self.out.blank();
            if let Some(o) = &child.origin {
                self.out.line(format!("/// IDL scope `{o}`."));
            }
            self.out.open(format!("pub mod {name}"));
            self.module.push(name.clone());
            self.emit(child);
            self.module.pop();
            self.out.close();
        }
    }
}

/// Generates the Rust source for `spec`. `source_name` appears in the header comment.
///
/// Every definition of the main file is generated, and those of included files that they
/// need. Errors (unsupported constructs) are reported all at once, each as
/// `file:line:col: error: message`.
pub fn generate(spec: &Specification, source_name: &str) -> Result<String, Diagnostics> {
    generate_with(spec, source_name, &Options::default())
}

/// Choices about the generated code; the default is the mapping of `docs/mapping.md`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// Servant traits get a default body for every operation, raising `NO_IMPLEMENT`
    /// (minor `corbina::error::minor::NO_IMPLEMENT_OPERATION`, completed NO), so that a
    /// servant of a large interface implements only the operations it serves. Off by
    /// default: a missing method then stays a compile error.
    pub no_implement_defaults: bool,
    /// CORBA AMI callbacks for every interface: an `AMI_<Iface>Handler` reply handler
    /// (`AmiIfaceHandler` proxy, `…Servant` trait, `…Skeleton`) and `sendc_<op>` methods on
    /// the proxy, by the implied-IDL rules of CORBA 3 §22 (as omniidl `-Wbami`).
    pub ami: bool,
    /// AMI callbacks for these interfaces only (scoped names, `M::I` or `::M::I`).
    pub ami_interfaces: Vec<String>,
    /// Asynchronous Method Handling servants for every interface (as tao_idl's AMH): an
    /// `AmhIfaceServant` trait whose methods answer through an `AmhIfaceResponseHandler`,
    /// and its `AmhIfaceSkeleton`.
    pub amh: bool,
    /// AMH servants for these interfaces only (scoped names, `M::I` or `::M::I`).
    pub amh_interfaces: Vec<String>,
}

/// [`generate`] with `options`.
pub fn generate_with(
    spec: &Specification,
    source_name: &str,
    options: &Options,
) -> Result<String, Diagnostics> {
    generate_reporting(spec, source_name, options).map(|g| g.source)
}

/// What [`generate_reporting`] returns: the Rust source and the generator's warnings.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Generated {
    /// The Rust source.
    pub source: String,
    /// One warning per name the generator had to rename because an earlier IDL name or a
    /// generated name took its mapped Rust name (docs/mapping.md, "Names"), and per
    /// exception a `raises` clause names twice, sorted by position.
    pub warnings: Vec<corbina_idl::Diagnostic>,
}

/// [`generate_with`], also returning the generator's warnings.
pub fn generate_reporting(
    spec: &Specification,
    source_name: &str,
    options: &Options,
) -> Result<Generated, Diagnostics> {
    let mut g = Gen::new(spec);
    for (loc, msg) in g.names.take_renames() {
        g.warn(&loc, msg);
    }
    g.options = options.clone();
    let need = needed(spec);
    let mut root = ModNode::default();
    g.build(&mut root, &spec.definitions, &need);
    g.out.line(format!(
        "// @generated by corbina-codegen from {source_name}. Do not edit."
    ));
    g.out
        .line("// Include it with `include!(concat!(env!(\"OUT_DIR\"), \"/<name>.rs\"));`.");
    g.emit(&root);
    g.errors
        .sort_by(|a, b| (&a.file, a.line, a.col).cmp(&(&b.file, b.line, b.col)));
    let key = |d: &corbina_idl::Diagnostic| (d.file.clone(), d.line, d.col, d.message.clone());
    g.warnings.sort_by_key(key);
    g.warnings.dedup();
    if g.errors.is_empty() {
        Ok(Generated {
            source: g.out.finish(),
            warnings: g.warnings,
        })
    } else {
        Err(Diagnostics(g.errors))
    }
}
