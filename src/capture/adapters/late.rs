//! Logs a client may still be writing when its Stop hook runs (Copilot CLI's `events.jsonl`,
//! agy's transcript): the current turn is read from the end of the file, and read again every
//! 100 ms until the message that ends the turn is there or the wait (3 s) is over, so the hook's
//! time stays bounded.

use crate::capture::transcript::{read_turn_by, TranscriptError, Turn};
use crate::capture::transcript_line::LineKind;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long the hook waits for the turn's final message to be written.
pub(crate) const WAIT: Duration = Duration::from_secs(3);
/// Environment variable that replaces [`WAIT`], in milliseconds, in debug builds only (tests);
/// release builds ignore it.
pub(crate) const WAIT_ENV: &str = "RUTTER_TURN_WAIT_MS";
/// The pause between two reads.
const POLL: Duration = Duration::from_millis(100);

/// [`WAIT`], or `RUTTER_TURN_WAIT_MS` in a debug build.
pub(crate) fn wait() -> Duration {
    let pinned = cfg!(debug_assertions)
        .then(|| std::env::var(WAIT_ENV).ok()?.parse().ok())
        .flatten();
    pinned.map_or(WAIT, Duration::from_millis)
}

/// What one line of such a log is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Line {
    /// The user's own prompt: the turn starts after it.
    Prompt,
    /// A message of the main agent, its text (possibly empty), and whether it ends the turn (it
    /// asks for no tool call).
    Agent {
        id: Option<String>,
        text: String,
        ends_turn: bool,
    },
    /// Anything else.
    Other,
}

/// The turn as read.
#[derive(Debug)]
pub(crate) struct Read {
    pub turn: Turn,
    /// The newest message of the turn ends it.
    pub complete: bool,
    /// How long the reads took, waiting included.
    pub waited: Duration,
}

/// Reads the current turn of `path`, waiting up to `wait` for it to be complete. A file that
/// does not exist yet is waited for too; any other error is returned at once.
pub(crate) fn read(
    path: &Path,
    budget: u64,
    wait: Duration,
    classify: fn(&[u8]) -> Line,
) -> Result<Read, TranscriptError> {
    let start = Instant::now();
    loop {
        let attempt = once(path, budget, classify);
        let again = match &attempt {
            Ok((_, complete)) => !complete,
            Err(TranscriptError::Read { source, .. }) => {
                source.kind() == std::io::ErrorKind::NotFound
            }
            Err(_) => false,
        };
        let waited = start.elapsed();
        if !again || waited >= wait {
            return attempt.map(|(turn, complete)| Read {
                turn,
                complete,
                waited,
            });
        }
        std::thread::sleep(POLL.min(wait - waited));
    }
}

/// One read of the turn, and whether its newest agent message ends it.
fn once(
    path: &Path,
    budget: u64,
    classify: fn(&[u8]) -> Line,
) -> Result<(Turn, bool), TranscriptError> {
    // Lines come newest first: the first agent message seen is the turn's last.
    let mut newest_ends_turn: Option<bool> = None;
    let (turn, _) = read_turn_by(path, budget, &mut |line| match classify(line) {
        Line::Prompt => LineKind::Prompt,
        Line::Agent {
            id,
            text,
            ends_turn,
        } => {
            newest_ends_turn.get_or_insert(ends_turn);
            if text.is_empty() {
                LineKind::Other
            } else {
                LineKind::AgentText {
                    message_id: id,
                    text,
                }
            }
        }
        Line::Other => LineKind::Other,
    })?;
    Ok((turn, newest_ends_turn == Some(true)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy log: `P` a prompt, `T:text` a message asking for a tool, `F:text` a final message.
    fn toy(line: &[u8]) -> Line {
        let line = String::from_utf8_lossy(line);
        match line.split_once(':') {
            _ if line == "P" => Line::Prompt,
            Some(("T", t)) => Line::Agent {
                id: None,
                text: t.into(),
                ends_turn: false,
            },
            Some(("F", t)) => Line::Agent {
                id: None,
                text: t.into(),
                ends_turn: true,
            },
            _ => Line::Other,
        }
    }

    fn read_now(text: &str) -> Read {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, text).unwrap();
        read(&path, 1 << 20, Duration::ZERO, toy).unwrap()
    }

    #[test]
    fn the_turn_after_the_last_prompt_and_whether_it_ended() {
        let r = read_now("F:old\nP\nT:one\nx\nF:two\n");
        assert_eq!(r.turn.messages, vec!["one".to_string(), "two".into()]);
        assert!(r.complete);
        let r = read_now("P\nT:one\n");
        assert_eq!(r.turn.messages, vec!["one".to_string()]);
        assert!(!r.complete);
        // A final message with no text ends the turn and adds nothing.
        let r = read_now("P\nT:one\nF:\nx\n");
        assert_eq!(r.turn.messages, vec!["one".to_string()]);
        assert!(r.complete);
        assert!(!read_now("F:old\nP\n").complete);
    }

    #[test]
    fn waits_for_the_final_message_and_no_longer_than_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        // Written late: the file does not exist yet, then the turn ends.
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(150));
                std::fs::write(&path, "P\nT:one\n").unwrap();
                std::thread::sleep(Duration::from_millis(150));
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .unwrap();
                std::io::Write::write_all(&mut f, b"F:two\n").unwrap();
            })
        };
        let r = read(&path, 1 << 20, Duration::from_secs(20), toy).unwrap();
        writer.join().unwrap();
        assert!(r.complete);
        assert_eq!(r.turn.messages, vec!["one".to_string(), "two".into()]);
        // Never complete: what is there, after the wait.
        let r = read(
            &path.with_file_name("other"),
            1 << 20,
            Duration::from_millis(250),
            toy,
        );
        assert!(matches!(r, Err(TranscriptError::Read { .. })), "{r:?}");
        std::fs::write(path.with_file_name("open"), "P\nT:one\n").unwrap();
        let r = read(
            &path.with_file_name("open"),
            1 << 20,
            Duration::from_millis(250),
            toy,
        )
        .unwrap();
        assert!(!r.complete);
        assert!(r.waited >= Duration::from_millis(250), "{:?}", r.waited);
        assert_eq!(r.turn.messages, vec!["one".to_string()]);
    }

    #[test]
    fn a_directory_is_an_error_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let start = Instant::now();
        let r = read(dir.path(), 1 << 20, Duration::from_secs(20), toy);
        assert!(matches!(r, Err(TranscriptError::NotAFile(_))), "{r:?}");
        assert!(start.elapsed() < Duration::from_secs(10));
    }
}
