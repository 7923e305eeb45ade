//! Session directives (anchor-behaviour §1 with DESIGN §4's JSON-aware fix): finding the newest
//! `<!-- librarian-session {json} -->` in a text, validating its payload, and the
//! unfilled-template rule. The payload is read as one JSON value, so a summary may contain `-->`.

use serde_json::Value;

use crate::capture::sanitize::js_trim;
use crate::records::text::is_js_whitespace;

const OPEN: &str = "<!--";
const TAG: &str = "librarian-session";
const CLOSE: &str = "-->";
/// Only this many openers, counted from the end of the text, are tried: it bounds the JSON work
/// on adversarial text (each attempt reads at most the rest of the text).
const MAX_OPENERS: usize = 64;

/// A well-formed directive payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    /// Raw and untrimmed, exactly as in the JSON; sanitising happens later.
    pub summary: String,
    /// Raw ref strings; empty when `refs` was absent.
    pub refs: Vec<String>,
}

/// The outcome of scanning one text for directives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirectiveScan {
    /// The newest well-formed directive, with a real summary.
    Found(Directive),
    /// The newest well-formed directive is an unfilled template or has a blank summary.
    Template,
    /// There were directive openers but none of those tried parsed.
    Malformed,
    /// No directive opener at all.
    None,
}

/// Scans `text` for `<!-- librarian-session` directives and returns the NEWEST (last in text)
/// well-formed one. A malformed last opener falls back to an earlier well-formed one (dedupe
/// absorbs a re-presented old line). Only the last 64 openers are tried.
pub fn newest_directive(text: &str) -> DirectiveScan {
    let mut end = text.len();
    let mut tried = 0;
    while tried < MAX_OPENERS {
        let Some(at) = text[..end].rfind(OPEN) else {
            break;
        };
        end = at;
        let Some(payload) = opener_payload(&text[at..]) else {
            continue;
        };
        tried += 1;
        if let Some(directive) = parse_payload(payload) {
            return if is_unfilled(&directive.summary) {
                DirectiveScan::Template
            } else {
                DirectiveScan::Found(directive)
            };
        }
    }
    if tried == 0 {
        DirectiveScan::None
    } else {
        DirectiveScan::Malformed
    }
}

/// True when the trimmed summary is empty or matches `^<.*>$` ('.' not matching a line
/// terminator): an unfilled template.
pub fn is_unfilled(summary: &str) -> bool {
    let t = js_trim(summary);
    if t.is_empty() {
        return true;
    }
    let Some(inner) = t.strip_prefix('<').and_then(|r| r.strip_suffix('>')) else {
        return false;
    };
    !inner.contains(['\n', '\r', '\u{2028}', '\u{2029}'])
}

/// Validates a JSON value as a directive payload: an object with a string `summary`, and `refs`
/// absent or an array of strings (`null` or non-string elements make it invalid). Unknown keys
/// are ignored.
pub fn directive_from_value(v: &Value) -> Option<Directive> {
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
    Some(Directive { summary, refs })
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

/// Reads one JSON value from the start of `payload`, then requires optional whitespace and `-->`.
fn parse_payload(payload: &str) -> Option<Directive> {
    let mut stream = serde_json::Deserializer::from_str(payload).into_iter::<Value>();
    let value = stream.next()?.ok()?;
    let rest = payload.get(stream.byte_offset()..)?;
    if !rest.trim_start_matches(is_js_whitespace).starts_with(CLOSE) {
        return None;
    }
    directive_from_value(&value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn found(summary: &str, refs: &[&str]) -> DirectiveScan {
        DirectiveScan::Found(Directive {
            summary: summary.to_owned(),
            refs: refs.iter().map(|r| (*r).to_owned()).collect(),
        })
    }

    #[test]
    fn scan_cases() {
        let cases: Vec<(&str, DirectiveScan)> = vec![
            ("", DirectiveScan::None),
            ("no directive here", DirectiveScan::None),
            (
                r#"<!-- librarian-session {"summary":"Did X"} -->"#,
                found("Did X", &[]),
            ),
            (
                r#"<!--librarian-session {"summary":"tight"}-->"#,
                found("tight", &[]),
            ),
            (
                "<!--\n librarian-session\n\t{\"summary\":\"ws\"}\n-->",
                found("ws", &[]),
            ),
            (
                "<!--\u{A0}librarian-session\u{2028}{\"summary\":\"js ws\"}\u{3000}-->",
                found("js ws", &[]),
            ),
            (
                r#"<!-- librarian-session {"summary":"a","refs":["x.md","y/z.md"]} -->"#,
                found("a", &["x.md", "y/z.md"]),
            ),
            (
                r#"<!-- librarian-session {"summary":"a","refs":[],"extra":{"k":1}} -->"#,
                found("a", &[]),
            ),
            (
                r#"<!-- librarian-session {"summary":"  keep raw  "} -->"#,
                found("  keep raw  ", &[]),
            ),
            (
                r#"<!-- librarian-session {"summary":"a --> b <!-- c"} -->"#,
                found("a --> b <!-- c", &[]),
            ),
            (
                r#"<!-- librarian-session {"summary":"Chose A <over> B"} -->"#,
                found("Chose A <over> B", &[]),
            ),
            (
                r#"<!-- librarian-session {"summary":"one"} --> then <!-- librarian-session {"summary":"two"} -->"#,
                found("two", &[]),
            ),
            (
                r#"<!-- librarian-session {"summary":"old"} --> <!-- librarian-session {"summary":"new" -->"#,
                found("old", &[]),
            ),
            (
                r#"<!-- librarian-session {"summary":"x","refs":null} -->"#,
                DirectiveScan::Malformed,
            ),
            (
                r#"<!-- librarian-session {"summary":"x","refs":"a.md"} -->"#,
                DirectiveScan::Malformed,
            ),
            (
                r#"<!-- librarian-session {"summary":"x","refs":["a.md",null]} -->"#,
                DirectiveScan::Malformed,
            ),
            (
                r#"<!-- librarian-session {"summary":5} -->"#,
                DirectiveScan::Malformed,
            ),
            (
                r#"<!-- librarian-session {"refs":[]} -->"#,
                DirectiveScan::Malformed,
            ),
            (
                r#"<!-- librarian-session ["summary"] -->"#,
                DirectiveScan::Malformed,
            ),
            (
                r#"<!-- librarian-session "just a string" -->"#,
                DirectiveScan::Malformed,
            ),
            (
                r#"<!-- librarian-session {"summary":"no close"}"#,
                DirectiveScan::Malformed,
            ),
            (
                r#"<!-- librarian-session {"summary":"x"} junk -->"#,
                DirectiveScan::Malformed,
            ),
            (
                r#"<!-- librarian-session {"summary":"x"}{"summary":"y"} -->"#,
                DirectiveScan::Malformed,
            ),
            (
                "<!-- librarian-session {{{{[[[[ -->",
                DirectiveScan::Malformed,
            ),
            ("<!-- librarian-session -->", DirectiveScan::Malformed),
            (
                "<!-- librarian-session <!-- librarian-session <!--",
                DirectiveScan::Malformed,
            ),
            (
                r#"<!-- librarian-session{"summary":"no space"} -->"#,
                DirectiveScan::None,
            ),
            (
                r#"<!-- librarian-sessions {"summary":"x"} -->"#,
                DirectiveScan::None,
            ),
            (
                r#"<!-- LIBRARIAN-SESSION {"summary":"x"} -->"#,
                DirectiveScan::None,
            ),
            (
                r#"<!- librarian-session {"summary":"x"} -->"#,
                DirectiveScan::None,
            ),
            (
                r#"<!-- librarian-session {"summary":""} -->"#,
                DirectiveScan::Template,
            ),
            (
                r#"<!-- librarian-session {"summary":" \n "} -->"#,
                DirectiveScan::Template,
            ),
            (
                r#"<!-- librarian-session {"summary":"<one plain-English line>","refs":["<paths touched, relative to the knowledge base>"]} -->"#,
                DirectiveScan::Template,
            ),
            (
                r#"<!-- librarian-session {"summary":"real"} --> <!-- librarian-session {"summary":"<todo>"} -->"#,
                DirectiveScan::Template,
            ),
            (
                r#"<!-- librarian-session {"summary":"<todo>"} --> <!-- librarian-session {"summary":"real"} -->"#,
                found("real", &[]),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(newest_directive(text), want, "text {text:?}");
        }
    }

    #[test]
    fn deep_nesting_is_malformed_not_a_stack_overflow() {
        let text = format!("<!-- librarian-session {} -->", "[".repeat(100_000));
        assert_eq!(newest_directive(&text), DirectiveScan::Malformed);
        let text = format!("<!-- librarian-session {} -->", "{\"a\":".repeat(100_000));
        assert_eq!(newest_directive(&text), DirectiveScan::Malformed);
    }

    #[test]
    fn nested_opener_inside_a_summary_is_not_a_directive() {
        let inner = r#"see <!-- librarian-session {"summary":"inner"} --> here"#;
        let outer = format!("<!-- librarian-session {} -->", json!({ "summary": inner }));
        assert_eq!(newest_directive(&outer), found(inner, &[]));
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
            Some(Directive {
                summary: "s".into(),
                refs: vec!["a".into()]
            })
        );
    }

    #[test]
    fn many_openers_stay_cheap() {
        let valid = r#"<!-- librarian-session {"summary":"first"} -->"#;
        let junk = "<!-- librarian-session {\"summary\": <!-- ";
        let text = format!("{valid}{}", junk.repeat(100_000));
        // The valid directive lies beyond the last 64 openers: bounded work, reported as malformed.
        assert_eq!(newest_directive(&text), DirectiveScan::Malformed);
        let text = format!("{}{valid}", junk.repeat(100_000));
        assert_eq!(newest_directive(&text), found("first", &[]));
        let text = "<!--".repeat(200_000);
        assert_eq!(newest_directive(&text), DirectiveScan::None);
        let text = format!("{valid}{}", "<!-- librarian-session ".repeat(60));
        assert_eq!(newest_directive(&text), found("first", &[]));
    }

    proptest! {
        #[test]
        fn never_panics(text in ".{0,300}") {
            let _ = newest_directive(&text);
            let _ = newest_directive(&format!("<!-- librarian-session {text}"));
        }

        #[test]
        fn never_panics_on_directive_shaped_noise(parts in prop::collection::vec(prop::sample::select(vec![
            "<!--", " ", "librarian-session", "{", "}", "\"summary\"", ":", "\"s\"", ",", "[", "]",
            "\"refs\"", "-->", "\\", "\"", "\u{2028}", "null", "é",
        ]), 0..40)) {
            let _ = newest_directive(&parts.concat());
        }

        #[test]
        fn summary_round_trips(s in any::<String>(), refs in prop::collection::vec(any::<String>(), 0..3)) {
            let text = format!("x <!-- librarian-session {} --> y", json!({ "summary": s, "refs": refs }));
            let want = if is_unfilled(&s) {
                DirectiveScan::Template
            } else {
                DirectiveScan::Found(Directive { summary: s.clone(), refs })
            };
            prop_assert_eq!(newest_directive(&text), want);
        }
    }
}
