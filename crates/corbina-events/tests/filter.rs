//! The Notification Service's filters (CosNotifyFilter) with the ETCL grammar, through
//! Corbina clients over TCP: constraints added, matched, modified, removed; mapping
//! filters; subscription callbacks; and a filter's constraints kept across a `kill -9` of
//! the daemon.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use corbina::{Any, SystemExceptionKind};
use corbina_events::cos_notification::{
    EventHeader, EventType, FixedEventHeader, Property, StructuredEvent,
};
use corbina_events::cos_notify_comm::notify_subscribe::SubscriptionChangeError;
use corbina_events::cos_notify_comm::{
    NotifySubscribe, NotifySubscribeServant, NotifySubscribeSkeleton,
};
use corbina_events::cos_notify_filter::filter::{
    AddConstraintsError, GetConstraintsError, MatchTypedError, ModifyConstraintsError,
};
use corbina_events::cos_notify_filter::filter_factory::CreateFilterError;
use corbina_events::cos_notify_filter::mapping_filter::AddMappingConstraintsError;
use corbina_events::cos_notify_filter::{
    ConstraintExp, ConstraintInfo, Filter, FilterFactory, MappingConstraintPair,
};

const WAIT: Duration = Duration::from_secs(10);

fn et(d: &str, t: &str) -> EventType {
    EventType {
        domain_name: d.into(),
        type_name: t.into(),
    }
}

fn exp(types: &[EventType], expr: &str) -> ConstraintExp {
    ConstraintExp {
        event_types: types.to_vec(),
        constraint_expr: expr.into(),
    }
}

fn event(domain: &str, ty: &str, priority: i16, severity: i32) -> StructuredEvent {
    StructuredEvent {
        header: EventHeader {
            fixed_header: FixedEventHeader {
                event_type: et(domain, ty),
                event_name: "e".into(),
            },
            variable_header: vec![Property {
                name: "priority".into(),
                value: Any::from_short(priority),
            }],
        },
        filterable_data: vec![Property {
            name: "severity".into(),
            value: Any::from_long(severity),
        }],
        remainder_of_body: Any::default(),
    }
}

fn factory(orb: &corbina::Orb, url: &str) -> FilterFactory {
    FilterFactory::narrow(&orb.string_to_object(url).unwrap()).unwrap()
}

#[test]
fn event_filter_constraints_match_and_change() {
    let svc = InProcess::start("filter", |_| {});
    let client = client_orb();
    let ff = factory(&client, &svc.url("FilterFactory"));
    assert!(matches!(
        ff.create_filter("XPATH"),
        Err(CreateFilterError::InvalidGrammar(_))
    ));
    let f = ff.create_filter("EXTENDED_TCL").unwrap().unwrap();
    assert_eq!(f.get_constraint_grammar().unwrap(), "EXTENDED_TCL");
    // No constraints: nothing matches.
    assert!(!f
        .match_structured(&event("Telecom", "Alarm", 5, 1))
        .unwrap());

    let added = f
        .add_constraints(&[
            exp(
                &[et("Telecom", "Alarm")],
                "$.header.variable_header(priority) > 3",
            ),
            exp(&[et("*", "Fault*")], "$severity >= 2"),
        ])
        .unwrap();
    assert_eq!(added.len(), 2);
    let (alarm_id, fault_id) = (added[0].constraint_id, added[1].constraint_id);
    assert_ne!(alarm_id, fault_id);
    assert!(f
        .match_structured(&event("Telecom", "Alarm", 5, 0))
        .unwrap());
    assert!(!f
        .match_structured(&event("Telecom", "Alarm", 2, 9))
        .unwrap());
    assert!(f
        .match_structured(&event("Power", "FaultRaised", 0, 2))
        .unwrap());
    assert!(!f
        .match_structured(&event("Power", "FaultRaised", 9, 1))
        .unwrap());
    assert!(!f.match_structured(&event("Power", "Alarm", 9, 9)).unwrap());
    // An invalid constraint adds nothing, not even the valid ones beside it.
    let e = f
        .add_constraints(&[exp(&[], "$severity > 100"), exp(&[], "$severity >")])
        .unwrap_err();
    assert!(
        matches!(e, AddConstraintsError::InvalidConstraint(ref c) if c.constr.constraint_expr == "$severity >"),
        "{e:?}"
    );
    assert_eq!(f.get_all_constraints().unwrap().len(), 2);

    // Plain anys are of type %ANY.
    let any_filter = ff.create_filter("ETCL").unwrap().unwrap();
    any_filter
        .add_constraints(&[exp(&[et("", "%ANY")], "$ > 10")])
        .unwrap();
    assert!(any_filter.r#match(&Any::from_long(11)).unwrap());
    assert!(!any_filter.r#match(&Any::from_long(10)).unwrap());
    assert!(!any_filter.r#match(&Any::from_string("x").unwrap()).unwrap());
    assert!(matches!(
        any_filter.match_typed(&[]),
        Err(MatchTypedError::UnsupportedFilterableData(_))
    ));

    // modify: delete the fault constraint, change the alarm's threshold.
    f.modify_constraints(
        &[fault_id],
        &[ConstraintInfo {
            constraint_expression: exp(&[et("Telecom", "Alarm")], "$priority > 6"),
            constraint_id: alarm_id,
        }],
    )
    .unwrap();
    assert!(!f
        .match_structured(&event("Telecom", "Alarm", 5, 0))
        .unwrap());
    assert!(f
        .match_structured(&event("Telecom", "Alarm", 7, 0))
        .unwrap());
    assert!(!f
        .match_structured(&event("Power", "FaultRaised", 0, 2))
        .unwrap());
    // Unknown ids: nothing changes.
    assert!(matches!(
        f.modify_constraints(&[alarm_id, 999], &[]),
        Err(ModifyConstraintsError::ConstraintNotFound(ref n)) if n.id == 999
    ));
    assert!(matches!(
        f.get_constraints(&[fault_id]),
        Err(GetConstraintsError::ConstraintNotFound(_))
    ));
    let got = f.get_constraints(&[alarm_id]).unwrap();
    assert_eq!(
        got[0].constraint_expression.constraint_expr,
        "$priority > 6"
    );
    f.remove_all_constraints().unwrap();
    assert!(f.get_all_constraints().unwrap().is_empty());
    f.destroy().unwrap();
    let e = f.get_all_constraints().unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::ObjectNotExist);
    client.destroy();
}

#[test]
fn event_filter_mapping_values() {
    let svc = InProcess::start("mapping", |_| {});
    let client = client_orb();
    let ff = factory(&client, &svc.url("FilterFactory"));
    let m = ff
        .create_mapping_filter("EXTENDED_TCL", &Any::from_short(0))
        .unwrap()
        .unwrap();
    assert_eq!(m.get_default_value().unwrap().to_short(), Some(0));
    let pair = |expr: &str, v: Any| MappingConstraintPair {
        constraint_expression: exp(&[], expr),
        result_to_set: v,
    };
    m.add_mapping_constraints(&[
        pair("$severity >= 5", Any::from_short(10)),
        pair("$severity >= 2", Any::from_short(5)),
    ])
    .unwrap();
    assert!(matches!(
        m.add_mapping_constraints(&[pair("TRUE", Any::from_long(1))]),
        Err(AddMappingConstraintsError::InvalidValue(_))
    ));
    let (hit, v) = m.match_structured(&event("d", "t", 0, 7)).unwrap();
    assert!(hit);
    assert_eq!(v.to_short(), Some(10));
    let (hit, v) = m.match_structured(&event("d", "t", 0, 3)).unwrap();
    assert!(hit);
    assert_eq!(v.to_short(), Some(5));
    let (hit, v) = m.match_structured(&event("d", "t", 0, 1)).unwrap();
    assert!(!hit);
    assert_eq!(v.to_short(), Some(0));
    client.destroy();
}

/// A `NotifySubscribe` recording the types it is told of.
#[derive(Default)]
struct Changes(Mutex<Vec<(Vec<String>, Vec<String>)>>);

struct Subscriber(Arc<Changes>);

impl NotifySubscribeServant for Subscriber {
    fn subscription_change(
        &self,
        added: &[EventType],
        removed: &[EventType],
    ) -> Result<(), SubscriptionChangeError> {
        let names = |v: &[EventType]| v.iter().map(|t| t.type_name.clone()).collect();
        self.0
             .0
            .lock()
            .unwrap()
            .push((names(added), names(removed)));
        Ok(())
    }
}

#[test]
fn event_filter_callbacks_hear_subscription_changes() {
    let svc = InProcess::start("callbacks", |_| {});
    let client = client_orb();
    let ff = factory(&client, &svc.url("FilterFactory"));
    let f = ff.create_filter("EXTENDED_TCL").unwrap().unwrap();
    let changes = Arc::new(Changes::default());
    let poa = client.root_poa();
    let id = poa
        .activate_object(Arc::new(NotifySubscribeSkeleton::new(Subscriber(
            changes.clone(),
        ))))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    let sub =
        NotifySubscribe::unchecked_narrow(&poa.id_to_reference(&id).unwrap().without_collocation());
    let cb = f.attach_callback(Some(&sub)).unwrap();
    assert_eq!(f.get_callbacks().unwrap(), [cb]);
    f.add_constraints(&[exp(&[et("d", "Alarm")], "TRUE")])
        .unwrap();
    assert!(wait_until(WAIT, || changes.0.lock().unwrap().len() == 1));
    f.remove_all_constraints().unwrap();
    assert!(wait_until(WAIT, || changes.0.lock().unwrap().len() == 2));
    let c = changes.0.lock().unwrap().clone();
    assert_eq!(c[0], (vec!["Alarm".to_owned()], vec![]));
    assert_eq!(c[1], (vec![], vec!["Alarm".to_owned()]));
    f.detach_callback(cb).unwrap();
    assert!(f.detach_callback(cb).is_err());
    assert!(f.get_callbacks().unwrap().is_empty());
    client.destroy();
}

#[test]
fn event_filter_survives_sigkill() {
    let dir = temp_dir("filter-crash");
    let port = free_port();
    let (mut daemon, _) = start_daemon(port, &dir, &[]);
    let client = client_orb();
    let ff = factory(
        &client,
        &format!("corbaloc::127.0.0.1:{port}/FilterFactory"),
    );
    let f: Filter = ff.create_filter("EXTENDED_TCL").unwrap().unwrap();
    f.add_constraints(&[exp(&[et("Telecom", "Alarm")], "$priority > 3")])
        .unwrap();
    let m = ff
        .create_mapping_filter("EXTENDED_TCL", &Any::from_string("low").unwrap())
        .unwrap()
        .unwrap();
    m.add_mapping_constraints(&[MappingConstraintPair {
        constraint_expression: exp(&[], "$priority > 3"),
        result_to_set: Any::from_string("high").unwrap(),
    }])
    .unwrap();
    daemon.kill();
    let (d, _) = start_daemon(port, &dir, &[]);
    daemon = d;
    assert!(f
        .match_structured(&event("Telecom", "Alarm", 5, 0))
        .unwrap());
    assert!(!f
        .match_structured(&event("Telecom", "Alarm", 2, 0))
        .unwrap());
    let (hit, v) = m.match_structured(&event("x", "y", 9, 0)).unwrap();
    assert!(hit);
    assert_eq!(v.to_string_value().as_deref(), Some("high"));
    // New constraints get new ids after the restart.
    let more = f.add_constraints(&[exp(&[], "FALSE")]).unwrap();
    let all = f.get_all_constraints().unwrap();
    assert_eq!(all.len(), 2);
    assert!(
        all.iter()
            .filter(|c| c.constraint_id == more[0].constraint_id)
            .count()
            == 1
    );
    client.destroy();
    drop(daemon);
    let _ = std::fs::remove_dir_all(&dir);
}
