//! Copilot CLI: the `agentStop` payload (`timestamp`, `cwd`, `sessionId`, `transcriptPath`,
//! `stopReason`; or the VS Code-compatible `Stop` with snake-case fields) carries no reply text.
//! The turn is read from the session's event log,
//! `~/.copilot/session-state/<session>/events.jsonl` (`$COPILOT_HOME` moves it;
//! `transcriptPath` names it when given), where each line is `{type, data, id, timestamp,
//! parentId}`: the turn starts after the last `user.message`, and its text is the `content` of
//! the main agent's `assistant.message` events (a subagent's carry `parentToolCallId`). The log
//! may be written after the hook starts, so it is read until a message that asks for no tool
//! ends the turn, for at most 3 s ([`super::late`]).

use super::late::Line;
use super::{either, other_event, Source, Stop};
use memchr::memmem;
use serde::de::{Error as _, IgnoredAny};
use serde::Deserialize;
use serde_json::Value;
use std::path::PathBuf;

/// The stop payload's fields that capture uses, in both spellings.
#[derive(Debug, Deserialize)]
struct WireStop {
    #[serde(rename = "sessionId")]
    session_id_camel: Option<String>,
    session_id: Option<String>,
    #[serde(rename = "transcriptPath")]
    transcript_path_camel: Option<String>,
    transcript_path: Option<String>,
    cwd: Option<String>,
    #[serde(rename = "hookEventName")]
    hook_event_name_camel: Option<String>,
    hook_event_name: Option<String>,
}

/// Decodes a Copilot CLI `agentStop` (or `Stop`) payload.
pub(crate) fn decode(value: Value) -> Result<Option<Stop>, serde_json::Error> {
    let w: WireStop = serde_json::from_value(value)?;
    let event = either(w.hook_event_name_camel, w.hook_event_name);
    if other_event(event.as_deref(), &["agentStop", "Stop"]) {
        return Ok(None);
    }
    let session_id = either(w.session_id_camel, w.session_id);
    let path = match either(w.transcript_path_camel, w.transcript_path) {
        Some(p) => PathBuf::from(p),
        None => events_path(session_id.as_deref())?,
    };
    Ok(Some(Stop {
        session_id,
        cwd: w.cwd,
        source: Source::CopilotEvents(path),
    }))
}

/// `<copilot home>/session-state/<session>/events.jsonl`; the session id must be one file name.
fn events_path(session_id: Option<&str>) -> Result<PathBuf, serde_json::Error> {
    let id = session_id.ok_or_else(|| serde_json::Error::missing_field("sessionId"))?;
    if id == "." || id == ".." || id.contains(['/', '\\', '\0']) {
        return Err(serde_json::Error::custom(
            "the session id is not a file name",
        ));
    }
    Ok(home().join("session-state").join(id).join("events.jsonl"))
}

/// `$COPILOT_HOME`, else `~/.copilot`.
fn home() -> PathBuf {
    match std::env::var_os("COPILOT_HOME").filter(|v| !v.is_empty()) {
        Some(v) => PathBuf::from(v),
        None => crate::vault::expand_tilde("~/.copilot"),
    }
}

/// One event of `events.jsonl`, the fields that matter.
#[derive(Deserialize)]
struct WireEvent {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    data: WireData,
}

#[derive(Default, Deserialize)]
struct WireData {
    content: Option<String>,
    #[serde(rename = "messageId")]
    message_id: Option<String>,
    #[serde(rename = "toolRequests")]
    tool_requests: Option<Vec<IgnoredAny>>,
    #[serde(rename = "parentToolCallId")]
    parent_tool_call_id: Option<String>,
}

/// What a line of `events.jsonl` is. Only lines naming one of the two message events are
/// parsed: the system prompt and tool output lines can be long.
pub(crate) fn classify(line: &[u8]) -> Line {
    let user = memmem::find(line, b"\"user.message\"").is_some();
    let agent = memmem::find(line, b"\"assistant.message\"").is_some();
    if !user && !agent {
        return Line::Other;
    }
    let Ok(event) = serde_json::from_slice::<WireEvent>(line) else {
        return Line::Other;
    };
    let d = event.data;
    let main_agent = d.parent_tool_call_id.as_deref().is_none_or(str::is_empty);
    match event.kind.as_str() {
        "user.message" if main_agent => Line::Prompt,
        "assistant.message" if main_agent => Line::Agent {
            id: d.message_id.filter(|id| !id.is_empty()),
            text: d.content.unwrap_or_default(),
            ends_turn: d.tool_requests.is_none_or(|t| t.is_empty()),
        },
        _ => Line::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{decode as decode_stdin, PayloadError};
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    const STOP: &str = include_str!("../../../tests/fixtures/clients/copilot/stop.json");
    const VSCODE: &str = include_str!("../../../tests/fixtures/clients/copilot/stop-vscode.json");
    const EVENTS: &str = include_str!("../../../tests/fixtures/clients/copilot/events.jsonl");

    fn copilot(text: &str) -> Result<Option<Stop>, PayloadError> {
        decode_stdin(Some("copilot"), text.as_bytes())
    }

    #[test]
    fn the_fixtures() {
        let stop = copilot(STOP).unwrap().unwrap();
        let id = "6f1d2c3b-8a47-4e59-b0c2-7d9e1f3a5b68";
        assert_eq!(stop.session_id.as_deref(), Some(id));
        assert_eq!(stop.cwd.as_deref(), Some("/home/dev/code/garden"));
        assert_eq!(
            stop.source,
            Source::CopilotEvents(
                format!("/home/dev/.copilot/session-state/{id}/events.jsonl").into()
            )
        );
        let stop = copilot(VSCODE).unwrap().unwrap();
        assert_eq!(stop.session_id.as_deref(), Some(id));
        assert!(matches!(stop.source, Source::CopilotEvents(_)));
        assert_eq!(
            copilot(r#"{"hookEventName":"subagentStop","sessionId":"x"}"#),
            Ok(None)
        );
    }

    #[test]
    fn without_a_path_the_log_is_found_from_the_session() {
        let stop = copilot(r#"{"sessionId":"abc","cwd":"/w"}"#)
            .unwrap()
            .unwrap();
        let Source::CopilotEvents(path) = stop.source else {
            panic!("{:?}", stop.source);
        };
        assert!(path.ends_with("session-state/abc/events.jsonl"), "{path:?}");
        for bad in [
            r#"{"cwd":"/w"}"#,
            r#"{"sessionId":"../x"}"#,
            r#"{"sessionId":".."}"#,
        ] {
            assert!(
                matches!(copilot(bad), Err(PayloadError::Malformed { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_event_log_fixture() {
        let kinds: Vec<Line> = EVENTS.lines().map(|l| classify(l.as_bytes())).collect();
        let prompts = kinds.iter().filter(|k| **k == Line::Prompt).count();
        assert_eq!(prompts, 2);
        // The last line that ends the turn is the final message, with its text.
        let last = kinds
            .iter()
            .rev()
            .find(|k| matches!(k, Line::Agent { .. }))
            .unwrap();
        assert!(
            matches!(last, Line::Agent { ends_turn: true, text, .. } if text.contains("librarian-session"))
        );
    }

    #[test]
    fn event_kinds() {
        let ev = |v: Value| classify(v.to_string().as_bytes());
        let agent = |content: &str, tools: Value, parent: Option<&str>| {
            json!({"type": "assistant.message", "id": "e", "timestamp": "t", "parentId": null,
                   "data": {"messageId": "m1", "content": content, "toolRequests": tools,
                            "parentToolCallId": parent}})
        };
        assert_eq!(
            ev(json!({"type": "user.message", "data": {"content": "Plan it.", "attachments": []}})),
            Line::Prompt
        );
        assert_eq!(
            ev(agent("Done.", json!([]), None)),
            Line::Agent {
                id: Some("m1".into()),
                text: "Done.".into(),
                ends_turn: true
            }
        );
        assert_eq!(
            ev(agent(
                "",
                json!([{"toolCallId": "c", "name": "view", "arguments": {"path": "a"}}]),
                None
            )),
            Line::Agent {
                id: Some("m1".into()),
                text: String::new(),
                ends_turn: false
            }
        );
        // A subagent's message and prompt are not the main agent's.
        assert_eq!(ev(agent("Sub.", json!([]), Some("call_1"))), Line::Other);
        assert_eq!(
            ev(json!({"type": "user.message", "data": {"content": "x", "parentToolCallId": "c"}})),
            Line::Other
        );
        // Streaming deltas, reasoning, tool output and the system prompt are not text.
        for other in [
            json!({"type": "assistant.message_delta", "data": {"messageId": "m1", "deltaContent": "x"}}),
            json!({"type": "tool.execution_complete", "data": {"result": {"content": "\"assistant.message\""}}}),
            json!({"type": "system.message", "data": {"role": "system", "content": "You are"}}),
            json!({"type": "assistant.message", "data": {"content": 5}}),
            json!({"type": "session.idle", "data": {}}),
        ] {
            assert_eq!(ev(other.clone()), Line::Other, "{other}");
        }
        assert_eq!(
            classify(b"{\"type\":\"user.message\",\"data\":{\"content\":\"cut"),
            Line::Other
        );
    }

    proptest! {
        #[test]
        fn classify_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            let _ = classify(&bytes);
        }

        #[test]
        fn classify_never_panics_on_event_shaped_noise(parts in prop::collection::vec(prop::sample::select(vec![
            "{", "}", "[", "]", ":", ",", "\"type\"", "\"user.message\"", "\"assistant.message\"",
            "\"data\"", "\"content\"", "\"toolRequests\"", "\"parentToolCallId\"", "\"messageId\"",
            "null", "1", "\"x\"", "true",
        ]), 0..40)) {
            let _ = classify(parts.concat().as_bytes());
        }

        #[test]
        fn agent_text_round_trips(t in any::<String>()) {
            let line = json!({"type": "assistant.message", "data": {"messageId": "m", "content": t, "toolRequests": []}});
            prop_assert_eq!(
                classify(line.to_string().as_bytes()),
                Line::Agent { id: Some("m".into()), text: t, ends_turn: true }
            );
        }
    }
}
