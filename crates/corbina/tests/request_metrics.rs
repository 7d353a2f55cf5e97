//! Request metrics through the `metrics` facade (`corbina::trace`, *Metrics*): counts by
//! side, operation and outcome, errors by exception, durations. Its own test binary: it
//! installs the process-wide recorder.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use corbina::{CompletionStatus, Orb, OrbConfig, Servant, ServerRequest};
use corbina::{SystemException, SystemExceptionKind};
use metrics::{
    Counter, Gauge, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder, SharedString, Unit,
};

/// A histogram's samples.
#[derive(Default)]
struct Samples(Mutex<Vec<f64>>);

impl HistogramFn for Samples {
    fn record(&self, value: f64) {
        self.0.lock().unwrap().push(value);
    }
}

/// Counters and histograms by `name{label=value,…}`.
#[derive(Default)]
struct Store {
    counters: Mutex<BTreeMap<String, Arc<AtomicU64>>>,
    histograms: Mutex<BTreeMap<String, Arc<Samples>>>,
}

struct Shared(Arc<Store>);

fn name(key: &Key) -> String {
    let labels: Vec<String> = key
        .labels()
        .map(|l| format!("{}={}", l.key(), l.value()))
        .collect();
    format!("{}{{{}}}", key.name(), labels.join(","))
}

impl Recorder for Shared {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        let mut c = self.0.counters.lock().unwrap();
        Counter::from_arc(c.entry(name(key)).or_default().clone())
    }
    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::noop()
    }
    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        let mut h = self.0.histograms.lock().unwrap();
        Histogram::from_arc(h.entry(name(key)).or_default().clone())
    }
}

/// `void ping()`, `void deny()` (NO_PERMISSION).
struct Target;

impl Servant for Target {
    fn primary_interface(&self) -> &'static str {
        "IDL:Test/Target:1.0"
    }
    fn is_a(&self, id: &str) -> bool {
        id == "IDL:Test/Target:1.0"
    }
    fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        match req.operation() {
            "deny" => Err(SystemException::new(SystemExceptionKind::NoPermission, 1)
                .completed(CompletionStatus::No)),
            _ => req.reply(|_| Ok(())),
        }
    }
}

fn call(obj: &corbina::ObjectRef, op: &str) -> Result<(), SystemException> {
    obj.invoke(op, |_| Ok(()), |_| Ok(()), corbina::no_user)
}

#[test]
fn requests_are_counted_and_timed_by_operation_and_outcome() {
    let store = Arc::new(Store::default());
    metrics::set_global_recorder(Shared(store.clone())).unwrap();

    // Off by default: nothing recorded.
    let plain = Orb::with_config(OrbConfig::default().direct_collocation(false));
    let poa = plain.root_poa();
    poa.the_poa_manager().activate().unwrap();
    let servant: Arc<dyn Servant> = Arc::new(Target);
    poa.activate_object(servant.clone()).unwrap();
    call(&poa.servant_to_reference(&servant).unwrap(), "ping").unwrap();
    plain.destroy();
    assert!(store.counters.lock().unwrap().is_empty());

    let orb = Orb::with_config(OrbConfig::default().request_metrics(true));
    let poa = orb.root_poa();
    poa.the_poa_manager().activate().unwrap();
    poa.activate_object(servant.clone()).unwrap();
    let obj = poa.servant_to_reference(&servant).unwrap();
    for _ in 0..3 {
        call(&obj, "ping").unwrap();
    }
    call(&obj, "deny").unwrap_err();
    orb.destroy();

    let counters: BTreeMap<String, u64> = store
        .counters
        .lock()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.load(Ordering::Relaxed)))
        .collect();
    for side in ["client", "server"] {
        let ok = format!("corbina_requests_total{{side={side},operation=ping,outcome=SUCCESSFUL}}");
        assert_eq!(counters.get(&ok), Some(&3), "{counters:?}");
        let denied = format!(
            "corbina_requests_total{{side={side},operation=deny,outcome=SYSTEM_EXCEPTION}}"
        );
        assert_eq!(counters.get(&denied), Some(&1), "{counters:?}");
        let error = format!(
            "corbina_request_errors_total{{side={side},operation=deny,exception=IDL:omg.org/CORBA/NO_PERMISSION:1.0}}"
        );
        assert_eq!(counters.get(&error), Some(&1), "{counters:?}");
        let h = format!("corbina_request_duration_seconds{{side={side},operation=ping}}");
        let histograms = store.histograms.lock().unwrap();
        let samples = histograms[&h].0.lock().unwrap().clone();
        assert_eq!(samples.len(), 3);
        assert!(samples.iter().all(|s| *s > 0.0 && *s < 30.0), "{samples:?}");
    }
}
