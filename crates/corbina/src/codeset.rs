//! Code set negotiation (CORBA 3.0 §13.10.2.6): which transmission code sets a client uses
//! with a server, from the server's CODE_SETS component.
//!
//! Corbina's native char code set is UTF-8 (Rust strings travel unconverted) with
//! ISO-8859-1 as a conversion code set; its native wchar code set is UTF-16.

use crate::cdr::{CharCodeSet, CodeSetId, CodeSets, WCharCodeSet};
use crate::giop::{CodeSetComponent, CodeSetComponentInfo};

/// What Corbina advertises in its IORs' CODE_SETS component and uses as a client.
pub fn native_code_sets() -> CodeSetComponentInfo {
    CodeSetComponentInfo {
        for_char_data: CodeSetComponent {
            native_code_set: CodeSetId::UTF_8,
            conversion_code_sets: vec![CodeSetId::ISO_8859_1],
        },
        for_wchar_data: CodeSetComponent {
            native_code_set: CodeSetId::UTF_16,
            conversion_code_sets: vec![CodeSetId::UCS_2_L1],
        },
    }
}

fn choose(client: &CodeSetComponent, server: &CodeSetComponent) -> Option<CodeSetId> {
    if client.native_code_set == server.native_code_set {
        return Some(client.native_code_set);
    }
    if server
        .conversion_code_sets
        .contains(&client.native_code_set)
    {
        return Some(client.native_code_set);
    }
    if client
        .conversion_code_sets
        .contains(&server.native_code_set)
    {
        return Some(server.native_code_set);
    }
    client
        .conversion_code_sets
        .iter()
        .copied()
        .find(|c| server.conversion_code_sets.contains(c))
}

/// The transmission code sets a client uses with a server that advertises `server` (or
/// nothing: then ISO-8859-1 and no wide characters, the GIOP defaults).
pub fn negotiate(server: Option<&CodeSetComponentInfo>) -> CodeSets {
    let Some(server) = server else {
        return CodeSets::DEFAULT;
    };
    let ours = native_code_sets();
    let char_set = choose(&ours.for_char_data, &server.for_char_data)
        .and_then(CharCodeSet::from_id)
        // No common char code set: fall back to the GIOP default rather than fail every call.
        .unwrap_or(CharCodeSet::Iso8859_1);
    let wchar_set =
        choose(&ours.for_wchar_data, &server.for_wchar_data).and_then(WCharCodeSet::from_id);
    CodeSets {
        char_set,
        wchar_set,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cs(native: u32, conv: &[u32]) -> CodeSetComponent {
        CodeSetComponent {
            native_code_set: CodeSetId(native),
            conversion_code_sets: conv.iter().map(|&c| CodeSetId(c)).collect(),
        }
    }

    #[test]
    fn with_omniorb_and_jacorb() {
        // omniORB: char ISO-8859-1 [UTF-8], wchar UTF-16 [UTF-16].
        let omni = CodeSetComponentInfo {
            for_char_data: cs(0x0001_0001, &[0x0501_0001]),
            for_wchar_data: cs(0x0001_0109, &[0x0001_0109]),
        };
        assert_eq!(negotiate(Some(&omni)), CodeSets::UNICODE);
        // JacORB: char UTF-8 [ISO-8859-1, ISO-8859-15], wchar UTF-16 [UTF-8, UCS-2].
        let jac = CodeSetComponentInfo {
            for_char_data: cs(0x0501_0001, &[0x0001_0001, 0x0001_000f]),
            for_wchar_data: cs(0x0001_0109, &[0x0501_0001, 0x0001_0100]),
        };
        assert_eq!(negotiate(Some(&jac)), CodeSets::UNICODE);
        // A Latin-1-only server.
        let latin = CodeSetComponentInfo {
            for_char_data: cs(0x0001_0001, &[]),
            for_wchar_data: cs(0x0001_0100, &[]),
        };
        let got = negotiate(Some(&latin));
        assert_eq!(got.char_set, CharCodeSet::Iso8859_1);
        assert_eq!(got.wchar_set, Some(WCharCodeSet::Ucs2));
        assert_eq!(negotiate(None), CodeSets::DEFAULT);
    }
}
