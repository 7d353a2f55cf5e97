//! Differential testing against other ORBs (issue 27): random IDL types and values, sent as
//! `Any`s through a real peer's echo object and compared structurally when they come back,
//! and the peers' own random values echoed by a Corbina servant.
//!
//! - [`gen`]: the seeded generator (one `u64` seed → one case, the same everywhere);
//! - [`model`]: the value model, its CDR encoder and decoder and the comparison (graphs up to
//!   sharing: shared stays shared, cycles stay cycles);
//! - [`omnipy`], [`omnicxx`], [`jacorb`]: the peers and their profiles (known defects);
//! - [`thing`]: `dt::ThingNode`, the value an abstract interface holds in a case;
//! - [`statics`]: the static types of `peers/differential_static.idl` through typed
//!   operations.
//!
//! Each case varies the wire too ([`Wire`]): GIOP 1.0, 1.1 or 1.2 and, from 1.1 on,
//! fragments on or off, chosen by the seed; and every case is sent in both byte orders
//! (Corbina's `-ORBbyteOrder`), so a peer reads both and answers in its own.

pub mod gen;
pub mod jacorb;
pub mod model;
pub mod omnicxx;
pub mod omnipy;
pub mod statics;
pub mod thing;

pub use gen::{label_node_tc, label_nodes, Gen, Profile, Rng, Shape};
pub use model::{compare, decode_any, decode_value, idl, show, Typed, Val};

use corbina::cdr::codeset::{CharCodeSet, CodeSets, WCharCodeSet};
use corbina::cdr::{ByteOrder, CdrContext, CdrEncode, CdrReader, CdrWriter};
use corbina::config::Endpoint;
use corbina::giop::Ior;
use corbina::servant::{bad_operation, Servant, ServerRequest};
use corbina::{Any, ObjectRef, Orb, OrbConfig, SystemException};
use std::sync::Arc;

/// How one case travels: the GIOP version, whether messages are fragmented, and the byte
/// order Corbina writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Wire {
    pub giop_minor: u8,
    pub fragments: bool,
    pub order: ByteOrder,
}

/// Both byte orders, each case is sent in.
pub const ORDERS: [ByteOrder; 2] = [ByteOrder::Big, ByteOrder::Little];

impl Wire {
    /// The five variations (GIOP 1.0 has no fragments), chosen by the seed; GIOP 1.1 instead
    /// of 1.0 for a value with wide characters, which GIOP 1.0 cannot carry.
    pub fn for_case(seed: u64, t: &Typed) -> Wire {
        let w = Wire::for_seed(seed);
        if w.giop_minor == 0 && has_wide(t) {
            Wire {
                giop_minor: 1,
                fragments: false,
                ..w
            }
        } else {
            w
        }
    }

    /// The five variations (GIOP 1.0 has no fragments), chosen by the seed; big-endian
    /// (the callers send each case in both orders, [`ORDERS`]).
    pub fn for_seed(seed: u64) -> Wire {
        let (giop_minor, fragments) = match seed % 5 {
            0 => (0, false),
            1 => (1, false),
            2 => (1, true),
            3 => (2, false),
            _ => (2, true),
        };
        Wire {
            giop_minor,
            fragments,
            order: ByteOrder::Big,
        }
    }

    /// The same, in `order`.
    pub fn in_order(self, order: ByteOrder) -> Wire {
        Wire { order, ..self }
    }
}

impl std::fmt::Display for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GIOP 1.{}{}, {}",
            self.giop_minor,
            if self.fragments { " fragmented" } else { "" },
            match self.order {
                ByteOrder::Big => "big-endian",
                ByteOrder::Little => "little-endian",
            }
        )
    }
}

/// The `Any` holding `t` (checked against its TypeCode by Corbina's walker).
pub fn to_any(t: &Typed) -> Result<Any, String> {
    // Reading back an abstract interface holding a value needs its factory.
    thing::register();
    Any::insert_as(t.tc.clone(), t).map_err(|e| format!("Corbina refused the value: {e}"))
}

/// Whether the value holds a wide character or string somewhere (GIOP 1.0 cannot carry
/// one): whether writing it at GIOP 1.0 fails.
pub fn has_wide(t: &Typed) -> bool {
    let Ok(any) = to_any(t) else { return false };
    let mut w = CdrWriter::new(CdrContext::GIOP_1_2.with_giop_minor(0));
    any.write(&mut w).is_err()
}

/// Whether a `char` string or `char` of the value holds a character outside ASCII.
pub fn has_non_ascii(t: &Typed) -> bool {
    fn walk(v: &Val) -> bool {
        match v {
            Val::Str(s) => !s.is_ascii(),
            Val::Char(c) => !c.is_ascii(),
            Val::Struct(vs) | Val::Seq(vs) => vs.iter().any(walk),
            Val::Union(_, Some((_, v))) | Val::Any(_, v) => walk(v),
            _ => false,
        }
    }
    walk(&t.val) || t.graph.nodes.iter().any(|n| n.state.iter().any(walk))
}

/// Whether the value holds a `long double` somewhere.
pub fn has_long_double(t: &Typed) -> bool {
    fn walk(v: &Val) -> bool {
        match v {
            Val::LongDouble(_) => true,
            Val::Struct(vs) | Val::Seq(vs) => vs.iter().any(walk),
            Val::Union(_, Some((_, v))) | Val::Any(_, v) => walk(v),
            _ => false,
        }
    }
    walk(&t.val) || t.graph.nodes.iter().any(|n| n.state.iter().any(walk))
}

/// Corbina against itself: `t` as an `Any` written in `order` at GIOP 1.`minor`, read back
/// and compared.
pub fn self_round_trip(t: &Typed, order: ByteOrder, minor: u8) -> Result<(), String> {
    let any = to_any(t)?;
    let ctx = CdrContext::GIOP_1_2
        .with_giop_minor(minor)
        .with_code_sets(CodeSets {
            char_set: CharCodeSet::Utf8,
            wchar_set: Some(WCharCodeSet::Utf16),
        });
    let mut w = CdrWriter::with_byte_order(order, ctx);
    // An odd start, so that the Any's alignment inside the stream is exercised.
    w.write_octet(7);
    any.write(&mut w).map_err(|e| format!("writing: {e}"))?;
    let bytes = w.into_bytes();
    let mut r = CdrReader::new(&bytes, order, ctx);
    r.read_octet().map_err(|e| e.to_string())?;
    let back = Any::read(&mut r).map_err(|e| format!("reading: {e}"))?;
    r.expect_end().map_err(|e| e.to_string())?;
    let got = decode_any(&back).map_err(|e| format!("decoding: {e}"))?;
    compare(t, &got)
}

/// The echo servant of `peers/differential.idl` (`dt::AnyEcho`): returns the `Any` it got,
/// read fully by Corbina's walker and written again.
pub struct EchoServant;

/// Repository id of `dt::AnyEcho`.
pub const ECHO_ID: &str = "IDL:dt/AnyEcho:1.0";

impl Servant for EchoServant {
    fn primary_interface(&self) -> &'static str {
        ECHO_ID
    }

    fn is_a(&self, id: &str) -> bool {
        id == ECHO_ID
    }

    fn dispatch(&self, req: &mut ServerRequest<'_, '_>) -> Result<(), SystemException> {
        if req.operation() != "echo" {
            return Err(bad_operation());
        }
        let a = Any::read(req.arguments())?;
        req.arguments_done()?;
        req.reply(|w| a.write(w))
    }
}

/// A Corbina ORB serving one [`EchoServant`] on 127.0.0.1; returns it and the IOR.
pub fn serve_echo() -> (Orb, String) {
    serve_echo_in(ByteOrder::NATIVE)
}

/// [`serve_echo`] replying in `order`.
pub fn serve_echo_in(order: ByteOrder) -> (Orb, String) {
    thing::register();
    serve_in(order, Arc::new(EchoServant))
}

/// A Corbina ORB on 127.0.0.1 writing `order`, serving `servant` in its root POA; returns it
/// and the servant's IOR.
pub fn serve_in(order: ByteOrder, servant: Arc<dyn Servant>) -> (Orb, String) {
    let orb = Orb::with_config(OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        byte_order: order,
        ..OrbConfig::default()
    });
    let poa = orb.root_poa();
    let id = poa.activate_object(servant).expect("activate");
    let obj = poa.id_to_reference(&id).expect("reference");
    poa.the_poa_manager().activate().expect("POA manager");
    let ior = orb.object_to_string(&obj).expect("IOR");
    (orb, ior)
}

/// Client ORBs, one per [`Wire`] (the GIOP version is the ORB's highest; fragments come
/// from a 64-octet fragment size; the byte order is the ORB's).
pub struct Clients {
    orbs: Vec<(Wire, Orb)>,
}

impl Default for Clients {
    fn default() -> Self {
        Self::new()
    }
}

impl Clients {
    pub fn new() -> Clients {
        Clients { orbs: Vec::new() }
    }

    /// A reference to `ior` through the ORB for `wire`.
    pub fn object(&mut self, wire: Wire, ior: &str) -> ObjectRef {
        let orb = match self.orbs.iter().find(|(w, _)| *w == wire) {
            Some((_, o)) => o.clone(),
            None => {
                let o = Orb::with_config(OrbConfig {
                    giop_max_minor: wire.giop_minor,
                    fragment_size: wire.fragments.then_some(64),
                    byte_order: wire.order,
                    ..OrbConfig::default()
                });
                self.orbs.push((wire, o.clone()));
                o
            }
        };
        orb.string_to_object(ior).expect("string_to_object")
    }
}

impl Drop for Clients {
    fn drop(&mut self) {
        for (_, o) in self.orbs.drain(..) {
            o.destroy();
        }
    }
}

/// Calls `echo(a)` on `obj`.
pub fn echo(obj: &ObjectRef, a: &Any) -> Result<Any, SystemException> {
    obj.invoke(
        "echo",
        |w| a.write(w),
        Any::read,
        |_, _| Ok::<Option<SystemException>, _>(None),
    )
}

/// One case sent through an echo object: the result, compared.
pub fn echo_case(obj: &ObjectRef, t: &Typed) -> Result<(), String> {
    let any = to_any(t)?;
    let back = echo(obj, &any).map_err(|e| format!("echo raised {e}"))?;
    let got = decode_any(&back).map_err(|e| format!("decoding the reply: {e}"))?;
    compare(t, &got)
}

/// The random case for `seed` under `profile` (`iors`: references an objref may be).
pub fn case(seed: u64, profile: &Profile, iors: &[Ior]) -> Result<Typed, String> {
    Gen::new(seed, profile, iors.to_vec()).case()
}

/// What a failing case prints: seed, wire, IDL, value, and why.
pub fn report(peer: &str, seed: u64, wire: Wire, t: &Typed, why: &str) -> String {
    format!(
        "differential case FAILED: peer {peer}, seed {seed}, {wire}\n{}\nvalue: {}\nwhy: {why}\n\
         replay: cargo run -p corbina-testpeers --bin differential -- --peer {peer} --seed {seed} --cases 1",
        idl(&t.tc),
        show(t)
    )
}

/// An echo peer under test: its name, what the generator may send it, and how to (re)start
/// it (a peer that dies on a case is started again for the next one).
pub struct Peer {
    pub name: String,
    pub profile: Profile,
    start: Box<dyn FnMut() -> (Option<crate::PeerProcess>, String)>,
    process: Option<crate::PeerProcess>,
    pub ior: String,
    /// How often the peer had to be started again.
    pub restarts: u32,
    /// Other peers' echo objects (name, IOR) a failing case is sent through as well: a case
    /// that fails only through this peer is put down to it.
    pub referees: Vec<(String, String)>,
}

impl Peer {
    /// A peer started by `start` (which returns its process, if it owns one, and its IOR).
    pub fn new(
        name: &str,
        profile: Profile,
        mut start: impl FnMut() -> (Option<crate::PeerProcess>, String) + 'static,
    ) -> Peer {
        let (process, ior) = start();
        Peer {
            name: name.into(),
            profile,
            start: Box::new(start),
            process,
            ior,
            restarts: 0,
            referees: Vec::new(),
        }
    }

    /// Whether the peer process has exited.
    fn died(&mut self) -> bool {
        self.process
            .as_mut()
            .is_some_and(|p| p.child_mut().try_wait().ok().flatten().is_some())
    }

    fn restart(&mut self) {
        self.process = None;
        let (p, ior) = (self.start)();
        self.process = p;
        self.ior = ior;
        self.restarts += 1;
    }
}

/// Sends `cases` random cases from `seed` on through `peer`'s echo object (each on the
/// [`Wire`] its seed picks). A failure is checked against Corbina alone (the same value
/// written and read back in both byte orders): when Corbina reads its own bytes back right,
/// the report says the peer is suspect. A peer that died is started again.
pub fn run_forward(peer: &mut Peer, seed: u64, cases: u64, clients: &mut Clients) -> Tally {
    let mut tally = Tally::default();
    for s in seed..seed + cases {
        let iors: Vec<Ior> = Ior::from_stringified(&peer.ior).into_iter().collect();
        let t = match case(s, &peer.profile, &iors) {
            Ok(t) => t,
            Err(e) => {
                tally.ran += 1;
                tally.failed.push(format!("seed {s}: generator: {e}"));
                continue;
            }
        };
        let wire = wire_for(s, &t, &peer.profile);
        for order in ORDERS {
            if order == ByteOrder::Big
                && !peer.profile.long_double_big_endian
                && has_long_double(&t)
            {
                continue;
            }
            forward_one(peer, s, wire.in_order(order), &t, clients, &mut tally);
        }
    }
    tally
}

/// The wire case `t` of `seed` goes on to a peer of `profile` (big-endian).
pub fn wire_for(seed: u64, t: &Typed, profile: &Profile) -> Wire {
    let mut wire = Wire::for_case(seed, t);
    if wire.giop_minor == 1 && !profile.giop_1_1_fragments {
        wire.fragments = false;
    }
    if wire.giop_minor == 0 && !profile.non_ascii_giop_1_0 && has_non_ascii(t) {
        wire.giop_minor = 1;
    }
    if wire.giop_minor == 1 && !profile.wide_giop_1_1 && has_wide(t) {
        wire.giop_minor = 2;
    }
    wire
}

/// One case through `peer` on `wire`, counted in `tally`.
fn forward_one(
    peer: &mut Peer,
    s: u64,
    wire: Wire,
    t: &Typed,
    clients: &mut Clients,
    tally: &mut Tally,
) {
    let obj = clients.object(wire, &peer.ior);
    tally.ran += 1;
    match echo_case(&obj, t) {
        Ok(()) => tally.passed += 1,
        Err(why) => {
            let own = ORDERS
                .iter()
                .try_for_each(|&o| self_round_trip(t, o, wire.giop_minor));
            let mut whose = match own {
                Ok(()) => "Corbina reads its own encoding back right: suspect the peer".into(),
                Err(e) => format!("Corbina fails alone too (suspect Corbina): {e}"),
            };
            if why.contains("COMM_FAILURE") || why.contains("TRANSIENT") {
                // Give a crashed peer's exit time to be seen.
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
            if peer.died() {
                whose.push_str("\nthe peer process died on this case (started again)");
                peer.restart();
            }
            for (name, ior) in &peer.referees {
                let through = clients.object(wire, ior);
                match echo_case(&through, t) {
                    Ok(()) => whose.push_str(&format!("\npasses through {name}")),
                    Err(e) => whose.push_str(&format!("\nfails through {name} too: {e}")),
                }
            }
            tally
                .failed
                .push(report(&peer.name, s, wire, t, &format!("{why}\n{whose}")));
        }
    }
}

/// Corbina against itself over GIOP: each case through Corbina echo servers replying in
/// each byte order, from clients writing each (four round trips a case, on the wire the
/// case's seed picks).
pub fn self_through_orbs(seed: u64, cases: u64, profile: &Profile) -> Tally {
    let mut t = Tally::default();
    let mut clients = Clients::new();
    for order in ORDERS {
        let (orb, ior) = serve_echo_in(order);
        let mut p = Peer::new("self", profile.clone(), move || (None, ior.clone()));
        t.merge(run_forward(&mut p, seed, cases, &mut clients));
        orb.destroy();
    }
    t
}

/// Whether the case holds a custom value.
pub fn has_custom(t: &Typed) -> bool {
    t.graph
        .nodes
        .iter()
        .any(|n| n.tc.type_modifier().ok() == Some(1))
}

/// Whether a custom value of the case holds a value in its state.
pub fn has_value_in_custom(t: &Typed) -> bool {
    fn walk(v: &Val) -> bool {
        match v {
            Val::Value(Some(_)) => true,
            Val::Struct(vs) | Val::Seq(vs) => vs.iter().any(walk),
            Val::Union(_, Some((_, v))) | Val::Any(_, v) => walk(v),
            _ => false,
        }
    }
    t.graph
        .nodes
        .iter()
        .any(|n| n.tc.type_modifier().ok() == Some(1) && n.state.iter().any(walk))
}

/// What a peer does with custom valuetypes it has no factory for: `cases` random cases of
/// `profile` (values on) from `seed` holding one, written by the harness's own encoder
/// (Corbina's `Any` cannot copy a custom value) and sent at GIOP 1.2 as `echo(any)` to the
/// echo object at `ior`; the reply is read the same way and compared. A case a peer cannot
/// take fails with its exception. `nested`: cases whose custom values hold values too.
pub fn probe_custom(
    ior: &str,
    profile: &Profile,
    nested: bool,
    seed: u64,
    cases: u64,
    clients: &mut Clients,
) -> Tally {
    let mut profile = profile.clone();
    profile.custom_values = true;
    profile.values = true;
    let mut tally = Tally::default();
    let mut s = seed;
    while tally.ran < cases && s < seed + cases * 100 {
        s += 1;
        let Ok(t) = case(s, &profile, &[]) else {
            continue;
        };
        if !has_custom(&t) || !nested && has_value_in_custom(&t) {
            continue;
        }
        let obj = clients.object(Wire::for_seed(3).in_order(ByteOrder::Little), ior);
        tally.ran += 1;
        let back = obj.invoke(
            "echo",
            |w| {
                corbina::typecode::encode_type_code(&t.tc, w)?;
                t.encode(w)
            },
            |r| {
                let tc = corbina::typecode::decode_type_code(r)?;
                decode_value(tc, r)
            },
            |_, _| Ok::<Option<SystemException>, _>(None),
        );
        match back
            .map_err(|e| format!("echo raised {e}"))
            .and_then(|got| compare(&t, &got))
        {
            Ok(()) => tally.passed += 1,
            Err(why) => tally
                .failed
                .push(report("custom probe", s, Wire::for_seed(3), &t, &why)),
        }
    }
    tally
}

/// Issue 27 item 1: `LabelNode` lists, cycles and lassos of 1, 2 and 5 nodes with labels of
/// every length 0-9, through the echo object at `ior` on every [`Wire`], in both orders.
pub fn run_label_nodes(peer: &str, ior: &str, clients: &mut Clients) -> Tally {
    run_label_nodes_on(peer, ior, clients, |_| true)
}

/// [`run_label_nodes`] on the wires `wire_ok` accepts.
pub fn run_label_nodes_on(
    peer: &str,
    ior: &str,
    clients: &mut Clients,
    wire_ok: impl Fn(Wire) -> bool,
) -> Tally {
    let mut tally = Tally::default();
    let mut k = 0;
    for shape in [Shape::List, Shape::Cycle, Shape::Lasso] {
        for len in 0..10 {
            for n in [1, 2, 5] {
                let t = label_nodes(n, len, shape);
                let wire = Wire::for_seed(k);
                k += 1;
                if !wire_ok(wire) {
                    continue;
                }
                for order in ORDERS {
                    let wire = wire.in_order(order);
                    tally.ran += 1;
                    match echo_case(&clients.object(wire, ior), &t) {
                        Ok(()) => tally.passed += 1,
                        Err(e) => tally.failed.push(format!(
                            "{peer}: LabelNode {shape:?} of {n}, labels of {len}, {wire}: {e}"
                        )),
                    }
                }
            }
        }
    }
    tally
}

/// Counts of a run.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    /// Round trips made (a case sent in both byte orders counts twice).
    pub ran: u64,
    pub passed: u64,
    /// Failures that are not known: the reports.
    pub failed: Vec<String>,
}

impl Tally {
    pub fn merge(&mut self, o: Tally) {
        self.ran += o.ran;
        self.passed += o.passed;
        self.failed.extend(o.failed);
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} round trips ran, {} passed, {} failed",
            self.ran,
            self.passed,
            self.failed.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differential_self_round_trips_both_byte_orders() {
        let profile = Profile::full();
        let mut ran = 0;
        for seed in 0..300u64 {
            let t = case(seed, &profile, &[]).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            for order in ORDERS {
                for minor in [0, 1, 2] {
                    if minor == 0 && has_wide(&t) {
                        continue;
                    }
                    if let Err(e) = self_round_trip(&t, order, minor) {
                        panic!(
                            "{}",
                            report(
                                "self",
                                seed,
                                Wire::for_seed(seed),
                                &t,
                                &format!("{order:?}: {e}")
                            )
                        );
                    }
                    ran += 1;
                }
            }
        }
        eprintln!("differential self: {ran} round trips");
    }

    /// Seeds that found Corbina bugs, each fixed in its own commit: 10 (a value's base did not
    /// bind its own recursive references in the walker), 832 (ValueInput refused a chunk
    /// starting with an indirection, which ValueOutput writes), 886 (a struct in a chunked
    /// value whose first member is a value, right after a chunk's end), 1470 (a fixed-size
    /// struct's block alignment checked before entering its chunk).
    #[test]
    fn differential_regressions_self() {
        let profile = Profile::full();
        for seed in [10u64, 832, 886, 1470] {
            let t = case(seed, &profile, &[]).unwrap();
            for order in ORDERS {
                for minor in [1, 2] {
                    if let Err(e) = self_round_trip(&t, order, minor) {
                        panic!("{}", report("self", seed, Wire::for_seed(seed), &t, &e));
                    }
                }
            }
        }
    }

    #[test]
    fn differential_self_through_orbs_both_orders() {
        let t = self_through_orbs(1, 60, &Profile::full());
        eprintln!("differential self over GIOP: {t}");
        assert_eq!(t.ran, 240);
        assert!(t.failed.is_empty(), "{}", t.failed.join("\n\n"));
    }

    #[test]
    fn differential_label_nodes_self() {
        for shape in [Shape::List, Shape::Cycle, Shape::Lasso] {
            for len in 0..10 {
                for n in [1, 2, 5] {
                    let t = label_nodes(n, len, shape);
                    for order in ORDERS {
                        self_round_trip(&t, order, 2)
                            .unwrap_or_else(|e| panic!("{shape:?} {n} nodes, label {len}: {e}"));
                    }
                }
            }
        }
    }

    /// JacORB's profile leaves out U+FEFF/U+FFFE where JacORB takes them for a byte-order
    /// mark (`bom-units`), changing nothing else: seed 4010030's one `wchar` U+FEFF (in a
    /// nested Any) becomes U+FEFC.
    #[test]
    fn differential_bom_units_switch_changes_only_marks() {
        let mut on = jacorb::profile();
        on.bom_units = true;
        let off = jacorb::profile();
        let with = show(&case(4010030, &on, &[]).unwrap());
        let without = show(&case(4010030, &off, &[]).unwrap());
        assert_eq!(with.matches("WChar('\\u{feff}')").count(), 1, "{with}");
        assert_eq!(with.replace("\\u{feff}", "\u{fefc}"), without);
    }

    #[test]
    fn comparison_sees_lost_sharing() {
        // Two members pointing at one node, against two equal but distinct nodes.
        let tc = label_node_tc();
        let st = corbina::TypeCode::create_struct_tc(
            "IDL:dt/Pair:1.0",
            "Pair",
            vec![
                corbina::typecode::StructMember::new("a", tc.clone()),
                corbina::typecode::StructMember::new("b", tc.clone()),
            ],
        )
        .unwrap();
        let node = |id| model::Node {
            tc: tc.clone(),
            state: vec![Val::Long(id), Val::Str("x".into()), Val::Value(None)],
        };
        let shared = Typed {
            tc: st.clone(),
            val: Val::Struct(vec![Val::Value(Some(0)), Val::Value(Some(0))]),
            graph: model::Graph {
                nodes: vec![node(1)],
            },
        };
        let split = Typed {
            tc: st,
            val: Val::Struct(vec![Val::Value(Some(0)), Val::Value(Some(1))]),
            graph: model::Graph {
                nodes: vec![node(1), node(1)],
            },
        };
        assert!(compare(&shared, &shared).is_ok());
        assert!(compare(&shared, &split).unwrap_err().contains("sharing"));
        assert!(compare(&split, &shared).unwrap_err().contains("sharing"));
        // A cycle against a list of the same labels.
        let cyc = label_nodes(3, 2, Shape::Cycle);
        let list = label_nodes(3, 2, Shape::List);
        assert!(compare(&cyc, &list).is_err());
        assert!(compare(&cyc, &cyc).is_ok());
    }
}
