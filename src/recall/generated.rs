//! Test support: a vault of generated entries placed in day files and indexed, with their
//! statuses and retractions set in the record cache as a record would have set them (the
//! property tests of the streamed `recent` and of the timeline page build theirs alike).

use crate::index::Index;
use crate::records::standing::Status;
use crate::records::{dayfile, line, Entry};
use std::path::Path;

/// One generated entry and where it lies: its file's day of November 2026, the files that hold
/// it (`""` the plain day file, else a writer tag; the file tagged [`EDITED`] holds it with
/// another summary and time, so one id with two JSONs) with its status in each, and whether an
/// honoured retraction names it.
pub(crate) struct Placed<'a> {
    pub day: u8,
    pub files: &'a [(&'static str, Status)],
    pub retracted: bool,
    pub entry: Entry,
}

/// The writer tag whose file holds each of its entries with the summary changed and a
/// millisecond later.
pub(crate) const EDITED: &str = "e";

/// An index over a vault (at `root`) holding `placed`.
pub(crate) fn index_of(root: &Path, placed: &[Placed<'_>]) -> Index {
    let dir = root.join(crate::records::paths::SESSIONS_DIR);
    std::fs::create_dir_all(&dir).unwrap();
    let stem = |p: &Placed<'_>, tag: &str| match tag {
        "" => format!("2026-11-{:02}", p.day),
        t => format!("2026-11-{:02}.{t}", p.day),
    };
    for p in placed {
        let day = format!("2026-11-{:02}", p.day);
        for (tag, _) in p.files {
            let path = dir.join(format!("{}.md", stem(p, tag)));
            let mut text = std::fs::read_to_string(&path).unwrap_or_default();
            let line = match *tag {
                EDITED => {
                    // A millisecond later too: two copies of one id at one time are ordered
                    // differently by `recent` (its grouping) and the page (the table's order).
                    let mut edited = p.entry.clone();
                    edited.summary.push_str(" (another copy)");
                    edited.time = edited.time.replacen(".000Z", ".001Z", 1);
                    line::render(&edited)
                }
                _ => line::render(&p.entry),
            };
            text.push_str(&dayfile::append_bytes(text.len() as u64, true, &day, &line));
            std::fs::write(&path, text).unwrap();
        }
    }
    let index = Index::in_memory(root);
    for (i, p) in placed.iter().enumerate() {
        for (tag, status) in p.files {
            index
                .conn
                .execute(
                    "UPDATE entries SET status = ?1 WHERE id = ?2 AND file = ?3",
                    [status.as_str(), &p.entry.id, &stem(p, tag)],
                )
                .unwrap();
        }
        if p.retracted {
            index
                .conn
                .execute(
                    "INSERT INTO retractions(file, day, seq, id, retracts, time, reason, status) VALUES ('x', 'x', ?1, ?2, ?3, 't', 'r', 'committed')",
                    (i as i64, format!("r{i}"), &p.entry.id),
                )
                .unwrap();
        }
    }
    index
}

/// A ref as its bare `path@hash`.
pub(crate) fn path_at_hash(out: &mut String, path: &str, hash: &str) {
    out.push_str(path);
    out.push('@');
    out.push_str(hash);
}
