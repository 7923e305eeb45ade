//! The hook-run log: one small JSON line per `git-rutter capture` run, so `git rutter status` can
//! say whether the hook fired and why nothing was captured (spec/status.md, "The hook-run log").
//!
//! Written by every capture attempt and never allowed to slow or break it: one `O_APPEND` write
//! of one line (no fsync), every error ignored, the file opened without following a symlink. It
//! lives in the vault's state folder (`.git/rutter/` or the per-vault XDG folder), or, when no
//! vault could be resolved, in `${XDG_STATE_HOME:-~/.local/state}/rutter/`. Bounded by
//! rotation: once the file reaches [`ROTATE_AT`] bytes it is renamed over the one older file,
//! so the pair never holds much more than twice that. Nothing of a summary is logged: the reason
//! is the outcome's own one-line text.

use crate::clock::Instant;
use crate::fsx::{Dir, FsError};
use crate::vault::{self, Vault};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The current log file, in the state folder.
pub(crate) const LOG: &str = "hook-runs.jsonl";
/// The one older log file a full [`LOG`] is renamed to.
pub(crate) const OLDER_LOG: &str = "hook-runs.1.jsonl";
/// The size at which the current file is rotated.
pub(crate) const ROTATE_AT: u64 = 64 * 1024;
/// Longest `reason` and `session` kept, in characters (a line stays well under a kilobyte).
const MAX_REASON: usize = 300;
const MAX_SESSION: usize = 128;

/// What one capture run came to. Typed where it is decided, never read back from stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Entries were appended (committed, or journalled as pending when `pending`).
    Captured {
        entries: usize,
        day: String,
        pending: bool,
    },
    /// Every directive was already recorded for this session.
    Deduped,
    /// No directive in the text the hook scanned: most turns decide nothing.
    NoDirective,
    /// Deliberately not captured: the session's repository opted out (`rutter.capture`), or
    /// the event was not the end of a main agent's turn (the text says which).
    Skipped(String),
    /// The directive's summary was empty or the unfilled template.
    Empty,
    /// The payload or the directive was not valid JSON (the text says which).
    Malformed(String),
    /// No vault could be resolved (the text is the resolution error).
    NoVault(String),
    /// Anything else that stopped the capture, including an entry written aside.
    Error(String),
    /// A sync that started itself after a capture (`rutter.autoSync`) ran to its end (the text
    /// says what it took in and sent).
    Synced(String),
    /// A sync that started itself could not sync (the text says why).
    SyncFailed(String),
}

/// The outcome kinds as they are logged; unknown kinds (from a newer version) read as `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Captured,
    Deduped,
    NoDirective,
    Skipped,
    Empty,
    Malformed,
    NoVault,
    Error,
    Synced,
    SyncFailed,
    #[serde(other)]
    Other,
}

impl Kind {
    /// The logged name (`no-directive`, …).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Captured => "captured",
            Kind::Deduped => "deduped",
            Kind::NoDirective => "no-directive",
            Kind::Skipped => "skipped",
            Kind::Empty => "empty",
            Kind::Malformed => "malformed",
            Kind::NoVault => "no-vault",
            Kind::Error => "error",
            Kind::Synced => "synced",
            Kind::SyncFailed => "sync-failed",
            Kind::Other => "other",
        }
    }

    /// Whether a run of this kind means the hook is not working (a `status` finding).
    pub(crate) fn failed(self) -> bool {
        matches!(
            self,
            Kind::Malformed | Kind::NoVault | Kind::Error | Kind::SyncFailed
        )
    }
}

impl Outcome {
    /// The logged kind.
    pub fn kind(&self) -> Kind {
        match self {
            Outcome::Captured { .. } => Kind::Captured,
            Outcome::Deduped => Kind::Deduped,
            Outcome::NoDirective => Kind::NoDirective,
            Outcome::Skipped(_) => Kind::Skipped,
            Outcome::Empty => Kind::Empty,
            Outcome::Malformed(_) => Kind::Malformed,
            Outcome::NoVault(_) => Kind::NoVault,
            Outcome::Error(_) => Kind::Error,
            Outcome::Synced(_) => Kind::Synced,
            Outcome::SyncFailed(_) => Kind::SyncFailed,
        }
    }

    /// How many entries were appended.
    pub(crate) fn entries(&self) -> usize {
        match self {
            Outcome::Captured { entries, .. } => *entries,
            _ => 0,
        }
    }

    /// The one-line reason logged with the kind.
    pub(crate) fn reason(&self) -> String {
        match self {
            Outcome::Captured {
                entries,
                day,
                pending,
            } => {
                let noun = if *entries == 1 { "entry" } else { "entries" };
                let tail = if *pending { ", not committed yet" } else { "" };
                format!("captured {entries} {noun} into {day}{tail}")
            }
            Outcome::Deduped => "directive unchanged for this session; already recorded".into(),
            Outcome::NoDirective => "no session directive found".into(),
            Outcome::Empty => "empty summary or unfilled template".into(),
            Outcome::Skipped(why)
            | Outcome::Malformed(why)
            | Outcome::NoVault(why)
            | Outcome::Error(why)
            | Outcome::Synced(why)
            | Outcome::SyncFailed(why) => why.clone(),
        }
    }
}

/// One logged run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    /// When the run ended, `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    pub time: String,
    /// The client label (`--client`), when the hook named one.
    #[serde(default)]
    pub client: Option<String>,
    /// The session id from the payload (or `--session`).
    #[serde(default)]
    pub session: Option<String>,
    pub outcome: Kind,
    #[serde(default)]
    pub entries: usize,
    #[serde(default)]
    pub reason: String,
    /// The vault root the run used; `None` when none could be resolved.
    #[serde(default)]
    pub vault: Option<String>,
    /// The kinds of credential masked in what the run stored (spec/secrets.md); never the
    /// secrets themselves.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub masked: Vec<String>,
}

impl Run {
    /// The record of a run that ended at `time` with `outcome`.
    pub(crate) fn new(
        time: Instant,
        client: Option<&str>,
        session: Option<&str>,
        outcome: &Outcome,
        vault: Option<&Vault>,
    ) -> Run {
        Run {
            time: time.iso(),
            client: client.map(str::to_string),
            session: session.map(|s| cut(s, MAX_SESSION)),
            outcome: outcome.kind(),
            entries: outcome.entries(),
            reason: cut(&outcome.reason(), MAX_REASON),
            vault: vault.map(|v| v.root.display().to_string()),
            masked: vec![],
        }
    }

    /// The run as one log line, newline included.
    pub(crate) fn line(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec(self).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }
}

/// `s` on one line, at most `max` characters; a longer one is cut after its last whole word
/// that fits (within the last fifth) and ends with `…`, so a reason never stops mid-word.
fn cut(s: &str, max: usize) -> String {
    let line: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if line.chars().count() <= max {
        return line;
    }
    let kept: String = line.chars().take(max.saturating_sub(1)).collect();
    let at_word = kept
        .rfind(' ')
        .filter(|&i| kept[..i].chars().count() >= max * 4 / 5);
    let kept = at_word.map_or(kept.as_str(), |i| {
        kept[..i].trim_end_matches([' ', ';', ','])
    });
    format!("{kept}…")
}

/// The folder whose log a run goes to: the vault's state folder, or the shared one.
pub fn dir_for(vault: Option<&Vault>) -> Option<PathBuf> {
    match vault {
        Some(v) => Some(v.state_dir()),
        None => no_vault_dir(),
    }
}

/// `${XDG_STATE_HOME:-~/.local/state}/rutter/`, where runs that found no vault are logged.
pub(crate) fn no_vault_dir() -> Option<PathBuf> {
    crate::fsx::user_state_dir()
}

/// Logs `run` for `vault` (best effort: a failure is ignored, the hook goes on).
pub fn record(vault: Option<&Vault>, run: &Run) {
    if let Some(dir) = dir_for(vault) {
        let _ = append(&dir, run);
    }
}

/// Logs a capture whose command line could not be parsed (a hook registered with a wrong
/// flag or client): `malformed`, into the vault `--vault` or the configuration names.
pub fn record_bad_arguments(args: &[std::ffi::OsString], why: &str) {
    let words: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let value = |flag: &str| crate::argv::flag_value(&words, flag);
    let client = value("--client").filter(|c| super::CLIENTS.contains(&c.as_str()));
    let flag = value("--vault").map(PathBuf::from);
    let vault = vault::resolve(flag.as_deref(), false).ok();
    let outcome = Outcome::Malformed(format!("invalid arguments: {why}"));
    let run = Run::new(
        crate::clock::now(),
        client.as_deref(),
        None,
        &outcome,
        vault.as_ref(),
    );
    record(vault.as_ref(), &run);
}

/// Appends `run` to the log in `dir` with one write, rotating the file when it is full.
pub fn append(dir: &Path, run: &Run) -> Result<(), FsError> {
    append_line(dir, (LOG, OLDER_LOG), run.line())
}

/// Appends one JSON `line` to the log `names.0` in `dir` with one write, renaming it over
/// `names.1` once it reaches [`ROTATE_AT`] bytes (the session-start log is kept the same way).
pub(crate) fn append_line(
    dir: &Path,
    names: (&str, &str),
    mut line: Vec<u8>,
) -> Result<(), FsError> {
    let (log, older) = names;
    let d = Dir::open_private(dir)?;
    let mut f = d.open_append(log)?;
    if !f.ends_with_newline {
        // A torn line from a process that died mid-write must not swallow this one.
        line.insert(0, b'\n');
    }
    f.file.write_all(&line).map_err(|e| FsError::Io {
        path: f.path.clone(),
        source: e,
    })?;
    if f.len + line.len() as u64 >= ROTATE_AT {
        // Renaming never writes through a link: a symlinked name is replaced, not followed.
        let _ = rustix::fs::renameat(d.fd(), log, d.fd(), older);
    }
    Ok(())
}

/// Every run logged in `dir`, oldest first: the older file, then the current one. A missing or
/// symlinked file reads as empty.
pub fn read(dir: &Path) -> Vec<Run> {
    let Ok(d) = Dir::open(dir) else {
        return Vec::new();
    };
    let mut runs = Vec::new();
    for name in [OLDER_LOG, LOG] {
        if let Ok(Some(bytes)) = d.read(name) {
            runs.extend(parse(&bytes));
        }
    }
    runs
}

/// The runs in a log's bytes; lines that are not a run (torn, foreign, not UTF-8) are skipped.
pub fn parse(bytes: &[u8]) -> Vec<Run> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| l.first() == Some(&b'{'))
        .filter_map(|l| serde_json::from_slice::<Run>(l).ok())
        .collect()
}

/// The session id of a hook payload, read on its own (the capture pipeline reads the rest).
pub(crate) fn session_of(stdin: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Ids {
        session_id: Option<serde_json::Value>,
        #[serde(rename = "sessionId")]
        session_id_camel: Option<serde_json::Value>,
        /// agy's session.
        #[serde(rename = "conversationId")]
        conversation_id: Option<serde_json::Value>,
    }
    let ids: Ids = serde_json::from_slice(stdin).ok()?;
    [ids.session_id, ids.session_id_camel, ids.conversation_id]
        .into_iter()
        .flatten()
        .find_map(|v| v.as_str().filter(|s| !s.is_empty()).map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_reason_is_cut_after_a_whole_word_with_an_ellipsis() {
        assert_eq!(cut("short; fine", 300), "short; fine");
        let long = format!("{}once the remote is back", "word ".repeat(58));
        let c = cut(&long, 300);
        let kept = c.strip_suffix('…').unwrap();
        assert!(
            long.starts_with(kept) && long[kept.len()..].starts_with(' '),
            "{c}"
        );
        assert!(c.chars().count() <= 300);
        // One word longer than the bound is cut inside it, still marked.
        let c = cut(&"x".repeat(400), 300);
        assert_eq!((c.chars().count(), c.ends_with('…')), (300, true));
        assert_eq!(cut("a\nb", 300), "a b");
    }
    use proptest::prelude::*;

    fn run(i: usize) -> Run {
        Run::new(
            Instant(1_764_576_000_000 + i as i64),
            Some("claude"),
            Some("s1"),
            &Outcome::Captured {
                entries: 1,
                day: "2026-12-01".into(),
                pending: false,
            },
            None,
        )
    }

    #[test]
    fn appends_one_line_per_run_and_reads_them_back() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("state");
        append(&dir, &run(0)).unwrap();
        append(&dir, &run(1)).unwrap();
        let runs = read(&dir);
        assert_eq!(runs, vec![run(0), run(1)]);
        assert_eq!(runs[0].reason, "captured 1 entry into 2026-12-01");
        let text = std::fs::read_to_string(dir.join(LOG)).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.contains(r#""outcome":"captured""#), "{text}");
    }

    #[test]
    fn the_log_is_bounded_by_rotation() {
        let t = tempfile::tempdir().unwrap();
        let n = (2 * ROTATE_AT as usize) / run(0).line().len() + 10;
        for i in 0..n {
            append(t.path(), &run(i)).unwrap();
        }
        let size = |name| std::fs::metadata(t.path().join(name)).map_or(0, |m| m.len());
        assert!(size(LOG) < ROTATE_AT && size(OLDER_LOG) <= ROTATE_AT + 1024);
        let runs = read(t.path());
        assert!(runs.len() > 200, "{}", runs.len());
        assert_eq!(runs.last(), Some(&run(n - 1)), "the newest run is kept");
        let times: Vec<&str> = runs.iter().map(|r| r.time.as_str()).collect();
        assert!(times.windows(2).all(|w| w[0] < w[1]), "oldest first");
    }

    #[test]
    fn a_torn_line_does_not_swallow_the_next_run() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(
            t.path().join(LOG),
            br#"{"time":"2026-12-01T00:00:00.000Z","outc"#,
        )
        .unwrap();
        append(t.path(), &run(0)).unwrap();
        assert_eq!(read(t.path()), vec![run(0)]);
    }

    #[test]
    fn a_symlinked_log_is_never_written_through() {
        let t = tempfile::tempdir().unwrap();
        let target = t.path().join("precious");
        std::fs::write(&target, "keep\n").unwrap();
        std::os::unix::fs::symlink(&target, t.path().join(LOG)).unwrap();
        assert!(append(t.path(), &run(0)).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
        assert!(read(t.path()).is_empty());
    }

    #[test]
    fn outcomes_log_their_kind_count_and_reason() {
        let cases = [
            (Outcome::Deduped, "deduped", 0),
            (Outcome::NoDirective, "no-directive", 0),
            (Outcome::Empty, "empty", 0),
            (
                Outcome::Malformed("stdin is not JSON".into()),
                "malformed",
                0,
            ),
            (
                Outcome::NoVault("no vault configured".into()),
                "no-vault",
                0,
            ),
            (Outcome::Error("disk full".into()), "error", 0),
            (
                Outcome::Captured {
                    entries: 3,
                    day: "2026-12-01".into(),
                    pending: true,
                },
                "captured",
                3,
            ),
        ];
        for (outcome, kind, entries) in cases {
            let r = Run::new(Instant(0), None, None, &outcome, None);
            let json: serde_json::Value = serde_json::from_slice(&r.line()).unwrap();
            assert_eq!(json["outcome"], kind);
            assert_eq!(json["entries"], entries);
            assert_eq!(
                r.outcome.failed(),
                matches!(kind, "malformed" | "no-vault" | "error")
            );
        }
        let unknown = parse(br#"{"time":"t","outcome":"opted-out"}"#);
        assert_eq!(unknown[0].outcome, Kind::Other);
    }

    #[test]
    fn session_ids_come_from_either_spelling() {
        assert_eq!(session_of(br#"{"session_id":"a"}"#).as_deref(), Some("a"));
        assert_eq!(session_of(br#"{"sessionId":"b"}"#).as_deref(), Some("b"));
        assert_eq!(session_of(br#"{"session_id":""}"#), None);
        assert_eq!(session_of(br#"{"session_id":7}"#), None);
        assert_eq!(session_of(b"not json"), None);
    }

    fn any_run() -> impl Strategy<Value = Run> {
        (
            any::<i64>(),
            proptest::option::of("\\PC{0,20}"),
            proptest::option::of(any::<String>()),
            any::<String>(),
            proptest::option::of(any::<String>()),
            0usize..5,
        )
            .prop_map(|(ms, client, session, why, vault, n)| {
                let outcome = match n {
                    0 => Outcome::Error(why),
                    1 => Outcome::Malformed(why),
                    2 => Outcome::NoVault(why),
                    3 => Outcome::Deduped,
                    _ => Outcome::Captured {
                        entries: 2,
                        day: why,
                        pending: false,
                    },
                };
                let mut r = Run::new(
                    Instant(ms % 10_000_000_000_000),
                    client.as_deref(),
                    session.as_deref(),
                    &outcome,
                    None,
                );
                r.vault = vault;
                r
            })
    }

    proptest! {
        #[test]
        fn the_reader_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = parse(&bytes);
            let _ = session_of(&bytes);
        }

        #[test]
        fn every_run_is_one_line_and_reads_back(runs in proptest::collection::vec(any_run(), 0..6)) {
            let mut bytes = Vec::new();
            for r in &runs {
                let line = r.line();
                prop_assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
                bytes.extend(line);
            }
            prop_assert_eq!(parse(&bytes), runs);
        }

        #[test]
        fn garbage_around_a_run_is_skipped(run in any_run(), before in proptest::collection::vec(any::<u8>(), 0..80), after in proptest::collection::vec(any::<u8>(), 0..80)) {
            let mut bytes = before;
            bytes.push(b'\n');
            bytes.extend(run.line());
            bytes.extend(after);
            prop_assert!(parse(&bytes).contains(&run));
        }
    }
}
