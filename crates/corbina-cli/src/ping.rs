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

use crate::reference;

/// Why the LocateRequest got no answer.
enum LocateError {
    /// No connection, or no answer in time: the `_non_existent` calls would only wait again.
    Unreachable(String),
    /// The server answered, but not with a LocateReply.
    Answer(String),
}

/// An I/O error as the user should read it: a read that timed out says so, not
/// "Resource temporarily unavailable (os error 11)".
fn io_error(addr: impl std::fmt::Display, e: &std::io::Error, timeout: Duration) -> LocateError {
    use std::io::ErrorKind;
    LocateError::Unreachable(match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => {
            format!(
                "{addr}: no answer within {} s (--timeout)",
                timeout.as_secs_f64()
            )
        }
        _ => format!("{addr}: {e}"),
    })
}

/// The LocateRequest answer and how long connect + round trip took.
fn locate(
    host: &str,
    port: u16,
    key: &[u8],
    version: Version,
    timeout: Duration,
) -> Result<(LocateStatus, Duration), LocateError> {
    let start = Instant::now();
    let addr = (host, port)
        .to_socket_addrs()
        .map_err(|e| LocateError::Unreachable(format!("{host}:{port}: {e}")))?
        .next()
        .ok_or_else(|| LocateError::Unreachable(format!("{host}:{port}: no address")))?;
    let mut s =
        TcpStream::connect_timeout(&addr, timeout).map_err(|e| io_error(addr, &e, timeout))?;
    s.set_read_timeout(Some(timeout))
        .map_err(|e| io_error(addr, &e, timeout))?;
    s.set_nodelay(true)
        .map_err(|e| io_error(addr, &e, timeout))?;
    let mut conn = GiopConnection::new(Settings {
        max_message_size: 16 << 20,
        ..Settings::new(Role::Client)
    });
    let target = TargetAddress::Key(corbina::giop::ObjectKey::new(key.to_vec()));
    let (msg, _) = conn
        .locate_request(version, &target)
        .map_err(|e| LocateError::Answer(e.to_string()))?;
    s.write_all(&msg).map_err(|e| io_error(addr, &e, timeout))?;
    loop {
        match conn.poll_event() {
            Ok(Some(Event::LocateReply { header, .. })) => {
                return Ok((header.locate_status, start.elapsed()))
            }
            Ok(Some(Event::CloseConnection)) => {
                return Err(LocateError::Answer(
                    "the server closed the connection".into(),
                ))
            }
            Ok(Some(Event::MessageError)) => {
                return Err(LocateError::Answer(
                    "the server answered MessageError".into(),
                ))
            }
            Ok(Some(other)) => {
                return Err(LocateError::Answer(format!("unexpected answer {other:?}")))
            }
            Ok(None) => {}
            Err(e) => return Err(LocateError::Answer(format!("{addr}: {e}"))),
        }
        let n = s
            .read(conn.read_buf())
            .map_err(|e| io_error(addr, &e, timeout))?;
        if n == 0 {
            return Err(LocateError::Answer(format!(
                "{addr}: connection closed without an answer"
            )));
        }
        conn.commit(n);
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `corbina ping`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// How many `_non_existent` calls to time
    #[arg(short, long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..))]
    count: u32,
    /// How long to wait for the connection and each answer
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = seconds)]
    timeout: Duration,
    /// Print JSON for scripts instead of text
    #[arg(long)]
    json: bool,
    /// The object: IOR:…, corbaloc:…, corbaname:…, or a file holding one on its first line
    #[arg(value_name = "REF")]
    target: String,
}

fn seconds(s: &str) -> Result<Duration, String> {
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .and_then(|v| Duration::try_from_secs_f64(v).ok())
        .ok_or_else(|| format!("`{s}` is not a positive number of seconds"))
}

/// `corbina ping …`; returns the exit code (0 reachable and existing, 1 not).
pub fn main(config: OrbConfig, args: Args) -> Result<u8, String> {
    let text_ref = reference::text(&args.target)?;
    // A malformed reference is bad usage (exit 2); one that does not resolve is a failure (1).
    corbina::giop::ObjectUrl::parse(&text_ref)
        .map_err(|e| format!("{}: {e}", reference::shown(&text_ref)))?;
    let timeout = args.timeout;
    // One try per probe: a retry would make `--timeout 1` take 2 s.
    let orb = Orb::with_config(config.call_timeout(timeout).connect_timeout(timeout));
    let result = ping(&orb, &args.target, &text_ref, args.count as usize, timeout);
    orb.destroy();
    let report = result?;
    if args.json {
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

fn ping(
    orb: &Orb,
    target: &str,
    text_ref: &str,
    count: usize,
    timeout: Duration,
) -> Result<Report, String> {
    let obj = match reference::object(orb, text_ref) {
        Ok(o) => o,
        Err(e) => {
            return Ok(Report {
                ok: false,
                json: json!({ "reference": target, "reachable": false, "error": e }),
                text: vec![e, "NOT reachable".into()],
            })
        }
    };
    let mut text = Vec::new();
    let profile = obj
        .ior()
        .iiop_profiles()
        .ok()
        .and_then(|p| p.into_iter().next());
    let mut locate_json = json!(null);
    let mut ok = true;
    let mut unreachable = false;
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
                Err(LocateError::Unreachable(e)) => {
                    text.push(format!("locate   {}:{}  unreachable: {e}", p.host, p.port));
                    locate_json = json!({ "host": p.host, "port": p.port, "error": e });
                    ok = false;
                    unreachable = true;
                }
                Err(LocateError::Answer(e)) => {
                    text.push(format!("locate   {}:{}  failed: {e}", p.host, p.port));
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
    // The calls would go to the same address: waiting for it a second time tells nothing.
    let count = if unreachable { 0 } else { count };
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
