//! Reading the record for recall and `log`: the day files committed at a tip, a committed
//! blob's bytes (without an object read when the working file is that very blob), and the
//! commit that added a line. (The lines the pending journal holds are the journal's:
//! `Journal::pending_lines`.)

use super::oid::{ToGit, ToId};
use super::packread::Kind;
use super::tree::Trees;
use super::{Store, StoreError};
use crate::objectid::ObjectId;
use crate::records::paths;
use crate::records::paths::stem_of;
use git2::ObjectType;

/// The most commits [`Store::commit_adding`] looks through.
pub(crate) const ATTRIBUTION_WALK: usize = 200_000;

impl Store {
    /// `(stem, blob id)` of every day file committed at `tip`, in tree order (by path once the
    /// ref keeps year folders). A stem is the file's name without `.md`: its day, or its day
    /// and writer tag (one day may have several files, spec/sync.md).
    pub fn committed_days(&self, tip: ObjectId) -> Result<Vec<(String, ObjectId)>, StoreError> {
        let tree = self.repo.find_commit(tip.to_git())?.tree_id();
        let files = Trees::new(&self.repo)?.files(tree.to_id(), paths::SESSIONS_DIR)?;
        Ok(files
            .into_iter()
            .filter_map(|(path, oid)| Some((stem_of(&path)?.to_string(), oid)))
            .collect())
    }

    /// `(stem, blob id)` of the day files of `stems` committed at `tip`, found by path (as
    /// [`Trees::entry`] finds a record file) without listing the other day files: what
    /// [`Store::committed_days`] holds for those stems.
    pub(crate) fn committed_days_of<'s>(
        &self,
        tip: ObjectId,
        stems: impl IntoIterator<Item = &'s String>,
    ) -> Result<Vec<(String, ObjectId)>, StoreError> {
        let tree = self.repo.find_commit(tip.to_git())?.tree_id();
        let mut trees = Trees::new(&self.repo)?;
        let mut out = Vec::new();
        for stem in stems
            .into_iter()
            .filter(|s| paths::split_day_stem(s).is_some())
        {
            if let Some((oid, false)) = trees.entry(tree.to_id(), &paths::day_file(stem))? {
                out.push((stem.clone(), oid));
            }
        }
        Ok(out)
    }

    /// The day files whose blob differs between the commits `old` and `new`: `(stem, blob in
    /// new, None when gone)`. Identical subtrees, and the identical head and tail of two
    /// versions of a tree, are skipped: one capture costs a few entries, not 3,650.
    pub(crate) fn changed_days(
        &self,
        old: ObjectId,
        new: ObjectId,
    ) -> Result<Vec<(String, Option<ObjectId>)>, StoreError> {
        let mut trees = Trees::new(&self.repo)?;
        let a = self.repo.find_commit(old.to_git())?.tree_id();
        let b = self.repo.find_commit(new.to_git())?.tree_id();
        Ok(trees
            .changes(Some(a.to_id()), Some(b.to_id()))?
            .into_iter()
            .filter_map(|c| Some((stem_of(&c.path)?.to_string(), c.new)))
            .collect())
    }

    /// The blob id of the day file with the stem `day` committed at `tip`, if there is one.
    pub fn committed_day(&self, tip: ObjectId, day: &str) -> Result<Option<ObjectId>, StoreError> {
        let tree = self.repo.find_commit(tip.to_git())?.tree_id();
        Ok(
            match Trees::new(&self.repo)?.entry(tree.to_id(), &paths::day_file(day))? {
                Some((oid, false)) => Some(oid),
                _ => None,
            },
        )
    }

    /// The bytes of the blob `oid`. When `working` hashes to it, those bytes are the blob's and
    /// no object is read (a cold index build reads every day file once, not twice). Bytes that
    /// hashed to it once are remembered, so the same bytes offered again are compared, not
    /// hashed again (`log` reads each of its day files in the audit and for its rows).
    pub fn blob_bytes(&self, oid: ObjectId, working: Option<&[u8]>) -> Result<Vec<u8>, StoreError> {
        if let Some(w) = working {
            if self.hashed.holds(oid, w) {
                return Ok(w.to_vec());
            }
            self.count_comparison();
            // On a handle that compares through the packs, a blob they hold is compared with
            // the working bytes byte for byte: exact, and cheaper than hashing them with
            // collision detection (a bulk load compares every day file).
            if let Some(blob) = self.packed_blob(oid) {
                if blob == w {
                    self.hashed.remember(oid, w);
                }
                return Ok(blob);
            }
            if git2::Oid::hash_object(ObjectType::Blob, w)?.to_id() == oid {
                self.hashed.remember(oid, w);
                return Ok(w.to_vec());
            }
        }
        Ok(self.repo.find_blob(oid.to_git())?.content().to_vec())
    }

    /// Has [`Store::blob_bytes`] compare working bytes with the blobs the packs hold from now
    /// on: for a handle that compares many day files (a bulk load's reader). Opening the packs
    /// reads every pack index, which a command comparing one or two files does not repay.
    pub(crate) fn compare_blobs_through_packs(&self) {
        self.blob_packs.get_or_init(|| Box::new(self.packs()));
    }

    /// Counts a comparison of working bytes with a blob; at the [`PACKS_AFTER`]th, the handle
    /// starts comparing through the packs: a command that compares that many day files (`log`
    /// over years of them, `verify`'s working tree without its stamps) repays opening them, one
    /// that compares one or two never opens them.
    fn count_comparison(&self) {
        let n = self.compared.get().saturating_add(1);
        self.compared.set(n);
        if n == PACKS_AFTER {
            self.compare_blobs_through_packs();
        }
    }

    /// The bytes of blob `oid` when this handle compares through the packs and they hold it
    /// and read it exactly (`None` leaves it to libgit2: a loose object, an entry the pack
    /// reader declines).
    fn packed_blob(&self, oid: ObjectId) -> Option<Vec<u8>> {
        let packs = self.blob_packs.get()?;
        // The reader (and the copy its cache keeps) goes before the bytes are taken.
        let read = packs.reader().read(oid);
        match read? {
            (Kind::Blob, bytes) => Some(std::rc::Rc::unwrap_or_clone(bytes)),
            _ => None,
        }
    }

    /// The oldest commit of the record history (at most [`ATTRIBUTION_WALK`] commits from the
    /// tip) whose version of the record file `path` holds `line` as a whole line while none of
    /// its parents' versions does: the commit that added that very line, also when another line
    /// carries the same entry id (a line a remote added, spec/sync.md).
    pub fn commit_adding(&self, path: &str, line: &[u8]) -> Result<Option<ObjectId>, StoreError> {
        let Some(tip) = self.tip()? else {
            return Ok(None);
        };
        let mut walk = self.repo.revwalk()?;
        walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)?;
        walk.push(tip.to_git())?;
        let mut trees = Trees::new(&self.repo)?;
        let mut holds: std::collections::HashMap<ObjectId, bool> = std::collections::HashMap::new();
        let mut has =
            |trees: &mut Trees<'_>, commit: &git2::Commit<'_>| -> Result<bool, StoreError> {
                let Some((blob, false)) = trees.entry(commit.tree_id().to_id(), path)? else {
                    return Ok(false);
                };
                if let Some(known) = holds.get(&blob) {
                    return Ok(*known);
                }
                let found = crate::records::standing::contains_line(&trees.blob(blob)?, line);
                holds.insert(blob, found);
                Ok(found)
            };
        for oid in walk.take(ATTRIBUTION_WALK) {
            let c = self.repo.find_commit(oid?)?;
            if !has(&mut trees, &c)? {
                continue;
            }
            let mut in_parent = false;
            for p in c.parents() {
                in_parent |= has(&mut trees, &p)?;
            }
            if !in_parent {
                return Ok(Some(c.id().to_id()));
            }
        }
        Ok(None)
    }
}

/// The comparisons after which a handle compares through the packs ([`Store::blob_bytes`]).
const PACKS_AFTER: u32 = 64;

/// Bytes known to hash to a blob id, with that id: at most [`Hashed::MAX_BYTES`] in all (a
/// long-lived store keeps no more); a few entries, so a list, boxed so a `Store` stays small.
#[derive(Default)]
pub(crate) struct Hashed(Box<std::cell::RefCell<Known>>);

/// Blob ids with bytes that hash to them.
type Known = Vec<(ObjectId, Vec<u8>)>;

impl Hashed {
    const MAX_BYTES: usize = 4 << 20;

    /// Whether `bytes` are the ones remembered for `oid`.
    fn holds(&self, oid: ObjectId, bytes: &[u8]) -> bool {
        self.0
            .borrow()
            .iter()
            .any(|(o, b)| *o == oid && b.as_slice() == bytes)
    }

    fn remember(&self, oid: ObjectId, bytes: &[u8]) {
        let mut held = self.0.borrow_mut();
        let size: usize = held.iter().map(|(_, b)| b.len()).sum();
        if size + bytes.len() <= Self::MAX_BYTES {
            held.push((oid, bytes.to_vec()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Place;
    use super::*;

    /// A store on the repository at `root`, its state in `.git/rutter`.
    fn store_at(root: &std::path::Path) -> Store {
        let state = root.join(".git/rutter");
        Store::open(&Place {
            git_dir: Some(root.join(".git")),
            state_dir: state.clone(),
            worktree_state_dir: state,
            root: root.to_path_buf(),
        })
        .unwrap()
    }

    /// Bytes remembered as a blob's pass again without a hash; any other bytes offered for the
    /// same id are hashed, and the blob's own bytes come back for them.
    #[test]
    fn only_the_remembered_bytes_pass_for_a_blob() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let (a, b) = (
            b"- 10:00 one line\n".as_slice(),
            b"- 10:00 one lime\n".as_slice(),
        );
        let oid = repo.blob(a).unwrap().to_id();
        let store = store_at(dir.path());
        assert_eq!(store.blob_bytes(oid, Some(a)).unwrap(), a);
        assert!(store.hashed.holds(oid, a));
        assert!(!store.hashed.holds(oid, b));
        assert_eq!(
            store.blob_bytes(oid, Some(b)).unwrap(),
            a,
            "the blob's bytes"
        );
        assert_eq!(store.blob_bytes(oid, Some(a)).unwrap(), a);
    }

    /// On a handle asked to, a packed blob is compared with the working bytes through the packs:
    /// its own bytes are served for them, and for any others (never the other bytes, never a
    /// hash's word); a handle not asked to opens the packs only once it has compared many.
    #[test]
    fn a_packed_blob_is_compared_through_the_packs() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let a = b"- 10:00 one line\n".repeat(50);
        let b = b"- 10:00 one lime\n".repeat(50);
        let oid = repo.blob(&a).unwrap();
        let mut tb = repo.treebuilder(None).unwrap();
        tb.insert("a.md", oid, 0o100644).unwrap();
        let tree = repo.find_tree(tb.write().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        repo.commit(Some("HEAD"), &sig, &sig, "c", &tree, &[])
            .unwrap();
        let gc = std::process::Command::new("git")
            .args(["gc", "-q"])
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(gc.success());
        let store = store_at(dir.path());
        assert!(store.packed_blob(oid.to_id()).is_none(), "not asked to");
        store.compare_blobs_through_packs();
        assert!(store.packed_blob(oid.to_id()).is_some(), "packed");
        assert_eq!(store.blob_bytes(oid.to_id(), Some(&b)).unwrap(), a);
        assert!(!store.hashed.holds(oid.to_id(), &b));
        assert_eq!(store.blob_bytes(oid.to_id(), Some(&a)).unwrap(), a);
        assert!(store.hashed.holds(oid.to_id(), &a));
        let missing = repo.blob(b"not packed").unwrap().to_id();
        assert!(store.packed_blob(missing).is_none(), "loose");
        assert_eq!(
            store.blob_bytes(missing, Some(b"not packed")).unwrap(),
            b"not packed"
        );

        // A handle not asked to starts comparing through the packs at its 64th comparison:
        // before it, hashing; from it on, the packs.
        let counting = store_at(dir.path());
        for n in 1..PACKS_AFTER {
            assert_eq!(counting.blob_bytes(oid.to_id(), Some(&b)).unwrap(), a);
            assert!(
                counting.packed_blob(oid.to_id()).is_none(),
                "comparison {n}"
            );
        }
        assert_eq!(counting.blob_bytes(oid.to_id(), Some(&b)).unwrap(), a);
        assert!(counting.packed_blob(oid.to_id()).is_some(), "the 64th");
        // Bytes remembered as the blob's are no comparison.
        let remembering = store_at(dir.path());
        for _ in 0..PACKS_AFTER * 2 {
            assert_eq!(remembering.blob_bytes(oid.to_id(), Some(&a)).unwrap(), a);
        }
        assert!(remembering.packed_blob(oid.to_id()).is_none());
    }
}
