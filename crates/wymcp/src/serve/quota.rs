//! Sessions per client: how many live sessions each principal (or, without auth, each client
//! address) holds on this node, so that one client cannot take every session slot; and the
//! same count for what a client holds open (connections, GET and listen streams:
//! [`ClientCounts`]).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::Identity;
use crate::context::network;

/// Whom a session is counted against: its principal, else its client's address ([`network`]).
/// A loopback address counts against no one: behind a reverse proxy on the same host every
/// client shares it, so counting it would let one client's sessions shut out every other
/// client.
pub(crate) fn client_key(identity: Option<&Identity>, client: Option<IpAddr>) -> Option<String> {
    let address = client.map(|address| address.to_canonical());
    match (identity, address) {
        (Some(identity), _) => Some(format!("principal:{}", identity.principal())),
        (None, Some(address)) if !address.is_loopback() => {
            Some(format!("address:{}", network(address)))
        }
        (None, _) => None,
    }
}

/// Whom an open connection or stream is counted against: its principal, else its client's
/// address; `None` when neither is known (stdio, or a service mounted without the peer's
/// address). Unlike [`client_key`], a loopback address counts: what it holds open takes
/// places of the server's own caps (connections, streams), and a reverse proxy in front is
/// declared as such (`trusted_proxies`), so that the forwarded address is counted instead.
///
/// An address counts as its [`network`](crate::context::network), so that a client does not escape its cap by
/// changing the low bits of its address.
pub(crate) fn counted_client(
    identity: Option<&Identity>,
    client: Option<IpAddr>,
) -> Option<String> {
    if let Some(identity) = identity {
        return Some(format!("principal:{}", identity.principal()));
    }
    Some(format!("address:{}", network(client?)))
}

/// How many things (connections, streams) each client holds open; a place is taken by
/// [`acquire`](Self::acquire) and given back when its [`ClientSlot`] is dropped. A client that
/// holds nothing has no entry.
#[derive(Debug, Default, Clone)]
pub(crate) struct ClientCounts(Arc<Mutex<HashMap<String, usize>>>);

impl ClientCounts {
    /// A place for `client`, unless it holds `max` already.
    pub(crate) fn acquire(&self, client: String, max: usize) -> Option<ClientSlot> {
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let count = held.entry(client.clone()).or_default();
        if *count >= max {
            if *count == 0 {
                held.remove(&client);
            }
            return None;
        }
        *count += 1;
        drop(held);
        Some(ClientSlot {
            counts: self.0.clone(),
            client,
        })
    }

    /// What `client` holds now.
    #[cfg(test)]
    pub(crate) fn held(&self, client: &str) -> usize {
        let held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        held.get(client).copied().unwrap_or(0)
    }
}

/// One place a client holds under its cap, given back when dropped.
#[derive(Debug)]
pub(crate) struct ClientSlot {
    counts: Arc<Mutex<HashMap<String, usize>>>,
    client: String,
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut held = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = held.get_mut(&self.client) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                held.remove(&self.client);
            }
        }
    }
}

/// The live sessions of each client on this node.
#[derive(Debug, Default)]
pub(crate) struct ClientQuota {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    held: HashMap<String, usize>,
    /// Session id → the client it is counted against.
    owner: HashMap<String, String>,
}

impl ClientQuota {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Each update changes both maps under the lock: a poisoned state is still consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts `session` against `client`, unless the client holds `max` sessions already.
    pub(crate) fn reserve(&self, client: &str, session: &str, max: usize) -> bool {
        let mut state = self.lock();
        let held = state.held.entry(client.to_owned()).or_default();
        if *held >= max {
            return false;
        }
        *held += 1;
        state.owner.insert(session.to_owned(), client.to_owned());
        true
    }

    /// The session ended (or was never created): its client's count goes down.
    pub(crate) fn release(&self, session: &str) {
        let mut state = self.lock();
        let Some(client) = state.owner.remove(session) else {
            return;
        };
        if let Some(held) = state.held.get_mut(&client) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                state.held.remove(&client);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sessions_count_against_the_principal_else_a_non_loopback_address() {
        let alice = Identity::new("alice");
        let remote = IpAddr::from([203, 0, 113, 7]);
        let local = IpAddr::from([127, 0, 0, 1]);
        assert_eq!(
            client_key(Some(&alice), Some(remote)).as_deref(),
            Some("principal:alice")
        );
        assert_eq!(
            client_key(None, Some(remote)).as_deref(),
            Some("address:203.0.113.7")
        );
        assert_eq!(client_key(None, Some(local)), None);
        assert_eq!(client_key(None, None), None);
    }

    #[test]
    fn an_address_counts_as_its_network_whatever_its_form() {
        let key = |address: &str| client_key(None, Some(address.parse().expect("an address")));
        // One IPv6 /64 is one client (issue 48, N17: seven addresses of it held seven quotas).
        let network = Some("address:2001:db8:1:2::/64".to_owned());
        assert_eq!(key("2001:db8:1:2::7"), network);
        assert_eq!(key("2001:db8:1:2:ffff:ffff:ffff:ffff"), network);
        assert_eq!(
            key("2001:db8:1:3::7").as_deref(),
            Some("address:2001:db8:1:3::/64")
        );
        // An IPv4-mapped address is its IPv4 address; a mapped loopback is still loopback.
        assert_eq!(
            key("::ffff:203.0.113.7").as_deref(),
            Some("address:203.0.113.7")
        );
        assert_eq!(key("::ffff:127.0.0.1"), None);
        assert_eq!(key("::1"), None);
    }

    #[test]
    fn open_things_count_against_the_principal_else_the_address_loopback_included() {
        let alice = Identity::new("alice");
        let local = IpAddr::from([127, 0, 0, 1]);
        assert_eq!(
            counted_client(Some(&alice), Some(local)).as_deref(),
            Some("principal:alice")
        );
        assert_eq!(
            counted_client(None, Some(local)).as_deref(),
            Some("address:127.0.0.1")
        );
        let mapped: IpAddr = "::ffff:203.0.113.7".parse().unwrap();
        assert_eq!(
            counted_client(None, Some(mapped)).as_deref(),
            Some("address:203.0.113.7")
        );
        let v6 = |s: &str| counted_client(None, Some(s.parse().unwrap()));
        assert_eq!(
            v6("2001:db8:1:2:aaaa::1").as_deref(),
            Some("address:2001:db8:1:2::/64")
        );
        assert_eq!(v6("2001:db8:1:2:aaaa::1"), v6("2001:db8:1:2:bbbb::9"));
        assert_ne!(v6("2001:db8:1:2::1"), v6("2001:db8:1:3::1"));
        assert_eq!(counted_client(None, None), None);
    }

    #[test]
    fn a_client_holds_at_most_max_places_and_a_dropped_slot_gives_one_back() {
        let counts = ClientCounts::default();
        let first = counts.acquire("a".into(), 2).unwrap();
        let _second = counts.acquire("a".into(), 2).unwrap();
        assert!(counts.acquire("a".into(), 2).is_none());
        let _other = counts.acquire("b".into(), 2).unwrap();
        drop(first);
        assert_eq!(counts.held("a"), 1);
        let _third = counts.acquire("a".into(), 2).unwrap();
        assert!(counts.acquire("c".into(), 0).is_none());
        assert_eq!(
            counts.0.lock().unwrap().get("c"),
            None,
            "no entry for nothing held"
        );
    }

    #[test]
    fn a_client_holds_at_most_max_sessions_and_a_release_frees_a_place() {
        let quota = ClientQuota::default();
        assert!(quota.reserve("a", "s1", 2));
        assert!(quota.reserve("a", "s2", 2));
        assert!(!quota.reserve("a", "s3", 2));
        assert!(quota.reserve("b", "s4", 2));
        quota.release("s1");
        assert!(quota.reserve("a", "s3", 2));
        quota.release("unknown");
        assert_eq!(quota.lock().held["a"], 2);
    }
}
