//! Muse Code: its hooks are configured as Claude Code's are (`hooks.Stop` groups in
//! `~/.config/muse/settings.json`), and its Stop payload hands over only the turn's final
//! assistant message. Muse's documentation is not public: the payload is taken to be Claude
//! Code's shape (`session_id`, `cwd`, `hook_event_name`, `last_assistant_message`), as the
//! reference's README describes it, with the camel-case spellings accepted too.

use super::{either, other_event, Source, Stop};
use serde::Deserialize;
use serde_json::Value;

/// The Stop payload's fields that capture uses, in both spellings.
#[derive(Debug, Deserialize)]
struct WireStop {
    session_id: Option<String>,
    #[serde(rename = "sessionId")]
    session_id_camel: Option<String>,
    cwd: Option<String>,
    hook_event_name: Option<String>,
    #[serde(rename = "hookEventName")]
    hook_event_name_camel: Option<String>,
    last_assistant_message: Option<String>,
    #[serde(rename = "lastAssistantMessage")]
    last_assistant_message_camel: Option<String>,
}

/// Decodes a Muse Code Stop payload.
pub(crate) fn decode(value: Value) -> Result<Option<Stop>, serde_json::Error> {
    let w: WireStop = serde_json::from_value(value)?;
    let event = either(w.hook_event_name, w.hook_event_name_camel);
    if other_event(event.as_deref(), &["Stop"]) {
        return Ok(None);
    }
    Ok(Some(Stop {
        session_id: either(w.session_id, w.session_id_camel),
        cwd: w.cwd,
        source: Source::FinalMessage(w.last_assistant_message.or(w.last_assistant_message_camel)),
    }))
}

#[cfg(test)]
mod tests {
    use super::super::{decode as decode_stdin, PayloadError};
    use super::*;

    const STOP: &str = include_str!("../../../tests/fixtures/clients/muse/stop.json");

    fn muse(text: &str) -> Result<Option<Stop>, PayloadError> {
        decode_stdin(Some("muse"), text.as_bytes())
    }

    #[test]
    fn the_fixtures() {
        let stop = muse(STOP).unwrap().unwrap();
        assert_eq!(
            stop.session_id.as_deref(),
            Some("muse-2f9c41d7-6b0e-4c8a-a1f3-58d2e7b90c64")
        );
        let Source::FinalMessage(Some(text)) = stop.source else {
            panic!("no final message");
        };
        assert_eq!(super::super::directives_in(&text).found.len(), 1);
        assert_eq!(muse(r#"{"hook_event_name":"SessionEnd"}"#), Ok(None));
        let stop = muse(r#"{"sessionId":"m","lastAssistantMessage":"x"}"#)
            .unwrap()
            .unwrap();
        assert_eq!(stop.session_id.as_deref(), Some("m"));
    }
}
