//! The lock of `refs/rutter/records` (`records.lock`, git's convention): a ref update waits a
//! moment for another git process to let go of it, and names a lock held longer. One lock is
//! told apart and moved aside instead: the one a git-rutter killed in the middle of moving the
//! ref left behind (spec/capture.md, "A lock left by a killed writer").
//!
//! How it is told apart: before every update the writer leaves an intent file,
//! `<state>/ref-update`, and removes it after. Every writer of the ref holds the capture lock
//! (a `flock` the kernel lets go of when its holder dies), so a writer that finds an intent
//! file knows its writer is gone mid-update. The lock is that writer's only when it appeared
//! within the few seconds after the intent file was written; a lock older than the intent, or
//! made long after it, is another process's and is honoured as before.

use super::{Store, StoreError};
use crate::fsx::Dir;
use git2::ErrorCode;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long a ref update waits for another git process to let go of the ref's lock.
const REF_LOCK_WAIT: Duration = Duration::from_millis(1500);
/// The intent file a writer leaves in the state folder while it moves the ref.
const INTENT: &str = "ref-update";
/// Where a lock left by a killed writer is moved, in the state folder (kept as evidence).
pub(crate) const STALE_LOCKS: &str = "stale-locks";
/// How long after its intent file a killed writer can have made the lock: its whole wait for
/// the lock, and more for a slow disk. A lock made later is not its.
const LOCK_AFTER_INTENT: Duration = Duration::from_secs(10);
/// Slack for file times written in the same instant.
const SAME_INSTANT: Duration = Duration::from_millis(10);

/// The intent file of one ref update: written when it starts, removed when it ends.
struct Intent {
    dir: Option<Dir>,
    /// The modification time (ns) of the intent file a killed writer left beside its lock, if
    /// one did.
    left_by_killed: Option<i64>,
}

impl Intent {
    /// Notes a predecessor's intent file; when its lock is still there, the file is kept as it
    /// is (a writer killed while it waited on that lock must not hide it from the next), else
    /// this update's is written. Best effort: a state folder that cannot be written leaves no
    /// intent file, and a stale lock is then only named.
    fn begin(store: &Store) -> Intent {
        let dir = Dir::open_private(store.state_dir()).ok();
        let prior = dir
            .as_ref()
            .and_then(|d| d.stat(INTENT))
            .filter(|&(_, _, regular)| regular)
            .map(|(_, mtime, _)| mtime);
        let locked = std::fs::symlink_metadata(store.ref_lock_path()).is_ok();
        let intent = Intent {
            dir,
            left_by_killed: prior.filter(|_| locked),
        };
        if intent.left_by_killed.is_none() {
            intent.write_own();
        }
        intent
    }

    /// Replaces the intent file with this update's (its pid, for whoever looks).
    fn write_own(&self) {
        if let Some(d) = &self.dir {
            let _ = d.remove(INTENT);
            let _ = d.create_new(INTENT, format!("{}\n", std::process::id()).as_bytes());
        }
    }

    /// Whether a lock made at `lock_mtime` (ns) is the one the killed writer left.
    fn owns(&self, lock_mtime: i64) -> bool {
        let Some(intent) = self.left_by_killed else {
            return false;
        };
        let after = lock_mtime.saturating_sub(intent);
        after >= -(SAME_INSTANT.as_nanos() as i64) && after <= LOCK_AFTER_INTENT.as_nanos() as i64
    }

    fn end(self) {
        if let Some(d) = &self.dir {
            let _ = d.remove(INTENT);
        }
    }
}

impl Store {
    /// Runs a ref update, again while another git process holds the ref's lock (`git gc`
    /// packing refs holds it for a moment), for at most [`REF_LOCK_WAIT`]. A lock held longer
    /// is moved aside when a killed git-rutter left it (then the update runs again), else named
    /// (`RefLocked`: a git process still runs, or one died and left it). The caller holds the
    /// capture lock.
    pub(crate) fn patiently<T>(
        &self,
        mut update: impl FnMut() -> Result<T, git2::Error>,
    ) -> Result<T, StoreError> {
        let mut intent = Intent::begin(self);
        if crate::failpoint::active("ref-update-killed") {
            self.die_holding_the_lock();
        }
        let result = self.retry_while_locked(&mut update, &mut intent);
        intent.end();
        result
    }

    fn retry_while_locked<T>(
        &self,
        update: &mut impl FnMut() -> Result<T, git2::Error>,
        intent: &mut Intent,
    ) -> Result<T, StoreError> {
        let mut deadline = Instant::now() + REF_LOCK_WAIT;
        let mut pause = Duration::from_millis(2);
        let mut moved_aside = false;
        loop {
            match update() {
                Err(e) if e.code() == ErrorCode::Locked => {
                    if Instant::now() >= deadline {
                        if !moved_aside && self.move_aside_if_killed_writers(intent)? {
                            // From here the update is this writer's own.
                            intent.left_by_killed = None;
                            intent.write_own();
                            moved_aside = true;
                            deadline = Instant::now() + REF_LOCK_WAIT;
                            continue;
                        }
                        return Err(match self.ref_lock_path().exists() {
                            true => StoreError::RefLocked(self.ref_lock_path()),
                            false => e.into(),
                        });
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                other => return Ok(other?),
            }
        }
    }

    /// Moves the ref's lock into `<state>/stale-locks/` when the killed writer whose intent
    /// file this update found left it. Returns whether it did.
    fn move_aside_if_killed_writers(&self, intent: &Intent) -> Result<bool, StoreError> {
        let lock = self.ref_lock_path();
        let (Some(parent), Some(name)) = (lock.parent(), lock.file_name()) else {
            return Ok(false);
        };
        let name = name.to_string_lossy();
        let refs = Dir::open(parent)?;
        let Some((_, mtime, true)) = refs.stat(&name) else {
            return Ok(false);
        };
        if !intent.owns(mtime) {
            return Ok(false);
        }
        let state = Dir::open_private(self.state_dir())?;
        let aside = state
            .open_dir(STALE_LOCKS, true)?
            .ok_or_else(|| crate::fsx::FsError::WrongKind(self.state_dir().join(STALE_LOCKS)))?;
        let stamp = crate::clock::now().iso().replace(':', "");
        refs.rename_to(&name, &aside, &format!("{name}.{stamp}.{mtime}"))?;
        Ok(true)
    }

    /// The fail point `ref-update-killed`: the process dies as a kill inside libgit2's update
    /// would leave it, the lock made and the ref not moved.
    fn die_holding_the_lock(&self) -> ! {
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.ref_lock_path());
        std::process::abort()
    }

    pub(crate) fn ref_lock_path(&self) -> PathBuf {
        // Refs live in the common directory, also for a linked worktree.
        self.repo.commondir().join("refs/rutter/records.lock")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intent_at(ns: Option<i64>) -> Intent {
        Intent {
            dir: None,
            left_by_killed: ns,
        }
    }

    #[test]
    fn only_a_lock_made_just_after_a_killed_writers_intent_is_its() {
        let s = 1_000_000_000i64;
        let i = intent_at(Some(100 * s));
        assert!(i.owns(100 * s));
        assert!(i.owns(100 * s + s / 2));
        assert!(i.owns(109 * s));
        assert!(!i.owns(111 * s), "made long after: another process's");
        assert!(!i.owns(99 * s), "older than the intent: another process's");
        assert!(!intent_at(None).owns(100 * s), "no killed writer");
    }
}
