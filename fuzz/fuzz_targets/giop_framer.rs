//! Feeds a connection's worth of bytes to the framer in chunks the input chooses, passes
//! every message through the reassembler and decodes it, reading each body to its end.
//! Errors are expected; panics, hangs and unbounded allocations are bugs.
#![no_main]

use corbina_cdr::CodeSets;
use corbina_giop::{Framer, GiopMessage, Reassembler};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [chunk, rest @ ..] = data else { return };
    let chunk = usize::from(*chunk).max(1);
    let mut framer = Framer::new(1 << 20);
    let mut reassembler = Reassembler::new(1 << 20);
    for piece in rest.chunks(chunk) {
        framer.push(piece);
        loop {
            let m = match framer.next_message() {
                Ok(Some(m)) => m,
                Ok(None) => break,
                Err(_) => return,
            };
            let m = match reassembler.push(m) {
                Ok(Some(m)) => m,
                Ok(None) => continue,
                Err(_) => return,
            };
            match m.decode() {
                Ok(GiopMessage::Request { body, .. }) | Ok(GiopMessage::Reply { body, .. }) => {
                    let mut r = body.reader(CodeSets::UNICODE);
                    // Read the body as a list of strings, as an echo servant would.
                    while r.read_string().is_ok() {}
                }
                Ok(_) | Err(_) => {}
            }
        }
    }
});
