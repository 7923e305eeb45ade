//! Creating `refs/rutter/records`: the first commit adopts the vault's existing records byte for
//! byte (day files, ledger, use log, position streams; not temp or stray files), and the ref gets
//! a reflog that gc never expires (DESIGN §3). The adopted blobs are written as one pack
//! ([`super::pack`]), not one loose object each.

use super::oid::{ToGit, ToId};
use super::pack::BlobPack;
use super::tree::Trees;
use super::{Store, StoreError, RECORDS_REF};
use crate::clock::Instant;
use crate::fsx::Dir;
use crate::objectid::ObjectId;
use crate::records::{grammar, paths};

/// What `ensure_ref` found or made.
#[derive(Debug)]
pub struct Adoption {
    pub tip: ObjectId,
    pub created: bool,
    pub adopted: Vec<String>,
    /// Files left out, with the reason (symlinks, non-regular files).
    pub skipped: Vec<(String, String)>,
    /// Why the new tip could not be witnessed in `.git/rutter/tips`, when it could not.
    pub unwitnessed: Option<String>,
}

impl Store {
    /// Makes sure the ref exists, creating it with an adoption commit when it does not.
    /// The caller holds the capture lock.
    pub fn ensure_ref(&self, now: Instant) -> Result<Adoption, StoreError> {
        self.ensure_ref_seeing(now, &mut |_, _| {})
    }

    /// [`Self::ensure_ref`], handing `each` every adopted file (its path in the ref and its
    /// bytes) as soon as it is in the pack, so a caller that needs the same bytes (`init`
    /// warming the dedupe cache) does not read the files a second time.
    pub(crate) fn ensure_ref_seeing(
        &self,
        now: Instant,
        each: &mut dyn FnMut(&str, Vec<u8>),
    ) -> Result<Adoption, StoreError> {
        if let Some(tip) = self.tip()? {
            return Ok(Adoption {
                tip,
                created: false,
                adopted: vec![],
                skipped: vec![],
                unwitnessed: None,
            });
        }
        // Every file is read and checked before anything is written: a file outside the record
        // grammar refuses the whole adoption, with the config and the ref untouched.
        let (files, skipped) = self.adoptable(now, each)?;
        self.configure_reflog()?;
        let tree_id = Trees::new(&self.repo)?.write(None, &files)?;
        let tree = self.repo.find_tree(tree_id.to_git())?;
        let sig = self.signature(now)?;
        let message = format!(
            "rutter: adopt\n\nAdopted {} existing record file(s) byte for byte.\n\nRutter-Format: 2\n",
            files.len()
        );
        let oid = self.repo.commit(None, &sig, &sig, &message, &tree, &[])?;
        self.repo
            .reference(RECORDS_REF, oid, false, "rutter: adopt")?;
        // A capture into a repository `init` never prepared starts the ref too: its records
        // stay out of `git status` and `git add .` as `init`'s do (best effort: `init` says
        // when the exclude cannot be written).
        let _ = super::exclude::exclude_overlay(self);
        // A tip that could not be witnessed is said now, and verify reports the gap.
        let unwitnessed = self.after_commit(oid.to_id());
        let adopted = files.into_iter().map(|(p, _)| p).collect();
        Ok(Adoption {
            tip: oid.to_id(),
            created: true,
            adopted,
            skipped,
            unwitnessed,
        })
    }

    /// Turns on the ref's reflog and tells gc never to expire it.
    pub fn configure_reflog(&self) -> Result<(), StoreError> {
        self.repo.reference_ensure_log(RECORDS_REF)?;
        let mut config = self.repo.config()?.open_level(git2::ConfigLevel::Local)?;
        config.set_str("gc.refs/rutter/records.reflogExpire", "never")?;
        config.set_str("gc.refs/rutter/records.reflogExpireUnreachable", "never")?;
        Ok(())
    }

    /// The record files present in the working tree, read without following symlinks, each
    /// added to the adoption pack (and shown to `each`) as soon as it is read: memory stays
    /// flat in the number of files (the generated ten-year vault's 3,650 day files are 79 MB).
    /// A file outside the record grammar (spec/record-format.md) is refused: every other
    /// machine's intake would refuse the adoption commit that held it, for good, since it is
    /// the root of the history ([`StoreError::NotARecord`]; the unfinished pack is removed).
    #[allow(clippy::type_complexity)]
    fn adoptable(
        &self,
        now: Instant,
        each: &mut dyn FnMut(&str, Vec<u8>),
    ) -> Result<(Vec<(String, ObjectId)>, Vec<(String, String)>), StoreError> {
        let root = Dir::open(self.root())?;
        let mut files = Vec::new();
        let mut skipped = Vec::new();
        let overlay = match root.open_dir("_librarian", false) {
            Ok(Some(d)) => d,
            Ok(None) => return Ok((files, skipped)),
            Err(e) => {
                skipped.push(("_librarian".to_string(), e.to_string()));
                return Ok((files, skipped));
            }
        };
        let mut pack = BlobPack::new(&self.repo)?;
        let mut adopt = |path: String, bytes: Vec<u8>| -> Result<(), StoreError> {
            if let Err(b) = grammar::added(&path, b"", &bytes, now) {
                return Err(StoreError::NotARecord {
                    path,
                    line: b.line,
                    rule: b.rule,
                });
            }
            let id = pack.add(&bytes)?;
            each(&path, bytes);
            files.push((path, id));
            Ok(())
        };
        for single in [paths::IDENTITY_LEDGER, paths::USE_LOG] {
            let name = single.trim_start_matches("_librarian/");
            match overlay.read(name) {
                Ok(Some(bytes)) => adopt(single.to_string(), bytes)?,
                Ok(None) => {}
                Err(e) => skipped.push((single.to_string(), e.to_string())),
            }
        }
        for (dir, wanted) in [
            (paths::SESSIONS_DIR, paths::is_day_file as fn(&str) -> bool),
            (paths::POSITIONS_DIR, paths::is_month_file),
        ] {
            let sub = match overlay.open_dir(dir.trim_start_matches("_librarian/"), false) {
                Ok(Some(d)) => d,
                Ok(None) => continue,
                Err(e) => {
                    skipped.push((dir.to_string(), e.to_string()));
                    continue;
                }
            };
            let mut names: Vec<String> = sub.list()?.into_iter().filter(|n| wanted(n)).collect();
            names.sort();
            for name in names {
                match sub.read(&name) {
                    Ok(Some(bytes)) => adopt(format!("{dir}/{name}"), bytes)?,
                    Ok(None) => {}
                    Err(e) => skipped.push((format!("{dir}/{name}"), e.to_string())),
                }
            }
        }
        pack.finish(&self.repo)?;
        Ok((files, skipped))
    }
}
