//! Where did a dead reference go? Candidates from the vault's own git history.
//!
//! A dead reference is a vault-relative path missing from the working tree, with the git blob
//! id its bytes had when cited. Three sources of evidence, tried in order (DESIGN.md §7):
//!
//! 1. **History**, the way `git log --follow` works: find the newest first-parent commit where
//!    the cited blob stood at the path, then walk forward to HEAD, diffing a commit against its
//!    parent (with rename detection) only where the followed name disappears.
//! 2. **Working tree**: the followed name is in HEAD but not on disk, so diff HEAD against the
//!    working tree (untracked files included) with rename detection.
//! 3. **Cited copy**: the kept copy of the cited bytes compared with current files through
//!    libgit2's similarity, in a throwaway in-memory repository (nothing is written to the
//!    vault's object database).
//!
//! Candidates are evidence for a person to judge; nothing here binds a reference. The git
//! questions each step asks are the store's (`store::follow`, `store::evidence`).

use crate::objectid::ObjectId;
use crate::store::follow::{similarity_scores, EntryKind};
use crate::store::{Store, StoreError};
use std::path::Path;

/// At most this many `SimilarToCitedCopy` candidates, the best scores first.
const MAX_SIMILAR: usize = 5;
/// Files larger than this are never similarity targets (attachments, not notes).
const MAX_TARGET_BYTES: u64 = 1 << 20;
/// The most bytes of similarity targets one dead reference reads (they are copied once more into
/// the in-memory pack): 2,000 targets of up to 1 MiB each were ~4 GiB at worst.
const MAX_TARGETS_TOTAL_BYTES: u64 = 64 << 20;

/// Why a current file is offered as the place a dead reference went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Evidence {
    /// Renamed in a commit (short id, 7 hex), `edited` when the content changed on the way
    /// (between the cited blob and the current file).
    Renamed { commit: String, edited: bool },
    /// Renamed in the working tree, not yet committed.
    WorkingTree { edited: bool },
    /// The kept cited copy is similar to this current file (no history links them).
    SimilarToCitedCopy { score: u16 },
}

impl Evidence {
    /// e.g. `git: renamed in 1a2b3c4, edited`, `git: renamed in working tree`,
    /// `git: similar to the cited copy, 72%`.
    pub(crate) fn describe(&self) -> String {
        let edited = |e: bool| if e { ", edited" } else { "" };
        match self {
            Evidence::Renamed { commit, edited: e } => {
                format!("git: renamed in {commit}{}", edited(*e))
            }
            Evidence::WorkingTree { edited: e } => {
                format!("git: renamed in working tree{}", edited(*e))
            }
            Evidence::SimilarToCitedCopy { score } => {
                format!("git: similar to the cited copy, {score}%")
            }
        }
    }

    /// Lower is stronger: Renamed > WorkingTree > SimilarToCitedCopy.
    fn rank(&self) -> u8 {
        match self {
            Evidence::Renamed { .. } => 0,
            Evidence::WorkingTree { .. } => 1,
            Evidence::SimilarToCitedCopy { .. } => 2,
        }
    }
}

/// A current vault file that may be where a dead reference went, with its evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GitCandidate {
    pub path: String,
    pub evidence: Evidence,
}

impl GitCandidate {
    /// e.g. `Notes/cadence-decision.md (git: renamed in 1a2b3c4, edited)`.
    #[cfg(test)]
    pub(crate) fn describe(&self) -> String {
        format!("{} ({})", self.path, self.evidence.describe())
    }
}

/// Bounds on the work one call may do.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// First-parent commits examined, newest first.
    pub max_commits: usize,
    /// Current files compared with the cited copy; above this the comparison is skipped.
    pub max_similarity_targets: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_commits: 5000,
            max_similarity_targets: 2000,
        }
    }
}

/// Commits examined when looking for an `@1` ref's blob by its sha256.
const MAX_BLOB_SEARCH: usize = 2000;

/// `(path, evidence)` candidates for the dead ref `path` cited with `sha256` (and, for `@2`
/// entries, git blob id `blob`): the cited blob (recorded, kept in `cited/`, or looked up by
/// sha256 in history for `@1` refs) followed by [`rename_candidates`]. A git error (an object
/// that cannot be read) is an error, so the caller never caches it as "no candidates".
pub(crate) fn git_candidates(
    store: &Store,
    path: &str,
    blob: Option<&str>,
    sha256: &str,
) -> Result<Vec<(String, String)>, StoreError> {
    // A git error is an error (never cached as "no candidates"); only what is not there is
    // `None`.
    let cited_copy = store.cited_copy(sha256)?;
    let known = blob.and_then(|b| ObjectId::from_hex(b).ok());
    let blob = match known {
        Some(b) => Some(b),
        None => store.blob_by_sha256(path, sha256, MAX_BLOB_SEARCH)?,
    };
    let blob = blob.or(cited_copy).unwrap_or(ObjectId::ZERO);
    let found = rename_candidates(store, path, blob, cited_copy, Limits::default())?;
    Ok(found
        .into_iter()
        .map(|c| (c.path, c.evidence.describe()))
        .collect())
}

/// Candidates for the dead `path` whose cited bytes had git blob id `blob`. `store` is the
/// vault's repository (work tree = vault root); `cited_copy` is the id of a kept copy of the
/// cited bytes, if any. Sorted by path, one per path (the strongest evidence). Without a HEAD
/// only the cited-copy comparison runs; without a work tree there are no candidates.
pub(crate) fn rename_candidates(
    store: &Store,
    path: &str,
    blob: ObjectId,
    cited_copy: Option<ObjectId>,
    limits: Limits,
) -> Result<Vec<GitCandidate>, StoreError> {
    let Some(root) = store.workdir() else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    if let Some(head) = store.head_commit()? {
        found.extend(from_history(store, root, head, path, blob, limits)?);
    }
    if found.is_empty() {
        if let Some(source) = cited_bytes(store, cited_copy, blob) {
            found = similar_to_cited(store, root, path, &source, limits)?;
        }
    }
    Ok(strongest_per_path(found))
}

/// Steps 1 and 2: follow `path` through committed history, then through the working tree.
fn from_history(
    store: &Store,
    root: &Path,
    head: ObjectId,
    path: &str,
    blob: ObjectId,
    limits: Limits,
) -> Result<Option<GitCandidate>, StoreError> {
    let chain = Chain::walk(store, head, path, blob, limits.max_commits)?;
    let (name, renamed_in) = match chain.follow(store, path)? {
        Followed::Gone => return Ok(None),
        Followed::At { name, renamed_in } => (name, renamed_in),
        Followed::Untracked => (path.to_string(), None),
    };
    if let (Some(commit), Some(bytes)) = (
        renamed_in,
        crate::store::read_working(root, &name).ok().flatten(),
    ) {
        return Ok(Some(GitCandidate {
            path: name,
            evidence: Evidence::Renamed {
                commit: short_id(commit),
                edited: blob_id(&bytes) != blob,
            },
        }));
    }
    let (head_tree, _) = store.tree_and_first_parent(head)?;
    if blob_in_tree(store, head_tree, &name)?.is_none() || exists(root, &name) {
        return Ok(None);
    }
    let Some(target) = store.renamed_in_workdir(head_tree, &name)? else {
        return Ok(None);
    };
    let Some(bytes) = crate::store::read_working(root, &target).ok().flatten() else {
        return Ok(None);
    };
    Ok(Some(GitCandidate {
        path: target,
        evidence: Evidence::WorkingTree {
            edited: blob_id(&bytes) != blob,
        },
    }))
}

/// HEAD's first-parent history down to the commit the cited path is followed from.
struct Chain {
    /// `(commit, tree, blob at the cited path)`, newest first, ending at the start commit.
    links: Vec<(ObjectId, ObjectId, Option<ObjectId>)>,
    /// Whether a start commit was found (the last link); otherwise the path is not in the
    /// history examined.
    started: bool,
}

/// Where the followed note stands at HEAD.
enum Followed {
    /// The note is in HEAD at `name`, last renamed by `renamed_in`.
    At {
        name: String,
        renamed_in: Option<ObjectId>,
    },
    /// Deleted without a rename on the way to HEAD.
    Gone,
    /// The cited path is not in the history examined.
    Untracked,
}

impl Chain {
    /// Walks first parents from `head`, at most `max` commits, until a tree holds `blob` at
    /// `path`; failing that, the chain ends at the newest commit that has `path` at all.
    fn walk(
        store: &Store,
        head: ObjectId,
        path: &str,
        blob: ObjectId,
        max: usize,
    ) -> Result<Chain, StoreError> {
        let mut lookup = Lookup::new(path);
        let mut links = Vec::new();
        let mut newest_with_path = None;
        let mut next = Some(head);
        while let Some(id) = next.filter(|_| links.len() < max) {
            let (tree, parent) = store.tree_and_first_parent(id)?;
            let at = lookup.blob_at(store, tree)?;
            links.push((id, tree, at));
            if at == Some(blob) {
                return Ok(Chain {
                    links,
                    started: true,
                });
            }
            if at.is_some() && newest_with_path.is_none() {
                newest_with_path = Some(links.len());
            }
            next = parent;
        }
        let started = newest_with_path.is_some();
        links.truncate(newest_with_path.unwrap_or(0));
        Ok(Chain { links, started })
    }

    /// Follows `path` forward from the start commit to HEAD: kept or edited in place keeps the
    /// name; where the name disappears, that commit's rename detection says where it went.
    fn follow(&self, store: &Store, path: &str) -> Result<Followed, StoreError> {
        if !self.started {
            return Ok(Followed::Untracked);
        }
        let mut name = path.to_string();
        let mut renamed_in = None;
        let mut lookup: Option<Lookup> = None;
        for pair in self.links.windows(2).rev() {
            let ((commit, tree, at_path), (_, parent_tree, _)) = (pair[0], pair[1]);
            let present = match lookup.as_mut() {
                None => at_path.is_some(),
                Some(l) => l.blob_at(store, tree)?.is_some(),
            };
            if present {
                continue;
            }
            match store.renamed_between(parent_tree, tree, &name)? {
                Some(to) => {
                    lookup = Some(Lookup::new(&to));
                    name = to;
                    renamed_in = Some(commit);
                }
                None => return Ok(Followed::Gone),
            }
        }
        Ok(Followed::At { name, renamed_in })
    }
}

/// The blob at one path across many trees, re-reading the parent directory's tree only when
/// its id changes between commits.
struct Lookup {
    dir: String,
    name: String,
    last: Option<(ObjectId, Option<ObjectId>)>,
}

impl Lookup {
    fn new(path: &str) -> Lookup {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        Lookup {
            dir: dir.to_string(),
            name: name.to_string(),
            last: None,
        }
    }

    /// The blob id at the path in the tree `root`, `None` when absent or not a blob.
    fn blob_at(&mut self, store: &Store, root: ObjectId) -> Result<Option<ObjectId>, StoreError> {
        let dir = if self.dir.is_empty() {
            root
        } else {
            match store.tree_entry(root, &self.dir)? {
                Some((id, EntryKind::Tree)) => id,
                _ => return Ok(None),
            }
        };
        if let Some((_, at)) = self.last.filter(|(seen, _)| *seen == dir) {
            return Ok(at);
        }
        let at = blob_in_tree(store, dir, &self.name)?;
        self.last = Some((dir, at));
        Ok(at)
    }
}

/// The blob at `path` in the tree `tree`, if it is a blob.
fn blob_in_tree(store: &Store, tree: ObjectId, path: &str) -> Result<Option<ObjectId>, StoreError> {
    Ok(match store.tree_entry(tree, path)? {
        Some((id, EntryKind::Blob)) => Some(id),
        _ => None,
    })
}

/// Whether anything (file, directory or symlink) is at `path` in the working tree.
fn exists(root: &Path, path: &str) -> bool {
    std::fs::symlink_metadata(root.join(path)).is_ok()
}

/// Git's id of a blob of `bytes`.
fn blob_id(bytes: &[u8]) -> ObjectId {
    ObjectId::from_bytes(crate::records::fingerprint::blob_sha1(bytes))
}

fn short_id(id: ObjectId) -> String {
    let mut s = id.to_string();
    s.truncate(7);
    s
}

/// The cited bytes: the kept copy if present in the object database, else the cited blob.
fn cited_bytes(store: &Store, cited_copy: Option<ObjectId>, blob: ObjectId) -> Option<Vec<u8>> {
    cited_copy
        .into_iter()
        .chain(Some(blob))
        .find_map(|id| store.blob(id).ok())
}

/// Step 3: current files libgit2 finds similar to the cited bytes, the best few.
fn similar_to_cited(
    store: &Store,
    root: &Path,
    path: &str,
    source: &[u8],
    limits: Limits,
) -> Result<Vec<GitCandidate>, StoreError> {
    let Some(paths) = similarity_targets(store, path, limits.max_similarity_targets)? else {
        return Ok(Vec::new());
    };
    let mut targets = Vec::new();
    let mut budget = MAX_TARGETS_TOTAL_BYTES;
    for p in paths {
        if !size_comparable(root, &p, source.len() as u64) {
            continue;
        }
        let (dir, name) = p.rsplit_once('/').unwrap_or(("", &p));
        let read = crate::fsx::Dir::open(root)
            .ok()
            .and_then(|r| r.open_dir(dir, false).ok().flatten())
            .and_then(|d| {
                d.read_at_most(name, MAX_TARGET_BYTES.min(budget))
                    .ok()
                    .flatten()
            });
        if let Some(bytes) = read {
            // Both the file and its copy in the throwaway pack count against the budget.
            budget = budget.saturating_sub(bytes.len() as u64);
            targets.push((p, bytes));
        }
        if budget == 0 {
            break;
        }
    }
    let mut scored = similarity_scores(source, &targets)?;
    scored.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(MAX_SIMILAR);
    Ok(scored
        .into_iter()
        .map(|(i, score)| GitCandidate {
            path: targets[i].0.clone(),
            evidence: Evidence::SimilarToCitedCopy { score },
        })
        .collect())
}

/// Current files to compare: every file git sees (tracked or untracked, not ignored) when
/// there are at most `cap`, else only those changed since HEAD or untracked when there are
/// at most `cap` of those, else `None`.
fn similarity_targets(
    store: &Store,
    path: &str,
    cap: usize,
) -> Result<Option<Vec<String>>, StoreError> {
    let (mut all, mut changed) = (Vec::new(), Vec::new());
    for (p, is_changed) in store.working_statuses()? {
        if p == path {
            continue;
        }
        if is_changed {
            changed.push(p.clone());
        }
        all.push(p);
    }
    Ok(if all.len() <= cap {
        Some(all)
    } else if changed.len() <= cap {
        Some(changed)
    } else {
        None
    })
}

/// libgit2 gives similarity 0 when either side is over 8 times the other (above 127 bytes),
/// and attachments are not notes: skip those files without reading them.
fn size_comparable(root: &Path, path: &str, source: u64) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(root.join(path)) else {
        return false;
    };
    let size = meta.len();
    meta.is_file()
        && size <= MAX_TARGET_BYTES
        && (size <= 127 || source <= 127 || (size <= source << 3 && source <= size << 3))
}

/// Sorted by path, one candidate per path, keeping the strongest evidence.
fn strongest_per_path(mut found: Vec<GitCandidate>) -> Vec<GitCandidate> {
    found.sort_by(|a, b| {
        a.path
            .cmp(&b.path)
            .then(a.evidence.rank().cmp(&b.evidence.rank()))
    });
    found.dedup_by(|later, kept| later.path == kept.path);
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::{IndexAddOption, Repository, Signature};
    use std::fs;
    use tempfile::TempDir;

    /// libgit2's id as ours (the test builds histories with git2 directly).
    fn id(o: git2::Oid) -> ObjectId {
        ObjectId::from_slice(o.as_bytes()).unwrap()
    }

    fn git(o: ObjectId) -> git2::Oid {
        git2::Oid::from_bytes(o.as_bytes()).unwrap()
    }

    struct Vault {
        dir: TempDir,
        repo: Repository,
    }

    impl Vault {
        fn new() -> Vault {
            let dir = tempfile::tempdir().unwrap();
            let repo = Repository::init(dir.path()).unwrap();
            Vault { dir, repo }
        }

        fn root(&self) -> &Path {
            self.dir.path()
        }

        /// The vault's store, opened afresh (it sees every commit made so far).
        fn store(&self) -> Store {
            let v = crate::vault::open(self.root(), crate::vault::VaultSource::Flag).unwrap();
            Store::open(&v).unwrap()
        }

        fn write(&self, rel: &str, text: &str) -> ObjectId {
            let p = self.root().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, text).unwrap();
            blob_id(text.as_bytes())
        }

        fn mv(&self, from: &str, to: &str) {
            let to = self.root().join(to);
            fs::create_dir_all(to.parent().unwrap()).unwrap();
            fs::rename(self.root().join(from), to).unwrap();
        }

        fn rm(&self, rel: &str) {
            fs::remove_file(self.root().join(rel)).unwrap();
        }

        /// Stages everything (additions, edits, deletions) and commits on HEAD.
        fn commit(&self, msg: &str) -> ObjectId {
            let mut index = self.repo.index().unwrap();
            index.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
            index.update_all(["*"], None).unwrap();
            index.write().unwrap();
            let tree = self.repo.find_tree(index.write_tree().unwrap()).unwrap();
            let sig = Signature::now("t", "t@example.org").unwrap();
            let parent = self.repo.head().ok().and_then(|h| h.peel_to_commit().ok());
            let parents: Vec<_> = parent.iter().collect();
            let commit = self
                .repo
                .commit(Some("HEAD"), &sig, &sig, msg, &tree, &parents)
                .unwrap();
            id(commit)
        }

        fn find(&self, path: &str, blob: ObjectId) -> Vec<GitCandidate> {
            self.find_with(path, blob, None, Limits::default())
        }

        fn find_with(
            &self,
            path: &str,
            blob: ObjectId,
            copy: Option<ObjectId>,
            limits: Limits,
        ) -> Vec<GitCandidate> {
            rename_candidates(&self.store(), path, blob, copy, limits).unwrap()
        }
    }

    /// A note of `lines` distinct lines about `topic`.
    fn note(topic: &str, lines: usize) -> String {
        let mut s = format!("# {topic}\n\n");
        for i in 0..lines {
            s.push_str(&format!("- point {i} about {topic}: {}\n", i * 7919 % 1013));
        }
        s
    }

    fn cadence() -> String {
        "# Publishing cadence (fictional demo note)\n\n\
         Three options for the newsletter:\n\n\
         1. Weekly roundup, as now: five links and a short comment each.\n\
         2. Fortnightly, one long essay per issue, replacing the roundup.\n\
         3. Monthly digest with a reader Q&A section at the end.\n\n\
         The survey says 48% want fewer, longer issues.\n\
         Top request was more depth per topic.\n\
         Risk: readers forget the newsletter between issues.\n\
         Cost: essays take two evenings each to write.\n"
            .to_string()
    }

    fn renamed(path: &str, commit: ObjectId, edited: bool) -> GitCandidate {
        GitCandidate {
            path: path.to_string(),
            evidence: Evidence::Renamed {
                commit: short_id(commit),
                edited,
            },
        }
    }

    fn working(path: &str, edited: bool) -> GitCandidate {
        GitCandidate {
            path: path.to_string(),
            evidence: Evidence::WorkingTree { edited },
        }
    }

    fn vault_with_survey_and_cadence() -> (Vault, ObjectId, ObjectId) {
        let v = Vault::new();
        let survey = v.write("Notes/reader-survey.md", &note("reader survey", 12));
        let cad = v.write("Notes/publishing-cadence.md", &cadence());
        v.commit("two notes");
        (v, survey, cad)
    }

    #[test]
    fn pure_rename_in_one_commit_is_an_exact_rename() {
        let (v, survey, _) = vault_with_survey_and_cadence();
        v.mv("Notes/reader-survey.md", "Research/reader-survey-autumn.md");
        let c = v.commit("move survey");
        let found = v.find("Notes/reader-survey.md", survey);
        assert_eq!(
            found,
            vec![renamed("Research/reader-survey-autumn.md", c, false)]
        );
        assert_eq!(
            found[0].describe(),
            format!(
                "Research/reader-survey-autumn.md (git: renamed in {})",
                short_id(c)
            )
        );
    }

    #[test]
    fn edit_and_rename_in_one_commit_is_an_edited_rename() {
        let (v, _, cad) = vault_with_survey_and_cadence();
        v.mv("Notes/publishing-cadence.md", "Notes/cadence-decision.md");
        v.write(
            "Notes/cadence-decision.md",
            &(cadence() + "Decision: going fortnightly from November.\n"),
        );
        let c = v.commit("decide");
        let found = v.find("Notes/publishing-cadence.md", cad);
        assert_eq!(found, vec![renamed("Notes/cadence-decision.md", c, true)]);
        assert_eq!(
            found[0].describe(),
            format!(
                "Notes/cadence-decision.md (git: renamed in {}, edited)",
                short_id(c)
            )
        );
        cross_check_with_git_cli(v.root());
    }

    /// The real `git` agrees that the last commit renamed the note (skipped without git).
    fn cross_check_with_git_cli(root: &Path) {
        let Ok(out) = std::process::Command::new("git")
            .args(["diff", "-M", "--name-status", "HEAD~1", "HEAD"])
            .current_dir(root)
            .output()
        else {
            return;
        };
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().find(|l| l.starts_with('R')).unwrap_or("");
        assert!(
            line.ends_with("\tNotes/publishing-cadence.md\tNotes/cadence-decision.md"),
            "git says: {text}"
        );
    }

    #[test]
    fn edit_then_rename_in_a_second_commit_names_the_rename_commit() {
        let (v, _, cad) = vault_with_survey_and_cadence();
        v.write(
            "Notes/publishing-cadence.md",
            &(cadence() + "Leaning fortnightly.\n"),
        );
        v.commit("edit");
        v.mv("Notes/publishing-cadence.md", "Notes/cadence-decision.md");
        let c = v.commit("rename");
        v.write("Notes/other.md", &note("other", 10));
        v.commit("unrelated later commit");
        let found = v.find("Notes/publishing-cadence.md", cad);
        assert_eq!(found, vec![renamed("Notes/cadence-decision.md", c, true)]);
    }

    #[test]
    fn cited_bytes_never_committed_follow_from_the_newest_commit_with_the_path() {
        let v = Vault::new();
        let cited = blob_id(cadence().as_bytes());
        v.write("Notes/publishing-cadence.md", &(cadence() + "draft line\n"));
        v.commit("committed after an edit");
        v.mv("Notes/publishing-cadence.md", "Notes/cadence-decision.md");
        let c = v.commit("rename");
        let found = v.find("Notes/publishing-cadence.md", cited);
        assert_eq!(found, vec![renamed("Notes/cadence-decision.md", c, true)]);
    }

    #[test]
    fn renamed_and_edited_in_the_working_tree_only() {
        let (v, _, cad) = vault_with_survey_and_cadence();
        v.mv("Notes/publishing-cadence.md", "Notes/cadence-decision.md");
        v.write(
            "Notes/cadence-decision.md",
            &(cadence() + "Decision: going fortnightly from November.\n"),
        );
        let found = v.find("Notes/publishing-cadence.md", cad);
        assert_eq!(found, vec![working("Notes/cadence-decision.md", true)]);
        assert_eq!(
            found[0].describe(),
            "Notes/cadence-decision.md (git: renamed in working tree, edited)"
        );
    }

    #[test]
    fn a_staged_rename_is_a_working_tree_rename() {
        let (v, survey, _) = vault_with_survey_and_cadence();
        v.mv("Notes/reader-survey.md", "Research/survey.md");
        let mut index = v.repo.index().unwrap();
        index
            .remove_path(Path::new("Notes/reader-survey.md"))
            .unwrap();
        index.add_path(Path::new("Research/survey.md")).unwrap();
        index.write().unwrap();
        let found = v.find("Notes/reader-survey.md", survey);
        assert_eq!(found, vec![working("Research/survey.md", false)]);
        assert_eq!(
            found[0].describe(),
            "Research/survey.md (git: renamed in working tree)"
        );
    }

    #[test]
    fn committed_rename_then_working_tree_rename() {
        let (v, survey, _) = vault_with_survey_and_cadence();
        v.mv("Notes/reader-survey.md", "Research/survey.md");
        v.commit("move");
        v.mv("Research/survey.md", "Research/survey-autumn.md");
        let found = v.find("Notes/reader-survey.md", survey);
        assert_eq!(found, vec![working("Research/survey-autumn.md", false)]);
    }

    #[test]
    fn never_committed_note_is_compared_through_its_cited_copy() {
        let v = Vault::new();
        v.write("Notes/reader-survey.md", &note("reader survey", 12));
        v.commit("only the survey is in git");
        let cited = cadence();
        let blob = blob_id(cited.as_bytes());
        v.write(
            "Notes/cadence-decision.md",
            &(cited.clone() + "Going fortnightly.\n"),
        );
        v.write("Notes/unrelated.md", &note("gardening", 12));
        assert_eq!(v.find("Notes/publishing-cadence.md", blob), vec![]);
        let copy = v.repo.blob(cited.as_bytes()).unwrap();
        assert_eq!(id(copy), blob);
        let found = v.find_with(
            "Notes/publishing-cadence.md",
            blob,
            Some(id(copy)),
            Limits::default(),
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, "Notes/cadence-decision.md");
        let Evidence::SimilarToCitedCopy { score } = found[0].evidence else {
            panic!("{found:?}");
        };
        assert!((50..100).contains(&score), "score {score}");
        assert_eq!(
            found[0].describe(),
            format!("Notes/cadence-decision.md (git: similar to the cited copy, {score}%)")
        );
    }

    #[test]
    fn cited_copy_works_without_head_and_respects_the_target_cap() {
        let v = Vault::new();
        let cited = cadence();
        let blob = v.repo.blob(cited.as_bytes()).unwrap();
        v.write(
            "Notes/cadence-decision.md",
            &(cited + "Going fortnightly.\n"),
        );
        v.write("Notes/a.md", &note("a", 10));
        v.write("Notes/b.md", &note("b", 10));
        let found = v.find("Notes/publishing-cadence.md", id(blob));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, "Notes/cadence-decision.md");
        let capped = Limits {
            max_similarity_targets: 2,
            ..Limits::default()
        };
        assert_eq!(
            v.find_with("Notes/publishing-cadence.md", id(blob), None, capped),
            vec![]
        );
    }

    #[test]
    fn deleted_without_rename_has_no_candidates() {
        let (v, _, cad) = vault_with_survey_and_cadence();
        v.rm("Notes/publishing-cadence.md");
        v.commit("drop the draft");
        assert_eq!(v.find("Notes/publishing-cadence.md", cad), vec![]);
    }

    #[test]
    fn two_renames_in_a_row_end_at_the_last_name() {
        let (v, survey, _) = vault_with_survey_and_cadence();
        v.mv("Notes/reader-survey.md", "Notes/survey-b.md");
        v.commit("A to B");
        v.mv("Notes/survey-b.md", "Research/survey-c.md");
        v.write(
            "Research/survey-c.md",
            &(note("reader survey", 12) + "one more\n"),
        );
        let c = v.commit("B to C");
        let found = v.find("Notes/reader-survey.md", survey);
        assert_eq!(found, vec![renamed("Research/survey-c.md", c, true)]);
    }

    #[test]
    fn an_unrelated_file_with_the_same_name_does_not_confuse() {
        let v = Vault::new();
        let plan = v.write("Notes/plan.md", &note("the real plan", 12));
        v.write("Archive/plan.md", &note("an old archived plan", 12));
        v.commit("two plans");
        v.mv("Notes/plan.md", "Projects/plan-v2.md");
        let c = v.commit("move the plan");
        assert_eq!(
            v.find("Notes/plan.md", plan),
            vec![renamed("Projects/plan-v2.md", c, false)]
        );
        v.rm("Projects/plan-v2.md");
        v.commit("drop it");
        assert_eq!(v.find("Notes/plan.md", plan), vec![]);
    }

    #[test]
    fn no_head_means_no_candidates() {
        let v = Vault::new();
        let blob = v.write("Notes/x.md", &note("x", 10));
        v.rm("Notes/x.md");
        v.write("Notes/y.md", &note("x", 10));
        assert_eq!(v.find("Notes/x.md", blob), vec![]);
    }

    #[test]
    fn history_longer_than_max_commits_is_not_scanned_past_the_limit() {
        let v = Vault::new();
        let survey = v.write("Notes/reader-survey.md", &note("reader survey", 12));
        v.commit("add");
        v.mv("Notes/reader-survey.md", "Research/survey.md");
        let c = v.commit("move");
        for i in 0..40 {
            v.write(&format!("Daily/{i}.md"), &note(&format!("day {i}"), 3));
            v.commit("daily");
        }
        let head = v.repo.head().unwrap().target().unwrap();
        let chain =
            Chain::walk(&v.store(), id(head), "Notes/reader-survey.md", survey, 10).unwrap();
        assert!(!chain.started && chain.links.is_empty());
        let short = Limits {
            max_commits: 10,
            ..Limits::default()
        };
        // Past the limit the committed blob is still the cited copy: similar, not renamed.
        let found = v.find_with("Notes/reader-survey.md", survey, None, short);
        let expected = GitCandidate {
            path: "Research/survey.md".to_string(),
            evidence: Evidence::SimilarToCitedCopy { score: 100 },
        };
        assert_eq!(found, vec![expected]);
        assert_eq!(
            v.find("Notes/reader-survey.md", survey),
            vec![renamed("Research/survey.md", c, false)]
        );
    }

    #[test]
    fn strongest_evidence_wins_per_path() {
        let sim = |p: &str, score| GitCandidate {
            path: p.to_string(),
            evidence: Evidence::SimilarToCitedCopy { score },
        };
        let found = strongest_per_path(vec![
            sim("b.md", 90),
            working("b.md", true),
            sim("a.md", 60),
            renamed("b.md", ObjectId::ZERO, false),
        ]);
        assert_eq!(
            found,
            vec![sim("a.md", 60), renamed("b.md", ObjectId::ZERO, false)]
        );
    }

    /// `cargo test --release --lib recall::renames -- --ignored --nocapture`: 2,000 commits
    /// over 1,000 notes in one directory, the cited note added at commit 100 and renamed with
    /// an edit at commit 1,500.
    #[test]
    #[ignore]
    fn timing_on_two_thousand_commits() {
        let v = Vault::new();
        let repo = &v.repo;
        let sig = Signature::now("t", "t@example.org").unwrap();
        let mut tree = repo
            .find_tree(repo.treebuilder(None).unwrap().write().unwrap())
            .unwrap();
        let mut parent: Option<git2::Commit> = None;
        let mut cited = ObjectId::ZERO;
        let started = std::time::Instant::now();
        for i in 0..2000usize {
            let mut up = git2::build::TreeUpdateBuilder::new();
            let blob = |t: &str| repo.blob(t.as_bytes()).unwrap();
            if i == 0 {
                for n in 0..1000 {
                    let text = note(&format!("note {n}"), 10);
                    up.upsert(format!("Notes/n{n}.md"), blob(&text), git2::FileMode::Blob);
                }
            } else {
                let text = note(&format!("note {} v{i}", i % 1000), 10);
                up.upsert(
                    format!("Notes/n{}.md", i % 1000),
                    blob(&text),
                    git2::FileMode::Blob,
                );
            }
            if i == 100 {
                cited = id(blob(&cadence()));
                up.upsert(
                    "Notes/publishing-cadence.md",
                    git(cited),
                    git2::FileMode::Blob,
                );
            }
            if i == 1500 {
                up.remove("Notes/publishing-cadence.md");
                let text = cadence() + "Going fortnightly.\n";
                up.upsert(
                    "Notes/cadence-decision.md",
                    blob(&text),
                    git2::FileMode::Blob,
                );
            }
            tree = repo
                .find_tree(up.create_updated(repo, &tree).unwrap())
                .unwrap();
            let parents: Vec<_> = parent.iter().collect();
            let id = repo
                .commit(Some("HEAD"), &sig, &sig, "c", &tree, &parents)
                .unwrap();
            parent = Some(repo.find_commit(id).unwrap());
        }
        let mut co = git2::build::CheckoutBuilder::new();
        repo.checkout_head(Some(co.force())).unwrap();
        eprintln!("built in {:?}", started.elapsed());

        let t = std::time::Instant::now();
        let found = v.find("Notes/publishing-cadence.md", cited);
        eprintln!("renamed 1,900 commits back: {:?} -> {found:?}", t.elapsed());
        assert!(matches!(
            found[0].evidence,
            Evidence::Renamed { edited: true, .. }
        ));

        let t = std::time::Instant::now();
        let gone = blob_id(b"never in git");
        let found = v.find("Notes/never.md", gone);
        eprintln!(
            "path never in history (full walk): {:?} -> {found:?}",
            t.elapsed()
        );

        let t = std::time::Instant::now();
        let copy = repo.blob(note("note 7", 10).as_bytes()).unwrap();
        let found = v.find_with("Notes/gone.md", gone, Some(id(copy)), Limits::default());
        eprintln!(
            "full walk + cited copy vs 1,001 files: {:?} -> {found:?}",
            t.elapsed()
        );

        v.mv("Notes/n5.md", "Notes/n5-renamed.md");
        let t = std::time::Instant::now();
        let n5 = blob_id(note("note 5 v1005", 10).as_bytes());
        let found = v.find("Notes/n5.md", n5);
        eprintln!("working-tree rename: {:?} -> {found:?}", t.elapsed());
        v.mv("Notes/n5-renamed.md", "Notes/n5.md");
        compare_with_git_cli(&v, cited);
    }

    /// Times `git log --follow` and this module again after `git gc` (skipped without git).
    fn compare_with_git_cli(v: &Vault, cited: ObjectId) {
        let git = |args: &[&str]| {
            let t = std::time::Instant::now();
            let out = std::process::Command::new("git")
                .args(args)
                .current_dir(v.root())
                .output()
                .ok()?;
            Some((t.elapsed(), String::from_utf8_lossy(&out.stdout).len()))
        };
        let follow = [
            "log",
            "--follow",
            "--format=%h",
            "--",
            "Notes/cadence-decision.md",
        ];
        let Some(before) = git(&follow) else {
            return;
        };
        eprintln!("git log --follow (loose objects): {before:?}");
        git(&["gc", "-q"]);
        eprintln!("git log --follow (packed): {:?}", git(&follow));
        let t = std::time::Instant::now();
        let found = v.find("Notes/publishing-cadence.md", cited);
        eprintln!("renamed, packed: {:?} -> {found:?}", t.elapsed());
        let t = std::time::Instant::now();
        let found = v.find("Notes/never.md", blob_id(b"never"));
        eprintln!("full walk, packed: {:?} -> {found:?}", t.elapsed());
        crate::store::skip_read_verification();
        let t = std::time::Instant::now();
        let found = v.find("Notes/never.md", blob_id(b"never"));
        eprintln!(
            "full walk, packed, no read verification: {:?} -> {found:?}",
            t.elapsed()
        );
    }

    /// The review's §b 3: a history that cannot be read is an error, not "no candidates".
    #[test]
    fn an_unreadable_history_is_an_error_not_no_candidates() {
        let t = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(t.path()).unwrap();
        std::fs::write(t.path().join("a.md"), "alpha\n").unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(std::path::Path::new("a.md")).unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@t").unwrap();
        repo.commit(Some("HEAD"), &sig, &sig, "notes", &tree, &[])
            .unwrap();
        let v = crate::vault::open(t.path(), crate::vault::VaultSource::Flag).unwrap();
        let store = Store::open(&v).unwrap();
        let sha = crate::records::fingerprint::sha256_ref(b"alpha\n");
        assert!(git_candidates(&store, "a.md", None, &sha).is_ok());
        // The tree of HEAD's commit is gone from the object database.
        let hex = tree.id().to_string();
        std::fs::remove_file(
            t.path()
                .join(".git/objects")
                .join(&hex[..2])
                .join(&hex[2..]),
        )
        .unwrap();
        let store = Store::open(&v).unwrap();
        assert!(git_candidates(&store, "a.md", None, &sha).is_err());
    }
}
