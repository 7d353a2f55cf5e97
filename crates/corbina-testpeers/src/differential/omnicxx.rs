//! The omniORB C++ peer: `peers/omni_diff_echo.cc`, which decodes every `Any` through
//! DynAny (`create_dyn_any`, `to_any`) before sending it back, so that nothing travels as the
//! raw bytes an omniORB `Any` of an unknown type may keep.

use super::Profile;
use crate::{build_peers, PeerBuild, PeerProcess};
use std::path::Path;
use std::process::{Command, Stdio};

/// omniORB 4.2.5's known defects, each with why the harness avoids it.
pub const KNOWN: &[(&str, &str)] = &[
    (
        "except-in-any",
        "reads an exception in an Any without its repository id (Corbina and the CDR of \
         replies put it first): 'garbage left at end of input message'",
    ),
    (
        "dynany-cycles",
        "DynAny of a cyclic value graph segfaults (omni_diff_echo echoes values unwalked)",
    ),
    (
        "wchar-disc",
        "a union switching on wchar: DynAny raises (UNKNOWN) or the TypeCode is refused \
         (BAD_TYPECODE_UnknownKind); not triaged",
    ),
    (
        "truncatable",
        "MARSHAL_InvalidChunkedEncoding on chunked value state that crosses a GIOP 1.2 \
         fragment (seeds 834, 2109, 2199 with --all-kinds --depth 2: the receive-buffer \
         defect ValueOutput::end_member_chunk works around for arrays) and on a nested chunked \
         value pointing at itself (seed 1573 with --all-kinds --depth 2, \
         DIFFERENTIAL_OFF=exceptions,wchar_disc,wide_giop_1_1,long_double: a V5 nested in a \
         chunked V6, its `next` an indirection to itself inside its 12-octet chunk, end tags \
         -2 then -1 as CORBA 3.0 §15.3.4.6 says; omniORB throws InvalidChunkedEncoding in \
         cdrValueChunkStream::endInputValue on the -2, omniORBpy answers UNKNOWN; the same \
         request bytes with that indirection replaced by null are echoed). Its aborts \
         on separate end tags -2 -1 are gone: Corbina shares one end tag now",
    ),
    (
        "wide-giop-1.1",
        "has UTF-16 for GIOP 1.2 only ('Transmission wide char code sets: UTF-16(1.2)'): \
         wchar/wstring at 1.1 is BAD_PARAM_WCharTCSNotKnown (harness sends them at 1.2)",
    ),
    (
        "long-double-big-endian",
        "a big-endian long double comes back with its first octets garbled (sent 3e 39 ce ad 4e \
         a8 .., got 00 00 00 00 4e a8 ..; seeds 4, 26, 45 and every other case holding one) \
         or the echo raises UNKNOWN 0x4f4d0001 (GIOP 1.2 fragmented, seeds 84, 124): omniORB \
         4.2.5 converting the other order's 16-octet long double on x86-64; little-endian ones \
         pass. JacORB and omniORBpy have no long double to referee it; Corbina reads its own \
         big-endian long doubles back right. Such cases go little-endian only",
    ),
    (
        "custom-nested",
        "echoes custom values it has no factory for (994 of 1000 probe cases, \
         `differential --probe-custom`), but a custom value holding another value in its \
         chunked state is MARSHAL 0x4154006f (seeds 338, 2747, 3936, 6068), as with the \
         truncatable values above; not triaged (no other peer takes custom values to referee)",
    ),
    (
        "static-bounded-utf8",
        "its generated skeleton (omni_static_echo) checks a bounded string's bound against \
         its UTF-8 octets, not its characters: a string<5> of 5 characters, some non-ASCII, is \
         MARSHAL 0x41540013 (as omniORBpy does in Anys); static cases keep bounded strings \
         ASCII (static_profile)",
    ),
];

/// The build directory of `omni_diff_echo` and `omni_static_echo`; `None` (with a note)
/// without omniORB.
pub fn peers() -> Option<&'static Path> {
    build_peers(&PeerBuild {
        name: "differential",
        makefile_dir: crate::peers_source_dir(),
        targets: &["omni_diff_echo", "omni_static_echo"],
        pkg_config: "omniDynamic4",
    })
}

/// What the generator may send omniORB C++.
pub fn profile() -> Profile {
    Profile {
        exceptions: false,
        wchar_disc: false,
        truncatable: false,
        wide_giop_1_1: false,
        long_double_big_endian: false,
        ..Profile::full()
    }
}

/// What the generator may send omniORB C++'s static skeleton (`omni_static_echo`): as
/// [`profile`], less non-ASCII characters in bounded strings (`static-bounded-utf8`).
pub fn static_profile() -> Profile {
    Profile {
        non_ascii_bounded: false,
        ..profile()
    }
}

/// The omniORB echo server; returns it and its IOR.
pub fn server(bin: &Path, name: &str) -> (PeerProcess, String) {
    start(&bin.join("omni_diff_echo"), name)
}

/// Starts the omniORB echo peer `program` (IOR file, lifetime, UTF-8, loopback).
fn start(program: &Path, name: &str) -> (PeerProcess, String) {
    let dir = crate::fresh_dir(name);
    let ior_file = dir.join("echo.ior");
    let mut cmd = Command::new(program);
    cmd.arg(&ior_file)
        .args(["600", "-ORBnativeCharCodeSet", "UTF-8"])
        .args(["-ORBendPoint", "giop:tcp:127.0.0.1:"])
        .stdout(Stdio::null());
    crate::start_with_ior(name, &mut cmd, &ior_file)
}

/// The omniORB echo server of the static types (`peers/omni_static_echo.cc`); returns it
/// and its IOR.
pub fn static_server(bin: &Path, name: &str) -> (PeerProcess, String) {
    start(&bin.join("omni_static_echo"), name)
}
