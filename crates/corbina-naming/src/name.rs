//! Stringified names and `corbaname:` URLs (CosNaming 1.3, "Representation of Names as
//! Strings" and "URL schemes"): the rules behind `NamingContextExt::to_string`, `to_name`
//! and `to_url`, usable without a naming service.
//!
//! - `/` separates components, `.` separates a component's id from its kind, and `\` escapes
//!   either of them or itself inside an id or kind.
//! - A component with an empty kind is written as its id alone (`a`); one with an empty id
//!   as `.kind`; one with both empty as `.`.
//! - In a URL, every byte outside the URL-safe set is written `%hh` (so `\` becomes `%5c`).
//!
//! ```
//! use corbina_naming::name::{to_name, to_string, to_url};
//! let n = to_name(r"a.b/c\/d/.k").unwrap();
//! assert_eq!((n[0].id.as_str(), n[0].kind.as_str()), ("a", "b"));
//! assert_eq!((n[1].id.as_str(), n[1].kind.as_str()), ("c/d", ""));
//! assert_eq!((n[2].id.as_str(), n[2].kind.as_str()), ("", "k"));
//! assert_eq!(to_string(&n).unwrap(), r"a.b/c\/d/.k");
//! assert_eq!(to_url(":host:2809", r"c\/d").unwrap(), "corbaname::host:2809#c%5c/d");
//! ```

use crate::cos_naming::NameComponent;

/// Why a name or address is not acceptable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// `NamingContext::InvalidName`: empty, an empty component, a stray `.` or `\`.
    #[error("invalid name: {0}")]
    InvalidName(&'static str),
    /// `NamingContextExt::InvalidAddress`: not a corbaloc address list.
    #[error("invalid address")]
    InvalidAddress,
}

fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        if matches!(c, '/' | '.' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
}

/// One component as a string (`id`, `id.kind`, `.kind` or `.`).
pub fn component_to_string(c: &NameComponent) -> String {
    let mut s = String::with_capacity(c.id.len() + c.kind.len() + 1);
    escape_into(&mut s, &c.id);
    if !c.kind.is_empty() || c.id.is_empty() {
        s.push('.');
        escape_into(&mut s, &c.kind);
    }
    s
}

/// `NamingContextExt::to_string`: an empty name is invalid.
pub fn to_string(n: &[NameComponent]) -> Result<String, NameError> {
    if n.is_empty() {
        return Err(NameError::InvalidName("empty name"));
    }
    let parts: Vec<String> = n.iter().map(component_to_string).collect();
    Ok(parts.join("/"))
}

/// `NamingContextExt::to_name`.
pub fn to_name(sn: &str) -> Result<Vec<NameComponent>, NameError> {
    if sn.is_empty() {
        return Err(NameError::InvalidName("empty name"));
    }
    let mut out = Vec::new();
    let mut id = String::new();
    let mut kind = String::new();
    let mut in_kind = false;
    let mut chars = sn.chars();
    let finish = |id: &mut String,
                  kind: &mut String,
                  in_kind: &mut bool|
     -> Result<NameComponent, NameError> {
        if id.is_empty() && !*in_kind {
            return Err(NameError::InvalidName("empty component"));
        }
        *in_kind = false;
        Ok(NameComponent {
            id: std::mem::take(id),
            kind: std::mem::take(kind),
        })
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let e = chars
                    .next()
                    .ok_or(NameError::InvalidName("trailing escape character"))?;
                if in_kind { &mut kind } else { &mut id }.push(e);
            }
            '/' => out.push(finish(&mut id, &mut kind, &mut in_kind)?),
            '.' if in_kind => return Err(NameError::InvalidName("two '.' in one component")),
            '.' => in_kind = true,
            c => if in_kind { &mut kind } else { &mut id }.push(c),
        }
    }
    out.push(finish(&mut id, &mut kind, &mut in_kind)?);
    Ok(out)
}

/// Whether a byte may appear unescaped in a URL (RFC 2396 unreserved and reserved marks
/// that CosNaming's URL rules allow).
fn url_safe(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b";/:?@&=+$,-_.!~*'()".contains(&b)
}

/// `%hh`-escapes a stringified name for a `corbaname:` URL.
pub fn url_escape(sn: &str) -> String {
    let mut s = String::with_capacity(sn.len());
    for &b in sn.as_bytes() {
        if url_safe(b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02x}"));
        }
    }
    s
}

/// `NamingContextExt::to_url`: `corbaname:<addr>#<escaped sn>`. `addr` is a corbaloc
/// address list (`:host:2809`, `iiop:1.2@host,:other`, `rir:`); an empty `sn` names the
/// context itself (no `#` part).
pub fn to_url(addr: &str, sn: &str) -> Result<String, NameError> {
    if addr.is_empty() || addr.contains(['/', '#']) {
        return Err(NameError::InvalidAddress);
    }
    corbina::giop::Corbaloc::parse(&format!("corbaloc:{addr}/NameService"))
        .map_err(|_| NameError::InvalidAddress)?;
    if sn.is_empty() {
        return Ok(format!("corbaname:{addr}"));
    }
    to_name(sn)?;
    Ok(format!("corbaname:{addr}#{}", url_escape(sn)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nc(id: &str, kind: &str) -> NameComponent {
        NameComponent {
            id: id.into(),
            kind: kind.into(),
        }
    }

    #[test]
    fn the_specifications_examples() {
        assert_eq!(
            to_name("a.b/c.d/.").unwrap(),
            vec![nc("a", "b"), nc("c", "d"), nc("", "")]
        );
        assert_eq!(to_name(".kind").unwrap(), vec![nc("", "kind")]);
        assert_eq!(
            to_name(r"a\.b/c\\d").unwrap(),
            vec![nc("a.b", ""), nc(r"c\d", "")]
        );
        assert_eq!(to_string(&[nc("", "")]).unwrap(), ".");
        assert_eq!(to_string(&[nc("a.b", "c/d")]).unwrap(), r"a\.b.c\/d");
        assert_eq!(to_string(&[nc("x", "")]).unwrap(), "x");
    }

    #[test]
    fn invalid_names() {
        for bad in ["", "/", "a/", "/a", "a//b", "a.b.c", "a\\"] {
            assert!(
                matches!(to_name(bad), Err(NameError::InvalidName(_))),
                "{bad:?} must be invalid"
            );
        }
        assert!(to_string(&[]).is_err());
    }

    #[test]
    fn round_trips_whatever_the_characters() {
        let tricky = ["", ".", "/", "\\", "a.b", "x/y\\z", "é", "#%"];
        for id in tricky {
            for kind in tricky {
                if id.is_empty() && kind.is_empty() {
                    continue;
                }
                let n = vec![nc(id, kind), nc("p", "")];
                let s = to_string(&n).unwrap();
                assert_eq!(to_name(&s).unwrap(), n, "{s}");
            }
        }
    }

    #[test]
    fn urls() {
        assert_eq!(
            to_url(":host:2809", "a b/c.d").unwrap(),
            "corbaname::host:2809#a%20b/c.d"
        );
        assert_eq!(
            to_url("iiop:1.2@h:1,:g", "x").unwrap(),
            "corbaname:iiop:1.2@h:1,:g#x"
        );
        assert_eq!(to_url(":h", "").unwrap(), "corbaname::h");
        assert_eq!(to_url("", "x"), Err(NameError::InvalidAddress));
        assert_eq!(to_url("bogus:h", "x"), Err(NameError::InvalidAddress));
        assert!(matches!(
            to_url(":h", "a//b"),
            Err(NameError::InvalidName(_))
        ));
        // The URL parses back to the same stringified name.
        let url = to_url(":h:1", r"a\/b.c/%").unwrap();
        let parsed = corbina::giop::Corbaname::parse(&url).unwrap();
        assert_eq!(parsed.name, r"a\/b.c/%");
    }
}
