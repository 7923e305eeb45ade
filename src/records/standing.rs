//! What each entry of a day is worth as a record: its text comes from the committed bytes (or
//! the pending journal), and the working file is only evidence. One classifier serves recall
//! (through the index) and `log`, with the per-entry rule `verify` applies to the working tree
//! (spec/recall.md).

use super::dayfile;
use super::entry::Entry;
use super::retraction::Retraction;
use serde::{Serialize, Serializer};
use std::collections::HashSet;

/// How an entry (or retraction) stands against `refs/rutter/records`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Committed, and its line is unchanged in the working file.
    Committed,
    /// In the pending journal, not committed yet (the journal's bytes are its text).
    Pending,
    /// Committed, but the working file changed it (the committed text is its text).
    Edited,
    /// Committed, but its day file is missing from the working tree (or is not a regular file).
    Deleted,
    /// In a working day file only: neither committed nor journalled (shown as data, marked).
    Unverified,
    /// Removed by `git rutter purge`: recall shows where it stood, with no content, from the
    /// purge ledger (spec/purge.md).
    Purged,
}

/// How a status reads to someone checking the record: sound, waiting on something, or wrong.
/// The CLI paints a status and its mark by it (green, yellow, red).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tone {
    Ok,
    Warn,
    Bad,
}

impl Status {
    /// Every status, in declaration order.
    pub(crate) const ALL: [Status; 6] = [
        Status::Committed,
        Status::Pending,
        Status::Edited,
        Status::Deleted,
        Status::Unverified,
        Status::Purged,
    ];

    /// The name `recent --json` and `log` print.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Committed => "committed",
            Status::Pending => "pending",
            Status::Edited => "edited after commit",
            Status::Deleted => "deleted",
            Status::Unverified => "unverified",
            Status::Purged => "purged",
        }
    }

    /// Reads a name written by [`Status::as_str`].
    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// The mark recall prints after the summary; `None` for a committed entry.
    pub(crate) fn mark(self) -> Option<&'static str> {
        match self {
            Status::Committed => None,
            Status::Pending => Some("[not committed yet]"),
            Status::Edited => Some("[edited after commit]"),
            Status::Deleted => Some("[deleted from the working tree]"),
            Status::Unverified => Some("[unverified]"),
            // The summary already says it: "purged on DATE: REASON".
            Status::Purged => None,
        }
    }

    /// How it reads: committed is sound, pending waits for a commit, anything else is wrong
    /// with the record or unproven (its name and its mark are painted by it).
    pub(crate) fn tone(self) -> Tone {
        match self {
            Status::Committed => Tone::Ok,
            Status::Pending => Tone::Warn,
            Status::Edited | Status::Deleted | Status::Unverified | Status::Purged => Tone::Bad,
        }
    }

    /// Whether a retraction with this status is honoured: committed ones (whatever happened to
    /// the working file since) and journalled ones; a line only the working file holds is not.
    pub(crate) fn is_recorded(self) -> bool {
        !matches!(self, Status::Unverified | Status::Purged)
    }
}

impl Serialize for Status {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One day's record: entries and retractions with their status, committed ones first (file
/// order), then pending ones (journal order), then unverified ones (file order).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DayRecord {
    pub entries: Vec<(Entry, Status)>,
    pub retractions: Vec<(Retraction, Status)>,
}

/// Classifies one day. `committed`: the day file's bytes at the ref's tip (`None`: not
/// committed). `working`: the working file's bytes (`None`: missing, or not a regular file).
/// `journal`: the lines the pending journal holds for this file, in file order.
pub(crate) fn classify(
    committed: Option<&[u8]>,
    working: Option<&[u8]>,
    journal: &[&str],
) -> DayRecord {
    let mut out = DayRecord::default();
    let base = committed.map(dayfile::parse).unwrap_or_default();
    let edited = match (committed, working) {
        (Some(_), None) => None,
        (Some(c), Some(w)) if !w.starts_with(c) => Some(changed_ids(c, w)),
        _ => Some(vec![]),
    };
    let status = |id: &str| match &edited {
        None => Status::Deleted,
        Some(ids) if ids.iter().any(|x| x == id) => Status::Edited,
        Some(_) => Status::Committed,
    };
    // Records are known by their whole line's content, never by id alone: two lines that
    // carry one id (a remote's, or two writers' of one millisecond) are two records. A working
    // line is an edit of a record only when it carries the id of a journalled one (the journal
    // holds what was captured), or of a committed one whose committed bytes changed.
    // The committed lines' keys and ids are asked for only when a journalled or working line
    // may repeat one: a day whose working file is its committed bytes, with no journal lines (every
    // day `log` shows, nearly every day an index build reads), renders none of its lines.
    let keys_needed = !journal.is_empty() || working.is_some_and(|w| Some(w) != committed);
    let mut known: HashSet<String> = HashSet::new();
    let (mut committed_ids, mut journalled_ids) = (HashSet::new(), HashSet::new());
    for e in base.entries {
        if keys_needed {
            known.insert(entry_key(&e));
            committed_ids.insert(e.id.clone());
        }
        let s = status(&e.id);
        out.entries.push((e, s));
    }
    for r in base.retractions {
        if keys_needed {
            known.insert(retraction_key(&r));
            committed_ids.insert(r.id.clone());
        }
        let s = status(&r.id);
        out.retractions.push((r, s));
    }
    let pending = dayfile::parse_v2_tail(journal_text(committed, journal).as_bytes());
    for e in pending.entries {
        journalled_ids.insert(e.id.clone());
        if known.insert(entry_key(&e)) {
            out.entries.push((e, Status::Pending));
        }
    }
    for r in pending.retractions {
        journalled_ids.insert(r.id.clone());
        if known.insert(retraction_key(&r)) {
            out.retractions.push((r, Status::Pending));
        }
    }
    let (extra, edited_file) = match (committed, working) {
        (_, None) => return out,
        (Some(c), Some(w)) if w == c => return out,
        (Some(c), Some(w)) if w.starts_with(c) => (dayfile::parse_v2_tail(&w[c.len()..]), false),
        (c, Some(w)) => (dayfile::parse(w), c.is_some()),
    };
    let is_edit =
        |id: &str| journalled_ids.contains(id) || (edited_file && committed_ids.contains(id));
    let new = |key: String, id: &str| !known.contains(&key) && !is_edit(id);
    for e in extra.entries {
        if new(entry_key(&e), &e.id) {
            out.entries.push((e, Status::Unverified));
        }
    }
    for r in extra.retractions {
        if new(retraction_key(&r), &r.id) {
            out.retractions.push((r, Status::Unverified));
        }
    }
    out
}

/// Leaves out the unverified lines of the day file `stem` that are, whole, lines committed in
/// the file of the day they were written on (their time's UTC day): a day file renamed or
/// copied by hand to another day's name, whose entries recall and `log` show once, from their
/// own day's file (`verify` names the copied file once). `committed(day)` gives a day's
/// committed bytes; it is asked only when an unverified line names another day.
pub(crate) fn drop_copies<E>(
    stem: &str,
    record: &mut DayRecord,
    mut committed: impl FnMut(&str) -> Result<Option<Vec<u8>>, E>,
) -> Result<(), E> {
    let own = crate::records::paths::split_day_stem(stem).map(|(d, _)| d);
    let foreign = |time: &str, s: &Status| {
        let day = time.get(..10).filter(|d| crate::clock::is_day(d));
        (*s == Status::Unverified && day != own)
            .then(|| day.map(str::to_string))
            .flatten()
    };
    let days: std::collections::BTreeSet<String> =
        (record.entries.iter().map(|(e, s)| foreign(&e.time, s)))
            .chain(record.retractions.iter().map(|(r, s)| foreign(&r.time, s)))
            .flatten()
            .collect();
    let mut keys = HashSet::new();
    for day in &days {
        if let Some(bytes) = committed(day)? {
            let file = dayfile::parse(&bytes);
            keys.extend(file.entries.iter().map(entry_key));
            keys.extend(file.retractions.iter().map(retraction_key));
        }
    }
    if keys.is_empty() {
        return Ok(());
    }
    let copy = |k: String, s: &Status| *s == Status::Unverified && keys.contains(&k);
    record.entries.retain(|(e, s)| !copy(entry_key(e), s));
    record
        .retractions
        .retain(|(r, s)| !copy(retraction_key(r), s));
    Ok(())
}

/// What tells two entry lines apart: every field a line renders.
fn entry_key(e: &Entry) -> String {
    crate::records::line::render(e)
}

fn retraction_key(r: &Retraction) -> String {
    crate::records::retraction::render(r)
}

/// The journalled lines not already among the committed bytes (a capture that crashed after
/// the ref moved leaves its journal record behind), one per line.
fn journal_text(committed: Option<&[u8]>, journal: &[&str]) -> String {
    let base = committed.unwrap_or_default();
    let mut out = String::new();
    for l in journal
        .iter()
        .filter(|l| !contains_line(base, l.as_bytes()))
    {
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// Whether `line` is a whole line of `text`.
pub(crate) fn contains_line(text: &[u8], line: &[u8]) -> bool {
    if line.is_empty() {
        return false;
    }
    let mut start = 0;
    while let Some(pos) = memchr::memmem::find(&text[start..], line) {
        let at = start + pos;
        let before_ok = at == 0 || text[at - 1] == b'\n';
        let after = at + line.len();
        if before_ok && (after == text.len() || text[after] == b'\n') {
            return true;
        }
        start = at + 1;
    }
    false
}

/// Entries and retractions of the day file `old` that `new` no longer holds unchanged, and
/// record lines that appear in `new` among the committed ones (verify's per-entry rule).
pub fn changed_ids(old: &[u8], new: &[u8]) -> Vec<String> {
    let (was, now) = (dayfile::parse(old), dayfile::parse(new));
    let mut ids: Vec<String> = was
        .entries
        .into_iter()
        .filter(|e| !now.entries.contains(e))
        .map(|e| e.id)
        .collect();
    ids.extend(
        was.retractions
            .into_iter()
            .filter(|r| !now.retractions.contains(r))
            .map(|r| r.id),
    );
    // Lines the line diff touches (an edited human part, a reordered or inserted line) name
    // their entries too.
    let touched = dayfile::parse_v2_tail(touched_lines(old, new).as_bytes());
    let more = touched
        .entries
        .into_iter()
        .map(|e| e.id)
        .chain(touched.retractions.into_iter().map(|r| r.id));
    for id in more {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// The lines a line diff of `old` against `new` removes or adds, joined by newlines.
fn touched_lines(old: &[u8], new: &[u8]) -> String {
    let (a, b) = (String::from_utf8_lossy(old), String::from_utf8_lossy(new));
    let diff = similar::TextDiff::from_lines(a.as_ref(), b.as_ref());
    let mut out = String::new();
    for change in diff
        .iter_all_changes()
        .filter(|c| c.tag() != similar::ChangeTag::Equal)
    {
        out.push_str(change.value().trim_end_matches('\n'));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{line, retraction};

    const DAY: &str = "2026-11-30";

    fn entry(id: &str, summary: &str) -> Entry {
        Entry {
            id: id.into(),
            session_id: Some("S".into()),
            time: format!("{DAY}T10:00:00.000Z"),
            summary: summary.into(),
            refs: vec![],
            workspace: None,
            client: None,
            supersedes: None,
            extra: Default::default(),
        }
    }

    fn file(lines: &[String]) -> String {
        let mut text = dayfile::header(DAY);
        for l in lines {
            text.push_str(l);
            text.push('\n');
        }
        text
    }

    fn shape(r: &DayRecord) -> Vec<(String, String, Status)> {
        r.entries
            .iter()
            .map(|(e, s)| (e.id.clone(), e.summary.clone(), *s))
            .collect()
    }

    fn row(id: &str, summary: &str, s: Status) -> (String, String, Status) {
        (id.into(), summary.into(), s)
    }

    #[test]
    fn an_intact_file_is_committed_and_a_missing_one_deleted() {
        let committed = file(&[line::render(&entry("a", "one"))]);
        let c = Some(committed.as_bytes());
        let same = classify(c, c, &[]);
        assert_eq!(shape(&same), [row("a", "one", Status::Committed)]);
        let gone = classify(c, None, &[]);
        assert_eq!(shape(&gone), [row("a", "one", Status::Deleted)]);
    }

    #[test]
    fn an_edit_serves_the_committed_text_and_marks_only_the_entry_it_touched() {
        let (a, b) = (entry("a", "kept"), entry("b", "stays private"));
        let committed = file(&[line::render(&a), line::render(&b)]);
        let working = committed.replace("stays private", "goes public");
        let r = classify(Some(committed.as_bytes()), Some(working.as_bytes()), &[]);
        assert_eq!(
            shape(&r),
            [
                row("a", "kept", Status::Committed),
                row("b", "stays private", Status::Edited)
            ]
        );
        let emptied = classify(Some(committed.as_bytes()), Some(b""), &[]);
        assert!(emptied.entries.iter().all(|(_, s)| *s == Status::Edited));
    }

    #[test]
    fn copies_of_lines_committed_on_their_own_day_are_left_out() {
        // The day's file renamed to another day's name: its lines are the other day's.
        let mine = entry("a", "one");
        let typed = entry("t", "typed by hand");
        let mut other_day = entry("o", "not committed anywhere");
        other_day.time = "2026-12-09T10:00:00.000Z".into();
        let moved = file(&[
            line::render(&mine),
            line::render(&typed),
            line::render(&other_day),
        ]);
        let mut r = classify(None, Some(moved.as_bytes()), &[]);
        let committed = file(&[line::render(&mine)]);
        let mut asked = Vec::new();
        drop_copies::<()>("2026-12-05", &mut r, |day| {
            asked.push(day.to_string());
            Ok((day == DAY).then(|| committed.clone().into_bytes()))
        })
        .unwrap();
        assert_eq!(
            shape(&r),
            [
                row("t", "typed by hand", Status::Unverified),
                row("o", "not committed anywhere", Status::Unverified)
            ]
        );
        assert_eq!(asked, [DAY, "2026-12-09"]);
        // In the file of their own day, only the line of another day is looked up, and a line
        // that day did not commit stays.
        let mut r = classify(None, Some(moved.as_bytes()), &[]);
        let mut asked = Vec::new();
        drop_copies::<()>(DAY, &mut r, |day| {
            asked.push(day.to_string());
            Ok(None)
        })
        .unwrap();
        assert_eq!(
            (r.entries.len(), asked),
            (3, vec!["2026-12-09".to_string()])
        );
    }

    #[test]
    fn uncommitted_lines_are_pending_when_journalled_and_unverified_otherwise() {
        let committed = file(&[line::render(&entry("a", "one"))]);
        let journalled = line::render(&entry("p", "pending"));
        let forged = line::render(&entry("f", "hand-appended"));
        let working = format!("{committed}{journalled}\n{forged}\n");
        let r = classify(
            Some(committed.as_bytes()),
            Some(working.as_bytes()),
            &[&journalled],
        );
        assert_eq!(
            shape(&r),
            [
                row("a", "one", Status::Committed),
                row("p", "pending", Status::Pending),
                row("f", "hand-appended", Status::Unverified)
            ]
        );
        // The journal is the source: a pending line edited in the working file, or the whole
        // file deleted, still reads as journalled.
        let edited = working.replace("\"pending\"", "\"tampered\"");
        let r = classify(
            Some(committed.as_bytes()),
            Some(edited.as_bytes()),
            &[&journalled],
        );
        assert_eq!(r.entries[1].0.summary, "pending");
        let r = classify(Some(committed.as_bytes()), None, &[&journalled]);
        assert_eq!(shape(&r)[1], row("p", "pending", Status::Pending));
        // A journal record left behind after its commit adds nothing.
        let both = format!("{committed}{journalled}\n");
        let r = classify(Some(both.as_bytes()), Some(both.as_bytes()), &[&journalled]);
        assert_eq!(shape(&r)[1], row("p", "pending", Status::Committed));
    }

    #[test]
    fn without_a_record_every_line_is_unverified() {
        let working = file(&[line::render(&entry("a", "one"))]);
        let r = classify(None, Some(working.as_bytes()), &[]);
        assert_eq!(shape(&r), [row("a", "one", Status::Unverified)]);
    }

    #[test]
    fn retractions_are_classified_like_entries() {
        let ret = |id: &str| retraction::Retraction {
            id: id.into(),
            retracts: "a".into(),
            time: format!("{DAY}T11:00:00.000Z"),
            reason: "wrong".into(),
            extra: Default::default(),
        };
        let committed = file(&[
            line::render(&entry("a", "one")),
            retraction::render(&ret("r1")),
        ]);
        let journalled = retraction::render(&ret("r2"));
        let forged = retraction::render(&ret("r3"));
        let working = format!("{committed}{journalled}\n{forged}\n");
        let r = classify(
            Some(committed.as_bytes()),
            Some(working.as_bytes()),
            &[&journalled],
        );
        let got: Vec<(&str, Status)> = r
            .retractions
            .iter()
            .map(|(x, s)| (x.id.as_str(), *s))
            .collect();
        assert_eq!(
            got,
            [
                ("r1", Status::Committed),
                ("r2", Status::Pending),
                ("r3", Status::Unverified)
            ]
        );
        assert!(got
            .iter()
            .map(|(_, s)| s.is_recorded())
            .eq([true, true, false]));
    }

    #[test]
    fn status_names_round_trip() {
        for s in [
            Status::Committed,
            Status::Pending,
            Status::Edited,
            Status::Deleted,
            Status::Unverified,
        ] {
            assert_eq!(Status::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        assert_eq!(Status::parse("retracted"), None);
    }
}
