//! Constant values and constant-expression evaluation with range checks.

use crate::ast::{BinOp, Expr, ExprKind, Literal, ScopedNameRef, UnOp};
use crate::diagnostic::{Diagnostic, PResult, SourceLoc};
use crate::model::ScopedName;
use std::fmt;

/// Most digits a `fixed` value may have.
pub const FIXED_MAX_DIGITS: u32 = 31;

/// A fixed-point decimal: `value * 10^-scale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedValue {
    /// The unscaled digits as an integer.
    pub value: i128,
    /// Digits after the decimal point.
    pub scale: u16,
}

impl FixedValue {
    /// Parses literal digits like `"12.50"`.
    pub fn parse(s: &str) -> Option<FixedValue> {
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        let digits = format!("{int}{frac}");
        let value = if digits.is_empty() {
            0
        } else {
            digits.parse().ok()?
        };
        Some(
            FixedValue {
                value,
                scale: frac.len() as u16,
            }
            .normalized(),
        )
    }

    /// Number of significant digits (at least `scale`, at least 1).
    pub fn digits(&self) -> u16 {
        let n = if self.value == 0 {
            1
        } else {
            self.value.unsigned_abs().to_string().len() as u16
        };
        n.max(self.scale)
    }

    fn normalized(mut self) -> Self {
        while self.scale > 0 && self.value % 10 == 0 {
            self.value /= 10;
            self.scale -= 1;
        }
        self
    }

    fn rescale(self, scale: u16) -> Option<i128> {
        self.value
            .checked_mul(10i128.checked_pow((scale - self.scale) as u32)?)
    }
}

impl fmt::Display for FixedValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.value.unsigned_abs().to_string();
        let sign = if self.value < 0 { "-" } else { "" };
        let scale = self.scale as usize;
        if scale == 0 {
            return write!(f, "{sign}{s}");
        }
        let s = format!("{s:0>width$}", width = scale + 1);
        let (a, b) = s.split_at(s.len() - scale);
        write!(f, "{sign}{a}.{b}")
    }
}

/// The value of a constant (or union label) after evaluation.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstValue {
    /// Any integer type; the declared type tells which.
    Integer(i128),
    /// `float`, `double` or `long double`.
    Float(f64),
    Fixed(FixedValue),
    Char(u8),
    WChar(char),
    String(String),
    WString(String),
    Boolean(bool),
    /// An enumerator: the enum's scoped name, the enumerator and its index.
    Enum {
        enum_name: ScopedName,
        enumerator: String,
        index: u32,
    },
    Octet(u8),
}

impl fmt::Display for ConstValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConstValue::Integer(v) => write!(f, "{v}"),
            ConstValue::Float(v) => write!(f, "{v:?}"),
            ConstValue::Fixed(v) => write!(f, "{v}d"),
            ConstValue::Char(c) => write!(f, "'{}'", (*c as char).escape_default()),
            ConstValue::WChar(c) => write!(f, "L'{}'", c.escape_default()),
            ConstValue::String(s) => write!(f, "\"{}\"", s.escape_default()),
            ConstValue::WString(s) => write!(f, "L\"{}\"", s.escape_default()),
            ConstValue::Boolean(b) => f.write_str(if *b { "TRUE" } else { "FALSE" }),
            ConstValue::Enum {
                enum_name,
                enumerator,
                ..
            } => write!(f, "{}", enum_name.parent().child(enumerator)),
            ConstValue::Octet(o) => write!(f, "{o}"),
        }
    }
}

/// The type a constant expression is evaluated for.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstKind {
    /// Integer type with its inclusive range and IDL spelling.
    Int {
        min: i128,
        max: i128,
        name: &'static str,
    },
    Octet,
    Float {
        max: f64,
        name: &'static str,
    },
    Fixed,
    Char,
    WChar,
    String(Option<u32>),
    WString(Option<u32>),
    Boolean,
    /// Enum: scoped name of the enum.
    Enum(ScopedName),
}

impl ConstKind {
    /// The integer kinds by IDL spelling.
    pub fn int(name: &'static str) -> ConstKind {
        let (min, max) = match name {
            "short" => (i16::MIN as i128, i16::MAX as i128),
            "unsigned short" => (0, u16::MAX as i128),
            "long" => (i32::MIN as i128, i32::MAX as i128),
            "unsigned long" => (0, u32::MAX as i128),
            "long long" => (i64::MIN as i128, i64::MAX as i128),
            _ => (0, u64::MAX as i128),
        };
        ConstKind::Int { min, max, name }
    }

    fn describe(&self) -> String {
        match self {
            ConstKind::Int { name, .. } | ConstKind::Float { name, .. } => name.to_string(),
            ConstKind::Octet => "octet".into(),
            ConstKind::Fixed => "fixed".into(),
            ConstKind::Char => "char".into(),
            ConstKind::WChar => "wchar".into(),
            ConstKind::String(_) => "string".into(),
            ConstKind::WString(_) => "wstring".into(),
            ConstKind::Boolean => "boolean".into(),
            ConstKind::Enum(n) => format!("enum '{n}'"),
        }
    }
}

/// Resolves names used in expressions to the values of constants or enumerators.
pub type NameLookup<'a> = dyn Fn(&ScopedNameRef) -> PResult<ConstValue> + 'a;

/// Evaluates `expr` as a value of type `kind`, checking ranges.
pub fn evaluate(expr: &Expr, kind: &ConstKind, names: &NameLookup<'_>) -> PResult<ConstValue> {
    let v = eval(expr, kind, names)?;
    coerce(v, kind, &expr.loc)
}

fn describe_value(v: &ConstValue) -> &'static str {
    match v {
        ConstValue::Integer(_) | ConstValue::Octet(_) => "integer",
        ConstValue::Float(_) => "floating-point",
        ConstValue::Fixed(_) => "fixed-point",
        ConstValue::Char(_) => "character",
        ConstValue::WChar(_) => "wide character",
        ConstValue::String(_) => "string",
        ConstValue::WString(_) => "wide string",
        ConstValue::Boolean(_) => "boolean",
        ConstValue::Enum { .. } => "enumerator",
    }
}

fn coerce(v: ConstValue, kind: &ConstKind, loc: &SourceLoc) -> PResult<ConstValue> {
    let mismatch = |v: &ConstValue| {
        Diagnostic::error(
            loc,
            format!(
                "{} value used where {} is required",
                describe_value(v),
                kind.describe()
            ),
        )
    };
    let out_of_range = |v: &dyn fmt::Display| {
        Diagnostic::error(
            loc,
            format!("value {v} is out of range for type {}", kind.describe()),
        )
    };
    Ok(match (kind, v) {
        (ConstKind::Int { min, max, .. }, ConstValue::Integer(i)) => {
            if i < *min || i > *max {
                return Err(out_of_range(&i));
            }
            ConstValue::Integer(i)
        }
        (ConstKind::Int { .. }, ConstValue::Octet(o)) => ConstValue::Integer(o as i128),
        (ConstKind::Octet, ConstValue::Integer(i)) => {
            ConstValue::Octet(u8::try_from(i).map_err(|_| out_of_range(&i))?)
        }
        (ConstKind::Octet, v @ ConstValue::Octet(_)) => v,
        (ConstKind::Float { max, .. }, ConstValue::Float(f)) => {
            if f.is_finite() && f.abs() > *max {
                return Err(out_of_range(&f));
            }
            ConstValue::Float(f)
        }
        // CORBA 3.0 §3.10.2: no integer for a floating-point or fixed constant, and no narrow
        // character or string for a wide one (nor the reverse): "shall be treated as an error".
        (ConstKind::Fixed, ConstValue::Fixed(x)) => ConstValue::Fixed(x),
        (ConstKind::Char, v @ ConstValue::Char(_)) => v,
        (ConstKind::WChar, v @ ConstValue::WChar(_)) => v,
        (ConstKind::Boolean, v @ ConstValue::Boolean(_)) => v,
        (ConstKind::String(bound), ConstValue::String(s))
        | (ConstKind::WString(bound), ConstValue::WString(s)) => {
            if let Some(b) = bound {
                if s.chars().count() > *b as usize {
                    return Err(Diagnostic::error(
                        loc,
                        format!("string of length {} exceeds bound {b}", s.chars().count()),
                    ));
                }
            }
            if matches!(kind, ConstKind::String(_)) {
                ConstValue::String(s)
            } else {
                ConstValue::WString(s)
            }
        }
        (ConstKind::Enum(want), v @ ConstValue::Enum { .. }) => {
            let ConstValue::Enum { enum_name, .. } = &v else {
                unreachable!()
            };
            if enum_name != want {
                return Err(Diagnostic::error(
                    loc,
                    format!("enumerator '{v}' is not a member of enum '{want}'"),
                ));
            }
            v
        }
        (_, v) => return Err(mismatch(&v)),
    })
}

fn eval(e: &Expr, kind: &ConstKind, names: &NameLookup<'_>) -> PResult<ConstValue> {
    let err = |m: String| Diagnostic::error(&e.loc, m);
    Ok(match &e.kind {
        ExprKind::Lit(l) => match l {
            Literal::Int(v) => ConstValue::Integer(
                i128::try_from(*v).map_err(|_| err("integer literal is too large".into()))?,
            ),
            Literal::Float(f) => ConstValue::Float(*f),
            Literal::Fixed(s) => {
                let v = FixedValue::parse(s)
                    .ok_or_else(|| err(format!("invalid fixed-point literal '{s}d'")))?;
                check_fixed(v, &e.loc)?
            }
            Literal::Char(c) => ConstValue::Char(*c),
            Literal::WChar(c) => ConstValue::WChar(*c),
            Literal::Str(s) => ConstValue::String(s.clone()),
            Literal::WStr(s) => ConstValue::WString(s.clone()),
            Literal::Bool(b) => ConstValue::Boolean(*b),
        },
        ExprKind::Name(n) => match names(n)? {
            ConstValue::Octet(o) => ConstValue::Integer(o as i128),
            v => v,
        },
        ExprKind::Unary(op, inner) => {
            let v = eval(inner, kind, names)?;
            match (op, v) {
                (
                    UnOp::Plus,
                    v @ (ConstValue::Integer(_) | ConstValue::Float(_) | ConstValue::Fixed(_)),
                ) => v,
                (UnOp::Neg, ConstValue::Integer(i)) => ConstValue::Integer(-i),
                (UnOp::Neg, ConstValue::Float(f)) => ConstValue::Float(-f),
                (UnOp::Neg, ConstValue::Fixed(x)) => ConstValue::Fixed(FixedValue {
                    value: -x.value,
                    ..x
                }),
                (UnOp::Not, ConstValue::Integer(i)) => match kind {
                    // `~` works within the width of an unsigned target type.
                    ConstKind::Int { min: 0, max, .. } => ConstValue::Integer(!i & max),
                    ConstKind::Octet => ConstValue::Integer(!i & 0xFF),
                    _ => ConstValue::Integer(!i),
                },
                (op, v) => {
                    let sym = match op {
                        UnOp::Neg => '-',
                        UnOp::Plus => '+',
                        UnOp::Not => '~',
                    };
                    return Err(err(format!(
                        "invalid {} operand to unary '{sym}'",
                        describe_value(&v)
                    )));
                }
            }
        }
        ExprKind::Binary(op, l, r) => {
            let a = eval(l, kind, names)?;
            let b = eval(r, kind, names)?;
            binary(*op, a, b, &e.loc)?
        }
    })
}

fn check_fixed(v: FixedValue, loc: &SourceLoc) -> PResult<ConstValue> {
    if v.digits() as u32 > FIXED_MAX_DIGITS {
        return Err(Diagnostic::error(
            loc,
            "fixed-point constant exceeds 31 digits",
        ));
    }
    Ok(ConstValue::Fixed(v))
}

fn op_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Or => "|",
        BinOp::Xor => "^",
        BinOp::And => "&",
        BinOp::Shl => "<<",
        BinOp::Shr => ">>",
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Mod => "%",
    }
}

fn binary(op: BinOp, a: ConstValue, b: ConstValue, loc: &SourceLoc) -> PResult<ConstValue> {
    let err = |m: &str| Diagnostic::error(loc, m.to_string());
    let overflow = || err("integer overflow in constant expression");
    let sym = op_symbol(op);
    match (a, b) {
        (ConstValue::Integer(x), ConstValue::Integer(y)) => {
            let v = match op {
                BinOp::Or => x | y,
                BinOp::Xor => x ^ y,
                BinOp::And => x & y,
                BinOp::Shl | BinOp::Shr => {
                    if !(0..64).contains(&y) {
                        return Err(err(&format!("shift count {y} is out of range (0..63)")));
                    }
                    if op == BinOp::Shl {
                        x.checked_shl(y as u32).ok_or_else(overflow)?
                    } else {
                        x >> y
                    }
                }
                BinOp::Add => x.checked_add(y).ok_or_else(overflow)?,
                BinOp::Sub => x.checked_sub(y).ok_or_else(overflow)?,
                BinOp::Mul => x.checked_mul(y).ok_or_else(overflow)?,
                BinOp::Div | BinOp::Mod if y == 0 => {
                    return Err(err("division by zero in constant expression"))
                }
                BinOp::Div => x / y,
                BinOp::Mod => x % y,
            };
            // Intermediate values must fit in (unsigned) long long.
            if v < i64::MIN as i128 || v > u64::MAX as i128 {
                return Err(overflow());
            }
            Ok(ConstValue::Integer(v))
        }
        // CORBA 3.0 §3.10.2: "An infix operator can combine two integers, floats or fixeds,
        // but not mixtures of these."
        (x @ (ConstValue::Float(_) | ConstValue::Fixed(_)), y @ ConstValue::Integer(_))
        | (x @ ConstValue::Integer(_), y @ (ConstValue::Float(_) | ConstValue::Fixed(_)))
        | (x @ ConstValue::Float(_), y @ ConstValue::Fixed(_))
        | (x @ ConstValue::Fixed(_), y @ ConstValue::Float(_)) => Err(err(&format!(
            "operator '{sym}' cannot mix {} and {} operands",
            describe_value(&x),
            describe_value(&y)
        ))),
        (ConstValue::Float(x), ConstValue::Float(y)) => Ok(ConstValue::Float(match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div if y == 0.0 => return Err(err("division by zero in constant expression")),
            BinOp::Div => x / y,
            _ => {
                return Err(err(&format!(
                    "operator '{sym}' is not valid for floating-point operands"
                )))
            }
        })),
        (ConstValue::Fixed(x), ConstValue::Fixed(y)) => {
            let scale = x.scale.max(y.scale);
            let v = match op {
                BinOp::Add | BinOp::Sub => {
                    let (a, b) = (
                        x.rescale(scale).ok_or_else(overflow)?,
                        y.rescale(scale).ok_or_else(overflow)?,
                    );
                    let v = if op == BinOp::Add {
                        a.checked_add(b)
                    } else {
                        a.checked_sub(b)
                    };
                    FixedValue {
                        value: v.ok_or_else(overflow)?,
                        scale,
                    }
                }
                BinOp::Mul => FixedValue {
                    value: x.value.checked_mul(y.value).ok_or_else(overflow)?,
                    scale: x.scale + y.scale,
                },
                BinOp::Div => {
                    if y.value == 0 {
                        return Err(err("division by zero in constant expression"));
                    }
                    // Scale the dividend up as far as 31 digits of precision allow.
                    let mut num = x.value;
                    let mut s = x.scale as i32 - y.scale as i32;
                    while num.unsigned_abs() < 10u128.pow(36) && s < FIXED_MAX_DIGITS as i32 {
                        num *= 10;
                        s += 1;
                    }
                    let mut q = num / y.value;
                    while s < 0 {
                        q = q.checked_mul(10).ok_or_else(overflow)?;
                        s += 1;
                    }
                    let mut v = FixedValue {
                        value: q,
                        scale: s as u16,
                    }
                    .normalized();
                    while v.digits() as u32 > FIXED_MAX_DIGITS && v.scale > 0 {
                        v.value /= 10;
                        v.scale -= 1;
                    }
                    v
                }
                _ => {
                    return Err(err(&format!(
                        "operator '{sym}' is not valid for fixed-point operands"
                    )))
                }
            };
            check_fixed(v.normalized(), loc)
        }
        (x, _) => Err(err(&format!(
            "invalid {} operands to binary '{sym}'",
            describe_value(&x)
        ))),
    }
}

#[cfg(test)]
#[path = "constexpr_tests.rs"]
mod tests;
