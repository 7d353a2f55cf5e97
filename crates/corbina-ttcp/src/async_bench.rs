//! The asynchronous invocation experiment (`client --mode async`, `suite --only async`):
//! one client task with N = 1, 64, 1,000, 10,000 calls outstanding on one connection
//! (calls/s, p99, client memory per outstanding call), against the synchronous client with
//! 1 and 64 threads (a connection each); and AMH: 10,000 requests parked in reply handles
//! by an in-process server, released together.

use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Barrier, Condvar, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use corbina::config::Endpoint;
use corbina::{Orb, OrbConfig, ReplyHandle, Servant, ServerRequest, SystemException};
use futures_util::stream::{FuturesUnordered, StreamExt};

use crate::bench::{Bench, BenchAsync};
use crate::record::{Record, CORBINA};
use crate::stats::summarize;
use crate::sys::proc_rss_bytes;

/// Outstanding calls measured.
pub const OUTSTANDING: [usize; 4] = [1, 64, 1000, 10_000];

/// Synchronous client threads compared with.
pub const SYNC_THREADS: [usize; 2] = [1, 64];

/// Requests parked by the AMH server.
pub const PARKED: usize = 10_000;

/// Polls `f` to completion on this thread (one task: no executor needed).
fn block_on<F: Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

fn rss() -> f64 {
    proc_rss_bytes(std::process::id()).unwrap_or(0) as f64
}

fn sys(e: SystemException) -> String {
    e.to_string()
}

fn rec(label: &str, mode: &str) -> Record {
    let mut r = Record::new("async", CORBINA).mode(mode).op("ping");
    r.transport = label.into();
    r
}

/// Runs the experiment against `ior` (a Corbina or omniORB bench server), giving each
/// record to `out`; `count`: calls per point.
pub fn run(
    ior: &str,
    label: &str,
    count: usize,
    out: &mut dyn FnMut(Record),
) -> Result<(), String> {
    // The synchronous client: a connection per thread.
    let orb = Orb::with_config(OrbConfig {
        max_strands_per_rope: 64,
        ..OrbConfig::default()
    });
    let b = Bench::narrow(&orb.string_to_object(ior).map_err(sys)?).map_err(sys)?;
    for &threads in &SYNC_THREADS {
        let per = count.div_ceil(threads);
        let start = Arc::new(Barrier::new(threads + 1));
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let (b, start) = (b.clone(), start.clone());
                std::thread::spawn(move || -> Result<Vec<f64>, String> {
                    b.ping().map_err(sys)?;
                    start.wait();
                    let mut us = Vec::with_capacity(per);
                    for _ in 0..per {
                        let t = Instant::now();
                        b.ping().map_err(sys)?;
                        us.push(t.elapsed().as_secs_f64() * 1e6);
                    }
                    Ok(us)
                })
            })
            .collect();
        start.wait();
        let t0 = Instant::now();
        let mut us = Vec::new();
        for w in workers {
            us.extend(w.join().map_err(|_| "a sync client thread panicked")??);
        }
        let dt = t0.elapsed().as_secs_f64();
        let mut r = rec(label, "sync").latency(&summarize(&mut us));
        r.threads = Some(threads as u64);
        r.n = Some(us.len() as u64);
        r.seconds = Some(dt);
        r.calls_per_s = Some(us.len() as f64 / dt);
        out(r);
    }
    orb.destroy();
    // The asynchronous client: one task, one connection, a window of N calls in flight; on
    // a single-threaded tokio runtime, whose I/O driver reads the connection.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(|e| e.to_string())?;
    // One connection, as the experiment says (no strand pool).
    let orb = Orb::with_config(OrbConfig::default().async_calls_per_strand(0));
    let a = BenchAsync::from(Bench::narrow(&orb.string_to_object(ior).map_err(sys)?).map_err(sys)?);
    rt.block_on(a.ping()).map_err(sys)?;
    for &n in &OUTSTANDING {
        let total = count.max(3 * n);
        let rss0 = rss();
        let mut peak = rss0;
        let mut us = Vec::with_capacity(total);
        let t0 = Instant::now();
        if n == 1 {
            // One call at a time, as a user awaits one: no window of futures around it,
            // whose own wake-ups and task allocations would be counted in its latency.
            rt.block_on(async {
                for _ in 0..total {
                    let t = Instant::now();
                    a.ping().await?;
                    us.push(t.elapsed().as_secs_f64() * 1e6);
                }
                peak = peak.max(rss());
                Ok::<(), SystemException>(())
            })
            .map_err(sys)?;
        } else {
            rt.block_on(async {
                let mut window = FuturesUnordered::new();
                let call = |a: &BenchAsync| {
                    let a = a.clone();
                    async move {
                        let t = Instant::now();
                        a.ping().await.map(|()| t.elapsed().as_secs_f64() * 1e6)
                    }
                };
                let mut sent = 0;
                while sent < n.min(total) {
                    window.push(call(&a));
                    sent += 1;
                }
                let mut first = true;
                while let Some(r) = window.next().await {
                    if first {
                        // The window is full and sent: what N calls in flight hold.
                        peak = peak.max(rss());
                        first = false;
                    }
                    us.push(r.map_err(sys)?);
                    if sent < total {
                        window.push(call(&a));
                        sent += 1;
                    }
                }
                Ok::<(), String>(())
            })?;
        }
        let dt = t0.elapsed().as_secs_f64();
        let mut r = rec(label, "async").latency(&summarize(&mut us));
        r.threads = Some(1);
        r.outstanding = Some(n as u64);
        r.n = Some(total as u64);
        r.seconds = Some(dt);
        r.calls_per_s = Some(total as f64 / dt);
        r.rss_bytes_per_call = Some(((peak - rss0) / n as f64).max(0.0));
        out(r);
    }
    orb.destroy();
    out(amh(label)?);
    Ok(())
}

/// `n` null twoway calls, each awaited before the next, in a single-threaded tokio runtime
/// (whose I/O driver reads the connection), nothing timed: the asynchronous client the
/// suite runs under callgrind (`ping IOR N --invocation async`).
pub fn ping_n(ior: &str, n: usize) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(|e| e.to_string())?;
    let orb = Orb::with_config(crate::experiments::with_noop_interceptors(
        OrbConfig::default().async_calls_per_strand(0),
    ));
    let a = BenchAsync::from(Bench::narrow(&orb.string_to_object(ior).map_err(sys)?).map_err(sys)?);
    rt.block_on(async {
        for _ in 0..n {
            a.ping().await?;
        }
        Ok::<(), SystemException>(())
    })
    .map_err(sys)?;
    println!("{n} calls");
    orb.shutdown(true);
    Ok(())
}

/// Parks every `ping`'s reply handle.
struct Parking {
    parked: Mutex<Vec<ReplyHandle>>,
    arrived: Condvar,
}

struct ParkingServant(Arc<Parking>);

impl Servant for ParkingServant {
    fn primary_interface(&self) -> &'static str {
        Bench::REPOSITORY_ID
    }
    fn is_a(&self, id: &str) -> bool {
        id == Bench::REPOSITORY_ID
    }
    fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        if req.operation() != "ping" {
            return Err(corbina::servant::bad_operation());
        }
        let h = req.defer_reply()?;
        let mut p = self
            .0
            .parked
            .lock()
            .map_err(|_| corbina::servant::bad_operation())?;
        p.push(h);
        self.0.arrived.notify_all();
        Ok(())
    }
}

/// AMH: [`PARKED`] requests parked by an in-process server, then released together.
fn amh(label: &str) -> Result<Record, String> {
    let parking = Arc::new(Parking {
        parked: Mutex::new(Vec::new()),
        arrived: Condvar::new(),
    });
    let server = Orb::with_config(OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..OrbConfig::default()
    });
    let poa = server.root_poa();
    let id = poa
        .activate_object(Arc::new(ParkingServant(parking.clone())))
        .map_err(|e| e.to_string())?;
    let obj = poa.id_to_reference(&id).map_err(|e| e.to_string())?;
    poa.the_poa_manager()
        .activate()
        .map_err(|e| e.to_string())?;
    let ior = server.object_to_string(&obj).map_err(sys)?;
    let client = Orb::with_config(OrbConfig::default());
    let a = BenchAsync::unchecked_narrow(&client.string_to_object(&ior).map_err(sys)?);
    let rss0 = rss();
    let result = block_on(async {
        let mut calls: FuturesUnordered<_> = (0..PARKED)
            .map(|_| {
                let a = a.clone();
                async move { a.ping().await }
            })
            .collect();
        // Another thread waits for the server to have parked every request, then releases
        // them together; this one keeps polling the calls, which is what sends them (the
        // first call's connection is made off the polling thread and wakes them).
        let waiter = {
            let parking = parking.clone();
            std::thread::spawn(move || -> Result<(f64, Instant), String> {
                let deadline = Instant::now() + Duration::from_secs(60);
                let handles = {
                    let mut p = parking.parked.lock().map_err(|_| "poisoned")?;
                    while p.len() < PARKED {
                        let left = deadline.saturating_duration_since(Instant::now());
                        if left.is_zero() {
                            // Dropped handles answer INTERNAL, so the caller's wait ends too.
                            let parked = std::mem::take(&mut *p).len();
                            return Err(format!("only {parked} of {PARKED} requests parked"));
                        }
                        p = parking
                            .arrived
                            .wait_timeout(p, left)
                            .map_err(|_| "poisoned")?
                            .0;
                    }
                    std::mem::take(&mut *p)
                };
                let parked_rss = rss();
                let t0 = Instant::now();
                for h in handles {
                    let _ = h.reply(|_| Ok(()));
                }
                Ok((parked_rss, t0))
            })
        };
        let mut answered = 0;
        let mut failed = None;
        while let Some(r) = calls.next().await {
            match r {
                Ok(()) => answered += 1,
                Err(e) => failed = failed.or(Some(sys(e))),
            }
        }
        let end = Instant::now();
        let (parked_rss, t0) = waiter
            .join()
            .map_err(|_| "the releasing thread panicked")??;
        if let Some(e) = failed {
            return Err(e);
        }
        Ok((answered, end.duration_since(t0).as_secs_f64(), parked_rss))
    });
    client.destroy();
    server.destroy();
    let (answered, dt, parked_rss) = result?;
    let mut r = rec(label, "amh_parked");
    r.outstanding = Some(PARKED as u64);
    r.n = Some(answered as u64);
    r.complete = Some(answered == PARKED);
    r.seconds = Some(dt);
    r.calls_per_s = Some(answered as f64 / dt);
    // Client and server in one process: the calls in flight and the parked requests.
    r.rss_bytes_per_call = Some(((parked_rss - rss0) / PARKED as f64).max(0.0));
    Ok(r)
}
