//! Shared by the notification tests: structured and sequence push consumers that record
//! what they get, and structured events to push.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use corbina::SystemExceptionKind;
use corbina::{Any, Orb, SystemException};
use corbina_events::cos_notification::{
    EventHeader, EventType, FixedEventHeader, Property, StructuredEvent,
};
use corbina_events::cos_notify_channel_admin::{
    ClientType, ConsumerAdmin, ProxySupplier, SequenceProxyPullSupplier,
    StructuredProxyPullSupplier,
};
use corbina_events::cos_notify_comm::notify_publish::OfferChangeError;
use corbina_events::cos_notify_comm::notify_subscribe::SubscriptionChangeError;
use corbina_events::cos_notify_comm::sequence_pull_supplier::{
    PullStructuredEventsError, TryPullStructuredEventsError,
};
use corbina_events::cos_notify_comm::sequence_push_consumer::PushStructuredEventsError;
use corbina_events::cos_notify_comm::structured_pull_supplier::{
    PullStructuredEventError, TryPullStructuredEventError,
};
use corbina_events::cos_notify_comm::structured_push_consumer::PushStructuredEventError;
use corbina_events::cos_notify_comm::{
    NotifyPublishServant, SequencePushConsumer, SequencePushConsumerServant,
    SequencePushConsumerSkeleton, StructuredPushConsumer, StructuredPushConsumerServant,
    StructuredPushConsumerSkeleton,
};
use corbina_events::cos_notify_comm::{
    NotifySubscribeServant, SequencePullSupplierServant, StructuredPullSupplierServant,
};

const WAIT: Duration = Duration::from_secs(10);

/// The types added and removed by one change.
pub type Change = (Vec<EventType>, Vec<EventType>);

/// What a structured or sequence consumer received: the events, and each push's size.
#[derive(Default)]
pub struct Got {
    pub events: Mutex<Vec<StructuredEvent>>,
    pub batches: Mutex<Vec<usize>>,
    pub offers: Mutex<Vec<Change>>,
    pub arrived: Condvar,
}

impl Got {
    pub fn wait_for(&self, n: usize, limit: Duration) -> Vec<StructuredEvent> {
        super::wait_len(&self.events, &self.arrived, n, limit)
    }

    pub fn names(&self, n: usize) -> Vec<String> {
        self.wait_for(n, WAIT)
            .iter()
            .map(|e| e.header.fixed_header.event_name.clone())
            .collect()
    }
}

pub struct Consumer(pub Arc<Got>);

impl NotifyPublishServant for Consumer {
    fn offer_change(
        &self,
        added: &[EventType],
        removed: &[EventType],
    ) -> Result<(), OfferChangeError> {
        self.0
            .offers
            .lock()
            .unwrap()
            .push((added.to_vec(), removed.to_vec()));
        self.0.arrived.notify_all();
        Ok(())
    }
}

impl StructuredPushConsumerServant for Consumer {
    fn push_structured_event(&self, e: &StructuredEvent) -> Result<(), PushStructuredEventError> {
        self.0.events.lock().unwrap().push(e.clone());
        self.0.batches.lock().unwrap().push(1);
        self.0.arrived.notify_all();
        Ok(())
    }

    fn disconnect_structured_push_consumer(&self) -> Result<(), SystemException> {
        Ok(())
    }
}

impl SequencePushConsumerServant for Consumer {
    fn push_structured_events(
        &self,
        e: &[StructuredEvent],
    ) -> Result<(), PushStructuredEventsError> {
        self.0.events.lock().unwrap().extend(e.iter().cloned());
        self.0.batches.lock().unwrap().push(e.len());
        self.0.arrived.notify_all();
        Ok(())
    }

    fn disconnect_sequence_push_consumer(&self) -> Result<(), SystemException> {
        Ok(())
    }
}

pub fn serve<S: corbina::Servant + 'static>(orb: &Orb, s: S) -> corbina::ObjectRef {
    let poa = orb.root_poa();
    let id = poa.activate_object(Arc::new(s)).unwrap();
    poa.the_poa_manager().activate().unwrap();
    poa.id_to_reference(&id).unwrap().without_collocation()
}

pub fn structured_consumer(orb: &Orb) -> (StructuredPushConsumer, Arc<Got>) {
    let got = Arc::new(Got::default());
    let r = serve(
        orb,
        StructuredPushConsumerSkeleton::new(Consumer(got.clone())),
    );
    (StructuredPushConsumer::unchecked_narrow(&r), got)
}

pub fn sequence_consumer(orb: &Orb) -> (SequencePushConsumer, Arc<Got>) {
    let got = Arc::new(Got::default());
    let r = serve(
        orb,
        SequencePushConsumerSkeleton::new(Consumer(got.clone())),
    );
    (SequencePushConsumer::unchecked_narrow(&r), got)
}

pub fn et(domain: &str, type_name: &str) -> EventType {
    EventType {
        domain_name: domain.into(),
        type_name: type_name.into(),
    }
}

pub fn prop(name: &str, value: Any) -> Property {
    Property {
        name: name.into(),
        value,
    }
}

/// A structured event `name` of type `Telecom/<type_name>` with a priority header field.
pub fn event(type_name: &str, name: &str, priority: i16) -> StructuredEvent {
    StructuredEvent {
        header: EventHeader {
            fixed_header: FixedEventHeader {
                event_type: et("Telecom", type_name),
                event_name: name.into(),
            },
            variable_header: vec![prop("Priority", Any::from_short(priority))],
        },
        filterable_data: vec![prop("severity", Any::from_long(i32::from(priority)))],
        remainder_of_body: Any::from_string(name).unwrap(),
    }
}

/// The notification channel factory of the daemon on `127.0.0.1:port`.
pub fn notify_factory_at(
    orb: &Orb,
    port: u16,
) -> corbina_events::cos_notify_channel_admin::EventChannelFactory {
    let url = format!(
        "corbaloc::127.0.0.1:{port}/{}",
        corbina_events::NOTIFY_FACTORY_KEY
    );
    corbina_events::cos_notify_channel_admin::EventChannelFactory::narrow(
        &orb.string_to_object(&url).unwrap(),
    )
    .unwrap()
}

/// A structured (and sequence) pull supplier handing out the events it was given.
pub struct Source(pub Mutex<std::collections::VecDeque<StructuredEvent>>);

impl NotifySubscribeServant for Source {
    fn subscription_change(
        &self,
        _: &[EventType],
        _: &[EventType],
    ) -> Result<(), SubscriptionChangeError> {
        Ok(())
    }
}

impl StructuredPullSupplierServant for Source {
    fn pull_structured_event(&self) -> Result<StructuredEvent, PullStructuredEventError> {
        // The channel calls try_pull only; a pull here must not block for ever.
        Err(SystemException::new(SystemExceptionKind::Transient, 0).into())
    }

    fn try_pull_structured_event(
        &self,
    ) -> Result<(StructuredEvent, bool), TryPullStructuredEventError> {
        match self.0.lock().unwrap().pop_front() {
            Some(e) => Ok((e, true)),
            None => Ok((event("None", "", 0), false)),
        }
    }

    fn disconnect_structured_pull_supplier(&self) -> Result<(), SystemException> {
        Ok(())
    }
}

impl SequencePullSupplierServant for Source {
    fn pull_structured_events(
        &self,
        _: i32,
    ) -> Result<Vec<StructuredEvent>, PullStructuredEventsError> {
        Err(SystemException::new(SystemExceptionKind::Transient, 0).into())
    }

    fn try_pull_structured_events(
        &self,
        max_number: i32,
    ) -> Result<(Vec<StructuredEvent>, bool), TryPullStructuredEventsError> {
        let mut q = self.0.lock().unwrap();
        let n = q.len().min(max_number.max(0) as usize);
        let batch: Vec<_> = q.drain(..n).collect();
        let has = !batch.is_empty();
        Ok((batch, has))
    }

    fn disconnect_sequence_pull_supplier(&self) -> Result<(), SystemException> {
        Ok(())
    }
}

pub fn source(names: &[&str]) -> Source {
    Source(Mutex::new(
        names.iter().map(|n| event("Tick", n, 0)).collect(),
    ))
}

/// A new pull supplier proxy of `kind` from `admin` (not connected).
pub fn pull_supplier_of(admin: &ConsumerAdmin, kind: ClientType) -> ProxySupplier {
    admin
        .obtain_notification_pull_supplier(kind)
        .unwrap()
        .0
        .unwrap()
}

/// A new structured pull supplier proxy from `admin` (not connected).
pub fn structured_pull_proxy(admin: &ConsumerAdmin) -> StructuredProxyPullSupplier {
    let p = pull_supplier_of(admin, ClientType::StructuredEvent);
    StructuredProxyPullSupplier::narrow(p.as_object()).unwrap()
}

/// A new structured and a new sequence pull supplier proxy from `admin` (not connected).
pub fn pull_suppliers(
    admin: &ConsumerAdmin,
) -> (StructuredProxyPullSupplier, SequenceProxyPullSupplier) {
    let sequence = pull_supplier_of(admin, ClientType::SequenceEvent);
    (
        structured_pull_proxy(admin),
        SequenceProxyPullSupplier::narrow(sequence.as_object()).unwrap(),
    )
}
