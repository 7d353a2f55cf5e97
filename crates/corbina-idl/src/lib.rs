//! `corbina-idl` is the OMG IDL front end of Corbina: it preprocesses,
//! parses and resolves IDL 3.5 into a [`model::Specification`] that code
//! generators walk. It has its own preprocessor (no external `cpp`), checks
//! the spec's semantic rules, and reports every syntax error it can recover from, each as
//! `file:line:col: error: message` (`Display`) or rendered as rustc renders its own, with the
//! source line and a caret ([`Diagnostics::render`]). Each rule it enforces has an invalid and a valid example
//! in `tests/rules/` (checked against omniidl when it is installed).
//!
//! ```
//! use corbina_idl::model::{DefinitionKind, ScopedName, Type};
//! use corbina_idl::Frontend;
//!
//! let mut fe = Frontend::new();
//! let spec = fe
//!     .parse_str(
//!         "echo.idl",
//!         "#pragma prefix \"example.org\"
//!          module Demo {
//!            typedef sequence<octet> Bytes;
//!            interface Echo { Bytes say(in Bytes data); };
//!          };",
//!     )
//!     .unwrap();
//! let echo = spec.lookup(&ScopedName::parse("Demo::Echo")).unwrap();
//! assert_eq!(echo.repository_id, "IDL:example.org/Demo/Echo:1.0");
//! let DefinitionKind::Interface(iface) = &echo.kind else { unreachable!() };
//! let op = &iface.operations[0];
//! let ret = op.return_type.as_ref().unwrap();
//! assert_eq!(
//!     spec.resolve_alias(ret),
//!     &Type::Sequence { elem: Box::new(Type::Octet), bound: None }
//! );
//!
//! let err = fe.parse_str("bad.idl", "struct S { S inner; };").unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "bad.idl:1:12: error: struct 'S' is recursive; it may contain itself only through a sequence"
//! );
//! ```
#![forbid(unsafe_code)]

pub mod ast;
pub mod builtin;
pub mod constexpr;
pub mod diagnostic;
pub mod lexer;
pub mod model;
mod parse_types;
pub mod parser;
pub mod ppexpr;
pub mod preprocess;
pub mod repoid;
mod resolve;

pub use constexpr::{ConstValue, FixedValue};
pub use diagnostic::{Diagnostic, Diagnostics, Severity, SourceLoc};
pub use model::{ScopedName, Specification, Type};

use std::path::{Path, PathBuf};

/// The IDL compiler front end: include path, predefined macros, warnings.
#[derive(Clone, Debug, Default)]
pub struct Frontend {
    include_dirs: Vec<PathBuf>,
    defines: Vec<(String, String)>,
    warnings: Vec<Diagnostic>,
    relaxed_names: bool,
}

impl Frontend {
    /// A front end with no include directories and no macros.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an `-I` directory (searched in the order added).
    pub fn include_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.include_dirs.push(dir.into());
        self
    }

    /// Predefines an object-like macro (`-DNAME=value`; use `"1"` for plain `-DNAME`).
    pub fn define(&mut self, name: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.defines.push((name.into(), value.into()));
        self
    }

    /// Reports the scoping rules of CORBA 3.0 §3.15.3 as warnings instead of errors: a name
    /// declared in the scope it names (`interface Echo { void echo(); }`, `struct Right {
    /// string right; }`), or in a scope into which a use introduced it (`struct S { Mode mode;
    /// }`); and so an identifier declared like a keyword but for case (§3.2.4: `typedef Object
    /// Factory;` in the OMG's CosLifeCycle.idl). omniidl refuses them all, as the spec says;
    /// some other IDL compilers accept them, and so does the Rust mapping.
    pub fn relaxed_names(&mut self, relaxed: bool) -> &mut Self {
        self.relaxed_names = relaxed;
        self
    }

    /// Warnings from the last `parse_*` call.
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    /// Compiles the IDL file at `path` (its name appears in diagnostics as given).
    pub fn parse_file(&mut self, path: impl AsRef<Path>) -> Result<Specification, Diagnostics> {
        let path = path.as_ref().to_path_buf();
        self.run(move |pp| pp.run_file(&path))
    }

    /// Compiles `text` as if read from a file called `name`; quoted includes
    /// are searched relative to `name`'s directory, then the include path.
    pub fn parse_str(&mut self, name: &str, text: &str) -> Result<Specification, Diagnostics> {
        self.run(move |pp| pp.run_str(name, text))
    }

    fn run(
        &mut self,
        source: impl FnOnce(preprocess::Preprocessor<'_>) -> diagnostic::PResult<Vec<lexer::Token>>
            + Send,
    ) -> Result<Specification, Diagnostics> {
        let (dirs, defines, relaxed) = (&self.include_dirs, &self.defines, self.relaxed_names);
        let (result, warnings) = parser::with_big_stack(move || {
            let mut warnings = Vec::new();
            let result = (|| {
                let pp = preprocess::Preprocessor::new(dirs, defines, &mut warnings)?;
                let toks = source(pp)?;
                let defs = parser::Parser::new(toks, &mut warnings)
                    .relaxed_names(relaxed)
                    .parse_specification_all()?;
                Ok(resolve::Resolver::new(&mut warnings, relaxed).run(&defs)?)
            })();
            (result, warnings)
        });
        self.warnings = warnings;
        result
    }
}
