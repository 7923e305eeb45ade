//! `restore`: rebuild missing record files from `refs/rutter/records`, and put the committed
//! version back over an edited one after moving the edited file aside (never deleting it).
//! Journalled pending lines are appended again after the committed bytes.

use super::oid::ToGit;
use super::{Store, StoreError};
use crate::clock::Instant;
use crate::fsx::{Dir, FsError};
use crate::journal::Journal;
use std::path::PathBuf;

/// What happened to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restored {
    /// It was missing and was written from the ref.
    Recreated(String),
    /// It differed; the old file is now at the second path.
    Replaced(String, PathBuf),
}

impl Store {
    /// Restores record files (only those of `day`, when given). The caller holds the lock.
    pub fn restore(&self, day: Option<&str>, now: Instant) -> Result<Vec<Restored>, StoreError> {
        let Some(tip) = self.tip()? else {
            return Ok(vec![]);
        };
        let pending = Journal::pending(self.state_dir())?;
        let mut done = Vec::new();
        for (path, blob) in self.record_files(tip)? {
            // Every file of the day: one per writer once sync is set up (spec/sync.md).
            if day.is_some_and(|d| crate::records::paths::day_of(&path) != Some(d)) {
                continue;
            }
            let committed = self.repo.find_blob(blob.to_git())?.content().to_vec();
            let working = std::fs::symlink_metadata(self.root().join(&path)).ok();
            let intact = working.as_ref().is_some_and(|m| m.is_file())
                && self
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
            let (d, name) = crate::overlay::folder(self.root(), &path, true)?;
            match working {
                None => {
                    d.write_atomic(name, &want)?;
                    done.push(Restored::Recreated(path));
                }
                Some(_) => {
                    let (aside_dir, aside) = self.aside_path(name, now)?;
                    d.rename_to(name, &aside_dir, &aside)?;
                    d.write_atomic(name, &want)?;
                    done.push(Restored::Replaced(path, aside_dir.path().join(aside)));
                }
            }
        }
        Ok(done)
    }

    /// A free name under `.git/rutter/aside/` for `name` moved aside at `now`:
    /// `<name>.<instant>`, else `<name>.<instant>-2`, `-3`, … so that an earlier file moved
    /// aside (by a restore in the same millisecond, or with a pinned clock) is never replaced.
    /// The folder is opened without following a symlink. The caller holds the lock.
    fn aside_path(&self, name: &str, now: Instant) -> Result<(Dir, String), StoreError> {
        let dir = Dir::open_private(self.state_dir())?
            .open_dir("aside", true)?
            .ok_or_else(|| FsError::WrongKind(self.state_dir().join("aside")))?;
        let base = format!("{name}.{}", now.compact());
        let mut candidate = base.clone();
        let mut n = 1;
        while dir.stat(&candidate).is_some() {
            n += 1;
            candidate = format!("{base}-{n}");
        }
        Ok((dir, candidate))
    }
}
