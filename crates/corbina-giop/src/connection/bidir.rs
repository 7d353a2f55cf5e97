//! The rules of bidirectional GIOP (CORBA 3 §15.8) that concern the bytes: it exists from
//! GIOP 1.2 on, and a client offers it with a `BI_DIR_IIOP` service context listing the
//! addresses its objects are published at (its listen points). A BI_DIR_IIOP context on an
//! earlier version is ignored, and none is sent on one. Whether an offer is accepted, and
//! what it routes, is the runtime's decision.

use corbina_cdr::ByteOrder;

use crate::error::GiopError;
use crate::header::Version;
use crate::service_context::{ListenPoint, ServiceContext, ServiceContextsView};

/// Whether a connection of this GIOP version can be bidirectional.
pub fn bidir_supported(version: Version) -> bool {
    version.major == 1 && version.minor >= 2
}

/// The listen points a received Request of `version` offers for calls back over its
/// connection, if it offers any. A malformed context is an error (the request's sender
/// is not speaking GIOP).
pub fn bidir_offer(
    version: Version,
    contexts: &ServiceContextsView<'_>,
) -> Result<Option<Vec<ListenPoint>>, GiopError> {
    if !bidir_supported(version) {
        return Ok(None);
    }
    contexts.bi_dir_iiop()
}

/// The BI_DIR_IIOP context to send on a Request of `version` offering `points`; `None`
/// below GIOP 1.2 or without points.
pub fn bidir_context(
    version: Version,
    points: &[ListenPoint],
    order: ByteOrder,
) -> Result<Option<ServiceContext>, GiopError> {
    if !bidir_supported(version) || points.is_empty() {
        return Ok(None);
    }
    ServiceContext::bi_dir_iiop(points, order).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::{Event, GiopConnection, RequestStart, Role, Settings};
    use crate::service_context::ServiceContextList;
    use crate::{ObjectKey, TargetAddress};
    use corbina_cdr::CodeSets;

    fn points() -> Vec<ListenPoint> {
        vec![ListenPoint {
            host: "192.0.2.1".into(),
            port: 9,
        }]
    }

    /// A request with `contexts`, as the server role receives it.
    fn offer_received(version: Version, contexts: &ServiceContextList) -> Option<Vec<ListenPoint>> {
        let mut client = GiopConnection::new(Settings::new(Role::Client));
        let mut server = GiopConnection::new(Settings::new(Role::Server));
        let target = TargetAddress::Key(ObjectKey::from("k"));
        let req = client
            .start_request(
                Vec::new(),
                &RequestStart {
                    contexts,
                    ..RequestStart::new(version, CodeSets::UNICODE, &target, "op", true)
                },
            )
            .unwrap();
        let out = client.finish_request(req).unwrap();
        server.push(out.contiguous().unwrap());
        let Some(Event::Request { header, reply, .. }) = server.poll_event().unwrap() else {
            panic!("no request")
        };
        bidir_offer(reply.version, &header.service_context).unwrap()
    }

    #[test]
    fn the_context_is_exact_and_travels_at_1_2_only() {
        let sc = bidir_context(Version::V1_2, &points(), ByteOrder::Little)
            .unwrap()
            .unwrap();
        // Encapsulation: byte order, 3 padding, count 1, string length 10 "192.0.2.1\0"
        // (ending at offset 22: the port needs no padding), port 9.
        let mut expected = vec![1u8, 0, 0, 0, 1, 0, 0, 0, 10, 0, 0, 0];
        expected.extend_from_slice(b"192.0.2.1\0");
        expected.extend_from_slice(&[9, 0]);
        assert_eq!(sc.context_id, 5);
        assert_eq!(sc.context_data, expected);
        assert!(bidir_context(Version::V1_1, &points(), ByteOrder::Little)
            .unwrap()
            .is_none());
        assert!(bidir_context(Version::V1_2, &[], ByteOrder::Little)
            .unwrap()
            .is_none());

        let list = ServiceContextList(vec![sc]);
        assert_eq!(offer_received(Version::V1_2, &list), Some(points()));
        // The same context on a GIOP 1.1 request is not an offer.
        assert_eq!(offer_received(Version::V1_1, &list), None);
        assert_eq!(
            offer_received(Version::V1_2, &ServiceContextList::default()),
            None
        );
    }

    #[test]
    fn a_hostile_context_is_an_error_not_an_allocation() {
        // A count of 2^31 listen points in 8 bytes of data.
        let list = ServiceContextList(vec![ServiceContext {
            context_id: 5,
            context_data: vec![1, 0, 0, 0, 0, 0, 0, 0x80],
        }]);
        let mut client = GiopConnection::new(Settings::new(Role::Client));
        let mut server = GiopConnection::new(Settings::new(Role::Server));
        let target = TargetAddress::Key(ObjectKey::from("k"));
        let req = client
            .start_request(
                Vec::new(),
                &RequestStart {
                    contexts: &list,
                    ..RequestStart::new(Version::V1_2, CodeSets::UNICODE, &target, "op", true)
                },
            )
            .unwrap();
        let out = client.finish_request(req).unwrap();
        server.push(out.contiguous().unwrap());
        let Some(Event::Request { header, reply, .. }) = server.poll_event().unwrap() else {
            panic!("no request")
        };
        assert!(bidir_offer(reply.version, &header.service_context).is_err());
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// omniORB 4.2.5's first Request on a bidirectional connection (`ping`, with CodeSets and
    /// BI_DIR_IIOP offering two listening endpoints, one IPv6 without brackets, and the
    /// published one), captured on loopback: the offer decodes as omniORB sent it.
    #[test]
    fn omniorbs_offer_decodes() {
        let wire = hex(concat!(
            "47494f50010201008800000004000000030000000000000014000000ff6269646972fe0196066b01",
            "00643300000000000500000070696e6700203d2002000000010000000c0000000100000001000100",
            "09010100050000003800000001000000030000000a0000003139322e302e322e3200efe508000000",
            "666430303a3a3200efe500000a0000003132372e302e302e31000900"
        ));
        let mut server = GiopConnection::new(Settings::new(Role::Server));
        server.push(&wire);
        let Some(Event::Request { header, reply, .. }) = server.poll_event().unwrap() else {
            panic!("no request")
        };
        assert_eq!(header.operation, "ping");
        assert_eq!(header.request_id, 4);
        let point = |host: &str, port| ListenPoint {
            host: host.into(),
            port,
        };
        assert_eq!(
            bidir_offer(reply.version, &header.service_context).unwrap(),
            Some(vec![
                point("192.0.2.2", 58863),
                point("fd00::2", 58863),
                point("127.0.0.1", 9)
            ])
        );
    }

    /// omniORB's first call back on the connection its client opened (`notify(1)`, odd
    /// request id 5, no service contexts, garbage padding) is a request to the client end
    /// once the connection is bidirectional, and the reply is the bytes omniORB's own
    /// client sent.
    #[test]
    fn omniorbs_call_back_is_served_and_answered_byte_exactly() {
        let wire = hex(concat!(
            "47494f50010201003800000005000000030000000000000014000000ff6269646972fe0296066b01",
            "00645e0000000000070000006e6f7469667900630000000001000000"
        ));
        let mut client = GiopConnection::new(Settings {
            byte_order: ByteOrder::Little,
            ..Settings::new(Role::Client)
        });
        // Not bidirectional: a Request to a client is a protocol error.
        client.push(&wire);
        assert!(client.poll_event().is_err());

        let mut client = GiopConnection::new(Settings {
            byte_order: ByteOrder::Little,
            bidirectional: true,
            ..Settings::new(Role::Client)
        });
        client.push(&wire);
        let Some(Event::Request {
            header,
            body,
            reply,
        }) = client.poll_event().unwrap()
        else {
            panic!("no request")
        };
        assert_eq!((header.request_id, &*header.operation), (5, "notify"));
        assert!(header.service_context.is_empty());
        let n = body.reader(reply.code_sets).read_long().unwrap();
        assert_eq!(n, 1);
        let mut w = reply
            .start_reply(Vec::new(), crate::ReplyStatus::NoException)
            .unwrap();
        w.body().write_long(n * 2);
        let out = reply.finish_reply(w).unwrap();
        assert_eq!(
            out.contiguous().unwrap(),
            hex("47494f50010201011000000005000000000000000000000002000000")
        );
    }
}
