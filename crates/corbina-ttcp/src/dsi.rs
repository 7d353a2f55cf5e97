//! Bench served through the Dynamic Skeleton Interface (`server --dsi`): every request is
//! decoded by TypeCode into `Any`s (an `NVList` built per request, as a DSI servant of the
//! seed papers does), with the same semantics and byte counter as the static
//! [`BenchImpl`](crate::servant::BenchImpl).

use std::sync::Arc;

use corbina::dii::{NVList, ARG_IN};
use corbina::dsi::{DynServerRequest, DynamicImplementation};
use corbina::{Any, SystemException, SystemExceptionKind, TypeCode};

use crate::bench::{self, BenchError};
use crate::servant::ByteCounter;

/// One Bench object served through the DSI.
#[derive(Debug, Clone, Default)]
pub struct DsiBench {
    counter: Arc<ByteCounter>,
}

impl DsiBench {
    /// An object counting into `counter` (shared by every object of a server).
    pub fn new(counter: Arc<ByteCounter>) -> Self {
        DsiBench { counter }
    }
}

fn internal() -> SystemException {
    SystemException::new(SystemExceptionKind::Internal, 0)
}

impl DynamicImplementation for DsiBench {
    fn primary_interface(&self) -> &'static str {
        "IDL:Bench:1.0"
    }

    fn invoke(&self, req: &mut DynServerRequest<'_, '_, '_>) -> Result<(), SystemException> {
        let op = req.operation();
        let payload = match op.trim_end_matches("_oneway") {
            "send_octets" => Some((bench::octet_seq_type_code(), 1)),
            "send_shorts" => Some((bench::short_seq_type_code(), 2)),
            "send_longs" => Some((bench::long_seq_type_code(), 4)),
            "send_doubles" => Some((bench::double_seq_type_code(), 8)),
            "send_chars" => Some((bench::char_seq_type_code(), 1)),
            "send_structs" => Some((bench::struct_seq_type_code(), 24)),
            _ => None,
        };
        if let Some((tc, size)) = payload {
            let mut args = NVList::new();
            args.add_item("s", tc, ARG_IN);
            let args = req.arguments(args)?;
            let v = args.item(0).and_then(|a| a.value()).ok_or_else(internal)?;
            // The element count is the sequence's first word.
            let n = v.value_reader().read_ulong()?;
            self.counter.add(n as usize * size);
            return Ok(());
        }
        match op {
            "ping" | "ping_oneway" => {
                req.arguments(NVList::new())?;
            }
            "start_timer" => {
                req.arguments(NVList::new())?;
                self.counter.reset();
            }
            "stop_timer" => {
                req.arguments(NVList::new())?;
                req.set_result(Any::insert(&self.counter.get())?)?;
            }
            "echo" => {
                let mut args = NVList::new();
                args.add_item("s", TypeCode::create_string_tc(0), ARG_IN);
                let s = req
                    .arguments(args)?
                    .item(0)
                    .and_then(|a| a.value())
                    .cloned();
                req.set_result(s.ok_or_else(internal)?)?;
            }
            "fail" => {
                let mut args = NVList::new();
                args.add_item("code", TypeCode::LONG, ARG_IN);
                let code = req
                    .arguments(args)?
                    .item(0)
                    .and_then(|a| a.value()?.to_long());
                match code.ok_or_else(internal)? {
                    0 => {}
                    code => req.set_exception(Any::insert(&BenchError {
                        code,
                        reason: "requested".into(),
                    })?)?,
                }
            }
            _ => return Err(corbina::servant::bad_operation()),
        }
        Ok(())
    }
}
