//! The differential harness's long mode (issue 27):
//!
//! ```text
//! differential [--peer omniorbpy|self] [--seed S] [--cases N] [--ior IOR] [--reverse]
//! ```
//!
//! sends N random cases from seed S through the peer's echo object (started here, or the
//! one at `--ior`) and prints every failure (its IDL, value and replay line) and a tally.
//! `--reverse` runs the peer's own random cases against a Corbina echo servant instead;
//! `--peer self` round-trips through Corbina alone, both byte orders, GIOP 1.0-1.2. Exits 1
//! when a case failed.

use corbina::cdr::ByteOrder;
use corbina_testpeers::differential::{
    case, has_wide, omnipy, report, run_forward, self_round_trip, serve_echo, Clients, Profile,
    Tally, Wire,
};

fn main() {
    let mut peer = "omniorbpy".to_owned();
    let (mut seed, mut cases) = (1u64, 100u64);
    let mut ior: Option<String> = None;
    let mut reverse = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| usage(&a));
        match a.as_str() {
            "--peer" => peer = val(),
            "--seed" => seed = val().parse().unwrap_or_else(|_| usage("--seed")),
            "--cases" => cases = val().parse().unwrap_or_else(|_| usage("--cases")),
            "--ior" => ior = Some(val()),
            "--reverse" => reverse = true,
            _ => usage(&a),
        }
    }
    let started = std::time::Instant::now();
    let tally = match peer.as_str() {
        "self" => self_run(seed, cases),
        "omniorbpy" => {
            let Some(py) = omnipy::python() else {
                eprintln!("omniORBpy is not available");
                std::process::exit(2);
            };
            if reverse {
                let (orb, ior) = serve_echo();
                let t = omnipy::reverse(py, &ior, seed, cases);
                orb.destroy();
                t
            } else {
                let (_server, ior) = match ior {
                    Some(i) => (None, i),
                    None => {
                        let (p, i) = omnipy::server(py, "differential-long");
                        (Some(p), i)
                    }
                };
                let mut clients = Clients::new();
                run_forward(
                    "omniorbpy",
                    &ior,
                    &omnipy::profile(),
                    seed,
                    cases,
                    &mut clients,
                )
            }
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

fn self_run(seed: u64, cases: u64) -> Tally {
    let profile = Profile::full();
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

fn usage(what: &str) -> ! {
    eprintln!(
        "bad argument {what}\nusage: differential [--peer omniorbpy|self] [--seed S] [--cases N] [--ior IOR] [--reverse]"
    );
    std::process::exit(2)
}
