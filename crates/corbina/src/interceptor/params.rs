//! A request's arguments, result and exceptions as interceptors see them: `Any`s made from
//! the marshalled request and reply by the operation's TypeCodes, only when an interceptor
//! asks (nothing is decoded or copied for a call whose interceptors do not).

use crate::any::Any;
use crate::cdr::{ByteOrder, CdrContext, CdrReader};
use crate::giop::message::OwnedBody;
use crate::typecode::{TcKind, TypeCode};
use crate::SystemException;

/// `Dynamic::ParameterMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParameterMode {
    /// `PARAM_IN`.
    In,
    /// `PARAM_OUT`.
    Out,
    /// `PARAM_INOUT`.
    InOut,
}

/// `Dynamic::Parameter`: one argument of a request and its mode.
#[derive(Debug, Clone)]
pub struct Parameter {
    /// The value (for an `out` argument before the reply: an `Any` of its type with no
    /// value, `tk_null`).
    pub argument: Any,
    /// In, out or inout.
    pub mode: ParameterMode,
}

/// What interceptors need to know of an operation to show its arguments and result as
/// `Any`s: its parameters' TypeCodes and modes, its result's TypeCode and its exceptions.
/// The DII gives one for its requests (from the request's `NVList`); a call made without
/// one (a generated stub, [`ObjectRef::invoke`](crate::ObjectRef::invoke)) has none, and
/// interceptors get NO_RESOURCES (minor 1) for its arguments and result.
pub trait OperationSignature: Sync {
    /// The parameters in order: mode and type.
    fn parameters(&self) -> Vec<(ParameterMode, TypeCode)>;
    /// The result's type (`tk_void` for none).
    fn result_type(&self) -> TypeCode;
    /// The user exceptions the operation may raise (`tk_except` TypeCodes).
    fn exception_types(&self) -> Vec<TypeCode>;
}

/// NO_RESOURCES minor 1: the ORB cannot give what was asked at this point (the request
/// was made or served without TypeCodes for it).
pub(crate) fn no_resources() -> SystemException {
    SystemException::new(
        crate::SystemExceptionKind::NoResources,
        crate::error::minor::NO_RESOURCES_PI_UNAVAILABLE,
    )
}

fn marshal(e: crate::cdr::MarshalError) -> SystemException {
    SystemException::from(e)
}

/// The `in` and `inout` values of `params` from a request body `args` (in order); the
/// others `None`.
pub(crate) fn read_in_values(
    params: &[(ParameterMode, TypeCode)],
    r: &mut CdrReader<'_>,
) -> Result<Vec<Option<Any>>, SystemException> {
    params
        .iter()
        .map(|(mode, tc)| match mode {
            ParameterMode::In | ParameterMode::InOut => {
                Any::read_value(tc.clone(), r).map(Some).map_err(marshal)
            }
            ParameterMode::Out => Ok(None),
        })
        .collect()
}

/// The result, then the `out` and `inout` values of `params` (in order; the others `None`),
/// from a normal reply's body.
pub(crate) fn read_reply_values(
    result: &TypeCode,
    params: &[(ParameterMode, TypeCode)],
    r: &mut CdrReader<'_>,
) -> Result<(Any, Vec<Option<Any>>), SystemException> {
    let ret = if matches!(result.unalias().kind(), TcKind::Void | TcKind::Null) {
        Any::from_raw(result.clone(), Vec::new())
    } else {
        Any::read_value(result.clone(), r).map_err(marshal)?
    };
    let outs = params
        .iter()
        .map(|(mode, tc)| match mode {
            ParameterMode::Out | ParameterMode::InOut => {
                Any::read_value(tc.clone(), r).map(Some).map_err(marshal)
            }
            ParameterMode::In => Ok(None),
        })
        .collect::<Result<_, _>>()?;
    Ok((ret, outs))
}

/// The client's view: the arguments at `send_request` (`reply` `None`: `in`/`inout` values,
/// `out` ones empty) or at `receive_reply` (the reply's `out`/`inout` values).
pub(crate) fn client_arguments(
    sig: &dyn OperationSignature,
    encode: &dyn Fn() -> crate::cdr::Result<Vec<u8>>,
    ctx: CdrContext,
    reply: Option<&(OwnedBody, crate::cdr::CodeSets)>,
) -> Result<Vec<Parameter>, SystemException> {
    let params = sig.parameters();
    let bytes = encode().map_err(marshal)?;
    let mut r = CdrReader::new(&bytes, ByteOrder::NATIVE, ctx);
    let ins = read_in_values(&params, &mut r)?;
    let outs = match reply {
        Some((body, code_sets)) => {
            let mut r = body.body().reader(*code_sets);
            read_reply_values(&sig.result_type(), &params, &mut r)?.1
        }
        None => vec![None; params.len()],
    };
    Ok(params
        .into_iter()
        .zip(ins.into_iter().zip(outs))
        .map(|((mode, _), (i, o))| Parameter {
            argument: o.or(i).unwrap_or_default(),
            mode,
        })
        .collect())
}

/// The result from a normal reply's body.
pub(crate) fn client_result(
    sig: &dyn OperationSignature,
    reply: &(OwnedBody, crate::cdr::CodeSets),
) -> Result<Any, SystemException> {
    let mut r = reply.0.body().reader(reply.1);
    let params = sig.parameters();
    Ok(read_reply_values(&sig.result_type(), &params, &mut r)?.0)
}
