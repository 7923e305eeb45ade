//! Claude Code JSONL transcripts: the current turn, read backwards from the end within a byte
//! budget, and the session directives the main agent wrote in it (DESIGN §4; spec/capture.md,
//! "The current turn"). The cost depends on the length of the turn, not of the file.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use memchr::memmem;

use crate::capture::directive::{directives_in, Directive, Directives, Scanner};
use crate::capture::transcript_line::{classify, LineKind};

/// The default number of bytes read from the end of a transcript.
pub(crate) const DEFAULT_BUDGET: u64 = 8 * 1024 * 1024;
const CHUNK: usize = 64 * 1024;
/// Messages without these bytes hold no directive and are not scanned.
const NEEDLE: &[u8] = b"librarian-session";

/// The current turn of a transcript.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Turn {
    /// The text of each message the main agent wrote in the turn, in file order; the text
    /// blocks of one message (one `message.id`, on one line or streamed over several) are
    /// joined with nothing between them.
    pub messages: Vec<String>,
    /// The budget ran out before the prompt that starts the turn (or the start of the file):
    /// earlier text of the turn was not read.
    pub budget_exhausted: bool,
}

/// The directives of the current turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TurnDirectives {
    pub directives: Directives,
    /// As [`Turn::budget_exhausted`].
    pub budget_exhausted: bool,
}

/// Why a transcript could not be scanned at all.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TranscriptError {
    #[error("cannot read transcript {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("transcript {0} is not a regular file")]
    NotAFile(String),
}

/// Every directive the main agent wrote in the current turn, outside code, in order.
///
/// Claude Code can run the Stop hook before the turn's final message is flushed to the
/// transcript; its payload then carries that message as `final_message`. Its directives that
/// the transcript does not hold yet are added at the end (its malformed ones are not counted:
/// the transcript is the source, the payload only fills the gap).
pub(crate) fn turn_directives(
    path: &Path,
    budget: u64,
    final_message: Option<&str>,
) -> Result<TurnDirectives, TranscriptError> {
    let (turn, _) = read_turn(path, budget)?;
    let mut directives = scan_messages(&turn.messages);
    if let Some(text) = final_message {
        let missing: Vec<Directive> = directives_in(text)
            .found
            .into_iter()
            .filter(|d| !directives.found.contains(d))
            .collect();
        directives.found.extend(missing);
    }
    Ok(TurnDirectives {
        directives,
        budget_exhausted: turn.budget_exhausted,
    })
}

/// The directives of `messages`, in order; only messages holding the tag are scanned.
pub(crate) fn scan_messages(messages: &[String]) -> Directives {
    let needle = memmem::Finder::new(NEEDLE);
    let mut scanner = Scanner::default();
    let mut out = Directives::default();
    for text in messages {
        if needle.find(text.as_bytes()).is_some() {
            scanner.scan(text, &mut out);
        }
    }
    out
}

/// Reads the transcript BACKWARDS from its end, at most `budget` bytes, back to the last prompt
/// in the user's own words, and returns the main agent's messages after it; also the number of
/// bytes read.
pub(crate) fn read_turn(path: &Path, budget: u64) -> Result<(Turn, u64), TranscriptError> {
    read_turn_by(path, budget, &mut classify)
}

/// [`read_turn`] for any JSONL log whose lines `classify` sorts into prompts, agent text and the
/// rest (the Claude Code transcript, Copilot's `events.jsonl`, agy's transcript). `classify` is
/// called on complete lines, newest first.
pub(crate) fn read_turn_by(
    path: &Path,
    budget: u64,
    classify: &mut dyn FnMut(&[u8]) -> LineKind,
) -> Result<(Turn, u64), TranscriptError> {
    let (mut file, len) = open_regular(path)?;
    let mut pieces: Vec<(Option<String>, String)> = Vec::new();
    let walk = walk_lines_backwards(&mut file, len, budget, &mut |line| match classify(line) {
        LineKind::Prompt => true,
        LineKind::AgentText { message_id, text } => {
            pieces.push((message_id, text));
            false
        }
        LineKind::Other => false,
    })
    .map_err(|source| TranscriptError::Read {
        path: path.display().to_string(),
        source,
    })?;
    pieces.reverse();
    let turn = Turn {
        messages: join_messages(pieces),
        budget_exhausted: walk.exhausted,
    };
    Ok((turn, walk.bytes_read))
}

/// Joins the text pieces of each message id, in file order, with nothing between them; a piece
/// without an id is a message of its own.
fn join_messages(pieces: Vec<(Option<String>, String)>) -> Vec<String> {
    let mut messages: Vec<String> = Vec::new();
    let mut slot: HashMap<String, usize> = HashMap::new();
    for (id, text) in pieces {
        if let Some(id) = id {
            if let Some(&i) = slot.get(&id) {
                messages[i].push_str(&text);
                continue;
            }
            slot.insert(id, messages.len());
        }
        messages.push(text);
    }
    messages
}

/// Opens the transcript with [`super::open_regular`]; its length comes with it.
fn open_regular(path: &Path) -> Result<(File, u64), TranscriptError> {
    let shown = || path.display().to_string();
    match super::open_regular(path) {
        Ok(Some(opened)) => Ok(opened),
        Ok(None) => Err(TranscriptError::NotAFile(shown())),
        Err(source) => Err(TranscriptError::Read {
            path: shown(),
            source,
        }),
    }
}

/// How a backwards walk ended.
struct Walk {
    /// The budget ran out before the start of the file.
    exhausted: bool,
    bytes_read: u64,
}

/// Calls `visit` on each complete line (without its `\n`), newest first, until it returns true,
/// the start of the file is reached, or `budget` bytes have been read. A line that does not fit
/// in the budget is never visited.
fn walk_lines_backwards<R: Read + Seek>(
    src: &mut R,
    len: u64,
    budget: u64,
    visit: &mut dyn FnMut(&[u8]) -> bool,
) -> io::Result<Walk> {
    let mut pos = len;
    let mut bytes_read = 0u64;
    // The line that continues past the current chunk, as fragments newest first.
    let mut partial: Vec<Vec<u8>> = Vec::new();
    let mut buf = vec![0u8; CHUNK];
    loop {
        let want = pos.min(budget - bytes_read).min(CHUNK as u64);
        if want == 0 {
            let exhausted = pos > 0;
            if !exhausted && !partial.is_empty() {
                visit(&join_fragments(&mut partial));
            }
            return Ok(Walk {
                exhausted,
                bytes_read,
            });
        }
        pos -= want;
        // `want` is at most CHUNK, so it fits in usize.
        let chunk = &mut buf[..want as usize];
        src.seek(SeekFrom::Start(pos))?;
        src.read_exact(chunk)?;
        bytes_read += want;
        let mut end = chunk.len();
        while let Some(nl) = memchr::memrchr(b'\n', &chunk[..end]) {
            let piece = &chunk[nl + 1..end];
            let stop = if partial.is_empty() {
                visit(piece)
            } else {
                partial.push(piece.to_vec());
                visit(&join_fragments(&mut partial))
            };
            if stop {
                return Ok(Walk {
                    exhausted: false,
                    bytes_read,
                });
            }
            end = nl;
        }
        if end > 0 {
            partial.push(chunk[..end].to_vec());
        }
    }
}

/// Concatenates fragments stored newest first into file order, emptying `partial`.
fn join_fragments(partial: &mut Vec<Vec<u8>>) -> Vec<u8> {
    let mut line = Vec::with_capacity(partial.iter().map(Vec::len).sum());
    for fragment in partial.drain(..).rev() {
        line.extend_from_slice(&fragment);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{json, Value};
    use std::io::{BufWriter, Write};

    const DIRECTIVE: &str =
        r#"<!-- librarian-session {"summary":"Chose A over B","refs":["a.md"]} -->"#;

    fn directive(summary: &str) -> String {
        format!(
            "<!-- librarian-session {} -->",
            json!({"summary": summary, "refs": ["a.md"]})
        )
    }

    fn user(text: &str) -> String {
        json!({"type": "user", "message": {"role": "user", "content": text}}).to_string()
    }

    fn tool_result() -> String {
        json!({"type": "user", "message": {"role": "user", "content": [
            {"tool_use_id": "toolu_1", "type": "tool_result", "content": DIRECTIVE}
        ]}})
        .to_string()
    }

    fn assistant_blocks(texts: &[&str]) -> String {
        let mut blocks: Vec<Value> = texts
            .iter()
            .map(|t| json!({"type": "text", "text": t}))
            .collect();
        blocks.push(
            json!({"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "/x"}}),
        );
        json!({"type": "assistant", "message": {"role": "assistant", "content": blocks}})
            .to_string()
    }

    /// One streamed line of message `id`: a single text block.
    fn streamed(id: &str, text: &str) -> String {
        json!({"type": "assistant", "message": {"id": id, "role": "assistant",
               "content": [{"type": "text", "text": text}]}})
        .to_string()
    }

    fn assistant_string(text: &str) -> String {
        json!({"type": "assistant", "message": {"role": "assistant", "content": text}}).to_string()
    }

    fn write_temp(bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, bytes).expect("write");
        (dir, path)
    }

    fn turn_of(bytes: &[u8], budget: u64) -> (Turn, u64) {
        let (_dir, path) = write_temp(bytes);
        read_turn(&path, budget).expect("read")
    }

    fn directives_of(lines: &[String], sep: &str, trailing: bool) -> Directives {
        let mut text = lines.join(sep);
        if trailing {
            text.push_str(sep);
        }
        scan_messages(&turn_of(text.as_bytes(), DEFAULT_BUDGET).0.messages)
    }

    fn found(summaries: &[&str], malformed: usize, templates: usize) -> Directives {
        Directives {
            found: summaries
                .iter()
                .map(|s| Directive {
                    summary: (*s).into(),
                    refs: vec!["a.md".into()],
                    supersedes: vec![],
                })
                .collect(),
            malformed,
            too_long: 0,
            templates,
            positions: 0,
        }
    }

    #[test]
    fn turn_shapes() {
        let none = Directives::default();
        let chose = found(&["Chose A over B"], 0, 0);
        let (d1, d2, d3) = (directive("One."), directive("Two."), directive("Three."));
        let split_at = d1.find("On").expect("summary");
        let cases: Vec<(Vec<String>, Directives)> = vec![
            (vec![], none.clone()),
            (vec![user("hi"), assistant_blocks(&["hello"])], none.clone()),
            (vec![user("hi"), assistant_string(&format!("Done. {DIRECTIVE}"))], chose.clone()),
            (vec![user("hi"), assistant_blocks(&["Done.", DIRECTIVE])], chose.clone()),
            // Every directive of the turn, in order, across messages and tool calls.
            (
                vec![user("go"), assistant_blocks(&[&d1]), tool_result(), assistant_blocks(&[&d2, &d3])],
                found(&["One.", "Two.", "Three."], 0, 0),
            ),
            // Nothing before the last prompt: a resumed session's copied history.
            (vec![assistant_blocks(&[DIRECTIVE]), user("and now?")], none.clone()),
            (vec![user("a"), assistant_blocks(&[&d1]), user("b"), assistant_blocks(&["no decision"])], none.clone()),
            (vec![user("a"), assistant_blocks(&[&d1]), user("b"), assistant_blocks(&[&d2])], found(&["Two."], 0, 0)),
            // Lines that are not prompts do not start a turn.
            (
                vec![
                    user("a"),
                    assistant_blocks(&[&d1]),
                    json!({"type": "user", "isMeta": true, "message": {"role": "user", "content": "caveat"}}).to_string(),
                    json!({"type": "user", "isCompactSummary": true, "message": {"role": "user", "content": "summary"}}).to_string(),
                    json!({"type": "user", "isSidechain": true, "message": {"role": "user", "content": "subtask"}}).to_string(),
                    json!({"type": "summary", "summary": "s", "leafUuid": "u"}).to_string(),
                    assistant_blocks(&[&d2]),
                ],
                found(&["One.", "Two."], 0, 0),
            ),
            // A subagent's text is not the main agent's.
            (
                vec![
                    user("a"),
                    assistant_blocks(&[&d1]),
                    json!({"type": "assistant", "isSidechain": true, "message": {"role": "assistant", "content": [{"type": "text", "text": d2}]}}).to_string(),
                ],
                found(&["One."], 0, 0),
            ),
            (vec![user(DIRECTIVE)], none.clone()),
            (vec![user("a"), tool_result()], none.clone()),
            (vec![assistant_blocks(&[DIRECTIVE]), assistant_blocks(&["<!-- librarian-session {bad -->"])], found(&["Chose A over B"], 1, 0)),
            (vec![assistant_blocks(&["<!-- librarian-session {bad -->"])], found(&[], 1, 0)),
            (vec![assistant_string(r#"<!-- librarian-session {"summary":"<one line>"} -->"#)], found(&[], 0, 1)),
            // Blocks of one message are joined with nothing between them: on one line, or
            // streamed over several lines with one message id, even split inside the summary
            // or the tag.
            (vec![assistant_blocks(&["<!-- librarian-session ", &DIRECTIVE[23..]])], chose.clone()),
            (vec![assistant_blocks(&[&d1[..split_at + 1], &d1[split_at + 1..]])], found(&["One."], 0, 0)),
            (
                vec![user("a"), streamed("msg_1", &d1[..split_at + 1]), tool_result(), streamed("msg_1", &d1[split_at + 1..])],
                found(&["One."], 0, 0),
            ),
            (vec![streamed("m", "<!-- librarian-ses"), streamed("m", &DIRECTIVE[18..])], chose.clone()),
            // Two messages are never joined.
            (vec![streamed("m1", &d1[..split_at + 1]), streamed("m2", &d1[split_at + 1..])], found(&[], 1, 0)),
            // Code is not a decision.
            (vec![assistant_string(&format!("Like this:\n```\n{d1}\n```\nor `{d2}`."))], none.clone()),
            // A directive in a tool input is not the agent's text.
            (vec![json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","input":{"x":DIRECTIVE}}]}}).to_string()], none.clone()),
            (vec![json!({"type":"assistant","message":{"content":DIRECTIVE}}).to_string()], chose.clone()),
            (vec![json!({"type":"user","message":{"content":DIRECTIVE}}).to_string()], none.clone()),
            (vec![assistant_blocks(&[&d1]), "{not json librarian-session".into(), String::new()], found(&["One."], 0, 0)),
        ];
        for (lines, want) in cases {
            for (sep, trailing) in [("\n", true), ("\n", false), ("\r\n", true), ("\r\n", false)] {
                assert_eq!(
                    directives_of(&lines, sep, trailing),
                    want,
                    "lines {lines:?} sep {sep:?} trailing {trailing}"
                );
            }
        }
    }

    #[test]
    fn the_payloads_final_message_fills_what_the_transcript_has_not_flushed() {
        let (d1, d2) = (directive("One."), directive("Two."));
        let lines = [user("go"), assistant_blocks(&[&d1])].join("\n");
        let (_dir, path) = write_temp(lines.as_bytes());
        let scan = |final_message: Option<&str>| {
            turn_directives(&path, DEFAULT_BUDGET, final_message)
                .expect("read")
                .directives
        };
        assert_eq!(scan(None), found(&["One."], 0, 0));
        // Flushed already: nothing twice.
        assert_eq!(scan(Some(&format!("Done. {d1}"))), found(&["One."], 0, 0));
        // Not flushed yet: its new directives come last; its malformed ones are not counted.
        assert_eq!(
            scan(Some(&format!("{d1} {d2} <!-- librarian-session {{bad -->"))),
            found(&["One.", "Two."], 0, 0)
        );
        assert_eq!(scan(Some(&format!("`{d2}`"))), found(&["One."], 0, 0));
    }

    #[test]
    fn file_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = turn_directives(&dir.path().join("nope.jsonl"), DEFAULT_BUDGET, None);
        assert!(
            matches!(missing, Err(TranscriptError::Read { .. })),
            "{missing:?}"
        );
        let is_dir = turn_directives(dir.path(), DEFAULT_BUDGET, None);
        assert!(
            matches!(is_dir, Err(TranscriptError::NotAFile(_))),
            "{is_dir:?}"
        );
    }

    #[test]
    fn fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("fifo");
        crate::fsx::testing::fifo(&path);
        let got = turn_directives(&path, DEFAULT_BUDGET, None);
        assert!(matches!(got, Err(TranscriptError::NotAFile(_))), "{got:?}");
    }

    #[test]
    fn binary_garbage_is_not_found() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut bytes: Vec<u8> = (0..300_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state.to_le_bytes()[0]
            })
            .collect();
        for at in (0..bytes.len() - 100).step_by(7919) {
            bytes[at..at + NEEDLE.len()].copy_from_slice(NEEDLE);
        }
        let (turn, _) = turn_of(&bytes, DEFAULT_BUDGET);
        assert_eq!(scan_messages(&turn.messages), Directives::default());
        assert!(!turn.budget_exhausted);
    }

    #[test]
    fn long_lines_and_budget_edges() {
        let chose = found(&["Chose A over B"], 0, 0);
        let long = assistant_string(&format!("{} {DIRECTIVE}", "x".repeat(3 * CHUNK)));
        let text = format!("{}\n{long}\n{}\n", user("u"), assistant_string("v"));
        let len = text.len() as u64;
        let scan = |budget| {
            let (turn, read) = turn_of(text.as_bytes(), budget);
            (scan_messages(&turn.messages), turn.budget_exhausted, read)
        };
        assert_eq!(scan(len), (chose.clone(), false, len));
        // The prompt is not read, but the whole directive line and the newline before it are:
        // found, and the budget said to have run out.
        let short = len - user("u").len() as u64;
        assert_eq!(scan(short), (chose.clone(), true, short));
        // Not enough budget for the whole long line: it is skipped.
        assert_eq!(scan(short - 1).0, Directives::default());
        assert_eq!(scan(0), (Directives::default(), true, 0));
        let (turn, read) = turn_of(b"", 0);
        assert_eq!((turn, read), (Turn::default(), 0));
        // The first line of the file is visited when the budget ends exactly at its start.
        let first = format!("{long}\n{}", assistant_string("v"));
        let (turn, _) = turn_of(first.as_bytes(), first.len() as u64);
        assert_eq!(scan_messages(&turn.messages), chose);
    }

    /// Writes `first`, then filler lines up to 50 MB, to a file.
    fn big_transcript(dir: &Path, first: &str, filler: &str) -> std::path::PathBuf {
        let path = dir.join("big.jsonl");
        let mut out = BufWriter::new(File::create(&path).expect("create"));
        writeln!(out, "{first}").expect("write");
        let mut written = 0;
        while written < 50 * 1024 * 1024 {
            out.write_all(filler.as_bytes()).expect("write");
            written += filler.len();
        }
        out.flush().expect("flush");
        path
    }

    fn append(path: &Path, line: &str) {
        let mut out = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .expect("open");
        writeln!(out, "{line}").expect("append");
    }

    #[test]
    fn cost_depends_on_the_turn_not_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let chose = found(&["Chose A over B"], 0, 0);
        // Turns of one prompt and one answer: only the last turn is read.
        let filler = format!(
            "{}\n{}\n",
            user(&"lorem ipsum ".repeat(40)),
            assistant_blocks(&[&"dolor sit amet ".repeat(60), "ok"])
        );
        let path = big_transcript(dir.path(), &assistant_blocks(&[DIRECTIVE]), &filler);
        let (turn, read) = read_turn(&path, DEFAULT_BUDGET).expect("read");
        assert_eq!(scan_messages(&turn.messages), Directives::default());
        assert!(!turn.budget_exhausted);
        assert!(read <= 64 * 1024, "read {read} bytes");
        append(&path, &user("decide"));
        append(&path, &assistant_string(&format!("Done.\n\n{DIRECTIVE}")));
        let (turn, read) = read_turn(&path, DEFAULT_BUDGET).expect("read");
        assert_eq!(scan_messages(&turn.messages), chose);
        assert!(read <= 64 * 1024, "read {read} bytes");

        // One endless turn: the budget bounds the read, and what was read is scanned.
        let filler = format!("{}\n{}\n", tool_result(), assistant_blocks(&["working"]));
        let path = big_transcript(dir.path(), &assistant_blocks(&[DIRECTIVE]), &filler);
        append(&path, &assistant_string(&format!("Done.\n\n{DIRECTIVE}")));
        let (turn, read) = read_turn(&path, DEFAULT_BUDGET).expect("read");
        assert_eq!(read, DEFAULT_BUDGET);
        assert!(turn.budget_exhausted);
        assert_eq!(scan_messages(&turn.messages), chose);
    }

    /// What the backwards walk must visit: every line after a `\n` that lies within the last
    /// `budget` bytes, newest first, then the first line when the whole file was read and it
    /// is not empty.
    fn model(data: &[u8], budget: u64) -> Vec<Vec<u8>> {
        let from = data.len() - (budget.min(data.len() as u64) as usize);
        let mut starts: Vec<usize> = vec![0];
        starts.extend(
            data.iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1),
        );
        let mut out = Vec::new();
        for (k, &start) in starts.iter().enumerate().rev() {
            let end = starts.get(k + 1).map_or(data.len(), |next| next - 1);
            let visible = if k == 0 {
                from == 0 && end > 0
            } else {
                start > from
            };
            if visible {
                out.push(data[start..end].to_vec());
            }
        }
        out
    }

    fn data() -> impl Strategy<Value = Vec<u8>> {
        // Lines up to 1.5 chunks long, so lines cross chunk boundaries.
        prop::collection::vec((0usize..CHUNK * 3 / 2, any::<u8>()), 0..6).prop_map(|lines| {
            let mut out = Vec::new();
            for (len, fill) in lines {
                out.extend(std::iter::repeat_n(
                    if fill == b'\n' { b'x' } else { fill },
                    len,
                ));
                out.push(b'\n');
            }
            if out.len() % 3 == 0 {
                out.pop();
            }
            out
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        #[test]
        fn walking_backwards_visits_exactly_the_lines_within_the_budget(
            data in data(),
            budget_frac in 0.0f64..1.2,
        ) {
            let budget = (data.len() as f64 * budget_frac) as u64;
            let mut seen = Vec::new();
            let mut src = std::io::Cursor::new(&data);
            let walk = walk_lines_backwards(&mut src, data.len() as u64, budget, &mut |l| {
                seen.push(l.to_vec());
                false
            })
            .expect("walk");
            prop_assert!(walk.bytes_read <= budget);
            prop_assert_eq!(seen, model(&data, budget));
        }

        #[test]
        fn reading_arbitrary_bytes_never_panics_and_keeps_to_the_budget(
            data in prop::collection::vec(any::<u8>(), 0..4096),
            budget in 0u64..5000,
        ) {
            let (turn, read) = turn_of(&data, budget);
            prop_assert!(read <= budget);
            let _ = scan_messages(&turn.messages);
        }
    }
}
