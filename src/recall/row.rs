//! One entry as the commands show it, and the marks that say how it stands. Every surface
//! renders the step recall reads from the record ([`Step`]: the entry, the day of its file, its
//! status against the record and its supersede links): `recent`, `librarian-recent`,
//! `cited-by` and get-note's block, the timeline, search's enrichment. `log`'s [`Row`] is that
//! step with what the audit adds (the commit that added it, its file and line, an edit's diff,
//! the retraction that took it back), built in `recall::log`.
//!
//! How a row stands is named and marked here ([`Standing`], [`push_mark`], [`push_supersede`]),
//! from `records::standing::Status`: a new status is a variant there (its name, its mark, its
//! tone, whether it counts) and shows in every command; a standing that is not a status against the
//! record (retracted) is a variant of [`Standing`]. The `--json` outputs write a row's cited
//! notes and workspace through [`JsonRef`] and [`JsonWorkspace`]: every key always there.

use super::render::IdText;
use crate::records::standing::{Status, Tone};
use crate::records::supersede::Links;
use crate::records::text::push_field;
pub(crate) use crate::records::Step;
use crate::records::{NoteRef, Workspace};
use serde::Serialize;
use serde_json::{Map, Value};
use std::rc::Rc;

/// How an entry stands, as `log` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Standing {
    /// Its status against the record.
    Is(Status),
    /// A recorded retraction names it: `log` lists it, recall leaves it out.
    Retracted,
}

impl Standing {
    /// The standing of an entry of `status`, `retracted` or not.
    pub(crate) fn of(status: Status, retracted: bool) -> Standing {
        match retracted {
            true => Standing::Retracted,
            false => Standing::Is(status),
        }
    }

    /// Its name, as `log` prints it and `log --json` writes it in `status`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Standing::Is(s) => s.as_str(),
            Standing::Retracted => "retracted",
        }
    }

    /// How it reads (the CLI paints its name by it): its status's tone; a retracted entry was
    /// taken back, not broken, so it reads as a warning, as a pending one does.
    pub(crate) fn tone(self) -> Tone {
        match self {
            Standing::Is(s) => s.tone(),
            Standing::Retracted => Tone::Warn,
        }
    }

    /// Whether the entry's supersede claims count: recorded (committed or journalled) and not
    /// retracted (spec/recall.md, "Supersede").
    pub(crate) fn claims(self) -> bool {
        matches!(self, Standing::Is(s) if s.is_recorded())
    }
}

impl Serialize for Standing {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The retraction that took an entry back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Retracted {
    pub id: String,
    pub day: String,
    pub time: String,
    pub reason: String,
    /// The commit that added the retraction (`None` while it is pending).
    pub commit: Option<String>,
}

/// One row of `log`: an entry's step and what the audit says of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub step: Step,
    /// The commit that added its line (`None`: not committed, or not found); shared by the rows
    /// of one commit, as their file is by the rows of one file.
    pub commit: Option<Rc<str>>,
    /// The file that holds it (vault-relative: its day file, or the purge ledger).
    pub file: Rc<str>,
    /// The entry's line as its file holds it (`log -p` shows it as the line its commit added).
    pub line: Option<String>,
    /// The diff verify found for an edited entry.
    pub diff: Option<String>,
    /// Boxed: few rows have one, and the whole record's rows are many.
    pub retraction: Option<Box<Retracted>>,
}

impl Row {
    /// The entry's id.
    pub(crate) fn id(&self) -> &str {
        &self.step.entry.id
    }

    /// How it stands: retracted, or its status.
    pub(crate) fn standing(&self) -> Standing {
        Standing::of(self.step.status, self.retraction.is_some())
    }
}

/// The mark recall prints after a summary for `status`, when `marks` (the vault has a record to
/// judge by: without one every entry would read `[unverified]`).
pub(crate) fn mark(status: Status, marks: bool) -> Option<&'static str> {
    marks.then(|| status.mark()).flatten()
}

/// ` MARK` after a summary ([`mark`]), appended to `out`.
pub(crate) fn push_mark(out: &mut String, status: Status, marks: bool) {
    if let Some(m) = mark(status, marks) {
        out.push(' ');
        out.push_str(m);
    }
}

/// ` [superseded by ID, …]` and ` [supersedes ID: no such entry]`, appended to `out`
/// (spec/recall.md, "Supersede"); ids through `ids` (short ones) when given.
pub(crate) fn push_supersede(out: &mut String, links: &Links, ids: Option<IdText<'_>>) {
    let id = |i: &str| ids.map_or_else(|| i.to_string(), |ids| ids(i));
    if !links.superseded_by.is_empty() {
        let by: Vec<String> = links.superseded_by.iter().map(|i| id(i)).collect();
        out.push_str(" [superseded by ");
        push_field(out, &by.join(", "));
        out.push(']');
    }
    for gone in &links.unresolved {
        out.push_str(" [supersedes ");
        push_field(out, gone);
        out.push_str(": no such entry]");
    }
}

/// A cited note as the `--json` outputs write it: `path`, `hash`, `blob` (`null` when the entry
/// recorded none), how `recent` shows it now (`shown`, only there), and the fields a newer
/// writer added to the ref.
#[derive(Debug, Serialize)]
pub(crate) struct JsonRef<'a> {
    pub path: &'a str,
    pub hash: &'a str,
    pub blob: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shown: Option<String>,
    #[serde(flatten)]
    pub extra: Extra<'a>,
}

impl<'a> JsonRef<'a> {
    /// The ref `r`, with how it reads now when the command shows that.
    pub(crate) fn of(r: &'a NoteRef, shown: Option<String>) -> Self {
        JsonRef {
            path: &r.path,
            hash: &r.hash,
            blob: r.blob.as_deref(),
            shown,
            extra: Extra::of(&r.extra, &["path", "hash", "blob", "shown"]),
        }
    }
}

/// Cited notes as [`JsonRef`]s without `shown`, written one by one (no list is collected).
#[derive(Debug, Clone, Copy)]
pub(crate) struct JsonRefs<'a>(pub &'a [NoteRef]);

impl Serialize for JsonRefs<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|r| JsonRef::of(r, None)))
    }
}

/// Where an entry's session ran, as the `--json` outputs write it: `repo` is `null` when the
/// entry recorded none; the fields a newer writer added are kept.
#[derive(Debug, Serialize)]
pub(crate) struct JsonWorkspace<'a> {
    pub cwd: &'a str,
    pub project: &'a str,
    pub repo: Option<&'a str>,
    #[serde(flatten)]
    pub extra: Extra<'a>,
}

impl<'a> JsonWorkspace<'a> {
    pub(crate) fn of(w: &'a Workspace) -> Self {
        JsonWorkspace {
            cwd: &w.cwd,
            project: &w.project,
            repo: w.repo.as_deref(),
            extra: Extra::of(&w.extra, &["cwd", "project", "repo"]),
        }
    }
}

/// The fields a newer writer added to an entry, a ref or a workspace, as a `--json` view writes
/// them after its own: less any key the view writes itself (`known`), so a forged line's
/// `"status"` or `"shown"` can neither shadow nor repeat the command's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Extra<'a> {
    map: &'a Map<String, Value>,
    known: &'static [&'static str],
}

impl<'a> Extra<'a> {
    /// The fields of `map` whose keys are not `known`.
    pub(crate) fn of(map: &'a Map<String, Value>, known: &'static [&'static str]) -> Self {
        Extra { map, known }
    }
}

impl Serialize for Extra<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        for (k, v) in self.map {
            if !self.known.contains(&k.as_str()) {
                m.serialize_entry(k, v)?;
            }
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retraction_outranks_the_status_and_only_recorded_claims_count() {
        assert_eq!(
            Standing::of(Status::Edited, false).name(),
            "edited after commit"
        );
        assert_eq!(Standing::of(Status::Edited, true).name(), "retracted");
        let counted: Vec<&str> = Status::ALL
            .into_iter()
            .map(Standing::Is)
            .chain([Standing::Retracted])
            .filter(|s| s.claims())
            .map(Standing::name)
            .collect();
        assert_eq!(
            counted,
            ["committed", "pending", "edited after commit", "deleted"]
        );
        assert_eq!(
            serde_json::to_value(Standing::Retracted).unwrap(),
            "retracted"
        );
    }

    #[test]
    fn marks_show_only_with_a_record() {
        let mut out = String::from("x");
        push_mark(&mut out, Status::Pending, true);
        push_mark(&mut out, Status::Pending, false);
        push_mark(&mut out, Status::Committed, true);
        assert_eq!(out, "x [not committed yet]");
    }

    #[test]
    fn a_newer_writers_fields_are_kept_and_cannot_shadow_the_views_own() {
        let mut r = NoteRef::new("a.md", "sha256:ab", None);
        r.extra.insert("withheld".into(), "private".into());
        r.extra.insert("shown".into(), "forged".into());
        r.extra.insert("blob".into(), "forged".into());
        let text = serde_json::to_string(&JsonRef::of(&r, Some("a.md@sha256:ab".into()))).unwrap();
        assert_eq!(
            text,
            r#"{"path":"a.md","hash":"sha256:ab","blob":null,"shown":"a.md@sha256:ab","withheld":"private"}"#
        );
        let none = serde_json::to_string(&JsonRef::of(&r, None)).unwrap();
        assert!(!none.contains("shown"), "{none}");
    }
}
