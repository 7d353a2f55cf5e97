//! `corbina names`: a naming service client (any CosNaming service: `corbina-names`,
//! omniORB's `omniNames`, …), like omniORB's `nameclt`.

use std::collections::HashSet;

use corbina::orb::InitialReference;
use corbina::{ObjectRef, Orb, OrbConfig, SystemException};
use corbina_naming::cos_naming::naming_context::{CannotProceed, NotFound, NotFoundReason};
use corbina_naming::cos_naming::{
    Binding, BindingType, NameComponent, NamingContext, NamingContextExt,
};
use corbina_naming::name;

/// Where the naming service is when `-ORBInitRef NameService=…` is not given.
pub const DEFAULT_NAME_SERVICE: &str = "corbaloc::localhost:2809/NameService";

pub const USAGE: &str = "corbina names [-ORB…] list [-r] [PATH] | bind [--ttl DUR] PATH REF | \
                         rebind [--ttl DUR] PATH REF | unbind PATH | resolve PATH | \
                         mkcontext PATH | rmcontext PATH   (--ttl 10s: bound under a lease \
                         of corbina-names that ends after DUR, e.g. 500ms, 10s, 2m)";

/// A failure, as the user should read it.
struct Failure(String);

impl From<SystemException> for Failure {
    fn from(e: SystemException) -> Self {
        Failure(format!("CORBA system exception {e}"))
    }
}

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

/// `--ttl DUR` taken out of `args` (`10s`, `500ms`, `2m`, plain seconds).
fn take_ttl(args: &[String]) -> Result<(Option<std::time::Duration>, Vec<String>), Failure> {
    let Some(i) = args.iter().position(|a| a == "--ttl") else {
        return Ok((None, args.to_vec()));
    };
    let v = args
        .get(i + 1)
        .ok_or_else(|| Failure("--ttl needs a duration".into()))?;
    let (num, unit) = match v.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => v.split_at(at),
        None => (v.as_str(), "s"),
    };
    let scale = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        _ => return Err(Failure(format!("--ttl {v}: units are ms, s, m"))),
    };
    let secs = num
        .parse::<f64>()
        .ok()
        .map(|n| n * scale)
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 4.0e6)
        .ok_or_else(|| Failure(format!("--ttl {v}: expected a positive duration")))?;
    let mut rest = args.to_vec();
    rest.drain(i..i + 2);
    Ok((Some(std::time::Duration::from_secs_f64(secs)), rest))
}

fn run(orb: &Orb, cmd: &str, args: &[String]) -> Result<(), Failure> {
    let root = root(orb)?;
    let (ttl, args) = take_ttl(args)?;
    let args = args.as_slice();
    if ttl.is_some() && !matches!(cmd, "bind" | "rebind") {
        return Err(Failure(format!("{cmd}: --ttl is for bind and rebind")));
    }
    let arg = |i: usize, what: &str| {
        args.get(i)
            .map(String::as_str)
            .ok_or_else(|| Failure(format!("{cmd}: missing {what}\nusage: {USAGE}")))
    };
    let object = |s: &str| -> Result<ObjectRef, Failure> {
        orb.string_to_object(s)
            .map_err(|e| Failure(format!("\"{s}\" is not a usable reference: {e}")))
    };
    use corbina_naming::cos_naming::naming_context as nc;
    match cmd {
        "list" => {
            let recursive = args.iter().any(|a| a == "-r");
            let path = args.iter().find(|a| *a != "-r").map(String::as_str);
            let ctx = context_at(&root, path)?;
            if recursive {
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
        "bind" | "rebind" => {
            let n = parse_name(arg(0, "PATH")?)?;
            let obj = object(arg(1, "REF")?)?;
            if let Some(ttl) = ttl {
                // A leased binding replaces what is bound there, bind or rebind.
                let leases = corbina_naming::lease::leases_of(orb, root.as_object())?;
                let lease =
                    corbina_naming::lease::bind_with_ttl(&leases, arg(0, "PATH")?, &obj, ttl)
                        .map_err(|e| Failure(e.to_string()))?;
                println!("lease {lease}: bound for {ttl:?} unless kept alive");
            } else if cmd == "bind" {
                root.bind(&n, Some(&obj)).map_err(|e| {
                    describe!(e, nc::BindError {
                        NotFound => not_found,
                        CannotProceed => cannot_proceed,
                        InvalidName => |_: &_| "InvalidName".to_owned(),
                        AlreadyBound => |_: &_| "AlreadyBound: the name is bound already (use rebind)".to_owned(),
                    })
                })?;
            } else {
                root.rebind(&n, Some(&obj)).map_err(|e| {
                    describe!(e, nc::RebindError {
                        NotFound => not_found,
                        CannotProceed => cannot_proceed,
                        InvalidName => |_: &_| "InvalidName".to_owned(),
                    })
                })?;
            }
        }
        "unbind" => {
            let n = parse_name(arg(0, "PATH")?)?;
            root.unbind(&n).map_err(|e| {
                describe!(e, nc::UnbindError {
                    NotFound => not_found,
                    CannotProceed => cannot_proceed,
                    InvalidName => |_: &_| "InvalidName".to_owned(),
                })
            })?;
        }
        "resolve" => {
            let obj = resolve(&root, arg(0, "PATH")?)?;
            println!("{}", orb.object_to_string(&obj)?);
        }
        "mkcontext" => {
            let n = parse_name(arg(0, "PATH")?)?;
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
        "rmcontext" => {
            let path = arg(0, "PATH")?;
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
        other => return Err(Failure(format!("unknown command {other}\nusage: {USAGE}"))),
    }
    Ok(())
}

/// `corbina names …`; returns the exit code.
pub fn main(args: Vec<String>) -> Result<u8, String> {
    let (mut config, rest) = OrbConfig::from_args_and_env(args).map_err(|e| e.to_string())?;
    if !config.init_refs.contains_key("NameService") && config.default_init_ref.is_none() {
        config
            .init_refs
            .insert("NameService".into(), DEFAULT_NAME_SERVICE.into());
    }
    let Some((cmd, args)) = rest.split_first() else {
        return Err(format!("usage: {USAGE}"));
    };
    let orb = Orb::with_config(config);
    let r = run(&orb, cmd, args);
    orb.destroy();
    match r {
        Ok(()) => Ok(0),
        Err(Failure(e)) => {
            eprintln!("corbina names {cmd}: {e}");
            Ok(1)
        }
    }
}
