//! `verify --notes`: cited notes changed since capture (same path, another sha256), and cited
//! notes renamed and then changed (the path gone, bound by the identity ledger of the record to
//! a note whose sha256 is another), each with a diff against the copy kept in `cited/` when
//! there is one.

use super::finding::{Finding, Kind};
use crate::objectid::ObjectId;
use crate::records::ledger::{self, Binding};
use crate::records::paths::{cited_path, day_of, IDENTITY_LEDGER};
use crate::records::{dayfile, fingerprint};
use crate::store::tree::Trees;
use crate::store::{Store, StoreError};
use std::collections::{BTreeMap, HashMap};

/// Each cited `(path, hash)`, the first entry that cited it (id, day), and why the capture
/// kept no copy of it, when the ref says (`withheld`: spec/secrets.md).
type Cited = BTreeMap<(String, String), (String, String, Option<String>)>;

/// Checks every cited `(path, hash)` of the committed day files.
pub fn check(store: &Store, tip: ObjectId) -> Result<Vec<Finding>, StoreError> {
    let tree = store.tree_of(tip)?;
    let mut trees = store.trees()?;
    let cited = cited_refs(store, &mut trees, tree)?;
    let bindings = committed_bindings(store, &mut trees, tree);
    let mut findings = Vec::new();
    for ((path, hash), (entry, day, withheld)) in cited {
        let (now, detail, at) = match store.working(&path) {
            Some(now) => (
                now,
                format!("{path} changed in place since entry {entry} ({day}) cited it"),
                path.clone(),
            ),
            None => {
                let Some(b) = bindings.get(&(path.clone(), hash.clone())) else {
                    continue;
                };
                let Some(now) = store.working(&b.to) else {
                    continue;
                };
                let to = &b.to;
                let detail = format!(
                    "{path} was renamed to {to} and changed since entry {entry} ({day}) cited it"
                );
                (now, detail, to.clone())
            }
        };
        if fingerprint::sha256_ref(&now) == hash {
            continue;
        }
        let mut f = Finding::new(Kind::NoteChanged, &path, &hash, detail);
        f.path = Some(at);
        f.entry = Some(entry);
        f.day = Some(day);
        f.diff = kept_copy(store, &mut trees, tree, &hash).map(|old| diff(&old, &now));
        if let (None, Some(why)) = (&f.diff, withheld_why(withheld.as_deref())) {
            f.detail.push_str(&format!("; no copy was kept: {why}"));
        }
        findings.push(f);
    }
    Ok(findings)
}

/// Every cited `(path, hash)` of the committed day files below `tree`.
fn cited_refs(store: &Store, trees: &mut Trees<'_>, tree: ObjectId) -> Result<Cited, StoreError> {
    let mut cited = Cited::new();
    for (path, blob) in trees.files(tree, crate::records::paths::SESSIONS_DIR)? {
        let Some(day) = day_of(&path) else {
            continue;
        };
        let bytes = store.blob(blob)?;
        for e in dayfile::parse(&bytes).entries {
            for r in e.refs {
                let withheld = r
                    .extra
                    .get("withheld")
                    .and_then(|v| v.as_str())
                    .map(str::to_string);
                cited
                    .entry((r.path, r.hash))
                    .or_insert_with(|| (e.id.clone(), day.to_string(), withheld));
            }
        }
    }
    Ok(cited)
}

/// The committed identity ledger's latest binding of each `(from, hash)` (spec/identity.md);
/// none when the record holds no ledger or it cannot be read.
fn committed_bindings(
    store: &Store,
    trees: &mut Trees<'_>,
    tree: ObjectId,
) -> HashMap<(String, String), Binding> {
    let bytes = match trees.entry(tree, IDENTITY_LEDGER) {
        Ok(Some((oid, false))) => store.blob(oid).unwrap_or_default(),
        _ => Vec::new(),
    };
    ledger::latest_bindings(&ledger::parse(&bytes).bindings)
}

/// Why a capture kept no copy, in words, from a ref's `withheld` (`secret: KINDS`, `private`).
pub(crate) fn withheld_why(withheld: Option<&str>) -> Option<String> {
    let w = withheld?;
    Some(match w.strip_prefix("secret: ") {
        Some(kinds) => format!("the note held a credential ({kinds}) when it was cited"),
        None if w == "private" => {
            "the note is marked private (`rutter: private` or .rutterignore)".to_string()
        }
        None => format!("withheld ({w})"),
    })
}

/// The unified diff from the cited copy to the note now.
fn diff(old: &[u8], now: &[u8]) -> String {
    crate::records::text::unified_diff(old, now, 2, ("as cited", "now"))
}

fn kept_copy(store: &Store, trees: &mut Trees<'_>, tree: ObjectId, hash: &str) -> Option<Vec<u8>> {
    let (oid, false) = trees.entry(tree, &cited_path(hash)?).ok()?? else {
        return None;
    };
    store.blob(oid).ok()
}
