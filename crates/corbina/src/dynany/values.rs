//! Default values by TypeCode, and DynAny values read from and written to CDR.

use super::*;
use crate::valuetype::VALUE_BASE_ID;

impl DynAny {
    /// The default value of `tc`. Recursive along the TypeCode, whose height
    /// [`DynAnyFactory::create_dyn_any_from_type_code`] bounds.
    pub(super) fn default_of(tc: &TypeCode) -> DResult<DynAny> {
        crate::valuetype::nested(|| DynAny::default_here(tc))
    }

    fn default_here(tc: &TypeCode) -> DResult<DynAny> {
        let t = tc.unalias();
        let v = match t.kind() {
            TcKind::Null | TcKind::Void => Value::Empty,
            TcKind::Short => Value::Short(0),
            TcKind::UShort => Value::UShort(0),
            TcKind::Long => Value::Long(0),
            TcKind::ULong => Value::ULong(0),
            TcKind::LongLong => Value::LongLong(0),
            TcKind::ULongLong => Value::ULongLong(0),
            TcKind::Float => Value::Float(0.0),
            TcKind::Double => Value::Double(0.0),
            TcKind::LongDouble => Value::LongDouble(LongDouble::from_f64(0.0)),
            TcKind::Boolean => Value::Boolean(false),
            TcKind::Char => Value::Char('\0'),
            TcKind::Octet => Value::Octet(0),
            TcKind::WChar => Value::WChar('\0'),
            TcKind::String => Value::String(String::new()),
            TcKind::WString => Value::WString(String::new()),
            TcKind::Fixed => {
                let d = u8::try_from(t.fixed_digits().map_err(tc_err)?).map_err(tc_err)?;
                let s = u8::try_from(t.fixed_scale().map_err(tc_err)?).map_err(tc_err)?;
                Value::Fixed(Fixed::new(0, d, s).map_err(tc_err)?)
            }
            TcKind::Any => Value::Any(Any::default()),
            TcKind::TypeCode => Value::TypeCode(TypeCode::primitive(TcKind::Null)),
            TcKind::Objref | TcKind::Component | TcKind::Home | TcKind::AbstractInterface => {
                Value::Objref(None)
            }
            TcKind::Enum => Value::Enum(0),
            TcKind::Struct | TcKind::Except => {
                let n = t.member_count().map_err(tc_err)?;
                let mut ms = Vec::with_capacity(n as usize);
                for i in 0..n {
                    ms.push(DynAny::default_of(&t.member_type(i).map_err(tc_err)?)?);
                }
                Value::Members(ms)
            }
            TcKind::Union => {
                let disc_tc = t.discriminator_type().map_err(tc_err)?;
                let first = t.member_label_value(0).map_err(tc_err)?;
                let v = match first {
                    UnionLabel::Value(v) => v,
                    UnionLabel::Default => {
                        unused_label(&t).ok_or(DynAnyError::InconsistentTypeCode)?
                    }
                };
                let disc = disc_of(&disc_tc, v).ok_or(DynAnyError::InconsistentTypeCode)?;
                let arm = match arm_for(&t, v) {
                    Some(i) => Some((
                        i,
                        Box::new(DynAny::default_of(&t.member_type(i).map_err(tc_err)?)?),
                    )),
                    None => None,
                };
                Value::Union {
                    disc: Box::new(disc),
                    arm,
                }
            }
            TcKind::Sequence => Value::Elements(Vec::new()),
            // Values start null (CORBA 3.0 §9.2.2).
            TcKind::Value | TcKind::Event => Value::Null,
            TcKind::ValueBox => Value::Boxed(None),
            TcKind::Array => {
                let n = t.length().map_err(tc_err)?;
                let e = DynAny::default_of(&t.content_type().map_err(tc_err)?)?;
                Value::Elements(vec![e; n as usize])
            }
            _ => return Err(DynAnyError::InconsistentTypeCode),
        };
        Ok(DynAny::with_components(tc.clone(), v))
    }

    /// Reads a value of type `tc`.
    /// Reads a value of type `tc`; `values` is the stream's value state (chunks).
    /// Reads a value of type `tc`. Recursive along the value, whose depth the reader and the
    /// value nesting limit bound; each level runs where stack is left.
    pub(super) fn read(
        tc: &TypeCode,
        r: &mut CdrReader<'_>,
        values: &mut ValueInput,
    ) -> crate::cdr::Result<DynAny> {
        crate::valuetype::nested(|| DynAny::read_here(tc, r, values))
    }

    fn read_here(
        tc: &TypeCode,
        r: &mut CdrReader<'_>,
        values: &mut ValueInput,
    ) -> crate::cdr::Result<DynAny> {
        let t = tc.unalias();
        let bad_tc = |r: &CdrReader<'_>| invalid(r, "bad TypeCode");
        if matches!(t.kind(), TcKind::Value | TcKind::Event | TcKind::ValueBox) {
            let v = DynAny::read_value_type(&t, r, values)?;
            return Ok(DynAny::with_components(tc.clone(), v));
        }
        // In a chunked value's state, each member that is not a value sits in a chunk.
        values.begin_member(r)?;
        let v = match t.kind() {
            TcKind::Null | TcKind::Void => Value::Empty,
            TcKind::Short => Value::Short(r.read_short()?),
            TcKind::UShort => Value::UShort(r.read_ushort()?),
            TcKind::Long => Value::Long(r.read_long()?),
            TcKind::ULong => Value::ULong(r.read_ulong()?),
            TcKind::LongLong => Value::LongLong(r.read_longlong()?),
            TcKind::ULongLong => Value::ULongLong(r.read_ulonglong()?),
            TcKind::Float => Value::Float(r.read_float()?),
            TcKind::Double => Value::Double(r.read_double()?),
            TcKind::LongDouble => Value::LongDouble(r.read_long_double()?),
            TcKind::Boolean => Value::Boolean(r.read_boolean()?),
            TcKind::Char => Value::Char(r.read_char_unicode()?),
            TcKind::Octet => Value::Octet(r.read_octet()?),
            TcKind::WChar => Value::WChar(r.read_wchar()?),
            TcKind::String => Value::String(r.read_string()?),
            TcKind::WString => Value::WString(r.read_wstring()?),
            TcKind::Fixed => {
                let d = t.fixed_digits().map_err(|_| bad_tc(r))?;
                let s = t.fixed_scale().map_err(|_| bad_tc(r))?;
                let s = u8::try_from(s).map_err(|_| bad_tc(r))?;
                Value::Fixed(Fixed::decode(r, d as u8, s)?)
            }
            TcKind::Any => Value::Any(Any::read(r)?),
            TcKind::TypeCode => Value::TypeCode(crate::typecode::decode_type_code(r)?),
            TcKind::Objref | TcKind::Component | TcKind::Home => {
                let ior = Ior::decode(r).map_err(|_| invalid(r, "malformed IOR"))?;
                Value::Objref((!ior.is_nil()).then_some(ior))
            }
            // TRUE and an IOR, or FALSE and a value (CORBA 3.0 §15.3.7). A value's type is
            // not in the TypeCode: it is built through the value factory registry.
            TcKind::AbstractInterface => {
                if r.read_boolean()? {
                    let ior = Ior::decode(r).map_err(|_| invalid(r, "malformed IOR"))?;
                    Value::Objref((!ior.is_nil()).then_some(ior))
                } else {
                    let v = ValueBase::read_as(r, values, VALUE_BASE_ID, &[])?;
                    if v.is_null() {
                        Value::Objref(None)
                    } else {
                        Value::Abstract(v)
                    }
                }
            }
            TcKind::Enum => Value::Enum(r.read_enum(t.member_count().map_err(|_| bad_tc(r))?)?),
            TcKind::Struct | TcKind::Except => {
                if t.kind() == TcKind::Except {
                    r.read_string()?;
                }
                let n = t.member_count().map_err(|_| bad_tc(r))?;
                r.enter()?;
                let mut ms = Vec::new();
                let mut res = Ok(());
                for i in 0..n {
                    match t.member_type(i).map_err(|_| bad_tc(r)) {
                        Ok(mt) => match DynAny::read(&mt, r, values) {
                            Ok(d) => ms.push(d),
                            Err(e) => {
                                res = Err(e);
                                break;
                            }
                        },
                        Err(e) => {
                            res = Err(e);
                            break;
                        }
                    }
                }
                r.leave();
                res?;
                Value::Members(ms)
            }
            TcKind::Union => {
                let disc_tc = t.discriminator_type().map_err(|_| bad_tc(r))?;
                let disc = DynAny::read(&disc_tc, r, values)?;
                let v = disc_value(&disc).ok_or_else(|| bad_tc(r))?;
                let arm = match arm_for(&t, v) {
                    Some(i) => {
                        let mt = t.member_type(i).map_err(|_| bad_tc(r))?;
                        r.enter()?;
                        let m = DynAny::read(&mt, r, values);
                        r.leave();
                        Some((i, Box::new(m?)))
                    }
                    None => None,
                };
                Value::Union {
                    disc: Box::new(disc),
                    arm,
                }
            }
            TcKind::Sequence | TcKind::Array => {
                let content = t.content_type().map_err(|_| bad_tc(r))?;
                let bound = t.length().map_err(|_| bad_tc(r))?;
                let min = content.layout().min_size as usize;
                let n = if t.kind() == TcKind::Sequence {
                    let n = r.read_length(min.max(1))?;
                    if bound > 0 && n > bound as usize {
                        return Err(MarshalError::BoundExceeded {
                            length: n as u64,
                            bound: u64::from(bound),
                        });
                    }
                    n
                } else {
                    r.check_length(
                        bound as usize,
                        min.max(1).min(if bound > 65536 { 1 } else { 0 }),
                    )?;
                    bound as usize
                };
                r.enter()?;
                let mut es = Vec::with_capacity(n.min(4096));
                let mut res = Ok(());
                for _ in 0..n {
                    match DynAny::read(&content, r, values) {
                        Ok(d) => es.push(d),
                        Err(e) => {
                            res = Err(e);
                            break;
                        }
                    }
                }
                r.leave();
                res?;
                Value::Elements(es)
            }
            _ => return Err(invalid(r, "no DynAny for this kind of value")),
        };
        Ok(DynAny::with_components(tc.clone(), v))
    }

    /// Writes the value (an exception's starts with its repository id); `values` is the
    /// stream's value state.
    pub(super) fn write<'a>(
        &'a self,
        w: &mut CdrWriter<'a>,
        values: &mut ValueOutput,
    ) -> crate::cdr::Result<()> {
        crate::valuetype::nested(|| self.write_here(w, values))
    }

    fn write_here<'a>(
        &'a self,
        w: &mut CdrWriter<'a>,
        values: &mut ValueOutput,
    ) -> crate::cdr::Result<()> {
        if matches!(
            self.kind(),
            TcKind::Value | TcKind::Event | TcKind::ValueBox
        ) {
            return self.write_value_type(w, values);
        }
        values.begin_member(w)?;
        match &self.v {
            Value::Empty => {}
            Value::Short(v) => w.write_short(*v),
            Value::UShort(v) => w.write_ushort(*v),
            Value::Long(v) => w.write_long(*v),
            Value::ULong(v) => w.write_ulong(*v),
            Value::LongLong(v) => w.write_longlong(*v),
            Value::ULongLong(v) => w.write_ulonglong(*v),
            Value::Float(v) => w.write_float(*v),
            Value::Double(v) => w.write_double(*v),
            Value::LongDouble(v) => w.write_long_double(*v),
            Value::Boolean(v) => w.write_boolean(*v),
            Value::Char(c) => w.write_char_unicode(*c)?,
            Value::Octet(v) => w.write_octet(*v),
            Value::WChar(c) => w.write_wchar(*c)?,
            Value::String(s) => w.write_string(s)?,
            Value::WString(s) => w.write_wstring(s)?,
            Value::Fixed(f) => f.encode(w)?,
            Value::Any(a) => {
                crate::typecode::encode_type_code(a.type_code(), w)?;
                let mut r = a.value_reader();
                crate::typecode::copy_value(a.type_code(), &mut r, w)?;
            }
            Value::TypeCode(t) => crate::typecode::encode_type_code(t, w)?,
            Value::Objref(None) if self.kind() == TcKind::AbstractInterface => {
                // Nil as a null value, as omniORB and JacORB send it.
                w.write_boolean(false);
                values.write_null(w)?;
            }
            Value::Abstract(v) => {
                w.write_boolean(false);
                match v.handle() {
                    Some(h) => h.write_value(w, values)?,
                    None => values.write_null(w)?,
                }
            }
            Value::Objref(ior) => {
                if self.kind() == TcKind::AbstractInterface {
                    w.write_boolean(true);
                }
                let nil = Ior::nil();
                ior.as_ref()
                    .unwrap_or(&nil)
                    .encode(w)
                    .map_err(|_| MarshalError::InvalidValue {
                        offset: w.position(),
                        reason: "IOR cannot be encoded",
                    })?
            }
            Value::Enum(v) => w.write_ulong(*v),
            Value::Members(ms) => {
                if self.kind() == TcKind::Except {
                    w.write_string(self.tc.id().unwrap_or(""))?;
                }
                for m in ms {
                    m.write(w, values)?;
                }
            }
            Value::Union { disc, arm } => {
                disc.write(w, values)?;
                if let Some((_, m)) = arm {
                    m.write(w, values)?;
                }
            }
            Value::Null | Value::Boxed(_) => return self.write_value_type(w, values),
            Value::Elements(es) => {
                if self.kind() == TcKind::Sequence {
                    w.write_length(es.len())?;
                }
                for e in es {
                    e.write(w, values)?;
                }
            }
        }
        Ok(())
    }
}
