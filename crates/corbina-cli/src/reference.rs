//! A reference given on the command line, read and turned into an object with the reason
//! when it cannot be: the ORB's `BAD_PARAM` alone does not say what is wrong.

use corbina::giop::ObjectUrl;
use corbina::{ObjectRef, Orb};

/// The reference an argument gives: an object URL (`IOR:`, `corbaloc:`, `corbaname:`) as
/// written, else the first line of the file it names.
pub fn text(arg: &str) -> Result<String, String> {
    if arg.contains(':') {
        return Ok(arg.trim().to_owned());
    }
    match std::fs::read_to_string(arg) {
        Ok(s) => s
            .lines()
            .next()
            .map(|l| l.trim().to_owned())
            .filter(|l| !l.is_empty())
            .ok_or_else(|| {
                format!("{arg}: the file is empty (expected a reference on its first line)")
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "{arg}: no such file, and not an object URL (IOR:…, corbaloc:…, corbaname:…)"
        )),
        Err(e) => Err(format!("{arg}: {e}")),
    }
}

/// A reference as shown in a message: long IORs cut short.
pub fn shown(text: &str) -> String {
    match text.char_indices().nth(48) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// `Orb::string_to_object`, failing with why: the parser's reason for a malformed reference
/// (as `catior` gives it), the name for a corbaname that does not resolve.
pub fn object(orb: &Orb, text: &str) -> Result<ObjectRef, String> {
    orb.string_to_object(text)
        .map_err(|e| match ObjectUrl::parse(text) {
            Err(why) => format!("{}: {why}", shown(text)),
            Ok(ObjectUrl::Corbaname(n)) => format!(
                "{}: the name \"{}\" does not resolve in {} ({e})",
                shown(text),
                n.name,
                n.corbaloc,
            ),
            Ok(_) => format!("{}: {e}", shown(text)),
        })
}

/// A failed operation of a subcommand, as the user should read it (exit code 1).
pub struct Failure(pub String);

impl From<corbina::SystemException> for Failure {
    fn from(e: corbina::SystemException) -> Self {
        Failure(format!("CORBA system exception {e}"))
    }
}

/// Runs one operation of a subcommand on an ORB of its own: exit code 0, or 1 after printing
/// "corbina WHAT: why".
pub fn run_on_orb(
    config: corbina::OrbConfig,
    what: &str,
    run: impl FnOnce(&corbina::Orb) -> Result<(), Failure>,
) -> Result<u8, String> {
    let orb = corbina::Orb::with_config(config);
    let r = run(&orb);
    orb.destroy();
    match r {
        Ok(()) => Ok(0),
        Err(Failure(e)) => {
            eprintln!("corbina {what}: {e}");
            Ok(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_says_so() {
        let e = text("no-such-file.ior").unwrap_err();
        assert!(e.contains("no such file"), "{e}");
    }

    #[test]
    fn a_file_gives_its_first_line() {
        let p = std::env::temp_dir().join(format!("corbina-cli-ref-{}", std::process::id()));
        std::fs::write(&p, "  corbaloc::h:1/K \nsecond\n").unwrap();
        let got = text(p.to_str().unwrap());
        let _ = std::fs::remove_file(&p);
        assert_eq!(got.unwrap(), "corbaloc::h:1/K");
    }

    #[test]
    fn long_references_are_cut_short() {
        assert_eq!(shown("IOR:00"), "IOR:00");
        let long = "IOR:".to_owned() + &"0".repeat(100);
        assert_eq!(shown(&long).chars().count(), 49);
    }
}
