//! Talking to a remote through the `git` CLI, so the user's credentials, credential helpers and
//! ssh configuration apply and no transport lives in this tool (DESIGN §5).
//!
//! `git` is run as [`crate::store::gitcli`] runs it (absolute path, `GIT_TERMINAL_PROMPT=0`,
//! stdin closed), so it never waits on a prompt. Nothing git prints
//! reaches the user before [`redact`] has taken credentials out of every URL in it.

use crate::objectid::ObjectId;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

/// Git config key: how long one git process of a sync (a fetch, a push) may run before it is
/// stopped (`5m`, `90s`; `off`: no bound).
pub(crate) const TIMEOUT_KEY: &str = "rutter.syncTimeout";
/// Without `rutter.syncTimeout`: long enough for a first push of years of records over a slow
/// line, short enough that a hung remote does not hold a sync for the afternoon.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// A transfer slower than this many bytes a second for [`LOW_SPEED_SECS`] is given up (git's
/// `http.lowSpeedLimit`/`http.lowSpeedTime`, unless the user set their own).
const LOW_SPEED_BYTES: &str = "1000";
const LOW_SPEED_SECS: &str = "60";

/// What bounds a sync's git processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Wall-clock bound of one git process (`None`: none).
    pub wall: Option<Duration>,
    /// Whether to pass git the low-speed limit (the user set none of their own).
    pub low_speed: bool,
}

/// The bounds `store`'s config sets: `rutter.syncTimeout` (else [`DEFAULT_TIMEOUT`]; a value
/// that is no interval counts as the default), and the low-speed limit unless the user set
/// `http.lowSpeedLimit` or `http.lowSpeedTime`.
pub fn bounds(store: &super::Store) -> Bounds {
    let wall = match store.config_string(TIMEOUT_KEY) {
        Some(raw) => crate::clock::parse_interval(&raw).unwrap_or(Some(DEFAULT_TIMEOUT)),
        None => Some(DEFAULT_TIMEOUT),
    };
    let own = ["http.lowSpeedLimit", "http.lowSpeedTime"]
        .iter()
        .any(|k| store.config_string(k).is_some());
    Bounds {
        wall,
        low_speed: !own,
    }
}

/// Runs a git command made by [`git`] within `bounds`; `Err(TimedOut)` when it ran too long.
fn run(
    cmd: Command,
    bounds: Bounds,
    what: &'static str,
    remote: &str,
) -> Result<Output, TransportError> {
    match crate::store::gitcli::output_within(cmd, bounds.wall) {
        Ok(Some(out)) => Ok(out),
        Ok(None) => Err(TransportError::TimedOut {
            what,
            remote: remote.to_string(),
            after: bounds.wall.unwrap_or_default(),
        }),
        Err(e) => Err(TransportError::Spawn(e)),
    }
}

/// The refspec that brings every `refs/rutter/*` ref of `remote` to `refs/remotes/<remote>/rutter/*`.
pub(crate) fn fetch_refspec(remote: &str) -> String {
    format!("+refs/rutter/*:refs/remotes/{remote}/rutter/*")
}

/// Where a fetch leaves the remote's record ref.
pub(crate) fn tracking_ref(remote: &str) -> String {
    format!("refs/remotes/{remote}/rutter/records")
}

/// Why talking to the remote failed.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error("git was not found on PATH (sync talks to remotes through it)")]
    NoGit,
    #[error("could not run git: {0}")]
    Spawn(std::io::Error),
    #[error("could not fetch from {remote}: {message}")]
    Fetch { remote: String, message: String },
    /// A git process ran longer than `rutter.syncTimeout` and was stopped.
    #[error("the {what} of {remote} ran longer than {} and was stopped (rutter.syncTimeout); nothing is lost", crate::clock::show_interval(*after))]
    TimedOut {
        what: &'static str,
        remote: String,
        after: Duration,
    },
    /// git's own object checks (`fetch.fsckObjects`) refused what the remote sent.
    #[error("git's object checks refused what {remote} sent: {message}")]
    Unsound { remote: String, message: String },
}

impl crate::hint::Hinted for TransportError {
    fn hint(&self) -> Option<String> {
        match self {
            TransportError::NoGit => Some("Install git.".into()),
            TransportError::TimedOut { .. } => {
                Some("Check the connection and run `git rutter sync` again.".into())
            }
            TransportError::Fetch { remote, .. } => Some(format!(
                "Nothing here changed, and captures still commit on this machine; once `git fetch {remote}` works, sync again."
            )),
            _ => None,
        }
    }
}

/// How a push ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// The remote took the new tip (or already had it).
    Accepted,
    /// The remote's ref moved since the fetch (not a fast-forward any more): fetch and merge again.
    Behind(String),
    /// The remote refused for another reason (a hook, permissions, no connection).
    Refused(String),
}

/// `git -c core.filesRefLockTimeout=5000`: a fetch or push waits up to 5 s for another git
/// process's lock on a ref it updates (git's default is 100 ms). A sync killed mid-fetch leaves
/// its `git fetch` running on its own for a moment, and the next sync's fetch would otherwise
/// fail on that fetch's lock on the remote-tracking ref. A lock still there after this is git's
/// to name.
pub(crate) const GIT_REF_LOCK_WAIT: [&str; 2] = ["-c", "core.filesRefLockTimeout=5000"];

/// A `git -C <root>` command that never prompts and waits for a ref's lock ([`GIT_REF_LOCK_WAIT`]),
/// with the low-speed limit when `bounds` asks.
fn git(root: &Path, bounds: Bounds) -> Result<Command, TransportError> {
    let mut cmd = crate::store::gitcli::git_in(root).ok_or(TransportError::NoGit)?;
    cmd.args(GIT_REF_LOCK_WAIT);
    if bounds.low_speed {
        cmd.args(["-c", &format!("http.lowSpeedLimit={LOW_SPEED_BYTES}")])
            .args(["-c", &format!("http.lowSpeedTime={LOW_SPEED_SECS}")]);
    }
    Ok(cmd)
}

/// `git -c fetch.fsckObjects=true`: every object a fetch of records receives is checked by git
/// itself (a `..` or `.git` name, a malformed tree or commit) before it is stored.
pub(crate) const FSCK_OBJECTS: [&str; 2] = ["-c", "fetch.fsckObjects=true"];

/// Whether git's stderr says its object checks refused what a fetch received.
pub fn fsck_refused(stderr: &[u8]) -> bool {
    String::from_utf8_lossy(stderr).contains("fsck error")
}

/// Fetches every `refs/rutter/*` ref of `remote` into `refs/remotes/<remote>/rutter/*`, pruning
/// tracking refs the remote no longer has, with git's object checks on. A remote without
/// records is not an error.
pub fn fetch(root: &Path, remote: &str, bounds: Bounds) -> Result<(), TransportError> {
    let mut cmd = git(root, bounds)?;
    cmd.args(FSCK_OBJECTS)
        .args([
            "fetch",
            "--no-tags",
            "--prune",
            "--quiet",
            "--no-write-fetch-head",
            remote,
        ])
        .arg(fetch_refspec(remote));
    let out = run(cmd, bounds, "fetch", remote)?;
    if out.status.success() {
        return Ok(());
    }
    // A name as the messages show it (a config file may hold any character in one).
    let remote = crate::records::text::one_line_safe(remote);
    Err(if fsck_refused(&out.stderr) {
        let message = fsck_gist(&out.stderr);
        TransportError::Unsound { remote, message }
    } else {
        let message = gist(&out.stderr);
        TransportError::Fetch { remote, message }
    })
}

/// Pushes `tip` to `refs/rutter/records` on `remote`, never forcing.
pub fn push(
    root: &Path,
    remote: &str,
    tip: ObjectId,
    lease: Option<ObjectId>,
    bounds: Bounds,
) -> Result<Pushed, TransportError> {
    let mut cmd = git(root, bounds)?;
    cmd.args(["push", "--porcelain", "--quiet"]);
    // A purge replaces the remote's history: only over the tip this sync saw there
    // (spec/purge.md, "Across machines"); a remote that moved meanwhile refuses it.
    if let Some(seen) = lease {
        cmd.arg(format!("--force-with-lease={}:{seen}", super::RECORDS_REF));
    }
    cmd.arg(remote).arg(format!("{tip}:{}", super::RECORDS_REF));
    let out = run(cmd, bounds, "push", remote)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let status = stdout
        .lines()
        .find(|l| l.contains(super::RECORDS_REF))
        .map(str::to_string);
    if out.status.success() {
        return Ok(Pushed::Accepted);
    }
    let why = match (&status, gist(&out.stderr)) {
        (Some(s), e) if e.is_empty() => shown(s.rsplit('\t').next().unwrap_or(s)),
        (Some(s), e) => format!("{}; {e}", shown(s.rsplit('\t').next().unwrap_or(s))),
        (None, e) => e,
    };
    // `[rejected]` is git's own refusal of a push that is not a fast-forward; a hook or the
    // server says `[remote rejected]`.
    let behind = status.as_deref().is_some_and(|s| {
        (s.contains("[rejected]") && !s.contains("[remote rejected]")) || s.contains("stale info")
    });
    Ok(if behind {
        Pushed::Behind(why)
    } else {
        Pushed::Refused(why)
    })
}

/// Whether a line of git's stderr continues the one before: it starts in lower case and is not
/// a message of its own (`fatal: …`, `error: …`, `remote: …`).
fn continues(line: &str) -> bool {
    let word = line.split_whitespace().next().unwrap_or("");
    line.starts_with(|c: char| c.is_lowercase()) && !word.ends_with(':')
}

/// What git's object checks said of a refused fetch: its `error: object …` lines (else the
/// whole gist), redacted.
pub fn fsck_gist(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("error: "))
        .filter(|l| l.starts_with("object "))
        .collect();
    match lines.is_empty() {
        true => gist(stderr),
        false => shown(&lines.join("; ")),
    }
}

/// git's stderr as one line for a message ([`shown`]): `hint:` lines dropped. Each of git's
/// messages is one part (`a; b`, without a period before the `;`); a line that [`continues`]
/// is the rest of a sentence git wrapped ("…access rights" / "and the repository exists.").
pub fn gist(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let mut parts: Vec<String> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with("hint:") {
            continue;
        }
        match parts.last_mut() {
            Some(last) if continues(line) => {
                last.push(' ');
                last.push_str(line);
            }
            _ => parts.push(line.to_string()),
        }
    }
    let last = parts.len().saturating_sub(1);
    let parts: Vec<&str> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| match i < last {
            true => p.strip_suffix('.').unwrap_or(p),
            false => p,
        })
        .collect();
    shown(&parts.join("; "))
}

/// Text git printed, as our messages quote it: on one line, every control or bidi character
/// shown as `\u{XXXX}` text (the remote's side writes some of it: `remote: …` lines, the reason
/// of a refused push, whatever the installed git lets through), and redacted.
fn shown(text: &str) -> String {
    redact(&crate::records::text::one_line_safe(text))
}

/// `text` with the query and fragment (where tokens travel) of every URL taken out: from the
/// first `?` or `#` after a `//` to the end of that URL (whitespace or a quote), so a URL nested
/// in a query goes with it.
fn strip_queries(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("//") {
        let (head, tail) = rest.split_at(at);
        out.push_str(head);
        let end = tail
            .find(|c: char| matches!(c, '\'' | '"' | '<' | '>') || c.is_whitespace())
            .unwrap_or(tail.len());
        let url = &tail[..end];
        out.push_str(&url[..url.find(['?', '#']).unwrap_or(url.len())]);
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// `text` with the user information (`user:password@`), the query and the fragment taken out
/// of every URL in it, and control characters shown as spaces. An scp-like `user@host:path` is left alone: it holds no
/// secret.
pub(crate) fn redact(text: &str) -> String {
    let text = strip_queries(text);
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    // Every `//` starts an authority (not only `://`), so a URL nested in another's path, or
    // after a scheme git did not print, is redacted too.
    while let Some(at) = rest.find("//") {
        let (head, tail) = rest.split_at(at + 2);
        out.push_str(head);
        // The authority ends at the first `/`, `?`, `#`, whitespace or quote; user information
        // is everything up to its last `@`.
        let end = tail
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '\'' | '"' | '<' | '>') || c.is_whitespace()
            })
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(i) => out.push_str(&authority[i + 1..]),
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn gits_messages_are_parts_and_its_wrapped_sentence_is_one() {
        // git 2.x's stderr for a remote path that is not a repository, verbatim.
        let stderr = b"fatal: '/tmp/r.git' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n";
        assert_eq!(
            gist(stderr),
            "fatal: '/tmp/r.git' does not appear to be a git repository; fatal: Could not read from remote repository; Please make sure you have the correct access rights and the repository exists."
        );
        assert_eq!(
            gist(b"hint: try this\nerror: failed to push\n"),
            "error: failed to push"
        );
        assert_eq!(gist(b""), "");
        // A hostile remote's sideband text, as an older git passes it on: no escape survives.
        let hostile =
            gist(b"remote: \x1b]0;pwned\x07\x1b[2Jdeclined \xe2\x80\xae txt\nerror: failed\n");
        assert!(
            !hostile.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{hostile:?}"
        );
        assert!(
            hostile.starts_with("remote: \\u{001B}]0;pwned"),
            "{hostile}"
        );
    }

    #[test]
    fn credentials_are_taken_out_of_urls() {
        assert_eq!(
            redact("fatal: unable to access 'https://me:s3cret@example.com/notes.git/': 403"),
            "fatal: unable to access 'https://example.com/notes.git/': 403"
        );
        assert_eq!(redact("https://tok@host"), "https://host");
        assert_eq!(
            redact("ssh://git@host:22/x and http://a:b@c/"),
            "ssh://host:22/x and http://c/"
        );
        assert_eq!(
            redact("git@github.com:me/notes.git"),
            "git@github.com:me/notes.git"
        );
        assert_eq!(redact("https://u:p@w@host/x"), "https://host/x");
        assert_eq!(redact("no url\there"), "no url here");
        assert_eq!(
            redact("fatal: 'https://me:pw@host/x.git/?next=http://evil.example/&token=SECRET4/' not found"),
            "fatal: 'https://host/x.git/' not found"
        );
        assert_eq!(
            redact("https://host/x#frag and more"),
            "https://host/x and more"
        );
        assert_eq!(redact("ssh://host/x?y=1"), "ssh://host/x");
    }

    proptest! {
        /// Whatever surrounds it, a password in a URL never survives.
        #[test]
        fn a_password_never_survives(
            before in "[ -~]{0,20}",
            user in "[a-z]{1,8}",
            after in "(/[ -~]{0,20})?",
            host in "[a-z]{1,8}(\\.[a-z]{2,3})?(:[0-9]{1,4})?",
        ) {
            let secret = "S3CRET-PW";
            let text = format!("{before}https://{user}:{secret}@{host}{after}");
            prop_assert!(!redact(&text).contains(secret), "{}", redact(&text));
            // A query or fragment of the same URL (no quote or space between it and the host).
            let path: String = after
                .chars()
                .filter(|c| !matches!(c, '\'' | '"' | '<' | '>') && !c.is_whitespace())
                .collect();
            let query = format!("{before}https://{host}{path}?token={secret}#{secret}");
            prop_assert!(!redact(&query).contains(secret), "{}", redact(&query));
        }

        /// Any text is redacted without panicking, and text without `//` only loses controls.
        #[test]
        fn any_text_is_safe(text in any::<String>()) {
            let out = redact(&text);
            if !text.contains("//") {
                prop_assert_eq!(out.chars().count(), text.chars().count());
            }
        }
    }
}
