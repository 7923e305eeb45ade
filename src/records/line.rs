//! The `session-record@2` entry line: render and parse (grammar in `spec/record-format.md`).
//!
//! A line is a human part for readers followed by a machine part that carries the whole entry
//! as ASCII-only JSON. The escaping rules make it impossible for any field to split, forge or
//! hide an entry.

use super::entry::Entry;
use super::text::push_display_safe;
use std::fmt::Write as _;

/// The marker that opens the machine part of an entry line.
pub(crate) const MARKER: &str = "<!-- rutter:entry ";
const CLOSE: &str = " -->";

/// Why a line that carries the marker is not a valid entry.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LineError {
    #[error("the entry comment is not closed with ` -->` at the end of the line")]
    Unclosed,
    #[error("the entry JSON is invalid: {0}")]
    Json(String),
}

/// The longest record line (entry, retraction, binding, acknowledgement) in bytes: what a
/// capture writes and what the pending journal's check accepts (`store::pending_check`), one
/// limit, so a capture never writes a line its own check refuses.
pub(crate) const MAX_LINE_BYTES: usize = 1 << 20;

/// Renders an entry as one line, without the trailing newline.
pub fn render(entry: &Entry) -> String {
    let mut out = String::with_capacity(256 + entry.summary.len() * 2);
    out.push_str("- ");
    out.push_str(entry.hhmmss());
    if let Some(project) = entry.project() {
        out.push_str(" [");
        push_display_safe(&mut out, project);
        out.push(']');
    }
    out.push_str(" — ");
    push_display_safe(&mut out, &entry.summary);
    if !entry.refs.is_empty() {
        out.push_str(" (refs: ");
        for (i, r) in entry.refs.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            push_display_safe(&mut out, &r.path);
            out.push('@');
            push_display_safe(&mut out, r.short_hash());
        }
        out.push(')');
    }
    out.push(' ');
    out.push_str(MARKER);
    out.push_str(&ascii_json(entry));
    out.push_str(CLOSE);
    out
}

/// Parses a line: `Ok(None)` when it is not an entry line, `Err` when it carries the marker but
/// is malformed. A trailing `\n` is tolerated.
pub fn parse(line: &str) -> Result<Option<Entry>, LineError> {
    let line = line.strip_suffix('\n').unwrap_or(line);
    let Some(start) = line.rfind(MARKER) else {
        return Ok(None);
    };
    let machine = &line[start + MARKER.len()..];
    let json = machine.strip_suffix(CLOSE).ok_or(LineError::Unclosed)?;
    serde_json::from_str::<Entry>(json)
        .map(Some)
        .map_err(|e| LineError::Json(e.to_string()))
}

/// Compact JSON of the entry with every character outside printable ASCII, and `<`, `>`, `&`,
/// written as `\uXXXX`.
pub fn ascii_json(entry: &Entry) -> String {
    // Serialising a struct of strings, maps and arrays of them cannot fail.
    let raw = serde_json::to_string(entry).unwrap_or_default();
    escape_json_text(&raw)
}

/// Escapes an already valid compact JSON text so that it is printable ASCII. Such characters
/// only ever occur inside JSON strings, where a `\uXXXX` escape means the same thing.
pub(crate) fn escape_json_text(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len() + 16);
    for c in raw.chars() {
        if (' '..='~').contains(&c) && !matches!(c, '<' | '>' | '&') {
            out.push(c);
        } else {
            let mut buf = [0u16; 2];
            for unit in c.encode_utf16(&mut buf) {
                let _ = write!(out, "\\u{:04x}", unit);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::entry::{NoteRef, Workspace};
    use crate::records::text::strategies::hostile_text;
    use proptest::prelude::*;

    fn sample() -> Entry {
        Entry {
            id: "20261130T073141112Z".into(),
            session_id: Some("S1".into()),
            time: "2026-11-30T07:31:41.112Z".into(),
            summary: "Decided foo is the canonical source.".into(),
            refs: vec![NoteRef::new(
                "Notes/foo.md",
                format!("sha256:{}", "ab".repeat(32)),
                Some("1".repeat(40)),
            )],
            workspace: Some(Workspace::new("/w/myproj", "myproj", None)),
            client: Some("claude".into()),
            supersedes: None,
            extra: Default::default(),
        }
    }

    #[test]
    fn renders_the_documented_shape() {
        let line = render(&sample());
        assert!(line.starts_with(
            "- 07:31:41 [myproj] — Decided foo is the canonical source. (refs: Notes/foo.md@sha256:abababa) <!-- rutter:entry {\"id\":\"20261130T073141112Z\",\"session_id\":\"S1\""
        ), "{line}");
        assert!(line.ends_with("\"client\":\"claude\"} -->"));
    }

    #[test]
    fn hostile_summary_cannot_forge_or_split() {
        let mut e = sample();
        e.summary =
            "x --> <!-- rutter:entry {\"id\":\"forged\"} -->\n\r\u{2028}\u{202E}\u{1b}[31m\0"
                .into();
        let line = render(&e);
        assert_eq!(line.matches(MARKER).count(), 1);
        assert!(!line.contains('\n') && !line.contains('\r') && !line.contains('\u{2028}'));
        assert_eq!(parse(&line).unwrap(), Some(e));
    }

    /// `supersedes` comes after `client` and before unknown keys; an old line without it reads
    /// unchanged, and an old reader keeps it as an unknown key.
    #[test]
    fn supersedes_follows_client() {
        let mut e = sample();
        e.supersedes = Some(vec!["20261129T100000000Z".into(), "20261129T11".into()]);
        e.extra.insert("future".into(), serde_json::json!(1));
        let line = render(&e);
        assert!(
            line.ends_with("\"client\":\"claude\",\"supersedes\":[\"20261129T100000000Z\",\"20261129T11\"],\"future\":1} -->"),
            "{line}"
        );
        assert_eq!(parse(&line).unwrap(), Some(e.clone()));
        let plain = render(&sample());
        assert!(!plain.contains("supersedes"));
        assert_eq!(parse(&plain).unwrap().unwrap().supersedes, None);
    }

    #[test]
    fn unknown_fields_survive() {
        let line = r#"- 00:00:00 — s <!-- rutter:entry {"id":"a","time":"2026-01-01T00:00:00.000Z","summary":"s","refs":[{"path":"p","hash":"h","mood":1}],"future":{"x":[1]}} -->"#;
        let e = parse(line).unwrap().unwrap();
        assert_eq!(e.extra["future"], serde_json::json!({"x":[1]}));
        assert_eq!(parse(&render(&e)).unwrap(), Some(e));
    }

    #[test]
    fn malformed_lines_are_reported_not_guessed() {
        assert_eq!(parse("# Sessions - 2026-11-30"), Ok(None));
        assert_eq!(
            parse("- x <!-- rutter:entry {\"id\":1} "),
            Err(LineError::Unclosed)
        );
        assert!(matches!(
            parse("- x <!-- rutter:entry {\"id\":1} -->"),
            Err(LineError::Json(_))
        ));
    }

    /// Hostile text, with the entry marker and the binding marker.
    fn any_text() -> impl Strategy<Value = String> {
        hostile_text(&[MARKER, crate::records::ledger::MARKER])
    }

    proptest! {
        #[test]
        fn round_trips_and_stays_one_line(
            summary in any_text(), path in any_text(), cwd in any_text(), project in any_text(),
            repo in proptest::option::of(any_text()), sid in proptest::option::of(any_text()),
            supersedes in proptest::option::of(proptest::collection::vec(any_text(), 0..4)),
        ) {
            let mut e = sample();
            e.supersedes = supersedes;
            e.summary = summary;
            e.session_id = sid;
            e.refs.push(NoteRef::new(path, "sha256:x", None));
            e.workspace = Some(Workspace::new(cwd, project, repo));
            let line = render(&e);
            prop_assert!(!line.contains('\n'));
            prop_assert_eq!(line.matches(MARKER).count(), 1);
            prop_assert!(line.ends_with(" -->"));
            prop_assert_eq!(parse(&line).unwrap(), Some(e));
        }
    }
}
