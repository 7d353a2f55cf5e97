//! The resolved model handed to code generators.
//!
//! A [`Specification`] is a tree of [`Definition`]s in source order, mirroring
//! IDL scopes. Every type reference is resolved to a [`Type`]; named types
//! carry the absolute [`ScopedName`] of their definition, which
//! [`Specification::lookup`] turns back into the [`Definition`].

use crate::ast::ParamDir;
use crate::constexpr::ConstValue;
use crate::diagnostic::SourceLoc;
use std::collections::{HashMap, HashSet};
use std::fmt;

/// An absolute scoped name, e.g. `["CosNaming", "NamingContext"]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ScopedName(pub Vec<String>);

impl ScopedName {
    /// Builds a name from its components.
    pub fn new<S: Into<String>>(parts: impl IntoIterator<Item = S>) -> Self {
        ScopedName(parts.into_iter().map(Into::into).collect())
    }

    /// Parses `::A::B` or `A::B` (always taken as absolute).
    pub fn parse(s: &str) -> Self {
        ScopedName(
            s.split("::")
                .filter(|p| !p.is_empty())
                .map(String::from)
                .collect(),
        )
    }

    /// The last component (the identifier).
    pub fn name(&self) -> &str {
        self.0.last().map(String::as_str).unwrap_or("")
    }

    /// The enclosing scope.
    pub fn parent(&self) -> ScopedName {
        ScopedName(self.0[..self.0.len().saturating_sub(1)].to_vec())
    }

    /// A name inside this scope.
    pub fn child(&self, name: &str) -> ScopedName {
        let mut v = self.0.clone();
        v.push(name.to_string());
        ScopedName(v)
    }
}

impl fmt::Display for ScopedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.0 {
            write!(f, "::{p}")?;
        }
        Ok(())
    }
}

/// What a [`Type::Named`] refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NamedKind {
    Interface,
    Struct,
    Union,
    Enum,
    Alias,
    Native,
    ValueType,
    ValueBox,
}

/// A resolved IDL type.
#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    Short,
    UShort,
    Long,
    ULong,
    LongLong,
    ULongLong,
    Float,
    Double,
    LongDouble,
    Boolean,
    Char,
    WChar,
    Octet,
    Any,
    /// `Object` (any CORBA object reference).
    Object,
    ValueBase,
    /// `CORBA::TypeCode` (built in; no IDL definition needed).
    TypeCode,
    String {
        bound: Option<u32>,
    },
    WString {
        bound: Option<u32>,
    },
    Fixed {
        digits: u16,
        scale: u16,
    },
    Sequence {
        elem: Box<Type>,
        bound: Option<u32>,
    },
    /// Array from a declarator such as `long a[2][3]`: `dims == [2, 3]`.
    Array {
        elem: Box<Type>,
        dims: Vec<u32>,
    },
    /// A user-defined type.
    Named {
        name: ScopedName,
        kind: NamedKind,
    },
}

/// A named definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Definition {
    /// The identifier (escape underscore removed).
    pub name: String,
    /// Absolute scoped name.
    pub scoped_name: ScopedName,
    /// Repository id, e.g. `IDL:omg.org/CosNaming/NamingContext:1.0`.
    pub repository_id: String,
    /// Where the identifier appears.
    pub loc: SourceLoc,
    /// Defined in the main file (false: in an included file).
    pub from_main_file: bool,
    /// What it is.
    pub kind: DefinitionKind,
}

/// The kinds of definition.
#[derive(Clone, Debug, PartialEq)]
pub enum DefinitionKind {
    /// One opening of a module; a reopened module appears once per opening.
    Module(Module),
    Interface(Interface),
    InterfaceForward(InterfaceForward),
    Struct(Struct),
    StructForward,
    Union(Union),
    UnionForward,
    Enum(Enum),
    Exception(Exception),
    /// `typedef`: one per declarator.
    Alias(Alias),
    Const(Const),
    Native,
    ValueType(ValueType),
    ValueBox(ValueBox),
    ValueForward(ValueForward),
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Module {
    pub definitions: Vec<Definition>,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Interface {
    pub is_abstract: bool,
    pub is_local: bool,
    /// Direct bases, resolved.
    pub bases: Vec<ScopedName>,
    /// Nested types, constants and exceptions.
    pub definitions: Vec<Definition>,
    pub operations: Vec<Operation>,
    pub attributes: Vec<Attribute>,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct InterfaceForward {
    pub is_abstract: bool,
    pub is_local: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Operation {
    pub name: String,
    pub loc: SourceLoc,
    pub oneway: bool,
    /// `None` for `void`.
    pub return_type: Option<Type>,
    pub params: Vec<Parameter>,
    /// Exceptions, resolved.
    pub raises: Vec<ScopedName>,
    pub contexts: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    pub name: String,
    pub direction: ParamDir,
    pub ty: Type,
}

/// One attribute (`attribute long a, b;` yields two).
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    pub name: String,
    pub loc: SourceLoc,
    pub readonly: bool,
    pub ty: Type,
    pub get_raises: Vec<ScopedName>,
    pub set_raises: Vec<ScopedName>,
}

/// A struct, exception or union member.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    pub name: String,
    pub ty: Type,
    pub loc: SourceLoc,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Struct {
    pub members: Vec<Member>,
    /// Types defined in place inside member declarations (scoped in the struct).
    pub definitions: Vec<Definition>,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Exception {
    pub members: Vec<Member>,
    pub definitions: Vec<Definition>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CaseLabel {
    Value(ConstValue),
    Default,
}

#[derive(Clone, Debug, PartialEq)]
pub struct UnionCase {
    pub labels: Vec<CaseLabel>,
    pub member: Member,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Union {
    /// As written (may be an alias; see [`Specification::resolve_alias`]).
    pub discriminator: Type,
    pub cases: Vec<UnionCase>,
    pub definitions: Vec<Definition>,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Enum {
    pub enumerators: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Alias {
    pub ty: Type,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Const {
    pub ty: Type,
    pub value: ConstValue,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StateMember {
    pub name: String,
    pub public: bool,
    pub ty: Type,
    pub loc: SourceLoc,
}

/// A valuetype `factory` (initializer).
#[derive(Clone, Debug, PartialEq)]
pub struct Initializer {
    pub name: String,
    pub loc: SourceLoc,
    pub params: Vec<Parameter>,
    pub raises: Vec<ScopedName>,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct ValueType {
    pub is_abstract: bool,
    pub is_custom: bool,
    /// The first base is `truncatable`.
    pub is_truncatable: bool,
    /// Declared with `eventtype`.
    pub is_event: bool,
    pub bases: Vec<ScopedName>,
    pub supports: Vec<ScopedName>,
    pub state_members: Vec<StateMember>,
    pub initializers: Vec<Initializer>,
    pub operations: Vec<Operation>,
    pub attributes: Vec<Attribute>,
    pub definitions: Vec<Definition>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ValueBox {
    pub ty: Type,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct ValueForward {
    pub is_abstract: bool,
}

impl DefinitionKind {
    /// Definitions nested in this one (modules, interfaces, valuetypes and
    /// in-place types of structs, unions and exceptions).
    pub fn children(&self) -> &[Definition] {
        match self {
            DefinitionKind::Module(m) => &m.definitions,
            DefinitionKind::Interface(i) => &i.definitions,
            DefinitionKind::Struct(s) => &s.definitions,
            DefinitionKind::Union(u) => &u.definitions,
            DefinitionKind::Exception(e) => &e.definitions,
            DefinitionKind::ValueType(v) => &v.definitions,
            _ => &[],
        }
    }

    /// True for forward declarations.
    pub fn is_forward(&self) -> bool {
        matches!(
            self,
            DefinitionKind::InterfaceForward(_)
                | DefinitionKind::StructForward
                | DefinitionKind::UnionForward
                | DefinitionKind::ValueForward(_)
        )
    }
}

/// An operation or attribute together with the interface declaring it.
#[derive(Clone, Copy, Debug)]
pub struct Inherited<'a, T> {
    /// Interface (or valuetype) that declares it.
    pub declared_in: &'a Definition,
    pub item: &'a T,
}

/// A whole resolved IDL specification.
#[derive(Clone, Debug, Default)]
pub struct Specification {
    /// Top-level definitions in source order (included files' definitions too;
    /// see [`Definition::from_main_file`]).
    pub definitions: Vec<Definition>,
    index: HashMap<ScopedName, Vec<usize>>,
}

impl Specification {
    pub(crate) fn new(definitions: Vec<Definition>) -> Self {
        let mut spec = Specification {
            definitions,
            index: HashMap::new(),
        };
        let mut path = Vec::new();
        index_defs(&spec.definitions, &mut path, &mut spec.index);
        spec
    }

    /// The definition named `name`: the complete one for forward-declared
    /// types (the forward declaration if never completed), the first opening
    /// for modules.
    pub fn lookup(&self, name: &ScopedName) -> Option<&Definition> {
        let path = self.index.get(name)?;
        let mut defs: &[Definition] = &self.definitions;
        let mut found = None;
        for &i in path {
            let d = defs.get(i)?;
            found = Some(d);
            defs = d.kind.children();
        }
        found
    }

    /// Visits every definition, depth first, in source order.
    pub fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a Definition)) {
        fn go<'a>(defs: &'a [Definition], f: &mut dyn FnMut(&'a Definition)) {
            for d in defs {
                f(d);
                go(d.kind.children(), f);
            }
        }
        go(&self.definitions, f);
    }

    /// Follows aliases (typedefs) until a non-alias type.
    pub fn resolve_alias<'a>(&'a self, mut ty: &'a Type) -> &'a Type {
        for _ in 0..1000 {
            let Type::Named {
                name,
                kind: NamedKind::Alias,
            } = ty
            else {
                return ty;
            };
            match self.lookup(name).map(|d| &d.kind) {
                Some(DefinitionKind::Alias(a)) => ty = &a.ty,
                _ => return ty,
            }
        }
        ty
    }

    /// All base interfaces (or valuetypes and supported interfaces) of
    /// `def`, each once, bases before the interfaces deriving from them, in
    /// declaration order; `def` itself is not included.
    pub fn all_bases<'a>(&'a self, def: &'a Definition) -> Vec<&'a Definition> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        self.collect_bases(def, &mut seen, &mut out);
        out.retain(|d| d.scoped_name != def.scoped_name);
        out
    }

    fn collect_bases<'a>(
        &'a self,
        def: &'a Definition,
        seen: &mut HashSet<&'a ScopedName>,
        out: &mut Vec<&'a Definition>,
    ) {
        if !seen.insert(&def.scoped_name) {
            return;
        }
        let bases: Vec<&ScopedName> = match &def.kind {
            DefinitionKind::Interface(i) => i.bases.iter().collect(),
            DefinitionKind::ValueType(v) => v.bases.iter().chain(&v.supports).collect(),
            _ => Vec::new(),
        };
        for b in bases {
            if let Some(bd) = self.lookup(b) {
                self.collect_bases(bd, seen, out);
            }
        }
        out.push(def);
    }

    /// Operations of `def` including inherited ones: bases first (each base
    /// once, diamonds included), then its own, in declaration order.
    pub fn all_operations<'a>(&'a self, def: &'a Definition) -> Vec<Inherited<'a, Operation>> {
        let mut v = Vec::new();
        for d in self.all_bases(def).into_iter().chain([def]) {
            let ops = match &d.kind {
                DefinitionKind::Interface(i) => &i.operations,
                DefinitionKind::ValueType(v) => &v.operations,
                _ => continue,
            };
            v.extend(ops.iter().map(|item| Inherited {
                declared_in: d,
                item,
            }));
        }
        v
    }

    /// Attributes of `def` including inherited ones, ordered like [`Self::all_operations`].
    pub fn all_attributes<'a>(&'a self, def: &'a Definition) -> Vec<Inherited<'a, Attribute>> {
        let mut v = Vec::new();
        for d in self.all_bases(def).into_iter().chain([def]) {
            let attrs = match &d.kind {
                DefinitionKind::Interface(i) => &i.attributes,
                DefinitionKind::ValueType(v) => &v.attributes,
                _ => continue,
            };
            v.extend(attrs.iter().map(|item| Inherited {
                declared_in: d,
                item,
            }));
        }
        v
    }
}

fn index_defs(
    defs: &[Definition],
    path: &mut Vec<usize>,
    index: &mut HashMap<ScopedName, Vec<usize>>,
) {
    for (i, d) in defs.iter().enumerate() {
        path.push(i);
        let replace = match index.get(&d.scoped_name) {
            None => true,
            // A full definition wins over a forward declaration; the first module opening wins.
            Some(_) => !d.kind.is_forward() && !matches!(d.kind, DefinitionKind::Module(_)),
        };
        if replace {
            index.insert(d.scoped_name.clone(), path.clone());
        }
        index_defs(d.kind.children(), path, index);
        path.pop();
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bound = |f: &mut fmt::Formatter<'_>, b: &Option<u32>| match b {
            Some(b) => write!(f, "<{b}>"),
            None => Ok(()),
        };
        match self {
            Type::Short => f.write_str("short"),
            Type::UShort => f.write_str("unsigned short"),
            Type::Long => f.write_str("long"),
            Type::ULong => f.write_str("unsigned long"),
            Type::LongLong => f.write_str("long long"),
            Type::ULongLong => f.write_str("unsigned long long"),
            Type::Float => f.write_str("float"),
            Type::Double => f.write_str("double"),
            Type::LongDouble => f.write_str("long double"),
            Type::Boolean => f.write_str("boolean"),
            Type::Char => f.write_str("char"),
            Type::WChar => f.write_str("wchar"),
            Type::Octet => f.write_str("octet"),
            Type::Any => f.write_str("any"),
            Type::Object => f.write_str("Object"),
            Type::ValueBase => f.write_str("ValueBase"),
            Type::TypeCode => f.write_str("::CORBA::TypeCode"),
            Type::String { bound: b } => {
                f.write_str("string")?;
                bound(f, b)
            }
            Type::WString { bound: b } => {
                f.write_str("wstring")?;
                bound(f, b)
            }
            Type::Fixed { digits, scale } => write!(f, "fixed<{digits},{scale}>"),
            Type::Sequence {
                elem,
                bound: Some(b),
            } => write!(f, "sequence<{elem},{b}>"),
            Type::Sequence { elem, bound: None } => write!(f, "sequence<{elem}>"),
            Type::Array { elem, dims } => {
                write!(f, "{elem}")?;
                dims.iter().try_for_each(|d| write!(f, "[{d}]"))
            }
            Type::Named { name, .. } => write!(f, "{name}"),
        }
    }
}
