//! Differential tests against omniORBpy, omniORB C++ and JacORB (issue 27): random `Any`s
//! through their echo objects and back, each sent in both byte orders; omniORBpy's own
//! random values through Corbina echo servers replying big- and little-endian; and the
//! `LabelNode` graphs of issue 27 item 1 both ways. Each prints how many round trips ran.
//!
//! `DIFFERENTIAL_CASES` (default 150) and `DIFFERENTIAL_SEED` (default 1) set the random
//! cases; `cargo run -p corbina-testpeers --bin differential -- --cases N --seed S` runs long.

use std::io::Write as _;

use corbina_testpeers::differential::{
    jacorb, omnicxx, omnipy, probe_custom, run_forward, run_label_nodes, run_label_nodes_on,
    serve_echo_in, statics, Clients, Peer, Tally, ORDERS,
};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The known defects a peer's profile avoids, by name (printed with each run).
fn known(list: &[(&str, &str)]) -> String {
    let names: Vec<&str> = list.iter().map(|(n, _)| *n).collect();
    format!(
        "{} known peer defects avoided ({})",
        list.len(),
        names.join(", ")
    )
}

fn check(what: &str, t: &Tally) {
    // Straight to stderr, past the test harness's capture: the count shows in every run.
    let _ = writeln!(std::io::stderr(), "{what}: {t}");
    assert!(t.ran > 0, "{what}: no case ran");
    assert!(
        t.failed.is_empty(),
        "{what}: {t}\n{}",
        t.failed.join("\n\n")
    );
}

#[test]
fn differential_omniorbpy_random_anys_through_omniorbpy() {
    let Some(py) = omnipy::python() else { return };
    let mut peer = Peer::new("omniorbpy", omnipy::profile(), move || {
        let (p, ior) = omnipy::server(py, "differential-omnipy");
        (Some(p), ior)
    });
    let mut clients = Clients::new();
    let t = run_forward(
        &mut peer,
        env("DIFFERENTIAL_SEED", 1),
        env("DIFFERENTIAL_CASES", 150),
        &mut clients,
    );
    let what = format!(
        "differential omniORBpy (Corbina -> omniORBpy echo), {}",
        known(omnipy::KNOWN)
    );
    check(&what, &t);
}

#[test]
fn differential_omniorbpy_random_anys_from_omniorbpy() {
    let Some(py) = omnipy::python() else { return };
    // Half the seeds against a big-endian Corbina server, half against a little-endian one.
    let (seed, cases) = (env("DIFFERENTIAL_SEED", 1), env("DIFFERENTIAL_CASES", 150));
    let half = cases.div_ceil(2);
    let mut t = Tally::default();
    for (i, order) in ORDERS.into_iter().enumerate() {
        let (orb, ior) = serve_echo_in(order);
        let from = seed + i as u64 * half;
        t.merge(omnipy::reverse(
            py,
            &ior,
            from,
            half.min(cases - i as u64 * half),
        ));
        orb.destroy();
    }
    check(
        "differential omniORBpy (omniORBpy -> Corbina echo, both orders)",
        &t,
    );
}

/// Issue 27 item 1: `LabelNode` lists, cycles and lassos with labels of length 0-9,
/// Corbina -> omniORBpy echo (needs main's fix 3483e7d, cherry-picked here).
#[test]
fn differential_omniorbpy_label_nodes_through_omniorbpy() {
    let Some(py) = omnipy::python() else { return };
    let (_peer, peer_ior) = omnipy::server(py, "differential-omnipy-nodes");
    let mut clients = Clients::new();
    let t = run_label_nodes("omniorbpy", &peer_ior, &mut clients);
    check("differential omniORBpy LabelNode lists/cycles/lassos", &t);
}

/// The same graphs made by omniORBpy and echoed by Corbina (omniORBpy aborted on Corbina's
/// chunked echo before Corbina shared one end tag between values ending together).
#[test]
fn differential_omniorbpy_label_nodes_from_omniorbpy() {
    let Some(py) = omnipy::python() else { return };
    let mut t = Tally::default();
    for order in ORDERS {
        let (orb, ior) = serve_echo_in(order);
        for (ok, line) in omnipy::client(py, "nodes", &ior, &[]) {
            t.ran += 1;
            if ok {
                t.passed += 1;
            } else {
                t.failed
                    .push(format!("omniORBpy -> Corbina ({order:?}): {line}"));
            }
        }
        orb.destroy();
    }
    check(
        "differential omniORBpy LabelNode lists/cycles/lassos (reverse)",
        &t,
    );
}

#[test]
fn differential_omniorb_random_anys_through_omniorb_cxx() {
    let Some(bin) = omnicxx::peers() else { return };
    let mut peer = Peer::new("omniorb", omnicxx::profile(), move || {
        let (p, ior) = omnicxx::server(bin, "differential-omniorb");
        (Some(p), ior)
    });
    let mut clients = Clients::new();
    let t = run_forward(
        &mut peer,
        env("DIFFERENTIAL_SEED", 1),
        env("DIFFERENTIAL_CASES", 150) * 2,
        &mut clients,
    );
    let what = format!(
        "differential omniORB C++ (Corbina -> omniORB DynAny echo), {}",
        known(omnicxx::KNOWN)
    );
    check(&what, &t);
}

/// Random values of the static types (`peers/differential_static.idl`) through omniORB
/// C++'s generated skeleton: typed operations, not `Any`s.
#[test]
fn differential_static_omniorb_cxx() {
    let Some(bin) = omnicxx::peers() else { return };
    let (_peer, ior) = omnicxx::static_server(bin, "differential-static-omniorb");
    let mut clients = Clients::new();
    let t = statics::run_static(
        "omniorb",
        &ior,
        &omnicxx::static_profile(),
        env("DIFFERENTIAL_SEED", 1),
        env("DIFFERENTIAL_CASES", 150) / 3,
        &mut clients,
    );
    check("differential static omniORB C++ (typed operations)", &t);
}

/// The static types through JacORB's generated skeleton (the operations its IDL compiler
/// takes: `DTS_JACORB` in `peers/differential_static.idl`).
#[test]
fn differential_static_jacorb() {
    if !jacorb::available() {
        return;
    }
    let (_peer, ior) = jacorb::static_server("differential-static-jacorb");
    let mut clients = Clients::new();
    let t = statics::run_static(
        "jacorb",
        &ior,
        &jacorb::static_profile(),
        env("DIFFERENTIAL_SEED", 1),
        env("DIFFERENTIAL_CASES", 150) / 5,
        &mut clients,
    );
    check("differential static JacORB (typed operations)", &t);
}

/// Custom valuetypes, unknown to omniORB C++ (no factory), through its echo: written and
/// read by the harness's own codec (Corbina's `Any` cannot copy a custom value), less the
/// custom values holding values (`custom-nested`).
#[test]
fn differential_custom_values_through_omniorb_cxx() {
    let Some(bin) = omnicxx::peers() else { return };
    let (_peer, ior) = omnicxx::server(bin, "differential-custom-omniorb");
    let mut clients = Clients::new();
    let t = probe_custom(
        &ior,
        &omnicxx::profile(),
        false,
        env("DIFFERENTIAL_SEED", 1),
        env("DIFFERENTIAL_CASES", 150),
        &mut clients,
    );
    check("differential omniORB C++ custom values (raw)", &t);
}

/// Issue 27 item 1's graphs through omniORB C++ (its `LabelNode` factory builds them).
#[test]
fn differential_omniorb_label_nodes_through_omniorb_cxx() {
    let Some(bin) = omnicxx::peers() else { return };
    let (_peer, ior) = omnicxx::server(bin, "differential-omniorb-nodes");
    let mut clients = Clients::new();
    let t = run_label_nodes("omniorb", &ior, &mut clients);
    check("differential omniORB C++ LabelNode lists/cycles/lassos", &t);
}

/// omniORBpy's own random values through omniORB C++ (peer to peer): what the harness
/// compares Corbina's results with when a case fails.
#[test]
fn differential_omniorbpy_to_omniorb_cxx_peer_to_peer() {
    let Some(py) = omnipy::python() else { return };
    let Some(bin) = omnicxx::peers() else { return };
    let (_peer, ior) = omnicxx::server(bin, "differential-peer-to-peer");
    let t = omnipy::reverse(py, &ior, env("DIFFERENTIAL_SEED", 1), 100);
    check("differential omniORBpy -> omniORB C++ (peer to peer)", &t);
}

#[test]
fn differential_jacorb_random_anys_through_jacorb() {
    if !jacorb::available() {
        return;
    }
    let mut peer = Peer::new("jacorb", jacorb::profile(), || {
        let (p, ior) = jacorb::server("differential-jacorb");
        (Some(p), ior)
    });
    let mut clients = Clients::new();
    let t = run_forward(
        &mut peer,
        env("DIFFERENTIAL_SEED", 1),
        env("DIFFERENTIAL_CASES", 150) * 2 / 3,
        &mut clients,
    );
    let what = format!(
        "differential JacORB (Corbina -> JacORB DynAny echo), {}",
        known(jacorb::KNOWN)
    );
    check(&what, &t);
}

/// Issue 27 item 1's graphs through JacORB (its generated `LabelNode` and a factory).
#[test]
#[ignore = "JacORB's defect on JDK 17 (triaged): the echo runs and the factory builds the \
            graph; the UNKNOWN comes from marshalling the reply's Any, whose \
            CDROutputStream.write_value(Serializable) always computes an RMI repository id \
            through javax.rmi.CORBA.Util and the JBoss ValueHandler, which cannot initialise \
            on JDK 17 (javax.transaction missing; with it, java.io not opened; with that, \
            sun.reflect.ReflectionFactory$GetReflectionFactoryAction gone). A Holder \
            (insert_Streamable) is NO_IMPLEMENT for values in JacORB"]
fn differential_jacorb_label_nodes_through_jacorb() {
    if !jacorb::available() {
        return;
    }
    let (_peer, ior) = jacorb::server("differential-jacorb-nodes");
    let mut clients = Clients::new();
    // JacORB has no GIOP 1.1 fragments (NO_IMPLEMENT).
    let t = run_label_nodes_on("jacorb", &ior, &mut clients, |w| {
        !(w.giop_minor == 1 && w.fragments)
    });
    check("differential JacORB LabelNode lists/cycles/lassos", &t);
}

/// Seeds JacORB failed: each replays its case under JacORB's profile (`cargo run -p
/// corbina-testpeers --bin differential -- --peer jacorb --seed S --cases 1` prints the IDL
/// and value). 136 and 567 (MARSHAL on a union TypeCode with a default member and an
/// enum-typed member) match JacORB's `union-default-label` defect, which the profile now
/// avoids: both pass under it. 4010030 (UNKNOWN: a `wchar` U+FEFF in a nested Any, which
/// JacORB reads as a byte-order mark and then two octets more, `bom-units`) passes with that
/// one `wchar` U+FEFC, as the profile sends it.
#[test]
fn differential_regressions_jacorb() {
    if !jacorb::available() {
        return;
    }
    let mut peer = Peer::new("jacorb", jacorb::profile(), || {
        let (p, ior) = jacorb::server("differential-jacorb-regressions");
        (Some(p), ior)
    });
    let mut clients = Clients::new();
    let mut t = Tally::default();
    for seed in [136, 567, 4010030] {
        t.merge(run_forward(&mut peer, seed, 1, &mut clients));
    }
    check("differential regressions (JacORB)", &t);
}

/// Wide strings that start with U+FEFF or U+FFFE, and those characters alone as `wchar`s,
/// through each peer's echo at GIOP 1.2. CORBA 3.0 §15.3.1.6 (as resolved by OMG issue 4008)
/// reads UTF-16 wide data big-endian unless it starts with a byte-order mark, so a leading
/// U+FEFF or U+FFFE sent bare would be taken for a mark: Corbina puts a big-endian mark
/// before it, and strips one mark when reading. Each case says whether it starts with
/// U+FEFF/U+FFFE (JacORB's known defect `bom-units`) and whether it is a `wchar` (omniORBpy
/// misreads any `wchar` in an `Any` at GIOP 1.2).
fn bom_cases() -> Vec<(corbina::Any, bool, bool)> {
    let mut v = Vec::new();
    for s in [
        "\u{feff}",
        "\u{feff}bom",
        "\u{fffe}bom",
        "\u{feff}\u{feff}x",
        "x\u{feff}",
    ] {
        let leading = !s.starts_with('x');
        v.push((corbina::Any::from_wstring(s).unwrap(), leading, false));
    }
    for c in ['\u{feff}', '\u{fffe}'] {
        v.push((corbina::Any::from_wchar(c).unwrap(), true, true));
    }
    v
}

/// The BOM cases through the echo at `ior`, leading marks skipped when `skip_leading`,
/// `wchar`s when `skip_wchar`.
fn bom_round_trips(peer: &str, ior: &str, skip_leading: bool, skip_wchar: bool) -> Tally {
    let mut clients = Clients::new();
    let text = |a: &corbina::Any| a.to_wstring().or(a.to_wchar().map(String::from));
    let mut t = Tally::default();
    // Each case written in both byte orders (the mark Corbina writes is big-endian in both).
    for (order, (a, leading, wchar)) in corbina_testpeers::differential::ORDERS
        .into_iter()
        .flat_map(|o| bom_cases().into_iter().map(move |c| (o, c)))
    {
        let wire = corbina_testpeers::differential::Wire {
            giop_minor: 2,
            fragments: false,
            order,
        };
        let obj = clients.object(wire, ior);
        if (leading && skip_leading) || (wchar && skip_wchar) {
            continue;
        }
        t.ran += 1;
        match corbina_testpeers::differential::echo(&obj, &a) {
            Ok(back) if back == a => t.passed += 1,
            Ok(back) => t.failed.push(format!(
                "{peer}: {:?} came back as {:?}",
                text(&a),
                text(&back)
            )),
            Err(e) => t.failed.push(format!("{peer}: {:?}: {e}", text(&a))),
        }
    }
    t
}

#[test]
fn differential_byte_order_marks_in_wide_strings() {
    if let Some(bin) = omnicxx::peers() {
        let (_p, ior) = omnicxx::server(bin, "differential-bom-omniorb");
        let t = bom_round_trips("omniorb", &ior, false, false);
        check("differential BOM wstrings (omniORB C++)", &t);
    }
    if let Some(py) = omnipy::python() {
        let (_p, ior) = omnipy::server(py, "differential-bom-omnipy");
        let t = bom_round_trips("omniorbpy", &ior, false, true);
        check("differential BOM wstrings (omniORBpy)", &t);
    }
    if jacorb::available() {
        let (_p, ior) = jacorb::server("differential-bom-jacorb");
        let t = bom_round_trips("jacorb", &ior, true, false);
        check("differential BOM wstrings (JacORB, bom-units avoided)", &t);
    }
}

/// Anys of `struct S { U m; }` where `union U` switches on (unsigned) long long: the union's
/// TypeCode encapsulation starts 4 past a multiple of 8 for half the member-name lengths, and
/// its labels (8-aligned inside it) then sit across a multiple of 8 in the message, where a
/// GIOP 1.2 fragment may be cut (CORBA 3.0 §15.4.9: no primitive split across fragments).
/// Names of 1-32 characters move the labels over every 64-octet fragment boundary.
fn longlong_label_cases() -> Vec<corbina_testpeers::differential::Typed> {
    use corbina::typecode::{StructMember, TcKind, UnionLabel, UnionMember};
    use corbina::TypeCode;
    use corbina_testpeers::differential::{model::Graph, Typed, Val};
    let mut v = Vec::new();
    for len in 1..=32 {
        for (k, disc) in [TcKind::LongLong, TcKind::ULongLong]
            .into_iter()
            .enumerate()
        {
            let labels: [i128; 3] = if disc == TcKind::LongLong {
                [i128::from(i64::MIN), -1, 1 << 40]
            } else {
                [i128::from(u64::MAX), 7, 1 << 62]
            };
            let u = TypeCode::create_union_tc(
                &format!("IDL:dt/U{len}_{k}:1.0"),
                &format!("U{len}_{k}"),
                TypeCode::primitive(disc),
                vec![
                    UnionMember::new(
                        "a",
                        UnionLabel::Value(labels[0]),
                        TypeCode::primitive(TcKind::Long),
                    ),
                    UnionMember::new(
                        "b",
                        UnionLabel::Value(labels[1]),
                        TypeCode::primitive(TcKind::Double),
                    ),
                    UnionMember::new(
                        "c",
                        UnionLabel::Value(labels[2]),
                        TypeCode::primitive(TcKind::LongLong),
                    ),
                ],
            )
            .unwrap();
            let tc = TypeCode::create_struct_tc(
                &format!("IDL:dt/S{len}_{k}:1.0"),
                "S",
                vec![StructMember::new("m".repeat(len), u)],
            )
            .unwrap();
            let arm = (len % 3) as u32;
            let val = match arm {
                0 => Val::Long(-7),
                1 => Val::Double(2.5f64.to_bits()),
                _ => Val::LongLong(i64::MIN + 3),
            };
            v.push(Typed {
                tc,
                val: Val::Struct(vec![Val::Union(
                    labels[arm as usize],
                    Some((arm, Box::new(val))),
                )]),
                graph: Graph::default(),
            });
        }
    }
    v
}

/// The cases above through omniORB C++ at GIOP 1.2 in 64-octet fragments, both byte orders:
/// the cuts that would split a label move before it (`CdrWriter::uncuttable`), and omniORB
/// reads every message right. (JacORB refuses long long discriminators: `longlong-disc`.)
#[test]
fn differential_fragments_keep_longlong_labels_whole() {
    use corbina::cdr::{CdrContext, CdrWriter};
    use corbina_testpeers::differential::{echo_case, to_any, Wire};
    let cases = longlong_label_cases();
    // About half the cases put their labels 4 past a multiple of 8 (an Any at an 8-aligned
    // body, as the echo's argument is).
    let misaligned = cases
        .iter()
        .filter(|t| {
            let any = to_any(t).unwrap();
            let mut w = CdrWriter::new(CdrContext::GIOP_1_2);
            any.write(&mut w).unwrap();
            !w.uncuttable().is_empty()
        })
        .count();
    assert!(
        misaligned >= cases.len() / 3,
        "{misaligned} of {}",
        cases.len()
    );
    let Some(bin) = omnicxx::peers() else { return };
    let (_p, ior) = omnicxx::server(bin, "differential-fragment-labels");
    let mut clients = Clients::new();
    let mut t = Tally::default();
    for order in ORDERS {
        let wire = Wire {
            giop_minor: 2,
            fragments: true,
            order,
        };
        let obj = clients.object(wire, &ior);
        for (i, c) in cases.iter().enumerate() {
            t.ran += 1;
            match echo_case(&obj, c) {
                Ok(()) => t.passed += 1,
                Err(e) => t.failed.push(format!("case {i}, {wire}: {e}")),
            }
        }
    }
    check(
        "differential long long labels in 64-octet fragments (omniORB C++)",
        &t,
    );
}
