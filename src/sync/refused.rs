//! The last refusal of a sync remote's records, kept for `git rutter status`:
//! `.git/rutter/sync-refused`, one JSON object (remote, tip, commit, path, rule, time), written
//! when sync refuses what a remote sent and removed by the next sync with that remote that
//! completes. Opened relative to the state folder, never through a symlink; best effort (a
//! note that cannot be written never hides the refusal, which sync reports on stderr).

use crate::audit::intake::Refusal;
use crate::clock::Instant;
use crate::fsx::Dir;
use crate::objectid::ObjectId;
use std::path::Path;

const FILE: &str = "sync-refused";

/// A remembered refusal.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Noted {
    pub remote: String,
    /// The remote's tip that was refused (`None`: git refused the fetch itself).
    pub tip: Option<String>,
    #[serde(flatten)]
    pub refusal: Refusal,
    /// When, ISO 8601 UTC.
    pub time: String,
}

/// Remembers that `remote`'s records at `tip` were refused.
pub fn note(
    state_dir: &Path,
    remote: &str,
    tip: Option<ObjectId>,
    refusal: &Refusal,
    now: Instant,
) {
    let noted = Noted {
        remote: remote.to_string(),
        tip: tip.map(|t| t.to_string()),
        refusal: refusal.clone(),
        time: now.iso(),
    };
    let Ok(json) = serde_json::to_vec(&noted) else {
        return;
    };
    if let Ok(dir) = Dir::open_private(state_dir) {
        let _ = dir.write_atomic(FILE, &json);
    }
}

/// Forgets a refusal of `remote` (a sync with it completed).
pub(crate) fn clear(state_dir: &Path, remote: &str) {
    if read(state_dir).is_some_and(|n| n.remote == remote) {
        if let Ok(dir) = Dir::open_private(state_dir) {
            let _ = dir.remove(FILE);
        }
    }
}

/// The remembered refusal, if any (an unreadable note reads as none).
pub(crate) fn read(state_dir: &Path) -> Option<Noted> {
    let bytes = Dir::open_private(state_dir).ok()?.read(FILE).ok()??;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_noted_read_and_cleared_by_its_remote_only() {
        let t = tempfile::tempdir().unwrap();
        let refusal = Refusal {
            commit: Some("abc1234".into()),
            path: Some("_librarian/..".into()),
            kind: Some("unexpected-path".into()),
            rule: "a `.` or `..` name is never a record path".into(),
        };
        note(t.path(), "origin", None, &refusal, Instant(0));
        let got = read(t.path()).unwrap();
        assert_eq!((got.remote.as_str(), &got.refusal), ("origin", &refusal));
        clear(t.path(), "other");
        assert!(read(t.path()).is_some(), "another remote's sync keeps it");
        clear(t.path(), "origin");
        assert!(read(t.path()).is_none());
        std::fs::write(t.path().join(FILE), b"{not json").unwrap();
        assert!(read(t.path()).is_none());
    }
}
