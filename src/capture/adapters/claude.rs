//! Claude Code: the Stop payload names the session's JSONL transcript (`transcript_path`), and
//! recent versions also carry the turn's final message (`last_assistant_message`), which the
//! transcript may not hold yet when the hook runs (spec/capture.md, "The current turn").
//! A `SubagentStop` (a subagent's end, with `agent_transcript_path`) is not the main agent's turn.

use super::{nonempty, other_event, Source, Stop};
use serde::Deserialize;
use serde_json::Value;

/// The Stop payload (<https://code.claude.com/docs/en/hooks>, "Stop input").
#[derive(Debug, Deserialize)]
struct WireStop {
    session_id: Option<String>,
    transcript_path: Option<String>,
    cwd: Option<String>,
    hook_event_name: Option<String>,
    last_assistant_message: Option<String>,
}

/// Decodes a Claude Code Stop payload.
pub(crate) fn decode(value: Value) -> Result<Option<Stop>, serde_json::Error> {
    let w: WireStop = serde_json::from_value(value)?;
    if other_event(w.hook_event_name.as_deref(), &["Stop"]) {
        return Ok(None);
    }
    let source = match nonempty(w.transcript_path) {
        Some(path) => Source::ClaudeTranscript {
            path: path.into(),
            final_message: w.last_assistant_message,
        },
        None => Source::FinalMessage(w.last_assistant_message),
    };
    Ok(Some(Stop {
        session_id: nonempty(w.session_id),
        cwd: w.cwd,
        source,
    }))
}

#[cfg(test)]
mod tests {
    use super::super::{decode as decode_stdin, PayloadError};
    use super::*;

    const STOP: &str = include_str!("../../../tests/fixtures/clients/claude/stop.json");
    const SUBAGENT: &str =
        include_str!("../../../tests/fixtures/clients/claude/subagent-stop.json");

    fn claude(text: &str) -> Result<Option<Stop>, PayloadError> {
        decode_stdin(Some("claude"), text.as_bytes())
    }

    #[test]
    fn the_fixtures() {
        let stop = claude(STOP).unwrap().unwrap();
        assert_eq!(
            stop.session_id.as_deref(),
            Some("8d6f1c0e-3b1a-4f8e-9a51-2c7d9e0b4a11")
        );
        assert_eq!(stop.cwd.as_deref(), Some("/home/dev/code/garden"));
        match stop.source {
            Source::ClaudeTranscript {
                path,
                final_message,
            } => {
                assert!(path.ends_with("8d6f1c0e-3b1a-4f8e-9a51-2c7d9e0b4a11.jsonl"));
                assert!(final_message.unwrap().contains("librarian-session"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(claude(SUBAGENT), Ok(None));
    }

    #[test]
    fn without_a_transcript_the_final_message_is_scanned() {
        let stop =
            claude(r#"{"session_id":"S","hook_event_name":"Stop","last_assistant_message":"m"}"#)
                .unwrap()
                .unwrap();
        assert_eq!(stop.source, Source::FinalMessage(Some("m".into())));
        let stop = claude(r#"{"session_id":"","transcript_path":"","cwd":"/w"}"#)
            .unwrap()
            .unwrap();
        assert_eq!(
            (stop.session_id, stop.source),
            (None, Source::FinalMessage(None))
        );
    }
}
