//! `corbina-ttcp suite --quick` end to end with tiny totals (the hidden knobs): every
//! experiment kind shows up in the JSON lines, every line parses, the table and targets
//! are printed. Without `--peer`, so it needs no omniORB and stays fast.

use std::collections::BTreeSet;
use std::process::Command;

use corbina_ttcp::record::Record;

fn which(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn quick_suite_writes_every_experiment_kind() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("suite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("out.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_corbina-ttcp"))
        .args([
            "suite",
            "--quick",
            "--total-mb",
            "0.05",
            "--max-seconds",
            "0.01",
        ])
        .args(["--count", "50", "--scal-max", "100", "--threads-max", "2"])
        .args(["--rounds", "2"])
        .arg("--json")
        .arg(&json)
        .arg("--plot")
        .arg(dir.join("plots"))
        .output()
        .expect("suite runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "suite failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("experiment") && stdout.contains("targets"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(&json).unwrap();
    let records: Vec<Record> = text
        .lines()
        .map(|l| Record::from_json(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kinds: BTreeSet<(&str, &str)> = records
        .iter()
        .map(|r| (r.experiment.as_str(), r.implementation.as_str()))
        .collect();
    for want in [
        ("throughput", "corbina"),
        ("throughput", "socket"),
        ("latency", "corbina"),
        ("latency", "socket"),
        ("oneway_rate", "corbina"),
        ("oneway_rate", "socket"),
        ("cpu", "corbina"),
        ("cpu", "socket"),
        ("scalability", "corbina"),
        ("memory", "corbina"),
        ("concurrency", "corbina"),
        ("bidir", "corbina"),
        ("events", "corbina"),
    ] {
        assert!(kinds.contains(&want), "no {want:?} in {kinds:?}");
    }
    // Oneways were also measured batched, as their own op, and every one arrived (the
    // closing twoway would have failed otherwise).
    assert!(records.iter().any(|r| r.experiment == "oneway_rate"
        && r.op.as_deref() == Some("ping_oneway_buffered")
        && r.calls_per_s.unwrap_or(0.0) > 0.0));
    // Every throughput point was counted whole by the receiver.
    assert!(records
        .iter()
        .filter(|r| r.experiment == "throughput" && r.available)
        .all(|r| r.complete == Some(true) && r.mbit_s.unwrap() > 0.0));
    // Every invocation mode measured throughput and the latency loops, pinned, as medians
    // over interleaved rounds.
    for inv in ["static", "dii", "dii_reuse", "dsi"] {
        for e in ["throughput", "latency", "cpu"] {
            assert!(
                records.iter().any(|r| r.experiment == e
                    && r.implementation == "corbina"
                    && r.available
                    && r.invocation.as_deref() == Some(inv)),
                "no {e} record for {inv}"
            );
        }
    }
    let ping = records
        .iter()
        .find(|r| r.experiment == "latency" && r.op.as_deref() == Some("ping"))
        .unwrap();
    let note = ping.note.as_deref().unwrap_or_default();
    assert!(
        note.contains("interleaved rounds") && note.contains("pin same"),
        "{note}"
    );
    // The callgrind stage ran (or says why not: no valgrind).
    let ir: Vec<&Record> = records
        .iter()
        .filter(|r| r.experiment == "instructions")
        .collect();
    assert!(!ir.is_empty());
    if which("valgrind") {
        assert!(ir.iter().all(|r| r.instructions_per_call.unwrap() > 0.0));
    }
    // The thread-pool server model is measured, or reported as not yet available.
    assert!(records
        .iter()
        .any(|r| r.server_model.as_deref() == Some("pool")));
    // Every events point delivered to its consumers, and the events table was printed.
    let events: Vec<&Record> = records
        .iter()
        .filter(|r| r.experiment == "events")
        .collect();
    assert_eq!(events.len(), 8, "{events:?}");
    for (kind, filter) in [("any", false), ("structured", false), ("structured", true)] {
        assert!(
            events
                .iter()
                .any(|r| r.mode.as_deref() == Some(kind) && r.filter == Some(filter)),
            "no {kind} point with filter {filter}"
        );
    }
    assert!(events
        .iter()
        .all(|r| r.events_per_s.unwrap() > 0.0 && r.median_us.unwrap() > 0.0));
    assert!(stdout.contains("events point"), "{stdout}");
    // The Unix-domain socket baseline ran too.
    assert!(records.iter().any(|r| r.transport == "unix"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn quick_suite_measures_every_transport() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("suite-transports-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("out.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_corbina-ttcp"))
        .args(["suite", "--quick", "--transports", "tcp,unix,shm"])
        .args(["--total-mb", "0.05", "--max-seconds", "0.01"])
        .args(["--count", "50", "--scal-max", "1", "--threads-max", "1"])
        .args(["--rounds", "1"])
        .arg("--json")
        .arg(&json)
        .output()
        .expect("suite runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "suite failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records: Vec<Record> = std::fs::read_to_string(&json)
        .unwrap()
        .lines()
        .map(|l| Record::from_json(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    for tr in ["tcp", "unix", "shm"] {
        for e in ["latency", "oneway_rate", "cpu", "throughput"] {
            assert!(
                records.iter().any(|r| r.experiment == e
                    && r.implementation == "corbina"
                    && r.transport == tr
                    && r.available),
                "no corbina {e} record over {tr}"
            );
        }
        assert!(records.iter().any(|r| r.experiment == "throughput"
            && r.transport == tr
            && r.data_type.as_deref() == Some("octet")
            && r.complete == Some(true)));
    }
    // The quick suite keeps the other experiments on TCP.
    assert!(records
        .iter()
        .filter(|r| ["scalability", "concurrency", "instructions"].contains(&r.experiment.as_str()))
        .all(|r| r.transport == "tcp"));
    // The report has the transport rows and targets.
    for want in [
        "unix transport",
        "shm transport",
        "Unix socket: null twoway",
        "shared memory: oneway sequence<octet>",
    ] {
        assert!(stdout.contains(want), "no {want:?} in\n{stdout}");
    }
    // tcp is the reference and cannot be left out; unknown names are refused.
    for bad in ["unix,shm", "tcp,udp"] {
        let o = Command::new(env!("CARGO_BIN_EXE_corbina-ttcp"))
            .args(["suite", "--quick", "--transports", bad])
            .output()
            .unwrap();
        assert!(!o.status.success(), "--transports {bad} accepted");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn only_runs_the_chosen_experiments() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("suite-only-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("out.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_corbina-ttcp"))
        .args(["suite", "--quick", "--only", "latency,concurrency"])
        .args(["--transports", "tcp,unix"])
        .args([
            "--count",
            "50",
            "--threads-max",
            "2",
            "--max-seconds",
            "0.01",
        ])
        .args(["--rounds", "2"])
        .arg("--json")
        .arg(&json)
        .output()
        .expect("suite runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "suite failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records: Vec<Record> = std::fs::read_to_string(&json)
        .unwrap()
        .lines()
        .map(|l| Record::from_json(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kinds: BTreeSet<&str> = records.iter().map(|r| r.experiment.as_str()).collect();
    assert_eq!(
        kinds,
        BTreeSet::from(["latency", "oneway_rate", "cpu", "concurrency"]),
        "{kinds:?}"
    );
    // The raw Unix-socket ping-pong ran in the interleaved pinned rounds.
    let raw_unix = records
        .iter()
        .find(|r| {
            r.experiment == "latency"
                && r.implementation == "socket"
                && r.transport == "unix"
                && r.op.as_deref() == Some("pingpong")
        })
        .expect("a raw Unix-socket ping-pong record");
    let note = raw_unix.note.as_deref().unwrap_or_default();
    assert!(note.contains("median of 2 interleaved rounds"), "{note}");
    // Concurrency is a median over rounds too, for every thread count and sharing mode.
    let conc: Vec<&Record> = records
        .iter()
        .filter(|r| r.experiment == "concurrency" && r.available)
        .collect();
    for threads in [1, 2] {
        for mode in ["own_orb", "shared_ref"] {
            for model in ["thread_per_connection", "pool"] {
                let r = conc
                    .iter()
                    .find(|r| {
                        r.threads == Some(threads)
                            && r.mode.as_deref() == Some(mode)
                            && r.server_model.as_deref() == Some(model)
                    })
                    .unwrap_or_else(|| panic!("no {threads} thr {mode} {model} record"));
                assert!(r.calls_per_s.unwrap() > 0.0);
                let note = r.note.as_deref().unwrap_or_default();
                assert!(note.contains("interleaved rounds"), "{note}");
            }
        }
    }
    // Unknown experiment names are refused.
    let o = Command::new(env!("CARGO_BIN_EXE_corbina-ttcp"))
        .args(["suite", "--only", "latency,memory"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn help_version_and_usage_errors() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_corbina-ttcp"))
            .args(args)
            .output()
            .unwrap()
    };
    let o = run(&["--version"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!("corbina-ttcp {}", env!("CARGO_PKG_VERSION"))
    );
    for (sub, usage) in [
        ("server", "Usage: corbina-ttcp server [OPTIONS]"),
        (
            "client",
            "Usage: corbina-ttcp client [OPTIONS] --ior <IOR|FILE|corbaloc>",
        ),
        ("bidir-server", "Usage: corbina-ttcp bidir-server [OPTIONS]"),
        (
            "bidir-client",
            "Usage: corbina-ttcp bidir-client [OPTIONS] --ior <IOR|FILE>",
        ),
        ("suite", "Usage: corbina-ttcp suite [OPTIONS]"),
        (
            "events-channel",
            "Usage: corbina-ttcp events-channel [OPTIONS]",
        ),
        (
            "events-client",
            "Usage: corbina-ttcp events-client [OPTIONS] --channel <REF>",
        ),
    ] {
        // -ORB… options are taken out first, wherever they are.
        let o = run(&[sub, "-ORBtraceLevel", "0", "--help"]);
        assert!(o.status.success(), "{sub}");
        assert!(String::from_utf8_lossy(&o.stdout).contains(usage), "{sub}");
    }
    for (args, why) in [
        (&[][..], "Usage: corbina-ttcp <COMMAND>"),
        (&["server", "--bogus"], "unexpected argument '--bogus'"),
        (&["server", "--objects", "many"], "invalid value 'many'"),
        (&["client", "--check"], "--ior <IOR|FILE|corbaloc>"),
        (&["suite", "--rounds"], "a value is required"),
        (&["-ORBfrobnicate", "1", "suite"], "unknown ORB option"),
    ] {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
    }
}
