//! The one rewrite of the record (spec/purge.md): finding a committed entry's line, rewriting the
//! history without it ([`Store::rewrite`]), committing the purge record on the rewritten tip,
//! moving the ref from the old tip by compare-and-swap, carrying the witness log and reflogs
//! through the rewrite, and taking the line out of the working files and the aside copies. A
//! purge made on another machine is taken the same way, without a purge commit ([`take`]).
//! Both are [`Recorder`] methods: the session holds the capture lock.

use super::Recorder;
use crate::clock::Instant;
use crate::fsx::Dir;
use crate::objectid::ObjectId;
use crate::records::purge::{self, without_lines, Purge, Removal};
use crate::records::{dayfile, fingerprint, line, paths, Entry};
use crate::store::rewrite::Rewritten;
use crate::store::{Store, StoreError};
use std::collections::BTreeSet;

/// Why a purge was not made; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PurgeError {
    #[error("refs/rutter/records does not exist in this vault yet; there is nothing to purge")]
    NoRecord,
    #[error("no committed entry {0} is in refs/rutter/records")]
    NotFound(String),
    #[error("entry {0} is in a day file the TypeScript reference wrote (session-record@1), kept as a YAML block that a purge cannot take out line by line")]
    OldFormat(String),
    #[error("two different committed lines carry the id {0} (one was forged or copied by hand), and a purge removes one line")]
    Ambiguous(String),
    #[error("entry {id} was purged already (on {day}: {reason})")]
    Already {
        id: String,
        day: String,
        reason: String,
    },
    #[error(
        "refs/rutter/records moved while the purge was prepared; nothing was changed, run it again"
    )]
    Moved,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A committed entry to purge: where its line is and what only it cited.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub entry: Entry,
    /// The day of the record files that hold its line.
    pub day: String,
    /// The line (without its `\n`).
    pub line: String,
    /// The record files of the tip that hold it.
    pub files: Vec<String>,
    /// `sha256:<hex>` of each `cited/` copy the tip keeps that no other entry cites.
    pub cited: Vec<String>,
}

/// What a purge did.
#[derive(Debug)]
pub(crate) struct Purged {
    pub purge: Purge,
    /// The purge's own commit, now the tip.
    pub commit: ObjectId,
    /// The rewrite: every commit old → new.
    pub rewritten: Rewritten,
    /// Working record files the line was taken out of.
    pub working: Vec<String>,
    /// Why the new tip could not be witnessed, when it could not.
    pub unwitnessed: Option<String>,
}

/// The purges the record at `tip` holds.
pub(crate) fn recorded(store: &Store, tip: ObjectId) -> Result<Vec<Purge>, StoreError> {
    let tree = store.tree_of(tip)?;
    let bytes = store.trees()?.blob_at(tree, paths::PURGES)?;
    Ok(bytes.map(|b| purge::read(&b)).unwrap_or_default())
}

/// Finds the committed entry `id` at the tip: its line, its day's files, the copies only it
/// cited.
pub(crate) fn find(store: &Store, id: &str) -> Result<Target, PurgeError> {
    let tip = store.tip()?.ok_or(PurgeError::NoRecord)?;
    if let Some(p) = recorded(store, tip)?.into_iter().find(|p| p.purge == id) {
        let day = p.time.get(..10).unwrap_or("").to_string();
        return Err(PurgeError::Already {
            id: id.to_string(),
            day,
            reason: p.reason,
        });
    }
    let files = store.record_files(tip)?;
    let mut target: Option<Target> = None;
    let mut others: BTreeSet<String> = BTreeSet::new();
    for (path, blob) in &files {
        let Some(day) = paths::day_of(path) else {
            continue;
        };
        let bytes = store.blob(*blob)?;
        let parsed = dayfile::parse(&bytes);
        let holds = parsed.entries.iter().any(|e| e.id == id);
        for e in parsed.entries.iter().filter(|e| e.id != id) {
            others.extend(e.refs.iter().map(|r| r.hash.clone()));
        }
        if !holds {
            continue;
        }
        let mut on_a_line = false;
        for l in String::from_utf8_lossy(&bytes).lines() {
            let Ok(Some(e)) = line::parse(l) else {
                continue;
            };
            if e.id != id {
                continue;
            }
            let t = target.get_or_insert_with(|| Target {
                entry: e,
                day: day.to_string(),
                line: l.to_string(),
                files: vec![],
                cited: vec![],
            });
            // Another line under the same id (a forged or hand-copied one): a purge removes one
            // line, and which one the user meant cannot be told.
            if t.line != l {
                return Err(PurgeError::Ambiguous(id.to_string()));
            }
            if !t.files.contains(path) {
                t.files.push(path.clone());
            }
            on_a_line = true;
        }
        // Held, but on no `@2` line: in the YAML block of an `@1` file.
        if !on_a_line {
            return Err(PurgeError::OldFormat(id.to_string()));
        }
    }
    let mut t = target.ok_or_else(|| PurgeError::NotFound(id.to_string()))?;
    let tree = store.tree_of(tip)?;
    let mut trees = store.trees()?;
    for r in &t.entry.refs {
        let kept = paths::cited_path(&r.hash)
            .map(|p| trees.blob_at(tree, &p).map(|b| b.is_some()))
            .transpose()
            .map_err(StoreError::from)?
            .unwrap_or(false);
        if kept && !others.contains(&r.hash) && !t.cited.contains(&r.hash) {
            t.cited.push(r.hash.clone());
        }
    }
    Ok(t)
}

impl Recorder<'_> {
    /// Purges `target` for `reason` (one line, masked): the history rewritten without its
    /// line, the purge record committed on the rewritten tip, the ref moved from the tip
    /// [`find`] read.
    pub(crate) fn purge(
        &self,
        target: &Target,
        reason: &str,
        now: Instant,
        sign: bool,
    ) -> Result<Purged, PurgeError> {
        purge(self.store()?, target, reason, now, sign)
    }

    /// Takes purges made elsewhere (spec/purge.md, "Across machines"): this machine's history
    /// rewritten without their lines (their records arrive through the sync's merge), the ref
    /// moved, the logs carried, the working files scrubbed. `None` when nothing changed.
    pub(crate) fn take_purges(&self, purges: &[Purge]) -> Result<Option<Rewritten>, PurgeError> {
        take(self.store()?, purges)
    }
}

fn purge(
    store: &Store,
    target: &Target,
    reason: &str,
    now: Instant,
    sign: bool,
) -> Result<Purged, PurgeError> {
    let tip = store.tip()?.ok_or(PurgeError::NoRecord)?;
    let mut p = Purge {
        purge: target.entry.id.clone(),
        day: target.day.clone(),
        line: fingerprint::sha256_ref(target.line.as_bytes()),
        cited: target.cited.clone(),
        reason: reason.to_string(),
        time: now.iso(),
        old_tip: tip.to_string(),
        new_tip: String::new(),
        session_id: target.entry.session_id.clone(),
        project: target.entry.project().map(str::to_string),
        client: target.entry.client.clone(),
        extra: Default::default(),
    };
    let rewritten = rewrite_all(
        store,
        tip,
        &p.removal(),
        &purge::ids(std::slice::from_ref(&p)),
    )?;
    let new_tip = rewritten.get(tip).unwrap_or(tip);
    p.new_tip = new_tip.to_string();
    let commit = purge_commit(store, new_tip, &p, now, sign)?;
    store
        .advance_ref(tip, commit, &format!("rutter: purge {}", p.purge))
        .map_err(|_| PurgeError::Moved)?;
    store.remap_logs(&rewritten)?;
    let unwitnessed = store.after_commit(commit);
    let working = scrub_working(store, &p.removal())?;
    follow_ledger(store, commit)?;
    Ok(Purged {
        purge: p,
        commit,
        rewritten,
        working,
        unwitnessed,
    })
}

fn take(store: &Store, purges: &[Purge]) -> Result<Option<Rewritten>, PurgeError> {
    let tip = store.tip()?.ok_or(PurgeError::NoRecord)?;
    let removal = purge::removal_of(purges);
    let rewritten = rewrite_all(store, tip, &removal, &purge::ids(purges))?;
    scrub_working(store, &removal)?;
    let Some(new_tip) = rewritten.get(tip).filter(|n| *n != tip) else {
        return Ok(None);
    };
    let ids: Vec<&str> = purges.iter().map(|p| p.purge.as_str()).collect();
    store
        .advance_ref(
            tip,
            new_tip,
            &format!("rutter: purge {} (taken)", ids.join(", ")),
        )
        .map_err(|_| PurgeError::Moved)?;
    store.remap_logs(&rewritten)?;
    Ok(Some(rewritten))
}

/// Rewrites the history of the tip and of every remote-tracking ref of the records.
fn rewrite_all(
    store: &Store,
    tip: ObjectId,
    removal: &Removal,
    ids: &BTreeSet<String>,
) -> Result<Rewritten, StoreError> {
    let mut tips = vec![tip];
    tips.extend(store.record_tracking_refs()?.into_iter().map(|(_, o)| o));
    store.rewrite(&tips, removal, ids)
}

/// The purge commit: the rewritten tip's tree with the ledger line appended.
fn purge_commit(
    store: &Store,
    new_tip: ObjectId,
    p: &Purge,
    now: Instant,
    sign: bool,
) -> Result<ObjectId, StoreError> {
    let tree = store.tree_of(new_tip)?;
    let mut trees = store.trees()?;
    let mut ledger = trees.blob_at(tree, paths::PURGES)?.unwrap_or_default();
    if !ledger.is_empty() && !ledger.ends_with(b"\n") {
        ledger.push(b'\n');
    }
    let line = purge::render(p);
    ledger.extend_from_slice(line.as_bytes());
    ledger.push(b'\n');
    let blob = store.write_blob(&ledger)?;
    let tree = trees.write(Some(tree), &[(paths::PURGES.to_string(), blob)])?;
    let message = format!(
        "rutter: purge {id}\n\n{line}\n\nRutter-Purge: {id}\nRutter-Format: 2\n",
        id = p.purge
    );
    store.write_commit_of(&[new_tip], tree, &message, now, sign)
}

/// Takes the removal's lines out of the working record files of its days and out of the aside
/// copies: each written whole to a temporary file and renamed, never through a symlink.
fn scrub_working(store: &Store, removal: &Removal) -> Result<Vec<String>, StoreError> {
    let mut done = Vec::new();
    let sessions = store.root().join(paths::SESSIONS_DIR);
    if let Ok(dir) = Dir::open(&sessions) {
        for name in dir.list()? {
            let Some((day, _)) = paths::split_day_file_name(&name) else {
                continue;
            };
            let Some(gone) = removal.lines.get(day) else {
                continue;
            };
            if scrub_file(&dir, &name, gone)? {
                done.push(format!("{}/{name}", paths::SESSIONS_DIR));
            }
        }
    }
    let every: BTreeSet<[u8; 32]> = removal.lines.values().flatten().copied().collect();
    if let Ok(Some(aside)) = Dir::open(store.state_dir()).and_then(|d| d.open_dir("aside", false)) {
        scrub_tree(&aside, &every, 0)?;
    }
    Ok(done)
}

/// Scrubs every file below `dir` (folders at most a few levels deep).
fn scrub_tree(dir: &Dir, gone: &BTreeSet<[u8; 32]>, depth: usize) -> Result<(), StoreError> {
    for name in dir.list()? {
        match dir.open_dir(&name, false) {
            Ok(Some(sub)) if depth < 4 => scrub_tree(&sub, gone, depth + 1)?,
            Ok(Some(_)) => {}
            _ => {
                scrub_file(dir, &name, gone)?;
            }
        }
    }
    Ok(())
}

/// Whether `name` held a removed line (then it is written again without it).
fn scrub_file(dir: &Dir, name: &str, gone: &BTreeSet<[u8; 32]>) -> Result<bool, StoreError> {
    let Some(bytes) = dir.read(name)? else {
        return Ok(false);
    };
    match without_lines(&bytes, gone) {
        Some(kept) => {
            dir.write_atomic(name, &kept)?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Brings the working purge ledger to the committed one when it is missing or behind.
fn follow_ledger(store: &Store, commit: ObjectId) -> Result<(), StoreError> {
    let tree = store.tree_of(commit)?;
    let Some(committed) = store.trees()?.blob_at(tree, paths::PURGES)? else {
        return Ok(());
    };
    let (dir, name) = crate::overlay::folder(store.root(), paths::PURGES, true)?;
    let working = dir.read(name)?.unwrap_or_default();
    if working.len() < committed.len() && committed.starts_with(&working) {
        dir.write_atomic(name, &committed)?;
    }
    Ok(())
}
