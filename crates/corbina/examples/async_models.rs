//! The asynchronous models, in one process over IIOP on 127.0.0.1:
//!
//! 1. an asynchronous proxy (`BenchAsync`): many calls in flight on one connection from
//!    one task, a user exception, a oneway, a call given up (dropped: CancelRequest);
//! 2. AMH on the server: the servant of a second object defers its replies
//!    (`ServerRequest::defer_reply`) and answers them from an `async fn` on the
//!    application's tokio runtime.
//!
//! `cargo run -p corbina --example async_models`

use std::sync::Arc;
use std::time::Duration;

use corbina::config::Endpoint;
use corbina::{Orb, OrbConfig, Servant, ServerRequest, SystemException};
use futures_util::future::join_all;

// The IDL interface `Bench` has a module `bench` of its own (its error types).
#[allow(dead_code, clippy::module_inception)]
mod bench {
    include!("../../corbina-codegen/tests/golden/bench.rs");
}
use bench::bench::FailError;
use bench::{Bench, BenchAsync, BenchError, BenchServant, BenchSkeleton, BinStruct};

type R<T = ()> = Result<T, SystemException>;

/// An ordinary (synchronous) servant: the server side does not change for async clients.
struct Plain;

impl BenchServant for Plain {
    fn ping(&self) -> R {
        Ok(())
    }
    fn ping_oneway(&self) -> R {
        Ok(())
    }
    fn echo(&self, s: &str) -> R<String> {
        if s == "slow" {
            std::thread::sleep(Duration::from_millis(200));
        }
        Ok(s.to_owned())
    }
    fn fail(&self, code: i32) -> Result<(), FailError> {
        Err(FailError::BenchError(BenchError {
            code,
            reason: "requested".into(),
        }))
    }
    fn send_octets(&self, _: &[u8]) -> R {
        Ok(())
    }
    fn send_octets_oneway(&self, _: &[u8]) -> R {
        Ok(())
    }
    fn send_shorts(&self, _: &[i16]) -> R {
        Ok(())
    }
    fn send_shorts_oneway(&self, _: &[i16]) -> R {
        Ok(())
    }
    fn send_longs(&self, _: &[i32]) -> R {
        Ok(())
    }
    fn send_longs_oneway(&self, _: &[i32]) -> R {
        Ok(())
    }
    fn send_doubles(&self, _: &[f64]) -> R {
        Ok(())
    }
    fn send_doubles_oneway(&self, _: &[f64]) -> R {
        Ok(())
    }
    fn send_chars(&self, _: &[u8]) -> R {
        Ok(())
    }
    fn send_chars_oneway(&self, _: &[u8]) -> R {
        Ok(())
    }
    fn send_structs(&self, _: &[BinStruct]) -> R {
        Ok(())
    }
    fn send_structs_oneway(&self, _: &[BinStruct]) -> R {
        Ok(())
    }
    fn start_timer(&self) -> R {
        Ok(())
    }
    fn stop_timer(&self) -> R<u64> {
        Ok(0)
    }
}

/// An AMH servant: `echo` is answered later by an `async fn` run on `executor`.
struct Deferred {
    executor: tokio::runtime::Handle,
}

async fn shout(s: String) -> R<String> {
    // A slow back end, awaited without holding a server thread.
    tokio::time::sleep(Duration::from_millis(10)).await;
    Ok(s.to_uppercase())
}

impl Servant for Deferred {
    fn primary_interface(&self) -> &'static str {
        Bench::REPOSITORY_ID
    }
    fn is_a(&self, id: &str) -> bool {
        id == Bench::REPOSITORY_ID
    }
    fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> R {
        if req.operation() != "echo" {
            return Err(corbina::servant::bad_operation());
        }
        let s = req.arguments().read_string()?;
        req.arguments_done()?;
        let reply = req.defer_reply()?;
        self.executor.spawn(async move {
            let _ = match shout(s).await {
                Ok(r) => reply.reply(|w| w.write_string(&r)),
                Err(e) => reply.reply_system_exception(e),
            };
        });
        Ok(())
    }
}

fn main() -> Result<(), corbina::Report> {
    // With its I/O driver, as `#[tokio::main]` builds it: the driver reads the ORB's
    // connections. (Without one, a reader thread does, after tokio's "IO is disabled"
    // panic message once per runtime: tokio has no stable way to ask first.)
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let server = Orb::with_config(OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..OrbConfig::default()
    });
    let poa = server.root_poa();
    let plain = poa.id_to_reference(&poa.activate_object(Arc::new(BenchSkeleton::new(Plain)))?)?;
    let deferred = poa.id_to_reference(&poa.activate_object(Arc::new(Deferred {
        executor: rt.handle().clone(),
    }))?)?;
    poa.the_poa_manager().activate()?;
    let (plain, deferred) = (
        server.object_to_string(&plain)?,
        server.object_to_string(&deferred)?,
    );

    let client = Orb::with_config(OrbConfig::default());
    let bench = BenchAsync::from(Bench::narrow(&client.string_to_object(&plain)?)?);
    let amh = BenchAsync::unchecked_narrow(&client.string_to_object(&deferred)?);
    rt.block_on(async {
        // 1. Many calls in flight on one connection, from this one task.
        let words: Vec<String> = (0..1000).map(|i| format!("word {i}")).collect();
        let echoes = join_all(words.iter().map(|w| bench.echo(w))).await;
        println!("1,000 echoes in flight together: {} answered", echoes.len());
        match bench.fail(7).await {
            Err(FailError::BenchError(e)) => println!("user exception: BenchError {}", e.code),
            other => println!("unexpected: {other:?}"),
        }
        bench.ping_oneway().await?;
        // A call given up: the future is dropped, the server is sent CancelRequest.
        let gave_up = tokio::time::timeout(Duration::from_millis(20), bench.echo("slow")).await;
        println!("a slow call given up after 20 ms: {}", gave_up.is_err());

        // 2. AMH: answered by an async fn on the server's executor.
        let words: Vec<String> = (0..100).map(|i| format!("amh {i}")).collect();
        let shouts = join_all(words.iter().map(|w| amh.echo(w))).await;
        println!("100 AMH replies, the first: {}", shouts[0].clone()?);
        Ok::<(), SystemException>(())
    })?;
    client.destroy();
    server.destroy();
    Ok(())
}
