//! Finding a decision: the filter `log --grep/--since/--until`, `recent` and the MCP
//! `librarian-recent` tool's `query` share. Every word must appear, case-insensitively, in the
//! entry's summary, project or cited paths; the entry's recorded time must lie within the
//! bounds, which are instants: a day given by name is a calendar day of the clock's zone.

use super::Entry;
use crate::clock::approx::{self, DateError, When};
use crate::clock::{Clock, Instant};

/// Which entries to keep. The default keeps every entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct EntryFilter {
    /// Lowercased words; each must appear in [`grep_text`].
    pub words: Vec<String>,
    /// Earliest recorded time kept (`YYYY-MM-DDTHH:MM:SS.mmmZ`), inclusive.
    pub from: Option<String>,
    /// Latest recorded time kept, inclusive.
    pub until: Option<String>,
    /// The client that wrote it (lowercased; whole label, as `--client claude`).
    pub client: Option<String>,
}

impl EntryFilter {
    /// A filter on the words of every `--grep` value (or a `query`): all of them must match.
    pub(crate) fn with_words<S: AsRef<str>>(mut self, texts: &[S]) -> EntryFilter {
        self.words.extend(
            texts
                .iter()
                .flat_map(|t| t.as_ref().split_whitespace())
                .map(str::to_lowercase),
        );
        self
    }

    /// Keeps entries from `from` on; of two lower bounds the later wins.
    pub fn since_instant(mut self, from: Instant) -> EntryFilter {
        let iso = from.iso();
        if self.from.as_ref().is_none_or(|f| *f < iso) {
            self.from = Some(iso);
        }
        self
    }

    /// Keeps entries up to `until` (inclusive); of two upper bounds the earlier wins.
    pub fn until_instant(mut self, until: Instant) -> EntryFilter {
        let iso = until.iso();
        if self.until.as_ref().is_none_or(|u| *u > iso) {
            self.until = Some(iso);
        }
        self
    }

    /// Keeps the entries of one calendar day (`YYYY-MM-DD`) of `clock`'s zone.
    pub fn on_day(self, day: &str, clock: &Clock) -> Result<EntryFilter, DateError> {
        let (from, until) =
            day_span(day, clock).ok_or_else(|| DateError::NotADay(day.to_string()))?;
        Ok(self.since_instant(from).until_instant(until))
    }

    /// Keeps the entries of one client (`None` keeps every entry).
    pub(crate) fn of_client(mut self, client: Option<&str>) -> EntryFilter {
        self.client = client.map(str::to_lowercase);
        self
    }

    /// Whether an entry passes.
    pub fn matches(&self, e: &Entry) -> bool {
        if self.from.as_deref().is_some_and(|f| e.time.as_str() < f)
            || self.until.as_deref().is_some_and(|u| e.time.as_str() > u)
            || self
                .client
                .as_ref()
                .is_some_and(|c| e.client.as_deref().map(str::to_lowercase).as_ref() != Some(c))
        {
            return false;
        }
        self.words.is_empty() || {
            let text = grep_text(e);
            self.words.iter().all(|w| text.contains(w.as_str()))
        }
    }

    /// The first and last UTC day an entry kept may be filed under (for an index that prunes
    /// by day file before it compares times).
    pub(crate) fn day_range(&self) -> (Option<&str>, Option<&str>) {
        (
            self.from.as_deref().and_then(|f| f.get(..10)),
            self.until.as_deref().and_then(|u| u.get(..10)),
        )
    }
}

/// The first and the last instant of a calendar day of `clock`'s zone.
pub fn day_span(day: &str, clock: &Clock) -> Option<(Instant, Instant)> {
    let from = clock.start_of(day)?;
    let next = clock.start_of(&crate::clock::add_days(day, 1)?)?;
    Some((from, Instant(next.0 - 1)))
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

/// The filter of `--grep`, `--since` and `--until` (each date as `git log` reads it, days in
/// `clock`'s zone): `--since DAY` keeps that day whole, `--until DAY` too.
pub(crate) fn parse_bounds(
    since: Option<&str>,
    until: Option<&str>,
    now: Instant,
    clock: &Clock,
) -> Result<EntryFilter, DateError> {
    let bound = |v: &str, end: bool| -> Result<Instant, DateError> {
        Ok(match approx::parse(v, now, clock)? {
            When::Day(d) => {
                let (from, to) = day_span(&d, clock).ok_or_else(|| bad_day(&d))?;
                if end {
                    to
                } else {
                    from
                }
            }
            When::At(at) => at,
        })
    };
    let from = since.map(|v| bound(v, false)).transpose()?;
    let to = until.map(|v| bound(v, true)).transpose()?;
    if let (Some(s), Some(u), Some(a), Some(b)) = (since, until, from, to) {
        if a > b {
            return Err(DateError::Reversed {
                since: s.to_string(),
                until: u.to_string(),
            });
        }
    }
    let mut f = EntryFilter::default();
    if let Some(at) = from {
        f = f.since_instant(at);
    }
    if let Some(at) = to {
        f = f.until_instant(at);
    }
    Ok(f)
}

fn bad_day(day: &str) -> DateError {
    DateError::PastTheCalendar(day.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock;
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
            supersedes: None,
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
        let f = |words: &[&str]| EntryFilter::default().with_words(words).matches(&e);
        assert!(f(&[]));
        assert!(f(&["cadence"]));
        assert!(f(&["fortnightly newsletter"]));
        assert!(f(&["Fortnightly", "publishing-cadence.md"]));
        assert!(!f(&["cadence weekly"]), "every word must match");
        assert!(!f(&["cadence.newsletter"]), "no match across two fields");
        let accented = entry("Décidé: l'ÉTÉ", None, &[]);
        assert!(EntryFilter::default()
            .with_words(&["été"])
            .matches(&accented));
    }

    fn at_time(time: &str) -> Entry {
        Entry {
            time: time.into(),
            ..entry("s", None, &[])
        }
    }

    #[test]
    fn day_bounds_are_inclusive_and_local() {
        let now = clock::parse_instant("2026-12-01T10:00:00.000Z").unwrap();
        let f = parse_bounds(Some("2026-11-01"), Some("2026-11-30"), now, &Clock::Utc).unwrap();
        assert!(f.matches(&at_time("2026-11-01T00:00:00.000Z")));
        assert!(f.matches(&at_time("2026-11-30T23:59:59.999Z")));
        assert!(!f.matches(&at_time("2026-10-31T23:59:59.999Z")));
        assert!(!f.matches(&at_time("2026-12-01T00:00:00.000Z")));
        assert_eq!(f.day_range(), (Some("2026-11-01"), Some("2026-11-30")));
        // Auckland is 13 hours ahead in November: its 2026-11-30 starts on the 29th, UTC.
        let nz = Clock::Zone(jiff::tz::TimeZone::get("Pacific/Auckland").unwrap());
        let f = EntryFilter::default().on_day("2026-11-30", &nz).unwrap();
        assert!(f.matches(&at_time("2026-11-29T11:00:00.000Z")));
        assert!(!f.matches(&at_time("2026-11-30T11:00:00.000Z")));
        assert_eq!(f.day_range(), (Some("2026-11-29"), Some("2026-11-30")));
        assert!(EntryFilter::default().on_day("2026-02-30", &nz).is_err());
    }

    #[test]
    fn bounds_parse_days_words_and_ago() {
        let now = clock::parse_instant("2026-12-01T10:00:00.000Z").unwrap();
        let from = |v: &str| parse_bounds(Some(v), None, now, &Clock::Utc).unwrap().from;
        assert_eq!(from("2026-11-05").unwrap(), "2026-11-05T00:00:00.000Z");
        assert_eq!(from("0d").unwrap(), "2026-12-01T00:00:00.000Z");
        assert_eq!(from("3d").unwrap(), "2026-11-28T00:00:00.000Z");
        assert_eq!(from("2w").unwrap(), "2026-11-17T00:00:00.000Z");
        assert_eq!(from("yesterday").unwrap(), "2026-11-30T10:00:00.000Z");
        let until = parse_bounds(None, Some("2.weeks.ago"), now, &Clock::Utc).unwrap();
        assert_eq!(until.until.unwrap(), "2026-11-17T10:00:00.000Z");
        for bad in ["", "d", "-1d", "3x", "2026-02-30", "1.5w", "99999999999d"] {
            assert!(
                parse_bounds(Some(bad), None, now, &Clock::Utc).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_since_after_the_until_is_refused_one_day_is_not() {
        let now = clock::parse_instant("2026-12-01T10:00:00.000Z").unwrap();
        let bounds = |s: &str, u: &str| parse_bounds(Some(s), Some(u), now, &Clock::Utc);
        assert!(matches!(
            bounds("2026-12-08", "2026-12-01"),
            Err(DateError::Reversed { .. })
        ));
        assert!(matches!(
            bounds("0d", "2w"),
            Err(DateError::Reversed { .. })
        ));
        assert!(bounds("2026-12-01", "2026-12-01").is_ok());
        assert!(bounds("2w", "0d").is_ok());
    }

    proptest! {
        #[test]
        fn any_text_is_a_valid_bound_or_a_clear_error(s in ".{0,24}") {
            let now = clock::parse_instant("2026-12-01T10:00:00.000Z").unwrap();
            match parse_bounds(Some(&s), Some(&s), now, &Clock::Utc) {
                Ok(f) => prop_assert!(f.from.is_some() && f.until.is_some()),
                Err(e) => prop_assert!(e.to_string().contains("is not a date") || e.to_string().contains("calendar")),
            }
        }

        #[test]
        fn a_word_of_the_summary_always_matches(words in proptest::collection::vec("[\\p{L}\\p{N}]{1,8}", 1..6), pick in 0usize..6) {
            let summary = words.join(" ");
            let e = entry(&summary, None, &[]);
            let w = &words[pick % words.len()];
            prop_assert!(EntryFilter::default().with_words(&[w.to_uppercase()]).matches(&e) || w.to_uppercase().to_lowercase() != w.to_lowercase());
        }
    }
}
