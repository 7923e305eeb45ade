//! Hostile input to `git-rutter mcp` and `git rutter search` (issue 11, class 5: bounded work
//! for every input). Each case feeds raw bytes to the real binary's stdin, closes it, and
//! asserts the exact frames on stdout: every request is answered for its id, the server keeps
//! serving after a broken frame, and it exits 0 soon after end of input. Time bounds are
//! generous (a loaded 2-core machine): they tell "answered" from "busy for minutes".

use crate::common;

use common::Env;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"adversary","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
/// The server's frame limit (spec/mcp.md).
const LIMIT: usize = 1 << 20;
/// "Answered", not "fast": far above a normal answer, far below "busy for minutes".
const PROMPT: Duration = Duration::from_secs(5);
/// A run that takes longer than this is killed and fails.
const DEADLINE: Duration = Duration::from_secs(120);

/// What one server run printed, and how long it took after its input ended.
struct Session {
    code: i32,
    frames: Vec<Value>,
    stderr: String,
    after_eof: Duration,
}

impl Session {
    /// The one frame that answers `id`.
    fn reply(&self, id: Value) -> &Value {
        let found: Vec<&Value> = self.frames.iter().filter(|f| f["id"] == id).collect();
        assert_eq!(found.len(), 1, "answers to {id}: {:?}", self.frames);
        found[0]
    }

    /// The error code and message answering `id`.
    fn error(&self, id: Value) -> (i64, String) {
        let f = self.reply(id);
        (
            f["error"]["code"]
                .as_i64()
                .unwrap_or_else(|| panic!("not an error: {f}")),
            f["error"]["message"].as_str().unwrap().to_string(),
        )
    }

    /// The text of the `isError` tool result answering `id`.
    fn tool_error(&self, id: Value) -> String {
        let f = self.reply(id);
        assert_eq!(f["result"]["isError"], json!(true), "{f}");
        f["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// The text of the successful tool result answering `id`.
    fn text(&self, id: Value) -> String {
        let f = self.reply(id);
        assert_eq!(f["result"]["isError"], json!(false), "{f}");
        f["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

/// A vault with notes `alpha beta` and `gamma`, indexed by `init`.
fn vault() -> Env {
    let env = Env::git_vault();
    env.write(
        "Notes/c.md",
        "# Gamma\n\nThe gamma note, with alpha and beta words.\n",
    );
    env
}

/// Runs `git-rutter mcp`, writes `input` after the handshake, closes stdin, and collects
/// everything it prints.
fn session(env: &Env, input: &[u8]) -> Session {
    let mut child = env
        .cmd()
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut all = format!("{INIT}\n{INITIALIZED}\n").into_bytes();
    all.extend_from_slice(input);
    let (eof_tx, eof_rx) = std::sync::mpsc::channel();
    let writer = std::thread::spawn(move || {
        // The server may answer an oversized frame before reading all of it: a broken pipe
        // here is not a failure of the test.
        let _ = stdin.write_all(&all);
        drop(stdin);
        let _ = eof_tx.send(Instant::now());
    });
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        out.read_to_string(&mut text).unwrap();
        text
    });
    let mut err = child.stderr.take().unwrap();
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > DEADLINE {
            child.kill().unwrap();
            panic!("the server was still running after {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let exited = Instant::now();
    writer.join().unwrap();
    let eof = eof_rx.recv().unwrap();
    let stdout = reader.join().unwrap();
    let frames = stdout
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}"));
            assert_eq!(v["jsonrpc"], json!("2.0"), "{l}");
            v
        })
        .collect();
    Session {
        code: status.code().unwrap_or(-1),
        frames,
        stderr: err_reader.join().unwrap(),
        after_eof: exited.saturating_duration_since(eof),
    }
}

fn call(id: u64, tool: &str, args: Value) -> String {
    format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": tool, "arguments": args}})
    )
}

fn search(id: u64, query: &str) -> String {
    call(id, "librarian-search", json!({ "query": query }))
}

/// `n` distinct words, `w0 w1 …`.
fn words(n: usize) -> String {
    (0..n)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn an_oversized_frame_gets_an_error_for_its_id_and_the_server_keeps_serving() {
    let env = vault();
    let mut input = search(2, &"x ".repeat(LIMIT)).into_bytes();
    input.extend_from_slice(search(3, "gamma").as_bytes());
    let s = session(&env, &input);
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert_eq!(
        s.error(json!(2)),
        (
            -32600,
            format!("The request is larger than the server's limit of {LIMIT} bytes; it was not read. Send a smaller request.")
        )
    );
    assert!(
        s.text(json!(3)).starts_with("1. Gamma"),
        "{}",
        s.text(json!(3))
    );
    assert_eq!(s.frames.len(), 3, "{:?}", s.frames);
}

#[test]
fn an_oversized_frame_whose_id_comes_late_gets_an_error_without_an_id() {
    let env = vault();
    // Written by hand: serde_json would sort `id` first.
    let late = format!(
        r#"{{"params":{{"name":"librarian-search","arguments":{{"query":"{}"}}}},"jsonrpc":"2.0","method":"tools/call","id":2}}
"#,
        "y ".repeat(LIMIT)
    );
    let mut input = late.into_bytes();
    input.extend_from_slice(search(3, "alpha").as_bytes());
    let s = session(&env, &input);
    assert_eq!(s.code, 0);
    // MCP 2026-07-28, Error Responses: the id is left out when it cannot be read.
    let unnamed: Vec<&Value> = s.frames.iter().filter(|f| f.get("id").is_none()).collect();
    assert_eq!(unnamed.len(), 1, "{:?}", s.frames);
    assert_eq!(unnamed[0]["error"]["code"], json!(-32600));
    assert!(s.text(json!(3)).contains("Notes/a.md"));
}

#[test]
fn an_eight_megabyte_query_is_answered_and_the_server_exits_promptly() {
    let env = vault();
    let mut input = search(2, &"z ".repeat(4 << 20)).into_bytes();
    input.extend_from_slice(search(3, "beta").as_bytes());
    let s = session(&env, &input);
    assert_eq!(s.code, 0);
    assert_eq!(s.error(json!(2)).0, -32600);
    assert!(s.text(json!(3)).contains("Notes/b.md"));
    assert!(s.after_eof < PROMPT, "busy for {:?} after EOF", s.after_eof);
}

#[test]
fn a_long_query_under_the_frame_limit_is_cut_to_its_first_words_and_answered() {
    let env = vault();
    // 200 KB: this once took minutes in FTS5.
    let long = format!("alpha {}", words(40_000));
    assert!(long.len() > 200_000);
    let s = session(&env, search(2, &long).as_bytes());
    assert_eq!(s.code, 0);
    let text = s.text(json!(2));
    let searched = format!("alpha {}", words(31));
    // The note holding "alpha" is offered, as for any query no note holds whole.
    assert!(
        text.starts_with(&format!(
            "No note holds every word of \"{searched}\"; none holds \"w0\", "
        )),
        "{text}"
    );
    assert!(text.contains("   holds 1 word: alpha"), "{text}");
    assert!(
        text.ends_with(
            "\n\n(Only the first 32 words (at most 4096 bytes) of the query were searched.)"
        ),
        "{text}"
    );
    assert!(s.after_eof < PROMPT, "busy for {:?} after EOF", s.after_eof);
}

#[test]
fn a_query_of_one_long_word_is_cut_by_bytes_and_answered() {
    let env = vault();
    let s = session(&env, search(2, &"é".repeat(100_000)).as_bytes());
    let text = s.text(json!(2));
    assert_eq!(
        text,
        format!("No notes matched \"{}\".\n\n(Only the first 32 words (at most 4096 bytes) of the query were searched.)", "é".repeat(2048))
    );
}

#[test]
fn nul_and_control_characters_in_a_query_separate_words_and_are_never_an_error() {
    let env = vault();
    let mut input = search(2, "alpha\u{0}beta").into_bytes();
    input.extend_from_slice(search(3, "\u{0}").as_bytes());
    input.extend_from_slice(search(4, "gamma\u{1}\u{7f}\u{1b}\u{85}").as_bytes());
    let s = session(&env, &input);
    assert_eq!(s.code, 0);
    assert!(
        s.text(json!(2)).starts_with("1. Gamma"),
        "{}",
        s.text(json!(2))
    );
    // The query is one field on its line: its control is shown, not sent (spec/output.md).
    assert_eq!(s.text(json!(3)), "No notes matched \"\\u{0000}\".");
    assert!(
        s.text(json!(4)).starts_with("1. Gamma"),
        "{}",
        s.text(json!(4))
    );
}

#[test]
fn raw_bytes_that_are_not_utf8_or_are_control_characters_are_read_as_text() {
    let env = vault();
    let mut input = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"librarian-search","arguments":{"query":"gamma"#.to_vec();
    input.extend_from_slice(b"\xff\xfe\x01\x00\t");
    input.extend_from_slice(b"\"}}}\n");
    let s = session(&env, &input);
    assert!(
        s.text(json!(2)).starts_with("1. Gamma"),
        "{}",
        s.text(json!(2))
    );
}

#[test]
fn garbage_queries_are_plain_text() {
    let env = vault();
    let mut input = Vec::new();
    let queries = [
        "\"*()^-:",
        "NEAR(alpha beta)",
        "alpha OR 1=1; DROP TABLE notes; --",
        "\u{202e}\u{2028}\u{feff}",
        "{\"query\": [1]}",
        "",
    ];
    for (i, q) in queries.iter().enumerate() {
        input.extend_from_slice(search(10 + i as u64, q).as_bytes());
    }
    let s = session(&env, &input);
    for (i, q) in queries.iter().enumerate() {
        let text = s.text(json!(10 + i as u64));
        assert!(
            text.starts_with("No notes matched")
                || text.starts_with("No note holds every word")
                || text.starts_with("1. "),
            "{q:?}: {text}"
        );
    }
    // NEAR( is a word like any other: no note holds the phrase "near alpha", the notes holding
    // "beta" are offered.
    assert!(
        s.text(json!(11)).starts_with(
            "No note holds every word of \"NEAR(alpha beta)\"; none holds \"near alpha\". 2 notes hold"
        ),
        "{}",
        s.text(json!(11))
    );
}

#[test]
fn a_request_whose_params_is_not_an_object_gets_an_error_for_its_id() {
    let env = vault();
    let mut input = String::new();
    for (id, params) in [
        (2, json!([1, 2])),
        (3, json!("text")),
        (4, json!(7)),
        (5, json!(null)),
        (6, json!(true)),
    ] {
        input.push_str(&format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
        ));
    }
    input.push_str(r#"{"jsonrpc":"2.0","id":"list","method":"tools/list","params":"x"}"#);
    input.push('\n');
    input.push_str(&search(7, "alpha"));
    let s = session(&env, input.as_bytes());
    assert_eq!(s.code, 0);
    for id in [json!(2), json!(3), json!(4), json!(6), json!("list")] {
        assert_eq!(s.error(id), (-32602, "`params` must be an object.".into()));
    }
    // `params: null` reads as no params at all.
    assert_eq!(
        s.error(json!(5)),
        (
            -32602,
            "Invalid params for tools/call: `params` with the tool's `name` is required.".into()
        )
    );
    assert!(s.text(json!(7)).contains("Notes/a.md"));
}

#[test]
fn tool_calls_of_the_wrong_shape_are_invalid_params_and_bad_arguments_tool_errors() {
    let env = vault();
    let input = [
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":7}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"librarian-search","arguments":[1]}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"librarian-search","arguments":{"query":["a"]}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"librarian-search","arguments":{"query":"a","limit":1e9}}}"#,
    ]
    .join("\n");
    let s = session(&env, format!("{input}\n").as_bytes());
    for id in 2..=4 {
        let (code, message) = s.error(json!(id));
        assert_eq!(code, -32602, "{id}: {message}");
        assert!(
            message.starts_with("Invalid params for tools/call: "),
            "{message}"
        );
    }
    // The request is well formed, its arguments are not: a tool error the model can act on.
    let tail = ". Nothing was done; call it again with the arguments corrected (tools/list has the schema).";
    assert_eq!(
        s.tool_error(json!(5)),
        format!("Invalid arguments for librarian-search: `query` must be a string{tail}")
    );
    assert_eq!(
        s.tool_error(json!(6)),
        format!(
            "Invalid arguments for librarian-search: `limit` must be an integer from 1 to 50{tail}"
        )
    );
}

#[test]
fn a_frame_that_is_not_json_but_names_its_id_gets_a_parse_error() {
    let env = vault();
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":41,"method":"tools/list","params":{"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"librarian-search","arguments":{"query":"\ud800"}}}"#,
        "\n",
        "{not json at all}\n",
        "\u{1b}[2J\n",
        r#"{"jsonrpc":"2.0","id":43,"method":"tools/list"}"#,
        "\n"
    );
    let s = session(&env, input.as_bytes());
    let (code, message) = s.error(json!(41));
    assert_eq!(code, -32700);
    assert!(message.starts_with("Parse error: "), "{message}");
    assert_eq!(
        s.error(json!("s")).0,
        -32700,
        "a lone surrogate is not JSON text"
    );
    assert_eq!(
        s.reply(json!(43))["result"]["tools"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    // Noise that names no id gets nothing: initialize, 41, "s" and 43 only.
    assert_eq!(s.frames.len(), 4, "{:?}", s.frames);
}

#[test]
fn many_requests_then_end_of_input_are_all_answered() {
    let env = vault();
    let mut input = String::new();
    for i in 0..150u64 {
        input.push_str(&search(
            100 + i,
            &format!("alpha {}", words((i % 40) as usize)),
        ));
        input.push_str(&call(
            1000 + i,
            "librarian-get-note",
            json!({"path": "Notes/c.md"}),
        ));
    }
    for i in 0..50u64 {
        input.push_str(&call(
            2000 + i,
            "librarian-recent",
            json!({"query": words(500)}),
        ));
    }
    // The last frame has no newline: it is read all the same.
    input.push_str(search(3000, "gamma").trim_end());
    let s = session(&env, input.as_bytes());
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert_eq!(s.frames.len(), 1 + 150 + 150 + 50 + 1);
    for i in 0..150u64 {
        let text = s.text(json!(100 + i));
        assert!(
            text.starts_with("1. ")
                || text.starts_with("No notes matched")
                || text.starts_with("No note holds every word"),
            "{text}"
        );
        assert!(s.text(json!(1000 + i)).starts_with("# Gamma"));
    }
    for i in 0..50u64 {
        assert_eq!(s.text(json!(2000 + i)), s.text(json!(2000)));
    }
    assert!(s.text(json!(3000)).starts_with("1. Gamma"));
    assert!(s.after_eof < Duration::from_secs(30), "{:?}", s.after_eof);
}

#[test]
fn the_cli_search_cuts_a_long_query_and_says_so() {
    let env = vault();
    let long = format!("gamma {}", "alpha ".repeat(15_000));
    let started = Instant::now();
    let r = env.rutter(&["search", "--", &long]);
    assert!(started.elapsed() < PROMPT, "{:?}", started.elapsed());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("1. Gamma"), "{}", r.stdout);
    assert_eq!(
        r.stderr,
        "git-rutter: Only the first 32 words (at most 4096 bytes) of the query were searched. Ask with fewer words.\n"
    );
    let short = env.rutter(&["search", "gamma", "\u{1}alpha"]);
    assert_eq!((short.code, short.stderr.as_str()), (0, ""));
    assert!(short.stdout.starts_with("1. Gamma"), "{}", short.stdout);
}

/// What a client sends comes back inert in every miss message: a path or a project holding an
/// escape sequence or a line break is shown escaped (spec/output.md, "One field, one line"),
/// as `librarian-search` already showed its query.
#[test]
fn miss_messages_show_what_the_client_sent_as_one_inert_field() {
    let env = vault();
    let r = env.capture_at("2026-11-30T10:00:00.000Z", "Chose a plan.", &["Notes/a.md"]);
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    let mut input = call(
        2,
        "librarian-get-note",
        json!({"path": "\u{1b}[31mred\nFAKE: line"}),
    );
    input.push_str(&call(
        3,
        "librarian-recent",
        json!({"project": "nomatch\nx"}),
    ));
    input.push_str(&call(
        4,
        "librarian-recent",
        json!({"query": "\u{1b}[31mred"}),
    ));
    let s = session(&env, input.as_bytes());
    assert_eq!(s.code, 0, "{}", s.stderr);
    for id in 2..=4 {
        let frame = s
            .frames
            .iter()
            .find(|f| f["id"] == json!(id))
            .unwrap_or_else(|| panic!("no answer for {id}: {:?}", s.frames));
        let text = frame["result"]["content"][0]["text"].as_str().unwrap();
        assert!(!text.chars().any(char::is_control), "{id}: {text:?}");
        assert!(text.contains(r"\u{00"), "{id}: {text:?}");
    }
}
