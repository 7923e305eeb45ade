//! Cursor: the `afterAgentResponse` hook fires when the agent has completed an assistant
//! message, with Cursor's common fields (`conversation_id`, `generation_id`, `model`,
//! `hook_event_name`, `cursor_version`, `workspace_roots`, `user_email`, `transcript_path`) and
//! the message's `text` (cursor.com/docs/hooks). The session is the conversation; the working
//! directory is the first workspace root (a user hook runs in `~/.cursor`, so the process's own
//! directory says nothing). Other events (Cursor's `stop` carries no text) are not a turn's end
//! for capture.

use super::{nonempty, other_event, Source, Stop};
use serde::Deserialize;
use serde_json::Value;

/// The afterAgentResponse payload's fields that capture uses.
#[derive(Debug, Deserialize)]
struct WireResponse {
    conversation_id: Option<String>,
    hook_event_name: Option<String>,
    workspace_roots: Option<Vec<String>>,
    text: Option<String>,
}

/// Decodes a Cursor afterAgentResponse payload.
pub(crate) fn decode(value: Value) -> Result<Option<Stop>, serde_json::Error> {
    let w: WireResponse = serde_json::from_value(value)?;
    if other_event(w.hook_event_name.as_deref(), &["afterAgentResponse"]) {
        return Ok(None);
    }
    Ok(Some(Stop {
        session_id: nonempty(w.conversation_id),
        cwd: w.workspace_roots.and_then(|r| r.into_iter().next()),
        source: Source::FinalMessage(w.text),
    }))
}

#[cfg(test)]
mod tests {
    use super::super::{decode as decode_stdin, PayloadError};
    use super::*;

    const STOP: &str = include_str!("../../../tests/fixtures/clients/cursor/stop.json");
    const BOM: &str = include_str!("../../../tests/fixtures/clients/cursor/stop-bom.json");

    fn cursor(text: &str) -> Result<Option<Stop>, PayloadError> {
        decode_stdin(Some("cursor"), text.as_bytes())
    }

    #[test]
    fn the_fixtures() {
        let stop = cursor(STOP).unwrap().unwrap();
        assert_eq!(
            stop.session_id.as_deref(),
            Some("c7a9e0f2-41d3-4b6a-9e58-2f0d1c3b4a65")
        );
        assert_eq!(stop.cwd.as_deref(), Some("/home/dev/code/garden"));
        let Source::FinalMessage(Some(text)) = stop.source.clone() else {
            panic!("no text");
        };
        assert_eq!(super::super::directives_in(&text).found.len(), 2);
        // Cursor on Windows starts its payload with a byte-order mark.
        assert_eq!(cursor(BOM).unwrap().unwrap(), stop);
        assert_eq!(
            cursor(r#"{"hook_event_name":"stop","status":"completed","loop_count":0}"#),
            Ok(None)
        );
    }
}
