//! The pull model's peers of every event kind: the suppliers a channel pulls from, the
//! consumers that pull from it, and the `pull` calls waiting for an event (AMH: a waiting
//! `pull` holds no server thread).

use std::sync::Arc;

use corbina::SystemException;

use crate::channel::Failure;
use crate::cos_event_channel_admin::AmhProxyPullSupplierResponseHandler;
use crate::cos_event_comm::pull_supplier::TryPullError;
use crate::cos_event_comm::{Disconnected, PullConsumer, PullSupplier};
use crate::cos_notify_channel_admin::{
    AmhProxyPullSupplierResponseHandler as AmhAnyPullResponseHandler,
    AmhSequenceProxyPullSupplierResponseHandler, AmhStructuredProxyPullSupplierResponseHandler,
};
use crate::cos_notify_comm::sequence_pull_supplier::TryPullStructuredEventsError;
use crate::cos_notify_comm::structured_pull_supplier::TryPullStructuredEventError;
use crate::cos_notify_comm::{
    SequencePullConsumer, SequencePullSupplier, StructuredPullConsumer, StructuredPullSupplier,
};
use crate::queue::{Body, Event};

/// A supplier the channel pulls from.
#[derive(Clone)]
pub(crate) enum PullSource {
    Any(PullSupplier),
    Structured(StructuredPullSupplier),
    Sequence(SequencePullSupplier),
}

impl PullSource {
    pub(crate) fn object(&self) -> &corbina::ObjectRef {
        match self {
            PullSource::Any(s) => s.as_object(),
            PullSource::Structured(s) => s.as_object(),
            PullSource::Sequence(s) => s.as_object(),
        }
    }

    /// What the supplier has now (at most `max` events of a sequence supplier).
    pub(crate) fn try_pull(&self, max: usize) -> Result<Vec<Body>, Failure> {
        let max = i32::try_from(max).unwrap_or(i32::MAX);
        match self {
            PullSource::Any(s) => match s.try_pull() {
                Ok((e, true)) => Ok(vec![Body::Any(e)]),
                Ok((_, false)) => Ok(Vec::new()),
                Err(TryPullError::Disconnected(_)) => Err(Failure::Gone),
                Err(TryPullError::System(e)) => Err(crate::channel::classify(&e)),
            },
            PullSource::Structured(s) => match s.try_pull_structured_event() {
                Ok((e, true)) => Ok(vec![Body::Structured(e)]),
                Ok((_, false)) => Ok(Vec::new()),
                Err(TryPullStructuredEventError::Disconnected(_)) => Err(Failure::Gone),
                Err(TryPullStructuredEventError::System(e)) => Err(crate::channel::classify(&e)),
            },
            PullSource::Sequence(s) => match s.try_pull_structured_events(max) {
                // A supplier answering more than asked is cut to what was asked.
                Ok((batch, true)) => Ok(batch
                    .into_iter()
                    .take(max.max(1) as usize)
                    .map(Body::Structured)
                    .collect()),
                Ok((_, false)) => Ok(Vec::new()),
                Err(TryPullStructuredEventsError::Disconnected(_)) => Err(Failure::Gone),
                Err(TryPullStructuredEventsError::System(e)) => Err(crate::channel::classify(&e)),
            },
        }
    }

    /// Tells the supplier it is disconnected.
    pub(crate) fn disconnect(&self) -> Result<(), SystemException> {
        match self {
            PullSource::Any(s) => s.disconnect_pull_supplier(),
            PullSource::Structured(s) => s.disconnect_structured_pull_supplier(),
            PullSource::Sequence(s) => s.disconnect_sequence_pull_supplier(),
        }
    }
}

/// A consumer that pulls from the channel.
#[derive(Clone)]
pub(crate) enum PullPeer {
    Any(PullConsumer),
    Structured(StructuredPullConsumer),
    Sequence(SequencePullConsumer),
}

impl PullPeer {
    pub(crate) fn object(&self) -> &corbina::ObjectRef {
        match self {
            PullPeer::Any(c) => c.as_object(),
            PullPeer::Structured(c) => c.as_object(),
            PullPeer::Sequence(c) => c.as_object(),
        }
    }

    /// Tells the consumer it is disconnected.
    pub(crate) fn disconnect(&self) -> Result<(), SystemException> {
        match self {
            PullPeer::Any(c) => c.disconnect_pull_consumer(),
            PullPeer::Structured(c) => c.disconnect_structured_pull_consumer(),
            PullPeer::Sequence(c) => c.disconnect_sequence_pull_consumer(),
        }
    }
}

/// A `pull` waiting for an event.
pub(crate) enum Waiter {
    /// CosEventChannelAdmin `pull`.
    Event(AmhProxyPullSupplierResponseHandler),
    /// CosNotifyChannelAdmin `pull` (ANY_EVENT).
    Any(AmhAnyPullResponseHandler),
    /// `pull_structured_event`.
    Structured(AmhStructuredProxyPullSupplierResponseHandler),
    /// `pull_structured_events(max)`.
    Sequence(AmhSequenceProxyPullSupplierResponseHandler, usize),
}

impl Waiter {
    /// The most events the call takes.
    pub(crate) fn max(&self) -> usize {
        match self {
            Waiter::Sequence(_, max) => (*max).max(1),
            _ => 1,
        }
    }

    /// Answers with `batch` (one event, but for a sequence pull).
    pub(crate) fn reply(self, batch: &[Arc<Event>]) {
        let Some(first) = batch.first() else { return };
        let _ = match self {
            Waiter::Event(rh) => rh.pull(first.any()),
            Waiter::Any(rh) => rh.pull(first.any()),
            Waiter::Structured(rh) => rh.pull_structured_event(first.structured()),
            Waiter::Sequence(rh, _) => {
                let events: Vec<_> = batch.iter().map(|e| e.structured().clone()).collect();
                rh.pull_structured_events(&events)
            }
        };
    }

    /// Answers `Disconnected` (the proxy is not connected, or was disconnected while the
    /// call waited).
    pub(crate) fn disconnected(self) {
        let _ = match self {
            Waiter::Event(rh) => rh.pull_excep(Disconnected {}.into()),
            Waiter::Any(rh) => rh.pull_excep(Disconnected {}.into()),
            Waiter::Structured(rh) => rh.pull_structured_event_excep(Disconnected {}.into()),
            Waiter::Sequence(rh, _) => rh.pull_structured_events_excep(Disconnected {}.into()),
        };
    }

    /// Answers a system exception.
    pub(crate) fn fail(self, e: SystemException) {
        let _ = match self {
            Waiter::Event(rh) => rh.pull_excep(e.into()),
            Waiter::Any(rh) => rh.pull_excep(e.into()),
            Waiter::Structured(rh) => rh.pull_structured_event_excep(e.into()),
            Waiter::Sequence(rh, _) => rh.pull_structured_events_excep(e.into()),
        };
    }
}
