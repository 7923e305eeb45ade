//! Indexing the notes: walk, fingerprint, read, hash and full-text index what changed.
//!
//! A note is re-read only when its size or mtime changed since it was indexed. Reading,
//! hashing and frontmatter parsing run on a worker thread while SQLite inserts on this one.

use super::{frontmatter, walk};
use crate::records::fingerprint;
use rusqlite::{params, Transaction};
use std::collections::HashMap;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Instant;

/// What a refresh of the notes did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Refresh {
    /// Notes in the index afterwards.
    pub indexed: usize,
    /// Notes (re)read because they are new or changed.
    pub changed: usize,
    pub removed: usize,
    /// Notes that could not be read.
    pub skipped: usize,
    pub elapsed_ms: u128,
}

impl Refresh {
    /// Whether anything in the index changed.
    pub fn touched(&self) -> bool {
        self.changed + self.removed > 0
    }
}

/// One note, read and parsed, ready to insert.
struct NoteRow {
    path: String,
    meta: frontmatter::NoteMeta,
    body: String,
    size: u64,
    mtime_ns: i64,
    sha256: String,
    blob: String,
}

/// Brings the `notes` and `notes_fts` tables in line with the vault.
pub fn refresh(tx: &Transaction<'_>, root: &Path) -> Result<Refresh, rusqlite::Error> {
    let started = Instant::now();
    let files = walk::walk_notes(root);
    let mut known: HashMap<String, (i64, i64, i64)> = HashMap::new();
    {
        let mut stmt = tx.prepare("SELECT path, id, size, mtime_ns FROM notes")?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, (r.get(1)?, r.get(2)?, r.get(3)?)))
        })?;
        for row in rows {
            let (path, v) = row?;
            known.insert(path, v);
        }
    }
    let mut report = Refresh {
        indexed: files.len(),
        ..Default::default()
    };
    let mut todo: Vec<(String, Option<i64>)> = Vec::new();
    for f in &files {
        match known.remove(&f.path) {
            Some((_, size, mtime)) if size == f.size as i64 && mtime == f.mtime_ns => {}
            Some((id, ..)) => todo.push((f.path.clone(), Some(id))),
            None => todo.push((f.path.clone(), None)),
        }
    }
    for (_, (id, ..)) in known.iter() {
        tx.prepare_cached("DELETE FROM notes_fts WHERE rowid = ?1")?
            .execute([id])?;
        tx.prepare_cached("DELETE FROM notes WHERE id = ?1")?
            .execute([id])?;
    }
    report.removed = known.len();
    let (changed, skipped) = read_and_insert(tx, root, todo)?;
    report.changed = changed;
    report.skipped = skipped;
    report.indexed -= skipped;
    report.elapsed_ms = started.elapsed().as_millis();
    Ok(report)
}

/// Reads the notes on a worker thread and inserts them here; returns (inserted, skipped).
fn read_and_insert(
    tx: &Transaction<'_>,
    root: &Path,
    todo: Vec<(String, Option<i64>)>,
) -> Result<(usize, usize), rusqlite::Error> {
    if todo.is_empty() {
        return Ok((0, 0));
    }
    let ids: HashMap<String, i64> = todo
        .iter()
        .filter_map(|(p, id)| Some((p.clone(), (*id)?)))
        .collect();
    let paths: Vec<String> = todo.into_iter().map(|(p, _)| p).collect();
    let (send, recv) = std::sync::mpsc::sync_channel::<Result<NoteRow, String>>(256);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            for path in paths {
                if send.send(read_note(root, &path).ok_or(path)).is_err() {
                    break;
                }
            }
        });
        let mut upsert = Upsert::new(tx)?;
        let (mut inserted, mut skipped) = (0, 0);
        for item in recv {
            match item {
                Ok(row) => {
                    upsert.note(&row, ids.get(&row.path).copied())?;
                    inserted += 1;
                }
                Err(path) => {
                    if let Some(id) = ids.get(&path) {
                        upsert.delete(*id)?;
                    }
                    skipped += 1;
                }
            }
        }
        Ok((inserted, skipped))
    })
}

/// Prepared statements for writing notes.
struct Upsert<'t> {
    insert: rusqlite::Statement<'t>,
    update: rusqlite::Statement<'t>,
    fts_delete: rusqlite::Statement<'t>,
    fts_insert: rusqlite::Statement<'t>,
    delete: rusqlite::Statement<'t>,
    tx: &'t Transaction<'t>,
}

impl<'t> Upsert<'t> {
    fn new(tx: &'t Transaction<'t>) -> Result<Self, rusqlite::Error> {
        Ok(Upsert {
            insert: tx.prepare("INSERT INTO notes(path, title, type, status, created, domain, tags, mtime, size, mtime_ns, sha256, blob) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)")?,
            update: tx.prepare("UPDATE notes SET title=?2, type=?3, status=?4, created=?5, domain=?6, tags=?7, mtime=?8, size=?9, mtime_ns=?10, sha256=?11, blob=?12 WHERE id=?1")?,
            fts_delete: tx.prepare("DELETE FROM notes_fts WHERE rowid = ?1")?,
            fts_insert: tx.prepare("INSERT INTO notes_fts(rowid, path, title, body, tags) VALUES (?1, ?2, ?3, ?4, ?5)")?,
            delete: tx.prepare("DELETE FROM notes WHERE id = ?1")?,
            tx,
        })
    }

    fn note(&mut self, n: &NoteRow, existing: Option<i64>) -> Result<(), rusqlite::Error> {
        let m = &n.meta;
        let mtime_ms = n.mtime_ns.div_euclid(1_000_000);
        let size = n.size as i64;
        // An update is keyed by `id`, an insert by `path`; the rest of the row is the same.
        let key: &dyn rusqlite::ToSql = match &existing {
            Some(id) => id,
            None => &n.path,
        };
        let values: [&dyn rusqlite::ToSql; 12] = [
            key,
            &m.title,
            &m.note_type,
            &m.status,
            &m.created,
            &m.domain,
            &m.tags,
            &mtime_ms,
            &size,
            &n.mtime_ns,
            &n.sha256,
            &n.blob,
        ];
        let id = match existing {
            Some(id) => {
                self.update.execute(values)?;
                self.fts_delete.execute([id])?;
                id
            }
            None => {
                self.insert.execute(values)?;
                self.tx.last_insert_rowid()
            }
        };
        self.fts_insert
            .execute(params![id, n.path, m.title, n.body, m.tags])?;
        Ok(())
    }

    fn delete(&mut self, id: i64) -> Result<(), rusqlite::Error> {
        self.fts_delete.execute([id])?;
        self.delete.execute([id])?;
        Ok(())
    }
}

/// Reads one note without following a symlink at its last component; `None` when unreadable.
/// Non-blocking open: a FIFO swapped in since the walk must not stall the refresh (as in
/// `fsx::Dir::read`).
fn read_note(root: &Path, path: &str) -> Option<NoteRow> {
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(root.join(path))
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let (note_meta, body) = frontmatter::parse_note(path, &text);
    use std::os::unix::fs::MetadataExt;
    Some(NoteRow {
        path: path.to_string(),
        meta: note_meta,
        body: body.to_string(),
        size: meta.len(),
        mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
        sha256: fingerprint::sha256_ref(&bytes),
        blob: fingerprint::blob_id(&bytes),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::{FileType, Mode, CWD};
    use std::time::Duration;

    #[test]
    fn a_fifo_under_a_note_name_is_skipped_without_blocking() {
        let t = tempfile::tempdir().unwrap();
        rustix::fs::mknodat(
            CWD,
            t.path().join("swapped.md"),
            FileType::Fifo,
            Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        let root = t.path().to_path_buf();
        let (send, recv) = std::sync::mpsc::channel();
        std::thread::spawn(move || send.send(read_note(&root, "swapped.md").is_none()));
        assert_eq!(recv.recv_timeout(Duration::from_secs(5)), Ok(true));
    }
}
