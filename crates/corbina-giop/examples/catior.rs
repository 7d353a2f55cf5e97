//! Decodes object references for a person, as omniORB's `catior` does.
//!
//! `cargo run -p corbina-giop --example catior [IOR:…|corbaloc:…|corbaname:…]…`
//!
//! With no argument it decodes the IORs that omniORB 4.2.5 and JacORB 3.9 servers really
//! wrote (checked into the test vectors), re-encodes each and checks the bytes are identical,
//! and shows the corbaloc URL that reaches the same object.

use corbina_giop::{format_corbaloc, Component, Ior, ObjAddr, ObjectUrl, TaggedComponent};

const CAPTURED: &str = include_str!("../tests/vectors/iors.txt");

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let inputs: Vec<String> = if args.is_empty() {
        CAPTURED
            .lines()
            .filter(|l| l.starts_with("IOR:"))
            .map(str::to_owned)
            .collect()
    } else {
        args
    };
    let mut failed = false;
    for input in &inputs {
        if let Err(e) = show(input) {
            eprintln!("error: {e}");
            failed = true;
        }
        println!();
    }
    if failed {
        std::process::exit(1);
    }
}

fn show(input: &str) -> Result<(), String> {
    match ObjectUrl::parse(input.trim()).map_err(|e| e.to_string())? {
        ObjectUrl::Ior(ior) => show_ior(input.trim(), &ior),
        ObjectUrl::Corbaloc(loc) => {
            println!("corbaloc, object key {:?}", loc.key.printable());
            for a in &loc.addresses {
                match a {
                    ObjAddr::Iiop(a) => println!("  {a}"),
                    ObjAddr::Rir => println!("  rir (resolve_initial_references)"),
                }
            }
            Ok(())
        }
        ObjectUrl::Corbaname(name) => {
            println!("corbaname: {name}");
            Ok(())
        }
    }
}

fn show_ior(text: &str, ior: &Ior) -> Result<(), String> {
    let bytes = ior.to_encapsulation().map_err(|e| e.to_string())?;
    let round_trip = format!("IOR:{}", hex(&bytes));
    let identical = round_trip.eq_ignore_ascii_case(text);
    println!("type id   {}", ior.type_id);
    println!(
        "encoding  {} bytes, {:?}-endian; re-encoded {}",
        bytes.len(),
        ior.byte_order,
        if identical {
            "byte for byte identical"
        } else {
            "DIFFERENTLY"
        }
    );
    if !identical {
        return Err("re-encoded IOR differs from the input".into());
    }
    for (i, p) in ior.profiles.iter().enumerate() {
        let Some(iiop) = p.iiop() else {
            println!(
                "profile {i}: tag {} ({} bytes, kept verbatim)",
                p.tag,
                p.profile_data.len()
            );
            continue;
        };
        let iiop = iiop.map_err(|e| e.to_string())?;
        println!(
            "profile {i}: IIOP {}  {}:{}",
            iiop.version, iiop.host, iiop.port
        );
        println!(
            "  object key  {} ({} bytes)",
            iiop.object_key.to_hex(),
            iiop.object_key.as_bytes().len()
        );
        println!("  as text     {}", iiop.object_key.printable());
        for c in &iiop.components {
            println!("  {}", component(c));
        }
        println!(
            "  corbaloc    {}",
            format_corbaloc(&iiop.host, iiop.port, iiop.object_key.as_bytes())
        );
    }
    Ok(())
}

fn component(c: &TaggedComponent) -> String {
    match c.decode_known() {
        Ok(Component::OrbType(t)) => {
            let vendor = match t {
                0x4154_5400 => " (omniORB)",
                0x4a41_4300 => " (JacORB)",
                0x5441_4f00 => " (TAO)",
                _ => "",
            };
            format!("ORB type    {t:#010x}{vendor}")
        }
        Ok(Component::CodeSets(cs)) => {
            let name = |id: corbina_cdr::CodeSetId| {
                id.name()
                    .map_or_else(|| format!("{:#010x}", id.0), str::to_owned)
            };
            let list = |v: &[corbina_cdr::CodeSetId]| {
                v.iter().map(|&id| name(id)).collect::<Vec<_>>().join(", ")
            };
            format!(
                "code sets   char {} [{}], wchar {} [{}]",
                name(cs.for_char_data.native_code_set),
                list(&cs.for_char_data.conversion_code_sets),
                name(cs.for_wchar_data.native_code_set),
                list(&cs.for_wchar_data.conversion_code_sets)
            )
        }
        Ok(Component::AlternateIiopAddress { host, port }) => {
            format!("alternate   {host}:{port}")
        }
        _ => format!(
            "tag {}      {} bytes {}",
            c.tag,
            c.component_data.len(),
            hex(&c.component_data)
        ),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
