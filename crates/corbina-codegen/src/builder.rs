//! The `build.rs` API and the file-level driver shared with the `corbina-idl` command.

use corbina_idl::{Diagnostic, Diagnostics, Frontend};
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why a compilation failed. `Display` renders IDL errors as rustc renders its own, and so
/// does `Debug`: a build script's `main` returning `Result<(), Box<dyn Error>>` prints its
/// error with `Debug`, and `cargo build` should show the source line and caret, not a dump
/// of the diagnostics' fields.
pub enum Error {
    /// The IDL has errors (or uses constructs not supported yet).
    Idl(Diagnostics),
    /// Reading or writing a file failed.
    Io(PathBuf, std::io::Error),
    /// No output directory: neither [`Builder::out_dir`] nor `OUT_DIR` is set.
    NoOutDir,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Idl(d) => f.write_str(&d.render()),
            Error::Io(p, e) => write!(f, "{}: {e}", p.display()),
            Error::NoOutDir => f.write_str("no output directory: OUT_DIR is not set"),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // After the `Error: ` std prints first: the report from its own line.
        if let Error::Idl(_) = self {
            writeln!(f)?;
        }
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {}

/// One IDL file compiled to Rust.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The generated source.
    pub source: String,
    /// Every file the front end read: the main file, then each included file that
    /// contributed a definition (sorted).
    pub files_read: Vec<PathBuf>,
    /// Warnings from the front end, then the generator's (renamed names, docs/mapping.md
    /// "Names").
    pub warnings: Vec<Diagnostic>,
}

/// Parses `path` with `frontend` and generates its Rust.
pub fn compile_file(frontend: &mut Frontend, path: &Path) -> Result<Compiled, Diagnostics> {
    compile_file_with(frontend, path, &crate::Options::default())
}

/// [`compile_file`] with generator `options`.
pub fn compile_file_with(
    frontend: &mut Frontend,
    path: &Path,
    options: &crate::Options,
) -> Result<Compiled, Diagnostics> {
    let spec = frontend.parse_file(path)?;
    let mut warnings = frontend.warnings().to_vec();
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let generated = crate::generate_reporting(&spec, &name, options)?;
    let source = generated.source;
    warnings.extend(generated.warnings);
    // The front end does not list the files it read: included files are recovered from the
    // locations of their definitions (an included file holding only macros is missed).
    let mut included = BTreeSet::new();
    spec.walk(&mut |d| {
        if !d.loc.main_file {
            included.insert(PathBuf::from(&*d.loc.file));
        }
    });
    let mut files_read = vec![path.to_path_buf()];
    files_read.extend(included);
    Ok(Compiled {
        source,
        files_read,
        warnings,
    })
}

/// `source` laid out by rustfmt (`$RUSTFMT`, else `rustfmt` on the path: with rustup, the
/// toolchain's own, as bindgen finds it), with its default style and edition 2021; `None`
/// when there is no rustfmt or it fails, and the caller keeps the source as generated.
///
/// The generator's own output is the same on every machine (the golden files); this is
/// what the [`Builder`] writes to `$OUT_DIR` for people to read.
pub fn rustfmt(source: &str) -> Option<String> {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    let program = std::env::var_os("RUSTFMT").unwrap_or_else(|| "rustfmt".into());
    let mut child = Command::new(program)
        .args(["--edition", "2021", "--emit", "stdout", "--quiet"])
        // Not the crate's rustfmt.toml: the output is the generator's, in rustfmt's style.
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let input = source.to_owned();
    // Written from another thread: rustfmt writes while it reads, and both pipes are finite.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let mut out = String::new();
    let read = child.stdout.take()?.read_to_string(&mut out);
    let wrote = writer.join().ok().is_some_and(|r| r.is_ok());
    let ok = child.wait().ok()?.success();
    (read.is_ok() && wrote && ok && !out.trim().is_empty()).then_some(out)
}

/// Compiles IDL files to Rust source files, for `build.rs` scripts.
#[derive(Debug, Clone)]
pub struct Builder {
    includes: Vec<PathBuf>,
    defines: Vec<(String, String)>,
    out_dir: Option<PathBuf>,
    cargo_metadata: bool,
    relaxed_names: bool,
    format: bool,
    options: crate::Options,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// A builder writing to `OUT_DIR` and printing `cargo:` directives.
    pub fn new() -> Self {
        Builder {
            includes: Vec::new(),
            defines: Vec::new(),
            out_dir: None,
            cargo_metadata: true,
            relaxed_names: false,
            format: true,
            options: crate::Options::default(),
        }
    }

    /// Adds an include directory (`-I`).
    pub fn include(mut self, dir: impl Into<PathBuf>) -> Self {
        self.includes.push(dir.into());
        self
    }

    /// Predefines a preprocessor macro (`-D`).
    pub fn define(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.defines.push((name.into(), value.into()));
        self
    }

    /// Accepts IDL that breaks the scoping rules of CORBA 3.0 §3.15.3 with a warning (default
    /// off; [`Frontend::relaxed_names`]): `struct S { Mode mode; }`, `interface Echo { void
    /// echo(); }`. omniidl refuses such IDL; some other compilers accept it.
    pub fn relaxed_names(mut self, on: bool) -> Self {
        self.relaxed_names = on;
        self
    }

    /// Writes generated files to `dir` (created if missing) instead of `OUT_DIR`.
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Result<Self, Error> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(|e| Error::Io(dir.clone(), e))?;
        self.out_dir = Some(dir);
        Ok(self)
    }

    /// Whether to lay the output out with rustfmt, when it is installed (default on): a
    /// user who opens `$OUT_DIR/<name>.rs` reads it like hand-written Rust. See [`rustfmt`].
    pub fn format(mut self, on: bool) -> Self {
        self.format = on;
        self
    }

    /// Whether to print `cargo:rerun-if-changed=` and `cargo:warning=` lines (default on).
    pub fn cargo_metadata(mut self, on: bool) -> Self {
        self.cargo_metadata = on;
        self
    }

    /// Servant traits with a default method for every operation that raises NO_IMPLEMENT
    /// (default off; [`crate::Options::no_implement_defaults`]): for large interfaces of
    /// which a server implements a few operations.
    pub fn no_implement_defaults(mut self, on: bool) -> Self {
        self.options.no_implement_defaults = on;
        self
    }

    /// CORBA AMI callbacks (reply handlers and `sendc_` methods) for every interface
    /// (default off; [`crate::Options::ami`]), as omniidl `-Wbami`.
    pub fn ami(mut self, on: bool) -> Self {
        self.options.ami = on;
        self
    }

    /// CORBA AMI callbacks for the named interfaces only (`M::I`; [`crate::Options::ami_interfaces`]).
    pub fn ami_interfaces<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.options
            .ami_interfaces
            .extend(names.into_iter().map(Into::into));
        self
    }

    /// Asynchronous Method Handling servant traits, response handlers and skeletons for every
    /// interface (default off; [`crate::Options::amh`]), as tao_idl's AMH.
    pub fn amh(mut self, on: bool) -> Self {
        self.options.amh = on;
        self
    }

    /// AMH servants for the named interfaces only (`M::I`; [`crate::Options::amh_interfaces`]).
    pub fn amh_interfaces<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.options
            .amh_interfaces
            .extend(names.into_iter().map(Into::into));
        self
    }

    /// Compiles each file to `<out_dir>/<stem>.rs`; returns the paths written.
    ///
    /// Each output holds its file's definitions and the definitions of included files that
    /// they use, so two outputs that include the same file must be included into different
    /// Rust modules.
    pub fn compile(&self, files: &[impl AsRef<Path>]) -> Result<Vec<PathBuf>, Error> {
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(Error::NoOutDir)?,
        };
        let mut written = Vec::new();
        for file in files {
            let file = file.as_ref();
            let mut fe = Frontend::new();
            fe.relaxed_names(self.relaxed_names);
            for d in &self.includes {
                fe.include_dir(d);
            }
            for (n, v) in &self.defines {
                fe.define(n, v);
            }
            if self.cargo_metadata {
                println!("cargo:rerun-if-changed={}", file.display());
                // Cargo scans a directory given to rerun-if-changed for any change, which also
                // covers included files that contribute only macros or pragmas.
                for d in &self.includes {
                    println!("cargo:rerun-if-changed={}", d.display());
                }
            }
            let compiled = compile_file_with(&mut fe, file, &self.options).map_err(Error::Idl)?;
            if self.cargo_metadata {
                for f in &compiled.files_read[1..] {
                    println!("cargo:rerun-if-changed={}", f.display());
                }
                for w in &compiled.warnings {
                    println!("cargo:warning={w}");
                }
            }
            let stem = file
                .file_stem()
                .map_or_else(|| "idl".into(), |s| s.to_string_lossy().into_owned());
            let out = out_dir.join(format!("{stem}.rs"));
            // Written beside and renamed into place: a reader never sees half a file, and an
            // output hard-linked from another target directory (`cp -al`) is replaced, not
            // written through.
            let tmp = out.with_extension("rs.tmp");
            let source = match self.format {
                true => rustfmt(&compiled.source).unwrap_or(compiled.source),
                false => compiled.source,
            };
            std::fs::write(&tmp, source).map_err(|e| Error::Io(tmp.clone(), e))?;
            std::fs::rename(&tmp, &out).map_err(|e| Error::Io(out.clone(), e))?;
            written.push(out);
        }
        Ok(written)
    }
}
