//! Recursive-descent parser for OMG IDL 3.5 (definitions; types and
//! expressions live in `parse_types.rs`).

use crate::ast::*;
use crate::diagnostic::{Diagnostic, Diagnostics, PResult, SourceLoc};
use crate::lexer::{PragmaTok, Tok, Token};

/// Deepest nesting of scopes, types and expressions accepted, so hostile
/// input cannot overflow the stack.
pub const MAX_NESTING: u32 = 256;

/// IDL 3.5 keywords (case-sensitive).
pub const KEYWORDS: &[&str] = &[
    "abstract",
    "any",
    "attribute",
    "boolean",
    "case",
    "char",
    "component",
    "const",
    "consumes",
    "context",
    "custom",
    "default",
    "double",
    "emits",
    "enum",
    "eventtype",
    "exception",
    "factory",
    "FALSE",
    "finder",
    "fixed",
    "float",
    "getraises",
    "home",
    "import",
    "in",
    "inout",
    "interface",
    "local",
    "long",
    "module",
    "multiple",
    "native",
    "Object",
    "octet",
    "oneway",
    "out",
    "primarykey",
    "private",
    "provides",
    "public",
    "publishes",
    "raises",
    "readonly",
    "setraises",
    "sequence",
    "short",
    "string",
    "struct",
    "supports",
    "switch",
    "TRUE",
    "truncatable",
    "typedef",
    "typeid",
    "typeprefix",
    "unsigned",
    "union",
    "uses",
    "ValueBase",
    "valuetype",
    "void",
    "wchar",
    "wstring",
];

/// The keywords CORBA 3 added (components, events, `typeid`/`typeprefix`, `getraises`).
const CORBA3_KEYWORDS: &[&str] = &[
    "component",
    "consumes",
    "emits",
    "eventtype",
    "finder",
    "getraises",
    "home",
    "import",
    "multiple",
    "primarykey",
    "provides",
    "publishes",
    "setraises",
    "typeid",
    "typeprefix",
    "uses",
];

/// True for IDL keywords.
pub fn is_keyword(s: &str) -> bool {
    KEYWORDS.contains(&s)
}

/// Parser over the preprocessed token stream.
pub struct Parser<'w> {
    pub(crate) toks: Vec<Token>,
    pub(crate) pos: usize,
    pending: Vec<(PragmaTok, SourceLoc)>,
    pub(crate) warnings: &'w mut Vec<Diagnostic>,
    pub(crate) depth: u32,
    /// While > 0, `>>` closes template brackets instead of shifting.
    pub(crate) in_template: u32,
    /// Declared identifiers colliding with CORBA 2 keywords only warn.
    relaxed_names: bool,
    /// Syntax errors recovered from (the definition skipped), in source order.
    errors: Vec<Diagnostic>,
}

/// Errors after which the parser stops recovering: later ones are likely echoes.
const MAX_ERRORS: usize = 20;

/// What kind of body a definition list belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Body {
    Module,
    Interface,
    Value,
}

impl<'w> Parser<'w> {
    /// A parser for `toks` (which must end with [`Tok::Eof`]).
    pub fn new(toks: Vec<Token>, warnings: &'w mut Vec<Diagnostic>) -> Self {
        Parser {
            toks,
            pos: 0,
            pending: Vec::new(),
            warnings,
            depth: 0,
            in_template: 0,
            relaxed_names: false,
            errors: Vec::new(),
        }
    }

    /// Parses a whole specification; the first syntax error.
    pub fn parse_specification(self) -> PResult<Vec<Def>> {
        self.parse_specification_all()
            .map_err(|mut d| d.0.remove(0))
    }

    /// Parses a whole specification; every syntax error it recovers from (a definition
    /// with an error is skipped up to its `;`), in source order.
    pub fn parse_specification_all(mut self) -> Result<Vec<Def>, Diagnostics> {
        let mut defs = Vec::new();
        let stopped = (|| loop {
            self.skip_annotations()?;
            self.flush_pragmas(&mut defs);
            if self.peek().tok == Tok::Eof {
                return Ok(());
            }
            self.definition_or_skip(&mut defs, Body::Module, true)?;
        })();
        if let Err(e) = stopped {
            self.errors.push(e);
        }
        if self.errors.is_empty() {
            Ok(defs)
        } else {
            Err(Diagnostics(self.errors))
        }
    }

    /// A definition; after a syntax error, the error is kept and the tokens up to the end
    /// of the definition skipped, so the next one is parsed.
    fn definition_or_skip(&mut self, defs: &mut Vec<Def>, body: Body, top: bool) -> PResult<()> {
        let (depth, in_template, start) = (self.depth, self.in_template, self.pos);
        let Err(e) = self.definition(defs, body) else {
            return Ok(());
        };
        // Too many errors, or nesting past the limit: stop (recovery would not end well).
        if self.errors.len() + 1 >= MAX_ERRORS || self.depth > MAX_NESTING {
            return Err(e);
        }
        self.errors.push(e);
        self.depth = depth;
        self.in_template = in_template;
        // The braces the definition opened before the error are closed before its `;`.
        let open = self.toks[start..self.pos]
            .iter()
            .fold(0u32, |d, t| match t.tok {
                Tok::Punct("{") => d + 1,
                Tok::Punct("}") => d.saturating_sub(1),
                _ => d,
            });
        self.skip_definition(open, top);
        if self.pos == start {
            // Nothing consumed: a stray token; step over it.
            self.bump();
        }
        Ok(())
    }

    /// Skips to just past the `;` ending the current definition (`depth` of its braces
    /// still open), or to the `}` closing the body it is in (left for the body to eat), or
    /// to the end of the file.
    fn skip_definition(&mut self, mut depth: u32, top: bool) {
        loop {
            match &self.peek().tok {
                Tok::Eof => return,
                Tok::Punct("{") => depth += 1,
                Tok::Punct("}") if depth == 0 => {
                    if top {
                        self.bump();
                        continue;
                    }
                    return;
                }
                Tok::Punct("}") => depth -= 1,
                Tok::Punct(";") if depth == 0 => {
                    self.bump();
                    return;
                }
                _ => {}
            }
            self.bump();
        }
    }

    // ---- token helpers -------------------------------------------------

    pub(crate) fn peek(&mut self) -> &Token {
        while let Tok::Pragma(p) = &self.toks[self.pos].tok {
            self.pending
                .push((p.clone(), self.toks[self.pos].loc.clone()));
            self.pos += 1;
        }
        &self.toks[self.pos]
    }

    pub(crate) fn loc(&mut self) -> SourceLoc {
        self.peek().loc.clone()
    }

    pub(crate) fn bump(&mut self) -> Token {
        let t = self.peek().clone();
        if t.tok != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    pub(crate) fn is_punct(&mut self, p: &str) -> bool {
        matches!(&self.peek().tok, Tok::Punct(q) if *q == p)
    }

    pub(crate) fn is_kw(&mut self, kw: &str) -> bool {
        matches!(&self.peek().tok, Tok::Ident(s) if s == kw)
    }

    pub(crate) fn eat_punct(&mut self, p: &str) -> bool {
        let yes = self.is_punct(p);
        if yes {
            self.bump();
        }
        yes
    }

    pub(crate) fn eat_kw(&mut self, kw: &str) -> bool {
        let yes = self.is_kw(kw);
        if yes {
            self.bump();
        }
        yes
    }

    pub(crate) fn unexpected(&mut self, what: &str) -> Diagnostic {
        let t = self.peek().clone();
        let found = match &t.tok {
            Tok::Ident(s) if is_keyword(s) => format!("keyword '{s}'"),
            Tok::Error(e) => return Diagnostic::error(&t.loc, e.clone()),
            other => other.to_string(),
        };
        let message = format!("expected {what}, found {found}");
        // A `;` or `,` missing at the end of a line belongs to that line, as rustc says it:
        // reported just past the token before, not at the next line's first token.
        if what == "';'" || what == "','" {
            if let Some(end) = self.end_of_previous_token() {
                if end.file != t.loc.file || end.line < t.loc.line {
                    return Diagnostic::error(&end, message)
                        .with_label(format!("expected {what} here"));
                }
            }
        }
        Diagnostic::error(&t.loc, message).with_label(format!("expected {what}"))
    }

    /// Where the token before the current one ends (for identifiers and punctuation, whose
    /// text is what they print; other tokens: where they start).
    fn end_of_previous_token(&self) -> Option<SourceLoc> {
        let prev = self.toks[..self.pos]
            .iter()
            .rev()
            .find(|t| !matches!(t.tok, Tok::Pragma(_) | Tok::Newline))?;
        let mut end = prev.loc.clone();
        let len = match &prev.tok {
            Tok::Ident(s) => s.chars().count(),
            Tok::Punct(p) => p.chars().count(),
            _ => 0,
        };
        end.col += u32::try_from(len).unwrap_or(0);
        Some(end)
    }

    pub(crate) fn expect_punct(&mut self, p: &str) -> PResult<()> {
        // `>>` closing two template brackets is split into two `>`.
        if p == ">" && self.is_punct(">>") {
            let t = &mut self.toks[self.pos];
            t.tok = Tok::Punct(">");
            t.loc.col += 1;
            return Ok(());
        }
        if self.eat_punct(p) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{p}'")))
        }
    }

    pub(crate) fn expect_kw(&mut self, kw: &str) -> PResult<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{kw}'")))
        }
    }

    /// Reports identifiers that differ from a keyword only in case as warnings instead of
    /// errors (see [`crate::Frontend::relaxed_names`]).
    pub fn relaxed_names(mut self, relaxed: bool) -> Self {
        self.relaxed_names = relaxed;
        self
    }

    /// An identifier being declared (not a keyword); a leading `_` escape is stripped.
    pub(crate) fn ident(&mut self) -> PResult<Ident> {
        self.ident_checked(true)
    }

    /// An identifier; `declaring` is false for the parts of a scoped name that is used.
    pub(crate) fn ident_checked(&mut self, declaring: bool) -> PResult<Ident> {
        let t = self.peek().clone();
        match &t.tok {
            Tok::Ident(s) if !is_keyword(s) => {
                self.bump();
                // CORBA 3.0 §3.2.4: an identifier differing from a keyword only in case is
                // illegal. As omniidl does, only declarations are refused, and not for the
                // keywords CORBA 3 added: older IDL (the OMG's Security.idl has `EventType`)
                // predates them. Uses only warn (the declaration was escaped, `_ValueType`).
                if let Some(kw) = KEYWORDS.iter().find(|k| k.eq_ignore_ascii_case(s)) {
                    let msg = format!(
                        "identifier '{s}' collides with keyword '{kw}' (differs only in case)"
                    );
                    if !declaring || self.relaxed_names || CORBA3_KEYWORDS.contains(kw) {
                        self.warnings.push(Diagnostic::warning(&t.loc, msg));
                    } else {
                        return Err(Diagnostic::error(&t.loc, msg));
                    }
                }
                let name = s.strip_prefix('_').unwrap_or(s).to_string();
                if name.is_empty() {
                    return Err(Diagnostic::error(
                        &t.loc,
                        "identifier '_' is empty after escape",
                    ));
                }
                Ok(Ident { name, loc: t.loc })
            }
            _ => Err(self.unexpected("identifier")),
        }
    }

    pub(crate) fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            let loc = self.loc();
            return Err(Diagnostic::error(
                &loc,
                format!("nesting too deep (limit {MAX_NESTING})"),
            ));
        }
        Ok(())
    }

    pub(crate) fn leave(&mut self) {
        self.depth -= 1;
    }

    fn flush_pragmas(&mut self, defs: &mut Vec<Def>) {
        self.peek();
        defs.extend(self.pending.drain(..).map(|(p, l)| Def::Pragma(p, l)));
    }

    /// Skips IDL 4 annotations (`@key`, `@range(min=1)`), warning about each.
    pub(crate) fn skip_annotations(&mut self) -> PResult<()> {
        while self.is_punct("@") {
            let at = self.bump().loc;
            if self.is_kw("annotation") {
                return Err(Diagnostic::error(
                    &at,
                    "annotation definitions are not supported",
                ));
            }
            let name = self.scoped_name()?;
            if self.is_punct("(") {
                let mut depth = 0u32;
                loop {
                    let t = self.bump();
                    match t.tok {
                        Tok::Punct("(") => depth += 1,
                        Tok::Punct(")") => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        Tok::Eof => return Err(Diagnostic::error(&at, "unterminated annotation")),
                        _ => {}
                    }
                }
            }
            self.warnings.push(Diagnostic::warning(
                &at,
                format!("ignoring annotation @{name}"),
            ));
        }
        Ok(())
    }

    // ---- definitions ----------------------------------------------------

    fn body(&mut self, kind: Body) -> PResult<Vec<Def>> {
        self.expect_punct("{")?;
        self.enter()?;
        let mut defs = Vec::new();
        loop {
            self.skip_annotations()?;
            self.flush_pragmas(&mut defs);
            if self.eat_punct("}") {
                break;
            }
            if self.peek().tok == Tok::Eof {
                return Err(self.unexpected("'}'"));
            }
            self.definition_or_skip(&mut defs, kind, false)?;
        }
        self.leave();
        Ok(defs)
    }

    fn definition(&mut self, defs: &mut Vec<Def>, body: Body) -> PResult<()> {
        let kw = match &self.peek().tok {
            Tok::Ident(s) if is_keyword(s) => s.clone(),
            _ if body == Body::Module => return Err(self.unexpected("definition")),
            _ => String::new(),
        };
        let def = match kw.as_str() {
            "module" if body == Body::Module => {
                self.bump();
                let name = self.ident()?;
                let defs = self.body(Body::Module)?;
                Def::Module { name, defs }
            }
            "interface" | "abstract" | "local" | "custom" | "valuetype" | "eventtype"
                if body == Body::Module =>
            {
                self.interface_or_value()?
            }
            "struct" | "union" | "enum" => match self.constructed()? {
                Some(d) => d,
                None => {
                    return Err(self.unexpected("definition"));
                }
            },
            "exception" => {
                self.bump();
                let name = self.ident()?;
                Def::Exception {
                    name,
                    members: self.members()?,
                }
            }
            "typedef" => {
                self.bump();
                let ty = self.type_spec(true)?;
                Def::Typedef {
                    ty,
                    declarators: self.declarators()?,
                }
            }
            "native" => {
                self.bump();
                Def::Native {
                    name: self.ident()?,
                }
            }
            "const" => {
                self.bump();
                let ty = self.const_type()?;
                let name = self.ident()?;
                self.expect_punct("=")?;
                Def::Const {
                    ty,
                    name,
                    expr: self.expr()?,
                }
            }
            "typeid" | "typeprefix" => {
                self.bump();
                let name = self.scoped_name()?;
                let Tok::Str(s) = self.peek().tok.clone() else {
                    return Err(self.unexpected("string literal"));
                };
                self.bump();
                if kw == "typeid" {
                    Def::TypeId { name, id: s }
                } else {
                    Def::TypePrefix { name, prefix: s }
                }
            }
            "component" | "home" | "import" | "porttype" | "connector" => {
                let loc = self.loc();
                return Err(Diagnostic::error(
                    &loc,
                    format!("'{kw}' declarations are not supported"),
                ));
            }
            "readonly" | "attribute" if body != Body::Module => self.attribute()?,
            "public" | "private" if body == Body::Value => {
                let public = self.bump().tok == Tok::Ident("public".into());
                let ty = self.type_spec(true)?;
                Def::StateMember {
                    public,
                    ty,
                    declarators: self.declarators()?,
                }
            }
            "factory" if body == Body::Value => {
                self.bump();
                let name = self.ident()?;
                let params = self.params(true)?;
                let raises = self.raises("raises")?;
                Def::Initializer {
                    name,
                    params,
                    raises,
                }
            }
            _ if body != Body::Module => self.operation()?,
            _ => return Err(self.unexpected("definition")),
        };
        self.expect_punct(";")?;
        defs.push(def);
        Ok(())
    }

    /// `struct`/`union`/`enum` definitions (also used inline in type specs).
    pub(crate) fn constructed(&mut self) -> PResult<Option<Def>> {
        if self.eat_kw("struct") {
            let name = self.ident()?;
            if self.is_punct(";") {
                return Ok(Some(Def::StructForward { name }));
            }
            return Ok(Some(Def::Struct {
                name,
                members: self.members()?,
            }));
        }
        if self.eat_kw("union") {
            let name = self.ident()?;
            if self.is_punct(";") {
                return Ok(Some(Def::UnionForward { name }));
            }
            self.expect_kw("switch")?;
            self.expect_punct("(")?;
            self.skip_annotations()?;
            let switch = self.type_spec(true)?;
            self.expect_punct(")")?;
            self.expect_punct("{")?;
            self.enter()?;
            let mut cases = Vec::new();
            // IDL grammar: `<switch_body> ::= <case>+`.
            while cases.is_empty() || !self.eat_punct("}") {
                self.skip_annotations()?;
                let mut labels = Vec::new();
                loop {
                    if self.eat_kw("case") {
                        labels.push(CaseLabel::Value(self.expr()?));
                    } else if self.is_kw("default") {
                        labels.push(CaseLabel::Default(self.bump().loc));
                    } else if labels.is_empty() {
                        return Err(self.unexpected("'case' or 'default'"));
                    } else {
                        break;
                    }
                    self.expect_punct(":")?;
                    self.skip_annotations()?;
                }
                let ty = self.type_spec(true)?;
                let declarator = self.declarator()?;
                self.expect_punct(";")?;
                cases.push(Case {
                    labels,
                    ty,
                    declarator,
                });
            }
            self.leave();
            return Ok(Some(Def::Union {
                name,
                switch,
                cases,
            }));
        }
        if self.eat_kw("enum") {
            let name = self.ident()?;
            self.expect_punct("{")?;
            let mut enumerators = Vec::new();
            loop {
                self.skip_annotations()?;
                enumerators.push(self.ident()?);
                if !self.eat_punct(",") {
                    break;
                }
            }
            self.expect_punct("}")?;
            return Ok(Some(Def::Enum { name, enumerators }));
        }
        Ok(None)
    }

    fn members(&mut self) -> PResult<Vec<Member>> {
        self.expect_punct("{")?;
        self.enter()?;
        let mut members = Vec::new();
        loop {
            self.skip_annotations()?;
            if self.eat_punct("}") {
                break;
            }
            let ty = self.type_spec(true)?;
            let declarators = self.declarators()?;
            self.expect_punct(";")?;
            members.push(Member { ty, declarators });
        }
        self.leave();
        Ok(members)
    }

    pub(crate) fn declarator(&mut self) -> PResult<Declarator> {
        let name = self.ident()?;
        let mut dims = Vec::new();
        while self.eat_punct("[") {
            dims.push(self.expr()?);
            self.expect_punct("]")?;
        }
        Ok(Declarator { name, dims })
    }

    fn declarators(&mut self) -> PResult<Vec<Declarator>> {
        let mut ds = vec![self.declarator()?];
        while self.eat_punct(",") {
            ds.push(self.declarator()?);
        }
        Ok(ds)
    }

    fn scoped_names(&mut self) -> PResult<Vec<ScopedNameRef>> {
        let mut v = vec![self.scoped_name()?];
        while self.eat_punct(",") {
            v.push(self.scoped_name()?);
        }
        Ok(v)
    }

    fn interface_or_value(&mut self) -> PResult<Def> {
        let mut is_abstract = false;
        let mut is_local = false;
        let mut is_custom = false;
        if self.eat_kw("abstract") {
            is_abstract = true;
        } else if self.eat_kw("local") {
            is_local = true;
        } else if self.eat_kw("custom") {
            is_custom = true;
        }
        if self.eat_kw("interface") {
            if is_custom {
                return Err(self.unexpected("'valuetype'"));
            }
            let name = self.ident()?;
            let flags = InterfaceFlags {
                is_abstract,
                is_local,
            };
            if self.is_punct(";") {
                return Ok(Def::InterfaceForward { name, flags });
            }
            let bases = if self.eat_punct(":") {
                self.scoped_names()?
            } else {
                Vec::new()
            };
            let body = self.body(Body::Interface)?;
            return Ok(Def::Interface {
                name,
                flags,
                bases,
                body,
            });
        }
        let is_event = if self.eat_kw("valuetype") {
            false
        } else if self.eat_kw("eventtype") {
            true
        } else {
            return Err(self.unexpected("'interface' or 'valuetype'"));
        };
        if is_local {
            return Err(self.unexpected("'interface'"));
        }
        let name = self.ident()?;
        if self.is_punct(";") {
            return Ok(Def::ValueForward {
                name,
                is_abstract,
                is_event,
            });
        }
        let mut header = ValueHeader {
            is_abstract,
            is_custom,
            is_event,
            ..Default::default()
        };
        if !is_abstract
            && !is_custom
            && !is_event
            && !self.is_punct(":")
            && !self.is_punct("{")
            && !self.is_kw("supports")
        {
            let ty = self.type_spec(true)?;
            return Ok(Def::ValueBox { name, ty });
        }
        if self.eat_punct(":") {
            if self.is_kw("truncatable") {
                header.truncatable = Some(self.bump().loc);
            }
            header.bases = self.scoped_names()?;
        }
        if self.eat_kw("supports") {
            header.supports = self.scoped_names()?;
        }
        let body = self.body(Body::Value)?;
        Ok(Def::ValueType { name, header, body })
    }

    fn raises(&mut self, kw: &str) -> PResult<Vec<ScopedNameRef>> {
        if !self.eat_kw(kw) {
            return Ok(Vec::new());
        }
        self.expect_punct("(")?;
        let v = self.scoped_names()?;
        self.expect_punct(")")?;
        Ok(v)
    }

    fn params(&mut self, init: bool) -> PResult<Vec<Param>> {
        self.expect_punct("(")?;
        let mut params = Vec::new();
        if self.eat_punct(")") {
            return Ok(params);
        }
        loop {
            self.skip_annotations()?;
            let dir = if self.eat_kw("in") {
                ParamDir::In
            } else if !init && self.eat_kw("out") {
                ParamDir::Out
            } else if !init && self.eat_kw("inout") {
                ParamDir::InOut
            } else {
                return Err(self.unexpected(if init {
                    "'in'"
                } else {
                    "parameter direction ('in', 'out' or 'inout')"
                }));
            };
            let ty = self.type_spec(false)?;
            let name = self.ident()?;
            params.push(Param { dir, ty, name });
            if !self.eat_punct(",") {
                break;
            }
        }
        self.expect_punct(")")?;
        Ok(params)
    }

    fn operation(&mut self) -> PResult<Def> {
        let oneway = self.eat_kw("oneway");
        let ret = if self.eat_kw("void") {
            None
        } else {
            Some(self.type_spec(false)?)
        };
        let name = self.ident()?;
        let params = self.params(false)?;
        let raises = self.raises("raises")?;
        let mut contexts = Vec::new();
        if self.eat_kw("context") {
            self.expect_punct("(")?;
            loop {
                match self.peek().tok.clone() {
                    Tok::Str(s) => {
                        let loc = self.bump().loc;
                        if !valid_context_name(&s) {
                            return Err(Diagnostic::error(
                                &loc,
                                format!("invalid context name \"{s}\": it must start with a letter, continue with letters, digits, '.' or '_', and may end with one '*'"),
                            ));
                        }
                        contexts.push(s);
                    }
                    _ => return Err(self.unexpected("string literal")),
                }
                if !self.eat_punct(",") {
                    break;
                }
            }
            self.expect_punct(")")?;
        }
        Ok(Def::Operation {
            name,
            oneway,
            ret,
            params,
            raises,
            contexts,
        })
    }

    fn attribute(&mut self) -> PResult<Def> {
        let readonly = self.eat_kw("readonly");
        self.expect_kw("attribute")?;
        let ty = self.type_spec(false)?;
        let mut names = vec![self.ident()?];
        while self.eat_punct(",") {
            names.push(self.ident()?);
        }
        let (mut get_raises, mut set_raises) = (Vec::new(), Vec::new());
        if names.len() == 1 {
            if readonly {
                get_raises = self.raises("raises")?;
            } else {
                get_raises = self.raises("getraises")?;
                set_raises = self.raises("setraises")?;
            }
        }
        Ok(Def::Attribute {
            readonly,
            ty,
            names,
            get_raises,
            set_raises,
        })
    }
}

/// CORBA 3.0 §3.13.4: a context name starts with a letter and continues with letters, digits,
/// periods and underscores; a `*` may only be its last character.
fn valid_context_name(s: &str) -> bool {
    let body = s.strip_suffix('*').unwrap_or(s);
    let mut chars = body.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;

/// Stack given to the thread that parses and resolves, so that input nested
/// up to [`MAX_NESTING`] fits even in unoptimised builds.
pub const STACK_SIZE: usize = 256 << 20;

/// Runs `f` on a thread with a [`STACK_SIZE`] stack.
pub(crate) fn with_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("corbina-idl".into())
            .stack_size(STACK_SIZE)
            .spawn_scoped(s, f)
            .expect("spawning the parser thread")
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}
