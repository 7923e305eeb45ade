//! The commit graph, refs and config as the modules above the store need them (sync, the audit,
//! `status`): narrow questions with plain answers, so that nothing outside the store holds a
//! libgit2 object. Commits are named by [`ObjectId`]; what a caller needs of one is a [`CommitInfo`].

use super::oid::{ToGit, ToId};
use super::{cmdline, Store, StoreError, RECORDS_REF};
use crate::objectid::ObjectId;
use git2::{ErrorCode, Sort};

/// What callers need of a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    /// What the history check needs of it.
    pub head: CommitHead,
    /// Commit time, seconds since the epoch.
    pub time: i64,
    /// The first line of the message (empty when it cannot be read).
    pub subject: String,
    /// The author's email, lowercased, when it is readable.
    pub author_email: Option<String>,
}

/// What the history check needs of a commit: its tree, its parents and their trees, whether
/// it is signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitHead {
    pub id: ObjectId,
    pub tree: ObjectId,
    /// Each parent's id and tree, in order.
    pub parents: Vec<(ObjectId, ObjectId)>,
    /// Whether it carries a signature (`gpgsig` or `gpgsig-sha256`).
    pub signed: bool,
}

impl Store {
    /// A commit's facts.
    pub fn commit_info(&self, id: ObjectId) -> Result<CommitInfo, StoreError> {
        self.commit_info_after(id, None)
    }

    /// [`Store::commit_info`], given the id and tree of a commit read just before: a parent
    /// that is that commit (a walk oldest first) is not read again for its tree.
    pub(crate) fn commit_info_after(
        &self,
        id: ObjectId,
        known: Option<(ObjectId, ObjectId)>,
    ) -> Result<CommitInfo, StoreError> {
        let c = self.repo.find_commit(id.to_git())?;
        let author_email = c.author().email().ok().map(str::to_lowercase);
        // A parent that cannot be read is left out, as libgit2's `parents()` does.
        let parent_tree = |p: ObjectId| match known {
            Some((k, tree)) if k == p => Some(tree),
            _ => self.tree_of(p).ok(),
        };
        Ok(CommitInfo {
            head: CommitHead {
                id,
                tree: c.tree_id().to_id(),
                parents: c
                    .parent_ids()
                    .map(ToId::to_id)
                    .filter_map(|p| Some((p, parent_tree(p)?)))
                    .collect(),
                signed: super::sign::is_signed(&c),
            },
            time: c.time().seconds(),
            subject: c.summary().ok().flatten().unwrap_or_default().to_string(),
            author_email,
        })
    }

    /// The ids of commit `id`'s parents, in order (the parents themselves are not read).
    pub(crate) fn parent_ids(&self, id: ObjectId) -> Result<Vec<ObjectId>, StoreError> {
        Ok(self
            .repo
            .find_commit(id.to_git())?
            .parent_ids()
            .map(ToId::to_id)
            .collect())
    }

    /// The tree of commit `id`.
    pub fn tree_of(&self, id: ObjectId) -> Result<ObjectId, StoreError> {
        Ok(self.repo.find_commit(id.to_git())?.tree_id().to_id())
    }

    /// The bytes of blob `id`.
    pub fn blob(&self, id: ObjectId) -> Result<Vec<u8>, StoreError> {
        Ok(self.repo.find_blob(id.to_git())?.content().to_vec())
    }

    /// Stores `bytes` as a blob and returns its id.
    pub fn write_blob(&self, bytes: &[u8]) -> Result<ObjectId, StoreError> {
        Ok(self.repo.blob(bytes)?.to_id())
    }

    /// Whether `commit` descends from `ancestor` (a commit is not its own descendant).
    pub fn descends(&self, commit: ObjectId, ancestor: ObjectId) -> Result<bool, StoreError> {
        Ok(self
            .repo
            .graph_descendant_of(commit.to_git(), ancestor.to_git())?)
    }

    /// Whether `a` and `b` share any history.
    pub(crate) fn related(&self, a: ObjectId, b: ObjectId) -> bool {
        self.repo.merge_base(a.to_git(), b.to_git()).is_ok()
    }

    /// `(ahead, behind)`: commits `a` has that `b` lacks, and the reverse.
    pub fn ahead_behind(&self, a: ObjectId, b: ObjectId) -> Result<(usize, usize), StoreError> {
        Ok(self.repo.graph_ahead_behind(a.to_git(), b.to_git())?)
    }

    /// Commits reachable from `tip` and not from `hide`, newest first, at most `limit`.
    pub(crate) fn newest_first(
        &self,
        tip: ObjectId,
        hide: Option<ObjectId>,
        limit: usize,
    ) -> Result<Vec<ObjectId>, StoreError> {
        let mut walk = self.repo.revwalk()?;
        walk.push(tip.to_git())?;
        if let Some(h) = hide {
            walk.hide(h.to_git())?;
        }
        Ok(walk
            .take(limit)
            .map(|r| r.map(ToId::to_id))
            .collect::<Result<Vec<ObjectId>, _>>()?)
    }

    /// Where `base` comes among the newest `limit` commits reachable from `tip` (0: it is
    /// `tip`), walking no further than it; `None` when it is not among them.
    pub(crate) fn steps_back(
        &self,
        tip: ObjectId,
        base: ObjectId,
        limit: usize,
    ) -> Result<Option<usize>, StoreError> {
        let mut walk = self.repo.revwalk()?;
        walk.push(tip.to_git())?;
        for (i, c) in walk.take(limit).enumerate() {
            if c?.to_id() == base {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    /// Commits reachable from `tip` and not from `hide`, parents before children.
    pub fn oldest_first(
        &self,
        tip: ObjectId,
        hide: Option<ObjectId>,
    ) -> Result<Vec<ObjectId>, StoreError> {
        let mut walk = self.repo.revwalk()?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)?;
        walk.push(tip.to_git())?;
        if let Some(h) = hide {
            walk.hide(h.to_git())?;
        }
        Ok(walk
            .map(|r| r.map(ToId::to_id))
            .collect::<Result<Vec<ObjectId>, _>>()?)
    }

    /// How many commits are reachable from `tip` and not from `hide`, counting no further
    /// than `limit + 1` (the walk is unordered, so it reads each commit once).
    pub(crate) fn count_reachable(
        &self,
        tip: ObjectId,
        hide: Option<ObjectId>,
        limit: usize,
    ) -> Result<usize, StoreError> {
        let mut walk = self.repo.revwalk()?;
        walk.push(tip.to_git())?;
        if let Some(h) = hide {
            walk.hide(h.to_git())?;
        }
        let mut n = 0;
        for oid in walk.take(limit.saturating_add(1)) {
            oid?;
            n += 1;
        }
        Ok(n)
    }

    /// An object's size and kind (`commit`, `tree`, `blob`, `tag`), read from its header only.
    pub fn object_header(&self, id: ObjectId) -> Result<(usize, String), StoreError> {
        let (size, kind) = self.repo.odb()?.read_header(id.to_git())?;
        Ok((size, kind.to_string()))
    }

    /// Where git keeps the reflog of `refs/rutter/records` (in the common git directory, also
    /// for a linked worktree).
    pub(crate) fn reflog_path(&self) -> std::path::PathBuf {
        self.repo.commondir().join("logs").join(RECORDS_REF)
    }

    /// The commit a ref points at (`None`: no such ref).
    pub fn ref_target(&self, name: &str) -> Result<Option<ObjectId>, StoreError> {
        match self.repo.refname_to_id(name) {
            Ok(oid) => Ok(Some(oid.to_id())),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// What kind of object `id` is (`commit`, `tree`, `blob`, `tag`), read from its header;
    /// `None` when the repository does not hold it.
    pub(crate) fn object_kind(&self, id: ObjectId) -> Result<Option<&'static str>, StoreError> {
        match self.repo.odb()?.read_header(id.to_git()) {
            Ok((_, kind)) => Ok(Some(kind.str())),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Points ref `name` at `oid`, whatever it pointed at (remote-tracking refs only).
    pub fn set_tracking_ref(
        &self,
        name: &str,
        oid: ObjectId,
        message: &str,
    ) -> Result<(), StoreError> {
        debug_assert!(name.starts_with("refs/remotes/"));
        self.repo.reference(name, oid.to_git(), true, message)?;
        Ok(())
    }

    /// Refs whose names start with `prefix`, with the commits they point at.
    pub fn refs_under(&self, prefix: &str) -> Result<Vec<(String, ObjectId)>, StoreError> {
        let mut out = Vec::new();
        for r in self.repo.references_glob(&format!("{prefix}*"))? {
            let r = r?;
            if let (Some(oid), Ok(name)) = (r.target(), r.name()) {
                out.push((name.to_string(), oid.to_id()));
            }
        }
        Ok(out)
    }

    /// Whether `refs/rutter/records` has a reflog with at least one entry.
    pub(crate) fn has_reflog(&self) -> bool {
        self.repo.reflog(RECORDS_REF).is_ok_and(|l| !l.is_empty())
    }

    /// Moves `refs/rutter/records` from `from` to `to` if it is still at `from` (fails with
    /// a git error when it moved).
    pub fn advance_ref(
        &self,
        from: ObjectId,
        to: ObjectId,
        message: &str,
    ) -> Result<(), StoreError> {
        self.patiently(|| {
            self.repo
                .reference_matching(RECORDS_REF, to.to_git(), true, from.to_git(), message)
        })?;
        Ok(())
    }

    /// Writes a commit of `tree` with `parents` as this tool commits (its signature; signed
    /// when `sign`), without moving any ref.
    pub(crate) fn write_commit_of(
        &self,
        parents: &[ObjectId],
        tree: ObjectId,
        message: &str,
        now: crate::clock::Instant,
        sign: bool,
    ) -> Result<ObjectId, StoreError> {
        let sig = self.signature(now)?;
        if sign {
            return self.commit_signed(&sig, message, tree, parents);
        }
        let tree = self.repo.find_tree(tree.to_git())?;
        let parents = parents
            .iter()
            .map(|p| self.repo.find_commit(p.to_git()))
            .collect::<Result<Vec<_>, _>>()?;
        let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
        Ok(self
            .repo
            .commit(None, &sig, &sig, message, &tree, &parents)?
            .to_id())
    }

    /// A config value as git resolves it (`git -c` first).
    pub(crate) fn config_string(&self, key: &str) -> Option<String> {
        cmdline::string(self.repo.config().ok().as_ref(), key)
    }

    /// Every value of a multi-valued config key.
    pub fn config_values(&self, key: &str) -> Result<Vec<String>, StoreError> {
        let config = self.repo.config()?;
        let mut out = Vec::new();
        let mut values = match config.multivar(key, None) {
            Ok(v) => v,
            Err(e) if e.code() == ErrorCode::NotFound => return Ok(out),
            Err(e) => return Err(e.into()),
        };
        while let Some(v) = values.next() {
            if let Ok(s) = v?.value() {
                out.push(s.to_string());
            }
        }
        Ok(out)
    }

    /// Sets `key` in the repository's own config file.
    pub fn set_local_config(&self, key: &str, value: &str) -> Result<(), StoreError> {
        let mut config = self.repo.config()?.open_level(git2::ConfigLevel::Local)?;
        config.set_str(key, value)?;
        Ok(())
    }

    /// Replaces the values of `key` in the repository's own config file that match the regular
    /// expression `matching` with `value`, or adds it when none matches.
    pub(crate) fn replace_local_config(
        &self,
        key: &str,
        matching: &str,
        value: &str,
    ) -> Result<(), StoreError> {
        let mut config = self.repo.config()?.open_level(git2::ConfigLevel::Local)?;
        config.set_multivar(key, matching, value)?;
        Ok(())
    }

    /// Whether the repository has a remote called `name`.
    pub(crate) fn has_remote(&self, name: &str) -> bool {
        self.repo.find_remote(name).is_ok()
    }

    /// The names of the configured remotes.
    pub(crate) fn remote_names(&self) -> Vec<String> {
        self.repo
            .remotes()
            .map(|r| r.iter().flatten().flatten().map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// Whether git takes `name` as a remote's name (`git remote add` refuses one with a space,
    /// `..`, a control character, …).
    pub(crate) fn valid_remote_name(name: &str) -> bool {
        git2::Remote::is_valid_name(name)
    }

    /// The working tree of the repository at `path`, when it is one that is not bare (nothing
    /// above `path` is searched).
    pub(crate) fn worktree_at(&self, path: &std::path::Path) -> Option<std::path::PathBuf> {
        let flags = git2::RepositoryOpenFlags::NO_SEARCH;
        let other = git2::Repository::open_ext(path, flags, std::iter::empty::<&std::ffi::OsStr>());
        let other = other.ok()?;
        other
            .workdir()
            .filter(|_| !other.is_bare())
            .map(|w| w.to_path_buf())
    }

    /// A remote's URL as it can be shown: credentials taken out.
    pub(crate) fn remote_url(&self, name: &str) -> Option<String> {
        let r = self.repo.find_remote(name).ok()?;
        r.url().ok().map(super::transport::redact)
    }
}
