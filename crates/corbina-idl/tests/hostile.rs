//! Hostile input: the front end returns Ok or Err, never panics or overflows the stack.

use corbina_idl::Frontend;
use proptest::prelude::*;

const TRICKY: &str = include_str!("idl/tricky.idl");
const BENCH: &str = include_str!("idl/bench.idl");

fn run(text: &str) {
    let _ = Frontend::new().parse_str("fuzz.idl", text);
}

#[test]
fn truncated_real_files() {
    for src in [TRICKY, BENCH] {
        let chars: Vec<char> = src.chars().collect();
        for cut in (0..chars.len()).step_by(7) {
            run(&chars[..cut].iter().collect::<String>());
        }
    }
}

#[test]
fn deep_nesting_reports_an_error() {
    let deep = "module M { ".repeat(100_000);
    let err = Frontend::new().parse_str("deep.idl", &deep).unwrap_err();
    assert!(
        err.to_string().contains("nesting too deep (limit 256)"),
        "{err}"
    );
    let seq = format!(
        "typedef {}long{} T;",
        "sequence<".repeat(10_000),
        ">".repeat(10_000)
    );
    assert!(Frontend::new().parse_str("seq.idl", &seq).is_err());
    let ok = format!(
        "typedef {}long{} T;",
        "sequence<".repeat(100),
        ">".repeat(100)
    );
    Frontend::new().parse_str("seq.idl", &ok).unwrap();
    let hash_if = "#if 1\n".repeat(10_000);
    assert!(Frontend::new().parse_str("if.idl", &hash_if).is_err());
    let mac = "#define A B\n#define B A\nA\n";
    assert!(Frontend::new().parse_str("mac.idl", mac).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        run(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn random_idl_tokens(toks in proptest::collection::vec(prop::sample::select(vec![
        "module", "interface", "struct", "union", "switch", "case", "default", "enum", "typedef",
        "sequence", "<", ">", ">>", "{", "}", "(", ")", ";", ":", "::", ",", "long", "A", "B", "=",
        "const", "1", "-", "~", "'c'", "\"s\"", "#define X", "#if", "#endif", "\n", "oneway", "void",
        "in", "out", "raises", "valuetype", "abstract", "@key", "[", "]", "fixed", "string", "*",
    ]), 0..80)) {
        run(&toks.join(" "));
    }

    #[test]
    fn mutated_real_file(pos in 0usize..4000, byte in any::<u8>()) {
        let mut b = TRICKY.as_bytes().to_vec();
        let p = pos % b.len();
        b[p] = byte;
        run(&String::from_utf8_lossy(&b));
    }
}

#[test]
fn a_union_with_every_label_is_checked_quickly() {
    // 65536 distinct labels and a default: duplicate and coverage checks stay linear.
    let cases: String = (0..65536u32)
        .map(|i| format!("case {i}: long m{i};\n"))
        .collect();
    let src = format!("union U switch (unsigned short) {{\n{cases}default: long other;\n}};");
    let start = std::time::Instant::now();
    let err = Frontend::new().parse_str("big.idl", &src).unwrap_err();
    assert_eq!(
        err.to_string(),
        "big.idl:65538:1: error: union 'U' cannot have a default label: its case labels already cover every value of 'unsigned short'"
    );
    assert!(start.elapsed().as_secs() < 60, "{:?}", start.elapsed());
}
