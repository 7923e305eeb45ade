//! Indexing the record entries of every day file (`@1` and `@2`), re-reading only the day
//! files whose size or mtime changed, so `recent` and enrichment never parse history.

use crate::fsx::Dir;
use crate::records::{dayfile, paths, Entry};
use crate::store::adopt::is_day_file;
use rusqlite::{params, OptionalExtension, Transaction};
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

/// Brings `day_files`, `entries` and `entry_refs` in line with `_librarian/sessions/`. With
/// `quick`, when the sessions folder's mtime is the one recorded at the last full scan (no day
/// file was added, removed or renamed), only the two newest day files are checked: captures
/// only ever append to today's file. A full scan records the folder's mtime.
pub fn refresh(
    tx: &Transaction<'_>,
    root: &Path,
    quick: bool,
) -> Result<EntriesRefresh, rusqlite::Error> {
    let Some(sessions) = Dir::open(root)
        .ok()
        .and_then(|d| d.open_dir(paths::SESSIONS_DIR, false).ok().flatten())
    else {
        return remove_missing(tx, known(tx)?.into_keys().collect());
    };
    let dir_mtime = sessions.stat(".").map_or(0, |(_, m, _)| m);
    let recorded: Option<i64> = tx
        .query_row(
            "SELECT value FROM meta WHERE key = 'sessions_mtime'",
            [],
            |r| r.get::<_, String>(0),
        )
        .optional()?
        .and_then(|v| v.parse().ok());
    let mut known = known(tx)?;
    let names: Vec<String> = if quick && recorded == Some(dir_mtime) && dir_mtime != 0 {
        let mut newest: Vec<String> = known.keys().cloned().collect();
        newest.sort_unstable_by(|a, b| b.cmp(a));
        newest.truncate(2);
        known.retain(|k, _| newest.contains(k));
        newest
    } else {
        sessions.list().unwrap_or_default()
    };
    let mut report = EntriesRefresh::default();
    for name in names.iter().filter(|n| is_day_file(n)) {
        let Some((size, mtime, true)) = sessions.stat(name) else {
            continue;
        };
        let before = known.remove(name);
        if before == Some((size as i64, mtime)) {
            continue;
        }
        if before.is_some() {
            delete_day(tx, name)?;
        }
        let bytes = sessions.read(name).ok().flatten().unwrap_or_default();
        report.entries_read += insert_day(tx, name, &bytes)?;
        tx.prepare_cached(
            "INSERT OR REPLACE INTO day_files(name, size, mtime_ns) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![name, size as i64, mtime])?;
        report.files_read += 1;
    }
    let gone = remove_missing(tx, known.into_keys().collect())?;
    report.files_removed = gone.files_removed;
    if dir_mtime != 0 && !racy(dir_mtime) {
        tx.prepare_cached("INSERT OR REPLACE INTO meta(key, value) VALUES ('sessions_mtime', ?1)")?
            .execute([dir_mtime.to_string()])?;
    }
    Ok(report)
}

/// The day files the index knows, with their size and mtime.
fn known(tx: &Transaction<'_>) -> Result<HashMap<String, (i64, i64)>, rusqlite::Error> {
    let mut stmt = tx.prepare_cached("SELECT name, size, mtime_ns FROM day_files")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, (r.get(1)?, r.get(2)?))))?;
    rows.collect()
}

fn remove_missing(
    tx: &Transaction<'_>,
    names: Vec<String>,
) -> Result<EntriesRefresh, rusqlite::Error> {
    for name in &names {
        delete_day(tx, name)?;
        tx.prepare_cached("DELETE FROM day_files WHERE name = ?1")?
            .execute([name])?;
    }
    Ok(EntriesRefresh {
        files_removed: names.len(),
        ..Default::default()
    })
}

/// An mtime within the last two seconds may still change without changing its value (the
/// file system's clock granularity), so it is not trusted for the quick check.
fn racy(mtime_ns: i64) -> bool {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0);
    now - mtime_ns < 2_000_000_000
}

/// Removes the rows of one day.
fn delete_day(tx: &Transaction<'_>, name: &str) -> Result<(), rusqlite::Error> {
    let day = &name[..10];
    tx.prepare_cached("DELETE FROM entries WHERE day = ?1")?
        .execute([day])?;
    tx.prepare_cached("DELETE FROM entry_refs WHERE day = ?1")?
        .execute([day])?;
    Ok(())
}

/// Inserts the entries in `bytes` as the rows of one day; returns how many.
fn insert_day(tx: &Transaction<'_>, name: &str, bytes: &[u8]) -> Result<usize, rusqlite::Error> {
    let day = &name[..10];
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{dayfile, line};
    use rustix::fs::{utimensat, AtFlags, Timespec, Timestamps, CWD};

    fn entry_line(id: &str) -> String {
        let e = Entry {
            id: id.into(),
            session_id: None,
            time: "2026-11-30T00:00:00.000Z".into(),
            summary: format!("s{id}"),
            refs: vec![],
            workspace: None,
            client: None,
            extra: Default::default(),
        };
        line::render(&e)
    }

    fn age(path: &Path) {
        let old = Timespec {
            tv_sec: 1_700_000_000,
            tv_nsec: 0,
        };
        utimensat(
            CWD,
            path,
            &Timestamps {
                last_access: old,
                last_modification: old,
            },
            AtFlags::empty(),
        )
        .unwrap();
    }

    fn count(conn: &rusqlite::Connection) -> i64 {
        conn.query_row("SELECT count(*) FROM entries", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn quick_refresh_checks_the_newest_files_and_trusts_the_folder_mtime() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("_librarian/sessions");
        std::fs::create_dir_all(&dir).unwrap();
        for day in ["2026-11-01", "2026-11-29", "2026-11-30"] {
            std::fs::write(
                dir.join(format!("{day}.md")),
                dayfile::append_bytes(0, true, day, &entry_line(day)),
            )
            .unwrap();
        }
        age(&dir);
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(crate::index::schema::CREATE).unwrap();
        let tx = conn.transaction().unwrap();
        refresh(&tx, t.path(), false).unwrap();
        tx.commit().unwrap();
        assert_eq!(count(&conn), 3);
        let append = |day: &str, id: &str| {
            let p = dir.join(format!("{day}.md"));
            let mut text = std::fs::read_to_string(&p).unwrap();
            text.push_str(&format!("{}\n", entry_line(id)));
            std::fs::write(&p, text).unwrap();
        };
        append("2026-11-30", "today-2");
        append("2026-11-01", "old-2");
        age(&dir);
        let tx = conn.transaction().unwrap();
        let r = refresh(&tx, t.path(), true).unwrap();
        tx.commit().unwrap();
        assert_eq!(
            (r.files_read, count(&conn)),
            (1, 4),
            "the newest file is re-read, the old one is not"
        );
        let tx = conn.transaction().unwrap();
        refresh(&tx, t.path(), false).unwrap();
        tx.commit().unwrap();
        assert_eq!(count(&conn), 5, "a full refresh sees every change");
    }
}
