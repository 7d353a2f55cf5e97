//! Repository ids (`IDL:prefix/Scoped/Name:major.minor`).
//!
//! Ids are first computed from the `#pragma prefix` in effect where each
//! definition appears (see [`default_id`]); `typeprefix`, `typeid`,
//! `#pragma ID` and `#pragma version` may name a definition later in the
//! file, so they are applied afterwards by [`apply_overrides`].

use crate::diagnostic::SourceLoc;
use crate::model::{Definition, ScopedName};
use std::collections::HashMap;

/// The `#pragma prefix` in effect: the prefix and the scope depth where it
/// was set (names are made relative to that scope, as the spec requires).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PrefixState {
    pub prefix: String,
    pub base: usize,
}

/// Explicit ids, versions and type prefixes collected during resolution.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub ids: HashMap<ScopedName, (String, SourceLoc)>,
    pub versions: HashMap<ScopedName, String>,
    pub typeprefixes: HashMap<ScopedName, String>,
}

fn format_id(prefix: &str, names: &[String], version: &str) -> String {
    let path = names.join("/");
    if prefix.is_empty() {
        format!("IDL:{path}:{version}")
    } else {
        format!("IDL:{prefix}/{path}:{version}")
    }
}

/// The id of `name` under the pragma prefix `state`, version 1.0.
pub fn default_id(state: &PrefixState, name: &ScopedName) -> String {
    let base = state.base.min(name.0.len().saturating_sub(1));
    format_id(&state.prefix, &name.0[base..], "1.0")
}

/// Applies `typeprefix`, `typeid`, `#pragma ID` and `#pragma version`.
pub fn apply_overrides(defs: &mut [Definition], ov: &Overrides) {
    for d in defs.iter_mut() {
        if let Some((id, _)) = ov.ids.get(&d.scoped_name) {
            d.repository_id = id.clone();
        } else {
            let n = &d.scoped_name.0;
            // The innermost enclosing scope (or the definition itself) with a typeprefix.
            let tp = (1..=n.len()).rev().find_map(|k| {
                ov.typeprefixes
                    .get(&ScopedName(n[..k].to_vec()))
                    .map(|p| (p, k - 1))
            });
            if let Some((prefix, base)) = tp {
                d.repository_id = format_id(prefix, &n[base..], "1.0");
            }
            if let Some(v) = ov.versions.get(&d.scoped_name) {
                if let Some((head, _)) = d.repository_id.rsplit_once(':') {
                    d.repository_id = format!("{head}:{v}");
                }
            }
        }
        apply_children(d, ov);
    }
}

fn apply_children(d: &mut Definition, ov: &Overrides) {
    use crate::model::DefinitionKind as K;
    let children = match &mut d.kind {
        K::Module(m) => &mut m.definitions,
        K::Interface(i) => &mut i.definitions,
        K::Struct(s) => &mut s.definitions,
        K::Union(u) => &mut u.definitions,
        K::Exception(e) => &mut e.definitions,
        K::ValueType(v) => &mut v.definitions,
        _ => return,
    };
    apply_overrides(children, ov);
}
