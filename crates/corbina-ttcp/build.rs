//! Generates the Rust stubs and skeletons for `idl/bench.idl` (identical to the omniORB
//! peer's `bench.idl`, so each side can call the other).
fn main() -> Result<(), Box<dyn std::error::Error>> {
    corbina_codegen::Builder::new()
        .include("idl")
        .compile(&["idl/bench.idl"])?;
    Ok(())
}
