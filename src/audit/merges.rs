//! The check of a merge commit on `refs/rutter/records` (`git rutter sync` writes them,
//! spec/sync.md): it must keep every line of both parents' record files and add nothing
//! neither parent holds.
//!
//! Kept: each parent's version of each record file has all its lines (as a multiset) in the
//! merged version of that path, or is kept whole beside it (an `@1` day file at
//! `<day>.v1-<blob id[0:12]>.md`). Added nothing: every line of a merged record file is in one
//! of the parents' versions of that path (as often as the parent holding it more often), a file
//! new to both parents is only such a kept `@1` version, and a `cited/` copy is a parent's.
//! Only files that differ from a parent are read.

use super::finding::{Finding, Kind};
use crate::objectid::ObjectId;
use crate::records::paths::day_of;
use crate::store::graph::CommitHead;
use crate::store::tree::Trees;
use crate::store::{Store, StoreError};
use std::collections::HashMap;

/// The findings for the merge commit `c` (`short`: its abbreviated id).
pub(crate) fn check(
    store: &Store,
    trees: &mut Trees<'_>,
    c: &CommitHead,
    short: &str,
) -> Result<Vec<Finding>, StoreError> {
    let merged = c.tree;
    let parents = &c.parents;
    let mut findings = Vec::new();
    for (parent, tree) in parents {
        for (path, oid) in trees.files(*tree, crate::records::paths::OVERLAY_DIR)? {
            let kept = trees.entry(merged, &path)?;
            if kept == Some((oid, false)) {
                continue;
            }
            let ours = match kept {
                Some((o, false)) => trees.blob(o)?.to_vec(),
                _ => Vec::new(),
            };
            if excess(&trees.blob(oid)?, &[ours.as_slice()]).is_some()
                && !kept_beside(trees, merged, &path, oid)?
            {
                let detail = format!(
                    "merge {short} lost lines of {path} from parent {}",
                    crate::shortid::short(parent)
                );
                findings.push(finding(Kind::MergeLostLines, &path, short, detail));
            }
        }
    }
    let Some((_, first)) = parents.first() else {
        return Ok(findings);
    };
    for ch in trees.changes(Some(*first), Some(merged))? {
        if let Some(f) = added(store, trees, parents, &ch.path, ch.new, short)? {
            findings.push(f);
        }
    }
    Ok(findings)
}

/// A finding when the merge's version `new` of `path` holds what no parent does.
fn added(
    store: &Store,
    trees: &mut Trees<'_>,
    parents: &[(ObjectId, ObjectId)],
    path: &str,
    new: Option<ObjectId>,
    short: &str,
) -> Result<Option<Finding>, StoreError> {
    let Some(new) = new else {
        return Ok(None);
    };
    let mut versions = Vec::new();
    for (_, tree) in parents {
        match trees.entry(*tree, path)? {
            Some((o, false)) if o == new => return Ok(None),
            Some((o, false)) => versions.push(trees.blob(o)?.to_vec()),
            _ => {}
        }
    }
    if path.starts_with("cited/") {
        let detail = format!("merge {short} brought a cited copy {path} neither parent holds");
        return Ok(Some(finding(Kind::MergeAddedLines, path, short, detail)));
    }
    if versions.is_empty() && is_kept_v1(store, trees, parents, path, new)? {
        return Ok(None);
    }
    let sides: Vec<&[u8]> = versions.iter().map(Vec::as_slice).collect();
    let Some(line) = excess(&trees.blob(new)?, &sides) else {
        return Ok(None);
    };
    let detail = format!(
        "merge {short} holds a line of {path} that neither parent holds: {:?}",
        line.chars().take(80).collect::<String>()
    );
    Ok(Some(finding(Kind::MergeAddedLines, path, short, detail)))
}

/// Whether `path` is a parent's `@1` day file kept whole beside the merged one.
fn is_kept_v1(
    _store: &Store,
    trees: &mut Trees<'_>,
    parents: &[(ObjectId, ObjectId)],
    path: &str,
    new: ObjectId,
) -> Result<bool, StoreError> {
    let Some(day) = day_of(path) else {
        return Ok(false);
    };
    if crate::records::paths::beside_path(day, &new.to_string()) != path {
        return Ok(false);
    }
    let main = crate::records::paths::day_file(day);
    for (_, tree) in parents {
        if trees.entry(*tree, &main)? == Some((new, false)) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether a merge kept a parent's `@1` day file whole beside the merged one.
fn kept_beside(
    trees: &mut Trees<'_>,
    merged: ObjectId,
    path: &str,
    oid: ObjectId,
) -> Result<bool, StoreError> {
    let Some(day) = day_of(path) else {
        return Ok(false);
    };
    let beside = crate::records::paths::beside_path(day, &oid.to_string());
    Ok(trees.entry(merged, &beside)? == Some((oid, false)))
}

/// The first line of `text` that occurs more often in it than in the side holding it most
/// often (`None` when every line is accounted for). Lines are split at `\n`.
pub(crate) fn excess(text: &[u8], sides: &[&[u8]]) -> Option<String> {
    fn count(bytes: &[u8]) -> HashMap<&[u8], usize> {
        let mut n: HashMap<&[u8], usize> = HashMap::new();
        for l in lines(bytes) {
            *n.entry(l).or_default() += 1;
        }
        n
    }
    let mut allowed: HashMap<&[u8], usize> = HashMap::new();
    for side in sides {
        for (l, n) in count(side) {
            let slot = allowed.entry(l).or_default();
            *slot = (*slot).max(n);
        }
    }
    for l in lines(text) {
        match allowed.get_mut(l) {
            Some(n) if *n > 0 => *n -= 1,
            _ => return Some(String::from_utf8_lossy(l).into_owned()),
        }
    }
    None
}

fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    body.split(|&c| c == b'\n')
        .filter(move |_| !bytes.is_empty())
}

fn finding(kind: Kind, path: &str, short: &str, detail: String) -> Finding {
    let mut f = Finding::new(kind, path, short, detail);
    f.path = Some(path.to_string());
    f.commit = Some(short.to_string());
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excess_counts_lines_as_a_multiset() {
        assert_eq!(excess(b"a\nb\n", &[b"a\n", b"b\n"]), None);
        assert_eq!(excess(b"a\na\n", &[b"a\n", b"a\n"]), Some("a".into()));
        assert_eq!(excess(b"a\na\n", &[b"a\na\n", b""]), None);
        assert_eq!(excess(b"a\nX\n", &[b"a\n"]), Some("X".into()));
        assert_eq!(excess(b"", &[]), None);
        assert_eq!(
            excess(b"a", &[b"a\n"]),
            None,
            "a torn tail is the same line"
        );
    }
}
