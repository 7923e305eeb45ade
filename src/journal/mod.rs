//! The pending journal: `.git/rutter/pending/`, one JSON file per appended line not yet
//! committed (DESIGN §2.7).
//!
//! A capture writes its journal record **before** it appends to the day file and removes it
//! after the commit lands, so a line is never in the working tree without either a commit or a
//! journal record that lets `git rutter commit` (or the next capture) commit it.

pub(crate) mod check;

use crate::fsx::{Dir, FsError};
use crate::records::paths::stem_of;
use crate::records::Broken;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// One appended chunk of a record file, waiting to be committed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingAppend {
    /// Vault-relative path of the record file, e.g. `_librarian/sessions/2026-11-30.md`.
    pub path: String,
    /// Where the bytes landed in the working file (its size just before the append).
    pub offset: u64,
    /// The bytes appended (the header of a new file, a separating newline, the entry line).
    pub bytes: String,
    /// The entry line alone, without its newline (the commit body).
    pub line: String,
    pub day: String,
    pub entry_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Vault-relative paths of cited notes with their sha256, for the `cited/` copies.
    #[serde(default)]
    pub cited: Vec<(String, String)>,
    /// What kind of record line this is (decides the commit subject and trailers).
    #[serde(default, skip_serializing_if = "RecordKind::is_capture")]
    pub kind: RecordKind,
    /// For a retraction: the id of the entry it retracts (a commit trailer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retracts: Option<String>,
}

impl PendingAppend {
    /// A record of `kind` for `path` and `entry_id` on `day`, with no provenance or cited notes
    /// yet; the append fills in `offset`, `bytes` and `line`.
    pub fn new(kind: RecordKind, path: &str, day: &str, entry_id: &str) -> PendingAppend {
        PendingAppend {
            path: path.to_string(),
            offset: 0,
            bytes: String::new(),
            line: String::new(),
            day: day.to_string(),
            entry_id: entry_id.to_string(),
            session_id: None,
            client: None,
            project: None,
            cited: vec![],
            kind,
            retracts: None,
        }
    }
}

/// The kinds of appended record lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordKind {
    /// A session entry in a day file.
    #[default]
    Capture,
    /// A binding in the identity ledger.
    Identity,
    /// An acknowledgement of a verify finding.
    Ack,
    /// A retraction line in a day file.
    Retract,
}

impl RecordKind {
    fn is_capture(&self) -> bool {
        *self == RecordKind::Capture
    }

    /// The name the journal files of this kind start with.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RecordKind::Capture => "capture",
            RecordKind::Identity => "identity",
            RecordKind::Ack => "ack",
            RecordKind::Retract => "retract",
        }
    }
}

/// The journal directory.
pub struct Journal {
    dir: Dir,
}

/// A journal record as read back: its file name and content.
pub(crate) type JournalRecord = (String, PendingAppend);

/// A journal file that is not a record this tool may commit: its name and why.
pub(crate) type Refused = (String, String);

/// Where refused records are moved, inside the journal folder.
pub(crate) const REJECTED_DIR: &str = "rejected";

/// How old a temporary file must be before it is taken for a killed writer's leftover.
const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(60);

impl Journal {
    /// Opens (creating) `<state_dir>/pending/`, refusing a symlinked state folder or journal.
    pub fn open(state_dir: &Path) -> Result<Journal, FsError> {
        crate::failpoint::check("journal-open").map_err(|e| FsError::Io {
            path: state_dir.join("pending"),
            source: e,
        })?;
        let dir = Dir::open_private(state_dir)?
            .open_dir("pending", true)?
            .ok_or_else(|| FsError::WrongKind(state_dir.join("pending")))?;
        Ok(Journal { dir })
    }

    /// The records waiting in the journal of `state_dir`, for readers: nothing is created,
    /// moved or changed, and a missing journal holds nothing. A symlinked state folder or
    /// journal is refused, as [`Journal::open`] refuses it.
    pub fn pending(state_dir: &Path) -> Result<Vec<JournalRecord>, FsError> {
        let (Some(parent), Some(name)) = (state_dir.parent(), state_dir.file_name()) else {
            return Ok(Vec::new());
        };
        let state = match Dir::open(parent) {
            Ok(d) => d.open_dir(&name.to_string_lossy(), false)?,
            Err(_) => None,
        };
        let Some(dir) = state
            .map(|s| s.open_dir("pending", false))
            .transpose()?
            .flatten()
        else {
            return Ok(Vec::new());
        };
        Ok(Journal { dir }.list()?.0)
    }

    /// The entry and retraction lines waiting in the journal of `state_dir`, by day file stem,
    /// in the order they were written to the day file: what recall and `log` show as pending.
    /// Unreadable records are left out (`commit` reports them), and a journal that cannot be
    /// opened (a symlinked folder) holds nothing a reader may show.
    pub fn pending_lines(state_dir: &Path) -> BTreeMap<String, Vec<String>> {
        let Ok(records) = Journal::pending(state_dir) else {
            return BTreeMap::new();
        };
        let mut by_day: BTreeMap<String, Vec<(u64, String)>> = BTreeMap::new();
        for (_, rec) in records {
            if !matches!(rec.kind, RecordKind::Capture | RecordKind::Retract) {
                continue;
            }
            if let Some(day) = stem_of(&rec.path) {
                by_day
                    .entry(day.to_string())
                    .or_default()
                    .push((rec.offset, rec.line));
            }
        }
        by_day
            .into_iter()
            .map(|(day, mut lines)| {
                lines.sort_by_key(|(offset, _)| *offset);
                (day, lines.into_iter().map(|(_, l)| l).collect())
            })
            .collect()
    }

    /// The journal folder (for messages).
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a record named after its kind and entry id (`capture-<id>.json`: records of one
    /// kind sort in capture order, and records of two kinds that share an id never collide).
    /// Not `fsync`ed here: most records are removed by the commit a moment later; a run that
    /// ends with records left calls [`Journal::sync`].
    pub fn add(&self, rec: &PendingAppend) -> Result<String, FsError> {
        let name = record_name(rec);
        let bytes = serde_json::to_vec(rec).map_err(|e| FsError::Io {
            path: self.dir.path().join(&name),
            source: e.into(),
        })?;
        self.dir.write_atomic(&name, &bytes)?;
        Ok(name)
    }

    /// `fsync`s every record and the folder, so lines the hook reported as saved but not
    /// committed survive a power loss (docs/security.md, "Power loss").
    pub fn sync(&self) -> Result<(), FsError> {
        crate::failpoint::check("journal-sync").map_err(|e| FsError::Io {
            path: self.dir.path().to_path_buf(),
            source: e,
        })?;
        for name in self.dir.list()?.iter().filter(|n| n.ends_with(".json")) {
            self.dir.sync_file(name)?;
        }
        self.dir.sync()
    }

    /// How long ago the record `name` was written (its file's mtime), if it can be told.
    pub(crate) fn age(&self, name: &str) -> Option<std::time::Duration> {
        let (_, mtime_ns, _) = self.dir.stat(name)?;
        let written =
            std::time::UNIX_EPOCH + std::time::Duration::from_nanos(u64::try_from(mtime_ns).ok()?);
        std::time::SystemTime::now().duration_since(written).ok()
    }

    /// All records that may be committed, in name order, and the files that may not (not a
    /// record, or a record that claims what no append writes: [`check`]), with
    /// why. Nothing is moved or deleted here; [`Journal::reject`] moves the refused ones.
    pub fn list(&self) -> Result<(Vec<JournalRecord>, Vec<Refused>), FsError> {
        let mut names: Vec<String> = self
            .dir
            .list()?
            .into_iter()
            .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
            .collect();
        names.sort();
        let (mut ok, mut bad) = (Vec::new(), Vec::new());
        for name in names {
            match self.dir.read(&name) {
                Ok(Some(bytes)) => match parse_record(&name, &bytes) {
                    Ok(rec) => ok.push((name, rec)),
                    Err(why) => bad.push((name, why.to_string())),
                },
                Ok(None) => {}
                Err(e) => bad.push((name, e.to_string())),
            }
        }
        Ok((ok, bad))
    }

    /// Moves refused records into `pending/rejected/` (kept for the user to look at, never
    /// committed, out of every later listing). The caller holds the capture lock (a
    /// `recorder::Recorder`).
    pub fn reject(&self, refused: &[Refused]) -> Result<(), FsError> {
        if refused.is_empty() {
            return Ok(());
        }
        for (name, _) in refused {
            self.dir.set_aside(name, REJECTED_DIR)?;
        }
        Ok(())
    }

    /// Writes `rec` again under the name it was listed by (sync moves a line's offset).
    pub fn rewrite(&self, name: &str, rec: &PendingAppend) -> Result<(), FsError> {
        let bytes = serde_json::to_vec(rec).map_err(|e| FsError::Io {
            path: self.dir.path().join(name),
            source: e.into(),
        })?;
        self.dir.write_atomic(name, &bytes)
    }

    /// Removes committed records.
    pub fn remove(&self, names: &[String]) -> Result<(), FsError> {
        names.iter().try_for_each(|n| self.dir.remove(n))
    }

    /// Removes the temporary files of writers killed mid-write (older than a minute, so a
    /// capture at work keeps its own); returns how many.
    pub(crate) fn sweep_temps(&self) -> usize {
        self.dir.sweep_temps(STALE_TEMP)
    }
}

/// The file name of a record: `<kind>-<entry id>.json`.
pub fn record_name(rec: &PendingAppend) -> String {
    format!("{}-{}.json", rec.kind.as_str(), rec.entry_id)
}

/// Reads one journal file: a record as this tool writes it, or why it is refused.
pub fn parse_record(name: &str, bytes: &[u8]) -> Result<PendingAppend, Broken> {
    let rec = serde_json::from_slice::<PendingAppend>(bytes)
        .map_err(|e| format!("it is not a journal record ({e})"))?;
    check::check(name, &rec)?;
    Ok(rec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The journal record reader takes any bytes without panicking, and what it accepts
        /// is a record of a record file.
        #[test]
        fn the_reader_takes_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            if let Ok(rec) = parse_record("capture-x.json", &bytes) {
                prop_assert!(rec.path.starts_with("_librarian/"));
            }
        }

        /// JSON-shaped input with hostile field values is refused or sane.
        #[test]
        fn hostile_field_values_never_pass_unchecked(
            path in "\\PC{0,30}", line in "\\PC{0,60}", bytes in "\\PC{0,60}",
            kind in prop_oneof![Just("capture"), Just("identity"), Just("ack"), Just("retract"), Just("other")],
        ) {
            let json = serde_json::json!({"path": path, "offset": 3, "bytes": bytes, "line": line,
                "day": "2026-11-30", "entry_id": "x", "kind": kind});
            let name = format!("{kind}-x.json");
            if let Ok(rec) = parse_record(&name, json.to_string().as_bytes()) {
                prop_assert!(!rec.path.contains(".."));
                prop_assert!(!rec.line.contains('\n'));
            }
        }
    }

    #[test]
    fn refused_records_move_to_rejected_and_leave_the_listing() {
        let t = tempfile::tempdir().unwrap();
        let j = Journal::open(t.path()).unwrap();
        std::fs::write(t.path().join("pending/capture-x.json"), b"{not json").unwrap();
        let forged = serde_json::json!({"path": "../../.git/config", "offset": 0, "bytes": "x\n",
            "line": "x", "day": "2026-11-30", "entry_id": "y"});
        std::fs::write(t.path().join("pending/capture-y.json"), forged.to_string()).unwrap();
        let (ok, bad) = j.list().unwrap();
        assert!(ok.is_empty());
        assert_eq!(bad.len(), 2, "{bad:?}");
        assert!(bad[1].1.contains("not a record file"), "{bad:?}");
        j.reject(&bad).unwrap();
        assert_eq!(j.list().unwrap(), (vec![], vec![]));
        // A second refusal of the same name keeps the first one.
        std::fs::write(t.path().join("pending/capture-x.json"), b"again").unwrap();
        let (_, bad) = j.list().unwrap();
        j.reject(&bad).unwrap();
        let mut kept: Vec<_> = std::fs::read_dir(t.path().join("pending/rejected"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        kept.sort();
        assert_eq!(
            kept,
            ["capture-x.json", "capture-x.json.2", "capture-y.json"]
        );
    }

    /// Records of the four kinds that share one entry id are four files, each listed.
    #[test]
    fn records_of_different_kinds_never_collide() {
        use crate::records::{dayfile, ledger, line, retraction, Entry};
        let t = tempfile::tempdir().unwrap();
        let j = Journal::open(t.path()).unwrap();
        let id = "20261130T120000000Z";
        let day = "2026-11-30";
        let rec = |kind, path: &str, line: String, header: String| PendingAppend {
            bytes: format!("{header}{line}\n"),
            line,
            ..PendingAppend::new(kind, path, day, id)
        };
        let entry = Entry {
            id: id.into(),
            session_id: None,
            time: format!("{day}T12:00:00.000Z"),
            summary: "s".into(),
            refs: vec![],
            workspace: None,
            client: None,
            supersedes: None,
            extra: Default::default(),
        };
        let retraction = retraction::Retraction {
            id: id.into(),
            retracts: "other".into(),
            time: entry.time.clone(),
            reason: "r".into(),
            extra: Default::default(),
        };
        let binding = ledger::Binding {
            id: id.into(),
            from: "a.md".into(),
            to: "b.md".into(),
            hash: "sha256:00".into(),
            detected: "exact-hash".into(),
            ts: entry.time.clone(),
            extra: Default::default(),
        };
        let day_file = "_librarian/sessions/2026-11-30.md";
        let ack = crate::records::paths::ack_line(&entry.time, "f", "r");
        let records = [
            rec(
                RecordKind::Capture,
                day_file,
                line::render(&entry),
                dayfile::header(day),
            ),
            rec(
                RecordKind::Retract,
                day_file,
                retraction::render(&retraction),
                dayfile::header(day),
            ),
            rec(
                RecordKind::Identity,
                ledger::LEDGER_PATH,
                ledger::render(&binding),
                ledger::header(),
            ),
            rec(
                RecordKind::Ack,
                crate::records::paths::ACKS,
                ack,
                String::new(),
            ),
        ];
        let names: Vec<String> = records.iter().map(|r| j.add(r).unwrap()).collect();
        let (ok, bad) = j.list().unwrap();
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(ok.len(), 4, "{names:?}");
        assert_eq!(
            ok.into_iter().map(|(_, r)| r).collect::<Vec<_>>(),
            [&records[3], &records[0], &records[2], &records[1]].map(Clone::clone)
        );
    }

    #[test]
    fn a_symlinked_journal_folder_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), t.path().join("pending")).unwrap();
        assert!(matches!(Journal::open(t.path()), Err(FsError::Symlink(_))));
        let state = t.path().join("state");
        std::os::unix::fs::symlink(elsewhere.path(), &state).unwrap();
        assert!(matches!(Journal::open(&state), Err(FsError::Symlink(_))));
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }
}
