//! Service contexts between Corbina's Portable Interceptors and JacORB's
//! (`peers/jacorb/src/ScInitializer.java`, a Java `ORBInitializer` registering a client and a
//! server request interceptor), both ways, over real IIOP, with one JVM for both directions.

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
fn service_contexts_cross_between_jacorb_and_corbina_interceptors() {
    let Some(mut peer) = corbina_testpeers::JacorbPeer::start("sc-jacorb") else {
        return;
    };
    let (orb, client, server) = orb();

    // Corbina client -> JacORB server: JacORB's receive_request_service_contexts saw our
    // context (its reply context carries our data); our receive_reply saw its context.
    let obj = orb.string_to_object(&peer.sc_ior).unwrap();
    let r: Result<String, SystemException> = obj.invoke(
        "echo",
        |w| w.write_string("hi"),
        |r| r.read_string(),
        corbina::no_user,
    );
    assert_eq!(r.unwrap(), "hi");
    assert_eq!(
        client.reply.lock().unwrap().as_deref(),
        Some(&b"jacorb:from-corbina"[..])
    );

    // JacORB client -> Corbina server: our server interceptor saw JacORB's send_request
    // context; JacORB's receive_reply saw the one we added.
    let poa = orb.root_poa();
    poa.the_poa_manager().activate().unwrap();
    let servant: Arc<dyn Servant> = Arc::new(Probe);
    poa.activate_object(servant.clone()).unwrap();
    let probe = poa.servant_to_reference(&servant).unwrap();
    let ior_file = peer.ior_file("corbina-sc.ior", &orb.object_to_string(&probe).unwrap());
    let answer = peer.command(&format!("sc-call {}", ior_file.display()));
    assert_eq!(
        answer,
        ["reply-context corbina:from-jacorb", "result hi"],
        "JacORB's receive_reply did not see our reply context"
    );
    assert_eq!(
        server.received.lock().unwrap().as_deref(),
        Some(&b"from-jacorb"[..])
    );
    orb.destroy();
}
