//! Committing what was appended: journalled appends, new complete lines of the use log and
//! copies of the notes fresh entries cite become one commit on the tip of `refs/rutter/records`
//! (DESIGN §5). What each record file's next version is comes from here ([`super::compose`]);
//! writing it and moving the ref by compare-and-swap is the store's
//! ([`Store::commit_planned`]), which runs the plan again when the ref moved meanwhile.

use super::compose::compose;
use super::Recorder;
use crate::clock::Instant;
use crate::journal::{Journal, JournalRecord, Refused};
use crate::journal::{PendingAppend, RecordKind};
use crate::objectid::ObjectId;
use crate::records::standing::contains_line;
use crate::records::{dayfile, grammar, paths};
use crate::store::commit::{Base, Planned};
use crate::store::{Store, StoreError};

/// What a commit run did.
#[derive(Debug, Default)]
pub(crate) struct CommitOutcome {
    pub commit: Option<ObjectId>,
    /// Entry ids committed by this run.
    pub entries: Vec<String>,
    /// Record files whose working copy no longer extends the committed bytes.
    pub diverged: Vec<String>,
    /// Journal files refused (not a record, or a record that claims what no append writes),
    /// with why: moved to `pending/rejected/` and never committed.
    pub refused: Vec<Refused>,
    /// Journal records whose line is not in its working file yet (the file could not take it):
    /// left in the journal until the line is appended (`capture::complete`).
    pub held: Vec<String>,
    /// Why the new tip could not be witnessed in `.git/rutter/tips` (verify will report it).
    pub unwitnessed: Option<String>,
}

impl Recorder<'_> {
    /// Commits every journalled append, `extra` (appends whose journal record could not be
    /// written; their lines are in the working files) and any new complete use-log lines, then
    /// removes the journal records it committed; the commit is signed when `sign` (never for a
    /// capture). Refused journal files are moved to `pending/rejected/`. Without a journal (a
    /// capture's could not be opened), only `extra`.
    pub(crate) fn commit(
        &self,
        extra: &[PendingAppend],
        now: Instant,
        sign: bool,
    ) -> Result<CommitOutcome, StoreError> {
        commit(self.store()?, self.journal()?, extra, now, sign)
    }
}

/// [`Recorder::commit`] with the store and the journal.
fn commit(
    store: &Store,
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
    let mut entries = Vec::new();
    let committed = store.commit_planned(now, sign, &mut |base| {
        let p = plan(store, base, &records, now)?;
        outcome.diverged = p.diverged;
        outcome.held = p.held;
        entries = p.entries;
        Ok(p.planned)
    })?;
    let done = names(&records, &outcome.held);
    journal.map(|j| j.remove(&done)).transpose()?;
    if let Some((oid, unwitnessed)) = committed {
        outcome.commit = Some(oid);
        outcome.unwitnessed = unwitnessed;
        outcome.entries = entries;
    }
    Ok(outcome)
}

/// What one attempt decided.
struct Plan {
    /// The files and message to commit (`None`: nothing to commit).
    planned: Option<Planned>,
    entries: Vec<String>,
    diverged: Vec<String>,
    /// Names of records whose line is in neither the working nor the committed file.
    held: Vec<String>,
}

/// The next version of each record file the records name, of the use log and of the cited
/// copies, on the committed state `base`.
fn plan(
    store: &Store,
    base: &mut Base<'_, '_>,
    records: &[JournalRecord],
    now: Instant,
) -> Result<Plan, StoreError> {
    let mut p = Plan {
        planned: None,
        entries: vec![],
        diverged: vec![],
        held: vec![],
    };
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut fresh: Vec<&PendingAppend> = Vec::new();
    for path in unique_paths(records) {
        let committed = base.file(&path)?;
        let working = store.working(&path);
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
            files.push((path.clone(), composed.bytes));
            fresh.extend(appends.iter().skip(composed.already_committed));
        }
    }
    files.extend(use_log_edit(store, base, now)?);
    files.extend(cited_edits(store, base, &fresh)?);
    p.entries = fresh.iter().map(|a| a.entry_id.clone()).collect();
    let only_copies = files.iter().all(|(path, _)| path.starts_with("cited/"));
    if !(files.is_empty() || fresh.is_empty() && only_copies) {
        let message = match fresh.is_empty() {
            true => use_message(),
            false => message(&fresh),
        };
        p.planned = Some(Planned { files, message });
    }
    Ok(p)
}

/// New complete lines of the use log, when the working log extends the committed one: those
/// before the first line the record grammar refuses (`records::grammar`, judged at `now`), so
/// this machine never commits an event another one would refuse to take in. `verify` names the
/// refused line; once it is deleted, the lines after it are committed.
fn use_log_edit(
    store: &Store,
    base: &mut Base<'_, '_>,
    now: Instant,
) -> Result<Option<(String, Vec<u8>)>, StoreError> {
    let Some(working) = store.working(paths::USE_LOG) else {
        return Ok(None);
    };
    let committed = base.file(paths::USE_LOG)?.unwrap_or_default();
    let mut complete = working
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    if complete <= committed.len() || !working.starts_with(&committed) {
        return Ok(None);
    }
    if let Err(breach) = grammar::added(paths::USE_LOG, &committed, &working[..complete], now) {
        // Up to the start of the refused line.
        complete = memchr::memchr_iter(b'\n', &working)
            .nth(breach.line.saturating_sub(2))
            .map_or(0, |i| i + 1)
            .min(complete);
        if breach.line < 2 || complete <= committed.len() {
            return Ok(None);
        }
    }
    Ok(Some((
        paths::USE_LOG.to_string(),
        working[..complete].to_vec(),
    )))
}

/// Copies of cited notes, content-addressed under `cited/`, within the limits of DESIGN §5.
fn cited_edits(
    store: &Store,
    base: &mut Base<'_, '_>,
    fresh: &[&PendingAppend],
) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
    if fresh.iter().all(|a| a.cited.is_empty()) || !store.keep_cited() {
        return Ok(vec![]);
    }
    let mut edits: Vec<(String, Vec<u8>)> = Vec::new();
    for (target, hash) in fresh.iter().flat_map(|a| a.cited.iter()) {
        let hex = hash.strip_prefix("sha256:").filter(|h| h.len() == 64);
        let (Some(hex), Some(path)) = (hex, paths::cited_path(hash)) else {
            continue;
        };
        if base.has(&path)? || edits.iter().any(|(p, _)| p == &path) {
            continue;
        }
        if let Some(bytes) = citable_bytes(store, target, hex) {
            edits.push((path, bytes));
        }
    }
    Ok(edits)
}

/// The bytes of the note `target` when they still have the sha256 `hex` it was cited with.
fn citable_bytes(store: &Store, target: &str, hex: &str) -> Option<Vec<u8>> {
    if target.split('/').any(|s| s == ".git") || store.is_ignored(target) {
        return None;
    }
    // Read as the capture read it: below the vault through folder handles that never follow
    // a symlink, never blocking on a FIFO, and never more than the copy limit (a file swapped
    // or grown since capture is not read to its end under the lock).
    let (dir, name) = target.rsplit_once('/').unwrap_or(("", target));
    let folder = crate::fsx::Dir::open(store.root())
        .ok()?
        .open_dir(dir, false)
        .ok()??;
    let bytes = folder.read_at_most(name, paths::CITED_MAX_BYTES).ok()??;
    (crate::records::fingerprint::sha256_hex(&bytes) == hex).then_some(bytes)
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
