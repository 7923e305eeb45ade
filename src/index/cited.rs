//! Reverse lookup: the recorded decisions that cited a note, under its own path or under a path
//! the identity projection binds to it (a note renamed since), for `cited-by`, get-note's block
//! and the pre-commit hook's line. Retracted entries are left out, as recall leaves them out.

use super::{Index, IndexError};
use crate::records::standing::Status;
use crate::records::{Entry, NoteRef, Step};
use rusqlite::{params, OptionalExtension};
use std::collections::HashMap;

/// The condition that keeps an `entry_refs` row (`r`) whose entry (`e`) nobody retracted.
const ALIVE: &str = "NOT EXISTS (SELECT 1 FROM retractions x WHERE x.retracts = e.id)";

/// One decision that cited the note: the entry as the record holds it, and the ref it cited.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Citation {
    pub step: Step,
    /// The path, hash and blob the entry recorded: the note's own path, or one that is bound to
    /// it now.
    pub cited: NoteRef,
}

/// An entry that cited a note, as search's prior-engagement line shows it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Engaged {
    pub day: String,
    pub id: String,
    pub summary: String,
    pub status: Status,
}

/// The entries that cited a note, as search's prior-engagement line counts and shows them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Engagements {
    /// How many entries nobody retracted cited the note.
    pub total: usize,
    /// The newest of them (at most [`ENGAGED_SUMMARIES`]), newest first.
    pub newest: Vec<Engaged>,
}

/// How many of a note's newest citing entries search reads, to pick the one closest to the
/// query; the rest are only counted.
pub(crate) const ENGAGED_SUMMARIES: usize = 8;

/// What the index holds of a path that is no note.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NoNote {
    /// The notes the projection binds the path to (it was renamed), sorted.
    pub bound_to: Vec<String>,
    /// Whether an entry nobody retracted cited the path.
    pub cited: bool,
}

impl Index {
    /// The sha256 (`sha256:<hex>`) of the indexed note at `path`, if there is one.
    pub(crate) fn note_sha256(&self, path: &str) -> Result<Option<String>, IndexError> {
        Ok(self
            .conn
            .prepare_cached("SELECT sha256 FROM notes WHERE path = ?1")?
            .query_row([path], |r| r.get(0))
            .optional()?)
    }

    /// Every entry nobody retracted that cited `path`, directly or through a binding of the
    /// projection, newest first (the day, then the recorded time; file order within one
    /// instant). An entry is listed once: two files of a day holding it alike are one entry
    /// (its best status kept, as recall keeps it), and an entry citing the note twice shows
    /// the citation under the note's own path when it has one.
    /// `aliases` are paths that lead to the note now (a symlink to it): what cited them counts.
    pub(crate) fn citations(
        &self,
        path: &str,
        aliases: &[String],
    ) -> Result<Vec<Citation>, IndexError> {
        let mut sources: Vec<(String, Option<String>)> = vec![(path.to_string(), None)];
        sources.extend(aliases.iter().map(|a| (a.clone(), None)));
        let mut bound = self.conn.prepare_cached(
            "SELECT from_path, hash FROM identity_bindings WHERE to_path = ?1 ORDER BY from_path, hash",
        )?;
        for row in bound.query_map([path], |r| Ok((r.get(0)?, Some(r.get(1)?))))? {
            sources.push(row?);
        }
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT r.path, r.hash, r.blob, e.day, e.json, e.status, e.time, e.file, e.seq
             FROM entry_refs r JOIN entries e ON e.file = r.file AND e.seq = r.seq
             WHERE r.path = ?1 AND r.hash = coalesce(?2, r.hash) AND {ALIVE}"
        ))?;
        // (day, time, file, seq) to order by, then the citation.
        type Row = ((String, String, String, i64), Citation);
        let mut rows: Vec<Row> = Vec::new();
        for (p, h) in &sources {
            let found = stmt.query_map(params![p, h], |r| {
                Ok((
                    NoteRef::new(
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, Option<String>>(2)?,
                    ),
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    (r.get::<_, String>(6)?, r.get::<_, String>(7)?, r.get(8)?),
                ))
            })?;
            for row in found {
                let (cited, day, json, status, (time, file, seq)) = row?;
                let Ok(entry) = serde_json::from_str::<Entry>(&json) else {
                    continue;
                };
                let status = Status::parse(&status).unwrap_or(Status::Unverified);
                let step = Step {
                    day,
                    entry,
                    status,
                    supersede: Default::default(),
                };
                rows.push((
                    (step.day.clone(), time, file, seq),
                    Citation { step, cited },
                ));
            }
        }
        rows.sort_by(|(a, _), (b, _)| {
            (&b.0, &b.1)
                .cmp(&(&a.0, &a.1))
                .then(a.2.cmp(&b.2))
                .then(a.3.cmp(&b.3))
        });
        Ok(distinct(rows.into_iter().map(|(_, c)| c), path))
    }

    /// What search's prior-engagement line needs of the entries nobody retracted that cited
    /// `path` (as [`Index::citations`] finds them): how many there are, and the newest
    /// [`ENGAGED_SUMMARIES`] of them (day, id, summary, status), newest first. The count and the
    /// newest refs come from the refs' covering index; only those few entries are read, so a
    /// note hundreds of decisions cited costs a search no more than one a few did.
    pub(crate) fn engagements(&self, path: &str) -> Result<Engagements, IndexError> {
        let mut sources: Vec<(String, Option<String>)> = vec![(path.to_string(), None)];
        let mut bound = self
            .conn
            .prepare_cached("SELECT from_path, hash FROM identity_bindings WHERE to_path = ?1")?;
        for row in bound.query_map([path], |r| Ok((r.get(0)?, Some(r.get(1)?))))? {
            sources.push(row?);
        }
        let mut total = 0usize;
        let mut candidates: Vec<(String, String, i64)> = Vec::new();
        for (p, h) in &sources {
            total += self.count_alive_refs(p, h.as_deref())?;
            let mut newest = self.conn.prepare_cached(
                "SELECT r.day, r.file, r.seq FROM entry_refs r
                 WHERE r.path = ?1 AND r.hash = coalesce(?2, r.hash) ORDER BY r.day DESC LIMIT ?3",
            )?;
            let limit = (ENGAGED_SUMMARIES * 3) as i64;
            for row in newest.query_map(params![p, h, limit], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })? {
                candidates.push(row?);
            }
        }
        candidates.sort_by(|a, b| b.0.cmp(&a.0));
        let mut entry = self.conn.prepare_cached(&format!(
            "SELECT e.time, e.id, json_extract(e.json, '$.summary'), e.status
             FROM entries e WHERE e.file = ?1 AND e.seq = ?2 AND {ALIVE}"
        ))?;
        let mut found: Vec<(String, Engaged)> = Vec::new();
        for (day, file, seq) in candidates {
            if found.len() == ENGAGED_SUMMARIES {
                break;
            }
            let row = entry
                .query_row(params![file, seq], |r| {
                    let status: String = r.get(3)?;
                    Ok((
                        r.get::<_, String>(0)?,
                        Engaged {
                            day: day.clone(),
                            id: r.get(1)?,
                            summary: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                            status: Status::parse(&status).unwrap_or(Status::Unverified),
                        },
                    ))
                })
                .optional()?;
            if let Some((time, e)) = row {
                if !found.iter().any(|(_, f)| f.day == e.day && f.id == e.id) {
                    found.push((time, e));
                }
            }
        }
        found.sort_by(|(ta, a), (tb, b)| (&b.day, tb).cmp(&(&a.day, ta)));
        Ok(Engagements {
            total: total.max(found.len()),
            newest: found.into_iter().map(|(_, e)| e).collect(),
        })
    }

    /// How many refs to `path` (with `hash`, when given) entries nobody retracted hold: the
    /// refs counted on their covering index, the retracted ones (few) found from the
    /// retractions.
    fn count_alive_refs(&self, path: &str, hash: Option<&str>) -> Result<usize, IndexError> {
        let all: i64 = self
            .conn
            .prepare_cached(
                "SELECT count(*) FROM entry_refs r WHERE r.path = ?1 AND r.hash = coalesce(?2, r.hash)",
            )?
            .query_row(params![path, hash], |r| r.get(0))?;
        let retracted: i64 = self
            .conn
            .prepare_cached(
                "SELECT count(*) FROM retractions x CROSS JOIN entries e CROSS JOIN entry_refs r
                 WHERE e.id = x.retracts AND r.file = e.file AND r.seq = e.seq
                 AND r.path = ?1 AND r.hash = coalesce(?2, r.hash)",
            )?
            .query_row(params![path, hash], |r| r.get(0))?;
        Ok(usize::try_from(all - retracted).unwrap_or(0))
    }

    /// What the index knows of `path` when it is no note: where the projection binds it, and
    /// whether a decision cited it.
    pub(crate) fn no_note(&self, path: &str) -> Result<NoNote, IndexError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT DISTINCT to_path FROM identity_bindings WHERE from_path = ?1 ORDER BY to_path",
        )?;
        let bound_to = stmt
            .query_map([path], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let cited = self
            .conn
            .prepare_cached(&format!(
                "SELECT EXISTS(SELECT 1 FROM entry_refs r JOIN entries e ON e.file = r.file AND e.seq = r.seq WHERE r.path = ?1 AND {ALIVE})"
            ))?
            .query_row([path], |r| r.get(0))?;
        Ok(NoNote { bound_to, cited })
    }
}

/// `found` (newest first) with each entry once: the same entry line in two files of a day is
/// one entry, committed if either copy is, and an entry that cited the note under two paths is
/// listed under `path`, the note's own, when it cited that.
fn distinct(found: impl Iterator<Item = Citation>, path: &str) -> Vec<Citation> {
    let mut out: Vec<Citation> = Vec::new();
    let mut at: HashMap<(String, String), usize> = HashMap::new();
    for c in found {
        let key = (c.step.day.clone(), c.step.entry.id.clone());
        let Some(&i) = at.get(&key) else {
            at.insert(key, out.len());
            out.push(c);
            continue;
        };
        let kept = &mut out[i];
        if kept.step.entry != c.step.entry {
            // Another line with the same id (a hand-made file): an entry of its own.
            out.push(c);
            continue;
        }
        if c.step.status == Status::Committed {
            kept.step.status = Status::Committed;
        }
        if kept.cited.path != path && c.cited.path == path {
            kept.cited = c.cited;
        }
    }
    out
}

/// What the index says of the paths a commit changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CitedAmong {
    /// The paths that decisions nobody retracted cited, directly or as a binding's target.
    pub paths: Vec<String>,
    /// The record tip the record cache was read at (`None`: never read, or no record).
    pub records_tip: Option<String>,
}

/// [`CitedAmong`] for `paths`, read from the vault's index as it stands: never built, never
/// refreshed, never written (the pre-commit hook asks, and a commit must not wait for it); one
/// indexed lookup per path (about 12 µs on the 10,000-note vault). `None` when there is no
/// current index of this vault to ask.
pub(crate) fn cited_among(
    vault: &crate::vault::Vault,
    paths: &[String],
) -> Result<Option<CitedAmong>, IndexError> {
    let Some(conn) = super::complete::open(vault) else {
        return Ok(None);
    };
    let records_tip: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'records_tip'",
            [],
            |r| r.get(0),
        )
        .optional()?
        .filter(|t: &String| !t.is_empty());
    let mut stmt = conn.prepare(&format!(
        "SELECT EXISTS(SELECT 1 FROM entry_refs r JOIN entries e ON e.file = r.file AND e.seq = r.seq WHERE r.path = ?1 AND {ALIVE})
             OR EXISTS(SELECT 1 FROM identity_bindings WHERE to_path = ?1)"
    ))?;
    let mut cited = Vec::new();
    for p in paths {
        if stmt.query_row([p], |r| r.get::<_, bool>(0))? {
            cited.push(p.clone());
        }
    }
    Ok(Some(CitedAmong {
        paths: cited,
        records_tip,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::fingerprint;

    fn vault_with(day: &str, lines: &[String]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let sessions = t.path().join("_librarian/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        let mut text = crate::records::dayfile::header(day);
        for l in lines {
            text.push_str(l);
            text.push('\n');
        }
        std::fs::write(sessions.join(format!("{day}.md")), text).unwrap();
        t
    }

    fn line(id: &str, time: &str, summary: &str, refs: &[(&str, &str)]) -> String {
        let e = Entry {
            id: id.into(),
            session_id: Some("S".into()),
            time: time.into(),
            summary: summary.into(),
            refs: refs
                .iter()
                .map(|(p, h)| NoteRef::new(*p, *h, None))
                .collect(),
            workspace: None,
            client: None,
            supersedes: None,
            extra: Default::default(),
        };
        crate::records::line::render(&e)
    }

    #[test]
    fn citations_are_newest_first_through_bindings_once_each_and_never_retracted() {
        let a = fingerprint::sha256_ref(b"a\n");
        let t = vault_with(
            "2026-11-30",
            &[
                line(
                    "20261130T100000000Z",
                    "2026-11-30T10:00:00.000Z",
                    "Old.",
                    &[("a.md", &a)],
                ),
                line(
                    "20261130T110000000Z",
                    "2026-11-30T11:00:00.000Z",
                    "Both.",
                    &[("gone.md", "sha256:01"), ("a.md", &a)],
                ),
                line(
                    "20261130T120000000Z",
                    "2026-11-30T12:00:00.000Z",
                    "Moved.",
                    &[("gone.md", "sha256:01")],
                ),
                line(
                    "20261130T130000000Z",
                    "2026-11-30T13:00:00.000Z",
                    "Other.",
                    &[("b.md", "sha256:02")],
                ),
            ],
        );
        std::fs::write(t.path().join("a.md"), "a\n").unwrap();
        let index = Index::in_memory(t.path());
        index
            .conn
            .execute(
                "INSERT INTO identity_bindings VALUES ('gone.md', 'sha256:01', 'a.md', 'confirmed', 't')",
                [],
            )
            .unwrap();
        let got = index.citations("a.md", &[]).unwrap();
        let seen: Vec<(&str, &str)> = got
            .iter()
            .map(|c| (c.step.entry.summary.as_str(), c.cited.path.as_str()))
            .collect();
        assert_eq!(
            seen,
            [("Moved.", "gone.md"), ("Both.", "a.md"), ("Old.", "a.md")]
        );
        assert_eq!(index.note_sha256("a.md").unwrap(), Some(a));
        assert_eq!(index.note_sha256("gone.md").unwrap(), None);
        assert_eq!(
            index.no_note("gone.md").unwrap(),
            NoNote {
                bound_to: vec!["a.md".into()],
                cited: true
            }
        );
        assert_eq!(
            index.no_note("b.md").unwrap().bound_to,
            Vec::<String>::new()
        );
        index
            .conn
            .execute(
                "INSERT INTO retractions VALUES ('2026-11-30', '2026-11-30', 9, 'r', '20261130T120000000Z', 't', 'why', 'committed')",
                [],
            )
            .unwrap();
        let got = index.citations("a.md", &[]).unwrap();
        assert_eq!(got.len(), 2, "a retracted entry is left out");
        assert!(index.citations("nothing.md", &[]).unwrap().is_empty());
    }
}
