//! OpenCode: there is no hook command; git-rutter's plugin (`clients/opencode-plugin.js`)
//! follows OpenCode's documented events (opencode.ai/docs/plugins; `message.updated`,
//! `message.part.updated`, `session.idle` or `session.status` idle in the SDK's types) and,
//! once a turn, when a session goes idle,
//! hands capture what it built: `hook_event_name` (`session.idle`), `session_id`, `cwd` (the
//! assistant message's `path.cwd`, else the plugin's directory) and `last_assistant_message`
//! (the text parts of the assistant's messages since the last prompt, in order). Subagent
//! sessions are left out by the plugin itself.

use super::{nonempty, other_event, Source, Stop};
use serde::Deserialize;
use serde_json::Value;

/// The payload the plugin writes.
#[derive(Debug, Deserialize)]
struct WireIdle {
    session_id: Option<String>,
    cwd: Option<String>,
    hook_event_name: Option<String>,
    last_assistant_message: Option<String>,
}

/// Decodes the OpenCode plugin's payload.
pub(crate) fn decode(value: Value) -> Result<Option<Stop>, serde_json::Error> {
    let w: WireIdle = serde_json::from_value(value)?;
    if other_event(w.hook_event_name.as_deref(), &["session.idle"]) {
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

    const STOP: &str = include_str!("../../../tests/fixtures/clients/opencode/stop.json");

    fn opencode(text: &str) -> Result<Option<Stop>, PayloadError> {
        decode_stdin(Some("opencode"), text.as_bytes())
    }

    #[test]
    fn the_fixtures() {
        let stop = opencode(STOP).unwrap().unwrap();
        assert_eq!(
            stop.session_id.as_deref(),
            Some("ses_7c1a2b3c4d5eFgHiJkLmNoPq")
        );
        assert_eq!(stop.cwd.as_deref(), Some("/home/dev/code/garden"));
        let Source::FinalMessage(Some(text)) = stop.source else {
            panic!("no text");
        };
        assert_eq!(super::super::directives_in(&text).found.len(), 2);
        assert_eq!(opencode(r#"{"hook_event_name":"session.error"}"#), Ok(None));
    }
}
