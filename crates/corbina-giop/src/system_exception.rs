//! CORBA system exceptions: the kinds, the body a SYSTEM_EXCEPTION Reply carries, and the
//! mapping from CDR errors.

use std::fmt;
use std::sync::Arc;

use corbina_cdr::{CdrReader, CdrWriter, ExceptionKind, MarshalError};

use crate::encap;
use crate::error::{GiopError, Result};

/// `CORBA::CompletionStatus`: whether the operation ran before the exception.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CompletionStatus {
    /// COMPLETED_YES.
    Yes,
    /// COMPLETED_NO: safe to retry.
    #[default]
    No,
    /// COMPLETED_MAYBE.
    Maybe,
}

impl CompletionStatus {
    /// The wire value.
    pub fn value(self) -> u32 {
        match self {
            CompletionStatus::Yes => 0,
            CompletionStatus::No => 1,
            CompletionStatus::Maybe => 2,
        }
    }

    /// The status for a wire value.
    pub fn from_value(v: u32) -> Result<CompletionStatus> {
        match v {
            0 => Ok(CompletionStatus::Yes),
            1 => Ok(CompletionStatus::No),
            2 => Ok(CompletionStatus::Maybe),
            _ => Err(GiopError::UnknownCompletionStatus(v)),
        }
    }
}

impl fmt::Display for CompletionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CompletionStatus::Yes => "YES",
            CompletionStatus::No => "NO",
            CompletionStatus::Maybe => "MAYBE",
        })
    }
}

macro_rules! kinds {
    ($($variant:ident => $name:literal,)*) => {
        /// Every standard CORBA system exception.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[allow(missing_docs)]
        pub enum SystemExceptionKind { $($variant,)* }

        impl SystemExceptionKind {
            /// All kinds, in specification order.
            pub const ALL: &'static [SystemExceptionKind] = &[$(SystemExceptionKind::$variant,)*];

            /// The IDL name (`MARSHAL`).
            pub fn name(self) -> &'static str {
                match self { $(SystemExceptionKind::$variant => $name,)* }
            }

            /// The kind for an IDL name.
            pub fn from_name(name: &str) -> Option<SystemExceptionKind> {
                match name { $($name => Some(SystemExceptionKind::$variant),)* _ => None }
            }
        }
    };
}

kinds! {
    Unknown => "UNKNOWN",
    BadParam => "BAD_PARAM",
    NoMemory => "NO_MEMORY",
    ImpLimit => "IMP_LIMIT",
    CommFailure => "COMM_FAILURE",
    InvObjref => "INV_OBJREF",
    NoPermission => "NO_PERMISSION",
    Internal => "INTERNAL",
    Marshal => "MARSHAL",
    Initialize => "INITIALIZE",
    NoImplement => "NO_IMPLEMENT",
    BadTypecode => "BAD_TYPECODE",
    BadOperation => "BAD_OPERATION",
    NoResources => "NO_RESOURCES",
    NoResponse => "NO_RESPONSE",
    PersistStore => "PERSIST_STORE",
    BadInvOrder => "BAD_INV_ORDER",
    Transient => "TRANSIENT",
    FreeMem => "FREE_MEM",
    InvIdent => "INV_IDENT",
    InvFlag => "INV_FLAG",
    IntfRepos => "INTF_REPOS",
    BadContext => "BAD_CONTEXT",
    ObjAdapter => "OBJ_ADAPTER",
    DataConversion => "DATA_CONVERSION",
    ObjectNotExist => "OBJECT_NOT_EXIST",
    TransactionRequired => "TRANSACTION_REQUIRED",
    TransactionRolledback => "TRANSACTION_ROLLEDBACK",
    InvalidTransaction => "INVALID_TRANSACTION",
    InvPolicy => "INV_POLICY",
    CodesetIncompatible => "CODESET_INCOMPATIBLE",
    Rebind => "REBIND",
    Timeout => "TIMEOUT",
    TransactionUnavailable => "TRANSACTION_UNAVAILABLE",
    TransactionMode => "TRANSACTION_MODE",
    BadQos => "BAD_QOS",
    InvalidActivity => "INVALID_ACTIVITY",
    ActivityCompleted => "ACTIVITY_COMPLETED",
    ActivityRequired => "ACTIVITY_REQUIRED",
}

const REPO_PREFIX: &str = "IDL:omg.org/CORBA/";
const REPO_SUFFIX: &str = ":1.0";

impl SystemExceptionKind {
    /// The repository id (`IDL:omg.org/CORBA/MARSHAL:1.0`).
    pub fn repository_id(self) -> String {
        format!("{REPO_PREFIX}{}{REPO_SUFFIX}", self.name())
    }

    /// The kind a repository id names, if it is a standard system exception.
    pub fn from_repository_id(id: &str) -> Option<SystemExceptionKind> {
        let name = id.strip_prefix(REPO_PREFIX)?.strip_suffix(REPO_SUFFIX)?;
        SystemExceptionKind::from_name(name)
    }
}

impl From<ExceptionKind> for SystemExceptionKind {
    fn from(k: ExceptionKind) -> Self {
        match k {
            ExceptionKind::Marshal => SystemExceptionKind::Marshal,
            ExceptionKind::DataConversion => SystemExceptionKind::DataConversion,
            ExceptionKind::BadParam => SystemExceptionKind::BadParam,
            ExceptionKind::ImpLimit => SystemExceptionKind::ImpLimit,
            ExceptionKind::CodesetIncompatible => SystemExceptionKind::CodesetIncompatible,
        }
    }
}

/// A CORBA system exception as the ORB raises and reports it.
///
/// Besides what the wire carries (kind, minor code, completion status) it may hold a
/// *detail*: the local error it was raised for (in the runtime a `corbina::Error`: which
/// endpoint, which phase, the OS error), shown by `Display` and returned by
/// [`std::error::Error::source`]. The detail is one pointer, null on the success path;
/// equality, hashing and the wire encoding ignore it.
#[derive(Clone)]
pub struct SystemException {
    /// Which exception.
    pub kind: SystemExceptionKind,
    /// Minor code (vendor id in the high 20 bits).
    pub minor: u32,
    /// Whether the operation ran.
    pub completed: CompletionStatus,
    /// Thin (one word): keeps `Result<(), SystemException>` at two words.
    detail: Option<Arc<Detail>>,
}

/// The local error behind a system exception.
pub type Detail = Box<dyn std::error::Error + Send + Sync + 'static>;

impl PartialEq for SystemException {
    fn eq(&self, other: &Self) -> bool {
        (self.kind, self.minor, self.completed) == (other.kind, other.minor, other.completed)
    }
}

impl Eq for SystemException {}

impl std::hash::Hash for SystemException {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.kind, self.minor, self.completed).hash(state);
    }
}

impl fmt::Debug for SystemException {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("SystemException");
        d.field("kind", &self.kind)
            .field("minor", &format_args!("{:#010x}", self.minor))
            .field("completed", &self.completed);
        if let Some(detail) = &self.detail {
            d.field("detail", &format_args!("{detail}"));
        }
        d.finish()
    }
}

impl fmt::Display for SystemException {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (minor {:#010x}, completed {})",
            self.kind.name(),
            self.minor,
            self.completed
        )?;
        match &self.detail {
            Some(detail) => write!(f, ": {detail}"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for SystemException {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.detail {
            Some(d) => Some(&***d),
            None => None,
        }
    }
}

impl SystemException {
    /// An exception of `kind` with `minor`, not completed.
    pub fn new(kind: SystemExceptionKind, minor: u32) -> SystemException {
        SystemException {
            kind,
            minor,
            completed: CompletionStatus::No,
            detail: None,
        }
    }

    /// The same exception with another completion status.
    pub fn completed(mut self, completed: CompletionStatus) -> SystemException {
        self.completed = completed;
        self
    }

    /// The same exception with `detail` as the local error it was raised for.
    pub fn with_detail(
        mut self,
        detail: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> SystemException {
        self.detail = Some(Arc::new(detail.into()));
        self
    }

    /// The local error this exception was raised for, if any (downcast it to the runtime's
    /// error type to match on it).
    pub fn detail(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.detail.as_deref().map(|d| &**d)
    }

    /// The same exception without its detail: what a peer receives.
    pub fn without_detail(mut self) -> SystemException {
        self.detail = None;
        self
    }

    /// The body to send in a SYSTEM_EXCEPTION Reply.
    pub fn to_body(&self) -> SystemExceptionBody {
        SystemExceptionBody {
            repository_id: self.kind.repository_id(),
            minor: self.minor,
            completed: self.completed,
        }
    }
}

/// Decoding errors become MARSHAL (or what the error maps to), not completed.
impl From<MarshalError> for SystemException {
    fn from(e: MarshalError) -> Self {
        SystemException::new(e.exception_kind().into(), e.minor())
    }
}

/// Protocol errors become MARSHAL (or what a wrapped CDR error maps to), not completed:
/// a message that cannot be decoded was not processed.
impl From<crate::error::GiopError> for SystemException {
    fn from(e: crate::error::GiopError) -> Self {
        match e {
            crate::error::GiopError::Marshal(m) => m.into(),
            crate::error::GiopError::MessageTooLarge { .. } => SystemException::new(
                SystemExceptionKind::ImpLimit,
                corbina_cdr::CORBINA_VMCID | 0x100,
            ),
            _ => SystemException::new(
                SystemExceptionKind::Marshal,
                corbina_cdr::CORBINA_VMCID | 0x101,
            ),
        }
    }
}

/// `GIOP::SystemExceptionReplyBody`: what follows a SYSTEM_EXCEPTION Reply header.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SystemExceptionBody {
    /// Repository id (`IDL:omg.org/CORBA/MARSHAL:1.0`).
    pub repository_id: String,
    /// `minor_code_value`.
    pub minor: u32,
    /// `completion_status`.
    pub completed: CompletionStatus,
}

impl SystemExceptionBody {
    /// Reads the body.
    pub fn decode(r: &mut CdrReader<'_>) -> Result<SystemExceptionBody> {
        let repository_id = encap::read_latin1(r)?;
        let minor = r.read_ulong()?;
        let completed = CompletionStatus::from_value(r.read_ulong()?)?;
        Ok(SystemExceptionBody {
            repository_id,
            minor,
            completed,
        })
    }

    /// Writes the body.
    pub fn encode(&self, w: &mut CdrWriter<'_>) -> Result<()> {
        encap::write_latin1(w, &self.repository_id)?;
        w.write_ulong(self.minor);
        w.write_ulong(self.completed.value());
        Ok(())
    }

    /// The exception, if the repository id is a standard one (others are UNKNOWN to the
    /// caller, by the rules of the specification).
    pub fn to_exception(&self) -> SystemException {
        match SystemExceptionKind::from_repository_id(&self.repository_id) {
            Some(kind) => SystemException::new(kind, self.minor).completed(self.completed),
            None => SystemException::new(SystemExceptionKind::Unknown, self.minor)
                .completed(self.completed),
        }
    }
}

impl From<SystemException> for SystemExceptionBody {
    fn from(e: SystemException) -> Self {
        e.to_body()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use corbina_cdr::{ByteOrder, CdrContext};

    #[test]
    fn kinds_and_ids() {
        assert_eq!(SystemExceptionKind::ALL.len(), 39);
        for &k in SystemExceptionKind::ALL {
            assert_eq!(
                SystemExceptionKind::from_repository_id(&k.repository_id()),
                Some(k)
            );
        }
        assert_eq!(
            SystemExceptionKind::Marshal.repository_id(),
            "IDL:omg.org/CORBA/MARSHAL:1.0"
        );
        assert_eq!(
            SystemExceptionKind::from_repository_id("IDL:omg.org/CORBA/NOPE:1.0"),
            None
        );
        assert_eq!(
            SystemExceptionKind::from_repository_id("IDL:Bench:1.0"),
            None
        );
    }

    #[test]
    fn display_and_from_marshal_error() {
        let e: SystemException = MarshalError::EndOfData {
            offset: 0,
            needed: 4,
            remaining: 0,
        }
        .into();
        assert_eq!(e.to_string(), "MARSHAL (minor 0x43420001, completed NO)");
        let e: SystemException = MarshalError::NotRepresentable {
            code_point: 0x20ac,
            code_set: "ISO-8859-1",
        }
        .into();
        assert_eq!(e.kind, SystemExceptionKind::DataConversion);
        assert_eq!(e.minor, 0x4f4d_0001);
    }

    /// The detail is shown and is the source, but equality, hashing and the body ignore it.
    #[test]
    fn detail_is_shown_not_compared_or_sent() {
        use std::hash::{BuildHasher, RandomState};
        let plain = SystemException::new(SystemExceptionKind::CommFailure, 7)
            .completed(CompletionStatus::Maybe);
        let io = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        let text = io.to_string();
        let detailed = plain.clone().with_detail(io);
        assert_eq!(
            detailed.to_string(),
            format!("COMM_FAILURE (minor 0x00000007, completed MAYBE): {text}")
        );
        assert_eq!(detailed, plain);
        let s = RandomState::new();
        assert_eq!(s.hash_one(&detailed), s.hash_one(&plain));
        assert_eq!(detailed.to_body(), plain.to_body());
        let source = std::error::Error::source(&detailed).map(|e| e.to_string());
        assert_eq!(source, Some(text));
        assert!(detailed.detail().is_some() && plain.detail().is_none());
        assert!(std::error::Error::source(&plain).is_none());
        assert!(detailed.without_detail().detail().is_none());
    }

    #[test]
    fn body_bytes() {
        // JacORB's NO_IMPLEMENT body from the 1.1 vectors.
        let body = SystemException::new(SystemExceptionKind::NoImplement, 0).to_body();
        let mut w = CdrWriter::with_byte_order(ByteOrder::Big, CdrContext::GIOP_1_2);
        body.encode(&mut w).unwrap();
        let bytes = w.into_bytes();
        let mut expect = vec![0, 0, 0, 35];
        expect.extend_from_slice(b"IDL:omg.org/CORBA/NO_IMPLEMENT:1.0\0");
        expect.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(bytes, expect);
        let mut r = CdrReader::new(&bytes, ByteOrder::Big, CdrContext::GIOP_1_2);
        let back = SystemExceptionBody::decode(&mut r).unwrap();
        assert_eq!(back, body);
        assert_eq!(back.to_exception().kind, SystemExceptionKind::NoImplement);
        let mut bad = bytes.clone();
        *bad.last_mut().unwrap() = 3;
        let mut r = CdrReader::new(&bad, ByteOrder::Big, CdrContext::GIOP_1_2);
        assert_eq!(
            SystemExceptionBody::decode(&mut r),
            Err(GiopError::UnknownCompletionStatus(3))
        );
    }
}
