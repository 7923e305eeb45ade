//! Gemini CLI: the `AfterAgent` hook fires once per turn, after the model's final response, with
//! the common fields (`session_id`, `transcript_path`, `cwd`, `hook_event_name`, `timestamp`)
//! and the turn's `prompt` and `prompt_response`: the response text of the whole turn, which
//! Gemini accumulates across its tool calls (google-gemini/gemini-cli, docs/hooks/reference.md;
//! `fireAfterAgentHookSafe` in packages/core/src/core/client.ts). The transcript is not read.

use super::{nonempty, other_event, Source, Stop};
use serde::Deserialize;
use serde_json::Value;

/// The AfterAgent payload's fields that capture uses.
#[derive(Debug, Deserialize)]
struct WireAfterAgent {
    session_id: Option<String>,
    cwd: Option<String>,
    hook_event_name: Option<String>,
    prompt_response: Option<String>,
}

/// Decodes a Gemini CLI AfterAgent payload.
pub(crate) fn decode(value: Value) -> Result<Option<Stop>, serde_json::Error> {
    let w: WireAfterAgent = serde_json::from_value(value)?;
    if other_event(w.hook_event_name.as_deref(), &["AfterAgent"]) {
        return Ok(None);
    }
    Ok(Some(Stop {
        session_id: nonempty(w.session_id),
        cwd: w.cwd,
        source: Source::FinalMessage(w.prompt_response),
    }))
}

#[cfg(test)]
mod tests {
    use super::super::{decode as decode_stdin, PayloadError};
    use super::*;

    const STOP: &str = include_str!("../../../tests/fixtures/clients/gemini/stop.json");

    fn gemini(text: &str) -> Result<Option<Stop>, PayloadError> {
        decode_stdin(Some("gemini"), text.as_bytes())
    }

    #[test]
    fn the_fixtures() {
        let stop = gemini(STOP).unwrap().unwrap();
        assert_eq!(
            stop.session_id.as_deref(),
            Some("6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b")
        );
        assert_eq!(stop.cwd.as_deref(), Some("/home/dev/code/garden"));
        let Source::FinalMessage(Some(text)) = stop.source else {
            panic!("no response");
        };
        assert_eq!(super::super::directives_in(&text).found.len(), 2);
        assert_eq!(
            gemini(r#"{"hook_event_name":"SessionStart","session_id":"s"}"#),
            Ok(None)
        );
    }
}
