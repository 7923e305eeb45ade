//! The use log `_librarian/stateful-use.jsonl`: one JSON line per event, appended with a single
//! `O_APPEND` write that does not follow symlinks, never rewritten. The MCP server writes it;
//! the next capture or `git rutter commit` commits it (anchor §12).

use crate::clock::Instant;
use crate::fsx::{Dir, FsError};
use std::io::Write;
use std::path::Path;

/// Vault-relative path of the use log.
pub const USE_LOG: &str = crate::records::paths::USE_LOG;

/// The kinds of event the log records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A valid `librarian-recent` call.
    Recent,
    /// A search that surfaced at least one prior engagement.
    SearchSignal,
}

impl Kind {
    /// The `kind` string in the log.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Recent => "librarian-recent",
            Kind::SearchSignal => "search-signal",
        }
    }
}

/// One event line, without its newline: `{"ts":"<ISO ms Z>","kind":"<kind>"}`.
pub fn line(ts: Instant, kind: Kind) -> String {
    format!("{{\"ts\":\"{}\",\"kind\":\"{}\"}}", ts.iso(), kind.as_str())
}

/// Appends one event (creating `_librarian/` and the log if needed).
pub fn append(vault_root: &Path, ts: Instant, kind: Kind) -> Result<(), FsError> {
    let overlay = Dir::open(vault_root)?
        .open_dir("_librarian", true)?
        .ok_or_else(|| FsError::WrongKind(vault_root.join("_librarian")))?;
    let mut f = overlay.open_append(crate::records::paths::file_name(
        crate::records::paths::USE_LOG,
    ))?;
    let mut bytes = String::new();
    if !f.ends_with_newline {
        bytes.push('\n');
    }
    bytes.push_str(&line(ts, kind));
    bytes.push('\n');
    f.file.write_all(bytes.as_bytes()).map_err(|e| FsError::Io {
        path: f.path.clone(),
        source: e,
    })
}

/// Every well-formed event `(ts, kind)` in the log; torn or foreign lines are skipped.
pub fn read(vault_root: &Path) -> Vec<(String, String)> {
    crate::store::read_jsonl_pairs(vault_root, USE_LOG, "ts", "kind")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_one_line_per_event_and_skips_torn_lines() {
        let t = tempfile::tempdir().unwrap();
        let ts = crate::clock::parse_instant("2026-11-30T10:00:00.000Z").unwrap();
        append(t.path(), ts, Kind::Recent).unwrap();
        let log = t.path().join(USE_LOG);
        let mut text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            text,
            "{\"ts\":\"2026-11-30T10:00:00.000Z\",\"kind\":\"librarian-recent\"}\n"
        );
        text.push_str("{\"ts\":\"torn");
        std::fs::write(&log, &text).unwrap();
        append(t.path(), ts, Kind::SearchSignal).unwrap();
        let events = read(t.path());
        assert_eq!(events.len(), 2);
        assert_eq!(events[1].1, "search-signal");
    }

    #[test]
    fn a_symlinked_log_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("_librarian")).unwrap();
        std::os::unix::fs::symlink(other.path().join("x"), t.path().join(USE_LOG)).unwrap();
        let ts = crate::clock::parse_instant("2026-11-30T10:00:00.000Z").unwrap();
        assert!(append(t.path(), ts, Kind::Recent).is_err());
        assert!(!other.path().join("x").exists());
    }
}
