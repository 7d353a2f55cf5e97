//! `tracing` spans of requests (`corbina::trace`): one per request on each side, with its
//! fields and outcome, and connection events. Its own test binary: it installs a
//! process-wide subscriber.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use corbina::giop::connection::{Event as GiopEvent, GiopConnection, Role, Settings};
use corbina::giop::target_address::TargetAddress;
use corbina::giop::{LocateStatus, ObjectKey, Version};
use corbina::{CompletionStatus, Orb, OrbConfig, Servant, ServerRequest};
use corbina::{SystemException, SystemExceptionKind};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A span or event: its name (the message, for events) and fields.
#[derive(Debug, Clone, Default)]
struct Seen {
    name: String,
    target: String,
    fields: HashMap<String, String>,
    /// The span an event belongs to (its id).
    parent: Option<u64>,
}

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(
            field.name().to_owned(),
            format!("{value:?}").replace('"', ""),
        );
    }
}

/// Keeps every span (by id) and event.
#[derive(Clone, Default)]
struct Capture {
    next: Arc<AtomicU64>,
    spans: Arc<Mutex<HashMap<u64, Seen>>>,
    events: Arc<Mutex<Vec<Seen>>>,
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut seen = Seen {
            name: attrs.metadata().name().to_owned(),
            target: attrs.metadata().target().to_owned(),
            ..Seen::default()
        };
        attrs.record(&mut Fields(&mut seen.fields));
        self.spans.lock().unwrap().insert(id, seen);
        Id::from_u64(id)
    }
    fn record(&self, id: &Id, values: &Record<'_>) {
        if let Some(s) = self.spans.lock().unwrap().get_mut(&id.into_u64()) {
            values.record(&mut Fields(&mut s.fields));
        }
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut seen = Seen {
            target: event.metadata().target().to_owned(),
            parent: event.parent().map(Id::into_u64),
            ..Seen::default()
        };
        event.record(&mut Fields(&mut seen.fields));
        seen.name = seen.fields.remove("message").unwrap_or_default();
        self.events.lock().unwrap().push(seen);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// `void ping()`, `void deny()` (NO_PERMISSION, minor 77), `oops` (a user exception).
struct Target;

impl Servant for Target {
    fn primary_interface(&self) -> &'static str {
        "IDL:Test/Target:1.0"
    }
    fn is_a(&self, id: &str) -> bool {
        id == "IDL:Test/Target:1.0"
    }
    fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        match req.operation() {
            "deny" => Err(SystemException::new(SystemExceptionKind::NoPermission, 77)
                .completed(CompletionStatus::No)),
            "oops" => req.reply_user_exception(|w| w.write_string("IDL:Test/Oops:1.0")),
            "slow" => {
                std::thread::sleep(std::time::Duration::from_millis(200));
                req.reply(|_| Ok(()))
            }
            _ => req.reply(|_| Ok(())),
        }
    }
}

fn call(obj: &corbina::ObjectRef, op: &str) -> Result<(), SystemException> {
    obj.invoke(op, |_| Ok(()), |_| Ok(()), corbina::no_user)
}

#[test]
fn requests_have_spans_with_their_outcome_on_both_sides() {
    let capture = Capture::default();
    tracing::subscriber::set_global_default(capture.clone()).unwrap();

    // Without asking for spans: no request spans (the uninstrumented path).
    let plain = Orb::with_config(
        OrbConfig::default()
            .direct_collocation(false)
            .call_timeout(std::time::Duration::from_millis(50)),
    );
    let poa = plain.root_poa();
    poa.the_poa_manager().activate().unwrap();
    let servant: Arc<dyn Servant> = Arc::new(Target);
    poa.activate_object(servant.clone()).unwrap();
    let obj = poa.servant_to_reference(&servant).unwrap();
    call(&obj, "ping").unwrap();
    let timeout = call(&obj, "slow").unwrap_err();
    assert_eq!(timeout.kind, SystemExceptionKind::Timeout);
    assert!(capture.spans.lock().unwrap().is_empty());
    let events = capture.events.lock().unwrap().clone();
    assert!(
        events
            .iter()
            .any(|e| e.target == "corbina::connection" && e.name == "connection opened"),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| e.target == "corbina::connection" && e.name == "connection accepted"),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| e.name == "call failed"
            && e.fields
                .get("error")
                .is_some_and(|m| m.contains("timed out"))),
        "{events:?}"
    );
    plain.destroy();

    let orb = Orb::with_config(OrbConfig::default().request_spans(true));
    let poa = orb.root_poa();
    poa.the_poa_manager().activate().unwrap();
    poa.activate_object(servant.clone()).unwrap();
    let obj = poa.servant_to_reference(&servant).unwrap();
    let port = obj.ior().iiop_profiles().unwrap()[0].port;
    call(&obj, "ping").unwrap();
    let denied = call(&obj, "deny").unwrap_err();
    assert_eq!(denied.kind, SystemExceptionKind::NoPermission);
    let oops: Result<(), SystemException> = obj.invoke(
        "oops",
        |_| Ok(()),
        |_| Ok(()),
        |_, _| Ok(Some(SystemException::new(SystemExceptionKind::Unknown, 0))),
    );
    assert!(oops.is_err());
    // LocateRequests are answered with an event each (omniORB clients send them).
    let key = obj.ior().iiop_profiles().unwrap()[0]
        .object_key
        .as_bytes()
        .to_vec();
    assert_eq!(locate(port, &key), LocateStatus::ObjectHere);
    let mut gone = key.clone();
    *gone.last_mut().unwrap() ^= 0xff;
    assert_eq!(locate(port, &gone), LocateStatus::UnknownObject);
    orb.destroy();

    let spans = capture.spans.lock().unwrap().clone();
    let find = |name: &str, op: &str| -> Seen {
        spans
            .values()
            .find(|s| s.name == name && s.fields.get("operation").map(String::as_str) == Some(op))
            .unwrap_or_else(|| panic!("no {name} span for {op}: {spans:?}"))
            .clone()
    };
    for side in ["corbina.client", "corbina.server"] {
        let ping = find(side, "ping");
        assert_eq!(ping.target, "corbina::request");
        assert_eq!(ping.fields["outcome"], "SUCCESSFUL", "{ping:?}");
        assert_eq!(ping.fields["giop_version"], "1.2");
        assert_eq!(ping.fields["transport"], "tcp");
        assert!(ping.fields.contains_key("request_id"));
        // The key as omniORB prints its own: the POA, then the object id.
        let key = &ping.fields["object_key"];
        assert!(key.starts_with("RootPOA<") && key.ends_with('>'), "{key}");
        let deny = find(side, "deny");
        assert_eq!(deny.fields["outcome"], "SYSTEM_EXCEPTION");
        assert_eq!(
            deny.fields["exception"],
            "IDL:omg.org/CORBA/NO_PERMISSION:1.0"
        );
        assert_eq!(deny.fields["minor"], "0x4d");
        let oops = find(side, "oops");
        assert_eq!(oops.fields["outcome"], "USER_EXCEPTION");
        assert_eq!(oops.fields["exception"], "IDL:Test/Oops:1.0");
    }
    // The client's peer is the server's endpoint; the server's is the client's address.
    assert!(find("corbina.client", "ping").fields["peer"].ends_with(&format!(":{port}")));
    let server = find("corbina.server", "ping");
    assert!(server.fields["peer"].contains(":"), "{server:?}");

    // Each request's end is an event in its span.
    let events = capture.events.lock().unwrap().clone();
    let ends = events
        .iter()
        .filter(|e| e.name == "request ended" && e.parent.is_some())
        .count();
    assert_eq!(ends, 6, "{events:?}");
    let located: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e.name == "LocateRequest answered" && e.target == "corbina::request")
        .map(|e| (e.fields["status"].as_str(), e.fields["object_key"].as_str()))
        .collect();
    let key = find("corbina.server", "ping").fields["object_key"].clone();
    assert_eq!(located.len(), 2, "{events:?}");
    assert_eq!(located[0], ("OBJECT_HERE", key.as_str()));
    assert_eq!(located[1].0, "UNKNOWN_OBJECT");
}

/// A GIOP 1.2 LocateRequest for `key` to 127.0.0.1:`port`, on a connection of its own.
fn locate(port: u16, key: &[u8]) -> LocateStatus {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let mut conn = GiopConnection::new(Settings::new(Role::Client));
    let target = TargetAddress::Key(ObjectKey::new(key.to_vec()));
    let (msg, _) = conn.locate_request(Version::V1_2, &target).unwrap();
    s.write_all(&msg).unwrap();
    loop {
        if let Some(e) = conn.poll_event().unwrap() {
            match e {
                GiopEvent::LocateReply { header, .. } => return header.locate_status,
                other => panic!("{other:?}"),
            }
        }
        let n = s.read(conn.read_buf()).unwrap();
        assert!(n > 0, "the server closed the connection");
        conn.commit(n);
    }
}
