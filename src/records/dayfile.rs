//! Day files `_librarian/sessions/YYYY-MM-DD.md`: the `@2` header, reading `@1`, `@2` and mixed
//! files (entry and retraction lines), and the bytes one capture appends (grammar in
//! `spec/record-format.md`).

use super::entry::{dedupe_key_into, Entry};
use super::line::{self, LineError};
use super::retraction::{self, Retraction};
use super::v1;

/// The schema name of files this tool creates.
pub(crate) const SCHEMA_V2: &str = "session-record@2";

/// The header a new `@2` day file starts with, written once.
pub fn header(day: &str) -> String {
    format!(
        "---\ncollection: librarian.sessions\nschema: {SCHEMA_V2}\nday: '{day}'\n---\n# Sessions - {day}\n\n"
    )
}

/// The bytes to append for one entry line: the header for an empty file, a separating newline
/// when the file lacks a final one, then the line and its newline.
#[cfg(test)]
pub(crate) fn append_bytes(
    len: u64,
    ends_with_newline: bool,
    day: &str,
    entry_line: &str,
) -> String {
    super::append_bytes(len, ends_with_newline, &header(day), entry_line)
}

/// A line that carries the entry marker but could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Malformed {
    /// 1-based line number.
    pub line: usize,
    pub error: String,
}

/// What a day file holds.
#[derive(Debug, Clone, Default)]
pub(crate) struct DayFile {
    /// `@1` entries from the frontmatter, then `@2` entry lines in file order.
    pub entries: Vec<Entry>,
    /// Retraction lines in file order.
    pub retractions: Vec<Retraction>,
    pub malformed: Vec<Malformed>,
    /// Why an `@1` frontmatter could not be read, if it could not.
    pub v1_error: Option<String>,
}

/// Reads a day file's bytes. Never fails: what cannot be read is reported in the result.
pub fn parse(bytes: &[u8]) -> DayFile {
    let text = super::text::lossy(bytes);
    let mut out = DayFile::default();
    let mut start = 0;
    if v1::has_frontmatter(&text) && !is_v2_header(&text) {
        match v1::parse_v1(&text) {
            Ok(file) => {
                out.entries = file.entries;
                start = file.body_end;
            }
            Err(e) => {
                out.v1_error = Some(e.to_string());
                start = v1::frontmatter_end(&text).unwrap_or(0);
            }
        }
    }
    let first_line = text[..start.min(text.len())].matches('\n').count() + 1;
    for (i, l) in text.get(start..).unwrap_or("").split('\n').enumerate() {
        if let Err(err) = read_line(&mut out, l) {
            out.malformed.push(Malformed {
                line: first_line + i,
                error: err.to_string(),
            });
        }
    }
    out
}

/// Hands `each` the session id and the dedupe key ([`dedupe_key_into`]) of every entry of a
/// day file that has a session id, in file order: the entries [`parse`] reads. Where the `@1`
/// fast path reads the frontmatter, its entries are not built (no value is copied, nothing but
/// the key is written); any other file is parsed whole. `init` reads every day file's keys
/// this way (`dedupe_keys_are_the_keys_of_the_parsed_entries` holds the two to the same keys).
pub(crate) fn dedupe_keys(bytes: &[u8], mut each: impl FnMut(&str, &[u8])) {
    let text = super::text::lossy(bytes);
    let mut key = Vec::new();
    if v1::has_frontmatter(&text) && !is_v2_header(&text) {
        if let Some((entries, body_end)) = v1::parse_v1_views(&text) {
            for e in &entries {
                let mut paths: Vec<&str> = e.refs.iter().map(|(p, _)| p.as_ref()).collect();
                let sid = e.session_id.as_deref();
                if let Some(sid) = dedupe_key_into(sid, &e.summary, &mut paths, &mut key) {
                    each(sid, &key);
                }
            }
            for l in text.get(body_end..).unwrap_or("").split('\n') {
                if let Ok(Some(e)) = line::parse(l) {
                    entry_key(&e, &mut key, &mut each);
                }
            }
            return;
        }
    }
    for e in parse(bytes).entries {
        entry_key(&e, &mut key, &mut each);
    }
}

/// Hands `each` the session id and the dedupe key of `e`, when it has a session id.
fn entry_key(e: &Entry, key: &mut Vec<u8>, each: &mut impl FnMut(&str, &[u8])) {
    let mut paths: Vec<&str> = e.refs.iter().map(|r| r.path.as_str()).collect();
    if let Some(sid) = dedupe_key_into(e.session_id.as_deref(), &e.summary, &mut paths, key) {
        each(sid, key);
    }
}

/// Reads only entry and retraction lines (a tail of an `@2` file that starts at a line
/// boundary); malformed lines are skipped.
pub fn parse_v2_tail(bytes: &[u8]) -> DayFile {
    let text = super::text::lossy(bytes);
    let mut out = DayFile::default();
    for l in text.split('\n') {
        let _ = read_line(&mut out, l);
    }
    out
}

/// Adds the entry or retraction a line holds to `out`; other lines are not records.
fn read_line(out: &mut DayFile, l: &str) -> Result<(), LineError> {
    if let Some(e) = line::parse(l)? {
        out.entries.push(e);
    } else if let Some(r) = retraction::parse(l)? {
        out.retractions.push(r);
    }
    Ok(())
}

/// True when one of the first five lines, within the first 200 bytes, is
/// `schema: session-record@2`.
fn is_v2_header(text: &str) -> bool {
    let mut end = text.len().min(200);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end]
        .lines()
        .take(5)
        .any(|l| l.trim().strip_prefix("schema: ") == Some(SCHEMA_V2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::entry::NoteRef;

    fn entry(id: &str, summary: &str) -> Entry {
        Entry {
            id: id.into(),
            session_id: Some("S".into()),
            time: "2026-11-30T07:31:41.112Z".into(),
            summary: summary.into(),
            refs: vec![NoteRef::new("a.md", "sha256:00", None)],
            workspace: None,
            client: None,
            supersedes: None,
            extra: Default::default(),
        }
    }

    #[test]
    fn new_file_then_appends_read_back() {
        let mut text = append_bytes(0, true, "2026-11-30", &line::render(&entry("1", "one")));
        text += &append_bytes(
            text.len() as u64,
            true,
            "2026-11-30",
            &line::render(&entry("2", "two")),
        );
        assert!(text.starts_with("---\ncollection: librarian.sessions\nschema: session-record@2\nday: '2026-11-30'\n---\n# Sessions - 2026-11-30\n\n- 07:31:41 — one"));
        let f = parse(text.as_bytes());
        assert_eq!(
            f.entries
                .iter()
                .map(|e| e.summary.as_str())
                .collect::<Vec<_>>(),
            ["one", "two"]
        );
        assert!(f.malformed.is_empty() && f.v1_error.is_none());
    }

    #[test]
    fn torn_tail_gets_a_newline_first() {
        assert_eq!(append_bytes(5, false, "d", "L"), "\nL\n");
        assert_eq!(append_bytes(5, true, "d", "L"), "L\n");
    }

    #[test]
    fn v1_file_with_appended_v2_lines() {
        let v1 = "---\ncollection: librarian.sessions\nschema: session-record@1\nday: '2026-11-30'\nsessions:\n  - id: 20261130T000000000Z\n    time: '2026-11-30T00:00:00.000Z'\n    summary: 'x <!-- rutter:entry {} -->'\n    refs: []\nrefs: []\n---\n# Sessions - 2026-11-30\n\n- 00:00:00 - x <!-- rutter:entry {} -->\n";
        let text = format!("{v1}{}\n", line::render(&entry("2", "two")));
        let f = parse(text.as_bytes());
        let summaries: Vec<_> = f.entries.iter().map(|e| e.summary.as_str()).collect();
        assert_eq!(summaries, ["x <!-- rutter:entry {} -->", "two"]);
        assert!(f.malformed.is_empty(), "{:?}", f.malformed);
    }

    /// A frontmatter that fails to parse ends where the `@1` reader ends it, at the first line
    /// that is exactly `---`: a `--- ` line inside it does not start the entry lines early.
    #[test]
    fn lines_inside_a_broken_frontmatter_are_not_entries() {
        let forged = line::render(&entry("forged", "inside the frontmatter"));
        let real = line::render(&entry("real", "after it"));
        let text = format!(
            "---\nschema: session-record@1\nday: '2026-11-30'\n--- \n# {forged}\n---\n# Sessions - 2026-11-30\n\n{real}\n"
        );
        let f = parse(text.as_bytes());
        assert!(f.v1_error.is_some());
        let ids: Vec<_> = f.entries.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["real"]);
        assert!(f.malformed.is_empty(), "{:?}", f.malformed);
    }

    /// The `@2` header check looks at the first 200 bytes; a character across that boundary
    /// (an `@1` summary starts near byte 166) must not panic.
    #[test]
    fn a_character_across_the_header_window_is_read() {
        let head = "---\ncollection: librarian.sessions\nschema: session-record@1\nday: '2026-11-30'\nsessions:\n  - id: 20261130T073141112Z\n    time: '2026-11-30T07:31:41.112Z'\n    summary: ";
        let body = "\n    refs: []\nrefs: []\n---\n# Sessions - 2026-11-30\n\n- 07:31:41 - x\n";
        for pad in 0..8 {
            let summary = format!("{}{}", "a".repeat(200 - head.len() - 3 + pad), "日本語");
            let f = parse(format!("{head}{summary}{body}").as_bytes());
            assert!(f.v1_error.is_none(), "{:?}", f.v1_error);
            assert_eq!(f.entries[0].summary, summary);
        }
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_parse_without_panic_and_appended_entries_are_read(
            junk in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
            summary in proptest::prelude::any::<String>(),
        ) {
            let _ = parse(&junk);
            let _ = parse(&[b"---\n".as_slice(), &junk].concat());
            let ends = junk.last().is_none_or(|b| *b == b'\n');
            let mut text = junk.clone();
            let e = entry("X", &summary);
            text.extend(append_bytes(junk.len() as u64, ends, "2026-11-30", &line::render(&e)).as_bytes());
            let f = parse(&text);
            proptest::prop_assert!(f.entries.iter().any(|got| got == &e) || junk.starts_with(b"---"));
        }
    }

    #[test]
    fn retraction_lines_are_read_beside_entries() {
        let r = crate::records::retraction::Retraction {
            id: "3".into(),
            retracts: "1".into(),
            time: "2026-11-30T08:00:00.000Z".into(),
            reason: "wrong".into(),
            extra: Default::default(),
        };
        let text = format!(
            "{}{}\n{}\n- x <!-- rutter:retract {{ -->\n",
            header("2026-11-30"),
            line::render(&entry("1", "one")),
            crate::records::retraction::render(&r)
        );
        let f = parse(text.as_bytes());
        assert_eq!(f.entries.len(), 1);
        assert_eq!(f.retractions, std::slice::from_ref(&r));
        assert_eq!(f.malformed.len(), 1, "a broken retraction line is reported");
        let tail = parse_v2_tail(text.as_bytes());
        assert_eq!((tail.entries.len(), tail.retractions), (1, vec![r]));
    }

    #[test]
    fn broken_lines_are_reported_and_others_kept() {
        let good = line::render(&entry("1", "one"));
        let text = format!(
            "{}{good}\n- junk <!-- rutter:entry {{ -->\n\u{0}\u{ff}garbage\n",
            header("2026-11-30")
        );
        let f = parse(text.as_bytes());
        assert_eq!(f.entries.len(), 1);
        assert_eq!(f.malformed.len(), 1);
        assert_eq!(f.malformed[0].line, 9);
    }
}
