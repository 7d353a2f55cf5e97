//! The `corbina-names` command line as users of Rust tools expect it: `--help`,
//! `--version`, usage errors with exit code 2, `-ORB…` options taken out first.

use std::process::{Command, Output};

fn names(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_corbina-names"))
        .args(args)
        .output()
        .expect("corbina-names runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn help_version_and_usage_errors() {
    let o = names(&["--help"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let help = String::from_utf8_lossy(&o.stdout);
    for flag in [
        "Usage: corbina-names [OPTIONS]",
        "--endpoint <HOST:PORT>",
        "--data-dir <DIR>",
        "--iterator-timeout <SECS>",
        "--max-iterators <N>",
        "--ior-file <FILE>",
        "-ORBEndpoint",
    ] {
        assert!(help.contains(flag), "{flag}: {help}");
    }
    // `-ORB…` options do not hide `--help` behind them.
    assert!(names(&["-ORBtraceLevel", "0", "-h"]).status.success());

    let o = names(&["--version"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!("corbina-names {}", env!("CARGO_PKG_VERSION"))
    );

    for (args, why) in [
        (&["--frobnicate"][..], "unexpected argument '--frobnicate'"),
        (&["--endpoint", "localhost"], "expected HOST:PORT"),
        (&["--endpoint=:http"], "`http` is not a port number"),
        (&["--iterator-timeout", "0"], "positive number of seconds"),
        (&["--max-iterators", "0"], "--max-iterators"),
        (&["--data-dir"], "a value is required"),
        (&["-ORBfrobnicate", "1"], "unknown ORB option"),
    ] {
        let o = names(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(why), "{args:?}: {}", stderr(&o));
    }
}
