//! The retraction line: a correction appended to a day file that takes an earlier entry out of
//! recall without rewriting it (grammar in `spec/record-format.md`).
//!
//! Like an entry line it is a human part for readers followed by an ASCII-only JSON machine
//! part, under its own marker, so a reader that only knows entry lines skips it.

use super::line::{escape_json_text, LineError};
use super::text::push_display_safe;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The marker that opens the machine part of a retraction line.
pub(crate) const MARKER: &str = "<!-- rutter:retract ";
const CLOSE: &str = " -->";

/// A retraction: which entry it takes back, when, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Retraction {
    /// The retraction's own id (an entry-id-shaped instant, unique in the vault).
    pub id: String,
    /// The id of the entry it retracts.
    pub retracts: String,
    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, UTC.
    pub time: String,
    /// Why, as the user gave it (one inert line).
    pub reason: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Retraction {
    /// The `HH:MM:SS` part of its time (empty when the time is malformed).
    pub(crate) fn hhmmss(&self) -> &str {
        self.time.get(11..19).unwrap_or("")
    }
}

/// Renders a retraction as one line, without the trailing newline:
/// `- HH:MM:SS — retracted ENTRY-ID: REASON <!-- rutter:retract {json} -->`.
pub(crate) fn render(r: &Retraction) -> String {
    let mut out = String::with_capacity(128 + r.reason.len() * 2);
    out.push_str("- ");
    push_display_safe(&mut out, r.hhmmss());
    out.push_str(" — retracted ");
    push_display_safe(&mut out, &r.retracts);
    out.push_str(": ");
    push_display_safe(&mut out, &r.reason);
    out.push(' ');
    out.push_str(MARKER);
    // Serialising a struct of strings and a JSON map cannot fail.
    out.push_str(&escape_json_text(
        &serde_json::to_string(r).unwrap_or_default(),
    ));
    out.push_str(CLOSE);
    out
}

/// Parses a line: `Ok(None)` when it is not a retraction line (no retraction marker, or it
/// carries the entry marker: then it is an entry line, valid or not), `Err` when it carries the
/// marker but is malformed. A trailing `\n` is tolerated.
pub fn parse(line: &str) -> Result<Option<Retraction>, LineError> {
    let line = line.strip_suffix('\n').unwrap_or(line);
    if line.contains(super::line::MARKER) {
        return Ok(None);
    }
    let Some(start) = line.rfind(MARKER) else {
        return Ok(None);
    };
    let json = line[start + MARKER.len()..]
        .strip_suffix(CLOSE)
        .ok_or(LineError::Unclosed)?;
    serde_json::from_str::<Retraction>(json)
        .map(Some)
        .map_err(|e| LineError::Json(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::text::strategies::hostile_text;
    use proptest::prelude::*;

    fn sample() -> Retraction {
        Retraction {
            id: "20261201T080000000Z".into(),
            retracts: "20261130T100000000Z".into(),
            time: "2026-12-01T08:00:00.000Z".into(),
            reason: "The example in a code fence was captured.".into(),
            extra: Map::new(),
        }
    }

    #[test]
    fn renders_the_documented_shape() {
        assert_eq!(
            render(&sample()),
            "- 08:00:00 — retracted 20261130T100000000Z: The example in a code fence was captured. <!-- rutter:retract {\"id\":\"20261201T080000000Z\",\"retracts\":\"20261130T100000000Z\",\"time\":\"2026-12-01T08:00:00.000Z\",\"reason\":\"The example in a code fence was captured.\"} -->"
        );
    }

    #[test]
    fn entry_readers_skip_it_and_entry_lines_are_not_retractions() {
        let line = render(&sample());
        assert_eq!(crate::records::line::parse(&line), Ok(None));
        let entry = "- 00:00:00 — s <!-- rutter:entry {\"id\":\"a\",\"time\":\"t\",\"summary\":\"<!-- rutter:retract {} -->\",\"refs\":[]} -->";
        assert_eq!(parse(entry), Ok(None));
        assert_eq!(parse("# Sessions - 2026-11-30"), Ok(None));
    }

    #[test]
    fn malformed_lines_are_reported_and_unknown_keys_kept() {
        assert_eq!(
            parse("- x <!-- rutter:retract {\"id\":1} "),
            Err(LineError::Unclosed)
        );
        assert!(matches!(
            parse("- x <!-- rutter:retract {\"id\":\"a\"} -->"),
            Err(LineError::Json(_))
        ));
        let future = "- x <!-- rutter:retract {\"id\":\"a\",\"retracts\":\"b\",\"time\":\"t\",\"reason\":\"r\",\"by\":{\"who\":1}} -->";
        let r = parse(future).unwrap().unwrap();
        assert_eq!(r.extra["by"], serde_json::json!({"who": 1}));
        assert_eq!(parse(&render(&r)).unwrap(), Some(r));
    }

    fn any_text() -> impl Strategy<Value = String> {
        hostile_text(&[MARKER, crate::records::line::MARKER, " — retracted ", ": "])
    }

    proptest! {
        #[test]
        fn round_trips_and_stays_one_line(
            reason in any_text(), retracts in any_text(), id in any_text(), time in any_text(),
        ) {
            let r = Retraction { id, retracts, time, reason, extra: Map::new() };
            let line = render(&r);
            prop_assert!(!line.contains('\n') && !line.contains('\r'));
            let separators = ['\u{2028}', '\u{2029}'];
            prop_assert!(!line.contains(separators), "a line or paragraph separator: {:?}", line);
            prop_assert_eq!(line.matches(MARKER).count(), 1);
            prop_assert!(!line.contains(crate::records::line::MARKER));
            prop_assert!(line.ends_with(" -->"));
            prop_assert_eq!(crate::records::line::parse(&line), Ok(None));
            prop_assert_eq!(parse(&line).unwrap(), Some(r));
        }
    }
}
