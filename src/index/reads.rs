//! The queries recall needs: recent sessions' entries, an entry by id, a ref's binding or
//! candidates, and a note's prior engagement. A retracted entry is never returned as a step or
//! an engagement.

use super::grep;
use super::identity::Candidate;
use super::{Index, IndexError};
use crate::records::filter::EntryFilter;
use crate::records::standing::Status;
use crate::records::{Entry, Step};
use rusqlite::{params, OptionalExtension};
use std::collections::{HashMap, HashSet};

/// Group keys bound in one query: far below SQLite's limit on bound values.
const KEYS_PER_QUERY: usize = 500;

/// The SQL condition that keeps an `entries` row nobody retracted.
const NOT_RETRACTED: &str =
    "NOT EXISTS (SELECT 1 FROM retractions x WHERE x.retracts = entries.id)";

/// The paths a confirmed binding to `?1` conflicts with (see [`Index::conflicts_for`]).
const CONFLICTS_FOR: &str = "SELECT DISTINCT detected_to FROM identity_conflicts WHERE confirmed_to = ?1 ORDER BY detected_to";

/// What the record cache was filled from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Records {
    /// Never filled: recall must refresh it from the record first.
    NotLoaded,
    /// Filled from the day files of a vault without a record (every entry is unverified).
    NoRecord,
    /// Filled from the record at this tip.
    Tip(String),
}

/// An entry looked up by id, with the retraction that took it back, if any.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Found {
    pub day: String,
    pub entry: Entry,
    pub status: Status,
    pub retracted_by: Option<RetractionRow>,
}

/// An honoured retraction as the index holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RetractionRow {
    pub id: String,
    pub day: String,
    pub reason: String,
    /// `committed` or `pending`.
    pub status: String,
}

/// How a dead ref is bound in the projection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bound {
    pub to: String,
    pub detected: String,
    /// For a confirmed binding: the current note that now carries the cited hash.
    pub conflict: Option<String>,
}

/// `base` and the filters given, as an SQL condition on `entries` and the values it binds. Only
/// the filters given are in the SQL (see `search`); the words are matched in SQL too, against the
/// lowercased `grep` column, so a session cap counts matches only. `words`, the rids the words
/// index names for them ([`Index::named_by_words`]), narrows the rows tested to those.
pub(super) fn entry_conditions<'a>(
    base: &str,
    project_key: Option<&'a str>,
    f: &'a EntryFilter,
    words: Option<&'a str>,
) -> (String, Vec<&'a str>) {
    let mut filter = String::from(base);
    let mut values: Vec<&str> = Vec::new();
    if let Some(q) = words {
        filter.push_str(" AND rid IN (SELECT value FROM json_each(?))");
        values.push(q);
    }
    if let Some(p) = project_key {
        filter.push_str(" AND project_key = ?");
        values.push(p);
    }
    // The day first, so the index on (day, time) prunes; then the recorded time decides.
    let (first, last) = f.day_range();
    if let (Some(day), Some(time)) = (first, &f.from) {
        filter.push_str(" AND day >= ? AND time >= ?");
        values.extend([day, time.as_str()]);
    }
    if let (Some(day), Some(time)) = (last, &f.until) {
        filter.push_str(" AND day <= ? AND time <= ?");
        values.extend([day, time.as_str()]);
    }
    if let Some(c) = &f.client {
        filter.push_str(" AND lower(json_extract(json, '$.client')) = ?");
        values.push(c);
    }
    for w in &f.words {
        filter.push_str(" AND rutter_has(grep, ?)");
        values.push(w);
    }
    (filter, values)
}

impl Index {
    /// The rids the words index names for `f`'s words ([`grep::named`]), when it is built, a
    /// word can narrow ([`grep::query`]) and it names few entries; `None` tests the entries in
    /// the order the query reads them.
    pub(super) fn named_by_words(&self, f: &EntryFilter) -> Result<Option<String>, IndexError> {
        if f.words.is_empty() || !grep::built(&self.conn)? {
            return Ok(None);
        }
        match grep::query(&f.words) {
            Some(q) => Ok(grep::named(&self.conn, &q)?),
            None => Ok(None),
        }
    }

    /// The day files (stems) `log` has to read for the entries `f` (and `project_key`) keeps,
    /// the newest `newest` of them when given: the files of every indexed entry that matches, of
    /// every line carrying one of their ids, and of the honoured retractions of them. As fresh
    /// as the record cache.
    pub(crate) fn files_for(
        &self,
        project_key: Option<&str>,
        f: &EntryFilter,
        newest: Option<usize>,
    ) -> Result<std::collections::BTreeSet<String>, IndexError> {
        let words = self.named_by_words(f)?;
        let (cond, mut values) = entry_conditions("1 = 1", project_key, f, words.as_deref());
        let limit = newest.map(|n| n.to_string());
        let tail = match &limit {
            Some(n) => {
                values.push(n);
                " ORDER BY day DESC, time DESC LIMIT ?"
            }
            None => "",
        };
        let sql = format!(
            "WITH hit(id) AS (SELECT id FROM entries WHERE {cond}{tail})
             SELECT file FROM entries WHERE id IN (SELECT id FROM hit)
             UNION SELECT file FROM retractions WHERE retracts IN (SELECT id FROM hit)"
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(values), |r| {
            r.get::<_, String>(0)
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Whether the index holds a note at `path`, as of its last refresh.
    pub(crate) fn holds_note(&self, path: &str) -> Result<bool, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT 1 FROM notes WHERE path = ?1")?;
        Ok(stmt.exists([path])?)
    }

    /// The sha256 and size of every indexed note, by path: what each note holds as of the
    /// last refresh (after the freshness check, what it holds now).
    pub(crate) fn note_hashes(
        &self,
    ) -> Result<std::collections::HashMap<String, (String, u64)>, IndexError> {
        let mut stmt = self.conn.prepare("SELECT path, sha256, size FROM notes")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                (r.get(1)?, r.get::<_, i64>(2)? as u64),
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// What the record cache holds.
    pub fn records(&self) -> Result<Records, IndexError> {
        Ok(match self.meta("records_tip")? {
            None => Records::NotLoaded,
            Some(t) if t.is_empty() => Records::NoRecord,
            Some(t) => Records::Tip(t),
        })
    }

    /// Whether any entry that was not retracted is indexed.
    pub fn has_entries(&self) -> Result<bool, IndexError> {
        let sql = format!("SELECT EXISTS(SELECT 1 FROM entries WHERE {NOT_RETRACTED})");
        Ok(self.conn.query_row(&sql, [], |r| r.get(0))?)
    }

    /// The entry with this id (the first, should a hand-made file repeat it), whether or not it
    /// was retracted.
    /// Every recorded (not unverified) entry line carrying `id`: `(day file stem, summary)`,
    /// distinct lines only (an entry two files of a day hold alike counts once). Two or more
    /// mean the id is ambiguous (a remote's line, or ids stamped before they carried the writer).
    pub fn entries_with_id(&self, id: &str) -> Result<Vec<(String, String)>, IndexError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT file, json FROM entries WHERE id = ?1 AND status != 'unverified' ORDER BY file, seq",
        )?;
        let rows = stmt.query_map([id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut out: Vec<(String, String)> = Vec::new();
        let mut lines = std::collections::HashSet::new();
        for row in rows {
            let (file, json) = row?;
            if lines.insert(json.clone()) {
                let summary = serde_json::from_str::<Entry>(&json)
                    .map(|e| e.summary)
                    .unwrap_or_default();
                out.push((file, summary));
            }
        }
        Ok(out)
    }

    pub fn entry_by_id(&self, id: &str) -> Result<Option<Found>, IndexError> {
        let row: Option<(String, String, String)> = self
            .conn
            .prepare_cached(
                "SELECT day, json, status FROM entries WHERE id = ?1 ORDER BY status = 'unverified', day, seq LIMIT 1",
            )?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?;
        let Some((day, json, status)) = row else {
            return Ok(None);
        };
        let Ok(entry) = serde_json::from_str::<Entry>(&json) else {
            return Ok(None);
        };
        let retracted_by = self
            .conn
            .prepare_cached(
                "SELECT id, day, reason, status FROM retractions WHERE retracts = ?1 ORDER BY status, day, seq LIMIT 1",
            )?
            .query_row([id], |r| {
                Ok(RetractionRow {
                    id: r.get(0)?,
                    day: r.get(1)?,
                    reason: r.get(2)?,
                    status: r.get(3)?,
                })
            })
            .optional()?;
        Ok(Some(Found {
            day,
            entry,
            status: Status::parse(&status).unwrap_or(Status::Unverified),
            retracted_by,
        }))
    }

    /// Entries matching the filters for the newest `groups` session groups (all groups when
    /// `None`), with every matching step of those groups, in file order (day file stem, then
    /// place), so steps of one day and time always sort alike.
    pub(crate) fn recent_steps(
        &self,
        project_key: Option<&str>,
        f: &EntryFilter,
        groups: Option<usize>,
    ) -> Result<Vec<Step>, IndexError> {
        let words = self.named_by_words(f)?;
        let (filter, values) = entry_conditions(NOT_RETRACTED, project_key, f, words.as_deref());
        let Some(groups) = groups else {
            // Every matching entry (`recent --all`, `timeline`): counted first, so the steps
            // are allocated once at their number rather than grown to twice it.
            let count: i64 = self.conn.query_row(
                &format!("SELECT count(*) FROM entries WHERE {filter}"),
                rusqlite::params_from_iter(&values),
                |r| r.get(0),
            )?;
            let mut steps = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
            self.steps_where(&filter, &values, &mut steps)?;
            return Ok(steps);
        };
        let keys = self.newest_groups(&filter, &values, groups)?;
        let mut steps = Vec::new();
        for chunk in keys.chunks(KEYS_PER_QUERY) {
            let marks = vec!["?"; chunk.len()].join(", ");
            let mut bound = values.clone();
            bound.extend(chunk.iter().map(String::as_str));
            self.steps_where(
                &format!("{filter} AND group_key IN ({marks})"),
                &bound,
                &mut steps,
            )?;
        }
        Ok(steps)
    }

    /// The group keys of the newest `n` session groups among the entries matching `filter`:
    /// reads entries newest first (in file order within one time, as `recent --all` streams
    /// them) and stops at the `n`-th distinct key.
    fn newest_groups(
        &self,
        filter: &str,
        values: &[&str],
        n: usize,
    ) -> Result<Vec<String>, IndexError> {
        let sql = format!(
            "SELECT group_key FROM entries WHERE {filter} ORDER BY day DESC, time DESC, file, seq"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(values))?;
        let mut seen = HashSet::new();
        let mut keys = Vec::new();
        while keys.len() < n {
            let Some(row) = rows.next()? else { break };
            let k: String = row.get(0)?;
            if seen.insert(k.clone()) {
                keys.push(k);
            }
        }
        Ok(keys)
    }

    /// Every entry matching `filter`, as steps appended to `out` (an entry whose JSON no longer
    /// parses is left out).
    fn steps_where(
        &self,
        filter: &str,
        values: &[&str],
        out: &mut Vec<Step>,
    ) -> Result<(), IndexError> {
        // In file order, so entries of one day and time keep one order whichever plan reads
        // them: `recent -n N` shows the first N sessions of what `recent --all` streams.
        let sql = format!(
            "SELECT day, json, status, file, seq FROM entries WHERE {filter} ORDER BY file, seq"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(values), |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                (r.get::<_, String>(3)?, r.get::<_, i64>(4)?),
            ))
        })?;
        let first = out.len();
        // The files of one day read as one: an entry two of them hold alike (an `@1` entry in
        // both versions a sync merge kept, spec/sync.md) is one step, with its best status.
        // Each step is known by a hash of its day and JSON, and where it was read: a step with
        // the same hash is compared with that row's JSON, read again (holding every entry's
        // JSON to compare was the largest allocation of `recent --all` and `timeline`).
        let mut seen: HashMap<u64, Vec<ReadAt>> = HashMap::new();
        for row in rows {
            let (day, json, status, at) = row?;
            let status = Status::parse(&status).unwrap_or(Status::Unverified);
            let key = day_json_hash(&day, &json);
            if let Some(same) = self.same_as(seen.get(&key), &json)? {
                if status == Status::Committed {
                    out[first + same].status = status;
                }
                continue;
            }
            if let Ok(entry) = serde_json::from_str::<Entry>(&json) {
                seen.entry(key).or_default().push((out.len() - first, at));
                out.push(Step {
                    day,
                    entry,
                    status,
                    supersede: Default::default(),
                });
            }
        }
        Ok(())
    }

    /// The step among `candidates` (same day, same hash) whose row holds exactly `json`.
    fn same_as(
        &self,
        candidates: Option<&Vec<ReadAt>>,
        json: &str,
    ) -> Result<Option<usize>, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT json FROM entries WHERE file = ?1 AND seq = ?2")?;
        for (step, (file, seq)) in candidates.into_iter().flatten() {
            let held: String = stmt.query_row(params![file, seq], |r| r.get(0))?;
            if held == json {
                return Ok(Some(*step));
            }
        }
        Ok(None)
    }

    /// The projection's binding of a dead ref.
    pub fn binding(&self, from: &str, hash: &str) -> Result<Option<Bound>, IndexError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT b.to_path, b.detected, c.detected_to FROM identity_bindings b
             LEFT JOIN identity_conflicts c ON c.from_path = b.from_path AND c.hash = b.hash
             WHERE b.from_path = ?1 AND b.hash = ?2",
        )?;
        let row = stmt
            .query_row(params![from, hash], |r| {
                Ok(Bound {
                    to: r.get(0)?,
                    detected: r.get(1)?,
                    conflict: r.get(2)?,
                })
            })
            .optional()?;
        Ok(row)
    }

    /// The projection's candidates for an unresolved ref (`None`: not in the projection).
    pub fn unresolved(&self, from: &str, hash: &str) -> Result<Option<Vec<Candidate>>, IndexError> {
        let json: Option<String> = self
            .conn
            .prepare_cached(
                "SELECT candidates FROM identity_unresolved WHERE from_path = ?1 AND hash = ?2",
            )?
            .query_row(params![from, hash], |r| r.get(0))
            .optional()?;
        Ok(json.map(|j| serde_json::from_str(&j).unwrap_or_default()))
    }

    /// Notes that now carry the hash of a ref confirmed to `path`.
    pub fn conflicts_for(&self, path: &str) -> Result<Vec<String>, IndexError> {
        let mut stmt = self.conn.prepare_cached(CONFLICTS_FOR)?;
        let rows = stmt.query_map([path], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Unresolved refs that list `path` among their candidates: `(from, candidates)`.
    pub(crate) fn unresolved_naming(
        &self,
        path: &str,
    ) -> Result<Vec<(String, Vec<Candidate>)>, IndexError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT DISTINCT u.from_path, u.candidates FROM identity_candidates c
             JOIN identity_unresolved u ON u.from_path = c.from_path AND u.hash = c.hash
             WHERE c.path = ?1 ORDER BY u.from_path",
        )?;
        let rows = stmt.query_map([path], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (from, json) = row?;
            out.push((from, serde_json::from_str(&json).unwrap_or_default()));
        }
        Ok(out)
    }
}

/// A step (its place among those read) and the row it was read from (file, seq).
type ReadAt = (usize, (String, i64));

/// A hash of an entry's day and JSON, to find the same entry held by two files of one day.
fn day_json_hash(day: &str, json: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (day, json).hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cached statement runs again with a new value bound without being compiled again:
    /// `connect` asks SQLite for one plan whatever is bound (by default SQLite 3.54 compiled
    /// this one again on every run: with the other lookups of each hit, 14 % of a warm search).
    #[test]
    fn a_cached_statement_runs_with_new_values_without_being_prepared_again() {
        let t = tempfile::tempdir().unwrap();
        crate::store::gitenv::init_repo(t.path()).unwrap();
        std::fs::write(t.path().join("a.md"), "# A\n").unwrap();
        let vault = crate::vault::open(t.path(), crate::vault::VaultSource::Flag).unwrap();
        let index = Index::open(&vault, false).unwrap();
        for path in ["a.md", "b.md", "c.md", "a.md"] {
            assert!(index.conflicts_for(path).unwrap().is_empty());
        }
        let stmt = index.conn.prepare_cached(CONFLICTS_FOR).unwrap();
        assert_eq!(stmt.get_status(rusqlite::StatementStatus::Run), 4);
        assert_eq!(stmt.get_status(rusqlite::StatementStatus::RePrepare), 0);
    }
}
