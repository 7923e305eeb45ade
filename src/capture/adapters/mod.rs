//! Client adapters: each AI client's Stop-hook payload decoded into its own `Wire*` struct (one
//! module per client) and reduced to what capture needs: the session, the working directory
//! and where the text of the turn is (spec/capture.md, "Clients").
//!
//! `--client NAME` picks the adapter; without it the payload is auto-detected as before
//! ([`super::payload`]). Well-formed input that is not the end of a main agent's turn (a
//! subagent's stop, another event) is `Ok(None)`; only malformed input is an error. A direct
//! `{"summary": …}` capture is taken as given whatever the client, so a hook command can be
//! checked by hand.

pub(crate) mod agy;
pub(crate) mod claude;
pub(crate) mod codex;
pub(crate) mod copilot;
pub(crate) mod cursor;
pub(crate) mod gemini;
pub(crate) mod grok;
mod late;
pub(crate) mod muse;
pub(crate) mod opencode;
pub(crate) mod windsurf;

use super::directive::{directive_from_value, directives_in, Directive, Directives};
use super::payload::{self, PayloadError};
use super::transcript::{self, scan_messages, DEFAULT_BUDGET};
use super::{Outcome, P};
use serde_json::Value;
use std::path::PathBuf;

/// One client: the label its entries record and the decoder of its Stop payload.
pub(crate) struct Adapter {
    pub label: &'static str,
    decode: fn(Value) -> Result<Option<Stop>, serde_json::Error>,
}

/// Every client with a Stop hook, in the order of [`super::CLIENTS`].
pub(crate) const ADAPTERS: [Adapter; 10] = [
    Adapter {
        label: "claude",
        decode: claude::decode,
    },
    Adapter {
        label: "codex",
        decode: codex::decode,
    },
    Adapter {
        label: "grok",
        decode: grok::decode,
    },
    Adapter {
        label: "copilot",
        decode: copilot::decode,
    },
    Adapter {
        label: "agy",
        decode: agy::decode,
    },
    Adapter {
        label: "muse",
        decode: muse::decode,
    },
    Adapter {
        label: "cursor",
        decode: cursor::decode,
    },
    Adapter {
        label: "gemini",
        decode: gemini::decode,
    },
    Adapter {
        label: "opencode",
        decode: opencode::decode,
    },
    Adapter {
        label: "windsurf",
        decode: windsurf::decode,
    },
];

/// The adapter of a client label.
pub(crate) fn adapter(label: &str) -> Option<&'static Adapter> {
    ADAPTERS.iter().find(|a| a.label == label)
}

/// What capture needs from one Stop payload.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stop {
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub source: Source,
}

/// Where the directives of the turn are.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Source {
    /// A direct capture: the payload is the directive.
    Direct(Directive),
    /// A Claude Code transcript, and the final message its Stop payload carries (which the
    /// transcript may not hold yet).
    ClaudeTranscript {
        path: PathBuf,
        final_message: Option<String>,
    },
    /// The text of the turn the payload hands over: the final assistant message (Codex, Grok,
    /// Muse Code, Cursor), the turn's response (Gemini CLI, Windsurf), or the assistant's text
    /// since the prompt (OpenCode's plugin); `None` when the payload had none (a turn that
    /// ended on a tool call).
    FinalMessage(Option<String>),
    /// Copilot CLI's `events.jsonl` for the session.
    CopilotEvents(PathBuf),
    /// agy's transcript of the conversation.
    AgyTranscript(PathBuf),
}

/// Decodes the hook's stdin for `client` (auto-detected when `None`).
pub(crate) fn decode(client: Option<&str>, stdin: &[u8]) -> Result<Option<Stop>, PayloadError> {
    // Cursor on Windows starts its payload with a byte-order mark, which JSON does not allow.
    let stdin = stdin.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(stdin);
    let Some(adapter) = client.and_then(adapter) else {
        return payload::decode(stdin).map(|p| Some(auto(p)));
    };
    let value: Value = serde_json::from_slice(stdin).map_err(|_| PayloadError::NotJson)?;
    let obj = value.as_object().ok_or(PayloadError::NotObject)?;
    if let Some(Value::String(_)) = obj.get("summary") {
        let directive = directive_from_value(&value).ok_or(PayloadError::BadRefs)?;
        let text = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
        return Ok(Some(Stop {
            session_id: nonempty(text("session_id")).or_else(|| nonempty(text("sessionId"))),
            cwd: text("cwd"),
            source: Source::Direct(directive),
        }));
    }
    (adapter.decode)(value).map_err(|e| PayloadError::Malformed {
        client: adapter.label,
        detail: match culprit(adapter, stdin) {
            Some(key) => format!("`{key}`: {}", safe_detail(&e)),
            None => safe_detail(&e),
        },
    })
}

/// At most this many top-level fields, in a payload of at most this many bytes, are tried one
/// by one ([`culprit`]): each try copies the object.
const CULPRIT_FIELDS: usize = 32;
const CULPRIT_BYTES: usize = 1 << 20;

/// The top-level field a payload that does not decode is wrong in: the one whose removal lets
/// it decode (a field of the wrong type; serde's message names the type, not the field). Run
/// only once decoding failed, on `stdin` parsed again: the decode took the parsed payload, so a
/// capture that decodes copies nothing for this.
fn culprit(adapter: &Adapter, stdin: &[u8]) -> Option<String> {
    // Each try copies the object: only a payload of a few fields is searched (a client's is).
    let value: Value = (stdin.len() <= CULPRIT_BYTES)
        .then(|| serde_json::from_slice(stdin).ok())
        .flatten()?;
    let obj = value.as_object().filter(|o| o.len() <= CULPRIT_FIELDS)?;
    let key = obj.keys().find(|k| {
        let mut without = obj.clone();
        without.remove(k.as_str());
        (adapter.decode)(Value::Object(without)).is_ok()
    })?;
    // A name a payload chose is shown only when it is a field's name, never a directive.
    let plain = key.len() <= 64 && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    plain.then(|| key.clone())
}

/// Today's auto-detection: a direct capture, a transcript, or a final message.
fn auto(p: payload::HookPayload) -> Stop {
    let source = match (p.direct, p.transcript_path) {
        (Some(d), _) => Source::Direct(d),
        (None, Some(path)) => Source::ClaudeTranscript {
            path,
            final_message: p.last_assistant_message,
        },
        (None, None) => Source::FinalMessage(p.last_assistant_message),
    };
    Stop {
        session_id: p.session_id,
        cwd: p.cwd,
        source,
    }
}

/// serde's message, unless it quotes a directive back: a client that echoes hook output must
/// never be handed a line that could be captured.
fn safe_detail(e: &serde_json::Error) -> String {
    let detail = e.to_string();
    if detail.contains("librarian-session") {
        "a field has the wrong type".to_string()
    } else {
        detail
    }
}

/// `s` unless it is empty.
fn nonempty(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.is_empty())
}

/// The first of two spellings of one field (snake and camel case) that is set and not empty.
fn either(a: Option<String>, b: Option<String>) -> Option<String> {
    nonempty(a).or_else(|| nonempty(b))
}

/// True when a hook event name is present and is not one of `stops`.
fn other_event(name: Option<&str>, stops: &[&str]) -> bool {
    name.is_some_and(|n| !stops.contains(&n))
}

/// The directives of the turn `source` names, in order; the outcome (with a message) when
/// there is nothing to scan.
pub(crate) fn directives(source: &Source, out: &mut Vec<String>) -> Result<Directives, Outcome> {
    match source {
        Source::Direct(d) => {
            if super::directive::is_unfilled(&d.summary) {
                out.push(format!("{P} empty summary; no entry written."));
                return Err(Outcome::Empty);
            }
            Ok(Directives {
                found: vec![d.clone()],
                ..Directives::default()
            })
        }
        Source::ClaudeTranscript {
            path,
            final_message,
        } => match transcript::turn_directives(path, DEFAULT_BUDGET, final_message.as_deref()) {
            Ok(turn) => {
                if turn.budget_exhausted {
                    out.push(budget_line());
                }
                Ok(turn.directives)
            }
            Err(e) => {
                // The payload's own final message still holds what the turn decided (as it is
                // the only source for Codex): it is captured, and the missing transcript said.
                let from_payload = final_message.as_deref().map(directives_in);
                match from_payload.filter(|d| !d.found.is_empty()) {
                    Some(found) => {
                        out.push(format!("{P} {e}; captured the directives of the payload's final message (earlier messages of the turn were not read)."));
                        Ok(found)
                    }
                    None => {
                        out.push(format!("{P} {e}; nothing captured."));
                        Err(Outcome::Error(e.to_string()))
                    }
                }
            }
        },
        Source::FinalMessage(text) => Ok(text.as_deref().map(directives_in).unwrap_or_default()),
        Source::CopilotEvents(path) => late_log(path, copilot::classify, "events.jsonl", out),
        Source::AgyTranscript(path) => late_log(path, agy::classify, "transcript", out),
    }
}

/// The turn of a log the client may still be writing when the hook runs (Copilot CLI, agy).
fn late_log(
    path: &std::path::Path,
    classify: fn(&[u8]) -> late::Line,
    what: &str,
    out: &mut Vec<String>,
) -> Result<Directives, Outcome> {
    match late::read(path, DEFAULT_BUDGET, late::wait(), classify) {
        Ok(read) => {
            if read.turn.budget_exhausted {
                out.push(budget_line());
            }
            if !read.complete {
                out.push(format!("{P} the turn's final message was not in the {what} within {} ms of the hook; lines written after that are not read.", read.waited.as_millis()));
            }
            Ok(scan_messages(&read.turn.messages))
        }
        Err(e) => {
            out.push(format!("{P} {e}; nothing captured."));
            Err(Outcome::Error(e.to_string()))
        }
    }
}

fn budget_line() -> String {
    format!("{P} this turn is longer than the {} MiB read from the end of the transcript; directives written earlier in it were not read.", DEFAULT_BUDGET >> 20)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fixture(client: &str, name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/clients")
            .join(client)
            .join(name);
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn truncated_and_malformed_fixtures_of_every_client_are_errors() {
        for a in &ADAPTERS {
            let truncated = fixture(a.label, "stop-truncated.json");
            assert_eq!(
                decode(Some(a.label), truncated.as_bytes()),
                Err(PayloadError::NotJson)
            );
            let malformed = fixture(a.label, "stop-malformed.json");
            assert!(
                matches!(
                    decode(Some(a.label), malformed.as_bytes()),
                    Err(PayloadError::Malformed { client, .. }) if client == a.label
                ),
                "{}",
                a.label
            );
        }
    }

    #[test]
    fn the_table_is_the_list_of_clients() {
        let labels: Vec<&str> = ADAPTERS.iter().map(|a| a.label).collect();
        assert_eq!(labels, super::super::CLIENTS.to_vec());
        assert!(adapter("antigravity").is_none());
    }

    #[test]
    fn a_direct_capture_is_taken_whatever_the_client() {
        for a in &ADAPTERS {
            let stop = decode(
                Some(a.label),
                br#"{"summary":"Hook check.","refs":[],"session_id":"check"}"#,
            )
            .unwrap()
            .unwrap();
            assert_eq!(stop.session_id.as_deref(), Some("check"), "{}", a.label);
            assert!(matches!(stop.source, Source::Direct(_)), "{}", a.label);
            assert_eq!(
                decode(Some(a.label), br#"{"summary":"S","refs":"a.md"}"#),
                Err(PayloadError::BadRefs)
            );
        }
    }

    #[test]
    fn what_is_not_a_payload_is_an_error_for_every_client() {
        for a in &ADAPTERS {
            assert_eq!(
                decode(Some(a.label), b"not json"),
                Err(PayloadError::NotJson)
            );
            assert_eq!(decode(Some(a.label), b"[1]"), Err(PayloadError::NotObject));
            assert_eq!(decode(Some(a.label), b""), Err(PayloadError::NotJson));
        }
    }

    #[test]
    fn without_a_client_the_payload_is_auto_detected() {
        let stop = decode(
            None,
            br#"{"session_id":"S","transcript_path":"/t.jsonl","last_assistant_message":"x"}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            stop.source,
            Source::ClaudeTranscript {
                path: "/t.jsonl".into(),
                final_message: Some("x".into())
            }
        );
        let stop = decode(None, br#"{"last_assistant_message":"x"}"#)
            .unwrap()
            .unwrap();
        assert_eq!(stop.source, Source::FinalMessage(Some("x".into())));
    }

    #[test]
    fn a_wrong_type_names_the_client_and_never_echoes_a_directive() {
        let e = decode(
            Some("codex"),
            br#"{"session_id":"S","last_assistant_message":5}"#,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("stdin is not a codex Stop payload ("),
            "{e}"
        );
        let e = decode(
            Some("agy"),
            br#"{"conversationId":"c","fullyIdle":"<!-- librarian-session {\"summary\":\"x\"} -->"}"#,
        )
        .unwrap_err();
        assert!(!e.to_string().contains("librarian-session"), "{e}");
    }

    #[test]
    fn a_field_of_the_wrong_type_is_named() {
        let e = decode(
            Some("claude"),
            br#"{"session_id":"x","transcript_path":42,"hook_event_name":"Stop"}"#,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "stdin is not a claude Stop payload (`transcript_path`: invalid type: integer `42`, expected a string)"
        );
        // A payload past the bound is not searched field by field (each try copies it).
        let big = format!(
            r#"{{"session_id":"x","transcript_path":42,"pad":"{}"}}"#,
            "p".repeat(CULPRIT_BYTES)
        );
        let e = decode(Some("claude"), big.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("(invalid type: integer `42`"), "{e}");
        // Every client's adapter names it the same way.
        let e = decode(
            Some("codex"),
            br#"{"session_id":"S","last_assistant_message":5}"#,
        );
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("(`last_assistant_message`: "));
    }

    proptest! {
        #[test]
        fn never_panics(client in prop::sample::select(super::super::CLIENTS.to_vec()),
                        bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            let _ = decode(Some(client), &bytes);
        }

        #[test]
        fn never_panics_on_payload_shaped_input(
            client in prop::sample::select(super::super::CLIENTS.to_vec()),
            s in r#"\{("(session_id|sessionId|conversationId|cwd|workspacePaths|transcript_path|transcriptPath|last_assistant_message|lastAssistantMessage|hook_event_name|hookEventName|fullyIdle|summary|subagentType|prompt_response|conversation_id|workspace_roots|text|agent_action_name|trajectory_id|tool_info)":(null|true|1|"x"|"Stop"|\["/w"\]|\[1\]|\{\}),?){0,6}\}"#,
        ) {
            let _ = decode(Some(client), s.as_bytes());
        }
    }
}
