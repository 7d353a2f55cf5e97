//! The measurement record: one JSON object per line, the schema documented in
//! `docs/benchmarks.md`. Identity fields are always present (null when they do not apply);
//! figures are present only when measured.

use serde::{Deserialize, Serialize};

use crate::stats::Summary;

/// Implementation names as they appear in `impl`.
pub const CORBINA: &str = "corbina";
/// The raw-socket baseline.
pub const SOCKET: &str = "socket";
/// The omniORB peer.
pub const OMNIORB: &str = "omniORB";

/// One measurement.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Record {
    /// `throughput`, `latency`, `oneway_rate`, `cpu`, `scalability`, `memory`,
    /// `concurrency`.
    pub experiment: String,
    /// `corbina`, `socket` or `omniORB`.
    #[serde(rename = "impl")]
    pub implementation: String,
    /// `tcp` or `unix`.
    pub transport: String,
    /// `static` (stubs/skeletons), `dii` (a new DII request per call), `dii_reuse` (one
    /// DII request invoked again and again), `dsi` (static client, DSI server).
    pub invocation: Option<String>,
    /// `oneway`/`twoway` (throughput, latency), `request_train`/`round_robin`
    /// (scalability), `own_orb`/`shared_ref` (concurrency).
    pub mode: Option<String>,
    /// The operation timed (`ping`, `echo_empty`, `send_octets`, …).
    pub op: Option<String>,
    /// Element type: `octet`, `short`, `long`, `double`, `char`, `struct`, or `bytes`
    /// (sockets).
    #[serde(rename = "type")]
    pub data_type: Option<String>,
    /// Payload bytes per call (element count × element size).
    pub size: Option<u64>,
    /// Objects in the server.
    pub objects: Option<u64>,
    /// Client threads.
    pub threads: Option<u64>,
    /// `thread_per_connection` or `pool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_model: Option<String>,
    /// Which client drove the server when it is not the implementation's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// False for a point that could not be measured (feature not available yet).
    #[serde(default = "yes")]
    pub available: bool,
    /// Free text: why unavailable, caveats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The sender buffer size in KiB (throughput).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buf_kb: Option<u64>,
    /// Elements per call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elems: Option<u64>,
    /// Calls (or samples) measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u64>,
    /// Wall-clock seconds of the measured interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// Throughput, megabits (1e6 bit) per second, as the receiver counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mbit_s: Option<f64>,
    /// Throughput, megabytes (1e6 B) per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mb_s: Option<f64>,
    /// Whether the receiver counted every byte sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete: Option<bool>,
    /// Latency figures, microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_us: Option<f64>,
    /// 99th percentile, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_us: Option<f64>,
    /// 99.9th percentile, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p999_us: Option<f64>,
    /// Mean, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_us: Option<f64>,
    /// Smallest, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_us: Option<f64>,
    /// Largest, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_us: Option<f64>,
    /// Calls per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls_per_s: Option<f64>,
    /// Client + server CPU (user + sys) per call, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_call: Option<f64>,
    /// Client process CPU per call, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu_us_per_call: Option<f64>,
    /// Server process CPU per call, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_us_per_call: Option<f64>,
    /// Server resident memory per object, bytes (memory experiment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_bytes_per_object: Option<f64>,
    /// Server resident set size, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_rss_bytes: Option<u64>,
    /// Client user-space instructions per call (callgrind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_per_call: Option<f64>,
    /// First call on each object, µs per object (scalability).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_first_call_us: Option<f64>,
    /// Calls kept in flight on one connection (async), or requests parked (AMH).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outstanding: Option<u64>,
    /// Resident memory per outstanding call (or parked request), bytes (async).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_bytes_per_call: Option<f64>,
    /// Push consumers of the channel (events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumers: Option<u64>,
    /// Whether one more consumer slept 100 ms per push (events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_consumer: Option<bool>,
    /// Whether each consumer's proxy had a filter (events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<bool>,
    /// Events per second delivered to each consumer (events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events_per_s: Option<f64>,
    /// Fraction of the events pushed × consumers that arrived (events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered: Option<f64>,
}

fn yes() -> bool {
    true
}

impl Record {
    /// A record for `experiment` by `implementation` over TCP, static invocation.
    pub fn new(experiment: &str, implementation: &str) -> Record {
        Record {
            experiment: experiment.into(),
            implementation: implementation.into(),
            transport: "tcp".into(),
            invocation: Some("static".into()),
            available: true,
            ..Record::default()
        }
    }

    /// Sets the mode.
    pub fn mode(mut self, m: &str) -> Self {
        self.mode = Some(m.into());
        self
    }

    /// Sets the operation.
    pub fn op(mut self, o: &str) -> Self {
        self.op = Some(o.into());
        self
    }

    /// Sets the element type.
    pub fn data_type(mut self, t: &str) -> Self {
        self.data_type = Some(t.into());
        self
    }

    /// Fills the latency figures from a summary.
    pub fn latency(mut self, s: &Summary) -> Self {
        self.n = Some(s.n as u64);
        self.median_us = Some(s.median);
        self.p99_us = Some(s.p99);
        self.p999_us = Some(s.p999);
        self.mean_us = Some(s.mean);
        self.min_us = Some(s.min);
        self.max_us = Some(s.max);
        self
    }

    /// Fills the throughput figures from bytes counted over seconds.
    pub fn rate(mut self, bytes: u64, seconds: f64) -> Self {
        let secs = seconds.max(1e-9);
        self.seconds = Some(seconds);
        self.mbit_s = Some(bytes as f64 * 8.0 / secs / 1e6);
        self.mb_s = Some(bytes as f64 / secs / 1e6);
        self
    }

    /// A point that cannot be measured yet.
    pub fn unavailable(mut self, why: &str) -> Self {
        self.available = false;
        self.note = Some(why.into());
        self
    }

    /// The JSON line.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Parses one JSON line of this schema.
    pub fn from_json(line: &str) -> Result<Record, serde_json::Error> {
        serde_json::from_str(line)
    }
}

/// Converts one `omni_client` JSON line into a record; `None` for lines of other tests
/// (`check`) or lines that are not JSON.
pub fn from_omni_line(line: &str) -> Option<Record> {
    let v: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_owned);
    let f = |k: &str| v.get(k).and_then(|x| x.as_f64());
    let u = |k: &str| v.get(k).and_then(|x| x.as_u64());
    let test = s("test")?;
    let mut r = Record::new("", &s("impl").unwrap_or_else(|| OMNIORB.into()));
    r.transport = s("transport").unwrap_or_else(|| "tcp".into());
    r.n = u("n");
    r.median_us = f("median_us");
    r.p99_us = f("p99_us");
    r.mean_us = f("mean_us");
    r.min_us = f("min_us");
    r.max_us = f("max_us");
    match test.as_str() {
        "latency" => {
            r.experiment = "latency".into();
            r.mode = Some("twoway".into());
            r.op = s("op");
        }
        "oneway_rate" => {
            r.experiment = "oneway_rate".into();
            r.mode = Some("oneway".into());
            r.op = s("op");
            r.seconds = f("seconds");
            r.calls_per_s = f("calls_per_s");
            r.mean_us = f("us_per_call");
        }
        "throughput" => {
            let bytes = u("bytes_per_call")?;
            let calls = u("calls")?;
            r = r.rate(bytes * calls, f("seconds")?);
            r.experiment = "throughput".into();
            r.mode = s("mode");
            r.data_type = s("type");
            r.op = r.data_type.as_deref().map(send_op);
            r.size = Some(bytes);
            r.buf_kb = u("buf_kb");
            r.elems = u("elems");
            r.n = Some(calls);
            r.complete = v.get("complete").and_then(|x| x.as_bool());
            // Keep the tool's own figure (it is the same formula).
            r.mbit_s = f("mbit_s").or(r.mbit_s);
        }
        "scalability" => {
            r.experiment = "scalability".into();
            r.mode = s("op");
            r.op = Some("ping".into());
            r.objects = u("objects");
            r.cold_first_call_us = f("cold_first_call_us");
        }
        _ => return None,
    }
    Some(r)
}

/// The operation name used for a throughput type.
pub fn send_op(t: &str) -> String {
    match t {
        "struct" => "send_structs".into(),
        "bytes" => "write".into(),
        other => format!("send_{other}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip_keeps_every_field() {
        let mut r = Record::new("throughput", CORBINA)
            .mode("oneway")
            .data_type("octet")
            .op("send_octets_oneway")
            .rate(64 << 20, 0.5);
        r.size = Some(65536);
        r.buf_kb = Some(64);
        r.complete = Some(true);
        r.note = Some("a \"quoted\" note".into());
        let line = r.to_json();
        assert!(!line.contains('\n'));
        let back = Record::from_json(&line).unwrap();
        assert_eq!(back, r);
        // Identity fields are always present, even when null.
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        for k in [
            "experiment",
            "impl",
            "transport",
            "mode",
            "type",
            "size",
            "objects",
            "threads",
            "available",
        ] {
            assert!(v.get(k).is_some(), "{k} missing in {line}");
        }
        assert!(v.get("median_us").is_none());
        assert_eq!(v["impl"], "corbina");
    }

    #[test]
    fn latency_and_unavailable_round_trip() {
        let mut samples = vec![10.0, 12.0, 11.0];
        let s = crate::stats::summarize(&mut samples);
        let r = Record::new("latency", SOCKET).op("pingpong").latency(&s);
        assert_eq!(Record::from_json(&r.to_json()).unwrap(), r);
        let u = Record::new("throughput", CORBINA).unavailable("not yet available");
        let back = Record::from_json(&u.to_json()).unwrap();
        assert!(!back.available);
        assert_eq!(back.note.as_deref(), Some("not yet available"));
    }

    #[test]
    fn omni_client_lines_convert() {
        let thr = r#"{"impl":"omniORB","transport":"tcp","test":"throughput","type":"struct","mode":"oneway","buf_kb":1,"elems":42,"bytes_per_call":1008,"calls":1000,"seconds":0.010000,"mbit_s":806.4,"server_bytes":1008000,"complete":true,"stop_polls":1,"time_capped":false}"#;
        let r = from_omni_line(thr).unwrap();
        assert_eq!(r.experiment, "throughput");
        assert_eq!(r.implementation, OMNIORB);
        assert_eq!(r.size, Some(1008));
        assert_eq!(r.buf_kb, Some(1));
        assert_eq!(r.mbit_s, Some(806.4));
        assert!((r.mb_s.unwrap() - 100.8).abs() < 1e-6);
        assert_eq!(r.op.as_deref(), Some("send_structs"));
        let lat = r#"{"impl":"omniORB","transport":"tcp","test":"latency","op":"ping","n":20000,"median_us":14.0,"p99_us":20.5,"mean_us":14.2,"min_us":12.0,"max_us":90.0}"#;
        let r = from_omni_line(lat).unwrap();
        assert_eq!(
            (r.experiment.as_str(), r.median_us),
            ("latency", Some(14.0))
        );
        let ow = r#"{"impl":"omniORB","transport":"tcp","test":"oneway_rate","op":"ping_oneway","n":20000,"seconds":0.1,"calls_per_s":200000,"us_per_call":5.0}"#;
        assert_eq!(from_omni_line(ow).unwrap().calls_per_s, Some(200000.0));
        let sc = r#"{"impl":"omniORB","transport":"tcp","test":"scalability","op":"round_robin","n":20000,"median_us":15,"p99_us":20,"mean_us":15,"min_us":10,"max_us":99,"objects":100,"calls_per_object":200,"cold_first_call_us":30}"#;
        let r = from_omni_line(sc).unwrap();
        assert_eq!(r.mode.as_deref(), Some("round_robin"));
        assert_eq!(r.objects, Some(100));
        assert!(from_omni_line(r#"{"test":"check","op":"ping","ok":true}"#).is_none());
        assert!(from_omni_line("garbage").is_none());
    }
}
