//! Finding a decision: the filter `log --grep/--since/--until`, `recent` and the MCP
//! `librarian-recent` tool's `query` share. Every word must appear, case-insensitively, in the
//! entry's summary, project or cited paths; the day must lie within the bounds.

use super::Entry;
use crate::clock::{self, Instant};

/// Which entries to keep. The default keeps every entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntryFilter {
    /// Lowercased words; each must appear in [`grep_text`].
    pub words: Vec<String>,
    /// First day kept (`YYYY-MM-DD`), inclusive.
    pub since: Option<String>,
    /// Last day kept, inclusive.
    pub until: Option<String>,
}

impl EntryFilter {
    /// A filter on the words of every `--grep` value (or a `query`): all of them must match.
    pub fn with_words<S: AsRef<str>>(mut self, texts: &[S]) -> EntryFilter {
        self.words.extend(
            texts
                .iter()
                .flat_map(|t| t.as_ref().split_whitespace())
                .map(str::to_lowercase),
        );
        self
    }

    /// Whether an entry of `day` passes.
    pub fn matches(&self, day: &str, e: &Entry) -> bool {
        if self.since.as_deref().is_some_and(|s| day < s)
            || self.until.as_deref().is_some_and(|u| day > u)
        {
            return false;
        }
        self.words.is_empty() || {
            let text = grep_text(e);
            self.words.iter().all(|w| text.contains(w.as_str()))
        }
    }
}

/// What `--grep` searches: the summary, the project and each cited path, lowercased, one per
/// line (so no word matches across two of them).
pub fn grep_text(e: &Entry) -> String {
    let mut text = e.summary.to_lowercase();
    for part in e
        .project()
        .into_iter()
        .chain(e.refs.iter().map(|r| r.path.as_str()))
    {
        text.push('\n');
        text.push_str(&part.to_lowercase());
    }
    text
}

/// Reads a `--since`/`--until` value: a day `YYYY-MM-DD`, or `Nd` / `Nw` for N days or weeks
/// before today (UTC), as a day.
pub fn parse_day_bound(value: &str, now: Instant) -> Result<String, String> {
    let v = value.trim();
    if clock::is_day(v) {
        return Ok(v.to_string());
    }
    let unit = match v.chars().last() {
        Some('d') => 1,
        Some('w') => 7,
        _ => return Err(bad_bound(value)),
    };
    let n: i64 = v[..v.len() - 1]
        .parse()
        .ok()
        .filter(|n| (0..=1_000_000).contains(n))
        .ok_or_else(|| bad_bound(value))?;
    Ok(now.plus_days(-n * unit).day())
}

fn bad_bound(value: &str) -> String {
    format!("{value:?} is not a date: use YYYY-MM-DD, or Nd / Nw for N days or weeks ago")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{NoteRef, Workspace};
    use proptest::prelude::*;

    fn entry(summary: &str, project: Option<&str>, refs: &[&str]) -> Entry {
        Entry {
            id: "id".into(),
            session_id: None,
            time: "2026-11-30T10:00:00.000Z".into(),
            summary: summary.into(),
            refs: refs
                .iter()
                .map(|p| NoteRef::new(*p, "sha256:00", None))
                .collect(),
            workspace: project.map(|p| Workspace::new("/w", p, None)),
            client: None,
            extra: Default::default(),
        }
    }

    #[test]
    fn every_word_must_match_summary_project_or_paths() {
        let e = entry(
            "User chose a FORTNIGHTLY Cadence.",
            Some("Newsletter"),
            &["Notes/publishing-cadence.md"],
        );
        let f = |words: &[&str]| {
            EntryFilter::default()
                .with_words(words)
                .matches("2026-11-30", &e)
        };
        assert!(f(&[]));
        assert!(f(&["cadence"]));
        assert!(f(&["fortnightly newsletter"]));
        assert!(f(&["Fortnightly", "publishing-cadence.md"]));
        assert!(!f(&["cadence weekly"]), "every word must match");
        assert!(!f(&["cadence.newsletter"]), "no match across two fields");
        let accented = entry("Décidé: l'ÉTÉ", None, &[]);
        assert!(EntryFilter::default()
            .with_words(&["été"])
            .matches("d", &accented));
    }

    #[test]
    fn day_bounds_are_inclusive() {
        let e = entry("s", None, &[]);
        let f = EntryFilter {
            since: Some("2026-11-01".into()),
            until: Some("2026-11-30".into()),
            ..Default::default()
        };
        assert!(f.matches("2026-11-01", &e) && f.matches("2026-11-30", &e));
        assert!(!f.matches("2026-10-31", &e) && !f.matches("2026-12-01", &e));
    }

    #[test]
    fn bounds_parse_days_and_ago() {
        let now = clock::parse_instant("2026-12-01T10:00:00.000Z").unwrap();
        assert_eq!(parse_day_bound("2026-11-05", now).unwrap(), "2026-11-05");
        assert_eq!(parse_day_bound("0d", now).unwrap(), "2026-12-01");
        assert_eq!(parse_day_bound("3d", now).unwrap(), "2026-11-28");
        assert_eq!(parse_day_bound("2w", now).unwrap(), "2026-11-17");
        for bad in [
            "",
            "d",
            "-1d",
            "3x",
            "2026-02-30",
            "yesterday",
            "1.5w",
            "99999999999d",
        ] {
            assert!(parse_day_bound(bad, now).is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn any_text_is_a_valid_bound_or_a_clear_error(s in ".{0,24}") {
            let now = clock::parse_instant("2026-12-01T10:00:00.000Z").unwrap();
            match parse_day_bound(&s, now) {
                Ok(day) => prop_assert!(clock::is_day(&day)),
                Err(msg) => prop_assert!(msg.contains("is not a date")),
            }
        }

        #[test]
        fn a_word_of_the_summary_always_matches(words in proptest::collection::vec("[\\p{L}\\p{N}]{1,8}", 1..6), pick in 0usize..6) {
            let summary = words.join(" ");
            let e = entry(&summary, None, &[]);
            let w = &words[pick % words.len()];
            prop_assert!(EntryFilter::default().with_words(&[w.to_uppercase()]).matches("d", &e) || w.to_uppercase().to_lowercase() != w.to_lowercase());
        }
    }
}
