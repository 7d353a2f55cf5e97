//! Runs `docs/tutorial.md` as a reader would: every ```` ```sh ```` block in order, in one
//! shell, with the files of the ```` ```rust ```` blocks written where their first line
//! (`// PATH`) says, and checks the outputs shown in ```` ```text ```` blocks. Blocks marked
//! `setup` (installing packages) are what the test machine already has. (The markers are
//! ones rustdoc accepts: the tutorial is also `corbina::guide::tutorial`.)
//!
//! What differs from a reader's run, and why: `$CORBINA` is this workspace (whose crates the
//! tutorial's `cargo add --path` lines name), cargo runs `--offline` with this workspace's `Cargo.lock` (no network; the same dependency
//! versions, so their builds are shared through this workspace's target directory), and
//! port 12809 and `/tmp/tutorial` become a free port and a fresh directory, so that runs
//! in parallel do not meet.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One step of the tutorial, in order.
enum Step {
    Shell(String),
    File { path: String, contents: String },
    Output(String),
}

fn steps(markdown: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```") else {
            continue;
        };
        let mut body = String::new();
        for l in lines.by_ref() {
            if l.starts_with("```") {
                break;
            }
            body.push_str(l);
            body.push('\n');
        }
        let mut words = info.split_whitespace();
        let lang = words.next().unwrap_or("");
        let attrs: Vec<&str> = words.collect();
        if attrs.contains(&"setup") {
            continue;
        }
        let path = body
            .lines()
            .next()
            .and_then(|first| first.strip_prefix("// "))
            .filter(|path| path.ends_with(".rs") && !path.contains(' '))
            .map(str::to_owned);
        if let (true, Some(path)) = (lang == "rust", path) {
            steps.push(Step::File {
                path,
                contents: body,
            });
        } else if lang == "sh" {
            steps.push(Step::Shell(body));
        } else if lang == "text" {
            steps.push(Step::Output(body));
        }
    }
    steps
}

#[test]
fn tutorial_runs_as_written() {
    if !corbina_testpeers::have_path(
        "/usr/bin/omniNames",
        "the tutorial",
        "Debian package omniorb-nameserver",
    ) || !corbina_testpeers::have_path(
        "/usr/bin/nameclt",
        "the tutorial",
        "Debian package omniorb",
    ) {
        return;
    }
    let Some(peers) = corbina_testpeers::bench_peers() else {
        return;
    };
    // This crate's workspace (not `corbina_testpeers::repo_root`, which is where that
    // crate was compiled).
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    let markdown = std::fs::read_to_string(root.join("docs/tutorial.md")).unwrap();
    // Outside this workspace (`cargo new` inside it would join it as a member), and the
    // same path every run: the path of the tutorial's project is part of the hash of the
    // workspace crates it builds, so a new path would build them again.
    let dir = std::env::temp_dir().join("corbina-tutorial");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // The peers built once for all tests, copied with their times so `make` finds them
    // up to date.
    let copied = Command::new("cp")
        .arg("-a")
        .arg(peers)
        .arg(dir.join("peers"))
        .status()
        .unwrap();
    assert!(copied.success());
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let tmp = dir.display().to_string();
    let adapt = |s: &str| {
        s.replace("/tmp/tutorial", &tmp)
            .replace("12809", &port)
            .replace(
                "cd hello-corba\n",
                "cd hello-corba\ncp \"$CORBINA/Cargo.lock\" .\n",
            )
    };

    let mut script = String::from(
        "set -euo pipefail\n\
         trap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT\n",
    );
    script.push_str(&format!("cd {tmp}\n"));
    let mut expected = Vec::new();
    let mut files = 0;
    for step in steps(&markdown) {
        match step {
            Step::Shell(s) => script.push_str(&adapt(&s)),
            Step::File { path, contents } => {
                files += 1;
                script.push_str(&format!(
                    "mkdir -p \"$(dirname {path})\"\ncat > {path} <<'TUTORIAL_EOF'\n{contents}TUTORIAL_EOF\n"
                ));
            }
            Step::Output(o) => expected.extend(o.lines().map(str::to_owned)),
        }
    }
    assert!(
        files >= 4 && !expected.is_empty(),
        "the tutorial lost its steps"
    );
    std::fs::write(dir.join("tutorial.sh"), &script).unwrap();

    // This workspace's target directory: its dependencies are built already.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    let mut child = Command::new("bash")
        .arg(dir.join("tutorial.sh"))
        .env("CORBINA", &root)
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_NET_OFFLINE", "true")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first run builds the workspace's crates for the tutorial's project; later runs
    // only relink.
    let deadline = Instant::now() + Duration::from_secs(900);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the tutorial did not finish in 15 min ({})", dir.display());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the tutorial failed ({}), script {}:\n{stdout}\n{stderr}",
        out.status,
        dir.join("tutorial.sh").display()
    );
    for line in &expected {
        assert!(
            stdout.lines().any(|l| l == line),
            "the tutorial shows {line:?}, the run printed:\n{stdout}"
        );
    }
    // Both clients ran: against omniORB's server, then against the Rust one.
    assert_eq!(
        stdout.matches("echo: hello from Rust").count(),
        2,
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
