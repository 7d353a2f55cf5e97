//! Portable Interceptors on bidirectional GIOP: a client that listens nowhere calls a
//! server, which calls the client back over the client's connection. Both ORBs have client
//! and server request interceptors; each request, in either direction, passes them, with
//! its service contexts, the same request id on both sides and the reply's contexts.

use std::net::TcpListener;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use corbina::config::Endpoint;
use corbina::giop::ServiceContext;
use corbina::interceptor::*;
use corbina::poa::{BidirectionalPolicy, PolicyList};
use corbina::{ObjectRef, Orb, OrbConfig, Servant, SystemException};

#[allow(dead_code, clippy::all)]
mod gen {
    include!("../../corbina-codegen/tests/golden/bidir.rs");
}

use gen::bidir_test::{
    Callback, CallbackServant, CallbackSkeleton, Registrar, RegistrarServant, RegistrarSkeleton,
};

type R<T = ()> = Result<T, SystemException>;

/// The request context: the sending ORB's name, then the request id it saw.
const CTX_FROM: u32 = 0x4342_0410;
/// The reply context: the replying ORB's name.
const CTX_REPLIED: u32 = 0x4342_0420;

type Log = Arc<Mutex<Vec<String>>>;

/// Tags requests with its ORB's name and request id; checks and logs what comes in.
struct Tagger {
    orb: &'static str,
    log: Log,
}

impl Tagger {
    fn note(&self, s: String) {
        self.log.lock().unwrap().push(s);
    }
}

impl Interceptor for Tagger {
    fn name(&self) -> &str {
        "tagger"
    }
}

fn context(id: u32, data: Vec<u8>) -> ServiceContext {
    ServiceContext {
        context_id: id,
        context_data: data,
    }
}

impl ClientRequestInterceptor for Tagger {
    fn send_request(&self, ri: &mut ClientRequestInfo) -> Result<(), InterceptorError> {
        let mut data = self.orb.as_bytes().to_vec();
        data.extend(ri.request_id().to_be_bytes());
        ri.add_request_service_context(context(CTX_FROM, data), false)?;
        self.note(format!("{} send_request {}", self.orb, ri.operation()));
        Ok(())
    }
    fn receive_reply(&self, ri: &mut ClientRequestInfo) -> Result<(), SystemException> {
        // The id is the one send_request saw (the context it added says so).
        let sent = ri
            .get_request_service_context(CTX_FROM)?
            .context_data
            .clone();
        assert_eq!(sent[sent.len() - 4..], ri.request_id().to_be_bytes());
        let by = ri
            .get_reply_service_context(CTX_REPLIED)?
            .context_data
            .clone();
        self.note(format!(
            "{} receive_reply {} from {}",
            self.orb,
            ri.operation(),
            String::from_utf8_lossy(&by)
        ));
        Ok(())
    }
    fn receive_other(&self, ri: &mut ClientRequestInfo) -> Result<(), InterceptorError> {
        self.note(format!("{} receive_other {}", self.orb, ri.operation()));
        Ok(())
    }
}

impl ServerRequestInterceptor for Tagger {
    fn receive_request_service_contexts(
        &self,
        ri: &mut ServerRequestInfo,
    ) -> Result<(), InterceptorError> {
        let data = ri
            .get_request_service_context(CTX_FROM)?
            .context_data
            .clone();
        let (from, id) = data.split_at(data.len() - 4);
        // The id in the request's header is the one the client's send_request saw.
        assert_eq!(id, ri.request_id().to_be_bytes());
        self.note(format!(
            "{} receive {} from {}",
            self.orb,
            ri.operation(),
            String::from_utf8_lossy(from)
        ));
        ri.add_reply_service_context(context(CTX_REPLIED, self.orb.as_bytes().to_vec()), false)?;
        Ok(())
    }
}

struct Init(Arc<Tagger>);

impl OrbInitializer for Init {
    fn pre_init(&self, info: &mut OrbInitInfo) {
        info.add_client_request_interceptor(self.0.clone()).unwrap();
        info.add_server_request_interceptor(self.0.clone()).unwrap();
    }
}

fn init(orb: &'static str, log: &Log) -> Arc<Init> {
    Arc::new(Init(Arc::new(Tagger {
        orb,
        log: log.clone(),
    })))
}

struct Counter;

impl CallbackServant for Counter {
    fn notify(&self, n: i32) -> R<i32> {
        Ok(n * 2)
    }
    fn tick(&self, _n: i32) -> R {
        Ok(())
    }
}

struct Reg;

impl RegistrarServant for Reg {
    fn ping(&self) -> R<i32> {
        Ok(1)
    }
    fn call_back(&self, cb: Option<&Callback>, n: i32) -> R<i32> {
        let cb =
            cb.ok_or_else(|| SystemException::new(corbina::SystemExceptionKind::BadParam, 0))?;
        (1..=n).map(|i| cb.notify(i)).sum()
    }
    fn register_cb(&self, _cb: Option<&Callback>) -> R {
        Ok(())
    }
    fn notify_registered(&self, _n: i32) -> R<i32> {
        Ok(0)
    }
    fn ticks_seen(&self) -> R<i32> {
        Ok(0)
    }
    fn call_back_later(&self, _cb: Option<&Callback>, _n: i32, _delay_ms: i32) -> R {
        Ok(())
    }
    fn tick(&self, _n: i32) -> R {
        Ok(())
    }
    fn tick_registered(&self, _n: i32) -> R {
        Ok(())
    }
}

/// Activates `servant` in a child POA with `BidirectionalPolicy::Both`.
fn activate(orb: &Orb, servant: Arc<dyn Servant>) -> ObjectRef {
    let root = orb.root_poa();
    let both = PolicyList::root().with_bidirectional(BidirectionalPolicy::Both);
    let poa = root
        .create_poa("bidir", Some(root.the_poa_manager()), both)
        .unwrap();
    let id = poa.activate_object(servant).unwrap();
    let obj = poa.id_to_reference(&id).unwrap();
    root.the_poa_manager().activate().unwrap();
    obj
}

#[test]
fn callbacks_over_a_bidirectional_connection_pass_both_orbs_interceptors() {
    let server_log: Log = Arc::default();
    let client_log: Log = Arc::default();
    let server = Orb::with_config(
        OrbConfig {
            endpoints: vec![Endpoint {
                host: "127.0.0.1".into(),
                port: 0,
            }],
            accept_bidir: true,
            call_timeout: Some(Duration::from_secs(20)),
            ..OrbConfig::default()
        }
        .orb_initializer(init("server", &server_log)),
    );
    let registrar = activate(&server, Arc::new(RegistrarSkeleton::new(Reg)));
    let ior = server.object_to_string(&registrar).unwrap();
    // The client listens nowhere: its callback is reachable only over its connection.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client = Orb::with_config(
        OrbConfig {
            endpoints_no_listen: vec![Endpoint {
                host: "127.0.0.1".into(),
                port: closed,
            }],
            offer_bidir: true,
            call_timeout: Some(Duration::from_secs(20)),
            ..OrbConfig::default()
        }
        .orb_initializer(init("client", &client_log)),
    );
    let cb =
        Callback::narrow(&activate(&client, Arc::new(CallbackSkeleton::new(Counter)))).unwrap();
    let registrar = Registrar::narrow(&client.string_to_object(&ior).unwrap()).unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(registrar.call_back(Some(&cb), 3));
    });
    let sum = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the call did not finish");
    assert_eq!(sum.unwrap(), 12);
    let take = |log: &Log| std::mem::take(&mut *log.lock().unwrap());
    let mut notify = Vec::new();
    for _ in 0..3 {
        notify.push("server send_request notify".to_string());
        notify.push("server receive_reply notify from client".to_string());
    }
    let mut expected = vec!["server receive call_back from client".to_string()];
    expected.extend(notify);
    assert_eq!(take(&server_log), expected);
    let mut expected = vec!["client send_request call_back".to_string()];
    for _ in 0..3 {
        expected.push("client receive notify from server".to_string());
    }
    expected.push("client receive_reply call_back from server".to_string());
    assert_eq!(take(&client_log), expected);
    client.destroy();
    server.destroy();
}
