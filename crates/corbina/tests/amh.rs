//! Asynchronous Method Handling: a servant takes the reply out of its upcall
//! (`ServerRequest::defer_reply`) and answers later from another thread or task, while the
//! connection thread goes on reading requests; an in-process call waits for the handle.

mod common;

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use common::{client, serve};
use corbina::error::minor;
use corbina::{ReplyHandle, Servant, ServerRequest, SystemException, SystemExceptionKind};
use futures_util::future::join_all;

/// What the parking servant does with a deferred request.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Parks it until the test releases it.
    Park,
    /// Drops the handle without replying.
    Drop,
}

/// Serves bench.idl's `echo` and `ping_oneway` by deferring every reply.
struct Parking {
    mode: Mode,
    parked: Mutex<Vec<(ReplyHandle, String)>>,
    arrived: Condvar,
}

impl Parking {
    fn new(mode: Mode) -> Arc<Parking> {
        Arc::new(Parking {
            mode,
            parked: Mutex::new(Vec::new()),
            arrived: Condvar::new(),
        })
    }

    /// Waits until `n` requests are parked, then takes them.
    fn take(&self, n: usize) -> Vec<(ReplyHandle, String)> {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let mut p = self.parked.lock().unwrap();
        while p.len() < n {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            assert!(!left.is_zero(), "only {} of {n} requests arrived", p.len());
            p = self.arrived.wait_timeout(p, left).unwrap().0;
        }
        std::mem::take(&mut *p)
    }
}

/// The servant is shared with the test through an `Arc`.
struct ParkingServant(Arc<Parking>);

impl Servant for ParkingServant {
    fn primary_interface(&self) -> &'static str {
        "IDL:Bench:1.0"
    }
    fn is_a(&self, id: &str) -> bool {
        id == "IDL:Bench:1.0"
    }
    fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        let arg = match req.operation() {
            "echo" => req.arguments().read_string()?,
            "ping_oneway" => String::new(),
            _ => return Err(corbina::servant::bad_operation()),
        };
        req.arguments_done()?;
        let handle = req.defer_reply()?;
        // A second reply is refused: the handle owns it now.
        assert!(req.reply(|_| Ok(())).is_err());
        if self.0.mode == Mode::Drop {
            drop(handle);
            return Ok(());
        }
        self.0.parked.lock().unwrap().push((handle, arg));
        self.0.arrived.notify_all();
        Ok(())
    }
}

/// With I/O: the client's connections are read by its driver (feature `tokio`).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

async fn echo(obj: &corbina::ObjectRef, s: String) -> Result<String, SystemException> {
    obj.invoke_async(
        "echo",
        |w| w.write_string(&s),
        |r| r.read_string(),
        corbina::no_user,
    )
    .await
}

/// 2,000 requests from one client connection are all parked at once (the connection
/// thread is not held by any), then released together from another thread, in reverse
/// order: every call gets its own answer.
#[test]
fn parked_requests_released_together() {
    const N: usize = 2000;
    let parking = Parking::new(Mode::Park);
    let (server, ior) = serve(Arc::new(ParkingServant(parking.clone())));
    let (orb, obj) = client(&ior);
    let rt = runtime();
    let calls: Vec<_> = (0..N)
        .map(|i| {
            let obj = obj.clone();
            rt.spawn(async move { echo(&obj, format!("{i}")).await })
        })
        .collect();
    let mut parked = parking.take(N);
    assert_eq!(parked.len(), N);
    std::thread::spawn(move || {
        parked.reverse();
        for (h, arg) in parked {
            let answer = format!("answer {arg}");
            h.reply(|w| w.write_string(&answer)).unwrap();
        }
    })
    .join()
    .unwrap();
    rt.block_on(async {
        for (i, r) in join_all(calls).await.into_iter().enumerate() {
            assert_eq!(r.unwrap().unwrap(), format!("answer {i}"));
        }
    });
    orb.destroy();
    server.destroy();
}

/// A handle dropped without a reply answers INTERNAL, never silence.
#[test]
fn a_dropped_handle_raises_internal() {
    let (server, ior) = serve(Arc::new(ParkingServant(Parking::new(Mode::Drop))));
    let (orb, obj) = client(&ior);
    let e = runtime().block_on(echo(&obj, "x".into())).unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::Internal);
    assert_eq!(e.minor, minor::INTERNAL_REPLY_HANDLE_DROPPED);
    // The synchronous path sees the same.
    let e = obj
        .invoke::<String, SystemException>(
            "echo",
            |w| w.write_string("y"),
            |r| r.read_string(),
            corbina::no_user,
        )
        .unwrap_err();
    assert_eq!(e.minor, minor::INTERNAL_REPLY_HANDLE_DROPPED);
    orb.destroy();
    server.destroy();
}

/// POA rules hold: deactivating the POA manager with `wait_for_completion` waits for a
/// parked request's reply, and the reply still reaches the client.
#[test]
fn deactivation_waits_for_deferred_replies() {
    let parking = Parking::new(Mode::Park);
    let (server, ior) = serve(Arc::new(ParkingServant(parking.clone())));
    let (orb, obj) = client(&ior);
    let rt = runtime();
    let call = {
        let obj = obj.clone();
        rt.spawn(async move { echo(&obj, "held".into()).await })
    };
    let (h, arg) = parking.take(1).pop().unwrap();
    let manager = server.root_poa().the_poa_manager();
    let (done_tx, done) = std::sync::mpsc::channel();
    let deactivating = std::thread::spawn(move || {
        manager.deactivate(false, true).unwrap();
        done_tx.send(()).unwrap();
    });
    assert!(
        done.recv_timeout(Duration::from_millis(300)).is_err(),
        "deactivation did not wait for the deferred reply"
    );
    h.reply(|w| w.write_string(&format!("late {arg}"))).unwrap();
    done.recv_timeout(Duration::from_secs(10)).unwrap();
    deactivating.join().unwrap();
    assert_eq!(rt.block_on(call).unwrap().unwrap(), "late held");
    orb.destroy();
    server.destroy();
}

/// Servant methods written as `async fn`s, run by the application's executor (tokio): the
/// upcall defers its reply, spawns the method's future, and the future replies.
struct AsyncEcho {
    executor: tokio::runtime::Handle,
}

impl AsyncEcho {
    async fn echo(s: String) -> Result<String, SystemException> {
        tokio::time::sleep(Duration::from_millis(5)).await;
        Ok(s.to_uppercase())
    }
}

impl Servant for AsyncEcho {
    fn primary_interface(&self) -> &'static str {
        "IDL:Bench:1.0"
    }
    fn is_a(&self, id: &str) -> bool {
        id == "IDL:Bench:1.0"
    }
    fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        if req.operation() != "echo" {
            return Err(corbina::servant::bad_operation());
        }
        let s = req.arguments().read_string()?;
        req.arguments_done()?;
        let handle = req.defer_reply()?;
        self.executor.spawn(async move {
            let _ = match AsyncEcho::echo(s).await {
                Ok(r) => handle.reply(|w| w.write_string(&r)),
                Err(e) => handle.reply_system_exception(e),
            };
        });
        Ok(())
    }
}

#[test]
fn async_fn_servant_methods_on_the_applications_executor() {
    let server_rt = runtime();
    let (server, ior) = serve(Arc::new(AsyncEcho {
        executor: server_rt.handle().clone(),
    }));
    let (orb, obj) = client(&ior);
    let replies = runtime().block_on(join_all((0..100).map(|i| echo(&obj, format!("v{i}")))));
    for (i, r) in replies.into_iter().enumerate() {
        assert_eq!(r.unwrap(), format!("V{i}"));
    }
    orb.destroy();
    server.destroy();
}

/// A deferred oneway: replying does nothing, and the request still counts for the POA
/// until the handle goes.
#[test]
fn deferred_oneways_send_nothing() {
    let parking = Parking::new(Mode::Park);
    let (server, ior) = serve(Arc::new(ParkingServant(parking.clone())));
    let (orb, obj) = client(&ior);
    obj.invoke_oneway("ping_oneway", |_| Ok(())).unwrap();
    let (h, _) = parking.take(1).pop().unwrap();
    assert!(!h.response_expected());
    h.reply(|w| w.write_string("ignored")).unwrap();
    // The connection is still in step: a twoway after it gets its own reply.
    let call = runtime().block_on(async {
        let c = echo(&obj, "after".into());
        let park = async {
            let (h, arg) = tokio::task::spawn_blocking({
                let parking = parking.clone();
                move || parking.take(1).pop().unwrap()
            })
            .await
            .unwrap();
            h.reply(|w| w.write_string(&arg)).unwrap();
        };
        futures_util::future::join(c, park).await.0
    });
    assert_eq!(call.unwrap(), "after");
    orb.destroy();
    server.destroy();
}

fn echo_sync(obj: &corbina::ObjectRef, s: &str) -> Result<String, SystemException> {
    obj.invoke(
        "echo",
        |w| w.write_string(s),
        |r| r.read_string(),
        corbina::no_user,
    )
}

/// An in-process call to a servant that defers its reply waits for the handle, answered
/// from another thread; a handle dropped unanswered raises INTERNAL, as over the wire.
#[test]
fn collocated_calls_wait_for_deferred_replies() {
    let parking = Parking::new(Mode::Park);
    let (server, ior) = serve(Arc::new(ParkingServant(parking.clone())));
    let obj = server.string_to_object(&ior).unwrap();
    assert!(obj.is_collocated());
    let answering = std::thread::spawn(move || {
        for (h, arg) in parking.take(1) {
            h.reply(|w| w.write_string(&format!("answer {arg}")))
                .unwrap();
        }
    });
    assert_eq!(echo_sync(&obj, "in").unwrap(), "answer in");
    answering.join().unwrap();
    server.destroy();

    let (server, ior) = serve(Arc::new(ParkingServant(Parking::new(Mode::Drop))));
    let obj = server.string_to_object(&ior).unwrap();
    assert!(obj.is_collocated());
    let e = echo_sync(&obj, "x").unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::Internal);
    assert_eq!(e.minor, minor::INTERNAL_REPLY_HANDLE_DROPPED);
    server.destroy();
}
