//! Drives the polymorphic value readers (`corbina::valuetype`) over hostile bytes: `ValueBase`
//! and an abstract-typed read through the factory registry (a registered type whose state
//! holds more polymorphic values, sequences of them and a truncatable base), a concrete
//! `ValueRef<Base>` holding values derived from `Base` (through the registry and through the
//! generated `DERIVED` list), and a custom value's opaque state. Every read must return Ok or Err, never panic, loop or allocate
//! without bound; a value read must re-encode.
#![no_main]

use std::sync::{Arc, Once};

use corbina::cdr::value::{ValueInput, ValueOutput, ValueStart};
use corbina::cdr::{ByteOrder, CdrContext, CdrEncode, CdrReader, CdrWriter, Result};
use corbina::valuetype::{
    register_value_factory, BaseView, CustomState, DefaultFactory, Derives, KnownValue,
    ValueMember, ValueRef, ValueType,
};
use corbina::ValueBase;
use libfuzzer_sys::fuzz_target;

/// `valuetype Node : truncatable Base { long id; ValueBase next; sequence<ValueBase> kids; };`
#[derive(Debug, Default)]
struct Node {
    id: i32,
    next: ValueBase,
    kids: Vec<ValueBase>,
}

impl ValueType for Node {
    const REPOSITORY_ID: &'static str = "IDL:F/Node:1.0";
    const REPOSITORY_IDS: &'static [&'static str] = &["IDL:F/Node:1.0", "IDL:F/Base:1.0"];
    const CHUNKED: bool = true;
    const BASE_IDS: &'static [&'static str] = &["IDL:F/Base:1.0", "IDL:F/Abstract:1.0"];
    const BASE_VIEWS: &'static [BaseView] = &[BaseView::of::<Node, Base>()];
    fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        out.begin_member(w)?;
        w.write_long(self.id);
        self.next.write_member(w, out)?;
        self.kids.write_member(w, out)
    }
    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        input.begin_member(r)?;
        let id = r.read_long()?;
        let next = ValueBase::read_member(r, input)?;
        let kids = Vec::read_member(r, input)?;
        Ok(Node { id, next, kids })
    }
}

impl Derives<Base> for Node {
    fn take_base(&mut self) -> Base {
        Base {
            id: std::mem::take(&mut self.id),
        }
    }
    fn put_base(&mut self, b: Base) {
        self.id = b.id;
    }
}

/// `valuetype Base { long id; };`
#[derive(Debug, Default)]
struct Base {
    id: i32,
}

impl ValueType for Base {
    const REPOSITORY_ID: &'static str = "IDL:F/Base:1.0";
    const REPOSITORY_IDS: &'static [&'static str] = &["IDL:F/Base:1.0"];
    const CHUNKED: bool = false;
    const DERIVED: &'static [KnownValue] = &[KnownValue::of::<Leaf>()];
    fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        out.begin_member(w)?;
        w.write_long(self.id);
        Ok(())
    }
    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        input.begin_member(r)?;
        Ok(Base { id: r.read_long()? })
    }
}

/// `valuetype Leaf : Base { long extra; };`: known to Base's code only (not registered).
#[derive(Debug, Default)]
struct Leaf {
    id: i32,
    extra: i32,
}

impl ValueType for Leaf {
    const REPOSITORY_ID: &'static str = "IDL:F/Leaf:1.0";
    const REPOSITORY_IDS: &'static [&'static str] = &["IDL:F/Leaf:1.0"];
    const CHUNKED: bool = false;
    const BASE_IDS: &'static [&'static str] = &["IDL:F/Base:1.0"];
    const BASE_VIEWS: &'static [BaseView] = &[BaseView::of::<Leaf, Base>()];
    fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        out.begin_member(w)?;
        w.write_long(self.id);
        out.begin_member(w)?;
        w.write_long(self.extra);
        Ok(())
    }
    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        input.begin_member(r)?;
        let id = r.read_long()?;
        input.begin_member(r)?;
        let extra = r.read_long()?;
        Ok(Leaf { id, extra })
    }
}

impl Derives<Base> for Leaf {
    fn take_base(&mut self) -> Base {
        Base {
            id: std::mem::take(&mut self.id),
        }
    }
    fn put_base(&mut self, b: Base) {
        self.id = b.id;
    }
}

const KNOWN: &[KnownValue] = &[KnownValue::of::<Node>()];

fn clear(v: &ValueBase) {
    // Cycles are possible: break them so the graph is freed.
    if let Some(n) = v.downcast::<Node>() {
        if let Some(mut g) = n.lock() {
            let next = std::mem::take(&mut g.next);
            let kids = std::mem::take(&mut g.kids);
            drop(g);
            clear(&next);
            kids.iter().for_each(clear);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        register_value_factory(Node::REPOSITORY_ID, Arc::new(DefaultFactory::<Node>::new()));
        register_value_factory(Base::REPOSITORY_ID, Arc::new(DefaultFactory::<Base>::new()));
    });
    let [mode, rest @ ..] = data else { return };
    let order = ByteOrder::from_flag(*mode);
    let ctx = CdrContext::GIOP_1_2;
    let mut r = CdrReader::new(rest, order, ctx).with_max_depth(64);
    let mut input = ValueInput::new();
    let got = match mode >> 1 & 3 {
        0 => ValueBase::read_member(&mut r, &mut input),
        1 => ValueBase::read_as(&mut r, &mut input, "IDL:F/Abstract:1.0", KNOWN),
        2 => {
            // A concrete formal type holding a derived value: its Base part must be readable
            // and the whole re-encode.
            if let Ok(v) = ValueRef::<Base>::read_member(&mut r, &mut input) {
                let _ = v.lock().map(|b| b.id);
                let mut w = CdrWriter::with_byte_order(order, ctx);
                v.encode(&mut w).expect("a value read re-encodes");
                clear(&ValueBase::from(v));
            }
            return;
        }
        _ => {
            if let Ok(ValueStart::Value(_)) = input.read_value(&mut r) {
                if CustomState::read(&mut r, &mut input, "IDL:F/Custom:1.0").is_ok() {
                    let _ = input.end_value(&mut r);
                }
            }
            return;
        }
    };
    if let Ok(v) = got {
        let mut w = CdrWriter::with_byte_order(order, ctx);
        v.encode(&mut w).expect("a value read re-encodes");
        clear(&v);
    }
});
