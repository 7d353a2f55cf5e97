//! Durability: the `corbina-events` daemon is killed with SIGKILL and restarted on the same
//! port and data directory, three times; the references a supplier and consumers hold
//! (channel, admins, proxies, a factory-made channel and its corbaloc name) must keep
//! working, connected consumers must be delivered to again without reconnecting, and a
//! proxy disconnected before a crash must stay gone.

mod common;

use std::time::Duration;

use common::*;
use corbina::{Any, SystemExceptionKind};
use corbina_events::cos_event_channel_admin::proxy_push_supplier::ConnectPushConsumerError;
use corbina_events::cos_event_channel_admin::EventChannel;
use corbina_events::cos_life_cycle::NameValuePair;
use corbina_events::cos_naming::NameComponent;
use corbina_events::omni_events::EventChannelFactory;

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn event_channels_and_connections_survive_sigkill() {
    let dir = temp_dir("crash");
    let port = free_port();
    let (mut daemon, first_ior) = start_daemon(port, &dir, &[]);
    let client = client_orb();
    let url = |key: &str| format!("corbaloc::127.0.0.1:{port}/{key}");
    let ch = channel_at(&client, &url("EventChannel"));
    let factory = EventChannelFactory::narrow(
        &client
            .string_to_object(&url("EventChannelFactory"))
            .unwrap(),
    )
    .unwrap();
    let named = factory
        .create_object(
            &[NameComponent {
                id: "EventChannel".into(),
                kind: "object interface".into(),
            }],
            &[NameValuePair {
                name: "InsName".into(),
                value: Any::from_string("Telemetry").unwrap(),
            }],
        )
        .unwrap()
        .unwrap();
    let named = EventChannel::narrow(&named).unwrap();

    // On the default channel: a push consumer, a pull consumer, a push supplier.
    let (consumer, got) = push_consumer(&client, Duration::ZERO);
    let push_proxy = connect(&ch, &consumer);
    let pull_proxy = puller(&ch);
    let sup = supplier(&ch);
    // A proxy disconnected before the crash.
    let (gone_consumer, _) = push_consumer(&client, Duration::ZERO);
    let gone_proxy = connect(&ch, &gone_consumer);
    gone_proxy.disconnect_push_supplier().unwrap();
    // On the named channel: a pull consumer and a push supplier.
    let named_pull = puller(&named);
    let named_sup = supplier(&named);

    let mut next = 0;
    for round in 0..3 {
        for _ in 0..10 {
            sup.push(&Any::from_long(next)).unwrap();
            named_sup.push(&Any::from_long(next)).unwrap();
            next += 1;
        }
        assert_eq!(
            longs(&got.wait_for(next as usize, WAIT)),
            (0..next).collect::<Vec<_>>(),
            "round {round}"
        );
        for want in next - 10..next {
            assert_eq!(pull_proxy.pull().unwrap().to_long(), Some(want));
            assert_eq!(named_pull.pull().unwrap().to_long(), Some(want));
        }

        daemon.kill();
        let (d, ior) = start_daemon(port, &dir, &[]);
        daemon = d;
        assert_eq!(ior, first_ior, "the default channel's reference changed");
    }
    // After the last restart: the same references still work, the consumer is still
    // connected (AlreadyConnected), the disconnected proxy stays gone.
    sup.push(&Any::from_long(next)).unwrap();
    assert_eq!(
        got.wait_for(next as usize + 1, WAIT).len(),
        next as usize + 1
    );
    assert!(matches!(
        push_proxy.connect_push_consumer(Some(&consumer)),
        Err(ConnectPushConsumerError::AlreadyConnected(_))
    ));
    assert_eq!(pull_proxy.pull().unwrap().to_long(), Some(next));
    let e = gone_proxy.disconnect_push_supplier().unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::ObjectNotExist);
    let by_name = channel_at(&client, &url("Telemetry"));
    assert!(by_name.for_suppliers().unwrap().is_some());
    client.destroy();
    drop(daemon);
    let _ = std::fs::remove_dir_all(&dir);
}
