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
];

/// `omni_diff_echo`'s build directory; `None` (with a note) without omniORB.
pub fn peers() -> Option<&'static Path> {
    build_peers(&PeerBuild {
        name: "differential",
        makefile_dir: crate::peers_source_dir(),
        targets: &["omni_diff_echo"],
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
        ..Profile::full()
    }
}

/// The omniORB echo server; returns it and its IOR.
pub fn server(bin: &Path, name: &str) -> (PeerProcess, String) {
    let dir = crate::fresh_dir(name);
    let ior_file = dir.join("echo.ior");
    let mut cmd = Command::new(bin.join("omni_diff_echo"));
    cmd.arg(&ior_file)
        .args(["600", "-ORBnativeCharCodeSet", "UTF-8"])
        .args(["-ORBendPoint", "giop:tcp:127.0.0.1:"])
        .stdout(Stdio::null());
    crate::start_with_ior(name, &mut cmd, &ior_file)
}
