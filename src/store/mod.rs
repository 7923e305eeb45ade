//! The git adapter, the only module that touches git2: the record ref `refs/rutter/records`,
//! its commits and trees (and their rewrite by a purge), the transport to a sync remote, and the
//! adoption of existing records. It knows git and nothing of captures or the pending journal
//! (`tests/architecture.rs`), and holds no command's logic: it answers narrow git questions
//! (`graph.rs`; `follow.rs` for rename following, `hookrepo.rs` for the git hooks,
//! `private_index.rs` for `diff`) and the layers above decide. Objects are named by
//! [`crate::objectid::ObjectId`], converted to libgit2's own ids only here (`oid.rs`).

pub(crate) mod adopt;
pub(crate) mod clone;
pub(crate) mod cmdline;
pub(crate) mod commit;
pub(crate) mod evidence;
pub(crate) mod exclude;
pub(crate) mod follow;
pub(crate) mod gitcli;
pub(crate) mod gitenv;
pub(crate) mod graph;
pub(crate) mod hookrepo;
pub(crate) mod localconfig;
mod oid;
pub(crate) mod pack;
pub(crate) mod packread;
pub(crate) mod private_index;
pub(crate) mod reader;
pub(crate) mod reflock;
pub(crate) mod remap;
pub(crate) mod rewrite;
pub(crate) mod settings;
pub(crate) mod sign;
pub(crate) mod transport;
pub(crate) mod tree;

use crate::fsx::{Dir, FsError};
use crate::objectid::ObjectId;
use git2::{Repository, RepositoryOpenFlags};
use oid::{ToGit, ToId};
use std::path::{Path, PathBuf};

/// The ref that holds the record chain.
pub(crate) const RECORDS_REF: &str = "refs/rutter/records";
/// Git config key: `false` turns off the `cited/` copies of cited notes.
pub(crate) const KEEP_CITED_KEY: &str = "rutter.keepCited";

/// Errors from the record store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the vault {0} is not a git repository")]
    NotGit(PathBuf),
    #[error("git: {0}")]
    Git(#[from] git2::Error),
    #[error("the vault {0} is a git repository with SHA-256 object names (extensions.objectFormat = sha256); git-rutter works only with SHA-1 repositories for now (libgit2 cannot read SHA-256 ones), so it writes no record there")]
    Sha256(PathBuf),
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("refs/rutter/records moved {0} times while committing")]
    Contention(usize),
    #[error("refs/rutter/records is locked by another git process ({0} exists)")]
    RefLocked(PathBuf),
    #[error(transparent)]
    Sign(#[from] sign::SignError),
    #[error(transparent)]
    Overlay(#[from] crate::overlay::OverlayError),
    /// A file under `_librarian/` that creating the record ref would adopt is not a record
    /// file: nothing was adopted, and the ref was not created.
    #[error("{path} is not a record file (line {line}: {rule}), so refs/rutter/records was not created: every other machine would refuse a history that starts with it")]
    NotARecord {
        path: String,
        line: usize,
        rule: String,
    },
}

impl crate::hint::Hinted for StoreError {
    fn hint(&self) -> Option<String> {
        match self {
            StoreError::NotGit(_) => Some("Run `git rutter init` there.".into()),
            StoreError::Contention(_) => Some("Try `git rutter commit` again.".into()),
            StoreError::RefLocked(_) => {
                Some("Remove it if no git command is running, then run `git rutter commit`.".into())
            }
            StoreError::NotARecord { path, .. } => Some(format!(
                "Move {path} out of _librarian/ (it holds only what git-rutter writes), then run the command again."
            )),
            _ => None,
        }
    }

    fn users_to_fix(&self) -> bool {
        matches!(self, StoreError::NotARecord { .. })
    }
}

/// Where a vault's repository and the tool's state live: what the store needs of a vault, so the
/// git adapter sits below the module that finds vaults (`vault` implements [`Located`]).
#[derive(Debug, Clone)]
pub struct Place {
    /// The work tree's root.
    pub root: PathBuf,
    /// Its git directory, when it is a git repository.
    pub git_dir: Option<PathBuf>,
    /// The state shared by every worktree of the repository (lock, journal, witness log).
    pub state_dir: PathBuf,
    /// The state of this worktree alone (index, caches).
    pub worktree_state_dir: PathBuf,
}

/// Anything that knows its [`Place`]: a resolved vault.
pub trait Located {
    fn place(&self) -> Place;
}

impl Located for Place {
    fn place(&self) -> Place {
        self.clone()
    }
}

impl StoreError {
    /// What went wrong, without the `git: ` a libgit2 error is shown with (for texts that
    /// already say where: "it cannot be read: …").
    pub(crate) fn detail(&self) -> String {
        match self {
            StoreError::Git(e) => e.message().to_string(),
            other => other.to_string(),
        }
    }
}

/// Opens the repository at `root` (no upward search); one whose object names are SHA-256 is
/// refused as such (libgit2 reads only SHA-1 repositories and says "unknown object format").
fn open_repo(root: &Path) -> Result<Repository, StoreError> {
    Repository::open_ext(
        root,
        RepositoryOpenFlags::NO_SEARCH,
        std::iter::empty::<&std::ffi::OsStr>(),
    )
    .map_err(|e| {
        let sha256 = e.class() == git2::ErrorClass::Repository
            && e.message().contains("object format 'sha256'");
        match sha256 {
            true => StoreError::Sha256(root.to_path_buf()),
            false => e.into(),
        }
    })
}

/// An open git vault.
pub struct Store {
    repo: Repository,
    root: PathBuf,
    state_dir: PathBuf,
    worktree_state_dir: PathBuf,
    /// Working bytes found to hash to a blob id, by that id ([`Store::blob_bytes`]).
    hashed: reader::Hashed,
    /// The packs, when this handle compares blobs through them
    /// ([`Store::compare_blobs_through_packs`]).
    blob_packs: std::cell::OnceCell<Box<packread::Packs>>,
    /// How many working files [`Store::blob_bytes`] compared with their blobs so far.
    compared: std::cell::Cell<u32>,
}

impl std::fmt::Debug for Store {
    /// The vault it is open on (a repository handle has nothing else to show).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("root", &self.root).finish()
    }
}

impl Store {
    /// Opens the repository at the vault root (no upward search).
    pub fn open(vault: &impl Located) -> Result<Store, StoreError> {
        let place = vault.place();
        if place.git_dir.is_none() {
            return Err(StoreError::NotGit(place.root));
        }
        let repo = open_repo(&place.root)?;
        Ok(Store {
            repo,
            root: place.root,
            state_dir: place.state_dir,
            worktree_state_dir: place.worktree_state_dir,
            hashed: reader::Hashed::default(),
            blob_packs: Default::default(),
            compared: Default::default(),
        })
    }

    /// A second handle on the same repository (libgit2 handles are not shared across
    /// threads): for work split over threads.
    pub fn reopen(&self) -> Result<Store, StoreError> {
        let repo = open_repo(&self.root)?;
        Ok(Store {
            repo,
            root: self.root.clone(),
            state_dir: self.state_dir.clone(),
            worktree_state_dir: self.worktree_state_dir.clone(),
            hashed: reader::Hashed::default(),
            blob_packs: Default::default(),
            compared: Default::default(),
        })
    }

    /// The vault root.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// `.git/rutter/` (of the common git directory: shared by every worktree).
    pub(crate) fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// This worktree's own state folder (`.git/worktrees/<name>/rutter/` in a linked worktree,
    /// else the same as [`Store::state_dir`]): caches that describe its working files.
    pub(crate) fn worktree_state_dir(&self) -> &Path {
        &self.worktree_state_dir
    }

    /// The ref's current tip, if the ref exists.
    pub fn tip(&self) -> Result<Option<ObjectId>, StoreError> {
        Ok(records_tip(&self.repo)?)
    }

    /// The committed bytes of a vault-relative record path at the tip.
    pub fn committed(&self, path: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(tip) = self.tip()? else {
            return Ok(None);
        };
        let tree = self.repo.find_commit(tip.to_git())?.tree_id();
        Ok(tree::Trees::new(&self.repo)?.blob_at(tree.to_id(), path)?)
    }

    /// The record files committed at `tip` (everything under `_librarian/`, never the `cited/`
    /// copies): `(path, blob id)`, in tree order (by path once the ref keeps year folders).
    pub fn record_files(&self, tip: ObjectId) -> Result<Vec<(String, ObjectId)>, StoreError> {
        let tree = self.repo.find_commit(tip.to_git())?.tree_id();
        Ok(
            tree::Trees::new(&self.repo)?
                .files(tree.to_id(), crate::records::paths::OVERLAY_DIR)?,
        )
    }

    /// The size of the record file `path` committed at `tip`, from its object's header alone
    /// (`None`: not committed there).
    pub(crate) fn committed_size(
        &self,
        tip: ObjectId,
        path: &str,
    ) -> Result<Option<u64>, StoreError> {
        let tree = self.repo.find_commit(tip.to_git())?.tree_id();
        match tree::Trees::new(&self.repo)?.entry(tree.to_id(), path)? {
            Some((oid, false)) => Ok(Some(self.object_header(oid)?.0 as u64)),
            _ => Ok(None),
        }
    }

    /// The `n` newest day files committed at `tip`, newest first ([`tree::Trees::newest_days`]).
    pub(crate) fn newest_days(
        &self,
        tip: ObjectId,
        n: usize,
    ) -> Result<Vec<(String, ObjectId)>, StoreError> {
        let tree = self.repo.find_commit(tip.to_git())?.tree_id();
        Ok(tree::Trees::new(&self.repo)?.newest_days(tree.to_id(), n)?)
    }

    /// Whether git ignores a vault-relative path (an unreadable ignore rule counts as ignored).
    pub(crate) fn is_ignored(&self, path: &str) -> bool {
        self.repo.is_path_ignored(path).unwrap_or(true)
    }

    /// A reader and writer of raw trees in this repository.
    pub(crate) fn trees(&self) -> Result<tree::Trees<'_>, StoreError> {
        Ok(tree::Trees::new(&self.repo)?)
    }

    /// A tree reader that reads commits, trees and blobs through `packs` where it can.
    pub(crate) fn trees_with<'a>(
        &'a self,
        packs: &'a packread::Packs,
    ) -> Result<tree::Trees<'a>, StoreError> {
        Ok(tree::Trees::with_packs(&self.repo, packs)?)
    }

    /// This repository's packs, read for a walk over its whole history.
    pub(crate) fn packs(&self) -> packread::Packs {
        packread::Packs::open(&self.repo.commondir().join("objects"))
    }

    /// The commits from the root to `tip`, oldest first, when they are one line of commits:
    /// read from `packs`, a commit they do not hold (a loose one) through libgit2. `None`:
    /// a merge, or a commit that does not read as git writes one.
    pub(crate) fn line_to(&self, packs: &packread::Packs, tip: ObjectId) -> Option<Vec<ObjectId>> {
        let odb = self.repo.odb().ok()?;
        packs.line_to(tip, &mut |id| {
            let o = odb.read(id.to_git()).ok()?;
            (o.kind() == git2::ObjectType::Commit).then(|| o.data().to_vec())
        })
    }

    /// Reads a vault-relative file without following symlinks; `None` when missing or refused.
    pub(crate) fn working(&self, path: &str) -> Option<Vec<u8>> {
        read_working(&self.root, path).ok().flatten()
    }

    /// Record files in the working tree (day files, ledger, use log, acknowledgements) that are
    /// not among `known`.
    pub(crate) fn uncommitted_record_files(
        &self,
        known: &std::collections::HashSet<&str>,
    ) -> Vec<String> {
        let sessions = std::fs::read_dir(self.root().join(crate::records::paths::SESSIONS_DIR));
        let mut out: Vec<String> = sessions
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| crate::records::paths::is_day_file(n))
            .map(|n| format!("{}/{n}", crate::records::paths::SESSIONS_DIR))
            .collect();
        out.sort();
        out.extend(
            [
                crate::records::ledger::LEDGER_PATH,
                crate::records::paths::USE_LOG,
                crate::records::paths::ACKS,
                crate::records::paths::PURGES,
            ]
            .map(str::to_string),
        );
        out.retain(|p| !known.contains(p.as_str()) && self.has_working_file(p));
        out
    }

    /// Whether the vault-relative `path` is a regular file in the working tree (not followed
    /// through a symlink).
    pub(crate) fn has_working_file(&self, path: &str) -> bool {
        std::fs::symlink_metadata(self.root().join(path)).is_ok_and(|m| m.is_file())
    }

    /// Whether `rutter.keepCited` allows `cited/` copies (default true).
    pub(crate) fn keep_cited(&self) -> bool {
        cmdline::boolean(self.repo.config().ok().as_ref(), KEEP_CITED_KEY).unwrap_or(true)
    }

    /// The author and committer: the user's git identity, else `rutter <rutter@localhost>`.
    pub(crate) fn signature(
        &self,
        now: crate::clock::Instant,
    ) -> Result<git2::Signature<'static>, StoreError> {
        let time = git2::Time::new(now.seconds(), 0);
        let (name, email) = match self.repo.signature() {
            Ok(sig) => (
                sig.name().unwrap_or("rutter").to_string(),
                sig.email().unwrap_or("rutter@localhost").to_string(),
            ),
            Err(_) => ("rutter".to_string(), "rutter@localhost".to_string()),
        };
        Ok(git2::Signature::new(&name, &email, &time)?)
    }
}

/// The names of the vault repository's git remotes (none when it is no git repository).
pub(crate) fn remote_names(vault: &impl Located) -> Vec<String> {
    let Some(git_dir) = vault.place().git_dir else {
        return Vec::new();
    };
    let Ok(repo) = Repository::open(git_dir) else {
        return Vec::new();
    };
    repo.remotes()
        .map(|r| r.iter().flatten().flatten().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The tip of `refs/rutter/records` in `repo`, if the ref exists.
pub(crate) fn records_tip(repo: &Repository) -> Result<Option<ObjectId>, git2::Error> {
    match repo.refname_to_id(RECORDS_REF) {
        Ok(oid) => Ok(Some(oid.to_id())),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Skips libgit2's re-hashing of every object it reads. The capture path reads only objects
/// this tool or git wrote moments ago, and re-hashing the 150 KB sessions tree cost more than
/// the rest of a capture. `git rutter verify` turns it off too (spec/verify.md: that every
/// object's content matches its id is `git fsck`'s check); every fetch of records runs git's
/// own object checks (`fetch.fsckObjects`). The switch is process-wide: a long-lived
/// `git-rutter mcp` reads every object unchecked once it is flipped.
pub(crate) fn skip_read_verification() {
    git2::opts::strict_hash_verification(false);
}

/// Turns off libgit2's object cache for the rest of the process. A walk that reads each commit
/// once (`verify --full`) gains nothing from it, and it kept every commit and small tree read
/// (most of `--full`'s memory on a long history). Process-wide, like [`skip_read_verification`]: only a
/// one-shot command calls it.
pub(crate) fn skip_object_cache() {
    git2::opts::enable_caching(false);
}

/// How much of a pack libgit2 maps at once, and in all, after [`bound_pack_maps`]: a walk of
/// the whole history touches most of a pack, and every page of a mapping stays resident (and
/// counted as the process's memory) until the mapping goes.
const PACK_WINDOW: usize = 8 << 20;
const PACK_MAPPED: usize = 32 << 20;

/// Maps packs in windows of [`PACK_WINDOW`], at most [`PACK_MAPPED`] at once (the least
/// recently used unmapped first), instead of libgit2's default of a whole pack up to 1 GiB in
/// one window. Process-wide, like [`skip_object_cache`]: only a one-shot command that reads a
/// whole history calls it, before it reads objects on a second thread.
pub(crate) fn bound_pack_maps() {
    // SAFETY: these write libgit2 globals without synchronisation; git2 requires that no other
    // thread use libgit2 meanwhile. The caller (`verify --full`) has started no thread that
    // reads objects yet, and libgit2 reads the values only when it maps a new window.
    unsafe {
        let _ = git2::opts::set_mwindow_size(PACK_WINDOW);
        let _ = git2::opts::set_mwindow_mapped_limit(PACK_MAPPED);
    }
}

/// The string fields `a` and `b` of each JSON line of the working file `root/rel` (read without
/// following symlinks); torn, foreign or unreadable lines are skipped.
pub(crate) fn read_jsonl_pairs(root: &Path, rel: &str, a: &str, b: &str) -> Vec<(String, String)> {
    let Ok(Some(bytes)) = read_working(root, rel) else {
        return vec![];
    };
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            Some((
                v.get(a)?.as_str()?.to_string(),
                v.get(b)?.as_str()?.to_string(),
            ))
        })
        .collect()
}

/// Reads `root/rel` opening every component without following symlinks.
pub fn read_working(root: &Path, rel: &str) -> Result<Option<Vec<u8>>, FsError> {
    let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    let root = Dir::open(root)?;
    match root.open_dir(dir, false)? {
        Some(d) => d.read(name),
        None => Ok(None),
    }
}
