//! `corbina ping`: is the object there, and how long does a round trip take?
//!
//! Two probes: a GIOP LocateRequest on a fresh connection to the reference's first IIOP
//! address (does the server know the object key? connect + one round trip), then
//! `_non_existent` calls through the ORB (the connection is reused after the first call, so
//! later round trips are the request latency alone).

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use corbina::giop::connection::{Event, GiopConnection, Role, Settings};
use corbina::giop::target_address::TargetAddress;
use corbina::giop::{LocateStatus, Version};
use corbina::{Orb, OrbConfig};
use serde_json::json;

pub const USAGE: &str = "corbina ping [--count N] [--timeout SECS] [--json] [-ORB…] REF";

/// The LocateRequest answer and how long connect + round trip took.
fn locate(
    host: &str,
    port: u16,
    key: &[u8],
    version: Version,
    timeout: Duration,
) -> Result<(LocateStatus, Duration), String> {
    let start = Instant::now();
    let addr = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("{host}:{port}: {e}"))?
        .next()
        .ok_or_else(|| format!("{host}:{port}: no address"))?;
    let mut s = TcpStream::connect_timeout(&addr, timeout).map_err(|e| format!("{addr}: {e}"))?;
    s.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    let mut conn = GiopConnection::new(Settings {
        max_message_size: 16 << 20,
        ..Settings::new(Role::Client)
    });
    let target = TargetAddress::Key(corbina::giop::ObjectKey::new(key.to_vec()));
    let (msg, _) = conn
        .locate_request(version, &target)
        .map_err(|e| e.to_string())?;
    s.write_all(&msg).map_err(|e| format!("{addr}: {e}"))?;
    loop {
        match conn.poll_event() {
            Ok(Some(Event::LocateReply { header, .. })) => {
                return Ok((header.locate_status, start.elapsed()))
            }
            Ok(Some(Event::CloseConnection)) => {
                return Err("the server closed the connection".into())
            }
            Ok(Some(Event::MessageError)) => return Err("the server answered MessageError".into()),
            Ok(Some(other)) => return Err(format!("unexpected answer {other:?}")),
            Ok(None) => {}
            Err(e) => return Err(format!("{addr}: {e}")),
        }
        let n = s
            .read(conn.read_buf())
            .map_err(|e| format!("{addr}: {e}"))?;
        if n == 0 {
            return Err(format!("{addr}: connection closed without an answer"));
        }
        conn.commit(n);
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `corbina ping …`; returns the exit code (0 reachable and existing, 1 not).
pub fn main(args: Vec<String>) -> Result<u8, String> {
    let (config, rest) = OrbConfig::from_args_and_env(args).map_err(|e| e.to_string())?;
    let mut count = 4usize;
    let mut timeout = Duration::from_secs(5);
    let mut json_out = false;
    let mut target = None;
    let mut it = rest.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--count" | "-c" => {
                count = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|n| *n > 0)
                    .ok_or("--count needs a positive number")?;
            }
            "--timeout" => {
                let secs: f64 = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .ok_or("--timeout needs seconds")?;
                timeout = Duration::from_secs_f64(secs);
            }
            "--json" => json_out = true,
            _ if target.is_none() => target = Some(a),
            _ => return Err(format!("usage: {USAGE}")),
        }
    }
    let target = target.ok_or_else(|| format!("usage: {USAGE}"))?;
    let orb = Orb::with_config(config.call_timeout(timeout).connect_timeout(timeout));
    let result = ping(&orb, &target, count, timeout);
    orb.destroy();
    let report = result?;
    if json_out {
        println!(
            "{}",
            serde_json::to_string_pretty(&report.json).map_err(|e| e.to_string())?
        );
    } else {
        println!("{}", report.text.join("\n"));
    }
    Ok(u8::from(!report.ok))
}

struct Report {
    ok: bool,
    text: Vec<String>,
    json: serde_json::Value,
}

fn ping(orb: &Orb, target: &str, count: usize, timeout: Duration) -> Result<Report, String> {
    let text_ref = match std::fs::read_to_string(target) {
        Ok(s) if !target.contains(':') => s.lines().next().unwrap_or_default().trim().to_owned(),
        _ => target.to_owned(),
    };
    let obj = orb
        .string_to_object(&text_ref)
        .map_err(|e| format!("{target}: {e}"))?;
    let mut text = Vec::new();
    let profile = obj
        .ior()
        .iiop_profiles()
        .ok()
        .and_then(|p| p.into_iter().next());
    let mut locate_json = json!(null);
    let mut ok = true;
    match &profile {
        Some(p) => {
            let version = Version::new(1, p.version.minor.min(2)).unwrap_or(Version::V1_2);
            match locate(&p.host, p.port, p.object_key.as_bytes(), version, timeout) {
                Ok((status, rtt)) => {
                    text.push(format!(
                        "locate   {}:{}  {}  {:.3} ms (connect + LocateRequest, GIOP 1.{})",
                        p.host,
                        p.port,
                        status.name(),
                        ms(rtt),
                        version.minor
                    ));
                    ok &= matches!(
                        status,
                        LocateStatus::ObjectHere
                            | LocateStatus::ObjectForward
                            | LocateStatus::ObjectForwardPerm
                    );
                    locate_json = json!({ "host": p.host, "port": p.port,
                                          "status": status.name(), "ms": ms(rtt) });
                }
                Err(e) => {
                    text.push(format!("locate   {}:{}  unreachable: {e}", p.host, p.port));
                    locate_json = json!({ "host": p.host, "port": p.port, "error": e });
                    ok = false;
                }
            }
        }
        None => text.push("locate   (no IIOP profile)".into()),
    }
    let mut times = Vec::new();
    let mut error = None;
    let mut non_existent = None;
    for _ in 0..count {
        let start = Instant::now();
        match obj.non_existent() {
            Ok(gone) => {
                times.push(ms(start.elapsed()));
                non_existent = Some(gone);
            }
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        }
    }
    match (&error, non_existent) {
        (Some(e), _) => {
            ok = false;
            text.push(format!("_non_existent  failed: {e}"));
        }
        (None, Some(gone)) => {
            ok &= !gone;
            let mut sorted = times.clone();
            sorted.sort_by(f64::total_cmp);
            let median = sorted[sorted.len() / 2];
            text.push(format!(
                "_non_existent  {}  {} calls: first {:.3} ms, median {:.3} ms, min {:.3} ms, max {:.3} ms",
                if gone { "TRUE (the object is gone)" } else { "false" },
                times.len(),
                times[0],
                median,
                sorted[0],
                sorted[sorted.len() - 1]
            ));
        }
        (None, None) => {}
    }
    let server_answered = locate_json.get("status").is_some() || non_existent.is_some();
    text.push(if ok {
        "reachable".into()
    } else if server_answered {
        "server reachable, but the object does not exist there".into()
    } else {
        "NOT reachable".into()
    });
    Ok(Report {
        ok,
        json: json!({
            "reference": target, "reachable": ok, "locate": locate_json,
            "non_existent": non_existent, "error": error, "round_trip_ms": times,
        }),
        text,
    })
}
