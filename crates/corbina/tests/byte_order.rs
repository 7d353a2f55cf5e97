//! `-ORBbyteOrder` (`OrbConfig::byte_order`): a Corbina client and a Corbina server writing
//! big-endian, byte for byte, against a hand-driven socket on the other end (which writes
//! the other order, so each side also reads what it does not write).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

use corbina::cdr::ByteOrder;
use corbina::config::Endpoint;
use corbina::giop::Ior;
use corbina::servant::{bad_operation, Servant, ServerRequest};
use corbina::{Orb, OrbConfig, SystemException};

/// One GIOP message off `s`: its 12-byte header and body.
fn read_message(s: &mut TcpStream) -> Vec<u8> {
    let mut m = vec![0u8; 12];
    s.read_exact(&mut m).expect("header");
    assert_eq!(&m[..4], b"GIOP");
    let size = if m[6] & 1 == 1 {
        u32::from_le_bytes(m[8..12].try_into().unwrap())
    } else {
        u32::from_be_bytes(m[8..12].try_into().unwrap())
    };
    m.resize(12 + size as usize, 0);
    s.read_exact(&mut m[12..]).expect("body");
    m
}

fn big_endian_client(fragment_size: Option<u32>) -> Orb {
    Orb::with_config(
        OrbConfig::default()
            .byte_order(ByteOrder::Big)
            .fragment_size(fragment_size),
    )
}

/// A GIOP 1.2 request from a big-endian client: header, request header, the code set
/// context's encapsulation and the arguments all big-endian; the little-endian reply
/// is read right.
#[test]
fn big_endian_client_request_byte_exact() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let peer = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let request = read_message(&mut s);
        // Reply, little-endian: id 0, NO_EXCEPTION, no contexts, then the long (8-aligned
        // body at GIOP 1.2: already at offset 24).
        let id = &request[12..16];
        let mut reply = b"GIOP\x01\x02\x01\x01\x10\x00\x00\x00".to_vec();
        reply.extend_from_slice(&[id[3], id[2], id[1], id[0]]);
        reply.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0x2a, 0, 0, 0]);
        s.write_all(&reply).unwrap();
        request
    });
    let orb = big_endian_client(None);
    let obj = orb
        .string_to_object(&format!("corbaloc::1.2@127.0.0.1:{port}/key"))
        .unwrap();
    let got: i32 = obj
        .invoke(
            "op",
            |w| {
                w.write_long(0x0102_0304);
                w.write_string("hi")
            },
            |r| r.read_long(),
            |_, _| Ok::<Option<SystemException>, _>(None),
        )
        .unwrap();
    assert_eq!(got, 42);
    let request = peer.join().unwrap();
    orb.destroy();
    #[rustfmt::skip]
    let want: Vec<u8> = [
        &b"GIOP\x01\x02"[..],
        &[0x00, 0x00], // flags: big-endian; Request
        &[0, 0, 0, 0x3f], // message size
        &[0, 0, 0, 2], // request id (a client's are even)
        &[0x03, 0, 0, 0], // response flags (twoway), reserved
        &[0, 0, 0, 0], &[0, 0, 0, 3], b"key", // KeyAddr (and padding), the key
        &[0], &[0, 0, 0, 3], b"op\0", // operation
        &[0], &[0, 0, 0, 1], // one service context
        &[0, 0, 0, 1], // CodeSets
        &[0, 0, 0, 0x0c], // its encapsulation: 12 octets
        &[0x00, 0, 0, 0], // big-endian, padding
        &[0x00, 0x01, 0x00, 0x01], // char: ISO 8859-1 (no code sets in a corbaloc)
        &[0x00, 0x01, 0x01, 0x09], // wchar: UTF-16
        &[0x01, 0x02, 0x03, 0x04], // the long (offset 64: 8-aligned)
        &[0, 0, 0, 3], b"hi\0", // the string
    ]
    .concat();
    assert_eq!(hex(&request), hex(&want));
}

/// Fragments from a big-endian client: the first message and every Fragment carry the
/// big-endian flag and big-endian sizes and request ids.
#[test]
fn big_endian_client_fragments() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let peer = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut messages = vec![read_message(&mut s)];
        while messages.last().unwrap()[6] & 2 != 0 {
            messages.push(read_message(&mut s));
        }
        let id = &messages[0][12..16];
        let mut reply = b"GIOP\x01\x02\x00\x01\x00\x00\x00\x0c".to_vec();
        reply.extend_from_slice(id);
        reply.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
        s.write_all(&reply).unwrap();
        messages
    });
    let orb = big_endian_client(Some(64));
    let obj = orb
        .string_to_object(&format!("corbaloc::1.2@127.0.0.1:{port}/key"))
        .unwrap();
    let text = "x".repeat(300);
    obj.invoke(
        "op",
        |w| w.write_string(&text),
        |_| Ok(()),
        |_, _| Ok::<Option<SystemException>, _>(None),
    )
    .unwrap();
    let messages = peer.join().unwrap();
    orb.destroy();
    assert!(messages.len() > 4, "{} messages", messages.len());
    let mut body = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        assert_eq!(m[6] & 1, 0, "message {i} is not big-endian");
        assert_eq!(m[7], if i == 0 { 0 } else { 7 }, "message {i}'s type");
        assert_eq!(
            u32::from_be_bytes(m[8..12].try_into().unwrap()) as usize,
            m.len() - 12
        );
        if i > 0 {
            // GIOP 1.2 fragments start with the request id.
            assert_eq!(m[12..16], messages[0][12..16]);
            body.extend_from_slice(&m[16..]);
        } else {
            body.extend_from_slice(&m[12..]);
        }
    }
    // The string, big-endian length first, inside the reassembled body.
    let mut needle = 301u32.to_be_bytes().to_vec();
    needle.extend_from_slice(text.as_bytes());
    assert!(body.windows(needle.len()).any(|w| w == needle));
}

/// Replies `arg + 1` to `inc(long)`.
struct Inc;

impl Servant for Inc {
    fn primary_interface(&self) -> &'static str {
        "IDL:t/Inc:1.0"
    }

    fn is_a(&self, id: &str) -> bool {
        id == "IDL:t/Inc:1.0"
    }

    fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        if req.operation() != "inc" {
            return Err(bad_operation());
        }
        let n = req.arguments().read_long()?;
        req.arguments_done()?;
        req.reply(move |w| {
            w.write_long(n.wrapping_add(1));
            Ok(())
        })
    }
}

/// A big-endian server answers a little-endian GIOP 1.2 request with a big-endian reply.
#[test]
fn big_endian_server_reply_byte_exact() {
    let orb = Orb::with_config(
        OrbConfig {
            endpoints: vec![Endpoint {
                host: "127.0.0.1".into(),
                port: 0,
            }],
            ..OrbConfig::default()
        }
        .byte_order(ByteOrder::Big),
    );
    let poa = orb.root_poa();
    let oid = poa.activate_object(Arc::new(Inc)).unwrap();
    let obj = poa.id_to_reference(&oid).unwrap();
    poa.the_poa_manager().activate().unwrap();
    let ior = Ior::from_stringified(&orb.object_to_string(&obj).unwrap()).unwrap();
    // The IOR's profile is written big-endian too.
    assert_eq!(ior.byte_order, ByteOrder::Big);
    let profile = ior.iiop_profiles().unwrap().remove(0);
    let key = profile.object_key.0.clone();
    let mut s = TcpStream::connect(("127.0.0.1", profile.port)).unwrap();
    // GIOP 1.2 Request, little-endian: id 5, twoway, KeyAddr, "inc", no contexts, 41.
    let mut body = vec![5, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0];
    body.extend_from_slice(&(key.len() as u32).to_le_bytes());
    body.extend_from_slice(&key);
    while body.len() % 4 != 0 {
        body.push(0);
    }
    body.extend_from_slice(&[4, 0, 0, 0]);
    body.extend_from_slice(b"inc\0");
    body.extend_from_slice(&[0, 0, 0, 0]);
    while (body.len() + 12) % 8 != 0 {
        body.push(0);
    }
    body.extend_from_slice(&41i32.to_le_bytes());
    let mut msg = b"GIOP\x01\x02\x01\x00".to_vec();
    msg.extend_from_slice(&(body.len() as u32).to_le_bytes());
    msg.extend_from_slice(&body);
    s.write_all(&msg).unwrap();
    let reply = read_message(&mut s);
    drop(s);
    orb.destroy();
    #[rustfmt::skip]
    let want: Vec<u8> = [
        &b"GIOP\x01\x02"[..],
        &[0x00, 0x01], // flags: big-endian; Reply
        &[0, 0, 0, 0x10], // message size
        &[0, 0, 0, 5], // request id
        &[0, 0, 0, 0], // NO_EXCEPTION
        &[0, 0, 0, 0], // no service contexts (the body is 8-aligned here)
        &[0, 0, 0, 42], // the long
    ]
    .concat();
    assert_eq!(hex(&reply), hex(&want));
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}
