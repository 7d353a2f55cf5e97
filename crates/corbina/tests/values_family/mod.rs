//! What the value interop tests with omniORB (`values_omniorb.rs`) and JacORB
//! (`values_jacorb.rs`) share: the generated code of `peers/values.idl` and `Base`'s family as
//! every ValueExchange describes it.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use corbina::cdr::CdrReader;
use corbina::valuetype::{
    register_value_factory, unregister_value_factory, DefaultFactory, ValueRef,
};

#[allow(dead_code, clippy::all)]
pub mod generated {
    include!("../../../corbina-codegen/tests/golden/peers_values.rs");
}
use generated::values::*;

/// What `ValueExchange::describe` answers for the value as this side decoded it.
pub fn describe_base(b: &ValueRef<Base>) -> String {
    if let Some(d) = b.downcast::<Derived>().filter(|d| !d.is_null()) {
        return d
            .lock()
            .map_or("null".into(), |d| format!("Derived:{}:{}", d.name, d.extra));
    }
    if let Some(s) = b.downcast::<Sibling>().filter(|s| !s.is_null()) {
        return s
            .lock()
            .map_or("null".into(), |s| format!("Sibling:{}:{}", s.name, s.count));
    }
    b.lock()
        .map_or("null".into(), |b| format!("Base:{}", b.name))
}

pub fn derived(name: &str, extra: i32) -> ValueRef<Base> {
    ValueRef::new(Derived {
        name: name.into(),
        extra,
    })
    .upcast()
}

pub fn sibling(name: &str, count: i32) -> ValueRef<Base> {
    ValueRef::new(Sibling {
        name: name.into(),
        count,
    })
    .upcast()
}

/// Serialises the tests that change the process's value factories (an application that
/// truncates Derived and refuses Sibling registers factories for their ids).
pub fn factories() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes this process a receiver that knows neither Derived nor Sibling while the guard lives,
/// through factories registered for their ids: Derived's builds a Base (truncation), Sibling's
/// (not truncatable) refuses, as a receiver with no factory for it does.
pub struct Truncating;

impl Truncating {
    pub fn start() -> Self {
        register_value_factory(
            Derived::REPOSITORY_ID,
            Arc::new(DefaultFactory::<Base>::new()),
        );
        register_value_factory(Sibling::REPOSITORY_ID, Arc::new(Refuse));
        Truncating
    }
}

impl Drop for Truncating {
    fn drop(&mut self) {
        unregister_value_factory(Derived::REPOSITORY_ID);
        unregister_value_factory(Sibling::REPOSITORY_ID);
    }
}

/// A factory that cannot build its value (a receiver without Sibling's type).
struct Refuse;

impl corbina::valuetype::ValueFactory for Refuse {
    fn read_value(
        &self,
        _r: &mut CdrReader<'_>,
        _input: &mut corbina::valuetype::ValueInput,
        position: usize,
    ) -> corbina::cdr::Result<corbina::ValueBase> {
        Err(corbina::cdr::MarshalError::InvalidValue {
            offset: position,
            reason: "no factory for this value (test)",
        })
    }
}
