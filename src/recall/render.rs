//! Text renderings of `recent`: the terminal form and the MCP tool form (anchor §8).

use super::recent::{Recent, Session, Step};
use crate::records::NoteRef;

/// The reference's empty-state strings; `None` when there are sessions.
pub fn empty_state(r: &Recent) -> Option<String> {
    match r {
        Recent::NothingRecorded => Some("No recent sessions recorded yet.".into()),
        Recent::NoProject(p) => Some(format!("No sessions recorded for project \"{p}\".")),
        Recent::NothingInWindow => Some("No sessions in the requested window.".into()),
        Recent::Sessions(_) => None,
    }
}

/// How a ref is shown; recall passes [`super::refs::shown`] over the index.
pub type RefText<'a> = &'a dyn Fn(&NoteRef) -> String;

/// Terminal rendering: sessions separated by a blank line.
pub fn cli(r: &Recent, refs: RefText<'_>) -> String {
    each_session(r, &|s| cli_session(s, refs))
}

/// The empty state, or each session rendered by `f`, separated by a blank line.
fn each_session(r: &Recent, f: &dyn Fn(&Session) -> String) -> String {
    match r {
        Recent::Sessions(sessions) => sessions.iter().map(f).collect::<Vec<_>>().join("\n\n"),
        other => empty_state(other).unwrap_or_default(),
    }
}

fn cli_session(s: &Session, refs: RefText<'_>) -> String {
    let proj = project_tag(s.project.as_deref());
    if s.steps.len() == 1 && s.total_steps == 1 {
        let step = &s.steps[0];
        let mut out = step_line(step, &proj);
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
        span(s),
        s.total_steps
    );
    for step in &s.steps {
        out.push_str(&format!("\n  · {}", step_line(step, "")));
        for r in &step.entry.refs {
            out.push_str(&format!("\n     refs: {}", refs(r)));
        }
    }
    out
}

/// MCP tool rendering (`librarian-recent`).
pub fn tool(r: &Recent, refs: RefText<'_>) -> String {
    each_session(r, &|s| tool_session(s, refs))
}

fn tool_session(s: &Session, refs: RefText<'_>) -> String {
    if s.steps.len() == 1 && s.total_steps == 1 {
        return tool_step(&s.steps[0], refs);
    }
    let header = if s.omitted > 0 {
        format!(
            "{}{} — one session, first and last of {} steps — middle {} omitted (detail: brief):",
            span(s),
            project_tag(s.project.as_deref()),
            s.total_steps,
            s.omitted
        )
    } else {
        format!(
            "{}{} — one session, {} steps, in order:",
            span(s),
            project_tag(s.project.as_deref()),
            s.total_steps
        )
    };
    let steps: Vec<String> = s
        .steps
        .iter()
        .map(|st| format!("  · {}", tool_step(st, refs).replace('\n', "\n  ")))
        .collect();
    format!("{header}\n{}", steps.join("\n"))
}

fn tool_step(step: &Step, refs: RefText<'_>) -> String {
    let mut out = step_line(step, &project_tag(step.entry.project()));
    for (i, r) in step.entry.refs.iter().enumerate() {
        let lead = if i == 0 { "\n   refs: " } else { "\n         " };
        out.push_str(lead);
        out.push_str(&refs(r));
    }
    out
}

fn span(s: &Session) -> String {
    let first = s.steps.first().map_or("", |st| st.day.as_str());
    let last = s.steps.last().map_or("", |st| st.day.as_str());
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

/// One step's line: `day time<tag> — summary`.
fn step_line(step: &Step, tag: &str) -> String {
    format!(
        "{} {}{tag} — {}",
        step.day,
        step.entry.hhmmss(),
        step.entry.summary
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::recent::Step;
    use crate::records::{Entry, Workspace};

    fn step(time: &str, refs: &[&str]) -> Step {
        Step {
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
        let tool = |r: &Recent| tool(r, refs);
        let cli = |r: &Recent| cli(r, refs);
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
}
