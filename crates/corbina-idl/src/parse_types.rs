//! Parser part for type specifications, scoped names and constant expressions.

use crate::ast::*;
use crate::diagnostic::{Diagnostic, PResult};
use crate::lexer::Tok;
use crate::parser::Parser;

impl Parser<'_> {
    /// `A::B`, `::A::B` (escaped identifiers have `_` stripped).
    pub(crate) fn scoped_name(&mut self) -> PResult<ScopedNameRef> {
        let loc = self.loc();
        let absolute = self.eat_punct("::");
        let mut parts = vec![self.ident_checked(false)?.name];
        while self.is_punct("::") {
            self.bump();
            parts.push(self.ident_checked(false)?.name);
        }
        Ok(ScopedNameRef {
            absolute,
            parts,
            loc,
        })
    }

    /// A type. `constructed` allows in-place struct/union/enum definitions.
    pub(crate) fn type_spec(&mut self, constructed: bool) -> PResult<TypeSpec> {
        self.enter()?;
        let r = self.type_spec_inner(constructed);
        self.leave();
        r
    }

    fn type_spec_inner(&mut self, constructed: bool) -> PResult<TypeSpec> {
        let loc = self.loc();
        let kw = match &self.peek().tok {
            Tok::Ident(s) => s.clone(),
            Tok::Punct("::") => return Ok(TypeSpec::Named(self.scoped_name()?)),
            _ => return Err(self.unexpected("type")),
        };
        let base = |b| Ok(TypeSpec::Base(b, loc.clone()));
        match kw.as_str() {
            "short" | "long" | "unsigned" | "float" | "double" | "char" | "wchar" | "boolean"
            | "octet" | "any" | "Object" | "ValueBase" => {
                self.bump();
                match kw.as_str() {
                    "short" => base(BaseType::Short),
                    "long" => {
                        if self.eat_kw("long") {
                            base(BaseType::LongLong)
                        } else if self.eat_kw("double") {
                            base(BaseType::LongDouble)
                        } else {
                            base(BaseType::Long)
                        }
                    }
                    "unsigned" => {
                        if self.eat_kw("short") {
                            base(BaseType::UShort)
                        } else if self.eat_kw("long") {
                            if self.eat_kw("long") {
                                base(BaseType::ULongLong)
                            } else {
                                base(BaseType::ULong)
                            }
                        } else {
                            Err(self.unexpected("'short' or 'long'"))
                        }
                    }
                    "float" => base(BaseType::Float),
                    "double" => base(BaseType::Double),
                    "char" => base(BaseType::Char),
                    "wchar" => base(BaseType::WChar),
                    "boolean" => base(BaseType::Boolean),
                    "octet" => base(BaseType::Octet),
                    "any" => base(BaseType::Any),
                    "Object" => base(BaseType::Object),
                    _ => base(BaseType::ValueBase),
                }
            }
            "string" | "wstring" => {
                self.bump();
                let bound = self.template_bound()?;
                Ok(if kw == "string" {
                    TypeSpec::String(bound)
                } else {
                    TypeSpec::WString(bound)
                })
            }
            "fixed" => {
                self.bump();
                if !self.is_punct("<") {
                    return Ok(TypeSpec::Fixed(None));
                }
                self.bump();
                self.in_template += 1;
                let d = self.expr()?;
                self.expect_punct(",")?;
                let s = self.expr()?;
                self.in_template -= 1;
                self.expect_punct(">")?;
                Ok(TypeSpec::Fixed(Some((Box::new(d), Box::new(s)))))
            }
            "sequence" => {
                self.bump();
                self.expect_punct("<")?;
                self.skip_annotations()?;
                let elem = self.type_spec(false)?;
                let bound = if self.eat_punct(",") {
                    self.in_template += 1;
                    let e = self.expr()?;
                    self.in_template -= 1;
                    Some(Box::new(e))
                } else {
                    None
                };
                self.expect_punct(">")?;
                Ok(TypeSpec::Sequence(Box::new(elem), bound))
            }
            "struct" | "union" | "enum" if constructed => match self.constructed()? {
                Some(d) => Ok(TypeSpec::Constructed(Box::new(d))),
                None => Err(self.unexpected("type")),
            },
            _ => Ok(TypeSpec::Named(self.scoped_name()?)),
        }
    }

    fn template_bound(&mut self) -> PResult<Option<Box<Expr>>> {
        if !self.eat_punct("<") {
            return Ok(None);
        }
        self.in_template += 1;
        let e = self.expr()?;
        self.in_template -= 1;
        self.expect_punct(">")?;
        Ok(Some(Box::new(e)))
    }

    /// The type of a `const` declaration (checked further during resolution).
    pub(crate) fn const_type(&mut self) -> PResult<TypeSpec> {
        let start = self.loc();
        let t = self.type_spec(false)?;
        match &t {
            // CORBA 3.0 §3.10 grammar: `<fixed_pt_const_type> ::= "fixed"`.
            TypeSpec::Fixed(Some(_)) => Err(Diagnostic::error(
                &start,
                "a fixed-point constant is declared 'fixed', without digits and scale (or with a typedef of fixed<d,s>)",
            )),
            TypeSpec::Sequence(..)
            | TypeSpec::Base(BaseType::Any | BaseType::Object | BaseType::ValueBase, _) => Err(
                Diagnostic::error(&self.toks[self.pos - 1].loc, "invalid type for a constant"),
            ),
            _ => Ok(t),
        }
    }

    /// A constant expression.
    pub(crate) fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.binary(1);
        self.leave();
        r
    }

    fn bin_op(&mut self) -> Option<(BinOp, u8)> {
        let Tok::Punct(p) = self.peek().tok else {
            return None;
        };
        Some(match p {
            "|" => (BinOp::Or, 1),
            "^" => (BinOp::Xor, 2),
            "&" => (BinOp::And, 3),
            "<<" => (BinOp::Shl, 4),
            ">>" if self.in_template == 0 => (BinOp::Shr, 4),
            "+" => (BinOp::Add, 5),
            "-" => (BinOp::Sub, 5),
            "*" => (BinOp::Mul, 6),
            "/" => (BinOp::Div, 6),
            "%" => (BinOp::Mod, 6),
            _ => return None,
        })
    }

    fn binary(&mut self, min: u8) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        while let Some((op, prec)) = self.bin_op() {
            if prec < min {
                break;
            }
            self.bump();
            let rhs = self.binary(prec + 1)?;
            let loc = lhs.loc.clone();
            lhs = Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                loc,
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<Expr> {
        let loc = self.loc();
        let op = match self.peek().tok {
            Tok::Punct("-") => Some(UnOp::Neg),
            Tok::Punct("+") => Some(UnOp::Plus),
            Tok::Punct("~") => Some(UnOp::Not),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            self.enter()?;
            let e = self.unary();
            self.leave();
            return Ok(Expr {
                kind: ExprKind::Unary(op, Box::new(e?)),
                loc,
            });
        }
        self.primary()
    }

    fn primary(&mut self) -> PResult<Expr> {
        let loc = self.loc();
        let lit = |l| {
            Ok(Expr {
                kind: ExprKind::Lit(l),
                loc: loc.clone(),
            })
        };
        let tok = self.peek().tok.clone();
        match tok {
            Tok::Int(v) => {
                self.bump();
                lit(Literal::Int(v))
            }
            Tok::Float(v, _) => {
                self.bump();
                lit(Literal::Float(v))
            }
            Tok::Fixed(s) => {
                self.bump();
                lit(Literal::Fixed(s))
            }
            Tok::Char(c) => {
                self.bump();
                lit(Literal::Char(c))
            }
            Tok::WChar(c) => {
                self.bump();
                lit(Literal::WChar(c))
            }
            Tok::Str(_) | Tok::WStr(_) => {
                // Adjacent string literals concatenate.
                let wide = matches!(tok, Tok::WStr(_));
                let mut s = String::new();
                loop {
                    match self.peek().tok.clone() {
                        Tok::Str(p) if !wide => s.push_str(&p),
                        Tok::WStr(p) if wide => s.push_str(&p),
                        _ => break,
                    }
                    self.bump();
                }
                lit(if wide {
                    Literal::WStr(s)
                } else {
                    Literal::Str(s)
                })
            }
            Tok::Ident(ref s) if s == "TRUE" || s == "FALSE" => {
                self.bump();
                lit(Literal::Bool(s == "TRUE"))
            }
            Tok::Ident(_) | Tok::Punct("::") => {
                let n = self.scoped_name()?;
                Ok(Expr {
                    kind: ExprKind::Name(n),
                    loc,
                })
            }
            Tok::Punct("(") => {
                self.bump();
                let saved = std::mem::take(&mut self.in_template);
                let e = self.expr();
                self.in_template = saved;
                let e = e?;
                self.expect_punct(")")?;
                Ok(e)
            }
            _ => Err(self.unexpected("expression")),
        }
    }
}
