//! The connection's rules, byte for byte, without sockets.

use super::*;
use crate::{LocateRequestHeader, LocateStatus, ObjectKey, ReplyStatus};

fn key() -> TargetAddress {
    TargetAddress::Key(ObjectKey::from("key"))
}

fn other(order: ByteOrder) -> ByteOrder {
    match order {
        ByteOrder::Big => ByteOrder::Little,
        ByteOrder::Little => ByteOrder::Big,
    }
}

fn settings(role: Role, order: ByteOrder) -> Settings {
    Settings {
        byte_order: order,
        ..Settings::new(role)
    }
}

/// Marshals a request with `n` longs as arguments; returns its id and bytes.
fn request(c: &mut GiopConnection, v: Version, op: &str, n: u32, twoway: bool) -> (u32, Vec<u8>) {
    let mut r = c
        .start_request(
            Vec::new(),
            &RequestStart::new(v, CodeSets::UNICODE, &key(), op, twoway),
        )
        .unwrap();
    for i in 0..n {
        r.body().write_ulong(i);
    }
    let id = r.request_id();
    let out = c.finish_request(r).unwrap();
    let bytes = out
        .fragments()
        .unwrap()
        .iter()
        .flat_map(|f| f.to_vec())
        .collect();
    (id, bytes)
}

fn reply(ctx: &ReplyContext, status: ReplyStatus, n: u32) -> Vec<u8> {
    let mut w = ctx.start_reply(Vec::new(), status).unwrap();
    for i in 0..n {
        w.body().write_ulong(i * 10);
    }
    let out = ctx.finish_reply(w).unwrap();
    out.fragments()
        .unwrap()
        .iter()
        .flat_map(|f| f.to_vec())
        .collect()
}

/// Feeds `bytes` to the server and answers every request with as many values as it had
/// arguments.
fn serve(server: &mut GiopConnection, bytes: &[u8]) -> (Vec<String>, Vec<u8>) {
    server.push(bytes);
    let mut ops = Vec::new();
    let mut out = Vec::new();
    while let Some(ev) = server.poll_event().unwrap() {
        if let Event::Request {
            header,
            body,
            reply: ctx,
        } = ev
        {
            ops.push(header.operation.to_string());
            let mut r = body.reader(ctx.code_sets);
            let mut n = 0;
            while r.remaining() > 0 {
                r.read_ulong().unwrap();
                n += 1;
            }
            if ctx.response_expected {
                out.extend(reply(&ctx, ReplyStatus::NoException, n));
            }
        }
    }
    (ops, out)
}

#[test]
fn round_trips_at_every_version_and_byte_order() {
    for v in [Version::V1_0, Version::V1_1, Version::V1_2] {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let mut client = GiopConnection::new(settings(Role::Client, order));
            let mut server = GiopConnection::new(settings(Role::Server, other(order)));
            let (a, ra) = request(&mut client, v, "first", 3, true);
            let (b, rb) = request(&mut client, v, "second", 5, true);
            let (_, rc) = request(&mut client, v, "oneway", 1, false);
            assert_eq!((a, b), (2, 4), "even ids from the connecting end");
            let (ops, replies) = serve(&mut server, &[ra, rb, rc].concat());
            assert_eq!(ops, ["first", "second", "oneway"]);
            assert_eq!(client.in_flight().collect::<Vec<_>>(), [2, 4]);
            client.push(&replies);
            let mut got = Vec::new();
            while let Some(Event::Reply {
                header,
                body,
                code_sets,
            }) = client.poll_event().unwrap()
            {
                let mut r = body.reader(code_sets);
                let mut vals = Vec::new();
                while r.remaining() > 0 {
                    vals.push(r.read_ulong().unwrap());
                }
                got.push((header.request_id, vals));
            }
            assert_eq!(got, [(2, vec![0, 10, 20]), (4, vec![0, 10, 20, 30, 40])]);
            assert_eq!(client.in_flight().count(), 0);
            assert!(client.is_idle() && server.is_idle());
        }
    }
}

#[test]
fn code_sets_context_on_the_first_request_only() {
    let mut client = GiopConnection::new(Settings::new(Role::Client));
    let mut server = GiopConnection::new(Settings::new(Role::Server));
    let mut count = Vec::new();
    for _ in 0..3 {
        let (_, bytes) = request(&mut client, Version::V1_2, "op", 0, true);
        server.push(&bytes);
        let Some(Event::Request { header, reply, .. }) = server.poll_event().unwrap() else {
            panic!("no request")
        };
        count.push(header.service_context.len());
        assert_eq!(reply.code_sets, CodeSets::UNICODE);
    }
    assert_eq!(count, [1, 0, 0]);
    assert_eq!(server.code_sets(), Some(CodeSets::UNICODE));
    // A later context does not change what the first one fixed.
    let mut other = GiopConnection::new(Settings::new(Role::Client));
    let mut r = other
        .start_request(
            Vec::new(),
            &RequestStart::new(Version::V1_2, CodeSets::DEFAULT, &key(), "x", false),
        )
        .unwrap();
    r.body();
    let bytes = other
        .finish_request(r)
        .unwrap()
        .contiguous()
        .unwrap()
        .to_vec();
    server.push(&bytes);
    let Some(Event::Request { reply, .. }) = server.poll_event().unwrap() else {
        panic!()
    };
    assert_eq!(reply.code_sets, CodeSets::UNICODE);
    // GIOP 1.0 has no code sets: no context.
    let mut c10 = GiopConnection::new(Settings::new(Role::Client));
    let (_, b) = request(&mut c10, Version::V1_0, "op", 0, true);
    let mut s10 = GiopConnection::new(Settings::new(Role::Server));
    s10.push(&b);
    let Some(Event::Request { header, .. }) = s10.poll_event().unwrap() else {
        panic!()
    };
    assert!(header.service_context.is_empty());
}

#[test]
fn empty_bodies_are_unpadded_byte_exact() {
    let mut client = GiopConnection::new(settings(Role::Client, ByteOrder::Big));
    // The first request carries the code-set context; take it out of the way.
    request(&mut client, Version::V1_2, "warm", 0, true);
    let (_, bytes) = request(&mut client, Version::V1_2, "pin", 0, true);
    // Header (12) + id 4, flags 3, reserved, KeyAddr 0, key "key", op "pin\0", no contexts:
    // 44 bytes, not padded to 48 for the empty body.
    assert_eq!(
        hex::encode(&bytes),
        "47494f500102000000000020\
         00000004 03000000 0000 0000 00000003 6b6579 00 00000004 70696e00 00000000"
            .replace(' ', "")
    );
    let ctx = ReplyContext {
        request_id: 4,
        version: Version::V1_2,
        code_sets: CodeSets::UNICODE,
        byte_order: ByteOrder::Big,
        response_expected: true,
        fragment_size: None,
    };
    let empty = reply(&ctx, ReplyStatus::NoException, 0);
    assert_eq!(
        hex::encode(&empty),
        "47494f50010200010000000c000000040000000000000000"
    );
    assert_eq!(empty.len(), 12 + 12);
    // A body that is not empty starts 8-aligned: 12 + 12 = 24 is aligned already; a reply
    // with a context would pad.
    let one = reply(&ctx, ReplyStatus::NoException, 1);
    assert_eq!(one.len(), 24 + 4);
}

#[test]
fn replies_in_any_order_cancel_and_unknown_ids() {
    let mut client = GiopConnection::new(Settings::new(Role::Client));
    let mut server = GiopConnection::new(Settings::new(Role::Server));
    let reqs: Vec<(u32, Vec<u8>)> = (0..4)
        .map(|_| request(&mut client, Version::V1_2, "op", 1, true))
        .collect();
    server.push(&reqs.iter().flat_map(|r| r.1.clone()).collect::<Vec<_>>());
    let mut ctxs = Vec::new();
    while let Some(Event::Request { reply, .. }) = server.poll_event().unwrap() {
        ctxs.push(reply);
    }
    assert_eq!(ctxs.len(), 4);
    // Cancel the second: a CancelRequest goes out, and its reply is dropped when it comes.
    assert!(client.cancel(4));
    assert!(!client.cancel(4));
    let cancel = client.poll_transmit().unwrap();
    assert_eq!(cancel.msg_type(), MsgType::CancelRequest);
    let cancel_bytes = cancel.as_bytes().to_vec();
    server.push(&cancel_bytes);
    assert!(matches!(
        server.poll_event().unwrap(),
        Some(Event::CancelRequest { request_id: 4 })
    ));
    // Replies in reverse order.
    let answers: Vec<u8> = ctxs
        .iter()
        .rev()
        .flat_map(|c| reply(c, ReplyStatus::NoException, 1))
        .collect();
    client.push(&answers);
    let mut ids = Vec::new();
    while let Some(ev) = client.poll_event().unwrap() {
        let Event::Reply { header, .. } = ev else {
            panic!("{ev:?}")
        };
        ids.push(header.request_id);
    }
    assert_eq!(ids, [8, 6, 2]);
    // A reply nobody waits for breaks the protocol: MessageError, and the error is final.
    client.push(&reply(&ctxs[0], ReplyStatus::NoException, 0));
    assert_eq!(
        client.poll_event().unwrap_err(),
        ConnectionError::UnknownRequestId { request_id: 2 }
    );
    assert_eq!(
        client.poll_transmit().unwrap().as_bytes(),
        crate::message_error(Version::V1_2, ByteOrder::NATIVE)
    );
    assert!(client.poll_event().is_err());
}

#[test]
fn roles_and_bidirectional_connections() {
    let mut client = GiopConnection::new(Settings::new(Role::Client));
    let mut server = GiopConnection::new(Settings::new(Role::Server));
    // A Request to a plain client, a Reply to a plain server: MessageError.
    let (_, req) = request(&mut client, Version::V1_2, "op", 0, true);
    let mut c2 = GiopConnection::new(Settings::new(Role::Client));
    c2.push(&req);
    assert!(matches!(
        c2.poll_event(),
        Err(ConnectionError::Unexpected {
            msg_type: MsgType::Request,
            role: Role::Client
        })
    ));
    assert_eq!(
        c2.poll_transmit().unwrap().msg_type(),
        MsgType::MessageError
    );
    server.push(&req);
    let Some(Event::Request { reply: ctx, .. }) = server.poll_event().unwrap() else {
        panic!()
    };
    let rep = reply(&ctx, ReplyStatus::NoException, 0);
    let mut s2 = GiopConnection::new(Settings::new(Role::Server));
    s2.push(&rep);
    assert!(s2.poll_event().is_err());
    assert!(server
        .start_request(
            Vec::new(),
            &RequestStart::new(Version::V1_2, CodeSets::DEFAULT, &key(), "x", true)
        )
        .is_err());
    // Bidirectional: the server calls back over the same connection with odd ids, the
    // client serves it.
    client.set_bidirectional(true);
    server.set_bidirectional(true);
    let (cb, cb_bytes) = request(&mut server, Version::V1_2, "callback", 2, true);
    assert_eq!(cb, 1);
    let (ops, answer) = serve(&mut client, &[rep, cb_bytes].concat());
    assert_eq!(ops, ["callback"]);
    server.push(&answer);
    let Some(Event::Reply { header, .. }) = server.poll_event().unwrap() else {
        panic!()
    };
    assert_eq!(header.request_id, 1);
}

#[test]
fn close_connection_both_ways() {
    let mut client = GiopConnection::new(Settings::new(Role::Client));
    let mut server = GiopConnection::new(Settings::new(Role::Server));
    // The writers' share, taken when the connection is accepted (nothing read yet).
    let mut close = server.close_state();
    let (_, a) = request(&mut client, Version::V1_1, "a", 0, true);
    server.push(&a);
    let Some(Event::Request { reply, .. }) = server.poll_event().unwrap() else {
        panic!()
    };
    assert!(close.begin_request(reply.version));
    assert!(!close.end());
    let m = close.close().expect("idle: at once");
    assert_eq!(
        m.as_bytes(),
        crate::close_connection(Version::V1_1, ByteOrder::NATIVE)
    );
    // A request read after our CloseConnection is not processed.
    let (b, bb) = request(&mut client, Version::V1_1, "b", 0, true);
    server.push(&bb);
    let Some(Event::Request { reply, .. }) = server.poll_event().unwrap() else {
        panic!()
    };
    assert!(!close.begin_request(reply.version));
    client.push(m.as_bytes());
    assert!(matches!(
        client.poll_event().unwrap(),
        Some(Event::CloseConnection)
    ));
    // Both requests are unanswered: the caller may send them again elsewhere.
    assert_eq!(client.in_flight().collect::<Vec<_>>(), [2, b]);
    assert!(client.poll_event().unwrap().is_none());
    assert!(!client.is_open());
    assert!(client
        .start_request(
            Vec::new(),
            &RequestStart::new(Version::V1_1, CodeSets::DEFAULT, &key(), "c", true)
        )
        .is_err());
}

/// The connection's close state and the writers' share handed out by it follow one rule:
/// control messages in the highest version the peer has used, whatever order its versions
/// come in, in the connection's byte order; the reader's MessageError after bad input too.
#[test]
fn the_connection_and_its_close_state_use_the_same_version() {
    for versions in [
        [Version::V1_0, Version::V1_2, Version::V1_1],
        [Version::V1_2, Version::V1_0, Version::V1_1],
        [Version::V1_1, Version::V1_1, Version::V1_0],
    ] {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let mut client = GiopConnection::new(Settings::new(Role::Client));
            let mut server = GiopConnection::new(Settings {
                byte_order: order,
                ..Settings::new(Role::Server)
            });
            let mut shared = server.close_state();
            for v in versions {
                let (_, bytes) = request(&mut client, v, "op", 1, true);
                server.push(&bytes);
                let Some(Event::Request { reply, .. }) = server.poll_event().unwrap() else {
                    panic!("expected a request at {v:?}")
                };
                assert_eq!(reply.version, v);
                assert!(shared.begin_request(reply.version));
                assert!(!shared.end());
            }
            let highest = versions.into_iter().max().unwrap();
            // Taken later, the reader's state says the same.
            let mut late = server.close_state();
            assert_eq!(late.peer_version(), highest);
            let from_writers = shared.close().expect("idle: at once");
            assert_eq!(
                from_writers.as_bytes(),
                late.close().expect("idle").as_bytes()
            );
            assert_eq!(
                from_writers.as_bytes(),
                crate::close_connection(highest, order),
                "{versions:?}"
            );
            // Bytes that are not GIOP: MessageError in the same version.
            server.push(b"JUNKJUNKJUNK");
            assert!(server.poll_event().is_err());
            assert_eq!(
                server.poll_transmit().unwrap().as_bytes(),
                crate::message_error(highest, order)
            );
        }
    }
}

/// The reader notes the version of every message, not only of requests (a LocateRequest
/// at 1.2 after requests at 1.0).
#[test]
fn every_message_raises_the_peer_version() {
    let mut client = GiopConnection::new(Settings::new(Role::Client));
    let mut server = GiopConnection::new(Settings::new(Role::Server));
    assert_eq!(server.close_state().peer_version(), Version::V1_0);
    let (_, bytes) = request(&mut client, Version::V1_0, "op", 1, true);
    server.push(&bytes);
    assert!(server.poll_event().unwrap().is_some());
    let (locate, _) = client.locate_request(Version::V1_2, &key()).unwrap();
    server.push(&locate);
    assert!(matches!(
        server.poll_event().unwrap(),
        Some(Event::LocateRequest { .. })
    ));
    assert_eq!(server.close_state().peer_version(), Version::V1_2);
}

#[test]
fn forward_perm_only_at_1_2() {
    for (v, status, locate) in [
        (
            Version::V1_1,
            ReplyStatus::LocationForward,
            LocateStatus::ObjectForward,
        ),
        (
            Version::V1_2,
            ReplyStatus::LocationForwardPerm,
            LocateStatus::ObjectForwardPerm,
        ),
    ] {
        let ctx = ReplyContext {
            request_id: 9,
            version: v,
            code_sets: CodeSets::DEFAULT,
            byte_order: ByteOrder::Big,
            response_expected: true,
            fragment_size: None,
        };
        let r = reply(&ctx, ReplyStatus::LocationForwardPerm, 0);
        let (_, m) = crate::decode_message(&r, &[]).unwrap();
        let GiopMessage::Reply { header, .. } = m else {
            panic!()
        };
        assert_eq!(header.reply_status, status);
        let w = ctx
            .start_locate_reply(Vec::new(), LocateStatus::ObjectForwardPerm)
            .unwrap();
        let b = ctx.finish_reply(w).unwrap().contiguous().unwrap().to_vec();
        let (_, m) = crate::decode_message(&b, &[]).unwrap();
        let GiopMessage::LocateReply { header, .. } = m else {
            panic!()
        };
        assert_eq!(header.locate_status, locate);
    }
}

/// GIOP 1.1 messages go whole whatever the fragment size: a split of the finished message
/// would fall 4 past a multiple of 8 (the only place where per-Fragment and per-message
/// alignment agree), inside the `double` there. Byte for byte what an unfragmenting
/// connection sends.
#[test]
fn giop_1_1_messages_are_not_split_across_an_8_byte_primitive() {
    let send = |fragment_size: Option<u32>| {
        let mut c = GiopConnection::new(Settings {
            fragment_size,
            ..Settings::new(Role::Client)
        });
        let mut r = c
            .start_request(
                Vec::new(),
                &RequestStart::new(Version::V1_1, CodeSets::UNICODE, &key(), "d", true),
            )
            .unwrap();
        r.body().write_octet(1);
        for i in 0..40 {
            r.body().write_primitive(f64::from(i) * 0.25);
        }
        let out = c.finish_request(r).unwrap();
        assert!(!out.is_fragmented());
        let parts = out.fragments().unwrap();
        assert_eq!(parts.len(), 1);
        parts[0].to_vec()
    };
    let whole = send(None);
    assert!(whole.len() > 3 * 64);
    assert_eq!(whole[6] & 2, 0, "no more-fragments flag");
    assert_eq!(send(Some(64)), whole);
    // What a byte-level split makes of it: every cut is 4 past a multiple of 8, so each one
    // among the doubles (the body ends with the 40, each at a multiple of 8) halves one.
    let split = crate::fragment_message(&[&whole], 64).unwrap();
    let mut cuts = vec![split[0].len()];
    for p in &split[1..split.len() - 1] {
        cuts.push(cuts[cuts.len() - 1] + p.len() - 12);
    }
    let doubles = whole.len() - 40 * 8;
    assert!(cuts.iter().all(|c| c % 8 == 4), "{cuts:?}");
    assert!(
        cuts.iter().filter(|&&c| c > doubles).count() >= 4,
        "{cuts:?}"
    );
}

#[test]
fn fragments_out_and_back_with_progress_and_a_cap() {
    for v in [Version::V1_2] {
        let mut client = GiopConnection::new(Settings {
            fragment_size: Some(256),
            ..Settings::new(Role::Client)
        });
        let mut server = GiopConnection::new(Settings::new(Role::Server));
        let (_, bytes) = request(&mut client, v, "big", 200, true);
        assert!(bytes.len() > 800);
        server.push(&bytes);
        let mut fragments = 0;
        let mut args = Vec::new();
        while let Some(ev) = server.poll_event().unwrap() {
            match ev {
                Event::Fragment { request_id, held } => {
                    fragments += 1;
                    assert!(held > 0);
                    assert_eq!(request_id, Some(2));
                }
                Event::Request { body, reply, .. } => {
                    let mut r = body.reader(reply.code_sets);
                    while r.remaining() > 0 {
                        args.push(r.read_ulong().unwrap());
                    }
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(fragments >= 3, "{fragments}");
        assert_eq!(args, (0..200).collect::<Vec<_>>());
        // Over the reassembly cap: MessageError.
        let mut small = GiopConnection::new(Settings {
            reassembly_limit: 300,
            ..Settings::new(Role::Server)
        });
        small.push(&bytes);
        let err = loop {
            match small.poll_event() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("accepted"),
                Err(e) => break e,
            }
        };
        assert!(matches!(
            err,
            ConnectionError::Malformed(GiopError::ReassemblyLimitExceeded { .. })
        ));
        assert_eq!(
            small.poll_transmit().unwrap().msg_type(),
            MsgType::MessageError
        );
    }
}

#[test]
fn bad_bytes_give_message_error_at_the_right_version() {
    for (bytes, version, want) in [
        (&b"HTTP/1.1 200 OK\r\n\r\n"[..], Version::V1_0, "BadMagic"),
        (
            &b"GIOP\x01\x02\x00\x00\x7f\x00\x00\x00"[..],
            Version::V1_0,
            "MessageTooLarge",
        ),
        (
            &b"GIOP\x01\x01\x00\x09\x00\x00\x00\x00"[..],
            Version::V1_0,
            "UnknownMessageType",
        ),
        // A Request whose header is cut short inside a well-framed message.
        (
            &b"GIOP\x01\x02\x00\x00\x00\x00\x00\x02\x00\x00"[..],
            Version::V1_2,
            "Marshal",
        ),
    ] {
        let mut s = GiopConnection::new(Settings {
            max_message_size: 1 << 20,
            ..Settings::new(Role::Server)
        });
        s.push(bytes);
        let e = s.poll_event().unwrap_err();
        assert!(format!("{e:?}").contains(want), "{e:?}");
        assert_eq!(
            s.poll_transmit().unwrap().as_bytes(),
            crate::message_error(version, ByteOrder::NATIVE),
            "{want}"
        );
        assert!(s.poll_transmit().is_none());
        assert_eq!(s.poll_event().unwrap_err(), e, "errors are final");
    }
}

#[test]
fn read_buf_reads_large_bodies_exactly_and_batches_small_messages() {
    let mut client = GiopConnection::new(Settings::new(Role::Client));
    let (_, big) = request(&mut client, Version::V1_2, "big", 20_000, false);
    let (_, small) = request(&mut client, Version::V1_2, "small", 1, false);
    let stream = [big.clone(), small.clone(), small.clone()].concat();
    let mut server = GiopConnection::new(Settings::new(Role::Server));
    let mut at = 0;
    let mut offers = Vec::new();
    let mut ops = Vec::new();
    while at < stream.len() {
        let buf = server.read_buf();
        offers.push(buf.len());
        let n = buf.len().min(stream.len() - at);
        buf[..n].copy_from_slice(&stream[at..at + n]);
        server.commit(n);
        at += n;
        while let Some(ev) = server.poll_event().unwrap() {
            if let Event::Request { header, .. } = ev {
                ops.push(header.operation.to_string());
            }
        }
    }
    assert_eq!(ops, ["big", "small", "small"]);
    // First a chunk (the big header and some body), then exactly the rest of the big body,
    // then exactly the next header, and once that says the message is small, a chunk
    // again (which brings in both small messages).
    assert_eq!(
        offers,
        [
            recv::READ_CHUNK,
            big.len() - recv::READ_CHUNK,
            12,
            recv::READ_CHUNK
        ]
    );
    // A ten-byte dribble still works.
    let mut server = GiopConnection::new(Settings::new(Role::Server));
    for piece in stream.chunks(10) {
        server.push(piece);
    }
    let mut n = 0;
    while let Some(ev) = server.poll_event().unwrap() {
        n += usize::from(matches!(ev, Event::Request { .. }));
    }
    assert_eq!(n, 3);
    assert!(server.held_bytes() <= stream.len() + recv::READ_CHUNK);
}

#[test]
fn end_of_stream_mid_message() {
    let mut client = GiopConnection::new(Settings::new(Role::Client));
    let (_, bytes) = request(&mut client, Version::V1_2, "op", 3, true);
    let mut server = GiopConnection::new(Settings::new(Role::Server));
    server.push(&bytes[..bytes.len() - 1]);
    assert!(server.poll_event().unwrap().is_none());
    assert!(server.end_of_stream());
    assert_eq!(server.poll_event().unwrap_err(), ConnectionError::Closed);
    assert!(
        server.poll_transmit().is_none(),
        "no MessageError to a gone peer"
    );
    let mut server = GiopConnection::new(Settings::new(Role::Server));
    server.push(&bytes);
    assert!(server.poll_event().unwrap().is_some());
    assert!(!server.end_of_stream());
}

#[test]
fn locate_requests_and_replies() {
    let mut server = GiopConnection::new(Settings::new(Role::Server));
    let lr = MessageWriter::locate_request(
        Version::V1_2,
        ByteOrder::Little,
        &LocateRequestHeader {
            request_id: 6,
            target: key(),
        },
    )
    .unwrap()
    .finish_bytes()
    .unwrap();
    server.push(&lr);
    let Some(Event::LocateRequest { header, reply }) = server.poll_event().unwrap() else {
        panic!()
    };
    assert_eq!(header.request_id, 6);
    let w = reply
        .start_locate_reply(Vec::new(), LocateStatus::ObjectHere)
        .unwrap();
    let b = reply
        .finish_reply(w)
        .unwrap()
        .contiguous()
        .unwrap()
        .to_vec();
    assert_eq!(b.len(), 20);
}

/// failures.rs `ten_thousand_oneways_all_arrive`, without a socket: a burst of oneways read
/// in uneven pieces through `read_buf` comes out as every request, in order, none expecting
/// a reply, and nothing to send back.
#[test]
fn a_burst_of_oneways_arrives_whole_and_in_order() {
    let mut client = GiopConnection::new(Settings::new(Role::Client));
    let mut wire = Vec::new();
    let mut ids = Vec::new();
    for n in 0..10_000u32 {
        let (id, bytes) = request(&mut client, Version::V1_2, "oneway", n % 7, false);
        ids.push(id);
        wire.extend_from_slice(&bytes);
    }
    assert_eq!(client.in_flight().count(), 0, "oneways await nothing");
    let mut server = GiopConnection::new(Settings::new(Role::Server));
    let mut got = Vec::new();
    let mut at = 0;
    let mut piece = 1;
    while at < wire.len() || !server.wants_input() {
        if server.wants_input() {
            let buf = server.read_buf();
            let n = buf.len().min(piece).min(wire.len() - at);
            buf[..n].copy_from_slice(&wire[at..at + n]);
            server.commit(n);
            at += n;
            piece = piece * 7 % 9_973 + 1;
            continue;
        }
        match server.poll_event().unwrap() {
            Some(Event::Request {
                header,
                body,
                reply,
            }) => {
                assert!(!reply.response_expected);
                // Request n (id 2 + 2n) carried n % 7 ulongs, and nothing else.
                let n = (header.request_id - 2) / 2;
                let args = body.reader(reply.code_sets).remaining() / 4;
                assert_eq!(args as u32, n % 7, "request {n}");
                got.push(header.request_id);
            }
            None => {}
            Some(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(got, ids);
    assert!(server.is_idle());
    assert!(server.poll_transmit().is_none());
}

/// failures.rs `malformed_messages_…`: a version from the future is refused (MessageError in
/// 1.0, the only version the peer can be assumed to read); half a message and then silence
/// gives nothing at all, and holds only what arrived.
#[test]
fn future_versions_and_half_messages() {
    let mut s = GiopConnection::new(Settings::new(Role::Server));
    s.push(b"GIOP\x09\x00\x00\x05\x00\x00\x00\x00");
    assert!(s.poll_event().is_err());
    assert_eq!(
        s.poll_transmit().unwrap().as_bytes(),
        crate::message_error(Version::V1_0, ByteOrder::NATIVE)
    );
    assert!(s.poll_transmit().is_none());

    let mut s = GiopConnection::new(Settings::new(Role::Server));
    s.push(b"GIOP\x01\x02\x01\x00");
    assert!(s.poll_event().unwrap().is_none());
    assert!(s.wants_input());
    assert_eq!(s.buffered(), 8);
    assert!(s.poll_transmit().is_none());
    assert!(s.end_of_stream(), "cut short");
    assert!(
        s.poll_transmit().is_none(),
        "nothing is sent to a peer that left"
    );
}

/// `request` (one call) and `start_request` + `finish_request` give the same ids, bytes and
/// in-flight set: the CODE_SETS context on the first request only, empty bodies unpadded,
/// oneways not in flight, at every version and byte order.
#[test]
fn fused_request_matches_start_and_finish_byte_exact() {
    let calls: [(&str, u32, bool); 5] = [
        ("first", 2, true),
        ("empty", 0, true),
        ("oneway", 1, false),
        ("empty_oneway", 0, false),
        ("last", 3, true),
    ];
    for v in [Version::V1_0, Version::V1_1, Version::V1_2] {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let mut general = GiopConnection::new(settings(Role::Client, order));
            let mut fused = GiopConnection::new(settings(Role::Client, order));
            let mut buffer = Vec::new();
            for (op, n, twoway) in calls {
                let (id, expect) = request(&mut general, v, op, n, twoway);
                let (got_id, out) = fused
                    .request(&mut buffer, v, CodeSets::UNICODE, &key(), op, twoway, |w| {
                        (0..n).for_each(|i| w.write_ulong(i));
                        Ok::<(), ()>(())
                    })
                    .unwrap();
                assert_eq!(got_id, id, "{v:?} {order:?} {op}");
                assert_eq!(out.contiguous().unwrap(), expect, "{v:?} {order:?} {op}");
                buffer = out.into_buffer();
            }
            assert_eq!(
                fused.in_flight().collect::<Vec<_>>(),
                general.in_flight().collect::<Vec<_>>()
            );
            assert_eq!(fused.code_sets(), Some(CodeSets::UNICODE));
        }
    }
}

/// A fused request that fails sends nothing: no id used, nothing in flight, the buffer's
/// allocation handed back; a server (not bidirectional) or a closed connection sends none.
#[test]
fn fused_request_failures_send_nothing() {
    let mut c = GiopConnection::new(Settings::new(Role::Client));
    let mut buffer = Vec::with_capacity(512);
    for sent in 0..2 {
        // The first attempt goes the general way (CODE_SETS), the second the fast way.
        let e = c
            .request(
                &mut buffer,
                Version::V1_2,
                CodeSets::UNICODE,
                &key(),
                "op",
                true,
                |w| {
                    w.write_ulong(1);
                    Err("no")
                },
            )
            .unwrap_err();
        assert!(matches!(e, RequestError::Arguments("no")));
        assert!(buffer.capacity() >= 512);
        assert_eq!(c.in_flight().count(), sent);
        let (id, out) = c
            .request(
                &mut buffer,
                Version::V1_2,
                CodeSets::UNICODE,
                &key(),
                "op",
                true,
                |_| Ok::<(), ()>(()),
            )
            .unwrap();
        buffer = out.into_buffer();
        assert_eq!(c.in_flight().last(), Some(id));
    }
    assert_eq!(c.in_flight().collect::<Vec<_>>(), [2, 4]);

    let mut s = GiopConnection::new(Settings::new(Role::Server));
    let e = s
        .request(
            &mut buffer,
            Version::V1_2,
            CodeSets::UNICODE,
            &key(),
            "op",
            true,
            |_| Ok::<(), ()>(()),
        )
        .unwrap_err();
    assert!(matches!(
        e,
        RequestError::Connection(ConnectionError::Unexpected {
            msg_type: MsgType::Request,
            role: Role::Server
        })
    ));

    c.push(&crate::close_connection(Version::V1_2, ByteOrder::NATIVE));
    assert!(matches!(c.poll_event(), Ok(Some(Event::CloseConnection))));
    let e = c
        .request(
            &mut buffer,
            Version::V1_2,
            CodeSets::UNICODE,
            &key(),
            "op",
            true,
            |_| Ok::<(), ()>(()),
        )
        .unwrap_err();
    assert!(matches!(
        e,
        RequestError::Connection(ConnectionError::Closed)
    ));
}

/// Replies read by the short path (GIOP 1.2, no contexts) and by the CDR reader (contexts,
/// GIOP 1.1) decode as the general message decoder does; a bad status is still MessageError.
#[test]
fn replies_with_and_without_contexts_decode_alike() {
    use crate::message::MessageWriter;
    use crate::service_context::{ServiceContext, ServiceContextList};
    for v in [Version::V1_1, Version::V1_2] {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            for contexts in [0, 2] {
                for args in [0, 3] {
                    let mut client = GiopConnection::new(settings(Role::Client, order));
                    let (id, _) = request(&mut client, v, "op", 0, true);
                    let list = (0..contexts)
                        .map(|i| ServiceContext {
                            context_id: 100 + i,
                            context_data: vec![i as u8; 5],
                        })
                        .collect();
                    let h = ReplyHeader {
                        service_context: ServiceContextList(list),
                        ..ReplyHeader::new(id, ReplyStatus::UserException)
                    };
                    let mut m = MessageWriter::reply(v, order, CodeSets::DEFAULT, &h).unwrap();
                    (0..args).for_each(|i| m.body().write_ulong(i + 7));
                    let bytes = m.finish_bytes().unwrap();
                    let msg = Message::from_bytes(bytes.clone()).unwrap();
                    let GiopMessage::Reply {
                        header: want_header,
                        body: want_body,
                    } = msg.decode().unwrap()
                    else {
                        panic!()
                    };
                    client.push(&bytes);
                    let Some(Event::Reply { header, body, .. }) = client.poll_event().unwrap()
                    else {
                        panic!()
                    };
                    assert_eq!(header, want_header, "{v:?} {order:?} {contexts} {args}");
                    assert_eq!(header, h);
                    assert_eq!(body.range(), want_body.range());
                    assert_eq!(body.as_bytes(), want_body.as_bytes());
                    assert_eq!(body.len(), 4 * args as usize);
                }
            }
        }
    }
    // An unknown reply status (9), on the short path.
    let mut client = GiopConnection::new(Settings::new(Role::Client));
    let (id, _) = request(&mut client, Version::V1_2, "op", 0, true);
    let mut bytes = MessageWriter::reply(
        Version::V1_2,
        ByteOrder::Big,
        CodeSets::DEFAULT,
        &ReplyHeader::new(id, ReplyStatus::NoException),
    )
    .unwrap()
    .finish_bytes()
    .unwrap();
    bytes[19] = 9;
    client.push(&bytes);
    assert_eq!(
        client.poll_event().unwrap_err(),
        ConnectionError::Malformed(GiopError::UnknownReplyStatus(9))
    );
    assert_eq!(
        client.poll_transmit().map(|m| m.msg_type()),
        Some(MsgType::MessageError)
    );
}

/// `ReplyContext::reply` (one call) gives the bytes `start_reply` + `finish_reply` give, at
/// every version and byte order, for every status (FORWARD_PERM downgraded below 1.2) and
/// empty bodies unpadded; a failing body hands the buffer back.
#[test]
fn fused_reply_matches_start_and_finish_byte_exact() {
    let statuses = [
        ReplyStatus::NoException,
        ReplyStatus::UserException,
        ReplyStatus::SystemException,
        ReplyStatus::LocationForward,
        ReplyStatus::LocationForwardPerm,
        ReplyStatus::NeedsAddressingMode,
    ];
    for v in [Version::V1_0, Version::V1_1, Version::V1_2] {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let mut client = GiopConnection::new(settings(Role::Client, order));
            let mut server = GiopConnection::new(settings(Role::Server, other(order)));
            let (_, bytes) = request(&mut client, v, "op", 0, true);
            server.push(&bytes);
            let Some(Event::Request { reply: ctx, .. }) = server.poll_event().unwrap() else {
                panic!()
            };
            let mut buffer = Vec::new();
            for status in statuses {
                for n in [0, 2] {
                    let mut w = ctx.start_reply(Vec::new(), status).unwrap();
                    (0..n).for_each(|i| w.body().write_ulong(i));
                    let expect = ctx.finish_reply(w).unwrap().contiguous().unwrap().to_vec();
                    let out = ctx
                        .reply(&mut buffer, status, |w| {
                            (0..n).for_each(|i| w.write_ulong(i));
                            Ok::<(), GiopError>(())
                        })
                        .unwrap();
                    assert_eq!(
                        out.contiguous().unwrap(),
                        expect,
                        "{v:?} {order:?} {status:?}"
                    );
                    buffer = out.into_buffer();
                }
            }
            buffer.reserve(256);
            let e = ctx
                .reply(&mut buffer, ReplyStatus::NoException, |w| {
                    w.write_ulong(1);
                    Err(GiopError::UnexpectedFragment { request_id: None })
                })
                .unwrap_err();
            assert_eq!(e, GiopError::UnexpectedFragment { request_id: None });
            assert!(buffer.capacity() >= 256);
        }
    }
}

/// A header's size field is the peer's word: twelve bytes announcing a 60 MiB message make
/// the connection allocate (and touch) a chunk, not 60 MiB; as the message really arrives
/// the buffer grows with it (at most doubling per read) and the body still lands in place
/// and decodes.
#[test]
fn a_large_size_in_a_header_is_not_an_allocation() {
    let mut server = GiopConnection::new(Settings::new(Role::Server));
    let mut header = MessageHeader::new(Version::V1_2, ByteOrder::NATIVE, MsgType::Request);
    header.message_size = 60 << 20;
    server.push(&header.encode());
    assert!(server.poll_event().unwrap().is_none());
    let offer = server.read_buf().len();
    assert!(offer <= recv::READ_CHUNK, "offered {offer}");
    assert!(server.held_bytes() <= 2 * recv::READ_CHUNK);

    // A real 3 MiB request, fed as a socket would, at most 256 KiB a read.
    let mut client = GiopConnection::new(Settings::new(Role::Client));
    let (_, big) = request(&mut client, Version::V1_2, "big", 3 << 18, false);
    let mut server = GiopConnection::new(Settings::new(Role::Server));
    let mut at = 0;
    let mut offers = Vec::new();
    let mut got = None;
    while at < big.len() {
        let buf = server.read_buf();
        offers.push(buf.len());
        let n = buf.len().min(big.len() - at).min(256 << 10);
        buf[..n].copy_from_slice(&big[at..at + n]);
        server.commit(n);
        at += n;
        // Never more initialized than twice what has arrived, plus a chunk.
        assert!(server.held_bytes() <= 2 * at + recv::READ_CHUNK, "{at}");
        if let Some(Event::Request {
            header,
            body,
            reply,
        }) = server.poll_event().unwrap()
        {
            let mut r = body.reader(reply.code_sets);
            let mut last = None;
            while let Ok(v) = r.read_ulong() {
                assert_eq!(v, last.map_or(0, |l| l + 1));
                last = Some(v);
            }
            got = Some((header.operation.to_string(), last.map_or(0, |l| l + 1)));
        }
    }
    assert_eq!(got, Some(("big".to_string(), 3 << 18)));
    // The offers grew, never past the message.
    assert!(offers.windows(2).all(|w| w[1] <= big.len()));
    assert!(offers.len() > 2, "{offers:?}");
}

/// The same for a Fragment's size, after the first part of a fragmented request is held:
/// the connection holds that part and a chunk, not the 60 MiB announced.
#[test]
fn a_large_size_in_a_fragment_header_is_not_an_allocation() {
    let mut client = GiopConnection::new(Settings::new(Role::Client));
    let (id, mut first) = request(&mut client, Version::V1_2, "frag", 16, true);
    first[6] |= 2;
    let mut server = GiopConnection::new(Settings::new(Role::Server));
    server.push(&first);
    assert!(matches!(
        server.poll_event().unwrap(),
        Some(Event::Fragment { .. })
    ));
    let mut fragment = MessageHeader::new(Version::V1_2, ByteOrder::NATIVE, MsgType::Fragment);
    fragment.message_size = 60 << 20;
    fragment.more_fragments = true;
    server.push(&fragment.encode());
    server.push(&id.to_ne_bytes());
    server.push(&[0; 8]);
    assert!(server.poll_event().unwrap().is_none());
    assert!(
        server.held_bytes() <= 2 * recv::READ_CHUNK + first.len(),
        "{}",
        server.held_bytes()
    );
}

#[test]
fn reserved_request_ids_are_not_reused_by_requests_started_meanwhile() {
    let mut client = GiopConnection::new(Settings::new(Role::Client));
    let mut server = GiopConnection::new(Settings::new(Role::Server));
    let reserved = client.reserve_request_id();
    // Another call starts and finishes a request before the reserved one is started.
    let (meanwhile, first) = request(&mut client, Version::V1_2, "meanwhile", 0, true);
    assert_ne!(meanwhile, reserved);
    let mut r = client
        .start_request(
            Vec::new(),
            &RequestStart {
                request_id: Some(reserved),
                ..RequestStart::new(Version::V1_2, CodeSets::UNICODE, &key(), "reserved", true)
            },
        )
        .unwrap();
    assert_eq!(r.request_id(), reserved);
    r.body().write_ulong(7);
    let out = client.finish_request(r).unwrap();
    let second: Vec<u8> = out
        .fragments()
        .unwrap()
        .iter()
        .flat_map(|f| f.to_vec())
        .collect();
    // The next request gets a fresh id again.
    let (next, third) = request(&mut client, Version::V1_2, "next", 0, true);
    assert!(next != reserved && next != meanwhile);
    let (ops, answers) = serve(&mut server, &[first, second, third].concat());
    assert_eq!(ops, ["meanwhile", "reserved", "next"]);
    // All three replies are matched to requests in flight.
    client.push(&answers);
    let mut ids = Vec::new();
    while let Some(Event::Reply { header, .. }) = client.poll_event().unwrap() {
        ids.push(header.request_id);
    }
    assert_eq!(ids, [meanwhile, reserved, next]);
}

/// One reply event as plain data, for comparing two ways of polling.
fn reply_seen(
    e: Result<Option<Event<'_>>, ConnectionError>,
) -> Option<(u32, ReplyStatus, Vec<u8>)> {
    match e.unwrap() {
        Some(Event::Reply {
            header,
            body,
            code_sets,
        }) => {
            let mut r = body.reader(code_sets);
            let mut rest = Vec::new();
            while r.remaining() > 0 {
                rest.push(r.read_octet().unwrap());
            }
            Some((header.request_id, header.reply_status, rest))
        }
        None => None,
        Some(other) => panic!("not a reply: {other:?}"),
    }
}

/// `poll_reply` gives what `poll_event` gives, in every version and byte order, for
/// replies whole or in pieces, with or without service contexts; a cancelled request's
/// reply is dropped by both, and a reply to no request fails both with MessageError.
#[test]
fn poll_reply_agrees_with_poll_event() {
    for v in [Version::V1_0, Version::V1_1, Version::V1_2] {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let mut fast = GiopConnection::new(settings(Role::Client, order));
            let mut general = GiopConnection::new(settings(Role::Client, order));
            let mut server = GiopConnection::new(settings(Role::Server, other(order)));
            let mut ids = Vec::new();
            let mut wire = Vec::new();
            for (i, op) in ["a", "b", "cancelled", "c"].into_iter().enumerate() {
                let (id, bytes) = request(&mut fast, v, op, i as u32, true);
                assert_eq!(request(&mut general, v, op, i as u32, true).0, id);
                ids.push(id);
                wire.extend(bytes);
            }
            assert!(fast.cancel(ids[2]) && general.cancel(ids[2]));
            let (_, answers) = serve(&mut server, &wire);
            // In two pieces, cut inside a reply.
            let cut = answers.len() / 2;
            for part in [&answers[..cut], &answers[cut..]] {
                fast.push(part);
                general.push(part);
            }
            for &id in ids.iter().filter(|&&id| id != ids[2]) {
                let want = reply_seen(general.poll_event()).expect("a reply");
                assert_eq!(want.0, id);
                let got = reply_seen(fast.poll_reply(id))
                    .unwrap_or_else(|| panic!("{v:?} {order:?}: no reply {id}"));
                assert_eq!(got, want, "{v:?} {order:?}");
            }
            assert!(fast.poll_reply(0).unwrap().is_none());
            assert_eq!(fast.in_flight().count(), 0);
        }
    }
    // In pieces: nothing until the whole reply is in.
    let mut c = GiopConnection::new(Settings::new(Role::Client));
    let mut s = GiopConnection::new(Settings::new(Role::Server));
    let (id, bytes) = request(&mut c, Version::V1_2, "x", 3, true);
    let (_, answer) = serve(&mut s, &bytes);
    for (i, b) in answer.iter().enumerate() {
        assert!(c.poll_reply(id).unwrap().is_none(), "after {i} bytes");
        c.push(&[*b]);
    }
    assert_eq!(reply_seen(c.poll_reply(id)).unwrap().0, id);
    // A reply to no request in flight: the connection fails and says MessageError.
    let mut c = GiopConnection::new(Settings::new(Role::Client));
    let (id, _) = request(&mut c, Version::V1_2, "x", 0, true);
    let mut elsewhere = GiopConnection::new(Settings::new(Role::Client));
    request(&mut elsewhere, Version::V1_2, "y", 0, true);
    let (other_id, bytes) = request(&mut elsewhere, Version::V1_2, "y", 0, true);
    assert_ne!(other_id, id);
    let (_, answer) = serve(&mut s, &bytes);
    c.push(&answer);
    assert!(matches!(
        c.poll_reply(id),
        Err(ConnectionError::UnknownRequestId { request_id }) if request_id == other_id
    ));
    assert!(c.poll_transmit().is_some());
    assert!(!c.is_open());
}

/// A request like the one before it (same key, operation and response flags) reuses its
/// header with the new id; any difference writes the header afresh: byte for byte what
/// the general path writes, whatever order keys, operations and flags come in.
#[test]
fn repeated_requests_reuse_the_header_byte_exact() {
    let keys = [key(), TargetAddress::Key(ObjectKey::from("another key"))];
    let calls: [(usize, &str, bool); 9] = [
        (0, "op", true),
        (0, "op", true),
        (0, "op", false),
        (0, "op", false),
        (1, "op", false),
        (1, "op", true),
        (1, "other", true),
        (0, "other", true),
        (0, "othe", true),
    ];
    for order in [ByteOrder::Big, ByteOrder::Little] {
        let mut general = GiopConnection::new(settings(Role::Client, order));
        let mut fused = GiopConnection::new(settings(Role::Client, order));
        let mut buffer = Vec::new();
        for round in 0..2 {
            for (i, &(k, op, twoway)) in calls.iter().enumerate() {
                let start =
                    RequestStart::new(Version::V1_2, CodeSets::UNICODE, &keys[k], op, twoway);
                let mut r = general.start_request(Vec::new(), &start).unwrap();
                r.body().write_ulong(i as u32);
                let id = r.request_id();
                let expect = general
                    .finish_request(r)
                    .unwrap()
                    .contiguous()
                    .unwrap()
                    .to_vec();
                let (got_id, out) = fused
                    .request(
                        &mut buffer,
                        Version::V1_2,
                        CodeSets::UNICODE,
                        &keys[k],
                        op,
                        twoway,
                        |w| {
                            w.write_ulong(i as u32);
                            Ok::<(), ()>(())
                        },
                    )
                    .unwrap();
                assert_eq!(got_id, id);
                assert_eq!(
                    out.contiguous().unwrap(),
                    expect,
                    "{order:?} round {round} call {i}"
                );
                buffer = out.into_buffer();
            }
        }
    }
}
