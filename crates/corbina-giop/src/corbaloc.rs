//! `corbaloc:` and `corbaname:` URLs: parsing them, and writing corbaloc URLs.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use crate::header::Version;
use crate::ior::{Ior, IorStringError};
use crate::object_key::{escape_key, ObjectKey};

/// The IIOP port when a corbaloc address gives none.
pub const DEFAULT_PORT: u16 = 2809;
/// The key a `corbaname:` URL names when it gives none.
pub const DEFAULT_NAMING_KEY: &str = "NameService";

/// An `iiop:` address of a corbaloc URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IiopAddress {
    /// `major.minor@`, when given (the specification's default is 1.0).
    pub version: Option<Version>,
    /// Host name, IPv4 address, or IPv6 address without its brackets.
    pub host: String,
    /// Port ([`DEFAULT_PORT`] when not given).
    pub port: u16,
}

/// One address of a corbaloc URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ObjAddr {
    /// `iiop:` (or the short `:`) host and port.
    Iiop(IiopAddress),
    /// `rir:`: resolve the key with `resolve_initial_references`.
    Rir,
}

/// A parsed `corbaloc:` URL: where to ask, and the object key to ask for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Corbaloc {
    /// The addresses, to try in order.
    pub addresses: Vec<ObjAddr>,
    /// The object key (`%xx` escapes decoded).
    pub key: ObjectKey,
}

/// A parsed `corbaname:` URL: a naming context's corbaloc plus a stringified name in it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Corbaname {
    /// Where the naming context is (key `NameService` by default).
    pub corbaloc: Corbaloc,
    /// The stringified name (`a/b.c`, escapes decoded), empty for the context itself.
    pub name: String,
}

/// Any string `string_to_object` accepts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ObjectUrl {
    /// `IOR:…`.
    Ior(Ior),
    /// `corbaloc:…`.
    Corbaloc(Corbaloc),
    /// `corbaname:…`.
    Corbaname(Corbaname),
}

/// Why an object URL could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum UrlError {
    /// Not `IOR:`, `corbaloc:` or `corbaname:`.
    #[error("not an object URL")]
    UnknownScheme,
    /// A protocol other than `iiop` and `rir`.
    #[error("unsupported protocol {0:?}")]
    UnsupportedProtocol(String),
    /// No host in an iiop address.
    #[error("missing host in {0:?}")]
    MissingHost(String),
    /// A host with characters a host cannot have.
    #[error("invalid host {0:?}")]
    InvalidHost(String),
    /// A port that is not a number from 0 to 65535.
    #[error("invalid port {0:?}")]
    InvalidPort(String),
    /// A version that is not `major.minor`.
    #[error("invalid version {0:?}")]
    InvalidVersion(String),
    /// `%` not followed by two hex digits.
    #[error("invalid %-escape at position {0}")]
    InvalidEscape(usize),
    /// `rir:` together with other addresses.
    #[error("rir: must be the only address")]
    RirNotAlone,
    /// A corbaname name that is not UTF-8 once unescaped.
    #[error("the name is not valid UTF-8")]
    InvalidName,
    /// A malformed `IOR:` string.
    #[error(transparent)]
    Ior(#[from] IorStringError),
}

fn hex_digit(c: u8) -> Option<u8> {
    char::from(c)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// Decodes `%xx` escapes; `offset` locates errors in the whole URL.
fn unescape(s: &str, offset: usize) -> Result<Vec<u8>, UrlError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c == b'%' {
            let hi = b.get(i + 1).copied().and_then(hex_digit);
            let lo = b.get(i + 2).copied().and_then(hex_digit);
            match (hi, lo) {
                (Some(h), Some(l)) => out.push(h << 4 | l),
                _ => return Err(UrlError::InvalidEscape(offset + i)),
            }
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    Ok(out)
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    match s.get(..prefix.len()) {
        Some(p) if p.eq_ignore_ascii_case(prefix) => s.get(prefix.len()..),
        _ => None,
    }
}

fn valid_host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')
}

fn parse_version(s: &str) -> Result<Version, UrlError> {
    let bad = || UrlError::InvalidVersion(s.to_owned());
    let (ma, mi) = s.split_once('.').ok_or_else(bad)?;
    let all_digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(ma) || !all_digits(mi) {
        return Err(bad());
    }
    Ok(Version {
        major: ma.parse().map_err(|_| bad())?,
        minor: mi.parse().map_err(|_| bad())?,
    })
}

fn parse_iiop(addr: &str) -> Result<IiopAddress, UrlError> {
    let (version, hostport) = match addr.split_once('@') {
        Some((v, rest)) => (Some(parse_version(v)?), rest),
        None => (None, addr),
    };
    let (host, port) = if let Some(rest) = hostport.strip_prefix('[') {
        let (h, after) = rest
            .split_once(']')
            .ok_or_else(|| UrlError::InvalidHost(hostport.to_owned()))?;
        if h.is_empty()
            || !h
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        {
            return Err(UrlError::InvalidHost(h.to_owned()));
        }
        match after {
            "" => (h, None),
            p => (
                h,
                Some(
                    p.strip_prefix(':')
                        .ok_or_else(|| UrlError::InvalidPort(p.to_owned()))?,
                ),
            ),
        }
    } else {
        match hostport.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    };
    if host.is_empty() {
        return Err(UrlError::MissingHost(addr.to_owned()));
    }
    if !hostport.starts_with('[') && !host.chars().all(valid_host_char) {
        return Err(UrlError::InvalidHost(host.to_owned()));
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
            p.parse().map_err(|_| UrlError::InvalidPort(p.to_owned()))?
        }
        Some(p) => return Err(UrlError::InvalidPort(p.to_owned())),
    };
    Ok(IiopAddress {
        version,
        host: host.to_owned(),
        port,
    })
}

/// Parses `<obj_addr_list>["/"<key_string>]`; `offset` is where it starts in the URL.
fn parse_loc(s: &str, offset: usize) -> Result<(Vec<ObjAddr>, Option<Vec<u8>>), UrlError> {
    let (list, key) = match s.split_once('/') {
        Some((l, k)) => (l, Some(unescape(k, offset + l.len() + 1)?)),
        None => (s, None),
    };
    let mut addresses = Vec::new();
    for addr in list.split(',') {
        if let Some(rest) = strip_prefix_ci(addr, "rir:") {
            if !rest.is_empty() {
                return Err(UrlError::UnsupportedProtocol(addr.to_owned()));
            }
            addresses.push(ObjAddr::Rir);
        } else if let Some(rest) = strip_prefix_ci(addr, "iiop:") {
            addresses.push(ObjAddr::Iiop(parse_iiop(rest)?));
        } else if let Some(rest) = addr.strip_prefix(':') {
            addresses.push(ObjAddr::Iiop(parse_iiop(rest)?));
        } else {
            let proto = addr.split(':').next().unwrap_or_default();
            return Err(UrlError::UnsupportedProtocol(proto.to_owned()));
        }
    }
    if addresses.len() > 1 && addresses.contains(&ObjAddr::Rir) {
        return Err(UrlError::RirNotAlone);
    }
    Ok((addresses, key))
}

impl Corbaloc {
    /// Parses a `corbaloc:` URL.
    pub fn parse(url: &str) -> Result<Corbaloc, UrlError> {
        let rest = strip_prefix_ci(url, "corbaloc:").ok_or(UrlError::UnknownScheme)?;
        let (addresses, key) = parse_loc(rest, 9)?;
        Ok(Corbaloc {
            addresses,
            key: ObjectKey(key.unwrap_or_default()),
        })
    }

    /// A one-address IIOP corbaloc.
    pub fn iiop(host: &str, port: u16, key: ObjectKey) -> Corbaloc {
        let addr = IiopAddress {
            version: None,
            host: host.to_owned(),
            port,
        };
        Corbaloc {
            addresses: vec![ObjAddr::Iiop(addr)],
            key,
        }
    }
}

impl Corbaname {
    /// Parses a `corbaname:` URL (resolution of the name is the naming service's job).
    pub fn parse(url: &str) -> Result<Corbaname, UrlError> {
        let rest = strip_prefix_ci(url, "corbaname:").ok_or(UrlError::UnknownScheme)?;
        let (loc, name) = match rest.split_once('#') {
            Some((l, n)) => (l, Some((n, 10 + l.len() + 1))),
            None => (rest, None),
        };
        let (addresses, key) = parse_loc(loc, 10)?;
        let key = match key {
            Some(k) if !k.is_empty() => k,
            _ => DEFAULT_NAMING_KEY.as_bytes().to_vec(),
        };
        let name = match name {
            Some((n, off)) => {
                String::from_utf8(unescape(n, off)?).map_err(|_| UrlError::InvalidName)?
            }
            None => String::new(),
        };
        Ok(Corbaname {
            corbaloc: Corbaloc {
                addresses,
                key: ObjectKey(key),
            },
            name,
        })
    }
}

impl ObjectUrl {
    /// Parses `IOR:`, `corbaloc:` or `corbaname:` (schemes in any case).
    pub fn parse(s: &str) -> Result<ObjectUrl, UrlError> {
        if strip_prefix_ci(s, "IOR:").is_some() {
            Ok(ObjectUrl::Ior(Ior::from_stringified(s)?))
        } else if strip_prefix_ci(s, "corbaloc:").is_some() {
            Corbaloc::parse(s).map(ObjectUrl::Corbaloc)
        } else if strip_prefix_ci(s, "corbaname:").is_some() {
            Corbaname::parse(s).map(ObjectUrl::Corbaname)
        } else {
            Err(UrlError::UnknownScheme)
        }
    }
}

impl FromStr for Corbaloc {
    type Err = UrlError;
    fn from_str(s: &str) -> Result<Self, UrlError> {
        Corbaloc::parse(s)
    }
}

impl FromStr for Corbaname {
    type Err = UrlError;
    fn from_str(s: &str) -> Result<Self, UrlError> {
        Corbaname::parse(s)
    }
}

impl fmt::Display for IiopAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("iiop:")?;
        if let Some(v) = self.version {
            write!(f, "{}.{}@", v.major, v.minor)?;
        }
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl fmt::Display for ObjAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ObjAddr::Iiop(a) => write!(f, "{a}"),
            ObjAddr::Rir => f.write_str("rir:"),
        }
    }
}

fn write_loc(f: &mut fmt::Formatter<'_>, loc: &Corbaloc) -> fmt::Result {
    for (i, a) in loc.addresses.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(f, "{a}")?;
    }
    write!(f, "/{}", escape_key(&loc.key.0))
}

impl fmt::Display for Corbaloc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("corbaloc:")?;
        write_loc(f, self)
    }
}

impl fmt::Display for Corbaname {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("corbaname:")?;
        write_loc(f, &self.corbaloc)?;
        if !self.name.is_empty() {
            // Names keep `/` and `.` (their own syntax); the rest is escaped like keys.
            f.write_str("#")?;
            f.write_str(&escape_key(self.name.as_bytes()))?;
        }
        Ok(())
    }
}

/// `corbaloc:iiop:host:port/key`, with the key's unsafe bytes `%xx`-escaped.
pub fn format_corbaloc(host: &str, port: u16, key: &[u8]) -> String {
    Corbaloc::iiop(host, port, ObjectKey(key.to_vec())).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iiop(version: Option<Version>, host: &str, port: u16) -> ObjAddr {
        ObjAddr::Iiop(IiopAddress {
            version,
            host: host.into(),
            port,
        })
    }

    #[test]
    fn iiop_forms() {
        let c =
            Corbaloc::parse("corbaloc:iiop:1.2@example.org:1050/Prod/Trading%20Service").unwrap();
        assert_eq!(
            c.addresses,
            [iiop(Some(Version::V1_2), "example.org", 1050)]
        );
        assert_eq!(c.key.as_bytes(), b"Prod/Trading Service");
        let c = Corbaloc::parse("corbaloc::host/key").unwrap();
        assert_eq!(c.addresses, [iiop(None, "host", DEFAULT_PORT)]);
        let c =
            Corbaloc::parse("corbaloc:iiop:[::1]:2000,:10.0.0.1,iiop:[fe80::1]/%00%ffk").unwrap();
        assert_eq!(
            c.addresses,
            [
                iiop(None, "::1", 2000),
                iiop(None, "10.0.0.1", 2809),
                iiop(None, "fe80::1", 2809)
            ]
        );
        assert_eq!(c.key.as_bytes(), [0, 0xff, b'k']);
        assert_eq!(
            c.to_string(),
            "corbaloc:iiop:[::1]:2000,iiop:10.0.0.1:2809,iiop:[fe80::1]:2809/%00%FFk"
        );
        assert_eq!(Corbaloc::parse(&c.to_string()).unwrap(), c);
        assert_eq!(
            Corbaloc::parse("CORBALOC::h").unwrap().key,
            ObjectKey::default()
        );
    }

    #[test]
    fn rir_and_corbaname() {
        let c = Corbaloc::parse("corbaloc:rir:/NameService").unwrap();
        assert_eq!(c.addresses, [ObjAddr::Rir]);
        assert_eq!(c.key.as_bytes(), b"NameService");
        assert_eq!(c.to_string(), "corbaloc:rir:/NameService");
        let n = Corbaname::parse("corbaname::host:5000/key#a/b.c").unwrap();
        assert_eq!(n.corbaloc.addresses, [iiop(None, "host", 5000)]);
        assert_eq!(n.corbaloc.key.as_bytes(), b"key");
        assert_eq!(n.name, "a/b.c");
        let n = Corbaname::parse("corbaname:rir:#x%20y").unwrap();
        assert_eq!(n.corbaloc.key.as_bytes(), b"NameService");
        assert_eq!(n.name, "x y");
        assert_eq!(Corbaname::parse(&n.to_string()).unwrap(), n);
    }

    #[test]
    fn errors() {
        use UrlError::*;
        let cases: &[(&str, UrlError)] = &[
            ("corbaloc:http://x/k", UnsupportedProtocol("http".into())),
            ("corbaloc:iiop:/k", MissingHost("".into())),
            ("corbaloc:iiop:h:99999/k", InvalidPort("99999".into())),
            ("corbaloc:iiop:h:/k", InvalidPort("".into())),
            ("corbaloc:iiop:h:1x/k", InvalidPort("1x".into())),
            ("corbaloc:iiop:1@h/k", InvalidVersion("1".into())),
            ("corbaloc:iiop:[::1/k", InvalidHost("[::1".into())),
            ("corbaloc:iiop:[::1]x/k", InvalidPort("x".into())),
            ("corbaloc:iiop:h h/k", InvalidHost("h h".into())),
            ("corbaloc::h/%4", InvalidEscape(12)),
            ("corbaloc:rir:,:h/k", RirNotAlone),
            ("corbaname::h#%ff", InvalidName),
            ("http://x", UnknownScheme),
        ];
        for (s, e) in cases {
            assert_eq!(ObjectUrl::parse(s).as_ref().err(), Some(e), "{s}");
        }
    }

    #[test]
    fn formatting() {
        assert_eq!(
            format_corbaloc("::1", 2809, b"a b/c"),
            "corbaloc:iiop:[::1]:2809/a%20b/c"
        );
        assert_eq!(
            format_corbaloc("h", 1, &[0xfe, 0x1a]),
            "corbaloc:iiop:h:1/%FE%1A"
        );
    }
}
