//! The servants: one per object, activated in the service's PERSISTENT POA under the
//! object's id, each holding its channel or proxy.

use std::sync::Arc;

use corbina::poa::PoaError;
use corbina::{Any, ObjectRef, Servant, SystemException};

use crate::admin::Style;
use crate::channel::{gone, nil_peer, oid, Channel, Conn, Proxy, Shared, Source, Target, TryFail};
use crate::channel::{PullConsumerProxy, PullSupplierProxy, PushConsumerProxy, PushSupplierProxy};
use crate::cos_event_channel_admin::proxy_pull_consumer::ConnectPullSupplierError;
use crate::cos_event_channel_admin::proxy_pull_supplier::ConnectPullConsumerError;
use crate::cos_event_channel_admin::proxy_push_consumer::ConnectPushSupplierError;
use crate::cos_event_channel_admin::proxy_push_supplier::ConnectPushConsumerError;
use crate::cos_event_channel_admin::{
    AlreadyConnected, AmhProxyPullSupplierResponseHandler, AmhProxyPullSupplierServant,
    AmhProxyPullSupplierSkeleton, ConsumerAdmin, ConsumerAdminServant, ConsumerAdminSkeleton,
    EventChannelServant, EventChannelSkeleton, ProxyPullConsumer, ProxyPullConsumerServant,
    ProxyPullConsumerSkeleton, ProxyPullSupplier, ProxyPushConsumer, ProxyPushConsumerServant,
    ProxyPushConsumerSkeleton, ProxyPushSupplier, ProxyPushSupplierServant,
    ProxyPushSupplierSkeleton, SupplierAdmin, SupplierAdminServant, SupplierAdminSkeleton,
};
use crate::cos_event_comm::push_consumer::PushError;
use crate::cos_event_comm::{
    Disconnected, PullConsumer, PullConsumerServant, PullSupplier, PushConsumer,
    PushConsumerServant, PushSupplier, PushSupplierServant,
};
use crate::pull::{PullPeer, PullSource, Waiter};
use crate::store::Kind;

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn activate(shared: &Shared, id: u64, servant: Arc<dyn Servant>) -> Result<(), PoaError> {
    shared.poa.activate_object_with_id(oid(id), servant)
}

fn poa_error(_: PoaError) -> SystemException {
    SystemException::new(
        corbina::SystemExceptionKind::Internal,
        corbina::error::minor::INTERNAL_EVENTS,
    )
}

/// Activates a channel's servant and its two admins'.
pub(crate) fn activate_channel(shared: &Shared, ch: &Arc<Channel>) -> Result<(), SystemException> {
    let c = || ChannelRef(ch.clone());
    activate(shared, ch.id, Arc::new(EventChannelSkeleton::new(c()))).map_err(poa_error)?;
    activate(shared, ch.id + 1, Arc::new(ConsumerAdminSkeleton::new(c()))).map_err(poa_error)?;
    activate(shared, ch.id + 2, Arc::new(SupplierAdminSkeleton::new(c()))).map_err(poa_error)
}

/// Activates a proxy's servant.
pub(crate) fn activate_proxy(shared: &Shared, proxy: &Proxy) -> Result<(), SystemException> {
    if proxy.link().style != Style::Event {
        return crate::notify::activate_proxy(shared, proxy);
    }
    let (id, servant): (u64, Arc<dyn Servant>) = match proxy {
        Proxy::PushConsumer(p) => (
            p.id,
            Arc::new(ProxyPushConsumerSkeleton::from_arc(p.clone())),
        ),
        Proxy::PullConsumer(p) => (p.id, Arc::new(ProxyPullConsumerSkeleton::new(p.clone()))),
        Proxy::PushSupplier(p) => (p.id, Arc::new(ProxyPushSupplierSkeleton::new(p.clone()))),
        Proxy::PullSupplier(p) => (
            p.id,
            Arc::new(AmhProxyPullSupplierSkeleton::from_arc(p.clone())),
        ),
    };
    activate(shared, id, servant).map_err(poa_error)
}

/// The channel and both admins: they only hand out references.
struct ChannelRef(Arc<Channel>);

impl ChannelRef {
    fn live(&self) -> Result<Arc<Shared>, SystemException> {
        self.0.live()
    }

    fn obtain(&self, kind: Kind, repository_id: &str) -> Result<ObjectRef, SystemException> {
        let shared = self.live()?;
        let id = self.0.obtain(kind)?;
        Ok(shared.reference(id, repository_id))
    }
}

impl EventChannelServant for ChannelRef {
    fn for_consumers(&self) -> Result<Option<ConsumerAdmin>, SystemException> {
        let r = self
            .live()?
            .reference(self.0.id + 1, ConsumerAdmin::REPOSITORY_ID);
        Ok(Some(ConsumerAdmin::unchecked_narrow(&r)))
    }

    fn for_suppliers(&self) -> Result<Option<SupplierAdmin>, SystemException> {
        let r = self
            .live()?
            .reference(self.0.id + 2, SupplierAdmin::REPOSITORY_ID);
        Ok(Some(SupplierAdmin::unchecked_narrow(&r)))
    }

    fn destroy(&self) -> Result<(), SystemException> {
        self.0.destroy()
    }
}

impl ConsumerAdminServant for ChannelRef {
    fn obtain_push_supplier(&self) -> Result<Option<ProxyPushSupplier>, SystemException> {
        let r = self.obtain(Kind::PushSupplier, ProxyPushSupplier::REPOSITORY_ID)?;
        Ok(Some(ProxyPushSupplier::unchecked_narrow(&r)))
    }

    fn obtain_pull_supplier(&self) -> Result<Option<ProxyPullSupplier>, SystemException> {
        let r = self.obtain(Kind::PullSupplier, ProxyPullSupplier::REPOSITORY_ID)?;
        Ok(Some(ProxyPullSupplier::unchecked_narrow(&r)))
    }
}

impl SupplierAdminServant for ChannelRef {
    fn obtain_push_consumer(&self) -> Result<Option<ProxyPushConsumer>, SystemException> {
        let r = self.obtain(Kind::PushConsumer, ProxyPushConsumer::REPOSITORY_ID)?;
        Ok(Some(ProxyPushConsumer::unchecked_narrow(&r)))
    }

    fn obtain_pull_consumer(&self) -> Result<Option<ProxyPullConsumer>, SystemException> {
        let r = self.obtain(Kind::PullConsumer, ProxyPullConsumer::REPOSITORY_ID)?;
        Ok(Some(ProxyPullConsumer::unchecked_narrow(&r)))
    }
}

fn channel_of(w: &std::sync::Weak<Channel>) -> Result<Arc<Channel>, SystemException> {
    w.upgrade().ok_or_else(gone)
}

impl PushConsumerServant for PushConsumerProxy {
    fn push(&self, data: &Any) -> Result<(), PushError> {
        match &*lock(&self.state) {
            Conn::Connected(_) => {}
            Conn::Idle => return Err(Disconnected {}.into()),
            Conn::Gone => return Err(gone().into()),
        }
        channel_of(&self.channel)?.publish_any(data, &self.link);
        Ok(())
    }

    fn disconnect_push_consumer(&self) -> Result<(), SystemException> {
        Ok(channel_of(&self.channel)?.disconnect(self.id, false)?)
    }
}

impl ProxyPushConsumerServant for PushConsumerProxy {
    fn connect_push_supplier(
        &self,
        push_supplier: Option<&PushSupplier>,
    ) -> Result<(), ConnectPushSupplierError> {
        let peer = push_supplier.map(|s| s.as_object().clone());
        channel_of(&self.channel)?.connect(
            self.id,
            Kind::PushConsumer,
            peer.as_ref(),
            || AlreadyConnected {}.into(),
            || Ok(matches!(*lock(&self.state), Conn::Idle)),
            || *lock(&self.state) = Conn::Connected(push_supplier.cloned().map(Source::Any)),
        )
    }
}

impl ProxyPullConsumerServant for Arc<PullConsumerProxy> {
    fn connect_pull_supplier(
        &self,
        pull_supplier: Option<&PullSupplier>,
    ) -> Result<(), ConnectPullSupplierError> {
        let supplier = pull_supplier.ok_or_else(nil_peer)?;
        let ch = channel_of(&self.channel)?;
        ch.connect(
            self.id,
            Kind::PullConsumer,
            Some(supplier.as_object()),
            || ConnectPullSupplierError::from(AlreadyConnected {}),
            || Ok(matches!(*lock(&self.state), Conn::Idle)),
            || *lock(&self.state) = Conn::Connected(PullSource::Any(supplier.clone())),
        )?;
        if let Err(e) = self.clone().start() {
            let _ = ch.disconnect(self.id, false);
            return Err(e.into());
        }
        Ok(())
    }
}

impl PullConsumerServant for Arc<PullConsumerProxy> {
    fn disconnect_pull_consumer(&self) -> Result<(), SystemException> {
        Ok(channel_of(&self.channel)?.disconnect(self.id, false)?)
    }
}

impl PushSupplierServant for Arc<PushSupplierProxy> {
    fn disconnect_push_supplier(&self) -> Result<(), SystemException> {
        Ok(channel_of(&self.channel)?.disconnect(self.id, false)?)
    }
}

impl ProxyPushSupplierServant for Arc<PushSupplierProxy> {
    fn connect_push_consumer(
        &self,
        push_consumer: Option<&PushConsumer>,
    ) -> Result<(), ConnectPushConsumerError> {
        let consumer = push_consumer.ok_or_else(nil_peer)?;
        let ch = channel_of(&self.channel)?;
        ch.connect(
            self.id,
            Kind::PushSupplier,
            Some(consumer.as_object()),
            || ConnectPushConsumerError::from(AlreadyConnected {}),
            || Ok(matches!(lock(&self.state).conn, Conn::Idle)),
            || lock(&self.state).conn = Conn::Connected(Target::Any(consumer.clone())),
        )?;
        if let Err(e) = self.clone().start() {
            let _ = ch.disconnect(self.id, false);
            return Err(e.into());
        }
        Ok(())
    }
}

impl AmhProxyPullSupplierServant for PullSupplierProxy {
    fn pull(&self, rh: AmhProxyPullSupplierResponseHandler) {
        PullSupplierProxy::pull(self, Waiter::Event(rh));
    }

    fn try_pull(&self, rh: AmhProxyPullSupplierResponseHandler) {
        let _ = match self.try_take(1) {
            Ok(batch) => match batch.first() {
                Some(e) => rh.try_pull(e.any(), true),
                None => rh.try_pull(&Any::default(), false),
            },
            Err(TryFail::Disconnected) => rh.try_pull_excep(Disconnected {}.into()),
            Err(TryFail::System(e)) => rh.try_pull_excep(e.into()),
        };
    }

    fn disconnect_pull_supplier(&self, rh: AmhProxyPullSupplierResponseHandler) {
        let _ = match channel_of(&self.channel).and_then(|ch| Ok(ch.disconnect(self.id, false)?)) {
            Ok(()) => rh.disconnect_pull_supplier(),
            Err(e) => rh.disconnect_pull_supplier_excep(e),
        };
    }

    fn connect_pull_consumer(
        &self,
        rh: AmhProxyPullSupplierResponseHandler,
        pull_consumer: Option<&PullConsumer>,
    ) {
        let peer = pull_consumer.map(|c| c.as_object().clone());
        let r = channel_of(&self.channel)
            .map_err(ConnectPullConsumerError::from)
            .and_then(|ch| {
                ch.connect(
                    self.id,
                    Kind::PullSupplier,
                    peer.as_ref(),
                    || AlreadyConnected {}.into(),
                    || Ok(matches!(lock(&self.state).conn, Conn::Idle)),
                    || {
                        lock(&self.state).conn =
                            Conn::Connected(pull_consumer.cloned().map(PullPeer::Any))
                    },
                )
            });
        let _ = match r {
            Ok(()) => rh.connect_pull_consumer(),
            Err(e) => rh.connect_pull_consumer_excep(e),
        };
    }
}
