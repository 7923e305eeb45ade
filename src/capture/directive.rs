//! Session directives (anchor-behaviour §1 with DESIGN §4's JSON-aware fix): finding every
//! `<!-- librarian-session {json} -->` outside code in a text, validating its payload, and the
//! unfilled-template rule. The payload is read as one JSON value, so a summary may contain `-->`.

use serde_json::Value;

use crate::capture::markdown::for_each_outside_code;
use crate::capture::sanitize::js_trim;
use crate::records::text::is_js_whitespace;
use crate::records::Broken;

const OPEN: &str = "<!--";
const TAG: &str = "librarian-session";
const CLOSE: &str = "-->";
/// The most JSON read after one opener: a longer directive is malformed. With
/// [`MAX_FAILED`] it bounds the work on adversarial text (a failed attempt may read that far).
const MAX_PAYLOAD: usize = 64 * 1024;
/// After this many openers that did not parse, later ones in the same capture are counted as
/// malformed without being parsed.
const MAX_FAILED: usize = 64;

/// A well-formed directive payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Directive {
    /// Raw and untrimmed, exactly as in the JSON; sanitising happens later.
    pub summary: String,
    /// Raw ref strings; empty when `refs` was absent.
    pub refs: Vec<String>,
    /// The ids (or short ids) of the entries this decision replaces, trimmed, each once;
    /// empty when `supersedes` was absent.
    pub supersedes: Vec<String>,
}

/// What scanning found, over one or more texts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Directives {
    /// Well-formed directives with a real summary, in text order.
    pub found: Vec<Directive>,
    /// Directive openers whose payload did not parse.
    pub malformed: usize,
    /// Of those, the ones whose JSON was still open after [`MAX_PAYLOAD`] bytes: too long,
    /// not mistyped.
    pub too_long: usize,
    /// Well-formed directives whose summary is blank or an unfilled template.
    pub templates: usize,
    /// `<!-- librarian-position … -->` lines (the TypeScript reference's retired second kind):
    /// never captured, but recognised so the hook can say so.
    pub positions: usize,
}

/// Scans texts for directives, keeping the bound on failed attempts across all of them.
#[derive(Debug, Default)]
pub(crate) struct Scanner {
    failed: usize,
}

impl Scanner {
    /// Adds every directive of `text` that lies outside fenced code blocks and inline code
    /// spans, in order, to `out`.
    pub(crate) fn scan(&mut self, text: &str, out: &mut Directives) {
        for_each_outside_code(text, OPEN, |at, limit| {
            let from_open = &text[at..limit];
            if is_position_opener(from_open) {
                out.positions += 1;
                return None;
            }
            let payload = opener_payload(from_open)?;
            if self.failed >= MAX_FAILED {
                out.malformed += 1;
                return None;
            }
            let (directive, used) = match parse_payload(payload) {
                Ok(found) => found,
                Err(why) => {
                    self.failed += 1;
                    out.malformed += 1;
                    out.too_long += usize::from(why == Unread::TooLong);
                    return None;
                }
            };
            if is_unfilled(&directive.summary) {
                out.templates += 1;
            } else {
                out.found.push(directive);
            }
            Some(at + (from_open.len() - payload.len()) + used)
        });
    }
}

/// Every directive of one text outside code, in order.
pub(crate) fn directives_in(text: &str) -> Directives {
    let mut out = Directives::default();
    Scanner::default().scan(text, &mut out);
    out
}

/// True when the trimmed summary is empty or matches `^<.*>$` ('.' not matching a line
/// terminator): an unfilled template.
pub(crate) fn is_unfilled(summary: &str) -> bool {
    let t = js_trim(summary);
    if t.is_empty() {
        return true;
    }
    let Some(inner) = t.strip_prefix('<').and_then(|r| r.strip_suffix('>')) else {
        return false;
    };
    !inner.contains(['\n', '\r', '\u{2028}', '\u{2029}'])
}

/// Validates a JSON value as a directive payload: an object with a string `summary`, `refs`
/// absent or an array of strings (`null` or non-string elements make it invalid), and
/// `supersedes` absent or an array of entry ids within [`supersedes`]'s bounds. Unknown keys
/// are ignored.
pub(crate) fn directive_from_value(v: &Value) -> Option<Directive> {
    let obj = v.as_object()?;
    let summary = obj.get("summary")?.as_str()?.to_owned();
    let refs = match obj.get("refs") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()?,
        Some(_) => return None,
    };
    let supersedes = supersedes(obj.get("supersedes")).ok()?;
    Some(Directive {
        summary,
        refs,
        supersedes,
    })
}

/// A `supersedes` value (a directive's or `librarian-record`'s): absent, or an array of at
/// most 16 strings, each an id of at most 256 characters once trimmed; each id kept once, in
/// order. The error says what is wrong (one phrase, no capital, no period).
pub(crate) fn supersedes(v: Option<&Value>) -> Result<Vec<String>, Broken> {
    let items = match v {
        None => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err("`supersedes` must be an array of entry ids".into()),
    };
    let mut ids: Vec<String> = Vec::new();
    for item in items {
        let id = item
            .as_str()
            .ok_or("`supersedes` must be an array of entry ids (strings)")?;
        let id = js_trim(id).to_owned();
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    if items.len() > crate::records::supersede::MAX_IDS {
        return Err(format!(
            "`supersedes` names {} entries, over the {} one decision may replace",
            items.len(),
            crate::records::supersede::MAX_IDS
        )
        .into());
    }
    crate::records::supersede::check(&ids)?;
    Ok(ids)
}

/// Whether text starting at `<!--` opens a `librarian-position` line (`<!--\s*librarian-position`
/// then whitespace): the TypeScript reference's position directive, retired in rutter 1.0.
fn is_position_opener(at_open: &str) -> bool {
    at_open
        .strip_prefix(OPEN)
        .map(|r| r.trim_start_matches(is_js_whitespace))
        .and_then(|r| r.strip_prefix("librarian-position"))
        .is_some_and(|r| r.starts_with(is_js_whitespace))
}

/// Given text starting at `<!--`, matches `<!--\s*librarian-session\s+` and returns what follows.
fn opener_payload(at_open: &str) -> Option<&str> {
    let after_open = at_open.strip_prefix(OPEN)?;
    let after_tag = after_open
        .trim_start_matches(is_js_whitespace)
        .strip_prefix(TAG)?;
    let payload = after_tag.trim_start_matches(is_js_whitespace);
    (payload.len() < after_tag.len()).then_some(payload)
}

/// Why a directive's payload was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unread {
    Malformed,
    /// Its JSON was still open at [`MAX_PAYLOAD`] bytes.
    TooLong,
}

/// Reads one JSON value from the start of `payload` (at most [`MAX_PAYLOAD`] bytes of it), then
/// requires optional whitespace and `-->`; returns the directive and the bytes used through
/// the `-->`.
fn parse_payload(payload: &str) -> Result<(Directive, usize), Unread> {
    let mut window = payload.len().min(MAX_PAYLOAD);
    while !payload.is_char_boundary(window) {
        window -= 1;
    }
    let mut stream = serde_json::Deserializer::from_str(&payload[..window]).into_iter::<Value>();
    let value = match stream.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) if e.is_eof() && window < payload.len() => return Err(Unread::TooLong),
        _ => return Err(Unread::Malformed),
    };
    let json_end = stream.byte_offset();
    let rest = payload.get(json_end..).ok_or(Unread::Malformed)?;
    let after_ws = rest.trim_start_matches(is_js_whitespace);
    if !after_ws.starts_with(CLOSE) {
        return Err(Unread::Malformed);
    }
    let used = payload.len() - after_ws.len() + CLOSE.len();
    directive_from_value(&value)
        .map(|d| (d, used))
        .ok_or(Unread::Malformed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn d(summary: &str, refs: &[&str]) -> Directive {
        Directive {
            summary: summary.to_owned(),
            refs: refs.iter().map(|r| (*r).to_owned()).collect(),
            supersedes: vec![],
        }
    }

    fn want(found: &[Directive], malformed: usize, templates: usize) -> Directives {
        Directives {
            found: found.to_vec(),
            malformed,
            templates,
            positions: 0,
            too_long: 0,
        }
    }

    #[test]
    fn a_directive_still_open_after_its_bound_is_too_long_not_mistyped() {
        let long = format!(
            "<!-- librarian-session {{\"summary\": \"{}\"}} -->",
            "a".repeat(MAX_PAYLOAD)
        );
        let found = directives_in(&long);
        assert_eq!((found.malformed, found.too_long), (1, 1));
        let broken = format!(
            "<!-- librarian-session {{\"summary\": x}} -->{}",
            " ".repeat(MAX_PAYLOAD)
        );
        let found = directives_in(&broken);
        assert_eq!((found.malformed, found.too_long), (1, 0));
    }

    #[test]
    fn position_lines_are_counted_never_taken() {
        let got = directives_in(
            "x <!-- librarian-position POSITION revise cadence --> `<!-- librarian-position q -->` <!--librarian-positions x -->",
        );
        assert_eq!(got.positions, 1, "outside code, the retired tag exactly");
        assert!(got.found.is_empty());
    }

    fn found(summaries: &[&str]) -> Directives {
        let found: Vec<Directive> = summaries.iter().map(|s| d(s, &[])).collect();
        want(&found, 0, 0)
    }

    fn malformed(n: usize) -> Directives {
        want(&[], n, 0)
    }

    #[test]
    fn scan_cases() {
        let none = Directives::default();
        let cases: Vec<(&str, Directives)> = vec![
            ("", none.clone()),
            ("no directive here", none.clone()),
            (
                r#"<!-- librarian-session {"summary":"Did X"} -->"#,
                found(&["Did X"]),
            ),
            (
                r#"<!--librarian-session {"summary":"tight"}-->"#,
                found(&["tight"]),
            ),
            (
                "<!--\n librarian-session\n\t{\"summary\":\"ws\"}\n-->",
                found(&["ws"]),
            ),
            (
                "<!--\u{A0}librarian-session\u{2028}{\"summary\":\"js ws\"}\u{3000}-->",
                found(&["js ws"]),
            ),
            (
                r#"<!-- librarian-session {"summary":"a","refs":["x.md","y/z.md"]} -->"#,
                want(&[d("a", &["x.md", "y/z.md"])], 0, 0),
            ),
            (
                r#"<!-- librarian-session {"summary":"a","refs":[],"extra":{"k":1}} -->"#,
                found(&["a"]),
            ),
            (
                r#"<!-- librarian-session {"summary":"  keep raw  "} -->"#,
                found(&["  keep raw  "]),
            ),
            (
                r#"<!-- librarian-session {"summary":"a --> b <!-- c"} -->"#,
                found(&["a --> b <!-- c"]),
            ),
            (
                r#"<!-- librarian-session {"summary":"Chose A <over> B"} -->"#,
                found(&["Chose A <over> B"]),
            ),
            // Every directive is found, in order (the reference kept only the last).
            (
                r#"<!-- librarian-session {"summary":"one"} --> then <!-- librarian-session {"summary":"two"} -->"#,
                found(&["one", "two"]),
            ),
            (
                r#"<!-- librarian-session {"summary":"old"} --> <!-- librarian-session {"summary":"new" -->"#,
                want(&[d("old", &[])], 1, 0),
            ),
            (
                r#"<!-- librarian-session {"summary":"bad" --> <!-- librarian-session {"summary":"good"} -->"#,
                want(&[d("good", &[])], 1, 0),
            ),
            (
                r#"<!-- librarian-session {"summary":"x","refs":null} -->"#,
                malformed(1),
            ),
            (
                r#"<!-- librarian-session {"summary":"x","refs":"a.md"} -->"#,
                malformed(1),
            ),
            (
                r#"<!-- librarian-session {"summary":"x","refs":["a.md",null]} -->"#,
                malformed(1),
            ),
            (r#"<!-- librarian-session {"summary":5} -->"#, malformed(1)),
            (r#"<!-- librarian-session {"refs":[]} -->"#, malformed(1)),
            (r#"<!-- librarian-session ["summary"] -->"#, malformed(1)),
            (
                r#"<!-- librarian-session "just a string" -->"#,
                malformed(1),
            ),
            (
                r#"<!-- librarian-session {"summary":"no close"}"#,
                malformed(1),
            ),
            (
                r#"<!-- librarian-session {"summary":"x"} junk -->"#,
                malformed(1),
            ),
            (
                r#"<!-- librarian-session {"summary":"x"}{"summary":"y"} -->"#,
                malformed(1),
            ),
            ("<!-- librarian-session {{{{[[[[ -->", malformed(1)),
            ("<!-- librarian-session -->", malformed(1)),
            (
                "<!-- librarian-session <!-- librarian-session <!--",
                malformed(2),
            ),
            (
                r#"<!-- librarian-session{"summary":"no space"} -->"#,
                none.clone(),
            ),
            (
                r#"<!-- librarian-sessions {"summary":"x"} -->"#,
                none.clone(),
            ),
            (
                r#"<!-- LIBRARIAN-SESSION {"summary":"x"} -->"#,
                none.clone(),
            ),
            (r#"<!- librarian-session {"summary":"x"} -->"#, none.clone()),
            (
                r#"<!-- librarian-session {"summary":""} -->"#,
                want(&[], 0, 1),
            ),
            (
                r#"<!-- librarian-session {"summary":" \n "} -->"#,
                want(&[], 0, 1),
            ),
            (
                r#"<!-- librarian-session {"summary":"<one plain-English line>","refs":["<paths touched, relative to the knowledge base>"]} -->"#,
                want(&[], 0, 1),
            ),
            (
                r#"<!-- librarian-session {"summary":"real"} --> <!-- librarian-session {"summary":"<todo>"} -->"#,
                want(&[d("real", &[])], 0, 1),
            ),
            (
                r#"<!-- librarian-session {"summary":"<todo>"} --> <!-- librarian-session {"summary":"real"} -->"#,
                want(&[d("real", &[])], 0, 1),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(directives_in(text), want, "text {text:?}");
        }
    }

    #[test]
    fn directives_in_code_are_examples() {
        let dir = |s: &str| format!("<!-- librarian-session {} -->", json!({ "summary": s }));
        let real = dir("Real decision.");
        let cases: Vec<(String, Directives)> = vec![
            (
                format!("```\n{}\n```\n{real}", dir("fenced")),
                found(&["Real decision."]),
            ),
            (format!("~~~markdown\n{}\n~~~", dir("tilde")), found(&[])),
            (
                format!("  ```md\n  {}\n  ```", dir("indented fence")),
                found(&[]),
            ),
            (
                format!("> ```\n> {}\n> ```", dir("quoted fence")),
                found(&[]),
            ),
            (
                format!("Unclosed:\n````\n{}\n```\n{}", dir("a"), dir("b")),
                found(&[]),
            ),
            (
                format!("Like `{}` this. {real}", dir("inline")),
                found(&["Real decision."]),
            ),
            (format!("Like ``{}`` this.", dir("double")), found(&[])),
            // A lone backtick is literal text; so is one whose closer is past a blank line.
            (format!("The ` key. {real}"), found(&["Real decision."])),
            (
                format!("The ` key.\n\n{real} and `x`"),
                found(&["Real decision."]),
            ),
            // Backticks inside a directive's summary belong to the directive.
            (
                format!("{} then `code` and {real}", dir("Renamed `a` to ``b``.")),
                found(&["Renamed `a` to ``b``.", "Real decision."]),
            ),
            // A malformed directive in code is not counted either.
            ("`<!-- librarian-session {bad} -->`".to_string(), found(&[])),
        ];
        for (text, want) in cases {
            assert_eq!(directives_in(&text), want, "text {text:?}");
        }
    }

    #[test]
    fn deep_nesting_is_malformed_not_a_stack_overflow() {
        let text = format!("<!-- librarian-session {} -->", "[".repeat(100_000));
        assert_eq!(directives_in(&text), malformed(1));
        let text = format!("<!-- librarian-session {} -->", "{\"a\":".repeat(100_000));
        assert_eq!(directives_in(&text), malformed(1));
    }

    #[test]
    fn nested_opener_inside_a_summary_is_not_a_directive() {
        let inner = r#"see <!-- librarian-session {"summary":"inner"} --> here"#;
        let outer = format!("<!-- librarian-session {} -->", json!({ "summary": inner }));
        assert_eq!(directives_in(&outer), found(&[inner]));
    }

    #[test]
    fn payload_size_limit() {
        let big = "x".repeat(MAX_PAYLOAD);
        let text = format!("<!-- librarian-session {} -->", json!({ "summary": big }));
        let too_long = Directives {
            too_long: 1,
            ..malformed(1)
        };
        assert_eq!(directives_in(&text), too_long);
        let fits = "é".repeat(MAX_PAYLOAD / 2 - 10);
        let text = format!("<!-- librarian-session {} -->", json!({ "summary": fits }));
        assert_eq!(directives_in(&text).found.len(), 1);
    }

    #[test]
    fn unfilled_cases() {
        let cases: &[(&str, bool)] = &[
            ("", true),
            ("  \u{FEFF}\u{A0} ", true),
            ("<one plain-English line>", true),
            ("  <x>  ", true),
            ("<>", true),
            ("<a>b>", true),
            ("<a\nb>", false),
            ("<a\u{2028}b>", false),
            ("<", false),
            ("<a", false),
            ("a>", false),
            ("Chose A <over> B", false),
            ("x <y>", false),
        ];
        for (summary, want) in cases {
            assert_eq!(is_unfilled(summary), *want, "summary {summary:?}");
        }
    }

    #[test]
    fn value_validation() {
        assert_eq!(directive_from_value(&json!("s")), None);
        assert_eq!(directive_from_value(&json!(null)), None);
        assert_eq!(directive_from_value(&json!({"summary": null})), None);
        assert_eq!(
            directive_from_value(&json!({"summary": "s", "refs": {}})),
            None
        );
        assert_eq!(
            directive_from_value(&json!({"summary": "s", "refs": [1]})),
            None
        );
        assert_eq!(
            directive_from_value(&json!({"summary": "s", "refs": ["a"], "x": 1})),
            Some(d("s", &["a"]))
        );
    }

    #[test]
    fn supersedes_is_an_array_of_at_most_16_ids() {
        let with = |v: Value| directive_from_value(&json!({"summary": "s", "supersedes": v}));
        assert_eq!(
            with(json!([" 20261130T100000 ", "20261130T100000", "x"]))
                .unwrap()
                .supersedes,
            ["20261130T100000", "x"]
        );
        assert_eq!(with(json!([])).unwrap().supersedes, Vec::<String>::new());
        let long = "a".repeat(257);
        for bad in [
            json!("20261130T100000"),
            json!(null),
            json!([1]),
            json!([["x"]]),
            json!([""]),
            json!([long]),
            json!(vec!["x"; 17]),
            json!({"id": "x"}),
        ] {
            assert_eq!(with(bad.clone()), None, "{bad}");
        }
        let text = r#"<!-- librarian-session {"summary":"new","supersedes":"20261130T100000"} -->"#;
        assert_eq!(directives_in(text), malformed(1));
        let text =
            r#"<!-- librarian-session {"summary":"new","supersedes":["20261130T100000"]} -->"#;
        assert_eq!(directives_in(text).found[0].supersedes, ["20261130T100000"]);
    }

    #[test]
    fn many_failed_openers_stay_cheap() {
        let valid = r#"<!-- librarian-session {"summary":"first"} -->"#;
        // An unterminated string after every opener: without the bounds each attempt would
        // read the rest of the text.
        let junk = format!(
            "<!-- librarian-session \"{}",
            "<!-- librarian-session ".repeat(200_000)
        );
        let started = std::time::Instant::now();
        // (A string still open at the bound reads as too long; which of the failed openers
        // do is not what this test is about.)
        let text = format!("{valid}{junk}");
        let got = directives_in(&text);
        assert_eq!(
            got,
            Directives {
                too_long: got.too_long,
                ..want(&[d("first", &[])], 200_001, 0)
            }
        );
        // After MAX_FAILED failures later openers are counted without being parsed.
        let text = format!("{junk}{valid}");
        let got = directives_in(&text);
        assert_eq!(
            got,
            Directives {
                too_long: got.too_long,
                ..malformed(200_002)
            }
        );
        assert!(got.too_long <= MAX_FAILED);
        let text = "<!--".repeat(200_000);
        assert_eq!(directives_in(&text), Directives::default());
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        // The bound is per scanner: a capture's later texts are not parsed either.
        let mut scanner = Scanner::default();
        let mut out = Directives::default();
        scanner.scan(&"<!-- librarian-session {".repeat(MAX_FAILED), &mut out);
        scanner.scan(valid, &mut out);
        assert_eq!(out, malformed(MAX_FAILED + 1));
    }

    fn filler() -> impl Strategy<Value = String> {
        "[a-z .,!\n]{0,30}"
    }

    /// Where a directive is put: prose, a fence of `n` backticks or tildes, an inline span of
    /// `n` backticks.
    #[derive(Debug, Clone)]
    enum Place {
        Prose,
        Fence(char, usize),
        Inline(usize),
    }

    fn place() -> impl Strategy<Value = Place> {
        prop_oneof![
            Just(Place::Prose),
            (prop::sample::select(vec!['`', '~']), 3usize..6).prop_map(|(c, n)| Place::Fence(c, n)),
            (1usize..4).prop_map(Place::Inline),
        ]
    }

    proptest! {
        #[test]
        fn never_panics(text in ".{0,300}") {
            let _ = directives_in(&text);
            let _ = directives_in(&format!("<!-- librarian-session {text}"));
        }

        #[test]
        fn never_panics_on_directive_shaped_noise(parts in prop::collection::vec(prop::sample::select(vec![
            "<!--", " ", "librarian-session", "{", "}", "\"summary\"", ":", "\"s\"", ",", "[", "]",
            "\"refs\"", "-->", "\\", "\"", "\u{2028}", "null", "é", "`", "```", "\n", "~~~",
        ]), 0..40)) {
            let _ = directives_in(&parts.concat());
        }

        #[test]
        fn summary_round_trips(s in any::<String>(), refs in prop::collection::vec(any::<String>(), 0..3)) {
            let text = format!("x <!-- librarian-session {} --> y", json!({ "summary": s, "refs": refs }));
            let want = if is_unfilled(&s) {
                Directives { templates: 1, ..Directives::default() }
            } else {
                Directives { found: vec![Directive { summary: s.clone(), refs, supersedes: vec![] }], ..Directives::default() }
            };
            prop_assert_eq!(directives_in(&text), want);
        }

        /// A directive outside code is always found, one inside code never, whatever the
        /// summaries hold (backticks and fences included).
        #[test]
        fn outside_code_is_found_and_inside_is_not(
            parts in prop::collection::vec((filler(), place(), any::<String>()), 0..6),
            tail in filler(),
        ) {
            let mut text = String::new();
            let mut expected = Directives::default();
            for (fill, place, summary) in &parts {
                let line = format!("<!-- librarian-session {} -->", json!({ "summary": summary }));
                text.push_str(fill);
                // Blank lines keep each part in a paragraph of its own.
                text.push_str("\n\n");
                match place {
                    Place::Prose => {
                        text.push_str(&line);
                        if is_unfilled(summary) {
                            expected.templates += 1;
                        } else {
                            expected.found.push(Directive { summary: summary.clone(), refs: vec![], supersedes: vec![] });
                        }
                    }
                    Place::Fence(c, n) => {
                        let fence = c.to_string().repeat(*n);
                        text.push_str(&format!("{fence}\n{line}\n{fence}"));
                    }
                    Place::Inline(n) => {
                        let ticks = "`".repeat(*n);
                        text.push_str(&format!("{ticks}{line}{ticks}"));
                    }
                }
                text.push_str("\n\n");
            }
            text.push_str(&tail);
            prop_assert_eq!(directives_in(&text), expected, "text {:?}", text);
        }
    }
}
