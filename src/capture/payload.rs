//! Decoding the hook's stdin: a Stop payload from an AI client, or a direct
//! `{"summary": ..., "refs": [...]}` capture.
//!
//! Well-formed but irrelevant fields are ignored; only input that is not a JSON object, or a
//! direct capture with fields of the wrong type, is an error.

use super::directive::{directive_from_value, Directive};
use serde_json::Value;
use std::path::PathBuf;

/// Most stdin the hook takes; a Stop payload is a few hundred bytes. The hook reads one byte
/// more, so a larger stdin is refused as such ([`PayloadError::TooLarge`]), not as broken JSON.
pub(crate) const MAX_STDIN: u64 = 16 * 1024 * 1024;

/// The fields of a hook payload that capture uses.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct HookPayload {
    pub session_id: Option<String>,
    pub transcript_path: Option<PathBuf>,
    pub cwd: Option<String>,
    /// A direct capture (`summary` present as a string).
    pub direct: Option<Directive>,
    /// The final assistant message, for clients whose Stop payload carries it (the only source
    /// for Codex, Grok and Muse; for Claude Code, what fills in a final message the transcript
    /// has not flushed yet).
    pub last_assistant_message: Option<String>,
}

/// Why stdin was not usable.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum PayloadError {
    #[error("stdin is not a JSON hook payload")]
    NotJson,
    #[error("stdin is larger than the 16 MiB a hook payload may be")]
    TooLarge,
    #[error("stdin is JSON but not an object")]
    NotObject,
    #[error("the direct capture's `refs` must be an array of strings")]
    BadRefs,
    /// A JSON object that is not the client's Stop payload (a field of the wrong type, a
    /// required field missing).
    #[error("stdin is not {} {client} Stop payload ({detail})", article(client))]
    Malformed {
        client: &'static str,
        detail: String,
    },
}

/// `a` or `an` before a client's name as its messages spell it (`an opencode`, `an agy`).
pub(crate) fn article(client: &str) -> &'static str {
    match client.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u' | 'A' | 'E' | 'I' | 'O' | 'U') => "an",
        _ => "a",
    }
}

/// Decodes stdin.
pub(crate) fn decode(bytes: &[u8]) -> Result<HookPayload, PayloadError> {
    if bytes.len() as u64 > MAX_STDIN {
        return Err(PayloadError::TooLarge);
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|_| PayloadError::NotJson)?;
    let obj = value.as_object().ok_or(PayloadError::NotObject)?;
    let text = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
    let direct = match obj.get("summary") {
        Some(Value::String(_)) => Some(directive_from_value(&value).ok_or(PayloadError::BadRefs)?),
        _ => None,
    };
    Ok(HookPayload {
        session_id: text("session_id")
            .or_else(|| text("sessionId"))
            .filter(|s| !s.is_empty()),
        transcript_path: text("transcript_path")
            .filter(|s| !s.is_empty())
            .map(PathBuf::from),
        cwd: text("cwd"),
        direct,
        last_assistant_message: text("last_assistant_message"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn stdin_over_the_bound_is_too_large_not_broken_json() {
        let mut big = br#"{"summary":"x","pad":""#.to_vec();
        big.resize(MAX_STDIN as usize + 1, b'x');
        assert_eq!(decode(&big), Err(PayloadError::TooLarge));
        assert_eq!(decode(b"{"), Err(PayloadError::NotJson));
    }

    #[test]
    fn claude_stop_payload() {
        let p = decode(br#"{"session_id":"S","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"Stop","stop_hook_active":false}"#).unwrap();
        assert_eq!(p.session_id.as_deref(), Some("S"));
        assert_eq!(p.transcript_path, Some(PathBuf::from("/t.jsonl")));
        assert!(p.direct.is_none());
    }

    #[test]
    fn direct_payload_wins_and_is_validated() {
        let p = decode(br#"{"summary":"S","refs":["a.md"],"transcript_path":"/t"}"#).unwrap();
        assert_eq!(p.direct.unwrap().refs, vec!["a.md".to_string()]);
        assert_eq!(
            decode(br#"{"summary":"S","refs":"a.md"}"#),
            Err(PayloadError::BadRefs)
        );
        assert_eq!(
            decode(br#"{"sessionId":"X"}"#)
                .unwrap()
                .session_id
                .as_deref(),
            Some("X")
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert_eq!(decode(b"\x00\xff not json"), Err(PayloadError::NotJson));
        assert_eq!(decode(b"[1,2]"), Err(PayloadError::NotObject));
        assert_eq!(decode(b""), Err(PayloadError::NotJson));
    }

    proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = decode(&bytes);
        }

        #[test]
        fn never_panics_on_json_shaped_input(s in r#"\{("(summary|refs|session_id|cwd|transcript_path)":(null|1|"x"|\["a"\]|\[1\]|\{\}),?){0,5}\}"#) {
            let _ = decode(s.as_bytes());
        }
    }
}
