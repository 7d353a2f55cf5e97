//! Service contexts between Corbina's Portable Interceptors and omniORB's interceptor API
//! (`peers/omni_sc_peer.cc`, omniInterceptors), both ways, over real IIOP.

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use corbina::giop::ServiceContext;
use corbina::interceptor::*;
use corbina::{Orb, OrbConfig, Servant, ServerRequest, SystemException};

const CTX_REQUEST: u32 = 0x4342_0100;
const CTX_REPLY: u32 = 0x4342_0200;

/// Client side: adds "from-corbina", keeps the reply's context.
struct ClientTag {
    reply: Mutex<Option<Vec<u8>>>,
}
impl Interceptor for ClientTag {
    fn name(&self) -> &str {
        "ClientTag"
    }
}
impl ClientRequestInterceptor for ClientTag {
    fn send_request(&self, ri: &mut ClientRequestInfo) -> Result<(), InterceptorError> {
        let sc = ServiceContext {
            context_id: CTX_REQUEST,
            context_data: b"from-corbina".to_vec(),
        };
        Ok(ri.add_request_service_context(sc, false)?)
    }
    fn receive_reply(&self, ri: &mut ClientRequestInfo) -> Result<(), SystemException> {
        *self.reply.lock().unwrap() = ri
            .get_reply_service_context(CTX_REPLY)
            .ok()
            .map(|c| c.context_data.clone());
        Ok(())
    }
}

/// Server side: answers a request's context with "corbina:" and its data.
struct ServerTag {
    received: Mutex<Option<Vec<u8>>>,
}
impl Interceptor for ServerTag {
    fn name(&self) -> &str {
        "ServerTag"
    }
}
impl ServerRequestInterceptor for ServerTag {
    fn receive_request_service_contexts(
        &self,
        ri: &mut ServerRequestInfo,
    ) -> Result<(), InterceptorError> {
        if let Ok(sc) = ri.get_request_service_context(CTX_REQUEST) {
            let data = sc.context_data.clone();
            *self.received.lock().unwrap() = Some(data.clone());
            let mut reply = b"corbina:".to_vec();
            reply.extend_from_slice(&data);
            ri.add_reply_service_context(
                ServiceContext {
                    context_id: CTX_REPLY,
                    context_data: reply,
                },
                false,
            )?;
        }
        Ok(())
    }
}

struct Init {
    client: Arc<ClientTag>,
    server: Arc<ServerTag>,
}
impl OrbInitializer for Init {
    fn pre_init(&self, info: &mut OrbInitInfo) {
        info.add_client_request_interceptor(self.client.clone())
            .unwrap();
        info.add_server_request_interceptor(self.server.clone())
            .unwrap();
    }
}

/// `ScProbe::echo`.
struct Probe;
impl Servant for Probe {
    fn primary_interface(&self) -> &'static str {
        "IDL:ScProbe:1.0"
    }
    fn is_a(&self, id: &str) -> bool {
        id == "IDL:ScProbe:1.0"
    }
    fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        if corbina::servant::dispatch_object_operation(self, req)? {
            return Ok(());
        }
        match req.operation() {
            "echo" => {
                let s = req.arguments().read_string()?;
                req.arguments_done()?;
                req.reply(|w| w.write_string(&s))
            }
            _ => Err(corbina::servant::bad_operation()),
        }
    }
}

fn orb() -> (Orb, Arc<ClientTag>, Arc<ServerTag>) {
    let client = Arc::new(ClientTag {
        reply: Mutex::default(),
    });
    let server = Arc::new(ServerTag {
        received: Mutex::default(),
    });
    let config = OrbConfig {
        endpoints: vec![corbina::config::Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..OrbConfig::default()
    }
    .orb_initializer(Arc::new(Init {
        client: client.clone(),
        server: server.clone(),
    }));
    (Orb::with_config(config), client, server)
}

#[test]
fn corbina_client_contexts_reach_omniorb_and_back() {
    let Some(bin) = corbina_testpeers::sc_peers() else {
        return;
    };
    let ior_file = corbina_testpeers::fresh_dir("sc-omni-server").join("s.ior");
    let (_server, ior) = corbina_testpeers::start_with_ior(
        "omni_sc_peer server",
        Command::new(bin.join("omni_sc_peer"))
            .arg("server")
            .arg(&ior_file)
            .args(["-ORBendPoint", "giop:tcp:127.0.0.1:"]),
        &ior_file,
    );
    let (orb, client, _) = orb();
    let obj = orb.string_to_object(&ior).unwrap();
    let r: Result<String, SystemException> = obj.invoke(
        "echo",
        |w| w.write_string("hi"),
        |r| r.read_string(),
        corbina::no_user,
    );
    assert_eq!(r.unwrap(), "hi");
    // omniORB's serverReceiveRequest saw our context; its serverSendReply answered.
    assert_eq!(
        client.reply.lock().unwrap().as_deref(),
        Some(&b"omni:from-corbina"[..])
    );
    orb.destroy();
}

#[test]
fn omniorb_client_contexts_reach_corbina_and_back() {
    let Some(bin) = corbina_testpeers::sc_peers() else {
        return;
    };
    let (orb, _, server) = orb();
    let poa = orb.root_poa();
    poa.the_poa_manager().activate().unwrap();
    let servant: Arc<dyn Servant> = Arc::new(Probe);
    poa.activate_object(servant.clone()).unwrap();
    let obj = poa.servant_to_reference(&servant).unwrap();
    let ior_file = corbina_testpeers::fresh_dir("sc-omni-client").join("c.ior");
    std::fs::write(&ior_file, orb.object_to_string(&obj).unwrap() + "\n").unwrap();
    let out = Command::new(bin.join("omni_sc_peer"))
        .arg("client")
        .arg(&ior_file)
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "omni_sc_peer client failed");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("reply-context corbina:from-omni"),
        "omniORB's clientReceiveReply did not see our reply context: {text}"
    );
    assert!(text.contains("result hi"), "{text}");
    assert_eq!(
        server.received.lock().unwrap().as_deref(),
        Some(&b"from-omni"[..])
    );
    orb.destroy();
}
