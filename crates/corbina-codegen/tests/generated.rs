//! The golden files compiled against the real runtime, and exercised.

#[allow(dead_code)]
mod gen_bench {
    include!("golden/bench.rs");
}
#[allow(dead_code)]
mod gen_tricky {
    include!("golden/tricky_supported.rs");
}
#[allow(dead_code)]
mod gen_extra {
    include!("golden/extra.rs");
}
#[allow(dead_code)]
mod gen_objref {
    include!("golden/objref.rs");
}
#[allow(dead_code)]
mod gen_dynamic {
    include!("golden/dynamic.rs");
}
#[allow(dead_code)]
mod gen_recursive {
    include!("golden/recursive.rs");
}
/// Generated from Debian's omniORB `COS/CosNaming.idl` (see `tests/omniorb.rs`).
#[allow(dead_code, non_snake_case)]
mod gen_cos_naming {
    include!("golden/CosNaming.rs");
}

use corbina::cdr::{ByteOrder, CdrContext, CdrDecode, CdrEncode, CdrReader, CdrWriter, CodeSets};
use corbina::{ObjectRef, ServantInvoker, SystemException, SystemExceptionKind};
use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

fn ctx() -> CdrContext {
    CdrContext::GIOP_1_2.with_code_sets(CodeSets::UNICODE)
}

fn encode_in<T: CdrEncode + ?Sized>(v: &T, order: ByteOrder, pad: usize) -> Vec<u8> {
    let mut w = CdrWriter::with_byte_order(order, ctx());
    for _ in 0..pad {
        w.write_octet(0xaa);
    }
    v.encode(&mut w).unwrap();
    w.into_bytes()
}

/// Encodes in both byte orders after 0..8 bytes of misalignment and decodes back.
fn round_trip<T>(v: &T)
where
    T: CdrEncode + for<'a> CdrDecode<'a> + PartialEq + Debug,
{
    for order in [ByteOrder::Big, ByteOrder::Little] {
        for pad in 0..8 {
            let bytes = encode_in(v, order, pad);
            let mut r = CdrReader::new(&bytes, order, ctx());
            r.read_bytes(pad).unwrap();
            let back =
                T::decode(&mut r).unwrap_or_else(|e| panic!("{v:?} ({order:?}, pad {pad}): {e}"));
            r.expect_end().unwrap();
            assert_eq!(&back, v, "{order:?}, pad {pad}");
        }
    }
}

fn decode_err<T: for<'a> CdrDecode<'a> + Debug>(
    bytes: &[u8],
    order: ByteOrder,
) -> corbina::cdr::MarshalError {
    let mut r = CdrReader::new(bytes, order, ctx());
    T::decode(&mut r).unwrap_err()
}

fn bin(i: i32) -> gen_bench::BinStruct {
    gen_bench::BinStruct {
        s: i as i16 - 3,
        c: b'a' + i as u8,
        l: i * 1000 - 7,
        o: i as u8 ^ 0x5a,
        d: f64::from(i) * 1.25,
    }
}

#[test]
fn bin_struct_block_layout_is_24_bytes() {
    let v = bin(1);
    let bytes = encode_in(&v, ByteOrder::Big, 0);
    let mut want = vec![0u8; 24];
    want[0..2].copy_from_slice(&v.s.to_be_bytes());
    want[2] = v.c;
    want[4..8].copy_from_slice(&v.l.to_be_bytes());
    want[8] = v.o;
    want[16..24].copy_from_slice(&v.d.to_be_bytes());
    assert_eq!(bytes, want);
    // A sequence: length, then one block of 24-byte elements; same bytes as element-wise.
    let seq: Vec<_> = (0..5).map(bin).collect();
    for order in [ByteOrder::Big, ByteOrder::Little] {
        for pad in 0..8 {
            let block = encode_in(&seq, order, pad);
            let mut w = CdrWriter::with_byte_order(order, ctx());
            for _ in 0..pad {
                w.write_octet(0xaa);
            }
            w.write_length(seq.len()).unwrap();
            for e in &seq {
                e.encode(&mut w).unwrap();
            }
            assert_eq!(block, w.into_bytes(), "{order:?} pad {pad}");
        }
    }
    let aligned = encode_in(&seq, ByteOrder::NATIVE, 4);
    assert_eq!(aligned.len(), 8 + 5 * 24);
    round_trip(&seq);
    round_trip(&Vec::<gen_bench::BinStruct>::new());
}

/// `Inner` is 3 bytes in a 4-byte stride: the last element of a block has no trailing
/// padding, so the block paths write and read it through a padded copy.
#[test]
fn short_stride_struct_runs_match_element_wise() {
    use gen_extra::extra::Inner;
    for n in 1..6 {
        let seq: Vec<Inner> = (0..n)
            .map(|i| Inner {
                a: -(i as i16) - 0x100,
                b: 0x80 | i as u8,
            })
            .collect();
        for order in [ByteOrder::Big, ByteOrder::Little] {
            for pad in 0..8 {
                let block = encode_in(&seq, order, pad);
                let mut w = CdrWriter::with_byte_order(order, ctx());
                for _ in 0..pad {
                    w.write_octet(0xaa);
                }
                w.write_length(seq.len()).unwrap();
                for e in &seq {
                    e.encode(&mut w).unwrap();
                }
                assert_eq!(block, w.into_bytes(), "{n} elements, {order:?}, pad {pad}");
            }
        }
        round_trip(&seq);
    }
}

#[test]
fn fixed_structs_with_validation_round_trip() {
    use gen_extra::extra::*;
    let s = |i: i32| Sample {
        id: i,
        ok: i % 2 == 0,
        mode: Mode::VALUES[i as usize % 3],
        inner: Inner {
            a: -(i as i16),
            b: i as u8,
        },
        hist: [i as i16, 2, 3, 4],
        value: f64::from(i) / 3.0,
    };
    let seq: Samples = (0..7).map(s).collect();
    round_trip(&seq);
    let odds: Odds = (0..5)
        .map(|i| Odd {
            s: i as i16,
            l: i * 3,
        })
        .collect();
    round_trip(&odds);
    // An invalid boolean or enum inside the block is rejected.
    let mut bytes = encode_in(&vec![s(0), s(1)], ByteOrder::Big, 0);
    // Length at 0; the first element is written singly from 4 (to 40); the second starts
    // the 8-aligned block at 40 with `ok` at +4 and `mode` at +8.
    let ok_at = 40 + 4;
    assert_eq!(bytes[ok_at], 0);
    bytes[ok_at] = 2;
    assert!(matches!(
        decode_err::<Samples>(&bytes, ByteOrder::Big),
        corbina::cdr::MarshalError::InvalidBoolean { value: 2, .. }
    ));
    let mut bytes = encode_in(&vec![s(0), s(1)], ByteOrder::Big, 0);
    bytes[40 + 8 + 3] = 9; // `mode` of the second element, low byte
    assert!(matches!(
        decode_err::<Samples>(&bytes, ByteOrder::Big),
        corbina::cdr::MarshalError::InvalidEnum {
            value: 9,
            count: 3,
            ..
        }
    ));
}

#[test]
fn unions_keep_their_discriminator() {
    use gen_extra::extra::*;
    for u in [
        ByLong::Text("hi".into()),
        ByLong::Number(2, 1.5),
        ByLong::Number(3, -1.5),
        ByLong::Inner(Inner { a: 1, b: 2 }),
        ByLong::Raw(42, 7),
    ] {
        round_trip(&u);
    }
    assert_eq!(ByLong::Number(3, 0.0).discriminator(), 3);
    assert_eq!(ByLong::Inner(Inner::default()).discriminator(), -1);
    assert_eq!(ByLong::Raw(99, 0).discriminator(), 99);
    for u in [
        ByMode::OffCode(4),
        ByMode::Job("j".into()),
        ByMode::Default_(Mode::Standby),
    ] {
        round_trip(&u);
    }
    assert_eq!(
        ByMode::Default_(Mode::Standby).discriminator(),
        Mode::Standby
    );
    round_trip(&ByOctet::Flag(true));
    round_trip(&ByOctet::Default_(8));
    // A discriminator that does not select the variant is refused.
    let mut w = CdrWriter::new(ctx());
    assert!(ByLong::Number(1, 0.0).encode(&mut w).is_err());
    let mut w = CdrWriter::new(ctx());
    assert!(ByLong::Raw(2, 0).encode(&mut w).is_err());
    use gen_tricky::outer::*;
    for u in [
        ByColor::R(1),
        ByColor::Gb(Color::Blue, "b".into()),
        ByColor::Gb(Color::Green, "g".into()),
    ] {
        round_trip(&u);
    }
    assert_eq!(
        ByColor::Gb(Color::Blue, String::new()).discriminator(),
        Color::Blue
    );
    round_trip(&ByChar::A(5));
    round_trip(&ByChar::Other(b'q', true));
    round_trip(&ByBool::P(inner::Point { x: 1, y: 2 }));
    round_trip(&ByBool::Q([3, 4]));
    assert!(!ByBool::Q([0, 0]).discriminator());
}

fn limits() -> gen_extra::extra::Limits {
    use gen_extra::extra::*;
    Limits {
        name: "abcdefgh".into(),
        wide: "wïde".into(),
        pair: vec![1, 2],
        tags: vec!["a".into(), "bcd".into()],
        price: corbina::Fixed::new(12345, 5, 2).unwrap(),
        precise: corbina::LongDouble::from_f64(2.5),
        initial: 'é',
        letter: b'x',
        grid: [
            [Inner { a: 1, b: 2 }, Inner { a: 3, b: 4 }],
            [Inner { a: 5, b: 6 }, Inner { a: 7, b: 8 }],
        ],
        wides: vec!["ω".into(), String::new()],
    }
}

#[test]
fn constructed_types_round_trip() {
    use gen_tricky::outer::*;
    round_trip(&limits());
    let tree = Tree {
        value: 1,
        children: vec![
            Tree {
                value: 2,
                children: vec![],
            },
            Tree {
                value: 3,
                children: vec![Tree {
                    value: 4,
                    children: vec![],
                }],
            },
        ],
    };
    round_trip(&tree);
    round_trip(&Color::Green);
    round_trip(&inner::Point { x: -1, y: 1 });
    round_trip(&gen_tricky::Forward { x: 3 });
    round_trip(&gen_tricky::bounded::Nested::from([
        vec![1],
        vec![],
        vec![2, 3],
    ]));
    round_trip(&[[1i32; 4]; 3]);
    let o = gen_extra::extra::Outer {
        inner_value: gen_extra::extra::outer::Nested { x: 9 },
        which: gen_extra::extra::outer::Kind::B,
    };
    round_trip(&o);
    round_trip(&gen_extra::extra::Link {
        name: "a".into(),
        next: vec![gen_extra::extra::Link {
            name: "b".into(),
            next: vec![],
        }],
    });
    round_trip(&gen_extra::extra::node::Info {
        names: vec!["x".into()],
        depth: 2,
    });
    assert_eq!(Color::try_from(2), Ok(Color::Blue));
    assert_eq!(Color::try_from(3), Err(3));
    let bytes = encode_in(&7u32, ByteOrder::Big, 0);
    assert!(matches!(
        decode_err::<Color>(&bytes, ByteOrder::Big),
        corbina::cdr::MarshalError::InvalidEnum { .. }
    ));
}

/// Issue 17: recursive types compile (no `Eq`/`Hash` on a type holding a `double` through a
/// cycle) and keep the traits they can have.
#[test]
fn recursive_types_derive_what_they_can() {
    use gen_recursive::rec::*;
    use std::collections::HashSet;
    let e = E {
        d: 1.5,
        inner: vec![E {
            d: -2.0,
            inner: vec![],
        }],
    };
    round_trip(&e);
    round_trip(&B {
        data: vec![e.clone(), E::default()],
    });
    round_trip(&B2 {
        data: vec![E2 {
            inner: vec![E2::default()],
            f: 0.5,
        }],
        n: 7,
    });
    let forest = Forest {
        roots: vec![
            Node::Branch(Branch {
                label: "b".into(),
                kids: vec![Node::Default_(5)],
            }),
            Node::Default_(9),
        ],
    };
    round_trip(&forest);
    // The cycle without float/any keeps Eq + Hash: usable as set members.
    let t = Tree {
        value: 1,
        children: vec![Tree {
            value: 2,
            children: vec![],
        }],
    };
    round_trip(&t);
    let set: HashSet<Holder> = [
        Holder {
            trees: vec![t.clone()],
            tag: 1,
        },
        Holder {
            trees: vec![t.clone()],
            tag: 1,
        },
        Holder::default(),
    ]
    .into_iter()
    .collect();
    assert_eq!(set.len(), 2);
    let f = Failed { partial: vec![t] };
    assert_eq!(f.clone(), f);
}

#[test]
fn exceptions_encode_their_id_then_members() {
    use corbina::UserException;
    let e = gen_bench::BenchError {
        code: 3,
        reason: "r".into(),
    };
    let bytes = encode_in(&e, ByteOrder::Big, 0);
    let mut r = CdrReader::new(&bytes, ByteOrder::Big, ctx());
    assert_eq!(
        r.read_string().unwrap(),
        gen_bench::BenchError::REPOSITORY_ID
    );
    assert_eq!(gen_bench::BenchError::decode(&mut r).unwrap(), e);
    assert!(e.to_string().contains("BenchError"));
    assert_eq!(
        gen_extra::extra::node::NotHere::REPOSITORY_ID,
        "IDL:corbina.test/Extra/Node/NotHere:1.0"
    );
}

#[test]
fn constants() {
    use gen_tricky::outer::*;
    assert_eq!(BASE, 10);
    assert_eq!(inner::DERIVED, 24);
    assert_eq!(MASK, u32::MAX);
    assert_eq!(HALF, 0.5);
    assert_eq!(LETTER, b'z');
    assert_eq!(W_LETTER, 'w');
    assert_eq!(GREETING, "hello, world");
    assert_eq!(W_GREETING, "wide");
    assert!(std::hint::black_box(YES));
    assert_eq!(PRICE.to_string().parse::<f64>().unwrap(), 12.5);
    assert_eq!(SMALL, 0x7f);
    assert_eq!(FAVOURITE, Color::Blue);
    assert_eq!(BIG, i64::MIN);
    assert_eq!(HUGE, u64::MAX);
    use gen_extra::extra::*;
    assert_eq!((AREA, NEG, RATIO, BITS), (24, -8, 0.75, 0xff));
}

#[test]
fn bounded_types_reject_overlong_values() {
    use gen_extra::extra::*;
    let mut l = limits();
    l.name = "123456789".into();
    let mut w = CdrWriter::new(ctx());
    let err = l.encode(&mut w).unwrap_err();
    assert_eq!(err.exception_kind(), corbina::cdr::ExceptionKind::BadParam);
    for f in [
        |l: &mut Limits| l.wide = "12345".into(),
        |l: &mut Limits| l.pair = vec![1, 2, 3],
        |l: &mut Limits| l.tags = vec!["abcd".into()],
        |l: &mut Limits| l.price = corbina::Fixed::new(1, 4, 2).unwrap(),
    ] {
        let mut l = limits();
        f(&mut l);
        let mut w = CdrWriter::new(ctx());
        assert!(l.encode(&mut w).is_err(), "{l:?}");
    }
    // `Choices` is `Vec<ByLong>`: its own `CdrEncode` knows no bound; operations and
    // members using it check it (see node_end_to_end).
    let choices: Choices = vec![ByLong::Raw(0, 0); 4];
    assert!(to_bytes(&choices).is_ok());
    // On decode, an overlong value from the wire is MARSHAL.
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, ctx());
    w.write_string("123456789").unwrap();
    let bytes = w.into_bytes();
    let mut r = CdrReader::new(&bytes, ByteOrder::Big, ctx());
    let err = Limits::decode(&mut r).unwrap_err();
    assert_eq!(err.exception_kind(), corbina::cdr::ExceptionKind::Marshal);
}

fn to_bytes<T: CdrEncode + ?Sized>(v: &T) -> corbina::cdr::Result<Vec<u8>> {
    corbina::cdr::to_bytes(v, ctx())
}

// ---- bench.idl end to end: proxy → ServantInvoker → skeleton → servant ----

#[derive(Default)]
struct BenchImpl {
    bytes: AtomicU64,
}

impl BenchImpl {
    fn count(&self, n: usize) -> Result<(), SystemException> {
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(())
    }
}

impl gen_bench::BenchServant for BenchImpl {
    fn ping(&self) -> Result<(), SystemException> {
        Ok(())
    }
    fn ping_oneway(&self) -> Result<(), SystemException> {
        Ok(())
    }
    fn echo(&self, s: &str) -> Result<String, SystemException> {
        Ok(s.to_string())
    }
    fn fail(&self, code: i32) -> Result<(), gen_bench::bench::FailError> {
        if code == 0 {
            Ok(())
        } else {
            Err(gen_bench::BenchError {
                code,
                reason: "requested".into(),
            }
            .into())
        }
    }
    fn send_octets(&self, s: &[u8]) -> Result<(), SystemException> {
        self.count(s.len())
    }
    fn send_octets_oneway(&self, s: &[u8]) -> Result<(), SystemException> {
        self.count(s.len())
    }
    fn send_shorts(&self, s: &[i16]) -> Result<(), SystemException> {
        self.count(s.len() * 2)
    }
    fn send_shorts_oneway(&self, s: &[i16]) -> Result<(), SystemException> {
        self.count(s.len() * 2)
    }
    fn send_longs(&self, s: &[i32]) -> Result<(), SystemException> {
        self.count(s.len() * 4)
    }
    fn send_longs_oneway(&self, s: &[i32]) -> Result<(), SystemException> {
        self.count(s.len() * 4)
    }
    fn send_doubles(&self, s: &[f64]) -> Result<(), SystemException> {
        self.count(s.len() * 8)
    }
    fn send_doubles_oneway(&self, s: &[f64]) -> Result<(), SystemException> {
        self.count(s.len() * 8)
    }
    fn send_chars(&self, s: &[u8]) -> Result<(), SystemException> {
        self.count(s.len())
    }
    fn send_chars_oneway(&self, s: &[u8]) -> Result<(), SystemException> {
        self.count(s.len())
    }
    fn send_structs(&self, s: &[gen_bench::BinStruct]) -> Result<(), SystemException> {
        assert_eq!(s, (0..s.len() as i32).map(bin).collect::<Vec<_>>());
        self.count(s.len() * 24)
    }
    fn send_structs_oneway(&self, s: &[gen_bench::BinStruct]) -> Result<(), SystemException> {
        self.count(s.len() * 24)
    }
    fn start_timer(&self) -> Result<(), SystemException> {
        self.bytes.store(0, Ordering::Relaxed);
        Ok(())
    }
    fn stop_timer(&self) -> Result<u64, SystemException> {
        Ok(self.bytes.load(Ordering::Relaxed))
    }
}

fn object(servant: Arc<dyn corbina::Servant>, type_id: &str) -> ObjectRef {
    let mut ior = corbina::giop::Ior::nil();
    ior.type_id = type_id.to_string();
    ObjectRef::new(
        ior,
        b"key".to_vec(),
        Arc::new(ServantInvoker::new(servant, ctx())),
    )
}

#[test]
fn bench_end_to_end() {
    use gen_bench::*;
    let obj = object(Arc::new(BenchSkeleton::new(BenchImpl::default())), "");
    let b = Bench::narrow(&obj).unwrap();
    b.ping().unwrap();
    b.ping_oneway().unwrap();
    assert_eq!(b.echo("hello").unwrap(), "hello");
    b.fail(0).unwrap();
    match b.fail(7) {
        Err(bench::FailError::BenchError(e)) => {
            assert_eq!((e.code, e.reason.as_str()), (7, "requested"))
        }
        other => panic!("{other:?}"),
    }
    b.start_timer().unwrap();
    let octets = vec![7u8; 10_000];
    b.send_octets(&octets).unwrap();
    b.send_octets_oneway(&octets).unwrap();
    b.send_shorts(&[1, 2, 3]).unwrap();
    b.send_shorts_oneway(&[1, 2, 3]).unwrap();
    b.send_longs(&[1, 2]).unwrap();
    b.send_longs_oneway(&[1, 2]).unwrap();
    b.send_doubles(&[0.5]).unwrap();
    b.send_doubles_oneway(&[0.5]).unwrap();
    b.send_chars(b"abc").unwrap();
    b.send_chars_oneway(b"abc").unwrap();
    let structs: Vec<_> = (0..100).map(bin).collect();
    b.send_structs(&structs).unwrap();
    b.send_structs_oneway(&structs).unwrap();
    let want = 2 * (10_000 + 6 + 8 + 8 + 3 + 100 * 24);
    assert_eq!(b.stop_timer().unwrap(), want);
    // Unknown operations are BAD_OPERATION; the Object operations answer.
    let err = obj
        .invoke("no_such_op", |_| Ok(()), |_| Ok(()), corbina::no_user)
        .unwrap_err();
    assert_eq!(err.kind, SystemExceptionKind::BadOperation);
    assert!(obj.is_a("IDL:Bench:1.0").unwrap());
    assert!(!obj.is_a("IDL:Other:1.0").unwrap());
    assert!(!obj.non_existent().unwrap());
    // Narrowing to an interface the object does not implement is BAD_PARAM.
    let err = gen_tricky::Top::narrow(&obj).unwrap_err();
    assert_eq!(err.kind, SystemExceptionKind::BadParam);
    assert_eq!(err.minor, corbina::error::minor::BAD_PARAM_NOT_OF_TYPE);
    let shown = err.to_string();
    assert!(
        shown.ends_with(&format!(
            ": the object is not a {}",
            gen_tricky::Top::REPOSITORY_ID
        )),
        "{shown}"
    );
}

// ---- extra.idl: inout/out parameters, attributes with raises, keyword names ----

struct NodeImpl {
    mode: std::sync::Mutex<gen_extra::extra::Mode>,
}

impl gen_extra::extra::NodeServant for NodeImpl {
    fn describe(
        &self,
        names: &[String],
        depth: &mut i32,
    ) -> Result<
        (gen_extra::extra::node::Info, gen_extra::extra::Link),
        gen_extra::extra::node::DescribeError,
    > {
        use gen_extra::extra::*;
        if *depth < 0 {
            return Err(node::NotHere { r#where: *depth }.into());
        }
        if names.is_empty() {
            return Err(Broken {
                why: "no names".into(),
            }
            .into());
        }
        *depth += 1;
        Ok((
            node::Info {
                names: names.to_vec(),
                depth: *depth,
            },
            Link {
                name: names[0].clone(),
                next: vec![],
            },
        ))
    }
    fn swap(
        &self,
        s: &mut String,
        samples: &mut gen_extra::extra::Samples,
    ) -> Result<gen_extra::extra::ByLong, SystemException> {
        *s = s.chars().rev().collect();
        samples.reverse();
        Ok(gen_extra::extra::ByLong::Number(2, samples.len() as f64))
    }
    fn limits(
        &self,
        l: &gen_extra::extra::Limits,
    ) -> Result<gen_extra::extra::Limits, SystemException> {
        Ok(l.clone())
    }
    fn choose(
        &self,
        c: &[gen_extra::extra::ByLong],
        odds: &[gen_extra::extra::Odd],
    ) -> Result<gen_extra::extra::Choices, SystemException> {
        let mut v = c.to_vec();
        v.extend(
            odds.iter()
                .map(|o| gen_extra::extra::ByLong::Raw(o.l, o.s as u8)),
        );
        Ok(v)
    }
    fn poke(&self, _x: u8) -> Result<(), SystemException> {
        Ok(())
    }
    fn nothing(&self) -> Result<(), gen_extra::extra::node::NothingError> {
        Err(gen_extra::extra::Other {}.into())
    }
    fn r#move(&self, self_: i32, r#loop: i32, request: &str) -> Result<i32, SystemException> {
        Ok(self_ + r#loop + request.len() as i32)
    }
    fn get_mode(&self) -> Result<gen_extra::extra::Mode, gen_extra::extra::node::GetModeError> {
        Ok(*self.mode.lock().unwrap())
    }
    fn set_mode(
        &self,
        value: gen_extra::extra::Mode,
    ) -> Result<(), gen_extra::extra::node::SetModeError> {
        if value == gen_extra::extra::Mode::Off {
            return Err(gen_extra::extra::Other {}.into());
        }
        *self.mode.lock().unwrap() = value;
        Ok(())
    }
    fn get_count(&self) -> Result<u32, SystemException> {
        Ok(5)
    }
}

#[test]
fn node_end_to_end() {
    use gen_extra::extra::*;
    let servant = NodeImpl {
        mode: std::sync::Mutex::new(Mode::Standby),
    };
    let obj = object(Arc::new(NodeSkeleton::new(servant)), Node::REPOSITORY_ID);
    let n = Node::narrow(&obj).unwrap();
    let mut depth = 1;
    let (info, link) = n.describe(&["a".into(), "b".into()], &mut depth).unwrap();
    assert_eq!(
        (depth, info.depth, info.names.len(), link.name.as_str()),
        (2, 2, 2, "a")
    );
    let mut depth = -4;
    assert_eq!(
        n.describe(&["a".into()], &mut depth),
        Err(node::DescribeError::NotHere(node::NotHere { r#where: -4 }))
    );
    assert!(matches!(
        n.describe(&[], &mut 0),
        Err(node::DescribeError::Broken(_))
    ));
    let mut s = String::from("abc");
    let mut samples: Samples = vec![
        Sample::default(),
        Sample {
            id: 9,
            ..Sample::default()
        },
    ];
    assert_eq!(
        n.swap(&mut s, &mut samples).unwrap(),
        ByLong::Number(2, 2.0)
    );
    assert_eq!((s.as_str(), samples[0].id), ("cba", 9));
    assert_eq!(n.limits(&limits()).unwrap(), limits());
    let got = n
        .choose(&[ByLong::Text("t".into())], &[Odd { s: 1, l: 20 }])
        .unwrap();
    assert_eq!(got, vec![ByLong::Text("t".into()), ByLong::Raw(20, 1)]);
    // The servant built Raw(2, _), but 2 selects `number`: the reply cannot be marshalled.
    assert!(n.choose(&[], &[Odd { s: 1, l: 2 }]).is_err());
    // The reply exceeds the bound of Choices (3): the server's marshalling fails.
    assert!(n
        .choose(&vec![ByLong::Text("t".into()); 3], &[Odd { s: 1, l: 20 }])
        .is_err());
    n.poke(1).unwrap();
    assert!(matches!(n.nothing(), Err(node::NothingError::Other(_))));
    assert_eq!(n.r#move(1, 2, "abc").unwrap(), 6);
    assert_eq!(n.get_mode().unwrap(), Mode::Standby);
    n.set_mode(Mode::Running).unwrap();
    assert_eq!(n.get_mode().unwrap(), Mode::Running);
    assert!(matches!(
        n.set_mode(Mode::Off),
        Err(node::SetModeError::Other(_))
    ));
    assert_eq!(n.get_count().unwrap(), 5);
    assert!(obj.is_a("IDL:omg.org/CORBA/Object:1.0").unwrap());
}

// ---- diamond inheritance: Bottom's skeleton dispatches every inherited operation ----

struct Diamond(std::sync::Mutex<i32>);
impl gen_tricky::TopServant for Diamond {
    fn top_op(&self) -> Result<(), SystemException> {
        Ok(())
    }
    fn get_top_attr(&self) -> Result<i32, SystemException> {
        Ok(*self.0.lock().unwrap())
    }
    fn set_top_attr(&self, value: i32) -> Result<(), SystemException> {
        *self.0.lock().unwrap() = value;
        Ok(())
    }
}
impl gen_tricky::LeftServant for Diamond {
    fn left_op(&self) -> Result<(), SystemException> {
        Ok(())
    }
}
impl gen_tricky::RightServant for Diamond {
    fn right_op(&self) -> Result<(), SystemException> {
        Ok(())
    }
    fn get_name(&self) -> Result<String, SystemException> {
        Ok("diamond".into())
    }
}
impl gen_tricky::BottomServant for Diamond {
    fn bottom_op(&self) -> Result<(), SystemException> {
        Ok(())
    }
}

#[test]
fn diamond_inheritance() {
    use gen_tricky::*;
    let obj = object(
        Arc::new(BottomSkeleton::new(Diamond(std::sync::Mutex::new(0)))),
        "",
    );
    let b = Bottom::narrow(&obj).unwrap();
    b.top_op().unwrap();
    b.left_op().unwrap();
    b.right_op().unwrap();
    b.bottom_op().unwrap();
    b.set_top_attr(5).unwrap();
    assert_eq!(b.get_top_attr().unwrap(), 5);
    assert_eq!(b.get_name().unwrap(), "diamond");
    for id in [
        "IDL:corbina.example/Top:1.0",
        "IDL:corbina.example/Left:1.0",
        "IDL:corbina.example/Right:1.0",
    ] {
        assert!(obj.is_a(id).unwrap(), "{id}");
    }
    let top: Top = b.clone().into();
    assert_eq!(top.get_top_attr().unwrap(), 5);
    let left = Left::narrow(b.as_object()).unwrap();
    left.left_op().unwrap();
}

// ---- TypeCodes and Any for generated types

/// Appends `v` after padding to `align` (relative to the encapsulation start at `base`).
fn be_put(buf: &mut Vec<u8>, base: usize, align: usize, v: &[u8]) {
    while !(buf.len() - base).is_multiple_of(align) {
        buf.push(0);
    }
    buf.extend_from_slice(v);
}

fn be_string(buf: &mut Vec<u8>, base: usize, s: &str) {
    be_put(buf, base, 4, &(s.len() as u32 + 1).to_be_bytes());
    buf.extend_from_slice(s.as_bytes());
    buf.push(0);
}

#[test]
fn bin_struct_type_code_matches_the_hand_built_one_and_the_spec_encoding() {
    use corbina::typecode::{encode_type_code, StructMember, TcKind};
    use corbina::TypeCode;
    let tc = gen_bench::BinStruct::type_code();
    let hand = TypeCode::create_struct_tc(
        "IDL:BinStruct:1.0",
        "BinStruct",
        vec![
            StructMember::new("s", TypeCode::SHORT),
            StructMember::new("c", TypeCode::CHAR),
            StructMember::new("l", TypeCode::LONG),
            StructMember::new("o", TypeCode::OCTET),
            StructMember::new("d", TypeCode::DOUBLE),
        ],
    )
    .unwrap();
    assert!(tc.equal(&hand));
    // Built once: every call hands out the same description.
    assert!(tc.ptr_eq(&gen_bench::BinStruct::type_code()));
    assert_eq!(tc.layout().fixed.as_ref().unwrap().size, 24);
    // CORBA 3.0 §15.3.5.1: tk_struct (15), then an encapsulation of byte order, id, name,
    // member count and (name, TypeCode) pairs.
    let mut enc = vec![0u8]; // big-endian encapsulation
    be_string(&mut enc, 0, "IDL:BinStruct:1.0");
    be_string(&mut enc, 0, "BinStruct");
    be_put(&mut enc, 0, 4, &5u32.to_be_bytes());
    for (name, kind) in [("s", 2u32), ("c", 9), ("l", 3), ("o", 10), ("d", 7)] {
        be_string(&mut enc, 0, name);
        be_put(&mut enc, 0, 4, &kind.to_be_bytes());
    }
    assert_eq!(enc.len(), 108);
    let mut want = 15u32.to_be_bytes().to_vec();
    want.extend_from_slice(&(enc.len() as u32).to_be_bytes());
    want.extend_from_slice(&enc);
    let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
    encode_type_code(&tc, &mut w).unwrap();
    assert_eq!(w.into_bytes(), want);
    // Typedefs have alias TypeCodes; interfaces objref ones.
    let seq = gen_bench::struct_seq_type_code();
    assert_eq!(seq.kind(), TcKind::Alias);
    assert_eq!(seq.id().unwrap(), "IDL:StructSeq:1.0");
    assert!(seq
        .content_type()
        .unwrap()
        .content_type()
        .unwrap()
        .equal(&hand));
    let bench = gen_bench::Bench::type_code();
    assert_eq!(bench.kind(), TcKind::Objref);
    assert_eq!(bench.id().unwrap(), "IDL:Bench:1.0");
    assert_eq!(gen_bench::BenchError::type_code().kind(), TcKind::Except);
}

/// Inserts `v`, checks the Any survives a trip through CDR (TypeCode and value), and
/// extracts it back.
fn any_round_trip<T>(v: &T)
where
    T: corbina::any::AnyInsert + PartialEq + Debug,
{
    let any = corbina::Any::insert(v).unwrap();
    assert_eq!(any.extract::<T>().as_ref(), Some(v));
    for order in [ByteOrder::Big, ByteOrder::Little] {
        let mut w = CdrWriter::with_byte_order(order, ctx());
        w.write_octet(1); // misalign
        any.write(&mut w).unwrap();
        let bytes = w.into_bytes();
        let mut r = CdrReader::new(&bytes, order, ctx());
        r.read_octet().unwrap();
        let back = corbina::Any::read(&mut r).unwrap();
        r.expect_end().unwrap();
        assert!(back.type_code().equal(&T::type_code()));
        assert_eq!(back.extract::<T>().as_ref(), Some(v), "{order:?}");
        assert_eq!(back, any);
    }
}

#[test]
fn generated_structs_unions_enums_and_exceptions_round_trip_through_any() {
    use gen_extra::extra::*;
    any_round_trip(&bin(3));
    any_round_trip(&Sample {
        id: 1,
        ok: true,
        mode: Mode::Running,
        inner: Inner { a: 2, b: 3 },
        hist: [1, 2, 3, 4],
        value: 0.5,
    });
    any_round_trip(&Mode::Standby);
    for u in [
        ByLong::Text("t".into()),
        ByLong::Number(3, 2.5),
        ByLong::Raw(77, 9),
    ] {
        any_round_trip(&u);
    }
    any_round_trip(&ByMode::Default_(Mode::Standby));
    any_round_trip(&limits());
    any_round_trip(&gen_bench::BenchError {
        code: 7,
        reason: "requested".into(),
    });
    // The wrong type does not extract.
    let any = corbina::Any::insert(&Mode::Off).unwrap();
    assert_eq!(any.extract::<gen_extra::extra::outer::Kind>(), None);
    assert_eq!(any.extract::<u32>(), None);
}

#[test]
fn recursive_structs_round_trip_through_any() {
    use gen_dynamic::r#dyn::*;
    let leaf = |v| Tree {
        value: v,
        children: vec![],
    };
    let tree = Tree {
        value: 1,
        children: vec![
            leaf(2),
            Tree {
                value: 3,
                children: vec![leaf(4)],
            },
        ],
    };
    let tc = Tree::type_code();
    let kids = tc.member_type(1).unwrap();
    assert!(kids.content_type().unwrap().equal(&tc));
    any_round_trip(&tree);
    // Mutually recursive structs, each built inline with a recursive reference.
    let ping = Ping {
        label: "a".into(),
        pongs: vec![Pong {
            pings: vec![Ping {
                label: "b".into(),
                pongs: vec![],
            }],
        }],
    };
    any_round_trip(&ping);
    any_round_trip(&Pong { pings: vec![ping] });
    // `any` and `TypeCode` members.
    let t = Tagged {
        name: "n".into(),
        value: corbina::Any::insert(&tree).unwrap(),
        kind: Tree::type_code(),
    };
    any_round_trip(&t);
    round_trip(&t);
    any_round_trip(&Shape::Side(Color::Blue, 2.0));
    assert_eq!(
        matrix_type_code()
            .unalias()
            .layout()
            .fixed
            .as_ref()
            .unwrap()
            .size,
        24
    );
}

/// Polls `f` to completion on this thread (no executor needed: the futures are
/// runtime-agnostic).
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

/// The asynchronous proxies' futures are `Send` whatever the parameters (sequences,
/// references, inout, out, user exceptions), and report failures as the synchronous
/// proxies do (here: nobody listens, TRANSIENT).
#[test]
fn async_proxy_futures_are_send_and_report_errors() {
    fn send<F: std::future::Future + Send>(f: F) -> F {
        f
    }
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let obj = orb.string_to_object("corbaloc::127.0.0.1:1/k").unwrap();
    let node = gen_extra::extra::NodeAsync::unchecked_narrow(&obj);
    let mut depth = 1;
    let e = block_on(send(node.describe(&["a".to_owned()], &mut depth))).unwrap_err();
    assert!(matches!(
        e,
        gen_extra::extra::node::DescribeError::System(ref s) if s.kind == SystemExceptionKind::Transient
    ));
    let (mut s, mut samples) = (String::new(), Default::default());
    assert!(block_on(send(node.swap(&mut s, &mut samples))).is_err());
    let registry = gen_objref::refs::RegistryAsync::unchecked_narrow(&obj);
    let (mut a, mut b) = (None, None);
    assert!(block_on(send(registry.swap(&mut a, &mut b))).is_err());
    let bench = gen_bench::BenchAsync::from(gen_bench::Bench::unchecked_narrow(&obj));
    let e = block_on(send(bench.echo("x"))).unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::Transient);
    let e = block_on(send(bench.ping_oneway())).unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::Transient);
    orb.destroy();
}
