//! Time: UTC instants in milliseconds, their ISO and day forms, and the injectable clock.
//!
//! The record is filed by UTC day with its own civil-date code (Howard Hinnant's algorithm);
//! what the user sees and types (local times and days, git's date words) goes through jiff, in
//! [`zone`] and [`approx`]. `RUTTER_TIMESTAMP` pins the clock in debug builds (tests) and is
//! ignored in release builds.

pub(crate) mod approx;
mod interval;
mod zone;

pub(crate) use interval::{parse_interval, show_interval, IntervalError};
pub(crate) use zone::{add_days, Clock};

use std::time::{SystemTime, UNIX_EPOCH};

/// Environment variable that pins the clock in test and debug builds.
pub(crate) const TIMESTAMP_ENV: &str = "RUTTER_TIMESTAMP";

/// A UTC instant, in milliseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Instant(pub i64);

/// How long ago something `ms` milliseconds old happened, as people say it: `just now`,
/// `5 min ago`, `3 h ago`, `4 days ago`; `None` for a time in the future (a clock set back).
pub(crate) fn ago(ms: i64) -> Option<String> {
    let s = ms / 1000;
    Some(match s {
        s if s < 0 => return None,
        s if s < 90 => "just now".into(),
        s if s < 90 * 60 => format!("{} min ago", s / 60),
        s if s < 36 * 3600 => format!("{} h ago", s / 3600),
        s if s < 2 * 86_400 => "1 day ago".into(),
        s => format!("{} days ago", s / 86_400),
    })
}

/// The current instant: the real clock, or `RUTTER_TIMESTAMP` in a debug build.
pub fn now() -> Instant {
    if cfg!(debug_assertions) {
        if let Some(pinned) = std::env::var(TIMESTAMP_ENV)
            .ok()
            .and_then(|v| parse_instant(&v))
        {
            return pinned;
        }
    }
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    Instant(ms)
}

/// Parses epoch milliseconds or an ISO `YYYY-MM-DDTHH:MM:SS[.mmm]Z` instant.
pub fn parse_instant(s: &str) -> Option<Instant> {
    let s = s.trim();
    if let Ok(ms) = s.parse::<i64>() {
        return Some(Instant(ms));
    }
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || !s.ends_with('Z') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let days = days_from_civil(num(0..4)?, num(5..7)?, num(8..10)?)?;
    let (h, m, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let ms = match s.get(19..s.len() - 1) {
        Some("") => 0,
        Some(frac) if frac.len() == 4 && frac.starts_with('.') => frac[1..].parse().ok()?,
        _ => return None,
    };
    if h > 23 || m > 59 || sec > 60 {
        return None;
    }
    Some(Instant(
        ((days * 24 + h) * 60 + m) * 60_000 + sec * 1000 + ms,
    ))
}

impl Instant {
    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    pub(crate) fn iso(self) -> String {
        let (days, ms_of_day) = (self.0.div_euclid(86_400_000), self.0.rem_euclid(86_400_000));
        let (y, mo, d) = civil_from_days(days);
        let secs = ms_of_day / 1000;
        format!(
            "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
            secs / 3600,
            secs / 60 % 60,
            secs % 60,
            ms_of_day % 1000
        )
    }

    /// The UTC day, `YYYY-MM-DD`.
    pub fn day(self) -> String {
        let (y, mo, d) = civil_from_days(self.0.div_euclid(86_400_000));
        format!("{y:04}-{mo:02}-{d:02}")
    }

    /// The compact id form: the ISO instant without `-`, `:` and `.` (`20261130T073141112Z`).
    pub(crate) fn compact(self) -> String {
        self.iso().replace(['-', ':', '.'], "")
    }

    /// Seconds since the epoch (for git signatures).
    pub(crate) fn seconds(self) -> i64 {
        self.0.div_euclid(1000)
    }

    /// This instant moved by whole days (negative goes back).
    pub fn plus_days(self, days: i64) -> Instant {
        Instant(self.0 + days * 86_400_000)
    }
}

/// Seconds and nanoseconds (of a stat result, say) as nanoseconds since the epoch, saturating:
/// file systems allow times past 2262, where `secs * 1e9` overflows an `i64`. The one place
/// such a product is made.
pub(crate) fn ns(secs: impl Into<i128>, nsec: impl Into<i128>) -> i64 {
    let ns = secs.into() * 1_000_000_000 + nsec.into();
    i64::try_from(ns).unwrap_or(if ns < 0 { i64::MIN } else { i64::MAX })
}

/// Seconds since the epoch (a reflog's or a commit's, which may be forged) as an [`Instant`],
/// saturating instead of overflowing.
pub fn from_seconds(secs: i64) -> Instant {
    Instant(secs.saturating_mul(1000))
}

/// Checks a `YYYY-MM-DD` day name (real calendar date).
pub(crate) fn is_day(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && s.bytes()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
        && days_from_civil(
            s[0..4].parse().unwrap_or(0),
            s[5..7].parse().unwrap_or(0),
            s[8..10].parse().unwrap_or(0),
        )
        .is_some()
}

/// Days since the epoch for a civil date; `None` for an impossible date.
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> Option<i64> {
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    Some(day_number(y, m, d))
}

/// Days since the epoch for month `m` (1–12) of year `y`, day `d` counted from the 1st without
/// checking it against the month's length (Howard Hinnant's algorithm).
pub(crate) fn day_number(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day number.
pub(crate) fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ago_says_it_as_people_do_one_day_in_the_singular() {
        let h = 3_600_000;
        assert_eq!(ago(-5_000), None);
        assert_eq!(ago(30_000).as_deref(), Some("just now"));
        assert_eq!(ago(5 * 60_000).as_deref(), Some("5 min ago"));
        assert_eq!(ago(3 * h).as_deref(), Some("3 h ago"));
        assert_eq!(ago(40 * h).as_deref(), Some("1 day ago"));
        assert_eq!(ago(49 * h).as_deref(), Some("2 days ago"));
    }

    /// The review's §b 4: times past 2262 (ext4 and xfs allow them) and forged reflog seconds
    /// saturate, never overflow.
    #[test]
    fn far_times_saturate() {
        assert_eq!(ns(1i64, 5i64), 1_000_000_005);
        assert_eq!(ns(10_413_792_000i64, 0), i64::MAX, "2300-01-01");
        assert_eq!(ns(i64::MIN, 0i64), i64::MIN);
        assert_eq!(from_seconds(i64::MAX).0, i64::MAX);
        assert_eq!(from_seconds(2).0, 2000);
        let _ = from_seconds(i64::MAX).iso();
    }

    #[test]
    fn iso_round_trip() {
        for s in [
            "2026-11-30T07:31:41.112Z",
            "1970-01-01T00:00:00.000Z",
            "2024-02-29T23:59:59.999Z",
        ] {
            let i = parse_instant(s).unwrap();
            assert_eq!(i.iso(), s);
        }
        let i = parse_instant("2026-11-30T07:31:41.112Z").unwrap();
        assert_eq!(i.compact(), "20261130T073141112Z");
        assert_eq!(i.day(), "2026-11-30");
        assert_eq!(i.plus_days(1).day(), "2026-12-01");
        assert_eq!(parse_instant("2026-11-30T07:31:41Z").unwrap().0 % 1000, 0);
    }

    #[test]
    fn rejects_bad_dates() {
        assert!(parse_instant("2026-02-30T00:00:00.000Z").is_none());
        assert!(parse_instant("garbage").is_none());
        assert!(is_day("2024-02-29") && !is_day("2023-02-29") && !is_day("2026-1-01"));
    }
}
