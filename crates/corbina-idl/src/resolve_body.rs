//! Resolver part for interfaces, valuetypes, unions and their exports.

use super::{Exports, Resolver, Scope, Sym};
use crate::ast::{self, Def, Ident, ParamDir, ScopedNameRef, TypeSpec};
use crate::diagnostic::{Diagnostic, PResult, SourceLoc};
use crate::model::*;
use std::collections::{HashMap, HashSet};

impl Resolver<'_> {
    /// All ancestors of the given direct bases, each once.
    fn ancestors(&self, bases: &[ScopedName]) -> Vec<ScopedName> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        let mut stack: Vec<ScopedName> = bases.iter().rev().cloned().collect();
        while let Some(b) = stack.pop() {
            if seen.insert(b.clone()) {
                stack.extend(self.bases_of(&b).into_iter().rev());
                out.push(b);
            }
        }
        out
    }

    /// Operations and attributes inherited from two different interfaces clash.
    fn check_inherited_clash(&self, name: &Ident, bases: &[ScopedName]) -> PResult<()> {
        // Case-insensitive, as every IDL name collision (CORBA 3.0 §3.2.3).
        let mut owner: HashMap<String, &ScopedName> = HashMap::new();
        let ancestors = self.ancestors(bases);
        for a in &ancestors {
            if let Some(Sym::Interface { ops, .. } | Sym::Value { ops, .. }) =
                self.symbols.get(a).map(|s| &s.kind)
            {
                for op in ops {
                    if let Some(prev) = owner.insert(op.to_lowercase(), a) {
                        if prev != a {
                            return Err(Diagnostic::error(
                                &name.loc,
                                format!(
                                    "'{}' inherits '{op}' from both '{prev}' and '{a}'",
                                    name.name
                                ),
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A typedef (or chain of typedefs) naming an interface stands for that interface as a
    /// base: omniidl and JacORB accept `typedef A AA; interface B : AA {};`.
    fn unalias_base(&self, mut full: ScopedName) -> ScopedName {
        // Bounded: alias chains cannot be cyclic, but a hostile input must not loop.
        for _ in 0..64 {
            match self.symbols.get(&full).map(|s| &s.kind) {
                Some(Sym::Alias(Type::Named { name, .. })) => full = name.clone(),
                _ => break,
            }
        }
        full
    }

    fn resolve_bases(
        &self,
        scope: &Scope,
        name: &Ident,
        refs: &[ScopedNameRef],
        want_value: bool,
    ) -> PResult<Vec<ScopedName>> {
        let mut out: Vec<ScopedName> = Vec::new();
        for r in refs {
            let full = self.unalias_base(self.lookup(scope, r)?);
            let ok = match &self.sym(&full).kind {
                Sym::Interface { complete, .. } if !want_value => {
                    if !complete {
                        return Err(Diagnostic::error(
                            &r.loc,
                            format!("interface '{r}' is only forward-declared and cannot be used as a base"),
                        ));
                    }
                    true
                }
                Sym::Value { complete, .. } if want_value => {
                    if !complete {
                        return Err(Diagnostic::error(
                            &r.loc,
                            format!("valuetype '{r}' is only forward-declared and cannot be used as a base"),
                        ));
                    }
                    true
                }
                _ => false,
            };
            if !ok {
                let what = if want_value {
                    "a valuetype"
                } else {
                    "an interface"
                };
                return Err(Diagnostic::error(&r.loc, format!("'{r}' is not {what}")));
            }
            if out.contains(&full) {
                return Err(Diagnostic::error(
                    &r.loc,
                    format!("'{r}' appears twice in the bases of '{}'", name.name),
                ));
            }
            out.push(full);
        }
        Ok(out)
    }

    pub(super) fn interface(
        &mut self,
        scope: &mut Scope,
        name: &Ident,
        flags: ast::InterfaceFlags,
        base_refs: &[ScopedNameRef],
        body: &[Def],
        out: &mut Vec<Definition>,
    ) -> PResult<()> {
        let bases = self.resolve_bases(scope, name, base_refs, false)?;
        for (b, r) in bases.iter().zip(base_refs) {
            let Sym::Interface { flags: bf, .. } = self.sym(b).kind else {
                unreachable!()
            };
            if flags.is_abstract && !bf.is_abstract {
                return Err(Diagnostic::error(
                    &r.loc,
                    format!(
                        "abstract interface '{}' cannot inherit from non-abstract interface '{r}'",
                        name.name
                    ),
                ));
            }
            if !flags.is_local && bf.is_local {
                return Err(Diagnostic::error(
                    &r.loc,
                    format!(
                        "unconstrained interface '{}' cannot inherit from local interface '{r}'",
                        name.name
                    ),
                ));
            }
        }
        self.check_inherited_clash(name, &bases)?;
        let sym = Sym::Interface {
            complete: false,
            flags,
            bases: bases.clone(),
            ops: Vec::new(),
        };
        let full = self.declare_full(scope, name, sym.clone())?;
        // A forward declaration kept the old (empty) entry; install the bases now.
        self.symbols.get_mut(&full).expect("declared").kind = sym;
        let mut ex = Exports::default();
        let definitions =
            self.in_scope(scope, &name.name, |r, s| r.defs(s, body, Some(&mut ex)))?;
        let ops = ex
            .operations
            .iter()
            .map(|o| o.name.clone())
            .chain(ex.attributes.iter().map(|a| a.name.clone()))
            .collect();
        self.set_complete(&full, ops);
        let i = Interface {
            is_abstract: flags.is_abstract,
            is_local: flags.is_local,
            bases,
            definitions,
            operations: ex.operations,
            attributes: ex.attributes,
        };
        out.push(self.mk_def(full, name, DefinitionKind::Interface(i)));
        Ok(())
    }

    pub(super) fn valuetype(
        &mut self,
        scope: &mut Scope,
        name: &Ident,
        h: &ast::ValueHeader,
        body: &[Def],
        out: &mut Vec<Definition>,
    ) -> PResult<()> {
        let bases = self.resolve_bases(scope, name, &h.bases, true)?;
        let supports = self.resolve_bases(scope, name, &h.supports, false)?;
        for (i, (b, r)) in bases.iter().zip(&h.bases).enumerate() {
            let Sym::Value { is_abstract, .. } = self.sym(b).kind else {
                unreachable!()
            };
            if !is_abstract && h.is_abstract {
                return Err(Diagnostic::error(
                    &r.loc,
                    format!(
                        "abstract valuetype '{}' cannot inherit from concrete valuetype '{r}'",
                        name.name
                    ),
                ));
            }
            if !is_abstract && i > 0 {
                return Err(Diagnostic::error(
                    &r.loc,
                    format!("'{r}' is not abstract; only the first base of a concrete valuetype may be concrete"),
                ));
            }
        }
        self.check_truncatable(name, h)?;
        let concrete_support = self.check_supports(name, h, &bases, &supports)?;
        let all: Vec<ScopedName> = bases.iter().chain(&supports).cloned().collect();
        self.check_inherited_clash(name, &all)?;
        let sym = Sym::Value {
            complete: false,
            is_abstract: h.is_abstract,
            bases: all,
            ops: Vec::new(),
            concrete_support,
        };
        let full = self.declare_full(scope, name, sym.clone())?;
        self.symbols.get_mut(&full).expect("declared").kind = sym;
        let mut ex = Exports::default();
        let definitions =
            self.in_scope(scope, &name.name, |r, s| r.defs(s, body, Some(&mut ex)))?;
        // CORBA 3.0 §3.9.3: "No <state_member> or <initializers> may be specified."
        if let (true, Some(m)) = (h.is_abstract, ex.state_members.first()) {
            return Err(Diagnostic::error(
                &m.loc,
                format!(
                    "abstract valuetype '{}' cannot have state member '{}'",
                    name.name, m.name
                ),
            ));
        }
        if let (true, Some(f)) = (h.is_abstract, ex.initializers.first()) {
            return Err(Diagnostic::error(
                &f.loc,
                format!(
                    "abstract valuetype '{}' cannot have factory '{}'",
                    name.name, f.name
                ),
            ));
        }
        let ops = ex
            .operations
            .iter()
            .map(|o| o.name.clone())
            .chain(ex.attributes.iter().map(|a| a.name.clone()))
            .chain(ex.state_members.iter().map(|m| m.name.clone()))
            .collect();
        self.set_complete(&full, ops);
        let v = ValueType {
            is_abstract: h.is_abstract,
            is_custom: h.is_custom,
            is_truncatable: h.truncatable.is_some(),
            is_event: h.is_event,
            bases,
            supports,
            state_members: ex.state_members,
            initializers: ex.initializers,
            operations: ex.operations,
            attributes: ex.attributes,
            definitions,
        };
        out.push(self.mk_def(full, name, DefinitionKind::ValueType(v)));
        Ok(())
    }

    /// CORBA 3.0 §3.9.1.3: a custom valuetype may not be truncatable. (A truncatable value
    /// whose first base is abstract is accepted, as omniidl does: the spec does not forbid it.)
    fn check_truncatable(&self, name: &Ident, h: &ast::ValueHeader) -> PResult<()> {
        match &h.truncatable {
            Some(loc) if h.is_custom => Err(Diagnostic::error(
                loc,
                format!("custom valuetype '{}' cannot be truncatable", name.name),
            )),
            _ => Ok(()),
        }
    }

    /// CORBA 3.0 §3.9.5: a value directly supports at most one non-abstract interface, and
    /// it "must be derived, directly or indirectly, from each interface that the valuetype
    /// supports through inheritance". Returns the non-abstract interface the value supports,
    /// its own or else the first inherited one.
    fn check_supports(
        &self,
        name: &Ident,
        h: &ast::ValueHeader,
        bases: &[ScopedName],
        supports: &[ScopedName],
    ) -> PResult<Option<ScopedName>> {
        let mut own: Option<&ScopedName> = None;
        for (s, r) in supports.iter().zip(&h.supports) {
            let Sym::Interface { flags, .. } = self.sym(s).kind else {
                unreachable!("resolve_bases checked it")
            };
            if flags.is_abstract {
                continue;
            }
            if let Some(first) = own {
                return Err(Diagnostic::error(
                    &r.loc,
                    format!(
                        "valuetype '{}' supports two non-abstract interfaces, '{}' and '{r}'; at most one may be non-abstract",
                        name.name,
                        first.name()
                    ),
                ));
            }
            own = Some(s);
        }
        let inherited: Vec<(&ScopedName, &ScopedName)> = bases
            .iter()
            .filter_map(|b| match &self.sym(b).kind {
                Sym::Value {
                    concrete_support: Some(i),
                    ..
                } => Some((b, i)),
                _ => None,
            })
            .collect();
        let Some(o) = own else {
            // Without one of its own, the interfaces supported through the bases must be one
            // chain: the most derived of them is the one the value supports.
            let mut best: Option<&ScopedName> = None;
            for (b, i) in &inherited {
                let derives = |x: &ScopedName, y: &ScopedName| {
                    x == y || self.ancestors(std::slice::from_ref(x)).contains(y)
                };
                match best {
                    None => best = Some(i),
                    Some(cur) if derives(cur, i) => {}
                    Some(cur) if derives(i, cur) => best = Some(i),
                    Some(cur) => {
                        let r = &h.bases[bases.iter().position(|x| x == *b).expect("a base")];
                        return Err(Diagnostic::error(
                            &r.loc,
                            format!(
                                "valuetype '{}' supports both '{cur}' and '{i}' (through '{r}') and neither derives from the other; it must support an interface derived from both",
                                name.name
                            ),
                        ));
                    }
                }
            }
            return Ok(best.cloned());
        };
        let ancestors = self.ancestors(std::slice::from_ref(o));
        if let Some((b, i)) = inherited
            .iter()
            .find(|(_, i)| *i != o && !ancestors.contains(i))
        {
            let r = &h.supports[supports.iter().position(|s| s == o).expect("own")];
            return Err(Diagnostic::error(
                &r.loc,
                format!(
                    "valuetype '{}' supports '{r}', which does not derive from '{i}' supported by its base '{b}'",
                    name.name
                ),
            ));
        }
        Ok(Some(o.clone()))
    }

    /// An operation, attribute or state member must not redefine one inherited from a base
    /// (compared case-insensitively, CORBA 3.0 §3.2.3).
    fn not_inherited(&self, scope: &Scope, name: &Ident) -> PResult<()> {
        let here = ScopedName(scope.clone());
        for a in self.ancestors(&self.bases_of(&here)) {
            let mut low: Vec<String> = a.0.iter().map(|p| p.to_lowercase()).collect();
            low.push(name.name.to_lowercase());
            let Some(c) = self.lower.get(&low) else {
                continue;
            };
            if let Some(s) = self.symbols.get(c) {
                if matches!(s.kind, Sym::Operation | Sym::Attribute | Sym::Member) {
                    return Err(Diagnostic::error(
                        &name.loc,
                        format!(
                            "'{}' redefines {} '{c}' inherited from '{a}'",
                            name.name,
                            s.kind.describe()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Resolves the parameters of an operation or initializer. The parameter list is the
    /// operation's scope (CORBA 3.0 §3.15.3): a name used in it (a parameter's type, a bound,
    /// a raised exception) may not also be declared there as a parameter, in either order.
    fn params(
        &mut self,
        scope: &mut Scope,
        op: &Ident,
        params: &[ast::Param],
        raises: &[ScopedNameRef],
    ) -> PResult<Vec<Parameter>> {
        // Lowercased name → (as written, where): parameters declared, names used.
        let mut declared: HashMap<String, (String, SourceLoc)> = HashMap::new();
        let mut used: HashMap<String, (String, SourceLoc)> = HashMap::new();
        let mut out = Vec::new();
        for p in params {
            let ty = self.resolve_type(scope, &p.ty, &mut Vec::new(), false)?;
            let mut uses = Vec::new();
            type_uses(&p.ty, &mut uses);
            for (id, loc) in uses {
                self.use_in_params(&declared, id, loc)?;
                used.entry(id.to_lowercase())
                    .or_insert_with(|| (id.to_string(), loc.clone()));
            }
            let low = p.name.name.to_lowercase();
            if declared.contains_key(&low) {
                return Err(Diagnostic::error(
                    &p.name.loc,
                    format!("duplicate parameter '{}' in '{}'", p.name.name, op.name),
                ));
            }
            if let Some((u, at)) = used.get(&low) {
                let msg = format!(
                    "parameter '{}' clashes with '{u}', which its use at {at} introduced into the scope of operation '{}'",
                    p.name.name, op.name
                );
                self.naming_clash(&p.name.loc, msg)?;
            }
            declared.insert(low, (p.name.name.clone(), p.name.loc.clone()));
            out.push(Parameter {
                name: p.name.name.clone(),
                direction: p.dir,
                ty,
            });
        }
        for r in raises.iter().filter(|r| !r.absolute) {
            self.use_in_params(&declared, &r.parts[0], &r.loc)?;
        }
        Ok(out)
    }

    /// A name used in a parameter list after a parameter of that name (in any case) was
    /// declared there would denote the parameter.
    fn use_in_params(
        &mut self,
        declared: &HashMap<String, (String, SourceLoc)>,
        id: &str,
        loc: &SourceLoc,
    ) -> PResult<()> {
        match declared.get(&id.to_lowercase()) {
            None => Ok(()),
            Some((p, at)) => {
                let msg = format!(
                    "'{id}' collides with parameter '{p}' declared at {at} in the same operation"
                );
                self.naming_clash(loc, msg)
            }
        }
    }

    /// CORBA 3.0 §3.8.7: an unconstrained interface may not use a local type for a parameter,
    /// result, attribute or exception.
    fn not_local_here(&self, scope: &Scope, t: &Type, what: &str, loc: &SourceLoc) -> PResult<()> {
        let Some(Sym::Interface { flags, .. }) = self
            .symbols
            .get(&ScopedName(scope.clone()))
            .map(|s| &s.kind)
        else {
            return Ok(());
        };
        if flags.is_local {
            return Ok(());
        }
        // CORBA 3.0 §3.11.5: "Native type parameters are permitted only in operations of
        // local interfaces or valuetypes."
        if let Some(n) = self.native_in(t) {
            return Err(Diagnostic::error(
                loc,
                format!(
                    "{what} of unconstrained interface '{}' has native type '{n}'; natives are only for local interfaces and valuetypes",
                    scope.last().map(String::as_str).unwrap_or("")
                ),
            ));
        }
        match self.local_in(t) {
            None => Ok(()),
            Some(l) => Err(Diagnostic::error(
                loc,
                format!(
                    "{what} of unconstrained interface '{}' has local type '{l}'",
                    scope.last().map(String::as_str).unwrap_or("")
                ),
            )),
        }
    }

    pub(super) fn export(
        &mut self,
        scope: &mut Scope,
        d: &Def,
        ex: &mut Exports,
        out: &mut Vec<Definition>,
    ) -> PResult<()> {
        match d {
            Def::Operation {
                name,
                oneway,
                ret,
                params,
                raises,
                contexts,
            } => {
                self.not_inherited(scope, name)?;
                let return_type = match ret {
                    Some(t) => Some(self.resolve_type(scope, t, &mut Vec::new(), false)?),
                    None => None,
                };
                let (param_defs, raise_refs) = (params, raises);
                let params = self.params(scope, name, params, raises)?;
                let raises = self.exceptions(scope, raises)?;
                if let Some(t) = &return_type {
                    let what = format!("result of operation '{}'", name.name);
                    self.not_local_here(scope, t, &what, &name.loc)?;
                }
                for (p, a) in params.iter().zip(param_defs) {
                    let what = format!("parameter '{}' of operation '{}'", p.name, name.name);
                    self.not_local_here(scope, &p.ty, &what, &a.name.loc)?;
                }
                for (e, r) in raises.iter().zip(raise_refs) {
                    let what = format!("exception '{e}' raised by operation '{}'", name.name);
                    let t = Type::Named {
                        name: e.clone(),
                        kind: NamedKind::Struct,
                    };
                    self.not_local_here(scope, &t, &what, &r.loc)?;
                }
                if *oneway {
                    let op = &name.name;
                    if return_type.is_some() {
                        return Err(Diagnostic::error(
                            &name.loc,
                            format!("oneway operation '{op}' must return void"),
                        ));
                    }
                    if let Some(p) = params.iter().find(|p| p.direction != ParamDir::In) {
                        return Err(Diagnostic::error(
                            &name.loc,
                            format!(
                                "oneway operation '{op}' cannot have out or inout parameter '{}'",
                                p.name
                            ),
                        ));
                    }
                    if !raises.is_empty() {
                        return Err(Diagnostic::error(
                            &name.loc,
                            format!("oneway operation '{op}' cannot raise exceptions"),
                        ));
                    }
                }
                self.declare(scope, name, Sym::Operation)?;
                ex.operations.push(Operation {
                    name: name.name.clone(),
                    loc: name.loc.clone(),
                    oneway: *oneway,
                    return_type,
                    params,
                    raises,
                    contexts: contexts.clone(),
                });
            }
            Def::Attribute {
                readonly,
                ty,
                names,
                get_raises,
                set_raises,
            } => {
                let t = self.resolve_type(scope, ty, &mut Vec::new(), false)?;
                let raise_refs: Vec<&ScopedNameRef> = get_raises.iter().chain(set_raises).collect();
                let get_raises = self.exceptions(scope, get_raises)?;
                let set_raises = self.exceptions(scope, set_raises)?;
                let what = format!("attribute '{}'", names[0].name);
                self.not_native(&t, &format!("the type of {what}"), &names[0].loc)?;
                self.not_local_here(scope, &t, &what, &names[0].loc)?;
                for (e, r) in get_raises.iter().chain(&set_raises).zip(raise_refs) {
                    let what = format!("exception '{e}' raised by attribute '{}'", names[0].name);
                    let et = Type::Named {
                        name: e.clone(),
                        kind: NamedKind::Struct,
                    };
                    self.not_local_here(scope, &et, &what, &r.loc)?;
                }
                for n in names {
                    self.not_inherited(scope, n)?;
                    self.declare(scope, n, Sym::Attribute)?;
                    ex.attributes.push(Attribute {
                        name: n.name.clone(),
                        loc: n.loc.clone(),
                        readonly: *readonly,
                        ty: t.clone(),
                        get_raises: get_raises.clone(),
                        set_raises: set_raises.clone(),
                    });
                }
            }
            Def::StateMember {
                public,
                ty,
                declarators,
            } => {
                // A struct, union or enum defined in place belongs to the valuetype's scope.
                let base = self.resolve_type(scope, ty, out, false)?;
                for d in declarators {
                    let ty = self.array(scope, base.clone(), &d.dims)?;
                    let what = format!("the type of state member '{}'", d.name.name);
                    self.not_native(&ty, &what, &d.name.loc)?;
                    // CORBA 3.0 §3.8.7: a local type cannot be a state member (it is marshaled).
                    if let Some(l) = self.local_in(&ty) {
                        return Err(Diagnostic::error(
                            &d.name.loc,
                            format!("state member '{}' has local type '{l}'", d.name.name),
                        ));
                    }
                    self.not_inherited(scope, &d.name)?;
                    self.declare(scope, &d.name, Sym::Member)?;
                    ex.state_members.push(StateMember {
                        name: d.name.name.clone(),
                        public: *public,
                        ty,
                        loc: d.name.loc.clone(),
                    });
                }
            }
            Def::Initializer {
                name,
                params,
                raises,
            } => {
                let params = self.params(scope, name, params, raises)?;
                let raises = self.exceptions(scope, raises)?;
                self.declare(scope, name, Sym::Operation)?;
                ex.initializers.push(Initializer {
                    name: name.name.clone(),
                    loc: name.loc.clone(),
                    params,
                    raises,
                });
            }
            _ => unreachable!("only exports are passed here"),
        }
        Ok(())
    }

    pub(super) fn union(
        &mut self,
        scope: &mut Scope,
        name: &Ident,
        switch: &TypeSpec,
        cases: &[ast::Case],
    ) -> PResult<Union> {
        let mut definitions = Vec::new();
        let disc = self.resolve_type(scope, switch, &mut definitions, false)?;
        let loc = match switch {
            TypeSpec::Base(_, l) => l.clone(),
            TypeSpec::Named(n) => n.loc.clone(),
            _ => name.loc.clone(),
        };
        let valid = matches!(
            self.unalias(&disc),
            Type::Short
                | Type::UShort
                | Type::Long
                | Type::ULong
                | Type::LongLong
                | Type::ULongLong
                | Type::Char
                | Type::WChar
                | Type::Boolean
                | Type::Octet
                | Type::Named {
                    kind: NamedKind::Enum,
                    ..
                }
        );
        if !valid {
            return Err(Diagnostic::error(
                &loc,
                format!("'{disc}' is not a valid union discriminator type"),
            ));
        }
        let kind = self.const_kind(&disc, &loc)?;
        // Labels are integers, characters, booleans or enumerators: their Debug form is a key.
        let mut seen: HashSet<String> = HashSet::new();
        let mut default_at: Option<&SourceLoc> = None;
        let mut out = Vec::new();
        for c in cases {
            let mut labels = Vec::new();
            for l in &c.labels {
                match l {
                    ast::CaseLabel::Default(loc) => {
                        if default_at.is_some() {
                            return Err(Diagnostic::error(
                                loc,
                                format!("union '{}' has more than one default label", name.name),
                            ));
                        }
                        default_at = Some(loc);
                        labels.push(CaseLabel::Default);
                    }
                    ast::CaseLabel::Value(e) => {
                        let v = self.eval(scope, e, &kind)?;
                        if !seen.insert(format!("{v:?}")) {
                            return Err(Diagnostic::error(
                                &e.loc,
                                format!("duplicate case label {v} in union '{}'", name.name),
                            ));
                        }
                        labels.push(CaseLabel::Value(v));
                    }
                }
            }
            let base = self.resolve_type(scope, &c.ty, &mut definitions, false)?;
            let ty = self.array(scope, base, &c.declarator.dims)?;
            let d = &c.declarator.name;
            self.not_native(&ty, &format!("the type of member '{}'", d.name), &d.loc)?;
            self.declare(scope, d, Sym::Member)?;
            out.push(UnionCase {
                labels,
                member: Member {
                    name: d.name.clone(),
                    ty,
                    loc: d.loc.clone(),
                },
            });
        }
        // CORBA 3.0 §3.11.2.2: a default label is only allowed when the case labels leave some
        // value of the discriminator uncovered (labels are distinct and in range by now).
        if let Some(loc) = default_at {
            let values: u128 = match self.unalias(&disc) {
                Type::Boolean => 2,
                Type::Char | Type::Octet => 1 << 8,
                Type::Short | Type::UShort | Type::WChar => 1 << 16,
                Type::Long | Type::ULong => 1 << 32,
                Type::LongLong | Type::ULongLong => 1 << 64,
                Type::Named {
                    name: e,
                    kind: NamedKind::Enum,
                } => self.enum_sizes.get(&e).copied().unwrap_or(usize::MAX) as u128,
                _ => u128::MAX,
            };
            if seen.len() as u128 >= values {
                return Err(Diagnostic::error(
                    loc,
                    format!(
                        "union '{}' cannot have a default label: its case labels already cover every value of '{disc}'",
                        name.name
                    ),
                ));
            }
        }
        Ok(Union {
            discriminator: disc,
            cases: out,
            definitions,
        })
    }
}

/// The first identifiers of the relative names a type spec uses (its bounds included).
fn type_uses<'a>(ts: &'a TypeSpec, out: &mut Vec<(&'a str, &'a SourceLoc)>) {
    match ts {
        TypeSpec::Named(n) if !n.absolute => out.push((&n.parts[0], &n.loc)),
        TypeSpec::Sequence(elem, bound) => {
            type_uses(elem, out);
            bound.iter().for_each(|b| expr_uses(b, out));
        }
        TypeSpec::String(Some(b)) | TypeSpec::WString(Some(b)) => expr_uses(b, out),
        TypeSpec::Fixed(Some((d, s))) => {
            expr_uses(d, out);
            expr_uses(s, out);
        }
        _ => {}
    }
}

fn expr_uses<'a>(e: &'a ast::Expr, out: &mut Vec<(&'a str, &'a SourceLoc)>) {
    match &e.kind {
        ast::ExprKind::Name(n) if !n.absolute => out.push((&n.parts[0], &n.loc)),
        ast::ExprKind::Unary(_, x) => expr_uses(x, out),
        ast::ExprKind::Binary(_, x, y) => {
            expr_uses(x, out);
            expr_uses(y, out);
        }
        _ => {}
    }
}
