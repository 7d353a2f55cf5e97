//! [`Report`]: what `main` returns so that an error is printed as people read it.

use std::fmt;

/// An error to return from `main` (`fn main() -> Result<(), corbina::Report>`): `?` turns any
/// error into one, and when `main` returns it Rust prints it with `Debug`, which here is the
/// error's `Display` and its causes, as `anyhow` prints. With a plain `Box<dyn Error>`, a
/// [`SystemException`](crate::SystemException) would print as its fields.
///
/// ```
/// fn main() -> Result<(), corbina::Report> {
///     let orb = corbina::Orb::with_config(corbina::OrbConfig::default());
///     let e = orb.string_to_object("IOR:zz").unwrap_err();
///     let report = corbina::Report::from(e);
///     assert!(format!("{report:?}").starts_with("BAD_PARAM (minor "));
///     Ok(())
/// }
/// ```
pub struct Report(Box<dyn std::error::Error + Send + Sync + 'static>);

impl<E: Into<Box<dyn std::error::Error + Send + Sync + 'static>>> From<E> for Report {
    fn from(e: E) -> Self {
        Report(e.into())
    }
}

impl Report {
    /// The error.
    pub fn error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        // The causes a `Display` does not already include.
        let shown = self.0.to_string();
        let mut source = self.0.source();
        while let Some(cause) = source {
            let text = cause.to_string();
            if !shown.contains(&text) {
                write!(f, "\n  caused by: {text}")?;
            }
            source = cause.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CompletionStatus, SystemException, SystemExceptionKind};

    #[derive(Debug)]
    struct Outer(std::io::Error);
    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("cannot start")
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn debug_is_what_people_read() {
        let e = SystemException::new(SystemExceptionKind::Transient, 0x4342_0212)
            .completed(CompletionStatus::No);
        let shown = format!("{:?}", Report::from(e.clone()));
        assert_eq!(shown, e.to_string());
        assert!(!shown.contains("kind:"), "{shown}");
        let r = Report::from(Outer(std::io::Error::other("port taken")));
        assert_eq!(format!("{r:?}"), "cannot start\n  caused by: port taken");
        assert_eq!(
            format!("{:?}", Report::from("usage: client IOR")),
            "usage: client IOR"
        );
    }
}
