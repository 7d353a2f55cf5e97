//! Valuetype behaviour and polymorphism end to end (issue 17): `tests/idl/value_ops.idl`
//! against its golden file, compiled against the runtime and exercised: operations and
//! factories, a value serving its supported interface, abstract valuetypes and `ValueBase`
//! decoded through the factory registry, values shared across sequences and structs inside
//! a value's state, and boxes of wide, bounded, reference, any and value-holding types.

use std::path::Path;
use std::sync::Arc;

use corbina::cdr::{
    ByteOrder, CdrContext, CdrDecode, CdrEncode, CdrReader, CdrWriter, CodeSets, ExceptionKind,
};
use corbina::valuetype::{
    register_custom_unmarshal, unregister_custom_unmarshal, CustomMarshal, CustomState,
    DataInputStream, DataOutputStream, DefaultFactory, ValueFactory, ValueRef,
};
use corbina::{ObjectRef, ServantInvoker, SystemException, ValueBase};

#[allow(dead_code)]
mod gen_value_ops {
    include!("golden/value_ops.rs");
}
use gen_value_ops::shapes::*;

#[test]
fn golden_file_matches() {
    let mut fe = corbina_idl::Frontend::new();
    let src = corbina_codegen::compile_file(&mut fe, Path::new("tests/idl/value_ops.idl"))
        .unwrap_or_else(|e| panic!("{e}"))
        .source;
    let path = Path::new("tests/golden/value_ops.rs");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(path, &src).unwrap();
    }
    assert!(
        std::fs::read_to_string(path).unwrap() == src,
        "tests/golden/value_ops.rs is out of date (rerun with BLESS=1)"
    );
}

/// Held by the tests that register factories (the registry is the process's).
static REGISTRY: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn registry() -> std::sync::MutexGuard<'static, ()> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

fn ctx() -> CdrContext {
    CdrContext::GIOP_1_2.with_code_sets(CodeSets::UNICODE)
}

/// Encodes after `pad` octets in `order`, decodes back.
fn round_trip<T: CdrEncode + for<'a> CdrDecode<'a>>(v: &T, order: ByteOrder, pad: usize) -> T {
    try_round_trip(v, order, pad).unwrap()
}

fn try_round_trip<T: CdrEncode + for<'a> CdrDecode<'a>>(
    v: &T,
    order: ByteOrder,
    pad: usize,
) -> corbina::cdr::Result<T> {
    let mut w = CdrWriter::with_byte_order(order, ctx());
    for _ in 0..pad {
        w.write_octet(0xaa);
    }
    v.encode(&mut w)?;
    let bytes = w.into_bytes();
    let mut r = CdrReader::new(&bytes, order, ctx());
    r.read_bytes(pad)?;
    let back = T::decode(&mut r)?;
    r.expect_end()?;
    Ok(back)
}

fn square(side: f64) -> ValueRef<Square> {
    ValueRef::new(Square { side })
}

impl FigureOperations for Square {
    fn area(&mut self) -> Result<f64, SystemException> {
        Ok(self.side * self.side)
    }
}

impl SquareOperations for Square {
    fn grow(&mut self, by: f64) -> Result<(), SystemException> {
        self.side += by;
        Ok(())
    }
    fn get_label(&mut self) -> Result<String, SystemException> {
        Ok(format!("square {}", self.side))
    }
    fn set_label(&mut self, _value: &str) -> Result<(), SystemException> {
        Err(SystemException::new(
            corbina::SystemExceptionKind::NoImplement,
            0,
        ))
    }
}

impl NamedServant for Square {
    fn name(&self) -> Result<String, SystemException> {
        Ok(format!("square of side {}", self.side))
    }
}

impl CanvasOperations for Canvas {
    fn check(&mut self, limit: f64) -> Result<(), canvas::CheckError> {
        if self.figures.len() as f64 > limit {
            return Err(TooBig { limit }.into());
        }
        Ok(())
    }
}

/// The area of any figure this IDL knows, through its operations. A `Disc` is a `Square` too
/// (`downcast` is C++'s `dynamic_cast`): the most derived type is tried first.
fn area(f: &Figure) -> Option<f64> {
    if let Some(d) = f.downcast::<Disc>().filter(|d| !d.is_null()) {
        let d = d.lock()?;
        return Some(std::f64::consts::PI * d.r * d.r);
    }
    let s = f.downcast::<Square>()?;
    let area = s.lock()?.area().ok();
    area
}

#[test]
fn operations_run_on_the_locked_state() {
    let s = square(2.0);
    s.lock().unwrap().grow(1.0).unwrap();
    assert_eq!(s.lock().unwrap().area().unwrap(), 9.0);
    assert_eq!(s.lock().unwrap().get_label().unwrap(), "square 3");
    let mut c = Canvas {
        figures: vec![Figure::from(s.clone()); 3],
        ..Canvas::default()
    };
    let err = c.check(2.0).unwrap_err();
    assert_eq!(err, canvas::CheckError::TooBig(TooBig { limit: 2.0 }));
    assert!(c.check(3.0).is_ok());
}

/// An application's factory: initializers for local construction, and the values it builds
/// from the wire get a side of at least 1.
struct SquareMaker;

impl ValueFactory for SquareMaker {
    fn read_value(
        &self,
        r: &mut CdrReader<'_>,
        input: &mut corbina::valuetype::ValueInput,
        position: usize,
    ) -> corbina::cdr::Result<ValueBase> {
        let v = corbina::valuetype::read_default::<Square>(r, input, position)?;
        if let Some(s) = v.downcast::<Square>() {
            if let Some(mut g) = s.lock() {
                g.side = g.side.max(1.0);
            }
        }
        Ok(v)
    }
}

impl SquareFactory for SquareMaker {
    fn with_side(&self, side: f64) -> ValueRef<Square> {
        square(side)
    }
}

#[test]
fn abstract_values_decode_through_the_registry_then_the_known_types() {
    let _registry = registry();
    // Without a registered factory the IDL's own derived types are built by default.
    let figures: Vec<Figure> = vec![
        square(2.0).into(),
        ValueRef::new(Disc { side: 0.0, r: 1.0 }).into(),
    ];
    for order in [ByteOrder::Big, ByteOrder::Little] {
        for pad in 0..8 {
            let back = round_trip(&FigureList::new(figures.clone()), order, pad);
            let back = back.0.unwrap();
            assert_eq!(area(&back[0]), Some(4.0));
            assert!((area(&back[1]).unwrap() - std::f64::consts::PI).abs() < 1e-12);
            assert_eq!(back[1].0.repository_id(), Some(Disc::REPOSITORY_ID));
        }
    }
    // Null.
    assert!(round_trip(&Figure::null(), ByteOrder::Big, 1).0.is_null());

    // A registered factory takes over the id (used by every ORB of the process).
    let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
    let maker: Arc<dyn ValueFactory> = Arc::new(SquareMaker);
    assert!(orb
        .register_value_factory(Square::REPOSITORY_ID, maker.clone())
        .is_none());
    assert!(orb.lookup_value_factory(Square::REPOSITORY_ID).is_some());
    let small = Figure::from(SquareMaker.with_side(0.5));
    let back = round_trip(&small, ByteOrder::Little, 3);
    assert_eq!(area(&back), Some(1.0));
    assert!(orb
        .unregister_value_factory(Square::REPOSITORY_ID)
        .is_some_and(|f| Arc::ptr_eq(&f, &maker)));
    assert!(orb
        .unregister_value_factory(Square::REPOSITORY_ID)
        .is_none());
    orb.shutdown(false);
}

#[test]
fn value_base_needs_a_factory_and_keeps_identity() {
    let _registry = registry();
    // A Canvas as ValueBase: unknown to the registry, so MARSHAL.
    let canvas = ValueRef::new(Canvas::default());
    let any = ValueBase::from(canvas.clone());
    assert!(any.is_a(Canvas::REPOSITORY_ID) && !any.is_a(Square::REPOSITORY_ID));
    let err = try_round_trip(&any, ByteOrder::Big, 0).err().unwrap();
    assert_eq!(err.exception_kind(), ExceptionKind::Marshal);
    assert!(err.to_string().contains("no value factory"), "{err}");

    corbina::valuetype::register_value_factory(
        Canvas::REPOSITORY_ID,
        Arc::new(DefaultFactory::<Canvas>::new()),
    );
    // A canvas whose `extra` is itself: a cycle through ValueBase.
    canvas.lock().unwrap().extra = any.clone();
    let back = round_trip(&any, ByteOrder::Little, 5);
    let c = back.downcast::<Canvas>().unwrap();
    assert!(c.lock().unwrap().extra.ptr_eq(&back), "the cycle closes");
    assert!(back.downcast::<Square>().is_none());
    c.lock().unwrap().extra = ValueBase::null();
    canvas.lock().unwrap().extra = ValueBase::null();
    corbina::valuetype::unregister_value_factory(Canvas::REPOSITORY_ID);

    // An abstract parameter refuses a value not derived from it.
    let bytes = corbina::cdr::to_bytes(&ValueBase::from(canvas), ctx()).unwrap();
    let err = corbina::cdr::from_bytes::<Figure>(&bytes, ByteOrder::NATIVE, ctx())
        .err()
        .unwrap();
    assert_eq!(err.exception_kind(), ExceptionKind::Marshal);
    assert!(Figure::from_base(ValueBase::from(square(1.0))).is_some());
    assert!(Figure::from_base(ValueBase::from(ValueRef::new(Canvas::default()))).is_none());
}

#[test]
fn values_nested_in_sequences_and_structs_share_the_stream() {
    let s = square(2.0);
    let d = ValueRef::new(Disc { side: 1.0, r: 2.0 });
    let canvas = ValueRef::new(Canvas {
        figures: vec![s.clone().into(), d.clone().into(), s.clone().into()],
        pinned: vec![
            Pinned {
                fig: d.clone().into(),
                x: 1,
            },
            Pinned {
                fig: Figure::null(),
                x: 2,
            },
        ],
        extra: ValueBase::null(),
        favourite: s.clone(),
        pick: Choice::Label(5, "five".into()),
    });
    for order in [ByteOrder::Big, ByteOrder::Little] {
        for pad in 0..8 {
            let back = round_trip(&canvas, order, pad);
            let c = back.lock().unwrap();
            let s2 = c.figures[0].downcast::<Square>().unwrap();
            assert!(
                c.figures[2].0.ptr_eq(&c.figures[0].0),
                "one square, sent once"
            );
            assert!(c.favourite.ptr_eq(&s2), "the favourite is that square");
            assert!(
                c.pinned[0].fig == c.figures[1],
                "the pinned disc is the listed one"
            );
            assert!(c.pinned[1].fig.0.is_null());
            assert_eq!(c.pinned.iter().map(|p| p.x).collect::<Vec<_>>(), [1, 2]);
            assert_eq!(
                c.figures[1].downcast::<Disc>().unwrap().lock().unwrap().r,
                2.0
            );
        }
    }
    // The bound of `PinnedSeq` holds both ways.
    canvas.lock().unwrap().pinned = vec![Pinned::default(); 5];
    let err = try_round_trip(&canvas, ByteOrder::Big, 0).err().unwrap();
    assert_eq!(err.exception_kind(), ExceptionKind::Marshal);
}

#[test]
fn truncatable_derived_value_reaches_a_square_parameter() {
    let d = ValueRef::new(Disc { side: 3.0, r: 1.0 });
    let bytes = corbina::cdr::to_bytes(&d, ctx()).unwrap();
    let s: ValueRef<Square> = corbina::cdr::from_bytes(&bytes, ByteOrder::NATIVE, ctx()).unwrap();
    assert_eq!(s.lock().unwrap().side, 3.0);
}

#[test]
fn boxes_of_wide_bounded_reference_any_and_array_types() {
    let w = WideLabel::new("größe ✓".into());
    assert_eq!(round_trip(&w, ByteOrder::Big, 3), w);
    let n = ShortName::new("eight ch".into());
    assert_eq!(round_trip(&n, ByteOrder::Little, 1), n);
    let err = try_round_trip(&ShortName::new("nine chars".into()), ByteOrder::Big, 0)
        .err()
        .unwrap();
    assert_eq!(err.exception_kind(), ExceptionKind::BadParam);
    assert_eq!(
        round_trip(&NamedBox::new(None), ByteOrder::Big, 0),
        NamedBox::new(None)
    );
    assert_eq!(
        round_trip(&NamedBox(None), ByteOrder::Big, 0),
        NamedBox(None)
    );
    let g = GridBox::new([[1, 2], [3, 4]]);
    assert_eq!(round_trip(&g, ByteOrder::Little, 6), g);
    let a = AnyBox::new(corbina::Any::from_string("seven").unwrap());
    assert_eq!(round_trip(&a, ByteOrder::Big, 2), a);
    use corbina::typecode::TcKind;
    assert_eq!(Figure::type_code().kind(), TcKind::Value);
    assert_eq!(FigureList::type_code().kind(), TcKind::ValueBox);
}

/// The application's state of a `Blob`: a flag says whether an owner value follows.
#[derive(Debug, Default)]
struct BlobData {
    count: i32,
    weight: f64,
    owner: ValueRef<Square>,
}

impl CustomMarshal for BlobData {
    fn marshal<'a>(&'a self, out: &mut DataOutputStream<'_, 'a>) -> corbina::cdr::Result<()> {
        out.write(&self.count)?;
        out.write(&self.weight)?;
        let has_owner = !self.owner.is_null();
        out.write(if has_owner { &true } else { &false })?;
        if has_owner {
            out.write_value(&self.owner)?;
        }
        Ok(())
    }
}

fn unmarshal_blob(
    input: &mut DataInputStream<'_, '_>,
) -> corbina::cdr::Result<Arc<dyn CustomMarshal>> {
    let count = input.read()?;
    let weight = input.read()?;
    let owner = if input.read::<bool>()? {
        input.read_value()?
    } else {
        ValueRef::null()
    };
    Ok(Arc::new(BlobData {
        count,
        weight,
        owner,
    }))
}

fn encode_at<T: CdrEncode>(v: &T, pad: usize) -> corbina::cdr::Result<Vec<u8>> {
    let mut w = CdrWriter::with_byte_order(ByteOrder::NATIVE, ctx());
    for _ in 0..pad {
        w.write_octet(0);
    }
    v.encode(&mut w)?;
    Ok(w.into_bytes())
}

fn decode_at<T: for<'a> CdrDecode<'a>>(bytes: &[u8], pad: usize) -> corbina::cdr::Result<T> {
    let mut r = CdrReader::new(bytes, ByteOrder::NATIVE, ctx());
    r.read_bytes(pad)?;
    let v = T::decode(&mut r)?;
    r.expect_end()?;
    Ok(v)
}

#[test]
fn custom_values_marshal_through_data_streams_or_pass_through_opaque() {
    let _registry = registry();
    let owner = square(2.0);
    let blob = ValueRef::new(Blob {
        state: CustomState::typed(BlobData {
            count: 3,
            weight: 1.5,
            owner: owner.clone(),
        }),
    });
    // Typed both ways: the owner value travels inside the custom state.
    register_custom_unmarshal(Blob::REPOSITORY_ID, unmarshal_blob);
    for pad in 0..8 {
        let back: ValueRef<Blob> = decode_at(&encode_at(&blob, pad).unwrap(), pad).unwrap();
        let data = back.lock().unwrap().state.downcast::<BlobData>().unwrap();
        assert_eq!((data.count, data.weight), (3, 1.5));
        assert_eq!(data.owner.lock().unwrap().side, 2.0);
    }
    unregister_custom_unmarshal(Blob::REPOSITORY_ID);

    // No unmarshaller: state holding a value cannot be kept opaque.
    let err = decode_at::<ValueRef<Blob>>(&encode_at(&blob, 0).unwrap(), 0)
        .err()
        .unwrap();
    assert_eq!(err.exception_kind(), ExceptionKind::Marshal);
    assert!(
        err.to_string().contains("register an unmarshaller"),
        "{err}"
    );

    // Plain state: received opaque, re-sent byte for byte at the same alignment.
    let plain = ValueRef::new(Blob {
        state: CustomState::typed(BlobData {
            count: 7,
            weight: -2.25,
            owner: ValueRef::null(),
        }),
    });
    for pad in 0..8 {
        let sent = encode_at(&plain, pad).unwrap();
        let kept: ValueRef<Blob> = decode_at(&sent, pad).unwrap();
        assert!(matches!(
            kept.lock().unwrap().state,
            CustomState::Opaque { .. }
        ));
        assert_eq!(
            encode_at(&kept, pad).unwrap(),
            sent,
            "forwarded as received"
        );
        assert_eq!(encode_at(&kept, pad + 8).unwrap()[8..], sent[..]);
        // Four octets further the doubles inside would be misaligned: refused, not corrupted.
        let err = encode_at(&kept, pad + 4).err().unwrap();
        assert_eq!(err.exception_kind(), ExceptionKind::Marshal);
        // The forwarded bytes read back typed once the unmarshaller is known.
        register_custom_unmarshal(Blob::REPOSITORY_ID, unmarshal_blob);
        let typed: ValueRef<Blob> = decode_at(&encode_at(&kept, pad).unwrap(), pad).unwrap();
        unregister_custom_unmarshal(Blob::REPOSITORY_ID);
        let data = typed.lock().unwrap().state.downcast::<BlobData>().unwrap();
        assert_eq!((data.count, data.weight), (7, -2.25));
    }
    let empty = ValueRef::new(Blob::default());
    let back: ValueRef<Blob> = decode_at(&encode_at(&empty, 1).unwrap(), 1).unwrap();
    assert_eq!(back.lock().unwrap().state, CustomState::Empty);
}

#[derive(Default)]
struct GalleryImpl;

impl GalleryServant for GalleryImpl {
    fn biggest(&self, all: &[Figure]) -> Result<Figure, SystemException> {
        Ok(all
            .iter()
            .max_by(|a, b| area(a).partial_cmp(&area(b)).unwrap())
            .cloned()
            .unwrap_or_default())
    }
    fn echo(&self, v: &ValueBase) -> Result<ValueBase, SystemException> {
        Ok(v.clone())
    }
    fn paint(&self, c: &ValueRef<Canvas>) -> Result<ValueRef<Canvas>, SystemException> {
        Ok(c.clone())
    }
}

fn local_ref(servant: Arc<dyn corbina::Servant>, type_id: &str) -> ObjectRef {
    let mut ior = corbina::giop::Ior::nil();
    ior.type_id = type_id.to_string();
    ObjectRef::new(
        ior,
        b"key".to_vec(),
        Arc::new(ServantInvoker::new(servant, ctx())),
    )
}

#[test]
fn polymorphic_values_as_parameters_through_a_skeleton() {
    let _registry = registry();
    let g = Gallery::unchecked_narrow(&local_ref(
        Arc::new(GallerySkeleton::new(GalleryImpl)),
        Gallery::REPOSITORY_ID,
    ));
    let big = g
        .biggest(&[
            square(1.0).into(),
            ValueRef::new(Disc { side: 0.0, r: 3.0 }).into(),
        ])
        .unwrap();
    assert_eq!(big.0.repository_id(), Some(Disc::REPOSITORY_ID));
    assert!(g.biggest(&[]).unwrap().0.is_null());
    // ValueBase of a type nobody registered: the request cannot be unmarshalled.
    let err = g
        .echo(&ValueRef::new(Canvas::default()).into())
        .unwrap_err();
    assert_eq!(err.kind, corbina::SystemExceptionKind::Marshal);
    assert!(g.echo(&ValueBase::null()).unwrap().is_null());
    let c = g.paint(&ValueRef::new(Canvas::default())).unwrap();
    assert!(c.lock().unwrap().figures.is_empty());
    // A union state member starts as its first case.
    assert_eq!(Canvas::default().pick, Choice::Label(1, String::new()));
}

#[test]
fn a_value_serves_its_supported_interface() {
    // `Square supports Named`: the shared value itself is the servant.
    let s = square(4.0);
    let named = Named::unchecked_narrow(&local_ref(
        Arc::new(NamedSkeleton::new(s.clone())),
        Named::REPOSITORY_ID,
    ));
    assert_eq!(named.name().unwrap(), "square of side 4");
    s.lock().unwrap().grow(1.0).unwrap();
    assert_eq!(
        named.name().unwrap(),
        "square of side 5",
        "one shared state"
    );
    let gone = Named::unchecked_narrow(&local_ref(
        Arc::new(NamedSkeleton::new(ValueRef::<Square>::null())),
        Named::REPOSITORY_ID,
    ));
    assert_eq!(
        gone.name().unwrap_err().kind,
        corbina::SystemExceptionKind::ObjectNotExist
    );
}

/// A factory whose initializer raises: `cut` gives the IDL exceptions through the generated
/// error enum (`From` each exception and `SystemException`, `Display`, `Error`).
struct TileMaker;

impl ValueFactory for TileMaker {
    fn read_value(
        &self,
        r: &mut CdrReader<'_>,
        input: &mut corbina::valuetype::ValueInput,
        position: usize,
    ) -> corbina::cdr::Result<ValueBase> {
        corbina::valuetype::read_default::<Tile>(r, input, position)
    }
}

impl TileFactory for TileMaker {
    fn cut(&self, side: f64, max: f64) -> Result<ValueRef<Tile>, tile::CutError> {
        if side < 0.0 {
            return Err(Negative {}.into());
        }
        if side > max {
            return Err(TooBig { limit: max }.into());
        }
        Ok(ValueRef::new(Tile { side }))
    }

    fn unit(&self) -> ValueRef<Tile> {
        ValueRef::new(Tile { side: 1.0 })
    }
}

#[test]
fn factory_initializers_raise_through_their_error_enum() {
    let f: &dyn TileFactory = &TileMaker;
    assert_eq!(f.cut(2.0, 3.0).unwrap().lock().unwrap().side, 2.0);
    assert_eq!(
        f.cut(5.0, 3.0).unwrap_err(),
        tile::CutError::TooBig(TooBig { limit: 3.0 })
    );
    let err = f.cut(-1.0, 3.0).unwrap_err();
    assert_eq!(err, tile::CutError::Negative(Negative {}));
    let e: &dyn std::error::Error = &err;
    assert!(!e.to_string().is_empty());
    let sys = corbina::SystemException::new(corbina::SystemExceptionKind::BadParam, 1);
    assert_eq!(
        tile::CutError::from(sys.clone()),
        tile::CutError::System(sys)
    );
    assert_eq!(f.unit().lock().unwrap().side, 1.0);
}
