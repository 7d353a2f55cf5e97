//! The differential harness's long mode (issue 27):
//!
//! ```text
//! differential [--peer omniorbpy|omniorb|jacorb|self|serve] [--seed S] [--cases N] [--ior IOR] [--reverse] [--static] [--depth D] [--all-kinds] [--referees] [--nodes] [--show]
//! ```
//!
//! sends N random cases from seed S through the peer's echo object (started here, or the
//! one at `--ior`) and prints every failure (its IDL, value and replay line) and a tally.
//! `--referees` sends each failing case through the other peers as well (which tells whose
//! defect it is); `--all-kinds` drops the peer's profile (every kind, known defects too);
//! `DIFFERENTIAL_OFF=a,b` turns profile switches off; `--depth D` makes smaller cases.
//! `--reverse` runs the peer's own random cases against a Corbina echo servant instead;
//! `--peer self` round-trips through Corbina alone: the `Any` written and read back in both
//! byte orders at GIOP 1.0-1.2, then sent through Corbina echo servers replying big- and
//! little-endian from clients writing either order (each case's wire from its seed);
//! `--probe-custom --ior IOR` sends cases holding custom valuetypes (written by the harness's
//! own encoder) to the echo object at IOR: what a peer does with custom values it has no
//! factory for;
//! `--static` sends random values of `peers/differential_static.idl`'s types through the
//! peer's typed `dts::StaticEcho` instead (omniorb, jacorb, self);
//! `--peer serve` prints the IOR of a Corbina echo object and serves it for `--cases`
//! seconds (for running a peer's client by hand). Every case goes in both byte orders; the
//! reverse runs use a big-endian and a little-endian Corbina echo server. Exits 1 when a
//! case failed.

use corbina::cdr::ByteOrder;
use corbina_testpeers::differential::{
    case, has_wide, idl, jacorb, omnicxx, omnipy, probe_custom, report, run_forward,
    run_label_nodes, self_round_trip, self_through_orbs, serve_echo, serve_echo_in, show, statics,
    Clients, Peer, Profile, Tally, Wire, ORDERS,
};

fn main() {
    let mut peer = "omniorbpy".to_owned();
    let (mut seed, mut cases) = (1u64, 100u64);
    let mut ior: Option<String> = None;
    let mut reverse = false;
    // The static types' typed operations instead of Anys.
    let mut static_types = false;
    // What the peer at `--ior` does with unknown custom values.
    let mut probe = false;
    // Every kind the generator has, known peer defects included (for triage).
    let mut all_kinds = false;
    // Send a failing case through the other peers too.
    let mut referees = false;
    // Issue 27's LabelNode graphs instead of random cases.
    let mut nodes = false;
    // Print the cases (IDL and value) without running them.
    let mut show_only = false;
    let mut depth: Option<u32> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| usage(&a));
        match a.as_str() {
            "--peer" => peer = val(),
            "--seed" => seed = val().parse().unwrap_or_else(|_| usage("--seed")),
            "--cases" => cases = val().parse().unwrap_or_else(|_| usage("--cases")),
            "--ior" => ior = Some(val()),
            "--reverse" => reverse = true,
            "--static" => static_types = true,
            "--probe-custom" => probe = true,
            "--all-kinds" => all_kinds = true,
            "--referees" => referees = true,
            "--nodes" => nodes = true,
            "--show" => show_only = true,
            "--depth" => depth = Some(val().parse().unwrap_or_else(|_| usage("--depth"))),
            _ => usage(&a),
        }
    }
    if show_only {
        let profile = match peer.as_str() {
            "omniorb" => omnicxx::profile(),
            "omniorbpy" => omnipy::profile(),
            "jacorb" => jacorb::profile(),
            _ => Profile::full(),
        };
        let profile = with_depth(profile, depth);
        for s in seed..seed + cases {
            match case(s, &profile, &[]) {
                Ok(t) => println!(
                    "seed {s}, {}:\n{}\nvalue: {}\n",
                    Wire::for_case(s, &t),
                    idl(&t.tc),
                    show(&t)
                ),
                Err(e) => println!("seed {s}: generator: {e}"),
            }
        }
        return;
    }
    if peer == "serve" {
        // A Corbina echo object for manual runs of other peers' clients: its IOR, then
        // serving for `--cases` seconds.
        let (orb, ior) = serve_echo();
        println!("{ior}");
        std::thread::sleep(std::time::Duration::from_secs(cases));
        orb.destroy();
        return;
    }
    let started = std::time::Instant::now();
    let tally = match peer.as_str() {
        _ if probe => {
            let ior = ior
                .clone()
                .unwrap_or_else(|| usage("--probe-custom needs --ior"));
            let profile = match peer.as_str() {
                "omniorb" => omnicxx::profile(),
                "jacorb" => jacorb::profile(),
                "omniorbpy" => omnipy::profile(),
                _ => Profile::full(),
            };
            probe_custom(&ior, &profile, true, seed, cases, &mut Clients::new())
        }
        _ if static_types => static_run(&peer, seed, cases),
        "self" => {
            let mut t = self_run(seed, cases, depth);
            t.merge(self_through_orbs(
                seed,
                cases,
                &with_depth(Profile::full(), depth),
            ));
            t
        }
        "omniorb" | "omniorbpy" | "jacorb" if !reverse => {
            let mut p = match (peer.as_str(), ior) {
                (name, Some(i)) => {
                    let profile = match name {
                        "omniorb" => omnicxx::profile(),
                        "jacorb" => jacorb::profile(),
                        _ => omnipy::profile(),
                    };
                    Peer::new(name, profile, move || (None, i.clone()))
                }
                ("jacorb", None) => {
                    if !jacorb::available() {
                        eprintln!("JacORB is not available");
                        std::process::exit(2);
                    }
                    Peer::new("jacorb", jacorb::profile(), move || {
                        let (p, i) = jacorb::server("differential-long-jacorb");
                        (Some(p), i)
                    })
                }
                ("omniorb", None) => {
                    let Some(bin) = omnicxx::peers() else {
                        eprintln!("omniORB is not available");
                        std::process::exit(2);
                    };
                    Peer::new("omniorb", omnicxx::profile(), move || {
                        let (p, i) = omnicxx::server(bin, "differential-long-omniorb");
                        (Some(p), i)
                    })
                }
                (_, None) => {
                    let Some(py) = omnipy::python() else {
                        eprintln!("omniORBpy is not available");
                        std::process::exit(2);
                    };
                    Peer::new("omniorbpy", omnipy::profile(), move || {
                        let (p, i) = omnipy::server(py, "differential-long-omnipy");
                        (Some(p), i)
                    })
                }
            };
            // The other peers referee a failing case (started here when available).
            let mut referee_procs = Vec::new();
            if referees {
                if p.name != "omniorb" {
                    if let Some(bin) = omnicxx::peers() {
                        let (proc_, ior) = omnicxx::server(bin, "differential-referee-omniorb");
                        referee_procs.push(proc_);
                        p.referees.push(("omniorb".into(), ior));
                    }
                }
                if p.name != "omniorbpy" {
                    if let Some(py) = omnipy::python() {
                        let (proc_, ior) = omnipy::server(py, "differential-referee-omnipy");
                        referee_procs.push(proc_);
                        p.referees.push(("omniorbpy".into(), ior));
                    }
                }
                if p.name != "jacorb" && jacorb::available() {
                    let (proc_, ior) = jacorb::server("differential-referee-jacorb");
                    referee_procs.push(proc_);
                    p.referees.push(("jacorb".into(), ior));
                }
            }
            if all_kinds {
                p.profile = Profile::full();
            }
            if let Ok(off) = std::env::var("DIFFERENTIAL_OFF") {
                // Comma-separated profile switches to turn off, for triage.
                for k in off.split(',') {
                    p.profile.set(k, false);
                }
            }
            if let Ok(on) = std::env::var("DIFFERENTIAL_ON") {
                // Comma-separated profile switches to turn on (a listed peer defect's cases).
                for k in on.split(',') {
                    p.profile.set(k, true);
                }
            }
            if let Some(d) = depth {
                p.profile.max_depth = d;
            }
            let mut clients = Clients::new();
            let t = if nodes {
                run_label_nodes(&p.name.clone(), &p.ior.clone(), &mut clients)
            } else {
                run_forward(&mut p, seed, cases, &mut clients)
            };
            if p.restarts > 0 {
                println!("the peer was started again {} times", p.restarts);
            }
            t
        }
        "omniorbpy" => {
            let Some(py) = omnipy::python() else {
                eprintln!("omniORBpy is not available");
                std::process::exit(2);
            };
            let mut t = Tally::default();
            for order in ORDERS {
                let (orb, ior) = serve_echo_in(order);
                t.merge(omnipy::reverse(py, &ior, seed, cases));
                orb.destroy();
            }
            t
        }
        other => usage(other),
    };
    for f in &tally.failed {
        println!("{f}\n");
    }
    println!(
        "differential {peer}{}: seeds {seed}..{}: {tally} in {:.1} s",
        if reverse { " (reverse)" } else { "" },
        seed + cases,
        started.elapsed().as_secs_f64()
    );
    std::process::exit(i32::from(!tally.failed.is_empty()));
}

fn with_depth(mut p: Profile, depth: Option<u32>) -> Profile {
    if let Some(d) = depth {
        p.max_depth = d;
    }
    p
}

fn self_run(seed: u64, cases: u64, depth: Option<u32>) -> Tally {
    let profile = with_depth(Profile::full(), depth);
    let mut t = Tally::default();
    for s in seed..seed + cases {
        t.ran += 1;
        let c = match case(s, &profile, &[]) {
            Ok(c) => c,
            Err(e) => {
                t.failed.push(format!("seed {s}: generator: {e}"));
                continue;
            }
        };
        let res = [ByteOrder::Big, ByteOrder::Little]
            .iter()
            .try_for_each(|&o| {
                (0..3)
                    .filter(|&m| m > 0 || !has_wide(&c))
                    .try_for_each(|m| {
                        self_round_trip(&c, o, m).map_err(|e| format!("{o:?} 1.{m}: {e}"))
                    })
            });
        match res {
            Ok(()) => t.passed += 1,
            Err(e) => t.failed.push(report("self", s, Wire::for_seed(s), &c, &e)),
        }
    }
    t
}

/// `--static`: the static types through `peer`'s typed echo.
fn static_run(peer: &str, seed: u64, cases: u64) -> Tally {
    let mut clients = Clients::new();
    match peer {
        "self" => {
            let mut t = Tally::default();
            for order in ORDERS {
                let (orb, ior) = statics::serve_static_in(order);
                let profile = Profile::full();
                t.merge(statics::run_static(
                    "self",
                    &ior,
                    &profile,
                    seed,
                    cases,
                    &mut clients,
                ));
                orb.destroy();
            }
            t
        }
        "omniorb" => {
            let Some(bin) = omnicxx::peers() else {
                eprintln!("omniORB is not available");
                std::process::exit(2);
            };
            let (_p, ior) = omnicxx::static_server(bin, "differential-long-static-omniorb");
            let profile = omnicxx::static_profile();
            statics::run_static("omniorb", &ior, &profile, seed, cases, &mut clients)
        }
        "jacorb" => {
            if !jacorb::available() {
                eprintln!("JacORB is not available");
                std::process::exit(2);
            }
            let (_p, ior) = jacorb::static_server("differential-long-static-jacorb");
            let profile = jacorb::static_profile();
            statics::run_static("jacorb", &ior, &profile, seed, cases, &mut clients)
        }
        other => usage(other),
    }
}

fn usage(what: &str) -> ! {
    eprintln!(
        "bad argument {what}\nusage: differential [--peer omniorbpy|omniorb|jacorb|self|serve] [--seed S] [--cases N] [--ior IOR] [--reverse] [--static] [--depth D] [--all-kinds] [--referees] [--nodes] [--show]"
    );
    std::process::exit(2)
}
