//! Parses stringified IORs and raw IOR encapsulations, then every IIOP profile and tagged
//! component in them; whatever decodes must re-encode and decode to the same value.
#![no_main]

use corbina_giop::Ior;
use libfuzzer_sys::fuzz_target;

fn exercise(ior: &Ior) {
    if let Ok(profiles) = ior.iiop_profiles() {
        for p in profiles {
            for c in &p.components {
                let _ = c.decode_known();
            }
        }
    }
    let bytes = ior.to_encapsulation().expect("a decoded IOR re-encodes");
    let again = Ior::from_encapsulation(&bytes).expect("re-encoded IOR decodes");
    assert_eq!(&again, ior);
}

fuzz_target!(|data: &[u8]| {
    if let Ok(ior) = Ior::from_encapsulation(data) {
        exercise(&ior);
    }
    if let Ok(s) = std::str::from_utf8(data) {
        if let Ok(ior) = s.parse::<Ior>() {
            exercise(&ior);
        }
    }
});
