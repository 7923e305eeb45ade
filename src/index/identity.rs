//! The identity projection (anchor §11, DESIGN §7): which cited paths are dead, which current
//! notes carry a dead ref's exact sha256, and the bindings, conflicts and unresolved refs that
//! the ledger and those facts imply. Rebuilt wholesale on every pass; never durable.

use super::{Index, IndexError};
use crate::records::ledger::Binding;
use rusqlite::{params, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A cited `(path, hash)` whose path no longer exists in the vault.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct DeadRef {
    pub from: String,
    pub hash: String,
    /// The git blob id recorded with it (`@2` entries only).
    pub blob: Option<String>,
}

/// A candidate for an unresolved ref, with the evidence for it (`None`: exact sha256 match).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Candidate {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

impl Candidate {
    /// `path` or `path (evidence)`.
    pub(crate) fn describe(&self) -> String {
        match &self.evidence {
            Some(e) => format!("{} ({e})", self.path),
            None => self.path.clone(),
        }
    }
}

/// A dead ref bound to a current note: the binding's target, how it was detected and when,
/// and for a confirmed binding the current note that now carries the cited hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BoundTo {
    pub to: String,
    pub detected: String,
    pub ts: String,
    pub conflict: Option<String>,
}

/// What the pass decided for one dead ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// Bound by the ledger's latest binding.
    Bound(BoundTo),
    /// A new exact-hash binding to append to the ledger, then bound.
    Bind {
        to: String,
    },
    Unresolved {
        exact: Vec<String>,
    },
}

/// Decides each dead ref from its exact candidates and the latest binding (anchor §11).
pub(crate) fn resolve(exact: &[String], latest: Option<&Binding>) -> Resolution {
    let bound = |b: &Binding, conflict: Option<String>| {
        Resolution::Bound(BoundTo {
            to: b.to.clone(),
            detected: b.detected.clone(),
            ts: b.ts.clone(),
            conflict,
        })
    };
    match (exact, latest) {
        ([only], Some(b)) if &b.to == only => bound(b, None),
        ([only], Some(b)) if b.detected == "confirmed" => bound(b, Some(only.clone())),
        ([only], _) => Resolution::Bind { to: only.clone() },
        (_, Some(b)) => bound(b, None),
        (many, None) => Resolution::Unresolved {
            exact: many.to_vec(),
        },
    }
}

impl Index {
    /// Every distinct cited `(path, hash)` whose path does not exist in the vault, from entries
    /// nobody retracted: distinct cited paths first (covering index), then the hashes of the few
    /// that are dead.
    pub fn dead_refs(&self) -> Result<Vec<DeadRef>, IndexError> {
        let mut stmt = self.conn.prepare(
            "SELECT DISTINCT r.path FROM entry_refs r WHERE NOT EXISTS (SELECT 1 FROM notes n WHERE n.path = r.path) AND NOT EXISTS (SELECT 1 FROM entries e JOIN retractions x ON x.retracts = e.id WHERE e.file = r.file AND e.seq = r.seq) ORDER BY r.path",
        )?;
        let paths: Vec<String> = stmt
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let mut hashes = self.conn.prepare(
            "SELECT r.hash, MAX(r.blob) FROM entry_refs r WHERE r.path = ?1 AND NOT EXISTS (SELECT 1 FROM entries e JOIN retractions x ON x.retracts = e.id WHERE e.file = r.file AND e.seq = r.seq) GROUP BY r.hash ORDER BY r.hash",
        )?;
        let mut dead = Vec::new();
        for from in paths
            .into_iter()
            .filter(|p| !exists_in_vault(&self.root, p))
        {
            let rows = hashes.query_map([&from], |r| {
                Ok(DeadRef {
                    from: from.clone(),
                    hash: r.get(0)?,
                    blob: r.get(1)?,
                })
            })?;
            for row in rows {
                dead.push(row?);
            }
        }
        Ok(dead)
    }

    /// `(bound, unresolved)` in the current projection.
    pub fn projection_counts(&self) -> Result<(usize, usize), IndexError> {
        let count = |t: &str| -> Result<usize, rusqlite::Error> {
            self.conn
                .query_row(&format!("SELECT count(*) FROM {t}"), [], |r| {
                    r.get::<_, i64>(0)
                })
                .map(|n| n as usize)
        };
        Ok((count("identity_bindings")?, count("identity_unresolved")?))
    }

    /// Current notes whose sha256 is `hash`, other than `except`, sorted by path.
    pub fn exact_candidates(&self, hash: &str, except: &str) -> Result<Vec<String>, IndexError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT path FROM notes WHERE sha256 = ?1 AND path != ?2 ORDER BY path",
        )?;
        let rows = stmt.query_map(params![hash, except], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A cached list of git candidates for `(from, blob)` computed in `state`, if any.
    pub(crate) fn cached_git_candidates(
        &self,
        from: &str,
        blob: &str,
        state: &str,
    ) -> Result<Option<Vec<Candidate>>, IndexError> {
        let json: Option<String> = self
            .conn
            .query_row("SELECT candidates FROM git_candidates WHERE from_path = ?1 AND blob = ?2 AND state = ?3", params![from, blob, state], |r| r.get(0))
            .optional()?;
        Ok(json.and_then(|j| serde_json::from_str(&j).ok()))
    }

    /// Remembers git candidates for `(from, blob)` in `state`.
    pub(crate) fn cache_git_candidates(
        &self,
        from: &str,
        blob: &str,
        state: &str,
        c: &[Candidate],
    ) -> Result<(), IndexError> {
        let json = serde_json::to_string(c).unwrap_or_default();
        self.conn.execute("INSERT OR REPLACE INTO git_candidates(from_path, blob, state, candidates) VALUES (?1, ?2, ?3, ?4)", params![from, blob, state, json])?;
        Ok(())
    }

    /// A cheap fingerprint of the indexed notes (part of the git candidate cache key).
    pub fn notes_state(&self) -> Result<String, IndexError> {
        self.table_state("notes")
    }

    /// A cheap fingerprint of the indexed notes and day files: the identity pass has nothing
    /// new to decide while it (with the ledger and HEAD) is unchanged.
    pub fn inputs_state(&self) -> Result<String, IndexError> {
        Ok(format!(
            "{}/{}",
            self.table_state("notes")?,
            self.table_state("day_files")?
        ))
    }

    fn table_state(&self, table: &str) -> Result<String, IndexError> {
        let sql = format!(
            "SELECT count(*), max(mtime_ns), sum(size), sum(mtime_ns % 1000003) FROM {table}"
        );
        let v: [Option<i64>; 4] = self.conn.query_row(&sql, [], |r| {
            Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?])
        })?;
        Ok(v.map(|x| x.unwrap_or(0).to_string()).join(":"))
    }

    /// Replaces the projection tables with `rows`.
    pub fn write_projection(&mut self, rows: &[(DeadRef, Projected)]) -> Result<(), IndexError> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        for t in [
            "identity_bindings",
            "identity_unresolved",
            "identity_candidates",
            "identity_conflicts",
        ] {
            tx.execute(&format!("DELETE FROM {t}"), [])?;
        }
        for (d, p) in rows {
            insert_projected(&tx, d, p)?;
        }
        tx.commit()?;
        Ok(())
    }
}

/// A dead ref's final state in the projection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Projected {
    Bound(BoundTo),
    Unresolved(Vec<Candidate>),
}

fn insert_projected(
    tx: &Transaction<'_>,
    d: &DeadRef,
    p: &Projected,
) -> Result<(), rusqlite::Error> {
    match p {
        Projected::Bound(b) => {
            tx.prepare_cached("INSERT OR REPLACE INTO identity_bindings(from_path, hash, to_path, detected, ts) VALUES (?1, ?2, ?3, ?4, ?5)")?
                .execute(params![d.from, d.hash, b.to, b.detected, b.ts])?;
            if let Some(c) = &b.conflict {
                tx.prepare_cached("INSERT OR REPLACE INTO identity_conflicts(from_path, hash, confirmed_to, detected_to) VALUES (?1, ?2, ?3, ?4)")?
                    .execute(params![d.from, d.hash, b.to, c])?;
            }
        }
        Projected::Unresolved(cands) => {
            let json = serde_json::to_string(cands).unwrap_or_default();
            tx.prepare_cached("INSERT OR REPLACE INTO identity_unresolved(from_path, hash, candidates) VALUES (?1, ?2, ?3)")?
                .execute(params![d.from, d.hash, json])?;
            for c in cands {
                tx.prepare_cached(
                    "INSERT INTO identity_candidates(from_path, hash, path) VALUES (?1, ?2, ?3)",
                )?
                .execute(params![d.from, d.hash, c.path])?;
            }
        }
    }
    Ok(())
}

/// `rel` is outside the vault by its spelling alone: empty, absolute, or through `..`.
pub(crate) fn outside_by_spelling(rel: &str) -> bool {
    rel.is_empty() || rel.starts_with('/') || rel.split('/').any(|s| s == "..")
}

/// Whether a vault-relative path exists and stays inside the vault (any file type counts).
pub(crate) fn exists_in_vault(root: &Path, rel: &str) -> bool {
    if outside_by_spelling(rel) {
        return false;
    }
    match std::fs::canonicalize(root.join(rel)) {
        Ok(p) => p.starts_with(root),
        Err(_) => false,
    }
}

/// Where a vault-relative path leads once its symlinks are resolved, as a vault-relative path
/// (`/`-separated), when that is inside the vault, outside `.git`, and not the path itself: a
/// symlink to a note (or a path through a linked folder) and the note it names.
pub(crate) fn linked_in_vault(root: &Path, rel: &str) -> Option<String> {
    if outside_by_spelling(rel) {
        return None;
    }
    let canonical = std::fs::canonicalize(root.join(rel)).ok()?;
    let target = canonical.strip_prefix(root).ok()?.to_str()?;
    let inside = !target.is_empty() && !target.split('/').any(|s| s.eq_ignore_ascii_case(".git"));
    (inside && target != rel).then(|| target.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::ledger::latest_bindings;

    #[test]
    fn a_link_inside_the_vault_leads_to_its_note_and_nothing_else_does() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("Notes")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join("Notes/a.md"), "a").unwrap();
        std::fs::write(root.join(".git/config"), "x").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("o.md"), "o").unwrap();
        symlink("Notes/a.md", root.join("link.md")).unwrap();
        symlink("Notes", root.join("folder")).unwrap();
        symlink(".git/config", root.join("cfg.md")).unwrap();
        symlink(outside.path().join("o.md"), root.join("out.md")).unwrap();
        symlink("nowhere.md", root.join("dangling.md")).unwrap();
        let at = |rel: &str| linked_in_vault(&root, rel);
        assert_eq!(at("link.md").as_deref(), Some("Notes/a.md"));
        assert_eq!(at("folder/a.md").as_deref(), Some("Notes/a.md"));
        for none in [
            "Notes/a.md",
            "cfg.md",
            "out.md",
            "dangling.md",
            "gone.md",
            "../x",
            "",
        ] {
            assert_eq!(at(none), None, "{none}");
        }
    }

    fn b(to: &str, detected: &str, ts: &str) -> Binding {
        Binding {
            id: ts.into(),
            from: "old.md".into(),
            to: to.into(),
            hash: "h".into(),
            detected: detected.into(),
            ts: ts.into(),
            extra: Default::default(),
        }
    }

    #[test]
    fn the_reference_rules() {
        let one = vec!["new.md".to_string()];
        assert_eq!(
            resolve(&one, None),
            Resolution::Bind {
                to: "new.md".into()
            }
        );
        let auto = b("new.md", "exact-hash", "1");
        assert!(matches!(
            resolve(&one, Some(&auto)),
            Resolution::Bound(BoundTo { conflict: None, .. })
        ));
        let confirmed = b("mine.md", "confirmed", "2");
        assert!(
            matches!(resolve(&one, Some(&confirmed)), Resolution::Bound(BoundTo { ref to, conflict: Some(ref c), .. }) if to == "mine.md" && c == "new.md")
        );
        let other_auto = b("old-target.md", "exact-hash", "1");
        assert_eq!(
            resolve(&one, Some(&other_auto)),
            Resolution::Bind {
                to: "new.md".into()
            }
        );
        let two = vec!["a.md".to_string(), "b.md".to_string()];
        assert_eq!(
            resolve(&two, None),
            Resolution::Unresolved { exact: two.clone() }
        );
        assert!(matches!(
            resolve(&two, Some(&confirmed)),
            Resolution::Bound(_)
        ));
        assert_eq!(resolve(&[], None), Resolution::Unresolved { exact: vec![] });
    }

    #[test]
    fn confirmed_bindings_are_sticky() {
        let ledger = vec![
            b("a.md", "exact-hash", "1"),
            b("mine.md", "confirmed", "2"),
            b("c.md", "exact-hash", "3"),
        ];
        let latest = latest_bindings(&ledger);
        assert_eq!(
            latest[&("old.md".to_string(), "h".to_string())].to,
            "mine.md"
        );
        let ledger = vec![
            b("mine.md", "confirmed", "2"),
            b("yours.md", "confirmed", "4"),
        ];
        assert_eq!(
            latest_bindings(&ledger)[&("old.md".to_string(), "h".to_string())].to,
            "yours.md"
        );
    }
}
