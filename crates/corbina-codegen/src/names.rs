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

/// `snake_case` (modules, operations, attributes, parameters, members), escaped.
pub fn snake(name: &str) -> String {
    let s = words(name)
        .iter()
        .map(|w| w.to_lowercase())
        .collect::<Vec<_>>()
        .join("_");
    escape(if s.is_empty() { "_" } else { &s })
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
    escape(if s.is_empty() { "_" } else { &s })
}

/// `SCREAMING_SNAKE_CASE` (constants), escaped.
pub fn screaming(name: &str) -> String {
    let s = words(name)
        .iter()
        .map(|w| w.to_uppercase())
        .collect::<Vec<_>>()
        .join("_");
    escape(if s.is_empty() { "_" } else { &s })
}

/// A name not in `taken`: `base`, else `base_`, `base__`, ….
pub fn fresh(base: &str, taken: &[String]) -> String {
    let mut n = base.to_string();
    while taken.iter().any(|t| t == &n) {
        n.push('_');
    }
    n
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
    }
}
