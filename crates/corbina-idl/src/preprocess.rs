//! The IDL preprocessor: `#include`, macros, conditionals and pragmas.
//!
//! Works on the lexer's tokens one logical line at a time and produces a
//! flat token stream for the parser. `#pragma prefix/ID/version` and the
//! boundaries of included files travel in that stream as
//! [`Tok::Pragma`] tokens, because their meaning depends on where they
//! occur among the definitions.

use crate::diagnostic::{Diagnostic, PResult, SourceLoc};
use crate::lexer::{lex, PragmaTok, Tok, Token};
use crate::ppexpr;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Deepest `#include` nesting accepted (catches includes of themselves without guards).
pub const MAX_INCLUDE_DEPTH: usize = 64;
const MAX_MACRO_DEPTH: u32 = 64;

#[derive(Clone, Debug)]
struct Macro {
    params: Option<Vec<String>>,
    body: Vec<Token>,
}

/// A conditional-compilation group being processed.
struct Cond {
    /// The enclosing group is active.
    parent_active: bool,
    /// This branch is being taken.
    taking: bool,
    /// Some branch of this group was already taken.
    taken: bool,
    seen_else: bool,
    loc: SourceLoc,
    directive: &'static str,
    line: usize,
}

/// Preprocessor state shared across the main file and its includes.
pub struct Preprocessor<'w> {
    include_dirs: Vec<PathBuf>,
    macros: HashMap<String, Macro>,
    /// Include guard macro of each file that was entirely wrapped in one.
    guards: HashMap<PathBuf, String>,
    warnings: &'w mut Vec<Diagnostic>,
    out: Vec<Token>,
    depth: usize,
    /// End of the main file, where [`Tok::Eof`] is reported.
    end: Option<SourceLoc>,
}

fn tok_text(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => s.clone(),
        Tok::Int(v) => v.to_string(),
        Tok::Float(_, s) => s.clone(),
        Tok::Fixed(s) => format!("{s}d"),
        Tok::Char(c) => format!("'{}'", (*c as char).escape_default()),
        Tok::WChar(c) => format!("L'{}'", c.escape_default()),
        Tok::Str(s) => format!("\"{}\"", s.escape_default()),
        Tok::WStr(s) => format!("L\"{}\"", s.escape_default()),
        Tok::Punct(p) => p.to_string(),
        Tok::HeaderName(h) => format!("<{h}>"),
        _ => String::new(),
    }
}

fn ident(t: Option<&Token>) -> Option<&str> {
    match t.map(|t| &t.tok) {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

impl<'w> Preprocessor<'w> {
    /// A preprocessor searching `include_dirs` for `#include`, with `defines`
    /// (name, replacement text) predefined; warnings are pushed to `warnings`.
    pub fn new(
        include_dirs: &[PathBuf],
        defines: &[(String, String)],
        warnings: &'w mut Vec<Diagnostic>,
    ) -> PResult<Self> {
        let mut pp = Preprocessor {
            include_dirs: include_dirs.to_vec(),
            macros: HashMap::new(),
            guards: HashMap::new(),
            warnings,
            out: Vec::new(),
            depth: 0,
            end: None,
        };
        let cmdline: Arc<str> = "<command line>".into();
        for (name, value) in defines {
            let mut body = lex(value, &cmdline, false)?;
            body.retain(|t| t.tok != Tok::Newline);
            pp.macros.insert(name.clone(), Macro { params: None, body });
        }
        Ok(pp)
    }

    /// Preprocesses the main file at `path`.
    pub fn run_file(mut self, path: &Path) -> PResult<Vec<Token>> {
        let name: Arc<str> = path.to_string_lossy().into();
        let text = std::fs::read(path).map_err(|e| {
            let loc = SourceLoc::new(&name, 1, 1);
            match e.kind() {
                std::io::ErrorKind::NotFound => Diagnostic::error(&loc, "no such file"),
                _ => Diagnostic::error(&loc, format!("cannot read file: {e}")),
            }
        })?;
        let text = String::from_utf8_lossy(&text);
        let canon = path.canonicalize().ok();
        self.process(name, &text, true, canon)?;
        Ok(self.finish())
    }

    /// Preprocesses `text` as if it were the main file named `name`.
    pub fn run_str(mut self, name: &str, text: &str) -> PResult<Vec<Token>> {
        self.process(name.into(), text, true, None)?;
        Ok(self.finish())
    }

    fn finish(mut self) -> Vec<Token> {
        let loc = self.end.take().unwrap_or_else(|| SourceLoc::new("", 1, 1));
        self.out.push(Token {
            tok: Tok::Eof,
            loc,
            space_before: true,
        });
        self.out
    }

    fn process(
        &mut self,
        file: Arc<str>,
        text: &str,
        main: bool,
        canon: Option<PathBuf>,
    ) -> PResult<()> {
        let toks = lex(text, &file, main)?;
        if main {
            self.end = toks.last().map(|t| t.loc.clone());
        }
        let lines: Vec<&[Token]> = toks.split(|t| t.tok == Tok::Newline).collect();
        let first = lines.iter().position(|l| !l.is_empty());
        let last = lines.iter().rposition(|l| !l.is_empty());
        let mut conds: Vec<Cond> = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let active = conds.last().is_none_or(|c| c.taking);
            if line.first().map(|t| &t.tok) == Some(&Tok::Punct("#")) {
                let closed = self.directive(line, &mut conds, active, &file, i)?;
                // A file wholly wrapped in `#ifndef X ... #endif` is include-once.
                if let (Some(open), Some(canon)) = (closed, &canon) {
                    if Some(open) == first && Some(i) == last {
                        if let Some(g) = ident(lines[open].get(2)) {
                            if ident(lines[open].get(1)) == Some("ifndef") {
                                self.guards.insert(canon.clone(), g.to_string());
                            }
                        }
                    }
                }
                continue;
            }
            if !active || line.is_empty() {
                continue;
            }
            let expanded = self.expand(line, &mut Vec::new(), 0)?;
            for t in &expanded {
                if let Tok::Error(msg) = &t.tok {
                    return Err(Diagnostic::error(&t.loc, msg.clone()));
                }
            }
            self.out.extend(expanded);
        }
        if let Some(c) = conds.last() {
            return Err(Diagnostic::error(
                &c.loc,
                format!("unterminated #{}", c.directive),
            ));
        }
        Ok(())
    }

    /// Handles one directive line. Returns the line index of the group's
    /// opening directive when an `#endif` closes a top-level group.
    fn directive(
        &mut self,
        line: &[Token],
        conds: &mut Vec<Cond>,
        active: bool,
        file: &Arc<str>,
        line_no: usize,
    ) -> PResult<Option<usize>> {
        let hash = &line[0];
        let Some(name_tok) = line.get(1) else {
            return Ok(None);
        };
        let name = match &name_tok.tok {
            Tok::Ident(s) => s.as_str(),
            Tok::Int(_) => return Ok(None), // `# 12 "file"` line marker
            other if active => {
                return Err(Diagnostic::error(
                    &name_tok.loc,
                    format!("invalid preprocessing directive {other}"),
                ))
            }
            _ => return Ok(None),
        };
        let args = &line[2..];
        let dloc = name_tok.loc.clone();
        match name {
            "ifdef" | "ifndef" | "if" => {
                let (taking, directive) = if !active {
                    (
                        false,
                        if name == "if" {
                            "if"
                        } else if name == "ifdef" {
                            "ifdef"
                        } else {
                            "ifndef"
                        },
                    )
                } else if name == "if" {
                    (self.eval_if(args, &dloc)? != 0, "if")
                } else {
                    let Some(m) = ident(args.first()) else {
                        return Err(Diagnostic::error(
                            &dloc,
                            format!("no macro name given in #{name} directive"),
                        ));
                    };
                    let defined = self.macros.contains_key(m);
                    if name == "ifdef" {
                        (defined, "ifdef")
                    } else {
                        (!defined, "ifndef")
                    }
                };
                conds.push(Cond {
                    parent_active: active,
                    taking,
                    taken: taking,
                    seen_else: false,
                    loc: hash.loc.clone(),
                    directive,
                    line: line_no,
                });
            }
            "elif" | "else" => {
                let Some(c) = conds.last_mut() else {
                    return Err(Diagnostic::error(&hash.loc, format!("#{name} without #if")));
                };
                if c.seen_else {
                    return Err(Diagnostic::error(&hash.loc, format!("#{name} after #else")));
                }
                if name == "else" {
                    c.seen_else = true;
                    c.taking = c.parent_active && !c.taken;
                } else if c.parent_active && !c.taken {
                    let v = self.eval_if(args, &dloc)? != 0;
                    let c = conds.last_mut().expect("checked above");
                    c.taking = v;
                    c.taken = v;
                } else {
                    c.taking = false;
                }
                let c = conds.last_mut().expect("checked above");
                c.taken |= c.taking;
            }
            "endif" => {
                let Some(c) = conds.pop() else {
                    return Err(Diagnostic::error(&hash.loc, "#endif without #if"));
                };
                if conds.is_empty() {
                    return Ok(Some(c.line));
                }
            }
            _ if !active => {}
            "define" => self.define(args, &dloc)?,
            "undef" => {
                let Some(m) = ident(args.first()) else {
                    return Err(Diagnostic::error(
                        &dloc,
                        "no macro name given in #undef directive",
                    ));
                };
                self.macros.remove(m);
            }
            "include" => self.include(args, &dloc, file)?,
            "pragma" => self.pragma(args, &dloc)?,
            "error" => {
                let msg: Vec<String> = args.iter().map(|t| tok_text(&t.tok)).collect();
                return Err(Diagnostic::error(
                    &hash.loc,
                    format!("#error {}", msg.join(" ")),
                ));
            }
            "warning" => {
                let msg: Vec<String> = args.iter().map(|t| tok_text(&t.tok)).collect();
                self.warnings.push(Diagnostic::warning(
                    &hash.loc,
                    format!("#warning {}", msg.join(" ")),
                ));
            }
            "line" | "ident" => {}
            other => {
                return Err(Diagnostic::error(
                    &dloc,
                    format!("invalid preprocessing directive #{other}"),
                ))
            }
        }
        Ok(None)
    }

    fn eval_if(&self, args: &[Token], loc: &SourceLoc) -> PResult<i64> {
        // `defined` is handled before macro expansion so its operand is not expanded.
        let mut pre = Vec::with_capacity(args.len());
        let mut i = 0;
        while i < args.len() {
            if ident(args.get(i)) == Some("defined") {
                let at = &args[i].loc;
                let (name, next) = if args.get(i + 1).map(|t| &t.tok) == Some(&Tok::Punct("(")) {
                    let n = ident(args.get(i + 2));
                    if args.get(i + 3).map(|t| &t.tok) != Some(&Tok::Punct(")")) {
                        return Err(Diagnostic::error(at, "missing ')' after \"defined\""));
                    }
                    (n, i + 4)
                } else {
                    (ident(args.get(i + 1)), i + 2)
                };
                let Some(name) = name else {
                    return Err(Diagnostic::error(
                        at,
                        "operator \"defined\" requires an identifier",
                    ));
                };
                let v = self.macros.contains_key(name) as u128;
                pre.push(Token {
                    tok: Tok::Int(v),
                    loc: at.clone(),
                    space_before: true,
                });
                i = next;
            } else {
                pre.push(args[i].clone());
                i += 1;
            }
        }
        let expanded = self.expand(&pre, &mut Vec::new(), 0)?;
        ppexpr::eval(&expanded, loc)
    }

    fn define(&mut self, args: &[Token], loc: &SourceLoc) -> PResult<()> {
        let Some(name) = ident(args.first()) else {
            return Err(Diagnostic::error(loc, "macro names must be identifiers"));
        };
        let mut rest = &args[1..];
        let mut params = None;
        if let Some(t) = rest.first() {
            if t.tok == Tok::Punct("(") && !t.space_before {
                let mut ps = Vec::new();
                let mut i = 1;
                loop {
                    match rest.get(i).map(|t| &t.tok) {
                        Some(Tok::Punct(")")) if ps.is_empty() => break,
                        Some(Tok::Ident(p)) => {
                            ps.push(p.clone());
                            i += 1;
                            match rest.get(i).map(|t| &t.tok) {
                                Some(Tok::Punct(",")) => i += 1,
                                Some(Tok::Punct(")")) => break,
                                _ => {
                                    return Err(Diagnostic::error(
                                        loc,
                                        "expected ',' or ')' in macro parameter list",
                                    ))
                                }
                            }
                        }
                        _ => {
                            return Err(Diagnostic::error(
                                loc,
                                "expected parameter name in macro parameter list",
                            ))
                        }
                    }
                }
                rest = &rest[i + 1..];
                params = Some(ps);
            }
        }
        let m = Macro {
            params,
            body: rest.to_vec(),
        };
        if let Some(old) = self.macros.get(name) {
            let same = old.params == m.params
                && old.body.len() == m.body.len()
                && old.body.iter().zip(&m.body).all(|(a, b)| a.tok == b.tok);
            if !same {
                self.warnings
                    .push(Diagnostic::warning(loc, format!("\"{name}\" redefined")));
            }
        }
        self.macros.insert(name.to_string(), m);
        Ok(())
    }

    fn include(&mut self, args: &[Token], loc: &SourceLoc, file: &Arc<str>) -> PResult<()> {
        let expanded;
        let mut args = args;
        if !matches!(
            args.first().map(|t| &t.tok),
            Some(Tok::Str(_) | Tok::HeaderName(_))
        ) {
            expanded = self.expand(args, &mut Vec::new(), 0)?;
            args = &expanded;
        }
        let (name, quoted) = match args.first().map(|t| &t.tok) {
            Some(Tok::Str(s)) => (s.clone(), true),
            Some(Tok::HeaderName(s)) => (s.clone(), false),
            _ => {
                return Err(Diagnostic::error(
                    loc,
                    "#include expects \"FILENAME\" or <FILENAME>",
                ))
            }
        };
        let mut candidates = Vec::new();
        if Path::new(&name).is_absolute() {
            candidates.push(PathBuf::from(&name));
        } else {
            if quoted {
                let dir = Path::new(&**file).parent().unwrap_or(Path::new(""));
                candidates.push(dir.join(&name));
            }
            candidates.extend(self.include_dirs.iter().map(|d| d.join(&name)));
        }
        let Some(path) = candidates.into_iter().find(|p| p.is_file()) else {
            if let Some(text) = crate::builtin::file(&name) {
                let display = format!("{}{name}", crate::builtin::PREFIX);
                return self.include_text(loc, display, text);
            }
            return Err(Diagnostic::error(
                loc,
                format!("cannot find include file \"{name}\""),
            ));
        };
        let text = std::fs::read(&path).map_err(|e| {
            Diagnostic::error(loc, format!("cannot read include file \"{name}\": {e}"))
        })?;
        let text = String::from_utf8_lossy(&text);
        self.include_text(loc, path.to_string_lossy().into_owned(), &text)
    }

    /// Processes an included file's text; `display` names it in diagnostics and is the
    /// include-once key of a built-in file.
    fn include_text(&mut self, loc: &SourceLoc, display: String, text: &str) -> PResult<()> {
        let canon = Path::new(&display)
            .canonicalize()
            .unwrap_or_else(|_| PathBuf::from(&display));
        if let Some(g) = self.guards.get(&canon) {
            if self.macros.contains_key(g) {
                return Ok(());
            }
        }
        if self.depth >= MAX_INCLUDE_DEPTH {
            return Err(Diagnostic::error(
                loc,
                "#include nested too deeply (recursive include?)",
            ));
        }
        let display: Arc<str> = display.into();
        self.out.push(Token {
            tok: Tok::Pragma(PragmaTok::EnterFile),
            loc: loc.clone(),
            space_before: true,
        });
        self.depth += 1;
        self.process(display, text, false, Some(canon))?;
        self.depth -= 1;
        let end = self
            .out
            .last()
            .map(|t| t.loc.clone())
            .unwrap_or_else(|| loc.clone());
        self.out.push(Token {
            tok: Tok::Pragma(PragmaTok::ExitFile),
            loc: end,
            space_before: true,
        });
        Ok(())
    }

    fn pragma(&mut self, args: &[Token], loc: &SourceLoc) -> PResult<()> {
        let Some(kind) = ident(args.first()) else {
            self.warnings
                .push(Diagnostic::warning(loc, "ignoring empty #pragma"));
            return Ok(());
        };
        let rest = &args[1..];
        let malformed = || Diagnostic::error(loc, format!("malformed #pragma {kind}"));
        let scoped = |toks: &[Token]| -> Option<(Vec<String>, bool, usize)> {
            let mut i = 0;
            let absolute = toks.first().map(|t| &t.tok) == Some(&Tok::Punct("::"));
            if absolute {
                i += 1;
            }
            let mut parts = Vec::new();
            loop {
                parts.push(ident(toks.get(i))?.trim_start_matches('_').to_string());
                i += 1;
                if toks.get(i).map(|t| &t.tok) != Some(&Tok::Punct("::")) {
                    return Some((parts, absolute, i));
                }
                i += 1;
            }
        };
        let tok = match kind {
            "prefix" => match rest {
                [Token {
                    tok: Tok::Str(s), ..
                }] => PragmaTok::Prefix(s.clone()),
                _ => return Err(malformed()),
            },
            "ID" => {
                let (name, absolute, n) = scoped(rest).ok_or_else(malformed)?;
                match &rest[n..] {
                    [Token {
                        tok: Tok::Str(s), ..
                    }] => PragmaTok::Id {
                        name,
                        absolute,
                        id: s.clone(),
                    },
                    _ => return Err(malformed()),
                }
            }
            "version" => {
                let (name, absolute, n) = scoped(rest).ok_or_else(malformed)?;
                let text = match &rest[n..] {
                    [Token {
                        tok: Tok::Float(_, t),
                        ..
                    }] => t.clone(),
                    _ => return Err(malformed()),
                };
                let (a, b) = text.split_once('.').ok_or_else(malformed)?;
                let major = a.parse().map_err(|_| malformed())?;
                let minor = b.parse().map_err(|_| malformed())?;
                PragmaTok::Version {
                    name,
                    absolute,
                    major,
                    minor,
                }
            }
            // omniidl's C++ back end directive (`#pragma hh #include ...`), found in the
            // omniORB service IDL: meaningless for Rust, and not worth a warning per build.
            "hh" => return Ok(()),
            other => {
                self.warnings.push(Diagnostic::warning(
                    loc,
                    format!("ignoring unknown #pragma {other}"),
                ));
                return Ok(());
            }
        };
        self.out.push(Token {
            tok: Tok::Pragma(tok),
            loc: loc.clone(),
            space_before: true,
        });
        Ok(())
    }

    /// Macro-expands `toks`; `hide` holds the macros being expanded (no recursion).
    fn expand(&self, toks: &[Token], hide: &mut Vec<String>, depth: u32) -> PResult<Vec<Token>> {
        let mut out = Vec::with_capacity(toks.len());
        let mut i = 0;
        while i < toks.len() {
            let t = &toks[i];
            i += 1;
            let macro_ = match &t.tok {
                Tok::Ident(name) if !hide.contains(name) => {
                    self.macros.get(name).map(|m| (name, m))
                }
                _ => None,
            };
            let Some((name, m)) = macro_ else {
                out.push(t.clone());
                continue;
            };
            if depth >= MAX_MACRO_DEPTH {
                return Err(Diagnostic::error(
                    &t.loc,
                    format!("macro \"{name}\" expanded too deeply"),
                ));
            }
            let relocate = |b: &Token| Token {
                tok: b.tok.clone(),
                loc: t.loc.clone(),
                space_before: b.space_before,
            };
            let body: Vec<Token> = match &m.params {
                None => m.body.iter().map(relocate).collect(),
                Some(params) => {
                    if toks.get(i).map(|t| &t.tok) != Some(&Tok::Punct("(")) {
                        out.push(t.clone());
                        continue;
                    }
                    let (args, next) = collect_args(toks, i + 1).ok_or_else(|| {
                        Diagnostic::error(
                            &t.loc,
                            format!("unterminated argument list invoking macro \"{name}\""),
                        )
                    })?;
                    i = next;
                    let args = if params.is_empty() && args.len() == 1 && args[0].is_empty() {
                        Vec::new()
                    } else {
                        args
                    };
                    if args.len() != params.len() {
                        return Err(Diagnostic::error(
                            &t.loc,
                            format!(
                                "macro \"{name}\" requires {} arguments, but {} given",
                                params.len(),
                                args.len()
                            ),
                        ));
                    }
                    let mut body = Vec::new();
                    let mut j = 0;
                    while j < m.body.len() {
                        let b = &m.body[j];
                        j += 1;
                        let param_of = |tok: Option<&Token>| match tok.map(|t| &t.tok) {
                            Some(Tok::Ident(p)) => params.iter().position(|q| q == p),
                            _ => None,
                        };
                        if b.tok == Tok::Punct("#") {
                            if let Some(k) = param_of(m.body.get(j)) {
                                j += 1;
                                let s: Vec<String> =
                                    args[k].iter().map(|t| tok_text(&t.tok)).collect();
                                body.push(Token {
                                    tok: Tok::Str(s.join(" ")),
                                    loc: t.loc.clone(),
                                    space_before: true,
                                });
                                continue;
                            }
                        }
                        match param_of(Some(b)) {
                            Some(k) => body.extend(self.expand(&args[k], hide, depth + 1)?),
                            None => body.push(relocate(b)),
                        }
                    }
                    body
                }
            };
            hide.push(name.clone());
            let e = self.expand(&body, hide, depth + 1)?;
            hide.pop();
            out.extend(e);
        }
        Ok(out)
    }
}

/// Splits a macro argument list starting after `(`; returns the arguments and the index after `)`.
fn collect_args(toks: &[Token], mut i: usize) -> Option<(Vec<Vec<Token>>, usize)> {
    let mut args = vec![Vec::new()];
    let mut depth = 0usize;
    while let Some(t) = toks.get(i) {
        i += 1;
        match t.tok {
            Tok::Punct("(") => depth += 1,
            Tok::Punct(")") if depth == 0 => return Some((args, i)),
            Tok::Punct(")") => depth -= 1,
            Tok::Punct(",") if depth == 0 => {
                args.push(Vec::new());
                continue;
            }
            _ => {}
        }
        args.last_mut()?.push(t.clone());
    }
    None
}

#[cfg(test)]
#[path = "preprocess_tests.rs"]
mod tests;
