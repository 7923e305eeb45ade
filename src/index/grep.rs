//! The words index of the record cache ([`schema::CREATE_GREP`], spec/recall.md "Finding
//! entries by words"): each entry's `grep` text as the set of its three-character pieces, keyed
//! by `entries.rid`. It only narrows: the entries it names are still tested with `rutter_has`
//! ([`register`]), the test that defines a match, so an answer is the same with it or without
//! it. Built whole on first use ([`build`]); from then on every entry inserted or removed is
//! added or removed here in the same transaction.

use super::schema;
use rusqlite::{params, Connection};

/// The most entries a words query may name for the index to be used. Each named entry is a
/// lookup in another part of the table; walking entries newest first (the plan without the
/// index) reaches the newest matches of a common word sooner. The two cost the same near a few
/// hundred named entries (measured, docs/performance.md "Figures the code's comments used to
/// hold"); reading at most 251 keeps the attempt cheap for a common word.
const MOST_NAMED: usize = 250;

/// The rids of the entries `query` names, as a JSON array for `json_each` (one FTS5 search for
/// all of a call's statements); `None` when it names more than [`MOST_NAMED`] (it stops
/// reading past that).
pub(crate) fn named(conn: &Connection, query: &str) -> Result<Option<String>, rusqlite::Error> {
    let mut stmt =
        conn.prepare_cached("SELECT rowid FROM entries_grep WHERE entries_grep MATCH ?1 LIMIT ?2")?;
    let rids = stmt
        .query_map(params![query, MOST_NAMED as i64 + 1], |r| {
            r.get::<_, i64>(0)
        })?
        .collect::<Result<Vec<_>, _>>()?;
    if rids.len() > MOST_NAMED {
        return Ok(None);
    }
    let list: Vec<String> = rids.iter().map(i64::to_string).collect();
    Ok(Some(format!("[{}]", list.join(","))))
}

/// Registers `rutter_has(text, word)` on `conn`: whether `word` occurs in `text`, byte for byte
/// (what `instr(text, word) > 0` answers on valid UTF-8), by a SIMD substring search whose
/// searcher is built once per statement run for a constant `word`. NULL when either is NULL.
pub(crate) fn register(conn: &Connection) -> Result<(), rusqlite::Error> {
    use rusqlite::functions::FunctionFlags;
    type BoxError = Box<dyn std::error::Error + Send + Sync>;
    conn.create_scalar_function(
        "rutter_has",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            if ctx.get_raw(1).as_bytes_or_null()?.is_none() {
                return Ok(None);
            }
            let finder = ctx.get_or_create_aux(1, |word| -> Result<_, BoxError> {
                let word = word.as_bytes_or_null()?.unwrap_or_default();
                Ok(memchr::memmem::Finder::new(word).into_owned())
            })?;
            let text = ctx.get_raw(0).as_bytes_or_null()?;
            Ok(text.map(|t| finder.find(t).is_some()))
        },
    )
}

/// Whether the words index exists in `conn`'s database (once built, it is kept current).
pub(crate) fn built(conn: &Connection) -> Result<bool, rusqlite::Error> {
    conn.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'entries_grep')",
    )?
    .query_row([], |r| r.get(0))
}

/// Adds one entry's text under its rid (the index is built).
pub(crate) fn add(conn: &Connection, rid: i64, text: &str) -> Result<(), rusqlite::Error> {
    conn.prepare_cached("INSERT INTO entries_grep(rowid, grep) VALUES (?1, ?2)")?
        .execute(params![rid, text])?;
    Ok(())
}

/// Removes the entries of one day file (by its stem), before their rows go (the index is built).
pub(crate) fn remove_file(conn: &Connection, file: &str) -> Result<(), rusqlite::Error> {
    conn.prepare_cached(
        "DELETE FROM entries_grep WHERE rowid IN (SELECT rid FROM entries WHERE file = ?1)",
    )?
    .execute([file])?;
    Ok(())
}

/// Builds the words index from every entry, inside the caller's write transaction; does
/// nothing when it exists. A 16 MiB pending-terms buffer keeps the build's memory bounded.
pub(crate) fn build(conn: &Connection) -> Result<bool, rusqlite::Error> {
    if built(conn)? {
        return Ok(false);
    }
    conn.execute_batch(schema::CREATE_GREP)?;
    conn.execute_batch(
        "INSERT INTO entries_grep(entries_grep, rank) VALUES('hashsize', 16777216);
         INSERT INTO entries_grep(rowid, grep) SELECT rid, grep FROM entries;
         INSERT INTO entries_grep(entries_grep, rank) VALUES('hashsize', 1048576);",
    )?;
    Ok(true)
}

/// Most pieces of one word a query asks for (evenly spread over it: first, last, between).
const PIECES_PER_WORD: usize = 6;
/// Most pieces in one query. Each piece is a term FTS5 opens and walks, so a long query of
/// long words would cost time in proportion (docs/performance.md). Any subset of a word's
/// pieces still names every entry that holds it, so leaving some out only names more.
const MOST_PIECES: usize = 32;

/// The FTS5 query that names the entries holding every `word` that can narrow (three
/// characters or more, no control character): the AND of the distinct pieces of each such word
/// (at most [`PIECES_PER_WORD`] a word, [`MOST_PIECES`] in all), quoted. `None` when no word can
/// narrow (then every entry is tested).
pub(crate) fn query(words: &[String]) -> Option<String> {
    let mut pieces: Vec<String> = Vec::new();
    for w in words.iter().filter(|w| !w.chars().any(char::is_control)) {
        let chars: Vec<char> = w.chars().collect();
        let mut own: Vec<String> = chars.windows(3).map(|t| t.iter().collect()).collect();
        own.dedup();
        let n = own.len();
        if n > PIECES_PER_WORD {
            let at = |i: usize| i * (n - 1) / (PIECES_PER_WORD - 1);
            own = (0..PIECES_PER_WORD).map(|i| own[at(i)].clone()).collect();
        }
        for piece in own {
            if pieces.len() < MOST_PIECES && !pieces.contains(&piece) {
                pieces.push(piece);
            }
        }
    }
    pieces.sort_unstable();
    (!pieces.is_empty()).then(|| {
        pieces
            .iter()
            .map(|p| format!("\"{}\"", p.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" AND ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Index;
    use crate::records::filter::EntryFilter;
    use crate::records::{Entry, NoteRef};

    const DAY: &str = "2026-11-30";

    /// A vault whose one day file holds an entry per summary (the `|`-separated tail of one
    /// becomes a cited path), a session per three entries.
    fn vault(summaries: &[String]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let sessions = t.path().join("_librarian/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        let mut text = crate::records::dayfile::header(DAY);
        for (i, s) in summaries.iter().enumerate() {
            let (summary, cited) = s.split_once('|').unwrap_or((s, ""));
            let e = Entry {
                id: format!("20261130T{:06}000Z-{i}", 100000 + i),
                session_id: Some(format!("S{}", i / 3)),
                time: format!("2026-11-30T10:{:02}:{:02}.000Z", i / 60 % 60, i % 60),
                summary: summary.into(),
                refs: (!cited.is_empty())
                    .then(|| NoteRef::new(cited, "sha256:00", None))
                    .into_iter()
                    .collect(),
                workspace: None,
                client: None,
                supersedes: None,
                extra: Default::default(),
            };
            text.push_str(&crate::records::line::render(&e));
            text.push('\n');
        }
        std::fs::write(sessions.join(format!("{DAY}.md")), text).unwrap();
        t
    }

    /// What the queries that take words answer for `words`: every matching step, the newest
    /// two sessions' steps, and the day files `log` reads.
    fn answers(index: &Index, words: &[&str]) -> (Vec<String>, Vec<String>, Vec<String>) {
        let f = EntryFilter::default().with_words(words);
        let ids = |groups| {
            let steps = index.recent_steps(None, &f, groups).unwrap();
            steps.into_iter().map(|s| s.entry.id).collect::<Vec<_>>()
        };
        let files = index.files_for(None, &f, Some(5)).unwrap();
        (ids(None), ids(Some(2)), files.into_iter().collect())
    }

    /// The same answers with the words index as without it.
    fn same_with_and_without(summaries: &[String], words: &[&str]) {
        let t = vault(summaries);
        let plain = Index::in_memory(t.path());
        let indexed = Index::in_memory(t.path());
        assert!(build(&indexed.conn).unwrap());
        assert_eq!(
            answers(&indexed, words),
            answers(&plain, words),
            "{words:?}"
        );
    }

    #[test]
    fn a_word_finds_what_testing_every_entry_finds_and_the_index_follows_edits() {
        let summaries: Vec<String> = [
            "Chose gcrypt for the remote.|notes/Sync.md",
            "Deferred the latency budget.",
            "GCRYPT again, «été» too.",
            "ab",
        ]
        .map(String::from)
        .to_vec();
        // Long words (their pieces spread, a few left out): the same answers still.
        let long: Vec<String> = [
            "abcdefghijklmnopqrstuvwxyz here",
            "abcdefghijklmnopqrstuvwxyZ no",
        ]
        .map(String::from)
        .to_vec();
        for words in [
            &["cdefghijklmnopqrst"][..],
            &["abcdefghijklmnopqrstuvwxyz"],
            &["bcdefghijkxmnopqr"],
        ] {
            same_with_and_without(&long, words);
        }
        for words in [
            &["gcrypt"][..],
            &["été"],
            &["sync.md"],
            &["ab"],
            &["the", "remote"],
            &["zzz"],
        ] {
            same_with_and_without(&summaries, words);
        }
        let t = vault(&summaries);
        let index = Index::in_memory(t.path());
        build(&index.conn).unwrap();
        let f = EntryFilter::default().with_words(&["gcrypt"]);
        assert_eq!(index.recent_steps(None, &f, None).unwrap().len(), 2);
        // The day file rewritten without the first entry and with a new one: the refresh
        // replaces its rows, and the words index with them.
        let mut edited = summaries[1..].to_vec();
        edited.push("Moved gcrypt keys.".into());
        let again = vault(&edited);
        std::fs::copy(
            again.path().join(format!("_librarian/sessions/{DAY}.md")),
            t.path().join(format!("_librarian/sessions/{DAY}.md")),
        )
        .unwrap();
        let tx = index.conn.unchecked_transaction().unwrap();
        let none = crate::index::entries::NoRecord::default();
        crate::index::entries::refresh(&tx, t.path(), &none, crate::index::entries::Scope::Full)
            .unwrap();
        tx.commit().unwrap();
        let found = index.recent_steps(None, &f, None).unwrap();
        let summaries: Vec<&str> = found.iter().map(|s| s.entry.summary.as_str()).collect();
        assert_eq!(
            summaries,
            ["GCRYPT again, «été» too.", "Moved gcrypt keys."]
        );
        let named: i64 = index
            .conn
            .query_row(
                "SELECT count(*) FROM entries_grep WHERE entries_grep MATCH '\"gcr\"'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(named, 2, "the removed entry left the words index");
    }

    #[test]
    fn a_word_in_many_entries_is_found_by_walking_them() {
        let summaries: Vec<String> = (0..450)
            .map(|i| format!("common word {i}"))
            .chain(["rare word".to_string()])
            .collect();
        let t = vault(&summaries);
        let index = Index::in_memory(t.path());
        build(&index.conn).unwrap();
        let named = |w: &str| named(&index.conn, &query(&[w.into()]).unwrap()).unwrap();
        assert_eq!(named("common"), None);
        assert_eq!(named("rare").as_deref(), Some("[451]"));
        same_with_and_without(&summaries, &["common"]);
        same_with_and_without(&summaries, &["rare", "word"]);
    }

    /// `rutter_has` answers what `instr(…) > 0` answers, NULL for NULL.
    fn has_and_instr(text: Option<&str>, word: Option<&str>) -> (Option<bool>, Option<bool>) {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        conn.query_row(
            "SELECT rutter_has(?1, ?2), instr(?1, ?2) > 0",
            params![text, word],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    }

    #[test]
    fn the_word_test_is_instr_and_null_stays_null() {
        for (t, w) in [
            (Some("été à paris"), Some("à p")),
            (Some("abc"), Some("abcd")),
            (Some("abc"), Some("")),
            (None, Some("a")),
            (Some("a"), None),
        ] {
            let (has, instr) = has_and_instr(t, w);
            assert_eq!(has, instr, "{t:?} {w:?}");
        }
        assert_eq!(has_and_instr(Some("x"), None).0, None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        #[test]
        fn the_word_test_answers_what_instr_answers(
            text in "[a-cé\\x00 ]{0,20}|\\PC{0,12}",
            word in "[a-cé\\x00 ]{0,3}|\\PC{0,3}",
        ) {
            let (has, instr) = has_and_instr(Some(&text), Some(&word));
            proptest::prop_assert_eq!(has, instr);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Any summaries and words: the words index never changes an answer (it only narrows
        /// what `rutter_has` then tests).
        #[test]
        fn the_words_index_never_changes_an_answer(
            summaries in proptest::collection::vec("[a-cé\"' |.]{0,12}|\\PC{0,8}", 1..12),
            words in proptest::collection::vec("[a-cé\"'.]{1,5}|\\PC{1,4}", 1..3),
        ) {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            same_with_and_without(&summaries, &words);
        }
    }

    #[test]
    fn only_words_of_three_characters_or_more_narrow() {
        assert_eq!(query(&["ab".into(), "x".into()]), None);
        assert_eq!(
            query(&["gcrypt".into()]).as_deref(),
            Some("\"cry\" AND \"gcr\" AND \"ryp\" AND \"ypt\"")
        );
        assert_eq!(
            query(&["a\"b".into(), "éte".into(), "c\u{1}de".into()]).as_deref(),
            Some("\"a\"\"b\" AND \"éte\"")
        );
        // A long word gives six pieces spread over it, a long query 32 in all.
        let long = query(&["abcdefghijklmnop".into()]).unwrap();
        assert_eq!(
            long,
            "\"abc\" AND \"cde\" AND \"fgh\" AND \"hij\" AND \"klm\" AND \"nop\""
        );
        // Sixteen words of 64 scrambled letters: far more than 32 distinct pieces.
        let letter = |n: usize| char::from(b'a' + (((n * 2_654_435_761) >> 9) % 26) as u8);
        let words: Vec<String> = (0..16)
            .map(|i| (0..64).map(|k| letter(i * 64 + k)).collect())
            .collect();
        assert_eq!(
            query(&words).unwrap().matches(" AND ").count() + 1,
            MOST_PIECES
        );
    }
}
