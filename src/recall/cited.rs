//! Which recorded decisions cited a note (`git rutter cited-by`, the block that ends
//! `librarian-get-note`'s answer, the pre-commit hook's line): the index answers
//! ([`Index::citations`], through the identity projection, so a decision that cited a note
//! before it was renamed is found under its new path); this module keeps the index current
//! first, says whether the note changed since each capture, renders, and reads the cited version
//! the ref keeps (`cited/<aa>/<sha256>`) for `-p`.

use super::render::Look;
use crate::index::cited::{Citation, NoNote};
use crate::index::entries::Scope;
use crate::index::reads::Records;
use crate::index::{Index, IndexError};
use crate::objectid::ObjectId;
use crate::records::text::{field_safe, one_line_safe};
use crate::records::{fingerprint, paths, NoteRef, Step};
use crate::store::{Store, StoreError};
use crate::vault::Vault;
use std::fmt::Write as _;

/// One decision that cited the note, and whether the note changed since.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decision {
    pub step: Step,
    /// The ref as the entry recorded it (its path is the note's, or one bound to it now).
    pub cited: NoteRef,
    /// The note's sha256 now differs from the one cited.
    pub changed: bool,
    /// The entry cited a symlink that leads to the note now, by the link's name.
    pub linked: bool,
}

impl Decision {
    /// Whether the entry cited the note under another path (before a rename).
    pub(crate) fn renamed(&self, path: &str) -> bool {
        self.cited.path != path && !self.linked
    }
}

/// The decisions that cited one note, newest first.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CitedBy {
    /// The note's vault-relative path.
    pub path: String,
    /// Its sha256 now (`sha256:<hex>`).
    pub sha256: String,
    pub decisions: Vec<Decision>,
    /// Whether the vault has a record to judge the entries by (without one every entry is
    /// unverified, and recall marks none).
    pub record: bool,
    /// Cited paths gone from the vault whose new place is unresolved and that name this note
    /// among their candidates: their decisions are not listed until `identity confirm` binds
    /// them.
    pub unresolved: Vec<Candidacy>,
}

/// A dead cited path that this note may be, with git's evidence for it (`None`: the note
/// carries the cited sha256, but so do others).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Candidacy {
    pub from: String,
    pub evidence: Option<String>,
}

impl CitedBy {
    /// How many decisions cited a version the note no longer has.
    pub(crate) fn changed(&self) -> usize {
        self.decisions.iter().filter(|d| d.changed).count()
    }
}

/// What a path turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lookup {
    Note(CitedBy),
    /// No note is at the path (the first one asked, or the one the index knows something of).
    NoNote(String, NoNote),
}

/// Looks the first of `paths` that is a note up (a path from inside the vault is asked as the
/// current folder makes it, then as given, as `show` asks): the index completed as `recent`
/// completes it (the identity pass of an index that never had one; the record cache refreshed
/// quickly, so a decision captured a moment ago is listed), the notes checked for changes
/// (renames included, with the identity pass when they concern it), then the citations read.
pub(crate) fn read(
    vault: &Vault,
    index: &mut Index,
    paths: &[String],
) -> Result<Lookup, IndexError> {
    if index.meta("identity_inputs")?.is_none() {
        super::reindex::refresh(vault, index, super::reindex::Mode::Auto, false)?;
    }
    super::source::refresh(vault, index, Scope::Quick(&[]))?;
    let (found, _) = index.read_fresh(
        |index| lookup(index, paths),
        |index, notes| super::reindex::identity_after_rescan(vault, index, notes).map(drop),
    )?;
    Ok(found)
}

/// The decisions that cited the note at `path`, as the index holds them now; `None` when no
/// note is there.
pub(crate) fn of_note(index: &Index, path: &str) -> Result<Option<CitedBy>, IndexError> {
    of_note_as(index, path, &[])
}

/// [`of_note`], with the decisions that cited one of `aliases` (paths that lead to the note).
fn of_note_as(
    index: &Index,
    path: &str,
    aliases: &[String],
) -> Result<Option<CitedBy>, IndexError> {
    let Some(sha256) = index.note_sha256(path)? else {
        return Ok(None);
    };
    let claims = index.supersedes()?;
    let decisions = index
        .citations(path, aliases)?
        .into_iter()
        .map(|Citation { mut step, cited }| {
            step.supersede = claims.links(&step.entry.id);
            Decision {
                changed: cited.hash != sha256,
                linked: aliases.contains(&cited.path),
                step,
                cited,
            }
        })
        .collect();
    let unresolved = index
        .unresolved_naming(path)?
        .into_iter()
        .map(|(from, candidates)| Candidacy {
            from,
            evidence: candidates
                .into_iter()
                .find(|c| c.path == path)
                .and_then(|c| c.evidence),
        })
        .collect();
    Ok(Some(CitedBy {
        path: path.to_string(),
        sha256,
        decisions,
        record: matches!(index.records()?, Records::Tip(_)),
        unresolved,
    }))
}

/// The citations of the first of `paths` that is a note, as the index holds them now; else of
/// the first that leads to one inside the vault (a symlink to a note: the index holds no link as
/// a note, and a decision that cited the note by the link's name is listed with the note's).
fn lookup(index: &Index, paths: &[String]) -> Result<Lookup, IndexError> {
    for path in paths {
        if let Some(found) = of_note(index, path)? {
            return Ok(Lookup::Note(found));
        }
    }
    for path in paths {
        let Some(target) = crate::index::identity::linked_in_vault(index.root(), path) else {
            continue;
        };
        if let Some(found) = of_note_as(index, &target, std::slice::from_ref(path))? {
            return Ok(Lookup::Note(found));
        }
    }
    let mut first = None;
    for path in paths {
        let known = index.no_note(path)?;
        if known != NoNote::default() {
            return Ok(Lookup::NoNote(path.clone(), known));
        }
        first.get_or_insert((path.clone(), known));
    }
    let (path, known) = first.unwrap_or_default();
    Ok(Lookup::NoNote(path, known))
}

/// `librarian-get-note`'s answer for a note: `text` as before, then, when decisions cited the
/// note, a blank line and [`block`].
pub(crate) fn with_block(text: String, cited: &CitedBy) -> String {
    let Some(block) = block(cited) else {
        return text;
    };
    let gap = if text.ends_with('\n') { "\n" } else { "\n\n" };
    format!("{text}{gap}{block}")
}

/// Decisions the block lists by name, newest first.
pub(crate) const BLOCK_DECISIONS: usize = 3;
/// The most characters of a summary, a project or a path the block shows (then `…`).
const BLOCK_SUMMARY_CHARS: usize = 160;
const BLOCK_PROJECT_CHARS: usize = 40;
const BLOCK_PATH_CHARS: usize = 120;
/// What the block can never exceed, in characters (spec/mcp.md; a test holds it).
pub(crate) const BLOCK_MAX_CHARS: usize = 1500;

/// The facts of `cited` in a few lines for an AI client: how many decisions cited the note,
/// the latest day, how many of them it changed since, then the newest [`BLOCK_DECISIONS`]
/// (UTC day, project, summary, status mark, the path it was cited as, whether it changed since).
/// Bounded whatever the record holds: at most four lines and [`BLOCK_MAX_CHARS`] characters.
/// `None` when no decision cited the note.
pub(crate) fn block(cited: &CitedBy) -> Option<String> {
    if cited.decisions.is_empty() {
        return None;
    }
    let utc = crate::clock::Clock::Utc;
    let mut out = String::from("↩ ");
    out.push_str(&sentence(cited, &utc, true));
    let shown = cited.decisions.len().min(BLOCK_DECISIONS);
    if cited.decisions.len() > shown {
        let _ = write!(out, " The newest {shown}:");
    }
    for d in &cited.decisions[..shown] {
        out.push_str("\n   ");
        utc.push_day(&mut out, &d.step.day, &d.step.entry.time);
        if let Some(p) = d.step.entry.project() {
            let _ = write!(out, " [{}]", cut(p, BLOCK_PROJECT_CHARS));
        }
        out.push_str(" — ");
        out.push_str(&cut(&d.step.entry.summary, BLOCK_SUMMARY_CHARS));
        super::row::push_mark(&mut out, d.step.status, cited.record);
        super::row::push_supersede(&mut out, &d.step.supersede, None);
        // Cited under another path: before a rename, or by a link's name.
        let cited_as_other = d.cited.path != cited.path;
        match (cited_as_other, d.changed) {
            (true, true) => {
                let _ = write!(
                    out,
                    " (cited as {}; changed since)",
                    cut(&d.cited.path, BLOCK_PATH_CHARS)
                );
            }
            (true, false) => {
                let _ = write!(out, " (cited as {})", cut(&d.cited.path, BLOCK_PATH_CHARS));
            }
            (false, true) => out.push_str(" (changed since)"),
            (false, false) => {}
        }
    }
    // The cuts above keep it far below; this holds the bound whatever changes them.
    Some(match out.char_indices().nth(BLOCK_MAX_CHARS) {
        Some((at, _)) => out[..at].to_string(),
        None => out,
    })
}

/// The terminal's first line: `PATH is cited by …` (or that no recorded decision cites it),
/// days in `look`'s calendar.
pub(crate) fn cli_header(cited: &CitedBy, look: &Look) -> String {
    let path = field_safe(&cited.path);
    match cited.decisions.is_empty() {
        true => format!("No recorded decision cites {path}."),
        false => format!("{path} is {}", sentence(cited, &look.clock, false)),
    }
}

/// One decision as the terminal shows it, appended to `out`: the step line `recent` shows
/// (`SHORT-ID DAY TIME OFFSET[ [project]][ (client)] — summary[ mark]`), then
/// `   cited[ as] PATH@sha256:<7 hex> (…)` saying whether it was cited under an older path and
/// whether the note changed since.
pub(crate) fn cli_decision(out: &mut String, d: &Decision, cited: &CitedBy, look: &Look) {
    super::render::push_id(out, &d.step, look);
    super::render::step_line(out, &d.step, d.step.entry.project(), cited.record, look);
    let since = match d.changed {
        true => "changed since capture",
        false => "unchanged since capture",
    };
    let (was, hash) = (
        field_safe(&d.cited.path),
        field_safe(fingerprint::short_hash(&d.cited.hash)),
    );
    let now = field_safe(&cited.path);
    let _ = match (d.linked, d.renamed(&cited.path)) {
        (true, _) => write!(out, "\n   cited as {was}@{hash} (a link to {now}; {since})"),
        (false, true) => write!(
            out,
            "\n   cited as {was}@{hash} (renamed to {now}; {since})"
        ),
        (false, false) => write!(out, "\n   cited {was}@{hash} ({since})"),
    };
}

/// The terminal's last lines: for each unresolved cited path this note may be, what binds it.
pub(crate) fn cli_unresolved(cited: &CitedBy) -> Vec<String> {
    cited
        .unresolved
        .iter()
        .map(|u| {
            let why = u
                .evidence
                .as_deref()
                .map_or(String::new(), |e| format!(" ({})", field_safe(e)));
            format!(
                "Decisions cited {from}, which is gone, and this note is a candidate for it{why}: `git rutter identity confirm {} {}` binds it, and cited-by then lists them.",
                field_safe(&crate::argv::quote(&u.from)),
                field_safe(&crate::argv::quote(&cited.path)),
                from = field_safe(&u.from),
            )
        })
        .collect()
}

/// `text` on one line (controls and line breaks shown as `\u{…}`), cut to `max` characters.
fn cut(text: &str, max: usize) -> String {
    let safe = one_line_safe(text);
    match safe.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &safe[..at]),
        None => safe,
    }
}

/// "Cited by 3 recorded decisions, the latest on 2026-11-30; the note changed since 2 of
/// them." (`capital`: as a sentence of its own), days in `clock`'s calendar.
pub(crate) fn sentence(cited: &CitedBy, clock: &crate::clock::Clock, capital: bool) -> String {
    let n = cited.decisions.len();
    let lead = if capital { "Cited" } else { "cited" };
    let Some(newest) = cited.decisions.first() else {
        return format!("{lead} by no recorded decision.");
    };
    let mut day = String::new();
    clock.push_day(&mut day, &newest.step.day, &newest.step.entry.time);
    let k = cited.changed();
    match n {
        1 if k == 1 => format!("{lead} by 1 recorded decision, on {day}; the note changed since."),
        1 => format!("{lead} by 1 recorded decision, on {day}; the note has not changed since."),
        _ => {
            let since = match k {
                0 => "has not changed since any of them".to_string(),
                k if k == n => "changed since all of them".to_string(),
                k => format!("changed since {k} of them"),
            };
            format!("{lead} by {n} recorded decisions, the latest on {day}; the note {since}.")
        }
    }
}

/// Where the version a decision cited was found, and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CitedVersion {
    /// The copy the ref keeps, `cited/<aa>/<sha256>`.
    Kept(Vec<u8>),
    /// Not kept, but the blob the entry recorded is in the vault's object database (the note
    /// was committed at that version).
    InHistory(Vec<u8>),
    /// Neither: `rutter.keepCited` was off, the note was over the copy limit or ignored by
    /// git, and git never saw that version.
    Missing,
}

/// The version of the note `cited` names, from the ref's kept copy, else from the object
/// database by the blob id the entry recorded; either only when its sha256 is the one cited.
pub(crate) fn cited_version(store: &Store, cited: &NoteRef) -> Result<CitedVersion, StoreError> {
    let matches = |bytes: &[u8]| fingerprint::sha256_ref(bytes) == cited.hash;
    if let Some(path) = paths::cited_path(&cited.hash) {
        if let Some(bytes) = store.committed(&path)?.filter(|b| matches(b)) {
            return Ok(CitedVersion::Kept(bytes));
        }
    }
    let blob = cited
        .blob
        .as_deref()
        .and_then(|b| ObjectId::from_hex(b).ok());
    // A blob the object database does not have is the common case here, not an error.
    match blob.and_then(|b| store.blob(b).ok()) {
        Some(bytes) if matches(&bytes) => Ok(CitedVersion::InHistory(bytes)),
        _ => Ok(CitedVersion::Missing),
    }
}

/// The unified diff from the cited version of `d` to the note `path` as it is now (`now`).
pub(crate) fn diff(d: &Decision, path: &str, cited: &[u8], now: &[u8]) -> String {
    let cited_name = format!(
        "{}@{} (as cited)",
        field_safe(&d.cited.path),
        field_safe(fingerprint::short_hash(&d.cited.hash))
    );
    let now_name = format!("{} (now)", field_safe(path));
    crate::records::text::unified_diff(cited, now, 3, (&cited_name, &now_name))
}

/// Of the paths a commit changes (`paths`), those that recorded decisions cited, directly or
/// as the target of a binding, sorted: what the index holds, plus the refs of the day files
/// committed since its record cache was last read (a decision captured a moment ago, before any
/// recall read it). The index is only read, never built or refreshed, and the record only read
/// where it moved: this runs in the pre-commit hook. `None` when there is no current index to
/// ask (the hook then says nothing).
pub(crate) fn among(vault: &Vault, paths: &[String]) -> Result<Option<Vec<String>>, IndexError> {
    let Some(found) = crate::index::cited::cited_among(vault, paths)? else {
        return Ok(None);
    };
    let mut cited: std::collections::BTreeSet<String> = found.paths.into_iter().collect();
    if cited.len() < paths.len() && vault.git_dir.is_some() {
        let err = |e: StoreError| IndexError::Record(Box::new(e));
        let store = Store::open(vault).map_err(err)?;
        let old = found.records_tip.and_then(|t| ObjectId::from_hex(&t).ok());
        let asked: std::collections::HashSet<&String> = paths.iter().collect();
        if let (Some(old), Some(tip)) = (old, store.tip().map_err(err)?) {
            // An old tip that cannot be read (a rewound ref, gc) leaves the index's answer.
            let moved = match old == tip {
                true => vec![],
                false => store.changed_days(old, tip).unwrap_or_default(),
            };
            for blob in moved.into_iter().filter_map(|(_, blob)| blob) {
                let bytes = store.blob(blob).map_err(err)?;
                let refs = crate::records::dayfile::parse(&bytes)
                    .entries
                    .into_iter()
                    .flat_map(|e| e.refs);
                cited.extend(refs.map(|r| r.path).filter(|p| asked.contains(p)));
            }
        }
    }
    Ok(Some(cited.into_iter().collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::standing::Status;
    use crate::records::{Entry, Workspace};
    use proptest::prelude::*;

    fn decision(day: &str, summary: &str, cited_as: &str, changed: bool) -> Decision {
        Decision {
            step: Step {
                supersede: Default::default(),
                day: day.into(),
                entry: Entry {
                    id: format!("{}T100000000Z", day.replace('-', "")),
                    session_id: None,
                    time: format!("{day}T10:00:00.000Z"),
                    summary: summary.into(),
                    refs: vec![],
                    workspace: Some(Workspace::new("/w", "proj", None)),
                    client: None,
                    supersedes: None,
                    extra: Default::default(),
                },
                status: Status::Committed,
            },
            cited: NoteRef::new(cited_as, "sha256:00", None),
            changed,
            linked: false,
        }
    }

    fn cited(decisions: Vec<Decision>) -> CitedBy {
        CitedBy {
            path: "Notes/alpha.md".into(),
            sha256: "sha256:11".into(),
            decisions,
            record: true,
            unresolved: vec![],
        }
    }

    #[test]
    fn the_sentence_counts_decisions_and_changes() {
        let utc = crate::clock::Clock::Utc;
        let one = cited(vec![decision("2026-11-30", "A.", "Notes/alpha.md", true)]);
        assert_eq!(
            sentence(&one, &utc, true),
            "Cited by 1 recorded decision, on 2026-11-30; the note changed since."
        );
        let three = cited(vec![
            decision("2026-11-30", "A.", "Notes/alpha.md", true),
            decision("2026-11-02", "B.", "Notes/a.md", false),
            decision("2026-10-01", "C.", "Notes/alpha.md", true),
        ]);
        assert_eq!(
            sentence(&three, &utc, false),
            "cited by 3 recorded decisions, the latest on 2026-11-30; the note changed since 2 of them."
        );
        assert_eq!(
            block(&three).unwrap(),
            "↩ Cited by 3 recorded decisions, the latest on 2026-11-30; the note changed since 2 of them.\n   2026-11-30 [proj] — A. (changed since)\n   2026-11-02 [proj] — B. (cited as Notes/a.md)\n   2026-10-01 [proj] — C. (changed since)"
        );
        assert_eq!(block(&cited(vec![])), None);
        assert_eq!(with_block("note\n".into(), &cited(vec![])), "note\n");
        assert!(with_block("note".into(), &one).starts_with("note\n\n↩ Cited by 1"));
    }

    proptest! {
        /// Whatever the record holds (any number of decisions, any summary, project or path,
        /// line breaks and controls included), the block is at most four lines and
        /// BLOCK_MAX_CHARS characters.
        #[test]
        fn the_block_is_bounded(
            n in 1usize..40,
            summary in "\\PC{0,3000}|[\\x00-\\x1f\u{2028}]{0,50}",
            project in "\\PC{0,500}",
            path in "\\PC{0,1000}",
        ) {
            let mut ds: Vec<Decision> = (0..n)
                .map(|i| decision("2026-11-30", &summary, if i % 2 == 0 { "Notes/alpha.md" } else { &path }, i % 3 == 0))
                .collect();
            for d in &mut ds {
                d.step.entry.workspace = Some(Workspace::new("/w", project.clone(), None));
                d.step.status = Status::Deleted;
            }
            let text = block(&cited(ds)).unwrap();
            prop_assert!(text.lines().count() <= 1 + BLOCK_DECISIONS, "{text}");
            prop_assert!(text.chars().count() <= BLOCK_MAX_CHARS, "{}", text.chars().count());
        }
    }
}
