//! Generates the CosNaming stubs and skeletons from `idl/CosNaming.idl` (the OMG IDL as
//! Debian's `omniorb-idl` installs it, copied so the build needs no package), and
//! Corbina's lease extension from `idl/CorbinaLeases.idl`.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    corbina_codegen::Builder::new()
        .include("idl")
        .compile(&["idl/CosNaming.idl"])?;
    corbina_codegen::Builder::new()
        .include("idl")
        .compile(&["idl/CorbinaLeases.idl"])?;
    Ok(())
}
