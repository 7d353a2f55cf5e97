//! The per-kind operations: DynStruct, DynSequence/DynArray, DynUnion, DynEnum, DynFixed.

use super::*;

impl DynAny {
    fn members(&self) -> DResult<&Vec<DynAny>> {
        match &self.v {
            Value::Members(ms) => Ok(ms),
            // A null value has no members to get.
            Value::Null => Err(DynAnyError::InvalidValue),
            _ => Err(DynAnyError::TypeMismatch),
        }
    }

    /// Names and types of the members: a struct's or exception's, or a value's state
    /// members, inherited ones first.
    fn member_list(&self) -> DResult<Vec<(String, TypeCode)>> {
        let t = self.tc.unalias();
        if matches!(t.kind(), TcKind::Value | TcKind::Event) {
            return valuetypes::value_members(&t);
        }
        (0..t.member_count().map_err(tc_err)?)
            .map(|i| {
                Ok((
                    t.member_name(i).map_err(tc_err)?.to_owned(),
                    t.member_type(i).map_err(tc_err)?,
                ))
            })
            .collect()
    }

    /// `DynStruct::current_member_name()`.
    pub fn current_member_name(&self) -> DResult<String> {
        self.members()?;
        let i = usize::try_from(self.pos).map_err(|_| DynAnyError::InvalidValue)?;
        let mut names = self.member_list()?;
        if i >= names.len() {
            return Err(DynAnyError::InvalidValue);
        }
        Ok(names.swap_remove(i).0)
    }

    /// `DynStruct::current_member_kind()`.
    pub fn current_member_kind(&self) -> DResult<TcKind> {
        let ms = self.members()?;
        let i = usize::try_from(self.pos).map_err(|_| DynAnyError::InvalidValue)?;
        ms.get(i).map(DynAny::kind).ok_or(DynAnyError::InvalidValue)
    }

    /// `DynStruct::get_members()`.
    pub fn get_members(&self) -> DResult<Vec<NameValuePair>> {
        let names = self.member_list()?;
        self.members()?
            .iter()
            .zip(names)
            .map(|(m, (id, _))| {
                Ok(NameValuePair {
                    id,
                    value: m.to_any()?,
                })
            })
            .collect()
    }

    /// `DynStruct::set_members(values)`: one value per member, in order, of equivalent
    /// types (`TypeMismatch`; `InvalidValue` for the wrong count); names, when given,
    /// must match.
    pub fn set_members(&mut self, values: Vec<NameValuePair>) -> DResult<()> {
        let ds = values
            .into_iter()
            .map(|p| {
                Ok(NameDynAnyPair {
                    id: p.id,
                    value: DynAnyFactory::create_dyn_any(&p.value)?,
                })
            })
            .collect::<DResult<Vec<_>>>()?;
        self.set_members_as_dyn_any(ds)
    }

    /// `DynStruct::get_members_as_dyn_any()`.
    pub fn get_members_as_dyn_any(&self) -> DResult<Vec<NameDynAnyPair>> {
        let names = self.member_list()?;
        Ok(self
            .members()?
            .iter()
            .zip(names)
            .map(|(m, (id, _))| NameDynAnyPair {
                id,
                value: m.clone(),
            })
            .collect())
    }

    /// `DynStruct::set_members_as_dyn_any(values)` (also `DynValue`'s, which makes a null
    /// value non-null).
    pub fn set_members_as_dyn_any(&mut self, values: Vec<NameDynAnyPair>) -> DResult<()> {
        if !matches!(self.v, Value::Null) {
            self.members().map_err(|_| DynAnyError::TypeMismatch)?;
        }
        let list = self.member_list()?;
        let n = list.len();
        if values.len() != n {
            return Err(DynAnyError::InvalidValue);
        }
        for (p, (name, mt)) in values.iter().zip(&list) {
            if (!p.id.is_empty() && !name.is_empty() && p.id != *name)
                || !mt.equivalent(&p.value.tc)
            {
                return Err(DynAnyError::TypeMismatch);
            }
        }
        self.v = Value::Members(values.into_iter().map(|p| p.value).collect());
        self.pos = if n > 0 { 0 } else { -1 };
        Ok(())
    }

    // ---- DynSequence / DynArray

    fn elements(&self) -> DResult<&Vec<DynAny>> {
        match &self.v {
            Value::Elements(es) => Ok(es),
            _ => Err(DynAnyError::TypeMismatch),
        }
    }

    /// `DynSequence::get_length()` (also an array's length).
    pub fn get_length(&self) -> DResult<u32> {
        Ok(self.elements()?.len() as u32)
    }

    /// `DynSequence::set_length(len)`: new elements take default values; `InvalidValue`
    /// past the bound; `TypeMismatch` for an array.
    pub fn set_length(&mut self, len: u32) -> DResult<()> {
        if self.kind() != TcKind::Sequence {
            return Err(DynAnyError::TypeMismatch);
        }
        let t = self.tc.unalias();
        let bound = t.length().unwrap_or(0);
        if bound > 0 && len > bound {
            return Err(DynAnyError::InvalidValue);
        }
        let content = t.content_type().map_err(|_| DynAnyError::TypeMismatch)?;
        let old = self.elements()?.len();
        let fill = if len as usize > old {
            Some(DynAny::default_of(&content)?)
        } else {
            None
        };
        if let Value::Elements(es) = &mut self.v {
            es.resize(
                len as usize,
                fill.unwrap_or_else(|| DynAny::new_leaf(content, Value::Empty)),
            );
        }
        self.pos = if len == 0 {
            -1
        } else if self.pos < 0 && len as usize > old {
            old as i32
        } else if self.pos >= len as i32 {
            -1
        } else {
            self.pos
        };
        Ok(())
    }

    /// `get_elements()`.
    pub fn get_elements(&self) -> DResult<Vec<Any>> {
        self.elements()?.iter().map(DynAny::to_any).collect()
    }

    /// `set_elements(values)`: `TypeMismatch` for an element of another type,
    /// `InvalidValue` for a length past the bound (or not the array's).
    pub fn set_elements(&mut self, values: Vec<Any>) -> DResult<()> {
        let ds = values
            .iter()
            .map(DynAnyFactory::create_dyn_any)
            .collect::<DResult<Vec<_>>>()?;
        self.set_elements_as_dyn_any(ds)
    }

    /// `get_elements_as_dyn_any()`.
    pub fn get_elements_as_dyn_any(&self) -> DResult<Vec<DynAny>> {
        Ok(self.elements()?.clone())
    }

    /// `set_elements_as_dyn_any(values)`.
    pub fn set_elements_as_dyn_any(&mut self, values: Vec<DynAny>) -> DResult<()> {
        self.elements()?;
        let t = self.tc.unalias();
        let bound = t.length().unwrap_or(0) as usize;
        let ok_len = match t.kind() {
            TcKind::Array => values.len() == bound,
            _ => bound == 0 || values.len() <= bound,
        };
        if !ok_len {
            return Err(DynAnyError::InvalidValue);
        }
        let content = t.content_type().map_err(|_| DynAnyError::TypeMismatch)?;
        if values.iter().any(|v| !content.equivalent(&v.tc)) {
            return Err(DynAnyError::TypeMismatch);
        }
        let n = values.len();
        self.v = Value::Elements(values);
        self.pos = if n > 0 { 0 } else { -1 };
        Ok(())
    }

    // ---- DynUnion

    fn union_parts(&self) -> DResult<(&DynAny, &Arm)> {
        match &self.v {
            Value::Union { disc, arm } => Ok((disc, arm)),
            _ => Err(DynAnyError::TypeMismatch),
        }
    }

    /// `DynUnion::get_discriminator()`.
    pub fn get_discriminator(&self) -> DResult<DynAny> {
        Ok(self.union_parts()?.0.clone())
    }

    /// `DynUnion::set_discriminator(d)`: selects the member `d` names (keeping its value
    /// if it was already active, else at its default), or none.
    pub fn set_discriminator(&mut self, d: &DynAny) -> DResult<()> {
        let t = self.tc.unalias();
        let disc_tc = t
            .discriminator_type()
            .map_err(|_| DynAnyError::TypeMismatch)?;
        self.union_parts()?;
        if !disc_tc.equivalent(&d.tc) {
            return Err(DynAnyError::TypeMismatch);
        }
        let v = disc_value(d).ok_or(DynAnyError::TypeMismatch)?;
        self.select(v)
    }

    fn select(&mut self, v: i128) -> DResult<()> {
        let t = self.tc.unalias();
        let disc_tc = t
            .discriminator_type()
            .map_err(|_| DynAnyError::TypeMismatch)?;
        let new_disc = disc_of(&disc_tc, v).ok_or(DynAnyError::InvalidValue)?;
        let want = arm_for(&t, v);
        let Value::Union { disc, arm } = &mut self.v else {
            return Err(DynAnyError::TypeMismatch);
        };
        **disc = new_disc;
        // Several labels of one member (`case 2: case 3: long side;`) are one member.
        let same = match (arm.as_mut(), want) {
            (Some(a), Some(j)) if a.0 == j || t.member_name(a.0) == t.member_name(j) => {
                a.0 = j;
                true
            }
            (None, None) => true,
            _ => false,
        };
        if !same {
            *arm = match want {
                Some(i) => Some((
                    i,
                    Box::new(DynAny::default_of(
                        &t.member_type(i).map_err(|_| DynAnyError::TypeMismatch)?,
                    )?),
                )),
                None => None,
            };
        }
        self.pos = 0;
        Ok(())
    }

    /// `DynUnion::set_to_default_member()`: `TypeMismatch` without a `default` case.
    pub fn set_to_default_member(&mut self) -> DResult<()> {
        self.union_parts()?;
        let t = self.tc.unalias();
        if t.default_index().unwrap_or(-1) < 0 {
            return Err(DynAnyError::TypeMismatch);
        }
        let v = unused_label(&t).ok_or(DynAnyError::TypeMismatch)?;
        self.select(v)?;
        self.pos = 0;
        Ok(())
    }

    /// `DynUnion::set_to_no_active_member()`: `TypeMismatch` if every discriminator value
    /// selects a member (there is a `default` case, or the labels cover the type).
    pub fn set_to_no_active_member(&mut self) -> DResult<()> {
        self.union_parts()?;
        let t = self.tc.unalias();
        if t.default_index().unwrap_or(-1) >= 0 {
            return Err(DynAnyError::TypeMismatch);
        }
        let v = unused_label(&t).ok_or(DynAnyError::TypeMismatch)?;
        self.select(v)
    }

    /// `DynUnion::has_no_active_member()`.
    pub fn has_no_active_member(&self) -> DResult<bool> {
        Ok(self.union_parts()?.1.is_none())
    }

    /// `DynUnion::discriminator_kind()`.
    pub fn discriminator_kind(&self) -> DResult<TcKind> {
        Ok(self.union_parts()?.0.kind())
    }

    /// `DynUnion::member()`: the active member; `InvalidValue` without one.
    pub fn member(&mut self) -> DResult<&mut DynAny> {
        self.union_parts()?;
        match &mut self.v {
            Value::Union { arm: Some(a), .. } => Ok(&mut a.1),
            _ => Err(DynAnyError::InvalidValue),
        }
    }

    /// `DynUnion::member_name()`.
    pub fn member_name(&self) -> DResult<String> {
        match self.union_parts()?.1 {
            Some((i, _)) => Ok(self.tc.unalias().member_name(*i).unwrap_or("").to_owned()),
            None => Err(DynAnyError::InvalidValue),
        }
    }

    /// `DynUnion::member_kind()`.
    pub fn member_kind(&self) -> DResult<TcKind> {
        match self.union_parts()?.1 {
            Some((_, m)) => Ok(m.kind()),
            None => Err(DynAnyError::InvalidValue),
        }
    }

    // ---- DynEnum

    fn enum_value(&self) -> DResult<u32> {
        match self.v {
            Value::Enum(v) => Ok(v),
            _ => Err(DynAnyError::TypeMismatch),
        }
    }

    /// `DynEnum::get_as_string()`.
    pub fn get_as_string(&self) -> DResult<String> {
        let v = self.enum_value()?;
        Ok(self.tc.unalias().member_name(v).unwrap_or("").to_owned())
    }

    /// `DynEnum::set_as_string(name)`: `InvalidValue` for a name that is no enumerator.
    pub fn set_as_string(&mut self, name: &str) -> DResult<()> {
        self.enum_value()?;
        let t = self.tc.unalias();
        let n = t.member_count().unwrap_or(0);
        let i = (0..n)
            .find(|&i| t.member_name(i) == Ok(name))
            .ok_or(DynAnyError::InvalidValue)?;
        self.v = Value::Enum(i);
        Ok(())
    }

    /// `DynEnum::get_as_ulong()`.
    pub fn get_as_ulong(&self) -> DResult<u32> {
        self.enum_value()
    }

    /// `DynEnum::set_as_ulong(v)`: `InvalidValue` past the last enumerator.
    pub fn set_as_ulong(&mut self, v: u32) -> DResult<()> {
        self.enum_value()?;
        if v >= self.tc.unalias().member_count().unwrap_or(0) {
            return Err(DynAnyError::InvalidValue);
        }
        self.v = Value::Enum(v);
        Ok(())
    }

    // ---- DynFixed

    /// `DynFixed::get_value()`: the value as a decimal string.
    pub fn get_value(&self) -> DResult<String> {
        match &self.v {
            Value::Fixed(f) => Ok(f.to_string()),
            _ => Err(DynAnyError::TypeMismatch),
        }
    }

    /// `DynFixed::set_value(s)`: parses a decimal (`-12.345`, an optional trailing `d`);
    /// returns false if fractional digits were truncated to the scale. `TypeMismatch` for
    /// a malformed string, `InvalidValue` if the integer part does not fit.
    pub fn set_value(&mut self, s: &str) -> DResult<bool> {
        let Value::Fixed(f) = &self.v else {
            return Err(DynAnyError::TypeMismatch);
        };
        let (digits, scale) = (f.digits, f.scale);
        let s = s.trim();
        let s = s.strip_suffix(['d', 'D']).unwrap_or(s);
        let (neg, s) = match s.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, s.strip_prefix('+').unwrap_or(s)),
        };
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        let ok = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
        if (int.is_empty() && frac.is_empty()) || !ok(int) || !ok(frac) {
            return Err(DynAnyError::TypeMismatch);
        }
        let int = int.trim_start_matches('0');
        if int.len() > usize::from(digits - scale) {
            return Err(DynAnyError::InvalidValue);
        }
        let exact = frac.len() <= usize::from(scale)
            || frac[usize::from(scale)..].bytes().all(|b| b == b'0');
        let mut value: i128 = 0;
        for b in int.bytes() {
            value = value * 10 + i128::from(b - b'0');
        }
        for k in 0..usize::from(scale) {
            let d = frac.as_bytes().get(k).map_or(0, |b| b - b'0');
            value = value * 10 + i128::from(d);
        }
        if neg {
            value = -value;
        }
        let nf = Fixed::new(value, digits, scale).map_err(|_| DynAnyError::InvalidValue)?;
        self.v = Value::Fixed(nf);
        Ok(exact)
    }
}
