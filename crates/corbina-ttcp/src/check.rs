//! `client --check`: calls every bench.idl operation once with known values and checks the
//! answers, as `omni_client --mode check` does, printing one JSON line per check.

use std::time::{Duration, Instant};

use crate::bench::{bench::FailError, Bench, BinStruct};

/// The outcome of one check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckResult {
    /// What was called (`ping`, `echo`, `fail_7`, `send_all`, …).
    pub op: &'static str,
    /// Empty when it passed, else what went wrong.
    pub detail: String,
}

impl CheckResult {
    /// Whether the check passed.
    pub fn ok(&self) -> bool {
        self.detail.is_empty()
    }

    /// The JSON line `omni_client` would print for it (`impl` = corbina).
    pub fn json(&self, transport: &str) -> String {
        format!(
            "{{\"impl\":\"corbina\",\"transport\":\"{transport}\",\"test\":\"check\",\"op\":\"{}\",\"ok\":{},\"detail\":\"{}\"}}",
            self.op,
            self.ok(),
            self.detail.replace('\\', "\\\\").replace('"', "\\\"")
        )
    }
}

fn run(op: &'static str, f: impl FnOnce() -> Result<(), String>) -> CheckResult {
    CheckResult {
        op,
        detail: f().err().unwrap_or_default(),
    }
}

fn sys(e: corbina::SystemException) -> String {
    format!("CORBA::{e}")
}

/// Runs every check against `b`; an empty `detail` means the check passed.
pub fn run_checks(b: &Bench) -> Vec<CheckResult> {
    let mut out = Vec::new();
    out.push(run("ping", || b.ping().map_err(sys)));
    out.push(run("echo", || {
        let s = "hello, été / 0123456789";
        match b.echo(s).map_err(sys)? {
            r if r == s => Ok(()),
            r => Err(format!("wrong echo {r:?}")),
        }
    }));
    out.push(run("echo_long", || {
        let s = "x".repeat(100_000);
        if b.echo(&s).map_err(sys)? == s {
            Ok(())
        } else {
            Err("wrong echo".into())
        }
    }));
    out.push(run("fail_0", || b.fail(0).map_err(|e| e.to_string())));
    out.push(run("fail_7", || match b.fail(7) {
        Err(FailError::BenchError(e)) if e.code == 7 && e.reason == "requested" => Ok(()),
        Err(FailError::BenchError(e)) => Err(format!("wrong BenchError {e:?}")),
        Err(FailError::System(e)) => Err(sys(e)),
        Ok(()) => Err("no BenchError raised".into()),
    }));
    out.push(run("is_a", || {
        // Asked remotely: the local answer from the IOR's type id would prove nothing.
        let yes = b
            .as_object()
            .invoke(
                "_is_a",
                |w| w.write_string("IDL:Bench:1.0"),
                |r| r.read_boolean(),
                corbina::no_user,
            )
            .map_err(sys)?;
        if yes {
            Ok(())
        } else {
            Err("_is_a false".into())
        }
    }));
    out.push(run("non_existent", || {
        if b.as_object().non_existent().map_err(sys)? {
            Err("_non_existent true".into())
        } else {
            Ok(())
        }
    }));
    out.push(run("send_all", || send_all(b, 1000)));
    out.push(run("send_empty", || {
        b.start_timer().map_err(sys)?;
        b.send_octets(&[]).map_err(sys)?;
        match b.stop_timer().map_err(sys)? {
            0 => Ok(()),
            n => Err(format!("nonzero count {n}")),
        }
    }));
    out
}

/// Every `send_*` twoway and oneway with `n` elements; the server must count every byte.
pub fn send_all(b: &Bench, n: usize) -> Result<(), String> {
    let octets: Vec<u8> = (0..n).map(|i| i as u8).collect();
    let shorts: Vec<i16> = (0..n).map(|i| i as i16).collect();
    let longs: Vec<i32> = (0..n).map(|i| i as i32).collect();
    let doubles: Vec<f64> = (0..n).map(|i| i as f64 * 0.25).collect();
    let chars: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
    let structs: Vec<BinStruct> = (0..n)
        .map(|i| BinStruct {
            s: i as i16,
            c: b'q',
            l: i as i32,
            o: i as u8,
            d: i as f64 * 0.5,
        })
        .collect();
    b.start_timer().map_err(sys)?;
    b.send_octets(&octets).map_err(sys)?;
    b.send_octets_oneway(&octets).map_err(sys)?;
    b.send_shorts(&shorts).map_err(sys)?;
    b.send_shorts_oneway(&shorts).map_err(sys)?;
    b.send_longs(&longs).map_err(sys)?;
    b.send_longs_oneway(&longs).map_err(sys)?;
    b.send_doubles(&doubles).map_err(sys)?;
    b.send_doubles_oneway(&doubles).map_err(sys)?;
    b.send_chars(&chars).map_err(sys)?;
    b.send_chars_oneway(&chars).map_err(sys)?;
    b.send_structs(&structs).map_err(sys)?;
    b.send_structs_oneway(&structs).map_err(sys)?;
    b.ping_oneway().map_err(sys)?;
    let expect = 2 * n as u64 * (1 + 2 + 4 + 8 + 1 + 24);
    let start = Instant::now();
    let mut got = b.stop_timer().map_err(sys)?;
    // Oneways may still be in flight on other connections.
    while got < expect && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(1));
        got = b.stop_timer().map_err(sys)?;
    }
    if got == expect {
        Ok(())
    } else {
        Err(format!("server counted {got} bytes, expected {expect}"))
    }
}
