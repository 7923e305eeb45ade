//! What the server does with one frame read from stdin, before rmcp sees it: deliver a
//! well-formed message, answer a broken request with a JSON-RPC error for its id, or ignore
//! noise. rmcp alone drops an oversized frame without a word and answers a request it cannot
//! decode (`params` not an object, a field of the wrong type) with an error whose id is null,
//! so the client waits forever for the answer to its id (spec/mcp.md, "Malformed input").
//!
//! Everything here is pure: bytes in, a decision out. [`leading_id`] is the cheap scan that
//! finds a request's id in the first bytes of a frame too large to read whole.

use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, ErrorData, JsonRpcMessage,
    RequestId, ServerJsonRpcMessage,
};
use serde_json::Value;

/// The largest frame read whole (1 MiB). No request of this server comes near it: a search
/// query is searched up to 4 KiB, a recorded summary is cut at 2,000 characters.
pub(crate) const MAX_FRAME_BYTES: usize = 1 << 20;
/// How much of an oversized frame is kept to find its id.
pub(crate) const ID_PREFIX_BYTES: usize = 4096;
/// Longest decoder message quoted back to the client (serde may quote the offending value).
const MAX_DETAIL_CHARS: usize = 200;

/// The decision for one frame.
#[derive(Debug)]
pub(crate) enum Triage {
    /// A message for rmcp.
    Deliver(Box<ClientJsonRpcMessage>),
    /// An error frame to send back at once; rmcp never sees the input.
    Answer(Box<ServerJsonRpcMessage>),
    /// Nothing to do (blank lines, noise that is no request, broken notifications).
    Ignore,
}

/// Decides what to do with one complete frame (its newline, a carriage return and a UTF-8
/// byte order mark are ignored).
pub(crate) fn frame(raw: &[u8]) -> Triage {
    let line = trim(raw);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Triage::Ignore;
    }
    if let Ok(msg) = serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        return checked(msg);
    }
    if let Some(repaired) = repaired(line) {
        if let Ok(msg) = serde_json::from_str::<ClientJsonRpcMessage>(&repaired) {
            return checked(msg);
        }
    }
    match serde_json::from_slice::<Value>(line) {
        Ok(v) => not_a_message(&v, line),
        Err(e) => not_json(line, &e),
    }
}

/// The answer to a frame over [`MAX_FRAME_BYTES`], of which `prefix` is the start: an error
/// for the id found there (null when none is).
pub(crate) fn oversized(prefix: &[u8]) -> Triage {
    let error = ErrorData::invalid_request(
        format!(
            "The request is larger than the server's limit of {MAX_FRAME_BYTES} bytes; it was not read. Send a smaller request."
        ),
        None,
    );
    answer(error, leading_id(trim(prefix)))
}

/// A frame JSON would refuse only for its bytes, made readable: bytes that are not UTF-8
/// become U+FFFD and raw control characters (which JSON allows only escaped) become spaces, so
/// text inside a string (a query, a path) is never an error; outside strings a space is
/// whitespace. `None` when there is nothing to repair.
fn repaired(line: &[u8]) -> Option<String> {
    let controls = line.iter().any(|b| *b < 0x20);
    if !controls && std::str::from_utf8(line).is_ok() {
        return None;
    }
    let spaced: Vec<u8> = line
        .iter()
        .map(|&b| if b < 0x20 { b' ' } else { b })
        .collect();
    Some(String::from_utf8_lossy(&spaced).into_owned())
}

/// Methods this server answers whose params rmcp decodes into types: a request of one of them
/// that rmcp could only read as a custom request has params of the wrong shape.
const TYPED_METHODS: [&str; 4] = ["initialize", "ping", "tools/list", "tools/call"];

/// A decoded message, unless it is a request of a [`TYPED_METHODS`] method that rmcp fell back
/// to reading as a custom request (it would answer "method not found", which is not why).
fn checked(msg: ClientJsonRpcMessage) -> Triage {
    let JsonRpcMessage::Request(r) = &msg else {
        return Triage::Deliver(Box::new(msg));
    };
    let ClientRequest::CustomRequest(c) = &r.request else {
        return Triage::Deliver(Box::new(msg));
    };
    if !TYPED_METHODS.contains(&c.method.as_str()) {
        return Triage::Deliver(Box::new(msg));
    }
    let error = match &c.params {
        Some(p) if !p.is_object() => {
            ErrorData::invalid_params("`params` must be an object.".to_string(), None)
        }
        Some(p) if c.method == "tools/call" => {
            let why = serde_json::from_value::<CallToolRequestParams>(p.clone())
                .err()
                .map(|e| detail(&e))
                .unwrap_or_default();
            ErrorData::invalid_params(format!("Invalid params for tools/call: {why}."), None)
        }
        None if c.method == "tools/call" => ErrorData::invalid_params(
            "Invalid params for tools/call: `params` with the tool's `name` is required."
                .to_string(),
            None,
        ),
        _ => ErrorData::invalid_params(format!("Invalid params for {}.", c.method), None),
    };
    answer(error, Some(r.id.clone()))
}

fn trim(raw: &[u8]) -> &[u8] {
    let line = raw.strip_suffix(b"\n").unwrap_or(raw);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

fn answer(error: ErrorData, id: Option<RequestId>) -> Triage {
    Triage::Answer(Box::new(ServerJsonRpcMessage::error(error, id)))
}

/// Well-formed JSON that rmcp cannot decode. A request (a `method` and a usable `id`) gets an
/// error for its id; a notification gets nothing (JSON-RPC never answers one); anything else
/// gets Invalid Request without an id (MCP 2026-07-28, Error Responses), as rmcp answers it.
fn not_a_message(v: &Value, line: &[u8]) -> Triage {
    let id = v
        .get("id")
        .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
    let has_method = v.get("method").is_some();
    if has_method && v.get("id").is_none() {
        return Triage::Ignore;
    }
    let Some(id) = id.filter(|_| has_method) else {
        return answer(ErrorData::invalid_request("Invalid request", None), None);
    };
    let why = match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Err(e) => detail(&e),
        Ok(_) => String::new(),
    };
    let error = match v.get("params") {
        Some(p) if !p.is_object() => {
            ErrorData::invalid_params("`params` must be an object.".to_string(), None)
        }
        Some(_) => ErrorData::invalid_params(format!("Invalid params: {why}."), None),
        None => ErrorData::invalid_request(format!("Invalid request: {why}."), None),
    };
    answer(error, Some(id))
}

/// A frame that is not JSON at all. When its start names an id, the client is waiting for
/// that id: a Parse error answers it. Otherwise nothing is sent, as rmcp and the other MCP
/// SDKs do, so a peer echoing garbage cannot start an error storm.
fn not_json(line: &[u8], e: &serde_json::Error) -> Triage {
    match leading_id(line) {
        Some(id) => answer(
            ErrorData::parse_error(format!("Parse error: {}.", detail(e)), None),
            Some(id),
        ),
        None => Triage::Ignore,
    }
}

fn detail(e: &serde_json::Error) -> String {
    e.to_string().chars().take(MAX_DETAIL_CHARS).collect()
}

/// The top-level `"id"` of a JSON object from its first bytes: the object is scanned key by
/// key (strings and nested values skipped without being decoded) until `"id"` is found and its
/// value, a string or an integer, is complete. `None` when the bytes end first, are not an
/// object, or the id is of another type.
pub(crate) fn leading_id(bytes: &[u8]) -> Option<RequestId> {
    let mut s = Scan { b: bytes, at: 0 };
    s.ws();
    s.eat(b'{')?;
    loop {
        s.ws();
        let key = s.string()?;
        s.ws();
        s.eat(b':')?;
        s.ws();
        let start = s.at;
        s.value()?;
        if is_id_key(&bytes[key.0..key.1]) {
            return serde_json::from_slice::<RequestId>(&bytes[start..s.at]).ok();
        }
        s.ws();
        match s.next()? {
            b',' => {}
            _ => return None,
        }
    }
}

/// Whether a raw key (with its quotes) decodes to `id`.
fn is_id_key(raw: &[u8]) -> bool {
    raw == b"\"id\"" || serde_json::from_slice::<String>(raw).is_ok_and(|k| k == "id")
}

/// A cursor over the bytes of a JSON text that may end anywhere.
struct Scan<'a> {
    b: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    fn next(&mut self) -> Option<u8> {
        let c = *self.b.get(self.at)?;
        self.at += 1;
        Some(c)
    }

    fn eat(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }

    fn ws(&mut self) {
        while self.b.get(self.at).is_some_and(|c| c.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    /// A string, quotes included: its byte range.
    fn string(&mut self) -> Option<(usize, usize)> {
        let start = self.at;
        self.eat(b'"')?;
        loop {
            match self.next()? {
                b'"' => return Some((start, self.at)),
                b'\\' => {
                    self.next()?;
                }
                _ => {}
            }
        }
    }

    /// Skips one value: a string, an object or array (brackets counted outside strings), or
    /// a literal or number, which must be followed by a delimiter within the bytes.
    fn value(&mut self) -> Option<()> {
        match *self.b.get(self.at)? {
            b'"' => self.string().map(drop),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match *self.b.get(self.at)? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth -= 1,
                        _ => {}
                    }
                    self.at += 1;
                    if depth == 0 {
                        return Some(());
                    }
                }
            }
            _ => {
                let start = self.at;
                while self
                    .b
                    .get(self.at)
                    .is_some_and(|c| !matches!(c, b',' | b'}' | b']') && !c.is_ascii_whitespace())
                {
                    self.at += 1;
                }
                (self.at > start && self.at < self.b.len()).then_some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn answered(t: Triage) -> Value {
        match t {
            Triage::Answer(m) => serde_json::to_value(&m).unwrap(),
            other => panic!("expected an answer, got {other:?}"),
        }
    }

    fn id(v: Value) -> Option<RequestId> {
        Some(serde_json::from_value(v).unwrap())
    }

    #[test]
    fn requests_rmcp_cannot_decode_are_answered_for_their_id() {
        let cases = [
            (
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":[1,2]}"#,
                json!(4),
                -32602,
                "`params` must be an object.",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"x","method":"tools/list","params":"s"}"#,
                json!("x"),
                -32602,
                "`params` must be an object.",
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":7}}"#,
                json!(5),
                -32602,
                "Invalid params for tools/call: ",
            ),
            (
                r#"{"id":6,"method":"tools/list"}"#,
                json!(6),
                -32600,
                "Invalid request: ",
            ),
            (
                r#"{"jsonrpc":"2.0","id":8,"method":"tools/call"}"#,
                json!(8),
                -32602,
                "Invalid params for tools/call: `params` with the tool's `name` is required.",
            ),
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
                json!(9),
                -32602,
                "Invalid params for tools/call: ",
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"librarian-search","arguments":{"query":"a"}"#,
                json!(7),
                -32700,
                "Parse error: ",
            ),
        ];
        for (frame_text, want_id, code, message) in cases {
            let v = answered(frame(frame_text.as_bytes()));
            assert_eq!(v["id"], want_id, "{frame_text}");
            assert_eq!(v["error"]["code"], json!(code), "{frame_text}");
            let got = v["error"]["message"].as_str().unwrap();
            assert!(got.starts_with(message), "{frame_text}: {got}");
        }
    }

    #[test]
    fn noise_is_ignored_or_answered_with_a_null_id() {
        for quiet in [
            "",
            " \r\n",
            "{not json}",
            "\u{1b}[31mhello",
            r#"{"jsonrpc":"2.0","method":"notifications/whatever","params":[1]}"#,
        ] {
            assert!(matches!(frame(quiet.as_bytes()), Triage::Ignore), "{quiet}");
        }
        for null_id in [r#"{"foo":1}"#, "[1,2,3]", r#"{"id":{"a":1},"method":"x"}"#] {
            let v = answered(frame(null_id.as_bytes()));
            assert_eq!(
                (v["id"].clone(), v["error"]["code"].clone()),
                (Value::Null, json!(-32600)),
                "{null_id}"
            );
        }
    }

    #[test]
    fn text_that_is_not_utf8_is_read_as_replacement_characters() {
        let mut raw = br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"librarian-search","arguments":{"query":"a"#.to_vec();
        raw.extend_from_slice(b"\xff\xfe\x00");
        raw.extend_from_slice(br#""}}}"#);
        let Triage::Deliver(msg) = frame(&raw) else {
            panic!("not delivered");
        };
        let v = serde_json::to_value(&msg).unwrap();
        assert_eq!(
            v["params"]["arguments"]["query"],
            json!("a\u{fffd}\u{fffd} ")
        );
    }

    #[test]
    fn an_oversized_frame_is_answered_for_the_id_at_its_start() {
        let big = format!(
            r#"{{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{{"name":"librarian-search","arguments":{{"query":"{}"#,
            "w ".repeat(3000)
        );
        let v = answered(oversized(&big.as_bytes()[..ID_PREFIX_BYTES]));
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (json!(12), json!(-32600))
        );
        let late = format!(r#"{{"params":{{"q":"{}"}},"id":3}}"#, "x".repeat(5000));
        let v = answered(oversized(&late.as_bytes()[..ID_PREFIX_BYTES]));
        assert_eq!(v["id"], Value::Null);
    }

    #[test]
    fn the_id_scan_reads_only_what_is_complete() {
        assert_eq!(leading_id(br#"{"id":12,"#), id(json!(12)));
        assert_eq!(leading_id(br#"{"id":12"#), None, "12 might go on");
        assert_eq!(
            leading_id(br#"{"a":{"id":1,"b":"}"},"id":"s\"x"}"#),
            id(json!("s\"x"))
        );
        assert_eq!(leading_id(br#"{"\u0069d":-3}"#), id(json!(-3)));
        assert_eq!(leading_id(br#"{"id":1.5}"#), None);
        assert_eq!(leading_id(br#"{"id":null}"#), None);
        assert_eq!(leading_id(br#"[{"id":1}]"#), None);
        assert_eq!(leading_id(br#"{"a":[1,{"id":2}],"#), None);
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "\\PC{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map("\\PC{0,6}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// On a whole object the scan finds exactly the id serde finds (when it is an integer
        /// or a string), and on any cut of it either that id or nothing.
        #[test]
        fn the_id_scan_agrees_with_serde(
            fields in prop::collection::btree_map("\\PC{0,6}", json_value(), 0..5),
            id_value in prop_oneof![any::<i64>().prop_map(Value::from), "\\PC{0,10}".prop_map(Value::from), json_value()],
            cut in any::<prop::sample::Index>(),
        ) {
            let mut obj: serde_json::Map<String, Value> = fields.into_iter().collect();
            obj.insert("id".into(), id_value.clone());
            let text = serde_json::to_vec(&Value::Object(obj)).unwrap();
            let want = serde_json::from_value::<RequestId>(id_value).ok();
            prop_assert_eq!(leading_id(&text), want.clone());
            let part = leading_id(&text[..cut.index(text.len() + 1)]);
            prop_assert!(part.is_none() || part == want);
        }

        /// Any bytes: a decision, never a panic; an answer is a JSON-RPC error frame.
        #[test]
        fn any_bytes_get_a_decision(raw in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = leading_id(&raw);
            if let Triage::Answer(m) = frame(&raw) {
                let v = serde_json::to_value(&m).unwrap();
                prop_assert!(v["error"]["code"].is_i64());
            }
            if let Triage::Answer(m) = oversized(&raw) {
                let v = serde_json::to_value(&m).unwrap();
                prop_assert_eq!(v["error"]["code"].clone(), json!(-32600));
            }
        }

        /// A tools/call request whose `params` is any JSON that is not an object is answered
        /// with -32602 for its id.
        #[test]
        fn non_object_params_are_answered_for_their_id(
            id_n in any::<i64>(),
            params in json_value().prop_filter("not an object", |v| !v.is_object()),
        ) {
            let text = json!({"jsonrpc": "2.0", "id": id_n, "method": "tools/call", "params": params}).to_string();
            let v = answered(frame(text.as_bytes()));
            prop_assert_eq!(v["id"].clone(), json!(id_n));
            prop_assert_eq!(v["error"]["code"].clone(), json!(-32602));
        }
    }
}
