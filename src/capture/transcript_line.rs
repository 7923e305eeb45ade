//! What one line of a Claude Code JSONL transcript is to capture: the start of a turn (a prompt
//! in the user's own words), text the main agent wrote, or neither (spec/capture.md, "The
//! current turn").
//!
//! A transcript holds tool results, thinking, tool calls and file snapshots that can run to
//! megabytes, so a line is JSON-parsed only when its bytes could make it one of the two kinds
//! that matter, and then into borrowed fields, skipping everything else without building it.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use memchr::memmem;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// The `visit_*` methods of scalars a visitor accepts and ignores, answering `$value`.
macro_rules! ignore_scalars {
    ($value:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
}

/// What a line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LineKind {
    /// A user line carrying the user's own words: the turn starts after it.
    Prompt,
    /// Text written by the main agent (not a sidechain), with its message id when it has one.
    AgentText {
        message_id: Option<String>,
        text: String,
    },
    /// Anything else: tool results, meta and compaction lines, thinking, tool calls, subagents,
    /// summaries, lines that are not JSON.
    Other,
}

/// Classifies one line (without its newline).
pub(crate) fn classify(line: &[u8]) -> LineKind {
    let maybe_user = has(line, b"\"user\"");
    // Text comes as `text` blocks or as a string `content`; thinking and tool calls alone have
    // neither, and are the long lines worth not parsing.
    let maybe_agent_text = has(line, b"\"assistant\"")
        && (has(line, b"\"text\"")
            || has(line, b"\"content\":\"")
            || has(line, b"\"content\": \""));
    if !maybe_user && !maybe_agent_text {
        return LineKind::Other;
    }
    let Ok(raw) = serde_json::from_slice::<RawLine<'_>>(line) else {
        return LineKind::Other;
    };
    raw.kind()
}

fn has(haystack: &[u8], needle: &[u8]) -> bool {
    memmem::find(haystack, needle).is_some()
}

/// The fields of a transcript line that matter; all others are skipped unparsed.
#[derive(Deserialize)]
struct RawLine<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Lenient<'a>,
    #[serde(rename = "isSidechain", default, borrow)]
    sidechain: Lenient<'a>,
    #[serde(rename = "isMeta", default, borrow)]
    meta: Lenient<'a>,
    #[serde(rename = "isCompactSummary", default, borrow)]
    compact_summary: Lenient<'a>,
    #[serde(default, borrow)]
    message: Option<RawMessage<'a>>,
}

#[derive(Deserialize)]
struct RawMessage<'a> {
    #[serde(default, borrow)]
    role: Lenient<'a>,
    #[serde(default, borrow)]
    id: Lenient<'a>,
    #[serde(default, borrow)]
    content: Content<'a>,
}

impl RawLine<'_> {
    fn kind(self) -> LineKind {
        let Some(message) = self.message else {
            return LineKind::Other;
        };
        // Progress, attachment and system lines may carry copies of messages (a subagent's, a
        // hook's): only conversation lines count.
        match &self.kind {
            Lenient::Absent => {}
            Lenient::Str(k) if k == "user" || k == "assistant" => {}
            _ => return LineKind::Other,
        }
        // The message's role decides; the line's type only when the role is missing.
        let role = match (&message.role, &self.kind) {
            (Lenient::Str(role), _) => role.as_ref(),
            (Lenient::Absent, Lenient::Str(kind)) => kind.as_ref(),
            _ => return LineKind::Other,
        };
        if self.sidechain.is_true() {
            return LineKind::Other;
        }
        match role {
            "user"
                if !self.meta.is_true()
                    && !self.compact_summary.is_true()
                    && message.content.has_words() =>
            {
                LineKind::Prompt
            }
            "assistant" => match message.content.text() {
                Some(text) if !text.is_empty() => LineKind::AgentText {
                    message_id: match message.id {
                        Lenient::Str(id) => Some(id.into_owned()),
                        _ => None,
                    },
                    text,
                },
                _ => LineKind::Other,
            },
            _ => LineKind::Other,
        }
    }
}

/// A JSON value kept only when it is a string or a boolean; any other value is accepted (and
/// skipped), so a field of an unexpected type never makes the line unreadable.
#[derive(Debug, Default)]
enum Lenient<'a> {
    #[default]
    Absent,
    Str(Cow<'a, str>),
    Bool(bool),
    Other,
}

impl Lenient<'_> {
    fn is_true(&self) -> bool {
        matches!(self, Lenient::Bool(true))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Lenient<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LenientVisitor(PhantomData))
    }
}

struct LenientVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for LenientVisitor<'a> {
    type Value = Lenient<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Lenient::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Lenient::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Lenient::Str(Cow::Owned(v)))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Lenient::Other)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Lenient::Other)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Lenient::Other)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Lenient::Other)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Lenient::Bool(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Lenient::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Lenient::Other)
    }
}

/// `message.content`: a string, or an array of blocks of which only `type` and `text` are kept.
#[derive(Debug, Default)]
enum Content<'a> {
    #[default]
    Absent,
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
}

#[derive(Debug, Default)]
struct Block<'a> {
    kind: Lenient<'a>,
    text: Lenient<'a>,
}

impl Content<'_> {
    /// The user's own words: a string, or at least one `text` block (a line of `tool_result`
    /// blocks alone is the harness talking).
    fn has_words(&self) -> bool {
        match self {
            Content::Text(_) => true,
            Content::Blocks(blocks) => blocks
                .iter()
                .any(|b| matches!(&b.kind, Lenient::Str(k) if k == "text")),
            Content::Absent => false,
        }
    }

    /// The string, or the `text` strings of the blocks joined with nothing between them (a
    /// directive may be split across blocks anywhere, even inside its summary).
    fn text(self) -> Option<String> {
        match self {
            Content::Text(t) => Some(t.into_owned()),
            Content::Blocks(blocks) => Some(
                blocks
                    .into_iter()
                    .filter_map(|b| match b.text {
                        Lenient::Str(t) => Some(t),
                        _ => None,
                    })
                    .collect(),
            ),
            Content::Absent => None,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ContentVisitor(PhantomData))
    }
}

struct ContentVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for ContentVisitor<'a> {
    type Value = Content<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("message content")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Owned(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut blocks = Vec::new();
        while let Some(block) = seq.next_element::<Block<'a>>()? {
            blocks.push(block);
        }
        Ok(Content::Blocks(blocks))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Content::Absent)
    }
    ignore_scalars!(Content::Absent);
}

impl<'de: 'a, 'a> Deserialize<'de> for Block<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(BlockVisitor(PhantomData))
    }
}

struct BlockVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for BlockVisitor<'a> {
    type Value = Block<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a content block")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut block = Block::default();
        while let Some(key) = map.next_key::<Lenient<'a>>()? {
            match key {
                Lenient::Str(k) if k == "type" => block.kind = map.next_value()?,
                Lenient::Str(k) if k == "text" => block.text = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(block)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Block::default())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Block::default())
    }
    ignore_scalars!(Block::default());
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    /// A line as Claude Code writes it: the envelope fields around `message`.
    fn line(kind: &str, message: Value, extra: Value) -> String {
        let mut v = json!({
            "parentUuid": "p", "isSidechain": false, "userType": "external", "cwd": "/w",
            "sessionId": "S", "version": "2.0.14", "gitBranch": "main", "type": kind,
            "message": message, "uuid": "u", "timestamp": "2026-12-01T10:00:00.000Z",
        });
        if let (Some(v), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
            v.extend(extra.clone());
        }
        v.to_string()
    }

    fn agent(id: &str, block: Value) -> String {
        line(
            "assistant",
            json!({"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                   "content": [block], "stop_reason": null, "usage": {"input_tokens": 4}}),
            json!({"requestId": "req_1"}),
        )
    }

    fn text(id: &str, t: &str) -> LineKind {
        LineKind::AgentText {
            message_id: Some(id.into()),
            text: t.into(),
        }
    }

    #[test]
    fn line_kinds() {
        let tool_result = json!({"role": "user", "content": [
            {"tool_use_id": "toolu_1", "type": "tool_result", "content": [{"type": "text", "text": "file body"}]}
        ]});
        let cases: Vec<(String, LineKind)> = vec![
            (line("user", json!({"role": "user", "content": "Plan the garden."}), json!({})), LineKind::Prompt),
            (
                line("user", json!({"role": "user", "content": [{"type": "text", "text": "Look"}, {"type": "image", "source": {}}]}), json!({})),
                LineKind::Prompt,
            ),
            (line("user", tool_result.clone(), json!({"toolUseResult": {"type": "text", "file": {"content": "x"}}})), LineKind::Other),
            (line("user", json!({"role": "user", "content": "<local-command-caveat>…"}), json!({"isMeta": true})), LineKind::Other),
            (line("user", json!({"role": "user", "content": "This session is being continued…"}), json!({"isCompactSummary": true})), LineKind::Other),
            (line("user", json!({"role": "user", "content": "Subagent task"}), json!({"isSidechain": true})), LineKind::Other),
            (agent("msg_1", json!({"type": "text", "text": "Done."})), text("msg_1", "Done.")),
            (agent("msg_1", json!({"type": "thinking", "thinking": "hmm \"text\"", "signature": "sig"})), LineKind::Other),
            (agent("msg_1", json!({"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {"file_path": "/x", "content": "<!-- librarian-session {} -->"}})), LineKind::Other),
            (
                line("assistant", json!({"role": "assistant", "content": [{"type": "text", "text": "sub"}]}), json!({"isSidechain": true})),
                LineKind::Other,
            ),
            (json!({"type": "summary", "summary": "Garden plan", "leafUuid": "u"}).to_string(), LineKind::Other),
            (json!({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"}).to_string(), LineKind::Other),
            (json!({"type": "progress", "message": {"role": "assistant", "content": [{"type": "text", "text": "sub"}]}}).to_string(), LineKind::Other),
            (json!({"type": "attachment", "message": {"role": "user", "content": "queued"}}).to_string(), LineKind::Other),
            (json!({"type": 3, "message": {"role": "user", "content": "x"}}).to_string(), LineKind::Other),
            // Shapes other clients or older versions write.
            (json!({"type": "assistant", "message": {"content": "plain"}}).to_string(), LineKind::AgentText { message_id: None, text: "plain".into() }),
            (json!({"message": {"role": "assistant", "content": [{"text": "a"}, {"text": 5}, "b", {"type": "text", "text": "c"}]}}).to_string(), LineKind::AgentText { message_id: None, text: "ac".into() }),
            (json!({"type": "user", "message": {"content": "words"}}).to_string(), LineKind::Prompt),
            (json!({"type": "assistant", "message": {"role": "user", "content": "x"}}).to_string(), LineKind::Prompt),
            (json!({"type": "user", "message": {"role": "user", "content": []}}).to_string(), LineKind::Other),
            (json!({"type": "user", "message": {"role": "user", "content": 3}}).to_string(), LineKind::Other),
            (json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": ""}]}}).to_string(), LineKind::Other),
            (json!({"type": "user", "message": "user"}).to_string(), LineKind::Other),
            (json!({"type": "user"}).to_string(), LineKind::Other),
            // Flags of an unexpected type are not true.
            (json!({"type": "user", "isMeta": "true", "isSidechain": 1, "message": {"role": "user", "content": "w"}}).to_string(), LineKind::Prompt),
            (json!({"type": "user", "isMeta": {"a": [1]}, "message": {"role": ["user"], "content": "w"}}).to_string(), LineKind::Other),
            ("{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"cut".into(), LineKind::Other),
            ("not json \"user\"".into(), LineKind::Other),
            (String::new(), LineKind::Other),
        ];
        for (l, want) in cases {
            assert_eq!(classify(l.as_bytes()), want, "line {l}");
        }
    }

    #[test]
    fn escaped_text_is_decoded() {
        let l = agent(
            "m",
            json!({"type": "text", "text": "a \"quoted\" \u{e9} line\n<!--"}),
        );
        assert_eq!(
            classify(l.as_bytes()),
            text("m", "a \"quoted\" \u{e9} line\n<!--")
        );
    }

    proptest! {
        #[test]
        fn never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            let _ = classify(&bytes);
        }

        #[test]
        fn never_panics_on_line_shaped_noise(parts in prop::collection::vec(prop::sample::select(vec![
            "{", "}", "[", "]", ":", ",", "\"type\"", "\"user\"", "\"assistant\"", "\"message\"",
            "\"role\"", "\"content\"", "\"text\"", "\"id\"", "\"isMeta\"", "\"isSidechain\"", "true",
            "null", "1", "\"x\"", "\"\\u00e9\"",
        ]), 0..40)) {
            let _ = classify(parts.concat().as_bytes());
        }

        #[test]
        fn agent_text_round_trips(t in any::<String>(), id in "[a-z_0-9]{1,12}") {
            let want = if t.is_empty() { LineKind::Other } else { text(&id, &t) };
            prop_assert_eq!(classify(agent(&id, json!({"type": "text", "text": t})).as_bytes()), want);
        }
    }
}
