//! The JacORB peer: `peers/jacorb/src/DiffEcho.java`, which decodes every `Any` through
//! DynAny before sending it back. JacORB writes big-endian, so this is where Corbina reads
//! the other byte order from a peer.

use super::Profile;
use crate::{jacorb_classpath, PeerProcess, JACORB_JVM_ARGS};
use std::process::{Command, Stdio};

/// JacORB 3.9's known defects, each with why the harness avoids it.
pub const KNOWN: &[(&str, &str)] = &[
    (
        "giop-1.1-fragments",
        "answers GIOP 1.1 fragmented requests with NO_IMPLEMENT",
    ),
    (
        "long-double",
        "long double (in values and TypeCodes) is MARSHAL",
    ),
    (
        "wchar-disc",
        "a union switching on wchar is BAD_PARAM minor 20 (bad discriminator type)",
    ),
    (
        "except-in-any",
        "an exception in an Any is UNKNOWN from its DynAny echo",
    ),
    (
        "values",
        "cannot read a value of a type it has no factory for (MARSHAL: no TypeCode-driven values)",
    ),
    (
        "fixed",
        "DynAny of some fixed values raises UNKNOWN (fixed<6,5>[1], seed 42); not triaged",
    ),
    (
        "bounded-strings",
        "a string<N> or wstring<N> comes back from its DynAny echo unbounded",
    ),
    (
        "abstract-interface",
        "an abstract interface in an Any is MARSHAL",
    ),
    (
        "wide-giop-1.1",
        "wchar at GIOP 1.1 comes back changed (U+AE9D as U+9D00) or its reply is unreadable \
         (Corbina MARSHAL 0x43420006); GIOP 1.1's wchar encoding is underspecified; not triaged",
    ),
    (
        "longlong-disc",
        "a union (or its TypeCode) switching on (unsigned) long long is MARSHAL",
    ),
    (
        "union-default-label",
        "reads a union TypeCode's default label as an octet (CDRInputStream.read_TypeCode: \
         read_octet), where CORBA 3.0 §15.3.5.1 and omniORB write a value of the discriminator \
         type: a default member after one whose TypeCode ends unaligned (an enum's) is MARSHAL \
         (seeds 3564, 31707); Corbina writes the spec's form",
    ),
    (
        "static-union-discriminator",
        "its generated unions (static skeleton) keep no discriminator that no label names: a \
         union switching on char whose default member came with 'x' comes back with 0, one \
         with no member active (unsigned short 38622) with another value; the harness's \
         static cases for JacORB use labelled discriminators only",
    ),
    (
        "static-empty-string-boxes",
        "two distinct boxed strings (valuetype Label string), both empty, come back as one: \
         the second as an indirection to the first (its Java mapping's empty strings are one \
         object); 86 of 160,000 static round trips (seeds 100064, 100078); static cases for \
         JacORB box no empty string",
    ),
    (
        "static-idl-labels",
        "its IDL compiler refuses unions switching on (unsigned) long long and unsigned long \
         labels above 2^31 - 1, and generates Java that does not compile for unsigned short \
         labels above 2^15 - 1: peers/differential_static.idl leaves those types out for it \
         (DTS_JACORB)",
    ),
    (
        "bom-units",
        "takes every U+FEFF/U+FFFE code unit at the start of UTF-16 wide data for a byte-order \
         mark: a wstring starting with one (Corbina writes a big-endian mark before it, as \
         CORBA 3.0 §15.3.1.6 requires) loses it, U+FFFE then byte-swaps the rest ('bom' comes \
         back as U+6200 U+6F00 U+6D00), and a wchar U+FEFF or U+FFFE (GIOP 1.2: length octet \
         2, then FE FF) is read as a mark then the next two octets as the character \
         (CDRInputStream.read_wchar skips the length octet unread): alone in an Any it comes \
         back as NUL, followed by more data it shifts the rest of the stream (UNKNOWN: seed \
         4010030, struct R3 { wchar v; sequence<R3> kids; } with a v U+FEFF in a nested \
         Any; the same case with only that wchar changed to U+FEFC passes). CORBA 3.0 \
         §15.3.1.6 makes the length octet say how many octets follow, so 02 FE FF is U+FEFF; \
         omniORB C++ and omniORBpy echo all of them (differential_byte_order_marks_…). The \
         JacORB profile sends U+FEFC in their place (`bom_units`)",
    ),
    (
        "non-ascii-giop-1.0",
        "reads and writes char data at GIOP 1.0 as UTF-8, where the default is ISO-8859-1: a \
         Latin-1 string (Corbina's bytes F7 C2 BA) comes back as U+FFFDs (seed 325)",
    ),
];

/// What the generator may send JacORB.
pub fn profile() -> Profile {
    Profile {
        giop_1_1_fragments: false,
        long_double: false,
        wchar_disc: false,
        exceptions: false,
        values: false,
        fixed: false,
        bounded_strings: false,
        abstract_interfaces: false,
        non_ascii_giop_1_0: false,
        longlong_disc: false,
        wide_giop_1_1: false,
        default_later: false,
        bom_units: false,
        ..Profile::full()
    }
}

/// Whether the JacORB peer can be built (`None` from [`jacorb_classpath`] otherwise).
pub fn available() -> bool {
    jacorb_classpath().is_some()
}

/// The JacORB echo server; returns it and its IOR. Its stdin is kept open: it exits when
/// the process handle is dropped (killed) or stdin closes.
pub fn server(name: &str) -> (PeerProcess, String) {
    start("DiffEcho", name)
}

/// Starts the JacORB peer class `class` (its IOR file its only argument, stdin kept open).
fn start(class: &str, name: &str) -> (PeerProcess, String) {
    let classpath = jacorb_classpath().expect("JacORB peer built");
    let cp = std::fs::read_to_string(classpath).expect("reading the JacORB classpath");
    let dir = crate::fresh_dir(name);
    let ior_file = dir.join("echo.ior");
    let mut cmd = Command::new("java");
    cmd.args(JACORB_JVM_ARGS)
        .arg("-cp")
        .arg(cp.trim())
        .arg(class)
        .arg(&ior_file)
        .stdin(Stdio::piped())
        .stdout(Stdio::null());
    crate::start_with_ior(name, &mut cmd, &ior_file)
}

/// What the generator may send JacORB's static skeleton (`DiffStaticEcho`): as [`profile`],
/// less union discriminators no label names (`static-union-discriminator`) and empty boxed
/// strings (`static-empty-string-boxes`).
pub fn static_profile() -> Profile {
    Profile {
        unlabelled_disc: false,
        empty_string_boxes: false,
        ..profile()
    }
}

/// The JacORB echo server of the static types (`peers/jacorb/src/DiffStaticEcho.java`);
/// returns it and its IOR.
pub fn static_server(name: &str) -> (PeerProcess, String) {
    start("DiffStaticEcho", name)
}
