//! `dt::ThingNode` of `peers/differential.idl`, a valuetype supporting the abstract interface
//! `dt::Thing`: what an abstract interface in a random case holds when it holds a value.
//! An abstract interface's TypeCode does not say what the value is, so every side needs
//! the type: omniORB C++ registers its generated factory, and Corbina (the harness's ORB and
//! its echo servant, one process) the factory of the state below, written as corbina-idl
//! generates it.

use std::sync::{Arc, Once};

use corbina::cdr::{CdrReader, CdrWriter, Result};
use corbina::typecode::{TcKind, ValueMember as TcMember};
use corbina::valuetype::{
    register_value_factory, DefaultFactory, ValueInput, ValueMember, ValueOutput, ValueRef,
    ValueType,
};
use corbina::TypeCode;

/// Repository id of `dt::ThingNode`.
pub const THING_NODE_ID: &str = "IDL:dt/ThingNode:1.0";
/// Repository id of the abstract interface `dt::Thing`.
pub const THING_ID: &str = "IDL:dt/Thing:1.0";

/// `valuetype ThingNode supports Thing { public long id; public string label; public
/// ThingNode next; }`.
#[derive(Debug, Default)]
pub struct ThingNode {
    pub id: i32,
    pub label: String,
    pub next: ValueRef<ThingNode>,
}

impl ValueType for ThingNode {
    const REPOSITORY_ID: &'static str = THING_NODE_ID;
    const REPOSITORY_IDS: &'static [&'static str] = &[THING_NODE_ID];
    const CHUNKED: bool = false;
    const BASE_IDS: &'static [&'static str] = &[THING_ID];

    fn write_state<'a>(&'a self, w: &mut CdrWriter<'a>, out: &mut ValueOutput) -> Result<()> {
        out.begin_member(w)?;
        w.write_long(self.id);
        out.begin_member(w)?;
        w.write_string(&self.label)?;
        out.end_member_chunk(w)?;
        self.next.write_member(w, out)
    }

    fn read_state(r: &mut CdrReader<'_>, input: &mut ValueInput) -> Result<Self> {
        input.begin_member(r)?;
        let id = r.read_long()?;
        input.begin_member(r)?;
        let label = r.read_string()?;
        let next = ValueRef::read_member(r, input)?;
        Ok(ThingNode { id, label, next })
    }
}

/// `ThingNode`'s TypeCode (the harness's model decodes the value by it).
pub fn thing_node_tc() -> TypeCode {
    TypeCode::create_value_tc(
        THING_NODE_ID,
        "ThingNode",
        0,
        None,
        vec![
            TcMember::new("id", TypeCode::primitive(TcKind::Long), 1),
            TcMember::new("label", TypeCode::create_string_tc(0), 1),
            TcMember::new("next", TypeCode::create_recursive_tc(THING_NODE_ID), 1),
        ],
    )
    .expect("valid value TypeCode")
}

/// Registers `ThingNode`'s factory in this process (once).
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        register_value_factory(THING_NODE_ID, Arc::new(DefaultFactory::<ThingNode>::new()));
    });
}
