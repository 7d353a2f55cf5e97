//! `corbina-events`: the CORBA Event Service (CosEventComm, CosEventChannelAdmin) and
//! Notification Service (CosNotifyChannelAdmin, CosNotifyFilter) for Corbina.
//!
//! - [`cos_event_comm`], [`cos_event_channel_admin`]: stubs and skeletons generated from the
//!   OMG's IDL (`idl/`, written from the specification) by `corbina-codegen`: the proxies any
//!   supplier or consumer uses, whichever channel it talks to (Corbina's, omniEvents',
//!   JacORB's).
//! - [`omni_events::EventChannelFactory`]: the channel factory omniEvents serves (a
//!   `CosLifeCycle::GenericFactory`), so omniEvents' `eventc` creates channels here too.
//! - [`EventService`]: the service itself, as the `corbina-events` daemon runs it: a default
//!   channel under the object key `EventChannel` and the factory under
//!   `EventChannelFactory` (so `corbaloc::host:port/EventChannel` works), every channel,
//!   admin and proxy an object of one PERSISTENT POA, stored in a [redb](https://docs.rs/redb)
//!   database ([`store`]), so the references suppliers and consumers hold, and their
//!   connections, survive a restart (even after `kill -9`) on the same endpoint.
//! - [`cos_notification`], [`cos_notify_comm`], [`cos_notify_filter`]: the Notification
//!   Service's IDL (structured events, QoS names, its suppliers and consumers, filters), and
//!   [`filter`]: `Filter`, `MappingFilter` and the `FilterFactory` (served under the object
//!   key `FilterFactory`) with the [`etcl`] constraint language
//!   (`$type_name == 'Alarm' and $.header.variable_header(priority) > 3`).
//! - [`cos_notify_channel_admin`]: the notification channel, its factory (served under the
//!   object key [`NOTIFY_FACTORY_KEY`], `NotificationService`), admins and proxies; see
//!   [the Notification Service](#the-notification-service) below.
//!
//! # Connecting and disconnecting
//!
//! As CosEventChannelAdmin says: connecting a proxy twice raises `AlreadyConnected`; a push
//! consumer and a pull supplier must be given (nil is `BAD_PARAM`), a push supplier and a
//! pull consumer may connect as nil (they then hear of no disconnection); pushing into, or
//! pulling from, a proxy not connected yet raises `Disconnected`. A `disconnect_*` call
//! ends the proxy: its object no longer exists (OBJECT_NOT_EXIST), and the peer that called
//! it is not called back. `EventChannel::destroy` disconnects every proxy and calls each
//! connected peer's `disconnect_*`. `TypeError` belongs to typed channels: these channels
//! carry untyped events (`any`) and never raise it.
//!
//! # Delivery
//!
//! An event pushed by a supplier (or pulled from one) is appended to a bounded queue per
//! connected consumer; each push consumer is served by a thread of its own, in order, so a
//! slow or dead consumer never stalls the supplier or the other consumers. With
//! [`Options::push_window`] above 1 (the default is 1: a synchronous call per push), the
//! thread keeps that many pushes in flight (asynchronous calls, pipelined on a connection of
//! the consumer's own, so they arrive in order and a slow consumer in the same process
//! delays no other). Pushes failing with TRANSIENT, COMM_FAILURE or TIMEOUT are sent
//! again, with those after them not yet done, in order, one at a time after a doubling
//! back-off; the consumer is disconnected after [`Options::push_retries`] failures in a row.
//! (A consumer that fails one push while it accepts the next ones already in flight gets the
//! failed one again after them: a window of 1 keeps even that order.) Pull consumers' `pull`
//! waits without holding a server thread (an AMH servant).
//!
//! # The Notification Service
//!
//! `EventChannelFactory::create_channel` makes a notification channel: an event channel
//! (CosEvent clients use it as one) with a default consumer and supplier admin (`AdminID`
//! 0) and more on demand (`new_for_consumers(op)`, `new_for_suppliers(op)`), each handing
//! out push and pull proxies of three kinds (`ANY_EVENT`, `STRUCTURED_EVENT`,
//! `SEQUENCE_EVENT`) and the CosEvent ones. Every kind goes through the same per-consumer
//! queue (and, for push consumers, delivery thread; a waiting `pull_structured_event` or
//! `pull_structured_events` holds no server thread, as a CosEvent `pull`); the channel pulls
//! from pull suppliers of every kind with `try_pull*` (sequence suppliers in batches of
//! `MaximumBatchSize`). An event is translated once per kind asked for: an `any` reaches structured and
//! sequence consumers as a structured event of type `%ANY` with the `any` in
//! `remainder_of_body`, a structured event reaches `any` consumers as an `any` holding the
//! `StructuredEvent`. A sequence consumer gets batches of at most `MaximumBatchSize`
//! events; a batch not full yet waits up to `PacingInterval` after its first event.
//!
//! **Filters** (`add_filter` on admins and proxies, any `CosNotifyFilter::Filter`, local or
//! remote): an event passes an object when one of its filters matches it (or when it has
//! none); it passes a proxy and its admin when it passes both, or either when the admin was
//! created with `OR_OP`. Supplier-side filters decide once per event, consumer-side ones
//! once per event and consumer. A filter that cannot be reached does not match.
//!
//! **QoS** (`set_qos` on the channel, an admin, a proxy; a new admin starts with its
//! channel's, a new proxy with its admin's): `Priority` (an event's priority unless its
//! header's `Priority` says otherwise), `OrderPolicy` (`AnyOrder`/`FifoOrder`,
//! `PriorityOrder`, `DeadlineOrder` of a consumer's queue), `MaxEventsPerConsumer` with
//! `DiscardPolicy` (`FifoOrder`: the oldest goes, `LifoOrder`: the newest, `PriorityOrder`:
//! the lowest priority, `DeadlineOrder`: the one expiring first; expired events always go
//! first), `Timeout` (from the event's header or the supplier's proxy: an event expired
//! before delivery is dropped), `MaximumBatchSize`, `PacingInterval`,
//! `ConnectionReliability` (`BestEffort` or `Persistent`: connections are stored either
//! way), `StartTimeSupported`/`StopTimeSupported` (when `TRUE` on the supplier's side, a
//! structured event's header `StartTime`, a TimeBase::UtcT, holds it in each consumer's
//! queue until then while later events go by, and its `StopTime` drops it after then).
//! `EventReliability` (`Persistent`, with `ConnectionReliability=Persistent` only, else
//! `UnsupportedQoS` with `UNSUPPORTED_VALUE`: see **Persistence**); unknown properties are
//! refused with `BAD_PROPERTY`. Admin properties: `MaxQueueLength` (the default bound of each
//! consumer's queue), `MaxConsumers`/`MaxSuppliers` (proxies of each side in the channel:
//! beyond them `obtain_notification_*` raise `AdminLimitExceeded`); `RejectNewEvents=TRUE`
//! is refused. `suspend_connection` holds a push consumer's deliveries (events still
//! queue), or the channel's pulls from a pull supplier, until `resume_connection`.
//!
//! **Mapping filters**: a consumer proxy's `priority_filter` and `lifetime_filter` (else
//! its admin's) give an event, when one of their constraints matches it, its priority
//! (a short) and lifetime (a TimeBase::TimeT) in that consumer's queue; the event itself
//! is delivered unchanged.
//!
//! **Subscriptions and offers**: `subscription_change` on a consumer admin or proxy and
//! `offer_change` on a supplier admin or proxy are counted per type; a type that becomes
//! announced, or no longer is, is forwarded to the structured and sequence suppliers
//! (consumers) connected, unless they asked for no updates (`obtain_subscription_types` /
//! `obtain_offered_types` with `*_UPDATES_OFF`), and those operations answer from what was
//! announced.
//!
//! **Persistence**: channels, admins (operator, QoS, filters), proxies (kind, QoS, filters,
//! connected peer, suspended or not) are stored as the event channel's objects are and come back after a
//! restart with the same references. With `EventReliability=Persistent`, each consumer
//! proxy's undelivered events are stored as well (one write per event queued, one per push
//! or pull that delivered), removed once delivered, discarded or expired, and queued again
//! after a restart: a push consumer gets them pushed, a pull consumer pulls them (a pulled
//! event is removed as the pull is answered). The store holds no more of them than the
//! proxy's queue bound (`MaxEventsPerConsumer`, else the channel's `MaxQueueLength`) and
//! its pushes in flight. A push is at least once: an event whose push returned just before
//! a crash, before its removal, comes again (as may, after the machine's crash rather than
//! the daemon's, those delivered shortly before: removals are not synced to disk).
//!
//! # Not there yet
//!
//! Typed channels.
//!
//! # Example
//!
//! ```
//! use corbina::{config::Endpoint, Any, Orb, OrbConfig};
//! use corbina_events::cos_event_channel_admin::EventChannel;
//! use corbina_events::{EventService, Options};
//!
//! let dir = std::env::temp_dir().join(format!("corbina-events-doc-{}", std::process::id()));
//! let _ = std::fs::remove_dir_all(&dir);
//! let config = OrbConfig {
//!     endpoints: vec![Endpoint { host: "127.0.0.1".into(), port: 0 }],
//!     ..OrbConfig::default()
//! };
//! let orb = Orb::with_config(config);
//! let service = EventService::start(&orb, &Options::new(&dir)).unwrap();
//!
//! // Suppliers and consumers reach the default channel by its corbaloc URL.
//! let (host, port) = service.endpoint();
//! let obj = orb.string_to_object(&format!("corbaloc::{host}:{port}/EventChannel")).unwrap();
//! let channel = EventChannel::narrow(&obj).unwrap();
//! // A pull consumer (connected with a nil reference: it needs no callback) ...
//! let pull = channel.for_consumers().unwrap().unwrap().obtain_pull_supplier().unwrap().unwrap();
//! pull.connect_pull_consumer(None).unwrap();
//! // ... and a push supplier.
//! let push = channel.for_suppliers().unwrap().unwrap().obtain_push_consumer().unwrap().unwrap();
//! push.connect_push_supplier(None).unwrap();
//! push.push(&Any::from_string("hello").unwrap()).unwrap();
//! assert_eq!(pull.pull().unwrap().to_string_value().as_deref(), Some("hello"));
//! # drop(service); orb.destroy(); let _ = std::fs::remove_dir_all(&dir);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// Code generated from `idl/CosNotifyChannelAdmin.idl` (and the CosEventChannelAdmin,
/// CosEventComm, CosNotifyFilter, CosNotification and CosNotifyComm it includes) by
/// `corbina-codegen`.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
mod generated_event {
    include!(concat!(env!("OUT_DIR"), "/CosNotifyChannelAdmin.rs"));
}
/// Code generated from `idl/EventChannelFactory.idl` by `corbina-codegen`.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
mod generated_factory {
    include!(concat!(env!("OUT_DIR"), "/EventChannelFactory.rs"));
}
pub use generated_event::{
    cos_event_channel_admin, cos_event_comm, cos_notification, cos_notify_channel_admin,
    cos_notify_comm, cos_notify_filter,
};
pub use generated_factory::{cos_life_cycle, cos_naming, omni_events};
/// Code generated from `idl/TimeBase.idl` by `corbina-codegen`: `UtcT`, the type of a
/// structured event's `StartTime` and `StopTime`.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
mod generated_time {
    include!(concat!(env!("OUT_DIR"), "/TimeBase.rs"));
}
pub use generated_time::time_base;

mod admin;
mod channel;
pub mod etcl;
pub mod factory;
pub mod filter;
mod notify;
mod pull;
mod qos;
mod queue;
mod servants;
mod service;
pub mod store;

pub use notify::NOTIFY_FACTORY_KEY;

pub use service::{
    default_data_dir, EventService, Options, ServiceError, CHANNEL_KEY, DEFAULT_MAX_BACKOFF,
    DEFAULT_MAX_PROXIES, DEFAULT_MAX_QUEUE, DEFAULT_PULL_RETRY, DEFAULT_PUSH_RETRIES,
    DEFAULT_PUSH_WINDOW, DEFAULT_RETRY_BACKOFF, EVENTS_POA, FACTORY_KEY, FILTER_FACTORY_KEY,
};
