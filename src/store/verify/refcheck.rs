//! The ref check: the tip descends from every tip this tool witnessed in `.git/rutter/tips`,
//! and the reflog shows no move that is not a fast-forward. A missing reflog, and a witness log
//! that is missing or no longer starts with what the last verify read, are reported as "cannot
//! check", never as clean.

use super::cache::VerifyCache;
use super::finding::{Finding, Kind};
use super::history::History;
use crate::clock::Instant;
use crate::store::{Store, StoreError, RECORDS_REF};
use git2::{Oid, Repository};

/// The ref, its reflog and the witness log, read together under the capture lock so a capture
/// landing meanwhile cannot make them disagree (a tip newer than the reflog read, or older than
/// the witness log read, would look like a rewind that never happened).
pub struct Snapshot {
    pub tip: Oid,
    /// The witness log's bytes; `None` when missing, the error when unreadable.
    tips: Result<Option<Vec<u8>>, crate::fsx::FsError>,
    /// `(old, new, committer seconds, message)`, newest first, as libgit2 lists them.
    reflog: Vec<(Oid, Oid, i64, String)>,
}

impl Snapshot {
    /// Reads the three; the caller holds the capture lock when it can be had.
    pub fn read(store: &Store, tip: Oid) -> Result<Snapshot, StoreError> {
        let tips = crate::fsx::Dir::open(store.state_dir()).and_then(|d| d.read("tips"));
        let reflog = store
            .repo
            .reflog(RECORDS_REF)?
            .iter()
            .map(|e| {
                let message = e
                    .message()
                    .ok()
                    .flatten()
                    .unwrap_or("no message")
                    .to_string();
                (
                    e.id_old(),
                    e.id_new(),
                    e.committer().when().seconds(),
                    message,
                )
            })
            .collect();
        Ok(Snapshot { tip, tips, reflog })
    }
}

/// Runs the ref check on a snapshot; `full` re-checks every witnessed tip and reflog entry.
pub fn check(
    store: &Store,
    snap: &Snapshot,
    cache: &mut VerifyCache,
    full: bool,
    history: &History,
) -> Result<Vec<Finding>, StoreError> {
    let mut findings = witnessed(store, snap, cache, full, history);
    findings.extend(reflog(store, snap, cache, full));
    findings.extend(replaced(store)?);
    Ok(findings)
}

/// Every `refs/replace/` ref: git (not libgit2, so not verify) then shows the replacement
/// instead of the object, so `git show` and `git log -p` of the records could display forged
/// text. Rare in a notes vault, so each one is reported, whatever object it replaces.
fn replaced(store: &Store) -> Result<Vec<Finding>, StoreError> {
    let mut findings = Vec::new();
    for reference in store.repo.references_glob("refs/replace/*")? {
        let reference = reference?;
        let Ok(name) = reference.name() else { continue };
        let replaced = name.trim_start_matches("refs/replace/");
        let by = reference
            .target()
            .map(|o| o.to_string())
            .unwrap_or_default();
        let short = &replaced[..replaced.len().min(12)];
        findings.push(Finding::new(
            Kind::ReplacedObject,
            name,
            short,
            format!("git shows object {short} as {} instead ({name}), so `git show` and `git log -p` of {RECORDS_REF} may display text the record does not hold; verify reads the true objects. See the truth with `git --no-replace-objects log -p {RECORDS_REF}`; remove the replacement with `git replace -d {replaced}`", &by[..by.len().min(12)]),
        ));
    }
    Ok(findings)
}

/// Whether `new` is `old` or descends from it (a parent link first: the common case is cheap).
fn follows(repo: &Repository, new: Oid, old: Oid) -> bool {
    if new == old {
        return true;
    }
    if let Ok(c) = repo.find_commit(new) {
        if c.parent_ids().any(|p| p == old) {
            return true;
        }
    }
    repo.graph_descendant_of(new, old).unwrap_or(false)
}

/// Each witnessed tip must be an ancestor of the tip: looked up among the commits the history
/// check walked; only a tip older than that walk costs a graph walk.
fn witnessed(
    store: &Store,
    snap: &Snapshot,
    cache: &mut VerifyCache,
    full: bool,
    history: &History,
) -> Vec<Finding> {
    let tip = snap.tip;
    let verified = cache
        .verified_tip
        .as_deref()
        .and_then(|v| Oid::from_str(v).ok());
    let seen = cache.tips_seen.as_ref().map_or(0, |(len, _)| *len);
    let bytes = match &snap.tips {
        Ok(Some(b)) => b.as_slice(),
        Ok(None) => return vec![witness_unreadable(seen, None)],
        Err(e) => return vec![witness_unreadable(seen, Some(e))],
    };
    let mut findings: Vec<Finding> = witness_rewritten(cache, bytes).into_iter().collect();
    let text = String::from_utf8_lossy(bytes);
    let tips: Vec<Oid> = text
        .lines()
        .filter_map(|l| Oid::from_str(l.trim()).ok())
        .collect();
    let from = if full {
        0
    } else {
        cache.tips_checked.min(tips.len()).saturating_sub(1)
    };
    for t in &tips[from..] {
        // The verified tip is an ancestor only when the walk started after it.
        let known =
            *t == tip || history.walked.contains(t) || (!history.complete && Some(*t) == verified);
        let ancestor = known || (!history.complete && follows(&store.repo, tip, *t));
        if !ancestor {
            let short = &t.to_string()[..7];
            let mut f = Finding::new(Kind::RefNotDescendant, RECORDS_REF, short, format!("{RECORDS_REF} does not descend from {short}, a tip git-rutter wrote: history was rewound or replaced"));
            f.commit = Some(short.to_string());
            findings.push(f);
        }
    }
    cache.tips_checked = tips.len();
    findings
}

/// Whether a finding is about the witness log. Its id names the length the last verify accepted
/// (`…:tips@<bytes>`), so acknowledging one incident never acknowledges a later one.
pub fn is_witness_finding(f: &Finding) -> bool {
    f.id.starts_with(&format!(
        "{}:{RECORDS_REF}:tips@",
        Kind::RefUnverifiable.as_str()
    ))
}

fn witness_finding(seen: u64, why: String) -> Finding {
    let key = format!("tips@{seen}");
    let id = Finding::new(Kind::RefUnverifiable, RECORDS_REF, &key, "").id;
    Finding::new(Kind::RefUnverifiable, RECORDS_REF, &key, format!("{why}, so rewinds of {RECORDS_REF} before now cannot be checked (cannot check). Nothing but git-rutter writes that file; if you know why it changed, acknowledge it: `git rutter verify --ack {id} --reason TEXT`"))
}

/// A witness log that is missing (`None`) or cannot be read, a symlink included (a ref this
/// tool wrote always has one).
fn witness_unreadable(seen: u64, e: Option<&crate::fsx::FsError>) -> Finding {
    match e {
        None => witness_finding(
            seen,
            "the tip witness log .git/rutter/tips is missing".into(),
        ),
        Some(e) => witness_finding(
            seen,
            format!("the tip witness log .git/rutter/tips cannot be read ({e})"),
        ),
    }
}

/// Compares the witness log with what the last verify read: it may only have grown. Records
/// what was read, for [`super::cache::VerifyCache::accept_tips`].
fn witness_rewritten(cache: &mut VerifyCache, bytes: &[u8]) -> Option<Finding> {
    let digest = |b: &[u8]| crate::records::fingerprint::sha256_hex(b);
    cache.tips_read = Some((bytes.len() as u64, digest(bytes)));
    let (len, sha) = cache.tips_seen.as_ref()?;
    let kept = usize::try_from(*len).ok().and_then(|n| bytes.get(..n));
    match kept {
        Some(prefix) if digest(prefix) == *sha => None,
        Some(_) => Some(witness_finding(
            *len,
            "the tip witness log .git/rutter/tips was rewritten since the last verify".into(),
        )),
        None => Some(witness_finding(*len, format!(
            "the tip witness log .git/rutter/tips is shorter than the last verify read ({} bytes, was {len})",
            bytes.len()
        ))),
    }
}

fn reflog(store: &Store, snap: &Snapshot, cache: &mut VerifyCache, full: bool) -> Vec<Finding> {
    let tip = snap.tip;
    let log = &snap.reflog;
    if log.is_empty() {
        let id = Finding::new(Kind::RefUnverifiable, RECORDS_REF, "reflog", "").id;
        let f = Finding::new(Kind::RefUnverifiable, RECORDS_REF, "reflog", format!("{RECORDS_REF} has no reflog, so its moves cannot be checked (cannot check). Run `git rutter init` to keep one from now on, then acknowledge this finding: `git rutter verify --ack {id} --reason TEXT`"));
        return vec![f];
    }
    let total = log.len();
    let done = if full {
        0
    } else {
        cache.reflog_checked.min(total)
    };
    let mut findings = Vec::new();
    // Index 0 is the newest entry; walk the unchecked ones oldest first.
    for (old, new, seconds, message) in log[..total - done].iter().rev() {
        if old.is_zero() || follows(&store.repo, *new, *old) {
            continue;
        }
        let when = Instant(seconds * 1000).iso();
        let (o, n) = (&old.to_string()[..7], &new.to_string()[..7]);
        let mut f = Finding::new(
            Kind::RefRewind,
            RECORDS_REF,
            &format!("{o}..{n}"),
            format!("{RECORDS_REF} moved from {o} to {n} at {when}, which is not a fast-forward ({message})"),
        );
        f.commit = Some(n.to_string());
        findings.push(f);
    }
    if let Some((_, newest, _, _)) = log.first() {
        if *newest != tip && !follows(&store.repo, tip, *newest) {
            let n = &tip.to_string()[..7];
            findings.push(Finding::new(Kind::RefRewind, RECORDS_REF, &format!("unlogged-{n}"), format!("{RECORDS_REF} is at {n}, which the reflog never recorded and which does not descend from its last entry")));
        }
    }
    cache.reflog_checked = total;
    findings
}
