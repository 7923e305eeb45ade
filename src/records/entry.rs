//! The record model: one captured entry, its refs and its workspace provenance.
//!
//! Every struct keeps the fields it does not know in `extra`, so an entry written by a newer
//! version survives a round trip through this one unchanged.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One captured decision line with its provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub time: String,
    pub summary: String,
    #[serde(default)]
    pub refs: Vec<NoteRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<Workspace>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The ids (or short ids, as the client gave them) of the entries this one replaces
    /// (spec/record-format.md); omitted when it replaces none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<Vec<String>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An entry tagged with the day of the file it came from and its status against the record
/// (a step of a session).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub day: String,
    #[serde(flatten)]
    pub entry: Entry,
    pub status: super::standing::Status,
    /// The entries that replace this one, and the ids it names that no entry has
    /// (spec/recall.md, "Supersede"); empty until recall resolves them.
    #[serde(flatten)]
    pub supersede: super::supersede::Links,
}

/// A cited note: the path as the client typed it (normalised) and its content fingerprints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteRef {
    pub path: String,
    pub hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Where the session ran: its working directory, project name and git remote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workspace {
    pub cwd: String,
    pub project: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl NoteRef {
    /// A ref with its two fingerprints and no extra fields.
    pub(crate) fn new(
        path: impl Into<String>,
        hash: impl Into<String>,
        blob: Option<String>,
    ) -> Self {
        NoteRef {
            path: path.into(),
            hash: hash.into(),
            blob,
            extra: Map::new(),
        }
    }

    /// The `sha256:` plus 7 hex digits form used in human-readable lines.
    pub(crate) fn short_hash(&self) -> &str {
        truncate_chars(&self.hash, 14)
    }
}

impl Workspace {
    /// A workspace with no extra fields.
    pub(crate) fn new(
        cwd: impl Into<String>,
        project: impl Into<String>,
        repo: Option<String>,
    ) -> Self {
        Workspace {
            cwd: cwd.into(),
            project: project.into(),
            repo,
            extra: Map::new(),
        }
    }
}

impl Entry {
    /// The project name, when the entry carries provenance.
    pub(crate) fn project(&self) -> Option<&str> {
        self.workspace.as_ref().map(|w| w.project.as_str())
    }

    /// The `HH:MM:SS` part of the entry's time (empty when the time is malformed).
    pub(crate) fn hhmmss(&self) -> &str {
        self.time.get(11..19).unwrap_or("")
    }

    /// The reference's dedupe key: `[session_id, summary, sorted ref paths]`; `None` without a
    /// session id (such entries are never deduped).
    pub(crate) fn dedupe_key(&self) -> Option<String> {
        let mut paths: Vec<&str> = self.refs.iter().map(|r| r.path.as_str()).collect();
        let mut key = Vec::new();
        dedupe_key_into(
            self.session_id.as_deref(),
            &self.summary,
            &mut paths,
            &mut key,
        )?;
        String::from_utf8(key).ok()
    }
}

/// Writes the dedupe key of an entry with these fields into `out` (emptied first): the compact
/// JSON `[session_id, summary, ref paths]`, the paths sorted in place first. Returns the
/// session id (`None`, and nothing written, without one: such entries are never deduped). A day
/// file's keys are written from its text through this without building its entries
/// ([`super::dayfile::dedupe_keys`]).
pub(crate) fn dedupe_key_into<'s>(
    session_id: Option<&'s str>,
    summary: &str,
    paths: &mut [&str],
    out: &mut Vec<u8>,
) -> Option<&'s str> {
    let sid = session_id.filter(|s| !s.is_empty())?;
    paths.sort_unstable();
    out.clear();
    // Strings written into a Vec: serde_json cannot fail here.
    serde_json::to_writer(&mut *out, &(sid, summary, &*paths)).ok()?;
    Some(sid)
}

fn truncate_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The key is the reference's: `JSON.stringify([sessionId, summary, paths.sort()])`,
        /// as serde_json's `Value` writes it (the shard files hold its hash, so it never changes).
        #[test]
        fn the_dedupe_key_is_the_json_of_session_summary_and_sorted_paths(
            sid in proptest::option::of(any::<String>()),
            summary in any::<String>(),
            paths in proptest::collection::vec(any::<String>(), 0..4),
        ) {
            let entry = Entry {
                id: "1".into(),
                session_id: sid.clone(),
                time: String::new(),
                summary: summary.clone(),
                refs: paths.iter().map(|p| NoteRef::new(p.as_str(), "h", None)).collect(),
                workspace: None,
                client: None,
                supersedes: None,
                extra: Map::new(),
            };
            let mut sorted: Vec<&str> = paths.iter().map(String::as_str).collect();
            sorted.sort_unstable();
            let want = sid
                .filter(|s| !s.is_empty())
                .map(|s| serde_json::json!([s, summary, sorted]).to_string());
            prop_assert_eq!(entry.dedupe_key(), want);
        }
    }
}
