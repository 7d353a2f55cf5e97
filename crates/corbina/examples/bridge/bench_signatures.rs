//! The operations of `peers/bench.idl`'s `Bench`, as TypeCodes built with the ORB's
//! TypeCode factory: what a bridge (or any DSI/DII program) needs to know of the
//! interface, without generated code.

use corbina::dii::ARG_IN;
use corbina::typecode::{StructMember, TcResult};
use corbina::TypeCode;

use super::forward::Signature;

/// `Bench`'s repository id.
pub const BENCH_ID: &str = "IDL:Bench:1.0";

/// The types bench.idl declares.
pub struct BenchTypes {
    /// `exception BenchError`.
    pub bench_error: TypeCode,
    /// The six `typedef sequence<…>`s, in declaration order, with their element sizes
    /// (as `stop_timer` counts them) and the operation-name stem that sends them.
    pub sequences: Vec<(&'static str, TypeCode, u64)>,
}

impl BenchTypes {
    /// Builds the TypeCodes.
    pub fn new() -> TcResult<BenchTypes> {
        let bin_struct = TypeCode::create_struct_tc(
            "IDL:BinStruct:1.0",
            "BinStruct",
            vec![
                StructMember::new("s", TypeCode::SHORT),
                StructMember::new("c", TypeCode::CHAR),
                StructMember::new("l", TypeCode::LONG),
                StructMember::new("o", TypeCode::OCTET),
                StructMember::new("d", TypeCode::DOUBLE),
            ],
        )?;
        let bench_error = TypeCode::create_exception_tc(
            "IDL:BenchError:1.0",
            "BenchError",
            vec![
                StructMember::new("code", TypeCode::LONG),
                StructMember::new("reason", TypeCode::create_string_tc(0)),
            ],
        )?;
        let seq = |name: &str, elem: TypeCode| {
            TypeCode::create_alias_tc(
                &format!("IDL:{name}:1.0"),
                name,
                TypeCode::create_sequence_tc(0, elem),
            )
        };
        let sequences = vec![
            ("octets", seq("OctetSeq", TypeCode::OCTET.into())?, 1),
            ("shorts", seq("ShortSeq", TypeCode::SHORT.into())?, 2),
            ("longs", seq("LongSeq", TypeCode::LONG.into())?, 4),
            ("doubles", seq("DoubleSeq", TypeCode::DOUBLE.into())?, 8),
            ("chars", seq("CharSeq", TypeCode::CHAR.into())?, 1),
            ("structs", seq("StructSeq", bin_struct.clone())?, 24),
        ];
        Ok(BenchTypes {
            bench_error,
            sequences,
        })
    }

    /// Every operation of `Bench`.
    pub fn signatures(&self) -> Vec<Signature> {
        let op = |name: &str, args: Vec<(&str, TypeCode)>, result: TypeCode, oneway| Signature {
            op: name.to_owned(),
            args: args
                .into_iter()
                .map(|(n, tc)| (n.to_owned(), tc, ARG_IN))
                .collect(),
            result,
            exceptions: Vec::new(),
            oneway,
        };
        let void = || TypeCode::from(TypeCode::VOID);
        let string = TypeCode::create_string_tc(0);
        let mut fail = op("fail", vec![("code", TypeCode::LONG.into())], void(), false);
        fail.exceptions.push(self.bench_error.clone());
        let mut sigs = vec![
            op("ping", vec![], void(), false),
            op("ping_oneway", vec![], void(), true),
            op("echo", vec![("s", string.clone())], string, false),
            fail,
        ];
        for (stem, tc, _) in &self.sequences {
            sigs.push(op(
                &format!("send_{stem}"),
                vec![("s", tc.clone())],
                void(),
                false,
            ));
            sigs.push(op(
                &format!("send_{stem}_oneway"),
                vec![("s", tc.clone())],
                void(),
                true,
            ));
        }
        sigs.push(op("start_timer", vec![], void(), false));
        sigs.push(op("stop_timer", vec![], TypeCode::ULONGLONG.into(), false));
        sigs
    }
}
