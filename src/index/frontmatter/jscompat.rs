//! What JavaScript does differently, for notes read as the reference reads them: `String()` of a
//! YAML float, js-yaml's timestamps shown as `toISOString().slice(0, 10)` (with `Date.UTC`'s
//! overflow rules), and the title regex `/^#\s+(.+)$/m` with JavaScript's line terminators and
//! whitespace.

use crate::clock::{civil_from_days, day_number};
use crate::records::text::is_js_whitespace;

// ---------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------

/// JavaScript's `String(number)` for the values YAML floats can take.
pub(super) fn js_number(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if x == 0.0 {
        return "0".to_owned();
    }
    let abs = x.abs();
    if (1e-6..1e21).contains(&abs) {
        return x.to_string();
    }
    // Exponent form: Rust writes `1.5e-7` / `1e21`, JavaScript `1.5e-7` / `1e+21`.
    let text = format!("{x:e}");
    match text.split_once('e') {
        Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
        _ => text,
    }
}

// ---------------------------------------------------------------------------
// Timestamps (js-yaml's timestamp type, shown as `toISOString().slice(0, 10)`)
// ---------------------------------------------------------------------------

/// A small cursor over ASCII text for the timestamp grammar.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn digits(&mut self, min: usize, max: usize) -> Option<i64> {
        let start = self.pos;
        let mut value = 0_i64;
        while self.pos - start < max {
            match self.bytes.get(self.pos) {
                // Saturating: a fraction of any length (`…00.` and 20 digits) is read past, its
                // value never used, and must not overflow.
                Some(d) if d.is_ascii_digit() => {
                    value = value.saturating_mul(10).saturating_add(i64::from(d - b'0'))
                }
                _ => break,
            }
            self.pos += 1;
        }
        (self.pos - start >= min).then_some(value)
    }

    fn eat(&mut self, byte: u8) -> bool {
        let hit = self.bytes.get(self.pos) == Some(&byte);
        self.pos += usize::from(hit);
        hit
    }

    fn skip_blanks(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.bytes.get(self.pos), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn at_end(&self) -> bool {
        self.pos == self.bytes.len()
    }
}

/// The UTC date of a js-yaml timestamp, or `None` when `s` is not one.
pub(super) fn timestamp_utc_date(s: &str) -> Option<String> {
    let first = *s.as_bytes().first()?;
    if !first.is_ascii_digit() || s.len() < 8 {
        return None;
    }
    let mut c = Cursor {
        bytes: s.as_bytes(),
        pos: 0,
    };
    let year = c.digits(4, 4)?;
    c.eat(b'-').then_some(())?;
    let month = c.digits(1, 2)?;
    c.eat(b'-').then_some(())?;
    let day = c.digits(1, 2)?;
    if c.at_end() {
        // The date-only form needs two-digit month and day.
        return (s.len() == 10).then(|| utc_date(year, month, day, 0));
    }
    if !(c.eat(b'T') || c.eat(b't') || c.skip_blanks() > 0) {
        return None;
    }
    let hour = c.digits(1, 2)?;
    c.eat(b':').then_some(())?;
    let minute = c.digits(2, 2)?;
    c.eat(b':').then_some(())?;
    let second = c.digits(2, 2)?;
    if c.eat(b'.') {
        c.digits(0, usize::MAX);
    }
    let offset_minutes = timestamp_offset(&mut c)?;
    let seconds = hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(utc_date(year, month, day, seconds))
}

/// The optional `[ \t]*(Z|±h[h][:mm])` zone at the end of a timestamp, in minutes.
fn timestamp_offset(c: &mut Cursor<'_>) -> Option<i64> {
    if c.at_end() {
        return Some(0);
    }
    c.skip_blanks();
    let offset = if c.eat(b'Z') {
        0
    } else {
        let sign = if c.eat(b'+') {
            1
        } else if c.eat(b'-') {
            -1
        } else {
            return None;
        };
        let hours = c.digits(1, 2)?;
        let minutes = if c.eat(b':') { c.digits(2, 2)? } else { 0 };
        sign * (hours * 60 + minutes)
    };
    c.at_end().then_some(offset)
}

/// `Date.UTC(year, month - 1, day)` plus `seconds`, as an ISO date (JavaScript overflow rules).
fn utc_date(year: i64, month: i64, day: i64, seconds: i64) -> String {
    let year = if (0..=99).contains(&year) {
        year + 1900
    } else {
        year
    };
    let month0 = month - 1;
    let days = day_number(year + month0.div_euclid(12), month0.rem_euclid(12) + 1, 1)
        + (day - 1)
        + seconds.div_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    if (0..=9999).contains(&y) {
        format!("{y:04}-{m:02}-{d:02}")
    } else {
        // toISOString's expanded years, cut to ten characters like `.slice(0, 10)`.
        let sign = if y < 0 { '-' } else { '+' };
        let full = format!("{sign}{:06}-{m:02}-{d:02}", y.abs());
        full[..10].to_owned()
    }
}

// ---------------------------------------------------------------------------
// Title (the reference's `/^#\s+(.+)$/m`)
// ---------------------------------------------------------------------------

/// The characters JavaScript's `.`, `^` and `$` treat as line ends.
fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// The trimmed capture of the first match of `/^#\s+(.+)$/m`, JavaScript semantics.
///
/// As in JavaScript, `\s+` may run over line breaks (`"#\n\nText"` gives
/// `Text`), and a match can capture only whitespace (then the result is empty).
pub(super) fn first_heading(body: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(offset) = body[from..].find('#') {
        let at = from + offset;
        from = at + 1;
        if at > 0
            && !body[..at]
                .chars()
                .next_back()
                .is_some_and(is_line_terminator)
        {
            continue;
        }
        let rest = &body[at + 1..];
        let spaces = rest.len() - rest.trim_start_matches(is_js_whitespace).len();
        if spaces == 0 {
            continue;
        }
        let after = &rest[spaces..];
        if !after.is_empty() {
            let end = after.find(is_line_terminator).unwrap_or(after.len());
            return Some(after[..end].trim_end_matches(is_js_whitespace));
        }
        // At the end of the text `.+` can only take back a non-line-break space.
        let backtracks = rest[..spaces]
            .chars()
            .skip(1)
            .any(|c| !is_line_terminator(c));
        return backtracks.then_some("");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_number_formatting() {
        assert_eq!(js_number(1.0), "1");
        assert_eq!(js_number(-0.0), "0");
        assert_eq!(js_number(0.1), "0.1");
        assert_eq!(js_number(1.5e-7), "1.5e-7");
        assert_eq!(js_number(2.5e21), "2.5e+21");
        assert_eq!(js_number(f64::NEG_INFINITY), "-Infinity");
    }
}
