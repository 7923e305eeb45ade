//! Indexing the record entries of every day file (`@1` and `@2`), re-reading only the day
//! files whose size or mtime changed, so `recent` and enrichment never parse history.

use crate::fsx::Dir;
use crate::records::{dayfile, paths, Entry};
use crate::store::adopt::is_day_file;
use rusqlite::{params, Transaction};
use std::collections::HashMap;
use std::path::Path;
use unicode_normalization::UnicodeNormalization;

/// What a refresh of the entries did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct EntriesRefresh {
    pub files_read: usize,
    pub files_removed: usize,
    pub entries_read: usize,
}

impl EntriesRefresh {
    /// Whether anything in the index changed.
    pub fn touched(&self) -> bool {
        self.files_read + self.files_removed > 0
    }
}

/// Brings `day_files`, `entries` and `entry_refs` in line with `_librarian/sessions/`.
pub fn refresh(tx: &Transaction<'_>, root: &Path) -> Result<EntriesRefresh, rusqlite::Error> {
    let sessions = Dir::open(root)
        .ok()
        .and_then(|d| d.open_dir(paths::SESSIONS_DIR, false).ok().flatten());
    let mut known: HashMap<String, (i64, i64)> = HashMap::new();
    {
        let mut stmt = tx.prepare("SELECT name, size, mtime_ns FROM day_files")?;
        for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, (r.get(1)?, r.get(2)?))))? {
            let (name, v) = row?;
            known.insert(name, v);
        }
    }
    let mut report = EntriesRefresh::default();
    let names: Vec<String> = sessions
        .as_ref()
        .and_then(|d| d.list().ok())
        .unwrap_or_default();
    for name in names.iter().filter(|n| is_day_file(n)) {
        let Some(dir) = &sessions else { break };
        let Some((size, mtime, true)) = dir.stat(name) else {
            continue;
        };
        if known.remove(name) == Some((size as i64, mtime)) {
            continue;
        }
        let bytes = dir.read(name).ok().flatten().unwrap_or_default();
        report.entries_read += replace_day(tx, name, &bytes)?;
        tx.prepare_cached(
            "INSERT OR REPLACE INTO day_files(name, size, mtime_ns) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![name, size as i64, mtime])?;
        report.files_read += 1;
    }
    for name in known.keys() {
        replace_day(tx, name, b"")?;
        tx.prepare_cached("DELETE FROM day_files WHERE name = ?1")?
            .execute([name])?;
        report.files_removed += 1;
    }
    Ok(report)
}

/// Replaces the rows of one day with the entries in `bytes`; returns how many.
fn replace_day(tx: &Transaction<'_>, name: &str, bytes: &[u8]) -> Result<usize, rusqlite::Error> {
    let day = &name[..10];
    tx.prepare_cached("DELETE FROM entries WHERE day = ?1")?
        .execute([day])?;
    tx.prepare_cached("DELETE FROM entry_refs WHERE day = ?1")?
        .execute([day])?;
    let file = dayfile::parse(day, bytes);
    let mut entry = tx.prepare_cached(
        "INSERT INTO entries(day, seq, id, session_id, project, project_key, time, group_key, json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    let mut refs = tx.prepare_cached(
        "INSERT INTO entry_refs(day, seq, path, hash, blob) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (seq, e) in file.entries.iter().enumerate() {
        let json = serde_json::to_string(e).unwrap_or_default();
        entry.execute(params![
            day,
            seq as i64,
            e.id,
            e.session_id,
            e.project(),
            e.project().map(project_key),
            e.time,
            group_key(e, day, seq),
            json
        ])?;
        for r in &e.refs {
            refs.execute(params![day, seq as i64, r.path, r.hash, r.blob])?;
        }
    }
    Ok(file.entries.len())
}

/// The session grouping key of anchor §8: `[session_id, project]`, or the entry alone.
fn group_key(e: &Entry, day: &str, seq: usize) -> String {
    match e.session_id.as_deref().filter(|s| !s.is_empty()) {
        Some(sid) => serde_json::json!([sid, e.project()]).to_string(),
        None => format!("\u{0}{day}/{seq}"),
    }
}

/// How a project name is compared: NFC, lowercase, trimmed.
pub fn project_key(p: &str) -> String {
    p.trim().nfc().collect::<String>().to_lowercase()
}
