//! Resolver part for interfaces, valuetypes, unions and their exports.

use super::{Exports, Resolver, Scope, Sym};
use crate::ast::{self, Def, Ident, ParamDir, ScopedNameRef, TypeSpec};
use crate::constexpr::ConstValue;
use crate::diagnostic::{Diagnostic, PResult};
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
        let mut owner: HashMap<&str, &ScopedName> = HashMap::new();
        let ancestors = self.ancestors(bases);
        for a in &ancestors {
            if let Some(Sym::Interface { ops, .. } | Sym::Value { ops, .. }) =
                self.symbols.get(a).map(|s| &s.kind)
            {
                for op in ops {
                    if let Some(prev) = owner.insert(op, a) {
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
            if !is_abstract && (i > 0 || h.is_abstract) {
                return Err(Diagnostic::error(
                    &r.loc,
                    format!("'{r}' is not abstract; only the first base of a concrete valuetype may be concrete"),
                ));
            }
        }
        let all: Vec<ScopedName> = bases.iter().chain(&supports).cloned().collect();
        self.check_inherited_clash(name, &all)?;
        let sym = Sym::Value {
            complete: false,
            is_abstract: h.is_abstract,
            bases: all,
            ops: Vec::new(),
        };
        let full = self.declare_full(scope, name, sym.clone())?;
        self.symbols.get_mut(&full).expect("declared").kind = sym;
        let mut ex = Exports::default();
        let definitions =
            self.in_scope(scope, &name.name, |r, s| r.defs(s, body, Some(&mut ex)))?;
        if h.is_abstract && !ex.state_members.is_empty() {
            return Err(Diagnostic::error(
                &name.loc,
                format!(
                    "abstract valuetype '{}' cannot have state members",
                    name.name
                ),
            ));
        }
        let ops = ex
            .operations
            .iter()
            .map(|o| o.name.clone())
            .chain(ex.attributes.iter().map(|a| a.name.clone()))
            .collect();
        self.set_complete(&full, ops);
        let v = ValueType {
            is_abstract: h.is_abstract,
            is_custom: h.is_custom,
            is_truncatable: h.truncatable,
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

    /// An operation or attribute must not redefine one inherited from a base.
    fn not_inherited(&self, scope: &Scope, name: &Ident) -> PResult<()> {
        let here = ScopedName(scope.clone());
        for a in self.ancestors(&self.bases_of(&here)) {
            let c = a.child(&name.name);
            if let Some(s) = self.symbols.get(&c) {
                if matches!(s.kind, Sym::Operation | Sym::Attribute) {
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

    fn params(
        &mut self,
        scope: &mut Scope,
        op: &Ident,
        params: &[ast::Param],
    ) -> PResult<Vec<Parameter>> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for p in params {
            if !seen.insert(p.name.name.to_lowercase()) {
                return Err(Diagnostic::error(
                    &p.name.loc,
                    format!("duplicate parameter '{}' in '{}'", p.name.name, op.name),
                ));
            }
            let ty = self.resolve_type(scope, &p.ty, &mut Vec::new(), false)?;
            out.push(Parameter {
                name: p.name.name.clone(),
                direction: p.dir,
                ty,
            });
        }
        Ok(out)
    }

    pub(super) fn export(&mut self, scope: &mut Scope, d: &Def, ex: &mut Exports) -> PResult<()> {
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
                let params = self.params(scope, name, params)?;
                let raises = self.exceptions(scope, raises)?;
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
                let get_raises = self.exceptions(scope, get_raises)?;
                let set_raises = self.exceptions(scope, set_raises)?;
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
                let mut nested = Vec::new();
                let base = self.resolve_type(scope, ty, &mut nested, false)?;
                if let Some(d) = nested.first() {
                    return Err(Diagnostic::error(
                        &d.loc,
                        "types cannot be defined inside a state member declaration",
                    ));
                }
                for d in declarators {
                    let ty = self.array(scope, base.clone(), &d.dims)?;
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
                let params = self.params(scope, name, params)?;
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
        let mut seen: Vec<ConstValue> = Vec::new();
        let mut has_default = false;
        let mut out = Vec::new();
        for c in cases {
            let mut labels = Vec::new();
            for l in &c.labels {
                match l {
                    ast::CaseLabel::Default(loc) => {
                        if has_default {
                            return Err(Diagnostic::error(
                                loc,
                                format!("union '{}' has more than one default label", name.name),
                            ));
                        }
                        has_default = true;
                        labels.push(CaseLabel::Default);
                    }
                    ast::CaseLabel::Value(e) => {
                        let v = self.eval(scope, e, &kind)?;
                        if seen.contains(&v) {
                            return Err(Diagnostic::error(
                                &e.loc,
                                format!("duplicate case label {v} in union '{}'", name.name),
                            ));
                        }
                        seen.push(v.clone());
                        labels.push(CaseLabel::Value(v));
                    }
                }
            }
            let base = self.resolve_type(scope, &c.ty, &mut definitions, false)?;
            let ty = self.array(scope, base, &c.declarator.dims)?;
            let d = &c.declarator.name;
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
        Ok(Union {
            discriminator: disc,
            cases: out,
            definitions,
        })
    }
}
