//! `restore`: rebuild missing record files from `refs/rutter/records`, and put the committed
//! version back over an edited one after moving the edited file aside (never deleting it).
//! Journalled pending lines are appended again after the committed bytes. A [`Recorder`]
//! method: it writes the working record files, so the session holds the capture lock.

use super::Recorder;
use crate::clock::Instant;
use crate::fsx::{Dir, FsError};
use crate::journal::Journal;
use crate::store::{Store, StoreError};
use std::path::PathBuf;

/// What happened to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restored {
    /// It was missing and was written from the ref.
    Recreated(String),
    /// It differed; the old file is now at the second path.
    Replaced(String, PathBuf),
}

impl Recorder<'_> {
    /// Restores the committed record files (only those of `day`, when given).
    pub(crate) fn restore(
        &self,
        day: Option<&str>,
        now: Instant,
    ) -> Result<Vec<Restored>, StoreError> {
        let store = self.store()?;
        let Some(tip) = store.tip()? else {
            return Ok(vec![]);
        };
        let pending = Journal::pending(store.state_dir())?;
        let mut done = Vec::new();
        for (path, blob) in store.record_files(tip)? {
            // Every file of the day: one per writer once sync is set up (spec/sync.md).
            if day.is_some_and(|d| crate::records::paths::day_of(&path) != Some(d)) {
                continue;
            }
            let committed = store.blob(blob)?;
            let working = std::fs::symlink_metadata(store.root().join(&path)).ok();
            let intact = working.as_ref().is_some_and(|m| m.is_file())
                && store
                    .working(&path)
                    .is_some_and(|c| c.starts_with(&committed));
            if intact {
                continue;
            }
            let mut want = committed;
            for (_, rec) in pending.iter().filter(|(_, r)| r.path == path) {
                let ends = want.is_empty() || want.ends_with(b"\n");
                want.extend_from_slice(
                    crate::records::append_bytes(want.len() as u64, ends, "", &rec.line).as_bytes(),
                );
            }
            let (d, name) = crate::overlay::folder(store.root(), &path, true)?;
            match working {
                None => {
                    d.write_atomic(name, &want)?;
                    done.push(Restored::Recreated(path));
                }
                Some(_) => {
                    let (aside_dir, aside) = aside_path(store, name, now)?;
                    d.rename_to(name, &aside_dir, &aside)?;
                    d.write_atomic(name, &want)?;
                    done.push(Restored::Replaced(path, aside_dir.path().join(aside)));
                }
            }
        }
        Ok(done)
    }
}

/// A free name under `.git/rutter/aside/` for `name` moved aside at `now`:
/// `<name>.<instant>`, else `<name>.<instant>-2`, `-3`, … so that an earlier file moved
/// aside (by a restore in the same millisecond, or with a pinned clock) is never replaced.
/// The folder is opened without following a symlink.
fn aside_path(store: &Store, name: &str, now: Instant) -> Result<(Dir, String), StoreError> {
    let state = store.state_dir();
    let dir = Dir::open_private(state)?
        .open_dir("aside", true)?
        .ok_or_else(|| FsError::WrongKind(state.join("aside")))?;
    let base = format!("{name}.{}", now.compact());
    let mut candidate = base.clone();
    let mut n = 1;
    while dir.stat(&candidate).is_some() {
        n += 1;
        candidate = format!("{base}-{n}");
    }
    Ok((dir, candidate))
}
