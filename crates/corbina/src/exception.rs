//! User exceptions: what generated exception types implement.

use crate::cdr::{CdrEncode, CdrWriter};
use crate::{CompletionStatus, SystemException, SystemExceptionKind};

/// An IDL exception type. Generated code implements it for every `exception` definition.
///
/// On the wire a user exception is its repository id (a string) followed by its members;
/// [`CdrEncode`] writes both.
pub trait UserException: std::error::Error + CdrEncode + Send + Sync + 'static {
    /// The exception's repository id, e.g. `IDL:BenchError:1.0`.
    const REPOSITORY_ID: &'static str;
}

/// Writes a user exception's members after its repository id: generated `CdrEncode` impls
/// for exceptions call this first.
pub fn write_exception_id(w: &mut CdrWriter<'_>, repository_id: &str) -> crate::cdr::Result<()> {
    w.write_string(repository_id)
}

/// The `SystemException` a client reports when the server raised a user exception that the
/// operation's `raises` clause does not list: `UNKNOWN`, minor 1, completed YES (the
/// operation ran), as the CORBA specification requires.
pub fn unknown_user_exception() -> SystemException {
    SystemException::new(
        SystemExceptionKind::Unknown,
        crate::error::minor::UNKNOWN_USER_EXCEPTION,
    )
    .completed(CompletionStatus::Yes)
}
