//! One sync at a time in a vault, and what `status` can tell of the one that runs.
//!
//! A sync holds `<state>/sync.lock` from its first fetch to its end, so two syncs of one vault
//! (a detached one a capture started, one run by hand) take turns instead of racing for the
//! remote-tracking ref and the record ref: the second waits ([`WAIT`]). While it holds it, it
//! keeps `<state>/sync-running` (`<pid> <start>`), which it removes when it ends; `status`
//! reads it to name a sync that has run far longer than any should, or one that was stopped.

use crate::clock::{self, Instant};
use crate::fsx::Dir;
use crate::lock::{Lock, LockError};
use std::path::Path;
use std::time::Duration;

const LOCK: &str = "sync.lock";
const NOTE: &str = "sync-running";
/// How long a sync waits for another sync of the vault to end: every network phase of that one
/// is bounded (`rutter.syncTimeout`), and a sync that waits past this says so.
pub(crate) const WAIT: Duration = Duration::from_secs(60);

/// A sync's hold on the vault; released, and its note removed, on drop.
#[derive(Debug)]
pub(crate) struct Running {
    _lock: Lock,
    dir: Dir,
}

/// Takes the vault's sync lock, waiting at most `wait`, and notes who holds it since `now`.
pub(crate) fn start(state_dir: &Path, now: Instant, wait: Duration) -> Result<Running, LockError> {
    let dir = Dir::open_private(state_dir).map_err(|source| LockError::Fs {
        what: "sync lock",
        source,
    })?;
    let lock = Lock::named(&dir, LOCK, "sync lock", wait)?;
    // Best effort: without the note `status` only knows less.
    let _ = dir.write_atomic(
        NOTE,
        format!("{} {}\n", std::process::id(), now.iso()).as_bytes(),
    );
    Ok(Running { _lock: lock, dir })
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.dir.remove(NOTE);
    }
}

/// How long a sync may run before `status` names it (`sync-stuck`): twice the bound of one git
/// process, at least ten minutes; an hour when git processes are not bounded. No sync that
/// works runs that long: its rounds each make one fetch and one push, seconds on any line.
pub(crate) fn stuck_after(bound: Option<Duration>) -> Duration {
    match bound {
        Some(b) => (b * 2).max(Duration::from_secs(600)),
        None => Duration::from_secs(3600),
    }
}

/// The sync a vault's note names.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Held {
    pub pid: u32,
    #[serde(serialize_with = "iso")]
    pub since: Instant,
    /// Whether that process still runs (`false`: it was stopped before it ended, a kill).
    pub alive: bool,
}

fn iso<S: serde::Serializer>(i: &Instant, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&i.iso())
}

/// What the note in `state_dir` says (`None`: no sync runs, or the note is not one of ours).
pub fn held(state_dir: &Path) -> Option<Held> {
    let bytes = Dir::open(state_dir).ok()?.read_at_most(NOTE, 128).ok()??;
    let text = String::from_utf8(bytes).ok()?;
    let (pid, since) = text.trim().split_once(' ')?;
    let pid: u32 = pid.parse().ok()?;
    let since = clock::parse_instant(since)?;
    let alive = rustix::process::Pid::from_raw(pid as i32)
        .is_some_and(|p| rustix::process::test_kill_process(p).is_ok());
    Some(Held { pid, since, alive })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_sync_is_noted_and_the_note_goes_with_it() {
        let t = tempfile::tempdir().unwrap();
        let now = clock::parse_instant("2026-12-04T10:00:00.000Z").unwrap();
        let running = start(t.path(), now, Duration::ZERO).unwrap();
        let h = held(t.path()).unwrap();
        assert_eq!((h.pid, h.since, h.alive), (std::process::id(), now, true));
        assert!(
            start(t.path(), now, Duration::ZERO).is_err(),
            "a second sync waits"
        );
        drop(running);
        assert_eq!(held(t.path()), None);
        assert!(start(t.path(), now, Duration::ZERO).is_ok());
    }

    #[test]
    fn a_sync_is_stuck_after_twice_its_bound_and_never_before_ten_minutes() {
        let m = |n: u64| Duration::from_secs(60 * n);
        assert_eq!(stuck_after(Some(m(5))), m(10));
        assert_eq!(stuck_after(Some(m(1))), m(10));
        assert_eq!(stuck_after(Some(m(30))), m(60));
        assert_eq!(stuck_after(None), m(60));
    }

    #[test]
    fn a_note_left_by_a_stopped_sync_says_so() {
        let t = tempfile::tempdir().unwrap();
        // No process has pid 0x7ffffffe on a machine that runs these tests.
        std::fs::write(t.path().join(NOTE), "2147483646 2026-12-04T10:00:00.000Z\n").unwrap();
        assert!(!held(t.path()).unwrap().alive);
        std::fs::write(t.path().join(NOTE), "junk\n").unwrap();
        assert_eq!(held(t.path()), None);
    }
}
