//! The notification channel (CosNotifyChannelAdmin) in this process: its factory and
//! admins, structured and sequence push proxies, the translation between `any` and
//! structured events, batches, filters on admins and proxies with AND/OR, QoS (priority
//! order, discard policy, timeouts, start and stop times, suspend/resume), subscription and
//! offer changes, and a structured consumer's connection across `kill -9` of the daemon.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::notify::*;
use common::*;
use corbina::{Any, Orb, SystemException, SystemExceptionKind};
use corbina_events::cos_event_channel_admin::EventChannel as CosEventChannel;
use corbina_events::cos_notification::qo_s_admin::SetQosError;
use corbina_events::cos_notification::{EventType, Property, QoSErrorCode, StructuredEvent};
use corbina_events::cos_notify_channel_admin::event_channel_factory::CreateChannelError;
use corbina_events::cos_notify_channel_admin::{
    ClientType, ConsumerAdmin, EventChannel, EventChannelFactory, InterFilterGroupOperator,
    ObtainInfoMode, ProxyPullSupplier as AnyProxyPullSupplier, ProxyType,
    SequenceProxyPullConsumer, SequenceProxyPushSupplier, StructuredProxyPullConsumer,
    StructuredProxyPushConsumer, StructuredProxyPushSupplier, SupplierAdmin,
};
use corbina_events::cos_notify_comm::notify_subscribe::SubscriptionChangeError;
use corbina_events::cos_notify_comm::{
    NotifySubscribeServant, StructuredPushSupplier, StructuredPushSupplierServant,
    StructuredPushSupplierSkeleton,
};
use corbina_events::cos_notify_comm::{
    SequencePullSupplier, SequencePullSupplierSkeleton, StructuredPullSupplier,
    StructuredPullSupplierSkeleton,
};
use corbina_events::cos_notify_filter::{
    ConstraintExp, Filter, FilterFactory, MappingConstraintPair,
};
use corbina_events::time_base::UtcT;
use corbina_events::NOTIFY_FACTORY_KEY;

const WAIT: Duration = Duration::from_secs(10);

/// A structured push supplier recording the subscription changes it hears of.
struct Supplier(Arc<Mutex<Vec<Change>>>);

impl NotifySubscribeServant for Supplier {
    fn subscription_change(
        &self,
        added: &[EventType],
        removed: &[EventType],
    ) -> Result<(), SubscriptionChangeError> {
        self.0
            .lock()
            .unwrap()
            .push((added.to_vec(), removed.to_vec()));
        Ok(())
    }
}

impl StructuredPushSupplierServant for Supplier {
    fn disconnect_structured_push_supplier(&self) -> Result<(), SystemException> {
        Ok(())
    }
}

struct Setup {
    _service: InProcess,
    client: Orb,
    factory: EventChannelFactory,
}

fn setup(name: &str) -> Setup {
    let service = InProcess::start(name, |_| {});
    let client = client_orb();
    let factory = EventChannelFactory::narrow(
        &client
            .string_to_object(&service.url(NOTIFY_FACTORY_KEY))
            .unwrap(),
    )
    .unwrap();
    Setup {
        _service: service,
        client,
        factory,
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        self.client.destroy();
    }
}

fn channel(s: &Setup, qos: &[Property]) -> EventChannel {
    s.factory.create_channel(qos, &[]).unwrap().0.unwrap()
}

/// A structured proxy push consumer of `admin`, connected with a nil supplier.
fn structured_supplier(admin: &SupplierAdmin) -> StructuredProxyPushConsumer {
    let (p, _) = admin
        .obtain_notification_push_consumer(ClientType::StructuredEvent)
        .unwrap();
    let p = StructuredProxyPushConsumer::narrow(p.unwrap().as_object()).unwrap();
    p.connect_structured_push_supplier(None).unwrap();
    p
}

/// A structured proxy push supplier of `admin` (not connected yet).
fn structured_proxy(admin: &ConsumerAdmin) -> StructuredProxyPushSupplier {
    let (p, _) = admin
        .obtain_notification_push_supplier(ClientType::StructuredEvent)
        .unwrap();
    StructuredProxyPushSupplier::narrow(p.unwrap().as_object()).unwrap()
}

#[test]
fn notify_factory_channels_and_admins() {
    let s = setup("notify-factory");
    let (ch, id) = s.factory.create_channel(&[], &[]).unwrap();
    let ch = ch.unwrap();
    let (_, id2) = s.factory.create_channel(&[], &[]).unwrap();
    assert_ne!(id, id2);
    let mut all = s.factory.get_all_channels().unwrap();
    all.sort_unstable();
    assert_eq!(all, {
        let mut v = vec![id, id2];
        v.sort_unstable();
        v
    });
    let again = s.factory.get_event_channel(id).unwrap().unwrap();
    assert!(again.get_default_consumer_admin().unwrap().is_some());
    assert!(s.factory.get_event_channel(-5).is_err());
    assert!(ch.get_my_factory().unwrap().is_some());
    assert!(ch.get_default_filter_factory().unwrap().is_some());

    // Default admins are number 0; new ones have their own ids and operators.
    let default = ch.get_default_consumer_admin().unwrap().unwrap();
    assert_eq!(default.get_my_id().unwrap(), 0);
    let (or_admin, or_id) = ch
        .new_for_consumers(InterFilterGroupOperator::OrOp)
        .unwrap();
    let or_admin = or_admin.unwrap();
    assert_ne!(or_id, 0);
    assert_eq!(or_admin.get_my_id().unwrap(), or_id);
    assert_eq!(
        or_admin.get_my_operator().unwrap(),
        InterFilterGroupOperator::OrOp
    );
    let mut ids = ch.get_all_consumeradmins().unwrap();
    ids.sort_unstable();
    assert_eq!(ids, [0, or_id]);
    assert!(ch.get_consumeradmin(or_id).unwrap().is_some());
    assert!(ch.get_consumeradmin(12345).is_err());
    let (_, sid) = ch
        .new_for_suppliers(InterFilterGroupOperator::AndOp)
        .unwrap();
    assert_eq!(ch.get_all_supplieradmins().unwrap().len(), 2);
    assert!(ch.get_supplieradmin(sid).unwrap().is_some());

    // Proxies: their ids, their type, found by id, listed by their admin.
    let (p, pid) = or_admin
        .obtain_notification_push_supplier(ClientType::SequenceEvent)
        .unwrap();
    let p = SequenceProxyPushSupplier::narrow(p.unwrap().as_object()).unwrap();
    assert_eq!(p.get_my_type().unwrap(), ProxyType::PushSequence);
    assert_eq!(or_admin.get_push_suppliers().unwrap(), [pid]);
    assert!(or_admin.get_proxy_supplier(pid).unwrap().is_some());
    assert!(default.get_proxy_supplier(pid).is_err(), "not that admin's");
    // Destroying an admin removes its proxies.
    or_admin.destroy().unwrap();
    assert_eq!(ch.get_all_consumeradmins().unwrap(), [0]);
    let e = p.get_my_type().unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::ObjectNotExist);

    // QoS and admin properties: what is supported is kept, the rest refused.
    // Persistent events need persistent connections.
    assert!(matches!(
        s.factory
            .create_channel(&[prop("EventReliability", Any::from_short(1))], &[]),
        Err(CreateChannelError::UnsupportedQoS(_))
    ));
    assert!(matches!(
        s.factory.create_channel(
            &[],
            &[prop("MaxQueueLength", Any::from_string("x").unwrap())]
        ),
        Err(CreateChannelError::UnsupportedAdmin(_))
    ));
    ch.set_qos(&[prop("OrderPolicy", Any::from_short(2))])
        .unwrap();
    let q = ch.get_qos().unwrap();
    let order = q.iter().find(|p| p.name == "OrderPolicy").unwrap();
    assert_eq!(order.value.to_short(), Some(2));
    match ch.set_qos(&[prop("Colour", Any::from_short(1))]) {
        Err(SetQosError::UnsupportedQoS(u)) => {
            assert_eq!(u.qos_err[0].code, QoSErrorCode::BadProperty)
        }
        other => panic!("{other:?}"),
    }
    ch.set_admin(&[prop("MaxConsumers", Any::from_long(1))])
        .unwrap();
    let admin = ch.get_default_consumer_admin().unwrap().unwrap();
    admin
        .obtain_notification_push_supplier(ClientType::AnyEvent)
        .unwrap();
    assert!(admin
        .obtain_notification_push_supplier(ClientType::AnyEvent)
        .is_err());
    drop(s);
}

#[test]
fn notify_any_and_structured_events_translate() {
    let s = setup("notify-translate");
    let ch = channel(&s, &[]);
    // The notification channel is a CosEventChannelAdmin::EventChannel too.
    let cos = CosEventChannel::narrow(ch.as_object()).unwrap();
    let any_got = collector_on(&s.client, &cos, Duration::ZERO);
    let (c, got) = structured_consumer(&s.client);
    structured_proxy(&ch.get_default_consumer_admin().unwrap().unwrap())
        .connect_structured_push_consumer(Some(&c))
        .unwrap();

    // An any pushed through a CosEvent proxy...
    supplier(&cos).push(&Any::from_long(42)).unwrap();
    // ... and a structured event.
    let sup = structured_supplier(&ch.get_default_supplier_admin().unwrap().unwrap());
    sup.push_structured_event(&event("Alarm", "a1", 1)).unwrap();

    let se = got.wait_for(2, WAIT);
    assert_eq!(se.len(), 2);
    assert_eq!(se[0].header.fixed_header.event_type.type_name, "%ANY");
    assert_eq!(se[0].remainder_of_body.to_long(), Some(42));
    assert_eq!(se[1].header.fixed_header.event_name, "a1");
    let anys = any_got.wait_for(2, WAIT);
    assert_eq!(anys[0].to_long(), Some(42));
    let inner = anys[1]
        .extract::<StructuredEvent>()
        .expect("a StructuredEvent");
    assert_eq!(inner.header.fixed_header.event_name, "a1");
}

#[test]
fn notify_sequence_consumers_get_batches() {
    let s = setup("notify-batch");
    let ch = channel(&s, &[]);
    let admin = ch.get_default_consumer_admin().unwrap().unwrap();
    let (p, _) = admin
        .obtain_notification_push_supplier(ClientType::SequenceEvent)
        .unwrap();
    let p = SequenceProxyPushSupplier::narrow(p.unwrap().as_object()).unwrap();
    // Batches of 4, waiting up to 200 ms (2,000,000 × 100 ns) to fill one.
    p.set_qos(&[
        prop("MaximumBatchSize", Any::from_long(4)),
        prop("PacingInterval", Any::from_ulonglong(2_000_000)),
    ])
    .unwrap();
    let (c, got) = sequence_consumer(&s.client);
    p.connect_sequence_push_consumer(Some(&c)).unwrap();
    let sup = structured_supplier(&ch.get_default_supplier_admin().unwrap().unwrap());
    let names: Vec<String> = (0..10).map(|i| format!("e{i}")).collect();
    for n in &names {
        sup.push_structured_event(&event("Tick", n, 0)).unwrap();
    }
    assert_eq!(got.names(10), names);
    let batches = got.batches.lock().unwrap().clone();
    assert!(batches.iter().all(|b| *b <= 4), "{batches:?}");
    assert_eq!(batches.iter().sum::<usize>(), 10);
    // The last two waited for the pacing interval rather than going one by one.
    assert_eq!(batches.last(), Some(&2), "{batches:?}");
}

fn filter(ff: &FilterFactory, types: &[EventType], expr: &str) -> Filter {
    let f = ff.create_filter("EXTENDED_TCL").unwrap().unwrap();
    f.add_constraints(&[ConstraintExp {
        event_types: types.to_vec(),
        constraint_expr: expr.into(),
    }])
    .unwrap();
    f
}

#[test]
fn notify_filters_and_or_between_admin_and_proxy() {
    let s = setup("notify-filters");
    let ch = channel(&s, &[]);
    let ff = ch.get_default_filter_factory().unwrap().unwrap();
    let alarms = filter(&ff, &[et("Telecom", "Alarm")], "");
    let high = filter(&ff, &[], "$.header.variable_header(Priority) > 3");
    let faults = filter(&ff, &[et("*", "Fault")], "$severity >= 2");

    // AND admin: alarms only; its proxy: high priority only.
    let (and_admin, _) = ch
        .new_for_consumers(InterFilterGroupOperator::AndOp)
        .unwrap();
    let and_admin = and_admin.unwrap();
    let fid = and_admin.add_filter(Some(&alarms)).unwrap();
    assert_eq!(and_admin.get_all_filters().unwrap(), [fid]);
    let and_proxy = structured_proxy(&and_admin);
    and_proxy.add_filter(Some(&high)).unwrap();
    let (c, and_got) = structured_consumer(&s.client);
    and_proxy
        .connect_structured_push_consumer(Some(&c))
        .unwrap();

    // OR admin: alarms; its proxy: faults of severity ≥ 2 — either will do.
    let (or_admin, _) = ch
        .new_for_consumers(InterFilterGroupOperator::OrOp)
        .unwrap();
    let or_admin = or_admin.unwrap();
    or_admin.add_filter(Some(&alarms)).unwrap();
    let or_proxy = structured_proxy(&or_admin);
    // Two filters on one object: ORed.
    or_proxy.add_filter(Some(&faults)).unwrap();
    or_proxy
        .add_filter(Some(&filter(
            &ff,
            &[et("Telecom", "Info")],
            "$severity == 7",
        )))
        .unwrap();
    let (c, or_got) = structured_consumer(&s.client);
    or_proxy.connect_structured_push_consumer(Some(&c)).unwrap();

    // A supplier-side filter: nothing of type Debug gets in.
    let sadmin = ch.get_default_supplier_admin().unwrap().unwrap();
    let sup = structured_supplier(&sadmin);
    sup.add_filter(Some(&filter(&ff, &[], "$type_name != 'Debug'")))
        .unwrap();

    for (t, n, p) in [
        ("Alarm", "alarm-low", 1),
        ("Alarm", "alarm-high", 5),
        ("Fault", "fault-low", 1),
        ("Fault", "fault-high", 4),
        ("Info", "info-7", 7),
        ("Info", "info-1", 1),
        ("Debug", "debug", 9),
        ("Alarm", "end", 9),
    ] {
        sup.push_structured_event(&event(t, n, p)).unwrap();
    }
    assert_eq!(and_got.names(2), ["alarm-high", "end"]);
    assert_eq!(
        or_got.names(5),
        ["alarm-low", "alarm-high", "fault-high", "info-7", "end"]
    );
    // Removing the admin's filter: the AND proxy's own filter decides alone.
    and_admin.remove_filter(fid).unwrap();
    assert!(and_admin.remove_filter(fid).is_err());
    sup.push_structured_event(&event("Fault", "fault-9", 9))
        .unwrap();
    assert_eq!(and_got.names(3)[2], "fault-9");
}

#[test]
fn notify_priority_order_discard_and_timeout() {
    let s = setup("notify-qos");
    let ch = channel(&s, &[]);
    let proxy = structured_proxy(&ch.get_default_consumer_admin().unwrap().unwrap());
    proxy
        .set_qos(&[
            prop("OrderPolicy", Any::from_short(2)),
            prop("DiscardPolicy", Any::from_short(2)),
            prop("MaxEventsPerConsumer", Any::from_long(3)),
        ])
        .unwrap();
    let (c, got) = structured_consumer(&s.client);
    proxy.connect_structured_push_consumer(Some(&c)).unwrap();
    proxy.suspend_connection().unwrap();
    assert!(proxy.suspend_connection().is_err(), "already inactive");
    let sup = structured_supplier(&ch.get_default_supplier_admin().unwrap().unwrap());
    // The highest priority of all, but it expires in 1 ms (10,000 × 100 ns).
    let mut short = event("Alarm", "short-lived", 100);
    short
        .header
        .variable_header
        .push(prop("Timeout", Any::from_ulonglong(10_000)));
    sup.push_structured_event(&short).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    // The full queue drops the expired event first, then the lowest priorities.
    for (n, p) in [("p2", 2), ("p9", 9), ("p1", 1), ("p5", 5), ("p7", 7)] {
        sup.push_structured_event(&event("Alarm", n, p)).unwrap();
    }
    proxy.resume_connection().unwrap();
    // The three of highest priority, highest first; the expired one dropped.
    assert_eq!(got.names(3), ["p9", "p7", "p5"]);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(got.events.lock().unwrap().len(), 3);
}

#[test]
fn notify_subscription_and_offer_changes_are_forwarded() {
    let s = setup("notify-changes");
    let ch = channel(&s, &[]);
    let cadmin = ch.get_default_consumer_admin().unwrap().unwrap();
    let sadmin = ch.get_default_supplier_admin().unwrap().unwrap();
    // A supplier that listens for subscription changes.
    let heard = Arc::new(Mutex::new(Vec::new()));
    let r = serve(
        &s.client,
        StructuredPushSupplierSkeleton::new(Supplier(heard.clone())),
    );
    let (p, _) = sadmin
        .obtain_notification_push_consumer(ClientType::StructuredEvent)
        .unwrap();
    let p = StructuredProxyPushConsumer::narrow(p.unwrap().as_object()).unwrap();
    p.connect_structured_push_supplier(Some(&StructuredPushSupplier::unchecked_narrow(&r)))
        .unwrap();
    // A consumer that listens for offer changes.
    let (c, got) = structured_consumer(&s.client);
    let proxy = structured_proxy(&cadmin);
    proxy.connect_structured_push_consumer(Some(&c)).unwrap();

    cadmin
        .subscription_change(&[et("Telecom", "Alarm")], &[])
        .unwrap();
    assert_eq!(
        p.obtain_subscription_types(ObtainInfoMode::AllNowUpdatesOn)
            .unwrap(),
        [et("Telecom", "Alarm")]
    );
    assert!(wait_until(WAIT, || heard.lock().unwrap().len() == 1));
    assert_eq!(heard.lock().unwrap()[0].0, [et("Telecom", "Alarm")]);

    sadmin.offer_change(&[et("Telecom", "Fault")], &[]).unwrap();
    p.offer_change(&[et("Telecom", "Fault")], &[]).unwrap();
    assert_eq!(
        proxy
            .obtain_offered_types(ObtainInfoMode::AllNowUpdatesOn)
            .unwrap(),
        [et("Telecom", "Fault")]
    );
    // Forwarded once: the second offer of the same type changes nothing.
    assert!(wait_until(WAIT, || got.offers.lock().unwrap().len() == 1));
    sadmin.offer_change(&[], &[et("Telecom", "Fault")]).unwrap();
    p.offer_change(&[], &[et("Telecom", "Fault")]).unwrap();
    assert!(wait_until(WAIT, || got.offers.lock().unwrap().len() == 2));
    assert_eq!(got.offers.lock().unwrap()[1].1, [et("Telecom", "Fault")]);
    assert!(proxy
        .obtain_offered_types(ObtainInfoMode::NoneNowUpdatesOff)
        .unwrap()
        .is_empty());
}

#[test]
fn notify_structured_connection_survives_sigkill() {
    let dir = temp_dir("notify-crash");
    let port = free_port();
    let (mut daemon, _) = start_daemon(port, &dir, &[]);
    let client = client_orb();
    let factory = notify_factory_at(&client, port);
    let (ch, id) = factory
        .create_channel(&[prop("ConnectionReliability", Any::from_short(1))], &[])
        .unwrap();
    let ch = ch.unwrap();
    let (admin, _) = ch
        .new_for_consumers(InterFilterGroupOperator::AndOp)
        .unwrap();
    let admin = admin.unwrap();
    let ff = ch.get_default_filter_factory().unwrap().unwrap();
    admin
        .add_filter(Some(&filter(&ff, &[et("Telecom", "Alarm")], "")))
        .unwrap();
    let mf = ff
        .create_mapping_filter("EXTENDED_TCL", &Any::from_short(0))
        .unwrap()
        .unwrap();
    admin.set_priority_filter(Some(&mf)).unwrap();
    let proxy = structured_proxy(&admin);
    proxy.set_lifetime_filter(Some(&mf)).unwrap();
    let (c, got) = structured_consumer(&client);
    proxy.connect_structured_push_consumer(Some(&c)).unwrap();
    let sup = structured_supplier(&ch.get_default_supplier_admin().unwrap().unwrap());
    sup.push_structured_event(&event("Alarm", "before", 1))
        .unwrap();
    assert_eq!(got.names(1), ["before"]);

    daemon.kill();
    let (d, _) = start_daemon(port, &dir, &[]);
    daemon = d;
    // The same references: the channel, the supplier's proxy, the consumer's connection,
    // the admin's filter.
    assert_eq!(factory.get_all_channels().unwrap(), [id]);
    sup.push_structured_event(&event("Fault", "filtered", 1))
        .unwrap();
    sup.push_structured_event(&event("Alarm", "after", 1))
        .unwrap();
    assert_eq!(got.names(2), ["before", "after"]);
    assert_eq!(proxy.get_my_type().unwrap(), ProxyType::PushStructured);
    // The mapping filters too.
    let same = |f: Option<corbina_events::cos_notify_filter::MappingFilter>| {
        f.unwrap().as_object().ior() == mf.as_object().ior()
    };
    assert!(same(admin.get_priority_filter().unwrap()));
    assert!(same(proxy.get_lifetime_filter().unwrap()));
    assert!(matches!(
        proxy.connect_structured_push_consumer(Some(&c)),
        Err(corbina_events::cos_notify_channel_admin::structured_proxy_push_supplier::ConnectStructuredPushConsumerError::AlreadyConnected(_))
    ));
    client.destroy();
    drop(daemon);
    let _ = std::fs::remove_dir_all(&dir);
}

/// EventReliability=Persistent: the events a consumer has not had yet survive `kill -9`
/// (as many as its MaxEventsPerConsumer), and are delivered once only; a suspended push
/// consumer stays suspended.
#[test]
fn notify_persistent_events_survive_sigkill() {
    let dir = temp_dir("notify-persistent-events");
    let port = free_port();
    let (mut daemon, _) = start_daemon(port, &dir, &[]);
    let client = client_orb();
    let factory = notify_factory_at(&client, port);
    let persistent = [
        prop("ConnectionReliability", Any::from_short(1)),
        prop("EventReliability", Any::from_short(1)),
    ];
    let ch = factory.create_channel(&persistent, &[]).unwrap().0.unwrap();
    let reliability = ch.get_qos().unwrap();
    let er = reliability
        .iter()
        .find(|p| p.name == "EventReliability")
        .unwrap();
    assert_eq!(er.value.to_short(), Some(1));
    let admin = ch.get_default_consumer_admin().unwrap().unwrap();
    // A push consumer whose proxy is suspended: its events wait in its queue.
    let proxy = structured_proxy(&admin);
    let (c, got) = structured_consumer(&client);
    proxy.connect_structured_push_consumer(Some(&c)).unwrap();
    proxy.suspend_connection().unwrap();
    // A pull consumer keeping the 3 newest.
    let pull = structured_pull_proxy(&admin);
    pull.set_qos(&[prop("MaxEventsPerConsumer", Any::from_long(3))])
        .unwrap();
    pull.connect_structured_pull_consumer(None).unwrap();
    // A consumer of a best-effort channel beside them loses its queue.
    let plain = factory
        .create_channel(&[prop("ConnectionReliability", Any::from_short(1))], &[])
        .unwrap()
        .0
        .unwrap();
    let plain_pull = structured_pull_proxy(&plain.get_default_consumer_admin().unwrap().unwrap());
    plain_pull.connect_structured_pull_consumer(None).unwrap();

    let sup = structured_supplier(&ch.get_default_supplier_admin().unwrap().unwrap());
    let plain_sup = structured_supplier(&plain.get_default_supplier_admin().unwrap().unwrap());
    let names: Vec<String> = (0..5).map(|i| format!("e{i}")).collect();
    for n in &names {
        sup.push_structured_event(&event("Alarm", n, 1)).unwrap();
        plain_sup
            .push_structured_event(&event("Alarm", n, 1))
            .unwrap();
    }
    std::thread::sleep(Duration::from_millis(100));
    assert!(got.events.lock().unwrap().is_empty(), "suspended");

    daemon.kill();
    let (d, _) = start_daemon(port, &dir, &[]);
    daemon = d;
    // Still suspended (stored): nothing comes until the consumer resumes.
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        got.events.lock().unwrap().is_empty(),
        "suspended after restart"
    );
    assert!(proxy.suspend_connection().is_err(), "already inactive");
    proxy.resume_connection().unwrap();
    assert_eq!(got.names(5), names);
    let pulled: Vec<String> = (0..3)
        .map(|_| {
            let (e, has) = pull.try_pull_structured_event().unwrap();
            assert!(has);
            e.header.fixed_header.event_name
        })
        .collect();
    assert_eq!(pulled, names[2..]);
    assert!(!pull.try_pull_structured_event().unwrap().1);
    assert!(!plain_pull.try_pull_structured_event().unwrap().1);

    // Delivered events are not stored any more: nothing comes again after another crash.
    std::thread::sleep(Duration::from_millis(200));
    daemon.kill();
    let (d, _) = start_daemon(port, &dir, &[]);
    daemon = d;
    sup.push_structured_event(&event("Alarm", "after", 1))
        .unwrap();
    let mut want = names.clone();
    want.push("after".into());
    assert_eq!(got.names(6), want);
    let (e, has) = pull.try_pull_structured_event().unwrap();
    assert!(has);
    assert_eq!(e.header.fixed_header.event_name, "after");
    assert!(!pull.try_pull_structured_event().unwrap().1);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(got.events.lock().unwrap().len(), 6, "delivered once");
    client.destroy();
    drop(daemon);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn notify_pull_consumers_of_every_kind() {
    let s = setup("notify-pull-consumers");
    let ch = channel(&s, &[]);
    let admin = ch.get_default_consumer_admin().unwrap().unwrap();
    let (structured, sequence) = pull_suppliers(&admin);
    let any =
        AnyProxyPullSupplier::narrow(pull_supplier_of(&admin, ClientType::AnyEvent).as_object())
            .unwrap();
    assert_eq!(structured.get_my_type().unwrap(), ProxyType::PullStructured);
    // Not connected yet: Disconnected.
    assert!(structured.try_pull_structured_event().is_err());
    structured.connect_structured_pull_consumer(None).unwrap();
    sequence.connect_sequence_pull_consumer(None).unwrap();
    any.connect_any_pull_consumer(None).unwrap();
    assert!(!structured.try_pull_structured_event().unwrap().1);

    // A pull waits for the event (without holding the channel).
    let waiting = {
        let st = structured.clone();
        std::thread::spawn(move || st.pull_structured_event().unwrap())
    };
    std::thread::sleep(Duration::from_millis(50));
    let sup = structured_supplier(&ch.get_default_supplier_admin().unwrap().unwrap());
    for n in ["a", "b", "c", "d", "e"] {
        sup.push_structured_event(&event("Tick", n, 0)).unwrap();
    }
    assert_eq!(waiting.join().unwrap().header.fixed_header.event_name, "a");
    let names = |v: Vec<StructuredEvent>| -> Vec<String> {
        v.into_iter()
            .map(|e| e.header.fixed_header.event_name)
            .collect()
    };
    assert_eq!(
        structured
            .try_pull_structured_event()
            .unwrap()
            .0
            .header
            .fixed_header
            .event_name,
        "b"
    );
    // Sequences: at most what is asked for.
    assert_eq!(
        names(sequence.pull_structured_events(3).unwrap()),
        ["a", "b", "c"]
    );
    let (rest, has) = sequence.try_pull_structured_events(10).unwrap();
    assert!(has);
    assert_eq!(names(rest), ["d", "e"]);
    // The any consumer gets each structured event in an any.
    let a = any.pull().unwrap();
    let inner = a.extract::<StructuredEvent>().unwrap();
    assert_eq!(inner.header.fixed_header.event_name, "a");
    // A disconnected proxy is gone.
    structured.disconnect_structured_pull_supplier().unwrap();
    let e = structured.try_pull_structured_event().unwrap_err();
    assert!(format!("{e:?}").contains("ObjectNotExist"), "{e:?}");
}

#[test]
fn notify_channel_pulls_from_structured_and_sequence_suppliers() {
    let s = setup("notify-pull-suppliers");
    let ch = channel(&s, &[]);
    let (c, got) = structured_consumer(&s.client);
    structured_proxy(&ch.get_default_consumer_admin().unwrap().unwrap())
        .connect_structured_push_consumer(Some(&c))
        .unwrap();
    let sadmin = ch.get_default_supplier_admin().unwrap().unwrap();
    let obtain = |t| {
        sadmin
            .obtain_notification_pull_consumer(t)
            .unwrap()
            .0
            .unwrap()
    };
    let sp = StructuredProxyPullConsumer::narrow(obtain(ClientType::StructuredEvent).as_object())
        .unwrap();
    assert_eq!(sp.get_my_type().unwrap(), ProxyType::PullStructured);
    let r = serve(
        &s.client,
        StructuredPullSupplierSkeleton::new(source(&["s1", "s2", "s3"])),
    );
    sp.connect_structured_pull_supplier(Some(&StructuredPullSupplier::unchecked_narrow(&r)))
        .unwrap();
    assert_eq!(got.names(3), ["s1", "s2", "s3"]);
    sp.suspend_connection().unwrap();

    let qp =
        SequenceProxyPullConsumer::narrow(obtain(ClientType::SequenceEvent).as_object()).unwrap();
    let r = serve(
        &s.client,
        SequencePullSupplierSkeleton::new(source(&["q1", "q2", "q3", "q4"])),
    );
    qp.connect_sequence_pull_supplier(Some(&SequencePullSupplier::unchecked_narrow(&r)))
        .unwrap();
    assert_eq!(got.names(7)[3..], ["q1", "q2", "q3", "q4"]);
    assert!(qp.connect_sequence_pull_supplier(None).is_err());
    sp.resume_connection().unwrap();
    assert!(sp.resume_connection().is_err(), "already active");
}

#[test]
fn notify_priority_and_lifetime_mapping_filters() {
    let s = setup("notify-mapping");
    let ch = channel(&s, &[]);
    let ff = ch.get_default_filter_factory().unwrap().unwrap();
    let mapping = |default: Any, expr: &str, value: Any| {
        let m = ff
            .create_mapping_filter("EXTENDED_TCL", &default)
            .unwrap()
            .unwrap();
        m.add_mapping_constraints(&[MappingConstraintPair {
            constraint_expression: ConstraintExp {
                event_types: vec![],
                constraint_expr: expr.into(),
            },
            result_to_set: value,
        }])
        .unwrap();
        m
    };
    // The admin makes Faults urgent; the proxy gives Debug events 1 ms to live.
    let admin = ch.get_default_consumer_admin().unwrap().unwrap();
    admin
        .set_priority_filter(Some(&mapping(
            Any::from_short(0),
            "$type_name == 'Fault'",
            Any::from_short(100),
        )))
        .unwrap();
    assert!(admin.get_priority_filter().unwrap().is_some());
    let proxy = structured_proxy(&admin);
    proxy
        .set_lifetime_filter(Some(&mapping(
            Any::from_ulonglong(0),
            "$type_name == 'Debug'",
            Any::from_ulonglong(10_000),
        )))
        .unwrap();
    proxy
        .set_qos(&[prop("OrderPolicy", Any::from_short(2))])
        .unwrap();
    let (c, got) = structured_consumer(&s.client);
    proxy.connect_structured_push_consumer(Some(&c)).unwrap();
    proxy.suspend_connection().unwrap();
    let sup = structured_supplier(&ch.get_default_supplier_admin().unwrap().unwrap());
    for (t, n, p) in [
        ("Alarm", "alarm-5", 5),
        ("Fault", "fault-1", 1),
        ("Debug", "debug-9", 9),
        ("Alarm", "alarm-3", 3),
    ] {
        sup.push_structured_event(&event(t, n, p)).unwrap();
    }
    std::thread::sleep(Duration::from_millis(30));
    proxy.resume_connection().unwrap();
    assert_eq!(got.names(3), ["fault-1", "alarm-5", "alarm-3"]);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        got.events.lock().unwrap().len(),
        3,
        "the Debug event expired"
    );
    // The event itself keeps its own header: only its place in this queue changed.
    let fault = &got.events.lock().unwrap()[0];
    assert_eq!(
        fault.header.variable_header[0].value.to_short(),
        Some(1),
        "{fault:?}"
    );
}

/// A TimeBase::UtcT `ms` milliseconds from now (before now when negative).
fn utc_in(ms: i64) -> Any {
    let since_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let t =
        122_192_928_000_000_000 + (since_unix.as_nanos() / 100) as i128 + i128::from(ms) * 10_000;
    Any::insert(&UtcT {
        time: t as u64,
        inacclo: 0,
        inacchi: 0,
        tdf: 0,
    })
    .unwrap()
}

#[test]
fn notify_start_and_stop_times() {
    let s = setup("notify-times");
    let ch = channel(&s, &[]);
    let proxy = structured_proxy(&ch.get_default_consumer_admin().unwrap().unwrap());
    let (c, got) = structured_consumer(&s.client);
    proxy.connect_structured_push_consumer(Some(&c)).unwrap();
    let sup = structured_supplier(&ch.get_default_supplier_admin().unwrap().unwrap());
    let with = |name: &str, field: &str, at: Any| {
        let mut e = event("Alarm", name, 0);
        e.header.variable_header.push(prop(field, at));
        e
    };
    // Not supported (the default): the header's times are not looked at.
    sup.push_structured_event(&with("ignored", "StartTime", utc_in(60_000)))
        .unwrap();
    assert_eq!(got.names(1), ["ignored"]);
    sup.set_qos(&[
        prop("StartTimeSupported", Any::from_boolean(true)),
        prop("StopTimeSupported", Any::from_boolean(true)),
    ])
    .unwrap();
    let q = sup.get_qos().unwrap();
    let start = q.iter().find(|p| p.name == "StartTimeSupported").unwrap();
    assert_eq!(start.value.to_boolean(), Some(true));
    let t0 = std::time::Instant::now();
    sup.push_structured_event(&with("held", "StartTime", utc_in(300)))
        .unwrap();
    sup.push_structured_event(&with("stopped", "StopTime", utc_in(-1_000)))
        .unwrap();
    sup.push_structured_event(&with("now", "StopTime", utc_in(60_000)))
        .unwrap();
    // The held one waits for its StartTime while the next goes by; the stopped one goes.
    assert_eq!(got.names(2), ["ignored", "now"]);
    assert_eq!(got.names(3), ["ignored", "now", "held"]);
    assert!(
        t0.elapsed() >= Duration::from_millis(250),
        "{:?}",
        t0.elapsed()
    );
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(got.events.lock().unwrap().len(), 3);
    // A pull consumer waiting in `pull` gets a held event at its StartTime.
    let admin = ch.get_default_consumer_admin().unwrap().unwrap();
    let puller = structured_pull_proxy(&admin);
    puller.connect_structured_pull_consumer(None).unwrap();
    let t0 = std::time::Instant::now();
    sup.push_structured_event(&with("pulled", "StartTime", utc_in(200)))
        .unwrap();
    let e = puller.pull_structured_event().unwrap();
    assert_eq!(e.header.fixed_header.event_name, "pulled");
    assert!(
        t0.elapsed() >= Duration::from_millis(150),
        "{:?}",
        t0.elapsed()
    );
}
