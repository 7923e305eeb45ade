//! The identity ledger `_librarian/note-identity.md`: the `note-identity@2` binding line, the
//! header of a new ledger, the bytes one binding appends, and reading `@1`, `@2` and mixed files
//! (grammar in `spec/identity-ledger.md`).
//!
//! A binding line mirrors the `session-record@2` entry line (`spec/record-format.md`): a human
//! part for readers, then a machine part that carries the whole binding as ASCII-only JSON, so
//! no path or hash can split, forge or hide a binding. Nothing here writes a file: callers
//! append [`append_bytes`] under the capture lock and commit it to `refs/rutter/records`.

use super::text::{key_string, line_at, push_display_safe, to_json, untag};
use super::Broken;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use std::collections::HashMap;
use yaml_serde::Value as Yaml;

use super::line::escape_json_text;
use super::v1;

/// The ledger's vault-relative path.
pub(crate) const LEDGER_PATH: &str = super::paths::IDENTITY_LEDGER;
/// The schema name of ledgers this tool creates.
pub(crate) const SCHEMA_V2: &str = "note-identity@2";
/// The marker that opens the machine part of a binding line.
pub(crate) const MARKER: &str = "<!-- rutter:binding ";
const CLOSE: &str = " -->";
/// What every accepted frontmatter `schema` value starts with.
const SCHEMA_PREFIX: &str = "note-identity@";

/// One binding from a dead cited path to the note that now holds its content.
///
/// `extra` keeps the keys this version does not know; it never holds one of the named keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Binding {
    pub id: String,
    pub from: String,
    pub to: String,
    pub hash: String,
    /// `"exact-hash"` or `"confirmed"` (other values of a future version are kept as they are).
    pub detected: String,
    pub ts: String,
    #[serde(flatten)]
    pub extra: Map<String, Json>,
}

/// What a ledger holds.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Ledger {
    /// In file order: the `@1` frontmatter bindings first, then the `@2` binding lines.
    pub bindings: Vec<Binding>,
    /// Lines that carry the marker but could not be read: 1-based line number and why.
    pub malformed: Vec<(usize, String)>,
    /// Why a leading frontmatter could not be read, if it could not.
    pub v1_error: Option<String>,
}

/// The header a new `@2` ledger starts with, written once.
pub(crate) fn header() -> String {
    format!(
        "---\ncollection: librarian.note-identity\nschema: {SCHEMA_V2}\n---\n# Note identity bindings\n\n"
    )
}

/// Renders one binding line, without the trailing newline:
/// `- <ts> <detected>: <from> -> <to> (<hash>) <!-- rutter:binding {json} -->`.
pub(crate) fn render(b: &Binding) -> String {
    let mut out = String::with_capacity(256 + 2 * (b.from.len() + b.to.len()));
    out.push_str("- ");
    push_display_safe(&mut out, &b.ts);
    out.push(' ');
    push_display_safe(&mut out, &b.detected);
    out.push_str(": ");
    push_display_safe(&mut out, &b.from);
    out.push_str(" -> ");
    push_display_safe(&mut out, &b.to);
    out.push_str(" (");
    push_display_safe(&mut out, &b.hash);
    out.push_str(") ");
    out.push_str(MARKER);
    // Serialising a struct of strings and a string-keyed map cannot fail.
    out.push_str(&escape_json_text(
        &serde_json::to_string(b).unwrap_or_default(),
    ));
    out.push_str(CLOSE);
    out
}

/// The bytes to append for one binding line: the header for an empty file, a separating
/// newline when the file lacks a final one, then the line and its newline.
/// The durable bindings, newest-wins per `(from, hash)`: a confirmed binding beats any
/// automatic one, and among bindings of the same kind the latest `ts` (then file order) wins.
pub(crate) fn latest_bindings(ledger: &[Binding]) -> HashMap<(String, String), Binding> {
    let mut out: HashMap<(String, String), Binding> = HashMap::new();
    for b in ledger {
        let key = (b.from.clone(), b.hash.clone());
        let wins = match out.get(&key) {
            None => true,
            Some(cur) => rank(b) >= rank(cur),
        };
        if wins {
            out.insert(key, b.clone());
        }
    }
    out
}

fn rank(b: &Binding) -> (bool, &str) {
    (b.detected == "confirmed", b.ts.as_str())
}

#[cfg(test)]
pub(crate) fn append_bytes(len: u64, ends_with_newline: bool, line: &str) -> String {
    super::append_bytes(len, ends_with_newline, &header(), line)
}

/// Parses one line: `Ok(None)` when it carries no marker, `Err` when it carries the marker but
/// is malformed. A trailing `\n` is tolerated.
pub(crate) fn parse_line(line: &str) -> Result<Option<Binding>, Broken> {
    let line = line.strip_suffix('\n').unwrap_or(line);
    let Some(start) = line.rfind(MARKER) else {
        return Ok(None);
    };
    let json = line[start + MARKER.len()..]
        .strip_suffix(CLOSE)
        .ok_or("the binding comment is not closed with ` -->` at the end of the line")?;
    serde_json::from_str::<Binding>(json)
        .map(Some)
        .map_err(|e| format!("the binding JSON is invalid: {e}").into())
}

/// Reads a ledger's bytes (`@1`, `@2`, or `@1` with `@2` lines appended after its generated
/// body). Never fails: what cannot be read is reported in the result.
pub(crate) fn parse(bytes: &[u8]) -> Ledger {
    let text = super::text::lossy(bytes);
    let mut out = Ledger::default();
    let start = read_frontmatter(&text, &mut out);
    let first_line = text[..start].matches('\n').count() + 1;
    for (i, l) in text[start..].split('\n').enumerate() {
        match parse_line(l) {
            Ok(Some(b)) => out.bindings.push(b),
            Ok(None) => {}
            Err(e) => out.malformed.push((first_line + i, e.to_string())),
        }
    }
    out
}

/// The `@1` bindings of a ledger that opens with a frontmatter, and the offset where binding
/// lines may start (after its generated body); why the frontmatter cannot be read otherwise.
pub(crate) fn frontmatter(text: &str) -> Result<(usize, Vec<Binding>), Broken> {
    let mut out = Ledger::default();
    let start = read_frontmatter(text, &mut out);
    match out.v1_error {
        Some(e) => Err(e.into()),
        None => Ok((start, out.bindings)),
    }
}

/// Reads a leading frontmatter into `out` and returns the offset where binding lines may start:
/// after the generated `@1` body when the frontmatter was read, just after it when it was not.
fn read_frontmatter(text: &str, out: &mut Ledger) -> usize {
    if !v1::has_frontmatter(text) {
        return 0;
    }
    let Some((yaml, end)) = v1::split_frontmatter(text) else {
        out.v1_error = Some("the frontmatter is not closed by a `---` line".into());
        return 0;
    };
    match v1_bindings(yaml) {
        Ok(bindings) => {
            let start = v1_body_end(text, end, &bindings);
            out.bindings = bindings;
            start
        }
        Err(e) => {
            out.v1_error = Some(e.to_string());
            end
        }
    }
}

/// Where the generated `@1` body that starts at `pos` ends: after a `#` heading line, then for
/// each binding any blank lines and the lines its reference body line `- <ts> <detected>: <from>
/// -> <to> (<hash>)` occupies (one plus the line feeds its fields hold), stopping early at EOF.
fn v1_body_end(text: &str, mut pos: usize, bindings: &[Binding]) -> usize {
    if let Some((line, next)) = line_at(text, pos) {
        if line.starts_with('#') {
            pos = next;
        }
    }
    for b in bindings {
        while let Some((line, next)) = line_at(text, pos) {
            if !line.bytes().all(|c| matches!(c, b' ' | b'\t' | b'\r')) {
                break;
            }
            pos = next;
        }
        let fields = [&b.ts, &b.detected, &b.from, &b.to, &b.hash];
        let lines = 1 + fields
            .iter()
            .map(|f| f.matches('\n').count())
            .sum::<usize>();
        for _ in 0..lines {
            let Some((_, next)) = line_at(text, pos) else {
                return pos;
            };
            pos = next;
        }
    }
    pos
}

/// The bindings of a ledger frontmatter (`schema: note-identity@…`; `bindings` absent in `@2`).
fn v1_bindings(yaml: &str) -> Result<Vec<Binding>, Broken> {
    let doc: Yaml =
        yaml_serde::from_str(yaml).map_err(|e| format!("frontmatter is not valid YAML: {e}"))?;
    let Yaml::Mapping(top) = untag(&doc) else {
        return Err("frontmatter is not a mapping".into());
    };
    match top.get("schema").map(untag) {
        Some(Yaml::String(s)) if s.starts_with(SCHEMA_PREFIX) => {}
        _ => return Err(format!("`schema` is not `{SCHEMA_PREFIX}…`").into()),
    }
    let items = match top.get("bindings").map(untag) {
        None | Some(Yaml::Null) => return Ok(Vec::new()),
        Some(Yaml::Sequence(items)) => items,
        Some(_) => return Err("`bindings` is not a sequence".into()),
    };
    items
        .iter()
        .enumerate()
        .map(|(i, v)| v1_binding(v).map_err(|e| e.within(&format!("bindings[{i}]:"))))
        .collect()
}

/// One `@1` binding: the named keys must be strings, any other key goes to `extra`.
fn v1_binding(value: &Yaml) -> Result<Binding, Broken> {
    let Yaml::Mapping(map) = untag(value) else {
        return Err("a binding is not a mapping".into());
    };
    let mut fields = Map::new();
    for (k, v) in map {
        fields.insert(key_string(k)?, to_json(v)?);
    }
    serde_json::from_value(Json::Object(fields)).map_err(|e| e.to_string().into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::text::strategies::hostile_text;
    use proptest::prelude::*;

    const H1: &str = "sha256:d74c833d8bdc74e60d3a7eaf168c230e7493a78c84af929860f09131af7349ab";
    const H2: &str = "sha256:64879f7d6b960a01909762d911a32d4582c20010c5641ee90278b644a9e3b525";

    /// A ledger as the TypeScript reference writes it (js-yaml 3: ISO times, `sha256:…` and a
    /// leading `[` single-quoted), ending in exactly one newline.
    const REFERENCE_V1: &str = "---
collection: librarian.note-identity
schema: note-identity@1
bindings:
  - id: 20261130T073159482Z-1
    from: Notes/cadence.md
    to: Archive/2026/cadence-decision.md
    hash: 'sha256:d74c833d8bdc74e60d3a7eaf168c230e7493a78c84af929860f09131af7349ab'
    detected: exact-hash
    ts: '2026-11-30T07:31:59.482Z'
  - id: 20261201T101500000Z-1
    from: '[draft] plan.md'
    to: Plans/plan.md
    hash: 'sha256:64879f7d6b960a01909762d911a32d4582c20010c5641ee90278b644a9e3b525'
    detected: confirmed
    ts: '2026-12-01T10:15:00.000Z'
---
# Note identity bindings

- 2026-11-30T07:31:59.482Z exact-hash: Notes/cadence.md -> Archive/2026/cadence-decision.md (sha256:d74c833d8bdc74e60d3a7eaf168c230e7493a78c84af929860f09131af7349ab)
- 2026-12-01T10:15:00.000Z confirmed: [draft] plan.md -> Plans/plan.md (sha256:64879f7d6b960a01909762d911a32d4582c20010c5641ee90278b644a9e3b525)
";

    fn binding(id: &str, from: &str, to: &str) -> Binding {
        Binding {
            id: id.into(),
            from: from.into(),
            to: to.into(),
            hash: H1.into(),
            detected: "exact-hash".into(),
            ts: "2026-12-02T08:00:00.000Z".into(),
            extra: Map::new(),
        }
    }

    fn ids(l: &Ledger) -> Vec<&str> {
        l.bindings.iter().map(|b| b.id.as_str()).collect()
    }

    #[test]
    fn renders_the_documented_shape() {
        let line = render(&binding(
            "20261202T080000000Z-1",
            "Notes/a <b>.md",
            "New/a.md",
        ));
        assert_eq!(
            line,
            format!(
                "- 2026-12-02T08:00:00.000Z exact-hash: Notes/a &lt;b>.md -> New/a.md ({H1}) \
                 <!-- rutter:binding {{\"id\":\"20261202T080000000Z-1\",\"from\":\"Notes/a \\u003cb\\u003e.md\",\
                 \"to\":\"New/a.md\",\"hash\":\"{H1}\",\"detected\":\"exact-hash\",\"ts\":\"2026-12-02T08:00:00.000Z\"}} -->"
            )
        );
        assert_eq!(
            parse_line(&line),
            Ok(Some(binding(
                "20261202T080000000Z-1",
                "Notes/a <b>.md",
                "New/a.md"
            )))
        );
    }

    #[test]
    fn new_ledger_then_appends_read_back() {
        let mut text = append_bytes(0, true, &render(&binding("1", "a.md", "b.md")));
        assert_eq!(
            text.strip_suffix(&format!("{}\n", render(&binding("1", "a.md", "b.md")))),
            Some("---\ncollection: librarian.note-identity\nschema: note-identity@2\n---\n# Note identity bindings\n\n")
        );
        text += &append_bytes(
            text.len() as u64,
            true,
            &render(&binding("2", "c.md", "d.md")),
        );
        let l = parse(text.as_bytes());
        assert_eq!(ids(&l), ["1", "2"]);
        assert!(l.malformed.is_empty() && l.v1_error.is_none());
    }

    #[test]
    fn torn_tail_gets_a_newline_first() {
        assert_eq!(append_bytes(5, false, "L"), "\nL\n");
        assert_eq!(append_bytes(5, true, "L"), "L\n");
    }

    #[test]
    fn reference_v1_ledger_with_appended_v2_lines_reads_in_order() {
        let mut text = REFERENCE_V1.to_string();
        for id in ["20261202T080000000Z-1", "20261202T080000000Z-2"] {
            let line = render(&binding(id, "Notes/x.md", "Notes/y.md"));
            text += &append_bytes(text.len() as u64, text.ends_with('\n'), &line);
        }
        let l = parse(text.as_bytes());
        assert!(l.malformed.is_empty() && l.v1_error.is_none(), "{l:?}");
        assert_eq!(
            ids(&l),
            [
                "20261130T073159482Z-1",
                "20261201T101500000Z-1",
                "20261202T080000000Z-1",
                "20261202T080000000Z-2"
            ]
        );
        assert_eq!(
            l.bindings[0],
            Binding {
                id: "20261130T073159482Z-1".into(),
                from: "Notes/cadence.md".into(),
                to: "Archive/2026/cadence-decision.md".into(),
                hash: H1.into(),
                detected: "exact-hash".into(),
                ts: "2026-11-30T07:31:59.482Z".into(),
                extra: Map::new(),
            }
        );
        assert_eq!(l.bindings[1].from, "[draft] plan.md");
        assert_eq!(l.bindings[1].hash, H2);
        assert_eq!(l.bindings[1].detected, "confirmed");
    }

    #[test]
    fn three_bindings_from_one_v1_and_two_v2() {
        let one = REFERENCE_V1.replacen(
            "  - id: 20261201T101500000Z-1\n    from: '[draft] plan.md'\n    to: Plans/plan.md\n    hash: 'sha256:64879f7d6b960a01909762d911a32d4582c20010c5641ee90278b644a9e3b525'\n    detected: confirmed\n    ts: '2026-12-01T10:15:00.000Z'\n",
            "",
            1,
        );
        let one = one.replacen(
            &format!(
                "- 2026-12-01T10:15:00.000Z confirmed: [draft] plan.md -> Plans/plan.md ({H2})\n"
            ),
            "",
            1,
        );
        let mut text = one;
        text += &format!("{}\n", render(&binding("v2-a", "p", "q")));
        text += &format!("{}\n", render(&binding("v2-b", "r", "s")));
        let l = parse(text.as_bytes());
        assert_eq!(ids(&l), ["20261130T073159482Z-1", "v2-a", "v2-b"]);
        assert!(l.malformed.is_empty() && l.v1_error.is_none());
    }

    #[test]
    fn unknown_keys_survive_in_v1_and_v2() {
        let text = REFERENCE_V1.replacen(
            "    ts: '2026-11-30T07:31:59.482Z'\n",
            "    ts: '2026-11-30T07:31:59.482Z'\n    score: 0.5\n    note: {by: me}\n",
            1,
        );
        let l = parse(text.as_bytes());
        let b = &l.bindings[0];
        assert_eq!(
            Json::Object(b.extra.clone()),
            serde_json::json!({"score": 0.5, "note": {"by": "me"}})
        );
        assert_eq!(parse_line(&render(b)), Ok(Some(b.clone())));
        let v2 = r#"- x <!-- rutter:binding {"id":"i","from":"f","to":"t","hash":"h","detected":"confirmed","ts":"s","future":[1]} -->"#;
        let b = parse_line(v2).unwrap().unwrap();
        assert_eq!(b.extra["future"], serde_json::json!([1]));
        assert_eq!(parse_line(&render(&b)), Ok(Some(b)));
    }

    #[test]
    fn a_hostile_v1_body_cannot_forge_a_binding() {
        let forged = render(&binding("forged", "x", "y"));
        let from = format!("a\n{forged}\n\n{forged}");
        let yaml_from = serde_json::to_string(&from).unwrap(); // a valid YAML double-quoted form
        let text = format!(
            "---\ncollection: librarian.note-identity\nschema: note-identity@1\nbindings:\n  - id: real\n    from: {yaml_from}\n    to: b.md\n    hash: 'sha256:00'\n    detected: exact-hash\n    ts: '2026-11-30T07:31:59.482Z'\n---\n# Note identity bindings\n\n- 2026-11-30T07:31:59.482Z exact-hash: {from} -> b.md (sha256:00)\n"
        );
        let l = parse(text.as_bytes());
        assert_eq!(ids(&l), ["real"]);
        assert_eq!(l.bindings[0].from, from);
        assert!(l.malformed.is_empty() && l.v1_error.is_none());
    }

    #[test]
    fn a_bad_v1_frontmatter_is_reported_and_v2_lines_still_read() {
        let mut text =
            REFERENCE_V1.replacen("    detected: confirmed\n", "    detected: [oops\n", 1);
        text += &format!("{}\n", render(&binding("v2", "p", "q")));
        let l = parse(text.as_bytes());
        assert!(l.v1_error.is_some());
        assert_eq!(ids(&l), ["v2"]);
        let wrong = REFERENCE_V1.replacen("schema: note-identity@1", "schema: session-record@1", 1);
        assert!(parse(wrong.as_bytes()).v1_error.unwrap().contains("schema"));
        let missing = REFERENCE_V1.replacen("    to: Plans/plan.md\n", "", 1);
        assert!(parse(missing.as_bytes())
            .v1_error
            .unwrap()
            .contains("bindings[1]"));
        let open = parse(b"---\nschema: note-identity@1\n");
        assert!(open.v1_error.is_some() && open.bindings.is_empty());
    }

    #[test]
    fn malformed_lines_are_reported_with_line_numbers() {
        let good = render(&binding("ok", "a", "b"));
        let text = format!(
            "{}{good}\n- x <!-- rutter:binding {{\"id\":1}} -->\n- y <!-- rutter:binding {{}}\nplain text -->\n",
            header()
        );
        let l = parse(text.as_bytes());
        assert_eq!(ids(&l), ["ok"]);
        let lines: Vec<usize> = l.malformed.iter().map(|m| m.0).collect();
        assert_eq!(lines, [8, 9]);
        assert!(l.malformed[0].1.contains("JSON") && l.malformed[1].1.contains("closed"));
        assert_eq!(parse_line("# Note identity bindings"), Ok(None));
    }

    /// Hostile text, with the binding marker, the arrow of the human part and the entry marker.
    fn any_text() -> impl Strategy<Value = String> {
        hostile_text(&[MARKER, " -> ", crate::records::line::MARKER])
    }

    proptest! {
        #[test]
        fn round_trips_and_stays_one_line(
            id in any_text(), from in any_text(), to in any_text(), hash in any_text(),
            detected in any_text(), ts in any_text(),
            extra in proptest::option::of(("x-[a-z]{1,6}", any_text())),
        ) {
            let mut b = Binding { id, from, to, hash, detected, ts, extra: Map::new() };
            if let Some((k, v)) = extra {
                b.extra.insert(k, Json::String(v));
            }
            let line = render(&b);
            prop_assert!(!line.contains('\n') && !line.contains('\r'));
            let hidden = line.contains('\u{2028}') || line.contains('\u{202E}');
            prop_assert!(!hidden);
            prop_assert_eq!(line.matches(MARKER).count(), 1);
            prop_assert!(line.ends_with(" -->"));
            let text = append_bytes(0, true, &line);
            let l = parse(text.as_bytes());
            prop_assert!(l.malformed.is_empty() && l.v1_error.is_none());
            prop_assert_eq!(l.bindings, vec![b]);
        }

        #[test]
        fn any_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn cut_or_spliced_ledgers_never_panic(cut in 0..REFERENCE_V1.len(), junk in any_text()) {
            let mut bytes = REFERENCE_V1.as_bytes()[..cut].to_vec();
            bytes.extend_from_slice(junk.as_bytes());
            bytes.extend_from_slice(&REFERENCE_V1.as_bytes()[cut..]);
            let _ = parse(&bytes);
            let _ = parse(&REFERENCE_V1.as_bytes()[..cut]);
        }
    }
}
