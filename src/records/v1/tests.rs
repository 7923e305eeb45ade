//! Tests of the `@1` reader: fixtures for each path, differential proptests (the fast path
//! against the fallback) and the generated-vault tests, which need python3 and
//! tools/gen_vault.py.

use super::*;
use crate::records::{Entry, NoteRef, Workspace};
use proptest::prelude::*;
use proptest::sample::{select, Index};
use serde_json::Map;
use std::path::{Path, PathBuf};
use yaml_serde::Value as Yaml;

/// Hand-written reference output: every quoting style the fast path must accept.
const QUOTING: &str = r##"---
collection: librarian.sessions
schema: session-record@1
day: '2026-11-30'
sessions:
  - id: 20261130T073141112Z
    session_id: S1
    time: '2026-11-30T07:31:41.112Z'
    summary: 'Decided: foo is canonical, not bar'
    refs:
      - path: Notes/foo.md
        hash: 'sha256:acd9d68e'
      - path: '[odd] name.md'
        hash: 'sha256:0000000f'
    workspace:
      cwd: /home/me/work/myproj/src
      project: myproj
      repo: 'https://github.com/me/myproj.git'
  - id: 20261130T073145400Z
    time: '2026-11-30T07:31:45.400Z'
    summary: '- kept the team''s # tag, then moved on'
    refs: []
  - id: 20261130T080000000Z
    session_id: 8177337b-eb74-408a-9814-9002eb7093b0
    time: '2026-11-30T08:00:00.000Z'
    summary: Café naïve — C# works; 100% sure & done! 日本語 'quoted' "too"
    refs: []
    workspace:
      cwd: /tmp/x
      project: x
  - id: 20261130T090000000Z
    session_id: '12345'
    time: '2026-11-30T09:00:00.000Z'
    summary: "Line\Lsep \"q\" back\\slash\ttab \x07 \U0001F600 \N\_\u00E9\/\0\e"
    refs: []
refs:
  - path: Notes/foo.md
    hash: 'sha256:acd9d68e'
  - path: '[odd] name.md'
    hash: 'sha256:0000000f'
---
# Sessions - 2026-11-30

- 07:31:41 [myproj] - Decided: foo is canonical, not bar (refs: Notes/foo.md@sha256:acd9d68, [odd] name.md@sha256:0000000)
- 07:31:45 - - kept the team's # tag, then moved on
- 08:00:00 [x] - Café naïve — C# works; 100% sure & done! 日本語 'quoted' "too"
- 09:00:00 - Line sep "q" back\slash tab <!-- rutter:entry {"id":"fake"} -->
"##;

/// What the fallback alone reads: a comment, block and flow styles, an anchor, unknown keys.
const FALLBACK_ONLY: &str = r##"---
# written by hand
collection: librarian.sessions
schema: session-record@1
day: 2026-12-01
sessions:
  - id: 20261201T010203004Z
    time: 2026-12-01T01:02:03.004Z
    summary: >-
      Folded block
      summary
    refs:
      - {path: Notes/a.md, hash: 'sha256:ab', note: kept}
    workspace: {cwd: /w, project: w, shell: zsh}
    client: claude
    tokens: 1234
    ratio: 0.5
    tags: [a, b]
    meta: {nested: {deep: true}, when: null}
  - &second
    id: '20261201T020000000Z'
    time: "2026-12-01T02:00:00.000Z"
    summary: second
    refs: []
    session_id: ~
extra_top_level: ignored
---
# Sessions - 2026-12-01

- 01:02:03 [w] - Folded block summary (refs: Notes/a.md@sha256:ab)
- 02:00:00 - second
"##;

fn fm(text: &str) -> &str {
    split_frontmatter(text).map(|(fm, _)| fm).unwrap_or("")
}

/// The fast path's answer for a whole day file.
fn fast_path(text: &str) -> Option<Parsed> {
    text.strip_prefix("---\n")
        .and_then(fast::parse)
        .map(|(parsed, _)| parsed)
}

fn fast_and_fallback_agree(text: &str) -> Result<(), TestCaseError> {
    if let Some((fast, used)) = text.strip_prefix("---\n").and_then(fast::parse) {
        let (fm, close_end) = split_frontmatter(text).expect("the fast path found a close");
        prop_assert_eq!(close_end, 4 + used);
        prop_assert_eq!(Ok(fast), fallback::parse(fm), "frontmatter:\n{}", fm);
    }
    if let Ok(file) = parse_v1(text) {
        prop_assert!(file.body_end <= text.len());
    }
    Ok(())
}

fn nref(path: &str, hash: &str) -> NoteRef {
    NoteRef::new(path, hash, None)
}

#[test]
fn quoting_fixture_takes_the_fast_path_with_exact_values() {
    fast_and_fallback_agree(QUOTING).expect("same answer and same closing line");
    let fast = fast_path(QUOTING).expect("fast path accepts reference output");
    assert_eq!(Ok(fast.clone()), fallback::parse(fm(QUOTING)));
    let file = parse_v1(QUOTING).expect("valid");
    assert_eq!(
        (file.day.as_str(), file.schema.as_str()),
        ("2026-11-30", "session-record@1")
    );
    assert_eq!(file.entries, fast.entries);
    let e = &file.entries;
    assert_eq!(e.len(), 4);
    assert_eq!(e[0].summary, "Decided: foo is canonical, not bar");
    assert_eq!(e[0].time, "2026-11-30T07:31:41.112Z");
    assert_eq!(e[0].session_id.as_deref(), Some("S1"));
    assert_eq!(
        e[0].refs,
        vec![
            nref("Notes/foo.md", "sha256:acd9d68e"),
            nref("[odd] name.md", "sha256:0000000f")
        ]
    );
    let ws = Workspace::new(
        "/home/me/work/myproj/src",
        "myproj",
        Some("https://github.com/me/myproj.git".into()),
    );
    assert_eq!(e[0].workspace, Some(ws));
    assert_eq!(e[1].summary, "- kept the team's # tag, then moved on");
    assert_eq!(
        (e[1].session_id.as_ref(), e[1].workspace.as_ref()),
        (None, None)
    );
    assert_eq!(
        e[2].summary,
        "Café naïve — C# works; 100% sure & done! 日本語 'quoted' \"too\""
    );
    assert_eq!(
        e[2].session_id.as_deref(),
        Some("8177337b-eb74-408a-9814-9002eb7093b0")
    );
    assert_eq!(e[2].workspace, Some(Workspace::new("/tmp/x", "x", None)));
    assert_eq!(e[3].session_id.as_deref(), Some("12345"));
    let want = "Line\u{2028}sep \"q\" back\\slash\ttab \x07 \u{1F600} \u{85}\u{A0}\u{E9}/\0\x1b";
    assert_eq!(e[3].summary, want);
    assert!(e.iter().all(|e| e.client.is_none() && e.extra.is_empty()));
    assert_eq!(file.body_end, QUOTING.len());
}

#[test]
fn fallback_reads_other_yaml_and_keeps_unknown_keys() {
    assert_eq!(fast_path(FALLBACK_ONLY), None);
    let file = parse_v1(FALLBACK_ONLY).expect("valid");
    assert_eq!(file.day, "2026-12-01");
    let e = &file.entries;
    assert_eq!(e[0].time, "2026-12-01T01:02:03.004Z");
    assert_eq!(e[0].summary, "Folded block summary");
    assert_eq!(e[0].client.as_deref(), Some("claude"));
    let mut r = nref("Notes/a.md", "sha256:ab");
    r.extra.insert("note".into(), "kept".into());
    assert_eq!(e[0].refs, vec![r]);
    let mut ws = Workspace::new("/w", "w", None);
    ws.extra.insert("shell".into(), "zsh".into());
    assert_eq!(e[0].workspace, Some(ws));
    let extra = serde_json::json!({
        "tokens": 1234, "ratio": 0.5, "tags": ["a", "b"],
        "meta": {"nested": {"deep": true}, "when": null}
    });
    assert_eq!(serde_json::Value::Object(e[0].extra.clone()), extra);
    assert_eq!(
        (e[1].id.as_str(), e[1].session_id.as_ref()),
        ("20261201T020000000Z", None)
    );
    assert_eq!(file.body_end, FALLBACK_ONLY.len());
}

#[test]
fn body_end_stops_before_appended_lines() {
    let appended = "- 10:00:00 — later <!-- rutter:entry {\"id\":\"a\"} -->\n\
                        - 10:00:01 — later <!-- rutter:entry {\"id\":\"b\"} -->\n";
    let text = format!("{QUOTING}{appended}");
    let file = parse_v1(&text).expect("valid");
    assert_eq!(file.body_end, QUOTING.len());
    assert_eq!(&text[file.body_end..], appended);
    // No trailing newline, and a truncated body: stop at EOF.
    let short = QUOTING.trim_end_matches('\n');
    assert_eq!(parse_v1(short).map(|f| f.body_end), Ok(short.len()));
    let cut = QUOTING.find("# Sessions").map_or(0, |i| i + 5);
    assert_eq!(parse_v1(&QUOTING[..cut]).map(|f| f.body_end), Ok(cut));
    // CRLF line ends: read by the fallback, same entries, same body boundary.
    let crlf = text.replace('\n', "\r\n");
    let file = parse_v1(&crlf).expect("valid");
    assert_eq!(file.entries, parse_v1(QUOTING).expect("valid").entries);
    assert_eq!(file.body_end, QUOTING.len() + QUOTING.matches('\n').count());
}

#[test]
fn frontmatter_detection() {
    assert!(has_frontmatter("---\nx: 1\n---\n"));
    assert!(has_frontmatter("---\r\nx: 1\r\n---\r\n"));
    assert!(!has_frontmatter("----\n") && !has_frontmatter(" ---\n") && !has_frontmatter(""));
    assert_eq!(parse_v1("# Sessions"), Err(V1Error::NoFrontmatter));
    assert_eq!(
        parse_v1("---\nschema: session-record@1\n"),
        Err(V1Error::NoFrontmatter)
    );
    assert_eq!(frontmatter_end("---\n---\nbody"), Some(8));
    assert_eq!(frontmatter_end("---\na: 1\n----\n--- x\n---"), Some(23));
    assert!(matches!(
        parse_v1("---\nsessions: [\n---\n"),
        Err(V1Error::Yaml(_))
    ));
    assert!(matches!(parse_v1("---\n---\n"), Err(V1Error::Schema(_))));
}

#[test]
fn validation_rejects_the_whole_file() {
    let cases = [
        ("schema: session-record@1", "schema: note-identity@1"),
        ("day: '2026-11-30'", "day: '2026-1-30'"),
        ("day: '2026-11-30'", "day: 20261130"),
        ("  - id: 20261130T073145400Z", "  - id: 20261130"),
        ("  - id: 20261130T073145400Z", "  - id: 2026.5"),
        ("    summary: Café", "    summary: true #"),
        ("    session_id: S1", "    session_id: [S1]"),
        (
            "        hash: 'sha256:acd9d68e'\n      - path: '[odd]",
            "      - path: '[odd]",
        ),
        (
            "    refs: []\n  - id: 20261130T080000000Z",
            "  - id: 20261130T080000000Z",
        ),
        ("      project: x", "      projekt: x"),
        (
            "    workspace:\n      cwd: /tmp/x",
            "    workspace: /tmp/x\n      cwd: /tmp/x",
        ),
    ];
    for (from, to) in cases {
        assert!(QUOTING.contains(from), "{from}");
        let text = QUOTING.replacen(from, to, 1);
        assert_eq!(fast_path(&text), None, "{to}");
        assert!(
            matches!(parse_v1(&text), Err(V1Error::Schema(_) | V1Error::Yaml(_))),
            "{to}"
        );
    }
    let empty = "---\nschema: session-record@1\nday: '2026-11-30'\nsessions: []\nrefs: []\n---\n";
    assert!(matches!(parse_v1(empty), Err(V1Error::Schema(_))));
    let v2 =
        "---\ncollection: librarian.sessions\nschema: session-record@2\nday: '2026-11-30'\n---\n";
    assert!(matches!(parse_v1(v2), Err(V1Error::Schema(_))));
}

#[test]
fn plain_scalars_yaml_would_retype_go_to_the_fallback() {
    for plain in [
        "123", "0x1F", "0o17", "-5", "+1.5", ".inf", "-.Inf", ".NaN", "1e5", "~", "null", "True",
    ] {
        let text = QUOTING.replacen("project: x", &format!("project: {plain}"), 1);
        assert_eq!(fast_path(&text), None, "{plain}");
        assert!(parse_v1(&text).is_err(), "{plain}");
    }
    for plain in [
        "0123",
        "1_000",
        "inf",
        "nan",
        "2026-11-30",
        "1.2.3",
        "yes",
        "~x",
        "0ba11197-13b5",
        "0x",
        "0xg",
    ] {
        let text = QUOTING.replacen("project: x", &format!("project: {plain}"), 1);
        let file = parse_v1(&text).expect(plain);
        assert_eq!(file.entries[2].project(), Some(plain));
    }
}

/// The gen_vault.py generator, when python3 and the script are both present.
fn generated_vault(days: u32) -> Option<tempfile::TempDir> {
    let script = std::env::var_os("RUTTER_GEN_VAULT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/gen_vault.py"));
    let required = std::env::var_os("RUTTER_REQUIRE_PYTHON").is_some();
    if !script.is_file() {
        assert!(!required, "the generator {} is required", script.display());
        eprintln!("skipping: generator {} not found", script.display());
        return None;
    }
    let dir = tempfile::tempdir().ok()?;
    let out = dir.path().join("vault");
    let status = std::process::Command::new("python3")
        .arg(&script)
        .args([
            "--notes",
            "60",
            "--seed",
            "7",
            "--end-date",
            "2026-11-30",
            "--days",
        ])
        .arg(days.to_string())
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .status();
    match status {
        Ok(s) if s.success() => Some(dir),
        other => {
            // CI sets RUTTER_REQUIRE_PYTHON: there the test can never skip.
            assert!(
                !required,
                "python3 is required (RUTTER_REQUIRE_PYTHON is set): {other:?}"
            );
            eprintln!("skipping: python3 could not run the generator: {other:?}");
            None
        }
    }
}

fn day_files(dir: &tempfile::TempDir) -> Vec<String> {
    let sessions = dir.path().join("vault/_librarian/sessions");
    let mut paths: Vec<_> = std::fs::read_dir(sessions)
        .expect("sessions dir")
        .map(|e| e.expect("dir entry").path())
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("utf-8 day file"))
        .collect()
}

#[test]
fn generated_files_take_the_fast_path_and_match_the_fallback() {
    let Some(dir) = generated_vault(20) else {
        return;
    };
    let texts = day_files(&dir);
    assert_eq!(texts.len(), 20);
    for text in &texts {
        let fast = fast_path(text).expect("fast path accepts generated output");
        assert_eq!(Ok(fast.clone()), fallback::parse(fm(text)));
        let file = parse_v1(text).expect("valid");
        assert_eq!(file.entries, fast.entries);
        assert_eq!(file.body_end, text.len());
        let (views, body_end) = parse_v1_views(text).expect("the views are read too");
        assert_eq!((views.len(), body_end), (file.entries.len(), file.body_end));
        keys_agree(text.as_bytes())
            .map_err(|e| e.to_string())
            .unwrap();
    }
}

/// Release timing over ten years of generated day files:
/// `cargo test --release --lib records::v1 -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_parse_3650_generated_files() {
    let Some(dir) = generated_vault(3650) else {
        return;
    };
    let texts = day_files(&dir);
    let bytes: usize = texts.iter().map(String::len).sum();
    let start = std::time::Instant::now();
    let entries: usize = texts
        .iter()
        .map(|t| parse_v1(t).expect("valid").entries.len())
        .sum();
    let fast = start.elapsed();
    let start = std::time::Instant::now();
    let slow: usize = texts
        .iter()
        .map(|t| fallback::parse(fm(t)).expect("valid").entries.len())
        .sum();
    let yaml = start.elapsed();
    eprintln!(
        "{} files, {} MB, {entries} entries: parse_v1 {fast:?}, yaml_serde fallback {yaml:?}",
        texts.len(),
        bytes / 1_000_000
    );
    assert_eq!(entries, slow);
    if !cfg!(debug_assertions) {
        assert!(fast.as_millis() < 300, "{fast:?}");
    }
}

// ---- a js-yaml 3 style emitter for round-trip properties (test only) ----

fn js_printable(c: char) -> bool {
    let c = c as u32;
    (0x20..=0x7E).contains(&c)
        || ((0xA1..=0xD7FF).contains(&c) && c != 0x2028 && c != 0x2029)
        || ((0xE000..=0xFFFD).contains(&c) && c != 0xFEFF)
        || c >= 0x10000
}

fn emit(s: &str) -> String {
    if !s.chars().all(js_printable) {
        return emit_double(s);
    }
    let first_ok = s
        .chars()
        .next()
        .is_some_and(|c| !"-?:,[]{}#&*!|=>'\"%@`".contains(c) && !c.is_whitespace());
    let plain = first_ok
        && !s.ends_with(char::is_whitespace)
        && !s.contains([',', '[', ']', '{', '}', ':'])
        && !s.contains(" #")
        && matches!(yaml_serde::from_str::<Yaml>(s), Ok(Yaml::String(v)) if v == s);
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

fn emit_double(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        let esc = match c {
            '\0' => "\\0",
            '\x07' => "\\a",
            '\x08' => "\\b",
            '\t' => "\\t",
            '\n' => "\\n",
            '\x0B' => "\\v",
            '\x0C' => "\\f",
            '\r' => "\\r",
            '\x1B' => "\\e",
            '"' => "\\\"",
            '\\' => "\\\\",
            '\u{85}' => "\\N",
            '\u{A0}' => "\\_",
            '\u{2028}' => "\\L",
            '\u{2029}' => "\\P",
            c if c as u32 >= 0x10000 => {
                out.push_str(&format!("\\U{:08X}", c as u32));
                continue;
            }
            c if js_printable(c) => {
                out.push(c);
                continue;
            }
            c if (c as u32) <= 0xFF => {
                out.push_str(&format!("\\x{:02X}", c as u32));
                continue;
            }
            c => {
                out.push_str(&format!("\\u{:04X}", c as u32));
                continue;
            }
        };
        out.push_str(esc);
    }
    out.push('"');
    out
}

/// The reference's serializeRecord, for arbitrary field values.
fn serialize(day: &str, entries: &[Entry]) -> String {
    let mut y = format!(
        "---\ncollection: librarian.sessions\nschema: session-record@1\nday: {}\nsessions:\n",
        emit(day)
    );
    let mut all = Vec::new();
    for e in entries {
        y += &format!("  - id: {}\n", emit(&e.id));
        if let Some(sid) = &e.session_id {
            y += &format!("    session_id: {}\n", emit(sid));
        }
        y += &format!(
            "    time: {}\n    summary: {}\n",
            emit(&e.time),
            emit(&e.summary)
        );
        y += &refs_yaml(&e.refs, "    ");
        all.extend(e.refs.iter().cloned());
        if let Some(ws) = &e.workspace {
            y += &format!(
                "    workspace:\n      cwd: {}\n      project: {}\n",
                emit(&ws.cwd),
                emit(&ws.project)
            );
            if let Some(repo) = &ws.repo {
                y += &format!("      repo: {}\n", emit(repo));
            }
        }
    }
    y += &refs_yaml(&all, "");
    y += &format!("---\n# Sessions - {day}\n\n");
    for e in entries {
        y += &format!("- {} - {}\n", e.hhmmss(), e.summary);
    }
    y
}

fn refs_yaml(refs: &[NoteRef], indent: &str) -> String {
    if refs.is_empty() {
        return format!("{indent}refs: []\n");
    }
    let mut y = format!("{indent}refs:\n");
    for r in refs {
        y += &format!(
            "{indent}  - path: {}\n{indent}    hash: {}\n",
            emit(&r.path),
            emit(&r.hash)
        );
    }
    y
}

const FRAGMENTS: &[&str] = &[
    "a",
    "Z",
    "0",
    "7",
    " ",
    ":",
    ": ",
    "#",
    " #",
    ",",
    "'",
    "''",
    "\"",
    "\\",
    "-",
    "- ",
    "[",
    "]",
    "{",
    "}",
    "&",
    "*",
    "!",
    "|",
    ">",
    "%",
    "@",
    "`",
    "~",
    ".",
    "+",
    "é",
    "日",
    "😀",
    "\u{2028}",
    "\u{85}",
    "\u{A0}",
    "\u{7F}",
    "\u{9F}",
    "\0",
    "\t",
    "\n",
    "\r",
    "\x1b",
    "\u{FEFF}",
    "\u{FFFE}",
    "null",
    "true",
    "0x1F",
    "1e5",
    "12",
    "0o7",
    ".inf",
    "---",
    "...",
    "<<",
    "? ",
    "sha256:ab",
    "2026-11-30",
];

fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(select(FRAGMENTS), 0..6).prop_map(|v| v.concat())
}

fn entry_strategy() -> impl Strategy<Value = Entry> {
    let refs = proptest::collection::vec((text(), text()), 0..3);
    let ws = proptest::option::of((text(), text(), proptest::option::of(text())));
    (
        text(),
        proptest::option::of(text()),
        text(),
        text(),
        refs,
        ws,
    )
        .prop_map(|(id, sid, time, summary, refs, ws)| Entry {
            id,
            session_id: sid,
            time,
            summary,
            refs: refs.into_iter().map(|(p, h)| nref(&p, &h)).collect(),
            workspace: ws.map(|(cwd, project, repo)| Workspace::new(cwd, project, repo)),
            client: None,
            supersedes: None,
            extra: Map::new(),
        })
}

fn mutate(base: &str, edits: &[(Index, u8, usize)], cut: Option<Index>) -> String {
    let mut bytes = base.as_bytes().to_vec();
    for (at, byte, kind) in edits {
        let i = at.index(bytes.len().max(1)).min(bytes.len());
        match kind % 3 {
            0 if i < bytes.len() => bytes[i] = *byte,
            1 => bytes
                .splice(i..i, FRAGMENTS[*byte as usize % FRAGMENTS.len()].bytes())
                .for_each(drop),
            _ if i < bytes.len() => {
                bytes.remove(i);
            }
            _ => {}
        }
    }
    if let Some(cut) = cut {
        bytes.truncate(cut.index(bytes.len() + 1));
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(s in any::<String>()) {
        fast_and_fallback_agree(&s)?;
        fast_and_fallback_agree(&format!("---\n{s}\n---\n"))?;
    }

    #[test]
    fn mutated_files_never_panic_and_paths_agree(
        base in select(vec![QUOTING, FALLBACK_ONLY]),
        edits in proptest::collection::vec((any::<Index>(), any::<u8>(), 0usize..3), 0..5),
        cut in proptest::option::of(any::<Index>()),
    ) {
        fast_and_fallback_agree(&mutate(base, &edits, cut))?;
    }

    #[test]
    fn line_edited_reference_agrees(
        edits in proptest::collection::vec((any::<Index>(), any::<Index>(), 0usize..5), 0..4),
    ) {
        let mut lines: Vec<String> = fm(QUOTING).lines().map(str::to_owned).collect();
        edit_lines(&mut lines, &edits);
        fast_and_fallback_agree(&format!("---\n{}\n---\n", lines.join("\n")))?;
    }

    #[test]
    fn emitted_records_round_trip(entries in proptest::collection::vec(entry_strategy(), 1..4)) {
        let text = serialize("2026-11-30", &entries);
        let split = fm(&text);
        let want = Parsed { day: "2026-11-30".into(), schema: "session-record@1".into(), entries };
        prop_assert_eq!(fallback::parse(split), Ok(want.clone()), "frontmatter:\n{}", split);
        if let Some(fast) = fast_path(&text) {
            prop_assert_eq!(fast, want);
        }
    }
}

#[test]
fn emitted_plain_tricky_records_take_the_fast_path() {
    let mut e = parse_v1(QUOTING).expect("valid").entries;
    e[1].summary = "a - b ? c & d * e ! f | g > h % i @ j ` k ~ l 'm' \"n\" C#".into();
    e[2].summary = "\u{2028}\u{85}\t\"😀 mixed".into();
    let text = serialize("2026-11-30", &e);
    let fast = fast_path(&text).expect("fast path");
    assert_eq!(fast.entries, e);
    assert_eq!(parse_v1(&text).map(|f| f.entries), Ok(e));
}

// ---- the dedupe keys read without building the entries (dayfile::dedupe_keys) ----

/// Applies line edits a property draws: a line removed, copied elsewhere, two swapped, one
/// indented or unindented.
fn edit_lines(lines: &mut Vec<String>, edits: &[(Index, Index, usize)]) {
    for (a, b, kind) in edits {
        let (i, j) = (a.index(lines.len()), b.index(lines.len()));
        match kind {
            0 if lines.len() > 1 => drop(lines.remove(i)),
            1 => lines.insert(j, lines[i].clone()),
            2 => lines.swap(i, j),
            3 => lines[i].insert_str(0, "  "),
            _ => lines[i] = lines[i].trim_start_matches(' ').to_owned(),
        }
    }
}

/// The keys `dedupe_keys` hands out and those of the entries `dayfile::parse` builds: the
/// same sessions and keys in the same order.
fn keys_agree(bytes: &[u8]) -> Result<(), TestCaseError> {
    let mut scanned = Vec::new();
    crate::records::dayfile::dedupe_keys(bytes, |sid, key| {
        scanned.push((sid.to_owned(), String::from_utf8_lossy(key).into_owned()))
    });
    let parsed: Vec<(String, String)> = crate::records::dayfile::parse(bytes)
        .entries
        .iter()
        .filter_map(|e| Some((e.session_id.clone()?, e.dedupe_key()?)))
        .collect();
    prop_assert_eq!(scanned, parsed, "file:\n{}", String::from_utf8_lossy(bytes));
    Ok(())
}

/// `serialize`'s file with `@2` entry lines (and a broken one) appended after its body.
fn with_appended_lines(text: &str, appended: &[Entry]) -> String {
    let mut out = text.to_owned();
    for e in appended {
        out += &crate::records::line::render(e);
        out.push('\n');
    }
    out + "- 00:00:00 - broken <!-- rutter:entry {\"id\": -->\n"
}

#[test]
fn the_reference_files_keys_are_read_without_building_entries() {
    for text in [QUOTING, FALLBACK_ONLY] {
        keys_agree(text.as_bytes())
            .map_err(|e| e.to_string())
            .unwrap();
    }
    let (entries, _) = parse_v1_views(QUOTING).expect("the fast path reads it");
    assert_eq!(entries.len(), 4);
    assert!(parse_v1_views(FALLBACK_ONLY).is_none());
    let mut keys = Vec::new();
    crate::records::dayfile::dedupe_keys(QUOTING.as_bytes(), |sid, _| keys.push(sid.to_owned()));
    assert_eq!(
        keys,
        ["S1", "8177337b-eb74-408a-9814-9002eb7093b0", "12345"]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// On any bytes, and on any text behind a frontmatter's opening line.
    #[test]
    fn dedupe_keys_of_arbitrary_bytes_are_the_parsed_ones(
        bytes in proptest::collection::vec(any::<u8>(), 0..400),
        s in any::<String>(),
    ) {
        keys_agree(&bytes)?;
        keys_agree(format!("---\n{s}\n---\n").as_bytes())?;
    }

    /// On the reference's files with any values and appended `@2` lines (most take the fast
    /// path), and on the same files hand-broken: bytes changed, inserted, removed, cut short.
    #[test]
    fn dedupe_keys_are_the_keys_of_the_parsed_entries(
        entries in proptest::collection::vec(entry_strategy(), 1..4),
        appended in proptest::collection::vec(entry_strategy(), 0..3),
        edits in proptest::collection::vec((any::<Index>(), any::<u8>(), 0usize..3), 0..4),
        cut in proptest::option::of(any::<Index>()),
    ) {
        let text = with_appended_lines(&serialize("2026-11-30", &entries), &appended);
        keys_agree(text.as_bytes())?;
        keys_agree(mutate(&text, &edits, cut).as_bytes())?;
    }

    /// On the fixtures with bytes changed and with whole lines removed, repeated, swapped or
    /// re-indented.
    #[test]
    fn dedupe_keys_of_broken_fixtures_are_the_parsed_ones(
        base in select(vec![QUOTING, FALLBACK_ONLY]),
        edits in proptest::collection::vec((any::<Index>(), any::<u8>(), 0usize..3), 0..5),
        cut in proptest::option::of(any::<Index>()),
        line_edits in proptest::collection::vec((any::<Index>(), any::<Index>(), 0usize..5), 0..4),
    ) {
        keys_agree(mutate(base, &edits, cut).as_bytes())?;
        let mut lines: Vec<String> = base.lines().map(str::to_owned).collect();
        edit_lines(&mut lines, &line_edits);
        keys_agree((lines.join("\n") + "\n").as_bytes())?;
    }
}
