//! Bringing the working record files to a tip that sync set (spec/sync.md, "Working files").
//!
//! A working file is replaced by its new committed version only when it holds no edit: it is
//! the old committed version, maybe followed by lines not committed yet (a capture that timed
//! out on the lock while sync held it, use-log lines of the MCP server). Those lines are kept
//! and written again after the new version, and the pending journal's offsets follow them. A
//! file with any other difference, a missing or symlinked one, is left alone and reported.

use crate::fsx::{Dir, FsError};
use crate::store::journal::Journal;
use crate::store::tree::Trees;
use crate::store::{Store, StoreError};
use git2::Oid;
use std::io::{Read, Seek, SeekFrom, Write};

/// What happened to the working files.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Checkout {
    /// Files written with their new committed version (created or replaced).
    pub updated: Vec<String>,
    /// Files left as they were, with why.
    pub left_alone: Vec<(String, String)>,
    /// Uncommitted lines written again after a new version (lines, not bytes).
    pub kept_lines: usize,
}

impl Store {
    /// Updates the working record files from the tree `old` (what they were committed as) to
    /// the tree `new`. The caller holds the capture lock.
    pub(crate) fn check_out(
        &self,
        trees: &mut Trees<'_>,
        old: Oid,
        new: Oid,
        journal: &Journal,
    ) -> Result<Checkout, StoreError> {
        let mut out = Checkout::default();
        let root = Dir::open(self.root())?;
        for ch in trees.changes(Some(old), Some(new))? {
            let Some(new_blob) = ch.new else { continue };
            if !ch.path.starts_with(crate::vault::OVERLAY_DIR) {
                continue;
            }
            let committed = match ch.old {
                Some(o) => Some(trees.blob(o)?.to_vec()),
                None => None,
            };
            let next = trees.blob(new_blob)?.to_vec();
            match self.update_file(&root, &ch.path, committed.as_deref(), &next, journal) {
                Ok(Outcome::Written(kept)) => {
                    out.kept_lines += kept;
                    out.updated.push(ch.path);
                }
                Ok(Outcome::Same) => {}
                Ok(Outcome::Left(why)) => out.left_alone.push((ch.path, why)),
                Err(e @ (FsError::Symlink(_) | FsError::WrongKind(_))) => {
                    out.left_alone.push((ch.path, e.to_string()))
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(out)
    }

    fn update_file(
        &self,
        root: &Dir,
        path: &str,
        committed: Option<&[u8]>,
        next: &[u8],
        journal: &Journal,
    ) -> Result<Outcome, FsError> {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        let Some(dir) = root.open_dir(dir, true)? else {
            return Ok(Outcome::Left("its folder cannot be created".into()));
        };
        let Some(mut old_file) = dir.open_read(name)? else {
            return Ok(match committed {
                None if dir.create_new(name, next)? => Outcome::Written(0),
                None => Outcome::Left("it appeared while sync was writing it".into()),
                Some(_) => Outcome::Left(
                    "it was deleted from the working tree; `git rutter restore` brings it back"
                        .into(),
                ),
            });
        };
        let mut working = Vec::new();
        old_file
            .read_to_end(&mut working)
            .map_err(|e| io(&dir, name, e))?;
        if working == next {
            return Ok(Outcome::Same);
        }
        // A file never committed here starts with the header every copy of it starts with;
        // what follows is lines not committed yet (a capture that timed out on the lock).
        let header = header_for(path);
        let base = committed.unwrap_or(header.as_bytes());
        let extra = match working.strip_prefix(base) {
            _ if committed.is_none() && next.starts_with(&working) => Vec::new(),
            Some(rest) => rest.to_vec(),
            None => return Ok(Outcome::Left(not_committed())),
        };
        // Only whole lines were added (another writer's own day file, a fast-forward): append
        // them, so no byte of the working file is rewritten.
        if extra.is_empty() && next.starts_with(&working) && working.ends_with(b"\n") {
            let mut f = dir.open_append(name)?;
            // Unless a capture that timed out on the lock appended meanwhile: then the file is
            // rewritten below, with its line kept after the new version.
            if f.len == working.len() as u64 {
                f.file
                    .write_all(&next[working.len()..])
                    .map_err(|e| io(&dir, name, e))?;
                return Ok(Outcome::Written(0));
            }
        }
        let mut bytes = next.to_vec();
        if !extra.is_empty() && !bytes.is_empty() && !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
        let moved_to = bytes.len() as u64;
        bytes.extend_from_slice(&extra);
        dir.write_atomic(name, &bytes)?;
        // A capture that timed out on the lock may have appended to the old file between the
        // read and the rename: carry what it wrote over.
        let mut late = Vec::new();
        old_file
            .seek(SeekFrom::Start(working.len() as u64))
            .and_then(|_| old_file.read_to_end(&mut late))
            .map_err(|e| io(&dir, name, e))?;
        if !late.is_empty() {
            let mut f = dir.open_append(name)?;
            f.file.write_all(&late).map_err(|e| io(&dir, name, e))?;
        }
        let shift = moved_to as i64 - base.len() as i64;
        self.move_journal(journal, path, base.len() as u64, shift);
        let kept = extra.iter().chain(&late).filter(|&&b| b == b'\n').count();
        Ok(Outcome::Written(kept))
    }

    /// Moves the journal records of `path` that lay after the old committed bytes (`from`) by
    /// `shift`, so `git rutter commit` finds each line where it now is. A record that also
    /// wrote the header of a new file keeps only what it wrote after it. Best effort: a record
    /// whose offset is stale is still committed, from the journal, as a diverged file.
    fn move_journal(&self, journal: &Journal, path: &str, from: u64, shift: i64) {
        let Ok((records, _)) = journal.list() else {
            return;
        };
        for (name, mut rec) in records {
            let end = rec.offset + rec.bytes.len() as u64;
            if rec.path != path || end <= from || shift == 0 {
                continue;
            }
            if rec.offset < from {
                let cut = (from - rec.offset) as usize;
                let Some(rest) = rec.bytes.get(cut..) else {
                    continue;
                };
                rec.bytes = rest.to_string();
                rec.offset = from;
            }
            rec.offset = (rec.offset as i64 + shift).max(0) as u64;
            let _ = journal.rewrite(&name, &rec);
        }
    }
}

/// What happened to one file.
enum Outcome {
    Written(usize),
    Same,
    Left(String),
}

/// The bytes every copy of a record file starts with: a day file's or the ledger's header.
fn header_for(path: &str) -> String {
    match crate::store::day_of(path) {
        Some(day) => crate::records::dayfile::header(day),
        None if path == crate::records::ledger::LEDGER_PATH => crate::records::ledger::header(),
        None => String::new(),
    }
}

fn not_committed() -> String {
    "it has edits that are not committed; `git rutter verify` shows them".into()
}

fn io(dir: &Dir, name: &str, source: std::io::Error) -> FsError {
    FsError::Io {
        path: dir.path().join(name),
        source,
    }
}
