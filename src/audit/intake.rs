//! A remote's record history is input, not authority (spec/sync.md, "What sync takes in"):
//! before sync moves the local ref to a remote's tip or merges it, and before `init` starts a
//! clone from its remote's records, every commit it would take in is checked with the audit's
//! own rules ([`super::history::check_commit`]: only record files, regular blobs at
//! allowed paths with plain names; a non-merge commit only appends whole lines or adds files,
//! each line it adds within the record grammar, `records::grammar`; a merge keeps both parents'
//! lines) and within bounds (commits, parents, object sizes). The first commit that fails
//! refuses the whole history; the caller then changes nothing.

use super::history::{check_commit, Step};
use crate::objectid::ObjectId;
use crate::records::paths::{self, RecordKind};
use crate::store::tree::Trees;
use crate::store::{Store, StoreError};

/// The most commits one sync or clone takes in (a 70,000-commit history is ten years of
/// captures).
pub(crate) const MAX_COMMITS: usize = 1_000_000;
/// The most parents a record commit has (sync's merges have two).
pub(crate) const MAX_PARENTS: usize = 2;
/// The largest commit object (its message holds the lines it appended).
pub(crate) const MAX_COMMIT_BYTES: usize = 16 << 20;
/// The largest tree object: a folder of the record tree (a year holds a day file per writer
/// and day; a `cited/<aa>/` folder one entry per 256 cited notes).
pub(crate) const MAX_TREE_BYTES: usize = 16 << 20;
/// The largest record file (day file, ledger, use log, acknowledgements).
pub(crate) const MAX_RECORD_BYTES: usize = 256 << 20;

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
        // A rule that names its path (the audit's findings do) is not led by it a second time.
        let path = self
            .path
            .as_ref()
            .filter(|p| !self.rule.contains(p.as_str()));
        match (&self.commit, path) {
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

fn refuse(commit: Option<ObjectId>, path: Option<String>, rule: impl Into<String>) -> IntakeError {
    IntakeError::Refused(Refusal {
        commit: commit.map(short),
        path,
        kind: None,
        rule: rule.into(),
    })
}

/// The refusal for the first finding the audit's rules made of commit `oid`: its detail names
/// the path and starts with the commit, which the refusal names first.
fn refuse_finding(oid: ObjectId, f: &super::Finding) -> IntakeError {
    let short = short(oid);
    let detail = f
        .detail
        .strip_prefix(&short)
        .unwrap_or(&f.detail)
        .trim_start();
    IntakeError::Refused(Refusal {
        commit: Some(short.clone()),
        path: f.path.clone(),
        kind: Some(f.kind.as_str().to_string()),
        rule: detail.to_string(),
    })
}

/// Refuses a remote tip that is no commit: a `refs/rutter/records` pointed at a blob, tree or
/// tag by hand, or an id the fetch did not bring.
pub fn check_tip(store: &Store, tip: ObjectId) -> Result<(), IntakeError> {
    match store.object_kind(tip)? {
        Some("commit") => Ok(()),
        Some(kind) => Err(refuse(
            None,
            None,
            format!("its refs/rutter/records points at a {kind}, not a commit"),
        )),
        None => Err(refuse(
            None,
            None,
            format!(
                "its refs/rutter/records names {}, which git did not bring",
                short(tip)
            ),
        )),
    }
}

/// Checks every commit reachable from `tip` and not from `have` (the local tip; `None`: the
/// whole history), oldest first. `Ok(n)`: `n` commits checked, all within the rules.
pub fn check_incoming(
    store: &Store,
    tip: ObjectId,
    have: Option<ObjectId>,
) -> Result<usize, IntakeError> {
    crate::store::skip_read_verification();
    check_tip(store, tip)?;
    let oids = incoming(store, tip, have)?;
    let mut trees = store.trees()?;
    trees.limit_trees(MAX_TREE_BYTES);
    // The use log's times are judged against this machine's clock, read once.
    let now = crate::clock::now();
    for (n, &oid) in oids.iter().enumerate() {
        check_one(store, &mut trees, oid, now)?;
        if (n + 1) % 64 == 0 {
            trees.forget();
        }
    }
    Ok(oids.len())
}

/// The commits to take in, oldest first, at most [`MAX_COMMITS`] (counted before the ordered
/// walk, which has to read them all).
fn incoming(
    store: &Store,
    tip: ObjectId,
    have: Option<ObjectId>,
) -> Result<Vec<ObjectId>, IntakeError> {
    let unreadable = |e: StoreError| {
        refuse(
            Some(tip),
            None,
            format!("its history cannot be read: {}", e.detail()),
        )
    };
    let count = store
        .count_reachable(tip, have, MAX_COMMITS)
        .map_err(unreadable)?;
    if count > MAX_COMMITS {
        return Err(refuse(
            Some(tip),
            None,
            format!("it brings more than {MAX_COMMITS} commits"),
        ));
    }
    store.oldest_first(tip, have).map_err(unreadable)
}

/// Checks one commit: its object, its parents, its tree's new entries and their sizes, then
/// the audit's rules.
fn check_one(
    store: &Store,
    trees: &mut Trees<'_>,
    oid: ObjectId,
    now: crate::clock::Instant,
) -> Result<(), IntakeError> {
    let cannot = |e: StoreError| {
        refuse(
            Some(oid),
            None,
            format!("it cannot be read: {}", e.detail()),
        )
    };
    let (size, kind) = store.object_header(oid).map_err(cannot)?;
    if kind != "commit" || size > MAX_COMMIT_BYTES {
        return Err(refuse(
            Some(oid),
            None,
            format!("not a commit of at most {MAX_COMMIT_BYTES} bytes ({kind}, {size} bytes)"),
        ));
    }
    let c = store.commit_info(oid).map_err(cannot)?;
    if c.head.parents.len() > MAX_PARENTS {
        return Err(refuse(
            Some(oid),
            None,
            format!(
                "a merge of {} parents (sync's merges have two)",
                c.head.parents.len()
            ),
        ));
    }
    let parent_tree = c.head.parents.first().map(|(_, tree)| *tree);
    let (changes, odd) = trees
        .changes_checked(parent_tree, Some(c.head.tree))
        .map_err(|e| cannot(e.into()))?;
    if let Some(o) = odd.first() {
        let mut why = refuse(Some(oid), Some(o.path.clone()), o.rule());
        if let IntakeError::Refused(r) = &mut why {
            r.kind = Some(super::history::odd_kind(o).as_str().to_string());
        }
        return Err(why);
    }
    for ch in &changes {
        let Some(new) = ch.new else { continue };
        let (size, kind) = store.object_header(new).map_err(cannot)?;
        let limit = match paths::stored_file(&ch.path) {
            Some(RecordKind::Cited) => paths::CITED_MAX_BYTES as usize,
            _ => MAX_RECORD_BYTES,
        };
        if kind != "blob" || size > limit {
            return Err(refuse(
                Some(oid),
                Some(ch.path.clone()),
                format!("not a blob of at most {limit} bytes ({kind}, {size} bytes)"),
            ));
        }
    }
    let mut steps = Vec::new();
    check_commit(store, trees, &c.head, false, now, &mut steps).map_err(|e| match e {
        e @ StoreError::Git(_) => cannot(e),
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

fn short(oid: ObjectId) -> String {
    crate::shortid::short(&oid)
}
