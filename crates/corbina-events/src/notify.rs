//! The Notification Service's servants (CosNotifyChannelAdmin): the channel factory, the
//! channel, its admins, and the push proxies of the three event kinds. They share the
//! event channel's objects ([`crate::channel`]): a notification proxy is an event proxy
//! with a [`Link`] (admin, filters, QoS) and a peer of its kind.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use corbina::{ObjectRef, SystemException, SystemExceptionKind};

use crate::admin::{Admin, Link, Mapping, NotifyParams, Style};
use crate::channel::{
    gone, lock, nil_peer, oid, sys, Channel, Conn, Proxy, PullConsumerProxy, PullSupplierProxy,
    PushConsumerProxy, PushSupplierProxy, Shared, Source, Target, TryFail,
};
use crate::cos_event_channel_admin::{self as ec, AlreadyConnected};
use crate::cos_event_comm::{PushConsumer, PushSupplier};
use crate::cos_notification::admin_properties_admin::SetAdminError;
use crate::cos_notification::qo_s_admin::{SetQosError, ValidateQosError};
use crate::cos_notification::{
    EventType, NamedPropertyRange, Property, QoSAdminServant, UnsupportedAdmin, UnsupportedQoS,
};
use crate::cos_notify_channel_admin::{self as nc, *};
use crate::cos_notify_comm::notify_publish::OfferChangeError;
use crate::cos_notify_comm::notify_subscribe::SubscriptionChangeError;
use crate::cos_notify_comm::sequence_push_consumer::PushStructuredEventsError;
use crate::cos_notify_comm::structured_push_consumer::PushStructuredEventError;
use crate::cos_notify_comm::{
    NotifyPublish, NotifyPublishServant, NotifySubscribe, NotifySubscribeServant,
    SequencePushConsumer, SequencePushConsumerServant, SequencePushSupplier,
    SequencePushSupplierServant, StructuredPushConsumer, StructuredPushConsumerServant,
    StructuredPushSupplier, StructuredPushSupplierServant,
};
use crate::cos_notify_filter::filter_admin::{GetFilterError, RemoveFilterError};
use crate::cos_notify_filter::{
    Filter, FilterAdminServant, FilterFactory, FilterNotFound, MappingFilter,
};
use crate::pull::{PullPeer, PullSource, Waiter};
use crate::qos::{admin_properties, admin_props, AdminProps, Qos};
use crate::queue::Body;
use crate::store::{ChannelParams, Kind};

/// The object key of the notification channel factory
/// (`corbaloc::host:port/NotificationService`, JacORB's and the OMG's initial reference
/// name for it).
pub const NOTIFY_FACTORY_KEY: &str = "NotificationService";

fn unsupported_qos(errs: Vec<crate::cos_notification::PropertyError>) -> UnsupportedQoS {
    UnsupportedQoS { qos_err: errs }
}

/// `i32` of an object id (ids are handed out from 16 upwards; beyond `i32::MAX` they
/// would not fit an `AdminID` or `ProxyID`).
fn number(id: u64) -> i32 {
    i32::try_from(id).unwrap_or(i32::MAX)
}

/// The repository id of a proxy of `kind` and `style`.
fn repository_id(kind: Kind, style: Style) -> &'static str {
    match (kind, style) {
        (Kind::PushSupplier, Style::Event) => ec::ProxyPushSupplier::REPOSITORY_ID,
        (Kind::PullSupplier, Style::Event) => ec::ProxyPullSupplier::REPOSITORY_ID,
        (Kind::PushConsumer, Style::Event) => ec::ProxyPushConsumer::REPOSITORY_ID,
        (Kind::PullConsumer, Style::Event) => ec::ProxyPullConsumer::REPOSITORY_ID,
        (Kind::PushSupplier, Style::Structured) => StructuredProxyPushSupplier::REPOSITORY_ID,
        (Kind::PushSupplier, Style::Sequence) => SequenceProxyPushSupplier::REPOSITORY_ID,
        (Kind::PushSupplier, _) => nc::ProxyPushSupplier::REPOSITORY_ID,
        (Kind::PushConsumer, Style::Structured) => StructuredProxyPushConsumer::REPOSITORY_ID,
        (Kind::PushConsumer, Style::Sequence) => SequenceProxyPushConsumer::REPOSITORY_ID,
        (Kind::PushConsumer, _) => nc::ProxyPushConsumer::REPOSITORY_ID,
        (Kind::PullSupplier, Style::Structured) => StructuredProxyPullSupplier::REPOSITORY_ID,
        (Kind::PullSupplier, Style::Sequence) => SequenceProxyPullSupplier::REPOSITORY_ID,
        (Kind::PullSupplier, _) => nc::ProxyPullSupplier::REPOSITORY_ID,
        (_, Style::Structured) => StructuredProxyPullConsumer::REPOSITORY_ID,
        (_, Style::Sequence) => SequenceProxyPullConsumer::REPOSITORY_ID,
        (_, _) => nc::ProxyPullConsumer::REPOSITORY_ID,
    }
}

fn proxy_type(kind: Kind, style: Style) -> ProxyType {
    let push = matches!(kind, Kind::PushSupplier | Kind::PushConsumer);
    match (push, style) {
        (true, Style::Structured) => ProxyType::PushStructured,
        (true, Style::Sequence) => ProxyType::PushSequence,
        (true, _) => ProxyType::PushAny,
        (false, Style::Structured) => ProxyType::PullStructured,
        (false, Style::Sequence) => ProxyType::PullSequence,
        (false, _) => ProxyType::PullAny,
    }
}

fn style_of(ctype: ClientType) -> Style {
    match ctype {
        ClientType::AnyEvent => Style::Any,
        ClientType::StructuredEvent => Style::Structured,
        ClientType::SequenceEvent => Style::Sequence,
    }
}

/// Creates, stores and serves a notification channel; returns it and its `ChannelID`.
pub(crate) fn create_channel(
    shared: &Arc<Shared>,
    initial_qos: &[Property],
    initial_admin: &[Property],
) -> Result<(ObjectRef, i32), event_channel_factory::CreateChannelError> {
    let qos = Qos::default().with(initial_qos).map_err(unsupported_qos)?;
    let mut max_queue = shared.options.max_queue.max(1);
    let mut props = AdminProps::default();
    admin_props(&mut max_queue, &mut props, initial_admin)
        .map_err(|admin_err| UnsupportedAdmin { admin_err })?;
    let np = NotifyParams::new(qos.clone(), max_queue, props);
    let admin = Admin::new(0, 0, true, false, qos.clone())
        .encode()
        .map_err(SystemException::from)?;
    let data = np.encode().map_err(SystemException::from)?;
    let id = shared
        .store
        .create_group(&[
            (Kind::NotifyChannel, &data),
            (Kind::NotifyConsumerAdmin, &admin),
            (Kind::NotifySupplierAdmin, &admin),
        ])
        .map_err(SystemException::from)?;
    let ch = Channel::new(id, notify_params(shared), Arc::downgrade(shared), Some(np));
    serve(shared, &ch)?;
    Ok((
        shared.reference(id, nc::EventChannel::REPOSITORY_ID),
        number(id),
    ))
}

/// A notification channel's event-channel parameters (it has no corbaloc name).
pub(crate) fn notify_params(shared: &Shared) -> ChannelParams {
    let mut p = shared.default_params();
    p.ins_name = None;
    p
}

/// Activates a notification channel's servant and its admins', and lists the channel.
pub(crate) fn serve(shared: &Arc<Shared>, ch: &Arc<Channel>) -> Result<(), SystemException> {
    activate(
        shared,
        ch.id,
        Arc::new(EventChannelSkeleton::new(ChannelRef(ch.clone()))),
    )?;
    let admins: Vec<Arc<Admin>> = ch.lock_state().admins.values().cloned().collect();
    for a in admins {
        activate_admin(shared, ch, a)?;
    }
    lock(&shared.channels).insert(ch.id, ch.clone());
    Ok(())
}

fn activate(
    shared: &Shared,
    id: u64,
    servant: Arc<dyn corbina::Servant>,
) -> Result<(), SystemException> {
    shared
        .poa
        .activate_object_with_id(oid(id), servant)
        .map_err(|_| {
            sys(
                SystemExceptionKind::Internal,
                corbina::error::minor::INTERNAL_EVENTS,
            )
        })
}

pub(crate) fn activate_admin(
    shared: &Shared,
    ch: &Arc<Channel>,
    admin: Arc<Admin>,
) -> Result<(), SystemException> {
    let id = admin.id;
    let r = AdminRef {
        ch: ch.clone(),
        admin: admin.clone(),
    };
    if admin.consumer {
        activate(shared, id, Arc::new(ConsumerAdminSkeleton::new(r)))
    } else {
        activate(shared, id, Arc::new(SupplierAdminSkeleton::new(r)))
    }
}

/// Serves a stored admin again.
pub(crate) fn restore_admin(
    shared: &Shared,
    ch: &Arc<Channel>,
    id: u64,
    consumer: bool,
    data: &[u8],
) -> Result<(), String> {
    let object = |b: &[u8]| shared.object(b);
    let mut a = Admin::decode(id, consumer, data, &object).map_err(|e| e.to_string())?;
    a.number = if id == ch.id + 1 || id == ch.id + 2 {
        0
    } else {
        number(id)
    };
    let a = Arc::new(a);
    ch.put_admin(a.clone());
    // The default admins were activated with the channel; their servant holds the admin
    // made by `Channel::new`: serve the stored one instead.
    let _ = shared.poa.deactivate_object(&oid(id));
    activate_admin(shared, ch, a).map_err(|e| e.to_string())
}

/// Activates a notification proxy's servant.
pub(crate) fn activate_proxy(shared: &Shared, proxy: &Proxy) -> Result<(), SystemException> {
    let style = proxy.link().style;
    let servant: Arc<dyn corbina::Servant> = match proxy {
        Proxy::PushConsumer(p) => match style {
            Style::Structured => Arc::new(StructuredProxyPushConsumerSkeleton::from_arc(p.clone())),
            Style::Sequence => Arc::new(SequenceProxyPushConsumerSkeleton::from_arc(p.clone())),
            _ => Arc::new(ProxyPushConsumerSkeleton::from_arc(p.clone())),
        },
        Proxy::PushSupplier(p) => match style {
            Style::Structured => Arc::new(StructuredProxyPushSupplierSkeleton::new(p.clone())),
            Style::Sequence => Arc::new(SequenceProxyPushSupplierSkeleton::new(p.clone())),
            _ => Arc::new(ProxyPushSupplierSkeleton::new(p.clone())),
        },
        Proxy::PullSupplier(p) => match style {
            Style::Structured => {
                Arc::new(AmhStructuredProxyPullSupplierSkeleton::from_arc(p.clone()))
            }
            Style::Sequence => Arc::new(AmhSequenceProxyPullSupplierSkeleton::from_arc(p.clone())),
            _ => Arc::new(AmhProxyPullSupplierSkeleton::from_arc(p.clone())),
        },
        Proxy::PullConsumer(p) => match style {
            Style::Structured => Arc::new(StructuredProxyPullConsumerSkeleton::new(p.clone())),
            Style::Sequence => Arc::new(SequenceProxyPullConsumerSkeleton::new(p.clone())),
            _ => Arc::new(ProxyPullConsumerSkeleton::new(p.clone())),
        },
    };
    activate(shared, proxy.id(), servant)
}

/// `CosNotifyChannelAdmin::EventChannelFactory`.
pub(crate) struct Factory {
    pub(crate) shared: Weak<Shared>,
}

impl Factory {
    fn shared(&self) -> Result<Arc<Shared>, SystemException> {
        self.shared.upgrade().ok_or_else(gone)
    }
}

impl EventChannelFactoryServant for Factory {
    fn create_channel(
        &self,
        initial_qos: &[Property],
        initial_admin: &[Property],
    ) -> Result<(Option<EventChannel>, ChannelID), event_channel_factory::CreateChannelError> {
        let shared = self.shared()?;
        let (r, id) = create_channel(&shared, initial_qos, initial_admin)?;
        Ok((Some(EventChannel::unchecked_narrow(&r)), id))
    }

    fn get_all_channels(&self) -> Result<ChannelIDSeq, SystemException> {
        let shared = self.shared()?;
        let mut ids: Vec<i32> = lock(&shared.channels)
            .values()
            .filter(|c| c.notify.is_some())
            .map(|c| number(c.id))
            .collect();
        ids.sort_unstable();
        Ok(ids)
    }

    fn get_event_channel(
        &self,
        id: ChannelID,
    ) -> Result<Option<EventChannel>, event_channel_factory::GetEventChannelError> {
        let shared = self.shared()?;
        let found = u64::try_from(id)
            .ok()
            .and_then(|id| lock(&shared.channels).get(&id).cloned())
            .filter(|c| c.notify.is_some());
        match found {
            Some(c) => Ok(Some(EventChannel::unchecked_narrow(
                &shared.reference(c.id, nc::EventChannel::REPOSITORY_ID),
            ))),
            None => Err(ChannelNotFound {}.into()),
        }
    }
}

/// A notification channel's servant.
struct ChannelRef(Arc<Channel>);

impl ChannelRef {
    fn live(&self) -> Result<Arc<Shared>, SystemException> {
        self.0.live()
    }

    fn params(&self) -> &NotifyParams {
        // Only notification channels are served by this servant.
        self.0.notify.as_ref().expect("a notification channel")
    }

    fn admin_ref(&self, id: u64, consumer: bool) -> Result<ObjectRef, SystemException> {
        let shared = self.live()?;
        let rid = if consumer {
            nc::ConsumerAdmin::REPOSITORY_ID
        } else {
            nc::SupplierAdmin::REPOSITORY_ID
        };
        Ok(shared.reference(id, rid))
    }

    fn new_admin(
        &self,
        consumer: bool,
        op: InterFilterGroupOperator,
    ) -> Result<(ObjectRef, i32), SystemException> {
        let shared = self.live()?;
        let qos = lock(&self.params().qos).clone();
        let or_op = op == InterFilterGroupOperator::OrOp;
        let data = Admin::new(0, 0, consumer, or_op, qos.clone())
            .encode()
            .map_err(SystemException::from)?;
        let kind = if consumer {
            Kind::NotifyConsumerAdmin
        } else {
            Kind::NotifySupplierAdmin
        };
        let id = shared.store.create_object(kind, self.0.id, &data)?;
        let admin = Arc::new(Admin::new(id, number(id), consumer, or_op, qos));
        self.0.put_admin(admin.clone());
        activate_admin(&shared, &self.0, admin)?;
        Ok((self.admin_ref(id, consumer)?, number(id)))
    }

    fn find_admin(&self, n: AdminID, consumer: bool) -> Option<u64> {
        let st = self.0.lock_state();
        st.admins
            .values()
            .find(|a| a.number == n && a.consumer == consumer)
            .map(|a| a.id)
    }

    fn admins(&self, consumer: bool) -> Vec<i32> {
        self.0
            .lock_state()
            .admins
            .values()
            .filter(|a| a.consumer == consumer)
            .map(|a| a.number)
            .collect()
    }
}

impl ec::EventChannelServant for ChannelRef {
    fn for_consumers(&self) -> Result<Option<ec::ConsumerAdmin>, SystemException> {
        Ok(Some(ec::ConsumerAdmin::unchecked_narrow(
            &self.admin_ref(self.0.id + 1, true)?,
        )))
    }

    fn for_suppliers(&self) -> Result<Option<ec::SupplierAdmin>, SystemException> {
        Ok(Some(ec::SupplierAdmin::unchecked_narrow(
            &self.admin_ref(self.0.id + 2, false)?,
        )))
    }

    fn destroy(&self) -> Result<(), SystemException> {
        self.0.destroy()
    }
}

impl QoSAdminServant for ChannelRef {
    fn get_qos(&self) -> Result<Vec<Property>, SystemException> {
        self.live()?;
        Ok(lock(&self.params().qos).properties())
    }

    fn set_qos(&self, qos: &[Property]) -> Result<(), SetQosError> {
        let shared = self.live()?;
        let mut q = lock(&self.params().qos);
        let new = q.with(qos).map_err(unsupported_qos)?;
        let before = std::mem::replace(&mut *q, new);
        drop(q);
        if let Err(e) = self.save(&shared) {
            *lock(&self.params().qos) = before;
            return Err(e.into());
        }
        Ok(())
    }

    fn validate_qos(
        &self,
        required_qos: &[Property],
    ) -> Result<Vec<NamedPropertyRange>, ValidateQosError> {
        self.live()?;
        validate(required_qos).map_err(Into::into)
    }
}

impl ChannelRef {
    fn save(&self, shared: &Shared) -> Result<(), SystemException> {
        let mut r = crate::store::Record::object(Kind::NotifyChannel, self.0.id);
        r.data = self.params().encode().map_err(SystemException::from)?;
        Ok(shared.store.put(self.0.id, &r)?)
    }
}

fn validate(props: &[Property]) -> Result<Vec<NamedPropertyRange>, UnsupportedQoS> {
    Qos::default().with(props).map_err(unsupported_qos)?;
    Ok(Qos::ranges(props))
}

impl crate::cos_notification::AdminPropertiesAdminServant for ChannelRef {
    fn get_admin(&self) -> Result<Vec<Property>, SystemException> {
        self.live()?;
        let (q, p) = lock(&self.params().admin).clone();
        Ok(admin_properties(q, &p))
    }

    fn set_admin(&self, admin: &[Property]) -> Result<(), SetAdminError> {
        let shared = self.live()?;
        let mut a = lock(&self.params().admin);
        let before = a.clone();
        let (mut q, mut p) = a.clone();
        admin_props(&mut q, &mut p, admin).map_err(|admin_err| UnsupportedAdmin { admin_err })?;
        *a = (q, p);
        drop(a);
        if let Err(e) = self.save(&shared) {
            *lock(&self.params().admin) = before;
            return Err(e.into());
        }
        Ok(())
    }
}

impl EventChannelServant for ChannelRef {
    fn new_for_consumers(
        &self,
        op: InterFilterGroupOperator,
    ) -> Result<(Option<ConsumerAdmin>, AdminID), SystemException> {
        let (r, id) = self.new_admin(true, op)?;
        Ok((Some(ConsumerAdmin::unchecked_narrow(&r)), id))
    }

    fn new_for_suppliers(
        &self,
        op: InterFilterGroupOperator,
    ) -> Result<(Option<SupplierAdmin>, AdminID), SystemException> {
        let (r, id) = self.new_admin(false, op)?;
        Ok((Some(SupplierAdmin::unchecked_narrow(&r)), id))
    }

    fn get_consumeradmin(
        &self,
        id: AdminID,
    ) -> Result<Option<ConsumerAdmin>, event_channel::GetConsumeradminError> {
        let a = self.find_admin(id, true).ok_or(AdminNotFound {})?;
        Ok(Some(ConsumerAdmin::unchecked_narrow(
            &self.admin_ref(a, true)?,
        )))
    }

    fn get_supplieradmin(
        &self,
        id: AdminID,
    ) -> Result<Option<SupplierAdmin>, event_channel::GetSupplieradminError> {
        let a = self.find_admin(id, false).ok_or(AdminNotFound {})?;
        Ok(Some(SupplierAdmin::unchecked_narrow(
            &self.admin_ref(a, false)?,
        )))
    }

    fn get_all_consumeradmins(&self) -> Result<Vec<i32>, SystemException> {
        self.live()?;
        Ok(self.admins(true))
    }

    fn get_all_supplieradmins(&self) -> Result<Vec<i32>, SystemException> {
        self.live()?;
        Ok(self.admins(false))
    }

    fn get_my_factory(&self) -> Result<Option<nc::EventChannelFactory>, SystemException> {
        let shared = self.live()?;
        Ok(Some(nc::EventChannelFactory::unchecked_narrow(
            &shared.reference(2, nc::EventChannelFactory::REPOSITORY_ID),
        )))
    }

    fn get_default_consumer_admin(&self) -> Result<Option<ConsumerAdmin>, SystemException> {
        Ok(Some(ConsumerAdmin::unchecked_narrow(
            &self.admin_ref(self.0.id + 1, true)?,
        )))
    }

    fn get_default_supplier_admin(&self) -> Result<Option<SupplierAdmin>, SystemException> {
        Ok(Some(SupplierAdmin::unchecked_narrow(
            &self.admin_ref(self.0.id + 2, false)?,
        )))
    }

    fn get_default_filter_factory(&self) -> Result<Option<FilterFactory>, SystemException> {
        let shared = self.live()?;
        Ok(Some(FilterFactory::unchecked_narrow(
            &shared.reference(1, FilterFactory::REPOSITORY_ID),
        )))
    }
}

/// A consumer or supplier admin's servant.
struct AdminRef {
    ch: Arc<Channel>,
    admin: Arc<Admin>,
}

impl AdminRef {
    fn live(&self) -> Result<Arc<Shared>, SystemException> {
        if self.ch.is_destroyed() || self.ch.admin(self.admin.id).is_none() {
            return Err(gone());
        }
        self.ch.shared()
    }

    fn save(&self, shared: &Shared) -> Result<(), SystemException> {
        let kind = if self.admin.consumer {
            Kind::NotifyConsumerAdmin
        } else {
            Kind::NotifySupplierAdmin
        };
        let mut r = crate::store::Record::object(kind, self.ch.id);
        r.data = self.admin.encode().map_err(SystemException::from)?;
        Ok(shared.store.put(self.admin.id, &r)?)
    }

    /// A new proxy of `kind` and `style` in this admin, within the channel's
    /// `MaxConsumers`/`MaxSuppliers`.
    fn obtain(&self, kind: Kind, style: Style) -> Result<(ObjectRef, i32), Obtain> {
        let shared = self.live().map_err(Obtain::System)?;
        if let Some(n) = &self.ch.notify {
            let (_, props) = lock(&n.admin).clone();
            let (limit, name) = if self.admin.consumer {
                (props.max_consumers, "MaxConsumers")
            } else {
                (props.max_suppliers, "MaxSuppliers")
            };
            let count = self
                .ch
                .lock_state()
                .proxies
                .values()
                .filter(|p| {
                    matches!(p.kind(), Kind::PushSupplier | Kind::PullSupplier)
                        == self.admin.consumer
                })
                .count();
            if limit > 0 && count >= limit as usize {
                return Err(Obtain::Limit(AdminLimitExceeded {
                    admin_property_err: AdminLimit {
                        name: name.into(),
                        value: corbina::Any::from_long(number(u64::from(limit))),
                    },
                }));
            }
        }
        let p = self
            .ch
            .obtain_in(&self.admin, kind, style)
            .map_err(Obtain::System)?;
        Ok((
            shared.reference(p.id(), repository_id(kind, style)),
            number(p.id()),
        ))
    }

    fn proxy_ids(&self, kind: Kind) -> Result<Vec<i32>, SystemException> {
        self.live()?;
        let mut ids: Vec<i32> = self
            .ch
            .lock_state()
            .proxies
            .values()
            .filter(|p| p.kind() == kind && p.link().admin.id == self.admin.id)
            .map(|p| number(p.id()))
            .collect();
        ids.sort_unstable();
        Ok(ids)
    }

    fn find(&self, id: ProxyID, consumer_side: bool) -> Option<(u64, Kind, Style)> {
        let id = u64::try_from(id).ok()?;
        let st = self.ch.lock_state();
        let p = st.proxies.get(&id)?;
        let supplier_kind = matches!(p.kind(), Kind::PushSupplier | Kind::PullSupplier);
        (p.link().admin.id == self.admin.id && supplier_kind == consumer_side)
            .then(|| (id, p.kind(), p.link().style))
    }

    fn destroy(&self) -> Result<(), SystemException> {
        let shared = self.live()?;
        if self.admin.number == 0 {
            // The default admins live as long as their channel.
            return Ok(());
        }
        let ids: Vec<u64> = self
            .ch
            .lock_state()
            .proxies
            .values()
            .filter(|p| p.link().admin.id == self.admin.id)
            .map(|p| p.id())
            .collect();
        for id in ids {
            self.ch.disconnect(id, true)?;
        }
        shared.store.remove(&[self.admin.id], None)?;
        self.ch.lock_state().admins.remove(&self.admin.id);
        let _ = shared.poa.deactivate_object(&oid(self.admin.id));
        Ok(())
    }

    fn obtain_event(&self, kind: Kind) -> Result<ObjectRef, SystemException> {
        self.obtain(kind, Style::Event)
            .map(|(r, _)| r)
            .map_err(|e| match e {
                Obtain::System(e) => e,
                Obtain::Limit(_) => sys(
                    SystemExceptionKind::ImpLimit,
                    corbina::error::minor::IMP_LIMIT_EVENT_PROXIES,
                ),
            })
    }
}

enum Obtain {
    Limit(AdminLimitExceeded),
    System(SystemException),
}

impl Obtain {
    fn into_err<E: From<AdminLimitExceeded> + From<SystemException>>(self) -> E {
        match self {
            Obtain::Limit(l) => l.into(),
            Obtain::System(s) => s.into(),
        }
    }
}

impl QoSAdminServant for AdminRef {
    fn get_qos(&self) -> Result<Vec<Property>, SystemException> {
        self.live()?;
        Ok(lock(&self.admin.qos).properties())
    }

    fn set_qos(&self, qos: &[Property]) -> Result<(), SetQosError> {
        let shared = self.live()?;
        let new = lock(&self.admin.qos).with(qos).map_err(unsupported_qos)?;
        let before = std::mem::replace(&mut *lock(&self.admin.qos), new);
        if let Err(e) = self.save(&shared) {
            *lock(&self.admin.qos) = before;
            return Err(e.into());
        }
        Ok(())
    }

    fn validate_qos(
        &self,
        required_qos: &[Property],
    ) -> Result<Vec<NamedPropertyRange>, ValidateQosError> {
        self.live()?;
        validate(required_qos).map_err(Into::into)
    }
}

impl FilterAdminServant for AdminRef {
    fn add_filter(&self, new_filter: Option<&Filter>) -> Result<i32, SystemException> {
        let shared = self.live()?;
        let f = new_filter.ok_or_else(nil_peer)?;
        let id = self.admin.filters.add(f.clone());
        if let Err(e) = self.save(&shared) {
            self.admin.filters.remove(id);
            return Err(e);
        }
        Ok(id)
    }

    fn remove_filter(&self, filter: i32) -> Result<(), RemoveFilterError> {
        let shared = self.live()?;
        if !self.admin.filters.remove(filter) {
            return Err(FilterNotFound {}.into());
        }
        Ok(self.save(&shared)?)
    }

    fn get_filter(&self, filter: i32) -> Result<Option<Filter>, GetFilterError> {
        self.live()?;
        match self.admin.filters.get(filter) {
            Some(f) => Ok(Some(f)),
            None => Err(FilterNotFound {}.into()),
        }
    }

    fn get_all_filters(&self) -> Result<Vec<i32>, SystemException> {
        self.live()?;
        Ok(self.admin.filters.ids())
    }

    fn remove_all_filters(&self) -> Result<(), SystemException> {
        let shared = self.live()?;
        self.admin.filters.clear();
        self.save(&shared)
    }
}

impl NotifySubscribeServant for AdminRef {
    fn subscription_change(
        &self,
        added: &[EventType],
        removed: &[EventType],
    ) -> Result<(), SubscriptionChangeError> {
        self.live()?;
        subscription_change(&self.ch, added, removed);
        Ok(())
    }
}

impl NotifyPublishServant for AdminRef {
    fn offer_change(
        &self,
        added: &[EventType],
        removed: &[EventType],
    ) -> Result<(), OfferChangeError> {
        self.live()?;
        offer_change(&self.ch, added, removed);
        Ok(())
    }
}

impl ec::ConsumerAdminServant for AdminRef {
    fn obtain_push_supplier(&self) -> Result<Option<ec::ProxyPushSupplier>, SystemException> {
        let r = self.obtain_event(Kind::PushSupplier)?;
        Ok(Some(ec::ProxyPushSupplier::unchecked_narrow(&r)))
    }

    fn obtain_pull_supplier(&self) -> Result<Option<ec::ProxyPullSupplier>, SystemException> {
        let r = self.obtain_event(Kind::PullSupplier)?;
        Ok(Some(ec::ProxyPullSupplier::unchecked_narrow(&r)))
    }
}

impl ec::SupplierAdminServant for AdminRef {
    fn obtain_push_consumer(&self) -> Result<Option<ec::ProxyPushConsumer>, SystemException> {
        let r = self.obtain_event(Kind::PushConsumer)?;
        Ok(Some(ec::ProxyPushConsumer::unchecked_narrow(&r)))
    }

    fn obtain_pull_consumer(&self) -> Result<Option<ec::ProxyPullConsumer>, SystemException> {
        let r = self.obtain_event(Kind::PullConsumer)?;
        Ok(Some(ec::ProxyPullConsumer::unchecked_narrow(&r)))
    }
}

impl AdminRef {
    /// The notification proxy `id` of this admin's side (`None`: no such proxy here).
    fn proxy(
        &self,
        id: ProxyID,
        consumer_side: bool,
    ) -> Result<Option<ObjectRef>, SystemException> {
        let shared = self.live()?;
        Ok(match self.find(id, consumer_side) {
            Some((id, kind, style)) if style != Style::Event => {
                Some(shared.reference(id, repository_id(kind, style)))
            }
            _ => None,
        })
    }

    /// `obtain_notification_*`.
    fn obtain_notify<E: From<AdminLimitExceeded> + From<SystemException>>(
        &self,
        kind: Kind,
        ctype: ClientType,
    ) -> Result<(ObjectRef, i32), E> {
        self.obtain(kind, style_of(ctype)).map_err(Obtain::into_err)
    }

    fn my_id(&self) -> Result<AdminID, SystemException> {
        self.live()?;
        Ok(self.admin.number)
    }

    fn my_channel(&self) -> Result<Option<EventChannel>, SystemException> {
        let r = self
            .live()?
            .reference(self.ch.id, nc::EventChannel::REPOSITORY_ID);
        Ok(Some(EventChannel::unchecked_narrow(&r)))
    }

    fn my_operator(&self) -> Result<InterFilterGroupOperator, SystemException> {
        self.live()?;
        Ok(if self.admin.or_op {
            InterFilterGroupOperator::OrOp
        } else {
            InterFilterGroupOperator::AndOp
        })
    }

    /// Sets a mapping filter (when `value` is given) and answers it.
    fn mapping_filter(
        &self,
        which: Mapping,
        value: Option<Option<&MappingFilter>>,
    ) -> Result<Option<MappingFilter>, SystemException> {
        let shared = self.live()?;
        let m = &self.admin.mappings;
        if let Some(v) = value {
            let before = m.get(which);
            m.set(which, v.cloned());
            if let Err(e) = self.save(&shared) {
                m.set(which, before);
                return Err(e);
            }
        }
        Ok(m.get(which))
    }
}

impl ConsumerAdminServant for AdminRef {
    fn get_proxy_supplier(
        &self,
        proxy_id: ProxyID,
    ) -> Result<Option<ProxySupplier>, consumer_admin::GetProxySupplierError> {
        let r = self.proxy(proxy_id, true)?.ok_or(ProxyNotFound {})?;
        Ok(Some(ProxySupplier::unchecked_narrow(&r)))
    }

    fn obtain_notification_pull_supplier(
        &self,
        ctype: ClientType,
    ) -> Result<(Option<ProxySupplier>, ProxyID), consumer_admin::ObtainNotificationPullSupplierError>
    {
        self.obtain_notify(Kind::PullSupplier, ctype)
            .map(|(r, id)| (Some(ProxySupplier::unchecked_narrow(&r)), id))
    }

    fn obtain_notification_push_supplier(
        &self,
        ctype: ClientType,
    ) -> Result<(Option<ProxySupplier>, ProxyID), consumer_admin::ObtainNotificationPushSupplierError>
    {
        self.obtain_notify(Kind::PushSupplier, ctype)
            .map(|(r, id)| (Some(ProxySupplier::unchecked_narrow(&r)), id))
    }

    fn destroy(&self) -> Result<(), SystemException> {
        AdminRef::destroy(self)
    }

    fn get_my_id(&self) -> Result<AdminID, SystemException> {
        self.my_id()
    }

    fn get_my_channel(&self) -> Result<Option<EventChannel>, SystemException> {
        self.my_channel()
    }

    fn get_my_operator(&self) -> Result<InterFilterGroupOperator, SystemException> {
        self.my_operator()
    }

    fn get_priority_filter(&self) -> Result<Option<MappingFilter>, SystemException> {
        self.mapping_filter(Mapping::Priority, None)
    }

    fn set_priority_filter(&self, value: Option<&MappingFilter>) -> Result<(), SystemException> {
        self.mapping_filter(Mapping::Priority, Some(value))
            .map(drop)
    }

    fn get_lifetime_filter(&self) -> Result<Option<MappingFilter>, SystemException> {
        self.mapping_filter(Mapping::Lifetime, None)
    }

    fn set_lifetime_filter(&self, value: Option<&MappingFilter>) -> Result<(), SystemException> {
        self.mapping_filter(Mapping::Lifetime, Some(value))
            .map(drop)
    }

    fn get_pull_suppliers(&self) -> Result<Vec<i32>, SystemException> {
        self.proxy_ids(Kind::PullSupplier)
    }

    fn get_push_suppliers(&self) -> Result<Vec<i32>, SystemException> {
        self.proxy_ids(Kind::PushSupplier)
    }
}

impl SupplierAdminServant for AdminRef {
    fn get_proxy_consumer(
        &self,
        proxy_id: ProxyID,
    ) -> Result<Option<ProxyConsumer>, supplier_admin::GetProxyConsumerError> {
        let r = self.proxy(proxy_id, false)?.ok_or(ProxyNotFound {})?;
        Ok(Some(ProxyConsumer::unchecked_narrow(&r)))
    }

    fn obtain_notification_pull_consumer(
        &self,
        ctype: ClientType,
    ) -> Result<(Option<ProxyConsumer>, ProxyID), supplier_admin::ObtainNotificationPullConsumerError>
    {
        self.obtain_notify(Kind::PullConsumer, ctype)
            .map(|(r, id)| (Some(ProxyConsumer::unchecked_narrow(&r)), id))
    }

    fn obtain_notification_push_consumer(
        &self,
        ctype: ClientType,
    ) -> Result<(Option<ProxyConsumer>, ProxyID), supplier_admin::ObtainNotificationPushConsumerError>
    {
        self.obtain_notify(Kind::PushConsumer, ctype)
            .map(|(r, id)| (Some(ProxyConsumer::unchecked_narrow(&r)), id))
    }

    fn destroy(&self) -> Result<(), SystemException> {
        AdminRef::destroy(self)
    }

    fn get_my_id(&self) -> Result<AdminID, SystemException> {
        self.my_id()
    }

    fn get_my_channel(&self) -> Result<Option<EventChannel>, SystemException> {
        self.my_channel()
    }

    fn get_my_operator(&self) -> Result<InterFilterGroupOperator, SystemException> {
        self.my_operator()
    }

    fn get_pull_consumers(&self) -> Result<Vec<i32>, SystemException> {
        self.proxy_ids(Kind::PullConsumer)
    }

    fn get_push_consumers(&self) -> Result<Vec<i32>, SystemException> {
        self.proxy_ids(Kind::PushConsumer)
    }
}

/// Records a subscription change and forwards what changed to the suppliers that listen.
fn subscription_change(ch: &Channel, added: &[EventType], removed: &[EventType]) {
    let Some(n) = &ch.notify else { return };
    let (added, removed) = NotifyParams::announce(&n.subscribed, added, removed);
    if added.is_empty() && removed.is_empty() {
        return;
    }
    let peers: Vec<NotifySubscribe> = ch
        .lock_state()
        .proxies
        .values()
        .filter_map(|p| match p {
            Proxy::PushConsumer(p) if p.link.updates.load(Ordering::Relaxed) => {
                match &*lock(&p.state) {
                    Conn::Connected(Some(Source::Structured(s))) => {
                        Some(NotifySubscribe::unchecked_narrow(s.as_object()))
                    }
                    Conn::Connected(Some(Source::Sequence(s))) => {
                        Some(NotifySubscribe::unchecked_narrow(s.as_object()))
                    }
                    _ => None,
                }
            }
            _ => None,
        })
        .collect();
    for peer in peers {
        let (a, r) = (added.clone(), removed.clone());
        let _ = std::thread::Builder::new()
            .name("events-subscription-change".into())
            .spawn(move || {
                let _ = peer.subscription_change(&a, &r);
            });
    }
}

/// Records an offer change and forwards what changed to the consumers that listen.
fn offer_change(ch: &Channel, added: &[EventType], removed: &[EventType]) {
    let Some(n) = &ch.notify else { return };
    let (added, removed) = NotifyParams::announce(&n.offered, added, removed);
    if added.is_empty() && removed.is_empty() {
        return;
    }
    let peers: Vec<NotifyPublish> = ch
        .lock_state()
        .proxies
        .values()
        .filter_map(|p| match p {
            Proxy::PushSupplier(p) if p.link.updates.load(Ordering::Relaxed) => {
                match &lock(&p.state).conn {
                    Conn::Connected(Target::Structured(c)) => {
                        Some(NotifyPublish::unchecked_narrow(c.as_object()))
                    }
                    Conn::Connected(Target::Sequence(c)) => {
                        Some(NotifyPublish::unchecked_narrow(c.as_object()))
                    }
                    _ => None,
                }
            }
            _ => None,
        })
        .collect();
    for peer in peers {
        let (a, r) = (added.clone(), removed.clone());
        let _ = std::thread::Builder::new()
            .name("events-offer-change".into())
            .spawn(move || {
                let _ = peer.offer_change(&a, &r);
            });
    }
}

/// What a proxy's QoS and filter operations need of it.
trait Proxied {
    fn channel(&self) -> Result<Arc<Channel>, SystemException>;
    fn id(&self) -> u64;
    fn link(&self) -> &Link;
    /// Applies a new QoS (a consumer's queue).
    fn apply(&self, _ch: &Channel, _qos: &Qos) {}
}

impl Proxied for PushConsumerProxy {
    fn channel(&self) -> Result<Arc<Channel>, SystemException> {
        live_proxy(&self.channel, self.id)
    }
    fn id(&self) -> u64 {
        self.id
    }
    fn link(&self) -> &Link {
        &self.link
    }
}

impl Proxied for Arc<PushSupplierProxy> {
    fn channel(&self) -> Result<Arc<Channel>, SystemException> {
        live_proxy(&self.channel, self.id)
    }
    fn id(&self) -> u64 {
        self.id
    }
    fn link(&self) -> &Link {
        &self.link
    }
    fn apply(&self, ch: &Channel, qos: &Qos) {
        self.apply_qos(qos, ch.max_queue());
    }
}

impl Proxied for PullSupplierProxy {
    fn channel(&self) -> Result<Arc<Channel>, SystemException> {
        live_proxy(&self.channel, self.id)
    }
    fn id(&self) -> u64 {
        self.id
    }
    fn link(&self) -> &Link {
        &self.link
    }
    fn apply(&self, ch: &Channel, qos: &Qos) {
        self.apply_qos(qos, ch.max_queue());
    }
}

impl Proxied for Arc<PullConsumerProxy> {
    fn channel(&self) -> Result<Arc<Channel>, SystemException> {
        live_proxy(&self.channel, self.id)
    }
    fn id(&self) -> u64 {
        self.id
    }
    fn link(&self) -> &Link {
        &self.link
    }
}

/// The channel of a proxy that still exists.
fn live_proxy(w: &Weak<Channel>, id: u64) -> Result<Arc<Channel>, SystemException> {
    let ch = w.upgrade().ok_or_else(gone)?;
    if !ch.lock_state().proxies.contains_key(&id) {
        return Err(gone());
    }
    Ok(ch)
}

fn get_qos<P: Proxied>(p: &P) -> Result<Vec<Property>, SystemException> {
    p.channel()?;
    Ok(p.link().qos().properties())
}

fn set_qos<P: Proxied>(p: &P, qos: &[Property]) -> Result<(), SetQosError> {
    let ch = p.channel()?;
    let link = p.link();
    let new = link.qos().with(qos).map_err(unsupported_qos)?;
    let before = std::mem::replace(&mut *lock(&link.qos), new.clone());
    if let Err(e) = ch.resave(p.id()) {
        *lock(&link.qos) = before;
        return Err(e.into());
    }
    p.apply(&ch, &new);
    Ok(())
}

fn add_filter<P: Proxied>(p: &P, f: Option<&Filter>) -> Result<i32, SystemException> {
    let ch = p.channel()?;
    let f = f.ok_or_else(nil_peer)?;
    let id = p.link().filters.add(f.clone());
    if let Err(e) = ch.resave(p.id()) {
        p.link().filters.remove(id);
        return Err(e);
    }
    Ok(id)
}

fn remove_filter<P: Proxied>(p: &P, id: i32) -> Result<(), RemoveFilterError> {
    let ch = p.channel()?;
    if !p.link().filters.remove(id) {
        return Err(FilterNotFound {}.into());
    }
    Ok(ch.resave(p.id())?)
}

fn get_filter<P: Proxied>(p: &P, id: i32) -> Result<Option<Filter>, GetFilterError> {
    p.channel()?;
    match p.link().filters.get(id) {
        Some(f) => Ok(Some(f)),
        None => Err(FilterNotFound {}.into()),
    }
}

fn set_mapping<P: Proxied>(
    p: &P,
    which: Mapping,
    f: Option<&MappingFilter>,
) -> Result<(), SystemException> {
    let ch = p.channel()?;
    let before = p.link().mappings.get(which);
    p.link().mappings.set(which, f.cloned());
    if let Err(e) = ch.resave(p.id()) {
        p.link().mappings.set(which, before);
        return Err(e);
    }
    Ok(())
}

fn remove_all_filters<P: Proxied>(p: &P) -> Result<(), SystemException> {
    let ch = p.channel()?;
    p.link().filters.clear();
    ch.resave(p.id())
}

/// QoSAdmin and FilterAdmin of a proxy type.
macro_rules! admin_servants {
    ($t:ty) => {
        impl QoSAdminServant for $t {
            fn get_qos(&self) -> Result<Vec<Property>, SystemException> {
                get_qos(self)
            }
            fn set_qos(&self, qos: &[Property]) -> Result<(), SetQosError> {
                set_qos(self, qos)
            }
            fn validate_qos(
                &self,
                required_qos: &[Property],
            ) -> Result<Vec<NamedPropertyRange>, ValidateQosError> {
                self.channel()?;
                validate(required_qos).map_err(Into::into)
            }
        }

        impl FilterAdminServant for $t {
            fn add_filter(&self, new_filter: Option<&Filter>) -> Result<i32, SystemException> {
                add_filter(self, new_filter)
            }
            fn remove_filter(&self, filter: i32) -> Result<(), RemoveFilterError> {
                remove_filter(self, filter)
            }
            fn get_filter(&self, filter: i32) -> Result<Option<Filter>, GetFilterError> {
                get_filter(self, filter)
            }
            fn get_all_filters(&self) -> Result<Vec<i32>, SystemException> {
                self.channel()?;
                Ok(self.link().filters.ids())
            }
            fn remove_all_filters(&self) -> Result<(), SystemException> {
                remove_all_filters(self)
            }
        }
    };
}

admin_servants!(PushConsumerProxy);
admin_servants!(Arc<PushSupplierProxy>);
admin_servants!(PullSupplierProxy);
admin_servants!(Arc<PullConsumerProxy>);

/// The types announced on the other side, and whether the peer wants their changes.
fn obtain_types(
    link: &Link,
    ch: &Channel,
    mode: ObtainInfoMode,
    subscribed: bool,
) -> Vec<EventType> {
    use ObtainInfoMode::*;
    link.updates.store(
        matches!(mode, AllNowUpdatesOn | NoneNowUpdatesOn),
        Ordering::Relaxed,
    );
    match (mode, &ch.notify) {
        (AllNowUpdatesOff | AllNowUpdatesOn, Some(n)) => NotifyParams::types(if subscribed {
            &n.subscribed
        } else {
            &n.offered
        }),
        _ => Vec::new(),
    }
}

/// ProxyConsumer and NotifyPublish of a supplier-side proxy type of store kind `$kind`.
macro_rules! proxy_consumer_servant {
    ($t:ty, $kind:expr) => {
        impl ProxyConsumerServant for $t {
            fn obtain_subscription_types(
                &self,
                mode: ObtainInfoMode,
            ) -> Result<Vec<EventType>, SystemException> {
                let ch = self.channel()?;
                Ok(obtain_types(&self.link, &ch, mode, true))
            }

            fn validate_event_qos(
                &self,
                required_qos: &[Property],
            ) -> Result<Vec<NamedPropertyRange>, proxy_consumer::ValidateEventQosError> {
                self.channel()?;
                validate_event(required_qos).map_err(Into::into)
            }

            fn get_my_type(&self) -> Result<ProxyType, SystemException> {
                self.channel()?;
                Ok(proxy_type($kind, self.link.style))
            }

            fn get_my_admin(&self) -> Result<Option<SupplierAdmin>, SystemException> {
                let ch = self.channel()?;
                Ok(Some(SupplierAdmin::unchecked_narrow(
                    &ch.shared()?
                        .reference(self.link.admin.id, nc::SupplierAdmin::REPOSITORY_ID),
                )))
            }
        }

        impl NotifyPublishServant for $t {
            fn offer_change(
                &self,
                added: &[EventType],
                removed: &[EventType],
            ) -> Result<(), OfferChangeError> {
                let ch = self.channel()?;
                offer_change(&ch, added, removed);
                Ok(())
            }
        }
    };
}

proxy_consumer_servant!(PushConsumerProxy, Kind::PushConsumer);
proxy_consumer_servant!(Arc<PullConsumerProxy>, Kind::PullConsumer);

/// `validate_event_qos`: the per-event properties (`Priority`, `Timeout`) are honoured.
fn validate_event(props: &[Property]) -> Result<Vec<NamedPropertyRange>, UnsupportedQoS> {
    let errs: Vec<_> = props
        .iter()
        .filter(|p| !matches!(p.name.as_str(), "Priority" | "Timeout"))
        .map(|p| crate::cos_notification::PropertyError {
            code: crate::cos_notification::QoSErrorCode::UnsupportedProperty,
            name: p.name.clone(),
            available_range: crate::cos_notification::PropertyRange {
                low_val: corbina::Any::default(),
                high_val: corbina::Any::default(),
            },
        })
        .collect();
    if !errs.is_empty() {
        return Err(unsupported_qos(errs));
    }
    validate(props)
}

impl crate::cos_notify_comm::PushConsumerServant for PushConsumerProxy {}

impl PushConsumerProxy {
    /// Connects a supplier of the proxy's kind.
    fn connect_source<E: From<SystemException> + From<AlreadyConnected>>(
        &self,
        peer: Option<Source>,
    ) -> Result<(), E> {
        let obj = peer.as_ref().map(|s| s.object().clone());
        self.channel.upgrade().ok_or_else(gone)?.connect(
            self.id,
            Kind::PushConsumer,
            obj.as_ref(),
            || AlreadyConnected {}.into(),
            || Ok(matches!(*lock(&self.state), Conn::Idle)),
            || *lock(&self.state) = Conn::Connected(peer),
        )
    }

    fn push_body(&self, body: Body) -> Result<(), PushFail> {
        match &*lock(&self.state) {
            Conn::Connected(_) => {}
            Conn::Idle => return Err(PushFail::Disconnected),
            Conn::Gone => return Err(PushFail::System(gone())),
        }
        let ch = self.channel.upgrade().ok_or(PushFail::System(gone()))?;
        ch.publish(self.link.event(body), &self.link);
        Ok(())
    }

    fn disconnect(&self) -> Result<(), SystemException> {
        Ok(self
            .channel
            .upgrade()
            .ok_or_else(gone)?
            .disconnect(self.id, false)?)
    }
}

enum PushFail {
    Disconnected,
    System(SystemException),
}

impl ProxyPushConsumerServant for PushConsumerProxy {
    fn connect_any_push_supplier(
        &self,
        push_supplier: Option<&PushSupplier>,
    ) -> Result<(), proxy_push_consumer::ConnectAnyPushSupplierError> {
        self.connect_source(push_supplier.cloned().map(Source::Any))
    }
}

impl StructuredPushConsumerServant for PushConsumerProxy {
    fn push_structured_event(
        &self,
        notification: &crate::cos_notification::StructuredEvent,
    ) -> Result<(), PushStructuredEventError> {
        self.push_body(Body::Structured(notification.clone()))
            .map_err(|e| match e {
                PushFail::Disconnected => crate::cos_event_comm::Disconnected {}.into(),
                PushFail::System(e) => e.into(),
            })
    }

    fn disconnect_structured_push_consumer(&self) -> Result<(), SystemException> {
        self.disconnect()
    }
}

impl StructuredProxyPushConsumerServant for PushConsumerProxy {
    fn connect_structured_push_supplier(
        &self,
        push_supplier: Option<&StructuredPushSupplier>,
    ) -> Result<(), structured_proxy_push_consumer::ConnectStructuredPushSupplierError> {
        self.connect_source(push_supplier.cloned().map(Source::Structured))
    }
}

impl SequencePushConsumerServant for PushConsumerProxy {
    fn push_structured_events(
        &self,
        notifications: &[crate::cos_notification::StructuredEvent],
    ) -> Result<(), PushStructuredEventsError> {
        for n in notifications {
            self.push_body(Body::Structured(n.clone()))
                .map_err(|e| match e {
                    PushFail::Disconnected => {
                        PushStructuredEventsError::from(crate::cos_event_comm::Disconnected {})
                    }
                    PushFail::System(e) => e.into(),
                })?;
        }
        Ok(())
    }

    fn disconnect_sequence_push_consumer(&self) -> Result<(), SystemException> {
        self.disconnect()
    }
}

impl SequenceProxyPushConsumerServant for PushConsumerProxy {
    fn connect_sequence_push_supplier(
        &self,
        push_supplier: Option<&SequencePushSupplier>,
    ) -> Result<(), sequence_proxy_push_consumer::ConnectSequencePushSupplierError> {
        self.connect_source(push_supplier.cloned().map(Source::Sequence))
    }
}

/// ProxySupplier and NotifySubscribe of a consumer-side proxy type of store kind `$kind`.
macro_rules! proxy_supplier_servant {
    ($t:ty, $kind:expr) => {
        impl ProxySupplierServant for $t {
            fn obtain_offered_types(
                &self,
                mode: ObtainInfoMode,
            ) -> Result<Vec<EventType>, SystemException> {
                let ch = self.channel()?;
                Ok(obtain_types(&self.link, &ch, mode, false))
            }

            fn validate_event_qos(
                &self,
                required_qos: &[Property],
            ) -> Result<Vec<NamedPropertyRange>, proxy_supplier::ValidateEventQosError> {
                self.channel()?;
                validate_event(required_qos).map_err(Into::into)
            }

            fn get_my_type(&self) -> Result<ProxyType, SystemException> {
                self.channel()?;
                Ok(proxy_type($kind, self.link.style))
            }

            fn get_my_admin(&self) -> Result<Option<ConsumerAdmin>, SystemException> {
                let ch = self.channel()?;
                Ok(Some(ConsumerAdmin::unchecked_narrow(
                    &ch.shared()?
                        .reference(self.link.admin.id, nc::ConsumerAdmin::REPOSITORY_ID),
                )))
            }

            fn get_priority_filter(&self) -> Result<Option<MappingFilter>, SystemException> {
                self.channel()?;
                Ok(self.link.mappings.get(Mapping::Priority))
            }

            fn set_priority_filter(
                &self,
                value: Option<&MappingFilter>,
            ) -> Result<(), SystemException> {
                set_mapping(self, Mapping::Priority, value)
            }

            fn get_lifetime_filter(&self) -> Result<Option<MappingFilter>, SystemException> {
                self.channel()?;
                Ok(self.link.mappings.get(Mapping::Lifetime))
            }

            fn set_lifetime_filter(
                &self,
                value: Option<&MappingFilter>,
            ) -> Result<(), SystemException> {
                set_mapping(self, Mapping::Lifetime, value)
            }
        }

        impl NotifySubscribeServant for $t {
            fn subscription_change(
                &self,
                added: &[EventType],
                removed: &[EventType],
            ) -> Result<(), SubscriptionChangeError> {
                let ch = self.channel()?;
                subscription_change(&ch, added, removed);
                Ok(())
            }
        }
    };
}

proxy_supplier_servant!(Arc<PushSupplierProxy>, Kind::PushSupplier);
proxy_supplier_servant!(PullSupplierProxy, Kind::PullSupplier);

impl crate::cos_notify_comm::PushSupplierServant for Arc<PushSupplierProxy> {}

/// `suspend_connection`/`resume_connection` failures.
enum Suspend {
    NotConnected,
    Already,
    System(SystemException),
}

impl PushSupplierProxy {
    /// Connects a consumer of the proxy's kind and starts pushing to it.
    fn connect_target<E: From<SystemException> + From<AlreadyConnected>>(
        self: &Arc<Self>,
        target: Option<Target>,
    ) -> Result<(), E> {
        let target = target.ok_or_else(nil_peer)?;
        let ch = self.channel.upgrade().ok_or_else(gone)?;
        let obj = target.object().clone();
        ch.connect::<E>(
            self.id,
            Kind::PushSupplier,
            Some(&obj),
            || AlreadyConnected {}.into(),
            || Ok(matches!(lock(&self.state).conn, Conn::Idle)),
            || lock(&self.state).conn = Conn::Connected(target),
        )?;
        if let Err(e) = self.clone().start() {
            let _ = ch.disconnect(self.id, false);
            return Err(e.into());
        }
        Ok(())
    }

    fn suspend(self: &Arc<Self>, on: bool) -> Result<(), Suspend> {
        let ch = Proxied::channel(self).map_err(Suspend::System)?;
        let mut st = lock(&self.state);
        if !matches!(st.conn, Conn::Connected(_)) {
            return Err(Suspend::NotConnected);
        }
        if st.suspended == on {
            return Err(Suspend::Already);
        }
        st.suspended = on;
        drop(st);
        // Stored (outside the proxy's lock: the channel's comes first), so that a restart
        // keeps a suspended consumer suspended.
        if let Err(e) = ch.resave(self.id) {
            lock(&self.state).suspended = !on;
            return Err(Suspend::System(e));
        }
        self.poke();
        Ok(())
    }

    fn disconnect_self(&self) -> Result<(), SystemException> {
        Ok(self
            .channel
            .upgrade()
            .ok_or_else(gone)?
            .disconnect(self.id, false)?)
    }
}

/// Maps a suspend/resume failure to an operation's error.
macro_rules! suspend_error {
    ($r:expr, $already:expr) => {
        $r.map_err(|e| match e {
            Suspend::NotConnected => NotConnected {}.into(),
            Suspend::Already => $already.into(),
            Suspend::System(e) => e.into(),
        })
    };
}

impl nc::ProxyPushSupplierServant for Arc<PushSupplierProxy> {
    fn connect_any_push_consumer(
        &self,
        push_consumer: Option<&PushConsumer>,
    ) -> Result<(), proxy_push_supplier::ConnectAnyPushConsumerError> {
        self.connect_target(push_consumer.cloned().map(Target::Any))
    }

    fn suspend_connection(&self) -> Result<(), proxy_push_supplier::SuspendConnectionError> {
        suspend_error!(self.suspend(true), ConnectionAlreadyInactive {})
    }

    fn resume_connection(&self) -> Result<(), proxy_push_supplier::ResumeConnectionError> {
        suspend_error!(self.suspend(false), ConnectionAlreadyActive {})
    }
}

impl StructuredPushSupplierServant for Arc<PushSupplierProxy> {
    fn disconnect_structured_push_supplier(&self) -> Result<(), SystemException> {
        self.disconnect_self()
    }
}

impl StructuredProxyPushSupplierServant for Arc<PushSupplierProxy> {
    fn connect_structured_push_consumer(
        &self,
        push_consumer: Option<&StructuredPushConsumer>,
    ) -> Result<(), structured_proxy_push_supplier::ConnectStructuredPushConsumerError> {
        self.connect_target(push_consumer.cloned().map(Target::Structured))
    }

    fn suspend_connection(
        &self,
    ) -> Result<(), structured_proxy_push_supplier::SuspendConnectionError> {
        suspend_error!(self.suspend(true), ConnectionAlreadyInactive {})
    }

    fn resume_connection(
        &self,
    ) -> Result<(), structured_proxy_push_supplier::ResumeConnectionError> {
        suspend_error!(self.suspend(false), ConnectionAlreadyActive {})
    }
}

impl SequencePushSupplierServant for Arc<PushSupplierProxy> {
    fn disconnect_sequence_push_supplier(&self) -> Result<(), SystemException> {
        self.disconnect_self()
    }
}

impl SequenceProxyPushSupplierServant for Arc<PushSupplierProxy> {
    fn connect_sequence_push_consumer(
        &self,
        push_consumer: Option<&SequencePushConsumer>,
    ) -> Result<(), sequence_proxy_push_supplier::ConnectSequencePushConsumerError> {
        self.connect_target(push_consumer.cloned().map(Target::Sequence))
    }

    fn suspend_connection(
        &self,
    ) -> Result<(), sequence_proxy_push_supplier::SuspendConnectionError> {
        suspend_error!(self.suspend(true), ConnectionAlreadyInactive {})
    }

    fn resume_connection(&self) -> Result<(), sequence_proxy_push_supplier::ResumeConnectionError> {
        suspend_error!(self.suspend(false), ConnectionAlreadyActive {})
    }
}

impl PullSupplierProxy {
    /// Connects a pull consumer of the proxy's kind (nil allowed).
    fn connect_peer<E: From<SystemException> + From<AlreadyConnected>>(
        &self,
        peer: Option<PullPeer>,
    ) -> Result<(), E> {
        let obj = peer.as_ref().map(|p| p.object().clone());
        self.channel.upgrade().ok_or_else(gone)?.connect::<E>(
            self.id,
            Kind::PullSupplier,
            obj.as_ref(),
            || AlreadyConnected {}.into(),
            || Ok(matches!(lock(&self.state).conn, Conn::Idle)),
            || lock(&self.state).conn = Conn::Connected(peer),
        )
    }

    fn disconnect_self(&self) -> Result<(), SystemException> {
        Ok(self
            .channel
            .upgrade()
            .ok_or_else(gone)?
            .disconnect(self.id, false)?)
    }
}

/// Answers an AMH call from a synchronous result: `$ok` with the value, else the
/// operation's `_excep`.
macro_rules! reply {
    ($rh:ident, $r:expr, $excep:ident, |$v:pat_param| $ok:expr) => {{
        let _ = match $r {
            Ok($v) => $ok,
            Err(e) => $rh.$excep(e),
        };
    }};
}

/// The operations every notification pull supplier proxy has, as AMH methods answered at
/// once by the synchronous implementations.
macro_rules! amh_proxy_supplier {
    ($rh:ty) => {
        fn get_qos(&self, rh: $rh) {
            reply!(rh, QoSAdminServant::get_qos(self), get_qos_excep, |v| rh
                .get_qos(&v))
        }
        fn set_qos(&self, rh: $rh, qos: &[Property]) {
            reply!(
                rh,
                QoSAdminServant::set_qos(self, qos),
                set_qos_excep,
                |_| rh.set_qos()
            )
        }
        fn validate_qos(&self, rh: $rh, required_qos: &[Property]) {
            reply!(
                rh,
                QoSAdminServant::validate_qos(self, required_qos),
                validate_qos_excep,
                |v| rh.validate_qos(&v)
            )
        }
        fn add_filter(&self, rh: $rh, new_filter: Option<&Filter>) {
            reply!(
                rh,
                FilterAdminServant::add_filter(self, new_filter),
                add_filter_excep,
                |v| rh.add_filter(v)
            )
        }
        fn remove_filter(&self, rh: $rh, filter: i32) {
            reply!(
                rh,
                FilterAdminServant::remove_filter(self, filter),
                remove_filter_excep,
                |_| rh.remove_filter()
            )
        }
        fn get_filter(&self, rh: $rh, filter: i32) {
            reply!(
                rh,
                FilterAdminServant::get_filter(self, filter),
                get_filter_excep,
                |v| rh.get_filter(v.as_ref())
            )
        }
        fn get_all_filters(&self, rh: $rh) {
            reply!(
                rh,
                FilterAdminServant::get_all_filters(self),
                get_all_filters_excep,
                |v| rh.get_all_filters(&v)
            )
        }
        fn remove_all_filters(&self, rh: $rh) {
            reply!(
                rh,
                FilterAdminServant::remove_all_filters(self),
                remove_all_filters_excep,
                |_| rh.remove_all_filters()
            )
        }
        fn obtain_offered_types(&self, rh: $rh, mode: ObtainInfoMode) {
            reply!(
                rh,
                ProxySupplierServant::obtain_offered_types(self, mode),
                obtain_offered_types_excep,
                |v| rh.obtain_offered_types(&v)
            )
        }
        fn validate_event_qos(&self, rh: $rh, required_qos: &[Property]) {
            reply!(
                rh,
                ProxySupplierServant::validate_event_qos(self, required_qos),
                validate_event_qos_excep,
                |v| rh.validate_event_qos(&v)
            )
        }
        fn get_my_type(&self, rh: $rh) {
            reply!(
                rh,
                ProxySupplierServant::get_my_type(self),
                get_my_type_excep,
                |v| rh.get_my_type(v)
            )
        }
        fn get_my_admin(&self, rh: $rh) {
            reply!(
                rh,
                ProxySupplierServant::get_my_admin(self),
                get_my_admin_excep,
                |v| rh.get_my_admin(v.as_ref())
            )
        }
        fn get_priority_filter(&self, rh: $rh) {
            reply!(
                rh,
                ProxySupplierServant::get_priority_filter(self),
                get_priority_filter_excep,
                |v| rh.get_priority_filter(v.as_ref())
            )
        }
        fn set_priority_filter(&self, rh: $rh, value: Option<&MappingFilter>) {
            reply!(
                rh,
                ProxySupplierServant::set_priority_filter(self, value),
                set_priority_filter_excep,
                |_| rh.set_priority_filter()
            )
        }
        fn get_lifetime_filter(&self, rh: $rh) {
            reply!(
                rh,
                ProxySupplierServant::get_lifetime_filter(self),
                get_lifetime_filter_excep,
                |v| rh.get_lifetime_filter(v.as_ref())
            )
        }
        fn set_lifetime_filter(&self, rh: $rh, value: Option<&MappingFilter>) {
            reply!(
                rh,
                ProxySupplierServant::set_lifetime_filter(self, value),
                set_lifetime_filter_excep,
                |_| rh.set_lifetime_filter()
            )
        }
        fn subscription_change(&self, rh: $rh, added: &[EventType], removed: &[EventType]) {
            reply!(
                rh,
                NotifySubscribeServant::subscription_change(self, added, removed),
                subscription_change_excep,
                |_| rh.subscription_change()
            )
        }
    };
}

/// A `try_pull` failure as an operation's error.
fn try_fail<E: From<crate::cos_event_comm::Disconnected> + From<SystemException>>(f: TryFail) -> E {
    match f {
        TryFail::Disconnected => crate::cos_event_comm::Disconnected {}.into(),
        TryFail::System(e) => e.into(),
    }
}

impl AmhProxyPullSupplierServant for PullSupplierProxy {
    amh_proxy_supplier!(AmhProxyPullSupplierResponseHandler);

    fn pull(&self, rh: AmhProxyPullSupplierResponseHandler) {
        PullSupplierProxy::pull(self, Waiter::Any(rh));
    }

    fn try_pull(&self, rh: AmhProxyPullSupplierResponseHandler) {
        let _ = match self.try_take(1) {
            Ok(batch) => match batch.first() {
                Some(e) => rh.try_pull(e.any(), true),
                None => rh.try_pull(&corbina::Any::default(), false),
            },
            Err(f) => rh.try_pull_excep(try_fail(f)),
        };
    }

    fn disconnect_pull_supplier(&self, rh: AmhProxyPullSupplierResponseHandler) {
        reply!(
            rh,
            self.disconnect_self(),
            disconnect_pull_supplier_excep,
            |_| rh.disconnect_pull_supplier()
        )
    }

    fn connect_any_pull_consumer(
        &self,
        rh: AmhProxyPullSupplierResponseHandler,
        pull_consumer: Option<&crate::cos_event_comm::PullConsumer>,
    ) {
        reply!(
            rh,
            self.connect_peer(pull_consumer.cloned().map(PullPeer::Any)),
            connect_any_pull_consumer_excep,
            |_| rh.connect_any_pull_consumer()
        )
    }
}

impl AmhStructuredProxyPullSupplierServant for PullSupplierProxy {
    amh_proxy_supplier!(AmhStructuredProxyPullSupplierResponseHandler);

    fn pull_structured_event(&self, rh: AmhStructuredProxyPullSupplierResponseHandler) {
        PullSupplierProxy::pull(self, Waiter::Structured(rh));
    }

    fn try_pull_structured_event(&self, rh: AmhStructuredProxyPullSupplierResponseHandler) {
        let _ = match self.try_take(1) {
            Ok(batch) => match batch.first() {
                Some(e) => rh.try_pull_structured_event(e.structured(), true),
                None => rh.try_pull_structured_event(
                    &crate::queue::wrap_any(&corbina::Any::default()),
                    false,
                ),
            },
            Err(f) => rh.try_pull_structured_event_excep(try_fail(f)),
        };
    }

    fn disconnect_structured_pull_supplier(
        &self,
        rh: AmhStructuredProxyPullSupplierResponseHandler,
    ) {
        reply!(
            rh,
            self.disconnect_self(),
            disconnect_structured_pull_supplier_excep,
            |_| rh.disconnect_structured_pull_supplier()
        )
    }

    fn connect_structured_pull_consumer(
        &self,
        rh: AmhStructuredProxyPullSupplierResponseHandler,
        pull_consumer: Option<&crate::cos_notify_comm::StructuredPullConsumer>,
    ) {
        reply!(
            rh,
            self.connect_peer(pull_consumer.cloned().map(PullPeer::Structured)),
            connect_structured_pull_consumer_excep,
            |_| rh.connect_structured_pull_consumer()
        )
    }
}

/// The batch size a sequence pull asks for (at least one).
fn batch_size(n: i32) -> usize {
    usize::try_from(n).unwrap_or(0).max(1)
}

impl AmhSequenceProxyPullSupplierServant for PullSupplierProxy {
    amh_proxy_supplier!(AmhSequenceProxyPullSupplierResponseHandler);

    fn pull_structured_events(
        &self,
        rh: AmhSequenceProxyPullSupplierResponseHandler,
        max_number: i32,
    ) {
        PullSupplierProxy::pull(self, Waiter::Sequence(rh, batch_size(max_number)));
    }

    fn try_pull_structured_events(
        &self,
        rh: AmhSequenceProxyPullSupplierResponseHandler,
        max_number: i32,
    ) {
        let _ = match self.try_take(batch_size(max_number)) {
            Ok(batch) => {
                let events: Vec<_> = batch.iter().map(|e| e.structured().clone()).collect();
                rh.try_pull_structured_events(&events, !events.is_empty())
            }
            Err(f) => rh.try_pull_structured_events_excep(try_fail(f)),
        };
    }

    fn disconnect_sequence_pull_supplier(&self, rh: AmhSequenceProxyPullSupplierResponseHandler) {
        reply!(
            rh,
            self.disconnect_self(),
            disconnect_sequence_pull_supplier_excep,
            |_| rh.disconnect_sequence_pull_supplier()
        )
    }

    fn connect_sequence_pull_consumer(
        &self,
        rh: AmhSequenceProxyPullSupplierResponseHandler,
        pull_consumer: Option<&crate::cos_notify_comm::SequencePullConsumer>,
    ) {
        reply!(
            rh,
            self.connect_peer(pull_consumer.cloned().map(PullPeer::Sequence)),
            connect_sequence_pull_consumer_excep,
            |_| rh.connect_sequence_pull_consumer()
        )
    }
}

impl PullConsumerProxy {
    /// Connects a pull supplier of the proxy's kind and starts pulling from it.
    fn connect_source<E: From<SystemException> + From<AlreadyConnected>>(
        self: &Arc<Self>,
        source: Option<PullSource>,
    ) -> Result<(), E> {
        let source = source.ok_or_else(nil_peer)?;
        let ch = self.channel.upgrade().ok_or_else(gone)?;
        let obj = source.object().clone();
        ch.connect::<E>(
            self.id,
            Kind::PullConsumer,
            Some(&obj),
            || AlreadyConnected {}.into(),
            || Ok(matches!(*lock(&self.state), Conn::Idle)),
            || *lock(&self.state) = Conn::Connected(source),
        )?;
        if let Err(e) = self.clone().start() {
            let _ = ch.disconnect(self.id, false);
            return Err(e.into());
        }
        Ok(())
    }

    fn suspend(self: &Arc<Self>, on: bool) -> Result<(), Suspend> {
        let ch = Proxied::channel(self).map_err(Suspend::System)?;
        if !matches!(*lock(&self.state), Conn::Connected(_)) {
            return Err(Suspend::NotConnected);
        }
        if self.suspended.swap(on, Ordering::Relaxed) == on {
            return Err(Suspend::Already);
        }
        if let Err(e) = ch.resave(self.id) {
            self.suspended.store(!on, Ordering::Relaxed);
            return Err(Suspend::System(e));
        }
        self.wake.notify_all();
        Ok(())
    }

    fn disconnect_self(&self) -> Result<(), SystemException> {
        Ok(self
            .channel
            .upgrade()
            .ok_or_else(gone)?
            .disconnect(self.id, false)?)
    }
}

impl crate::cos_notify_comm::PullConsumerServant for Arc<PullConsumerProxy> {}

impl nc::ProxyPullConsumerServant for Arc<PullConsumerProxy> {
    fn connect_any_pull_supplier(
        &self,
        pull_supplier: Option<&crate::cos_event_comm::PullSupplier>,
    ) -> Result<(), proxy_pull_consumer::ConnectAnyPullSupplierError> {
        self.connect_source(pull_supplier.cloned().map(PullSource::Any))
    }

    fn suspend_connection(&self) -> Result<(), proxy_pull_consumer::SuspendConnectionError> {
        suspend_error!(self.suspend(true), ConnectionAlreadyInactive {})
    }

    fn resume_connection(&self) -> Result<(), proxy_pull_consumer::ResumeConnectionError> {
        suspend_error!(self.suspend(false), ConnectionAlreadyActive {})
    }
}

impl crate::cos_notify_comm::StructuredPullConsumerServant for Arc<PullConsumerProxy> {
    fn disconnect_structured_pull_consumer(&self) -> Result<(), SystemException> {
        self.disconnect_self()
    }
}

impl StructuredProxyPullConsumerServant for Arc<PullConsumerProxy> {
    fn connect_structured_pull_supplier(
        &self,
        pull_supplier: Option<&crate::cos_notify_comm::StructuredPullSupplier>,
    ) -> Result<(), structured_proxy_pull_consumer::ConnectStructuredPullSupplierError> {
        self.connect_source(pull_supplier.cloned().map(PullSource::Structured))
    }

    fn suspend_connection(
        &self,
    ) -> Result<(), structured_proxy_pull_consumer::SuspendConnectionError> {
        suspend_error!(self.suspend(true), ConnectionAlreadyInactive {})
    }

    fn resume_connection(
        &self,
    ) -> Result<(), structured_proxy_pull_consumer::ResumeConnectionError> {
        suspend_error!(self.suspend(false), ConnectionAlreadyActive {})
    }
}

impl crate::cos_notify_comm::SequencePullConsumerServant for Arc<PullConsumerProxy> {
    fn disconnect_sequence_pull_consumer(&self) -> Result<(), SystemException> {
        self.disconnect_self()
    }
}

impl SequenceProxyPullConsumerServant for Arc<PullConsumerProxy> {
    fn connect_sequence_pull_supplier(
        &self,
        pull_supplier: Option<&crate::cos_notify_comm::SequencePullSupplier>,
    ) -> Result<(), sequence_proxy_pull_consumer::ConnectSequencePullSupplierError> {
        self.connect_source(pull_supplier.cloned().map(PullSource::Sequence))
    }

    fn suspend_connection(
        &self,
    ) -> Result<(), sequence_proxy_pull_consumer::SuspendConnectionError> {
        suspend_error!(self.suspend(true), ConnectionAlreadyInactive {})
    }

    fn resume_connection(&self) -> Result<(), sequence_proxy_pull_consumer::ResumeConnectionError> {
        suspend_error!(self.suspend(false), ConnectionAlreadyActive {})
    }
}
