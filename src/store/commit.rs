//! Committing to `refs/rutter/records`: journalled appends, the use log and cited copies become
//! one commit on the tip, moved by compare-and-swap with a bounded retry (DESIGN §5).

use super::compose::compose;
use super::tree::Trees;
use super::{Store, StoreError, RECORDS_REF};
use crate::clock::Instant;
use crate::journal::{Journal, JournalRecord, PendingAppend, RecordKind};
use crate::records::status::contains_line;
use crate::records::{dayfile, paths};
use git2::{ErrorCode, Oid};
use std::io::Write;

const MAX_ATTEMPTS: usize = 5;
/// The message of an empty commit that signs the history below it.
const SEAL_MESSAGE: &str = "rutter: seal\n\nSigns the record history up to here (rutter.sign).\n";
/// The message of the commit that moves day files into year folders.
const LAYOUT_MESSAGE: &str = "rutter: layout\n\nMoves each day file of _librarian/sessions/ into the folder of its year,\nbyte for byte (spec/ref-layout.md, \"Year folders\").\n";
/// Every this many tips, a detached `git gc --auto` packs the loose objects.
const GC_EVERY: u64 = 256;

/// What a commit run did.
#[derive(Debug, Default)]
pub struct CommitOutcome {
    pub commit: Option<Oid>,
    /// Entry ids committed by this run.
    pub entries: Vec<String>,
    /// Record files whose working copy no longer extends the committed bytes.
    pub diverged: Vec<String>,
    /// Journal files refused (not a record, or a record that claims what no append writes),
    /// with why: moved to `pending/rejected/` and never committed.
    pub refused: Vec<crate::journal::Refused>,
    /// Journal records whose line is not in its working file yet (the file could not take it):
    /// left in the journal until the line is appended (`capture::complete`).
    pub held: Vec<String>,
    /// Why the new tip could not be witnessed in `.git/rutter/tips` (verify will report it).
    pub unwitnessed: Option<String>,
}

struct Prepared {
    edits: Vec<(String, Oid)>,
    message: String,
    entries: Vec<String>,
    diverged: Vec<String>,
    /// Names of records whose line is in neither the working nor the committed file.
    held: Vec<String>,
}

impl Store {
    /// Commits every journalled append and any new complete use-log lines, then removes the
    /// journal records it committed; the commit is signed when `sign` (never for a capture).
    /// The caller holds the capture lock.
    pub fn commit_pending(
        &self,
        journal: &Journal,
        now: Instant,
        sign: bool,
    ) -> Result<CommitOutcome, StoreError> {
        self.commit_pending_with(Some(journal), &[], now, sign)
    }

    /// [`Store::commit_pending`], also committing `extra`: appends whose journal record could
    /// not be written (their lines are in the working files). Refused journal files are moved
    /// to `pending/rejected/`. Without a journal (its folder cannot be opened), only `extra`.
    pub fn commit_pending_with(
        &self,
        journal: Option<&Journal>,
        extra: &[PendingAppend],
        now: Instant,
        sign: bool,
    ) -> Result<CommitOutcome, StoreError> {
        crate::failpoint::check("commit")?;
        let (mut records, refused) = match journal {
            Some(j) => j.list()?,
            None => Default::default(),
        };
        if let Some(j) = journal {
            j.reject(&refused)?;
            j.sweep_temps();
        }
        records.extend(extra.iter().map(|r| (String::new(), r.clone())));
        let mut outcome = CommitOutcome {
            refused,
            ..Default::default()
        };
        for _ in 0..MAX_ATTEMPTS {
            let tip = match self.tip()? {
                Some(t) => t,
                None => self.ensure_ref(now)?.tip,
            };
            let mut trees = Trees::new(&self.repo)?;
            let base = self.repo.find_commit(tip)?.tree_id();
            let prepared = self.prepare(&mut trees, base, &records)?;
            outcome.diverged = prepared.diverged.clone();
            outcome.held = prepared.held.clone();
            let done = names(&records, &prepared.held);
            if prepared.edits.is_empty() {
                journal.map(|j| j.remove(&done)).transpose()?;
                return Ok(outcome);
            }
            match self.commit_on(&mut trees, tip, base, &prepared, now, sign) {
                Ok(oid) => {
                    journal.map(|j| j.remove(&done)).transpose()?;
                    outcome.unwitnessed = self.after_commit(oid);
                    outcome.commit = Some(oid);
                    outcome.entries = prepared.entries;
                    return Ok(outcome);
                }
                Err(StoreError::Git(e))
                    if matches!(e.code(), ErrorCode::Modified | ErrorCode::Locked) =>
                {
                    if e.code() == ErrorCode::Locked && self.ref_lock_path().exists() {
                        return Err(StoreError::RefLocked(self.ref_lock_path()));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(e) => return Err(e),
            }
        }
        Err(StoreError::Contention(MAX_ATTEMPTS))
    }

    fn prepare(
        &self,
        trees: &mut Trees<'_>,
        base: Oid,
        records: &[JournalRecord],
    ) -> Result<Prepared, StoreError> {
        let mut p = Prepared {
            edits: vec![],
            message: String::new(),
            entries: vec![],
            diverged: vec![],
            held: vec![],
        };
        let mut fresh: Vec<&PendingAppend> = Vec::new();
        for path in unique_paths(records) {
            let committed = trees.blob_at(base, &path)?;
            let working = self.working(&path);
            // Only lines the working file shows were appended are committed: the journal says
            // which line and where, the working file proves the append (an edit since is
            // reported, not committed). A line the file never took waits (held) until it is
            // appended; one line journalled twice counts once.
            let mut appends: Vec<&PendingAppend> = Vec::new();
            for (name, r) in records.iter().filter(|(_, r)| r.path == path) {
                let line = r.line.as_bytes();
                let placed = working
                    .as_deref()
                    .is_some_and(|w| crate::journal::check::appended(w, r));
                if !placed && !committed.as_deref().is_some_and(|c| contains_line(c, line)) {
                    p.held.push(name.clone());
                } else if !appends.iter().any(|a| a.line == r.line) {
                    appends.push(r);
                }
            }
            if appends.is_empty() {
                continue;
            }
            let header = match appends.first() {
                Some(a) if a.kind == RecordKind::Identity => crate::records::ledger::header(),
                Some(a) if matches!(a.kind, RecordKind::Capture | RecordKind::Retract) => {
                    dayfile::header(&a.day)
                }
                _ => String::new(),
            };
            let composed = compose(committed.as_deref(), working.as_deref(), &appends, &header);
            if composed.diverged {
                p.diverged.push(path.clone());
            }
            if committed.as_deref() != Some(composed.bytes.as_slice()) {
                p.edits
                    .push((path.clone(), self.repo.blob(&composed.bytes)?));
                fresh.extend(appends.iter().skip(composed.already_committed));
            }
        }
        let use_log = self.use_log_edit(trees, base)?;
        p.edits.extend(use_log);
        p.edits.extend(self.cited_edits(trees, base, &fresh)?);
        p.entries = fresh.iter().map(|a| a.entry_id.clone()).collect();
        p.message = message(&fresh);
        if fresh.is_empty() && p.edits.iter().all(|(path, _)| path.starts_with("cited/")) {
            p.edits.clear();
        }
        Ok(p)
    }

    /// New complete lines of the use log, when the working log extends the committed one.
    fn use_log_edit(
        &self,
        trees: &mut Trees<'_>,
        base: Oid,
    ) -> Result<Option<(String, Oid)>, StoreError> {
        let Some(working) = self.working(paths::USE_LOG) else {
            return Ok(None);
        };
        let committed = trees.blob_at(base, paths::USE_LOG)?.unwrap_or_default();
        let complete = working
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        if complete <= committed.len() || !working.starts_with(&committed) {
            return Ok(None);
        }
        let oid = self.repo.blob(&working[..complete])?;
        Ok(Some((paths::USE_LOG.to_string(), oid)))
    }

    /// Copies of cited notes, content-addressed under `cited/`, within the limits of DESIGN §5.
    fn cited_edits(
        &self,
        trees: &mut Trees<'_>,
        base: Oid,
        fresh: &[&PendingAppend],
    ) -> Result<Vec<(String, Oid)>, StoreError> {
        if fresh.iter().all(|a| a.cited.is_empty()) || !self.keep_cited() {
            return Ok(vec![]);
        }
        let mut edits = Vec::new();
        for (target, hash) in fresh.iter().flat_map(|a| a.cited.iter()) {
            let hex = hash.strip_prefix("sha256:").filter(|h| h.len() == 64);
            let (Some(hex), Some(path)) = (hex, crate::records::paths::cited_path(hash)) else {
                continue;
            };
            if trees.entry(base, &path)?.is_some() || edits.iter().any(|(p, _)| p == &path) {
                continue;
            }
            if let Some(bytes) = self.citable_bytes(target, hex) {
                edits.push((path, self.repo.blob(&bytes)?));
            }
        }
        Ok(edits)
    }

    fn citable_bytes(&self, target: &str, hex: &str) -> Option<Vec<u8>> {
        if target.split('/').any(|s| s == ".git")
            || self.repo.is_path_ignored(target).unwrap_or(true)
        {
            return None;
        }
        // Read as the capture read it: below the vault through folder handles that never follow
        // a symlink, never blocking on a FIFO, and never more than the copy limit (a file swapped
        // or grown since capture is not read to its end under the lock).
        let (dir, name) = target.rsplit_once('/').unwrap_or(("", target));
        let folder = crate::fsx::Dir::open(self.root())
            .ok()?
            .open_dir(dir, false)
            .ok()??;
        let bytes = folder.read_at_most(name, paths::CITED_MAX_BYTES).ok()??;
        (crate::records::fingerprint::sha256_hex(&bytes) == hex).then_some(bytes)
    }

    fn commit_on(
        &self,
        trees: &mut Trees<'_>,
        tip: Oid,
        base: Oid,
        p: &Prepared,
        now: Instant,
        sign: bool,
    ) -> Result<Oid, StoreError> {
        // A tip written before the year folders gets one commit that only moves its day files
        // into them (spec/ref-layout.md, "Year folders"); this commit goes on top of it.
        let (parent, base) = match trees.to_years(base)? {
            Some(moved) => (
                self.write_commit(tip, moved, LAYOUT_MESSAGE, now, sign)?,
                moved,
            ),
            None => (tip, base),
        };
        let tree = trees.write(Some(base), &p.edits)?;
        let message = if p.entries.is_empty() {
            use_message()
        } else {
            p.message.clone()
        };
        let oid = self.write_commit(parent, tree, &message, now, sign)?;
        self.move_ref(tip, oid, &message)
    }

    /// Writes a commit of `tree` on `tip` (signed when `sign`) and moves the ref to it if it
    /// is still at `tip`.
    fn commit_and_move(
        &self,
        tip: Oid,
        tree: Oid,
        message: &str,
        now: Instant,
        sign: bool,
    ) -> Result<Oid, StoreError> {
        let oid = self.write_commit(tip, tree, message, now, sign)?;
        self.move_ref(tip, oid, message)
    }

    /// Writes a commit of `tree` whose parent is `parent` (signed when `sign`).
    fn write_commit(
        &self,
        parent: Oid,
        tree: Oid,
        message: &str,
        now: Instant,
        sign: bool,
    ) -> Result<Oid, StoreError> {
        let sig = self.signature(now)?;
        if sign {
            return self.commit_signed(&sig, message, tree, &[parent]);
        }
        let parent = self.repo.find_commit(parent)?;
        let tree = self.repo.find_tree(tree)?;
        Ok(self
            .repo
            .commit(None, &sig, &sig, message, &tree, &[&parent])?)
    }

    /// Moves the ref from `tip` to `oid` if it is still at `tip`, the reflog saying `message`'s
    /// subject.
    fn move_ref(&self, tip: Oid, oid: Oid, message: &str) -> Result<Oid, StoreError> {
        let subject = message.lines().next().unwrap_or("rutter");
        self.repo
            .reference_matching(RECORDS_REF, oid, true, tip, subject)?;
        Ok(oid)
    }

    /// Signs the history so far with an empty `rutter: seal` commit on the tip, unless the tip
    /// is signed already (then `None`). The caller holds the capture lock.
    pub fn seal(&self, now: Instant) -> Result<Option<(Oid, Option<String>)>, StoreError> {
        let Some(tip) = self.tip()? else {
            return Ok(None);
        };
        let commit = self.repo.find_commit(tip)?;
        if super::sign::is_signed(&commit) {
            return Ok(None);
        }
        let oid = self.commit_and_move(tip, commit.tree_id(), SEAL_MESSAGE, now, true)?;
        // A tip that could not be witnessed is said, as every commit's (verify reports it too).
        Ok(Some((oid, self.after_commit(oid))))
    }

    /// Witnesses the new tip in `.git/rutter/tips` and now and then packs loose objects. Returns
    /// why the tip could not be witnessed, if it could not (the commit itself stands).
    pub(crate) fn after_commit(&self, oid: Oid) -> Option<String> {
        let path = self.state_dir().join("tips");
        // Opened relative to the state folder without following a symlink: a symlinked witness
        // log is refused, never written through.
        let witnessed = crate::fsx::Dir::open_private(self.state_dir())
            .and_then(|d| d.open_append("tips"))
            .map_err(|e| std::io::Error::other(e.to_string()))
            .and_then(|f| crate::failpoint::check("tips-write").map(|()| f))
            .and_then(|mut f| {
                f.file.write_all(format!("{oid}\n").as_bytes())?;
                f.file.metadata()
            });
        match witnessed {
            Ok(meta) => {
                // Lines of the witness log are an id and a newline, whatever the hash's length.
                let line = oid.to_string().len() as u64 + 1;
                if (meta.len() / line) % GC_EVERY == 0 {
                    spawn_gc(self.root());
                }
                None
            }
            Err(e) => Some(format!(
                "the new tip {} could not be witnessed in {} ({e}); `git rutter verify` will report the gap",
                &oid.to_string()[..12],
                path.display()
            )),
        }
    }

    fn ref_lock_path(&self) -> std::path::PathBuf {
        // Refs live in the common directory, also for a linked worktree.
        self.repo.commondir().join("refs/rutter/records.lock")
    }
}

/// `git gc --auto`, detached (its own process group, so a Ctrl-C to the command that started it
/// does not stop it; all stdio closed) and never waited for by the caller; a thread reaps it, so
/// a long-lived `git-rutter mcp` leaves no zombie.
fn spawn_gc(root: &std::path::Path) {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let Some(mut git) = super::gitcli::git_in(root) else {
        return;
    };
    let child = git
        .args(["gc", "--auto", "--quiet"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    if let Ok(mut child) = child {
        let _ = std::thread::Builder::new()
            .name("rutter-gc-reaper".into())
            .spawn(move || child.wait());
    }
}

fn unique_paths(records: &[JournalRecord]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, r) in records {
        if !out.contains(&r.path) {
            out.push(r.path.clone());
        }
    }
    out
}

/// The journal files of `records` to remove once committed: all but the `held` ones (and
/// not the in-memory records, which have no file).
fn names(records: &[JournalRecord], held: &[String]) -> Vec<String> {
    records
        .iter()
        .map(|(n, _)| n.clone())
        .filter(|n| !n.is_empty() && !held.contains(n))
        .collect()
}

/// Subject, the appended lines byte for byte, then the trailers.
fn message(fresh: &[&PendingAppend]) -> String {
    let Some(last) = fresh.last() else {
        return use_message();
    };
    let mut msg = format!("{}\n\n", subject(fresh, last));
    for a in fresh {
        msg.push_str(&a.line);
        msg.push('\n');
    }
    msg.push('\n');
    for a in fresh {
        if a.kind == RecordKind::Identity {
            msg.push_str(&format!("Rutter-Binding: {}\n", trailer_value(&a.entry_id)));
            continue;
        }
        if a.kind == RecordKind::Ack {
            msg.push_str(&format!("Rutter-Ack: {}\n", trailer_value(&a.entry_id)));
            continue;
        }
        if a.kind == RecordKind::Retract {
            msg.push_str(&format!(
                "Rutter-Retraction: {}\n",
                trailer_value(&a.entry_id)
            ));
            if let Some(e) = &a.retracts {
                msg.push_str(&format!("Rutter-Retracts: {}\n", trailer_value(e)));
            }
            continue;
        }
        msg.push_str(&format!("Rutter-Entry: {}\n", trailer_value(&a.entry_id)));
        if let Some(s) = &a.session_id {
            msg.push_str(&format!("Rutter-Session: {}\n", trailer_value(s)));
        }
        if let Some(c) = &a.client {
            msg.push_str(&format!("Rutter-Client: {}\n", trailer_value(c)));
        }
    }
    msg.push_str("Rutter-Format: 2\n");
    msg
}

/// `rutter: capture <day> [<project>]`, `… (N entries)`, `rutter: retract <day>`, or
/// `rutter: identity`.
fn subject(fresh: &[&PendingAppend], last: &PendingAppend) -> String {
    if fresh.iter().all(|a| a.kind == RecordKind::Ack) {
        return "rutter: ack".to_string();
    }
    if fresh.iter().all(|a| a.kind == RecordKind::Retract) {
        return match fresh.len() {
            1 => format!("rutter: retract {}", last.day),
            n => format!("rutter: retract {} ({n} retractions)", last.day),
        };
    }
    if fresh.iter().all(|a| a.kind == RecordKind::Identity) {
        return match fresh.len() {
            1 => "rutter: identity".to_string(),
            n => format!("rutter: identity ({n} bindings)"),
        };
    }
    let mut subject = format!("rutter: capture {}", last.day);
    // A turn's entries share one project: name it for a batch too (a replay may mix several).
    if let Some(p) = &last.project {
        if fresh.iter().all(|a| a.project.as_ref() == Some(p)) {
            subject.push_str(&format!(" [{}]", trailer_value(p)));
        }
    }
    if fresh.len() > 1 {
        subject.push_str(&format!(" ({} entries)", fresh.len()));
    }
    subject
}

fn use_message() -> String {
    "rutter: use\n\nRutter-Format: 2\n".to_string()
}

/// A trailer value on one line: control characters become spaces.
fn trailer_value(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
                ' '
            } else {
                c
            }
        })
        .collect::<String>()
        .trim()
        .to_string()
}
