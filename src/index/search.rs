//! Full-text search and get-note over the index (anchor §9): every query term must match
//! (quoted AND terms), ranked by bm25, filters applied in SQL so a filter never returns fewer
//! than `limit` hits when more exist.

use super::snippet::SNIPPET_MAX_BYTES;
use super::{Index, IndexError};
use rusqlite::OptionalExtension;
use serde::Serialize;

/// What the index shows of a note besides its text: shared by search hits and get-note.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct NoteHead {
    pub path: String,
    pub title: String,
    #[serde(rename = "type")]
    pub note_type: String,
    pub status: String,
    pub created: String,
}

impl NoteHead {
    /// The columns a query lists first: `path, title, type, status, created`.
    pub(super) fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<NoteHead> {
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
pub(crate) struct Hit {
    #[serde(flatten)]
    pub head: NoteHead,
    pub snippet: String,
}

/// Exact-match filters on note metadata.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filters {
    pub note_type: Option<String>,
    pub status: Option<String>,
    pub domain: Option<String>,
}

/// One note as the index holds it (get-note).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Note {
    #[serde(flatten)]
    pub head: NoteHead,
    pub body: String,
}

/// Most words of a query that are searched; the rest is left out.
pub(crate) const QUERY_MAX_TERMS: usize = 32;
/// Most bytes of a query that are read (cut at a character boundary); the rest is left out.
pub(crate) const QUERY_MAX_BYTES: usize = 4096;

/// Whether `c` separates query words: whitespace, and control characters (NUL among them),
/// which FTS5's tokenizer never keeps inside a word anyway.
fn separates(c: char) -> bool {
    c.is_whitespace() || c.is_control()
}

/// The part of raw user text a search reads: its first [`QUERY_MAX_BYTES`] bytes, and of those
/// its first [`QUERY_MAX_TERMS`] words. FTS5 spends time that grows faster than linearly in the
/// number of AND terms (a 200 KB query took minutes), and no real question needs more, so any
/// text is answered in milliseconds.
pub(crate) fn searched_part(raw: &str) -> &str {
    let mut end = raw.len().min(QUERY_MAX_BYTES);
    while !raw.is_char_boundary(end) {
        end -= 1;
    }
    let head = &raw[..end];
    let mut words = 0;
    let mut in_word = false;
    for (i, c) in head.char_indices() {
        let sep = separates(c);
        if !sep && !in_word {
            words += 1;
            if words > QUERY_MAX_TERMS {
                return head[..i].trim_end_matches(separates);
            }
        }
        in_word = !sep;
    }
    head
}

/// The FTS5 query of [`query_terms`]: each term quoted, all of them required, one phrase per
/// term in order (the ranking's cache reads phrase `i` as term `i`: [`super::rank`]); `None`
/// for no term. Quoting makes every other character (`NEAR(`, `+`, `'`, SQL) plain text; a NUL
/// would end FTS5's string early, so it only separates words.
fn match_of(terms: &[String]) -> Option<String> {
    (!terms.is_empty()).then(|| quoted(terms).join(" "))
}

/// The words of raw user text a search looks for: its [`searched_part`], lowercased, split on
/// whitespace and control characters, each word once, empty ones left out. Inside a word the
/// characters `" * ( ) : ^ -` separate its parts (`follow-up` is `follow up`): quoted, such a
/// word is a phrase whose parts are the tokens the index holds for it, since the tokenizer
/// splits on them too (the reference removed them, so `follow-up` could never match).
pub(crate) fn query_terms(raw: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for t in searched_part(raw).to_lowercase().split(separates) {
        let parts = t.split(['"', '*', '(', ')', ':', '^', '-']);
        let t = parts
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        if !t.is_empty() && !terms.contains(&t) {
            terms.push(t);
        }
    }
    terms
}

/// The snippet column of a search over `notes n`: FTS5's `snippet()` for a note of at most
/// [`SNIPPET_MAX_BYTES`], `NULL` for a larger one ([`Index::snippet`] makes its own).
pub(super) fn snippet_column() -> String {
    format!(
        "CASE WHEN n.size <= {SNIPPET_MAX_BYTES} THEN snippet(notes_fts, 2, '«', '»', '…', 14) END"
    )
}

fn quoted(terms: &[String]) -> Vec<String> {
    terms.iter().map(|t| format!("\"{t}\"")).collect()
}

impl Index {
    /// Ranked hits for `query`, at most `limit`, filters applied in SQL. Ordering by the `rank`
    /// column (bm25, with its counts cached: [`super::rank`]) lets FTS5 return rows already sorted, so SQLite stops after `limit` rows
    /// and makes snippets for those alone.
    pub fn search(&self, query: &str, limit: usize, f: &Filters) -> Result<Vec<Hit>, IndexError> {
        let terms = query_terms(query);
        let Some(q) = match_of(&terms) else {
            return Ok(vec![]);
        };
        // Only the filters given are in the SQL: `(?2 IS NULL OR …)` would make SQLite
        // re-prepare the statement once the values are bound.
        let (filters, filter_values) = super::partial::filter_clause(f);
        let sql = format!(
            "SELECT n.path, n.title, n.type, n.status, n.created, {}, n.id
             FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid
             WHERE notes_fts MATCH ? AND {}{filters} ORDER BY rank LIMIT {limit}",
            snippet_column(),
            super::rank::RANKED_BY,
        );
        let mut values: Vec<&str> = vec![&q];
        values.extend(filter_values);
        let rows: Vec<(NoteHead, Option<String>, i64)> =
            super::rank::with_counts(self, &terms, || {
                let mut stmt = self.conn.prepare_cached(&sql)?;
                let rows = stmt.query_map(rusqlite::params_from_iter(values), |r| {
                    Ok((NoteHead::from_row(r)?, r.get(5)?, r.get(6)?))
                })?;
                Ok(rows.collect::<Result<_, _>>()?)
            })?;
        rows.into_iter()
            .map(|(head, snippet, id)| {
                let snippet = self.snippet(snippet, id, &terms)?;
                Ok(Hit { head, snippet })
            })
            .collect()
    }

    /// A hit's snippet: FTS5's (`snippet`, from the query's [`snippet_column`]), or for a note
    /// larger than [`SNIPPET_MAX_BYTES`] (`None` there) one made from its text
    /// ([`super::snippet::of_large`]); runs of whitespace folded to one space.
    pub(super) fn snippet(
        &self,
        snippet: Option<String>,
        id: i64,
        terms: &[String],
    ) -> Result<String, IndexError> {
        let snippet = match snippet {
            Some(s) => s,
            None => {
                let body: String = self
                    .conn
                    .prepare_cached("SELECT body FROM notes_fts WHERE rowid = ?1")?
                    .query_row([id], |r| r.get(0))?;
                super::snippet::of_large(&body, terms)
            }
        };
        Ok(snippet.split_whitespace().collect::<Vec<_>>().join(" "))
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

    /// The FTS5 query for raw user text.
    fn fts_query(raw: &str) -> Option<String> {
        match_of(&query_terms(raw))
    }

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
            fts_query("a:b NEAR(x) \"q\" ^s* -n follow-up").as_deref(),
            Some("\"a b\" \"near x\" \"q\" \"s\" \"n\" \"follow up\"")
        );
        assert_eq!(fts_query("  -- ** () "), None);
        assert_eq!(
            fts_query("alpha\0beta\u{1}gamma").as_deref(),
            Some("\"alpha\" \"beta\" \"gamma\"")
        );
        assert_eq!(
            fts_query("o'brien; DROP TABLE notes").as_deref(),
            Some("\"o'brien;\" \"drop\" \"table\" \"notes\"")
        );
    }

    #[test]
    fn long_queries_are_cut_to_their_first_words_and_bytes() {
        let words: Vec<String> = (0..100).map(|i| format!("w{i}")).collect();
        let all = words.join("  ");
        assert_eq!(searched_part(&all), words[..QUERY_MAX_TERMS].join("  "));
        let long = "é".repeat(QUERY_MAX_BYTES);
        assert_eq!(searched_part(&long).len(), QUERY_MAX_BYTES);
        let odd = format!("a{}", "é".repeat(QUERY_MAX_BYTES));
        assert_eq!(searched_part(&odd).len(), QUERY_MAX_BYTES - 1);
        assert_eq!(searched_part(" a b "), " a b ");
    }

    proptest::proptest! {
        /// Any text gives a bounded query of quoted terms FTS5 can parse: no NUL, no quote
        /// inside a term, at most QUERY_MAX_TERMS terms; the searched part is a prefix.
        #[test]
        fn any_text_gives_a_bounded_well_quoted_query(raw in "\\PC{0,300}|[\\x00-\\x7f]{0,300}") {
            let part = searched_part(&raw);
            proptest::prop_assert!(raw.starts_with(part));
            proptest::prop_assert!(part.len() <= QUERY_MAX_BYTES);
            if let Some(q) = fts_query(&raw) {
                proptest::prop_assert!(!q.contains('\0'));
                proptest::prop_assert!(q.len() >= 3 && q.starts_with('"') && q.ends_with('"'));
                // Quoted terms (a phrase's parts inside one pair of quotes) joined by spaces.
                let terms: Vec<&str> = q[1..q.len() - 1].split("\" \"").collect();
                proptest::prop_assert!(terms.len() <= QUERY_MAX_TERMS);
                for t in terms {
                    proptest::prop_assert!(!t.is_empty() && !t.contains('"'));
                    proptest::prop_assert!(!t.starts_with(' ') && !t.ends_with(' '));
                }
            }
        }
    }
}
