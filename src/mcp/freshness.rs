//! Keeping a running server's index in step with the notes (spec/mcp.md, "Freshness").
//!
//! A watcher (`notify`: inotify on Linux, FSEvents on macOS) watches every directory the index
//! covers, not `.git/`, `_librarian/` or the other skipped folders. Each event names the
//! directory to list again; a background thread rescans those directories once the events
//! pause (`DEBOUNCE`), and a tool call first applies whatever events arrived before it, so it
//! waits only for the refresh of what changed. So that "before it" holds for a note written an
//! instant before the call, the call first creates a cookie file in a watched folder of the
//! server's own and waits for its event: inotify queues events in order, so every earlier change
//! has then been heard. A full check runs every `SWEEP_EVERY` in the background as a net for
//! what a watcher cannot see (a network file system).
//!
//! When the watcher cannot start or keep up (inotify's watch limit, a lost event queue), a
//! search or get-note runs the full check itself, unless one ran in the last `CHECK_WINDOW`.
//!
//! A folder created, or renamed in or out, and a lost queue, make the next pass a full check
//! that first watches every folder again by its path: a watch follows the folder it was put on,
//! so a folder swapped for another under the same name would otherwise go unwatched.
//!
//! Commands ask the same watcher whether the index is current ([`Freshness::sync_for_client`],
//! over the socket of `super::sync_socket`); it vouches only when it is provably complete.

use super::record_watch;
use crate::index::notes::Refresh;
use crate::index::walk;
use crate::index::watcher as asked;
use crate::index::{Index, IndexError};
use crate::recall::reindex;
use crate::vault::Vault;
use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher, WatcherKind};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Events closer together than this are one change (an editor's save is several events).
const DEBOUNCE: Duration = Duration::from_millis(40);
/// The longest a burst of events delays its rescan.
const MAX_DELAY: Duration = Duration::from_millis(300);
/// How often the background thread runs the full check while the watcher runs.
const SWEEP_EVERY: Duration = Duration::from_secs(30);
/// Without a watcher, a tool call runs the full check unless one ran this recently.
const CHECK_WINDOW: Duration = Duration::from_secs(1);
/// Rounds of "watch the new directories, list them again" before falling back to a full check.
const MAX_ROUNDS: usize = 4;
/// The longest a tool call waits to hear of its cookie (then it answers with what it has).
const COOKIE_WAIT: Duration = Duration::from_millis(200);
/// A cookie file older than this is left over from a server that stopped between creating and
/// removing it.
const STALE_COOKIE: Duration = Duration::from_secs(60);

/// What the server does without a watcher, and how to get it back (stderr).
const FALLBACK: &str = "each search and get-note checks the notes itself instead. To watch again, raise fs.inotify.max_user_watches (see docs/troubleshooting.md) and restart the MCP client.";

/// Environment variable that keeps the watcher from starting, in debug builds only (tests of
/// the fallback); release builds ignore it.
pub(crate) const NO_WATCH_ENV: &str = "RUTTER_NO_WATCH";

/// What the server knows about changes not yet in its index.
pub(crate) struct Freshness {
    vault: Vault,
    shared: Arc<Shared>,
    watcher: Mutex<Option<RecommendedWatcher>>,
    /// The cookies' serial numbers.
    next_cookie: AtomicU64,
    /// This server's token, kept in the index's `meta` while its watcher keeps the index.
    token: String,
    /// The shared file system the vault lies on, if it does: then the server never vouches.
    remote: Option<&'static str>,
    /// When a command last asked ([`Freshness::sync_for_client`]), or this was made.
    asked: Mutex<Instant>,
    /// The inode of the socket commands ask on, once it is bound.
    bound: Mutex<Option<u64>>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    /// The watched folder cookies are created in, once it is watched.
    cookies: Mutex<Option<PathBuf>>,
}

#[derive(Default)]
struct State {
    /// Directories events named since the last rescan.
    dirs: BTreeSet<String>,
    /// An event that names no directory (a lost queue, a watcher error): check everything.
    full: bool,
    /// When the first event of the pending ones arrived.
    since: Option<Instant>,
    /// When the last event arrived.
    last_event: Option<Instant>,
    watching: bool,
    last_check: Option<Instant>,
    stop: bool,
    /// The highest serial of this server's cookies the watcher has reported.
    cookie_heard: u64,
    /// The record cache's folders are watched too (`super::record_watch`).
    records_watching: bool,
    /// Day files (stems) events named since the record cache was last refreshed for them.
    days: BTreeSet<String>,
    /// Every day is to be compared again (a record folder made or moved, a lost queue).
    records_full: bool,
}

/// The work a pass has to do.
enum Work {
    Nothing,
    Dirs(Vec<String>),
    Full,
}

impl Freshness {
    /// Nothing watched yet: until [`Freshness::watch`] succeeds, tool calls run the check.
    pub fn new(vault: Vault) -> Freshness {
        Freshness {
            shared: Arc::default(),
            watcher: Mutex::new(None),
            next_cookie: AtomicU64::new(1),
            token: new_token(),
            remote: super::remote_fs::remote_kind(&vault.root),
            vault,
            asked: Mutex::new(Instant::now()),
            bound: Mutex::new(None),
        }
    }

    /// Notes that commands now ask on the socket whose inode is `ino`.
    pub(crate) fn bound_as(&self, ino: u64) {
        *self.bound.lock().unwrap_or_else(PoisonError::into_inner) = Some(ino);
    }

    /// The inode of the socket commands ask on, once it is bound.
    pub(crate) fn bound(&self) -> Option<u64> {
        *self.bound.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How long no command has asked whether the index is current (since this was made, when
    /// none has).
    pub(crate) fn unasked_for(&self) -> Duration {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .elapsed()
    }

    /// Starts watching every directory `index` covers, then checks everything once (a change
    /// made before a directory was watched is found by the check), then puts this server's
    /// token in the index. On failure the server keeps checking before tool calls, and says why
    /// on stderr.
    pub fn watch(&self, index: &mut Index) -> Result<(), IndexError> {
        match self.start_watcher(index) {
            Ok(()) => self.lock().watching = true,
            Err(why) => {
                eprintln!("[rutter] cannot watch the vault for changes ({why}); {FALLBACK}")
            }
        }
        self.apply(index, Work::Full)?;
        if self.lock().watching {
            index.set_meta(asked::TOKEN_KEY, &self.token)?;
            self.lock().records_full = true;
            if let Err(why) = self.sync_records(index) {
                eprintln!("[rutter] commands will check the day files themselves: {why}");
            }
        }
        Ok(())
    }

    fn start_watcher(&self, index: &Index) -> Result<(), WatchError> {
        if cfg!(debug_assertions) && std::env::var_os(NO_WATCH_ENV).is_some() {
            return Err(WatchError::TurnedOff);
        }
        let shared = Arc::clone(&self.shared);
        let root = self.vault.root.clone();
        let handler = move |event: notify::Result<Event>| shared.note(&root, event);
        let mut watcher = RecommendedWatcher::new(handler, notify::Config::default())?;
        if RecommendedWatcher::kind() == WatcherKind::Fsevent {
            // FSEvents watches a tree as cheaply as a folder; events are filtered by path.
            watcher.watch(&self.vault.root, RecursiveMode::Recursive)?;
            self.lock().records_watching = true;
        } else {
            let dirs = index.note_dirs()?;
            add_watches(&mut watcher, &self.vault.root, &dirs)?;
            self.lock().records_watching = record_watch::watch(&mut watcher, &self.vault.root);
            // Without its cookie folder the server still works; a call then applies only the
            // events that already arrived.
            if let Some(dir) = cookie_dir(&self.vault) {
                if watcher.watch(&dir, RecursiveMode::NonRecursive).is_ok() {
                    *self
                        .shared
                        .cookies
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) = Some(dir);
                }
            }
        }
        *self.watcher.lock().unwrap_or_else(PoisonError::into_inner) = Some(watcher);
        Ok(())
    }

    /// Brings `index` up to date before a search or get-note: the changes events reported, or,
    /// without a watcher, the full check when none ran in the last `CHECK_WINDOW`.
    pub fn before_call(&self, index: &mut Index) -> Result<(), IndexError> {
        let watching = self.lock().watching;
        if watching {
            self.hear_everything_so_far();
        }
        let work = {
            let mut state = self.lock();
            if state.watching {
                state.take()
            } else if state.last_check.is_none_or(|t| t.elapsed() >= CHECK_WINDOW) {
                Work::Full
            } else {
                Work::Nothing
            }
        };
        self.apply(index, work).map(drop)
    }

    /// The background thread's loop: rescans what events named once they pause, and runs the
    /// full check every `SWEEP_EVERY`, until [`Freshness::stop`]. `index` is locked only while
    /// a rescan runs.
    pub(crate) fn run(&self, index: &Mutex<Index>) {
        loop {
            let sweep = {
                let mut state = self.lock();
                loop {
                    if state.stop {
                        return;
                    }
                    let now = Instant::now();
                    if let (Some(first), Some(last)) = (state.since, state.last_event) {
                        let settled = now.duration_since(last) >= DEBOUNCE
                            || now.duration_since(first) >= MAX_DELAY;
                        if settled {
                            break false;
                        }
                        let wait = DEBOUNCE.saturating_sub(now.duration_since(last));
                        state = self.wait(state, wait.max(Duration::from_millis(1)));
                        continue;
                    }
                    if state.watching
                        && state.last_check.is_some_and(|t| t.elapsed() >= SWEEP_EVERY)
                    {
                        break true;
                    }
                    state = self.wait(state, SWEEP_EVERY);
                }
            };
            // The index is locked *before* the pending work is taken: a call holding it (waiting
            // for its cookie) takes the work itself and answers from it, and never finds the
            // work gone to a background rescan it would not wait for (spec/mcp.md).
            let mut index = index.lock().unwrap_or_else(PoisonError::into_inner);
            let work = match sweep {
                true => Work::Full,
                false => self.lock().take(),
            };
            if let Err(e) = self.apply(&mut index, work) {
                eprintln!("[rutter] error: refreshing the notes failed: {e}");
            }
        }
    }

    /// Ends [`Freshness::run`] and drops the watcher.
    pub(crate) fn stop(&self) {
        self.lock().stop = true;
        self.shared.wake.notify_all();
        self.watcher
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }

    /// Rescans, watches the directories the rescan found, lists those again (a note may have
    /// been written before its folder was watched), then runs the identity pass if paths
    /// changed. A full check first watches every known directory again. Whether it finished
    /// (false: folders kept appearing, or the watcher was given up; the next pass checks all).
    fn apply(&self, index: &mut Index, work: Work) -> Result<bool, IndexError> {
        let mut total = Refresh::default();
        let mut work = work;
        for _ in 0..MAX_ROUNDS {
            let done = match work {
                Work::Nothing => break,
                Work::Dirs(dirs) => index.rescan_dirs(&dirs)?,
                Work::Full => {
                    let dirs = index.note_dirs()?;
                    self.watch_new(&dirs);
                    self.watch_records_again();
                    let done = index.freshen()?.unwrap_or_default();
                    self.lock().last_check = Some(Instant::now());
                    done
                }
            };
            total.absorb(done.notes);
            work = match self.watch_new(&done.new_dirs) {
                true if done.new_dirs.is_empty() => Work::Nothing,
                true => Work::Dirs(done.new_dirs),
                false => Work::Full,
            };
        }
        let finished = matches!(work, Work::Nothing);
        if !finished {
            self.lock().full = true;
        }
        reindex::identity_after_rescan(&self.vault, index, &total)?;
        Ok(finished && self.lock().watching)
    }

    /// For a command that asks over the socket: makes every change made before now heard
    /// (the cookie), applies it, and answers `current` only when that is provably complete: the
    /// watcher runs, heard its cookie, lost no event it did not recover from by a full check,
    /// and the index holds this server's token (else, a rebuild since, a full check first).
    pub(crate) fn sync_for_client(&self, index: &mut Index) -> String {
        *self.asked.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
        match self.sync(index) {
            Ok(how) => asked::current_line(&self.token, how, &self.vault.root),
            Err(why) => asked::declined_line(&why.to_string()),
        }
    }

    fn sync(&self, index: &mut Index) -> Result<&'static str, Declined> {
        if !self.lock().watching {
            return Err(Declined::NotWatching);
        }
        if let Some(kind) = self.remote {
            return Err(Declined::SharedFileSystem(kind));
        }
        if !self.hear_everything_so_far() {
            return Err(Declined::CookieNotHeard);
        }
        let work = self.lock().take();
        let mut how = match work {
            Work::Full => "full-check",
            _ => "events",
        };
        let failed = Declined::Refresh;
        let mut finished = self.apply(index, work).map_err(failed)?;
        if index.meta(asked::TOKEN_KEY).map_err(failed)?.as_deref() != Some(&self.token) {
            // Rebuilt, or written by another server: what it heard says nothing about it.
            finished = self.apply(index, Work::Full).map_err(failed)?;
            index
                .set_meta(asked::TOKEN_KEY, &self.token)
                .map_err(failed)?;
            how = "full-check";
        }
        if self.sync_records(index)? {
            how = "full-check";
        }
        match finished {
            true => Ok(how),
            false => Err(Declined::KeptChanging),
        }
    }

    /// Brings the record cache up to date for the day files events named (every day after a
    /// folder event, a lost queue or a rebuild), so the index holds this server's token for it;
    /// whether every day was compared. On failure the token is taken back (commands then stat
    /// every day file), and only when that fails too is the whole answer declined.
    fn sync_records(&self, index: &mut Index) -> Result<bool, Declined> {
        let (days, full) = {
            let mut state = self.lock();
            let days: Vec<String> = std::mem::take(&mut state.days).into_iter().collect();
            (days, std::mem::take(&mut state.records_full))
        };
        if full {
            // Watched again by path first: the folder may be another one since.
            self.watch_records_again();
        }
        let watching = self.lock().records_watching;
        let disown = |index: &Index| record_watch::disown(index).map_err(Declined::Refresh);
        if !watching {
            return disown(index).map(|()| false);
        }
        match record_watch::refresh(&self.vault, index, &self.token, &days, full) {
            Ok(compared_all) => Ok(compared_all),
            Err(e) => {
                eprintln!("[rutter] error: refreshing the day files failed: {e}");
                self.lock().records_full = true;
                disown(index).map(|()| false)
            }
        }
    }

    /// Watches the record cache's folders again by their paths (after a folder was made or
    /// moved, or a lost queue); on failure the server stops vouching for them.
    fn watch_records_again(&self) {
        if RecommendedWatcher::kind() == WatcherKind::Fsevent {
            return;
        }
        let mut slot = self.watcher.lock().unwrap_or_else(PoisonError::into_inner);
        let watching = match slot.as_mut() {
            Some(watcher) => record_watch::watch(watcher, &self.vault.root),
            None => false,
        };
        drop(slot);
        let mut state = self.lock();
        state.records_watching &= watching;
    }

    /// Watches new directories; false (and the watcher given up) when that fails.
    fn watch_new(&self, dirs: &[String]) -> bool {
        if dirs.is_empty() || RecommendedWatcher::kind() == WatcherKind::Fsevent {
            return true;
        }
        let mut slot = self.watcher.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(watcher) = slot.as_mut() else {
            return true;
        };
        match add_watches(watcher, &self.vault.root, dirs) {
            Ok(()) => true,
            Err(why) => {
                eprintln!("[rutter] stopped watching the vault ({why}); {FALLBACK}");
                slot.take();
                self.lock().watching = false;
                false
            }
        }
    }

    /// Creates a cookie and waits (at most `COOKIE_WAIT`) until the watcher reports it: every
    /// event queued before it has then been noted. Whether it was heard.
    fn hear_everything_so_far(&self) -> bool {
        let Some(dir) = self
            .shared
            .cookies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        else {
            return false;
        };
        let serial = self.next_cookie.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(cookie_name(std::process::id(), serial));
        if std::fs::File::create_new(&path).is_err() {
            return false;
        }
        let started = Instant::now();
        let mut state = self.lock();
        while state.cookie_heard < serial {
            let Some(left) = COOKIE_WAIT.checked_sub(started.elapsed()) else {
                break;
            };
            state = self.wait(state, left);
        }
        let heard = state.cookie_heard >= serial;
        drop(state);
        let _ = std::fs::remove_file(&path);
        heard
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(
        &self,
        state: std::sync::MutexGuard<'a, State>,
        timeout: Duration,
    ) -> std::sync::MutexGuard<'a, State> {
        self.shared
            .wake
            .wait_timeout(state, timeout)
            .unwrap_or_else(PoisonError::into_inner)
            .0
    }
}

impl State {
    /// The pending work, cleared.
    fn take(&mut self) -> Work {
        self.since = None;
        self.last_event = None;
        let dirs = std::mem::take(&mut self.dirs);
        if std::mem::take(&mut self.full) {
            Work::Full
        } else if dirs.is_empty() {
            Work::Nothing
        } else {
            Work::Dirs(dirs.into_iter().collect())
        }
    }
}

impl Shared {
    /// Records what one watcher event says changed (runs on the watcher's thread).
    fn note(&self, root: &Path, event: notify::Result<Event>) {
        let lost = match &event {
            Ok(e) if is_read_only(&e.kind) => return,
            Ok(e) if self.heard_cookie(e) => return,
            Ok(e) => e.need_rescan() || crate::failpoint::active("watch-overflow"),
            Err(_) => true,
        };
        // A lost queue means every day too; a folder made or moved among the notes does not.
        let (mut days, mut records_full) = (Vec::new(), lost);
        let paths = event.as_ref().map_or(&[][..], |e| e.paths.as_slice());
        for heard in paths.iter().filter_map(|p| record_watch::heard(root, p)) {
            match heard {
                record_watch::Heard::Day(day) => days.push(day),
                record_watch::Heard::Folder => records_full = true,
            }
        }
        let full = lost || event.as_ref().is_ok_and(moves_a_folder);
        let mut dirs = Vec::new();
        if !full {
            dirs.extend(paths.iter().flat_map(|p| dirs_for(root, p)));
            // A path outside the walked tree (under `.git/`, say) changes no note.
            if dirs.is_empty() {
                if !days.is_empty() || records_full {
                    self.note_records(days, records_full);
                }
                return;
            }
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.full |= full;
        state.records_full |= records_full;
        state.days.extend(days);
        state.dirs.extend(dirs);
        let now = Instant::now();
        state.since.get_or_insert(now);
        state.last_event = Some(now);
        drop(state);
        self.wake.notify_all();
    }
}

impl Shared {
    /// Records day files (and whether every day is to be compared) for the next `sync`; the
    /// background pass has nothing to do for them, so it is not woken.
    fn note_records(&self, days: Vec<String>, full: bool) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.records_full |= full;
        state.days.extend(days);
    }

    /// Whether the event is about a cookie (one of this server's: then it is recorded as heard).
    fn heard_cookie(&self, event: &Event) -> bool {
        let cookies = self
            .cookies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let Some(dir) = cookies else {
            return false;
        };
        let ours = cookie_prefix(std::process::id());
        let lost = crate::failpoint::active("watch-cookie-lost");
        let mut about_cookies = false;
        for path in &event.paths {
            if path.parent() != Some(dir.as_path()) {
                continue;
            }
            about_cookies = true;
            let serial = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix(ours.as_str()))
                .and_then(|n| n.parse::<u64>().ok());
            if let (Some(serial), EventKind::Create(_), false) = (serial, &event.kind, lost) {
                let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                state.cookie_heard = state.cookie_heard.max(serial);
                drop(state);
                self.wake.notify_all();
            }
        }
        about_cookies
    }
}

/// Whether the event creates a folder or renames one (in, out or within a watched folder): a
/// watch follows its folder, so every folder is then watched again by its path.
fn moves_a_folder(event: &Event) -> bool {
    use notify::event::{CreateKind, ModifyKind};
    match event.kind {
        EventKind::Create(CreateKind::Folder) => true,
        EventKind::Modify(ModifyKind::Name(_)) => event
            .paths
            .iter()
            .any(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())),
        _ => false,
    }
}

/// A token no other server has (its process id and the time it started).
fn new_token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{:x}-{nanos:x}", std::process::id())
}

/// The names of a server's cookies start with this.
fn cookie_prefix(pid: u32) -> String {
    format!("cookie-{pid}-")
}

/// The name of a server's cookie.
fn cookie_name(pid: u32, serial: u64) -> String {
    format!("{}{serial}", cookie_prefix(pid))
}

/// The folder cookies are created in (`watch/` in the state folder), emptied of cookies left
/// over by stopped servers; `None` when it cannot be made.
fn cookie_dir(vault: &Vault) -> Option<PathBuf> {
    // Opened without following a symlink (a symlinked `.git/rutter` or `watch/` is refused), so
    // the cookies, created `O_EXCL` by path below, never land outside the vault (DESIGN §2.2).
    let dir = crate::fsx::Dir::open_private(&vault.state_dir())
        .and_then(|d| d.open_dir("watch", true))
        .ok()??
        .path()
        .to_path_buf();
    for entry in std::fs::read_dir(&dir).ok()?.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_COOKIE);
        if old && entry.file_name().to_string_lossy().starts_with("cookie-") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Some(dir)
}

/// Opening or reading a file (the index's own reads of notes among them) changes nothing.
fn is_read_only(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::Access(
            AccessKind::Open(_) | AccessKind::Read | AccessKind::Close(AccessMode::Read)
        )
    )
}

/// The directories to list again for an event on `path`: its parent, and itself in case it is
/// a directory; none when either is outside the walked tree.
fn dirs_for(root: &Path, path: &Path) -> Vec<String> {
    let Some(rel) = path.strip_prefix(root).ok().and_then(Path::to_str) else {
        return Vec::new();
    };
    let parent = rel.rsplit_once('/').map_or("", |(p, _)| p);
    let mut dirs = Vec::new();
    if walk::is_walked_dir(parent) {
        dirs.push(parent.to_string());
        if !rel.is_empty() && walk::is_walked_dir(rel) {
            dirs.push(rel.to_string());
        }
    }
    dirs
}

/// Watches each directory (vault-relative) on its own; a directory gone meanwhile is skipped.
fn add_watches(
    watcher: &mut RecommendedWatcher,
    root: &Path,
    dirs: &[String],
) -> Result<(), WatchError> {
    for dir in dirs {
        let path: PathBuf = if dir.is_empty() {
            root.to_path_buf()
        } else {
            root.join(dir)
        };
        match watcher.watch(&path, RecursiveMode::NonRecursive) {
            Ok(()) => {}
            Err(e) if matches!(e.kind, notify::ErrorKind::PathNotFound) => {}
            Err(e) if matches!(e.kind, notify::ErrorKind::Io(ref io) if io.kind() == std::io::ErrorKind::NotFound) =>
                {}
            Err(source) => return Err(WatchError::Dir { path, source }),
        }
    }
    Ok(())
}

/// Why the server does not watch the vault (it then checks before each call).
#[derive(Debug, thiserror::Error)]
enum WatchError {
    /// Turned off for a test.
    #[error("{NO_WATCH_ENV} is set")]
    TurnedOff,
    /// The watcher could not start, or watch the vault.
    #[error(transparent)]
    Notify(#[from] notify::Error),
    /// A folder could not be watched.
    #[error("{}: {source}", path.display())]
    Dir {
        path: PathBuf,
        source: notify::Error,
    },
    /// The index could not list the folders to watch.
    #[error(transparent)]
    Index(#[from] IndexError),
}

/// Why the server cannot vouch that the index is current; a command asking it then runs the
/// full check itself.
#[derive(Debug, thiserror::Error)]
enum Declined {
    #[error("it does not watch the vault")]
    NotWatching,
    #[error("the vault is on a shared file system ({0}), whose changes from other machines no watcher hears")]
    SharedFileSystem(&'static str),
    #[error("its cookie was not heard in time")]
    CookieNotHeard,
    #[error("refreshing failed: {0}")]
    Refresh(IndexError),
    #[error("folders kept appearing, or the watcher stopped")]
    KeptChanging,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_name_the_parent_and_the_path_inside_the_walked_tree_only() {
        let root = Path::new("/v");
        assert_eq!(dirs_for(root, Path::new("/v/a.md")), ["", "a.md"]);
        assert_eq!(
            dirs_for(root, Path::new("/v/Notes/b.md")),
            ["Notes", "Notes/b.md"]
        );
        assert_eq!(dirs_for(root, Path::new("/v/Notes")), ["", "Notes"]);
        assert_eq!(
            dirs_for(root, Path::new("/v/.git/index")),
            Vec::<String>::new()
        );
        assert_eq!(dirs_for(root, Path::new("/v/.git")), [""]);
        assert_eq!(
            dirs_for(root, Path::new("/v/_librarian/sessions/x.md")),
            Vec::<String>::new()
        );
        assert_eq!(
            dirs_for(root, Path::new("/elsewhere/x.md")),
            Vec::<String>::new()
        );
        assert_eq!(dirs_for(root, Path::new("/v")), [""]);
    }

    #[test]
    fn a_folder_made_or_renamed_means_watching_every_folder_again() {
        use notify::event::{CreateKind, ModifyKind, RenameMode};
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("dir")).unwrap();
        std::fs::write(t.path().join("note.md"), "x\n").unwrap();
        let event = |kind, rel: &str| Event::new(kind).add_path(t.path().join(rel));
        let renamed = EventKind::Modify(ModifyKind::Name(RenameMode::To));
        assert!(moves_a_folder(&event(
            EventKind::Create(CreateKind::Folder),
            "dir"
        )));
        assert!(moves_a_folder(&event(renamed, "dir")));
        assert!(
            !moves_a_folder(&event(renamed, "note.md")),
            "a note saved by a rename"
        );
        assert!(!moves_a_folder(&event(renamed, "gone.md")));
        assert!(!moves_a_folder(&event(
            EventKind::Create(CreateKind::File),
            "note.md"
        )));
        let shared = Shared::default();
        shared.note(
            t.path(),
            Ok(event(EventKind::Create(CreateKind::Folder), "dir")),
        );
        assert!(matches!(shared.state.lock().unwrap().take(), Work::Full));
    }

    #[test]
    fn reads_are_not_changes() {
        assert!(is_read_only(&EventKind::Access(AccessKind::Open(
            AccessMode::Any
        ))));
        assert!(is_read_only(&EventKind::Access(AccessKind::Close(
            AccessMode::Read
        ))));
        assert!(!is_read_only(&EventKind::Access(AccessKind::Close(
            AccessMode::Write
        ))));
        assert!(!is_read_only(&EventKind::Modify(
            notify::event::ModifyKind::Any
        )));
    }

    #[test]
    fn pending_work_is_taken_once_and_a_lost_queue_means_a_full_check() {
        let shared = Shared::default();
        let root = Path::new("/v");
        let modify = |p: &str| {
            Ok(
                Event::new(EventKind::Modify(notify::event::ModifyKind::Any))
                    .add_path(PathBuf::from(p)),
            )
        };
        shared.note(root, modify("/v/A/x.md"));
        shared.note(root, modify("/v/B/y.md"));
        shared.note(root, modify("/v/.git/objects/ab"));
        let mut state = shared.state.lock().unwrap();
        assert!(matches!(state.take(), Work::Dirs(d) if d == ["A", "A/x.md", "B", "B/y.md"]));
        assert!(matches!(state.take(), Work::Nothing));
        drop(state);
        shared.note(
            root,
            Ok(Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan)),
        );
        assert!(matches!(shared.state.lock().unwrap().take(), Work::Full));
    }

    #[test]
    fn day_files_are_queued_and_only_their_folders_or_a_lost_queue_mean_every_day() {
        use notify::event::{CreateKind, Flag, ModifyKind};
        let shared = Shared::default();
        let root = Path::new("/v");
        let event = |kind, p: &str| Ok(Event::new(kind).add_path(PathBuf::from(p)));
        let modify = EventKind::Modify(ModifyKind::Any);
        shared.note(root, event(modify, "/v/_librarian/sessions/2026-11-30.md"));
        shared.note(root, event(modify, "/v/_librarian/stateful-use.jsonl"));
        shared.note(root, event(EventKind::Create(CreateKind::Folder), "/v/New"));
        let mut state = shared.state.lock().unwrap();
        assert_eq!(state.days, BTreeSet::from(["2026-11-30".to_string()]));
        assert!(
            !state.records_full,
            "a folder among the notes is not the records'"
        );
        assert!(matches!(state.take(), Work::Full), "it is the notes'");
        drop(state);
        shared.note(root, event(modify, "/v/_librarian/sessions"));
        assert!(std::mem::take(
            &mut shared.state.lock().unwrap().records_full
        ));
        let lost = Event::new(EventKind::Other).set_flag(Flag::Rescan);
        shared.note(root, Ok(lost));
        assert!(shared.state.lock().unwrap().records_full, "a lost queue");
    }

    fn vault_with(notes: &[(&str, &str)]) -> (tempfile::TempDir, Vault) {
        let t = tempfile::tempdir().unwrap();
        for (rel, text) in notes {
            let p = t.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let root = t.path().canonicalize().unwrap();
        // A git vault keeps its state (the cookie folder) in `.git/rutter/`, inside the temp dir.
        crate::store::gitenv::init_repo(&root).unwrap();
        let vault = crate::vault::resolve(Some(&root), false).unwrap();
        assert!(vault.state_dir().starts_with(&root));
        (t, vault)
    }

    /// Calls `before_call` until the index holds `n` notes; false after 20 s.
    fn until_count(fresh: &Freshness, index: &mut Index, n: usize) -> bool {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(20) {
            fresh.before_call(index).unwrap();
            if index.note_count().unwrap() == n {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn watched_events_reach_the_index_and_new_folders_are_watched_too() {
        crate::index::snapshot::tests::settle_all();
        let (_t, vault) = vault_with(&[("Notes/a.md", "alpha\n")]);
        let mut index = Index::in_memory(&vault.root);
        let fresh = Freshness::new(vault.clone());
        fresh.watch(&mut index).unwrap();
        assert!(fresh.lock().watching, "the watcher started");
        std::fs::create_dir_all(vault.root.join("New/Deep")).unwrap();
        std::fs::write(vault.root.join("New/Deep/b.md"), "beta\n").unwrap();
        assert!(until_count(&fresh, &mut index, 2), "a note in a new folder");
        // Only events drive a watching server: this note is found only if New/Deep is watched.
        std::fs::write(vault.root.join("New/Deep/c.md"), "gamma\n").unwrap();
        assert!(
            until_count(&fresh, &mut index, 3),
            "a note in the folder watched since"
        );
        std::fs::remove_file(vault.root.join("Notes/a.md")).unwrap();
        assert!(until_count(&fresh, &mut index, 2), "a note deleted");
        fresh.stop();
    }

    #[test]
    fn a_call_hears_its_cookie_and_cookies_never_reach_the_index() {
        crate::index::snapshot::tests::settle_all();
        let (_t, vault) = vault_with(&[("Notes/a.md", "alpha\n")]);
        let mut index = Index::in_memory(&vault.root);
        let fresh = Freshness::new(vault.clone());
        fresh.watch(&mut index).unwrap();
        let dir = fresh
            .shared
            .cookies
            .lock()
            .unwrap()
            .clone()
            .expect("a cookie folder");
        let started = Instant::now();
        while fresh.lock().cookie_heard == 0 && started.elapsed() < Duration::from_secs(20) {
            fresh.hear_everything_so_far();
        }
        assert!(fresh.lock().cookie_heard > 0, "the watcher reports cookies");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "each cookie is removed"
        );
        assert!(
            matches!(fresh.lock().take(), Work::Nothing),
            "cookies are not changes"
        );
        fresh.stop();
    }

    /// The review's §b 1: with the background loop running, a note written an instant before a
    /// call (around the debounce boundary) is in the call's answer, every time.
    #[test]
    fn a_call_racing_the_background_loop_answers_from_the_fresh_index() {
        crate::index::snapshot::tests::settle_all();
        let (_t, vault) = vault_with(&[("Notes/a.md", "alpha\n")]);
        let mut first = Index::in_memory(&vault.root);
        let fresh = std::sync::Arc::new(Freshness::new(vault.clone()));
        fresh.watch(&mut first).unwrap();
        let index = std::sync::Arc::new(Mutex::new(first));
        let background = {
            let (fresh, index) = (fresh.clone(), index.clone());
            std::thread::spawn(move || fresh.run(&index))
        };
        for n in 0..24u64 {
            std::fs::write(vault.root.join(format!("Notes/n{n}.md")), "x\n").unwrap();
            // Calls land before, at and after the debounce the background waits for.
            std::thread::sleep(Duration::from_millis(n % 6 * 10));
            let mut index = index.lock().unwrap();
            fresh.before_call(&mut index).unwrap();
            assert_eq!(
                index.note_count().unwrap() as u64,
                n + 2,
                "the call's answer holds the note written before it (round {n})"
            );
        }
        fresh.stop();
        background.join().unwrap();
    }

    #[test]
    fn without_a_watcher_a_call_checks_at_most_once_a_second() {
        crate::index::snapshot::tests::settle_all();
        let (_t, vault) = vault_with(&[("Notes/a.md", "alpha\n")]);
        let mut index = Index::in_memory(&vault.root);
        let fresh = Freshness::new(vault.clone());
        fresh.before_call(&mut index).unwrap();
        let checked = fresh.lock().last_check.unwrap();
        std::fs::write(vault.root.join("Notes/b.md"), "beta\n").unwrap();
        fresh.before_call(&mut index).unwrap();
        // Only meaningful if this ran within the window (a starved machine may take longer).
        if checked.elapsed() < CHECK_WINDOW {
            assert_eq!(
                index.note_count().unwrap(),
                1,
                "checked less than a second ago"
            );
        }
        fresh.lock().last_check = Instant::now().checked_sub(CHECK_WINDOW);
        fresh.before_call(&mut index).unwrap();
        assert_eq!(index.note_count().unwrap(), 2);
    }
}
