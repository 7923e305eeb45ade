//! `git rutter sync`: one record across machines through a git remote (DESIGN §5,
//! spec/sync.md).
//!
//! Fetch `refs/rutter/*` into `refs/remotes/<remote>/rutter/*`; then, under the capture lock,
//! commit what is pending, fast-forward when the remote only added commits, merge when both
//! sides did (a two-parent commit whose files are the line union of both, [`merge`]), bring the
//! working files along ([`checkout`]), and push without ever forcing. A push that finds the
//! remote moved fetches and merges again, a bounded number of times.

pub(crate) mod auto;
pub(crate) mod checkout;
pub(crate) mod exposure;
pub(crate) mod follow;
pub(crate) mod merge;
pub(crate) mod purges;
pub(crate) mod refused;
pub mod running;
pub(crate) mod setup;
pub mod tally;
pub(crate) mod union;

use crate::audit::intake::{IntakeError, Refusal};
use crate::clock::Instant;
use crate::lock::{self, LockError};
use crate::objectid::ObjectId;
use crate::recorder::Recorder;
use crate::store::transport::{self, Pushed, TransportError};
use crate::store::{Store, StoreError};

/// Git config key naming the remote `git rutter sync` uses without an argument.
pub(crate) const SYNC_REMOTE_KEY: &str = "rutter.syncRemote";
/// How many times a push that finds the remote moved fetches and merges again.
const MAX_ROUNDS: usize = 5;

/// Why sync could not run.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("no sync remote is set")]
    NoRemote,
    /// No remote has that name; `set_up` are the remotes that fetch `refs/rutter/*` under
    /// another name (a `git remote rename` leaves `rutter.syncRemote` behind).
    #[error("this vault has no remote named {name:?}")]
    UnknownRemote { name: String, set_up: Vec<String> },
    /// A name git would read as an option (spec/sync.md), or takes for no remote's name.
    #[error("{0:?} {why}, so sync refuses it", why = match .0.starts_with('-') { true => "starts with '-', which git would read as an option", false => "is not a name git takes for a remote" })]
    BadRemoteName(String),
    /// Not a remote's name and no remote is configured under it: a URL or a path, most likely.
    #[error("{0:?} is not the name of a git remote, so sync refuses it")]
    NotARemote(String),
    #[error("the remote {0} is not set up for rutter")]
    NotConfigured(String),
    #[error("refs/rutter/records does not exist in this vault yet")]
    NoRecords,
    #[error("{0}")]
    Shared(String),
    /// `--setup` found other people's commits on the remote.
    #[error("the remote {remote} holds commits by other people ({}), so it looks shared: everything sync pushes (your records and copies of the notes they cite) would be readable by them", authors(others))]
    LooksShared { remote: String, others: Vec<String> },
    /// What the remote sent is not a record history: nothing was taken (spec/sync.md, "What
    /// sync takes in").
    #[error("{}", refused_message(remote, *tip, refusal))]
    Refused {
        remote: String,
        tip: Option<ObjectId>,
        refusal: Box<Refusal>,
    },
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Lock(#[from] LockError),
}

impl crate::hint::Hinted for SyncError {
    fn hint(&self) -> Option<String> {
        Some(match self {
            SyncError::NoRemote => "Run `git rutter sync --setup REMOTE` once with a remote only you can read (there is no default, so a shared notes remote never receives your memory by accident).".into(),
            SyncError::UnknownRemote { name, set_up } => match set_up.first() {
                Some(other) => renamed_hint(set_up, other),
                None => {
                    let r = crate::argv::quote(name);
                    format!("Add it with `git remote add {r} URL`, then run `git rutter sync --setup {r}`.")
                }
            },
            SyncError::BadRemoteName(r) => format!(
                "Rename it (`git remote rename -- {} NAME`), then run `git rutter sync --setup NAME`.",
                crate::argv::quote(r)
            ),
            SyncError::NotARemote(r) => format!(
                "Sync takes a remote's name: add one for it (`git remote add NAME {}`), then run `git rutter sync --setup NAME`.",
                crate::argv::quote(r)
            ),
            SyncError::NotConfigured(r) => format!("Run `git rutter sync --setup {r}` first (it checks that the remote is yours and makes `git fetch` bring the records)."),
            SyncError::NoRecords => "Run `git rutter init` first.".into(),
            SyncError::LooksShared { remote, .. } => format!("Use a remote only you can read (`git remote add NAME URL`, then `git rutter sync --setup NAME`); if those identities are all yours (another machine's git identity), run `git rutter sync --setup {remote} --force`."),
            SyncError::Transport(e) => return e.hint(),
            SyncError::Store(e) => return e.hint(),
            SyncError::Shared(_)
            | SyncError::Refused { .. }
            | SyncError::Lock(_) => return None,
        })
    }

    /// A remote not set up, not named or not the user's own, and a vault without a record: the
    /// user sets it up; what a remote sent that is refused: nothing was taken.
    fn users_to_fix(&self) -> bool {
        matches!(
            self,
            SyncError::NoRemote
                | SyncError::UnknownRemote { .. }
                | SyncError::BadRemoteName(_)
                | SyncError::NotARemote(_)
                | SyncError::NotConfigured(_)
                | SyncError::NoRecords
                | SyncError::Refused { .. }
                | SyncError::Shared(_)
                | SyncError::LooksShared { .. }
        )
    }
}

/// What to run when `rutter.syncRemote` names no remote but `set_up` (the first, `other`) fetch
/// the records: the remote was renamed, most likely.
pub(crate) fn renamed_hint(set_up: &[String], other: &str) -> String {
    let who = match set_up {
        [_] => format!("The remote {other} fetches"),
        _ => format!("The remotes {} fetch", set_up.join(", ")),
    };
    format!(
        "{who} this vault's records (a `git remote rename` leaves rutter.syncRemote behind): run `git rutter sync --setup {}` to sync with it.",
        crate::argv::quote(other)
    )
}

/// The first three of `others`, and how many more.
fn authors(others: &[String]) -> String {
    let shown: Vec<&str> = others.iter().take(3).map(String::as_str).collect();
    match others.len().saturating_sub(3) {
        0 => shown.join(", "),
        n => format!("{} and {n} more", shown.join(", ")),
    }
}

/// What the local ref did.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Both sides hold the same tip.
    #[default]
    UpToDate,
    /// The remote only added commits: the local ref moved to its tip.
    FastForward,
    /// Both sides added commits: a merge commit joins them.
    Merged,
    /// Only this machine added commits: nothing to take in.
    Ahead,
}

/// What a sync did.
#[derive(Debug, Default, Clone)]
pub struct SyncReport {
    pub remote: String,
    /// The remote's URL without credentials.
    pub url: Option<String>,
    /// The local tip before (after committing what was pending) and after.
    pub before: Option<ObjectId>,
    pub after: Option<ObjectId>,
    /// The remote's tip as last fetched (`None`: the remote has no records yet).
    pub remote_tip: Option<ObjectId>,
    /// The remote held no records although this machine had fetched them before (it was
    /// recreated empty, or its records ref deleted).
    pub remote_emptied: bool,
    pub action: Action,
    /// Merge commits made (one per round that had to merge).
    pub merges: Vec<ObjectId>,
    /// The merges' trees had no common history (each machine had started its own record).
    pub unrelated: bool,
    /// Files the merges wrote as a line union, and `@1` day files kept beside each other.
    pub unioned: Vec<String>,
    pub split: Vec<(String, String)>,
    /// The record lines this machine gained from the remote, and those the push gave the
    /// remote that it did not hold (entries apart from retractions and other lines).
    pub received: tally::Tally,
    pub sent: tally::Tally,
    pub pushed: bool,
    /// Why the remote refused the push, when it did.
    pub refused: Option<String>,
    /// The remote kept moving: every round's push found it ahead again.
    pub gave_up: bool,
    /// The remote is a vault with a working tree on this machine: its records were taken in,
    /// none were pushed into it ([`live_vault`]).
    pub not_sent: Option<std::path::PathBuf>,
    pub checkout: checkout::Checkout,
    /// Entries that were pending and were committed first.
    pub committed_pending: usize,
    /// Record files whose working copy was edited after commit (found committing the pending).
    pub diverged: Vec<String>,
    /// Tips that could not be witnessed in `.git/rutter/tips`.
    pub unwitnessed: Vec<String>,
    /// Commits of the remote checked before they were taken in.
    pub checked: usize,
    /// Entries the remote's record had purged, purged here too (spec/purge.md).
    pub purges_taken: Vec<String>,
    /// Entries this machine purged, sent to the remote by replacing its history.
    pub purges_sent: Vec<String>,
    /// The old objects could not be expired after a purge crossed (why).
    pub expire_error: Option<String>,
}

/// The remote `git rutter sync` uses: `given`, else `rutter.syncRemote`; it must exist and
/// be set up for rutter (its fetch refspecs hold [`transport::fetch_refspec`]).
pub fn sync_remote(store: &Store, given: Option<&str>) -> Result<String, SyncError> {
    let configured = store.config_string(SYNC_REMOTE_KEY);
    let name = given
        .map(str::to_string)
        .or(configured)
        .filter(|n| !n.is_empty())
        .ok_or(SyncError::NoRemote)?;
    known_remote(store, &name)?;
    if !fetches_records(store, &name)? {
        return Err(SyncError::NotConfigured(name));
    }
    Ok(name)
}

/// Refuses a name that is no configured remote (or could be read as an option).
pub fn known_remote(store: &Store, name: &str) -> Result<(), SyncError> {
    if name.starts_with('-') || !Store::valid_remote_name(name) {
        // A name git does not take is only a remote when the config names one so (by hand).
        let configured = store.config_string(&format!("remote.{name}.url")).is_some();
        return Err(match configured {
            true => SyncError::BadRemoteName(name.to_string()),
            false => SyncError::NotARemote(name.to_string()),
        });
    }
    if !store.has_remote(name) {
        return Err(SyncError::UnknownRemote {
            name: name.to_string(),
            set_up: record_fetchers(store),
        });
    }
    Ok(())
}

/// The remotes set up to fetch the records ([`fetches_records`]): after a `git remote rename`
/// (which moves the refspec along), the remote `rutter.syncRemote` still names under its old
/// name.
pub fn record_fetchers(store: &Store) -> Vec<String> {
    store
        .remote_names()
        .into_iter()
        .filter(|name| fetches_records(store, name).unwrap_or(false))
        .collect()
}

/// Whether `remote.<name>.fetch` brings `refs/rutter/*`.
pub fn fetches_records(store: &Store, name: &str) -> Result<bool, SyncError> {
    let want = transport::fetch_refspec(name);
    let values = store.config_values(&format!("remote.{name}.fetch"))?;
    Ok(values.contains(&want))
}

/// Syncs the records with `remote` (already checked by [`sync_remote`]). A refusal of what the
/// remote sent is noted for `status` ([`refused::note`]); a sync that takes in or sends its
/// records clears the note.
pub fn sync(store: &Store, remote: &str, now: Instant) -> Result<SyncReport, SyncError> {
    // One sync at a time: a second one waits for this one's end.
    let _running = running::start(store.state_dir(), now, running::WAIT)?;
    let result = sync_unnoted(store, remote, now);
    match &result {
        Err(SyncError::Refused {
            remote,
            tip,
            refusal,
        }) => refused::note(store.state_dir(), remote, *tip, refusal, now),
        Ok(_) => {
            refused::clear(store.state_dir(), remote);
            auto::note_start(store.state_dir(), now);
        }
        Err(_) => {}
    }
    result
}

/// Fetches `remote`'s records; git's object checks refusing what it sent is a refusal.
pub fn fetch_records(store: &Store, remote: &str) -> Result<(), SyncError> {
    match transport::fetch(store.root(), remote, transport::bounds(store)) {
        Err(TransportError::Unsound { message, .. }) => Err(SyncError::Refused {
            remote: remote.to_string(),
            tip: None,
            refusal: Box::new(Refusal {
                commit: None,
                path: None,
                kind: None,
                rule: format!(
                    "git's own object checks (fetch.fsckObjects) refused what it sent: {message}"
                ),
            }),
        }),
        other => Ok(other?),
    }
}

fn sync_unnoted(store: &Store, remote: &str, now: Instant) -> Result<SyncReport, SyncError> {
    crate::store::skip_read_verification();
    let mut report = SyncReport {
        remote: remote.to_string(),
        url: store.remote_url(remote),
        ..Default::default()
    };
    // No network phase runs under the capture lock: captures are never kept waiting on a
    // remote that is slow or hangs.
    let mut seen = tracking_tip(store, remote)?;
    fetch_records(store, remote)?;
    report.remote_emptied = seen.is_some() && tracking_tip(store, remote)?.is_none();
    let start = begin(store, now, &mut report)?;
    report.before = Some(start);
    let mut pushed_over = None;
    report.gave_up = true;
    for round in 0..MAX_ROUNDS {
        if round > 0 {
            fetch_records(store, remote)?;
        }
        pushed_over = tracking_tip(store, remote)?;
        if sync_round(store, remote, now, &mut report, &mut seen)? {
            report.gave_up = false;
            break;
        }
    }
    if !report.purges_taken.is_empty() || (report.pushed && !report.purges_sent.is_empty()) {
        report.expire_error = store.expire_unreachable(false).err().map(|e| e.to_string());
    }
    report.after = Some(store.tip()?.ok_or(SyncError::NoRecords)?);
    if let (true, Some(pushed)) = (report.pushed, report.remote_tip) {
        // What the remote held when the push was accepted: what another machine pushed during
        // this sync was received here, never sent.
        let mut trees = store.trees()?;
        let before = pushed_over.map(|t| store.tree_of(t)).transpose()?;
        report.sent = tally::Tally::between(&mut trees, before, store.tree_of(pushed)?)?;
    }
    Ok(report)
}

/// Under the capture lock (a [`Recorder`]): finishes the checkout a stopped sync left
/// ([`follow::recover`]) and commits what is pending. The tip to sync from.
fn begin(store: &Store, now: Instant, report: &mut SyncReport) -> Result<ObjectId, SyncError> {
    let recorder = Recorder::lock(store, lock::INTERACTIVE_WAIT)?;
    recorder.journal_path().map_err(StoreError::from)?;
    // Committing what is pending would create the ref by adopting the working files: a
    // vault that never ran `init` should start from the remote's records instead.
    if store.tip()?.is_none() {
        return Err(SyncError::NoRecords);
    }
    report.checkout.extend(follow::recover(store, &recorder)?);
    let pending = recorder.commit(&[], now, store.sign_wanted())?;
    report.committed_pending = pending.entries.len();
    report.diverged = pending.diverged;
    report.unwitnessed.extend(pending.unwitnessed);
    store.tip()?.ok_or(SyncError::NoRecords)
}

/// One round: take in the remote's tip, then push. `true` when done (pushed, nothing to push,
/// or refused), `false` when the remote moved and another round is needed.
fn sync_round(
    store: &Store,
    remote: &str,
    now: Instant,
    report: &mut SyncReport,
    seen: &mut Option<ObjectId>,
) -> Result<bool, SyncError> {
    let fetched = tracking_tip(store, remote)?;
    report.remote_tip = fetched;
    let (mut theirs, mut lease) = (fetched, None);
    if let Some(t) = fetched {
        crate::audit::intake::check_tip(store, t).map_err(|e| intake_error(remote, t, e))?;
        let crossing = purges::cross(store, remote, *seen, t, report)?;
        (theirs, lease) = (Some(crossing.theirs), crossing.lease);
    }
    *seen = fetched;
    if let Some(theirs) = theirs {
        // Checked before the lock is taken: captures meanwhile only add commits on the
        // local side, so what `theirs` brings can only shrink.
        let local = store.tip()?.ok_or(SyncError::NoRecords)?;
        if theirs != local && !store.descends(local, theirs)? {
            report.checked += take_in(store, remote, theirs, local)?;
        }
    }
    let tip = {
        let recorder = Recorder::lock(store, lock::INTERACTIVE_WAIT)?;
        if let Some(theirs) = theirs {
            join(&recorder, remote, theirs, now, report)?;
        }
        store.tip()?.ok_or(SyncError::NoRecords)?
    };
    if Some(tip) == fetched {
        return Ok(true);
    }
    if let Some(worktree) = live_vault(store, remote) {
        report.not_sent = Some(worktree);
        return Ok(true);
    }
    match transport::push(store.root(), remote, tip, lease, transport::bounds(store))? {
        Pushed::Accepted => {
            let tracking = transport::tracking_ref(remote);
            store.set_tracking_ref(&tracking, tip, "rutter: sync: pushed")?;
            report.remote_tip = Some(tip);
            report.pushed = true;
            Ok(true)
        }
        Pushed::Behind(_) => Ok(false),
        Pushed::Refused(why) => {
            // A refusal that came with a moved remote is a race after all.
            fetch_records(store, remote)?;
            if tracking_tip(store, remote)? != fetched {
                return Ok(false);
            }
            report.refused = Some(why);
            Ok(true)
        }
    }
}

/// The working tree of `remote` when it is a clone with one on this machine (a path or
/// `file://` URL, not bare): a vault whose records are taken from, never pushed into, since a
/// push would move its record under its day files, which then read as cut short there.
fn live_vault(store: &Store, remote: &str) -> Option<std::path::PathBuf> {
    let url = store.remote_url(remote)?;
    if exposure::of_url(&url) != exposure::Exposure::Local || url.starts_with("gcrypt::") {
        return None;
    }
    let path = url.strip_prefix("file://").unwrap_or(&url);
    store.worktree_at(&store.root().join(path))
}

/// Under the capture lock (`recorder`): moves the local ref to `theirs` (fast-forward) or to
/// a merge with it, and brings the working files along in the same breath
/// ([`follow::advance`]).
fn join(
    recorder: &Recorder<'_>,
    remote: &str,
    theirs: ObjectId,
    now: Instant,
    report: &mut SyncReport,
) -> Result<(), SyncError> {
    let store = recorder.store()?;
    let local = store.tip()?.ok_or(SyncError::NoRecords)?;
    if theirs == local || store.descends(local, theirs)? {
        if report.action == Action::UpToDate && theirs != local {
            report.action = Action::Ahead;
        }
        return Ok(());
    }
    let to = if store.descends(theirs, local)? {
        report.action = Action::FastForward;
        theirs
    } else {
        let oid = merge_commit(store, remote, local, theirs, now, report)?;
        report.merges.push(oid);
        report.action = Action::Merged;
        oid
    };
    let message = match to == theirs {
        true => format!(
            "rutter: sync: fast-forward to {} from {}",
            crate::shortid::long(&theirs),
            one_line(remote)
        ),
        false => format!("rutter: merge {}", one_line(remote)),
    };
    let out = follow::advance(store, recorder, local, to, || {
        recorder.advance_ref(local, to, &message)
    })?;
    report.checkout.extend(out);
    report.unwitnessed.extend(store.after_commit(to));
    let mut trees = store.trees()?;
    let (old, new) = (store.tree_of(local)?, store.tree_of(to)?);
    report
        .received
        .extend(tally::Tally::between(&mut trees, Some(old), new)?);
    Ok(())
}

/// Checks what taking in `theirs` would bring (every commit not reachable from `local`); the
/// number of commits checked, or the refusal.
fn take_in(
    store: &Store,
    remote: &str,
    theirs: ObjectId,
    local: ObjectId,
) -> Result<usize, SyncError> {
    crate::audit::intake::check_incoming(store, theirs, Some(local))
        .map_err(|e| intake_error(remote, theirs, e))
}

/// What the intake's answer about `remote`'s tip `theirs` means for sync.
pub(crate) fn intake_error(remote: &str, theirs: ObjectId, e: IntakeError) -> SyncError {
    match e {
        IntakeError::Refused(refusal) => SyncError::Refused {
            remote: remote.to_string(),
            tip: Some(theirs),
            refusal: Box::new(refusal),
        },
        IntakeError::Store(e) => SyncError::Store(e),
    }
}

/// The remote's record tip as last fetched.
pub fn tracking_tip(store: &Store, remote: &str) -> Result<Option<ObjectId>, StoreError> {
    store.ref_target(&transport::tracking_ref(remote))
}

/// Writes the merge of `local` and `theirs` (the ref is not moved).
fn merge_commit(
    store: &Store,
    remote: &str,
    local: ObjectId,
    theirs: ObjectId,
    now: Instant,
    report: &mut SyncReport,
) -> Result<ObjectId, StoreError> {
    let mut trees = store.trees()?;
    let (ours_tree, theirs_tree) = (store.tree_of(local)?, store.tree_of(theirs)?);
    let merged = merge::merge_trees(store, &mut trees, ours_tree, theirs_tree)?;
    report.unrelated |= !store.related(local, theirs);
    let message = merge_message(remote, local, theirs, &merged);
    let oid = store.write_commit_of(
        &[local, theirs],
        merged.tree,
        &message,
        now,
        store.sign_wanted(),
    )?;
    report.unioned.extend(merged.unioned);
    report.split.extend(merged.split);
    Ok(oid)
}

/// Why a remote's records were refused, that nothing was taken, and where to look.
fn refused_message(remote: &str, tip: Option<ObjectId>, refusal: &Refusal) -> String {
    let at = tip
        .map(|t| format!(" at {}", crate::shortid::long(&t)))
        .unwrap_or_default();
    let look = match tip {
        Some(_) => format!(
            "Inspect them with `git log --stat {}`",
            transport::tracking_ref(remote)
        ),
        None => "git stored none of what it sent".to_string(),
    };
    format!(
        "refused the records of {remote}{at}: {refusal}. Nothing was taken: the local ref, the record files and the remote are as they were. {look}; see docs/sync.md, \"A refused remote\""
    )
}

/// `rutter: merge <remote>`, what was merged, and the trailers.
fn merge_message(remote: &str, local: ObjectId, theirs: ObjectId, m: &merge::MergedTree) -> String {
    let mut body = format!(
        "Merged {} from {} into {}: {} record file(s) written as the union of both sides' lines",
        crate::shortid::long(&theirs),
        one_line(remote),
        crate::shortid::long(&local),
        m.unioned.len()
    );
    if !m.split.is_empty() {
        body.push_str(&format!(
            ", {} @1 day file(s) kept whole beside each other",
            m.split.len()
        ));
    }
    format!(
        "rutter: merge {}\n\n{body}.\n\nRutter-Merge: {theirs}\nRutter-Format: 2\n",
        one_line(remote)
    )
}

/// A remote name on one line (git config values cannot hold a newline; never trust that).
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}
