//! Diagnostics: gcc-style `file:line:col: severity: message` reports.

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
        }
    }
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

/// The errors that stopped a compilation (usually exactly one).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// The first (stopping) error, if any.
    pub fn first(&self) -> Option<&Diagnostic> {
        self.0.first()
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
