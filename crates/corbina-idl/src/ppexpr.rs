//! Evaluation of `#if` / `#elif` integer expressions (C preprocessor rules, in `i64`).

use crate::diagnostic::{Diagnostic, PResult, SourceLoc};
use crate::lexer::{Tok, Token};

/// Evaluates a fully macro-expanded `#if` expression; `defined` must already be replaced.
/// Remaining identifiers count as 0, as in C.
pub fn eval(tokens: &[Token], loc: &SourceLoc) -> PResult<i64> {
    if tokens.is_empty() {
        return Err(Diagnostic::error(loc, "#if with no expression"));
    }
    let mut p = P {
        toks: tokens,
        pos: 0,
        loc,
        depth: 0,
    };
    let v = p.cond()?;
    if let Some(t) = p.toks.get(p.pos) {
        return Err(Diagnostic::error(
            &t.loc,
            format!("unexpected {} in #if expression", t.tok),
        ));
    }
    Ok(v)
}

struct P<'a> {
    toks: &'a [Token],
    pos: usize,
    loc: &'a SourceLoc,
    depth: u32,
}

fn prec(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | ">" | "<=" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        _ => return None,
    })
}

impl P<'_> {
    fn peek_punct(&self) -> Option<&'static str> {
        match self.toks.get(self.pos).map(|t| &t.tok) {
            Some(Tok::Punct(p)) => Some(p),
            _ => None,
        }
    }

    fn here(&self) -> SourceLoc {
        self.toks
            .get(self.pos)
            .map(|t| t.loc.clone())
            .unwrap_or_else(|| self.loc.clone())
    }

    fn cond(&mut self) -> PResult<i64> {
        self.depth += 1;
        if self.depth > 256 {
            return Err(Diagnostic::error(
                &self.here(),
                "#if expression nested too deeply",
            ));
        }
        let c = self.binary(1)?;
        let r = if self.peek_punct() == Some("?") {
            self.pos += 1;
            let a = self.cond()?;
            if self.peek_punct() != Some(":") {
                return Err(Diagnostic::error(
                    &self.here(),
                    "expected ':' in #if expression",
                ));
            }
            self.pos += 1;
            let b = self.cond()?;
            if c != 0 {
                a
            } else {
                b
            }
        } else {
            c
        };
        self.depth -= 1;
        Ok(r)
    }

    fn binary(&mut self, min: u8) -> PResult<i64> {
        let mut lhs = self.unary()?;
        while let Some(op) = self.peek_punct() {
            let Some(p) = prec(op) else { break };
            if p < min {
                break;
            }
            let at = self.here();
            self.pos += 1;
            let rhs = self.binary(p + 1)?;
            let overflow = || Diagnostic::error(&at, "integer overflow in #if expression");
            lhs = match op {
                "||" => ((lhs != 0) || (rhs != 0)) as i64,
                "&&" => ((lhs != 0) && (rhs != 0)) as i64,
                "|" => lhs | rhs,
                "^" => lhs ^ rhs,
                "&" => lhs & rhs,
                "==" => (lhs == rhs) as i64,
                "!=" => (lhs != rhs) as i64,
                "<" => (lhs < rhs) as i64,
                ">" => (lhs > rhs) as i64,
                "<=" => (lhs <= rhs) as i64,
                ">=" => (lhs >= rhs) as i64,
                "<<" => lhs
                    .checked_shl(u32::try_from(rhs).map_err(|_| overflow())?)
                    .ok_or_else(overflow)?,
                ">>" => lhs
                    .checked_shr(u32::try_from(rhs).map_err(|_| overflow())?)
                    .ok_or_else(overflow)?,
                "+" => lhs.checked_add(rhs).ok_or_else(overflow)?,
                "-" => lhs.checked_sub(rhs).ok_or_else(overflow)?,
                "*" => lhs.checked_mul(rhs).ok_or_else(overflow)?,
                "/" | "%" => {
                    if rhs == 0 {
                        return Err(Diagnostic::error(&at, "division by zero in #if expression"));
                    }
                    if op == "/" {
                        lhs.checked_div(rhs).ok_or_else(overflow)?
                    } else {
                        lhs.checked_rem(rhs).ok_or_else(overflow)?
                    }
                }
                _ => unreachable!("operator has a precedence"),
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<i64> {
        self.depth += 1;
        if self.depth > 256 {
            return Err(Diagnostic::error(
                &self.here(),
                "#if expression nested too deeply",
            ));
        }
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    fn unary_inner(&mut self) -> PResult<i64> {
        let Some(t) = self.toks.get(self.pos) else {
            return Err(Diagnostic::error(
                self.loc,
                "#if expression ends unexpectedly",
            ));
        };
        self.pos += 1;
        match &t.tok {
            Tok::Punct("!") => Ok((self.unary()? == 0) as i64),
            Tok::Punct("~") => Ok(!self.unary()?),
            Tok::Punct("-") => self
                .unary()?
                .checked_neg()
                .ok_or_else(|| Diagnostic::error(&t.loc, "integer overflow in #if expression")),
            Tok::Punct("+") => self.unary(),
            Tok::Punct("(") => {
                let v = self.cond()?;
                if self.peek_punct() != Some(")") {
                    return Err(Diagnostic::error(
                        &self.here(),
                        "missing ')' in #if expression",
                    ));
                }
                self.pos += 1;
                Ok(v)
            }
            Tok::Int(v) => i64::try_from(*v)
                .map_err(|_| Diagnostic::error(&t.loc, "integer constant is too large for #if")),
            Tok::Char(c) => Ok(*c as i64),
            Tok::WChar(c) => Ok(*c as i64),
            Tok::Ident(_) => Ok(0),
            other => Err(Diagnostic::error(
                &t.loc,
                format!("unexpected {other} in #if expression"),
            )),
        }
    }
}
