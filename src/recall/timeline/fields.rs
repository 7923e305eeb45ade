//! What one field of the timeline's page holds, whatever the record holds: shown as data (its
//! controls, line breaks and bidi and invisible format characters as `\u{XXXX}`, as a terminal
//! shows them: `records::text::field_safe`) and bounded (a summary at the 2,000 characters a
//! capture keeps, the other fields at their own bounds, then a visible mark), so a forged line
//! can neither reorder the fields next to it nor make a page no browser finishes loading
//! (spec/timeline.md, "Every summary is data").

use crate::recall::served;
use crate::records::grammar::{PROVENANCE_MAX_CHARS, SUMMARY_MAX_CHARS};
use crate::records::text::field_safe;
use std::borrow::Cow;

/// The bound of a summary: what a capture keeps.
pub(super) const SUMMARY: usize = SUMMARY_MAX_CHARS;
/// The bound of a project or a client: what a capture keeps of provenance.
pub(super) const NAME: usize = PROVENANCE_MAX_CHARS;
/// The bound of a cited path, and of what recall appends to it (a rename, the candidates).
pub(super) const PATH: usize = served::PATH_MAX_CHARS;
/// The bound of the short fields: an id, a hash, a day, a time.
pub(super) const SHORT: usize = 64;
/// The most cited notes a decision shows (as many as recall serves).
pub(super) const REFS: usize = served::REFS_MAX;

/// `text` as the page shows it: cut after `max` characters with recall's own mark
/// ([`served::cut`], which leaves a field recall already cut as it is), then made
/// [`field_safe`]. Borrowed when it is short and holds nothing to escape.
pub(super) fn shown(text: &str, max: usize) -> Cow<'_, str> {
    match served::cut(text, max) {
        Cow::Borrowed(t) => field_safe(t),
        Cow::Owned(t) => Cow::Owned(field_safe(&t).into_owned()),
    }
}

/// [`shown`] of a field already owned, kept as it is when nothing is cut or escaped.
pub(super) fn shown_owned(text: String, max: usize) -> String {
    let changed = match shown(&text, max) {
        Cow::Owned(changed) => Some(changed),
        Cow::Borrowed(_) => None,
    };
    changed.unwrap_or(text)
}

/// [`shown`] of an optional field.
pub(super) fn shown_opt(text: Option<&str>, max: usize) -> Option<Cow<'_, str>> {
    text.map(|t| shown(t, max))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_long_field_is_cut_with_a_mark_and_a_control_is_shown() {
        assert!(matches!(shown("plain", 10), Cow::Borrowed("plain")));
        assert_eq!(shown("a\u{202E}b\nc", 10), "a\\u{202E}b\\u{000A}c");
        assert_eq!(shown("abcdef", 3), "abc… [cut: 3 more characters]");
        assert_eq!(shown("abc", 3), "abc");
        assert_eq!(
            shown("\u{202E}\u{202E}x", 1),
            "\\u{202E}… [cut: 2 more characters]"
        );
        // What recall already cut is not cut again.
        assert_eq!(
            shown("abc… [cut: 3 more characters]", 3),
            "abc… [cut: 3 more characters]"
        );
    }

    proptest! {
        /// Whatever a field holds, what the page shows of it is at most the bound's characters,
        /// each escaped in at most 8, plus the mark, and it holds no control.
        #[test]
        fn a_field_is_bounded_and_inert(text in "\\PC{0,300}|[\\x00-\\x1f\u{2028}\u{202a}-\u{202e}\u{2066}-\u{2069}]{0,300}", max in 1usize..120) {
            let s = shown(&text, max);
            prop_assert!(s.chars().count() <= 8 * max + 60, "{}", s.chars().count());
            let inert = !s.contains(['\n', '\u{202E}', '\u{2066}']);
            prop_assert!(inert, "{:?}", s);
            prop_assert_eq!(s.contains("… [cut: "), text.chars().count() > max);
        }
    }
}
