//! What a pending-journal record may claim: the journal is input, not authority (spec/ref-layout.md,
//! "The pending journal"). A record names a record file of its kind, carries exactly one
//! well-formed line of that kind with the id it claims, and bytes that are that line as an
//! append writes it. Anything else is refused before it can reach a commit, whatever wrote it.

use super::{PendingAppend, RecordKind};
use crate::records::{dayfile, ledger, line, paths, retraction, Broken};

/// The longest line a record may carry (an entry is far shorter: its summary is cut at 2,000
/// characters and its refs are few).
const MAX_LINE: usize = crate::records::line::MAX_LINE_BYTES;

/// Why a record is refused, or `Ok` when it may be committed once its line is in the working file.
pub fn check(name: &str, rec: &PendingAppend) -> Result<(), Broken> {
    let want = format!("{}-{}.json", rec.kind.as_str(), rec.entry_id);
    if name != want {
        return Err(format!("its name should be {want}").into());
    }
    path_of_kind(rec)?;
    one_line(rec)?;
    line_of_kind(rec)?;
    framing(rec)
}

/// Whether the working file shows that `rec` was appended: its line is there, or (for a line
/// that carries an id) a line with its id is, edited since. A record without this evidence
/// waits until its line is appended (`capture::complete`); one with it is committed from the
/// journal, so an edit made before the commit is reported, never laundered (DESIGN §5).
pub fn appended(working: &[u8], rec: &PendingAppend) -> bool {
    if crate::records::standing::contains_line(working, rec.line.as_bytes()) {
        return true;
    }
    rec.kind != RecordKind::Ack
        && memchr::memmem::find(working, format!("\"id\":\"{}\"", rec.entry_id).as_bytes())
            .is_some()
}

/// The record file a kind may append to: a day file of its day, the ledger, the acks log.
fn path_of_kind(rec: &PendingAppend) -> Result<(), Broken> {
    let ok = match rec.kind {
        RecordKind::Capture | RecordKind::Retract => day_file_of(&rec.path, &rec.day),
        RecordKind::Identity => rec.path == ledger::LEDGER_PATH,
        RecordKind::Ack => rec.path == crate::records::paths::ACKS,
    };
    match ok {
        true => Ok(()),
        false => Err(format!(
            "its path {:?} is not a record file a {} line goes to",
            rec.path,
            rec.kind.as_str()
        )
        .into()),
    }
}

/// `_librarian/sessions/<day file>` of `day`, nothing else (no `..`, no folder, no other name).
fn day_file_of(path: &str, day: &str) -> bool {
    let Some(name) = path
        .strip_prefix(paths::SESSIONS_DIR)
        .and_then(|p| p.strip_prefix('/'))
    else {
        return false;
    };
    crate::records::paths::is_day_file(name) && crate::records::paths::day_of(path) == Some(day)
}

fn one_line(rec: &PendingAppend) -> Result<(), Broken> {
    if rec.line.is_empty() || rec.line.len() > MAX_LINE {
        return Err("its line is empty or too long".into());
    }
    if rec.line.contains(['\n', '\r']) {
        return Err("its line holds a line break".into());
    }
    Ok(())
}

/// The line parses as a line of the record's kind and carries the id the record claims.
fn line_of_kind(rec: &PendingAppend) -> Result<(), Broken> {
    let id = match rec.kind {
        RecordKind::Capture => line::parse(&rec.line).ok().flatten().map(|e| e.id),
        RecordKind::Retract => retraction::parse(&rec.line)
            .ok()
            .flatten()
            .filter(|r| rec.retracts.as_deref().is_none_or(|x| x == r.retracts))
            .map(|r| r.id),
        RecordKind::Identity => ledger::parse_line(&rec.line).ok().flatten().map(|b| b.id),
        RecordKind::Ack => ack_finding(&rec.line).map(|_| rec.entry_id.clone()),
    };
    match id {
        Some(id) if id == rec.entry_id => Ok(()),
        Some(id) => Err(format!("its line is {id}, not the {} it claims", rec.entry_id).into()),
        None => Err(format!("its line is not a {} line", rec.kind.as_str()).into()),
    }
}

/// An acknowledgement line: one JSON object with a string `finding`.
fn ack_finding(line: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    v.get("finding")?.as_str().map(str::to_string)
}

/// `bytes` is the line as an append writes it: the line and a newline, after a separating
/// newline (not at the start of a file) or after the file's header (only at its start).
fn framing(rec: &PendingAppend) -> Result<(), Broken> {
    let header = match rec.kind {
        RecordKind::Capture | RecordKind::Retract => dayfile::header(&rec.day),
        RecordKind::Identity => ledger::header(),
        RecordKind::Ack => String::new(),
    };
    let plain = format!("{}\n", rec.line);
    let ok = rec.bytes == plain
        || (rec.offset > 0 && rec.bytes == format!("\n{plain}"))
        || (rec.offset == 0 && rec.bytes == format!("{header}{plain}"));
    match ok {
        true => Ok(()),
        false => Err("its bytes are not its line as an append writes it".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::Entry;
    use proptest::prelude::*;

    fn entry_line(id: &str) -> String {
        line::render(&Entry {
            id: id.into(),
            session_id: Some("S".into()),
            time: "2026-11-30T07:31:41.112Z".into(),
            summary: "Decided.".into(),
            refs: vec![],
            workspace: None,
            client: None,
            supersedes: None,
            extra: Default::default(),
        })
    }

    fn good() -> PendingAppend {
        let id = "20261130T073141112Z";
        let line = entry_line(id);
        PendingAppend {
            offset: 120,
            bytes: format!("{line}\n"),
            line,
            ..PendingAppend::new(
                RecordKind::Capture,
                "_librarian/sessions/2026-11-30.md",
                "2026-11-30",
                id,
            )
        }
    }

    const NAME: &str = "capture-20261130T073141112Z.json";

    #[test]
    fn a_record_as_capture_writes_it_passes() {
        assert_eq!(check(NAME, &good()), Ok(()));
        let first = PendingAppend {
            offset: 0,
            bytes: format!("{}{}\n", dayfile::header("2026-11-30"), good().line),
            ..good()
        };
        assert_eq!(check(NAME, &first), Ok(()));
        let after_torn = PendingAppend {
            bytes: format!("\n{}\n", good().line),
            ..good()
        };
        assert_eq!(check(NAME, &after_torn), Ok(()));
    }

    #[test]
    fn forged_records_are_refused() {
        let cases: Vec<(&str, PendingAppend)> = vec![
            (
                "path ..",
                PendingAppend {
                    path: "_librarian/sessions/../../.git/config".into(),
                    ..good()
                },
            ),
            (
                "path .git",
                PendingAppend {
                    path: ".git/config".into(),
                    ..good()
                },
            ),
            (
                "absolute",
                PendingAppend {
                    path: "/etc/passwd".into(),
                    ..good()
                },
            ),
            (
                "a note",
                PendingAppend {
                    path: "Notes/a.md".into(),
                    ..good()
                },
            ),
            (
                "other day",
                PendingAppend {
                    path: "_librarian/sessions/2026-12-01.md".into(),
                    ..good()
                },
            ),
            (
                "subfolder",
                PendingAppend {
                    path: "_librarian/sessions/x/2026-11-30.md".into(),
                    ..good()
                },
            ),
            (
                "ledger path for a capture",
                PendingAppend {
                    path: ledger::LEDGER_PATH.into(),
                    ..good()
                },
            ),
            (
                "use log",
                PendingAppend {
                    path: paths::USE_LOG.into(),
                    ..good()
                },
            ),
            (
                "smuggled line before",
                PendingAppend {
                    bytes: format!("FORGED\n{}\n", good().line),
                    ..good()
                },
            ),
            (
                "header mid-file",
                PendingAppend {
                    bytes: format!("{}{}\n", dayfile::header("2026-11-30"), good().line),
                    ..good()
                },
            ),
            (
                "two lines",
                PendingAppend {
                    line: format!("{}\nFORGED", good().line),
                    ..good()
                },
            ),
            (
                "not an entry",
                PendingAppend {
                    line: "hello".into(),
                    bytes: "hello\n".into(),
                    ..good()
                },
            ),
            (
                "another id",
                PendingAppend {
                    entry_id: "20261130T000000000Z".into(),
                    ..good()
                },
            ),
            (
                "other kind",
                PendingAppend {
                    kind: RecordKind::Identity,
                    ..good()
                },
            ),
        ];
        for (what, rec) in cases {
            let name = format!("{}-{}.json", rec.kind.as_str(), rec.entry_id);
            assert!(check(&name, &rec).is_err(), "{what}: {rec:?}");
        }
        assert!(check("capture-other.json", &good()).is_err(), "name");
    }

    proptest! {
        /// Whatever a record holds, checking it never panics, and a record that passes names a
        /// day file of its day and carries one line.
        #[test]
        fn check_never_panics_and_passes_only_sane_records(
            path in "(_librarian/(sessions/)?)?[-./a-z0-9]{0,24}",
            day in "[0-9-]{0,12}",
            line in "\\PC{0,40}",
            bytes in "\\PC{0,40}",
            offset in any::<u64>(),
            id in "[0-9A-Z]{0,20}",
        ) {
            let rec = PendingAppend { offset, bytes, line, ..PendingAppend::new(RecordKind::Capture, &path, &day, &id) };
            let name = format!("capture-{id}.json");
            if check(&name, &rec).is_ok() {
                prop_assert!(!rec.path.contains(".."));
                prop_assert!(!rec.line.contains('\n'));
                prop_assert!(rec.path.starts_with("_librarian/sessions/"));
            }
        }
    }
}
