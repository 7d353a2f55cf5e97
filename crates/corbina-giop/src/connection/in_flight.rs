//! The requests a connection awaits replies for, found by request id in O(1).
//!
//! A synchronous caller has one request in flight per connection and an asynchronous one
//! may have thousands: the set is a vector of at most [`SMALL`] searched from the end (the
//! fastest there is for one or a few), which spills into a hash map keyed by the id when
//! full. A lookup scans the vector, then hashes.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::header::Version;

/// Entries kept in the vector before spilling into the map.
const SMALL: usize = 8;

#[derive(Debug, Clone, Copy)]
pub(super) struct InFlight {
    pub request_id: u32,
    pub version: Version,
    pub cancelled: bool,
}

/// Request ids are unique and allocated in sequence by this end: a multiplicative hash
/// spreads them well enough, at a fraction of SipHash's cost (the ids are ours, not the
/// peer's, so there is nothing to flood).
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[derive(Debug, Default)]
pub(super) struct InFlightSet {
    /// At most [`SMALL`], the newest last.
    small: Vec<InFlight>,
    /// The rest, once more than [`SMALL`] were in flight at once.
    large: HashMap<u32, InFlight, BuildHasherDefault<IdHasher>>,
}

impl InFlightSet {
    #[inline]
    pub fn insert(&mut self, f: InFlight) {
        if self.small.len() < SMALL {
            self.small.push(f);
        } else {
            self.insert_large(f);
        }
    }

    /// Out of line: the synchronous path never comes here.
    #[cold]
    #[inline(never)]
    fn insert_large(&mut self, f: InFlight) {
        self.large
            .extend(self.small.drain(..).map(|s| (s.request_id, s)));
        self.large.insert(f.request_id, f);
    }

    #[inline]
    pub fn remove(&mut self, request_id: u32) -> Option<InFlight> {
        // From the end: the newest request is the likeliest to be answered first.
        if let Some(i) = self.small.iter().rposition(|f| f.request_id == request_id) {
            return Some(self.small.swap_remove(i));
        }
        self.remove_large(request_id)
    }

    #[cold]
    #[inline(never)]
    fn remove_large(&mut self, request_id: u32) -> Option<InFlight> {
        self.large.remove(&request_id)
    }

    #[inline]
    pub fn get_mut(&mut self, request_id: u32) -> Option<&mut InFlight> {
        match self.small.iter().rposition(|f| f.request_id == request_id) {
            Some(i) => Some(&mut self.small[i]),
            None => self.large.get_mut(&request_id),
        }
    }

    /// Every entry, in no particular order.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = &InFlight> + '_ {
        self.small.iter().chain(self.large.values())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(request_id: u32) -> InFlight {
        InFlight {
            request_id,
            version: Version::V1_2,
            cancelled: false,
        }
    }

    #[test]
    fn finds_entries_before_and_after_spilling_into_the_map() {
        let mut s = InFlightSet::default();
        for n in [1usize, SMALL, SMALL + 1, 1000] {
            for k in 0..n as u32 {
                s.insert(f(2 * k));
            }
            assert_eq!(s.iter().count(), n);
            assert!(s.get_mut(1).is_none() && s.remove(1).is_none());
            s.get_mut(0).unwrap().cancelled = true;
            // Answered in reverse order, until the set is empty.
            for k in (0..n as u32).rev() {
                let got = s.remove(2 * k).unwrap();
                assert_eq!((got.request_id, got.cancelled), (2 * k, k == 0));
                assert!(s.remove(2 * k).is_none());
            }
            assert_eq!(s.iter().count(), 0);
            assert!(s.large.is_empty() && s.small.is_empty());
        }
    }
}
