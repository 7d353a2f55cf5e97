//! Diagnostics: gcc-style `file:line:col: severity: message` reports (`Display`), and the
//! same rendered as rustc renders its own (the source line, a caret under the token, a
//! label, a help line) by [`Diagnostic::render`].

use std::fmt;
use std::sync::Arc;

/// A position in an IDL source file (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceLoc {
    /// The file as it was named (the main file as given, included files as found on the path).
    pub file: Arc<str>,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters).
    pub col: u32,
    /// True when the position lies in the main file rather than an included one.
    pub main_file: bool,
}

impl SourceLoc {
    /// A location for synthesized items.
    pub fn new(file: &str, line: u32, col: u32) -> Self {
        SourceLoc {
            file: file.into(),
            line,
            col,
            main_file: true,
        }
    }
}

impl fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// Compilation stops.
    Error,
    /// Reported, compilation continues.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// One report about the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// File the report is about.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
    /// Human-readable message (no trailing period).
    pub message: String,
    /// Error or warning.
    pub severity: Severity,
    /// What the caret points at ("expected `;` here"), if more than the message.
    pub label: Option<String>,
    /// How to fix it, if known.
    pub help: Option<String>,
}

impl Diagnostic {
    /// An error at `loc`.
    pub fn error(loc: &SourceLoc, message: impl Into<String>) -> Self {
        Self::at(loc, message, Severity::Error)
    }

    /// A warning at `loc`.
    pub fn warning(loc: &SourceLoc, message: impl Into<String>) -> Self {
        Self::at(loc, message, Severity::Warning)
    }

    fn at(loc: &SourceLoc, message: impl Into<String>, severity: Severity) -> Self {
        Diagnostic {
            file: loc.file.to_string(),
            line: loc.line,
            col: loc.col,
            message: message.into(),
            severity,
            label: None,
            help: None,
        }
    }

    /// With a label at the caret.
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// With a help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// The report as rustc renders its own: the source line with a caret under the token
    /// (its file read again from disk), the label, the help. A file that cannot be read (a
    /// source given as a string) gives the one-line form.
    pub fn render(&self) -> String {
        let source = std::fs::read(&self.file)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        self.render_with(source.as_deref())
    }

    /// [`Diagnostic::render`] with the file's text given.
    pub fn render_with(&self, source: Option<&str>) -> String {
        use codespan_reporting::diagnostic::{Diagnostic as Report, Label, Severity as S};
        use codespan_reporting::files::SimpleFile;
        use codespan_reporting::term::{emit, Chars, Config};

        let mut report = match self.severity {
            Severity::Error => Report::new(S::Error),
            Severity::Warning => Report::new(S::Warning),
        }
        .with_message(&self.message);
        if let Some(h) = &self.help {
            report = report.with_note(format!("help: {h}"));
        }
        let span = source.and_then(|text| span_at(text, self.line, self.col));
        let (Some(text), Some(span)) = (source, span) else {
            let mut s = self.to_string();
            if let Some(h) = &self.help {
                s.push_str(&format!("\n  = help: {h}"));
            }
            return s;
        };
        let label = Label::primary((), span).with_message(self.label.as_deref().unwrap_or(""));
        let report = report.with_label(label);
        let file = SimpleFile::new(self.file.as_str(), text);
        let config = Config {
            chars: Chars::ascii(),
            ..Config::default()
        };
        let mut out = String::new();
        match emit(&mut out, &config, &file, &report) {
            Ok(()) => out.trim_end().to_owned(),
            Err(_) => self.to_string(),
        }
    }
}

/// The byte range of the token at 1-based `line` and `col` (in characters) of `text`: an
/// identifier or number whole, else one character (empty at the end of a line).
fn span_at(text: &str, line: u32, col: u32) -> Option<std::ops::Range<usize>> {
    let mut start = 0;
    for _ in 1..line {
        start += text[start..].find('\n')? + 1;
    }
    let line_text = text[start..].split('\n').next().unwrap_or("");
    let line_text = line_text.strip_suffix('\r').unwrap_or(line_text);
    let offset = match line_text.char_indices().nth(col.saturating_sub(1) as usize) {
        Some((i, _)) => i,
        // Just past the last character (where a missing `;` goes).
        None if line_text.chars().count() + 1 == col as usize => line_text.len(),
        None => return None,
    };
    let rest = &line_text[offset..];
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let len = match rest.chars().next() {
        None => 0,
        Some(c) if word(c) => rest.find(|c: char| !word(c)).unwrap_or(rest.len()),
        Some(c) => c.len_utf8(),
    };
    Some(start + offset..start + offset + len)
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}: {}",
            self.file, self.line, self.col, self.severity, self.message
        )
    }
}

impl std::error::Error for Diagnostic {}

/// The errors that stopped a compilation: every syntax error the parser recovered from, or
/// the one error that stopped it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// The first (stopping) error, if any.
    pub fn first(&self) -> Option<&Diagnostic> {
        self.0.first()
    }

    /// Every error rendered as rustc renders its own ([`Diagnostic::render`]), a blank line
    /// between them, then a count when there are several.
    pub fn render(&self) -> String {
        let mut out: Vec<String> = self.0.iter().map(Diagnostic::render).collect();
        let errors = self
            .0
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        if errors > 1 {
            out.push(format!(
                "error: could not compile the IDL due to {errors} errors"
            ));
        }
        out.join("\n\n")
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Self {
        Diagnostics(vec![d])
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// Result type used throughout the front end: the first error stops.
pub type PResult<T> = Result<T, Diagnostic>;

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u32, col: u32) -> Diagnostic {
        Diagnostic::error(
            &SourceLoc::new("a.idl", line, col),
            "expected ';', found '}'",
        )
    }

    #[test]
    fn renders_the_line_a_caret_and_the_label() {
        let text = "module M {\n  struct S { long x }\n};\n";
        let d = at(2, 20)
            .with_label("expected ';' here")
            .with_help("end the member with ';'");
        assert_eq!(
            d.render_with(Some(text)),
            "error: expected ';', found '}'\n  --> a.idl:2:20\n  |\n2 |   struct S { long x }\n  \
             |                    ^ expected ';' here\n  |\n  = help: end the member with ';'"
        );
    }

    #[test]
    fn a_word_is_underlined_whole_and_the_end_of_a_line_is_a_place() {
        let text = "abc defg\nx";
        assert_eq!(span_at(text, 1, 5), Some(4..8));
        assert_eq!(span_at(text, 1, 4), Some(3..4));
        assert_eq!(span_at(text, 1, 9), Some(8..8));
        assert_eq!(span_at(text, 2, 1), Some(9..10));
        assert_eq!(span_at(text, 1, 11), None);
        assert_eq!(span_at(text, 3, 1), None);
    }

    #[test]
    fn without_the_source_it_is_the_one_line_form() {
        let d = at(9, 1).with_help("h");
        assert_eq!(
            d.render_with(None),
            "a.idl:9:1: error: expected ';', found '}'\n  = help: h"
        );
        assert_eq!(at(99, 1).render_with(Some("short")), at(99, 1).to_string());
    }
}
