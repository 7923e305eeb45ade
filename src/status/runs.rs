//! The hook runs `status` shows: read from every log a capture could have written to for this
//! setup (the vault's, the one for runs that found no vault, and those of vaults written into
//! hooks or found by them), merged oldest first.

use crate::capture::runlog::{self, Kind, Run};
use std::path::PathBuf;

/// Every run in the logs of `dirs` (each folder read once), oldest first.
pub(crate) fn collect(dirs: &[PathBuf]) -> Vec<Run> {
    let mut seen: Vec<&PathBuf> = Vec::new();
    let mut runs = Vec::new();
    for d in dirs {
        if !seen.contains(&d) {
            seen.push(d);
            runs.extend(runlog::read(d));
        }
    }
    // ISO instants of one format sort as text; a stable sort keeps each log's own order.
    runs.sort_by(|a, b| a.time.cmp(&b.time));
    runs
}

/// The newest run of each client label (`None`: runs that named no client), in label order.
pub(crate) fn last_per_client(runs: &[Run]) -> Vec<&Run> {
    let mut last: Vec<&Run> = Vec::new();
    for r in runs.iter().rev() {
        if !last.iter().any(|l| l.client == r.client) {
            last.push(r);
        }
    }
    last.sort_by(|a, b| a.client.cmp(&b.client));
    last
}

/// The file that holds when failed runs were last acknowledged (`status --ack-runs`): one ISO
/// instant in `${XDG_STATE_HOME:-~/.local/state}/rutter/runs-acked`, for every vault's logs.
const ACK_FILE: &str = "runs-acked";

/// Until when failed runs are acknowledged: a failed run at or before it is no finding. A
/// missing, linked or unreadable file acknowledges nothing.
pub(crate) fn acked_until() -> Option<String> {
    let dir = crate::fsx::Dir::open(&runlog::no_vault_dir()?).ok()?;
    let bytes = dir.read_at_most(ACK_FILE, 64).ok()??;
    let text = String::from_utf8(bytes).ok()?;
    crate::clock::parse_instant(text.trim()).map(crate::clock::Instant::iso)
}

/// Acknowledges every run logged up to `now`; returns the file written.
pub fn acknowledge(now: crate::clock::Instant) -> Result<PathBuf, crate::fsx::FsError> {
    let dir_path = runlog::no_vault_dir().ok_or_else(|| crate::fsx::FsError::Io {
        path: PathBuf::from("~/.local/state/rutter"),
        source: std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no home folder (HOME or XDG_STATE_HOME) to keep the acknowledgement in",
        ),
    })?;
    let dir = crate::fsx::Dir::open_private(&dir_path)?;
    dir.write_atomic(
        ACK_FILE,
        format!(
            "{}
",
            now.iso()
        )
        .as_bytes(),
    )?;
    Ok(dir_path.join(ACK_FILE))
}

/// The newest run of `client` whose outcome is `kind`.
pub(crate) fn last_of<'r>(runs: &'r [Run], client: &str, kind: Option<Kind>) -> Option<&'r Run> {
    runs.iter()
        .rev()
        .filter(|r| r.client.as_deref() == Some(client))
        .find(|r| kind.is_none_or(|k| r.outcome == k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::runlog::{append, Outcome};
    use crate::clock::Instant;

    fn run(ms: i64, client: Option<&str>, outcome: Outcome) -> Run {
        Run::new(Instant(ms), client, None, &outcome, None)
    }

    #[test]
    fn logs_are_merged_by_time_and_read_once() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        append(&a, &run(1, Some("claude"), Outcome::NoDirective)).unwrap();
        append(&b, &run(2, None, Outcome::NoVault("none".into()))).unwrap();
        append(&a, &run(3, Some("claude"), Outcome::Deduped)).unwrap();
        let runs = collect(&[a.clone(), b, a]);
        let times: Vec<i64> = runs.iter().map(|r| r.time.len() as i64).collect();
        assert_eq!(times.len(), 3, "each folder is read once");
        assert_eq!(runs[1].outcome, Kind::NoVault);
        let last = last_per_client(&runs);
        assert_eq!(last.len(), 2);
        assert_eq!(last[0].client, None);
        assert_eq!(last[1].outcome, Kind::Deduped);
        assert_eq!(
            last_of(&runs, "claude", Some(Kind::NoDirective)).map(|r| r.outcome),
            Some(Kind::NoDirective)
        );
        assert!(last_of(&runs, "claude", Some(Kind::Captured)).is_none());
    }
}
