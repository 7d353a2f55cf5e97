//! Interop with omniEvents (Debian's `omnievents`, an omniORB event service):
//!
//! - Corbina suppliers and consumers on omniEvents' channel, made through omniEvents'
//!   factory by Corbina's `EventChannelFactory` stub;
//! - omniEvents' own omniORB clients on Corbina's daemon: `eventc` creates a channel
//!   through Corbina's factory, `events` consumes from it (an omniORB push consumer) and
//!   plays the recording back into Corbina's default channel (an omniORB push supplier);
//! - `eventf` federating the two services both ways: omniEvents pushes into Corbina's
//!   `ProxyPushConsumer` and Corbina into omniEvents'.
//!
//! Skipped, with a note, without the package (a failure under `REQUIRE_OMNIORB_PEERS`).

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use corbina::Any;
use corbina_events::cos_event_channel_admin::EventChannel;
use corbina_events::cos_life_cycle::NameValuePair;
use corbina_events::cos_naming::NameComponent;
use corbina_events::omni_events::EventChannelFactory;
use corbina_testpeers::{have_path, PeerProcess};

const WAIT: Duration = Duration::from_secs(10);
/// Pushed until `events` records; 7 characters (see [`event`]).
const MARKER: &str = "markers";

fn have_omnievents() -> bool {
    have_path(
        "/usr/sbin/omniEvents",
        "omniEvents interop",
        "omnievents (Debian package)",
    )
}

/// omniORB programs publish the loopback address, not the machine's.
fn omni_command(program: &str) -> Command {
    let mut c = Command::new(program);
    c.env("OMNIORB_USEHOSTNAME", "127.0.0.1");
    c
}

/// Starts omniEvents in the foreground on `port` with its state in `dir`; waits until it
/// accepts connections.
fn start_omnievents(port: u16, dir: &Path) -> PeerProcess {
    std::fs::create_dir_all(dir).unwrap();
    let mut p = PeerProcess::spawn(
        "omniEvents",
        omni_command("/usr/sbin/omniEvents")
            .args(["-f", "-p", &port.to_string(), "-l"])
            .arg(dir)
            .stdout(Stdio::null()),
    );
    let up = wait_until(WAIT, || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(up, "omniEvents did not listen; its stderr:\n{}", p.stderr());
    let _ = p.child_mut().id();
    p
}

fn channel_key() -> [NameComponent; 1] {
    [NameComponent {
        id: "EventChannel".into(),
        kind: "object interface".into(),
    }]
}

/// Creates a channel named `ins` through the factory at `url`.
fn create_channel(orb: &corbina::Orb, url: &str, ins: &str) -> EventChannel {
    // omniEvents listens a moment before its factory is activated (OBJECT_NOT_EXIST then).
    let obj = orb.string_to_object(url).unwrap();
    let mut factory = None;
    let up = wait_until(WAIT, || {
        factory = EventChannelFactory::narrow(&obj).ok();
        factory.is_some()
    });
    assert!(up, "no factory at {url}");
    let factory = factory.unwrap();
    assert!(factory.supports(&channel_key()).unwrap());
    let obj = factory
        .create_object(
            &channel_key(),
            &[NameValuePair {
                name: "InsName".into(),
                value: Any::from_string(ins).unwrap(),
            }],
        )
        .unwrap()
        .unwrap();
    EventChannel::narrow(&obj).unwrap()
}

/// A mix of event types: longs, strings, a nested any. `events` writes its records back to
/// back without padding and `events -s` reads them as if each started 4-aligned, so every
/// record here is a multiple of 4 bytes long (strings of 7 characters and their NUL).
fn event(i: i32) -> Any {
    match i % 3 {
        0 => Any::from_long(i),
        1 => Any::from_string(&format!("ev{i:05}")).unwrap(),
        _ => Any::from_any(&Any::from_long(i)).unwrap(),
    }
}

fn same(a: &Any, b: &Any) -> bool {
    a.type_code().equal(b.type_code()) && a.value_bytes() == b.value_bytes()
}

#[test]
fn event_corbina_clients_on_omnievents_channel() {
    if !have_omnievents() {
        return;
    }
    let port = free_port();
    let dir = temp_dir("omnievents-clients");
    let _omni = start_omnievents(port, &dir.join("state"));
    let client = client_orb();
    let ch = create_channel(
        &client,
        &format!("corbaloc::127.0.0.1:{port}/omniEvents"),
        "CorbinaClients",
    );
    // Corbina push and pull consumers...
    let got = collector_on(&client, &ch, Duration::ZERO);
    let pull_proxy = puller(&ch);
    // ... and a push supplier, reaching the channel by its InsName.
    let by_name = channel_at(
        &client,
        &format!("corbaloc::127.0.0.1:{port}/CorbinaClients"),
    );
    let sup = by_name
        .for_suppliers()
        .unwrap()
        .unwrap()
        .obtain_push_consumer()
        .unwrap()
        .unwrap();
    // Connected with a reference this time, to hear of the channel's destruction.
    let (supplier_ref, supplier_told) = push_supplier(&client);
    sup.connect_push_supplier(Some(&supplier_ref)).unwrap();
    let sent: Vec<Any> = (0..30).map(event).collect();
    for e in &sent {
        sup.push(e).unwrap();
    }
    let pushed = got.wait_for(30, WAIT);
    assert_eq!(pushed.len(), 30);
    for (a, b) in pushed.iter().zip(&sent) {
        assert!(same(a, b), "{a:?} != {b:?}");
    }
    for e in &sent {
        assert!(same(&pull_proxy.pull().unwrap(), e));
    }

    // A Corbina pull supplier, pulled by omniEvents.
    let (pull_sup, _) = pull_supplier(&client, 5);
    pull_from(&ch, &pull_sup);
    let all = got.wait_for(35, WAIT);
    assert_eq!(longs(&all[30..]), [0, 1, 2, 3, 4]);

    // Destroying omniEvents' channel tells Corbina's consumer and supplier.
    ch.destroy().unwrap();
    assert!(
        wait_until(WAIT, || got.disconnected() && supplier_told.count() == 1),
        "consumer told: {}, supplier told: {}",
        got.disconnected(),
        supplier_told.count()
    );
    client.destroy();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs an omniEvents tool to completion; returns its stdout.
fn run_tool(program: &str, args: &[&str]) -> String {
    let out = omni_command(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn event_omnievents_tools_on_corbina_daemon() {
    if !have_omnievents() {
        return;
    }
    let port = free_port();
    let dir = temp_dir("omnievents-tools");
    let (_daemon, _) = start_daemon(port, &dir.join("store"), &[]);
    let url = |key: &str| format!("corbaloc::127.0.0.1:{port}/{key}");
    // eventc creates a channel through Corbina's factory and prints its IOR.
    let ior = run_tool(
        "/usr/bin/eventc",
        &["-i", "Recorded", "-v", &url("EventChannelFactory")],
    );
    assert!(ior.trim().starts_with("IOR:"), "{ior}");
    let client = client_orb();
    let recorded = channel_at(&client, ior.trim());

    // events records what Corbina's channel pushes to it (an omniORB push consumer).
    let rec_file = dir.join("events.dat");
    let mut recorder = PeerProcess::spawn(
        "events",
        omni_command("/usr/bin/events")
            .arg(url("Recorded"))
            .stdout(std::fs::File::create(&rec_file).unwrap()),
    );
    // Wait for the recorder to connect: it is connected when the channel delivers to it,
    // so push a marker until the file grows.
    let sup = supplier(&recorded);
    // A probe through the channel: a pull consumer sees what the recorder sees.
    let probe = puller(&recorded);
    let connected = wait_until(WAIT, || {
        sup.push(&Any::from_string(MARKER).unwrap()).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        std::fs::metadata(&rec_file)
            .map(|m| m.len() > 0)
            .unwrap_or(false)
    });
    assert!(
        connected,
        "events did not record; its stderr:\n{}",
        recorder.stderr()
    );
    while let (_, true) = probe.try_pull().unwrap() {}
    let sent: Vec<Any> = (0..20).map(event).collect();
    for e in &sent {
        sup.push(e).unwrap();
    }
    // The probe got them all, so the recorder's queue holds them; give it time to write.
    for e in &sent {
        assert!(same(&probe.pull().unwrap(), e));
    }
    let size_settled = wait_until(WAIT, || {
        let a = std::fs::metadata(&rec_file).unwrap().len();
        std::thread::sleep(Duration::from_millis(300));
        a == std::fs::metadata(&rec_file).unwrap().len()
    });
    assert!(size_settled);
    recorder.kill();

    // events -s plays the recording into Corbina's default channel (an omniORB push
    // supplier): a Corbina consumer gets the same events, the markers first.
    let got = collector_on(
        &client,
        &channel_at(&client, &url("EventChannel")),
        Duration::ZERO,
    );
    let out = omni_command("/usr/bin/events")
        .args(["-s", &url("EventChannel")])
        .stdin(std::fs::File::open(&rec_file).unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "events -s: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let played = wait_until(WAIT, || {
        let g = got.events.lock().unwrap();
        g.len() >= sent.len()
            && g[g.len() - sent.len()..]
                .iter()
                .zip(&sent)
                .all(|(a, b)| same(a, b))
    });
    let g = got.events.lock().unwrap();
    assert!(
        played,
        "played back {} events: {:?}",
        g.len(),
        &g[..g.len().min(25)]
    );
    let markers = g.len() - sent.len();
    assert!(markers >= 1);
    assert!(g[..markers]
        .iter()
        .all(|m| m.to_string_value().as_deref() == Some(MARKER)));
    drop(g);
    client.destroy();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn event_eventf_federates_omnievents_and_corbina_both_ways() {
    if !have_omnievents() {
        return;
    }
    let omni_port = free_port();
    let dir = temp_dir("omnievents-federation");
    let _omni = start_omnievents(omni_port, &dir.join("state"));
    let port = free_port();
    let (_daemon, _) = start_daemon(port, &dir.join("store"), &[]);
    let client = client_orb();
    let omni_ch = create_channel(
        &client,
        &format!("corbaloc::127.0.0.1:{omni_port}/omniEvents"),
        "Federated",
    );
    let omni_url = format!("corbaloc::127.0.0.1:{omni_port}/Federated");
    let corbina_in = format!("corbaloc::127.0.0.1:{port}/EventChannel");
    let corbina_out = create_channel(
        &client,
        &format!("corbaloc::127.0.0.1:{port}/EventChannelFactory"),
        "Out",
    );
    let corbina_out_url = format!("corbaloc::127.0.0.1:{port}/Out");
    // omniEvents' channel → Corbina's default channel; Corbina's "Out" → omniEvents'.
    run_tool("/usr/bin/eventf", &[&omni_url, &corbina_in]);
    run_tool("/usr/bin/eventf", &[&corbina_out_url, &omni_url]);

    let at_corbina = collector_on(&client, &channel_at(&client, &corbina_in), Duration::ZERO);
    let at_omni = collector_on(&client, &omni_ch, Duration::ZERO);

    // Pushed into Corbina's "Out": Corbina pushes to omniEvents' proxy, omniEvents to its
    // consumer and to Corbina's default channel's proxy, which pushes to its consumer.
    let sup = supplier(&corbina_out);
    for i in 0..20 {
        sup.push(&Any::from_long(i)).unwrap();
    }
    let want: Vec<i32> = (0..20).collect();
    assert_eq!(longs(&at_omni.wait_for(20, WAIT)), want);
    assert_eq!(longs(&at_corbina.wait_for(20, WAIT)), want);
    client.destroy();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn event_omnievents_tools_find_corbina_through_the_naming_service() {
    if !have_omnievents() || !have_path("/usr/bin/omniNames", "naming", "omniorb-nameserver") {
        return;
    }
    let dir = temp_dir("omnievents-naming");
    std::fs::create_dir_all(dir.join("names")).unwrap();
    let ns_port = free_port();
    let names = PeerProcess::spawn(
        "omniNames",
        Command::new("/usr/bin/omniNames")
            .args(["-start", &ns_port.to_string(), "-datadir"])
            .arg(dir.join("names"))
            .args(["-ORBendPoint", &format!("giop:tcp:127.0.0.1:{ns_port}")])
            .stdout(Stdio::null()),
    );
    let client = client_orb();
    let ns_ref = client
        .string_to_object(&format!("corbaloc::127.0.0.1:{ns_port}/NameService"))
        .unwrap();
    let up = wait_until(WAIT, || ns_ref.non_existent().is_ok_and(|gone| !gone));
    assert!(up, "omniNames did not answer: {}", names.stderr());
    let ns = format!("NameService=corbaloc::127.0.0.1:{ns_port}/NameService");
    let port = free_port();
    // The daemon binds its channel and factory under omniEvents' default names.
    let (_daemon, channel_ior) = start_daemon(port, &dir.join("store"), &["-ORBInitRef", &ns]);
    // eventc without a factory URI looks the factory up as "EventChannelFactory" and binds
    // the new channel as "Made".
    let made = run_tool("/usr/bin/eventc", &["-ORBInitRef", &ns, "-n", "Made", "-v"]);
    assert!(made.trim().starts_with("IOR:"), "{made}");
    // Both names resolve through corbaname: to Corbina's objects.
    let by_name = |n: &str| {
        client
            .string_to_object(&format!("corbaname::127.0.0.1:{ns_port}#{n}"))
            .unwrap()
    };
    assert_eq!(
        by_name("EventChannel").ior(),
        client.string_to_object(&channel_ior).unwrap().ior()
    );
    // The notification channel factory too, under TAO's name for it.
    let notify = corbina_events::cos_notify_channel_admin::EventChannelFactory::narrow(&by_name(
        "NotifyEventChannelFactory",
    ))
    .unwrap();
    let (_, id) = notify.create_channel(&[], &[]).unwrap();
    assert_eq!(notify.get_all_channels().unwrap(), [id]);
    let made_ch = EventChannel::narrow(&by_name("Made")).unwrap();
    let got = collector_on(&client, &made_ch, Duration::ZERO);
    let sup = supplier(&channel_at(&client, made.trim()));
    sup.push(&Any::from_long(5)).unwrap();
    assert_eq!(longs(&got.wait_for(1, WAIT)), [5]);
    // rmeventc destroys it through the naming service (and unbinds the name); its consumer
    // is told.
    run_tool("/usr/bin/rmeventc", &["-ORBInitRef", &ns, "-n", "Made"]);
    assert!(wait_until(WAIT, || got.disconnected()));
    let e = made_ch.for_consumers().unwrap_err();
    assert_eq!(e.kind, corbina::SystemExceptionKind::ObjectNotExist);
    client.destroy();
    drop(names);
    let _ = std::fs::remove_dir_all(&dir);
}
