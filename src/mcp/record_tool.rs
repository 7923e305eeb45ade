//! `librarian-record`, the one tool that writes, served only with `git-rutter mcp
//! --allow-record` (spec/mcp.md, "Recording without a hook"): for MCP clients that have no Stop
//! hook, the same fields as a directive line go through the same capture pipeline (opt-out,
//! sanitising, refs, dedupe, one commit) as a hook's capture.
//!
//! The session is the connection: one id per server process (a stdio server serves one
//! client), so a call repeated in one session records nothing new. The entry's `client` is the
//! MCP client's name when it names a known client.

use crate::capture::{self, directive::Directive, Outcome, Request};
use crate::recall::tools::ArgError;
use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::sync::Arc;

/// The tool's name.
pub(crate) const NAME: &str = "librarian-record";
const TITLE: &str = "Record a decision";
/// The prefix of capture's stderr lines, dropped from the tool's result text.
const CAPTURE_PREFIX: &str = "[librarian-capture] ";

/// The tool as listed: not read-only, additive, and idempotent (a repeated call adds nothing).
pub(crate) fn tool() -> Tool {
    let description = "Record one thing this session decided or produced, as a hook records a directive line: `summary` is one plain-English line (outcome first, about 40 words), `refs` the vault-relative paths of the notes it rests on. Each note's content hash is stored with it. When it changes a decision you recalled, name that entry's id in `supersedes`. A call repeated in this session with the same summary and refs records nothing new.";
    let schema = json!({"type": "object", "additionalProperties": false, "required": ["summary"], "properties": {
        "summary": {"type": "string", "description": "One plain-English line: what was decided or produced, outcome first."},
        "refs": {"type": "array", "items": {"type": "string"}, "description": "Notes the summary rests on, relative to the vault."},
        "supersedes": {"type": "array", "items": {"type": "string", "maxLength": 256}, "maxItems": 16, "description": "Ids (or short ids, as librarian-recent shows them) of earlier entries this decision replaces: recall then marks them superseded and leads with this one."}}});
    let schema = match schema {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    Tool::new(NAME, description, Arc::new(schema))
        .with_title(TITLE)
        .with_annotations(
            ToolAnnotations::with_title(TITLE)
                .read_only(false)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        )
}

/// Validates the arguments by hand (as the read tools do): `summary` a string, `refs` absent or
/// an array of strings, `supersedes` absent or an array of at most 16 entry ids, nothing else.
pub(crate) fn directive(args: &Map<String, Value>) -> Result<Directive, ArgError> {
    if let Some(k) = args
        .keys()
        .find(|k| !["summary", "refs", "supersedes"].contains(&k.as_str()))
    {
        return Err(ArgError(format!("unknown argument `{k}`")));
    }
    let summary = match args.get("summary") {
        Some(Value::String(s)) if s.trim().is_empty() => {
            return Err(ArgError(
                "`summary` is empty; write the one line that says what was decided and why".into(),
            ))
        }
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(ArgError("`summary` must be a string".into())),
        None => return Err(ArgError("missing required argument `summary`".into())),
    };
    let refs = match args.get("refs") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| ArgError("`refs` must be an array of strings".into()))?,
        Some(_) => return Err(ArgError("`refs` must be an array of strings".into())),
    };
    let supersedes = crate::capture::directive::supersedes(args.get("supersedes"))
        .map_err(|e| ArgError(e.to_string()))?;
    Ok(Directive {
        summary,
        refs,
        supersedes,
    })
}

/// Records for one connection.
#[derive(Debug, Clone)]
pub(crate) struct Recorder {
    vault: PathBuf,
    session_id: String,
    cwd: Option<String>,
}

/// What one call did: the text for the client, and whether it is an error result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Recorded {
    pub text: String,
    pub is_error: bool,
}

impl Recorder {
    /// A recorder for the vault at `vault`, with this process's session id; the working
    /// directory (the project the client started the server in) gives the entry's workspace.
    pub(crate) fn new(vault: PathBuf) -> Recorder {
        Recorder {
            vault,
            session_id: session_id(),
            cwd: std::env::current_dir()
                .ok()
                .map(|d| d.display().to_string()),
        }
    }

    /// Captures `directive` as `client` wrote it (blocking: the capture lock, git).
    pub(crate) fn record(&self, directive: Directive, client: Option<&str>) -> Recorded {
        let req = Request {
            vault: Some(self.vault.clone()),
            stdin: Vec::new(),
            client: client.map(str::to_string),
            manual: Some(directive),
            session_id: Some(self.session_id.clone()),
            cwd: self.cwd.clone(),
        };
        match std::panic::catch_unwind(|| capture::run(req)) {
            Ok(report) => {
                crate::sync::auto::after_capture(
                    report.vault.as_ref(),
                    report.store.as_ref(),
                    crate::clock::now(),
                );
                result(&report.lines, &report.outcome)
            }
            Err(_) => Recorded {
                text: "error: internal error; nothing was lost, please report it.".into(),
                is_error: true,
            },
        }
    }
}

/// The tool result from capture's lines (without their prefix and the closing `in vault`
/// line); an error result when the capture failed.
fn result(lines: &[String], outcome: &Outcome) -> Recorded {
    let kept: Vec<&str> = lines
        .iter()
        .map(|l| l.strip_prefix(CAPTURE_PREFIX).unwrap_or(l))
        .filter(|l| !l.starts_with("in vault "))
        .collect();
    Recorded {
        is_error: outcome.kind().failed(),
        text: kept.join("\n"),
    }
}

/// The label of a known client from the MCP client's name (`claude-code`, `codex-mcp-client`,
/// …); `None` for any other client.
pub(crate) fn client_label(name: &str) -> Option<&'static str> {
    let name = name.to_ascii_lowercase();
    let words: Vec<&str> = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |w: &str| words.contains(&w) || name.contains(w);
    if has("claude") {
        Some("claude")
    } else if has("codex") {
        Some("codex")
    } else if has("grok") {
        Some("grok")
    } else if has("copilot") {
        Some("copilot")
    } else if has("antigravity") || words.contains(&"agy") {
        Some("agy")
    } else if words.contains(&"muse") {
        Some("muse")
    } else if has("cursor") {
        Some("cursor")
    } else if has("windsurf") || has("cascade") {
        Some("windsurf")
    } else if has("opencode") {
        Some("opencode")
    } else if has("gemini") {
        Some("gemini")
    } else {
        None
    }
}

/// `mcp-` and 16 hex digits naming the session: the client process that started this server
/// (its pid and start time) in this working directory, so a server the client restarts goes on
/// with the same session and a repeated `librarian-record` is deduplicated as a re-fired hook
/// is. Without a parent to name (orphaned, or neither `/proc` nor `ps` says when it started),
/// this server process alone.
fn session_id() -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    let seed = match parent_process() {
        Some(parent) => format!("client:{parent}:{}", cwd.display()),
        None => {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default();
            format!("server:{}:{nanos}", std::process::id())
        }
    };
    let digest = Sha256::digest(seed);
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("mcp-{hex}")
}

/// `pid:start time` of the process that started this one, so a reused pid is another process;
/// `None` for init or when neither `/proc` nor `ps` can say.
fn parent_process() -> Option<String> {
    let ppid = rustix::process::getppid()?;
    let pid = ppid.as_raw_nonzero().get();
    if pid == 1 {
        return None;
    }
    let start = proc_start_ticks(pid).or_else(|| ps_start_time(pid))?;
    Some(format!("{pid}:{start}"))
}

/// Linux: the start time in clock ticks since boot, field 22 of `/proc/PID/stat`.
fn proc_start_ticks(pid: i32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields follow the last `)`.
    let after = stat.get(stat.rfind(')')? + 1..)?;
    Some(after.split_whitespace().nth(19)?.to_string())
}

/// Where there is no `/proc` (macOS): the start time `ps` prints (`lstart`, to the second), its
/// words joined by `-`; `None` when `ps` knows no such process.
fn ps_start_time(pid: i32) -> Option<String> {
    let out = std::process::Command::new("/bin/ps")
        .args(["-o", "lstart=", "-p", &pid.to_string()])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let words: Vec<&str> = text.split_whitespace().collect();
    (out.status.success() && !words.is_empty()).then(|| words.join("-"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn arguments_are_checked_by_hand() {
        assert_eq!(
            directive(&args(json!({"summary": "S", "refs": ["a.md"]}))).unwrap(),
            Directive {
                summary: "S".into(),
                refs: vec!["a.md".into()],
                supersedes: vec![],
            }
        );
        assert_eq!(
            directive(&args(json!({"summary": "S"}))).unwrap().refs,
            Vec::<String>::new()
        );
        for (bad, why) in [
            (json!({}), "missing required argument `summary`"),
            (json!({"summary": 1}), "`summary` must be a string"),
            (
                json!({"summary": "S", "refs": "a.md"}),
                "`refs` must be an array of strings",
            ),
            (
                json!({"summary": "S", "refs": ["a", 1]}),
                "`refs` must be an array of strings",
            ),
            (
                json!({"summary": "S", "session_id": "x"}),
                "unknown argument `session_id`",
            ),
            (
                json!({"summary": "S", "supersedes": "20261130T100000"}),
                "`supersedes` must be an array of entry ids",
            ),
            (
                json!({"summary": "S", "supersedes": [7]}),
                "`supersedes` must be an array of entry ids (strings)",
            ),
            (
                json!({"summary": "S", "supersedes": vec!["x"; 17]}),
                "`supersedes` names 17 entries, over the 16 one decision may replace",
            ),
        ] {
            assert_eq!(directive(&args(bad)).unwrap_err().0, why);
        }
    }

    #[test]
    fn the_schema_matches_the_validation() {
        let t = tool();
        assert_eq!(t.name, NAME);
        let schema = Value::Object((*t.input_schema).clone());
        assert_eq!(schema["additionalProperties"], json!(false));
        assert_eq!(schema["required"], json!(["summary"]));
        let a = t.annotations.unwrap();
        assert_eq!(
            (a.read_only_hint, a.destructive_hint, a.idempotent_hint),
            (Some(false), Some(false), Some(true))
        );
    }

    #[test]
    fn client_names() {
        for (name, want) in [
            ("claude-code", Some("claude")),
            ("Claude Desktop", Some("claude")),
            ("codex-mcp-client", Some("codex")),
            ("grok-build", Some("grok")),
            ("github-copilot-cli", Some("copilot")),
            ("antigravity", Some("agy")),
            ("agy", Some("agy")),
            ("muse-code", Some("muse")),
            ("cursor-vscode", Some("cursor")),
            ("windsurf-client", Some("windsurf")),
            ("opencode", Some("opencode")),
            ("gemini-cli-mcp-client", Some("gemini")),
            ("museum-tool", None),
            ("legacy", None),
            ("rmcp", None),
            ("", None),
        ] {
            assert_eq!(client_label(name), want, "{name}");
        }
    }

    #[test]
    fn results_from_capture_lines() {
        let p = CAPTURE_PREFIX;
        let captured = Outcome::Captured {
            entries: 1,
            day: "2026-12-01".into(),
            pending: false,
        };
        let r = result(
            &[
                format!("{p}rejected unresolvable refs: x.md"),
                format!("{p}captured 1 entry [proj] into 2026-12-01 session record."),
                format!("{p}in vault /v"),
            ],
            &captured,
        );
        assert_eq!(
            r,
            Recorded {
                text: "rejected unresolvable refs: x.md\ncaptured 1 entry [proj] into 2026-12-01 session record.".into(),
                is_error: false
            }
        );
        let failed = Outcome::Error("error: disk full".into());
        assert!(result(&[format!("{p}error: disk full")], &failed).is_error);
        assert!(!result(&[], &Outcome::Skipped("off".into())).is_error);
    }

    #[test]
    fn a_session_is_the_parent_process_in_its_folder() {
        let a = session_id();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(a.starts_with("mcp-") && a.len() == 20, "{a}");
        assert_eq!(session_id(), a, "one parent, one folder: one session");
        let parent = parent_process().expect("the test runner's parent");
        let (pid, start) = parent.split_once(':').unwrap();
        assert!(pid.parse::<u32>().is_ok() && !start.is_empty(), "{parent}");
        #[cfg(target_os = "linux")]
        assert!(
            start.parse::<u64>().is_ok(),
            "clock ticks from /proc: {parent}"
        );
    }

    #[test]
    fn ps_tells_a_start_time_where_proc_cannot() {
        let me = std::process::id() as i32;
        let start = ps_start_time(me).expect("ps names this process's start");
        assert!(!start.contains(char::is_whitespace), "{start}");
        assert_eq!(
            ps_start_time(me),
            Some(start),
            "the same process, the same start"
        );
        assert_eq!(ps_start_time(i32::MAX), None, "no such process");
    }

    proptest! {
        #[test]
        fn validation_never_panics(v in prop::collection::hash_map("[a-z_]{1,8}", prop_oneof![
            Just(json!(null)), Just(json!(1)), Just(json!("s")), Just(json!(["a"])), Just(json!([1])), Just(json!({}))
        ], 0..4)) {
            let m: Map<String, Value> = v.into_iter().collect();
            let _ = directive(&m);
        }

        #[test]
        fn client_label_never_panics(name in any::<String>()) {
            let _ = client_label(&name);
        }
    }
}
