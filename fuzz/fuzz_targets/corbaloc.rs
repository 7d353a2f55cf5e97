//! Parses object URLs (corbaloc:, corbaname:, IOR:); a parsed corbaloc must format back to a
//! URL that parses to the same addresses and key.
#![no_main]

use corbina_giop::ObjectUrl;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let _ = ObjectUrl::parse(s);
    let _ = corbina_giop::Corbaname::parse(s);
    if let Ok(loc) = corbina_giop::Corbaloc::parse(s) {
        let text = loc.to_string();
        let again = corbina_giop::Corbaloc::parse(&text).expect("formatted corbaloc parses");
        assert_eq!(again, loc);
    }
});
