//! Syntax tree produced by the parser, before name resolution.

use crate::diagnostic::SourceLoc;
use crate::lexer::PragmaTok;

/// An identifier with its position (escaped identifiers arrive with `_` stripped).
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub loc: SourceLoc,
}

/// A scoped name as written: `A::B` or `::A::B`.
#[derive(Clone, Debug, PartialEq)]
pub struct ScopedNameRef {
    pub absolute: bool,
    pub parts: Vec<String>,
    pub loc: SourceLoc,
}

impl std::fmt::Display for ScopedNameRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.absolute {
            f.write_str("::")?;
        }
        f.write_str(&self.parts.join("::"))
    }
}

/// Built-in types spelled with keywords.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseType {
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
    Object,
    ValueBase,
}

/// A type as written.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeSpec {
    Base(BaseType, SourceLoc),
    String(Option<Box<Expr>>),
    WString(Option<Box<Expr>>),
    Fixed(Option<(Box<Expr>, Box<Expr>)>),
    Sequence(Box<TypeSpec>, Option<Box<Expr>>),
    Named(ScopedNameRef),
    /// A struct, union or enum defined in place (`typedef struct S {..} T;`).
    Constructed(Box<Def>),
}

/// Operators of constant expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Or,
    Xor,
    And,
    Shl,
    Shr,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

/// Unary operators of constant expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Plus,
    Not,
}

/// Literals.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Int(u128),
    Float(f64),
    Fixed(String),
    Char(u8),
    WChar(char),
    Str(String),
    WStr(String),
    Bool(bool),
}

/// A constant expression.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Lit(Literal),
    Name(ScopedNameRef),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
}

/// A constant expression with the position of its first token.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub loc: SourceLoc,
}

/// `name` or `name[3][4]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Declarator {
    pub name: Ident,
    pub dims: Vec<Expr>,
}

/// A struct/exception member line: one type, several declarators.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    pub ty: TypeSpec,
    pub declarators: Vec<Declarator>,
}

/// A union case label.
#[derive(Clone, Debug, PartialEq)]
pub enum CaseLabel {
    Value(Expr),
    Default(SourceLoc),
}

/// One union case.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub labels: Vec<CaseLabel>,
    pub ty: TypeSpec,
    pub declarator: Declarator,
}

/// Parameter direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamDir {
    In,
    Out,
    InOut,
}

/// An operation or initializer parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub dir: ParamDir,
    pub ty: TypeSpec,
    pub name: Ident,
}

/// Interface header flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct InterfaceFlags {
    pub is_abstract: bool,
    pub is_local: bool,
}

/// Valuetype header data.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ValueHeader {
    pub is_abstract: bool,
    pub is_custom: bool,
    pub is_event: bool,
    /// Where `truncatable` was written, if it was.
    pub truncatable: Option<SourceLoc>,
    pub bases: Vec<ScopedNameRef>,
    pub supports: Vec<ScopedNameRef>,
}

/// A definition (or interface export), in source order.
#[derive(Clone, Debug, PartialEq)]
pub enum Def {
    Module {
        name: Ident,
        defs: Vec<Def>,
    },
    Interface {
        name: Ident,
        flags: InterfaceFlags,
        bases: Vec<ScopedNameRef>,
        body: Vec<Def>,
    },
    InterfaceForward {
        name: Ident,
        flags: InterfaceFlags,
    },
    Struct {
        name: Ident,
        members: Vec<Member>,
    },
    StructForward {
        name: Ident,
    },
    Union {
        name: Ident,
        switch: TypeSpec,
        cases: Vec<Case>,
    },
    UnionForward {
        name: Ident,
    },
    Enum {
        name: Ident,
        enumerators: Vec<Ident>,
    },
    Exception {
        name: Ident,
        members: Vec<Member>,
    },
    Typedef {
        ty: TypeSpec,
        declarators: Vec<Declarator>,
    },
    Native {
        name: Ident,
    },
    Const {
        ty: TypeSpec,
        name: Ident,
        expr: Expr,
    },
    Operation {
        name: Ident,
        oneway: bool,
        ret: Option<TypeSpec>,
        params: Vec<Param>,
        raises: Vec<ScopedNameRef>,
        contexts: Vec<String>,
    },
    Attribute {
        readonly: bool,
        ty: TypeSpec,
        names: Vec<Ident>,
        get_raises: Vec<ScopedNameRef>,
        set_raises: Vec<ScopedNameRef>,
    },
    ValueType {
        name: Ident,
        header: ValueHeader,
        body: Vec<Def>,
    },
    ValueBox {
        name: Ident,
        ty: TypeSpec,
    },
    ValueForward {
        name: Ident,
        is_abstract: bool,
        is_event: bool,
    },
    StateMember {
        public: bool,
        ty: TypeSpec,
        declarators: Vec<Declarator>,
    },
    Initializer {
        name: Ident,
        params: Vec<Param>,
        raises: Vec<ScopedNameRef>,
    },
    TypeId {
        name: ScopedNameRef,
        id: String,
    },
    TypePrefix {
        name: ScopedNameRef,
        prefix: String,
    },
    /// `#pragma` or include-file boundary at this point.
    Pragma(PragmaTok, SourceLoc),
}
