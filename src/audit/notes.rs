//! `verify --notes`: cited notes changed in place since capture (same path, another sha256),
//! each with a diff against the copy kept in `cited/` when there is one.

use super::finding::{Finding, Kind};
use crate::records::paths::{cited_path, day_of};
use crate::records::{dayfile, fingerprint};
use crate::store::tree::Trees;
use crate::store::{Oid, Store, StoreError};
use std::collections::BTreeMap;

/// Checks every cited `(path, hash)` of the committed day files.
pub fn check(store: &Store, tip: Oid) -> Result<Vec<Finding>, StoreError> {
    let tree = store.tree_of(tip)?;
    let mut trees = store.trees()?;
    let mut cited: BTreeMap<(String, String), (String, String)> = BTreeMap::new();
    for (path, blob) in trees.files(tree, crate::records::paths::SESSIONS_DIR)? {
        let Some(day) = day_of(&path) else {
            continue;
        };
        let bytes = store.blob(blob)?;
        for e in dayfile::parse(&bytes).entries {
            for r in e.refs {
                cited
                    .entry((r.path, r.hash))
                    .or_insert_with(|| (e.id.clone(), day.to_string()));
            }
        }
    }
    let mut findings = Vec::new();
    for ((path, hash), (entry, day)) in cited {
        let Some(now) = store.working(&path) else {
            continue;
        };
        if fingerprint::sha256_ref(&now) == hash {
            continue;
        }
        let mut f = Finding::new(
            Kind::NoteChanged,
            &path,
            &hash,
            format!("{path} changed in place since entry {entry} ({day}) cited it"),
        );
        f.path = Some(path.clone());
        f.entry = Some(entry);
        f.day = Some(day);
        f.diff = kept_copy(store, &mut trees, tree, &hash).map(|old| {
            let (a, b) = (
                String::from_utf8_lossy(&old).into_owned(),
                String::from_utf8_lossy(&now).into_owned(),
            );
            similar::TextDiff::from_lines(&a, &b)
                .unified_diff()
                .context_radius(2)
                .header("as cited", "now")
                .to_string()
        });
        findings.push(f);
    }
    Ok(findings)
}

fn kept_copy(store: &Store, trees: &mut Trees<'_>, tree: Oid, hash: &str) -> Option<Vec<u8>> {
    let (oid, false) = trees.entry(tree, &cited_path(hash)?).ok()?? else {
        return None;
    };
    store.blob(oid).ok()
}
