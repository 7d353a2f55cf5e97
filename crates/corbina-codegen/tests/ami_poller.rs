//! CORBA AMI polling model (`sendp_<op>` returning `AMI_<I>Poller`, golden
//! `tests/golden/ami.rs`), Corbina client against a Corbina server: a ready reply, a poll that
//! times out, user and system exceptions, attributes, a reply taken twice, a poll for the
//! wrong operation, a lost connection, many pollers in flight, a `PollableSet`, and a dropped
//! poller cancelling its request.

use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use corbina::ami::{PollableSet, PollableSetError, WAIT_FOREVER};
use corbina::{SystemException, SystemExceptionKind};

#[allow(dead_code)]
mod gen {
    include!("golden/ami.rs");
}
use gen::ami::{self as idl, calc};

struct Calc {
    total: Mutex<i32>,
}

impl idl::BaseServant for Calc {
    /// Answers after `x` ms: the slow operation the timeouts are tried on.
    fn base_op(&self, x: i32) -> Result<i32, SystemException> {
        std::thread::sleep(Duration::from_millis(x.max(0) as u64));
        Ok(x * 10)
    }
}

impl idl::CalcServant for Calc {
    fn add(&self, a: i32, b: i32) -> Result<i32, SystemException> {
        Ok(a + b)
    }
    fn concat(&self, a: &str, b: &mut String) -> Result<(String, i32), calc::ConcatError> {
        if a.is_empty() {
            return Err(idl::Refused {
                why: "empty".into(),
                code: 7,
            }
            .into());
        }
        let joined = format!("{a}{b}");
        *b = b.to_uppercase();
        let len = joined.len() as i32;
        Ok((joined, len))
    }
    fn fail(&self, kind: i32) -> Result<(), calc::FailError> {
        match kind {
            0 => Err(idl::Refused {
                why: "no".into(),
                code: 1,
            }
            .into()),
            _ => Err(SystemException::new(SystemExceptionKind::NoPermission, 3).into()),
        }
    }
    fn note(&self, _s: &str) -> Result<(), SystemException> {
        Ok(())
    }
    fn get_total(&self) -> Result<i32, SystemException> {
        Ok(*self.total.lock().unwrap())
    }
    fn set_total(&self, value: i32) -> Result<(), SystemException> {
        *self.total.lock().unwrap() = value;
        Ok(())
    }
    fn get_label(&self) -> Result<String, SystemException> {
        Ok("calc".into())
    }
}

fn serve_calc(orb: &corbina::Orb) -> idl::Calc {
    let poa = orb.root_poa();
    let id = poa
        .activate_object(Arc::new(idl::CalcSkeleton::new(Calc {
            total: Mutex::new(0),
        })))
        .unwrap();
    poa.the_poa_manager().activate().unwrap();
    idl::Calc::unchecked_narrow(&poa.id_to_reference(&id).unwrap().without_collocation())
}

const WAIT: u32 = 10_000;

fn assert_system(e: &SystemException, kind: SystemExceptionKind, minor: u32) {
    assert_eq!((e.kind, e.minor), (kind, minor), "{e}");
}

#[test]
fn replies_results_and_exceptions_are_polled() {
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let calc = serve_calc(&orb);

    let p = calc.sendp_add(2, 3);
    assert_eq!(p.operation_name(), "add");
    assert_eq!(p.operation_target(), calc.as_object());
    assert!(p.is_ready(WAIT));
    assert_eq!(p.add(0).unwrap(), 5);
    assert!(!p.is_from_poller());
    // The reply was taken: the poller no longer exists as far as CORBA is concerned.
    let e = p.add(0).unwrap_err();
    assert_system(&e, SystemExceptionKind::ObjectNotExist, 0x4f4d_0005);
    assert!(p.is_from_poller());

    // Return value, inout and out values, in declaration order.
    let p = calc.sendp_concat("ab", "cd");
    assert_eq!(
        p.concat(WAIT).unwrap(),
        ("abcd".to_string(), "CD".to_string(), 4)
    );
    match calc.sendp_concat("", "x").concat(WAIT) {
        Err(calc::ConcatError::Refused(r)) => assert_eq!((r.why.as_str(), r.code), ("empty", 7)),
        other => panic!("unexpected {other:?}"),
    }
    let p = calc.sendp_fail(1);
    match p.fail(WAIT) {
        Err(calc::FailError::System(e)) => assert_system(&e, SystemExceptionKind::NoPermission, 3),
        other => panic!("unexpected {other:?}"),
    }
    // The operation's exception, not the poller's.
    assert!(!p.is_from_poller());
    assert!(matches!(
        calc.sendp_fail(0).fail(WAIT),
        Err(calc::FailError::Refused(_))
    ));
    // Attributes and an inherited operation.
    calc.sendp_set_total(42).set_total(WAIT).unwrap();
    let p = calc.sendp_get_total();
    assert_eq!(p.operation_name(), "get_total");
    assert_eq!(p.get_total(WAIT).unwrap(), 42);
    assert_eq!(calc.sendp_get_label().get_label(WAIT).unwrap(), "calc");
    assert_eq!(calc.sendp_base_op(4).base_op(WAIT).unwrap(), 40);

    // Another operation's method: BAD_OPERATION from the poller, which stays usable.
    let p = calc.sendp_add(1, 1);
    match p.concat(WAIT) {
        Err(calc::ConcatError::System(e)) => assert_eq!(e.kind, SystemExceptionKind::BadOperation),
        other => panic!("unexpected {other:?}"),
    }
    assert!(p.is_from_poller());
    assert_eq!(p.add(WAIT).unwrap(), 2);

    // Many in flight from one thread, no thread per poller: each reply once, in any order.
    let pollers: Vec<_> = (0..200).map(|k| calc.sendp_add(k, 1)).collect();
    for (k, p) in pollers.iter().enumerate().rev() {
        assert_eq!(p.add(WAIT).unwrap(), k as i32 + 1);
    }
    orb.destroy();
}

#[test]
fn a_poll_times_out_until_the_reply_arrives() {
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let calc = serve_calc(&orb);
    let p = calc.sendp_base_op(300);
    // timeout 0: no wait.
    assert!(!p.is_ready(0));
    let e = p.base_op(0).unwrap_err();
    assert_system(&e, SystemExceptionKind::Timeout, 0x4f4d_0001);
    assert!(p.is_from_poller());
    // A bounded wait that ends first.
    let t = Instant::now();
    assert_eq!(
        p.base_op(50).unwrap_err().kind,
        SystemExceptionKind::Timeout
    );
    assert!(t.elapsed() >= Duration::from_millis(50));
    // Then the reply, waiting without limit.
    assert_eq!(p.base_op(WAIT_FOREVER).unwrap(), 3000);
    assert!(!p.is_from_poller());
    assert!(p.is_ready(0));
    orb.destroy();
}

#[test]
fn a_pollable_set_hands_out_pollers_as_their_replies_arrive() {
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let calc = serve_calc(&orb);
    let mut set = PollableSet::new();
    assert_eq!(
        set.get_ready_pollable(0).unwrap_err(),
        PollableSetError::NoPossiblePollable
    );
    // The quick one first: it is ready first whether the server serves the connection's
    // requests one at a time or together.
    let quick = calc.sendp_base_op(100);
    let slow = calc.sendp_base_op(400);
    set.add_pollable(&slow);
    set.add_pollable(&quick);
    set.add_pollable(&quick);
    assert_eq!(set.number_left(), 2);
    assert_eq!(
        set.get_ready_pollable(0).unwrap_err(),
        PollableSetError::NotReady
    );
    let first = set.get_ready_pollable(WAIT).unwrap();
    assert!(first == *quick);
    assert_eq!(quick.base_op(0).unwrap(), 1000);
    let second = set.get_ready_pollable(WAIT).unwrap();
    assert!(second == *slow);
    assert_eq!(set.number_left(), 0);
    assert_eq!(slow.base_op(0).unwrap(), 4000);
    assert_eq!(
        set.remove(&slow).unwrap_err(),
        PollableSetError::UnknownPollable
    );
    orb.destroy();
}

#[test]
fn a_lost_connection_resolves_the_poll_with_comm_failure() {
    // A server that takes the request and drops the connection without a reply.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = [0u8; 12];
        let _ = s.read_exact(&mut buf);
        std::thread::sleep(Duration::from_millis(100));
    });
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let obj = orb
        .string_to_object(&format!("corbaloc::127.0.0.1:{port}/calc"))
        .unwrap();
    let calc = idl::Calc::unchecked_narrow(&obj);
    let p = calc.sendp_add(1, 2);
    server.join().unwrap();
    let e = p.add(WAIT).unwrap_err();
    assert!(
        matches!(
            e.kind,
            SystemExceptionKind::CommFailure | SystemExceptionKind::Transient
        ),
        "{e}"
    );
    assert!(!p.is_from_poller());
    orb.destroy();
}

/// What the raw server of [`dropping_a_poller_cancels_its_request`] saw.
#[derive(Debug, PartialEq)]
enum Seen {
    Request(u32),
    Cancel(u32),
}

/// A raw GIOP server on one connection: reports requests and cancels, writes what the test
/// sends it.
fn raw_server() -> (
    u16,
    std::sync::mpsc::Receiver<Seen>,
    std::sync::mpsc::Sender<Vec<u8>>,
) {
    use corbina::giop::connection::{Event, GiopConnection, Role, Settings};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (seen_tx, seen) = std::sync::mpsc::channel();
    let (send, send_rx) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut w = s.try_clone().unwrap();
        std::thread::spawn(move || {
            while let Ok(bytes) = send_rx.recv() {
                if std::io::Write::write_all(&mut w, &bytes).is_err() {
                    return;
                }
            }
        });
        let mut conn = GiopConnection::new(Settings::new(Role::Server));
        loop {
            let seen = match conn.poll_event() {
                Ok(Some(Event::Request { header, .. })) => Seen::Request(header.request_id),
                Ok(Some(Event::CancelRequest { request_id })) => Seen::Cancel(request_id),
                Ok(Some(_)) => continue,
                Ok(None) => match s.read(conn.read_buf()) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        conn.commit(n);
                        continue;
                    }
                },
                Err(_) => return,
            };
            if seen_tx.send(seen).is_err() {
                return;
            }
        }
    });
    (port, seen, send)
}

/// A GIOP 1.2 reply to `add` with `sum`.
fn add_reply(request_id: u32, sum: i32) -> Vec<u8> {
    use corbina::cdr::{ByteOrder, CodeSets};
    use corbina::giop::{MessageWriter, ReplyHeader, ReplyStatus, Version};
    let h = ReplyHeader::new(request_id, ReplyStatus::NoException);
    let mut m =
        MessageWriter::reply(Version::V1_2, ByteOrder::NATIVE, CodeSets::DEFAULT, &h).unwrap();
    m.body().write_long(sum);
    m.finish_bytes().unwrap()
}

/// A poller dropped (every clone of it) before its reply cancels the request, as a dropped
/// future does: the server gets CancelRequest, the id is freed, the late reply is
/// discarded, and the next poller gets its own reply.
#[test]
fn dropping_a_poller_cancels_its_request() {
    let (port, seen, send) = raw_server();
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let obj = orb
        .string_to_object(&format!("corbaloc:iiop:1.2@127.0.0.1:{port}/calc"))
        .unwrap();
    let calc = idl::Calc::unchecked_narrow(&obj);
    let next = || seen.recv_timeout(Duration::from_secs(10)).unwrap();

    let p = calc.sendp_add(1, 2);
    let Seen::Request(first) = next() else {
        panic!("expected a request")
    };
    // A clone in a set keeps the call.
    let mut set = PollableSet::new();
    set.add_pollable(&p);
    drop(p);
    assert!(seen.recv_timeout(Duration::from_millis(200)).is_err());
    assert_eq!(orb.connections()[0].async_in_flight, 1);
    drop(set);
    assert_eq!(next(), Seen::Cancel(first));
    assert_eq!(orb.connections()[0].async_in_flight, 0);

    // The late reply is discarded; the next poller gets the reply to its own request.
    send.send(add_reply(first, 3)).unwrap();
    let p = calc.sendp_add(2, 2);
    let Seen::Request(second) = next() else {
        panic!("expected a request")
    };
    assert_ne!(second, first);
    send.send(add_reply(second, 4)).unwrap();
    assert_eq!(p.add(WAIT).unwrap(), 4);
    // A poller dropped after its reply arrived has nothing to cancel.
    let p = calc.sendp_add(5, 5);
    let Seen::Request(third) = next() else {
        panic!("expected a request")
    };
    send.send(add_reply(third, 10)).unwrap();
    assert!(p.is_ready(WAIT));
    drop(p);
    assert!(seen.recv_timeout(Duration::from_millis(200)).is_err());
    orb.destroy();
}
