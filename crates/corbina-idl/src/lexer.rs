//! Lexer: turns IDL source text into tokens, tracking line and column.
//!
//! Comments and line continuations are handled here so the preprocessor
//! sees clean logical lines. Lexical errors inside a line become
//! [`Tok::Error`] tokens instead of failing at once, because text inside
//! skipped `#if 0` blocks need not be valid IDL; only an unterminated block
//! comment is fatal.

use crate::diagnostic::{Diagnostic, PResult, SourceLoc};
use std::fmt;
use std::sync::Arc;

/// A `#pragma` (or file-boundary marker) passed from the preprocessor to the parser.
#[derive(Clone, Debug, PartialEq)]
pub enum PragmaTok {
    /// `#pragma prefix "p"`.
    Prefix(String),
    /// `#pragma ID name "id"`.
    Id {
        name: Vec<String>,
        absolute: bool,
        id: String,
    },
    /// `#pragma version name major.minor`.
    Version {
        name: Vec<String>,
        absolute: bool,
        major: u16,
        minor: u16,
    },
    /// Start of an included file's contents.
    EnterFile,
    /// End of an included file's contents.
    ExitFile,
}

/// Token kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// Identifier or keyword (keywords are recognised by the parser).
    Ident(String),
    /// Integer literal.
    Int(u128),
    /// Floating-point literal and its source text.
    Float(f64, String),
    /// Fixed-point literal digits (the `d` suffix removed), e.g. `"1.50"`.
    Fixed(String),
    /// Character literal (ISO Latin-1).
    Char(u8),
    /// Wide character literal.
    WChar(char),
    /// String literal.
    Str(String),
    /// Wide string literal.
    WStr(String),
    /// Punctuation or operator.
    Punct(&'static str),
    /// `<file>` after `#include`.
    HeaderName(String),
    /// End of a physical line (only seen by the preprocessor).
    Newline,
    /// A lexical error, reported only if the token is in active code.
    Error(String),
    /// Pragma or file marker inserted by the preprocessor.
    Pragma(PragmaTok),
    /// End of input.
    Eof,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "'{s}'"),
            Tok::Int(v) => write!(f, "'{v}'"),
            Tok::Float(_, t) => write!(f, "'{t}'"),
            Tok::Fixed(t) => write!(f, "'{t}d'"),
            Tok::Char(_) | Tok::WChar(_) => f.write_str("character literal"),
            Tok::Str(_) | Tok::WStr(_) => f.write_str("string literal"),
            Tok::Punct(p) => write!(f, "'{p}'"),
            Tok::HeaderName(h) => write!(f, "'<{h}>'"),
            Tok::Newline => f.write_str("end of line"),
            Tok::Error(e) => f.write_str(e),
            Tok::Pragma(_) => f.write_str("#pragma"),
            Tok::Eof => f.write_str("end of file"),
        }
    }
}

/// A token with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// What it is.
    pub tok: Tok,
    /// Where it starts.
    pub loc: SourceLoc,
    /// Whitespace (or a comment) precedes it; tells `#define F(x)` from `#define F (x)`.
    pub space_before: bool,
}

const PUNCT3: &[&str] = &[];
const PUNCT2: &[&str] = &["::", "<<", ">>", "==", "!=", "<=", ">=", "&&", "||", "##"];
const PUNCT1: &[&str] = &[
    ";", "{", "}", "(", ")", "<", ">", ",", "=", "+", "-", "*", "/", "%", "~", "|", "^", "&", ":",
    "[", "]", "@", "#", "!", "?", ".",
];

struct Lexer<'a> {
    src: &'a [char],
    pos: usize,
    line: u32,
    col: u32,
    file: Arc<str>,
    main: bool,
    out: Vec<Token>,
}

/// Tokenize `text` from `file`. `main` marks tokens as coming from the main file.
pub fn lex(text: &str, file: &Arc<str>, main: bool) -> PResult<Vec<Token>> {
    let chars: Vec<char> = text.chars().collect();
    let mut lx = Lexer {
        src: &chars,
        pos: 0,
        line: 1,
        col: 1,
        file: file.clone(),
        main,
        out: Vec::new(),
    };
    lx.run()?;
    Ok(lx.out)
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl Lexer<'_> {
    fn peek(&self, n: usize) -> Option<char> {
        self.src.get(self.pos + n).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn loc(&self) -> SourceLoc {
        SourceLoc {
            file: self.file.clone(),
            line: self.line,
            col: self.col,
            main_file: self.main,
        }
    }

    /// True if the last tokens on the current line are `#` `include` (at line start).
    fn after_include(&self) -> bool {
        let n = self.out.len();
        if n < 2 {
            return false;
        }
        let hash_at_start = n == 2 || self.out[n - 3].tok == Tok::Newline;
        hash_at_start
            && self.out[n - 2].tok == Tok::Punct("#")
            && self.out[n - 1].tok == Tok::Ident("include".into())
    }

    fn run(&mut self) -> PResult<()> {
        let mut space = true;
        while let Some(c) = self.peek(0) {
            // Line continuation: backslash-newline joins lines.
            if c == '\\'
                && (self.peek(1) == Some('\n')
                    || (self.peek(1) == Some('\r') && self.peek(2) == Some('\n')))
            {
                self.bump();
                if self.peek(0) == Some('\r') {
                    self.bump();
                }
                self.bump();
                space = true;
                continue;
            }
            if c == '\n' {
                let loc = self.loc();
                self.bump();
                self.out.push(Token {
                    tok: Tok::Newline,
                    loc,
                    space_before: space,
                });
                space = true;
                continue;
            }
            if c.is_whitespace() {
                self.bump();
                space = true;
                continue;
            }
            if c == '/' && self.peek(1) == Some('/') {
                while let Some(c) = self.peek(0) {
                    if c == '\n' {
                        break;
                    }
                    self.bump();
                }
                space = true;
                continue;
            }
            if c == '/' && self.peek(1) == Some('*') {
                let start = self.loc();
                self.bump();
                self.bump();
                loop {
                    match self.peek(0) {
                        None => return Err(Diagnostic::error(&start, "unterminated comment")),
                        Some('*') if self.peek(1) == Some('/') => {
                            self.bump();
                            self.bump();
                            break;
                        }
                        Some(_) => {
                            self.bump();
                        }
                    }
                }
                space = true;
                continue;
            }
            let loc = self.loc();
            let tok = self.token(c);
            self.out.push(Token {
                tok,
                loc,
                space_before: space,
            });
            space = false;
        }
        let loc = self.loc();
        self.out.push(Token {
            tok: Tok::Newline,
            loc,
            space_before: true,
        });
        Ok(())
    }

    fn token(&mut self, c: char) -> Tok {
        if c == '<' && self.after_include() {
            self.bump();
            let mut name = String::new();
            while let Some(c) = self.peek(0) {
                if c == '>' {
                    self.bump();
                    return Tok::HeaderName(name);
                }
                if c == '\n' {
                    break;
                }
                name.push(c);
                self.bump();
            }
            return Tok::Error("missing '>' in #include".into());
        }
        if c == 'L' && matches!(self.peek(1), Some('\'') | Some('"')) {
            self.bump();
            let q = self.bump().unwrap_or('"');
            return self.quoted(q, true);
        }
        if is_ident_start(c) {
            let mut s = String::new();
            while let Some(c) = self.peek(0) {
                if !is_ident_char(c) {
                    break;
                }
                s.push(c);
                self.bump();
            }
            return Tok::Ident(s);
        }
        if c.is_ascii_digit() || (c == '.' && self.peek(1).is_some_and(|d| d.is_ascii_digit())) {
            return self.number();
        }
        if c == '"' || c == '\'' {
            self.bump();
            return self.quoted(c, false);
        }
        for p in PUNCT3.iter().chain(PUNCT2).chain(PUNCT1) {
            if p.chars()
                .enumerate()
                .all(|(i, pc)| self.peek(i) == Some(pc))
            {
                for _ in 0..p.len() {
                    self.bump();
                }
                return Tok::Punct(p);
            }
        }
        self.bump();
        Tok::Error(format!("unexpected character '{}'", c.escape_default()))
    }

    fn number(&mut self) -> Tok {
        let mut text = String::new();
        if self.peek(0) == Some('0') && matches!(self.peek(1), Some('x') | Some('X')) {
            self.bump();
            self.bump();
            let mut v: Option<u128> = Some(0);
            let mut any = false;
            while let Some(d) = self.peek(0).and_then(|c| c.to_digit(16)) {
                v = v
                    .and_then(|v| v.checked_mul(16))
                    .and_then(|v| v.checked_add(d as u128));
                any = true;
                self.bump();
            }
            return self.finish_int(v, any, "hexadecimal");
        }
        while let Some(c) = self.peek(0) {
            if !c.is_ascii_digit() {
                break;
            }
            text.push(c);
            self.bump();
        }
        let mut is_float = false;
        if self.peek(0) == Some('.') {
            is_float = true;
            text.push('.');
            self.bump();
            while let Some(c) = self.peek(0) {
                if !c.is_ascii_digit() {
                    break;
                }
                text.push(c);
                self.bump();
            }
        }
        if matches!(self.peek(0), Some('d') | Some('D')) {
            self.bump();
            if self.peek(0).is_some_and(is_ident_char) {
                return self.bad_suffix();
            }
            return Tok::Fixed(text);
        }
        if matches!(self.peek(0), Some('e') | Some('E')) {
            let save = (self.pos, self.line, self.col);
            let mut exp = String::from("e");
            self.bump();
            if let Some(s @ ('+' | '-')) = self.peek(0) {
                exp.push(s);
                self.bump();
            }
            if self.peek(0).is_some_and(|c| c.is_ascii_digit()) {
                while let Some(c) = self.peek(0) {
                    if !c.is_ascii_digit() {
                        break;
                    }
                    exp.push(c);
                    self.bump();
                }
                text.push_str(&exp);
                is_float = true;
            } else {
                (self.pos, self.line, self.col) = save;
            }
        }
        if self.peek(0).is_some_and(is_ident_char) {
            return self.bad_suffix();
        }
        if is_float {
            return match text.parse::<f64>() {
                Ok(v) => Tok::Float(v, text),
                Err(_) => Tok::Error(format!("invalid floating-point literal '{text}'")),
            };
        }
        if text.len() > 1 && text.starts_with('0') {
            let mut v: Option<u128> = Some(0);
            for c in text.chars() {
                let Some(d) = c.to_digit(8) else {
                    return Tok::Error(format!("invalid digit '{c}' in octal constant"));
                };
                v = v
                    .and_then(|v| v.checked_mul(8))
                    .and_then(|v| v.checked_add(d as u128));
            }
            return self.finish_int(v, true, "octal");
        }
        match text.parse::<u128>() {
            Ok(v) => Tok::Int(v),
            Err(_) => Tok::Error("integer literal is too large".into()),
        }
    }

    fn finish_int(&mut self, v: Option<u128>, any: bool, what: &str) -> Tok {
        if !any {
            return Tok::Error(format!("invalid {what} constant"));
        }
        if self.peek(0).is_some_and(is_ident_char) {
            return self.bad_suffix();
        }
        match v {
            Some(v) => Tok::Int(v),
            None => Tok::Error("integer literal is too large".into()),
        }
    }

    fn bad_suffix(&mut self) -> Tok {
        let mut s = String::new();
        while let Some(c) = self.peek(0) {
            if !is_ident_char(c) {
                break;
            }
            s.push(c);
            self.bump();
        }
        Tok::Error(format!("invalid suffix '{s}' on numeric literal"))
    }

    /// Lexes the rest of a character or string literal after the opening quote.
    fn quoted(&mut self, q: char, wide: bool) -> Tok {
        let mut s = String::new();
        loop {
            match self.peek(0) {
                None | Some('\n') => {
                    let what = if q == '"' { "string" } else { "character" };
                    return Tok::Error(format!("unterminated {what} literal"));
                }
                Some(c) if c == q => {
                    self.bump();
                    break;
                }
                Some('\\') => {
                    self.bump();
                    match self.escape() {
                        Ok(c) => s.push(c),
                        Err(e) => {
                            self.skip_to_quote(q);
                            return Tok::Error(e);
                        }
                    }
                }
                Some(c) => {
                    s.push(c);
                    self.bump();
                }
            }
        }
        if q == '"' {
            if !wide && s.contains('\0') {
                return Tok::Error("string literal contains a nul character".into());
            }
            return if wide { Tok::WStr(s) } else { Tok::Str(s) };
        }
        let mut it = s.chars();
        match (it.next(), it.next()) {
            (Some(c), None) if wide => Tok::WChar(c),
            (Some(c), None) if (c as u32) <= 0xFF => Tok::Char(c as u8),
            (Some(_), None) => Tok::Error("character literal is not in ISO Latin-1".into()),
            (None, _) => Tok::Error("empty character literal".into()),
            _ => Tok::Error("character literal contains more than one character".into()),
        }
    }

    fn skip_to_quote(&mut self, q: char) {
        while let Some(c) = self.peek(0) {
            if c == '\n' {
                return;
            }
            self.bump();
            if c == q {
                return;
            }
        }
    }

    fn escape(&mut self) -> Result<char, String> {
        let Some(c) = self.bump() else {
            return Err("unterminated escape sequence".into());
        };
        let digits = |lx: &mut Self, radix: u32, max: usize| {
            let mut v: u32 = 0;
            let mut n = 0;
            while n < max {
                match lx.peek(0).and_then(|c| c.to_digit(radix)) {
                    Some(d) => {
                        v = v * radix + d;
                        lx.bump();
                        n += 1;
                    }
                    None => break,
                }
            }
            (v, n)
        };
        Ok(match c {
            'n' => '\n',
            't' => '\t',
            'v' => '\u{b}',
            'b' => '\u{8}',
            'r' => '\r',
            'f' => '\u{c}',
            'a' => '\u{7}',
            '\\' | '?' | '\'' | '"' => c,
            '0'..='7' => {
                self.pos -= 1;
                self.col -= 1;
                let (v, _) = digits(self, 8, 3);
                char::from_u32(v).ok_or("invalid octal escape")?
            }
            'x' => {
                let (v, n) = digits(self, 16, 2);
                if n == 0 {
                    return Err("\\x used with no following hex digits".into());
                }
                char::from_u32(v).ok_or("invalid hex escape")?
            }
            'u' => {
                let (v, n) = digits(self, 16, 4);
                if n == 0 {
                    return Err("\\u used with no following hex digits".into());
                }
                char::from_u32(v).ok_or("invalid unicode escape")?
            }
            other => {
                return Err(format!(
                    "unknown escape sequence '\\{}'",
                    other.escape_default()
                ))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        let f: Arc<str> = "t.idl".into();
        lex(s, &f, true)
            .unwrap()
            .into_iter()
            .map(|t| t.tok)
            .filter(|t| *t != Tok::Newline)
            .collect()
    }

    #[test]
    fn identifiers_numbers_and_punct() {
        assert_eq!(
            toks("a::b 0x1F 017 42 1.5 2e3 1.25d << >>"),
            vec![
                Tok::Ident("a".into()),
                Tok::Punct("::"),
                Tok::Ident("b".into()),
                Tok::Int(31),
                Tok::Int(15),
                Tok::Int(42),
                Tok::Float(1.5, "1.5".into()),
                Tok::Float(2000.0, "2e3".into()),
                Tok::Fixed("1.25".into()),
                Tok::Punct("<<"),
                Tok::Punct(">>"),
            ]
        );
    }

    #[test]
    fn literals_and_escapes() {
        assert_eq!(
            toks(r#"'a' '\n' '\x41' '\101' L'\u263A' "hi\t" L"w""#),
            vec![
                Tok::Char(b'a'),
                Tok::Char(b'\n'),
                Tok::Char(b'A'),
                Tok::Char(b'A'),
                Tok::WChar('\u{263A}'),
                Tok::Str("hi\t".into()),
                Tok::WStr("w".into()),
            ]
        );
    }

    #[test]
    fn comments_and_continuations() {
        assert_eq!(
            toks("a /* x\n y */ b // c\n d \\\n e"),
            ["a", "b", "d", "e"]
                .iter()
                .map(|s| Tok::Ident(s.to_string()))
                .collect::<Vec<_>>()
        );
        let f: Arc<str> = "t.idl".into();
        let all = lex("a\n  b", &f, true).unwrap();
        assert_eq!((all[2].loc.line, all[2].loc.col), (2, 3));
    }

    #[test]
    fn errors() {
        let f: Arc<str> = "t.idl".into();
        let e = lex("a /* never", &f, true).unwrap_err();
        assert_eq!(e.to_string(), "t.idl:1:3: error: unterminated comment");
        assert!(matches!(toks("'ab'")[0], Tok::Error(_)));
        assert!(matches!(toks("\"abc")[0], Tok::Error(_)));
        assert!(matches!(toks("12abc")[0], Tok::Error(_)));
        assert!(matches!(toks("$")[0], Tok::Error(_)));
        assert!(matches!(toks("099")[0], Tok::Error(_)));
    }

    #[test]
    fn header_name_only_after_include() {
        assert_eq!(
            toks("#include <a/b.idl>"),
            vec![
                Tok::Punct("#"),
                Tok::Ident("include".into()),
                Tok::HeaderName("a/b.idl".into())
            ]
        );
    }
}
