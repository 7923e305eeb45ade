//! A remote's record history is input, not authority (spec/sync.md, "What sync takes in"):
//! before sync moves the local ref to a remote's tip or merges it, and before `init` starts a
//! clone from its remote's records, every commit it would take in is checked with the audit's
//! own rules ([`super::verify::history::check_commit`]: only record files, regular blobs at
//! allowed paths with plain names; a non-merge commit only appends whole lines or adds files;
//! a merge keeps both parents' lines) and within bounds (commits, parents, object sizes). The
//! first commit that fails refuses the whole history; the caller then changes nothing.

use super::tree::Trees;
use super::verify::history::{check_commit, Step};
use super::{Store, StoreError};
use crate::records::paths::{self, RecordKind};
use git2::{ObjectType, Oid, Sort};

/// The most commits one sync or clone takes in (a 70,000-commit history is ten years of
/// captures).
pub const MAX_COMMITS: usize = 1_000_000;
/// The most parents a record commit has (sync's merges have two).
pub const MAX_PARENTS: usize = 2;
/// The largest commit object (its message holds the lines it appended).
pub const MAX_COMMIT_BYTES: usize = 16 << 20;
/// The largest tree object: a folder of the record tree (a year holds a day file per writer
/// and day; a `cited/<aa>/` folder one entry per 256 cited notes).
pub const MAX_TREE_BYTES: usize = 16 << 20;
/// The largest record file (day file, ledger, use log, acknowledgements).
pub const MAX_RECORD_BYTES: usize = 256 << 20;

/// Why a history was refused: the commit, the path and the rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Refusal {
    /// The offending commit (7 hex digits), when one is to blame.
    pub commit: Option<String>,
    pub path: Option<String>,
    /// The audit's name for what is wrong (`unexpected-path`, `history-rewrite`, …), when the
    /// audit has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub rule: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = |s: &str| crate::records::text::terminal_safe(s).into_owned();
        match (&self.commit, &self.path) {
            (Some(c), Some(p)) => write!(f, "commit {c}, {}: {}", text(p), text(&self.rule))?,
            (Some(c), None) => write!(f, "commit {c} {}", text(&self.rule))?,
            (None, Some(p)) => write!(f, "{}: {}", text(p), text(&self.rule))?,
            (None, None) => write!(f, "{}", text(&self.rule))?,
        }
        match &self.kind {
            Some(k) => write!(f, " ({k})"),
            None => Ok(()),
        }
    }
}

/// Why the intake did not take a history.
#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    #[error("{0}")]
    Refused(Refusal),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<git2::Error> for IntakeError {
    fn from(e: git2::Error) -> Self {
        IntakeError::Store(StoreError::Git(e))
    }
}

fn refuse(commit: Option<Oid>, path: Option<String>, rule: impl Into<String>) -> IntakeError {
    IntakeError::Refused(Refusal {
        commit: commit.map(short),
        path,
        kind: None,
        rule: rule.into(),
    })
}

/// The refusal for the first finding the audit's rules made of commit `oid`: its detail names
/// the path and starts with the commit, which the refusal names first.
fn refuse_finding(oid: Oid, f: &super::verify::Finding) -> IntakeError {
    let short = short(oid);
    let detail = f
        .detail
        .strip_prefix(&short)
        .unwrap_or(&f.detail)
        .trim_start();
    IntakeError::Refused(Refusal {
        commit: Some(short.clone()),
        path: None,
        kind: Some(f.kind.as_str().to_string()),
        rule: detail.to_string(),
    })
}

impl Store {
    /// Checks every commit reachable from `tip` and not from `have` (the local tip; `None`:
    /// the whole history), oldest first. `Ok(n)`: `n` commits checked, all within the rules.
    pub fn check_incoming(&self, tip: Oid, have: Option<Oid>) -> Result<usize, IntakeError> {
        super::skip_read_verification();
        let oids = self.incoming(tip, have)?;
        let mut trees = Trees::new(&self.repo)?;
        trees.limit_trees(MAX_TREE_BYTES);
        let odb = self.repo.odb()?;
        for (n, &oid) in oids.iter().enumerate() {
            self.check_one(&odb, &mut trees, oid)?;
            if (n + 1) % 64 == 0 {
                trees.forget();
            }
        }
        Ok(oids.len())
    }

    /// The commits to take in, oldest first, at most [`MAX_COMMITS`] (counted before the
    /// ordered walk, which has to read them all).
    fn incoming(&self, tip: Oid, have: Option<Oid>) -> Result<Vec<Oid>, IntakeError> {
        let walk = |sort: Sort| -> Result<git2::Revwalk<'_>, git2::Error> {
            let mut w = self.repo.revwalk()?;
            w.set_sorting(sort)?;
            w.push(tip)?;
            if let Some(h) = have {
                w.hide(h)?;
            }
            Ok(w)
        };
        let unreadable = |e: git2::Error| {
            refuse(
                Some(tip),
                None,
                format!("its history cannot be read: {}", e.message()),
            )
        };
        let mut count = 0;
        for oid in walk(Sort::NONE).map_err(unreadable)? {
            oid.map_err(unreadable)?;
            count += 1;
            if count > MAX_COMMITS {
                return Err(refuse(
                    Some(tip),
                    None,
                    format!("it brings more than {MAX_COMMITS} commits"),
                ));
            }
        }
        let ordered = walk(Sort::TOPOLOGICAL | Sort::REVERSE).map_err(unreadable)?;
        ordered.collect::<Result<Vec<Oid>, _>>().map_err(unreadable)
    }

    /// Checks one commit: its object, its parents, its tree's new entries and their sizes,
    /// then the audit's rules.
    fn check_one(
        &self,
        odb: &git2::Odb<'_>,
        trees: &mut Trees<'_>,
        oid: Oid,
    ) -> Result<(), IntakeError> {
        let cannot = |e: git2::Error| {
            refuse(
                Some(oid),
                None,
                format!("it cannot be read: {}", e.message()),
            )
        };
        let (size, kind) = odb.read_header(oid).map_err(cannot)?;
        if kind != ObjectType::Commit || size > MAX_COMMIT_BYTES {
            return Err(refuse(
                Some(oid),
                None,
                format!("not a commit of at most {MAX_COMMIT_BYTES} bytes ({kind}, {size} bytes)"),
            ));
        }
        let c = self.repo.find_commit(oid).map_err(cannot)?;
        if c.parent_count() > MAX_PARENTS {
            return Err(refuse(
                Some(oid),
                None,
                format!(
                    "a merge of {} parents (sync's merges have two)",
                    c.parent_count()
                ),
            ));
        }
        let parent = c.parent_id(0).ok();
        let parent_tree = match parent {
            Some(p) => Some(self.repo.find_commit(p).map_err(cannot)?.tree_id()),
            None => None,
        };
        let (changes, odd) = trees
            .changes_checked(parent_tree, Some(c.tree_id()))
            .map_err(cannot)?;
        if let Some(o) = odd.first() {
            let mut why = refuse(Some(oid), Some(o.path.clone()), o.rule());
            if let IntakeError::Refused(r) = &mut why {
                r.kind = Some(super::verify::history::odd_kind(o).as_str().to_string());
            }
            return Err(why);
        }
        for ch in &changes {
            let Some(new) = ch.new else { continue };
            let (size, kind) = odb.read_header(new).map_err(cannot)?;
            let limit = match paths::stored_file(&ch.path) {
                Some(RecordKind::Cited) => paths::CITED_MAX_BYTES as usize,
                _ => MAX_RECORD_BYTES,
            };
            if kind != ObjectType::Blob || size > limit {
                return Err(refuse(
                    Some(oid),
                    Some(ch.path.clone()),
                    format!("not a blob of at most {limit} bytes ({kind}, {size} bytes)"),
                ));
            }
        }
        let mut steps = Vec::new();
        check_commit(self, trees, &c, false, &mut steps).map_err(|e| match e {
            StoreError::Git(g) => cannot(g),
            other => IntakeError::Store(other),
        })?;
        for step in steps {
            if let Step::Found(found) = step {
                if let Some(f) = found.first() {
                    return Err(refuse_finding(oid, f));
                }
            }
        }
        Ok(())
    }
}

fn short(oid: Oid) -> String {
    oid.to_string()[..7].to_string()
}
