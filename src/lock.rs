//! The capture lock: an exclusive `flock` on `<state>/lock`, polled until a bounded deadline.
//!
//! Every writer of records holds it while it appends, journals and commits, so dedupe, id
//! uniqueness and the ref update see a consistent vault: it is taken only by a
//! `recorder::Recorder` session (or a reader's snapshot there), never directly
//! (`tests/architecture.rs`). The kernel drops the lock when its holder dies, so a crashed
//! process never leaves it stale.

use crate::fsx::{Dir, FsError};
use rustix::fs::{flock, FlockOperation};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a capture waits for the lock before it falls back to the pending journal.
pub(crate) const DEFAULT_WAIT: Duration = Duration::from_secs(2);
/// How long a command run by hand (`init`, `commit`, `restore`, `verify --ack`, reindex and
/// `identity confirm`) waits for it.
pub(crate) const INTERACTIVE_WAIT: Duration = Duration::from_secs(10);

/// Environment variable that replaces every lock wait, in milliseconds, in debug builds only
/// (stress tests on a loaded machine, lock-busy tests); release builds ignore it.
pub(crate) const WAIT_ENV: &str = "RUTTER_LOCK_WAIT_MS";

/// `wait`, or `RUTTER_LOCK_WAIT_MS` in a debug build.
fn effective(wait: Duration) -> Duration {
    let pinned = cfg!(debug_assertions)
        .then(|| std::env::var(WAIT_ENV).ok()?.parse().ok())
        .flatten();
    pinned.map_or(wait, Duration::from_millis)
}

/// A held lock; released on drop.
#[derive(Debug)]
pub struct Lock {
    _fd: OwnedFd,
}

/// Why the lock was not taken; `what` names the lock ("capture lock", "sync lock", …).
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("timed out after {wait:?} waiting for the {what} {path}")]
    Timeout {
        wait: Duration,
        what: &'static str,
        path: PathBuf,
    },
    #[error("cannot open the {what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot open the {what}: {source}")]
    Fs {
        what: &'static str,
        #[source]
        source: FsError,
    },
}

/// The capture lock's name in messages.
const CAPTURE_LOCK: &str = "capture lock";

impl Lock {
    /// Takes the exclusive lock `<state_dir>/lock`, creating the directory if needed, waiting at
    /// most `wait`. The folder and the file are opened without following a symlink, and the
    /// file is opened read-only (`flock` needs no more), so the lock never writes anywhere.
    pub fn acquire(state_dir: &Path, wait: Duration) -> Result<Lock, LockError> {
        let wait = effective(wait);
        let path = state_dir.join("lock");
        let io = |source| LockError::Io {
            what: CAPTURE_LOCK,
            path: path.clone(),
            source,
        };
        crate::failpoint::check("lock").map_err(io)?;
        let file = Dir::open_private(state_dir)
            .and_then(|d| d.open_lock("lock"))
            .map_err(fs(CAPTURE_LOCK))?;
        poll(OwnedFd::from(file), wait, CAPTURE_LOCK, path)
    }

    /// Takes the exclusive lock file `name` in `dir` (another lock than the capture lock, `what`
    /// in messages: the detached sync's, the index build's), waiting at most `wait`;
    /// `Duration::ZERO` tries once.
    pub(crate) fn named(
        dir: &Dir,
        name: &str,
        what: &'static str,
        wait: Duration,
    ) -> Result<Lock, LockError> {
        let file = dir.open_lock(name).map_err(fs(what))?;
        poll(OwnedFd::from(file), wait, what, dir.path().join(name))
    }

    /// Takes an exclusive lock on the folder `dir` itself (a handle of its own on it, no lock
    /// file inside), waiting at most `wait`: the aside folders, whose writers may not hold the
    /// capture lock.
    pub fn on_dir(dir: &Dir, wait: Duration) -> Result<Lock, LockError> {
        const WHAT: &str = "lock on the folder";
        let fd = dir.reopen().map_err(fs(WHAT))?;
        poll(fd, effective(wait), WHAT, dir.path().to_path_buf())
    }
}

/// Wraps a folder or file error of the lock `what`.
fn fs(what: &'static str) -> impl Fn(FsError) -> LockError {
    move |source| LockError::Fs { what, source }
}

/// Polls a non-blocking `flock` on `fd` until it is taken or `wait` has passed.
fn poll(
    file: OwnedFd,
    wait: Duration,
    what: &'static str,
    path: PathBuf,
) -> Result<Lock, LockError> {
    let io = |source| LockError::Io {
        what,
        path: path.clone(),
        source,
    };
    let deadline = Instant::now() + wait;
    let mut pause = Duration::from_millis(1);
    loop {
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(Lock { _fd: file }),
            Err(rustix::io::Errno::WOULDBLOCK) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(io(e.into())),
        }
        if Instant::now() >= deadline {
            return Err(LockError::Timeout { wait, what, path });
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_times_out_then_succeeds_after_release() {
        let t = tempfile::tempdir().unwrap();
        let first = Lock::acquire(t.path(), DEFAULT_WAIT).unwrap();
        let err = Lock::acquire(t.path(), Duration::from_millis(30)).unwrap_err();
        assert!(matches!(err, LockError::Timeout { .. }));
        assert!(
            err.to_string().contains("waiting for the capture lock"),
            "{err}"
        );
        drop(first);
        Lock::acquire(t.path(), Duration::from_millis(30)).unwrap();
    }

    /// A lock other than the capture lock is named as what it is (the review: an index build
    /// that timed out said "capture lock").
    #[test]
    fn a_named_lock_says_which_lock_it_waited_for() {
        let t = tempfile::tempdir().unwrap();
        let dir = Dir::open_private(t.path()).unwrap();
        let held = Lock::named(&dir, "x.build-lock", "index build lock", DEFAULT_WAIT).unwrap();
        let err = Lock::named(&dir, "x.build-lock", "index build lock", Duration::ZERO)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("timed out after 0ns waiting for the index build lock "),
            "{err}"
        );
        assert!(
            err.ends_with("x.build-lock") && !err.contains("capture"),
            "{err}"
        );
        drop(held);
    }
}
