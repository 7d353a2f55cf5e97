//! Property tests: every message type, IOR and URL round-trips in both byte orders, and no
//! decoder panics on arbitrary input.

use corbina_cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter, CodeSets};
use corbina_giop::*;
use proptest::prelude::*;

fn order() -> impl Strategy<Value = ByteOrder> {
    prop_oneof![Just(ByteOrder::Big), Just(ByteOrder::Little)]
}

fn version() -> impl Strategy<Value = Version> {
    prop_oneof![
        Just(Version::V1_0),
        Just(Version::V1_1),
        Just(Version::V1_2)
    ]
}

fn ident() -> impl Strategy<Value = String> {
    "[a-zA-Z_][a-zA-Z0-9_]{0,20}"
}

fn contexts() -> impl Strategy<Value = ServiceContextList> {
    prop::collection::vec(
        (any::<u32>(), prop::collection::vec(any::<u8>(), 0..20)),
        0..4,
    )
    .prop_map(|v| {
        ServiceContextList(
            v.into_iter()
                .map(|(context_id, context_data)| ServiceContext {
                    context_id,
                    context_data,
                })
                .collect(),
        )
    })
}

fn profile() -> impl Strategy<Value = TaggedProfile> {
    (any::<u32>(), prop::collection::vec(any::<u8>(), 0..24))
        .prop_map(|(tag, profile_data)| TaggedProfile { tag, profile_data })
}

fn ior() -> impl Strategy<Value = Ior> {
    (
        "[ -~]{0,30}",
        prop::collection::vec(profile(), 0..3),
        order(),
    )
        .prop_map(|(type_id, profiles, byte_order)| Ior {
            type_id,
            profiles,
            byte_order,
        })
}

fn target(minor: u8) -> BoxedStrategy<TargetAddress> {
    let key =
        prop::collection::vec(any::<u8>(), 0..20).prop_map(|k| TargetAddress::Key(ObjectKey(k)));
    if minor < 2 {
        return key.boxed();
    }
    prop_oneof![
        key,
        profile().prop_map(TargetAddress::Profile),
        (any::<u32>(), ior()).prop_map(|(selected_profile_index, ior)| {
            TargetAddress::Reference(IorAddressingInfo {
                selected_profile_index,
                ior,
            })
        }),
    ]
    .boxed()
}

fn request() -> impl Strategy<Value = (Version, RequestHeader)> {
    version().prop_flat_map(|v| {
        let flags = if v.minor < 2 {
            prop_oneof![Just(0u8), Just(3u8)].boxed()
        } else {
            any::<u8>().boxed()
        };
        let principal = if v.minor < 2 {
            prop::collection::vec(any::<u8>(), 0..8).boxed()
        } else {
            Just(Vec::new()).boxed()
        };
        (
            Just(v),
            any::<u32>(),
            flags,
            target(v.minor),
            ident(),
            contexts(),
            principal,
        )
            .prop_map(
                |(
                    v,
                    request_id,
                    response_flags,
                    target,
                    operation,
                    service_context,
                    requesting_principal,
                )| {
                    (
                        v,
                        RequestHeader {
                            request_id,
                            response_flags,
                            target,
                            operation,
                            service_context,
                            requesting_principal,
                        },
                    )
                },
            )
    })
}

/// Forgets the byte order of IORs nested in a target (it follows the message).
fn normalise(t: &mut TargetAddress, o: ByteOrder) {
    if let TargetAddress::Reference(info) = t {
        info.ior.byte_order = o;
    }
}

fn reply_status() -> impl Strategy<Value = ReplyStatus> {
    (0u32..6).prop_map(|v| ReplyStatus::from_value(v).unwrap())
}

proptest! {
    #[test]
    fn request_round_trip((v, mut h) in request(), o in order(), body in prop::collection::vec(any::<u8>(), 0..40)) {
        let mut mw = MessageWriter::request(v, o, CodeSets::DEFAULT, &h).unwrap();
        if !body.is_empty() {
            mw.body().write_bytes(&body);
        }
        let bytes = mw.finish_bytes().unwrap();
        let m = Message::from_bytes(bytes).unwrap();
        let GiopMessage::Request { header, body: b } = m.decode().unwrap() else { panic!() };
        normalise(&mut h.target, o);
        prop_assert_eq!(header, h);
        prop_assert_eq!(b.as_bytes(), &body[..]);
        if v.minor >= 2 && !body.is_empty() {
            prop_assert_eq!(b.range().start % 8, 0);
        }
    }

    #[test]
    fn reply_round_trip(v in version(), o in order(), id in any::<u32>(), st in reply_status(), sc in contexts(), body in prop::collection::vec(any::<u8>(), 0..40)) {
        let h = ReplyHeader { request_id: id, reply_status: st, service_context: sc };
        let mut mw = MessageWriter::reply(v, o, CodeSets::DEFAULT, &h).unwrap();
        if !body.is_empty() {
            mw.body().write_bytes(&body);
        }
        let m = Message::from_bytes(mw.finish_bytes().unwrap()).unwrap();
        let GiopMessage::Reply { header, body: b } = m.decode().unwrap() else { panic!() };
        prop_assert_eq!(header, h);
        prop_assert_eq!(b.as_bytes(), &body[..]);
    }

    #[test]
    fn locate_round_trip(v in version(), o in order(), id in any::<u32>(), key in prop::collection::vec(any::<u8>(), 0..20), st in 0u32..6, fwd in ior()) {
        let lr = LocateRequestHeader { request_id: id, target: TargetAddress::Key(ObjectKey(key)) };
        let m = Message::from_bytes(MessageWriter::locate_request(v, o, &lr).unwrap().finish_bytes().unwrap()).unwrap();
        prop_assert_eq!(m.decode().unwrap(), GiopMessage::LocateRequest(lr));
        let h = LocateReplyHeader { request_id: id, locate_status: LocateStatus::from_value(st).unwrap() };
        let mut mw = MessageWriter::locate_reply(v, o, CodeSets::DEFAULT, &h).unwrap();
        fwd.encode(mw.body()).unwrap();
        let m = Message::from_bytes(mw.finish_bytes().unwrap()).unwrap();
        let GiopMessage::LocateReply { header, body } = m.decode().unwrap() else { panic!() };
        prop_assert_eq!(header, h);
        let mut r = body.reader(CodeSets::DEFAULT);
        let mut back = Ior::decode(&mut r).unwrap();
        r.expect_end().unwrap();
        back.byte_order = fwd.byte_order;
        prop_assert_eq!(back, fwd);
    }

    #[test]
    fn small_messages_round_trip(v in version(), o in order(), id in any::<u32>(), more in any::<bool>(), data in prop::collection::vec(any::<u8>(), 0..20)) {
        let c = CancelRequestHeader { request_id: id };
        let m = Message::from_bytes(MessageWriter::cancel_request(v, o, &c).unwrap().finish_bytes().unwrap()).unwrap();
        prop_assert_eq!(m.decode().unwrap(), GiopMessage::CancelRequest(c));
        let close = Message::from_bytes(close_connection(v, o).to_vec()).unwrap();
        prop_assert_eq!(close.decode().unwrap(), GiopMessage::CloseConnection);
        let error = Message::from_bytes(message_error(v, o).to_vec()).unwrap();
        prop_assert_eq!(error.decode().unwrap(), GiopMessage::MessageError);
        if v.minor >= 1 {
            let f = FragmentHeader { request_id: (v.minor >= 2).then_some(id) };
            let (p, n) = f.prefix(v, o, more, data.len());
            let mut b = p[..n].to_vec();
            b.extend_from_slice(&data);
            let m = Message::from_bytes(b).unwrap();
            prop_assert_eq!(m.header().more_fragments, more);
            let GiopMessage::Fragment { header, body } = m.decode().unwrap() else { panic!() };
            prop_assert_eq!(header, f);
            prop_assert_eq!(body.as_bytes(), &data[..]);
        }
    }

    #[test]
    fn system_exception_round_trip(o in order(), k in 0usize..39, minor in any::<u32>(), c in 0u32..3) {
        let e = SystemException::new(SystemExceptionKind::ALL[k], minor)
            .completed(CompletionStatus::from_value(c).unwrap());
        let mut w = CdrWriter::with_byte_order(o, CdrContext::GIOP_1_2);
        e.to_body().encode(&mut w).unwrap();
        let bytes = w.into_bytes();
        let mut r = CdrReader::new(&bytes, o, CdrContext::GIOP_1_2);
        prop_assert_eq!(SystemExceptionBody::decode(&mut r).unwrap().to_exception(), e);
    }

    #[test]
    fn ior_round_trip(i in ior()) {
        let s = i.to_string();
        prop_assert_eq!(s.parse::<Ior>().unwrap(), i.clone());
        let upper = format!("IOR:{}", s[4..].to_uppercase());
        prop_assert_eq!(upper.parse::<Ior>().unwrap(), i);
    }

    #[test]
    fn iiop_profile_round_trip(o in order(), minor in 0u8..3, host in "[a-z0-9.-]{0,20}", port in any::<u16>(), key in prop::collection::vec(any::<u8>(), 0..20), comps in prop::collection::vec((any::<u32>(), prop::collection::vec(any::<u8>(), 0..12)), 0..4)) {
        let p = IiopProfile {
            version: Version { major: 1, minor },
            host,
            port,
            object_key: ObjectKey(key),
            components: if minor == 0 { vec![] } else {
                comps.into_iter().map(|(tag, component_data)| TaggedComponent { tag, component_data }).collect()
            },
            byte_order: o,
        };
        let t = p.to_tagged().unwrap();
        prop_assert_eq!(IiopProfile::from_tagged(&t).unwrap(), p);
    }

    #[test]
    fn corbaloc_round_trip(
        addrs in prop::collection::vec(("[a-z0-9][a-z0-9.-]{0,15}|[0-9a-f]{0,4}:[0-9a-f:]{0,10}", any::<u16>(), prop::option::of((0u8..3, 0u8..5))), 1..4),
        key in prop::collection::vec(any::<u8>(), 0..30),
        name in "[ -~é]{0,20}",
    ) {
        let addresses: Vec<ObjAddr> = addrs.into_iter().map(|(host, port, v)| ObjAddr::Iiop(IiopAddress {
            version: v.map(|(major, minor)| Version { major, minor }),
            host,
            port,
        })).collect();
        let loc = Corbaloc { addresses, key: ObjectKey(key) };
        prop_assert_eq!(Corbaloc::parse(&loc.to_string()).unwrap(), loc.clone());
        if !loc.key.0.is_empty() {
            let n = Corbaname { corbaloc: loc, name };
            prop_assert_eq!(Corbaname::parse(&n.to_string()).unwrap(), n);
        }
    }

    #[test]
    fn fragment_then_reassemble(v in 1u8..3, o in order(), max in 32usize..300, body in prop::collection::vec(any::<u8>(), 0..2000)) {
        let v = Version { major: 1, minor: v };
        let h = RequestHeader::new(9, ObjectKey::from("key"), "op");
        let mut mw = MessageWriter::request(v, o, CodeSets::DEFAULT, &h).unwrap();
        if !body.is_empty() {
            mw.body().write_bytes(&body);
        }
        let whole = mw.finish_bytes().unwrap();
        let parts = fragment_message(&[&whole], max).unwrap();
        let mut r = Reassembler::new(1 << 20);
        let mut out = None;
        for p in &parts {
            prop_assert!(p.len() <= max);
            if let Some(m) = r.push(Message::from_bytes(p.to_vec()).unwrap()).unwrap() {
                prop_assert!(out.is_none());
                out = Some(m);
            }
        }
        let out = out.unwrap();
        prop_assert_eq!(out.bytes(), &whole[..]);
        prop_assert_eq!(r.held_bytes(), 0);
    }

    #[test]
    fn connections_never_panic(data in prop::collection::vec(any::<u8>(), 0..200), chunk in 1usize..40, valid_prefix in any::<bool>(), server in any::<bool>()) {
        let mut bytes = if valid_prefix { b"GIOP\x01".to_vec() } else { Vec::new() };
        bytes.extend_from_slice(&data);
        let role = if server { Role::Server } else { Role::Client };
        let mut c = GiopConnection::new(Settings { max_message_size: 1000, reassembly_limit: 500, ..Settings::new(role) });
        for piece in bytes.chunks(chunk) {
            c.push(piece);
            while let Ok(Some(ev)) = c.poll_event() {
                if let Event::Request { body, reply, .. } = ev {
                    let _ = body.reader(reply.code_sets).read_string();
                }
            }
            while let Some(m) = c.poll_transmit() {
                prop_assert!(decode_message(m.as_bytes(), &[]).is_ok());
            }
        }
    }

    #[test]
    fn decoders_never_panic(mut data in prop::collection::vec(any::<u8>(), 12..120), v in 0u8..3, t in 0u8..8, flags in any::<u8>()) {
        data[..4].copy_from_slice(b"GIOP");
        data[4] = 1;
        data[5] = v;
        data[6] = flags;
        data[7] = t;
        let size = (data.len() - 12) as u32;
        let sb = if flags & 1 == 1 { size.to_le_bytes() } else { size.to_be_bytes() };
        data[8..12].copy_from_slice(&sb);
        if let Ok(m) = Message::from_bytes(data) {
            if let Ok(GiopMessage::Request { body, .. } | GiopMessage::Reply { body, .. }) = m.decode() {
                let mut rd = body.reader(CodeSets::UNICODE);
                let _ = rd.read_string();
            }
            let mut r = Reassembler::new(200);
            let _ = r.push(m.clone());
            let _ = r.push(m);
        }
    }

    #[test]
    fn strings_never_panic(s in "\\PC{0,80}", hex in "[0-9a-fA-F]{0,120}") {
        let _ = Ior::from_stringified(&s);
        let _ = Ior::from_stringified(&format!("IOR:{hex}"));
        let _ = ObjectUrl::parse(&s);
        let _ = ObjectUrl::parse(&format!("corbaloc:{s}"));
        let _ = ObjectUrl::parse(&format!("corbaname:{s}"));
        let _ = Corbaloc::parse(&format!("corbaloc:iiop:{s}"));
    }

    #[test]
    fn profile_bodies_never_panic(data in prop::collection::vec(any::<u8>(), 0..80)) {
        if let Ok(p) = IiopProfile::decode_body(&data) {
            let _ = p.code_sets();
            let _ = p.orb_type();
            let _ = p.alternate_addresses();
        }
        let sc = ServiceContext { context_id: 1, context_data: data.clone() };
        let _ = sc.decode_known();
        let sc = ServiceContext { context_id: 5, context_data: data };
        let _ = sc.decode_known();
    }
}
