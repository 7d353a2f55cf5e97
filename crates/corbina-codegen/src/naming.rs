//! The Rust names of a specification's definitions, made unique in each Rust namespace
//! before anything is written (docs/mapping.md, "Name clashes"): IDL identifiers that
//! convert to one Rust name (`fooBar` and `foo_bar`, `IOR` and `Ior`) are told apart by
//! trailing underscores, given in declaration order, instead of being refused.

use crate::names::{bump, camel, screaming, snake, unique};
use corbina_idl::model::{
    Definition, DefinitionKind, Enum, Interface, InterfaceForward, Member, ScopedName, ValueType,
};
use std::collections::HashMap;

/// Methods every proxy has; an operation mapped to one of these names is renamed.
pub const PROXY_RESERVED: &[&str] = &["narrow", "unchecked_narrow", "as_object", "type_code"];

/// Names already used in one Rust module, by namespace.
#[derive(Default)]
struct Taken {
    /// Types: structs, enums, type aliases, proxies, servant traits, skeletons, error enums.
    types: Vec<String>,
    /// Constants.
    consts: Vec<String>,
    /// Typedefs' `<alias>_type_code` functions.
    fns: Vec<String>,
    /// Modules (IDL modules and the modules of scopes holding nested definitions).
    modules: Vec<String>,
}

impl Taken {
    /// The first of `base`, `base_`, … for which every `suffix` form is free in `list`.
    fn claim(list: &mut Vec<String>, base: String, suffixes: &[&str]) -> String {
        let mut n = base;
        while suffixes.iter().any(|s| list.contains(&format!("{n}{s}"))) {
            n = bump(&n);
        }
        for s in suffixes {
            list.push(format!("{n}{s}"));
        }
        n
    }
}

/// Unique Rust names, computed once per specification.
#[derive(Default)]
pub struct NameTable {
    items: HashMap<ScopedName, String>,
    alias_fns: HashMap<ScopedName, String>,
    modules: HashMap<ScopedName, String>,
    /// An interface's own operations and attribute accessors, by wire name (`op`,
    /// `_get_a`, `_set_a`): the method name in its servant trait.
    methods: HashMap<(ScopedName, String), String>,
    /// Error enum of an operation or accessor that raises user exceptions, by wire name.
    errors: HashMap<(ScopedName, String), String>,
    scopes: HashMap<ScopedName, Taken>,
}

/// Whether the definition's scope becomes a Rust module of its own (see `generate::build`).
fn has_module(d: &Definition) -> bool {
    match &d.kind {
        DefinitionKind::Module(_) => true,
        DefinitionKind::Interface(i) => !i.definitions.is_empty() || raises_any(i),
        DefinitionKind::ValueType(v) => {
            !v.definitions.is_empty() || crate::values_ops::value_raises(v)
        }
        k => !k.children().is_empty(),
    }
}

fn raises_any(i: &Interface) -> bool {
    i.operations.iter().any(|o| !o.raises.is_empty())
        || i.attributes
            .iter()
            .any(|a| !a.get_raises.is_empty() || !a.set_raises.is_empty())
}

/// An interface's own operations and accessors in the generator's order (operations, then
/// attributes): (wire name, Rust name before disambiguation, raises anything).
pub fn own_methods(i: &Interface) -> Vec<(String, String, bool)> {
    let mut v: Vec<(String, String, bool)> = i
        .operations
        .iter()
        .map(|o| (o.name.clone(), snake(&o.name), !o.raises.is_empty()))
        .collect();
    for a in &i.attributes {
        let base = snake(&a.name).trim_start_matches("r#").to_string();
        v.push((
            format!("_get_{}", a.name),
            format!("get_{base}"),
            !a.get_raises.is_empty(),
        ));
        if !a.readonly {
            v.push((
                format!("_set_{}", a.name),
                format!("set_{base}"),
                !a.set_raises.is_empty(),
            ));
        }
    }
    v
}

impl NameTable {
    pub fn new(defs: &[Definition]) -> Self {
        let mut t = NameTable::default();
        t.visit(defs);
        t
    }

    fn visit(&mut self, defs: &[Definition]) {
        for d in defs {
            self.assign(d);
            self.visit(d.kind.children());
            match &d.kind {
                DefinitionKind::Interface(i) => self.assign_methods(d, i),
                DefinitionKind::ValueType(v) => {
                    self.assign_methods(d, &crate::values_ops::value_iface(v));
                    self.assign_factory_errors(d, v);
                }
                _ => {}
            }
        }
    }

    fn assign(&mut self, d: &Definition) {
        let key = d.scoped_name.clone();
        let taken = self.scopes.entry(key.parent()).or_default();
        if has_module(d) && !self.modules.contains_key(&key) {
            let n = Taken::claim(&mut taken.modules, snake(&d.name), &[""]);
            self.modules.insert(key.clone(), n);
        }
        if self.items.contains_key(&key) {
            return; // A forward declaration or an earlier opening named it.
        }
        let name = match &d.kind {
            DefinitionKind::Module(_) | DefinitionKind::Native => return,
            DefinitionKind::Const(_) => Taken::claim(&mut taken.consts, screaming(&d.name), &[""]),
            // An abstract interface's object form is `<A>Object`.
            DefinitionKind::Interface(Interface {
                is_abstract: true, ..
            })
            | DefinitionKind::InterfaceForward(InterfaceForward {
                is_abstract: true, ..
            }) => Taken::claim(
                &mut taken.types,
                camel(&d.name),
                &[
                    "",
                    "Servant",
                    "Skeleton",
                    "Object",
                    "ObjectAsync",
                    "ServantProbe",
                    "ServantProbeHit",
                    "ServantProbeMiss",
                ],
            ),
            DefinitionKind::Interface(_) | DefinitionKind::InterfaceForward(_) => Taken::claim(
                &mut taken.types,
                camel(&d.name),
                &["", "Servant", "Skeleton"],
            ),
            _ => Taken::claim(&mut taken.types, camel(&d.name), &[""]),
        };
        if matches!(d.kind, DefinitionKind::Alias(_)) {
            // `foo_` → `foo_type_code` (no `__`, which is not snake case); a clash takes
            // the underscores at the end.
            let f = Taken::claim(&mut taken.fns, alias_fn_base(&d.name), &[""]);
            self.alias_fns.insert(key.clone(), f);
        }
        self.items.insert(key, name);
    }

    /// Servant trait method names, unique among the interface's own methods and the
    /// proxy's fixed methods; error enums after the interface's nested types.
    fn assign_methods(&mut self, d: &Definition, i: &Interface) {
        let own = own_methods(i);
        let names = unique(own.iter().map(|m| m.1.clone()), PROXY_RESERVED);
        let taken = self.scopes.entry(d.scoped_name.clone()).or_default();
        for ((wire, _, raises), rust) in own.into_iter().zip(names) {
            if raises {
                let base = format!("{}Error", camel(rust.trim_start_matches("r#")));
                let e = Taken::claim(&mut taken.types, base, &[""]);
                self.errors.insert((d.scoped_name.clone(), wire.clone()), e);
            }
            self.methods.insert((d.scoped_name.clone(), wire), rust);
        }
    }

    /// Error enums of a valuetype's initializers that raise exceptions (`<Name>Error`, after
    /// its operations' enums), keyed by `values_ops::factory_key`.
    fn assign_factory_errors(&mut self, d: &Definition, v: &ValueType) {
        let taken = self.scopes.entry(d.scoped_name.clone()).or_default();
        for init in v.initializers.iter().filter(|i| !i.raises.is_empty()) {
            let base = format!("{}Error", camel(snake(&init.name).trim_start_matches("r#")));
            let e = Taken::claim(&mut taken.types, base, &[""]);
            let key = crate::values_ops::factory_key(&init.name);
            self.errors.insert((d.scoped_name.clone(), key), e);
        }
    }

    /// The Rust type (or constant) name of a definition.
    pub fn item(&self, name: &ScopedName) -> String {
        self.items
            .get(name)
            .cloned()
            .unwrap_or_else(|| camel(name.name()))
    }

    /// The Rust module name of a scope.
    pub fn module(&self, name: &ScopedName) -> String {
        self.modules
            .get(name)
            .cloned()
            .unwrap_or_else(|| snake(name.name()))
    }

    /// The name of a typedef's TypeCode function.
    pub fn alias_fn(&self, name: &ScopedName) -> String {
        self.alias_fns
            .get(name)
            .cloned()
            .unwrap_or_else(|| alias_fn_base(name.name()))
    }

    /// The servant trait's method for an operation or accessor (by wire name).
    pub fn method(&self, iface: &ScopedName, wire: &str) -> Option<&str> {
        self.methods
            .get(&(iface.clone(), wire.to_string()))
            .map(String::as_str)
    }

    /// The error enum of an operation or accessor (by wire name) that raises exceptions.
    pub fn error_enum(&self, iface: &ScopedName, wire: &str) -> Option<&str> {
        self.errors
            .get(&(iface.clone(), wire.to_string()))
            .map(String::as_str)
    }
}

fn alias_fn_base(idl_name: &str) -> String {
    let s = snake(idl_name);
    format!(
        "{}_type_code",
        s.trim_start_matches("r#").trim_end_matches('_')
    )
}

/// Struct and exception fields.
pub fn member_names(members: &[Member]) -> Vec<String> {
    unique(members.iter().map(|m| snake(&m.name)), &[])
}

/// Enum variants.
pub fn enumerator_names(e: &Enum) -> Vec<String> {
    unique(e.enumerators.iter().map(|v| camel(v)), &[])
}
