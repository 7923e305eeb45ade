//! Antigravity CLI (`agy`): the Stop payload (`conversationId`, `workspacePaths`,
//! `transcriptPath`, `fullyIdle`, `terminationReason`, …) carries no reply text, so the turn is
//! read from agy's transcript of the conversation,
//! `~/.gemini/antigravity-cli/brain/<conversation>/.system_generated/logs/transcript_full.jsonl`,
//! one step per line (`step_index`, `source`, `type`, `status`, `content`, `tool_calls`): the
//! turn starts after the last `USER_INPUT` from `USER_EXPLICIT`, and its text is the `content`
//! of the model's `PLANNER_RESPONSE` steps (tool output steps, thinking and tool arguments are
//! not). agy writes the transcript after the hook starts, sometimes seconds later, so it is read
//! until a response that asks for no tool ends the turn, for at most 3 s ([`super::late`]).
//!
//! The payload's `transcriptPath` may name the shortened `transcript.jsonl`; the full one beside
//! it is read when it exists. agy's hook payloads are not publicly documented: the shapes follow
//! payloads captured from agy 1.0.x by other integrations.

use super::late::Line;
use super::{nonempty, Source, Stop};
use memchr::memmem;
use serde::de::{Error as _, IgnoredAny};
use serde::Deserialize;
use serde_json::Value;
use std::path::PathBuf;

/// The transcript with every step whole.
const FULL: &str = "transcript_full.jsonl";
/// The shortened transcript agy writes beside it.
const SHORT: &str = "transcript.jsonl";

/// The Stop payload's fields that capture uses.
#[derive(Debug, Deserialize)]
struct WireStop {
    #[serde(rename = "conversationId")]
    conversation_id: Option<String>,
    #[serde(rename = "transcriptPath")]
    transcript_path: Option<String>,
    #[serde(rename = "workspacePaths")]
    workspace_paths: Option<Vec<String>>,
    /// Typed so that a payload of another shape is refused; the turn is read either way (with
    /// background tasks still running, a later Stop reads the rest, and dedupe keeps one entry
    /// per line).
    #[serde(rename = "fullyIdle")]
    #[allow(dead_code)]
    fully_idle: Option<bool>,
}

/// Decodes an agy Stop payload.
pub(crate) fn decode(value: Value) -> Result<Option<Stop>, serde_json::Error> {
    let w: WireStop = serde_json::from_value(value)?;
    let session_id = nonempty(w.conversation_id);
    let path = match nonempty(w.transcript_path) {
        Some(p) => full_transcript(PathBuf::from(p)),
        None => brain_path(session_id.as_deref())?,
    };
    Ok(Some(Stop {
        session_id,
        cwd: w.workspace_paths.and_then(|p| p.into_iter().next()),
        source: Source::AgyTranscript(path),
    }))
}

/// `transcript_full.jsonl` beside a `transcript.jsonl` when it exists, else the path as given.
fn full_transcript(path: PathBuf) -> PathBuf {
    if path.file_name().is_some_and(|n| n == SHORT) {
        let full = path.with_file_name(FULL);
        if full.is_file() {
            return full;
        }
    }
    path
}

/// The conversation's transcript under agy's data folder; the id must be one file name.
fn brain_path(conversation: Option<&str>) -> Result<PathBuf, serde_json::Error> {
    let id = conversation.ok_or_else(|| serde_json::Error::missing_field("conversationId"))?;
    if id == "." || id == ".." || id.contains(['/', '\\', '\0']) {
        return Err(serde_json::Error::custom(
            "the conversation id is not a file name",
        ));
    }
    Ok(
        crate::vault::expand_tilde("~/.gemini/antigravity-cli/brain")
            .join(id)
            .join(".system_generated/logs")
            .join(FULL),
    )
}

/// One step of the transcript, the fields that matter.
#[derive(Deserialize)]
struct WireStep {
    #[serde(rename = "type")]
    kind: Option<String>,
    source: Option<String>,
    content: Option<String>,
    tool_calls: Option<Vec<IgnoredAny>>,
}

/// What a line of agy's transcript is. Only lines naming one of the two step types that matter
/// are parsed: command output and file listings can be long.
pub(crate) fn classify(line: &[u8]) -> Line {
    let prompt = memmem::find(line, b"\"USER_INPUT\"").is_some();
    let response = memmem::find(line, b"\"PLANNER_RESPONSE\"").is_some();
    if !prompt && !response {
        return Line::Other;
    }
    let Ok(step) = serde_json::from_slice::<WireStep>(line) else {
        return Line::Other;
    };
    let source = step.source.as_deref();
    match step.kind.as_deref() {
        Some("USER_INPUT") if source.is_none_or(|s| s == "USER_EXPLICIT") => Line::Prompt,
        Some("PLANNER_RESPONSE") if source.is_none_or(|s| s == "MODEL") => Line::Agent {
            id: None,
            text: step.content.unwrap_or_default(),
            ends_turn: step.tool_calls.is_none_or(|t| t.is_empty()),
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

    const STOP: &str = include_str!("../../../tests/fixtures/clients/agy/stop.json");
    const TRANSCRIPT: &str =
        include_str!("../../../tests/fixtures/clients/agy/transcript_full.jsonl");

    fn agy(text: &str) -> Result<Option<Stop>, PayloadError> {
        decode_stdin(Some("agy"), text.as_bytes())
    }

    #[test]
    fn the_fixtures() {
        let stop = agy(STOP).unwrap().unwrap();
        let id = "ec33ebf9-0cba-4100-8142-c61503f6c587";
        assert_eq!(stop.session_id.as_deref(), Some(id));
        assert_eq!(stop.cwd.as_deref(), Some("/home/dev/code/garden"));
        assert_eq!(
            stop.source,
            Source::AgyTranscript(
                format!("/home/dev/.gemini/antigravity-cli/brain/{id}/.system_generated/logs/transcript.jsonl").into()
            )
        );
        let kinds: Vec<Line> = TRANSCRIPT.lines().map(|l| classify(l.as_bytes())).collect();
        assert_eq!(kinds.iter().filter(|k| **k == Line::Prompt).count(), 2);
        assert!(matches!(
            kinds.last(),
            Some(Line::Agent {
                ends_turn: true,
                ..
            })
        ));
    }

    #[test]
    fn the_full_transcript_is_preferred_and_the_path_can_be_derived() {
        let dir = tempfile::tempdir().unwrap();
        let short = dir.path().join(SHORT);
        assert_eq!(full_transcript(short.clone()), short);
        std::fs::write(dir.path().join(FULL), "").unwrap();
        assert_eq!(full_transcript(short), dir.path().join(FULL));
        let stop = agy(r#"{"conversationId":"c1","fullyIdle":true}"#)
            .unwrap()
            .unwrap();
        let Source::AgyTranscript(path) = stop.source else {
            panic!("{:?}", stop.source);
        };
        assert!(
            path.ends_with("brain/c1/.system_generated/logs/transcript_full.jsonl"),
            "{path:?}"
        );
        for bad in [r#"{"fullyIdle":true}"#, r#"{"conversationId":"a/b"}"#] {
            assert!(
                matches!(agy(bad), Err(PayloadError::Malformed { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn step_kinds() {
        let step = |v: Value| classify(v.to_string().as_bytes());
        assert_eq!(
            step(
                json!({"step_index": 0, "source": "USER_EXPLICIT", "type": "USER_INPUT", "status": "DONE", "content": "<USER_REQUEST>\nx\n</USER_REQUEST>"})
            ),
            Line::Prompt
        );
        assert_eq!(
            step(
                json!({"step_index": 4, "source": "MODEL", "type": "PLANNER_RESPONSE", "status": "DONE", "content": "Done."})
            ),
            Line::Agent {
                id: None,
                text: "Done.".into(),
                ends_turn: true
            }
        );
        assert_eq!(
            step(
                json!({"source": "MODEL", "type": "PLANNER_RESPONSE", "thinking": "hm", "tool_calls": [{"name": "list_dir", "args": {}}]})
            ),
            Line::Agent {
                id: None,
                text: String::new(),
                ends_turn: false
            }
        );
        for other in [
            json!({"source": "MODEL", "type": "RUN_COMMAND", "content": "PLANNER_RESPONSE"}),
            json!({"source": "SYSTEM", "type": "CONVERSATION_HISTORY"}),
            json!({"source": "SYSTEM", "type": "USER_INPUT", "content": "injected"}),
            json!({"type": "PLANNER_RESPONSE", "content": 3}),
        ] {
            assert_eq!(step(other.clone()), Line::Other, "{other}");
        }
    }

    proptest! {
        #[test]
        fn classify_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            let _ = classify(&bytes);
        }

        #[test]
        fn classify_never_panics_on_step_shaped_noise(parts in prop::collection::vec(prop::sample::select(vec![
            "{", "}", "[", "]", ":", ",", "\"type\"", "\"USER_INPUT\"", "\"PLANNER_RESPONSE\"",
            "\"source\"", "\"MODEL\"", "\"content\"", "\"tool_calls\"", "null", "1", "\"x\"",
        ]), 0..40)) {
            let _ = classify(parts.concat().as_bytes());
        }

        #[test]
        fn response_text_round_trips(t in any::<String>()) {
            let line = json!({"source": "MODEL", "type": "PLANNER_RESPONSE", "content": t});
            prop_assert_eq!(
                classify(line.to_string().as_bytes()),
                Line::Agent { id: None, text: t, ends_turn: true }
            );
        }
    }
}
