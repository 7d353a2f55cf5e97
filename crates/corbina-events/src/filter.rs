//! The Notification Service's filters (`CosNotifyFilter::Filter`, `MappingFilter`) and
//! their factory, with the [`crate::etcl`] grammar (`"EXTENDED_TCL"`; `"ETCL"` and `"TCL"`
//! name it too, TCL being a subset).
//!
//! A filter holds constraints, each a list of event types and an expression; an event
//! matches the filter when it matches one of them: its type is one of the constraint's (an
//! empty list, `""`, `*` and `%ALL` match every type, `*` is a wildcard inside names; a
//! plain `any` event has the type `%ANY`) and the expression holds for it. A filter without
//! constraints matches nothing. A mapping filter gives, with the match, the value of the
//! first constraint that matches (in the order they were added), else its default value.
//! Typed events (`match_typed`) are not supported: `UnsupportedFilterableData`.
//!
//! Filters live in the service's PERSISTENT POA; their constraints are stored (CDR in the
//! object's record) after every change, so a filter's reference and constraints survive a
//! restart. Callbacks (`attach_callback`) are told of subscription changes but are not
//! stored.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use corbina::cdr::{ByteOrder, CdrContext, CdrDecode, CdrEncode, CdrReader, CdrWriter};
use corbina::poa::ObjectId;
use corbina::{Any, SystemException, TypeCode};

use crate::channel::{gone, oid, Shared};
use crate::cos_notification::{EventType, Property, StructuredEvent};
use crate::cos_notify_comm::NotifySubscribe;
use crate::cos_notify_filter::filter::{
    AddConstraintsError, DetachCallbackError, GetConstraintsError, MatchError,
    MatchStructuredError, MatchTypedError, ModifyConstraintsError,
};
use crate::cos_notify_filter::filter_factory::{CreateFilterError, CreateMappingFilterError};
use crate::cos_notify_filter::mapping_filter::{
    AddMappingConstraintsError, GetMappingConstraintsError, MatchError as MapMatchError,
    MatchStructuredError as MapMatchStructuredError, MatchTypedError as MapMatchTypedError,
    ModifyMappingConstraintsError,
};
use crate::cos_notify_filter::{
    CallbackID, CallbackNotFound, ConstraintExp, ConstraintID, ConstraintInfo, ConstraintNotFound,
    Filter, FilterFactoryServant, FilterServant, FilterSkeleton, InvalidConstraint, InvalidGrammar,
    InvalidValue, MappingConstraintInfo, MappingConstraintPair, MappingFilter,
    MappingFilterServant, MappingFilterSkeleton, UnsupportedFilterableData,
};
use crate::etcl::{Constraint, STRUCTURED_EVENT_ID};
use crate::store::{Kind, Record, StoreError};

/// The grammar names `create_filter` accepts.
pub const GRAMMARS: &[&str] = &["EXTENDED_TCL", "ETCL", "TCL"];

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether `name` matches `pattern` (`*` any run of characters).
fn glob(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

/// Whether an event of type `t` is one `types` names.
pub fn type_matches(types: &[EventType], t: &EventType) -> bool {
    let any = |s: &str| s.is_empty() || s == "*";
    types.is_empty()
        || types.iter().any(|p| {
            (any(&p.domain_name) || glob(&p.domain_name, &t.domain_name))
                && (any(&p.type_name) || p.type_name == "%ALL" || glob(&p.type_name, &t.type_name))
        })
}

/// The type of an event: a structured event's header's, else `%ANY`.
fn event_type(event: &Any) -> EventType {
    if event.type_code().unalias().id().ok() == Some(STRUCTURED_EVENT_ID) {
        if let Some(se) = event.extract::<StructuredEvent>() {
            return se.header.fixed_header.event_type;
        }
    }
    EventType {
        domain_name: String::new(),
        type_name: "%ANY".into(),
    }
}

/// One constraint, parsed.
#[derive(Clone)]
struct Entry {
    exp: ConstraintExp,
    parsed: Arc<Constraint>,
    /// A mapping filter's value.
    value: Option<Any>,
}

impl Entry {
    fn new(exp: &ConstraintExp, value: Option<Any>) -> Result<Entry, InvalidConstraint> {
        let parsed = Constraint::parse(&exp.constraint_expr).map_err(|_| InvalidConstraint {
            constr: exp.clone(),
        })?;
        Ok(Entry {
            exp: exp.clone(),
            parsed: Arc::new(parsed),
            value,
        })
    }

    fn matches(&self, t: &EventType, event: &Any) -> bool {
        type_matches(&self.exp.event_types, t) && self.parsed.matches(event)
    }
}

/// What a filter holds.
struct FilterState {
    destroyed: bool,
    next_id: ConstraintID,
    entries: BTreeMap<ConstraintID, Entry>,
    callbacks: BTreeMap<CallbackID, NotifySubscribe>,
    next_callback: CallbackID,
}

/// A filter or a mapping filter.
pub(crate) struct FilterObj {
    id: u64,
    shared: Weak<Shared>,
    /// A mapping filter's default value (`None`: a plain filter).
    default_value: Option<Any>,
    state: Mutex<FilterState>,
}

impl FilterObj {
    fn new(id: u64, shared: Weak<Shared>, default_value: Option<Any>) -> FilterObj {
        FilterObj {
            id,
            shared,
            default_value,
            state: Mutex::new(FilterState {
                destroyed: false,
                next_id: 1,
                entries: BTreeMap::new(),
                callbacks: BTreeMap::new(),
                next_callback: 1,
            }),
        }
    }

    fn kind(&self) -> Kind {
        if self.default_value.is_some() {
            Kind::MappingFilter
        } else {
            Kind::Filter
        }
    }

    fn live(&self) -> Result<MutexGuard<'_, FilterState>, SystemException> {
        let st = lock(&self.state);
        if st.destroyed {
            return Err(gone());
        }
        Ok(st)
    }

    /// The stored form: next id, the default value (mapping filters), the constraints.
    fn encode(&self, st: &FilterState) -> Result<Vec<u8>, SystemException> {
        let infos: Vec<MappingConstraintInfo> = st
            .entries
            .iter()
            .map(|(id, e)| Self::map_info(*id, e))
            .collect();
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
        w.write_long(st.next_id);
        if let Some(d) = &self.default_value {
            d.write(&mut w).map_err(SystemException::from)?;
        }
        infos.encode(&mut w).map_err(SystemException::from)?;
        Ok(w.into_bytes())
    }

    /// Stores the constraints; the caller holds the state's lock.
    fn save(&self, st: &FilterState) -> Result<(), SystemException> {
        let shared = self.shared.upgrade().ok_or_else(gone)?;
        let mut r = Record::object(self.kind(), 0);
        r.data = self.encode(st)?;
        Ok(shared.store.put(self.id, &r)?)
    }

    /// A filter from its stored form.
    fn decode(
        id: u64,
        shared: Weak<Shared>,
        kind: Kind,
        data: &[u8],
    ) -> Result<FilterObj, StoreError> {
        let bad = |_| StoreError::from("malformed filter record");
        let mut r = CdrReader::new(data, ByteOrder::Big, CdrContext::GIOP_1_2);
        let next_id = r.read_long().map_err(bad)?;
        let default_value = match kind {
            Kind::MappingFilter => Some(Any::read(&mut r).map_err(bad)?),
            _ => None,
        };
        let infos = Vec::<MappingConstraintInfo>::decode(&mut r).map_err(bad)?;
        let f = FilterObj::new(id, shared, default_value);
        {
            let mut st = lock(&f.state);
            st.next_id = next_id;
            for i in infos {
                let value = f.default_value.as_ref().map(|_| i.value.clone());
                let e = Entry::new(&i.constraint_expression, value)
                    .map_err(|_| StoreError::from("a stored constraint does not parse"))?;
                st.entries.insert(i.constraint_id, e);
            }
        }
        Ok(f)
    }

    fn info(id: ConstraintID, e: &Entry) -> ConstraintInfo {
        ConstraintInfo {
            constraint_expression: e.exp.clone(),
            constraint_id: id,
        }
    }

    fn map_info(id: ConstraintID, e: &Entry) -> MappingConstraintInfo {
        MappingConstraintInfo {
            constraint_expression: e.exp.clone(),
            constraint_id: id,
            value: e.value.clone().unwrap_or_default(),
        }
    }

    /// Adds parsed entries (all or none), stores, tells the callbacks.
    fn add(&self, new: Vec<Entry>) -> Result<Vec<(ConstraintID, Entry)>, SystemException> {
        let mut st = self.live()?;
        let mut added = Vec::new();
        for e in new {
            let id = st.next_id;
            st.next_id = st.next_id.wrapping_add(1).max(1);
            st.entries.insert(id, e.clone());
            added.push((id, e));
        }
        if let Err(e) = self.save(&st) {
            for (id, _) in &added {
                st.entries.remove(id);
            }
            return Err(e);
        }
        let types: Vec<EventType> = added
            .iter()
            .flat_map(|(_, e)| e.exp.event_types.clone())
            .collect();
        self.notify(&st, types, Vec::new());
        Ok(added)
    }

    /// Deletes `del` and replaces `modify` (all checked first: all or nothing).
    fn modify(
        &self,
        del: &[ConstraintID],
        modify: Vec<(ConstraintID, Entry)>,
    ) -> Result<(), ModifyFail> {
        let mut st = self.live().map_err(ModifyFail::System)?;
        if let Some(id) = del
            .iter()
            .chain(modify.iter().map(|(id, _)| id))
            .find(|id| !st.entries.contains_key(id))
        {
            return Err(ModifyFail::NotFound(*id));
        }
        let before = st.entries.clone();
        let mut removed = Vec::new();
        let mut added = Vec::new();
        for id in del {
            if let Some(e) = st.entries.remove(id) {
                removed.extend(e.exp.event_types);
            }
        }
        for (id, e) in modify {
            added.extend(e.exp.event_types.clone());
            if let Some(old) = st.entries.insert(id, e) {
                removed.extend(old.exp.event_types);
            }
        }
        if let Err(e) = self.save(&st) {
            st.entries = before;
            return Err(ModifyFail::System(e));
        }
        self.notify(&st, added, removed);
        Ok(())
    }

    fn get(&self, ids: &[ConstraintID]) -> Result<Vec<(ConstraintID, Entry)>, ModifyFail> {
        let st = self.live().map_err(ModifyFail::System)?;
        ids.iter()
            .map(|id| {
                st.entries
                    .get(id)
                    .map(|e| (*id, e.clone()))
                    .ok_or(ModifyFail::NotFound(*id))
            })
            .collect()
    }

    fn all(&self) -> Result<Vec<(ConstraintID, Entry)>, SystemException> {
        Ok(self
            .live()?
            .entries
            .iter()
            .map(|(id, e)| (*id, e.clone()))
            .collect())
    }

    fn clear(&self) -> Result<(), SystemException> {
        let mut st = self.live()?;
        let before = std::mem::take(&mut st.entries);
        if let Err(e) = self.save(&st) {
            st.entries = before;
            return Err(e);
        }
        let removed = before
            .into_values()
            .flat_map(|e| e.exp.event_types)
            .collect();
        self.notify(&st, Vec::new(), removed);
        Ok(())
    }

    fn destroy(&self) -> Result<(), SystemException> {
        let shared = self.shared.upgrade().ok_or_else(gone)?;
        let mut st = self.live()?;
        shared.store.remove(&[self.id], None)?;
        st.destroyed = true;
        st.entries.clear();
        st.callbacks.clear();
        drop(st);
        let _ = shared.poa.deactivate_object(&oid(self.id));
        Ok(())
    }

    /// The first matching constraint's entry, if any.
    fn first_match(&self, event: &Any) -> Result<Option<Entry>, SystemException> {
        // Evaluated outside the lock: constraints are immutable once parsed.
        let entries: Vec<Entry> = self.live()?.entries.values().cloned().collect();
        let t = event_type(event);
        Ok(entries.into_iter().find(|e| e.matches(&t, event)))
    }

    /// Tells every callback of a subscription change, each on a thread of its own.
    fn notify(&self, st: &FilterState, added: Vec<EventType>, removed: Vec<EventType>) {
        if (added.is_empty() && removed.is_empty()) || st.callbacks.is_empty() {
            return;
        }
        for cb in st.callbacks.values() {
            let cb = cb.clone();
            let (a, r) = (added.clone(), removed.clone());
            let _ = std::thread::Builder::new()
                .name("events-subscription-change".into())
                .spawn(move || {
                    let _ = cb.subscription_change(&a, &r);
                });
        }
    }

    fn attach(&self, cb: Option<&NotifySubscribe>) -> Result<CallbackID, SystemException> {
        let cb = cb.ok_or_else(crate::channel::nil_peer)?;
        let mut st = self.live()?;
        let id = st.next_callback;
        st.next_callback = st.next_callback.wrapping_add(1).max(1);
        st.callbacks.insert(id, cb.clone());
        Ok(id)
    }

    fn detach(&self, id: CallbackID) -> Result<bool, SystemException> {
        Ok(self.live()?.callbacks.remove(&id).is_some())
    }
}

/// `modify_*`/`get_*` failures before they become the operation's error type.
enum ModifyFail {
    NotFound(ConstraintID),
    System(SystemException),
}

impl ModifyFail {
    fn into_err<E: From<ConstraintNotFound> + From<SystemException>>(self) -> E {
        match self {
            ModifyFail::NotFound(id) => ConstraintNotFound { id }.into(),
            ModifyFail::System(e) => e.into(),
        }
    }
}

fn parse_all(list: &[ConstraintExp]) -> Result<Vec<Entry>, InvalidConstraint> {
    list.iter().map(|c| Entry::new(c, None)).collect()
}

impl FilterServant for FilterObj {
    fn get_constraint_grammar(&self) -> Result<String, SystemException> {
        drop(self.live()?);
        Ok(GRAMMARS[0].to_owned())
    }

    fn add_constraints(
        &self,
        constraint_list: &[ConstraintExp],
    ) -> Result<Vec<ConstraintInfo>, AddConstraintsError> {
        let added = self.add(parse_all(constraint_list)?)?;
        Ok(added.iter().map(|(id, e)| Self::info(*id, e)).collect())
    }

    fn modify_constraints(
        &self,
        del_list: &[ConstraintID],
        modify_list: &[ConstraintInfo],
    ) -> Result<(), ModifyConstraintsError> {
        let modify = modify_list
            .iter()
            .map(|i| Ok((i.constraint_id, Entry::new(&i.constraint_expression, None)?)))
            .collect::<Result<Vec<_>, InvalidConstraint>>()?;
        self.modify(del_list, modify).map_err(ModifyFail::into_err)
    }

    fn get_constraints(
        &self,
        id_list: &[ConstraintID],
    ) -> Result<Vec<ConstraintInfo>, GetConstraintsError> {
        let got = self
            .get(id_list)
            .map_err(ModifyFail::into_err::<GetConstraintsError>)?;
        Ok(got.iter().map(|(id, e)| Self::info(*id, e)).collect())
    }

    fn get_all_constraints(&self) -> Result<Vec<ConstraintInfo>, SystemException> {
        Ok(self
            .all()?
            .iter()
            .map(|(id, e)| Self::info(*id, e))
            .collect())
    }

    fn remove_all_constraints(&self) -> Result<(), SystemException> {
        self.clear()
    }

    fn destroy(&self) -> Result<(), SystemException> {
        FilterObj::destroy(self)
    }

    fn r#match(&self, filterable_data: &Any) -> Result<bool, MatchError> {
        Ok(self.first_match(filterable_data)?.is_some())
    }

    fn match_structured(
        &self,
        filterable_data: &StructuredEvent,
    ) -> Result<bool, MatchStructuredError> {
        let any = Any::insert(filterable_data).map_err(SystemException::from)?;
        Ok(self.first_match(&any)?.is_some())
    }

    fn match_typed(&self, _: &[Property]) -> Result<bool, MatchTypedError> {
        drop(self.live()?);
        Err(UnsupportedFilterableData {}.into())
    }

    fn attach_callback(
        &self,
        callback: Option<&NotifySubscribe>,
    ) -> Result<CallbackID, SystemException> {
        self.attach(callback)
    }

    fn detach_callback(&self, callback: CallbackID) -> Result<(), DetachCallbackError> {
        if self.detach(callback)? {
            Ok(())
        } else {
            Err(CallbackNotFound {}.into())
        }
    }

    fn get_callbacks(&self) -> Result<Vec<CallbackID>, SystemException> {
        Ok(self.live()?.callbacks.keys().copied().collect())
    }
}

impl FilterObj {
    fn default_value(&self) -> Any {
        self.default_value.clone().unwrap_or_default()
    }

    /// A mapping constraint, its value of the filter's type.
    fn mapping_entry(&self, exp: &ConstraintExp, value: &Any) -> Result<Entry, MappingFail> {
        if !value
            .type_code()
            .equivalent(self.default_value().type_code())
        {
            return Err(MappingFail::Value(InvalidValue {
                constr: exp.clone(),
                value: value.clone(),
            }));
        }
        Entry::new(exp, Some(value.clone())).map_err(MappingFail::Constraint)
    }

    fn mapped(&self, event: &Any) -> Result<(bool, Any), SystemException> {
        Ok(match self.first_match(event)? {
            Some(e) => (true, e.value.unwrap_or_default()),
            None => (false, self.default_value()),
        })
    }
}

enum MappingFail {
    Constraint(InvalidConstraint),
    Value(InvalidValue),
}

impl MappingFilterServant for FilterObj {
    fn get_constraint_grammar(&self) -> Result<String, SystemException> {
        drop(self.live()?);
        Ok(GRAMMARS[0].to_owned())
    }

    fn get_value_type(&self) -> Result<TypeCode, SystemException> {
        drop(self.live()?);
        Ok(self.default_value().type_code().clone())
    }

    fn get_default_value(&self) -> Result<Any, SystemException> {
        drop(self.live()?);
        Ok(self.default_value())
    }

    fn add_mapping_constraints(
        &self,
        pair_list: &[MappingConstraintPair],
    ) -> Result<Vec<MappingConstraintInfo>, AddMappingConstraintsError> {
        let entries = pair_list
            .iter()
            .map(|p| self.mapping_entry(&p.constraint_expression, &p.result_to_set))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|f| match f {
                MappingFail::Constraint(c) => AddMappingConstraintsError::from(c),
                MappingFail::Value(v) => v.into(),
            })?;
        let added = self.add(entries)?;
        Ok(added.iter().map(|(id, e)| Self::map_info(*id, e)).collect())
    }

    fn modify_mapping_constraints(
        &self,
        del_list: &[ConstraintID],
        modify_list: &[MappingConstraintInfo],
    ) -> Result<(), ModifyMappingConstraintsError> {
        let modify = modify_list
            .iter()
            .map(|i| {
                Ok((
                    i.constraint_id,
                    self.mapping_entry(&i.constraint_expression, &i.value)?,
                ))
            })
            .collect::<Result<Vec<_>, MappingFail>>()
            .map_err(|f| match f {
                MappingFail::Constraint(c) => ModifyMappingConstraintsError::from(c),
                MappingFail::Value(v) => v.into(),
            })?;
        self.modify(del_list, modify).map_err(ModifyFail::into_err)
    }

    fn get_mapping_constraints(
        &self,
        id_list: &[ConstraintID],
    ) -> Result<Vec<MappingConstraintInfo>, GetMappingConstraintsError> {
        let got = self
            .get(id_list)
            .map_err(ModifyFail::into_err::<GetMappingConstraintsError>)?;
        Ok(got.iter().map(|(id, e)| Self::map_info(*id, e)).collect())
    }

    fn get_all_mapping_constraints(&self) -> Result<Vec<MappingConstraintInfo>, SystemException> {
        Ok(self
            .all()?
            .iter()
            .map(|(id, e)| Self::map_info(*id, e))
            .collect())
    }

    fn remove_all_mapping_constraints(&self) -> Result<(), SystemException> {
        self.clear()
    }

    fn destroy(&self) -> Result<(), SystemException> {
        FilterObj::destroy(self)
    }

    fn r#match(&self, filterable_data: &Any) -> Result<(bool, Any), MapMatchError> {
        Ok(self.mapped(filterable_data)?)
    }

    fn match_structured(
        &self,
        filterable_data: &StructuredEvent,
    ) -> Result<(bool, Any), MapMatchStructuredError> {
        let any = Any::insert(filterable_data).map_err(SystemException::from)?;
        Ok(self.mapped(&any)?)
    }

    fn match_typed(&self, _: &[Property]) -> Result<(bool, Any), MapMatchTypedError> {
        drop(self.live()?);
        Err(UnsupportedFilterableData {}.into())
    }
}

/// Activates a filter's servant.
fn activate(shared: &Shared, f: Arc<FilterObj>) -> Result<(), SystemException> {
    let id: ObjectId = oid(f.id);
    let servant: Arc<dyn corbina::Servant> = if f.default_value.is_some() {
        Arc::new(MappingFilterSkeleton::from_arc(f))
    } else {
        Arc::new(FilterSkeleton::from_arc(f))
    };
    shared
        .poa
        .activate_object_with_id(id, servant)
        .map_err(|_| {
            SystemException::new(
                corbina::SystemExceptionKind::Internal,
                corbina::error::minor::INTERNAL_EVENTS,
            )
        })
}

/// Serves a stored filter again.
pub(crate) fn restore(shared: &Arc<Shared>, id: u64, rec: &Record) -> Result<(), String> {
    let f = FilterObj::decode(id, Arc::downgrade(shared), rec.kind, &rec.data)
        .map_err(|e| e.to_string())?;
    activate(shared, Arc::new(f)).map_err(|e| e.to_string())
}

/// `CosNotifyFilter::FilterFactory`.
pub(crate) struct FilterFactory {
    pub(crate) shared: Weak<Shared>,
}

impl FilterFactory {
    fn create(
        &self,
        grammar: &str,
        default_value: Option<Any>,
    ) -> Result<corbina::ObjectRef, Create> {
        if !GRAMMARS.contains(&grammar) {
            return Err(Create::Grammar);
        }
        let shared = self
            .shared
            .upgrade()
            .ok_or_else(gone)
            .map_err(Create::System)?;
        let f = FilterObj::new(0, Arc::downgrade(&shared), default_value);
        let data = f.encode(&lock(&f.state)).map_err(Create::System)?;
        let id = shared
            .store
            .create_detached(f.kind(), &data)
            .map_err(|e| Create::System(e.into()))?;
        let f = FilterObj { id, ..f };
        let repository_id = match f.kind() {
            Kind::MappingFilter => MappingFilter::REPOSITORY_ID,
            _ => Filter::REPOSITORY_ID,
        };
        activate(&shared, Arc::new(f)).map_err(Create::System)?;
        Ok(shared.reference(id, repository_id))
    }
}

enum Create {
    Grammar,
    System(SystemException),
}

impl FilterFactoryServant for FilterFactory {
    fn create_filter(&self, constraint_grammar: &str) -> Result<Option<Filter>, CreateFilterError> {
        match self.create(constraint_grammar, None) {
            Ok(r) => Ok(Some(Filter::unchecked_narrow(&r))),
            Err(Create::Grammar) => Err(InvalidGrammar {}.into()),
            Err(Create::System(e)) => Err(e.into()),
        }
    }

    fn create_mapping_filter(
        &self,
        constraint_grammar: &str,
        default_value: &Any,
    ) -> Result<Option<MappingFilter>, CreateMappingFilterError> {
        match self.create(constraint_grammar, Some(default_value.clone())) {
            Ok(r) => Ok(Some(MappingFilter::unchecked_narrow(&r))),
            Err(Create::Grammar) => Err(InvalidGrammar {}.into()),
            Err(Create::System(e)) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn et(d: &str, t: &str) -> EventType {
        EventType {
            domain_name: d.into(),
            type_name: t.into(),
        }
    }

    #[test]
    fn globs() {
        assert!(glob("a*c", "abc"));
        assert!(glob("a*c", "ac"));
        assert!(glob("*", ""));
        assert!(glob("*Alarm*", "LinkAlarmRaised"));
        assert!(glob("a*b*c", "aXbYc"));
        assert!(!glob("a*b*c", "aXcYb"));
        assert!(!glob("abc", "abcd"));
        assert!(!glob("ab*ba", "aba"));
    }

    #[test]
    fn event_types() {
        let alarm = et("Telecom", "Alarm");
        assert!(type_matches(&[], &alarm));
        assert!(type_matches(&[et("", "")], &alarm));
        assert!(type_matches(&[et("*", "%ALL")], &alarm));
        assert!(type_matches(&[et("Tele*", "Al*")], &alarm));
        assert!(type_matches(&[et("X", "Y"), et("Telecom", "*")], &alarm));
        assert!(!type_matches(&[et("Telecom", "Fault")], &alarm));
        assert!(!type_matches(&[et("Power", "")], &alarm));
        assert!(type_matches(&[et("", "%ANY")], &et("", "%ANY")));
    }
}
