//! `corbina names`: a naming service client (any CosNaming service: `corbina-names`,
//! omniORB's `omniNames`, …), like omniORB's `nameclt`.

use std::collections::HashSet;

use corbina::orb::InitialReference;
use corbina::{ObjectRef, Orb, OrbConfig};
use corbina_naming::cos_naming::naming_context::{CannotProceed, NotFound, NotFoundReason};
use corbina_naming::cos_naming::{
    Binding, BindingType, NameComponent, NamingContext, NamingContextExt,
};
use corbina_naming::name;

/// Where the naming service is when `-ORBInitRef NameService=…` is not given.
pub const DEFAULT_NAME_SERVICE: &str = "corbaloc::localhost:2809/NameService";

/// `corbina names`' arguments: one operation on the naming service.
#[derive(clap::Args)]
#[command(
    after_help = "PATH is a stringified name (`a.kind/b`). The service is the one \
`-ORBInitRef NameService=URL` gives, by default corbaloc::localhost:2809/NameService."
)]
pub struct Args {
    #[command(subcommand)]
    op: Op,
}

#[derive(clap::Subcommand)]
enum Op {
    /// List a context's bindings (the root's by default)
    List {
        /// The whole tree under it
        #[arg(short)]
        recursive: bool,
        path: Option<String>,
    },
    /// Bind a name to an object (fails if the name is bound)
    Bind {
        path: String,
        /// IOR:…, corbaloc:…, corbaname:…, or a file holding one
        #[arg(value_name = "REF")]
        reference: String,
        /// Bound under a lease of corbina-names that ends after DUR (500ms, 10s, 2m) unless
        /// kept alive; replaces what is bound there
        #[arg(long, value_name = "DUR", value_parser = parse_ttl)]
        ttl: Option<std::time::Duration>,
    },
    /// Bind a name to an object, replacing what it was bound to
    Rebind {
        path: String,
        /// IOR:…, corbaloc:…, corbaname:…, or a file holding one
        #[arg(value_name = "REF")]
        reference: String,
        /// Bound under a lease of corbina-names that ends after DUR (500ms, 10s, 2m) unless
        /// kept alive
        #[arg(long, value_name = "DUR", value_parser = parse_ttl)]
        ttl: Option<std::time::Duration>,
    },
    /// Remove a binding
    Unbind { path: String },
    /// Print the IOR a name is bound to
    Resolve { path: String },
    /// Make a new context bound to the name, and print its IOR
    Mkcontext { path: String },
    /// Destroy an empty context and remove its binding
    Rmcontext { path: String },
}

impl Op {
    fn name(&self) -> &'static str {
        match self {
            Op::List { .. } => "list",
            Op::Bind { .. } => "bind",
            Op::Rebind { .. } => "rebind",
            Op::Unbind { .. } => "unbind",
            Op::Resolve { .. } => "resolve",
            Op::Mkcontext { .. } => "mkcontext",
            Op::Rmcontext { .. } => "rmcontext",
        }
    }
}

use crate::reference::Failure;

fn not_found(nf: &NotFound) -> String {
    let why = match nf.why {
        NotFoundReason::MissingNode => "no such name",
        NotFoundReason::NotContext => "not a context",
        NotFoundReason::NotObject => "not an object",
    };
    let rest = name::to_string(&nf.rest_of_name).unwrap_or_default();
    format!("NotFound: {why} (at \"{rest}\")")
}

fn cannot_proceed(cp: &CannotProceed) -> String {
    let rest = name::to_string(&cp.rest_of_name).unwrap_or_default();
    format!("CannotProceed (at \"{rest}\")")
}

/// Every generated error type of a naming operation, as text.
macro_rules! describe {
    ($e:expr, $t:path { $($variant:ident => $f:expr),* $(,)? }) => {{
        use $t as E;
        match $e {
            $(E::$variant(x) => Failure($f(&x)),)*
            E::System(s) => Failure::from(s),
        }
    }};
}

fn parse_name(path: &str) -> Result<Vec<NameComponent>, Failure> {
    name::to_name(path).map_err(|e| Failure(format!("\"{path}\": {e}")))
}

fn root(orb: &Orb) -> Result<NamingContextExt, Failure> {
    let obj = match orb.resolve_initial_references("NameService") {
        Ok(InitialReference::Object(o)) => o,
        _ => {
            return Err(Failure(
                "cannot resolve the NameService initial reference".into(),
            ))
        }
    };
    Ok(NamingContextExt::unchecked_narrow(&obj))
}

fn context_at(root: &NamingContextExt, path: Option<&str>) -> Result<NamingContext, Failure> {
    match path {
        None | Some("") | Some("/") => Ok(root.clone().into()),
        Some(p) => {
            let obj = resolve(root, p)?;
            Ok(NamingContext::unchecked_narrow(&obj))
        }
    }
}

fn resolve(root: &NamingContextExt, path: &str) -> Result<ObjectRef, Failure> {
    use corbina_naming::cos_naming::naming_context::ResolveError;
    root.resolve(&parse_name(path)?)
        .map_err(|e| {
            describe!(e, ResolveError {
                NotFound => not_found,
                CannotProceed => cannot_proceed,
                InvalidName => |_: &_| "InvalidName".to_owned(),
            })
        })?
        .ok_or_else(|| Failure(format!("\"{path}\" is bound to a nil reference")))
}

/// Every binding of a context (through the iterator, which is destroyed after).
fn all_bindings(ctx: &NamingContext) -> Result<Vec<Binding>, Failure> {
    let (mut list, it) = ctx.list(1000)?;
    if let Some(it) = it {
        loop {
            let (more, batch) = it.next_n(1000)?;
            list.extend(batch);
            if !more {
                break;
            }
        }
        let _ = it.destroy();
    }
    list.sort_by(|a, b| {
        let key = |x: &Binding| {
            x.binding_name
                .first()
                .map(|c| (c.id.clone(), c.kind.clone()))
        };
        key(a).cmp(&key(b))
    });
    Ok(list)
}

fn binding_label(b: &Binding) -> String {
    let n = name::to_string(&b.binding_name).unwrap_or_else(|_| "?".into());
    match b.binding_type {
        BindingType::Ncontext => format!("{n}/"),
        BindingType::Nobject => n,
    }
}

/// Prints a context's tree; contexts already shown (cycles, aliases) are not entered again.
fn tree(
    ctx: &NamingContext,
    prefix: &str,
    seen: &mut HashSet<Vec<u8>>,
    depth: usize,
    out: &mut Vec<String>,
) -> Result<(), Failure> {
    let list = all_bindings(ctx)?;
    let count = list.len();
    for (i, b) in list.iter().enumerate() {
        let last = i + 1 == count;
        let (branch, indent) = if last {
            ("└── ", "    ")
        } else {
            ("├── ", "│   ")
        };
        let mut line = format!("{prefix}{branch}{}", binding_label(b));
        if b.binding_type == BindingType::Ncontext {
            let sub = match ctx.resolve(&b.binding_name) {
                Ok(Some(o)) => o,
                Ok(None) => {
                    out.push(line + "  (nil)");
                    continue;
                }
                Err(e) => {
                    out.push(format!("{line}  (cannot resolve: {e})"));
                    continue;
                }
            };
            let id = sub.ior().to_encapsulation().unwrap_or_default();
            if depth >= 32 || !seen.insert(id) {
                line.push_str("  (shown above)");
                out.push(line);
                continue;
            }
            out.push(line);
            let sub = NamingContext::unchecked_narrow(&sub);
            if let Err(Failure(e)) = tree(&sub, &format!("{prefix}{indent}"), seen, depth + 1, out)
            {
                out.push(format!("{prefix}{indent}(cannot list: {e})"));
            }
        } else {
            out.push(line);
        }
    }
    Ok(())
}

/// A `--ttl` duration: `10s`, `500ms`, `2m`, or plain seconds.
fn parse_ttl(v: &str) -> Result<std::time::Duration, String> {
    let (num, unit) = match v.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => v.split_at(at),
        None => (v, "s"),
    };
    let scale = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        _ => return Err(format!("{v}: units are ms, s, m")),
    };
    num.parse::<f64>()
        .ok()
        .map(|n| n * scale)
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 4.0e6)
        .map(std::time::Duration::from_secs_f64)
        .ok_or_else(|| format!("{v}: expected a positive duration"))
}

fn run(orb: &Orb, op: &Op) -> Result<(), Failure> {
    let root = root(orb)?;
    let object = |s: &str| -> Result<ObjectRef, Failure> {
        crate::reference::text(s)
            .and_then(|text| crate::reference::object(orb, &text))
            .map_err(Failure)
    };
    use corbina_naming::cos_naming::naming_context as nc;
    match op {
        Op::List { recursive, path } => {
            let path = path.as_deref();
            let ctx = context_at(&root, path)?;
            if *recursive {
                let mut out = Vec::new();
                let mut seen = HashSet::new();
                seen.insert(ctx.as_object().ior().to_encapsulation().unwrap_or_default());
                out.push(path.unwrap_or(".").to_owned());
                tree(&ctx, "", &mut seen, 0, &mut out)?;
                println!("{}", out.join("\n"));
            } else {
                for b in all_bindings(&ctx)? {
                    println!("{}", binding_label(&b));
                }
            }
        }
        Op::Bind {
            path,
            reference,
            ttl: Some(ttl),
        }
        | Op::Rebind {
            path,
            reference,
            ttl: Some(ttl),
        } => {
            // A leased binding replaces what is bound there, bind or rebind.
            parse_name(path)?;
            let obj = object(reference)?;
            let leases = corbina_naming::lease::leases_of(orb, root.as_object())?;
            let lease = corbina_naming::lease::bind_with_ttl(&leases, path, &obj, *ttl)
                .map_err(|e| Failure(e.to_string()))?;
            println!("lease {lease}: bound for {ttl:?} unless kept alive");
        }
        Op::Bind {
            path, reference, ..
        } => {
            let n = parse_name(path)?;
            let obj = object(reference)?;
            root.bind(&n, Some(&obj)).map_err(|e| {
                describe!(e, nc::BindError {
                    NotFound => not_found,
                    CannotProceed => cannot_proceed,
                    InvalidName => |_: &_| "InvalidName".to_owned(),
                    AlreadyBound => |_: &_| "AlreadyBound: the name is bound already (use rebind)".to_owned(),
                })
            })?;
        }
        Op::Rebind {
            path, reference, ..
        } => {
            let n = parse_name(path)?;
            let obj = object(reference)?;
            root.rebind(&n, Some(&obj)).map_err(|e| {
                describe!(e, nc::RebindError {
                    NotFound => not_found,
                    CannotProceed => cannot_proceed,
                    InvalidName => |_: &_| "InvalidName".to_owned(),
                })
            })?;
        }
        Op::Unbind { path } => {
            let n = parse_name(path)?;
            root.unbind(&n).map_err(|e| {
                describe!(e, nc::UnbindError {
                    NotFound => not_found,
                    CannotProceed => cannot_proceed,
                    InvalidName => |_: &_| "InvalidName".to_owned(),
                })
            })?;
        }
        Op::Resolve { path } => {
            let obj = resolve(&root, path)?;
            println!("{}", orb.object_to_string(&obj)?);
        }
        Op::Mkcontext { path } => {
            let n = parse_name(path)?;
            let ctx = root.bind_new_context(&n).map_err(|e| {
                describe!(e, nc::BindNewContextError {
                    NotFound => not_found,
                    CannotProceed => cannot_proceed,
                    InvalidName => |_: &_| "InvalidName".to_owned(),
                    AlreadyBound => |_: &_| "AlreadyBound: the name is bound already".to_owned(),
                })
            })?;
            if let Some(ctx) = ctx {
                println!("{}", orb.object_to_string(ctx.as_object())?);
            }
        }
        Op::Rmcontext { path } => {
            let n = parse_name(path)?;
            let ctx = NamingContext::unchecked_narrow(&resolve(&root, path)?);
            // Destroy first: a context that is not empty stays, and stays bound.
            ctx.destroy().map_err(|e| {
                describe!(e, nc::DestroyError {
                    NotEmpty => |_: &_| format!("NotEmpty: \"{path}\" still has bindings"),
                })
            })?;
            root.unbind(&n).map_err(|e| {
                describe!(e, nc::UnbindError {
                    NotFound => not_found,
                    CannotProceed => cannot_proceed,
                    InvalidName => |_: &_| "InvalidName".to_owned(),
                })
            })?;
        }
    }
    Ok(())
}

/// `corbina names …`; returns the exit code.
pub fn main(mut config: OrbConfig, args: Args) -> Result<u8, String> {
    if !config.init_refs.contains_key("NameService") && config.default_init_ref.is_none() {
        config
            .init_refs
            .insert("NameService".into(), DEFAULT_NAME_SERVICE.into());
    }
    let what = format!("names {}", args.op.name());
    crate::reference::run_on_orb(config, &what, |orb| run(orb, &args.op))
}
