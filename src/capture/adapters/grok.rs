//! Grok Build: the hook gets the event as JSON with camel-case common fields (`hookEventName`,
//! `sessionId`, `cwd`, `workspaceRoot`; docs.x.ai, "Hooks", "The script contract"), and at
//! `Stop` the turn's final assistant message, which Grok cuts at 32,768 characters (the
//! reference's measurement). Grok also reads Claude Code's hook files, so the snake-case
//! spellings are accepted too. Grok fires lifecycle events for subagent sessions with the
//! subagent's type attached (`subagentType`, `agentType`): those are not the main agent's turn.
//!
//! Assumed where the documentation is silent: the final message's field is
//! `lastAssistantMessage` (or `last_assistant_message`); Grok's own session log
//! (`sessions/<cwd>/<id>/updates.jsonl`) is not read.

use super::{either, other_event, Source, Stop};
use serde::Deserialize;
use serde_json::Value;

/// The Stop event's fields that capture uses, in both spellings.
#[derive(Debug, Deserialize)]
struct WireStop {
    #[serde(rename = "hookEventName")]
    hook_event_name_camel: Option<String>,
    hook_event_name: Option<String>,
    #[serde(rename = "sessionId")]
    session_id_camel: Option<String>,
    session_id: Option<String>,
    cwd: Option<String>,
    #[serde(rename = "workspaceRoot")]
    workspace_root: Option<String>,
    #[serde(rename = "lastAssistantMessage")]
    last_assistant_message_camel: Option<String>,
    last_assistant_message: Option<String>,
    #[serde(rename = "subagentType")]
    subagent_type: Option<String>,
    #[serde(rename = "agentType")]
    agent_type: Option<String>,
}

/// Decodes a Grok Build Stop event.
pub(crate) fn decode(value: Value) -> Result<Option<Stop>, serde_json::Error> {
    let w: WireStop = serde_json::from_value(value)?;
    let event = either(w.hook_event_name_camel, w.hook_event_name);
    let subagent = either(w.subagent_type, w.agent_type).is_some();
    if subagent || other_event(event.as_deref(), &["Stop"]) {
        return Ok(None);
    }
    let message = w.last_assistant_message_camel.or(w.last_assistant_message);
    Ok(Some(Stop {
        session_id: either(w.session_id_camel, w.session_id),
        cwd: either(w.cwd, w.workspace_root),
        source: Source::FinalMessage(message),
    }))
}

#[cfg(test)]
mod tests {
    use super::super::{decode as decode_stdin, PayloadError};
    use super::*;

    const STOP: &str = include_str!("../../../tests/fixtures/clients/grok/stop.json");
    const SUBAGENT: &str = include_str!("../../../tests/fixtures/clients/grok/subagent-stop.json");

    fn grok(text: &str) -> Result<Option<Stop>, PayloadError> {
        decode_stdin(Some("grok"), text.as_bytes())
    }

    #[test]
    fn the_fixtures() {
        let stop = grok(STOP).unwrap().unwrap();
        assert_eq!(
            stop.session_id.as_deref(),
            Some("0198f3a2-5d6e-7c10-8b42-9e1f0a3c7d55")
        );
        assert_eq!(stop.cwd.as_deref(), Some("/home/dev/code/garden"));
        let Source::FinalMessage(Some(text)) = stop.source else {
            panic!("no final message");
        };
        assert_eq!(super::super::directives_in(&text).found.len(), 1);
        assert_eq!(grok(SUBAGENT), Ok(None));
    }

    #[test]
    fn both_spellings_and_the_workspace_root() {
        let stop = grok(r#"{"hook_event_name":"Stop","session_id":"s","workspaceRoot":"/r","last_assistant_message":"m"}"#)
            .unwrap()
            .unwrap();
        assert_eq!(
            (stop.session_id.as_deref(), stop.cwd.as_deref()),
            (Some("s"), Some("/r"))
        );
        assert_eq!(stop.source, Source::FinalMessage(Some("m".into())));
        // Both spellings at once are not a duplicate field.
        let stop = grok(r#"{"sessionId":"a","session_id":"b","lastAssistantMessage":"x","last_assistant_message":"y"}"#)
            .unwrap()
            .unwrap();
        assert_eq!(stop.session_id.as_deref(), Some("a"));
        assert_eq!(stop.source, Source::FinalMessage(Some("x".into())));
        assert_eq!(
            grok(r#"{"hookEventName":"StopFailure","sessionId":"a"}"#),
            Ok(None)
        );
        assert_eq!(
            grok(r#"{"hookEventName":"Stop","agentType":"explore"}"#),
            Ok(None)
        );
    }
}
