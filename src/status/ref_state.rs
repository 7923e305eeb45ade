//! What `git rutter status` asks of the record, cheaply and without writing: whether
//! `refs/rutter/records` exists, its tip (id, time, subject), whether it has a reflog (verify's
//! rewind evidence), how many lines wait in the pending journal, and how far the tip is past the
//! last tip verify found clean. Never a verify: counts are bounded so status stays fast on a
//! long history.

use crate::objectid::ObjectId;
use crate::store::{Located, Store, StoreError};
use std::path::Path;

/// Commits counted at most when walking back from the tip to the last verified one.
pub(crate) const COUNT_LIMIT: usize = 1000;

/// The record ref and its surroundings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RecordState {
    pub tip: Option<Tip>,
    /// The ref has a reflog.
    pub reflog: bool,
    /// Lines appended but not committed yet (records in `.git/rutter/pending/`).
    pub pending: usize,
    /// Journal records that cannot be read.
    pub pending_unreadable: usize,
    /// Lines written aside (neither their day file nor the journal took them), not yet placed.
    pub aside: usize,
    /// Complete use-log lines past the committed log (an MCP read logs its use there; the next
    /// commit takes them): what `verify` counts among its pending lines beside the journal's.
    pub use_log_waiting: usize,
    /// The tip the last verify found clean.
    pub verified_tip: Option<String>,
    /// Commits from the verified tip to the tip; `None` when never verified, or verified more
    /// than [`COUNT_LIMIT`] commits ago.
    pub since_verified: Option<usize>,
    /// Sync settings, when `rutter.syncRemote` is set.
    pub sync: Option<SyncState>,
    /// When no sync remote is set: the remotes this vault has fetched records from (a
    /// `refs/remotes/<remote>/rutter/records`, as `init` on a clone fetches it), by name.
    pub record_remotes: Vec<String>,
    /// The committed record files that differ from their commit in the working tree now, as
    /// `verify` would find them (acknowledged findings left out): one per file and kind.
    pub working: Vec<WorkingChange>,
    /// `rutter.watch` as set (`None`: unset), and why it is no idle time, when it is not.
    pub watch: Option<String>,
    pub watch_error: Option<String>,
    /// `rutter.sign` as set, when it is no boolean git reads.
    pub sign_invalid: Option<String>,
}

/// `git rutter sync`'s settings and how the last fetched remote tip relates to the local one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SyncState {
    /// `rutter.syncRemote`.
    pub remote: String,
    /// Its URL without credentials (`None`: no such remote).
    pub url: Option<String>,
    /// Its fetch refspecs bring `refs/rutter/*` (set by `sync --setup`).
    pub fetches_records: bool,
    /// When it names no remote: the remotes that fetch `refs/rutter/*` under another name (a
    /// `git remote rename` leaves `rutter.syncRemote` behind).
    pub set_up_remotes: Vec<String>,
    /// This clone's writer id (`.git/rutter/machine`).
    pub machine: Option<String>,
    /// `up-to-date`, `ahead`, `behind`, `diverged` or `never-fetched`, as of the last fetch.
    pub relation: &'static str,
    /// The last sync with this remote refused what it sent (`sync/refused.rs`).
    pub refused: Option<crate::sync::refused::Noted>,
    /// Who can read the remote's copy: `encrypted`, `local` or `plaintext`.
    pub exposure: &'static str,
    /// The host that can read a plaintext remote.
    pub host: Option<String>,
    /// `rutter.autoSync` as set (`None`: unset).
    pub auto_sync: Option<String>,
    /// Why `rutter.autoSync` is not an interval, when it is not.
    pub auto_sync_error: Option<String>,
    /// When the last sync started (`.git/rutter/sync-last`).
    pub last_sync: Option<String>,
    /// The sync that runs now, or that was stopped before it ended (`.git/rutter/sync-running`).
    pub running: Option<crate::sync::running::Held>,
    /// How long a sync may run before it is named (`sync::running::stuck_after`).
    pub stuck_after: std::time::Duration,
    /// A sync moved the ref and stopped before it brought the working files along (the next
    /// sync does; `sync::follow`).
    pub checkout_unfinished: bool,
}

/// A record file that differs from its commit in the working tree.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct WorkingChange {
    /// The finding's kind as `verify` names it: `deleted`, `edited`, `truncated`, `symlink`,
    /// `unparseable` or `unverified`.
    pub kind: &'static str,
    /// The file (or record folder) as `verify` names it.
    pub path: String,
}

/// The tip commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tip {
    pub id: String,
    /// Commit time, seconds since the epoch.
    pub time: i64,
    pub subject: String,
}

/// Reads the record state of a git vault.
pub fn record_state(vault: &impl Located) -> Result<RecordState, StoreError> {
    let store = Store::open(vault)?;
    let state_dir = store.state_dir().to_path_buf();
    let (pending, pending_unreadable) = count_pending(&state_dir);
    let watch = store.config_string(crate::setup::settings::WATCH_KEY);
    let watch_error = watch
        .as_deref()
        .and_then(|v| crate::setup::settings::watch_idle(v).err())
        .map(|e| e.to_string());
    let mut out = RecordState {
        pending,
        pending_unreadable,
        aside: crate::recorder::aside::waiting(store.root(), &state_dir),
        watch,
        watch_error,
        sign_invalid: store.sign_setting_invalid(),
        verified_tip: crate::audit::cache::verified_tip(store.worktree_state_dir()),
        reflog: store.has_reflog(),
        ..Default::default()
    };
    let Some(tip) = store.tip()? else {
        return Ok(out);
    };
    let commit = store.commit_info(tip)?;
    out.tip = Some(Tip {
        id: tip.to_string(),
        time: commit.time,
        subject: commit.subject,
    });
    out.since_verified = out
        .verified_tip
        .as_deref()
        .and_then(|v| ObjectId::from_hex(v).ok())
        .and_then(|v| commits_between(&store, v, tip));
    out.working = working_changes(&store, tip);
    out.use_log_waiting = use_log_waiting(&store, tip);
    out.sync = sync_state(&store, &state_dir, tip);
    if out.sync.is_none() {
        out.record_remotes = record_remotes(&store);
    }
    Ok(out)
}

/// The remotes whose records this vault holds a remote-tracking ref of.
/// The working-tree findings `verify` would report now ([`crate::audit::worktree::outstanding`]),
/// one per file and kind; none when the check itself cannot run (`verify` says why).
fn working_changes(store: &Store, tip: ObjectId) -> Vec<WorkingChange> {
    let found = crate::audit::worktree::outstanding(store, tip).unwrap_or_default();
    let mut out: Vec<WorkingChange> = Vec::new();
    for f in found {
        let change = WorkingChange {
            kind: f.kind.as_str(),
            path: f.path.unwrap_or_default(),
        };
        if !out.contains(&change) {
            out.push(change);
        }
    }
    out
}

/// The complete lines of the working use log past its committed size: read from that offset
/// only, never following a symlink; 0 when it cannot be read.
fn use_log_waiting(store: &Store, tip: ObjectId) -> usize {
    use std::io::{Read, Seek, SeekFrom};
    use std::os::unix::fs::OpenOptionsExt;
    let path = crate::records::paths::USE_LOG;
    let committed = store.committed_size(tip, path).ok().flatten().unwrap_or(0);
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(store.root().join(path));
    let Ok(mut file) = opened else { return 0 };
    let mut tail = Vec::new();
    let read = file
        .seek(SeekFrom::Start(committed))
        .and_then(|_| file.read_to_end(&mut tail));
    match read {
        Ok(_) => memchr::memchr_iter(b'\n', &tail).count(),
        Err(_) => 0,
    }
}

fn record_remotes(store: &Store) -> Vec<String> {
    let tracking = store.record_tracking_refs().unwrap_or_default();
    tracking
        .into_iter()
        .filter_map(|(name, _)| {
            let remote = name
                .strip_prefix("refs/remotes/")?
                .strip_suffix("/rutter/records")?;
            Some(remote.to_string())
        })
        .collect()
}

/// The sync settings, read without fetching (`None` when no sync remote is set).
fn sync_state(store: &Store, state_dir: &Path, tip: ObjectId) -> Option<SyncState> {
    let remote = store
        .config_string(crate::sync::SYNC_REMOTE_KEY)
        .filter(|r| !r.is_empty())?;
    let tracking = crate::store::transport::tracking_ref(&remote);
    let theirs = store.ref_target(&tracking).ok().flatten();
    let relation = match theirs {
        None => "never-fetched",
        Some(t) if t == tip => "up-to-date",
        Some(t) => match store.ahead_behind(tip, t) {
            Ok((_, 0)) => "ahead",
            Ok((0, _)) => "behind",
            _ => "diverged",
        },
    };
    let refused = crate::sync::refused::read(state_dir).filter(|n| n.remote == remote);
    let url = store.remote_url(&remote);
    let set_up_remotes = match url {
        Some(_) => Vec::new(),
        None => crate::sync::record_fetchers(store),
    };
    let exposure = url.as_deref().map(crate::sync::exposure::of_url);
    let auto_sync = store.config_string(crate::sync::auto::AUTO_SYNC_KEY);
    let auto_sync_error = auto_sync
        .as_deref()
        .and_then(|v| crate::sync::auto::parse_interval(v).err())
        .map(|e| e.to_string());
    Some(SyncState {
        refused,
        exposure: exposure.as_ref().map_or("local", |e| e.as_str()),
        host: match exposure {
            Some(crate::sync::exposure::Exposure::Hosted(h)) => Some(h),
            _ => None,
        },
        auto_sync,
        auto_sync_error,
        last_sync: crate::sync::auto::last_start(state_dir).map(|i| i.iso()),
        running: crate::sync::running::held(state_dir),
        stuck_after: crate::sync::running::stuck_after(crate::store::transport::bounds(store).wall),
        checkout_unfinished: matches!(
            crate::sync::follow::read(state_dir),
            Some(crate::sync::follow::Note::Moving { .. })
        ),
        url,
        set_up_remotes,
        fetches_records: crate::sync::fetches_records(store, &remote).unwrap_or(false),
        machine: crate::machine::read(state_dir),
        relation,
        remote,
    })
}

/// Commits from `tip` back to `base` when `base` is among the [`COUNT_LIMIT`] newest commits
/// (0 when it is the tip); `None` otherwise (older, or not an ancestor).
fn commits_between(store: &Store, base: ObjectId, tip: ObjectId) -> Option<usize> {
    store.steps_back(tip, base, COUNT_LIMIT + 1).ok()?
}

/// `(readable, unreadable)` journal records, counted by name and read without creating or
/// changing anything.
fn count_pending(state_dir: &Path) -> (usize, usize) {
    let Ok(Some(dir)) = crate::fsx::Dir::open(state_dir).and_then(|d| d.open_dir("pending", false))
    else {
        return (0, 0);
    };
    let names: Vec<String> = dir
        .list()
        .unwrap_or_default()
        .into_iter()
        .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
        .collect();
    let readable = names
        .iter()
        .filter(|n| {
            dir.read(n)
                .ok()
                .flatten()
                .is_some_and(|b| crate::journal::parse_record(n, &b).is_ok())
        })
        .count();
    (readable, names.len() - readable)
}
