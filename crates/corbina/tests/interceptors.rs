//! Portable Interceptors: the flow rules of CORBA 3.x §21.3 on both sides of real IIOP
//! calls (one ORB calling its own objects over loopback, as it does when request
//! interceptors are registered), exceptions and ForwardRequest raised by interceptors,
//! PICurrent slots, Codecs and IOR interceptors.

use std::sync::{Arc, Mutex};

use corbina::giop::{ServiceContext, TaggedComponent};
use corbina::interceptor::*;
use corbina::orb::InitialReference;
use corbina::{Any, ObjectRef, Orb, OrbConfig, Servant, ServerRequest, SystemException};
use corbina::{CompletionStatus, SystemExceptionKind};

type Log = Arc<Mutex<Vec<String>>>;

const CTX_REQUEST: u32 = 0x4342_0100;
const CTX_REPLY: u32 = 0x4342_0200;
const CTX_SLOT: u32 = 0x4342_0300;

fn no_permission() -> SystemException {
    SystemException::new(SystemExceptionKind::NoPermission, 77).completed(CompletionStatus::No)
}

/// `long twice(in long x)`, `long slot()` (the PICurrent slot 0 the servant sees),
/// `void oops()` (raises IDL:Test/Oops:1.0), `void deny*()`.
struct Doubler {
    factor: i32,
    log: Log,
    current: Mutex<Option<PiCurrent>>,
}

impl Servant for Doubler {
    fn primary_interface(&self) -> &'static str {
        "IDL:Test/Doubler:1.0"
    }
    fn is_a(&self, id: &str) -> bool {
        id == "IDL:Test/Doubler:1.0"
    }
    fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        self.log
            .lock()
            .unwrap()
            .push(format!("servant {}", req.operation()));
        match req.operation() {
            "twice" | "redirect" | "redirect_server" => {
                let x = req.arguments().read_long()?;
                req.arguments_done()?;
                let f = self.factor;
                req.reply(|w| {
                    w.write_long(f * x);
                    Ok(())
                })
            }
            "slot" => {
                let current = self.current.lock().unwrap().expect("PICurrent");
                let v = current.get_slot(SlotId(0)).unwrap().to_long().unwrap_or(-1);
                // Seen by send_reply through the request scope.
                current.set_slot(SlotId(1), Any::from_long(v + 1)).unwrap();
                req.reply(|w| {
                    w.write_long(v);
                    Ok(())
                })
            }
            "oops" => req.reply_user_exception(|w| w.write_string("IDL:Test/Oops:1.0")),
            // AMH: the reply is given from another thread, after the upcall.
            "twice_later" => {
                let x = req.arguments().read_long()?;
                req.arguments_done()?;
                let handle = req.defer_reply()?;
                let f = self.factor;
                std::thread::spawn(move || {
                    handle.reply(|w| {
                        w.write_long(f * x);
                        Ok(())
                    })
                });
                Ok(())
            }
            "dropped_later" => {
                req.arguments().read_long()?;
                req.arguments_done()?;
                let handle = req.defer_reply()?;
                std::thread::spawn(move || drop(handle));
                Ok(())
            }
            "oneway_op" => Ok(()),
            _ => req.reply(|_| Ok(())),
        }
    }
}

/// Logs every point; raises or forwards on the operations named for it.
struct Probe {
    name: &'static str,
    log: Log,
    /// Client: raise NO_PERMISSION in send_request for this operation.
    deny_send: Option<&'static str>,
    /// Client: raise ForwardRequest to this object in send_request for "redirect".
    forward_to: Mutex<Option<ObjectRef>>,
    /// Server: raise NO_PERMISSION in receive_request for this operation.
    deny_receive: Option<&'static str>,
    slot: Option<SlotId>,
}

impl Probe {
    fn new(name: &'static str, log: &Log) -> Probe {
        Probe {
            name,
            log: log.clone(),
            deny_send: None,
            forward_to: Mutex::new(None),
            deny_receive: None,
            slot: None,
        }
    }
    fn note(&self, what: &str, op: &str) {
        self.log
            .lock()
            .unwrap()
            .push(format!("{} {what} {op}", self.name));
    }
}

impl Interceptor for Probe {
    fn name(&self) -> &str {
        self.name
    }
}

impl ClientRequestInterceptor for Probe {
    fn send_request(&self, ri: &mut ClientRequestInfo) -> Result<(), InterceptorError> {
        self.note("send_request", ri.operation());
        assert!(
            ri.reply_status().is_err(),
            "no reply status at send_request"
        );
        assert!(ri.effective_profile().is_some());
        if self.name == "A" {
            let data = vec![1, 0xA, 0xB];
            ri.add_request_service_context(
                ServiceContext {
                    context_id: CTX_REQUEST,
                    context_data: data.clone(),
                },
                false,
            )?;
            // A second add without replace is BAD_INV_ORDER 15; with replace it wins.
            let dup = ri.add_request_service_context(
                ServiceContext {
                    context_id: CTX_REQUEST,
                    context_data: vec![0],
                },
                false,
            );
            assert_eq!(dup.unwrap_err().kind, SystemExceptionKind::BadInvOrder);
            ri.add_request_service_context(
                ServiceContext {
                    context_id: CTX_REQUEST,
                    context_data: data,
                },
                true,
            )?;
            if let Some(slot) = self.slot {
                let v = ri.get_slot(slot).unwrap().to_long().unwrap_or(-1);
                ri.add_request_service_context(
                    ServiceContext {
                        context_id: CTX_SLOT,
                        context_data: v.to_be_bytes().to_vec(),
                    },
                    false,
                )?;
            }
        }
        if self.deny_send == Some(ri.operation()) {
            return Err(no_permission().into());
        }
        if ri.operation() == "redirect" {
            if let Some(to) = self.forward_to.lock().unwrap().clone() {
                // Not again once the request goes there.
                if ri.target() != to.ior() {
                    return Err(ForwardRequest { forward: to }.into());
                }
            }
        }
        Ok(())
    }
    fn receive_reply(&self, ri: &mut ClientRequestInfo) -> Result<(), SystemException> {
        self.note("receive_reply", ri.operation());
        assert_eq!(ri.reply_status().unwrap(), ReplyStatus::Successful);
        if ri.operation() == "twice" && self.name == "B" {
            let sc = ri.get_reply_service_context(CTX_REPLY)?;
            assert_eq!(sc.context_data, [1, 0xC]);
        }
        Ok(())
    }
    fn receive_exception(&self, ri: &mut ClientRequestInfo) -> Result<(), InterceptorError> {
        let id = ri.received_exception_id().unwrap();
        self.note(&format!("receive_exception {id}"), ri.operation());
        Ok(())
    }
    fn receive_other(&self, ri: &mut ClientRequestInfo) -> Result<(), InterceptorError> {
        let status = ri.reply_status().unwrap();
        let fwd = ri.forward_reference().is_ok();
        self.note(
            &format!("receive_other {status:?} fwd={fwd}"),
            ri.operation(),
        );
        Ok(())
    }
}

impl ServerRequestInterceptor for Probe {
    fn receive_request_service_contexts(
        &self,
        ri: &mut ServerRequestInfo,
    ) -> Result<(), InterceptorError> {
        self.note("rsc", ri.operation());
        if self.name == "S1" && ri.operation() == "twice" {
            let sc = ri.get_request_service_context(CTX_REQUEST)?;
            assert_eq!(sc.context_data, [1, 0xA, 0xB]);
            ri.add_reply_service_context(
                ServiceContext {
                    context_id: CTX_REPLY,
                    context_data: vec![1, 0xC],
                },
                false,
            )?;
        }
        if let (Some(slot), Ok(sc)) = (self.slot, ri.get_request_service_context(CTX_SLOT)) {
            let v = i32::from_be_bytes(sc.context_data[..4].try_into().unwrap());
            ri.set_slot(slot, Any::from_long(v * 10)).unwrap();
        }
        Ok(())
    }
    fn receive_request(&self, ri: &mut ServerRequestInfo) -> Result<(), InterceptorError> {
        self.note("receive_request", ri.operation());
        if self.deny_receive == Some(ri.operation()) {
            return Err(no_permission().into());
        }
        if ri.operation() == "redirect_server" {
            if let Some(to) = self.forward_to.lock().unwrap().clone() {
                let key = to.ior().iiop_profiles().unwrap()[0].object_key.clone();
                if key.as_bytes() != ri.object_key() {
                    return Err(ForwardRequest { forward: to }.into());
                }
            }
        }
        Ok(())
    }
    fn send_reply(&self, ri: &mut ServerRequestInfo) -> Result<(), SystemException> {
        self.note("send_reply", ri.operation());
        if ri.operation() == "slot" && self.slot.is_some() {
            // The servant's change to the thread scope is in the request scope now.
            let v = ri.get_slot(SlotId(1)).unwrap().to_long();
            self.note(&format!("slot1 {v:?}"), ri.operation());
        }
        Ok(())
    }
    fn send_exception(&self, ri: &mut ServerRequestInfo) -> Result<(), InterceptorError> {
        let id = ri.sending_exception_id().unwrap();
        self.note(&format!("send_exception {id}"), ri.operation());
        Ok(())
    }
    fn send_other(&self, ri: &mut ServerRequestInfo) -> Result<(), InterceptorError> {
        let fwd = ri.forward_reference().is_ok();
        self.note(&format!("send_other fwd={fwd}"), ri.operation());
        Ok(())
    }
}

struct Init {
    client: Vec<Arc<Probe>>,
    server: Vec<Arc<Probe>>,
    slots: Mutex<Vec<SlotId>>,
}

impl OrbInitializer for Init {
    fn pre_init(&self, info: &mut OrbInitInfo) {
        for c in &self.client {
            info.add_client_request_interceptor(c.clone()).unwrap();
        }
        for s in &self.server {
            info.add_server_request_interceptor(s.clone()).unwrap();
        }
        let mut slots = self.slots.lock().unwrap();
        slots.push(info.allocate_slot_id());
        slots.push(info.allocate_slot_id());
    }
}

struct Fixture {
    orb: Orb,
    log: Log,
    doubler: ObjectRef,
    tripler: ObjectRef,
    client: Vec<Arc<Probe>>,
    server: Vec<Arc<Probe>>,
}

impl Fixture {
    fn new(configure: impl FnOnce(&mut Vec<Probe>, &mut Vec<Probe>)) -> Fixture {
        let log: Log = Arc::default();
        let mut client = vec![Probe::new("A", &log), Probe::new("B", &log)];
        let mut server = vec![Probe::new("S1", &log), Probe::new("S2", &log)];
        configure(&mut client, &mut server);
        let client: Vec<Arc<Probe>> = client.into_iter().map(Arc::new).collect();
        let server: Vec<Arc<Probe>> = server.into_iter().map(Arc::new).collect();
        let init = Arc::new(Init {
            client: client.clone(),
            server: server.clone(),
            slots: Mutex::default(),
        });
        let config = OrbConfig {
            endpoints: vec![corbina::config::Endpoint {
                host: "127.0.0.1".into(),
                port: 0,
            }],
            ..OrbConfig::default()
        }
        .orb_initializer(init.clone());
        let orb = Orb::with_config(config);
        assert_eq!(*init.slots.lock().unwrap(), [SlotId(0), SlotId(1)]);
        let Ok(InitialReference::PiCurrent(current)) = orb.resolve_initial_references("PICurrent")
        else {
            panic!("no PICurrent");
        };
        let poa = orb.root_poa();
        poa.the_poa_manager().activate().unwrap();
        let make = |factor| {
            let servant: Arc<dyn Servant> = Arc::new(Doubler {
                factor,
                log: log.clone(),
                current: Mutex::new(Some(current)),
            });
            poa.activate_object(servant.clone()).unwrap();
            poa.servant_to_reference(&servant).unwrap()
        };
        let doubler = make(2);
        let tripler = make(3);
        assert!(
            !doubler.is_collocated(),
            "interceptors make calls go over IIOP"
        );
        Fixture {
            orb,
            log,
            doubler,
            tripler,
            client,
            server,
        }
    }

    fn call(&self, obj: &ObjectRef, op: &str, x: i32) -> Result<i32, SystemException> {
        obj.invoke(
            op,
            |w| {
                w.write_long(x);
                Ok(())
            },
            |r| r.read_long(),
            corbina::no_user,
        )
    }

    fn take_log(&self) -> Vec<String> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.orb.destroy();
    }
}

#[test]
fn points_run_in_order_and_service_contexts_cross_the_wire() {
    let f = Fixture::new(|_, _| {});
    assert_eq!(f.call(&f.doubler, "twice", 21).unwrap(), 42);
    assert_eq!(
        f.take_log(),
        [
            "A send_request twice",
            "B send_request twice",
            "S1 rsc twice",
            "S2 rsc twice",
            "S1 receive_request twice",
            "S2 receive_request twice",
            "servant twice",
            "S2 send_reply twice",
            "S1 send_reply twice",
            "B receive_reply twice",
            "A receive_reply twice",
        ]
    );
    // A oneway ends with receive_other on the client, send_reply on the server.
    f.doubler.invoke_oneway("oneway_op", |_| Ok(())).unwrap();
    // Wait for the server's side with a twoway behind it on the same connection.
    f.call(&f.doubler, "twice", 1).unwrap();
    let log = f.take_log();
    // The server's points run on its thread meanwhile: the client's in their order.
    let client: Vec<&String> = log
        .iter()
        .filter(|l| (l.starts_with("A ") || l.starts_with("B ")) && l.ends_with("oneway_op"))
        .collect();
    assert_eq!(
        client,
        [
            "A send_request oneway_op",
            "B send_request oneway_op",
            "B receive_other Successful fwd=false oneway_op",
            "A receive_other Successful fwd=false oneway_op",
        ]
    );
    assert!(
        log.contains(&"S1 send_reply oneway_op".to_owned()),
        "{log:?}"
    );
}

#[test]
fn user_exceptions_reach_the_exception_points_with_their_id() {
    let f = Fixture::new(|_, _| {});
    let r: Result<(), SystemException> = f.doubler.invoke(
        "oops",
        |_| Ok(()),
        |_| Ok(()),
        |id, _| {
            assert_eq!(id, "IDL:Test/Oops:1.0");
            Ok(Some(no_permission()))
        },
    );
    assert_eq!(r.unwrap_err().minor, 77);
    let log = f.take_log();
    assert!(
        log.contains(&"S2 send_exception IDL:Test/Oops:1.0 oops".to_owned()),
        "{log:?}"
    );
    assert_eq!(
        &log[log.len() - 2..],
        [
            "B receive_exception IDL:Test/Oops:1.0 oops",
            "A receive_exception IDL:Test/Oops:1.0 oops",
        ]
    );
}

#[test]
fn send_request_raising_ends_the_call_on_the_interceptors_before_it() {
    let f = Fixture::new(|c, _| c[1].deny_send = Some("deny"));
    let e = f.call(&f.doubler, "deny", 1).unwrap_err();
    assert_eq!((e.kind, e.minor), (SystemExceptionKind::NoPermission, 77));
    // B raised: only A (whose starting point completed) gets receive_exception; nothing
    // reached the server.
    assert_eq!(
        f.take_log(),
        [
            "A send_request deny",
            "B send_request deny",
            "A receive_exception IDL:omg.org/CORBA/NO_PERMISSION:1.0 deny",
        ]
    );
}

#[test]
fn receive_request_raising_skips_the_servant_and_reaches_the_client() {
    let f = Fixture::new(|_, s| s[0].deny_receive = Some("deny"));
    let e = f.call(&f.doubler, "deny", 1).unwrap_err();
    assert_eq!((e.kind, e.minor), (SystemExceptionKind::NoPermission, 77));
    let exc = "IDL:omg.org/CORBA/NO_PERMISSION:1.0";
    assert_eq!(
        f.take_log(),
        [
            "A send_request deny".to_owned(),
            "B send_request deny".to_owned(),
            "S1 rsc deny".to_owned(),
            "S2 rsc deny".to_owned(),
            "S1 receive_request deny".to_owned(),
            // Every starting point completed: both get send_exception, in reverse.
            format!("S2 send_exception {exc} deny"),
            format!("S1 send_exception {exc} deny"),
            format!("B receive_exception {exc} deny"),
            format!("A receive_exception {exc} deny"),
        ]
    );
}

#[test]
fn forward_request_from_a_client_interceptor_redirects_the_call() {
    let f = Fixture::new(|_, _| {});
    *f.client[1].forward_to.lock().unwrap() = Some(f.tripler.clone());
    // The doubler is asked, the tripler answers.
    assert_eq!(f.call(&f.doubler, "redirect", 5).unwrap(), 15);
    let log = f.take_log();
    assert_eq!(
        &log[..3],
        [
            "A send_request redirect",
            "B send_request redirect",
            "A receive_other LocationForward fwd=true redirect",
        ]
    );
    // The new request to the tripler runs the interceptors again, and the servant once.
    assert_eq!(log[3], "A send_request redirect");
    assert!(log.contains(&"servant redirect".to_owned()));
    assert_eq!(log.iter().filter(|l| l.starts_with("servant")).count(), 1);
}

#[test]
fn forward_request_from_a_server_interceptor_is_a_location_forward() {
    let f = Fixture::new(|_, _| {});
    *f.server[1].forward_to.lock().unwrap() = Some(f.tripler.clone());
    assert_eq!(f.call(&f.doubler, "redirect_server", 5).unwrap(), 15);
    let log = f.take_log();
    // First request: forwarded by S2 in receive_request; send_other on both, the client
    // gets receive_other with the forward reference, then sends again to the tripler
    // (whose receive_request forwards nothing: S2 only forwards calls to other objects).
    let expect_start = [
        "A send_request redirect_server",
        "B send_request redirect_server",
        "S1 rsc redirect_server",
        "S2 rsc redirect_server",
        "S1 receive_request redirect_server",
        "S2 receive_request redirect_server",
        "S2 send_other fwd=true redirect_server",
        "S1 send_other fwd=true redirect_server",
        "B receive_other LocationForward fwd=true redirect_server",
        "A receive_other LocationForward fwd=true redirect_server",
        "A send_request redirect_server",
    ];
    assert_eq!(&log[..expect_start.len()], expect_start, "{log:?}");
}

#[test]
fn picurrent_slots_flow_from_thread_to_request_and_into_the_servant() {
    let f = Fixture::new(|c, s| {
        c[0].slot = Some(SlotId(0));
        s[0].slot = Some(SlotId(0));
    });
    let Ok(InitialReference::PiCurrent(current)) = f.orb.resolve_initial_references("PICurrent")
    else {
        panic!("no PICurrent");
    };
    assert!(current.get_slot(SlotId(2)).is_err(), "two slots allocated");
    current.set_slot(SlotId(0), Any::from_long(4)).unwrap();
    // Client thread slot 4 → request scope → context → server request scope 40 → the
    // servant's thread scope.
    let r: i32 = f
        .doubler
        .invoke("slot", |_| Ok(()), |r| r.read_long(), corbina::no_user)
        .unwrap();
    assert_eq!(r, 40);
    let log = f.take_log();
    assert!(
        log.contains(&"S1 slot1 Some(41) slot".to_owned()),
        "{log:?}"
    );
    // The client thread's slots are its own still.
    assert_eq!(current.get_slot(SlotId(0)).unwrap().to_long(), Some(4));
    assert_eq!(current.get_slot(SlotId(1)).unwrap().to_long(), None);
}

#[test]
fn a_call_that_cannot_connect_still_gets_its_exception_point() {
    let f = Fixture::new(|_, _| {});
    let dead = f
        .orb
        .string_to_object("corbaloc::127.0.0.1:1/none")
        .unwrap();
    let e = f.call(&dead, "twice", 1).unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::Transient);
    assert_eq!(
        f.take_log(),
        [
            "A send_request twice",
            "B send_request twice",
            "B receive_exception IDL:omg.org/CORBA/TRANSIENT:1.0 twice",
            "A receive_exception IDL:omg.org/CORBA/TRANSIENT:1.0 twice",
        ]
    );
}

#[test]
fn codecs_encode_and_decode_anys() {
    let codec = CodecFactory.create_codec(Encoding::CDR_1_2).unwrap();
    let any = Any::from_string("trace me").unwrap();
    let bytes = codec.encode(&any).unwrap();
    assert_eq!(codec.decode(&bytes).unwrap(), any);
    let value = codec.encode_value(&Any::from_long(-7)).unwrap();
    // Byte-order octet, padding, then the long.
    assert_eq!(value.len(), 8);
    let back = codec
        .decode_value(&value, Any::from_long(0).type_code())
        .unwrap();
    assert_eq!(back.to_long(), Some(-7));
    // Hostile bytes: an error, never a panic.
    assert!(matches!(
        codec.decode(&[]),
        Err(CodecError::FormatMismatch(_))
    ));
    assert!(matches!(
        codec.decode(&[7, 1, 2]),
        Err(CodecError::FormatMismatch(_))
    ));
    assert!(matches!(
        codec.decode(&bytes[..bytes.len() - 1]),
        Err(CodecError::FormatMismatch(_))
    ));
    let bad = Encoding {
        format: 1,
        ..Encoding::CDR_1_2
    };
    assert!(matches!(
        CodecFactory.create_codec(bad),
        Err(CodecError::UnknownEncoding(_))
    ));
}

struct Components;
impl Interceptor for Components {
    fn name(&self) -> &str {
        "Components"
    }
}
impl IorInterceptor for Components {
    fn establish_components(&self, info: &mut IorInfo) {
        info.add_ior_component(TaggedComponent {
            tag: 0x4342_0042,
            component_data: info.type_id().as_bytes().to_vec(),
        });
    }
}

struct IorInit {
    named: ObjectRef,
}
impl OrbInitializer for IorInit {
    fn pre_init(&self, info: &mut OrbInitInfo) {
        info.add_ior_interceptor(Arc::new(Components)).unwrap();
        assert!(info.add_ior_interceptor(Arc::new(Components)).is_err());
        info.register_initial_reference("Named", self.named.clone())
            .unwrap();
        assert!(info
            .register_initial_reference("Named", self.named.clone())
            .is_err());
        assert!(info.codec_factory().create_codec(Encoding::CDR_1_2).is_ok());
    }
}

#[test]
fn ior_interceptors_add_components_and_initializers_register_references() {
    let other = Orb::with_config(OrbConfig::default());
    let named = other
        .string_to_object("corbaloc::127.0.0.1:1/named")
        .unwrap();
    let config = OrbConfig {
        endpoints: vec![corbina::config::Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..OrbConfig::default()
    }
    .orb_initializer(Arc::new(IorInit {
        named: named.clone(),
    }));
    let orb = Orb::with_config(config);
    let poa = orb.root_poa();
    let servant: Arc<dyn Servant> = Arc::new(Doubler {
        factor: 2,
        log: Log::default(),
        current: Mutex::new(None),
    });
    poa.activate_object(servant.clone()).unwrap();
    let obj = poa.servant_to_reference(&servant).unwrap();
    let profile = &obj.ior().iiop_profiles().unwrap()[0];
    let c = profile
        .components
        .iter()
        .find(|c| c.tag == 0x4342_0042)
        .expect("the IOR interceptor's component");
    assert_eq!(c.component_data, b"IDL:Test/Doubler:1.0");
    // IOR interceptors alone leave collocation direct.
    assert!(obj.is_collocated());
    let Ok(InitialReference::Object(o)) = orb.resolve_initial_references("Named") else {
        panic!("Named not registered");
    };
    assert_eq!(o.ior(), named.ior());
    assert!(orb.list_initial_services().contains(&"Named".to_owned()));
    orb.destroy();
    other.destroy();
}

#[test]
fn deferred_replies_pass_the_ending_points() {
    let f = Fixture::new(|_, _| {});
    assert_eq!(f.call(&f.doubler, "twice_later", 21).unwrap(), 42);
    assert_eq!(
        f.take_log(),
        [
            "A send_request twice_later",
            "B send_request twice_later",
            "S1 rsc twice_later",
            "S2 rsc twice_later",
            "S1 receive_request twice_later",
            "S2 receive_request twice_later",
            "servant twice_later",
            "S2 send_reply twice_later",
            "S1 send_reply twice_later",
            "B receive_reply twice_later",
            "A receive_reply twice_later",
        ]
    );
    // A handle dropped unanswered: INTERNAL, through send_exception.
    let e = f.call(&f.doubler, "dropped_later", 1).unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::Internal);
    let log = f.take_log();
    for s in ["S2", "S1"] {
        let line = format!("{s} send_exception IDL:omg.org/CORBA/INTERNAL:1.0 dropped_later");
        assert!(log.contains(&line), "{log:?}");
    }
    // The connection goes on serving.
    assert_eq!(f.call(&f.doubler, "twice", 2).unwrap(), 4);
}

/// A LocateRequest is answered by the ORB without the request interceptors (it carries no
/// service contexts, and no operation runs); the Requests after it are intercepted as usual.
#[test]
fn locate_requests_are_answered_without_interceptors() {
    use corbina::giop::{
        Event, GiopConnection, LocateStatus, Role, Settings, TargetAddress, Version,
    };
    use std::io::{Read, Write};

    let f = Fixture::new(|_, _| {});
    let profile = f.doubler.ior().iiop_profiles().unwrap()[0].clone();
    let mut giop = GiopConnection::new(Settings::new(Role::Client));
    let (msg, id) = giop
        .locate_request(
            Version::V1_2,
            &TargetAddress::Key(profile.object_key.clone()),
        )
        .unwrap();
    let mut s = std::net::TcpStream::connect((profile.host.as_str(), profile.port)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    s.write_all(&msg).unwrap();
    let status = loop {
        if let Some(Event::LocateReply { header, .. }) = giop.poll_event().unwrap() {
            assert_eq!(header.request_id, id);
            break header.locate_status;
        }
        let n = s.read(giop.read_buf()).unwrap();
        assert!(n > 0, "server closed the connection");
        giop.commit(n);
    };
    assert_eq!(status, LocateStatus::ObjectHere);
    assert_eq!(
        f.take_log(),
        Vec::<String>::new(),
        "no interception point ran"
    );
    // An ordinary call right after is intercepted on both sides.
    assert_eq!(f.call(&f.doubler, "twice", 4).unwrap(), 8);
    let log = f.take_log();
    assert!(log.contains(&"A send_request twice".to_string()), "{log:?}");
    assert!(log.contains(&"S1 rsc twice".to_string()), "{log:?}");
}
