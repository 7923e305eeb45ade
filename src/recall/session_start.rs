//! The session-start hook (`git-rutter context --hook CLIENT`, spec/context.md): reads the
//! client's SessionStart payload, names the project from its `cwd` (Cursor's: its first
//! workspace root) as capture names it, and prints the brief in the output shape that client
//! reads ([`output`]). Like the Stop hook it never breaks a session: whatever happens it prints
//! that shape (with an empty context when there is nothing to say) and exits 0, within
//! [`TIME_BOUND`]. It never builds the index and never
//! waits on the network: when `rutter.autoSync` says a sync is due it starts one in the
//! background, as a capture does. Each run is logged in `<state>/context-runs.jsonl`, apart
//! from the use log, so the gate still counts only what a client reached for.

use super::context;
use crate::capture::runlog;
use crate::clock::{self, Instant};
use crate::vault::{self, Vault};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The clients whose session-start hook git-rutter registers: Claude Code, Codex and Gemini CLI
/// read `hookSpecificOutput.additionalContext`, Cursor `additional_context`.
pub(crate) use crate::clients::hooks::START_CLIENTS as CLIENTS;
/// The longest a hook run takes: past it the hook prints the empty shape and exits.
pub(crate) const TIME_BOUND: Duration = Duration::from_secs(2);
/// The most of the payload read (a SessionStart payload is a few hundred bytes).
const MAX_PAYLOAD: u64 = 1 << 20;
/// The log of session-start runs, and its one older file, in the state folder.
pub(crate) const LOG: &str = "context-runs.jsonl";
const OLDER_LOG: &str = "context-runs.1.jsonl";

/// What one hook run came to, as logged.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Injection {
    pub time: String,
    pub client: String,
    /// The payload's `source` (`startup`, `resume`, `clear`, `compact`), when it names one.
    pub source: Option<String>,
    /// `injected`, `off`, `no-vault`, `no-index`, `timeout` or `error`.
    pub outcome: String,
    /// Bytes of context handed to the client.
    pub bytes: usize,
    /// Decisions the context shows.
    pub decisions: usize,
    pub reason: String,
}

/// The fields of a SessionStart payload the hook reads; everything else is ignored.
#[derive(Debug, Default, Deserialize)]
struct Payload {
    cwd: Option<String>,
    /// Cursor's, which has no `cwd`.
    workspace_roots: Option<Vec<String>>,
    source: Option<String>,
}

/// The hook's whole stdout for `client`, handing it `brief` (empty: nothing to add). Cursor
/// reads no rule file outside a project, so its output carries the capture instructions first
/// (`clients::cursor::session_instructions`), whatever the brief.
pub(crate) fn output(client: &str, brief: &str) -> String {
    if client == "cursor" {
        let label = crate::contract::user_label();
        let mut text = crate::clients::cursor::session_instructions(&label);
        if !brief.is_empty() {
            text = format!("{text}\n\n{brief}");
        }
        return serde_json::json!({ "additional_context": text }).to_string();
    }
    serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": brief,
        }
    })
    .to_string()
}

/// Runs the hook for `client` on the payload `stdin` will give, and returns its stdout. The
/// work runs on a thread the caller stops waiting for after [`TIME_BOUND`].
pub(crate) fn run(
    client: &str,
    flag: Option<PathBuf>,
    stdin: impl Read + Send + 'static,
) -> String {
    let now = clock::now();
    let mut log = Injection {
        time: now.iso(),
        client: client.to_string(),
        ..Injection::default()
    };
    let vault = match vault::resolve(flag.as_deref(), false) {
        Ok(v) => v,
        Err(e) => {
            log.outcome = "no-vault".into();
            log.reason = e.to_string();
            record(runlog::no_vault_dir().as_deref(), &log);
            return output(client, "");
        }
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = vault.clone();
    let spawned = std::thread::Builder::new()
        .name("rutter-context".into())
        .spawn(move || {
            let _ = tx.send(brief(&worker, stdin, now));
        });
    let answer = match spawned {
        Ok(_) => rx.recv_timeout(TIME_BOUND).unwrap_or_else(|_| Answer {
            outcome: "timeout",
            reason: format!("no brief within {} s", TIME_BOUND.as_secs()),
            ..Answer::default()
        }),
        Err(e) => Answer {
            outcome: "error",
            reason: e.to_string(),
            ..Answer::default()
        },
    };
    log.source = answer.source;
    log.outcome = answer.outcome.into();
    log.bytes = answer.text.len();
    log.decisions = answer.decisions;
    log.reason = crate::records::text::one_line_safe(&answer.reason);
    record(Some(&vault.state_dir()), &log);
    output(client, &answer.text)
}

/// What the worker thread found.
#[derive(Debug, Default)]
struct Answer {
    text: String,
    source: Option<String>,
    outcome: &'static str,
    decisions: usize,
    reason: String,
}

/// Reads the payload and the brief for its project.
fn brief(vault: &Vault, stdin: impl Read, now: Instant) -> Answer {
    let mut bytes = Vec::new();
    let _ = stdin.take(MAX_PAYLOAD).read_to_end(&mut bytes);
    let payload: Payload = serde_json::from_slice(&bytes).unwrap_or_default();
    let source = payload
        .source
        .as_deref()
        .map(|s| crate::records::text::one_line_safe(&s.chars().take(32).collect::<String>()));
    let mut answer = Answer {
        source,
        ..Answer::default()
    };
    if crate::failpoint::active("context-slow") {
        std::thread::sleep(TIME_BOUND * 2);
    }
    // One open of the repository for every setting the brief reads.
    let store = crate::store::Store::open(vault).ok();
    if !context::enabled(store.as_ref()) {
        answer.outcome = "off";
        answer.reason = format!("{} is false", context::ENABLED_KEY);
        return answer;
    }
    crate::sync::auto::after_capture(Some(vault), store.as_ref(), now);
    if !crate::index::locate(vault).0.exists() {
        answer.outcome = "no-index";
        answer.reason = "no index yet: the first `git rutter recent` or MCP call builds it".into();
        return answer;
    }
    let cwd = payload
        .cwd
        .or_else(|| payload.workspace_roots.and_then(|r| r.into_iter().next()));
    let project =
        crate::capture::workspace::derive_workspace(cwd.as_deref()).map(|w| w.project.clone());
    match context::for_session(vault, store.as_ref(), project.as_deref(), now) {
        Ok(b) => {
            answer.outcome = "injected";
            answer.decisions = b.decisions.len();
            answer.text = b.text;
        }
        Err(e) => {
            answer.outcome = "error";
            answer.reason = e.to_string();
        }
    }
    answer
}

/// Logs `run` in `dir` (best effort, as the hook-run log).
fn record(dir: Option<&Path>, run: &Injection) {
    let (Some(dir), Ok(mut line)) = (dir, serde_json::to_vec(run)) else {
        return;
    };
    line.push(b'\n');
    let _ = runlog::append_line(dir, (LOG, OLDER_LOG), line);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_is_the_shape_each_client_reads() {
        for client in ["claude", "codex", "gemini"] {
            let v: serde_json::Value = serde_json::from_str(&output(client, "a \"b\"\nc")).unwrap();
            assert_eq!(
                v,
                serde_json::json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "a \"b\"\nc"}})
            );
        }
        let v: serde_json::Value = serde_json::from_str(&output("cursor", "BRIEF")).unwrap();
        let text = v["additional_context"].as_str().unwrap();
        assert!(text.starts_with("These instructions apply to every Cursor conversation"));
        assert!(text.contains("librarian-session") && text.ends_with("\n\nBRIEF"));
        assert_eq!(v.as_object().unwrap().len(), 1);
        let empty: serde_json::Value = serde_json::from_str(&output("cursor", "")).unwrap();
        assert!(!empty["additional_context"]
            .as_str()
            .unwrap()
            .ends_with('\n'));
    }

    #[test]
    fn a_payload_that_is_not_json_reads_as_no_project() {
        let p: Payload = serde_json::from_slice(b"\x00not json").unwrap_or_default();
        assert!(p.cwd.is_none() && p.source.is_none());
        let p: Payload =
            serde_json::from_slice(br#"{"cwd": 7, "source": "startup"}"#).unwrap_or_default();
        assert!(
            p.cwd.is_none(),
            "a payload of the wrong types is refused whole"
        );
    }
}
