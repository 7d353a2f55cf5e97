//! The etcd back-end: the naming graph under a key prefix of an etcd v3 cluster, shared by
//! every `corbina-names` replica started with the same `--store etcd://…/PREFIX`.
//!
//! Keys under `PREFIX/`: `c/ID` (a context exists; ID is 8 bytes big-endian), `b/KEY` (a
//! binding, KEY as in the redb store: context id, then the name component; the value is the
//! [`Bound`](super::Bound) record), `m/next` (the next context id).
//!
//! **Reads** come from an in-memory copy of the prefix, loaded at start and kept current by
//! an etcd watch: a resolve or list costs no round trip. A [`View`](super::View) holds the copy's read
//! lock, so it sees one revision.
//!
//! **Writes** run optimistically: the closure runs against the copy, recording the
//! `mod_revision` of every key it read (0 for absent keys) and the ranges it scanned; the
//! commit is one etcd transaction that compares them all and applies the puts and deletes
//! only if none changed (a quorum write: it returns once a majority has it on disk). If
//! another writer (this replica or another) changed one, the closure reruns once the copy
//! has caught up. After a commit the call waits until the watch has brought the copy to
//! the commit's revision, so a resolve on this replica after its own bind sees it.
//!
//! **Failures**: calls go to one member at a time, the one that answered last; one that
//! cannot be connected to or has no leader (the clients set `require_leader`) is passed
//! for the next, until the timeout. With no member able to commit, a write fails with
//! [`StoreError::Unavailable`](super::StoreError::Unavailable) (TRANSIENT) within the configured timeout, never hangs;
//! reads go on from the copy, which may then be stale. A watch that breaks is
//! re-established (on the next member) from the copy's revision, or the copy reloaded if
//! etcd compacted past it.
//!
//! **Leases**: an etcd lease per [`Backend::grant`](super::Backend::grant) (its TTL rounded up to seconds); a
//! binding put under it is deleted by etcd when it expires, and the watch removes it from
//! every replica's copy.

//!
//! The store itself ([`EtcdStore`]) needs the `etcd` feature (on by default; it brings
//! etcd's gRPC client, whose build runs `protoc`); [`EtcdConfig`] is always there.

use std::time::Duration;

#[cfg(feature = "etcd")]
mod client;
#[cfg(feature = "etcd")]
pub use client::EtcdStore;
/// The key prefix when the URL names none.
pub const DEFAULT_PREFIX: &str = "corbina-names";
/// How long a call to etcd may take before the operation fails with TRANSIENT.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3);

/// Where the store lives: `etcd://HOST:PORT[,HOST:PORT…][/PREFIX]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdConfig {
    /// The cluster's client URLs (`http://HOST:PORT`).
    pub endpoints: Vec<String>,
    /// The key prefix (without its trailing `/`).
    pub prefix: String,
    /// The longest a call to etcd may take.
    pub timeout: Duration,
}

impl EtcdConfig {
    /// Parses `etcd://HOST:PORT[,HOST:PORT…][/PREFIX]`.
    pub fn parse(url: &str) -> Result<EtcdConfig, String> {
        let usage = || format!("{url}: expected etcd://HOST:PORT[,HOST:PORT…][/PREFIX]");
        let rest = url.strip_prefix("etcd://").ok_or_else(usage)?;
        let (hosts, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let mut endpoints = Vec::new();
        for h in hosts.split(',') {
            let ok = h
                .rsplit_once(':')
                .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
            if !ok {
                return Err(usage());
            }
            endpoints.push(format!("http://{h}"));
        }
        let prefix = prefix.trim_matches('/');
        Ok(EtcdConfig {
            endpoints,
            prefix: if prefix.is_empty() {
                DEFAULT_PREFIX
            } else {
                prefix
            }
            .to_owned(),
            timeout: DEFAULT_TIMEOUT,
        })
    }

    /// `HOST:PORT,HOST:PORT…`, for messages.
    pub fn hosts(&self) -> String {
        let hosts: Vec<&str> = self
            .endpoints
            .iter()
            .map(|e| e.trim_start_matches("http://"))
            .collect();
        hosts.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_and_bad_ones_are_refused() {
        let c = EtcdConfig::parse("etcd://127.0.0.1:2379,h2:2380/team/names/").unwrap();
        assert_eq!(c.endpoints, ["http://127.0.0.1:2379", "http://h2:2380"]);
        assert_eq!(c.prefix, "team/names");
        let d = EtcdConfig::parse("etcd://[::1]:2379").unwrap();
        assert_eq!(d.endpoints, ["http://[::1]:2379"]);
        assert_eq!(d.prefix, DEFAULT_PREFIX);
        for bad in [
            "http://h:1",
            "etcd://",
            "etcd://h",
            "etcd://h:x",
            "etcd://:1",
            "etcd://h:1,",
        ] {
            assert!(EtcdConfig::parse(bad).is_err(), "{bad}");
        }
    }
}
