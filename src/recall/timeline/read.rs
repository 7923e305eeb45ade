//! The page's decisions read from the record cache in the page's order, never held whole (issue
//! 37: a ten-year vault's 69,000 steps, held twice while `recent` grouped them, were most of the
//! page's memory). A first pass ([`tally`]) counts what the page writes before its decisions:
//! the decisions of each page day (the chart, the days), the projects, whether one is deleted.
//! The second ([`each_decision`]) reads the rows again, a file day at a time, newest first (the
//! table's own order: no sort, nothing held but the days in reach), and hands on each page day,
//! its decisions sorted, once no row still to come can fall on it.
//!
//! A page day is the day of the page's clock: within a day of its file's day for any time that
//! day's file can hold. A row dated further from its file (a line typed into an older day file)
//! is a stray: the first pass notes where it is, and the second reads it by its key when its
//! page day is handed on. Both passes read one snapshot (the caller's [`Index::read`]) and judge
//! the rows alike: an entry two files of a day hold alike is one decision, first in file order,
//! committed if either copy is (as `recent` reads them, spec/sync.md).

use super::{decision, fields, order, Decision, Input, Parts};
use crate::clock::{add_days, Clock};
use crate::index::entries::project_key;
use crate::index::recent_rows::{EntryRow, Json};
use crate::index::supersede::Supersedes;
use crate::index::{Index, IndexError};
use crate::recall::lite::LiteEntry;
use crate::recall::recent::{bounds, Query};
use crate::recall::served::{self, cut};
use crate::records::grammar::{PROVENANCE_MAX_CHARS, SUMMARY_MAX_CHARS};
use crate::records::standing::Status;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::Range;

/// What the first pass counts.
#[derive(Debug, Default)]
pub(super) struct Tally {
    pub decisions: usize,
    /// The decisions of each page day.
    pub days: BTreeMap<String, usize>,
    /// Distinct projects, as the page shows them.
    pub projects: usize,
    /// A decision shown is deleted from the working tree.
    pub deleted: bool,
    /// The strays by page day: each one's key (file stem, place) and status.
    strays: BTreeMap<String, Vec<(String, i64, Status)>>,
}

/// One row of a file day (retracted rows are left out), its text in [`FileDay::text`].
struct Row {
    file: Range<usize>,
    seq: i64,
    id: Range<usize>,
    time: Range<usize>,
    project: Option<Range<usize>>,
    json: Range<usize>,
    status: Status,
}

/// The rows of one file day, in the table's order (file stem, then place, descending), their
/// text in one buffer kept from day to day rather than six strings a row.
#[derive(Default)]
struct FileDay {
    day: String,
    text: String,
    rows: Vec<Row>,
}

impl FileDay {
    fn at(&self, r: &Range<usize>) -> &str {
        self.text.get(r.clone()).unwrap_or("")
    }

    fn push(&mut self, r: &EntryRow<'_>) {
        if r.retracted {
            return;
        }
        let text = &mut self.text;
        let mut put = |s: &str| {
            let start = text.len();
            text.push_str(s);
            start..text.len()
        };
        self.rows.push(Row {
            file: put(r.file),
            seq: r.seq,
            id: put(r.id),
            time: put(r.time),
            project: r.project.map(&mut put),
            json: put(r.json),
            status: r.status,
        });
    }

    /// The day's decisions, in the table's order, with their statuses: of the rows two files
    /// hold alike (the same JSON, so the same id: `alike` compares two rows of one id) the
    /// first in file order is kept, committed if any copy is.
    fn kept(
        &self,
        alike: &mut dyn FnMut(&Row, &Row) -> Result<bool, IndexError>,
    ) -> Result<Vec<(&Row, Status)>, IndexError> {
        let n = self.rows.len();
        let mut status: Vec<Option<Status>> = vec![None; n];
        // The first row kept of each id, and the next kept row of the same id.
        let mut first: HashMap<&str, usize> = HashMap::with_capacity(n);
        let mut next: Vec<Option<usize>> = vec![None; n];
        for (i, row) in self.rows.iter().enumerate().rev() {
            let id = self.at(&row.id);
            let mut same = first.get(id).copied();
            while let Some(j) = same {
                if alike(row, &self.rows[j])? {
                    break;
                }
                same = next[j];
            }
            match same {
                Some(j) if row.status == Status::Committed => status[j] = Some(Status::Committed),
                Some(_) => {}
                None => {
                    status[i] = Some(row.status);
                    next[i] = first.insert(id, i);
                }
            }
        }
        Ok(self
            .rows
            .iter()
            .zip(status)
            .filter_map(|(row, status)| Some((row, status?)))
            .collect())
    }

    /// Whether two rows of one id hold the same JSON, as read.
    fn read_alike(&self, a: &Row, b: &Row) -> bool {
        self.at(&a.json) == self.at(&b.json)
    }

    /// Whether two rows of one id hold the same JSON, read from the cache by their keys (a
    /// pass that left the JSON unread; two files of a day rarely hold one id).
    fn cached_alike(&self, index: &Index, a: &Row, b: &Row) -> Result<bool, IndexError> {
        let mut json = Vec::with_capacity(2);
        let keys = [(self.at(&a.file), a.seq), (self.at(&b.file), b.seq)];
        index.entry_rows_at(keys, |r| {
            json.push(r.json.to_string());
            Ok(())
        })?;
        Ok(json.len() == 2 && json[0] == json[1])
    }
}

/// The day of the page's clock a row of file day `day` recorded at `time` falls on, as the page
/// shows it, written over `out`.
fn page_day(clock: &Clock, day: &str, time: &str, out: &mut String) {
    out.clear();
    clock.push_day(out, day, &cut(time, served::NAME_MAX_CHARS));
    if let Cow::Owned(shown) = fields::shown(out, fields::SHORT) {
        *out = shown;
    }
}

/// The days before and after a file's day, between which its rows' page days fall.
fn reach(day: &str) -> (Option<String>, Option<String>) {
    (add_days(day, -1), add_days(day, 1))
}

/// Whether a row of `file_day` whose page day is `page` falls outside its file's reach.
fn is_stray(file_day: &str, reach: &(Option<String>, Option<String>), page: &str) -> bool {
    page != file_day && reach.0.as_deref() != Some(page) && reach.1.as_deref() != Some(page)
}

/// Every file day of `q`'s rows, newest first, handed to `each` whole (their JSON as `json`
/// says).
fn each_file_day(
    index: &Index,
    q: &Query,
    input: &Input<'_>,
    json: Json,
    mut each: impl FnMut(&FileDay) -> Result<(), IndexError>,
) -> Result<(), IndexError> {
    let project = q.project.as_deref().map(project_key);
    let filter = bounds(q, input.now);
    let mut day = FileDay::default();
    index.each_entry_row(project.as_deref(), &filter, json, |r| {
        if r.day != day.day {
            each(&day)?;
            day.rows.clear();
            day.text.clear();
            day.day.clear();
            day.day.push_str(r.day);
        }
        day.push(r);
        Ok(())
    })?;
    each(&day)
}

/// The first pass: what the page writes before its decisions.
pub(super) fn tally(input: &Input<'_>, index: &Index, q: &Query) -> Result<Tally, IndexError> {
    let mut t = Tally::default();
    let mut seen_projects = HashSet::new();
    let mut projects = BTreeSet::new();
    let mut page = String::new();
    // Only counted: the JSON is read only where two rows of a day share an id.
    each_file_day(index, q, input, Json::Unread, |day| {
        let reach = reach(&day.day);
        for (row, status) in day.kept(&mut |a, b| day.cached_alike(index, a, b))? {
            page_day(input.clock, &day.day, day.at(&row.time), &mut page);
            if let Some(p) = row.project.as_ref().map(|p| day.at(p)) {
                if !seen_projects.contains(p) {
                    seen_projects.insert(p.to_string());
                    projects.insert(fields::shown(p, fields::NAME).into_owned());
                }
            }
            t.decisions += 1;
            t.deleted |= status == Status::Deleted;
            if is_stray(&day.day, &reach, &page) {
                let key = (day.at(&row.file).to_string(), row.seq, status);
                t.strays.entry(page.clone()).or_default().push(key);
            }
            match t.days.get_mut(page.as_str()) {
                Some(n) => *n += 1,
                None => {
                    t.days.insert(page.clone(), 1);
                }
            }
        }
        Ok(())
    })?;
    t.projects = projects.len();
    Ok(t)
}

/// A field cut as `recent` serves it ([`served::entry`]), still borrowed when short.
fn served_cut<'a>(field: &Cow<'a, str>, max: usize) -> Cow<'a, str> {
    match field {
        Cow::Borrowed(s) => cut(s, max),
        Cow::Owned(s) => Cow::Owned(cut(s, max).into_owned()),
    }
}

/// The parts of a decision of an entry's JSON, every field cut as `recent` serves it (its cited
/// notes at most [`served::REFS_MAX`], the summary then saying how many more) and with its
/// supersede links; `None` when the JSON does not read (`recent` leaves such a row out too).
fn parts<'a>(day: &'a str, json: &'a str, status: Status, known: &Known) -> Option<Parts<'a>> {
    let e = serde_json::from_str::<LiteEntry<'a>>(json).ok()?;
    let mut summary = served_cut(&e.summary, SUMMARY_MAX_CHARS);
    let more = e.refs.len().saturating_sub(served::REFS_MAX);
    if more > 0 {
        summary = Cow::Owned(format!("{summary} [cut: {more} more cited notes]"));
    }
    let id = served_cut(&e.id, served::NAME_MAX_CHARS);
    let project = e
        .workspace
        .map(|w| served_cut(&w.project, PROVENANCE_MAX_CHARS));
    let refs = e.refs.iter().take(served::REFS_MAX).map(|r| {
        let path = served_cut(&r.path, served::PATH_MAX_CHARS);
        (path, served_cut(&r.hash, served::NAME_MAX_CHARS))
    });
    Some(Parts {
        day,
        time: served_cut(&e.time, served::NAME_MAX_CHARS),
        supersede: match known.claims.is_empty() {
            true => Default::default(),
            false => known.claims.links(&id),
        },
        id,
        project_key: project.as_deref().map(|p| known.key(p)).unwrap_or_default(),
        project,
        client: e
            .client
            .as_ref()
            .map(|c| served_cut(c, served::NAME_MAX_CHARS)),
        summary,
        refs: refs.collect(),
        status,
    })
}

/// What the decisions are read with: the supersede claims, and each project's sort key worked
/// out once (a project is named by thousands of decisions).
struct Known {
    claims: Supersedes,
    keys: RefCell<HashMap<String, String>>,
}

impl Known {
    /// The sort key of `project` ([`project_key`]).
    fn key(&self, project: &str) -> String {
        if let Some(key) = self.keys.borrow().get(project) {
            return key.clone();
        }
        let key = project_key(project);
        self.keys
            .borrow_mut()
            .insert(project.to_string(), key.clone());
        key
    }
}

/// One row held until its page day is handed on, its text in [`HeldDay::text`].
struct Held {
    file: Range<usize>,
    seq: i64,
    day: Range<usize>,
    json: Range<usize>,
    status: Status,
}

/// The rows of one page day read so far.
#[derive(Default)]
struct HeldDay {
    text: String,
    rows: Vec<Held>,
}

impl HeldDay {
    fn at(&self, r: &Range<usize>) -> &str {
        self.text.get(r.clone()).unwrap_or("")
    }

    fn push(&mut self, file: &str, seq: i64, day: &str, json: &str, status: Status) {
        let text = &mut self.text;
        let mut put = |s: &str| {
            let start = text.len();
            text.push_str(s);
            start..text.len()
        };
        let (file, day, json) = (put(file), put(day), put(json));
        self.rows.push(Held {
            file,
            seq,
            day,
            json,
            status,
        });
    }
}

/// The page days read and not handed on yet.
struct Pending {
    days: BTreeMap<String, HeldDay>,
    /// The strays not handed on yet, by page day (the tally's).
    strays: BTreeMap<String, Vec<(String, i64, Status)>>,
    known: Known,
}

impl Pending {
    /// The newest page day held or stray.
    fn newest(&self) -> Option<String> {
        let held = self.days.last_key_value().map(|(d, _)| d);
        let stray = self.strays.last_key_value().map(|(d, _)| d);
        held.max(stray).cloned()
    }

    /// Hands on every page day after `bound` (every one left, without), newest first: its
    /// decisions and its strays, sorted as the page shows them.
    fn hand_on(
        &mut self,
        bound: Option<&str>,
        index: &Index,
        input: &Input<'_>,
        emit: &mut dyn FnMut(&Decision<'_>) -> Result<(), IndexError>,
    ) -> Result<(), IndexError> {
        while let Some(page) = self.newest() {
            if bound.is_some_and(|b| page.as_str() <= b) {
                break;
            }
            let mut held = self.days.remove(&page).unwrap_or_default();
            let keys = self.strays.remove(&page).unwrap_or_default();
            // By key: a forged day file may hold thousands of strays of one day.
            let status: HashMap<(&str, i64), Status> = keys
                .iter()
                .map(|(f, s, st)| ((f.as_str(), *s), *st))
                .collect();
            index.entry_rows_at(keys.iter().map(|(f, s, _)| (f.as_str(), *s)), |r| {
                if let Some(status) = status.get(&(r.file, r.seq)) {
                    held.push(r.file, r.seq, r.day, r.json, *status);
                }
                Ok(())
            })?;
            write_day(&held, &self.known, input, emit)?;
        }
        Ok(())
    }
}

/// The second pass: every decision of `q` in the page's order, handed to `emit`.
pub(super) fn each_decision(
    input: &Input<'_>,
    index: &Index,
    q: &Query,
    tally: &Tally,
    emit: &mut dyn FnMut(&Decision<'_>) -> Result<(), IndexError>,
) -> Result<(), IndexError> {
    let mut pending = Pending {
        days: BTreeMap::new(),
        strays: tally.strays.clone(),
        known: Known {
            claims: index.supersedes()?,
            keys: Default::default(),
        },
    };
    let mut page = String::new();
    each_file_day(index, q, input, Json::Read, |day| {
        let reach = reach(&day.day);
        // No row still to come, of this day's file or an older one, falls after its next day.
        if let Some(next) = &reach.1 {
            pending.hand_on(Some(next), index, input, emit)?;
        }
        for (row, status) in day.kept(&mut |a, b| Ok(day.read_alike(a, b)))? {
            page_day(input.clock, &day.day, day.at(&row.time), &mut page);
            if is_stray(&day.day, &reach, &page) {
                continue;
            }
            let held = match pending.days.get_mut(page.as_str()) {
                Some(held) => held,
                None => pending.days.entry(page.clone()).or_default(),
            };
            let (file, json) = (day.at(&row.file), day.at(&row.json));
            held.push(file, row.seq, &day.day, json, status);
        }
        Ok(())
    })?;
    pending.hand_on(None, index, input, emit)
}

/// One page day's decisions, sorted as the page shows them (project, then time; a tie in the
/// table's order, newest file first), each handed to `emit`.
fn write_day(
    held: &HeldDay,
    known: &Known,
    input: &Input<'_>,
    emit: &mut dyn FnMut(&Decision<'_>) -> Result<(), IndexError>,
) -> Result<(), IndexError> {
    let parts: Vec<(&Held, Parts<'_>)> = held
        .rows
        .iter()
        .filter_map(|h| {
            Some((
                h,
                parts(held.at(&h.day), held.at(&h.json), h.status, known)?,
            ))
        })
        .collect();
    let mut decisions: Vec<(&Held, Decision<'_>)> = parts
        .iter()
        .map(|(h, p)| (*h, decision(input, p)))
        .collect();
    decisions.sort_by(|(ha, a), (hb, b)| {
        order(a, b)
            .then_with(|| held.at(&hb.file).cmp(held.at(&ha.file)))
            .then_with(|| hb.seq.cmp(&ha.seq))
    });
    decisions.iter().try_for_each(|(_, d)| emit(d))
}

#[cfg(test)]
mod tests {
    use super::super::{page, Input, Source};
    use crate::clock::{Clock, Instant};
    use crate::index::Index;
    use crate::recall::generated::{self, path_at_hash, Placed};
    use crate::recall::recent::{from_index, Query};
    use crate::records::filter::EntryFilter;
    use crate::records::standing::Status;
    use crate::records::{Entry, NoteRef, Workspace};
    use proptest::prelude::*;
    use std::path::Path;

    fn now() -> Instant {
        crate::clock::parse_instant("2026-11-30T12:00:00.000Z").unwrap()
    }

    /// One entry of a generated vault: its file's day, its time (hour, and days away from its
    /// file's day: a stray when more than one), session, project, the files that hold it (`""`
    /// the plain day file, else a tag) and its status in each, and whether it is retracted.
    #[derive(Debug, Clone)]
    struct Spec {
        day: u8,
        hour: u8,
        away: i8,
        session: Option<char>,
        project: Option<&'static str>,
        files: Vec<(&'static str, Status)>,
        retracted: bool,
    }

    fn entry(i: usize, s: &Spec) -> Entry {
        let at = i64::from(s.day) * 24 + i64::from(s.hour) + 24 * i64::from(s.away);
        let time = format!("2026-11-{:02}T{:02}:00:00.000Z", at / 24, at % 24);
        Entry {
            id: format!("20261101T0000{i:05}Z"),
            session_id: s.session.map(|c| c.to_string()),
            time,
            summary: format!("entry {i}"),
            refs: (0..i % 3)
                .map(|r| NoteRef::new(format!("n{r}.md"), "sha256:ab", None))
                .collect(),
            workspace: s.project.map(|p| Workspace::new("/w", p, None)),
            client: None,
            supersedes: None,
            extra: Default::default(),
        }
    }

    /// An index of a vault holding `specs`, their statuses and retractions set in the cache as
    /// a record would have set them.
    fn index_of(root: &Path, specs: &[Spec]) -> Index {
        let placed: Vec<Placed<'_>> = specs
            .iter()
            .enumerate()
            .map(|(i, s)| Placed {
                day: s.day,
                files: &s.files,
                retracted: s.retracted,
                entry: entry(i, s),
            })
            .collect();
        generated::index_of(root, &placed)
    }

    /// The page of `decisions`, and its counts.
    fn page_of(decisions: Source<'_>, clock: &Clock, filter: &EntryFilter) -> String {
        let refs = &path_at_hash;
        let input = Input {
            vault: Path::new("/v"),
            decisions,
            marks: true,
            refs,
            ids: &|id: &str| id.chars().rev().collect(),
            clock,
            uses: &[],
            bounds: filter,
            now: now(),
            notes: vec![],
        };
        let page = page(&input).unwrap();
        format!(
            "{} {} {}\n{}",
            page.decisions,
            page.days,
            page.projects,
            page.html()
        )
    }

    fn spec() -> impl Strategy<Value = Spec> {
        let status = prop_oneof![
            Just(Status::Committed),
            Just(Status::Edited),
            Just(Status::Deleted),
            Just(Status::Pending),
            Just(Status::Unverified),
        ];
        (
            (
                2..6_u8,
                0..24_u8,
                prop_oneof![4 => Just(0_i8), 1 => -2..3_i8],
            ),
            prop::option::of(prop_oneof![Just('A'), Just('B')]),
            prop::option::of(prop_oneof![Just("p"), Just("Q"), Just("q ")]),
            prop::collection::vec(
                (
                    prop_oneof![Just(""), Just("b"), Just(generated::EDITED)],
                    status,
                ),
                1..4,
            ),
            prop::bool::weighted(0.1),
        )
            .prop_map(
                |((day, hour, away), session, project, mut files, retracted)| {
                    files.sort_by_key(|f| f.0);
                    files.dedup_by_key(|f| f.0);
                    Spec {
                        day,
                        hour,
                        away,
                        session,
                        project,
                        files,
                        retracted,
                    }
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Days in UTC and in zones east and west of it (a decision's page day a day from its
        /// file's), strays dated days away, an entry in two files of a day with different
        /// statuses, one id with two JSONs in two files, retractions, a project and a word
        /// filter: the page read a day at a time is byte for byte the page of `recent`'s answer
        /// of every session.
        #[test]
        fn the_page_read_a_day_at_a_time_is_the_page_of_recents_answer(
            specs in prop::collection::vec(spec(), 0..24)
        ) {
            let t = tempfile::tempdir().unwrap();
            let index = index_of(t.path(), &specs);
            let zone = |name| Clock::Zone(jiff::tz::TimeZone::get(name).unwrap());
            for clock in [Clock::Utc, zone("Pacific/Auckland"), zone("America/Los_Angeles")] {
                for (project, filter) in [
                    (None, EntryFilter::default()),
                    (Some("q"), EntryFilter::default()),
                    (None, EntryFilter::default().with_words(&["entry 1"])),
                ] {
                    let query = Query {
                        project: project.map(Into::into),
                        filter: filter.clone(),
                        clock: clock.clone(),
                        ..Default::default()
                    };
                    let answer = from_index(&index, &query, now()).unwrap();
                    let held = page_of(Source::Answer(&answer), &clock, &filter);
                    let read = page_of(Source::Index { index: &index, query: &query }, &clock, &filter);
                    prop_assert_eq!(read, held, "{:?} {:?}", clock, query);
                }
            }
        }
    }
}
