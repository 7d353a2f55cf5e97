//! The harness's own model of a value: what a random case holds, what an `Any`'s bytes
//! decode to, and what two sides' values are compared as. Valuetypes live in a [`Graph`]
//! of nodes (an arena), so sharing and cycles are explicit: a comparison maps nodes one to
//! one, so shared must stay shared and cycles must stay cycles.

use corbina::cdr::value::{
    RepositoryIds, ValueInput, ValueOutput, ValueStart, WriteHeader, WriteIds,
};
use corbina::cdr::{CdrEncode, CdrReader, CdrWriter, Fixed, LongDouble, MarshalError};
use corbina::giop::Ior;
use corbina::typecode::{decode_type_code, encode_type_code, TcKind, UnionLabel};
use corbina::{Any, TypeCode};
use std::collections::HashMap;
use std::fmt::Write as _;

/// One value of an IDL type (the type is carried beside it, not in it).
#[derive(Debug, Clone)]
pub enum Val {
    /// `null`/`void`: nothing on the wire.
    Unit,
    Bool(bool),
    Octet(u8),
    Short(i16),
    UShort(u16),
    Long(i32),
    ULong(u32),
    LongLong(i64),
    ULongLong(u64),
    /// By bits (NaN payloads and -0.0 compared exactly; the generator makes no NaNs).
    Float(u32),
    Double(u64),
    LongDouble([u8; 16]),
    Char(char),
    WChar(char),
    Str(String),
    WStr(String),
    /// The unscaled digits (the scale is the TypeCode's).
    Fixed(i128),
    Enum(u32),
    /// Struct and exception members in order.
    Struct(Vec<Val>),
    /// The discriminator's label value and the active member (arm index, value), if any.
    Union(i128, Option<(u32, Box<Val>)>),
    /// Sequence and array elements.
    Seq(Vec<Val>),
    Any(TypeCode, Box<Val>),
    TypeCode(TypeCode),
    /// A reference (`None`: nil); also an abstract interface holding a reference, or null.
    ObjRef(Option<Ior>),
    /// A valuetype or box: a node of the graph, or null; also an abstract interface holding
    /// a value (a `dt::ThingNode`, [`super::thing`]).
    Value(Option<usize>),
}

/// A valuetype instance: its concrete TypeCode and its state (inherited members first; a
/// box's content as the one member).
#[derive(Debug, Clone)]
pub struct Node {
    pub tc: TypeCode,
    pub state: Vec<Val>,
}

/// The valuetype instances one top-level value refers to.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    pub nodes: Vec<Node>,
}

/// A typed value: what one case sends.
#[derive(Debug, Clone)]
pub struct Typed {
    pub tc: TypeCode,
    pub val: Val,
    pub graph: Graph,
}

fn bad(reason: &'static str) -> MarshalError {
    MarshalError::InvalidValue { offset: 0, reason }
}

fn giop(e: corbina::giop::GiopError) -> MarshalError {
    match e {
        corbina::giop::GiopError::Marshal(m) => m,
        _ => bad("bad IOR"),
    }
}

/// Every state member of value type `tc`, base members first (resolved TypeCodes).
pub fn value_members(tc: &TypeCode) -> Result<Vec<TypeCode>, MarshalError> {
    let tc = tc.unalias();
    if tc.kind() == TcKind::ValueBox {
        return Ok(vec![tc.content_type().map_err(|_| bad("box"))?]);
    }
    let mut out = match tc.concrete_base_type().map_err(|_| bad("base"))? {
        Some(b) => value_members(&b)?,
        None => Vec::new(),
    };
    let n = tc.member_count().map_err(|_| bad("members"))?;
    for i in 0..n {
        out.push(tc.member_type(i).map_err(|_| bad("member"))?);
    }
    Ok(out)
}

/// The repository ids a value of `tc` is sent with: its own, then those of the bases it is
/// truncatable to.
pub fn truncatable_ids(tc: &TypeCode) -> Vec<String> {
    let mut ids = vec![tc.id().unwrap_or("").to_owned()];
    let mut t = tc.clone();
    while t.type_modifier().ok() == Some(3) {
        match t.concrete_base_type() {
            Ok(Some(b)) => {
                ids.push(b.id().unwrap_or("").to_owned());
                t = b;
            }
            _ => break,
        }
    }
    ids
}

fn is_value_kind(k: TcKind) -> bool {
    matches!(k, TcKind::Value | TcKind::ValueBox | TcKind::Event)
}

/// Writes `Typed` as CDR (what goes into an `Any`).
pub struct Encoder<'g> {
    graph: &'g Graph,
    out: ValueOutput,
}

impl CdrEncode for Typed {
    fn encode<'a>(&'a self, w: &mut CdrWriter<'a>) -> corbina::cdr::Result<()> {
        let mut e = Encoder {
            graph: &self.graph,
            out: ValueOutput::new(),
        };
        e.value(&self.tc, &self.val, w)
    }
}

impl Encoder<'_> {
    fn value(&mut self, tc: &TypeCode, v: &Val, w: &mut CdrWriter<'_>) -> corbina::cdr::Result<()> {
        let tc = tc.unalias();
        let k = tc.kind();
        if !is_value_kind(k) && k != TcKind::AbstractInterface {
            self.out.begin_member(w)?;
        }
        match (k, v) {
            (TcKind::Null | TcKind::Void, Val::Unit) => {}
            (TcKind::Boolean, Val::Bool(b)) => w.write_boolean(*b),
            (TcKind::Octet, Val::Octet(b)) => w.write_octet(*b),
            (TcKind::Short, Val::Short(x)) => w.write_short(*x),
            (TcKind::UShort, Val::UShort(x)) => w.write_ushort(*x),
            (TcKind::Long, Val::Long(x)) => w.write_long(*x),
            (TcKind::ULong, Val::ULong(x)) => w.write_ulong(*x),
            (TcKind::LongLong, Val::LongLong(x)) => w.write_longlong(*x),
            (TcKind::ULongLong, Val::ULongLong(x)) => w.write_ulonglong(*x),
            (TcKind::Float, Val::Float(x)) => w.write_ulong(*x),
            (TcKind::Double, Val::Double(x)) => w.write_ulonglong(*x),
            (TcKind::LongDouble, Val::LongDouble(b)) => {
                w.write_long_double(LongDouble::from_be_bytes(*b))
            }
            (TcKind::Char, Val::Char(c)) => w.write_char_unicode(*c)?,
            (TcKind::WChar, Val::WChar(c)) => w.write_wchar(*c)?,
            (TcKind::String, Val::Str(s)) => {
                w.write_string(s)?;
                self.out.end_member_chunk(w)?;
            }
            (TcKind::WString, Val::WStr(s)) => {
                w.write_wstring(s)?;
                self.out.end_member_chunk(w)?;
            }
            (TcKind::Fixed, Val::Fixed(x)) => {
                let d = tc.fixed_digits().map_err(|_| bad("fixed"))? as u8;
                let s = tc.fixed_scale().map_err(|_| bad("fixed"))? as u8;
                Fixed::new(*x, d, s)?.encode(w)?;
            }
            (TcKind::Enum, Val::Enum(x)) => w.write_ulong(*x),
            (TcKind::Struct | TcKind::Except, Val::Struct(ms)) => {
                if k == TcKind::Except {
                    w.write_string(tc.id().map_err(|_| bad("id"))?)?;
                }
                for (i, m) in ms.iter().enumerate() {
                    let mt = tc.member_type(i as u32).map_err(|_| bad("member"))?;
                    self.value(&mt, m, w)?;
                }
            }
            (TcKind::Union, Val::Union(d, arm)) => {
                let dt = tc.discriminator_type().map_err(|_| bad("disc"))?;
                write_label(w, &dt, *d)?;
                if let Some((i, m)) = arm {
                    let mt = tc.member_type(*i).map_err(|_| bad("arm"))?;
                    self.value(&mt, m, w)?;
                }
            }
            (TcKind::Sequence | TcKind::Array, Val::Seq(es)) => {
                let et = tc.content_type().map_err(|_| bad("content"))?;
                if k == TcKind::Sequence {
                    w.write_length(es.len())?;
                }
                for e in es {
                    self.value(&et, e, w)?;
                }
            }
            (TcKind::Any, Val::Any(t, inner)) => {
                encode_type_code(t, w)?;
                self.value(t, inner, w)?;
            }
            (TcKind::TypeCode, Val::TypeCode(t)) => encode_type_code(t, w)?,
            (TcKind::Objref, Val::ObjRef(r)) => {
                r.clone().unwrap_or_else(Ior::nil).encode(w).map_err(giop)?
            }
            (TcKind::AbstractInterface, Val::Value(Some(i))) => {
                self.out.begin_member(w)?;
                w.write_boolean(false);
                self.node(*i, w)?;
            }
            (TcKind::AbstractInterface, Val::ObjRef(r)) => {
                self.out.begin_member(w)?;
                match r {
                    Some(ior) => {
                        w.write_boolean(true);
                        ior.encode(w).map_err(giop)?;
                    }
                    None => {
                        w.write_boolean(false);
                        self.out.write_null(w)?;
                    }
                }
            }
            (TcKind::Value | TcKind::ValueBox | TcKind::Event, Val::Value(None)) => {
                self.out.write_null(w)?
            }
            (TcKind::Value | TcKind::ValueBox | TcKind::Event, Val::Value(Some(i))) => {
                self.node(*i, w)?
            }
            _ => return Err(bad("value does not fit its TypeCode")),
        }
        Ok(())
    }

    /// Node `i`: its header and state, or an indirection when it was written before.
    fn node(&mut self, i: usize, w: &mut CdrWriter<'_>) -> corbina::cdr::Result<()> {
        let node = self.graph.nodes.get(i).ok_or_else(|| bad("node"))?;
        let ids = truncatable_ids(&node.tc);
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let header = if refs.len() > 1 {
            WriteHeader {
                repository_ids: WriteIds::List(&refs),
                codebase: None,
                chunked: true,
            }
        } else if node.tc.type_modifier().ok() == Some(1) {
            // A custom value: chunked, its state written as the TypeCode's members.
            WriteHeader {
                repository_ids: WriteIds::Single(refs[0]),
                codebase: None,
                chunked: true,
            }
        } else {
            WriteHeader::single(refs[0])
        };
        if self.out.begin_value(w, i + 1, &header)? {
            let types = value_members(&node.tc)?;
            if types.len() != node.state.len() {
                return Err(bad("state length"));
            }
            for (t, m) in types.iter().zip(&node.state) {
                self.value(t, m, w)?;
            }
            self.out.end_value(w)?;
        }
        Ok(())
    }
}

fn write_label(w: &mut CdrWriter<'_>, dt: &TypeCode, v: i128) -> corbina::cdr::Result<()> {
    match dt.unalias().kind() {
        TcKind::Short => w.write_short(v as i16),
        TcKind::UShort => w.write_ushort(v as u16),
        TcKind::Long => w.write_long(v as i32),
        TcKind::ULong | TcKind::Enum => w.write_ulong(v as u32),
        TcKind::LongLong => w.write_longlong(v as i64),
        TcKind::ULongLong => w.write_ulonglong(v as u64),
        TcKind::Boolean => w.write_boolean(v != 0),
        TcKind::Char => w.write_octet(v as u8),
        TcKind::WChar => w.write_wchar(char::from_u32(v as u32).ok_or_else(|| bad("wchar"))?)?,
        _ => return Err(bad("discriminator kind")),
    }
    Ok(())
}

fn read_label(r: &mut CdrReader<'_>, dt: &TypeCode) -> corbina::cdr::Result<i128> {
    Ok(match dt.unalias().kind() {
        TcKind::Short => r.read_short()?.into(),
        TcKind::UShort => r.read_ushort()?.into(),
        TcKind::Long => r.read_long()?.into(),
        TcKind::ULong | TcKind::Enum => r.read_ulong()?.into(),
        TcKind::LongLong => r.read_longlong()?.into(),
        TcKind::ULongLong => r.read_ulonglong()?.into(),
        TcKind::Boolean => i128::from(r.read_boolean()?),
        TcKind::Char => r.read_octet()?.into(),
        TcKind::WChar => u32::from(r.read_wchar()?).into(),
        _ => return Err(bad("discriminator kind")),
    })
}

/// The arm a union's discriminator value selects (an explicit label, else the default).
pub fn select_arm(tc: &TypeCode, d: i128) -> Option<u32> {
    let n = tc.member_count().ok()?;
    (0..n)
        .find(|&i| tc.member_label_value(i).ok() == Some(UnionLabel::Value(d)))
        .or_else(|| u32::try_from(tc.default_index().ok()?).ok())
}

/// Decodes an `Any`'s value into the model.
pub fn decode_any(any: &Any) -> Result<Typed, MarshalError> {
    let mut r = any.value_reader();
    let t = decode_value(any.type_code().clone(), &mut r)?;
    r.expect_end()?;
    Ok(t)
}

/// Decodes a value of type `tc` from `r` into the model (a custom value's state is read
/// as its TypeCode's members, as [`Encoder`] writes it).
pub fn decode_value(tc: TypeCode, r: &mut CdrReader<'_>) -> Result<Typed, MarshalError> {
    let mut d = Decoder {
        input: ValueInput::new(),
        at: HashMap::new(),
        graph: Graph::default(),
    };
    let val = d.value(&tc, r)?;
    Ok(Typed {
        tc,
        val,
        graph: d.graph,
    })
}

struct Decoder {
    input: ValueInput,
    /// Value tag position → node.
    at: HashMap<usize, usize>,
    graph: Graph,
}

impl Decoder {
    fn value(&mut self, tc: &TypeCode, r: &mut CdrReader<'_>) -> Result<Val, MarshalError> {
        let tc = tc.unalias();
        let k = tc.kind();
        if !is_value_kind(k)
            && !matches!(
                k,
                TcKind::AbstractInterface | TcKind::Struct | TcKind::Array
            )
        {
            self.input.begin_member(r)?;
        }
        Ok(match k {
            TcKind::Null | TcKind::Void => Val::Unit,
            TcKind::Boolean => Val::Bool(r.read_boolean()?),
            TcKind::Octet => Val::Octet(r.read_octet()?),
            TcKind::Short => Val::Short(r.read_short()?),
            TcKind::UShort => Val::UShort(r.read_ushort()?),
            TcKind::Long => Val::Long(r.read_long()?),
            TcKind::ULong => Val::ULong(r.read_ulong()?),
            TcKind::LongLong => Val::LongLong(r.read_longlong()?),
            TcKind::ULongLong => Val::ULongLong(r.read_ulonglong()?),
            TcKind::Float => Val::Float(r.read_ulong()?),
            TcKind::Double => Val::Double(r.read_ulonglong()?),
            TcKind::LongDouble => Val::LongDouble(r.read_long_double()?.be_bytes),
            TcKind::Char => Val::Char(r.read_char_unicode()?),
            TcKind::WChar => Val::WChar(r.read_wchar()?),
            TcKind::String => Val::Str(r.read_string()?),
            TcKind::WString => Val::WStr(r.read_wstring()?),
            TcKind::Fixed => {
                let d = tc.fixed_digits().map_err(|_| bad("fixed"))? as u8;
                let s = tc.fixed_scale().map_err(|_| bad("fixed"))? as u8;
                Val::Fixed(Fixed::decode(r, d, s)?.value)
            }
            TcKind::Enum => Val::Enum(r.read_ulong()?),
            TcKind::Struct | TcKind::Except => {
                if k == TcKind::Except {
                    r.read_string()?;
                }
                let n = tc.member_count().map_err(|_| bad("members"))?;
                let mut ms = Vec::new();
                for i in 0..n {
                    let mt = tc.member_type(i).map_err(|_| bad("member"))?;
                    ms.push(self.value(&mt, r)?);
                }
                Val::Struct(ms)
            }
            TcKind::Union => {
                let dt = tc.discriminator_type().map_err(|_| bad("disc"))?;
                let d = read_label(r, &dt)?;
                let arm = match select_arm(&tc, d) {
                    Some(i) => {
                        let mt = tc.member_type(i).map_err(|_| bad("arm"))?;
                        Some((i, Box::new(self.value(&mt, r)?)))
                    }
                    None => None,
                };
                Val::Union(d, arm)
            }
            TcKind::Sequence | TcKind::Array => {
                let et = tc.content_type().map_err(|_| bad("content"))?;
                let n = if k == TcKind::Sequence {
                    r.read_length(1)?
                } else {
                    tc.length().map_err(|_| bad("length"))? as usize
                };
                let mut es = Vec::new();
                for _ in 0..n {
                    es.push(self.value(&et, r)?);
                }
                Val::Seq(es)
            }
            TcKind::Any => {
                let t = decode_type_code(r)?;
                let inner = self.value(&t, r)?;
                Val::Any(t, Box::new(inner))
            }
            TcKind::TypeCode => Val::TypeCode(decode_type_code(r)?),
            TcKind::Objref => {
                let ior = Ior::decode(r).map_err(giop)?;
                Val::ObjRef((!ior.is_nil()).then_some(ior))
            }
            TcKind::AbstractInterface => {
                self.input.begin_member(r)?;
                if r.read_boolean()? {
                    Val::ObjRef(Some(Ior::decode(r).map_err(giop)?))
                } else {
                    // The value's type is not in the TypeCode: ThingNode is the one known.
                    match self.node(&super::thing::thing_node_tc(), r, true)? {
                        Val::Value(None) => Val::ObjRef(None),
                        v => v,
                    }
                }
            }
            TcKind::Value | TcKind::ValueBox | TcKind::Event => self.node(&tc, r, false)?,
            _ => return Err(bad("kind the harness does not model")),
        })
    }

    /// A value of type `tc`: null, an indirection to a node read before, or a new node
    /// (`check_id`: whose repository id must be `tc`'s).
    fn node(
        &mut self,
        tc: &TypeCode,
        r: &mut CdrReader<'_>,
        check_id: bool,
    ) -> Result<Val, MarshalError> {
        let at = r.position();
        Ok(match self.input.read_value(r)? {
            ValueStart::Null => Val::Value(None),
            ValueStart::Indirection { target } => match self.at.get(&target) {
                Some(&i) => Val::Value(Some(i)),
                None => {
                    return Err(MarshalError::InvalidIndirection {
                        offset: at,
                        indirection: 0,
                    })
                }
            },
            ValueStart::Value(h) => {
                let id = tc.id().map_err(|_| bad("id"))?;
                let known = match &h.repository_ids {
                    RepositoryIds::None => true,
                    RepositoryIds::Single(s) => **s == *id,
                    RepositoryIds::List(l) => l.first().is_some_and(|s| **s == *id),
                };
                if check_id && !known {
                    return Err(bad("abstract interface holding a value of an unknown type"));
                }
                let idx = self.graph.nodes.len();
                self.graph.nodes.push(Node {
                    tc: tc.clone(),
                    state: Vec::new(),
                });
                self.at.insert(h.position, idx);
                let mut state = Vec::new();
                for t in value_members(tc)? {
                    state.push(self.value(&t, r)?);
                }
                self.input.end_value(r)?;
                self.graph.nodes[idx].state = state;
                Val::Value(Some(idx))
            }
        })
    }
}

/// Compares two typed values: TypeCodes equivalent, values equal, value graphs isomorphic
/// (each node of one side matched with exactly one of the other). `Err` says where and how
/// they differ.
pub fn compare(a: &Typed, b: &Typed) -> Result<(), String> {
    if !a.tc.equivalent(&b.tc) {
        return Err(format!(
            "TypeCodes differ: sent {}, got {}",
            tc_summary(&a.tc),
            tc_summary(&b.tc)
        ));
    }
    let mut c = Cmp {
        ga: &a.graph,
        gb: &b.graph,
        fwd: HashMap::new(),
        back: HashMap::new(),
    };
    c.val(&a.tc, &a.val, &b.val, &mut String::from("$"))
}

struct Cmp<'g> {
    ga: &'g Graph,
    gb: &'g Graph,
    fwd: HashMap<usize, usize>,
    back: HashMap<usize, usize>,
}

impl Cmp<'_> {
    fn val(&mut self, tc: &TypeCode, a: &Val, b: &Val, path: &mut String) -> Result<(), String> {
        let tc = tc.unalias();
        let mismatch = || format!("at {path}: sent {a:?}, got {b:?}");
        match (a, b) {
            (Val::Struct(x), Val::Struct(y)) | (Val::Seq(x), Val::Seq(y)) => {
                if x.len() != y.len() {
                    return Err(format!(
                        "at {path}: {} elements sent, {} got",
                        x.len(),
                        y.len()
                    ));
                }
                let is_struct = matches!(a, Val::Struct(_));
                let et = if is_struct {
                    None
                } else {
                    Some(tc.content_type().map_err(|e| e.to_string())?)
                };
                for (i, (p, q)) in x.iter().zip(y).enumerate() {
                    let t = match &et {
                        Some(t) => t.clone(),
                        None => tc.member_type(i as u32).map_err(|e| e.to_string())?,
                    };
                    let len = path.len();
                    if is_struct {
                        let _ = write!(path, ".{}", tc.member_name(i as u32).unwrap_or("?"));
                    } else {
                        let _ = write!(path, "[{i}]");
                    }
                    self.val(&t, p, q, path)?;
                    path.truncate(len);
                }
                Ok(())
            }
            (Val::Union(d, x), Val::Union(e, y)) => {
                if d != e {
                    return Err(format!("at {path}: discriminator {d} sent, {e} got"));
                }
                match (x, y) {
                    (None, None) => Ok(()),
                    (Some((i, p)), Some((j, q))) if i == j => {
                        let t = tc.member_type(*i).map_err(|e| e.to_string())?;
                        let len = path.len();
                        let _ = write!(path, ".{}", tc.member_name(*i).unwrap_or("?"));
                        self.val(&t, p, q, path)?;
                        path.truncate(len);
                        Ok(())
                    }
                    _ => Err(mismatch()),
                }
            }
            (Val::Any(t, p), Val::Any(u, q)) => {
                if !t.equivalent(u) {
                    return Err(format!(
                        "at {path}: inner TypeCode {} sent, {} got",
                        tc_summary(t),
                        tc_summary(u)
                    ));
                }
                path.push_str("<any>");
                self.val(t, p, q, path)
            }
            (Val::TypeCode(t), Val::TypeCode(u)) => {
                if t.equivalent(u) {
                    Ok(())
                } else {
                    Err(format!(
                        "at {path}: TypeCode {} sent, {} got",
                        tc_summary(t),
                        tc_summary(u)
                    ))
                }
            }
            (Val::ObjRef(x), Val::ObjRef(y)) => {
                let key = |r: &Option<Ior>| {
                    r.as_ref().map(|i| {
                        let p = i.iiop_profiles().unwrap_or_default();
                        (
                            i.type_id.clone(),
                            p.iter()
                                .map(|p| (p.host.clone(), p.port, p.object_key.clone()))
                                .collect::<Vec<_>>(),
                        )
                    })
                };
                if key(x) == key(y) {
                    Ok(())
                } else {
                    Err(mismatch())
                }
            }
            (Val::Value(None), Val::Value(None)) => Ok(()),
            (Val::Value(Some(i)), Val::Value(Some(j))) => {
                match (self.fwd.get(i), self.back.get(j)) {
                    (Some(m), _) if m == j => return Ok(()),
                    (None, None) => {}
                    _ => {
                        return Err(format!(
                            "at {path}: sharing differs (node #{i} sent, node #{j} got)"
                        ))
                    }
                }
                self.fwd.insert(*i, *j);
                self.back.insert(*j, *i);
                let (na, nb) = (&self.ga.nodes[*i], &self.gb.nodes[*j]);
                if !na.tc.equivalent(&nb.tc) {
                    return Err(format!("at {path}: value of another type"));
                }
                let types = value_members(&na.tc).map_err(|e| e.to_string())?;
                if na.state.len() != nb.state.len() || types.len() != na.state.len() {
                    return Err(format!("at {path}: state lengths differ"));
                }
                for (k, t) in types.iter().enumerate() {
                    let len = path.len();
                    let _ = write!(path, "->#{i}.{k}");
                    self.val(t, &na.state[k], &nb.state[k], path)?;
                    path.truncate(len);
                }
                Ok(())
            }
            _ => {
                if leaf_eq(a, b) {
                    Ok(())
                } else {
                    Err(mismatch())
                }
            }
        }
    }
}

fn leaf_eq(a: &Val, b: &Val) -> bool {
    use Val::*;
    match (a, b) {
        (Unit, Unit) => true,
        (Bool(x), Bool(y)) => x == y,
        (Octet(x), Octet(y)) => x == y,
        (Short(x), Short(y)) => x == y,
        (UShort(x), UShort(y)) => x == y,
        (Long(x), Long(y)) => x == y,
        (ULong(x), ULong(y)) => x == y,
        (LongLong(x), LongLong(y)) => x == y,
        (ULongLong(x), ULongLong(y)) => x == y,
        (Float(x), Float(y)) => x == y,
        (Double(x), Double(y)) => x == y,
        (LongDouble(x), LongDouble(y)) => x == y,
        (Char(x), Char(y)) | (WChar(x), WChar(y)) => x == y,
        (Str(x), Str(y)) | (WStr(x), WStr(y)) => x == y,
        (Fixed(x), Fixed(y)) => x == y,
        (Enum(x), Enum(y)) => x == y,
        _ => false,
    }
}

/// A one-line description of a TypeCode (kind and repository id).
pub fn tc_summary(tc: &TypeCode) -> String {
    if matches!(
        tc.kind(),
        TcKind::String | TcKind::WString | TcKind::Sequence
    ) {
        return format!("{:?}<{}>", tc.kind(), tc.length().unwrap_or(0));
    }
    match tc.id() {
        Ok(id) => format!("{:?} {id}", tc.kind()),
        Err(_) => format!("{:?}", tc.kind()),
    }
}

/// The IDL declarations of every named type `tc` uses, in dependency order, and its own
/// type expression: what a failing case prints.
pub fn idl(tc: &TypeCode) -> String {
    let mut p = IdlPrinter::default();
    let top = p.ty(tc);
    p.decls.push(format!("// the Any holds: {top}"));
    p.decls.join("\n")
}

#[derive(Default)]
struct IdlPrinter {
    done: std::collections::HashSet<String>,
    decls: Vec<String>,
}

impl IdlPrinter {
    fn ty(&mut self, tc: &TypeCode) -> String {
        let k = tc.kind();
        let name = tc.name().unwrap_or("").to_owned();
        let id = tc.id().unwrap_or("").to_owned();
        let named = !id.is_empty()
            && matches!(
                k,
                TcKind::Struct
                    | TcKind::Except
                    | TcKind::Union
                    | TcKind::Enum
                    | TcKind::Alias
                    | TcKind::Value
                    | TcKind::ValueBox
                    | TcKind::Event
                    | TcKind::Objref
                    | TcKind::AbstractInterface
            );
        if named && !self.done.insert(id.clone()) {
            return name;
        }
        let n = |i| tc.member_name(i).unwrap_or("?").to_owned();
        let count = tc.member_count().unwrap_or(0);
        let s = match k {
            TcKind::String | TcKind::WString => {
                let b = tc.length().unwrap_or(0);
                let base = if k == TcKind::String {
                    "string"
                } else {
                    "wstring"
                };
                return if b > 0 {
                    format!("{base}<{b}>")
                } else {
                    base.into()
                };
            }
            TcKind::Sequence => {
                let e = tc.content_type().map(|t| self.ty(&t)).unwrap_or_default();
                let b = tc.length().unwrap_or(0);
                return if b > 0 {
                    format!("sequence<{e}, {b}>")
                } else {
                    format!("sequence<{e}>")
                };
            }
            TcKind::Array => {
                let e = tc.content_type().map(|t| self.ty(&t)).unwrap_or_default();
                return format!("{e}[{}]", tc.length().unwrap_or(0));
            }
            TcKind::Fixed => {
                return format!(
                    "fixed<{}, {}>",
                    tc.fixed_digits().unwrap_or(0),
                    tc.fixed_scale().unwrap_or(0)
                )
            }
            TcKind::Struct | TcKind::Except => {
                let kw = if k == TcKind::Struct {
                    "struct"
                } else {
                    "exception"
                };
                let ms: Vec<String> = (0..count)
                    .map(|i| {
                        let t = tc.member_type(i).map(|t| self.ty(&t)).unwrap_or_default();
                        format!("{t} {};", n(i))
                    })
                    .collect();
                format!("{kw} {name} {{ {} }}; // {id}", ms.join(" "))
            }
            TcKind::Union => {
                let d = tc
                    .discriminator_type()
                    .map(|t| self.ty(&t))
                    .unwrap_or_default();
                let ms: Vec<String> = (0..count)
                    .map(|i| {
                        let t = tc.member_type(i).map(|t| self.ty(&t)).unwrap_or_default();
                        let l = match tc.member_label_value(i) {
                            Ok(UnionLabel::Value(v)) => format!("case {v}"),
                            _ => "default".into(),
                        };
                        format!("{l}: {t} {};", n(i))
                    })
                    .collect();
                format!("union {name} switch ({d}) {{ {} }}; // {id}", ms.join(" "))
            }
            TcKind::Enum => {
                let ms: Vec<String> = (0..count).map(n).collect();
                format!("enum {name} {{ {} }}; // {id}", ms.join(", "))
            }
            TcKind::Alias => {
                let t = tc.content_type().map(|t| self.ty(&t)).unwrap_or_default();
                format!("typedef {t} {name}; // {id}")
            }
            TcKind::ValueBox => {
                let t = tc.content_type().map(|t| self.ty(&t)).unwrap_or_default();
                format!("valuetype {name} {t}; // {id}")
            }
            TcKind::Value | TcKind::Event => {
                let m = tc.type_modifier().unwrap_or(0);
                let base = match tc.concrete_base_type() {
                    Ok(Some(b)) => {
                        let b = self.ty(&b);
                        if m == 3 {
                            format!(" : truncatable {b}")
                        } else {
                            format!(" : {b}")
                        }
                    }
                    _ => String::new(),
                };
                let ms: Vec<String> = (0..count)
                    .map(|i| {
                        let t = tc.member_type(i).map(|t| self.ty(&t)).unwrap_or_default();
                        let vis = if tc.member_visibility(i).unwrap_or(1) == 1 {
                            "public"
                        } else {
                            "private"
                        };
                        format!("{vis} {t} {};", n(i))
                    })
                    .collect();
                let custom = if m == 1 { "custom " } else { "" };
                format!(
                    "{custom}valuetype {name}{base} {{ {} }}; // {id}",
                    ms.join(" ")
                )
            }
            TcKind::Objref => format!("interface {name}; // {id}"),
            TcKind::AbstractInterface => format!("abstract interface {name}; // {id}"),
            other => return idl_primitive(other).to_owned(),
        };
        self.decls.push(s);
        name
    }
}

fn idl_primitive(k: TcKind) -> &'static str {
    match k {
        TcKind::Null => "null",
        TcKind::Void => "void",
        TcKind::Short => "short",
        TcKind::Long => "long",
        TcKind::UShort => "unsigned short",
        TcKind::ULong => "unsigned long",
        TcKind::Float => "float",
        TcKind::Double => "double",
        TcKind::Boolean => "boolean",
        TcKind::Char => "char",
        TcKind::Octet => "octet",
        TcKind::Any => "any",
        TcKind::TypeCode => "TypeCode",
        TcKind::LongLong => "long long",
        TcKind::ULongLong => "unsigned long long",
        TcKind::LongDouble => "long double",
        TcKind::WChar => "wchar",
        _ => "?",
    }
}

/// The value printed for a failing case: the top value, each graph node, and the IDL of
/// the TypeCodes inside the value (an `any`'s type, a `TypeCode` value).
pub fn show(t: &Typed) -> String {
    let mut s = format!("{:?}", t.val);
    for (i, n) in t.graph.nodes.iter().enumerate() {
        let _ = write!(s, "\n  node #{i} ({}): {:?}", tc_summary(&n.tc), n.state);
    }
    fn inner(v: &Val, out: &mut Vec<TypeCode>) {
        match v {
            Val::TypeCode(t) => out.push(t.clone()),
            Val::Any(t, v) => {
                out.push(t.clone());
                inner(v, out);
            }
            Val::Struct(vs) | Val::Seq(vs) => vs.iter().for_each(|v| inner(v, out)),
            Val::Union(_, Some((_, v))) => inner(v, out),
            _ => {}
        }
    }
    let mut tcs = Vec::new();
    inner(&t.val, &mut tcs);
    t.graph
        .nodes
        .iter()
        .for_each(|n| n.state.iter().for_each(|v| inner(v, &mut tcs)));
    for tc in tcs {
        let _ = write!(s, "\n  inner type:\n{}", idl(&tc));
    }
    s
}
