//! How fresh this machine's record is, in one line for people and sessions: whether a sync
//! remote is set up, when the last sync ran (`<state>/sync-last`, spec/sync.md) and, when a sync
//! that started itself logged its end in the hook-run log, whether it failed and why. What
//! `git rutter context` and `librarian-recent` say of it; it reads two small files, never the
//! network.

use crate::capture::runlog::{self, Kind};
use crate::clock::{self, Instant};
use crate::store::Store;
use crate::vault::Vault;

/// A sync that started less long ago than this, with no logged end, is said to be running.
const RUNNING_MS: i64 = 10 * 60 * 1000;

/// The last sync as the state folder knows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LastSync {
    /// When the last sync started (or a sync run by hand ended).
    pub started: Option<Instant>,
    /// The newest logged end of a sync that started itself: when, and the failure if it failed.
    pub ended: Option<(Instant, Option<String>)>,
}

/// The sync remote `rutter.syncRemote` names, if one is set up.
pub(crate) fn remote(store: &Store) -> Option<String> {
    store
        .config_string(crate::sync::SYNC_REMOTE_KEY)
        .filter(|r| !r.is_empty())
}

/// What the state folder of `store` says of the last sync.
pub(crate) fn last(store: &Store) -> LastSync {
    let dir = store.state_dir();
    let ended = runlog::read(dir).into_iter().rev().find_map(|r| {
        let at = clock::parse_instant(&r.time)?;
        match r.outcome {
            Kind::Synced => Some((at, None)),
            Kind::SyncFailed => Some((at, Some(r.reason))),
            _ => None,
        }
    });
    LastSync {
        started: crate::sync::auto::last_start(dir),
        ended,
    }
}

/// The line for the vault `store` is open on, now (`sync is not set up` without a store).
pub(crate) fn line(store: Option<&Store>, now: Instant) -> String {
    match store {
        Some(store) => describe(remote(store).as_deref(), &last(store), now),
        None => describe(None, &LastSync::default(), now),
    }
}

/// The line for `vault` when a sync remote is set up (`librarian-recent` adds it then only, so
/// an answer without sync reads as the reference's).
pub(crate) fn line_if_set_up(vault: &Vault, now: Instant) -> Option<String> {
    let store = Store::open(vault).ok()?;
    let remote = remote(&store)?;
    Some(describe(Some(&remote), &last(&store), now))
}

/// The words: `last synced with origin 3 h ago`, `the last sync with origin failed 20 min ago:
/// REASON`, `a sync with origin started just now`, `not synced with origin yet`, or `sync is
/// not set up (this machine's record only)`.
pub(crate) fn describe(remote: Option<&str>, last: &LastSync, now: Instant) -> String {
    let Some(remote) = remote.map(crate::records::text::one_line_safe) else {
        return "sync is not set up (this machine's record only)".into();
    };
    let ago = |t: Instant| clock::ago(now.0 - t.0).unwrap_or_else(|| "just now".into());
    let ended = last
        .ended
        .as_ref()
        .filter(|(at, _)| last.started.is_none_or(|s| *at >= s));
    match (last.started, ended) {
        (_, Some((at, Some(why)))) => format!(
            "the last sync with {remote} failed {}: {}",
            ago(*at),
            crate::records::text::one_line_safe(why)
        ),
        (_, Some((at, None))) => format!("last synced with {remote} {}", ago(*at)),
        (Some(s), None) if (0..RUNNING_MS).contains(&(now.0 - s.0)) && last.ended.is_some() => {
            format!("a sync with {remote} started {}", ago(s))
        }
        (Some(s), None) => format!("last synced with {remote} {}", ago(s)),
        (None, None) => format!("not synced with {remote} yet"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3_600_000;

    #[test]
    fn the_line_says_when_and_whether_the_last_sync_failed() {
        let now = Instant(100 * H);
        let none = LastSync::default();
        assert_eq!(
            describe(None, &none, now),
            "sync is not set up (this machine's record only)"
        );
        assert_eq!(
            describe(Some("origin"), &none, now),
            "not synced with origin yet"
        );
        let by_hand = LastSync {
            started: Some(Instant(97 * H)),
            ended: None,
        };
        assert_eq!(
            describe(Some("origin"), &by_hand, now),
            "last synced with origin 3 h ago"
        );
        let failed = LastSync {
            started: Some(Instant(99 * H)),
            ended: Some((
                Instant(99 * H + 1000),
                Some("could not reach\nthe remote".into()),
            )),
        };
        assert_eq!(
            describe(Some("origin"), &failed, now),
            "the last sync with origin failed 59 min ago: could not reach\\u{000A}the remote"
        );
        // An end logged before the newest start belongs to an older sync.
        let running = LastSync {
            started: Some(Instant(100 * H - 60_000)),
            ended: Some((Instant(90 * H), None)),
        };
        assert_eq!(
            describe(Some("origin"), &running, now),
            "a sync with origin started just now"
        );
    }
}
