//! The Extended Trader Constraint Language (ETCL), the default filter constraint grammar
//! of the Notification Service (`"EXTENDED_TCL"`, CosNotification 1.1 §2.4): a parser to
//! a [`Constraint`] and its evaluation against an event (a `StructuredEvent` or any other
//! value in an `Any`).
//!
//! ```text
//! $type_name == 'Alarm' and $.header.variable_header(priority) > 3
//! exist $.filterable_data(severity) and $severity in $.watched
//! 'disk' ~ $.filterable_data(message) or default $.state
//! ```
//!
//! Components walk the event: `.name` (struct member, or the active union member of that
//! name), `.N` (member by position), `[N]` (sequence or array element), `(name)` (the value
//! of the property so named in a sequence of name/value pairs), `.(N)`/`.('label')`/`.()`
//! (the union member of that label, or the default one), `._length`, `._d`, `._type_id`,
//! `._repos_id`. Run-time variables: `$domain_name`, `$type_name`, `$event_name` (the fixed
//! header's fields), `$header`, `$filterable_data`, `$remainder_of_body`, and any other
//! `$name`: the property `name` of the variable header, else of the filterable data (of a
//! structured event), else the member `name` of the event.
//!
//! A constraint that cannot be evaluated on an event (a component the event lacks, values
//! that do not compare) is false for that event, as the specification says; `exist` tells
//! whether a component is there. Parsing is bounded: an expression longer than
//! [`MAX_LENGTH`] bytes or nested deeper than [`MAX_DEPTH`] is refused, so a remote
//! `add_constraints` cannot exhaust the stack.

use corbina::dynany::{DynAny, DynAnyFactory};
use corbina::typecode::TcKind;
use corbina::Any;

/// The longest constraint accepted, in bytes.
pub const MAX_LENGTH: usize = 64 * 1024;
/// The deepest nesting of sub-expressions accepted.
pub const MAX_DEPTH: usize = 64;
/// The repository id of `CosNotification::StructuredEvent`.
pub const STRUCTURED_EVENT_ID: &str = "IDL:omg.org/CosNotification/StructuredEvent:1.0";

/// Why a constraint does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Longer than [`MAX_LENGTH`].
    #[error("constraint longer than {MAX_LENGTH} bytes")]
    TooLong,
    /// Nested deeper than [`MAX_DEPTH`].
    #[error("constraint nested deeper than {MAX_DEPTH}")]
    TooDeep,
    /// A character that starts no token.
    #[error("unexpected character {0:?} at byte {1}")]
    Char(char, usize),
    /// A string literal without its closing quote.
    #[error("unterminated string at byte {0}")]
    UnterminatedString(usize),
    /// A number that does not parse.
    #[error("bad number {0:?}")]
    Number(String),
    /// A token where the grammar wants another.
    #[error("expected {expected} at byte {at}")]
    Expected {
        /// What the grammar wanted.
        expected: &'static str,
        /// Where.
        at: usize,
    },
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Int(i128),
    Float(f64),
    Str(String),
    Dollar,
    /// `$name`, written without a blank between.
    Var(String),
    Dot,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Op(&'static str),
    Eof,
}

fn lex(src: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let tok = match c {
            b'$' => {
                i += 1;
                let name_start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                if i > name_start && !b[name_start].is_ascii_digit() {
                    Tok::Var(src[name_start..i].to_owned())
                } else {
                    i = name_start;
                    Tok::Dollar
                }
            }
            b'.' if !b.get(i + 1).is_some_and(u8::is_ascii_digit) || after_component(&out) => {
                i += 1;
                Tok::Dot
            }
            b'(' | b')' | b'[' | b']' => {
                i += 1;
                match c {
                    b'(' => Tok::LParen,
                    b')' => Tok::RParen,
                    b'[' => Tok::LBracket,
                    _ => Tok::RBracket,
                }
            }
            b'=' | b'!' | b'<' | b'>' => {
                let two = b.get(i + 1) == Some(&b'=');
                i += if two { 2 } else { 1 };
                Tok::Op(match (c, two) {
                    (b'=', true) => "==",
                    (b'!', true) => "!=",
                    (b'<', true) => "<=",
                    (b'>', true) => ">=",
                    (b'<', false) => "<",
                    (b'>', false) => ">",
                    _ => return Err(ParseError::Char(c as char, start)),
                })
            }
            b'+' | b'-' | b'*' | b'/' | b'~' => {
                i += 1;
                Tok::Op(match c {
                    b'+' => "+",
                    b'-' => "-",
                    b'*' => "*",
                    b'/' => "/",
                    _ => "~",
                })
            }
            b'\'' => {
                i += 1;
                let mut s = Vec::new();
                loop {
                    match b.get(i) {
                        None => return Err(ParseError::UnterminatedString(start)),
                        Some(b'\\') if matches!(b.get(i + 1), Some(b'\'' | b'\\')) => {
                            s.push(b[i + 1]);
                            i += 2;
                        }
                        Some(b'\'') => {
                            i += 1;
                            break;
                        }
                        Some(&x) => {
                            s.push(x);
                            i += 1;
                        }
                    }
                }
                // Slices of valid UTF-8 split at ASCII quotes and backslashes stay valid.
                Tok::Str(String::from_utf8(s).map_err(|_| ParseError::UnterminatedString(start))?)
            }
            // After a component's `.` only an integer (a member position) can follow.
            b'0'..=b'9' if matches!(out.last(), Some((Tok::Dot, _))) => {
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                let text = &src[start..i];
                Tok::Int(text.parse().map_err(|_| ParseError::Number(text.into()))?)
            }
            b'0'..=b'9' | b'.' => {
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                    i += 1;
                }
                if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
                    i += 1;
                    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
                        i += 1;
                    }
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                }
                let text = &src[start..i];
                if text.contains(['.', 'e', 'E']) {
                    Tok::Float(text.parse().map_err(|_| ParseError::Number(text.into()))?)
                } else {
                    Tok::Int(text.parse().map_err(|_| ParseError::Number(text.into()))?)
                }
            }
            c if c.is_ascii_alphabetic() || c == b'_' || c == b':' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b':')
                {
                    i += 1;
                }
                Tok::Ident(src[start..i].to_owned())
            }
            _ => {
                let ch = src[start..].chars().next().unwrap_or('\u{fffd}');
                return Err(ParseError::Char(ch, start));
            }
        };
        out.push((tok, start));
    }
    out.push((Tok::Eof, b.len()));
    Ok(out)
}

/// Whether a `.` followed by a digit is a positional component step (`$.1`), not the start
/// of a number: it is when it follows a component.
fn after_component(out: &[(Tok, usize)]) -> bool {
    matches!(
        out.last(),
        Some((
            Tok::Dollar | Tok::Var(_) | Tok::Ident(_) | Tok::RParen | Tok::RBracket | Tok::Int(_),
            _
        ))
    ) && out
        .iter()
        .any(|(t, _)| matches!(t, Tok::Dollar | Tok::Var(_)))
}

/// One step of a component.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Member(String),
    Position(u32),
    Index(u32),
    Assoc(String),
    /// A union member by label (`None`: the default member).
    UnionLabel(Option<Literal>),
    Length,
    Discriminator,
    TypeId,
    ReposId,
}

#[derive(Debug, Clone, PartialEq)]
enum Literal {
    Int(i128),
    Str(String),
}

/// Where a component starts.
#[derive(Debug, Clone, PartialEq)]
enum Root {
    /// `$`: the event.
    Event,
    /// `$name`: a run-time variable.
    Variable(String),
}

#[derive(Debug, Clone, PartialEq)]
struct Component {
    root: Root,
    steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Ident(String),
    Component(Component),
    Exist(Component),
    Default(Component),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    In(Box<Expr>, Component),
}

/// A parsed constraint.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    /// `None`: the empty constraint, true for every event.
    expr: Option<Expr>,
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos.min(self.toks.len() - 1)].0
    }

    fn at(&self) -> usize {
        self.toks[self.pos.min(self.toks.len() - 1)].1
    }

    fn next(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn expect(&mut self, t: Tok, expected: &'static str) -> Result<(), ParseError> {
        if *self.peek() == t {
            self.next();
            Ok(())
        } else {
            Err(ParseError::Expected {
                expected,
                at: self.at(),
            })
        }
    }

    fn keyword(&self, k: &str) -> bool {
        matches!(self.peek(), Tok::Ident(i) if i == k)
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ParseError::TooDeep);
        }
        Ok(())
    }

    fn or(&mut self) -> Result<Expr, ParseError> {
        self.enter()?;
        let mut e = self.and()?;
        while self.keyword("or") {
            self.next();
            e = Expr::Binary("or", Box::new(e), Box::new(self.and()?));
        }
        self.depth -= 1;
        Ok(e)
    }

    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.compare()?;
        while self.keyword("and") {
            self.next();
            e = Expr::Binary("and", Box::new(e), Box::new(self.compare()?));
        }
        Ok(e)
    }

    fn compare(&mut self) -> Result<Expr, ParseError> {
        let e = self.membership()?;
        if let Tok::Op(op @ ("==" | "!=" | "<" | "<=" | ">" | ">=")) = *self.peek() {
            self.next();
            return Ok(Expr::Binary(op, Box::new(e), Box::new(self.membership()?)));
        }
        Ok(e)
    }

    fn membership(&mut self) -> Result<Expr, ParseError> {
        let e = self.twiddle()?;
        if self.keyword("in") {
            self.next();
            let c = self.component()?;
            return Ok(Expr::In(Box::new(e), c));
        }
        Ok(e)
    }

    fn twiddle(&mut self) -> Result<Expr, ParseError> {
        let e = self.sum()?;
        if *self.peek() == Tok::Op("~") {
            self.next();
            return Ok(Expr::Binary("~", Box::new(e), Box::new(self.sum()?)));
        }
        Ok(e)
    }

    fn sum(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.term()?;
        while let Tok::Op(op @ ("+" | "-")) = *self.peek() {
            self.next();
            e = Expr::Binary(op, Box::new(e), Box::new(self.term()?));
        }
        Ok(e)
    }

    fn term(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.not()?;
        while let Tok::Op(op @ ("*" | "/")) = *self.peek() {
            self.next();
            e = Expr::Binary(op, Box::new(e), Box::new(self.not()?));
        }
        Ok(e)
    }

    fn not(&mut self) -> Result<Expr, ParseError> {
        if self.keyword("not") {
            self.next();
            self.enter()?;
            let e = Expr::Not(Box::new(self.not()?));
            self.depth -= 1;
            return Ok(e);
        }
        self.factor()
    }

    fn factor(&mut self) -> Result<Expr, ParseError> {
        let at = self.at();
        match self.next() {
            Tok::LParen => {
                let e = self.or()?;
                self.expect(Tok::RParen, "')'")?;
                Ok(e)
            }
            Tok::Ident(k) if k == "exist" => Ok(Expr::Exist(self.component()?)),
            Tok::Ident(k) if k == "default" => Ok(Expr::Default(self.component()?)),
            Tok::Ident(k) if k == "TRUE" || k == "true" => Ok(Expr::Bool(true)),
            Tok::Ident(k) if k == "FALSE" || k == "false" => Ok(Expr::Bool(false)),
            Tok::Ident(k) => Ok(Expr::Ident(k)),
            Tok::Int(n) => Ok(Expr::Int(n)),
            Tok::Float(f) => Ok(Expr::Float(f)),
            Tok::Str(s) => Ok(Expr::Str(s)),
            Tok::Op("-") => {
                self.enter()?;
                let e = Expr::Neg(Box::new(self.factor()?));
                self.depth -= 1;
                Ok(e)
            }
            Tok::Op("+") => self.factor(),
            Tok::Dollar | Tok::Var(_) => {
                self.pos -= 1;
                Ok(Expr::Component(self.component()?))
            }
            _ => Err(ParseError::Expected {
                expected: "a value, a component or '('",
                at,
            }),
        }
    }

    fn component(&mut self) -> Result<Component, ParseError> {
        let at = self.at();
        let root = match self.next() {
            Tok::Dollar => Root::Event,
            Tok::Var(name) => Root::Variable(name),
            _ => {
                return Err(ParseError::Expected {
                    expected: "'$'",
                    at,
                })
            }
        };
        let mut steps = Vec::new();
        loop {
            if steps.len() >= MAX_DEPTH {
                return Err(ParseError::TooDeep);
            }
            match self.peek().clone() {
                Tok::Dot => {
                    self.next();
                    let at = self.at();
                    steps.push(match self.next() {
                        Tok::Ident(n) => match n.as_str() {
                            "_length" => Step::Length,
                            "_d" => Step::Discriminator,
                            "_type_id" => Step::TypeId,
                            "_repos_id" => Step::ReposId,
                            _ => Step::Member(n),
                        },
                        Tok::Int(n) => Step::Position(
                            u32::try_from(n).map_err(|_| ParseError::Number(n.to_string()))?,
                        ),
                        Tok::LParen => {
                            let label = match self.next() {
                                Tok::RParen => None,
                                Tok::Int(n) => Some(Literal::Int(n)),
                                Tok::Op("-") => match self.next() {
                                    Tok::Int(n) => Some(Literal::Int(-n)),
                                    _ => {
                                        return Err(ParseError::Expected {
                                            expected: "an integer",
                                            at,
                                        })
                                    }
                                },
                                Tok::Op("+") => match self.next() {
                                    Tok::Int(n) => Some(Literal::Int(n)),
                                    _ => {
                                        return Err(ParseError::Expected {
                                            expected: "an integer",
                                            at,
                                        })
                                    }
                                },
                                Tok::Str(s) => Some(Literal::Str(s)),
                                _ => {
                                    return Err(ParseError::Expected {
                                        expected: "a union label",
                                        at,
                                    })
                                }
                            };
                            if label.is_some() {
                                self.expect(Tok::RParen, "')'")?;
                            }
                            Step::UnionLabel(label)
                        }
                        _ => {
                            return Err(ParseError::Expected {
                                expected: "a member",
                                at,
                            })
                        }
                    });
                }
                Tok::LBracket => {
                    self.next();
                    let at = self.at();
                    match self.next() {
                        Tok::Int(n) => steps.push(Step::Index(
                            u32::try_from(n).map_err(|_| ParseError::Number(n.to_string()))?,
                        )),
                        _ => {
                            return Err(ParseError::Expected {
                                expected: "an index",
                                at,
                            })
                        }
                    }
                    self.expect(Tok::RBracket, "']'")?;
                }
                Tok::LParen => {
                    self.next();
                    let at = self.at();
                    match self.next() {
                        Tok::Ident(n) => steps.push(Step::Assoc(n)),
                        _ => {
                            return Err(ParseError::Expected {
                                expected: "a property name",
                                at,
                            })
                        }
                    }
                    self.expect(Tok::RParen, "')'")?;
                }
                _ => break,
            }
        }
        Ok(Component { root, steps })
    }
}

impl Constraint {
    /// Parses `src` (the empty string, or only blanks, is the constraint true for all).
    pub fn parse(src: &str) -> Result<Constraint, ParseError> {
        if src.len() > MAX_LENGTH {
            return Err(ParseError::TooLong);
        }
        let toks = lex(src)?;
        if toks.len() == 1 {
            return Ok(Constraint { expr: None });
        }
        let mut p = Parser {
            toks,
            pos: 0,
            depth: 0,
        };
        let e = p.or()?;
        if *p.peek() != Tok::Eof {
            return Err(ParseError::Expected {
                expected: "the end",
                at: p.at(),
            });
        }
        Ok(Constraint { expr: Some(e) })
    }

    /// Whether `event` satisfies the constraint (false when it cannot be evaluated).
    pub fn matches(&self, event: &Any) -> bool {
        let Some(e) = &self.expr else { return true };
        let Ok(root) = DynAnyFactory::create_dyn_any(event) else {
            return false;
        };
        let ev = Event {
            structured: event.type_code().unalias().id().ok() == Some(STRUCTURED_EVENT_ID),
            root,
        };
        matches!(ev.eval(e, 0), Ok(Value::Bool(true)))
    }
}

/// A value during evaluation.
#[derive(Debug, Clone)]
enum Value {
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    /// An enumerator: its name, its ordinal, and its type (to place identifiers).
    Enum(String, u32, corbina::TypeCode),
    Ident(String),
    /// A constructed value (struct, sequence, ...): it compares with nothing.
    Data,
}

/// An evaluation that failed: the constraint is false.
#[derive(Debug)]
struct Fail;

type Eval<T> = Result<T, Fail>;

struct Event {
    structured: bool,
    root: DynAny,
}

/// `DynAny` of an `any` or an alias: the value inside.
fn unwrap(d: DynAny) -> Eval<DynAny> {
    let mut d = d;
    for _ in 0..MAX_DEPTH {
        if d.type_code().unalias().kind() != TcKind::Any {
            return Ok(d);
        }
        d = d.get_dyn_any().map_err(|_| Fail)?;
    }
    Err(Fail)
}

fn members(d: &DynAny) -> Eval<Vec<(String, DynAny)>> {
    Ok(d.get_members_as_dyn_any()
        .map_err(|_| Fail)?
        .into_iter()
        .map(|m| (m.id, m.value))
        .collect())
}

fn member(d: &DynAny, name: &str) -> Eval<DynAny> {
    let d = unwrap(d.clone())?;
    match d.type_code().unalias().kind() {
        TcKind::Struct | TcKind::Except => members(&d)?
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
            .ok_or(Fail),
        TcKind::Union => {
            let mut d = d;
            if d.member_name().map_err(|_| Fail)? != name {
                return Err(Fail);
            }
            d.member().map(|m| m.clone()).map_err(|_| Fail)
        }
        _ => Err(Fail),
    }
}

/// In a sequence of name/value structs (`Property`, `NameValuePair`), the value named `name`.
fn property(d: &DynAny, name: &str) -> Eval<DynAny> {
    let d = unwrap(d.clone())?;
    for e in d.get_elements_as_dyn_any().map_err(|_| Fail)? {
        let m = members(&unwrap(e)?)?;
        if let [(_, n), (_, v)] = m.as_slice() {
            if n.to_any().ok().and_then(|a| a.to_string_value()).as_deref() == Some(name) {
                return Ok(v.clone());
            }
        }
    }
    Err(Fail)
}

fn label_matches(label: &Literal, disc: &Value) -> bool {
    match (label, disc) {
        (Literal::Int(n), Value::Int(d)) => n == d,
        (Literal::Int(n), Value::Enum(_, o, _)) => *n == i128::from(*o),
        (Literal::Int(n), Value::Bool(b)) => *n == i128::from(*b),
        (Literal::Str(s), Value::Enum(e, _, _)) | (Literal::Str(s), Value::Str(e)) => s == e,
        _ => false,
    }
}

fn step(d: DynAny, s: &Step) -> Eval<DynAny> {
    let d = unwrap(d)?;
    let tc = d.type_code().unalias();
    match s {
        Step::Member(n) => member(&d, n),
        Step::Position(i) => match tc.kind() {
            TcKind::Struct | TcKind::Except => members(&d)?
                .into_iter()
                .nth(*i as usize)
                .map(|(_, v)| v)
                .ok_or(Fail),
            _ => Err(Fail),
        },
        Step::Index(i) => d
            .get_elements_as_dyn_any()
            .map_err(|_| Fail)?
            .into_iter()
            .nth(*i as usize)
            .ok_or(Fail),
        Step::Assoc(n) => property(&d, n),
        Step::UnionLabel(label) => {
            if tc.kind() != TcKind::Union {
                return Err(Fail);
            }
            let mut d = d;
            let active = d.member_name().map_err(|_| Fail)?;
            let ok = match label {
                None => is_default_member(&d, &active)?,
                Some(l) => label_matches(l, &leaf(d.get_discriminator().map_err(|_| Fail)?)?),
            };
            if !ok {
                return Err(Fail);
            }
            d.member().map(|m| m.clone()).map_err(|_| Fail)
        }
        // These end a component: their values are made by `component`.
        Step::Length | Step::Discriminator | Step::TypeId | Step::ReposId => Err(Fail),
    }
}

fn is_default_member(d: &DynAny, active: &str) -> Eval<bool> {
    let tc = d.type_code().unalias();
    let i = tc.default_index().map_err(|_| Fail)?;
    Ok(u32::try_from(i).is_ok_and(|i| tc.member_name(i).ok() == Some(active)))
}

/// The value of a leaf: a number, a string, a boolean, an enumerator; anything else stays
/// data.
fn leaf(d: DynAny) -> Eval<Value> {
    let d = unwrap(d)?;
    let tc = d.type_code().unalias();
    if tc.kind() == TcKind::Enum {
        let name = d.get_as_string().map_err(|_| Fail)?;
        let ord = d.get_as_ulong().map_err(|_| Fail)?;
        return Ok(Value::Enum(name, ord, tc));
    }
    let a = d.to_any().map_err(|_| Fail)?;
    Ok(match tc.kind() {
        TcKind::Boolean => Value::Bool(a.to_boolean().ok_or(Fail)?),
        TcKind::Short => Value::Int(a.to_short().ok_or(Fail)?.into()),
        TcKind::UShort => Value::Int(a.to_ushort().ok_or(Fail)?.into()),
        TcKind::Long => Value::Int(a.to_long().ok_or(Fail)?.into()),
        TcKind::ULong => Value::Int(a.to_ulong().ok_or(Fail)?.into()),
        TcKind::LongLong => Value::Int(a.to_longlong().ok_or(Fail)?.into()),
        TcKind::ULongLong => Value::Int(a.to_ulonglong().ok_or(Fail)?.into()),
        TcKind::Octet => Value::Int(a.to_octet().ok_or(Fail)?.into()),
        TcKind::Float => Value::Float(a.to_float().ok_or(Fail)?.into()),
        TcKind::Double => Value::Float(a.to_double().ok_or(Fail)?),
        TcKind::String => Value::Str(a.to_string_value().ok_or(Fail)?),
        TcKind::WString => Value::Str(a.to_wstring().ok_or(Fail)?),
        TcKind::Char => Value::Str(a.to_char().ok_or(Fail)?.to_string()),
        TcKind::WChar => Value::Str(a.to_wchar().ok_or(Fail)?.to_string()),
        _ => Value::Data,
    })
}

/// The ordinal of enumerator `name` of enum `tc`.
fn ordinal(tc: &corbina::TypeCode, name: &str) -> Eval<u32> {
    let n = tc.member_count().map_err(|_| Fail)?;
    (0..n)
        .find(|i| tc.member_name(*i).ok() == Some(name))
        .ok_or(Fail)
}

fn compare(a: &Value, b: &Value) -> Eval<std::cmp::Ordering> {
    use Value::*;
    let num = |v: &Value| match v {
        Int(i) => Some(*i as f64),
        Float(f) => Some(*f),
        _ => None,
    };
    match (a, b) {
        (Int(x), Int(y)) => Ok(x.cmp(y)),
        (Str(x), Str(y)) => Ok(x.cmp(y)),
        (Bool(x), Bool(y)) => Ok(x.cmp(y)),
        (Enum(_, x, tc), Ident(i)) => Ok(x.cmp(&ordinal(tc, i)?)),
        (Ident(i), Enum(_, y, tc)) => Ok(ordinal(tc, i)?.cmp(y)),
        (Enum(_, x, _), Enum(_, y, _)) => Ok(x.cmp(y)),
        (Enum(_, x, _), Int(y)) => Ok(i128::from(*x).cmp(y)),
        (Int(x), Enum(_, y, _)) => Ok(x.cmp(&i128::from(*y))),
        _ => match (num(a), num(b)) {
            (Some(x), Some(y)) => x.partial_cmp(&y).ok_or(Fail),
            _ => Err(Fail),
        },
    }
}

fn arith(op: &str, a: Value, b: Value) -> Eval<Value> {
    use Value::*;
    if let (Int(x), Int(y)) = (&a, &b) {
        return match op {
            "+" => x.checked_add(*y).map(Int).ok_or(Fail),
            "-" => x.checked_sub(*y).map(Int).ok_or(Fail),
            "*" => x.checked_mul(*y).map(Int).ok_or(Fail),
            _ if *y == 0 => Err(Fail),
            _ if x % y == 0 => Ok(Int(x / y)),
            _ => Ok(Float(*x as f64 / *y as f64)),
        };
    }
    let f = |v: &Value| match v {
        Int(i) => Ok(*i as f64),
        Float(f) => Ok(*f),
        _ => Err(Fail),
    };
    let (x, y) = (f(&a)?, f(&b)?);
    let r = match op {
        "+" => x + y,
        "-" => x - y,
        "*" => x * y,
        _ if y == 0.0 => return Err(Fail),
        _ => x / y,
    };
    Ok(Float(r))
}

impl Event {
    /// The start of a component: the event, or what a run-time variable names.
    fn root(&self, root: &Root) -> Eval<DynAny> {
        let name = match root {
            Root::Event => return Ok(self.root.clone()),
            Root::Variable(n) => n.as_str(),
        };
        if self.structured {
            let header = || member(&self.root, "header");
            let fixed = || member(&header()?, "fixed_header");
            match name {
                "domain_name" | "type_name" => {
                    return member(&member(&fixed()?, "event_type")?, name)
                }
                "event_name" => return member(&fixed()?, "event_name"),
                "header" | "filterable_data" | "remainder_of_body" => {
                    return member(&self.root, name)
                }
                "fixed_header" | "variable_header" => return member(&header()?, name),
                _ => {}
            }
            if let Ok(v) = property(&member(&header()?, "variable_header")?, name) {
                return Ok(v);
            }
            if let Ok(v) = property(&member(&self.root, "filterable_data")?, name) {
                return Ok(v);
            }
        }
        member(&self.root, name)
    }

    fn component(&self, c: &Component) -> Eval<Value> {
        let mut d = self.root(&c.root)?;
        for (i, s) in c.steps.iter().enumerate() {
            let last = i + 1 == c.steps.len();
            let terminal = match s {
                Step::Length => Some(
                    unwrap(d.clone())?
                        .get_length()
                        .map(|n| Value::Int(n.into()))
                        .or_else(|_| {
                            // Arrays have no length operation: their TypeCode tells.
                            d.type_code()
                                .unalias()
                                .length()
                                .map(|n| Value::Int(n.into()))
                        })
                        .map_err(|_| Fail)?,
                ),
                Step::Discriminator => Some(leaf(
                    unwrap(d.clone())?.get_discriminator().map_err(|_| Fail)?,
                )?),
                Step::TypeId => Some(Value::Str(
                    unwrap(d.clone())?
                        .type_code()
                        .unalias()
                        .name()
                        .map_err(|_| Fail)?
                        .to_owned(),
                )),
                Step::ReposId => Some(Value::Str(
                    unwrap(d.clone())?
                        .type_code()
                        .unalias()
                        .id()
                        .map_err(|_| Fail)?
                        .to_owned(),
                )),
                _ => None,
            };
            if let Some(v) = terminal {
                return if last { Ok(v) } else { Err(Fail) };
            }
            d = step(d, s)?;
        }
        leaf(d)
    }

    fn truth(&self, e: &Expr, depth: usize) -> Eval<bool> {
        match self.eval(e, depth)? {
            Value::Bool(b) => Ok(b),
            _ => Err(Fail),
        }
    }

    fn eval(&self, e: &Expr, depth: usize) -> Eval<Value> {
        // The parser bounds the depth; this is a second fence for hand-made trees.
        if depth > 4 * MAX_DEPTH {
            return Err(Fail);
        }
        let d = depth + 1;
        Ok(match e {
            Expr::Bool(b) => Value::Bool(*b),
            Expr::Int(i) => Value::Int(*i),
            Expr::Float(f) => Value::Float(*f),
            Expr::Str(s) => Value::Str(s.clone()),
            Expr::Ident(i) => Value::Ident(i.clone()),
            Expr::Component(c) => self.component(c)?,
            Expr::Exist(c) => Value::Bool(self.component(c).is_ok()),
            Expr::Default(c) => {
                let mut u = self.root(&c.root)?;
                for s in &c.steps {
                    u = step(u, s)?;
                }
                let u = unwrap(u)?;
                if u.type_code().unalias().kind() != TcKind::Union {
                    return Err(Fail);
                }
                let active = u.member_name().map_err(|_| Fail)?;
                Value::Bool(is_default_member(&u, &active)?)
            }
            Expr::Not(x) => Value::Bool(!self.truth(x, d)?),
            Expr::Neg(x) => match self.eval(x, d)? {
                Value::Int(i) => Value::Int(-i),
                Value::Float(f) => Value::Float(-f),
                _ => return Err(Fail),
            },
            Expr::Binary("and", a, b) => Value::Bool(self.truth(a, d)? && self.truth(b, d)?),
            // An operand that cannot be evaluated is false, so the other may still hold.
            Expr::Binary("or", a, b) => {
                Value::Bool(self.truth(a, d).unwrap_or(false) || self.truth(b, d)?)
            }
            Expr::Binary(op @ ("==" | "!=" | "<" | "<=" | ">" | ">="), a, b) => {
                let o = compare(&self.eval(a, d)?, &self.eval(b, d)?)?;
                Value::Bool(match *op {
                    "==" => o.is_eq(),
                    "!=" => o.is_ne(),
                    "<" => o.is_lt(),
                    "<=" => o.is_le(),
                    ">" => o.is_gt(),
                    _ => o.is_ge(),
                })
            }
            Expr::Binary("~", a, b) => match (self.eval(a, d)?, self.eval(b, d)?) {
                (Value::Str(x), Value::Str(y)) => Value::Bool(y.contains(&x)),
                _ => return Err(Fail),
            },
            Expr::Binary(op, a, b) => arith(op, self.eval(a, d)?, self.eval(b, d)?)?,
            Expr::In(x, c) => {
                let needle = self.eval(x, d)?;
                let mut seq = self.root(&c.root)?;
                for s in &c.steps {
                    seq = step(seq, s)?;
                }
                let elems = unwrap(seq)?.get_elements_as_dyn_any().map_err(|_| Fail)?;
                Value::Bool(elems.into_iter().any(|el| {
                    leaf(el).is_ok_and(|v| compare(&needle, &v).is_ok_and(|o| o.is_eq()))
                }))
            }
        })
    }
}

#[cfg(test)]
mod tests;
