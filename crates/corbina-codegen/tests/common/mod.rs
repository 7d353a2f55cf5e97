//! Shared by the tests that type-check generated Rust.

use std::process::Command;

/// Type-checks `src` as a library crate against the `corbina` this test was built with
/// (`rustc --emit=metadata`: no code generation, so seconds, not minutes).
pub fn rustc_check(name: &str, src: &str) -> Result<(), String> {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let rlib = std::fs::read_dir(deps)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("libcorbina-") && n.ends_with(".rlib")
        })
        .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
        .expect("the corbina rlib next to this test");
    let dir = std::env::temp_dir().join(format!("corbina-check-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("lib.rs");
    std::fs::write(&lib, src).unwrap();
    let out = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .args([
            "--edition",
            "2021",
            "--crate-type",
            "lib",
            "--emit=metadata",
            "--crate-name",
        ])
        .arg(format!("check_{name}"))
        .arg("-o")
        .arg(dir.join("out.rmeta"))
        .arg("-L")
        .arg(format!("dependency={}", deps.display()))
        .arg("--extern")
        .arg(format!("corbina={}", rlib.display()))
        .arg(&lib)
        .output()
        .unwrap();
    let res = if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr)
            .chars()
            .take(20_000)
            .collect())
    };
    std::fs::remove_dir_all(&dir).ok();
    res
}
