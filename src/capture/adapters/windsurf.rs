//! Windsurf: Cascade's `post_cascade_response` hook carries the common fields
//! (`agent_action_name`, `trajectory_id` for the conversation, `execution_id` for the turn,
//! `timestamp`) and `tool_info.response`: the markdown of Cascade's response since the user's
//! last prompt, planner responses and the steps it took
//! (docs.windsurf.com/windsurf/cascade/hooks). The payload names no directory: a hook runs in
//! the workspace root unless configured otherwise, so the hook process's own directory is the
//! session's.

use super::{nonempty, other_event, Source, Stop};
use serde::Deserialize;
use serde_json::Value;

/// The post_cascade_response payload's fields that capture uses.
#[derive(Debug, Deserialize)]
struct WireResponse {
    agent_action_name: Option<String>,
    trajectory_id: Option<String>,
    #[serde(default)]
    tool_info: WireToolInfo,
}

#[derive(Debug, Default, Deserialize)]
struct WireToolInfo {
    response: Option<String>,
}

/// Decodes a Windsurf post_cascade_response payload.
pub(crate) fn decode(value: Value) -> Result<Option<Stop>, serde_json::Error> {
    let w: WireResponse = serde_json::from_value(value)?;
    if other_event(w.agent_action_name.as_deref(), &["post_cascade_response"]) {
        return Ok(None);
    }
    let cwd = std::env::current_dir()
        .ok()
        .map(|d| d.to_string_lossy().into_owned());
    Ok(Some(Stop {
        session_id: nonempty(w.trajectory_id),
        cwd,
        source: Source::FinalMessage(w.tool_info.response),
    }))
}

#[cfg(test)]
mod tests {
    use super::super::{decode as decode_stdin, PayloadError};
    use super::*;

    const STOP: &str = include_str!("../../../tests/fixtures/clients/windsurf/stop.json");

    fn windsurf(text: &str) -> Result<Option<Stop>, PayloadError> {
        decode_stdin(Some("windsurf"), text.as_bytes())
    }

    #[test]
    fn the_fixtures() {
        let stop = windsurf(STOP).unwrap().unwrap();
        assert_eq!(
            stop.session_id.as_deref(),
            Some("b3e1c5d7-9f20-4a86-b4c2-6d8e0f1a2b3c")
        );
        assert!(stop.cwd.is_some());
        let Source::FinalMessage(Some(text)) = stop.source else {
            panic!("no response");
        };
        assert_eq!(super::super::directives_in(&text).found.len(), 2);
        assert_eq!(
            windsurf(r#"{"agent_action_name":"pre_user_prompt","tool_info":{"user_prompt":"x"}}"#),
            Ok(None)
        );
    }
}
