//! Text renderings of `recent`: the terminal form and the MCP tool form (anchor §8). A step that
//! is not simply committed carries its status mark after the summary, and an answer showing a
//! step whose day file is gone ends with the `git rutter restore` hint, once (spec/recall.md).

use super::recent::{Recent, Session, Step};
use crate::records::status::Status;
use crate::records::NoteRef;

/// The hint after an answer that shows an entry whose day file is missing.
pub const RESTORE_HINT: &str = "Entries marked [deleted from the working tree] are read from refs/rutter/records; run `git rutter restore` to put their day files back.";

/// The reference's empty-state strings; `None` when there are sessions.
pub fn empty_state(r: &Recent) -> Option<String> {
    match r {
        Recent::NothingRecorded => Some("No recent sessions recorded yet.".into()),
        Recent::NoProject(p) => Some(format!("No sessions recorded for project \"{p}\".")),
        Recent::NothingInWindow => Some("No sessions in the requested window.".into()),
        Recent::NoMatch(words) => Some(format!(
            "No recorded sessions match \"{words}\" in the requested window."
        )),
        Recent::Sessions(_) => None,
    }
}

/// How times are shown: as recorded, in UTC (the MCP tool, whose strings follow the reference;
/// `--utc`), or in a time zone with its offset, as `git log` shows them (the terminal).
#[derive(Debug, Clone, Default)]
pub enum Clock {
    #[default]
    Utc,
    Zone(jiff::tz::TimeZone),
}

impl Clock {
    /// The system's time zone (`TZ`, else `/etc/localtime`), else UTC.
    pub fn local() -> Clock {
        Clock::Zone(jiff::tz::TimeZone::system())
    }

    /// The day and the time of day of a recorded UTC `time` (`YYYY-MM-DDTHH:MM:SS.mmmZ`) on
    /// `day`: as recorded for UTC, else converted, the time with its offset (`13:54:55 +0100`).
    pub fn day_time(&self, day: &str, time: &str) -> (String, String) {
        let utc = || (day.to_string(), time.get(11..19).unwrap_or("").to_string());
        let Clock::Zone(tz) = self else { return utc() };
        match time.parse::<jiff::Timestamp>() {
            Ok(ts) => {
                let z = ts.to_zoned(tz.clone());
                (
                    z.strftime("%Y-%m-%d").to_string(),
                    z.strftime("%H:%M:%S %z").to_string(),
                )
            }
            Err(_) => utc(),
        }
    }
}

/// How a ref is shown; recall passes [`super::refs::shown`] over the index.
pub type RefText<'a> = &'a dyn Fn(&NoteRef) -> String;

/// Terminal rendering: sessions separated by a blank line. `marks`: the vault has a record, so
/// each step's status is shown (without one every step would read `[unverified]`).
pub fn cli(r: &Recent, refs: RefText<'_>, marks: bool, clock: &Clock) -> String {
    each_session(r, marks, &|s| cli_session(s, refs, marks, clock))
}

/// [`cli`] of some of an answer's sessions, for printing an answer in parts (`recent --all`
/// prints its first screen before it reads the rest): the sessions separated by a blank line,
/// without the restore hint ([`cli_hint`] gives it for the whole answer).
pub fn cli_part(sessions: &[Session], refs: RefText<'_>, marks: bool, clock: &Clock) -> String {
    let texts: Vec<String> = sessions
        .iter()
        .map(|s| cli_session(s, refs, marks, clock))
        .collect();
    texts.join("\n\n")
}

/// What [`cli`] puts after the sessions: the restore hint (after a blank line) when a step
/// shown is marked deleted, else nothing.
pub fn cli_hint(sessions: &[Session], marks: bool) -> String {
    let deleted = sessions
        .iter()
        .any(|s| s.steps.iter().any(|st| st.status == Status::Deleted));
    if marks && deleted {
        format!("\n\n{RESTORE_HINT}")
    } else {
        String::new()
    }
}

/// The empty state, or each session rendered by `f`, separated by a blank line, then the
/// restore hint when a step shown is marked deleted.
fn each_session(r: &Recent, marks: bool, f: &dyn Fn(&Session) -> String) -> String {
    match r {
        Recent::Sessions(sessions) => {
            let mut out = sessions.iter().map(f).collect::<Vec<_>>().join("\n\n");
            let deleted = sessions
                .iter()
                .any(|s| s.steps.iter().any(|st| st.status == Status::Deleted));
            if marks && deleted {
                out.push_str("\n\n");
                out.push_str(RESTORE_HINT);
            }
            out
        }
        other => empty_state(other).unwrap_or_default(),
    }
}

fn cli_session(s: &Session, refs: RefText<'_>, marks: bool, clock: &Clock) -> String {
    let proj = project_tag(s.project.as_deref());
    if s.steps.len() == 1 && s.total_steps == 1 {
        let step = &s.steps[0];
        let mut out = step_line(step, &proj, marks, clock);
        for r in &step.entry.refs {
            out.push_str(&format!("\n   refs: {}", refs(r)));
        }
        return out;
    }
    let shown = if s.omitted > 0 {
        format!(" (showing first and last; {} omitted)", s.omitted)
    } else {
        String::new()
    };
    let mut out = format!(
        "{}{proj} — one session, {} steps{shown}:",
        span(s, clock),
        s.total_steps
    );
    for step in &s.steps {
        out.push_str(&format!("\n  · {}", step_line(step, "", marks, clock)));
        for r in &step.entry.refs {
            out.push_str(&format!("\n     refs: {}", refs(r)));
        }
    }
    out
}

/// MCP tool rendering (`librarian-recent`); `marks` as for [`cli`].
pub fn tool(r: &Recent, refs: RefText<'_>, marks: bool) -> String {
    each_session(r, marks, &|s| tool_session(s, refs, marks))
}

fn tool_session(s: &Session, refs: RefText<'_>, marks: bool) -> String {
    let utc = &Clock::Utc;
    if s.steps.len() == 1 && s.total_steps == 1 {
        return tool_step(&s.steps[0], refs, marks);
    }
    let header = if s.omitted > 0 {
        format!(
            "{}{} — one session, first and last of {} steps — middle {} omitted (detail: brief):",
            span(s, utc),
            project_tag(s.project.as_deref()),
            s.total_steps,
            s.omitted
        )
    } else {
        format!(
            "{}{} — one session, {} steps, in order:",
            span(s, utc),
            project_tag(s.project.as_deref()),
            s.total_steps
        )
    };
    let steps: Vec<String> = s
        .steps
        .iter()
        .map(|st| format!("  · {}", tool_step(st, refs, marks).replace('\n', "\n  ")))
        .collect();
    format!("{header}\n{}", steps.join("\n"))
}

fn tool_step(step: &Step, refs: RefText<'_>, marks: bool) -> String {
    let mut out = step_line(step, &project_tag(step.entry.project()), marks, &Clock::Utc);
    for (i, r) in step.entry.refs.iter().enumerate() {
        let lead = if i == 0 { "\n   refs: " } else { "\n         " };
        out.push_str(lead);
        out.push_str(&refs(r));
    }
    out
}

fn span(s: &Session, clock: &Clock) -> String {
    let day = |st: Option<&Step>| {
        st.map_or(String::new(), |st| {
            clock.day_time(&st.day, &st.entry.time).0
        })
    };
    let (first, last) = (day(s.steps.first()), day(s.steps.last()));
    if first == last {
        first.to_string()
    } else {
        format!("{first} → {last}")
    }
}

/// ` [project]`, or nothing.
fn project_tag(project: Option<&str>) -> String {
    project.map(|p| format!(" [{p}]")).unwrap_or_default()
}

/// One step's line: `day time<tag> — summary`, then its status mark when `marks`.
fn step_line(step: &Step, tag: &str, marks: bool, clock: &Clock) -> String {
    let (day, time) = clock.day_time(&step.day, &step.entry.time);
    let mut out = format!("{day} {time}{tag} — {}", step.entry.summary);
    if let (true, Some(mark)) = (marks, step.status.mark()) {
        out.push(' ');
        out.push_str(mark);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::recent::Step;
    use crate::records::{Entry, Workspace};

    fn step(time: &str, refs: &[&str]) -> Step {
        Step {
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
        let refs = &|r: &NoteRef| format!("{}@{}", r.path, r.hash);
        let tool = |r: &Recent| tool(r, refs, true);
        let cli = |r: &Recent| cli(r, refs, true, &Clock::Utc);
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

    #[test]
    fn marks_follow_the_summary_and_the_restore_hint_comes_once() {
        let refs = &|r: &NoteRef| r.path.clone();
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
            cli(&r, refs, true, &Clock::Utc),
            format!("{want_cli}{RESTORE_HINT}")
        );
        let tool_text = tool(&r, refs, true);
        assert!(
            tool_text
                .contains("  · 2026-11-30 02:00:00 [proj] — did 02:00:00 [edited after commit]\n"),
            "{tool_text}"
        );
        assert_eq!(tool_text.matches(RESTORE_HINT).count(), 1);
        assert!(tool_text.ends_with(RESTORE_HINT));
        let plain = cli(&r, refs, false, &Clock::Utc);
        for mark in all.iter().filter_map(|s| s.mark()) {
            assert!(!plain.contains(mark), "no record, no marks: {plain}");
        }
        assert!(!plain.contains(RESTORE_HINT));
    }
}
