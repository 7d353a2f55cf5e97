//! The human-readable report: one table row per experiment point with the Corbina, socket
//! and omniORB figures and the ratios, and the targets section.

use crate::experiments::TYPES;
use crate::record::{Record, CORBINA, OMNIORB, SOCKET};
use crate::stats::median_of;

/// One table row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Experiment group.
    pub experiment: String,
    /// The point (mode, type, size, …).
    pub point: String,
    /// What the numbers are.
    pub metric: String,
    /// Corbina's figure(s), formatted.
    pub corbina: String,
    /// The socket baseline's.
    pub socket: String,
    /// omniORB's.
    pub peer: String,
    /// Corbina / socket (the key figure).
    pub vs_socket: Option<f64>,
    /// Corbina / omniORB.
    pub vs_peer: Option<f64>,
}

/// Formats a figure with a precision that suits its size.
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        "-".into()
    } else if x.abs() >= 1000.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

fn opt(x: Option<f64>) -> String {
    x.map(num).unwrap_or_default()
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// Lays rows out as an aligned text table.
pub fn format_table(rows: &[Row]) -> String {
    let head = [
        "experiment",
        "point",
        "metric",
        "corbina",
        "socket",
        "omniORB",
        "C/sock",
        "C/omni",
    ];
    let cells: Vec<[String; 8]> = rows
        .iter()
        .map(|r| {
            [
                r.experiment.clone(),
                r.point.clone(),
                r.metric.clone(),
                r.corbina.clone(),
                r.socket.clone(),
                r.peer.clone(),
                r.vs_socket.map(|x| format!("{x:.2}")).unwrap_or_default(),
                r.vs_peer.map(|x| format!("{x:.2}")).unwrap_or_default(),
            ]
        })
        .collect();
    let head = head.map(String::from);
    let width = widths(std::iter::once(&head[..]).chain(cells.iter().map(|c| &c[..])));
    let line = |c: &[String]| aligned(c, &width, 3);
    let mut out = line(&head);
    out.push_str(&line(&rule(&width)));
    let mut last = "";
    for (c, r) in cells.iter().zip(rows) {
        if !last.is_empty() && last != r.experiment {
            out.push('\n');
        }
        last = &r.experiment;
        out.push_str(&line(c));
    }
    out
}

/// Each column's width: its widest cell, in characters.
fn widths<'a>(rows: impl Iterator<Item = &'a [String]>) -> Vec<usize> {
    let mut width: Vec<usize> = Vec::new();
    for r in rows {
        width.resize(width.len().max(r.len()), 0);
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    width
}

/// One table line: the first `left` columns aligned left, the figures right, two spaces
/// between columns.
fn aligned(cells: &[String], width: &[usize], left: usize) -> String {
    let mut s = String::new();
    for (i, (cell, &w)) in cells.iter().zip(width).enumerate() {
        let pad = " ".repeat(w - cell.chars().count());
        if i < left {
            s.push_str(cell);
            s.push_str(&pad);
        } else {
            s.push_str(&pad);
            s.push_str(cell);
        }
        s.push_str("  ");
    }
    s.trim_end().to_owned() + "\n"
}

/// The rule under a table's head.
fn rule(width: &[usize]) -> Vec<String> {
    width.iter().map(|&w| "-".repeat(w)).collect()
}

/// The dynamic invocation modes, in report order.
const DYNAMIC: [&str; 3] = ["dii", "dii_reuse", "dsi"];
/// Every invocation mode, in report order.
const INVOCATIONS: [&str; 4] = ["static", "dii", "dii_reuse", "dsi"];

/// Finds records.
pub struct Find<'a>(pub &'a [Record]);

impl<'a> Find<'a> {
    /// Records of `experiment` by `imp` over TCP, static invocation (or none: sockets),
    /// that `pred` accepts.
    pub fn all(
        &self,
        experiment: &str,
        imp: &str,
        pred: impl Fn(&Record) -> bool,
    ) -> Vec<&'a Record> {
        self.all_inv(experiment, imp, "static", pred)
    }

    /// The same for invocation mode `inv` (`static`, `dii`, `dii_reuse`, `dsi`).
    pub fn all_inv(
        &self,
        experiment: &str,
        imp: &str,
        inv: &str,
        pred: impl Fn(&Record) -> bool,
    ) -> Vec<&'a Record> {
        self.0
            .iter()
            .filter(|r| {
                r.experiment == experiment
                    && r.implementation == imp
                    && r.transport == "tcp"
                    && r.available
                    && r.invocation.as_deref().is_none_or(|i| i == inv)
                    && pred(r)
            })
            .collect()
    }

    /// The first record `all_inv` finds.
    pub fn one_inv(
        &self,
        experiment: &str,
        imp: &str,
        inv: &str,
        pred: impl Fn(&Record) -> bool,
    ) -> Option<&'a Record> {
        self.all_inv(experiment, imp, inv, pred).into_iter().next()
    }

    /// The first such record.
    pub fn one(
        &self,
        experiment: &str,
        imp: &str,
        pred: impl Fn(&Record) -> bool,
    ) -> Option<&'a Record> {
        self.all(experiment, imp, pred).into_iter().next()
    }
}

/// The records measured over transport `tr`, relabelled `tcp` so that `Find` (which looks
/// at TCP records) can be used on them.
pub fn over(records: &[Record], tr: &str) -> Vec<Record> {
    records
        .iter()
        .filter(|r| r.transport == tr)
        .cloned()
        .map(|mut r| {
            r.transport = "tcp".into();
            r
        })
        .collect()
}

/// The local transports, in report order, with their names in goals.
const LOCALS: [(&str, &str); 3] = [
    ("unix", "Unix socket"),
    ("shm", "shared memory"),
    ("tls", "TLS"),
];

fn is(field: &Option<String>, v: &str) -> bool {
    field.as_deref() == Some(v)
}

/// Oneway-rate records of oneways written one by one (the default SyncScope).
fn unbuffered(r: &Record) -> bool {
    !is(&r.op, BUFFERED_ONEWAY)
}

/// The op of oneways batched by the client (`-ORBOnewaySyncScope none`).
const BUFFERED_ONEWAY: &str = "ping_oneway_buffered";

fn lat_cell(r: Option<&Record>) -> String {
    match r {
        Some(r) => {
            let mut s = opt(r.median_us);
            for p in [r.p99_us, r.p999_us] {
                s.push('/');
                s.push_str(&p.map(num).unwrap_or_else(|| "-".into()));
            }
            s
        }
        None => String::new(),
    }
}

/// Builds the table rows from all records.
pub fn rows(records: &[Record]) -> Vec<Row> {
    let f = Find(records);
    let mut rows = Vec::new();
    // Throughput.
    let mut kbs: Vec<u64> = records
        .iter()
        .filter(|r| r.experiment == "throughput")
        .filter_map(|r| r.buf_kb)
        .collect();
    kbs.sort_unstable();
    kbs.dedup();
    for mode in ["oneway", "twoway"] {
        for t in TYPES {
            for &kb in &kbs {
                let pick = |imp: &str| {
                    f.one("throughput", imp, |r| {
                        is(&r.mode, mode)
                            && r.buf_kb == Some(kb)
                            && (imp == SOCKET || is(&r.data_type, t))
                    })
                    .and_then(|r| r.mbit_s)
                };
                let (c, s, p) = (pick(CORBINA), pick(SOCKET), pick(OMNIORB));
                if c.is_none() && p.is_none() {
                    continue;
                }
                rows.push(Row {
                    experiment: "throughput".into(),
                    point: format!("{mode} {t} {kb}K"),
                    metric: "Mbit/s".into(),
                    corbina: opt(c),
                    socket: opt(s),
                    peer: opt(p),
                    vs_socket: ratio(c, s),
                    vs_peer: ratio(c, p),
                });
            }
        }
    }
    // Throughput of the dynamic modes, beside static (the metric column gives the ratio).
    for inv in DYNAMIC {
        for mode in ["oneway", "twoway"] {
            for t in TYPES {
                for &kb in &kbs {
                    let pick = |imp: &str, inv: &str| {
                        f.one_inv("throughput", imp, inv, |r| {
                            is(&r.mode, mode)
                                && r.buf_kb == Some(kb)
                                && (imp == SOCKET || is(&r.data_type, t))
                        })
                        .and_then(|r| r.mbit_s)
                    };
                    let Some(c) = pick(CORBINA, inv) else {
                        continue;
                    };
                    let (st, s, p) = (
                        pick(CORBINA, "static"),
                        pick(SOCKET, "static"),
                        pick(OMNIORB, "static"),
                    );
                    rows.push(Row {
                        experiment: inv.into(),
                        point: format!("{mode} {t} {kb}K"),
                        metric: match ratio(Some(c), st) {
                            Some(x) => format!("Mbit/s ({x:.2}× static)"),
                            None => "Mbit/s".into(),
                        },
                        corbina: opt(Some(c)),
                        socket: opt(s),
                        peer: opt(p),
                        vs_socket: ratio(Some(c), s),
                        vs_peer: ratio(Some(c), p),
                    });
                }
            }
        }
    }
    // Latency: null calls, then payloads.
    let sock_null = f.one("latency", SOCKET, |r| {
        is(&r.op, "pingpong") && r.data_type.is_none()
    });
    for (op, inv) in ["ping", "echo_empty"]
        .into_iter()
        .flat_map(|op| INVOCATIONS.map(|inv| (op, inv)))
    {
        let c = f.one_inv("latency", CORBINA, inv, |r| is(&r.op, op));
        let p = f.one("latency", OMNIORB, |r| is(&r.op, op));
        if c.is_none() && (p.is_none() || inv != "static") {
            continue;
        }
        rows.push(Row {
            experiment: "latency".into(),
            point: format!("{op} twoway {inv}"),
            metric: "med/p99/p99.9 µs".into(),
            corbina: lat_cell(c),
            socket: lat_cell(sock_null),
            peer: lat_cell(p),
            vs_socket: ratio(
                c.and_then(|r| r.median_us),
                sock_null.and_then(|r| r.median_us),
            ),
            vs_peer: ratio(c.and_then(|r| r.median_us), p.and_then(|r| r.median_us)),
        });
    }
    for r in f.all("latency", CORBINA, |r| r.data_type.is_some()) {
        let s = f.one("latency", SOCKET, |x| {
            x.data_type == r.data_type && x.elems == r.elems
        });
        let p = f.one("latency", OMNIORB, |x| {
            x.data_type == r.data_type && x.elems == r.elems
        });
        rows.push(Row {
            experiment: "latency".into(),
            point: format!(
                "{} ×{} ({} B)",
                r.op.as_deref().unwrap_or("?"),
                r.elems.unwrap_or(0),
                r.size.unwrap_or(0)
            ),
            metric: "med/p99/p99.9 µs".into(),
            corbina: lat_cell(Some(r)),
            socket: lat_cell(s),
            peer: lat_cell(p),
            vs_socket: ratio(r.median_us, s.and_then(|x| x.median_us)),
            vs_peer: ratio(r.median_us, p.and_then(|x| x.median_us)),
        });
    }
    // Oneway rate and CPU.
    let rate = |imp, inv| {
        f.one_inv("oneway_rate", imp, inv, unbuffered)
            .and_then(|r| r.calls_per_s)
    };
    for inv in INVOCATIONS {
        if rate(CORBINA, inv).is_none() && (rate(OMNIORB, inv).is_none() || inv != "static") {
            continue;
        }
        let (c, s, p) = (
            rate(CORBINA, inv),
            rate(SOCKET, inv),
            rate(OMNIORB, "static"),
        );
        rows.push(Row {
            experiment: "latency".into(),
            point: format!("null oneway {inv}"),
            metric: "calls/s".into(),
            corbina: opt(c),
            socket: opt(s),
            peer: opt(p),
            vs_socket: ratio(c, s),
            vs_peer: ratio(c, p),
        });
    }
    let batched = f
        .one_inv("oneway_rate", CORBINA, "static", |r| {
            is(&r.op, BUFFERED_ONEWAY)
        })
        .and_then(|r| r.calls_per_s);
    if batched.is_some() {
        let (s, p) = (rate(SOCKET, "static"), rate(OMNIORB, "static"));
        rows.push(Row {
            experiment: "latency".into(),
            point: "null oneway static, buffered".into(),
            metric: "calls/s".into(),
            corbina: opt(batched),
            socket: opt(s),
            peer: opt(p),
            vs_socket: ratio(batched, s),
            vs_peer: ratio(batched, p),
        });
    }
    let cpu = |imp, inv| {
        f.one_inv("cpu", imp, inv, |_| true)
            .and_then(|r| r.cpu_us_per_call)
    };
    for inv in INVOCATIONS {
        if cpu(CORBINA, inv).is_none() && (cpu(OMNIORB, inv).is_none() || inv != "static") {
            continue;
        }
        let (c, s, p) = (cpu(CORBINA, inv), cpu(SOCKET, inv), cpu(OMNIORB, "static"));
        rows.push(Row {
            experiment: "cpu".into(),
            point: format!("latency loops, client+server, {inv}"),
            metric: "µs CPU/call".into(),
            corbina: opt(c),
            socket: opt(s),
            peer: opt(p),
            vs_socket: ratio(c, s),
            vs_peer: ratio(c, p),
        });
    }
    // Instructions per null call (callgrind), clients against the same server.
    let ir = |imp, inv| {
        f.one_inv("instructions", imp, inv, |_| true)
            .and_then(|r| r.instructions_per_call)
    };
    for inv in ["static", "dii_reuse", "dii", "async"] {
        let (c, p) = (ir(CORBINA, inv), ir(OMNIORB, "static"));
        if c.is_none() {
            continue;
        }
        rows.push(Row {
            experiment: "instructions".into(),
            point: format!("ping twoway client, {inv}"),
            metric: "Ir/call (user)".into(),
            corbina: opt(c),
            socket: String::new(),
            peer: opt(p),
            vs_socket: None,
            vs_peer: ratio(c, p),
        });
    }
    // Scalability and memory.
    let mut ns: Vec<u64> = records
        .iter()
        .filter(|r| r.experiment == "scalability")
        .filter_map(|r| r.objects)
        .collect();
    ns.sort_unstable();
    ns.dedup();
    let sock_med = sock_null.and_then(|r| r.median_us);
    for &n in &ns {
        for order in ["request_train", "round_robin"] {
            let pick = |imp| {
                f.one("scalability", imp, |r| {
                    r.objects == Some(n) && is(&r.mode, order)
                })
            };
            let (c, p) = (pick(CORBINA), pick(OMNIORB));
            rows.push(Row {
                experiment: "scalability".into(),
                point: format!("{n} obj {order}"),
                metric: "med/p99/p99.9 µs".into(),
                corbina: lat_cell(c),
                socket: opt(sock_med),
                peer: lat_cell(p),
                vs_socket: ratio(c.and_then(|r| r.median_us), sock_med),
                vs_peer: ratio(c.and_then(|r| r.median_us), p.and_then(|r| r.median_us)),
            });
        }
    }
    for &n in ns.iter().filter(|&&n| n > 1) {
        let pick = |imp| {
            f.one("memory", imp, |r| r.objects == Some(n))
                .and_then(|r| r.rss_bytes_per_object)
        };
        let (c, p) = (pick(CORBINA), pick(OMNIORB));
        if c.is_none() && p.is_none() {
            continue;
        }
        // Resident memory that shrank while objects were added is noise (pages returned,
        // allocator reuse), not a negative cost: shown as such, and no ratio drawn from it.
        let cell = |x: Option<f64>| match x {
            Some(v) if v < 0.0 => "≈0 (noise)".to_owned(),
            other => opt(other),
        };
        let measured = |x: Option<f64>| x.filter(|v| *v >= 0.0);
        rows.push(Row {
            experiment: "memory".into(),
            point: format!("{n} obj"),
            metric: "RSS B/object".into(),
            corbina: cell(c),
            socket: String::new(),
            peer: cell(p),
            vs_socket: None,
            vs_peer: ratio(measured(c), measured(p)),
        });
    }
    // Concurrency.
    let mut ts: Vec<u64> = records
        .iter()
        .filter(|r| r.experiment == "concurrency")
        .filter_map(|r| r.threads)
        .collect();
    ts.sort_unstable();
    ts.dedup();
    for (mode, pool) in [
        ("own_orb", false),
        ("shared_ref", false),
        ("own_orb", true),
        ("shared_ref", true),
    ] {
        for &t in &ts {
            let pick = |imp| {
                f.one("concurrency", imp, |r| {
                    r.threads == Some(t) && is(&r.mode, mode) && is(&r.server_model, "pool") == pool
                })
            };
            let (c, p) = (pick(CORBINA), if pool { None } else { pick(OMNIORB) });
            if c.is_none() && p.is_none() {
                continue;
            }
            let cell = |r: Option<&Record>| {
                r.map(|r| format!("{} ({})", opt(r.calls_per_s), opt(r.p99_us)))
                    .unwrap_or_default()
            };
            rows.push(Row {
                experiment: "concurrency".into(),
                point: format!("{t} thr {mode}{}", if pool { " pool" } else { "" }),
                metric: "calls/s (p99 µs)".into(),
                corbina: cell(c),
                socket: String::new(),
                peer: cell(p),
                vs_socket: None,
                vs_peer: ratio(c.and_then(|r| r.calls_per_s), p.and_then(|r| r.calls_per_s)),
            });
        }
    }
    transport_rows(records, &mut rows);
    rows
}

/// Corbina over the local transports: each figure beside TCP's (the ratio in the metric
/// column) and the raw Unix-socket baseline in the socket column.
fn transport_rows(records: &[Record], rows: &mut Vec<Row>) {
    let (tcp, unix) = (over(records, "tcp"), over(records, "unix"));
    let (tcp, unix) = (Find(&tcp), Find(&unix));
    for (tr, _) in LOCALS {
        let recs = over(records, tr);
        let f = Find(&recs);
        // The raw-socket column: the Unix-socket baseline for the local transports, the
        // TCP one for TLS (which runs over TCP).
        let raw = if tr == "tls" { &tcp } else { &unix };
        if f.one("latency", CORBINA, |_| true).is_none()
            && f.one("throughput", CORBINA, |_| true).is_none()
        {
            continue;
        }
        // `peer`: omniORB over the same transport (its SSL transport, for TLS), if measured.
        let mut push = |point: String,
                        metric: &str,
                        c: Option<f64>,
                        t: Option<f64>,
                        cell: [String; 2],
                        s: Option<f64>,
                        peer: Option<f64>| {
            rows.push(Row {
                experiment: format!("{tr} transport"),
                point,
                metric: match ratio(c, t) {
                    Some(x) => format!("{metric} ({x:.2}× tcp)"),
                    None => metric.into(),
                },
                corbina: cell[0].clone(),
                socket: cell[1].clone(),
                peer: peer.map(num).unwrap_or_default(),
                vs_socket: ratio(c, s),
                vs_peer: ratio(c, peer),
            })
        };
        let raw_ping = raw.one("latency", SOCKET, |r| {
            is(&r.op, "pingpong") && r.data_type.is_none()
        });
        for op in ["ping", "echo_empty", "ping_new_connection"] {
            for inv in INVOCATIONS {
                let c = f.one_inv("latency", CORBINA, inv, |r| is(&r.op, op));
                let t = tcp.one_inv("latency", CORBINA, inv, |r| is(&r.op, op));
                if c.is_none() {
                    continue;
                }
                // A new connection's first call has no raw-socket counterpart.
                let sock = raw_ping.filter(|_| op != "ping_new_connection");
                let peer = f
                    .one_inv("latency", OMNIORB, inv, |r| is(&r.op, op))
                    .and_then(|r| r.median_us);
                push(
                    format!("{op} twoway {inv}"),
                    "med/p99/p99.9 µs",
                    c.and_then(|r| r.median_us),
                    t.and_then(|r| r.median_us),
                    [lat_cell(c), lat_cell(sock)],
                    sock.and_then(|r| r.median_us),
                    peer,
                );
            }
        }
        for inv in INVOCATIONS {
            let rate = |f: &Find<'_>, imp| {
                f.one_inv("oneway_rate", imp, inv, unbuffered)
                    .and_then(|r| r.calls_per_s)
            };
            let (c, t, s) = (rate(&f, CORBINA), rate(&tcp, CORBINA), rate(raw, SOCKET));
            if c.is_some() {
                push(
                    format!("null oneway {inv}"),
                    "calls/s",
                    c,
                    t,
                    [opt(c), opt(s)],
                    s,
                    rate(&f, OMNIORB),
                );
            }
            let cpu = |f: &Find<'_>, imp| {
                f.one_inv("cpu", imp, inv, |_| true)
                    .and_then(|r| r.cpu_us_per_call)
            };
            let (c, t) = (cpu(&f, CORBINA), cpu(&tcp, CORBINA));
            if c.is_some() {
                push(
                    format!("CPU, latency loops, {inv}"),
                    "µs CPU/call",
                    c,
                    t,
                    [opt(c), String::new()],
                    None,
                    cpu(&f, OMNIORB),
                );
            }
        }
        let mut kbs: Vec<u64> = recs
            .iter()
            .filter(|r| r.experiment == "throughput")
            .filter_map(|r| r.buf_kb)
            .collect();
        kbs.sort_unstable();
        kbs.dedup();
        for inv in INVOCATIONS {
            for mode in ["oneway", "twoway"] {
                for t in TYPES {
                    for &kb in &kbs {
                        let pick = |f: &Find<'_>, imp: &str| {
                            f.one_inv("throughput", imp, inv, |r| {
                                is(&r.mode, mode)
                                    && r.buf_kb == Some(kb)
                                    && (imp == SOCKET || is(&r.data_type, t))
                            })
                            .and_then(|r| r.mbit_s)
                        };
                        let c = pick(&f, CORBINA);
                        if c.is_none() {
                            continue;
                        }
                        let (tc, s) = (pick(&tcp, CORBINA), pick(raw, SOCKET));
                        let point = match inv {
                            "static" => format!("{mode} {t} {kb}K"),
                            _ => format!("{mode} {t} {kb}K {inv}"),
                        };
                        let peer = pick(&f, OMNIORB);
                        push(point, "Mbit/s", c, tc, [opt(c), opt(s)], s, peer);
                    }
                }
            }
        }
    }
}

/// Throughput ratios, Corbina sequence<`t`> over transport `a` / over `b`, at every
/// buffer size ≥ 64 KB both have: (median, min).
fn thr_ratio_transports(
    records: &[Record],
    a: &str,
    b: &str,
    t: &str,
    mode: &str,
) -> Option<(f64, f64)> {
    let (ra, rb) = (over(records, a), over(records, b));
    let (fa, fb) = (Find(&ra), Find(&rb));
    let get = |f: &Find<'_>, kb: u64| {
        f.one("throughput", CORBINA, |r| {
            is(&r.mode, mode) && r.buf_kb == Some(kb) && is(&r.data_type, t)
        })
        .and_then(|r| r.mbit_s)
    };
    let mut kbs: Vec<u64> = ra
        .iter()
        .filter(|r| r.experiment == "throughput")
        .filter_map(|r| r.buf_kb)
        .filter(|&k| k >= 64)
        .collect();
    kbs.sort_unstable();
    kbs.dedup();
    let v: Vec<f64> = kbs
        .iter()
        .filter_map(|&kb| ratio(get(&fa, kb), get(&fb, kb)))
        .collect();
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    median_of(&v).map(|m| (m, min))
}

/// The transport targets: Unix socket, shared memory and TLS against TCP loopback.
/// The async experiment's targets (issue 15): each goal begins with `async`.
fn async_targets(records: &[Record], out: &mut Vec<Target>) {
    let asy: Vec<&Record> = records.iter().filter(|r| r.experiment == "async").collect();
    if asy.is_empty() {
        return;
    }
    let point = |mode: &str, n: Option<u64>, threads: Option<u64>| {
        asy.iter().copied().find(|r| {
            is(&r.mode, mode)
                && (n.is_none() || r.outstanding == n)
                && (threads.is_none() || r.threads == threads)
        })
    };
    let sync64 = point("sync", None, Some(64));
    let sync1 = point("sync", None, Some(1));
    let a1000 = point("async", Some(1000), None);
    let a1 = point("async", Some(1), None);
    let amh = point("amh_parked", None, None);
    let cps = |r: Option<&Record>| r.and_then(|r| r.calls_per_s);
    let mut push = |goal: &str, ratio: Option<f64>, limit, at_most, how: String| {
        out.push(Target {
            goal: goal.into(),
            ratio,
            limit,
            at_most,
            how,
            info: false,
        })
    };
    push(
        "async: 1,000 outstanding ≥ 2× calls/s of 64 sync threads",
        ratio(cps(a1000), cps(sync64)),
        2.0,
        false,
        format!(
            "ping calls/s, one task on one connection / 64 threads with a connection each, {} vs {}",
            opt(cps(a1000)),
            opt(cps(sync64))
        ),
    );
    let kib = a1000.and_then(|r| r.rss_bytes_per_call).map(|b| b / 1024.0);
    push(
        "async: client memory per outstanding call ≤ 1 KiB (1,000)",
        kib,
        1.0,
        true,
        "client RSS growth with the window full / calls outstanding, KiB".into(),
    );
    let k10 = point("async", Some(10_000), None)
        .and_then(|r| r.rss_bytes_per_call)
        .map(|b| b / 1024.0);
    push(
        "async: client memory per outstanding call ≤ 1 KiB (10,000)",
        k10,
        1.0,
        true,
        "client RSS growth with the window full / calls outstanding, KiB".into(),
    );
    let med = |r: Option<&Record>| r.and_then(|r| r.median_us);
    push(
        "async: single call latency ≤ 1.1× sync",
        ratio(med(a1), med(sync1)),
        1.1,
        true,
        format!(
            "median ping µs, 1 outstanding / 1 sync thread, {} vs {}",
            opt(med(a1)),
            opt(med(sync1))
        ),
    );
    let all = amh.map(|r| if r.complete == Some(true) { 1.0 } else { 0.0 });
    push(
        "async: AMH 10,000 parked requests released together, all answered",
        all,
        1.0,
        false,
        format!(
            "answered / parked; {} calls/s on release, {} B per parked request (client + server)",
            opt(cps(amh)),
            opt(amh.and_then(|r| r.rss_bytes_per_call))
        ),
    );
}

/// The bidirectional experiment's targets (issue 28): each goal begins with `bidir`.
fn bidir_targets(records: &[Record], out: &mut Vec<Target>) {
    let point = |imp: &str, mode: &str, op: &str| {
        records
            .iter()
            .find(|r| {
                r.experiment == "bidir"
                    && r.implementation == imp
                    && is(&r.mode, mode)
                    && is(&r.op, op)
            })
            .and_then(|r| r.median_us)
    };
    let ordinary = point(CORBINA, "ordinary", "ping");
    let bidir = point(CORBINA, "bidirectional", "ping");
    if ordinary.is_none() && bidir.is_none() {
        return;
    }
    out.push(Target {
        goal: "bidir: call over a bidirectional connection ≤ 1.2× an ordinary one".into(),
        ratio: ratio(bidir, ordinary),
        limit: 1.2,
        at_most: true,
        how: format!(
            "median ping µs, bidirectional / ordinary connection, {} vs {}",
            opt(bidir),
            opt(ordinary)
        ),
        info: false,
    });
    let (omni_ordinary, omni_bidir) = (
        point(OMNIORB, "ordinary", "ping"),
        point(OMNIORB, "bidirectional", "ping"),
    );
    if omni_ordinary.is_some() {
        out.push(Target {
            goal: "bidir: omniORB's call over a bidirectional connection / its ordinary one".into(),
            ratio: ratio(omni_bidir, omni_ordinary),
            limit: 1.2,
            at_most: true,
            how: format!(
                "median ping µs, omniORB client and server, {} vs {}",
                opt(omni_bidir),
                opt(omni_ordinary)
            ),
            info: true,
        });
    }
    // A callback's own round trip: call_back(cb, 1) less the call that carries it.
    let callback = |imp: &str| {
        let cb = point(imp, "bidirectional", "call_back")?;
        let ping = point(imp, "bidirectional", "ping")?;
        Some((cb - ping).max(0.0))
    };
    let (ours, omni) = (callback(CORBINA), callback(OMNIORB));
    if omni.is_some() {
        out.push(Target {
            goal: "bidir: callback round trip ≤ omniORB's".into(),
            ratio: ratio(ours, omni),
            limit: 1.0,
            at_most: true,
            how: format!(
                "median call_back(cb, 1) − median ping µs on the bidirectional connection, \
                 Corbina vs omniORB's own bidir peers, {} vs {}",
                opt(ours),
                opt(omni)
            ),
            info: false,
        });
    }
}

fn transport_targets(records: &[Record], out: &mut Vec<Target>) {
    let tcp = over(records, "tcp");
    let tcp = Find(&tcp);
    let mut push = |goal: String, ratio: Option<f64>, limit, at_most, how: String, info| {
        out.push(Target {
            goal,
            ratio,
            limit,
            at_most,
            how,
            info,
        })
    };
    let ping = |f: &Find<'_>| {
        f.one("latency", CORBINA, |r| is(&r.op, "ping"))
            .and_then(|r| r.median_us)
    };
    let cpu = |f: &Find<'_>| {
        f.one("cpu", CORBINA, |_| true)
            .and_then(|r| r.cpu_us_per_call)
    };
    for (tr, name) in LOCALS {
        let recs = over(records, tr);
        let f = Find(&recs);
        let limit = match tr {
            "unix" => 0.85,
            "shm" => 0.5,
            // TLS (once the handshake is done): encryption costs, within bounds.
            _ => 1.3,
        };
        push(
            format!("{name}: null twoway ≤ {limit}× TCP loopback"),
            ratio(ping(&f), ping(&tcp)),
            limit,
            true,
            format!("corbina ping median over {tr} / over tcp, medians over rounds"),
            false,
        );
        let cpu_how = format!("client+server CPU over the latency loops, {tr} / tcp");
        if tr == "tls" {
            let first = |f: &Find<'_>| {
                f.one("latency", CORBINA, |r| is(&r.op, "ping_new_connection"))
                    .and_then(|r| r.median_us)
            };
            push(
                format!("{name}: a new connection's first call / TCP's (the handshake)"),
                ratio(first(&f), first(&tcp)),
                1.0,
                true,
                format!(
                    "median of connect + handshake + ping, {tr} / tcp, {} µs vs {} µs",
                    first(&f).map_or("-".into(), |v| format!("{v:.0}")),
                    first(&tcp).map_or("-".into(), |v| format!("{v:.0}"))
                ),
                true,
            );
            push(
                format!("{name}: CPU per call / TCP's"),
                ratio(cpu(&f), cpu(&tcp)),
                1.0,
                true,
                cpu_how,
                true,
            );
        } else {
            push(
                format!("{name}: CPU per call lower than TCP's"),
                ratio(cpu(&f), cpu(&tcp)),
                1.0,
                true,
                cpu_how,
                false,
            );
        }
        if tr == "tls" {
            // Against omniORB's SSL transport (libomnisslTP4), measured in the same run.
            let x = thr_ratio(&f, (CORBINA, "octet"), (OMNIORB, "octet"), "oneway");
            push(
                format!("{name}: oneway sequence<octet> 64 KB–1 MB ≥ 1.0× omniORB SSL"),
                x.map(|p| p.0),
                1.0,
                false,
                x.map(|p| {
                    format!(
                        "corbina / omniORB, both over TLS, median over sizes ≥ 64 KB, min {:.2}",
                        p.1
                    )
                })
                .unwrap_or_default(),
                false,
            );
            let omni_ping = f
                .one("latency", OMNIORB, |r| is(&r.op, "ping"))
                .and_then(|r| r.median_us);
            push(
                format!("{name}: null twoway / omniORB SSL's"),
                ratio(ping(&f), omni_ping),
                1.0,
                true,
                "corbina ping median / omniORB's, both over TLS, medians over rounds".into(),
                true,
            );
        }
        for mode in ["oneway", "twoway"] {
            let x = thr_ratio_transports(records, tr, "tcp", "octet", mode);
            let how = x
                .map(|p| format!("median over sizes ≥ 64 KB, min {:.2}", p.1))
                .unwrap_or_default();
            let goal = format!("{name}: {mode} sequence<octet> 64 KB–1 MB");
            match (tr, mode) {
                ("shm", "oneway") => {
                    push(goal + " ≥ 1.5× TCP", x.map(|p| p.0), 1.5, false, how, false)
                }
                _ => push(goal + " / TCP", x.map(|p| p.0), 1.0, false, how, true),
            }
        }
    }
    let raw = over(records, "unix");
    let raw = Find(&raw);
    push(
        "Unix socket: null twoway / raw Unix-socket ping-pong".into(),
        ratio(
            ping(&raw),
            raw.one("latency", SOCKET, |r| {
                is(&r.op, "pingpong") && r.data_type.is_none()
            })
            .and_then(|r| r.median_us),
        ),
        1.0,
        true,
        "corbina ping median over unix / socket 16-byte ping-pong over unix".into(),
        true,
    );
}

/// One target of the issue, evaluated.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// What the goal is.
    pub goal: String,
    /// The measured ratio (the figure compared with `limit`).
    pub ratio: Option<f64>,
    /// The bound.
    pub limit: f64,
    /// True: `ratio ≤ limit` passes; false: `ratio ≥ limit` passes.
    pub at_most: bool,
    /// How the ratio was formed.
    pub how: String,
    /// Where we stand, not a goal: no verdict.
    pub info: bool,
}

impl Target {
    /// Pass, fail, or `None` when not measured.
    pub fn pass(&self) -> Option<bool> {
        if self.info {
            return None;
        }
        self.ratio.map(|r| {
            if self.at_most {
                r <= self.limit
            } else {
                r >= self.limit
            }
        })
    }
}

/// Thoughput ratios a/b at every buffer size ≥ 64 KB both have: (median, min).
fn thr_ratio(f: &Find<'_>, a: (&str, &str), b: (&str, &str), mode: &str) -> Option<(f64, f64)> {
    thr_ratio_inv(f, (a.0, a.1, "static"), (b.0, b.1, "static"), mode)
}

/// The same between invocation modes: (implementation, type, invocation).
fn thr_ratio_inv(
    f: &Find<'_>,
    a: (&str, &str, &str),
    b: (&str, &str, &str),
    mode: &str,
) -> Option<(f64, f64)> {
    let get = |(imp, t, inv): (&str, &str, &str), kb: u64| {
        f.one_inv("throughput", imp, inv, |r| {
            is(&r.mode, mode) && r.buf_kb == Some(kb) && (imp == SOCKET || is(&r.data_type, t))
        })
        .and_then(|r| r.mbit_s)
    };
    let mut kbs: Vec<u64> =
        f.0.iter()
            .filter(|r| r.experiment == "throughput")
            .filter_map(|r| r.buf_kb)
            .filter(|&k| k >= 64)
            .collect();
    kbs.sort_unstable();
    kbs.dedup();
    let v: Vec<f64> = kbs
        .iter()
        .filter_map(|&kb| ratio(get(a, kb), get(b, kb)))
        .collect();
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    median_of(&v).map(|m| (m, min))
}

/// Evaluates every target of the issue.
pub fn targets(records: &[Record]) -> Vec<Target> {
    let f = Find(records);
    let mut out = Vec::new();
    let mut push = |goal: &str, r: Option<f64>, limit, at_most, how: String| {
        out.push(Target {
            goal: goal.into(),
            ratio: r,
            limit,
            at_most,
            how,
            info: false,
        })
    };
    let med =
        |e, imp, pred: &dyn Fn(&Record) -> bool| f.one(e, imp, pred).and_then(|r| r.median_us);
    push(
        "null twoway median ≤ 1.02× raw-socket ping-pong",
        ratio(
            med("latency", CORBINA, &|r| is(&r.op, "ping")),
            med("latency", SOCKET, &|r| {
                is(&r.op, "pingpong") && r.data_type.is_none()
            }),
        ),
        1.02,
        true,
        "corbina ping median / socket 16-byte ping-pong median".into(),
    );
    let cpu = |imp| f.one("cpu", imp, |_| true).and_then(|r| r.cpu_us_per_call);
    push(
        "CPU per call ≤ 0.8× omniORB's",
        ratio(cpu(CORBINA), cpu(OMNIORB)),
        0.8,
        true,
        "client+server CPU over the latency loops, corbina / omniORB".into(),
    );
    let with_min = |x: Option<(f64, f64)>| {
        (
            x.map(|p| p.0),
            x.map(|p| format!("median over sizes ≥ 64 KB, min {:.2}", p.1))
                .unwrap_or_default(),
        )
    };
    let (r, how) = with_min(thr_ratio(
        &f,
        (CORBINA, "octet"),
        (SOCKET, "bytes"),
        "oneway",
    ));
    push(
        "oneway sequence<octet> ≥ 64 KB ≥ 0.9× raw-socket bulk",
        r,
        0.9,
        false,
        how,
    );
    let (r, how) = with_min(thr_ratio(
        &f,
        (CORBINA, "char"),
        (CORBINA, "octet"),
        "oneway",
    ));
    push("sequence<char> ≥ 0.9× sequence<octet>", r, 0.9, false, how);
    let (r, how) = with_min(thr_ratio(
        &f,
        (CORBINA, "struct"),
        (CORBINA, "octet"),
        "oneway",
    ));
    push("sequence<BinStruct> ≥ 0.5× octets", r, 0.5, false, how);
    let (r, how) = with_min(thr_ratio(
        &f,
        (CORBINA, "struct"),
        (OMNIORB, "struct"),
        "oneway",
    ));
    push("sequence<BinStruct> ≥ 2× omniORB's", r, 2.0, false, how);
    let prim: Vec<(f64, f64)> = ["short", "long", "double"]
        .iter()
        .filter_map(|t| thr_ratio(&f, (CORBINA, t), (CORBINA, "octet"), "oneway"))
        .collect();
    let worst = prim.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    push(
        "other primitives ≥ 0.9× octets",
        (!prim.is_empty()).then_some(worst),
        0.9,
        false,
        "worst of short/long/double, each the median over sizes ≥ 64 KB".into(),
    );
    let rate = |imp| {
        f.one("oneway_rate", imp, unbuffered)
            .and_then(|r| r.calls_per_s)
    };
    push(
        "null oneways ≥ omniORB's rate",
        ratio(rate(CORBINA), rate(OMNIORB)),
        1.0,
        false,
        "calls/s, corbina / omniORB".into(),
    );
    let batched = f
        .one("oneway_rate", CORBINA, |r| is(&r.op, BUFFERED_ONEWAY))
        .and_then(|r| r.calls_per_s);
    push(
        "buffered null oneways ≥ 3× omniORB's rate",
        ratio(batched, rate(OMNIORB)),
        3.0,
        false,
        "calls/s, corbina with -ORBOnewaySyncScope none (default bounds) / omniORB".into(),
    );
    let scal = f.all("scalability", CORBINA, |_| true);
    let max_n = scal.iter().filter_map(|r| r.objects).max();
    let scal_med = |n: Option<u64>, order: &str| {
        scal.iter()
            .find(|r| r.objects == n && is(&r.mode, order))
            .and_then(|r| r.median_us)
    };
    let growth = ["request_train", "round_robin"]
        .iter()
        .filter_map(|o| ratio(scal_med(max_n, o), scal_med(Some(1), o)))
        .fold(None, |acc: Option<f64>, x| {
            Some(acc.map_or(x, |a| a.max(x)))
        });
    push(
        "latency at the largest object count within 1.1× of 1 object",
        growth,
        1.1,
        true,
        format!(
            "median at {} objects / at 1, worse of the two orders",
            max_n.unwrap_or(0)
        ),
    );
    push(
        "round robin within 1.1× of request train",
        ratio(
            scal_med(max_n, "round_robin"),
            scal_med(max_n, "request_train"),
        ),
        1.1,
        true,
        format!("medians at {} objects", max_n.unwrap_or(0)),
    );
    let conc = |imp, t| {
        f.one("concurrency", imp, |r| {
            r.threads == Some(t) && is(&r.mode, "own_orb") && !is(&r.server_model, "pool")
        })
        .and_then(|r| r.calls_per_s)
    };
    let cr: Vec<f64> = [8, 64]
        .iter()
        .filter_map(|&t| ratio(conc(CORBINA, t), conc(OMNIORB, t)))
        .collect();
    push(
        "concurrency calls/s at 8 and 64 threads ≥ omniORB's",
        (cr.len() == 2).then(|| cr[0].min(cr[1])),
        1.0,
        false,
        "worse of 8 and 64 threads, a connection per thread, same Corbina client for both servers"
            .into(),
    );
    let ir = |imp| {
        f.one("instructions", imp, |_| true)
            .and_then(|r| r.instructions_per_call)
    };
    push(
        "client instructions per null twoway ≤ 0.5× omniORB's",
        ratio(ir(CORBINA), ir(OMNIORB)),
        0.5,
        true,
        "callgrind, user-space Ir per ping of the client process, same server".into(),
    );
    // Where the dynamic modes stand against static stubs (no goal set: information).
    for (inv, label) in [
        ("dii", "DII, new request per call"),
        ("dii_reuse", "DII, one request reused"),
        ("dsi", "DSI server"),
    ] {
        let lat = |inv| {
            f.one_inv("latency", CORBINA, inv, |r| is(&r.op, "ping"))
                .and_then(|r| r.median_us)
        };
        let mut info = |goal: String, r: Option<f64>, how: String| {
            out.push(Target {
                goal,
                ratio: r,
                limit: 1.0,
                at_most: false,
                how,
                info: true,
            })
        };
        info(
            format!("{label}: null twoway latency / static"),
            ratio(lat(inv), lat("static")),
            "medians over rounds".into(),
        );
        for (t, name) in [
            ("octet", "sequence<octet>"),
            ("struct", "sequence<BinStruct>"),
        ] {
            let x = thr_ratio_inv(&f, (CORBINA, t, inv), (CORBINA, t, "static"), "twoway");
            info(
                format!("{label}: twoway {name} throughput / static"),
                x.map(|p| p.0),
                x.map(|p| format!("median over sizes ≥ 64 KB, min {:.2}", p.1))
                    .unwrap_or_default(),
            );
        }
    }
    transport_targets(records, &mut out);
    async_targets(records, &mut out);
    bidir_targets(records, &mut out);
    events_targets(records, &mut out);
    out
}

/// The channels of the events experiment, in column order.
const EVENT_IMPLS: [&str; 3] = [
    CORBINA,
    crate::events_bench::OMNIEVENTS,
    crate::events_bench::JACORB,
];

/// Where an events record stands: kind, consumers, bytes, slow consumer, filter.
type EventKey<'a> = (&'a str, u64, u64, bool, bool);

fn event_key(r: &Record) -> Option<EventKey<'_>> {
    Some((
        r.mode.as_deref()?,
        r.consumers?,
        r.size?,
        r.slow_consumer?,
        r.filter.unwrap_or(false),
    ))
}

/// The events experiment's record of `imp` at a point, if measured.
fn event_point<'a>(records: &'a [Record], imp: &str, at: EventKey<'_>) -> Option<&'a Record> {
    records.iter().find(|r| {
        r.experiment == crate::events_bench::EXPERIMENT
            && r.available
            && r.implementation == imp
            && event_key(r) == Some(at)
    })
}

/// The better of the other channels' events/s at a point, and whose it is.
fn best_peer_rate(records: &[Record], at: EventKey<'_>) -> Option<(f64, &'static str)> {
    EVENT_IMPLS[1..]
        .iter()
        .filter_map(|imp| {
            event_point(records, imp, at)
                .and_then(|r| r.events_per_s)
                .map(|x| (x, *imp))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// The events experiment's targets (issue 31): each goal begins with `events`.
fn events_targets(records: &[Record], out: &mut Vec<Target>) {
    let rate =
        |imp: &str, at: EventKey<'_>| event_point(records, imp, at).and_then(|r| r.events_per_s);
    for (kind, size) in [("any", 100), ("any", 10_240), ("structured", 100)] {
        let at = (kind, 10, size, false, false);
        let ours = rate(CORBINA, at);
        if ours.is_none() {
            continue;
        }
        let best = best_peer_rate(records, at);
        out.push(Target {
            goal: format!(
                "events: {kind} {size} B to 10 consumers, events/s ≥ 2× the better of omniEvents, JacORB"
            ),
            ratio: ratio(ours, best.map(|b| b.0)),
            limit: 2.0,
            at_most: false,
            how: match best {
                Some((b, who)) => format!(
                    "events/s per consumer, Corbina's channel / {who}'s, {} vs {}",
                    opt(ours),
                    num(b)
                ),
                None => "no other channel measured (--peer omniorb runs omniEvents and JacORB)"
                    .into(),
            },
            info: false,
        });
    }
    let (with, without) = (
        rate(CORBINA, ("any", 10, 100, true, false)),
        rate(CORBINA, ("any", 10, 100, false, false)),
    );
    if with.is_some() {
        out.push(Target {
            goal: "events: a consumer sleeping 100 ms per push costs the other 10 ≤ 10 %".into(),
            ratio: ratio(with, without),
            limit: 0.9,
            at_most: false,
            how: format!(
                "events/s per fast consumer with / without the slow one, {} vs {}",
                opt(with),
                opt(without)
            ),
            info: false,
        });
    }
    let (filtered, plain) = (
        rate(CORBINA, ("structured", 10, 100, false, true)),
        rate(CORBINA, ("structured", 10, 100, false, false)),
    );
    if filtered.is_some() {
        out.push(Target {
            goal: "events: structured events through a filter on every proxy / without".into(),
            ratio: ratio(filtered, plain),
            limit: 1.0,
            at_most: false,
            how: format!(
                "events/s per consumer, 10 consumers, an ETCL filter every event passes, {} vs {}",
                opt(filtered),
                opt(plain)
            ),
            info: true,
        });
    }
}

/// The events experiment as its own table (its comparisons are other channels, not the
/// socket and omniORB columns of the main table); empty without events records.
pub fn format_events(records: &[Record]) -> String {
    let mut points: Vec<EventKey<'_>> = records
        .iter()
        .filter(|r| r.experiment == crate::events_bench::EXPERIMENT)
        .filter_map(event_key)
        .collect();
    points.sort_unstable();
    points.dedup();
    if points.is_empty() {
        return String::new();
    }
    let mut rows: Vec<[String; 6]> = vec![[
        "events point".into(),
        "metric".into(),
        EVENT_IMPLS[0].into(),
        EVENT_IMPLS[1].into(),
        EVENT_IMPLS[2].into(),
        "C/best".into(),
    ]];
    for at in points {
        let (kind, consumers, size, slow, filter) = at;
        let point = format!(
            "{kind} {size} B → {consumers}{}{}",
            if slow { " + 1 slow" } else { "" },
            if filter { ", filtered" } else { "" }
        );
        let recs = EVENT_IMPLS.map(|imp| event_point(records, imp, at));
        let rate = recs.map(|r| r.and_then(|r| r.events_per_s));
        let best = rate[1..].iter().flatten().copied().reduce(f64::max);
        let cell = |r: Option<&Record>, x: Option<f64>| match (r, x) {
            (Some(r), Some(x)) => match r.delivered {
                Some(d) if d < 0.995 => format!("{} ({:.0} % kept)", num(x), d * 100.0),
                _ => num(x),
            },
            _ => "-".into(),
        };
        rows.push([
            point.clone(),
            "events/s per consumer".into(),
            cell(recs[0], rate[0]),
            cell(recs[1], rate[1]),
            cell(recs[2], rate[2]),
            ratio(rate[0], best)
                .map(|x| format!("{x:.2}"))
                .unwrap_or_default(),
        ]);
        let med = recs.map(|r| r.and_then(|r| r.median_us));
        let lat = |r: Option<&Record>| match r.and_then(|r| Some((r.median_us?, r.p99_us?))) {
            Some((m, p)) => format!("{}/{}", num(m), num(p)),
            None => "-".into(),
        };
        let best_med = med[1..].iter().flatten().copied().reduce(f64::min);
        rows.push([
            point,
            "latency med/p99 µs".into(),
            lat(recs[0]),
            lat(recs[1]),
            lat(recs[2]),
            ratio(med[0], best_med)
                .map(|x| format!("{x:.2}"))
                .unwrap_or_default(),
        ]);
    }
    let width = widths(rows.iter().map(|r| &r[..]));
    let mut out = aligned(&rows[0], &width, 2);
    out.push_str(&aligned(&rule(&width), &width, 2));
    for r in &rows[1..] {
        out.push_str(&aligned(r, &width, 2));
    }
    out
}

/// The targets section as text.
pub fn format_targets(targets: &[Target]) -> String {
    let mut s = String::from(
        "targets (the project's goals, not test results: a missed goal is work to do):\n",
    );
    for t in targets {
        let verdict = match t.pass() {
            _ if t.info => "info       ",
            Some(true) => "goal met   ",
            Some(false) => "goal missed",
            None => "no data    ",
        };
        let r = t
            .ratio
            .map(|r| format!("{r:.2}×"))
            .unwrap_or_else(|| "-".into());
        s.push_str(&format!(
            "  [{verdict}] {:<62} measured {:>7}  ({})\n",
            t.goal, r, t.how
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thr(imp: &str, t: &str, kb: u64, mbit: f64) -> Record {
        let mut r = Record::new("throughput", imp).mode("oneway").data_type(t);
        r.buf_kb = Some(kb);
        r.mbit_s = Some(mbit);
        r
    }

    #[test]
    fn numbers_keep_sensible_precision() {
        assert_eq!(num(12345.678), "12346");
        assert_eq!(num(12.345), "12.3");
        assert_eq!(num(1.2345), "1.23");
        assert_eq!(num(f64::NAN), "-");
    }

    #[test]
    fn table_aligns_columns_and_groups_experiments() {
        let records = vec![
            thr(CORBINA, "octet", 64, 8000.0),
            thr(SOCKET, "bytes", 64, 10000.0),
            thr(OMNIORB, "octet", 64, 4000.0),
            Record::new("latency", CORBINA)
                .op("ping")
                .latency(&crate::stats::Summary {
                    n: 10,
                    median: 20.0,
                    p99: 30.0,
                    p999: 40.0,
                    mean: 21.0,
                    min: 19.0,
                    max: 50.0,
                }),
        ];
        let rows = rows(&records);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].point, "oneway octet 64K");
        assert_eq!(rows[0].vs_socket, Some(0.8));
        assert_eq!(rows[0].vs_peer, Some(2.0));
        assert_eq!(rows[1].corbina, "20.0/30.0/40.0");
        let text = format_table(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("experiment"));
        assert!(lines[1].starts_with("----------"));
        // A blank line separates the groups; the ratio columns line up at the right edge.
        assert_eq!(lines[3], "");
        assert!(lines[2].ends_with("0.80    2.00"), "{}", lines[2]);
        let w = lines[0].chars().count();
        assert!(lines[1].chars().count() == w);
    }

    #[test]
    fn targets_pass_fail_and_missing() {
        let records = vec![
            thr(CORBINA, "octet", 64, 9500.0),
            thr(CORBINA, "char", 64, 9000.0),
            thr(SOCKET, "bytes", 64, 10000.0),
            thr(CORBINA, "octet", 1, 1.0), // below 64 KB: ignored
        ];
        let t = targets(&records);
        let get = |g: &str| t.iter().find(|x| x.goal.starts_with(g)).unwrap();
        let octet = get("oneway sequence<octet>");
        assert_eq!(octet.ratio, Some(0.95));
        assert_eq!(octet.pass(), Some(true));
        let ch = get("sequence<char>");
        assert!((ch.ratio.unwrap() - 9000.0 / 9500.0).abs() < 1e-9);
        assert_eq!(get("null twoway").pass(), None);
        let text = format_targets(&t);
        assert!(
            text.contains("[goal met   ] oneway sequence<octet>"),
            "{text}"
        );
        assert!(text.contains("[no data    ] null twoway"), "{text}");
        assert!(!text.contains("FAIL") && !text.contains("PASS"), "{text}");
    }

    #[test]
    fn memory_that_shrank_is_shown_as_noise_not_a_negative_cost() {
        let mem = |imp: &str, n: u64, b: f64| {
            let mut r = Record::new("memory", imp);
            r.objects = Some(n);
            r.rss_bytes_per_object = Some(b);
            r
        };
        let scal = |n: u64| {
            let mut r = Record::new("scalability", CORBINA);
            r.objects = Some(n);
            r
        };
        let records = [
            scal(100),
            scal(1000),
            mem(CORBINA, 100, -120.0),
            mem(OMNIORB, 100, 300.0),
            mem(CORBINA, 1000, 150.0),
            mem(OMNIORB, 1000, 300.0),
        ];
        let rows = rows(&records);
        let mem_rows: Vec<&Row> = rows.iter().filter(|r| r.experiment == "memory").collect();
        assert_eq!(mem_rows.len(), 2);
        assert_eq!(mem_rows[0].corbina, "≈0 (noise)");
        assert_eq!(mem_rows[0].vs_peer, None);
        assert_eq!(mem_rows[1].corbina, "150.0");
        assert_eq!(mem_rows[1].vs_peer, Some(0.5));
        assert!(!format_table(&rows).contains("-120"));
    }

    fn event(imp: &str, consumers: u64, size: u64, slow: bool, rate: f64, kept: f64) -> Record {
        let mut r = Record::new("events", imp).mode("any").op("push");
        r.filter = Some(false);
        r.consumers = Some(consumers);
        r.size = Some(size);
        r.slow_consumer = Some(slow);
        r.events_per_s = Some(rate);
        r.delivered = Some(kept);
        r.median_us = Some(100.0);
        r.p99_us = Some(300.0);
        r
    }

    #[test]
    fn events_goals_compare_with_the_better_peer_and_the_slow_consumer() {
        use crate::events_bench::{JACORB, OMNIEVENTS};
        let records = vec![
            event(CORBINA, 10, 100, false, 5000.0, 1.0),
            event(OMNIEVENTS, 10, 100, false, 2000.0, 0.5),
            event(JACORB, 10, 100, false, 2400.0, 1.0),
            event(CORBINA, 10, 100, true, 4600.0, 1.0),
            // A peer that could not run gives no figure, not a zero.
            Record::new("events", JACORB).unavailable("no Java"),
        ];
        let t = targets(&records);
        let rate = t
            .iter()
            .find(|t| t.goal.contains("any 100 B to 10"))
            .unwrap();
        assert!((rate.ratio.unwrap() - 5000.0 / 2400.0).abs() < 1e-9);
        assert!(rate.how.contains("JacORB"), "{}", rate.how);
        assert_eq!(rate.pass(), Some(true));
        let slow = t.iter().find(|t| t.goal.contains("sleeping")).unwrap();
        assert!((slow.ratio.unwrap() - 0.92).abs() < 1e-9);
        assert_eq!(slow.pass(), Some(true));
        // No 10 KB point measured: no goal for it.
        assert!(!t.iter().any(|t| t.goal.contains("10240")));
        let table = format_events(&records);
        assert!(table.contains("any 100 B → 10 + 1 slow"), "{table}");
        assert!(table.contains("(50 % kept)"), "{table}");
        assert!(table.contains("2.08"), "{table}");
        assert!(format_events(&records[..0]).is_empty());
    }
}
