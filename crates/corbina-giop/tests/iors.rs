//! The IORs of tests/vectors/iors.txt decode to what that file says and re-encode to the
//! same bytes.

use std::path::Path;

use corbina_cdr::{ByteOrder, CodeSetId};
use corbina_giop::{Component, Corbaloc, Ior, ObjAddr, ObjectKey, Version};

struct Expect {
    order: ByteOrder,
    bytes: usize,
    port: u16,
    key: &'static str,
    text: &'static str,
    orb_type: u32,
    char_native: u32,
    char_conv: &'static [u32],
    wchar_native: u32,
    wchar_conv: &'static [u32],
}

const EXPECT: [Expect; 3] = [
    Expect {
        order: ByteOrder::Little,
        bytes: 132,
        port: 60891,
        key: "fe1a4d036b0000747e0000000000",
        text: "..M.k..t~.....",
        orb_type: 0x4154_5400,
        char_native: 0x0001_0001,
        char_conv: &[0x0501_0001],
        wchar_native: 0x0001_0109,
        wchar_conv: &[0x0001_0109],
    },
    Expect {
        order: ByteOrder::Little,
        bytes: 132,
        port: 58845,
        key: "fe1a4d036b000074800000000000",
        text: "..M.k..t......",
        orb_type: 0x4154_5400,
        char_native: 0x0001_0001,
        char_conv: &[0x0501_0001],
        wchar_native: 0x0001_0109,
        wchar_conv: &[0x0001_0109],
    },
    Expect {
        order: ByteOrder::Big,
        bytes: 156,
        port: 39073,
        key: "313630383434323538322f0001004d2b2347242d100630463814141b484c1b",
        text: "1608442582/...M+#G$-..0F8...HL.",
        orb_type: 0x4a41_4300,
        char_native: 0x0501_0001,
        char_conv: &[0x0001_0001, 0x0001_000f],
        wchar_native: 0x0001_0109,
        wchar_conv: &[0x0501_0001, 0x0001_0100],
    },
];

fn iors() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/iors.txt");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("IOR:"))
        .map(str::to_owned)
        .collect()
}

fn ids(v: &[CodeSetId]) -> Vec<u32> {
    v.iter().map(|c| c.0).collect()
}

#[test]
fn iors_decode_and_round_trip() {
    let strings = iors();
    assert_eq!(strings.len(), 3);
    for (s, e) in strings.iter().zip(&EXPECT) {
        let ior: Ior = s.parse().unwrap();
        assert_eq!(ior.type_id, "IDL:Bench:1.0");
        assert_eq!(ior.byte_order, e.order);
        assert_eq!(ior.to_encapsulation().unwrap().len(), e.bytes);
        assert_eq!(ior.profiles.len(), 1);
        let p = ior.profiles[0].iiop().unwrap().unwrap();
        assert_eq!(p.version, Version::V1_2);
        assert_eq!(p.byte_order, e.order);
        assert_eq!(p.host, "127.0.0.1");
        assert_eq!(p.port, e.port);
        assert_eq!(p.object_key.to_hex(), e.key);
        assert_eq!(p.object_key.printable(), e.text);
        assert_eq!(p.components.len(), 2);
        assert_eq!(
            p.components[0].decode_known().unwrap(),
            Component::OrbType(e.orb_type)
        );
        let cs = p.code_sets().unwrap().unwrap();
        assert_eq!(cs.for_char_data.native_code_set.0, e.char_native);
        assert_eq!(ids(&cs.for_char_data.conversion_code_sets), e.char_conv);
        assert_eq!(cs.for_wchar_data.native_code_set.0, e.wchar_native);
        assert_eq!(ids(&cs.for_wchar_data.conversion_code_sets), e.wchar_conv);
        // Profile body and whole IOR re-encode byte for byte; to_string writes lower case.
        assert_eq!(p.encode_body().unwrap(), ior.profiles[0].profile_data);
        assert_eq!(p.to_tagged().unwrap(), ior.profiles[0]);
        assert_eq!(ior.to_string(), format!("IOR:{}", s[4..].to_lowercase()));
        let again: Ior = ior.to_string().parse().unwrap();
        assert_eq!(again, ior);
        // The key as a corbaloc URL.
        let url = Corbaloc::iiop(&p.host, p.port, p.object_key.clone()).to_string();
        let back = Corbaloc::parse(&url).unwrap();
        assert_eq!(back.key, p.object_key);
        assert!(matches!(&back.addresses[0], ObjAddr::Iiop(a) if a.port == e.port));
    }
}

#[test]
fn jacorb_key_matches_the_requests() {
    let jacorb: Ior = iors()[2].parse().unwrap();
    let key = jacorb.iiop_profiles().unwrap().remove(0).object_key;
    assert_eq!(key, ObjectKey(hex::decode(EXPECT[2].key).unwrap()));
    assert_eq!(
        key.escaped(),
        "1608442582/%00%01%00M+%23G$-%10%060F8%14%14%1BHL%1B"
    );
}
