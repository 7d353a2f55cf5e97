//! Generates the Rust stubs and skeletons for `idl/bench.idl` and `idl/bidir.idl`
//! (identical to the omniORB peers' files in `peers/`, so each side can call the other).
fn main() -> Result<(), Box<dyn std::error::Error>> {
    corbina_codegen::Builder::new()
        .include("idl")
        .compile(&["idl/bench.idl", "idl/bidir.idl"])?;
    Ok(())
}
