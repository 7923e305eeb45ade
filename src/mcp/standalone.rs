//! `git rutter watch`: the MCP server's watcher without the MCP protocol (spec/index.md,
//! "Freshness": "A watcher of its own"). It keeps the vault's index in step with the notes and
//! answers the commands that ask whether it is current, as a running server does, so `search`,
//! `show`, `recent`, `log` and `status` stat no note where no AI client keeps a server running.
//! At most one runs per index (a lock beside it, taken without waiting); given an idle time, it
//! ends once no command has asked for that long.

use super::freshness::Freshness;
use super::server;
use crate::fsx::Dir;
use crate::index;
use crate::lock::{Lock, LockError};
use crate::vault::Vault;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::sync::watch;

/// The lock's name is the index's with this appended.
const LOCK_SUFFIX: &str = ".watch.lock";
/// How often the idle time is looked at.
const LOOK: Duration = Duration::from_millis(200);

/// Why the watcher did not run, or stopped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WatchError {
    #[error("another `git rutter watch` already watches this vault's index ({0})")]
    AlreadyWatched(String),
    #[error(transparent)]
    Index(#[from] index::IndexError),
    #[error("cannot start the watcher: {0}")]
    Start(#[from] std::io::Error),
    #[error("{0}")]
    NotReady(String),
    #[error("{0} lies on a shared file system ({1}): a change another machine makes there reaches no watcher here, so commands check the notes themselves")]
    SharedFileSystem(String, &'static str),
}

impl crate::hint::Hinted for WatchError {
    fn hint(&self) -> Option<String> {
        match self {
            WatchError::SharedFileSystem(..) => Some(
                "Nothing to do: their answers hold as the notes are now. A watcher on the machine that writes the notes would not hear the others' changes either."
                    .into(),
            ),
            WatchError::AlreadyWatched(_) => Some(
                "Nothing to do: commands already ask that one (it ends by itself once idle, when it was given --idle)."
                    .into(),
            ),
            _ => None,
        }
    }

    /// Another watcher already running is the user's to know of (exit 1), not a failure.
    fn users_to_fix(&self) -> bool {
        matches!(
            self,
            WatchError::AlreadyWatched(_) | WatchError::SharedFileSystem(..)
        )
    }
}

/// A watcher that runs: the lock held, the index being opened and then kept current.
pub(crate) struct Watching {
    _held: Lock,
    /// The socket commands ask on.
    socket: PathBuf,
    fresh: Arc<Freshness>,
    ready: watch::Receiver<Option<server::Ready>>,
    refresher: JoinHandle<()>,
}

/// Takes the vault's watch lock and starts watching `vault` (the index is opened, built if
/// need be, and refreshed on a thread of its own, then kept current). A vault on a shared file
/// system is refused: no watcher can vouch there (spec/index.md, "A shared file system").
pub(crate) fn start(vault: &Vault) -> Result<Watching, WatchError> {
    index::check_owner(vault)?;
    // A server there runs and declines every question; a watcher would only idle.
    if let Some(kind) = super::remote_fs::remote_kind(&vault.root) {
        let root = crate::records::text::one_line_safe(&vault.root.to_string_lossy());
        return Err(WatchError::SharedFileSystem(root, kind));
    }
    let (db, _) = index::location(vault);
    let held = exclusive(&db)?;
    let fresh = Arc::new(Freshness::new(vault.clone()));
    let (ready, refresher) = server::start_refresh(vault.clone(), Arc::clone(&fresh))?;
    Ok(Watching {
        _held: held,
        socket: index::watcher::socket_path(&db),
        fresh,
        ready,
        refresher,
    })
}

impl Watching {
    /// Watches until `idle` has passed with no command asking (never, without one), another
    /// watcher took the socket (a server started: the newest answers, and this one would only
    /// hold the lock), or the index cannot be opened; says on stderr why it stops.
    pub(crate) fn until_idle(mut self, idle: Option<Duration>) -> Result<(), WatchError> {
        let outcome = loop {
            std::thread::sleep(LOOK);
            if let Some(Err(e)) = self.ready.borrow_and_update().as_ref() {
                break Err(WatchError::NotReady(e.to_string()));
            }
            if self.replaced() {
                eprintln!("[rutter] another watcher answers on this index's socket now: stopping.");
                break Ok(());
            }
            if let Some(idle) = idle.filter(|idle| self.fresh.unasked_for() >= *idle) {
                let idle = crate::clock::show_interval(idle);
                eprintln!("[rutter] no command asked for {idle}: stopping.");
                break Ok(());
            }
        };
        // Let a rescan or identity pass still running finish its writes; the socket goes with
        // the refresher's thread.
        self.fresh.stop();
        let _ = self.refresher.join();
        outcome
    }

    /// Whether the socket this watcher bound is no longer at its path (another watcher bound
    /// its own there, or removed it when it stopped).
    fn replaced(&self) -> bool {
        self.fresh.bound().is_some_and(|ours| {
            std::fs::symlink_metadata(&self.socket).map_or(true, |m| m.ino() != ours)
        })
    }
}

/// The lock one watcher of the index at `db` holds while it runs.
fn exclusive(db: &Path) -> Result<Lock, WatchError> {
    let (Some(folder), Some(name)) = (db.parent(), db.file_name()) else {
        return Err(WatchError::NotReady(format!(
            "{} names no file in a folder",
            db.display()
        )));
    };
    let name = format!("{}{LOCK_SUFFIX}", name.to_string_lossy());
    let dir = Dir::open_private(folder).map_err(|e| WatchError::NotReady(e.to_string()))?;
    Lock::named(&dir, &name, "watch lock", Duration::ZERO).map_err(|e| match e {
        LockError::Timeout { path, .. } => WatchError::AlreadyWatched(path.display().to_string()),
        other => WatchError::NotReady(other.to_string()),
    })
}
