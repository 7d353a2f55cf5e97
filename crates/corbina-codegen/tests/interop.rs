//! Marshalling interop of generated code with omniORB, for every kind of generated type
//! (`tests/interop/types.idl`): Corbina's generated client calls every echo operation of an
//! omniORB C++ server (`tests/interop/types_server.cc`) and gets its values back unchanged,
//! and an omniORB C++ client (`tests/interop/types_client.cc`) sends known values to a
//! Corbina server whose servant checks them against the same values and echoes them.
//!
//! The Rust side is the checked-in `tests/golden/types.rs`, which the CLI must reproduce
//! (`BLESS=1` rewrites it). Without omniORB installed the peer tests print why and pass,
//! unless `REQUIRE_OMNIORB_PEERS` is set.

#[allow(dead_code)]
mod gen {
    include!("golden/types.rs");
}

use corbina::config::Endpoint;
use corbina::{Any, Fixed, LongDouble, ObjectRef, Orb, OrbConfig, SystemException};
use corbina_testpeers::{build_peers, fresh_dir, start_with_ior, PeerBuild};
use gen::interop::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

const IDL: &str = "tests/interop/types.idl";
const GOLDEN: &str = "tests/golden/types.rs";

#[test]
fn cli_reproduces_golden_types_rs() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("interop-gen-{}", std::process::id()));
    let o = Command::new(env!("CARGO_BIN_EXE_corbina-idl"))
        .arg("--no-format")
        .arg("-o")
        .arg(&out)
        .arg(IDL)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let src = std::fs::read_to_string(out.join("types.rs")).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(GOLDEN, &src).unwrap();
        return;
    }
    assert!(
        std::fs::read_to_string(GOLDEN).unwrap_or_default() == src,
        "{GOLDEN} is out of date (rerun with BLESS=1)"
    );
}

// ---- The known values; types_client.cc sends the same ones. ----

/// omniORB 4.2 on x86-64 does not put IEEE 754 binary128 on the wire for `long double`
/// (CORBA's format) but its own rendering of the x87 80-bit type, so long double *values*
/// do not interoperate. Their framing does (16 bytes aligned to 8: the members after `ld`
/// come through), and Corbina carries the 16 bytes it receives unchanged, which
/// types_client.cc checks. Values are compared without it.
fn without_ld(p: &Prims) -> Prims {
    Prims {
        ld: LongDouble::from_f64(0.0),
        ..*p
    }
}

fn prims() -> Prims {
    Prims {
        s: -12345,
        us: 54321,
        l: -2_000_000_000,
        ul: 4_000_000_000,
        ll: -9_000_000_000_000_000_000,
        ull: 18_000_000_000_000_000_000,
        f: 1.5,
        d: -2.25e100,
        ld: LongDouble::from_f64(3.75),
        b: true,
        o: 0xab,
        c: b'Z',
        wc: 'Ω',
    }
}

fn point(i: i32) -> Point {
    Point {
        x: i * 10 + 1,
        y: -(i * 7),
        z: f64::from(i) * 0.5,
    }
}

fn points() -> Points {
    (0..3).map(point).collect()
}

fn nested() -> Nested {
    Nested {
        origin: Point { x: 3, y: 4, z: 5.5 },
        tint: Color::Blue,
        corners: [
            Point { x: 1, y: 2, z: 3.0 },
            Point {
                x: -1,
                y: -2,
                z: -3.0,
            },
        ],
    }
}

fn texts() -> Texts {
    Texts {
        s: "hello, omniORB".into(),
        bs: "bounded".into(),
        ws: "wide ✓ text".into(),
        bws: "wïde".into(),
        longs: vec![1, -2, 3, i32::MAX],
        octets: vec![0, 1, 254, 255],
        strings: vec!["a".into(), String::new(), "ccc".into()],
        colors: vec![Color::Green, Color::Red],
        amount: Fixed::new(123_456_789, 9, 3).unwrap(),
    }
}

fn grid() -> Grid {
    [[1, 2, 3], [4, 5, 6]]
}

fn pair() -> Pair {
    [
        Point { x: 7, y: 8, z: 9.0 },
        Point {
            x: -7,
            y: -8,
            z: -9.0,
        },
    ]
}

fn names() -> Names {
    ["alpha".into(), "beta".into(), String::new()]
}

fn price() -> Price {
    Fixed::new(-12345, 5, 2).unwrap()
}

fn points_seq_seq() -> PointsSeqSeq {
    vec![vec![point(0)], vec![], points()]
}

fn by_longs() -> Vec<ByLong> {
    vec![
        ByLong::Text("text".into()),
        ByLong::Number(3, 2.5),
        ByLong::Where(point(4)),
        ByLong::Raw(42, 7),
    ]
}

fn by_enums() -> Vec<ByEnum> {
    vec![ByEnum::G("green".into()), ByEnum::B(vec![1, 2, 3])]
}

fn by_chars() -> Vec<ByChar> {
    vec![ByChar::B(nested()), ByChar::A(-5)]
}

fn by_bools() -> Vec<ByBool> {
    vec![ByBool::Yes("yes".into()), ByBool::No(-1)]
}

fn unions() -> Unions {
    vec![
        ByLong::Text("x".into()),
        ByLong::Number(2, -1.0),
        ByLong::Raw(-100, 9),
    ]
}

fn leaf(label: &str) -> Tree {
    Tree {
        label: label.into(),
        children: vec![],
    }
}

fn tree() -> Tree {
    Tree {
        label: "root".into(),
        children: vec![
            leaf("a"),
            Tree {
                label: "b".into(),
                children: vec![leaf("b1")],
            },
        ],
    }
}

/// Sent; omniORB's rendering comes back (see `without_ld`).
fn long_double() -> LongDouble {
    LongDouble::from_f64(-0.125)
}

const WCHAR: char = 'Ж';
const WSTRING: &str = "ωmega";

// ---- omniORB peers ----

/// Builds the C++ peers of `tests/interop` once; `None` (with a note) when omniORB is missing.
fn peers() -> Option<&'static Path> {
    build_peers(&PeerBuild {
        name: "codegen-interop",
        makefile_dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop"),
        targets: &[],
        pkg_config: "omniDynamic4",
    })
}

fn loopback_orb() -> Orb {
    Orb::with_config(OrbConfig {
        endpoints: vec![Endpoint {
            host: "127.0.0.1".into(),
            port: 0,
        }],
        ..Default::default()
    })
}

#[test]
fn corbina_client_round_trips_every_type_through_omniorb_server() {
    let Some(bin) = peers() else { return };
    let ior_file = fresh_dir("interop-server").join("types.ior");
    let (_server, ior) = start_with_ior(
        "types_server",
        Command::new(bin.join("types_server"))
            .arg(&ior_file)
            .args(["-ORBendPoint", "giop:tcp:127.0.0.1:"]),
        &ior_file,
    );
    // The server ORB also serves the reference passed in `echo_ref` and `Holder`.
    let orb = loopback_orb();
    let e = TypesEcho::narrow(&orb.string_to_object(&ior).unwrap()).unwrap();

    assert_eq!(
        without_ld(&e.echo_prims(&prims()).unwrap()),
        without_ld(&prims())
    );
    let extremes = Prims {
        s: i16::MIN,
        us: u16::MAX,
        l: i32::MIN,
        ul: u32::MAX,
        ll: i64::MIN,
        ull: u64::MAX,
        f: f32::MAX,
        d: f64::MIN_POSITIVE,
        ld: LongDouble::from_f64(-1e300),
        b: false,
        o: 0,
        c: 0x7f,
        wc: '\u{fffd}',
    };
    assert_eq!(
        without_ld(&e.echo_prims(&extremes).unwrap()),
        without_ld(&extremes)
    );
    assert_eq!(e.echo_point(&point(5)).unwrap(), point(5));
    assert_eq!(e.echo_points(&points()).unwrap(), points());
    let many: Points = (0..1000).map(point).collect();
    assert_eq!(e.echo_points(&many).unwrap(), many);
    assert_eq!(e.echo_points(&[]).unwrap(), Points::new());
    assert_eq!(e.echo_nested(&nested()).unwrap(), nested());
    assert_eq!(e.echo_texts(&texts()).unwrap(), texts());
    assert_eq!(e.echo_texts_alias(&texts()).unwrap(), texts());
    assert_eq!(e.echo_grid(&grid()).unwrap(), grid());
    assert_eq!(e.echo_pair(&pair()).unwrap(), pair());
    assert_eq!(e.echo_names(&names()).unwrap(), names());
    assert_eq!(e.echo_price(price()).unwrap(), price());
    assert_eq!(
        e.echo_points_seq_seq(&points_seq_seq()).unwrap(),
        points_seq_seq()
    );
    for c in Color::VALUES {
        assert_eq!(e.echo_color(c).unwrap(), c);
    }
    for u in by_longs() {
        assert_eq!(e.echo_by_long(&u).unwrap(), u);
    }
    for u in by_enums().into_iter().chain([ByEnum::R(-9)]) {
        assert_eq!(e.echo_by_enum(&u).unwrap(), u);
    }
    for u in by_chars().into_iter().chain([ByChar::Default_(b'z')]) {
        assert_eq!(e.echo_by_char(&u).unwrap(), u);
    }
    for u in by_bools() {
        assert_eq!(e.echo_by_bool(&u).unwrap(), u);
    }
    assert_eq!(e.echo_unions(&unions()).unwrap(), unions());
    assert_eq!(e.echo_tree(&tree()).unwrap(), tree());

    // References: the server's own, and nil.
    let holder = Holder {
        name: "holder".into(),
        target: Some(e.clone()),
        any_obj: None,
    };
    let back = e.echo_holder(&holder).unwrap();
    assert_eq!(back.name, "holder");
    assert!(back.any_obj.is_none());
    let target = back.target.expect("target comes back");
    assert_eq!(target.as_object().ior(), e.as_object().ior());
    // The reference that came back works.
    assert_eq!(target.echo_color(Color::Red).unwrap(), Color::Red);
    let back = e.echo_ref(Some(&e)).unwrap().expect("not nil");
    assert_eq!(back.as_object().ior(), e.as_object().ior());
    assert!(e.echo_ref(None).unwrap().is_none());

    // any holding a struct, and holding a string.
    let any = Any::insert(&nested()).unwrap();
    let back = e.echo_any(&any).unwrap();
    assert_eq!(back.type_code(), &Nested::type_code());
    assert_eq!(back.extract::<Nested>(), Some(nested()));
    let back = e.echo_any(&Any::from_string("in an any").unwrap()).unwrap();
    assert_eq!(back.to_string_value().as_deref(), Some("in an any"));
    // An any holding a recursive TypeCode (Tree contains sequence<Tree>): omniORB unmarshals
    // the TypeCode's indirection and marshals it back.
    let any = Any::insert(&tree()).unwrap();
    let back = e.echo_any(&any).unwrap();
    assert!(back.type_code().equivalent(&Tree::type_code()));
    assert_eq!(back.extract::<Tree>(), Some(tree()));

    // Framing only (see `without_ld`).
    e.echo_long_double(long_double()).unwrap();
    assert_eq!(e.echo_wchar(WCHAR).unwrap(), WCHAR);
    assert_eq!(e.echo_wstring(WSTRING).unwrap(), WSTRING);

    // inout, out and a user exception with members.
    let mut t = tree();
    let p = e.swap(&mut t, &points()).unwrap();
    let mut want = tree();
    want.children.push(leaf("swapped"));
    assert_eq!(t, want);
    let mut reversed = points();
    reversed.reverse();
    assert_eq!(p, reversed);
    match e.fail(17, "because", &points()) {
        Err(types_echo::FailError::Failed(f)) => assert_eq!(
            f,
            Failed {
                code: 17,
                why: "because".into(),
                r#where: points(),
            }
        ),
        other => panic!("expected Failed, got {other:?}"),
    }
    orb.shutdown(true);
}

/// The Corbina servant: checks that every value the omniORB client sends is one of the
/// known values, then echoes it.
struct Echo {
    me: Mutex<Option<TypesEcho>>,
    mismatches: Arc<Mutex<Vec<String>>>,
}

impl Echo {
    fn expect<T: PartialEq + std::fmt::Debug>(&self, op: &str, got: &T, want: &[T]) {
        if !want.contains(got) {
            self.mismatches
                .lock()
                .unwrap()
                .push(format!("{op}: got {got:?}, want one of {want:?}"));
        }
    }

    fn is_me(&self, r: Option<&TypesEcho>) -> bool {
        let me = self.me.lock().unwrap();
        match (r, me.as_ref()) {
            (Some(r), Some(me)) => r.as_object().ior() == me.as_object().ior(),
            _ => false,
        }
    }
}

type R<T> = Result<T, SystemException>;

impl TypesEchoServant for Echo {
    fn echo_prims(&self, v: &Prims) -> R<Prims> {
        self.expect("echo_prims", &without_ld(v), &[without_ld(&prims())]);
        Ok(*v)
    }
    fn echo_point(&self, v: &Point) -> R<Point> {
        self.expect("echo_point", v, &[point(5)]);
        Ok(*v)
    }
    fn echo_points(&self, v: &[Point]) -> R<Points> {
        self.expect("echo_points", &v.to_vec(), &[points()]);
        Ok(v.to_vec())
    }
    fn echo_nested(&self, v: &Nested) -> R<Nested> {
        self.expect("echo_nested", v, &[nested()]);
        Ok(*v)
    }
    fn echo_texts(&self, v: &Texts) -> R<Texts> {
        self.expect("echo_texts", v, &[texts()]);
        Ok(v.clone())
    }
    fn echo_texts_alias(&self, v: &TextsAlias) -> R<TextsAlias> {
        self.expect("echo_texts_alias", v, &[texts()]);
        Ok(v.clone())
    }
    fn echo_grid(&self, v: &Grid) -> R<Grid> {
        self.expect("echo_grid", v, &[grid()]);
        Ok(*v)
    }
    fn echo_pair(&self, v: &Pair) -> R<Pair> {
        self.expect("echo_pair", v, &[pair()]);
        Ok(*v)
    }
    fn echo_names(&self, v: &Names) -> R<Names> {
        self.expect("echo_names", v, &[names()]);
        Ok(v.clone())
    }
    fn echo_price(&self, v: Price) -> R<Price> {
        self.expect("echo_price", &v, &[price()]);
        Ok(v)
    }
    fn echo_points_seq_seq(&self, v: &[Points]) -> R<PointsSeqSeq> {
        self.expect("echo_points_seq_seq", &v.to_vec(), &[points_seq_seq()]);
        Ok(v.to_vec())
    }
    fn echo_color(&self, v: Color) -> R<Color> {
        self.expect("echo_color", &v, &Color::VALUES);
        Ok(v)
    }
    fn echo_by_long(&self, v: &ByLong) -> R<ByLong> {
        self.expect("echo_by_long", v, &by_longs());
        Ok(v.clone())
    }
    fn echo_by_enum(&self, v: &ByEnum) -> R<ByEnum> {
        self.expect("echo_by_enum", v, &by_enums());
        Ok(v.clone())
    }
    fn echo_by_char(&self, v: &ByChar) -> R<ByChar> {
        self.expect("echo_by_char", v, &by_chars());
        Ok(*v)
    }
    fn echo_by_bool(&self, v: &ByBool) -> R<ByBool> {
        self.expect("echo_by_bool", v, &by_bools());
        Ok(v.clone())
    }
    fn echo_unions(&self, v: &[ByLong]) -> R<Unions> {
        self.expect("echo_unions", &v.to_vec(), &[unions()]);
        Ok(v.to_vec())
    }
    fn echo_tree(&self, v: &Tree) -> R<Tree> {
        self.expect("echo_tree", v, &[tree()]);
        Ok(v.clone())
    }
    fn echo_holder(&self, v: &Holder) -> R<Holder> {
        self.expect("echo_holder.name", &v.name, &["holder".to_string()]);
        self.expect(
            "echo_holder.target is me",
            &self.is_me(v.target.as_ref()),
            &[true],
        );
        self.expect("echo_holder.any_obj nil", &v.any_obj.is_none(), &[true]);
        Ok(v.clone())
    }
    fn echo_ref(&self, v: Option<&TypesEcho>) -> R<Option<TypesEcho>> {
        self.expect("echo_ref", &(v.is_none() || self.is_me(v)), &[true]);
        Ok(v.cloned())
    }
    fn echo_any(&self, v: &Any) -> R<Any> {
        self.expect("echo_any", &v.extract::<Nested>(), &[Some(nested())]);
        Ok(v.clone())
    }
    fn echo_long_double(&self, v: LongDouble) -> R<LongDouble> {
        // Not compared (see `without_ld`); echoed byte for byte.
        Ok(v)
    }
    fn echo_wchar(&self, v: char) -> R<char> {
        self.expect("echo_wchar", &v, &[WCHAR]);
        Ok(v)
    }
    fn echo_wstring(&self, v: &str) -> R<String> {
        self.expect("echo_wstring", &v, &[WSTRING]);
        Ok(v.into())
    }
    fn swap(&self, t: &mut Tree, q: &[Point]) -> R<Points> {
        self.expect("swap.t", t, &[tree()]);
        self.expect("swap.q", &q.to_vec(), &[points()]);
        t.children.push(leaf("swapped"));
        Ok(q.iter().rev().copied().collect())
    }
    fn fail(&self, code: i32, why: &str, r#where: &[Point]) -> Result<(), types_echo::FailError> {
        Err(Failed {
            code,
            why: why.into(),
            r#where: r#where.to_vec(),
        }
        .into())
    }
}

#[test]
fn omniorb_client_checks_every_type_against_corbina_server() {
    let Some(bin) = peers() else { return };
    let orb = loopback_orb();
    let poa = orb.root_poa();
    let mismatches = Arc::new(Mutex::new(Vec::new()));
    let servant = Arc::new(TypesEchoSkeleton::new(Echo {
        me: Mutex::new(None),
        mismatches: mismatches.clone(),
    }));
    let id = poa.activate_object(servant.clone()).unwrap();
    let obj: ObjectRef = poa.id_to_reference(&id).unwrap();
    *servant.servant().me.lock().unwrap() = Some(TypesEcho::unchecked_narrow(&obj));
    poa.the_poa_manager().activate().unwrap();
    let ior_file = fresh_dir("interop-client").join("corbina.ior");
    std::fs::write(&ior_file, orb.object_to_string(&obj).unwrap() + "\n").unwrap();

    let out = Command::new(bin.join("types_client"))
        .arg(&ior_file)
        .output()
        .expect("types_client runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    eprintln!("{text}");
    let mismatches = mismatches.lock().unwrap().clone();
    assert!(
        mismatches.is_empty(),
        "values omniORB sent decoded wrongly:\n{}",
        mismatches.join("\n")
    );
    assert!(out.status.success(), "types_client failed:\n{text}");
    assert!(text.contains("all checks passed"), "{text}");
    orb.shutdown(true);
}
