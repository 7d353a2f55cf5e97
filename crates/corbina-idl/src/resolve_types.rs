//! Resolver part for types, constants and struct members.

use super::{Resolver, Scope, Sym};
use crate::ast::{self, BaseType, Expr, ScopedNameRef, TypeSpec};
use crate::constexpr::{evaluate, ConstKind, ConstValue};
use crate::diagnostic::{Diagnostic, PResult, SourceLoc};
use crate::model::*;

impl Resolver<'_> {
    /// Resolves a type. In-place struct/union/enum definitions are appended to `sink`.
    /// `in_sequence` is true for sequence elements, where incomplete types are allowed.
    pub(super) fn resolve_type(
        &mut self,
        scope: &mut Scope,
        ts: &TypeSpec,
        sink: &mut Vec<Definition>,
        in_sequence: bool,
    ) -> PResult<Type> {
        Ok(match ts {
            TypeSpec::Base(b, _) => match b {
                BaseType::Short => Type::Short,
                BaseType::UShort => Type::UShort,
                BaseType::Long => Type::Long,
                BaseType::ULong => Type::ULong,
                BaseType::LongLong => Type::LongLong,
                BaseType::ULongLong => Type::ULongLong,
                BaseType::Float => Type::Float,
                BaseType::Double => Type::Double,
                BaseType::LongDouble => Type::LongDouble,
                BaseType::Boolean => Type::Boolean,
                BaseType::Char => Type::Char,
                BaseType::WChar => Type::WChar,
                BaseType::Octet => Type::Octet,
                BaseType::Any => Type::Any,
                BaseType::Object => Type::Object,
                BaseType::ValueBase => Type::ValueBase,
            },
            TypeSpec::String(b) => Type::String {
                bound: self.bound(scope, b.as_deref(), "string bound")?,
            },
            TypeSpec::WString(b) => Type::WString {
                bound: self.bound(scope, b.as_deref(), "wstring bound")?,
            },
            TypeSpec::Fixed(None) => {
                return Err(Diagnostic::error(
                    &self.any_loc(ts),
                    "'fixed' without digits and scale is only allowed in constant declarations",
                ))
            }
            TypeSpec::Fixed(Some((d, s))) => {
                let digits = self.positive(scope, d, "fixed digits")?;
                let kind = ConstKind::int("unsigned short");
                let ConstValue::Integer(scale) = self.eval(scope, s, &kind)? else {
                    unreachable!()
                };
                if digits > 31 || scale as u32 > digits {
                    return Err(Diagnostic::error(
                        &d.loc,
                        format!("invalid fixed<{digits},{scale}>: digits must be 1 to 31 and scale at most digits"),
                    ));
                }
                Type::Fixed {
                    digits: digits as u16,
                    scale: scale as u16,
                }
            }
            TypeSpec::Sequence(elem_ts, b) => {
                let elem = self.resolve_type(scope, elem_ts, sink, true)?;
                self.not_native(&elem, "a sequence element", &self.any_loc(elem_ts))?;
                Type::Sequence {
                    elem: Box::new(elem),
                    bound: self.bound(scope, b.as_deref(), "sequence bound")?,
                }
            }
            TypeSpec::Named(n) => self.named_type(scope, n, in_sequence)?,
            TypeSpec::Constructed(def) => {
                self.def(scope, def, sink, None)?;
                let d = sink.last().expect("a constructed type defines something");
                let kind = match d.kind {
                    DefinitionKind::Struct(_) => NamedKind::Struct,
                    DefinitionKind::Union(_) => NamedKind::Union,
                    DefinitionKind::Enum(_) => NamedKind::Enum,
                    _ => {
                        return Err(Diagnostic::error(
                            &d.loc,
                            "forward declaration cannot be used as a type here",
                        ));
                    }
                };
                Type::Named {
                    name: d.scoped_name.clone(),
                    kind,
                }
            }
        })
    }

    fn any_loc(&self, ts: &TypeSpec) -> SourceLoc {
        match ts {
            TypeSpec::Base(_, l) => l.clone(),
            TypeSpec::Named(n) => n.loc.clone(),
            _ => SourceLoc::new("", 0, 0),
        }
    }

    fn named_type(&self, scope: &Scope, n: &ScopedNameRef, in_sequence: bool) -> PResult<Type> {
        let full = match self.lookup(scope, n) {
            Ok(f) => f,
            // CORBA::TypeCode is a pseudo-object with no IDL definition.
            Err(_)
                if n.parts.last().map(String::as_str) == Some("TypeCode")
                    && (n.parts.len() == 2 && n.parts[0] == "CORBA"
                        || n.parts.len() == 1
                            && !n.absolute
                            && scope.first().map(String::as_str) == Some("CORBA")) =>
            {
                return Ok(Type::TypeCode)
            }
            Err(e) => return Err(e),
        };
        let sym = self.sym(&full);
        let incomplete = |what: &str| {
            let msg = if scope.starts_with(&full.0) {
                format!("{what} '{n}' is recursive; it may contain itself only through a sequence")
            } else {
                format!("{what} '{n}' is incomplete (only forward-declared); it may only be used in a sequence")
            };
            Diagnostic::error(&n.loc, msg)
        };
        let kind = match &sym.kind {
            Sym::Interface { .. } => NamedKind::Interface,
            Sym::Struct { complete } => {
                if !complete && !in_sequence {
                    return Err(incomplete("struct"));
                }
                NamedKind::Struct
            }
            Sym::Union { complete } => {
                if !complete && !in_sequence {
                    return Err(incomplete("union"));
                }
                NamedKind::Union
            }
            Sym::Enum => NamedKind::Enum,
            Sym::Alias(t) => {
                if !in_sequence {
                    if let Some(inc) = self.incomplete_in(t) {
                        return Err(Diagnostic::error(
                            &n.loc,
                            format!("'{n}' names incomplete type '{inc}'; it may only be used in a sequence"),
                        ));
                    }
                }
                NamedKind::Alias
            }
            Sym::Native => NamedKind::Native,
            Sym::Value { .. } => NamedKind::ValueType,
            Sym::ValueBox => NamedKind::ValueBox,
            Sym::Exception => {
                return Err(Diagnostic::error(
                    &n.loc,
                    format!("'{n}' is an exception, not a type"),
                ));
            }
            other => {
                return Err(Diagnostic::error(
                    &n.loc,
                    format!("'{n}' is a {}, not a type", other.describe()),
                ));
            }
        };
        Ok(Type::Named { name: full, kind })
    }

    /// An incomplete struct/union reached through aliases and arrays (not sequences).
    fn incomplete_in(&self, t: &Type) -> Option<ScopedName> {
        let mut t = t;
        for _ in 0..10_000 {
            match t {
                Type::Array { elem, .. } => t = elem,
                Type::Named { name, .. } => match &self.symbols.get(name)?.kind {
                    Sym::Alias(a) => t = a,
                    Sym::Struct { complete: false } | Sym::Union { complete: false } => {
                        return Some(name.clone())
                    }
                    _ => return None,
                },
                _ => return None,
            }
        }
        None
    }

    /// The local interface that makes `t` a local type (CORBA 3.0 §3.8.7: a local interface,
    /// or a struct, union, exception, sequence, array or typedef containing one), if any.
    pub(super) fn local_in(&self, t: &Type) -> Option<ScopedName> {
        let mut t = t;
        for _ in 0..10_000 {
            match t {
                Type::Array { elem, .. } | Type::Sequence { elem, .. } => t = elem,
                // A pseudo-object of the DII, not a type IDL marshals: the OMG's
                // CosTSPortability passes it to an unconstrained interface.
                Type::Named { name, .. } if name.0 == ["CORBA", "Environment"] => return None,
                Type::Named { name, .. } => {
                    if self.local_types.contains(name) {
                        return Some(name.clone());
                    }
                    match &self.symbols.get(name)?.kind {
                        Sym::Alias(a) => t = a,
                        Sym::Interface { flags, .. } if flags.is_local => {
                            return Some(name.clone())
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
        None
    }

    /// The native type `t` names (through typedefs), if any.
    pub(super) fn native_in(&self, t: &Type) -> Option<ScopedName> {
        match self.unalias(t) {
            Type::Named {
                name,
                kind: NamedKind::Native,
            } => Some(name),
            _ => None,
        }
    }

    /// CORBA 3.0 §3.11.5: "A native type may be used only to define operation parameters,
    /// results and exceptions" (and typedefs naming it); not as data.
    pub(super) fn not_native(&self, t: &Type, what: &str, loc: &SourceLoc) -> PResult<()> {
        match self.native_in(t) {
            None => Ok(()),
            Some(n) => Err(Diagnostic::error(
                loc,
                format!("native type '{n}' cannot be {what}; a native type is only for operation parameters and results"),
            )),
        }
    }

    /// Records `full` as a local type when one of its member types is.
    pub(super) fn mark_local<'t>(
        &mut self,
        full: &ScopedName,
        mut tys: impl Iterator<Item = &'t Type>,
    ) {
        if tys.any(|t| self.local_in(t).is_some()) {
            self.local_types.insert(full.clone());
        }
    }

    /// Follows aliases in the symbol table.
    pub(super) fn unalias(&self, t: &Type) -> Type {
        let mut t = t.clone();
        for _ in 0..10_000 {
            let Type::Named {
                name,
                kind: NamedKind::Alias,
            } = &t
            else {
                break;
            };
            match self.symbols.get(name).map(|s| &s.kind) {
                Some(Sym::Alias(a)) => t = a.clone(),
                _ => break,
            }
        }
        t
    }

    pub(super) fn array(&mut self, scope: &Scope, elem: Type, dims: &[Expr]) -> PResult<Type> {
        if dims.is_empty() {
            return Ok(elem);
        }
        self.not_native(&elem, "an array element", &dims[0].loc)?;
        let dims = dims
            .iter()
            .map(|d| self.positive(scope, d, "array dimension"))
            .collect::<PResult<Vec<_>>>()?;
        Ok(Type::Array {
            elem: Box::new(elem),
            dims,
        })
    }

    fn bound(&mut self, scope: &Scope, e: Option<&Expr>, what: &str) -> PResult<Option<u32>> {
        e.map(|e| self.positive(scope, e, what)).transpose()
    }

    /// A positive `unsigned long` constant (bounds, dimensions).
    pub(super) fn positive(&mut self, scope: &Scope, e: &Expr, what: &str) -> PResult<u32> {
        let ConstValue::Integer(v) = self.eval(scope, e, &ConstKind::int("unsigned long"))? else {
            unreachable!()
        };
        if v == 0 {
            return Err(Diagnostic::error(
                &e.loc,
                format!("{what} must be positive"),
            ));
        }
        Ok(v as u32)
    }

    /// Evaluates a constant expression, resolving names to constants and enumerators.
    pub(super) fn eval(&self, scope: &Scope, e: &Expr, kind: &ConstKind) -> PResult<ConstValue> {
        let names = |n: &ScopedNameRef| -> PResult<ConstValue> {
            let full = self.lookup(scope, n)?;
            match &self.sym(&full).kind {
                Sym::Const(v) | Sym::Enumerator(v) => Ok(v.clone()),
                other => Err(Diagnostic::error(
                    &n.loc,
                    format!("'{n}' is a {}, not a constant", other.describe()),
                )),
            }
        };
        evaluate(e, kind, &names)
    }

    /// The evaluation kind for a constant (or discriminator) of type `t`.
    pub(super) fn const_kind(&self, t: &Type, loc: &SourceLoc) -> PResult<ConstKind> {
        Ok(match self.unalias(t) {
            Type::Short => ConstKind::int("short"),
            Type::UShort => ConstKind::int("unsigned short"),
            Type::Long => ConstKind::int("long"),
            Type::ULong => ConstKind::int("unsigned long"),
            Type::LongLong => ConstKind::int("long long"),
            Type::ULongLong => ConstKind::int("unsigned long long"),
            Type::Octet => ConstKind::Octet,
            Type::Float => ConstKind::Float {
                max: f32::MAX as f64,
                name: "float",
            },
            Type::Double => ConstKind::Float {
                max: f64::MAX,
                name: "double",
            },
            Type::LongDouble => ConstKind::Float {
                max: f64::MAX,
                name: "long double",
            },
            Type::Char => ConstKind::Char,
            Type::WChar => ConstKind::WChar,
            Type::Boolean => ConstKind::Boolean,
            Type::String { bound } => ConstKind::String(bound),
            Type::WString { bound } => ConstKind::WString(bound),
            Type::Fixed { .. } => ConstKind::Fixed,
            Type::Named {
                name,
                kind: NamedKind::Enum,
            } => ConstKind::Enum(name),
            other => {
                return Err(Diagnostic::error(
                    loc,
                    format!("invalid type '{other}' for a constant"),
                ))
            }
        })
    }

    /// Struct/exception members; returns them and in-place type definitions.
    pub(super) fn members(
        &mut self,
        scope: &mut Scope,
        members: &[ast::Member],
    ) -> PResult<(Vec<Member>, Vec<Definition>)> {
        let mut nested = Vec::new();
        let mut out = Vec::new();
        for m in members {
            let base = self.resolve_type(scope, &m.ty, &mut nested, false)?;
            for d in &m.declarators {
                let ty = self.array(scope, base.clone(), &d.dims)?;
                let what = format!("the type of member '{}'", d.name.name);
                self.not_native(&ty, &what, &d.name.loc)?;
                self.declare(scope, &d.name, Sym::Member)?;
                out.push(Member {
                    name: d.name.name.clone(),
                    ty,
                    loc: d.name.loc.clone(),
                });
            }
        }
        Ok((out, nested))
    }

    /// Resolves `names` that must all be exceptions.
    pub(super) fn exceptions(
        &self,
        scope: &Scope,
        names: &[ScopedNameRef],
    ) -> PResult<Vec<ScopedName>> {
        names
            .iter()
            .map(|n| {
                let full = self.lookup(scope, n)?;
                match self.sym(&full).kind {
                    Sym::Exception => Ok(full),
                    ref other => Err(Diagnostic::error(
                        &n.loc,
                        format!("'{n}' is a {}, not an exception", other.describe()),
                    )),
                }
            })
            .collect()
    }
}
