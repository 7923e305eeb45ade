//! Sync that runs itself (`git config rutter.autoSync 15m`, spec/sync.md "Automatic sync"):
//! after a capture run, at a session start (the brief's hook) and while the MCP server runs,
//! when a sync remote is set up and the last sync started longer ago than the interval, a
//! detached `git-rutter sync --auto` starts. Nothing waits for it.
//!
//! The detached run is its own process group with its standard streams closed, so a Ctrl-C
//! to the client and the hook's end do not stop it; at most one runs per vault (a `flock` on
//! `<state>/autosync.lock`, taken without waiting: a second start exits at once); its outcome
//! goes to the hook-run log, where `git rutter status` shows it. "The last sync" is the last one
//! started (`<state>/sync-last`): a capture notes it before it starts one, whatever then comes
//! of it, so a remote that fails is tried again only once the interval has passed; a sync run by
//! hand notes it when it ran to its end (a refused one changes nothing in the vault).

use crate::clock::{self, Instant};
use crate::fsx::Dir;
use crate::lock::Lock;
use crate::store::Store;
use crate::vault::Vault;
use std::path::Path;
use std::time::Duration;

/// Git config key: how often captures start a sync (`15m`, `1h`; `off` or unset: never).
pub(crate) const AUTO_SYNC_KEY: &str = "rutter.autoSync";
/// When the last sync started, in the state folder (one instant, `YYYY-MM-DDTHH:MM:SS.mmmZ`).
const STAMP: &str = "sync-last";
/// The lock the detached run holds, in the state folder.
const LOCK: &str = "autosync.lock";
/// The flag the detached run is started with (hidden from `sync --help`).
pub(crate) const FLAG: &str = "--auto";

pub(crate) use crate::clock::parse_interval;
use crate::clock::IntervalError;

/// The interval `rutter.autoSync` sets in the vault `store` keeps, when it is on and a sync
/// remote is set up; `Err` when the value is not an interval.
pub(crate) fn configured(store: &Store) -> Result<Option<Duration>, IntervalError> {
    let Some(raw) = store.config_string(AUTO_SYNC_KEY) else {
        return Ok(None);
    };
    let interval = parse_interval(&raw)?;
    let remote = store.config_string(super::SYNC_REMOTE_KEY);
    Ok(interval.filter(|_| remote.is_some_and(|r| !r.is_empty())))
}

/// When the last sync started (`None`: never, or the note cannot be read).
pub(crate) fn last_start(state_dir: &Path) -> Option<Instant> {
    let bytes = Dir::open(state_dir).ok()?.read(STAMP).ok()??;
    clock::parse_instant(String::from_utf8_lossy(&bytes).trim())
}

/// Notes that a sync starts now (best effort: a note that cannot be written only makes the next
/// capture start another sync).
pub(crate) fn note_start(state_dir: &Path, now: Instant) {
    if let Ok(dir) = Dir::open_private(state_dir) {
        let _ = dir.write_atomic(STAMP, format!("{}\n", now.iso()).as_bytes());
    }
}

/// Whether a sync is due: none started yet, or the last one started `interval` or more ago (a
/// start in the future, a clock set back, counts as long ago).
pub(crate) fn due(last: Option<Instant>, interval: Duration, now: Instant) -> bool {
    let Some(last) = last else { return true };
    let elapsed_ms = now.0.saturating_sub(last.0);
    elapsed_ms < 0 || elapsed_ms as u128 >= interval.as_millis()
}

/// After a capture run (the Stop hook's, or `librarian-record`'s), at a session start (the
/// brief's hook) and while the MCP server runs, in `vault`: starts a detached
/// sync when one is due. Returns the started process's id. Never waits, never fails the caller,
/// says nothing.
pub(crate) fn after_capture(
    vault: Option<&Vault>,
    opened: Option<&Store>,
    now: Instant,
) -> Option<u32> {
    let vault = vault.filter(|v| v.git_dir.is_some())?;
    let own;
    let store = match opened {
        Some(s) => s,
        None => {
            own = Store::open(vault).ok()?;
            &own
        }
    };
    let interval = configured(store).ok()??;
    if !due(last_start(store.state_dir()), interval, now) {
        return None;
    }
    // Noted before the start, so captures that finish meanwhile do not start another.
    note_start(store.state_dir(), now);
    spawn(store.root())
}

/// While a long-lived process (the MCP server) runs in `vault`: a thread that starts a detached
/// sync at once when one is due, then whenever `rutter.autoSync`'s interval has passed since
/// the last start (spec/sync.md). It never holds a lock or waits on the network itself, so no
/// call waits for it; the setting is read again at each look, so turning it on or off needs no
/// restart. The thread ends with the process.
pub(crate) fn while_serving(vault: Vault) {
    let _ = std::thread::Builder::new()
        .name("rutter-autosync".into())
        .spawn(move || loop {
            // One open of the repository a look, for both questions.
            let store = Store::open(&vault).ok();
            after_capture(Some(&vault), store.as_ref(), clock::now());
            let interval = store.and_then(|s| configured(&s).ok().flatten());
            let look = interval.map_or(MAX_LOOK, |i| i.clamp(MIN_LOOK, MAX_LOOK));
            std::thread::sleep(look);
        });
}

/// How often a long-lived process looks whether a sync is due, at least and at most.
const MIN_LOOK: Duration = Duration::from_secs(1);
const MAX_LOOK: Duration = Duration::from_secs(60);

/// Starts `git-rutter --vault ROOT sync --auto` detached; a thread reaps it, so a long-lived
/// process (the MCP server) keeps no zombie.
fn spawn(root: &Path) -> Option<u32> {
    let mut child = crate::detached::start(root, &["--no-pager", "sync", FLAG])?;
    let pid = child.id();
    let _ = std::thread::Builder::new()
        .name("rutter-autosync-reaper".into())
        .spawn(move || child.wait());
    Some(pid)
}

/// The lock one detached sync holds while it runs; `None` when another holds it.
pub(crate) fn exclusive(state_dir: &Path) -> Option<Lock> {
    let dir = Dir::open_private(state_dir).ok()?;
    Lock::named(&dir, LOCK, "sync lock", Duration::ZERO).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sync_is_due_once_the_interval_has_passed_since_the_last_start() {
        let at = |ms| Instant(ms);
        let i = Duration::from_secs(60);
        assert!(due(None, i, at(0)));
        assert!(!due(Some(at(1_000)), i, at(60_999)));
        assert!(due(Some(at(1_000)), i, at(61_000)));
        // A note from the future (a clock set back) does not silence sync for ever.
        assert!(due(Some(at(90_000)), i, at(1_000)));
    }

    #[test]
    fn the_start_note_round_trips_and_a_missing_one_is_none() {
        let t = tempfile::tempdir().unwrap();
        let state = t.path().join("state");
        assert_eq!(last_start(&state), None);
        let now = clock::parse_instant("2026-12-03T10:00:00.000Z").unwrap();
        note_start(&state, now);
        assert_eq!(last_start(&state), Some(now));
    }

    #[test]
    fn only_one_detached_sync_holds_the_lock() {
        let t = tempfile::tempdir().unwrap();
        let first = exclusive(t.path());
        assert!(first.is_some());
        assert!(exclusive(t.path()).is_none());
        drop(first);
        assert!(exclusive(t.path()).is_some());
    }
}
