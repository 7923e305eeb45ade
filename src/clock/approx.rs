//! The dates `--since` and `--until` take, as `git log` reads them (git's approxidate, the
//! part people type): a day (`2026-11-30`), a day with a time (`2026-11-30 14:00`, or with
//! `Z` / an offset), `Nd` / `Nw` (N days or weeks before today), and words: `now`, `today`,
//! `midnight`, `noon`, `yesterday`, `N unit[s] [ago]` with the parts joined by spaces or dots
//! (`3 days ago`, `2.weeks.ago`, `last week`). Unlike git, text that holds none of these is an
//! error, not "now".

use super::{Clock, Instant};

/// What a date names: a whole calendar day of the clock's zone, or one instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum When {
    /// A calendar day (`YYYY-MM-DD`): `--since` starts at its first instant, `--until` ends
    /// with its last.
    Day(String),
    /// An instant (`yesterday` is 24 hours ago, as git reads it).
    At(Instant),
}

/// The largest count a relative date takes (a million days is past any record).
const MAX_COUNT: i64 = 1_000_000;

/// Reads a date as `git log --since` does, in `clock`'s zone, relative to `now`.
pub fn parse(value: &str, now: Instant, clock: &Clock) -> Result<When, DateError> {
    let v = value.trim();
    if super::is_day(v) {
        return Ok(When::Day(v.to_string()));
    }
    if let Some(at) = date_time(v, clock) {
        return Ok(When::At(at));
    }
    if let Some(day) = days_before(v, now, clock) {
        return Ok(When::Day(day));
    }
    words(v, now, clock)
        .map(When::At)
        .ok_or_else(|| why_not(value, now, clock))
}

/// Why `value` reads as no date: a day the calendar lacks, a count too far back, or neither form.
fn why_not(value: &str, now: Instant, clock: &Clock) -> DateError {
    let v = value.trim();
    let shape = v.bytes().enumerate().all(|(i, b)| match i {
        4 | 7 => b == b'-',
        _ => b.is_ascii_digit(),
    });
    if shape && v.len() == 10 {
        return DateError::NoSuchDay(value.to_string());
    }
    // The same words with every count made 1: when those read, the count was what failed.
    if !v.bytes().any(|b| b.is_ascii_digit()) {
        return DateError::NotADate(value.to_string());
    }
    let (mut ones, mut in_count) = (String::with_capacity(v.len()), false);
    for c in v.chars() {
        let digit = c.is_ascii_digit();
        if !digit || !in_count {
            ones.push(if digit { '1' } else { c });
        }
        in_count = digit;
    }
    if days_before(&ones, now, clock).is_some() || words(&ones, now, clock).is_some() {
        return DateError::TooFarBack(value.to_string());
    }
    DateError::NotADate(value.to_string())
}

/// A date the command line gave that names no time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DateError {
    /// None of the forms reads it.
    #[error("{0:?} is not a date: use YYYY-MM-DD, a day and time (\"2026-11-30 14:00\"), Nd / Nw for N days or weeks ago, or git's words (yesterday, \"3 days ago\", 2.weeks.ago)")]
    NotADate(String),
    /// It has the form of a day (`YYYY-MM-DD`), and the calendar has no such day.
    #[error("{0:?} is not a date: the calendar has no such day (YYYY-MM-DD: a month 01-12, a day of that month)")]
    NoSuchDay(String),
    /// A relative date whose count reaches back past the year 0 (or past a million).
    #[error("{0:?} is not a date git-rutter reads: it counts back past the year 0; give a nearer one, or leave the option out to read from the first record")]
    TooFarBack(String),
    /// A day was asked for (`log --day`) and this is not one.
    #[error("{0} is not a date (YYYY-MM-DD)")]
    NotADay(String),
    /// It has the form of a day, and the calendar holds no such day.
    #[error("{0} is a day past what the calendar holds")]
    PastTheCalendar(String),
    /// `--since` falls after `--until`: no entry could match.
    #[error("--since {since} is after --until {until}, so nothing could match; give the earlier date to --since")]
    Reversed { since: String, until: String },
}

/// A day with a time: with `Z` or an offset it is that instant, else a time of the clock's zone.
fn date_time(v: &str, clock: &Clock) -> Option<Instant> {
    if !v.get(..10).is_some_and(super::is_day) || v.len() < 15 {
        return None;
    }
    if let Ok(ts) = v.parse::<jiff::Timestamp>() {
        return Some(Instant(ts.as_millisecond()));
    }
    let dt: jiff::civil::DateTime = v.parse().ok()?;
    let tz = match clock {
        Clock::Utc => jiff::tz::TimeZone::UTC,
        Clock::Zone(tz) => tz.clone(),
    };
    let z = dt.to_zoned(tz).ok()?;
    Some(Instant(z.timestamp().as_millisecond()))
}

/// `Nd` / `Nw`: the calendar day N days or weeks before today (`0d` is today).
fn days_before(v: &str, now: Instant, clock: &Clock) -> Option<String> {
    let unit = match v.as_bytes().last()? {
        b'd' => 1,
        b'w' => 7,
        _ => return None,
    };
    let digits = &v[..v.len() - 1];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i64 = digits.parse().ok().filter(|n| *n <= MAX_COUNT)?;
    super::zone::add_days(&clock.day(now), -n * unit)
}

/// git's date words, applied left to right to `now` in the clock's zone.
fn words(v: &str, now: Instant, clock: &Clock) -> Option<Instant> {
    let start = clock.zoned(now)?;
    let mut t = start.clone();
    let mut count: Option<i64> = None;
    let mut read_any = false;
    let tokens = v
        .split(|c: char| c.is_whitespace() || matches!(c, '.' | ',' | '_'))
        .filter(|t| !t.is_empty());
    for token in tokens {
        let token = token.to_ascii_lowercase();
        if let Some(n) = number(&token) {
            if count.replace(n).is_some() {
                return None;
            }
            continue;
        }
        if let Some(unit) = unit(&token) {
            t = t.checked_sub(span(unit, count.take()?)?).ok()?;
            read_any = true;
            continue;
        }
        if count.is_some() {
            return None;
        }
        t = match token.as_str() {
            "ago" if read_any => t,
            "now" => t,
            "yesterday" => t.checked_sub(jiff::Span::new().days(1)).ok()?,
            "today" | "midnight" => t.start_of_day().ok()?,
            "noon" => noon(&t, &start)?,
            _ => return None,
        };
        read_any = true;
    }
    if count.is_some() || !read_any {
        return None;
    }
    Some(Instant(t.timestamp().as_millisecond()))
}

/// Noon of `t`'s day, or of the day before when that is still to come (as git reads `noon`).
fn noon(t: &jiff::Zoned, now: &jiff::Zoned) -> Option<jiff::Zoned> {
    let at = t
        .with()
        .hour(12)
        .minute(0)
        .second(0)
        .subsec_nanosecond(0)
        .build()
        .ok()?;
    if at > *now {
        at.checked_sub(jiff::Span::new().days(1)).ok()
    } else {
        Some(at)
    }
}

/// A count: digits, `a`/`an`/`last` (one), or a number word up to ten.
fn number(token: &str) -> Option<i64> {
    const NAMES: [&str; 11] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) {
        return token.parse().ok().filter(|n| *n <= MAX_COUNT);
    }
    match token {
        "a" | "an" | "last" => Some(1),
        _ => NAMES.iter().position(|n| *n == token).map(|n| n as i64),
    }
}

/// A unit of a relative date.
#[derive(Debug, Clone, Copy)]
enum Unit {
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Year,
}

fn unit(token: &str) -> Option<Unit> {
    let singular = token.strip_suffix('s').unwrap_or(token);
    Some(match singular {
        "second" | "sec" => Unit::Second,
        "minute" | "min" => Unit::Minute,
        "hour" => Unit::Hour,
        "day" => Unit::Day,
        "week" => Unit::Week,
        "month" => Unit::Month,
        "year" => Unit::Year,
        _ => return None,
    })
}

/// `n` of `unit` as a span (`None` when jiff cannot hold it).
fn span(unit: Unit, n: i64) -> Option<jiff::Span> {
    let s = jiff::Span::new();
    match unit {
        Unit::Second => s.try_seconds(n),
        Unit::Minute => s.try_minutes(n),
        Unit::Hour => s.try_hours(n),
        Unit::Day => s.try_days(n),
        Unit::Week => s.try_weeks(n),
        Unit::Month => s.try_months(n),
        Unit::Year => s.try_years(n),
    }
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(iso: &str) -> Instant {
        super::super::parse_instant(iso).unwrap()
    }

    fn zone(name: &str) -> Clock {
        Clock::Zone(jiff::tz::TimeZone::get(name).unwrap())
    }

    #[test]
    fn days_and_shorthands_are_calendar_days_of_the_zone() {
        // 2026-12-02 03:00 UTC is still 2026-12-01 in Los Angeles.
        let now = at("2026-12-02T03:00:00.000Z");
        let la = zone("America/Los_Angeles");
        let day = |v: &str, c: &Clock| parse(v, now, c).unwrap();
        assert_eq!(day("2026-11-05", &la), When::Day("2026-11-05".into()));
        assert_eq!(day("0d", &Clock::Utc), When::Day("2026-12-02".into()));
        assert_eq!(day("0d", &la), When::Day("2026-12-01".into()));
        assert_eq!(day("2w", &la), When::Day("2026-11-17".into()));
        assert_eq!(
            day("3d", &zone("Pacific/Auckland")),
            When::Day("2026-11-29".into())
        );
    }

    #[test]
    fn git_words_are_instants() {
        let now = at("2026-12-02T15:30:00.000Z");
        let utc = |v: &str| parse(v, now, &Clock::Utc).unwrap();
        let is = |v: &str, iso: &str| assert_eq!(utc(v), When::At(at(iso)), "{v}");
        is("yesterday", "2026-12-01T15:30:00.000Z");
        is("2.weeks.ago", "2026-11-18T15:30:00.000Z");
        is("3 days ago", "2026-11-29T15:30:00.000Z");
        is("3 DAYS AGO", "2026-11-29T15:30:00.000Z");
        is("1 hour ago", "2026-12-02T14:30:00.000Z");
        is("last week", "2026-11-25T15:30:00.000Z");
        is("two months ago", "2026-10-02T15:30:00.000Z");
        is("a year ago", "2025-12-02T15:30:00.000Z");
        is("now", "2026-12-02T15:30:00.000Z");
        is("today", "2026-12-02T00:00:00.000Z");
        is("midnight", "2026-12-02T00:00:00.000Z");
        is("yesterday.midnight", "2026-12-01T00:00:00.000Z");
        is("noon", "2026-12-02T12:00:00.000Z");
        is("2026-11-30 14:00", "2026-11-30T14:00:00.000Z");
        is("2026-11-30T14:00:05Z", "2026-11-30T14:00:05.000Z");
        is("2026-11-30T14:00:00+01:00", "2026-11-30T13:00:00.000Z");
        let la = zone("America/Los_Angeles");
        assert_eq!(
            parse("2026-11-30 14:00", now, &la).unwrap(),
            When::At(at("2026-11-30T22:00:00.000Z")),
            "a time without an offset is a time of the local zone"
        );
        assert_eq!(
            parse("today", now, &la).unwrap(),
            When::At(at("2026-12-02T08:00:00.000Z"))
        );
    }

    #[test]
    fn anything_else_is_a_clear_error() {
        let now = at("2026-12-02T15:30:00.000Z");
        for bad in [
            "",
            "d",
            "-1d",
            "3x",
            "2026-02-30",
            "1.5w",
            "99999999999d",
            "3",
            "days",
            "ago",
            "3 days 4",
            "tomorrow",
            "2026-11-30 25:00",
            "1000001 days ago",
            "999999 years ago",
            "now now 3",
        ] {
            let e = parse(bad, now, &Clock::Utc).unwrap_err();
            assert!(e.to_string().contains("is not a date"), "{bad}: {e}");
        }
        // Which of the three it is.
        let no_day = |v: &str| DateError::NoSuchDay(v.into());
        let far = |v: &str| DateError::TooFarBack(v.into());
        let neither = |v: &str| DateError::NotADate(v.into());
        type Want = fn(&str) -> DateError;
        let cases: [(&str, Want); 13] = [
            ("2026-02-30", no_day),
            ("2026-13-01", no_day),
            ("2026-00-10", no_day),
            ("99999999999d", far),
            ("1000001w", far),
            ("1000001 days ago", far),
            ("999999 years ago", far),
            ("-1d", neither),
            ("1.5w", neither),
            ("3 days 4", neither),
            ("tomorrow", neither),
            ("2026-11-30 25:00", neither),
            ("2026-1-01", neither),
        ];
        for (v, want) in cases {
            assert_eq!(parse(v, now, &Clock::Utc).unwrap_err(), want(v), "{v}");
        }
    }

    proptest! {
        #[test]
        fn any_text_is_a_date_or_a_clear_error(s in ".{0,24}", words in "[a-z0-9 .]{0,24}") {
            let now = at("2026-12-01T10:00:00.000Z");
            for v in [&s, &words] {
                for clock in [Clock::Utc, zone("Pacific/Chatham")] {
                    match parse(v, now, &clock) {
                        Ok(When::Day(day)) => prop_assert!(super::super::is_day(&day)),
                        Ok(When::At(_)) => {}
                        Err(e) => prop_assert!(e.to_string().contains("is not a date")),
                    }
                }
            }
        }
    }
}
