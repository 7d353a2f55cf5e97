//! `ObjectKey`: the opaque bytes a server uses to find the target of a request.

use std::fmt;

/// An object key (`IOP::ObjectKey`, a `sequence<octet>`), opaque to everyone but the server
/// that made it.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ObjectKey(pub Vec<u8>);

impl ObjectKey {
    /// A key from bytes.
    pub fn new(bytes: impl Into<Vec<u8>>) -> ObjectKey {
        ObjectKey(bytes.into())
    }

    /// The key's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Lower-case hex, as logged and as in the test vectors.
    pub fn to_hex(&self) -> String {
        to_hex(&self.0)
    }

    /// The key with non-printable bytes shown as `.` (what catior prints "as text").
    pub fn printable(&self) -> String {
        self.0
            .iter()
            .map(|&b| {
                if b.is_ascii_graphic() || b == b' ' {
                    char::from(b)
                } else {
                    '.'
                }
            })
            .collect()
    }

    /// The key as a corbaloc `key_string`: URL-safe bytes as themselves, the rest `%xx`.
    pub fn escaped(&self) -> String {
        escape_key(&self.0)
    }
}

impl fmt::Debug for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ObjectKey({})", self.escaped())
    }
}

/// Displays the corbaloc-escaped form, which is unambiguous and usually readable.
impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.escaped())
    }
}

impl From<Vec<u8>> for ObjectKey {
    fn from(v: Vec<u8>) -> Self {
        ObjectKey(v)
    }
}

impl From<&[u8]> for ObjectKey {
    fn from(v: &[u8]) -> Self {
        ObjectKey(v.to_vec())
    }
}

impl From<&str> for ObjectKey {
    fn from(v: &str) -> Self {
        ObjectKey(v.as_bytes().to_vec())
    }
}

impl AsRef<[u8]> for ObjectKey {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

pub(crate) fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}

/// Whether a byte may appear unescaped in a corbaloc key (RFC 2396 unreserved and reserved
/// characters, less `%` and `#` which would be misread).
pub(crate) fn is_url_safe(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b";/:?@&=+$,-_.!~*'()".contains(&b)
}

pub(crate) fn escape_key(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let mut s = String::with_capacity(bytes.len());
    for &b in bytes {
        if is_url_safe(b) {
            s.push(char::from(b));
        } else {
            s.push('%');
            s.push(char::from(DIGITS[usize::from(b >> 4)]));
            s.push(char::from(DIGITS[usize::from(b & 0xf)]));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_helpers() {
        let k = ObjectKey::new(b"1608442582/\x00\x01M+".to_vec());
        assert_eq!(k.to_hex(), "313630383434323538322f00014d2b");
        assert_eq!(k.printable(), "1608442582/..M+");
        assert_eq!(k.escaped(), "1608442582/%00%01M+");
        assert_eq!(k.to_string(), k.escaped());
        assert_eq!(ObjectKey::from("a b%#").escaped(), "a%20b%25%23");
    }
}
