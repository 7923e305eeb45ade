//! The search that answers when no note holds every word of a query (spec/index.md, "Some of
//! the words"): the notes that hold most of its words, ranked by how many they hold, then by
//! bm25 over all the words, each hit naming the words it holds. There is no model inside: the
//! client is the brain, and this gives it something to read and a reason to ask again in other
//! words.

use super::search::{query_terms, Filters, Hit, NoteHead};
use super::{Index, IndexError};
use rusqlite::OptionalExtension;
use std::collections::HashMap;

/// A hit that holds some of the query's words.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PartialHit {
    pub hit: Hit,
    /// The query's words this note holds, in the query's order.
    pub words: Vec<String>,
}

/// What the notes hold of a query none holds whole.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Partial {
    /// The query's words, in order.
    pub words: Vec<String>,
    /// The words no note holds (after the filters).
    pub missing: Vec<String>,
    /// How many notes hold at least one word (after the filters).
    pub notes: usize,
    /// The best of them, at most the limit asked for.
    pub hits: Vec<PartialHit>,
}

/// The FTS5 phrase of one word, quoted as the AND query quotes it.
fn phrase(word: &str) -> String {
    format!("\"{word}\"")
}

impl Index {
    /// The notes that hold some of `query`'s words, when it has two or more: for each word the
    /// notes that hold it (one posting-list read a word), then bm25 over the OR of all words
    /// for the ones kept, then the snippets of the `limit` shown. `None` for a query of fewer
    /// than two words (nothing between all and none).
    pub fn search_some(
        &self,
        query: &str,
        limit: usize,
        f: &Filters,
    ) -> Result<Option<Partial>, IndexError> {
        let words = query_terms(query);
        if words.len() < 2 {
            return Ok(None);
        }
        let any = words
            .iter()
            .map(|w| phrase(w))
            .collect::<Vec<_>>()
            .join(" OR ");
        let held = self.words_held(&words, &any, f)?;
        let mut ranked: Vec<(i64, u32, f64)> = held
            .iter()
            .map(|(&id, &(mask, rank))| (id, mask, rank))
            .collect();
        // Most words first, then bm25 (lower is better), then the note's id for a stable order.
        ranked.sort_by(|a, b| {
            (b.1.count_ones().cmp(&a.1.count_ones()))
                .then(a.2.total_cmp(&b.2))
                .then(a.0.cmp(&b.0))
        });
        let union = held.values().fold(0u32, |m, (mask, _)| m | mask);
        let mut partial = Partial {
            missing: (0..words.len())
                .filter(|i| union & (1 << i) == 0)
                .map(|i| words[i].clone())
                .collect(),
            notes: held.len(),
            hits: Vec::new(),
            words,
        };
        for (id, mask, _) in ranked.into_iter().take(limit) {
            let hit = self.partial_hit(id, &any, &partial.words)?;
            let words = (0..partial.words.len())
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| partial.words[i].clone())
                .collect();
            partial
                .hits
                .extend(hit.map(|hit| PartialHit { hit, words }));
        }
        Ok(Some(partial))
    }

    /// Each note that holds a word of `words` (the filters applied): which words, as a bit mask
    /// in the words' order, and its bm25 rank for the OR query `any`.
    fn words_held(
        &self,
        words: &[String],
        any: &str,
        f: &Filters,
    ) -> Result<HashMap<i64, (u32, f64)>, IndexError> {
        let (filter_sql, values) = filter_clause(f);
        let mut held: HashMap<i64, (u32, f64)> = HashMap::new();
        let mut ranks = self.conn.prepare_cached(&format!(
            "SELECT notes_fts.rowid, rank FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid \
             WHERE notes_fts MATCH ?{filter_sql}"
        ))?;
        let mut bind: Vec<&str> = vec![any];
        bind.extend(values.iter().copied());
        let rows = ranks.query_map(rusqlite::params_from_iter(&bind), |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?))
        })?;
        for row in rows {
            let (id, rank) = row?;
            held.insert(id, (0, rank));
        }
        let mut one = self
            .conn
            .prepare_cached("SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?")?;
        for (i, w) in words.iter().enumerate() {
            let ids = one.query_map([phrase(w)], |r| r.get::<_, i64>(0))?;
            for id in ids {
                if let Some((mask, _)) = held.get_mut(&id?) {
                    *mask |= 1 << i;
                }
            }
        }
        Ok(held)
    }

    /// The hit of note `id` for the OR query `any` of `words`, with its snippet.
    fn partial_hit(&self, id: i64, any: &str, words: &[String]) -> Result<Option<Hit>, IndexError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT n.path, n.title, n.type, n.status, n.created, {}
             FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid
             WHERE notes_fts MATCH ?1 AND notes_fts.rowid = ?2",
            super::search::snippet_column()
        ))?;
        let row = stmt
            .query_row(rusqlite::params![any, id], |r| {
                Ok((NoteHead::from_row(r)?, r.get::<_, Option<String>>(5)?))
            })
            .optional()?;
        row.map(|(head, snippet)| {
            let snippet = self.snippet(snippet, id, words)?;
            Ok(Hit { head, snippet })
        })
        .transpose()
    }
}

/// The filters given as SQL on `notes n` (` AND n.type = ?` …) and the values they bind: only
/// the filters given are in the SQL, so a statement is never prepared again for a `NULL`.
pub(crate) fn filter_clause(f: &Filters) -> (String, Vec<&str>) {
    let mut sql = String::new();
    let mut values = Vec::new();
    for (column, value) in [
        ("type", &f.note_type),
        ("status", &f.status),
        ("domain", &f.domain),
    ] {
        if let Some(v) = value {
            sql.push_str(&format!(" AND n.{column} = ?"));
            values.push(v.as_str());
        }
    }
    (sql, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_with(notes: &[(&str, &str)]) -> (tempfile::TempDir, Index) {
        let t = tempfile::tempdir().unwrap();
        for (path, body) in notes {
            std::fs::write(t.path().join(path), body).unwrap();
        }
        let index = Index::in_memory(t.path());
        (t, index)
    }

    #[test]
    fn most_words_first_then_bm25_each_hit_naming_its_words() {
        let (_t, index) = index_with(&[
            ("email.md", "# Email provider\n\nThe newsletter moves from Mailchimp to Buttondown; a mailing service with plain text.\n"),
            ("news.md", "# Newsletter\n\nThe newsletter goes out fortnightly.\n"),
            ("garden.md", "# Garden\n\nBeans in bed four.\n"),
        ]);
        assert!(index
            .search("newsletter mailing platform", 10, &Filters::default())
            .unwrap()
            .is_empty());
        let p = index
            .search_some("newsletter mailing platform", 10, &Filters::default())
            .unwrap()
            .unwrap();
        assert_eq!(p.words, ["newsletter", "mailing", "platform"]);
        assert_eq!(p.missing, ["platform"]);
        assert_eq!(p.notes, 2);
        let shown: Vec<_> = p
            .hits
            .iter()
            .map(|h| (h.hit.head.path.as_str(), h.words.join(" ")))
            .collect();
        assert_eq!(
            shown,
            [
                ("email.md", "newsletter mailing".to_string()),
                ("news.md", "newsletter".to_string())
            ]
        );
        assert!(p.hits[0].hit.snippet.contains('«'), "{:?}", p.hits[0]);
        let one = index.search_some("platform", 10, &Filters::default());
        assert_eq!(one.unwrap(), None, "one word: nothing between all and none");
        let limited = index
            .search_some("newsletter mailing", 1, &Filters::default())
            .unwrap()
            .unwrap();
        assert_eq!((limited.notes, limited.hits.len()), (2, 1));
    }

    #[test]
    fn filters_hold_in_the_partial_search_too() {
        let (_t, index) = index_with(&[
            ("a.md", "---\ntype: idea\n---\n# A\n\nalpha beta\n"),
            ("b.md", "---\ntype: note\n---\n# B\n\nalpha\n"),
        ]);
        let f = Filters {
            note_type: Some("note".into()),
            ..Filters::default()
        };
        let p = index.search_some("alpha gamma", 10, &f).unwrap().unwrap();
        assert_eq!(p.notes, 1);
        assert_eq!(p.hits[0].hit.head.path, "b.md");
        assert_eq!(p.missing, ["gamma"]);
    }
}
