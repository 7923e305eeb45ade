//! The commit graph, refs and config as the modules above the store need them (sync, the audit,
//! `status`): narrow questions with plain answers, so that nothing outside the store holds a
//! libgit2 object. Commits are named by [`Oid`]; what a caller needs of one is a [`CommitInfo`].

use super::{cmdline, Store, StoreError, RECORDS_REF};
use git2::{ErrorCode, Oid, Sort};

/// What callers need of a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    pub id: Oid,
    pub tree: Oid,
    /// Each parent's id and tree, in order.
    pub parents: Vec<(Oid, Oid)>,
    /// Commit time, seconds since the epoch.
    pub time: i64,
    /// The first line of the message (empty when it cannot be read).
    pub subject: String,
    /// The author's email, lowercased, when it is readable.
    pub author_email: Option<String>,
    /// Whether it carries a signature (`gpgsig` or `gpgsig-sha256`).
    pub signed: bool,
}

impl Store {
    /// A commit's facts.
    pub fn commit_info(&self, id: Oid) -> Result<CommitInfo, StoreError> {
        self.commit_info_after(id, None)
    }

    /// [`Store::commit_info`], given the id and tree of a commit read just before: a parent
    /// that is that commit (a walk oldest first) is not read again for its tree.
    pub(crate) fn commit_info_after(
        &self,
        id: Oid,
        known: Option<(Oid, Oid)>,
    ) -> Result<CommitInfo, StoreError> {
        let c = self.repo.find_commit(id)?;
        let author_email = c.author().email().ok().map(str::to_lowercase);
        // A parent that cannot be read is left out, as libgit2's `parents()` does.
        let parent_tree = |p: Oid| match known {
            Some((k, tree)) if k == p => Some(tree),
            _ => self.tree_of(p).ok(),
        };
        Ok(CommitInfo {
            id,
            tree: c.tree_id(),
            parents: c
                .parent_ids()
                .filter_map(|p| Some((p, parent_tree(p)?)))
                .collect(),
            signed: super::sign::is_signed(&c),
            time: c.time().seconds(),
            subject: c.summary().ok().flatten().unwrap_or_default().to_string(),
            author_email,
        })
    }

    /// The ids of commit `id`'s parents, in order (the parents themselves are not read).
    pub(crate) fn parent_ids(&self, id: Oid) -> Result<Vec<Oid>, StoreError> {
        Ok(self.repo.find_commit(id)?.parent_ids().collect())
    }

    /// The tree of commit `id`.
    pub fn tree_of(&self, id: Oid) -> Result<Oid, StoreError> {
        Ok(self.repo.find_commit(id)?.tree_id())
    }

    /// The bytes of blob `id`.
    pub fn blob(&self, id: Oid) -> Result<Vec<u8>, StoreError> {
        Ok(self.repo.find_blob(id)?.content().to_vec())
    }

    /// Stores `bytes` as a blob and returns its id.
    pub fn write_blob(&self, bytes: &[u8]) -> Result<Oid, StoreError> {
        Ok(self.repo.blob(bytes)?)
    }

    /// Whether `commit` descends from `ancestor` (a commit is not its own descendant).
    pub fn descends(&self, commit: Oid, ancestor: Oid) -> Result<bool, StoreError> {
        Ok(self.repo.graph_descendant_of(commit, ancestor)?)
    }

    /// Whether `a` and `b` share any history.
    pub(crate) fn related(&self, a: Oid, b: Oid) -> bool {
        self.repo.merge_base(a, b).is_ok()
    }

    /// `(ahead, behind)`: commits `a` has that `b` lacks, and the reverse.
    pub fn ahead_behind(&self, a: Oid, b: Oid) -> Result<(usize, usize), StoreError> {
        Ok(self.repo.graph_ahead_behind(a, b)?)
    }

    /// Commits reachable from `tip` and not from `hide`, newest first, at most `limit`.
    pub(crate) fn newest_first(
        &self,
        tip: Oid,
        hide: Option<Oid>,
        limit: usize,
    ) -> Result<Vec<Oid>, StoreError> {
        let mut walk = self.repo.revwalk()?;
        walk.push(tip)?;
        if let Some(h) = hide {
            walk.hide(h)?;
        }
        Ok(walk.take(limit).collect::<Result<Vec<Oid>, _>>()?)
    }

    /// Commits reachable from `tip` and not from `hide`, parents before children.
    pub fn oldest_first(&self, tip: Oid, hide: Option<Oid>) -> Result<Vec<Oid>, StoreError> {
        let mut walk = self.repo.revwalk()?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)?;
        walk.push(tip)?;
        if let Some(h) = hide {
            walk.hide(h)?;
        }
        Ok(walk.collect::<Result<Vec<Oid>, _>>()?)
    }

    /// How many commits are reachable from `tip` and not from `hide`, counting no further
    /// than `limit + 1` (the walk is unordered, so it reads each commit once).
    pub(crate) fn count_reachable(
        &self,
        tip: Oid,
        hide: Option<Oid>,
        limit: usize,
    ) -> Result<usize, StoreError> {
        let mut walk = self.repo.revwalk()?;
        walk.push(tip)?;
        if let Some(h) = hide {
            walk.hide(h)?;
        }
        let mut n = 0;
        for oid in walk.take(limit.saturating_add(1)) {
            oid?;
            n += 1;
        }
        Ok(n)
    }

    /// An object's size and kind (`commit`, `tree`, `blob`, `tag`), read from its header only.
    pub fn object_header(&self, id: Oid) -> Result<(usize, String), StoreError> {
        let (size, kind) = self.repo.odb()?.read_header(id)?;
        Ok((size, kind.to_string()))
    }

    /// Where git keeps the reflog of `refs/rutter/records` (in the common git directory, also
    /// for a linked worktree).
    pub(crate) fn reflog_path(&self) -> std::path::PathBuf {
        self.repo.commondir().join("logs").join(RECORDS_REF)
    }

    /// The commit a ref points at (`None`: no such ref).
    pub fn ref_target(&self, name: &str) -> Result<Option<Oid>, StoreError> {
        match self.repo.refname_to_id(name) {
            Ok(oid) => Ok(Some(oid)),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Points ref `name` at `oid`, whatever it pointed at (remote-tracking refs only).
    pub fn set_tracking_ref(&self, name: &str, oid: Oid, message: &str) -> Result<(), StoreError> {
        debug_assert!(name.starts_with("refs/remotes/"));
        self.repo.reference(name, oid, true, message)?;
        Ok(())
    }

    /// Refs whose names start with `prefix`, with the commits they point at.
    pub fn refs_under(&self, prefix: &str) -> Result<Vec<(String, Oid)>, StoreError> {
        let mut out = Vec::new();
        for r in self.repo.references_glob(&format!("{prefix}*"))? {
            let r = r?;
            if let (Some(oid), Ok(name)) = (r.target(), r.name()) {
                out.push((name.to_string(), oid));
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
    pub fn advance_ref(&self, from: Oid, to: Oid, message: &str) -> Result<(), StoreError> {
        self.patiently(|| {
            self.repo
                .reference_matching(RECORDS_REF, to, true, from, message)
        })?;
        Ok(())
    }

    /// Writes a commit of `tree` with `parents` as this tool commits (its signature; signed
    /// when `sign`), without moving any ref.
    pub(crate) fn write_commit_of(
        &self,
        parents: &[Oid],
        tree: Oid,
        message: &str,
        now: crate::clock::Instant,
        sign: bool,
    ) -> Result<Oid, StoreError> {
        let sig = self.signature(now)?;
        if sign {
            return self.commit_signed(&sig, message, tree, parents);
        }
        let tree = self.repo.find_tree(tree)?;
        let parents = parents
            .iter()
            .map(|p| self.repo.find_commit(*p))
            .collect::<Result<Vec<_>, _>>()?;
        let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
        Ok(self
            .repo
            .commit(None, &sig, &sig, message, &tree, &parents)?)
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

    /// A remote's URL as it can be shown: credentials taken out.
    pub(crate) fn remote_url(&self, name: &str) -> Option<String> {
        let r = self.repo.find_remote(name).ok()?;
        r.url().ok().map(super::transport::redact)
    }
}
