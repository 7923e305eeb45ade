//! The timeline's chart of each ISO week: the decisions recorded and the uses of the memory
//! (the use log's counted events, as `git rutter gate` counts them), as inline SVG. Every text
//! in it is written here (week labels and numbers) and escaped all the same; it is styled by
//! the page's stylesheet through classes, never a `style` attribute, which the policy forbids.

use crate::clock::{Clock, Instant};
use crate::recall::gate::{iso_week, Plausible, BEHIND_WEEKS, WEEKLY_TARGET};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// At most this many weeks are drawn (20 years), the newest: a forged decision dated 1970 must
/// not make a chart of 3,000 weeks. (A use dated so is not drawn at all: [`Plausible`].)
const MAX_WEEKS: usize = BEHIND_WEEKS as usize;

/// The chart as the page holds it.
pub(super) struct Chart {
    /// The `<svg>` element, or a sentence when there is nothing to draw.
    pub svg: String,
    /// What was left out for its time, one sentence each.
    pub left_out: Vec<String>,
}

/// The chart of the decisions shown (their days, of the page's `clock`) and the uses (their
/// instants), read at `now`: a decision or a use dated outside [`Plausible`]'s span is not
/// drawn, and named, so one dated 9999 cannot push every real week out of the chart.
pub(super) fn drawn<'a>(
    clock: &Clock,
    now: Instant,
    decisions: impl Iterator<Item = &'a str>,
    uses: impl Iterator<Item = Instant>,
) -> Chart {
    let span = Plausible::at(now);
    let (from, until) = (clock.day(span.from), clock.day(span.until));
    let days = day_number(&from).zip(day_number(&until));
    // A day that is no day is kept here: `Weeks::of` counts it nowhere, so it is not named.
    let plausible = |d: &&str| {
        !day_number(d)
            .zip(days)
            .is_some_and(|(n, (lo, hi))| n < lo || n > hi)
    };
    let (decisions, late_decisions): (Vec<&str>, Vec<&str>) = decisions.partition(plausible);
    let (uses, late_uses): (Vec<Instant>, Vec<Instant>) = uses.partition(|&at| span.holds(at));
    let uses: Vec<String> = uses.into_iter().map(|at| clock.day(at)).collect();
    let weeks = Weeks::of(decisions.into_iter(), uses.into_iter());
    let named = |n: usize, what| {
        (n > 0).then(|| Plausible::left_out(n, what, (&from, &until), "drawn in the chart"))
    };
    Chart {
        svg: svg(&weeks),
        left_out: [
            named(late_decisions.len(), ("decision", "decisions")),
            named(late_uses.len(), ("use event", "use events")),
        ]
        .into_iter()
        .flatten()
        .collect(),
    }
}

/// Pixels per week: a few weeks get wide bars, many get [`MIN_WEEK`] each (the chart scrolls).
const MIN_WEEK: usize = 10;
const MAX_WEEK: usize = 40;
/// The width the weeks share when they fit.
const PLOT: usize = 900;
/// Room for the numbers on the left, and the margin on the right.
const LEFT: usize = 48;
const RIGHT: usize = 12;
/// The narrowest chart: room for the panel titles.
const MIN_WIDTH: usize = 520;

/// The counts of consecutive weeks.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Weeks {
    /// The day number of the first week's Monday.
    first: i64,
    decisions: Vec<usize>,
    uses: Vec<usize>,
    /// Older weeks left out ([`MAX_WEEKS`]).
    cut: usize,
}

impl Weeks {
    /// The weeks from the first to the last that has a decision or a use (`YYYY-MM-DD` days;
    /// a day that is not one is not counted).
    pub(super) fn of<'a>(
        decisions: impl Iterator<Item = &'a str>,
        uses: impl Iterator<Item = String>,
    ) -> Weeks {
        let mut d: BTreeMap<i64, usize> = BTreeMap::new();
        let mut u: BTreeMap<i64, usize> = BTreeMap::new();
        for day in decisions {
            if let Some(n) = day_number(day) {
                *d.entry(monday(n)).or_default() += 1;
            }
        }
        for day in uses {
            if let Some(n) = day_number(&day) {
                *u.entry(monday(n)).or_default() += 1;
            }
        }
        let keys = || d.keys().chain(u.keys()).copied();
        let (Some(lo), Some(hi)) = (keys().min(), keys().max()) else {
            return Weeks {
                first: 0,
                decisions: vec![],
                uses: vec![],
                cut: 0,
            };
        };
        let all = ((hi - lo) / 7) as usize + 1;
        let cut = all.saturating_sub(MAX_WEEKS);
        let first = lo + 7 * cut as i64;
        let n = all - cut;
        let series = |m: &BTreeMap<i64, usize>| {
            let mut v = vec![0; n];
            for (&week, &count) in m.range(first..) {
                v[((week - first) / 7) as usize] = count;
            }
            v
        };
        Weeks {
            first,
            decisions: series(&d),
            uses: series(&u),
            cut,
        }
    }

    fn label(&self, i: usize) -> String {
        iso_week(self.first + 7 * i as i64)
    }

    fn monday(&self, i: usize) -> String {
        let (y, m, d) = crate::clock::civil_from_days(self.first + 7 * i as i64);
        format!("{y:04}-{m:02}-{d:02}")
    }
}

/// The day number of a `YYYY-MM-DD` day.
fn day_number(day: &str) -> Option<i64> {
    if !crate::clock::is_day(day) {
        return None;
    }
    let n = |r: std::ops::Range<usize>| day.get(r).and_then(|s| s.parse().ok());
    crate::clock::days_from_civil(n(0..4)?, n(5..7)?, n(8..10)?)
}

/// The Monday of a day number's week.
fn monday(day: i64) -> i64 {
    day - (day + 3).rem_euclid(7)
}

/// The chart as an `<svg>` element, or a sentence when there is nothing to draw.
pub(super) fn svg(w: &Weeks) -> String {
    let n = w.decisions.len();
    if n == 0 {
        return "<p class=\"lede\">Nothing was recorded or used in these weeks.</p>".to_string();
    }
    let week = (PLOT / n).clamp(MIN_WEEK, MAX_WEEK);
    let width = (LEFT + n * week + RIGHT).max(MIN_WIDTH);
    let height = 220;
    let mut out = String::with_capacity(200 * n + 2048);
    let _ = write!(
        out,
        "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-labelledby=\"chart-title\">"
    );
    let _ = write!(
        out,
        "<title id=\"chart-title\">{}</title>",
        escape(&format!(
            "Decisions recorded and uses of the memory in each ISO week, {} to {}",
            w.label(0),
            w.label(n - 1)
        ))
    );
    let most = |v: &[usize]| v.iter().copied().max().unwrap_or(0);
    let mut title = format!(
        "Decisions recorded (most in a week: {})",
        most(&w.decisions)
    );
    if w.cut > 0 {
        let _ = write!(title, "; {} older weeks not drawn", w.cut);
    }
    let decisions = Panel {
        title,
        values: &w.decisions,
        class: "bar-d",
        what: ("decision", "decisions"),
        target: None,
        top: 28,
        height: 80,
    };
    decisions.draw(&mut out, w, week);
    let uses = Panel {
        title: match w.uses.iter().sum::<usize>() {
            0 => "Uses of the memory: none logged in these weeks".to_string(),
            _ => format!(
                "Uses of the memory (most in a week: {}; dashed: {WEEKLY_TARGET}, in use)",
                most(&w.uses)
            ),
        },
        values: &w.uses,
        class: "bar-u",
        what: ("use", "uses"),
        target: Some(WEEKLY_TARGET),
        top: 140,
        height: 52,
    };
    uses.draw(&mut out, w, week);
    // A week's label every 80 pixels or so, under the lower panel.
    for i in (0..n).step_by(80usize.div_ceil(week)) {
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\">{}</text>",
            LEFT + i * week,
            height - 8,
            escape(&w.label(i))
        );
    }
    out.push_str("</svg>");
    out
}

/// One panel of the chart: a count for each week.
struct Panel<'a> {
    title: String,
    values: &'a [usize],
    /// The bars' class in the stylesheet.
    class: &'static str,
    /// What is counted, one and many.
    what: (&'static str, &'static str),
    /// A count to draw as a dashed line.
    target: Option<usize>,
    top: usize,
    height: usize,
}

impl Panel<'_> {
    /// Its title, its axis, the largest count, a bar for each week that has any (with a
    /// tooltip), and the target line when it has one; `week` pixels a week.
    fn draw(&self, out: &mut String, w: &Weeks, week: usize) {
        let (top, height) = (self.top, self.height);
        let bottom = top + height;
        let right = LEFT + self.values.len() * week;
        let most = self
            .values
            .iter()
            .copied()
            .max()
            .unwrap_or(0)
            .max(self.target.unwrap_or(0))
            .max(1);
        let _ = write!(
            out,
            "<text class=\"title\" x=\"{LEFT}\" y=\"{}\">{}</text>",
            top - 10,
            escape(&self.title)
        );
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{most}</text><text x=\"{}\" y=\"{bottom}\" text-anchor=\"end\">0</text>",
            LEFT - 6,
            top + 9,
            LEFT - 6
        );
        let _ = write!(
            out,
            "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{bottom}\" x2=\"{right}\" y2=\"{bottom}\"/>"
        );
        for (i, &v) in self.values.iter().enumerate().filter(|(_, &v)| v > 0) {
            let h = (v * height).div_ceil(most).max(1);
            let what = if v == 1 { self.what.0 } else { self.what.1 };
            let _ = write!(
                out,
                "<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{h}\"><title>{}</title></rect>",
                self.class,
                LEFT + i * week + 1,
                bottom - h,
                week - 2,
                escape(&format!("{} (from {}): {v} {what}", w.label(i), w.monday(i)))
            );
        }
        if let Some(t) = self.target {
            let y = bottom - t * height / most;
            let _ = write!(
                out,
                "<line class=\"target\" x1=\"{LEFT}\" y1=\"{y}\" x2=\"{right}\" y2=\"{y}\"/>"
            );
        }
    }
}

fn escape(text: &str) -> String {
    super::escape_html(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weeks(decisions: &[&str], uses: &[&str]) -> Weeks {
        Weeks::of(
            decisions.iter().copied(),
            uses.iter().map(|s| s.to_string()),
        )
    }

    #[test]
    fn weeks_run_from_the_first_to_the_last_with_empty_weeks_between() {
        // 2026-11-30 is a Monday (2026-W49); 2026-11-22 a Sunday (2026-W47).
        let w = weeks(
            &["2026-11-30", "2026-12-06", "2026-11-22", "not a day"],
            &["2026-12-01", "2026-12-01"],
        );
        assert_eq!(w.decisions, [1, 0, 2]);
        assert_eq!(w.uses, [0, 0, 2]);
        assert_eq!(
            (w.label(0), w.monday(0)),
            ("2026-W47".into(), "2026-11-16".into())
        );
        assert_eq!(w.cut, 0);
        assert_eq!(weeks(&[], &[]).decisions.len(), 0);
    }

    #[test]
    fn a_use_dated_decades_ago_does_not_stretch_the_chart() {
        let w = weeks(&["2026-11-30"], &["1970-01-05"]);
        assert_eq!(w.decisions.len(), MAX_WEEKS);
        assert_eq!(*w.decisions.last().unwrap(), 1);
        assert_eq!(
            w.cut + MAX_WEEKS,
            (20_787 - 4) / 7 + 1,
            "every week from 1970-01-05 on"
        );
        assert!(svg(&w).contains("older weeks not drawn"));
    }

    #[test]
    fn the_svg_has_a_bar_and_a_tooltip_for_each_week_that_has_any() {
        let w = weeks(&["2026-11-30", "2026-11-30", "2026-11-16"], &["2026-11-30"]);
        let svg = svg(&w);
        assert!(svg.starts_with("<svg "));
        assert_eq!(svg.matches("<rect class=\"bar-d\"").count(), 2);
        assert_eq!(svg.matches("<rect class=\"bar-u\"").count(), 1);
        assert!(svg.contains("<title>2026-W49 (from 2026-11-30): 2 decisions</title>"));
        assert!(svg.contains("<title>2026-W49 (from 2026-11-30): 1 use</title>"));
        assert!(svg.contains("class=\"target\""));
        assert!(
            !svg.contains("style="),
            "the policy allows no style attribute"
        );
        assert_eq!(
            super::svg(&weeks(&[], &[])),
            "<p class=\"lede\">Nothing was recorded or used in these weeks.</p>"
        );
    }
}
