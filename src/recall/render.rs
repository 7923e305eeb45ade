//! Text renderings of `recent`: the terminal form and the MCP tool form (anchor §8). A step that
//! is not simply committed carries its status mark after the summary, and an answer showing a
//! step whose day file is gone ends with the `git rutter restore` hint, once (spec/recall.md).
//! Each field of the record is written on its line as one field (`records::text::push_field`:
//! a line break or a control inside it is shown as `\u{XXXX}`), so no summary, project or
//! cited path can start a line of its own (spec/output.md).

use super::recent::{Recent, Session, Step};
use crate::records::standing::Status;
use crate::records::supersede::Links;
use crate::records::text::{field_safe_since, push_field};
use std::fmt::Write as _;

/// The hint after an answer that shows an entry whose day file is missing.
pub(crate) const RESTORE_HINT: &str = "Entries marked [deleted from the working tree] are read from refs/rutter/records; run `git rutter restore` to put their day files back.";

/// The reference's empty-state strings; `None` when there are sessions.
pub(crate) fn empty_state(r: &Recent) -> Option<String> {
    match r {
        Recent::NothingRecorded => Some("No recent sessions recorded yet.".into()),
        Recent::NoProject(p) => Some(format!(
            "No sessions recorded for project \"{}\".",
            crate::records::text::field_safe(p)
        )),
        Recent::NothingInWindow => Some("No sessions in the requested window.".into()),
        Recent::NoMatch(words) => Some(format!(
            "No recorded sessions match \"{}\" in the requested window.",
            crate::records::text::field_safe(words)
        )),
        Recent::Sessions(_) => None,
    }
}

pub(crate) use crate::clock::Clock;

/// How a cited ref reads: appends it, given its path and hash, to the text being made; recall
/// passes [`super::refs::Shown::write`] over the index.
pub(crate) type RefText<'a> = &'a dyn Fn(&mut String, &str, &str);

/// A step's short id (`recent` shows the form `retract` and `log` take).
pub(crate) type IdText<'a> = &'a dyn Fn(&str) -> String;

/// What the terminal form shows beyond the tool form: times in a zone, and each step's short
/// id and client (`ids`; none in tests that pin the step lines alone).
#[derive(Default)]
pub(crate) struct Look<'a> {
    pub clock: Clock,
    pub ids: Option<IdText<'a>>,
}

/// What the renderings read of a step: recall's [`Step`] and the stream's lighter
/// [`super::stream::LeanStep`] alike, so both print through one renderer.
pub(crate) trait StepText {
    /// The day of the file the step came from.
    fn day(&self) -> &str;
    /// The recorded UTC time (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
    fn time(&self) -> &str;
    fn summary(&self) -> &str;
    /// The entry's id.
    fn id(&self) -> &str;
    /// The client that wrote it, when it says.
    fn client(&self) -> Option<&str>;
    fn status(&self) -> Status;
    /// The cited refs as `(path, hash)`, in order.
    fn refs(&self) -> impl Iterator<Item = (&str, &str)> + '_;
    /// Its supersede links, when recall resolved them.
    fn supersede(&self) -> Option<&Links> {
        None
    }
}

impl StepText for Step {
    fn day(&self) -> &str {
        &self.day
    }
    fn time(&self) -> &str {
        &self.entry.time
    }
    fn summary(&self) -> &str {
        &self.entry.summary
    }
    fn id(&self) -> &str {
        &self.entry.id
    }
    fn client(&self) -> Option<&str> {
        self.entry.client.as_deref()
    }
    fn status(&self) -> Status {
        self.status
    }
    fn refs(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.entry
            .refs
            .iter()
            .map(|r| (r.path.as_str(), r.hash.as_str()))
    }
    fn supersede(&self) -> Option<&Links> {
        Some(&self.supersede)
    }
}

/// One session as the renderings read it.
pub(crate) struct SessionText<'a, S> {
    pub project: Option<&'a str>,
    /// The steps shown, oldest first.
    pub steps: &'a [S],
    pub total_steps: usize,
    /// Steps left out by `brief`.
    pub omitted: usize,
}

impl<'a> SessionText<'a, Step> {
    /// The text view of one of `recent`'s sessions.
    pub(crate) fn of(s: &'a Session) -> Self {
        SessionText {
            project: s.project.as_deref(),
            steps: &s.steps,
            total_steps: s.total_steps,
            omitted: s.omitted,
        }
    }
}

impl<S: StepText> SessionText<'_, S> {
    /// Whether a step shown is marked deleted (the restore hint follows the answer).
    pub(crate) fn shows_deleted(&self) -> bool {
        self.steps.iter().any(|st| st.status() == Status::Deleted)
    }
}

/// Terminal rendering: sessions separated by a blank line. `marks`: the vault has a record, so
/// each step's status is shown (without one every step would read `[unverified]`).
pub(crate) fn cli(r: &Recent, refs: RefText<'_>, marks: bool, look: &Look) -> String {
    each_session(r, marks, &|s| {
        let mut out = String::new();
        cli_session(&mut out, &SessionText::of(s), refs, marks, look);
        out
    })
}

/// [`cli`] of some of an answer's sessions, for printing an answer in parts (`recent --all`
/// prints its first screen before it reads the rest): the sessions separated by a blank line,
/// without the restore hint ([`cli_hint`] gives it for the whole answer).
pub(crate) fn cli_part(
    sessions: &[Session],
    refs: RefText<'_>,
    marks: bool,
    look: &Look,
) -> String {
    let mut out = String::new();
    for (i, s) in sessions.iter().enumerate() {
        if i > 0 {
            out.push_str("\n\n");
        }
        cli_session(&mut out, &SessionText::of(s), refs, marks, look);
    }
    out
}

/// What [`cli`] puts after the sessions, appended to `out`: the restore hint (after a blank
/// line) when a step shown is marked deleted (`deleted`), else nothing.
pub(crate) fn push_cli_hint(out: &mut String, deleted: bool, marks: bool) {
    if marks && deleted {
        out.push_str("\n\n");
        out.push_str(RESTORE_HINT);
    }
}

/// The empty state, or each session rendered by `f`, separated by a blank line, then the
/// restore hint when a step shown is marked deleted.
fn each_session(r: &Recent, marks: bool, f: &dyn Fn(&Session) -> String) -> String {
    match r {
        Recent::Sessions(sessions) => {
            let mut out = sessions.iter().map(f).collect::<Vec<_>>().join("\n\n");
            let deleted = sessions.iter().any(|s| SessionText::of(s).shows_deleted());
            push_cli_hint(&mut out, deleted, marks);
            out
        }
        other => empty_state(other).unwrap_or_default(),
    }
}

/// One session as the terminal shows it, appended to `out`.
pub(crate) fn cli_session<S: StepText>(
    out: &mut String,
    s: &SessionText<'_, S>,
    refs: RefText<'_>,
    marks: bool,
    look: &Look,
) {
    if let ([step], 1) = (s.steps, s.total_steps) {
        push_id(out, step, look);
        step_line(out, step, s.project, marks, look);
        for (path, hash) in step.refs() {
            out.push_str("\n   refs: ");
            push_ref(out, refs, path, hash);
        }
        return;
    }
    span(out, s, &look.clock);
    push_project_tag(out, s.project);
    let _ = write!(out, " — one session, {} steps", s.total_steps);
    if s.omitted > 0 {
        let _ = write!(out, " (showing first and last; {} omitted)", s.omitted);
    }
    out.push(':');
    for step in s.steps {
        out.push_str("\n  · ");
        push_id(out, step, look);
        step_line(out, step, None, marks, look);
        for (path, hash) in step.refs() {
            out.push_str("\n     refs: ");
            push_ref(out, refs, path, hash);
        }
    }
}

/// MCP tool rendering (`librarian-recent`); `marks` as for [`cli`].
pub(crate) fn tool(r: &Recent, refs: RefText<'_>, marks: bool, ids: Option<IdText<'_>>) -> String {
    each_session(r, marks, &|s| tool_session(s, refs, marks, ids))
}

fn tool_session(s: &Session, refs: RefText<'_>, marks: bool, ids: Option<IdText<'_>>) -> String {
    let utc = &Clock::Utc;
    if s.steps.len() == 1 && s.total_steps == 1 {
        return tool_step(&s.steps[0], refs, marks, ids);
    }
    let mut header = String::new();
    span(&mut header, &SessionText::of(s), utc);
    push_project_tag(&mut header, s.project.as_deref());
    if s.omitted > 0 {
        let _ = write!(
            header,
            " — one session, first and last of {} steps — middle {} omitted (detail: brief):",
            s.total_steps, s.omitted
        );
    } else {
        let _ = write!(header, " — one session, {} steps, in order:", s.total_steps);
    }
    let steps: Vec<String> = s
        .steps
        .iter()
        .map(|st| {
            format!(
                "  · {}",
                tool_step(st, refs, marks, ids).replace('\n', "\n  ")
            )
        })
        .collect();
    format!("{header}\n{}", steps.join("\n"))
}

/// One step as the tool shows it; with `ids`, its (short) id after the summary and marks, the
/// id a later decision names in `supersedes`.
fn tool_step(step: &Step, refs: RefText<'_>, marks: bool, ids: Option<IdText<'_>>) -> String {
    let mut out = String::new();
    step_line(
        &mut out,
        step,
        step.entry.project(),
        marks,
        &Look::default(),
    );
    if let Some(ids) = ids {
        out.push_str(" (id ");
        push_field(&mut out, &ids(step.id()));
        out.push(')');
    }
    for (i, (path, hash)) in step.refs().enumerate() {
        let lead = if i == 0 { "\n   refs: " } else { "\n         " };
        out.push_str(lead);
        push_ref(&mut out, refs, path, hash);
    }
    out
}

/// How a cited ref reads (`refs`: its path, hash and drift), appended to `out` as one field.
pub(super) fn push_ref(out: &mut String, refs: RefText<'_>, path: &str, hash: &str) {
    let start = out.len();
    refs(out, path, hash);
    field_safe_since(out, start);
}

/// The session's day, or its first and last day (`first → last`), appended to `out`.
fn span<S: StepText>(out: &mut String, s: &SessionText<'_, S>, clock: &Clock) {
    let (Some(first), Some(last)) = (s.steps.first(), s.steps.last()) else {
        return;
    };
    let start = out.len();
    clock.push_day(out, first.day(), first.time());
    let mid = out.len();
    clock.push_day(out, last.day(), last.time());
    if out[start..mid] == out[mid..] {
        out.truncate(mid);
    } else {
        out.insert_str(mid, " → ");
    }
}

/// The step's short id and a space, when the look shows ids (as `git log --oneline` leads with
/// the commit).
pub(super) fn push_id<S: StepText>(out: &mut String, step: &S, look: &Look) {
    if let Some(ids) = look.ids {
        push_field(out, &ids(step.id()));
        out.push(' ');
    }
}

/// ` [project]`, or nothing, appended to `out`.
fn push_project_tag(out: &mut String, project: Option<&str>) {
    if let Some(p) = project {
        out.push_str(" [");
        push_field(out, p);
        out.push(']');
    }
}

/// One step's line, appended to `out`: `day time[ [project]] — summary`, then its status mark
/// when `marks` and its supersede marks (`recall::row`).
pub(super) fn step_line<S: StepText>(
    out: &mut String,
    step: &S,
    project: Option<&str>,
    marks: bool,
    look: &Look,
) {
    // A time that does not parse is shown as the text it holds.
    let start = out.len();
    look.clock.push_day_time(out, step.day(), step.time());
    field_safe_since(out, start);
    push_project_tag(out, project);
    if let (Some(_), Some(client)) = (look.ids, step.client()) {
        out.push_str(" (");
        push_field(out, client);
        out.push(')');
    }
    out.push_str(" — ");
    push_field(out, step.summary());
    super::row::push_mark(out, step.status(), marks);
    if let Some(links) = step.supersede() {
        super::row::push_supersede(out, links, look.ids);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::recent::Step;
    use crate::records::{Entry, NoteRef, Workspace};
    use proptest::prelude::*;

    /// The day and time strftime gives, as `day_time` made them before it wrote them by hand.
    fn by_strftime(tz: &jiff::tz::TimeZone, day: &str, time: &str) -> (String, String) {
        match time.parse::<jiff::Timestamp>() {
            Ok(ts) => {
                let z = ts.to_zoned(tz.clone());
                (
                    z.strftime("%Y-%m-%d").to_string(),
                    z.strftime("%H:%M:%S %z").to_string(),
                )
            }
            Err(_) => (day.to_string(), time.get(11..19).unwrap_or("").to_string()),
        }
    }

    proptest! {
        /// Any instant jiff can hold, in zones with half-hour offsets, daylight saving and
        /// local mean time (offsets in seconds), and text that is no time at all.
        #[test]
        fn local_times_are_what_strftime_writes(
            second in jiff::Timestamp::MIN.as_second()..=jiff::Timestamp::MAX.as_second(),
            recent in 0..4_102_444_800_i64,
            milli in 0..1000_i32,
            zone in prop_oneof![
                Just("UTC"),
                Just("America/Los_Angeles"),
                Just("Asia/Kolkata"),
                Just("Australia/Lord_Howe"),
                Just("Europe/Amsterdam"),
                Just("Pacific/Chatham"),
            ],
            junk in "[0-9T:.Z-]{0,24}",
        ) {
            let tz = jiff::tz::TimeZone::get(zone).unwrap();
            let clock = Clock::Zone(tz.clone());
            for s in [second, recent, -recent] {
                let ts = jiff::Timestamp::new(s, milli * 1_000_000).unwrap();
                let time = ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
                for text in [time.as_str(), junk.as_str()] {
                    prop_assert_eq!(clock.day_time("2026-11-30", text), by_strftime(&tz, "2026-11-30", text));
                    let mut day = String::new();
                    clock.push_day(&mut day, "2026-11-30", text);
                    prop_assert_eq!(day, by_strftime(&tz, "2026-11-30", text).0);
                }
            }
        }
    }

    fn step(time: &str, refs: &[&str]) -> Step {
        Step {
            supersede: Default::default(),
            status: Status::Committed,
            day: "2026-11-30".into(),
            entry: Entry {
                id: time.into(),
                session_id: Some("S".into()),
                time: format!("2026-11-30T{time}.000Z"),
                summary: format!("did {time}"),
                refs: refs
                    .iter()
                    .map(|p| NoteRef::new(*p, "sha256:ab", None))
                    .collect(),
                workspace: Some(Workspace::new("/w", "proj", None)),
                client: None,
                supersedes: None,
                extra: Default::default(),
            },
        }
    }

    fn session(steps: Vec<Step>, omitted: usize) -> Recent {
        let total_steps = steps.len() + omitted;
        Recent::Sessions(vec![Session {
            session_id: Some("S".into()),
            project: Some("proj".into()),
            steps,
            total_steps,
            omitted,
        }])
    }

    #[test]
    fn tool_and_cli_forms_match_the_reference() {
        let refs = &|out: &mut String, path: &str, hash: &str| {
            let _ = write!(out, "{path}@{hash}");
        };
        let tool = |r: &Recent| tool(r, refs, true, None);
        let cli = |r: &Recent| cli(r, refs, true, &Look::default());
        let one = session(vec![step("01:00:00", &["a.md", "b.md"])], 0);
        assert_eq!(tool(&one), "2026-11-30 01:00:00 [proj] — did 01:00:00\n   refs: a.md@sha256:ab\n         b.md@sha256:ab");
        assert_eq!(cli(&one), "2026-11-30 01:00:00 [proj] — did 01:00:00\n   refs: a.md@sha256:ab\n   refs: b.md@sha256:ab");
        let two = session(
            vec![step("01:00:00", &["a.md", "b.md"]), step("02:00:00", &[])],
            0,
        );
        assert_eq!(
            tool(&two),
            "2026-11-30 [proj] — one session, 2 steps, in order:\n  · 2026-11-30 01:00:00 [proj] — did 01:00:00\n     refs: a.md@sha256:ab\n           b.md@sha256:ab\n  · 2026-11-30 02:00:00 [proj] — did 02:00:00"
        );
        assert_eq!(
            cli(&two),
            "2026-11-30 [proj] — one session, 2 steps:\n  · 2026-11-30 01:00:00 — did 01:00:00\n     refs: a.md@sha256:ab\n     refs: b.md@sha256:ab\n  · 2026-11-30 02:00:00 — did 02:00:00"
        );
        let brief = session(vec![step("01:00:00", &[]), step("05:00:00", &[])], 3);
        assert!(tool(&brief).starts_with("2026-11-30 [proj] — one session, first and last of 5 steps — middle 3 omitted (detail: brief):"));
        assert!(cli(&brief).starts_with(
            "2026-11-30 [proj] — one session, 5 steps (showing first and last; 3 omitted):"
        ));
    }

    /// A line break or a control in a summary, a project, a client, an id, a time or a cited
    /// path stays inside its field, in the terminal form and the tool form alike.
    #[test]
    fn each_field_stays_on_its_line() {
        let refs = &|out: &mut String, path: &str, hash: &str| {
            let _ = write!(out, "{path}@{hash} (renamed to x\ny)");
        };
        let mut one = step("01:00:00", &["a\nFAKE.md"]);
        one.entry.summary = "did\nFAKE summary\r\u{2028}".into();
        one.entry.workspace = Some(Workspace::new("/w", "p\nFAKE", None));
        one.entry.client = Some("c\nFAKE".into());
        one.entry.id = "id\nFAKE".into();
        let mut two = step("02:00:00", &[]);
        two.entry.time = "2026-11-30T0\nFAKE:00.000Z".into();
        let ids = |id: &str| id.to_string();
        let look = Look {
            clock: Clock::Utc,
            ids: Some(&ids),
        };
        for r in [session(vec![one.clone()], 0), session(vec![one, two], 0)] {
            for text in [cli(&r, refs, true, &look), tool(&r, refs, true, None)] {
                let forged: Vec<&str> = text.lines().filter(|l| l.starts_with("FAKE")).collect();
                assert!(forged.is_empty(), "{text}");
                assert!(!text.contains(['\r', '\u{2028}']), "{text}");
                assert!(
                    text.contains("did\\u{000A}FAKE summary\\u{000D}\\u{2028}"),
                    "{text}"
                );
                assert!(
                    text.contains("a\\u{000A}FAKE.md@sha256:ab (renamed to x\\u{000A}y)"),
                    "{text}"
                );
            }
        }
    }

    #[test]
    fn marks_follow_the_summary_and_the_restore_hint_comes_once() {
        let refs = &|out: &mut String, path: &str, _: &str| out.push_str(path);
        let mut steps = vec![
            step("01:00:00", &["a.md"]),
            step("02:00:00", &[]),
            step("03:00:00", &[]),
            step("04:00:00", &[]),
            step("05:00:00", &[]),
        ];
        let all = [
            Status::Committed,
            Status::Edited,
            Status::Deleted,
            Status::Pending,
            Status::Unverified,
        ];
        for (st, s) in steps.iter_mut().zip(all) {
            st.status = s;
        }
        let r = session(steps, 0);
        let want_cli = "2026-11-30 [proj] — one session, 5 steps:\n  · 2026-11-30 01:00:00 — did 01:00:00\n     refs: a.md\n  · 2026-11-30 02:00:00 — did 02:00:00 [edited after commit]\n  · 2026-11-30 03:00:00 — did 03:00:00 [deleted from the working tree]\n  · 2026-11-30 04:00:00 — did 04:00:00 [not committed yet]\n  · 2026-11-30 05:00:00 — did 05:00:00 [unverified]\n\n";
        assert_eq!(
            cli(&r, refs, true, &Look::default()),
            format!("{want_cli}{RESTORE_HINT}")
        );
        let tool_text = tool(&r, refs, true, None);
        assert!(
            tool_text
                .contains("  · 2026-11-30 02:00:00 [proj] — did 02:00:00 [edited after commit]\n"),
            "{tool_text}"
        );
        assert_eq!(tool_text.matches(RESTORE_HINT).count(), 1);
        assert!(tool_text.ends_with(RESTORE_HINT));
        let plain = cli(&r, refs, false, &Look::default());
        for mark in all.iter().filter_map(|s| s.mark()) {
            assert!(!plain.contains(mark), "no record, no marks: {plain}");
        }
        assert!(!plain.contains(RESTORE_HINT));
    }
}
