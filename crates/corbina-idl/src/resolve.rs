//! Name resolution and semantic checks: turns the syntax tree into the model.
//!
//! Definitions are processed in source order with one symbol table keyed by
//! absolute scoped name, so IDL's declare-before-use rule falls out: a name
//! is visible only once its declaration has been processed.

use crate::ast::{self, Def, Ident, ScopedNameRef, TypeSpec};
use crate::constexpr::{ConstKind, ConstValue};
use crate::diagnostic::{Diagnostic, PResult, SourceLoc};
use crate::lexer::PragmaTok;
use crate::model::*;
use crate::repoid::{default_id, Overrides, PrefixState};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

#[derive(Clone, Debug)]
pub(crate) enum Sym {
    Module,
    Interface {
        complete: bool,
        flags: ast::InterfaceFlags,
        bases: Vec<ScopedName>,
        ops: Vec<String>,
    },
    Struct {
        complete: bool,
    },
    Union {
        complete: bool,
    },
    Enum,
    Enumerator(ConstValue),
    Exception,
    Alias(Type),
    Const(ConstValue),
    Native,
    Value {
        complete: bool,
        is_abstract: bool,
        bases: Vec<ScopedName>,
        ops: Vec<String>,
        /// The non-abstract interface it supports, its own or a base value's.
        concrete_support: Option<ScopedName>,
    },
    ValueBox,
    Operation,
    Attribute,
    Member,
}

impl Sym {
    fn describe(&self) -> &'static str {
        match self {
            Sym::Module => "module",
            Sym::Interface { .. } => "interface",
            Sym::Struct { .. } => "struct",
            Sym::Union { .. } => "union",
            Sym::Enum => "enum",
            Sym::Enumerator(_) => "enumerator",
            Sym::Exception => "exception",
            Sym::Alias(_) => "typedef",
            Sym::Const(_) => "constant",
            Sym::Native => "native type",
            Sym::Value { .. } => "valuetype",
            Sym::ValueBox => "value box",
            Sym::Operation => "operation",
            Sym::Attribute => "attribute",
            Sym::Member => "member",
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Symbol {
    pub kind: Sym,
    pub loc: SourceLoc,
}

/// Operations, attributes and valuetype parts collected from a body.
#[derive(Default)]
struct Exports {
    operations: Vec<Operation>,
    attributes: Vec<Attribute>,
    state_members: Vec<StateMember>,
    initializers: Vec<Initializer>,
}

/// Resolves a parsed specification.
pub(crate) struct Resolver<'w> {
    pub(crate) symbols: HashMap<ScopedName, Symbol>,
    lower: HashMap<Vec<String>, ScopedName>,
    warnings: &'w mut Vec<Diagnostic>,
    /// Report §3.15.3 name clashes as warnings instead of errors.
    relaxed_names: bool,
    prefix: PrefixState,
    file_stack: Vec<PrefixState>,
    overrides: Overrides,
    /// Names introduced into each scope by use (CORBA 3.0 §3.15.3), keyed by the lowercased
    /// identifier: the name as written and where it was first used.
    introduced: RefCell<HashMap<Scope, IntroducedNames>>,
    /// Structs, unions and exceptions with a member of a local type (CORBA 3.0 §3.8.7).
    local_types: HashSet<ScopedName>,
    /// The number of enumerators of each enum.
    enum_sizes: HashMap<ScopedName, usize>,
}

type Scope = Vec<String>;

/// Names introduced into one scope: lowercased identifier → (as written, first use).
type IntroducedNames = HashMap<String, (String, SourceLoc)>;

fn sn(scope: &[String], name: &str) -> ScopedName {
    let mut v = scope.to_vec();
    v.push(name.to_string());
    ScopedName(v)
}

impl<'w> Resolver<'w> {
    pub(crate) fn new(warnings: &'w mut Vec<Diagnostic>, relaxed_names: bool) -> Self {
        Resolver {
            symbols: HashMap::new(),
            lower: HashMap::new(),
            warnings,
            relaxed_names,
            prefix: PrefixState::default(),
            file_stack: Vec::new(),
            overrides: Overrides::default(),
            introduced: RefCell::default(),
            local_types: HashSet::new(),
            enum_sizes: HashMap::new(),
        }
    }

    /// Resolves the whole specification.
    pub(crate) fn run(mut self, defs: &[Def]) -> PResult<Specification> {
        let mut scope = Vec::new();
        let mut out = self.defs(&mut scope, defs, None)?;
        self.check_forwards_defined()?;
        crate::repoid::apply_overrides(&mut out, &self.overrides);
        Ok(Specification::new(out))
    }

    // ---- symbol table ------------------------------------------------------

    fn declare(&mut self, scope: &[String], name: &Ident, kind: Sym) -> PResult<ScopedName> {
        self.check_scope_rules(scope, name)?;
        let full = sn(scope, &name.name);
        let low: Vec<String> = full.0.iter().map(|s| s.to_lowercase()).collect();
        if let Some(other) = self.lower.get(&low) {
            if *other != full {
                let prev = &self.symbols[other].loc;
                return Err(Diagnostic::error(
                    &name.loc,
                    format!(
                        "'{}' differs only in case from '{}' declared at {prev}",
                        name.name,
                        other.name()
                    ),
                ));
            }
        }
        if let Some(old) = self.symbols.get_mut(&full) {
            let redefinition = match (&mut old.kind, &kind) {
                (Sym::Module, Sym::Module) => false,
                (
                    Sym::Interface {
                        complete: c,
                        flags: f1,
                        ..
                    },
                    Sym::Interface {
                        complete: n,
                        flags: f2,
                        ..
                    },
                ) => {
                    if f1 != f2 {
                        return Err(Diagnostic::error(
                            &name.loc,
                            format!("declaration of interface '{}' does not match its earlier declaration at {}", name.name, old.loc),
                        ));
                    }
                    *c && *n
                }
                (
                    Sym::Value {
                        complete: c,
                        is_abstract: a1,
                        ..
                    },
                    Sym::Value {
                        complete: n,
                        is_abstract: a2,
                        ..
                    },
                ) => {
                    if a1 != a2 {
                        return Err(Diagnostic::error(
                            &name.loc,
                            format!("declaration of valuetype '{}' does not match its earlier declaration at {}", name.name, old.loc),
                        ));
                    }
                    *c && *n
                }
                (Sym::Struct { complete: c }, Sym::Struct { complete: n })
                | (Sym::Union { complete: c }, Sym::Union { complete: n }) => *c && *n,
                _ => true,
            };
            if redefinition {
                return Err(Diagnostic::error(
                    &name.loc,
                    format!(
                        "redefinition of '{}' (previous declaration as {} at {})",
                        name.name,
                        old.kind.describe(),
                        old.loc
                    ),
                ));
            }
            // A complete definition is not replaced by a later forward declaration.
            let keep_old = matches!(
                old.kind,
                Sym::Module
                    | Sym::Interface { complete: true, .. }
                    | Sym::Struct { complete: true }
                    | Sym::Union { complete: true }
                    | Sym::Value { complete: true, .. }
            );
            if !keep_old {
                old.kind = kind;
            }
            return Ok(full);
        }
        self.lower.insert(low, full.clone());
        self.symbols.insert(
            full.clone(),
            Symbol {
                kind,
                loc: name.loc.clone(),
            },
        );
        Ok(full)
    }

    /// CORBA 3.0 §3.15.3: a name may not be declared in the scope it names (`module M {
    /// typedef short M; }`, `struct Right { string right; }` as in the OMG's `Security.idl`,
    /// which omniidl refuses too), nor in a scope into which a use has already introduced it.
    fn check_scope_rules(&mut self, scope: &[String], name: &Ident) -> PResult<()> {
        let low = name.name.to_lowercase();
        let clash = match scope.last() {
            Some(enclosing) if enclosing.to_lowercase() == low => Some(format!(
                "'{}' clashes with the name of its enclosing scope '{enclosing}'",
                name.name
            )),
            _ => self
                .introduced
                .borrow()
                .get(scope)
                .and_then(|names| names.get(&low))
                .map(|(used, at)| {
                    format!(
                        "'{}' clashes with '{used}', which its use at {at} introduced into this scope",
                        name.name
                    )
                }),
        };
        match clash {
            None => Ok(()),
            Some(m) => self.naming_clash(&name.loc, m),
        }
    }

    /// Reports a breach of the naming rules of CORBA 3.0 §3.15.3: an error, or a warning with
    /// relaxed names.
    pub(super) fn naming_clash(&mut self, loc: &SourceLoc, m: String) -> PResult<()> {
        if self.relaxed_names {
            self.warnings.push(Diagnostic::warning(loc, m));
            return Ok(());
        }
        Err(Diagnostic::error(
            loc,
            format!("{m} (CORBA 3.0 §3.15.3; rename one of them, or relax the check with --relaxed-names)"),
        ))
    }

    /// Records that `id` (the first part of a relative name) is used in `scope`: it is
    /// introduced there and, through structs, unions and exceptions nested in an interface or
    /// valuetype, into each enclosing scope up to that interface or valuetype (not beyond it
    /// into a module). A scope that declares or inherits `id` itself stops the introduction.
    fn introduce(&self, scope: &[String], id: &str, loc: &SourceLoc) {
        let low = id.to_lowercase();
        let mut depth = scope.len();
        loop {
            let here = &scope[..depth];
            let mut path: Vec<String> = here.iter().map(|s| s.to_lowercase()).collect();
            path.push(low.clone());
            let declared_here = self.lower.contains_key(&path)
                || matches!(
                    self.find_in(&ScopedName(here.to_vec()), id, loc),
                    Ok(Some(_)) | Err(_)
                );
            if declared_here {
                return;
            }
            self.introduced
                .borrow_mut()
                .entry(here.to_vec())
                .or_default()
                .entry(low.clone())
                .or_insert_with(|| (id.to_string(), loc.clone()));
            if depth == 0 || !self.introduces_outward(&scope[..depth - 1]) {
                return;
            }
            depth -= 1;
        }
    }

    /// Whether a use in a scope nested directly in `scope` also introduces the name into
    /// `scope`: true for interfaces and valuetypes and for what is nested in them.
    fn introduces_outward(&self, scope: &[String]) -> bool {
        if scope.is_empty() {
            return false;
        }
        match self
            .symbols
            .get(&ScopedName(scope.to_vec()))
            .map(|s| &s.kind)
        {
            Some(Sym::Interface { .. } | Sym::Value { .. }) => true,
            Some(Sym::Struct { .. } | Sym::Union { .. } | Sym::Exception) => {
                self.introduces_outward(&scope[..scope.len() - 1])
            }
            _ => false,
        }
    }

    /// Declares a full (non-forward) struct, union, interface or valuetype.
    fn declare_full(&mut self, scope: &[String], name: &Ident, kind: Sym) -> PResult<ScopedName> {
        if let Some(old) = self.symbols.get(&sn(scope, &name.name)) {
            let complete = matches!(
                old.kind,
                Sym::Interface { complete: true, .. }
                    | Sym::Struct { complete: true }
                    | Sym::Union { complete: true }
                    | Sym::Value { complete: true, .. }
            );
            if complete {
                return Err(Diagnostic::error(
                    &name.loc,
                    format!(
                        "redefinition of '{}' (previous declaration as {} at {})",
                        name.name,
                        old.kind.describe(),
                        old.loc
                    ),
                ));
            }
        }
        self.declare(scope, name, kind)
    }

    fn set_complete(&mut self, full: &ScopedName, ops: Vec<String>) {
        if let Some(s) = self.symbols.get_mut(full) {
            match &mut s.kind {
                Sym::Interface {
                    complete, ops: o, ..
                }
                | Sym::Value {
                    complete, ops: o, ..
                } => {
                    *complete = true;
                    *o = ops;
                }
                Sym::Struct { complete } | Sym::Union { complete } => *complete = true,
                _ => {}
            }
        }
    }

    fn bases_of(&self, full: &ScopedName) -> Vec<ScopedName> {
        match self.symbols.get(full).map(|s| &s.kind) {
            Some(Sym::Interface { bases, .. } | Sym::Value { bases, .. }) => bases.clone(),
            _ => Vec::new(),
        }
    }

    /// Finds `id` declared directly in `scope` or inherited into it.
    fn find_in(
        &self,
        scope: &ScopedName,
        id: &str,
        loc: &SourceLoc,
    ) -> PResult<Option<ScopedName>> {
        let direct = scope.child(id);
        if self.symbols.contains_key(&direct) {
            return Ok(Some(direct));
        }
        let mut found: Vec<ScopedName> = Vec::new();
        let mut seen = HashSet::new();
        let mut stack = self.bases_of(scope);
        stack.reverse();
        while let Some(b) = stack.pop() {
            if !seen.insert(b.clone()) {
                continue;
            }
            let c = b.child(id);
            if self.symbols.contains_key(&c) {
                if !found.contains(&c) {
                    found.push(c);
                }
                continue;
            }
            let mut more = self.bases_of(&b);
            more.reverse();
            stack.extend(more);
        }
        match found.len() {
            0 => Ok(None),
            1 => Ok(found.pop()),
            _ => Err(Diagnostic::error(
                loc,
                format!(
                    "ambiguous name '{id}': inherited both as '{}' and '{}'",
                    found[0], found[1]
                ),
            )),
        }
    }

    /// Resolves a name used in `scope` (lexical scopes outward, inherited names included); a
    /// relative name's first identifier is introduced into the scope (§3.15.3).
    fn lookup(&self, scope: &[String], n: &ScopedNameRef) -> PResult<ScopedName> {
        let full = self.lookup_quiet(scope, n)?;
        if !n.absolute {
            self.introduce(scope, &n.parts[0], &n.loc);
        }
        Ok(full)
    }

    /// Resolves a name without using it (pragmas and `typeid`/`typeprefix` only name things).
    fn lookup_quiet(&self, scope: &[String], n: &ScopedNameRef) -> PResult<ScopedName> {
        let not_found = || Diagnostic::error(&n.loc, format!("'{n}' is not defined"));
        let mut cur = if n.absolute {
            self.find_in(&ScopedName::default(), &n.parts[0], &n.loc)?
                .ok_or_else(not_found)?
        } else {
            let mut hit = None;
            for depth in (0..=scope.len()).rev() {
                if let Some(f) =
                    self.find_in(&ScopedName(scope[..depth].to_vec()), &n.parts[0], &n.loc)?
                {
                    hit = Some(f);
                    break;
                }
            }
            hit.ok_or_else(not_found)?
        };
        for p in &n.parts[1..] {
            cur = self.find_in(&cur, p, &n.loc)?.ok_or_else(not_found)?;
        }
        Ok(cur)
    }

    /// A forward-declared struct or union must be defined in the same specification
    /// (CORBA 3.0 §3.11.2.3 and §3.11.2.2; IDL 4.2 §7.4.1.4.4.4.4).
    fn check_forwards_defined(&self) -> PResult<()> {
        let mut missing: Vec<(&ScopedName, &Symbol)> = self
            .symbols
            .iter()
            .filter(|(_, s)| {
                matches!(
                    s.kind,
                    Sym::Struct { complete: false } | Sym::Union { complete: false }
                )
            })
            .collect();
        missing.sort_by_key(|(_, s)| (s.loc.file.clone(), s.loc.line, s.loc.col));
        match missing.first() {
            None => Ok(()),
            Some((name, s)) => Err(Diagnostic::error(
                &s.loc,
                format!(
                    "{} '{}' is forward-declared but never defined",
                    s.kind.describe(),
                    name.name()
                ),
            )),
        }
    }

    fn sym(&self, name: &ScopedName) -> &Symbol {
        &self.symbols[name]
    }

    fn mk_def(&self, full: ScopedName, name: &Ident, kind: DefinitionKind) -> Definition {
        Definition {
            name: name.name.clone(),
            repository_id: default_id(&self.prefix, &full),
            scoped_name: full,
            loc: name.loc.clone(),
            from_main_file: name.loc.main_file,
            kind,
        }
    }

    // ---- definitions ---------------------------------------------------------

    fn defs(
        &mut self,
        scope: &mut Scope,
        defs: &[Def],
        mut exports: Option<&mut Exports>,
    ) -> PResult<Vec<Definition>> {
        let mut out = Vec::new();
        for d in defs {
            self.def(scope, d, &mut out, exports.as_deref_mut())?;
        }
        Ok(out)
    }

    /// Runs `f` inside scope `name`, restoring the pragma prefix afterwards.
    fn in_scope<T>(
        &mut self,
        scope: &mut Scope,
        name: &str,
        f: impl FnOnce(&mut Self, &mut Scope) -> PResult<T>,
    ) -> PResult<T> {
        let saved = self.prefix.clone();
        scope.push(name.to_string());
        let r = f(self, scope);
        scope.pop();
        self.prefix = saved;
        r
    }

    fn def(
        &mut self,
        scope: &mut Scope,
        d: &Def,
        out: &mut Vec<Definition>,
        exports: Option<&mut Exports>,
    ) -> PResult<()> {
        match d {
            Def::Module { name, defs } => {
                let full = self.declare(scope, name, Sym::Module)?;
                let definitions = self.in_scope(scope, &name.name, |r, s| r.defs(s, defs, None))?;
                out.push(self.mk_def(full, name, DefinitionKind::Module(Module { definitions })));
            }
            Def::InterfaceForward { name, flags } => {
                let kind = Sym::Interface {
                    complete: false,
                    flags: *flags,
                    bases: Vec::new(),
                    ops: Vec::new(),
                };
                let full = self.declare(scope, name, kind)?;
                let k = InterfaceForward {
                    is_abstract: flags.is_abstract,
                    is_local: flags.is_local,
                };
                out.push(self.mk_def(full, name, DefinitionKind::InterfaceForward(k)));
            }
            Def::Interface {
                name,
                flags,
                bases,
                body,
            } => self.interface(scope, name, *flags, bases, body, out)?,
            Def::Struct { name, members } => {
                let full = self.declare_full(scope, name, Sym::Struct { complete: false })?;
                let (members, definitions) =
                    self.in_scope(scope, &name.name, |r, s| r.members(s, members))?;
                self.mark_local(&full, members.iter().map(|m| &m.ty));
                self.set_complete(&full, Vec::new());
                out.push(self.mk_def(
                    full,
                    name,
                    DefinitionKind::Struct(Struct {
                        members,
                        definitions,
                    }),
                ));
            }
            Def::StructForward { name } => {
                let full = self.declare(scope, name, Sym::Struct { complete: false })?;
                out.push(self.mk_def(full, name, DefinitionKind::StructForward));
            }
            Def::UnionForward { name } => {
                let full = self.declare(scope, name, Sym::Union { complete: false })?;
                out.push(self.mk_def(full, name, DefinitionKind::UnionForward));
            }
            Def::Union {
                name,
                switch,
                cases,
            } => {
                let full = self.declare_full(scope, name, Sym::Union { complete: false })?;
                let u = self.in_scope(scope, &name.name, |r, s| r.union(s, name, switch, cases))?;
                self.mark_local(&full, u.cases.iter().map(|c| &c.member.ty));
                self.set_complete(&full, Vec::new());
                out.push(self.mk_def(full, name, DefinitionKind::Union(u)));
            }
            Def::Enum { name, enumerators } => {
                let full = self.declare(scope, name, Sym::Enum)?;
                if enumerators.len() > u32::MAX as usize {
                    return Err(Diagnostic::error(&name.loc, "too many enumerators"));
                }
                for (i, e) in enumerators.iter().enumerate() {
                    let v = ConstValue::Enum {
                        enum_name: full.clone(),
                        enumerator: e.name.clone(),
                        index: i as u32,
                    };
                    self.declare(scope, e, Sym::Enumerator(v))?;
                }
                self.enum_sizes.insert(full.clone(), enumerators.len());
                let enumerators = enumerators.iter().map(|e| e.name.clone()).collect();
                out.push(self.mk_def(full, name, DefinitionKind::Enum(Enum { enumerators })));
            }
            Def::Exception { name, members } => {
                let full = self.declare(scope, name, Sym::Exception)?;
                let (members, definitions) =
                    self.in_scope(scope, &name.name, |r, s| r.members(s, members))?;
                self.mark_local(&full, members.iter().map(|m| &m.ty));
                out.push(self.mk_def(
                    full,
                    name,
                    DefinitionKind::Exception(Exception {
                        members,
                        definitions,
                    }),
                ));
            }
            Def::Typedef { ty, declarators } => {
                let base = self.resolve_type(scope, ty, out, false)?;
                for decl in declarators {
                    let ty = self.array(scope, base.clone(), &decl.dims)?;
                    let full = self.declare(scope, &decl.name, Sym::Alias(ty.clone()))?;
                    out.push(self.mk_def(full, &decl.name, DefinitionKind::Alias(Alias { ty })));
                }
            }
            Def::Native { name } => {
                let full = self.declare(scope, name, Sym::Native)?;
                out.push(self.mk_def(full, name, DefinitionKind::Native));
            }
            Def::Const { ty, name, expr } => {
                let (ty, kind) = match ty {
                    TypeSpec::Fixed(None) => (None, ConstKind::Fixed),
                    _ => {
                        let t = self.resolve_type(scope, ty, out, false)?;
                        let k = self.const_kind(&t, &name.loc)?;
                        (Some(t), k)
                    }
                };
                let value = self.eval(scope, expr, &kind)?;
                // CORBA 3.0 §3.10.2: the value must fit its type, for a fixed<d,s> typedef too.
                if let (Some(t), ConstValue::Fixed(f)) = (&ty, &value) {
                    if let Type::Fixed { digits, scale } = self.unalias(t) {
                        let int_digits = f.digits().saturating_sub(f.scale);
                        if f.scale > scale || int_digits > digits - scale {
                            return Err(Diagnostic::error(
                                &expr.loc,
                                format!(
                                    "fixed-point value {f} does not fit fixed<{digits},{scale}>"
                                ),
                            ));
                        }
                    }
                }
                let ty = match (ty, &value) {
                    (Some(t), _) => t,
                    (None, ConstValue::Fixed(f)) => Type::Fixed {
                        digits: f.digits(),
                        scale: f.scale,
                    },
                    (None, _) => unreachable!("fixed constants evaluate to fixed values"),
                };
                let full = self.declare(scope, name, Sym::Const(value.clone()))?;
                out.push(self.mk_def(full, name, DefinitionKind::Const(Const { ty, value })));
            }
            Def::ValueBox { name, ty } => {
                let t = self.resolve_type(scope, ty, out, false)?;
                self.not_native(&t, &format!("boxed by '{}'", name.name), &name.loc)?;
                if let Type::Named {
                    kind: NamedKind::ValueType | NamedKind::ValueBox,
                    ..
                } = self.unalias(&t)
                {
                    return Err(Diagnostic::error(
                        &name.loc,
                        format!("value box '{}' cannot box a valuetype", name.name),
                    ));
                }
                let full = self.declare(scope, name, Sym::ValueBox)?;
                out.push(self.mk_def(full, name, DefinitionKind::ValueBox(ValueBox { ty: t })));
            }
            Def::ValueForward {
                name, is_abstract, ..
            } => {
                let kind = Sym::Value {
                    complete: false,
                    is_abstract: *is_abstract,
                    bases: Vec::new(),
                    ops: Vec::new(),
                    concrete_support: None,
                };
                let full = self.declare(scope, name, kind)?;
                out.push(self.mk_def(
                    full,
                    name,
                    DefinitionKind::ValueForward(ValueForward {
                        is_abstract: *is_abstract,
                    }),
                ));
            }
            Def::ValueType { name, header, body } => {
                self.valuetype(scope, name, header, body, out)?
            }
            Def::TypeId { name, id } => {
                let full = self.lookup_quiet(scope, name)?;
                self.set_id(full, id, &name.loc)?;
            }
            Def::TypePrefix { name, prefix } => {
                let full = self.lookup_quiet(scope, name)?;
                // CORBA 3.0 §3.16.2: the name denotes a module, interface or value type.
                let kind = &self.sym(&full).kind;
                if !matches!(
                    kind,
                    Sym::Module | Sym::Interface { .. } | Sym::Value { .. }
                ) {
                    return Err(Diagnostic::error(
                        &name.loc,
                        format!(
                            "typeprefix names {} '{name}'; it must name a module, interface or valuetype",
                            article(kind.describe())
                        ),
                    ));
                }
                self.overrides.typeprefixes.insert(full, prefix.clone());
            }
            Def::Pragma(p, loc) => self.pragma(scope, p, loc)?,
            Def::Operation { .. }
            | Def::Attribute { .. }
            | Def::StateMember { .. }
            | Def::Initializer { .. } => {
                let Some(ex) = exports else {
                    return Err(Diagnostic::error(
                        &scope_loc(d),
                        "operation outside an interface",
                    ));
                };
                self.export(scope, d, ex, out)?;
            }
        }
        Ok(())
    }

    fn set_id(&mut self, full: ScopedName, id: &str, loc: &SourceLoc) -> PResult<()> {
        if let Some((old, _)) = self.overrides.ids.get(&full) {
            if old != id {
                return Err(Diagnostic::error(
                    loc,
                    format!("repository id of '{full}' already set to \"{old}\""),
                ));
            }
        }
        if let Some(v) = self.overrides.versions.get(&full) {
            if idl_version(id) != Some(v.as_str()) {
                return Err(Diagnostic::error(
                    loc,
                    format!("repository id \"{id}\" of '{full}' does not match its version {v} set by #pragma version"),
                ));
            }
        }
        self.overrides
            .ids
            .insert(full, (id.to_string(), loc.clone()));
        Ok(())
    }

    fn pragma(&mut self, scope: &Scope, p: &PragmaTok, loc: &SourceLoc) -> PResult<()> {
        let name_ref = |name: &Vec<String>, absolute: bool| ScopedNameRef {
            absolute,
            parts: name.clone(),
            loc: loc.clone(),
        };
        match p {
            PragmaTok::Prefix(s) => {
                self.prefix = PrefixState {
                    prefix: s.clone(),
                    base: scope.len(),
                }
            }
            // Each included file starts without a prefix; the includer's is restored after it.
            PragmaTok::EnterFile => {
                self.file_stack.push(std::mem::take(&mut self.prefix));
            }
            PragmaTok::ExitFile => self.prefix = self.file_stack.pop().unwrap_or_default(),
            PragmaTok::Id { name, absolute, id } => {
                let full = self.lookup_quiet(scope, &name_ref(name, *absolute))?;
                self.set_id(full, id, loc)?;
            }
            PragmaTok::Version {
                name,
                absolute,
                major,
                minor,
            } => {
                let full = self.lookup_quiet(scope, &name_ref(name, *absolute))?;
                let version = format!("{major}.{minor}");
                // CORBA 3.0 §10.7.5.3: a version may not contradict an earlier one, nor the
                // version in an id set explicitly (nor be given to a non-IDL-format id).
                if let Some((id, at)) = self.overrides.ids.get(&full) {
                    if idl_version(id) != Some(version.as_str()) {
                        return Err(Diagnostic::error(
                            loc,
                            format!("cannot set the version of '{full}' to {version}: its repository id was set to \"{id}\" at {at}"),
                        ));
                    }
                }
                if let Some(v) = self.overrides.versions.get(&full) {
                    if *v != version {
                        return Err(Diagnostic::error(
                            loc,
                            format!("cannot set the version of '{full}' to {version}: it was already set to {v}"),
                        ));
                    }
                }
                self.overrides.versions.insert(full, version);
            }
        }
        Ok(())
    }
}

/// `a struct`, `an enum`.
fn article(what: &str) -> String {
    let an = what.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {what}", if an { "an" } else { "a" })
}

/// The version of an `IDL:` repository id (`IDL:a/b:1.2` → `1.2`).
fn idl_version(id: &str) -> Option<&str> {
    let rest = id.strip_prefix("IDL:")?;
    rest.rsplit_once(':').map(|(_, v)| v)
}

fn scope_loc(d: &Def) -> SourceLoc {
    match d {
        Def::Operation { name, .. } | Def::Initializer { name, .. } => name.loc.clone(),
        Def::Attribute { names, .. } => names[0].loc.clone(),
        Def::StateMember { declarators, .. } => declarators[0].name.loc.clone(),
        _ => SourceLoc::new("", 0, 0),
    }
}

#[path = "resolve_body.rs"]
mod body;
#[path = "resolve_types.rs"]
mod types;

#[cfg(test)]
#[path = "resolve_tests.rs"]
mod tests;
