//! The Rust names of a specification's definitions, made unique in each Rust namespace
//! before anything is written (docs/mapping.md, "Name clashes"): IDL identifiers that
//! convert to one Rust name (`fooBar` and `foo_bar`, `IOR` and `Ior`) are told apart by
//! trailing underscores, given in declaration order, instead of being refused.

use crate::names::{bump, camel, screaming, snake, unique};
use corbina_idl::model::{
    Definition, DefinitionKind, Enum, Interface, InterfaceForward, Member, ScopedName, ValueType,
};
use std::collections::{HashMap, HashSet};

/// Methods every proxy has; an operation mapped to one of these names is renamed.
pub const PROXY_RESERVED: &[&str] = &["narrow", "unchecked_narrow", "as_object", "type_code"];

/// Names already used in one Rust module, by namespace, each with what took it (for the
/// rename warning).
#[derive(Default)]
struct Taken {
    /// Types: structs, enums, type aliases, proxies, servant traits, skeletons, error enums,
    /// and the types derived from an interface's name (`FAMILY`, `AMI_FAMILY`).
    types: Vec<(String, String)>,
    /// Constants.
    consts: Vec<(String, String)>,
    /// Typedefs' `<alias>_type_code` functions.
    fns: Vec<(String, String)>,
    /// Modules (IDL modules and the modules of scopes holding nested definitions).
    modules: Vec<(String, String)>,
}

/// The Rust types an interface `I` takes besides `I` itself (`(prefix, suffix)` around its
/// Rust name), whether or not AMI or AMH is generated, so that its names do not depend on
/// the options: servant trait, skeleton, asynchronous proxy, and AMH servant, skeleton and
/// response handler.
pub const FAMILY: &[(&str, &str)] = &[
    ("", ""),
    ("", "Servant"),
    ("", "Skeleton"),
    ("", "Async"),
    ("Amh", "Servant"),
    ("Amh", "Skeleton"),
    ("Amh", "ResponseHandler"),
];

/// An abstract interface `A`: the type `A`, its object form `AObject` (with its servant
/// trait, skeleton and asynchronous proxy) and the probes of `value_servant`.
const ABSTRACT_FAMILY: &[(&str, &str)] = &[
    ("", ""),
    ("", "Servant"),
    ("", "Skeleton"),
    ("", "Object"),
    ("", "ObjectAsync"),
    ("", "ServantProbe"),
    ("", "ServantProbeHit"),
    ("", "ServantProbeMiss"),
];

/// An AMI reply handler `AMI_IHandler` is an interface of its own.
const HANDLER_FAMILY: &[(&str, &str)] =
    &[("", ""), ("", "Servant"), ("", "Skeleton"), ("", "Async")];

/// A valuetype `V`: the type, its operations trait and its factory trait.
const VALUE_FAMILY: &[(&str, &str)] = &[("", ""), ("", "Operations"), ("", "Factory")];

/// A name of AMI's implied IDL: (IDL name, Rust name).
type Implied = (String, String);

/// A rename the generator made: (where, message).
pub type Rename = (corbina_idl::SourceLoc, String);

impl Taken {
    /// The first of `base`, `base_`, … for which every `prefix base suffix` form is free in
    /// `list`; records the forms as taken by `owner`, and a rename in `renames`.
    fn claim(
        list: &mut Vec<(String, String)>,
        base: String,
        forms: &[(&str, &str)],
        owner: (&ScopedName, &corbina_idl::SourceLoc),
        renames: &mut Vec<Rename>,
    ) -> String {
        let first = base.clone();
        let mut n = base;
        let mut clash = None;
        while let Some((name, by)) = forms.iter().find_map(|(p, s)| {
            let f = format!("{p}{n}{s}");
            list.iter().find(|t| t.0 == f).cloned()
        }) {
            clash.get_or_insert((name, by));
            n = bump(&n);
        }
        for (p, s) in forms {
            list.push((format!("{p}{n}{s}"), owner.0.to_string()));
        }
        if let Some((name, by)) = clash {
            renames.push((
                owner.1.clone(),
                format!(
                    "`{}` is generated as Rust `{n}`, not `{first}`: `{name}` is already `{by}`'s (docs/mapping.md, \"Names\")",
                    owner.0
                ),
            ));
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
    /// Every IDL definition's scoped name (for the implied IDL names of AMI).
    idl_names: HashSet<ScopedName>,
    /// An interface's AMI handler and poller: (implied IDL name, Rust name) each.
    ami: HashMap<ScopedName, (Implied, Implied)>,
    renames: Vec<Rename>,
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
        fn collect(defs: &[Definition], out: &mut HashSet<ScopedName>) {
            for d in defs {
                out.insert(d.scoped_name.clone());
                collect(d.kind.children(), out);
            }
        }
        collect(defs, &mut t.idl_names);
        t.visit(defs);
        t
    }

    /// The renames made so far (a name taken by an earlier one), as warnings.
    pub fn take_renames(&mut self) -> Vec<Rename> {
        std::mem::take(&mut self.renames)
    }

    /// The AMI reply handler of a concrete interface: (implied IDL name, Rust name).
    pub fn ami_handler(&self, iface: &ScopedName) -> (String, String) {
        self.ami.get(iface).map_or_else(
            || {
                let n = format!("AMI_{}Handler", iface.name());
                (n.clone(), camel(&n))
            },
            |a| a.0.clone(),
        )
    }

    /// The AMI poller of a concrete interface: (implied IDL name, Rust name).
    pub fn ami_poller(&self, iface: &ScopedName) -> (String, String) {
        self.ami.get(iface).map_or_else(
            || {
                let n = format!("AMI_{}Poller", iface.name());
                (n.clone(), camel(&n))
            },
            |a| a.1.clone(),
        )
    }

    fn visit(&mut self, defs: &[Definition]) {
        for d in defs {
            self.assign(d);
            self.note_renames(d);
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
        let owner = (&d.scoped_name, &d.loc);
        let renames = &mut self.renames;
        if has_module(d) && !self.modules.contains_key(&key) {
            let n = Taken::claim(
                &mut taken.modules,
                snake(&d.name),
                &[("", "")],
                owner,
                renames,
            );
            self.modules.insert(key.clone(), n);
        }
        if let DefinitionKind::Interface(Interface {
            is_abstract: false,
            is_local: false,
            ..
        }) = &d.kind
        {
            // The implied IDL of AMI (CORBA 3 §22.6): `AMI_<I>Handler` and `AMI_<I>Poller`
            // in `I`'s scope, with `AMI_` repeated while an IDL name has that spelling.
            let implied = |suffix: &str| {
                let mut n = format!("AMI_{}{suffix}", d.name);
                while self.idl_names.contains(&key.parent().child(&n)) {
                    n.insert_str(0, "AMI_");
                }
                n
            };
            let (handler, poller) = (implied("Handler"), implied("Poller"));
            for n in [&handler, &poller] {
                if n.starts_with("AMI_AMI_") {
                    let plain = n.trim_start_matches("AMI_");
                    renames.push((d.loc.clone(), format!("AMI's implied IDL for `{}` names `{n}`, not `AMI_{plain}`, which the IDL declares (CORBA 3 §22.6)", d.scoped_name)));
                }
            }
            let h = Taken::claim(
                &mut taken.types,
                camel(&handler),
                HANDLER_FAMILY,
                owner,
                renames,
            );
            let p = Taken::claim(
                &mut taken.types,
                camel(&poller),
                &[("", "")],
                owner,
                renames,
            );
            self.items.insert(key.parent().child(&handler), h.clone());
            self.ami.insert(key.clone(), ((handler, h), (poller, p)));
        }
        if self.items.contains_key(&key) {
            return; // A forward declaration or an earlier opening named it.
        }
        let family = match &d.kind {
            DefinitionKind::Module(_) | DefinitionKind::Native => return,
            DefinitionKind::Const(_) => {
                let n = Taken::claim(
                    &mut taken.consts,
                    screaming(&d.name),
                    &[("", "")],
                    owner,
                    renames,
                );
                self.items.insert(key, n);
                return;
            }
            DefinitionKind::Interface(Interface {
                is_abstract: true, ..
            })
            | DefinitionKind::InterfaceForward(InterfaceForward {
                is_abstract: true, ..
            }) => ABSTRACT_FAMILY,
            DefinitionKind::Interface(_) | DefinitionKind::InterfaceForward(_) => FAMILY,
            DefinitionKind::ValueType(_) => VALUE_FAMILY,
            _ => &[("", "")],
        };
        let name = Taken::claim(&mut taken.types, camel(&d.name), family, owner, renames);
        if matches!(d.kind, DefinitionKind::Alias(_)) {
            // `foo_` → `foo_type_code` (no `__`, which is not snake case); a clash takes
            // the underscores at the end.
            let f = Taken::claim(
                &mut taken.fns,
                alias_fn_base(&d.name),
                &[("", "")],
                owner,
                renames,
            );
            self.alias_fns.insert(key.clone(), f);
        }
        self.items.insert(key, name);
    }

    /// Warnings for fields, enumerators, parameters and error variants that `unique` renames
    /// (the generator computes the names where it writes them, the same way).
    fn note_renames(&mut self, d: &Definition) {
        let r = &mut self.renames;
        match &d.kind {
            DefinitionKind::Struct(s) => {
                let (i, m) = members(&s.members);
                note(r, "member", &d.loc, &d.scoped_name, &i, m, &[]);
            }
            DefinitionKind::Exception(s) => {
                let (i, m) = members(&s.members);
                note(r, "member", &d.loc, &d.scoped_name, &i, m, &[]);
            }
            DefinitionKind::Enum(e) => {
                let i: Vec<&str> = e.enumerators.iter().map(String::as_str).collect();
                let m = e.enumerators.iter().map(|v| camel(v)).collect();
                note(r, "enumerator", &d.loc, &d.scoped_name, &i, m, &[]);
            }
            DefinitionKind::Interface(itf) => {
                for op in &itf.operations {
                    let scope = d.scoped_name.child(&op.name);
                    let i: Vec<&str> = op.params.iter().map(|p| p.name.as_str()).collect();
                    let m = op.params.iter().map(|p| snake(&p.name)).collect();
                    note(r, "parameter", &op.loc, &scope, &i, m, &[]);
                    let raises = dedup_raises(&op.raises);
                    if raises.len() < op.raises.len() {
                        r.push((op.loc.clone(), format!("`{scope}` names an exception twice in its raises clause; its error enum has one variant for it")));
                    }
                    let i: Vec<&str> = raises.iter().map(|e| e.name()).collect();
                    let m = raises.iter().map(|e| camel(e.name())).collect();
                    note(
                        r,
                        "the error variant of",
                        &op.loc,
                        &scope,
                        &i,
                        m,
                        &["System"],
                    );
                }
            }
            _ => {}
        }
    }

    /// Servant trait method names, unique among the interface's own methods and the
    /// proxy's fixed methods; error enums after the interface's nested types.
    fn assign_methods(&mut self, d: &Definition, i: &Interface) {
        let own = own_methods(i);
        let names = unique(own.iter().map(|m| m.1.clone()), PROXY_RESERVED);
        let taken = self.scopes.entry(d.scoped_name.clone()).or_default();
        for ((wire, mapped, raises), rust) in own.into_iter().zip(names) {
            let op = d.scoped_name.child(&wire);
            if rust != mapped {
                self.renames.push((
                    d.loc.clone(),
                    renamed("the servant method of", &op, &rust, &mapped),
                ));
            }
            if raises {
                let base = format!("{}Error", camel(rust.trim_start_matches("r#")));
                let e = Taken::claim(
                    &mut taken.types,
                    base,
                    &[("", "")],
                    (&op, &d.loc),
                    &mut self.renames,
                );
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
            let init_name = d.scoped_name.child(&init.name);
            let e = Taken::claim(
                &mut taken.types,
                base,
                &[("", "")],
                (&init_name, &init.loc),
                &mut self.renames,
            );
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

/// Warns for each name of `mapped` that `unique` changes.
fn note(
    renames: &mut Vec<Rename>,
    what: &str,
    loc: &corbina_idl::SourceLoc,
    scope: &ScopedName,
    idl: &[&str],
    mapped: Vec<String>,
    reserved: &[&str],
) {
    for ((idl, m), r) in idl
        .iter()
        .zip(&mapped)
        .zip(unique(mapped.clone(), reserved))
    {
        if *m != r {
            renames.push((loc.clone(), renamed(what, &scope.child(idl), &r, m)));
        }
    }
}

fn members(ms: &[Member]) -> (Vec<&str>, Vec<String>) {
    (
        ms.iter().map(|m| m.name.as_str()).collect(),
        ms.iter().map(|m| snake(&m.name)).collect(),
    )
}

/// A `raises` clause with each exception once (`raises (E, ::M::E)` may name one twice).
pub fn dedup_raises(raises: &[ScopedName]) -> Vec<ScopedName> {
    let mut out: Vec<ScopedName> = Vec::new();
    for e in raises {
        if !out.contains(e) {
            out.push(e.clone());
        }
    }
    out
}

/// The warning for a name that `unique` changed.
pub fn renamed(what: &str, idl: &ScopedName, rust: &str, mapped: &str) -> String {
    format!(
        "{what} `{idl}` is generated as Rust `{rust}`, not `{mapped}`, which an earlier name or the generator already uses (docs/mapping.md, \"Names\")"
    )
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
