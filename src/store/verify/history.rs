//! The history check: every non-merge commit on `refs/rutter/records` only appends to record
//! files, only adds `cited/` copies whose content matches their name, and deletes nothing;
//! every merge keeps both parents' lines. Also learns which commit added each entry.

use super::cache::VerifyCache;
use super::finding::{Finding, Kind};
use crate::records::{dayfile, fingerprint, ledger};
use crate::store::sign::SigCheck;
use crate::store::tree::{Change, Trees};
use crate::store::{day_of, Store, StoreError};
use git2::{Oid, Sort};

/// Trees kept in memory while walking; forgotten every this many commits.
const FORGET_EVERY: usize = 64;

/// What the history check found.
#[derive(Debug, Default)]
pub struct History {
    pub findings: Vec<Finding>,
    pub commits: usize,
    /// Every commit walked (the ref check looks witnessed tips up here instead of walking the
    /// graph once per tip).
    pub walked: std::collections::HashSet<Oid>,
    /// Whether the walk covered the whole history.
    pub complete: bool,
}

/// Checks the commits since the last verified tip (all of them when that tip is unknown or
/// no longer an ancestor), oldest first.
pub fn check(store: &Store, tip: Oid, cache: &mut VerifyCache) -> Result<History, StoreError> {
    let repo = &store.repo;
    let mut walk = repo.revwalk()?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)?;
    walk.push(tip)?;
    let mut complete = true;
    if let Some(v) = cache
        .verified_tip
        .as_deref()
        .and_then(|v| Oid::from_str(v).ok())
    {
        if v == tip || repo.graph_descendant_of(tip, v).unwrap_or(false) {
            walk.hide(v)?;
            complete = false;
        } else {
            cache.entries.clear();
        }
    }
    let mut trees = Trees::new(repo)?;
    let mut out = History {
        complete,
        ..Default::default()
    };
    for oid in walk {
        let oid = oid?;
        match repo.find_commit(oid) {
            Ok(c) => {
                match check_commit(store, &mut trees, &c, cache) {
                    Ok(found) => out.findings.extend(found),
                    // A blob or tree it needs is missing or does not inflate.
                    Err(StoreError::Git(e)) => out.findings.push(unreadable(oid, &e)),
                    Err(e) => return Err(e),
                }
                out.findings.extend(signature(store, &c));
            }
            Err(e) => out.findings.push(Finding::new(
                Kind::CorruptObject,
                "commit",
                &oid.to_string(),
                format!("commit {oid} cannot be read: {e}"),
            )),
        }
        out.commits += 1;
        out.walked.insert(oid);
        if out.commits % FORGET_EVERY == 0 {
            trees.forget();
        }
    }
    Ok(out)
}

/// A `corrupt-object` finding for commit `oid`, part of which cannot be read.
fn unreadable(oid: Oid, e: &git2::Error) -> Finding {
    let short = short(oid);
    let mut f = Finding::new(
        Kind::CorruptObject,
        "commit",
        &short,
        format!("an object of {short} cannot be read: {}", e.message()),
    );
    f.commit = Some(short);
    f
}

/// A finding for a signed commit whose signature git does not accept or cannot check.
fn signature(store: &Store, c: &git2::Commit<'_>) -> Option<Finding> {
    let short = short(c.id());
    let (kind, detail) = match store.check_signature(c) {
        SigCheck::Unsigned | SigCheck::Good => return None,
        SigCheck::Bad(why) => (
            Kind::BadSignature,
            format!("the signature of {short} does not verify: {why}"),
        ),
        SigCheck::Unchecked(why) => (
            Kind::SignatureUnchecked,
            format!("the signature of {short} cannot be checked here: {why}"),
        ),
    };
    let mut f = Finding::new(kind, "commit", &short, detail);
    f.commit = Some(short);
    Some(f)
}

fn check_commit(
    store: &Store,
    trees: &mut Trees<'_>,
    c: &git2::Commit<'_>,
    cache: &mut VerifyCache,
) -> Result<Vec<Finding>, StoreError> {
    let short = short(c.id());
    if c.parent_count() > 1 {
        return super::merges::check(store, trees, c, &short);
    }
    let parent = c.parent(0).ok().map(|p| p.tree_id());
    let changes = match trees.changes(parent, Some(c.tree_id())) {
        Ok(ch) => ch,
        Err(e) => {
            return Ok(vec![Finding::new(
                Kind::CorruptObject,
                "tree",
                &short,
                format!("the tree of {short} cannot be read: {e}"),
            )])
        }
    };
    let mut findings = Vec::new();
    for ch in changes {
        findings.extend(change(store, trees, &ch, &short, c.id(), cache)?);
    }
    Ok(findings)
}

/// Judges one changed path of a non-merge commit.
fn change(
    store: &Store,
    trees: &mut Trees<'_>,
    ch: &Change,
    short: &str,
    commit: Oid,
    cache: &mut VerifyCache,
) -> Result<Vec<Finding>, StoreError> {
    if let Some(rest) = ch.path.strip_prefix("cited/") {
        return cited(store, ch, rest.rsplit('/').next().unwrap_or(""), short);
    }
    if !ch.path.starts_with("_librarian/") {
        return Ok(vec![at(
            ch,
            short,
            Kind::UnexpectedPath,
            short,
            format!("{short} added a file outside _librarian/ and cited/"),
        )]);
    }
    let mut blob = |o: Oid| trees.blob(o);
    let (old, new) = match (ch.old, ch.new) {
        (_, None) => {
            return Ok(vec![at(
                ch,
                short,
                Kind::HistoryDelete,
                short,
                format!("{short} deleted {}", ch.path),
            )])
        }
        (None, Some(n)) => (std::rc::Rc::new(Vec::new()), blob(n)?),
        (Some(o), Some(n)) => (blob(o)?, blob(n)?),
    };
    if new.starts_with(&old) {
        for id in ids(&ch.path, &new[old.len()..], old.is_empty()) {
            cache.added(id, commit.to_string());
        }
        return Ok(vec![]);
    }
    Ok(rewrites(ch, short, &old, &new, cache))
}

/// A `cited/` change: only additions whose content has the sha256 of their name.
fn cited(store: &Store, ch: &Change, name: &str, short: &str) -> Result<Vec<Finding>, StoreError> {
    Ok(match (ch.old, ch.new) {
        (None, Some(n)) if fingerprint::sha256_hex(store.repo.find_blob(n)?.content()) == name => {
            vec![]
        }
        (None, Some(_)) => vec![at(
            ch,
            short,
            Kind::CitedMismatch,
            short,
            format!(
                "{short} added a cited copy whose content does not have the sha256 of its name"
            ),
        )],
        _ => vec![at(
            ch,
            short,
            Kind::HistoryRewrite,
            short,
            format!("{short} changed or removed a cited copy"),
        )],
    })
}

/// One finding per entry a rewriting commit changed, naming the commit that added it.
fn rewrites(ch: &Change, short: &str, old: &[u8], new: &[u8], cache: &VerifyCache) -> Vec<Finding> {
    let mut out: Vec<Finding> = changed_ids(&ch.path, old, new)
        .into_iter()
        .map(|id| {
            let mut f = at(
                ch,
                short,
                Kind::HistoryRewrite,
                &id,
                format!(
                    "{short} rewrote entry {id} of {} (committed earlier)",
                    ch.path
                ),
            );
            f.commit = cache
                .entries
                .get(&id)
                .map(|c| c[..c.len().min(7)].to_string())
                .or(Some(short.to_string()));
            f.entry = Some(id);
            f.day = day_of(&ch.path).map(str::to_string);
            f
        })
        .collect();
    if out.is_empty() {
        out.push(at(
            ch,
            short,
            Kind::HistoryRewrite,
            short,
            format!("{short} rewrote committed bytes of {}", ch.path),
        ));
    }
    out
}

/// A finding about `ch` in commit `short`.
fn at(ch: &Change, short: &str, kind: Kind, what: &str, detail: String) -> Finding {
    let mut f = Finding::new(kind, &ch.path, what, detail);
    f.path = Some(ch.path.clone());
    f.commit = Some(short.to_string());
    f
}

/// Entries, retractions (or bindings) of `old` that `new` no longer holds unchanged, and record
/// lines that appear in `new` among the committed ones.
pub fn changed_ids(path: &str, old: &[u8], new: &[u8]) -> Vec<String> {
    if path == ledger::LEDGER_PATH {
        let now = ledger::parse(new).bindings;
        return ledger::parse(old)
            .bindings
            .into_iter()
            .filter(|b| !now.contains(b))
            .map(|b| b.id)
            .collect();
    }
    match day_of(path) {
        Some(day) => crate::records::status::changed_ids(day, old, new),
        None => vec![],
    }
}

/// The entry, retraction or binding ids in a piece of a record file (`whole`: the piece is a
/// whole file, so `@1` frontmatter entries count too).
pub fn ids(path: &str, bytes: &[u8], whole: bool) -> Vec<String> {
    if path == ledger::LEDGER_PATH {
        return ledger::parse(bytes)
            .bindings
            .into_iter()
            .map(|b| b.id)
            .collect();
    }
    let Some(day) = day_of(path) else {
        return vec![];
    };
    let file = if whole {
        dayfile::parse(day, bytes)
    } else {
        dayfile::parse_v2_tail(day, bytes)
    };
    let retractions = file.retractions.into_iter().map(|r| r.id);
    file.entries
        .into_iter()
        .map(|e| e.id)
        .chain(retractions)
        .collect()
}

fn short(oid: Oid) -> String {
    oid.to_string()[..7].to_string()
}
