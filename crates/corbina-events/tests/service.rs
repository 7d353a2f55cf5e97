//! The event service in this process, with Corbina suppliers and consumers on another ORB
//! (over TCP): the four proxy kinds, the connect/disconnect rules and exceptions of
//! CosEventChannelAdmin, delivery order, isolation of slow and dead consumers, the bounded
//! queue, the factory and the restart of a service on the same store.

mod common;

use std::time::{Duration, Instant};

use common::*;
use corbina::{Any, SystemExceptionKind};
use corbina_events::cos_event_channel_admin::proxy_pull_consumer::ConnectPullSupplierError;
use corbina_events::cos_event_channel_admin::proxy_pull_supplier::ConnectPullConsumerError;
use corbina_events::cos_event_channel_admin::proxy_push_consumer::ConnectPushSupplierError;
use corbina_events::cos_event_channel_admin::proxy_push_supplier::ConnectPushConsumerError;
use corbina_events::cos_event_channel_admin::EventChannel;
use corbina_events::cos_event_comm::pull_supplier::{PullError, TryPullError};
use corbina_events::cos_event_comm::push_consumer::PushError;
use corbina_events::cos_life_cycle::generic_factory::CreateObjectError;
use corbina_events::cos_life_cycle::NameValuePair;
use corbina_events::cos_naming::NameComponent;
use corbina_events::omni_events::EventChannelFactory;

const WAIT: Duration = Duration::from_secs(10);

fn is_system(e: &impl std::fmt::Debug, kind: SystemExceptionKind) -> bool {
    format!("{e:?}").contains(&format!("{kind:?}"))
}

#[test]
fn event_push_supplier_to_push_and_pull_consumers_in_order() {
    let svc = InProcess::start("order", |_| {});
    let client = client_orb();
    let ch = channel_at(&client, &svc.url("EventChannel"));
    let push: Vec<_> = (0..3)
        .map(|_| collector_on(&client, &ch, Duration::ZERO))
        .collect();
    let pull = puller(&ch);
    assert_eq!(svc.service().consumer_count(), 4);

    let sup = supplier(&ch);
    for i in 0..200 {
        sup.push(&Any::from_long(i)).unwrap();
    }
    let want: Vec<i32> = (0..200).collect();
    for got in &push {
        assert_eq!(longs(&got.wait_for(200, WAIT)), want);
    }
    let mut pulled = Vec::new();
    for _ in 0..100 {
        pulled.push(pull.pull().unwrap());
    }
    while let (e, true) = pull.try_pull().unwrap() {
        pulled.push(e);
    }
    assert_eq!(longs(&pulled), want);
    // Nothing left: try_pull says so without blocking.
    let (_, has) = pull.try_pull().unwrap();
    assert!(!has);
    client.destroy();
}

#[test]
fn event_pull_waits_for_the_next_event() {
    let svc = InProcess::start("pullwait", |_| {});
    let client = client_orb();
    let ch = channel_at(&client, &svc.url("EventChannel"));
    let pull = puller(&ch);
    let sup = supplier(&ch);
    // Two pulls waiting at once on the same connection: the AMH servant holds no thread.
    let waiting: Vec<_> = (0..2)
        .map(|_| {
            let p = pull.clone();
            std::thread::spawn(move || p.pull().unwrap().to_long().unwrap())
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    sup.push(&Any::from_long(1)).unwrap();
    sup.push(&Any::from_long(2)).unwrap();
    let mut got: Vec<i32> = waiting.into_iter().map(|t| t.join().unwrap()).collect();
    got.sort_unstable();
    assert_eq!(got, [1, 2]);
    // A pull still waiting when the channel is destroyed gets Disconnected.
    let waiter = {
        let p = pull.clone();
        std::thread::spawn(move || p.pull())
    };
    std::thread::sleep(Duration::from_millis(200));
    ch.destroy().unwrap();
    assert!(matches!(
        waiter.join().unwrap(),
        Err(PullError::Disconnected(_))
    ));
    client.destroy();
}

#[test]
fn event_channel_pulls_from_a_pull_supplier() {
    let svc = InProcess::start("pullsup", |_| {});
    let client = client_orb();
    let ch = channel_at(&client, &svc.url("EventChannel"));
    let got = collector_on(&client, &ch, Duration::ZERO);
    let (supplier, told) = pull_supplier(&client, 50);
    let pc = pull_from(&ch, &supplier);
    assert_eq!(longs(&got.wait_for(50, WAIT)), (0..50).collect::<Vec<_>>());
    // The supplier disconnects the channel's end; the channel does not call it back.
    pc.disconnect_pull_consumer().unwrap();
    assert!(pc.disconnect_pull_consumer().is_err());
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(told.count(), 0);
    client.destroy();
}

#[test]
fn event_connect_and_disconnect_rules() {
    let svc = InProcess::start("rules", |_| {});
    let client = client_orb();
    let ch = channel_at(&client, &svc.url("EventChannel"));
    let sa = ch.for_suppliers().unwrap().unwrap();
    let ca = ch.for_consumers().unwrap().unwrap();

    // ProxyPushConsumer: push before connecting is Disconnected; connecting twice is
    // AlreadyConnected; after disconnecting, the object is gone.
    let pc = sa.obtain_push_consumer().unwrap().unwrap();
    assert!(matches!(
        pc.push(&Any::from_long(1)),
        Err(PushError::Disconnected(_))
    ));
    let (s, s_told) = push_supplier(&client);
    pc.connect_push_supplier(Some(&s)).unwrap();
    assert!(matches!(
        pc.connect_push_supplier(None),
        Err(ConnectPushSupplierError::AlreadyConnected(_))
    ));
    pc.disconnect_push_consumer().unwrap();
    let e = pc.push(&Any::from_long(1)).unwrap_err();
    assert!(is_system(&e, SystemExceptionKind::ObjectNotExist), "{e:?}");

    // ProxyPushSupplier: a nil consumer is BAD_PARAM; twice is AlreadyConnected.
    let ps = ca.obtain_push_supplier().unwrap().unwrap();
    let e = ps.connect_push_consumer(None).unwrap_err();
    assert!(is_system(&e, SystemExceptionKind::BadParam), "{e:?}");
    let (c, got) = push_consumer(&client, Duration::ZERO);
    ps.connect_push_consumer(Some(&c)).unwrap();
    assert!(matches!(
        ps.connect_push_consumer(Some(&c)),
        Err(ConnectPushConsumerError::AlreadyConnected(_))
    ));

    // ProxyPullSupplier: pull before connecting is Disconnected.
    let pl = ca.obtain_pull_supplier().unwrap().unwrap();
    assert!(matches!(pl.pull(), Err(PullError::Disconnected(_))));
    assert!(matches!(pl.try_pull(), Err(TryPullError::Disconnected(_))));
    let (pcons, pcons_told) = pull_consumer(&client);
    pl.connect_pull_consumer(Some(&pcons)).unwrap();
    assert!(matches!(
        pl.connect_pull_consumer(None),
        Err(ConnectPullConsumerError::AlreadyConnected(_))
    ));

    // ProxyPullConsumer: a nil supplier is BAD_PARAM.
    let plc = sa.obtain_pull_consumer().unwrap().unwrap();
    let e = plc.connect_pull_supplier(None).unwrap_err();
    assert!(is_system(&e, SystemExceptionKind::BadParam), "{e:?}");
    let (psup, psup_told) = pull_supplier(&client, 0);
    plc.connect_pull_supplier(Some(&psup)).unwrap();
    assert!(matches!(
        plc.connect_pull_supplier(Some(&psup)),
        Err(ConnectPullSupplierError::AlreadyConnected(_))
    ));

    // A push supplier connected with a reference is told when the channel goes.
    let pc2 = sa.obtain_push_consumer().unwrap().unwrap();
    let (s2, s2_told) = push_supplier(&client);
    pc2.connect_push_supplier(Some(&s2)).unwrap();

    // Destroying the channel tells every connected peer, and everything is gone.
    ch.destroy().unwrap();
    assert!(wait_until(WAIT, || got.disconnected()
        && pcons_told.count() == 1
        && psup_told.count() == 1
        && s2_told.count() == 1));
    // The supplier that had disconnected itself is not told again.
    assert_eq!(s_told.count(), 0);
    for e in [
        format!("{:?}", ch.for_consumers().unwrap_err()),
        format!("{:?}", sa.obtain_push_consumer().unwrap_err()),
        format!("{:?}", ps.disconnect_push_supplier().unwrap_err()),
        format!("{:?}", pl.try_pull().unwrap_err()),
    ] {
        assert!(e.contains("ObjectNotExist"), "{e}");
    }
    assert_eq!(svc.service().proxy_count(), 0);
    // The default channel's corbaloc name went with it.
    let by_name =
        EventChannel::unchecked_narrow(&client.string_to_object(&svc.url("EventChannel")).unwrap());
    let e = by_name.for_consumers().unwrap_err();
    assert!(is_system(&e, SystemExceptionKind::ObjectNotExist), "{e:?}");
    client.destroy();
}

#[test]
fn event_slow_consumer_does_not_stall_the_others() {
    let svc = InProcess::start("slow", |_| {});
    let client = client_orb();
    let ch = channel_at(&client, &svc.url("EventChannel"));
    let slow_got = collector_on(&client, &ch, Duration::from_millis(100));
    let fast: Vec<_> = (0..3)
        .map(|_| collector_on(&client, &ch, Duration::ZERO))
        .collect();
    let sup = supplier(&ch);
    let start = Instant::now();
    for i in 0..100 {
        sup.push(&Any::from_long(i)).unwrap();
    }
    let pushed = start.elapsed();
    for got in &fast {
        assert_eq!(got.wait_for(100, WAIT).len(), 100);
    }
    let fast_done = start.elapsed();
    // The slow consumer needs 10 s for 100 events; the supplier and the fast consumers
    // are not held back by it.
    assert!(
        fast_done < Duration::from_secs(5),
        "fast consumers took {fast_done:?}"
    );
    assert!(pushed < Duration::from_secs(5), "pushing took {pushed:?}");
    assert!(slow_got.count() < 100, "the slow consumer kept up?");
    client.destroy();
}

#[test]
fn event_queue_is_bounded_dropping_the_oldest() {
    let svc = InProcess::start("bounded", |o| o.max_queue = 5);
    let client = client_orb();
    let ch = channel_at(&client, &svc.url("EventChannel"));
    let pull = puller(&ch);
    let sup = supplier(&ch);
    for i in 0..20 {
        sup.push(&Any::from_long(i)).unwrap();
    }
    let mut got = Vec::new();
    while let (e, true) = pull.try_pull().unwrap() {
        got.push(e);
    }
    assert_eq!(longs(&got), [15, 16, 17, 18, 19]);
    client.destroy();
}

#[test]
fn event_dead_consumer_is_disconnected_after_retries() {
    let svc = InProcess::start("dead", |_| {});
    let client = client_orb();
    let ch = channel_at(&client, &svc.url("EventChannel"));
    // The doomed consumer lives on an ORB of its own, destroyed below.
    let doomed_orb = client_orb();
    collector_on(&doomed_orb, &ch, Duration::ZERO);
    let live_got = collector_on(&client, &ch, Duration::ZERO);
    doomed_orb.destroy();
    let sup = supplier(&ch);
    for i in 0..10 {
        sup.push(&Any::from_long(i)).unwrap();
    }
    assert_eq!(
        longs(&live_got.wait_for(10, WAIT)),
        (0..10).collect::<Vec<_>>()
    );
    // 3 retries, 10-40 ms apart: the dead one is gone well within the wait.
    assert!(
        wait_until(WAIT, || svc.service().consumer_count() == 1),
        "consumers: {}",
        svc.service().consumer_count()
    );
    client.destroy();
}

#[test]
fn event_factory_creates_named_channels() {
    let svc = InProcess::start("factory", |_| {});
    let client = client_orb();
    let factory = EventChannelFactory::narrow(
        &client
            .string_to_object(&svc.url("EventChannelFactory"))
            .unwrap(),
    )
    .unwrap();
    let key = [NameComponent {
        id: "EventChannel".into(),
        kind: "object interface".into(),
    }];
    assert!(factory.supports(&key).unwrap());
    let nv = |name: &str, value: Any| NameValuePair {
        name: name.into(),
        value,
    };
    let criteria = [
        nv("InsName", Any::from_string("Alarms").unwrap()),
        nv("MaxQueueLength", Any::from_ulong(2)),
    ];
    let obj = factory.create_object(&key, &criteria).unwrap().unwrap();
    let alarms = EventChannel::narrow(&obj).unwrap();
    // Reachable by its InsName.
    let by_name = channel_at(&client, &svc.url("Alarms"));
    let pull = puller(&by_name);
    let sup = supplier(&alarms);
    for i in 0..4 {
        sup.push(&Any::from_long(i)).unwrap();
    }
    // MaxQueueLength 2 applies.
    let mut got = Vec::new();
    while let (e, true) = pull.try_pull().unwrap() {
        got.push(e);
    }
    assert_eq!(longs(&got), [2, 3]);
    assert_eq!(svc.service().channel_count(), 2);

    assert!(matches!(
        factory.create_object(&key, &criteria[..1]),
        Err(CreateObjectError::CannotMeetCriteria(_))
    ));
    assert!(matches!(
        factory.create_object(&key, &[nv("Colour", Any::from_long(1))]),
        Err(CreateObjectError::InvalidCriteria(_))
    ));
    assert!(matches!(
        factory.create_object(&key[..0], &[]),
        Err(CreateObjectError::NoFactory(_))
    ));
    // MaxNumProxies bounds the proxies of a channel; a disconnected one frees its place.
    let small = factory
        .create_object(&key, &[nv("MaxNumProxies", Any::from_ulong(2))])
        .unwrap()
        .unwrap();
    let small = EventChannel::narrow(&small).unwrap();
    let first = puller(&small);
    supplier(&small);
    let e = small
        .for_consumers()
        .unwrap()
        .unwrap()
        .obtain_push_supplier()
        .unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::ImpLimit);
    first.disconnect_pull_supplier().unwrap();
    puller(&small);
    // An unnamed channel.
    let anon = factory.create_object(&key, &[]).unwrap().unwrap();
    assert!(EventChannel::narrow(&anon).is_ok());
    assert_eq!(svc.service().channel_count(), 4);
    client.destroy();
}

/// The most asynchronous calls in flight on one of the service's connections, sampled
/// until `done`.
fn most_in_flight(svc: &InProcess, done: impl Fn() -> bool) -> usize {
    let mut most = 0;
    let end = Instant::now() + WAIT;
    while !done() && Instant::now() < end {
        for c in svc.orb.connections() {
            for s in &c.async_strands {
                most = most.max(s.in_flight);
            }
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    most
}

#[test]
fn event_window_keeps_order_under_load() {
    const N: usize = 1000;
    for window in [1, 8] {
        let svc = InProcess::start(&format!("window{window}"), |o| o.push_window = window);
        let client = client_orb();
        let ch = channel_at(&client, &svc.url("EventChannel"));
        // Two quick consumers and a slower one (its window stays full), all in one process:
        // each has a connection of its own.
        let got: Vec<_> = [0, 0, 300]
            .map(|us| collector_on(&client, &ch, Duration::from_micros(us)))
            .into();
        let sup = supplier(&ch);
        for i in 0..N as i32 {
            sup.push(&Any::from_long(i)).unwrap();
        }
        let most = most_in_flight(&svc, || got.iter().all(|g| g.count() >= N));
        assert!(
            most <= window,
            "window {window}: {most} pushes in flight on one connection"
        );
        if window > 1 {
            assert!(most > 1, "window {window}: pushes were not pipelined");
        }
        let want: Vec<i32> = (0..N as i32).collect();
        for g in &got {
            assert_eq!(longs(&g.wait_for(N, WAIT)), want, "window {window}");
        }
        client.destroy();
    }
}

#[test]
fn event_consumer_failing_mid_window_gets_its_events_again_in_order() {
    const N: usize = 200;
    let svc = InProcess::start("redeliver", |o| {
        o.push_window = 8;
        o.push_retries = 100;
    });
    let client = client_orb();
    let ch = channel_at(&client, &svc.url("EventChannel"));
    // The consumer on an ORB of its own, whose POA manager refuses requests for a while:
    // every push in the window fails with TRANSIENT.
    let consumer_orb = client_orb();
    let (consumer, got) = push_consumer(&consumer_orb, Duration::from_millis(1));
    let _proxy = connect(&ch, &consumer);
    let sup = supplier(&ch);
    for i in 0..N as i32 {
        sup.push(&Any::from_long(i)).unwrap();
    }
    assert!(wait_until(WAIT, || got.count() >= 10));
    let manager = consumer_orb.root_poa().the_poa_manager();
    manager.discard_requests(false).unwrap();
    std::thread::sleep(Duration::from_millis(150));
    let before = got.count();
    manager.activate().unwrap();
    assert!(before < N, "every event arrived before the consumer failed");
    // Every event once; from the failure on in order: those that failed were sent again,
    // before the rest. (A consumer that fails one push while it takes the next ones, as a
    // loaded one may, gets the failed one after them: `before` covers that.)
    let got_all = longs(&got.wait_for(N, WAIT));
    let mut sorted = got_all.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..N as i32).collect::<Vec<_>>());
    assert!(
        got_all[before..].windows(2).all(|w| w[0] < w[1]),
        "{got_all:?}"
    );
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(got.count(), N);
    assert_eq!(svc.service().consumer_count(), 1);
    consumer_orb.destroy();
    client.destroy();
}
