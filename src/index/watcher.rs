//! Asking a running watcher whether the index is current, instead of a stat per note
//! (spec/index.md, "Freshness": "The watcher's answer").
//!
//! An MCP server that watches the vault (or `git rutter watch`, its watcher alone) listens on a
//! unix socket beside the index ([`socket_path`]: `<index>.watch`). A command that wants a fresh answer connects, sends one
//! line, and the server makes every change made before the request known (its cookie: inotify
//! reports one instance's events in the order they happened), rescans what they named, and
//! answers `current TOKEN HOW ROOT` only when its watcher is provably complete. The token is the
//! one the server keeps in the index's `meta` (`watch_token`): the command answers from the
//! watcher only when its own read of the index finds the same token, so it reads the very file
//! the server keeps current. Any other answer, no answer within [`WAIT`], no server, or a token
//! or root that differs, and the command runs the full check itself.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// The socket's name is the index's with this appended.
pub(crate) const SOCKET_SUFFIX: &str = ".watch";
/// The one request.
pub(crate) const REQUEST: &str = "sync";
/// The `meta` key holding the token of the server that keeps the index current.
pub(crate) const TOKEN_KEY: &str = "watch_token";
/// The `meta` key holding the token of the server that keeps the record cache's day files
/// current (its watcher hears the sessions folder too); the same token as [`TOKEN_KEY`]'s.
pub(crate) const RECORDS_TOKEN_KEY: &str = "watch_records_token";
/// The longest a command waits for the server's answer before checking itself.
pub(crate) const WAIT: Duration = Duration::from_millis(500);
/// The most read of an answer (one line naming a folder).
const ANSWER_MAX: u64 = 64 * 1024;
/// When set (to anything), each fresh read says on stderr which source answered.
pub(crate) const TRACE_ENV: &str = "RUTTER_FRESHNESS_TRACE";

/// The socket a watcher of the index at `index` listens on.
pub(crate) fn socket_path(index: &Path) -> PathBuf {
    let mut name = index.as_os_str().to_os_string();
    name.push(SOCKET_SUFFIX);
    PathBuf::from(name)
}

/// What the server said: its index is current, under `token`; `how` it got there (`events`,
/// or `full-check` when it had to stat everything: lost events, a folder moved, a rebuild).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Current {
    pub token: String,
    pub how: String,
}

/// Why the watcher did not answer; each means the full check.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NoAnswer {
    /// Nothing listens on the socket (no server, or one that died: the socket refuses).
    NoServer,
    /// The server did not answer in time, or the exchange failed.
    Silent(String),
    /// The server answered that it cannot vouch for its index, and why.
    Declined(String),
    /// The server watches another root.
    OtherRoot,
    /// The server's token is not the one this index holds: another file, or rebuilt since.
    OtherToken,
}

impl std::fmt::Display for NoAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoAnswer::NoServer => f.write_str("no watcher is running"),
            NoAnswer::Silent(why) => write!(f, "the watcher did not answer: {why}"),
            NoAnswer::Declined(why) => write!(f, "the watcher declined: {why}"),
            NoAnswer::OtherRoot => f.write_str("the watcher watches another folder"),
            NoAnswer::OtherToken => f.write_str("the watcher keeps another index"),
        }
    }
}

/// Asks the watcher of the index at `index` (serving the vault at `root`) to bring it up to
/// date; its token when it says it is current.
pub(crate) fn ask(index: &Path, root: &Path) -> Result<Current, NoAnswer> {
    let Ok(mut stream) = UnixStream::connect(socket_path(index)) else {
        note_unwatched(root);
        return Err(NoAnswer::NoServer);
    };
    let silent = |e: std::io::Error| NoAnswer::Silent(e.to_string());
    stream.set_read_timeout(Some(WAIT)).map_err(silent)?;
    stream.set_write_timeout(Some(WAIT)).map_err(silent)?;
    stream
        .write_all(format!("{REQUEST}\n").as_bytes())
        .map_err(silent)?;
    let mut line = String::new();
    BufReader::new(std::io::Read::take(stream, ANSWER_MAX))
        .read_line(&mut line)
        .map_err(silent)?;
    parse(&line, root)
}

/// The vault root this process last found no watcher for (nothing listened on the socket).
static UNWATCHED: Mutex<Option<PathBuf>> = Mutex::new(None);

fn note_unwatched(root: &Path) {
    *UNWATCHED.lock().unwrap_or_else(PoisonError::into_inner) = Some(root.to_path_buf());
}

/// The vault root a fresh read of this process found no watcher for, if one did: where
/// `rutter.watch` starts one (`git rutter watch`, spec/index.md). Taken once.
pub(crate) fn take_unwatched() -> Option<PathBuf> {
    UNWATCHED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
}

/// Reads the server's answer line.
fn parse(line: &str, root: &Path) -> Result<Current, NoAnswer> {
    let line = line
        .strip_suffix('\n')
        .ok_or_else(|| NoAnswer::Silent("the answer ended early".into()))?;
    if let Some(why) = line.strip_prefix("declined ") {
        return Err(NoAnswer::Declined(why.to_string()));
    }
    let mut parts = line.splitn(4, ' ');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some("current"), Some(token), Some(how), Some(theirs)) if !token.is_empty() => {
            if Path::new(theirs) != root {
                return Err(NoAnswer::OtherRoot);
            }
            Ok(Current {
                token: token.to_string(),
                how: how.to_string(),
            })
        }
        _ => Err(NoAnswer::Silent("an answer it does not know".into())),
    }
}

/// The server's answer line for an index that is current.
pub(crate) fn current_line(token: &str, how: &str, root: &Path) -> String {
    format!("current {token} {how} {}\n", root.display())
}

/// The server's answer line when it cannot vouch for its index.
pub(crate) fn declined_line(why: &str) -> String {
    format!("declined {}\n", why.replace('\n', " "))
}

/// Says on stderr which source answered a fresh read, when [`TRACE_ENV`] is set.
pub(crate) fn trace(source: &dyn std::fmt::Display) {
    if std::env::var_os(TRACE_ENV).is_some() {
        eprintln!("git-rutter: freshness: {source}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_strictly() {
        let root = Path::new("/v/with space");
        assert_eq!(
            parse(&current_line("t1", "events", root), root),
            Ok(Current {
                token: "t1".into(),
                how: "events".into()
            })
        );
        assert_eq!(
            parse(&current_line("t1", "events", Path::new("/w")), root),
            Err(NoAnswer::OtherRoot)
        );
        assert_eq!(
            parse(&declined_line("lost\nevents"), root),
            Err(NoAnswer::Declined("lost events".into()))
        );
        assert!(matches!(
            parse("current t1 events /v/with space", root),
            Err(NoAnswer::Silent(_))
        ));
        assert!(matches!(
            parse("current  events /v\n", Path::new("/v")),
            Err(NoAnswer::Silent(_))
        ));
        assert!(matches!(parse("yes\n", root), Err(NoAnswer::Silent(_))));
    }

    #[test]
    fn the_socket_sits_beside_the_index() {
        assert_eq!(
            socket_path(Path::new("/v/.git/rutter/index.sqlite")),
            Path::new("/v/.git/rutter/index.sqlite.watch")
        );
    }
}
