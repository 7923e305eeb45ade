//! The tree of a sync merge: the union of two record trees, the same whichever machine builds
//! it (spec/sync.md, "Merge").
//!
//! A path only one side has is taken as it is; a `cited/` copy both have is the one whose bytes
//! have the sha256 of its name; a record file both sides changed is their line union
//! ([`super::union`]). An `@1` day file (the TypeScript reference's YAML) whose two versions
//! part before the end of their `@1` part cannot be spliced line by line without hiding
//! entries from the `@1` reader, so the version with the smaller blob id keeps the path and the
//! other is kept whole beside it as `<day>.v1-<blob id[0:12]>.md`: every byte and every entry
//! of both stays, in files readers treat as one day.

use super::union::{common_line_prefix, union};
use crate::objectid::ObjectId;
use crate::records::paths::day_of;
use crate::records::{fingerprint, v1};
use crate::store::tree::Trees;
use crate::store::{Store, StoreError};

/// What a merge did to the files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MergedTree {
    pub tree: ObjectId,
    /// Record files both sides changed, written as their line union.
    pub unioned: Vec<String>,
    /// `(path, kept beside it as)`: `@1` day files whose two versions could not be spliced.
    pub split: Vec<(String, String)>,
}

/// The merged tree of the trees `ours` and `theirs`.
pub(crate) fn merge_trees(
    store: &Store,
    trees: &mut Trees<'_>,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<MergedTree, StoreError> {
    let mut out = MergedTree {
        tree: ours,
        unioned: vec![],
        split: vec![],
    };
    let mut edits: Vec<(String, ObjectId)> = Vec::new();
    for ch in trees.changes(Some(ours), Some(theirs))? {
        let (o, t) = match (ch.old, ch.new) {
            (None, Some(t)) => {
                edits.push((ch.path, t));
                continue;
            }
            (Some(o), Some(t)) => (o, t),
            // Only ours has it (histories never delete): ours stays.
            _ => continue,
        };
        if let Some(name) = ch.path.strip_prefix("cited/") {
            let pick = cited_pick(store, name.rsplit('/').next().unwrap_or(""), o, t)?;
            if pick != o {
                edits.push((ch.path, pick));
            }
            continue;
        }
        let (a, b) = (trees.blob(o)?, trees.blob(t)?);
        if let Some(day) = day_of(&ch.path).filter(|_| v1_parts_differ(&a, &b)) {
            let (keep, moved) = (o.min(t), o.max(t));
            let beside = crate::records::paths::beside_path(day, &moved.to_string());
            if keep != o {
                edits.push((ch.path.clone(), keep));
            }
            edits.push((beside.clone(), moved));
            out.split.push((ch.path, beside));
            continue;
        }
        let merged = store.write_blob(&union(&a, &b))?;
        if merged != o {
            edits.push((ch.path.clone(), merged));
        }
        out.unioned.push(ch.path);
    }
    // Both sides are read as vault-relative paths; writing on `ours` moved into year folders
    // makes the tree the same whichever side merges, also when one side is older than the
    // year folders (spec/ref-layout.md, "Year folders").
    let base = trees.moved_to_years(ours)?.unwrap_or(ours);
    out.tree = trees.write(Some(base), &edits)?;
    Ok(out)
}

/// Of two `cited/` copies at one path, the one whose bytes have the sha256 `name`, else the
/// smaller id (a corrupt copy is `verify`'s to report; the choice only has to be the same on
/// every machine).
fn cited_pick(store: &Store, name: &str, a: ObjectId, b: ObjectId) -> Result<ObjectId, StoreError> {
    for oid in [a.min(b), a.max(b)] {
        if fingerprint::sha256_hex(&store.blob(oid)?) == name {
            return Ok(oid);
        }
    }
    Ok(a.min(b))
}

/// Whether two versions of a day file part before the end of the `@1` part of either (its
/// frontmatter and generated body), where a line union would hide entries from the `@1` reader.
pub(crate) fn v1_parts_differ(a: &[u8], b: &[u8]) -> bool {
    let common = common_line_prefix(a, b);
    common < v1_end(a) || common < v1_end(b)
}

/// Where the `@1` part of a day file ends: after its generated body, after its frontmatter when
/// that cannot be parsed, 0 for a file this tool wrote (`@2` header) or without frontmatter.
fn v1_end(bytes: &[u8]) -> usize {
    let text = String::from_utf8_lossy(bytes);
    if !v1::has_frontmatter(&text) {
        return 0;
    }
    let fm = v1::split_frontmatter(&text).map(|(fm, _)| fm).unwrap_or("");
    if fm
        .lines()
        .any(|l| l.trim() == format!("schema: {}", crate::records::dayfile::SCHEMA_V2))
    {
        return 0;
    }
    // Offsets of the lossy text equal the bytes' for valid UTF-8; for anything else the whole
    // file counts as `@1`, which only ever keeps it whole.
    if text.len() != bytes.len() {
        return bytes.len();
    }
    match v1::parse_v1(&text) {
        Ok(f) => f.body_end,
        Err(_) => v1::frontmatter_end(&text).unwrap_or(bytes.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1: &str = "---\ncollection: librarian.sessions\nschema: session-record@1\nday: '2026-10-09'\nsessions:\n  - id: 20261009T221653000Z\n    time: '2026-10-09T22:16:53.000Z'\n    summary: 'One.'\n    refs: []\nrefs: []\n---\n# Sessions - 2026-10-09\n\n- 22:16:53 - One.\n";

    #[test]
    fn v1_versions_that_part_inside_the_frontmatter_are_kept_whole() {
        let other = V1.replace("One.", "Two.");
        assert!(v1_parts_differ(V1.as_bytes(), other.as_bytes()));
        let appended = |l: &str| format!("{V1}{l}\n");
        assert!(!v1_parts_differ(
            appended("- a").as_bytes(),
            appended("- b").as_bytes()
        ));
        let v2 = crate::records::dayfile::header("2026-10-09");
        assert!(!v1_parts_differ(
            format!("{v2}- a\n").as_bytes(),
            format!("{v2}- b\n").as_bytes()
        ));
        assert!(!v1_parts_differ(b"- a\n", b"- b\n"));
    }

    #[test]
    fn the_same_tree_results_whichever_side_merges() {
        let t = tempfile::tempdir().unwrap();
        git2::Repository::init(t.path()).unwrap();
        let v = crate::vault::open(t.path(), crate::vault::VaultSource::Flag).unwrap();
        let store = Store::open(&v).unwrap();
        let mut trees = store.trees().unwrap();
        let blob = |s: &str| store.write_blob(s.as_bytes()).unwrap();
        let day = "_librarian/sessions/2026-10-09.md";
        let hdr = crate::records::dayfile::header("2026-11-30");
        let shared = format!("{hdr}- shared\n");
        let note = b"# A\n";
        let cited =
            crate::records::paths::cited_path(&format!("sha256:{}", fingerprint::sha256_hex(note)))
                .unwrap();
        let ours = trees
            .write(
                None,
                &[
                    (
                        "_librarian/sessions/2026-11-30.md".into(),
                        blob(&format!("{shared}- a\n")),
                    ),
                    (day.into(), blob(V1)),
                    (cited.clone(), store.write_blob(note).unwrap()),
                    (
                        "_librarian/stateful-use.jsonl".into(),
                        blob("{\"ts\":\"1\"}\n"),
                    ),
                ],
            )
            .unwrap();
        let theirs = trees
            .write(
                None,
                &[
                    (
                        "_librarian/sessions/2026-11-30.md".into(),
                        blob(&format!("{shared}- b\n")),
                    ),
                    (day.into(), blob(&V1.replace("One.", "Two."))),
                    (cited.clone(), blob("forged")),
                    ("_librarian/note-identity.md".into(), blob("L\n")),
                ],
            )
            .unwrap();
        let a = merge_trees(&store, &mut trees, ours, theirs).unwrap();
        let b = merge_trees(&store, &mut trees, theirs, ours).unwrap();
        assert_eq!(a.tree, b.tree);
        // One side written before the year folders: the same tree, whichever side merges.
        let flat = trees.files(ours, "").unwrap();
        let ours_flat = trees.write_stored(&flat).unwrap();
        assert_ne!(ours_flat, ours);
        for (x, y) in [(ours_flat, theirs), (theirs, ours_flat)] {
            assert_eq!(merge_trees(&store, &mut trees, x, y).unwrap().tree, a.tree);
        }
        assert_eq!(a.split.len(), 1);
        let files = trees.files(a.tree, "").unwrap();
        let names: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(names.len(), 6, "{names:?}");
        assert_eq!(
            trees.blob_at(a.tree, &cited).unwrap().unwrap(),
            note,
            "the copy that matches its name"
        );
        assert_eq!(
            trees
                .blob_at(a.tree, "_librarian/sessions/2026-11-30.md")
                .unwrap()
                .unwrap(),
            format!("{shared}- a\n- b\n").as_bytes()
        );
        let v1_versions: Vec<Vec<u8>> = files
            .iter()
            .filter(|(p, _)| p.contains("2026-10-09"))
            .map(|(_, o)| store.blob(*o).unwrap())
            .collect();
        assert!(v1_versions.contains(&V1.as_bytes().to_vec()));
        assert!(v1_versions.contains(&V1.replace("One.", "Two.").into_bytes()));
    }
}
