//! Compiles `idl/examples.idl` to `$OUT_DIR/examples.rs`, as any crate using Corbina does
//! (`cargo add --build corbina-codegen`).
fn main() -> Result<(), Box<dyn std::error::Error>> {
    corbina_codegen::Builder::new()
        .include("idl")
        .compile(&["idl/examples.idl"])?;
    Ok(())
}
