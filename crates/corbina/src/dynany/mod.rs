//! `DynamicAny`: values of types known only at run time, built and taken apart piece by
//! piece.
//!
//! A [`DynAny`] is a tree of dynamic values shaped by its TypeCode: made from an [`Any`]
//! ([`DynAnyFactory::create_dyn_any`], which walks the TypeCode over the value's CDR bytes)
//! or from a TypeCode alone ([`DynAnyFactory::create_dyn_any_from_type_code`], every part
//! at its default), changed with the CORBA operations, and turned back into an `Any`
//! ([`DynAny::to_any`]). One Rust type plays every role of the IDL family: `DynStruct`,
//! `DynSequence`, `DynArray`, `DynUnion`, `DynEnum` and `DynFixed` are aliases of it, and
//! their operations fail with [`DynAnyError::TypeMismatch`] on a value of another kind.
//!
//! ```
//! use corbina::dynany::{DynAnyFactory, NameValuePair};
//! use corbina::typecode::{StructMember, TypeCode};
//! use corbina::Any;
//!
//! let point = TypeCode::create_struct_tc("IDL:Point:1.0", "Point", vec![
//!     StructMember::new("x", TypeCode::LONG),
//!     StructMember::new("y", TypeCode::LONG),
//! ])?;
//! let mut d = DynAnyFactory::create_dyn_any_from_type_code(&point)?;
//! d.insert_long(3)?;          // the current component: x
//! d.next();
//! d.insert_long(4)?;          // y
//! let any = d.to_any()?;
//! let back = DynAnyFactory::create_dyn_any(&any)?;
//! let members = back.get_members()?;
//! assert_eq!(members[1].id, "y");
//! assert_eq!(members[1].value.to_long(), Some(4));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::any::Any;
use crate::cdr::codeset::CharCodeSet;
use crate::cdr::value::{ValueInput, ValueOutput};
use crate::cdr::{CdrReader, CdrWriter, Fixed, LongDouble, MarshalError};
use crate::giop::Ior;
use crate::typecode::{TcKind, TypeCode, UnionLabel};
use crate::valuetype::ValueBase;
use thiserror::Error;

mod ops;
mod values;
mod valuetypes;

/// The exceptions of the `DynamicAny` module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum DynAnyError {
    /// `DynAny::TypeMismatch`: the operation does not fit the value's type.
    #[error("DynAny::TypeMismatch")]
    TypeMismatch,
    /// `DynAny::InvalidValue`: a value out of range, or no current component.
    #[error("DynAny::InvalidValue")]
    InvalidValue,
    /// `DynAnyFactory::InconsistentTypeCode`: no DynAny for this TypeCode.
    #[error("DynAnyFactory::InconsistentTypeCode")]
    InconsistentTypeCode,
}

type DResult<T> = Result<T, DynAnyError>;

/// `DynamicAny::NameValuePair`.
#[derive(Debug, Clone, PartialEq)]
pub struct NameValuePair {
    /// Member name.
    pub id: String,
    /// Member value.
    pub value: Any,
}

/// `DynamicAny::NameDynAnyPair`.
#[derive(Debug, Clone)]
pub struct NameDynAnyPair {
    /// Member name.
    pub id: String,
    /// Member value.
    pub value: DynAny,
}

/// `DynamicAny::DynStruct` (also used for exceptions).
pub type DynStruct = DynAny;
/// `DynamicAny::DynSequence`.
pub type DynSequence = DynAny;
/// `DynamicAny::DynArray`.
pub type DynArray = DynAny;
/// `DynamicAny::DynUnion`.
pub type DynUnion = DynAny;
/// `DynamicAny::DynEnum`.
pub type DynEnum = DynAny;
/// `DynamicAny::DynFixed`.
pub type DynFixed = DynAny;
/// `DynamicAny::DynValue` (also for eventtypes).
pub type DynValue = DynAny;
/// `DynamicAny::DynValueBox`.
pub type DynValueBox = DynAny;

/// `DynamicAny::DynAnyFactory`.
pub struct DynAnyFactory;

impl DynAnyFactory {
    /// `create_dyn_any(value)`.
    pub fn create_dyn_any(value: &Any) -> DResult<DynAny> {
        let mut r = value.value_reader();
        let mut values = ValueInput::new();
        let d = DynAny::read(value.type_code(), &mut r, &mut values)
            .map_err(|_| DynAnyError::InvalidValue)?;
        r.expect_end().map_err(|_| DynAnyError::InvalidValue)?;
        Ok(d)
    }

    /// `create_dyn_any_from_type_code(tc)`: every part at its default (zero, empty, the
    /// first enumerator, the first union member).
    ///
    /// A TypeCode nested deeper than one can be sent ([`crate::typecode::MAX_TYPECODE_DEPTH`])
    /// is InconsistentTypeCode: its default value would be as deep.
    pub fn create_dyn_any_from_type_code(tc: &TypeCode) -> DResult<DynAny> {
        if tc.node.height > crate::typecode::MAX_TYPECODE_DEPTH + 1 {
            return Err(DynAnyError::InconsistentTypeCode);
        }
        DynAny::default_of(tc)
    }
}

/// A dynamic value (see the module documentation).
///
/// A tree built through the API can be of any depth (a list of values given to
/// `set_members_as_dyn_any` one level at a time): cloning, comparing and dropping it use
/// bounded stack whatever the depth, and `Debug` prints it down to [`DEBUG_DEPTH`] levels.
pub struct DynAny {
    tc: TypeCode,
    v: Value,
    /// The current component (-1: none).
    pos: i32,
}

/// A union's active member: its index in the TypeCode and its value.
type Arm = Option<(u32, Box<DynAny>)>;

#[derive(Debug, Clone, PartialEq)]
enum Value {
    Empty,
    Short(i16),
    UShort(u16),
    Long(i32),
    ULong(u32),
    LongLong(i64),
    ULongLong(u64),
    Float(f32),
    Double(f64),
    LongDouble(LongDouble),
    Boolean(bool),
    Char(char),
    Octet(u8),
    WChar(char),
    String(String),
    WString(String),
    Fixed(Fixed),
    Any(Any),
    TypeCode(TypeCode),
    /// An object reference (nil: `None`); also nil and the object form of an abstract
    /// interface.
    Objref(Option<Ior>),
    /// The value form of an abstract interface (never null: a null value is nil, `Objref(None)`).
    Abstract(ValueBase),
    Enum(u32),
    /// Struct and exception members.
    Members(Vec<DynAny>),
    Union {
        disc: Box<DynAny>,
        arm: Arm,
    },
    /// Sequence and array elements.
    Elements(Vec<DynAny>),
    /// A null valuetype (a non-null one holds `Members`: inherited state first).
    Null,
    /// A value box: `None` is null.
    Boxed(Option<Box<DynAny>>),
}

/// A tree this deep or shallower drops by plain recursion.
const DROP_DIRECT_DEPTH: u32 = 16;

thread_local! {
    static DROP_DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

impl Drop for DynAny {
    /// A DynAny tree an application builds through the API can be of any depth: beyond a few
    /// levels, the components are taken out and dropped from a list, not by recursion.
    fn drop(&mut self) {
        let Ok(depth) = DROP_DEPTH.try_with(|d| d.get()) else {
            return;
        };
        if depth < DROP_DIRECT_DEPTH {
            DROP_DEPTH.with(|d| d.set(depth + 1));
            let v = std::mem::replace(&mut self.v, Value::Empty);
            drop(v);
            DROP_DEPTH.with(|d| d.set(depth));
            return;
        }
        let mut work = Vec::new();
        take_components(&mut self.v, &mut work);
        while let Some(mut d) = work.pop() {
            take_components(&mut d.v, &mut work);
        }
    }
}

/// Moves the components held by `v` to `out`.
fn take_components(v: &mut Value, out: &mut Vec<DynAny>) {
    match std::mem::replace(v, Value::Empty) {
        Value::Members(ms) | Value::Elements(ms) => out.extend(ms),
        Value::Union { disc, arm } => {
            out.push(*disc);
            if let Some((_, a)) = arm {
                out.push(*a);
            }
        }
        Value::Boxed(Some(b)) => out.push(*b),
        _ => {}
    }
}

impl PartialEq for DynAny {
    /// `equal()`.
    fn eq(&self, other: &DynAny) -> bool {
        self.equal(other)
    }
}

impl Clone for DynAny {
    /// A deep copy: each level starts where stack is left (a tree has no depth bound).
    fn clone(&self) -> DynAny {
        DynAny {
            tc: self.tc.clone(),
            v: crate::valuetype::nested(|| self.v.clone()),
            pos: self.pos,
        }
    }
}

/// How many levels of a tree `Debug` prints; deeper components show as `DynAny { .. }`.
pub const DEBUG_DEPTH: u32 = 16;

thread_local! {
    static DEBUG_LEVEL: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

impl std::fmt::Debug for DynAny {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let level = DEBUG_LEVEL.with(std::cell::Cell::get);
        if level >= DEBUG_DEPTH {
            return f.write_str("DynAny { .. }");
        }
        DEBUG_LEVEL.with(|l| l.set(level + 1));
        let r = f
            .debug_struct("DynAny")
            .field("tc", &self.tc)
            .field("v", &self.v)
            .field("pos", &self.pos)
            .finish();
        DEBUG_LEVEL.with(|l| l.set(level));
        r
    }
}

fn tc_err<T>(_: T) -> DynAnyError {
    DynAnyError::InconsistentTypeCode
}

fn invalid(r: &CdrReader<'_>, reason: &'static str) -> MarshalError {
    MarshalError::InvalidValue {
        offset: r.position(),
        reason,
    }
}

/// The label value of a discriminator DynAny (booleans 0/1, chars their code, enums the
/// index).
fn disc_value(d: &DynAny) -> Option<i128> {
    Some(match &d.v {
        Value::Short(v) => (*v).into(),
        Value::UShort(v) => (*v).into(),
        Value::Long(v) => (*v).into(),
        Value::ULong(v) => (*v).into(),
        Value::LongLong(v) => (*v).into(),
        Value::ULongLong(v) => (*v).into(),
        Value::Boolean(v) => i128::from(*v),
        Value::Char(c) | Value::WChar(c) => u32::from(*c).into(),
        Value::Enum(v) => (*v).into(),
        _ => return None,
    })
}

fn disc_of(tc: &TypeCode, v: i128) -> Option<DynAny> {
    let t = tc.unalias();
    let value = match t.kind() {
        TcKind::Short => Value::Short(i16::try_from(v).ok()?),
        TcKind::UShort => Value::UShort(u16::try_from(v).ok()?),
        TcKind::Long => Value::Long(i32::try_from(v).ok()?),
        TcKind::ULong => Value::ULong(u32::try_from(v).ok()?),
        TcKind::LongLong => Value::LongLong(i64::try_from(v).ok()?),
        TcKind::ULongLong => Value::ULongLong(u64::try_from(v).ok()?),
        TcKind::Boolean => Value::Boolean(v != 0),
        TcKind::Char => Value::Char(char::from(u8::try_from(v).ok()?)),
        TcKind::WChar => Value::WChar(char::from_u32(u32::try_from(v).ok()?)?),
        TcKind::Enum if v < i128::from(t.member_count().ok()?) => {
            Value::Enum(u32::try_from(v).ok()?)
        }
        _ => return None,
    };
    Some(DynAny::new_leaf(tc.clone(), value))
}

/// The union member selected by discriminator value `v`, if any.
fn arm_for(u: &TypeCode, v: i128) -> Option<u32> {
    let n = u.member_count().ok()?;
    (0..n)
        .find(|&i| u.member_label_value(i) == Ok(UnionLabel::Value(v)))
        .or_else(|| u32::try_from(u.default_index().ok()?).ok())
}

/// A discriminator value no label of `u` names (for the default or no member).
fn unused_label(u: &TypeCode) -> Option<i128> {
    let disc = u.discriminator_type().ok()?;
    let n = u.member_count().ok()?;
    let used = |v: i128| (0..n).any(|i| u.member_label_value(i) == Ok(UnionLabel::Value(v)));
    (0..=i128::from(u16::MAX)).find(|&v| !used(v) && disc_of(&disc, v).is_some())
}

fn is_constructed(k: TcKind) -> bool {
    matches!(
        k,
        TcKind::Struct
            | TcKind::Except
            | TcKind::Union
            | TcKind::Sequence
            | TcKind::Array
            | TcKind::Value
            | TcKind::Event
    )
}

macro_rules! primitive_ops {
    ($($insert:ident, $get:ident, $t:ty, $variant:ident;)*) => {
        impl DynAny {$(
            #[doc = concat!("`", stringify!($insert), "` (on the current component of a constructed value).")]
            pub fn $insert(&mut self, v: $t) -> DResult<()> {
                match &mut self.leaf_mut()?.v {
                    Value::$variant(x) => {
                        *x = v;
                        Ok(())
                    }
                    _ => Err(DynAnyError::TypeMismatch),
                }
            }

            #[doc = concat!("`", stringify!($get), "` (of the current component of a constructed value).")]
            pub fn $get(&self) -> DResult<$t> {
                match &self.leaf()?.v {
                    Value::$variant(x) => Ok(x.clone()),
                    _ => Err(DynAnyError::TypeMismatch),
                }
            }
        )*}
    };
}

primitive_ops! {
    insert_boolean, get_boolean, bool, Boolean;
    insert_octet, get_octet, u8, Octet;
    insert_short, get_short, i16, Short;
    insert_ushort, get_ushort, u16, UShort;
    insert_long, get_long, i32, Long;
    insert_ulong, get_ulong, u32, ULong;
    insert_float, get_float, f32, Float;
    insert_double, get_double, f64, Double;
    insert_longlong, get_longlong, i64, LongLong;
    insert_ulonglong, get_ulonglong, u64, ULongLong;
    insert_longdouble, get_longdouble, LongDouble, LongDouble;
    insert_typecode, get_typecode, TypeCode, TypeCode;
    insert_any, get_any, Any, Any;
}

impl DynAny {
    /// `insert_reference` (on the current component of a constructed value): for an abstract
    /// interface, makes it the object form (nil for `None`).
    pub fn insert_reference(&mut self, v: Option<Ior>) -> DResult<()> {
        let d = self.leaf_mut()?;
        let abstract_iface = d.kind() == TcKind::AbstractInterface;
        match &mut d.v {
            Value::Objref(x) => *x = v,
            x @ Value::Abstract(_) if abstract_iface => *x = Value::Objref(v),
            _ => return Err(DynAnyError::TypeMismatch),
        }
        Ok(())
    }

    /// `get_reference` (of the current component of a constructed value): `TypeMismatch` for
    /// an abstract interface holding a value.
    pub fn get_reference(&self) -> DResult<Option<Ior>> {
        match &self.leaf()?.v {
            Value::Objref(x) => Ok(x.clone()),
            _ => Err(DynAnyError::TypeMismatch),
        }
    }

    /// The value half of `insert_abstract` (CORBA 3.0 §9.2.3.4): makes an abstract interface
    /// the value form (nil for a null value). `TypeMismatch` for any other type.
    pub fn insert_abstract_value(&mut self, v: ValueBase) -> DResult<()> {
        let d = self.leaf_mut()?;
        if d.kind() != TcKind::AbstractInterface {
            return Err(DynAnyError::TypeMismatch);
        }
        d.v = if v.is_null() {
            Value::Objref(None)
        } else {
            Value::Abstract(v)
        };
        Ok(())
    }

    /// The value half of `get_abstract`: the value an abstract interface holds, sharing its
    /// handle. `TypeMismatch` for the object form, nil, or any other type.
    pub fn get_abstract_value(&self) -> DResult<ValueBase> {
        match &self.leaf()?.v {
            Value::Abstract(v) => Ok(v.clone()),
            _ => Err(DynAnyError::TypeMismatch),
        }
    }
}

impl DynAny {
    fn new_leaf(tc: TypeCode, v: Value) -> DynAny {
        DynAny { tc, v, pos: -1 }
    }

    fn with_components(tc: TypeCode, v: Value) -> DynAny {
        let mut d = DynAny { tc, v, pos: -1 };
        d.pos = if d.component_count() > 0 { 0 } else { -1 };
        d
    }

    fn kind(&self) -> TcKind {
        self.tc.unalias().kind()
    }

    // ---- DynAny

    /// `type()`.
    pub fn type_code(&self) -> &TypeCode {
        &self.tc
    }

    /// `assign(dyn_any)`: takes `other`'s value; `TypeMismatch` unless the types are
    /// equivalent.
    pub fn assign(&mut self, other: &DynAny) -> DResult<()> {
        if !self.tc.equivalent(&other.tc) {
            return Err(DynAnyError::TypeMismatch);
        }
        self.v = other.v.clone();
        self.pos = if self.component_count() > 0 { 0 } else { -1 };
        Ok(())
    }

    /// `from_any(value)`: `TypeMismatch` unless the types are equivalent.
    pub fn from_any(&mut self, value: &Any) -> DResult<()> {
        if !self.tc.equivalent(value.type_code()) {
            return Err(DynAnyError::TypeMismatch);
        }
        let mut d = DynAnyFactory::create_dyn_any(value)?;
        self.v = std::mem::replace(&mut d.v, Value::Empty);
        self.pos = d.pos;
        Ok(())
    }

    /// `to_any()`. `InvalidValue` only for a value no `char` code set can hold (a
    /// non-ASCII `char` together with a string outside ISO 8859-1).
    pub fn to_any(&self) -> DResult<Any> {
        for cs in [CharCodeSet::Utf8, CharCodeSet::Iso8859_1] {
            let mut w = Any::value_writer(cs);
            if self.write(&mut w, &mut ValueOutput::new()).is_ok() {
                return Ok(Any::from_written(self.tc.clone(), w.into_bytes(), cs));
            }
        }
        Err(DynAnyError::InvalidValue)
    }

    /// `equal(dyn_any)`: equivalent types and equal values (the current positions are
    /// not compared).
    pub fn equal(&self, other: &DynAny) -> bool {
        self.tc.equivalent(&other.tc) && crate::valuetype::nested(|| self.v == other.v)
    }

    /// `copy()`.
    pub fn copy(&self) -> DynAny {
        self.clone()
    }

    /// `destroy()`: nothing to do in Rust beyond dropping.
    pub fn destroy(self) {}

    /// `component_count()`: members of a struct, exception or sequence/array, 2 for a
    /// union with an active member (discriminator, member), 1 without; 0 otherwise.
    pub fn component_count(&self) -> u32 {
        match &self.v {
            Value::Members(v) | Value::Elements(v) => v.len() as u32,
            Value::Union { arm, .. } => 1 + u32::from(arm.is_some()),
            _ => 0,
        }
    }

    fn component(&self, i: i32) -> Option<&DynAny> {
        let i = usize::try_from(i).ok()?;
        match &self.v {
            Value::Members(v) | Value::Elements(v) => v.get(i),
            Value::Union { disc, arm } => match i {
                0 => Some(disc),
                1 => arm.as_ref().map(|a| &*a.1),
                _ => None,
            },
            _ => None,
        }
    }

    fn component_mut(&mut self, i: i32) -> Option<&mut DynAny> {
        let i = usize::try_from(i).ok()?;
        match &mut self.v {
            Value::Members(v) | Value::Elements(v) => v.get_mut(i),
            Value::Union { arm, .. } if i == 1 => arm.as_mut().map(|a| &mut *a.1),
            // The discriminator is changed through `set_discriminator` only, so the member
            // always matches it.
            _ => None,
        }
    }

    /// `current_component()`: `TypeMismatch` for a value without components; `None` when
    /// there is no current one.
    pub fn current_component(&mut self) -> DResult<Option<&mut DynAny>> {
        if !is_constructed(self.kind()) {
            return Err(DynAnyError::TypeMismatch);
        }
        let pos = self.pos;
        Ok(self.component_mut(pos))
    }

    /// `next()`: moves to the next component; false (and no current one) past the last.
    #[allow(clippy::should_implement_trait)] // the CORBA operation's name
    pub fn next(&mut self) -> bool {
        self.seek(self.pos + 1)
    }

    /// `seek(index)`: false (and no current one) if there is no such component.
    pub fn seek(&mut self, index: i32) -> bool {
        if index >= 0 && (index as u32) < self.component_count() {
            self.pos = index;
            true
        } else {
            self.pos = -1;
            false
        }
    }

    /// `rewind()`.
    pub fn rewind(&mut self) {
        self.seek(0);
    }

    /// The value `insert_*`/`get_*` act on: this one, or the current component.
    fn leaf(&self) -> DResult<&DynAny> {
        if !is_constructed(self.kind()) {
            return Ok(self);
        }
        let c = self.component(self.pos).ok_or(DynAnyError::InvalidValue)?;
        if is_constructed(c.kind()) {
            return Err(DynAnyError::TypeMismatch);
        }
        Ok(c)
    }

    fn leaf_mut(&mut self) -> DResult<&mut DynAny> {
        if !is_constructed(self.kind()) {
            return Ok(self);
        }
        if self.kind() == TcKind::Union && self.pos == 0 {
            // Use `set_discriminator` to change the discriminator.
            return Err(DynAnyError::TypeMismatch);
        }
        let pos = self.pos;
        let c = self.component_mut(pos).ok_or(DynAnyError::InvalidValue)?;
        if is_constructed(c.kind()) {
            return Err(DynAnyError::TypeMismatch);
        }
        Ok(c)
    }

    /// `insert_char`: an ISO 8859-1 character (`InvalidValue` above U+00FF).
    pub fn insert_char(&mut self, c: char) -> DResult<()> {
        if u32::from(c) > 0xff {
            return Err(DynAnyError::InvalidValue);
        }
        match &mut self.leaf_mut()?.v {
            Value::Char(x) => {
                *x = c;
                Ok(())
            }
            _ => Err(DynAnyError::TypeMismatch),
        }
    }

    /// `get_char`.
    pub fn get_char(&self) -> DResult<char> {
        match self.leaf()?.v {
            Value::Char(c) => Ok(c),
            _ => Err(DynAnyError::TypeMismatch),
        }
    }

    /// `insert_wchar`: a character of the Basic Multilingual Plane.
    pub fn insert_wchar(&mut self, c: char) -> DResult<()> {
        if u32::from(c) > 0xffff {
            return Err(DynAnyError::InvalidValue);
        }
        match &mut self.leaf_mut()?.v {
            Value::WChar(x) => {
                *x = c;
                Ok(())
            }
            _ => Err(DynAnyError::TypeMismatch),
        }
    }

    /// `get_wchar`.
    pub fn get_wchar(&self) -> DResult<char> {
        match self.leaf()?.v {
            Value::WChar(c) => Ok(c),
            _ => Err(DynAnyError::TypeMismatch),
        }
    }

    fn insert_str(&mut self, s: &str, wide: bool) -> DResult<()> {
        let d = self.leaf_mut()?;
        let bound = d.tc.unalias().length().unwrap_or(0);
        if bound > 0 && s.chars().count() > bound as usize {
            return Err(DynAnyError::InvalidValue);
        }
        match (&mut d.v, wide) {
            (Value::String(x), false) | (Value::WString(x), true) => {
                *x = s.to_owned();
                Ok(())
            }
            _ => Err(DynAnyError::TypeMismatch),
        }
    }

    /// `insert_string` (`InvalidValue` past a bound).
    pub fn insert_string(&mut self, s: &str) -> DResult<()> {
        self.insert_str(s, false)
    }

    /// `insert_wstring` (`InvalidValue` past a bound).
    pub fn insert_wstring(&mut self, s: &str) -> DResult<()> {
        self.insert_str(s, true)
    }

    /// `get_string`.
    pub fn get_string(&self) -> DResult<String> {
        match &self.leaf()?.v {
            Value::String(s) => Ok(s.clone()),
            _ => Err(DynAnyError::TypeMismatch),
        }
    }

    /// `get_wstring`.
    pub fn get_wstring(&self) -> DResult<String> {
        match &self.leaf()?.v {
            Value::WString(s) => Ok(s.clone()),
            _ => Err(DynAnyError::TypeMismatch),
        }
    }

    /// `insert_dyn_any(value)`: into an `any`, the value as an `Any`.
    pub fn insert_dyn_any(&mut self, value: &DynAny) -> DResult<()> {
        let a = value.to_any()?;
        self.insert_any(a)
    }

    /// `get_dyn_any()`: the `Any` held, as a DynAny.
    pub fn get_dyn_any(&self) -> DResult<DynAny> {
        DynAnyFactory::create_dyn_any(&self.get_any()?)
    }
}
