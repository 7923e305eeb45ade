//! The `notes` and `notes_fts` rows: reading, hashing and full-text indexing notes, and
//! deleting them. Which notes to read is decided by [`super::rescan`].
//!
//! Reading, hashing and frontmatter parsing run on a worker thread while SQLite writes on this
//! one. A note re-read with the content the index already holds (a `touch`, or a racy stamp
//! checked again) keeps its full-text row; only its stat columns are updated.

use super::frontmatter;
use super::snapshot::subtree_range;
use super::walk::{stamp_of, stat_size, Stamp};
use crate::records::fingerprint;
use rusqlite::{params, OptionalExtension, Transaction};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// What a refresh of the notes did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Refresh {
    /// Notes in the index afterwards.
    pub indexed: usize,
    /// Notes (re)indexed because they are new or their content changed.
    pub changed: usize,
    pub removed: usize,
    /// Notes that could not be read.
    pub skipped: usize,
    /// Notes that appeared or disappeared (created, deleted, renamed), by path.
    pub paths: Vec<String>,
    /// Notes whose content changed at the same path.
    pub edited: Vec<String>,
    pub elapsed_ms: u128,
}

impl Refresh {
    /// Whether anything in the index changed.
    #[cfg(test)]
    pub(crate) fn touched(&self) -> bool {
        self.changed + self.removed > 0
    }

    /// Whether a note's path appeared or disappeared.
    #[cfg(test)]
    pub(crate) fn paths_changed(&self) -> bool {
        !self.paths.is_empty()
    }

    /// Counts a note written: new, or with new content.
    fn written(&mut self, path: &str, new: bool) {
        self.changed += 1;
        if new {
            self.paths.push(path.to_string());
        } else {
            self.edited.push(path.to_string());
        }
    }

    /// Counts a note removed from the index.
    pub(crate) fn gone(&mut self, path: String) {
        self.removed += 1;
        self.paths.push(path);
    }

    /// Adds what another rescan did.
    pub(crate) fn absorb(&mut self, other: Refresh) {
        self.changed += other.changed;
        self.removed += other.removed;
        self.skipped += other.skipped;
        self.paths.extend(other.paths);
        self.edited.extend(other.edited);
        self.indexed = other.indexed;
    }
}

/// One note, read and parsed, ready to insert.
struct NoteRow {
    path: String,
    meta: frontmatter::NoteMeta,
    body: String,
    size: u64,
    stamp: Stamp,
    sha256: String,
    blob: String,
}

/// What reading one note found: its size and stamp at the read, or `None` if it could not be
/// read (it is then not in `notes`).
pub(crate) type Outcome = (String, Option<(u64, Stamp)>);

/// Reads `paths` on a worker thread and writes them here: new notes inserted, changed ones
/// updated, unchanged content only re-stamped, unreadable ones removed. Returns each path's
/// outcome, in the order given, and counts what changed in `report`.
pub(crate) fn read_and_store(
    tx: &Transaction<'_>,
    root: &Path,
    paths: Vec<String>,
    report: &mut Refresh,
) -> Result<Vec<Outcome>, rusqlite::Error> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    // A fresh build has nothing to look up.
    let any_rows: bool = tx.query_row("SELECT EXISTS(SELECT 1 FROM notes)", [], |r| r.get(0))?;
    let (send, recv) = std::sync::mpsc::sync_channel::<Reading>(256);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            for path in paths {
                let read = match read_note(root, &path) {
                    Some(row) => Reading::Note(row),
                    None => Reading::Unreadable(path),
                };
                if send.send(read).is_err() {
                    break;
                }
            }
        });
        let mut upsert = Upsert::new(tx)?;
        let mut outcomes = Vec::new();
        for item in recv {
            match item {
                Reading::Note(row) => {
                    let existing = if any_rows {
                        upsert.existing(&row.path)?
                    } else {
                        None
                    };
                    let new = existing.is_none();
                    if upsert.note(&row, existing)? {
                        report.written(&row.path, new);
                    }
                    outcomes.push((row.path, Some((row.size, row.stamp))));
                }
                Reading::Unreadable(path) => {
                    if any_rows {
                        if let Some((id, _)) = upsert.existing(&path)? {
                            upsert.delete(id)?;
                            report.gone(path.clone());
                        }
                    }
                    outcomes.push((path, None));
                }
            }
        }
        Ok(outcomes)
    })
}

/// What the reading thread hands over: a note's row, or the path of a note it could not read.
/// Nearly every one is a row, so it is not boxed (an allocation per note for the rare path).
#[allow(clippy::large_enum_variant)]
enum Reading {
    Note(NoteRow),
    Unreadable(String),
}

/// Removes one note by path, counted in `report` if it was indexed.
pub(crate) fn delete_path(
    tx: &Transaction<'_>,
    path: &str,
    report: &mut Refresh,
) -> Result<(), rusqlite::Error> {
    let id: Option<i64> = tx
        .prepare_cached("SELECT id FROM notes WHERE path = ?1")?
        .query_row([path], |r| r.get(0))
        .optional()?;
    if let Some(id) = id {
        delete_id(tx, id)?;
        report.gone(path.to_string());
    }
    Ok(())
}

/// Removes every note under `dir` (every note for the root), counted in `report`.
pub(crate) fn delete_under(
    tx: &Transaction<'_>,
    dir: &str,
    report: &mut Refresh,
) -> Result<(), rusqlite::Error> {
    let (low, high) = subtree_range(dir);
    let rows: Vec<(i64, String)> = tx
        .prepare_cached("SELECT id, path FROM notes WHERE path >= ?1 AND path < ?2")?
        .query_map([low, high], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (id, path) in rows {
        delete_id(tx, id)?;
        report.gone(path);
    }
    Ok(())
}

/// Every indexed path with its id.
pub(crate) fn all_paths(tx: &Transaction<'_>) -> Result<Vec<(String, i64)>, rusqlite::Error> {
    let mut stmt = tx.prepare_cached("SELECT path, id FROM notes")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

/// Removes one note by id.
pub(crate) fn delete_id(tx: &Transaction<'_>, id: i64) -> Result<(), rusqlite::Error> {
    tx.prepare_cached("DELETE FROM notes_fts WHERE rowid = ?1")?
        .execute([id])?;
    tx.prepare_cached("DELETE FROM notes WHERE id = ?1")?
        .execute([id])?;
    Ok(())
}

/// How many notes are indexed.
pub(crate) fn count(tx: &Transaction<'_>) -> Result<usize, rusqlite::Error> {
    let n: i64 = tx.query_row("SELECT count(*) FROM notes", [], |r| r.get(0))?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// Prepared statements for writing notes.
struct Upsert<'t> {
    existing: rusqlite::Statement<'t>,
    insert: rusqlite::Statement<'t>,
    update: rusqlite::Statement<'t>,
    restamp: rusqlite::Statement<'t>,
    fts_delete: rusqlite::Statement<'t>,
    fts_insert: rusqlite::Statement<'t>,
    tx: &'t Transaction<'t>,
}

impl<'t> Upsert<'t> {
    fn new(tx: &'t Transaction<'t>) -> Result<Self, rusqlite::Error> {
        Ok(Upsert {
            existing: tx.prepare("SELECT id, sha256 FROM notes WHERE path = ?1")?,
            insert: tx.prepare("INSERT INTO notes(path, title, type, status, created, domain, tags, mtime, size, mtime_ns, sha256, blob) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)")?,
            update: tx.prepare("UPDATE notes SET title=?2, type=?3, status=?4, created=?5, domain=?6, tags=?7, mtime=?8, size=?9, mtime_ns=?10, sha256=?11, blob=?12 WHERE id=?1")?,
            restamp: tx.prepare("UPDATE notes SET mtime=?2, size=?3, mtime_ns=?4 WHERE id=?1")?,
            fts_delete: tx.prepare("DELETE FROM notes_fts WHERE rowid = ?1")?,
            fts_insert: tx.prepare("INSERT INTO notes_fts(rowid, path, title, body, tags) VALUES (?1, ?2, ?3, ?4, ?5)")?,
            tx,
        })
    }

    /// The id and sha256 of the indexed note at `path`, if any.
    fn existing(&mut self, path: &str) -> Result<Option<(i64, String)>, rusqlite::Error> {
        self.existing
            .query_row([path], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
    }

    /// Writes a note; false when only its stat columns changed (same content).
    fn note(
        &mut self,
        n: &NoteRow,
        existing: Option<(i64, String)>,
    ) -> Result<bool, rusqlite::Error> {
        let m = &n.meta;
        let mtime_ns = n.stamp.mtime_ns;
        let mtime_ms = mtime_ns.div_euclid(1_000_000);
        let size = n.size as i64;
        if let Some((id, sha)) = &existing {
            if *sha == n.sha256 {
                self.restamp
                    .execute(params![id, mtime_ms, size, mtime_ns])?;
                return Ok(false);
            }
        }
        // An update is keyed by `id`, an insert by `path`; the rest of the row is the same.
        let key: &dyn rusqlite::ToSql = match &existing {
            Some((id, _)) => id,
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
            &mtime_ns,
            &n.sha256,
            &n.blob,
        ];
        let id = match existing {
            Some((id, _)) => {
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
        Ok(true)
    }

    fn delete(&mut self, id: i64) -> Result<(), rusqlite::Error> {
        self.fts_delete.execute([id])?;
        self.tx
            .prepare_cached("DELETE FROM notes WHERE id = ?1")?
            .execute([id])?;
        Ok(())
    }
}

/// Reads one note without following a symlink at its last component; `None` when unreadable
/// or over [`fingerprint::NOTE_MAX_BYTES`].
/// Non-blocking open: a FIFO swapped in since the walk must not stall the refresh (as in
/// `fsx::Dir::read`).
fn read_note(root: &Path, path: &str) -> Option<NoteRow> {
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(root.join(path))
        .ok()?;
    // The stamp recorded is the one of the descriptor read, taken before reading: a write
    // during the read moves the file's stamp past it, so the next check reads it again.
    let st = rustix::fs::fstat(&file).ok()?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return None;
    }
    let size = stat_size(&st);
    // A note over the limit is not indexed (as if unreadable): reading it would stall every
    // refresh, and a capture does not cite it either.
    if size > fingerprint::NOTE_MAX_BYTES {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    (&mut file)
        .take(fingerprint::NOTE_MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.len() as u64 > fingerprint::NOTE_MAX_BYTES {
        return None;
    }
    let text = String::from_utf8_lossy(&bytes);
    let (note_meta, body) = frontmatter::parse_note(path, &text);
    Some(NoteRow {
        path: path.to_string(),
        meta: note_meta,
        body: body.to_string(),
        size,
        stamp: stamp_of(&st),
        sha256: fingerprint::sha256_ref(&bytes),
        blob: fingerprint::blob_id(&bytes),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_fifo_under_a_note_name_is_skipped_without_blocking() {
        let t = tempfile::tempdir().unwrap();
        crate::fsx::testing::fifo(&t.path().join("swapped.md"));
        let root = t.path().to_path_buf();
        let (send, recv) = std::sync::mpsc::channel();
        std::thread::spawn(move || send.send(read_note(&root, "swapped.md").is_none()));
        assert_eq!(recv.recv_timeout(Duration::from_secs(5)), Ok(true));
    }
}
