//! Note frontmatter: splits a note into indexed metadata and body (anchor §9 "Frontmatter").
//!
//! The reference reads notes with gray-matter (js-yaml underneath), so the
//! rules here follow it: a leading `---` YAML block, raw text and empty
//! metadata when that block is malformed, js-yaml's timestamps turned into
//! UTC dates, JavaScript's `String()` for numbers and its regex semantics for
//! the `^#\s+(.+)$` title heading.
//!
//! A full YAML parse per note is too slow for a 10,000-note reindex, so
//! blocks made only of simple `key: scalar` / `key: [a, b]` lines take a fast
//! path. It answers only when the line's meaning is unambiguous (plain words,
//! small decimal integers, valid dates) and hands everything else to
//! `yaml_serde`; tests hold the two paths to the same result. Which words YAML
//! retypes is the rule the `@1` reader shares (`records::yaml_scalar`); what
//! JavaScript does differently lives in `jscompat`.

use crate::clock::is_day;
use crate::records::text::is_js_whitespace;
use crate::records::yaml_scalar::{may_retype, Readers};
use std::path::Path;

use yaml_serde::Value;

mod jscompat;
use jscompat::{first_heading, js_number, timestamp_utc_date};

/// The metadata indexed for one note.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NoteMeta {
    /// Frontmatter `title`, else the first `# heading` of the body, else the file stem.
    pub title: String,
    /// Frontmatter `type`, stringified (empty when missing).
    pub note_type: String,
    /// Frontmatter `status`, stringified.
    pub status: String,
    /// Frontmatter `created`, stringified; YAML timestamps become `YYYY-MM-DD` (UTC).
    pub created: String,
    /// Frontmatter `domain`, stringified.
    pub domain: String,
    /// Frontmatter `tags` joined with `", "`.
    pub tags: String,
}

/// Splits a note into metadata and body, the text after the frontmatter.
///
/// The block opens with a first line that is exactly `---` and closes at the
/// next such line (trailing whitespace and `\r` allowed on both); the body
/// starts after the closing line's line break. An empty block gives empty
/// metadata. A malformed block (bad YAML, not a mapping, unterminated) makes
/// the whole raw text the body, with empty metadata. A leading BOM is dropped
/// as gray-matter does. `path` only supplies the last-resort title.
pub(crate) fn parse_note<'a>(path: &str, text: &'a str) -> (NoteMeta, &'a str) {
    let unbommed = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (mut meta, body) = match split_block(unbommed) {
        Block::Absent => (NoteMeta::default(), unbommed),
        Block::Present { yaml, body } => match block_fields(yaml) {
            Some(meta) => (meta, body),
            None => (NoteMeta::default(), text),
        },
        Block::Unterminated => (NoteMeta::default(), text),
    };
    if meta.title.is_empty() {
        meta.title = match first_heading(body) {
            Some(heading) if !heading.is_empty() => heading.to_owned(),
            _ => file_stem(path),
        };
    }
    (meta, body)
}

impl NoteMeta {
    /// The slot for a frontmatter key, if it is one of the indexed keys.
    fn slot(&mut self, key: &str) -> Option<&mut String> {
        match key {
            "title" => Some(&mut self.title),
            "type" => Some(&mut self.note_type),
            "status" => Some(&mut self.status),
            "created" => Some(&mut self.created),
            "domain" => Some(&mut self.domain),
            "tags" => Some(&mut self.tags),
            _ => None,
        }
    }
}

/// Where the frontmatter block is, if there is one.
enum Block<'a> {
    Absent,
    Present { yaml: &'a str, body: &'a str },
    Unterminated,
}

fn split_block(text: &str) -> Block<'_> {
    let (first, mut pos) = next_line(text, 0);
    if !is_delimiter(first) {
        return Block::Absent;
    }
    let yaml_start = pos;
    while pos < text.len() {
        let (line, next) = next_line(text, pos);
        if is_delimiter(line) {
            return Block::Present {
                yaml: &text[yaml_start..pos],
                body: &text[next..],
            };
        }
        pos = next;
    }
    Block::Unterminated
}

/// The line starting at `start` (without its `\n`) and where the next one starts.
fn next_line(text: &str, start: usize) -> (&str, usize) {
    match text[start..].find('\n') {
        Some(len) => (&text[start..start + len], start + len + 1),
        None => (&text[start..], text.len()),
    }
}

fn is_delimiter(line: &str) -> bool {
    line.trim_end_matches([' ', '\t', '\r']) == "---"
}

/// The fields of a block (`title` empty when absent), or `None` when the block is malformed.
fn block_fields(yaml: &str) -> Option<NoteMeta> {
    if is_blank_yaml(yaml) {
        return Some(NoteMeta::default());
    }
    fast_fields(yaml).or_else(|| yaml_fields(yaml))
}

/// Whether the block holds only blank and comment lines (gray-matter's empty case).
fn is_blank_yaml(yaml: &str) -> bool {
    yaml.lines().all(|line| {
        let line = line.trim_start_matches(is_js_whitespace);
        line.is_empty() || line.starts_with('#')
    })
}

// ---------------------------------------------------------------------------
// Fast path
// ---------------------------------------------------------------------------

/// A value the fast path understood.
enum FastValue<'a> {
    Null,
    Scalar(&'a str),
    List(Vec<&'a str>),
}

/// Reads a block made only of `key: scalar` and `key: [a, b]` lines.
///
/// `None` means "not simple enough", never "malformed": the caller falls back
/// to the YAML parser, which decides.
fn fast_fields(yaml: &str) -> Option<NoteMeta> {
    let mut fields = NoteMeta::default();
    let mut keys: Vec<&str> = Vec::with_capacity(8);
    for raw in yaml.split('\n') {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.bytes().all(|b| b == b' ') || line.starts_with('#') {
            continue;
        }
        let (key, rest) = split_key(line)?;
        if keys.contains(&key) {
            return None;
        }
        keys.push(key);
        let value = fast_value(rest)?;
        if let Some(slot) = fields.slot(key) {
            *slot = match (key, value) {
                (_, FastValue::Null) => String::new(),
                ("tags", FastValue::Scalar(text)) => split_tags(text),
                ("tags", FastValue::List(items)) => items.join(", "),
                (_, FastValue::Scalar(text)) => text.to_owned(),
                (_, FastValue::List(_)) => String::new(),
            };
        }
    }
    Some(fields)
}

/// Splits `key: rest` for a bare-word key that is not a YAML keyword.
fn split_key(line: &str) -> Option<(&str, &str)> {
    let bytes = line.as_bytes();
    if !bytes.first()?.is_ascii_alphabetic() && bytes[0] != b'_' {
        return None;
    }
    let len = bytes
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'-'))?;
    if bytes[len] != b':' || !matches!(bytes.get(len + 1), None | Some(b' ')) {
        return None;
    }
    let key = &line[..len];
    if is_reserved(key) {
        return None;
    }
    Some((key, &line[len + 1..]))
}

fn fast_value(rest: &str) -> Option<FastValue<'_>> {
    let value = rest.trim_matches(' ');
    if value.is_empty() {
        return Some(FastValue::Null);
    }
    let Some(inner) = value.strip_prefix('[') else {
        return fast_scalar(value).map(FastValue::Scalar);
    };
    let inner = inner.strip_suffix(']')?.trim_matches(' ');
    if inner.is_empty() {
        return Some(FastValue::List(Vec::new()));
    }
    inner
        .split(',')
        .map(|item| fast_scalar(item.trim_matches(' ')))
        .collect::<Option<Vec<_>>>()
        .map(FastValue::List)
}

/// A plain scalar whose stringified value is its own text: a word-like
/// string, a small decimal integer, or a valid `YYYY-MM-DD` date.
///
/// YAML retypes the integers and dates, but the index keeps every field as
/// text, and `String()` of them is their own text; so only a word is asked
/// the shared retype rule ([`is_reserved`]). A word-like scalar starts with a
/// letter, where that rule's numbers never do.
fn fast_scalar(value: &str) -> Option<&str> {
    let bytes = value.as_bytes();
    let first = *bytes.first()?;
    let simple = if first.is_ascii_digit() {
        is_valid_date(value)
            || (bytes.len() <= 15
                && (first != b'0' || bytes.len() == 1)
                && bytes.iter().all(u8::is_ascii_digit))
    } else {
        first.is_ascii_alphabetic()
            && bytes.iter().all(|&b| {
                b.is_ascii_alphanumeric() || matches!(b, b' ' | b'_' | b'.' | b'/' | b'-')
            })
            && !is_reserved(value)
    };
    simple.then_some(value)
}

/// A word (key or value) the fast path refuses because some YAML reader gives it another type:
/// the rule the `@1` reader shares, asked for any reader ([`Readers::Any`]).
fn is_reserved(word: &str) -> bool {
    may_retype(word, Readers::Any)
}

/// `YYYY-MM-DD` naming a real day in a year js-yaml keeps as written (≥ 100).
fn is_valid_date(value: &str) -> bool {
    // `is_day` checked the ten ASCII bytes, so the year is `value[..4]`.
    is_day(value) && &value[..4] >= "0100"
}

// ---------------------------------------------------------------------------
// YAML path
// ---------------------------------------------------------------------------

/// Parses the block with `yaml_serde`; `None` when it is not a YAML mapping.
fn yaml_fields(yaml: &str) -> Option<NoteMeta> {
    let Value::Mapping(map) = yaml_serde::from_str::<Value>(yaml).ok()? else {
        return None;
    };
    // js-yaml rejects tags it does not know, which makes the block malformed.
    if map
        .iter()
        .any(|(k, v)| has_custom_tag(k) || has_custom_tag(v))
    {
        return None;
    }
    let mut fields = NoteMeta::default();
    for key in ["title", "type", "status", "created", "domain", "tags"] {
        let Some(value) = map.get(key) else { continue };
        let text = match (key, value) {
            ("tags", _) => tags_text(value),
            // A quoted scalar is a string to js-yaml, never a timestamp: kept as written.
            (_, Value::String(s)) if is_quoted(yaml, key) => s.clone(),
            _ => scalar_text(value),
        };
        if let Some(slot) = fields.slot(key) {
            *slot = text;
        }
    }
    Some(fields)
}

/// Whether the top-level `key:` line of the block holds a quoted scalar (`key: "…"` or
/// `key: '…'`): yaml_serde gives quoted and plain strings alike.
fn is_quoted(yaml: &str, key: &str) -> bool {
    yaml.lines().any(|l| {
        l.strip_prefix(key)
            .and_then(|r| r.strip_prefix(':'))
            .map(|v| v.trim_start_matches([' ', '\t']))
            .is_some_and(|v| v.starts_with('"') || v.starts_with('\''))
    })
}

fn has_custom_tag(value: &Value) -> bool {
    match value {
        Value::Tagged(_) => true,
        Value::Sequence(items) => items.iter().any(has_custom_tag),
        Value::Mapping(map) => map
            .iter()
            .any(|(k, v)| has_custom_tag(k) || has_custom_tag(v)),
        _ => false,
    }
}

/// A scalar as JavaScript's `String()` shows it; timestamps become UTC dates;
/// null, sequences and mappings are empty.
fn scalar_text(value: &Value) -> String {
    match value {
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.to_string()
            } else if let Some(u) = n.as_u64() {
                u.to_string()
            } else {
                js_number(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => timestamp_utc_date(s).unwrap_or_else(|| s.clone()),
        Value::Null | Value::Sequence(_) | Value::Mapping(_) | Value::Tagged(_) => String::new(),
    }
}

/// `tags`: a sequence is stringified element by element; a scalar is split on `[,\s]+`.
fn tags_text(value: &Value) -> String {
    match value {
        Value::Sequence(items) => items.iter().map(scalar_text).collect::<Vec<_>>().join(", "),
        other => split_tags(&scalar_text(other)),
    }
}

/// Splits on runs of commas and JavaScript whitespace, drops empties, joins with `", "`.
fn split_tags(text: &str) -> String {
    text.split(|c: char| c == ',' || is_js_whitespace(c))
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(", ")
}

fn file_stem(path: &str) -> String {
    Path::new(path)
        .file_stem()
        .and_then(|stem| stem.to_str())
        .unwrap_or_default()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn meta(text: &str) -> NoteMeta {
        parse_note("Notes/Some Note.md", text).0
    }

    fn body(text: &str) -> &str {
        parse_note("Notes/Some Note.md", text).1
    }

    /// The fast path answers for `yaml` and agrees with the YAML parser.
    fn assert_fast_agrees(yaml: &str) -> NoteMeta {
        let fast = fast_fields(yaml).unwrap_or_else(|| panic!("fast path refused {yaml:?}"));
        assert_eq!(Some(&fast), yaml_fields(yaml).as_ref(), "{yaml:?}");
        fast
    }

    #[test]
    fn generated_style_note() {
        let text = "---\ntype: note\nstatus: draft\ncreated: 2023-05-04\ntags: [alpha, beta]\n\
                    domain: product\n---\n# Title Here\n\nBody text.\n";
        let (m, b) = parse_note("Notes/File.md", text);
        assert_eq!(
            m,
            NoteMeta {
                title: "Title Here".into(),
                note_type: "note".into(),
                status: "draft".into(),
                created: "2023-05-04".into(),
                domain: "product".into(),
                tags: "alpha, beta".into(),
            }
        );
        assert_eq!(b, "# Title Here\n\nBody text.\n");
        assert_fast_agrees("type: note\nstatus: draft\ncreated: 2023-05-04\ntags: [alpha, beta]\n");
    }

    #[test]
    fn no_frontmatter_is_all_body() {
        assert_eq!(body("plain\n---\nx\n"), "plain\n---\nx\n");
        assert_eq!(
            meta("plain"),
            NoteMeta {
                title: "Some Note".into(),
                ..NoteMeta::default()
            }
        );
        // `----` and `--- x` are not delimiters.
        assert_eq!(body("----\na: b\n----\n"), "----\na: b\n----\n");
        assert_eq!(body("--- x\na: b\n---\n"), "--- x\na: b\n---\n");
    }

    #[test]
    fn delimiters_allow_trailing_whitespace_and_crlf() {
        let text = "--- \t\r\ntype: note\r\nstatus: done\r\n---  \r\n# Head\r\nbody\r\n";
        let (m, b) = parse_note("a.md", text);
        assert_eq!((m.note_type.as_str(), m.status.as_str()), ("note", "done"));
        assert_eq!(m.title, "Head");
        assert_eq!(b, "# Head\r\nbody\r\n");
        assert_fast_agrees("type: note\r\nstatus: done\r\n");
    }

    #[test]
    fn body_starts_after_the_closing_line() {
        assert_eq!(body("---\na: 1\n---"), "");
        assert_eq!(body("---\na: 1\n---\n"), "");
        assert_eq!(body("---\na: 1\n---\n\nx"), "\nx");
        assert_eq!(body("---\na: 1\n---\r\nx"), "x");
    }

    #[test]
    fn empty_and_comment_only_blocks_are_empty_metadata() {
        for text in [
            "---\n---\nbody",
            "---\n\n  \n---\nbody",
            "---\n# just a comment\n---\nbody",
        ] {
            let (m, b) = parse_note("dir/x.md", text);
            assert_eq!(
                m,
                NoteMeta {
                    title: "x".into(),
                    ..NoteMeta::default()
                },
                "{text:?}"
            );
            assert_eq!(b, "body");
        }
    }

    #[test]
    fn malformed_blocks_give_raw_text_and_empty_metadata() {
        let cases = [
            "---\ntitle: [unclosed\n---\n# Raw\n",
            "---\n- a\n- b\n---\n# Raw\n",
            "---\njust a string\n---\n# Raw\n",
            "---\n~\n---\n# Raw\n",
            "---\ntype: note\n# Raw\n",
            "---\ntype: note\ntype: idea\n---\n# Raw\n",
            "---\ntype: !custom note\n---\n# Raw\n",
            "---\na: b: c\n---\n# Raw\n",
            "---\n\tbad: indent\n---\n# Raw\n",
        ];
        for text in cases {
            let (m, b) = parse_note("p/q.md", text);
            assert_eq!(b, text, "{text:?}");
            assert_eq!(
                m,
                NoteMeta {
                    title: "Raw".into(),
                    ..NoteMeta::default()
                },
                "{text:?}"
            );
        }
        // Unterminated with no heading: the stem names it.
        assert_eq!(meta("---\ntype: note\n").title, "Some Note");
    }

    #[test]
    fn title_precedence() {
        assert_eq!(meta("---\ntitle: FM\n---\n# Heading\n").title, "FM");
        assert_eq!(meta("---\ntitle: ''\n---\n# Heading\n").title, "Heading");
        assert_eq!(meta("---\ntitle: [a]\n---\n# Heading\n").title, "Heading");
        assert_eq!(meta("---\ntitle: 2024\n---\n# Heading\n").title, "2024");
        assert_eq!(
            meta("---\ntype: x\n---\ntext\n#   Spaced  \t\n").title,
            "Spaced"
        );
        assert_eq!(meta("## Sub\n#NoSpace\n x # not\n# Real\n").title, "Real");
        assert_eq!(meta("no heading here").title, "Some Note");
        assert_eq!(parse_note("a/b.c.MD", "x").0.title, "b.c");
        assert_eq!(parse_note("top.md", "#").0.title, "top");
    }

    #[test]
    fn heading_follows_javascript_regex_semantics() {
        assert_eq!(first_heading("#\n\nText"), Some("Text"));
        assert_eq!(first_heading("x\r# CR line\rnext"), Some("CR line"));
        assert_eq!(first_heading("x\u{2028}# LS\u{2028}y"), Some("LS"));
        assert_eq!(first_heading("#\u{a0}Nbsp"), Some("Nbsp"));
        assert_eq!(first_heading("#  "), Some(""));
        assert_eq!(first_heading("#\n"), None);
        assert_eq!(first_heading("#\n\n"), None);
        assert_eq!(first_heading("a#b\n# ok"), Some("ok"));
        assert_eq!(meta("#  ").title, "Some Note");
    }

    #[test]
    fn tags_as_list_string_and_number() {
        let tags = |yaml: &str| meta(&format!("---\n{yaml}\n---\n")).tags;
        assert_eq!(tags("tags: [a, b]"), "a, b");
        assert_eq!(
            tags("tags:\n  - x\n  - 'y z'\n  - 3\n  - true"),
            "x, y z, 3, true"
        );
        assert_eq!(tags("tags: a, b  c,,d"), "a, b, c, d");
        assert_eq!(tags("tags: 'one,two\tthree'"), "one, two, three");
        assert_eq!(tags("tags: one two"), "one, two");
        assert_eq!(tags("tags: 42"), "42");
        assert_eq!(tags("tags: []"), "");
        assert_eq!(tags("tags:"), "");
        assert_eq!(tags("tags: {a: 1}"), "");
        assert_eq!(tags("tags: [2023-05-04, x]"), "2023-05-04, x");
        assert_fast_agrees("tags: [a, b]\n");
        assert_fast_agrees("tags: one two\n");
        assert_fast_agrees("tags: 42\n");
        assert_fast_agrees("tags: []\n");
        assert_fast_agrees("tags:\n");
    }

    #[test]
    fn created_as_date_timestamp_and_string() {
        let created = |v: &str| meta(&format!("---\ncreated: {v}\n---\n")).created;
        assert_eq!(created("2023-05-04"), "2023-05-04");
        assert_eq!(created("2023-05-04T10:20:30Z"), "2023-05-04");
        assert_eq!(created("2023-05-04 23:30:00 -02:00"), "2023-05-05");
        assert_eq!(created("2023-05-04t01:00:00.123+05"), "2023-05-03");
        assert_eq!(created("2023-5-4T01:00:00"), "2023-05-04");
        assert_eq!(created("2023-12-31T23:59:59-1"), "2024-01-01");
        assert_eq!(created("2024-02-30"), "2024-03-01");
        assert_eq!(created("0050-01-01"), "1950-01-01");
        assert_eq!(created("2023-5-4"), "2023-5-4");
        assert_eq!(created("2023-05-04T10:20"), "2023-05-04T10:20");
        assert_eq!(created("May 4th"), "May 4th");
        assert_eq!(created("'a string'"), "a string");
        // Quoted, a timestamp is a string to js-yaml (the review's §b 14).
        assert_eq!(
            created("\"2023-05-04T01:00:00+05:00\""),
            "2023-05-04T01:00:00+05:00"
        );
        assert_eq!(
            created("'2023-05-04 23:30:00 -02:00'"),
            "2023-05-04 23:30:00 -02:00"
        );
        assert_eq!(created("\"2023-05-04\""), "2023-05-04");
        assert_eq!(created("2023"), "2023");
        assert_eq!(created("1.50"), "1.5");
        assert_eq!(created("1e21"), "1e+21");
        assert_eq!(created(".inf"), "Infinity");
        assert_eq!(created("true"), "true");
        assert_eq!(created("~"), "");
        assert_eq!(created("[2023-05-04]"), "");
        assert_fast_agrees("created: 2023-05-04\n");
        assert!(fast_fields("created: 2024-02-30\n").is_none());
        assert!(fast_fields("created: 2023-02-29\n").is_none());
        assert!(fast_fields("created: 0099-12-31\n").is_none());
        assert_fast_agrees("created: 2024-02-29\n");
        assert_fast_agrees("created: 0100-01-01\n");
        // A fraction of any length is read past without overflowing (it panicked in debug).
        let long = format!("2023-05-04T01:00:00.{}Z", "9".repeat(40));
        assert_eq!(created(&long), "2023-05-04");
    }

    #[test]
    fn quoting_escapes_and_block_values_use_the_yaml_parser() {
        let m = meta("---\ntitle: \"Caf\\u00e9: \\\"quoted\\\"\"\nstatus: >\n  folded\n  text\nextra:\n  nested: {a: 1}\nanchor: &x foo\ndomain: *x\n---\n");
        assert_eq!(m.title, "Café: \"quoted\"");
        assert_eq!(m.status, "folded text\n");
        assert_eq!(m.domain, "foo");
        assert_eq!(meta("---\ntype: !!str 123\n---\n").note_type, "123");
    }

    #[test]
    fn unicode_text() {
        let text =
            "\u{feff}---\ntitle: Über Café 日本\ntags: [ünï, 標籤]\n---\n# Ignored\nbody ✓\n";
        let (m, b) = parse_note("Notes/ß.md", text);
        assert_eq!(m.title, "Über Café 日本");
        assert_eq!(m.tags, "ünï, 標籤");
        assert_eq!(b, "# Ignored\nbody ✓\n");
        assert_eq!(parse_note("Notes/ß.md", "# Ñandú 🦤\n").0.title, "Ñandú 🦤");
        assert_eq!(parse_note("Notes/ß.md", "ü").0.title, "ß");
    }

    #[test]
    fn fast_path_refuses_what_it_cannot_be_sure_of() {
        for yaml in [
            "type: yes\n",
            "type: True\n",
            "type: null\n",
            "type: 007\n",
            "type: 1.5\n",
            "type: 1e3\n",
            "type: a: b\n",
            "type: a # c\n",
            "type: 'q'\n",
            "type: -x\n",
            "True: x\n",
            "type:\tx\n",
            "type: [a, ]\n",
            "type: [a, [b]]\n",
            "- a\n",
            "type: x\ntype: y\n",
            "  type: x\n",
            "type: é\n",
            "1: x\n",
            "type: x\r\rstatus: y\n",
        ] {
            assert!(fast_fields(yaml).is_none(), "{yaml:?}");
        }
    }

    #[test]
    fn generated_vault_notes_take_the_fast_path() {
        let Some((_dir, notes)) = generated_notes(60, 2) else {
            eprintln!("python3 not available: skipping the generated-vault test");
            return;
        };
        assert_eq!(notes.len(), 60);
        for (path, text) in &notes {
            let (_, after) = text.split_once("\n").expect("first line");
            let yaml = &after[..after.find("---\n").expect("closing")];
            let fields = assert_fast_agrees(yaml);
            let (m, b) = parse_note(path, text);
            let stem = path.rsplit('/').next().and_then(|n| n.strip_suffix(".md"));
            assert_eq!(Some(m.title.as_str()), stem, "{path}");
            assert!(is_valid_date(&m.created), "{path}: {}", m.created);
            assert!(!m.note_type.is_empty() && !m.status.is_empty());
            assert_eq!(m.tags, fields.tags);
            assert!(text.ends_with(b) && !b.starts_with("---"));
        }
    }

    /// Generates a vault with tools/gen_vault.py; `None` when python3 is missing.
    fn generated_notes(
        notes: usize,
        days: usize,
    ) -> Option<(tempfile::TempDir, Vec<(String, String)>)> {
        let dir = tempfile::tempdir().expect("tempdir");
        let vault = dir.path().join("vault");
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tools/gen_vault.py");
        let status = std::process::Command::new("python3")
            .arg(script)
            .arg("--out")
            .arg(&vault)
            .args(["--notes", &notes.to_string(), "--days", &days.to_string()])
            .args(["--seed", "7", "--end-date", "2026-11-30"])
            .stdout(std::process::Stdio::null())
            .status();
        // CI sets RUTTER_REQUIRE_PYTHON: there the test can never skip.
        let status = match status {
            Ok(s) => s,
            Err(e) if std::env::var_os("RUTTER_REQUIRE_PYTHON").is_some() => {
                panic!("python3 is required (RUTTER_REQUIRE_PYTHON is set): {e}")
            }
            Err(_) => return None,
        };
        assert!(status.success(), "gen_vault.py failed");
        let found = crate::index::walk::walk_notes(&vault);
        let notes = found
            .into_iter()
            .map(|n| {
                let text = std::fs::read_to_string(vault.join(&n.path)).expect("read");
                (n.path, text)
            })
            .collect();
        Some((dir, notes))
    }

    /// Run with `cargo test --release --lib index::frontmatter -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn timing_parse_10k_generated_notes() {
        let Some((_dir, notes)) = generated_notes(10_000, 2) else {
            eprintln!("python3 not available: skipping");
            return;
        };
        let mut best = u128::MAX;
        for _ in 0..5 {
            let start = std::time::Instant::now();
            let mut bytes = 0;
            for (path, text) in &notes {
                let (m, b) = parse_note(path, text);
                bytes += m.title.len() + b.len();
            }
            best = best.min(start.elapsed().as_micros());
            assert!(bytes > 0);
        }
        eprintln!(
            "parse of {} generated notes: best of 5 = {best} µs",
            notes.len()
        );
    }

    fn simple_scalar() -> impl Strategy<Value = String> {
        // Mostly values the fast path takes, some it must refuse.
        prop_oneof![
            8 => "[a-zA-Z][a-zA-Z0-9 _./-]{0,12}",
            3 => "(0|[1-9][0-9]{0,14})",
            3 => (1000..2100_i32, 1..13_i32, 1..29_i32)
                .prop_map(|(y, m, d)| format!("{y}-{m:02}-{d:02}")),
            1 => "(true|Null|no|ON|~|0[0-9]|[0-9]\\.[0-9]|2023-02-3[01])",
            1 => "[ -~]{0,8}",
        ]
    }

    fn simple_value() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => simple_scalar(),
            2 => prop::collection::vec(simple_scalar(), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
            1 => Just(String::new()),
        ]
    }

    fn simple_block() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            Just("title"),
            Just("type"),
            Just("status"),
            Just("created"),
            Just("domain"),
            Just("tags"),
            Just("other"),
            Just("x-y_z"),
        ];
        prop::collection::vec((key, simple_value(), prop::bool::ANY), 0..7).prop_map(|lines| {
            lines
                .into_iter()
                .map(|(k, v, crlf)| format!("{k}: {v}{}", if crlf { "\r\n" } else { "\n" }))
                .collect()
        })
    }

    proptest! {
        #[test]
        fn fast_path_agrees_with_yaml(yaml in simple_block()) {
            // Blank blocks never reach the fast path (`block_fields` handles them).
            if let Some(fast) = fast_fields(&yaml).filter(|_| !is_blank_yaml(&yaml)) {
                prop_assert_eq!(Some(fast), yaml_fields(&yaml), "{:?}", yaml);
            }
        }

        #[test]
        fn word_like_blocks_always_take_the_fast_path(
            words in prop::collection::vec("[a-z]{3,8}", 1..5),
        ) {
            prop_assume!(!words.iter().any(|w| is_reserved(w)));
            let yaml = format!("type: {}\ntags: [{}]\ncreated: 2023-05-04\n", words[0], words.join(", "));
            let fast = fast_fields(&yaml);
            prop_assert!(fast.is_some());
            prop_assert_eq!(fast, yaml_fields(&yaml));
        }

        #[test]
        fn never_panics_on_arbitrary_text(text in "\\PC{0,200}", fm in prop::bool::ANY) {
            let text = if fm { format!("---\n{text}\n---\n{text}") } else { text };
            let (_, body) = parse_note("a/b.md", &text);
            prop_assert!(text.ends_with(body));
        }

        #[test]
        fn never_panics_on_frontmatter_like_text(
            lines in prop::collection::vec("[ -~\t\r\u{2028}é#:\\[\\]{}'\"-]{0,20}", 0..8),
        ) {
            let text = format!("---\n{}\n---\n", lines.join("\n"));
            let _ = parse_note("x.md", &text);
            let _ = timestamp_utc_date(&lines.concat());
        }
    }
}
