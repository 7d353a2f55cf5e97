//! Arguments, result and exceptions as `Any`s in request interceptors: a DII client calls
//! a DSI servant of the same ORB over IIOP (as calls to its own objects go when request
//! interceptors exist). Where the spec makes them available they are there; at other points
//! BAD_INV_ORDER (minor 14); without TypeCodes (a stub-style `ObjectRef::invoke`, a
//! skeleton before the servant runs) NO_RESOURCES (minor 1).

use std::sync::{Arc, Mutex};

use corbina::dii::{NVList, ARG_IN, ARG_INOUT, ARG_OUT};
use corbina::dsi::{DsiSkeleton, DynServerRequest, DynamicImplementation};
use corbina::interceptor::*;
use corbina::{Any, Orb, OrbConfig, SystemException, SystemExceptionKind, TypeCode};

type Log = Arc<Mutex<Vec<String>>>;

/// `long add(in long a, inout long b, out long c)`: returns a + b, b becomes 10 b, c = a - b.
struct Adder;

impl DynamicImplementation for Adder {
    fn primary_interface(&self) -> &'static str {
        "IDL:Test/Adder:1.0"
    }
    fn invoke(&self, req: &mut DynServerRequest<'_, '_, '_>) -> Result<(), SystemException> {
        let mut args = NVList::new();
        args.add_item("a", TypeCode::LONG, ARG_IN);
        args.add_item("b", TypeCode::LONG, ARG_INOUT);
        args.add_item("c", TypeCode::LONG, ARG_OUT);
        let args = req.arguments(args)?;
        let long = |i| {
            args.item(i)
                .and_then(|a| a.value())
                .and_then(Any::to_long)
                .unwrap_or(0)
        };
        let (a, b) = (long(0), long(1));
        args.item_mut(1)
            .unwrap()
            .set_value(Any::from_long(b * 10))?;
        args.item_mut(2).unwrap().set_value(Any::from_long(a - b))?;
        req.set_result(Any::from_long(a + b))
    }
}

/// What a call to `arguments()` gives, as text: `[In 3, InOut 4, Out -]` or the exception.
fn show_args(r: Result<Vec<Parameter>, SystemException>) -> String {
    match r {
        Ok(list) => {
            let items: Vec<String> = list
                .iter()
                .map(|p| {
                    let v = p
                        .argument
                        .to_long()
                        .map_or("-".to_string(), |v| v.to_string());
                    format!("{:?} {v}", p.mode)
                })
                .collect();
            format!("[{}]", items.join(", "))
        }
        Err(e) => show_err(&e),
    }
}

fn show_err(e: &SystemException) -> String {
    let minor = e.minor & 0xfff;
    match e.kind {
        SystemExceptionKind::BadInvOrder => format!("BAD_INV_ORDER {minor}"),
        SystemExceptionKind::NoResources => format!("NO_RESOURCES {minor}"),
        k => format!("{k:?} {minor}"),
    }
}

fn show_result(r: Result<Any, SystemException>) -> String {
    match r {
        Ok(a) => a.to_long().map_or("-".to_string(), |v| v.to_string()),
        Err(e) => show_err(&e),
    }
}

struct Params(Log);

impl Params {
    fn note(&self, s: String) {
        self.0.lock().unwrap().push(s);
    }
}

impl Interceptor for Params {
    fn name(&self) -> &str {
        "params"
    }
}

impl ClientRequestInterceptor for Params {
    fn send_request(&self, ri: &mut ClientRequestInfo) -> Result<(), InterceptorError> {
        self.note(format!(
            "send_request args={} result={} exceptions={}",
            show_args(ri.arguments()),
            show_result(ri.result()),
            ri.exceptions()
                .map_or_else(|e| show_err(&e), |e| e.len().to_string()),
        ));
        Ok(())
    }
    fn receive_reply(&self, ri: &mut ClientRequestInfo) -> Result<(), SystemException> {
        self.note(format!(
            "receive_reply args={} result={}",
            show_args(ri.arguments()),
            show_result(ri.result()),
        ));
        Ok(())
    }
    fn receive_exception(&self, ri: &mut ClientRequestInfo) -> Result<(), InterceptorError> {
        self.note(format!(
            "receive_exception args={} result={}",
            show_args(ri.arguments()),
            show_result(ri.result()),
        ));
        Ok(())
    }
}

impl ServerRequestInterceptor for Params {
    fn receive_request_service_contexts(
        &self,
        ri: &mut ServerRequestInfo,
    ) -> Result<(), InterceptorError> {
        self.note(format!("rsc args={}", show_args(ri.arguments())));
        Ok(())
    }
    fn receive_request(&self, ri: &mut ServerRequestInfo) -> Result<(), InterceptorError> {
        self.note(format!(
            "receive_request args={} exceptions={}",
            show_args(ri.arguments()),
            ri.exceptions()
                .map_or_else(|e| show_err(&e), |e| e.len().to_string()),
        ));
        Ok(())
    }
    fn send_reply(&self, ri: &mut ServerRequestInfo) -> Result<(), SystemException> {
        self.note(format!(
            "send_reply args={} result={}",
            show_args(ri.arguments()),
            show_result(ri.result()),
        ));
        Ok(())
    }
}

struct Init(Arc<Params>);

impl OrbInitializer for Init {
    fn pre_init(&self, info: &mut OrbInitInfo) {
        info.add_client_request_interceptor(self.0.clone()).unwrap();
        info.add_server_request_interceptor(self.0.clone()).unwrap();
    }
}

#[test]
fn arguments_and_result_are_anys_where_the_spec_says() {
    let log: Log = Arc::default();
    let orb = Orb::with_config(
        OrbConfig {
            endpoints: vec![corbina::config::Endpoint {
                host: "127.0.0.1".into(),
                port: 0,
            }],
            ..OrbConfig::default()
        }
        .orb_initializer(Arc::new(Init(Arc::new(Params(log.clone()))))),
    );
    let poa = orb.root_poa();
    poa.the_poa_manager().activate().unwrap();
    let servant: Arc<dyn corbina::Servant> = Arc::new(DsiSkeleton::new(Adder));
    poa.activate_object(servant.clone()).unwrap();
    let adder = poa.servant_to_reference(&servant).unwrap();
    let take = || std::mem::take(&mut *log.lock().unwrap());

    // The DII gives the operation's TypeCodes: both sides see the values.
    let mut req = adder.request("add");
    req.add_in_arg("a", Any::from_long(3));
    req.add_inout_arg("b", Any::from_long(4));
    req.add_out_arg("c", TypeCode::LONG);
    req.set_return_type(TypeCode::LONG);
    req.invoke().unwrap();
    assert_eq!(req.return_value().to_long(), Some(7));
    assert_eq!(req.argument(1).and_then(Any::to_long), Some(40));
    assert_eq!(req.argument(2).and_then(Any::to_long), Some(-1));
    assert_eq!(
        take(),
        [
            "send_request args=[In 3, InOut 4, Out -] result=BAD_INV_ORDER 14 exceptions=0",
            "rsc args=BAD_INV_ORDER 14",
            // The DSI servant has not said what its arguments are yet.
            "receive_request args=NO_RESOURCES 1 exceptions=NO_RESOURCES 1",
            "send_reply args=[In 3, InOut 40, Out -1] result=7",
            "receive_reply args=[In 3, InOut 40, Out -1] result=7",
        ]
    );

    // A call with no TypeCodes (what generated stubs make): NO_RESOURCES on the client.
    let r = adder.invoke(
        "add",
        |w| {
            w.write_long(5);
            w.write_long(6);
            Ok(())
        },
        |r| {
            let ret = r.read_long()?;
            r.read_long()?;
            r.read_long()?;
            Ok(ret)
        },
        corbina::no_user,
    );
    assert_eq!(r.unwrap(), 11);
    let log = take();
    assert_eq!(
        log[0],
        "send_request args=NO_RESOURCES 1 result=BAD_INV_ORDER 14 exceptions=NO_RESOURCES 1"
    );
    assert_eq!(
        log[4],
        "receive_reply args=NO_RESOURCES 1 result=NO_RESOURCES 1"
    );

    // An exception: the arguments and result are not available there.
    let mut req = adder.request("add");
    req.add_in_arg("a", Any::from_string("not a long").unwrap());
    req.set_return_type(TypeCode::LONG);
    assert!(req.invoke().is_err());
    let log = take();
    assert_eq!(
        log.last().unwrap(),
        "receive_exception args=BAD_INV_ORDER 14 result=BAD_INV_ORDER 14"
    );
    orb.destroy();
}
