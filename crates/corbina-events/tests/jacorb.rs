//! Interop with JacORB 3.9 (`org.jacorb:jacorb-services` from Maven): JacORB's event
//! clients (`peers/jacorb-events/src/EventsPeer.java`: a push supplier, a push consumer, a
//! pull consumer) on Corbina's daemon, and Corbina's clients on JacORB's own
//! `EventChannelImpl`; JacORB's structured notification clients (`NotifyPeer.java`: a
//! supplier, a consumer with a filter) on Corbina's notification channel, and Corbina's
//! notification clients on JacORB's notification service (`org.jacorb.notification.
//! ConsoleMain`); the same both ways for structured pull consumers and suppliers and
//! sequence (`EventBatch`) push and pull clients. Skipped, with a note, without Java and Maven (a failure under
//! `REQUIRE_OMNIORB_PEERS`).

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::OnceLock;
use std::time::Duration;

use common::notify::*;
use common::*;
use corbina::Any;
use corbina_events::cos_event_channel_admin::EventChannel as CosEventChannel;
use corbina_events::cos_notification::StructuredEvent;
use corbina_events::cos_notify_channel_admin::{
    ClientType, EventChannel, EventChannelFactory, SequenceProxyPullConsumer,
    SequenceProxyPushConsumer, StructuredProxyPullConsumer, StructuredProxyPushConsumer,
    StructuredProxyPushSupplier,
};
use corbina_events::cos_notify_comm::{
    SequencePullSupplier, SequencePullSupplierSkeleton, StructuredPullSupplier,
    StructuredPullSupplierSkeleton,
};
use corbina_events::cos_notify_filter::ConstraintExp;
use corbina_testpeers::{
    jacorb_tools_installed, output_root, repo_root, skip_unless, PeerProcess, IOR_TIMEOUT,
    JACORB_JVM_ARGS,
};

const WAIT: Duration = Duration::from_secs(30);

/// Builds `peers/jacorb-events` once per process; its classpath, or `None` (with a note)
/// without Java and Maven.
fn classpath() -> Option<&'static str> {
    static CP: OnceLock<Option<String>> = OnceLock::new();
    CP.get_or_init(|| {
        if !skip_unless(
            jacorb_tools_installed(),
            "JacORB event interop",
            "Java and Maven (default-jdk-headless, maven) are not installed",
        ) {
            return None;
        }
        let out = output_root().join("jacorb-events");
        let o = Command::new("make")
            .arg("-s")
            .arg("-C")
            .arg(repo_root().join("peers/jacorb-events"))
            .arg(format!("B={}", out.display()))
            .output()
            .expect("make runs");
        assert!(
            o.status.success(),
            "building peers/jacorb-events failed:\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        Some(
            std::fs::read_to_string(out.join("classpath"))
                .unwrap()
                .trim()
                .to_owned(),
        )
    })
    .as_deref()
}

/// A running `EventsPeer` and the lines it prints.
struct Peer {
    process: PeerProcess,
    lines: Receiver<String>,
}

impl Peer {
    fn start(cp: &str, args: &[&str]) -> Peer {
        Peer::run(cp, "EventsPeer", args)
    }

    /// Runs the Java class `main` of the classpath with `args`.
    fn run(cp: &str, main: &str, args: &[&str]) -> Peer {
        let mut process = PeerProcess::spawn(
            "JacORB peer",
            Command::new("java")
                .args(JACORB_JVM_ARGS)
                .arg("-cp")
                .arg(cp)
                .arg(main)
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::piped()),
        );
        let stdout = process.child_mut().stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Peer { process, lines }
    }

    /// The lines up to (without) `last`; panics, with the peer's stderr, on a timeout.
    fn until(&self, last: &str) -> Vec<String> {
        let mut got = Vec::new();
        loop {
            match self.lines.recv_timeout(WAIT) {
                Ok(l) if l == last => return got,
                Ok(l) => got.push(l),
                Err(e) => panic!(
                    "EventsPeer: no {last:?} ({e}) after {got:?}; its stderr:\n{}",
                    self.process.stderr()
                ),
            }
        }
    }
}

/// What `EventsPeer` prints for its event `i`.
fn jacorb_line(i: usize) -> String {
    if i.is_multiple_of(2) {
        format!("long {i}")
    } else {
        format!("string jacorb {i}")
    }
}

/// The same, of an event a Corbina consumer received.
fn show(a: &Any) -> String {
    match (a.to_long(), a.to_string_value()) {
        (Some(l), _) => format!("long {l}"),
        (_, Some(s)) => format!("string {s}"),
        _ => format!("{a:?}"),
    }
}

#[test]
fn event_jacorb_clients_on_corbina_daemon() {
    let Some(cp) = classpath() else { return };
    let port = free_port();
    let dir = temp_dir("jacorb-clients");
    let (_daemon, _) = start_daemon(port, &dir, &[]);
    let url = format!("corbaloc::127.0.0.1:{port}/EventChannel");
    const N: usize = 40;
    let n = N.to_string();
    let consumer = Peer::start(cp, &["consume", &url, &n]);
    let puller = Peer::start(cp, &["pull", &url, &n]);
    assert!(consumer.until("ready").is_empty());
    assert!(puller.until("ready").is_empty());
    // And a Corbina consumer beside them.
    let client = client_orb();
    let got = collector_on(&client, &channel_at(&client, &url), Duration::ZERO);

    let supplier = Peer::start(cp, &["supply", &url, &n]);
    assert_eq!(supplier.until("done"), [format!("pushed {N}")]);
    let want: Vec<String> = (0..N).map(jacorb_line).collect();
    assert_eq!(consumer.until("done"), want);
    assert_eq!(puller.until("done"), want);
    let corbina: Vec<String> = got.wait_for(N, WAIT).iter().map(show).collect();
    assert_eq!(corbina, want);
    client.destroy();
    let _ = std::fs::remove_dir_all(&dir);
}

fn wait_ior(p: &mut PeerProcess, file: &Path) -> String {
    p.wait_for_ior_file(file, IOR_TIMEOUT)
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn event_corbina_clients_on_jacorb_channel() {
    let Some(cp) = classpath() else { return };
    let dir: PathBuf = temp_dir("jacorb-channel");
    std::fs::create_dir_all(&dir).unwrap();
    let ior_file = dir.join("channel.ior");
    let mut server = Peer::start(cp, &["serve", ior_file.to_str().unwrap()]);
    let ior = wait_ior(&mut server.process, &ior_file);
    let client = client_orb();
    let ch = channel_at(&client, &ior);
    let got = collector_on(&client, &ch, Duration::ZERO);
    let pull = puller(&ch);
    let sup = supplier(&ch);
    let sent: Vec<Any> = (0..20)
        .map(|i| {
            if i % 2 == 0 {
                Any::from_long(i)
            } else {
                Any::from_string(&format!("corbina {i}")).unwrap()
            }
        })
        .collect();
    for e in &sent {
        sup.push(e).unwrap();
    }
    let want: Vec<String> = sent.iter().map(show).collect();
    let pushed: Vec<String> = got.wait_for(20, WAIT).iter().map(show).collect();
    assert_eq!(pushed, want);
    let pulled: Vec<String> = (0..20).map(|_| show(&pull.pull().unwrap())).collect();
    assert_eq!(pulled, want);
    client.destroy();
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn event_jacorb_filter_client_on_corbina_filter_factory() {
    let Some(cp) = classpath() else { return };
    let port = free_port();
    let dir = temp_dir("jacorb-filter");
    let (_daemon, _) = start_daemon(port, &dir, &[]);
    let url = format!("corbaloc::127.0.0.1:{port}/FilterFactory");
    let peer = Peer::start(cp, &["filter", &url]);
    // Alarm priority 5: yes; 3: no; a Fault: no; Alarm 4: yes; any 11: yes; any 10: no.
    assert_eq!(
        peer.until("done"),
        ["true", "false", "false", "true", "true", "false"].map(|m| format!("match {m}"))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// What `NotifyPeer` prints for its structured event `i`.
fn notify_line(i: usize) -> String {
    let t = if i.is_multiple_of(2) {
        "Alarm"
    } else {
        "Fault"
    };
    format!("Telecom/{t} jacorb {i} p={i}")
}

#[test]
fn notify_jacorb_structured_clients_on_corbina_channel() {
    let Some(cp) = classpath() else { return };
    let port = free_port();
    let dir = temp_dir("jacorb-notify-clients");
    let (_daemon, _) = start_daemon(port, &dir, &[]);
    let client = client_orb();
    let factory = notify_factory_at(&client, port);
    let ch = factory.create_channel(&[], &[]).unwrap().0.unwrap();
    let ior = client.object_to_string(ch.as_object()).unwrap();
    // JacORB's consumer filters on its proxy with Corbina's filter factory: the alarms of
    // priority 4 and more.
    let consumer = Peer::run(
        cp,
        "NotifyPeer",
        &[
            "consume",
            &ior,
            "8",
            "$type_name == 'Alarm' and $.header.variable_header(Priority) >= 4",
        ],
    );
    assert!(consumer.until("ready").is_empty());
    // A Corbina structured consumer and a CosEvent `any` consumer beside it, unfiltered.
    let (c, got) = structured_consumer(&client);
    let (p, _) = ch
        .get_default_consumer_admin()
        .unwrap()
        .unwrap()
        .obtain_notification_push_supplier(ClientType::StructuredEvent)
        .unwrap();
    StructuredProxyPushSupplier::narrow(p.unwrap().as_object())
        .unwrap()
        .connect_structured_push_consumer(Some(&c))
        .unwrap();
    let anys = collector_on(
        &client,
        &CosEventChannel::narrow(ch.as_object()).unwrap(),
        Duration::ZERO,
    );

    const N: usize = 20;
    let supplier = Peer::run(cp, "NotifyPeer", &["supply", &ior, &N.to_string()]);
    assert_eq!(supplier.until("done"), [format!("pushed {N}")]);
    let want: Vec<String> = (4..N).step_by(2).map(notify_line).collect();
    assert_eq!(consumer.until("done"), want);
    let names: Vec<String> = (0..N).map(|i| format!("jacorb {i}")).collect();
    assert_eq!(got.names(N), names);
    let from_any: Vec<String> = anys
        .wait_for(N, WAIT)
        .iter()
        .map(|a| {
            a.extract::<StructuredEvent>()
                .expect("a StructuredEvent in the any")
                .header
                .fixed_header
                .event_name
        })
        .collect();
    assert_eq!(from_any, names);
    client.destroy();
    let _ = std::fs::remove_dir_all(&dir);
}

/// JacORB's notification service (`ConsoleMain`) on a port of its own; its factory's IOR.
fn jacorb_notification_service(cp: &str, dir: &Path) -> (Peer, String) {
    std::fs::create_dir_all(dir).unwrap();
    let ior_file = dir.join("factory.ior");
    let port = free_port().to_string();
    let mut service = Peer::run(
        cp,
        "org.jacorb.notification.ConsoleMain",
        &["-port", &port, "-writeIOR", ior_file.to_str().unwrap()],
    );
    let ior = wait_ior(&mut service.process, &ior_file);
    (service, ior)
}

#[test]
fn notify_corbina_clients_on_jacorb_notification_service() {
    let Some(cp) = classpath() else { return };
    let dir = temp_dir("jacorb-notify-service");
    let (service, ior) = jacorb_notification_service(cp, &dir);
    let client = client_orb();
    let factory = EventChannelFactory::narrow(&client.string_to_object(&ior).unwrap()).unwrap();
    let (ch, id) = factory.create_channel(&[], &[]).unwrap();
    let ch: EventChannel = ch.unwrap();
    assert!(factory.get_all_channels().unwrap().contains(&id));

    // A structured consumer whose proxy has a filter from JacORB's filter factory.
    let ff = ch.get_default_filter_factory().unwrap().unwrap();
    let f = ff.create_filter("EXTENDED_TCL").unwrap().unwrap();
    f.add_constraints(&[ConstraintExp {
        event_types: vec![et("Telecom", "Alarm")],
        constraint_expr: "$severity > 2".into(),
    }])
    .unwrap();
    let admin = ch.get_default_consumer_admin().unwrap().unwrap();
    let (p, _) = admin
        .obtain_notification_push_supplier(ClientType::StructuredEvent)
        .unwrap();
    let filtered = StructuredProxyPushSupplier::narrow(p.unwrap().as_object()).unwrap();
    filtered.add_filter(Some(&f)).unwrap();
    let (c, got) = structured_consumer(&client);
    filtered.connect_structured_push_consumer(Some(&c)).unwrap();
    // A sequence consumer without a filter.
    let (p, _) = admin
        .obtain_notification_push_supplier(ClientType::SequenceEvent)
        .unwrap();
    let seq = corbina_events::cos_notify_channel_admin::SequenceProxyPushSupplier::narrow(
        p.unwrap().as_object(),
    )
    .unwrap();
    let (sc, seq_got) = sequence_consumer(&client);
    seq.connect_sequence_push_consumer(Some(&sc)).unwrap();

    // Corbina's structured supplier.
    let (p, _) = ch
        .get_default_supplier_admin()
        .unwrap()
        .unwrap()
        .obtain_notification_push_consumer(ClientType::StructuredEvent)
        .unwrap();
    let sup = StructuredProxyPushConsumer::narrow(p.unwrap().as_object()).unwrap();
    sup.connect_structured_push_supplier(None).unwrap();
    for (i, t) in ["Alarm", "Fault", "Alarm", "Alarm", "Fault", "Alarm"]
        .into_iter()
        .enumerate()
    {
        sup.push_structured_event(&event(t, &format!("corbina {i}"), i as i16))
            .unwrap();
    }
    // And an `any` through the CosEvent interface: a structured consumer sees %ANY.
    supplier(&CosEventChannel::narrow(ch.as_object()).unwrap())
        .push(&Any::from_long(77))
        .unwrap();
    // JacORB's channel delivers in no particular order (its pushes run on a thread
    // pool): compare what arrived, sorted.
    let mut filtered = got.names(2);
    filtered.sort();
    assert_eq!(filtered, ["corbina 3", "corbina 5"]);
    let all = seq_got.wait_for(7, WAIT);
    let (anys, structured): (Vec<_>, Vec<_>) = all
        .iter()
        .partition(|e| e.header.fixed_header.event_type.type_name == "%ANY");
    let mut names: Vec<&str> = structured
        .iter()
        .map(|e| e.header.fixed_header.event_name.as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "corbina 0",
            "corbina 1",
            "corbina 2",
            "corbina 3",
            "corbina 4",
            "corbina 5"
        ]
    );
    assert_eq!(anys.len(), 1);
    assert_eq!(anys[0].remainder_of_body.to_long(), Some(77));
    client.destroy();
    drop(service);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn notify_jacorb_pull_and_sequence_clients_on_corbina_channel() {
    let Some(cp) = classpath() else { return };
    let port = free_port();
    let dir = temp_dir("jacorb-notify-pull-seq");
    let (_daemon, _) = start_daemon(port, &dir, &[]);
    let client = client_orb();
    let ch = notify_factory_at(&client, port)
        .create_channel(&[], &[])
        .unwrap()
        .0
        .unwrap();
    let ior = client.object_to_string(ch.as_object()).unwrap();
    // JacORB's sequence supplier pushes N in batches of 3, then its pull supplier is
    // pulled for N more: each consumer sees both runs, in order.
    const N: usize = 10;
    let total = (2 * N).to_string();
    let consumers: Vec<Peer> = ["pull", "pull-seq", "consume-seq"]
        .into_iter()
        .map(|mode| Peer::run(cp, "NotifyPeer", &[mode, &ior, &total]))
        .collect();
    for c in &consumers {
        assert!(c.until("ready").is_empty());
    }
    let n = N.to_string();
    let seq = Peer::run(cp, "NotifyPeer", &["supply-seq", &ior, &n, "3"]);
    assert_eq!(seq.until("done"), [format!("pushed {N}")]);
    let pulled = Peer::run(cp, "NotifyPeer", &["pull-supply", &ior, &n]);
    assert_eq!(pulled.until("done"), [format!("pulled {N}")]);
    let want: Vec<String> = (0..N).chain(0..N).map(notify_line).collect();
    for c in &consumers {
        assert_eq!(c.until("done"), want);
    }
    client.destroy();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn notify_corbina_pull_and_sequence_clients_on_jacorb_notification_service() {
    let Some(cp) = classpath() else { return };
    let dir = temp_dir("jacorb-notify-pull-seq-service");
    let (service, ior) = jacorb_notification_service(cp, &dir);
    let client = client_orb();
    let factory = EventChannelFactory::narrow(&client.string_to_object(&ior).unwrap()).unwrap();
    let ch: EventChannel = factory.create_channel(&[], &[]).unwrap().0.unwrap();

    // Corbina's structured and sequence pull consumers.
    let (structured, sequence) = pull_suppliers(&ch.get_default_consumer_admin().unwrap().unwrap());
    structured.connect_structured_pull_consumer(None).unwrap();
    sequence.connect_sequence_pull_consumer(None).unwrap();

    // Corbina's sequence push supplier, then structured and sequence pull suppliers
    // JacORB pulls from.
    let sadmin = ch.get_default_supplier_admin().unwrap().unwrap();
    let (p, _) = sadmin
        .obtain_notification_push_consumer(ClientType::SequenceEvent)
        .unwrap();
    let seq_sup = SequenceProxyPushConsumer::narrow(p.unwrap().as_object()).unwrap();
    seq_sup.connect_sequence_push_supplier(None).unwrap();
    let batch = |r: std::ops::Range<usize>| -> Vec<StructuredEvent> {
        r.map(|i| event("Alarm", &format!("seq {i}"), i as i16))
            .collect()
    };
    seq_sup.push_structured_events(&batch(0..4)).unwrap();
    seq_sup.push_structured_events(&batch(4..6)).unwrap();
    let (p, _) = sadmin
        .obtain_notification_pull_consumer(ClientType::StructuredEvent)
        .unwrap();
    let pull_sup = StructuredProxyPullConsumer::narrow(p.unwrap().as_object()).unwrap();
    let r = serve(
        &client,
        StructuredPullSupplierSkeleton::new(source(&["p0", "p1", "p2"])),
    );
    pull_sup
        .connect_structured_pull_supplier(Some(&StructuredPullSupplier::unchecked_narrow(&r)))
        .unwrap();

    let (p, _) = sadmin
        .obtain_notification_pull_consumer(ClientType::SequenceEvent)
        .unwrap();
    let seq_pull_sup = SequenceProxyPullConsumer::narrow(p.unwrap().as_object()).unwrap();
    let r = serve(
        &client,
        SequencePullSupplierSkeleton::new(source(&["q0", "q1"])),
    );
    seq_pull_sup
        .connect_sequence_pull_supplier(Some(&SequencePullSupplier::unchecked_narrow(&r)))
        .unwrap();

    let mut want: Vec<String> = (0..6).map(|i| format!("seq {i}")).collect();
    want.extend(["p0", "p1", "p2", "q0", "q1"].map(String::from));
    want.sort();
    // JacORB delivers in no particular order: compare sorted.
    let mut from_structured: Vec<String> = (0..want.len())
        .map(|_| {
            structured
                .pull_structured_event()
                .unwrap()
                .header
                .fixed_header
                .event_name
        })
        .collect();
    from_structured.sort();
    assert_eq!(from_structured, want);
    let mut from_sequence = Vec::new();
    while from_sequence.len() < want.len() {
        let got = sequence.pull_structured_events(4).unwrap();
        assert!(
            !got.is_empty() && got.len() <= 4,
            "a batch of {}",
            got.len()
        );
        from_sequence.extend(got.into_iter().map(|e| e.header.fixed_header.event_name));
    }
    from_sequence.sort();
    assert_eq!(from_sequence, want);
    assert!(!structured.try_pull_structured_event().unwrap().1);
    pull_sup.disconnect_structured_pull_consumer().unwrap();
    seq_pull_sup.disconnect_sequence_pull_consumer().unwrap();
    client.destroy();
    drop(service);
    let _ = std::fs::remove_dir_all(&dir);
}
