//! Byte-exact tests against real GIOP messages captured between omniORB 4.2.5 and JacORB 3.9
//! (see tests/vectors/README.md): decode every header, re-encode it, decode the bodies.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use corbina_cdr::{ByteOrder, CdrReader, CodeSets};
use corbina_giop::{
    FragmentHeader, GiopMessage, GiopMessageView, LocateRequestHeader, Message, MessageWriter,
    MsgType, Reassembler, ReplyStatus, SystemExceptionBody, SystemExceptionKind,
};
use serde_json::Value;

const DIRS: [&str; 6] = [
    "omniorb-to-jacorb/giop1.0",
    "omniorb-to-jacorb/giop1.1",
    "omniorb-to-jacorb/giop1.2",
    "jacorb-to-omniorb/giop1.0",
    "jacorb-to-omniorb/giop1.1",
    "jacorb-to-omniorb/giop1.2",
];

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors")
}

fn load(dir: &str) -> Vec<(Value, Vec<u8>)> {
    let base = vectors().join(dir);
    let index = std::fs::read_to_string(base.join("index.jsonl")).unwrap();
    index
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let hex: String = std::fs::read_to_string(base.join(v["file"].as_str().unwrap()))
                .unwrap()
                .split_whitespace()
                .collect();
            (v, hex::decode(hex).unwrap())
        })
        .collect()
}

fn type_name(t: MsgType) -> &'static str {
    match t {
        MsgType::Request => "Request",
        MsgType::Reply => "Reply",
        MsgType::CancelRequest => "CancelRequest",
        MsgType::LocateRequest => "LocateRequest",
        MsgType::LocateReply => "LocateReply",
        MsgType::CloseConnection => "CloseConnection",
        MsgType::MessageError => "MessageError",
        MsgType::Fragment => "Fragment",
    }
}

fn order_name(o: ByteOrder) -> &'static str {
    match o {
        ByteOrder::Big => "big",
        ByteOrder::Little => "little",
    }
}

fn check_contexts(v: &Value, list: &corbina_giop::ServiceContextList, file: &str) {
    let expected = v["service_contexts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(list.len(), expected.len(), "{file}: context count");
    for (sc, e) in list.0.iter().zip(&expected) {
        assert_eq!(
            u64::from(sc.context_id),
            e["id"].as_u64().unwrap(),
            "{file}"
        );
        assert_eq!(
            sc.context_data.len() as u64,
            e["len"].as_u64().unwrap(),
            "{file}"
        );
        assert_eq!(
            hex::encode(&sc.context_data),
            e["data_hex"].as_str().unwrap(),
            "{file}"
        );
        if sc.context_id == 1 {
            let cs = list.code_sets().unwrap().unwrap();
            assert_eq!(cs.char_data.name(), e["char"].as_str(), "{file}");
            assert_eq!(cs.wchar_data.name(), e["wchar"].as_str(), "{file}");
        }
    }
}

/// Re-encodes a decoded message (header, type header, body bytes copied) in its own order.
fn re_encode(m: &Message) -> Vec<u8> {
    let h = *m.header();
    let (v, o) = (h.version, h.byte_order);
    let mut out = match m.decode().unwrap() {
        GiopMessage::Request { header, body } => {
            let mut mw = MessageWriter::request(v, o, CodeSets::DEFAULT, &header).unwrap();
            if !body.is_empty() {
                mw.body().write_bytes(body.as_bytes());
            }
            mw.finish_bytes().unwrap()
        }
        GiopMessage::Reply { header, body } => {
            let mut mw = MessageWriter::reply(v, o, CodeSets::DEFAULT, &header).unwrap();
            if !body.is_empty() {
                mw.body().write_bytes(body.as_bytes());
            }
            mw.finish_bytes().unwrap()
        }
        GiopMessage::LocateRequest(lr) => {
            let lr: LocateRequestHeader = lr;
            MessageWriter::locate_request(v, o, &lr)
                .unwrap()
                .finish_bytes()
                .unwrap()
        }
        GiopMessage::LocateReply { header, body } => {
            let mut mw = MessageWriter::locate_reply(v, o, CodeSets::DEFAULT, &header).unwrap();
            mw.body().write_bytes(body.as_bytes());
            mw.finish_bytes().unwrap()
        }
        GiopMessage::CancelRequest(c) => MessageWriter::cancel_request(v, o, &c)
            .unwrap()
            .finish_bytes()
            .unwrap(),
        GiopMessage::CloseConnection => corbina_giop::close_connection(v, o).to_vec(),
        GiopMessage::MessageError => corbina_giop::message_error(v, o).to_vec(),
        GiopMessage::Fragment { header, body } => {
            let f: FragmentHeader = header;
            let (p, n) = f.prefix(v, o, h.more_fragments, body.len());
            let mut b = p[..n].to_vec();
            b.extend_from_slice(body.as_bytes());
            b
        }
    };
    if h.more_fragments {
        out[6] |= 2;
    }
    out
}

fn latin1(s: &str) -> Vec<u8> {
    s.chars().map(|c| c as u32 as u8).collect()
}

/// Decodes a complete body by operation and checks it against the description.
fn check_body(op: &str, msg: &Message, desc: &str, file: &str) -> bool {
    let decoded = msg.decode().unwrap();
    let (is_request, status, body) = match decoded {
        GiopMessage::Request { body, .. } => (true, None, body),
        GiopMessage::Reply { header, body } => (false, Some(header.reply_status), body),
        _ => return false,
    };
    let mut r: CdrReader<'_> = body.reader(CodeSets::UNICODE);
    match status {
        Some(ReplyStatus::SystemException) => {
            let e = SystemExceptionBody::decode(&mut r).unwrap();
            let ex = e.to_exception();
            assert_eq!(ex.kind, SystemExceptionKind::NoImplement, "{file}");
            assert!(
                desc.contains(&format!("repository id {})", e.repository_id)),
                "{file}"
            );
            assert!(desc.contains("minor=0x0, completed=COMPLETED_NO"), "{file}");
            assert_eq!(
                ex.to_string(),
                "NO_IMPLEMENT (minor 0x00000000, completed NO)"
            );
        }
        Some(ReplyStatus::UserException) => {
            assert_eq!(r.read_string().unwrap(), "IDL:BenchError:1.0", "{file}");
            assert_eq!(r.read_long().unwrap(), 7, "{file}");
            assert_eq!(r.read_string().unwrap(), "requested", "{file}");
            assert!(
                desc.starts_with("BenchError{code=7, reason=\"requested\"}"),
                "{file}"
            );
        }
        Some(ReplyStatus::NoException) => match op {
            "echo" => {
                let got = r.read_string_bytes().unwrap();
                let want = if desc.contains("×100000") {
                    vec![b'x'; 100_000]
                } else if desc.contains("U+FFFD") {
                    "hello, \u{fffd}t\u{fffd} / 0123456789".as_bytes().to_vec()
                } else {
                    "hello, été / 0123456789".as_bytes().to_vec()
                };
                assert_eq!(got, want, "{file}");
            }
            "stop_timer" => {
                let n: u64 = desc["returns ".len()..]
                    .split(' ')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert_eq!(r.read_ulonglong().unwrap(), n, "{file}");
            }
            "_non_existent" => assert!(!r.read_boolean().unwrap(), "{file}"),
            _ => assert!(desc.starts_with("void"), "{file}: {desc}"),
        },
        Some(other) => panic!("{file}: unexpected status {other:?}"),
        None => {
            assert!(is_request);
            let base = op.trim_end_matches("_oneway");
            let n = if desc.contains("empty") { 0 } else { 1000 };
            match base {
                "echo" => {
                    let got = r.read_string_bytes().unwrap();
                    let want = if desc.contains("×100000") {
                        vec![b'x'; 100_000]
                    } else if desc.contains("ISO-8859-1") {
                        latin1("hello, été / 0123456789")
                    } else {
                        "hello, été / 0123456789".as_bytes().to_vec()
                    };
                    assert_eq!(got, want, "{file}");
                }
                "fail" => {
                    let code = r.read_long().unwrap();
                    assert_eq!(desc, format!("fail({code})"), "{file}");
                }
                "send_octets" => {
                    let s = r.read_octet_seq().unwrap();
                    assert_eq!(s, (0..n).map(|i| i as u8).collect::<Vec<_>>(), "{file}");
                }
                "send_chars" => {
                    let s = r.read_octet_seq().unwrap();
                    let want: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
                    assert_eq!(s, want, "{file}");
                }
                "send_shorts" => {
                    let s = r.read_primitive_seq::<i16>().unwrap();
                    assert_eq!(s, (0..n).map(|i| i as i16).collect::<Vec<_>>(), "{file}");
                }
                "send_longs" => {
                    let s = r.read_primitive_seq::<i32>().unwrap();
                    assert_eq!(s, (0..n).map(|i| i as i32).collect::<Vec<_>>(), "{file}");
                }
                "send_doubles" => {
                    let s = r.read_primitive_seq::<f64>().unwrap();
                    assert_eq!(
                        s,
                        (0..n).map(|i| i as f64 * 0.25).collect::<Vec<_>>(),
                        "{file}"
                    );
                }
                "send_structs" => {
                    let count = r.read_length(16).unwrap();
                    assert_eq!(count, n, "{file}");
                    for i in 0..count {
                        assert_eq!(r.read_short().unwrap(), i as i16, "{file} s[{i}]");
                        assert_eq!(r.read_char().unwrap(), b'q', "{file} c[{i}]");
                        assert_eq!(r.read_long().unwrap(), i as i32, "{file} l[{i}]");
                        assert_eq!(r.read_octet().unwrap(), i as u8, "{file} o[{i}]");
                        assert_eq!(r.read_double().unwrap(), i as f64 * 0.5, "{file} d[{i}]");
                    }
                }
                "ping" | "start_timer" | "stop_timer" | "_non_existent" => {}
                other => panic!("{file}: no decoder for {other}"),
            }
        }
    }
    r.expect_end().unwrap_or_else(|e| panic!("{file}: {e}"));
    true
}

#[test]
fn every_vector_decodes_and_re_encodes() {
    let mut checked = 0;
    let mut exact = 0;
    let mut bodies = HashSet::new();
    for dir in DIRS {
        let entries = load(dir);
        let present: HashSet<u64> = entries
            .iter()
            .map(|(v, _)| v["seq"].as_u64().unwrap())
            .collect();
        let mut reassemblers: HashMap<(u64, String), Reassembler> = HashMap::new();
        let mut ops: HashMap<(u64, String), String> = HashMap::new();
        for (v, bytes) in &entries {
            let file = format!("{dir}/{}", v["file"].as_str().unwrap());
            assert_eq!(bytes.len() as u64, v["size"].as_u64().unwrap(), "{file}");
            let m = Message::from_bytes(bytes.clone()).unwrap();
            let h = *m.header();
            assert_eq!(
                format!("{}", h.version),
                v["giop"].as_str().unwrap(),
                "{file}"
            );
            assert_eq!(type_name(h.msg_type), v["type"].as_str().unwrap(), "{file}");
            assert_eq!(
                order_name(h.byte_order),
                v["byte_order"].as_str().unwrap(),
                "{file}"
            );
            assert_eq!(
                u64::from(h.message_size),
                v["message_size"].as_u64().unwrap(),
                "{file}"
            );
            assert_eq!(
                h.more_fragments,
                v["more_fragments"].as_bool().unwrap(),
                "{file}"
            );
            let rid = v["request_id"].as_u64();
            match m.decode().unwrap_or_else(|e| panic!("{file}: {e}")) {
                GiopMessage::Request { header, .. } => {
                    assert_eq!(Some(u64::from(header.request_id)), rid, "{file}");
                    assert_eq!(
                        Some(header.operation.as_str()),
                        v["operation"].as_str(),
                        "{file}"
                    );
                    let key = header.target.object_key().unwrap();
                    assert_eq!(key.to_hex(), v["object_key"].as_str().unwrap(), "{file}");
                    if h.version.minor >= 2 {
                        assert_eq!(
                            u64::from(header.response_flags),
                            v["response_flags"].as_u64().unwrap(),
                            "{file}"
                        );
                    } else {
                        assert_eq!(
                            header.response_expected(),
                            v["response_expected"].as_bool().unwrap(),
                            "{file}"
                        );
                    }
                    check_contexts(v, &header.service_context, &file);
                }
                GiopMessage::Reply { header, .. } => {
                    assert_eq!(Some(u64::from(header.request_id)), rid, "{file}");
                    assert_eq!(
                        header.reply_status.name(),
                        v["reply_status"].as_str().unwrap()
                    );
                    check_contexts(v, &header.service_context, &file);
                }
                GiopMessage::LocateRequest(lr) => {
                    assert_eq!(Some(u64::from(lr.request_id)), rid, "{file}");
                    let key = lr.target.object_key().unwrap();
                    assert_eq!(key.to_hex(), v["object_key"].as_str().unwrap(), "{file}");
                }
                GiopMessage::LocateReply { header, body } => {
                    assert_eq!(Some(u64::from(header.request_id)), rid, "{file}");
                    assert_eq!(
                        header.locate_status.name(),
                        v["reply_status"].as_str().unwrap()
                    );
                    assert!(body.is_empty());
                }
                GiopMessage::Fragment { header, .. } => {
                    assert_eq!(header.request_id.map(u64::from), rid, "{file}");
                }
                GiopMessage::CloseConnection => {}
                other => panic!("{file}: unexpected {other:?}"),
            }

            // Re-encode: byte-exact, except alignment gaps the sender filled with junk.
            let again = re_encode(&m);
            assert_eq!(again.len(), bytes.len(), "{file}");
            let mut diffs: Vec<usize> =
                (0..bytes.len()).filter(|&i| again[i] != bytes[i]).collect();
            // 1.1 reserved octets the sender did not zero (listed in notes, not as padding).
            let notes = v["notes"].as_array().cloned().unwrap_or_default();
            if let Some(junk) = notes.iter().filter_map(Value::as_str).find_map(|n| {
                n.strip_prefix("the 3 reserved octets of the GIOP 1.1 Request header are ")
                    .and_then(|r| r.split(',').next())
            }) {
                let junk = hex::decode(junk).unwrap();
                assert_eq!(diffs.len(), 3, "{file}");
                assert_eq!(diffs[2], diffs[0] + 2, "{file}");
                assert_eq!(&bytes[diffs[0]..diffs[0] + 3], junk, "{file}");
                assert_eq!(&again[diffs[0]..diffs[0] + 3], [0, 0, 0], "{file}");
                diffs.clear();
            }
            if let Some(pad) = v.get("nonzero_padding") {
                let gaps: Vec<(usize, usize)> = pad["first"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|g| {
                        let at = g[0].as_u64().unwrap() as usize;
                        (at, at + g[1].as_str().unwrap().len() / 2)
                    })
                    .collect();
                for &d in &diffs {
                    assert!(
                        gaps.iter().any(|&(a, b)| (a..b).contains(&d)),
                        "{file}: byte {d}"
                    );
                    assert_eq!(again[d], 0, "{file}");
                }
            } else {
                assert!(diffs.is_empty(), "{file}: differs at {diffs:?}");
                exact += 1;
            }
            checked += 1;

            // Bodies, reassembling fragments whose first part is in the set.
            let key = (
                v["conn"].as_u64().unwrap(),
                v["direction"].as_str().unwrap().to_owned(),
            );
            let op = v["operation"].as_str().unwrap_or_default().to_owned();
            let desc = v["description"].as_str().unwrap().to_owned();
            if h.msg_type == MsgType::Fragment
                && !present.contains(&v["fragment_head_seq"].as_u64().unwrap())
            {
                continue;
            }
            let r = reassemblers
                .entry(key.clone())
                .or_insert_with(|| Reassembler::new(1 << 20));
            if h.more_fragments {
                ops.insert(key.clone(), desc.clone());
            }
            let Some(whole) = r.push(m).unwrap_or_else(|e| panic!("{file}: {e}")) else {
                continue;
            };
            let desc = if h.msg_type == MsgType::Fragment {
                ops.remove(&key).unwrap()
            } else {
                desc
            };
            if check_body(&op, &whole, &desc, &file) {
                let kind = format!("{}:{op}:{}", type_name(whole.header().msg_type), h.version);
                bodies.insert(kind);
            }
        }
    }
    assert_eq!(checked, 251);
    assert!(exact > 150, "{exact}");
    // Reassembled bodies that the brief calls out.
    for must in [
        "Request:send_structs:1.1",
        "Request:send_structs:1.2",
        "Request:send_structs_oneway:1.2",
        "Reply:echo:1.2",
        "Reply:fail:1.0",
        "Reply:echo:1.1",
        "Reply:stop_timer:1.2",
        "Request:send_doubles:1.1",
    ] {
        assert!(bodies.contains(must), "{must} not checked; have {bodies:?}");
    }
}

#[test]
fn omniorb_1_1_fragments_align_per_fragment() {
    // 033–035: reading the reassembled data as one stream (no align breaks) goes wrong.
    let entries = load("omniorb-to-jacorb/giop1.1");
    let parts: Vec<Message> = entries
        .iter()
        .filter(|(v, _)| (33..=35).contains(&v["seq"].as_u64().unwrap()))
        .map(|(_, b)| Message::from_bytes(b.clone()).unwrap())
        .collect();
    let mut r = Reassembler::default();
    let whole = parts
        .into_iter()
        .filter_map(|p| r.push(p).unwrap())
        .next()
        .unwrap();
    assert_eq!(whole.align_breaks().len(), 2);
    assert_eq!(whole.bytes().len(), 24088);
    let naive = corbina_giop::decode_message(whole.bytes(), &[]).unwrap().1;
    let GiopMessage::Request { body, .. } = naive else {
        panic!()
    };
    let mut rd = body.reader(CodeSets::DEFAULT);
    let n = rd.read_ulong().unwrap();
    let mut ok = true;
    for i in 0..n {
        let s = rd.read_short();
        rd.read_char().ok();
        rd.read_long().ok();
        rd.read_octet().ok();
        let d = rd.read_double();
        if s != Ok(i as i16) || d != Ok(f64::from(i) * 0.5) {
            ok = false;
            break;
        }
    }
    assert!(
        !ok,
        "a continuous stream should misread omniORB's 1.1 fragments"
    );
}

/// The borrowed Request header decode agrees with the owned one on every captured Request:
/// same header, same body, same errors.
#[test]
fn request_view_agrees_with_owned_decode() {
    let mut requests = 0;
    for dir in DIRS {
        for (v, bytes) in load(dir) {
            let file = format!("{dir}/{}", v["file"].as_str().unwrap());
            let m = Message::from_bytes(bytes).unwrap();
            if m.header().msg_type != MsgType::Request {
                continue;
            }
            requests += 1;
            match (m.decode(), m.decode_view()) {
                (
                    Ok(GiopMessage::Request { header, body }),
                    Ok(GiopMessageView::Request {
                        header: view,
                        body: view_body,
                    }),
                ) => {
                    assert_eq!(view.to_header(), header, "{file}");
                    assert_eq!(view.request_id, header.request_id, "{file}");
                    assert_eq!(view.response_flags, header.response_flags, "{file}");
                    assert_eq!(view.operation, header.operation.as_str(), "{file}");
                    assert_eq!(
                        view.target.resolve_key().unwrap().as_deref(),
                        header
                            .target
                            .resolve_key()
                            .unwrap()
                            .as_ref()
                            .map(|k| k.as_bytes()),
                        "{file}"
                    );
                    assert_eq!(
                        view.service_context.code_sets().unwrap(),
                        header.service_context.code_sets().unwrap(),
                        "{file}"
                    );
                    assert_eq!(
                        view.service_context.len(),
                        header.service_context.len(),
                        "{file}"
                    );
                    assert_eq!(view.requesting_principal, &header.requesting_principal[..]);
                    assert_eq!(view_body, body, "{file}");
                }
                (Err(a), Err(b)) => assert_eq!(a, b, "{file}"),
                (a, b) => panic!("{file}: owned {a:?}, view {b:?}"),
            }
        }
    }
    assert!(requests > 0);
}
