//! The object key format: how a POA finds its own objects again from the bytes a client
//! sends, in O(1).
//!
//! Every key starts with a 3-byte header, then a POA part, then the object id (all the
//! remaining bytes):
//!
//! ```text
//! offset  size  field
//! 0       2     magic "Cb"
//! 2       1     format: 0x10 = version 1 TRANSIENT, 0x11 = version 1 PERSISTENT
//!
//! TRANSIENT (16 more bytes, then the object id):
//! 3       8     epoch: random per PoaRegistry (so per process), big-endian
//! 11      4     POA slot index in the registry's slab, big-endian
//! 15      4     slot generation (bumped each time the slot is reused), big-endian
//! 19      ..    object id
//!
//! PERSISTENT (the POA's path below the RootPOA, then the object id):
//! 3       ..    for each name from the RootPOA's child down: its UTF-8 bytes, then 0xFF
//!         1     0xFE: end of path
//!         ..    object id
//! ```
//!
//! UTF-8 never contains the bytes 0xFE or 0xFF, so names need no escaping and no length
//! prefix. A transient key is resolved by comparing the epoch and indexing the slab (the
//! generation rejects a destroyed and re-created POA); a persistent key by hashing its path
//! bytes (`key[3..=end]`) in a map. Neither depends on how many POAs or objects exist. A
//! persistent key holds nothing specific to the process, so it stays valid when the server
//! restarts on the same endpoint and re-creates the POA and object.
//!
//! SYSTEM_ID object ids are 8-byte big-endian counters.
//!
//! [`decode`] accepts any bytes: anything malformed is `None` (→ OBJECT_NOT_EXIST), never a
//! panic.

/// The magic at the start of every key.
pub const MAGIC: [u8; 2] = *b"Cb";
/// Format byte of a version-1 TRANSIENT key.
pub const FORMAT_TRANSIENT: u8 = 0x10;
/// Format byte of a version-1 PERSISTENT key.
pub const FORMAT_PERSISTENT: u8 = 0x11;
/// Ends a name in a persistent path.
pub const NAME_END: u8 = 0xFF;
/// Ends a persistent path.
pub const PATH_END: u8 = 0xFE;
/// Bytes before the object id in a transient key.
pub const TRANSIENT_PREFIX_LEN: usize = 19;

/// Where a key's POA is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoaLocator<'k> {
    /// A TRANSIENT POA: slab slot of the registry with this epoch.
    Transient {
        /// The registry's epoch.
        epoch: u64,
        /// Slot index.
        index: u32,
        /// Slot generation.
        generation: u32,
    },
    /// A PERSISTENT POA by its encoded path (names each ended by 0xFF, then 0xFE).
    Persistent {
        /// The encoded path, the lookup key of the registry's persistent map.
        path: &'k [u8],
    },
}

/// A decoded key: the POA part and the object id, borrowed from the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodedKey<'k> {
    /// The POA.
    pub poa: PoaLocator<'k>,
    /// The object id bytes.
    pub object_id: &'k [u8],
}

/// The key prefix of a transient POA (append the object id to get a key).
pub fn transient_prefix(epoch: u64, index: u32, generation: u32) -> Vec<u8> {
    let mut v = Vec::with_capacity(TRANSIENT_PREFIX_LEN + 8);
    v.extend_from_slice(&MAGIC);
    v.push(FORMAT_TRANSIENT);
    v.extend_from_slice(&epoch.to_be_bytes());
    v.extend_from_slice(&index.to_be_bytes());
    v.extend_from_slice(&generation.to_be_bytes());
    v
}

/// The encoded path of a persistent POA (the map key), from its names below the RootPOA.
pub fn encode_path<S: AsRef<str>>(names: &[S]) -> Vec<u8> {
    let mut v = Vec::new();
    for n in names {
        v.extend_from_slice(n.as_ref().as_bytes());
        v.push(NAME_END);
    }
    v.push(PATH_END);
    v
}

/// The key prefix of a persistent POA whose encoded path is `path`.
pub fn persistent_prefix(path: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(3 + path.len() + 8);
    v.extend_from_slice(&MAGIC);
    v.push(FORMAT_PERSISTENT);
    v.extend_from_slice(path);
    v
}

/// Decodes a key received from anywhere; `None` if it is not one of ours.
pub fn decode(key: &[u8]) -> Option<DecodedKey<'_>> {
    let (magic, rest) = key.split_at_checked(2)?;
    if magic != MAGIC {
        return None;
    }
    let (&format, rest) = rest.split_first()?;
    match format {
        FORMAT_TRANSIENT => {
            let (epoch, rest) = rest.split_first_chunk::<8>()?;
            let (index, rest) = rest.split_first_chunk::<4>()?;
            let (generation, object_id) = rest.split_first_chunk::<4>()?;
            Some(DecodedKey {
                poa: PoaLocator::Transient {
                    epoch: u64::from_be_bytes(*epoch),
                    index: u32::from_be_bytes(*index),
                    generation: u32::from_be_bytes(*generation),
                },
                object_id,
            })
        }
        FORMAT_PERSISTENT => {
            let end = rest.iter().position(|&b| b == PATH_END)?;
            let (path, object_id) = rest.split_at_checked(end + 1)?;
            // The path must be names each ended by 0xFF: a non-empty path ends with 0xFF.
            if path.len() > 1 && path.get(path.len() - 2) != Some(&NAME_END) {
                return None;
            }
            Some(DecodedKey {
                poa: PoaLocator::Persistent { path },
                object_id,
            })
        }
        _ => None,
    }
}

/// Splits an encoded path into its names; `None` if a name is not UTF-8.
pub fn path_names(path: &[u8]) -> Option<Vec<&str>> {
    let body = path.strip_suffix(&[PATH_END])?;
    if body.is_empty() {
        return Some(Vec::new());
    }
    let body = body.strip_suffix(&[NAME_END])?;
    body.split(|&b| b == NAME_END)
        .map(|n| std::str::from_utf8(n).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transient_round_trip_and_layout() {
        let mut k = transient_prefix(0x0102_0304_0506_0708, 7, 9);
        assert_eq!(k.len(), TRANSIENT_PREFIX_LEN);
        k.extend_from_slice(b"oid");
        assert_eq!(
            k,
            b"Cb\x10\x01\x02\x03\x04\x05\x06\x07\x08\0\0\0\x07\0\0\0\x09oid".to_vec()
        );
        let d = decode(&k).unwrap();
        assert_eq!(
            d.poa,
            PoaLocator::Transient {
                epoch: 0x0102_0304_0506_0708,
                index: 7,
                generation: 9
            }
        );
        assert_eq!(d.object_id, b"oid");
    }

    #[test]
    fn persistent_round_trip_and_layout() {
        let path = encode_path(&["P", "Q"]);
        let mut k = persistent_prefix(&path);
        k.extend_from_slice(b"x");
        assert_eq!(k, b"Cb\x11P\xffQ\xff\xfex".to_vec());
        let d = decode(&k).unwrap();
        assert_eq!(d.poa, PoaLocator::Persistent { path: &path });
        assert_eq!(d.object_id, b"x");
        assert_eq!(path_names(&path).unwrap(), vec!["P", "Q"]);
        // An object id may itself contain 0xFE: only the first one ends the path.
        let mut k2 = persistent_prefix(&path);
        k2.extend_from_slice(&[0xFE, 0xFF]);
        assert_eq!(decode(&k2).unwrap().object_id, &[0xFE, 0xFF]);
        // Empty names are allowed.
        let e = encode_path(&[""]);
        assert_eq!(path_names(&e).unwrap(), vec![""]);
    }

    #[test]
    fn garbage_never_panics() {
        assert!(decode(b"").is_none());
        assert!(decode(b"C").is_none());
        assert!(decode(b"Cb").is_none());
        assert!(decode(b"Cb\x12").is_none());
        assert!(decode(b"Cb\x10\x01\x02").is_none());
        assert!(decode(b"Cb\x11abc").is_none());
        assert!(decode(b"Cb\x11a\xfe").is_none());
        assert!(decode(b"XX\x10aaaaaaaaaaaaaaaaaaaaaa").is_none());
        assert!(path_names(b"\xc3\xff\xfe").is_none());
        // Every prefix of a valid key, and a pseudo-random sweep, is handled without panic.
        let mut k = transient_prefix(1, 2, 3);
        k.extend_from_slice(b"abc");
        for n in 0..k.len() {
            let _ = decode(&k[..n]);
        }
        let mut x: u32 = 12345;
        for len in 0..64 {
            let bytes: Vec<u8> = (0..len)
                .map(|i| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    if i < 2 {
                        MAGIC[i]
                    } else {
                        (x >> 16) as u8
                    }
                })
                .collect();
            if let Some(d) = decode(&bytes) {
                if let PoaLocator::Persistent { path } = d.poa {
                    let _ = path_names(path);
                }
            }
        }
    }
}
