//! The gate: stateful use per ISO week (anchor §12). Only `librarian-recent` and
//! `search-signal` events count; the target is at least 3 a week. The text says so in plain
//! words (the reference's `stateful-use per ISO week (gate target: >=3)` was jargon). An event
//! dated where no clock of the user's could have put it ([`Plausible`]) is left out and named,
//! here and in the timeline's chart alike: the use log is a record file a sync remote may send.

use crate::clock::{civil_from_days, days_from_civil, parse_instant, Instant};
use serde::Serialize;
use std::collections::BTreeMap;

/// Uses a week needs to meet the gate.
pub(crate) const WEEKLY_TARGET: usize = 3;
const COUNTED: &[&str] = &["librarian-recent", "search-signal"];

/// How far before the reader's clock: the 1,044 weeks (20 years) the timeline's chart draws
/// at most. An older event was stamped by a clock set wrong (or forged); it would only stretch
/// the chart.
pub(crate) const BEHIND_WEEKS: i64 = 1044;

/// The instants an event of the use log may carry, read at a clock: from [`BEHIND_WEEKS`]
/// before it to the margin after it that sync's intake allows too
/// ([`crate::records::grammar::USE_CLOCK_MARGIN_MS`]). One event dated 9999-12-31 would otherwise make the
/// chart's newest 1,044 weeks a millennium away from every decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Plausible {
    pub from: Instant,
    pub until: Instant,
}

impl Plausible {
    /// The span read at `now`.
    pub(crate) fn at(now: Instant) -> Plausible {
        Plausible {
            from: now.plus_days(-7 * BEHIND_WEEKS),
            until: Instant(
                now.0
                    .saturating_add(crate::records::grammar::USE_CLOCK_MARGIN_MS),
            ),
        }
    }

    pub(crate) fn holds(&self, at: Instant) -> bool {
        (self.from..=self.until).contains(&at)
    }

    /// `N use events outside FROM to UNTIL, not DONE: …` (days as given), naming why.
    pub(crate) fn left_out(n: usize, what: (&str, &str), span: (&str, &str), done: &str) -> String {
        let what = if n == 1 { what.0 } else { what.1 };
        format!(
            "{n} {what} outside {} to {}, not {done}: dated after this machine's clock, or more than 20 years before it.",
            span.0, span.1
        )
    }
}

/// One ISO week's count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Week {
    /// `GGGG-Www`.
    pub week: String,
    /// Its Monday, `YYYY-MM-DD` (UTC).
    pub from: String,
    pub count: usize,
    pub met: bool,
}

/// The outcome: weeks in ascending order, and whether any event was counted before the range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Gate {
    pub weeks: Vec<Week>,
    /// Counted events in the log with a plausible time (before range filtering).
    pub logged: usize,
    /// Counted events left out for their time ([`Plausible`]).
    pub outside: usize,
    /// The span of plausible times.
    #[serde(skip)]
    pub span: Plausible,
}

/// Counts events per ISO week, as read at `now`. `from`/`to` are `YYYY-MM-DD`, inclusive (UTC
/// midnight to `23:59:59.999`); an invalid date does not filter.
pub(crate) fn weekly(
    events: &[(String, String)],
    from: Option<&str>,
    to: Option<&str>,
    now: Instant,
) -> Gate {
    let lo = from.and_then(|d| parse_instant(&format!("{d}T00:00:00.000Z")));
    let hi = to.and_then(|d| parse_instant(&format!("{d}T23:59:59.999Z")));
    let span = Plausible::at(now);
    let mut counts: BTreeMap<String, (String, usize)> = BTreeMap::new();
    let (mut logged, mut outside) = (0, 0);
    for (ts, kind) in events {
        let Some(at) = parse_instant(ts).filter(|_| counted(kind)) else {
            continue;
        };
        if !span.holds(at) {
            outside += 1;
            continue;
        }
        logged += 1;
        if lo.is_some_and(|l| at < l) || hi.is_some_and(|h| at > h) {
            continue;
        }
        let day = at.0.div_euclid(86_400_000);
        counts
            .entry(iso_week(day))
            .or_insert_with(|| (monday(day), 0))
            .1 += 1;
    }
    let weeks = counts
        .into_iter()
        .map(|(week, (from, count))| Week {
            met: count >= WEEKLY_TARGET,
            week,
            from,
            count,
        })
        .collect();
    Gate {
        weeks,
        logged,
        outside,
        span,
    }
}

/// Whether an event of `kind` is a use of the memory (the others in the log are not counted).
pub(crate) fn counted(kind: &str) -> bool {
    COUNTED.contains(&kind)
}

/// The Monday of a day number's week, `YYYY-MM-DD`.
fn monday(days: i64) -> String {
    let (y, m, d) = civil_from_days(days - (days + 3).rem_euclid(7));
    format!("{y:04}-{m:02}-{d:02}")
}

/// The ISO week label of a day number: weeks start on Monday and belong to the year of their
/// Thursday.
pub(crate) fn iso_week(days: i64) -> String {
    let weekday = (days + 3).rem_euclid(7); // 0 = Monday; 1970-01-01 was a Thursday
    let thursday = days - weekday + 3;
    let (year, _, _) = civil_from_days(thursday);
    let jan1 = days_from_civil(year, 1, 1).unwrap_or(thursday);
    format!("{year:04}-W{:02}", (thursday - jan1) / 7 + 1)
}

/// The reference's text output, or the empty-state lines; then the events left out for their
/// time, when there are any.
pub(crate) fn render(g: &Gate, ranged: bool) -> String {
    let mut out = weeks_text(g, ranged);
    if g.outside > 0 {
        out.push('\n');
        out.push_str(&Plausible::left_out(
            g.outside,
            ("use event", "use events"),
            (&g.span.from.day(), &g.span.until.day()),
            "counted",
        ));
    }
    out
}

fn weeks_text(g: &Gate, ranged: bool) -> String {
    if g.weeks.is_empty() {
        return if ranged && g.logged > 0 {
            "Your AI clients did not use their memory in the requested range.".to_string()
        } else {
            "No use of the memory is logged yet: the MCP server logs each librarian-recent call and each search that finds an earlier decision.".to_string()
        };
    }
    let mut out = format!(
        "How often your AI clients used their memory, week by week (each librarian-recent call and each search that found an earlier decision counts once; {WEEKLY_TARGET} or more a week means it is in use):"
    );
    for w in &g.weeks {
        out.push_str(&format!(
            "\n  {} (from {}): {}{}",
            w.week,
            w.from,
            w.count,
            if w.met { "  ✓ in use" } else { "" }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> i64 {
        parse_instant(&format!("{s}T12:00:00.000Z"))
            .unwrap()
            .0
            .div_euclid(86_400_000)
    }

    /// The clock the tests read the log at.
    fn now() -> Instant {
        parse_instant("2026-12-01T09:00:00.000Z").unwrap()
    }

    #[test]
    fn an_event_no_clock_could_have_dated_is_left_out_and_named() {
        let ev = |ts: &str| (ts.to_string(), "librarian-recent".to_string());
        let events = vec![
            ev("2026-11-30T10:00:00.000Z"),
            ev("2026-12-02T08:59:59.999Z"),
            ev("2026-12-02T09:00:00.001Z"),
            ev("9999-12-31T23:59:59.999Z"),
            ev("1970-01-01T00:00:00.000Z"),
            ev("2006-11-28T09:00:00.000Z"),
            ev("2006-11-28T08:59:59.999Z"),
        ];
        let g = weekly(&events, None, None, now());
        let weeks: Vec<(&str, usize)> =
            g.weeks.iter().map(|w| (w.week.as_str(), w.count)).collect();
        assert_eq!(weeks, [("2006-W48", 1), ("2026-W49", 2)]);
        assert_eq!((g.logged, g.outside), (3, 4));
        assert!(
            render(&g, false).ends_with("\n4 use events outside 2006-11-28 to 2026-12-02, not counted: dated after this machine's clock, or more than 20 years before it."),
            "{}",
            render(&g, false)
        );
        let only = weekly(&events[3..5], None, None, now());
        assert_eq!(
            render(&only, false),
            "No use of the memory is logged yet: the MCP server logs each librarian-recent call and each search that finds an earlier decision.\n2 use events outside 2006-11-28 to 2026-12-02, not counted: dated after this machine's clock, or more than 20 years before it."
        );
        assert!(!render(&weekly(&events[..1], None, None, now()), false).contains("outside"));
    }

    #[test]
    fn iso_weeks_at_year_boundaries() {
        assert_eq!(iso_week(day("2026-11-30")), "2026-W49");
        assert_eq!(iso_week(day("2021-01-03")), "2020-W53");
        assert_eq!(iso_week(day("2024-12-30")), "2025-W01");
        assert_eq!(iso_week(day("2026-01-01")), "2026-W01");
        assert_eq!(iso_week(day("2027-01-01")), "2026-W53");
    }

    #[test]
    fn counts_only_gate_kinds_and_renders_the_reference_form() {
        let ev = |ts: &str, k: &str| (ts.to_string(), k.to_string());
        let events = vec![
            ev("2026-07-27T10:00:00.000Z", "librarian-recent"),
            ev("2026-07-28T10:00:00.000Z", "search-signal"),
            ev("2026-07-29T10:00:00.000Z", "librarian-recent"),
            ev("2026-07-29T11:00:00.000Z", "librarian-positions"),
            ev("2026-08-03T10:00:00.000Z", "librarian-recent"),
        ];
        let g = weekly(&events, None, None, now());
        assert_eq!(
            render(&g, false),
            "How often your AI clients used their memory, week by week (each librarian-recent call and each search that found an earlier decision counts once; 3 or more a week means it is in use):\n  2026-W31 (from 2026-07-27): 3  ✓ in use\n  2026-W32 (from 2026-08-03): 1"
        );
        let none = weekly(&events, Some("2027-01-01"), None, now());
        assert_eq!(
            render(&none, true),
            "Your AI clients did not use their memory in the requested range."
        );
        assert_eq!(
            render(&weekly(&[], None, None, now()), false),
            "No use of the memory is logged yet: the MCP server logs each librarian-recent call and each search that finds an earlier decision."
        );
        let to = weekly(&events, None, Some("2026-07-28"), now());
        assert_eq!(to.weeks[0].count, 2, "the `to` day is inclusive");
    }

    /// ISO weeks counted one day at a time from 1970-01-01 (a Thursday in 1970-W01): a new
    /// week each Monday, week 1 of a new year when that week's Thursday falls in it.
    fn counted_weeks(upto: i64) -> Vec<String> {
        let (mut year, mut week) = (1970, 1);
        let mut out = vec![format!("{year:04}-W{week:02}")];
        for d in 1..=upto {
            if (d + 3).rem_euclid(7) == 0 {
                let thursday_year = civil_from_days(d + 3).0;
                if thursday_year != year {
                    (year, week) = (thursday_year, 1);
                } else {
                    week += 1;
                }
            }
            out.push(format!("{year:04}-W{week:02}"));
        }
        out
    }

    #[test]
    fn iso_weeks_agree_with_counting_day_by_day() {
        let weeks = counted_weeks(80_000);
        for (d, want) in weeks.iter().enumerate() {
            assert_eq!(&iso_week(d as i64), want, "day {d}");
        }
    }

    proptest::proptest! {
        /// Arbitrary log lines never panic the reader or the count, and nothing is counted
        /// that was not logged.
        #[test]
        fn arbitrary_logs_count_at_most_what_was_logged(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    "\\PC{0,40}",
                    "\\{\"ts\":\"20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]\\.[0-9]{3}Z\",\"kind\":\"(librarian-recent|search-signal|other)\"\\}",
                ],
                0..40,
            ),
            from in proptest::option::of("20[0-9]{2}-[01][0-9]-[0-3][0-9]"),
        ) {
            let t = tempfile::tempdir().unwrap();
            std::fs::create_dir(t.path().join("_librarian")).unwrap();
            std::fs::write(t.path().join(crate::records::paths::USE_LOG), lines.join("\n")).unwrap();
            let events = crate::recall::uselog::read(t.path());
            proptest::prop_assert!(events.len() <= lines.len());
            let g = weekly(&events, from.as_deref(), None, now());
            let counted: usize = g.weeks.iter().map(|w| w.count).sum();
            proptest::prop_assert!(counted <= g.logged && g.logged + g.outside <= events.len());
            if from.is_none() {
                proptest::prop_assert_eq!(counted, g.logged);
            }
            let _ = render(&g, from.is_some());
        }
    }
}
