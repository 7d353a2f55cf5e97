//! `corbaname:` resolution: the naming context a corbaloc URL names, then `resolve_str` of
//! the name on it. The ORB does not depend on generated CosNaming code (corbina-naming
//! depends on the ORB): `resolve_str` is invoked by hand, through [`ObjectRef::invoke`].

use super::Orb;
use crate::giop::ObjAddr;
use crate::object::ObjectRef;
use crate::{CompletionStatus, SystemException, SystemExceptionKind};

/// `IDL:omg.org/CosNaming/NamingContext/NotFound:1.0` and its siblings, as `corbaname:`
/// resolution meets them.
const NAMING_NOT_FOUND: &str = "IDL:omg.org/CosNaming/NamingContext/NotFound:1.0";
const NAMING_CANNOT_PROCEED: &str = "IDL:omg.org/CosNaming/NamingContext/CannotProceed:1.0";
const NAMING_INVALID_NAME: &str = "IDL:omg.org/CosNaming/NamingContext/InvalidName:1.0";

/// What a failed `corbaname:` resolution raises (defined in [`crate::error::minor`]).
pub mod corbaname_minor {
    /// BAD_PARAM 9: the stringified name is invalid (`NamingContext::InvalidName`).
    pub use crate::error::minor::BAD_PARAM_BAD_SCHEME_SPECIFIC_PART as BAD_PARAM_INVALID_NAME;
    /// BAD_PARAM 10: the naming service could not proceed (`CannotProceed`), or the
    /// corbaloc part does not lead to a naming context.
    pub use crate::error::minor::BAD_PARAM_BAD_URI_OTHER as BAD_PARAM_CANNOT_PROCEED;
    /// OBJECT_NOT_EXIST: no object is bound to the name (`NamingContext::NotFound`).
    pub use crate::error::minor::OBJECT_NOT_EXIST_NAME_NOT_FOUND as OBJECT_NOT_EXIST_NOT_FOUND;
}

impl Orb {
    /// `corbaname:`: the naming context the corbaloc part names, then `resolve_str` of the
    /// name on it (an empty name is the context itself). `NotFound` raises OBJECT_NOT_EXIST,
    /// `InvalidName` and `CannotProceed` BAD_PARAM (see [`corbaname_minor`]); system
    /// exceptions from the naming service pass through.
    pub(super) fn resolve_corbaname(
        &self,
        url: &crate::giop::Corbaname,
    ) -> Result<ObjectRef, SystemException> {
        let context = self.string_to_object(&corbaloc_string(&url.corbaloc))?;
        if url.name.is_empty() {
            return Ok(context);
        }
        #[derive(Debug)]
        enum Failure {
            System(SystemException),
            NotFound,
            CannotProceed,
            InvalidName,
        }
        impl From<SystemException> for Failure {
            fn from(e: SystemException) -> Self {
                Failure::System(e)
            }
        }
        let name = url.name.as_str();
        let result: Result<Option<ObjectRef>, Failure> = context.invoke(
            "resolve_str",
            |w| w.write_string(name),
            crate::object::read_object,
            |id, _r| {
                Ok(match id {
                    NAMING_NOT_FOUND => Some(Failure::NotFound),
                    NAMING_CANNOT_PROCEED => Some(Failure::CannotProceed),
                    NAMING_INVALID_NAME => Some(Failure::InvalidName),
                    _ => None,
                })
            },
        );
        let done = CompletionStatus::No;
        match result {
            Ok(Some(obj)) => Ok(obj),
            // A nil reference bound to the name: nothing to return as an object.
            Ok(None) | Err(Failure::NotFound) => Err(SystemException::new(
                SystemExceptionKind::ObjectNotExist,
                corbaname_minor::OBJECT_NOT_EXIST_NOT_FOUND,
            )
            .completed(done)),
            Err(Failure::InvalidName) => Err(SystemException::new(
                SystemExceptionKind::BadParam,
                corbaname_minor::BAD_PARAM_INVALID_NAME,
            )
            .completed(done)),
            Err(Failure::CannotProceed) => Err(SystemException::new(
                SystemExceptionKind::BadParam,
                corbaname_minor::BAD_PARAM_CANNOT_PROCEED,
            )
            .completed(done)),
            Err(Failure::System(e)) => Err(e),
        }
    }
}

/// The corbaloc URL of a parsed corbaloc (for the context part of a corbaname).
fn corbaloc_string(loc: &crate::giop::Corbaloc) -> String {
    let addrs: Vec<String> = loc
        .addresses
        .iter()
        .map(|a| match a {
            ObjAddr::Rir => "rir:".to_owned(),
            ObjAddr::Iiop(a) => {
                let host = if a.host.contains(':') {
                    format!("[{}]", a.host)
                } else {
                    a.host.clone()
                };
                match a.version {
                    Some(v) => format!("iiop:{}.{}@{host}:{}", v.major, v.minor, a.port),
                    None => format!("iiop:{host}:{}", a.port),
                }
            }
        })
        .collect();
    format!(
        "corbaloc:{}/{}",
        addrs.join(","),
        percent_escape(loc.key.as_bytes())
    )
}

/// `%xx`-escapes every byte of an object key that is not URL-safe.
fn percent_escape(key: &[u8]) -> String {
    let mut s = String::with_capacity(key.len());
    for &b in key {
        if b.is_ascii_alphanumeric() || b";/:?@&=+$,-_.!~*'()".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02x}"));
        }
    }
    s
}

#[cfg(test)]
mod naming_tests {
    use super::*;
    use crate::giop::ObjectUrl;
    use crate::OrbConfig;
    use std::time::Duration;

    #[test]
    fn corbaloc_strings_round_trip() {
        for url in [
            "corbaloc::127.0.0.1:2809/NameService",
            "corbaloc:iiop:1.2@host:1234,iiop:[::1]:99/a%00b%ff",
            "corbaloc:rir:/NameService",
        ] {
            let Ok(ObjectUrl::Corbaloc(loc)) = ObjectUrl::parse(url) else {
                panic!("{url} parses")
            };
            let again = corbaloc_string(&loc);
            let Ok(ObjectUrl::Corbaloc(loc2)) = ObjectUrl::parse(&again) else {
                panic!("{again} parses")
            };
            assert_eq!(loc, loc2, "{url} -> {again}");
        }
    }

    #[test]
    fn corbaname_to_nothing_listening_fails_cleanly() {
        let orb = Orb::with_config(OrbConfig::default().connect_timeout(Duration::from_secs(2)));
        let e = orb
            .string_to_object("corbaname::127.0.0.1:1#a/b")
            .unwrap_err();
        assert_eq!(e.kind, SystemExceptionKind::Transient);
    }
}
