//! Drives the abstract interface readers over hostile bytes: the boolean discriminator, then
//! an object reference or a value (through the factory registry and the known types), typed
//! (`AbstractRef::read`) and through the TypeCode walker (an `Any` of a
//! `tk_abstract_interface` and a `DynAny` of it, and of a struct of two, sharing one value
//! scope). Every read must return Ok or Err, never panic, loop or allocate without bound;
//! what is read re-encodes.
#![no_main]

use std::sync::{Arc, Once};

use corbina::cdr::value::{ValueInput, ValueOutput};
use corbina::cdr::{ByteOrder, CdrContext, CdrEncode, CdrReader, CdrWriter, Result};
use corbina::dynany::DynAnyFactory;
use corbina::typecode::StructMember;
use corbina::valuetype::{
    register_value_factory, DefaultFactory, KnownValue, ValueMember, ValueType,
};
use corbina::{AbstractRef, Any, ObjectRef, TypeCode, ValueBase};
use libfuzzer_sys::fuzz_target;

/// `valuetype Pet supports Named { long id; ValueBase next; };`
#[derive(Debug, Default)]
struct Pet {
    id: i32,
    next: ValueBase,
}

impl ValueType for Pet {
    const REPOSITORY_ID: &'static str = "IDL:F/Pet:1.0";
    const REPOSITORY_IDS: &'static [&'static str] = &["IDL:F/Pet:1.0"];
    const CHUNKED: bool = false;
    fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        out.begin_member(w)?;
        w.write_long(self.id);
        self.next.write_member(w, out)
    }
    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        input.begin_member(r)?;
        let id = r.read_long()?;
        let next = ValueBase::read_member(r, input)?;
        Ok(Pet { id, next })
    }
}

/// Truncatable to nothing known: only skippable by its chunks.
#[derive(Debug, Default)]
struct Chunked {
    id: i32,
}

impl ValueType for Chunked {
    const REPOSITORY_ID: &'static str = "IDL:F/Chunked:1.0";
    const REPOSITORY_IDS: &'static [&'static str] = &["IDL:F/Chunked:1.0"];
    const CHUNKED: bool = true;
    fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        out.begin_member(w)?;
        w.write_long(self.id);
        Ok(())
    }
    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        input.begin_member(r)?;
        Ok(Chunked { id: r.read_long()? })
    }
}

const KNOWN: &[KnownValue] = &[KnownValue::of::<Chunked>()];

fn clear(v: &ValueBase) {
    // Cycles are possible: break them so the graph is freed.
    if let Some(p) = v.downcast::<Pet>() {
        let next = p.lock().map(|mut g| std::mem::take(&mut g.next));
        if let Some(next) = next {
            clear(&next);
        }
    }
}

fn type_codes() -> &'static (TypeCode, TypeCode) {
    static TC: std::sync::OnceLock<(TypeCode, TypeCode)> = std::sync::OnceLock::new();
    TC.get_or_init(|| {
        let named = TypeCode::create_abstract_interface_tc("IDL:F/Named:1.0", "Named").unwrap();
        let pair = TypeCode::create_struct_tc(
            "IDL:F/Pair:1.0",
            "Pair",
            vec![
                StructMember::new("a", named.clone()),
                StructMember::new("b", named.clone()),
            ],
        )
        .unwrap();
        (named, pair)
    })
}

fuzz_target!(|data: &[u8]| {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        register_value_factory(Pet::REPOSITORY_ID, Arc::new(DefaultFactory::<Pet>::new()));
    });
    let [mode, rest @ ..] = data else { return };
    let order = ByteOrder::from_flag(*mode);
    let ctx = CdrContext::GIOP_1_2;
    match mode >> 1 & 3 {
        0 => {
            let mut r = CdrReader::new(rest, order, ctx).with_max_depth(64);
            let mut input = ValueInput::new();
            if let Ok(v) = AbstractRef::<ObjectRef>::read(&mut r, &mut input, KNOWN) {
                let mut w = CdrWriter::with_byte_order(order, ctx);
                v.write(&mut w, &mut ValueOutput::new())
                    .expect("an abstract interface read re-encodes");
                if let Some(v) = v.as_value() {
                    clear(v);
                }
            }
        }
        m => {
            let (named, pair) = type_codes();
            let tc = if m == 1 { named } else { pair };
            if let Ok(any) = Any::from_cdr(tc.clone(), rest, order, ctx, 0) {
                let mut w = CdrWriter::with_byte_order(order, ctx);
                any.encode(&mut w).expect("an Any read re-encodes");
                if m == 1 {
                    // A DynAny of it holds either form and converts back.
                    if let Ok(d) = DynAnyFactory::create_dyn_any(&any) {
                        d.to_any().expect("a DynAny of a read Any converts back");
                        if let Ok(v) = d.get_abstract_value() {
                            clear(&v);
                        }
                    }
                }
            }
        }
    }
});
