//! Claude Code JSONL transcripts: reading one backwards from its end within a byte budget and
//! returning the newest session directive in assistant-authored text (DESIGN §4; anchor-behaviour
//! §7 minus user text). The cost depends on how far back the directive is, not on file length.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use memchr::memmem;
use serde_json::Value;

use crate::capture::directive::{newest_directive, Directive, DirectiveScan};

/// The default number of bytes read from the end of a transcript.
pub const DEFAULT_BUDGET: u64 = 8 * 1024 * 1024;
const CHUNK: usize = 64 * 1024;
/// Lines without these bytes are never JSON-parsed.
const NEEDLE: &[u8] = b"librarian-session";

/// The outcome of scanning a transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TranscriptScan {
    /// The newest well-formed assistant directive.
    Found(Directive),
    /// The newest well-formed assistant directive is an unfilled template or blank.
    Template,
    /// Assistant text within the budget held directive openers, but none parsed.
    Malformed,
    /// No directive in assistant text within the budget; `budget_exhausted` says the budget ran
    /// out before the start of the file.
    NotFound { budget_exhausted: bool },
}

/// Why a transcript could not be scanned at all.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    #[error("cannot read transcript {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("transcript {0} is not a regular file")]
    NotAFile(String),
}

/// Reads the transcript BACKWARDS from its end, at most `budget` bytes, and returns the newest
/// directive found in ASSISTANT-authored text only (`message.role == "assistant"`, or top-level
/// `type == "assistant"` when the role is missing). User text is never scanned.
pub fn newest_assistant_directive(
    path: &Path,
    budget: u64,
) -> Result<TranscriptScan, TranscriptError> {
    scan_file(path, budget).map(|(scan, _bytes_read)| scan)
}

/// The text of one parsed transcript line if it is assistant-authored: `message.content` as a
/// string, or the `text` string fields of its array blocks joined with `"\n"`.
pub fn assistant_text(line: &Value) -> Option<String> {
    let message = line.get("message")?;
    let is_assistant = match message.get("role").and_then(Value::as_str) {
        Some(role) => role == "assistant",
        None => line.get("type").and_then(Value::as_str) == Some("assistant"),
    };
    if !is_assistant {
        return None;
    }
    match message.get("content")? {
        Value::String(text) => Some(text.clone()),
        Value::Array(blocks) => Some(
            blocks
                .iter()
                .filter_map(|block| block.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// The scan plus the number of bytes read from the file.
fn scan_file(path: &Path, budget: u64) -> Result<(TranscriptScan, u64), TranscriptError> {
    let read_err = |source| TranscriptError::Read {
        path: path.display().to_string(),
        source,
    };
    let (mut file, len) = open_regular(path)?;
    let needle = memmem::Finder::new(NEEDLE);
    let mut found = None;
    let mut malformed = false;
    let walk = walk_lines_backwards(&mut file, len, budget, &mut |line| {
        match scan_line(line, &needle) {
            DirectiveScan::Found(d) => found = Some(TranscriptScan::Found(d)),
            DirectiveScan::Template => found = Some(TranscriptScan::Template),
            DirectiveScan::Malformed => malformed = true,
            DirectiveScan::None => {}
        }
        found.is_some()
    })
    .map_err(read_err)?;
    let scan = match found {
        Some(scan) => scan,
        None if malformed => TranscriptScan::Malformed,
        None => TranscriptScan::NotFound {
            budget_exhausted: walk.exhausted,
        },
    };
    Ok((scan, walk.bytes_read))
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

/// One line's verdict; cheap unless the line holds the directive tag (`needle` finds it).
fn scan_line(line: &[u8], needle: &memmem::Finder<'_>) -> DirectiveScan {
    if needle.find(line).is_none() {
        return DirectiveScan::None;
    }
    let Ok(value) = serde_json::from_slice::<Value>(line) else {
        return DirectiveScan::None;
    };
    match assistant_text(&value) {
        Some(text) => newest_directive(&text),
        None => DirectiveScan::None,
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
    use serde_json::json;
    use std::io::{BufWriter, Write};

    const DIRECTIVE: &str =
        r#"<!-- librarian-session {"summary":"Chose A over B","refs":["a.md"]} -->"#;

    fn chose() -> TranscriptScan {
        TranscriptScan::Found(Directive {
            summary: "Chose A over B".into(),
            refs: vec!["a.md".into()],
        })
    }

    fn user(text: &str) -> String {
        json!({"type": "user", "message": {"role": "user", "content": text}}).to_string()
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

    fn assistant_string(text: &str) -> String {
        json!({"type": "assistant", "message": {"role": "assistant", "content": text}}).to_string()
    }

    fn scan_bytes(bytes: &[u8], budget: u64) -> (TranscriptScan, u64) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, bytes).expect("write");
        scan_file(&path, budget).expect("scan")
    }

    fn scan_lines(lines: &[String], sep: &str, trailing: bool) -> TranscriptScan {
        let mut text = lines.join(sep);
        if trailing {
            text.push_str(sep);
        }
        scan_bytes(text.as_bytes(), DEFAULT_BUDGET).0
    }

    #[test]
    fn line_shapes() {
        let not_found = TranscriptScan::NotFound {
            budget_exhausted: false,
        };
        let other = format!("Done.\n\n{}", DIRECTIVE.replace("Chose A over B", "Older"));
        let older = TranscriptScan::Found(Directive {
            summary: "Older".into(),
            refs: vec!["a.md".into()],
        });
        let cases: Vec<(Vec<String>, TranscriptScan)> = vec![
            (vec![], not_found.clone()),
            (vec![user("hi"), assistant_blocks(&["hello"])], not_found.clone()),
            (vec![user("hi"), assistant_string(&format!("Done. {DIRECTIVE}"))], chose()),
            (vec![user("hi"), assistant_blocks(&["Done.", DIRECTIVE])], chose()),
            (vec![assistant_blocks(&[DIRECTIVE]), user(&other)], chose()),
            (vec![user(DIRECTIVE)], not_found.clone()),
            (vec![assistant_blocks(&[&other]), assistant_blocks(&[DIRECTIVE])], chose()),
            (vec![assistant_blocks(&[DIRECTIVE]), assistant_blocks(&["<!-- librarian-session {bad -->"])], chose()),
            (vec![assistant_blocks(&["<!-- librarian-session {bad -->"])], TranscriptScan::Malformed),
            (vec![assistant_blocks(&[&other]), assistant_string(r#"<!-- librarian-session {"summary":"<one line>"} -->"#)], TranscriptScan::Template),
            // The opener in one block and the rest in the next: blocks are joined with "\n".
            (vec![assistant_blocks(&["<!-- librarian-session", r#"{"summary":"Chose A over B","refs":["a.md"]} -->"#])], chose()),
            // A directive in a tool input is not assistant text.
            (vec![json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","input":{"x":DIRECTIVE}}]}}).to_string()], not_found.clone()),
            // Role missing: the top-level type decides.
            (vec![json!({"type":"assistant","message":{"content":DIRECTIVE}}).to_string()], chose()),
            (vec![json!({"type":"user","message":{"content":DIRECTIVE}}).to_string()], not_found.clone()),
            (vec![json!({"type":"assistant","message":{"role":"user","content":DIRECTIVE}}).to_string()], not_found.clone()),
            (vec![assistant_blocks(&[&other]), "{not json librarian-session".into(), String::new()], older),
        ];
        for (lines, want) in cases {
            for (sep, trailing) in [("\n", true), ("\n", false), ("\r\n", true), ("\r\n", false)] {
                assert_eq!(
                    scan_lines(&lines, sep, trailing),
                    want,
                    "lines {lines:?} sep {sep:?} trailing {trailing}"
                );
            }
        }
    }

    #[test]
    fn assistant_text_shapes() {
        assert_eq!(
            assistant_text(&json!({"message": {"role": "assistant", "content": "s"}})),
            Some("s".into())
        );
        assert_eq!(
            assistant_text(
                &json!({"message": {"role": "assistant", "content": [{"text": "a"}, {"thinking": "t"}, {"text": 5}, {"type": "text", "text": "b"}]}})
            ),
            Some("a\nb".into())
        );
        assert_eq!(
            assistant_text(&json!({"message": {"role": "assistant", "content": 3}})),
            None
        );
        assert_eq!(assistant_text(&json!({"type": "assistant"})), None);
        assert_eq!(assistant_text(&json!([1, 2])), None);
        assert_eq!(
            assistant_text(&json!({"message": {"role": "user", "content": "s"}})),
            None
        );
    }

    #[test]
    fn file_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = newest_assistant_directive(&dir.path().join("nope.jsonl"), DEFAULT_BUDGET);
        assert!(
            matches!(missing, Err(TranscriptError::Read { .. })),
            "{missing:?}"
        );
        let is_dir = newest_assistant_directive(dir.path(), DEFAULT_BUDGET);
        assert!(
            matches!(is_dir, Err(TranscriptError::NotAFile(_))),
            "{is_dir:?}"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("fifo");
        let mode = rustix::fs::Mode::from_raw_mode(0o600);
        rustix::fs::mknodat(rustix::fs::CWD, &path, rustix::fs::FileType::Fifo, mode, 0)
            .expect("mkfifo");
        let got = newest_assistant_directive(&path, DEFAULT_BUDGET);
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
        let (scan, _) = scan_bytes(&bytes, DEFAULT_BUDGET);
        assert_eq!(
            scan,
            TranscriptScan::NotFound {
                budget_exhausted: false
            }
        );
    }

    #[test]
    fn long_lines_and_budget_edges() {
        let long = assistant_string(&format!("{} {DIRECTIVE}", "x".repeat(3 * CHUNK)));
        let text = format!("{}\n{long}\n{}\n", user("u"), user("v"));
        let len = text.len() as u64;
        assert_eq!(scan_bytes(text.as_bytes(), len).0, chose());
        // Not enough budget for the whole long line: it is skipped.
        let short = len - user("u").len() as u64 - 2;
        assert_eq!(
            scan_bytes(text.as_bytes(), short).0,
            TranscriptScan::NotFound {
                budget_exhausted: true
            }
        );
        assert_eq!(
            scan_bytes(text.as_bytes(), 0),
            (
                TranscriptScan::NotFound {
                    budget_exhausted: true
                },
                0
            )
        );
        assert_eq!(
            scan_bytes(b"", 0).0,
            TranscriptScan::NotFound {
                budget_exhausted: false
            }
        );
        // The first line of the file is visited when the budget ends exactly at its start.
        let first = format!("{long}\n{}", user("v"));
        assert_eq!(scan_bytes(first.as_bytes(), first.len() as u64).0, chose());
    }

    #[test]
    fn cost_does_not_grow_with_file_length() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("big.jsonl");
        let filler = format!(
            "{}\n{}\n",
            user(&"lorem ipsum ".repeat(40)),
            assistant_blocks(&[&"dolor sit amet ".repeat(60), "ok"])
        );
        {
            let mut out = BufWriter::new(File::create(&path).expect("create"));
            writeln!(out, "{}", assistant_blocks(&[DIRECTIVE])).expect("write");
            let mut written = 0;
            while written < 50 * 1024 * 1024 {
                out.write_all(filler.as_bytes()).expect("write");
                written += filler.len();
            }
            out.flush().expect("flush");
        }
        let (scan, read) = scan_file(&path, DEFAULT_BUDGET).expect("scan");
        assert_eq!(
            scan,
            TranscriptScan::NotFound {
                budget_exhausted: true
            }
        );
        assert_eq!(read, DEFAULT_BUDGET);

        let mut out = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("open");
        write!(
            out,
            "{}",
            assistant_string(&format!("Done.\n\n{DIRECTIVE}"))
        )
        .expect("append");
        drop(out);
        let (scan, read) = scan_file(&path, DEFAULT_BUDGET).expect("scan");
        assert_eq!(scan, chose());
        assert!(read < 1024 * 1024, "read {read} bytes");
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
        fn scanning_arbitrary_bytes_never_panics_and_keeps_to_the_budget(
            data in prop::collection::vec(any::<u8>(), 0..4096),
            budget in 0u64..5000,
        ) {
            let (_, read) = scan_bytes(&data, budget);
            prop_assert!(read <= budget);
        }
    }
}
