//! What generated AMH response handlers (`AMH_<I>ResponseHandler`, `corbina-idl --amh`) are
//! made of: a deferred reply and the operation it answers.

use crate::{CompletionStatus, ReplyHandle, SystemException, SystemExceptionKind};

/// BAD_OPERATION: an AMH response handler answered with another operation's results (in
/// the minor-code table of [`crate::error`]).
pub use crate::error::minor::BAD_OPERATION_WRONG_RESPONSE;

/// A deferred reply ([`ReplyHandle`]) and the IDL operation of its request, so that a typed
/// response handler writes only that operation's results. Dropping it without an answer
/// sends `INTERNAL`, as the `ReplyHandle` does.
#[derive(Debug)]
pub struct AmhResponse {
    handle: ReplyHandle,
    operation: &'static str,
}

impl AmhResponse {
    /// The reply to a request for `operation` (its wire name, `_get_<attr>` for attributes).
    pub fn new(handle: ReplyHandle, operation: &'static str) -> Self {
        AmhResponse { handle, operation }
    }

    /// The operation this answers.
    pub fn operation(&self) -> &'static str {
        self.operation
    }

    /// Whether the client waits for the answer.
    pub fn response_expected(&self) -> bool {
        self.handle.response_expected()
    }

    /// The reply handle, if it answers `operation`. Otherwise the client gets
    /// `BAD_OPERATION` (rather than results it would misread) and so does the caller.
    pub fn for_operation(self, operation: &str) -> Result<ReplyHandle, SystemException> {
        if operation == self.operation {
            return Ok(self.handle);
        }
        let e = SystemException::new(
            SystemExceptionKind::BadOperation,
            BAD_OPERATION_WRONG_RESPONSE,
        )
        .completed(CompletionStatus::Maybe);
        self.handle.reply_system_exception(e.clone())?;
        Err(e)
    }
}
