//! What a record file's next committed version is: the committed bytes plus the journalled
//! appends, never anything inferred from a diverged working file (DESIGN §5).

use crate::journal::PendingAppend;
use crate::records::standing::contains_line;

/// The next committed version of one record file.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Composed {
    pub bytes: Vec<u8>,
    /// The working file no longer starts with the committed bytes plus the journalled appends:
    /// something edited it; `git rutter verify` will report it.
    pub diverged: bool,
    /// How many appends were already in the committed bytes (a crash after the ref moved).
    pub already_committed: usize,
}

/// Composes the next version of a file from its committed bytes (`None`: not in the ref yet),
/// its working bytes and the journalled appends in capture order. `header` is the text a new
/// file starts with when the working copy cannot be adopted.
pub(crate) fn compose(
    committed: Option<&[u8]>,
    working: Option<&[u8]>,
    appends: &[&PendingAppend],
    header: &str,
) -> Composed {
    let base = committed.unwrap_or_default();
    let mut fresh: Vec<&&PendingAppend> = appends
        .iter()
        .filter(|a| !contains_line(base, a.line.as_bytes()))
        .collect();
    // File order: captures that timed out on the lock append in whatever order they run, and
    // a journal record may still name the offset its writer saw before another append landed
    // first (it is corrected after the write). Where the working file holds the line decides;
    // the recorded offset only orders lines it does not hold.
    fresh.sort_by_key(|a| (position(working, base.len(), a), a.offset));
    let already_committed = appends.len() - fresh.len();
    if fresh.is_empty() {
        return Composed {
            bytes: base.to_vec(),
            diverged: false,
            already_committed,
        };
    }
    if let Some(bytes) = contiguous(committed, working, &fresh) {
        return Composed {
            bytes,
            diverged: false,
            already_committed,
        };
    }
    let mut bytes = base.to_vec();
    if committed.is_none() {
        bytes.extend_from_slice(header.as_bytes());
    }
    for a in &fresh {
        if !bytes.is_empty() && !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(a.line.as_bytes());
        bytes.push(b'\n');
    }
    Composed {
        bytes,
        diverged: true,
        already_committed,
    }
}

/// Where past `from` the working file holds the append's line as a whole line (`u64::MAX` when
/// it does not: such lines go last).
fn position(working: Option<&[u8]>, from: usize, a: &PendingAppend) -> u64 {
    let Some(tail) = working.and_then(|w| w.get(from..)) else {
        return u64::MAX;
    };
    let line = a.line.as_bytes();
    let mut at = 0;
    while let Some(i) = memchr::memmem::find(&tail[at..], line) {
        let start = at + i;
        let end = start + line.len();
        let whole =
            (start == 0 || tail[start - 1] == b'\n') && tail.get(end).is_none_or(|b| *b == b'\n');
        if whole {
            return (from + start) as u64;
        }
        at = start + 1;
    }
    u64::MAX
}

/// The committed bytes extended by the appends exactly as they were written, when the working
/// file holds them one after another right after the committed bytes (whatever offset a record
/// names: another writer's append may have landed first). A file never committed adopts the
/// bytes that preceded its first append (the same rule `init` applies).
fn contiguous(
    committed: Option<&[u8]>,
    working: Option<&[u8]>,
    fresh: &[&&PendingAppend],
) -> Option<Vec<u8>> {
    let working = working?;
    let mut out = match committed {
        Some(c) => c.to_vec(),
        None => working
            .get(..fresh.first().map_or(0, |a| a.offset as usize))?
            .to_vec(),
    };
    for a in fresh {
        if !working.get(out.len()..)?.starts_with(a.bytes.as_bytes()) {
            return None;
        }
        out.extend_from_slice(a.bytes.as_bytes());
    }
    working.starts_with(&out).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(offset: u64, bytes: &str, line: &str) -> PendingAppend {
        PendingAppend {
            path: "p".into(),
            offset,
            bytes: bytes.into(),
            line: line.into(),
            day: "2026-11-30".into(),
            entry_id: "id".into(),
            session_id: None,
            client: None,
            project: None,
            cited: vec![],
            kind: Default::default(),
            retracts: None,
        }
    }

    #[test]
    fn clean_append_commits_working_bytes() {
        let a = app(4, "L1\n", "L1");
        let c = compose(Some(b"HDR\n"), Some(b"HDR\nL1\n"), &[&a], "HDR\n");
        assert_eq!(
            c,
            Composed {
                bytes: b"HDR\nL1\n".to_vec(),
                diverged: false,
                already_committed: 0
            }
        );
    }

    #[test]
    fn edited_working_file_is_not_laundered() {
        let a = app(9, "L1\n", "L1");
        let c = compose(Some(b"HDR\nOLD\n"), Some(b"HDR\nNEW\nL1\n"), &[&a], "HDR\n");
        assert_eq!(c.bytes, b"HDR\nOLD\nL1\n");
        assert!(c.diverged);
    }

    #[test]
    fn appends_that_raced_are_committed_in_file_order_whatever_offset_they_name() {
        // B wrote first at 4, A (which saw the file at 4 too) landed after it: A's record still
        // names 4 when the commit reads it.
        let a = app(4, "A\n", "A");
        let b = app(4, "B\n", "B");
        for order in [[&a, &b], [&b, &a]] {
            let c = compose(Some(b"HDR\n"), Some(b"HDR\nB\nA\n"), &order, "HDR\n");
            assert_eq!(c.bytes, b"HDR\nB\nA\n");
            assert!(!c.diverged);
        }
        // A line the working file does not hold (journalled only) goes after those it holds.
        let j = app(0, "J\n", "J");
        let c = compose(Some(b"HDR\n"), Some(b"HDR\nB\n"), &[&j, &b], "HDR\n");
        assert_eq!(c.bytes, b"HDR\nB\nJ\n");
    }

    #[test]
    fn hand_appended_line_before_ours_is_not_laundered() {
        let a = app(11, "L1\n", "L1");
        let c = compose(Some(b"HDR\n"), Some(b"HDR\nFORGED\nL1\n"), &[&a], "HDR\n");
        assert_eq!(c.bytes, b"HDR\nL1\n");
        assert!(c.diverged);
    }

    #[test]
    fn uncommitted_file_is_adopted_with_its_prior_bytes() {
        let a = app(7, "\nL1\n", "L1");
        let c = compose(None, Some(b"@1 body\nL1\n"), &[&a], "HDR\n");
        assert_eq!(c.bytes, b"@1 body\nL1\n");
        assert!(!c.diverged);
    }

    #[test]
    fn deleted_working_file_still_commits_the_line() {
        let a = app(0, "HDR\nL1\n", "L1");
        let c = compose(None, None, &[&a], "HDR\n");
        assert_eq!(c.bytes, b"HDR\nL1\n");
    }

    #[test]
    fn already_committed_appends_are_skipped() {
        let a = app(4, "L1\n", "L1");
        let c = compose(Some(b"HDR\nL1\n"), Some(b"HDR\nL1\n"), &[&a], "HDR\n");
        assert_eq!(
            (c.bytes.as_slice(), c.already_committed),
            (&b"HDR\nL1\n"[..], 1)
        );
    }
}
