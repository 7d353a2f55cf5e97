//! Parses Notification Service filter constraints (ETCL, `corbina_events::etcl`), which a
//! remote `add_constraints` sends; a constraint that parses is evaluated against a plain
//! value and two structs, which must never panic or hang.
#![no_main]

use corbina::Any;
use corbina_events::cos_notification::{EventType, Property};
use corbina_events::etcl::Constraint;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let Ok(c) = Constraint::parse(s) else { return };
    let _ = c.matches(&Any::from_long(7));
    let t = EventType {
        domain_name: "Telecom".into(),
        type_name: "Alarm".into(),
    };
    if let Ok(a) = Any::insert(&t) {
        let _ = c.matches(&a);
    }
    let p = Property {
        name: "priority".into(),
        value: Any::from_short(5),
    };
    if let Ok(a) = Any::insert(&p) {
        let _ = c.matches(&a);
    }
});
