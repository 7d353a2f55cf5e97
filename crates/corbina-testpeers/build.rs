//! Generates the Rust stubs and skeletons for `peers/differential_static.idl`, the
//! differential harness's static types (the omniORB and JacORB peers compile the same file).
fn main() -> Result<(), Box<dyn std::error::Error>> {
    corbina_codegen::Builder::new().compile(&["../../peers/differential_static.idl"])?;
    Ok(())
}
