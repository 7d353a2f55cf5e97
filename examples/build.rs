//! Compiles `idl/examples.idl` to `$OUT_DIR/examples.rs`, as any crate using Corbina does
//! (`cargo add --build corbina-codegen`).
//!
//! Then, for `tests/mapping_doc.rs` only: the ```` ```idl ```` blocks of
//! `docs/mapping.md` are compiled the same way, and its ```` ```rust ```` blocks are written
//! out as modules that use the result, so that the test fails to build when the mapping
//! document and the generator disagree (as rustdoc does for doc comments).
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    corbina_codegen::Builder::new()
        .include("idl")
        .compile(&["idl/examples.idl"])?;
    mapping_doc(Path::new("../docs/mapping.md"))
}

fn mapping_doc(doc: &Path) -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed={}", doc.display());
    let out_dir = std::path::PathBuf::from(std::env::var_os("OUT_DIR").ok_or("no OUT_DIR")?);
    let text = std::fs::read_to_string(doc)?;
    let (mut idl, mut rust) = (String::new(), String::new());
    let mut lines = text.lines();
    let mut blocks = 0;
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```") else {
            continue;
        };
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        match info.trim() {
            "idl" => idl.extend(body.iter().map(|l| format!("{l}\n"))),
            "rust" => {
                blocks += 1;
                rust.push_str(&format!(
                    "#[allow(dead_code, unused_imports)]\npub mod block_{blocks} {{\n    use super::*;\n"
                ));
                rust.extend(body.iter().map(|l| format!("    {l}\n")));
                rust.push_str("}\n");
            }
            _ => {}
        }
    }
    rust.push_str(&format!("pub const RUST_BLOCKS: usize = {blocks};\n"));
    // Written only when they change: the Builder below registers its input with
    // `rerun-if-changed`, and a file rewritten by every run made every cargo command run this
    // script, and rebuild the crate, again.
    write_if_changed(&out_dir.join("mapping_doc.idl"), &idl)?;
    write_if_changed(&out_dir.join("mapping_doc_blocks.rs"), &rust)?;
    // AMI and AMH for the interface the document's AMI and AMH sections use.
    corbina_codegen::Builder::new()
        .ami_interfaces(["m::Bench"])
        .amh_interfaces(["m::Bench"])
        .compile(&[out_dir.join("mapping_doc.idl")])?;
    Ok(())
}

fn write_if_changed(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    std::fs::write(path, text)
}
