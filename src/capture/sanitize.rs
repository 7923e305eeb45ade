//! Sanitising client-authored text into one inert line (anchor-behaviour §2): the reference's
//! `toInertLine` steps in their exact order, the 2,000 / 512-character cuts counted in `char`s
//! (never splitting one), JavaScript whitespace semantics for trimming, and the word count behind
//! the summary-length warning.

pub(crate) use crate::contract::{WORD_CEILING, WORD_TARGET};
/// The cuts applied to a directive summary and to provenance values (cwd, project, repo): the
/// bounds the record grammar holds every line to (`records::grammar`).
pub(crate) use crate::records::grammar::{PROVENANCE_MAX_CHARS, SUMMARY_MAX_CHARS};
use crate::records::text::is_js_whitespace;

/// The reference's `toInertLine`, steps 1-6 of anchor-behaviour §2, cut at `max_chars` chars
/// (Rust `char`s, never splitting one; the end is trimmed again after the cut).
pub(crate) fn inert_line(raw: &str, max_chars: usize) -> String {
    inert_line_cut(raw, max_chars).0
}

/// [`inert_line`], and whether the line was longer than `max_chars` and cut.
pub(crate) fn inert_line_cut(raw: &str, max_chars: usize) -> (String, bool) {
    let s = join_line_breaks(raw);
    let s = strip_csi(&s);
    let s: String = s.chars().filter(|&c| !is_deleted(c)).collect();
    let s = collapse_spaces(&s);
    let s = js_trim(&s);
    (
        cut_chars(s, max_chars),
        s.char_indices().nth(max_chars).is_some(),
    )
}

/// `raw.trim().split(/\s+/)` token count with JS `\s` semantics; `""` counts 0.
pub(crate) fn word_count(raw: &str) -> usize {
    raw.split(is_js_whitespace)
        .filter(|t| !t.is_empty())
        .count()
}

/// `String.prototype.trim`.
pub(crate) fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// Step 1: each run of `[\r\n\t\f\v]+` becomes one space.
fn join_line_breaks(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut in_run = false;
    for c in raw.chars() {
        if matches!(c, '\r' | '\n' | '\t' | '\u{C}' | '\u{B}') {
            if !in_run {
                out.push(' ');
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
    out
}

/// Step 2: delete ANSI CSI sequences `ESC [ [0-9;]* [A-Za-z]` (leftmost, non-overlapping).
fn strip_csi(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == 0x1b && bytes.get(i + 1) == Some(&b'[') {
            let mut j = i + 2;
            while j < bytes.len() && (bytes[j].is_ascii_digit() || bytes[j] == b';') {
                j += 1;
            }
            if j < bytes.len() && bytes[j].is_ascii_alphabetic() {
                // Every boundary here sits next to an ASCII byte, so it is a char boundary.
                out.push_str(&s[copied..i]);
                copied = j + 1;
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&s[copied..]);
    out
}

/// Steps 3 and 4 (both pure deletions, so one filter): C0 and C1 controls, DEL, zero-width and
/// bidi formatting characters, word joiner and BOM.
fn is_deleted(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1F}'
            | '\u{7F}'..='\u{9F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'
            | '\u{FEFF}'
    )
}

/// Step 5, first half: runs of two or more ASCII spaces become one.
fn collapse_spaces(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_space = false;
    for c in s.chars() {
        if c == ' ' && prev_space {
            continue;
        }
        prev_space = c == ' ';
        out.push(c);
    }
    out
}

/// Step 6: keep the first `max` chars, then trim the end again.
fn cut_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => s[..at].trim_end_matches(is_js_whitespace).to_owned(),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn inert_line_cases() {
        let cases: &[(&str, &str)] = &[
            ("", ""),
            ("  plain  ", "plain"),
            ("a\r\n\tb", "a b"),
            ("a\n\n\nb", "a b"),
            ("a \n b", "a b"),
            ("a\u{B}\u{C}b", "a b"),
            ("\x1b[31mred\x1b[0m", "red"),
            ("\x1b[1;2Hx", "x"),
            ("\x1b[?25hx", "[?25hx"),
            ("\x1b]0;title\x07", "]0;title"),
            // Step 2 runs before step 3: deleting the NUL does not create a CSI to strip.
            ("\x1b\0[31mx", "[31mx"),
            // Step 1 runs before step 2: a tab inside a CSI breaks it.
            ("\x1b[3\t1m", "[3 1m"),
            ("a\0b\x07c\x7fd", "abcd"),
            ("a\u{85}b", "ab"),
            ("a\u{9F}b\u{80}c", "abc"),
            ("a\u{200B}b\u{200D}c\u{200F}d", "abcd"),
            ("\u{202E}evil\u{202C}", "evil"),
            ("a\u{2060}b", "ab"),
            ("\u{FEFF}bom", "bom"),
            ("a  \u{200B} b", "a b"),
            ("\u{A0}\u{3000}a\u{2028}b\u{205F}\u{1680}", "a\u{2028}b"),
            ("\u{2029}x\u{2000}\u{200A}\u{202F}", "x"),
            ("a\u{A0}\u{A0}b", "a\u{A0}\u{A0}b"),
            ("---\nadmin: true", "--- admin: true"),
            ("Chose A <over> B -->", "Chose A <over> B -->"),
        ];
        for (raw, want) in cases {
            assert_eq!(inert_line(raw, SUMMARY_MAX_CHARS), *want, "input {raw:?}");
        }
    }

    #[test]
    fn cut_counts_chars_and_trims_again() {
        let cases: Vec<(String, usize, String)> = vec![
            ("é".repeat(2001), 2000, "é".repeat(2000)),
            ("😀".repeat(2001), 2000, "😀".repeat(2000)),
            (format!("{} b", "a".repeat(1999)), 2000, "a".repeat(1999)),
            (
                format!("{}\u{3000}b", "a".repeat(511)),
                512,
                "a".repeat(511),
            ),
            ("abc".to_owned(), 3, "abc".to_owned()),
            ("abcd".to_owned(), 3, "abc".to_owned()),
            ("abc".to_owned(), 0, String::new()),
        ];
        for (raw, max, want) in cases {
            assert_eq!(inert_line(&raw, max), want, "max {max}");
        }
    }

    #[test]
    fn word_count_cases() {
        let cases: &[(&str, usize)] = &[
            ("", 0),
            ("   ", 0),
            ("\u{FEFF}\u{A0}", 0),
            ("one", 1),
            (" one  two\tthree\n", 3),
            ("a\u{A0}b\u{2028}c\u{3000}d\u{FEFF}e", 5),
            // U+0085 is not JS whitespace.
            ("a\u{85}b", 1),
            ("a\u{200B}b", 1),
        ];
        for (raw, want) in cases {
            assert_eq!(word_count(raw), *want, "input {raw:?}");
        }
    }

    #[test]
    fn budget_constants_agree_with_the_instructions() {
        assert_eq!((WORD_TARGET, WORD_CEILING), (40, 60));
        assert_eq!((SUMMARY_MAX_CHARS, PROVENANCE_MAX_CHARS), (2000, 512));
    }

    fn nasty_string() -> impl Strategy<Value = String> {
        let special = prop::sample::select(vec![
            ' ', '\t', '\n', '\r', '\u{B}', '\u{C}', '\0', '\x1b', '[', '3', ';', 'm', '\u{7F}',
            '\u{85}', '\u{9F}', '\u{A0}', '\u{200B}', '\u{200F}', '\u{202E}', '\u{2028}',
            '\u{2029}', '\u{2060}', '\u{3000}', '\u{FEFF}', 'é', '😀',
        ]);
        prop::collection::vec(prop_oneof![any::<char>(), special], 0..120)
            .prop_map(|cs| cs.into_iter().collect())
    }

    proptest! {
        #[test]
        fn inert_output_is_one_clean_line(raw in nasty_string(), max in prop_oneof![0usize..40, Just(SUMMARY_MAX_CHARS)]) {
            let out = inert_line(&raw, max);
            prop_assert!(out.chars().count() <= max);
            prop_assert!(!out.chars().any(|c| c.is_control() || is_deleted(c)));
            prop_assert!(!out.contains('\n') && !out.contains('\r') && !out.contains("  "));
            prop_assert_eq!(js_trim(&out), out.as_str());
            prop_assert_eq!(inert_line(&out, max), out.clone());
        }

        #[test]
        fn word_count_matches_js_split(raw in nasty_string()) {
            // A token starts wherever a non-whitespace char follows whitespace or the start.
            let mut prev_ws = true;
            let mut want = 0;
            for c in raw.chars() {
                if !is_js_whitespace(c) && prev_ws {
                    want += 1;
                }
                prev_ws = is_js_whitespace(c);
            }
            prop_assert_eq!(word_count(&raw), want);
        }
    }
}
