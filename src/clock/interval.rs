//! Intervals as people write them in git config (`30s`, `15m`, `2h`, `1d`; `off`), for
//! `rutter.autoSync` and `rutter.syncTimeout`.

use std::time::Duration;

/// Reads an interval: a whole number with a unit (`30s`, `15m`, `2h`, `1d`; a bare number is
/// seconds); `off`, `false`, `no`, `never`, `0` or nothing turn it off (`None`).
pub(crate) fn parse_interval(raw: &str) -> Result<Option<Duration>, IntervalError> {
    let v = raw.trim().to_ascii_lowercase();
    if matches!(v.as_str(), "" | "0" | "off" | "false" | "no" | "never") {
        return Ok(None);
    }
    let digits = v.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &v[digits.len()..];
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| IntervalError::NotANumber(raw.to_string()))?;
    let secs = match unit {
        "" | "s" | "sec" | "secs" | "second" | "seconds" => 1,
        "m" | "min" | "mins" | "minute" | "minutes" => 60,
        "h" | "hour" | "hours" => 3600,
        "d" | "day" | "days" => 86_400,
        _ => return Err(IntervalError::UnknownUnit(raw.to_string())),
    };
    match n.checked_mul(secs) {
        Some(0) => Ok(None),
        Some(s) => Ok(Some(Duration::from_secs(s))),
        None => Err(IntervalError::TooLong(raw.to_string())),
    }
}

/// A config value that is no interval.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum IntervalError {
    #[error("{0:?} is not an interval (say 30s, 15m, 2h or 1d, or off)")]
    NotANumber(String),
    #[error("{0:?} has an unknown unit (use s, m, h or d)")]
    UnknownUnit(String),
    #[error("{0:?} is too long an interval")]
    TooLong(String),
}

/// An interval as people write it: the largest unit that divides it (`5m`, `90s`, `2h`).
pub(crate) fn show_interval(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0 => format!("{}ms", d.as_millis()),
        _ if s.is_multiple_of(86_400) => format!("{}d", s / 86_400),
        _ if s.is_multiple_of(3600) => format!("{}h", s / 3600),
        _ if s.is_multiple_of(60) => format!("{}m", s / 60),
        _ => format!("{s}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn intervals_read_as_people_write_them() {
        let s = |n| Ok(Some(Duration::from_secs(n)));
        assert_eq!(parse_interval("15m"), s(900));
        assert_eq!(parse_interval(" 2h "), s(7200));
        assert_eq!(parse_interval("30"), s(30));
        assert_eq!(parse_interval("1d"), s(86_400));
        assert_eq!(parse_interval("10 min"), s(600));
        for off in ["", "0", "off", "OFF", "false", "no", "never", "0m"] {
            assert_eq!(parse_interval(off), Ok(None), "{off}");
        }
        for bad in ["m", "15x", "-5m", "1.5h", "99999999999999999999d", "15m30s"] {
            assert!(parse_interval(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn intervals_show_as_they_are_written() {
        for (secs, shown) in [(300, "5m"), (90, "90s"), (7200, "2h"), (86_400, "1d")] {
            assert_eq!(show_interval(Duration::from_secs(secs)), shown);
        }
    }

    proptest! {
        #[test]
        fn reading_an_interval_never_panics(s in "\\PC{0,24}") {
            let _ = parse_interval(&s);
        }

        #[test]
        fn written_intervals_read_back(n in 1u64..100_000, unit in 0usize..4) {
            let (suffix, secs) = [("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)][unit];
            prop_assert_eq!(
                parse_interval(&format!("{n}{suffix}")),
                Ok(Some(Duration::from_secs(n * secs)))
            );
            let d = Duration::from_secs(n * secs);
            prop_assert_eq!(parse_interval(&show_interval(d)), Ok(Some(d)));
        }
    }
}
