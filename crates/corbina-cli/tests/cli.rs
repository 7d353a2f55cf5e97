//! The `corbina` binary, run as a user runs it: `catior`, `names` against a naming service
//! the test starts (the same `NamingService` the `corbina-names` daemon runs), and `ping`.

use std::path::PathBuf;
use std::process::{Command, Output};

use corbina::cdr::ByteOrder;
use corbina::config::Endpoint;
use corbina::giop::{IiopProfile, Ior, ObjectKey, TaggedComponent, Version};
use corbina::{Orb, OrbConfig};
use corbina_naming::{NamingService, Options};
use serde_json::Value;

fn corbina(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_corbina"))
        .args(args)
        .output()
        .expect("corbina runs")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn ok(args: &[&str]) -> String {
    let o = corbina(args);
    assert!(
        o.status.success(),
        "corbina {args:?} failed: {}{}",
        text(&o),
        String::from_utf8_lossy(&o.stderr)
    );
    text(&o)
}

fn fails(args: &[&str]) -> String {
    let o = corbina(args);
    assert_eq!(o.status.code(), Some(1), "corbina {args:?}: {}", text(&o));
    text(&o) + &String::from_utf8_lossy(&o.stderr)
}

struct Service {
    _orb: Orb,
    service: NamingService,
    init_ref: String,
    url: String,
}

/// A fresh data directory and an ORB listening on a loopback port, for a service under test.
fn loopback_orb(name: &str) -> (PathBuf, Orb) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let orb = Orb::with_config(OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..OrbConfig::default()
    });
    (dir, orb)
}

fn service(name: &str) -> Service {
    let (dir, orb) = loopback_orb(name);
    let service = NamingService::start(&orb, &Options::new(dir)).unwrap();
    let (host, port) = service.endpoint();
    let url = format!("corbaloc::{host}:{port}/NameService");
    Service {
        _orb: orb,
        init_ref: format!("NameService={url}"),
        service,
        url,
    }
}

fn root_ior(s: &Service) -> String {
    s.service.root().as_object().ior().to_stringified().unwrap()
}

/// Standard error of a run that must exit with `code`.
fn exits(code: i32, args: &[&str]) -> String {
    let o = corbina(args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(
        o.status.code(),
        Some(code),
        "corbina {args:?}: {}{err}",
        text(&o)
    );
    err
}

#[test]
fn help_version_and_usage_errors_as_rust_tools_give_them() {
    let help = ok(&["--help"]);
    for cmd in ["catior", "names", "ping", "Exit codes"] {
        assert!(help.contains(cmd), "{help}");
    }
    assert_eq!(
        ok(&["--version"]).trim(),
        format!("corbina {}", env!("CARGO_PKG_VERSION"))
    );
    for (args, usage) in [
        (
            &["catior", "--help"][..],
            "Usage: corbina catior [OPTIONS] <IOR|corbaloc|corbaname|FILE>...",
        ),
        (&["ping", "--help"], "Usage: corbina ping [OPTIONS] <REF>"),
        (&["names", "--help"], "Usage: corbina names <COMMAND>"),
        (
            &["names", "bind", "--help"],
            "Usage: corbina names bind [OPTIONS] <PATH> <REF>",
        ),
        // -ORB… options are taken out first, wherever they are.
        (
            &["ping", "-ORBtraceLevel", "0", "--help"],
            "Usage: corbina ping",
        ),
    ] {
        let out = ok(args);
        assert!(out.contains(usage), "{args:?}: {out}");
    }
    // Usage errors: exit code 2, the reason, and where to look.
    let e = exits(2, &["ping", "--count", "0", "corbaloc::h:1/K"]);
    assert!(e.contains("--count") && e.contains("--help"), "{e}");
    let e = exits(2, &["ping", "--timeout", "soon", "corbaloc::h:1/K"]);
    assert!(e.contains("positive number of seconds"), "{e}");
    let e = exits(2, &["-ORBnoSuchOption", "1", "ping", "corbaloc::h:1/K"]);
    assert!(e.contains("unknown ORB option"), "{e}");
    exits(2, &["catior"]);
    exits(2, &["names", "bind", "only-a-path"]);
    // A reference that is not one says why.
    let e = exits(2, &["ping", "garbage"]);
    assert!(
        e.contains("garbage: no such file, and not an object URL"),
        "{e}"
    );
    let e = exits(2, &["ping", "IOR:zz"]);
    assert!(e.contains("IOR:zz: not a hex digit at position 4"), "{e}");
    let e = exits(1, &["catior", "missing.ior"]);
    assert!(e.contains("missing.ior: no such file"), "{e}");
}

#[test]
fn catior_decodes_for_people_and_scripts() {
    let s = service("catior");
    let ior = root_ior(&s);
    let out = ok(&["catior", &ior]);
    for want in [
        "type id: IDL:omg.org/CosNaming/NamingContextExt:1.0",
        "IIOP 1.2",
        "object key (11 bytes): NameService",
        "hex: 4e616d6553657276696365",
        "ORB type: Corbina (0x43424e00)",
        "char : native UTF-8 (0x05010001)",
        "wchar: native UTF-16",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }

    // An IOR with an alternate address and an unknown component, decoded as JSON.
    let order = ByteOrder::Big;
    let profile = IiopProfile {
        version: Version::V1_2,
        host: "main.example".into(),
        port: 2809,
        object_key: ObjectKey::new(b"key\x00\xff".to_vec()),
        components: vec![
            TaggedComponent::orb_type(0x4154_5400, order).unwrap(),
            TaggedComponent::alternate_iiop_address("backup.example", 9999, order).unwrap(),
            TaggedComponent {
                tag: 0x1234,
                component_data: vec![1, 2, 3],
            },
        ],
        byte_order: order,
    };
    let ior = Ior {
        type_id: "IDL:Test:1.0".into(),
        profiles: vec![profile.to_tagged().unwrap()],
        byte_order: order,
    }
    .to_stringified()
    .unwrap();
    let v: Value = serde_json::from_str(&ok(&["catior", "--json", &ior])).unwrap();
    assert_eq!(v["type_id"], "IDL:Test:1.0");
    assert_eq!(v["byte_order"], "big-endian");
    let p = &v["profiles"][0];
    assert_eq!(p["iiop_version"], "1.2");
    assert_eq!(p["host"], "main.example");
    assert_eq!(p["port"], 2809);
    assert_eq!(p["object_key"]["hex"], "6b657900ff");
    let c = p["components"].as_array().unwrap();
    assert_eq!(c[0]["vendor"], "omniORB");
    assert_eq!(c[1]["name"], "TAG_ALTERNATE_IIOP_ADDRESS");
    assert_eq!(c[1]["host"], "backup.example");
    assert_eq!(c[1]["port"], 9999);
    assert_eq!(c[2]["tag"], 0x1234);
    assert_eq!(c[2]["data_hex"], "010203");
    let human = ok(&["catior", &ior]);
    assert!(
        human.contains("alternate address: backup.example:9999"),
        "{human}"
    );
    assert!(human.contains("ORB type: omniORB"), "{human}");

    // IORs real omniORB and JacORB servers wrote.
    let captured = include_str!("../../corbina-giop/tests/vectors/iors.txt");
    let vendors: Vec<Value> = captured
        .lines()
        .filter(|l| l.starts_with("IOR:"))
        .map(|l| serde_json::from_str::<Value>(&ok(&["catior", "--json", l])).unwrap())
        .map(|v| v["profiles"][0]["components"][0]["vendor"].clone())
        .collect();
    assert!(vendors.contains(&Value::from("omniORB")), "{vendors:?}");
    assert!(vendors.contains(&Value::from("JacORB")), "{vendors:?}");

    // URLs, and garbage.
    let v: Value = serde_json::from_str(&ok(&[
        "catior",
        "--json",
        "corbaname:iiop:1.2@h:5,:g#a%20b/c.d",
    ]))
    .unwrap();
    assert_eq!(v["kind"], "corbaname");
    assert_eq!(v["name"], "a b/c.d");
    assert_eq!(v["addresses"][0]["version"], "1.2");
    assert_eq!(v["addresses"][1]["port"], 2809);
    let loc = ok(&["catior", "corbaloc::h:7/My%20Key"]);
    assert!(loc.contains("object key (6 bytes): My Key"), "{loc}");
    fails(&["catior", "IOR:zz"]);
}

/// An IOR omniORB 4.2.5 wrote for a server listening on `giop:ssl:127.0.0.1:` only
/// (`omni_server_ssl`): port 0 and TAG_SSL_SEC_TRANS with the TLS port.
const OMNIORB_SSL_IOR: &str = "IOR:010000000e00000049444c3a42656e63683a312e30000000010000000000000070000000010102000a0000003132372e302e302e310000000e000000fee0a3066b000073d0000000000000000300000000000000080000000100000000545441010000001c00000001000000010001000100000001000105090101000100000009010100140000000800000001006600660007e5";

#[test]
fn catior_decodes_the_ssl_component() {
    let human = ok(&["catior", OMNIORB_SSL_IOR]);
    assert!(human.contains("port 0"), "{human}");
    assert!(
        human.contains(
            "TAG_SSL_SEC_TRANS: TLS port 58631, target_supports 0x66 \
             (Integrity|Confidentiality|EstablishTrustInTarget|EstablishTrustInClient), \
             target_requires 0x66"
        ),
        "{human}"
    );
    let v: Value = serde_json::from_str(&ok(&["catior", "--json", OMNIORB_SSL_IOR])).unwrap();
    let ssl = &v["profiles"][0]["components"][2];
    assert_eq!(ssl["name"], "TAG_SSL_SEC_TRANS");
    assert_eq!(ssl["port"], 58631);
    assert_eq!(ssl["target_requires"], 0x66);
}

#[test]
fn names_subcommands_against_a_naming_service() {
    let s = service("names");
    let r = s.init_ref.as_str();
    let ior = root_ior(&s);
    let names = |args: &[&str]| {
        let mut v = vec!["names", "-ORBInitRef", r];
        v.extend_from_slice(args);
        v.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let run_ok = |args: &[&str]| {
        let a = names(args);
        ok(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let run_fails = |args: &[&str]| {
        let a = names(args);
        fails(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };

    let made = run_ok(&["mkcontext", "apps.dir"]);
    assert!(made.starts_with("IOR:"), "{made}");
    run_ok(&["mkcontext", "apps.dir/sub"]);
    run_ok(&["bind", "apps.dir/echo.svc", &ior]);
    run_ok(&["bind", "apps.dir/sub/leaf", &s.url]);
    run_ok(&["bind", "top", &ior]);
    assert_eq!(run_ok(&["list"]), "apps.dir/\ntop\n");
    assert_eq!(run_ok(&["list", "apps.dir"]), "echo.svc\nsub/\n");
    assert_eq!(
        run_ok(&["list", "-r"]),
        ".\n├── apps.dir/\n│   ├── echo.svc\n│   └── sub/\n│       └── leaf\n└── top\n"
    );
    assert_eq!(run_ok(&["resolve", "apps.dir/echo.svc"]).trim(), ior);
    let e = run_fails(&["resolve", "apps.dir/nothing/x"]);
    assert!(e.contains("NotFound") && e.contains("nothing/x"), "{e}");
    let e = run_fails(&["bind", "top", &ior]);
    assert!(e.contains("AlreadyBound"), "{e}");
    run_ok(&["rebind", "top", &s.url]);
    assert_ne!(run_ok(&["resolve", "top"]).trim(), ior);
    let e = run_fails(&["rmcontext", "apps.dir/sub"]);
    assert!(e.contains("NotEmpty"), "{e}");
    run_ok(&["unbind", "apps.dir/sub/leaf"]);
    run_ok(&["rmcontext", "apps.dir/sub"]);
    assert_eq!(run_ok(&["list", "apps.dir"]), "echo.svc\n");
    run_ok(&["unbind", "top"]);
    let e = run_fails(&["unbind", "top"]);
    assert!(e.contains("NotFound"), "{e}");
    let e = run_fails(&["resolve", "a//b"]);
    assert!(e.contains("invalid name"), "{e}");
    let e = run_fails(&["bind", "x", "garbage"]);
    assert!(e.contains("garbage: no such file"), "{e}");
    let e = run_fails(&["bind", "x", "IOR:0g"]);
    assert!(e.contains("not a hex digit"), "{e}");

    // A binding with a lease: there, then gone once the TTL has passed.
    let said = run_ok(&["bind", "--ttl", "300ms", "brief", &ior]);
    assert!(said.starts_with("lease "), "{said}");
    assert_eq!(run_ok(&["resolve", "brief"]).trim(), ior);
    std::thread::sleep(std::time::Duration::from_millis(900));
    assert!(run_fails(&["resolve", "brief"]).contains("NotFound"));
    // A bad duration is a usage error (exit 2) naming the option.
    let a = names(&["bind", "--ttl", "soon", "x", &ior]);
    let e = exits(2, &a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(e.contains("--ttl") && e.contains("soon"), "{e}");

    // No naming service there: a clear failure, not a hang.
    let o = corbina(&[
        "names",
        "-ORBInitRef",
        "NameService=corbaloc::127.0.0.1:1/NameService",
        "list",
    ]);
    assert_eq!(o.status.code(), Some(1));
    // Bad usage is exit code 2.
    assert_eq!(corbina(&["names"]).status.code(), Some(2));
    assert_eq!(corbina(&["frobnicate"]).status.code(), Some(2));
}

#[test]
fn ping_reports_reachability_and_round_trips() {
    let s = service("ping");
    let out = ok(&["ping", "--count", "3", &s.url]);
    assert!(out.contains("OBJECT_HERE"), "{out}");
    assert!(out.contains("_non_existent  false  3 calls"), "{out}");
    assert!(out.trim_end().ends_with("reachable"), "{out}");
    let v: Value = serde_json::from_str(&ok(&["ping", "--json", &root_ior(&s)])).unwrap();
    assert_eq!(v["reachable"], true);
    assert_eq!(v["locate"]["status"], "OBJECT_HERE");
    assert_eq!(v["round_trip_ms"].as_array().unwrap().len(), 4);

    // The server is there but the object is not.
    let (host, port) = s.service.endpoint();
    let out = fails(&["ping", &format!("corbaloc::{host}:{port}/NoSuchKey")]);
    assert!(out.contains("UNKNOWN_OBJECT"), "{out}");
    assert!(out.contains("OBJECT_NOT_EXIST"), "{out}");
    // Nothing listening.
    let out = fails(&["ping", "--timeout", "2", "corbaloc::127.0.0.1:1/X"]);
    assert!(out.contains("unreachable"), "{out}");
    // Through the naming service: corbaname resolves first.
    s.service
        .root()
        .bind(
            &[corbina_naming::cos_naming::NameComponent {
                id: "me".into(),
                kind: String::new(),
            }],
            Some(s.service.root().as_object()),
        )
        .unwrap();
    let out = ok(&["ping", &format!("corbaname::{host}:{port}#me")]);
    assert!(out.contains("OBJECT_HERE"), "{out}");
    // An unbound name is named.
    let out = fails(&["ping", &format!("corbaname::{host}:{port}#nobody")]);
    assert!(out.contains("\"nobody\" does not resolve"), "{out}");

    // A server that accepts but never answers: the timeout said as one, and waited once.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    let start = std::time::Instant::now();
    let out = fails(&["ping", "--timeout", "0.5", &format!("corbaloc::{addr}/X")]);
    let took = start.elapsed();
    assert!(out.contains("no answer within 0.5 s"), "{out}");
    assert!(
        took < std::time::Duration::from_millis(950),
        "{took:?}: {out}"
    );
}

/// `corbina events` against an in-process `corbina-events` service: a channel made through
/// the factory by name, events pushed into it reach a `tail` running in another process, and
/// an unreachable channel is a clear failure.
#[test]
fn events_create_push_and_tail_a_channel() {
    let (dir, orb) = loopback_orb("events");
    let service =
        corbina_events::EventService::start(&orb, &corbina_events::Options::new(&dir)).unwrap();
    let (host, port) = service.endpoint();
    let base = format!("corbaloc::{host}:{port}");

    assert!(ok(&["events", "--help"]).contains("Usage: corbina events <COMMAND>"));
    // Each subcommand is described in the top-level help by what it does.
    assert!(ok(&["--help"])
        .contains("events  Create an event channel, push events into one, or tail one"));
    let made = ok(&[
        "events",
        "create",
        "Alarms",
        "--factory",
        &format!("{base}/EventChannelFactory"),
    ]);
    assert!(made.trim().starts_with("IOR:"), "{made}");

    // The tail runs until it has 3 events; pushes go on until it has them (it may connect
    // after the first pushes, which it then does not see).
    let channel = format!("{base}/Alarms");
    let mut tail = Command::new(env!("CARGO_BIN_EXE_corbina"))
        .args(["events", "tail", "--channel", &channel, "--count", "3"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while tail.try_wait().unwrap().is_none() {
        assert!(std::time::Instant::now() < deadline, "tail got no 3 events");
        ok(&["events", "push", "ring ring", "--channel", &channel]);
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = tail.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ring ring\nring ring\nring ring\n"
    );
    ok(&["events", "push", "x", "--count", "2", "--channel", &channel]);

    // Nothing there: exit 1 and why.
    let e = fails(&[
        "events",
        "push",
        "x",
        "--channel",
        "corbaloc::127.0.0.1:1/EventChannel",
    ]);
    assert!(e.contains("corbina events push"), "{e}");
    exits(2, &["events", "push"]);
    drop(service);
    orb.destroy();
}
