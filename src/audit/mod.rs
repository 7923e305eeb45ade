//! `verify`: has anything in the record changed since it was committed? Four checks, each
//! reporting findings that name the entry, the commit that added it and the kind (DESIGN §6):
//! the history of `refs/rutter/records` ([`history`]), the ref's moves ([`refcheck`]), the
//! working tree against the tip ([`worktree`]) and, on request, cited notes ([`notes`]). The
//! same comparison shown as a unified diff is `git rutter diff` ([`diff`]).

pub(crate) mod added_by;
pub(crate) mod cache;
pub(crate) mod diff;
pub(crate) mod entries_index;
pub(crate) mod finding;
pub(crate) mod history;
pub mod intake;
pub(crate) mod merges;
pub(crate) mod notes;
pub(crate) mod purged;
pub(crate) mod refcheck;
pub(crate) mod reflog;
pub(crate) mod worktree;

pub(crate) use finding::{Finding, Kind};

use crate::store::{Store, StoreError};

/// What to check.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options<'a> {
    /// Re-walk the whole history instead of the commits since the last verified tip.
    pub full: bool,
    /// Leave the verify cache as it was: `log` reads findings without moving the audit's
    /// watermark (the last verified tip), which only `verify` itself moves.
    pub read_only: bool,
    /// Also report cited notes changed in place since capture.
    pub notes: bool,
    /// Fill [`Report::added_by`] (`log` shows it; verify itself reads the map only to name the
    /// commit behind a finding).
    pub entries: bool,
    /// Check only the working day files of these stems (`log` shows entries of these days
    /// only); every record file when `None`.
    pub only_days: Option<&'a std::collections::BTreeSet<String>>,
}

/// Everything verify found.
#[derive(Debug, Default)]
pub struct Report {
    pub findings: Vec<Finding>,
    /// Commits examined by the history check.
    pub commits_checked: usize,
    pub tip: Option<String>,
    /// Entry (or binding) id → the commit that added it, when [`Options::entries`] asked.
    pub added_by: added_by::AddedBy,
    /// The capture lock could not be had: what was read may be mid-capture (best effort).
    pub lock_missed: bool,
}

/// How long a read-only run (`log`) waits for the capture lock.
const READ_ONLY_WAIT: std::time::Duration = std::time::Duration::from_millis(200);

impl Report {
    /// Whether any finding (other than pending lines or acknowledged ones) was made.
    pub(crate) fn failed(&self) -> bool {
        self.findings.iter().any(|f| f.counts())
    }
}

/// Runs every check on the record `store` keeps.
pub fn verify(store: &Store, opts: Options<'_>) -> Result<Report, StoreError> {
    // Object hashes are `git fsck`'s job; re-hashing every tree and blob of a long history
    // (150 KB sessions trees, SHA-1 with collision detection) was most of `--full`.
    crate::store::skip_read_verification();
    if opts.full {
        crate::store::skip_object_cache();
        crate::store::bound_pack_maps();
    }
    // The tip, reflog and witness log are read together under the capture lock (a capture
    // landing between the reads would look like a rewind); without the lock, best effort.
    let mut cache = cache::VerifyCache::load_days(
        store.worktree_state_dir(),
        opts.full,
        opts.only_days.is_some(),
    );
    // `log` (read-only) never waits on a sync that holds the lock through its push: it reads
    // without it after a short try, and says so.
    let wait = match opts.read_only {
        true => READ_ONLY_WAIT,
        false => crate::lock::INTERACTIVE_WAIT,
    };
    let lock = crate::recorder::Recorder::try_snapshot(store.state_dir(), wait);
    let lock_missed = lock.missed();
    let Some(tip) = store.tip()? else {
        return Ok(Report {
            findings: refcheck::missing_ref(store).into_iter().collect(),
            lock_missed,
            ..Default::default()
        });
    };
    // `--full` checks every reflog line; so does a run without a baseline.
    let seen = cache.reflog_seen.clone().filter(|_| !opts.full);
    let logs = refcheck::Logs::of(store);
    let mut report = Report {
        tip: Some(tip.to_string()),
        lock_missed,
        ..Default::default()
    };
    let (h, refs, worktree) = std::thread::scope(|scope| {
        // The two logs (15 MB to read and hash at 70,000 captures) are read on another core,
        // still under the lock, while the history and the working tree are checked.
        let reading = scope.spawn(move || {
            let snapshot = logs.read(tip, seen.as_ref());
            drop(lock);
            snapshot
        });
        // A full check reads every working file again (3,650 at ten years): on a thread of its
        // own, beside the revwalk and the history check; its findings name the commits that
        // added their entries once the walk has learnt them.
        let checking = match opts.full {
            true => {
                let other = store.reopen()?;
                let (stamps, only) = (std::mem::take(&mut cache.stamps), opts.only_days);
                Some(scope.spawn(move || working_tree(&other, tip, stamps, only)))
            }
            false => None,
        };
        let h = history::check(store, tip, &mut cache, opts.read_only);
        let checked = match checking {
            Some(thread) => Some(joined(thread)),
            None => h.is_ok().then(|| {
                let stamps = std::mem::take(&mut cache.stamps);
                working_tree(store, tip, stamps, opts.only_days)
            }),
        };
        let snapshot = joined(reading);
        let h = h?;
        let mut worktree = Vec::new();
        if let Some((found, stamps)) = checked {
            cache.stamps = stamps;
            worktree = found?;
            worktree::attribute(&mut worktree, &mut cache);
        }
        let snapshot = snapshot?;
        let refs = refcheck::check(store, &snapshot, &mut cache, opts.full, &h)?;
        Ok::<_, StoreError>((h, refs, worktree))
    })?;
    let worktree = second_look(store, worktree, &mut cache, wait, opts.only_days)?;
    report.commits_checked = h.commits;
    report.findings.extend(h.findings);
    report.findings.extend(refs);
    report.findings.extend(worktree);
    if opts.notes {
        report.findings.extend(notes::check(store, tip)?);
    }
    report.findings.extend(purged::check(store, tip)?);
    finding::acknowledge(&mut report.findings, store.root());
    // A rewritten witness log stays a finding until acknowledged; then what was read becomes
    // the baseline.
    if !report
        .findings
        .iter()
        .any(|f| refcheck::is_witness_finding(f) && f.counts())
    {
        cache.accept_tips();
    }
    // Likewise a reflog that no longer starts with the accepted bytes.
    if !report
        .findings
        .iter()
        .any(|f| refcheck::is_reflog_finding(f) && f.counts())
    {
        cache.accept_reflog();
    }
    if !report.findings.iter().any(|f| f.kind.is_history_or_ref()) {
        cache.verified_tip = Some(tip.to_string());
    }
    // The entry map now names the commit of every entry up to the tip.
    cache.entries_tip = Some(tip.to_string());
    match opts.read_only {
        false => cache.save(store.worktree_state_dir()),
        true => cache.save_read_only(store.worktree_state_dir()),
    }
    if opts.entries {
        report.added_by = cache.take_added_by();
    }
    Ok(report)
}

/// The working-tree check ([`worktree::check_files`]) with the stamps it consults and updates,
/// handed back with its findings.
fn working_tree(
    store: &Store,
    tip: crate::objectid::ObjectId,
    mut stamps: cache::Stamps,
    only_days: Option<&std::collections::BTreeSet<String>>,
) -> (Result<Vec<Finding>, StoreError>, cache::Stamps) {
    pause_before_the_working_tree();
    let found = worktree::check_files(store, tip, &mut stamps, only_days);
    (found, stamps)
}

/// What a scoped thread returned; its panic goes on in this thread.
fn joined<T>(thread: std::thread::ScopedJoinHandle<'_, T>) -> T {
    match thread.join() {
        Ok(done) => done,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// `unverified` findings of a working-tree check made without the capture lock may be lines a
/// capture was landing (appended, then committed and its journal record removed, between the
/// tip this check read and its look at the journal). They are judged again under the lock,
/// against the tip and the journal as they are then (as recall does): only a line that is still
/// neither committed nor journalled is reported.
fn second_look(
    store: &Store,
    found: Vec<Finding>,
    cache: &mut cache::VerifyCache,
    wait: std::time::Duration,
    only_days: Option<&std::collections::BTreeSet<String>>,
) -> Result<Vec<Finding>, StoreError> {
    if !found.iter().any(|f| f.kind == Kind::Unverified) {
        return Ok(found);
    }
    let _lock = crate::recorder::Recorder::try_snapshot(store.state_dir(), wait);
    let Some(tip) = store.tip()? else {
        return Ok(found);
    };
    let again: std::collections::HashSet<String> = worktree::check(store, tip, cache, only_days)?
        .into_iter()
        .filter(|f| f.kind == Kind::Unverified)
        .map(|f| f.id)
        .collect();
    Ok(found
        .into_iter()
        .filter(|f| f.kind != Kind::Unverified || again.contains(&f.id))
        .collect())
}

/// Debug builds only: `RUTTER_VERIFY_WORKTREE_PAUSE` names a file that verify creates once it
/// has read the tip, then waits (at most a minute) until the file is gone before it checks the
/// working tree, so a test can land a capture in exactly that window (the trial's F-6) and
/// check that [`second_look`] does not report it, with no guess at how long verify takes.
fn pause_before_the_working_tree() {
    #[cfg(debug_assertions)]
    if let Some(flag) = std::env::var_os("RUTTER_VERIFY_WORKTREE_PAUSE") {
        let flag = std::path::PathBuf::from(flag);
        if std::fs::write(&flag, b"").is_ok() {
            let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while flag.exists() && std::time::Instant::now() < until {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    }
}
