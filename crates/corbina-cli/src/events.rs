//! `corbina events`: an event channel from the command line. Works with any CosEvent channel
//! (Corbina's `corbina-events`, omniEvents, JacORB's): `create` makes a channel through
//! omniEvents' factory interface, `push` pushes text events, `tail` prints what a channel
//! delivers, through a pull consumer.

use corbina::{Any, ObjectRef, Orb, OrbConfig};
use corbina_events::cos_event_channel_admin::EventChannel;
use corbina_events::cos_life_cycle::NameValuePair;
use corbina_events::cos_naming::NameComponent;
use corbina_events::omni_events::EventChannelFactory;

/// The default channel of `corbina-events` (and of omniEvents) on this host.
pub const DEFAULT_CHANNEL: &str = "corbaloc::localhost:11169/EventChannel";
/// The channel factory of `corbina-events` (and of omniEvents) on this host.
pub const DEFAULT_FACTORY: &str = "corbaloc::localhost:11169/EventChannelFactory";

/// `corbina events`' arguments: one operation on an event channel.
#[derive(clap::Args)]
#[command(
    after_help = "REF is IOR:…, corbaloc:…, corbaname:… or a file holding one. The channel \
defaults to corbaloc::localhost:11169/EventChannel and the factory to \
corbaloc::localhost:11169/EventChannelFactory (corbina-events' and omniEvents' port)."
)]
pub struct Args {
    #[command(subcommand)]
    op: Op,
}

#[derive(clap::Subcommand)]
enum Op {
    /// Create a channel through a channel factory and print its IOR
    Create {
        /// The channel's name: it is then also at corbaloc::HOST:PORT/NAME
        name: Option<String>,
        /// The channel factory
        #[arg(long, value_name = "REF")]
        factory: Option<String>,
        /// Events kept per consumer before the oldest is dropped
        #[arg(long, value_name = "N")]
        max_queue: Option<u32>,
    },
    /// Push events (strings) into a channel
    Push {
        /// The event's text
        text: String,
        /// The channel
        #[arg(long, value_name = "REF")]
        channel: Option<String>,
        /// How many times to push it
        #[arg(long, value_name = "N", default_value_t = 1)]
        count: u32,
    },
    /// Print the events a channel delivers, one per line (strings as text, other values as
    /// their type and value), until interrupted or COUNT events
    Tail {
        /// The channel
        #[arg(long, value_name = "REF")]
        channel: Option<String>,
        /// Stop after N events
        #[arg(long, value_name = "N")]
        count: Option<u64>,
    },
}

impl Op {
    fn name(&self) -> &'static str {
        match self {
            Op::Create { .. } => "create",
            Op::Push { .. } => "push",
            Op::Tail { .. } => "tail",
        }
    }
}

use crate::reference::Failure;

/// Turns an operation's error enum (user exceptions and system exceptions) into a failure.
fn failed(what: &str, e: impl std::fmt::Debug) -> Failure {
    Failure(format!("{what}: {e:?}"))
}

fn object(orb: &Orb, text: &str) -> Result<ObjectRef, Failure> {
    crate::reference::text(text)
        .and_then(|t| crate::reference::object(orb, &t))
        .map_err(Failure)
}

fn channel(orb: &Orb, r: Option<&str>) -> Result<EventChannel, Failure> {
    let r = r.unwrap_or(DEFAULT_CHANNEL);
    EventChannel::narrow(&object(orb, r)?)
        .map_err(|e| Failure(format!("{r}: not an event channel ({e})")))
}

/// What `tail` prints for an event.
fn show(event: &Any) -> String {
    match event.to_string_value() {
        Some(s) => s,
        None => format!("{event:?}"),
    }
}

fn run(orb: &Orb, op: &Op) -> Result<(), Failure> {
    match op {
        Op::Create {
            name,
            factory,
            max_queue,
        } => {
            let r = factory.as_deref().unwrap_or(DEFAULT_FACTORY);
            let factory = EventChannelFactory::narrow(&object(orb, r)?)
                .map_err(|e| Failure(format!("{r}: not an event channel factory ({e})")))?;
            let key = [NameComponent {
                id: "EventChannel".into(),
                kind: "object interface".into(),
            }];
            let mut criteria = Vec::new();
            if let Some(n) = name {
                criteria.push(NameValuePair {
                    name: "InsName".into(),
                    value: Any::from_string(n).map_err(|e| Failure(e.to_string()))?,
                });
            }
            if let Some(q) = max_queue {
                criteria.push(NameValuePair {
                    name: "MaxQueueLength".into(),
                    value: Any::from_ulong(*q),
                });
            }
            let made = factory
                .create_object(&key, &criteria)
                .map_err(|e| failed("create_object", e))?
                .ok_or_else(|| Failure("the factory returned a nil channel".into()))?;
            println!("{}", orb.object_to_string(&made)?);
        }
        Op::Push {
            text,
            channel: r,
            count,
        } => {
            let ch = channel(orb, r.as_deref())?;
            let admin = ch
                .for_suppliers()?
                .ok_or_else(|| Failure("the channel gave a nil supplier admin".into()))?;
            let proxy = admin
                .obtain_push_consumer()?
                .ok_or_else(|| Failure("the channel gave a nil proxy".into()))?;
            proxy
                .connect_push_supplier(None)
                .map_err(|e| failed("connect_push_supplier", e))?;
            let event = Any::from_string(text).map_err(|e| Failure(e.to_string()))?;
            let pushed = (0..*count).try_for_each(|_| proxy.push(&event));
            // Disconnected either way: the channel would keep the proxy otherwise.
            let _ = proxy.disconnect_push_consumer();
            pushed.map_err(|e| failed("push", e))?;
        }
        Op::Tail { channel: r, count } => {
            let ch = channel(orb, r.as_deref())?;
            let admin = ch
                .for_consumers()?
                .ok_or_else(|| Failure("the channel gave a nil consumer admin".into()))?;
            let proxy = admin
                .obtain_pull_supplier()?
                .ok_or_else(|| Failure("the channel gave a nil proxy".into()))?;
            proxy
                .connect_pull_consumer(None)
                .map_err(|e| failed("connect_pull_consumer", e))?;
            let mut seen = 0u64;
            let tailed = loop {
                if count.is_some_and(|c| seen >= c) {
                    break Ok(());
                }
                match proxy.pull() {
                    Ok(event) => {
                        println!("{}", show(&event));
                        seen += 1;
                    }
                    Err(e) => break Err(failed("pull", e)),
                }
            };
            let _ = proxy.disconnect_pull_supplier();
            tailed?;
        }
    }
    Ok(())
}

/// Runs `corbina events`; the exit code (1 when the operation failed).
pub fn main(config: OrbConfig, args: Args) -> Result<u8, String> {
    let what = format!("events {}", args.op.name());
    crate::reference::run_on_orb(config, &what, |orb| run(orb, &args.op))
}
