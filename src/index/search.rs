//! Full-text search and get-note over the index (anchor §9): every query term must match
//! (quoted AND terms), ranked by bm25, filters applied in SQL so a filter never returns fewer
//! than `limit` hits when more exist.

use super::{Index, IndexError};
use rusqlite::OptionalExtension;
use serde::Serialize;

/// What the index shows of a note besides its text: shared by search hits and get-note.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoteHead {
    pub path: String,
    pub title: String,
    #[serde(rename = "type")]
    pub note_type: String,
    pub status: String,
    pub created: String,
}

impl NoteHead {
    /// The columns a query lists first: `path, title, type, status, created`.
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<NoteHead> {
        Ok(NoteHead {
            path: r.get(0)?,
            title: r.get(1)?,
            note_type: r.get(2)?,
            status: r.get(3)?,
            created: r.get(4)?,
        })
    }
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    #[serde(flatten)]
    pub head: NoteHead,
    pub snippet: String,
}

/// Exact-match filters on note metadata.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub note_type: Option<String>,
    pub status: Option<String>,
    pub domain: Option<String>,
}

/// One note as the index holds it (get-note).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Note {
    #[serde(flatten)]
    pub head: NoteHead,
    pub body: String,
}

/// The FTS5 query for raw user text: lowercased, split on whitespace, the characters
/// `" * ( ) : ^ -` removed from each token, each remaining token quoted; `None` when nothing is
/// left. Quoting makes every other character (`NEAR(`, `+`, `'`, SQL) plain text.
pub fn fts_query(raw: &str) -> Option<String> {
    let terms: Vec<String> = raw
        .to_lowercase()
        .split_whitespace()
        .map(|t| {
            t.chars()
                .filter(|c| !matches!(c, '"' | '*' | '(' | ')' | ':' | '^' | '-'))
                .collect::<String>()
        })
        .filter(|t| !t.is_empty())
        .map(|t| format!("\"{t}\""))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" "))
}

impl Index {
    /// Ranked hits for `query`, at most `limit`, filters applied in SQL. Ordering by the `rank`
    /// column (bm25) lets FTS5 return rows already sorted, so SQLite stops after `limit` rows
    /// and makes snippets for those alone.
    pub fn search(&self, query: &str, limit: usize, f: &Filters) -> Result<Vec<Hit>, IndexError> {
        let Some(q) = fts_query(query) else {
            return Ok(vec![]);
        };
        // Only the filters given are in the SQL: `(?2 IS NULL OR …)` would make SQLite
        // re-prepare the statement once the values are bound.
        let mut sql = String::from(
            "SELECT n.path, n.title, n.type, n.status, n.created, snippet(notes_fts, 2, '«', '»', '…', 14)
             FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid WHERE notes_fts MATCH ?",
        );
        let mut values: Vec<&str> = vec![&q];
        for (column, value) in [
            ("type", &f.note_type),
            ("status", &f.status),
            ("domain", &f.domain),
        ] {
            if let Some(v) = value {
                sql.push_str(&format!(" AND n.{column} = ?"));
                values.push(v);
            }
        }
        sql.push_str(&format!(" ORDER BY rank LIMIT {limit}"));
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(values), |r| {
            let snippet: String = r.get(5)?;
            Ok(Hit {
                head: NoteHead::from_row(r)?,
                snippet: snippet.split_whitespace().collect::<Vec<_>>().join(" "),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The indexed note at exactly `path`; only indexed notes can be read this way.
    pub fn note(&self, path: &str) -> Result<Option<Note>, IndexError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT n.path, n.title, n.type, n.status, n.created, f.body
             FROM notes n JOIN notes_fts f ON f.rowid = n.id WHERE n.path = ?1",
        )?;
        let note = stmt
            .query_row([path], |r| {
                Ok(Note {
                    head: NoteHead::from_row(r)?,
                    body: r.get(5)?,
                })
            })
            .optional()?;
        Ok(note)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_and_notes_serialise_flat_in_column_order() {
        let head = NoteHead {
            path: "a.md".into(),
            title: "A".into(),
            note_type: "note".into(),
            status: "draft".into(),
            created: "2026-11-30".into(),
        };
        let hit = Hit {
            head: head.clone(),
            snippet: "«a»".into(),
        };
        let note = Note {
            head,
            body: "text".into(),
        };
        let fields =
            r#""path":"a.md","title":"A","type":"note","status":"draft","created":"2026-11-30""#;
        assert_eq!(
            serde_json::to_string(&hit).unwrap(),
            format!(r#"{{{fields},"snippet":"«a»"}}"#)
        );
        assert_eq!(
            serde_json::to_string(&note).unwrap(),
            format!(r#"{{{fields},"body":"text"}}"#)
        );
    }

    #[test]
    fn queries_are_quoted_and_terms() {
        assert_eq!(
            fts_query("Blue MAN group").as_deref(),
            Some("\"blue\" \"man\" \"group\"")
        );
        assert_eq!(
            fts_query("a:b NEAR(x) \"q\" ^s* -n").as_deref(),
            Some("\"ab\" \"nearx\" \"q\" \"s\" \"n\"")
        );
        assert_eq!(fts_query("  -- ** () "), None);
        assert_eq!(
            fts_query("o'brien; DROP TABLE notes").as_deref(),
            Some("\"o'brien;\" \"drop\" \"table\" \"notes\"")
        );
    }
}
