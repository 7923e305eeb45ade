//! The working-tree check: every committed record file must still begin with its committed
//! bytes. Complete record lines after them are *pending*; anything else is *edited after
//! commit*, reported per entry with a line diff. A deleted, truncated or symlinked file is
//! reported as such.

use super::cache::VerifyCache;
use super::finding::{Finding, Kind};
use super::history::changed_ids;
use crate::records::{dayfile, ledger, line, paths, retraction};
use crate::store::journal::Journal;
use crate::store::{day_of, Store, StoreError};
use git2::Oid;
use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;

/// Runs the working-tree check against the tip.
pub fn check(store: &Store, tip: Oid, cache: &mut VerifyCache) -> Result<Vec<Finding>, StoreError> {
    let committed = store.record_files(tip)?;
    let journalled = journal_lines(store);
    let mut findings = Vec::new();
    let known: HashSet<&str> = committed.iter().map(|(p, _)| p.as_str()).collect();
    for path in store.uncommitted_record_files(&known) {
        let bytes = store.working(&path).unwrap_or_default();
        let header = header_for(&path);
        let rest = bytes.strip_prefix(header.as_bytes()).unwrap_or(&bytes);
        findings.extend(extra(&path, rest, &journalled));
    }
    for (path, blob) in committed {
        findings.extend(file(store, &path, blob, &journalled, cache)?);
    }
    Ok(findings)
}

/// Checks one committed record file; a file found identical to its committed bytes is
/// remembered by size, mtime, ctime, inode and blob, and skipped on the next run while those
/// hold. The ctime is the witness an editor cannot put back (`touch -d` restores the mtime, not
/// the ctime), and the inode catches a file swapped for a copy.
fn file(
    store: &Store,
    path: &str,
    blob: Oid,
    journalled: &HashSet<String>,
    cache: &mut VerifyCache,
) -> Result<Vec<Finding>, StoreError> {
    let meta = match std::fs::symlink_metadata(store.root().join(path)) {
        Err(_) => {
            let detail = format!(
                "{path} is committed but missing from the working tree ({})",
                summary(store, path, blob)
            );
            return Ok(vec![whole_file(Kind::Deleted, path, detail)]);
        }
        Ok(m) if !m.file_type().is_file() => {
            let detail =
                format!("{path} was replaced by a symlink or something that is not a regular file");
            return Ok(vec![whole_file(Kind::Symlink, path, detail)]);
        }
        Ok(m) => m,
    };
    let stamp = (
        meta.len(),
        meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
        format!(
            "{blob}:{}:{}",
            meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
            meta.ino()
        ),
    );
    if cache.files.get(path) == Some(&stamp) {
        return Ok(vec![]);
    }
    let committed = store.repo.find_blob(blob)?;
    let committed = committed.content();
    let working = store.working(path).unwrap_or_default();
    if working == committed {
        cache.file_clean(path, stamp);
        return Ok(vec![]);
    }
    Ok(if working.starts_with(committed) {
        extra(path, &working[committed.len()..], journalled)
    } else if committed.starts_with(&working) {
        let what = "lost its tail after commit";
        per_entry(Kind::Truncated, path, committed, &working, cache, what)
    } else {
        let what = "was edited after commit";
        per_entry(Kind::Edited, path, committed, &working, cache, what)
    })
}

/// A finding about the file `path` as a whole.
fn whole_file(kind: Kind, path: &str, detail: String) -> Finding {
    let mut f = Finding::new(kind, path, "file", detail);
    f.path = Some(path.to_string());
    f
}

/// One finding per entry the change touched (or one for the file), with the line diff.
fn per_entry(
    kind: Kind,
    path: &str,
    committed: &[u8],
    working: &[u8],
    cache: &mut VerifyCache,
    what: &str,
) -> Vec<Finding> {
    let (old, new) = (
        String::from_utf8_lossy(committed),
        String::from_utf8_lossy(working),
    );
    let diff = similar::TextDiff::from_lines(old.as_ref(), new.as_ref())
        .unified_diff()
        .context_radius(1)
        .header("committed", "working tree")
        .to_string();
    let day = day_of(path).map(str::to_string);
    let ids = changed_ids(path, committed, working);
    let mut out: Vec<Finding> = ids
        .iter()
        .map(|id| {
            let mut f = Finding::new(kind, path, id, format!("{path}: entry {id} {what}"));
            f.path = Some(path.to_string());
            f.entry = Some(id.clone());
            f.day = day.clone();
            f.commit = cache
                .entries()
                .get(id)
                .map(|c| c[..c.len().min(7)].to_string());
            f.diff = Some(diff.clone());
            f
        })
        .collect();
    if out.is_empty() {
        let mut f = whole_file(kind, path, format!("{path} {what}"));
        f.day = day;
        f.diff = Some(diff);
        out.push(f);
    }
    out
}

/// Classifies bytes after the committed ones: complete record lines are pending.
fn extra(path: &str, bytes: &[u8], journalled: &HashSet<String>) -> Vec<Finding> {
    let text = String::from_utf8_lossy(bytes);
    let mut out = Vec::new();
    let mut rest = text.as_ref();
    while !rest.is_empty() {
        let (l, complete) = match rest.find('\n') {
            Some(i) => (&rest[..i], true),
            None => (rest, false),
        };
        rest = if complete { &rest[l.len() + 1..] } else { "" };
        let id = if complete {
            record_line_id(path, l)
        } else {
            None
        };
        let mut f = match &id {
            Some(id) => {
                let how = if journalled.contains(l) { "journalled" } else { "not in the pending journal" };
                Finding::new(Kind::Pending, path, id, format!("{path}: {id} is not committed yet ({how})"))
            }
            None => Finding::new(Kind::Unparseable, path, &format!("{}", l.len()), format!("{path}: text after the committed bytes that is not a complete record line: {:?}", cut(l))),
        };
        f.path = Some(path.to_string());
        f.entry = id;
        f.day = day_of(path).map(str::to_string);
        out.push(f);
    }
    out
}

/// The id of a complete record line of this file's kind (entry or retraction, binding, use-log
/// event).
fn record_line_id(path: &str, l: &str) -> Option<String> {
    if path.starts_with("_librarian/sessions/") {
        let entry = line::parse(l).ok().flatten().map(|e| e.id);
        return entry.or_else(|| retraction::parse(l).ok().flatten().map(|r| r.id));
    }
    if path == ledger::LEDGER_PATH {
        return ledger::parse_line(l).ok().flatten().map(|b| b.id);
    }
    if path == paths::USE_LOG || path == super::finding::ACKS_PATH {
        let v: serde_json::Value = serde_json::from_str(l).ok()?;
        return v.get("ts")?.as_str().map(|ts| format!("event {ts}"));
    }
    None
}

fn header_for(path: &str) -> String {
    match day_of(path) {
        Some(day) => dayfile::header(day),
        None if path == ledger::LEDGER_PATH => ledger::header(),
        None => String::new(),
    }
}

fn summary(store: &Store, path: &str, blob: Oid) -> String {
    let bytes = store
        .repo
        .find_blob(blob)
        .map(|b| b.content().to_vec())
        .unwrap_or_default();
    let n = match day_of(path) {
        Some(day) => dayfile::parse(day, &bytes).entries.len(),
        None => super::history::ids(path, &bytes, true).len(),
    };
    format!("{n} committed entr{}", if n == 1 { "y" } else { "ies" })
}

fn cut(s: &str) -> String {
    s.chars().take(80).collect()
}

/// Lines waiting in the pending journal.
fn journal_lines(store: &Store) -> HashSet<String> {
    Journal::open(store.state_dir())
        .and_then(|j| j.list())
        .map(|(ok, _)| ok.into_iter().map(|(_, r)| r.line).collect())
        .unwrap_or_default()
}
