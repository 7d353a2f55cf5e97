//! `corbina catior`: an object reference decoded for a person (or, with `--json`, for a
//! script): type id, each profile, each tagged component.

use corbina::cdr::{ByteOrder, CodeSetId};
use corbina::giop::{
    format_corbaloc, Component, Corbaloc, Ior, ObjAddr, ObjectKey, ObjectUrl, TaggedComponent,
    TaggedProfile,
};
use serde_json::{json, Value};

/// A vendor's name for an ORB type id (`TAG_ORB_TYPE`), for the ids we know.
pub fn vendor(orb_type: u32) -> Option<&'static str> {
    Some(match orb_type {
        0x4154_5400 => "omniORB",
        0x5441_4f00 => "TAO",
        0x4a41_4300 => "JacORB",
        0x4342_4e00 => "Corbina",
        0x5355_4e00 => "Sun/Oracle Java ORB",
        0x4d49_434f => "MICO",
        _ => return None,
    })
}

/// The name of a tagged component's tag.
pub fn component_name(tag: u32) -> Option<&'static str> {
    Some(match tag {
        0 => "TAG_ORB_TYPE",
        1 => "TAG_CODE_SETS",
        2 => "TAG_POLICIES",
        3 => "TAG_ALTERNATE_IIOP_ADDRESS",
        5 => "TAG_ASSOCIATION_OPTIONS",
        20 => "TAG_SSL_SEC_TRANS",
        25 => "TAG_JAVA_CODEBASE",
        26 => "TAG_TRANSACTION_POLICY",
        27 => "TAG_FT_GROUP",
        28 => "TAG_FT_PRIMARY",
        29 => "TAG_FT_HEARTBEAT_ENABLED",
        31 => "TAG_MESSAGE_ROUTERS",
        32 => "TAG_OTS_POLICY",
        33 => "TAG_CSI_SEC_MECH_LIST",
        34 => "TAG_NULL_TAG",
        35 => "TAG_SECIOP_SEC_TRANS",
        36 => "TAG_TLS_SEC_TRANS",
        38 => "TAG_RMI_CUSTOM_MAX_STREAM_FORMAT",
        // omniORB's own tags (IOP::TAG_OMNIORB_* in omniORB's ior.cc).
        0x4154_5401 => "TAG_OMNIORB_BIDIR",
        0x4154_5402 => "TAG_OMNIORB_UNIX_TRANS",
        0x4154_5403 => "TAG_OMNIORB_PERSISTENT_ID",
        0x4154_5404 => "TAG_OMNIORB_RESTRICTED_CONNECTION",
        0x4342_4e01 => "TAG_CORBINA_SHM_TRANS",
        _ => return None,
    })
}

fn profile_name(tag: u32) -> &'static str {
    match tag {
        0 => "TAG_INTERNET_IOP",
        1 => "TAG_MULTIPLE_COMPONENTS",
        2 => "TAG_SCCP_IOP",
        3 => "TAG_UIPMC",
        _ => "unknown profile",
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn code_set(id: CodeSetId) -> String {
    match id.name() {
        Some(n) => format!("{n} ({:#010x})", id.0),
        None => format!("{:#010x}", id.0),
    }
}

fn code_set_json(id: CodeSetId) -> Value {
    json!({ "id": id.0, "name": id.name() })
}

fn key_json(key: &ObjectKey) -> Value {
    json!({ "hex": key.to_hex(), "text": key.printable(), "length": key.as_bytes().len() })
}

fn byte_order(o: ByteOrder) -> &'static str {
    if o == ByteOrder::Little {
        "little-endian"
    } else {
        "big-endian"
    }
}

/// `Security::AssociationOptions` bits by name (SSLIOP's `target_supports`/`target_requires`).
fn association_options(bits: u16) -> String {
    const NAMES: [&str; 7] = [
        "NoProtection",
        "Integrity",
        "Confidentiality",
        "DetectReplay",
        "DetectMisordering",
        "EstablishTrustInTarget",
        "EstablishTrustInClient",
    ];
    let mut names: Vec<String> = NAMES
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .map(|(_, n)| (*n).to_owned())
        .collect();
    let rest = bits & !0x7f;
    if rest != 0 {
        names.push(format!("{rest:#x}"));
    }
    if names.is_empty() {
        "none".into()
    } else {
        names.join("|")
    }
}

/// One component: (human lines, JSON).
fn component(c: &TaggedComponent) -> (Vec<String>, Value) {
    let name = component_name(c.tag);
    let label = name.map_or_else(|| format!("tag {:#x}", c.tag), str::to_owned);
    let raw = || {
        (
            vec![format!(
                "{label}: {} bytes {}",
                c.component_data.len(),
                hex(&c.component_data)
            )],
            json!({ "tag": c.tag, "name": name, "data_hex": hex(&c.component_data) }),
        )
    };
    if let Some(local) = corbina::transport::component::LocalTransport::from_component(c) {
        return match local {
            Ok(l) => {
                let what = match l.kind {
                    corbina::transport::TransportKind::Shm => "shared memory",
                    _ => "Unix socket",
                };
                (
                    vec![format!(
                        "{label}: {what} {} on host {}",
                        l.path.display(),
                        l.host
                    )],
                    json!({ "tag": c.tag, "name": name, "host": l.host, "path": l.path.to_string_lossy() }),
                )
            }
            Err(e) => {
                let (mut lines, mut v) = raw();
                lines[0].push_str(&format!("  (malformed: {e})"));
                v["error"] = json!(e.to_string());
                (lines, v)
            }
        };
    }
    match c.decode_known() {
        Ok(Component::OrbType(t)) => {
            let v = vendor(t);
            let ascii: String = t
                .to_be_bytes()
                .iter()
                .take_while(|b| **b != 0)
                .map(|&b| if b.is_ascii_graphic() { b as char } else { '.' })
                .collect();
            let who = v.map_or_else(|| format!("unknown vendor \"{ascii}\""), str::to_owned);
            (
                vec![format!("ORB type: {who} ({t:#010x})")],
                json!({ "tag": c.tag, "name": name, "orb_type": t, "vendor": v }),
            )
        }
        Ok(Component::CodeSets(cs)) => {
            let list = |v: &[CodeSetId]| v.iter().map(|&i| code_set(i)).collect::<Vec<_>>();
            let side = |label: &str, s: &corbina::giop::CodeSetComponent| {
                let conv = list(&s.conversion_code_sets);
                format!(
                    "  {label}: native {}{}",
                    code_set(s.native_code_set),
                    if conv.is_empty() {
                        String::new()
                    } else {
                        format!(", converts to {}", conv.join(", "))
                    }
                )
            };
            let side_json = |s: &corbina::giop::CodeSetComponent| {
                json!({
                    "native": code_set_json(s.native_code_set),
                    "conversion": s.conversion_code_sets.iter().map(|&i| code_set_json(i)).collect::<Vec<_>>(),
                })
            };
            (
                vec![
                    "code sets:".to_owned(),
                    side("char ", &cs.for_char_data),
                    side("wchar", &cs.for_wchar_data),
                ],
                json!({
                    "tag": c.tag, "name": name,
                    "char": side_json(&cs.for_char_data),
                    "wchar": side_json(&cs.for_wchar_data),
                }),
            )
        }
        Ok(Component::AlternateIiopAddress { host, port }) => (
            vec![format!("alternate address: {host}:{port}")],
            json!({ "tag": c.tag, "name": name, "host": host, "port": port }),
        ),
        Ok(Component::SslSecTrans(ssl)) => (
            vec![format!(
                "{label}: TLS port {}, target_supports {:#x} ({}), target_requires {:#x} ({})",
                ssl.port,
                ssl.target_supports,
                association_options(ssl.target_supports),
                ssl.target_requires,
                association_options(ssl.target_requires),
            )],
            json!({
                "tag": c.tag, "name": name, "port": ssl.port,
                "target_supports": ssl.target_supports,
                "target_requires": ssl.target_requires,
            }),
        ),
        Ok(Component::Other(_)) => raw(),
        Err(e) => {
            let (mut lines, mut v) = raw();
            lines[0].push_str(&format!("  (malformed: {e})"));
            v["error"] = json!(e.to_string());
            (lines, v)
        }
    }
}

fn profile(i: usize, p: &TaggedProfile) -> (Vec<String>, Value) {
    let Some(iiop) = p.iiop() else {
        return (
            vec![format!(
                "profile {i}: {} (tag {}), {} bytes {}",
                profile_name(p.tag),
                p.tag,
                p.profile_data.len(),
                hex(&p.profile_data)
            )],
            json!({ "tag": p.tag, "name": profile_name(p.tag), "data_hex": hex(&p.profile_data) }),
        );
    };
    let iiop = match iiop {
        Ok(x) => x,
        Err(e) => {
            return (
                vec![format!("profile {i}: IIOP, malformed: {e}")],
                json!({ "tag": p.tag, "name": profile_name(p.tag), "error": e.to_string(),
                        "data_hex": hex(&p.profile_data) }),
            )
        }
    };
    let key = &iiop.object_key;
    let mut lines = vec![
        format!(
            "profile {i}: IIOP {}.{}  host {}  port {}",
            iiop.version.major, iiop.version.minor, iiop.host, iiop.port
        ),
        format!(
            "  object key ({} bytes): {}",
            key.as_bytes().len(),
            key.printable()
        ),
        format!("    hex: {}", key.to_hex()),
    ];
    let mut comps = Vec::new();
    for c in &iiop.components {
        let (l, v) = component(c);
        lines.extend(l.into_iter().map(|s| format!("  {s}")));
        comps.push(v);
    }
    let corbaloc = format_corbaloc(&iiop.host, iiop.port, key.as_bytes());
    lines.push(format!("  corbaloc: {corbaloc}"));
    (
        lines,
        json!({
            "tag": p.tag, "name": profile_name(p.tag),
            "iiop_version": format!("{}.{}", iiop.version.major, iiop.version.minor),
            "host": iiop.host, "port": iiop.port,
            "object_key": key_json(key),
            "components": comps,
            "corbaloc": corbaloc,
        }),
    )
}

fn ior(ior: &Ior) -> (Vec<String>, Value) {
    let mut lines = vec![
        format!(
            "type id: {}",
            if ior.type_id.is_empty() {
                "(none)"
            } else {
                &ior.type_id
            }
        ),
        format!(
            "{} profile(s), {}{}",
            ior.profiles.len(),
            byte_order(ior.byte_order),
            if ior.is_nil() { ", nil reference" } else { "" }
        ),
    ];
    let mut profiles = Vec::new();
    for (i, p) in ior.profiles.iter().enumerate() {
        let (l, v) = profile(i, p);
        lines.extend(l);
        profiles.push(v);
    }
    (
        lines,
        json!({
            "kind": "IOR", "type_id": ior.type_id, "nil": ior.is_nil(),
            "byte_order": byte_order(ior.byte_order), "profiles": profiles,
        }),
    )
}

fn addresses(loc: &Corbaloc) -> (Vec<String>, Vec<Value>) {
    loc.addresses
        .iter()
        .map(|a| match a {
            ObjAddr::Rir => (
                "  rir: (resolve_initial_references)".to_owned(),
                json!({ "protocol": "rir" }),
            ),
            ObjAddr::Iiop(a) => {
                let v = a.version.map(|v| format!("{}.{}", v.major, v.minor));
                (
                    format!(
                        "  IIOP {}  host {}  port {}",
                        v.as_deref().unwrap_or("1.0 (default)"),
                        a.host,
                        a.port
                    ),
                    json!({ "protocol": "iiop", "version": v, "host": a.host, "port": a.port }),
                )
            }
        })
        .unzip()
}

/// Decodes `input` (IOR, corbaloc or corbaname): (human text, JSON).
pub fn describe(input: &str) -> Result<(String, Value), String> {
    let input = input.trim();
    let (lines, v) = match ObjectUrl::parse(input).map_err(|e| format!("{input}: {e}"))? {
        ObjectUrl::Ior(i) => ior(&i),
        ObjectUrl::Corbaloc(loc) => {
            let (mut lines, addrs) = addresses(&loc);
            lines.insert(
                0,
                "corbaloc URL (no type id or components: not an IOR)".into(),
            );
            lines.push(format!(
                "object key ({} bytes): {}",
                loc.key.as_bytes().len(),
                loc.key.printable()
            ));
            lines.push(format!("  hex: {}", loc.key.to_hex()));
            (
                lines,
                json!({ "kind": "corbaloc", "addresses": addrs, "object_key": key_json(&loc.key) }),
            )
        }
        ObjectUrl::Corbaname(n) => {
            let (mut lines, addrs) = addresses(&n.corbaloc);
            lines.insert(0, "corbaname URL: a name in a naming context".into());
            lines.push(format!(
                "context object key: {}",
                n.corbaloc.key.printable()
            ));
            lines.push(format!(
                "name: {}",
                if n.name.is_empty() {
                    "(none: the context itself)"
                } else {
                    &n.name
                }
            ));
            (
                lines,
                json!({ "kind": "corbaname", "addresses": addrs,
                        "object_key": key_json(&n.corbaloc.key), "name": n.name }),
            )
        }
    };
    Ok((lines.join("\n"), v))
}

/// `corbina catior [--json] REF…` (a REF naming a file reads the reference from it).
/// `corbina catior`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// Print JSON for scripts instead of text
    #[arg(long)]
    json: bool,
    /// References: IOR:…, corbaloc:…, corbaname:…, or a file holding one on its first line
    #[arg(required = true, value_name = "IOR|corbaloc|corbaname|FILE")]
    refs: Vec<String>,
}

/// `corbina catior …`; returns the exit code (1 if a reference could not be decoded).
pub fn main(args: Args) -> Result<u8, String> {
    let Args {
        json: json_out,
        refs,
    } = args;
    let mut values = Vec::new();
    let mut failed = false;
    for r in &refs {
        match crate::reference::text(r).and_then(|text| describe(&text)) {
            Ok((human, v)) => {
                if json_out {
                    values.push(v);
                } else {
                    if refs.len() > 1 {
                        println!("== {r}");
                    }
                    println!("{human}");
                }
            }
            Err(e) => {
                eprintln!("corbina catior: {e}");
                failed = true;
            }
        }
    }
    if json_out {
        let out = if values.len() == 1 && refs.len() == 1 {
            values.remove(0)
        } else {
            Value::Array(values)
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?
        );
    }
    Ok(u8::from(failed))
}
