//! Local time: how a recorded UTC time is shown (as recorded, or in a zone with its offset, as
//! `git log` shows it) and which calendar day an instant falls on there, so that `--day`,
//! `--days`, `--since` and `status` count the days the user lives (`--utc` counts UTC days, as
//! the record is filed). The zone is jiff's system zone: `TZ`, else `/etc/localtime`.

use super::Instant;
use std::fmt::Write as _;

/// How times are shown: as recorded, in UTC (the MCP tool, whose strings follow the reference;
/// `--utc`), or in a time zone with its offset, as `git log` shows them (the terminal).
#[derive(Debug, Clone, Default)]
pub(crate) enum Clock {
    #[default]
    Utc,
    Zone(jiff::tz::TimeZone),
}

impl Clock {
    /// The system's time zone (`TZ`, else `/etc/localtime`), else UTC.
    pub(crate) fn local() -> Clock {
        Clock::Zone(jiff::tz::TimeZone::system())
    }

    /// The day and the time of day of a recorded UTC `time` (`YYYY-MM-DDTHH:MM:SS.mmmZ`) on
    /// `day`: as recorded for UTC, else converted, the time with its offset (`13:54:55 +0100`).
    pub fn day_time(&self, day: &str, time: &str) -> (String, String) {
        let mut both = String::new();
        self.push_day_time(&mut both, day, time);
        match both.find(' ') {
            Some(space) => {
                let time = both[space + 1..].to_string();
                both.truncate(space);
                (both, time)
            }
            None => (both, String::new()),
        }
    }

    /// The day of [`Clock::day_time`], appended to `out`.
    pub fn push_day(&self, out: &mut String, day: &str, time: &str) {
        match self.at(time) {
            Local::Fast(at, _) => push_date(out, at),
            Local::Slow(z) => out.push_str(&z.strftime("%Y-%m-%d").to_string()),
            Local::Recorded => out.push_str(day),
        }
    }

    /// The day and the time of [`Clock::day_time`], separated by a space, appended to `out`.
    pub fn push_day_time(&self, out: &mut String, day: &str, time: &str) {
        match self.at(time) {
            Local::Fast(at, offset) => {
                push_date(out, at);
                out.push(' ');
                push_time_offset(out, at, offset);
            }
            Local::Slow(z) => {
                let _ = write!(
                    out,
                    "{} {}",
                    z.strftime("%Y-%m-%d"),
                    z.strftime("%H:%M:%S %z")
                );
            }
            Local::Recorded => {
                out.push_str(day);
                out.push(' ');
                out.push_str(time.get(11..19).unwrap_or(""));
            }
        }
    }

    /// `time` in this clock's zone: written by hand when its fields have the fixed widths
    /// strftime gives them (every time this century), else through strftime.
    fn at(&self, time: &str) -> Local {
        let Clock::Zone(tz) = self else {
            return Local::Recorded;
        };
        let Ok(ts) = time.parse::<jiff::Timestamp>() else {
            return Local::Recorded;
        };
        let offset = tz.to_offset(ts);
        let at = offset.to_datetime(ts);
        if (1000..=9999).contains(&at.year()) && offset.seconds() % 60 == 0 {
            Local::Fast(at, offset)
        } else {
            Local::Slow(ts.to_zoned(tz.clone()))
        }
    }
}

/// A recorded time as a clock shows it.
enum Local {
    /// Local, with fields of fixed width.
    Fast(jiff::civil::DateTime, jiff::tz::Offset),
    /// Local, for strftime.
    Slow(jiff::Zoned),
    /// As recorded (UTC, or a time that does not parse).
    Recorded,
}

/// `YYYY-MM-DD` of a year of four digits (strftime's `%Y-%m-%d`).
fn push_date(out: &mut String, at: jiff::civil::DateTime) {
    let year = at.year();
    push_two(out, (year / 100) as i8);
    push_two(out, (year % 100) as i8);
    out.push('-');
    push_two(out, at.month());
    out.push('-');
    push_two(out, at.day());
}

/// `HH:MM:SS +hhmm` of an offset in whole minutes (strftime's `%H:%M:%S %z`).
fn push_time_offset(out: &mut String, at: jiff::civil::DateTime, offset: jiff::tz::Offset) {
    push_two(out, at.hour());
    out.push(':');
    push_two(out, at.minute());
    out.push(':');
    push_two(out, at.second());
    let minutes = offset.seconds() / 60;
    out.push(' ');
    out.push(if minutes < 0 { '-' } else { '+' });
    push_two(out, (minutes.abs() / 60) as i8);
    push_two(out, (minutes.abs() % 60) as i8);
}

/// Two decimal digits of `n` (0 to 99), as `{:02}` writes them; by hand, because the
/// formatter was a tenth of `recent --all`'s rendering.
fn push_two(out: &mut String, n: i8) {
    let n = n.unsigned_abs();
    out.push(char::from(b'0' + n / 10 % 10));
    out.push(char::from(b'0' + n % 10));
}

impl Clock {
    /// The clock `--utc` asks for: UTC days and times, else the local zone's.
    pub(crate) fn for_flag(utc: bool) -> Clock {
        if utc {
            Clock::Utc
        } else {
            Clock::local()
        }
    }

    /// The calendar day (`YYYY-MM-DD`) `at` falls on in this clock's zone.
    pub fn day(&self, at: Instant) -> String {
        match self.zoned(at) {
            Some(z) if (0..=9999).contains(&z.year()) => z.date().to_string(),
            _ => at.day(),
        }
    }

    /// The first instant of `day` (`YYYY-MM-DD`) in this clock's zone (where a zone skips
    /// midnight, the first instant that exists on that day); `None` for a day jiff cannot hold.
    pub fn start_of(&self, day: &str) -> Option<Instant> {
        let date: jiff::civil::Date = day.parse().ok()?;
        let tz = match self {
            Clock::Utc => jiff::tz::TimeZone::UTC,
            Clock::Zone(tz) => tz.clone(),
        };
        let z = date.to_zoned(tz).ok()?.start_of_day().ok()?;
        Some(Instant(z.timestamp().as_millisecond()))
    }

    /// `at` as a zoned time of this clock (UTC for [`Clock::Utc`]).
    pub fn zoned(&self, at: Instant) -> Option<jiff::Zoned> {
        let ts = jiff::Timestamp::from_millisecond(at.0).ok()?;
        Some(match self {
            Clock::Utc => ts.to_zoned(jiff::tz::TimeZone::UTC),
            Clock::Zone(tz) => ts.to_zoned(tz.clone()),
        })
    }
}

/// `day` (`YYYY-MM-DD`) moved by `n` calendar days (negative goes back); `None` past jiff's
/// range.
pub fn add_days(day: &str, n: i64) -> Option<String> {
    let date: jiff::civil::Date = day.parse().ok()?;
    let span = jiff::Span::new().try_days(n).ok()?;
    let moved = date.checked_add(span).ok()?;
    (0..=9999)
        .contains(&moved.year())
        .then(|| moved.to_string())
}
