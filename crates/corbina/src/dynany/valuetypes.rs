//! `DynValue` and `DynValueBox` (CORBA 3.0 §9.2.11–12): valuetypes and value boxes, null or
//! not. A non-null value's components are its state members, inherited ones first, so the
//! `DynStruct`-like operations (`current_member_name`, `get_members`, `set_members`, ...)
//! apply to it. A `DynAny` is a tree: a value graph with sharing or a cycle (an indirection on
//! the wire) is refused with `InvalidValue` rather than copied apart or looped over.

use super::*;
use crate::cdr::value::{ValueStart, WriteHeader, WriteIds};

/// Type modifier of a truncatable value (`CORBA::VM_TRUNCATABLE`).
const VM_TRUNCATABLE: i16 = 3;
/// Type modifier of a custom-marshalled value (`CORBA::VM_CUSTOM`).
const VM_CUSTOM: i16 = 1;

/// A value type's state members, inherited ones first: (name, type).
pub(super) fn value_members(t: &TypeCode) -> DResult<Vec<(String, TypeCode)>> {
    let mut chain = vec![t.clone()];
    while let Some(b) = chain
        .last()
        .and_then(|c| c.concrete_base_type().ok().flatten())
    {
        chain.push(b);
    }
    let mut out = Vec::new();
    for c in chain.iter().rev() {
        for i in 0..c.member_count().map_err(tc_err)? {
            out.push((
                c.member_name(i).map_err(tc_err)?.to_owned(),
                c.member_type(i).map_err(tc_err)?,
            ));
        }
    }
    Ok(out)
}

/// The repository ids to send for a value of type `t`: its own, then (truncatable) its
/// bases' up the truncatable chain.
fn repository_ids(t: &TypeCode) -> Vec<String> {
    let mut ids = vec![t.id().unwrap_or("").to_owned()];
    let mut cur = t.clone();
    while cur.type_modifier() == Ok(VM_TRUNCATABLE) {
        let Some(b) = cur.concrete_base_type().ok().flatten() else {
            break;
        };
        ids.push(b.id().unwrap_or("").to_owned());
        cur = b;
    }
    ids
}

impl DynAny {
    /// Reads a valuetype or value box (the tag, then the state).
    pub(super) fn read_value_type(
        t: &TypeCode,
        r: &mut CdrReader<'_>,
        values: &mut ValueInput,
    ) -> crate::cdr::Result<Value> {
        let boxed = t.kind() == TcKind::ValueBox;
        let h = match values.read_value(r)? {
            ValueStart::Null if boxed => return Ok(Value::Boxed(None)),
            ValueStart::Null => return Ok(Value::Null),
            ValueStart::Indirection { .. } => {
                return Err(invalid(r, "a DynAny cannot hold a shared or cyclic value"))
            }
            ValueStart::Value(h) => h,
        };
        let formal = t.id().unwrap_or("");
        let ids = &h.repository_ids;
        let known = match ids.most_derived() {
            None => true,
            Some(id) if id == formal => true,
            // Truncated to the TypeCode's type, as a receiver knowing only it does.
            Some(_) => h.chunked && ids.iter().any(|id| id == formal),
        };
        if !known || t.type_modifier() == Ok(VM_CUSTOM) {
            return Err(invalid(r, "value of a type the TypeCode does not describe"));
        }
        r.enter()?;
        let v = if boxed {
            let content = t.content_type().map_err(|_| invalid(r, "bad TypeCode"))?;
            DynAny::read(&content, r, values).map(|c| Value::Boxed(Some(Box::new(c))))
        } else {
            let members = value_members(t).map_err(|_| invalid(r, "bad TypeCode"))?;
            let mut ms = Vec::new();
            members
                .iter()
                .try_for_each(|(_, mt)| DynAny::read(mt, r, values).map(|m| ms.push(m)))
                .map(|()| Value::Members(ms))
        };
        r.leave();
        let v = v?;
        // Skips a truncated derived state, through the end tag.
        values.end_value(r)?;
        Ok(v)
    }

    /// Writes a valuetype or value box.
    pub(super) fn write_value_type<'a>(
        &'a self,
        w: &mut CdrWriter<'a>,
        values: &mut ValueOutput,
    ) -> crate::cdr::Result<()> {
        let t = self.tc.unalias();
        let state: &[DynAny] = match &self.v {
            Value::Null | Value::Boxed(None) => return values.write_null(w),
            Value::Boxed(Some(c)) => std::slice::from_ref(&**c),
            Value::Members(ms) => ms,
            _ => {
                return Err(MarshalError::InvalidValue {
                    offset: w.position(),
                    reason: "DynAny value of the wrong kind",
                })
            }
        };
        let ids = repository_ids(&t);
        let id_refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let truncatable = id_refs.len() > 1;
        let header = WriteHeader {
            repository_ids: if truncatable {
                WriteIds::List(&id_refs)
            } else {
                WriteIds::Single(id_refs[0])
            },
            codebase: None,
            chunked: truncatable,
        };
        // A tree has no sharing: each node is its own value.
        values.begin_value(w, self as *const DynAny as usize, &header)?;
        for m in state {
            m.write(w, values)?;
        }
        values.end_value(w)
    }

    // ---- DynValueCommon

    /// `DynValueCommon::is_null()` (`TypeMismatch` for a value of another kind).
    pub fn is_null(&self) -> DResult<bool> {
        match &self.v {
            Value::Null | Value::Boxed(None) => Ok(true),
            Value::Members(_) if matches!(self.kind(), TcKind::Value | TcKind::Event) => Ok(false),
            Value::Boxed(Some(_)) => Ok(false),
            _ => Err(DynAnyError::TypeMismatch),
        }
    }

    /// `DynValueCommon::set_to_null()`.
    pub fn set_to_null(&mut self) -> DResult<()> {
        self.v = match self.kind() {
            TcKind::Value | TcKind::Event => Value::Null,
            TcKind::ValueBox => Value::Boxed(None),
            _ => return Err(DynAnyError::TypeMismatch),
        };
        self.pos = -1;
        Ok(())
    }

    /// `DynValueCommon::set_to_value()`: a null value becomes one with every member (or
    /// the boxed value) at its default; a non-null one is left as it is.
    pub fn set_to_value(&mut self) -> DResult<()> {
        if !self.is_null()? {
            return Ok(());
        }
        let t = self.tc.unalias();
        self.v = if t.kind() == TcKind::ValueBox {
            let c = t.content_type().map_err(tc_err)?;
            Value::Boxed(Some(Box::new(DynAny::default_of(&c)?)))
        } else {
            let ms = value_members(&t)?
                .iter()
                .map(|(_, mt)| DynAny::default_of(mt))
                .collect::<DResult<Vec<_>>>()?;
            Value::Members(ms)
        };
        self.pos = if self.component_count() > 0 { 0 } else { -1 };
        Ok(())
    }

    // ---- DynValueBox

    fn boxed(&self) -> DResult<&DynAny> {
        match &self.v {
            Value::Boxed(Some(c)) => Ok(c),
            Value::Boxed(None) => Err(DynAnyError::InvalidValue),
            _ => Err(DynAnyError::TypeMismatch),
        }
    }

    /// `DynValueBox::get_boxed_value()` (`InvalidValue` when null).
    pub fn get_boxed_value(&self) -> DResult<Any> {
        self.boxed()?.to_any()
    }

    /// `DynValueBox::get_boxed_value_as_dyn_any()` (`InvalidValue` when null).
    pub fn get_boxed_value_as_dyn_any(&self) -> DResult<DynAny> {
        self.boxed().cloned()
    }

    /// `DynValueBox::set_boxed_value(boxed)`: `TypeMismatch` unless `boxed` is of the boxed
    /// type; the box is no longer null.
    pub fn set_boxed_value(&mut self, boxed: &Any) -> DResult<()> {
        self.set_boxed_value_as_dyn_any(&DynAnyFactory::create_dyn_any(boxed)?)
    }

    /// `DynValueBox::set_boxed_value_as_dyn_any(boxed)`.
    pub fn set_boxed_value_as_dyn_any(&mut self, boxed: &DynAny) -> DResult<()> {
        let t = self.tc.unalias();
        if t.kind() != TcKind::ValueBox {
            return Err(DynAnyError::TypeMismatch);
        }
        let c = t.content_type().map_err(tc_err)?;
        if !c.equivalent(&boxed.tc) {
            return Err(DynAnyError::TypeMismatch);
        }
        self.v = Value::Boxed(Some(Box::new(boxed.clone())));
        Ok(())
    }
}
