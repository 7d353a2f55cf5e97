//! The omniORBpy peer: `peers/differential_omnipy.py` run by omniORBpy 4.3.3 (PyPI
//! `jeteve-omniorb`, a wheel for CPython 3.11), installed once into a venv under
//! `<target>/<profile>/omniorb-peers/omnipy-venv` (Debian: `python3-venv`).

use super::{Profile, Tally};
use crate::{output_root, peers_source_dir, skip_unless, PeerProcess};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// The PyPI package and version of omniORBpy.
pub const PACKAGE: &str = "jeteve-omniorb==4.3.3.post7";

/// omniORBpy 4.3.3's known defects, each with why the harness avoids it (Corbina was right
/// in each; issue 27). The generator's [`profile`] leaves these cases out.
pub const KNOWN: &[(&str, &str)] = &[
    (
        "default-first",
        "segfaults decoding a union TypeCode whose default member comes first",
    ),
    ("wchar-in-any", "misreads a wchar inside an any at GIOP 1.2"),
    (
        "ulonglong-in-seq",
        "a sequence<unsigned long long> element >= 2^63 comes back as 2^64-1",
    ),
    (
        "bounded-string",
        "checks a bounded string against its UTF-8 byte count, not characters",
    ),
    ("long-double", "long double is BAD_TYPECODE"),
    (
        "member-count",
        "member_count() of a TypeCode made by create_struct_tc is a float",
    ),
    (
        "enum-tc",
        "create_enum_tc makes items that cannot be hashed (no _parent_id)",
    ),
    (
        "enum-disc",
        "making a union TypeCode with an enum discriminator raises INTERNAL",
    ),
    (
        "values",
        "asserts in pyTypeCode.cc:1328 (t_o) unmarshalling the TypeCode of a value type with a \
         member of its own type, then its echo raises (UNKNOWN); omniORB C++ takes the same \
         cases (seeds 10, 13)",
    ),
    (
        "except-in-any",
        "the server process ends on an exception in an Any (seed 5, GIOP 1.0)",
    ),
    (
        "abstract-interface",
        "the server process ends on an abstract interface holding a reference (seed 6)",
    ),
    (
        "wide-giop-1.1",
        "answers wchar/wstring at GIOP 1.1 with BAD_PARAM_WCharTCSNotKnown (omniORB has UTF-16 \
         for GIOP 1.2 only); the harness sends them at 1.2",
    ),
    (
        "custom-values-replies",
        "takes no custom value it has no factory for (`differential --probe-custom`: every \
         case NO_IMPLEMENT 0x41540024, UNKNOWN 0x4f4d0001 or MARSHAL), and for some of them \
         sends its exception Reply more than once: 85 of 259 request ids in a 300-case probe \
         got 2 to 22 identical Replies (UNKNOWN 0x4f4d0001, or NO_IMPLEMENT), seen in the \
         server's own sendto calls (strace), while each request id reached it once per \
         connection (Corbina neither resends nor reuses one). Corbina fails the connection on \
         a Reply no request awaits (COMM_FAILURE 0x43420204, 'reply for request id N, which \
         awaits no reply'): 2 of 300 probe cases plainly, 42 under strace's timing. Custom \
         values stay out of the omniORBpy profile (Profile::custom_values is off everywhere)",
    ),
];

/// What the generator may send omniORBpy.
pub fn profile() -> Profile {
    Profile {
        long_double: false,
        default_first: false,
        wchar_in_any: false,
        big_ulonglong_in_seq: false,
        non_ascii_bounded: false,
        // The rest as KNOWN says.
        values: false,
        exceptions: false,
        abstract_interfaces: false,
        wide_giop_1_1: false,
        ..Profile::full()
    }
}

/// The venv's `python`, installing omniORBpy on first use; `None` (after printing why, or
/// panicking when peers are required) when it cannot be had.
pub fn python() -> Option<&'static Path> {
    static PY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let r = PY.get_or_init(|| {
        let venv = std::env::var_os("CORBINA_OMNIPY_VENV")
            .map(PathBuf::from)
            .unwrap_or_else(|| output_root().join("omnipy-venv"));
        let py = venv.join("bin").join("python");
        let ok = |py: &Path| {
            Command::new(py)
                .args(["-c", "import omniORB, omniidl_be.python"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if ok(&py) {
            return Ok(py);
        }
        std::fs::create_dir_all(&venv).map_err(|e| e.to_string())?;
        let base = std::env::var("CORBINA_PYTHON").unwrap_or_else(|_| "python3".into());
        let st = Command::new(&base)
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .map_err(|e| format!("{base} -m venv: {e}"))?;
        if !st.success() {
            return Err(format!(
                "{base} -m venv failed (Debian: apt-get install python3-venv)"
            ));
        }
        let st = Command::new(&py)
            .args(["-m", "pip", "install", "-q", PACKAGE])
            .status()
            .map_err(|e| format!("pip: {e}"))?;
        if !st.success() || !ok(&py) {
            return Err(format!(
                "pip install {PACKAGE} failed (a CPython 3.11 is needed)"
            ));
        }
        Ok(py)
    });
    match r {
        Ok(p) => Some(p.as_path()),
        Err(e) => {
            skip_unless(false, "the omniORBpy differential tests", e);
            None
        }
    }
}

fn script() -> PathBuf {
    peers_source_dir().join("differential_omnipy.py")
}

/// The omniORBpy echo server; returns it and its IOR.
pub fn server(py: &Path, name: &str) -> (PeerProcess, String) {
    let dir = crate::fresh_dir(name);
    let ior_file = dir.join("echo.ior");
    let mut cmd = Command::new(py);
    cmd.arg(script())
        .arg("server")
        .arg(&ior_file)
        .stdout(Stdio::null());
    crate::start_with_ior(name, &mut cmd, &ior_file)
}

/// Runs the omniORBpy client against `ior`: `args` after the IOR (`SEED CASES`, or
/// nothing for `nodes`); returns its JSON lines as (ok, line).
pub fn client(py: &Path, mode: &str, ior: &str, args: &[String]) -> Vec<(bool, String)> {
    let out = Command::new(py)
        .arg(script())
        .arg(mode)
        .arg(ior)
        .args(args)
        .stderr(Stdio::piped())
        .output()
        .expect("running the omniORBpy client");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines: Vec<(bool, String)> = text
        .lines()
        .map(|l| (l.contains("\"ok\": true"), l.to_owned()))
        .collect();
    if !out.status.success() {
        lines.push((
            false,
            format!(
                "omniORBpy client exited with {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ),
        ));
    }
    lines
}

/// The omniORBpy client's cases against a Corbina echo servant, as a tally.
pub fn reverse(py: &Path, ior: &str, seed: u64, cases: u64) -> Tally {
    let mut t = Tally::default();
    for (ok, line) in client(py, "client", ior, &[seed.to_string(), cases.to_string()]) {
        t.ran += 1;
        if ok {
            t.passed += 1;
        } else {
            t.failed.push(format!("omniORBpy -> Corbina: {line}"));
        }
    }
    t
}

/// How long one peer may take to start.
pub const START: Duration = Duration::from_secs(30);
