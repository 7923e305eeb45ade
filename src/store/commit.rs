//! The store's side of a record commit (DESIGN §5): files written as blobs into a tree on the
//! tip of `refs/rutter/records`, one commit (signed when asked), and the ref moved by
//! compare-and-swap with a bounded retry; the new tip witnessed in `.git/rutter/tips`. What the
//! files hold is the record writer's ([`crate::recorder`]); this module knows only bytes at
//! paths. Also the seal (an empty signed commit) and the layout move into year folders.

use super::oid::{ToGit, ToId};
use super::tree::Trees;
use super::{Store, StoreError, RECORDS_REF};
use crate::clock::Instant;
use crate::objectid::ObjectId;
use git2::ErrorCode;
use std::io::Write;

const MAX_ATTEMPTS: usize = 5;
/// The message of an empty commit that signs the history below it.
const SEAL_MESSAGE: &str = "rutter: seal\n\nSigns the record history up to here (rutter.sign).\n";
/// The message of the commit that moves day files into year folders.
const LAYOUT_MESSAGE: &str = "rutter: layout\n\nMoves each day file of _librarian/sessions/ into the folder of its year,\nbyte for byte (spec/ref-layout.md, \"Year folders\").\n";
/// Every this many tips, a detached `git gc --auto` packs the loose objects.
const GC_EVERY: u64 = 256;
/// What one commit puts on the tip: each file's whole new bytes by vault-relative path (a day
/// file's path is mapped into its year folder), and the message.
#[derive(Debug)]
pub(crate) struct Planned {
    pub files: Vec<(String, Vec<u8>)>,
    pub message: String,
}

/// The committed state a plan reads: the tree of the tip it will be committed on.
pub(crate) struct Base<'t, 'r> {
    trees: &'t mut Trees<'r>,
    tree: ObjectId,
}

impl Base<'_, '_> {
    /// The committed bytes of a vault-relative path (`None`: not in the tree).
    pub fn file(&mut self, path: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.trees.blob_at(self.tree, path)?)
    }

    /// Whether the tree holds a vault-relative path.
    pub fn has(&mut self, path: &str) -> Result<bool, StoreError> {
        Ok(self.trees.entry(self.tree, path)?.is_some())
    }
}

/// What `plan` decides on a committed state: a commit, or nothing to commit.
pub(crate) type Plan<'p> = dyn FnMut(&mut Base<'_, '_>) -> Result<Option<Planned>, StoreError> + 'p;

impl Store {
    /// Commits what `plan` makes of the tip's tree on top of the tip of `refs/rutter/records`
    /// (creating the ref first when it is missing), signed when `sign`, and moves the ref by
    /// compare-and-swap; when the ref moved meanwhile, `plan` runs again on the new tip, a
    /// bounded number of times. Returns the new tip and why it could not be witnessed, if it
    /// could not; `None` when `plan` found nothing to commit. The caller holds the capture lock.
    pub(crate) fn commit_planned(
        &self,
        now: Instant,
        sign: bool,
        plan: &mut Plan<'_>,
    ) -> Result<Option<(ObjectId, Option<String>)>, StoreError> {
        for _ in 0..MAX_ATTEMPTS {
            let tip = match self.tip()? {
                Some(t) => t,
                None => self.ensure_ref(now)?.tip,
            };
            let mut trees = Trees::new(&self.repo)?;
            let base = self.repo.find_commit(tip.to_git())?.tree_id();
            let planned = plan(&mut Base {
                trees: &mut trees,
                tree: base.to_id(),
            })?;
            let Some(planned) = planned else {
                return Ok(None);
            };
            match self.commit_on(&mut trees, tip, base.to_id(), &planned, now, sign) {
                Ok(oid) => return Ok(Some((oid, self.after_commit(oid)))),
                Err(StoreError::Git(e)) if e.code() == ErrorCode::Modified => {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(e) => return Err(e),
            }
        }
        Err(StoreError::Contention(MAX_ATTEMPTS))
    }

    fn commit_on(
        &self,
        trees: &mut Trees<'_>,
        tip: ObjectId,
        base: ObjectId,
        p: &Planned,
        now: Instant,
        sign: bool,
    ) -> Result<ObjectId, StoreError> {
        // A tip written before the year folders gets one commit that only moves its day files
        // into them (spec/ref-layout.md, "Year folders"); this commit goes on top of it.
        let (parent, base) = match trees.moved_to_years(base)? {
            Some(moved) => (
                self.write_commit_of(&[tip], moved, LAYOUT_MESSAGE, now, sign)?,
                moved,
            ),
            None => (tip, base),
        };
        let edits = p
            .files
            .iter()
            .map(|(path, bytes)| Ok((path.clone(), self.repo.blob(bytes)?.to_id())))
            .collect::<Result<Vec<(String, ObjectId)>, git2::Error>>()?;
        let tree = trees.write(Some(base), &edits)?;
        let oid = self.write_commit_of(&[parent], tree, &p.message, now, sign)?;
        self.move_ref(tip, oid, &p.message)
    }

    /// Writes a commit of `tree` on `tip` (signed when `sign`) and moves the ref to it if it
    /// is still at `tip`.
    fn commit_and_move(
        &self,
        tip: ObjectId,
        tree: ObjectId,
        message: &str,
        now: Instant,
        sign: bool,
    ) -> Result<ObjectId, StoreError> {
        let oid = self.write_commit_of(&[tip], tree, message, now, sign)?;
        self.move_ref(tip, oid, message)
    }

    /// Moves the ref from `tip` to `oid` if it is still at `tip`, the reflog saying `message`'s
    /// subject.
    fn move_ref(
        &self,
        tip: ObjectId,
        oid: ObjectId,
        message: &str,
    ) -> Result<ObjectId, StoreError> {
        let subject = message.lines().next().unwrap_or("rutter");
        self.patiently(|| {
            self.repo
                .reference_matching(RECORDS_REF, oid.to_git(), true, tip.to_git(), subject)
        })?;
        Ok(oid)
    }

    /// Signs the history so far with an empty `rutter: seal` commit on the tip, unless the tip
    /// is signed already (then `None`). The caller holds the capture lock.
    pub fn seal(&self, now: Instant) -> Result<Option<(ObjectId, Option<String>)>, StoreError> {
        let Some(tip) = self.tip()? else {
            return Ok(None);
        };
        let commit = self.repo.find_commit(tip.to_git())?;
        if super::sign::is_signed(&commit) {
            return Ok(None);
        }
        let oid = self.commit_and_move(tip, commit.tree_id().to_id(), SEAL_MESSAGE, now, true)?;
        // A tip that could not be witnessed is said, as every commit's (verify reports it too).
        Ok(Some((oid, self.after_commit(oid))))
    }

    /// Witnesses the new tip in `.git/rutter/tips` and now and then packs loose objects. Returns
    /// why the tip could not be witnessed, if it could not (the commit itself stands).
    pub(crate) fn after_commit(&self, oid: ObjectId) -> Option<String> {
        let path = self.state_dir().join("tips");
        // Opened relative to the state folder without following a symlink: a symlinked witness
        // log is refused, never written through.
        let witnessed = crate::fsx::Dir::open_private(self.state_dir())
            .and_then(|d| d.open_append("tips"))
            .map_err(|e| std::io::Error::other(e.to_string()))
            .and_then(|f| crate::failpoint::check("tips-write").map(|()| f))
            .and_then(|mut f| {
                f.file.write_all(format!("{oid}\n").as_bytes())?;
                f.file.metadata()
            });
        match witnessed {
            Ok(meta) => {
                // Lines of the witness log are an id and a newline, whatever the hash's length.
                let line = oid.to_string().len() as u64 + 1;
                if (meta.len() / line).is_multiple_of(GC_EVERY) {
                    spawn_gc(self.root());
                }
                None
            }
            Err(e) => Some(format!(
                "the new tip {} could not be witnessed in {} ({e}); `git rutter verify` will report the gap",
                crate::shortid::long(&oid),
                path.display()
            )),
        }
    }
}

/// `git gc --auto`, detached (its own process group, so a Ctrl-C to the command that started it
/// does not stop it; all stdio closed) and never waited for by the caller; a thread reaps it, so
/// a long-lived `git-rutter mcp` leaves no zombie.
fn spawn_gc(root: &std::path::Path) {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let Some(mut git) = super::gitcli::git_in(root) else {
        return;
    };
    let child = git
        .args(["gc", "--auto", "--quiet"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    if let Ok(mut child) = child {
        let _ = std::thread::Builder::new()
            .name("rutter-gc-reaper".into())
            .spawn(move || child.wait());
    }
}
