//! IDL identifiers → Rust identifiers (docs/mapping.md, "Names").

/// Rust keywords (strict, reserved and edition-specific) that must be written as raw
/// identifiers when used as names.
const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "else", "enum", "extern", "false", "fn", "for", "if",
    "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "static",
    "struct", "trait", "true", "type", "unsafe", "use", "where", "while", "async", "await", "dyn",
    "abstract", "become", "box", "do", "final", "macro", "override", "priv", "typeof", "unsized",
    "virtual", "yield", "try", "gen", "union",
];

/// Keywords that cannot be raw identifiers: they get a trailing underscore.
const NOT_RAW: &[&str] = &["self", "Self", "super", "crate", "_"];

/// Escapes a converted name that is a Rust keyword.
pub fn escape(name: &str) -> String {
    if NOT_RAW.contains(&name) {
        format!("{name}_")
    } else if KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    }
}

/// Splits an identifier into words at underscores and case changes
/// (`fooBar` → foo, Bar; `NOT_FOUND` → NOT, FOUND; `IORTable` → IOR, Table).
fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if c.is_uppercase() && !cur.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The IDL identifier's trailing underscores, which the mapping keeps so that `int_` and
/// `int` stay apart.
fn trailing(name: &str) -> &str {
    &name[name.trim_end_matches('_').len()..]
}

/// Escapes `s` (the converted words) followed by the IDL name's trailing underscores.
fn finish(s: String, name: &str) -> String {
    let t = trailing(name);
    if s.is_empty() {
        escape("_")
    } else if t.is_empty() {
        escape(&s)
    } else {
        format!("{s}{t}")
    }
}

/// `snake_case` (modules, operations, attributes, parameters, members), escaped.
pub fn snake(name: &str) -> String {
    let s = words(name)
        .iter()
        .map(|w| w.to_lowercase())
        .collect::<Vec<_>>()
        .join("_");
    finish(s, name)
}

/// `UpperCamelCase` (types, enumerators, union variants), keeping names that are already
/// camel case as written, escaped.
pub fn camel(name: &str) -> String {
    let already_camel = name.chars().next().is_some_and(|c| c.is_uppercase())
        && !name.contains('_')
        && name.chars().any(|c| c.is_lowercase());
    let s = if already_camel {
        name.to_string()
    } else {
        words(name)
            .iter()
            .map(|w| {
                let mut cs = w.chars();
                let first = cs.next().map(|c| c.to_uppercase().collect::<String>());
                let rest: String = if w.chars().any(|c| c.is_lowercase()) {
                    cs.collect()
                } else {
                    cs.as_str().to_lowercase()
                };
                format!("{}{rest}", first.unwrap_or_default())
            })
            .collect()
    };
    finish(s, name)
}

/// `SCREAMING_SNAKE_CASE` (constants), escaped.
pub fn screaming(name: &str) -> String {
    let s = words(name)
        .iter()
        .map(|w| w.to_uppercase())
        .collect::<Vec<_>>()
        .join("_");
    finish(s, name)
}

/// A name not in `taken`: `base`, else `base_`, `base__`, ….
pub fn fresh(base: &str, taken: &[String]) -> String {
    let mut n = base.to_string();
    while taken.iter().any(|t| t == &n) {
        n.push('_');
    }
    n
}

/// The next candidate after a name that is taken: one more trailing underscore
/// (`r#type` → `type_`, which needs no raw prefix).
pub fn bump(name: &str) -> String {
    format!("{}_", name.trim_start_matches("r#"))
}

/// `name` with `suffix` before its trailing underscores (`foo_bar_` + `_excep` →
/// `foo_bar_excep_`), so that a renamed name's derived names keep their case style.
pub fn suffixed(name: &str, suffix: &str) -> String {
    let n = name.trim_start_matches("r#");
    let stem = n.trim_end_matches('_');
    format!("{stem}{suffix}{}", &n[stem.len()..])
}

/// Disambiguates names mapped into one Rust namespace (docs/mapping.md, "Name clashes"):
/// in declaration order, a name already taken (or in `reserved`) gets one more trailing
/// underscore until it is free.
pub fn unique(names: impl IntoIterator<Item = String>, reserved: &[&str]) -> Vec<String> {
    let mut taken: Vec<String> = reserved.iter().map(|s| s.to_string()).collect();
    let mut out = Vec::new();
    for mut n in names {
        while taken.contains(&n) {
            n = bump(&n);
        }
        taken.push(n.clone());
        out.push(n);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        assert_eq!(snake("CosNaming"), "cos_naming");
        assert_eq!(snake("bind_new_context"), "bind_new_context");
        assert_eq!(snake("fooBar"), "foo_bar");
        assert_eq!(snake("IORTable"), "ior_table");
        assert_eq!(snake("match"), "r#match");
        assert_eq!(snake("self"), "self_");
        assert_eq!(camel("nobject"), "Nobject");
        assert_eq!(camel("NOT_FOUND"), "NotFound");
        assert_eq!(camel("BinStruct"), "BinStruct");
        assert_eq!(camel("red"), "Red");
        assert_eq!(camel("Self"), "Self_");
        assert_eq!(camel("rest_of_name"), "RestOfName");
        assert_eq!(screaming("MaxLen"), "MAX_LEN");
        assert_eq!(screaming("Base"), "BASE");
        assert_eq!(fresh("w", &["w".into(), "w_".into()]), "w__");
        // Trailing underscores are the user's: kept.
        assert_eq!(snake("int_"), "int_");
        assert_eq!(snake("iF_"), "i_f_");
        assert_eq!(camel("iF_"), "IF_");
        assert_eq!(camel("iF"), "IF");
        assert_eq!(screaming("max_"), "MAX_");
        assert_eq!(snake("type_"), "type_");
    }

    #[test]
    fn clashes_take_underscores_in_declaration_order() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            unique(
                v(&["foo_bar", "foo_bar", "foo_bar_", "r#type", "type_"]),
                &[]
            ),
            v(&["foo_bar", "foo_bar_", "foo_bar__", "r#type", "type_"])
        );
        assert_eq!(
            unique(v(&["System", "Err"]), &["System"]),
            v(&["System_", "Err"])
        );
        assert_eq!(bump("r#type"), "type_");
        assert_eq!(suffixed("foo_bar_", "_excep"), "foo_bar_excep_");
        assert_eq!(suffixed("r#type", "_excep"), "type_excep");
    }
}
