//! Drives the production GIOP connection state machine with a peer's bytes, in chunks the
//! input chooses: the server role (requests, fragments, cancels), or the client role with
//! requests in flight at GIOP 1.0 and 1.2 (replies matched by id, in any order), either
//! of them bidirectional (with the BI_DIR_IIOP offers requests carry decoded). Every event
//! is read to its end; every message the connection asks to send must decode; memory held
//! stays within the configured caps. Errors are expected; panics, hangs and unbounded
//! allocations are bugs.
#![no_main]

use corbina_cdr::CodeSets;
use corbina_giop::connection::{bidir_offer, Event, GiopConnection, Role, Settings};
use corbina_giop::{decode_message, ObjectKey, TargetAddress, Version};
use libfuzzer_sys::fuzz_target;

const MAX_MESSAGE: u32 = 1 << 16;
const REASSEMBLY: usize = 1 << 16;

fuzz_target!(|data: &[u8]| {
    let [mode, chunk, rest @ ..] = data else { return };
    let chunk = usize::from(*chunk).max(1);
    let role = if mode & 1 == 0 { Role::Server } else { Role::Client };
    let mut c = GiopConnection::new(Settings {
        bidirectional: mode & 2 != 0,
        max_message_size: MAX_MESSAGE,
        reassembly_limit: REASSEMBLY,
        fragment_size: Some(256),
        ..Settings::new(role)
    });
    if role == Role::Client {
        // Requests in flight: ids 2, 4 (1.2), 6 (1.0), 8 cancelled.
        let target = TargetAddress::Key(ObjectKey::from("k"));
        for (v, op) in [(Version::V1_2, "a"), (Version::V1_2, "b"), (Version::V1_0, "c"), (Version::V1_1, "d")] {
            // The client's call path: the fused request (the first one through
            // start_request/finish_request, with the CODE_SETS context).
            let sent = c.request(&mut Vec::new(), v, CodeSets::UNICODE, &target, op, true, |w| {
                w.write_ulong(7);
                Ok::<(), ()>(())
            });
            assert!(sent.is_ok());
        }
        c.cancel(8);
    }
    for piece in rest.chunks(chunk) {
        c.push(piece);
        loop {
            match c.poll_event() {
                Ok(Some(Event::Request { header, body, reply })) => {
                    // A bidirectional offer (BI_DIR_IIOP listen points) decodes or fails
                    // cleanly; a body copied out for a worker reads the same.
                    let _ = bidir_offer(reply.version, &header.service_context);
                    let owned = body.to_owned_body();
                    assert_eq!(owned.body(), body);
                    let mut r = body.reader(reply.code_sets);
                    while r.read_string().is_ok() {}
                    // Answering must always be possible (as the server does, in one call).
                    let status = corbina_giop::ReplyStatus::NoException;
                    let no_body = |_: &mut _| Ok::<(), corbina_giop::GiopError>(());
                    let out = reply.reply(&mut Vec::new(), status, no_body);
                    for f in out.expect("reply").fragments().expect("fragments") {
                        assert!(decode_message(&f.to_vec(), &[]).is_ok());
                    }
                }
                Ok(Some(Event::Reply { body, code_sets, .. })) => {
                    let mut r = body.reader(code_sets);
                    while r.read_string().is_ok() {}
                }
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(_) => break,
            }
        }
        while let Some(m) = c.poll_transmit() {
            assert!(decode_message(m.as_bytes(), &[]).is_ok());
        }
        // The receive buffer holds at most one message and a read chunk; reassembly its cap
        // and one message being completed.
        assert!(c.held_bytes() <= 2 * (MAX_MESSAGE as usize + 12) + 64 * 1024 + 2 * REASSEMBLY);
    }
});
