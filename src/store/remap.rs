//! After a purge's rewrite (spec/purge.md, "After the rewrite"): the witness log and the reflogs
//! of the record ref and of its remote-tracking refs carried through the rewrite's map, so they
//! read as if the history had always been the rewritten one; the remote-tracking refs moved to
//! their rewritten commits; and the old objects expired from the object store with git's own
//! tools.

use super::oid::ToGit;
use super::rewrite::Rewritten;
use super::{Store, StoreError};
use crate::fsx::Dir;
use crate::objectid::ObjectId;
use std::path::Path;
use std::time::Duration;

/// The longest git's repack and prune may take together before the purge says it could not
/// expire the old objects (the rewrite itself stands).
const EXPIRE_WITHIN: Duration = Duration::from_secs(600);

/// Why the old objects could not be expired (the record is unharmed either way).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExpireError {
    #[error("git is not on PATH")]
    NoGit,
    #[error("`git {command}` failed: {stderr}")]
    Failed { command: String, stderr: String },
    #[error("`git {0}` took too long")]
    TooLong(String),
    #[error("`git {command}` could not run: {source}")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Each line of `text` with a leading id (a witness log line) or the two leading ids of a
/// reflog line mapped through `map`; every other byte kept.
fn mapped_lines(text: &[u8], map: &Rewritten, ids_per_line: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for line in text.split_inclusive(|b| *b == b'\n') {
        let mut rest = line;
        for _ in 0..ids_per_line {
            let end = rest
                .iter()
                .position(|b| !b.is_ascii_hexdigit())
                .unwrap_or(rest.len());
            let (id, after) = rest.split_at(end);
            let new = std::str::from_utf8(id)
                .ok()
                .filter(|s| s.len() == 40)
                .and_then(|s| ObjectId::from_hex(s).ok())
                .and_then(|old| map.get(old));
            match new {
                Some(n) => out.extend_from_slice(n.to_string().as_bytes()),
                None => out.extend_from_slice(id),
            }
            // The separator after the id (a space in a reflog line).
            let sep = after.iter().take(1).filter(|b| **b == b' ').count();
            out.extend_from_slice(&after[..sep]);
            rest = &after[sep..];
        }
        out.extend_from_slice(rest);
    }
    out
}

/// Rewrites the file `name` of `dir` through `map`, atomically; a missing file is left missing.
fn remap_file(dir: &Dir, name: &str, map: &Rewritten, ids: usize) -> Result<(), StoreError> {
    if let Some(bytes) = dir.read(name)? {
        let new = mapped_lines(&bytes, map, ids);
        if new != bytes {
            dir.write_atomic(name, &new)?;
        }
    }
    Ok(())
}

impl Store {
    /// The remote-tracking refs of the records (`refs/remotes/*/rutter/records`) and where they
    /// point.
    pub(crate) fn record_tracking_refs(&self) -> Result<Vec<(String, ObjectId)>, StoreError> {
        Ok(self
            .refs_under("refs/remotes/")?
            .into_iter()
            .filter(|(name, _)| name.ends_with("/rutter/records"))
            .collect())
    }

    /// Carries the witness log, the record ref's reflog and the remote-tracking refs (and
    /// their reflogs) through `map`. The caller holds the capture lock and has moved the ref.
    pub(crate) fn remap_logs(&self, map: &Rewritten) -> Result<(), StoreError> {
        let state = Dir::open_private(self.state_dir())?;
        remap_file(&state, "tips", map, 1)?;
        let logs = self.repo.commondir().join("logs");
        let mut names = vec![super::RECORDS_REF.to_string()];
        for (name, oid) in self.record_tracking_refs()? {
            if let Some(new) = map.get(oid).filter(|n| *n != oid) {
                self.repo
                    .reference(&name, new.to_git(), true, "rutter: purge (rewritten)")?;
            }
            names.push(name);
        }
        for name in names {
            let path = logs.join(&name);
            let (Some(parent), Some(file)) = (path.parent(), path.file_name()) else {
                continue;
            };
            let Ok(dir) = Dir::open(parent) else {
                continue;
            };
            remap_file(&dir, &file.to_string_lossy(), map, 2)?;
        }
        Ok(())
    }

    /// Expires objects nothing reaches any more from the object store: `git repack -a -d`
    /// (unreachable objects leave the packs) then `git prune --expire=now` (and the loose
    /// ones). `Err` says why it could not; the record is unharmed either way. `before_push`:
    /// the remotes still hold the old history (a purge not sent yet), so git-remote-gcrypt's
    /// list of packs it has is forgotten too ([`Store::forget_gcrypt_packs`]).
    pub(crate) fn expire_unreachable(&self, before_push: bool) -> Result<(), ExpireError> {
        // The remote-tracking refs' reflogs may name old remote tips no rewrite visited (verify
        // reads only the record ref's own): they would keep the old objects alive.
        let tracking = self.record_tracking_refs()?;
        for (name, _) in &tracking {
            run_git(
                self.root(),
                &[
                    "reflog",
                    "expire",
                    "--expire=now",
                    "--expire-unreachable=now",
                    name,
                ],
            )?;
        }
        for args in [
            &["repack", "-a", "-d", "-q"][..],
            &["prune", "--expire=now"][..],
        ] {
            run_git(self.root(), args)?;
        }
        if before_push {
            self.forget_gcrypt_packs();
        }
        Ok(())
    }

    /// git-remote-gcrypt remembers which of an encrypted remote's packs it fetched
    /// (`.git/remote-gcrypt/have_packs*`) and never fetches those again, assuming their objects
    /// are here; while the remote's ref still names an expired commit its next fetch would miss
    /// it ("bad object"). Forgetting the list makes the sync that sends the purge fetch what it
    /// needs once; that sync's own expiry then keeps the list.
    fn forget_gcrypt_packs(&self) {
        let dir = self.repo.commondir().join("remote-gcrypt");
        let Ok(d) = Dir::open(&dir) else {
            return;
        };
        for name in d.list().unwrap_or_default() {
            if name.starts_with("have_packs") {
                let _ = d.remove(&name);
            }
        }
    }
}

fn run_git(root: &Path, args: &[&str]) -> Result<(), ExpireError> {
    let Some(mut git) = super::gitcli::git_in(root) else {
        return Err(ExpireError::NoGit);
    };
    git.args(args);
    let command = args.join(" ");
    match super::gitcli::output_within(git, Some(EXPIRE_WITHIN)) {
        Ok(Some(out)) if out.status.success() => Ok(()),
        Ok(Some(out)) => Err(ExpireError::Failed {
            command,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        }),
        Ok(None) => Err(ExpireError::TooLong(command)),
        Err(source) => Err(ExpireError::Spawn { command, source }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_lines_keep_every_byte_but_the_ids_the_map_names() {
        let old = ObjectId::from_hex(&"1".repeat(40)).unwrap();
        let new = ObjectId::from_hex(&"2".repeat(40)).unwrap();
        let other = "3".repeat(40);
        let mut map = Rewritten::default();
        map.map.insert(old, new);
        let reflog = format!(
            "{} {old} A <a@x> 1 +0000\tcommit: x\n{old} {other} A <a@x> 2 +0000\trutter: y {old}\n",
            "0".repeat(40)
        );
        let want = format!(
            "{} {new} A <a@x> 1 +0000\tcommit: x\n{new} {other} A <a@x> 2 +0000\trutter: y {old}\n",
            "0".repeat(40)
        );
        assert_eq!(
            String::from_utf8(mapped_lines(reflog.as_bytes(), &map, 2)).unwrap(),
            want
        );
        let tips = format!("{old}\n{other}\nnot an id\n{old}");
        assert_eq!(
            String::from_utf8(mapped_lines(tips.as_bytes(), &map, 1)).unwrap(),
            format!("{new}\n{other}\nnot an id\n{new}")
        );
    }
}
