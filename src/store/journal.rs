//! The pending journal: `.git/rutter/pending/`, one JSON file per appended line not yet
//! committed (DESIGN §2.7).
//!
//! A capture writes its journal record **before** it appends to the day file and removes it
//! after the commit lands, so a line is never in the working tree without either a commit or a
//! journal record that lets `git rutter commit` (or the next capture) commit it.

use crate::fsx::{Dir, FsError};
use serde::{Deserialize, Serialize};
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
    pub fn as_str(self) -> &'static str {
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
pub type JournalRecord = (String, PendingAppend);

impl Journal {
    /// Opens (creating) `<state_dir>/pending/`.
    pub fn open(state_dir: &Path) -> Result<Journal, FsError> {
        std::fs::create_dir_all(state_dir).map_err(|e| FsError::Io {
            path: state_dir.to_path_buf(),
            source: e,
        })?;
        let state = Dir::open(state_dir)?;
        let dir = state
            .open_dir("pending", true)?
            .ok_or_else(|| FsError::WrongKind(state_dir.join("pending")))?;
        Ok(Journal { dir })
    }

    /// Writes a record named after its kind and entry id (`capture-<id>.json`: records of one
    /// kind sort in capture order, and records of two kinds that share an id never collide).
    pub fn add(&self, rec: &PendingAppend) -> Result<String, FsError> {
        let name = format!("{}-{}.json", rec.kind.as_str(), rec.entry_id);
        let bytes = serde_json::to_vec(rec).unwrap_or_default();
        self.dir.write_atomic(&name, &bytes)?;
        Ok(name)
    }

    /// All records in name order. Unreadable records are returned as errors by name, never
    /// deleted.
    pub fn list(&self) -> Result<(Vec<JournalRecord>, Vec<String>), FsError> {
        let mut names: Vec<String> = self
            .dir
            .list()?
            .into_iter()
            .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
            .collect();
        names.sort();
        let (mut ok, mut bad) = (Vec::new(), Vec::new());
        for name in names {
            match self
                .dir
                .read(&name)?
                .map(|b| serde_json::from_slice::<PendingAppend>(&b))
            {
                Some(Ok(rec)) => ok.push((name, rec)),
                Some(Err(_)) => bad.push(name),
                None => {}
            }
        }
        Ok((ok, bad))
    }

    /// Writes `rec` again under the name it was listed by (sync moves a line's offset).
    pub fn rewrite(&self, name: &str, rec: &PendingAppend) -> Result<(), FsError> {
        let bytes = serde_json::to_vec(rec).unwrap_or_default();
        self.dir.write_atomic(name, &bytes)
    }

    /// Removes committed records.
    pub fn remove(&self, names: &[String]) -> Result<(), FsError> {
        names.iter().try_for_each(|n| self.dir.remove(n))
    }
}
