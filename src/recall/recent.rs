//! `recent`: the record's entries, newest first, filtered by project and window, grouped into
//! sessions and capped by session count (anchor §8, DESIGN §7). Each step's text comes from the
//! record and carries its status; retracted entries are left out (spec/recall.md).

use crate::clock::Instant;
use crate::index::entries::{project_key, Scope};
use crate::index::reads::Records;
use crate::index::{Index, IndexError};
use crate::records::filter::EntryFilter;
pub use crate::records::Step;
use crate::vault::Vault;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};

/// Sessions shown when no count is given.
pub(crate) const DEFAULT_COUNT: usize = 20;

/// What to show.
#[derive(Debug, Clone, Default)]
pub(crate) struct Query {
    /// Keep entries from the last N days (N+1 calendar days, as the reference).
    pub window_days: Option<u32>,
    /// Cap on sessions; `None` shows every session.
    pub count: Option<usize>,
    pub project: Option<String>,
    /// Keep only the first and last step of longer sessions.
    pub brief: bool,
    /// Words every kept entry holds, and time bounds (`--grep`, `--since`, `--until`, MCP
    /// `query`).
    pub filter: EntryFilter,
    /// Whose calendar days the window counts: UTC (the MCP tool, as the reference) or the
    /// local zone (the terminal, unless `--utc`).
    pub clock: crate::clock::Clock,
}

/// Steps of one session (or one session-less entry), oldest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Session {
    pub session_id: Option<String>,
    pub project: Option<String>,
    pub steps: Vec<Step>,
    pub total_steps: usize,
    /// Steps left out by `brief`.
    pub omitted: usize,
}

/// The answer, with the reference's three distinct empty states.
#[derive(Debug, Clone)]
pub(crate) enum Recent {
    NothingRecorded,
    NoProject(String),
    NothingInWindow,
    /// Nothing matched the words of `--grep` or `query` (shown back).
    NoMatch(String),
    Sessions(Vec<Session>),
}

/// Whether the index still holds a note at one of `gone`, cited paths an answer found not to
/// resolve ([`super::refs::Shown::absent`]): it has not heard of the note's rename (or
/// deletion) yet, so each such ref would read as unresolved with no candidate. The caller makes
/// the notes fresh and renders again; a note that stays gone costs nothing the next time (the
/// index no longer holds it).
pub(crate) fn moved_since_indexed(index: &Index, gone: &[String]) -> Result<bool, IndexError> {
    for path in gone {
        if index.holds_note(path)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `recent` over a vault: an index the identity pass never ran on completed as `reindex` would;
/// the record cache refreshed quickly (what moved in the record, the journal, the newest day
/// files); the answer read; then the working files of the days it shows checked, and the
/// answer read again if one changed, so an older day file edited in place is marked without a
/// full scan. `record` says whether the vault has a record at all: without one every step is
/// `unverified` and no step is marked.
pub(crate) fn read(
    vault: &Vault,
    index: &mut Index,
    q: &Query,
    now: Instant,
) -> Result<Answer, IndexError> {
    if index.meta("identity_inputs")?.is_none() {
        // An index the identity pass never ran on (a deleted or outdated one was rebuilt): do
        // what `reindex` would, so a confirmed binding never reads as unresolved until then.
        super::reindex::refresh(vault, index, super::reindex::Mode::Auto, false)?;
    }
    let src = super::source::Source::open(vault)?;
    index.refresh_records(&src, Scope::Quick(&[]))?;
    let mut recent = from_index(index, q, now)?;
    let days: Vec<String> = match &recent {
        Recent::Sessions(s) => s
            .iter()
            .flat_map(|s| s.steps.iter().map(|st| st.day.clone()))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
        _ => vec![],
    };
    if !days.is_empty() && index.refresh_records(&src, Scope::Quick(&days))?.touched() {
        recent = from_index(index, q, now)?;
    }
    let record = matches!(index.records()?, Records::Tip(_));
    Ok(Answer { recent, record })
}

/// Applies the pipeline of anchor §8 to all steps (the tests' way in; [`read`] streams).
#[cfg(test)]
fn recent(mut steps: Vec<Step>, q: &Query, now: Instant) -> Recent {
    if steps.is_empty() {
        return Recent::NothingRecorded.unless_empty(q);
    }
    if let Some(p) = q.project.as_deref() {
        let want = project_key(p);
        steps.retain(|s| s.entry.project().is_some_and(|ep| project_key(ep) == want));
    }
    let f = bounds(q, now);
    steps.retain(|s| f.matches(&s.entry));
    sessions(steps, q)
}

/// `recent`'s answer and whether the vault has a record to judge it by.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub recent: Recent,
    pub record: bool,
}

/// `recent` from the index: the filters and the session cap are applied in SQL, so only the
/// newest `count` session groups are read.
pub fn from_index(index: &Index, q: &Query, now: Instant) -> Result<Recent, IndexError> {
    if !index.has_entries()? {
        return Ok(Recent::NothingRecorded);
    }
    let project = q.project.as_deref().map(project_key);
    let mut steps = index.recent_steps(project.as_deref(), &bounds(q, now), q.count)?;
    // Whatever a day file holds, no field is handed out unbounded.
    steps.iter_mut().for_each(super::served::step);
    mark_superseded(index, &mut steps)?;
    Ok(sessions(steps, q))
}

/// What [`from_index`] answers when no step is shown (the caller counted none): nothing recorded,
/// or nothing for the project, the words or the window.
pub(crate) fn nothing_shown(index: &Index, q: &Query) -> Result<Recent, IndexError> {
    Ok(match index.has_entries()? {
        false => Recent::NothingRecorded,
        true => Recent::NothingInWindow.unless_empty(q),
    })
}

/// Gives each step its supersede links (spec/recall.md, "Supersede").
pub(crate) fn mark_superseded(index: &Index, steps: &mut [Step]) -> Result<(), IndexError> {
    let claims = index.supersedes()?;
    if !claims.is_empty() {
        for s in steps {
            s.supersede = claims.links(&s.entry.id);
        }
    }
    Ok(())
}

/// The query's filter with the window folded in: a window of N days keeps N+1 calendar days
/// of the query's clock (as the reference, whose days are UTC); with `since` too, the later of
/// the two wins.
pub(super) fn bounds(q: &Query, now: Instant) -> EntryFilter {
    let f = q.filter.clone();
    let first_day = q
        .window_days
        .and_then(|n| crate::clock::add_days(&q.clock.day(now), -i64::from(n)));
    match first_day.and_then(|d| q.clock.start_of(&d)) {
        Some(from) => f.since_instant(from),
        None => f,
    }
}

/// Steps that passed the filters, as sessions newest first, capped and abbreviated.
fn sessions(mut steps: Vec<Step>, q: &Query) -> Recent {
    if steps.is_empty() {
        return Recent::NothingInWindow.unless_empty(q);
    }
    steps.sort_by(|a, b| (&b.day, &b.entry.time).cmp(&(&a.day, &a.entry.time)));
    let mut sessions = group(steps);
    if let Some(c) = q.count {
        sessions.truncate(c);
    }
    if q.brief {
        sessions.iter_mut().for_each(abbreviate);
    }
    Recent::Sessions(sessions)
}

/// Groups newest-first steps by `[session_id, project]`; groups keep the order of their newest
/// step, steps inside a group run oldest first. Each group's steps are allocated at their
/// exact number (a first pass counts them): with every decision at once, as `timeline` and
/// `recent --all` read them, the slack of growing vectors was the largest allocation.
fn group(steps: Vec<Step>) -> Vec<Session> {
    let mut index: HashMap<(String, Option<String>), usize> = HashMap::new();
    let mut sessions: Vec<Session> = Vec::new();
    let mut slots = Vec::with_capacity(steps.len());
    for step in &steps {
        let project = step.entry.project().map(str::to_string);
        let slot = match step.entry.session_id.clone().filter(|s| !s.is_empty()) {
            Some(sid) => *index
                .entry((sid, project.clone()))
                .or_insert(sessions.len()),
            None => sessions.len(),
        };
        if slot == sessions.len() {
            sessions.push(Session {
                session_id: step.entry.session_id.clone(),
                project,
                steps: vec![],
                total_steps: 0,
                omitted: 0,
            });
        }
        sessions[slot].total_steps += 1;
        slots.push(slot);
    }
    for s in &mut sessions {
        s.steps.reserve_exact(s.total_steps);
    }
    for (step, slot) in steps.into_iter().zip(slots) {
        sessions[slot].steps.push(step);
    }
    sessions.iter_mut().for_each(|s| s.steps.reverse());
    sessions
}

fn abbreviate(s: &mut Session) {
    if s.steps.len() > 2 {
        s.omitted = s.steps.len() - 2;
        s.steps.drain(1..s.steps.len() - 1);
    }
}

impl Recent {
    /// With a project filter, an empty answer is always "no sessions for project" (anchor §8).
    fn unless_empty(self, q: &Query) -> Recent {
        if matches!(self, Recent::NothingInWindow) && !q.filter.words.is_empty() {
            return Recent::NoMatch(q.filter.words.join(" "));
        }
        match (&self, &q.project) {
            (Recent::NothingInWindow, Some(p)) => Recent::NoProject(p.trim().to_string()),
            (Recent::Sessions(s), Some(p)) if s.is_empty() => {
                Recent::NoProject(p.trim().to_string())
            }
            _ => self,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::standing::Status;
    use crate::records::{Entry, Workspace};

    fn step(day: &str, time: &str, sid: Option<&str>, project: Option<&str>) -> Step {
        Step {
            supersede: Default::default(),
            status: Status::Unverified,
            day: day.into(),
            entry: Entry {
                id: time.into(),
                session_id: sid.map(Into::into),
                time: format!("{day}T{time}.000Z"),
                summary: format!("at {time}"),
                refs: vec![],
                workspace: project.map(|p| Workspace::new("/w", p, None)),
                client: None,
                supersedes: None,
                extra: Default::default(),
            },
        }
    }

    fn now() -> Instant {
        crate::clock::parse_instant("2026-11-30T12:00:00.000Z").unwrap()
    }

    #[test]
    fn groups_by_session_and_project_newest_first() {
        let steps = vec![
            step("2026-11-29", "23:50:00", Some("A"), Some("p")),
            step("2026-11-30", "00:10:00", Some("A"), Some("p")),
            step("2026-11-30", "01:00:00", Some("B"), Some("q")),
            step("2026-11-30", "02:00:00", None, None),
            step("2026-11-30", "03:00:00", Some("A"), Some("other")),
        ];
        let Recent::Sessions(s) = recent(steps, &Query::default(), now()) else {
            panic!()
        };
        let shape: Vec<(Option<&str>, usize)> = s
            .iter()
            .map(|s| (s.session_id.as_deref(), s.steps.len()))
            .collect();
        assert_eq!(
            shape,
            [(Some("A"), 1), (None, 1), (Some("B"), 1), (Some("A"), 2)]
        );
        assert_eq!(s[3].steps[0].entry.time, "2026-11-29T23:50:00.000Z");
    }

    #[test]
    fn empty_states_are_distinct() {
        assert!(matches!(
            recent(vec![], &Query::default(), now()),
            Recent::NothingRecorded
        ));
        let s = vec![step("2026-01-01", "00:00:00", Some("A"), Some("Proj"))];
        let q = Query {
            project: Some("nope".into()),
            window_days: Some(1),
            ..Default::default()
        };
        assert!(matches!(recent(s.clone(), &q, now()), Recent::NoProject(p) if p == "nope"));
        let q = Query {
            project: Some(" PROJ ".into()),
            window_days: Some(1),
            ..Default::default()
        };
        assert!(matches!(recent(s.clone(), &q, now()), Recent::NoProject(p) if p == "PROJ"));
        let q = Query {
            window_days: Some(1),
            ..Default::default()
        };
        assert!(matches!(recent(s, &q, now()), Recent::NothingInWindow));
    }

    #[test]
    fn window_includes_n_plus_one_days_and_count_caps_sessions() {
        let steps = vec![
            step("2026-11-29", "10:00:00", Some("A"), None),
            step("2026-11-28", "10:00:00", Some("B"), None),
            step("2026-11-27", "10:00:00", Some("C"), None),
        ];
        let q = Query {
            window_days: Some(2),
            ..Default::default()
        };
        let Recent::Sessions(s) = recent(steps.clone(), &q, now()) else {
            panic!()
        };
        assert_eq!(s.len(), 2);
        let q = Query {
            count: Some(1),
            ..Default::default()
        };
        let Recent::Sessions(s) = recent(steps, &q, now()) else {
            panic!()
        };
        assert_eq!(s[0].session_id.as_deref(), Some("A"));
    }

    /// Writes `steps` as day files under `root`.
    fn write_day_files(root: &std::path::Path, steps: &[Step]) {
        let dir = root.join(crate::records::paths::SESSIONS_DIR);
        std::fs::create_dir_all(&dir).unwrap();
        for s in steps {
            let path = dir.join(format!("{}.md", s.day));
            let mut text = std::fs::read_to_string(&path).unwrap_or_default();
            let line = crate::records::line::render(&s.entry);
            text.push_str(&crate::records::dayfile::append_bytes(
                text.len() as u64,
                true,
                &s.day,
                &line,
            ));
            std::fs::write(&path, text).unwrap();
        }
    }

    #[test]
    fn the_index_answers_as_the_pipeline_over_every_step() {
        let mut steps = Vec::new();
        for i in 0..60_u32 {
            let day = format!("2026-11-{:02}", 1 + i % 29);
            let time = format!("{:02}:{:02}:00", i % 24, i % 60);
            let sid = ["A", "B", "C", ""][(i % 4) as usize];
            let project = [Some("Proj"), Some("proj "), Some("other"), None][(i % 3) as usize];
            steps.push(step(&day, &time, (!sid.is_empty()).then_some(sid), project));
        }
        let t = tempfile::tempdir().unwrap();
        write_day_files(t.path(), &steps);
        let index = Index::in_memory(t.path());
        let refs = &|out: &mut String, path: &str, _: &str| out.push_str(path);
        for count in [None, Some(1), Some(2), Some(5), Some(100)] {
            for project in [None, Some("PROJ"), Some("other"), Some("none")] {
                for (window_days, filter) in windows_and_filters() {
                    for brief in [false, true] {
                        let q = Query {
                            window_days,
                            count,
                            project: project.map(Into::into),
                            brief,
                            filter: filter.clone(),
                            // Both calendars, the window's days counted east of UTC too.
                            clock: match brief {
                                true => crate::clock::Clock::Zone(
                                    jiff::tz::TimeZone::get("Pacific/Auckland").unwrap(),
                                ),
                                false => crate::clock::Clock::Utc,
                            },
                        };
                        let indexed = from_index(&index, &q, now()).unwrap();
                        let piped = recent(steps.clone(), &q, now());
                        assert_eq!(
                            crate::recall::render::cli(&indexed, refs, true, &Default::default()),
                            crate::recall::render::cli(&piped, refs, true, &Default::default()),
                            "{q:?}"
                        );
                    }
                }
            }
        }
    }

    /// Windows crossed with word and day filters, for the differential test.
    fn windows_and_filters() -> Vec<(Option<u32>, EntryFilter)> {
        let filters = [
            EntryFilter::default(),
            EntryFilter::default().with_words(&["AT 1"]),
            EntryFilter::default().with_words(&["at", ":0"]),
            EntryFilter::default().with_words(&["nothing"]),
            EntryFilter {
                from: Some("2026-11-10T00:00:00.000Z".into()),
                until: Some("2026-11-27T23:59:59.999Z".into()),
                ..Default::default()
            },
            EntryFilter {
                from: Some("2026-11-29T00:00:00.000Z".into()),
                ..EntryFilter::default().with_words(&["0"])
            },
        ];
        [None, Some(3), Some(40)]
            .into_iter()
            .flat_map(|w| filters.iter().map(move |f| (w, f.clone())))
            .collect()
    }

    #[test]
    fn brief_keeps_first_and_last() {
        let steps = (0..5)
            .map(|i| step("2026-11-30", &format!("0{i}:00:00"), Some("A"), None))
            .collect();
        let q = Query {
            brief: true,
            ..Default::default()
        };
        let Recent::Sessions(s) = recent(steps, &q, now()) else {
            panic!()
        };
        assert_eq!(
            (s[0].steps.len(), s[0].omitted, s[0].total_steps),
            (2, 3, 5)
        );
    }
}
