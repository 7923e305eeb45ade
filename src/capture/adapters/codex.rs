//! Codex: the Stop payload carries the turn's final message as `last_assistant_message` (null
//! when the turn ended without one), with `session_id`, `turn_id` and `cwd`; its
//! `transcript_path` is Codex's own rollout log, which is not read (openai/codex,
//! `codex-rs/hooks/schema/generated/stop.command.input.schema.json`). A `SubagentStop` is a
//! thread-spawned subagent's turn, not the main agent's.

use super::{nonempty, other_event, Source, Stop};
use serde::Deserialize;
use serde_json::Value;

/// The Stop payload's fields that capture uses.
#[derive(Debug, Deserialize)]
struct WireStop {
    session_id: Option<String>,
    cwd: Option<String>,
    hook_event_name: Option<String>,
    last_assistant_message: Option<String>,
}

/// Decodes a Codex Stop payload.
pub(crate) fn decode(value: Value) -> Result<Option<Stop>, serde_json::Error> {
    let w: WireStop = serde_json::from_value(value)?;
    if other_event(w.hook_event_name.as_deref(), &["Stop"]) {
        return Ok(None);
    }
    Ok(Some(Stop {
        session_id: nonempty(w.session_id),
        cwd: w.cwd,
        source: Source::FinalMessage(w.last_assistant_message),
    }))
}

#[cfg(test)]
mod tests {
    use super::super::{decode as decode_stdin, PayloadError};
    use super::*;

    const STOP: &str = include_str!("../../../tests/fixtures/clients/codex/stop.json");
    const NULL: &str = include_str!("../../../tests/fixtures/clients/codex/stop-null-message.json");
    const SUBAGENT: &str = include_str!("../../../tests/fixtures/clients/codex/subagent-stop.json");

    fn codex(text: &str) -> Result<Option<Stop>, PayloadError> {
        decode_stdin(Some("codex"), text.as_bytes())
    }

    #[test]
    fn the_fixtures() {
        let stop = codex(STOP).unwrap().unwrap();
        assert_eq!(
            stop.session_id.as_deref(),
            Some("019ad2f4-7c3e-7b21-9d0a-5e8f1c2b3a40")
        );
        assert_eq!(stop.cwd.as_deref(), Some("/home/dev/code/garden"));
        let Source::FinalMessage(Some(text)) = stop.source else {
            panic!("no final message");
        };
        assert_eq!(super::super::directives_in(&text).found.len(), 2);
        assert_eq!(
            codex(NULL).unwrap().unwrap().source,
            Source::FinalMessage(None)
        );
        assert_eq!(codex(SUBAGENT), Ok(None));
    }
}
